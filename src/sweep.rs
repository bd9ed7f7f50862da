//! `why-stuck --all` (contract §4.3.2): every object being deleted in a namespace or the
//! cluster, each answered by [`diagnose::why_stuck`] exactly as `why-stuck <obj>` answers it,
//! then grouped by root cause.
//!
//! # Expected flow
//! The objects with a deletionTimestamp in scope are answered one by one (the [`Liveness`]
//! memo makes a finalizer shared by many objects cost one search). Each answer names one
//! *cause*: the finding that makes its object stuck (for a stuck answer: on an object stuck on
//! its own account, the most severe, nearest first), else the finding that says what the
//! deletion waits on. The cause's *culprit* is what has to act: the controller that removes the
//! finalizer, the garbage collector, or the objects the finding names (a webhook
//! configuration, a CRD, APIServices). Objects with the same verdict, code and culprit form one
//! group, so 37 custom resources in five namespaces that wait on one uninstalled operator are
//! one group, and a terminating namespace whose content waits on it joins the same group.
//!
//! # Guarantees
//! Pure and deterministic: groups come stuck first, then unknown, then in progress; within
//! each, oldest first (ties by the objects' canonical order); objects in a group oldest first.
//! Every object answered is in exactly one group.
//!
//! # Caveats
//! The culprit is read from the finding's [`Subject`], set where the finding is made, never from
//! its code's name or its message: a code added later falls in the right place without an edit
//! here. A finding about what it relates has those objects as its culprit, else its object.

use std::collections::{HashMap, HashSet};

use crate::controllers::Liveness;
use crate::diagnose::{self, Command, Diagnosis, Finding, FindingCode, Related, Step, Subject, step};
use crate::graph::{Graph, NodeId};
use crate::snapshot::{Gap, Missing, Resource};

mod pointer;
pub use pointer::{Tally, point_to_sweep, tally};

/// Which objects are swept.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Scope {
    /// Every object (`-A`).
    Cluster,
    /// The objects of one namespace, and the Namespace itself (`-n NS`).
    Namespace(String),
}

/// What `why-stuck --all` sweeps, and what it leaves out.
#[derive(Clone, Debug)]
pub struct Options {
    /// Which objects.
    pub scope: Scope,
    /// Leave out the objects whose deletion is merely in progress (`--stuck-only`).
    pub stuck_only: bool,
    /// How each object is answered (`--stuck-after`), as for one object.
    pub answer: diagnose::Options,
}

/// A group's verdict: its objects' answers' ([`Diagnosis::verdict`]), in the order groups are
/// listed (stuck, unknown, in progress).
pub use crate::diagnose::Verdict;

/// What has to act for a cause to go away: one group per culprit and code.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Culprit {
    /// The controller that removes a finalizer (`FinalizerOwner::removed_by`, else "the
    /// controller of <finalizer>").
    Controller(String),
    /// kube-controller-manager's garbage collector.
    GarbageCollector,
    /// The objects the finding names: a webhook configuration, a CRD, APIServices, a node.
    Objects(Vec<NodeId>),
    /// A finding that names nothing else: its own object.
    Object(NodeId),
    /// No finding at all: nothing holds the object (no finalizer left; a pod in its grace
    /// period on a ready node), the API server or the kubelet finishes it.
    Nothing,
}

/// The root cause of a group.
#[derive(Clone, Debug)]
pub struct Cause {
    /// The finding code of the cause; `None` when the answers have no finding ([`Culprit::Nothing`]).
    pub code: Option<FindingCode>,
    /// What has to act.
    pub culprit: Culprit,
    /// What the cause names, for the contract's `cause.related`.
    pub related: Vec<Related>,
    /// The oldest object's cause, and how many more share it.
    pub message: String,
}

/// A group's next steps: steps with the same text and reach merged, with every distinct
/// command (a finalizer patch per object under one heading).
#[derive(Clone, Debug)]
pub struct GroupStep {
    /// The first of the merged steps.
    pub step: Step,
    /// Every command of the merged steps, in first-seen order (`step.command` is the first).
    pub commands: Vec<Command>,
}

/// The objects of one root cause.
#[derive(Clone, Debug)]
pub struct Group {
    /// Whether they are stuck, unknown or in progress.
    pub verdict: Verdict,
    /// What holds them.
    pub cause: Cause,
    /// Oldest deletion first.
    pub objects: Vec<NodeId>,
    /// How long the oldest has been deleting.
    pub oldest_deleting_for_seconds: i64,
    /// The group's next steps, once for all its objects, safest first.
    pub remedy: Vec<GroupStep>,
    /// Indexes into [`Sweep::answers`], in the order of `objects`.
    pub answers: Vec<usize>,
}

/// The answer of `why-stuck --all`.
#[derive(Clone, Debug)]
pub struct Sweep {
    /// Stuck first, then unknown, then in progress; oldest first within each.
    pub groups: Vec<Group>,
    /// One per object, in group order.
    pub answers: Vec<Diagnosis>,
    /// How many objects were answered but left out (`--stuck-only`).
    pub left_out: usize,
    /// What could not be read.
    pub incomplete: Vec<String>,
    /// How many of the failed reads may hide an object being deleted in scope: the sweep
    /// cannot say that nothing (else) is stuck.
    pub unseen: usize,
    /// `-n NS` where NS is not among the namespaces read (without a gap): live, a typo most
    /// likely, which "nothing is being deleted" alone would not reveal.
    pub absent_namespace: Option<String>,
    /// `-A` where the namespaces could not be listed (a namespace's user, most likely): what
    /// would settle the Unknown is an answer for one namespace, which `-n` reads by name.
    pub namespaces_unlisted: bool,
}

impl Sweep {
    /// Whether any object is stuck.
    pub fn stuck(&self) -> bool {
        self.answers.iter().any(|d| d.stuck)
    }

    /// The worst verdict of the answers (stuck, then unknown, then in progress), which the exit
    /// code follows; Unknown rather than in progress or nothing when deletions may be unseen;
    /// `None` when nothing was answered and nothing is unseen.
    pub fn verdict(&self) -> Option<Verdict> {
        let unseen = (self.unseen > 0).then_some(Verdict::Unknown);
        Verdict::worst(self.answers.iter().map(Diagnosis::verdict).chain(unseen))
    }
}

/// Every object in scope with a deletionTimestamp, in the graph's canonical order.
pub fn terminating(g: &Graph, scope: &Scope) -> Vec<NodeId> {
    let deleting = |(id, o): (NodeId, &crate::snapshot::Object)| o.is_deleting().then_some(id);
    match scope {
        Scope::Cluster => g.observed().filter_map(deleting).collect(),
        Scope::Namespace(ns) => {
            let mut out: Vec<NodeId> = g
                .find("", "Namespace", None, ns)
                .filter(|&n| g.object(n).is_some_and(|o| o.is_deleting()))
                .into_iter()
                .collect();
            out.extend(g.in_namespace(Some(ns)).filter_map(deleting));
            out
        }
    }
}

/// Objects per worker below which answering in parallel is not worth a thread.
const PER_WORKER: usize = 512;

/// Answers every terminating object in scope with [`diagnose::why_stuck`] and groups the
/// answers by root cause.
pub fn sweep(g: &Graph, live: &Liveness, opts: &Options) -> Sweep {
    let ids = terminating(g, &opts.scope);
    // each answer stops where another answer of the sweep begins (a chain costs its length)
    let shared = diagnose::Shared::answering(g, ids.iter().copied());
    let answer = |part: &[NodeId]| -> Vec<Diagnosis> {
        part.iter().map(|&x| diagnose::why_stuck_sharing(g, live, &shared, x, &opts.answer)).collect()
    };
    // the answers are independent (the liveness memo and the shared indexes are behind
    // locks): contiguous parts on every core, put back in order
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get()).min(ids.len() / PER_WORKER).max(1);
    let answers: Vec<Diagnosis> = if workers == 1 {
        answer(&ids)
    } else {
        let part = ids.len().div_ceil(workers);
        std::thread::scope(|s| {
            let handles: Vec<_> = ids.chunks(part).map(|c| s.spawn(move || answer(c))).collect();
            handles.into_iter().flat_map(|h| h.join().expect("an answer panicked")).collect()
        })
    };
    let mut answers = answers;
    settle_stuck(&mut answers);
    let mut s = group(g, answers, opts.stuck_only);
    s.unseen = g.gaps().iter().filter(|gap| may_hide_deletions(g, gap, &opts.scope)).count();
    s.absent_namespace = absent_namespace(g, &opts.scope);
    s.namespaces_unlisted = opts.scope == Scope::Cluster && g.gaps().iter().any(|gap| gap.is_list_of("namespaces"));
    s
}

/// `-n NS` where namespaces were read (a file of pods holds none), none is unread, and NS is
/// not among them.
fn absent_namespace(g: &Graph, scope: &Scope) -> Option<String> {
    let Scope::Namespace(ns) = scope else { return None };
    let read = g.observed().any(|(_, o)| o.kind == "Namespace" && o.group().is_empty());
    let unread = g.gaps().iter().any(|gap| gap.may_hide("", Some("namespaces"), None));
    (read && !unread && g.find("", "Namespace", None, ns).is_none()).then(|| ns.clone())
}

/// Whether a failed read may hide an object being deleted in scope. In a namespace, the
/// lists of cluster-scoped types cannot (a namespace's user is seldom allowed them: their
/// refusal says nothing about the namespace), but that of namespaces can while the namespace
/// itself was not read (by name, when the list was refused).
fn may_hide_deletions(g: &Graph, gap: &Gap, scope: &Scope) -> bool {
    match scope {
        Scope::Cluster => gap.may_hide_deletions(None),
        Scope::Namespace(ns) => {
            let outside = |r: &Resource| {
                if r.group.is_empty() && r.resource == "namespaces" {
                    return g.find("", "Namespace", None, ns).is_some();
                }
                let t = g.mapper().types().iter().find(|t| t.group == r.group && t.plural == r.resource);
                t.is_some_and(|t| !t.namespaced)
            };
            let outside = matches!(&gap.what, Missing::List { resource, .. } if outside(resource));
            !outside && gap.may_hide_deletions(Some(ns))
        }
    }
}

/// Each answer's position by its object.
fn positions(answers: &[Diagnosis]) -> HashMap<NodeId, usize> {
    answers.iter().enumerate().map(|(i, d)| (d.object, i)).collect()
}

/// For every answer, the answers that stop at it (their `waits_on_answers` name its object).
fn waited_by(answers: &[Diagnosis]) -> Vec<Vec<usize>> {
    let at = positions(answers);
    let mut by = vec![Vec::new(); answers.len()];
    for (i, d) in answers.iter().enumerate() {
        for o in &d.waits_on_answers {
            if let Some(&j) = at.get(o) {
                by[j].push(i);
            }
        }
    }
    by
}

/// An answer that stops at another's object is stuck when that one is: one pass backwards
/// from the stuck answers over who waits on whom (every object an answer walked waits, through
/// the walk, for what it stopped at, so its object does too).
fn settle_stuck(answers: &mut [Diagnosis]) {
    if answers.iter().all(|d| d.waits_on_answers.is_empty()) {
        return;
    }
    let by = waited_by(answers);
    let mut queue: std::collections::VecDeque<usize> = (0..answers.len()).filter(|&i| answers[i].stuck).collect();
    while let Some(j) = queue.pop_front() {
        for &i in &by[j] {
            if !answers[i].stuck {
                answers[i].stuck = true;
                queue.push_back(i);
            }
        }
    }
}

/// Each answer's cause finding: its own (see [`own_cause`]), else, for an answer that stopped
/// at others' objects, the nearest cause among those answers with the same standing (stuck
/// from a stuck one, else from one in progress), found in one pass backwards from the answers
/// that have one; else what its own findings offer.
fn causes(answers: &[Diagnosis]) -> Vec<Option<&Finding>> {
    let mut out: Vec<Option<&Finding>> = answers.iter().map(own_cause).collect();
    let open = |i: usize, out: &[Option<&Finding>]| out[i].is_none() && !answers[i].waits_on_answers.is_empty();
    if (0..answers.len()).any(|i| open(i, &out)) {
        let by = waited_by(answers);
        let mut queue: std::collections::VecDeque<usize> = (0..answers.len()).filter(|&i| out[i].is_some()).collect();
        while let Some(j) = queue.pop_front() {
            for &i in &by[j] {
                if open(i, &out) && answers[i].verdict() == answers[j].verdict() {
                    out[i] = out[j];
                    queue.push_back(i);
                }
            }
        }
    }
    for (i, d) in answers.iter().enumerate() {
        if out[i].is_none() {
            out[i] = fallback_cause(d);
        }
    }
    out
}

/// Groups answers by cause (see the module docs).
pub fn group(g: &Graph, answers: Vec<Diagnosis>, stuck_only: bool) -> Sweep {
    let mut index: HashMap<(Verdict, Option<FindingCode>, Culprit), usize> = HashMap::new();
    let mut groups: Vec<(Group, Vec<Option<&Finding>>)> = Vec::new();
    // what each group's cause.related already holds (a group of thousands of claims names as
    // many pods: no quadratic search)
    let mut related_seen: Vec<HashSet<RelatedKey>> = Vec::new();
    let mut left_out = 0;
    let found = causes(&answers);
    for (i, d) in answers.iter().enumerate() {
        let (verdict, cause) = cause_of(g, d, found[i]);
        if stuck_only && verdict == Verdict::InProgress {
            left_out += 1;
            continue;
        }
        let key = (verdict, cause.code, cause.culprit.clone());
        let at = *index.entry(key).or_insert_with(|| {
            let c = Cause {
                code: cause.code,
                culprit: cause.culprit.clone(),
                related: cause.related.clone(),
                message: String::new(),
            };
            let grp = Group {
                verdict,
                cause: c,
                objects: Vec::new(),
                oldest_deleting_for_seconds: 0,
                remedy: Vec::new(),
                answers: Vec::new(),
            };
            groups.push((grp, Vec::new()));
            related_seen.push(cause.related.iter().map(RelatedKey::of).collect());
            groups.len() - 1
        });
        let grp = &mut groups[at].0;
        grp.answers.push(i);
        for r in cause.related {
            if related_seen[at].insert(RelatedKey::of(&r)) {
                grp.cause.related.push(r);
            }
        }
        groups[at].1.push(cause.finding);
    }
    let age = |i: usize| answers[i].deleting_for_seconds.unwrap_or(0);
    let mut out: Vec<Group> = Vec::with_capacity(groups.len());
    for (mut grp, findings) in groups {
        // oldest first; the graph's canonical order breaks ties
        let mut order: Vec<usize> = (0..grp.answers.len()).collect();
        order.sort_by_key(|&k| (std::cmp::Reverse(age(grp.answers[k])), answers[grp.answers[k]].object));
        grp.answers = order.iter().map(|&k| grp.answers[k]).collect();
        let findings: Vec<Option<&Finding>> = order.iter().map(|&k| findings[k]).collect();
        grp.objects = grp.answers.iter().map(|&i| answers[i].object).collect();
        grp.oldest_deleting_for_seconds = grp.answers.first().map(|&i| age(i)).unwrap_or(0);
        grp.remedy = merge_steps(&findings);
        grp.cause.message = group_message(g, &grp, findings[0]);
        out.push(grp);
    }
    out.sort_by_key(|grp| (grp.verdict, std::cmp::Reverse(grp.oldest_deleting_for_seconds), grp.objects[0]));
    // answers in group order, so that a reader of the JSON meets them as the groups list them
    let mut slots: Vec<Option<Diagnosis>> = answers.into_iter().map(Some).collect();
    let mut ordered = Vec::with_capacity(slots.len());
    for grp in &mut out {
        for i in &mut grp.answers {
            ordered.push(slots[*i].take().expect("each answer is in one group"));
            *i = ordered.len() - 1;
        }
    }
    // what the read could not see, then what any answer adds, each once, in order
    let mut seen = std::collections::HashSet::new();
    let incomplete = g
        .gaps()
        .iter()
        .map(|gap| gap.to_string())
        .chain(ordered.iter().flat_map(|d| d.incomplete.iter().cloned()))
        .filter(|i| seen.insert(i.clone()))
        .collect();
    Sweep {
        groups: out,
        answers: ordered,
        left_out,
        incomplete,
        unseen: 0,
        absent_namespace: None,
        namespaces_unlisted: false,
    }
}

/// A [`Related`] as a set key.
#[derive(PartialEq, Eq, Hash)]
enum RelatedKey {
    Node(NodeId),
    Absent(String),
}

impl RelatedKey {
    fn of(r: &Related) -> RelatedKey {
        match r {
            Related::Node(n) => RelatedKey::Node(*n),
            Related::Absent { api_version, kind, namespace, name } => {
                RelatedKey::Absent(format!("{api_version}\0{kind}\0{}\0{name}", namespace.as_deref().unwrap_or("")))
            }
        }
    }
}

/// One answer's cause, with the finding it comes from (none only for an answer without
/// findings).
struct ObjectCause<'d> {
    code: Option<FindingCode>,
    culprit: Culprit,
    related: Vec<Related>,
    finding: Option<&'d Finding>,
}

/// The finding that makes an answer's object stuck (on an object stuck on its own account,
/// the most severe, nearest first), else the one that says what the deletion waits on (for an
/// unknown one, what could not be told); `None` when its findings hold neither.
fn own_cause(d: &Diagnosis) -> Option<&Finding> {
    // a stuck answer's cause is on an object stuck on its own account; an unknown one's is
    // what could not be told
    let candidates = |root_only: bool, undecided_only: bool| {
        d.findings
            .iter()
            .enumerate()
            // (root_causes is sorted)
            .filter(move |(_, f)| !root_only || d.root_causes.binary_search(&f.object).is_ok())
            .filter(move |(_, f)| !undecided_only || f.cannot_tell)
            // where the object is, not why: never a cause while another finding is there
            .filter(|(_, f)| f.subject != Subject::Context)
            // most severe first; a blocking dependent's own problem before the wait on it;
            // then nearest first (findings come breadth first from the object)
            .min_by_key(|(i, f)| (f.severity, f.code == FindingCode::BlockingDependent, *i))
            .map(|(_, f)| f)
    };
    match (d.verdict(), d.waits_on_answers.is_empty()) {
        (Verdict::Stuck, true) => candidates(true, false).or_else(|| candidates(false, false)),
        // stuck through another answer: its root is there, unless one is here
        (Verdict::Stuck, false) => candidates(true, false),
        (Verdict::Unknown, _) => candidates(false, true),
        // in progress: what it waits on (a namespace's content only as context: then the
        // cause of that content's answers)
        _ => candidates(false, false),
    }
}

/// What an answer's own findings offer when nothing else said its cause.
fn fallback_cause(d: &Diagnosis) -> Option<&Finding> {
    let any = d.findings.iter().enumerate().filter(|(_, f)| f.subject != Subject::Context);
    any.min_by_key(|(i, f)| (f.severity, f.code == FindingCode::BlockingDependent, *i))
        .map(|(_, f)| f)
        .or_else(|| d.findings.iter().find(|f| f.code != FindingCode::NotBeingDeleted))
}

fn cause_of<'d>(g: &Graph, d: &Diagnosis, f: Option<&'d Finding>) -> (Verdict, ObjectCause<'d>) {
    let verdict = d.verdict();
    let cause = match f {
        Some(f) => ObjectCause { code: Some(f.code), culprit: culprit(f), related: related_of(g, f), finding: Some(f) },
        None => ObjectCause { code: None, culprit: Culprit::Nothing, related: Vec::new(), finding: None },
    };
    (verdict, cause)
}

/// What has to act, from the finding's subject.
fn culprit(f: &Finding) -> Culprit {
    match &f.subject {
        Subject::Finalizer { name, owner } => {
            Culprit::Controller(owner.removed_by.clone().unwrap_or_else(|| format!("the controller of {name}")))
        }
        Subject::GarbageCollector => Culprit::GarbageCollector,
        Subject::Related | Subject::Context => {
            let mut nodes: Vec<NodeId> =
                f.related.iter().filter_map(|r| if let Related::Node(n) = r { Some(*n) } else { None }).collect();
            nodes.sort_unstable();
            nodes.dedup();
            if nodes.is_empty() { Culprit::Object(f.object) } else { Culprit::Objects(nodes) }
        }
    }
}

/// The contract's `cause.related` (a group's is the union of its objects'): for a
/// controller, its workload where one was found, then what the finding says it waits for (the
/// pod that still mounts a claim); for the garbage collector nothing; otherwise what the
/// finding names (the webhook configuration, the CRD, the APIServices).
fn related_of(g: &Graph, f: &Finding) -> Vec<Related> {
    match &f.subject {
        Subject::Finalizer { owner, .. } => {
            let workload = owner.workload.as_ref().and_then(|w| {
                ["apps", ""].iter().find_map(|group| g.find(group, &w.kind, w.namespace.as_deref(), &w.name))
            });
            let mut out: Vec<Related> = workload.map(Related::Node).into_iter().collect();
            out.extend(f.related.iter().cloned());
            out
        }
        Subject::GarbageCollector => Vec::new(),
        Subject::Related | Subject::Context => f.related.clone(),
    }
}

/// The group's message: its oldest object's, and how many more share it.
fn group_message(g: &Graph, grp: &Group, first: Option<&Finding>) -> String {
    let Some(first) = first else {
        return format!(
            "nothing holds {} object(s) (no finalizer left): the API server removes them, a pod once its kubelet confirms its termination",
            grp.objects.len()
        );
    };
    let mut m = first.message.clone();
    if first.object != grp.objects[0] {
        m = format!("{} waits on {}: {m}", diagnose::describe(g, grp.objects[0]), diagnose::describe(g, first.object));
    }
    match grp.objects.len() {
        1 => m,
        n => format!("{m} (and {} more object(s) for the same cause)", n - 1),
    }
}

/// The steps of the groups' cause findings, once: the same text and reach become one step
/// holding every distinct command; ranked safest first, first seen first among equals.
fn merge_steps(findings: &[Option<&Finding>]) -> Vec<GroupStep> {
    step::group(findings.iter().flatten().flat_map(|f| &f.remedy))
        .into_iter()
        .map(|g| GroupStep { step: g.step.clone(), commands: g.commands.into_iter().cloned().collect() })
        .collect()
}

#[cfg(test)]
mod tests;

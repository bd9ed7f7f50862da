//! The evidence stage of `why-stuck`: the walk from the target through what it waits on
//! (blocking dependents, a namespace's content, a CRD's instances, the pods that use a claim),
//! each object explained once: its finalizers and who removes them, its owner references,
//! admission in front of the requests it needs, built-in conditions. Which of those findings
//! are causes, and which stall a refusal explains, is `causes`'s; the whole answer is shaped by
//! `answer` (`mod.rs` runs the stages in order).

use std::collections::{HashMap, HashSet, VecDeque};

use super::*;
use crate::names::{API_SERVICE, FOREGROUND_DELETION, ORPHAN};

/// A GC finalizer older than this with nothing left to wait for means the GC missed it.
const GC_GRACE_SECONDS: i64 = 60;

/// A deletion younger than this whose controller was not found is looked at again before
/// anything is changed: the controller may be mid-cleanup, or mid-reinstall.
const JUST_DELETED_SECONDS: i64 = 10 * 60;

/// One answer's walk: what the target waits on, breadth first, and the evidence about each.
pub(super) struct Explainer<'a, 'g> {
    pub(super) g: &'a Graph,
    pub(super) live: &'a Liveness<'g>,
    pub(super) shared: &'a Shared,
    pub(super) now: Timestamp,
    pub(super) target: NodeId,
    pub(super) opts: Options,
    /// What this answer could not see, beyond the snapshot's own `incomplete`.
    pub(super) incomplete: Vec<String>,
    pub(super) findings: Vec<Finding>,
    pub(super) finalizers: Vec<FinalizerReport>,
    /// x → what x waits for before it can go.
    pub(super) waits_on: HashMap<NodeId, Vec<NodeId>>,
    /// The reverse: on → who waits for it (a namespace waits on all its content: a scan of
    /// `waits_on` per content object would be quadratic).
    pub(super) waited_by: HashMap<NodeId, Vec<NodeId>>,
    pub(super) local_stuck: Vec<NodeId>,
    pub(super) seen: HashSet<NodeId>,
    pub(super) queue: VecDeque<NodeId>,
    /// What x waits on that a sweep answers on its own: not explained here.
    pub(super) frontier: Vec<NodeId>,
    /// The requests found refused, asked before any stall is said ([`causes`]).
    pub(super) refusals: causes::Refusals,
}

impl<'a, 'g> Explainer<'a, 'g> {
    /// A walk from `target`, nothing explained yet.
    pub(super) fn new(
        g: &'a Graph,
        live: &'a Liveness<'g>,
        shared: &'a Shared,
        target: NodeId,
        opts: &Options,
    ) -> Explainer<'a, 'g> {
        Explainer {
            g,
            live,
            shared,
            now: live.now(),
            target,
            opts: *opts,
            incomplete: Vec::new(),
            findings: Vec::new(),
            finalizers: Vec::new(),
            waits_on: HashMap::new(),
            waited_by: HashMap::new(),
            local_stuck: Vec::new(),
            seen: HashSet::from([target]),
            queue: VecDeque::from([target]),
            frontier: Vec::new(),
            refusals: causes::Refusals::default(),
        }
    }

    /// Explains everything the target waits on, breadth first (no recursion).
    pub(super) fn walk(&mut self) {
        while let Some(x) = self.queue.pop_front() {
            self.explain(x);
        }
    }
}

impl Explainer<'_, '_> {
    /// Whether `op` on `x` is refused every time ([`causes::refusal`]): asked by every stall
    /// before it is said.
    pub(super) fn refused(&mut self, x: NodeId, op: Operation) -> Option<causes::Refusal> {
        self.refusals.of(self.g, &self.shared.admission, x, op).cloned()
    }

    /// Whether the GC's request to remove a blocking dependent of `x` is refused (a DELETE, or
    /// the UPDATE of its references when another owner holds it).
    pub(super) fn dependents_refused(&mut self, x: NodeId) -> bool {
        let blocking: Vec<NodeId> = self.g.blocking_dependents(x).collect();
        blocking
            .into_iter()
            .any(|d| self.refused(d, Operation::Delete).is_some() || self.refused(d, Operation::Update).is_some())
    }

    /// A finalizer `f` of `x` whose removal `r` refuses: said in the target's finalizer
    /// evidence, never as a wait or a stall.
    pub(super) fn say_refused(&mut self, x: NodeId, f: &str, r: &causes::Refusal) {
        if x == self.target
            && let Some(report) = self.finalizers.iter_mut().rev().find(|rep| rep.name == f)
        {
            report.owner.evidence.push(causes::refused_evidence(self.g, r));
        }
    }

    pub(super) fn wait_for(&mut self, x: NodeId, on: NodeId) {
        self.waits_on.entry(x).or_default().push(on);
        self.waited_by.entry(on).or_default().push(x);
        if self.seen.insert(on) {
            if self.shared.is_answered(on) {
                // its own answer in the sweep says why it stays
                self.frontier.push(on);
            } else {
                self.queue.push_back(on);
            }
        }
    }

    /// Adds a finding about what `related` names ([`Subject::Related`]); the caller sets
    /// another subject, or `cannot_tell`, on the finding returned.
    pub(super) fn finding(
        &mut self,
        code: FindingCode,
        severity: Severity,
        object: NodeId,
        related: Vec<Related>,
        message: String,
        remedy: Vec<Step>,
    ) -> &mut Finding {
        let subject = Subject::Related;
        self.findings.push(Finding { code, severity, object, related, message, remedy, subject, cannot_tell: false });
        self.findings.last_mut().expect("just pushed")
    }

    pub(super) fn explain(&mut self, x: NodeId) {
        let g = self.g;
        let Some(o) = g.object(x) else { return };
        let (owner_problems, verdict) = owner_findings(g, x);
        self.findings.extend(owner_problems);
        self.incomplete.extend(owners::unread_owners(g, x));
        // what stands in front of the API server: webhooks that reject the request it needs
        self.explain_admission(x);
        self.explain_conversion(x);
        if !o.is_deleting() {
            if x == self.target {
                self.finding(
                    FindingCode::NotBeingDeleted,
                    Severity::Info,
                    x,
                    Vec::new(),
                    format!("{} has no deletionTimestamp: nothing is deleting it", describe(g, x)),
                    Vec::new(),
                )
                .subject = Subject::Context;
            } else if verdict == GcVerdict::NeverActedOn && self.waited_on_by_gc(x) {
                // A blocking dependent the GC can never delete holds its owner forever.
                self.local_stuck.push(x);
            }
            return;
        }
        for (i, f) in o.finalizers.iter().enumerate() {
            self.explain_finalizer(x, Some(i), f);
        }
        if o.kind == "Namespace" && o.group().is_empty() {
            self.explain_namespace(x);
        }
        if o.kind == "Pod" && o.group().is_empty() {
            self.explain_terminating_pod(x);
        }
    }

    /// Whether some foreground owner waits for x through a blocking reference.
    pub(super) fn waited_on_by_gc(&self, x: NodeId) -> bool {
        self.waited_by.get(&x).into_iter().flatten().any(|&owner| self.g.refs_to(x, owner).any(|r| r.blocks()))
    }

    /// `at`: the finalizer's position in metadata.finalizers (`None` for a namespace's spec).
    pub(super) fn explain_finalizer(&mut self, x: NodeId, at: Option<usize>, f: &str) {
        let g = self.g;
        let owner = self.live.finalizer(x, f);
        if x == self.target {
            self.finalizers.push(FinalizerReport { name: f.to_string(), owner: owner.clone() });
        }
        let who = owner.removed_by.clone().unwrap_or_else(|| format!("the controller of {f}"));
        if owner.controller != ControllerState::Alive {
            self.controller_not_alive(x, at, f, &owner);
            if f == FOREGROUND_DELETION {
                // a garbage collector that is down does not hide what it would wait for
                let blocking: Vec<NodeId> = g.blocking_dependents(x).collect();
                self.report_blocking(x, blocking);
            }
            if matches!(f, FOREGROUND_DELETION | ORPHAN) {
                // the GC's missed steps are reported whether or not it is judged alive
                let down = owner.evidence.last().map(String::as_str).unwrap_or("no evidence");
                let age = self.deleting_for(x);
                if f == ORPHAN || g.blocking_dependents(x).next().is_none() {
                    self.gc_finalizer_idle(x, f, age, Some(down));
                } else if !self.dependents_refused(x)
                    && let Some(found) = gc_steps::missed_deletes(g, x, self.now, Some(down))
                {
                    self.findings.push(found);
                }
            }
            return;
        }
        let age = self.deleting_for(x);
        match f {
            FOREGROUND_DELETION => {
                let blocking: Vec<NodeId> = g.blocking_dependents(x).collect();
                if blocking.is_empty() {
                    self.gc_finalizer_idle(x, f, age, None);
                } else if !self.dependents_refused(x)
                    && let Some(found) = gc_steps::missed_deletes(g, x, self.now, None)
                {
                    self.findings.push(found);
                    self.local_stuck.push(x);
                }
                self.report_blocking(x, blocking);
            }
            ORPHAN => self.gc_finalizer_idle(x, f, age, None),
            f if builtin_conditions::judged(g, x, f) => {
                if let Some(j) = builtin_conditions::judge(g, self.shared, x, f) {
                    self.builtin_condition(x, f, &owner, &who, j);
                }
            }
            _ if let Some(r) = self.refused(x, Operation::Update) => self.say_refused(x, f, &r),
            _ => {
                let (found, stuck) =
                    progress::alive_finding(g, &self.shared.events, x, at, f, &owner, self.now, &self.opts);
                self.findings.push(found);
                if stuck {
                    self.local_stuck.push(x);
                }
            }
        }
    }

    /// The blocking dependents a foreground deletion of x waits for, each a finding.
    pub(super) fn report_blocking(&mut self, x: NodeId, blocking: Vec<NodeId>) {
        let g = self.g;
        for d in blocking {
            let gone = g.object(d).map(|o| o.is_deleting()).unwrap_or(false);
            self.finding(
                FindingCode::BlockingDependent,
                Severity::Warning,
                d,
                vec![Related::Node(x)],
                format!(
                    "{} waits (foregroundDeletion) for {}, which has blockOwnerDeletion: true and {}",
                    describe(g, x),
                    describe(g, d),
                    if gone { "is being deleted but still exists" } else { "has not been deleted yet" }
                ),
                vec![
                    Step::run(
                        Reach::Inspect,
                        format!("Find out what holds {}: it must go before {} can.", describe(g, d), describe(g, x)),
                        remedy::inspect(g, d),
                    ),
                    Step::run(
                        Reach::Disrupt,
                        format!(
                            "Or stop waiting for dependents: a Background delete of {} drops foregroundDeletion, and the garbage collector deletes the dependents afterwards.",
                            describe(g, x)
                        ),
                        remedy::redelete_background(g, x),
                    ),
                ],
            )
            .subject = Subject::GarbageCollector;
            self.wait_for(x, d);
        }
    }

    /// A built-in finalizer whose controller is alive, by what its condition says.
    pub(super) fn builtin_condition(
        &mut self,
        x: NodeId,
        f: &str,
        owner: &FinalizerOwner,
        who: &str,
        j: builtin_conditions::Judgement,
    ) {
        use builtin_conditions::Judgement;
        let g = self.g;
        let subject = Subject::Finalizer { name: f.to_string(), owner: owner.clone() };
        match j {
            // the condition holds, but the removal is refused: not a missed event
            Judgement::Holds { .. } if let Some(r) = self.refused(x, Operation::Update) => self.say_refused(x, f, &r),
            Judgement::Holds { what, since } => {
                let (found, stuck) = builtin_conditions::holds_finding(g, x, f, who, &what, since, self.now);
                self.findings.push(Finding { subject, ..found });
                if stuck {
                    self.local_stuck.push(x);
                }
            }
            Judgement::Waits { on, what, stuck, remedy } => {
                let found = builtin_conditions::waits_finding(x, f, who, &what, &on, stuck, remedy);
                self.findings.push(Finding { subject, ..found });
                if stuck {
                    self.local_stuck.push(x);
                }
                for n in on {
                    self.wait_for(x, n);
                }
            }
            Judgement::Blind { what, why, check } => {
                self.incomplete.push(format!("{f} on {}: {what}, but {why}", describe(g, x)));
                let found = builtin_conditions::blind_finding(g, x, f, who, &what, &why, check);
                // an absence the input cannot vouch for: the answer cannot tell
                self.findings.push(Finding { subject, cannot_tell: true, ..found });
            }
            Judgement::Never { what } => {
                let mut remedy = Vec::new();
                if let Some(p) = remedy::remove_finalizer(g, x, f) {
                    remedy.push(Step::run(
                        Reach::Destructive,
                        format!("Nothing will remove {f} here; remove it by hand once the pod's owner no longer needs it counted."),
                        p,
                    ));
                }
                self.finding(
                    FindingCode::FinalizerControllerMissing,
                    Severity::Error,
                    x,
                    Vec::new(),
                    format!("{} keeps {f}, and {who} will never remove it: {what}", describe(g, x)),
                    remedy,
                )
                .subject = subject;
                self.local_stuck.push(x);
            }
        }
    }

    pub(super) fn controller_not_alive(&mut self, x: NodeId, at: Option<usize>, f: &str, owner: &FinalizerOwner) {
        let g = self.g;
        let age = self.deleting_for(x);
        let stuck_after = self.opts.stuck_after;
        // permission alone never keeps an old deletion "in progress" (contract §4.3): a
        // controller that may update the object had the time it is given, and nothing ties it
        // to the finalizer
        let unearned = owner.controller == ControllerState::Unknown && owner.by_permission_only && age > stuck_after;
        // a controller a managed control plane runs out of sight is presumed running, for
        // --stuck-after only (contract §4.3): within it in progress, past it unknown
        let out_of_sight =
            (owner.controller == ControllerState::Unknown).then(|| self.live.out_of_sight(x, f)).flatten();
        // its own repeated failure ends that presumption (contract §4.3, time rules)
        if let Some(found) = out_of_sight.and_then(|who| {
            out_of_sight::repeats_a_failure(g, &self.shared.events, x, at, f, owner, who, self.now, &self.opts)
        }) {
            self.findings.push(found);
            self.local_stuck.push(x);
            return;
        }
        let (code, severity, stuck, cannot_tell) = match owner.controller {
            ControllerState::Down => (FindingCode::FinalizerControllerDown, Severity::Error, true, false),
            ControllerState::Missing => (FindingCode::FinalizerControllerMissing, Severity::Error, true, false),
            _ if unearned => (FindingCode::FinalizerControllerUnknown, Severity::Error, true, false),
            _ if out_of_sight.is_some() && age <= stuck_after => {
                (FindingCode::FinalizerControllerUnknown, Severity::Info, false, false)
            }
            _ => (FindingCode::FinalizerControllerUnknown, Severity::Warning, false, true),
        };
        let mut message = format!("{} keeps {f}; it is removed by {}", describe(g, x), removed_by_clause(g, owner, f));
        if let Some(who) = out_of_sight {
            let waited = crate::age::human(age.max(0));
            let allowed = crate::age::human(stuck_after);
            message.push_str(&if cannot_tell {
                format!(
                    ". {who}: presumed running for --stuck-after ({allowed}) only, and the deletion has waited {waited}; whether it is acting cannot be told from inside the cluster"
                )
            } else {
                format!(". {who}: presumed running, it has waited {waited} of the {allowed} allowed (--stuck-after)")
            });
        }
        let mut remedies = remedy::restore_controller(g, owner, f);
        let dying = namespace::controller_home(owner).filter(|ns| backend::namespace_terminating(g, ns));
        // a controller its own deletion keeps from running (not its namespace's: `dying_home`)
        let held = dying.is_none().then(|| self_hold::find(g, owner, f)).flatten();
        if let Some(home) = dying {
            remedies = namespace::dying_home(g, x, f, &home);
        } else if let Some(h) = &held {
            remedies = h.remedies(g, x, at, f);
        } else if let Some(p) = remedy::remove_finalizer_at(g, x, at, f) {
            remedies.push(Step::run(
                Reach::Destructive,
                format!(
                    "Last resort, only once whatever {f} guards has been cleaned up by hand (what its controller manages outside the cluster is otherwise stranded): remove the finalizer."
                ),
                p,
            ));
        }
        if owner.controller != ControllerState::Down && age < JUST_DELETED_SECONDS {
            remedies.insert(0, remedy::recheck(g, x, age));
        }
        if let Some(w) = namespace::cascade_warning(f) {
            remedies.insert(0, Step::advice(Reach::Inspect, w));
        }
        let found = self.finding(code, severity, x, Vec::new(), message, remedies);
        found.subject = Subject::Finalizer { name: f.to_string(), owner: owner.clone() };
        found.cannot_tell = cannot_tell;
        if stuck {
            self.local_stuck.push(x);
        }
    }

    pub(super) fn gc_finalizer_idle(&mut self, x: NodeId, f: &str, age: i64, down: Option<&str>) {
        let g = self.g;
        // nothing left to wait for, and the GC's UPDATE removing f is refused: not a missed event
        if let Some(r) = self.refused(x, Operation::Update) {
            self.say_refused(x, f, &r);
            return;
        }
        if age <= GC_GRACE_SECONDS {
            if down.is_none() {
                self.finding(
                    FindingCode::FinalizerPending,
                    Severity::Info,
                    x,
                    Vec::new(),
                    format!("{f} has nothing left to wait for; the garbage collector removes it momentarily"),
                    vec![Step::run(Reach::Inspect, format!("Follow {}:", describe(g, x)), remedy::inspect(g, x))],
                )
                .subject = Subject::GarbageCollector;
            }
            return;
        }
        let what =
            if f == ORPHAN { "its dependents were orphaned or never existed" } else { "no blocking dependent remains" };
        let steps = vec![
            Step::advice(
                Reach::Inspect,
                "Check kube-controller-manager's garbage collector (its logs, 'unable to sync caches for garbage collector').",
            ),
            Step::run(
                Reach::Disrupt,
                format!("Re-issue the delete with Background propagation; the API server drops {f}."),
                remedy::redelete_background(g, x),
            ),
        ];
        // "nothing left to wait for" rests on seeing every dependent
        if f == FOREGROUND_DELETION
            && let Some(why) = gc_steps::blind_to_dependents(g, x)
        {
            self.incomplete.push(format!(
                "foregroundDeletion on {}: no blocking dependent in the input, but {why}",
                describe(g, x)
            ));
            let found = self.finding(
                FindingCode::GarbageCollectorStalled,
                Severity::Warning,
                x,
                Vec::new(),
                format!(
                    "{f} is still on {} after {} and the input shows no blocking dependent, but {why}: whether the garbage collector is waiting or missed it cannot be told",
                    describe(g, x),
                    crate::age::human(age)
                ),
                steps,
            );
            found.subject = Subject::GarbageCollector;
            found.cannot_tell = true;
            return;
        }
        let state = match down {
            Some(d) => {
                format!("the garbage collector missed it, and kube-controller-manager is not judged alive now ({d})")
            }
            None => {
                "the garbage collector missed it (it has no periodic resync; kubernetes#77081) or is not running".into()
            }
        };
        self.finding(
            FindingCode::GarbageCollectorStalled,
            Severity::Error,
            x,
            Vec::new(),
            format!("{f} is still on {} after {} although {what}: {state}", describe(g, x), crate::age::human(age)),
            steps,
        )
        .subject = Subject::GarbageCollector;
        self.local_stuck.push(x);
    }

    pub(super) fn explain_namespace(&mut self, x: NodeId) {
        let g = self.g;
        let Some(ns) = g.object(x) else { return };
        let spec_finalizers: Vec<String> = ns
            .field("/spec/finalizers")
            .and_then(|v| v.as_array())
            .map(|a| a.iter().filter_map(|f| f.as_str().map(String::from)).collect())
            .unwrap_or_default();
        for f in &spec_finalizers {
            let owner = self.live.finalizer(x, f);
            if x == self.target {
                self.finalizers.push(FinalizerReport { name: f.clone(), owner: owner.clone() });
            }
            if f != "kubernetes" && owner.controller != ControllerState::Alive {
                self.controller_not_alive(x, None, f, &owner);
            }
        }
        if !spec_finalizers.iter().any(|f| f == "kubernetes") {
            return;
        }
        // Discovery: the namespace controller keeps `kubernetes` while any group fails.
        let failing: Vec<NodeId> = g
            .of_kind(API_SERVICE.0, API_SERVICE.1)
            .iter()
            .copied()
            .filter(|&id| g.object(id).and_then(|o| o.condition("Available")).is_some_and(|c| !c.is_true()))
            .collect();
        let condition = ns.condition("NamespaceDeletionDiscoveryFailure").filter(|c| c.is_true());
        if condition.is_some() || !failing.is_empty() {
            let why: Vec<String> = failing
                .iter()
                .filter_map(|&a| {
                    let o = g.object(a)?;
                    let c = o.condition("Available")?;
                    Some(format!("APIService {} is unavailable: {} ({})", o.name, c.reason, c.message))
                })
                .collect();
            let mut remedies = vec![Step::run(
                Reach::Inspect,
                "Do not clear the namespace's 'kubernetes' finalizer by hand: that strands whatever remains in it, including content of the failing group. Its conditions say what the namespace controller is waiting for.",
                remedy::inspect(g, x),
            )];
            for &a in &failing {
                let Some(o) = g.object(a) else { continue };
                remedies.push(namespace::apiservice_restore_step(g, o));
                remedies.push(Step::run(
                    Reach::Destructive,
                    format!("If that add-on was uninstalled, delete the stale registration of APIService {}.", o.name),
                    Command::kubectl(["delete"]).arg("apiservice").arg(o.name.as_str()),
                ));
            }
            let mut msg =
                format!("{} cannot finish: the namespace controller cannot discover every API group", describe(g, x));
            if let Some(c) = condition {
                msg.push_str(&format!(" ({}: {})", c.reason, c.message));
            }
            if !why.is_empty() {
                msg.push_str(&format!("; {}", why.join("; ")));
            }
            self.finding(
                FindingCode::NamespaceDiscoveryFailure,
                Severity::Error,
                x,
                failing.iter().map(|&a| Related::Node(a)).collect(),
                msg,
                remedies,
            );
            self.local_stuck.push(x);
        }
        self.explain_namespace_conditions(x);
        self.explain_namespace_content(x);
        // Nothing left and every group discovered: the namespace controller has nothing to wait for.
        let discovery_failing = condition.is_some() || !failing.is_empty();
        if !discovery_failing && g.in_namespace(Some(ns.name.as_str())).next().is_none() {
            let owner = self.live.finalizer(x, "kubernetes");
            if owner.controller == ControllerState::Alive {
                let who = owner.removed_by.clone().unwrap_or_else(|| "the namespace controller".into());
                self.builtin_condition(x, "kubernetes", &owner, &who, builtin_conditions::namespace_empty(g, ns));
            }
        }
    }

    pub(super) fn explain_terminating_pod(&mut self, x: NodeId) {
        let g = self.g;
        let Some(pod) = g.object(x) else { return };
        if pod.deletion_grace_period_seconds.unwrap_or(0) == 0 {
            return;
        }
        let Some(node_name) = pod.str_field("/spec/nodeName") else { return };
        let node = g.find("", "Node", None, node_name).and_then(|n| g.object(n));
        let problem = match kubelet::node_state(g, node_name, self.now) {
            kubelet::NodeState::Lost(problem) => Some(problem),
            kubelet::NodeState::Alive(alive) => {
                // a refusal of the kubelet's DELETE explains the wait (contract §4.3.4)
                let refused =
                    self.findings.iter().any(|f| f.object == x && f.code.is_refusal() && f.severity == Severity::Error);
                let stalled =
                    kubelet::stalled(g, &self.shared.events, x, node_name, &alive, self.now, self.opts.stuck_after);
                if let Some(found) = stalled.filter(|_| !refused) {
                    self.findings.push(found);
                    self.local_stuck.push(x);
                }
                None
            }
            kubelet::NodeState::Unjudged => None,
        };
        if let Some(problem) = problem {
            self.finding(
                FindingCode::PodOnUnavailableNode,
                Severity::Error,
                x,
                node.and_then(|_| g.find("", "Node", None, node_name)).map(Related::Node).into_iter().collect(),
                format!(
                    "{} is in graceful termination but {problem}: no kubelet will confirm it, so it stays Terminating",
                    describe(g, x)
                ),
                lost_node_steps(g, x, node_name, node.is_some()),
            );
            self.local_stuck.push(x);
        }
    }

    pub(super) fn deleting_for(&self, x: NodeId) -> i64 {
        self.g.object(x).and_then(|o| o.deletion_timestamp).map(|t| self.now.as_second() - t.as_second()).unwrap_or(0)
    }

    /// Stuck = stuck on its own account, or waiting on something stuck (reverse BFS).
    pub(super) fn propagate_stuck(&self) -> HashSet<NodeId> {
        let waited_by = &self.waited_by;
        let mut stuck: HashSet<NodeId> = self.local_stuck.iter().copied().collect();
        let mut queue: VecDeque<NodeId> = self.local_stuck.iter().copied().collect();
        while let Some(s) = queue.pop_front() {
            for &w in waited_by.get(&s).into_iter().flatten() {
                if stuck.insert(w) {
                    queue.push_back(w);
                }
            }
        }
        stuck
    }
}

/// What frees a pod on a lost node, safest first: the node back (its kubelet confirms the
/// deletion); once the node is certainly off, the `node.kubernetes.io/out-of-service` taint
/// (KEP-2268, GA in 1.28), with which the pod garbage collector force-deletes its pods and the
/// attach-detach controller detaches their volumes at once; and the force delete, last (it
/// leaves the volumes attached to the lost node).
fn lost_node_steps(g: &Graph, pod: NodeId, node_name: &str, node_exists: bool) -> Vec<Step> {
    let mut steps = vec![Step::advice(
        Reach::Restore,
        format!("Bring the node {node_name} back; its kubelet then confirms the deletion."),
    )];
    if node_exists {
        const TAINT: &str = "node.kubernetes.io/out-of-service=nodeshutdown:NoExecute";
        steps.push(Step::run(
            Reach::Disrupt,
            format!(
                "If {node_name} cannot come back: once it is certainly shut down (not merely unreachable, where its containers still run and write to their volumes), taint it out of service. Its pods are then deleted without the kubelet and their volumes detached, so they can start elsewhere (KEP-2268, Kubernetes 1.28+). Remove the taint once the node is back or deleted (kubectl taint nodes {node_name} {TAINT}-)."
            ),
            Command::kubectl(["taint"]).arg("nodes").arg(node_name).arg(TAINT),
        ));
    }
    steps.push(Step::run(
        Reach::Destructive,
        "Or, once the node is certainly gone, force the pod's deletion (unlike the taint, this does not detach its volumes from the lost node at once).",
        remedy::on_object(g, pod, ["delete"]).flag("--grace-period", "0").switch("--force"),
    ));
    steps
}

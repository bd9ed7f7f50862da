//! What an answer reads from a live cluster: the read policy, as a [`Plan`] that the live
//! source ([`crate::source::live::Session::read`]) executes round by round. It sits beside the
//! analyses whose needs it encodes (which finalizers need their managers, where controllers
//! live, which CRDs are read in full, which owner kinds to look for across namespaces) and
//! above the source, which only executes [`Ask`]s and knows none of this. Every step is pure:
//! from the discovery and the answers so far to the next asks, tested without HTTP.
//!
//! Scope: [`Scope::Cluster`] reads every type everywhere. [`Scope::Namespace`] reads what an
//! answer about that namespace needs: every cluster-scoped type; every namespaced type in the
//! namespace; the kinds controller liveness is judged by ([`EVERYWHERE`]) in every namespace
//! (node heartbeats aside: only those of the nodes an answer judges, [`nodes`]);
//! then, in every namespace (metadata-only), each namespaced owner kind that the objects read
//! name in owner references whose owner was not among them, so that a cross-namespace or
//! recreated owner is told from an absent one. Where the list of namespaces is refused (a
//! namespace's user), the namespace itself is read by name.
//!
//! Answers never list what the garbage collector ignores (Events: `graph::ignored_by_gc`),
//! whose objects never enter its graph; a capture ([`Wants::capture`]) keeps them.
//!
//! Bodies: in an answer, the namespaced kinds whose spec or status the analysis reads (pods,
//! workloads, claims, …) are listed metadata-only across namespaces, and in full only where an
//! answer reads them: the namespace in focus and the namespaces controllers live in (those of
//! the ServiceAccounts that RBAC bindings name and of leader-election Leases). Pods and
//! workloads are most of a cluster's bytes. A capture of a namespace (`snapshot -n`) reads the
//! same controller namespaces and workloads too, so that its offline answers equal live ones.
//!
//! CustomResourceDefinitions, whose schemas are most of the rest (tens to hundreds of KB
//! each), are listed metadata-only in answers: a CRD's name is `<plural>.<group>`, and
//! discovery knows the kind, scope and versions of every served type. Only the CRDs whose spec
//! or status an answer reads are then fetched in full ([`CRD_READS`]): those being deleted (the
//! CRD finalizer's cleanup of their instances), the object asked about and the CRDs among its
//! dependents (what a plan may delete), and any CRD that discovery does not serve (so that it
//! maps its kind as before).
//!
//! managedFields: an answer's metadata-only lists ask for them to be left out (KEP-5958). The
//! analysis reads them only for who set a finalizer that no built-in controller removes, so
//! where a list came without any, its objects with such finalizers are read again for them
//! ([`MANAGED_FIELDS_READS`]), before the workloads named like those managers are looked up.
//!
//! Adding a read: add a step (a function from the discovery and the answers so far to asks)
//! to `STEPS` (it sees every answer before it, by step: `Plan::answers_to`), or more asks to
//! an existing step, and a test in `tests.rs` against its in-memory cluster; the session needs
//! no change (see `source::live::ask`). A kind read in full must be one whose body the
//! snapshot keeps (`snapshot::object::keeps_body`), or the body is dropped as it is parsed.
//!
//! Reads that depend on the answer itself ([`answer`]): for why-stuck ([`Wants::why_stuck`]),
//! the steps after the CRDs build a graph of what was read so far, grown with each round's
//! answers rather than built again (`source::live::so_far`, `Graph::grow`), and ask the
//! analysis what it needs: `reads::wishes::wanted` (webhook configurations, the
//! CRD of the target's kind, then the Services and EndpointSlices of the backends they name,
//! by `labelSelector=kubernetes.io/service-name=…`) and, last, `diagnose::events::wanted` on
//! the answer as it will be given (same `now` and options): the Events of the objects it names,
//! each listed by `involvedObject.uid=…` in its namespace. Events are ignored by the GC's graph,
//! and `Plan::scope` skips them, so only these asks read them for an answer. A capture of a
//! namespace reads the backends of every webhook it holds (`reads::wishes::backends_of_all`),
//! the params its policies' bindings name (`reads::wishes::params_wanted`), and the Events
//! outside it that the answers about what is being deleted in it show.
//!
//! `why-stuck --all` ([`Wants::sweeping`]) has a plan of its own ([`sweep`]): the scope step
//! as `tree` reads it (with `-A` after `Step::Claims`, which reads the namespaces, volumes and
//! claims first, so that the scope reads each pod once: in full where claims are being deleted),
//! then (`Step::Deleting`) bodies only where the answers about what is being deleted read them,
//! and the per-answer steps for every such answer.

pub mod answer;
mod by_name;
mod crds;
pub mod nodes;
mod owners;
pub mod sweep;
#[cfg(test)]
mod tests;
pub mod wishes;

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::jiff::Timestamp;

use crate::controllers::builtin_owner;
use crate::controllers::{ManagerKind, classify_manager as classify};
use crate::snapshot::object::keeps_body;
use crate::source::live::ask::{Answered, Ask, Named, ReadPlan, Use};
use crate::source::live::so_far::SoFar;
use crate::source::live::{Discovery, ListType};

pub use by_name::{Limits, by_name};
pub use crds::crd_bodies_wanted;
pub use owners::{controller_namespaces, missing_owner_kinds};

/// Kinds read in every namespace, in full, even when the answer is about one: the evidence for
/// whether a controller is running (leader leases, the bindings that name its account).
pub const EVERYWHERE: &[(&str, &str)] = &[LEASE, ("rbac.authorization.k8s.io", "RoleBinding")];

/// Kinds read, in full, only in the namespaces where controllers live: those of the
/// ServiceAccounts that RBAC bindings name and of the leader-election Leases. Pods and
/// workloads are most of a cluster's bytes; an operator's are all liveness needs of them.
pub const IN_CONTROLLER_NAMESPACES: &[(&str, &str)] = &[
    ("", "Pod"),
    ("", "ServiceAccount"),
    ("", "Endpoints"),
    ("apps", "Deployment"),
    ("apps", "StatefulSet"),
    ("apps", "DaemonSet"),
    ("apps", "ReplicaSet"),
];

/// Admission policies and their bindings: listed metadata-only (their names: are there any?),
/// then in full only by answers that judge admission (why-stuck, plan) and only where some
/// are there (`reads::wishes::policies_wanted`).
pub const ADMISSION_POLICIES: &[(&str, &str)] = &[
    ("admissionregistration.k8s.io", "ValidatingAdmissionPolicy"),
    ("admissionregistration.k8s.io", "ValidatingAdmissionPolicyBinding"),
    ("admissionregistration.k8s.io", "MutatingAdmissionPolicy"),
    ("admissionregistration.k8s.io", "MutatingAdmissionPolicyBinding"),
];

/// Workload kinds looked up by name, wherever they are, when a field manager that set a
/// finalizer is named like one (`managedFields` attribution).
pub const NAMED_LIKE_MANAGERS: &[(&str, &str)] =
    &[("apps", "Deployment"), ("apps", "StatefulSet"), ("apps", "DaemonSet")];

/// Field managers looked up by name at most (in name order): each costs a list per kind in
/// [`NAMED_LIKE_MANAGERS`], and a cluster with more controllers setting finalizers on the
/// objects of one answer is beyond what attribution by name helps with.
pub const MAX_MANAGERS_LOOKED_UP: usize = 32;

/// Objects whose managedFields a list left out: a GET each up to 16 per type; more, a list
/// of the type in each namespace concerned up to 8 namespaces; more, one list everywhere.
/// (A quarter or more of their type's objects: one list, see `managed_fields`.)
pub const MANAGED_FIELDS_READS: Limits = Limits { gets: 16, namespaces: 8 };

/// CRDs wanted in full: a GET each up to 32; more, one full list (kept to those wanted).
pub const CRD_READS: Limits = Limits { gets: 32, namespaces: 0 };

use crate::names::{CRD, LEASE};

fn is(t: &ListType, (group, kind): (&str, &str)) -> bool {
    t.group == group && t.kind == kind
}

fn is_crd(t: &ListType) -> bool {
    is(t, CRD)
}

fn among(t: &ListType, kinds: &[(&str, &str)]) -> bool {
    kinds.iter().any(|k| is(t, *k))
}

/// The object an answer is about.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TargetRef {
    /// The API group, empty for the core group (resolved by discovery from the type typed).
    pub group: String,
    /// The kind (resolved by discovery: `Deployment`, never `deploy`).
    pub kind: String,
    /// The namespace; `None` for a cluster-scoped object.
    pub namespace: Option<String>,
    /// `metadata.name`.
    pub name: String,
}

/// Where to read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Scope {
    /// Every type in every namespace (`-A`).
    Cluster,
    /// What an answer about one namespace needs (see the module docs).
    Namespace(String),
}

/// What the read is for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Wants {
    /// Which namespaces, and therefore which types, are read.
    pub scope: Scope,
    /// A capture (`kubectl gc snapshot`): every body and managedFields, in every namespace the
    /// scope reads, and what the GC ignores too.
    pub capture: bool,
    /// The namespace of the object asked about, whose bodies are always read.
    pub focus: Option<String>,
    /// The object asked about: if it is a CRD, or has CRDs among its dependents, those are
    /// read in full.
    pub target: Option<TargetRef>,
    /// The answer is why-stuck's about `target`: the webhooks in the way of its deletion, their
    /// backends, and the Events of the objects the answer names are read too (`answer`). For a
    /// capture of a namespace: how the answers it is taken for are judged (the Events outside
    /// the namespace that they show are read too).
    pub why_stuck: Option<WhyStuck>,
    /// The answer judges the admission of the requests a deletion needs (why-stuck, plan): the
    /// admission policies and their bindings are read in full where there are any.
    pub admission: bool,
}

impl Wants {
    /// `why-stuck --all`: answers about every object being deleted in the scope, read by a plan
    /// of their own ([`sweep`]) rather than as a capture.
    pub fn sweeping(&self) -> bool {
        !self.capture && self.target.is_none() && self.why_stuck.is_some()
    }
}

/// Whether an answer reads the server's version (`/version`) after the objects.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VersionRead {
    /// A capture (`kubectl gc snapshot`): always, to record it (`serverVersion`).
    Record,
    /// An answer that judges behaviour that changed between releases (ordered namespace
    /// deletion, `crate::release`): only where it does, [`VersionRead::wanted`].
    WhereJudged,
    /// An answer that never depends on it (`tree`).
    Never,
}

impl VersionRead {
    /// Whether to read it, given the object asked about (`None` for `why-stuck --all`) and what
    /// was read: an answer about a Namespace (its deletion's waves), or `why-stuck --all` over
    /// objects among which a namespace is terminating.
    pub fn wanted(self, target: Option<&TargetRef>, read: &crate::snapshot::Snapshot) -> bool {
        match (self, target) {
            (VersionRead::Record, _) => true,
            (VersionRead::Never, _) => false,
            (VersionRead::WhereJudged, Some(t)) => t.group.is_empty() && t.kind == "Namespace",
            (VersionRead::WhereJudged, None) => {
                read.objects.iter().any(|o| o.kind == "Namespace" && o.group().is_empty() && o.is_deleting())
            }
        }
    }
}

/// How a why-stuck answer is judged, for the reads that depend on the answer itself (which
/// objects it names): the same as the answer's, or the Events read would not be its.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WhyStuck {
    /// The reference time (`--now`, else the capture time).
    pub now: Timestamp,
    /// The options the answer is judged with (so its Events are those it shows).
    pub options: crate::diagnose::Options,
}

/// The steps of a read, in order; each sees every answer before it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Step {
    /// `why-stuck --all -A`: the namespaces, volumes and claims, which tell where its answers
    /// read pods in full, so that the scope reads each pod once.
    Claims,
    /// The scope: every type, where and how the answer reads it.
    Scope,
    /// `-n NS` where the list of namespaces was refused: NS itself, by name.
    OwnNamespace,
    /// `why-stuck --all`: the bodies of what is being deleted, where its answers read them.
    Deleting,
    /// The heartbeats of the nodes whose kubelets the answer judges ([`nodes`]).
    Nodes,
    /// Owner kinds whose owners were not found, everywhere; workloads where controllers live.
    Owners,
    /// managedFields that lists left out, for the finalizers that need their managers.
    ManagedFields,
    /// Workloads named like those managers.
    Managers,
    /// The CRDs an answer reads in full.
    Crds,
    /// Why-stuck: the webhook configurations, the admission policies there are (plan: those
    /// only), and the CRDs whose conversion webhooks matter.
    Webhooks,
    /// Why-stuck: the Services and EndpointSlices of the webhooks' backends; a capture: those
    /// of every webhook it holds.
    Backends,
    /// Why-stuck: the Events of the objects the answer names.
    Events,
}

const STEPS: [Step; 12] = [
    Step::Claims,
    Step::Scope,
    Step::OwnNamespace,
    Step::Deleting,
    Step::Nodes,
    Step::Owners,
    Step::ManagedFields,
    Step::Managers,
    Step::Crds,
    Step::Webhooks,
    Step::Backends,
    Step::Events,
];

/// The read plan of one answer (or capture); a fresh one per read.
pub struct Plan {
    wants: Wants,
    /// How many answers there were when each step was asked (`starts[i]`: before step `i`).
    starts: Vec<usize>,
    /// The graph of the answers so far, for the steps that ask the analysis: built on the
    /// first such step, then grown with each round's answers (`so_far`), never built again.
    graph: Option<crate::graph::Graph>,
    /// The objects of the answers the graph holds.
    so_far: SoFar,
}

impl Plan {
    /// A plan that has read nothing yet.
    pub fn new(wants: Wants) -> Plan {
        Plan { wants, starts: Vec::new(), graph: None, so_far: SoFar::default() }
    }

    /// The graph of every answer so far.
    fn graph(&mut self, d: &Discovery, answers: &[Answered]) -> &crate::graph::Graph {
        if self.graph.is_none() || self.so_far.taken() != answers.len() {
            let round = self.so_far.take(d, answers);
            match &mut self.graph {
                Some(g) => g.grow(round.replaced, round.added, round.incomplete),
                None => {
                    // the graph's shape does not depend on the time (a capture has none of its own here)
                    let now = self.wants.why_stuck.map_or(Timestamp::UNIX_EPOCH, |w| w.now);
                    self.graph = Some(crate::graph::Graph::build(round.into_snapshot(d, now)));
                }
            }
        }
        self.graph.as_ref().expect("just built")
    }

    /// The last step that needs the graph is done: it is dropped before the read's own
    /// snapshot is assembled.
    fn drop_graph(&mut self) {
        self.graph = None;
        self.so_far = SoFar::default();
    }

    fn focus(&self) -> Option<&str> {
        match &self.wants.scope {
            Scope::Namespace(ns) => Some(ns),
            Scope::Cluster => self.wants.focus.as_deref(),
        }
    }

    /// The answers to `step`.
    fn answers_to<'a>(&self, step: Step, answers: &'a [Answered]) -> &'a [Answered] {
        let i = STEPS.iter().position(|s| *s == step).unwrap_or(0);
        let start = self.starts.get(i).copied().unwrap_or(answers.len());
        let end = self.starts.get(i + 1).copied().unwrap_or(answers.len());
        &answers[start.min(answers.len())..end.min(answers.len())]
    }

    /// `why-stuck --all -A`, whose first pass is in two steps.
    fn sweeps_cluster(&self) -> bool {
        self.wants.sweeping() && self.wants.scope == Scope::Cluster
    }

    /// The answers of the first pass over the scope: the scope step's, and for
    /// `why-stuck --all -A` the claims step's before it.
    fn first_pass<'a>(&self, answers: &'a [Answered]) -> &'a [Answered] {
        let deleting = STEPS.iter().position(|s| *s == Step::Deleting).expect("a step");
        let end = self.starts.get(deleting).copied().unwrap_or(answers.len());
        &answers[..end.min(answers.len())]
    }

    fn step(&mut self, step: Step, d: &Discovery, answers: &[Answered]) -> Vec<Ask> {
        match step {
            Step::Claims if self.sweeps_cluster() => {
                self.scope(d).into_iter().filter(|a| among(&a.kind, &sweep::FIRST)).collect()
            }
            Step::Claims => Vec::new(),
            Step::Scope if self.sweeps_cluster() => {
                let claims = self.answers_to(Step::Claims, answers);
                let pods_where = sweep::deleting_in(d, claims).pod_namespaces;
                let known = sweep::namespaces_in(claims);
                let mut asks = Vec::new();
                for a in self.scope(d).into_iter().filter(|a| !among(&a.kind, &sweep::FIRST)) {
                    if is(&a.kind, ("", "Pod")) {
                        asks.extend(sweep::pod_asks(a, &pods_where, known.as_ref()));
                    } else {
                        asks.push(a);
                    }
                }
                asks
            }
            Step::Scope => self.scope(d),
            Step::OwnNamespace => self.own_namespace(d, answers),
            // (with `-n` the scope step read the namespace, all that is answered about, in full)
            Step::Deleting if self.sweeps_cluster() => {
                let first = self.first_pass(answers);
                sweep::body_asks(d, &sweep::deleting_in(d, first), first)
            }
            Step::Deleting => Vec::new(),
            Step::Nodes if nodes::all_wanted(&self.wants) => Vec::new(),
            Step::Nodes => nodes::heartbeat_asks(d, nodes::judged(answers, self.wants.target.as_ref()), answers),
            Step::Owners => self.owners(d, answers),
            Step::ManagedFields if self.wants.sweeping() => {
                // only the finalizers its answers attribute: of objects being deleted, and of
                // the content of namespaces being deleted
                let terminating = sweep::terminating_namespaces(self.first_pass(answers));
                managed_fields(answers, |m| {
                    m.deletion_timestamp.is_some() || m.namespace.as_ref().is_some_and(|ns| terminating.contains(ns))
                })
            }
            Step::ManagedFields => managed_fields(answers, |_| true),
            Step::Managers => self.managers(d, answers),
            Step::Crds => self.crds(d, answers),
            Step::Webhooks | Step::Backends => self.webhooks(d, answers),
            Step::Events => self.events(d, answers),
        }
    }

    /// Why-stuck: what `reads::wishes::wanted` asks for on what was read so far (asked
    /// twice: the backends are known once the configurations and CRDs are in). A capture of a
    /// namespace: the backends of every webhook it holds, wherever they are (a capture of
    /// every namespace holds them already).
    fn webhooks(&mut self, d: &Discovery, answers: &[Answered]) -> Vec<Ask> {
        let reads = match (self.wants.why_stuck, self.wants.target.clone()) {
            (Some(_), Some(t)) => {
                let g = self.graph(d, answers);
                let Some(x) = answer::target_node(g, &t) else { return Vec::new() };
                crate::reads::wishes::wanted(g, x)
            }
            _ if self.wants.capture && self.wants.scope != Scope::Cluster => {
                let g = self.graph(d, answers);
                let mut reads = crate::reads::wishes::backends_of_all(g);
                reads.extend(crate::reads::wishes::params_wanted(g));
                reads
            }
            (Some(_), None) if self.wants.sweeping() => {
                let scope = self.wants.scope.clone();
                sweep::reads_of_answers(self.graph(d, answers), &scope)
            }
            // plan: the policies (its webhooks come with the cluster-scoped types)
            (None, _) if self.wants.admission && !self.wants.capture => {
                crate::reads::wishes::policies_wanted(self.graph(d, answers))
            }
            _ => return Vec::new(),
        };
        answer::asks_for(d, &reads, answers)
    }

    /// Why-stuck: the Events of the objects its answer names, judged as the answer will be.
    /// A capture of a namespace (judged with `why_stuck`'s time and options): the Events, outside
    /// it, of the objects that answers about what is being deleted in it name (its own Events
    /// are read with it).
    fn events(&mut self, d: &Discovery, answers: &[Answered]) -> Vec<Ask> {
        let Some(w) = self.wants.why_stuck else { return Vec::new() };
        let target = self.wants.target.clone();
        let capture = match (&self.wants.scope, self.wants.capture) {
            (Scope::Namespace(ns), true) => Some(ns.clone()),
            _ => None,
        };
        if self.wants.sweeping() {
            let scope = self.wants.scope.clone();
            let objects = sweep::event_objects(self.graph(d, answers), &scope, w.now, &w.options);
            self.drop_graph();
            let known = match scope {
                Scope::Cluster => sweep::namespaces_in(self.first_pass(answers)),
                Scope::Namespace(_) => None,
            };
            return sweep::event_asks(d, objects, known.as_ref());
        }
        let g = self.graph(d, answers);
        let objects = match (target, capture) {
            (Some(t), _) => answer::target_node(g, &t)
                .map(|x| answer::answer_event_objects(g, x, w.now, &w.options))
                .unwrap_or_default(),
            (None, Some(ns)) => answer::capture_event_objects(g, &ns, w.now, &w.options),
            (None, None) => Vec::new(),
        };
        self.drop_graph();
        answer::event_asks(d, objects)
    }

    fn scope(&self, d: &Discovery) -> Vec<Ask> {
        let capture = self.wants.capture;
        let mut asks = Vec::new();
        for t in &d.types {
            let ask = |ns: Option<&str>, why: &str| {
                Ask::list(t, ns.map(str::to_string), why).dropping_managed_fields(!capture)
            };
            // the lists of kinds read in full keep managedFields here (one answer's, tree's):
            // only the sweep's bodies beside deletions are asked without them
            let full = |a: Ask| a.full().dropping_managed_fields(!capture && !keeps_body(&t.group, &t.kind));
            // a Node's status reports judge a watched answer again only where it judges the node
            let full = |a: Ask| match nodes::is_node(t) && !nodes::all_wanted(&self.wants) {
                true => full(a).quietly(),
                false => full(a),
            };
            if !capture && crate::graph::ignored_by_gc(&t.group, &t.kind) {
                continue;
            }
            if is_crd(t) && !capture {
                asks.push(ask(None, "CRDs, metadata-only: the few an answer reads are read in full later"));
                continue;
            }
            if among(t, ADMISSION_POLICIES) && !capture {
                asks.push(ask(
                    None,
                    "admission policies, metadata-only: read in full where an answer judges admission",
                ));
                continue;
            }
            match &self.wants.scope {
                Scope::Namespace(ns) if t.namespaced && !among(t, EVERYWHERE) => {
                    asks.push(full(ask(Some(ns), "the namespace of the answer")))
                }
                _ if is(t, LEASE) && !nodes::all_wanted(&self.wants) => asks.push(nodes::leases_but_heartbeats(full(
                    ask(None, "every namespace but the node heartbeats: those judged are read by name"),
                ))),
                _ if !t.namespaced || !keeps_body(&t.group, &t.kind) || capture || among(t, EVERYWHERE) => {
                    asks.push(full(ask(None, "every namespace")))
                }
                _ => {
                    asks.push(ask(None, "every namespace, metadata-only: bodies are read where answers read them"));
                    if let Some(ns) = self.focus() {
                        asks.push(full(ask(Some(ns), "the namespace in focus, in full")));
                    }
                }
            }
        }
        asks
    }

    /// A namespace's user is seldom allowed to list namespaces, yet may get their own (RBAC
    /// authorizes a GET of namespace NS as a request in NS, so a RoleBinding there grants
    /// it): whether the namespace answered about is being deleted is then still seen.
    fn own_namespace(&self, d: &Discovery, answers: &[Answered]) -> Vec<Ask> {
        let Scope::Namespace(ns) = &self.wants.scope else { return Vec::new() };
        let refused = self
            .answers_to(Step::Scope, answers)
            .iter()
            .any(|a| is(&a.ask.kind, ("", "Namespace")) && a.result.is_err());
        match d.types.iter().find(|t| is(t, ("", "Namespace"))) {
            Some(t) if refused => {
                vec![
                    Ask::get(t, None, ns, "the namespace answered about, by name: the list of namespaces was refused")
                        .full(),
                ]
            }
            _ => Vec::new(),
        }
    }

    fn owners(&self, d: &Discovery, answers: &[Answered]) -> Vec<Ask> {
        let first = self.first_pass(answers);
        let mut asks = Vec::new();
        if let Scope::Namespace(_) = self.wants.scope {
            for t in missing_owner_kinds(d, first) {
                if !first.iter().any(|a| a.ask.kind == *t && a.ask.namespace.is_none()) {
                    asks.push(
                        Ask::list(t, None, "owners named by what was read but not found among it")
                            .dropping_managed_fields(!self.wants.capture),
                    );
                }
            }
        }
        // a capture of every namespace holds every body already
        if self.wants.capture && self.wants.scope == Scope::Cluster {
            return asks;
        }
        for ns in controller_namespaces(first) {
            if self.focus() == Some(ns.as_str()) {
                continue;
            }
            for t in d.types.iter().filter(|t| t.namespaced && keeps_body(&t.group, &t.kind) && !among(t, EVERYWHERE)) {
                let listed_in_full =
                    first.iter().any(|a| a.ask.covers(t, Some(&ns), crate::source::live::ask::Body::Full));
                if among(t, IN_CONTROLLER_NAMESPACES) && !listed_in_full {
                    asks.push(Ask::list(t, Some(ns.clone()), "a namespace controllers live in").full());
                }
            }
        }
        asks
    }

    fn managers(&self, d: &Discovery, answers: &[Answered]) -> Vec<Ask> {
        if self.wants.capture && self.wants.scope == Scope::Cluster {
            return Vec::new();
        }
        let restored = restored_managed_fields(self.answers_to(Step::ManagedFields, answers));
        let mut managers = BTreeSet::new();
        // the sweep attributes the finalizers of what is being deleted (and of the content of
        // namespaces being deleted) only
        let sweeping = self.wants.sweeping();
        let terminating = sweep::terminating_namespaces(self.first_pass(answers));
        let attributed_here = |m: &crate::snapshot::raw::RawMeta| {
            !sweeping
                || m.deletion_timestamp.is_some()
                || m.namespace.as_ref().is_some_and(|ns| terminating.contains(ns))
        };
        for a in self.first_pass(answers) {
            for m in a.result.iter().flatten().filter_map(|doc| doc.metadata.as_ref()).filter(|m| attributed_here(m)) {
                let entries = m.managed_fields.as_ref().or_else(|| restored.get(m.uid.as_deref()?).copied());
                for e in entries.iter().flat_map(|mf| mf.0.iter()) {
                    // managers are asked about only for finalizers no built-in controller removes,
                    // and only those the analysis takes for controllers
                    let attributed = e.finalizers.iter().any(|f| builtin_owner(f).is_none());
                    if attributed && !e.manager.is_empty() && classify(&e.manager) == ManagerKind::Controller {
                        managers.insert(e.manager.clone());
                    }
                }
            }
        }
        let mut asks = Vec::new();
        for m in managers.into_iter().take(MAX_MANAGERS_LOOKED_UP) {
            for t in NAMED_LIKE_MANAGERS.iter().filter_map(|(g, k)| d.find(g, k)) {
                asks.push(
                    Ask::list(t, None, format!("a workload named like field manager \"{m}\""))
                        .full()
                        .selecting(format!("metadata.name={m}")),
                );
            }
        }
        asks
    }

    fn crds(&self, d: &Discovery, answers: &[Answered]) -> Vec<Ask> {
        if self.wants.capture {
            return Vec::new();
        }
        let Some(t) = d.types.iter().find(|t| is_crd(t)) else { return Vec::new() };
        let read = answers.iter().filter(|a| a.ask.use_ == Use::Objects).flat_map(|a| a.result.iter().flatten());
        let names: Named =
            crd_bodies_wanted(d, self.wants.target.as_ref(), read).into_iter().map(|n| (None, n)).collect();
        by_name(t, &names, CRD_READS, "a CRD whose spec or status the answer reads")
            .into_iter()
            .map(Ask::full)
            .collect()
    }
}

impl ReadPlan for Plan {
    fn next(&mut self, d: &Discovery, answers: &[Answered]) -> Vec<Ask> {
        while self.starts.len() < STEPS.len() {
            self.starts.push(answers.len());
            let step = STEPS[self.starts.len() - 1];
            let asks = self.step(step, d, answers);
            if !asks.is_empty() {
                return asks;
            }
        }
        Vec::new()
    }
}

/// The managedFields lists left out, for the finalizers that need their managers: the
/// objects with a finalizer that no built-in controller removes, from answers that came
/// without managedFields, whose managedFields no other answer carried; read again
/// metadata-only with them ([`MANAGED_FIELDS_READS`]).
fn managed_fields(answers: &[Answered], wanted_of: impl Fn(&crate::snapshot::raw::RawMeta) -> bool) -> Vec<Ask> {
    if !answers.iter().any(|a| a.managed_fields_dropped) {
        return Vec::new();
    }
    let carried: BTreeSet<&str> = answers
        .iter()
        .flat_map(|a| a.result.iter().flatten())
        .filter_map(|d| d.metadata.as_ref().filter(|m| m.managed_fields.is_some())?.uid.as_deref())
        .collect();
    let mut wanted: Vec<(&ListType, Named)> = Vec::new();
    for a in answers.iter().filter(|a| a.managed_fields_dropped) {
        for m in a.result.iter().flatten().filter_map(|d| d.metadata.as_ref()) {
            let (Some(uid), Some(name)) = (&m.uid, &m.name) else { continue };
            // a built-in finalizer's remover is known without them
            if !m.finalizers.iter().flatten().any(|f| builtin_owner(f).is_none())
                || carried.contains(uid.as_str())
                || !wanted_of(m)
            {
                continue;
            }
            let i = match wanted.iter().position(|(w, _)| *w == &a.ask.kind) {
                Some(i) => i,
                None => {
                    wanted.push((&a.ask.kind, BTreeSet::new()));
                    wanted.len() - 1
                }
            };
            wanted[i].1.insert((m.namespace.clone(), name.clone()));
        }
    }
    wanted
        .into_iter()
        .flat_map(|(t, objects)| {
            // a quarter or more of their type's objects: one list (of their namespace, or
            // everywhere) instead of one per object or per namespace
            let population: BTreeSet<&str> = answers
                .iter()
                .filter(|a| a.ask.kind == *t && a.ask.use_ == Use::Objects)
                .flat_map(|a| a.result.iter().flatten())
                .filter_map(|d| d.metadata.as_ref()?.uid.as_deref())
                .collect();
            let few = by_name::few_among(objects.len(), population.len());
            let limits = if few { MANAGED_FIELDS_READS } else { Limits { gets: 0, namespaces: 1 } };
            by_name(t, &objects, limits, "the managers of a finalizer no built-in controller removes")
        })
        .map(Ask::for_managed_fields)
        .collect()
}

/// managedFields read again, by uid.
fn restored_managed_fields(answers: &[Answered]) -> BTreeMap<&str, &crate::snapshot::raw::RawManagedFields> {
    answers
        .iter()
        .flat_map(|a| a.result.iter().flatten())
        .filter_map(|d| {
            let m = d.metadata.as_ref()?;
            Some((m.uid.as_deref()?, m.managed_fields.as_ref()?))
        })
        .collect()
}

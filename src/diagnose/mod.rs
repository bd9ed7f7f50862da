//! `why-stuck`: why an object will not go away, down to the root cause, and what to do.
//!
//! # Expected flow
//! The target is explained first: its deletion age, each finalizer with who removes it
//! ([`Liveness`]), its owner-reference problems. Whatever it waits on is then explained the
//! same way, breadth first: blocking dependents (`foregroundDeletion`), a namespace's content,
//! a CRD's instances, the pods that use a protected claim. An object is *stuck* when nothing
//! in flight will finish it (a controller down or missing, a failing API group, a reference
//! the GC never acts on), or when something it waits on is stuck.
//!
//! # Guarantees
//! Pure: the same graph, liveness and `now` give the same diagnosis. No recursion.

pub mod finding;
mod owners;
pub mod remedy;
pub mod shared;
pub mod step;

use std::collections::{HashMap, HashSet, VecDeque};

use k8s_openapi::jiff::Timestamp;

use crate::controllers::{ControllerState, FinalizerOwner, Liveness};
use crate::graph::{Graph, NodeId};

pub use finding::{Finding, FindingCode, Related, Severity};
pub use owners::{GcVerdict, owner_findings};
pub use shared::Shared;
pub use step::{Command, Connection, Reach, Step};

/// A GC finalizer older than this with nothing left to wait for means the GC missed it.
const GC_GRACE_SECONDS: i64 = 60;

/// One remaining finalizer of the target.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FinalizerReport {
    pub name: String,
    pub owner: FinalizerOwner,
}

/// The answer of `why-stuck` (contract §4.3).
#[derive(Clone, Debug)]
pub struct Diagnosis {
    pub object: NodeId,
    pub deletion_timestamp: Option<Timestamp>,
    pub deleting_for_seconds: Option<i64>,
    pub stuck: bool,
    pub finalizers: Vec<FinalizerReport>,
    pub findings: Vec<Finding>,
    /// Objects that are stuck on their own account (not merely waiting on another).
    pub root_causes: Vec<NodeId>,
    /// What the GC does with the target given its owner references.
    pub gc_verdict: GcVerdict,
    pub incomplete: Vec<String>,
}

/// `Kind namespace/name` or `Kind name`, for messages.
pub fn describe(g: &Graph, x: NodeId) -> String {
    let id = &g.identity(x);
    match &id.namespace {
        Some(ns) => format!("{} {ns}/{}", id.kind, id.name),
        None => format!("{} {}", id.kind, id.name),
    }
}

pub fn why_stuck(g: &Graph, live: &Liveness, target: NodeId) -> Diagnosis {
    why_stuck_sharing(g, live, &Shared::default(), target)
}

/// [`why_stuck`], sharing per-namespace work with the other answers given the same `shared`
/// (`why-stuck --all`); the answer is the same.
pub fn why_stuck_sharing(g: &Graph, live: &Liveness, shared: &Shared, target: NodeId) -> Diagnosis {
    let now = live.now();
    let mut e = Explainer {
        g,
        live,
        shared,
        now,
        target,
        findings: Vec::new(),
        finalizers: Vec::new(),
        waits_on: HashMap::new(),
        local_stuck: Vec::new(),
        seen: HashSet::from([target]),
        queue: VecDeque::from([target]),
    };
    while let Some(x) = e.queue.pop_front() {
        e.explain(x);
    }
    if let Some(cycle) = crate::graph::owner_cycle_through(g, target) {
        e.findings.push(Finding {
            code: FindingCode::OwnerReferenceCycle,
            severity: Severity::Info,
            object: target,
            related: cycle.iter().filter(|&&c| c != target).map(|&c| Related::Node(c)).collect(),
            message: format!(
                "owner references form a cycle through {} object(s); a foreground deletion of one of them ends (the GC unblocks the cycle), but none of them is ever collected while all exist",
                cycle.len()
            ),
            remedy: Vec::new(),
        });
    }
    let stuck_set = e.propagate_stuck();
    for f in &mut e.findings {
        step::rank(&mut f.remedy);
    }
    let o = g.object(target);
    let dt = o.and_then(|o| o.deletion_timestamp);
    let mut root_causes: Vec<NodeId> = e.local_stuck.clone();
    root_causes.sort_unstable();
    root_causes.dedup();
    Diagnosis {
        object: target,
        deletion_timestamp: dt,
        deleting_for_seconds: dt.map(|t| (now.as_second() - t.as_second()).max(0)),
        stuck: stuck_set.contains(&target),
        finalizers: e.finalizers,
        findings: e.findings,
        root_causes,
        gc_verdict: owner_findings(g, target).1,
        incomplete: g.snapshot.incomplete.clone(),
    }
}

struct Explainer<'a, 'g> {
    g: &'a Graph,
    live: &'a Liveness<'g>,
    shared: &'a Shared,
    now: Timestamp,
    target: NodeId,
    findings: Vec<Finding>,
    finalizers: Vec<FinalizerReport>,
    /// x → what x waits for before it can go.
    waits_on: HashMap<NodeId, Vec<NodeId>>,
    local_stuck: Vec<NodeId>,
    seen: HashSet<NodeId>,
    queue: VecDeque<NodeId>,
}

impl Explainer<'_, '_> {
    fn wait_for(&mut self, x: NodeId, on: NodeId) {
        self.waits_on.entry(x).or_default().push(on);
        if self.seen.insert(on) {
            self.queue.push_back(on);
        }
    }

    fn finding(
        &mut self,
        code: FindingCode,
        severity: Severity,
        object: NodeId,
        related: Vec<Related>,
        message: String,
        remedy: Vec<Step>,
    ) {
        self.findings.push(Finding { code, severity, object, related, message, remedy });
    }

    fn explain(&mut self, x: NodeId) {
        let g = self.g;
        let Some(o) = g.object(x) else { return };
        let (owner_problems, verdict) = owner_findings(g, x);
        self.findings.extend(owner_problems);
        if !o.is_deleting() {
            if x == self.target {
                self.finding(
                    FindingCode::NotBeingDeleted,
                    Severity::Info,
                    x,
                    Vec::new(),
                    format!("{} has no deletionTimestamp: nothing is deleting it", describe(g, x)),
                    Vec::new(),
                );
            } else if verdict == GcVerdict::NeverActedOn && self.waited_on_by_gc(x) {
                // A blocking dependent the GC can never delete holds its owner forever.
                self.local_stuck.push(x);
            }
            return;
        }
        for f in &o.finalizers {
            self.explain_finalizer(x, f);
        }
        if o.kind == "Namespace" && o.group().is_empty() {
            self.explain_namespace(x);
        }
        if o.kind == "Pod" && o.group().is_empty() {
            self.explain_terminating_pod(x);
        }
    }

    /// Whether some foreground owner waits for x through a blocking reference.
    fn waited_on_by_gc(&self, x: NodeId) -> bool {
        self.waits_on.iter().any(|(owner, deps)| deps.contains(&x) && self.g.refs_to(x, *owner).any(|r| r.blocks()))
    }

    fn explain_finalizer(&mut self, x: NodeId, f: &str) {
        let g = self.g;
        let owner = self.live.finalizer(x, f);
        if x == self.target {
            self.finalizers.push(FinalizerReport { name: f.to_string(), owner: owner.clone() });
        }
        let who = owner.removed_by.clone().unwrap_or_else(|| format!("the controller of {f}"));
        if owner.controller != ControllerState::Alive {
            self.controller_not_alive(x, f, &owner, &who);
            return;
        }
        let age = self.deleting_for(x);
        match f {
            "foregroundDeletion" => {
                let blocking: Vec<NodeId> = g.blocking_dependents(x).collect();
                if blocking.is_empty() {
                    self.gc_finalizer_idle(x, f, age);
                }
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
                    );
                    self.wait_for(x, d);
                }
            }
            "orphan" => self.gc_finalizer_idle(x, f, age),
            "customresourcecleanup.apiextensions.k8s.io" => self.explain_crd_cleanup(x, &owner),
            "kubernetes.io/pvc-protection" => self.explain_pvc_protection(x, &owner),
            "kubernetes.io/pv-protection" => {
                let o = g.object(x).expect("explained objects are observed");
                let phase = o.str_field("/status/phase").unwrap_or("");
                self.pending(
                    x,
                    &owner,
                    Vec::new(),
                    format!("{f} is removed by {who} once the volume is no longer bound (phase {phase})"),
                );
            }
            _ => self.pending(x, &owner, Vec::new(), format!("{f} is removed by {who}, which is alive")),
        }
    }

    fn pending(&mut self, x: NodeId, owner: &FinalizerOwner, related: Vec<Related>, message: String) {
        self.finding(
            FindingCode::FinalizerPending,
            Severity::Info,
            x,
            related,
            format!("{message} ({})", owner.evidence.join("; ")),
            Vec::new(),
        );
    }

    fn controller_not_alive(&mut self, x: NodeId, f: &str, owner: &FinalizerOwner, who: &str) {
        let g = self.g;
        let (code, severity, stuck) = match owner.controller {
            ControllerState::Down => (FindingCode::FinalizerControllerDown, Severity::Error, true),
            ControllerState::Missing => (FindingCode::FinalizerControllerMissing, Severity::Error, true),
            _ => (FindingCode::FinalizerControllerUnknown, Severity::Warning, false),
        };
        let state = match owner.controller {
            ControllerState::Down => "exists but is not running",
            ControllerState::Missing => "was not found (uninstalled?)",
            _ => "could not be judged",
        };
        let mut remedies = remedy::restore_controller(owner, f);
        if let Some(p) = remedy::remove_finalizer(g, x, f) {
            remedies.push(Step::run(
                Reach::Destructive,
                format!(
                    "Last resort, only once whatever {f} guards has been cleaned up by hand (what its controller manages outside the cluster is otherwise stranded): remove the finalizer."
                ),
                p,
            ));
        }
        // the decisive evidence is the liveness verdict, which comes last
        let why = owner.evidence.last().map(|e| format!(": {e}")).unwrap_or_default();
        self.finding(
            code,
            severity,
            x,
            Vec::new(),
            format!("{} keeps {f}; it is removed by {who}, which {state}{why}", describe(g, x)),
            remedies,
        );
        if stuck {
            self.local_stuck.push(x);
        }
    }

    fn gc_finalizer_idle(&mut self, x: NodeId, f: &str, age: i64) {
        let g = self.g;
        if age <= GC_GRACE_SECONDS {
            self.finding(
                FindingCode::FinalizerPending,
                Severity::Info,
                x,
                Vec::new(),
                format!("{f} has nothing left to wait for; the garbage collector removes it momentarily"),
                Vec::new(),
            );
            return;
        }
        let what = if f == "orphan" {
            "its dependents were orphaned or never existed"
        } else {
            "no blocking dependent remains"
        };
        self.finding(
            FindingCode::GarbageCollectorStalled,
            Severity::Error,
            x,
            Vec::new(),
            format!(
                "{f} is still on {} after {}s although {what}: the garbage collector missed it (it has no periodic resync; kubernetes#77081) or is not running",
                describe(g, x),
                age
            ),
            vec![
                Step::advice(
                    Reach::Inspect,
                    "Check kube-controller-manager's garbage collector (its logs, 'unable to sync caches for garbage collector').",
                ),
                Step::run(
                    Reach::Disrupt,
                    format!("Re-issue the delete with Background propagation; the API server drops {f}."),
                    remedy::redelete_background(g, x),
                ),
            ],
        );
        self.local_stuck.push(x);
    }

    fn explain_crd_cleanup(&mut self, x: NodeId, owner: &FinalizerOwner) {
        let g = self.g;
        let Some(crd) = g.object(x) else { return };
        let group = crd.str_field("/spec/group").unwrap_or("");
        let kind = crd.str_field("/spec/names/kind").unwrap_or("");
        let instances: Vec<NodeId> = g.of_kind(group, kind).to_vec();
        self.pending(
            x,
            owner,
            instances.iter().map(|&i| Related::Node(i)).collect(),
            format!("the CRD finalizer deletes every {kind} first; {} instance(s) remain", instances.len()),
        );
        for i in instances {
            self.wait_for(x, i);
        }
    }

    fn explain_pvc_protection(&mut self, x: NodeId, owner: &FinalizerOwner) {
        let g = self.g;
        let Some(pvc) = g.object(x) else { return };
        let users: Vec<NodeId> = self.shared.claim_users(g, pvc.namespace.as_deref(), &pvc.name);
        self.pending(
            x,
            owner,
            users.iter().map(|&u| Related::Node(u)).collect(),
            format!("the claim is released once no pod uses it; {} pod(s) still do", users.len()),
        );
        for u in users {
            if g.object(u).is_some_and(|p| !p.is_deleting()) {
                // a running pod that nobody deletes keeps the claim forever
                self.local_stuck.push(x);
            }
            self.wait_for(x, u);
        }
    }

    fn explain_namespace(&mut self, x: NodeId) {
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
                let who = owner.removed_by.clone().unwrap_or_else(|| format!("the controller of {f}"));
                self.controller_not_alive(x, f, &owner, &who);
            }
        }
        if !spec_finalizers.iter().any(|f| f == "kubernetes") {
            return;
        }
        // Discovery: the namespace controller keeps `kubernetes` while any group fails.
        let failing: Vec<NodeId> = g
            .of_kind("apiregistration.k8s.io", "APIService")
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
                let svc = o
                    .str_field("/spec/service/name")
                    .map(|n| format!("{}/{n}", o.str_field("/spec/service/namespace").unwrap_or("")))
                    .unwrap_or_else(|| "its backend".into());
                remedies.push(Step::advice(
                    Reach::Restore,
                    format!("Restore the API server behind APIService {} (service {svc}).", o.name),
                ));
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
        // Content: everything still in the namespace. Pods go first (§5.2).
        let content: Vec<NodeId> = g.in_namespace(Some(ns.name.as_str())).map(|(id, _)| id).collect();
        let pods_left = content.iter().any(|&c| g.identity(c).kind == "Pod" && g.identity(c).group().is_empty());
        for c in content {
            let o = g.object(c).expect("observed");
            let state = if o.is_deleting() {
                format!("is being deleted and keeps finalizers [{}]", o.finalizers.join(", "))
            } else if pods_left && o.kind != "Pod" {
                "is not deleted yet: the namespace controller deletes pods first".to_string()
            } else {
                "has not been deleted yet".to_string()
            };
            self.finding(
                FindingCode::NamespaceContentRemaining,
                Severity::Warning,
                c,
                vec![Related::Node(x)],
                format!("terminating namespace {} still holds {}, which {state}", ns.name, describe(g, c)),
                Vec::new(),
            );
            self.wait_for(x, c);
        }
    }

    fn explain_terminating_pod(&mut self, x: NodeId) {
        let g = self.g;
        let Some(pod) = g.object(x) else { return };
        if pod.deletion_grace_period_seconds.unwrap_or(0) == 0 {
            return;
        }
        let Some(node_name) = pod.str_field("/spec/nodeName") else { return };
        let node = g.find("", "Node", None, node_name).and_then(|n| g.object(n));
        let problem = match node {
            None => Some(format!("its node {node_name} no longer exists")),
            Some(n) => match n.condition("Ready") {
                Some(c) if c.is_true() => None,
                Some(c) => Some(format!("its node {node_name} is NotReady ({} {})", c.reason, c.message)),
                None => None,
            },
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
                vec![
                    Step::advice(Reach::Restore, format!("Bring the node {node_name} back; its kubelet then confirms the deletion.")),
                    Step::run(
                        Reach::Destructive,
                        "Once the node is certainly gone (its containers may still run if it is only unreachable), force the deletion.",
                        remedy::on_object(g, x, ["delete"]).flag("--grace-period", "0").switch("--force"),
                    ),
                ],
            );
            self.local_stuck.push(x);
        }
    }

    fn deleting_for(&self, x: NodeId) -> i64 {
        self.g.object(x).and_then(|o| o.deletion_timestamp).map(|t| self.now.as_second() - t.as_second()).unwrap_or(0)
    }

    /// Stuck = stuck on its own account, or waiting on something stuck (reverse BFS).
    fn propagate_stuck(&self) -> HashSet<NodeId> {
        let mut waited_by: HashMap<NodeId, Vec<NodeId>> = HashMap::new();
        for (&x, ons) in &self.waits_on {
            for &on in ons {
                waited_by.entry(on).or_default().push(x);
            }
        }
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

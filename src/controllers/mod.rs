//! Who removes a finalizer, and whether it is running (gc-semantics §8).
//!
//! [`Liveness::finalizer`] answers for one finalizer on one object: the component or workload
//! that removes it, whether that controller is Alive, Down, Missing or Unknown, and the
//! evidence. The planner and `why-stuck` share it, so both assume the same thing.
//!
//! The built-in finalizers are their control-plane components' (`builtin`); CSI finalizers are
//! judged per driver (`csi`). Every other finalizer is attributed by evidence, strongest first
//! (contract §4.3.3; `attribute`, one pass per rung, each an evidence line):
//! 1. the field manager that added the finalizer (`managed_fields`), resolved to a workload; a
//!    person's client means a person added it; GitOps appliers and libraries' default managers
//!    are clients, never controllers;
//! 2. the component reporting about the object in its Events (`events`);
//! 3. a leader-election Lease of the finalizer's domain, or held by a pod of a workload RBAC
//!    lets update the resource, whatever its name (`lease`);
//! 4. a workload named by the finalizer or the object's kind (`naming`), or installed with the
//!    CRD that serves the kind, together with RBAC on the resource or its `/finalizers`
//!    (`domain`, `rbac`, `workload`);
//! 5. permission alone, a name or product prefix alone, or an operand tied once: never Alive.
//!
//! Every rung is read before deciding. Candidates that tie at a rung are Alive when every one
//! runs, Down when none does, Unknown when they disagree. Finalizers whose controller a managed control plane runs
//! outside the cluster are Unknown when nothing is found (`managed`).
//!
//! Liveness: Alive (a ready pod, or a lease renewed within its duration); Down (scaled to zero,
//! no ready replica, crash-looping, or a stale lease, with the time it was last renewed); Missing
//! (no workload or lease found: the controller was uninstalled); Unknown (the sources a search
//! needs were unreadable or absent). Never dead from age alone.
//!
//! All indexes are built once in [`Liveness::new`]; [`Liveness::finalizer`] only looks up.

mod attribute;
mod builtin;
mod csi;
mod domain;
mod events;
mod lease;
mod managed;
mod managed_fields;
mod naming;
mod rbac;
mod visibility;
mod workload;

#[cfg(test)]
pub(crate) mod tests;

use std::collections::HashMap;
use std::sync::Mutex;

use k8s_openapi::jiff::Timestamp;

use crate::graph::{Graph, NodeId};

pub use builtin::{BuiltinOwner, Component, builtin_owner};
pub use domain::finalizer_domain;
pub use lease::lease_state;
pub use managed_fields::{ManagerKind, classify as classify_manager};
pub use workload::{Controller, pods_of, scaled_to_zero};

/// Whether the controller that removes a finalizer is running.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ControllerState {
    /// Ready pods, or a lease renewed within its duration, of a controller tied to the finalizer
    /// by more than permission; or a control-plane component assumed alive because the control
    /// plane is not visible.
    Alive,
    /// The controller exists but is not running (no ready replica, scaled to zero, crash loop,
    /// stale lease).
    Down,
    /// Nothing that could remove the finalizer was found: the controller was uninstalled.
    Missing,
    /// Not enough visibility to tell.
    Unknown,
}

impl ControllerState {
    /// The contract's name: `Alive`, `Down`, `Missing` or `Unknown`.
    pub fn as_str(self) -> &'static str {
        match self {
            ControllerState::Alive => "Alive",
            ControllerState::Down => "Down",
            ControllerState::Missing => "Missing",
            ControllerState::Unknown => "Unknown",
        }
    }
}

/// The answer for one finalizer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FinalizerOwner {
    /// The component or workload that removes it (`kube-controller-manager (garbage
    /// collector)`, `Deployment site-system/site-operator`), if known.
    pub removed_by: Option<String>,
    /// Whether that controller runs.
    pub controller: ControllerState,
    /// What was found, in the order it was looked for: attribution first, then liveness.
    pub evidence: Vec<String>,
    /// The workload identified as the controller, when one was found.
    pub workload: Option<Controller>,
    /// When a Down controller was last seen working (its lease's last renewal, or the time its
    /// pods stopped being ready), where known.
    pub since: Option<Timestamp>,
    /// Only weak evidence ties `workload` to the finalizer — permission to update the resource
    /// (RBAC) alone, a name or a product-name prefix alone, or being an operand — or candidates
    /// so tied tie with each other: never Alive, and never reason enough to call an old
    /// deletion in progress (contract §4.3.3, rung 5).
    pub by_permission_only: bool,
    /// The person's client (field manager, `kubectl-edit`) that added the finalizer, when
    /// that is what decided a Missing verdict: a person added it, and no controller will
    /// remove it.
    pub added_by_person: Option<String>,
}

/// Controller attribution over one graph, at one instant.
pub struct Liveness<'g> {
    graph: &'g Graph,
    now: Timestamp,
    visibility: visibility::Visibility,
    crds: domain::Crds,
    rbac: rbac::Rbac,
    workloads: workload::Workloads<'g>,
    leases: lease::Leases,
    control_plane: builtin::ControlPlanePods,
    /// Who reports about each object in its Events: indexed on first use (only finalizers no
    /// built-in controller removes read it).
    reporters: std::sync::OnceLock<events::Reporters>,
    /// Answers by finalizer, the managedFields entries that set it and the object's API group:
    /// nothing else about the object changes the answer, so the 37 objects of a namespace that share one finalizer
    /// cost one search.
    memo: Mutex<HashMap<(String, String), FinalizerOwner>>,
}

impl<'g> Liveness<'g> {
    /// Indexes the graph once: CRDs, RBAC grants, workloads and their pods, leases.
    pub fn new(graph: &'g Graph, now: Timestamp) -> Liveness<'g> {
        let workloads = workload::Workloads::new(graph);
        let leases = lease::Leases::new(graph, &workloads);
        Liveness {
            graph,
            now,
            visibility: visibility::Visibility::new(graph),
            crds: domain::Crds::new(graph),
            rbac: rbac::Rbac::new(graph),
            workloads,
            leases,
            control_plane: builtin::ControlPlanePods::new(graph),
            reporters: std::sync::OnceLock::new(),
            memo: Mutex::new(HashMap::new()),
        }
    }

    /// The analysis's "now": `--now`, else the snapshot's capture time, else the clock.
    pub fn now(&self) -> Timestamp {
        self.now
    }

    /// The components reporting about objects in their Events.
    fn reporters(&self) -> &events::Reporters {
        self.reporters.get_or_init(|| events::Reporters::new(self.graph))
    }

    /// Who removes `finalizer` from `object`, and whether it is alive.
    pub fn finalizer(&self, object: NodeId, finalizer: &str) -> FinalizerOwner {
        if csi::is_csi(finalizer) {
            // per driver, which the object names: memoised by finalizer and driver
            let key = (finalizer.to_string(), format!("csi\0{}", csi::driver_key(self, object, finalizer)));
            if let Some(hit) = self.memo.lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
                return hit.clone();
            }
            let answer = csi::csi_owner(self, object, finalizer);
            self.memo.lock().unwrap_or_else(|e| e.into_inner()).insert(key, answer.clone());
            return answer;
        }
        if let Some(b) = builtin_owner(finalizer) {
            let s =
                builtin::component_liveness(self.graph, &self.control_plane, &self.visibility, b.component, self.now);
            let mut evidence = vec![format!("{finalizer} is a built-in finalizer removed by {}", b.removed_by)];
            evidence.extend(s.evidence);
            return FinalizerOwner {
                removed_by: Some(b.removed_by.to_string()),
                controller: s.state,
                evidence,
                workload: None,
                since: s.since,
                by_permission_only: false,
                added_by_person: None,
            };
        }
        // a manager's write since the deletion began is evidence of life (`attribute::adder`)
        let requested = self.graph.object(object).and_then(crate::snapshot::Object::deletion_requested_at);
        let managers: String = self
            .graph
            .object(object)
            .into_iter()
            .flat_map(|o| managed_fields::managers_of(o, finalizer))
            .map(|m| {
                let since = m.time.zip(requested).is_some_and(|(t, d)| t >= d);
                format!("{}\0{}\0{:?}\0{since}\0", m.manager, m.operation, m.time)
            })
            .collect();
        // the object's API group and kind name the controller too (`attribute`, `naming`), and
        // the components reporting about it in its Events
        let (group, kind) = self.graph.object(object).map_or(("", ""), |o| (o.group(), o.kind.as_str()));
        let reporters: String = self
            .graph
            .object(object)
            .into_iter()
            .flat_map(|o| self.reporters().of(&o.uid))
            .map(|r| format!("{}\0{:?}\0", r.component, r.instance))
            .collect();
        let key = (finalizer.to_string(), format!("{managers}\0{group}\0{kind}\0{reporters}"));
        if let Some(hit) = self.memo.lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
            return hit.clone();
        }
        let answer = attribute::attribute(self, object, finalizer);
        self.memo.lock().unwrap_or_else(|e| e.into_inner()).insert(key, answer.clone());
        answer
    }

    /// Who runs the controller of `finalizer` on `object` outside the cluster, when a managed
    /// control plane is known to (recognised by the finalizer's domain or CSI driver, or a
    /// cloud-controller-manager finalizer on a provider's nodes): the answer then presumes it
    /// running for `--stuck-after` (contract §4.3). `None` for everything else.
    pub fn out_of_sight(&self, object: NodeId, finalizer: &str) -> Option<&'static str> {
        if csi::is_csi(finalizer) {
            return csi::managed_driver(self, object, finalizer);
        }
        if let Some(b) = builtin_owner(finalizer) {
            return (b.component == Component::CloudControllerManager)
                .then(|| managed::managed_cluster(self.graph))
                .flatten()
                .map(|_| "the provider runs cloud-controller-manager in its control plane");
        }
        finalizer_domain(finalizer).and_then(managed::managed_controller)
    }
}

//! Leader-election Leases: which controller holds one (kubebuilder names them `<id>.<domain>`,
//! controller-runtime's holder identity is `<pod name>_<uuid>`), and whether it is being renewed.

use std::collections::HashMap;

use k8s_openapi::jiff::Timestamp;

use super::ControllerState;
use super::domain::domains_match;
use super::workload::{Workloads, describe};
use crate::graph::{Graph, NodeId};
use crate::snapshot::Object;

/// A lease's freshness at `now`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LeaseState {
    pub state: ControllerState,
    pub evidence: String,
    /// The last renewal, when the lease is stale.
    pub since: Option<Timestamp>,
}

/// Alive when the lease was renewed within its duration, else Down since the renewal.
pub fn lease_status(lease: &Object, now: Timestamp) -> LeaseState {
    let holder = lease.str_field("/spec/holderIdentity").filter(|h| !h.is_empty());
    let duration = lease.field("/spec/leaseDurationSeconds").and_then(|v| v.as_i64()).unwrap_or(15);
    let renew: Option<Timestamp> = lease
        .str_field("/spec/renewTime")
        .or_else(|| lease.str_field("/spec/acquireTime"))
        .and_then(|s| s.parse().ok());
    let ns = lease.namespace_str();
    let held = match holder {
        Some(h) => format!("held by {h}"),
        None => "held by nobody".to_string(),
    };
    match renew {
        Some(t) => {
            let age = now.as_second() - t.as_second();
            if age <= duration && holder.is_some() {
                LeaseState {
                    state: ControllerState::Alive,
                    evidence: format!(
                        "lease {ns}/{} {held}, renewed {} ago (duration {})",
                        lease.name,
                        crate::age::human(age),
                        crate::age::human(duration)
                    ),
                    since: None,
                }
            } else {
                LeaseState {
                    state: ControllerState::Down,
                    evidence: format!(
                        "lease {ns}/{} {held} was last renewed at {t} ({} ago, duration {})",
                        lease.name,
                        crate::age::human(age),
                        crate::age::human(duration)
                    ),
                    since: Some(t),
                }
            }
        }
        None => LeaseState {
            state: ControllerState::Unknown,
            evidence: format!("lease {ns}/{} {held} has no renewTime", lease.name),
            since: None,
        },
    }
}

/// `lease_status` as a state and its evidence.
pub fn lease_state(lease: &Object, now: Timestamp) -> (ControllerState, Vec<String>) {
    let s = lease_status(lease, now);
    (s.state, vec![s.evidence])
}

/// Leases (node heartbeats in kube-node-lease excluded), and the workload each one's holder
/// belongs to where it can be told.
#[derive(Default)]
pub struct Leases {
    all: Vec<NodeId>,
    holder_workload: HashMap<NodeId, (NodeId, String)>,
    of_workload: HashMap<NodeId, Vec<NodeId>>,
}

impl Leases {
    pub fn new(g: &Graph, w: &Workloads) -> Leases {
        let mut l = Leases::default();
        for &id in g.of_kind("coordination.k8s.io", "Lease") {
            let Some(o) = g.object(id) else { continue };
            if o.namespace_str() == crate::names::NODE_LEASE_NAMESPACE {
                continue;
            }
            l.all.push(id);
            let Some(holder) = o.str_field("/spec/holderIdentity").filter(|h| !h.is_empty()) else { continue };
            if let Some((wl, how)) = holder_workload(g, w, o.namespace_str(), holder) {
                l.holder_workload.insert(id, (wl, how));
                l.of_workload.entry(wl).or_default().push(id);
            }
        }
        l
    }

    /// Leases named after one of `domains`: `<id>.<domain>`, or a parent or sub-domain of it.
    pub fn matching(&self, g: &Graph, domains: &[&str]) -> Vec<NodeId> {
        self.all
            .iter()
            .copied()
            .filter(|&id| {
                let Some(o) = g.object(id) else { return false };
                let suffix = o.name.split_once('.').map(|(_, s)| s);
                domains.iter().any(|d| domains_match(&o.name, d) || suffix.is_some_and(|s| domains_match(s, d)))
            })
            .collect()
    }

    /// Leases whose name `matches` (node heartbeats aside).
    pub fn named(&self, g: &Graph, matches: impl Fn(&str) -> bool) -> Vec<NodeId> {
        self.all.iter().copied().filter(|&id| g.object(id).is_some_and(|o| matches(&o.name))).collect()
    }

    /// The workload whose pod holds the lease, and how that was told.
    pub fn holder_workload(&self, lease: NodeId) -> Option<(NodeId, &str)> {
        self.holder_workload.get(&lease).map(|(w, how)| (*w, how.as_str()))
    }

    /// Leases held by a pod of `workload`.
    pub fn of_workload(&self, workload: NodeId) -> &[NodeId] {
        self.of_workload.get(&workload).map_or(&[], |v| v.as_slice())
    }
}

/// The workload a holder identity points at: the pod `<holder>` (before `_`) in the lease's
/// namespace, else the ReplicaSet, StatefulSet, DaemonSet or Deployment its name is derived from
/// (the pod that held it may be long gone).
fn holder_workload(g: &Graph, w: &Workloads, ns: &str, holder: &str) -> Option<(NodeId, String)> {
    let pod_name = holder.split_once('_').map_or(holder, |(p, _)| p);
    if let Some(pod) = g.find("", "Pod", Some(ns), pod_name)
        && let Some(wl) = w.workload_of_pod(pod)
    {
        let what = g.object(wl).map(describe).unwrap_or_default();
        let how = if wl == pod { format!("Pod {ns}/{pod_name}") } else { format!("Pod {pod_name} of {what}") };
        return Some((wl, how));
    }
    let strip = |s: &str| s.rsplit_once('-').map(|(a, _)| a.to_string());
    let one = strip(pod_name)?;
    if let Some(rs) = g.find("apps", "ReplicaSet", Some(ns), &one) {
        let rs_obj = g.object(rs)?;
        let dep = rs_obj
            .owner_references
            .iter()
            .find(|r| r.is_controller() && r.kind == "Deployment")
            .and_then(|r| g.by_uid(&r.uid))
            .filter(|&d| g.object(d).is_some());
        let wl = dep.unwrap_or(rs);
        let how = match dep {
            Some(d) => {
                format!("no Pod {pod_name} remains; its name points at ReplicaSet {one} of {}", describe(g.object(d)?))
            }
            None => format!("no Pod {pod_name} remains; its name points at ReplicaSet {ns}/{one}"),
        };
        return Some((wl, how));
    }
    for kind in ["StatefulSet", "DaemonSet"] {
        if let Some(wl) = g.find("apps", kind, Some(ns), &one) {
            return Some((wl, format!("no Pod {pod_name} remains; its name points at {kind} {ns}/{one}")));
        }
    }
    let two = strip(&one)?;
    let dep = g.find("apps", "Deployment", Some(ns), &two)?;
    Some((dep, format!("no Pod {pod_name} remains; its name points at Deployment {ns}/{two}")))
}

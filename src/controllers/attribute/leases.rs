//! Rung 3: leader-election Leases. A lease named after the finalizer's domain (kubebuilder's
//! `<id>.<domain>`) ties the workload whose pod holds it; its holder found nowhere leaves the
//! lease itself as the controller's trace. A lease held by a pod of a workload that RBAC lets
//! update the resource ties it too (`tenant-operator-leader`: a leader-elected controller
//! with the permission), unless the lease names another domain, or the finalizer names a
//! component that no workload bears (then the holder is not it).

use std::collections::BTreeMap;

use super::named::foreign_lease;
use super::{Pass, Search, Tie, Ties};
use crate::graph::NodeId;

#[derive(Default, Debug)]
pub(super) struct Leased {
    pub pass: Pass,
    /// Leases of the domain whose holder is no Pod or workload in the snapshot.
    pub unheld: Vec<NodeId>,
}

pub(super) fn pass(s: &Search<'_>, cands: &BTreeMap<NodeId, Ties>, absent_component: Option<&str>) -> Leased {
    let l = s.l;
    let g = l.graph;
    let mut out = Leased::default();
    let domain = s.domain.unwrap_or("");
    let groups: Vec<&str> = s.groups.iter().map(String::as_str).collect();
    let leases = l.leases.matching(g, &groups);
    for &lease in &leases {
        let Some(lo) = g.object(lease) else { continue };
        let holder = lo.str_field("/spec/holderIdentity").unwrap_or("nobody");
        let (ns, name) = (lo.namespace_str(), &lo.name);
        match l.leases.holder_workload(lease) {
            Some((w, how)) => {
                out.pass
                    .evidence
                    .push(format!("leader-election lease {ns}/{name} matches {domain}; holder {holder}: {how}"));
                out.pass.tie(w, Tie::DomainLease);
            }
            None => {
                out.pass.evidence.push(format!(
                    "leader-election lease {ns}/{name} matches {domain}; its holder {holder} is no Pod or workload in the snapshot"
                ));
                out.unheld.push(lease);
            }
        }
    }
    if leases.is_empty() && s.domain.is_some() {
        out.pass.evidence.push(format!("no leader-election lease is named after {domain}"));
    }
    for (&w, c) in cands {
        if !c.permission || c.domain_lease || out.pass.ties.iter().any(|&(x, _)| x == w) {
            continue;
        }
        let Some(&lease) = l.leases.of_workload(w).first() else { continue };
        let (Some(lo), Some(wo)) = (g.object(lease), g.object(w)) else { continue };
        let what = super::super::workload::describe(wo);
        if let Some(other) = foreign_lease(s, w) {
            out.pass.evidence.push(format!("{what} holds a leader lease, but its {other}: not this finalizer's"));
            continue;
        }
        if let Some(c) = absent_component {
            out.pass.evidence.push(format!(
                "{what} holds leader lease {}/{}, but the finalizer names the component {c}, which it does not bear",
                lo.namespace_str(),
                lo.name
            ));
            continue;
        }
        out.pass.evidence.push(format!(
            "{what}, which RBAC lets update the resource, holds leader-election lease {}/{}: a leader-elected controller with that permission",
            lo.namespace_str(),
            lo.name
        ));
        out.pass.tie(w, Tie::HeldLease);
    }
    out
}

//! Attribution of a finalizer that no built-in controller removes: managedFields, then the
//! domain → CRD → RBAC → ServiceAccount → Pod → workload chain, then leader-election Leases;
//! then the liveness of what was found.

use std::collections::BTreeMap;

use super::domain::{finalizer_domain, kubernetes_owned};
use super::lease::lease_status;
use super::managed_fields::{self, ManagerKind};
use super::workload::{Controller, SaKey, describe, workload_state};
use super::{ControllerState, FinalizerOwner, Liveness};
use crate::graph::NodeId;

/// A workload that could be the controller, with how strongly the evidence points at it.
#[derive(Default)]
struct Candidate {
    score: u32,
}

// How much each kind of evidence weighs when several workloads are candidates.
const MANAGER_NAME: u32 = 4;
const MANAGER_CONTAINER: u32 = 2;
const RBAC: u32 = 3;
const RBAC_FINALIZERS: u32 = 1;
const LEASE_HOLDER: u32 = 2;

pub(super) fn attribute(l: &Liveness<'_>, object: NodeId, finalizer: &str) -> FinalizerOwner {
    let g = l.graph;
    let obj = g.object(object);
    let domain = finalizer_domain(finalizer);
    let mut evidence = Vec::new();
    let mut cands: BTreeMap<NodeId, Candidate> = BTreeMap::new();

    // 1. managedFields: who added it.
    let mut managers: Vec<&str> = Vec::new();
    for m in obj.into_iter().flat_map(|o| managed_fields::managers_of(o, finalizer)) {
        let who = managed_fields::describe(m);
        match managed_fields::classify(&m.manager) {
            ManagerKind::Client => evidence.push(format!(
                "managedFields: {who} added it; a client applies finalizers from manifests and does not remove them"
            )),
            ManagerKind::ControlPlane => {
                evidence.push(format!("managedFields: {who} (a control-plane component) added it"))
            }
            ManagerKind::Controller => {
                let found = l.workloads.named_or_running(&m.manager);
                if found.is_empty() {
                    evidence.push(format!(
                        "managedFields: {who} added it; no workload or container of that name is in the snapshot"
                    ));
                } else {
                    let names: Vec<String> = found.iter().take(3).filter_map(|&w| g.object(w).map(describe)).collect();
                    evidence.push(format!("managedFields: {who} added it; that name matches {}", names.join(", ")));
                }
                managers.push(&m.manager);
            }
        }
    }

    // 2. domain → CRD groups → RBAC → ServiceAccounts → Pods → workloads.
    let mut idle_accounts: Vec<SaKey> = Vec::new();
    let mut groups: Vec<&str> = Vec::new();
    if let Some(d) = domain {
        groups.push(d);
        let crds: Vec<_> = l.crds.matching(d).collect();
        if crds.is_empty() {
            evidence.push(format!("domain {d} matches no CustomResourceDefinition group"));
        } else {
            let names: Vec<String> = crds.iter().map(|c| format!("{} (group {})", c.name, c.group)).collect();
            evidence.push(format!("domain {d} matches CRD {}", names.join(", ")));
        }
        for c in &crds {
            if !groups.contains(&c.group.as_str()) {
                groups.push(&c.group);
            }
        }
        let grants = l.rbac.grants_for(d, &l.crds);
        if grants.is_empty() {
            evidence.push(format!(
                "no Role or ClusterRole (wildcard admin roles aside) grants update or patch on {} to a ServiceAccount",
                groups.join(", ")
            ));
        }
        for sg in &grants {
            evidence.extend(sg.evidence.iter().cloned());
            let (ns, name) = &sg.sa;
            let mut found: Vec<(NodeId, Option<&str>)> = Vec::new();
            for p in l.workloads.pods_running_as(&sg.sa) {
                if let Some(w) = l.workloads.workload_of_pod(p)
                    && !found.iter().any(|(x, _)| *x == w)
                {
                    found.push((w, g.object(p).map(|o| o.name.as_str())));
                }
            }
            for w in l.workloads.templated_as(&sg.sa) {
                if !found.iter().any(|(x, _)| *x == w) {
                    found.push((w, None));
                }
            }
            if found.is_empty() {
                evidence.push(format!("no Pod or workload runs as ServiceAccount {ns}/{name}"));
                idle_accounts.push(sg.sa.clone());
            }
            for (w, pod) in found.iter().take(3) {
                let Some(wo) = g.object(*w) else { continue };
                let line = match pod {
                    Some(p) if *p != wo.name => format!("ServiceAccount {ns}/{name} runs Pod {p} of {}", describe(wo)),
                    Some(_) => format!("ServiceAccount {ns}/{name} runs {}", describe(wo)),
                    None => format!(
                        "ServiceAccount {ns}/{name} is the pod template's account of {} (no Pod of it running)",
                        describe(wo)
                    ),
                };
                evidence.push(line);
                cands.entry(*w).or_default().score += RBAC + if sg.finalizers { RBAC_FINALIZERS } else { 0 };
            }
        }
    }

    // managedFields weighs in once the other candidates are known: a container named `manager`
    // is in every kubebuilder operator, so it only confirms, or decides when it is unique.
    for m in &managers {
        let found = l.workloads.named_or_running(m);
        for &w in &found {
            let by_name = l.workloads.is_named(w, m);
            if by_name || cands.contains_key(&w) || found.len() == 1 {
                cands.entry(w).or_default().score += if by_name { MANAGER_NAME } else { MANAGER_CONTAINER };
            }
        }
    }

    // 3. leader-election leases named after the domain.
    let leases = l.leases.matching(g, &groups);
    let mut unheld: Vec<NodeId> = Vec::new();
    for &lease in &leases {
        let Some(lo) = g.object(lease) else { continue };
        let holder = lo.str_field("/spec/holderIdentity").unwrap_or("nobody");
        match l.leases.holder_workload(lease) {
            Some((w, how)) => {
                evidence.push(format!(
                    "leader-election lease {}/{} matches {}; holder {holder}: {how}",
                    lo.namespace_str(),
                    lo.name,
                    domain.unwrap_or("")
                ));
                cands.entry(w).or_default().score += LEASE_HOLDER;
            }
            None => {
                evidence.push(format!(
                    "leader-election lease {}/{} matches {}; its holder {holder} is no Pod or workload in the snapshot",
                    lo.namespace_str(),
                    lo.name,
                    domain.unwrap_or("")
                ));
                unheld.push(lease);
            }
        }
    }
    if leases.is_empty()
        && let Some(d) = domain
    {
        evidence.push(format!("no leader-election lease is named after {d}"));
    }

    // 4. the controller and its liveness.
    if let Some(best) = pick(l, &cands) {
        return workload_verdict(l, best, &cands, &unheld, evidence);
    }
    if let Some(lease) = freshest(l, &unheld) {
        let lo = g.object(lease).expect("unheld leases are observed");
        let s = lease_status(lo, l.now);
        evidence.push(format!("no workload found; {}", s.evidence));
        note_blind_spot(l, &mut evidence);
        return FinalizerOwner {
            removed_by: Some(format!("leader of lease {}/{}", lo.namespace_str(), lo.name)),
            controller: s.state,
            evidence,
            workload: None,
            since: s.since,
        };
    }
    let removed_by = idle_accounts
        .first()
        .map(|(ns, n)| format!("ServiceAccount {ns}/{n}"))
        .or_else(|| managers.first().map(|m| format!("field manager \"{m}\"")));
    let controller = if let Some(spot) = l.visibility.blind_spot() {
        evidence.push(format!("no controller found, but {spot}"));
        ControllerState::Unknown
    } else if domain.is_none() && managers.is_empty() {
        evidence.push(format!("{finalizer} names no domain, and no managedFields entry says who added it"));
        ControllerState::Unknown
    } else if domain.is_some_and(kubernetes_owned) && groups.len() == 1 {
        evidence.push(format!(
            "{finalizer} is in a Kubernetes-reserved domain but not among the known built-in finalizers"
        ));
        ControllerState::Unknown
    } else {
        let mut line = format!(
            "no workload, Pod or leader-election lease found for {}: the controller appears to be uninstalled",
            domain.or(managers.first().copied()).unwrap_or(finalizer)
        );
        if !idle_accounts.is_empty() {
            line.push_str(" (only its RBAC remains)");
        }
        let absent = l.visibility.absent();
        if !absent.is_empty() {
            let labels: Vec<&str> = absent.iter().map(|s| s.label()).collect();
            line.push_str(&format!("; the snapshot holds no {}", or_list(&labels)));
        }
        evidence.push(line);
        ControllerState::Missing
    };
    FinalizerOwner { removed_by, controller, evidence, workload: None, since: None }
}

/// The best-supported candidate; among equals, one that is alive, then the first by node order.
fn pick(l: &Liveness<'_>, cands: &BTreeMap<NodeId, Candidate>) -> Option<NodeId> {
    let top = cands.values().map(|c| c.score).max()?;
    let tied: Vec<NodeId> = cands.iter().filter(|(_, c)| c.score == top).map(|(&id, _)| id).collect();
    if tied.len() > 1
        && let Some(&alive) =
            tied.iter().find(|&&w| workload_state(l.graph, &l.workloads, w).state == ControllerState::Alive)
    {
        return Some(alive);
    }
    tied.first().copied()
}

/// The lease renewed last.
fn freshest(l: &Liveness<'_>, leases: &[NodeId]) -> Option<NodeId> {
    leases.iter().copied().max_by_key(|&id| {
        l.graph.object(id).and_then(|o| o.str_field("/spec/renewTime")).map(str::to_string).unwrap_or_default()
    })
}

fn workload_verdict(
    l: &Liveness<'_>,
    best: NodeId,
    cands: &BTreeMap<NodeId, Candidate>,
    unheld: &[NodeId],
    mut evidence: Vec<String>,
) -> FinalizerOwner {
    let g = l.graph;
    let wo = g.object(best).expect("candidates are observed workloads");
    let controller = Controller::of(wo);
    let others: Vec<String> =
        cands.keys().filter(|&&w| w != best).take(3).filter_map(|&w| g.object(w).map(describe)).collect();
    if !others.is_empty() {
        evidence.push(format!("chose {controller}; also allowed: {}", others.join(", ")));
    }
    let ws = workload_state(g, &l.workloads, best);
    evidence.extend(ws.evidence);
    let mut leases: Vec<NodeId> = l.leases.of_workload(best).to_vec();
    for &x in unheld {
        if !leases.contains(&x) {
            leases.push(x);
        }
    }
    let statuses: Vec<_> = leases.iter().filter_map(|&id| g.object(id)).map(|o| lease_status(o, l.now)).collect();
    let fresh = statuses.iter().any(|s| s.state == ControllerState::Alive);
    evidence.extend(statuses.iter().map(|s| s.evidence.clone()));
    let (state, since) = if ws.state == ControllerState::Alive || fresh {
        (ControllerState::Alive, None)
    } else if ws.state == ControllerState::Unknown && statuses.is_empty() {
        // neither the workload's replicas nor a lease were seen: no verdict
        (ControllerState::Unknown, None)
    } else {
        let stale = statuses.iter().filter_map(|s| s.since).max();
        (ControllerState::Down, stale.or(ws.since))
    };
    if state == ControllerState::Down {
        note_blind_spot(l, &mut evidence);
    }
    FinalizerOwner {
        removed_by: Some(controller.to_string()),
        controller: state,
        evidence,
        workload: Some(controller),
        since,
    }
}

fn note_blind_spot(l: &Liveness<'_>, evidence: &mut Vec<String>) {
    if let Some(spot) = l.visibility.blind_spot() {
        evidence.push(format!("note: {spot}"));
    }
}

/// `a`, `a or b`, `a, b or c`.
fn or_list(items: &[&str]) -> String {
    match items {
        [] => String::new(),
        [one] => one.to_string(),
        [init @ .., last] => format!("{} or {last}", init.join(", ")),
    }
}

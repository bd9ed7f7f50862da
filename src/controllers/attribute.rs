//! Attribution of a finalizer that no built-in controller removes: managedFields, then the
//! domain → CRD → RBAC → ServiceAccount → Pod → workload chain, then leader-election Leases and
//! the names the finalizer gives (`naming`); then the liveness of what was found.
//!
//! Both directions are earned (contract §4.3). A candidate is *tied* to the finalizer by the
//! field manager that added it, a leader lease of its domain, or its name; permission to update
//! the resource alone (RBAC) ties nothing — an operator may hold `…/finalizers` only to grant it
//! to the agents it installs. A candidate with a tie beats any without; one with permission only
//! is never Alive (Unknown when it runs, and Missing when the field manager that added the
//! finalizer is found nowhere). Missing needs the places the controller could be to have been
//! readable and empty, and says what was searched; a finalizer that a managed control plane's
//! controller removes (`managed`) is Unknown instead.

use std::collections::BTreeMap;

use super::domain::{finalizer_domain, kubernetes_owned};
use super::lease::lease_status;
use super::managed::managed_controller;
use super::managed_fields::{self, ManagerKind};
use super::naming::FinalizerNames;
use super::workload::{Controller, SaKey, describe, workload_state};
use super::{ControllerState, FinalizerOwner, Liveness};
use crate::graph::NodeId;

/// A workload that could be the controller, with how strongly the evidence points at it.
#[derive(Default)]
struct Candidate {
    score: u32,
    /// Evidence beyond permission that ties it to this finalizer: a field manager, a lease, a name.
    tied: bool,
}

/// Field manager names that every controller of a framework uses, so they name no one in
/// particular when no workload matches them (client-go's default, kubebuilder's `manager`).
fn generic_manager(m: &str) -> bool {
    let m = m.to_ascii_lowercase();
    matches!(m.as_str(), "manager" | "controller" | "operator" | "main" | "unknown" | "go-http-client")
        || m.starts_with("go-http-client")
}

// How much each kind of evidence weighs when several workloads are candidates.
const MANAGER_NAME: u32 = 4;
const MANAGER_CONTAINER: u32 = 2;
const RBAC: u32 = 3;
const RBAC_FINALIZERS: u32 = 1;
const LEASE_HOLDER: u32 = 2;
const NAMED: u32 = 2;

pub(super) fn attribute(l: &Liveness<'_>, object: NodeId, finalizer: &str) -> FinalizerOwner {
    let g = l.graph;
    let obj = g.object(object);
    let domain = finalizer_domain(finalizer);
    let mut evidence = Vec::new();
    let mut cands: BTreeMap<NodeId, Candidate> = BTreeMap::new();

    // 1. managedFields: who added it.
    let mut managers: Vec<&str> = Vec::new();
    let mut absent_managers: Vec<&str> = Vec::new();
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
                        "managedFields: {who} added it; no workload, container, ServiceAccount or app label of that name is in the snapshot"
                    ));
                    if !generic_manager(&m.manager) && !absent_managers.contains(&m.manager.as_str()) {
                        absent_managers.push(&m.manager);
                    }
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
                let c = cands.entry(w).or_default();
                c.score += if by_name { MANAGER_NAME } else { MANAGER_CONTAINER };
                c.tied = true;
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
                let c = cands.entry(w).or_default();
                c.score += LEASE_HOLDER;
                c.tied = true;
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

    // 4. the names the finalizer gives: workloads, containers, ServiceAccounts, app labels and
    // the holders of leases so named (a controller bound to cluster-admin, a domain that is no
    // API group). A workload whose own leader lease names another domain is not taken by name.
    let names = FinalizerNames::of(finalizer).with_group_of_object(finalizer, obj.map_or("", |o| o.group()));
    // the path is the more specific name: where a workload bears it, the domain's labels (which
    // every component of a product bears) name no one
    let by_path = names.path_only().filter(|p| !l.workloads.named_by(|n| p.matches(n)).is_empty());
    let absent_component = names.component().filter(|_| by_path.is_none());
    if let Some(c) = absent_component {
        evidence.push(format!(
            "the finalizer names the component {c}, and no workload, container, ServiceAccount or app label bears that name"
        ));
    }
    let nobody = FinalizerNames::default();
    let naming = match (&by_path, absent_component) {
        (Some(p), _) => p,
        (None, Some(_)) => &nobody,
        (None, None) => &names,
    };
    if !naming.is_empty() {
        let mut named: Vec<(NodeId, String)> = l
            .workloads
            .named_by(|n| naming.matches(n))
            .into_iter()
            .map(|(w, how)| (w, format!("by {}", how.label())))
            .collect();
        for lease in l.leases.named(g, |n| naming.matches(n)) {
            if leases.contains(&lease) {
                continue;
            }
            if let (Some((w, _)), Some(lo)) = (l.leases.holder_workload(lease), g.object(lease))
                && !named.iter().any(|(x, _)| *x == w)
            {
                named.push((w, format!("by its leader lease {}/{}", lo.namespace_str(), lo.name)));
            }
        }
        let mut shown = 0;
        for (w, how) in named {
            let Some(wo) = g.object(w) else { continue };
            if let Some(other) = foreign_lease(l, w, &groups) {
                evidence.push(format!("{} is named like the finalizer ({how}), but its own {other}", describe(wo)));
                continue;
            }
            if shown < 3 {
                evidence.push(format!("{} is named by the finalizer ({how}; names: {})", describe(wo), naming.list()));
            }
            shown += 1;
            let c = cands.entry(w).or_default();
            c.score += NAMED;
            c.tied = true;
        }
    }

    // 5. the controller and its liveness.
    if let Some(best) = pick(l, &cands) {
        if cands[&best].tied {
            return workload_verdict(l, best, &cands, &unheld, evidence);
        }
        if unheld.is_empty() {
            return permission_only(l, best, &cands, &absent_managers, evidence);
        }
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
            by_permission_only: false,
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
    } else if let Some(who) = domain.and_then(managed_controller) {
        evidence
            .push(format!("no controller of it in the cluster, as expected: {who}; its absence here proves nothing"));
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
        // the verdict's line comes last (findings quote it) and says what the search covered
        line.push_str(&format!("; {}", searched(domain, &groups, &managers, &names)));
        evidence.push(line);
        ControllerState::Missing
    };
    FinalizerOwner { removed_by, controller, evidence, workload: None, since: None, by_permission_only: false }
}

/// The best-supported candidate: any tied to the finalizer beats any with permission only;
/// then the highest score; among equals, one that is alive, then the first by node order.
fn pick(l: &Liveness<'_>, cands: &BTreeMap<NodeId, Candidate>) -> Option<NodeId> {
    let any_tied = cands.values().any(|c| c.tied);
    let pool = || cands.iter().filter(move |(_, c)| c.tied == any_tied);
    let top = pool().map(|(_, c)| c.score).max()?;
    let tied: Vec<NodeId> = pool().filter(|(_, c)| c.score == top).map(|(&id, _)| id).collect();
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
        evidence.push(format!("chose {controller}; other candidates: {}", others.join(", ")));
    }
    if let Some(sa) = l.workloads.service_account_of(best) {
        for line in l.rbac.wide_grants_to(&sa) {
            evidence
                .push(format!("{line}: a wide role names no controller; {controller} is one by the evidence above"));
        }
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
        by_permission_only: false,
    }
}

/// A candidate that only RBAC ties to the finalizer: never Alive. When the field manager that
/// added the finalizer is found nowhere, the adder is gone and the candidate is not it: Missing
/// (where the search could see); when the candidate runs, Unknown; when it does not, Down.
fn permission_only(
    l: &Liveness<'_>,
    best: NodeId,
    cands: &BTreeMap<NodeId, Candidate>,
    absent_managers: &[&str],
    evidence: Vec<String>,
) -> FinalizerOwner {
    let g = l.graph;
    let c = Controller::of(g.object(best).expect("candidates are observed workloads"));
    let mut answer = workload_verdict(l, best, cands, &[], evidence);
    answer.by_permission_only = true;
    answer.evidence.push(format!(
        "{c} is tied to this finalizer by permission only (RBAC): no field manager, leader lease or name ties it"
    ));
    if let Some(m) = absent_managers.first() {
        answer.removed_by = Some(format!("field manager \"{m}\""));
        answer.workload = None;
        answer.by_permission_only = false;
        answer.since = None;
        if let Some(spot) = l.visibility.blind_spot() {
            answer.evidence.push(format!("no workload runs as field manager \"{m}\", but {spot}"));
            answer.controller = ControllerState::Unknown;
        } else {
            answer.evidence.push(format!(
                "field manager \"{m}\" added the finalizer and no workload, container, ServiceAccount, app label or lease of that name remains: its controller appears to be uninstalled"
            ));
            answer.controller = ControllerState::Missing;
        }
        return answer;
    }
    if answer.controller == ControllerState::Alive {
        answer.evidence.push(format!(
            "{c} runs, but permission is not ownership: what would settle it is its field manager on this object, a leader lease of this domain, or its logs"
        ));
        answer.controller = ControllerState::Unknown;
    }
    answer
}

/// A domain-named leader lease (`<id>.<domain>`) that the workload holds for another domain
/// than `groups`, described; `None` when it holds none or one of these.
fn foreign_lease(l: &Liveness<'_>, w: NodeId, groups: &[&str]) -> Option<String> {
    let g = l.graph;
    let held: Vec<&crate::snapshot::Object> = l.leases.of_workload(w).iter().filter_map(|&id| g.object(id)).collect();
    let domain_of = |name: &str| name.split_once('.').map(|(_, d)| d.to_string()).filter(|d| d.contains('.'));
    if held.is_empty()
        || held
            .iter()
            .any(|o| domain_of(&o.name).is_none_or(|d| groups.iter().any(|gr| super::domain::domains_match(&d, gr))))
    {
        return None;
    }
    let o = held[0];
    Some(format!("leader lease {}/{} names {}", o.namespace_str(), o.name, domain_of(&o.name).unwrap_or_default()))
}

/// What a Missing verdict searched, so that the absence can be checked.
fn searched(domain: Option<&str>, groups: &[&str], managers: &[&str], names: &FinalizerNames) -> String {
    let mut parts = Vec::new();
    if !managers.is_empty() {
        parts.push(format!("workloads, containers and ServiceAccounts named {}", managers.join(", ")));
    }
    if !names.is_empty() {
        parts.push(format!("workloads, containers, ServiceAccounts, app labels and Leases named {}", names.list()));
    }
    if !groups.is_empty() {
        parts.push(format!(
            "ServiceAccounts that RBAC lets update {}, and the Pods that run as them",
            groups.join(", ")
        ));
    }
    if let Some(d) = domain {
        parts.push(format!("leader-election Leases named after {d}"));
    }
    format!("searched: {}", parts.join("; "))
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

//! Whether a candidate runs: its pods and replicas, and its leases (its own, and the domain's
//! whose holder is gone when a rung ties it). One candidate's answer ([`workload_verdict`]), and
//! what a tie's candidates say together ([`agreement`]): a tie is about which controller, not
//! whether it runs (contract §4.3.3, "Weighing the rungs together").

use k8s_openapi::jiff::Timestamp;

use super::super::lease::lease_status;
use super::super::workload::{Controller, describe, workload_state};
use super::super::{ControllerState, FinalizerOwner, Liveness};
use super::Rung;
use crate::graph::NodeId;

/// A candidate's liveness, with its evidence and since when it is down where known.
pub(super) struct Life {
    pub state: ControllerState,
    pub since: Option<Timestamp>,
    pub evidence: Vec<String>,
}

/// Ready pods or a fresh lease: Alive; replicas and leases unread: Unknown; else Down. `unheld`:
/// the domain's leases whose holder is gone, counted for a candidate a rung ties.
pub(super) fn life(l: &Liveness<'_>, w: NodeId, tied: bool, unheld: &[NodeId]) -> Life {
    let g = l.graph;
    let ws = workload_state(g, &l.workloads, w);
    let mut evidence = ws.evidence;
    let mut leases: Vec<NodeId> = l.leases.of_workload(w).to_vec();
    if tied {
        for &x in unheld {
            if !leases.contains(&x) {
                leases.push(x);
            }
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
    Life { state, since, evidence }
}

/// The state every tied candidate shares, Alive or Down; `None` when they disagree or one of
/// them could not be judged.
pub(super) fn agreement(lives: &[Life]) -> Option<ControllerState> {
    let first = lives.first()?.state;
    let shared = lives.iter().all(|x| x.state == first);
    (shared && matches!(first, ControllerState::Alive | ControllerState::Down)).then_some(first)
}

/// The chosen workload's answer. The rung that tied it comes before the liveness lines, which
/// come last (findings quote the last).
pub(super) fn workload_verdict(
    l: &Liveness<'_>,
    best: NodeId,
    rung: Option<Rung>,
    others: &[NodeId],
    unheld: &[NodeId],
    mut evidence: Vec<String>,
) -> FinalizerOwner {
    let g = l.graph;
    let wo = g.object(best).expect("candidates are observed workloads");
    let controller = Controller::of(wo);
    let others: Vec<String> = others.iter().take(3).filter_map(|&w| g.object(w).map(describe)).collect();
    if let Some(r) = rung {
        evidence.push(format!("decided by {}: {controller}", r.label()));
    }
    if !others.is_empty() {
        evidence.push(format!("chose {controller}; other candidates: {}", others.join(", ")));
    }
    if let Some(sa) = l.workloads.service_account_of(best) {
        for line in l.rbac.wide_grants_to(&sa) {
            evidence
                .push(format!("{line}: a wide role names no controller; {controller} is one by the evidence above"));
        }
    }
    let life = life(l, best, rung.is_some(), unheld);
    evidence.extend(life.evidence);
    if life.state == ControllerState::Down {
        note_blind_spot(l, &mut evidence);
    }
    FinalizerOwner {
        removed_by: Some(controller.to_string()),
        controller: life.state,
        evidence,
        workload: Some(controller),
        since: life.since,
        by_permission_only: false,
        added_by_person: None,
    }
}

pub(super) fn note_blind_spot(l: &Liveness<'_>, evidence: &mut Vec<String>) {
    if let Some(spot) = l.visibility.blind_spot() {
        evidence.push(format!("note: {spot}"));
    }
}

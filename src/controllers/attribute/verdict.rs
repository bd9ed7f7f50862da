//! The verdict: from the pick and what the passes found to Alive, Down, Missing or Unknown,
//! naming the rung of the ladder that decided it. [`decide`] is the rule on a few facts,
//! table-tested; [`verdict`] gathers the facts and writes the answer.
//!
//! - A candidate tied by a rung: its liveness (ready pods, or a lease renewed in time).
//! - A candidate tied weakly (permission, a name or a prefix alone, an operand): never Alive.
//!   When the controller's field manager that added the finalizer is found nowhere, that
//!   adder is gone and the candidate is not it: Missing. A person's client as the adder:
//!   Missing. Otherwise Unknown (Down when RBAC ties it and it does not run).
//! - Candidates that tie: Unknown, naming them (Missing as above when the adder is gone).
//! - No candidate: the leader of a lease of the domain whose holder is gone, by its renewals;
//!   else Missing where everything was readable (saying what was searched), Unknown where a
//!   source was unreadable, no domain names anything, a managed control plane runs the
//!   controller out of sight, or the domain is Kubernetes' own.

use std::collections::BTreeMap;

use super::super::domain::kubernetes_owned;
use super::super::lease::lease_status;
use super::super::managed::managed_controller;
use super::super::naming::FinalizerNames;
use super::super::workload::{Controller, SaKey, describe, workload_state};
use super::super::{ControllerState, FinalizerOwner, Liveness};
use super::pick::Pick;
use super::{Rung, Search, Ties};
use crate::graph::NodeId;

/// What the passes found, for the verdict.
pub(super) struct Found {
    pub evidence: Vec<String>,
    pub cands: BTreeMap<NodeId, Ties>,
    pub unheld: Vec<NodeId>,
    pub persons: Vec<String>,
    pub absent_adders: Vec<String>,
    pub adders: Vec<String>,
    pub idle_accounts: Vec<SaKey>,
    pub names: FinalizerNames,
}

/// What the verdict rests on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Basis {
    /// One candidate, tied by `rung` (`None`: weakly), in `state`; `permitted`: RBAC ties it.
    Workload { rung: Option<Rung>, state: ControllerState, permitted: bool },
    /// Candidates tie at `rung`.
    Tie { rung: Option<Rung> },
    /// No workload, but a lease of the domain in `state`.
    Lease { state: ControllerState },
    /// Nothing at all.
    Nothing,
}

/// The facts [`decide`] turns on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Facts {
    pub basis: Basis,
    /// A source the search needs was unreadable, or none was in the input.
    pub blind: bool,
    /// A controller's field manager added the finalizer, and no workload bears its name.
    pub adder_gone: bool,
    /// A person's client added it.
    pub person: bool,
    /// The finalizer names a domain, or a field manager says who added it.
    pub something_to_search: bool,
    /// A managed control plane runs the controller of this domain out of sight.
    pub managed: bool,
    /// The domain is Kubernetes' own, and no CRD group matches it.
    pub reserved: bool,
}

/// Why the verdict is what it is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Why {
    /// A rung tied the workload; the state is its liveness.
    Rung(Rung),
    /// Only weak evidence ties the workload.
    Weak,
    /// Candidates tie.
    Tie,
    /// The controller's field manager that added it is gone.
    AdderGone,
    /// A person's client added it, and nothing ties a controller.
    Person,
    /// Only a lease of the domain remains.
    LeaseOnly,
    /// No controller found, but the search could not see everywhere.
    Blind,
    /// Nothing names where to search.
    NothingToSearch,
    /// A managed control plane runs it.
    Managed,
    /// A Kubernetes-reserved domain not among the known built-in finalizers.
    Reserved,
    /// Everything was searched and nothing found.
    Absent,
}

/// The verdict's rule.
pub(super) fn decide(f: &Facts) -> (ControllerState, Why) {
    use ControllerState::*;
    let gone = |f: &Facts| match (f.blind, f.adder_gone, f.person) {
        (true, true, _) | (true, _, true) => Some((Unknown, Why::Blind)),
        (false, true, _) => Some((Missing, Why::AdderGone)),
        (false, false, true) => Some((Missing, Why::Person)),
        _ => None,
    };
    match f.basis {
        Basis::Workload { rung: Some(r), state, .. } => (state, Why::Rung(r)),
        Basis::Workload { rung: None, state, permitted } => gone(f).unwrap_or(match state {
            Down if permitted => (Down, Why::Weak),
            _ => (Unknown, Why::Weak),
        }),
        Basis::Tie { rung: None } => gone(f).unwrap_or((Unknown, Why::Tie)),
        Basis::Tie { rung: Some(_) } => (Unknown, Why::Tie),
        Basis::Lease { state } => (state, Why::LeaseOnly),
        Basis::Nothing if f.blind => (Unknown, Why::Blind),
        Basis::Nothing if f.managed => (Unknown, Why::Managed),
        Basis::Nothing if f.person => (Missing, Why::Person),
        Basis::Nothing if !f.something_to_search => (Unknown, Why::NothingToSearch),
        Basis::Nothing if f.reserved => (Unknown, Why::Reserved),
        Basis::Nothing => (Missing, Why::Absent),
    }
}

pub(super) fn verdict(s: &Search<'_>, mut found: Found, picked: Pick) -> FinalizerOwner {
    let l = s.l;
    let g = l.graph;
    let blind = l.visibility.blind_spot();
    let managed = s.domain.and_then(managed_controller);
    let mut facts = Facts {
        basis: Basis::Nothing,
        blind: blind.is_some(),
        adder_gone: !found.absent_adders.is_empty(),
        person: !found.persons.is_empty(),
        something_to_search: s.domain.is_some() || !found.adders.is_empty() || !found.persons.is_empty(),
        managed: managed.is_some(),
        reserved: s.domain.is_some_and(kubernetes_owned) && s.groups.len() == 1,
    };
    let freshest = freshest(l, &found.unheld);
    let mut judged: Option<FinalizerOwner> = None;
    match &picked {
        Pick::One { best, rung, others } if rung.is_some() || freshest.is_none() => {
            let j = workload_verdict(l, *best, *rung, others, &found.unheld, std::mem::take(&mut found.evidence));
            facts.basis = Basis::Workload { rung: *rung, state: j.controller, permitted: found.cands[best].permission };
            judged = Some(j);
        }
        Pick::Tie { rung, .. } if rung.is_some() || freshest.is_none() => facts.basis = Basis::Tie { rung: *rung },
        _ => {
            if let Some(lease) = freshest {
                let lo = g.object(lease).expect("unheld leases are observed");
                facts.basis = Basis::Lease { state: lease_status(lo, l.now).state };
            }
        }
    }
    let (state, why) = decide(&facts);
    let mut evidence = judged.as_ref().map_or_else(|| std::mem::take(&mut found.evidence), |j| j.evidence.clone());
    let searched = || searched(s, &found);
    let none = "no rung of the ladder ties a controller to it";
    let mut owner = FinalizerOwner {
        removed_by: None,
        controller: state,
        evidence: Vec::new(),
        workload: None,
        since: None,
        by_permission_only: false,
        added_by_person: None,
    };
    match why {
        Why::Rung(_) => return judged.expect("a rung ties a judged workload"),
        Why::Weak => {
            let j = judged.expect("a weak tie is a judged workload");
            let best = match &picked {
                Pick::One { best, .. } => *best,
                _ => unreachable!("a weak verdict is one candidate's"),
            };
            let ties = found.cands[&best];
            let c = j.workload.clone().expect("a judged workload");
            evidence.push(format!(
                "{c} is tied to this finalizer {}: no field manager, Event, leader lease, or name together with RBAC ties it (rung 5 of the ladder: never enough to call it Alive)",
                ties.weakness()
            ));
            if j.controller == ControllerState::Alive {
                let not = if ties.permission { "permission is not ownership" } else { "a name is not ownership" };
                evidence.push(format!(
                    "{c} runs, but {not}: what would settle it is its field manager on this object, its Events about it, a leader lease of this domain, or its logs"
                ));
            }
            // not known to be the controller: only a Down verdict dates anything
            let since = if state == ControllerState::Down { j.since } else { None };
            return FinalizerOwner { controller: state, evidence, by_permission_only: true, since, ..j };
        }
        Why::Tie => {
            let Pick::Tie { tied, rung } = &picked else { unreachable!("a tie is a tie's") };
            let names: Vec<String> = tied.iter().take(4).filter_map(|&w| g.object(w).map(describe)).collect();
            let at = rung.map_or("rung 5 (weak evidence only)", Rung::label);
            evidence.push(format!(
                "decided by {at}: candidates tie, {}; what would settle it is the field manager that added the finalizer, their Events about the object, a leader lease of this domain, or their logs",
                names.join(" and ")
            ));
            owner.removed_by = Some(names.join(" or "));
            owner.by_permission_only = rung.is_none();
        }
        Why::AdderGone => {
            let m = &found.absent_adders[0];
            owner.removed_by = Some(format!("field manager \"{m}\""));
            if let Pick::One { best, .. } = &picked
                && let Some(o) = g.object(*best)
            {
                evidence.push(format!(
                    "{} is tied to this finalizer {}: no field manager, Event, leader lease, or name together with RBAC ties it",
                    describe(o),
                    found.cands[best].weakness()
                ));
            }
            evidence.push(format!(
                "decided by {}: field manager \"{m}\" added the finalizer and no workload, container, ServiceAccount, app label or lease of that name remains: its controller appears to be uninstalled; {}",
                Rung::Adder.label(),
                searched()
            ));
        }
        Why::Person => {
            let m = &found.persons[0];
            owner.added_by_person = Some(m.clone());
            evidence.push(format!(
                "decided by {}: a person's client (field manager \"{m}\") added the finalizer, and nothing else ties a controller to it: no controller will remove it; {}",
                Rung::Adder.label(),
                searched()
            ));
        }
        Why::LeaseOnly => {
            let lease = freshest.expect("a lease verdict has a lease");
            let lo = g.object(lease).expect("unheld leases are observed");
            let st = lease_status(lo, l.now);
            evidence.push(format!("decided by {} with no workload found: {}", Rung::Lease.label(), st.evidence));
            note_blind_spot(l, &mut evidence);
            owner.removed_by = Some(format!("leader of lease {}/{}", lo.namespace_str(), lo.name));
            owner.since = st.since;
        }
        Why::Blind => {
            owner.removed_by = removed_by_of(&found);
            evidence.push(format!("{none}, but {}", blind.unwrap_or_default()));
        }
        Why::NothingToSearch => {
            evidence
                .push(format!("{} names no domain, and no managedFields entry says who added it: {none}", s.finalizer));
        }
        Why::Managed => {
            owner.removed_by = removed_by_of(&found);
            evidence.push(format!(
                "no controller of it in the cluster, as expected: {}; its absence here proves nothing",
                managed.unwrap_or_default()
            ));
        }
        Why::Reserved => evidence.push(format!(
            "{} is in a Kubernetes-reserved domain but not among the known built-in finalizers: {none}",
            s.finalizer
        )),
        Why::Absent => {
            owner.removed_by = removed_by_of(&found);
            let what = s.domain.or(found.adders.first().map(String::as_str)).unwrap_or(s.finalizer);
            let mut line = format!(
                "{none}: no workload, Pod or leader-election lease found for {what}: the controller appears to be uninstalled"
            );
            if !found.idle_accounts.is_empty() {
                line.push_str(" (only its RBAC remains)");
            }
            let absent = l.visibility.absent();
            if !absent.is_empty() {
                let labels: Vec<&str> = absent.iter().map(|s| s.label()).collect();
                line.push_str(&format!("; the snapshot holds no {}", or_list(&labels)));
            }
            // the verdict's line comes last (findings quote it) and says what the search covered
            line.push_str(&format!("; {}", searched()));
            evidence.push(line);
        }
    }
    owner.evidence = evidence;
    owner
}

fn removed_by_of(found: &Found) -> Option<String> {
    found
        .idle_accounts
        .first()
        .map(|(ns, n)| format!("ServiceAccount {ns}/{n}"))
        .or_else(|| found.adders.first().map(|m| format!("field manager \"{m}\"")))
}

/// The lease renewed last.
fn freshest(l: &Liveness<'_>, leases: &[NodeId]) -> Option<NodeId> {
    leases.iter().copied().max_by_key(|&id| {
        l.graph.object(id).and_then(|o| o.str_field("/spec/renewTime")).map(str::to_string).unwrap_or_default()
    })
}

/// The chosen workload's liveness: its pods and replicas, and its leases (its own and the
/// domain's whose holder is gone). The rung that tied it comes before the liveness lines,
/// which come last (findings quote the last).
fn workload_verdict(
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
    let ws = workload_state(g, &l.workloads, best);
    evidence.extend(ws.evidence);
    let mut leases: Vec<NodeId> = l.leases.of_workload(best).to_vec();
    if rung.is_some() {
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
        added_by_person: None,
    }
}

/// What a Missing verdict searched, so that the absence can be checked.
fn searched(s: &Search<'_>, found: &Found) -> String {
    let mut parts = Vec::new();
    if !found.adders.is_empty() {
        parts.push(format!("workloads, containers and ServiceAccounts named {}", found.adders.join(", ")));
    }
    if !found.names.is_empty() {
        parts.push(format!(
            "workloads, containers, ServiceAccounts, app labels and Leases named {}",
            found.names.list()
        ));
    }
    if s.domain.is_some() {
        parts.push(format!(
            "ServiceAccounts that RBAC lets update {}, and the Pods that run as them",
            s.groups.join(", ")
        ));
        parts.push(format!("leader-election Leases named after {}", s.domain.unwrap_or_default()));
    }
    if s.obj.is_some() {
        parts.push("the components reporting about it in its Events".to_string());
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

#[cfg(test)]
mod tests {
    use super::*;
    use ControllerState::*;

    const SEEN: Facts = Facts {
        basis: Basis::Nothing,
        blind: false,
        adder_gone: false,
        person: false,
        something_to_search: true,
        managed: false,
        reserved: false,
    };

    #[test]
    fn each_basis_gives_its_verdict_and_names_why() {
        let w = |rung, state, permitted| Basis::Workload { rung, state, permitted };
        let table: Vec<(&str, Facts, (ControllerState, Why))> = vec![
            (
                "rung 1, alive",
                Facts { basis: w(Some(Rung::Adder), Alive, false), ..SEEN },
                (Alive, Why::Rung(Rung::Adder)),
            ),
            (
                "rung 2, down",
                Facts { basis: w(Some(Rung::Reporter), Down, false), ..SEEN },
                (Down, Why::Rung(Rung::Reporter)),
            ),
            (
                "rung 3, alive",
                Facts { basis: w(Some(Rung::Lease), Alive, true), ..SEEN },
                (Alive, Why::Rung(Rung::Lease)),
            ),
            (
                "rung 4, unread",
                Facts { basis: w(Some(Rung::NameAndPermission), Unknown, true), ..SEEN },
                (Unknown, Why::Rung(Rung::NameAndPermission)),
            ),
            ("permission only, alive", Facts { basis: w(None, Alive, true), ..SEEN }, (Unknown, Why::Weak)),
            ("permission only, down", Facts { basis: w(None, Down, true), ..SEEN }, (Down, Why::Weak)),
            ("a name or prefix only, down", Facts { basis: w(None, Down, false), ..SEEN }, (Unknown, Why::Weak)),
            (
                "a live sibling by prefix, the adder gone",
                Facts { basis: w(None, Alive, false), adder_gone: true, ..SEEN },
                (Missing, Why::AdderGone),
            ),
            (
                "the adder gone, but blind",
                Facts { basis: w(None, Alive, false), adder_gone: true, blind: true, ..SEEN },
                (Unknown, Why::Blind),
            ),
            (
                "a person's client, a weak candidate",
                Facts { basis: w(None, Alive, true), person: true, ..SEEN },
                (Missing, Why::Person),
            ),
            (
                "a person's client, nothing else",
                Facts { person: true, something_to_search: true, ..SEEN },
                (Missing, Why::Person),
            ),
            (
                "strong candidates tie",
                Facts { basis: Basis::Tie { rung: Some(Rung::Adder) }, adder_gone: true, ..SEEN },
                (Unknown, Why::Tie),
            ),
            ("weak candidates tie", Facts { basis: Basis::Tie { rung: None }, ..SEEN }, (Unknown, Why::Tie)),
            (
                "weak candidates tie, adder gone",
                Facts { basis: Basis::Tie { rung: None }, adder_gone: true, ..SEEN },
                (Missing, Why::AdderGone),
            ),
            ("only a stale lease", Facts { basis: Basis::Lease { state: Down }, ..SEEN }, (Down, Why::LeaseOnly)),
            ("nothing, all visible", SEEN, (Missing, Why::Absent)),
            ("nothing, blind", Facts { blind: true, ..SEEN }, (Unknown, Why::Blind)),
            ("nothing, managed", Facts { managed: true, person: true, ..SEEN }, (Unknown, Why::Managed)),
            ("nothing to search", Facts { something_to_search: false, ..SEEN }, (Unknown, Why::NothingToSearch)),
            ("kubernetes' own domain", Facts { reserved: true, ..SEEN }, (Unknown, Why::Reserved)),
        ];
        for (what, facts, want) in table {
            assert_eq!(decide(&facts), want, "{what}");
        }
    }
}

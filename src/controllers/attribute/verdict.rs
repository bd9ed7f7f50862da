//! The one place that weighs (contract §4.3.3, "Weighing the rungs together"): the candidates
//! and what every rung found go in, one judgement comes out. [`decide`] is the rule on a few
//! facts, table-tested; [`verdict`] gathers the facts, and `explain` writes the answer.
//!
//! - One candidate tied by a rung: its liveness (ready pods, or a lease renewed in time).
//! - Candidates tied at the same rung: a tie says which, not whether it runs. Every one alive:
//!   Alive ("one of A or B"); every one down: Down; otherwise Unknown, naming them.
//! - A candidate tied weakly (permission, a name or a prefix alone, an operand by one tie):
//!   never Alive. The controller's field manager found nowhere, or the installation that put
//!   the kind's CRD there with no workload left: that is gone, and the candidate is not it:
//!   Missing. A person's client as the adder: Missing. Otherwise Unknown (Down when RBAC ties
//!   it and it does not run). Weak candidates that tie: the same, Unknown at worst.
//! - A controller's field manager that resolves to nothing but wrote the object since its
//!   deletion began: whatever runs as it is alive, whatever else is silent.
//! - No candidate: the leader of a lease of the domain whose holder is gone, by its renewals;
//!   else Missing where everything was readable (saying what was searched, and naming the gone
//!   installation where one is), Unknown where a source was unreadable, no domain names
//!   anything, a managed control plane runs the controller out of sight, or the domain is
//!   Kubernetes' own.

use std::collections::BTreeMap;

use super::super::domain::kubernetes_owned;
use super::super::lease::lease_status;
use super::super::managed::managed_controller;
use super::super::naming::FinalizerNames;
use super::super::workload::SaKey;
use super::super::{ControllerState, FinalizerOwner};
use super::alive::{agreement, life, workload_verdict};
use super::pick::Pick;
use super::{Rung, Search, Ties, explain};
use crate::graph::NodeId;

/// What the passes found, for the verdict.
pub(super) struct Found {
    pub evidence: Vec<String>,
    pub cands: BTreeMap<NodeId, Ties>,
    pub unheld: Vec<NodeId>,
    pub persons: Vec<String>,
    pub absent_adders: Vec<String>,
    pub adders: Vec<String>,
    /// Controllers' managers that resolve to nothing but wrote the object since its deletion.
    pub writing: Vec<String>,
    pub idle_accounts: Vec<SaKey>,
    pub names: FinalizerNames,
    /// The installation that put the kind's CRD there, when none of its workloads is left.
    pub installation_gone: Option<String>,
}

/// What the verdict rests on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Basis {
    /// One candidate, tied by `rung` (`None`: weakly), in `state`; `permitted`: RBAC ties it.
    Workload { rung: Option<Rung>, state: ControllerState, permitted: bool },
    /// Candidates tie at `rung`; `agreed`: the state every one of them is in (Alive or Down),
    /// `None` when they disagree.
    Tie { rung: Option<Rung>, agreed: Option<ControllerState> },
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
    /// The installation that put the kind's CRD there has no workload left.
    pub installation_gone: bool,
    /// A controller's field manager that no workload bears wrote the object since its deletion.
    pub writing: bool,
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
    /// Candidates tie at a rung and agree: the state is every one's.
    TieAgrees(Rung),
    /// Candidates tie, and their states or the evidence leave it open.
    Tie,
    /// The controller's field manager that added it is gone.
    AdderGone,
    /// The installation that put the kind's CRD there has no workload left.
    InstallationGone,
    /// A field manager that resolves to nothing wrote the object since its deletion began.
    Writing,
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
    // what overrides weak evidence: signs of life first, then signs of absence
    let over_weak = |f: &Facts| match (f.writing, f.blind, f.adder_gone, f.installation_gone, f.person) {
        (true, ..) => Some((Alive, Why::Writing)),
        (false, true, true, _, _) | (false, true, _, true, _) | (false, true, _, _, true) => {
            Some((Unknown, Why::Blind))
        }
        (false, false, true, _, _) => Some((Missing, Why::AdderGone)),
        (false, false, false, true, _) => Some((Missing, Why::InstallationGone)),
        (false, false, false, false, true) => Some((Missing, Why::Person)),
        _ => None,
    };
    match f.basis {
        Basis::Workload { rung: Some(r), state, .. } => (state, Why::Rung(r)),
        Basis::Workload { rung: None, state, permitted } => over_weak(f).unwrap_or(match state {
            Down if permitted => (Down, Why::Weak),
            _ => (Unknown, Why::Weak),
        }),
        Basis::Tie { rung: Some(r), agreed: Some(state) } => (state, Why::TieAgrees(r)),
        Basis::Tie { rung: Some(_), agreed: None } => (Unknown, Why::Tie),
        Basis::Tie { rung: None, .. } => over_weak(f).unwrap_or((Unknown, Why::Tie)),
        Basis::Lease { .. } if f.writing => (Alive, Why::Writing),
        Basis::Lease { state } => (state, Why::LeaseOnly),
        Basis::Nothing if f.writing => (Alive, Why::Writing),
        Basis::Nothing if f.blind => (Unknown, Why::Blind),
        Basis::Nothing if f.managed => (Unknown, Why::Managed),
        Basis::Nothing if f.person => (Missing, Why::Person),
        Basis::Nothing if f.installation_gone => (Missing, Why::InstallationGone),
        Basis::Nothing if !f.something_to_search => (Unknown, Why::NothingToSearch),
        Basis::Nothing if f.reserved => (Unknown, Why::Reserved),
        Basis::Nothing => (Missing, Why::Absent),
    }
}

/// Candidates and their evidence in, one judgement out.
pub(super) fn verdict(s: &Search<'_>, mut found: Found, picked: Pick) -> FinalizerOwner {
    let l = s.l;
    let g = l.graph;
    let blind = l.visibility.blind_spot();
    let managed = s.domain.and_then(managed_controller);
    let mut facts = Facts {
        basis: Basis::Nothing,
        blind: blind.is_some(),
        adder_gone: !found.absent_adders.is_empty(),
        installation_gone: found.installation_gone.is_some(),
        writing: !found.writing.is_empty(),
        person: !found.persons.is_empty(),
        something_to_search: s.domain.is_some() || !found.adders.is_empty() || !found.persons.is_empty(),
        managed: managed.is_some(),
        reserved: s.domain.is_some_and(kubernetes_owned) && s.groups.len() == 1,
    };
    let chosen: Vec<NodeId> = match &picked {
        Pick::One { best, .. } => vec![*best],
        Pick::Tie { tied, .. } => tied.clone(),
        Pick::Nobody => Vec::new(),
    };
    found.evidence.extend(super::weighing::line(g, &found.cands, &chosen));
    let freshest = explain::freshest(l, &found.unheld);
    let mut judged: Option<FinalizerOwner> = None;
    let mut lives = Vec::new();
    match &picked {
        Pick::One { best, rung, others } if rung.is_some() || freshest.is_none() => {
            let j = workload_verdict(l, *best, *rung, others, &found.unheld, std::mem::take(&mut found.evidence));
            facts.basis = Basis::Workload { rung: *rung, state: j.controller, permitted: found.cands[best].permission };
            judged = Some(j);
        }
        Pick::Tie { tied, rung } if rung.is_some() || freshest.is_none() => {
            lives = tied.iter().map(|&w| life(l, w, rung.is_some(), &found.unheld)).collect();
            facts.basis = Basis::Tie { rung: *rung, agreed: agreement(&lives) };
        }
        _ => {
            if let Some(lease) = freshest {
                let lo = g.object(lease).expect("unheld leases are observed");
                facts.basis = Basis::Lease { state: lease_status(lo, l.now).state };
            }
        }
    }
    let (state, why) = decide(&facts);
    let ctx = explain::Ctx { s, found: &found, picked: &picked, blind, managed, freshest, state };
    let owner = match why {
        Why::Rung(_) => judged.expect("a rung ties a judged workload"),
        Why::Weak => explain::weak(&ctx, judged.expect("a weak tie is a judged workload")),
        Why::TieAgrees(r) => explain::tie_agrees(&ctx, r, lives),
        _ => explain::other(&ctx, why, judged.map(|j| j.evidence)),
    };
    dedup(owner)
}

/// Each evidence line once, where it last appears: findings quote the last line, the verdict's.
fn dedup(mut owner: FinalizerOwner) -> FinalizerOwner {
    let mut seen = std::collections::HashSet::new();
    let mut kept: Vec<String> = owner.evidence.into_iter().rev().filter(|e| seen.insert(e.clone())).collect();
    kept.reverse();
    owner.evidence = kept;
    owner
}

#[cfg(test)]
mod tests {
    use super::*;
    use ControllerState::*;

    const SEEN: Facts = Facts {
        basis: Basis::Nothing,
        blind: false,
        adder_gone: false,
        installation_gone: false,
        writing: false,
        person: false,
        something_to_search: true,
        managed: false,
        reserved: false,
    };

    #[test]
    fn each_line_is_kept_once_where_it_last_appears() {
        let owner = FinalizerOwner {
            removed_by: None,
            controller: Missing,
            evidence: ["a", "b", "a", "c", "b"].map(String::from).to_vec(),
            workload: None,
            since: None,
            by_permission_only: false,
            added_by_person: None,
        };
        assert_eq!(dedup(owner).evidence, ["a", "c", "b"]);
    }

    #[test]
    fn each_basis_gives_its_verdict_and_names_why() {
        let w = |rung, state, permitted| Basis::Workload { rung, state, permitted };
        let tie = |rung, agreed| Basis::Tie { rung, agreed };
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
                Facts { basis: tie(Some(Rung::Adder), None), adder_gone: true, ..SEEN },
                (Unknown, Why::Tie),
            ),
            (
                "strong candidates tie, every one alive: which, not whether",
                Facts { basis: tie(Some(Rung::NameAndPermission), Some(Alive)), ..SEEN },
                (Alive, Why::TieAgrees(Rung::NameAndPermission)),
            ),
            (
                "strong candidates tie, every one down",
                Facts { basis: tie(Some(Rung::Lease), Some(Down)), ..SEEN },
                (Down, Why::TieAgrees(Rung::Lease)),
            ),
            ("weak candidates tie", Facts { basis: tie(None, None), ..SEEN }, (Unknown, Why::Tie)),
            (
                "weak candidates tie, every one alive: names alone stay unknown",
                Facts { basis: tie(None, Some(Alive)), ..SEEN },
                (Unknown, Why::Tie),
            ),
            (
                "weak candidates tie, adder gone",
                Facts { basis: tie(None, None), adder_gone: true, ..SEEN },
                (Missing, Why::AdderGone),
            ),
            (
                "a live sibling by prefix, the installation gone",
                Facts { basis: w(None, Alive, false), installation_gone: true, ..SEEN },
                (Missing, Why::InstallationGone),
            ),
            (
                "the installation gone, but blind",
                Facts { basis: w(None, Alive, false), installation_gone: true, blind: true, ..SEEN },
                (Unknown, Why::Blind),
            ),
            (
                "the installation gone, yet a rung ties a live workload",
                Facts { basis: w(Some(Rung::Reporter), Alive, false), installation_gone: true, ..SEEN },
                (Alive, Why::Rung(Rung::Reporter)),
            ),
            (
                "nothing found, the installation gone: named",
                Facts { installation_gone: true, ..SEEN },
                (Missing, Why::InstallationGone),
            ),
            (
                "an unresolved manager writing since the deletion: alive, even when blind",
                Facts { writing: true, blind: true, ..SEEN },
                (Alive, Why::Writing),
            ),
            (
                "an unresolved manager writing outweighs a weak candidate and a gone installation",
                Facts { basis: w(None, Down, true), writing: true, installation_gone: true, ..SEEN },
                (Alive, Why::Writing),
            ),
            (
                "an unresolved manager writing outweighs a stale lease",
                Facts { basis: Basis::Lease { state: Down }, writing: true, ..SEEN },
                (Alive, Why::Writing),
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

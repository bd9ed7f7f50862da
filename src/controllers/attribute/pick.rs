//! Choosing among the candidates: the strongest evidence wins ([`Ties::strength`]: each rung in
//! turn, then among the weakly tied, permission on `/finalizers`, permission, a name, a
//! prefix). Candidates with equal evidence tie, and a tie is never broken by which of them
//! happens to run: that would make a live sibling the controller of a dead one's finalizer.

use std::collections::BTreeMap;

use super::{Rung, Ties};
use crate::graph::NodeId;

/// The outcome of the choice.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Pick {
    /// No workload was tied at all.
    Nobody,
    /// One candidate has the strongest evidence; `rung` is what ties it (`None`: only weak
    /// evidence), `others` the rest, strongest first.
    One { best: NodeId, rung: Option<Rung>, others: Vec<NodeId> },
    /// Several candidates have the same, strongest evidence.
    Tie { tied: Vec<NodeId>, rung: Option<Rung> },
}

pub(super) fn pick(cands: &BTreeMap<NodeId, Ties>) -> Pick {
    let mut ranked: Vec<(&NodeId, &Ties)> = cands.iter().collect();
    // strongest first; among equals, node order (BTreeMap order, kept by a stable sort)
    ranked.sort_by_key(|c| std::cmp::Reverse(c.1.strength()));
    let Some(&(&best, top)) = ranked.first() else { return Pick::Nobody };
    let tied: Vec<NodeId> = ranked.iter().filter(|(_, c)| c.strength() == top.strength()).map(|&(&w, _)| w).collect();
    if tied.len() > 1 {
        return Pick::Tie { tied, rung: top.rung() };
    }
    Pick::One { best, rung: top.rung(), others: ranked[1..].iter().map(|&(&w, _)| w).collect() }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ties(f: impl Fn(&mut Ties)) -> Ties {
        let mut t = Ties::default();
        f(&mut t);
        t
    }

    fn run(cands: &[Ties]) -> Pick {
        pick(&cands.iter().enumerate().map(|(i, t)| (NodeId(i as u32), *t)).collect())
    }

    #[test]
    fn the_strongest_rung_wins_and_equals_tie() {
        let adder = ties(|t| t.adder = true);
        let reporter = ties(|t| t.reporter = true);
        let domain_lease = ties(|t| t.domain_lease = true);
        let held = ties(|t| {
            t.held_lease = true;
            t.permission = true;
        });
        let named_rbac = ties(|t| {
            t.named = true;
            t.permission = true;
        });
        let named_admin = ties(|t| {
            t.named = true;
            t.wide = true;
        });
        let rbac = ties(|t| t.permission = true);
        let rbac_finalizers = ties(|t| {
            t.permission = true;
            t.finalizers = true;
        });
        let name = ties(|t| t.named = true);
        let prefix = ties(|t| t.prefix = true);
        let operand = ties(|t| {
            t.named = true;
            t.permission = true;
            t.operand = true;
        });
        let operand_and_lease = ties(|t| {
            t.named = true;
            t.permission = true;
            t.held_lease = true;
            t.operand = true;
        });
        let installed = ties(|t| {
            t.installed = true;
            t.permission = true;
        });
        let installed_only = ties(|t| t.installed = true);
        let operand_installed = ties(|t| {
            t.installed = true;
            t.named = true;
            t.permission = true;
            t.operand = true;
        });
        let one = |best: u32, rung, others: &[u32]| Pick::One {
            best: NodeId(best),
            rung,
            others: others.iter().map(|&i| NodeId(i)).collect(),
        };
        let table: Vec<(&str, Vec<Ties>, Pick)> = vec![
            ("nobody", vec![], Pick::Nobody),
            ("rung 1 beats rung 4", vec![named_rbac, adder], one(1, Some(Rung::Adder), &[0])),
            ("rung 2 beats rung 3", vec![domain_lease, reporter], one(1, Some(Rung::Reporter), &[0])),
            ("a held lease with RBAC is rung 3", vec![held, named_rbac], one(0, Some(Rung::Lease), &[1])),
            ("a name with a wide role is rung 4", vec![rbac, named_admin], one(1, Some(Rung::NameAndPermission), &[0])),
            ("permission on /finalizers beats permission", vec![rbac, rbac_finalizers], one(1, None, &[0])),
            ("a name alone is weak", vec![name], one(0, None, &[])),
            ("an operand is weak by its name and permission", vec![operand, rbac], one(0, None, &[1])),
            (
                "an operand is the controller when a second rung agrees: its lease",
                vec![operand_and_lease, rbac],
                one(0, Some(Rung::Lease), &[1]),
            ),
            (
                "an operand is the controller when a second rung agrees: its installation",
                vec![rbac, operand_installed],
                one(1, Some(Rung::NameAndPermission), &[0]),
            ),
            ("install provenance with RBAC is rung 4", vec![rbac, installed], one(1, Some(Rung::Provenance), &[0])),
            (
                "a name with RBAC beats install provenance",
                vec![installed, named_rbac],
                one(1, Some(Rung::NameAndPermission), &[0]),
            ),
            ("install provenance without RBAC is nothing", vec![installed_only], one(0, None, &[])),
            (
                "two product prefixes tie, whichever runs",
                vec![prefix, prefix],
                Pick::Tie { tied: vec![NodeId(0), NodeId(1)], rung: None },
            ),
            (
                "two adders tie",
                vec![adder, adder, rbac],
                Pick::Tie { tied: vec![NodeId(0), NodeId(1)], rung: Some(Rung::Adder) },
            ),
            (
                "more evidence at the same rung wins",
                vec![
                    adder,
                    ties(|t| {
                        t.adder = true;
                        t.domain_lease = true;
                    }),
                ],
                one(1, Some(Rung::Adder), &[0]),
            ),
        ];
        for (what, cands, want) in table {
            assert_eq!(run(&cands), want, "{what}");
        }
    }
}

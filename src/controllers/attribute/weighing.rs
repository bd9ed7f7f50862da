//! One line that says how the rungs weighed (contract §4.3.3, "Weighing the rungs together"):
//! which rungs tie the chosen candidates, which tie another one instead, and which are silent,
//! each said once.

use std::collections::BTreeMap;

use super::super::workload::describe;
use super::{Rung, Ties};
use crate::graph::{Graph, NodeId};

/// Whether `rung` ties the candidate.
fn ties_at(t: &Ties, rung: Rung) -> bool {
    t.rungs().contains(&rung)
}

fn short(rung: Rung) -> &'static str {
    match rung {
        Rung::Adder => "1 (the field manager)",
        Rung::Reporter => "2 (Events)",
        Rung::Lease => "3 (a leader lease)",
        Rung::NameAndPermission => "4 (a name with RBAC)",
        Rung::Provenance => "4 (install provenance with RBAC)",
    }
}

/// `weighing the rungs: rung 1 (…) and 3 (…) tie A; rung 2 (…) ties B instead; silent: 4 (…)`;
/// `None` when no rung ties anyone.
pub(super) fn line(g: &Graph, cands: &BTreeMap<NodeId, Ties>, chosen: &[NodeId]) -> Option<String> {
    let all = [Rung::Adder, Rung::Reporter, Rung::Lease, Rung::NameAndPermission, Rung::Provenance];
    let name = |w: &NodeId| g.object(*w).map(describe).unwrap_or_default();
    let mut agree = Vec::new();
    let mut disagree = Vec::new();
    let mut silent = Vec::new();
    for r in all {
        let tied: Vec<&NodeId> = cands.iter().filter(|(_, t)| ties_at(t, r)).map(|(w, _)| w).collect();
        if tied.iter().any(|w| chosen.contains(w)) {
            agree.push(short(r));
        } else if let Some(w) = tied.first() {
            disagree.push(format!("rung {} ties {} instead", short(r), name(w)));
        } else if r != Rung::Provenance {
            // install provenance is a kind of rung 4, said only where it ties someone
            silent.push(short(r));
        }
    }
    if agree.is_empty() && disagree.is_empty() {
        return None;
    }
    let who: Vec<String> = chosen.iter().take(4).map(name).collect();
    let mut parts = Vec::new();
    if !agree.is_empty() {
        let (at, verb) = if agree.len() == 1 { ("rung", "ties") } else { ("rungs", "tie") };
        parts.push(format!("{at} {} {verb} {}", and_list(&agree), who.join(" and ")));
    }
    parts.extend(disagree);
    if !silent.is_empty() {
        parts.push(format!("silent: {}", silent.join(", ")));
    }
    Some(format!("weighing the rungs: {}", parts.join("; ")))
}

/// `a`, `a and b`, `a, b and c`.
fn and_list(items: &[&str]) -> String {
    match items {
        [] => String::new(),
        [one] => one.to_string(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

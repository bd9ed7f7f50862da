//! `tree`: dependents downward (or owners upward) from one object, as the GC's graph holds
//! them — by uid, so invalid references appear under the owner they name, flagged.
//!
//! The tree is a flat pre-order list with depths, built without recursion, so a
//! 10,000-deep owner chain renders as well as a shallow one. A node reached a second time
//! (several owners, cycles) is listed again but not expanded.

use std::collections::HashSet;

use crate::collector::{Dangling, OwnerState, classify_reference};
use crate::controllers::{ControllerState, Liveness};
use crate::diagnose::FindingCode;
use crate::graph::{Graph, NodeId};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
/// Which way the tree grows from its root.
pub enum Direction {
    /// Down: the objects that name the root as an owner, and theirs.
    Dependents,
    /// Up: the root's owners, and theirs.
    Owners,
}

impl Direction {
    /// `dependents` or `owners`: the JSON key of the children, and the word for them.
    pub fn as_str(self) -> &'static str {
        match self {
            Direction::Dependents => "dependents",
            Direction::Owners => "owners",
        }
    }
}

/// The owner reference between a node and its parent in the tree.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Edge {
    /// The reference's `controller: true`.
    pub controller: bool,
    /// The reference's `blockOwnerDeletion: true`: a foreground-deleting owner waits for it.
    pub block_owner_deletion: bool,
}

#[derive(Clone, Debug, PartialEq, Eq)]
/// One line of the tree, in pre-order.
pub struct Entry {
    /// Distance from the root (0 for the root).
    pub depth: usize,
    /// The object (or virtual owner) on this line.
    pub node: NodeId,
    /// The reference that led here from the parent; `None` for the root.
    pub edge: Option<Edge>,
    /// Finding codes of the node on its own (see [`problems`]).
    pub problems: Vec<FindingCode>,
    /// Already shown above: listed, not expanded again.
    pub repeated: bool,
    /// An owner the reference names by a uid that is gone, while an object of its kind and
    /// name exists under another uid (the owner was deleted and recreated): that object. The
    /// GC treats the owner as absent; the tree says it was recreated rather than not found.
    pub recreated_as: Option<NodeId>,
}

#[derive(Clone, Debug)]
/// A `tree` answer: the flat pre-order list from the root.
pub struct Tree {
    /// Which way it was grown.
    pub direction: Direction,
    /// The lines, root first, each child right after its parent.
    pub entries: Vec<Entry>,
}

/// The tree from `root`, iterative and depth-first; a node reached again is listed with
/// `repeated` and not expanded, so cycles terminate.
pub fn build(g: &Graph, live: &Liveness, root: NodeId, direction: Direction) -> Tree {
    let cycles: HashSet<NodeId> = crate::graph::owner_cycles(g).into_iter().flatten().collect();
    let mut entries = Vec::new();
    let mut shown = HashSet::new();
    // (depth, node, edge, recreated as)
    let mut stack = vec![(0usize, root, None, None)];
    while let Some((depth, node, edge, recreated_as)) = stack.pop() {
        let repeated = !shown.insert(node);
        let problems = problems(g, live, node, &cycles);
        entries.push(Entry { depth, node, edge, problems, repeated, recreated_as });
        if repeated {
            continue;
        }
        let mut next: Vec<(NodeId, Edge, Option<NodeId>)> = match direction {
            Direction::Dependents => {
                g.node(node).dependents.iter().map(|&d| (d, edge_between(g, d, node), None)).collect()
            }
            Direction::Owners => {
                let mut owners: Vec<(NodeId, Edge, Option<NodeId>)> = g
                    .owners(node)
                    .iter()
                    .filter_map(|r| {
                        let o = g.by_uid(&r.uid)?;
                        let recreated = match classify_reference(g, node, r) {
                            OwnerState::Dangling(Dangling::UidMismatch { live }) => Some(live),
                            _ => None,
                        };
                        Some((o, edge_between(g, node, o), recreated))
                    })
                    .collect();
                owners.dedup_by_key(|(o, ..)| *o);
                owners
            }
        };
        next.sort_by(|a, b| order_key(g, a.0).cmp(&order_key(g, b.0)));
        for (n, e, recreated) in next.into_iter().rev() {
            stack.push((depth + 1, n, Some(e), recreated));
        }
    }
    Tree { direction, entries }
}

fn order_key(g: &Graph, n: NodeId) -> (&str, &str, &str) {
    let id = g.identity(n);
    (id.kind, id.namespace.unwrap_or(""), id.name)
}

fn edge_between(g: &Graph, dependent: NodeId, owner: NodeId) -> Edge {
    let mut e = Edge { controller: false, block_owner_deletion: false };
    for r in g.refs_to(dependent, owner) {
        e.controller |= r.is_controller();
        e.block_owner_deletion |= r.blocks();
    }
    e
}

/// Finding codes that apply to a node on its own: its reference problems, a cycle, and
/// finalizers whose controller is not alive.
pub fn problems(g: &Graph, live: &Liveness, n: NodeId, cycles: &HashSet<NodeId>) -> Vec<FindingCode> {
    let mut out = Vec::new();
    for r in g.owners(n) {
        if let Some(code) = FindingCode::of_owner_state(&classify_reference(g, n, r)) {
            out.push(code);
        }
    }
    if cycles.contains(&n) {
        out.push(FindingCode::OwnerReferenceCycle);
    }
    if let Some(o) = g.object(n).filter(|o| o.is_deleting()) {
        for f in &o.finalizers {
            match live.finalizer(n, f).controller {
                ControllerState::Down => out.push(FindingCode::FinalizerControllerDown),
                ControllerState::Missing => out.push(FindingCode::FinalizerControllerMissing),
                _ => {}
            }
        }
    }
    out.sort();
    out.dedup();
    out
}

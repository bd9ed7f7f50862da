//! What `tree -o dot` and `tree -o mermaid` draw, decided once: each object of the tree once,
//! each owner → dependent reference once, with the states the pictures style distinctly
//! (terminating, stuck, absent; blocking and invalid references). The two renderers only
//! spell this in their own syntax.

use std::collections::HashSet;

use crate::collector::{Dangling, OwnerState, classify_reference};
use crate::diagnose::FindingCode;
use crate::graph::{Graph, NodeId};
use crate::tree::{Direction, Tree};

use super::style::sanitize;

/// One object of the picture.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Node {
    /// The graph node it draws; also its identity in the picture.
    pub id: NodeId,
    /// `Kind/name`, sanitized (control and bidi characters escaped), not yet quoted.
    pub title: String,
    /// The namespace the object lives in (for a virtual owner: its first dependent's).
    pub namespace: Option<String>,
    /// Further label lines: deletion state, finalizers, problem codes; sanitized.
    pub details: Vec<String>,
    /// The object the tree was asked about.
    pub root: bool,
    /// Referenced by a dependent, never observed (a virtual node of the GC's graph).
    pub absent: bool,
    /// Has a deletionTimestamp.
    pub terminating: bool,
    /// Terminating on a finalizer whose controller is down or missing.
    pub stuck: bool,
}

/// One owner reference: `owner` → `dependent`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Edge {
    /// The owner, where the arrow starts.
    pub owner: NodeId,
    /// The dependent holding the reference.
    pub dependent: NodeId,
    /// The reference's `controller: true`.
    pub controller: bool,
    /// `blockOwnerDeletion: true`: a foreground deletion of the owner waits for the dependent.
    pub blocking: bool,
    /// Why the GC would not honour the reference (dangling, uid mismatch, …), if it would not.
    pub invalid: Option<&'static str>,
}

impl Edge {
    /// The text on the edge: the blocking mark and the reason it is invalid, if any.
    pub fn label(&self) -> Option<String> {
        match (self.blocking, self.invalid) {
            (false, None) => None,
            (true, None) => Some("blockOwnerDeletion".to_string()),
            (false, Some(why)) => Some(why.to_string()),
            (true, Some(why)) => Some(format!("{why}, blockOwnerDeletion")),
        }
    }
}

#[derive(Clone, Debug)]
/// A tree as a graph to draw: nodes once each, edges once each.
pub struct Picture {
    /// Which way the tree was grown (arrows still point owner → dependent).
    pub direction: Direction,
    /// Objects in order of first appearance in the tree.
    pub nodes: Vec<Node>,
    /// References between them, in order of first appearance.
    pub edges: Vec<Edge>,
}

impl Picture {
    /// Namespaces in order of first appearance, each once.
    pub fn namespaces(&self) -> Vec<&str> {
        let mut seen = HashSet::new();
        self.nodes.iter().filter_map(|n| n.namespace.as_deref()).filter(|ns| seen.insert(*ns)).collect()
    }

    /// The node of the object the tree was asked about.
    pub fn root(&self) -> Option<&Node> {
        self.nodes.iter().find(|n| n.root)
    }
}

/// The picture of a tree: each entry's object once, each entry's edge once.
pub fn build(g: &Graph, tree: &Tree) -> Picture {
    let mut nodes: Vec<Node> = Vec::new();
    let mut seen = HashSet::new();
    let mut edges: Vec<Edge> = Vec::new();
    let mut seen_edges = HashSet::new();
    // the entry at each depth on the way down, to find an entry's parent
    let mut path: Vec<NodeId> = Vec::new();
    for (i, e) in tree.entries.iter().enumerate() {
        path.truncate(e.depth);
        if let Some(&parent) = path.last() {
            let (owner, dependent) = match tree.direction {
                Direction::Dependents => (parent, e.node),
                Direction::Owners => (e.node, parent),
            };
            if seen_edges.insert((owner, dependent)) {
                let edge = e.edge.unwrap_or(crate::tree::Edge { controller: false, block_owner_deletion: false });
                edges.push(Edge {
                    owner,
                    dependent,
                    controller: edge.controller,
                    blocking: edge.block_owner_deletion,
                    invalid: invalid_reason(g, dependent, owner),
                });
            }
        }
        path.push(e.node);
        if seen.insert(e.node) {
            nodes.push(node(g, e, i == 0));
        }
    }
    Picture { direction: tree.direction, nodes, edges }
}

fn node(g: &Graph, e: &crate::tree::Entry, root: bool) -> Node {
    let (n, problems) = (e.node, &e.problems);
    let id = &g.identity(n);
    let object = g.object(n);
    let mut details = Vec::new();
    match object {
        None => match e.recreated_as {
            Some(live) => details.push(format!(
                "absent: recreated, uid {} now (uid {} not found)",
                sanitize(&g.identity(live).uid.0),
                sanitize(&id.uid.0)
            )),
            None => details.push("absent: referenced, not found".to_string()),
        },
        Some(o) if o.is_deleting() => {
            details.push("Terminating".to_string());
            if !o.finalizers.is_empty() {
                details.push(format!("finalizers: {}", sanitize(&o.finalizers.join(", "))));
            }
        }
        Some(_) => {}
    }
    if !problems.is_empty() {
        let codes: Vec<&str> = problems.iter().map(|p| p.as_str()).collect();
        details.push(format!("! {}", codes.join(", ")));
    }
    Node {
        id: n,
        title: sanitize(&format!("{}/{}", id.kind, id.name)),
        namespace: id.namespace.map(sanitize),
        details,
        root,
        absent: object.is_none(),
        terminating: object.is_some_and(|o| o.is_deleting()),
        stuck: problems
            .iter()
            .any(|p| matches!(p, FindingCode::FinalizerControllerDown | FindingCode::FinalizerControllerMissing)),
    }
}

/// Why the GC would not honour `dependent`'s reference(s) to `owner`, if it would not.
fn invalid_reason(g: &Graph, dependent: NodeId, owner: NodeId) -> Option<&'static str> {
    g.refs_to(dependent, owner).find_map(|r| match classify_reference(g, dependent, r) {
        OwnerState::Solid | OwnerState::Waiting => None,
        OwnerState::Unread => Some("not read"),
        OwnerState::Dangling(Dangling::Absent) => Some("dangling"),
        OwnerState::Dangling(Dangling::UidMismatch { .. }) => Some("uid mismatch"),
        OwnerState::Dangling(Dangling::InvalidNamespace { .. }) => Some("invalid namespace"),
        OwnerState::Dangling(Dangling::WrongCoordinates { .. }) => Some("wrong kind or name"),
        OwnerState::Unresolvable(_) => Some("unresolvable kind"),
        OwnerState::NamespacedOwnerOfClusterScoped => Some("namespaced owner of cluster-scoped"),
    })
}

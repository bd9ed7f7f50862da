//! Node heartbeats: the Leases in kube-node-lease, one per node, each renewed by its kubelet
//! every 10 s by default. They are evidence only of the kubelets an answer judges: the nodes
//! of the pods in graceful termination it has read (`diagnose::kubelet::node_state`), and the
//! Node asked about (its Lease is its dependent). Everything else an answer reads Leases for
//! is controllers, and no controller holds a node's heartbeat (`controllers::lease`).
//!
//! So a why-stuck, tree or plan answer lists Leases everywhere but there, then reads the
//! heartbeats of those nodes by name. A cluster of 300 nodes renews 30 heartbeats a second:
//! listed, they are most of the Leases' bytes; followed by `--watch`, most of its traffic.
//! Kept whole where the read is for every object: a capture of the cluster, `why-stuck --all
//! -A` (whose job is to find whatever is being deleted, a heartbeat too), and an answer about
//! kube-node-lease itself.
//!
//! Nodes themselves are listed as before (owners of mirror pods and heartbeats, kubelet
//! versions, the READY column of a tree), but each kubelet also reports its Node's status every
//! 5 minutes: one report a second at 300 nodes, each of which would judge a watched answer
//! again. So the list is followed quietly (`Follow::Quietly`: what it brings is seen at the
//! next judging) and the Nodes judged are read by name too, followed closely, up to
//! [`NODE_LEASE_READS`]`.gets` of them (more: their heartbeats still judge the answer again
//! on each change; their Nodes' reports wait for the next judging).

use std::collections::BTreeSet;

use crate::names::{LEASE, NODE_LEASE_NAMESPACE};
use crate::source::live::ask::{Answered, Ask, Body, Named};
use crate::source::live::{Discovery, ListType};

use super::{Limits, Scope, TargetRef, Wants, by_name};

/// Node heartbeats read by name: a GET each up to 16 nodes, more in one list of kube-node-lease
/// kept to them.
pub const NODE_LEASE_READS: Limits = Limits { gets: 16, namespaces: 1 };

/// Whether `wants` reads every heartbeat with the other Leases (see the module docs).
pub fn all_wanted(wants: &Wants) -> bool {
    let about_them = |ns: &str| ns == NODE_LEASE_NAMESPACE;
    match &wants.scope {
        Scope::Cluster => wants.capture || wants.sweeping() || wants.focus.as_deref().is_some_and(about_them),
        Scope::Namespace(ns) => about_them(ns),
    }
}

/// The list of Leases in every namespace but kube-node-lease.
pub fn leases_but_heartbeats(ask: Ask) -> Ask {
    ask.except(BTreeSet::from([NODE_LEASE_NAMESPACE.to_string()]))
}

/// The nodes whose kubelets an answer over `read` judges: those of the pods in graceful
/// termination (a grace period left, bound to a node, read with their spec), and the Node
/// asked about.
pub fn judged(read: &[Answered], target: Option<&TargetRef>) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for a in read.iter().filter(|a| a.ask.kind.group.is_empty() && a.ask.kind.kind == "Pod") {
        for doc in a.result.iter().flatten() {
            let Some(m) = &doc.metadata else { continue };
            if m.deletion_timestamp.is_none() || m.deletion_grace_period_seconds.unwrap_or(0) == 0 {
                continue;
            }
            if let Some(node) = doc.body_field("spec").and_then(|s| s.get("nodeName")).and_then(|n| n.as_str()) {
                out.insert(node.to_string());
            }
        }
    }
    if let Some(t) = target.filter(|t| t.group.is_empty() && t.kind == "Node") {
        out.insert(t.name.clone());
    }
    out
}

/// The reads of the heartbeats of `nodes` that `read` does not hold yet, in full; and of the
/// Nodes themselves, by name, when they are few (asked only where the plan lists Nodes
/// quietly: where not every heartbeat is wanted, [`all_wanted`]).
pub fn heartbeat_asks(d: &Discovery, nodes: BTreeSet<String>, read: &[Answered]) -> Vec<Ask> {
    let mut asks = Vec::new();
    if let Some(t) = d.find("", "Node").filter(|_| nodes.len() <= NODE_LEASE_READS.gets) {
        let why = "a node whose kubelet the answer judges, followed closely";
        asks.extend(nodes.iter().map(|n| Ask::get(t, None, n, why).full()));
    }
    let Some(t) = d.find(LEASE.0, LEASE.1) else { return asks };
    if read.iter().any(|a| a.ask.covers(t, Some(NODE_LEASE_NAMESPACE), Body::Full)) {
        return asks;
    }
    let named: Named = nodes.into_iter().map(|n| (Some(NODE_LEASE_NAMESPACE.to_string()), n)).collect();
    let heartbeats = by_name(t, &named, NODE_LEASE_READS, "the heartbeat of a node whose kubelet the answer judges");
    asks.extend(heartbeats.into_iter().map(Ask::full));
    asks
}

/// Whether `t` is Node.
pub fn is_node(t: &ListType) -> bool {
    t.group.is_empty() && t.kind == "Node"
}

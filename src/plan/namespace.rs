//! The namespace controller (`namespaced_resources_deleter.go`, gc-semantics §5.2): pods
//! first, then every other namespaced type with `propagationPolicy: Background`; the
//! `kubernetes` spec finalizer goes only once nothing remains and discovery works. Pods first
//! is ordered namespace deletion (KEP-5080, 1.33+); before 1.33 everything is deleted in one
//! wave, as `crate::release` judges the cluster's version (the plan's notes say how).

use std::collections::HashMap;

use super::world::{NS_FINALIZER, World};
use super::{Cascade, ObjRef};
use crate::controllers::{ControllerState, Liveness};
use crate::graph::NodeId;

pub const NAMESPACE_CONTROLLER: &str = "namespace-controller";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    /// Nothing deleted yet.
    Start,
    /// Pods deleted; the rest waits until no pod remains.
    PodsDeleted,
    /// Everything deleted; `kubernetes` waits until nothing remains.
    ContentDeleted,
    Finalized,
}

struct NsState {
    phase: Phase,
    /// Ordered namespace deletion: nothing but pods until every pod is gone.
    pods_first: bool,
    /// Pods, then the other objects by (group, resource, name).
    pods: Vec<NodeId>,
    others: Vec<NodeId>,
    /// Objects whose type the controller cannot discover or delete.
    undeletable: Vec<NodeId>,
    /// Why discovery fails, if it does.
    discovery_failure: Option<String>,
}

/// Per-namespace progress of the namespace controller.
#[derive(Default)]
pub struct NamespaceController {
    states: HashMap<NodeId, NsState>,
}

impl NamespaceController {
    /// One pass over the terminating namespaces of the plan; true if it did something. It
    /// runs only when nothing else moves (the controller requeues itself after estimates).
    pub fn round(&mut self, w: &mut World, lv: &Liveness) -> bool {
        let namespaces: Vec<NodeId> = w.deleting.iter().copied().filter(|&n| is_namespace(w, n)).collect();
        let mut changed = false;
        for ns in namespaces {
            if !w.stored(ns) || !w.state(ns).is_some_and(|s| s.spec_finalizers.iter().any(|f| f == NS_FINALIZER)) {
                continue;
            }
            if lv.finalizer(ns, NS_FINALIZER).controller != ControllerState::Alive {
                continue;
            }
            let st = self.states.entry(ns).or_insert_with(|| scan(w, ns));
            match st.phase {
                Phase::Start => {
                    for &p in &st.pods {
                        if w.stored(p) {
                            w.delete(p, NAMESPACE_CONTROLLER, Some(Cascade::Background), None);
                        }
                    }
                    st.phase = Phase::PodsDeleted;
                    if !st.pods_first {
                        // one wave: the rest goes in the same pass, whatever the pods do
                        delete_others(w, ns, st);
                    }
                    changed = true;
                }
                Phase::PodsDeleted => {
                    if st.pods.iter().any(|&p| w.stored(p)) {
                        continue;
                    }
                    delete_others(w, ns, st);
                    changed = true;
                }
                Phase::ContentDeleted => {
                    if remaining(w, st).next().is_some() || st.discovery_failure.is_some() {
                        continue;
                    }
                    w.finalize_namespace(ns, NAMESPACE_CONTROLLER);
                    st.phase = Phase::Finalized;
                    changed = true;
                }
                Phase::Finalized => {}
            }
        }
        changed
    }

    /// Why a namespace keeps its `kubernetes` finalizer, if it does.
    pub fn blocked_reason(&self, w: &World, lv: &Liveness, ns: NodeId) -> Option<String> {
        if !w.state(ns).is_some_and(|s| s.spec_finalizers.iter().any(|f| f == NS_FINALIZER)) {
            return None;
        }
        let owner = lv.finalizer(ns, NS_FINALIZER);
        if owner.controller != ControllerState::Alive {
            return Some(format!(
                "{NS_FINALIZER}: the namespace controller is {} ({})",
                owner.controller.as_str(),
                owner.evidence.join("; ")
            ));
        }
        let st = self.states.get(&ns)?;
        let mut why = Vec::new();
        let pods: Vec<NodeId> = st.pods.iter().copied().filter(|&p| w.stored(p)).collect();
        if st.phase == Phase::PodsDeleted && !pods.is_empty() {
            why.push(format!(
                "ordered namespace deletion: pods are deleted first and {} remain ({}); nothing else has been attempted meanwhile",
                pods.len(),
                list(w, &pods)
            ));
        } else {
            let left: Vec<NodeId> = remaining(w, st).collect();
            if !left.is_empty() {
                why.push(format!("content remains: {}", list(w, &left)));
            }
        }
        if let Some(d) = &st.discovery_failure {
            why.push(format!("discovery fails ({d}), so the namespace controller never removes {NS_FINALIZER}"));
        }
        (!why.is_empty()).then(|| format!("{NS_FINALIZER}: {}", why.join("; ")))
    }
}

/// Deletes every non-pod object of the namespace (Background), as one pass of the controller.
fn delete_others(w: &mut World, ns: NodeId, st: &mut NsState) {
    for &o in &st.others {
        if w.stored(o) {
            w.delete(o, NAMESPACE_CONTROLLER, Some(Cascade::Background), None);
        }
    }
    if st.others.len() > 1 {
        let name = &w.g.identity(ns).name;
        w.note(format!(
            "namespace {name}: the namespace controller and the garbage collector both delete owned objects; whichever comes first wins, the other sees NotFound"
        ));
    }
    st.phase = Phase::ContentDeleted;
}

fn remaining<'a>(w: &'a World, st: &'a NsState) -> impl Iterator<Item = NodeId> + 'a {
    st.pods.iter().chain(&st.others).chain(&st.undeletable).copied().filter(|&o| w.stored(o))
}

fn list(w: &World, ids: &[NodeId]) -> String {
    const MAX: usize = 10;
    let mut s: Vec<String> = ids.iter().take(MAX).map(|&i| ObjRef::of_node(w.g, i).display()).collect();
    if ids.len() > MAX {
        s.push(format!("and {} more", ids.len() - MAX));
    }
    s.join(", ")
}

pub fn is_namespace(w: &World, n: NodeId) -> bool {
    w.kind_of(n) == ("", "Namespace")
}

/// One pass over the graph: the namespace's content and the discovery health.
fn scan(w: &mut World, ns: NodeId) -> NsState {
    let name = w.g.identity(ns).name;
    let mut pods = Vec::new();
    let mut others: Vec<(String, String, String, NodeId)> = Vec::new();
    let mut undeletable = Vec::new();
    let mut failing = Vec::new();
    if let Some(c) = w.g.object(ns).and_then(|o| o.condition("NamespaceDeletionDiscoveryFailure"))
        && c.is_true()
    {
        failing.push(format!("condition NamespaceDeletionDiscoveryFailure: {}", c.message));
    }
    for (n, _) in w.g.observed() {
        let id = w.g.identity(n);
        if id.kind == "APIService" && id.group() == "apiregistration.k8s.io" {
            if let Some(c) = w.g.object(n).and_then(|o| o.condition("Available"))
                && c.status == "False"
            {
                failing.push(format!("APIService {} is not Available: {}", id.name, c.message));
            }
            continue;
        }
        if id.namespace != Some(name) {
            continue;
        }
        match w.g.mapper().kind(id.group(), id.kind) {
            Some(t) if t.namespaced && t.verbs.iter().any(|v| v == "delete") => {
                if id.group().is_empty() && id.kind == "Pod" {
                    pods.push(n);
                } else {
                    others.push((t.group.clone(), t.plural.clone(), id.name.to_string(), n));
                }
            }
            _ => undeletable.push(n),
        }
    }
    others.sort();
    let order = crate::release::namespace_deletion(w.g);
    w.note(format!(
        "namespace {name}: {}; {}",
        if order.pods_first {
            "the namespace controller deletes its pods first, and nothing else until every pod is gone"
        } else {
            "the namespace controller deletes all of its content in one wave"
        },
        order.basis
    ));
    for &u in &undeletable {
        let r = ObjRef::of_node(w.g, u).display();
        w.note(format!("{r}: its type is not discoverable as a deletable namespaced resource, so the namespace controller cannot delete it"));
    }
    NsState {
        phase: Phase::Start,
        pods_first: order.pods_first,
        pods,
        others: others.into_iter().map(|t| t.3).collect(),
        undeletable,
        discovery_failure: (!failing.is_empty()).then(|| failing.join("; ")),
    }
}

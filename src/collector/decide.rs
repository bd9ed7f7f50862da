//! The GC worker's decisions as values: mirrors `attemptToDeleteItem`,
//! `processDeletingDependentsItem` and `attemptToOrphanWorker` (garbagecollector.go),
//! gc-semantics §3.2, §3.6, §3.7. Decide here, apply elsewhere (`plan::world`).
//!
//! The functions read the cluster through [`GcView`], so the planner's simulated world and
//! any other state can be judged with the same code.

use crate::names::{FOREGROUND_DELETION, ORPHAN};

use crate::collector::references::{LiveOwner, OwnerState, classify};
use crate::discovery::Unresolvable;
use crate::graph::{Graph, NodeId};
use crate::snapshot::{OwnerRef, Uid};

/// The propagation policy of a DELETE the GC sends (always explicit, §3.4).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Propagation {
    /// Dependents lose their owner reference and stay.
    Orphan,
    /// The object goes now; the GC deletes its dependents afterwards.
    Background,
    /// The object waits (`foregroundDeletion`) until its blocking dependents are gone.
    Foreground,
}

/// What a GET of an item by uid returns.
#[derive(Clone, Copy, Debug)]
pub struct LiveItem<'a> {
    /// The item's namespace; `None` when cluster-scoped.
    pub namespace: Option<&'a str>,
    /// Its owner references as the server holds them now.
    pub owners: &'a [OwnerRef],
    /// Its finalizers now (`foregroundDeletion`/`orphan` decide the propagation).
    pub finalizers: &'a [String],
}

/// The state the GC reads: the API server (GETs) and its own graph (flags, dependents).
pub trait GcView {
    /// The graph the view's node ids refer to.
    fn graph(&self) -> &Graph;
    /// The REST mapping of an apiVersion/kind now; `Ok(namespaced)`. A type whose CRD has
    /// gone no longer maps.
    fn mapping(&self, api_version: &str, kind: &str) -> Result<bool, Unresolvable>;
    /// GET of an observed item by its identity: `None` if it is gone.
    fn item(&self, n: NodeId) -> Option<LiveItem<'_>>;
    /// GET by group, kind, namespace (`None` for cluster-scoped types) and name.
    fn get(&self, group: &str, kind: &str, namespace: Option<&str>, name: &str) -> Option<LiveOwner<'_>>;
    /// Whether the node is still in the GC graph.
    fn in_graph(&self, n: NodeId) -> bool;
    /// Whether the node stands for an owner that was referenced but never observed.
    fn is_virtual(&self, n: NodeId) -> bool;
    /// Graph flag `beingDeleted`.
    fn being_deleted(&self, n: NodeId) -> bool;
    /// Graph flag `deletingDependents`.
    fn deleting_dependents(&self, n: NodeId) -> bool;
    /// Whether the node has at least one dependent in the graph.
    fn has_dependents(&self, n: NodeId) -> bool;
    /// Whether some graph dependent of the node is `deletingDependents` (the cycle check).
    fn any_dependent_deleting_dependents(&self, n: NodeId) -> bool;
    /// `blockingDependents`: graph dependents with a `blockOwnerDeletion: true` ref to `n`.
    fn blocking_dependents(&self, n: NodeId) -> Vec<NodeId>;
    /// Graph dependents of `n` (for orphaning).
    fn dependents(&self, n: NodeId) -> Vec<NodeId>;
}

/// Why the GC cannot act on an item at all.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Stuck {
    /// The item's own kind, or an owner's, has no REST mapping: requeued forever (§6.9).
    Unresolvable {
        /// The apiVersion that does not map.
        api_version: String,
        /// The kind that does not map.
        kind: String,
        /// Why it does not.
        why: Unresolvable,
    },
    /// A cluster-scoped item names a namespaced owner type: dropped, never retried (§6.6).
    NamespacedOwnerOfClusterScoped {
        /// The offending owner reference.
        owner: OwnerRef,
    },
}

/// What `attemptToDeleteItem` decides for one item.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decision {
    /// §3.2 A: being deleted without `foregroundDeletion`: wait for the final delete.
    AwaitFinalDelete,
    /// No owner references, or every owner is solid.
    NotGarbage,
    /// The item (or a virtual owner) is not found, or has another uid: virtual delete event.
    Gone,
    /// The GC can do nothing with the item.
    Stuck(Stuck),
    /// §3.2 F1: a solid owner remains; strip the dangling and waiting references.
    RemoveOwnerReferences {
        /// The owner uids whose references are removed.
        uids: Vec<Uid>,
    },
    /// §3.2 F2/F3: delete the item, after unblocking its references if a dependent is
    /// already deleting its dependents (the cycle case).
    Delete {
        /// The policy of the DELETE.
        propagation: Propagation,
        /// Set `blockOwnerDeletion: false` on the item's references first.
        unblock: bool,
    },
    /// §3.6: a foreground owner with no blocking dependent left loses `foregroundDeletion`.
    RemoveForegroundFinalizer,
    /// §3.6: a foreground owner waits; the listed blocking dependents that are not themselves
    /// deleting dependents are enqueued.
    AwaitBlockingDependents {
        /// The blocking dependents put back on the attemptToDelete queue.
        enqueue: Vec<NodeId>,
        /// Every blocking dependent the owner waits for.
        blocking: Vec<NodeId>,
    },
}

/// `attemptToDeleteItem` for node `n`.
pub fn attempt_to_delete_item(v: &impl GcView, n: NodeId) -> Decision {
    // A
    if v.being_deleted(n) && !v.deleting_dependents(n) {
        return Decision::AwaitFinalDelete;
    }
    // B
    let id = &v.graph().identity(n);
    let namespaced = match v.mapping(id.api_version, id.kind) {
        Ok(ns) => ns,
        Err(why) => {
            return Decision::Stuck(Stuck::Unresolvable {
                api_version: id.api_version.to_string(),
                kind: id.kind.to_string(),
                why,
            });
        }
    };
    if v.is_virtual(n) {
        if namespaced && id.namespace.is_none() {
            return Decision::Stuck(Stuck::NamespacedOwnerOfClusterScoped {
                owner: OwnerRef {
                    api_version: id.api_version.to_string(),
                    kind: id.kind.to_string(),
                    name: id.name.to_string(),
                    uid: id.uid.clone(),
                    controller: None,
                    block_owner_deletion: None,
                },
            });
        }
        let ns = if namespaced { id.namespace } else { None };
        return match v.get(id.group(), id.kind, ns, id.name) {
            Some(live) if live.uid == id.uid => Decision::NotGarbage,
            _ => Decision::Gone,
        };
    }
    let Some(item) = v.item(n) else { return Decision::Gone };
    // C
    if v.deleting_dependents(n) {
        return process_deleting_dependents_item(v, n);
    }
    // D
    if item.owners.is_empty() {
        return Decision::NotGarbage;
    }
    // E
    let (mut solid, mut dangling, mut waiting) = (0usize, Vec::new(), Vec::new());
    for r in item.owners {
        match classify_in(v, item.namespace, r) {
            OwnerState::Solid => solid += 1,
            OwnerState::Waiting => waiting.push(r.uid.clone()),
            // `Unread` is the input's state, never the view's: `classify_in` does not return it
            OwnerState::Dangling(_) | OwnerState::Unread => dangling.push(r.uid.clone()),
            OwnerState::Unresolvable(why) => {
                return Decision::Stuck(Stuck::Unresolvable {
                    api_version: r.api_version.clone(),
                    kind: r.kind.clone(),
                    why,
                });
            }
            OwnerState::NamespacedOwnerOfClusterScoped => {
                return Decision::Stuck(Stuck::NamespacedOwnerOfClusterScoped { owner: r.clone() });
            }
        }
    }
    // F1
    if solid > 0 {
        if dangling.is_empty() && waiting.is_empty() {
            return Decision::NotGarbage;
        }
        let mut uids = dangling;
        for w in waiting {
            if !uids.contains(&w) {
                uids.push(w);
            }
        }
        uids.dedup();
        return Decision::RemoveOwnerReferences { uids };
    }
    // F2
    if !waiting.is_empty() && v.has_dependents(n) {
        return Decision::Delete {
            propagation: Propagation::Foreground,
            unblock: v.any_dependent_deleting_dependents(n),
        };
    }
    // F3
    let propagation = if item.finalizers.iter().any(|f| f == ORPHAN) {
        Propagation::Orphan
    } else if item.finalizers.iter().any(|f| f == FOREGROUND_DELETION) {
        Propagation::Foreground
    } else {
        Propagation::Background
    };
    Decision::Delete { propagation, unblock: false }
}

/// `processDeletingDependentsItem` (§3.6).
pub fn process_deleting_dependents_item(v: &impl GcView, n: NodeId) -> Decision {
    let blocking = v.blocking_dependents(n);
    if blocking.is_empty() {
        return Decision::RemoveForegroundFinalizer;
    }
    let enqueue = blocking.iter().copied().filter(|&d| !v.deleting_dependents(d)).collect();
    Decision::AwaitBlockingDependents { enqueue, blocking }
}

/// What `attemptToOrphanWorker` does for an owner: strip its uid from these dependents,
/// then remove its `orphan` finalizer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OrphanDecision {
    /// The graph dependents whose reference to the owner is removed.
    pub dependents: Vec<NodeId>,
}

/// `attemptToOrphanWorker` (§3.7): the dependents are the graph's, as observed now.
pub fn attempt_to_orphan(v: &impl GcView, owner: NodeId) -> OrphanDecision {
    OrphanDecision { dependents: v.dependents(owner) }
}

/// §3.3 against the view, with the view's REST mapping (a removed CRD no longer maps).
pub fn classify_in(v: &impl GcView, item_namespace: Option<&str>, r: &OwnerRef) -> OwnerState {
    if let Err(why) = v.mapping(&r.api_version, &r.kind) {
        return OwnerState::Unresolvable(why);
    }
    match classify(v.graph().mapper(), item_namespace, r, |group, kind, ns, name| v.get(group, kind, ns, name)) {
        Ok(state) => state,
        Err(()) => OwnerState::Dangling(crate::collector::references::Dangling::Absent),
    }
}

//! Classification of one owner reference: mirrors `isDangling` and `classifyReferences`
//! (garbagecollector.go), gc-semantics §3.3.

use crate::discovery::{RestMapper, Unresolvable};
use crate::graph::{Graph, NodeId, Presence};
use crate::snapshot::{OwnerRef, Uid};

/// What the GC concludes about one owner reference of an item.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OwnerState {
    /// The owner exists with this uid and is not waiting for its dependents.
    Solid,
    /// The owner is being deleted with `foregroundDeletion` (waitingForDependentsDeletion).
    Waiting,
    /// The GC looks the owner up and does not find it: the reference is garbage.
    Dangling(Dangling),
    /// The apiVersion/kind has no REST mapping: the GC requeues the item forever and never
    /// acts on it, whatever its other references say.
    Unresolvable(Unresolvable),
    /// A cluster-scoped item names a namespaced owner type: the GC drops the item, never
    /// retrying, never deleting it.
    NamespacedOwnerOfClusterScoped,
}

impl OwnerState {
    /// Whether this state stops the GC from acting on the item at all (§3.2 E).
    pub fn is_error(&self) -> bool {
        matches!(self, OwnerState::Unresolvable(_) | OwnerState::NamespacedOwnerOfClusterScoped)
    }
}

/// Why an owner reference is dangling, as far as the snapshot can tell.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Dangling {
    /// Nothing has this name, and the uid is nowhere.
    Absent,
    /// An object of this kind and name exists under another uid: the owner was recreated.
    UidMismatch { live: NodeId },
    /// The uid belongs to a namespaced object in another namespace than the dependent's: the
    /// GC looks in the dependent's namespace only.
    InvalidNamespace { actual: NodeId },
    /// The uid belongs to an object of another kind or name than the reference says.
    WrongCoordinates { actual: NodeId },
}

/// What a GET of the owner returns in the state being classified.
#[derive(Clone, Copy, Debug)]
pub struct LiveOwner<'a> {
    pub uid: &'a Uid,
    pub deleting_with_foreground: bool,
}

/// Classifies `r` on an item in `item_namespace` (`None`: cluster-scoped item). `get` is
/// the GET the GC sends: group, kind, namespace (`None` for cluster-scoped types), name.
/// `Err(())` means dangling: the caller knows best how to explain why.
#[allow(clippy::result_unit_err)]
pub fn classify<'a>(
    mapper: &RestMapper,
    item_namespace: Option<&str>,
    r: &OwnerRef,
    get: impl FnOnce(&str, &str, Option<&str>, &str) -> Option<LiveOwner<'a>>,
) -> Result<OwnerState, ()> {
    let t = match mapper.rest_mapping(&r.api_version, &r.kind) {
        Ok(t) => t,
        Err(why) => return Ok(OwnerState::Unresolvable(why)),
    };
    if item_namespace.is_none() && t.namespaced {
        return Ok(OwnerState::NamespacedOwnerOfClusterScoped);
    }
    let ns = if t.namespaced { item_namespace } else { None };
    match get(&t.group, &t.kind, ns, &r.name) {
        None => Err(()),
        Some(live) if live.uid != &r.uid => Err(()),
        Some(live) if live.deleting_with_foreground => Ok(OwnerState::Waiting),
        Some(_) => Ok(OwnerState::Solid),
    }
}

/// Classifies reference `r` of node `item` against the snapshot graph, explaining dangling
/// references (absent, recreated, wrong namespace, wrong coordinates).
pub fn classify_reference(g: &Graph, item: NodeId, r: &OwnerRef) -> OwnerState {
    let item_ns = g.node(item).identity.namespace.as_deref();
    let mut found_other = None;
    let result = classify(&g.mapper, item_ns, r, |group, kind, ns, name| {
        let id = g.find(group, kind, ns, name)?;
        let o = g.object(id)?;
        if o.uid != r.uid {
            found_other = Some(id);
        }
        Some(LiveOwner {
            uid: &o.uid,
            deleting_with_foreground: o.is_deleting() && o.has_finalizer("foregroundDeletion"),
        })
    });
    match result {
        Ok(state) => state,
        Err(()) => OwnerState::Dangling(match found_other {
            Some(live) => Dangling::UidMismatch { live },
            None => match g.by_uid(&r.uid) {
                Some(actual) if g.node(actual).presence != Presence::Virtual => {
                    let a = &g.node(actual).identity;
                    let same_coordinates = a.kind == r.kind
                        && a.name == r.name
                        && a.group() == crate::snapshot::object::group_of(&r.api_version);
                    if same_coordinates && a.namespace.is_some() && a.namespace.as_deref() != item_ns {
                        Dangling::InvalidNamespace { actual }
                    } else {
                        Dangling::WrongCoordinates { actual }
                    }
                }
                _ => Dangling::Absent,
            },
        }),
    }
}

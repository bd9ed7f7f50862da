//! What a plan says: the steps in one order the real system could take them, and the
//! outcome (contract §4.2). Plain values; `render::plan` turns them into text or JSON.

use crate::graph::{Graph, NodeId, Presence};
use crate::snapshot::{OwnerRef, Uid};

/// The `propagationPolicy` of a DELETE, or the `--cascade` of the plan.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Cascade {
    /// Delete the object now; the GC then deletes its dependents (the default for most types).
    Background,
    /// Keep the object (deletionTimestamp plus the `foregroundDeletion` finalizer) until every
    /// dependent that blocks owner deletion is gone.
    Foreground,
    /// Delete the object only after the GC removed it from its dependents' owner references (the
    /// `orphan` finalizer).
    Orphan,
}

impl Cascade {
    /// The name as the API and contract §4.2 spell it (`Background`, `Foreground`, `Orphan`).
    pub fn as_str(self) -> &'static str {
        match self {
            Cascade::Background => "Background",
            Cascade::Foreground => "Foreground",
            Cascade::Orphan => "Orphan",
        }
    }
}

/// An object reference as the contract prints it (§4.1): `uid` is `None` for an owner that
/// does not exist, `namespace` is `None` for cluster-scoped objects.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ObjRef {
    /// The object's `apiVersion` (for an owner: as its reference names it).
    pub api_version: String,
    /// The object's `kind`.
    pub kind: String,
    /// The namespace; `None` for cluster-scoped objects (omitted from JSON).
    pub namespace: Option<String>,
    /// The object's `metadata.name`.
    pub name: String,
    /// The uid of an object that exists in the snapshot; `None` for an absent owner (omitted from
    /// JSON).
    pub uid: Option<Uid>,
}

impl ObjRef {
    /// The reference of a graph node; virtual nodes (never observed) carry no uid.
    pub fn of_node(g: &Graph, n: NodeId) -> ObjRef {
        let node = g.node(n);
        let i = g.identity(n);
        ObjRef {
            api_version: i.api_version.to_string(),
            kind: i.kind.to_string(),
            namespace: i.namespace.map(str::to_string),
            name: i.name.to_string(),
            uid: matches!(node.presence, Presence::Observed(_)).then(|| i.uid.clone()),
        }
    }

    /// The owner named by `r` on a dependent in `dependent_ns`. The uid is given only when an
    /// object with that uid and these coordinates exists in the snapshot.
    pub fn of_owner(g: &Graph, r: &OwnerRef, dependent_ns: Option<&str>) -> ObjRef {
        if let Some(id) = g.by_uid(&r.uid) {
            let node = g.node(id);
            let i = g.identity(id);
            if matches!(node.presence, Presence::Observed(_))
                && i.kind == r.kind
                && i.name == r.name
                && i.group() == crate::snapshot::object::group_of(&r.api_version)
            {
                return ObjRef::of_node(g, id);
            }
        }
        let namespaced = g.owner_is_namespaced(r).unwrap_or(dependent_ns.is_some());
        ObjRef {
            api_version: r.api_version.clone(),
            kind: r.kind.clone(),
            namespace: if namespaced { dependent_ns.map(str::to_string) } else { None },
            name: r.name.clone(),
            uid: None,
        }
    }

    /// `Kind/namespace/name` (namespace empty when cluster-scoped), the fixtures' notation.
    pub fn key(&self) -> String {
        format!("{}/{}/{}", self.kind, self.namespace.as_deref().unwrap_or(""), self.name)
    }

    /// `Kind namespace/name` or `Kind name`, for people.
    pub fn display(&self) -> String {
        match &self.namespace {
            Some(ns) => format!("{} {ns}/{}", self.kind, self.name),
            None => format!("{} {}", self.kind, self.name),
        }
    }
}

/// What one step does (contract §4.2 `action`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Action {
    /// A DELETE request; `propagation` is the policy it carries (`None`: no policy, the
    /// type's default applies), `grace` an explicit `gracePeriodSeconds`.
    Delete {
        /// The `propagationPolicy`; `None` when the request carries none.
        propagation: Option<Cascade>,
        /// `gracePeriodSeconds`, in seconds, when the request sets it.
        grace: Option<i64>,
    },
    /// The API server set a deletionTimestamp (and a grace period), the object stays with
    /// these finalizers.
    MarkDeleting {
        /// The finalizers the object carries once marked (with `foregroundDeletion`/`orphan` added
        /// by the policy).
        finalizers: Vec<String>,
        /// `metadata.deletionGracePeriodSeconds`, in seconds, when set.
        grace: Option<i64>,
    },
    /// The object leaves storage.
    Remove,
    /// The GC patches owner references to owners that are gone (or being orphaned) out of a
    /// remaining object.
    RemoveOwnerReferences {
        /// The owners whose references were removed.
        owners: Vec<ObjRef>,
    },
    /// The GC sets `blockOwnerDeletion: false` on the references a dependent holds to owners
    /// waiting for it (foreground deletion), before deleting it.
    UnblockOwnerReferences {
        /// The owners whose references no longer block.
        owners: Vec<ObjRef>,
    },
    /// A controller (or the GC, for `foregroundDeletion`/`orphan`) removes a finalizer from
    /// `metadata.finalizers`.
    RemoveFinalizer {
        /// The finalizer removed.
        finalizer: String,
    },
    /// Nothing will move this object further; `finalizer` is the one that holds it, if any.
    Blocked {
        /// The finalizer that holds the object; `None` when something else does (an admission
        /// webhook, say).
        finalizer: Option<String>,
        /// Why nothing will move it, for people.
        reason: String,
    },
}

impl Action {
    /// The action's name as contract §4.2 spells it (`Delete`, `MarkDeleting`, ...).
    pub fn name(&self) -> &'static str {
        match self {
            Action::Delete { .. } => "Delete",
            Action::MarkDeleting { .. } => "MarkDeleting",
            Action::Remove => "Remove",
            Action::RemoveOwnerReferences { .. } => "RemoveOwnerReferences",
            Action::UnblockOwnerReferences { .. } => "UnblockOwnerReferences",
            Action::RemoveFinalizer { .. } => "RemoveFinalizer",
            Action::Blocked { .. } => "Blocked",
        }
    }
}

/// One step of the plan.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Step {
    /// 1-based position in the plan.
    pub seq: u32,
    /// Steps of one wave can happen together; a wave starts once what it reacts to is done.
    pub wave: u32,
    /// Who acts: `kubectl` (the request planned), `kube-apiserver`, `garbage-collector`,
    /// `namespace-controller`, `kubelet`, or the controller that owns a finalizer.
    pub actor: String,
    /// What it does.
    pub action: Action,
    /// The object it acts on.
    pub object: NodeId,
}

/// An object left with a deletionTimestamp that nothing will finish.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BlockedObject {
    /// The object left in place.
    pub object: NodeId,
    /// The finalizers it keeps (empty when something other than a finalizer holds it).
    pub finalizers: Vec<String>,
    /// Why nothing will finish it, for people.
    pub reason: String,
}

/// The outcome (contract §4.2 `result`), each list in a stable order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PlanResult {
    /// Objects gone at the end, in the order they leave.
    pub removed: Vec<NodeId>,
    /// Objects that remain and lost owner references, with the owners they lost.
    pub owner_refs_removed: Vec<(NodeId, Vec<ObjRef>)>,
    /// Objects left deleting that nothing will finish (the CLI then exits 2).
    pub blocked: Vec<BlockedObject>,
}

/// A dry run of `kubectl delete --cascade=… <target>`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    /// The object `kubectl delete` is run on.
    pub target: NodeId,
    /// The `--cascade` of the dry run.
    pub cascade: Cascade,
    /// The steps, in one order the real system could take them (`seq` order).
    pub steps: Vec<Step>,
    /// What is gone, changed and blocked at the end.
    pub result: PlanResult,
    /// What the planner could not know: racy spots of the real GC, unresolvable kinds,
    /// incomplete input.
    pub notes: Vec<String>,
}

impl Plan {
    /// The plan ends with blocked objects (the CLI exits 2).
    pub fn is_blocked(&self) -> bool {
        !self.result.blocked.is_empty()
    }
}

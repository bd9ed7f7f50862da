//! Classification of one owner reference: mirrors `isDangling` and `classifyReferences`
//! (garbagecollector.go), gc-semantics §3.3.

use crate::names::FOREGROUND_DELETION;

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
    /// The owner is not in the input, but the input could not read where it would be (its
    /// type's list failed there): the GC's GET may find it. Not the GC's state but the input's:
    /// nothing is claimed absent under a failed read (contract §4.3.4).
    Unread,
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
    UidMismatch {
        /// The object that now has the name.
        live: NodeId,
    },
    /// The uid belongs to a namespaced object in another namespace than the dependent's: the
    /// GC looks in the dependent's namespace only.
    InvalidNamespace {
        /// The object that has the uid.
        actual: NodeId,
    },
    /// The uid belongs to an object of another kind or name than the reference says.
    WrongCoordinates {
        /// The object that has the uid.
        actual: NodeId,
    },
}

/// What a GET of the owner returns in the state being classified.
#[derive(Clone, Copy, Debug)]
pub struct LiveOwner<'a> {
    /// The owner's uid now: compared with the reference's.
    pub uid: &'a Uid,
    /// The owner is being deleted with `foregroundDeletion`: the reference is *waiting*
    /// (gc-semantics §3.3).
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
    let item_ns = g.identity(item).namespace;
    let mut found_other = None;
    let result = classify(g.mapper(), item_ns, r, |group, kind, ns, name| {
        let id = g.find(group, kind, ns, name)?;
        let o = g.object(id)?;
        if o.uid != r.uid {
            found_other = Some(id);
        }
        Some(LiveOwner {
            uid: &o.uid,
            deleting_with_foreground: o.is_deleting() && o.has_finalizer(FOREGROUND_DELETION),
        })
    });
    match result {
        Ok(state) => state,
        Err(()) if found_other.is_none() && owner_unread(g, item_ns, r) => OwnerState::Unread,
        Err(()) => OwnerState::Dangling(match found_other {
            Some(live) => Dangling::UidMismatch { live },
            None => match g.by_uid(&r.uid) {
                Some(actual) if g.node(actual).presence != Presence::Virtual => {
                    let a = &g.identity(actual);
                    let same_coordinates = a.kind == r.kind
                        && a.name == r.name
                        && a.group() == crate::snapshot::object::group_of(&r.api_version);
                    if same_coordinates && a.namespace.is_some() && a.namespace != item_ns {
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

/// Whether the owner `r` names, not found in the input, may be among what the input left
/// unread: a gap that may hide its type where the GC would look it up.
fn owner_unread(g: &Graph, item_ns: Option<&str>, r: &OwnerRef) -> bool {
    let Ok(t) = g.mapper().rest_mapping(&r.api_version, &r.kind) else { return false };
    let ns = if t.namespaced { item_ns } else { None };
    // an object elsewhere that carries the uid is found whatever the gap
    if g.by_uid(&r.uid).is_some_and(|n| g.node(n).presence != Presence::Virtual) {
        return false;
    }
    g.gaps().iter().any(|gap| gap.may_hide(&t.group, Some(&t.plural), ns))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::collector::GcVerdict;
    use crate::testing::{ObjExt, graph, node, obj};
    use serde_json::json;

    fn state_of(g: &Graph, kind: &str, name: &str) -> Vec<OwnerState> {
        let x = node(g, kind, name);
        g.owners(x).iter().map(|r| classify_reference(g, x, r)).collect()
    }

    #[test]
    fn existing_owner_with_the_same_uid_is_solid() {
        let g = graph(vec![
            obj("v1", "ReplicationController", Some("a"), "rc", "rc1"),
            obj("v1", "Pod", Some("a"), "p", "p1").owned_by("v1", "ReplicationController", "rc", "rc1", Some(true)),
        ]);
        assert_eq!(state_of(&g, "Pod", "p"), [OwnerState::Solid]);
    }

    #[test]
    fn owner_deleting_with_foreground_is_waiting_but_with_orphan_is_solid() {
        // §3.3 step 6, §6.16
        let g = graph(vec![
            obj("v1", "ConfigMap", Some("a"), "fg", "o1")
                .deleting("2026-01-01T00:00:00Z")
                .finalizers(&["foregroundDeletion"]),
            obj("v1", "ConfigMap", Some("a"), "or", "o2").deleting("2026-01-01T00:00:00Z").finalizers(&["orphan"]),
            obj("v1", "Pod", Some("a"), "p", "p1").owned_by("v1", "ConfigMap", "fg", "o1", None).owned_by(
                "v1",
                "ConfigMap",
                "or",
                "o2",
                None,
            ),
        ]);
        assert_eq!(state_of(&g, "Pod", "p"), [OwnerState::Waiting, OwnerState::Solid]);
    }

    #[test]
    fn absent_owner_is_dangling_and_gets_a_virtual_node() {
        // I2 TestCreateWithNonExistentOwner
        let g = graph(vec![obj("v1", "Pod", Some("a"), "p", "p1").owned_by(
            "v1",
            "ReplicationController",
            "test.rc.1",
            "doesn't matter",
            None,
        )]);
        assert_eq!(state_of(&g, "Pod", "p"), [OwnerState::Dangling(Dangling::Absent)]);
        let v = g.by_uid(&crate::snapshot::Uid("doesn't matter".into())).unwrap();
        assert_eq!(g.node(v).presence, Presence::Virtual);
        assert_eq!(g.identity(v).namespace, Some("a"), "virtual node takes the dependent's namespace");
    }

    #[test]
    fn recreated_owner_is_a_uid_mismatch() {
        // §6.8
        let g = graph(vec![
            obj("v1", "ConfigMap", Some("a"), "owner", "new"),
            obj("v1", "Pod", Some("a"), "p", "p1").owned_by("v1", "ConfigMap", "owner", "old", Some(true)),
        ]);
        let live = node(&g, "ConfigMap", "owner");
        assert_eq!(state_of(&g, "Pod", "p"), [OwnerState::Dangling(Dangling::UidMismatch { live })]);
    }

    #[test]
    fn namespaced_owner_in_another_namespace_is_dangling() {
        // §6.7: looked up in the dependent's namespace
        let g = graph(vec![
            obj("v1", "ConfigMap", Some("b"), "parent", "par"),
            obj("v1", "Secret", Some("a"), "child", "c1").owned_by("v1", "ConfigMap", "parent", "par", None),
            obj("v1", "Secret", Some("b"), "ok", "c2").owned_by("v1", "ConfigMap", "parent", "par", None),
        ]);
        let actual = node(&g, "ConfigMap", "parent");
        assert_eq!(state_of(&g, "Secret", "child"), [OwnerState::Dangling(Dangling::InvalidNamespace { actual })]);
        assert_eq!(state_of(&g, "Secret", "ok"), [OwnerState::Solid], "legitimate dependents are untouched");
    }

    #[test]
    fn cluster_scoped_owner_of_namespaced_dependent_is_valid() {
        // §6.5
        let g = graph(vec![
            obj("v1", "PersistentVolume", None, "pv-valid", "pv1"),
            obj("v1", "ConfigMap", Some("a"), "cm-valid", "c1").owned_by(
                "v1",
                "PersistentVolume",
                "pv-valid",
                "pv1",
                None,
            ),
            obj("v1", "ConfigMap", Some("a"), "cm-missing", "c2").owned_by(
                "v1",
                "PersistentVolume",
                "missing-name",
                "missing-uid",
                None,
            ),
        ]);
        assert_eq!(state_of(&g, "ConfigMap", "cm-valid"), [OwnerState::Solid]);
        assert_eq!(state_of(&g, "ConfigMap", "cm-missing"), [OwnerState::Dangling(Dangling::Absent)]);
    }

    #[test]
    fn cluster_scoped_dependent_of_namespaced_owner_is_never_collected() {
        // §6.6
        let g = graph(vec![
            obj("v1", "ConfigMap", Some("a"), "owner", "o1"),
            obj("rbac.authorization.k8s.io/v1", "ClusterRole", None, "r", "r1").owned_by(
                "v1",
                "ConfigMap",
                "owner",
                "o1",
                None,
            ),
        ]);
        let s = state_of(&g, "ClusterRole", "r");
        assert_eq!(s, [OwnerState::NamespacedOwnerOfClusterScoped]);
        assert!(s[0].is_error());
    }

    #[test]
    fn unknown_kinds_and_unserved_versions_are_unresolvable() {
        // §6.9, I13's invalid refs, I14 cm-invalid
        let g = graph(vec![
            obj("v1", "ConfigMap", Some("a"), "typo", "c1").owned_by("test/v1", "invalid0", "x", "u0", None),
            obj("v1", "ConfigMap", Some("a"), "old", "c2").owned_by(
                "extensions/v1beta1",
                "Deployment",
                "x",
                "u1",
                None,
            ),
            obj("v1", "ConfigMap", Some("a"), "unserved", "c3").owned_by("apps/v1beta2", "Deployment", "x", "u2", None),
        ]);
        assert!(matches!(state_of(&g, "ConfigMap", "typo")[0], OwnerState::Unresolvable(Unresolvable::UnknownKind)));
        assert!(matches!(state_of(&g, "ConfigMap", "old")[0], OwnerState::Unresolvable(_)));
        assert!(matches!(
            state_of(&g, "ConfigMap", "unserved")[0],
            OwnerState::Unresolvable(Unresolvable::VersionNotServed { .. })
        ));
    }

    #[test]
    fn another_served_version_resolves_and_is_solid() {
        // §6.10
        let g = graph(vec![
            obj("autoscaling/v2", "HorizontalPodAutoscaler", Some("a"), "h", "h1"),
            obj("v1", "ConfigMap", Some("a"), "c", "c1").owned_by(
                "autoscaling/v1",
                "HorizontalPodAutoscaler",
                "h",
                "h1",
                None,
            ),
        ]);
        assert_eq!(state_of(&g, "ConfigMap", "c"), [OwnerState::Solid]);
    }

    #[test]
    fn right_uid_with_wrong_kind_or_name_is_dangling() {
        // §6.11
        let g = graph(vec![
            obj("apps/v1", "Deployment", Some("a"), "d", "d1"),
            obj("v1", "ConfigMap", Some("a"), "c", "c1").owned_by("v1", "Secret", "d", "d1", None),
            obj("v1", "ConfigMap", Some("a"), "c2", "c2").owned_by("apps/v1", "Deployment", "other", "d1", None),
        ]);
        let actual = node(&g, "Deployment", "d");
        assert_eq!(state_of(&g, "ConfigMap", "c"), [OwnerState::Dangling(Dangling::WrongCoordinates { actual })]);
        assert_eq!(state_of(&g, "ConfigMap", "c2"), [OwnerState::Dangling(Dangling::WrongCoordinates { actual })]);
    }

    #[test]
    fn custom_resources_resolve_through_their_crd() {
        let crd = obj("apiextensions.k8s.io/v1", "CustomResourceDefinition", None, "sites.own.labhub.io", "crd").with(
            "spec",
            json!({"group":"own.labhub.io","scope":"Namespaced","names":{"kind":"Site","plural":"sites"},"versions":[{"name":"v1","served":true}]}),
        );
        let g = graph(vec![
            crd,
            obj("own.labhub.io/v1", "Site", Some("a"), "s", "s1"),
            obj("v1", "ConfigMap", Some("a"), "c", "c1").owned_by("own.labhub.io/v1", "Site", "s", "s1", None),
            obj("v1", "ConfigMap", Some("a"), "d", "c2").owned_by("own.labhub.io/v2", "Site", "s", "s1", None),
        ]);
        assert_eq!(state_of(&g, "ConfigMap", "c"), [OwnerState::Solid]);
        assert!(matches!(
            state_of(&g, "ConfigMap", "d")[0],
            OwnerState::Unresolvable(Unresolvable::VersionNotServed { .. })
        ));
    }

    #[test]
    fn an_owner_whose_type_could_not_be_listed_is_unread_not_dangling() {
        // contract §4.3.4: nothing is claimed absent under a failed read
        use crate::snapshot::{Gap, Missing, Resource};
        let crd = obj("apiextensions.k8s.io/v1", "CustomResourceDefinition", None, "builds.ci.example.io", "crd").with(
            "spec",
            json!({"group":"ci.example.io","scope":"Namespaced","names":{"kind":"Build","plural":"builds"},"versions":[{"name":"v1","served":true}]}),
        );
        let mut g = graph(vec![
            crd,
            obj("v1", "Pod", Some("a"), "p", "p1").owned_by("ci.example.io/v1", "Build", "b", "b1", Some(true)),
            obj("v1", "Pod", Some("b"), "q", "p2").owned_by("ci.example.io/v1", "Build", "b", "b2", Some(true)),
        ]);
        assert_eq!(state_of(&g, "Pod", "p"), [OwnerState::Dangling(Dangling::Absent)], "read everywhere: absent");
        let list = |ns: &str| Missing::List {
            resource: Resource::new("ci.example.io", "v1", "builds"),
            namespace: Some(ns.into()),
        };
        g.record_gap(Gap::new(list("a"), "forbidden"));
        assert_eq!(state_of(&g, "Pod", "p"), [OwnerState::Unread]);
        assert_eq!(GcVerdict::of(&state_of(&g, "Pod", "p")), GcVerdict::Untold);
        assert_eq!(
            state_of(&g, "Pod", "q"),
            [OwnerState::Dangling(Dangling::Absent)],
            "the gap is in another namespace"
        );
    }

    #[test]
    fn events_never_enter_the_graph() {
        // §1.4 DefaultIgnoredResources
        let g = graph(vec![
            obj("v1", "ConfigMap", Some("a"), "owner", "o1"),
            obj("v1", "Event", Some("a"), "e", "e1").owned_by("v1", "ConfigMap", "owner", "o1", Some(true)),
            obj("events.k8s.io/v1", "Event", Some("a"), "e2", "e2").owned_by(
                "v1",
                "ConfigMap",
                "owner",
                "o1",
                Some(true),
            ),
        ]);
        let o = node(&g, "ConfigMap", "owner");
        assert!(g.node(o).dependents.is_empty());
        assert_eq!(g.blocking_dependents(o).count(), 0);
        assert_eq!(g.objects().len(), 3, "events stay in the snapshot for evidence");
    }

    #[test]
    fn cycles_and_self_owners_are_found() {
        // E8: pod1 -> pod3, pod2 -> pod1, pod3 -> pod2; and a self-owner
        let g = graph(vec![
            obj("v1", "Pod", Some("a"), "pod1", "1").owned_by("v1", "Pod", "pod3", "3", Some(true)),
            obj("v1", "Pod", Some("a"), "pod2", "2").owned_by("v1", "Pod", "pod1", "1", Some(true)),
            obj("v1", "Pod", Some("a"), "pod3", "3").owned_by("v1", "Pod", "pod2", "2", Some(true)),
            obj("v1", "Pod", Some("a"), "self", "4").owned_by("v1", "Pod", "self", "4", None),
            obj("v1", "Pod", Some("a"), "free", "5").owned_by("v1", "Pod", "pod1", "1", None),
        ]);
        let cycles = crate::graph::owner_cycles(&g);
        assert_eq!(cycles.len(), 2);
        assert!(cycles.iter().any(|c| c.len() == 3));
        assert!(cycles.iter().any(|c| c == &vec![node(&g, "Pod", "self")]));
        assert!(!cycles.iter().flatten().any(|&n| n == node(&g, "Pod", "free")));
    }
}

//! The garbage collector's dependency graph (graph.go, graph_builder.go): nodes by uid, each
//! with its owners and dependents; *virtual* nodes for owners that were referenced but never
//! observed. One writer (`grow.rs`, the GC's `processGraphChanges`) makes it: from empty
//! ([`Graph::build`]), with what a later read round brought ([`Graph::grow`]), or with what a
//! watch saw change ([`Graph::grow_to`]), each exactly as a build of every object at once;
//! everything else only reads it.

mod build;
mod cycles;
mod describe;
mod event_scope;
mod grow;
mod order;

#[cfg(test)]
pub(crate) use grow::dump;

use std::hash::Hasher;

use rustc_hash::FxHashMap;

use crate::discovery::RestMapper;
use crate::snapshot::{Gap, Object, OwnerRef, Snapshot, Uid};

pub use cycles::{owner_cycle_through, owner_cycles};
pub use describe::describe;
pub use event_scope::{event_speaks_about, events_namespace};

/// Index of a node in [`Graph::nodes`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct NodeId(pub u32);

impl NodeId {
    /// The position in [`Graph::nodes`].
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// The GC's `objectReference`: owner-reference coordinates plus a namespace.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Identity {
    /// The `apiVersion` as written on the object or in the owner reference.
    pub api_version: String,
    /// The kind.
    pub kind: String,
    /// `None` for cluster-scoped objects. A virtual node carries its first dependent's
    /// namespace, as the GC's does, until (if ever) the owner is observed.
    pub namespace: Option<String>,
    /// The name.
    pub name: String,
    /// The uid: the node's key, as in the GC's `uidToNode`.
    pub uid: Uid,
}

impl Identity {
    /// The API group of `api_version` ("" for the core group).
    pub fn group(&self) -> &str {
        crate::snapshot::object::group_of(&self.api_version)
    }

    fn as_ref(&self) -> IdentityRef<'_> {
        IdentityRef {
            api_version: &self.api_version,
            kind: &self.kind,
            namespace: self.namespace.as_deref(),
            name: &self.name,
            uid: &self.uid,
        }
    }
}

/// A node's identity, borrowed: from its object when observed (so no string is copied per
/// node), from the referencing owner reference when virtual.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IdentityRef<'a> {
    /// See [`Identity::api_version`].
    pub api_version: &'a str,
    /// See [`Identity::kind`].
    pub kind: &'a str,
    /// See [`Identity::namespace`].
    pub namespace: Option<&'a str>,
    /// See [`Identity::name`].
    pub name: &'a str,
    /// See [`Identity::uid`].
    pub uid: &'a Uid,
}

impl<'a> IdentityRef<'a> {
    /// The API group of `api_version` ("" for the core group).
    pub fn group(&self) -> &'a str {
        crate::snapshot::object::group_of(self.api_version)
    }
}

/// Whether the node stands for an object in the snapshot or only for a referenced uid.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Presence {
    /// The index of the object in the snapshot.
    Observed(usize),
    /// Referenced by a dependent, never observed: the GC would look it up and find it absent.
    Virtual,
}

#[derive(Clone, Debug)]
/// One node of the graph (the GC's `node`); its identity is [`Graph::identity`] and its owners
/// are its object's owner references.
pub struct Node {
    /// Observed in the snapshot or only referenced.
    pub presence: Presence,
    /// Dependents whose owner references carry this node's uid, sorted, each once.
    pub dependents: Vec<NodeId>,
}

/// Indexes keyed by a hash of the key rather than the key itself: no string is copied per
/// object, and every hit is checked against the node it names. Two keys sharing a hash (rare
/// with 64 bits) land in `collisions`.
#[derive(Default)]
struct HashIndex {
    first: FxHashMap<u64, NodeId>,
    collisions: FxHashMap<u64, Vec<NodeId>>,
}

impl HashIndex {
    fn insert(&mut self, h: u64, id: NodeId) {
        if let Some(_prev) = self.first.get(&h) {
            self.collisions.entry(h).or_default().push(id);
        } else {
            self.first.insert(h, id);
        }
    }

    fn find(&self, h: u64, matches: impl Fn(NodeId) -> bool) -> Option<NodeId> {
        let first = *self.first.get(&h)?;
        if matches(first) {
            return Some(first);
        }
        self.collisions.get(&h)?.iter().copied().find(|&id| matches(id))
    }
}

fn hash_of(parts: &[&str]) -> u64 {
    let mut h = rustc_hash::FxHasher::default();
    for p in parts {
        h.write(p.as_bytes());
        h.write_u8(0xff); // a separator no UTF-8 string contains
    }
    h.finish()
}

/// The owner/dependent graph over a snapshot.
pub struct Graph {
    /// The objects the graph was built from; nodes point into `snapshot.objects`.
    snapshot: Snapshot,
    /// Kind ↔ resource ↔ scope for the snapshot's types, as the GC's REST mapper.
    mapper: RestMapper,
    /// All nodes, indexed by [`NodeId`]: observed first, then virtual.
    nodes: Vec<Node>,
    /// The identity of each virtual node (observed nodes take theirs from their object).
    virtual_identities: FxHashMap<u32, Identity>,
    uid_to_node: HashIndex,
    /// Observed nodes are `0..observed`; virtual ones follow.
    observed: usize,
    /// Observed nodes by (group, kind), sorted by it.
    kinds: Vec<(String, String, Vec<NodeId>)>,
    /// Each observed node's (group, kind), as an index into `kinds`: a kind test without
    /// reaching for the object.
    node_kind: Vec<u32>,
    /// Each node's controller (the node of its first `controller: true` reference), or
    /// `u32::MAX`.
    controller: Vec<u32>,
    /// Owner edges, resolved once: node `i`'s owner nodes are
    /// `owner_edges[owner_start[i]..owner_start[i + 1]]`.
    owner_start: Vec<u32>,
    owner_edges: Vec<NodeId>,
}

/// The first index in `lo..hi` where `below` turns false (`below` holds on a prefix).
fn bisect(mut lo: usize, mut hi: usize, below: impl Fn(usize) -> bool) -> usize {
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if below(mid) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo
}

/// Kinds the GC ignores (`DefaultIgnoredResources`): they never enter its graph, so their
/// owner references are never acted on and they never block a foreground deletion.
pub fn ignored_by_gc(group: &str, kind: &str) -> bool {
    kind == "Event" && (group.is_empty() || group == "events.k8s.io")
}

impl Graph {
    /// The nodes that own `id` (its owner references resolved by uid), each once.
    pub fn owner_nodes(&self, id: NodeId) -> &[NodeId] {
        let i = id.index();
        &self.owner_edges[self.owner_start[i] as usize..self.owner_start[i + 1] as usize]
    }

    /// The (group, kind) of an observed node, without reaching for its object.
    pub fn observed_kind(&self, id: NodeId) -> Option<(&str, &str)> {
        let k = self.node_kind.get(id.index())?;
        let (group, kind, _) = &self.kinds[*k as usize];
        Some((group, kind))
    }

    /// The node of `id`'s first controller reference (observed or virtual).
    pub fn controller_of(&self, id: NodeId) -> Option<NodeId> {
        self.controller.get(id.index()).filter(|&&c| c != u32::MAX).map(|&c| NodeId(c))
    }

    /// The observed nodes of one kind, in node order.
    pub fn of_kind(&self, group: &str, kind: &str) -> &[NodeId] {
        self.kinds
            .binary_search_by(|(g, k, _)| (g.as_str(), k.as_str()).cmp(&(group, kind)))
            .map_or(&[], |i| self.kinds[i].2.as_slice())
    }

    /// Every (group, kind) with observed nodes.
    pub fn kinds(&self) -> impl Iterator<Item = (&str, &str)> + '_ {
        self.kinds.iter().map(|(g, k, _)| (g.as_str(), k.as_str()))
    }

    /// The observed nodes of several kinds, in node order.
    pub fn of_kinds(&self, kinds: &[(&str, &str)]) -> Vec<NodeId> {
        let mut ids: Vec<NodeId> = kinds.iter().flat_map(|&(group, kind)| self.of_kind(group, kind)).copied().collect();
        ids.sort_unstable();
        ids
    }

    /// The observed nodes of one namespace (`None`: the cluster-scoped ones), in node order:
    /// nodes are sorted by namespace first, so they are one run, found by bisection.
    pub fn in_namespace(&self, namespace: Option<&str>) -> impl Iterator<Item = (NodeId, &Object)> + '_ {
        let ns = |i: usize| self.object(NodeId(i as u32)).and_then(|o| o.namespace.as_deref());
        let start = bisect(0, self.observed, |i| ns(i) < namespace);
        let end = bisect(start, self.observed, |i| ns(i) <= namespace);
        self.observed_in(start..end)
    }

    /// A node's identity: its object's coordinates, or a virtual node's reference's.
    pub fn identity(&self, id: NodeId) -> IdentityRef<'_> {
        match self.nodes[id.index()].presence {
            Presence::Observed(oi) => {
                let o = &self.snapshot.objects[oi];
                IdentityRef {
                    api_version: &o.api_version,
                    kind: &o.kind,
                    namespace: o.namespace.as_deref(),
                    name: &o.name,
                    uid: &o.uid,
                }
            }
            Presence::Virtual => self.virtual_identities[&id.0].as_ref(),
        }
    }

    /// The node behind an id.
    pub fn node(&self, id: NodeId) -> &Node {
        &self.nodes[id.index()]
    }

    /// The snapshot object behind a node, if it was observed.
    pub fn object(&self, id: NodeId) -> Option<&Object> {
        match self.nodes[id.index()].presence {
            Presence::Observed(i) => Some(&self.snapshot.objects[i]),
            Presence::Virtual => None,
        }
    }

    /// The node with this uid, observed or virtual (the GC's `uidToNode`).
    pub fn by_uid(&self, uid: &Uid) -> Option<NodeId> {
        self.uid_to_node.find(hash_of(&[uid.as_str()]), |id| self.identity(id).uid == uid)
    }

    /// The observed object of a group, kind, namespace and name (what a GET would return):
    /// nodes are sorted by namespace, kind and name, so it is found by bisection.
    pub fn find(&self, group: &str, kind: &str, namespace: Option<&str>, name: &str) -> Option<NodeId> {
        let namespace = namespace.filter(|ns| !ns.is_empty());
        let key = |i: usize| {
            let o = self.object(NodeId(i as u32)).expect("observed");
            (o.namespace.as_deref(), o.kind.as_str(), o.name.as_str())
        };
        let start = bisect(0, self.observed, |i| key(i) < (namespace, kind, name));
        (start..self.observed)
            .take_while(|&i| key(i) == (namespace, kind, name))
            .map(|i| NodeId(i as u32))
            .find(|&id| self.identity(id).group() == group)
    }

    /// The owner references of a node (none for a virtual node).
    pub fn owners(&self, id: NodeId) -> &[OwnerRef] {
        self.object(id).map(|o| o.owner_references.as_slice()).unwrap_or(&[])
    }

    /// `blockingDependents`: dependents with a `blockOwnerDeletion: true` reference to this
    /// node's uid. Dependents already being deleted still count until they are gone.
    pub fn blocking_dependents(&self, id: NodeId) -> impl Iterator<Item = NodeId> + '_ {
        let uid = self.identity(id).uid;
        self.nodes[id.index()]
            .dependents
            .iter()
            .copied()
            .filter(move |&d| self.owners(d).iter().any(|r| &r.uid == uid && r.blocks()))
    }

    /// The reference(s) from `dependent` to `owner` (by uid).
    pub fn refs_to(&self, dependent: NodeId, owner: NodeId) -> impl Iterator<Item = &OwnerRef> + '_ {
        let uid = self.identity(owner).uid;
        self.owners(dependent).iter().filter(move |r| &r.uid == uid)
    }

    /// Observed nodes in a stable order (namespace, kind, name), for output.
    pub fn observed(&self) -> impl Iterator<Item = (NodeId, &Object)> + '_ {
        self.observed_in(0..self.observed)
    }

    /// Observed nodes (all of `0..observed`) in a range of node ids, with their objects.
    fn observed_in(&self, ids: std::ops::Range<usize>) -> impl Iterator<Item = (NodeId, &Object)> + '_ {
        ids.filter_map(move |i| Some((NodeId(i as u32), self.object(NodeId(i as u32))?)))
    }

    /// Whether the owner type of a reference is namespaced, if the mapper knows it.
    pub fn owner_is_namespaced(&self, r: &OwnerRef) -> Option<bool> {
        self.mapper.rest_mapping(&r.api_version, &r.kind).ok().map(|t| t.namespaced)
    }
}

/// What the graph was built from, beyond its nodes: the REST mapper, what could not be read,
/// the discovery data and where the input was captured. Read only through these, so the graph
/// alone decides what its input means.
impl Graph {
    /// Kind ↔ resource ↔ scope for the input's types: the GC's REST mapper.
    pub fn mapper(&self) -> &RestMapper {
        &self.mapper
    }

    /// What could not be read (the input's `incomplete`), in the order it was recorded: an
    /// answer resting on an absence must say so.
    pub fn gaps(&self) -> &[Gap] {
        &self.snapshot.incomplete
    }

    /// Records one more gap found after the build (a kind known only by inference), so that
    /// every answer reports it with the others.
    pub fn record_gap(&mut self, gap: Gap) {
        self.snapshot.incomplete.push(gap);
    }

    /// The kubeconfig context the input was captured through, if it records one (only
    /// `kubectl gc snapshot` files and live reads do).
    pub fn captured_context(&self) -> Option<&str> {
        self.snapshot.context.as_deref()
    }

    /// The namespace of the context the input was captured through (`kubectl gc snapshot`
    /// files and live reads record it): what `-n` defaults to.
    pub fn captured_namespace(&self) -> Option<&str> {
        self.snapshot.namespace.as_deref()
    }

    /// The API server URL the input was read from, if it records one.
    pub fn captured_server(&self) -> Option<&str> {
        self.snapshot.server.as_deref()
    }

    /// The server's version (`gitVersion`) the input records: read from `/version` live, or
    /// written by `kubectl gc snapshot`; `None` for other files.
    pub fn server_version(&self) -> Option<&str> {
        self.snapshot.server_version.as_deref()
    }

    /// Whether the input carries discovery data (what `kubectl gc snapshot` writes): without
    /// it, a kind absent from the input may simply not have been listed.
    pub fn has_discovery(&self) -> bool {
        !self.snapshot.resource_lists.is_empty()
    }

    /// Whether the input's discovery data lists a resource of this group and kind (so that
    /// finding none of its objects means there are none).
    pub fn discovered(&self, group: &str, kind: &str) -> bool {
        self.snapshot.resource_lists.iter().any(|l| {
            crate::snapshot::object::group_of(&l.group_version) == group && l.resources.iter().any(|r| r.kind == kind)
        })
    }

    /// Every object read, in input order, including those the GC ignores and that are
    /// therefore no node (Events: evidence for a diagnosis, never part of the graph).
    pub fn objects(&self) -> &[Object] {
        &self.snapshot.objects
    }

    /// Every node id, observed nodes first (in node order), then virtual ones.
    pub fn node_ids(&self) -> impl Iterator<Item = NodeId> + use<> {
        (0..self.nodes.len() as u32).map(NodeId)
    }

    /// Gives the input back, gaps recorded since the build included: to edit it and build again.
    #[cfg(test)]
    pub(crate) fn into_snapshot(self) -> Snapshot {
        self.snapshot
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::graph_of;

    fn obj(api_version: &str, kind: &str, ns: Option<&str>, name: &str, uid: &str, owners: &[&str]) -> String {
        let ns = ns.map(|n| format!(r#","namespace":"{n}""#)).unwrap_or_default();
        let refs: Vec<String> = owners
            .iter()
            .map(|u| format!(r#"{{"apiVersion":"v1","kind":"ConfigMap","name":"o-{u}","uid":"{u}"}}"#))
            .collect();
        format!(
            r#"{{"apiVersion":"{api_version}","kind":"{kind}","metadata":{{"name":"{name}","uid":"{uid}"{ns},"ownerReferences":[{}]}}}}"#,
            refs.join(",")
        )
    }

    fn sample() -> Vec<String> {
        vec![
            obj("v1", "ConfigMap", Some("b"), "same-sixteen-bytes-2", "u1", &[]),
            obj("v1", "ConfigMap", Some("b"), "same-sixteen-bytes-1", "u2", &["u1", "u1", "gone-2"]),
            obj("x.example.com/v1", "Widget", Some("a"), "w", "u3", &["gone-1"]),
            obj("y.example.com/v1", "Widget", Some("a"), "w", "u4", &["gone-2"]),
            obj("v1", "Namespace", None, "a", "u5", &[]),
            obj("v1", "Event", Some("a"), "e", "u6", &["u5"]),
            obj("v1", "Pod", Some("a"), "p", "u7", &["u3"]),
        ]
    }

    fn graph(docs: &[String]) -> Graph {
        graph_of(&docs.iter().map(String::as_str).collect::<Vec<_>>())
    }

    fn names(g: &Graph) -> Vec<String> {
        (0..g.nodes.len())
            .map(|i| {
                let id = g.identity(NodeId(i as u32));
                format!("{}/{}/{}/{}", id.namespace.unwrap_or("-"), id.kind, id.name, id.uid)
            })
            .collect()
    }

    #[test]
    fn node_order_is_canonical_whatever_the_input_order() {
        let docs = sample();
        let g = graph(&docs);
        assert_eq!(
            names(&g),
            [
                "-/Namespace/a/u5",
                "a/Pod/p/u7",
                "a/Widget/w/u3",
                "a/Widget/w/u4",
                "b/ConfigMap/same-sixteen-bytes-1/u2",
                "b/ConfigMap/same-sixteen-bytes-2/u1",
                // virtual owners, numbered by their first dependent in node order
                "a/ConfigMap/o-gone-1/gone-1",
                "a/ConfigMap/o-gone-2/gone-2",
            ]
        );
        let mut reversed = docs.clone();
        reversed.reverse();
        assert_eq!(names(&graph(&reversed)), names(&g));
    }

    #[test]
    fn find_bisects_to_the_right_group_and_scope() {
        let g = graph(&sample());
        let x = g.find("x.example.com", "Widget", Some("a"), "w").expect("x widget");
        let y = g.find("y.example.com", "Widget", Some("a"), "w").expect("y widget");
        assert_ne!(x, y);
        assert_eq!(g.identity(x).uid.as_str(), "u3");
        assert_eq!(g.identity(y).uid.as_str(), "u4");
        assert!(g.find("z.example.com", "Widget", Some("a"), "w").is_none());
        assert!(g.find("", "Namespace", None, "a").is_some());
        assert_eq!(g.find("", "Namespace", Some(""), "a"), g.find("", "Namespace", None, "a"));
        assert!(g.find("", "Event", Some("a"), "e").is_none(), "the GC ignores Events");
        assert!(g.find("", "ConfigMap", Some("b"), "same-sixteen-bytes-3").is_none());
    }

    #[test]
    fn kinds_namespaces_and_owner_edges() {
        let g = graph(&sample());
        let widgets = g.of_kind("x.example.com", "Widget");
        assert_eq!(widgets.len(), 1);
        assert!(g.of_kind("", "Event").is_empty());
        let both = g.of_kinds(&[("y.example.com", "Widget"), ("x.example.com", "Widget")]);
        assert!(both.windows(2).all(|w| w[0] < w[1]), "node order");
        let in_a: Vec<&str> = g.in_namespace(Some("a")).map(|(_, o)| o.name.as_str()).collect();
        assert_eq!(in_a, ["p", "w", "w"]);
        let cluster: Vec<&str> = g.in_namespace(None).map(|(_, o)| o.name.as_str()).collect();
        assert_eq!(cluster, ["a"]);
        assert_eq!(g.in_namespace(Some("nope")).count(), 0);
        // a dependent naming its owner twice has one edge to it, and is one dependent of it
        let cm1 = g.find("", "ConfigMap", Some("b"), "same-sixteen-bytes-1").expect("cm1");
        let cm2 = g.find("", "ConfigMap", Some("b"), "same-sixteen-bytes-2").expect("cm2");
        assert_eq!(g.owner_nodes(cm1).len(), 2);
        assert_eq!(g.owner_nodes(cm1)[0], cm2);
        assert_eq!(g.node(cm2).dependents, [cm1]);
        let gone2 = g.by_uid(&Uid("gone-2".into())).expect("virtual");
        assert_eq!(g.node(gone2).dependents.len(), 2);
        assert!(g.owner_nodes(gone2).is_empty());
    }

    #[test]
    fn what_the_graph_was_built_from() {
        let mut g = graph(&sample());
        assert_eq!(g.objects().len(), 7, "the Event is an object, though no node");
        let ids: Vec<NodeId> = g.node_ids().collect();
        assert_eq!(ids.len(), 8, "6 observed nodes, then 2 virtual owners");
        assert_eq!(ids.first(), Some(&NodeId(0)));
        assert!(ids.windows(2).all(|w| w[0].0 + 1 == w[1].0));
        assert_eq!(g.node(ids[7]).presence, Presence::Virtual);
        assert!(g.gaps().is_empty());
        g.record_gap(Gap::recorded("widgets.x.example.com could not be listed"));
        assert_eq!(g.gaps().len(), 1);
        assert_eq!(g.into_snapshot().incomplete.len(), 1, "a recorded gap travels with the input");
        assert_eq!(graph(&sample()).captured_context(), None);
        assert!(!graph(&sample()).has_discovery());
        assert!(!graph(&sample()).discovered("", "ConfigMap"), "no discovery data: nothing was listed");
    }

    #[test]
    fn controller_and_kind_without_the_object() {
        let g = graph_of(&[
            r#"{"apiVersion":"apps/v1","kind":"ReplicaSet","metadata":{"name":"rs","namespace":"a","uid":"rs"}}"#,
            r#"{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"a","uid":"p","ownerReferences":[
                {"apiVersion":"v1","kind":"ConfigMap","name":"c","uid":"gone"},
                {"apiVersion":"apps/v1","kind":"ReplicaSet","name":"rs","uid":"rs","controller":true},
                {"apiVersion":"apps/v1","kind":"ReplicaSet","name":"rs2","uid":"gone-2","controller":true}]}}"#,
            r#"{"apiVersion":"v1","kind":"Pod","metadata":{"name":"q","namespace":"a","uid":"q","ownerReferences":[
                {"apiVersion":"apps/v1","kind":"ReplicaSet","name":"x","uid":"gone-3","controller":true}]}}"#,
        ]);
        let (p, q, rs) = (
            g.find("", "Pod", Some("a"), "p").unwrap(),
            g.find("", "Pod", Some("a"), "q").unwrap(),
            g.find("apps", "ReplicaSet", Some("a"), "rs").unwrap(),
        );
        assert_eq!(g.controller_of(p), Some(rs), "the first controller reference");
        let virtual_owner = g.controller_of(q).expect("a virtual controller");
        assert_eq!(g.identity(virtual_owner).uid.as_str(), "gone-3");
        assert_eq!(g.observed_kind(virtual_owner), None);
        assert_eq!(g.controller_of(rs), None);
        assert_eq!(g.observed_kind(p), Some(("", "Pod")));
        assert_eq!(g.observed_kind(rs), Some(("apps", "ReplicaSet")));
    }
}

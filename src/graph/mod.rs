//! The garbage collector's dependency graph (graph.go, graph_builder.go): nodes by uid, each
//! with its owners and dependents; *virtual* nodes for owners that were referenced but never
//! observed. Built once by [`Graph::build`]; everything else only reads it.

mod cycles;

use std::hash::Hasher;

use rustc_hash::FxHashMap;

use crate::discovery::RestMapper;
use crate::snapshot::{Object, OwnerRef, Snapshot, Uid};

pub use cycles::owner_cycles;

/// Index of a node in [`Graph::nodes`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct NodeId(pub u32);

impl NodeId {
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// The GC's `objectReference`: owner-reference coordinates plus a namespace.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Identity {
    pub api_version: String,
    pub kind: String,
    /// `None` for cluster-scoped objects. A virtual node carries its first dependent's
    /// namespace, as the GC's does, until (if ever) the owner is observed.
    pub namespace: Option<String>,
    pub name: String,
    pub uid: Uid,
}

impl Identity {
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
    pub api_version: &'a str,
    pub kind: &'a str,
    pub namespace: Option<&'a str>,
    pub name: &'a str,
    pub uid: &'a Uid,
}

impl<'a> IdentityRef<'a> {
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
pub struct Node {
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
    fn with_capacity(n: usize) -> HashIndex {
        HashIndex { first: FxHashMap::with_capacity_and_hasher(n, Default::default()), collisions: FxHashMap::default() }
    }

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
    pub snapshot: Snapshot,
    pub mapper: RestMapper,
    pub nodes: Vec<Node>,
    /// The identity of each virtual node (observed nodes take theirs from their object).
    virtual_identities: FxHashMap<u32, Identity>,
    uid_to_node: HashIndex,
    by_name: HashIndex,
    /// Observed nodes are `0..observed`; virtual ones follow.
    observed: usize,
    /// Observed nodes by (group, kind), sorted by it.
    kinds: Vec<(String, String, Vec<NodeId>)>,
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

/// Node order: by namespace, kind and name, then group and uid — not the order of the input,
/// so that a live read (lists in whatever order they complete) and a file give the same
/// answers byte for byte. Sorted are compact keys, not the objects: a comparison that chased
/// four strings through a gigabyte of objects made the sort the graph's slowest step. Distinct
/// namespaces and kinds are few, so they are ranked once; a name's first 16 bytes settle most
/// of the rest.
fn canonical_order(objects: &[Object]) -> Vec<u32> {
    struct Key {
        namespace: u32,
        kind: u32,
        name: u128,
        index: u32,
    }
    fn ranks<'a>(ids: FxHashMap<Option<&'a str>, u32>) -> Vec<u32> {
        let mut distinct: Vec<(Option<&str>, u32)> = ids.into_iter().collect();
        distinct.sort_unstable();
        let mut rank = vec![0; distinct.len()];
        for (r, (_, id)) in distinct.into_iter().enumerate() {
            rank[id as usize] = r as u32;
        }
        rank
    }
    let mut namespaces: FxHashMap<Option<&str>, u32> = FxHashMap::default();
    let mut kinds: FxHashMap<Option<&str>, u32> = FxHashMap::default();
    let mut keys: Vec<Key> = Vec::with_capacity(objects.len());
    for (i, o) in objects.iter().enumerate() {
        let next = namespaces.len() as u32;
        let namespace = *namespaces.entry(o.namespace.as_deref()).or_insert(next);
        let next = kinds.len() as u32;
        let kind = *kinds.entry(Some(o.kind.as_str())).or_insert(next);
        let mut prefix = [0u8; 16];
        let len = o.name.len().min(16);
        prefix[..len].copy_from_slice(&o.name.as_bytes()[..len]);
        keys.push(Key { namespace, kind, name: u128::from_be_bytes(prefix), index: i as u32 });
    }
    let (ns_rank, kind_rank) = (ranks(namespaces), ranks(kinds));
    for k in &mut keys {
        k.namespace = ns_rank[k.namespace as usize];
        k.kind = kind_rank[k.kind as usize];
    }
    keys.sort_unstable_by(|a, b| {
        (a.namespace, a.kind, a.name).cmp(&(b.namespace, b.kind, b.name)).then_with(|| {
            let (a, b) = (&objects[a.index as usize], &objects[b.index as usize]);
            (&a.name, a.group(), &a.uid).cmp(&(&b.name, b.group(), &b.uid))
        })
    });
    keys.into_iter().map(|k| k.index).collect()
}

/// Kinds the GC ignores (`DefaultIgnoredResources`): they never enter its graph, so their
/// owner references are never acted on and they never block a foreground deletion.
pub fn ignored_by_gc(group: &str, kind: &str) -> bool {
    kind == "Event" && (group.is_empty() || group == "events.k8s.io")
}

impl Graph {
    /// Builds the graph the GC would hold once its informers have observed every object of
    /// the snapshot.
    pub fn build(snapshot: Snapshot) -> Graph {
        let mapper = RestMapper::from_snapshot(&snapshot);
        let objects = &snapshot.objects;
        let n = objects.len();
        let order = canonical_order(objects);
        let mut g = Graph {
            mapper,
            nodes: Vec::with_capacity(n),
            virtual_identities: FxHashMap::default(),
            uid_to_node: HashIndex::with_capacity(n),
            by_name: HashIndex::with_capacity(n),
            observed: 0,
            kinds: Vec::new(),
            owner_start: Vec::with_capacity(n + 1),
            owner_edges: Vec::with_capacity(n),
            snapshot: Snapshot::default(),
        };
        // (group, kind) → its list in `lists`
        let mut kind_of: FxHashMap<(&str, &str), usize> = FxHashMap::default();
        let mut lists: Vec<Vec<NodeId>> = Vec::new();
        let mut last: Option<((&str, &str), usize)> = None;
        for i in order {
            let o = &objects[i as usize];
            let gk = (o.group(), o.kind.as_str());
            if ignored_by_gc(gk.0, gk.1) {
                continue;
            }
            let id = NodeId(g.nodes.len() as u32);
            g.nodes.push(Node { presence: Presence::Observed(i as usize), dependents: Vec::new() });
            g.uid_to_node.insert(hash_of(&[o.uid.as_str()]), id);
            g.by_name.insert(hash_of(&[gk.0, gk.1, o.namespace_str(), &o.name]), id);
            // nodes come grouped by (namespace, kind): the previous node's list is most often it
            let list = match last {
                Some((k, list)) if k == gk => list,
                _ => {
                    let list = *kind_of.entry(gk).or_insert_with(|| {
                        lists.push(Vec::new());
                        lists.len() - 1
                    });
                    last = Some((gk, list));
                    list
                }
            };
            lists[list].push(id);
        }
        let mut kinds: Vec<(String, String, Vec<NodeId>)> = kind_of
            .into_iter()
            .map(|((group, kind), list)| (group.to_string(), kind.to_string(), std::mem::take(&mut lists[list])))
            .collect();
        kinds.sort_unstable_by(|a, b| (&a.0, &a.1).cmp(&(&b.0, &b.1)));
        g.kinds = kinds;
        g.observed = g.nodes.len();
        g.snapshot = snapshot;
        // addDependentToOwners: every reference links the dependent to the node of its uid,
        // creating a virtual node where the uid was never observed.
        let observed = g.nodes.len();
        for i in 0..observed {
            g.owner_start.push(g.owner_edges.len() as u32);
            let Presence::Observed(oi) = g.nodes[i].presence else { continue };
            for ri in 0..g.snapshot.objects[oi].owner_references.len() {
                let r = &g.snapshot.objects[oi].owner_references[ri];
                let owner = match g.by_uid(&r.uid) {
                    Some(id) => id,
                    None => {
                        let id = NodeId(g.nodes.len() as u32);
                        let identity = Identity {
                            api_version: r.api_version.clone(),
                            kind: r.kind.clone(),
                            namespace: g.snapshot.objects[oi].namespace.clone(),
                            name: r.name.clone(),
                            uid: r.uid.clone(),
                        };
                        g.uid_to_node.insert(hash_of(&[identity.uid.as_str()]), id);
                        g.virtual_identities.insert(id.0, identity);
                        g.nodes.push(Node { presence: Presence::Virtual, dependents: Vec::new() });
                        id
                    }
                };
                let mine = &g.owner_edges[g.owner_start[i] as usize..];
                if !mine.contains(&owner) {
                    g.owner_edges.push(owner);
                }
            }
        }
        // virtual nodes own nothing
        let end = g.owner_edges.len() as u32;
        g.owner_start.resize(g.nodes.len() + 1, end);
        // dependents in node order, each once: the edges are walked in dependent order
        for d in 0..observed {
            for k in g.owner_start[d] as usize..g.owner_start[d + 1] as usize {
                let owner = g.owner_edges[k];
                g.nodes[owner.index()].dependents.push(NodeId(d as u32));
            }
        }
        g
    }

    /// The nodes that own `id` (its owner references resolved by uid), each once.
    pub fn owner_nodes(&self, id: NodeId) -> &[NodeId] {
        let i = id.index();
        &self.owner_edges[self.owner_start[i] as usize..self.owner_start[i + 1] as usize]
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
        (start..end).filter_map(move |i| Some((NodeId(i as u32), self.object(NodeId(i as u32))?)))
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

    pub fn by_uid(&self, uid: &Uid) -> Option<NodeId> {
        self.uid_to_node.find(hash_of(&[uid.as_str()]), |id| self.identity(id).uid == uid)
    }

    /// The observed object of a group, kind, namespace and name (what a GET would return).
    pub fn find(&self, group: &str, kind: &str, namespace: Option<&str>, name: &str) -> Option<NodeId> {
        let ns = namespace.unwrap_or("");
        self.by_name.find(hash_of(&[group, kind, ns, name]), |id| {
            let i = self.identity(id);
            i.name == name && i.kind == kind && i.group() == group && i.namespace.unwrap_or("") == ns
        })
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
        self.nodes.iter().enumerate().filter_map(|(i, n)| match n.presence {
            Presence::Observed(oi) => Some((NodeId(i as u32), &self.snapshot.objects[oi])),
            Presence::Virtual => None,
        })
    }

    /// Whether the owner type of a reference is namespaced, if the mapper knows it.
    pub fn owner_is_namespaced(&self, r: &OwnerRef) -> Option<bool> {
        self.mapper.rest_mapping(&r.api_version, &r.kind).ok().map(|t| t.namespaced)
    }
}


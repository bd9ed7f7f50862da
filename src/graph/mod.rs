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
        // Node ids follow a canonical order, not the order of the input, so that a live read
        // (lists in whatever order they complete) and a file give the same answers byte for
        // byte. Indices are sorted, not the objects, which are large to move.
        let objects = &snapshot.objects;
        let mut order: Vec<u32> = (0..objects.len() as u32).collect();
        order.sort_unstable_by(|&a, &b| {
            let (a, b) = (&objects[a as usize], &objects[b as usize]);
            (a.namespace.as_deref(), &a.kind, &a.name)
                .cmp(&(b.namespace.as_deref(), &b.kind, &b.name))
                .then_with(|| (a.group(), &a.uid).cmp(&(b.group(), &b.uid)))
        });
        let mapper = RestMapper::from_snapshot(&snapshot);
        let n = snapshot.objects.len();
        let mut g = Graph {
            mapper,
            nodes: Vec::with_capacity(n),
            virtual_identities: FxHashMap::default(),
            uid_to_node: HashIndex::with_capacity(n),
            by_name: HashIndex::with_capacity(n),
            snapshot: Snapshot::default(),
        };
        for i in order.into_iter().map(|i| i as usize) {
            let o = &snapshot.objects[i];
            if ignored_by_gc(o.group(), &o.kind) {
                continue;
            }
            let id = NodeId(g.nodes.len() as u32);
            g.nodes.push(Node { presence: Presence::Observed(i), dependents: Vec::new() });
            g.uid_to_node.insert(hash_of(&[o.uid.as_str()]), id);
            g.by_name.insert(hash_of(&[o.group(), &o.kind, o.namespace_str(), &o.name]), id);
        }
        g.snapshot = snapshot;
        // addDependentToOwners: every reference links the dependent to the node of its uid,
        // creating a virtual node where the uid was never observed.
        let observed = g.nodes.len();
        let mut links: Vec<(NodeId, NodeId)> = Vec::new();
        for i in 0..observed {
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
                links.push((owner, NodeId(i as u32)));
            }
        }
        for (owner, dependent) in links {
            g.nodes[owner.index()].dependents.push(dependent);
        }
        for node in &mut g.nodes {
            node.dependents.sort_unstable();
            node.dependents.dedup();
        }
        g
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


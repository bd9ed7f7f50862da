//! Building the graph (graph_builder.go): every object becomes an observed node in canonical
//! order, every owner reference an edge to the node of its uid, and an owner referenced but
//! never observed a virtual node. The queries live in the parent module.

use rustc_hash::FxHashMap;

use crate::discovery::RestMapper;
use crate::snapshot::{Object, OwnerRef, Snapshot};

use super::{Graph, HashIndex, Identity, Node, NodeId, Presence, hash_of, ignored_by_gc};

/// Node order: by namespace, kind and name, then group and uid — not the order of the input,
/// so that a live read (lists in whatever order they complete) and a file give the same
/// answers byte for byte. Sorted are compact keys, not the objects: a comparison that chased
/// four strings through a gigabyte of objects made the sort the graph's slowest step. Distinct
/// namespaces and kinds are few, so they are ranked once; a name's first 16 bytes settle most
/// of the rest.
struct CanonicalOrder<'a> {
    /// (object index, its (group, kind) in `kinds`), in node order.
    order: Vec<(u32, u32)>,
    kinds: Vec<(&'a str, &'a str)>,
}

fn canonical_order(objects: &[Object]) -> CanonicalOrder<'_> {
    struct Key {
        namespace: u32,
        kind: u32,
        name: u128,
        index: u32,
        group_kind: u32,
    }
    fn intern<K: std::hash::Hash + Eq>(ids: &mut FxHashMap<K, u32>, k: K) -> u32 {
        let next = ids.len() as u32;
        *ids.entry(k).or_insert(next)
    }
    fn ranks<K: Ord>(ids: FxHashMap<K, u32>) -> Vec<u32> {
        let mut distinct: Vec<(K, u32)> = ids.into_iter().collect();
        distinct.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        let mut rank = vec![0; distinct.len()];
        for (r, (_, id)) in distinct.into_iter().enumerate() {
            rank[id as usize] = r as u32;
        }
        rank
    }
    let mut namespaces: FxHashMap<Option<&str>, u32> = FxHashMap::default();
    let mut kind_names: FxHashMap<&str, u32> = FxHashMap::default();
    let mut group_kinds: FxHashMap<(&str, &str), u32> = FxHashMap::default();
    let mut keys: Vec<Key> = Vec::with_capacity(objects.len());
    for (i, o) in objects.iter().enumerate() {
        let mut prefix = [0u8; 16];
        let len = o.name.len().min(16);
        prefix[..len].copy_from_slice(&o.name.as_bytes()[..len]);
        keys.push(Key {
            namespace: intern(&mut namespaces, o.namespace.as_deref()),
            kind: intern(&mut kind_names, o.kind.as_str()),
            name: u128::from_be_bytes(prefix),
            index: i as u32,
            group_kind: intern(&mut group_kinds, (o.group(), o.kind.as_str())),
        });
    }
    let mut kinds = vec![("", ""); group_kinds.len()];
    for (gk, id) in group_kinds {
        kinds[id as usize] = gk;
    }
    let (ns_rank, kind_rank) = (ranks(namespaces), ranks(kind_names));
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
    CanonicalOrder { order: keys.into_iter().map(|k| (k.index, k.group_kind)).collect(), kinds }
}

impl Graph {
    /// Builds the graph the GC would hold once its informers have observed every object of
    /// the snapshot.
    pub fn build(snapshot: Snapshot) -> Graph {
        let mapper = RestMapper::from_snapshot(&snapshot);
        let objects = &snapshot.objects;
        let n = objects.len();
        let CanonicalOrder { order, kinds } = canonical_order(objects);
        let ignored: Vec<bool> = kinds.iter().map(|&(group, kind)| ignored_by_gc(group, kind)).collect();
        let mut g = Graph {
            mapper,
            nodes: Vec::with_capacity(n),
            virtual_identities: FxHashMap::default(),
            uid_to_node: HashIndex::with_capacity(n),
            observed: 0,
            kinds: Vec::new(),
            node_kind: Vec::with_capacity(n),
            controller: Vec::new(),
            owner_start: Vec::new(),
            owner_edges: Vec::new(),
            snapshot: Snapshot::default(),
        };
        // Objects are visited in the order they are stored wherever the node order does not
        // matter: at a million, a walk in node order is a cache miss per object.
        let mut node_of = vec![u32::MAX; n];
        let mut lists: Vec<Vec<NodeId>> = vec![Vec::new(); kinds.len()];
        for (i, gk) in order {
            if ignored[gk as usize] {
                continue;
            }
            let id = NodeId(g.nodes.len() as u32);
            g.nodes.push(Node { presence: Presence::Observed(i as usize), dependents: Vec::new() });
            node_of[i as usize] = id.0;
            lists[gk as usize].push(id);
            g.node_kind.push(gk);
        }
        g.observed = g.nodes.len();
        for (i, o) in objects.iter().enumerate() {
            if node_of[i] != u32::MAX {
                g.uid_to_node.insert(hash_of(&[o.uid.as_str()]), NodeId(node_of[i]));
            }
        }
        let kind_count = kinds.len();
        #[allow(clippy::type_complexity)]
        let mut sorted: Vec<(u32, (String, String, Vec<NodeId>))> = kinds
            .into_iter()
            .zip(lists)
            .enumerate()
            .filter(|(_, (_, list))| !list.is_empty())
            .map(|(gk, ((group, kind), list))| (gk as u32, (group.to_string(), kind.to_string(), list)))
            .collect();
        sorted.sort_unstable_by(|a, b| (&a.1.0, &a.1.1).cmp(&(&b.1.0, &b.1.1)));
        let mut position = vec![u32::MAX; kind_count];
        for (pos, (gk, _)) in sorted.iter().enumerate() {
            position[*gk as usize] = pos as u32;
        }
        for k in &mut g.node_kind {
            *k = position[*k as usize];
        }
        g.kinds = sorted.into_iter().map(|(_, k)| k).collect();
        g.snapshot = snapshot;

        // addDependentToOwners: every reference links the dependent to the node of its uid.
        // References to uids never observed are set aside, and become virtual nodes below.
        let mut links: Vec<(u32, NodeId)> = Vec::new();
        let mut unresolved: Vec<(u32, u32)> = Vec::new();
        let mut controller = vec![u32::MAX; g.observed];
        for (i, o) in g.snapshot.objects.iter().enumerate() {
            let d = node_of[i];
            if d == u32::MAX {
                continue;
            }
            let first_controller = o.owner_references.iter().position(OwnerRef::is_controller);
            for (ri, r) in o.owner_references.iter().enumerate() {
                match g.by_uid(&r.uid) {
                    Some(owner) => {
                        links.push((d, owner));
                        if first_controller == Some(ri) {
                            controller[d as usize] = owner.0;
                        }
                    }
                    None => unresolved.push((d, ri as u32)),
                }
            }
        }
        // A virtual node per unseen uid, numbered in node order of its first dependent, and
        // carrying that dependent's namespace, as the GC's first observation would.
        unresolved.sort_unstable();
        for (d, ri) in unresolved {
            let oi = match g.nodes[d as usize].presence {
                Presence::Observed(oi) => oi,
                Presence::Virtual => unreachable!("dependents are observed"),
            };
            let o = &g.snapshot.objects[oi];
            let r = &o.owner_references[ri as usize];
            let owner = match g.by_uid(&r.uid) {
                Some(id) => id,
                None => {
                    let id = NodeId(g.nodes.len() as u32);
                    let identity = Identity {
                        api_version: r.api_version.clone(),
                        kind: r.kind.clone(),
                        namespace: o.namespace.clone(),
                        name: r.name.clone(),
                        uid: r.uid.clone(),
                    };
                    g.uid_to_node.insert(hash_of(&[identity.uid.as_str()]), id);
                    g.virtual_identities.insert(id.0, identity);
                    g.nodes.push(Node { presence: Presence::Virtual, dependents: Vec::new() });
                    id
                }
            };
            links.push((d, owner));
            // the first controller reference wins; checked only for controller references, so
            // thousands of plain references stay linear
            if r.is_controller() && o.owner_references.iter().position(OwnerRef::is_controller) == Some(ri as usize) {
                controller[d as usize] = owner.0;
            }
        }
        controller.resize(g.nodes.len(), u32::MAX);
        g.controller = controller;
        // Owner edges by dependent (a counting sort), each owner once per dependent.
        let nodes = g.nodes.len();
        let mut start = vec![0u32; nodes + 1];
        for &(d, _) in &links {
            start[d as usize + 1] += 1;
        }
        for i in 0..nodes {
            start[i + 1] += start[i];
        }
        let mut fill = start.clone();
        let mut edges = vec![NodeId(0); links.len()];
        for (d, owner) in links {
            edges[fill[d as usize] as usize] = owner;
            fill[d as usize] += 1;
        }
        g.owner_start = Vec::with_capacity(nodes + 1);
        g.owner_edges = Vec::with_capacity(edges.len());
        for d in 0..nodes {
            g.owner_start.push(g.owner_edges.len() as u32);
            let mine = g.owner_edges.len();
            for &owner in &edges[start[d] as usize..start[d + 1] as usize] {
                if !g.owner_edges[mine..].contains(&owner) {
                    g.owner_edges.push(owner);
                }
            }
        }
        g.owner_start.push(g.owner_edges.len() as u32);
        // dependents in node order, each once: the edges are walked in dependent order
        for d in 0..nodes {
            for k in g.owner_start[d] as usize..g.owner_start[d + 1] as usize {
                let owner = g.owner_edges[k];
                g.nodes[owner.index()].dependents.push(NodeId(d as u32));
            }
        }
        g
    }
}

//! The graph's one writer, as the GC's `processGraphChanges` (graph_builder.go) is its: the
//! objects as they now stand, some the same as objects the graph already holds (their nodes
//! are kept), the others inserted, updated or gone. A build is this from an empty graph
//! ([`Graph::build`]); a later read round adds and replaces objects ([`Graph::grow`]); a watch
//! hands it every object it keeps, and only those that changed are touched ([`Graph::grow_to`]).
//!
//! The graph then is exactly the one a build of every object at once gives (the properties
//! `grow_equals_build` and `grow_to_equals_build`): nodes in canonical order, each reference
//! an edge to the node of its uid (`addDependentToOwners`), an owner referenced but never
//! observed a virtual node carrying its first dependent's namespace. Strings are hashed,
//! sorted and compared only for the inserted objects and for the references that waited on an
//! owner that was virtual or changed; the kept nodes are renumbered by a merge, on integers.

use rustc_hash::FxHashMap;

use crate::discovery::RestMapper;
use crate::snapshot::{Gap, Object, OwnerRef, Snapshot, Uid};

use super::order::{canonical_order, node_key};
use super::{Graph, HashIndex, Identity, Node, NodeId, Presence, hash_of, ignored_by_gc};

/// No node, no object, no controller.
const NONE: u32 = u32::MAX;

impl HashIndex {
    /// Keeps the entries `f` maps to a node, under that node.
    fn remap(&mut self, f: impl Fn(NodeId) -> Option<NodeId>) {
        let mut promoted: Vec<(u64, NodeId)> = Vec::new();
        self.first.retain(|_, id| match f(*id) {
            Some(n) => {
                *id = n;
                true
            }
            None => false,
        });
        self.collisions.retain(|h, ids| {
            ids.retain_mut(|id| match f(*id) {
                Some(n) => {
                    *id = n;
                    true
                }
                None => false,
            });
            if !ids.is_empty() && !self.first.contains_key(h) {
                promoted.push((*h, ids.remove(0)));
            }
            !ids.is_empty()
        });
        for (h, id) in promoted {
            self.first.insert(h, id);
        }
    }
}

/// The observed nodes after a change, in node order.
struct Observed {
    /// Each node's object (its index in the objects as they now stand).
    object: Vec<u32>,
    /// Each node's number before the change; [`NONE`] for a node inserted now.
    was: Vec<u32>,
    /// Each inserted node's (group, kind), in the change's own kinds; [`NONE`] for kept ones.
    inserted_kind: Vec<u32>,
}

/// The kept nodes (old number, object now), in node order, merged with the inserted ones
/// (object, kind), in node order: one pass, comparing objects only where both remain.
fn merge(objects: &[Object], kept: &[(u32, u32)], inserted: &[(u32, u32)]) -> Observed {
    let n = kept.len() + inserted.len();
    let mut m =
        Observed { object: Vec::with_capacity(n), was: Vec::with_capacity(n), inserted_kind: Vec::with_capacity(n) };
    let key = |i: u32| node_key(&objects[i as usize]);
    let (mut a, mut b) = (0, 0);
    while a < kept.len() || b < inserted.len() {
        if b == inserted.len() || (a < kept.len() && key(kept[a].1) < key(inserted[b].0)) {
            m.object.push(kept[a].1);
            m.was.push(kept[a].0);
            m.inserted_kind.push(NONE);
            a += 1;
        } else {
            m.object.push(inserted[b].0);
            m.was.push(NONE);
            m.inserted_kind.push(inserted[b].1);
            b += 1;
        }
    }
    m
}

/// Kinds in (group, kind) order, each with its nodes in node order, and each node's kind: a
/// kept node keeps its kind, an inserted one takes the change's (hashed once per kind, not
/// per node).
#[allow(clippy::type_complexity)]
fn index_kinds(
    old: (&[(String, String, Vec<NodeId>)], &[u32]),
    inserted_kinds: &[(&str, &str)],
    m: &Observed,
) -> (Vec<(String, String, Vec<NodeId>)>, Vec<u32>) {
    let (old_kinds, old_node_kind) = old;
    let mut names: Vec<(&str, &str)> = old_kinds.iter().map(|(g, k, _)| (g.as_str(), k.as_str())).collect();
    let mut at: FxHashMap<(&str, &str), u32> = names.iter().enumerate().map(|(i, &gk)| (gk, i as u32)).collect();
    let inserted_at: Vec<u32> = inserted_kinds
        .iter()
        .map(|&gk| {
            let next = names.len() as u32;
            *at.entry(gk).or_insert_with(|| {
                names.push(gk);
                next
            })
        })
        .collect();
    let mut node_kind: Vec<u32> = m
        .was
        .iter()
        .zip(&m.inserted_kind)
        .map(|(&was, &k)| if was != NONE { old_node_kind[was as usize] } else { inserted_at[k as usize] })
        .collect();
    let mut count = vec![0u32; names.len()];
    for &k in &node_kind {
        count[k as usize] += 1;
    }
    let mut ranked: Vec<u32> = (0..names.len() as u32).filter(|&k| count[k as usize] > 0).collect();
    ranked.sort_unstable_by_key(|&k| names[k as usize]);
    let mut position = vec![NONE; names.len()];
    for (p, &k) in ranked.iter().enumerate() {
        position[k as usize] = p as u32;
    }
    let mut kinds: Vec<(String, String, Vec<NodeId>)> = ranked
        .iter()
        .map(|&k| {
            let (group, kind) = names[k as usize];
            (group.to_string(), kind.to_string(), Vec::with_capacity(count[k as usize] as usize))
        })
        .collect();
    for (n, k) in node_kind.iter_mut().enumerate() {
        *k = position[*k as usize];
        kinds[*k as usize].2.push(NodeId(n as u32));
    }
    (kinds, node_kind)
}

/// What the owner edges are resolved into: (dependent, owner) links, each dependent's
/// controller, and the virtual nodes made for owners never observed.
struct Links {
    links: Vec<(u32, NodeId)>,
    controller: Vec<u32>,
    /// Observed nodes, then virtual ones.
    nodes: usize,
}

/// The graph's edges before a change, to keep those of the nodes kept.
struct OldEdges {
    start: Vec<u32>,
    edges: Vec<NodeId>,
    controller: Vec<u32>,
}

impl Graph {
    /// `processGraphChanges`: the graph of `snapshot`, whose objects are in the order they now
    /// stand; `same` pairs (index in `snapshot.objects`, index in the objects the graph holds)
    /// where an object is the same as before, so that its node is kept. Every other object is
    /// inserted (an object of the graph not named in `same` is gone, or changed).
    pub(super) fn process_graph_changes(&mut self, snapshot: Snapshot, same: &[(u32, u32)]) {
        let objects = &snapshot.objects;
        let old_len = same.iter().map(|&(_, was)| was as usize + 1).max().unwrap_or(0);
        // where each object the graph held went ([`NONE`]: changed or gone)
        let mut moved = vec![NONE; old_len];
        let mut kept_object = vec![false; objects.len()];
        for &(now, was) in same {
            moved[was as usize] = now;
            kept_object[now as usize] = true;
        }
        let kept: Vec<(u32, u32)> = (0..self.observed)
            .filter_map(|n| match self.nodes[n].presence {
                Presence::Observed(oi) => moved.get(oi).filter(|&&to| to != NONE).map(|&to| (n as u32, to)),
                Presence::Virtual => None,
            })
            .collect();
        let fresh = canonical_order(objects, (0..objects.len()).filter(|&i| !kept_object[i]));
        let ignored: Vec<bool> = fresh.kinds.iter().map(|&(group, kind)| ignored_by_gc(group, kind)).collect();
        let inserted: Vec<(u32, u32)> = fresh.order.into_iter().filter(|&(_, gk)| !ignored[gk as usize]).collect();
        let m = merge(objects, &kept, &inserted);
        let (kinds, node_kind) = index_kinds((&self.kinds, &self.node_kind), &fresh.kinds, &m);
        drop(inserted);

        // uidToNode: the kept nodes renumbered (virtual ones are made again below), the
        // inserted ones added, visiting objects in the order they are stored
        let mut new_id = vec![NONE; self.observed];
        let mut node_of = vec![NONE; objects.len()];
        for (n, (&oi, &was)) in m.object.iter().zip(&m.was).enumerate() {
            node_of[oi as usize] = n as u32;
            if was != NONE {
                new_id[was as usize] = n as u32;
            }
        }
        self.uid_to_node.remap(|id| new_id.get(id.index()).filter(|&&n| n != NONE).map(|&n| NodeId(n)));
        self.uid_to_node.first.reserve(m.object.len() - kept.len());
        for (oi, o) in objects.iter().enumerate() {
            if node_of[oi] != NONE && !kept_object[oi] {
                self.uid_to_node.insert(hash_of(&[o.uid.as_str()]), NodeId(node_of[oi]));
            }
        }
        let old = OldEdges {
            start: std::mem::take(&mut self.owner_start),
            edges: std::mem::take(&mut self.owner_edges),
            controller: std::mem::take(&mut self.controller),
        };
        let links = self.add_dependents_to_owners(objects, &m, (&node_of, &new_id), &old);
        drop(old);
        let observed = m.object.len();
        let mut nodes: Vec<Node> = Vec::with_capacity(links.nodes);
        nodes.extend(
            m.object.iter().map(|&oi| Node { presence: Presence::Observed(oi as usize), dependents: Vec::new() }),
        );
        nodes.resize_with(links.nodes, || Node { presence: Presence::Virtual, dependents: Vec::new() });
        let (owner_start, owner_edges) = owner_edges(&mut nodes, links.links);
        self.mapper = RestMapper::from_snapshot(&snapshot);
        self.snapshot = snapshot;
        self.nodes = nodes;
        self.observed = observed;
        self.kinds = kinds;
        self.node_kind = node_kind;
        self.controller = links.controller;
        self.owner_start = owner_start;
        self.owner_edges = owner_edges;
    }

    /// `addDependentToOwners`: each observed node's owner edges and controller. A kept node
    /// whose owners all stay observed keeps them, renumbered; an inserted one, or one that had
    /// a virtual or changed owner, resolves its references again: observed owners in reference
    /// order, then virtual ones, made for each uid never observed and numbered in node order
    /// of its first dependent, carrying that dependent's namespace, as the GC's first
    /// observation would.
    fn add_dependents_to_owners(
        &mut self,
        objects: &[Object],
        m: &Observed,
        (node_of, new_id): (&[u32], &[u32]),
        old: &OldEdges,
    ) -> Links {
        let observed = m.object.len();
        let renumbered = |o: u32| new_id.get(o as usize).copied().filter(|&n| n != NONE);
        let mut links: Vec<(u32, NodeId)> = Vec::new();
        let mut controller = vec![NONE; observed];
        let mut again = vec![false; observed];
        for d in 0..observed {
            let was = m.was[d] as usize;
            let mine = match m.was[d] {
                NONE => None,
                _ => Some(&old.edges[old.start[was] as usize..old.start[was + 1] as usize]),
            };
            match mine.filter(|mine| mine.iter().all(|o| renumbered(o.0).is_some())) {
                Some(mine) => {
                    links.extend(mine.iter().map(|o| (d as u32, NodeId(renumbered(o.0).expect("kept")))));
                    controller[d] = renumbered(old.controller[was]).unwrap_or(NONE);
                }
                None => again[d] = true,
            }
        }
        let by_observed_uid = |uid: &Uid| {
            self.uid_to_node.find(hash_of(&[uid.as_str()]), |id| {
                m.object.get(id.index()).is_some_and(|&oi| &objects[oi as usize].uid == uid)
            })
        };
        let mut unresolved: Vec<(u32, u32)> = Vec::new();
        for (oi, o) in objects.iter().enumerate() {
            let d = node_of[oi];
            if d == NONE || !again[d as usize] {
                continue;
            }
            let first_controller = o.owner_references.iter().position(OwnerRef::is_controller);
            for (ri, r) in o.owner_references.iter().enumerate() {
                match by_observed_uid(&r.uid) {
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
        unresolved.sort_unstable();
        self.virtual_identities.clear();
        let mut virtual_of: FxHashMap<&str, NodeId> = FxHashMap::default();
        let mut nodes = observed;
        for (d, ri) in unresolved {
            let o = &objects[m.object[d as usize] as usize];
            let r = &o.owner_references[ri as usize];
            let owner = *virtual_of.entry(r.uid.as_str()).or_insert_with(|| {
                let id = NodeId(nodes as u32);
                nodes += 1;
                let identity = Identity {
                    api_version: r.api_version.clone(),
                    kind: r.kind.clone(),
                    namespace: o.namespace.clone(),
                    name: r.name.clone(),
                    uid: r.uid.clone(),
                };
                self.uid_to_node.insert(hash_of(&[identity.uid.as_str()]), id);
                self.virtual_identities.insert(id.0, identity);
                id
            });
            links.push((d, owner));
            // the first controller reference wins; checked only for controller references, so
            // thousands of plain references stay linear
            if r.is_controller() && o.owner_references.iter().position(OwnerRef::is_controller) == Some(ri as usize) {
                controller[d as usize] = owner.0;
            }
        }
        controller.resize(nodes, NONE);
        Links { links, controller, nodes }
    }
}

/// Owner edges by dependent (a counting sort, stable: each dependent's in the order linked),
/// each owner once per dependent; then each owner's dependents, in node order, each once.
fn owner_edges(nodes: &mut [Node], links: Vec<(u32, NodeId)>) -> (Vec<u32>, Vec<NodeId>) {
    let n = nodes.len();
    let mut start = vec![0u32; n + 1];
    for &(d, _) in &links {
        start[d as usize + 1] += 1;
    }
    for i in 0..n {
        start[i + 1] += start[i];
    }
    let mut fill = start.clone();
    let mut edges = vec![NodeId(0); links.len()];
    for (d, owner) in links {
        edges[fill[d as usize] as usize] = owner;
        fill[d as usize] += 1;
    }
    let mut owner_start = Vec::with_capacity(n + 1);
    let mut owner_edges = Vec::with_capacity(edges.len());
    for d in 0..n {
        owner_start.push(owner_edges.len() as u32);
        let mine = owner_edges.len();
        for &owner in &edges[start[d] as usize..start[d + 1] as usize] {
            if !owner_edges[mine..].contains(&owner) {
                owner_edges.push(owner);
            }
        }
    }
    owner_start.push(owner_edges.len() as u32);
    for d in 0..n {
        for &owner in &owner_edges[owner_start[d] as usize..owner_start[d + 1] as usize] {
            nodes[owner.index()].dependents.push(NodeId(d as u32));
        }
    }
    (owner_start, owner_edges)
}

impl Graph {
    /// Adds what a later read round brought: `replaced` objects take the place of the objects
    /// at those indexes (an object read again, in full or with its managedFields), `added`
    /// ones follow the objects read so far; `incomplete` is what could not be read, as it now
    /// stands. The objects are moved in, never copied; the nodes of the others are kept.
    ///
    /// The graph is then the one [`Graph::build`] builds from its objects so placed (the
    /// property `grow_equals_build`).
    pub fn grow(&mut self, replaced: Vec<(usize, Object)>, added: Vec<Object>, incomplete: Vec<Gap>) {
        let mut snapshot = std::mem::take(&mut self.snapshot);
        let mut changed = vec![false; snapshot.objects.len()];
        for (i, o) in replaced {
            snapshot.objects[i] = o;
            changed[i] = true;
        }
        let same: Vec<(u32, u32)> = (0..changed.len()).filter(|&i| !changed[i]).map(|i| (i as u32, i as u32)).collect();
        snapshot.objects.extend(added);
        snapshot.incomplete = incomplete;
        self.process_graph_changes(snapshot, &same);
    }

    /// The graph of `snapshot` (what a watch keeps, as it now stands), grown from this one by
    /// what changed: an object equal to one the graph holds (the same uid, nothing else
    /// changed) keeps its node, the others are inserted, and the graph's objects not among
    /// them are gone. The graph is then the one [`Graph::build`] builds from `snapshot` (the
    /// property `grow_to_equals_build`).
    pub fn grow_to(&mut self, snapshot: Snapshot) {
        let held = &self.snapshot.objects;
        let mut by_uid: FxHashMap<&str, u32> = FxHashMap::default();
        for (i, o) in held.iter().enumerate() {
            by_uid.entry(o.uid.as_str()).or_insert(i as u32);
        }
        let mut used = vec![false; held.len()];
        let mut same: Vec<(u32, u32)> = Vec::new();
        for (i, o) in snapshot.objects.iter().enumerate() {
            if let Some(&was) = by_uid.get(o.uid.as_str())
                && !used[was as usize]
                && held[was as usize] == *o
            {
                used[was as usize] = true;
                same.push((i as u32, was));
            }
        }
        drop(by_uid);
        self.process_graph_changes(snapshot, &same);
    }
}

/// Everything a graph answers, for comparing two graphs: its objects (in input order), then
/// its nodes in node order, its kinds, namespaces and gaps.
#[cfg(test)]
pub(crate) fn dump(g: &Graph) -> (Vec<String>, Vec<String>) {
    let objects: Vec<String> = g.objects().iter().map(|o| format!("{o:?}")).collect();
    let mut out = Vec::new();
    for id in g.node_ids() {
        let i = g.identity(id);
        out.push(format!(
            "node {} virtual={} {} {:?} {} {} {} kind={:?} owners={:?} dependents={:?} controller={:?} blocking={:?} by_uid={:?} object={:?}",
            id.0,
            g.node(id).presence == Presence::Virtual,
            i.api_version,
            i.namespace,
            i.kind,
            i.name,
            i.uid,
            g.observed_kind(id),
            g.owner_nodes(id),
            g.node(id).dependents,
            g.controller_of(id),
            g.blocking_dependents(id).collect::<Vec<_>>(),
            g.by_uid(i.uid),
            g.object(id).map(|o| &o.uid),
        ));
    }
    for (group, kind) in g.kinds() {
        out.push(format!("kind {group}/{kind} {:?}", g.of_kind(group, kind)));
    }
    let mut namespaces: Vec<Option<&str>> = g.objects().iter().map(|o| o.namespace.as_deref()).collect();
    namespaces.sort();
    namespaces.dedup();
    for ns in namespaces {
        out.push(format!("in {ns:?} {:?}", g.in_namespace(ns).map(|(id, _)| id).collect::<Vec<_>>()));
    }
    out.push(format!("gaps {:?}", g.gaps().iter().map(ToString::to_string).collect::<Vec<_>>()));
    out.push(format!("mapper {:?}", g.mapper().inferred().map(|t| t.kind.clone()).collect::<Vec<_>>()));
    (objects, out)
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use serde_json::json;

    use super::*;
    use crate::graph::dump;
    use crate::snapshot::Snapshot;
    use crate::snapshot::raw::{Flattened, RawDoc};

    /// One object: its kind, namespace and name drawn from a few (so that the order's ties and
    /// kinds' lists are exercised), its owner references to uids drawn from more than there
    /// are objects (so that some owners are virtual, and some become observed later).
    #[derive(Clone, Debug)]
    struct Spec {
        kind: usize,
        namespace: usize,
        name: usize,
        refs: Vec<(usize, bool, bool)>,
    }

    const KINDS: [(&str, &str); 5] = [
        ("v1", "ConfigMap"),
        ("x.example.com/v1", "Widget"),
        ("y.example.com/v1", "Widget"),
        ("v1", "Event"),
        ("v1", "Namespace"),
    ];
    const UIDS: usize = 24;

    fn object(s: &Spec, uid: usize) -> Object {
        let (api_version, kind) = KINDS[s.kind];
        let mut meta = json!({"name": format!("n{}", s.name), "uid": format!("u{uid}")});
        if kind != "Namespace" && s.namespace > 0 {
            meta["namespace"] = json!(format!("ns{}", s.namespace));
        }
        let refs: Vec<_> = s
            .refs
            .iter()
            .map(|&(u, controller, block)| {
                json!({"apiVersion": "v1", "kind": "ConfigMap", "name": format!("o{u}"), "uid": format!("u{u}"),
                       "controller": controller, "blockOwnerDeletion": block})
            })
            .collect();
        meta["ownerReferences"] = json!(refs);
        let doc: RawDoc =
            serde_json::from_value(json!({"apiVersion": api_version, "kind": kind, "metadata": meta})).expect("doc");
        let mut f = Flattened::default();
        f.push(doc);
        f.objects.pop().expect("an object")
    }

    #[test]
    fn a_virtual_owner_observed_later_becomes_its_node() {
        let pod = Spec { kind: 0, namespace: 1, name: 0, refs: vec![(1, true, true)] };
        let owner = Spec { kind: 0, namespace: 1, name: 1, refs: vec![] };
        let mut g = Graph::build(snapshot(vec![object(&pod, 0)], 0));
        let virtual_owner = g.by_uid(&crate::snapshot::Uid("u1".into())).expect("virtual");
        assert_eq!(g.node(virtual_owner).presence, Presence::Virtual);
        g.grow(Vec::new(), vec![object(&owner, 1)], Vec::new());
        let observed = g.by_uid(&crate::snapshot::Uid("u1".into())).expect("observed");
        assert!(matches!(g.node(observed).presence, Presence::Observed(1)));
        assert_eq!(g.node_ids().count(), 2, "no virtual node is left");
        let p = g.find("", "ConfigMap", Some("ns1"), "n0").expect("pod");
        assert_eq!(g.controller_of(p), Some(observed));
        assert_eq!(g.node(observed).dependents, [p]);
    }

    fn snapshot(objects: Vec<Object>, gaps: usize) -> Snapshot {
        let incomplete = (0..gaps).map(|i| Gap::recorded(format!("gap {i}"))).collect();
        Snapshot { objects, incomplete, ..Snapshot::default() }
    }

    fn spec() -> impl Strategy<Value = Spec> {
        (0..KINDS.len(), 0..3usize, 0..4usize, prop::collection::vec((0..UIDS, any::<bool>(), any::<bool>()), 0..4))
            .prop_map(|(kind, namespace, name, refs)| Spec { kind, namespace, name, refs })
    }

    /// Rounds of objects: each a new object (a fresh uid) or, when `again` names an object of
    /// an earlier round, that object read again (its uid, kind and name; its references anew).
    fn rounds() -> impl Strategy<Value = Vec<Vec<(Spec, Option<usize>)>>> {
        prop::collection::vec(prop::collection::vec((spec(), prop::option::weighted(0.3, 0..16usize)), 0..8), 1..5)
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]
        #[test]
        fn grow_equals_build(rounds in rounds()) {
            // what the rounds read, as the objects stand after each: uid → (spec, index)
            let mut all: Vec<(Spec, usize)> = Vec::new();
            let mut graph: Option<Graph> = None;
            let mut next_uid = 0;
            for (r, round) in rounds.iter().enumerate() {
                let mut replaced = Vec::new();
                let mut added = Vec::new();
                let first_new = all.len();
                for (s, again) in round {
                    match again.filter(|&i| i < first_new) {
                        Some(i) => {
                            let mut s2 = s.clone();
                            (s2.kind, s2.namespace, s2.name) = (all[i].0.kind, all[i].0.namespace, all[i].0.name);
                            all[i].0 = s2.clone();
                            replaced.push((i, object(&s2, all[i].1)));
                        }
                        None => {
                            all.push((s.clone(), next_uid));
                            added.push(object(s, next_uid));
                            next_uid += 1;
                        }
                    }
                }
                match graph.as_mut() {
                    None => {
                        let objects: Vec<Object> = replaced.into_iter().map(|(_, o)| o).chain(added).collect();
                        graph = Some(Graph::build(snapshot(objects, r)));
                    }
                    Some(g) => g.grow(replaced, added, snapshot(Vec::new(), r).incomplete),
                }
                let once = Graph::build(snapshot(all.iter().map(|(s, u)| object(s, *u)).collect(), r));
                prop_assert_eq!(dump(graph.as_ref().expect("built")), dump(&once), "after round {}", r);
            }
        }
    }

    /// Each round: every uid, in the round's order, absent or at its first or second version.
    type Round = Vec<(usize, Option<bool>)>;

    /// Rounds of what a watch keeps: each uid absent, or as one of two versions of its object
    /// (so that an object stays the same, changes, goes and comes back), in any order.
    fn watched() -> impl Strategy<Value = (Vec<(Spec, Spec)>, Vec<Round>)> {
        let round = prop::collection::vec(prop::option::weighted(0.7, any::<bool>()), 16)
            .prop_map(|v| v.into_iter().enumerate().collect::<Vec<_>>())
            .prop_shuffle();
        (prop::collection::vec((spec(), spec()), 16), prop::collection::vec(round, 1..6))
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]
        #[test]
        fn grow_to_equals_build((specs, rounds) in watched()) {
            let mut graph: Option<Graph> = None;
            for (r, round) in rounds.iter().enumerate() {
                let objects = || -> Vec<Object> {
                    round
                        .iter()
                        .filter_map(|&(u, v)| v.map(|second| object(if second { &specs[u].1 } else { &specs[u].0 }, u)))
                        .collect()
                };
                match graph.as_mut() {
                    None => graph = Some(Graph::build(snapshot(objects(), r))),
                    Some(g) => g.grow_to(snapshot(objects(), r)),
                }
                let once = Graph::build(snapshot(objects(), r));
                prop_assert_eq!(dump(graph.as_ref().expect("built")), dump(&once), "after round {}", r);
            }
        }
    }
}

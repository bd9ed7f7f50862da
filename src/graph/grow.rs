//! Growing a built graph with the objects a later read round brought, as the GC's informers
//! add what they observe to the graph they hold: the graph ends exactly as [`Graph::build`]
//! would have built it from every object at once (the property `grow_equals_build` tests), but
//! only the new objects are hashed, sorted and resolved. What an earlier round's nodes resolved
//! to an observed owner stays resolved; a reference that waited on a virtual owner is resolved
//! again, for its owner may have been observed since.

use rustc_hash::FxHashMap;

use crate::discovery::RestMapper;
use crate::snapshot::{Gap, Object, OwnerRef};

use super::{Graph, HashIndex, Identity, Node, NodeId, Presence, hash_of, ignored_by_gc};

/// The order of observed nodes, on the objects themselves: what `build::canonical_order`
/// sorts by compact keys (namespace, kind, name, then group and uid).
fn node_key(o: &Object) -> (Option<&str>, &str, &str, &str, &str) {
    (o.namespace.as_deref(), o.kind.as_str(), o.name.as_str(), o.group(), o.uid.as_str())
}

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

impl Graph {
    /// Adds what a later read round brought: `replaced` objects take the place of the objects
    /// at those indexes (an object read again, in full or with its managedFields), `added`
    /// ones follow the objects read so far; `incomplete` is what could not be read, as it now
    /// stands. The objects are moved in, never copied.
    ///
    /// The graph is then the one [`Graph::build`] builds from its objects so placed (the
    /// property `grow_equals_build`). Renumbering the nodes is linear in nodes and edges, on
    /// integers; strings are hashed and compared only for the new objects and for the
    /// references that waited on a virtual owner.
    pub fn grow(&mut self, replaced: Vec<(usize, Object)>, added: Vec<Object>, incomplete: Vec<Gap>) {
        let old_observed = self.observed;
        let first_added = self.snapshot.objects.len();
        // the objects whose nodes are new: replaced ones (their node is built again) and added ones
        let mut fresh: Vec<usize> = Vec::with_capacity(replaced.len() + added.len());
        let mut gone = vec![false; self.snapshot.objects.len()];
        for (i, o) in replaced {
            self.snapshot.objects[i] = o;
            gone[i] = true;
            fresh.push(i);
        }
        fresh.extend(first_added..first_added + added.len());
        self.snapshot.objects.extend(added);
        self.snapshot.incomplete = incomplete;
        self.mapper = RestMapper::from_snapshot(&self.snapshot);
        let objects = &self.snapshot.objects;
        let key = |i: usize| node_key(&objects[i]);
        fresh.retain(|&i| !ignored_by_gc(objects[i].group(), &objects[i].kind));
        fresh.sort_unstable_by(|&a, &b| key(a).cmp(&key(b)));
        // (an object replaced twice in one round is one node)
        fresh.dedup();

        // The new node order: the old observed nodes kept, merged with the fresh ones.
        let kept: Vec<(NodeId, usize)> = (0..old_observed)
            .filter_map(|n| match self.nodes[n].presence {
                Presence::Observed(oi) if !gone[oi] => Some((NodeId(n as u32), oi)),
                _ => None,
            })
            .collect();
        let mut order: Vec<usize> = Vec::with_capacity(kept.len() + fresh.len());
        let mut new_id = vec![u32::MAX; old_observed];
        let mut old_id: Vec<Option<NodeId>> = Vec::with_capacity(kept.len() + fresh.len());
        let (mut a, mut b) = (kept.iter().peekable(), fresh.iter().peekable());
        loop {
            let take_kept = match (a.peek(), b.peek()) {
                (Some(&&(_, x)), Some(&&y)) => key(x) < key(y),
                (Some(_), None) => true,
                (None, Some(_)) => false,
                (None, None) => break,
            };
            if take_kept {
                let (old, oi) = *a.next().expect("peeked");
                new_id[old.index()] = order.len() as u32;
                order.push(oi);
                old_id.push(Some(old));
            } else {
                order.push(*b.next().expect("peeked"));
                old_id.push(None);
            }
        }
        let observed = order.len();
        let is_fresh_object = {
            let mut f = vec![false; objects.len()];
            for &i in &fresh {
                f[i] = true;
            }
            f
        };

        // Kinds, in (group, kind) order, each with its nodes in node order.
        let mut kind_of: FxHashMap<(&str, &str), u32> = FxHashMap::default();
        let mut names: Vec<(&str, &str)> = Vec::new();
        let mut node_kind: Vec<u32> = Vec::with_capacity(observed);
        // a kept node's kind is its old one's (hashed once per kind, not once per node)
        let mut from_old = vec![u32::MAX; self.kinds.len()];
        for (&oi, old) in order.iter().zip(&old_id) {
            let old_kind = old.map(|o| self.node_kind[o.index()] as usize);
            if let Some(k) = old_kind.map(|k| from_old[k]).filter(|&k| k != u32::MAX) {
                node_kind.push(k);
                continue;
            }
            let gk = match old_kind {
                Some(k) => (self.kinds[k].0.as_str(), self.kinds[k].1.as_str()),
                None => (objects[oi].group(), objects[oi].kind.as_str()),
            };
            let next = names.len() as u32;
            let k = *kind_of.entry(gk).or_insert_with(|| {
                names.push(gk);
                next
            });
            if let Some(old) = old_kind {
                from_old[old] = k;
            }
            node_kind.push(k);
        }
        let mut ranked: Vec<u32> = (0..names.len() as u32).collect();
        ranked.sort_unstable_by(|&x, &y| names[x as usize].cmp(&names[y as usize]));
        let mut position = vec![0u32; names.len()];
        for (pos, &k) in ranked.iter().enumerate() {
            position[k as usize] = pos as u32;
        }
        let mut kinds: Vec<(String, String, Vec<NodeId>)> = ranked
            .iter()
            .map(|&k| (names[k as usize].0.to_string(), names[k as usize].1.to_string(), Vec::new()))
            .collect();
        for (n, k) in node_kind.iter_mut().enumerate() {
            *k = position[*k as usize];
            kinds[*k as usize].2.push(NodeId(n as u32));
        }

        // The uid index: earlier nodes renumbered (virtual ones are made again below), fresh
        // ones added.
        self.uid_to_node.remap(|id| new_id.get(id.index()).filter(|&&n| n != u32::MAX).map(|&n| NodeId(n)));
        for (n, &oi) in order.iter().enumerate() {
            if is_fresh_object[oi] {
                self.uid_to_node.insert(hash_of(&[objects[oi].uid.as_str()]), NodeId(n as u32));
            }
        }
        let mut nodes: Vec<Node> =
            order.iter().map(|&oi| Node { presence: Presence::Observed(oi), dependents: Vec::new() }).collect();
        let by_observed_uid = |index: &HashIndex, nodes: &[Node], uid: &crate::snapshot::Uid| {
            index.find(hash_of(&[uid.as_str()]), |id| match nodes.get(id.index()).map(|n| n.presence) {
                Some(Presence::Observed(oi)) => &objects[oi].uid == uid,
                _ => false,
            })
        };

        // Owner edges. A kept node whose owners were all observed keeps them, renumbered; a
        // fresh node, or one that had a virtual (or rebuilt) owner, resolves its references
        // again, as the build does: observed owners in reference order, then virtual ones.
        let mut edges: Vec<Vec<NodeId>> = vec![Vec::new(); observed];
        let mut controller = vec![u32::MAX; observed];
        let mut unresolved: Vec<(u32, u32)> = Vec::new();
        for d in 0..observed {
            let oi = order[d];
            if let Some(old) = old_id[d] {
                let mine = self.owner_nodes(old);
                let remapped: Option<Vec<NodeId>> = mine
                    .iter()
                    .map(|o| new_id.get(o.index()).filter(|&&n| n != u32::MAX).map(|&n| NodeId(n)))
                    .collect();
                if let Some(remapped) = remapped {
                    controller[d] =
                        self.controller_of(old).and_then(|c| new_id.get(c.index()).copied()).unwrap_or(u32::MAX);
                    edges[d] = remapped;
                    continue;
                }
            }
            let o = &objects[oi];
            let first_controller = o.owner_references.iter().position(OwnerRef::is_controller);
            for (ri, r) in o.owner_references.iter().enumerate() {
                match by_observed_uid(&self.uid_to_node, &nodes, &r.uid) {
                    Some(owner) => {
                        edges[d].push(owner);
                        if first_controller == Some(ri) {
                            controller[d] = owner.0;
                        }
                    }
                    None => unresolved.push((d as u32, ri as u32)),
                }
            }
        }
        // virtual nodes, made again from every reference that waits on one, as the build does
        self.virtual_identities.clear();
        let mut virtual_of: FxHashMap<&str, NodeId> = FxHashMap::default();
        for (d, ri) in unresolved {
            let o = &objects[order[d as usize]];
            let r = &o.owner_references[ri as usize];
            let owner = *virtual_of.entry(r.uid.as_str()).or_insert_with(|| {
                let id = NodeId(nodes.len() as u32);
                self.virtual_identities.insert(
                    id.0,
                    Identity {
                        api_version: r.api_version.clone(),
                        kind: r.kind.clone(),
                        namespace: o.namespace.clone(),
                        name: r.name.clone(),
                        uid: r.uid.clone(),
                    },
                );
                self.uid_to_node.insert(hash_of(&[r.uid.as_str()]), id);
                nodes.push(Node { presence: Presence::Virtual, dependents: Vec::new() });
                id
            });
            edges[d as usize].push(owner);
            if r.is_controller() && o.owner_references.iter().position(OwnerRef::is_controller) == Some(ri as usize) {
                controller[d as usize] = owner.0;
            }
        }
        controller.resize(nodes.len(), u32::MAX);
        // each owner once per dependent, then the dependents of each owner in node order
        let mut owner_start = Vec::with_capacity(nodes.len() + 1);
        let mut owner_edges = Vec::with_capacity(edges.iter().map(Vec::len).sum());
        for mine in &edges {
            owner_start.push(owner_edges.len() as u32);
            let first = owner_edges.len();
            for &owner in mine {
                if !owner_edges[first..].contains(&owner) {
                    owner_edges.push(owner);
                }
            }
        }
        for _ in observed..=nodes.len() {
            owner_start.push(owner_edges.len() as u32);
        }
        for d in 0..observed {
            for &owner in &owner_edges[owner_start[d] as usize..owner_start[d + 1] as usize] {
                nodes[owner.index()].dependents.push(NodeId(d as u32));
            }
        }
        self.nodes = nodes;
        self.observed = observed;
        self.kinds = kinds;
        self.node_kind = node_kind;
        self.controller = controller;
        self.owner_start = owner_start;
        self.owner_edges = owner_edges;
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
}

//! The node order: by namespace, kind and name, then group and uid — not the order of the
//! input, so that a live read (lists in whatever order they complete) and a file give the same
//! answers byte for byte.

use rustc_hash::FxHashMap;

use crate::snapshot::Object;

/// The order of observed nodes, on the objects themselves: what [`canonical_order`] sorts by
/// compact keys, and what a change's inserted nodes are merged into the kept ones by.
pub(super) fn node_key(o: &Object) -> (Option<&str>, &str, &str, &str, &str) {
    (o.namespace.as_deref(), o.kind.as_str(), o.name.as_str(), o.group(), o.uid.as_str())
}

/// Some objects in node order, with their (group, kind).
pub(super) struct CanonicalOrder<'a> {
    /// (object index, its (group, kind) in `kinds`), in node order.
    pub order: Vec<(u32, u32)>,
    pub kinds: Vec<(&'a str, &'a str)>,
}

/// The objects at `indexes` in node order. Sorted are compact keys, not the objects: a
/// comparison that chased four strings through a gigabyte of objects made the sort the
/// graph's slowest step. Distinct namespaces and kinds are few, so they are ranked once; a
/// name's first 16 bytes settle most of the rest. The objects are visited in the order they
/// are stored: at a million, a walk in node order is a cache miss per object.
pub(super) fn canonical_order(objects: &[Object], indexes: impl Iterator<Item = usize>) -> CanonicalOrder<'_> {
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
    // reserved for the most there may be (a filter's lower bound is 0: a build would regrow a
    // million keys' vector twenty times)
    let (least, most) = indexes.size_hint();
    let mut keys: Vec<Key> = Vec::with_capacity(most.unwrap_or(least));
    for i in indexes {
        let o = &objects[i];
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

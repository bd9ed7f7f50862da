//! Building the graph (graph_builder.go): the graph the GC would hold once its informers have
//! observed every object, which is what its one writer makes of them from an empty graph. The
//! writer is in `grow.rs`; the queries live in the parent module.

use rustc_hash::FxHashMap;

use crate::snapshot::Snapshot;

use super::{Graph, HashIndex};

impl Graph {
    /// Builds the graph the GC would hold once its informers have observed every object of
    /// the snapshot: every object inserted into an empty graph.
    pub fn build(snapshot: Snapshot) -> Graph {
        let mut g = Graph {
            snapshot: Snapshot::default(),
            mapper: Default::default(),
            nodes: Vec::new(),
            virtual_identities: FxHashMap::default(),
            uid_to_node: HashIndex::default(),
            observed: 0,
            kinds: Vec::new(),
            node_kind: Vec::new(),
            controller: Vec::new(),
            owner_start: vec![0],
            owner_edges: Vec::new(),
        };
        g.process_graph_changes(snapshot, &[]);
        g
    }
}

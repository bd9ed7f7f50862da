//! Owner-reference cycles: strongly connected components of the owner relation, found with
//! an iterative Tarjan so that a 10,000-deep owner chain cannot overflow the stack.

use super::{Graph, NodeId};

/// Every node that sits on an owner-reference cycle (a component of two or more nodes, or a
/// node that owns itself), grouped by cycle, each group sorted.
pub fn owner_cycles(g: &Graph) -> Vec<Vec<NodeId>> {
    let n = g.nodes.len();
    const UNSEEN: u32 = u32::MAX;
    let mut index = vec![UNSEEN; n];
    let mut low = vec![0u32; n];
    let mut on_stack = vec![false; n];
    let mut stack: Vec<NodeId> = Vec::new();
    let mut next = 0u32;
    let mut out = Vec::new();
    // edges: dependent → owner (the owner references, resolved when the graph was built)
    let owners_of = |v: NodeId| g.owner_nodes(v);
    // call stack of (node, its successors, next successor position), empty between roots
    let mut call: Vec<(NodeId, &[NodeId], usize)> = Vec::new();
    for root in 0..n {
        if index[root] != UNSEEN {
            continue;
        }
        let r = NodeId(root as u32);
        index[root] = next;
        low[root] = next;
        next += 1;
        stack.push(r);
        on_stack[root] = true;
        call.push((r, owners_of(r), 0));
        while let Some((v, succ, pos)) = call.last_mut() {
            let v = *v;
            if *pos < succ.len() {
                let w = succ[*pos];
                *pos += 1;
                let wi = w.index();
                if index[wi] == UNSEEN {
                    index[wi] = next;
                    low[wi] = next;
                    next += 1;
                    stack.push(w);
                    on_stack[wi] = true;
                    let s = owners_of(w);
                    call.push((w, s, 0));
                } else if on_stack[wi] {
                    low[v.index()] = low[v.index()].min(index[wi]);
                }
                continue;
            }
            call.pop();
            if let Some((parent, _, _)) = call.last() {
                let p = parent.index();
                low[p] = low[p].min(low[v.index()]);
            }
            if low[v.index()] == index[v.index()] {
                let mut comp = Vec::new();
                while let Some(w) = stack.pop() {
                    on_stack[w.index()] = false;
                    comp.push(w);
                    if w == v {
                        break;
                    }
                }
                let self_owned = comp.len() == 1 && g.owner_nodes(v).contains(&v);
                if comp.len() > 1 || self_owned {
                    comp.sort_unstable();
                    out.push(comp);
                }
            }
        }
    }
    out.sort();
    out
}

/// The owner-reference cycle through `node`, if any, sorted: its strongly connected component
/// when that has two or more nodes, or `[node]` when it owns itself. Found from `node` alone —
/// the component is what `node` reaches through owners and reaches back through dependents —
/// so one object's question never walks a million-node graph.
pub fn owner_cycle_through(g: &Graph, node: NodeId) -> Option<Vec<NodeId>> {
    use std::collections::HashSet;
    let mut ahead: HashSet<NodeId> = HashSet::from([node]);
    let mut todo = vec![node];
    while let Some(v) = todo.pop() {
        for &o in g.owner_nodes(v) {
            if ahead.insert(o) {
                todo.push(o);
            }
        }
    }
    // a path back to `node` only passes through nodes `node` reaches
    let mut cycle: HashSet<NodeId> = HashSet::from([node]);
    let mut todo = vec![node];
    while let Some(v) = todo.pop() {
        for &d in &g.node(v).dependents {
            if ahead.contains(&d) && cycle.insert(d) {
                todo.push(d);
            }
        }
    }
    let self_owned = g.owner_nodes(node).contains(&node);
    (cycle.len() > 1 || self_owned).then(|| {
        let mut c: Vec<NodeId> = cycle.into_iter().collect();
        c.sort_unstable();
        c
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::graph_of;

    /// A ConfigMap `name` (uid = name) owned by the given uids.
    fn cm(name: &str, owners: &[&str]) -> String {
        let refs: Vec<String> = owners
            .iter()
            .map(|u| format!(r#"{{"apiVersion":"v1","kind":"ConfigMap","name":"{u}","uid":"{u}"}}"#))
            .collect();
        format!(
            r#"{{"apiVersion":"v1","kind":"ConfigMap","metadata":{{"name":"{name}","namespace":"n","uid":"{name}","ownerReferences":[{}]}}}}"#,
            refs.join(",")
        )
    }

    #[test]
    fn the_cycle_through_a_node_is_its_component() {
        // a ↔ b, b → c → d → b (one component a, b, c, d); e → e; f → a (outside); g → virtual
        let docs = [
            cm("a", &["b"]),
            cm("b", &["a", "c"]),
            cm("c", &["d"]),
            cm("d", &["b"]),
            cm("e", &["e"]),
            cm("f", &["a"]),
            cm("g", &["gone"]),
        ];
        let g = graph_of(&docs.iter().map(String::as_str).collect::<Vec<_>>());
        let all = owner_cycles(&g);
        assert_eq!(all.len(), 2, "{all:?}");
        for i in 0..g.nodes.len() {
            let id = NodeId(i as u32);
            let expected = all.iter().find(|c| c.contains(&id)).cloned();
            assert_eq!(owner_cycle_through(&g, id), expected, "node {}", g.identity(id).name);
        }
    }
}

//! What could not be read where an object's dependents would be: a garbage-collector
//! finalizer that seems to have nothing left to wait for may be waiting on exactly that, so
//! "the garbage collector stalled" would rest on what was not seen (issue 16, item 14).

use crate::graph::{Graph, NodeId};

/// The `incomplete` entries that may hide dependents of `x`. A namespaced owner's dependents
/// are in its namespace (the GC ignores references from elsewhere), so entries that name
/// another namespace do not count; a cluster-scoped owner's may be anywhere. Entries that say
/// nothing was left unread (a kind's scope inferred from the objects present) do not count.
pub fn hiding_dependents(g: &Graph, x: NodeId) -> Vec<&str> {
    let ns = g.object(x).and_then(|o| o.namespace.as_deref());
    g.snapshot
        .incomplete
        .iter()
        .map(String::as_str)
        .filter(|e| !e.contains("were inferred from the objects present"))
        .filter(|e| match (ns, e.find(" in namespace \"")) {
            (Some(ns), Some(i)) => e[i..].starts_with(&format!(" in namespace \"{ns}\"")),
            _ => true,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use crate::testing::{graph, node, obj};

    #[test]
    fn entries_of_other_namespaces_do_not_hide_a_namespaced_owners_dependents() {
        let mut g = graph(vec![obj("v1", "ConfigMap", Some("a"), "c", "1"), obj("v1", "Namespace", None, "a", "2")]);
        g.snapshot.incomplete = vec![
            "configmaps in namespace \"b\" could not be listed: forbidden (403)".into(),
            "sites.x.io has no discovery data or CustomResourceDefinition in the snapshot: its scope (namespaced) and served versions (v1) were inferred from the objects present".into(),
        ];
        assert!(super::hiding_dependents(&g, node(&g, "ConfigMap", "c")).is_empty());
        assert_eq!(
            super::hiding_dependents(&g, node(&g, "Namespace", "a")).len(),
            1,
            "a cluster-scoped owner's may be anywhere"
        );
        g.snapshot.incomplete.push("secrets: forbidden".into());
        g.snapshot.incomplete.push("pods in namespace \"a\" could not be listed: forbidden (403)".into());
        assert_eq!(super::hiding_dependents(&g, node(&g, "ConfigMap", "c")).len(), 2);
    }
}

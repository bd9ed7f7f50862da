//! What a step that removes finalizers leaves behind, where the cluster shows it (contract
//! §4.3.4): people ask this before they force anything. Only what the object itself records is
//! named (a load balancer's address, a volume's handle, what a namespace still holds); nothing
//! is guessed from names.

use serde_json::Value;

use crate::graph::{Graph, NodeId};
use crate::snapshot::Object;

use super::admission::{NAMED, first_of};
use super::describe;

/// What removing `x`'s finalizers leaves behind, as a clause (`the cloud load balancer at
/// 203.0.113.7`); `None` where the cluster shows nothing.
pub fn behind(g: &Graph, x: NodeId) -> Option<String> {
    let o = g.object(x)?;
    match (o.group(), o.kind.as_str()) {
        ("", "Service") => load_balancer(o),
        ("", "PersistentVolume") => volume(o),
        ("", "Namespace") => namespace_content(g, o),
        _ => None,
    }
}

/// The load balancer a Service of type LoadBalancer was given (`status.loadBalancer.ingress`):
/// the service controller deletes it before it removes its finalizer.
fn load_balancer(o: &Object) -> Option<String> {
    let ingress = o.field("/status/loadBalancer/ingress")?.as_array()?;
    let at: Vec<&str> =
        ingress.iter().filter_map(|i| i.get("hostname").or_else(|| i.get("ip")).and_then(Value::as_str)).collect();
    (!at.is_empty()).then(|| {
        format!(
            "the cloud load balancer at {} (still billed, and nothing in the cluster will delete it)",
            at.join(", ")
        )
    })
}

/// The storage a PersistentVolume stands for: once the object is gone, nothing deletes it.
fn volume(o: &Object) -> Option<String> {
    let handle = o.str_field("/spec/csi/volumeHandle")?;
    let driver = o.str_field("/spec/csi/driver").unwrap_or("its CSI driver");
    Some(format!("the volume {handle} of {driver} (nothing deletes it once the PersistentVolume is gone)"))
}

/// What a namespace still holds: it stays in storage, out of sight, and is there again when a
/// namespace of the same name is created.
fn namespace_content(g: &Graph, ns: &Object) -> Option<String> {
    // the first few named, the rest counted: a namespace may hold 40,000 objects
    let mut content = g.in_namespace(Some(ns.name.as_str()));
    let named: Vec<String> = content.by_ref().take(NAMED).map(|(n, _)| describe(g, n)).collect();
    let total = named.len() + content.count();
    (total > 0).then(|| {
        format!(
            "{}: they stay in storage and come back when a namespace named {} is created again",
            first_of(&named, total),
            ns.name
        )
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::testing::{ObjExt, graph, node, obj};

    #[test]
    fn what_is_left_is_what_the_object_records_and_nothing_else() {
        let lb = obj("v1", "Service", Some("shop"), "public", "s-1")
            .deleting("2026-11-29T11:00:00Z")
            .finalizers(&["service.kubernetes.io/load-balancer-cleanup"])
            .with("status", json!({"loadBalancer": {"ingress": [{"ip": "203.0.113.7"}]}}));
        let plain = obj("v1", "Service", Some("shop"), "internal", "s-2");
        let ns = obj("v1", "Namespace", None, "shop", "ns-1").deleting("2026-11-29T11:00:00Z");
        let g = graph(vec![lb, plain, ns, obj("v1", "Namespace", None, "empty", "ns-2")]);
        let left = behind(&g, node(&g, "Service", "public")).expect("a load balancer");
        assert!(left.contains("203.0.113.7"), "{left}");
        assert_eq!(behind(&g, node(&g, "Service", "internal")), None, "no load balancer recorded");
        let held = behind(&g, node(&g, "Namespace", "shop")).expect("content");
        assert!(held.contains("Service shop/public") && held.contains("named shop is created again"), "{held}");
        assert_eq!(behind(&g, node(&g, "Namespace", "empty")), None);
    }
}

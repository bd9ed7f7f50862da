//! Conversion webhooks whose backend is gone: the objects of that CRD cannot be read.
//!
//! A CustomResourceDefinition with `spec.conversion.strategy: Webhook` asks its webhook to
//! convert every object read or written at a version other than the one it is stored at. The
//! namespace controller and the garbage collector use each resource's preferred version (the
//! highest served version by Kubernetes' version priority), so when objects are stored at
//! another version (`status.storedVersions`) and the webhook's Service cannot serve, their
//! lists and deletes fail: the namespace controller reports `NamespaceDeletionContentFailure`
//! and cannot count or delete them, and the garbage collector's monitor for the resource
//! cannot sync.

use crate::names::CRD;

use serde_json::Value;

use super::backend::{self, Backend, Backends, Target};
use crate::discovery::version_priority;
use crate::graph::{Graph, NodeId};

/// A CRD whose conversion webhook requests need ([`dead_converter`]: and whose backend is dead).
#[derive(Clone, Debug)]
pub struct DeadConverter {
    /// The CustomResourceDefinition.
    pub crd: NodeId,
    /// Where `spec.conversion.webhook.clientConfig` points.
    pub target: Target,
    /// The judged state of that backend.
    pub backend: Backend,
    /// The version the namespace controller and the garbage collector request.
    pub preferred: String,
    /// Stored versions other than the preferred: reading them needs the webhook.
    pub stored_elsewhere: Vec<String>,
}

/// The CRD that defines `group`/`kind`, if it was read.
pub fn crd_of(g: &Graph, group: &str, kind: &str) -> Option<NodeId> {
    g.of_kind(CRD.0, CRD.1).iter().copied().find(|&c| {
        g.object(c)
            .is_some_and(|o| o.str_field("/spec/group") == Some(group) && o.str_field("/spec/names/kind") == Some(kind))
    })
}

/// The CRD's conversion webhook, when the preferred version needs it and its backend is dead.
pub fn dead_converter(g: &Graph, crd: NodeId) -> Option<DeadConverter> {
    converter(g, crd).filter(|c| c.backend.is_dead())
}

/// The CRD's conversion webhook, when reading its objects at the preferred version needs it,
/// whatever the state of its backend (the planner re-judges the backend as the plan deletes
/// things).
pub fn converter(g: &Graph, crd: NodeId) -> Option<DeadConverter> {
    converter_judged_by(g, crd, &Backends::default())
}

/// [`converter`], its backend judged through `backends` (once for every question about it).
pub fn converter_judged_by(g: &Graph, crd: NodeId, backends: &Backends) -> Option<DeadConverter> {
    let o = g.object(crd)?;
    if o.str_field("/spec/conversion/strategy") != Some("Webhook") {
        return None;
    }
    let served: Vec<&str> = o
        .field("/spec/versions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|v| v.get("served").and_then(Value::as_bool).unwrap_or(false))
        .filter_map(|v| v.get("name").and_then(Value::as_str))
        .collect();
    let preferred = served.iter().copied().max_by_key(|v| version_priority(v))?.to_string();
    let stored: Vec<String> = o
        .field("/status/storedVersions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|v| v.as_str().map(String::from))
        .collect();
    // one version, or every object stored at the preferred one: nothing is ever converted
    let stored_elsewhere: Vec<String> = stored.into_iter().filter(|v| *v != preferred).collect();
    if served.len() < 2 || stored_elsewhere.is_empty() {
        return None;
    }
    let target = backend::target_of(o.field("/spec/conversion/webhook/clientConfig"));
    let backend = backends.judge(g, &target);
    Some(DeadConverter { crd, target, backend, preferred, stored_elsewhere })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::testing::{ObjExt, graph, node, obj};

    fn crd(stored: &[&str], versions: &[&str], strategy: &str) -> Value {
        let vs: Vec<Value> =
            versions.iter().map(|v| json!({"name": v, "served": true, "storage": *v == stored[0]})).collect();
        let mut conversion = json!({"strategy": strategy});
        if strategy == "Webhook" {
            conversion["webhook"] = json!({"clientConfig": {"service": {"namespace": "shop-system", "name": "conv"}}, "conversionReviewVersions": ["v1"]});
        }
        obj("apiextensions.k8s.io/v1", "CustomResourceDefinition", None, "carts.shop.example.net", "crd")
            .with(
                "spec",
                json!({"group": "shop.example.net", "scope": "Namespaced", "names": {"kind": "Cart", "plural": "carts", "singular": "cart", "listKind": "CartList"}, "versions": vs, "conversion": conversion}),
            )
            .with("status", json!({"storedVersions": stored}))
    }

    fn ns(name: &str) -> Value {
        obj("v1", "Namespace", None, name, &format!("ns-{name}"))
    }

    #[test]
    fn a_missing_converter_of_a_stored_non_preferred_version_is_dead() {
        let g = graph(vec![crd(&["v1"], &["v1", "v2"], "Webhook"), ns("shop-system")]);
        let d = dead_converter(&g, node(&g, "CustomResourceDefinition", "carts.shop.example.net")).expect("dead");
        assert_eq!(d.preferred, "v2");
        assert_eq!(d.stored_elsewhere, vec!["v1".to_string()]);
        assert_eq!(d.backend, Backend::ServiceMissing);
    }

    #[test]
    fn objects_stored_at_the_preferred_version_need_no_conversion() {
        let g = graph(vec![crd(&["v2"], &["v1", "v2"], "Webhook")]);
        assert!(dead_converter(&g, node(&g, "CustomResourceDefinition", "carts.shop.example.net")).is_none());
    }

    #[test]
    fn strategy_none_never_calls_a_webhook() {
        let g = graph(vec![crd(&["v1"], &["v1", "v2"], "None")]);
        assert!(dead_converter(&g, node(&g, "CustomResourceDefinition", "carts.shop.example.net")).is_none());
    }
}

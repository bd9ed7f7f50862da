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

use serde_json::{Value, json};

use super::backend::{self, Backend, Target};
use super::step::{Command, Reach, Step};
use super::{Explainer, Finding, FindingCode, Related, Severity, Subject, describe};
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
    let backend = backend::judge(g, &target);
    Some(DeadConverter { crd, target, backend, preferred, stored_elsewhere })
}

impl Explainer<'_, '_> {
    /// `x` is a custom resource whose CRD's conversion webhook is dead: it is stuck.
    pub(super) fn explain_conversion(&mut self, x: NodeId) {
        let g = self.g;
        let Some(o) = g.object(x) else { return };
        if o.group().is_empty() || (x == self.target && !o.is_deleting()) {
            return;
        }
        let Some(dead) = crd_of(g, o.group(), &o.kind).and_then(|c| dead_converter(g, c)) else { return };
        self.findings.push(unavailable(g, x, &dead));
        self.local_stuck.push(x);
    }
}

/// `ConversionWebhookUnavailable` for one object.
pub fn unavailable(g: &Graph, x: NodeId, d: &DeadConverter) -> Finding {
    let crd = g.object(d.crd).expect("dead converters are read from observed CRDs");
    let plural = crd.str_field("/spec/names/plural").unwrap_or("");
    let group = crd.str_field("/spec/group").unwrap_or("");
    let stored = d.stored_elsewhere.join(", ");
    let message = format!(
        "{} converts between versions through a webhook whose backend cannot serve ({}). Every request for {plural} at {} (the preferred version, which the namespace controller and the garbage collector use) of objects stored as {stored} fails: {} cannot be listed or deleted that way, a namespace holding it cannot be emptied by the namespace controller, and the garbage collector's view of {plural} cannot sync",
        describe(g, d.crd),
        d.backend.describe(&d.target),
        d.preferred,
        describe(g, x),
    );
    let mut remedy = vec![Step::run(
        Reach::Inspect,
        format!("Read the conversion settings of CRD {}.", crd.name),
        Command::kubectl(["get"]).arg("customresourcedefinition").arg(crd.name.as_str()).flag("-o", "yaml"),
    )];
    match (&d.target, &d.backend) {
        (_, Backend::NamespaceTerminating { namespace, .. }) => remedy.push(Step::advice(
            Reach::Inspect,
            format!(
                "The converter cannot be restored where it was: namespace {namespace} is being deleted and nothing can be created in it. Run it in another namespace and point the CRD's conversion webhook at it, or follow the order below."
            ),
        )),
        (Target::Service { namespace, name }, _) => remedy.push(Step::advice(
            Reach::Restore,
            format!(
                "Restore the converter (Service {namespace}/{name} with ready pods behind it, usually by reinstalling the operator that owns {group}); the namespace controller and the garbage collector then proceed on their own."
            ),
        )),
        _ => {}
    }
    if let Some(v) = d.stored_elsewhere.first() {
        let mut all = Command::kubectl(["get"]).arg(format!("{plural}.{v}.{group}")).switch("--all-namespaces");
        all = all.flag("-o", "yaml");
        remedy.push(Step::run(
            Reach::Inspect,
            format!(
                "Keep a copy of the objects, read at their stored version {v}, which needs no conversion{}: do this before any step below that changes the CRD.",
                if d.stored_elsewhere.len() > 1 {
                    " (objects stored at another version still need the webhook)"
                } else {
                    ""
                }
            ),
            all,
        ));
    }
    remedy.push(Step::run(
        Reach::Disrupt,
        format!(
            "If that operator is gone for good, the safe order is: the copy above, then turn conversion off (strategy None): every version is then served unconverted, so a client of {} may read fields it does not expect, but lists and deletes succeed and the namespace controller and garbage collector proceed; then delete the objects you do not want, and the CRD only after that, if it is not wanted any more (deleting it deletes every {}).",
            d.preferred,
            crd.str_field("/spec/names/kind").unwrap_or("object")
        ),
        Command::kubectl(["patch"])
            .arg("customresourcedefinition")
            .arg(crd.name.as_str())
            .flag("--type", "json")
            .flag("-p", json!([{"op": "replace", "path": "/spec/conversion", "value": {"strategy": "None"}}]).to_string()),
    ));
    Finding {
        code: FindingCode::ConversionWebhookUnavailable,
        severity: Severity::Error,
        object: x,
        related: vec![Related::Node(d.crd)],
        message,
        remedy,
        subject: Subject::Related,
        cannot_tell: false,
    }
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

    #[test]
    fn the_remedy_backs_up_at_the_stored_version_before_turning_conversion_off() {
        let g = graph(vec![
            crd(&["v1"], &["v1", "v2"], "Webhook"),
            ns("shop-system"),
            obj("shop.example.net/v1", "Cart", Some("orders"), "c1", "c1"),
        ]);
        let d = dead_converter(&g, node(&g, "CustomResourceDefinition", "carts.shop.example.net")).unwrap();
        let f = unavailable(&g, node(&g, "Cart", "c1"), &d);
        let conn = crate::diagnose::Connection::default();
        let lines: Vec<String> = f.remedy.iter().filter_map(|s| s.command.as_ref().map(|c| c.line(&conn))).collect();
        let backup = lines.iter().position(|l| l.contains("carts.v1.shop.example.net")).expect("backup step");
        let off = lines.iter().position(|l| l.contains("\"strategy\":\"None\"")).expect("strategy None step");
        assert!(backup < off, "{lines:?}");
        assert!(f.remedy.iter().any(|s| s.text.contains("Restore the converter")));
    }

    #[test]
    fn a_converter_in_a_dying_namespace_is_not_offered_for_restore() {
        let g = graph(vec![
            crd(&["v1"], &["v1", "v2"], "Webhook"),
            ns("shop-system").deleting("2026-01-01T00:00:00Z"),
            obj("shop.example.net/v1", "Cart", Some("orders"), "c1", "c1"),
        ]);
        let d = dead_converter(&g, node(&g, "CustomResourceDefinition", "carts.shop.example.net")).unwrap();
        let f = unavailable(&g, node(&g, "Cart", "c1"), &d);
        assert!(!f.remedy.iter().any(|s| s.reach == Reach::Restore), "{:?}", f.remedy);
    }
}

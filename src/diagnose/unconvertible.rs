//! Objects behind a dead conversion webhook, as findings: `ConversionWebhookUnavailable`
//! (whether a CRD converts through a webhook and whether it serves is
//! [`crate::admission::conversion`]'s).

use serde_json::json;

use super::step::{Command, Reach, Step};
use super::{Explainer, Finding, FindingCode, Related, Severity, Subject, describe};
use crate::admission::backend::{Backend, Target};
use crate::admission::conversion::{DeadConverter, converter_judged_by, crd_of};
use crate::graph::{Graph, NodeId};

impl Explainer<'_, '_> {
    /// `x` is a custom resource whose CRD's conversion webhook is dead: it is stuck.
    pub(super) fn explain_conversion(&mut self, x: NodeId) {
        let g = self.g;
        let Some(o) = g.object(x) else { return };
        if o.group().is_empty() || (x == self.target && !o.is_deleting()) {
            return;
        }
        let backends = self.shared.admission.backends();
        let Some(dead) = crd_of(g, o.group(), &o.kind)
            .and_then(|c| converter_judged_by(g, c, backends))
            .filter(|c| c.backend.is_dead())
        else {
            return;
        };
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
        (Target::Service { namespace, name, .. }, Backend::NoSuchPort { port, .. }) => remedy.push(Step::advice(
            Reach::Restore,
            format!(
                "Expose port {port} on Service {namespace}/{name} again, or point the CRD's conversion webhook (spec.conversion.webhook.clientConfig.service.port) at a port it exposes; the namespace controller and the garbage collector then proceed on their own."
            ),
        )),
        (Target::Service { namespace, name, .. }, _) => remedy.push(Step::advice(
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
    if let Some(step) = delete_at_stored_version(g, x, d, plural, group) {
        remedy.push(step);
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
    remedy.extend(unsafe_delete(g, x, d));
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

/// Content of a namespace being deleted, whose objects are all stored at one version: deleted
/// through that version, which needs no conversion, it goes as the namespace controller would
/// have deleted it (its finalizers run), and once none is left the controller's list at the
/// preferred version has nothing to convert. Nothing cluster-wide changes, unlike turning
/// conversion off.
fn delete_at_stored_version(g: &Graph, x: NodeId, d: &DeadConverter, plural: &str, group: &str) -> Option<Step> {
    let [stored] = d.stored_elsewhere.as_slice() else { return None };
    // stored at the preferred version too, some objects would need converting to `stored`
    let crd = g.object(d.crd)?;
    if crd.field("/status/storedVersions").and_then(|v| v.as_array()).is_none_or(|v| v.len() != 1) {
        return None;
    }
    let id = g.identity(x);
    let ns = id.namespace?;
    let deleting = g.find("", "Namespace", None, ns).and_then(|n| g.object(n)).is_some_and(|n| n.is_deleting());
    if !deleting {
        return None;
    }
    Some(Step::run(
        Reach::Disrupt,
        format!(
            "Or, since namespace {ns} is being deleted and takes its content with it: delete the content through its stored version {stored}, which needs no conversion. Its finalizers still run; once no {plural} are left in {ns}, the namespace controller's request at {} has nothing to convert and the deletion goes on. Nothing outside {ns} changes.",
            d.preferred
        ),
        Command::kubectl(["delete"]).arg(format!("{plural}.{stored}.{group}")).arg(id.name).namespace(Some(ns)),
    ))
}

/// The last resort for an object the API server cannot decode (KEP-3926): a DELETE with
/// `ignoreStoreReadErrorWithClusterBreakingPotential`, which removes it from storage without
/// reading it, running its finalizers, or telling anyone. Only after fixing the conversion (or
/// turning it off) has proved impossible, and never for an API server older than 1.32, which
/// has no such option. It takes the feature gate `AllowUnsafeMalformedObjectDeletion` on
/// kube-apiserver and the `unsafe-delete-ignore-read-errors` verb on the resource
/// (`plugin/policy/unsafedeletepolicy`).
fn unsafe_delete(g: &Graph, x: NodeId, d: &DeadConverter) -> Option<Step> {
    let (available, basis) = crate::release::unsafe_delete(g);
    if available == Some(false) {
        return None;
    }
    let crd = g.object(d.crd)?;
    let (plural, group) = (crd.str_field("/spec/names/plural")?, crd.str_field("/spec/group")?);
    let id = g.identity(x);
    let version = crd
        .field("/spec/versions")
        .and_then(|v| v.as_array())
        .and_then(|vs| vs.iter().find(|v| v["storage"].as_bool() == Some(true)))
        .and_then(|v| v["name"].as_str())
        .unwrap_or(&d.preferred);
    // a word that cannot be a Kubernetes name would take the DELETE to another path: no
    // command is printed for it
    let path = crate::names::api_path::custom_object(group, version, id.namespace, plural, id.name).ok()?;
    // one text for every object, so a namespace's many are one step with many commands
    Some(Step::run(
        Reach::Destructive,
        format!(
            "Last resort, only if the conversion can neither be fixed nor turned off and the API server reports the object as corrupt (it cannot decode it from storage): delete it without reading it (KEP-3926). It leaves storage at once, its finalizers never run and no controller is told, so whatever it guards is stranded. It takes Kubernetes 1.32 or newer ({basis}), the feature gate AllowUnsafeMalformedObjectDeletion on kube-apiserver (alpha from 1.32, off by default) and permission for the verb unsafe-delete-ignore-read-errors on {plural}."
        ),
        // the DELETE's query parameter through --raw: kubectl has no flag for it (v1.32's
        // `kubectl delete` refuses one), and --raw sends exactly this request
        Command::kubectl(["delete"])
            .flag("--raw", format!("{path}?ignoreStoreReadErrorWithClusterBreakingPotential=true")),
    ))
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use crate::admission::conversion::dead_converter;

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
    fn content_of_a_namespace_being_deleted_is_deleted_at_its_stored_version_before_anything_cluster_wide() {
        let conn = crate::diagnose::Connection::default();
        let lines = |namespace: Value, stored: &[&str]| -> Vec<String> {
            let g = graph(vec![
                crd(stored, &["v1", "v2"], "Webhook"),
                ns("shop-system"),
                namespace,
                obj("shop.example.net/v1", "Cart", Some("orders"), "c1", "c1"),
            ]);
            let d = dead_converter(&g, node(&g, "CustomResourceDefinition", "carts.shop.example.net")).unwrap();
            let f = unavailable(&g, node(&g, "Cart", "c1"), &d);
            f.remedy.iter().filter_map(|s| s.command.as_ref().map(|c| c.line(&conn))).collect()
        };
        let deleting = || {
            ns("orders").with(
                "metadata",
                json!({"name": "orders", "uid": "ns-orders", "deletionTimestamp": "2026-11-29T11:00:00Z"}),
            )
        };
        let got = lines(deleting(), &["v1"]);
        let delete = got
            .iter()
            .position(|l| l == "kubectl delete carts.v1.shop.example.net c1 -n orders")
            .unwrap_or_else(|| panic!("{got:?}"));
        let off = got.iter().position(|l| l.contains("\"strategy\":\"None\"")).unwrap();
        assert!(delete < off, "{got:?}");
        // not for a namespace that stays, nor when objects may be stored at two versions
        for (namespace, stored) in [(ns("orders"), &["v1"][..]), (deleting(), &["v1", "v2"][..])] {
            let got = lines(namespace, stored);
            assert!(!got.iter().any(|l| l.starts_with("kubectl delete carts.v1")), "{got:?}");
        }
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

    #[test]
    fn the_unsafe_delete_comes_last_after_fixing_the_conversion_and_never_before_1_32() {
        let world = |version: Option<&str>| {
            let mut s = crate::testing::snapshot(vec![
                crd(&["v1"], &["v1", "v2"], "Webhook"),
                ns("shop-system"),
                obj("shop.example.net/v1", "Cart", Some("orders"), "c1", "c1"),
            ]);
            s.server_version = version.map(String::from);
            Graph::build(s)
        };
        let conn = crate::diagnose::Connection::default();
        let g = world(Some("v1.34.2"));
        let d = dead_converter(&g, node(&g, "CustomResourceDefinition", "carts.shop.example.net")).unwrap();
        let f = unavailable(&g, node(&g, "Cart", "c1"), &d);
        let last = f.remedy.last().unwrap();
        assert_eq!(last.reach, Reach::Destructive);
        let line = last.command.as_ref().unwrap().line(&conn);
        assert_eq!(
            line,
            "kubectl delete '--raw=/apis/shop.example.net/v1/namespaces/orders/carts/c1?ignoreStoreReadErrorWithClusterBreakingPotential=true'"
        );
        assert!(
            last.text.contains("AllowUnsafeMalformedObjectDeletion") && last.text.contains("v1.34.2"),
            "{}",
            last.text
        );
        let off = f
            .remedy
            .iter()
            .position(|s| s.command.as_ref().is_some_and(|c| c.line(&conn).contains("\"strategy\":\"None\"")))
            .unwrap();
        assert!(off < f.remedy.len() - 1, "after turning conversion off");
        // a 1.31 API server has no such option
        let g = world(Some("v1.31.9"));
        let d = dead_converter(&g, node(&g, "CustomResourceDefinition", "carts.shop.example.net")).unwrap();
        let f = unavailable(&g, node(&g, "Cart", "c1"), &d);
        assert!(
            !f.remedy
                .iter()
                .any(|s| s.command.as_ref().is_some_and(|c| c.line(&conn).contains("ignoreStoreReadError")))
        );
        // unknown: offered, saying what it needs
        let g = world(None);
        let d = dead_converter(&g, node(&g, "CustomResourceDefinition", "carts.shop.example.net")).unwrap();
        let f = unavailable(&g, node(&g, "Cart", "c1"), &d);
        assert!(f.remedy.last().unwrap().text.contains("1.32 or newer (the input records no server version)"));
    }

    /// A name the API server could not have stored (`..`, `a/../b`, bidi controls) would send
    /// the DELETE elsewhere: no unsafe delete is printed for it, and the valid ones still are.
    #[test]
    fn no_unsafe_delete_for_a_name_that_cannot_be_a_kubernetes_name() {
        let conn = crate::diagnose::Connection::default();
        for (name, printed) in
            [("c1", true), ("..", false), ("a/../b", false), ("c\u{202e}1", false), ("%2e%2e", false), ("C1", false)]
        {
            let mut s = crate::testing::snapshot(vec![
                crd(&["v1"], &["v1", "v2"], "Webhook"),
                ns("shop-system"),
                obj("shop.example.net/v1", "Cart", Some("orders"), name, "c1"),
            ]);
            s.server_version = Some("v1.34.2".into());
            let g = Graph::build(s);
            let d = dead_converter(&g, node(&g, "CustomResourceDefinition", "carts.shop.example.net")).unwrap();
            let f = unavailable(&g, node(&g, "Cart", name), &d);
            let raw: Vec<String> = f
                .remedy
                .iter()
                .filter_map(|s| s.command.as_ref().map(|c| c.line(&conn)))
                .filter(|l| l.contains("--raw"))
                .collect();
            assert_eq!(raw.len(), usize::from(printed), "{name:?}: {raw:?}");
        }
    }
}

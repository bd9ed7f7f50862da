//! One test per rule shape (operations, scope, resources, selectors, matchConditions, `url`
//! backends); the findings they give are `diagnose::admission`'s tests.

use serde_json::{Value, json};

use super::*;
use crate::admission::selector::selector_matches;
use crate::testing::{ObjExt, graph, node, obj};

const DELETED: &str = "2026-11-29T11:00:00Z";

fn crd() -> Value {
    obj("apiextensions.k8s.io/v1", "CustomResourceDefinition", None, "accounts.ledger.example.org", "crd").with(
        "spec",
        json!({"group": "ledger.example.org", "scope": "Namespaced",
               "names": {"kind": "Account", "plural": "accounts", "singular": "account", "listKind": "AccountList"},
               "versions": [{"name": "v1", "served": true, "storage": true}]}),
    )
}

fn ns(name: &str, labels: Value) -> Value {
    let mut n = obj("v1", "Namespace", None, name, &format!("ns-{name}"));
    n["metadata"]["labels"] = labels;
    n
}

fn account(labels: Value) -> Value {
    let mut a = obj("ledger.example.org/v1", "Account", Some("finance"), "acme", "acme")
        .deleting(DELETED)
        .finalizers(&["ledger.example.org/archive"]);
    a["metadata"]["labels"] = labels;
    a
}

fn rule(ops: &[&str], resources: &[&str], scope: &str) -> Value {
    json!({"apiGroups": ["ledger.example.org"], "apiVersions": ["v1"], "operations": ops, "resources": resources, "scope": scope})
}

fn config(webhook: Value) -> Value {
    obj("admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration", None, "ledger-policy", "vwc")
        .with("webhooks", json!([webhook]))
}

fn hook(rules: Value) -> Value {
    json!({"name": "accounts.ledger.example.org", "failurePolicy": "Fail", "rules": rules,
           "clientConfig": {"service": {"namespace": "ledger-system", "name": "ledger-webhook"}}})
}

/// The account, its namespace, the backend's namespace (no Service: missing), and `webhook`.
fn world(webhook: Value, account_labels: Value, ns_labels: Value) -> Graph {
    graph(vec![
        crd(),
        ns("finance", ns_labels),
        ns("ledger-system", json!({})),
        account(account_labels),
        config(webhook),
    ])
}

fn intercepted(g: &Graph) -> Vec<Interceptor> {
    interceptors(g, node(g, "Account", "acme"), Operation::Update)
}

#[test]
fn update_in_the_operations_is_intercepted() {
    let g = world(hook(json!([rule(&["UPDATE"], &["accounts"], "*")])), json!({}), json!({}));
    let i = intercepted(&g);
    assert_eq!(i.len(), 1);
    assert_eq!(i[0].backend, Backend::ServiceMissing);
    assert!(i[0].caveats.is_empty());
}

#[test]
fn create_only_is_not_intercepted() {
    let g = world(hook(json!([rule(&["CREATE"], &["accounts"], "*")])), json!({}), json!({}));
    assert!(intercepted(&g).is_empty());
}

#[test]
fn operation_wildcard_is_intercepted() {
    let g = world(hook(json!([rule(&["*"], &["accounts"], "*")])), json!({}), json!({}));
    assert_eq!(intercepted(&g).len(), 1);
}

#[test]
fn delete_is_intercepted_only_by_delete_rules() {
    let g = world(hook(json!([rule(&["DELETE"], &["accounts"], "*")])), json!({}), json!({}));
    let x = node(&g, "Account", "acme");
    assert!(interceptors(&g, x, Operation::Update).is_empty());
    assert_eq!(interceptors(&g, x, Operation::Delete).len(), 1);
}

#[test]
fn resource_wildcards_and_subresources() {
    for (resources, hit) in [
        (vec!["*"], true),
        (vec!["*/*"], true),
        (vec!["accounts/*"], true),
        (vec!["accounts/status"], false),
        (vec!["*/status"], false),
        (vec!["ledgers"], false),
    ] {
        let g = world(hook(json!([rule(&["UPDATE"], &resources, "*")])), json!({}), json!({}));
        assert_eq!(!intercepted(&g).is_empty(), hit, "{resources:?}");
    }
}

#[test]
fn scope_cluster_skips_namespaced_objects() {
    let g = world(hook(json!([rule(&["UPDATE"], &["accounts"], "Cluster")])), json!({}), json!({}));
    assert!(intercepted(&g).is_empty());
    let g = world(hook(json!([rule(&["UPDATE"], &["accounts"], "Namespaced")])), json!({}), json!({}));
    assert_eq!(intercepted(&g).len(), 1);
}

#[test]
fn scope_namespaced_skips_namespaces_themselves() {
    let w = json!({"name": "ns.example.org", "failurePolicy": "Fail",
        "rules": [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["UPDATE"], "resources": ["namespaces"], "scope": "Namespaced"}],
        "clientConfig": {"service": {"namespace": "ledger-system", "name": "ledger-webhook"}}});
    let n = ns("finance", json!({})).deleting(DELETED).finalizers(&["example.org/x"]);
    let g = graph(vec![n, config(w)]);
    assert!(interceptors(&g, node(&g, "Namespace", "finance"), Operation::Update).is_empty());
}

#[test]
fn other_groups_are_not_intercepted() {
    let mut r = rule(&["UPDATE"], &["accounts"], "*");
    r["apiGroups"] = json!(["other.example.org"]);
    let g = world(hook(json!([r])), json!({}), json!({}));
    assert!(intercepted(&g).is_empty());
}

#[test]
fn exact_match_policy_compares_versions() {
    let mut r = rule(&["UPDATE"], &["accounts"], "*");
    r["apiVersions"] = json!(["v2"]);
    let mut w = hook(json!([r]));
    let g = world(w.clone(), json!({}), json!({}));
    assert_eq!(intercepted(&g).len(), 1, "Equivalent (the default) sends other versions too");
    w["matchPolicy"] = json!("Exact");
    let g = world(w, json!({}), json!({}));
    assert!(intercepted(&g).is_empty());
}

#[test]
fn failure_policy_ignore_never_rejects() {
    let mut w = hook(json!([rule(&["UPDATE"], &["accounts"], "*")]));
    w["failurePolicy"] = json!("Ignore");
    let g = world(w, json!({}), json!({}));
    assert!(intercepted(&g).is_empty());
}

#[test]
fn namespace_selector_is_evaluated_on_the_namespace_labels() {
    let mut w = hook(json!([rule(&["UPDATE"], &["accounts"], "*")]));
    w["namespaceSelector"] = json!({"matchLabels": {"policy": "on"}});
    assert!(intercepted(&world(w.clone(), json!({}), json!({"policy": "off"}))).is_empty());
    assert_eq!(intercepted(&world(w, json!({}), json!({"policy": "on"}))).len(), 1);
}

#[test]
fn namespace_selector_expressions() {
    let mut w = hook(json!([rule(&["UPDATE"], &["accounts"], "*")]));
    w["namespaceSelector"] = json!({"matchExpressions": [{"key": "control-plane", "operator": "DoesNotExist"}]});
    assert!(intercepted(&world(w.clone(), json!({}), json!({"control-plane": "yes"}))).is_empty());
    assert_eq!(intercepted(&world(w, json!({}), json!({}))).len(), 1);
}

#[test]
fn object_selector_is_evaluated_on_the_object_labels() {
    let mut w = hook(json!([rule(&["UPDATE"], &["accounts"], "*")]));
    w["objectSelector"] = json!({"matchExpressions": [{"key": "tier", "operator": "In", "values": ["gold"]}]});
    assert!(intercepted(&world(w.clone(), json!({"tier": "silver"}), json!({}))).is_empty());
    assert_eq!(intercepted(&world(w, json!({"tier": "gold"}), json!({}))).len(), 1);
}

#[test]
fn match_conditions_may_match_and_say_so() {
    let mut w = hook(json!([rule(&["UPDATE"], &["accounts"], "*")]));
    w["matchConditions"] =
        json!([{"name": "not-system", "expression": "!request.userInfo.username.startsWith('system:')"}]);
    let i = intercepted(&world(w, json!({}), json!({})));
    assert_eq!(i.len(), 1);
    assert!(i[0].caveats.iter().any(|c| c.contains("not-system")), "{:?}", i[0].caveats);
}

#[test]
fn a_url_backend_is_not_judged_dead() {
    let mut w = hook(json!([rule(&["UPDATE"], &["accounts"], "*")]));
    w["clientConfig"] = json!({"url": "https://policy.example.com/validate"});
    let i = intercepted(&world(w, json!({}), json!({})));
    assert!(matches!(i[0].backend, Backend::Unknown(_)));
}

#[test]
fn webhook_configurations_are_exempt() {
    let w = json!({"name": "all.example.org", "failurePolicy": "Fail",
        "rules": [{"apiGroups": ["*"], "apiVersions": ["*"], "operations": ["*"], "resources": ["*"], "scope": "*"}],
        "clientConfig": {"service": {"namespace": "ledger-system", "name": "ledger-webhook"}}});
    let c = config(w).deleting(DELETED).finalizers(&["example.org/x"]);
    let g = graph(vec![c]);
    assert!(
        interceptors(&g, node(&g, "ValidatingWebhookConfiguration", "ledger-policy"), Operation::Update).is_empty()
    );
}

#[test]
fn a_namespace_not_read_makes_a_namespace_selector_a_maybe() {
    let mut w = hook(json!([rule(&["UPDATE"], &["accounts"], "*")]));
    w["namespaceSelector"] = json!({"matchLabels": {"policy": "on"}});
    let g = graph(vec![crd(), account(json!({})), config(w)]);
    let i = intercepted(&g);
    assert_eq!(i.len(), 1);
    assert!(i[0].caveats.iter().any(|c| c.contains("namespaceSelector")), "{:?}", i[0].caveats);
}

#[test]
fn an_object_selector_on_labels_not_kept_is_a_maybe() {
    // a custom resource not being deleted: the snapshot drops its labels
    let mut w = hook(json!([rule(&["DELETE"], &["accounts"], "*")]));
    w["objectSelector"] = json!({"matchLabels": {"tier": "gold"}});
    let live = obj("ledger.example.org/v1", "Account", Some("finance"), "open", "open");
    let g = graph(vec![crd(), ns("finance", json!({})), live, config(w)]);
    let i = interceptors(&g, node(&g, "Account", "open"), Operation::Delete);
    assert_eq!(i.len(), 1);
    assert!(i[0].caveats.iter().any(|c| c.contains("objectSelector")), "{:?}", i[0].caveats);
}

#[test]
fn selectors_without_terms_match_everything() {
    assert_eq!(selector_matches(Some(&json!({})), None), Some(true));
    assert_eq!(selector_matches(Some(&json!({"matchLabels": {}, "matchExpressions": []})), None), Some(true));
    assert_eq!(selector_matches(Some(&json!({"matchLabels": {"a": "b"}})), None), None);
}

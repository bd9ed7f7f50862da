//! Which admission policies apply to a request, and how their params stand.

use serde_json::json;

use super::*;
use crate::testing::{ObjExt, graph, node, obj};

const PROTECT: &str = "!has(oldObject.metadata.deletionTimestamp) || object.metadata.finalizers.size() > 0";

fn policy(name: &str, rules: Value) -> Value {
    obj("admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicy", None, name, &format!("vap-{name}")).with(
        "spec",
        json!({"failurePolicy": "Fail", "matchConstraints": {"resourceRules": rules},
               "validations": [{"expression": PROTECT, "message": "keep the finalizer"}]}),
    )
}

fn binding(name: &str, policy: &str, actions: &[&str], match_resources: Option<Value>) -> Value {
    let mut spec = json!({"policyName": policy, "validationActions": actions});
    if let Some(m) = match_resources {
        spec["matchResources"] = m;
    }
    obj("admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicyBinding", None, name, &format!("b-{name}"))
        .with("spec", spec)
}

fn cm_rule(ops: &[&str]) -> Value {
    json!([{"apiGroups": [""], "apiVersions": ["v1"], "operations": ops, "resources": ["configmaps"]}])
}

/// Namespace d (env=prod), its ConfigMap cm being deleted, and `extra`.
fn objects(extra: Vec<Value>) -> Vec<Value> {
    let mut objs = vec![
        obj("v1", "Namespace", None, "d", "ns-d")
            .with("metadata", json!({"name": "d", "uid": "ns-d", "labels": {"env": "prod"}})),
        obj("v1", "ConfigMap", Some("d"), "cm", "cm")
            .deleting("2026-11-29T11:00:00Z")
            .finalizers(&["example.com/keep"]),
    ];
    objs.extend(extra);
    objs
}

fn world(extra: Vec<Value>) -> Graph {
    graph(objects(extra))
}

fn found(g: &Graph, op: Operation) -> Vec<(String, String)> {
    Policies::new(g)
        .matching(g, node(g, "ConfigMap", "cm"), op)
        .iter()
        .map(|m| (g.identity(m.policy).name.to_string(), m.binding.map_or("", |b| g.identity(b).name).to_string()))
        .collect()
}

#[test]
fn a_bound_policy_whose_rules_cover_the_request_applies_and_reads_the_fields() {
    let g = world(vec![policy("keep", cm_rule(&["UPDATE"])), binding("keep-all", "keep", &["Deny"], None)]);
    let m = Policies::new(&g).matching(&g, node(&g, "ConfigMap", "cm"), Operation::Update);
    assert_eq!(m.len(), 1);
    assert!(m[0].may_deny() && m[0].caveats.is_empty(), "{m:?}");
    assert!(m[0].reads[0].starts_with("validations[0]: ") && m[0].reads[0].contains("deletionTimestamp"));
    assert_eq!(m[0].describe(&g), "ValidatingAdmissionPolicy keep (binding keep-all)");
    // the rules name UPDATE only
    assert!(found(&g, Operation::Delete).is_empty());
}

#[test]
fn no_binding_or_one_that_only_warns_applies_nothing() {
    let g = world(vec![policy("keep", cm_rule(&["*"]))]);
    assert!(found(&g, Operation::Update).is_empty());
    let g = world(vec![policy("keep", cm_rule(&["*"])), binding("warn", "keep", &["Warn", "Audit"], None)]);
    assert!(found(&g, Operation::Update).is_empty());
    let g = world(vec![policy("keep", cm_rule(&["*"])), binding("other", "not-keep", &["Deny"], None)]);
    assert!(found(&g, Operation::Update).is_empty());
}

#[test]
fn excluded_resources_selectors_and_resource_names_leave_the_request_out() {
    let mut p = policy("keep", cm_rule(&["*"]));
    p["spec"]["matchConstraints"]["excludeResourceRules"] = cm_rule(&["UPDATE"]);
    let g = world(vec![p, binding("b", "keep", &["Deny"], None)]);
    assert!(found(&g, Operation::Update).is_empty());
    assert_eq!(found(&g, Operation::Delete).len(), 1);
    // the binding narrows to namespaces labelled env=dev: d is prod
    let g = world(vec![
        policy("keep", cm_rule(&["*"])),
        binding("dev", "keep", &["Deny"], Some(json!({"namespaceSelector": {"matchLabels": {"env": "dev"}}}))),
        binding("prod", "keep", &["Deny"], Some(json!({"namespaceSelector": {"matchLabels": {"env": "prod"}}}))),
    ]);
    assert_eq!(found(&g, Operation::Update), [("keep".to_string(), "prod".to_string())]);
    let mut named = cm_rule(&["*"]);
    named[0]["resourceNames"] = json!(["other"]);
    let g = world(vec![policy("keep", named), binding("b", "keep", &["Deny"], None)]);
    assert!(found(&g, Operation::Update).is_empty());
}

#[test]
fn a_mutating_policy_applies_to_updates_only_and_its_conditions_are_caveats() {
    let p = obj("admissionregistration.k8s.io/v1beta1", "MutatingAdmissionPolicy", None, "readd", "map").with(
        "spec",
        json!({"matchConstraints": {"resourceRules": cm_rule(&["*"])},
               "matchConditions": [{"name": "deleting", "expression": "has(object.metadata.deletionTimestamp)"}],
               "mutations": [{"patchType": "ApplyConfiguration", "applyConfiguration":
                   {"expression": "Object{metadata: Object.metadata{finalizers: ['example.com/keep']}}"}}]}),
    );
    let b = obj("admissionregistration.k8s.io/v1beta1", "MutatingAdmissionPolicyBinding", None, "readd", "mapb")
        .with("spec", json!({"policyName": "readd"}));
    let g = world(vec![p, b]);
    let m = Policies::new(&g).matching(&g, node(&g, "ConfigMap", "cm"), Operation::Update);
    assert_eq!(m.len(), 1);
    assert_eq!(m[0].kind, Kind::Mutating);
    assert_eq!(m[0].reads.len(), 2, "{:?}", m[0].reads);
    assert!(m[0].caveats[0].contains("deleting"), "{:?}", m[0].caveats);
    assert!(found(&g, Operation::Delete).is_empty());
}

/// `world`, read as live reads are: with discovery data (what is served is known), and
/// with these reads failed.
fn discovered(extra: Vec<Value>, incomplete: Vec<crate::snapshot::Gap>) -> Graph {
    crate::testing::graph_discovered(objects(extra), incomplete)
}

fn matches(g: &Graph) -> Vec<PolicyMatch> {
    Policies::new(g).matching(g, node(g, "ConfigMap", "cm"), Operation::Update)
}

/// The matches that may deny the request as things stand.
fn deniers(g: &Graph) -> Vec<PolicyMatch> {
    matches(g).into_iter().filter(PolicyMatch::may_deny).collect()
}

/// A policy taking its params from ConfigMaps, and a binding that only warns.
fn with_params(param_ref: Value) -> Vec<Value> {
    let mut p = policy("limits", cm_rule(&["*"]));
    p["spec"]["paramKind"] = json!({"apiVersion": "v1", "kind": "ConfigMap"});
    let mut b = binding("limits", "limits", &["Warn"], None);
    b["spec"]["paramRef"] = param_ref;
    vec![p, b]
}

#[test]
fn a_policy_whose_param_kind_is_not_served_denies_what_it_matches_whatever_its_bindings_say() {
    let unserved = || {
        let mut p = policy("quota", cm_rule(&["*"]));
        p["spec"]["paramKind"] = json!({"apiVersion": "quota.example.com/v1", "kind": "Quota"});
        // a binding that only warns, and would not even match (d is prod)
        let b =
            binding("quota", "quota", &["Warn"], Some(json!({"namespaceSelector": {"matchLabels": {"env": "dev"}}})));
        vec![p, b]
    };
    let g = discovered(unserved(), vec![]);
    let m = matches(&g);
    assert_eq!(m.len(), 1, "{m:?}");
    assert_eq!(m[0].binding, None);
    assert!(m[0].denies() && m[0].reads.is_empty(), "{m:?}");
    assert!(m[0].misconfigured.as_ref().unwrap().why.contains("quota.example.com/v1 Quota"), "{m:?}");
    assert!(m[0].fails_to_configure(&g).unwrap().starts_with("ValidatingAdmissionPolicy quota fails to configure: "));
    // served: no error of its own (and its binding, without paramRef, does not deny)
    let crd = obj("apiextensions.k8s.io/v1", "CustomResourceDefinition", None, "quotas.quota.example.com", "crd").with(
        "spec",
        json!({"group": "quota.example.com", "scope": "Namespaced",
               "names": {"kind": "Quota", "plural": "quotas"}, "versions": [{"name": "v1", "served": true}]}),
    );
    assert!(matches(&discovered([unserved(), vec![crd]].concat(), vec![])).is_empty());
    // failurePolicy Ignore: the error is ignored
    let mut ignore = unserved();
    ignore[0]["spec"]["failurePolicy"] = json!("Ignore");
    assert!(matches(&discovered(ignore, vec![])).is_empty());
    // without discovery data, or with its group's discovery failed: it may fail, not certain
    let failed = crate::snapshot::Gap::new(
        crate::snapshot::Missing::Discovery { group: "quota.example.com".into(), version: "v1".into() },
        "503",
    );
    for g in [world(unserved()), discovered(unserved(), vec![failed])] {
        let m = matches(&g);
        assert!(m.len() == 1 && m[0].may_deny() && !m[0].denies(), "{m:?}");
        assert!(m[0].fails_to_configure(&g).unwrap().contains("(not certain: "), "{m:?}");
    }
}

#[test]
fn missing_params_deny_with_deny_and_invoke_nothing_with_allow() {
    let by_name =
        |action: &str| with_params(json!({"name": "limits", "namespace": "policy", "parameterNotFoundAction": action}));
    let limits = || obj("v1", "ConfigMap", Some("policy"), "limits", "cm-limits");
    // missing and Deny: the binding fails to configure, Warn-only though it is
    let g = discovered(by_name("Deny"), vec![]);
    let m = matches(&g);
    assert!(m.len() == 1 && m[0].denies() && m[0].binding.is_some(), "{m:?}");
    let why = &m[0].misconfigured.as_ref().unwrap().why;
    assert!(why.contains("ConfigMap policy/limits") && why.contains("Deny"), "{why}");
    // found: the expressions decide, and a Warn-only binding denies nothing while they exist
    let g = discovered([by_name("Deny"), vec![limits()]].concat(), vec![]);
    let m = matches(&g);
    assert!(m.len() == 1 && !m[0].may_deny(), "{m:?}");
    assert!(m[0].deny_when_params_gone && m[0].params == [node(&g, "ConfigMap", "limits")], "{m:?}");
    let mut deny = [by_name("Deny"), vec![limits()]].concat();
    deny[1]["spec"]["validationActions"] = json!(["Deny"]);
    let m = matches(&discovered(deny, vec![]));
    assert!(m.len() == 1 && m[0].misconfigured.is_none() && !m[0].reads.is_empty(), "{m:?}");
    // missing and Allow: the binding is not invoked at all, Deny action or not
    let mut allow = by_name("Allow");
    allow[1]["spec"]["validationActions"] = json!(["Deny"]);
    assert!(matches(&discovered(allow.clone(), vec![])).is_empty());
    // the ConfigMaps of `policy` not read: missing is not known
    let gap = crate::snapshot::Gap::new(
        crate::snapshot::Missing::List {
            resource: crate::snapshot::Resource::new("", "v1", "configmaps"),
            namespace: Some("policy".into()),
        },
        "forbidden (403)",
    );
    let m = matches(&discovered(by_name("Deny"), vec![gap.clone()]));
    assert!(m.len() == 1 && !m[0].denies() && m[0].may_deny(), "{m:?}");
    assert_eq!(matches(&discovered(allow, vec![gap])).len(), 1, "Allow, unread: it may be invoked");
}

#[test]
fn params_are_looked_for_where_the_binding_says_and_by_its_selector() {
    // no namespace: the request's (d)
    let here = with_params(json!({"name": "limits", "parameterNotFoundAction": "Deny"}));
    assert_eq!(matches(&discovered(here.clone(), vec![])).len(), 1);
    let in_d = obj("v1", "ConfigMap", Some("d"), "limits", "cm-limits");
    assert!(deniers(&discovered([here, vec![in_d]].concat(), vec![])).is_empty());
    // a selector: nothing of the kind in d but the ConfigMap being deleted, whose labels
    // were kept (none): no param
    let selected =
        with_params(json!({"selector": {"matchLabels": {"tier": "gold"}}, "parameterNotFoundAction": "Deny"}));
    let m = matches(&discovered(selected.clone(), vec![]));
    assert!(m.len() == 1 && m[0].denies(), "{m:?}");
    let labelled = |tier: &str, deleting: bool| {
        let o = obj("v1", "ConfigMap", Some("d"), "gold", "cm-gold")
            .with("metadata", json!({"name": "gold", "namespace": "d", "uid": "cm-gold", "labels": {"tier": tier}}));
        if deleting { o.deleting("2026-11-29T11:00:00Z") } else { o }
    };
    // labels kept (being deleted): gold is a param, silver is not
    assert!(deniers(&discovered([selected.clone(), vec![labelled("gold", true)]].concat(), vec![])).is_empty());
    assert!(matches(&discovered([selected.clone(), vec![labelled("silver", true)]].concat(), vec![]))[0].denies());
    // labels not kept: it may be a param, and nothing is claimed
    assert!(matches(&discovered([selected, vec![labelled("silver", false)]].concat(), vec![])).is_empty());
    // a namespace named for a cluster-scoped paramKind: a configuration error
    let mut cluster = with_params(json!({"name": "x", "namespace": "d", "parameterNotFoundAction": "Allow"}));
    cluster[0]["spec"]["paramKind"] = json!({"apiVersion": "v1", "kind": "Namespace"});
    let m = matches(&discovered(cluster, vec![]));
    assert!(m.len() == 1 && m[0].denies(), "{m:?}");
    assert!(m[0].misconfigured.as_ref().unwrap().why.contains("cluster-scoped"), "{m:?}");
}

#[test]
fn on_a_delete_every_validation_decides_whatever_it_reads() {
    let mut p = policy("protect", cm_rule(&["DELETE", "UPDATE"]));
    p["spec"]["validations"] = json!([{"expression": "!('protected' in oldObject.metadata.labels)"}]);
    let g = world(vec![p, binding("b", "protect", &["Deny"], None)]);
    let m = Policies::new(&g).matching(&g, node(&g, "ConfigMap", "cm"), Operation::Delete);
    assert!(m.len() == 1 && m[0].may_deny(), "{m:?}");
    assert!(m[0].reads[0].starts_with("validations[0]: ") && m[0].reads[0].contains("protected"), "{m:?}");
    assert_eq!(m[0].why_deciding(), "its validations decide on DELETEs");
    // the finalizer's removal leaves the labels as they are: not one that may deny it
    assert!(!Policies::new(&g).matching(&g, node(&g, "ConfigMap", "cm"), Operation::Update)[0].may_deny());
    // one that reads `object`, null on a DELETE: it fails, and failurePolicy Fail denies
    let mut p = policy("labels", cm_rule(&["*"]));
    p["spec"]["validations"] = json!([{"expression": "object.metadata.labels.team != ''"}]);
    let g = world(vec![p, binding("b", "labels", &["Deny"], None)]);
    let m = Policies::new(&g).matching(&g, node(&g, "ConfigMap", "cm"), Operation::Delete);
    assert!(m[0].why_deciding().contains("`object`, which is null on a DELETE"), "{m:?}");
}

#[test]
fn a_policy_that_reads_neither_field_applies_but_may_not_deny() {
    let mut p = policy("labels", cm_rule(&["*"]));
    p["spec"]["validations"] = json!([{"expression": "has(object.metadata.labels)"}]);
    let g = world(vec![p, binding("b", "labels", &["Deny"], None)]);
    let m = Policies::new(&g).matching(&g, node(&g, "ConfigMap", "cm"), Operation::Update);
    assert_eq!(m.len(), 1);
    assert!(!m[0].may_deny());
}

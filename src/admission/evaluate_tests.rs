//! Policies judged by their CEL: definite where every function and field is known, undecided
//! (naming why) where not.

use serde_json::{Value, json};

use super::*;
use crate::admission::Index;
use crate::testing::{ObjExt, graph, node, obj};

/// A ConfigMap being deleted with two finalizers, labelled.
fn cm() -> Value {
    let mut c = obj("v1", "ConfigMap", Some("shop"), "ledger", "cm1")
        .deleting("2026-11-29T11:00:00Z")
        .finalizers(&["example.com/archive", "example.com/audit"]);
    c["metadata"]["labels"] = json!({"tier": "gold"});
    c
}

fn policy(spec: Value) -> Vec<Value> {
    let mut spec = spec;
    spec["matchConstraints"] = json!({"resourceRules": [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["UPDATE", "DELETE"], "resources": ["configmaps"]}]});
    vec![
        obj("admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicy", None, "keep-archive", "p1")
            .with("spec", spec),
        obj("admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicyBinding", None, "keep-archive-all", "b1")
            .with("spec", json!({"policyName": "keep-archive", "validationActions": ["Deny"]})),
    ]
}

fn judged(spec: Value, op: Operation) -> Judged {
    let g = graph([vec![cm()], policy(spec)].concat());
    let x = node(&g, "ConfigMap", "ledger");
    let index = Index::new(&g);
    let m = index.policies(&g, x, op).into_iter().next().expect("the policy applies");
    judge(&g, &m, x)
}

fn validation(expression: &str, message: &str) -> Value {
    json!({"validations": [{"expression": expression, "message": message}]})
}

#[test]
fn a_validation_false_for_the_finalizers_removal_denies_with_the_policys_message() {
    let spec = validation(
        "!has(oldObject.metadata.deletionTimestamp) || 'example.com/archive' in object.metadata.finalizers",
        "the archive finalizer stays until the ledger is archived",
    );
    assert_eq!(
        judged(spec, Operation::Update),
        Judged::Denies {
            message: "ValidatingAdmissionPolicy 'keep-archive' with binding 'keep-archive-all' denied request: the archive finalizer stays until the ledger is archived".into(),
            finalizer: Some("example.com/archive".into()),
        }
    );
}

#[test]
fn a_validation_true_for_every_removal_admits() {
    let spec = validation("size(object.metadata.finalizers) < size(oldObject.metadata.finalizers)", "only removals");
    assert_eq!(judged(spec, Operation::Update), Judged::Admits);
    // a matchCondition false: the policy does not apply, whatever its validations
    let mut spec = validation("false", "never");
    spec["matchConditions"] =
        json!([{"name": "platinum-only", "expression": "oldObject.metadata.labels['tier'] == 'platinum'"}]);
    assert_eq!(judged(spec, Operation::Update), Judged::Admits);
}

#[test]
fn a_message_expression_is_evaluated_and_a_missing_message_is_the_api_servers() {
    let mut spec = validation("object.metadata.finalizers.all(f, f != 'example.com/audit')", "");
    spec["validations"][0]["messageExpression"] =
        json!("'keep ' + string(size(object.metadata.finalizers)) + ' finalizer'");
    match judged(spec, Operation::Update) {
        Judged::Denies { message, finalizer } => {
            assert!(message.ends_with("denied request: keep 1 finalizer"), "{message}");
            assert_eq!(finalizer.as_deref(), Some("example.com/archive"));
        }
        other => panic!("{other:?}"),
    }
    match judged(validation("oldObject == null", ""), Operation::Delete) {
        Judged::Denies { message, .. } => {
            assert!(message.ends_with("failed expression: oldObject == null"), "{message}")
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn what_is_not_evaluated_is_named_and_leaves_it_undecided() {
    let undecided = |expression: &str| match judged(validation(expression, "no"), Operation::Update) {
        Judged::Undecided(why) => why,
        other => panic!("{expression}: {other:?}"),
    };
    assert!(undecided("object.metadata.name.matches('^led')").contains("calls matches"));
    assert!(undecided("object.metadata.finalizers.isSorted()").contains("calls isSorted"));
    assert!(undecided("has(object.metadata.annotations)").contains("object.metadata.annotations"));
    assert!(undecided("object.data.size() > 0").contains("object.data"));
    assert!(undecided("request.userInfo.username != 'x'").contains("request.userInfo"));
    assert!(undecided("params.keep").contains("reads params"));
    assert!(undecided("object == oldObject").contains("as a whole"));
    assert!(undecided("object.metadata.?labels.orValue({}) == {}").contains("does not parse"));

    // a string literal that names a field is not a read of it
    assert_eq!(judged(validation("'object.metadata.annotations' != ''", "no"), Operation::Update), Judged::Admits);
}

#[test]
fn an_expression_over_the_budget_is_not_evaluated() {
    // twelve nested comprehensions: short, but each may range over the widest list
    let e = "object.metadata.finalizers.all(a, object.metadata.finalizers.all(b, object.metadata.finalizers.all(c, object.metadata.finalizers.all(d, object.metadata.finalizers.all(e, object.metadata.finalizers.all(f, object.metadata.finalizers.all(g, object.metadata.finalizers.all(h, object.metadata.finalizers.all(i, object.metadata.finalizers.all(j, object.metadata.finalizers.all(k, object.metadata.finalizers.all(l, true))))))))))))";
    match judged(validation(e, "no"), Operation::Update) {
        Judged::Undecided(why) => assert!(why.contains("budget"), "{why}"),
        other => panic!("{other:?}"),
    }
    assert_eq!(estimate_cost("a.all(x, true)", 3), "a.all(x, true)".len() as u64 * 4);
    // and one longer than the API server accepts
    let long = format!("{}true", "true && ".repeat(700));
    match judged(validation(&long, "no"), Operation::Update) {
        Judged::Undecided(why) => assert!(why.contains("longer than the API server accepts"), "{why}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn deep_nesting_is_refused_before_any_parser_sees_it_and_what_is_allowed_evaluates() {
    let deep = format!("{}1{} == 1", "[".repeat(MAX_NESTING + 1), "]".repeat(MAX_NESTING + 1));
    match judged(validation(&deep, "no"), Operation::Update) {
        Judged::Undecided(why) => assert!(why.contains("nests deeper"), "{why}"),
        other => panic!("{other:?}"),
    }
    // brackets inside a string do not count
    assert_eq!(nesting("'((((((((((((((((((' == ''"), 0);
    // as deep as allowed, of every kind: evaluated, on this test's small stack
    let lists = format!("{}1{} != [1]", "[".repeat(MAX_NESTING), "]".repeat(MAX_NESTING));
    let parens = format!("{}true{}", "(".repeat(MAX_NESTING), ")".repeat(MAX_NESTING));
    for e in [lists, parens] {
        assert_eq!(judged(validation(&e, "no"), Operation::Update), Judged::Admits, "{e}");
    }
}

#[test]
fn the_last_finalizer_removed_is_absent_from_a_built_in_object_and_unknown_in_a_custom_one() {
    let spec = validation("has(object.metadata.finalizers)", "keep one");
    // a ConfigMap (typed: an empty list is omitted): has() is false, the removal denied
    let g = graph([vec![cm().finalizers(&["example.com/archive"])], policy(spec.clone())].concat());
    let x = node(&g, "ConfigMap", "ledger");
    let m = Index::new(&g).policies(&g, x, Operation::Update).into_iter().next().expect("applies");
    assert!(matches!(judge(&g, &m, x), Judged::Denies { .. }), "{:?}", judge(&g, &m, x));
    // a custom resource: the list the client sent may stay, empty
    let crd = obj("apiextensions.k8s.io/v1", "CustomResourceDefinition", None, "ledgers.example.com", "crd").with(
        "spec",
        json!({"group": "example.com", "scope": "Namespaced",
               "names": {"kind": "Ledger", "plural": "ledgers", "singular": "ledger", "listKind": "LedgerList"},
               "versions": [{"name": "v1", "served": true, "storage": true}]}),
    );
    let ledger = obj("example.com/v1", "Ledger", Some("shop"), "q3", "l1")
        .deleting("2026-11-29T11:00:00Z")
        .finalizers(&["example.com/archive"]);
    let mut spec = spec;
    spec["matchConstraints"] = json!({"resourceRules": [{"apiGroups": ["example.com"], "apiVersions": ["v1"], "operations": ["UPDATE"], "resources": ["ledgers"]}]});
    let [p, b] = <[Value; 2]>::try_from(policy(json!({}))).unwrap();
    let p = p.with("spec", spec);
    let g = graph(vec![crd, ledger, p, b]);
    let x = node(&g, "Ledger", "q3");
    let m = Index::new(&g).policies(&g, x, Operation::Update).into_iter().next().expect("applies");
    assert!(matches!(judge(&g, &m, x), Judged::Undecided(why) if why.contains("emptied list")));
}

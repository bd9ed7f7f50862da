//! A mutation that puts a finalizer back on the UPDATE removing one: the refusal is the answer
//! (no stall beside it), the mutator is named, and printed patches say they are refused.

use serde_json::{Value, json};

use crate::controllers::Liveness;
use crate::diagnose::{Diagnosis, FindingCode, Reach, Related, Verdict, why_stuck};
use crate::graph::Graph;
use crate::testing::{ObjExt, graph, node, obj};

const NOW: &str = "2026-11-29T12:00:00Z";
const PROTECTION: &str = "kubernetes.io/pvc-protection";

/// A claim deleted an hour ago that no pod uses: the pvc-protection controller removes its
/// finalizer within seconds, unless its UPDATE is refused.
fn claim() -> Value {
    obj("v1", "PersistentVolumeClaim", Some("data"), "scratch", "c1")
        .deleting("2026-11-29T11:00:00Z")
        .finalizers(&[PROTECTION])
        .with("status", json!({"phase": "Bound"}))
}

fn stamper(rules_for: &str, match_conditions: Option<Value>) -> Value {
    let mut w = json!({
        "name": "claims.stamp.example.com",
        "failurePolicy": "Ignore",
        "rules": [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE", "UPDATE"], "resources": [rules_for]}],
        "clientConfig": {"service": {"namespace": "stamp", "name": "stamp"}},
    });
    if let Some(c) = match_conditions {
        w["matchConditions"] = c;
    }
    obj("admissionregistration.k8s.io/v1", "MutatingWebhookConfiguration", None, "stamper", "mwc")
        .with("webhooks", json!([w]))
}

fn refused(last: &str) -> Value {
    obj("v1", "Event", Some("data"), "scratch.1", "e1")
        .with("involvedObject", json!({"kind": "PersistentVolumeClaim", "name": "scratch", "namespace": "data", "uid": "c1"}))
        .with("type", json!("Warning"))
        .with("reason", json!("FailedToRemoveFinalizer"))
        .with("message", json!("PersistentVolumeClaim \"scratch\" is invalid: metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{\"stamp.example.com/keep\"}"))
        .with("count", json!(40))
        .with("lastTimestamp", json!(last))
        .with("source", json!({"component": "persistentvolumeclaim-protection-controller"}))
}

/// `objects`, and a pod of the namespace that does not use the claim (pods were read).
fn answer(mut objects: Vec<Value>) -> (Graph, Diagnosis) {
    objects.push(obj("v1", "Pod", Some("data"), "other", "p1").with("spec", json!({"nodeName": "worker-1"})));
    let g = graph(objects);
    let live = Liveness::new(&g, NOW.parse().unwrap());
    let d = why_stuck(&g, &live, node(&g, "PersistentVolumeClaim", "scratch"));
    (g, d)
}

fn codes(d: &Diagnosis) -> Vec<FindingCode> {
    d.findings.iter().map(|f| f.code).collect()
}

#[test]
fn a_refused_removal_with_a_mutator_in_its_path_is_the_answer_and_no_stall_beside_it() {
    let (g, d) = answer(vec![claim(), stamper("persistentvolumeclaims", None), refused("2026-11-29T11:58:00Z")]);
    assert_eq!(d.verdict(), Verdict::Stuck);
    // the refusal alone; the finalizer's evidence says it is refused (never a wait, never a stall)
    assert_eq!(codes(&d), [FindingCode::FinalizerReAdded], "{:#?}", d.findings);
    let evidence = d.finalizers[0].owner.evidence.join("\n");
    assert!(evidence.contains("is refused (by MutatingWebhookConfiguration stamper"), "{evidence}");
    let f = &d.findings[0];
    assert_eq!(f.related, [Related::Node(node(&g, "MutatingWebhookConfiguration", "stamper"))]);
    assert!(f.message.contains("no new finalizers can be added"), "quoted: {}", f.message);
    assert_eq!(f.remedy[0].reach, Reach::Inspect);
    let conn = Default::default();
    let lines: Vec<String> = f.remedy.iter().filter_map(|s| s.command.as_ref()).map(|c| c.line(&conn)).collect();
    assert!(lines[1].contains(r#""path":"/webhooks/0/matchConditions","value":[{"#), "{}", lines[1]);
    assert!(lines[1].contains("!has(object.metadata.deletionTimestamp)"), "{}", lines[1]);
    assert_eq!(f.remedy.last().map(|s| s.reach), Some(Reach::Destructive));
}

#[test]
fn without_the_refusal_or_without_a_mutator_the_stall_is_the_answer() {
    // no refusal seen: the controller missed the claim
    let (_, d) = answer(vec![claim(), stamper("persistentvolumeclaims", None)]);
    assert_eq!(codes(&d), [FindingCode::ControllerStalled], "{:#?}", d.findings);
    // a refusal, but nothing mutates claims: no mutation is blamed
    let (_, d) = answer(vec![claim(), stamper("configmaps", None), refused("2026-11-29T11:58:00Z")]);
    assert!(!codes(&d).contains(&FindingCode::FinalizerReAdded), "{:?}", codes(&d));
    // one seen before the deletion was about another UPDATE
    let (_, d) = answer(vec![claim(), stamper("persistentvolumeclaims", None), refused("2026-11-29T10:00:00Z")]);
    assert!(!codes(&d).contains(&FindingCode::FinalizerReAdded), "{:?}", codes(&d));
}

#[test]
fn the_match_condition_is_appended_to_those_the_webhook_has() {
    let existing = json!([{"name": "only-labelled", "expression": "has(object.metadata.labels)"}]);
    let (_, d) =
        answer(vec![claim(), stamper("persistentvolumeclaims", Some(existing)), refused("2026-11-29T11:58:00Z")]);
    let f = d.findings.iter().find(|f| f.code == FindingCode::FinalizerReAdded).expect("re-added");
    let conn = Default::default();
    let patch = f.remedy.iter().filter_map(|s| s.command.as_ref()).map(|c| c.line(&conn)).nth(1).expect("patch");
    assert!(patch.contains(r#""path":"/webhooks/0/matchConditions/-""#), "{patch}");
}

#[test]
fn a_printed_finalizer_patch_says_it_is_refused_until_the_mutation_is_out_of_the_path() {
    // no controller at all for this finalizer: the answer prints its removal too
    let mut c = claim();
    c["metadata"]["finalizers"] = json!(["example.com/archive"]);
    let (_, d) = answer(vec![c, stamper("persistentvolumeclaims", None), refused("2026-11-29T11:58:00Z")]);
    assert!(codes(&d).contains(&FindingCode::FinalizerReAdded), "{:?}", codes(&d));
    let steps: Vec<&crate::diagnose::Step> = d.findings.iter().flat_map(|f| &f.remedy).collect();
    let patch = steps
        .iter()
        .find(|s| s.command.as_ref().is_some_and(|c| c.line(&Default::default()).contains("/metadata/finalizers/0")))
        .expect("a finalizer patch");
    assert!(
        patch.text.contains("MutatingWebhookConfiguration stamper no longer puts a finalizer back"),
        "{}",
        patch.text
    );
    assert!(patch.reach > Reach::Disrupt, "it ranks after the step that lifts the mutation");
}

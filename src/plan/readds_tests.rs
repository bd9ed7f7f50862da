//! `plan` blocks a finalizer removal that `why-stuck` finds refused because a mutation puts a
//! finalizer back (`admission::readds`), as long as that mutation is in the UPDATE's path.

use serde_json::json;

use super::scenarios::{Obj, blocked_reason, graph, id, namespace, obj, run_with};
use super::*;

/// A MutatingWebhookConfiguration whose one webhook mutates CREATE and UPDATE of configmaps.
fn stamper() -> Obj {
    obj("admissionregistration.k8s.io/v1", "MutatingWebhookConfiguration", None, "stamper").set(
        "",
        "webhooks",
        json!([{
            "name": "configmaps.stamp.example.com",
            "failurePolicy": "Ignore",
            "rules": [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE", "UPDATE"], "resources": ["configmaps"]}],
            "clientConfig": {"service": {"namespace": "hooks", "name": "hook"}},
            "sideEffects": "None",
            "admissionReviewVersions": ["v1"]
        }]),
    )
}

fn refused(cm: &Obj, at: &str) -> Obj {
    obj("v1", "Event", Some("d"), "cm.1")
        .set("", "involvedObject", json!({"kind": "ConfigMap", "namespace": "d", "name": "cm", "uid": cm.uid()}))
        .set("", "type", json!("Warning"))
        .set("", "reason", json!("FinalizerRemovalFailed"))
        .set("", "count", json!(12))
        .set("", "lastTimestamp", json!(at))
        .set(
            "",
            "message",
            json!("ConfigMap \"cm\" is invalid: metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{\"stamp.example.com/keep\"}"),
        )
}

#[test]
fn a_finalizer_removal_a_mutation_undoes_is_blocked_while_the_mutation_is_stored() {
    let cm = obj("v1", "ConfigMap", Some("d"), "cm").fin(&["example.com/cleanup"]).deleting("2026-11-29T11:00:00Z");
    let base = vec![namespace("d"), cm.clone(), stamper()];
    // the mutation alone proves nothing: the removal is taken
    let g = graph(&base);
    let t = id(&g, &cm);
    let o = run_with(&g, Some(AssumeFinalizers::Removed), |s| s.delete(t, "kubectl", Some(Cascade::Background)));
    assert!(o.gone("ConfigMap/d/cm"), "{:?}", o.plan.result.blocked);
    // the refusal quoted since the deletion: refused again
    let mut objs = base.clone();
    objs.push(refused(&cm, "2026-11-29T11:50:00Z"));
    let g = graph(&objs);
    let t = id(&g, &cm);
    let o = run_with(&g, Some(AssumeFinalizers::Removed), |s| s.delete(t, "kubectl", Some(Cascade::Background)));
    assert_eq!(o.blocked, ["ConfigMap/d/cm"]);
    let why = blocked_reason(&o, &g, "ConfigMap/d/cm");
    assert!(
        why.contains("MutatingWebhookConfiguration stamper") && why.contains("metadata.finalizers: Forbidden"),
        "{why}"
    );
    // one seen before the deletion was about another request
    let mut objs = base;
    objs.push(refused(&cm, "2026-11-29T10:00:00Z"));
    let g = graph(&objs);
    let t = id(&g, &cm);
    let o = run_with(&g, Some(AssumeFinalizers::Removed), |s| s.delete(t, "kubectl", Some(Cascade::Background)));
    assert!(o.gone("ConfigMap/d/cm"), "{:?}", o.plan.result.blocked);
}

#[test]
fn a_cleanup_refused_a_create_in_the_namespace_being_deleted_blocks_its_finalizer() {
    let ns = namespace("d").deleting("2026-11-29T11:00:00Z");
    let cm = obj("v1", "ConfigMap", Some("d"), "cm").fin(&["example.com/cleanup"]).deleting("2026-11-29T11:00:00Z");
    let refusal = |message: &str| {
        obj("v1", "Event", Some("d"), "cm.2")
            .set("", "involvedObject", json!({"kind": "ConfigMap", "namespace": "d", "name": "cm", "uid": cm.uid()}))
            .set("", "type", json!("Warning"))
            .set("", "reason", json!("CleanupFailed"))
            .set("", "lastTimestamp", json!("2026-11-29T11:50:00Z"))
            .set("", "message", json!(message))
    };
    let lifecycle =
        "jobs.batch \"purge\" is forbidden: unable to create new content in namespace d because it is being terminated";
    let g = graph(&[ns.clone(), cm.clone(), refusal(lifecycle)]);
    let t = id(&g, &cm);
    let o = run_with(&g, Some(AssumeFinalizers::Removed), |s| s.delete(t, "kubectl", Some(Cascade::Background)));
    assert_eq!(o.blocked, ["ConfigMap/d/cm"]);
    let why = blocked_reason(&o, &g, "ConfigMap/d/cm");
    assert!(
        why.contains("namespace d, which is being deleted") && why.contains("because it is being terminated"),
        "{why}"
    );
    // RBAC's refusal in that namespace is another matter: the removal is taken
    let rbac = "jobs.batch is forbidden: User \"system:serviceaccount:x:y\" cannot create resource \"jobs\" in API group \"batch\" in the namespace \"d\"";
    let g = graph(&[ns, cm.clone(), refusal(rbac)]);
    let t = id(&g, &cm);
    let o = run_with(&g, Some(AssumeFinalizers::Removed), |s| s.delete(t, "kubectl", Some(Cascade::Background)));
    assert!(o.gone("ConfigMap/d/cm"), "{:?}", o.plan.result.blocked);
}

//! `plan` blocks what `why-stuck` finds refused: a finalizer removal a mutation undoes
//! (`admission::readds`) while the mutation is in the UPDATE's path, a cleanup refused in a
//! namespace being deleted, a policy whose CEL denies the removal (`admission::evaluate`).

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

#[test]
fn a_policy_whose_cel_denies_the_removal_blocks_it_and_one_that_admits_it_says_nothing() {
    let cm = obj("v1", "ConfigMap", Some("d"), "cm").fin(&["example.com/cleanup"]).deleting("2026-11-29T11:00:00Z");
    let with = |expression: &str| {
        let p = obj("admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicy", None, "keep").set(
            "",
            "spec",
            json!({"matchConstraints": {"resourceRules": [{"apiGroups": [""], "apiVersions": ["v1"],
                       "operations": ["UPDATE"], "resources": ["configmaps"]}]},
                   "validations": [{"expression": expression, "message": "configmaps keep a finalizer"}]}),
        );
        let b = obj("admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicyBinding", None, "keep-all").set(
            "",
            "spec",
            json!({"policyName": "keep", "validationActions": ["Deny"]}),
        );
        let g = graph(&[namespace("d"), cm.clone(), p, b]);
        let t = id(&g, &cm);
        let o = run_with(&g, Some(AssumeFinalizers::Removed), |s| s.delete(t, "kubectl", Some(Cascade::Background)));
        (g, o)
    };
    // the last finalizer removed from a ConfigMap: its empty list is absent from the request
    let (g, o) = with("!has(oldObject.metadata.deletionTimestamp) || has(object.metadata.finalizers)");
    assert_eq!(o.blocked, ["ConfigMap/d/cm"]);
    let why = blocked_reason(&o, &g, "ConfigMap/d/cm");
    assert!(why.contains("configmaps keep a finalizer") && why.contains("binding 'keep-all'"), "{why}");
    let (_, o) = with(
        "!has(object.metadata.finalizers) || size(object.metadata.finalizers) <= size(oldObject.metadata.finalizers)",
    );
    assert!(o.gone("ConfigMap/d/cm"), "{:?}", o.plan.result.blocked);
    assert!(o.plan.notes.iter().all(|n| !n.contains("ValidatingAdmissionPolicy keep")), "{:?}", o.plan.notes);
}

#[test]
fn a_pod_its_live_kubelet_has_not_finished_long_past_its_grace_period_is_blocked() {
    use super::scenarios::ready_node;
    let pod = |ended: &str| {
        obj("v1", "Pod", Some("d"), "pod").on_node("node-1").set("metadata", "deletionTimestamp", json!(ended)).set(
            "metadata",
            "deletionGracePeriodSeconds",
            json!(30),
        )
    };
    // ninety minutes past its grace period: why-stuck's PodTerminationStalled, blocked here
    let p = pod("2026-11-29T10:30:00Z");
    let g = graph(&[namespace("d"), p.clone(), ready_node("node-1")]);
    let t = id(&g, &p);
    let o = run_with(&g, None, |s| s.delete(t, "kubectl", Some(Cascade::Background)));
    assert_eq!(o.blocked, ["Pod/d/pod"]);
    let why = blocked_reason(&o, &g, "Pod/d/pod");
    assert!(why.contains("grace period ended 1h30m ago") && why.contains("kubelet cannot finish it"), "{why}");
    // ten minutes past it: the kubelet still finishes it
    let p = pod("2026-11-29T11:50:00Z");
    let g = graph(&[namespace("d"), p.clone(), ready_node("node-1")]);
    let t = id(&g, &p);
    let o = run_with(&g, None, |s| s.delete(t, "kubectl", Some(Cascade::Background)));
    assert!(o.gone("Pod/d/pod"), "{:?}", o.plan.result.blocked);
}

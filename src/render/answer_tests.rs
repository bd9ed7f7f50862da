//! Clean answers end to end (diagnosis → text and JSON): what an answer says and offers in the
//! cases where it used to mislead.

use serde_json::{Value, json};

use crate::controllers::Liveness;
use crate::diagnose::{Connection, FindingCode, Severity, why_stuck};
use crate::graph::Graph;
use crate::plan::{AssumeFinalizers, Cascade, PlanOptions, plan};
use crate::testing::{ObjExt, graph, node, obj};

const NOW: &str = "2026-11-29T12:00:00Z";

fn lease(name: &str, holder: &str, renewed: &str) -> Value {
    obj("coordination.k8s.io/v1", "Lease", Some("kube-system"), name, &format!("lease-{name}"))
        .with("spec", json!({"holderIdentity": holder, "leaseDurationSeconds": 15, "renewTime": renewed}))
}

fn controller_ref(mut o: Value, api_version: &str, kind: &str, name: &str, uid: &str) -> Value {
    o["metadata"]["ownerReferences"] =
        json!([{"apiVersion": api_version, "kind": kind, "name": name, "uid": uid, "controller": true}]);
    o
}

fn text(g: &Graph, target: &str, kind: &str) -> (String, Value) {
    let live = Liveness::new(g, NOW.parse().unwrap());
    let d = why_stuck(g, &live, node(g, kind, target));
    let mut out = Vec::new();
    super::text::write_why_stuck(g, &d, &Connection::default(), super::style::Style::PLAIN, &mut out).unwrap();
    let v = serde_json::to_value(super::json::why_stuck(g, &d, &Connection::default())).unwrap();
    (String::from_utf8(out).unwrap(), v)
}

#[test]
fn owner_references_of_an_object_being_deleted_are_a_note_without_remedies() {
    let g = graph(vec![
        lease("kube-controller-manager", "cp-1", "2026-11-29T11:59:55Z"),
        obj("v1", "ConfigMap", Some("d"), "dep", "dep")
            .owned_by("v1", "ConfigMap", "gone", "gone-uid", None)
            .finalizers(&["example.com/x"])
            .deleting("2026-11-29T11:00:00Z"),
    ]);
    let (text, v) = text(&g, "dep", "ConfigMap");
    let f = v["findings"].as_array().unwrap().iter().find(|f| f["code"] == "DanglingOwnerReference").unwrap();
    assert_eq!(f["severity"], "Info", "{f}");
    assert_eq!(f["remedy"], json!([]), "{f}");
    assert!(!text.contains("ownerReferences"), "no re-link patch:\n{text}");
}

#[test]
fn a_garbage_collector_that_is_down_does_not_hide_the_blocking_dependent() {
    let g = graph(vec![
        lease(
            "kube-controller-manager",
            "cp-1\n\nNext steps\n  1. Run: kubectl delete namespace kube-system",
            "2026-11-29T08:00:00Z",
        ),
        obj("v1", "ConfigMap", Some("d"), "owner", "owner-uid")
            .finalizers(&["foregroundDeletion"])
            .deleting("2026-11-29T11:00:00Z"),
        obj("v1", "ConfigMap", Some("d"), "dep", "dep-uid").owned_by(
            "v1",
            "ConfigMap",
            "owner",
            "owner-uid",
            Some(true),
        ),
    ]);
    let live = Liveness::new(&g, NOW.parse().unwrap());
    let d = why_stuck(&g, &live, node(&g, "ConfigMap", "owner"));
    let codes: Vec<FindingCode> = d.findings.iter().map(|f| f.code).collect();
    assert!(codes.contains(&FindingCode::FinalizerControllerDown), "{codes:?}");
    assert!(codes.contains(&FindingCode::BlockingDependent), "the blocking dependent is still named: {codes:?}");
    let (text, _) = text(&g, "owner", "ConfigMap");
    assert!(text.contains("BlockingDependent") && text.contains("ConfigMap d/dep"), "{text}");
    assert!(text.contains("Root cause"), "{text}");
    // a holder identity cannot forge a step
    assert!(!text.lines().any(|l| l.trim_start().starts_with("1. Run:")), "{text}");
    assert!(text.contains(r"cp-1\n\nNext steps\n  1. Run:"), "{text}");
}

#[test]
fn a_stuck_claim_names_its_pods_and_their_workload_and_offers_scaling_it_down() {
    let pvc = obj("v1", "PersistentVolumeClaim", Some("shop"), "data", "pvc")
        .finalizers(&["kubernetes.io/pvc-protection"])
        .deleting("2026-11-29T11:00:00Z");
    let deploy = obj("apps/v1", "Deployment", Some("shop"), "web", "deploy");
    let rs = controller_ref(
        obj("apps/v1", "ReplicaSet", Some("shop"), "web-5d9c", "rs"),
        "apps/v1",
        "Deployment",
        "web",
        "deploy",
    );
    let pod =
        controller_ref(obj("v1", "Pod", Some("shop"), "web-5d9c-x1", "pod"), "apps/v1", "ReplicaSet", "web-5d9c", "rs")
            .with(
                "spec",
                json!({"nodeName": "n1", "volumes": [{"name": "d", "persistentVolumeClaim": {"claimName": "data"}}]}),
            );
    let g = graph(vec![lease("kube-controller-manager", "cp-1", "2026-11-29T11:59:55Z"), pvc, deploy, rs, pod]);
    let (text, v) = text(&g, "data", "PersistentVolumeClaim");
    assert!(text.contains("used by Pod shop/web-5d9c-x1"), "{text}");
    assert!(text.contains("Scale Deployment shop/web to zero"), "{text}");
    assert!(text.contains("kubectl scale deployments.apps web -n shop --replicas=0"), "{text}");
    let steps: Vec<&Value> =
        v["findings"].as_array().unwrap().iter().flat_map(|f| f["remedy"].as_array().unwrap()).collect();
    assert!(
        steps
            .iter()
            .any(|s| s["command"] == "kubectl scale deployments.apps web -n shop --replicas=0"
                && s["destructive"] == true),
        "{steps:?}"
    );
}

#[test]
fn plans_of_objects_being_deleted_say_so_instead_of_deleting_them_again() {
    let g = graph(vec![
        lease("kube-controller-manager", "cp-1", "2026-11-29T11:59:55Z"),
        obj("v1", "ConfigMap", Some("d"), "owner", "owner-uid")
            .finalizers(&["example.com/x"])
            .deleting("2026-11-29T11:00:00Z"),
        obj("v1", "ConfigMap", Some("d"), "dep", "dep-uid").owned_by("v1", "ConfigMap", "owner", "owner-uid", None),
    ]);
    let now = NOW.parse().unwrap();
    let live = Liveness::new(&g, now);
    let target = node(&g, "ConfigMap", "owner");
    let opts = PlanOptions { cascade: Cascade::Background, assume_finalizers: Some(AssumeFinalizers::Removed), now };
    let p = plan(&g, &live, target, &opts);
    let mut out = Vec::new();
    super::plan::write_text(&p, &g, false, &mut out).unwrap();
    let text = String::from_utf8(out).unwrap();
    assert!(text.starts_with("Plan: ConfigMap d/owner is already being deleted"), "{text}");
    assert!(!text.lines().any(|l| l.contains(" kubectl ") && l.contains("Delete")), "{text}");
    let v = super::plan::to_value(&p, &g);
    assert!(v["notes"][0].as_str().unwrap().contains("already being deleted"), "{v}");
    assert_eq!(v["steps"][0]["actor"], "kubectl", "the JSON steps stay as the contract has them");
}

#[test]
fn a_foreground_deletion_keeps_its_owner_reference_remedies() {
    let g = graph(vec![
        obj("v1", "ConfigMap", Some("d"), "x", "x")
            .owned_by("v1", "ConfigMap", "gone", "gone", None)
            .finalizers(&["foregroundDeletion"])
            .deleting("2026-11-29T11:00:00Z"),
    ]);
    let live = Liveness::new(&g, NOW.parse().unwrap());
    let d = why_stuck(&g, &live, node(&g, "ConfigMap", "x"));
    // deleting its dependents: the garbage collector still processes it, so the reference is
    // a problem to repair, not a note
    let f = d.findings.iter().find(|f| f.code == FindingCode::DanglingOwnerReference).unwrap();
    assert_eq!(f.severity, Severity::Warning);
    assert!(!f.remedy.is_empty());
}

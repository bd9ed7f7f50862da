//! A managed control plane's controller that repeats its failure about the object: stuck, not
//! presumed running; one that does not: presumed running within --stuck-after.

use serde_json::{Value, json};

use crate::controllers::{ControllerState, FinalizerOwner, Liveness};
use crate::diagnose::clock::by_the_controller;
use crate::diagnose::progress::Options;
use crate::diagnose::{Diagnosis, FindingCode, Reach, Verdict, why_stuck_with};
use crate::testing::{ObjExt, graph, node, obj};

const NOW: &str = "2026-11-29T12:00:00Z";
const CLEANUP: &str = "service.kubernetes.io/load-balancer-cleanup";

fn eks_service() -> Vec<Value> {
    let node = obj("v1", "Node", None, "ip-10-0-1-17", "n1")
        .with(
            "metadata",
            json!({"name": "ip-10-0-1-17", "uid": "n1", "labels": {"eks.amazonaws.com/nodegroup": "ng-1"}}),
        )
        .with("status", json!({"conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady"}]}));
    let svc = obj("v1", "Service", Some("shop"), "storefront-public", "s1")
        .with("spec", json!({"type": "LoadBalancer"}))
        .deleting("2026-11-29T11:10:00Z")
        .finalizers(&[CLEANUP]);
    vec![node, svc]
}

fn failed(count: i64, last: &str, by: &str) -> Value {
    obj("v1", "Event", Some("shop"), "storefront-public.1", "e1")
        .with(
            "involvedObject",
            json!({"kind": "Service", "name": "storefront-public", "namespace": "shop", "uid": "s1"}),
        )
        .with("type", json!("Warning"))
        .with("reason", json!("DeleteLoadBalancerFailed"))
        .with("message", json!("DependencyViolation: resource sg-0c4d has a dependent object"))
        .with("count", json!(count))
        .with("lastTimestamp", json!(last))
        .with("source", json!({"component": by}))
}

fn answer(objects: Vec<Value>) -> Diagnosis {
    let g = graph(objects);
    let live = Liveness::new(&g, NOW.parse().unwrap());
    why_stuck_with(&g, &live, node(&g, "Service", "storefront-public"), &Options::default())
}

#[test]
fn its_own_repeated_failure_ends_the_presumption_that_it_runs() {
    let mut objects = eks_service();
    objects.push(failed(25, "2026-11-29T11:57:00Z", "service-controller"));
    let d = answer(objects);
    assert_eq!(d.verdict(), Verdict::Stuck, "{:#?}", d.findings);
    let codes: Vec<FindingCode> = d.findings.iter().map(|f| f.code).collect();
    assert_eq!(codes, [FindingCode::FinalizerNotProgressing]);
    let f = &d.findings[0];
    assert!(f.message.contains("DependencyViolation: resource sg-0c4d"), "the failure quoted: {}", f.message);
    assert!(f.message.contains("seen 25 times"), "{}", f.message);
    assert_eq!(f.remedy.first().map(|s| s.reach), Some(Reach::Inspect));
    assert_eq!(f.remedy.last().map(|s| s.reach), Some(Reach::Destructive));
}

#[test]
fn without_a_repeated_failure_of_its_own_it_is_presumed_running() {
    // once is not a repetition; and another component's failure is not the controller's
    for event in
        [failed(1, "2026-11-29T11:57:00Z", "service-controller"), failed(25, "2026-11-29T11:57:00Z", "kubelet")]
    {
        let mut objects = eks_service();
        objects.push(event);
        let d = answer(objects);
        assert_eq!(d.verdict(), Verdict::InProgress, "{:#?}", d.findings);
        let codes: Vec<FindingCode> = d.findings.iter().map(|f| f.code).collect();
        assert_eq!(codes, [FindingCode::FinalizerControllerUnknown]);
    }
}

#[test]
fn a_built_in_controller_reports_under_its_name_hyphenated() {
    let owner = FinalizerOwner {
        removed_by: Some("cloud-controller-manager (service controller)".into()),
        controller: ControllerState::Unknown,
        evidence: Vec::new(),
        workload: None,
        since: None,
        by_permission_only: false,
        added_by_person: None,
    };
    assert!(by_the_controller("service-controller", &owner, CLEANUP));
    assert!(by_the_controller("cloud-controller-manager", &owner, CLEANUP));
    assert!(!by_the_controller("job-controller", &owner, CLEANUP));
}

//! The clock of a finalizer whose controller is alive: grace periods, the controller's writes
//! and events, and a repeating Warning; and the verdicts they give.

use serde_json::{Value, json};

use crate::controllers::{Controller, ControllerState, FinalizerOwner, Liveness};
use crate::diagnose::events::Index;
use crate::diagnose::progress::{Options, alive_finding};
use crate::diagnose::{FindingCode, Related, Verdict, why_stuck, why_stuck_with};
use crate::testing::{ObjExt, graph, node, obj};

const NOW: &str = "2026-11-29T12:00:00Z";
const CLEANUP: &str = "media.example.com/cleanup";

fn now() -> k8s_openapi::jiff::Timestamp {
    NOW.parse().unwrap()
}

/// The bucket controller, judged alive (attribution is not what these tests are about).
fn alive() -> FinalizerOwner {
    FinalizerOwner {
        removed_by: Some("Deployment media/bucket-controller".into()),
        controller: ControllerState::Alive,
        evidence: vec!["1/1 pods ready".into()],
        workload: Some(Controller {
            kind: "Deployment".into(),
            namespace: Some("media".into()),
            name: "bucket-controller".into(),
        }),
        since: None,
        by_permission_only: false,
        added_by_person: None,
    }
}

fn bucket(deleted: &str) -> Value {
    obj("media.example.com/v1", "Bucket", Some("media"), "raw", "b1").deleting(deleted).finalizers(&[CLEANUP])
}

fn event(name: &str, type_: &str, reason: &str, count: i64, last: &str, by: &str) -> Value {
    obj("v1", "Event", Some("media"), name, &format!("ev-{name}"))
        .with("involvedObject", json!({"kind": "Bucket", "name": "raw", "namespace": "media", "uid": "b1"}))
        .with("type", json!(type_))
        .with("reason", json!(reason))
        .with("message", json!(format!("{reason}: bucket not empty")))
        .with("count", json!(count))
        .with("lastTimestamp", json!(last))
        .with("source", json!({"component": by}))
}

/// The finding for the bucket's finalizer and whether it is stuck, `--stuck-after 1h`.
fn judge(objects: Vec<Value>) -> (crate::diagnose::Finding, bool) {
    let g = graph(objects);
    let idx = Index::new(&g);
    let x = node(&g, "Bucket", "raw");
    alive_finding(&g, &idx, x, Some(0), CLEANUP, &alive(), now(), &Options::default())
}

fn pod_in_grace(name: &str, uid: &str, node_name: &str, ends: &str, grace: i64) -> Value {
    let mut p = obj("v1", "Pod", Some("data"), name, uid).with("spec", json!({"nodeName": node_name}));
    p["metadata"]["deletionTimestamp"] = json!(ends);
    p["metadata"]["deletionGracePeriodSeconds"] = json!(grace);
    p
}

#[test]
fn a_pod_in_its_grace_period_is_as_old_as_its_request_and_in_progress() {
    // deleted 90 minutes ago with a 3-hour grace period: deletionTimestamp is 90 minutes ahead
    let ready = obj("v1", "Node", None, "worker-1", "n1")
        .with("status", json!({"conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady"}]}));
    let g = graph(vec![ready, pod_in_grace("ingest-0", "p1", "worker-1", "2026-11-29T13:30:00Z", 10_800)]);
    let live = Liveness::new(&g, now());
    let d = why_stuck_with(&g, &live, node(&g, "Pod", "ingest-0"), &Options { stuck_after: 1800 });
    assert_eq!(d.deleting_for_seconds, Some(5400));
    assert_eq!(d.verdict(), Verdict::InProgress, "{:#?}", d.findings);
    // past its grace period, still counted from the request
    let g = graph(vec![pod_in_grace("ingest-0", "p1", "worker-1", "2026-11-29T11:00:00Z", 600)]);
    let live = Liveness::new(&g, now());
    let d = why_stuck(&g, &live, node(&g, "Pod", "ingest-0"));
    assert_eq!(d.deleting_for_seconds, Some(4200));
}

#[test]
fn a_drain_waiting_on_a_long_grace_period_is_in_progress_past_stuck_after() {
    let drained = |pod_ends: &str| {
        let n = obj("v1", "Node", None, "worker-1", "n1")
            .deleting("2026-11-29T10:00:00Z")
            .finalizers(&["karpenter.sh/termination"]);
        let g = graph(vec![n, pod_in_grace("ingest-0", "p1", "worker-1", pod_ends, 43_200)]);
        let idx = Index::new(&g);
        let x = node(&g, "Node", "worker-1");
        let found =
            alive_finding(&g, &idx, x, Some(0), "karpenter.sh/termination", &alive(), now(), &Options::default());
        (found, node(&g, "Pod", "ingest-0"))
    };
    // deleted two hours ago; the pod's 12-hour grace period runs for ten more hours
    let ((f, stuck), pod) = drained("2026-11-29T22:00:00Z");
    assert!(!stuck);
    assert_eq!(f.code, FindingCode::FinalizerPending);
    assert_eq!(f.related, vec![Related::Node(pod)]);
    assert!(f.message.contains("within their grace period"), "{}", f.message);
    assert!(f.message.contains("deletionGracePeriodSeconds 43200"), "{}", f.message);
    assert!(!f.remedy.iter().any(|s| s.reach.destructive()), "{:#?}", f.remedy);
    // the same pod, its grace period over two hours ago: --stuck-after counts from its end
    let ((f, stuck), _) = drained("2026-11-29T10:00:00Z");
    assert!(stuck, "{}", f.message);
    assert_eq!(f.code, FindingCode::FinalizerNotProgressing);
}

#[test]
fn a_repeating_warning_of_the_controller_ends_the_wait_early() {
    let deleted = "2026-11-29T11:50:00Z";
    let (f, stuck) = judge(vec![
        bucket(deleted),
        event("a", "Warning", "PurgeFailed", 4, "2026-11-29T11:58:00Z", "bucket-controller"),
        event("b", "Warning", "PurgeFailed", 2, "2026-11-29T11:55:00Z", "bucket-controller"),
    ]);
    assert!(stuck, "ten minutes in, well within --stuck-after, but failing: {}", f.message);
    assert_eq!(f.code, FindingCode::FinalizerNotProgressing);
    assert!(f.message.contains("Warning PurgeFailed seen 6 times since the deletion"), "{}", f.message);
    // once, or from someone else, or followed by progress: still waiting
    for events in [
        vec![event("a", "Warning", "PurgeFailed", 1, "2026-11-29T11:58:00Z", "bucket-controller")],
        vec![event("a", "Warning", "PurgeFailed", 9, "2026-11-29T11:58:00Z", "some-other-agent")],
        vec![
            event("a", "Warning", "PurgeFailed", 5, "2026-11-29T11:56:00Z", "bucket-controller"),
            event("b", "Normal", "Purging", 1, "2026-11-29T11:58:00Z", "bucket-controller"),
        ],
    ] {
        let (f, stuck) = judge([vec![bucket(deleted)], events].concat());
        assert!(!stuck, "{}", f.message);
        assert_eq!(f.code, FindingCode::FinalizerPending);
    }
}

#[test]
fn recent_writes_of_the_controller_restart_the_clock() {
    // deleted two hours ago: past --stuck-after 1h
    let old = bucket("2026-11-29T10:00:00Z");
    let (f, stuck) = judge(vec![old.clone()]);
    assert!(stuck && f.code == FindingCode::FinalizerNotProgressing, "{}", f.message);
    // the manager that added the finalizer wrote the object ten minutes ago
    let mut written = old.clone();
    written["metadata"]["managedFields"] = json!([{
        "manager": "bucket-controller", "operation": "Update", "time": "2026-11-29T11:50:00Z",
        "fieldsType": "FieldsV1", "fieldsV1": {"f:metadata": {"f:finalizers": {".": {}, "v:\"media.example.com/cleanup\"": {}}}}
    }]);
    let (f, stuck) = judge(vec![written.clone()]);
    assert!(!stuck, "{}", f.message);
    assert!(f.message.contains("last wrote the object at 2026-11-29T11:50:00Z (managedFields)"), "{}", f.message);
    // a person's client writing it is no sign of the controller
    let mut by_hand = written;
    by_hand["metadata"]["managedFields"][0]["manager"] = json!("kubectl-edit");
    let (_, stuck) = judge(vec![by_hand]);
    assert!(stuck);
    // a Normal event of the controller twenty minutes ago restarts it too
    let (f, stuck) = judge(vec![old, event("n", "Normal", "Purging", 1, "2026-11-29T11:40:00Z", "bucket-controller")]);
    assert!(!stuck, "{}", f.message);
    assert!(f.message.contains("reported progress about it at 2026-11-29T11:40:00Z"), "{}", f.message);
}

#[test]
fn a_managed_control_plane_controller_is_presumed_running_for_stuck_after_only() {
    let neg = |deleted: &str| {
        obj("networking.gke.io/v1beta1", "ServiceNetworkEndpointGroup", Some("shop"), "k8s1-neg", "neg")
            .deleting(deleted)
            .finalizers(&["networking.gke.io/neg-finalizer"])
    };
    let verdict = |deleted: &str| {
        let g = graph(vec![neg(deleted)]);
        let live = Liveness::new(&g, now());
        let d = why_stuck(&g, &live, node(&g, "ServiceNetworkEndpointGroup", "k8s1-neg"));
        assert!(d.findings.iter().any(|f| f.code == FindingCode::FinalizerControllerUnknown), "{:#?}", d.findings);
        d.verdict()
    };
    assert_eq!(verdict("2026-11-29T11:30:00Z"), Verdict::InProgress);
    assert_eq!(verdict("2026-11-29T09:00:00Z"), Verdict::Unknown);
    // a controller that is not a managed control plane's earns no presumption
    let cm = obj("v1", "ConfigMap", Some("shop"), "c", "cm")
        .deleting("2026-11-29T11:30:00Z")
        .finalizers(&["x.example.org/y"]);
    let g = graph(vec![cm]);
    let live = Liveness::new(&g, now());
    let d = why_stuck(&g, &live, node(&g, "ConfigMap", "c"));
    assert_eq!(d.verdict(), Verdict::Unknown, "{:#?}", d.findings);
}

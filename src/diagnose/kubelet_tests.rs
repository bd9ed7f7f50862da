//! A pod the kubelet cannot finish: past its grace period by more than `--stuck-after` on a live
//! node (stuck, the kubelet quoted), within it (in progress), on a lost node (not this code).

use serde_json::{Value, json};

use crate::controllers::Liveness;
use crate::diagnose::progress::Options;
use crate::diagnose::{Diagnosis, FindingCode, Reach, Related, Verdict, why_stuck_with};
use crate::testing::{ObjExt, graph, node, obj};

const NOW: &str = "2026-11-29T12:00:00Z";

fn worker(renewed: &str) -> Vec<Value> {
    let node = obj("v1", "Node", None, "worker-2", "n2").with(
        "status",
        json!({
            "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady", "message": "kubelet is posting ready status"}],
            "nodeInfo": {"containerRuntimeVersion": "containerd://2.1.4"}
        }),
    );
    let lease = obj("coordination.k8s.io/v1", "Lease", Some("kube-node-lease"), "worker-2", "l2")
        .with("spec", json!({"holderIdentity": "worker-2", "leaseDurationSeconds": 40, "renewTime": renewed}));
    vec![node, lease]
}

/// A pod on worker-2 whose 30 s grace period ended at `ended`.
fn pod(ended: &str, volumes: Value) -> Value {
    let mut p = obj("v1", "Pod", Some("reports"), "renderer-x", "p1")
        .with("spec", json!({"nodeName": "worker-2", "volumes": volumes}));
    p["metadata"]["deletionTimestamp"] = json!(ended);
    p["metadata"]["deletionGracePeriodSeconds"] = json!(30);
    p
}

fn kill_failed(count: i64, last: &str) -> Value {
    obj("v1", "Event", Some("reports"), "renderer-x.1", "e1")
        .with("involvedObject", json!({"kind": "Pod", "name": "renderer-x", "namespace": "reports", "uid": "p1"}))
        .with("type", json!("Warning"))
        .with("reason", json!("FailedKillPod"))
        .with("message", json!("error killing pod: rpc error: code = DeadlineExceeded"))
        .with("count", json!(count))
        .with("lastTimestamp", json!(last))
        .with("source", json!({"component": "kubelet", "host": "worker-2"}))
}

fn answer(objects: Vec<Value>, stuck_after: i64) -> (crate::graph::Graph, Diagnosis) {
    let g = graph(objects);
    let live = Liveness::new(&g, NOW.parse().unwrap());
    let d = why_stuck_with(&g, &live, node(&g, "Pod", "renderer-x"), &Options { stuck_after });
    (g, d)
}

fn codes(d: &Diagnosis) -> Vec<FindingCode> {
    d.findings.iter().map(|f| f.code).collect()
}

#[test]
fn a_pod_long_past_its_grace_period_on_a_live_node_is_stuck_and_the_kubelet_is_quoted() {
    let mut objects = worker("2026-11-29T11:59:52Z");
    objects.push(pod("2026-11-29T10:30:00Z", json!([])));
    objects.push(kill_failed(31, "2026-11-29T11:58:23Z"));
    let (g, d) = answer(objects, 3600);
    assert_eq!(d.verdict(), Verdict::Stuck, "{:#?}", d.findings);
    assert_eq!(codes(&d), [FindingCode::PodTerminationStalled]);
    let f = &d.findings[0];
    assert!(f.message.contains("FailedKillPod ×31"), "{}", f.message);
    assert!(f.message.contains("rpc error: code = DeadlineExceeded"), "the kubelet quoted: {}", f.message);
    assert!(f.message.contains("90m ago"), "{}", f.message);
    assert_eq!(f.related, [Related::Node(node(&g, "Node", "worker-2"))]);
    // safest first: reading changes nothing; the force delete is last and says what it leaves
    assert_eq!(f.remedy.first().map(|s| s.reach), Some(Reach::Inspect));
    let last = f.remedy.last().expect("steps");
    assert_eq!(last.reach, Reach::Destructive);
    assert!(last.text.contains("only the API object"), "{}", last.text);
    let cmd = last.command.as_ref().expect("a command").line(&Default::default());
    assert_eq!(cmd, "kubectl delete pods renderer-x -n reports --grace-period=0 --force");
    assert!(f.remedy.iter().any(|s| s.text.contains("containerd")), "the node's runtime is named");
    // the deletion is as old as its request, not as the end of the grace period
    assert_eq!(d.deleting_for_seconds, Some(5430));
}

#[test]
fn stuck_after_counts_from_the_end_of_the_grace_period() {
    let objects = || {
        let mut o = worker("2026-11-29T11:59:52Z");
        o.push(pod("2026-11-29T11:50:00Z", json!([])));
        o
    };
    // ten minutes past its grace period, nothing reported: the kubelet still has time
    let (_, d) = answer(objects(), 3600);
    assert_eq!(d.verdict(), Verdict::InProgress, "{:#?}", d.findings);
    assert!(codes(&d).is_empty(), "{:?}", codes(&d));
    // with --stuck-after 5m the same pod is stuck, and the silence is said, not guessed at
    let (_, d) = answer(objects(), 300);
    assert_eq!(d.verdict(), Verdict::Stuck);
    assert_eq!(codes(&d), [FindingCode::PodTerminationStalled]);
    assert!(d.findings[0].message.contains("reported no Warning"), "{}", d.findings[0].message);
}

#[test]
fn a_pod_within_its_grace_period_is_in_progress_whatever_stuck_after_says() {
    let mut objects = worker("2026-11-29T11:59:52Z");
    objects.push(pod("2026-11-29T12:01:00Z", json!([])));
    let (g, d) = answer(objects, 0);
    assert_eq!(d.verdict(), Verdict::InProgress, "{:#?}", d.findings);
    assert!(codes(&d).is_empty());
    // where the end is known, the answer says when
    assert_eq!(crate::diagnose::kills_at(&g, &d), Some(("2026-11-29T12:01:00Z".parse().unwrap(), 60)));
    let mut out = Vec::new();
    let conn = crate::diagnose::Connection::default();
    crate::render::text::write_why_stuck(&g, &d, &conn, crate::render::style::Style::PLAIN, &mut out).unwrap();
    let text = String::from_utf8(out).unwrap();
    assert!(text.contains("in progress. The kubelet kills it at 12:01:00, in 60s."), "{text}");
    // on a lost node nothing is promised
    let mut objects = worker("2026-11-29T10:00:00Z");
    objects.push(pod("2026-11-29T12:01:00Z", json!([])));
    let (g, d) = answer(objects, 0);
    assert_eq!(crate::diagnose::kills_at(&g, &d), None);
}

#[test]
fn a_kubelet_that_stopped_renewing_its_lease_is_a_lost_node_not_a_stalled_kubelet() {
    let mut objects = worker("2026-11-29T10:00:00Z");
    objects.push(pod("2026-11-29T10:30:00Z", json!([])));
    let (_, d) = answer(objects, 3600);
    assert_eq!(codes(&d), [FindingCode::PodOnUnavailableNode]);
    assert!(d.findings[0].message.contains("stopped renewing"), "{}", d.findings[0].message);
}

#[test]
fn a_pod_the_kubelet_has_finished_is_left_to_its_finalizers() {
    // the kubelet's final DELETE (grace 0) was accepted: what stays is a finalizer's business
    let mut objects = worker("2026-11-29T11:59:52Z");
    objects.push(
        obj("v1", "Pod", Some("reports"), "renderer-x", "p1")
            .with("spec", json!({"nodeName": "worker-2"}))
            .deleting("2026-11-29T10:30:00Z")
            .finalizers(&["example.com/flush"]),
    );
    let (_, d) = answer(objects, 3600);
    assert!(!codes(&d).contains(&FindingCode::PodTerminationStalled), "{:?}", codes(&d));
}

#[test]
fn a_volume_whose_csi_driver_is_gone_and_its_attachment_are_named() {
    let mut objects = worker("2026-11-29T11:59:52Z");
    objects
        .push(pod("2026-11-29T10:30:00Z", json!([{"name": "data", "persistentVolumeClaim": {"claimName": "data"}}])));
    objects.push(
        obj("v1", "PersistentVolumeClaim", Some("reports"), "data", "c1")
            .with("spec", json!({"volumeName": "pv-data"})),
    );
    objects.push(obj("v1", "PersistentVolume", None, "pv-data", "v1").with(
        "spec",
        json!({"csi": {"driver": "disk.csi.example.com", "volumeHandle": "vol-1"}, "claimRef": {"name": "data", "namespace": "reports", "uid": "c1"}}),
    ));
    objects.push(obj("storage.k8s.io/v1", "VolumeAttachment", None, "csi-0a1b", "va1").with(
        "spec",
        json!({"attacher": "disk.csi.example.com", "nodeName": "worker-2", "source": {"persistentVolumeName": "pv-data"}}),
    ));
    // another driver's CSIDriver was read: the absence of this one's is seen, not assumed
    objects.push(obj("storage.k8s.io/v1", "CSIDriver", None, "nfs.csi.k8s.io", "d1"));
    let (g, d) = answer(objects, 3600);
    let f = d.findings.iter().find(|f| f.code == FindingCode::PodTerminationStalled).expect("stalled");
    assert!(f.message.contains("disk.csi.example.com, which is gone"), "{}", f.message);
    assert!(f.message.contains("VolumeAttachment csi-0a1b"), "{}", f.message);
    for name in ["pv-data", "csi-0a1b"] {
        let kind = if name == "pv-data" { "PersistentVolume" } else { "VolumeAttachment" };
        assert!(f.related.contains(&Related::Node(node(&g, kind, name))), "{name} related: {:?}", f.related);
    }
    let reinstall = f.remedy.iter().position(|s| s.text.contains("Reinstall CSI driver disk.csi.example.com"));
    let drain = f.remedy.iter().position(|s| s.text.contains("drain"));
    assert!(reinstall.is_some() && reinstall < drain, "restoring the driver comes before the drain");
}

#[test]
fn a_claim_whose_dra_driver_has_no_kubelet_plugin_on_the_node_is_named() {
    let mut objects = worker("2026-11-29T11:59:52Z");
    let mut p = pod("2026-11-29T10:30:00Z", json!([]));
    p["status"] = json!({"resourceClaimStatuses": [{"name": "gpu", "resourceClaimName": "renderer-x-gpu-7k2"}]});
    objects.push(p);
    objects.push(obj("resource.k8s.io/v1", "ResourceClaim", Some("reports"), "renderer-x-gpu-7k2", "rc1").with(
        "status",
        json!({"allocation": {"devices": {"results": [{"request": "gpu", "driver": "gpu.example.com", "pool": "worker-2", "device": "gpu-0"}]}}}),
    ));
    let slice = |name: &str, node: &str| {
        obj("resource.k8s.io/v1", "ResourceSlice", None, name, name)
            .with("spec", json!({"driver": "gpu.example.com", "nodeName": node, "pool": {"name": node}}))
    };
    // the driver publishes for worker-1 only: its plugin on worker-2 is gone
    objects.push(slice("worker-1-gpu", "worker-1"));
    let (g, d) = answer(objects.clone(), 3600);
    let f = d.findings.iter().find(|f| f.code == FindingCode::PodTerminationStalled).expect("stalled");
    assert!(
        f.message.contains(
            "DRA driver gpu.example.com, which publishes ResourceSlices for other nodes but none for worker-2"
        ),
        "{}",
        f.message
    );
    assert!(f.related.contains(&Related::Node(node(&g, "ResourceClaim", "renderer-x-gpu-7k2"))));
    assert!(f.remedy.iter().any(|s| s.text.contains("gpu.example.com's kubelet plugin on worker-2")));
    // a slice for worker-2 too: the plugin is there, nothing is said of it
    objects.push(slice("worker-2-gpu", "worker-2"));
    let (_, d) = answer(objects, 3600);
    let f = d.findings.iter().find(|f| f.code == FindingCode::PodTerminationStalled).expect("stalled");
    assert!(!f.message.contains("publishes ResourceSlices"), "{}", f.message);
    assert!(f.message.contains("It holds ResourceClaim reports/renderer-x-gpu-7k2"), "{}", f.message);
}

/// The kubelet's heartbeat absent: a read that failed there is said, else that there is none.
#[test]
fn a_heartbeat_not_read_is_told_from_one_that_is_not_there() {
    use crate::snapshot::{Gap, Missing, Resource};
    let mut objects = worker("2026-11-29T11:59:52Z");
    objects.retain(|o| o["kind"] != "Lease");
    objects.push(pod("2026-11-29T10:30:00Z", json!([])));
    let (_, d) = answer(objects.clone(), 3600);
    let message = &d.findings.iter().find(|f| f.code == FindingCode::PodTerminationStalled).unwrap().message;
    assert!(message.contains("it has no lease in kube-node-lease"), "{message}");
    let refused = Gap::new(
        Missing::Bodies {
            resource: Resource::new("coordination.k8s.io", "v1", "leases"),
            namespace: Some("kube-node-lease".into()),
            name: Some("worker-2".into()),
        },
        "forbidden (403)",
    );
    let g = crate::testing::graph_discovered(objects, vec![refused]);
    let live = Liveness::new(&g, NOW.parse().unwrap());
    let d = why_stuck_with(&g, &live, node(&g, "Pod", "renderer-x"), &Options { stuck_after: 3600 });
    let f = d.findings.iter().find(|f| f.message.contains("kube-node-lease")).expect("the node's state is said");
    assert!(f.message.contains("its lease in kube-node-lease could not be read"), "{}", f.message);
}

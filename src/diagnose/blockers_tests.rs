//! What else refuses the cleaners: a pod on a lost node, a controller that holds itself.

use serde_json::json;

use crate::controllers::Liveness;
use crate::diagnose::{Connection, Diagnosis, FindingCode, Reach, why_stuck};
use crate::graph::Graph;
use crate::testing::{ObjExt, graph, node, obj};

const NOW: &str = "2026-11-29T12:00:00Z";

fn diagnose(g: &Graph, kind: &str, name: &str) -> Diagnosis {
    let live = Liveness::new(g, NOW.parse().unwrap());
    why_stuck(g, &live, node(g, kind, name))
}

fn commands(d: &Diagnosis, code: FindingCode) -> Vec<(Reach, String)> {
    let f = d.findings.iter().find(|f| f.code == code).unwrap_or_else(|| panic!("no {code:?}: {:?}", d.findings));
    f.remedy
        .iter()
        .map(|s| (s.reach, s.command.as_ref().map(|c| c.line(&Connection::unbound("t"))).unwrap_or_default()))
        .collect()
}

fn pod_on(node_name: &str) -> serde_json::Value {
    obj("v1", "Pod", Some("data"), "db-0", "pod-1")
        .with(
            "metadata",
            json!({"name": "db-0", "namespace": "data", "uid": "pod-1",
            "deletionTimestamp": "2026-11-29T11:00:00Z", "deletionGracePeriodSeconds": 30}),
        )
        .with("spec", json!({"nodeName": node_name}))
}

#[test]
fn a_pod_on_a_shut_down_node_gets_the_out_of_service_taint_after_bringing_the_node_back() {
    let lost = obj("v1", "Node", None, "worker-3", "node-3").with(
        "status",
        json!({"conditions": [{"type": "Ready", "status": "Unknown", "reason": "NodeStatusUnknown", "message": "Kubelet stopped posting node status."}]}),
    );
    let g = graph(vec![pod_on("worker-3"), lost]);
    let d = diagnose(&g, "Pod", "db-0");
    assert!(d.stuck);
    let steps = commands(&d, FindingCode::PodOnUnavailableNode);
    let reaches: Vec<Reach> = steps.iter().map(|(r, _)| *r).collect();
    assert_eq!(reaches, [Reach::Restore, Reach::Disrupt, Reach::Destructive], "{steps:?}");
    assert_eq!(steps[1].1, "kubectl taint nodes worker-3 node.kubernetes.io/out-of-service=nodeshutdown:NoExecute");
    assert!(steps[2].1.contains("--grace-period=0") && steps[2].1.contains("--force"), "{steps:?}");
    // a node that is gone cannot be tainted: back, or the force delete
    let g = graph(vec![pod_on("worker-9")]);
    let d = diagnose(&g, "Pod", "db-0");
    let steps = commands(&d, FindingCode::PodOnUnavailableNode);
    assert!(!steps.iter().any(|(_, c)| c.contains("taint")), "{steps:?}");
    assert_eq!(steps.last().map(|(r, _)| *r), Some(Reach::Destructive));
}

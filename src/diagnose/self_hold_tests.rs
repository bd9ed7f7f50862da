//! A controller that holds itself: its own pod, or its own workload being deleted.

use super::*;
use crate::controllers::Liveness;
use crate::diagnose::{Connection, Finding, FindingCode, why_stuck};
use crate::testing::{graph_of, node};

const NOW: &str = "2026-11-29T12:00:00Z";

/// `managedFields` saying field manager "op-operator" added `f`.
fn added_by_operator(f: &str) -> String {
    format!(
        r#""finalizers":["{f}"],"managedFields":[{{"manager":"op-operator","operation":"Update","time":"2026-11-20T10:00:00Z","fieldsV1":{{"f:metadata":{{"f:finalizers":{{".":{{}},"v:\"{f}\"":{{}}}}}}}}}}]"#
    )
}

fn workload(kind: &str, deleting: bool) -> String {
    let del = if deleting { r#","deletionTimestamp":"2026-11-29T11:40:00Z""# } else { "" };
    format!(
        r#"{{"apiVersion":"apps/v1","kind":"{kind}","metadata":{{"name":"op-operator","namespace":"ops","uid":"w"{del}}},
            "spec":{{"replicas":1}},"status":{{"replicas":1,"readyReplicas":0}}}}"#
    )
}

/// The operator's pod, Terminating, its container stopped, carrying the operator's finalizer.
fn own_pod(owner_kind: &str) -> String {
    format!(
        r#"{{"apiVersion":"v1","kind":"Pod","metadata":{{"name":"op-operator-0","namespace":"ops","uid":"p",
            "deletionTimestamp":"2026-11-29T11:30:30Z","deletionGracePeriodSeconds":30,
            "ownerReferences":[{{"apiVersion":"apps/v1","kind":"{owner_kind}","name":"op-operator","uid":"w","controller":true,"blockOwnerDeletion":true}}],
            {}}},
            "spec":{{"nodeName":"n1","containers":[{{"name":"op"}}]}},
            "status":{{"phase":"Succeeded","conditions":[{{"type":"Ready","status":"False"}}]}}}}"#,
        added_by_operator("op.example.com/drain")
    )
}

const NODE: &str = r#"{"apiVersion":"v1","kind":"Node","metadata":{"name":"n1","uid":"n1"},"status":{"conditions":[{"type":"Ready","status":"True"}]}}"#;
const NS: &str = r#"{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"ops","uid":"ns"}}"#;

fn controller_finding(g: &Graph, kind: &str, name: &str) -> (crate::diagnose::Diagnosis, Finding) {
    let live = Liveness::new(g, NOW.parse().unwrap());
    let d = why_stuck(g, &live, node(g, kind, name));
    let f = d
        .findings
        .iter()
        .find(|f| matches!(f.code, FindingCode::FinalizerControllerDown | FindingCode::FinalizerControllerMissing))
        .unwrap_or_else(|| panic!("no controller finding: {:#?}", d.findings))
        .clone();
    (d, f)
}

fn lines(f: &Finding) -> Vec<String> {
    let conn = Connection::default();
    f.remedy
        .iter()
        .map(|s| format!("{} {}", s.text, s.command.as_ref().map(|c| c.line(&conn)).unwrap_or_default()))
        .collect()
}

#[test]
fn a_statefulsets_pod_holding_its_own_finalizer_is_a_self_deadlock_with_remedies_that_can_work() {
    let g = graph_of(&[NS, NODE, &workload("StatefulSet", false), &own_pod("StatefulSet")]);
    let (d, f) = controller_finding(&g, "Pod", "op-operator-0");
    assert!(d.stuck);
    assert!(f.message.contains("holds itself") && f.message.contains("StatefulSet ops/op-operator"), "{}", f.message);
    let all = lines(&f);
    assert!(!all.iter().any(|l| l.contains("once it runs again")), "{all:#?}");
    assert!(!all.iter().any(|l| l.starts_with("Scale ") || l.contains("kubectl scale")), "{all:#?}");
    assert!(all.iter().any(|l| l.contains("one more instance")), "{all:#?}");
    // least destructive first, the finalizer's removal last
    assert!(!f.remedy[0].reach.destructive());
    let last = f.remedy.last().unwrap();
    assert_eq!(last.reach, Reach::Destructive);
    let patch = last.command.as_ref().unwrap().line(&Connection::default());
    assert!(patch.starts_with("kubectl patch pod") && patch.contains("op-operator-0"), "{patch}");
    let ranked: Vec<Reach> = f.remedy.iter().map(|s| s.reach).collect();
    assert!(ranked.windows(2).all(|w| w[0] <= w[1]), "{ranked:?}");
}

#[test]
fn a_replicasets_pod_is_replaced_at_once_and_holds_nothing() {
    let rs = r#"{"apiVersion":"apps/v1","kind":"ReplicaSet","metadata":{"name":"op-operator","namespace":"ops","uid":"w"},
        "spec":{"replicas":1},"status":{"replicas":1,"readyReplicas":0}}"#;
    let g = graph_of(&[NS, NODE, rs, &own_pod("ReplicaSet")]);
    let live = Liveness::new(&g, NOW.parse().unwrap());
    let d = why_stuck(&g, &live, node(&g, "Pod", "op-operator-0"));
    assert!(!d.findings.iter().any(|f| f.message.contains("holds itself")), "{:#?}", d.findings);
}

#[test]
fn a_controller_whose_own_workload_is_being_deleted_is_not_told_to_come_back() {
    let cm = format!(
        r#"{{"apiVersion":"v1","kind":"ConfigMap","metadata":{{"name":"state","namespace":"ops","uid":"cm",
            "deletionTimestamp":"2026-11-29T11:40:00Z",{}}}}}"#,
        added_by_operator("op.example.com/drain")
    );
    let g = graph_of(&[NS, &workload("Deployment", true), &cm]);
    let (d, f) = controller_finding(&g, "ConfigMap", "state");
    assert!(d.stuck);
    assert!(f.message.contains("its own workload, Deployment ops/op-operator, is being deleted"), "{}", f.message);
    let all = lines(&f);
    assert!(!all.iter().any(|l| l.contains("once it runs again") || l.contains("kubectl scale")), "{all:#?}");
    assert!(all.iter().any(|l| l.contains("outside what is being deleted")), "{all:#?}");
    // the same ConfigMap with the operator's Deployment not being deleted: the usual remedies
    let g = graph_of(&[NS, &workload("Deployment", false), &cm]);
    let (_, f) = controller_finding(&g, "ConfigMap", "state");
    assert!(!f.message.contains("holds itself"), "{}", f.message);
}

#[test]
fn a_webhook_server_whose_own_final_delete_its_webhook_rejects_holds_itself() {
    let pod = |owner: &str| {
        format!(
            r#"{{"apiVersion":"v1","kind":"Pod","metadata":{{"name":"hook-0","namespace":"ops","uid":"p","labels":{{"app":"hook"}},
                "deletionTimestamp":"2026-11-29T11:30:30Z","deletionGracePeriodSeconds":30,
                "ownerReferences":[{{"apiVersion":"apps/v1","kind":"{owner}","name":"hook","uid":"w","controller":true}}]}},
                "spec":{{"nodeName":"n1"}},"status":{{"phase":"Succeeded"}}}}"#
        )
    };
    let owner = |kind: &str| {
        format!(
            r#"{{"apiVersion":"apps/v1","kind":"{kind}","metadata":{{"name":"hook","namespace":"ops","uid":"w"}},"spec":{{"replicas":1}},"status":{{"replicas":1}}}}"#
        )
    };
    let svc = r#"{"apiVersion":"v1","kind":"Service","metadata":{"name":"hook","namespace":"ops","uid":"svc"},"spec":{"type":"ClusterIP","selector":{"app":"hook"}}}"#;
    let slice = r#"{"apiVersion":"discovery.k8s.io/v1","kind":"EndpointSlice","metadata":{"name":"hook-x","namespace":"ops","uid":"sl","labels":{"kubernetes.io/service-name":"hook"}},
        "endpoints":[{"addresses":["10.0.0.9"],"conditions":{"ready":false},"targetRef":{"kind":"Pod","namespace":"ops","name":"hook-0"}}]}"#;
    let conf = r#"{"apiVersion":"admissionregistration.k8s.io/v1","kind":"ValidatingWebhookConfiguration","metadata":{"name":"pod-policy","uid":"vwc"},
        "webhooks":[{"name":"pods.hook.example.com","failurePolicy":"Fail",
          "rules":[{"apiGroups":[""],"apiVersions":["v1"],"operations":["DELETE"],"resources":["pods"]}],
          "clientConfig":{"service":{"namespace":"ops","name":"hook"}}}]}"#;
    let answer = |kind: &str| {
        let g = graph_of(&[NS, NODE, svc, slice, conf, &owner(kind), &pod(kind)]);
        let live = Liveness::new(&g, NOW.parse().unwrap());
        let d = why_stuck(&g, &live, node(&g, "Pod", "hook-0"));
        let f =
            d.findings.iter().find(|f| f.code == FindingCode::AdmissionWebhookUnavailable).expect("webhook").clone();
        (d.stuck, f)
    };
    let (stuck, f) = answer("StatefulSet");
    assert!(stuck);
    assert!(f.message.contains("holds itself") && f.message.contains("StatefulSet ops/hook"), "{}", f.message);
    let all = lines(&f);
    assert!(!all.iter().any(|l| l.contains("Restore the webhook's backend")), "{all:#?}");
    assert!(all.iter().any(|l| l.contains("kubectl delete validatingwebhookconfiguration pod-policy")), "{all:#?}");
    // a ReplicaSet's replacement starts at once and serves: not held
    let (_, f) = answer("ReplicaSet");
    assert!(!f.message.contains("holds itself"), "{}", f.message);
}

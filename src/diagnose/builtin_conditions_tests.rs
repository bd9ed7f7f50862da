//! Built-in conditions: each holds, does not hold, or holds too recently to call stalled;
//! the GC's missed step; `--stuck-after`.

use serde_json::{Value, json};

use crate::controllers::Liveness;
use crate::diagnose::{Diagnosis, FindingCode, Options, Reach, why_stuck_with};
use crate::graph::Graph;
use crate::testing::{ObjExt, graph, node, obj};

const NOW: &str = "2026-11-29T12:00:00Z";

/// kube-controller-manager's lease, renewed seconds ago: the built-in controllers are alive.
fn kcm_alive() -> Value {
    obj("coordination.k8s.io/v1", "Lease", Some("kube-system"), "kube-controller-manager", "lease-kcm").with(
        "spec",
        json!({"holderIdentity": "cp-1_abc", "leaseDurationSeconds": 15, "renewTime": "2026-11-29T11:59:55Z"}),
    )
}

fn kcm_stale() -> Value {
    obj("coordination.k8s.io/v1", "Lease", Some("kube-system"), "kube-controller-manager", "lease-kcm").with(
        "spec",
        json!({"holderIdentity": "cp-1_abc", "leaseDurationSeconds": 15, "renewTime": "2026-11-29T08:00:00Z"}),
    )
}

fn diagnose(g: &Graph, kind: &str, name: &str, opts: Options) -> Diagnosis {
    let live = Liveness::new(g, NOW.parse().unwrap());
    why_stuck_with(g, &live, node(g, kind, name), &opts)
}

fn codes(d: &Diagnosis) -> Vec<FindingCode> {
    d.findings.iter().map(|f| f.code).collect()
}

fn claim(deleted: &str) -> Value {
    obj("v1", "PersistentVolumeClaim", Some("batch"), "data", "pvc-1")
        .deleting(deleted)
        .finalizers(&["kubernetes.io/pvc-protection"])
        .with("spec", json!({"volumeName": "pv-1"}))
        .with("status", json!({"phase": "Bound"}))
}

fn pod_with_claim(name: &str, uid: &str, claim: &str, node_name: Option<&str>, phase: &str) -> Value {
    let mut spec = json!({"volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": claim}}]});
    if let Some(n) = node_name {
        spec["nodeName"] = json!(n);
    }
    obj("v1", "Pod", Some("batch"), name, uid).with("spec", spec).with("status", json!({"phase": phase}))
}

#[test]
fn a_claim_no_pod_uses_is_stalled_past_the_grace_time() {
    let g = graph(vec![
        kcm_alive(),
        claim("2026-11-29T11:10:00Z"),
        pod_with_claim("other", "p-2", "other-claim", Some("w1"), "Running"),
    ]);
    let d = diagnose(&g, "PersistentVolumeClaim", "data", Options::default());
    assert!(d.stuck);
    let f = d.findings.iter().find(|f| f.code == FindingCode::ControllerStalled).expect("ControllerStalled");
    assert!(f.message.contains("no pod uses the claim"), "{}", f.message);
    // requeue first (a change), restart next, removing the finalizer last and destructive
    let reaches: Vec<Reach> = f.remedy.iter().map(|s| s.reach).collect();
    assert_eq!(reaches, [Reach::Restore, Reach::Restore, Reach::Destructive]);
    let first = f.remedy[0].command.as_ref().expect("a command").line(&Default::default());
    assert_eq!(
        first,
        "kubectl annotate persistentvolumeclaims data kubectl-gc/requeued-at=2026-11-29T12:00:00Z -n batch --overwrite"
    );
    assert!(f.remedy[2].text.contains("already holds"), "{}", f.remedy[2].text);
}

#[test]
fn a_claim_released_moments_ago_is_in_progress_with_a_next_step() {
    let g =
        graph(vec![kcm_alive(), claim("2026-11-29T11:58:00Z"), pod_with_claim("x", "p-2", "x", Some("w1"), "Running")]);
    let d = diagnose(&g, "PersistentVolumeClaim", "data", Options::default());
    assert!(!d.stuck);
    assert_eq!(codes(&d), [FindingCode::FinalizerPending]);
    assert!(!d.findings[0].remedy.is_empty(), "in progress, yet a next step");
}

#[test]
fn a_claim_used_by_a_running_pod_of_a_statefulset_waits_and_names_the_workload() {
    let g = graph(vec![
        kcm_alive(),
        claim("2026-11-29T11:10:00Z"),
        obj("apps/v1", "StatefulSet", Some("batch"), "db", "sts-1"),
        pod_with_claim("db-0", "p-1", "data", Some("w1"), "Running").owned_by(
            "apps/v1",
            "StatefulSet",
            "db",
            "sts-1",
            Some(true),
        ),
    ]);
    // the builder marks no reference as controller; make it one
    let g = {
        let mut s = g.into_snapshot();
        for o in &mut s.objects {
            for r in &mut o.owner_references {
                r.controller = Some(true);
            }
        }
        Graph::build(s)
    };
    let d = diagnose(&g, "PersistentVolumeClaim", "data", Options::default());
    assert!(d.stuck, "nothing stops the pod on its own");
    let f = &d.findings[0];
    assert_eq!(f.code, FindingCode::FinalizerPending);
    assert!(!codes(&d).contains(&FindingCode::ControllerStalled));
    let line = f.remedy.iter().find_map(|s| s.command.as_ref()).unwrap().line(&Default::default());
    assert_eq!(line, "kubectl scale statefulsets.apps db -n batch --replicas=0");
    assert_eq!(f.remedy[0].reach, Reach::Disrupt);
}

#[test]
fn unscheduled_pods_do_not_use_a_claim_and_finished_ones_still_do() {
    let g = graph(vec![
        kcm_alive(),
        claim("2026-11-29T11:10:00Z"),
        pod_with_claim("pending", "p-1", "data", None, "Pending"),
        pod_with_claim("done", "p-2", "data", Some("w1"), "Succeeded"),
    ]);
    let d = diagnose(&g, "PersistentVolumeClaim", "data", Options::default());
    let f = &d.findings[0];
    assert_eq!(f.code, FindingCode::FinalizerPending);
    assert_eq!(f.related.len(), 1, "only the scheduled pod counts: {}", f.message);
    assert!(f.message.contains("Pod batch/done (Succeeded, finished but not deleted)"), "{}", f.message);
    assert!(d.stuck);
}

#[test]
fn a_claim_alone_in_the_input_is_not_called_stalled() {
    let g = graph(vec![kcm_alive(), claim("2026-11-29T11:10:00Z")]);
    let d = diagnose(&g, "PersistentVolumeClaim", "data", Options::default());
    assert!(!d.stuck);
    assert!(!codes(&d).contains(&FindingCode::ControllerStalled));
    assert!(d.incomplete.iter().any(|i| i.contains("no pods")), "{:?}", d.incomplete);
}

fn volume(phase: &str, since: &str) -> Value {
    obj("v1", "PersistentVolume", None, "pv-1", "pv-1")
        .deleting("2026-11-29T11:00:00Z")
        .finalizers(&["kubernetes.io/pv-protection"])
        .with("spec", json!({"claimRef": {"namespace": "batch", "name": "data", "uid": "pvc-1"}}))
        .with("status", json!({"phase": phase, "lastPhaseTransitionTime": since}))
}

#[test]
fn a_volume_that_is_no_longer_bound_is_stalled_past_the_grace_time_from_when_it_was_released() {
    let g = graph(vec![kcm_alive(), volume("Released", "2026-11-29T11:30:00Z")]);
    let d = diagnose(&g, "PersistentVolume", "pv-1", Options::default());
    assert_eq!(codes(&d), [FindingCode::ControllerStalled]);
    assert!(d.findings[0].message.contains("since 2026-11-29T11:30:00Z"), "{}", d.findings[0].message);
    // released two minutes ago: in progress
    let g = graph(vec![kcm_alive(), volume("Released", "2026-11-29T11:58:00Z")]);
    let d = diagnose(&g, "PersistentVolume", "pv-1", Options::default());
    assert_eq!(codes(&d), [FindingCode::FinalizerPending]);
    assert!(!d.stuck);
    // still bound: waits for its claim
    let g = graph(vec![kcm_alive(), volume("Bound", "2026-11-20T00:00:00Z"), claim("2026-11-29T11:10:00Z")]);
    let d = diagnose(&g, "PersistentVolume", "pv-1", Options::default());
    assert_eq!(d.findings[0].code, FindingCode::FinalizerPending);
    assert_eq!(d.findings[0].related.len(), 1);
}

#[test]
fn a_volume_bound_to_a_claim_nobody_deletes_is_stuck_on_the_claim_and_its_users_not_on_a_controller() {
    let live_claim = obj("v1", "PersistentVolumeClaim", Some("batch"), "data", "pvc-1")
        .finalizers(&["kubernetes.io/pvc-protection"])
        .with("spec", json!({"volumeName": "pv-1"}))
        .with("status", json!({"phase": "Bound"}));
    let g = graph(vec![
        kcm_alive(),
        volume("Bound", "2026-11-20T00:00:00Z"),
        live_claim,
        pod_with_claim("user", "p-1", "data", Some("w1"), "Running"),
    ]);
    let d = diagnose(&g, "PersistentVolume", "pv-1", Options::default());
    assert!(d.stuck, "nothing will unbind the claim: {:?}", d.findings);
    let pending = &d.findings[0];
    assert_eq!(pending.code, FindingCode::FinalizerPending);
    assert_eq!(pending.related, vec![crate::diagnose::Related::Node(node(&g, "PersistentVolumeClaim", "data"))]);
    assert!(pending.message.contains("Pod batch/user"), "names what uses the claim: {}", pending.message);
    // the claim's deletion is the way out; no finalizer is stripped, no controller restarted
    let commands: Vec<String> = pending
        .remedy
        .iter()
        .filter_map(|s| s.command.as_ref())
        .map(|c| c.line(&crate::diagnose::Connection::unbound("t")))
        .collect();
    assert!(commands.iter().any(|c| c.contains("delete persistentvolumeclaims data")), "{commands:?}");
    assert!(!commands.iter().any(|c| c.contains("patch") || c.contains("rollout")), "{commands:?}");
    assert_eq!(pending.remedy[0].reach, Reach::Inspect);
    assert!(!codes(&d).contains(&FindingCode::ControllerStalled));
}

fn job_pod(phase: &str, deleted: &str) -> Value {
    obj("v1", "Pod", Some("billing"), "run-1", "pod-1")
        .deleting(deleted)
        .finalizers(&["batch.kubernetes.io/job-tracking"])
        .owned_by("batch/v1", "Job", "backfill", "job-1", Some(true))
        .with("spec", json!({"nodeName": "w1"}))
        .with(
            "status",
            json!({"phase": phase, "containerStatuses": [{"name": "c", "state": {"terminated": {"finishedAt": "2026-11-29T08:59:00Z"}}}]}),
        )
}

fn controller_refs(g: Graph) -> Graph {
    let mut s = g.into_snapshot();
    for o in &mut s.objects {
        for r in &mut o.owner_references {
            r.controller = Some(true);
        }
    }
    Graph::build(s)
}

#[test]
fn a_finished_job_pod_is_stalled_and_a_running_one_with_its_job_waits() {
    let other_job = obj("batch/v1", "Job", Some("billing"), "other", "job-9");
    let g = controller_refs(graph(vec![kcm_alive(), job_pod("Succeeded", "2026-11-29T09:00:00Z"), other_job.clone()]));
    let d = diagnose(&g, "Pod", "run-1", Options::default());
    assert!(d.stuck);
    assert!(codes(&d).contains(&FindingCode::ControllerStalled), "{:?}", codes(&d));
    assert!(!codes(&d).contains(&FindingCode::GarbageCollectorStalled));
    // too recent
    let g = controller_refs(graph(vec![kcm_alive(), job_pod("Succeeded", "2026-11-29T11:59:00Z"), other_job.clone()]));
    let d = diagnose(&g, "Pod", "run-1", Options::default());
    assert!(!d.stuck);
    assert!(codes(&d).contains(&FindingCode::FinalizerPending));
    // running, its Job alive: waits
    let g = controller_refs(graph(vec![
        kcm_alive(),
        job_pod("Running", "2026-11-29T09:00:00Z"),
        obj("batch/v1", "Job", Some("billing"), "backfill", "job-1"),
    ]));
    let d = diagnose(&g, "Pod", "run-1", Options::default());
    assert!(!codes(&d).contains(&FindingCode::ControllerStalled));
    assert!(codes(&d).contains(&FindingCode::FinalizerPending));
    // running, its Job gone (Jobs were read: another one is there): the orphan worker should have released it
    let g = controller_refs(graph(vec![kcm_alive(), job_pod("Running", "2026-11-29T09:00:00Z"), other_job]));
    let d = diagnose(&g, "Pod", "run-1", Options::default());
    let f = d.findings.iter().find(|f| f.code == FindingCode::ControllerStalled).expect("stalled");
    assert!(f.message.contains("its Job backfill is gone"), "{}", f.message);
}

#[test]
fn a_crd_without_instances_is_stalled_and_one_with_instances_waits() {
    let crd = obj("apiextensions.k8s.io/v1", "CustomResourceDefinition", None, "sites.own.labhub.io", "crd-1")
        .deleting("2026-11-29T11:00:00Z")
        .finalizers(&["customresourcecleanup.apiextensions.k8s.io"])
        .with("spec", json!({"group": "own.labhub.io", "names": {"kind": "Site", "plural": "sites"}, "scope": "Namespaced", "versions": [{"name": "v1", "served": true, "storage": true}]}));
    let site = obj("own.labhub.io/v1", "Site", Some("labs"), "alpha", "s-1");
    let g = graph(vec![crd.clone(), site]);
    let d = diagnose(&g, "CustomResourceDefinition", "sites.own.labhub.io", Options::default());
    assert_eq!(d.findings[0].code, FindingCode::FinalizerPending);
    assert_eq!(d.findings[0].related.len(), 1);
    // no instance, and no way to know the kind was listed: not called stalled
    let g = graph(vec![crd.clone()]);
    let d = diagnose(&g, "CustomResourceDefinition", "sites.own.labhub.io", Options::default());
    assert!(!codes(&d).contains(&FindingCode::ControllerStalled));
    assert!(!d.incomplete.is_empty());
    // a capture that lists the kind: stalled
    let mut s = crate::testing::snapshot(vec![crd]);
    s.resource_lists.push(crate::snapshot::ResourceList {
        group_version: "own.labhub.io/v1".into(),
        resources: vec![crate::snapshot::ApiResource {
            plural: "sites".into(),
            singular: None,
            namespaced: true,
            group: None,
            version: None,
            kind: "Site".into(),
            verbs: vec!["list".into()],
            short_names: vec![],
            categories: vec![],
        }],
    });
    let g = Graph::build(s);
    let d = diagnose(&g, "CustomResourceDefinition", "sites.own.labhub.io", Options::default());
    assert!(codes(&d).contains(&FindingCode::ControllerStalled), "{:?}", d.findings);
    assert!(d.stuck);
}

#[test]
fn a_foreground_owner_whose_dependents_were_never_deleted_is_a_gc_miss_alive_or_not() {
    let owner = obj("apps/v1", "ReplicaSet", Some("shop"), "web-1", "rs-1")
        .deleting("2026-11-29T11:00:00Z")
        .finalizers(&["foregroundDeletion"]);
    let pod =
        obj("v1", "Pod", Some("shop"), "web-1-a", "p-1").owned_by("apps/v1", "ReplicaSet", "web-1", "rs-1", Some(true));
    let g = graph(vec![kcm_alive(), owner.clone(), pod.clone()]);
    let d = diagnose(&g, "ReplicaSet", "web-1", Options::default());
    assert!(d.stuck);
    let f = d.findings.iter().find(|f| f.code == FindingCode::GarbageCollectorStalled).expect("GC miss");
    assert_eq!(f.related.len(), 1);
    let lines: Vec<String> =
        f.remedy.iter().filter_map(|s| s.command.as_ref()).map(|c| c.line(&Default::default())).collect();
    assert!(lines.contains(&"kubectl delete pods web-1-a -n shop --wait=false".to_string()), "{lines:?}");
    assert!(lines.iter().any(|l| l.contains("--cascade=background")), "{lines:?}");
    // kube-controller-manager down: both findings, the GC one saying so
    let g = graph(vec![kcm_stale(), owner.clone(), pod.clone()]);
    let d = diagnose(&g, "ReplicaSet", "web-1", Options::default());
    assert!(codes(&d).contains(&FindingCode::FinalizerControllerDown));
    let f = d.findings.iter().find(|f| f.code == FindingCode::GarbageCollectorStalled).expect("GC miss too");
    assert!(f.message.contains("not judged alive"), "{}", f.message);
    // a dependent being deleted is not a miss
    let g = graph(vec![kcm_alive(), owner, pod.deleting("2026-11-29T11:00:05Z")]);
    let d = diagnose(&g, "ReplicaSet", "web-1", Options::default());
    assert!(!codes(&d).contains(&FindingCode::GarbageCollectorStalled));
}

#[test]
fn an_alive_controller_past_stuck_after_is_not_progressing() {
    let bucket = obj("media.example.com/v1", "Bucket", Some("studio"), "raw", "b-1")
        .deleting("2026-11-29T09:00:00Z")
        .finalizers(&["media.example.com/purge"]);
    let lease = obj("coordination.k8s.io/v1", "Lease", Some("media"), "8f3c.media.example.com", "l-1").with(
        "spec",
        json!({"holderIdentity": "op-1_x", "leaseDurationSeconds": 15, "renewTime": "2026-11-29T11:59:55Z"}),
    );
    let g = graph(vec![bucket, lease]);
    let d = diagnose(&g, "Bucket", "raw", Options::default());
    if d.finalizers[0].owner.controller != crate::controllers::ControllerState::Alive {
        panic!("the lease should make the controller alive: {:?}", d.finalizers[0].owner);
    }
    assert!(d.stuck);
    assert_eq!(codes(&d), [FindingCode::FinalizerNotProgressing]);
    let d = diagnose(&g, "Bucket", "raw", Options { stuck_after: 4 * 3600 });
    assert!(!d.stuck);
    assert_eq!(codes(&d), [FindingCode::FinalizerPending]);
    assert!(d.findings[0].remedy.iter().any(|s| s.command.is_some()), "a next step to run");
}

fn terminating_namespace(name: &str) -> Value {
    obj("v1", "Namespace", None, name, "ns-1")
        .deleting("2026-11-29T11:00:00Z")
        .with("spec", json!({"finalizers": ["kubernetes"]}))
}

#[test]
fn an_empty_namespace_is_stalled_only_where_the_capture_shows_it_empty() {
    // a capture (discovery data) that holds nothing in the namespace, 60 minutes on: stalled
    let g = crate::testing::graph_discovered(vec![kcm_alive(), terminating_namespace("gone")], vec![]);
    let d = diagnose(&g, "Namespace", "gone", Options::default());
    assert!(d.stuck);
    let f = d.findings.iter().find(|f| f.code == FindingCode::ControllerStalled).expect("stalled");
    assert!(f.remedy.iter().any(|s| s.reach == Reach::Destructive && s.text.contains("/finalize")), "{:?}", f.remedy);
    // content left: waits for it
    let g = crate::testing::graph_discovered(
        vec![kcm_alive(), terminating_namespace("gone"), obj("v1", "ConfigMap", Some("gone"), "c", "cm-1")],
        vec![],
    );
    let d = diagnose(&g, "Namespace", "gone", Options::default());
    assert!(!codes(&d).contains(&FindingCode::ControllerStalled));
    // the namespace alone in a plain file: the answer cannot tell, and says so
    let g = graph(vec![kcm_alive(), terminating_namespace("gone")]);
    let d = diagnose(&g, "Namespace", "gone", Options::default());
    assert!(!d.stuck);
    assert!(!codes(&d).contains(&FindingCode::ControllerStalled));
    assert!(d.incomplete.iter().any(|i| i.contains("namespace gone")), "{:?}", d.incomplete);
}

#[test]
fn an_empty_namespace_within_two_resyncs_is_in_progress() {
    let ns = obj("v1", "Namespace", None, "gone", "ns-1")
        .deleting("2026-11-29T11:55:00Z")
        .with("spec", json!({"finalizers": ["kubernetes"]}));
    let g = crate::testing::graph_discovered(vec![kcm_alive(), ns], vec![]);
    let d = diagnose(&g, "Namespace", "gone", Options::default());
    assert!(!d.stuck);
    assert!(codes(&d).contains(&FindingCode::FinalizerPending), "{:?}", codes(&d));
}

#[test]
fn an_empty_capture_of_a_namespace_whose_conditions_name_content_is_not_called_empty() {
    // contract §4.3.4: "nothing is left" only when the conditions name nothing
    let mut ns = terminating_namespace("gone");
    ns["status"] = json!({"phase": "Terminating", "conditions": [{"type": "NamespaceContentRemaining",
        "status": "True", "reason": "SomeResourcesRemain", "message": "Some resources are remaining: widgets.example.io has 1 resource instances"}]});
    let g = crate::testing::graph_discovered(vec![kcm_alive(), ns], vec![]);
    let d = diagnose(&g, "Namespace", "gone", Options::default());
    assert!(!codes(&d).contains(&FindingCode::ControllerStalled), "{:?}", codes(&d));
    assert_eq!(d.verdict(), crate::diagnose::Verdict::Unknown);
    assert!(
        d.incomplete.iter().any(|i| i.contains("NamespaceContentRemaining condition says otherwise")),
        "{:?}",
        d.incomplete
    );
}

#[test]
fn an_answer_in_progress_prints_at_most_three_steps_that_change_nothing_and_no_young_logs() {
    // an alive operator, its finalizer 30 s old: in progress
    let bucket = obj("media.example.com/v1", "Bucket", Some("studio"), "raw", "b-1")
        .deleting("2026-11-29T11:59:30Z")
        .finalizers(&["media.example.com/purge", "media.example.com/audit", "media.example.com/index"]);
    let lease = obj("coordination.k8s.io/v1", "Lease", Some("media"), "8f3c.media.example.com", "l-1").with(
        "spec",
        json!({"holderIdentity": "op-1_x", "leaseDurationSeconds": 15, "renewTime": "2026-11-29T11:59:55Z"}),
    );
    let g = graph(vec![bucket, lease]);
    let d = diagnose(&g, "Bucket", "raw", Options::default());
    assert_eq!(d.verdict(), crate::diagnose::Verdict::InProgress);
    let steps: std::collections::HashSet<_> = d.findings.iter().flat_map(|f| &f.remedy).collect();
    assert!(!steps.is_empty() && steps.len() <= 3, "{steps:?}");
    assert!(steps.iter().all(|s| s.reach == Reach::Inspect), "{steps:?}");
    assert!(!steps.iter().any(|s| s.text.contains("logs")), "logs of 30 s: {steps:?}");
    // the same deletion an hour on is stuck, and its steps are not trimmed
    let d = diagnose(&g, "Bucket", "raw", Options { stuck_after: 0 });
    assert!(d.stuck);
}

#[test]
fn a_gc_stall_reads_its_age_as_the_headline_does() {
    let owner = obj("v1", "ConfigMap", Some("a"), "o", "o-1")
        .deleting("2026-11-28T18:21:00Z")
        .finalizers(&["foregroundDeletion"]);
    let g = graph(vec![kcm_alive(), owner]);
    let d = diagnose(&g, "ConfigMap", "o", Options::default());
    let f = d.findings.iter().find(|f| f.code == FindingCode::GarbageCollectorStalled).expect("a GC stall");
    assert!(f.message.contains("after 17h"), "{}", f.message);
}

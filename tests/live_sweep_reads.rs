//! What a live `why-stuck --all` reads, checked on the test API server's request log: a
//! metadata pass over the scope, then bodies only where an answer reads them — pods in full in
//! the namespaces where a claim or the namespace is being deleted (a claim or a pod being
//! deleted by name), and where controllers live; never every pod, every CRD or every Event of the cluster — with the same
//! answers as offline, in no more requests than `tree -A`.
//!
//! The fixture `stuck-everywhere`: Sites being deleted in team-a and team-b, a ConfigMap in
//! team-a, a claim still mounted in team-c; controllers in kube-system and sync-system.

use std::path::PathBuf;
use std::process::Output;

use serde_json::Value;

use crate::support::apiserver::{ApiServer, Recorded};
use crate::support::{self, DEADLINE, Env, NOW, assert_read_only, run, stderr};

fn fixture() -> PathBuf {
    support::root().join("tests/fixtures/stuck-everywhere/snapshot.json")
}

fn gc(env: &Env, args: &[&str]) -> Output {
    let mut c = env.gc();
    c.args(args).args(["-o", "json", "--now", NOW, "--request-timeout", "5s"]);
    run(c, DEADLINE)
}

fn offline(args: &[&str]) -> Output {
    offline_on(&fixture(), args)
}

fn offline_on(snapshot: &std::path::Path, args: &[&str]) -> Output {
    let env = Env::new("http://127.0.0.1:9", None);
    let mut c = env.command(support::bin());
    c.args(args).args(["-o", "json", "--now", NOW, "--snapshot"]).arg(snapshot);
    run(c, DEADLINE)
}

fn json(o: &Output) -> Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("not JSON ({e}); stderr: {}", stderr(o)))
}

/// The answer with printed commands unbound (live they name the context `test`).
fn unbound(v: Value) -> Value {
    match v {
        Value::String(s) => Value::String(support::unbound(&s)),
        Value::Array(a) => Value::Array(a.into_iter().map(unbound).collect()),
        Value::Object(m) => Value::Object(m.into_iter().map(|(k, v)| (k, unbound(v))).collect()),
        v => v,
    }
}

fn query(r: &Recorded, key: &str) -> Option<String> {
    form_urlencoded::parse(r.query.as_bytes()).find(|(k, _)| k == key).map(|(_, v)| v.into_owned())
}

/// The paths listed whole in full (not metadata-only, not narrowed by a selector to named
/// objects, as the workloads named like a field manager are) of a resource, in any namespace.
fn full_lists<'a>(reqs: &'a [Recorded], resource: &str) -> Vec<&'a str> {
    reqs.iter()
        .filter(|r| !r.wants_metadata() && r.path.ends_with(&format!("/{resource}")))
        .filter(|r| query(r, "fieldSelector").is_none() && query(r, "labelSelector").is_none())
        .map(|r| r.path.as_str())
        .collect()
}

/// Each Events request is narrowed to one object's uid, in a namespace.
fn assert_events_by_uid(reqs: &[Recorded], what: &str) {
    let events: Vec<&Recorded> = reqs.iter().filter(|r| r.path.ends_with("/events")).collect();
    assert!(!events.is_empty(), "{what}: no Events read, yet its answers show them");
    for r in events {
        let s = query(r, "fieldSelector").unwrap_or_else(|| panic!("{what}: an unfiltered Events list: {r:?}"));
        assert!(s.starts_with("involvedObject.uid="), "{what}: {s}");
        assert!(r.path.contains("/namespaces/"), "{what}: Events listed across namespaces: {r:?}");
    }
}

fn run_live(args: &[&str]) -> (Output, Vec<Recorded>) {
    run_live_on(&fixture(), args)
}

fn run_live_on(snapshot: &std::path::Path, args: &[&str]) -> (Output, Vec<Recorded>) {
    let server = ApiServer::start(snapshot);
    let env = Env::new(&server.url(), None);
    let o = gc(&env, args);
    assert_read_only(&server);
    (o, server.requests())
}

#[test]
fn all_namespaces_reads_pods_in_full_only_where_claims_and_controllers_are() {
    let args = ["why-stuck", "--all", "-A"];
    let (o, reqs) = run_live(&args);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert_eq!(unbound(json(&o)), json(&offline(&args)), "live and offline --all -A differ");
    assert!(reqs.iter().all(|r| r.method == "GET"), "a request other than GET");
    // pods and claims: every namespace metadata-only, then in full where answers read them
    let pods = full_lists(&reqs, "pods");
    assert!(!pods.contains(&"/api/v1/pods"), "every pod of the cluster read in full: {pods:?}");
    assert!(pods.contains(&"/api/v1/namespaces/team-c/pods"), "the claim's namespace: {pods:?}");
    assert!(pods.contains(&"/api/v1/namespaces/kube-system/pods"), "where the CSI controller lives: {pods:?}");
    for ns in ["team-a", "team-b", "default", "kube-public"] {
        assert!(!pods.contains(&format!("/api/v1/namespaces/{ns}/pods").as_str()), "{ns}: {pods:?}");
    }
    assert!(reqs.iter().any(|r| r.path == "/api/v1/pods" && r.wants_metadata()), "the metadata pass over pods");
    // no claim in full, not even the one being deleted: its answer reads the pods that mount
    // it, not its spec or status, nor its namespace's other claims
    let claims = full_lists(&reqs, "persistentvolumeclaims");
    assert!(claims.is_empty(), "{claims:?}");
    let uploads = "/api/v1/namespaces/team-c/persistentvolumeclaims/uploads";
    assert!(!reqs.iter().any(|r| r.path == uploads), "the claim's own body");
    // beside the claim being deleted they come without managedFields (KEP-5958's JSON opt-out:
    // the answers read them only for finalizers no built-in controller removes, read again by
    // name); where controllers live they are read as one answer reads them, with them
    let in_full = |path: &str| -> Vec<&Recorded> {
        reqs.iter().filter(|r| r.path == path && !r.wants_metadata() && query(r, "fieldSelector").is_none()).collect()
    };
    let asked = in_full("/api/v1/namespaces/team-c/pods");
    assert!(!asked.is_empty() && asked.iter().all(|r| r.asks_drop_first()), "{asked:?}");
    let controllers = in_full("/api/v1/namespaces/kube-system/pods");
    assert!(!controllers.is_empty() && controllers.iter().all(|r| !r.asks_drop_first()), "{controllers:?}");
    // workloads in full only where controllers live
    for p in full_lists(&reqs, "deployments") {
        assert!(p.contains("/namespaces/kube-system/") || p.contains("/namespaces/sync-system/"), "{p}");
    }
    // CRDs metadata-only but for the one of the kind being deleted (its conversion), by name;
    // no Event but by uid; never Secrets in full
    let crds = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
    let full_crds: Vec<&str> =
        reqs.iter().filter(|r| r.path.starts_with(crds) && !r.wants_metadata()).map(|r| r.path.as_str()).collect();
    assert!(full_crds.iter().all(|p| p.starts_with(&format!("{crds}/sites."))), "{full_crds:?}");
    assert_events_by_uid(&reqs, "--all -A");
    assert!(!reqs.iter().any(|r| r.path.ends_with("/secrets") && !r.wants_metadata()));
}

#[test]
fn all_namespaces_costs_no_more_requests_than_tree_all_namespaces() {
    let count = |args: &[&str]| run_live(args).1.len();
    let all = count(&["why-stuck", "--all", "-A"]);
    let tree = count(&["tree", "deploy/uploader", "-n", "team-c", "-A"]);
    assert!(all <= tree, "why-stuck --all -A made {all} requests, tree -A {tree}");
    assert!(all > 10, "{all} requests cannot have read the cluster");
}

#[test]
fn one_namespace_reads_it_in_full_and_elsewhere_only_what_its_answers_need() {
    let args = ["why-stuck", "--all", "-n", "team-a"];
    let (o, reqs) = run_live(&args);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert_eq!(unbound(json(&o)), json(&offline(&args)), "live and offline --all -n differ");
    assert!(reqs.iter().all(|r| r.method == "GET"), "a request other than GET");
    // the namespace in full (its pods included), other application namespaces not at all
    assert!(full_lists(&reqs, "pods").contains(&"/api/v1/namespaces/team-a/pods"));
    for ns in ["team-b", "team-c"] {
        let here: Vec<&str> =
            reqs.iter().map(|r| r.path.as_str()).filter(|p| p.contains(&format!("/namespaces/{ns}/"))).collect();
        assert!(here.is_empty(), "{ns} is read, though nothing of it is answered about: {here:?}");
    }
    // no pod of the cluster in full; workloads in full only here and where controllers live
    assert!(!full_lists(&reqs, "pods").contains(&"/api/v1/pods"));
    for p in full_lists(&reqs, "deployments") {
        assert!(
            ["team-a", "kube-system", "sync-system"].iter().any(|ns| p.contains(&format!("/namespaces/{ns}/"))),
            "{p}"
        );
    }
    assert_events_by_uid(&reqs, "--all -n team-a");
}

/// A pod being deleted (`long-grace-period-in-progress`: `data/ingest-0`, in its grace period,
/// no claim being deleted there) is read by name: its answer is in its own body (grace, node),
/// not in its namespace's other pods or claims.
#[test]
fn a_pod_being_deleted_is_read_by_name_not_with_its_namespace() {
    let snapshot = support::root().join("tests/fixtures/long-grace-period-in-progress/snapshot.json");
    let args = ["why-stuck", "--all", "-A"];
    let (o, reqs) = run_live_on(&snapshot, &args);
    assert_eq!(unbound(json(&o)), json(&offline_on(&snapshot, &args)), "live and offline --all -A differ");
    assert!(
        reqs.iter().any(|r| r.path == "/api/v1/namespaces/data/pods/ingest-0" && !r.wants_metadata()),
        "the pod's own body: {reqs:?}"
    );
    for resource in ["pods", "persistentvolumeclaims"] {
        let lists = full_lists(&reqs, resource);
        assert!(!lists.contains(&format!("/api/v1/namespaces/data/{resource}").as_str()), "{lists:?}");
    }
}

/// `claim-in-use`'s namespace `analytics` twenty times over (`analytics`, `analytics-2` …), each
/// with four more claims being deleted that no pod mounts: claims are being deleted in
/// most namespaces, and the answers name more than a few objects in each.
fn claims_in_most_namespaces() -> PathBuf {
    let source = support::root().join("tests/fixtures/claim-in-use/snapshot.json");
    let mut v: Value = serde_json::from_str(&std::fs::read_to_string(source).unwrap()).unwrap();
    let items = v["items"].as_array().unwrap().clone();
    let in_analytics = |o: &Value| {
        o["metadata"]["namespace"] == "analytics" || (o["kind"] == "Namespace" && o["metadata"]["name"] == "analytics")
    };
    let mut out: Vec<Value> = items.clone();
    for copy in 1..=20 {
        let ns = if copy == 1 { "analytics".to_string() } else { format!("analytics-{copy}") };
        let moved = |uid: &Value| Value::String(format!("{}-{copy}", uid.as_str().unwrap()));
        for o in items.iter().filter(|o| copy > 1 && in_analytics(o)) {
            let mut o = o.clone();
            let m = &mut o["metadata"];
            m["uid"] = moved(&m["uid"]);
            if o["kind"] == "Namespace" {
                o["metadata"]["name"] = Value::String(ns.clone());
            } else {
                o["metadata"]["namespace"] = Value::String(ns.clone());
            }
            for r in o["metadata"]["ownerReferences"].as_array_mut().into_iter().flatten() {
                r["uid"] = moved(&r["uid"]);
            }
            out.push(o);
        }
        for k in 0..4 {
            out.push(serde_json::json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                "metadata": {"name": format!("scratch-{k}"), "namespace": ns, "uid": format!("scratch-{copy}-{k}"),
                    "creationTimestamp": "2026-11-01T10:00:00Z", "deletionTimestamp": "2026-11-29T11:30:00Z",
                    "deletionGracePeriodSeconds": 0, "finalizers": ["kubernetes.io/pvc-protection"]},
                "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
                "status": {"phase": "Pending"}}));
        }
        out.push(serde_json::json!({"apiVersion": "v1", "kind": "Event",
            "metadata": {"name": format!("scratch-0.{copy}"), "namespace": ns, "uid": format!("event-{copy}")},
            "involvedObject": {"kind": "PersistentVolumeClaim", "namespace": ns, "name": "scratch-0",
                "uid": format!("scratch-{copy}-0"), "apiVersion": "v1"},
            "reason": "FailedBinding", "message": "no persistent volumes available for this claim and no storage class is set",
            "source": {"component": "persistentvolume-controller"}, "type": "Warning", "count": 3,
            "firstTimestamp": "2026-11-29T10:00:00Z", "lastTimestamp": "2026-11-29T11:00:00Z"}));
    }
    v["items"] = Value::Array(out);
    let path = std::env::temp_dir().join(format!("kubectl-gc-claims-in-most-{}.json", std::process::id()));
    std::fs::write(&path, serde_json::to_vec(&v).unwrap()).unwrap();
    path
}

/// Where claims are being deleted in most namespaces, their pods are one list of every namespace
/// but the others, in full, and their Events one list of every namespace but the others (not a
/// list per namespace), with the same answers as offline.
#[test]
fn most_namespaces_are_read_in_one_list_of_every_namespace_but_the_others() {
    let snapshot = claims_in_most_namespaces();
    let args = ["why-stuck", "--all", "-A"];
    let (o, reqs) = run_live_on(&snapshot, &args);
    let off = offline_on(&snapshot, &args);
    std::fs::remove_file(&snapshot).ok();
    assert!(support::stdout(&o).contains("no persistent volumes available"), "the Event of a claim is in its answer");
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert_eq!(unbound(json(&o)), json(&off), "live and offline --all -A differ");
    let others = ["default", "kube-node-lease", "kube-public", "kube-system"];
    for resource in ["pods", "events"] {
        let everywhere = format!("/api/v1/{resource}");
        let lists: Vec<&Recorded> = reqs.iter().filter(|r| r.path == everywhere && !r.wants_metadata()).collect();
        assert!(lists.len() > 1 && lists.len() <= 16, "{resource}: {lists:?}");
        for r in &lists {
            let s = query(r, "fieldSelector").unwrap_or_default();
            assert!(others.iter().all(|ns| s.contains(&format!("metadata.namespace!={ns}"))), "{resource}: {s}");
        }
        for copy in ["analytics", "analytics-2", "analytics-20"] {
            let there = format!("/api/v1/namespaces/{copy}/{resource}");
            assert!(!reqs.iter().any(|r| r.path == there && query(r, "fieldSelector").is_none()), "{there}");
        }
    }
    // the claims being deleted are not read again by name: their answers read the pods
    assert!(!reqs.iter().any(|r| r.path.contains("/persistentvolumeclaims/")), "a claim by name");
}

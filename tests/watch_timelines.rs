//! Scripted timelines of healthy finishes (issue 42): every one passes through a moment where a
//! cleaner's condition already holds but the cleaner has not acted yet (the GC removes
//! `foregroundDeletion` a moment after the last dependent goes; pvc-protection removes its
//! finalizer a moment after the last pod). A single answer taken in that moment cannot tell when
//! the condition began and says Stuck (checked here too, so that each timeline is a real test of
//! the watch); the watch saw it begin and gives the cleaner its time: InProgress, then gone,
//! exit 0 even under `--until=stuck`, never a Stuck in between.

use std::path::Path;
use std::time::Duration;

use serde_json::Value;

use crate::support::apiserver::watch::{Action, Scripted};
use crate::support::apiserver::{ApiServer, Options};
use crate::support::{Env, NOW, run, stderr, stdout};

use super::watch::{SITE, changes, lines, snapshot, step, watch_within};

/// A fixture's snapshot, changed by `edit` (each item), written to `dir`.
fn edited(fixture: &str, dir: &Path, edit: impl Fn(&mut Value) -> bool) -> std::path::PathBuf {
    let mut v: Value = serde_json::from_str(&std::fs::read_to_string(snapshot(fixture)).unwrap()).unwrap();
    v["items"].as_array_mut().unwrap().retain_mut(|o| edit(o));
    let file = dir.join(format!("{fixture}.json"));
    std::fs::write(&file, v.to_string()).unwrap();
    file
}

fn serve(file: &Path, script: Vec<Scripted>) -> ApiServer {
    ApiServer::start_with(file, Options { script, bookmark_every: Duration::from_millis(200), ..Options::default() }, 0)
}

/// The single answer about `args` against `file`: its exit code and JSON.
fn single(file: &Path, args: &[&str]) -> (Option<i32>, Value) {
    let srv = serve(file, Vec::new());
    let env = Env::new(&srv.url(), None);
    let mut c = env.gc();
    c.args(["--now", NOW, "--request-timeout", "5s"]).args(args).args(["-o", "json"]);
    let out = run(c, Duration::from_secs(30));
    let v = serde_json::from_str(&stdout(&out)).unwrap_or_else(|e| panic!("{e}: {}", stderr(&out)));
    (out.status.code(), v)
}

fn codes(answer: &Value) -> Vec<String> {
    answer["findings"].as_array().unwrap().iter().map(|f| f["code"].as_str().unwrap().to_string()).collect()
}

/// The Site deleted three minutes before NOW (past the GC's minute, well within its ten
/// minutes to mark dependents), in the foreground and with its operator's finalizer.
fn site_deleted(o: &mut Value, finalizers: &[&str]) {
    o["metadata"]["deletionTimestamp"] = "2026-11-29T11:57:00Z".into();
    o["metadata"]["finalizers"] = finalizers.iter().map(|f| Value::from(*f)).collect();
}

fn is(o: &Value, kind: &str, name: &str) -> bool {
    o["kind"] == kind && o["metadata"]["name"] == name
}

const DEPENDENTS: [(&str, &str); 4] = [
    ("ConfigMap", "alpha-config"),
    ("ConfigMap", "alpha-scripts"),
    ("Service", "alpha"),
    ("Secret", "alpha-credentials"),
];

#[test]
fn a_foreground_owner_whose_dependents_go_one_by_one_is_in_progress_then_gone_never_stuck() {
    let dir = tempfile::tempdir().unwrap();
    let both = ["foregroundDeletion", "own.labhub.io/cleanup"];
    let start = edited(SITE, dir.path(), |o| {
        if is(o, "Site", "alpha") {
            site_deleted(o, &both);
        }
        true
    });
    // the moment after the last dependent went, before the GC acted: alone, it reads stuck
    let moment = dir.path().join("moment");
    std::fs::create_dir(&moment).unwrap();
    let moment = edited(SITE, &moment, |o| {
        if is(o, "Site", "alpha") {
            site_deleted(o, &both);
        }
        !DEPENDENTS.iter().any(|(k, n)| is(o, k, n))
    });
    let (code, answer) = single(&moment, &["why-stuck", "site/alpha", "-n", "labs"]);
    assert_eq!(code, Some(2), "{answer}");
    assert!(codes(&answer).contains(&"GarbageCollectorStalled".to_string()), "{answer}");

    let v: Value = serde_json::from_str(&std::fs::read_to_string(&start).unwrap()).unwrap();
    let item =
        |kind: &str, name: &str| v["items"].as_array().unwrap().iter().find(|o| is(o, kind, name)).cloned().unwrap();
    let mut script: Vec<Scripted> = DEPENDENTS.iter().map(|(k, n)| step(400, Action::remove(&item(k, n)))).collect();
    // the GC a moment later, then the operator
    let mut site = item("Site", "alpha");
    site["metadata"]["finalizers"] = serde_json::json!(["own.labhub.io/cleanup"]);
    script.push(step(1500, Action::Put(site.clone())));
    script.push(step(400, Action::remove(&site)));
    let srv = serve(&start, script);
    let args = ["why-stuck", "site/alpha", "-n", "labs", "--watch", "--until=stuck", "-o", "json"];
    let (code, out, err, _) = watch_within(&srv, &args, Duration::from_secs(40));
    assert_eq!(code, Some(0), "{err}\n{out}");
    let lines = lines(&out);
    assert_eq!(lines[0]["verdict"], "InProgress", "{out}");
    assert!(lines.iter().all(|l| l["verdict"] != "Stuck"), "{out}");
    assert_eq!(lines.last().unwrap()["verdict"], "Gone");
    let told = changes(&lines);
    for (kind, name) in DEPENDENTS {
        assert!(told.contains(&("Deleted".into(), format!("{kind} labs/{name}"))), "{told:?}");
    }
}

#[test]
fn a_claim_whose_last_pod_goes_is_in_progress_then_gone_never_stuck() {
    const CLAIM: &str = "claim-in-use";
    let dir = tempfile::tempdir().unwrap();
    // the StatefulSet scaled to zero, its pod in its grace period
    let scaled = |o: &mut Value| {
        if is(o, "StatefulSet", "warehouse") {
            o["spec"]["replicas"] = 0.into();
            o["status"] = serde_json::json!({"replicas": 1, "readyReplicas": 0, "currentReplicas": 1});
        }
        if is(o, "Pod", "warehouse-0") {
            o["metadata"]["deletionTimestamp"] = "2026-11-29T12:00:20Z".into();
            o["metadata"]["deletionGracePeriodSeconds"] = 30.into();
        }
        true
    };
    let start = edited(CLAIM, dir.path(), scaled);
    let moment = dir.path().join("moment");
    std::fs::create_dir(&moment).unwrap();
    let moment = edited(CLAIM, &moment, |o| scaled(o) && !is(o, "Pod", "warehouse-0"));
    let args = ["why-stuck", "pvc/data-warehouse-0", "-n", "analytics"];
    let (code, answer) = single(&moment, &args);
    assert_eq!(code, Some(2), "{answer}");
    assert!(codes(&answer).contains(&"ControllerStalled".to_string()), "{answer}");

    let v: Value = serde_json::from_str(&std::fs::read_to_string(&start).unwrap()).unwrap();
    let item =
        |kind: &str, name: &str| v["items"].as_array().unwrap().iter().find(|o| is(o, kind, name)).cloned().unwrap();
    let script = vec![
        step(400, Action::remove(&item("Pod", "warehouse-0"))),
        // pvc-protection a moment later: the claim goes
        step(1500, Action::remove(&item("PersistentVolumeClaim", "data-warehouse-0"))),
    ];
    let srv = serve(&start, script);
    let watched = [&args[..], &["--watch", "--until=stuck", "-o", "json"]].concat();
    let (code, out, err, _) = watch_within(&srv, &watched, Duration::from_secs(40));
    assert_eq!(code, Some(0), "{err}\n{out}");
    let lines = lines(&out);
    assert_eq!(lines[0]["verdict"], "InProgress", "{out}");
    assert!(lines.iter().all(|l| l["verdict"] != "Stuck"), "{out}");
    assert_eq!(lines.last().unwrap()["verdict"], "Gone");
}

/// The operator scaled back up (its Deployment, ReplicaSet and pod back, its lease renewed) two
/// hours after the delete, past `--stuck-after`: alone, that moment reads stuck (the finalizer
/// has outstayed `--stuck-after` with its controller alive); the watch saw the controller come
/// back, a sign of progress, and counts `--stuck-after` from then: Stuck turns InProgress.
#[test]
fn an_operator_scaled_back_up_turns_stuck_into_in_progress() {
    const GONE: &str = "site-operator-gone";
    let back: Vec<Value> = [
        ("Deployment", "site-operator"),
        ("ReplicaSet", "site-operator-7d4b9c"),
        ("Pod", "site-operator-7d4b9c-x0"),
        ("Lease", "f1c2e3d4.own.labhub.io"),
    ]
    .iter()
    .map(|(k, n)| super::watch::object(SITE, k, n))
    .collect();
    let dir = tempfile::tempdir().unwrap();
    let start = edited(GONE, dir.path(), |_| true);
    // the moment it is back, alone
    let mut v: Value = serde_json::from_str(&std::fs::read_to_string(&start).unwrap()).unwrap();
    let items = v["items"].as_array_mut().unwrap();
    items.retain(|o| !back.iter().any(|b| is(o, b["kind"].as_str().unwrap(), b["metadata"]["name"].as_str().unwrap())));
    items.extend(back.iter().cloned());
    let moment = dir.path().join("moment.json");
    std::fs::write(&moment, v.to_string()).unwrap();
    let args = ["why-stuck", "site/alpha", "-n", "labs"];
    let (code, answer) = single(&moment, &args);
    assert_eq!(code, Some(2), "{answer}");
    assert!(codes(&answer).contains(&"FinalizerNotProgressing".to_string()), "{answer}");

    let script = back.iter().map(|o| step(300, Action::Put(o.clone()))).collect();
    let srv = serve(&start, script);
    let watched = [&args[..], &["--watch", "-o", "json", "--timeout", "4s"]].concat();
    let (code, out, err, _) = watch_within(&srv, &watched, Duration::from_secs(40));
    let lines = lines(&out);
    assert_eq!(lines[0]["verdict"], "Stuck", "{out}");
    let told = changes(&lines);
    assert!(told.iter().any(|(t, _)| t == "ControllerBack"), "{told:?}");
    assert_eq!(lines.last().unwrap()["verdict"], "InProgress", "{err}\n{out}");
    // undecided at the timeout: 3
    assert_eq!(code, Some(3), "{err}\n{out}");
}

/// A fixture's node heartbeat renewed at `renewed`.
fn heartbeat(fixture: &str, node: &str, renewed: &str) -> Action {
    let mut lease = super::watch::object(fixture, "Lease", node);
    lease["spec"]["renewTime"] = renewed.into();
    Action::Put(lease)
}

/// Issue 42: the watch follows the heartbeats of the nodes its answer judges, by name, and no
/// other: the other nodes' renewals never reach it, and the judged node's kubelet going quiet
/// changes the answer (its pod's node is then lost, not its kubelet stuck).
#[test]
fn a_watch_follows_the_heartbeats_of_the_nodes_it_judges_and_no_other() {
    const F: &str = "pod-past-grace-on-live-node";
    let mut script = Vec::new();
    for second in 0..6 {
        let at = format!("2026-11-29T12:00:0{second}.5Z");
        for node in ["cp-1", "worker-1"] {
            script.push(step(100, heartbeat(F, node, &at)));
        }
    }
    // worker-2's kubelet stops: its last renewal ten minutes ago, past its 40 s duration
    script.push(step(300, heartbeat(F, "worker-2", "2026-11-29T11:50:00Z")));
    let srv = serve(&super::watch::snapshot(F), script);
    let args = ["why-stuck", "pod/report-renderer-vvtlvf2sg-prq2l", "-n", "reports", "--watch", "-o", "json"];
    let (code, out, err, _) = watch_within(&srv, &[&args[..], &["--timeout", "4s"]].concat(), Duration::from_secs(40));
    let lease_watches: Vec<String> = srv
        .watches()
        .into_iter()
        .filter(|r| r.path.ends_with("/leases"))
        .map(|r| format!("{} {}", r.path, r.query))
        .collect();
    assert!(!lease_watches.is_empty());
    for w in &lease_watches {
        let everywhere_but = w.starts_with("/apis/coordination.k8s.io/v1/leases ")
            && w.contains("fieldSelector=metadata.namespace%21%3Dkube-node-lease");
        let by_name = w.starts_with("/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases ")
            && w.contains("fieldSelector=metadata.name%3Dworker-2");
        assert!(everywhere_but || by_name, "a watch of heartbeats the answer does not judge: {w}\n{lease_watches:#?}");
    }
    assert!(lease_watches.iter().any(|w| w.contains("metadata.name%3Dworker-2")), "{lease_watches:#?}");
    let lines = lines(&out);
    assert!(codes(&lines[0]["answer"]).contains(&"PodTerminationStalled".to_string()), "{out}");
    let last = &lines.last().unwrap()["answer"];
    assert!(codes(last).contains(&"PodOnUnavailableNode".to_string()), "{err}\n{out}");
    assert!(!codes(last).contains(&"PodTerminationStalled".to_string()), "{out}");
    assert_eq!(code, Some(2), "stuck at the timeout: {err}");
}

/// Issue 42: Nodes are followed quietly (a kubelet's status report alone judges nothing
/// again), but the Node whose kubelet the answer judges is followed by name: its going NotReady
/// is told at once, and under `--now` (no clock to judge again) only that can tell it.
#[test]
fn the_node_a_pod_waits_on_going_not_ready_is_told_though_nodes_are_followed_quietly() {
    const F: &str = "pod-past-grace-on-live-node";
    let report = |name: &str, ready: &str| {
        let mut node = super::watch::object(F, "Node", name);
        node["status"]["conditions"] = serde_json::json!([{"type": "Ready", "status": ready, "reason": "NodeStatusUnknown",
                                "message": "Kubelet stopped posting node status."}]);
        Action::Put(node)
    };
    // another node's report, then worker-2's kubelet stops (its heartbeat left as it was)
    let script = vec![step(300, report("worker-1", "True")), step(300, report("worker-2", "Unknown"))];
    let srv = serve(&super::watch::snapshot(F), script);
    let args = ["why-stuck", "pod/report-renderer-vvtlvf2sg-prq2l", "-n", "reports", "--watch", "-o", "json"];
    let (code, out, err, _) = watch_within(&srv, &[&args[..], &["--timeout", "4s"]].concat(), Duration::from_secs(40));
    let lines = lines(&out);
    assert!(codes(&lines[0]["answer"]).contains(&"PodTerminationStalled".to_string()), "{out}");
    let last = &lines.last().unwrap()["answer"];
    assert!(codes(last).contains(&"PodOnUnavailableNode".to_string()), "{err}\n{out}");
    assert!(last.to_string().contains("NotReady"), "{last}");
    assert_eq!(code, Some(2), "stuck at the timeout: {err}");
    let node_watches: Vec<String> =
        srv.watches().into_iter().filter(|r| r.path.ends_with("/nodes")).map(|r| r.query).collect();
    assert!(node_watches.iter().any(|q| q.contains("metadata.name%3Dworker-2")), "{node_watches:?}");
}

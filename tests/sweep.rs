//! `why-stuck --all` through the binary: text, exit codes, arguments, and live against the test
//! API server (partial RBAC, requests against `tree -A`). Grouping itself is tested beside
//! the code (src/sweep/tests.rs) and by the stuck-everywhere fixture.

use std::process::Output;

use serde_json::Value;

use crate::support::apiserver::{ApiServer, Fault, FaultKind, Options};
use crate::support::{self, DEADLINE, Env, NOW, assert_read_only, run, stderr, stdout};

fn snapshot() -> std::path::PathBuf {
    support::root().join("tests/fixtures/stuck-everywhere/snapshot.json")
}

fn offline(args: &[&str]) -> Output {
    let env = Env::new("http://127.0.0.1:9", None);
    let mut c = env.command(support::bin());
    c.args(args).args(["--now", NOW, "--snapshot"]).arg(snapshot());
    run(c, DEADLINE)
}

fn json(o: &Output) -> Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {}\nstderr: {}", stdout(o), stderr(o)))
}

#[test]
fn text_has_the_summary_first_then_each_groups_steps_once_then_its_objects() {
    let o = offline(&["why-stuck", "--all", "-A"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let text = stdout(&o);
    let at = |needle: &str| text.find(needle).unwrap_or_else(|| panic!("no {needle:?} in:\n{text}"));
    assert!(text.starts_with("STUCK 4 object(s)"), "{text}");
    // the table: a header, then one row per group
    let header = at("CAUSE");
    for col in ["VERDICT", "OBJECTS", "NAMESPACES", "OLDEST"] {
        assert!(at(col) > header && at(col) < at("\n== Stuck"), "{col} is not in the summary");
    }
    let row = text.lines().find(|l| l.contains("FinalizerControllerMissing (")).unwrap();
    assert!(
        row.contains("stuck") && row.contains(" 3 ") && row.contains("team-a,team-b") && row.contains("3h"),
        "{row}"
    );
    // the group: the patch heading once, with the three Sites' commands under it
    let heading = "remove the finalizer. (3 commands)";
    assert_eq!(text.matches(heading).count(), 1, "{text}");
    assert_eq!(text.matches("kubectl patch sites.web.example.com").count(), 3, "{text}");
    assert!(at("Next steps for the group") < at(heading) && at(heading) < at("Site team-a/blog  terminating"));
    // in progress last, apart
    assert!(at("== In progress") > at("Site team-b/docs  terminating"));
    assert!(at("ConfigMap team-a/feature-flags  terminating 5s") > at("== In progress"));
}

#[test]
fn exit_codes_follow_the_verdicts() {
    // only the in-progress ConfigMap and the Sites in team-a: stuck
    assert_eq!(offline(&["why-stuck", "--all", "-n", "team-a", "-o", "json"]).status.code(), Some(2));
    // nothing being deleted
    let o = offline(&["why-stuck", "--all", "-n", "sync-system"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stdout(&o).starts_with("NOTHING TERMINATING"), "{}", stdout(&o));
    let v = json(&offline(&["why-stuck", "--all", "-n", "sync-system", "-o", "json"]));
    assert_eq!(v["groups"], Value::Array(vec![]));
    assert_eq!(v["answers"], Value::Array(vec![]));
}

#[test]
fn stuck_only_leaves_in_progress_out() {
    let v = json(&offline(&["why-stuck", "--all", "-n", "team-a", "--stuck-only", "-o", "json"]));
    let objects: Vec<&str> =
        v["answers"].as_array().unwrap().iter().map(|a| a["object"]["name"].as_str().unwrap()).collect();
    assert_eq!(objects, ["blog", "shop"]);
    let o = offline(&["why-stuck", "--all", "-n", "team-a", "--stuck-only"]);
    assert!(stdout(&o).contains("1 in progress not shown (--stuck-only)"), "{}", stdout(&o));
}

#[test]
fn namespace_and_cluster_scopes() {
    let names = |v: &Value| -> Vec<String> {
        v["answers"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a["object"]["namespace"].as_str().unwrap().to_string())
            .collect()
    };
    let all = json(&offline(&["why-stuck", "--all", "-A", "-o", "json"]));
    let b = json(&offline(&["why-stuck", "--all", "-n", "team-b", "-o", "json"]));
    assert_eq!(names(&all), ["team-a", "team-a", "team-b", "team-c", "team-a"]);
    assert_eq!(names(&b), ["team-b"]);
    // the group in one namespace holds only that namespace's objects, and its answer is the same
    assert_eq!(b["groups"][0]["cause"]["code"], "FinalizerControllerMissing");
    assert_eq!(b["groups"][0]["objects"].as_array().unwrap().len(), 1);
    assert_eq!(b["answers"][0], all["answers"][2]);
    assert_eq!(all["groups"][0]["oldestDeletingForSeconds"], 10800);
}

#[test]
fn all_does_not_take_an_object() {
    for args in [&["why-stuck", "--all", "site/blog", "-n", "team-a"][..], &["why-stuck", "--stuck-only", "site/blog"]]
    {
        let o = offline(args);
        assert_eq!(o.status.code(), Some(1), "{args:?}");
        assert!(stderr(&o).contains("cannot be used with") || stderr(&o).contains("required"), "{}", stderr(&o));
    }
}

fn live(env: &Env, args: &[&str]) -> Output {
    let mut c = env.gc();
    c.args(args).args(["--now", NOW, "--request-timeout", "5s"]);
    run(c, DEADLINE)
}

/// Pods unreadable: the answer still comes, names the gap, and no longer claims the operator
/// of the Sites is missing (the pods it could run in were not visible).
#[test]
fn partial_rbac_is_named_in_incomplete_and_lowers_certainty() {
    let server = ApiServer::start_with(
        &snapshot(),
        Options { faults: vec![Fault::resource("pods", FaultKind::Status(403))], ..Options::default() },
        0,
    );
    let env = Env::new(&server.url(), None);
    let o = live(&env, &["why-stuck", "--all", "-A", "-o", "json"]);
    let v = json(&o);
    // the exit code is the worst verdict's: 2 when anything is stuck, else 3 when anything
    // could not be judged
    let verdicts: Vec<&str> = v["answers"].as_array().unwrap().iter().filter_map(|a| a["verdict"].as_str()).collect();
    let want = if verdicts.contains(&"Stuck") { 2 } else { 3 };
    assert!(verdicts.contains(&"Unknown") || want == 2, "{verdicts:?}");
    assert_eq!(o.status.code(), Some(want), "{verdicts:?}: {}", stderr(&o));
    let inc: Vec<&str> = v["incomplete"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
    assert!(inc.iter().any(|i| i.contains("pods")), "{inc:?}");
    assert!(stderr(&o).contains("warning: incomplete:"), "{}", stderr(&o));
    let top = v["incomplete"].as_array().unwrap();
    for a in v["answers"].as_array().unwrap() {
        let own = a["incomplete"].as_array().unwrap();
        assert!(own.iter().any(|i| i.as_str().is_some_and(|i| i.contains("pods"))), "each answer carries the gap: {a}");
        assert!(own.iter().all(|i| top.contains(i)), "what an answer could not see is named at the top too: {a}");
    }
    let codes: Vec<&str> =
        v["groups"].as_array().unwrap().iter().map(|g| g["cause"]["code"].as_str().unwrap()).collect();
    assert!(!codes.contains(&"FinalizerControllerMissing"), "Missing claimed without seeing pods: {codes:?}");
    assert_read_only(&server);
}

/// `--all -A` costs no more requests than `tree -A` (each from a cold discovery cache).
#[test]
fn all_namespaces_costs_no_more_requests_than_tree_all_namespaces() {
    let server = ApiServer::start(&snapshot());
    let count = |args: &[&str]| {
        let env = Env::new(&server.url(), None);
        server.clear_requests();
        let o = live(&env, args);
        assert!(matches!(o.status.code(), Some(0 | 2)), "{args:?}: {}", stderr(&o));
        server.requests().len()
    };
    let tree = count(&["tree", "deploy/uploader", "-n", "team-c", "-A", "-o", "json"]);
    let all = count(&["why-stuck", "--all", "-A", "-o", "json"]);
    eprintln!("requests: why-stuck --all -A {all}, tree -A {tree}");
    assert!(all <= tree, "why-stuck --all -A made {all} requests, tree -A {tree}");
    assert!(all > 10, "{all} requests cannot have read the cluster");
    assert_read_only(&server);
}

/// The objects being deleted in `ns` and how many of them are stuck, as `--all -n NS` judges them.
fn judged_by_all(ns: &str) -> (usize, usize) {
    let v = json(&offline(&["why-stuck", "--all", "-n", ns, "-o", "json"]));
    let answers = v["answers"].as_array().unwrap();
    (answers.len(), answers.iter().filter(|a| a["verdict"] == "Stuck").count())
}

/// A namespace that is not being deleted but holds stuck deletions: the answer points to
/// `--all -n NS`, with the counts `--all` finds; one that holds none says nothing more.
#[test]
fn a_namespace_not_being_deleted_points_to_all_when_it_holds_deletions() {
    let (deleting, stuck) = judged_by_all("team-a");
    assert_eq!((deleting, stuck), (3, 2), "the fixture changed");
    let o = offline(&["why-stuck", "ns/team-a"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(text.starts_with("NOT DELETING Namespace team-a"), "{text}");
    assert!(text.contains(&format!("{deleting} objects in it are being deleted, {stuck} of them stuck")), "{text}");
    assert!(text.contains("kubectl gc why-stuck --all -n team-a"), "{text}");
    let v = json(&offline(&["why-stuck", "ns/team-a", "-o", "json"]));
    assert_eq!(v["verdict"], "NotDeleting");
    let commands: Vec<&str> = v["steps"].as_array().unwrap().iter().filter_map(|s| s["command"].as_str()).collect();
    assert!(commands.iter().any(|c| c.starts_with("kubectl gc why-stuck --all -n team-a")), "{commands:?}");
    // nothing being deleted there: no pointer
    assert_eq!(judged_by_all("sync-system").0, 0);
    let quiet = stdout(&offline(&["why-stuck", "ns/sync-system"]));
    assert!(!quiet.contains("--all"), "{quiet}");
    let v = json(&offline(&["why-stuck", "ns/sync-system", "-o", "json"]));
    assert_eq!(v["steps"], Value::Array(vec![]), "{v}");
}

/// Live, the answer about the namespace reads what the counts need, and its command names the
/// cluster it was read from after the plugin's name (kubectl takes no flag before a plugin).
#[test]
fn the_pointer_live_counts_the_same_and_names_the_cluster() {
    let server = ApiServer::start(&snapshot());
    let env = Env::new(&server.url(), None);
    let o = live(&env, &["why-stuck", "ns/team-a"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(text.contains("3 objects in it are being deleted, 2 of them stuck"), "{text}");
    let line = text.lines().find(|l| l.trim_start().starts_with("kubectl gc")).unwrap_or_else(|| panic!("{text}"));
    assert!(line.trim_start().starts_with("kubectl gc why-stuck --"), "{line}");
    assert!(line.contains(" --all -n team-a"), "{line}");
    assert!(line.contains("--context=") || line.contains("--server="), "{line}");
    assert_read_only(&server);
}

/// A namespace's user: every list of a cluster-scoped type refused, their own namespace
/// readable by name (RBAC authorizes a GET of a namespace as a request in it), and `more`.
fn tenant(fixture: &str, more: Vec<Fault>) -> ApiServer {
    let snapshot = support::root().join("tests/fixtures").join(fixture).join("snapshot.json");
    let lists = ["/api/v1/namespaces", "/api/v1/nodes", "/api/v1/persistentvolumes"];
    let mut faults: Vec<Fault> = lists.into_iter().map(|p| Fault::path(p, FaultKind::Status(403))).collect();
    let cluster_scoped =
        ["customresourcedefinitions", "clusterroles", "clusterrolebindings", "validatingwebhookconfigurations"];
    faults.extend(cluster_scoped.into_iter().map(|r| Fault::resource(r, FaultKind::Status(403))));
    faults.extend(more);
    ApiServer::start_with(&snapshot, Options { faults, ..Options::default() }, 0)
}

/// Under a namespace's RBAC: its own namespace being deleted is still seen (read by name once
/// the list of namespaces is refused); the refused cluster-scoped lists do not make "nothing is
/// being deleted here" uncertain, but a refused list of a type in the namespace does (exit 3:
/// what could not be listed may be being deleted), and the first line says so.
#[test]
fn a_namespace_user_sees_their_namespace_being_deleted_and_is_never_told_nothing_when_blind() {
    let server = tenant("namespace-terminating", Vec::new());
    let env = Env::new(&server.url(), None);
    let o = live(&env, &["why-stuck", "--all", "-n", "labs", "-o", "json"]);
    let v = json(&o);
    let objects: Vec<String> = v["answers"].as_array().unwrap().iter().map(|a| a["object"].to_string()).collect();
    assert!(
        objects.iter().any(|o| o.contains(r#""kind":"Namespace""#) && o.contains(r#""name":"labs""#)),
        "{objects:?}"
    );
    let by_name = server.requests().iter().filter(|r| r.method == "GET" && r.path == "/api/v1/namespaces/labs").count();
    assert_eq!(by_name, 1, "the namespace is read by name once");
    // nothing else hides a deletion here: the verdict is the answers' (the Site's controller
    // cannot be judged without RBAC objects: 3)
    let verdicts: Vec<&str> = v["answers"].as_array().unwrap().iter().filter_map(|a| a["verdict"].as_str()).collect();
    assert_eq!(o.status.code(), Some(if verdicts.contains(&"Stuck") { 2 } else { 3 }), "{verdicts:?}");
    assert_read_only(&server);

    let quiet = tenant("stuck-everywhere", Vec::new());
    let o = live(&Env::new(&quiet.url(), None), &["why-stuck", "--all", "-n", "sync-system"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stdout(&o).starts_with("NOTHING TERMINATING"), "{}", stdout(&o));

    let blind = tenant("stuck-everywhere", vec![Fault::resource("secrets", FaultKind::Status(403))]);
    let env = Env::new(&blind.url(), None);
    let o = live(&env, &["why-stuck", "--all", "-n", "sync-system"]);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    let first = stdout(&o).lines().next().unwrap_or_default().to_string();
    assert!(first.starts_with("UNKNOWN no object in scope was seen being deleted, but 1 read"), "{first}");
    assert!(stdout(&o).contains("secrets in namespace \"sync-system\" could not be listed"), "{}", stdout(&o));
    assert_read_only(&blind);
}

/// With `-A`, a namespace's user sees nothing cluster-wide: Unknown (exit 3), and the answer
/// says what would settle it (`-n`, which reads the namespace by name).
#[test]
fn a_namespace_user_asking_for_every_namespace_is_told_to_ask_for_one() {
    let server = tenant("namespace-terminating", Vec::new());
    let env = Env::new(&server.url(), None);
    let o = live(&env, &["why-stuck", "--all", "-A"]);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("gets its answer for one with `kubectl gc why-stuck --all -n <namespace>`"),
        "{}",
        stdout(&o)
    );
    // with -n, nothing to settle: no such line
    let o = live(&env, &["why-stuck", "--all", "-n", "labs"]);
    assert!(!stdout(&o).contains("--all -n <namespace>"), "{}", stdout(&o));
    assert_read_only(&server);
}

/// Offline the same: a file whose capture could not list a type in the namespace answers
/// what it shows, but never "nothing stuck" alone (exit 3, and the first line says why).
#[test]
fn a_capture_with_a_failed_list_in_scope_is_unknown_offline_too() {
    let mut v: Value = serde_json::from_str(&std::fs::read_to_string(snapshot()).unwrap()).unwrap();
    v["items"].as_array_mut().unwrap().retain(|o| o["kind"] != "Site" && o["kind"] != "PersistentVolumeClaim");
    let gap = serde_json::json!({"what": {"read": "list", "group": "", "version": "v1", "resource": "secrets", "namespace": "team-a"},
        "why": "forbidden (403)", "line": "secrets in namespace \"team-a\" could not be listed: forbidden (403)"});
    let dir = tempfile::tempdir().unwrap();
    let run_on = |incomplete: Value, args: &[&str]| {
        let mut capture = v.clone();
        capture["incomplete"] = incomplete;
        let file = dir.path().join("capture.json");
        std::fs::write(&file, serde_json::to_vec(&capture).unwrap()).unwrap();
        let env = Env::new("http://127.0.0.1:9", None);
        let mut c = env.command(support::bin());
        c.args(args).args(["--now", NOW, "--snapshot"]).arg(&file);
        run(c, DEADLINE)
    };
    let all = ["why-stuck", "--all", "-n", "team-a"];
    let o = run_on(Value::Array(vec![]), &all);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stdout(&o).starts_with("NOTHING STUCK"), "{}", stdout(&o));
    let o = run_on(Value::Array(vec![gap.clone()]), &all);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    assert!(stdout(&o).starts_with("UNKNOWN no deletion seen in scope is stuck, but 1 read"), "{}", stdout(&o));
    let o = run_on(Value::Array(vec![gap.clone()]), &["why-stuck", "--all", "-n", "team-a", "-o", "json"]);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    assert!(json(&o)["incomplete"].to_string().contains("secrets in namespace"), "{}", stdout(&o));
    // another namespace's gap hides nothing here
    let mut elsewhere = gap;
    elsewhere["what"]["namespace"] = "team-b".into();
    assert_eq!(run_on(Value::Array(vec![elsewhere]), &all).status.code(), Some(0));
}

/// `-n` of a namespace that was not read (a typo, live) says so beside "nothing"; one that
/// was read and holds no deletion says nothing more.
#[test]
fn a_namespace_not_read_is_named_beside_nothing_terminating() {
    let o = offline(&["why-stuck", "--all", "-n", "team-x"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let first = stdout(&o).lines().next().unwrap_or_default().to_string();
    assert!(first.starts_with("NOTHING TERMINATING") && first.contains("no namespace \"team-x\" was read"), "{first}");
    let o = offline(&["why-stuck", "--all", "-n", "sync-system"]);
    assert_eq!(stdout(&o).trim_end(), "NOTHING TERMINATING nothing in scope is being deleted.");
}

//! `--watch` (contract §4.5) against the test API server's WATCH: scripted changes over time
//! (from the first WATCH request on) and faults on the streams, followed to the end.

use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::apiserver::watch::{Action, Scripted};
use crate::support::apiserver::{ApiServer, Fault, FaultKind, Options};
use crate::support::{Env, NOW, assert_read_only, root, run, stderr, stdout};

pub(super) const SITE: &str = "site-basics";
const DEPENDENTS: [(&str, &str); 4] = [
    ("ConfigMap", "alpha-config"),
    ("ConfigMap", "alpha-scripts"),
    ("Service", "alpha"),
    ("Secret", "alpha-credentials"),
];

pub(super) fn snapshot(fixture: &str) -> std::path::PathBuf {
    root().join("tests/fixtures").join(fixture).join("snapshot.json")
}

/// An object of a fixture, by kind and name.
pub(super) fn object(fixture: &str, kind: &str, name: &str) -> Value {
    let v: Value = serde_json::from_str(&std::fs::read_to_string(snapshot(fixture)).unwrap()).unwrap();
    let items = v["items"].as_array().cloned().unwrap_or_default();
    items
        .into_iter()
        .find(|o| o["kind"] == kind && o["metadata"]["name"] == name)
        .unwrap_or_else(|| panic!("{kind}/{name} is not in {fixture}"))
}

/// The Site being deleted (a minute before NOW) with these finalizers.
pub(super) fn deleting_site(finalizers: &[&str]) -> Value {
    let mut site = object(SITE, "Site", "alpha");
    site["metadata"]["deletionTimestamp"] = "2026-11-29T11:59:00Z".into();
    site["metadata"]["finalizers"] = finalizers.iter().map(|f| Value::from(*f)).collect();
    site
}

pub(super) fn step(after_ms: u64, action: Action) -> Scripted {
    Scripted { after: Duration::from_millis(after_ms), action }
}

/// A foreground deletion to its end: the Site marked, each dependent removed, the GC's
/// finalizer removed, the operator's, then the Site — `between` each step, `extra` after the
/// marking.
pub(super) fn foreground_deletion(extra: Vec<Scripted>) -> Vec<Scripted> {
    let mut s = vec![step(400, Action::Put(deleting_site(&["foregroundDeletion", "own.labhub.io/cleanup"])))];
    s.extend(extra);
    for (kind, name) in DEPENDENTS {
        s.push(step(300, Action::remove(&object(SITE, kind, name))));
    }
    s.push(step(300, Action::Put(deleting_site(&["own.labhub.io/cleanup"]))));
    s.push(step(300, Action::remove(&deleting_site(&[]))));
    s
}

pub(super) fn server(fixture: &str, script: Vec<Scripted>, faults: Vec<Fault>) -> ApiServer {
    let options = Options { script, faults, bookmark_every: Duration::from_millis(200), ..Options::default() };
    ApiServer::start_with(&snapshot(fixture), options, 0)
}

pub(super) fn watch(server: &ApiServer, args: &[&str]) -> (Option<i32>, String, String, Duration) {
    watch_within(server, args, Duration::from_secs(30))
}

/// [`watch`], killed (and the test failed) past `deadline`.
pub(super) fn watch_within(
    server: &ApiServer,
    args: &[&str],
    deadline: Duration,
) -> (Option<i32>, String, String, Duration) {
    let env = Env::new(&server.url(), None);
    let mut c = env.gc();
    c.args(["--now", NOW, "--request-timeout", "5s"]).args(args);
    let t = Instant::now();
    let out = run(c, deadline);
    (out.status.code(), stdout(&out), stderr(&out), t.elapsed())
}

/// The JSON lines of a watch, each parsed (a line that does not parse fails the test).
pub(super) fn lines(out: &str) -> Vec<Value> {
    out.lines().map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not a JSON line ({e}): {l}"))).collect()
}

/// Every change of a watch's JSON lines: (type, object).
pub(super) fn changes(lines: &[Value]) -> Vec<(String, String)> {
    lines
        .iter()
        .flat_map(|l| l["change"].as_array().cloned().unwrap_or_default())
        .map(|c| (c["type"].as_str().unwrap().to_string(), c["object"].as_str().unwrap_or("").to_string()))
        .collect()
}

fn deleted_once(changes: &[(String, String)], object: &str) {
    let n = changes.iter().filter(|(t, o)| t == "Deleted" && o == object).count();
    assert_eq!(n, 1, "{object} reported Deleted {n} times: {changes:?}");
}

/// After the first watch, only what the answer had not read yet is read (a new dependent's
/// Events), never a list or GET made before.
fn assert_nothing_read_again(server: &ApiServer) {
    let log = server.requests();
    let first_watch = log.iter().position(|r| r.is_watch()).expect("a watch");
    let before: std::collections::HashSet<(&str, &str)> =
        log[..first_watch].iter().map(|r| (r.path.as_str(), r.query.as_str())).collect();
    for r in log[first_watch..].iter().filter(|r| !r.is_watch()) {
        assert!(!before.contains(&(r.path.as_str(), r.query.as_str())), "read again: {r:?}");
    }
}

pub(super) fn assert_all_deleted_once(changes: &[(String, String)]) {
    for (kind, name) in DEPENDENTS {
        deleted_once(changes, &format!("{kind} labs/{name}"));
    }
    deleted_once(changes, "Site labs/alpha");
}

#[test]
fn a_foreground_deletion_is_followed_to_the_end_each_dependent_gone_once_in_json_lines() {
    let server = server(SITE, foreground_deletion(Vec::new()), Vec::new());
    let (code, out, err, _) = watch(&server, &["why-stuck", "site/alpha", "-n", "labs", "--watch", "-o", "json"]);
    assert_eq!(code, Some(0), "{err}\n{out}");
    let lines = lines(&out);
    // the first answer: not being deleted yet, with the why-stuck answer itself
    assert_eq!(lines[0]["verdict"], "NotDeleting");
    assert_eq!(lines[0]["answer"]["object"]["name"], "alpha", "{}", lines[0]);
    assert!(
        lines.iter().all(|l| l["time"].as_str().is_some_and(|t| t.parse::<k8s_openapi::jiff::Timestamp>().is_ok()))
    );
    let changes = changes(&lines);
    assert!(changes.contains(&("DeletionStarted".into(), "Site labs/alpha".into())), "{changes:?}");
    assert!(changes.contains(&("FinalizerRemoved".into(), "Site labs/alpha".into())), "{changes:?}");
    assert_all_deleted_once(&changes);
    assert_eq!(lines.last().unwrap()["verdict"], "Gone");
    assert!(lines.last().unwrap()["answer"].is_null());
    // watched, never polled: nothing read before the first watch is read again
    assert_nothing_read_again(&server);
    let log = server.requests();
    assert!(log.iter().filter(|r| r.is_watch()).all(|r| r.query.contains("allowWatchBookmarks=true")));
    assert_read_only(&server);
}

#[test]
fn a_finalizer_re_added_by_its_controller_is_reported() {
    let both = ["own.labhub.io/cleanup", "own.labhub.io/backup"];
    let script = vec![
        step(400, Action::Put(deleting_site(&both))),
        step(400, Action::Put(deleting_site(&both[1..]))),
        step(400, Action::Put(deleting_site(&both))),
        step(400, Action::remove(&deleting_site(&[]))),
    ];
    let server = server(SITE, script, Vec::new());
    // piped text: one line per change, with its time
    let (code, out, err, _) = watch(&server, &["why-stuck", "site/alpha", "-n", "labs", "--watch"]);
    assert_eq!(code, Some(0), "{err}\n{out}");
    let removed = out.lines().position(|l| l.contains("FinalizerRemoved: finalizer own.labhub.io/cleanup removed"));
    let readded = out.lines().position(|l| l.contains("FinalizerReAdded: finalizer own.labhub.io/cleanup re-added"));
    assert!(matches!((removed, readded), (Some(a), Some(b)) if a < b), "{out}");
    assert!(
        out.lines().all(|l| l.split(' ').next().is_some_and(|t| t.parse::<k8s_openapi::jiff::Timestamp>().is_ok())),
        "{out}"
    );
    assert_eq!(out.lines().filter(|l| l.contains("Deleted: Site labs/alpha is gone")).count(), 1, "{out}");
    assert!(out.lines().last().unwrap().contains(" Gone VerdictChanged: verdict InProgress → Gone"), "{out}");
}

#[test]
fn a_stuck_object_with_nothing_changing_ends_after_stuck_after() {
    let server = server("site-operator-gone", Vec::new(), Vec::new());
    let args = ["why-stuck", "site/alpha", "-n", "labs", "--watch", "--stuck-after", "2s"];
    let (code, out, err, took) = watch(&server, &args);
    assert_eq!(code, Some(2), "{err}\n{out}");
    assert!(took >= Duration::from_secs(2), "ended after {took:?}");
    assert!(err.contains("stuck, with nothing changing for 2s"), "{err}");
    assert!(out.starts_with(|c: char| c.is_ascii_digit()) && out.contains(" Stuck watching "), "{out}");
    // --until=stuck: at once
    let (code, _, err, took) = watch(&server, &["why-stuck", "site/alpha", "-n", "labs", "--watch", "--until=stuck"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(took < Duration::from_secs(2), "{took:?}");
}

#[test]
fn a_deletion_still_under_way_at_timeout_is_undecided() {
    let script = vec![step(200, Action::Put(deleting_site(&["own.labhub.io/cleanup"])))];
    let server = server(SITE, script, Vec::new());
    let args = ["why-stuck", "site/alpha", "-n", "labs", "--watch", "--timeout", "1500ms", "-o", "json"];
    let (code, out, err, took) = watch(&server, &args);
    assert_eq!(code, Some(3), "{err}\n{out}");
    assert!(took >= Duration::from_millis(1500), "{took:?}");
    assert!(err.contains("--timeout passed"), "{err}");
    assert_eq!(lines(&out).last().unwrap()["verdict"], "InProgress", "{out}");
}

#[test]
fn a_dropped_watch_is_resumed_from_where_it_was_without_losing_a_change() {
    // every stream ends right after the marking; the first dependent goes at once after
    let script = foreground_deletion(vec![step(300, Action::DropWatches)]);
    let server = server(SITE, script, Vec::new());
    let (code, out, err, _) = watch(&server, &["why-stuck", "site/alpha", "-n", "labs", "--watch", "-o", "json"]);
    assert_eq!(code, Some(0), "{err}\n{out}");
    assert_all_deleted_once(&changes(&lines(&out)));
    // resumed with a resourceVersion, not listed again
    assert_nothing_read_again(&server);
    let log = server.requests();
    let configmaps: Vec<_> =
        log.iter().filter(|r| r.is_watch() && r.path == "/api/v1/namespaces/labs/configmaps").collect();
    assert!(configmaps.len() >= 2, "not resumed: {configmaps:?}");
    assert!(configmaps.iter().all(|r| r.query.contains("resourceVersion=")), "{configmaps:?}");
}

#[test]
fn a_watch_whose_history_is_gone_relists_and_goes_on() {
    let script = foreground_deletion(vec![step(300, Action::ExpireWatches)]);
    let server = server(SITE, script, Vec::new());
    let (code, out, err, _) = watch(&server, &["why-stuck", "site/alpha", "-n", "labs", "--watch", "-o", "json"]);
    assert_eq!(code, Some(0), "{err}\n{out}");
    assert_all_deleted_once(&changes(&lines(&out)));
    let log = server.requests();
    let first_watch = log.iter().position(|r| r.is_watch()).unwrap();
    let relists =
        log[first_watch..].iter().filter(|r| !r.is_watch() && r.path == "/api/v1/namespaces/labs/configmaps").count();
    assert_eq!(relists, 1, "the configmaps listed again once, after the 410");
}

/// A watch refused (RBAC may allow list and not watch): asking again gives the same answer, so
/// it is asked three times (with backoff), then the watch ends with 1 saying which and why.
#[test]
fn a_watch_that_keeps_failing_gives_up_and_says_why() {
    let faults = vec![Fault::resource("configmaps", FaultKind::Status(403)).on_watch()];
    let server = server(SITE, Vec::new(), faults);
    let (code, _, err, took) = watch(&server, &["why-stuck", "site/alpha", "-n", "labs", "--watch"]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("the watch keeps failing: watching configmaps") && err.contains("403"), "{err}");
    let attempts = server.watches().iter().filter(|r| r.path == "/api/v1/namespaces/labs/configmaps").count();
    assert_eq!(attempts, 3, "bounded: {attempts} attempts in {took:?}");
}

#[test]
fn tree_and_all_follow_too_and_a_snapshot_is_refused() {
    let server = server(SITE, foreground_deletion(Vec::new()), Vec::new());
    let (code, out, err, _) = watch(&server, &["tree", "site/alpha", "-n", "labs", "--watch", "-o", "json"]);
    assert_eq!(code, Some(0), "{err}\n{out}");
    let lines = lines(&out);
    assert_eq!(lines[0]["answer"]["object"]["name"], "alpha", "{}", lines[0]);
    assert_all_deleted_once(&changes(&lines));
    // --all: nothing is being deleted in labs now, so it is done at once
    let (code, out, err, _) = watch(&server, &["why-stuck", "--all", "-n", "labs", "--watch", "-o", "json"]);
    assert_eq!(code, Some(0), "{err}\n{out}");
    assert_eq!(super::watch::lines(&out)[0]["verdict"], "Gone");
    let env = Env::new("http://127.0.0.1:9", None);
    let mut c = env.gc();
    c.args(["why-stuck", "site/alpha", "-n", "labs", "--watch", "--snapshot"]).arg(snapshot(SITE));
    let out = run(c, Duration::from_secs(30));
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("a snapshot does not change"), "{}", stderr(&out));
}

/// What the capture of controller-cannot-be-judged could not read: quota-system's workloads,
/// pods, ServiceAccounts and leases, forbidden.
pub(super) fn quota_system_forbidden() -> Vec<Fault> {
    ["/api/v1/namespaces/quota-system/pods", "/api/v1/namespaces/quota-system/serviceaccounts"]
        .into_iter()
        .map(String::from)
        .chain(
            ["deployments", "replicasets", "statefulsets", "daemonsets"]
                .map(|r| format!("/apis/apps/v1/namespaces/quota-system/{r}")),
        )
        .chain(["/apis/coordination.k8s.io/v1/namespaces/quota-system/leases".to_string()])
        .map(|p| Fault::path(&p, FaultKind::Status(403)))
        .collect()
}

#[test]
fn unknown_is_the_single_answers_verdict_and_is_watched_on_not_taken_for_stuck() {
    const QUOTA: &str = "controller-cannot-be-judged";
    let args = ["why-stuck", "quotas.quota.example.org/compute", "-n", "team-blue"];
    // the single answer first: Unknown, exit 3
    let quiet = server(QUOTA, Vec::new(), quota_system_forbidden());
    let env = Env::new(&quiet.url(), None);
    let mut c = env.gc();
    c.args(["--now", NOW]).args(args).args(["-o", "json"]);
    let single = run(c, Duration::from_secs(30));
    assert_eq!(single.status.code(), Some(3), "{}", stderr(&single));
    assert_eq!(serde_json::from_str::<Value>(&stdout(&single)).unwrap()["verdict"], "Unknown");
    // watched: Unknown too; --until=stuck does not end it (it is not stuck), nor does it end as
    // done; with nothing changing for --stuck-after it ends undecided, 3
    let watched = [&args[..], &["--watch", "--until=stuck", "--stuck-after", "2s", "-o", "json"]].concat();
    let (code, out, err, took) = watch(&quiet, &watched);
    assert_eq!(code, Some(3), "{err}\n{out}");
    assert!(took >= Duration::from_secs(2), "ended after {took:?}");
    assert!(err.contains("undecided (Unknown), with nothing changing for 2s"), "{err}");
    let first = lines(&out);
    assert_eq!(first.len(), 1, "{out}");
    assert_eq!(first[0]["verdict"], "Unknown");
    assert_eq!(first[0]["answer"]["verdict"], "Unknown");
    // a change settles it: the finalizer removed, the Quota gone, exit 0
    let mut quota = object(QUOTA, "Quota", "compute");
    // a second apart: under load, changes a few hundred milliseconds apart may reach one redraw
    let script = vec![
        step(
            400,
            Action::Put({
                quota["metadata"]["finalizers"] = Value::Array(Vec::new());
                quota.clone()
            }),
        ),
        step(1200, Action::remove(&quota)),
    ];
    let server = server(QUOTA, script, quota_system_forbidden());
    let (code, out, err, _) = watch(&server, &[&args[..], &["--watch", "-o", "json"]].concat());
    assert_eq!(code, Some(0), "{err}\n{out}");
    let lines = lines(&out);
    assert_eq!(lines[0]["verdict"], "Unknown");
    let changes = changes(&lines);
    assert!(changes.contains(&("FinalizerRemoved".into(), "Quota team-blue/compute".into())), "{changes:?}");
    deleted_once(&changes, "Quota team-blue/compute");
    assert_eq!(lines.last().unwrap()["verdict"], "Gone");
    assert_read_only(&server);
}

/// The YAML documents of a watch (`---` each), parsed.
fn documents(out: &str) -> Vec<Value> {
    assert!(out.starts_with("---\n"), "{out}");
    serde_saphyr::from_multiple(out).unwrap_or_else(|e| panic!("not a YAML stream ({e}):\n{out}"))
}

#[test]
fn yaml_is_a_document_per_answer_holding_what_json_lines_hold() {
    let args = ["why-stuck", "site/alpha", "-n", "labs", "--watch"];
    let srv = server(SITE, foreground_deletion(Vec::new()), Vec::new());
    let (code, out, err, _) = watch(&srv, &[&args[..], &["-o", "yaml"]].concat());
    assert_eq!(code, Some(0), "{err}\n{out}");
    let docs = documents(&out);
    assert_eq!(out.matches("\n---\n").count() + 1, docs.len(), "one `---` per document");
    for d in &docs {
        let keys: Vec<&str> = d.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(keys, ["time", "verdict", "change", "answer"], "{d}");
    }
    assert_all_deleted_once(&changes(&docs));
    assert_eq!(docs.last().unwrap()["verdict"], "Gone");
    assert!(docs.last().unwrap()["answer"].is_null());
    // the first answer is the single answer's, as JSON lines carry it
    let srv = server(SITE, foreground_deletion(Vec::new()), Vec::new());
    let (_, json, _, _) = watch(&srv, &[&args[..], &["-o", "json"]].concat());
    let first = &lines(&json)[0];
    assert_eq!(docs[0]["verdict"], first["verdict"]);
    assert_eq!(docs[0]["answer"], first["answer"], "YAML and JSON answers differ");
    // tree: its YAML (the single `tree -o yaml` writer) under answer
    let srv = server(SITE, foreground_deletion(Vec::new()), Vec::new());
    let (code, out, err, _) = watch(&srv, &["tree", "site/alpha", "-n", "labs", "--watch", "-o", "yaml"]);
    assert_eq!(code, Some(0), "{err}\n{out}");
    let docs = documents(&out);
    assert_eq!(docs[0]["answer"]["object"]["name"], "alpha", "{out}");
    assert!(docs[0]["answer"]["dependents"].as_array().is_some_and(|d| d.len() == DEPENDENTS.len()), "{out}");
    assert_all_deleted_once(&changes(&docs));
    // dot and mermaid draw once: refused with --watch, before anything is read
    let (code, _, err, _) = watch(&srv, &["tree", "site/alpha", "-n", "labs", "--watch", "-o", "dot"]);
    assert_eq!(code, Some(1));
    assert!(err.contains("-o dot and -o mermaid draw it once"), "{err}");
}

#[test]
fn the_readmes_recorded_watch_is_what_the_binary_prints_with_the_committed_script() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let block = readme
        .split("```text\n")
        .find(|b| b.starts_with("$ kubectl-gc --server") && b.lines().next().unwrap().ends_with(" --watch"))
        .expect("the README's recorded --watch example")
        .split("```")
        .next()
        .unwrap();
    let script_file = root().join("tests/support/scripts/site-alpha-foreground.json");
    let steps: Vec<Value> = serde_json::from_str(&std::fs::read_to_string(script_file).unwrap()).unwrap();
    let script = steps
        .iter()
        .map(|s| Scripted {
            after: Duration::from_secs_f64(s["after"].as_f64().unwrap()),
            action: Action::from_json(s).expect("a step"),
        })
        .collect();
    let srv = server(SITE, script, Vec::new());
    let (code, out, err, _) = watch(&srv, &["why-stuck", "site/alpha", "-n", "labs", "--watch"]);
    assert_eq!(code, Some(0), "{err}\n{out}");
    // the time and the elapsed time differ from run to run; the rest is the example
    let words = |l: &str| l.splitn(3, ' ').nth(2).unwrap_or("").to_string();
    let want: Vec<String> = block.lines().skip(1).map(words).collect();
    let got: Vec<String> = out.lines().map(words).collect();
    assert_eq!(got, want, "README.md's --watch example is out of date");
}

#[test]
fn a_hostile_finalizer_name_in_a_change_is_escaped_in_lines_json_and_yaml() {
    let hostile = "own.labhub.io/x\u{1b}]0;pwned\u{7}\u{1b}[2J\u{202e}";
    let script = vec![
        step(400, Action::Put(deleting_site(&["own.labhub.io/cleanup", hostile]))),
        step(400, Action::remove(&deleting_site(&[]))),
    ];
    for format in ["text", "json", "yaml"] {
        let srv = server(SITE, script.clone(), Vec::new());
        let (code, out, err, _) = watch(&srv, &["why-stuck", "site/alpha", "-n", "labs", "--watch", "-o", format]);
        assert_eq!(code, Some(0), "{format}: {err}\n{out}");
        assert!(!out.contains(['\u{1b}', '\u{7}', '\u{202e}']), "{format}: raw control characters:\n{out:?}");
        assert!(out.contains("own.labhub.io/x"), "{format}: the finalizer is not told at all:\n{out}");
    }
}

#[test]
fn time_alone_changes_the_answer_judged_again_from_what_is_kept_without_a_request() {
    // site-basics as it stands now: its leases renewed this second (for an hour), the Site
    // deleted this second with its operator's finalizer; nothing will change
    let now = k8s_openapi::jiff::Timestamp::now().round(k8s_openapi::jiff::Unit::Second).unwrap().to_string();
    let mut v: Value = serde_json::from_str(&std::fs::read_to_string(snapshot(SITE)).unwrap()).unwrap();
    for o in v["items"].as_array_mut().unwrap() {
        if o["kind"] == "Lease" {
            o["spec"]["renewTime"] = now.clone().into();
            o["spec"]["leaseDurationSeconds"] = 3600.into();
        }
        if o["kind"] == "Site" && o["metadata"]["name"] == "alpha" {
            o["metadata"]["deletionTimestamp"] = now.clone().into();
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("snapshot.json");
    std::fs::write(&file, v.to_string()).unwrap();
    let srv = ApiServer::start_with(&file, Options::default(), 0);
    // the clock, not --now: past --stuck-after the alive operator's finalizer is not
    // progressing (Stuck), which only time tells
    let env = Env::new(&srv.url(), None);
    let mut c = env.gc();
    c.args(["why-stuck", "site/alpha", "-n", "labs", "--watch", "--stuck-after", "3s", "--timeout", "60s"]);
    c.args(["-o", "json", "--request-timeout", "5s"]);
    let out = run(c, Duration::from_secs(90));
    let (code, out, err) = (out.status.code(), stdout(&out), stderr(&out));
    assert_eq!(code, Some(2), "{err}\n{out}");
    let lines = lines(&out);
    assert_eq!(lines[0]["verdict"], "InProgress", "{out}");
    assert_eq!(lines.len(), 2, "{out}");
    assert_eq!(lines[1]["verdict"], "Stuck", "{out}");
    // the pending finalizer became not progressing: one change, saying so (not "resolved")
    let told = changes(&lines);
    assert_eq!(told, [("FindingChanged".into(), "Site labs/alpha".into()), ("VerdictChanged".into(), String::new())]);
    let message = lines[1]["change"][0]["message"].as_str().unwrap();
    assert!(message.ends_with("→ FinalizerNotProgressing on Site labs/alpha"), "{message}");
    assert!(lines[1]["answer"]["findings"].as_array().unwrap().iter().any(|f| f["code"] == "FinalizerNotProgressing"));
    // judged again from what was kept: nothing read again, only the watches
    assert_nothing_read_again(&srv);
    assert!(err.contains("stuck, with nothing changing for 3s"), "{err}");
}

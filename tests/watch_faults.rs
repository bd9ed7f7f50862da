//! `--watch` against a server that misbehaves (issue 42): every WATCH answered 410, every
//! stream closed after its first line, events of another kind or object, bodies without end,
//! objects invented without end, the server gone for seconds. The watch must never become the
//! incident: a bounded request rate whatever the server does, a warning when it keeps failing,
//! nothing changed by what was not asked for, memory within the run's budget.

use std::time::Duration;

use serde_json::{Value, json};

use crate::live_hostile::peak_rss;
use crate::support::apiserver::watch::Action;
use crate::support::apiserver::{ApiServer, Fault, FaultKind};
use crate::support::{Env, NOW, assert_read_only};

use super::watch::{
    SITE, assert_all_deleted_once, changes, deleting_site, foreground_deletion, lines, object, server, step,
    watch_within,
};

/// The requests of a watch from `from` after its first WATCH to the end, per second.
fn rate_after(server: &ApiServer, from: Duration) -> (usize, f64) {
    let log = server.requests();
    let first = log.iter().find(|r| r.is_watch()).expect("a watch").at;
    let last = log.last().unwrap().at;
    let n = log.iter().filter(|r| r.at >= first + from).count();
    let span = last.saturating_duration_since(first + from).as_secs_f64().max(1.0);
    (n, n as f64 / span)
}

/// Asks at most client-go's default client rate (5 a second, bursts of 10) after its first
/// second, whatever the server does; says the watch keeps failing; ends at --timeout as the
/// verdict says (3: still in progress).
fn assert_bounded(server: &ApiServer, code: Option<i32>, out: &str, err: &str) {
    assert_eq!(code, Some(3), "{err}\n{out}");
    assert!(err.contains("keeps failing"), "no warning: {err}");
    let (n, per_second) = rate_after(server, Duration::from_secs(2));
    // a token bucket: 10 at once, then 5 a second; 20 s at most
    assert!(n <= 10 + 5 * 20, "{n} requests after the first 2 s ({per_second:.1}/s)");
    assert!(per_second <= 7.0, "{n} requests after the first 2 s: {per_second:.1}/s");
    assert_read_only(server);
}

const ARGS: [&str; 9] = ["why-stuck", "site/alpha", "-n", "labs", "--watch", "-o", "json", "--timeout", "16s"];

fn args() -> Vec<&'static str> {
    ARGS.to_vec()
}

#[test]
fn a_server_answering_every_watch_410_is_asked_a_few_times_a_second_and_said_to_fail() {
    let script = vec![step(200, Action::Put(deleting_site(&["own.labhub.io/cleanup"])))];
    let server = server(SITE, script, vec![Fault::every_resource(FaultKind::Gone).on_watch()]);
    let (code, out, err, _) = watch_within(&server, &args(), Duration::from_secs(60));
    assert_bounded(&server, code, &out, &err);
    // each 410 is followed by a relist (paced as the watch is), never by a hot loop
    let relists = server.requests().iter().filter(|r| !r.is_watch() && r.path.ends_with("/configmaps")).count();
    assert!((2..=12).contains(&relists), "{relists} relists of the configmaps");
    assert!(err.contains("410 Gone"), "{err}");
}

#[test]
fn a_server_closing_every_stream_after_one_line_is_asked_a_few_times_a_second() {
    let script = vec![step(200, Action::Put(deleting_site(&["own.labhub.io/cleanup"])))];
    let server = server(SITE, script, vec![Fault::every_resource(FaultKind::EndAfterOne)]);
    let (code, out, err, _) = watch_within(&server, &args(), Duration::from_secs(60));
    assert_bounded(&server, code, &out, &err);
    // what came through the short streams was still followed: the Site is being deleted
    let lines = lines(&out);
    assert_eq!(lines.last().unwrap()["verdict"], "InProgress", "{out}");
    assert!(err.contains("ends every watch early"), "{err}");
}

#[test]
fn events_of_another_kind_namespace_or_name_change_nothing() {
    let site = object(SITE, "Site", "alpha");
    let uid = site["metadata"]["uid"].clone();
    let api_version = site["apiVersion"].clone();
    // the Site's watch also carries a Pod's DELETED with the Site's own name and uid, the
    // Site's namesake in another namespace deleted, and another Site
    let foreign = vec![
        json!({"type": "DELETED", "object": {"kind": "Pod", "apiVersion": "v1",
            "metadata": {"name": "alpha", "namespace": "labs", "uid": uid, "resourceVersion": "1"}}}),
        json!({"type": "DELETED", "object": {"kind": "Site", "apiVersion": api_version,
            "metadata": {"name": "alpha", "namespace": "prod", "uid": uid, "resourceVersion": "1"}}}),
        json!({"type": "MODIFIED", "object": {"kind": "Site", "apiVersion": api_version,
            "metadata": {"name": "beta", "namespace": "labs", "uid": "b", "resourceVersion": "1"}}}),
    ];
    let script = vec![step(200, Action::Put(deleting_site(&["own.labhub.io/cleanup"])))];
    let server = server(SITE, script, vec![Fault::resource("sites", FaultKind::Foreign(foreign))]);
    let args = ["why-stuck", "site/alpha", "-n", "labs", "--watch", "-o", "json", "--timeout", "3s"];
    let (code, out, err, _) = watch_within(&server, &args, Duration::from_secs(30));
    // never a false all-clear: the Site is still there, being deleted
    assert_eq!(code, Some(3), "{err}\n{out}");
    let lines = lines(&out);
    assert!(lines.iter().all(|l| l["verdict"] != "Gone"), "{out}");
    assert_eq!(lines.last().unwrap()["verdict"], "InProgress", "{out}");
    assert!(!changes(&lines).iter().any(|(t, _)| t == "Deleted"), "{out}");
    assert!(err.contains("a Pod (v1)") && err.contains("ignored"), "{err}");
    assert!(err.contains("watch events were about something not watched"), "{err}");
}

/// The most a watch's process may have held, against bodies that never end (which, read whole,
/// take gigabytes within seconds on 127.0.0.1). Linux's `ru_maxrss` of a child counts what it
/// held before `exec` too (a copy of the test process, over 100 MiB in a full run).
const PEAK: u64 = 300 * 1024 * 1024;

#[test]
fn a_watch_body_without_end_is_refused_within_the_memory_budget() {
    let server = server(SITE, Vec::new(), vec![Fault::resource("configmaps", FaultKind::Oversized).on_watch()]);
    let env = Env::new(&server.url(), None);
    let mut c = env.gc();
    c.args(["--now", NOW, "--request-timeout", "5s", "why-stuck", "site/alpha", "-n", "labs", "--watch"]);
    let (peak, code, err) = peak_rss(c);
    // an event line past 8 MiB is not an event: refused at once, not asked for again
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("watching configmaps") && err.contains("larger than 8 MiB"), "{err}");
    assert!(peak < PEAK, "peak memory {} MiB", peak / (1024 * 1024));
    let attempts = server.watches().iter().filter(|r| r.path.ends_with("/configmaps")).count();
    assert_eq!(attempts, 1);
}

#[test]
fn an_error_body_without_end_is_not_read_past_its_status() {
    let faults = vec![Fault::resource("configmaps", FaultKind::EndlessError).on_watch()];
    let server = server(SITE, Vec::new(), faults);
    let env = Env::new(&server.url(), None);
    let mut c = env.gc();
    c.args(["--now", NOW, "--request-timeout", "5s", "why-stuck", "site/alpha", "-n", "labs", "--watch"]);
    c.args(["--timeout", "4s"]);
    let (peak, code, err) = peak_rss(c);
    assert_eq!(code, Some(3), "{err}");
    assert!(peak < PEAK, "peak memory {} MiB", peak / (1024 * 1024));
}

#[test]
fn objects_invented_without_end_stop_at_the_runs_memory_budget() {
    let server = server(SITE, Vec::new(), vec![Fault::resource("leases", FaultKind::Inventing).on_watch()]);
    let env = Env::new(&server.url(), None);
    let mut c = env.gc();
    c.env("KUBECTL_GC_MEMORY_BUDGET", "64");
    c.args(["--now", NOW, "--request-timeout", "5s", "why-stuck", "site/alpha", "-n", "labs", "--watch"]);
    c.args(["--timeout", "60s"]);
    let (peak, code, err) = peak_rss(c);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("watching leases") && err.contains("memory budget of 64 MiB"), "{err}");
    assert!(peak < (2 * 64 + 100) * 1024 * 1024, "peak memory {} MiB", peak / (1024 * 1024));
}

/// A control-plane upgrade: the API server gone for 8 s mid-watch (every connection closed,
/// none accepted), then back with its history. The watch waits with backoff and resumes from
/// where it was: every change is seen, in order, and the deletion ends 0.
#[test]
fn a_server_restarted_mid_watch_is_waited_for_and_the_watch_resumes() {
    let mut script = foreground_deletion(vec![step(300, Action::Outage(Duration::from_secs(8)))]);
    // the dependents go once the server is back
    script[2].after = Duration::from_millis(9000);
    let server = server(SITE, script, Vec::new());
    let args = ["why-stuck", "site/alpha", "-n", "labs", "--watch", "-o", "json"];
    let (code, out, err, took) = watch_within(&server, &args, Duration::from_secs(90));
    assert_eq!(code, Some(0), "{err}\n{out}");
    assert!(took >= Duration::from_secs(8), "{took:?}");
    let lines = lines(&out);
    assert_all_deleted_once(&changes(&lines));
    assert!(lines.iter().all(|l| l["verdict"] != "Stuck"), "{out}");
    // resumed from a resourceVersion, not listed again
    let after: Vec<_> = server.requests().into_iter().filter(|r| r.path.ends_with("/configmaps")).collect();
    assert!(after.iter().filter(|r| r.is_watch()).count() >= 2, "{after:?}");
    assert!(after.iter().filter(|r| !r.is_watch()).count() == 1, "listed again: {after:?}");
    let _ = Value::Null;
}

//! The live path against a hostile or broken server (issue 16): lists that never end, answers
//! that are not lists, answers too large to hold; and a namespace capture that answers offline
//! as the live plugin does.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::apiserver::{ApiServer, Fault, FaultKind, Options};
use crate::support::{self, DEADLINE, Env, NOW, assert_read_only, checks, run, stderr};

fn site_basics() -> std::path::PathBuf {
    support::root().join("tests/fixtures/site-basics/snapshot.json")
}

fn why_stuck_site(server: &ApiServer) -> (Option<i32>, Vec<String>) {
    let env = Env::new(&server.url(), None);
    let mut c = env.gc();
    c.args(["why-stuck", "site/alpha", "-n", "labs", "-o", "json", "--now", NOW, "--request-timeout", "5s"]);
    let start = Instant::now();
    let o = run(c, DEADLINE);
    assert!(start.elapsed() < Duration::from_secs(20), "took {:?}", start.elapsed());
    let v: Value = serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {}", stderr(&o)));
    let inc = v["incomplete"].as_array().unwrap().iter().map(|i| i.as_str().unwrap().to_string()).collect();
    (o.status.code(), inc)
}

fn faulty(faults: Vec<Fault>) -> ApiServer {
    ApiServer::start_with(&site_basics(), Options { faults, ..Options::default() }, 0)
}

#[test]
fn a_continue_token_sent_again_ends_the_list_as_a_gap() {
    let server = faulty(vec![Fault::resource("configmaps", FaultKind::EndlessContinue)]);
    let (code, inc) = why_stuck_site(&server);
    assert!(matches!(code, Some(0 | 2)), "exit {code:?}");
    assert!(
        inc.iter()
            .any(|i| i.starts_with("configmaps in namespace \"labs\" could not be listed")
                && i.contains("continue token")),
        "{inc:?}"
    );
    let pages = server.requests().iter().filter(|r| r.path == "/api/v1/namespaces/labs/configmaps").count();
    assert_eq!(pages, 2, "the second page repeats the first page's token: no third request");
    assert_read_only(&server);
}

/// Fresh continue tokens on empty pages: given up after [`MAX_EMPTY_PAGES`] of them, not after
/// the thousands of pages the memory budget allows.
#[test]
fn empty_pages_that_ask_for_more_end_the_list_as_a_gap() {
    let server = faulty(vec![Fault::resource("configmaps", FaultKind::FreshContinue)]);
    let (code, inc) = why_stuck_site(&server);
    assert!(matches!(code, Some(0 | 2)), "exit {code:?}");
    assert!(
        inc.iter().any(|i| i.starts_with("configmaps in namespace \"labs\" could not be listed")
            && i.contains("16 pages in a row held no object")),
        "{inc:?}"
    );
    let pages = server.requests().iter().filter(|r| r.path == "/api/v1/namespaces/labs/configmaps").count();
    assert_eq!(pages, kubectl_gc::source::live::list::MAX_EMPTY_PAGES, "no page past the bound");
    assert_read_only(&server);
}

/// Pages that each bring something and never end: given up at the list's time limit (ten
/// times --request-timeout, at least 10 s), with a gap that says so.
#[test]
fn a_list_that_pages_past_its_time_limit_ends_as_a_gap() {
    let server = faulty(vec![Fault::resource("configmaps", FaultKind::SlowFreshItems(Duration::from_millis(250)))]);
    let env = Env::new(&server.url(), None);
    let started = Instant::now();
    let mut c = env.gc();
    c.args(["why-stuck", "site/alpha", "-n", "labs", "-o", "json", "--now", NOW, "--request-timeout", "1s"]);
    let o = run(c, Duration::from_secs(60));
    let took = started.elapsed();
    let v: Value = serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {}", stderr(&o)));
    let inc: Vec<String> = v["incomplete"].as_array().unwrap().iter().map(|i| i.as_str().unwrap().into()).collect();
    assert!(
        inc.iter().any(|i| i.starts_with("configmaps in namespace \"labs\" could not be listed")
            && i.contains("the list did not end within 10s")),
        "{inc:?}"
    );
    assert!(took < Duration::from_secs(30), "gave up at the limit, not later: {took:?}");
    assert_read_only(&server);
}

#[test]
fn a_200_answer_that_is_not_a_list_is_flagged_not_taken_as_empty() {
    let status = json!({"kind": "Status", "apiVersion": "v1", "status": "Success", "metadata": {}});
    for (body, says) in [(json!({}), "the answer is not a list"), (status, "the answer is a Status, not a list")] {
        let server = faulty(vec![Fault::resource("configmaps", FaultKind::NotAList(body))]);
        let (code, inc) = why_stuck_site(&server);
        assert!(matches!(code, Some(0 | 2)), "exit {code:?}");
        assert!(inc.iter().any(|i| i.starts_with("configmaps") && i.ends_with(says)), "{inc:?}");
    }
}

/// The answer of `args` on `fixture` with `plural` answered by `wrong`, and its `incomplete`.
fn with_wrong_list(fixture: &str, plural: &str, wrong: Value, args: &[&str]) -> (Option<i32>, String, Vec<String>) {
    let dir = support::root().join("tests/fixtures").join(fixture);
    let faults = vec![Fault::resource(plural, FaultKind::NotAList(wrong))];
    let server = ApiServer::start_with(&dir.join("snapshot.json"), Options { faults, ..Options::default() }, 0);
    let env = Env::new(&server.url(), None);
    let mut c = env.gc();
    c.args(args).args(["-o", "json", "--now", NOW, "--request-timeout", "5s"]);
    let o = run(c, DEADLINE);
    let v: Value = serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {}", stderr(&o)));
    let inc = v["incomplete"].as_array().unwrap().iter().map(|i| i.as_str().unwrap().to_string()).collect();
    assert_read_only(&server);
    (o.status.code(), String::from_utf8_lossy(&o.stdout).into_owned(), inc)
}

/// A 200 list of another kind (a PodList where ConfigMaps were asked, a SecretList for
/// webhook configurations, a PodList for Events) is named in `incomplete` and never used:
/// nothing of what it held reaches the answer.
#[test]
fn a_list_of_another_kind_is_named_and_never_used() {
    let pod = json!({"metadata": {"name": "intruder-pod", "namespace": "labs", "uid": "u-intruder",
        "ownerReferences": [{"apiVersion": "own.labhub.io/v1", "kind": "Site", "name": "alpha",
            "uid": "3a9bd23b-a2e4-5cab-97ef-4534cd4b58f4", "blockOwnerDeletion": true}],
        "finalizers": ["intruder/hold"], "deletionTimestamp": "2026-11-29T10:00:00Z"}});
    let pods = json!({"kind": "PodList", "apiVersion": "v1", "metadata": {}, "items": [pod]});
    let (code, out, inc) =
        with_wrong_list("site-basics", "configmaps", pods.clone(), &["why-stuck", "site/alpha", "-n", "labs"]);
    assert!(matches!(code, Some(0..=3)), "exit {code:?}");
    assert!(
        inc.iter().any(|i| i.starts_with("configmaps")
            && i.contains("the answer is a PodList (v1), asked for ConfigMap (v1): not used")),
        "{inc:?}"
    );
    assert!(!out.contains("intruder"), "the PodList was used: {out}");

    let secret = json!({"metadata": {"name": "intruder-secret", "namespace": "finance", "uid": "u-secret"}, "data": {"k": "c2VjcmV0"}});
    let secrets = json!({"kind": "SecretList", "apiVersion": "v1", "metadata": {}, "items": [secret]});
    let webhook = ["why-stuck", "account/acme-payroll", "-n", "finance"];
    let (code, out, inc) =
        with_wrong_list("webhook-blocks-finalizer", "validatingwebhookconfigurations", secrets, &webhook);
    assert!(matches!(code, Some(0..=3)), "exit {code:?}");
    assert!(
        inc.iter()
            .any(|i| i.starts_with("validatingwebhookconfigurations") && i.contains("the answer is a SecretList (v1)")),
        "{inc:?}"
    );
    assert!(!out.contains("intruder") && !out.contains("c2VjcmV0"), "the SecretList was used: {out}");

    let events = ["why-stuck", "bucket/raw-footage", "-n", "studio"];
    let (code, out, inc) = with_wrong_list("operator-alive-not-acting", "events", pods, &events);
    assert!(matches!(code, Some(0..=3)), "exit {code:?}");
    assert!(inc.iter().any(|i| i.starts_with("events") && i.contains("the answer is a PodList (v1)")), "{inc:?}");
    assert!(!out.contains("intruder"), "the PodList was used: {out}");
}

/// Peak resident memory of a child process (wait4's rusage), in bytes, and its exit code.
// waited on with wait4, for its rusage
#[allow(clippy::zombie_processes)]
pub(crate) fn peak_rss(mut cmd: std::process::Command) -> (u64, Option<i32>, String) {
    use std::io::Read;
    let mut child = cmd.stdout(std::process::Stdio::null()).stderr(std::process::Stdio::piped()).spawn().unwrap();
    let mut err = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut b = String::new();
        let _ = err.read_to_string(&mut b);
        b
    });
    let mut status = 0;
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: waiting for our own child, with valid out-pointers.
    let r = unsafe { libc::wait4(child.id() as i32, &mut status, 0, &mut usage) };
    assert!(r > 0, "wait4 failed");
    let code = libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status));
    (usage.ru_maxrss as u64 * 1024, code, reader.join().unwrap())
}

/// Every list streaming without end, 16 in flight: the run's answers together stay within its
/// memory budget (here 64 MiB, `KUBECTL_GC_MEMORY_BUDGET`), each list refused and named, and
/// the process's peak memory under twice the budget (what a body grows into) and its own.
#[test]
fn the_runs_memory_stays_under_its_budget_with_every_list_streaming() {
    let server = faulty(vec![Fault::every_resource(FaultKind::Oversized)]);
    let env = Env::new(&server.url(), None);
    let file = env.dir.path().join("capture.json");
    let mut c = env.gc();
    c.env("KUBECTL_GC_MEMORY_BUDGET", "64").args(["snapshot", "-A", "--request-timeout", "60s", "--file"]).arg(&file);
    let start = Instant::now();
    let (peak, code, err) = peak_rss(c);
    assert!(start.elapsed() < Duration::from_secs(60), "took {:?}", start.elapsed());
    assert_eq!(code, Some(0), "{err}");
    assert!(peak < 2 * 64 * 1024 * 1024 + 100 * 1024 * 1024, "peak memory {} MiB", peak / (1024 * 1024));
    assert!(err.contains("memory budget of 64 MiB"), "{err}");
    let v: Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    let inc: Vec<&str> = v["incomplete"].as_array().unwrap().iter().filter_map(|i| i["line"].as_str()).collect();
    assert!(inc.len() > 3 && inc.iter().all(|i| !i.contains("no answer within")), "{inc:?}");
    // every request says who asks, as kubectl plugins do
    let ua = format!("kubectl-gc/{} ({}/", env!("CARGO_PKG_VERSION"), std::env::consts::OS);
    assert!(server.requests().iter().all(|r| r.user_agent.starts_with(&ua) && r.user_agent.ends_with(')')));
    assert_read_only(&server);
}

/// A server handing out a fresh continue token with every page (each with an object, so the
/// empty-page bound does not end it first) is followed only as far as the budget could hold
/// pages of objects (64 MiB: 524 pages), then named.
#[test]
fn the_page_cap_follows_from_the_budget() {
    let server = faulty(vec![Fault::resource("configmaps", FaultKind::SlowFreshItems(Duration::ZERO))]);
    let env = Env::new(&server.url(), None);
    let mut c = env.gc();
    c.env("KUBECTL_GC_MEMORY_BUDGET", "64");
    c.args(["why-stuck", "site/alpha", "-n", "labs", "-o", "json", "--now", NOW, "--request-timeout", "5s"]);
    let o = run(c, DEADLINE);
    let v: Value = serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {}", stderr(&o)));
    let inc: Vec<&str> = v["incomplete"].as_array().unwrap().iter().filter_map(|i| i.as_str()).collect();
    assert!(inc.iter().any(|i| i.starts_with("configmaps") && i.contains("more than 524 pages")), "{inc:?}");
    let pages = server.requests().iter().filter(|r| r.path == "/api/v1/namespaces/labs/configmaps").count();
    assert!((524..=526).contains(&pages), "{pages} pages");
}

#[test]
fn an_answer_too_large_is_refused_and_named() {
    let server = faulty(vec![Fault::resource("configmaps", FaultKind::Oversized)]);
    let (code, inc) = why_stuck_site(&server);
    assert!(matches!(code, Some(0 | 2)), "exit {code:?}");
    assert!(inc.iter().any(|i| i.starts_with("configmaps") && i.contains("larger than 512 MiB")), "{inc:?}");
    // not retried: the same answer would come again
    let n = server.requests().iter().filter(|r| r.path == "/api/v1/namespaces/labs/configmaps").count();
    assert_eq!(n, 1);
}

#[test]
fn a_reset_connection_is_retried_by_its_kind_then_named() {
    let server = faulty(vec![Fault::resource("configmaps", FaultKind::Reset)]);
    let (_, inc) = why_stuck_site(&server);
    assert!(inc.iter().any(|i| i.starts_with("configmaps")), "{inc:?}");
    let n = server.requests().iter().filter(|r| r.path == "/api/v1/namespaces/labs/configmaps").count();
    assert_eq!(n, 3, "a reset is retried twice");
    let server = faulty(vec![Fault::resource("configmaps", FaultKind::Reset).times(1)]);
    let (_, inc) = why_stuck_site(&server);
    assert!(inc.is_empty(), "one reset, then the answer: {inc:?}");
}

/// `kubectl gc snapshot -n labs` holds everything the answers about labs read (the operator's
/// workloads in its own namespace included), so its offline answers equal the live ones.
#[test]
fn a_namespace_capture_answers_offline_as_the_plugin_does_live() {
    for fixture in ["site-basics", "site-operator-gone", "site-uid-mismatch", "cross-namespace"] {
        let dir = support::root().join("tests/fixtures").join(fixture);
        let server = ApiServer::start(&dir.join("snapshot.json"));
        let env = Env::new(&server.url(), None);
        let file = env.dir.path().join("labs.json");
        let mut c = env.gc();
        c.args(["snapshot", "-n", "labs", "--file"]).arg(&file);
        let o = run(c, DEADLINE);
        assert_eq!(o.status.code(), Some(0), "{fixture}: {}", stderr(&o));
        let about_labs = checks(&dir)
            .into_iter()
            .filter(|a| a[0] == "why-stuck" && a.windows(2).any(|w| w[0] == "-n" && w[1] == "labs"));
        let mut compared = 0;
        for args in about_labs {
            let mut c = env.gc();
            c.args(&args).args(["-o", "json", "--now", NOW]);
            let live = run(c, DEADLINE);
            let mut c = env.gc();
            c.args(&args).args(["-o", "json", "--now", NOW, "--snapshot"]).arg(&file);
            let offline = run(c, DEADLINE);
            assert_eq!(offline.status.code(), live.status.code(), "{fixture} {args:?}: {}", stderr(&offline));
            let (a, b): (Value, Value) =
                (serde_json::from_slice(&live.stdout).unwrap(), serde_json::from_slice(&offline.stdout).unwrap());
            // live commands also name the kubeconfig file; offline, the capture's context and
            // the server it recorded
            let (a, b) = (support::without_kubeconfigs(a), support::without_kubeconfigs(b));
            assert_eq!(b, a, "{fixture} {args:?}: offline on the capture differs from live");
            compared += 1;
        }
        assert!(compared > 0 || fixture == "cross-namespace", "{fixture}: no check about labs");
        assert_read_only(&server);
    }
}

/// The product's built-in table (generated from k8s-openapi) and the test server's (written
/// from the API server's registrations) agree on every type both name: kind, plural, scope.
/// Both sides sharing one table would let a wrong scope pass every live test.
#[test]
fn the_products_builtin_types_agree_with_the_servers() {
    use crate::support::apiserver::builtins::BUILTINS as SERVED;
    use kubectl_gc::discovery::builtin::BUILTINS;
    for b in BUILTINS {
        let served = SERVED.iter().find(|s| s.0 == b.group && s.1 == b.version && s.2 == b.plural);
        let Some(&(_, _, _, kind, namespaced, _)) = served else {
            panic!("{}/{} {} is not served by a 1.37 API server", b.group, b.version, b.plural)
        };
        assert_eq!((b.kind, b.namespaced), (kind, namespaced), "{}/{} {}", b.group, b.version, b.plural);
    }
    assert_eq!(BUILTINS.len(), SERVED.len(), "every type the server serves is known");
}

/// A 1.26–1.29 server serves aggregated discovery as `v2beta1` only: it is asked for after
/// `v2`, and read in two requests rather than one per group.
#[test]
fn aggregated_discovery_v2beta1_is_used_where_v2_is_not_served() {
    let server =
        ApiServer::start_with(&site_basics(), Options { aggregated_version: "v2beta1", ..Options::default() }, 0);
    let (code, inc) = why_stuck_site(&server);
    assert!(matches!(code, Some(0 | 2)), "exit {code:?}");
    assert!(inc.is_empty(), "{inc:?}");
    let reqs = server.requests();
    let api = reqs.iter().find(|r| r.path == "/api").unwrap();
    let order: Vec<&str> = api.accept.split(',').collect();
    assert!(order[0].contains("v=v2;") && order[1].contains("v=v2beta1;"), "{order:?}");
    assert!(
        !reqs.iter().any(|r| r.path.starts_with("/apis/") && r.path.matches('/').count() == 3),
        "no per-group discovery: {reqs:?}"
    );
}

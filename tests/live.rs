//! The live path against the in-process API server: the same answers as offline, read-only,
//! metadata-only, and partial answers (never hangs) under faults.

use std::path::Path;
use std::process::Output;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::apiserver::{self, ApiServer, DropManagedFields, Fault, FaultKind, Options};
use crate::support::{self, DEADLINE, Env, NOW, assert_read_only, checks, fixtures, run, stderr, stdout};

/// The checks a fixture's answers are compared on: its why-stuck, tree and plan checks with
/// `-o json`, plus a tree of every why-stuck target, plus `why-stuck --all -A` (whose live read
/// is a plan of its own: a metadata pass, then bodies where answers read them).
fn comparable_checks(fixture: &Path) -> Vec<Vec<String>> {
    let mut out = vec![["why-stuck", "--all", "-A"].map(String::from).to_vec()];
    for args in checks(fixture) {
        match args[0].as_str() {
            "why-stuck" if args.iter().any(|a| a == "--all") => out.push(args),
            "why-stuck" => {
                let mut tree = args.clone();
                tree[0] = "tree".into();
                if let Some(i) = tree.iter().position(|a| a == "--stuck-after") {
                    tree.drain(i..(i + 2).min(tree.len()));
                }
                out.push(args);
                out.push(tree);
            }
            "tree" | "plan" => out.push(args),
            _ => {}
        }
    }
    out.dedup();
    out
}

/// The offline answer on the fixture as the test server presents it: with the version its
/// `/version` reports recorded (`serverVersion`), as a capture of that server would; a live
/// answer that judges by the server's version (ordered namespace deletion) reads it.
fn offline(fixture: &Path, args: &[String]) -> Output {
    let env = Env::new("http://127.0.0.1:9", None);
    let mut file: Value = serde_json::from_slice(&std::fs::read(fixture.join("snapshot.json")).unwrap()).unwrap();
    if file.get("serverVersion").is_none() {
        file["serverVersion"] = apiserver::VERSION.into();
    }
    let served = env.dir.path().join("served.json");
    std::fs::write(&served, serde_json::to_vec(&file).unwrap()).unwrap();
    let mut c = env.command(support::bin());
    c.args(args).args(["-o", "json", "--now", NOW, "--snapshot"]).arg(&served);
    run(c, DEADLINE)
}

fn live(env: &Env, args: &[String], extra: &[&str]) -> Output {
    let mut c = env.gc();
    c.args(args).args(["-o", "json", "--now", NOW]).args(extra);
    if !extra.contains(&"--request-timeout") {
        c.args(["--request-timeout", "5s"]);
    }
    run(c, DEADLINE)
}

/// The answer as JSON, with printed commands unbound: live, they name the kubeconfig context
/// `test` they were read through (`kubectl --context=test …`), while a plain snapshot file
/// names none, so answers compare without it (tests/bound.rs checks the binding itself).
fn json(o: &Output) -> Value {
    let v: Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}\nstderr: {}", stdout(o), stderr(o)));
    unbind(v)
}

fn unbind(v: Value) -> Value {
    match v {
        Value::String(s) => Value::String(support::unbound(&s)),
        Value::Array(a) => Value::Array(a.into_iter().map(unbind).collect()),
        Value::Object(m) => Value::Object(m.into_iter().map(|(k, v)| (k, unbind(v))).collect()),
        other => other,
    }
}

/// Whether the fixture's snapshot records reads its capture could not make (`incomplete`).
fn records_gaps(fixture: &Path) -> bool {
    let text = std::fs::read_to_string(fixture.join("snapshot.json")).unwrap();
    let v: Value = serde_json::from_str(&text).unwrap();
    v["incomplete"].as_array().is_some_and(|a| !a.is_empty())
}

/// The server version and the context a fixture's snapshot recorded (a `kubectl gc snapshot`
/// file), else the test server's version and none.
fn recorded(fixture: &Path) -> (&'static str, Option<String>) {
    let v: Value = serde_json::from_str(&std::fs::read_to_string(fixture.join("snapshot.json")).unwrap()).unwrap();
    let version =
        v["serverVersion"].as_str().map_or(support::apiserver::VERSION, |s| Box::leak(s.to_string().into_boxed_str()));
    (version, v["capturedContext"].as_str().map(String::from))
}

/// Every fixture live == offline, with servers that honour `drop=metadata.managedFields`
/// (KEP-5958, gate on), ignore it (gate off, before 1.37) and skip media types carrying it.
#[test]
fn live_answers_equal_offline_answers_on_every_fixture() {
    let mut compared = 0;
    // a snapshot that records what its capture could not read (a 403 on a namespace) is served
    // here whole: live would see what the capture could not, so the answers differ by design
    for fixture in fixtures().into_iter().filter(|f| !records_gaps(f)) {
        // the offline answers once per fixture, compared with each server mode's live answers
        let wanted: Vec<(Vec<String>, Output)> = comparable_checks(&fixture)
            .into_iter()
            .map(|args| {
                let want = offline(&fixture, &args);
                (args, want)
            })
            .collect();
        // a capture of another cluster (`kubectl gc snapshot`): served as that cluster's version,
        // and its printed commands name its context where live ones name the test's
        let (version, context) = recorded(&fixture);
        let wanted: Vec<(Vec<String>, Output)> = wanted
            .into_iter()
            .map(|(args, mut want)| {
                if let Some(ctx) = &context {
                    want.stdout = String::from_utf8_lossy(&want.stdout)
                        .replace(&format!("kubectl --context={ctx} "), "kubectl --context=test ")
                        .into_bytes();
                }
                (args, want)
            })
            .collect();
        for mode in [DropManagedFields::Honour, DropManagedFields::Ignore, DropManagedFields::Skip] {
            let server = ApiServer::start_with(
                &fixture.join("snapshot.json"),
                Options { drop_managed_fields: mode, version, ..Options::default() },
                0,
            );
            let env = Env::new(&server.url(), None);
            for (args, want) in &wanted {
                let got = live(&env, args, &[]);
                let what = format!("{} ({mode:?}) {}", fixture.display(), args.join(" "));
                assert_eq!(got.status.code(), want.status.code(), "{what}: exit code\nlive stderr: {}", stderr(&got));
                assert_eq!(json(&got), json(want), "{what}: live and offline JSON differ");
                assert!(!stderr(&got).contains("incomplete"), "{what}: {}", stderr(&got));
                compared += 1;
            }
            assert_read_only(&server);
            assert!(server.requests().iter().any(|r| r.wants_metadata()), "no metadata-only list was made");
            // every answer (`why-stuck --all` included) asks a server that honours the opt-out
            // to drop them
            let answers_drop = !wanted.is_empty();
            assert_eq!(
                server.dropped_answers() > 0,
                mode == DropManagedFields::Honour && answers_drop,
                "{} ({mode:?})",
                fixture.display()
            );
        }
    }
    assert!(compared >= 30, "only {compared} answers compared");
}

#[test]
fn metadata_lists_come_in_protobuf_where_served_and_json_where_not_with_equal_answers() {
    let fixture = support::root().join("tests/fixtures/site-basics");
    let checks = comparable_checks(&fixture);
    // the server offers protobuf, and passes over the JSON entry asking without managedFields
    // (KEP-5958, which only JSON can honour): every metadata-only list is served in protobuf
    let skipping = Options { drop_managed_fields: DropManagedFields::Skip, ..Options::default() };
    let pb = ApiServer::start_with(&fixture.join("snapshot.json"), skipping.clone(), 0);
    let env = Env::new(&pb.url(), None);
    // no protobuf at all, and none for one type (an aggregated API server speaks JSON only)
    let plain =
        ApiServer::start_with(&fixture.join("snapshot.json"), Options { protobuf: false, ..Options::default() }, 0);
    let plain_env = Env::new(&plain.url(), None);
    let mixed = ApiServer::start_with(
        &fixture.join("snapshot.json"),
        Options {
            faults: vec![
                Fault::resource("configmaps", FaultKind::NoProtobuf),
                Fault::group("own.labhub.io", FaultKind::NoProtobuf),
            ],
            ..skipping
        },
        0,
    );
    let mixed_env = Env::new(&mixed.url(), None);
    for args in &checks {
        let want = offline(&fixture, args);
        for (what, env) in [("protobuf", &env), ("json", &plain_env), ("mixed", &mixed_env)] {
            let got = live(env, args, &[]);
            assert_eq!(got.status.code(), want.status.code(), "{what} {args:?}: {}", stderr(&got));
            assert_eq!(json(&got), json(&want), "{what} {args:?}: the answer differs from offline");
        }
    }
    let metadata_lists = |s: &ApiServer| {
        s.requests()
            .into_iter()
            .filter(|r| r.accept.contains("as=PartialObjectMetadataList") && !r.path.split('/').any(|p| p == "alpha"))
            .collect::<Vec<_>>()
    };
    let asked = metadata_lists(&pb);
    assert!(!asked.is_empty());
    assert!(
        asked.iter().all(|r| r.offers_protobuf() && r.accept.contains("application/json;as=PartialObjectMetadataList")),
        "protobuf first, JSON metadata second"
    );
    assert!(
        asked.iter().all(|r| !r.accept.split(',').any(|m| m.trim() == "application/json")),
        "never a plain JSON list instead of metadata"
    );
    assert_eq!(pb.protobuf_answers(), asked.len(), "every metadata list answered in protobuf");
    assert_eq!(plain.protobuf_answers(), 0);
    assert!(mixed.protobuf_answers() > 0 && mixed.protobuf_answers() < metadata_lists(&mixed).len());
    for s in [&pb, &plain, &mixed] {
        assert_read_only(s);
    }
}

#[test]
fn answers_do_not_list_what_the_gc_ignores_but_a_capture_does() {
    let server = ApiServer::start(&site_basics());
    let env = Env::new(&server.url(), None);
    let o = live(&env, &["tree".into(), "site/alpha".into(), "-n".into(), "labs".into()], &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let events = |s: &ApiServer| s.requests().iter().filter(|r| r.path.ends_with("/events")).count();
    assert_eq!(events(&server), 0, "events are listed for an answer");
    server.clear_requests();
    let mut c = env.gc();
    c.args(["snapshot", "-A", "--file"]).arg(env.dir.path().join("capture.json"));
    let o = run(c, DEADLINE);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(events(&server) > 0, "a capture lists events");
}

fn site_basics() -> std::path::PathBuf {
    support::root().join("tests/fixtures/site-basics/snapshot.json")
}

fn why_stuck_site(env: &Env, extra: &[&str]) -> Output {
    live(env, &["why-stuck".into(), "site/alpha".into(), "-n".into(), "labs".into()], extra)
}

fn incomplete(o: &Output) -> Vec<String> {
    json(o)["incomplete"].as_array().unwrap().iter().map(|v| v.as_str().unwrap().to_string()).collect()
}

#[test]
fn a_namespaced_answer_reads_its_namespace_cluster_scoped_types_and_owner_kinds_everywhere() {
    let server = ApiServer::start(&site_basics());
    let env = Env::new(&server.url(), None);
    let o = why_stuck_site(&env, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let reqs = server.requests();
    let listed = |p: &str| reqs.iter().any(|r| r.path == p);
    assert!(listed("/api/v1/namespaces/labs/configmaps"), "configmaps in labs");
    assert!(!listed("/api/v1/configmaps"), "configmaps listed cluster-wide without -A");
    assert!(listed("/api/v1/namespaces"), "cluster-scoped types are read");
    assert!(listed("/apis/coordination.k8s.io/v1/leases"), "leases everywhere (controller liveness)");
    // pods in labs are owned by ReplicaSets in labs, found there: no cluster-wide list of them
    assert!(!listed("/apis/apps/v1/replicasets"), "owners found in the namespace need no cluster-wide list");
    // the object itself first, metadata-only
    let get = reqs
        .iter()
        .find(|r| r.path == "/apis/own.labhub.io/v1/namespaces/labs/sites/alpha")
        .expect("GET of the target");
    assert!(get.wants_metadata());
    // metadata-only, except for kinds whose body the analysis reads
    let cm = reqs.iter().find(|r| r.path == "/api/v1/namespaces/labs/configmaps").unwrap();
    assert!(cm.wants_metadata() && cm.query.contains("limit=500"), "{cm:?}");
    let pods = reqs.iter().find(|r| r.path == "/api/v1/namespaces/labs/pods").unwrap();
    assert!(!pods.wants_metadata(), "{pods:?}");
    assert!(reqs.iter().any(|r| r.path == "/apis" && r.accept.contains("as=APIGroupDiscoveryList")));
    assert_read_only(&server);

    server.clear_requests();
    let o = why_stuck_site(&env, &["-A"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(server.requests().iter().any(|r| r.path == "/api/v1/configmaps"), "-A lists cluster-wide");
    assert_read_only(&server);
}

#[test]
fn an_owner_not_found_in_the_namespace_is_looked_for_in_every_namespace() {
    // shared-config in tenant-b names the Site in labs: only a cluster-wide list of Sites tells
    // that owner (in another namespace) from an absent one
    let server = ApiServer::start(&support::root().join("tests/fixtures/cross-namespace/snapshot.json"));
    let env = Env::new(&server.url(), None);
    let o = live(&env, &["why-stuck".into(), "configmap/shared-config".into(), "-n".into(), "tenant-b".into()], &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let reqs = server.requests();
    let sites =
        reqs.iter().find(|r| r.path == "/apis/own.labhub.io/v1/sites").expect("sites listed in every namespace");
    assert!(sites.wants_metadata(), "{sites:?}");
    let codes: Vec<String> =
        json(&o)["findings"].as_array().unwrap().iter().map(|f| f["code"].as_str().unwrap().to_string()).collect();
    assert!(codes.contains(&"OwnerRefInvalidNamespace".to_string()), "{codes:?}");
    assert_read_only(&server);
}

#[test]
fn workloads_named_like_a_finalizers_field_manager_are_looked_up_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let snap = dir.path().join("s.json");
    std::fs::write(
        &snap,
        serde_json::json!({"kind": "List", "items": [
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "labs", "uid": "ns"}},
            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "labs", "uid": "cm",
              "finalizers": ["acme.example.com/cleanup"], "deletionTimestamp": "2026-11-29T11:30:00Z",
              "managedFields": [{"manager": "acme-operator", "operation": "Update",
                "fieldsV1": {"f:metadata": {"f:finalizers": {"v:\"acme.example.com/cleanup\"": {}}}}}]}},
            {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "acme-operator", "namespace": "acme", "uid": "d"},
              "spec": {"replicas": 1}, "status": {"readyReplicas": 1}}
        ]})
        .to_string(),
    )
    .unwrap();
    let server = ApiServer::start(&snap);
    let env = Env::new(&server.url(), None);
    let o = live(&env, &["why-stuck".into(), "cm/c".into(), "-n".into(), "labs".into()], &[]);
    assert_eq!(o.status.code(), Some(0), "the operator is alive: {}", stderr(&o));
    let v = json(&o);
    assert_eq!(v["finalizers"][0]["controller"], "Alive", "{v}");
    assert_eq!(v["finalizers"][0]["removedBy"], "Deployment acme/acme-operator");
    let reqs = server.requests();
    assert!(
        reqs.iter().any(|r| r.path == "/apis/apps/v1/deployments"
            && r.query.contains("fieldSelector=metadata.name%3Dacme-operator")),
        "{:?}",
        reqs.iter().map(|r| format!("{}?{}", r.path, r.query)).collect::<Vec<_>>()
    );
    assert!(
        !reqs.iter().any(|r| r.path == "/apis/apps/v1/deployments" && !r.query.contains("fieldSelector")),
        "no full cluster-wide list of deployments"
    );
    assert_read_only(&server);
}

#[test]
fn the_context_namespace_is_the_default_for_n() {
    let server = ApiServer::start(&site_basics());
    let env = Env::new(&server.url(), Some("labs"));
    let o = live(&env, &["why-stuck".into(), "site/alpha".into()], &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(json(&o)["object"]["namespace"], "labs");
    // without a context namespace, "default", where there is no such Site
    let env = Env::new(&server.url(), None);
    let o = live(&env, &["why-stuck".into(), "site/alpha".into()], &[]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("\"alpha\" not found in namespace \"default\""), "{}", stderr(&o));
}

#[test]
fn legacy_discovery_and_paging_give_the_same_answer() {
    let want = offline(
        &support::root().join("tests/fixtures/site-basics"),
        &["why-stuck".into(), "site/alpha".into(), "-n".into(), "labs".into()],
    );
    let server =
        ApiServer::start_with(&site_basics(), Options { aggregated: false, max_page: 1, ..Options::default() }, 0);
    let env = Env::new(&server.url(), None);
    let o = why_stuck_site(&env, &[]);
    assert_eq!(json(&o), json(&want));
    let reqs = server.requests();
    assert!(reqs.iter().any(|r| r.path == "/apis/apps/v1"), "legacy per-group discovery");
    assert!(reqs.iter().any(|r| r.query.contains("continue=")), "paged with continue");
    assert_read_only(&server);
}

/// A fault gives a flagged partial answer (exit 0 or 2, `incomplete` naming `mentions`), in
/// time.
fn assert_partial(fixture: &str, faults: Vec<Fault>, args: &[&str], mentions: &str) -> ApiServer {
    let snapshot = support::root().join("tests/fixtures").join(fixture).join("snapshot.json");
    let server = ApiServer::start_with(&snapshot, Options { faults, max_page: 1, ..Options::default() }, 0);
    let env = Env::new(&server.url(), None);
    let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    let start = Instant::now();
    let o = live(&env, &args, &["--request-timeout", "1s"]);
    assert!(start.elapsed() < Duration::from_secs(15), "took {:?}", start.elapsed());
    assert!(matches!(o.status.code(), Some(0 | 2)), "exit {:?}: {}", o.status.code(), stderr(&o));
    let inc = incomplete(&o);
    assert!(inc.iter().any(|i| i.contains(mentions)), "incomplete {inc:?} does not mention {mentions}");
    assert!(stderr(&o).contains("warning: incomplete:"), "{}", stderr(&o));
    assert_read_only(&server);
    server
}

const SITE: &[&str] = &["why-stuck", "site/alpha", "-n", "labs"];

#[test]
fn forbidden_type_is_named_in_incomplete() {
    assert_partial(
        "site-basics",
        vec![Fault::resource("secrets", FaultKind::Status(403))],
        SITE,
        "secrets in namespace \"labs\"",
    );
}

#[test]
fn server_errors_are_retried_then_named() {
    let s =
        assert_partial("site-basics", vec![Fault::resource("configmaps", FaultKind::Status(500))], SITE, "configmaps");
    let n = s.requests().iter().filter(|r| r.path.ends_with("/configmaps")).count();
    assert_eq!(n, 3, "a 500 is tried three times");
}

#[test]
fn persistent_429_is_named_and_a_passing_one_is_retried() {
    assert_partial(
        "site-basics",
        vec![Fault::resource("services", FaultKind::TooMany { retry_after: 0 })],
        SITE,
        "services",
    );
    let server = ApiServer::start_with(
        &site_basics(),
        Options {
            faults: vec![Fault::resource("services", FaultKind::TooMany { retry_after: 1 }).times(1)],
            ..Options::default()
        },
        0,
    );
    let env = Env::new(&server.url(), None);
    let o = why_stuck_site(&env, &[]);
    assert!(incomplete(&o).is_empty(), "{:?}", incomplete(&o));
}

#[test]
fn unavailable_api_group_is_named_and_the_rest_answers() {
    for aggregated in [true, false] {
        let snapshot = support::root().join("tests/fixtures/apiservice-down/snapshot.json");
        let faults = vec![Fault::group("metrics.k8s.io", FaultKind::Unavailable)];
        let server = ApiServer::start_with(&snapshot, Options { aggregated, faults, ..Options::default() }, 0);
        let env = Env::new(&server.url(), None);
        let o = live(&env, &["why-stuck".into(), "namespace/metrics-test".into()], &["--request-timeout", "2s"]);
        assert!(matches!(o.status.code(), Some(0 | 2)), "{}", stderr(&o));
        let inc = incomplete(&o);
        assert!(inc.iter().any(|i| i.contains("metrics.k8s.io/v1beta1")), "aggregated={aggregated}: {inc:?}");
        assert_read_only(&server);
    }
}

#[test]
fn expired_continue_relists_once_then_is_named() {
    // once: the list starts over and the answer is complete
    let server = ApiServer::start_with(
        &site_basics(),
        Options {
            max_page: 1,
            faults: vec![Fault::resource("configmaps", FaultKind::Gone).on_continue().times(1)],
            ..Options::default()
        },
        0,
    );
    let env = Env::new(&server.url(), None);
    let o = why_stuck_site(&env, &[]);
    assert!(incomplete(&o).is_empty(), "{:?}", incomplete(&o));
    let cm: Vec<_> = server.requests().into_iter().filter(|r| r.path == "/api/v1/namespaces/labs/configmaps").collect();
    assert!(cm.iter().filter(|r| !r.query.contains("continue")).count() == 2, "relisted from the start: {cm:?}");
    // always: named
    assert_partial(
        "site-basics",
        vec![Fault::resource("configmaps", FaultKind::Gone).on_continue()],
        SITE,
        "configmaps",
    );
}

#[test]
fn slow_list_times_out_and_is_named() {
    assert_partial(
        "site-basics",
        vec![Fault::resource("configmaps", FaultKind::Slow(Duration::from_secs(5)))],
        SITE,
        "no answer within 1s",
    );
}

#[test]
fn connection_reset_is_named() {
    assert_partial("site-basics", vec![Fault::resource("configmaps", FaultKind::Reset)], SITE, "configmaps");
}

#[test]
fn missing_type_is_named() {
    assert_partial("site-basics", vec![Fault::resource("services", FaultKind::Status(404))], SITE, "services");
}

#[test]
fn no_metadata_support_falls_back_to_full_lists_but_never_for_secrets() {
    let server = ApiServer::start_with(
        &site_basics(),
        Options { faults: vec![Fault::resource("configmaps", FaultKind::NoMetadata)], ..Options::default() },
        0,
    );
    let env = Env::new(&server.url(), None);
    let o = why_stuck_site(&env, &[]);
    assert!(incomplete(&o).is_empty(), "{:?}", incomplete(&o));
    assert!(
        server.requests().iter().any(|r| r.path.ends_with("/configmaps") && !r.wants_metadata()),
        "full-list fallback"
    );
    assert_partial("site-basics", vec![Fault::resource("secrets", FaultKind::NoMetadata)], SITE, "secrets");
}

/// A failure with nothing to answer: exit 1, one `error:` line, in time.
fn assert_fails(o: &Output, says: &str) {
    assert_eq!(o.status.code(), Some(1), "{}", stderr(o));
    let err = stderr(o);
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 1, "one line: {err}");
    assert!(lines[0].starts_with("error: ") && lines[0].contains(says), "{err}");
    assert!(o.stdout.is_empty());
}

#[test]
fn connection_failures_are_one_clear_line() {
    let site: Vec<String> = SITE.iter().map(|s| s.to_string()).collect();
    // unreachable
    let env = Env::new("http://127.0.0.1:9", None);
    assert_fails(&live(&env, &site, &[]), "cannot reach the API server at http://127.0.0.1:9");
    // unknown context
    assert_fails(&live(&env, &site, &["--context", "nope"]), "context \"nope\" does not exist");
    // a missing --kubeconfig
    assert_fails(&live(&env, &site, &["--kubeconfig", "/nonexistent/kubeconfig"]), "/nonexistent/kubeconfig");
    // no kubeconfig at all
    let mut c = env.command(support::bin());
    c.args(SITE);
    assert_fails(&run(c, DEADLINE), "no kubeconfig found");
    // discovery itself fails
    let server = ApiServer::start_with(
        &site_basics(),
        Options { faults: vec![Fault::path("/api", FaultKind::Status(500))], ..Options::default() },
        0,
    );
    let env = Env::new(&server.url(), None);
    assert_fails(&live(&env, &site, &[]), "/api");
    // a server that never answers
    let server = ApiServer::start_with(
        &site_basics(),
        Options { faults: vec![Fault::path("/apis", FaultKind::Slow(Duration::from_secs(30)))], ..Options::default() },
        0,
    );
    let env = Env::new(&server.url(), None);
    let start = Instant::now();
    assert_fails(&live(&env, &site, &["--request-timeout", "1s"]), "did not answer");
    assert!(start.elapsed() < Duration::from_secs(10));
}

#[test]
fn server_flag_and_token_work_without_a_kubeconfig() {
    let server = ApiServer::start(&site_basics());
    let env = Env::new(&server.url(), None);
    let mut c = env.command(support::bin());
    c.args(SITE).args(["-o", "json", "--now", NOW, "--server", &server.url(), "--token", "t0k"]);
    let o = run(c, DEADLINE);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(json(&o)["object"]["name"], "alpha");
    assert!(server.requests().iter().all(|r| r.authorization == "Bearer t0k"));
}

#[test]
fn exec_credentials_and_impersonation_reach_the_server() {
    let server = ApiServer::start(&site_basics());
    let env = Env::new(&server.url(), None);
    let script = env.dir.path().join("cred.sh");
    std::fs::write(
        &script,
        "#!/bin/sh\necho '{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\",\"status\":{\"token\":\"from-exec\"}}'\n",
    )
    .unwrap();
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    std::fs::write(
        &env.kubeconfig,
        format!(
            "apiVersion: v1\nkind: Config\ncurrent-context: exec\nclusters:\n- name: c\n  cluster:\n    server: {}\ncontexts:\n- name: exec\n  context:\n    cluster: c\n    user: u\n    namespace: labs\nusers:\n- name: u\n  user:\n    exec:\n      apiVersion: client.authentication.k8s.io/v1\n      command: {}\n      interactiveMode: Never\n",
            server.url(),
            script.display()
        ),
    )
    .unwrap();
    let o = live(&env, &["why-stuck".into(), "site/alpha".into()], &["--as", "jane"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let reqs = server.requests();
    assert!(reqs.iter().all(|r| r.authorization == "Bearer from-exec"), "{:?}", reqs.first());
    assert!(reqs.iter().all(|r| r.impersonate_user == "jane"));
    // --as-group without --as is refused, as kubectl does
    let o = live(&env, &["why-stuck".into(), "site/alpha".into()], &["--as-group", "devs"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("--as-group requires --as"), "{}", stderr(&o));
}

#[test]
fn user_extras_client_certificates_and_compression_flags_reach_the_server() {
    let server = ApiServer::start(&site_basics());
    let env = Env::new(&server.url(), Some("labs"));
    // extras go out as Impersonate-Extra-* headers, a key once per value, odd keys escaped
    let args = [
        "--as",
        "jane",
        "--as-user-extra",
        "scopes=view",
        "--as-user-extra",
        "scopes=edit",
        "--as-user-extra",
        "acme.io/team=a b",
    ];
    let o = live(&env, &["why-stuck".into(), "site/alpha".into()], &[&args[..], &["--disable-compression"]].concat());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let reqs = server.requests();
    assert!(!reqs.is_empty());
    for r in &reqs {
        assert_eq!(r.impersonate_user, "jane");
        // header names travel lower-cased; the API server unescapes %2f as %2F
        assert_eq!(r.impersonate_extra, ["scopes=view", "scopes=edit", "acme.io%2fteam=a b"], "{r:?}");
        assert_eq!(r.accept_encoding, "identity", "{r:?}");
    }
    // without --disable-compression the client takes gzip
    server.clear_requests();
    let o = live(&env, &["why-stuck".into(), "site/alpha".into()], &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(server.requests().iter().all(|r| r.accept_encoding.contains("gzip") && r.impersonate_extra.is_empty()));
    // refused as kubectl refuses them: extras without --as, a malformed extra, a missing cert
    let o = live(&env, &["why-stuck".into(), "site/alpha".into()], &["--as-user-extra", "k=v"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("--as-user-extra requires --as"), "{}", stderr(&o));
    let o = live(&env, &["why-stuck".into(), "site/alpha".into()], &["--as", "jane", "--as-user-extra", "novalue"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("KEY=VALUE"), "{}", stderr(&o));
    let o = live(&env, &["why-stuck".into(), "site/alpha".into()], &["--client-certificate", "/nonexistent/cert.pem"]);
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert!(err.starts_with("error: ") && err.contains("/nonexistent/cert.pem") && err.lines().count() == 1, "{err}");
}

#[test]
fn proxies_in_the_environment_are_not_used_for_loopback() {
    let server = ApiServer::start(&site_basics());
    let env = Env::new(&server.url(), None);
    let mut c = env.gc();
    c.args(SITE)
        .args(["-o", "json", "--now", NOW])
        .env("HTTPS_PROXY", "http://127.0.0.1:9")
        .env("NO_PROXY", "example.com");
    let o = run(c, DEADLINE);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

#[test]
fn snapshot_then_offline_reproduces_the_live_answers_on_every_fixture() {
    for fixture in fixtures() {
        let server = ApiServer::start(&fixture.join("snapshot.json"));
        let env = Env::new(&server.url(), None);
        let file = env.dir.path().join("captured.json");
        let mut c = env.gc();
        c.args(["snapshot", "-A", "--file"]).arg(&file);
        let o = run(c, DEADLINE);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        assert!(!server.requests().iter().any(|r| r.asks_drop()), "a capture keeps managedFields");
        // a capture keeps the Events it reads, with their bodies, and answers show them
        let events = |v: &Value| -> Vec<Value> {
            v["items"].as_array().into_iter().flatten().filter(|o| o["kind"] == "Event").cloned().collect()
        };
        let read = |p: &Path| -> Value { serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap() };
        let fixture_events = events(&read(&fixture.join("snapshot.json")));
        let captured = read(&file);
        for e in &fixture_events {
            let kept = events(&captured).into_iter().find(|c| c["metadata"]["uid"] == e["metadata"]["uid"]);
            let kept = kept.unwrap_or_else(|| {
                panic!("{}: the capture dropped Event {}", fixture.display(), e["metadata"]["name"])
            });
            for field in ["involvedObject", "reason", "message", "type", "count", "lastTimestamp", "source"] {
                assert_eq!(
                    kept[field],
                    e[field],
                    "{}: Event {} lost {field}",
                    fixture.display(),
                    e["metadata"]["name"]
                );
            }
        }
        for args in comparable_checks(&fixture) {
            let got = live(&env, &args, &[]);
            let mut c = env.command(support::bin());
            c.args(&args).args(["-o", "json", "--now", NOW, "--snapshot"]).arg(&file);
            let replay = run(c, DEADLINE);
            let what = format!("{} {}", fixture.display(), args.join(" "));
            assert_eq!(replay.status.code(), got.status.code(), "{what}: {}", stderr(&replay));
            assert_eq!(json(&replay), json(&got), "{what}");
        }
        assert_read_only(&server);
    }
}

#[test]
fn namespace_snapshot_records_discovery_capture_time_and_gaps() {
    let server = ApiServer::start_with(
        &site_basics(),
        Options { faults: vec![Fault::resource("secrets", FaultKind::Status(403))], ..Options::default() },
        0,
    );
    let env = Env::new(&server.url(), None);
    let mut c = env.gc();
    c.args(["snapshot", "-n", "labs"]);
    let o = run(c, DEADLINE);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["kind"], "List");
    assert!(v["capturedAt"].as_str().is_some());
    // typed, with the line beside it
    let gap = &v["incomplete"][0];
    assert_eq!(gap["what"]["read"], "list", "{gap}");
    assert_eq!((gap["what"]["group"].as_str(), gap["what"]["resource"].as_str()), (Some(""), Some("secrets")), "{gap}");
    assert!(gap["why"].as_str().unwrap().contains("403"), "{gap}");
    assert!(gap["line"].as_str().unwrap().starts_with("secrets"), "{gap}");
    let items = v["items"].as_array().unwrap();
    assert!(items.iter().any(|i| i["kind"] == "APIResourceList" && i["groupVersion"] == "own.labhub.io/v1"));
    assert!(items.iter().any(|i| i["kind"] == "Site"));
    assert!(!items.iter().any(|i| i["metadata"]["namespace"] == "site-system" && i["kind"] == "ConfigMap"));
    assert_read_only(&server);
}

#[test]
fn discovery_is_cached_like_kubectl_and_a_stale_cache_is_refreshed() {
    let server = ApiServer::start(&site_basics());
    let env = Env::new(&server.url(), None);
    let cache = env.dir.path().join("cache");
    let cache_arg = cache.to_str().unwrap();
    let o = why_stuck_site(&env, &["--cache-dir", cache_arg]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let host = server.url().replace("http://", "").replace(':', "_");
    let file = cache.join("discovery").join(&host).join("kubectl-gc.json");
    assert!(file.exists(), "no cache at {}", file.display());

    // a second run asks no discovery question
    server.clear_requests();
    let again = why_stuck_site(&env, &["--cache-dir", cache_arg]);
    assert_eq!(json(&again), json(&o));
    assert!(!server.requests().iter().any(|r| r.path == "/api" || r.path == "/apis"), "{:?}", server.requests());

    // a cache that does not know the Site type is refreshed, not trusted
    let core_only = r#"{"fetchedAt": FETCHED, "aggregated": true, "items": [{"kind":"APIResourceList","apiVersion":"v1","groupVersion":"v1","resources":[
        {"name":"configmaps","singularName":"configmap","namespaced":true,"kind":"ConfigMap","verbs":["get","list"]}]}]}"#;
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs();
    std::fs::write(&file, core_only.replace("FETCHED", &now.to_string())).unwrap();
    server.clear_requests();
    let refreshed = why_stuck_site(&env, &["--cache-dir", cache_arg]);
    assert_eq!(json(&refreshed), json(&o), "{}", stderr(&refreshed));
    assert!(server.requests().iter().any(|r| r.path == "/apis"));

    // KUBECACHEDIR, else HOME/.kube/cache
    let o = why_stuck_site(&env, &[]);
    assert_eq!(o.status.code(), Some(0));
    assert!(env.home.join(".kube/cache/discovery").join(&host).join("kubectl-gc.json").exists());
    let mut c = env.gc();
    c.args(SITE).args(["-o", "json", "--now", NOW]).env("KUBECACHEDIR", env.dir.path().join("kcd"));
    assert_eq!(run(c, DEADLINE).status.code(), Some(0));
    assert!(env.dir.path().join("kcd/discovery").join(&host).join("kubectl-gc.json").exists());
    assert_read_only(&server);
}

/// A CRD's schema, as big as generated provider schemas make them.
fn big_schema() -> Value {
    let props: serde_json::Map<String, Value> = (0..200)
        .map(|i| (format!("field{i}"), serde_json::json!({"type": "string", "description": "x".repeat(100)})))
        .collect();
    serde_json::json!({"openAPIV3Schema": {"type": "object", "properties": {"spec": {"type": "object", "properties": props}}}})
}

fn crd(plural: &str, kind: &str, deleting: bool) -> Value {
    let mut meta = serde_json::json!({"name": format!("{plural}.acme.example.com"), "uid": format!("crd-{plural}"), "resourceVersion": "10",
        "finalizers": ["customresourcecleanup.apiextensions.k8s.io"]});
    let mut conditions = vec![serde_json::json!({"type": "Established", "status": "True"})];
    if deleting {
        meta["deletionTimestamp"] = "2026-11-29T10:00:00Z".into();
        conditions
            .push(serde_json::json!({"type": "Terminating", "status": "True", "reason": "InstanceDeletionInProgress"}));
    }
    serde_json::json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", "metadata": meta,
        "spec": {"group": "acme.example.com", "scope": "Namespaced",
                 "names": {"kind": kind, "plural": plural, "singular": kind.to_lowercase(), "listKind": format!("{kind}List")},
                 "versions": [{"name": "v1", "served": true, "storage": true, "schema": big_schema()}]},
        "status": {"conditions": conditions, "acceptedNames": {"kind": kind, "plural": plural}, "storedVersions": ["v1"]}})
}

fn write_snapshot(dir: &Path, items: Vec<Value>) -> std::path::PathBuf {
    let file = dir.join("snapshot.json");
    std::fs::write(&file, serde_json::json!({"kind": "List", "items": items}).to_string()).unwrap();
    file
}

fn offline_file(file: &Path, args: &[String]) -> Output {
    let env = Env::new("http://127.0.0.1:9", None);
    let mut c = env.command(support::bin());
    c.args(args).args(["-o", "json", "--now", NOW, "--snapshot"]).arg(file);
    run(c, DEADLINE)
}

const CRDS: &str = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";

#[test]
fn crds_are_listed_metadata_only_and_read_in_full_only_where_an_answer_reads_them() {
    let dir = tempfile::tempdir().unwrap();
    let file = write_snapshot(
        dir.path(),
        vec![
            serde_json::json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "labs", "uid": "ns"}, "status": {"phase": "Active"}}),
            crd("widgets", "Widget", true),
            crd("gadgets", "Gadget", false),
            serde_json::json!({"apiVersion": "acme.example.com/v1", "kind": "Widget", "metadata": {"name": "w1", "namespace": "labs", "uid": "w1",
                "deletionTimestamp": "2026-11-29T10:00:00Z", "finalizers": ["acme.example.com/cleanup"]}}),
            serde_json::json!({"apiVersion": "acme.example.com/v1", "kind": "Gadget", "metadata": {"name": "g1", "namespace": "labs", "uid": "g1"}}),
        ],
    );
    let server = ApiServer::start(&file);
    let env = Env::new(&server.url(), None);
    let args = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<String>>();
    let widgets = format!("{CRDS}/widgets.acme.example.com");
    let gadgets = format!("{CRDS}/gadgets.acme.example.com");
    for (a, fetched) in [
        // a deleting CRD, asked about: its cleanup explained from its body
        (args(&["why-stuck", "crd/widgets.acme.example.com"]), vec![&widgets]),
        (args(&["tree", "crd/widgets.acme.example.com"]), vec![&widgets]),
        // an instance: the deleting CRD is read in full, the other not at all
        (args(&["why-stuck", "widget/w1", "-n", "labs"]), vec![&widgets]),
        (args(&["tree", "gadget/g1", "-n", "labs"]), vec![&widgets]),
        // a plan that deletes a CRD reads its body (its instances go first)
        (args(&["plan", "crd/gadgets.acme.example.com"]), vec![&gadgets, &widgets]),
    ] {
        server.clear_requests();
        let want = offline_file(&file, &a);
        let got = live(&env, &a, &[]);
        assert_eq!(got.status.code(), want.status.code(), "{a:?}: {}", stderr(&got));
        assert_eq!(json(&got), json(&want), "{a:?}: live and offline differ");
        assert!(!stderr(&got).contains("incomplete"), "{a:?}: {}", stderr(&got));
        let reqs = server.requests();
        let lists: Vec<_> = reqs.iter().filter(|r| r.path == CRDS).collect();
        assert_eq!(lists.len(), 1, "{a:?}: one list of CRDs");
        assert!(lists[0].wants_metadata(), "{a:?}: the CRD list is metadata-only: {:?}", lists[0]);
        let mut got_full: Vec<&String> = reqs
            .iter()
            .filter(|r| r.path.starts_with(&format!("{CRDS}/")) && !r.wants_metadata())
            .map(|r| &r.path)
            .collect();
        got_full.sort();
        got_full.dedup();
        assert_eq!(got_full, fetched, "{a:?}: CRDs read in full");
        assert_read_only(&server);
    }
    // the stuck cleanup is explained as offline does: from the CRD's group and kind
    let v = json(&live(&env, &args(&["why-stuck", "crd/widgets.acme.example.com"]), &[]));
    let messages: Vec<&str> = v["findings"].as_array().unwrap().iter().filter_map(|f| f["message"].as_str()).collect();
    assert!(messages.iter().any(|m| m.contains("deletes every Widget first; 1 instance(s) remain")), "{messages:?}");

    // a capture keeps every CRD in full
    server.clear_requests();
    let mut c = env.gc();
    c.args(["snapshot", "-A", "--file"]).arg(dir.path().join("capture.json"));
    assert_eq!(run(c, DEADLINE).status.code(), Some(0));
    assert!(server.requests().iter().any(|r| r.path == CRDS && !r.wants_metadata()), "a capture lists CRDs in full");
    let capture: Value = serde_json::from_slice(&std::fs::read(dir.path().join("capture.json")).unwrap()).unwrap();
    let gadget_crd = capture["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["metadata"]["name"] == "gadgets.acme.example.com")
        .unwrap();
    assert_eq!(gadget_crd["spec"]["names"]["kind"], "Gadget");
}

#[test]
fn many_crds_wanted_in_full_are_read_with_one_list() {
    let dir = tempfile::tempdir().unwrap();
    let mut items =
        vec![serde_json::json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "labs", "uid": "ns"}})];
    for i in 0..40 {
        items.push(crd(&format!("things{i}"), &format!("Thing{i}"), true));
    }
    items.push(crd("gadgets", "Gadget", false));
    // an instance left: the cleanup waits for it, offline as live (with none, only discovery
    // data, which a plain file lacks, says the kind was listed)
    items.push(serde_json::json!({"apiVersion": "acme.example.com/v1", "kind": "Thing7",
        "metadata": {"name": "t", "namespace": "labs", "uid": "thing-t"}}));
    let file = write_snapshot(dir.path(), items);
    let server = ApiServer::start(&file);
    let env = Env::new(&server.url(), None);
    let a: Vec<String> = ["why-stuck", "crd/things7.acme.example.com"].iter().map(|s| s.to_string()).collect();
    let want = offline_file(&file, &a);
    server.clear_requests();
    let got = live(&env, &a, &[]);
    assert_eq!(got.status.code(), want.status.code(), "{}", stderr(&got));
    assert_eq!(json(&got), json(&want));
    let reqs = server.requests();
    assert_eq!(reqs.iter().filter(|r| r.path == CRDS && r.wants_metadata()).count(), 1);
    assert_eq!(reqs.iter().filter(|r| r.path == CRDS && !r.wants_metadata()).count(), 1, "one full list for 41 CRDs");
    // the target's existence check (metadata-only) aside, no CRD is fetched by name
    let by_name: Vec<_> = reqs.iter().filter(|r| r.path.starts_with(&format!("{CRDS}/"))).collect();
    assert!(by_name.iter().all(|r| r.path.ends_with("/things7.acme.example.com") && r.wants_metadata()), "{by_name:?}");
}

#[test]
fn the_discovery_cache_is_refreshed_when_a_crd_changes() {
    let fixture = site_basics();
    let mut doc: Value = serde_json::from_str(&std::fs::read_to_string(&fixture).unwrap()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    fn crd_of(doc: &mut Value) -> &mut Value {
        doc["items"].as_array_mut().unwrap().iter_mut().find(|i| i["kind"] == "CustomResourceDefinition").unwrap()
    }
    // the same CRD with a label changed (nothing served changes), and with a version added
    crd_of(&mut doc)["metadata"]["resourceVersion"] = "2001".into();
    crd_of(&mut doc)["metadata"]["labels"] = serde_json::json!({"touched": "yes"});
    let relabelled = dir.path().join("relabelled.json");
    std::fs::write(&relabelled, doc.to_string()).unwrap();
    crd_of(&mut doc)["metadata"]["resourceVersion"] = "2002".into();
    crd_of(&mut doc)["spec"]["versions"]
        .as_array_mut()
        .unwrap()
        .push(serde_json::json!({"name": "v1beta1", "served": true, "storage": false}));
    let versioned = dir.path().join("versioned.json");
    std::fs::write(&versioned, doc.to_string()).unwrap();

    let original = ApiServer::start(&fixture);
    let env = Env::new(&original.url(), None);
    let cache = env.dir.path().join("cache");
    let cache_arg = cache.to_str().unwrap();
    let cached_file = |s: &ApiServer| {
        cache.join("discovery").join(s.url().replace("http://", "").replace(':', "_")).join("kubectl-gc.json")
    };
    let o = why_stuck_site(&env, &["--cache-dir", cache_arg]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let recorded: Value = serde_json::from_slice(&std::fs::read(cached_file(&original)).unwrap()).unwrap();
    assert_eq!(
        recorded["crds"],
        serde_json::json!({"sites.own.labhub.io": "1004"}),
        "the CRDs seen are recorded with the cache"
    );
    // unchanged: no discovery
    original.clear_requests();
    why_stuck_site(&env, &["--cache-dir", cache_arg]);
    assert!(!original.requests().iter().any(|r| r.path == "/apis"), "an unchanged cluster asks no discovery question");

    for (snapshot, served_changes) in [(&relabelled, false), (&versioned, true)] {
        // the same cache, against a server where the CRD changed
        let changed = ApiServer::start(snapshot);
        let fresh_env = Env::new(&changed.url(), None);
        let uncached = why_stuck_site(&fresh_env, &[]);
        let to = cached_file(&changed);
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(cached_file(&original), &to).unwrap();
        let env = Env::new(&changed.url(), None);
        changed.clear_requests();
        let got = why_stuck_site(&env, &["--cache-dir", cache_arg]);
        assert_eq!(json(&got), json(&uncached), "{}", stderr(&got));
        let reqs = changed.requests();
        assert!(reqs.iter().any(|r| r.path == "/apis"), "a changed CRD makes the cached discovery stale");
        let crd_lists = reqs.iter().filter(|r| r.path == CRDS).count();
        assert_eq!(crd_lists, if served_changes { 2 } else { 1 }, "read again only when discovery changed");
        let recorded: Value = serde_json::from_slice(&std::fs::read(&to).unwrap()).unwrap();
        let rv = if served_changes { "2002" } else { "2001" };
        assert_eq!(recorded["crds"]["sites.own.labhub.io"], rv);
        if served_changes {
            assert!(recorded["items"].as_array().unwrap().iter().any(|l| l["groupVersion"] == "own.labhub.io/v1beta1"));
        }
        // and then trusted again
        changed.clear_requests();
        why_stuck_site(&env, &["--cache-dir", cache_arg]);
        assert!(!changed.requests().iter().any(|r| r.path == "/apis"));
        assert_read_only(&changed);
    }
}

/// A snapshot of a ConfigMap held by a finalizer that `acme-operator` set (managedFields), the
/// operator's Deployment, and `extra` ConfigMaps with finalizers too.
fn finalizer_manager_snapshot(dir: &Path, extra: usize) -> std::path::PathBuf {
    let held = |name: String| {
        serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "labs", "uid": format!("uid-{name}"),
          "finalizers": ["acme.example.com/cleanup"], "deletionTimestamp": "2026-11-29T11:30:00Z",
          "managedFields": [{"manager": "acme-operator", "operation": "Update", "apiVersion": "v1", "fieldsType": "FieldsV1",
            "fieldsV1": {"f:metadata": {"f:finalizers": {".": {}, "v:\"acme.example.com/cleanup\"": {}}}}},
            {"manager": "kubectl-client-side-apply", "operation": "Update", "apiVersion": "v1", "fieldsType": "FieldsV1",
            "fieldsV1": {"f:data": {".": {}, "f:k": {}}}}]}})
    };
    let mut items = vec![
        serde_json::json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "labs", "uid": "ns"}}),
        serde_json::json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "acme-operator", "namespace": "acme", "uid": "d",
          "managedFields": [{"manager": "kube-controller-manager", "operation": "Update", "subresource": "status", "fieldsV1": {"f:status": {}}}]},
          "spec": {"replicas": 1}, "status": {"readyReplicas": 1}}),
        held("c".into()),
    ];
    items.extend((0..extra).map(|i| held(format!("c{i}"))));
    write_snapshot(dir, items)
}

fn why_stuck_c(env: &Env) -> Output {
    live(env, &["why-stuck".into(), "cm/c".into(), "-n".into(), "labs".into()], &[])
}

#[test]
fn lists_ask_without_managed_fields_first_and_finalizer_managers_are_read_again() {
    let dir = tempfile::tempdir().unwrap();
    let snap = finalizer_manager_snapshot(dir.path(), 0);
    let want = offline_file(&snap, &["why-stuck".into(), "cm/c".into(), "-n".into(), "labs".into()]);
    assert_eq!(want.status.code(), Some(0), "{}", stderr(&want));
    assert_eq!(json(&want)["finalizers"][0]["removedBy"], "Deployment acme/acme-operator", "{}", stdout(&want));
    for mode in [DropManagedFields::Honour, DropManagedFields::Ignore, DropManagedFields::Skip] {
        let server = ApiServer::start_with(&snap, Options { drop_managed_fields: mode, ..Options::default() }, 0);
        let env = Env::new(&server.url(), None);
        let got = why_stuck_c(&env);
        assert_eq!(got.status.code(), want.status.code(), "{mode:?}: {}", stderr(&got));
        assert_eq!(json(&got), json(&want), "{mode:?}: the manager-attributed answer differs from offline");
        let reqs = server.requests();
        let shown =
            || reqs.iter().map(|r| format!("{} {}?{} [{}]", r.method, r.path, r.query, r.accept)).collect::<Vec<_>>();
        // metadata-only lists ask without managedFields first, in JSON (the one form KEP-5958
        // strips), then as before; once a server shows it ignores that, protobuf first
        let metadata_lists: Vec<_> =
            reqs.iter().filter(|r| r.accept.contains("as=PartialObjectMetadataList")).collect();
        assert!(!metadata_lists.is_empty());
        assert!(metadata_lists[0].asks_drop_first(), "{mode:?}: the first list asks without managedFields");
        for r in &metadata_lists {
            let media: Vec<&str> = r.accept.split(',').map(str::trim).collect();
            let asking = [
                "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1;drop=metadata.managedFields",
                "application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1",
                "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1",
            ];
            let plain = &asking[1..];
            match mode {
                DropManagedFields::Honour => assert_eq!(media, asking, "{mode:?}: {}", r.path),
                _ => assert!(media == asking || media == plain, "{mode:?}: {} {media:?}", r.path),
            }
        }
        // full-body lists keep managedFields
        assert!(reqs.iter().filter(|r| !r.wants_metadata()).all(|r| !r.asks_drop()), "{mode:?}: {:#?}", shown());
        // the held ConfigMap's managers: read again (one metadata-only GET, with managedFields)
        // only where the list came without them
        let follow_ups =
            reqs.iter().filter(|r| r.path == "/api/v1/namespaces/labs/configmaps/c" && !r.asks_drop()).count();
        let existence = 1; // the target is looked up before the lists
        match mode {
            DropManagedFields::Honour => {
                assert!(server.dropped_answers() > 0);
                assert_eq!(follow_ups, existence + 1, "{mode:?}: {:#?}", shown());
            }
            _ => {
                assert_eq!(server.dropped_answers(), 0);
                assert_eq!(follow_ups, existence, "{mode:?}: no follow-up where managedFields came: {:#?}", shown());
            }
        }
        assert!(
            reqs.iter().any(|r| r.path == "/apis/apps/v1/deployments"
                && r.query.contains("fieldSelector=metadata.name%3Dacme-operator")),
            "{mode:?}: {:#?}",
            shown()
        );
        assert_read_only(&server);
    }
}

#[test]
fn many_objects_whose_managed_fields_were_dropped_are_read_again_with_a_list() {
    let dir = tempfile::tempdir().unwrap();
    let snap = finalizer_manager_snapshot(dir.path(), 40);
    let args: Vec<String> = vec!["why-stuck".into(), "cm/c".into(), "-n".into(), "labs".into()];
    let want = offline_file(&snap, &args);
    let server = ApiServer::start(&snap);
    let env = Env::new(&server.url(), None);
    let got = why_stuck_c(&env);
    assert_eq!(got.status.code(), want.status.code(), "{}", stderr(&got));
    assert_eq!(json(&got), json(&want));
    let reqs = server.requests();
    let gets = reqs.iter().filter(|r| r.path.starts_with("/api/v1/namespaces/labs/configmaps/")).count();
    assert_eq!(gets, 1, "only the target's existence is a GET");
    let relists: Vec<_> = reqs
        .iter()
        .filter(|r| r.path == "/api/v1/namespaces/labs/configmaps" && r.wants_metadata() && !r.asks_drop())
        .collect();
    assert_eq!(relists.len(), 1, "one list of the namespace with managedFields");
    // and the cluster-wide answer (-A) reads them again too
    let all = live(&env, &["why-stuck".into(), "cm/c".into(), "-n".into(), "labs".into(), "-A".into()], &[]);
    let want_all = offline_file(&snap, &["why-stuck".into(), "cm/c".into(), "-n".into(), "labs".into(), "-A".into()]);
    assert_eq!(json(&all), json(&want_all), "{}", stderr(&all));
    assert_read_only(&server);
}

#[test]
fn built_in_finalizers_need_no_managed_fields_read_again() {
    let dir = tempfile::tempdir().unwrap();
    // b is in another namespace: listed metadata-only (without managedFields) only
    let pvc = |name: &str, ns: &str| {
        serde_json::json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": name, "namespace": ns, "uid": format!("uid-{name}"),
          "finalizers": ["kubernetes.io/pvc-protection"], "deletionTimestamp": "2026-11-29T10:00:00Z",
          "managedFields": [{"manager": "kube-controller-manager", "operation": "Update", "fieldsV1": {"f:metadata": {"f:finalizers": {"v:\"kubernetes.io/pvc-protection\"": {}}}}}]},
          "spec": {}, "status": {"phase": "Bound"}})
    };
    let snap = write_snapshot(
        dir.path(),
        vec![
            serde_json::json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "labs", "uid": "ns"}}),
            serde_json::json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "other", "uid": "ns2"}}),
            pvc("a", "labs"),
            pvc("b", "other"),
            serde_json::json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "other", "uid": "pod-p"},
              "spec": {"nodeName": "n1"}, "status": {"phase": "Running"}}),
        ],
    );
    let args: Vec<String> = vec!["why-stuck".into(), "pvc/a".into(), "-n".into(), "labs".into(), "-A".into()];
    let want = offline_file(&snap, &args);
    let server = ApiServer::start(&snap);
    let env = Env::new(&server.url(), None);
    let got = live(&env, &args, &[]);
    assert_eq!(got.status.code(), want.status.code(), "{}", stderr(&got));
    assert_eq!(json(&got), json(&want));
    let reqs = server.requests();
    assert!(server.dropped_answers() > 0);
    assert!(
        reqs.iter().any(|r| r.path == "/api/v1/persistentvolumeclaims" && r.asks_drop_first()),
        "listed without managedFields everywhere"
    );
    assert!(
        !reqs.iter().any(|r| r.path.ends_with("/persistentvolumeclaims/b")),
        "no follow-up for a built-in finalizer"
    );
    assert!(
        !reqs.iter().any(|r| r.wants_metadata() && !r.asks_drop() && r.path.ends_with("/persistentvolumeclaims")),
        "no relist"
    );
    assert_read_only(&server);
}

/// KEP-5958 strips managedFields from JSON answers only: the opt-out is asked for in JSON first,
/// and once a server's answer shows it ignores it (JSON with managedFields), the lists after it
/// ask for protobuf first, as before the opt-out existed.
#[test]
fn a_server_ignoring_the_opt_out_gets_protobuf_first_after_its_first_answer() {
    let dir = tempfile::tempdir().unwrap();
    let snap = finalizer_manager_snapshot(dir.path(), 0);
    for (mode, protobuf_later) in [(DropManagedFields::Ignore, true), (DropManagedFields::Honour, false)] {
        let server = ApiServer::start_with(&snap, Options { drop_managed_fields: mode, ..Options::default() }, 0);
        let env = Env::new(&server.url(), None);
        let args: Vec<String> = vec!["tree".into(), "cm/c".into(), "-n".into(), "labs".into()];
        let got = live(&env, &args, &["--concurrency", "1"]);
        assert!(matches!(got.status.code(), Some(0 | 2)), "{mode:?}: {}", stderr(&got));
        let lists: Vec<_> = server
            .requests()
            .into_iter()
            .filter(|r| r.accept.contains("as=PartialObjectMetadataList") && r.asks_drop() == r.asks_drop_first())
            .collect();
        let first = lists.iter().position(|r| r.asks_drop_first()).expect("the opt-out is asked for");
        assert!(lists[first].accept.starts_with("application/json;"), "JSON first: {}", lists[first].accept);
        let protobuf_first =
            lists.iter().filter(|r| r.accept.starts_with("application/vnd.kubernetes.protobuf")).count();
        assert_eq!(protobuf_first > 0, protobuf_later, "{mode:?}");
        if protobuf_later {
            assert!(server.protobuf_answers() >= protobuf_first, "{mode:?}");
        } else {
            assert!(server.dropped_answers() > 0, "{mode:?}");
        }
        assert_read_only(&server);
    }
}

/// A CRD whose conversion webhook's Service is gone, served as the API server serves it: a
/// list of its objects at any version but the storage one fails whole (500), through kubectl
/// too; at the storage version it answers. The live answer then reads the objects at the
/// version that answers, and equals the answer on a capture of the same server.
#[test]
fn a_dead_conversion_webhook_fails_other_versions_and_the_stored_one_is_read() {
    let fixture = support::root().join("tests/fixtures/conversion-webhook-down");
    let server = ApiServer::start(&fixture.join("snapshot.json"));
    let env = Env::new(&server.url(), None);

    if let Some(kubectl) = support::kubectl() {
        let mut c = env.command(&kubectl);
        c.args(["get", "carts.v2.shop.example.net", "-n", "orders"]).env("KUBECONFIG", &env.kubeconfig);
        let v2 = run(c, DEADLINE);
        assert_ne!(v2.status.code(), Some(0));
        assert!(
            stderr(&v2).contains("Error from server: conversion webhook for shop.example.net/v1, Kind=Cart failed")
                && stderr(&v2).contains("service \"cart-converter\" not found"),
            "{}",
            stderr(&v2)
        );
        let mut c = env.command(&kubectl);
        c.args(["get", "carts.v1.shop.example.net", "-n", "orders", "-o", "name"]).env("KUBECONFIG", &env.kubeconfig);
        let v1 = run(c, DEADLINE);
        assert_eq!(
            stdout(&v1),
            "cart.shop.example.net/cart-8841\ncart.shop.example.net/cart-9127\n",
            "{}",
            stderr(&v1)
        );
    }

    let args: Vec<String> = ["why-stuck", "ns/orders"].map(String::from).into();
    let got = live(&env, &args, &[]);
    assert_eq!(got.status.code(), Some(2), "{}", stderr(&got));
    let carts = |version: &str| {
        server
            .requests()
            .into_iter()
            .filter(|r| r.path.starts_with(&format!("/apis/shop.example.net/{version}/")) && r.path.ends_with("/carts"))
            .count()
    };
    assert!(carts("v2") > 0 && carts("v1") > 0, "the preferred version first, then the stored one");
    let answer = json(&got);
    let named: Vec<&str> = answer["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["code"] == "ConversionWebhookUnavailable")
        .filter_map(|f| f["object"]["name"].as_str())
        .collect();
    assert!(named.contains(&"cart-8841") && named.contains(&"cart-9127"), "{named:?}");

    let file = env.dir.path().join("captured.json");
    let mut c = env.gc();
    c.args(["snapshot", "-A", "--file"]).arg(&file);
    let o = run(c, DEADLINE);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let captured: Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    let stored: Vec<&Value> = captured["items"].as_array().unwrap().iter().filter(|o| o["kind"] == "Cart").collect();
    assert_eq!(stored.len(), 2);
    assert!(stored.iter().all(|o| o["apiVersion"] == "shop.example.net/v1"));
    let mut c = env.command(support::bin());
    c.args(&args).args(["-o", "json", "--now", NOW, "--snapshot"]).arg(&file);
    assert_eq!(json(&run(c, DEADLINE)), answer);

    // followed at the version that answered: the watch runs until its timeout, no failure
    let before = server.requests().len();
    let watched = live(&env, &args, &["--watch", "--timeout", "3s"]);
    // the answer is stuck (the dead webhook): at the timeout that is 2, as the answer says
    assert_eq!(watched.status.code(), Some(2), "{}", stderr(&watched));
    assert!(stderr(&watched).contains("--timeout passed and the deletion is stuck"), "{}", stderr(&watched));
    let watches: Vec<String> =
        server.requests()[before..].iter().filter(|r| r.is_watch()).map(|r| r.path.clone()).collect();
    assert!(watches.iter().any(|p| p.starts_with("/apis/shop.example.net/v1/")), "{watches:?}");
    assert!(!watches.iter().any(|p| p.starts_with("/apis/shop.example.net/v2/")), "{watches:?}");
    assert_read_only(&server);
}

//! The live path against the in-process API server: the same answers as offline, read-only,
//! metadata-only, and partial answers (never hangs) under faults.

use std::path::Path;
use std::process::Output;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::apiserver::{ApiServer, Fault, FaultKind, Options};
use crate::support::{self, assert_read_only, checks, fixtures, run, stderr, stdout, Env, DEADLINE, NOW};

/// The checks a fixture's answers are compared on: its why-stuck, tree and plan checks with
/// `-o json`, plus a tree of every why-stuck target.
fn comparable_checks(fixture: &Path) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    for args in checks(fixture) {
        match args[0].as_str() {
            "why-stuck" => {
                let mut tree = args.clone();
                tree[0] = "tree".into();
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

fn offline(fixture: &Path, args: &[String]) -> Output {
    let env = Env::new("http://127.0.0.1:9", None);
    let mut c = env.command(support::bin());
    c.args(args).args(["-o", "json", "--now", NOW, "--snapshot"]).arg(fixture.join("snapshot.json"));
    run(c, DEADLINE)
}

fn live(env: &Env, args: &[String], extra: &[&str]) -> Output {
    let mut c = env.gc();
    c.args(args).args(["-o", "json", "--now", NOW, "--request-timeout", "5s"]).args(extra);
    run(c, DEADLINE)
}

fn json(o: &Output) -> Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {}\nstderr: {}", stdout(o), stderr(o)))
}

/// Whether the offline binary supports the subcommand yet (plan may not exist in this build).
fn supported(o: &Output) -> bool {
    !(o.status.code() == Some(1) && stderr(o).contains("not available"))
}

#[test]
fn live_answers_equal_offline_answers_on_every_fixture() {
    let mut compared = 0;
    for fixture in fixtures() {
        let server = ApiServer::start(&fixture.join("snapshot.json"));
        let env = Env::new(&server.url(), None);
        for args in comparable_checks(&fixture) {
            let want = offline(&fixture, &args);
            if !supported(&want) {
                continue;
            }
            let got = live(&env, &args, &[]);
            let what = format!("{} {}", fixture.display(), args.join(" "));
            assert_eq!(got.status.code(), want.status.code(), "{what}: exit code\nlive stderr: {}", stderr(&got));
            assert_eq!(json(&got), json(&want), "{what}: live and offline JSON differ");
            assert!(!stderr(&got).contains("incomplete"), "{what}: {}", stderr(&got));
            compared += 1;
        }
        assert_read_only(&server);
        assert!(server.requests().iter().any(|r| r.wants_metadata()), "no metadata-only list was made");
    }
    assert!(compared >= 10, "only {compared} answers compared");
}

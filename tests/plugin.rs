//! kubectl-gc through the real kubectl (the one on PATH; absent, these tests fail unless
//! `KUBECTL_GC_TEST_NO_KUBECTL=1`): plugin discovery, dispatch, and kubectl itself against the
//! test API server (its discovery wire format).

use std::path::PathBuf;

use crate::support::apiserver::ApiServer;
use crate::support::{self, DEADLINE, Env, NOW, assert_read_only, run, stderr, stdout};

/// A bin directory holding only the plugin (as an install would), first on PATH. (The cargo
/// target dir itself also holds `kubectl-gc.d`, which kubectl would warn about as a
/// non-executable plugin.)
fn plugin_path(env: &Env) -> (PathBuf, String) {
    let bin = env.dir.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let link = bin.join("kubectl-gc");
    if !link.exists() {
        std::os::unix::fs::symlink(support::bin(), &link).unwrap();
    }
    let mut dirs = vec![bin.clone()];
    dirs.extend(support::path_without_other_plugins());
    let path = std::env::join_paths(dirs).unwrap().to_string_lossy().into_owned();
    (bin, path)
}

fn site_basics() -> PathBuf {
    support::root().join("tests/fixtures/site-basics/snapshot.json")
}

#[test]
fn kubectl_lists_the_plugin_without_warnings() {
    let Some(kubectl) = support::kubectl() else { return };
    let env = Env::new("http://127.0.0.1:9", None);
    let (bin, path) = plugin_path(&env);
    let mut c = env.command(&kubectl);
    c.args(["plugin", "list"]).env("PATH", path);
    let o = run(c, DEADLINE);
    let out = stdout(&o);
    let err = stderr(&o);
    assert!(out.lines().any(|l| l == bin.join("kubectl-gc").display().to_string()), "{out}\n{err}");
    for line in out.lines().chain(err.lines()) {
        assert!(!(line.contains("kubectl-gc") && line.contains("warning")), "{line}");
    }
}

#[test]
fn kubectl_gc_prints_what_kubectl_gc_prints() {
    let Some(kubectl) = support::kubectl() else { return };
    let server = ApiServer::start(&site_basics());
    let env = Env::new(&server.url(), Some("labs"));
    let (_, path) = plugin_path(&env);
    let args = ["why-stuck", "site/alpha", "-o", "json", "--now", NOW];

    let mut c = env.command(&kubectl);
    c.arg("gc").args(args).env("PATH", &path).env("KUBECONFIG", &env.kubeconfig);
    let through_kubectl = run(c, DEADLINE);
    let mut c = env.gc();
    c.args(args);
    let direct = run(c, DEADLINE);

    assert_eq!(through_kubectl.status.code(), direct.status.code(), "{}", stderr(&through_kubectl));
    assert_eq!(direct.status.code(), Some(0), "{}", stderr(&direct));
    assert!(!direct.stdout.is_empty());
    assert_eq!(stdout(&through_kubectl), stdout(&direct));

    // exit codes propagate through kubectl: 1 for a missing object
    let mut c = env.command(&kubectl);
    c.args(["gc", "why-stuck", "site/nope"]).env("PATH", &path).env("KUBECONFIG", &env.kubeconfig);
    let o = run(c, DEADLINE);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("\"nope\" not found in namespace \"labs\""), "{}", stderr(&o));
    assert_read_only(&server);
}

#[test]
fn kubectl_itself_reads_the_test_server() {
    let Some(kubectl) = support::kubectl() else { return };
    let server = ApiServer::start(&site_basics());
    let env = Env::new(&server.url(), None);
    // a custom resource by short-free plural, through aggregated discovery
    let mut c = env.command(&kubectl);
    c.args(["get", "sites", "-n", "labs", "-o", "name"]).env("KUBECONFIG", &env.kubeconfig);
    let o = run(c, DEADLINE);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o).trim(), "site.own.labhub.io/alpha");
    // a built-in type by short name
    let mut c = env.command(&kubectl);
    c.args(["get", "cm", "-n", "labs", "-o", "name"]).env("KUBECONFIG", &env.kubeconfig);
    let o = run(c, DEADLINE);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o).lines().collect::<Vec<_>>(), ["configmap/alpha-config", "configmap/alpha-scripts"]);
    assert!(server.requests().iter().any(|r| r.path == "/apis" && r.accept.contains("as=APIGroupDiscoveryList")));
    assert_read_only(&server);
}

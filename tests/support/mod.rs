//! Test support: the in-process API server, hermetic commands, kubeconfig files.

#![allow(dead_code)]

pub mod apiserver;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

pub const NOW: &str = "2026-11-29T12:00:00Z";

pub fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_kubectl-gc")
}

pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Every fixture directory (with a snapshot.json), sorted.
pub fn fixtures() -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(root().join("tests/fixtures"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("snapshot.json").exists())
        .collect();
    out.sort();
    out
}

/// The args of each check in a fixture's expected.json.
pub fn checks(fixture: &Path) -> Vec<Vec<String>> {
    let text = std::fs::read_to_string(fixture.join("expected.json")).unwrap();
    let v: Value = serde_json::from_str(&text).unwrap();
    v["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["args"].as_array().unwrap().iter().map(|a| a.as_str().unwrap().to_string()).collect())
        .collect()
}

/// A private HOME with a kubeconfig pointing at a server, for one test.
pub struct Env {
    pub dir: tempfile::TempDir,
    pub home: PathBuf,
    pub kubeconfig: PathBuf,
}

impl Env {
    /// A kubeconfig whose current context `test` points at `server` (namespace: `namespace`
    /// when given).
    pub fn new(server: &str, namespace: Option<&str>) -> Env {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        std::fs::create_dir_all(home.join(".kube")).unwrap();
        let kubeconfig = dir.path().join("kubeconfig");
        write_kubeconfig(&kubeconfig, server, namespace);
        Env { dir, home, kubeconfig }
    }

    /// The plugin, run hermetically against this environment.
    pub fn gc(&self) -> Command {
        let mut c = self.command(bin());
        c.env("KUBECONFIG", &self.kubeconfig);
        c
    }

    /// Any program, with only PATH from the outside world: no proxies, no inherited
    /// KUBECONFIG, NO_COLOR set, this test's HOME.
    pub fn command(&self, program: impl AsRef<std::ffi::OsStr>) -> Command {
        let mut c = Command::new(program);
        c.env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", &self.home)
            .env("NO_COLOR", "1");
        c
    }
}

/// A printed command without the cluster it is bound to live (`kubectl
/// --kubeconfig=<the test's kubeconfig> --context=test …` → `kubectl …`), as a plain snapshot
/// file prints it, so live and offline answers compare.
pub fn unbound(s: &str) -> String {
    let s = without_kubeconfig(s);
    match s.strip_prefix("kubectl --context=test ") {
        Some(r) => format!("kubectl {r}"),
        None => s,
    }
}

/// A printed command without the kubeconfig file it names (live, the test's `KUBECONFIG`),
/// as offline answers on a capture print it: they name only the context the capture recorded.
pub fn without_kubeconfig(s: &str) -> String {
    let s = match s.strip_prefix("kubectl --kubeconfig=").and_then(|r| r.split_once(' ')) {
        Some((_, rest)) => format!("kubectl {rest}"),
        None => s.to_string(),
    };
    without_recorded_server(&s)
}

/// A printed command without the server URL a `kubectl gc snapshot` file recorded beside its
/// context (`kubectl --context=C --server=URL …` offline → `kubectl --context=C …`, as live).
pub fn without_recorded_server(s: &str) -> String {
    let Some(rest) = s.strip_prefix("kubectl --context=") else { return s.to_string() };
    let Some((context, rest)) = rest.split_once(' ') else { return s.to_string() };
    match rest.strip_prefix("--server=").and_then(|r| r.split_once(' ')) {
        Some((_, after)) => format!("kubectl --context={context} {after}"),
        None => s.to_string(),
    }
}

/// [`without_kubeconfig`] on every string of an answer.
pub fn without_kubeconfigs(v: Value) -> Value {
    match v {
        Value::String(s) => Value::String(without_kubeconfig(&s)),
        Value::Array(a) => Value::Array(a.into_iter().map(without_kubeconfigs).collect()),
        Value::Object(m) => Value::Object(m.into_iter().map(|(k, v)| (k, without_kubeconfigs(v))).collect()),
        v => v,
    }
}

pub fn write_kubeconfig(path: &Path, server: &str, namespace: Option<&str>) {
    let ns = namespace.map(|n| format!("\n    namespace: {n}")).unwrap_or_default();
    std::fs::write(
        path,
        format!(
            "apiVersion: v1\nkind: Config\ncurrent-context: test\nclusters:\n- name: test\n  cluster:\n    server: {server}\ncontexts:\n- name: test\n  context:\n    cluster: test\n    user: test{ns}\nusers:\n- name: test\n  user:\n    token: test-token\n"
        ),
    )
    .unwrap();
}

/// Runs a command with a deadline: a hang fails the test instead of blocking the suite.
pub fn run(mut c: Command, deadline: std::time::Duration) -> Output {
    use std::io::Read;
    c.stdout(std::process::Stdio::piped()).stderr(std::process::Stdio::piped());
    let mut child = c.spawn().expect("spawning");
    let mut stdout = child.stdout.take().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let out_t = std::thread::spawn(move || {
        let mut b = Vec::new();
        let _ = stdout.read_to_end(&mut b);
        b
    });
    let err_t = std::thread::spawn(move || {
        let mut b = Vec::new();
        let _ = stderr.read_to_end(&mut b);
        b
    });
    let start = std::time::Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if start.elapsed() > deadline {
            let _ = child.kill();
            panic!("{c:?} did not finish within {deadline:?}");
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    };
    Output { status, stdout: out_t.join().unwrap(), stderr: err_t.join().unwrap() }
}

pub const DEADLINE: std::time::Duration = std::time::Duration::from_secs(30);

/// Fails unless the server saw only GETs and never a full (non-metadata) read of Secrets.
pub fn assert_read_only(server: &apiserver::ApiServer) {
    for r in server.requests() {
        assert_eq!(r.method, "GET", "a non-GET request reached the server: {r:?}");
        let secrets = r.path.ends_with("/secrets") || r.path.contains("/secrets/");
        assert!(!secrets || r.wants_metadata(), "Secrets were read in full: {r:?}");
    }
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// The machine's PATH without directories that hold another `kubectl-gc` (an installed copy
/// would shadow the one under test, and kubectl would warn about it).
pub fn path_without_other_plugins() -> Vec<std::path::PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
        .filter(|d| !d.join("kubectl-gc").exists() && !d.join("kubectl_complete-gc").exists())
        .collect()
}

/// A program the tests run for real, found on PATH: kubectl, Graphviz's `dot`, a shell. When it
/// is absent the test fails, never passes quietly, unless the variable `opt_out` is set to 1
/// (e.g. `KUBECTL_GC_TEST_NO_KUBECTL=1` on a machine without kubectl), which says so on stderr
/// and returns `None`: the caller then leaves that check out, by the runner's explicit choice.
pub fn tool(name: &str, opt_out: &str) -> Option<PathBuf> {
    let found = std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
        .map(|d| d.join(name))
        .find(|p| is_executable(p));
    if found.is_some() {
        return found;
    }
    if std::env::var_os(opt_out).is_some_and(|v| v == "1") {
        eprintln!("{opt_out}=1: leaving out what needs {name}, which is not on PATH");
        return None;
    }
    panic!(
        "{name} is not on PATH: install it (.ci/run says how), or set {opt_out}=1 to leave out the checks that need it"
    );
}

#[cfg(unix)]
fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(not(unix))]
fn is_executable(p: &Path) -> bool {
    p.is_file() || p.with_extension("exe").is_file()
}

/// kubectl, for the plugin end-to-end checks (opt out: `KUBECTL_GC_TEST_NO_KUBECTL=1`).
pub fn kubectl() -> Option<PathBuf> {
    tool("kubectl", "KUBECTL_GC_TEST_NO_KUBECTL")
}

/// A shell that completion scripts are loaded in (opt out: `KUBECTL_GC_TEST_NO_SHELLS=1`).
pub fn shell(name: &str) -> Option<PathBuf> {
    tool(name, "KUBECTL_GC_TEST_NO_SHELLS")
}

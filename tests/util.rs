//! Hermetic commands: no inherited kubeconfig, colour or proxy; a temp HOME.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_kubectl-gc"))
}

pub fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// `kubectl-gc` with a clean environment.
pub fn gc() -> Command {
    let mut c = Command::new(bin());
    hermetic(&mut c);
    c
}

pub fn hermetic(c: &mut Command) {
    for v in [
        "KUBECONFIG",
        "HTTPS_PROXY",
        "https_proxy",
        "HTTP_PROXY",
        "http_proxy",
        "NO_COLOR",
        "KUBECACHEDIR",
        "FORCE_COLOR",
        "CLICOLOR_FORCE",
    ] {
        c.env_remove(v);
    }
    c.env("HOME", std::env::temp_dir().join("kubectl-gc-test-home"));
    c.env("NO_COLOR", "1");
}

pub fn run(args: &[&str]) -> Output {
    gc().args(args).output().expect("kubectl-gc runs")
}

pub fn stdout_json(out: &Output) -> serde_json::Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not JSON ({e}): {}\nstderr: {}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

pub fn code(out: &Output) -> i32 {
    out.status.code().expect("exited normally")
}

pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

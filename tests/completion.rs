//! Issue 7, completion and the plugin mechanism, through the real kubectl: `kubectl __complete
//! gc …` is how kubectl's own shell completion asks (it runs `kubectl_complete-gc` from PATH),
//! `kubectl gc …` dispatches to `kubectl-gc`, `kubectl plugin list` walks PATH.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const KUBECTL: &str = "/usr/bin/kubectl";

fn bin_dir() -> PathBuf {
    Path::new(env!("CARGO_BIN_EXE_kubectl-gc")).parent().unwrap().to_path_buf()
}

fn fixture(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(name).join("snapshot.json").display().to_string()
}

/// A hermetic kubectl: its own HOME and an empty kubeconfig, with `path_first` ahead of the
/// system PATH. `None` when kubectl is not installed (the caller skips, saying so).
struct Kubectl {
    home: tempfile::TempDir,
    path: std::ffi::OsString,
}

impl Kubectl {
    fn new(path_first: &Path, with_system_path: bool) -> Option<Kubectl> {
        if !Path::new(KUBECTL).exists() {
            eprintln!("skipping: {KUBECTL} is not installed");
            return None;
        }
        let home = tempfile::tempdir().unwrap();
        std::fs::write(home.path().join("kubeconfig"), "").unwrap();
        let mut dirs = vec![path_first.to_path_buf()];
        if with_system_path {
            dirs.extend(crate::support::path_without_other_plugins());
        }
        Some(Kubectl { home, path: std::env::join_paths(dirs).unwrap() })
    }

    fn run(&self, args: &[&str]) -> Output {
        Command::new(KUBECTL)
            .args(args)
            .env_clear()
            .env("PATH", &self.path)
            .env("HOME", self.home.path())
            .env("KUBECONFIG", self.home.path().join("kubeconfig"))
            .env("NO_COLOR", "1")
            .output()
            .unwrap()
    }

    /// `kubectl __complete gc WORDS…`: (candidate values, descriptions, directive).
    fn complete(&self, words: &[&str]) -> (Vec<String>, Vec<String>, String) {
        let mut args = vec!["__complete", "gc"];
        args.extend_from_slice(words);
        let out = self.run(&args);
        assert!(out.status.success(), "kubectl __complete gc {words:?}: {}", String::from_utf8_lossy(&out.stderr));
        let stdout = String::from_utf8(out.stdout).unwrap();
        let mut lines: Vec<&str> = stdout.lines().collect();
        let directive = lines.pop().unwrap_or_default().to_string();
        assert!(directive.starts_with(':'), "last line is the directive: {stdout}");
        let (values, descriptions) = lines
            .iter()
            .map(|l| {
                let (v, d) = l.split_once('\t').unwrap_or((l, ""));
                (v.to_string(), d.to_string())
            })
            .unzip();
        (values, descriptions, directive)
    }
}

fn kubectl() -> Option<Kubectl> {
    Kubectl::new(&bin_dir(), true)
}

#[test]
fn kubectl_completes_subcommands_through_kubectl_complete_gc() {
    let Some(k) = kubectl() else { return };
    let (values, descriptions, directive) = k.complete(&[""]);
    for s in ["why-stuck", "tree", "plan", "snapshot", "completion"] {
        assert!(values.contains(&s.to_string()), "{s} in {values:?}");
    }
    assert!(!values.iter().any(|v| v.starts_with("__")), "the hidden entry is not offered");
    assert!(descriptions.iter().all(|d| !d.is_empty()), "each subcommand has a description");
    assert_eq!(directive, ":4");

    let (values, _, directive) = k.complete(&["why"]);
    assert_eq!(values, ["why-stuck"]);
    assert_eq!(directive, ":4");
}

#[test]
fn kubectl_completes_types_from_the_snapshot() {
    let Some(k) = kubectl() else { return };
    let f = fixture("site-operator-gone");
    let (values, descriptions, directive) = k.complete(&["tree", "--snapshot", &f, ""]);
    for t in ["sites", "deployments", "configmaps", "namespaces", "customresourcedefinitions"] {
        assert!(values.contains(&t.to_string()), "{t} in {values:?}");
    }
    let site = values.iter().position(|v| v == "sites").unwrap();
    assert_eq!(descriptions[site], "Site (own.labhub.io)");
    assert_eq!(directive, ":4");
    // without a snapshot: the built-in types only
    let (values, _, _) = k.complete(&["why-stuck", ""]);
    assert!(values.contains(&"deployments".to_string()) && !values.contains(&"sites".to_string()));
}

#[test]
fn kubectl_completes_names_in_the_namespace() {
    let Some(k) = kubectl() else { return };
    let f = fixture("site-operator-gone");
    let (values, descriptions, directive) = k.complete(&["tree", "--snapshot", &f, "-n", "labs", "site", ""]);
    assert_eq!(values, ["alpha"]);
    assert_eq!(descriptions, ["Terminating"]);
    assert_eq!(directive, ":4");
    let (values, _, _) = k.complete(&["why-stuck", "-n", "labs", "--snapshot", &f, "configmap", "alpha-c"]);
    assert_eq!(values, ["alpha-config"]);
    let (values, _, _) = k.complete(&["why-stuck", "-n", "labs", "--snapshot", &f, "cm/"]);
    assert_eq!(values, ["cm/alpha-audit", "cm/alpha-config"]);
    let (values, _, _) = k.complete(&["tree", "--snapshot", &f, "-n", "site-system", "site", ""]);
    assert!(values.is_empty(), "no Site in site-system: {values:?}");
}

#[test]
fn kubectl_completes_flags_and_their_values() {
    let Some(k) = kubectl() else { return };
    let (values, _, _) = k.complete(&["tree", "--ow"]);
    assert_eq!(values, ["--owners"]);
    let (values, _, directive) = k.complete(&["tree", "-o", ""]);
    assert_eq!(values, ["text", "json", "yaml", "dot", "mermaid"]);
    assert_eq!(directive, ":4");
    let (values, _, _) = k.complete(&["plan", "--cascade="]);
    assert_eq!(values, ["--cascade=background", "--cascade=foreground", "--cascade=orphan"]);
    let f = fixture("site-operator-gone");
    let (values, _, _) = k.complete(&["tree", "--snapshot", &f, "-n", "l"]);
    assert_eq!(values, ["labs"]);
    // a snapshot path: no candidates, and the shell may complete file names
    let (values, _, directive) = k.complete(&["tree", "--snapshot", ""]);
    assert!(values.is_empty());
    assert_eq!(directive, ":0");
}

#[test]
fn kubectl_dispatches_and_help_says_kubectl_gc() {
    let Some(k) = kubectl() else { return };
    let out = k.run(&["gc", "--help"]);
    assert!(out.status.success());
    let help = String::from_utf8_lossy(&out.stdout);
    assert!(help.contains("Usage: kubectl gc"), "{help}");
    assert!(help.contains("kubectl gc why-stuck"), "examples");
    let out = k.run(&["gc", "--version"]);
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), format!("kubectl-gc {}", env!("CARGO_PKG_VERSION")));
    // exit codes come through kubectl: 2 = stuck
    let f = fixture("site-operator-gone");
    let out =
        k.run(&["gc", "why-stuck", "site/alpha", "-n", "labs", "--snapshot", &f, "--now", "2026-11-29T12:00:00Z"]);
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
}

/// `kubectl plugin list` over a directory laid out as an install is (a krew bin directory, or
/// the release archive unpacked): kubectl-gc listed, kubectl_complete-gc neither listed nor
/// flagged, no warning. (cargo's target/debug is not such a directory: its dep-info file
/// `kubectl-gc.d` is flagged as a non-executable plugin.)
#[test]
#[cfg(unix)]
fn kubectl_plugin_list_shows_kubectl_gc_without_warnings() {
    let install = tempfile::tempdir().unwrap();
    for b in ["kubectl-gc", "kubectl_complete-gc"] {
        std::os::unix::fs::symlink(bin_dir().join(b), install.path().join(b)).unwrap();
    }
    let Some(k) = Kubectl::new(install.path(), false) else { return };
    let out = k.run(&["plugin", "list"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}{stderr}");
    assert!(stdout.contains(&install.path().join("kubectl-gc").display().to_string()), "{stdout}");
    assert!(!stdout.contains("kubectl_complete-gc"), "{stdout}");
    assert!(!stderr.contains("warning") && !stdout.contains("warning"), "{stdout}{stderr}");

    // and through that install, completion works with kubectl-gc found beside the shim
    let (values, _, _) = k.complete(&["tr"]);
    assert_eq!(values, ["tree"]);
}

#[test]
fn completion_scripts_for_kubectl_gc_run_directly() {
    for shell in ["bash", "zsh", "fish"] {
        let out = Command::new(env!("CARGO_BIN_EXE_kubectl-gc")).args(["completion", shell]).output().unwrap();
        assert!(out.status.success(), "{shell}");
        let script = String::from_utf8(out.stdout).unwrap();
        assert!(script.contains("why-stuck") && script.contains("kubectl-gc"), "{shell}");
        // registered for kubectl-gc only: never for `kubectl`, whose own completion must stay
        assert!(!script.contains("complete -F _kubectl__gc -o nosort -o bashdefault -o default kubectl\n"));
        assert!(!script.contains("#compdef kubectl\n") && !script.contains("#compdef kubectl gc"));
    }
    let bash = Command::new(env!("CARGO_BIN_EXE_kubectl-gc")).args(["completion", "bash"]).output().unwrap();
    let script = String::from_utf8(bash.stdout).unwrap();
    assert!(script.lines().any(|l| l.trim_start().starts_with("complete -F") && l.trim_end().ends_with(" kubectl-gc")));
    if Path::new("/bin/bash").exists() || Path::new("/usr/bin/bash").exists() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("kubectl-gc.bash");
        std::fs::write(&path, &script).unwrap();
        let check = Command::new("bash").arg("-n").arg(&path).output().unwrap();
        assert!(check.status.success(), "bash -n: {}", String::from_utf8_lossy(&check.stderr));
        // sourced, it completes `kubectl-gc tr<TAB>`
        let run = Command::new("bash")
            .arg("-c")
            .arg(r#"source "$1"; COMP_WORDS=(kubectl-gc tr); COMP_CWORD=1; _kubectl__gc kubectl-gc tr kubectl-gc; echo "${COMPREPLY[@]}""#)
            .arg("bash")
            .arg(&path)
            .output()
            .unwrap();
        assert_eq!(String::from_utf8_lossy(&run.stdout).trim(), "tree", "{}", String::from_utf8_lossy(&run.stderr));
    }
}

#[test]
fn the_shim_answers_in_cobras_format_on_its_own() {
    let out = Command::new(env!("CARGO_BIN_EXE_kubectl_complete-gc")).args(["tree", "--o"]).output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let values: Vec<&str> = text.lines().map(|l| l.split('\t').next().unwrap()).collect();
    assert_eq!(values, ["--output", "--owners", ":4"], "{text}");
    // leading global flags stay words: `kubectl gc -n labs tr<TAB>`
    let out = Command::new(env!("CARGO_BIN_EXE_kubectl-gc")).args(["__complete", "-n", "labs", "tr"]).output().unwrap();
    assert_eq!(String::from_utf8(out.stdout).unwrap().lines().next().unwrap().split('\t').next(), Some("tree"));
}

//! Issue 7, completion and the plugin mechanism, through the real kubectl: `kubectl __complete
//! gc …` is how kubectl's own shell completion asks (it runs `kubectl_complete-gc` from PATH),
//! `kubectl gc …` dispatches to `kubectl-gc`, `kubectl plugin list` walks PATH.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn bin_dir() -> PathBuf {
    Path::new(env!("CARGO_BIN_EXE_kubectl-gc")).parent().unwrap().to_path_buf()
}

fn fixture(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(name).join("snapshot.json").display().to_string()
}

/// A hermetic kubectl (the one on PATH): its own HOME and an empty kubeconfig, with
/// `path_first` ahead of the system PATH. `None` only when kubectl is absent and
/// `KUBECTL_GC_TEST_NO_KUBECTL=1` says to leave these checks out; absent otherwise, a failure.
struct Kubectl {
    kubectl: PathBuf,
    home: tempfile::TempDir,
    path: std::ffi::OsString,
}

impl Kubectl {
    fn new(path_first: &Path, with_system_path: bool) -> Option<Kubectl> {
        let kubectl = crate::support::kubectl()?;
        let home = tempfile::tempdir().unwrap();
        std::fs::write(home.path().join("kubeconfig"), "").unwrap();
        let mut dirs = vec![path_first.to_path_buf()];
        if with_system_path {
            dirs.extend(crate::support::path_without_other_plugins());
        }
        Some(Kubectl { kubectl, home, path: std::env::join_paths(dirs).unwrap() })
    }

    fn run(&self, args: &[&str]) -> Output {
        Command::new(&self.kubectl)
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

/// `shell -c script` with kubectl-gc first on PATH, a private HOME, in the repository root.
fn in_shell(shell: &Path, args: &[&str]) -> Output {
    let home = tempfile::tempdir().unwrap();
    let path =
        std::env::join_paths(std::iter::once(bin_dir()).chain(crate::support::path_without_other_plugins())).unwrap();
    Command::new(shell)
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env_clear()
        .env("PATH", path)
        .env("HOME", home.path())
        .env("NO_COLOR", "1")
        .output()
        .unwrap()
}

#[test]
fn completion_scripts_register_for_kubectl_gc_only() {
    for shell in ["bash", "zsh", "fish"] {
        let out = Command::new(env!("CARGO_BIN_EXE_kubectl-gc")).args(["completion", shell]).output().unwrap();
        assert!(out.status.success(), "{shell}");
        let script = String::from_utf8(out.stdout).unwrap();
        assert!(script.contains("__complete") && script.contains("kubectl-gc"), "{shell}");
        // never for `kubectl`, whose own completion must stay
        for line in script.lines().map(str::trim) {
            assert!(!(line.starts_with("complete ") && line.ends_with(" kubectl")), "{shell}: {line}");
        }
        assert!(!script.contains("#compdef kubectl\n") && !script.contains("compdef _kubectl-gc kubectl\n"));
    }
}

/// `source <(kubectl-gc completion bash)` in a real bash, then the function `complete -p`
/// names, driven by COMP_WORDS as bash drives it on <TAB> (bash splits `--output=d` at `=`):
/// each case's COMPREPLY.
fn bash_completions(bash: &Path, cases: &[&[&str]]) -> Vec<Vec<String>> {
    let mut script = String::from(
        r#"source <(kubectl-gc completion bash) || exit 1
spec=$(complete -p kubectl-gc) || exit 1
fn=${spec#*-F }; fn=${fn%% *}
t() {
    COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
    COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}; COMPREPLY=()
    "$fn" kubectl-gc "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
    printf '%s\n' "${COMPREPLY[@]}"; echo '--end--'
}
"#,
    );
    for case in cases {
        let words: Vec<String> = case.iter().map(|w| format!("'{w}'")).collect();
        script.push_str(&format!("t kubectl-gc {}\n", words.join(" ")));
    }
    let out = in_shell(bash, &["-c", &script]);
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
    let mut replies: Vec<Vec<String>> =
        stdout.split("--end--\n").map(|r| r.lines().filter(|l| !l.is_empty()).map(str::to_string).collect()).collect();
    replies.pop(); // after the last --end--
    assert_eq!(replies.len(), cases.len(), "{stdout}");
    replies
}

#[test]
fn bash_completes_flags_types_and_names_for_kubectl_gc_on_its_own() {
    let Some(bash) = crate::support::shell("bash") else { return };
    let f = fixture("site-operator-gone");
    let cases: [&[&str]; 9] = [
        &[""],
        &["why-stuck", "--"],
        &["why-stuck", "d"],
        &["why-stuck", "--snapshot", &f, "-n", "labs", "si"],
        &["tree", "--snapshot", &f, "-n", "labs", "configmap", ""],
        &["tree", "--snapshot", &f, "-n", "labs", "site/"],
        &["tree", "--output", "=", "d"],
        &["tree", "--output", "="],
        &["tree", "--snapshot", "tests/fixtures/site-operator-g"],
    ];
    let r = bash_completions(&bash, &cases);
    for s in ["why-stuck", "tree", "plan", "snapshot", "completion"] {
        assert!(r[0].contains(&s.to_string()), "{s} in {:?}", r[0]);
    }
    assert!(!r[0].iter().any(|v| v.starts_with("__")), "the hidden entry is offered: {:?}", r[0]);
    for flag in ["--all", "--stuck-only", "--stuck-after", "--output", "--snapshot", "--context", "--namespace"] {
        assert!(r[1].contains(&flag.to_string()), "{flag} in {:?}", r[1]);
    }
    assert!(r[1].iter().all(|v| v.starts_with("--") && !v.starts_with("--_")), "{:?}", r[1]);
    assert!(r[2].contains(&"deployments".to_string()) && r[2].iter().all(|t| t.starts_with('d')), "{:?}", r[2]);
    assert_eq!(r[3], ["sites"], "TYPE from the snapshot");
    assert_eq!(r[4], ["alpha-audit", "alpha-config"], "NAME in the namespace");
    assert_eq!(r[5], ["site/alpha"]);
    assert_eq!(r[6], ["dot"], "what bash replaces is the piece after =");
    assert_eq!(r[7], ["text", "json", "yaml", "dot", "mermaid"]);
    assert_eq!(r[8], ["tests/fixtures/site-operator-gone"], "a file flag falls back to file names");
}

#[test]
fn zsh_loads_the_script_and_completes_from_kubectl_gc() {
    let Some(zsh) = crate::support::shell("zsh") else { return };
    let f = fixture("site-operator-gone");
    // loaded as the README says, then the function driven with words/CURRENT as zsh sets them,
    // _describe and _files standing in for what zsh's completion system would show
    let script = format!(
        r#"autoload -U compinit; compinit
source <(kubectl-gc completion zsh) || exit 1
print -r -- "registered: $_comps[kubectl-gc]"
_describe() {{ print -rl -- "${{(@P)${{@[-1]}}}}"; }}
_files() {{ print -r -- '(files)'; }}
words=(kubectl-gc why-stuck --st); CURRENT=3; _kubectl-gc
words=(kubectl-gc tree --snapshot {f} -n labs configmap alpha-c); CURRENT=8; _kubectl-gc
words=(kubectl-gc tree --snapshot te); CURRENT=4; _kubectl-gc
words=(kubectl-gc ''); CURRENT=2; _kubectl-gc"#
    );
    let out = in_shell(&zsh, &["-c", &script]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success() && stderr.is_empty(), "{stdout}{stderr}");
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines[0], "registered: _kubectl-gc", "{stdout}");
    assert!(lines[1].starts_with("--stuck-after:") && lines[2].starts_with("--stuck-only:"), "{stdout}");
    assert_eq!(lines[3], "alpha-config:Terminating", "{stdout}");
    assert_eq!(lines[4], "(files)", "{stdout}");
    assert!(lines[5..].iter().any(|l| l.starts_with("why-stuck:")), "{stdout}");
    assert!(!lines.iter().any(|l| l.starts_with("__")), "{stdout}");
}

#[test]
fn fish_loads_the_script_and_completes_from_kubectl_gc() {
    let Some(fish) = crate::support::shell("fish") else { return };
    let f = fixture("site-operator-gone");
    let script = format!(
        "kubectl-gc completion fish | source; or exit 1
complete -C 'kubectl-gc why-stuck --st'; echo --end--
complete -C 'kubectl-gc tree --snapshot {f} -n labs configmap '; echo --end--
complete -C 'kubectl-gc '; echo --end--"
    );
    let out = in_shell(&fish, &["-c", &script]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success() && stderr.is_empty(), "{stdout}{stderr}");
    let parts: Vec<Vec<&str>> =
        stdout.split("--end--\n").map(|p| p.lines().map(|l| l.split('\t').next().unwrap()).collect()).collect();
    assert_eq!(parts[0], ["--stuck-after", "--stuck-only"], "{stdout}");
    assert_eq!(parts[1], ["alpha-audit", "alpha-config"], "{stdout}");
    assert!(parts[2].contains(&"why-stuck") && !parts[2].iter().any(|v| v.starts_with("__")), "{stdout}");
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

//! Nothing runs on TAB (issue 43): kubectl's own bash completion passes what
//! `kubectl_complete-gc` offers through `compgen -W`, which expands it, so a namespace or
//! object named `$(…)` in a snapshot file would run when a person completes `kubectl gc … -n
//! <TAB>`. No candidate a shell would expand, or holding control characters, is offered; the
//! names that are plain still are.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::json;

fn bin_dir() -> PathBuf {
    Path::new(env!("CARGO_BIN_EXE_kubectl-gc")).parent().unwrap().to_path_buf()
}

/// A snapshot whose namespaces and Sites bear hostile names, each touching `marker`.
fn hostile_snapshot(dir: &Path, marker: &Path) -> PathBuf {
    let m = marker.display();
    let hostile = [
        format!("$(touch {m})"),
        format!("`touch {m}`"),
        format!("${{IFS}}$(touch${{IFS}}{m})"),
        "a b".to_string(),
        "~root".to_string(),
        "*".to_string(),
        "x\u{1b}[2J".to_string(),
        "x\u{202e}y".to_string(),
    ];
    let mut items = vec![
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "labs", "uid": "ns-labs"}}),
        json!({"apiVersion": "own.labhub.io/v1", "kind": "Site",
               "metadata": {"name": "plain-site", "namespace": "labs", "uid": "s-plain"}}),
    ];
    for (i, h) in hostile.iter().enumerate() {
        items.push(json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": h, "uid": format!("ns-{i}")}}));
        items.push(json!({"apiVersion": "own.labhub.io/v1", "kind": "Site",
                          "metadata": {"name": h, "namespace": "labs", "uid": format!("s-{i}"),
                                       "deletionTimestamp": "2026-11-29T11:00:00Z", "finalizers": [format!("$(touch {m})/x")]}}));
    }
    let file = dir.join("snapshot.json");
    std::fs::write(&file, serde_json::to_vec(&json!({"apiVersion": "v1", "kind": "List", "items": items})).unwrap())
        .unwrap();
    file
}

/// What `kubectl_complete-gc WORDS…` offers: (value, description) lines.
fn offered(words: &[&str]) -> Vec<(String, String)> {
    let out = Command::new(bin_dir().join("kubectl_complete-gc")).args(words).output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    assert!(lines.pop().is_some_and(|d| d.starts_with(':')), "{text}");
    lines
        .iter()
        .map(|l| {
            let (v, d) = l.split_once('\t').unwrap_or((l, ""));
            (v.to_string(), d.to_string())
        })
        .collect()
}

#[test]
fn no_candidate_a_shell_would_expand_is_offered() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("ran");
    let snap = hostile_snapshot(dir.path(), &marker);
    let snap = snap.to_str().unwrap();
    let inert = |s: &str| s.chars().all(|c| c.is_ascii_alphanumeric() || "-_./:@+=,%".contains(c));
    let namespaces = offered(&["why-stuck", "--snapshot", snap, "-n", ""]);
    let names = offered(&["why-stuck", "--snapshot", snap, "-n", "labs", "site/"]);
    let all = offered(&["why-stuck", "--snapshot", snap, "-A", "site/"]);
    for (v, d) in namespaces.iter().chain(&names).chain(&all) {
        assert!(inert(v), "offered {v:?}");
        assert!(!d.contains(['$', '`', '\\', '"', '\'']) && !d.contains(|c: char| c.is_control()), "described {d:?}");
    }
    assert_eq!(namespaces.iter().map(|(v, _)| v.as_str()).collect::<Vec<_>>(), ["labs"], "the plain one still is");
    assert_eq!(names.iter().map(|(v, _)| v.as_str()).collect::<Vec<_>>(), ["site/plain-site"]);
}

/// Through kubectl's own bash completion, as a person's TAB runs it.
#[test]
fn nothing_runs_through_kubectls_bash_completion() {
    let Some(kubectl) = crate::support::kubectl() else { return };
    let Some(bash) = crate::support::shell("bash") else { return };
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("ran");
    let snap = hostile_snapshot(dir.path(), &marker);
    std::fs::write(dir.path().join("kubeconfig"), "").unwrap();
    let path = std::env::join_paths(
        [bin_dir(), kubectl.parent().unwrap().to_path_buf()]
            .into_iter()
            .chain(crate::support::path_without_other_plugins()),
    )
    .unwrap();
    // kubectl's script calls bash-completion's _get_comp_words_by_ref: its part that matters
    // here, as bash-completion defines it (cur, prev, words, cword from COMP_WORDS)
    let script = format!(
        r#"_get_comp_words_by_ref() {{
    while [ $# -gt 0 ]; do
        case "$1" in
            -n) shift ;;
            cur) cur=${{COMP_WORDS[COMP_CWORD]}} ;;
            prev) prev=${{COMP_WORDS[COMP_CWORD-1]}} ;;
            words) words=("${{COMP_WORDS[@]}}") ;;
            cword) cword=$COMP_CWORD ;;
        esac
        shift
    done
}}
__ltrim_colon_completions() {{ :; }}
source <(kubectl completion bash) || exit 1
spec=$(complete -p kubectl) || exit 1
fn=${{spec#*-F }}; fn=${{fn%% *}}
t() {{
    COMP_WORDS=("$@"); COMP_CWORD=$((${{#COMP_WORDS[@]}} - 1))
    COMP_LINE="$*"; COMP_POINT=${{#COMP_LINE}}; COMPREPLY=()
    "$fn" kubectl "${{COMP_WORDS[COMP_CWORD]}}" "${{COMP_WORDS[COMP_CWORD-1]}}"
    printf '%s\n' "${{COMPREPLY[@]}}"; echo '--end--'
}}
t kubectl gc why-stuck --snapshot '{snap}' -n ''
t kubectl gc why-stuck --snapshot '{snap}' -n labs site/
t kubectl gc why-stuck --snapshot '{snap}' -A site/
"#,
        snap = snap.display()
    );
    let out = Command::new(bash)
        .args(["-c", &script])
        .env_clear()
        .env("PATH", path)
        .env("HOME", dir.path())
        .env("KUBECONFIG", dir.path().join("kubeconfig"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
    assert!(!marker.exists(), "a completion candidate ran a command:\n{stdout}");
    let replies: Vec<&str> = stdout.split("--end--\n").collect();
    assert!(replies[0].lines().any(|l| l == "labs"), "the plain namespace still completes:\n{stdout}");
    assert!(replies[1].contains("plain-site"), "the plain name still completes:\n{stdout}");
}

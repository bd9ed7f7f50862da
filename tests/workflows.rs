//! The GitHub workflows (issue 44): no runner label or action version GitHub has retired (the
//! list, with where each entry comes from, is .ci/retired.txt), and the release builds exactly
//! the krew manifest's platforms, each with its provenance attestation.

use std::path::Path;

use serde_json::Value;

use crate::krew::OS_ARCH;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// `runner LABEL …` and `action OWNER/REPO@MAJOR …` lines of .ci/retired.txt.
struct Retired {
    runners: Vec<String>,
    actions: Vec<String>,
}

fn retired() -> Retired {
    let text = std::fs::read_to_string(root().join(".ci/retired.txt")).unwrap();
    let (mut runners, mut actions) = (Vec::new(), Vec::new());
    for line in text.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#')) {
        let mut words = line.split_whitespace();
        match (words.next(), words.next()) {
            (Some("runner"), Some(label)) => runners.push(label.to_string()),
            (Some("action"), Some(action)) if action.contains('@') => actions.push(action.to_string()),
            _ => panic!(".ci/retired.txt: not `runner LABEL` or `action OWNER/REPO@MAJOR`: {line:?}"),
        }
    }
    Retired { runners, actions }
}

/// `owner/repo@v4` names `retired` `owner/repo@v4` and every `v4.x.y` under it.
fn names_retired_action(uses: &str, retired: &str) -> bool {
    let Some(rest) = uses.strip_prefix(retired) else { return false };
    rest.is_empty() || rest.starts_with('.')
}

/// What in one workflow is retired: a runner label anywhere a string can carry it (`runs-on`
/// itself, or a matrix value `runs-on` expands), and every `uses:` of a retired action version.
fn retired_in(workflow: &Value, retired: &Retired) -> Vec<String> {
    let mut found = Vec::new();
    walk(workflow, "", &mut |path, key, s| {
        if retired.runners.iter().any(|r| r == s) {
            found.push(format!("{path}: runner {s:?} is retired"));
        }
        if key == "uses"
            && let Some(a) = retired.actions.iter().find(|a| names_retired_action(s, a))
        {
            found.push(format!("{path}: {s:?} is a retired action version ({a})"));
        }
    });
    found
}

fn walk(v: &Value, path: &str, f: &mut dyn FnMut(&str, &str, &str)) {
    match v {
        Value::Object(m) => {
            for (k, v) in m {
                let p = format!("{path}.{k}");
                match v {
                    Value::String(s) => f(&p, k, s),
                    other => walk(other, &p, f),
                }
            }
        }
        Value::Array(a) => {
            for (i, v) in a.iter().enumerate() {
                let p = format!("{path}[{i}]");
                match v {
                    Value::String(s) => f(&p, "", s),
                    other => walk(other, &p, f),
                }
            }
        }
        _ => {}
    }
}

fn workflows() -> Vec<(String, Value)> {
    let dir = root().join(".github/workflows");
    let mut out = Vec::new();
    for e in std::fs::read_dir(&dir).unwrap() {
        let path = e.unwrap().path();
        if path.extension().is_some_and(|x| x == "yml" || x == "yaml") {
            let text = std::fs::read_to_string(&path).unwrap();
            let v: Value = serde_saphyr::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            out.push((path.file_name().unwrap().to_string_lossy().into_owned(), v));
        }
    }
    assert!(!out.is_empty(), "no workflow in {}", dir.display());
    out
}

#[test]
fn no_workflow_names_a_retired_runner_or_action() {
    let retired = retired();
    assert!(retired.runners.iter().any(|r| r == "macos-14"), "the list holds the runner issue 44 found");
    let found: Vec<String> = workflows()
        .iter()
        .flat_map(|(name, w)| retired_in(w, &retired).into_iter().map(move |f| format!("{name}{f}")))
        .collect();
    assert!(found.is_empty(), "retired on GitHub (.ci/retired.txt):\n  {}", found.join("\n  "));
}

#[test]
fn the_check_finds_a_retired_runner_through_a_matrix_and_a_retired_action() {
    let old: Value = serde_saphyr::from_str(
        "jobs:\n  build:\n    runs-on: ${{ matrix.runner }}\n    strategy:\n      matrix:\n        include:\n\
         \x20         - runner: macos-14\n            target: x86_64-apple-darwin\n    steps:\n\
         \x20     - uses: actions/checkout@v4\n      - uses: actions/checkout@v4.2.2\n\
         \x20     - uses: actions/checkout@v40\n      - uses: rajatjindal/krew-release-bot@v0.0.47\n\
         \x20     - run: echo macos-14 is only named in a script\n",
    )
    .unwrap();
    let found = retired_in(&old, &retired());
    assert_eq!(found.len(), 4, "{found:#?}");
    assert!(found[0].contains("include[0].runner") && found[0].contains("macos-14"), "{found:?}");
    assert!(found.iter().any(|f| f.contains("checkout@v4.2.2")), "a minor of a retired major: {found:?}");
    assert!(!found.iter().any(|f| f.contains("@v40")), "v40 is not v4: {found:?}");
    assert!(found.iter().any(|f| f.contains("krew-release-bot")), "{found:?}");
}

/// The krew os/arch of a Rust target triple, as krew/release.sh names its archive.
fn platform_of(triple: &str) -> (&'static str, &'static str) {
    let arch = if triple.starts_with("x86_64-") { "amd64" } else { "arm64" };
    let os = if triple.contains("-linux-") {
        "linux"
    } else if triple.ends_with("-apple-darwin") {
        "darwin"
    } else {
        assert!(triple.contains("-windows-"), "{triple}");
        "windows"
    };
    (os, arch)
}

#[test]
fn the_release_builds_and_attests_every_platform_of_the_manifest() {
    let (_, w) = workflows().into_iter().find(|(n, _)| n == "release.yml").expect("release.yml");
    let build = &w["jobs"]["build"];
    let include = build["strategy"]["matrix"]["include"].as_array().expect("a matrix of targets");
    let mut built: Vec<_> = include.iter().map(|e| platform_of(e["target"].as_str().unwrap())).collect();
    built.sort();
    let mut want = OS_ARCH.to_vec();
    want.sort();
    assert_eq!(built, want, "one build per platform of krew/.krew.yaml");
    let steps = build["steps"].as_array().unwrap();
    let uses = |prefix: &str| steps.iter().find(|s| s["uses"].as_str().is_some_and(|u| u.starts_with(prefix)));
    let attest = uses("actions/attest-build-provenance@").expect("a provenance attestation in each build");
    let subjects = attest["with"]["subject-path"].as_str().unwrap();
    assert!(subjects.contains("dist/*.tar.gz") && subjects.contains("dist/*.zip"), "{subjects}");
    assert_eq!(build["permissions"]["id-token"].as_str(), Some("write"), "the attestation is signed with OIDC");
    assert_eq!(build["permissions"]["attestations"].as_str(), Some("write"));
    let bot = w["jobs"]["publish"]["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find_map(|s| s["uses"].as_str().filter(|u| u.starts_with("rajatjindal/krew-release-bot@")));
    assert_eq!(bot, Some("rajatjindal/krew-release-bot@v0.0.50"));
}

/// The README's test command, the one line of the block under "## Run the tests".
fn readme_test_command() -> String {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let section = readme.split("## Run the tests").nth(1).expect("a Run the tests section");
    let block = section.split("```sh\n").nth(1).and_then(|b| b.split("```").next()).expect("a sh block");
    let lines: Vec<&str> = block.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "one command: {block}");
    lines[0].to_string()
}

#[test]
fn ci_runs_exactly_the_readme_test_command_and_it_installs_what_the_tests_need() {
    let cmd = readme_test_command();
    assert!(cmd.starts_with(".ci/test-deps && ") && cmd.ends_with("cargo test --locked"), "{cmd}");
    let ci = std::fs::read_to_string(root().join(".ci/run")).unwrap();
    assert!(ci.lines().any(|l| l == cmd), ".ci/run runs {cmd:?} as written");
}

/// A PATH directory with every command of this PATH except `hidden`: a machine without them.
#[cfg(unix)]
fn path_without(hidden: &[&str]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for p in std::env::split_paths(&std::env::var_os("PATH").unwrap()) {
        for e in std::fs::read_dir(&p).into_iter().flatten().flatten() {
            let name = e.file_name();
            let link = dir.path().join(&name);
            if !hidden.iter().any(|h| name == *h) && !link.exists() {
                let _ = std::os::unix::fs::symlink(e.path(), link);
            }
        }
    }
    dir
}

#[test]
#[cfg(unix)]
fn test_deps_names_what_a_fresh_machine_lacks_and_nothing_otherwise() {
    let run = |path: &std::ffi::OsStr| {
        std::process::Command::new("bash")
            .arg(root().join(".ci/test-deps"))
            .arg("--dry-run")
            .env("PATH", path)
            .output()
            .unwrap()
    };
    let fresh = path_without(&["zsh", "fish", "dot"]);
    let out = run(fresh.path().as_os_str());
    let err = String::from_utf8_lossy(&out.stderr);
    if fresh.path().join("apt-get").exists() {
        assert_eq!(out.status.code(), Some(0), "{err}");
        assert!(err.contains("apt-get update") && err.contains("apt-get install"), "{err}");
        assert!(err.contains("--no-install-recommends graphviz zsh fish"), "the three, as Debian names them: {err}");
    } else {
        assert_eq!(out.status.code(), Some(1), "{err}");
        assert!(err.contains("graphviz zsh fish"), "{err}");
    }
    // on this machine's own PATH: exactly what it lacks (nothing, once installed)
    let on_path = |cmd: &str| std::env::split_paths(&std::env::var_os("PATH").unwrap()).any(|d| d.join(cmd).exists());
    let lacking: Vec<&str> = [("dot", "graphviz"), ("zsh", "zsh"), ("fish", "fish")]
        .into_iter()
        .filter(|(cmd, _)| !on_path(cmd))
        .map(|(_, pkg)| pkg)
        .collect();
    let only_fish = path_without(&["fish"]);
    let err = String::from_utf8_lossy(&run(only_fish.path().as_os_str()).stderr).into_owned();
    assert!(err.contains("fish"), "{err}");
    for pkg in ["zsh", "graphviz"].into_iter().filter(|p| !lacking.contains(p)) {
        assert!(!err.contains(pkg), "only what is missing, not {pkg}: {err}");
    }
    let complete = run(&std::env::var_os("PATH").unwrap());
    if !lacking.is_empty() {
        let err = String::from_utf8_lossy(&complete.stderr);
        assert!(err.contains(&lacking.join(" ")), "{lacking:?}: {err}");
        return;
    }
    assert_eq!(complete.status.code(), Some(0));
    assert!(complete.stderr.is_empty(), "nothing missing, nothing said: {}", String::from_utf8_lossy(&complete.stderr));
}

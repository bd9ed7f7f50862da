//! Command-line behaviour: object arguments, errors (exit 1, one clear line), output formats.

use crate::util::{code, fixtures_dir, run, stderr, stdout_json};

fn snap(name: &str) -> String {
    fixtures_dir().join(name).join("snapshot.json").display().to_string()
}

const NOW: &str = "2026-11-29T12:00:00Z";

#[test]
fn type_and_name_forms_name_the_same_object() {
    let s = snap("site-basics");
    let forms: [&[&str]; 6] = [
        &["tree", "deploy/web"],
        &["tree", "deploy", "web"],
        &["tree", "deployments.apps/web"],
        &["tree", "deployments.v1.apps", "web"],
        &["tree", "Deployment/web"],
        &["tree", "deployment/web"],
    ];
    for f in forms {
        let mut a = f.to_vec();
        a.extend(["-n", "labs", "--snapshot", &s, "--now", NOW, "-o", "json"]);
        let out = run(&a);
        assert_eq!(code(&out), 0, "{f:?}: {}", stderr(&out));
        assert_eq!(stdout_json(&out)["object"]["name"], "web", "{f:?}");
    }
    // custom resources resolve through the snapshot's CRDs
    for t in ["site/alpha", "sites/alpha", "sites.own.labhub.io/alpha", "Site/alpha"] {
        let out = run(&["tree", t, "-n", "labs", "--snapshot", &s, "--now", NOW, "-o", "json"]);
        assert_eq!(code(&out), 0, "{t}: {}", stderr(&out));
    }
}

#[test]
fn missing_object_is_exit_1_naming_type_and_namespace() {
    let out = run(&["why-stuck", "site/nope", "-n", "labs", "--snapshot", &snap("site-basics")]);
    assert_eq!(code(&out), 1);
    let err = stderr(&out);
    assert!(err.starts_with("error: "), "{err}");
    assert!(err.contains("sites.own.labhub.io \"nope\" not found in namespace \"labs\""), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
}

#[test]
fn unknown_type_is_exit_1() {
    let out = run(&["tree", "frobnicators/x", "--snapshot", &snap("site-basics")]);
    assert_eq!(code(&out), 1);
    assert!(stderr(&out).contains("doesn't have a resource type \"frobnicators\""), "{}", stderr(&out));
    // offline no server was asked: the file is named instead
    assert!(stderr(&out).starts_with("error: the snapshot doesn't"), "{}", stderr(&out));
    assert!(stderr(&out).contains(&snap("site-basics")), "{}", stderr(&out));
}

#[test]
fn a_snapshot_without_objects_answers_nothing_not_even_nothing_terminating() {
    let dir = tempfile::tempdir().unwrap();
    let empty_list = dir.path().join("empty.json");
    std::fs::write(&empty_list, r#"{"kind": "List", "apiVersion": "v1", "items": []}"#).unwrap();
    let empty_list = empty_list.display().to_string();
    for args in [
        &["why-stuck", "--all", "-A", "--snapshot", "/dev/null"][..],
        &["why-stuck", "--all", "-A", "--snapshot", &empty_list],
        &["tree", "deploy/web", "-n", "labs", "--snapshot", &empty_list],
    ] {
        let out = run(args);
        assert_eq!(code(&out), 1, "{args:?}");
        assert!(out.stdout.is_empty(), "{args:?}: {}", String::from_utf8_lossy(&out.stdout));
        assert!(stderr(&out).contains("the snapshot holds no objects"), "{args:?}: {}", stderr(&out));
    }
}

#[test]
fn a_second_slash_is_refused_as_kubectl_does_before_anything_is_looked_up() {
    for args in [&["why-stuck", "site/alpha/x"][..], &["tree", "a/b/c"], &["plan", "site", "sites/alpha"]] {
        let s = snap("site-basics");
        let mut a = args.to_vec();
        a.extend(["-n", "labs", "--snapshot", &s]);
        let out = run(&a);
        assert_eq!(code(&out), 1, "{args:?}");
        let err = stderr(&out);
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(!err.contains("not found") && !err.contains("resource type"), "{args:?}: {err}");
        assert!(err.contains("more than one slash") || err.contains("not both"), "{args:?}: {err}");
    }
}

#[test]
fn namespaced_object_defaults_to_namespace_default() {
    let out = run(&["tree", "configmap/alpha-config", "--snapshot", &snap("site-basics")]);
    assert_eq!(code(&out), 1);
    assert!(stderr(&out).contains("in namespace \"default\""), "{}", stderr(&out));
}

#[test]
fn cluster_scoped_types_ignore_namespace() {
    let out =
        run(&["tree", "ns/labs", "-n", "elsewhere", "--snapshot", &snap("site-basics"), "-o", "json", "--now", NOW]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(stdout_json(&out)["object"].get("namespace").is_none());
}

#[test]
fn unreadable_snapshot_names_file_line_and_column() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, "{\n \"kind\": \"List\",\n \"items\": [ ,]\n}\n").unwrap();
    let out = run(&["tree", "ns/x", "--snapshot", bad.to_str().unwrap()]);
    assert_eq!(code(&out), 1);
    let err = stderr(&out);
    assert!(err.contains(&format!("{}:3:", bad.display())), "{err}");
}

#[test]
fn missing_snapshot_path_is_exit_1() {
    let out = run(&["tree", "ns/x", "--snapshot", "/nonexistent/snap.json"]);
    assert_eq!(code(&out), 1);
    assert!(stderr(&out).contains("/nonexistent/snap.json"), "{}", stderr(&out));
}

#[test]
fn usage_errors_exit_1_not_2() {
    // 2 means "stuck"; clap's own usage-error code must not leak through
    let out = run(&["why-stuck"]);
    assert_eq!(code(&out), 1);
    let out = run(&["tree", "ns/x", "-o", "nonsense"]);
    assert_eq!(code(&out), 1);
}

#[test]
fn help_and_version_exit_0_and_say_kubectl_gc() {
    let out = run(&["--help"]);
    assert_eq!(code(&out), 0);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("kubectl gc"), "{text}");
    assert!(text.contains("why-stuck") && text.contains("plan"), "{text}");
    // --all is a mode of why-stuck, so the top level names it: in the command list and an example
    let commands = &text[..text.find("Options:").unwrap()];
    assert!(commands.contains("--all"), "the command list does not name why-stuck --all:\n{commands}");
    assert!(text.contains("kubectl gc why-stuck --all -n "), "no why-stuck --all example:\n{text}");
    let why = run(&["why-stuck", "--help"]);
    assert!(String::from_utf8_lossy(&why.stdout).contains("3 could not be judged"), "why-stuck help omits exit 3");
    for sub in ["why-stuck", "tree", "plan", "snapshot"] {
        let out = run(&[sub, "--help"]);
        assert_eq!(code(&out), 0);
        assert!(String::from_utf8_lossy(&out.stdout).contains("Examples:"), "{sub} help has no examples");
    }
    let out = run(&["--version"]);
    assert_eq!(code(&out), 0);
    assert!(String::from_utf8_lossy(&out.stdout).contains(env!("CARGO_PKG_VERSION")));
}

#[test]
fn yaml_output_carries_the_same_answer() {
    let s = snap("site-operator-gone");
    let out = run(&["why-stuck", "site/alpha", "-n", "labs", "--snapshot", &s, "--now", NOW, "-o", "yaml"]);
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("stuck: true"), "{text}");
    assert!(text.contains("code: BlockingDependent"), "{text}");
}

#[test]
fn text_output_has_no_colour_with_no_color_and_colour_when_forced() {
    let s = snap("site-operator-gone");
    let plain = run(&["why-stuck", "site/alpha", "-n", "labs", "--snapshot", &s, "--now", NOW]);
    assert!(!plain.stdout.contains(&0x1b));
    let text = String::from_utf8_lossy(&plain.stdout);
    assert!(text.contains("BlockingDependent"), "{text}");
    let coloured = run(&["why-stuck", "site/alpha", "-n", "labs", "--snapshot", &s, "--now", NOW, "--color=always"]);
    assert!(coloured.stdout.contains(&0x1b));
}

#[test]
fn skipped_objects_and_duplicate_uids_are_warned_about_once() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("s.yaml");
    std::fs::write(
        &f,
        "apiVersion: v1\nkind: Namespace\nmetadata: {name: labs, uid: u1}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: nouid, namespace: labs}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: nouid2, namespace: labs}\n---\napiVersion: v1\nkind: Secret\nmetadata: {name: s, namespace: labs, uid: u1}\n",
    )
    .unwrap();
    let out = run(&["tree", "ns/labs", "--snapshot", f.to_str().unwrap(), "--now", NOW]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let err = stderr(&out);
    assert_eq!(err.matches("skipped 2 object(s)").count(), 1, "{err}");
    assert!(err.contains("duplicate uid"), "{err}");
}

#[test]
fn directories_and_several_snapshots_merge() {
    let dir = tempfile::tempdir().unwrap();
    let sub = dir.path().join("labs");
    std::fs::create_dir_all(&sub).unwrap();
    std::fs::write(
        dir.path().join("ns.json"),
        r#"{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"labs","uid":"n1"}}"#,
    )
    .unwrap();
    std::fs::write(
        sub.join("cms.yaml"),
        "apiVersion: v1\nkind: ConfigMapList\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: child, namespace: labs, uid: c1, ownerReferences: [{apiVersion: v1, kind: Namespace, name: labs, uid: n1}]}\n",
    )
    .unwrap();
    std::fs::write(sub.join("notes.txt"), "not a snapshot").unwrap();
    let out = run(&["tree", "ns/labs", "--snapshot", dir.path().to_str().unwrap(), "-o", "json", "--now", NOW]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(stdout_json(&out)["dependents"][0]["object"]["name"], "child");
}

#[test]
fn deep_owner_chain_does_not_overflow() {
    // 10,000 ConfigMaps, each owned by the previous one
    let mut items = Vec::new();
    for i in 0..10_000 {
        let mut meta = serde_json::json!({"name": format!("c{i}"), "namespace": "deep", "uid": format!("u{i}")});
        if i > 0 {
            meta["ownerReferences"] = serde_json::json!([{"apiVersion":"v1","kind":"ConfigMap","name":format!("c{}", i-1),"uid":format!("u{}", i-1),"blockOwnerDeletion":true}]);
        }
        items.push(serde_json::json!({"apiVersion":"v1","kind":"ConfigMap","metadata":meta}));
    }
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("deep.json");
    std::fs::write(&f, serde_json::json!({"kind":"List","items":items}).to_string()).unwrap();
    let f = f.to_str().unwrap();
    let out = run(&["tree", "cm/c0", "-n", "deep", "--snapshot", f, "-o", "json", "--now", NOW]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    // serde_json stops at 128 levels, so count instead: every object once, every node closed
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(text.matches("\"kind\":\"ConfigMap\"").count(), 10_000);
    assert_eq!(text.matches("\"dependents\":[").count(), 10_000);
    assert_eq!(text.trim_end().matches("]}").count(), 10_000);
    assert_eq!(text.matches("\"dependents\":[]}").count(), 1, "only the deepest node is a leaf");
    let out = run(&["tree", "cm/c9999", "-n", "deep", "--snapshot", f, "--owners", "--now", NOW]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(String::from_utf8_lossy(&out.stdout).lines().count(), 10_001, "the column header, then each object");
    let out = run(&["why-stuck", "cm/c5000", "-n", "deep", "--snapshot", f, "-o", "json", "--now", NOW]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
}

#[test]
fn why_stuck_plan_appends_the_dry_run_once_the_blockers_are_gone() {
    let s = snap("site-operator-gone");
    let out = run(&["why-stuck", "site/alpha", "-n", "labs", "--plan", "--snapshot", &s, "--now", NOW, "-o", "json"]);
    assert_eq!(code(&out), 2, "the verdict is still stuck: {}", stderr(&out));
    let v = stdout_json(&out);
    assert_eq!(v["stuck"], true);
    assert_eq!(v["plan"]["cascade"], "Foreground", "the propagation the deletion already has");
    let mut removed: Vec<String> = v["plan"]["result"]["removed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap().to_string())
        .collect();
    removed.sort();
    assert_eq!(removed, ["alpha", "alpha-audit", "alpha-config"]);
    assert_eq!(v["plan"]["result"]["blocked"].as_array().unwrap().len(), 0);
    let text = run(&["why-stuck", "site/alpha", "-n", "labs", "--plan", "--snapshot", &s, "--now", NOW]);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.contains("Once the blockers are gone"), "{text}");
    // without --plan there is no plan key
    let plain =
        stdout_json(&run(&["why-stuck", "site/alpha", "-n", "labs", "--snapshot", &s, "--now", NOW, "-o", "json"]));
    assert!(plain.get("plan").is_none());
}

#[test]
fn stuck_after_takes_kubectl_durations_and_refuses_others() {
    let s = snap("operator-alive-not-acting");
    let base = ["why-stuck", "bucket/raw-footage", "-n", "studio", "--snapshot", &s, "--now", NOW, "-o", "json"];
    for (after, want) in [("90m", 2), ("2h59m", 2), ("3h1m", 0), ("1.5h", 2), ("4h", 0)] {
        let mut a = base.to_vec();
        a.extend(["--stuck-after", after]);
        let out = run(&a);
        assert_eq!(code(&out), want, "--stuck-after {after}: {}", stderr(&out));
    }
    for bad in ["1d", "-1h", "soon", "60"] {
        let arg = format!("--stuck-after={bad}");
        let mut a = base.to_vec();
        a.push(&arg);
        let out = run(&a);
        assert_eq!(code(&out), 1, "--stuck-after {bad}");
        assert!(stderr(&out).contains("invalid duration"), "{bad}: {}", stderr(&out));
    }
}

/// The README's test-server lines, pasted as they are into bash: the server answers the command
/// that follows even when `cargo run` takes a while to start it (here two seconds: `cargo` is a
/// shell function that waits, then runs the example this suite built), because the lines wait
/// for the address it writes once it listens.
#[test]
fn readme_test_server_lines_do_not_race_when_pasted() {
    let readme = std::fs::read_to_string(crate::support::root().join("README.md")).unwrap();
    let section =
        &readme[readme.find("## Point it at the test API server").expect("the README's test server section")..];
    let start = section.find("```sh\n").expect("a sh block") + "```sh\n".len();
    let block = &section[start..start + section[start..].find("```").unwrap()];
    assert!(block.contains("cargo run --example apiserver -- "), "{block}");
    let dir = tempfile::tempdir().unwrap();
    let block = block.replace("/tmp/", &format!("{}/", dir.path().display()));
    // the example beside this test binary: target/debug/examples/apiserver
    let exe = std::env::current_exe().unwrap();
    let server = exe.parent().unwrap().parent().unwrap().join("examples/apiserver");
    assert!(server.is_file(), "{} is not built (cargo test builds the examples)", server.display());
    let built = std::fs::metadata(&server).and_then(|m| m.modified()).unwrap();
    for f in std::fs::read_dir(crate::support::root().join("tests/support/apiserver")).unwrap() {
        let changed = f.unwrap().metadata().and_then(|m| m.modified()).unwrap();
        assert!(changed <= built, "{} is older than its source: cargo build --example apiserver", server.display());
    }
    let bin_dir = std::path::Path::new(crate::support::bin()).parent().unwrap().to_path_buf();
    let path = format!("{}:{}", bin_dir.display(), std::env::var("PATH").unwrap_or_default());
    let script = format!(
        "trap 'kill $! 2>/dev/null' EXIT\n\
         cargo() {{ [ \"$1 $2 $3 $4\" = 'run --example apiserver --' ] || exit 99; shift 4; sleep 2; exec \"$APISERVER\" \"$@\"; }}\n\
         {block}"
    );
    let mut c = std::process::Command::new("bash");
    c.current_dir(crate::support::root()).env_clear().env("PATH", path).env("HOME", dir.path()).env("NO_COLOR", "1");
    c.env("APISERVER", &server).arg("-c").arg(&script);
    let out = crate::support::run(c, std::time::Duration::from_secs(60));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("STUCK Site labs/alpha"), "stdout:\n{text}\nstderr:\n{}", stderr(&out));
}

/// Boolean flags take kubectl's forms: bare (true), `--flag=true|false` (and Go's other
/// spellings, `1`, `t`, `F`, …), `-A=false`; `--flag false` is the flag and an argument. And as
/// in kubectl, a flag given twice takes its last value (`-n a -n b`), a list flag all of them.
#[test]
fn boolean_flags_take_kubectls_forms() {
    let s = snap("stuck-everywhere");
    let sweep = |flags: &[&str]| {
        let mut a = vec!["why-stuck", "--all", "-n", "sync-system", "--snapshot", &s, "--now", NOW, "-o", "json"];
        a.extend(flags);
        run(&a)
    };
    let everywhere = stdout_json(&sweep(&["-A"]))["answers"].as_array().unwrap().len();
    let here = stdout_json(&sweep(&[]))["answers"].as_array().unwrap().len();
    assert!(everywhere > here, "{everywhere} answers with -A, {here} in sync-system");
    for (flags, n) in [
        (&["--all-namespaces=true"][..], everywhere),
        (&["--all-namespaces=1"], everywhere),
        (&["-A=false"], here),
        (&["--all-namespaces=False"], here),
        (&["-A", "--all-namespaces=false"], here),
    ] {
        let out = sweep(flags);
        assert_ne!(code(&out), 1, "{flags:?}: {}", stderr(&out));
        assert_eq!(stdout_json(&out)["answers"].as_array().unwrap().len(), n, "{flags:?}");
    }
    // the last of a repeated flag wins
    let out = run(&["tree", "site/alpha", "-n", "nope", "-n", "labs", "--snapshot", &snap("site-basics")]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    // a value that is no boolean: exit 1, naming it
    let out = sweep(&["--all-namespaces=maybe"]);
    assert_eq!(code(&out), 1);
    assert!(stderr(&out).contains("invalid boolean \"maybe\""), "{}", stderr(&out));
    // the connection flags too (offline they change nothing)
    let out = sweep(&["--insecure-skip-tls-verify=true", "--disable-compression=false"]);
    assert!(matches!(code(&out), 0 | 2 | 3), "{}", stderr(&out));
}

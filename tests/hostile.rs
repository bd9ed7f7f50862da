//! Hostile input and hostile servers (issue 16): what reaches the terminal, the files written,
//! the credentials never echoed.

use std::process::Output;

use crate::support::apiserver::{ApiServer, Fault, FaultKind, Options};
use crate::support::{self, DEADLINE, Env, NOW, run, stderr, stdout};

/// A Status message as a hostile server could send it: a window-title OSC, a screen clear, a
/// C1 CSI, backspaces, and a CR LF that would forge a second `error:` line.
const HOSTILE: &str = "boom\u{1b}]0;pwned\u{7}\u{1b}[2J\u{9b}31m\u{8}\u{8}\r\nerror: forged line\u{202e}";

fn site(fixture: &str) -> std::path::PathBuf {
    support::root().join("tests/fixtures").join(fixture).join("snapshot.json")
}

/// Every stderr line is one `warning:`/`error:` (or progress) line with nothing a terminal
/// would act on.
fn assert_clean_stderr(o: &Output) {
    let err = stderr(o);
    for c in err.chars() {
        assert!(
            c == '\n' || !(c.is_control() || ('\u{202a}'..='\u{202e}').contains(&c)),
            "raw {c:?} on stderr: {err:?}"
        );
    }
    for line in err.lines() {
        assert!(line.starts_with("warning: ") || line.starts_with("error: "), "a line of its own: {line:?}");
    }
    assert!(!err.lines().any(|l| l.starts_with("error: forged")), "a forged line: {err}");
}

#[test]
fn server_status_messages_reach_stderr_escaped_one_line_each() {
    // a list that fails: a warning
    let server = ApiServer::start_with(
        &site("site-basics"),
        Options {
            faults: vec![Fault::resource("configmaps", FaultKind::StatusMessage(500, HOSTILE.into()))],
            ..Options::default()
        },
        0,
    );
    let env = Env::new(&server.url(), None);
    let mut c = env.gc();
    c.args(["why-stuck", "site/alpha", "-n", "labs", "--now", NOW, "--request-timeout", "2s"]);
    let o = run(c, DEADLINE);
    assert!(matches!(o.status.code(), Some(0 | 2)), "{}", stderr(&o));
    assert!(stderr(&o).contains("pwned"), "the message is quoted: {}", stderr(&o));
    assert_clean_stderr(&o);

    // the target's own read fails: an error
    let server = ApiServer::start_with(
        &site("site-basics"),
        Options {
            faults: vec![Fault::resource("sites", FaultKind::StatusMessage(500, HOSTILE.into()))],
            ..Options::default()
        },
        0,
    );
    let env = Env::new(&server.url(), None);
    let mut c = env.gc();
    c.args(["why-stuck", "site/alpha", "-n", "labs", "--now", NOW, "--request-timeout", "2s"]);
    let o = run(c, DEADLINE);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert_clean_stderr(&o);
    assert_eq!(stderr(&o).lines().filter(|l| l.starts_with("error:")).count(), 1, "{}", stderr(&o));
}

#[test]
fn snapshot_names_and_incomplete_entries_reach_stderr_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("snap\u{1b}[2J.json");
    std::fs::write(
        &file,
        format!(
            r#"{{"kind":"List","items":[
              {{"apiVersion":"v1","kind":"ConfigMap","metadata":{{"name":"a","namespace":"x","uid":"1"}}}},
              {{"apiVersion":"v1","kind":"ConfigMap","metadata":{{"name":"b\u001b]0;t\u0007","namespace":"x","uid":"1"}}}}],
              "incomplete":[{}]}}"#,
            serde_json::to_string(HOSTILE).unwrap()
        ),
    )
    .unwrap();
    let env = Env::new("http://127.0.0.1:9", None);
    let mut c = env.command(support::bin());
    c.args(["tree", "cm/a", "-n", "x", "--now", NOW, "--snapshot"]).arg(&file);
    let o = run(c, DEADLINE);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stderr(&o).contains("incomplete: boom"), "{}", stderr(&o));
    assert_clean_stderr(&o);
    // an error naming the file
    std::fs::write(&file, "{ broken").unwrap();
    let mut c = env.command(support::bin());
    c.args(["tree", "cm/a", "-n", "x", "--snapshot"]).arg(&file);
    let o = run(c, DEADLINE);
    assert_eq!(o.status.code(), Some(1));
    assert_clean_stderr(&o);
}

fn kubeconfig_with_user(dir: &std::path::Path, server: &str, user: &str) -> std::path::PathBuf {
    let path = dir.join("kubeconfig");
    std::fs::write(
        &path,
        format!(
            "apiVersion: v1\nkind: Config\ncurrent-context: t\nclusters:\n- name: t\n  cluster:\n    server: {server}\ncontexts:\n- name: t\n  context: {{cluster: t, user: t}}\nusers:\n- name: t\n  user:\n{user}"
        ),
    )
    .unwrap();
    path
}

fn gc_with(kubeconfig: &std::path::Path, extra: &[&str]) -> Output {
    let env = Env::new("http://127.0.0.1:9", None);
    let mut c = env.command(support::bin());
    c.env("KUBECONFIG", kubeconfig).args(["tree", "site/alpha", "-n", "labs", "--request-timeout", "2s"]).args(extra);
    run(c, DEADLINE)
}

/// Fails unless the run failed with exactly one `error:` line that does not hold `secret`.
fn assert_one_error_without(o: &Output, secret: &str) {
    assert_eq!(o.status.code(), Some(1), "{}", stderr(o));
    let err = stderr(o);
    assert!(!err.contains(secret), "a credential on stderr: {err}");
    assert_eq!(err.lines().count(), 1, "one error line: {err}");
    assert!(err.starts_with("error: "), "{err}");
}

#[test]
fn kubeconfig_and_exec_plugin_content_is_never_echoed() {
    let dir = tempfile::tempdir().unwrap();
    // a YAML error two lines below the token
    let kc = kubeconfig_with_user(dir.path(), "http://127.0.0.1:9", "    token: SECRET-TOKEN-1\n    bad: [unclosed\n");
    let o = gc_with(&kc, &[]);
    assert_one_error_without(&o, "SECRET-TOKEN-1");
    assert!(stderr(&o).contains("line 15"), "where, at least: {}", stderr(&o));

    // an exec plugin that fails after printing a credential, and one whose JSON is cut short
    let failing = dir.path().join("failing.sh");
    std::fs::write(&failing, "#!/bin/sh\necho 'SECRET-PLUGIN-OUT'\necho 'SECRET-PLUGIN-ERR' >&2\nexit 1\n").unwrap();
    let malformed = dir.path().join("malformed.sh");
    std::fs::write(
        &malformed,
        "#!/bin/sh\necho '{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\",\"status\":{\"token\":\"SECRET-PLUGIN-OUT\"'\n",
    )
    .unwrap();
    for plugin in [&failing, &malformed] {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(plugin, std::fs::Permissions::from_mode(0o755)).unwrap();
        let kc = kubeconfig_with_user(
            dir.path(),
            "http://127.0.0.1:9",
            &format!(
                "    exec:\n      apiVersion: client.authentication.k8s.io/v1\n      command: {}\n      interactiveMode: Never\n",
                plugin.display()
            ),
        );
        let o = gc_with(&kc, &[]);
        assert_one_error_without(&o, "SECRET-PLUGIN");
    }
}

#[test]
fn a_password_in_the_server_url_is_not_printed() {
    let server = ApiServer::start_with(
        &site("site-basics"),
        Options { faults: vec![Fault::path("/api", FaultKind::Status(500))], ..Options::default() },
        0,
    );
    let url = server.url().replacen("http://", "http://admin:SECRET-PASSWORD@", 1);
    let dir = tempfile::tempdir().unwrap();
    let kc = kubeconfig_with_user(dir.path(), &url, "    token: t\n");
    let o = gc_with(&kc, &[]);
    assert_one_error_without(&o, "SECRET-PASSWORD");
    assert!(stderr(&o).contains(server.url().trim_start_matches("http://")), "the server is named: {}", stderr(&o));
    // nor as --server, nor in the cache directory's name
    let o = gc_with(&kc, &["--server", &url, "--cache-dir", dir.path().join("cache").to_str().unwrap()]);
    assert_one_error_without(&o, "SECRET-PASSWORD");
}

#[test]
fn a_token_with_a_control_character_is_one_error_not_a_panic() {
    let server = ApiServer::start(&site("site-basics"));
    let dir = tempfile::tempdir().unwrap();
    let kc = kubeconfig_with_user(dir.path(), &server.url(), "    token: t\n");
    for token in ["abc\n", "a\u{7}bc"] {
        let o = gc_with(&kc, &["--token", token]);
        assert_one_error_without(&o, "panicked");
        assert!(stderr(&o).contains("--token"), "{}", stderr(&o));
    }
    // a `token: |` block ends in a newline
    let kc = kubeconfig_with_user(dir.path(), &server.url(), "    token: |\n      abc\n");
    let o = gc_with(&kc, &[]);
    assert_one_error_without(&o, "panicked");
    assert!(stderr(&o).contains("user \"t\""), "{}", stderr(&o));
    // a token file ending in a newline is trimmed, as client-go does
    let file = dir.path().join("token");
    std::fs::write(&file, "abc\n").unwrap();
    let kc = kubeconfig_with_user(dir.path(), &server.url(), &format!("    tokenFile: {}\n", file.display()));
    let o = gc_with(&kc, &["--now", NOW]);
    assert!(matches!(o.status.code(), Some(0 | 2)), "{}", stderr(&o));
    let auth: Vec<_> = server.requests().iter().map(|r| r.authorization.clone()).collect();
    assert!(!auth.is_empty() && auth.iter().all(|a| a == "Bearer abc"), "{auth:?}");
    // and an empty one is an error
    std::fs::write(&file, "\n").unwrap();
    assert_one_error_without(&gc_with(&kc, &[]), "panicked");
}

#[test]
fn a_tampered_cache_never_makes_secrets_read_in_full() {
    let server = ApiServer::start(&site("site-basics"));
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    let env = Env::new(&server.url(), None);
    let ask = || {
        let mut c = env.gc();
        c.args(["why-stuck", "site/alpha", "-n", "labs", "--now", NOW, "--cache-dir"]).arg(&cache);
        run(c, DEADLINE)
    };
    let o = ask();
    assert!(matches!(o.status.code(), Some(0 | 2)), "{}", stderr(&o));
    let file = walk(&cache).into_iter().find(|p| p.ends_with("kubectl-gc.json")).expect("a cache file");
    let mut v: serde_json::Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    let mut tampered = 0;
    for list in v["items"].as_array_mut().unwrap() {
        if list["groupVersion"] == "v1" {
            for r in list["resources"].as_array_mut().unwrap() {
                if r["name"] == "secrets" {
                    r["kind"] = "Pod".into();
                    tampered += 1;
                }
            }
        }
    }
    assert_eq!(tampered, 1);
    std::fs::write(&file, serde_json::to_vec(&v).unwrap()).unwrap();
    server.clear_requests();
    let o = ask();
    assert!(matches!(o.status.code(), Some(0 | 2)), "{}", stderr(&o));
    assert!(
        server.requests().iter().any(|r| r.path.contains("/secrets")),
        "secrets were read from the cache's mapping"
    );
    support::assert_read_only(&server);
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten() {
        let p = e.unwrap().path();
        if p.is_dir() { out.extend(walk(&p)) } else { out.push(p) }
    }
    out
}

#[test]
fn snapshot_writes_its_file_whole_private_and_only_with_force_over_another() {
    let server = ApiServer::start(&site("site-basics"));
    let env = Env::new(&server.url(), None);
    let file = env.dir.path().join("labs.json");
    let snap = |extra: &[&str]| {
        let mut c = env.gc();
        c.args(["snapshot", "-n", "labs", "--file"]).arg(&file).args(extra);
        run(c, DEADLINE)
    };
    let o = snap(&["-o", "json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let first = std::fs::read(&file).unwrap();
    serde_json::from_slice::<serde_json::Value>(&first).expect("a JSON snapshot");
    {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(std::fs::metadata(&file).unwrap().permissions().mode() & 0o777, 0o600);
    }
    std::fs::write(&file, "precious").unwrap();
    let o = snap(&[]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("--force"), "{}", stderr(&o));
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "precious");
    let o = snap(&["--force"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // the capture time differs between the two runs; the objects do not
    let items = |b: &[u8]| serde_json::from_slice::<serde_json::Value>(b).unwrap()["items"].as_array().unwrap().len();
    assert_eq!(items(&std::fs::read(&file).unwrap()), items(&first));
    // -o is the format (contract §1), never a path
    let mut c = env.gc();
    c.args(["snapshot", "-n", "labs", "-o"]).arg(env.dir.path().join("x.json"));
    let o = run(c, DEADLINE);
    assert_eq!(o.status.code(), Some(1));
    assert!(!env.dir.path().join("x.json").exists());
}

/// A chain of `n` ConfigMaps in namespace `deep`, each owned by the previous one.
fn chain(dir: &std::path::Path, n: usize, incomplete: &[&str]) -> std::path::PathBuf {
    let items: Vec<serde_json::Value> = (0..n)
        .map(|i| {
            let mut meta = serde_json::json!({"name": format!("c{i}"), "namespace": "deep", "uid": format!("u{i}")});
            if i > 0 {
                meta["ownerReferences"] = serde_json::json!([{"apiVersion":"v1","kind":"ConfigMap","name":format!("c{}", i-1),"uid":format!("u{}", i-1)}]);
            }
            serde_json::json!({"apiVersion":"v1","kind":"ConfigMap","metadata":meta})
        })
        .collect();
    let f = dir.join("chain.json");
    std::fs::write(&f, serde_json::json!({"kind":"List","items":items,"incomplete":incomplete}).to_string()).unwrap();
    f
}

fn offline(args: &[&str], snapshot: &std::path::Path) -> Output {
    let env = Env::new("http://127.0.0.1:9", None);
    let mut c = env.command(support::bin());
    c.args(args).args(["--now", NOW, "--snapshot"]).arg(snapshot);
    run(c, DEADLINE)
}

#[test]
fn tree_json_and_yaml_say_what_could_not_be_read() {
    let dir = tempfile::tempdir().unwrap();
    let f = chain(dir.path(), 3, &["configmaps in namespace \"other\" could not be listed: forbidden (403)"]);
    let o = offline(&["tree", "cm/c0", "-n", "deep", "-o", "json"], &f);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["incomplete"][0], "configmaps in namespace \"other\" could not be listed: forbidden (403)");
    assert_eq!(v["dependents"][0]["object"]["name"], "c1");
    let o = offline(&["tree", "cm/c0", "-n", "deep", "-o", "yaml"], &f);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let y: serde_json::Value = serde_saphyr::from_slice(&o.stdout).unwrap();
    assert_eq!(y, v, "the YAML is the JSON's shape");
    // and an empty list when everything was read
    let f = chain(dir.path(), 2, &[]);
    let v: serde_json::Value =
        serde_json::from_slice(&offline(&["tree", "cm/c0", "-n", "deep", "-o", "json"], &f).stdout).unwrap();
    assert_eq!(v["incomplete"], serde_json::json!([]));
}

#[test]
fn tree_yaml_has_no_depth_limit() {
    let dir = tempfile::tempdir().unwrap();
    let f = chain(dir.path(), 100, &[]);
    let o = offline(&["tree", "cm/c0", "-n", "deep", "-o", "yaml"], &f);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    let block = text.matches("kind: ConfigMap").count();
    let flow = text.matches("\"kind\":\"ConfigMap\"").count();
    assert_eq!(block + flow, 100, "every object once");
    assert!(block > 30 && flow > 30, "block style near the root, flow style deep down ({block}, {flow})");
    // 10,000 levels: linear, not an indentation per level
    let f = chain(dir.path(), 10_000, &[]);
    let o = offline(&["tree", "cm/c0", "-n", "deep", "-o", "yaml"], &f);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(o.stdout.len() < 10_000 * 400, "{} bytes", o.stdout.len());
}

fn live_error(faults: Vec<Fault>, target: &str) -> Output {
    let server = ApiServer::start_with(&site("site-basics"), Options { faults, ..Options::default() }, 0);
    let env = Env::new(&server.url(), None);
    let mut c = env.gc();
    c.args(["why-stuck", target, "-n", "labs", "--now", NOW, "--request-timeout", "1s"]);
    run(c, DEADLINE)
}

#[test]
fn a_refused_target_is_not_called_not_found() {
    for kind in [
        FaultKind::Status(401),
        FaultKind::Status(403),
        FaultKind::Status(500),
        FaultKind::Slow(std::time::Duration::from_secs(3)),
    ] {
        let o = live_error(vec![Fault::resource("sites", kind.clone())], "site/alpha");
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{kind:?}: {err}\n{}", support::stdout(&o));
        assert!(!err.contains("not found"), "{kind:?}: {err}");
        assert!(err.contains("could not be read"), "{kind:?}: {err}");
        assert_eq!(err.lines().filter(|l| l.starts_with("error:")).count(), 1, "{kind:?}: {err}");
    }
}

#[test]
fn a_target_whose_group_fails_discovery_says_so() {
    let o = live_error(vec![Fault::group("own.labhub.io", FaultKind::Unavailable)], "site/alpha");
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(!err.contains("doesn't have a resource type"), "{err}");
    assert!(err.contains("own.labhub.io"), "{err}");
    assert_eq!(err.lines().filter(|l| l.starts_with("error:")).count(), 1, "{err}");
}

#[test]
fn an_object_without_its_crd_can_be_named_and_the_answer_says_what_was_inferred() {
    // `kubectl get site alpha -o yaml` saved to a file
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("alpha.yaml");
    std::fs::write(
        &f,
        "apiVersion: own.labhub.io/v1\nkind: Site\nmetadata:\n  name: alpha\n  namespace: labs\n  uid: 3a9bd23b\n  finalizers: [own.labhub.io/cleanup]\n  deletionTimestamp: \"2026-11-29T10:00:00Z\"\nspec: {}\n",
    )
    .unwrap();
    for name in ["site/alpha", "Site/alpha", "sites.own.labhub.io/alpha", "sites.v1.own.labhub.io/alpha"] {
        let o = offline(&["why-stuck", name, "-n", "labs", "-o", "json"], &f);
        // a lone object: where its controller would run was not in the file, so it cannot be judged
        assert_eq!(o.status.code(), Some(3), "{name}: {}", stderr(&o));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(v["object"]["kind"], "Site");
        let inc = v["incomplete"].as_array().unwrap();
        assert!(inc.iter().any(|i| i.as_str().unwrap().contains("inferred")), "{name}: {inc:?}");
        assert!(stderr(&o).contains("warning: sites.own.labhub.io has no discovery data"), "{}", stderr(&o));
    }
    let o = offline(&["tree", "sites/alpha", "-n", "labs"], &f);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // a name that is not there is still "not found"
    let o = offline(&["why-stuck", "site/beta", "-n", "labs"], &f);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("not found"), "{}", stderr(&o));
}

#[test]
fn a_gc_stall_resting_on_unreadable_dependents_is_unknown() {
    let server = ApiServer::start_with(
        &site("site-operator-gone"),
        Options { faults: vec![Fault::resource("configmaps", FaultKind::Status(403))], ..Options::default() },
        0,
    );
    let env = Env::new(&server.url(), None);
    let mut c = env.gc();
    c.args(["why-stuck", "site/alpha", "-n", "labs", "--now", NOW, "-o", "json"]);
    let o = run(c, DEADLINE);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let codes: Vec<&str> = v["findings"].as_array().unwrap().iter().map(|f| f["code"].as_str().unwrap()).collect();
    let gc = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["message"].as_str().unwrap().starts_with("foregroundDeletion"));
    let gc = gc.expect("foregroundDeletion is explained");
    // no stall claimed with certainty: not an Error, and it says what could not be read
    assert_ne!(gc["severity"], "Error", "{gc}");
    assert!(gc["message"].as_str().unwrap().contains("configmaps in namespace \"labs\" could not be listed"), "{gc}");
    // the operator being down is still the answer, with its certainty
    assert!(codes.contains(&"FinalizerControllerDown"), "{codes:?}");
    // readable, the ConfigMap is the blocking dependent, and no stall is claimed either
    let server = ApiServer::start(&site("site-operator-gone"));
    let env = Env::new(&server.url(), None);
    let mut c = env.gc();
    c.args(["why-stuck", "site/alpha", "-n", "labs", "--now", NOW, "-o", "json"]);
    let v: serde_json::Value = serde_json::from_slice(&run(c, DEADLINE).stdout).unwrap();
    let codes: Vec<&str> = v["findings"].as_array().unwrap().iter().map(|f| f["code"].as_str().unwrap()).collect();
    assert!(codes.contains(&"BlockingDependent") && !codes.contains(&"GarbageCollectorStalled"), "{codes:?}");
}

#[test]
fn usage_errors_are_one_error_line() {
    let env = Env::new("http://127.0.0.1:9", None);
    for args in [&["tree", "--bogus"][..], &["tree", "x/y", "-o", "bogus"], &["plan"], &["why-stuck", "a", "b", "c"]] {
        let mut c = env.command(support::bin());
        c.args(args);
        let o = run(c, DEADLINE);
        assert_eq!(o.status.code(), Some(1), "{args:?}");
        let err = stderr(&o);
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.starts_with("error: ") && err.contains("--help"), "{args:?}: {err}");
    }
}

#[test]
fn offline_a_type_of_a_group_the_capture_could_not_discover_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("s.json");
    std::fs::write(
        &f,
        r#"{"kind":"List","items":[{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namespace":"x","uid":"1"}}],
            "incomplete":["API group own.labhub.io/v1 could not be discovered: the server answered 503"]}"#,
    )
    .unwrap();
    let o = offline(&["why-stuck", "site/alpha", "-n", "x"], &f);
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert!(!err.contains("doesn't have a resource type") && err.contains("own.labhub.io/v1"), "{err}");
    assert_eq!(err.lines().filter(|l| l.starts_with("error:")).count(), 1, "{err}");
    // the same, as a typed entry: its fields, not its words, say it is a discovery failure
    std::fs::write(
        &f,
        r#"{"kind":"List","items":[{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namespace":"x","uid":"1"}}],
            "incomplete":[{"what":{"read":"discovery","group":"own.labhub.io","version":"v1"},"why":"the server answered 503",
                           "line":"reworded: own.labhub.io/v1 unavailable"}]}"#,
    )
    .unwrap();
    let err = stderr(&offline(&["why-stuck", "site/alpha", "-n", "x"], &f));
    assert!(err.contains("API group own.labhub.io/v1 could not be discovered: the server answered 503"), "{err}");
    assert!(err.contains("not among the API groups that could be discovered"), "{err}");
}

/// `s` with every string under one of `keys` (at any depth) carrying [`HOSTILE`].
fn poison(v: &mut serde_json::Value, keys: &[&str]) {
    match v {
        serde_json::Value::Object(m) => {
            for (k, x) in m.iter_mut() {
                match x {
                    serde_json::Value::String(s) if keys.contains(&k.as_str()) => s.push_str(HOSTILE),
                    _ => poison(x, keys),
                }
            }
        }
        serde_json::Value::Array(a) => a.iter_mut().for_each(|x| poison(x, keys)),
        _ => {}
    }
}

/// No terminal control (C0 but the line break, DEL, C1) and no bidi control, raw.
fn assert_no_raw_controls(what: &str, out: &str) {
    let raw: Vec<char> =
        out.chars().filter(|&c| c != '\n' && (c.is_control() || kubectl_gc::names::is_bidi(c))).collect();
    assert!(raw.is_empty(), "{what}: raw {raw:?} in\n{out}");
}

/// The hostile strings text escapes, in a Lease's holder, field managers, Events' reason and
/// message, a webhook's name and `incomplete`: escaped by the same rule in `-o yaml`, every
/// JSON document and DOT, and each YAML answer reads back as its JSON.
#[test]
fn every_output_format_escapes_the_strings_text_escapes() {
    let dir = tempfile::tempdir().unwrap();
    let fixture = site("webhook-blocks-finalizer");
    let mut v: serde_json::Value = serde_json::from_slice(&std::fs::read(&fixture).unwrap()).unwrap();
    poison(&mut v, &["holderIdentity", "manager", "reason", "message"]);
    for item in v["items"].as_array_mut().unwrap() {
        if item["kind"] == "ValidatingWebhookConfiguration" {
            poison(&mut item["webhooks"], &["name"]);
        }
    }
    v["incomplete"] = serde_json::json!([format!("pods in namespace \"x\" could not be listed: {HOSTILE}")]);
    let f = dir.path().join("hostile.json");
    std::fs::write(&f, v.to_string()).unwrap();
    let why = ["why-stuck", "account/acme-payroll", "-n", "finance"];
    let tree = ["tree", "account/acme-payroll", "-n", "finance"];
    let all = ["why-stuck", "--all", "-A"];
    let plan = ["plan", "namespace/finance"];
    let mut shown = 0;
    for args in [&why[..], &tree, &all, &plan] {
        let mut json = None;
        for format in ["text", "json", "yaml"] {
            let o = offline(&[args, &["-o", format]].concat(), &f);
            let out = stdout(&o);
            let what = format!("{} -o {format}", args.join(" "));
            assert!(o.status.code().is_some_and(|c| c <= 3), "{what}: {}", stderr(&o));
            assert_no_raw_controls(&what, &out);
            // text says what could not be read on stderr
            if format != "text" || out.contains("boom") {
                assert!(out.contains("boom"), "{what}: the hostile strings are not shown at all:\n{out}");
                shown += 1;
            }
            match format {
                "json" => json = Some(serde_json::from_str::<serde_json::Value>(&out).unwrap()),
                "yaml" => {
                    let y: serde_json::Value =
                        serde_saphyr::from_str(&out).unwrap_or_else(|e| panic!("{what}: {e}\n{out}"));
                    assert_eq!(Some(y), json, "{what}: the YAML is not the JSON's answer");
                }
                _ => {}
            }
        }
    }
    let o = offline(&[&tree[..], &["-o", "dot"]].concat(), &f);
    assert_no_raw_controls("tree -o dot", &stdout(&o));
    assert!(shown >= 10, "{shown}");
}

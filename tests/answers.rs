//! Answers people act on: printed commands bound to the cluster the answer was read from,
//! ranked safest first, grouped, safe to paste whatever the names; text that fits a terminal
//! and grows linearly.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{Value, json};

use crate::support::apiserver::ApiServer;
use crate::support::{self, DEADLINE, Env, NOW, assert_read_only, checks, fixtures, run, stderr, stdout};

/// The command lines of a text answer (each on its own line, indented under its step).
fn text_commands(text: &str) -> Vec<String> {
    text.lines().map(str::trim_start).filter(|l| l.starts_with("kubectl ")).map(String::from).collect()
}

/// Every `command` of a JSON why-stuck answer.
fn json_commands(v: &Value) -> Vec<String> {
    v["findings"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|f| f["remedy"].as_array().into_iter().flatten())
        .filter_map(|s| s["command"].as_str().map(String::from))
        .collect()
}

fn both(mut c: impl FnMut(&str) -> Output) -> (Vec<String>, Vec<String>) {
    let text = c("text");
    let json_out = c("json");
    let v: Value = serde_json::from_slice(&json_out.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}\n{}", stdout(&json_out), stderr(&json_out)));
    (text_commands(&stdout(&text)), json_commands(&v))
}

fn site_operator_gone() -> PathBuf {
    support::root().join("tests/fixtures/site-operator-gone/snapshot.json")
}

const WHY: [&str; 4] = ["why-stuck", "site/alpha", "-n", "labs"];

#[test]
fn every_printed_command_names_the_cluster_the_answer_was_read_from() {
    let server = ApiServer::start(&site_operator_gone());
    let env = Env::new(&server.url(), None);
    let live = |extra: &[&str], o: &str| {
        let mut c = env.gc();
        c.args(WHY).args(["--now", NOW, "--request-timeout", "5s", "-o", o]).args(extra);
        run(c, DEADLINE)
    };
    let check = |what: &str, (text, json): (Vec<String>, Vec<String>), want: &[&str]| {
        assert!(text.len() >= 3 && json.len() >= 3, "{what}: too few commands: {text:?} {json:?}");
        for c in text.iter().chain(&json) {
            for w in want {
                assert!(c.starts_with("kubectl ") && c.contains(w), "{what}: {c:?} lacks {w:?}");
            }
            assert!(!c.contains("test-token") && !c.contains("--token"), "{what}: a token is printed: {c}");
        }
    };
    // no flag: the kubeconfig's current context, by name, and the file (KUBECONFIG) it is in
    let file = format!("kubectl --kubeconfig={} --context=test ", env.kubeconfig.display());
    check("current context", both(|o| live(&[], o)), &[&file]);
    check("--context", both(|o| live(&["--context", "test"], o)), &[&file]);
    // the default ~/.kube/config goes unsaid
    std::fs::copy(&env.kubeconfig, env.home.join(".kube/config")).unwrap();
    let default = |o: &str| {
        let mut c = env.command(support::bin());
        c.args(WHY).args(["--now", NOW, "--request-timeout", "5s", "-o", o]);
        run(c, DEADLINE)
    };
    let (text, json) = both(default);
    assert!(text.iter().chain(&json).all(|c| !c.contains("--kubeconfig")), "{text:?}");
    check("default kubeconfig", (text, json), &["kubectl --context=test "]);
    std::fs::remove_file(env.home.join(".kube/config")).unwrap();
    // --server with a token and no kubeconfig at all: the server, never the token
    let bare = |o: &str| {
        let mut c = env.command(support::bin());
        c.args(WHY).args(["--now", NOW, "--request-timeout", "5s", "-o", o]);
        c.args(["--server", &server.url(), "--token", "s3cret-token"]);
        run(c, DEADLINE)
    };
    let (text, json) = both(bare);
    for c in text.iter().chain(&json) {
        assert!(c.contains(&format!(" --server={} ", server.url())), "{c}");
        assert!(!c.contains("s3cret") && !c.contains("--context"), "{c}");
    }
    check("--server", (text, json), &[" --server="]);

    // offline: the context a `kubectl gc snapshot` file recorded
    let mut c = env.gc();
    c.args(["snapshot", "-A", "--request-timeout", "5s"]);
    let captured = run(c, DEADLINE);
    assert!(captured.status.success(), "{}", stderr(&captured));
    let file = env.dir.path().join("captured.json");
    std::fs::write(&file, &captured.stdout).unwrap();
    assert!(stdout(&captured).contains("\"capturedContext\":\"test\""), "the file's head records the context");
    let offline = |o: &str| {
        let mut c = env.command(support::bin());
        c.args(WHY).args(["--now", NOW, "-o", o, "--snapshot"]).arg(&file);
        run(c, DEADLINE)
    };
    // with the server it was read from: a kubeconfig elsewhere whose `test` context names
    // another cluster cannot take the command there
    let at_server = format!("kubectl --context=test --server={} ", server.url());
    assert!(
        stdout(&captured).contains(&format!("\"capturedServer\":\"{}\"", server.url())),
        "the file records the server"
    );
    check("offline, recorded", both(offline), &[&at_server]);
    // any other file: none, said once
    let plain = {
        let mut c = env.command(support::bin());
        c.args(WHY).args(["--now", NOW, "--snapshot"]).arg(site_operator_gone());
        run(c, DEADLINE)
    };
    let text = stdout(&plain);
    assert!(text_commands(&text).iter().all(|c| !c.contains("--context")), "{text}");
    assert_eq!(text.matches("these commands name no cluster").count(), 1, "{text}");
    assert_read_only(&server);
}

/// A snapshot taken through a context whose namespace is `labs` answers offline without `-n`
/// as the live command did; a file that records no namespace looks in `default`, and says so.
#[test]
fn offline_the_namespace_defaults_to_the_captured_contexts() {
    let server = ApiServer::start(&site_operator_gone());
    let env = Env::new(&server.url(), Some("labs"));
    let mut c = env.gc();
    c.args(["snapshot", "-A", "--request-timeout", "5s"]);
    let captured = run(c, DEADLINE);
    assert!(captured.status.success(), "{}", stderr(&captured));
    assert!(stdout(&captured).contains("\"capturedNamespace\":\"labs\""), "the file's head records the namespace");
    let file = env.dir.path().join("captured.json");
    std::fs::write(&file, &captured.stdout).unwrap();
    let offline = |file: &std::path::Path| {
        let mut c = env.command(support::bin());
        c.args(["why-stuck", "site/alpha", "--now", NOW, "--snapshot"]).arg(file);
        run(c, DEADLINE)
    };
    let o = offline(&file);
    assert_eq!(o.status.code(), Some(2), "site/alpha in labs, found without -n: {}", stderr(&o));
    let plain = env.dir.path().join("plain.json");
    std::fs::write(&plain, stdout(&captured).replace("\"capturedNamespace\":\"labs\",", "")).unwrap();
    let o = offline(&plain);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("\"alpha\" not found in namespace \"default\""), "{}", stderr(&o));
}

/// `KUBECONFIG=other.yaml:a.yaml` (relative, run from their directory) with context `ctx-a`
/// defined in `a.yaml` only: commands name `a.yaml` by its absolute path, so pasted in a shell
/// whose `KUBECONFIG` names another file with a context `ctx-a` they still act on this cluster.
#[test]
fn printed_commands_name_the_kubeconfig_file_that_defines_the_context() {
    let server = ApiServer::start(&site_operator_gone());
    let env = Env::new(&server.url(), None);
    let dir = env.dir.path();
    let yaml = |ctx: &str, server: &str| {
        format!(
            "apiVersion: v1\nkind: Config\ncurrent-context: {ctx}\nclusters:\n- name: c-{ctx}\n  cluster:\n    server: {server}\ncontexts:\n- name: {ctx}\n  context:\n    cluster: c-{ctx}\n    user: u\nusers:\n- name: u\n  user:\n    token: test-token\n"
        )
    };
    std::fs::write(dir.join("a.yaml"), yaml("ctx-a", &server.url())).unwrap();
    // defines another context, and names ctx-a current (the first file's current-context wins)
    std::fs::write(
        dir.join("other.yaml"),
        yaml("ctx-b", "http://127.0.0.1:9").replace("current-context: ctx-b", "current-context: ctx-a"),
    )
    .unwrap();
    for kubeconfig in ["a.yaml", "other.yaml:a.yaml"] {
        let run_o = |o: &str| {
            let mut c = env.command(support::bin());
            c.current_dir(dir).env("KUBECONFIG", kubeconfig);
            c.args(WHY).args(["--now", NOW, "--request-timeout", "5s", "-o", o]);
            run(c, DEADLINE)
        };
        let (text, json) = both(run_o);
        assert!(text.len() >= 3 && json.len() >= 3, "{kubeconfig}: too few commands: {text:?}");
        let want = format!("kubectl --kubeconfig={} --context=ctx-a ", dir.join("a.yaml").display());
        for c in text.iter().chain(&json) {
            assert!(c.starts_with(&want), "KUBECONFIG={kubeconfig}: {c:?} does not start {want:?}");
        }
    }
    assert_read_only(&server);
}

/// The ranks of a text answer's numbered steps: whether each is marked destructive.
fn text_ranks(text: &str) -> Vec<bool> {
    let mut out = Vec::new();
    let mut in_steps = false;
    let mut current: Option<String> = None;
    for line in text.lines() {
        if line.starts_with("Next steps") {
            in_steps = true;
            continue;
        }
        if !in_steps {
            continue;
        }
        let t = line.trim_start();
        let numbered = t.split_once(". ").is_some_and(|(n, _)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
        if numbered || line.is_empty() || t.starts_with("(these commands") {
            if let Some(s) = current.take() {
                out.push(s.contains("[destructive]"));
            }
            if numbered {
                current = Some(t.to_string());
            }
            if line.is_empty() {
                in_steps = false;
            }
        } else if let Some(s) = &mut current
            && !t.starts_with("kubectl ")
        {
            s.push(' ');
            s.push_str(t);
        }
    }
    if let Some(s) = current {
        out.push(s.contains("[destructive]"));
    }
    out
}

fn safest_first(ranks: &[bool]) -> bool {
    ranks.windows(2).all(|w| !w[0] || w[1])
}

#[test]
fn no_destructive_step_precedes_a_safer_one_on_any_fixture() {
    let mut answers = 0;
    let mut destructive = 0;
    for fixture in fixtures() {
        for args in checks(&fixture).into_iter().filter(|a| a[0] == "why-stuck") {
            for width in ["0", "80"] {
                let mut c = Command::new(support::bin());
                c.args(&args).args(["--now", NOW, "--width", width, "--snapshot"]).arg(fixture.join("snapshot.json"));
                let out = run(c, DEADLINE);
                let ranks = text_ranks(&stdout(&out));
                assert!(safest_first(&ranks), "{} {args:?}: {ranks:?}\n{}", fixture.display(), stdout(&out));
                destructive += ranks.iter().filter(|d| **d).count();
            }
            let mut c = Command::new(support::bin());
            c.args(&args).args(["--now", NOW, "-o", "json", "--snapshot"]).arg(fixture.join("snapshot.json"));
            let v: Value = serde_json::from_slice(&run(c, DEADLINE).stdout).unwrap();
            // one answer's findings, or (why-stuck --all) every answer's
            let answers_of = |v: &Value| -> Vec<Value> {
                match v.get("answers").and_then(Value::as_array) {
                    Some(all) => all.clone(),
                    None => vec![v.clone()],
                }
            };
            for f in answers_of(&v).iter().flat_map(|a| a["findings"].as_array().cloned().unwrap_or_default()) {
                let ranks: Vec<bool> =
                    f["remedy"].as_array().unwrap().iter().map(|s| s["destructive"].as_bool().unwrap()).collect();
                assert!(safest_first(&ranks), "{} {args:?}: {f}", fixture.display());
            }
            answers += 1;
        }
    }
    assert!(answers >= 5 && destructive > 0, "{answers} answers, {destructive} destructive steps");
    assert!(safest_first(&[false, false, true]) && !safest_first(&[true, false]), "the check can fail");
}

/// A terminating namespace holding `n` ConfigMaps that wait on one finalizer whose controller
/// is gone, as a snapshot file.
fn namespace_with_stuck_content(dir: &Path, n: usize, names: &dyn Fn(usize) -> String, ns: &str) -> PathBuf {
    let mut items = vec![json!({
        "apiVersion": "v1", "kind": "Namespace",
        "metadata": {"name": ns, "uid": "ns-uid", "creationTimestamp": "2026-11-29T10:00:00Z",
                     "deletionTimestamp": "2026-11-29T11:00:00Z"},
        "spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Terminating"}
    })];
    for i in 0..n {
        items.push(json!({
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": names(i), "namespace": ns, "uid": format!("cm-{i}"), "resourceVersion": format!("{}", 100 + i),
                         "creationTimestamp": "2026-11-29T10:00:00Z", "deletionTimestamp": "2026-11-29T11:00:00Z",
                         "finalizers": ["example.com/cleanup"]}
        }));
    }
    let file = dir.join(format!("ns-{n}.json"));
    std::fs::write(&file, serde_json::to_vec(&json!({"apiVersion": "v1", "kind": "List", "items": items})).unwrap())
        .unwrap();
    file
}

fn why_stuck_file(args: &[&str], file: &Path) -> Output {
    let mut c = Command::new(support::bin());
    c.env("NO_COLOR", "1").args(args).args(["--now", NOW, "--snapshot"]).arg(file);
    run(c, DEADLINE)
}

#[test]
fn identical_finalizer_removals_are_one_step_with_one_command_per_object() {
    let dir = tempfile::tempdir().unwrap();
    let file = namespace_with_stuck_content(dir.path(), 40, &|i| format!("cm-{i}"), "big");
    let out = why_stuck_file(&["why-stuck", "ns/big"], &file);
    let text = stdout(&out);
    let headings: Vec<&str> = text.lines().filter(|l| l.contains("remove the finalizer")).collect();
    assert_eq!(headings.len(), 1, "one heading for the 40 removals:\n{text}");
    assert!(headings[0].contains("(40 objects, one command each)"), "{}", headings[0]);
    let patches: Vec<String> = text_commands(&text).into_iter().filter(|c| c.starts_with("kubectl patch")).collect();
    assert_eq!(patches.len(), 40, "{text}");
    for i in 0..40 {
        assert!(patches.iter().any(|p| p.contains(&format!("configmaps cm-{i} -n big "))), "cm-{i}");
    }
}

#[test]
fn text_output_grows_linearly_with_stuck_content() {
    let dir = tempfile::tempdir().unwrap();
    let size = |n: usize| {
        let file = namespace_with_stuck_content(dir.path(), n, &|i| format!("cm-{i:06}"), "big");
        let out = why_stuck_file(&["why-stuck", "ns/big"], &file);
        // stuck, or (nothing in the file shows where example.com's controller would run) unknown
        assert!(matches!(out.status.code(), Some(2 | 3)), "{}", stderr(&out));
        assert_eq!(text_commands(&stdout(&out)).len(), n, "one removal per object");
        out.stdout.len() as f64
    };
    let (small, large) = (size(1_000), size(2_000));
    let ratio = large / small;
    assert!((1.8..2.2).contains(&ratio), "1k objects: {small} bytes, 2k: {large} bytes");
}

/// Names that must reach kubectl as one argument each, and run nothing when pasted.
fn hostile_names(marker: &Path) -> Vec<String> {
    let m = marker.display();
    vec![
        format!("$(touch {m})"),
        format!("`touch {m}`"),
        format!("a;touch {m};b"),
        "--all".into(),
        "-n".into(),
        format!("x\ntouch {m}\n"),
        "it's \"quoted\"".into(),
        format!("a'$(touch {m})'b"),
        "back\\slash\r".into(),
        "rtl\u{202e}txt".into(),
        "c1\u{9b}31m".into(),
    ]
}

/// Runs one pasted line in bash with `kubectl` a function that records its argv.
fn paste(line: &str, log: &Path, cwd: &Path) -> Output {
    let script = format!(
        "kubectl() {{ {{ printf 'ARGC=%d\\0' \"$#\"; printf '%s\\0' \"$@\"; }} >> {}; }}\n{line}\n",
        log.display()
    );
    let mut c = Command::new("bash");
    c.current_dir(cwd).env_clear().env("PATH", "/usr/bin:/bin").env("LC_ALL", "C.UTF-8").arg("-c").arg(script);
    run(c, DEADLINE)
}

fn recorded(log: &Path) -> Vec<Vec<String>> {
    let bytes = std::fs::read(log).unwrap_or_default();
    let text = String::from_utf8(bytes).expect("arguments arrive as UTF-8");
    let mut fields = text.split('\0');
    let mut out = Vec::new();
    while let Some(head) = fields.next() {
        let Some(n) = head.strip_prefix("ARGC=") else { break };
        let n: usize = n.parse().unwrap();
        out.push(fields.by_ref().take(n).map(String::from).collect());
    }
    out
}

#[test]
fn pasted_commands_pass_hostile_names_as_single_arguments_and_run_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("pwned");
    let names = hostile_names(&marker);
    // the namespace is asked about on the command line, where (as in kubectl) a second slash
    // is refused: its command substitution touches the marker by a relative path, pasted in `dir`
    for ns in ["$(touch pwned)".to_string(), "-x".to_string()] {
        let file = namespace_with_stuck_content(dir.path(), names.len(), &|i| names[i].clone(), &ns);
        let target = format!("ns/{ns}");
        let text = why_stuck_file(&["why-stuck", &target], &file);
        let json_out = why_stuck_file(&["why-stuck", &target, "-o", "json"], &file);
        let v: Value =
            serde_json::from_slice(&json_out.stdout).unwrap_or_else(|e| panic!("{e}: {}", stderr(&json_out)));
        // nothing a terminal acts on reaches it raw: no C1 control, no bidi override, and in
        // text no newline inside a field (every name is on one line)
        for (what, out) in [("text", stdout(&text)), ("json", stdout(&json_out))] {
            assert!(!out.contains('\u{9b}') && !out.contains('\u{202e}') && !out.contains('\r'), "{what}: {out}");
        }
        assert!(!stdout(&text).lines().any(|l| l.starts_with("touch ")), "a name forged a line:\n{}", stdout(&text));
        for (what, lines) in [("text", text_commands(&stdout(&text))), ("json", json_commands(&v))] {
            let patches: Vec<&String> = lines.iter().filter(|l| l.starts_with("kubectl patch")).collect();
            assert_eq!(patches.len(), names.len(), "{what}: {lines:#?}");
            let log = dir.path().join(format!("argv-{what}"));
            let _ = std::fs::remove_file(&log);
            for line in &lines {
                let out = paste(line, &log, dir.path());
                assert!(out.status.success(), "{what}: {line}: {}", stderr(&out));
            }
            assert!(!marker.exists(), "{what}: a pasted command ran something");
            let calls = recorded(&log);
            assert_eq!(calls.len(), lines.len(), "{what}: one kubectl call per command");
            for name in &names {
                let call = calls
                    .iter()
                    .find(|argv| {
                        argv.first().map(String::as_str) == Some("patch")
                            && argv.windows(2).any(|w| w[0] == "configmaps" && w[1] == *name)
                    })
                    .unwrap_or_else(|| panic!("{what}: {name:?} did not arrive as one argument: {calls:#?}"));
                // the namespace, as -n NS or -n=NS, and the name after `--` when it looks like a flag
                assert!(
                    call.windows(2).any(|w| w[0] == "-n" && w[1] == ns) || call.contains(&format!("-n={ns}")),
                    "{what}: namespace {ns:?} in {call:?}"
                );
                let at = call.iter().position(|a| a == "configmaps").unwrap();
                if name.starts_with('-') {
                    assert!(
                        call[..at].contains(&"--".to_string()),
                        "{what}: {name:?} could be read as a flag: {call:?}"
                    );
                }
            }
        }
    }
}

/// Column width of a line (no colour here: NO_COLOR and a pipe).
fn columns(s: &str) -> usize {
    s.chars().count()
}

#[test]
fn text_fits_80_columns_except_unbreakable_commands() {
    let mut checked = 0;
    let mut long_lines = 0;
    for fixture in fixtures() {
        for args in checks(&fixture).into_iter().filter(|a| a[0] == "why-stuck") {
            let mut c = Command::new(support::bin());
            c.env("NO_COLOR", "1").args(&args).args(["--now", NOW, "--width", "80", "--snapshot"]);
            c.arg(fixture.join("snapshot.json"));
            let text = stdout(&run(c, DEADLINE));
            for line in text.lines() {
                let t = line.trim_start();
                let unbreakable = t.starts_with("kubectl ") || !t.contains(' ');
                assert!(
                    columns(line) <= 80 || unbreakable,
                    "{} {args:?}: {} columns: {line}",
                    fixture.display(),
                    columns(line)
                );
            }
            // the same answer unwrapped: the same words
            let mut c = Command::new(support::bin());
            c.env("NO_COLOR", "1").args(&args).args(["--now", NOW, "--snapshot"]).arg(fixture.join("snapshot.json"));
            let flat = stdout(&run(c, DEADLINE));
            // prose keeps its word order; a table (why-stuck --all's summary) wraps cells across
            // rows, so there only the words themselves must be the same
            let words = |s: &str| {
                let mut w = s.split_whitespace().map(String::from).collect::<Vec<_>>();
                if args.contains(&"--all".to_string()) {
                    w.sort();
                }
                w
            };
            assert_eq!(words(&text), words(&flat), "{} {args:?}: wrapping changed the words", fixture.display());
            long_lines += flat.lines().filter(|l| columns(l) > 80).count();
            checked += 1;
        }
    }
    assert!(checked >= 5 && long_lines > 10, "{checked} answers, {long_lines} long lines unwrapped");
}

/// Every ```console example of the README and of `docs/*.md`: `$ kubectl gc …` and what it
/// prints, byte for byte.
#[test]
fn readme_examples_rerun_byte_for_byte() {
    let mut pages = vec![support::root().join("README.md")];
    let mut docs: Vec<_> = std::fs::read_dir(support::root().join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    docs.sort();
    pages.extend(docs);
    let mut examples = 0;
    let mut in_readme = 0;
    for page in &pages {
        let text = std::fs::read_to_string(page).unwrap();
        let mut lines = text.lines();
        while let Some(line) = lines.next() {
            if line != "```console" {
                continue;
            }
            let cmd = lines.next().unwrap();
            let args = cmd
                .strip_prefix("$ kubectl gc ")
                .unwrap_or_else(|| panic!("{}: not a kubectl gc example: {cmd}", page.display()));
            let mut want = String::new();
            for l in lines.by_ref() {
                if l == "```" {
                    break;
                }
                want.push_str(l);
                want.push('\n');
            }
            let mut c = Command::new(support::bin());
            c.current_dir(support::root()).env_clear().env("NO_COLOR", "1").args(args.split_whitespace());
            let out = run(c, DEADLINE);
            assert_eq!(
                stdout(&out),
                want,
                "{}: example `{cmd}` prints otherwise (stderr: {})",
                page.display(),
                stderr(&out)
            );
            examples += 1;
            in_readme += usize::from(page.ends_with("README.md"));
        }
    }
    // the README shows each of the three commands once; the rest are in docs/
    assert!(in_readme >= 3 && examples >= 8, "only {in_readme} README examples, {examples} in all");
}

#[test]
fn the_plan_under_why_stuck_is_headed_by_what_it_shows() {
    let plan_of = |fixture: &str, target: &[&str]| {
        let mut c = Command::new(support::bin());
        c.args(["why-stuck", "--plan"]).args(target).args(["--now", NOW, "--snapshot"]);
        c.arg(support::root().join("tests/fixtures").join(fixture).join("snapshot.json"));
        stdout(&run(c, DEADLINE))
    };
    // an aggregated API down: even with every finalizer removed, the namespace stays blocked
    let blocked = plan_of("apiservice-down", &["ns/metrics-test"]);
    assert!(blocked.contains("the deletion stays blocked:"), "{blocked}");
    assert!(!blocked.contains("Once the blockers are gone"), "{blocked}");
    assert!(blocked.contains("Plan: Namespace metrics-test is already being deleted"), "{blocked}");
    let done = plan_of("site-operator-gone", &["site/alpha", "-n", "labs"]);
    assert!(done.contains("Once the blockers are gone") && done.contains("  blocked: 0"), "{done}");
}

#[test]
fn answers_cite_kubernetes_not_internal_documents() {
    let mut answers = 0;
    for fixture in fixtures() {
        for args in checks(&fixture) {
            for o in ["text", "json"] {
                let mut c = Command::new(support::bin());
                c.args(&args).args(["--now", NOW, "-o", o, "--snapshot"]).arg(fixture.join("snapshot.json"));
                let out = stdout(&run(c, DEADLINE));
                for internal in ["gc-semantics", "contract.md", "§"] {
                    assert!(!out.contains(internal), "{} {args:?}: {internal} in\n{out}", fixture.display());
                }
                answers += 1;
            }
        }
    }
    assert!(answers >= 20, "{answers}");
}

/// admin-bound-controller (a Restore whose controller is at work: in progress, exit 0) with a
/// ValidatingAdmissionPolicy on Restores whose paramKind is not served, bound Warn-only; with
/// the discovery data a `kubectl gc snapshot` file carries when `discovery` is true.
fn restore_behind_a_policy(dir: &Path, discovery: bool) -> PathBuf {
    let file = support::root().join("tests/fixtures/admin-bound-controller/snapshot.json");
    let mut v: Value = serde_json::from_slice(&std::fs::read(file).unwrap()).unwrap();
    let items = v["items"].as_array_mut().unwrap();
    items.push(json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": "restore-limits", "uid": "vap-restore-limits"},
        "spec": {"paramKind": {"apiVersion": "limits.example.net/v1", "kind": "RestoreLimit"},
            "matchConstraints": {"resourceRules": [{"apiGroups": ["archive.example.net"], "apiVersions": ["*"],
                "operations": ["UPDATE"], "resources": ["restores"]}]},
            "validations": [{"expression": "object.spec.size <= params.spec.maxSize"}]}}));
    items.push(json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicyBinding",
        "metadata": {"name": "restore-limits", "uid": "vapb-restore-limits"},
        "spec": {"policyName": "restore-limits", "validationActions": ["Warn"],
            "paramRef": {"name": "default", "parameterNotFoundAction": "Deny"}}}));
    if discovery {
        items.push(json!({"apiVersion": "v1", "kind": "APIResourceList", "groupVersion": "archive.example.net/v1",
            "resources": [{"name": "restores", "singularName": "restore", "namespaced": true, "kind": "Restore",
                "verbs": ["get", "list", "watch", "update"]}]}));
    }
    let out = dir.join(if discovery { "with-discovery.json" } else { "plain.json" });
    std::fs::write(&out, serde_json::to_vec(&v).unwrap()).unwrap();
    out
}

#[test]
fn a_policy_that_cannot_configure_makes_a_healthy_deletion_stuck_only_where_the_input_shows_it() {
    let dir = tempfile::tempdir().unwrap();
    let args = ["why-stuck", "restore/ledger-2026-11-29", "-n", "archive"];
    // discovery data that serves no RestoreLimit: every finalizer removal is denied
    let out = why_stuck_file(&args, &restore_behind_a_policy(dir.path(), true));
    assert_eq!(out.status.code(), Some(2), "{}\n{}", stdout(&out), stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("ValidatingAdmissionPolicy restore-limits fails to configure"), "{text}");
    assert!(text.contains("limits.example.net/v1 RestoreLimit"), "{text}");
    // the controller at work is not left to read as "wait": its own UPDATE is refused
    assert!(
        text.contains("is refused (by ValidatingAdmissionPolicy restore-limits, above): waiting will not finish it"),
        "{text}"
    );
    // read, then let it configure, and no finalizer removal before those
    let ranks = text_ranks(&text);
    assert!(safest_first(&ranks), "{ranks:?}\n{text}");
    // a plain file (no discovery data): whether it is served is not known: Unknown (exit 3),
    // never "in progress", with a warning that says what is not certain
    let out = why_stuck_file(&[&args[..], &["-o", "json"]].concat(), &restore_behind_a_policy(dir.path(), false));
    assert_eq!(out.status.code(), Some(3), "{}\n{}", stdout(&out), stderr(&out));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["verdict"], "Unknown", "{v}");
    let f = v["findings"].as_array().unwrap().iter().find(|f| f["code"] == "AdmissionDenied").expect("a warning");
    assert_eq!(f["severity"], "Warning");
    assert!(f["message"].as_str().unwrap().contains("not certain: the input holds no discovery data"), "{f}");
}

/// A step that removes a finalizer says what it leaves behind where the object records it
/// (contract §4.3.4), in text and JSON alike.
#[test]
fn a_finalizer_removal_says_what_it_leaves_behind() {
    let snap = support::root().join("tests/fixtures/csi-driver-removed/snapshot.json");
    let args = ["why-stuck", "pv/pvc-5f0e2c71-9b3d-4e8a-a6f4-1d2c3b4a5e6f", "--snapshot", snap.to_str().unwrap()];
    let json = crate::util::stdout_json(&crate::util::run(&[&args[..], &["--now", NOW, "-o", "json"]].concat()));
    let removal = json["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| {
            s["command"].as_str().is_some_and(|c| c.contains("\"op\":\"remove\",\"path\":\"/metadata/finalizers"))
        })
        .expect("a finalizer removal");
    assert!(
        removal["text"].as_str().unwrap().contains("It leaves behind the volume blk-0c4e1b7a9f2d3e8a1"),
        "{removal}"
    );
}

/// A controller whose Deployment asks for no replica is scaled back up, the step chosen from the
/// Deployment's own spec (not from how the evidence words it).
#[test]
fn a_controller_scaled_to_zero_is_scaled_back_up() {
    let snap = support::root().join("tests/fixtures/site-operator-gone/snapshot.json");
    let out = crate::util::run(&[
        "why-stuck",
        "site/alpha",
        "-n",
        "labs",
        "--snapshot",
        snap.to_str().unwrap(),
        "--now",
        NOW,
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("kubectl scale deployment/site-operator -n site-system --replicas=1"), "{text}");
}

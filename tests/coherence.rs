//! One answer, one story (contract §4.3.4), over every `why-stuck` check of every fixture: the
//! invariants shared/tools/check-coherence holds any answer to, so that a new rule cannot bring
//! back a contradiction unnoticed, whatever the fixtures expect.
//!
//! - I1 no stall ("missed the event") beside a refusal (a denial, a dead webhook) on one object
//! - I2 no printed change to an object whose change is refused, unless the step says so
//! - I3 durations as people read them: no bare seconds of four digits or more in text
//! - I4 no line repeated word for word in text (longer than 30 characters, commands aside)
//! - I5 `plan --cascade=background` of the same target blocks something where why-stuck finds
//!   a refusal

use std::collections::{BTreeMap, BTreeSet, HashMap};

use serde_json::Value;

use crate::util::{fixtures_dir, run, stdout_json};

const STALLS: [&str; 3] = ["ControllerStalled", "GarbageCollectorStalled", "FinalizerNotProgressing"];
const REFUSALS: [&str; 2] = ["AdmissionDenied", "AdmissionWebhookUnavailable"];

/// Every distinct `why-stuck` check (not `--all`) of every fixture: (fixture, args, now).
fn answers() -> Vec<(String, Vec<String>, String)> {
    let mut out = Vec::new();
    let mut dirs: Vec<_> = std::fs::read_dir(fixtures_dir()).unwrap().map(|e| e.unwrap().path()).collect();
    dirs.sort();
    for dir in dirs {
        let expected: Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("expected.json")).unwrap()).unwrap();
        let now = expected["now"].as_str().unwrap().to_string();
        let mut seen = BTreeSet::new();
        for c in expected["checks"].as_array().unwrap() {
            let args: Vec<String> =
                c["args"].as_array().unwrap().iter().map(|a| a.as_str().unwrap().to_string()).collect();
            if args[0] != "why-stuck" || args.iter().any(|a| a == "--all") || !seen.insert(args.clone()) {
                continue;
            }
            let snapshot = dir.join("snapshot.json").display().to_string();
            let mut full = args;
            full.extend(["--snapshot".into(), snapshot, "--now".into(), now.clone()]);
            out.push((dir.file_name().unwrap().to_string_lossy().into_owned(), full, now.clone()));
        }
    }
    out
}

fn argv(args: &[String], extra: &[&str]) -> Vec<String> {
    args.iter().cloned().chain(extra.iter().map(|s| s.to_string())).collect()
}

fn run_strs(args: &[String]) -> std::process::Output {
    let v: Vec<&str> = args.iter().map(String::as_str).collect();
    run(&v)
}

/// (kind, namespace, name) of a JSON object reference.
fn key(r: &Value) -> (String, String, String) {
    let s = |k: &str| r.get(k).and_then(Value::as_str).unwrap_or("").to_string();
    (s("kind"), s("namespace"), s("name"))
}

/// The incoherences of one answer, each as `In: what`: from its JSON, its text, and (asked only
/// where it finds a refusal) whether `plan` of the same target blocks anything.
fn judge(answer: &Value, text: &str, plan_blocks: impl FnOnce() -> bool) -> Vec<String> {
    let mut out = Vec::new();
    let mut codes: HashMap<(String, String, String), BTreeSet<String>> = HashMap::new();
    for f in answer["findings"].as_array().into_iter().flatten().filter(|f| f["severity"] == "Error") {
        codes.entry(key(&f["object"])).or_default().insert(f["code"].as_str().unwrap_or("").to_string());
    }
    let refused: Vec<&(String, String, String)> =
        codes.iter().filter(|(_, c)| REFUSALS.iter().any(|r| c.contains(*r))).map(|(k, _)| k).collect();
    for (k, c) in &codes {
        if STALLS.iter().any(|s| c.contains(*s)) && REFUSALS.iter().any(|r| c.contains(*r)) {
            out.push(format!("I1: {k:?} has a stall beside a refusal: {c:?}"));
        }
    }
    for s in answer["steps"].as_array().into_iter().flatten() {
        let command = s["command"].as_str().unwrap_or("");
        let text = s["text"].as_str().unwrap_or("").to_lowercase();
        let changes = ["kubectl annotate ", "kubectl label ", "kubectl patch "].iter().any(|p| command.starts_with(p));
        let says = ["denied", "refused", "rejected", "reject"].iter().any(|w| text.contains(w));
        let words: Vec<&str> = command.split_whitespace().collect();
        if changes && !says && refused.iter().any(|(_, _, name)| words.iter().any(|w| w.trim_matches('\'') == name)) {
            out.push(format!("I2: a step changes a refused object without saying so: {command}"));
        }
    }
    for w in text.split(|c: char| !c.is_ascii_alphanumeric()) {
        if w.len() >= 5 && w.ends_with('s') && w[..w.len() - 1].bytes().all(|b| b.is_ascii_digit()) {
            out.push(format!("I3: bare seconds {w}"));
        }
    }
    let mut lines: BTreeMap<&str, usize> = BTreeMap::new();
    for l in text.lines().map(str::trim).filter(|l| l.len() > 30 && !l.starts_with("kubectl ")) {
        *lines.entry(l).or_default() += 1;
    }
    out.extend(lines.into_iter().filter(|(_, n)| *n > 1).map(|(l, _)| format!("I4: repeated line {l:?}")));
    if !refused.is_empty() && !plan_blocks() {
        out.push("I5: why-stuck finds a refusal, plan blocks nothing".into());
    }
    out
}

/// [`judge`] on the binary's answers to `args`.
fn incoherences(args: &[String]) -> Vec<String> {
    let answer = stdout_json(&run_strs(&argv(args, &["-o", "json"])));
    let text = String::from_utf8_lossy(&run_strs(&argv(args, &["--width", "1000"])).stdout).into_owned();
    judge(&answer, &text, || {
        let mut plan = argv(args, &["--cascade=background", "-o", "json"]);
        plan[0] = "plan".into();
        let p = stdout_json(&run_strs(&plan));
        p["result"]["blocked"].as_array().is_some_and(|b| !b.is_empty())
    })
}

#[test]
fn every_fixture_answer_tells_one_story() {
    let all = answers();
    assert!(all.len() >= 30, "only {} why-stuck answers among the fixtures", all.len());
    let mut failures = Vec::new();
    for (fixture, args, _) in &all {
        for i in incoherences(args) {
            failures.push(format!("{fixture}: {}: {i}", args[..args.len() - 4].join(" ")));
        }
    }
    assert!(failures.is_empty(), "{} incoherent:\n{}", failures.len(), failures.join("\n"));
}

/// The invariants are not vacuous: the answer they were written against, as it read before the
/// refusal subsumed the stall, breaks each of them.
#[test]
fn the_invariants_catch_the_story_that_contradicts_itself() {
    let pvc = serde_json::json!({"kind": "PersistentVolumeClaim", "namespace": "finance", "name": "ledger-archive"});
    let answer = serde_json::json!({
        "findings": [
            {"code": "AdmissionDenied", "severity": "Error", "object": pvc},
            {"code": "ControllerStalled", "severity": "Error", "object": pvc},
        ],
        "steps": [{"text": "Make the controller look again.", "command":
            "kubectl annotate persistentvolumeclaims ledger-archive -n finance kubectl-gc/requeued-at=now --overwrite"}],
    });
    let line = "The garbage collector missed it, and kube-controller-manager is not judged alive now";
    let text = format!("still there after 63542s\n  {line}\n  {line}\n");
    let found = judge(&answer, &text, || false);
    for i in ["I1", "I2", "I3", "I4", "I5"] {
        assert!(found.iter().any(|f| f.starts_with(i)), "{i} not caught: {found:?}");
    }
    // and the same answer told as one story passes
    let answer =
        serde_json::json!({"findings": [{"code": "AdmissionDenied", "severity": "Error", "object": pvc}], "steps": []});
    assert!(judge(&answer, "terminating for 17h38m\n", || true).is_empty());
}

//! Small things a user trips on (issue 24), each pinned by the answer it used to get wrong.

use std::process::Command;

use serde_json::{Value, json};

use crate::support::{self, DEADLINE, NOW, run, stderr, stdout};

fn snapshot(items: Vec<Value>) -> tempfile::NamedTempFile {
    let f = tempfile::Builder::new().suffix(".json").tempfile().unwrap();
    std::fs::write(f.path(), serde_json::to_vec(&json!({"apiVersion": "v1", "kind": "List", "items": items})).unwrap())
        .unwrap();
    f
}

fn gc(args: &[&str], snap: &tempfile::NamedTempFile) -> std::process::Output {
    let mut c = Command::new(support::bin());
    c.env_clear().env("NO_COLOR", "1").args(args).args(["--now", NOW, "--snapshot"]).arg(snap.path());
    run(c, DEADLINE)
}

/// Applies a JSON patch of `test`/`remove` ops to an object as the API server does: all or
/// nothing, and a successful write bumps the resourceVersion.
fn apply(obj: &mut Value, patch: &Value) -> Result<(), String> {
    let mut next = obj.clone();
    for op in patch.as_array().unwrap() {
        let path = op["path"].as_str().unwrap();
        let ptr = path.to_string();
        match op["op"].as_str().unwrap() {
            "test" => {
                if next.pointer(&ptr) != Some(&op["value"]) {
                    return Err(format!("test {path} = {} failed (is {:?})", op["value"], next.pointer(&ptr)));
                }
            }
            "remove" => {
                let (parent, last) = ptr.rsplit_once('/').unwrap();
                let list = next.pointer_mut(parent).and_then(Value::as_array_mut).ok_or(format!("no {parent}"))?;
                let i: usize = last.parse().unwrap();
                if i >= list.len() {
                    return Err(format!("remove {path}: out of range"));
                }
                list.remove(i);
            }
            other => return Err(format!("op {other} not modelled")),
        }
    }
    let rv: u64 = next["metadata"]["resourceVersion"].as_str().unwrap().parse().unwrap();
    next["metadata"]["resourceVersion"] = (rv + 1).to_string().into();
    *obj = next;
    Ok(())
}

/// The JSON of `-p '…'` in a printed `kubectl patch` line.
fn patch_of(line: &str) -> Value {
    let p = line.split_once(" -p '").unwrap().1.strip_suffix('\'').unwrap();
    serde_json::from_str(p).unwrap()
}

#[test]
fn every_finalizer_patch_of_one_object_applies_in_the_order_printed() {
    // two finalizers whose controllers are gone: each has its last-resort removal
    let obj = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {
        "name": "two", "namespace": "labs", "uid": "00000000-0000-0000-0000-000000000011", "resourceVersion": "500",
        "creationTimestamp": "2026-11-01T00:00:00Z", "deletionTimestamp": "2026-11-29T10:00:00Z",
        "finalizers": ["alpha.example.com/cleanup", "beta.example.com/cleanup"]}});
    let ns = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "labs",
        "uid": "00000000-0000-0000-0000-000000000010", "creationTimestamp": "2026-11-01T00:00:00Z"}});
    let snap = snapshot(vec![ns, obj.clone()]);
    for output in ["text", "json"] {
        let out = gc(&["why-stuck", "cm/two", "-n", "labs", "-o", output], &snap);
        let lines: Vec<String> = if output == "text" {
            stdout(&out).lines().map(str::trim).filter(|l| l.starts_with("kubectl patch")).map(String::from).collect()
        } else {
            let v: Value = serde_json::from_str(&stdout(&out)).unwrap_or_else(|e| panic!("{e}: {}", stderr(&out)));
            let mut seen = Vec::new();
            for f in v["findings"].as_array().unwrap() {
                for s in f["remedy"].as_array().unwrap() {
                    if let Some(c) = s["command"].as_str().filter(|c| c.starts_with("kubectl patch"))
                        && !seen.contains(&c.to_string())
                    {
                        seen.push(c.to_string());
                    }
                }
            }
            seen
        };
        assert!(!lines.is_empty(), "{output}: a last-resort patch is printed: {}", stdout(&out));
        let mut live = obj.clone();
        for l in &lines {
            apply(&mut live, &patch_of(l))
                .unwrap_or_else(|e| panic!("{output}: `{l}` fails after the ones before: {e}"));
        }
        assert_eq!(live["metadata"]["finalizers"], json!([]), "{output}: {lines:?}");
    }
}

fn fixture(name: &str) -> std::path::PathBuf {
    support::root().join("tests/fixtures").join(name).join("snapshot.json")
}

fn gc_on(args: &[&str], snap: &std::path::Path) -> std::process::Output {
    let mut c = Command::new(support::bin());
    c.env_clear().env("NO_COLOR", "1").args(args).args(["--now", NOW, "--snapshot"]).arg(snap);
    run(c, DEADLINE)
}

#[test]
fn tree_owners_draws_a_recreated_owner_as_recreated_not_as_not_found() {
    let snap = fixture("site-uid-mismatch");
    let args = ["tree", "cm/alpha-config", "-n", "labs", "--owners"];
    let text = stdout(&gc_on(&args, &snap));
    let line = text.lines().find(|l| l.contains("Site/alpha")).unwrap_or_else(|| panic!("{text}"));
    assert!(line.contains("Recreated"), "{line}");
    assert!(!line.contains("(referenced, not found)"), "{line}");
    assert!(
        line.contains("c80fc950-f935-5065-b01d-9c488eccf41b") && line.contains("treats this owner as absent"),
        "{line}"
    );

    let json: Value = serde_json::from_str(&stdout(&gc_on(&[&args[..], &["-o", "json"]].concat(), &snap))).unwrap();
    let owner = &json["owners"][0];
    assert_eq!(owner["object"]["name"], "alpha");
    assert!(owner["object"].get("uid").is_none(), "the referenced owner itself is absent: {owner}");
    assert_eq!(owner["recreatedAs"]["uid"], "c80fc950-f935-5065-b01d-9c488eccf41b", "{owner}");

    let dot = stdout(&gc_on(&[&args[..], &["-o", "dot"]].concat(), &snap));
    assert!(dot.contains("absent: recreated, uid c80fc950"), "{dot}");

    // an owner that is nowhere, under any uid, is still "not found"
    let lone = snapshot(vec![json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {
        "name": "orphan", "namespace": "labs", "uid": "00000000-0000-0000-0000-000000000021",
        "creationTimestamp": "2026-11-01T00:00:00Z",
        "ownerReferences": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "gone",
                             "uid": "00000000-0000-0000-0000-000000000022"}]}})]);
    let text = stdout(&gc(&["tree", "cm/orphan", "-n", "labs", "--owners"], &lone));
    assert!(
        text.contains("Absent") && text.contains("(referenced, not found)") && !text.contains("Recreated"),
        "{text}"
    );
    let json: Value =
        serde_json::from_str(&stdout(&gc(&["tree", "cm/orphan", "-n", "labs", "--owners", "-o", "json"], &lone)))
            .unwrap();
    assert!(json["owners"][0].get("recreatedAs").is_none());
}

/// The columns a line takes (no colour here: NO_COLOR).
fn columns(l: &str) -> usize {
    l.chars().count()
}

#[test]
fn tree_and_plan_wrap_at_width_and_keep_every_word() {
    let cases: [(&str, &[&str]); 4] = [
        ("cross-namespace", &["tree", "site/alpha", "-n", "labs"]),
        ("site-basics", &["tree", "deploy/web", "-n", "labs"]),
        ("site-basics", &["plan", "deploy/web", "-n", "labs", "--cascade=foreground"]),
        ("webhook-blocks-finalizer", &["plan", "account/acme-payroll", "-n", "finance"]),
    ];
    for (fixture_name, args) in cases {
        let snap = fixture(fixture_name);
        let at = |w: &str| stdout(&gc_on(&[args, &["--width", w]].concat(), &snap));
        let (flat, narrow) = (at("0"), at("60"));
        let words = |s: &str| {
            s.split_whitespace().filter(|w| !["│", "├──", "└──"].contains(w)).map(String::from).collect::<Vec<_>>()
        };
        assert_eq!(words(&flat), words(&narrow), "{args:?}: wrapping changed the words");
        // what sticks out past column 60, in all
        let over = |s: &str| s.lines().map(|l| columns(l).saturating_sub(60)).sum::<usize>();
        assert!(over(&flat) > 0, "{args:?}: the case has long lines to wrap");
        assert!(
            over(&narrow) * 2 < over(&flat),
            "{args:?}: {} of {} columns past 60 left:\n{narrow}",
            over(&narrow),
            over(&flat)
        );
    }
}

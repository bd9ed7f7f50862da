//! No verdict is decided by a product's or a framework's name (contract §4.3.3, "Weighing the
//! rungs together"): each attribution fixture answers the same with its product, framework and
//! binary names replaced throughout the snapshot and the command line by made-up ones.

use serde_json::Value;

use crate::util::{code, fixtures_dir, run, stdout_json};

/// Each fixture and the names it is told with, replaced in that order (longer first where one
/// contains another).
const RENAMES: &[(&str, &[(&str, &str)])] = &[
    ("tied-candidates-all-alive", &[("tideline", "qorvex")]),
    ("manager-is-a-binary-name", &[("lanternd", "zubrik"), ("nightwatch", "pellmor"), ("uptime", "vantor")]),
    ("framework-finalizer-on-core-object", &[("reconcilekit", "mivrashk"), ("zone-publisher", "yelt-runner")]),
    ("reconciler-named-lease", &[("widgets", "dorbels"), ("widget", "dorbel"), ("assembly", "tranq")]),
    ("installed-by-a-release-that-is-gone", &[("quarry", "brimsel")]),
    ("kind-named-operator", &[("backup", "stowage"), ("snapshot", "keepsake"), ("Snapshot", "Keepsake")]),
    ("product-prefix-is-not-the-controller", &[("harbourmesh", "quillnet"), ("harbour", "quill")]),
    ("permission-is-not-ownership", &[("snapshot-agent", "capture-drone"), ("data.example.io", "keep.example.io")]),
];

/// Exit code, verdict and finding codes of the fixture's first check, on `snapshot` text.
fn answer(dir: &std::path::Path, snapshot: &str, renames: &[(&str, &str)]) -> (i32, Value, Vec<String>) {
    let expected: Value = serde_json::from_slice(&std::fs::read(dir.join("expected.json")).unwrap()).unwrap();
    let chk = &expected["checks"][0];
    let rename = |s: &str| renames.iter().fold(s.to_string(), |acc, (a, b)| acc.replace(a, b));
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("snapshot.json");
    std::fs::write(&file, rename(snapshot)).unwrap();
    let mut args: Vec<String> = chk["args"].as_array().unwrap().iter().map(|a| rename(a.as_str().unwrap())).collect();
    let now = expected["now"].as_str().unwrap().to_string();
    args.extend(["--snapshot".into(), file.display().to_string(), "--now".into(), now, "-o".into(), "json".into()]);
    let argv: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = run(&argv);
    let json = stdout_json(&out);
    let mut codes: Vec<String> = json["findings"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|f| f["code"].as_str().map(String::from))
        .collect();
    codes.sort();
    (code(&out), json["verdict"].clone(), codes)
}

#[test]
fn answers_do_not_turn_on_product_or_framework_names() {
    for (fixture, renames) in RENAMES {
        let dir = fixtures_dir().join(fixture);
        let snapshot = std::fs::read_to_string(dir.join("snapshot.json")).unwrap();
        for (from, _) in *renames {
            assert!(snapshot.contains(from), "{fixture}: {from} is not in the snapshot: the rename tests nothing");
        }
        let as_told = answer(&dir, &snapshot, &[]);
        let renamed = answer(&dir, &snapshot, renames);
        assert!(!as_told.2.is_empty(), "{fixture}: no finding to compare");
        assert_eq!(as_told, renamed, "{fixture}: the answer changed with its names {renames:?}");
    }
}

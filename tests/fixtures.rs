//! Every check of every fixture's expected.json, run through the built binary: the same
//! comparisons as shared/tools/check-fixtures, in Rust, so the suite needs nothing outside
//! the repository.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde_json::Value;

use crate::util::{code, fixtures_dir, run, stdout_json};

/// `Kind/namespace/name`, as the fixtures name objects.
fn key(r: &Value) -> String {
    let s = |k: &str| r.get(k).and_then(Value::as_str).unwrap_or("");
    format!("{}/{}/{}", s("kind"), s("namespace"), s("name"))
}

fn strs(v: &Value) -> Vec<String> {
    v.as_array().map(|a| a.iter().filter_map(|x| x.as_str().map(String::from)).collect()).unwrap_or_default()
}

fn check_one(fixture: &Path, now: &str, chk: &Value) -> Vec<String> {
    let mut args: Vec<String> = strs(&chk["args"]);
    let snapshot = fixture.join("snapshot.json");
    args.extend([
        "--snapshot".into(),
        snapshot.display().to_string(),
        "--now".into(),
        now.into(),
        "-o".into(),
        "json".into(),
    ]);
    let argv: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = run(&argv);
    let mut errs = Vec::new();
    if let Some(exit) = chk.get("exit").and_then(Value::as_i64)
        && i64::from(code(&out)) != exit
    {
        errs.push(format!("exit {}, expected {exit} (stderr: {})", code(&out), crate::util::stderr(&out)));
    }
    let exit = code(&out);
    let out = stdout_json(&out);
    if chk["args"][0] == "why-stuck" {
        errs.extend(verdicts_agree(&out, exit));
    }
    if let Some(stuck) = chk.get("stuck")
        && verdict(&out).as_ref() != Some(stuck)
    {
        errs.push(format!("stuck={:?}, expected {stuck}", verdict(&out)));
    }
    if let Some(want) = chk.get("verdict") {
        const VERDICTS: [&str; 4] = ["Stuck", "InProgress", "Unknown", "NotDeleting"];
        if !want.as_str().is_some_and(|v| VERDICTS.contains(&v)) {
            errs.push(format!("bad expectation: verdict {want} is not one of {}", VERDICTS.join(", ")));
        } else if out.get("verdict") != Some(want) {
            errs.push(format!("verdict={:?}, expected {want}", out.get("verdict")));
        }
    }
    errs.extend(check_ranked_steps(&out, chk));
    errs.extend(check_groups(&out, chk));
    if let Some(want) = chk.get("deletingForSeconds").and_then(Value::as_i64) {
        let got = out.get("deletingForSeconds").and_then(Value::as_i64);
        if got.is_none_or(|g| (g - want).abs() > 60) {
            errs.push(format!("deletingForSeconds={got:?}, expected {want}"));
        }
    }
    // a `why-stuck --all` answer: the findings of every answer count, as check-fixtures has it
    let findings: Vec<Value> = match out.get("findings").and_then(Value::as_array) {
        Some(f) => f.clone(),
        None => out["answers"]
            .as_array()
            .into_iter()
            .flatten()
            .flat_map(|a| a["findings"].as_array().cloned().unwrap_or_default())
            .collect(),
    };
    let has = |f: &Value| {
        let want: Vec<String> = match &f["object"] {
            Value::Array(_) => strs(&f["object"]),
            other => vec![other.as_str().unwrap_or("").to_string()],
        };
        let rel_want: BTreeSet<String> = strs(&f["related"]).into_iter().collect();
        findings.iter().any(|g| {
            g["code"] == f["code"]
                && want.contains(&key(&g["object"]))
                && rel_want.is_subset(&g["related"].as_array().map(|a| a.iter().map(key).collect()).unwrap_or_default())
        })
    };
    for f in chk.get("findings").and_then(Value::as_array).into_iter().flatten() {
        if !has(f) {
            let got: BTreeSet<(String, String)> =
                findings.iter().map(|g| (g["code"].as_str().unwrap_or("").to_string(), key(&g["object"]))).collect();
            errs.push(format!("missing finding {f}; got {got:?}"));
        }
    }
    for f in chk.get("absentFindings").and_then(Value::as_array).into_iter().flatten() {
        if has(f) {
            errs.push(format!("unexpected finding {f}"));
        }
    }
    errs.extend(check_remedies(&findings, chk));
    if let Some(want) = chk.get("dependents") {
        let mut got: Vec<String> =
            out["dependents"].as_array().into_iter().flatten().map(|d| key(&d["object"])).collect();
        got.sort();
        let mut want = strs(want);
        want.sort();
        if got != want {
            errs.push(format!("dependents {got:?}, expected {want:?}"));
        }
    }
    let res = &out["result"];
    let removed: BTreeSet<String> = res["removed"].as_array().into_iter().flatten().map(key).collect();
    if let Some(want) = chk.get("removed") {
        let want: BTreeSet<String> = strs(want).into_iter().collect();
        if removed != want {
            errs.push(format!("removed {removed:?}, expected {want:?}"));
        }
    }
    for k in chk.get("removedIncludes").map(strs).unwrap_or_default() {
        if !removed.contains(&k) {
            errs.push(format!("{k} not in removed {removed:?}"));
        }
    }
    for k in chk.get("removedExcludes").map(strs).unwrap_or_default() {
        if removed.contains(&k) {
            errs.push(format!("{k} should not be removed"));
        }
    }
    if let Some(want) = chk.get("blocked") {
        let got: BTreeSet<String> =
            res["blocked"].as_array().into_iter().flatten().map(|b| key(&b["object"])).collect();
        let want: BTreeSet<String> = strs(want).into_iter().collect();
        if got != want {
            errs.push(format!("blocked {got:?}, expected {want:?}"));
        }
    }
    if let Some(want) = chk.get("ownerRefsRemoved") {
        let got: BTreeSet<(String, Vec<String>)> = res["ownerRefsRemoved"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|x| {
                let mut o: Vec<String> = x["owners"].as_array().into_iter().flatten().map(key).collect();
                o.sort();
                (key(&x["object"]), o)
            })
            .collect();
        let want: BTreeSet<(String, Vec<String>)> = want
            .as_array()
            .into_iter()
            .flatten()
            .map(|x| {
                let mut o = strs(&x["owners"]);
                o.sort();
                (x["object"].as_str().unwrap_or("").to_string(), o)
            })
            .collect();
        if got != want {
            errs.push(format!("ownerRefsRemoved {got:?}, expected {want:?}"));
        }
    }
    if let Some(pairs) = chk.get("order").and_then(Value::as_array) {
        let mut order: BTreeMap<String, usize> = BTreeMap::new();
        for (i, s) in out["steps"].as_array().into_iter().flatten().enumerate() {
            if s["action"] == "Remove" {
                order.entry(key(&s["object"])).or_insert(i);
            }
        }
        for p in pairs {
            let p = strs(p);
            match (order.get(&p[0]), order.get(&p[1])) {
                (Some(a), Some(b)) if a > b => errs.push(format!("{} removed after {}", p[0], p[1])),
                (Some(_), Some(_)) => {}
                _ => errs.push(format!("no Remove step for {} or {}", p[0], p[1])),
            }
        }
    }
    errs
}

/// remedyIncludes / remedyExcludes (case-insensitive, in a step's text or command) and
/// firstRemedyDestructive (the first step of the answer, findings in order), as check-fixtures.
fn check_remedies(findings: &[Value], chk: &Value) -> Vec<String> {
    let steps: Vec<&Value> = findings.iter().flat_map(|f| f["remedy"].as_array().into_iter().flatten()).collect();
    let words = |s: &Value| {
        format!("{} {}", s["text"].as_str().unwrap_or(""), s["command"].as_str().unwrap_or("")).to_lowercase()
    };
    let mut errs = Vec::new();
    for sub in chk.get("remedyIncludes").map(strs).unwrap_or_default() {
        if !steps.iter().any(|s| words(s).contains(&sub.to_lowercase())) {
            errs.push(format!("no remedy step mentions {sub:?}"));
        }
    }
    for sub in chk.get("remedyExcludes").map(strs).unwrap_or_default() {
        if let Some(s) = steps.iter().find(|s| words(s).contains(&sub.to_lowercase())) {
            errs.push(format!("a remedy step mentions {sub:?}: {s}"));
        }
    }
    if let Some(want) = chk.get("firstRemedyDestructive").and_then(Value::as_bool) {
        match steps.first().and_then(|s| s["destructive"].as_bool()) {
            None => errs.push("no remedy step with a destructive flag".into()),
            Some(got) if got != want => errs.push(format!("first remedy step destructive={got}, expected {want}")),
            Some(_) => {}
        }
    }
    errs
}

/// The verdict of every `why-stuck` answer, whether or not its fixture names one: one of the
/// four words, `stuck` true exactly when it is `Stuck`, the exit code the verdict's (2 Stuck, 3
/// Unknown, else 0; `--all`: the worst answer's), and each `--all` group's verdict that of the
/// answers of its objects.
fn verdicts_agree(out: &Value, exit: i32) -> Vec<String> {
    const VERDICTS: [&str; 4] = ["Stuck", "Unknown", "InProgress", "NotDeleting"];
    let mut errs = Vec::new();
    let mut check = |a: &Value| -> Option<usize> {
        let v = a["verdict"].as_str();
        let Some(rank) = v.and_then(|v| VERDICTS.iter().position(|w| *w == v)) else {
            errs.push(format!("{}: verdict {} is not one of {VERDICTS:?}", key(&a["object"]), a["verdict"]));
            return None;
        };
        if a["stuck"] != Value::Bool(rank == 0) {
            errs.push(format!("{}: stuck={} but verdict {}", key(&a["object"]), a["stuck"], VERDICTS[rank]));
        }
        Some(rank)
    };
    let worst = match out.get("answers").and_then(Value::as_array) {
        Some(answers) => {
            let ranks: BTreeMap<String, Option<usize>> =
                answers.iter().map(|a| (key(&a["object"]), check(a))).collect();
            for grp in out["groups"].as_array().into_iter().flatten() {
                for o in grp["objects"].as_array().into_iter().flatten() {
                    let want = ranks.get(&key(o)).copied().flatten().map(|r| VERDICTS[r]);
                    if grp["verdict"].as_str() != want {
                        errs.push(format!("group {} holds {} whose answer is {want:?}", grp["verdict"], key(o)));
                    }
                }
            }
            ranks.values().flatten().min().copied()
        }
        None => check(out),
    };
    let want = match worst {
        Some(0) => 2,
        Some(1) => 3,
        _ => 0,
    };
    if exit != want {
        errs.push(format!("exit {exit}, but the verdict {:?} gives {want}", worst.map(|r| VERDICTS[r])));
    }
    errs
}

/// rankedSteps: the answer's top-level `steps` are a non-empty list of well-formed steps
/// (`text` non-empty, `command` a string or null, `destructive` a bool) in which no step that
/// changes nothing or restores comes after a destructive one, as check-fixtures has it.
fn check_ranked_steps(out: &Value, chk: &Value) -> Vec<String> {
    if chk.get("rankedSteps") != Some(&Value::Bool(true)) {
        return Vec::new();
    }
    let Some(steps) = out.get("steps").and_then(Value::as_array).filter(|s| !s.is_empty()) else {
        return vec![format!("no top-level steps list (got {:?})", out.get("steps"))];
    };
    let mut errs = Vec::new();
    let mut destructive_at = None;
    for (i, s) in steps.iter().enumerate() {
        let well_formed = s["text"].as_str().is_some_and(|t| !t.trim().is_empty())
            && s.get("command").is_some_and(|c| c.is_null() || c.is_string())
            && s["destructive"].is_boolean();
        if !well_formed {
            errs.push(format!("steps[{i}] is not {{text, command, destructive}}: {s}"));
            continue;
        }
        if s["destructive"] == Value::Bool(true) {
            destructive_at.get_or_insert(i);
        } else if let Some(d) = destructive_at {
            errs.push(format!("steps[{i}] (not destructive) comes after destructive steps[{d}]: {s}"));
        }
    }
    errs
}

/// The answer's verdict; a `why-stuck --all` answer has none at the top level: whether any of
/// its answers is stuck.
fn verdict(out: &Value) -> Option<Value> {
    if out.get("stuck").is_some() || out.get("groups").is_none() {
        return out.get("stuck").cloned();
    }
    let answers = out["answers"].as_array().into_iter().flatten();
    Some(Value::Bool(answers.into_iter().any(|a| a["stuck"] == Value::Bool(true))))
}

/// `why-stuck --all`: `groups` ({code, objects} each present exactly), `groupsOnly`, and
/// `notStuck` (answered, not stuck, sharing no group with a stuck object).
fn check_groups(out: &Value, chk: &Value) -> Vec<String> {
    let mut errs = Vec::new();
    let got: Vec<(String, BTreeSet<String>)> = out["groups"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|g| {
            let code = g["cause"]["code"].as_str().unwrap_or("").to_string();
            (code, g["objects"].as_array().into_iter().flatten().map(key).collect())
        })
        .collect();
    let want: Vec<(String, BTreeSet<String>)> = chk["groups"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|w| (w["code"].as_str().unwrap_or("").to_string(), strs(&w["objects"]).into_iter().collect()))
        .collect();
    for w in &want {
        if !got.contains(w) {
            errs.push(format!("missing group {w:?}; got {got:?}"));
        }
    }
    if chk["groupsOnly"] == Value::Bool(true) {
        for g in got.iter().filter(|g| !want.contains(g)) {
            errs.push(format!("unexpected group {g:?}"));
        }
    }
    let answers: BTreeMap<String, &Value> =
        out["answers"].as_array().into_iter().flatten().map(|a| (key(&a["object"]), a)).collect();
    let stuck: BTreeSet<&String> =
        answers.iter().filter(|(_, a)| a["stuck"] == Value::Bool(true)).map(|(k, _)| k).collect();
    for k in chk.get("notStuck").map(strs).unwrap_or_default() {
        match answers.get(&k) {
            None => errs.push(format!("no answer for {k}")),
            Some(a) if a["stuck"] != Value::Bool(false) => {
                errs.push(format!("{k}: stuck={}, expected false", a["stuck"]))
            }
            Some(_) => {}
        }
        for (code, objs) in got.iter().filter(|(_, objs)| objs.contains(&k)) {
            if objs.iter().any(|o| o != &k && stuck.contains(o)) {
                errs.push(format!("{k} shares group {code} with a stuck object"));
            }
        }
    }
    errs
}

/// Runs every check of one fixture whose subcommand is in `only`.
fn check_fixture(name: &str, only: &[&str]) {
    let dir = fixtures_dir().join(name);
    let expected: Value = serde_json::from_str(&std::fs::read_to_string(dir.join("expected.json")).unwrap()).unwrap();
    let now = expected["now"].as_str().unwrap();
    let mut failures = Vec::new();
    let mut ran = 0;
    for chk in expected["checks"].as_array().unwrap() {
        let sub = chk["args"][0].as_str().unwrap();
        if !only.contains(&sub) {
            continue;
        }
        ran += 1;
        let errs = check_one(&dir, now, chk);
        if !errs.is_empty() {
            failures.push(format!("{name}: {}\n    {}", strs(&chk["args"]).join(" "), errs.join("\n    ")));
        }
    }
    assert!(ran > 0, "{name} has no {only:?} checks");
    assert!(failures.is_empty(), "{} check(s) failed:\n{}", failures.len(), failures.join("\n"));
}

const DIAGNOSIS: &[&str] = &["tree", "why-stuck"];

#[test]
fn site_basics_tree_and_why_stuck() {
    check_fixture("site-basics", DIAGNOSIS);
}

#[test]
fn site_uid_mismatch_tree_and_why_stuck() {
    check_fixture("site-uid-mismatch", DIAGNOSIS);
}

#[test]
fn cross_namespace_why_stuck() {
    check_fixture("cross-namespace", DIAGNOSIS);
}

#[test]
fn apiservice_down_why_stuck() {
    check_fixture("apiservice-down", DIAGNOSIS);
}

#[test]
fn site_operator_gone_why_stuck() {
    check_fixture("site-operator-gone", DIAGNOSIS);
}

#[test]
fn namespace_terminating_why_stuck() {
    check_fixture("namespace-terminating", DIAGNOSIS);
}

#[test]
fn claim_released_not_finalized_why_stuck() {
    check_fixture("claim-released-not-finalized", DIAGNOSIS);
}

#[test]
fn claim_in_use_why_stuck() {
    check_fixture("claim-in-use", DIAGNOSIS);
}

#[test]
fn job_pod_tracking_leftover_why_stuck() {
    check_fixture("job-pod-tracking-leftover", DIAGNOSIS);
}

#[test]
fn operator_alive_not_acting_why_stuck() {
    check_fixture("operator-alive-not-acting", DIAGNOSIS);
}

#[test]
fn webhook_blocks_finalizer_why_stuck() {
    check_fixture("webhook-blocks-finalizer", DIAGNOSIS);
}

#[test]
fn conversion_webhook_down_why_stuck() {
    check_fixture("conversion-webhook-down", DIAGNOSIS);
}

#[test]
fn operator_in_dying_namespace_why_stuck() {
    check_fixture("operator-in-dying-namespace", DIAGNOSIS);
}

#[test]
fn permission_is_not_ownership_why_stuck() {
    check_fixture("permission-is-not-ownership", DIAGNOSIS);
}

#[test]
fn csi_driver_removed_why_stuck() {
    check_fixture("csi-driver-removed", DIAGNOSIS);
}

#[test]
fn admin_bound_controller_why_stuck() {
    check_fixture("admin-bound-controller", DIAGNOSIS);
}

#[test]
fn kind_named_operator_why_stuck() {
    check_fixture("kind-named-operator", DIAGNOSIS);
}

/// A tie of live candidates: which of them, not whether it runs.
#[test]
fn tied_candidates_all_alive_why_stuck() {
    check_fixture("tied-candidates-all-alive", DIAGNOSIS);
}

/// A field manager that is the binary's name, resolved by the container's command.
#[test]
fn manager_is_a_binary_name_why_stuck() {
    check_fixture("manager-is-a-binary-name", DIAGNOSIS);
}

/// A framework's finalizer on a core object: RBAC is read for the object's own resource.
#[test]
fn framework_finalizer_on_core_object_why_stuck() {
    check_fixture("framework-finalizer-on-core-object", DIAGNOSIS);
}

/// A lease named after a reconciler's Go package counts for its holder.
#[test]
fn reconciler_named_lease_why_stuck() {
    check_fixture("reconciler-named-lease", DIAGNOSIS);
}

/// An installation with no workload left is evidence for Missing, and named.
#[test]
fn installed_by_a_release_that_is_gone_why_stuck() {
    check_fixture("installed-by-a-release-that-is-gone", DIAGNOSIS);
}

#[test]
fn product_prefix_is_not_the_controller_why_stuck() {
    check_fixture("product-prefix-is-not-the-controller", DIAGNOSIS);
}

#[test]
fn events_name_the_controller_why_stuck() {
    check_fixture("events-name-the-controller", DIAGNOSIS);
}

#[test]
fn named_with_rbac_is_the_controller_why_stuck() {
    check_fixture("named-with-rbac-is-the-controller", DIAGNOSIS);
}

#[test]
fn finalizer_added_by_hand_why_stuck() {
    check_fixture("finalizer-added-by-hand", DIAGNOSIS);
}

#[test]
fn stuck_everywhere_why_stuck_all() {
    check_fixture("stuck-everywhere", DIAGNOSIS);
}

#[test]
fn long_grace_period_in_progress_why_stuck() {
    check_fixture("long-grace-period-in-progress", DIAGNOSIS);
}

#[test]
fn controller_cannot_be_judged_why_stuck() {
    check_fixture("controller-cannot-be-judged", DIAGNOSIS);
}

#[test]
fn pod_delete_rejected_by_webhook_why_stuck() {
    check_fixture("pod-delete-rejected-by-webhook", DIAGNOSIS);
}

/// A controller that cannot be judged: exit 3, alone and in `why-stuck --all`, and the text
/// is headed UNKNOWN, never IN PROGRESS.
#[test]
fn an_answer_that_cannot_be_judged_exits_3_alone_and_in_all() {
    let snap = fixtures_dir().join("controller-cannot-be-judged/snapshot.json");
    let snap = snap.to_str().unwrap();
    let with = |args: &[&str]| {
        let mut a = args.to_vec();
        a.extend(["--snapshot", snap, "--now", "2026-11-29T12:00:00Z"]);
        run(&a)
    };
    let one = ["why-stuck", "quotas.quota.example.org/compute", "-n", "team-blue"];
    let text = with(&one);
    assert_eq!(code(&text), 3);
    let text = String::from_utf8_lossy(&text.stdout).to_string();
    assert!(text.starts_with("UNKNOWN Quota team-blue/compute"), "{text}");
    let j = stdout_json(&with(&[&one[..], &["-o", "json"]].concat()));
    assert_eq!((j["verdict"].as_str(), j["stuck"].as_bool()), (Some("Unknown"), Some(false)), "{j}");
    let all = with(&["why-stuck", "--all", "-n", "team-blue", "-o", "json"]);
    assert_eq!(code(&all), 3, "{}", crate::util::stderr(&all));
    let j = stdout_json(&all);
    let verdicts: Vec<&str> = j["groups"].as_array().unwrap().iter().filter_map(|g| g["verdict"].as_str()).collect();
    assert!(verdicts.contains(&"Unknown") && !verdicts.contains(&"Stuck"), "{verdicts:?}");
    let text = with(&["why-stuck", "--all", "-n", "team-blue"]);
    assert_eq!(code(&text), 3);
    let text = String::from_utf8_lossy(&text.stdout).to_string();
    assert!(
        text.starts_with("UNKNOWN nothing in scope was found stuck, but 1 object(s) could not be judged"),
        "{text}"
    );
}

#[test]
fn volume_still_bound_why_stuck() {
    check_fixture("volume-still-bound", DIAGNOSIS);
}

#[test]
fn namespace_waiting_for_pods_why_stuck() {
    check_fixture("namespace-waiting-for-pods", DIAGNOSIS);
}

/// A one-replica StatefulSet operator whose own terminating pod keeps the operator's
/// finalizer: it holds itself, and no remedy says it will remove it once it runs again.
#[test]
fn operator_holds_itself_why_stuck_and_plan() {
    check_fixture("operator-holds-itself", &["why-stuck", "plan"]);
}

/// A serving webhook denies the UPDATE that removes pvc-protection: the denial is the one root
/// cause, not a stall beside it, and no step re-queues what it would deny again.
#[test]
fn denial_explains_the_stall_why_stuck() {
    check_fixture("denial-explains-the-stall", &["why-stuck"]);
}

/// The namespace's content-failure condition quotes a denial: plan blocks what why-stuck finds
/// refused.
#[test]
fn plan_blocks_what_is_denied_why_stuck_and_plan() {
    check_fixture("plan-blocks-what-is-denied", &["why-stuck", "plan"]);
}

/// An owner whose kind could not be listed is unread, not dangling.
#[test]
fn owner_kind_unreadable_is_not_dangling_why_stuck() {
    check_fixture("owner-kind-unreadable-is-not-dangling", &["why-stuck"]);
}

#[test]
fn pod_past_grace_on_live_node_why_stuck() {
    check_fixture("pod-past-grace-on-live-node", DIAGNOSIS);
}

#[test]
fn pod_just_past_grace_why_stuck() {
    check_fixture("pod-just-past-grace", DIAGNOSIS);
}

#[test]
fn managed_control_plane_repeats_a_failure_why_stuck() {
    check_fixture("managed-control-plane-repeats-a-failure", DIAGNOSIS);
}

#[test]
fn mutation_re_adds_finalizer_why_stuck() {
    check_fixture("mutation-re-adds-finalizer", DIAGNOSIS);
}

#[test]
fn namespace_conditions_stale_during_pod_wave_why_stuck() {
    check_fixture("namespace-conditions-stale-during-pod-wave", DIAGNOSIS);
}

/// Every fixture directory has a test above: a fixture copied in without one would never run.
#[test]
fn every_fixture_is_checked() {
    let this = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures.rs")).unwrap();
    for dir in std::fs::read_dir(fixtures_dir()).unwrap() {
        let name = dir.unwrap().file_name().into_string().unwrap();
        assert!(this.contains(&format!("check_fixture(\"{name}\"")), "tests/fixtures.rs checks no fixture {name}");
    }
}

const PLAN: &[&str] = &["plan"];

#[test]
fn site_basics_plans() {
    check_fixture("site-basics", PLAN);
}

#[test]
fn site_uid_mismatch_plans() {
    check_fixture("site-uid-mismatch", PLAN);
}

#[test]
fn cross_namespace_plans() {
    check_fixture("cross-namespace", PLAN);
}

#[test]
fn site_operator_gone_plans() {
    check_fixture("site-operator-gone", PLAN);
}

#[test]
fn same_snapshot_and_now_give_the_same_bytes() {
    let snap = fixtures_dir().join("site-operator-gone/snapshot.json");
    let snap = snap.to_str().unwrap();
    for args in [
        vec!["why-stuck", "site/alpha", "-n", "labs"],
        vec!["tree", "site/alpha", "-n", "labs"],
        vec!["why-stuck", "site/alpha", "-n", "labs", "-o", "json"],
        vec!["plan", "site/alpha", "-n", "labs", "--cascade=foreground"],
        vec!["plan", "site/alpha", "-n", "labs", "-o", "json"],
        vec!["why-stuck", "--all", "-A"],
        vec!["why-stuck", "--all", "-A", "-o", "json"],
    ] {
        let mut a = args.clone();
        a.extend(["--snapshot", snap, "--now", "2026-11-29T12:00:00Z"]);
        let first = run(&a);
        let second = run(&a);
        assert!(!first.stdout.is_empty());
        assert_eq!(first.stdout, second.stdout, "{args:?}");
    }
}

/// `plan` on the webhook fixtures: what a dead webhook rejects is Blocked by the API server,
/// never planned as done, with or without `--assume-finalizers=removed`.
#[test]
fn webhook_fixtures_plan_blocked() {
    let dir = fixtures_dir();
    let snap = dir.join("webhook-blocks-finalizer/snapshot.json");
    let snap = snap.to_str().unwrap();
    let base = ["plan", "account/acme-payroll", "-n", "finance", "--cascade=background"];
    for extra in [&[][..], &["--assume-finalizers=removed"][..]] {
        let mut a: Vec<&str> = base.to_vec();
        a.extend(extra);
        a.extend(["--snapshot", snap, "--now", "2026-11-29T12:00:00Z"]);
        let text = run(&a);
        assert_eq!(code(&text), 2, "{extra:?}");
        let text = String::from_utf8_lossy(&text.stdout).to_string();
        assert!(text.contains("UPDATE removing finalizer ledger.example.org/archive is rejected"), "{text}");
        a.extend(["-o", "json"]);
        let out = run(&a);
        assert_eq!(code(&out), 2);
        let j = stdout_json(&out);
        assert!(j["result"]["removed"].as_array().unwrap().is_empty(), "{j}");
        let step = j["steps"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["action"] == "Blocked" && s["finalizer"] == "ledger.example.org/archive")
            .unwrap_or_else(|| panic!("no Blocked step for the finalizer: {j}"));
        assert_eq!(step["actor"], "kube-apiserver");
        let reason = step["reason"].as_str().unwrap();
        assert!(reason.contains("ValidatingWebhookConfiguration ledger-policy"), "{reason}");
        assert!(reason.contains("Service ledger-system/ledger-webhook has no ready endpoint"), "{reason}");
        let blocked = &j["result"]["blocked"][0];
        assert_eq!(key(&blocked["object"]), "Account/finance/acme-payroll");
        assert!(blocked["reason"].as_str().unwrap().contains("ledger-policy"));
    }

    let snap = dir.join("conversion-webhook-down/snapshot.json");
    let out = run(&[
        "plan",
        "ns/orders",
        "--snapshot",
        snap.to_str().unwrap(),
        "--now",
        "2026-11-29T12:00:00Z",
        "-o",
        "json",
    ]);
    assert_eq!(code(&out), 2);
    let j = stdout_json(&out);
    let blocked: BTreeSet<String> =
        j["result"]["blocked"].as_array().unwrap().iter().map(|b| key(&b["object"])).collect();
    assert!(blocked.contains("Namespace//orders") && blocked.contains("Cart/orders/cart-8841"), "{blocked:?}");
    let cart = j["result"]["blocked"].as_array().unwrap().iter().find(|b| key(&b["object"]) == "Cart/orders/cart-8841");
    let reason = cart.unwrap()["reason"].as_str().unwrap();
    assert!(reason.contains("CustomResourceDefinition carts.shop.example.net"), "{reason}");
    assert!(reason.contains("shop-system/cart-converter"), "{reason}");
}

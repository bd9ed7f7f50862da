//! How a watch ends (contract §4.5, docs/watch.md "How it ends"): one test per row of the
//! exit-code table, for every combination of `--until`, `--timeout` and `--stuck-after` that
//! decides it, and the table checked to name exactly those tests.

use std::time::Duration;

use serde_json::Value;

use crate::support::apiserver::Fault;
use crate::support::apiserver::watch::{Action, Scripted};
use crate::support::root;

use super::watch::{
    SITE, changes, deleting_site, lines, object, quota_system_forbidden, server, step, watch, watch_within,
};

/// Each row of the table (its first column, without the backticks) and the test that checks it.
const ROWS: &[(&str, &str)] = &[
    ("gone", "a_foreground_deletion_is_followed_to_the_end_each_dependent_gone_once_in_json_lines"),
    ("recreated", "an_object_recreated_under_its_name_is_gone_0"),
    ("until-stuck", "stuck_with_until_stuck_is_2_at_once_and_at_the_timeout_too"),
    ("stuck-quiet", "a_stuck_object_with_nothing_changing_ends_after_stuck_after"),
    ("stuck-at-timeout", "stuck_with_until_stuck_is_2_at_once_and_at_the_timeout_too"),
    ("undecided-at-timeout", "in_progress_not_deleting_or_unknown_at_the_timeout_is_3"),
    ("unknown-quiet", "unknown_is_the_single_answers_verdict_and_is_watched_on_not_taken_for_stuck"),
    ("failure", "a_watch_that_keeps_failing_gives_up_and_says_why"),
    ("interrupted", "on_a_terminal_the_answer_is_redrawn_in_place_and_ctrl_c_leaves_it_clean"),
    ("reader-gone", "a_reader_gone_ends_the_watch_with_the_code_of_the_answer_it_was_writing"),
];

#[test]
fn the_exit_code_table_names_a_test_for_each_row() {
    let doc = std::fs::read_to_string(root().join("docs/watch.md")).unwrap();
    let table = doc.split("## How it ends").nth(1).expect("docs/watch.md: How it ends");
    let rows: Vec<&str> = table
        .lines()
        .skip_while(|l| !l.starts_with('|'))
        .take_while(|l| l.starts_with('|'))
        .filter_map(|l| l.strip_prefix("| `")?.split('`').next())
        .collect();
    let named: Vec<&str> = ROWS.iter().map(|(r, _)| *r).collect();
    assert_eq!(rows, named, "docs/watch.md's exit table and the tests that check it differ");
    let sources: String = ["watch.rs", "watch_exits.rs", "watch_terminal.rs"]
        .iter()
        .map(|f| std::fs::read_to_string(root().join("tests").join(f)).unwrap())
        .collect();
    for (row, test) in ROWS {
        assert!(sources.contains(&format!("#[test]\nfn {test}()")), "row {row}: no test {test}");
    }
}

#[test]
fn an_object_recreated_under_its_name_is_gone_0() {
    let mut again = object(SITE, "Site", "alpha");
    again["metadata"]["uid"] = "another-uid".into();
    let script = vec![
        step(300, Action::Put(deleting_site(&["own.labhub.io/cleanup"]))),
        step(300, Action::remove(&deleting_site(&[]))),
        step(0, Action::Put(again)),
    ];
    let srv = server(SITE, script, Vec::new());
    let args = ["why-stuck", "site/alpha", "-n", "labs", "--watch", "-o", "json", "--timeout", "20s"];
    let (code, out, err, _) = watch(&srv, &args);
    assert_eq!(code, Some(0), "{err}\n{out}");
    let lines = lines(&out);
    assert_eq!(lines.last().unwrap()["verdict"], "Gone", "{out}");
    let told = changes(&lines);
    assert!(told.iter().any(|(t, o)| (t == "Recreated" || t == "Deleted") && o == "Site labs/alpha"), "{told:?}");
}

/// Stuck is decided: `--until=stuck` ends at once with 2, and so does `--timeout` passing on a
/// Stuck answer (a script waiting for 2 is not told "cannot tell"), whatever `--stuck-after`.
#[test]
fn stuck_with_until_stuck_is_2_at_once_and_at_the_timeout_too() {
    let srv = server("site-operator-gone", Vec::new(), Vec::new());
    let base = ["why-stuck", "site/alpha", "-n", "labs", "--watch", "-o", "json"];
    let (code, out, err, _) = watch(&srv, &[&base[..], &["--until=stuck", "--timeout", "20s"]].concat());
    assert_eq!(code, Some(2), "{err}\n{out}");
    let (code, out, err, took) = watch(&srv, &[&base[..], &["--timeout", "1500ms", "--stuck-after", "1h"]].concat());
    assert_eq!(code, Some(2), "{err}\n{out}");
    assert!(took >= Duration::from_millis(1500), "{took:?}");
    assert!(err.contains("--timeout passed and the deletion is stuck"), "{err}");
    assert_eq!(lines(&out).last().unwrap()["verdict"], "Stuck");
}

/// Undecided at the timeout: in progress, not being deleted yet, or Unknown, with or without
/// `--until=stuck`: 3.
#[test]
fn in_progress_not_deleting_or_unknown_at_the_timeout_is_3() {
    /// (fixture, script, faults, what is watched, the verdict at the timeout)
    type Case = (&'static str, Vec<Scripted>, Vec<Fault>, Vec<&'static str>, &'static str);
    let cases: Vec<Case> = vec![
        (
            SITE,
            vec![step(200, Action::Put(deleting_site(&["own.labhub.io/cleanup"])))],
            Vec::new(),
            vec!["why-stuck", "site/alpha", "-n", "labs", "--until=stuck"],
            "InProgress",
        ),
        (SITE, Vec::new(), Vec::new(), vec!["why-stuck", "site/alpha", "-n", "labs"], "NotDeleting"),
        (
            "controller-cannot-be-judged",
            Vec::new(),
            quota_system_forbidden(),
            vec!["why-stuck", "quotas.quota.example.org/compute", "-n", "team-blue", "--until=stuck"],
            "Unknown",
        ),
    ];
    for (fixture, script, faults, args, verdict) in cases {
        let srv = server(fixture, script, faults);
        let args = [&args[..], &["--watch", "-o", "json", "--timeout", "1500ms", "--stuck-after", "1h"]].concat();
        let (code, out, err, _) = watch_within(&srv, &args, Duration::from_secs(30));
        assert_eq!(code, Some(3), "{verdict}: {err}\n{out}");
        assert!(err.contains(&format!("--timeout passed and the deletion is still undecided ({verdict})")), "{err}");
        let last: &Value = &lines(&out).last().cloned().unwrap();
        assert_eq!(last["verdict"], verdict, "{out}");
    }
}

/// The reader goes away (`… --watch | head -1`): the watch ends at its next write with the
/// code of the answer it was writing, as at `--timeout` (2 Stuck, 3 undecided): a reader gone
/// is not the deletion gone, so never 0 for one still there.
#[test]
fn a_reader_gone_ends_the_watch_with_the_code_of_the_answer_it_was_writing() {
    let asks: [(&str, &[&str], i32); 2] = [
        ("site-operator-gone", &["why-stuck", "site/alpha", "-n", "labs"], 2),
        ("admin-bound-controller", &["why-stuck", "restore/ledger-2026-11-29", "-n", "archive"], 3),
    ];
    for (fixture, ask, want) in asks {
        let srv = server(fixture, Vec::new(), Vec::new());
        for o in ["text", "json"] {
            let env = crate::support::Env::new(&srv.url(), None);
            let mut c = env.gc();
            c.args(["--now", crate::support::NOW, "--request-timeout", "5s"]).args(ask);
            c.args(["--watch", "--timeout", "25s", "-o", o]);
            // the reading end is closed before the watch starts: its first answer meets it
            let (reader, writer) = std::io::pipe().expect("a pipe");
            drop(reader);
            c.stdout(std::process::Stdio::from(writer)).stderr(std::process::Stdio::piped());
            let t = std::time::Instant::now();
            let out = c.output().expect("runs");
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(want), "{fixture} -o {o}: {err}");
            assert!(
                t.elapsed() < Duration::from_secs(20),
                "{fixture} -o {o}: ended at --timeout, not when the reader went"
            );
            assert!(!err.contains("error"), "{fixture} -o {o}: {err}");
        }
    }
}

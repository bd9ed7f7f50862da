//! Hostile input and hostile servers (issue 16): what reaches the terminal, the files written,
//! the credentials never echoed.

use std::process::Output;

use crate::support::apiserver::{ApiServer, Fault, FaultKind, Options};
use crate::support::{self, DEADLINE, Env, NOW, run, stderr};

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

//! The invocation as a whole: `--now` refused when bad wherever it is accepted, and an
//! answer's exit code kept when its reader closes the pipe.

use std::process::Stdio;

use crate::util::{code, fixtures_dir, gc, run, stderr};

const NOW: &str = "2026-11-29T12:00:00Z";

fn snap(name: &str) -> String {
    fixtures_dir().join(name).join("snapshot.json").display().to_string()
}

/// Every subcommand (and mode) that takes `--now`: a bad value is a usage error (exit 1) that
/// names the flag and the accepted form, before anything is read, live or offline.
#[test]
fn a_bad_now_is_refused_everywhere_it_is_accepted() {
    let s = snap("site-operator-gone");
    let offline: [&[&str]; 4] = [
        &["why-stuck", "site/alpha", "-n", "labs"],
        &["why-stuck", "--all", "-n", "labs"],
        &["tree", "site/alpha", "-n", "labs"],
        &["plan", "site/alpha", "-n", "labs"],
    ];
    // live only (no cluster is configured: the refusal comes before any connection)
    let live: [&[&str]; 4] = [
        &["why-stuck", "site/alpha", "-n", "labs", "--watch"],
        &["why-stuck", "--all", "-n", "labs", "--watch"],
        &["tree", "site/alpha", "-n", "labs", "--watch"],
        &["snapshot", "-n", "labs"],
    ];
    let asks = offline.iter().map(|a| [*a, &["--snapshot", &s]].concat()).chain(live.iter().map(|a| a.to_vec()));
    for ask in asks {
        for bad in ["yesterday", "2026-11-29", "2026-13-01T00:00:00Z", "12:00", ""] {
            let out = run(&[&ask[..], &["--now", bad]].concat());
            let err = stderr(&out);
            assert_eq!(code(&out), 1, "{ask:?} --now {bad:?}: {err}");
            assert!(out.stdout.is_empty(), "{ask:?} --now {bad:?}: nothing answered");
            assert!(
                err.starts_with("error: ") && err.contains("--now") && err.contains("RFC 3339"),
                "{ask:?} --now {bad:?}: {err}"
            );
            assert_eq!(err.lines().count(), 1, "{err}");
        }
        // the same invocation with a good --now gets past the flag (offline: it answers)
        if ask.contains(&"--snapshot") {
            let out = run(&[&ask[..], &["--now", NOW]].concat());
            assert!(matches!(code(&out), 0 | 2), "{ask:?}: {}", stderr(&out));
        }
    }
}

/// A reader that has gone (`kubectl gc why-stuck … | head -0`) changes nothing about the
/// answer: the exit code is the answer's, as with a reader that stayed.
#[test]
fn a_closed_pipe_keeps_the_answers_exit_code() {
    let s = snap("site-operator-gone");
    let asks: [(&[&str], i32); 4] = [
        (&["why-stuck", "site/alpha", "-n", "labs"], 2),
        (&["plan", "site/alpha", "-n", "labs", "--cascade=foreground"], 2),
        (&["why-stuck", "--all", "-n", "labs"], 2),
        (&["tree", "site/alpha", "-n", "labs"], 0),
    ];
    for (ask, want) in asks {
        for o in ["text", "json", "yaml"] {
            let args = [ask, &["-o", o, "--snapshot", &s, "--now", NOW]].concat();
            assert_eq!(code(&run(&args)), want, "{args:?} read whole");
            // the pipe's reading end is closed before the command starts: every write fails
            let (reader, writer) = std::io::pipe().expect("a pipe");
            drop(reader);
            let out = gc().args(&args).stdout(Stdio::from(writer)).stderr(Stdio::piped()).output().expect("runs");
            assert!(out.stdout.is_empty(), "the answer went to the closed pipe, not to a capture");
            assert_eq!(code(&out), want, "{args:?} into a closed pipe: {}", stderr(&out));
            assert!(out.stderr.is_empty(), "a closed pipe is not an error: {}", stderr(&out));
        }
    }
}

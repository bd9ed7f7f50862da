//! Exit codes, mapped in one place (contract §4): 0 done, 1 failed, 2 stuck or blocked, 3 done
//! but the answer cannot be judged.

use std::process::ExitCode;

use kubectl_gc::diagnose::Verdict;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exit {
    /// Answered, and nothing is stuck or blocked.
    Ok,
    /// The command failed: nothing to answer.
    Failure,
    /// Answered, and the answer is "stuck" (why-stuck) or "ends blocked" (plan).
    Stuck,
    /// Answered, but nothing was found stuck and something the verdict rests on could not be
    /// read or judged (verdict `Unknown`): never "nothing to do". Also `--watch` reaching
    /// `--timeout` before the deletion ended.
    Unknown,
}

impl Exit {
    pub fn from_stuck(stuck: bool) -> Exit {
        if stuck { Exit::Stuck } else { Exit::Ok }
    }

    /// The code of a why-stuck verdict (`--all`: the worst answer's; none answered is 0).
    pub fn from_verdict(v: Option<Verdict>) -> Exit {
        match v {
            Some(Verdict::Stuck) => Exit::Stuck,
            Some(Verdict::Unknown) => Exit::Unknown,
            Some(Verdict::InProgress | Verdict::NotDeleting) | None => Exit::Ok,
        }
    }
}

impl From<Exit> for ExitCode {
    fn from(e: Exit) -> ExitCode {
        ExitCode::from(match e {
            Exit::Ok => 0,
            Exit::Failure => 1,
            Exit::Stuck => 2,
            Exit::Unknown => 3,
        })
    }
}

/// The exit of an answer once it is written: a closed pipe (`kubectl gc why-stuck … | head
/// -0`) leaves the answer as it was, so the code is the answer's, as ripgrep keeps its status
/// when its reader goes; any other failure to write is a failure.
pub fn written(exit: Exit, result: anyhow::Result<()>) -> anyhow::Result<Exit> {
    match result {
        Ok(()) => Ok(exit),
        Err(e) if is_broken_pipe(&e) => Ok(exit),
        Err(e) => Err(e),
    }
}

/// Whether an error chain ends in a closed pipe (`kubectl gc tree … | head`): the reader has
/// gone, which is not a failure.
pub fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|c| {
        c.downcast_ref::<std::io::Error>().is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
            || c.downcast_ref::<serde_json::Error>()
                .is_some_and(|e| e.io_error_kind() == Some(std::io::ErrorKind::BrokenPipe))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn broken_pipe_is_recognised_through_context() {
        let e = anyhow::Error::from(std::io::Error::from(std::io::ErrorKind::BrokenPipe)).context("writing output");
        assert!(is_broken_pipe(&e));
        assert!(!is_broken_pipe(&anyhow::anyhow!("other")));
    }

    #[test]
    fn a_closed_pipe_keeps_the_answers_code_and_other_failures_fail() {
        let closed = || Err(anyhow::Error::from(std::io::Error::from(std::io::ErrorKind::BrokenPipe)));
        assert_eq!(written(Exit::Stuck, closed()).unwrap(), Exit::Stuck);
        assert_eq!(written(Exit::Unknown, closed()).unwrap(), Exit::Unknown);
        assert_eq!(written(Exit::Ok, Ok(())).unwrap(), Exit::Ok);
        assert!(written(Exit::Stuck, Err(anyhow::anyhow!("disk full"))).is_err());
    }
}

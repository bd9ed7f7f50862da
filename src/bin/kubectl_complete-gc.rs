//! `kubectl_complete-gc`: kubectl (1.26+) runs this from PATH for `kubectl gc <TAB>`, with
//! the words typed after `gc` (the last one being completed). It hands them to
//! `kubectl-gc __complete`, which answers in cobra's format: the `kubectl-gc` beside this
//! executable (symlinks resolved, as under krew), else the one on PATH.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

const PLUGIN: &str = if cfg!(windows) { "kubectl-gc.exe" } else { "kubectl-gc" };

fn main() -> ExitCode {
    let plugin = beside_me().unwrap_or_else(|| PathBuf::from(PLUGIN));
    let mut cmd = Command::new(&plugin);
    cmd.arg("__complete").args(std::env::args_os().skip(1));
    run(cmd, &plugin)
}

fn beside_me() -> Option<PathBuf> {
    let me = std::env::current_exe().ok()?;
    let me = me.canonicalize().unwrap_or(me);
    let plugin = me.parent()?.join(PLUGIN);
    plugin.is_file().then_some(plugin)
}

/// Replaces this process, so kubectl reads kubectl-gc's answer and exit status directly.
#[cfg(unix)]
fn run(mut cmd: Command, plugin: &Path) -> ExitCode {
    use std::os::unix::process::CommandExt;
    let err = cmd.exec();
    eprintln!("error: running {}: {err}", plugin.display());
    ExitCode::FAILURE
}

#[cfg(not(unix))]
fn run(mut cmd: Command, plugin: &Path) -> ExitCode {
    match cmd.status() {
        Ok(status) => ExitCode::from(status.code().map_or(1, |c| c.clamp(0, 255) as u8)),
        Err(err) => {
            eprintln!("error: running {}: {err}", plugin.display());
            ExitCode::FAILURE
        }
    }
}

//! `kubectl-gc`: the thin binary over the `kubectl_gc` library.

mod cli;

/// A snapshot of a big cluster is millions of small strings: mimalloc allocates and frees
/// them markedly faster than the system allocator.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::process::ExitCode;

use clap::Parser;

use cli::exit::{Exit, is_broken_pipe};

/// mimalloc asks for transparent huge pages, and a 2 MiB page is zeroed whole at its first
/// touch. Where guest memory is backed lazily by the host (a Firecracker VM such as this
/// project's machine), a million-object snapshot then spent 9 of its 21 s in the kernel, and
/// 2.5 s with small pages (the 100k run was no slower). Most of the heap is written once and
/// read little, so huge pages' fewer TLB misses did not win that back.
fn no_transparent_huge_pages() {
    #[cfg(target_os = "linux")]
    // SAFETY: PR_SET_THP_DISABLE takes no pointers; failure (an old kernel) changes nothing.
    unsafe {
        libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0);
    }
}

/// A usage error as one `error:` line (contract §4): clap's message, its tip and its list of
/// possible values, without the usage block (`--help` shows it).
fn usage_error(e: &clap::Error) -> String {
    let text = e.render().to_string();
    let parts: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with("Usage:") && !l.starts_with("For more information"))
        .collect();
    let msg = parts.join(" ");
    format!("{}; see --help", msg.strip_prefix("error: ").unwrap_or(&msg))
}

fn main() -> ExitCode {
    no_transparent_huge_pages();
    // kubectl's plugin completion (kubectl_complete-gc): the words are taken verbatim, never
    // parsed as flags, so they are answered before clap sees them.
    let argv: Vec<std::ffi::OsString> = std::env::args_os().collect();
    if argv.get(1).is_some_and(|a| a == "__complete") {
        return cli::complete::main(&argv[2..]);
    }
    // clap's own exit() uses 2 for usage errors, and 2 means "stuck" here: parse with try_parse.
    let args = match cli::args::Args::try_parse() {
        Ok(a) => a,
        Err(e) if e.use_stderr() && e.kind() != clap::error::ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            cli::output::error(&usage_error(&e));
            return Exit::Failure.into();
        }
        Err(e) => {
            // --help, --version (stdout, exit 0); no subcommand at all: the help (stderr, exit 1)
            let _ = e.print();
            return if e.use_stderr() { Exit::Failure } else { Exit::Ok }.into();
        }
    };
    match cli::run::run(args) {
        Ok(exit) => exit.into(),
        // an answer keeps its code when its reader goes (`exit::written`, and a watch's
        // `reader_gone`); what else meets a closed pipe answers nothing (a completion script):
        // the reader leaving is not a failure
        Err(e) if is_broken_pipe(&e) => Exit::Ok.into(),
        Err(e) => {
            cli::output::error(&format!("{e:#}"));
            Exit::Failure.into()
        }
    }
}

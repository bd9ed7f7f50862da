//! `kubectl-gc`: the thin binary over the `kubectl_gc` library.

mod cli;

/// A snapshot of a big cluster is millions of small strings: mimalloc allocates and frees
/// them markedly faster than the system allocator.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::io::Write;
use std::process::ExitCode;

use clap::Parser;

use cli::exit::{is_broken_pipe, Exit};

fn main() -> ExitCode {
    // kubectl's plugin completion (kubectl_complete-gc): the words are taken verbatim, never
    // parsed as flags, so they are answered before clap sees them.
    let argv: Vec<std::ffi::OsString> = std::env::args_os().collect();
    if argv.get(1).is_some_and(|a| a == "__complete") {
        return cli::complete::main(&argv[2..]);
    }
    // clap's own exit() uses 2 for usage errors, and 2 means "stuck" here: parse with try_parse.
    let args = match cli::args::Args::try_parse() {
        Ok(a) => a,
        Err(e) => {
            let code = if e.use_stderr() { Exit::Failure } else { Exit::Ok };
            let _ = e.print();
            return code.into();
        }
    };
    match cli::run::run(args) {
        Ok(exit) => exit.into(),
        Err(e) if is_broken_pipe(&e) => Exit::Ok.into(),
        Err(e) => {
            let _ = writeln!(std::io::stderr().lock(), "error: {e:#}");
            Exit::Failure.into()
        }
    }
}

//! The binary's own modules: arguments, running a subcommand, exit codes, output.

pub mod args;
pub mod complete;
pub mod duration;
pub mod exit;
pub mod invocation;
pub mod live;
pub mod output;
pub mod request;
pub mod run;
pub mod snapshot_file;
pub mod sweep;
pub mod watch;
pub mod watch_show;

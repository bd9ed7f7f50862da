//! The one integration test binary: every area is a module, so there is one link.

mod answers;
mod architecture;
mod bench;
mod cli;
mod completion;
mod contract;
mod fixtures;
mod hostile;
mod krew;
mod live;
mod live_hostile;
mod live_reads;
mod live_sweep_reads;
mod pictures;
mod plugin;
mod renamed;
mod support;
mod sweep;
mod trips;
mod util;
mod watch;
mod watch_terminal;

//! The one integration test binary: every area is a module, so there is one link.

mod answers;
mod architecture;
mod bench;
mod cli;
mod coherence;
mod completion;
mod completion_hostile;
mod contract;
mod fixtures;
mod forged_events;
mod hostile;
mod krew;
mod live;
mod live_hostile;
mod live_reads;
mod live_sweep_reads;
mod pictures;
mod plugin;
mod refused_reads;
mod support;
mod sweep;
mod trips;
mod util;
mod watch;
mod watch_terminal;
mod workflows;

//! The one integration test binary: every area is a module, so there is one link.

mod bench;
mod cli;
mod completion;
mod fixtures;
mod krew;
mod live;
mod pictures;
mod plugin;
mod support;
mod sweep;
mod util;

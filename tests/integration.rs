//! The one integration test binary: every area is a module, so there is one link.

mod cli;
mod fixtures;
mod live;
mod plugin;
mod support;
mod util;

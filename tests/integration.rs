//! The one integration test binary: every area is a module, so there is one link.

mod cli;
mod completion;
mod fixtures;
mod krew;
mod pictures;
mod util;

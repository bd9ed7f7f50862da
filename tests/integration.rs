//! The one integration test binary.

mod completion;
mod krew;
mod pictures;

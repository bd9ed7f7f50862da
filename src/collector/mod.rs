//! The garbage collector's decisions (garbagecollector.go), as values.

pub mod decide;
pub mod references;

pub use references::{Dangling, OwnerState, classify_reference};

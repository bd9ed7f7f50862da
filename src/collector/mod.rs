//! The garbage collector's decisions (garbagecollector.go), as values.

pub mod decide;
pub mod references;

pub use references::{classify_reference, Dangling, OwnerState};

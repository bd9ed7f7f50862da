//! The garbage collector's decisions (garbagecollector.go), as values.

pub mod decide;
pub mod references;
mod verdict;

pub use references::{Dangling, OwnerState, classify_reference};
pub use verdict::GcVerdict;

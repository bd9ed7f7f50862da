//! The I/O edge: where objects come from. Every file read and network call ends here.

pub mod file;
pub mod live;

//! Output: pure functions from answers to bytes on any `io::Write`.

pub mod json;
pub mod plan;
pub mod style;
pub mod text;

//! Output: pure functions from answers to bytes on any `io::Write`.

pub mod dot;
pub mod json;
pub mod mermaid;
pub mod picture;
pub mod plan;
pub mod safe_json;
pub mod safe_yaml;
pub mod style;
pub mod sweep;
pub mod text;
pub mod tree_yaml;

#[cfg(test)]
mod answer_tests;

#![warn(missing_docs)]
//! kubectl-gc: rebuilds the Kubernetes garbage collector's owner/dependent graph from a live
//! cluster or a snapshot, and answers why an object will not go away (`why_stuck`), what
//! hangs off it (`tree`), and what the garbage collector will do if it is deleted (`plan`).
//!
//! Data flows one way: `source` → [`snapshot::Snapshot`] → [`graph::Graph`] →
//! `diagnose` / `plan` / `tree` → `render`. Only `source` does I/O.

pub mod admission;
pub mod age;
pub mod collector;
pub mod controllers;
pub mod diagnose;
pub mod discovery;
#[doc(hidden)]
pub mod fuzz;
pub mod graph;
pub mod names;
pub mod plan;
pub mod reads;
pub mod release;
pub mod remedy;
pub mod render;
pub mod snapshot;
pub mod source;
pub mod sweep;
#[cfg(test)]
pub(crate) mod testing;
pub mod tree;
pub mod watch;

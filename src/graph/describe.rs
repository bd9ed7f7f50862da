//! How messages name an object.

use super::{Graph, NodeId};

/// `Kind namespace/name` or `Kind name`, for messages.
pub fn describe(g: &Graph, x: NodeId) -> String {
    let id = g.identity(x);
    match id.namespace {
        Some(ns) => format!("{} {ns}/{}", id.kind, id.name),
        None => format!("{} {}", id.kind, id.name),
    }
}

//! The API server's admission in front of the requests a deletion needs: which webhooks
//! intercept a request ([`webhooks`], with [`selector`]), whether the backend they call can
//! serve ([`backend`]), which admission policies apply ([`policies`]), which denials Events
//! quote ([`denials`]), which finalizer removals a mutation undoes ([`readds`]), which objects need a conversion webhook to be read at all
//! ([`conversion`]), and the verdict on one request in a world that changes as a plan
//! proceeds ([`review`]).
//!
//! Pure: everything is read from a [`Graph`](crate::graph::Graph); `diagnose` turns it into
//! findings, `plan` into rejected steps.

pub mod backend;
pub mod conversion;
pub mod denials;
pub mod evaluate;
pub mod index;
pub mod params;
pub mod policies;
pub mod readds;
pub mod review;
pub mod selector;
pub mod webhooks;

pub use index::Index;
pub use webhooks::Operation;

use crate::graph::{Graph, NodeId};

use crate::graph::describe;

/// A webhook configuration or policy, with the binding it applies through when one is named:
/// `ValidatingAdmissionPolicy x (binding y)`.
pub fn denier(g: &Graph, by: NodeId, binding: Option<NodeId>) -> String {
    match binding {
        Some(b) => format!("{} (binding {})", describe(g, by), g.identity(b).name),
        None => describe(g, by),
    }
}

//! Who removes a finalizer, and whether it is running (gc-semantics §8).
//!
//! [`Liveness::finalizer`] answers for one finalizer on one object: the component or workload
//! that removes it, whether that controller is Alive, Down, Missing or Unknown, and the
//! evidence. The planner and `why-stuck` share it, so both assume the same thing.

mod builtin;

use k8s_openapi::jiff::Timestamp;

use crate::graph::{Graph, NodeId};

pub use builtin::{builtin_owner, BuiltinOwner};

/// Whether the controller that removes a finalizer is running.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ControllerState {
    /// Ready pods, a lease renewed within its duration, or a control-plane component
    /// assumed alive because the control plane is not visible.
    Alive,
    /// The controller exists but is not running (no ready replica, scaled to zero, stale lease).
    Down,
    /// Nothing that could remove the finalizer was found: the controller was uninstalled.
    Missing,
    /// Not enough visibility to tell.
    Unknown,
}

impl ControllerState {
    pub fn as_str(self) -> &'static str {
        match self {
            ControllerState::Alive => "Alive",
            ControllerState::Down => "Down",
            ControllerState::Missing => "Missing",
            ControllerState::Unknown => "Unknown",
        }
    }
}

/// The answer for one finalizer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FinalizerOwner {
    /// The component or workload that removes it (`kube-controller-manager (garbage
    /// collector)`, `Deployment site-system/site-operator`), if known.
    pub removed_by: Option<String>,
    pub controller: ControllerState,
    pub evidence: Vec<String>,
}

/// Controller attribution over one graph, at one instant.
pub struct Liveness<'g> {
    graph: &'g Graph,
    now: Timestamp,
}

impl<'g> Liveness<'g> {
    pub fn new(graph: &'g Graph, now: Timestamp) -> Liveness<'g> {
        Liveness { graph, now }
    }

    pub fn now(&self) -> Timestamp {
        self.now
    }

    /// Who removes `finalizer` from `object`, and whether it is alive.
    pub fn finalizer(&self, object: NodeId, finalizer: &str) -> FinalizerOwner {
        let g = self.graph;
        if let Some(b) = builtin_owner(finalizer) {
            let (controller, evidence) = builtin::component_liveness(g, b.component, self.now);
            return FinalizerOwner { removed_by: Some(b.removed_by.to_string()), controller, evidence };
        }
        let _ = object;
        FinalizerOwner {
            removed_by: None,
            controller: ControllerState::Unknown,
            evidence: vec![format!("no built-in controller removes {finalizer}; its controller could not be identified")],
        }
    }
}

//! A controller that holds itself: the finalizer's controller can never run again to remove
//! it, because what keeps it from running is this very deletion.
//!
//! - **Its own pod, not replaced.** The object is a pod of the controller's workload, and that
//!   workload's controller brings up the replacement only once the old pod is gone: a
//!   StatefulSet (a pod's identity, `web-0`, is recreated after the old one leaves storage;
//!   `stateful_set_control.go`), a DaemonSet (it waits for a terminating pod on a node before
//!   creating one; `daemon_controller.go` `podsShouldBeOnNode`), or a bare pod (nothing
//!   replaces it). A ReplicaSet's pod is replaced at once (`FilterActivePods` skips
//!   terminating pods), so a Deployment's is not held, unless the Deployment goes too.
//! - **Its own workload being deleted.** The controller's workload, or an owner up its chain
//!   (the Deployment of its ReplicaSet), is being deleted: its pods go (with the namespace's
//!   content that case is `namespace::dying_home`), and nothing brings it back.
//!
//! Then "once it runs again it removes it" can never happen; what can work is running the
//! controller outside what is being deleted, then, last, removing the finalizer by hand.

use super::step::{Command, Reach, Step};
use super::{describe, remedy};
use crate::controllers::FinalizerOwner;
use crate::graph::{Graph, NodeId};

/// How the controller holds itself.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Hold {
    /// A pod of the controller's workload is being deleted and keeps the finalizer, and the
    /// workload replaces it only once it is gone.
    OwnPod {
        /// The controller's workload.
        workload: NodeId,
        /// Its pod that keeps the finalizer.
        pod: NodeId,
    },
    /// The controller's workload, or an owner up its chain, is being deleted.
    BeingDeleted {
        /// The controller's workload.
        workload: NodeId,
        /// What is being deleted: the workload or an owner of it.
        deleting: NodeId,
    },
}

/// The controller's workload node, from its attribution.
fn workload_node(g: &Graph, owner: &FinalizerOwner) -> Option<NodeId> {
    let w = owner.workload.as_ref()?;
    let group = if w.kind == "Pod" { "" } else { "apps" };
    g.find(group, &w.kind, w.namespace.as_deref(), &w.name)
}

/// Whether the controller of finalizer `f` holds itself (see the module doc); the same for
/// every object whose `f` it removes.
pub fn find(g: &Graph, owner: &FinalizerOwner, f: &str) -> Option<Hold> {
    let workload = workload_node(g, owner)?;
    // the workload and its controllers up the chain (a Deployment above a ReplicaSet), bounded
    let mut chain = vec![workload];
    while chain.len() < 4 {
        let Some(up) = g.controller_of(*chain.last().expect("not empty")) else { break };
        if chain.contains(&up) {
            break;
        }
        chain.push(up);
    }
    if let Some(&deleting) = chain.iter().find(|&&n| g.object(n).is_some_and(|o| o.is_deleting())) {
        return Some(Hold::BeingDeleted { workload, deleting });
    }
    let kind = g.identity(workload).kind;
    let pods: Vec<NodeId> = match kind {
        "Pod" => vec![workload],
        "StatefulSet" | "DaemonSet" => g
            .node(workload)
            .dependents
            .iter()
            .copied()
            .filter(|&d| g.controller_of(d) == Some(workload) && g.identity(d).kind == "Pod")
            .collect(),
        // a ReplicaSet's pod is replaced at once
        _ => return None,
    };
    pods.into_iter()
        .find(|&p| g.object(p).is_some_and(|o| o.is_deleting() && o.has_finalizer(f)))
        .map(|pod| Hold::OwnPod { workload, pod })
}

impl Hold {
    /// What is said of it, appended to what is said of the controller (the root cause).
    pub fn cause(&self, g: &Graph, f: &str) -> String {
        match self {
            Hold::OwnPod { workload, pod } => format!(
                ". It holds itself: {}, its own pod, is being deleted and keeps {f}, which only this controller removes; {} brings up a replacement only once that pod is gone, so the controller does not run again by itself",
                describe(g, *pod),
                describe(g, *workload)
            ),
            Hold::BeingDeleted { workload, deleting } if workload == deleting => format!(
                ". It holds itself: its own workload, {}, is being deleted, so its pods go and nothing brings them back to remove {f}",
                describe(g, *workload)
            ),
            Hold::BeingDeleted { workload, deleting } => format!(
                ". It holds itself: {} is being deleted, and with it the controller's workload {}, so its pods go and nothing brings them back to remove {f}",
                describe(g, *deleting),
                describe(g, *workload)
            ),
        }
    }

    /// Remedies that can work, least destructive first: look at the workload, run the
    /// controller outside what is being deleted, then, last, remove the finalizer by hand.
    pub fn remedies(&self, g: &Graph, x: NodeId, at: Option<usize>, f: &str) -> Vec<Step> {
        let (Hold::OwnPod { workload, .. } | Hold::BeingDeleted { workload, .. }) = self;
        let w = g.identity(*workload);
        let mut out = vec![Step::run(
            Reach::Inspect,
            format!("Read {} (what runs the controller of {f}, and its state):", describe(g, *workload)),
            Command::kubectl(["get"]).arg(w.kind.to_lowercase()).arg(w.name).namespace(w.namespace).flag("-o", "yaml"),
        )];
        out.push(match self {
            Hold::OwnPod { pod, .. } => Step::advice(
                Reach::Restore,
                format!(
                    "Run one more instance of the controller that is not {} (the same image and ServiceAccount, as a separate Deployment, or the workload scaled up where its pod management lets a new pod start while that one remains); it removes {f} itself, then the pod goes and is replaced. Scaling or restarting {} alone does not help: its replacement waits for that pod.",
                    describe(g, *pod),
                    describe(g, *workload)
                ),
            ),
            Hold::BeingDeleted { deleting, .. } => Step::advice(
                Reach::Restore,
                format!(
                    "Run the controller again outside what is being deleted (reinstall it under another name, or wait to delete {} until the objects it finalizes are gone); it then removes {f} itself. Deleting its custom resources before the controller avoids this.",
                    describe(g, *deleting)
                ),
            ),
        });
        if let Some(p) = remedy::remove_finalizer_at(g, x, at, f) {
            out.push(Step::run(
                Reach::Destructive,
                format!(
                    "Last resort, once whatever {f} guards has been cleaned up by hand (the controller will not): remove the finalizer."
                ),
                p,
            ));
        }
        out
    }
}

#[cfg(test)]
#[path = "self_hold_tests.rs"]
mod tests;

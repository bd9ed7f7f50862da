//! Finding codes (contract §4.3; stable names, documented in the README).

use crate::collector::{Dangling, OwnerState};
use crate::graph::NodeId;

use super::step::Step;

/// What a finding says. Serialized by name; new codes may be added, none renamed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum FindingCode {
    NotBeingDeleted,
    FinalizerPending,
    FinalizerControllerDown,
    FinalizerControllerMissing,
    /// Not in the contract's first table: the controller of a finalizer could not be judged
    /// (RBAC hid it, or nothing identifies it), so the verdict does not claim it is stuck.
    FinalizerControllerUnknown,
    BlockingDependent,
    OwnerUidMismatch,
    DanglingOwnerReference,
    OwnerRefInvalidNamespace,
    UnresolvableOwnerKind,
    NamespaceContentRemaining,
    NamespaceDiscoveryFailure,
    GarbageCollectorStalled,
    OwnerReferenceCycle,
    /// Not in the contract's first table: a pod in graceful termination on a node that is
    /// NotReady or gone; the kubelet will never confirm it, so it stays Terminating.
    PodOnUnavailableNode,
    /// A built-in controller is alive and what it waits for already holds, yet its finalizer
    /// stayed past the time it takes: it missed the event (`diagnose::builtin_conditions`).
    ControllerStalled,
    /// A finalizer's controller is alive, but the finalizer stayed longer than `--stuck-after`
    /// (`diagnose::progress`).
    FinalizerNotProgressing,
    AdmissionWebhookUnavailable,
    ConversionWebhookUnavailable,
    NamespaceContentDeletionFailure,
}

impl FindingCode {
    /// The code an owner reference in this state is reported under; none for a solid or
    /// waiting owner (nothing wrong with the reference).
    pub fn of_owner_state(state: &OwnerState) -> Option<FindingCode> {
        Some(match state {
            OwnerState::Solid | OwnerState::Waiting => return None,
            OwnerState::Dangling(Dangling::UidMismatch { .. }) => FindingCode::OwnerUidMismatch,
            OwnerState::Dangling(Dangling::InvalidNamespace { .. }) | OwnerState::NamespacedOwnerOfClusterScoped => {
                FindingCode::OwnerRefInvalidNamespace
            }
            OwnerState::Dangling(Dangling::Absent | Dangling::WrongCoordinates { .. }) => {
                FindingCode::DanglingOwnerReference
            }
            OwnerState::Unresolvable(_) => FindingCode::UnresolvableOwnerKind,
        })
    }
}

impl FindingCode {
    pub fn as_str(self) -> &'static str {
        match self {
            FindingCode::NotBeingDeleted => "NotBeingDeleted",
            FindingCode::FinalizerPending => "FinalizerPending",
            FindingCode::FinalizerControllerDown => "FinalizerControllerDown",
            FindingCode::FinalizerControllerMissing => "FinalizerControllerMissing",
            FindingCode::FinalizerControllerUnknown => "FinalizerControllerUnknown",
            FindingCode::BlockingDependent => "BlockingDependent",
            FindingCode::OwnerUidMismatch => "OwnerUidMismatch",
            FindingCode::DanglingOwnerReference => "DanglingOwnerReference",
            FindingCode::OwnerRefInvalidNamespace => "OwnerRefInvalidNamespace",
            FindingCode::UnresolvableOwnerKind => "UnresolvableOwnerKind",
            FindingCode::NamespaceContentRemaining => "NamespaceContentRemaining",
            FindingCode::NamespaceDiscoveryFailure => "NamespaceDiscoveryFailure",
            FindingCode::GarbageCollectorStalled => "GarbageCollectorStalled",
            FindingCode::OwnerReferenceCycle => "OwnerReferenceCycle",
            FindingCode::PodOnUnavailableNode => "PodOnUnavailableNode",
            FindingCode::ControllerStalled => "ControllerStalled",
            FindingCode::FinalizerNotProgressing => "FinalizerNotProgressing",
            FindingCode::AdmissionWebhookUnavailable => "AdmissionWebhookUnavailable",
            FindingCode::ConversionWebhookUnavailable => "ConversionWebhookUnavailable",
            FindingCode::NamespaceContentDeletionFailure => "NamespaceContentDeletionFailure",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    Error,
    Warning,
    Info,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "Error",
            Severity::Warning => "Warning",
            Severity::Info => "Info",
        }
    }
}

/// Something `why-stuck` or `tree` found on an object.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    pub code: FindingCode,
    pub severity: Severity,
    pub object: NodeId,
    pub related: Vec<Related>,
    pub message: String,
    /// Ranked next steps, safest first: printed commands, never executed.
    pub remedy: Vec<Step>,
}

/// An object a finding points at: a node of the graph, or an owner that exists nowhere (the
/// reference's coordinates in the dependent's namespace, without a uid).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Related {
    Node(NodeId),
    Absent { api_version: String, kind: String, namespace: Option<String>, name: String },
}

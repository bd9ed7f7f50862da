//! Finding codes (contract §4.3; stable names, documented in docs/findings.md).

use crate::collector::{Dangling, OwnerState};
use crate::controllers::FinalizerOwner;
use crate::graph::NodeId;

use super::step::Step;

/// What a finding says. Serialized by name; new codes may be added, none renamed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum FindingCode {
    /// The object has no `deletionTimestamp`: nothing is stuck, nothing to explain.
    NotBeingDeleted,
    /// A finalizer remains and its controller is alive; `related` names what it still waits for.
    FinalizerPending,
    /// The controller for a finalizer exists but is not running.
    FinalizerControllerDown,
    /// No controller that could remove the finalizer was found (permission alone proves nothing).
    FinalizerControllerMissing,
    /// Not in the contract's first table: the controller of a finalizer could not be judged
    /// (RBAC hid it, or nothing identifies it), so the verdict does not claim it is stuck.
    FinalizerControllerUnknown,
    /// Foreground deletion waits for this dependent (`blockOwnerDeletion: true`).
    BlockingDependent,
    /// An owner reference names an existing object whose uid differs (owner recreated): the GC
    /// treats the owner as absent.
    OwnerUidMismatch,
    /// An owner reference points to no object.
    DanglingOwnerReference,
    /// A namespaced owner referenced from another namespace or from a cluster-scoped object (the
    /// GC's `OwnerRefInvalidNamespace` event).
    OwnerRefInvalidNamespace,
    /// An owner's apiVersion/kind is not served: the GC never acts on this object.
    UnresolvableOwnerKind,
    /// A terminating namespace still holds this object.
    NamespaceContentRemaining,
    /// An API group cannot be discovered (e.g. an unavailable APIService), so the namespace
    /// cannot finish.
    NamespaceDiscoveryFailure,
    /// A GC finalizer (`foregroundDeletion`, `orphan`) has nothing left to wait for yet remains,
    /// or the GC's next step is long overdue.
    GarbageCollectorStalled,
    /// Owner references form a cycle.
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
    /// A `failurePolicy: Fail` webhook that intercepts the finalizer's removal or the delete has
    /// no serving backend; `related` names the webhook configuration.
    AdmissionWebhookUnavailable,
    /// A serving admission webhook or an admission policy is seen denying (in a Warning Event
    /// that names it) a request the deletion needs; `related` names the configuration or policy.
    AdmissionDenied,
    /// The object's CRD converts through a webhook with no serving backend; `related` names the
    /// CRD.
    ConversionWebhookUnavailable,
    /// The namespace controller reports it could not delete content (its condition, quoted).
    NamespaceContentDeletionFailure,
    /// Ordered namespace deletion (1.33+, KEP-5080): the namespace controller deletes nothing
    /// but pods until every pod is gone; `related` names the pods that remain, and the rest of
    /// the content has not been attempted yet.
    NamespaceWaitingForPods,
    /// A pod past the end of its grace period by more than `--stuck-after`, on a node whose
    /// kubelet is alive: the kubelet cannot finish it (`diagnose::kubelet`).
    PodTerminationStalled,
    /// A mutating webhook or MutatingAdmissionPolicy puts the finalizer back on the UPDATE that
    /// removes it, so the API server refuses that update; `related` names the configuration.
    FinalizerReAdded,
}

impl FindingCode {
    /// The code an owner reference in this state is reported under; none for a solid or
    /// waiting owner (nothing wrong with the reference).
    pub fn of_owner_state(state: &OwnerState) -> Option<FindingCode> {
        Some(match state {
            OwnerState::Solid | OwnerState::Waiting | OwnerState::Unread => return None,
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
    /// Whether the code says the API server refuses a request the deletion needs (a denial, a
    /// dead webhook, a re-adding mutation, an unconvertible object): at severity Error such a
    /// finding explains why whoever sends that request has not finished, and subsumes the
    /// stall codes (contract §4.3.4).
    pub fn is_refusal(self) -> bool {
        matches!(
            self,
            FindingCode::AdmissionDenied
                | FindingCode::AdmissionWebhookUnavailable
                | FindingCode::ConversionWebhookUnavailable
                | FindingCode::FinalizerReAdded
        )
    }

    /// The stable wire name (contract §4.3), the same as the variant's.
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
            FindingCode::AdmissionDenied => "AdmissionDenied",
            FindingCode::ConversionWebhookUnavailable => "ConversionWebhookUnavailable",
            FindingCode::NamespaceContentDeletionFailure => "NamespaceContentDeletionFailure",
            FindingCode::NamespaceWaitingForPods => "NamespaceWaitingForPods",
            FindingCode::PodTerminationStalled => "PodTerminationStalled",
            FindingCode::FinalizerReAdded => "FinalizerReAdded",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
/// How much a finding weighs in the answer; serialized by name.
pub enum Severity {
    /// Holds the deletion: someone has to act.
    Error,
    /// May hold it, or could not be judged either way.
    Warning,
    /// Context: worth knowing, not a cause.
    Info,
}

impl Severity {
    /// The wire name: `Error`, `Warning` or `Info`.
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
    /// What the finding says (its stable code).
    pub code: FindingCode,
    /// How much it weighs.
    pub severity: Severity,
    /// The object it is about.
    pub object: NodeId,
    /// Other objects it names (the blocking dependent, the webhook configuration, the CRD…).
    pub related: Vec<Related>,
    /// One sentence for a person; Kubernetes' own messages appear quoted inside it.
    pub message: String,
    /// Ranked next steps, safest first: printed commands, never executed.
    pub remedy: Vec<Step>,
    /// Who or what has to act for the finding to go away, set where the finding is made:
    /// `why-stuck --all` groups by it and the text groups root causes by it, so neither reads
    /// the code's name or the message.
    pub subject: Subject,
    /// The finding says the input cannot settle it (a controller that could not be judged, an
    /// absence the input cannot vouch for): the answer's verdict is `Unknown` unless something
    /// is stuck, and never `InProgress` (contract §4.3).
    pub cannot_tell: bool,
}

/// Who or what a finding is about, beyond its object: what has to act.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Subject {
    /// A finalizer of the finding's object, and the controller that removes it.
    Finalizer {
        /// The finalizer as written.
        name: String,
        /// Who removes it, its state and the evidence.
        owner: FinalizerOwner,
    },
    /// kube-controller-manager's garbage collector (a GC finalizer, a blocking dependent).
    GarbageCollector,
    /// What the finding's `related` names (a webhook configuration, a CRD, APIServices, a
    /// node); the finding's own object when it names none.
    Related,
    /// Where the object is rather than why it stays (no deletionTimestamp, the content of a
    /// terminating namespace, an owner cycle): never a cause while another finding is there.
    Context,
}

/// An object a finding points at: a node of the graph, or an owner that exists nowhere (the
/// reference's coordinates in the dependent's namespace, without a uid).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Related {
    /// An object of the snapshot.
    Node(NodeId),
    /// An owner that exists nowhere, by the reference's coordinates.
    Absent {
        /// The reference's `apiVersion`.
        api_version: String,
        /// The reference's `kind`.
        kind: String,
        /// The dependent's namespace (an owner reference has none of its own); `None` when the
        /// dependent is cluster-scoped.
        namespace: Option<String>,
        /// The reference's `name`.
        name: String,
    },
}

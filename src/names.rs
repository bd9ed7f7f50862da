//! The well-known names of Kubernetes and its garbage collector that the analysis matches on,
//! each spelled once: finalizers the control plane owns and the kinds whose behaviour is
//! modelled; and the one character class every output escapes (bidi controls). Names written
//! by components we only quote (condition messages, event reasons) are not here: they are
//! shown, never matched.

pub mod api_path;

/// A (group, kind) pair; the core group is `""`.
pub type GroupKind = (&'static str, &'static str);

/// The garbage collector's finalizer for a Foreground deletion: the owner stays until every
/// `blockOwnerDeletion: true` dependent is gone.
pub const FOREGROUND_DELETION: &str = "foregroundDeletion";
/// The garbage collector's finalizer for an Orphan deletion: dependents lose their reference
/// to the owner before it goes.
pub const ORPHAN: &str = "orphan";
/// Held on a PersistentVolumeClaim while a pod uses it (the PVC-protection controller).
pub const PVC_PROTECTION: &str = "kubernetes.io/pvc-protection";
/// Held on a PersistentVolume while a claim is bound to it (the PV-protection controller).
pub const PV_PROTECTION: &str = "kubernetes.io/pv-protection";
/// Held on a Job's pod until the Job controller has counted it.
pub const JOB_TRACKING: &str = "batch.kubernetes.io/job-tracking";
/// Held on a CustomResourceDefinition until the API server has deleted its instances.
pub const CRD_CLEANUP: &str = "customresourcecleanup.apiextensions.k8s.io";
/// A namespace's `spec.finalizers` entry the namespace controller removes once it is empty.
pub const NAMESPACE_FINALIZER: &str = "kubernetes";

/// `apiextensions.k8s.io`, the group of CustomResourceDefinitions.
pub const APIEXTENSIONS: &str = "apiextensions.k8s.io";
/// `apiregistration.k8s.io`, the group of APIServices.
pub const APIREGISTRATION: &str = "apiregistration.k8s.io";
/// CustomResourceDefinition.
pub const CRD: GroupKind = (APIEXTENSIONS, "CustomResourceDefinition");
/// APIService: an aggregated API server's registration.
pub const API_SERVICE: GroupKind = (APIREGISTRATION, "APIService");

/// Where each kubelet renews its node's heartbeat, a Lease named after the node (every 10 s by
/// default): evidence of a node's kubelet, never of a controller.
pub const NODE_LEASE_NAMESPACE: &str = "kube-node-lease";
/// Lease, the kind of leader election and of node heartbeats.
pub const LEASE: GroupKind = ("coordination.k8s.io", "Lease");

/// The Unicode bidirectional controls (embeddings, overrides, isolates, marks), which can
/// make a name display as something else ("Trojan Source"): escaped wherever data is printed,
/// in text, JSON and printed commands alike.
pub fn is_bidi(c: char) -> bool {
    matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' | '\u{200E}' | '\u{200F}' | '\u{061C}')
}

//! The finalizers in and around core Kubernetes and the components that remove them
//! (gc-semantics §8), and the liveness of those components.

use k8s_openapi::jiff::Timestamp;

use super::ControllerState;
use crate::graph::Graph;

/// The control-plane component that runs a built-in finalizer's controller.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Component {
    KubeControllerManager,
    KubeApiserver,
    CloudControllerManager,
    CsiSidecar,
    KubeScheduler,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BuiltinOwner {
    pub removed_by: &'static str,
    pub component: Component,
}

/// The built-in owner of a finalizer, if it has one.
pub fn builtin_owner(finalizer: &str) -> Option<BuiltinOwner> {
    use Component::*;
    let (removed_by, component) = match finalizer {
        "orphan" | "foregroundDeletion" => ("kube-controller-manager (garbage collector)", KubeControllerManager),
        "kubernetes" => ("kube-controller-manager (namespace controller)", KubeControllerManager),
        "customresourcecleanup.apiextensions.k8s.io" => ("kube-apiserver (CRD finalizer controller)", KubeApiserver),
        "kubernetes.io/pvc-protection" => ("kube-controller-manager (pvc-protection controller)", KubeControllerManager),
        "kubernetes.io/pv-protection" => ("kube-controller-manager (pv-protection controller)", KubeControllerManager),
        "kubernetes.io/pv-controller" => ("kube-controller-manager (persistent volume controller)", KubeControllerManager),
        "batch.kubernetes.io/job-tracking" => ("kube-controller-manager (job controller)", KubeControllerManager),
        "resource.kubernetes.io/delete-protection" => ("kube-controller-manager (resourceclaim controller)", KubeControllerManager),
        "networking.k8s.io/service-cidr-finalizer" => ("kube-controller-manager (servicecidrs controller)", KubeControllerManager),
        "kubernetes.io/vac-protection" => ("kube-controller-manager (vac-protection controller)", KubeControllerManager),
        "service.kubernetes.io/load-balancer-cleanup" => ("cloud-controller-manager (service controller)", CloudControllerManager),
        "external-provisioner.volume.kubernetes.io/finalizer" => ("CSI external-provisioner sidecar", CsiSidecar),
        f if f.starts_with("external-attacher/") => ("CSI external-attacher sidecar", CsiSidecar),
        f if f.starts_with("external-snapshotter/") || f.starts_with("snapshot.storage.kubernetes.io/") => {
            ("CSI external-snapshotter", CsiSidecar)
        }
        "provisioner.storage.kubernetes.io/cloning-protection" => ("CSI external-provisioner sidecar", CsiSidecar),
        _ => return None,
    };
    Some(BuiltinOwner { removed_by, component })
}

/// Liveness of a control-plane component, from its leader-election lease where the snapshot
/// has one; otherwise assumed alive (managed control planes are not visible).
pub fn component_liveness(g: &Graph, c: Component, now: Timestamp) -> (ControllerState, Vec<String>) {
    let lease_name = match c {
        Component::KubeControllerManager => "kube-controller-manager",
        Component::CloudControllerManager => "cloud-controller-manager",
        Component::KubeScheduler => "kube-scheduler",
        Component::KubeApiserver => {
            return (ControllerState::Alive, vec!["runs inside kube-apiserver, which served this data".into()]);
        }
        Component::CsiSidecar => {
            return (ControllerState::Alive, vec!["assumed alive (CSI driver pods not checked)".into()]);
        }
    };
    match g.find("coordination.k8s.io", "Lease", Some("kube-system"), lease_name).and_then(|id| g.object(id)) {
        Some(lease) => lease_state(lease, now),
        None if c == Component::CloudControllerManager => (
            ControllerState::Unknown,
            vec!["no kube-system/cloud-controller-manager lease: the cloud controller may be absent or not visible".into()],
        ),
        None => (ControllerState::Alive, vec!["assumed alive (control plane not visible)".into()]),
    }
}

/// Alive when the lease was renewed within its duration, else Down since the renewal.
pub fn lease_state(lease: &crate::snapshot::Object, now: Timestamp) -> (ControllerState, Vec<String>) {
    let holder = lease.str_field("/spec/holderIdentity").unwrap_or("nobody");
    let duration = lease.field("/spec/leaseDurationSeconds").and_then(|v| v.as_i64()).unwrap_or(15);
    let renew: Option<Timestamp> = lease.str_field("/spec/renewTime").and_then(|s| s.parse().ok());
    let ns = lease.namespace_str();
    match renew {
        Some(t) => {
            let age = now.as_second() - t.as_second();
            if age <= duration {
                (
                    ControllerState::Alive,
                    vec![format!("lease {ns}/{} held by {holder}, renewed {age}s ago (duration {duration}s)", lease.name)],
                )
            } else {
                (
                    ControllerState::Down,
                    vec![format!(
                        "lease {ns}/{} held by {holder} was last renewed at {t} ({} ago, duration {duration}s)",
                        lease.name,
                        crate::age::human(age)
                    )],
                )
            }
        }
        None => (ControllerState::Unknown, vec![format!("lease {ns}/{} has no renewTime", lease.name)]),
    }
}

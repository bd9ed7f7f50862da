//! The finalizers in and around core Kubernetes and the components that remove them
//! (gc-semantics §8), and the liveness of those components: their leader-election Lease in
//! kube-system, else their static Pods, else assumed alive (managed control planes are not
//! visible) — except cloud-controller-manager, which many clusters do not run at all: Unknown.
//! CSI sidecars are judged per driver (`csi`).

use crate::names::{CRD_CLEANUP, FOREGROUND_DELETION, JOB_TRACKING, ORPHAN, PV_PROTECTION, PVC_PROTECTION};

use std::collections::HashMap;

use k8s_openapi::jiff::Timestamp;

use super::ControllerState;
use super::lease::lease_status;
use super::visibility::{Source, Visibility};
use super::workload::State;
use crate::graph::{Graph, NodeId};

/// The control-plane component that runs a built-in finalizer's controller.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Component {
    /// The garbage collector and most built-in controllers (`kubernetes.io/pvc-protection`, …).
    KubeControllerManager,
    /// The API server's own controllers (`customresourcecleanup.apiextensions.k8s.io`).
    KubeApiserver,
    /// The cloud provider's controllers (the service controller's load-balancer cleanup).
    CloudControllerManager,
    /// A CSI driver's sidecars (external-provisioner, -attacher, -snapshotter), running with
    /// the driver rather than in the control plane.
    CsiSidecar,
    /// kube-scheduler, a control-plane component whose static pods are looked for like the others.
    KubeScheduler,
}

impl Component {
    /// The name of its leader-election Lease in kube-system and of its static Pods.
    fn name(self) -> &'static str {
        match self {
            Component::KubeControllerManager => "kube-controller-manager",
            Component::KubeApiserver => "kube-apiserver",
            Component::CloudControllerManager => "cloud-controller-manager",
            Component::CsiSidecar => "csi",
            Component::KubeScheduler => "kube-scheduler",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
/// Who removes a well-known finalizer.
pub struct BuiltinOwner {
    /// The component (and its controller) in words, e.g. `kube-controller-manager (garbage
    /// collector)`.
    pub removed_by: &'static str,
    /// Where it runs, to judge it alive.
    pub component: Component,
}

/// The built-in owner of a finalizer, if it has one.
pub fn builtin_owner(finalizer: &str) -> Option<BuiltinOwner> {
    use Component::*;
    let (removed_by, component) = match finalizer {
        ORPHAN | FOREGROUND_DELETION => ("kube-controller-manager (garbage collector)", KubeControllerManager),
        "kubernetes" => ("kube-controller-manager (namespace controller)", KubeControllerManager),
        CRD_CLEANUP => ("kube-apiserver (CRD finalizer controller)", KubeApiserver),
        PVC_PROTECTION => ("kube-controller-manager (pvc-protection controller)", KubeControllerManager),
        PV_PROTECTION => ("kube-controller-manager (pv-protection controller)", KubeControllerManager),
        "kubernetes.io/pv-controller" => {
            ("kube-controller-manager (persistent volume controller)", KubeControllerManager)
        }
        JOB_TRACKING => ("kube-controller-manager (job controller)", KubeControllerManager),
        "resource.kubernetes.io/delete-protection" => {
            ("kube-controller-manager (resourceclaim controller)", KubeControllerManager)
        }
        "networking.k8s.io/service-cidr-finalizer" => {
            ("kube-controller-manager (servicecidrs controller)", KubeControllerManager)
        }
        "kubernetes.io/vac-protection" => {
            ("kube-controller-manager (vac-protection controller)", KubeControllerManager)
        }
        "service.kubernetes.io/load-balancer-cleanup" => {
            ("cloud-controller-manager (service controller)", CloudControllerManager)
        }
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

/// Static control-plane Pods in kube-system (`component: kube-controller-manager` label, or a
/// `kube-controller-manager-<node>` name), by component name.
#[derive(Default)]
pub struct ControlPlanePods {
    by_component: HashMap<&'static str, Vec<NodeId>>,
}

impl ControlPlanePods {
    pub fn new(g: &Graph) -> ControlPlanePods {
        let mut by_component: HashMap<&'static str, Vec<NodeId>> = HashMap::new();
        for (id, o) in g.in_namespace(Some("kube-system")) {
            if o.kind != "Pod" || o.group() != "" {
                continue;
            }
            for c in [Component::KubeControllerManager, Component::CloudControllerManager, Component::KubeScheduler] {
                let n = c.name();
                if o.label("component") == Some(n) || o.name.starts_with(&format!("{n}-")) {
                    by_component.entry(n).or_default().push(id);
                }
            }
        }
        ControlPlanePods { by_component }
    }
}

fn assumed_alive(why: &str) -> State {
    State { state: ControllerState::Alive, evidence: vec![format!("assumed alive ({why})")], since: None }
}

/// Liveness of a control-plane component: its kube-system Lease, else its static Pods, else
/// assumed alive because the control plane is not visible.
pub fn component_liveness(g: &Graph, pods: &ControlPlanePods, vis: &Visibility, c: Component, now: Timestamp) -> State {
    match c {
        Component::KubeApiserver => {
            return State {
                state: ControllerState::Alive,
                evidence: vec!["runs inside kube-apiserver, which served this data".into()],
                since: None,
            };
        }
        Component::CsiSidecar => {
            // judged per driver by `csi`, which `Liveness::finalizer` asks first
            return State {
                state: ControllerState::Unknown,
                evidence: vec!["a CSI sidecar: judged by its driver's controller and leases".into()],
                since: None,
            };
        }
        _ => {}
    }
    let name = c.name();
    if let Some(lease) = g.find("coordination.k8s.io", "Lease", Some("kube-system"), name).and_then(|id| g.object(id)) {
        let s = lease_status(lease, now);
        return State { state: s.state, evidence: vec![s.evidence], since: s.since };
    }
    let static_pods: Vec<_> = pods.by_component.get(name).into_iter().flatten().filter_map(|&p| g.object(p)).collect();
    if !static_pods.is_empty() {
        let ready: Vec<&str> = static_pods
            .iter()
            .filter(|p| !p.is_deleting() && p.condition("Ready").is_some_and(|r| r.is_true()))
            .map(|p| p.name.as_str())
            .collect();
        return if ready.is_empty() {
            let names: Vec<&str> = static_pods.iter().map(|p| p.name.as_str()).collect();
            State {
                state: ControllerState::Down,
                evidence: vec![format!(
                    "no kube-system/{name} lease; Pod kube-system/{} is not Ready",
                    names.join(", ")
                )],
                since: static_pods
                    .iter()
                    .filter_map(|p| p.condition("Ready").and_then(|r| r.last_transition_time))
                    .min(),
            }
        } else {
            State {
                state: ControllerState::Alive,
                evidence: vec![format!("no kube-system/{name} lease; Pod kube-system/{} is Ready", ready.join(", "))],
                since: None,
            }
        };
    }
    let unreadable = vis.unreadable(Source::Leases);
    if c == Component::CloudControllerManager {
        if let Some(e) = unreadable {
            return State {
                state: ControllerState::Unknown,
                evidence: vec![format!("cloud-controller-manager's lease could not be read (\"{e}\")")],
                since: None,
            };
        }
        // Managed control planes (GKE, EKS, AKS) run it out of sight; a cluster without a cloud
        // provider has none. Neither can be told from here, and a guess either way misleads.
        let kcm_visible =
            g.find("coordination.k8s.io", "Lease", Some("kube-system"), "kube-controller-manager").is_some();
        if let Some(provider) = super::managed::managed_cluster(g) {
            return State {
                state: ControllerState::Unknown,
                evidence: vec![format!(
                    "no kube-system/cloud-controller-manager lease or Pod, as expected: the nodes are {provider}'s, which runs it in the control plane, out of sight"
                )],
                since: None,
            };
        }
        let why = if kcm_visible {
            "though kube-controller-manager's is visible: the cloud controller may be absent, or run outside the cluster as managed control planes run it"
        } else {
            "and the control plane is not visible: it may run outside the cluster (GKE, EKS and AKS run it in their control plane) or be absent"
        };
        return State {
            state: ControllerState::Unknown,
            evidence: vec![format!("no kube-system/cloud-controller-manager lease or Pod, {why}")],
            since: None,
        };
    }
    if let Some(e) = unreadable {
        return assumed_alive(&format!("control plane not visible: leases could not be read, \"{e}\""));
    }
    assumed_alive("control plane not visible")
}

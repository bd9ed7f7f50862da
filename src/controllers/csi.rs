//! CSI finalizers: the driver they belong to, and whether that driver's controller is running,
//! judged as the sidecars themselves coordinate — never assumed.
//!
//! `external-attacher/<driver>` (the driver name with every non-alphanumeric replaced by `-`,
//! external-attacher's `GetFinalizerName`) and `external-provisioner.volume.kubernetes.io/finalizer`
//! are removed by sidecars of the driver's controller plugin. Evidence, in order: the
//! `CSIDriver` object; the sidecars' leader-election Leases (`external-attacher-leader-<driver>`,
//! the provisioner's `<driver>`, `external-resizer-<driver>`, `external-snapshotter-leader-<driver>`,
//! with the driver name sanitised the same way); the controller and node plugin workloads,
//! found through the leases' holders or by the driver's name (`disk-csi-controller`,
//! `disk-csi-node` for `disk.csi.example.com`). Alive: a fresh lease of the sidecar, or a ready
//! controller; Down: the controller exists but is not ready, or its lease is stale; Missing: all of
//! them absent while Pods, workloads and Leases were readable; Unknown otherwise, or when the
//! provider runs the driver's controller outside the cluster (`managed`).
//!
//! `snapshot.storage.kubernetes.io/…` finalizers belong to no driver: external-snapshotter's
//! common snapshot-controller removes them (its lease `snapshot-controller-leader`).

use super::lease::lease_status;
use super::managed::managed_csi_driver;
use super::workload::{Controller, describe, workload_state};
use super::{ControllerState, FinalizerOwner, Liveness};
use crate::graph::NodeId;

/// The sidecar that removes a CSI finalizer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Sidecar {
    Attacher,
    Provisioner,
    Snapshotter,
    /// Not a sidecar: external-snapshotter's common snapshot-controller, one per cluster, which
    /// removes the `snapshot.storage.kubernetes.io/…` finalizers (`pkg/utils/util.go`).
    SnapshotController,
}

impl Sidecar {
    fn of(finalizer: &str) -> Option<Sidecar> {
        if finalizer.starts_with("external-attacher/") {
            Some(Sidecar::Attacher)
        } else if finalizer == "external-provisioner.volume.kubernetes.io/finalizer"
            || finalizer == "provisioner.storage.kubernetes.io/cloning-protection"
        {
            Some(Sidecar::Provisioner)
        } else if finalizer.starts_with("external-snapshotter/") {
            Some(Sidecar::Snapshotter)
        } else if finalizer.starts_with("snapshot.storage.kubernetes.io/") {
            Some(Sidecar::SnapshotController)
        } else {
            None
        }
    }

    fn name(self) -> &'static str {
        match self {
            Sidecar::Attacher => "external-attacher",
            Sidecar::Provisioner => "external-provisioner",
            Sidecar::Snapshotter => "external-snapshotter",
            Sidecar::SnapshotController => "snapshot-controller",
        }
    }

    /// The leader-election Lease the sidecar takes for a driver (sanitised name).
    fn lease(self, driver: &str) -> String {
        match self {
            Sidecar::Attacher => format!("external-attacher-leader-{driver}"),
            Sidecar::Provisioner => driver.to_string(),
            Sidecar::Snapshotter => format!("external-snapshotter-leader-{driver}"),
            Sidecar::SnapshotController => "snapshot-controller-leader".into(),
        }
    }
}

/// A CSI driver's name as the sidecars put it into finalizer and Lease names.
fn sanitize(driver: &str) -> String {
    driver.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '-' }).collect()
}

/// Whether `finalizer` is one a CSI sidecar removes.
pub fn is_csi(finalizer: &str) -> bool {
    Sidecar::of(finalizer).is_some()
}

/// The driver a CSI finalizer on `object` belongs to: the object's own driver fields where they
/// agree with the finalizer, else a CSIDriver whose sanitised name the finalizer carries. The
/// second value is the sanitised name, always known for `external-attacher/…`.
fn driver_of(l: &Liveness<'_>, object: NodeId, finalizer: &str) -> (Option<String>, Option<String>) {
    let g = l.graph;
    let from_finalizer = finalizer.strip_prefix("external-attacher/").map(str::to_string);
    let own: Vec<String> = g
        .object(object)
        .into_iter()
        .flat_map(|o| ["/spec/csi/driver", "/spec/attacher", "/spec/driver"].into_iter().filter_map(|p| o.str_field(p)))
        .map(str::to_string)
        .collect();
    let registered: Vec<String> = g
        .of_kind("storage.k8s.io", "CSIDriver")
        .iter()
        .filter_map(|&id| g.object(id).map(|o| o.name.clone()))
        .collect();
    let driver = match &from_finalizer {
        Some(s) => own.iter().chain(&registered).find(|d| sanitize(d) == *s).cloned(),
        None => own.first().cloned(),
    };
    let sanitized = from_finalizer.or_else(|| driver.as_deref().map(sanitize));
    (driver, sanitized)
}

/// What the answer for a CSI finalizer depends on besides the finalizer: the object's driver.
/// The common snapshot-controller: its leader lease `snapshot-controller-leader`, else a
/// workload named `snapshot-controller`; GKE runs it in the control plane.
fn snapshot_controller(l: &Liveness<'_>, finalizer: &str) -> FinalizerOwner {
    let g = l.graph;
    let mut evidence = vec![format!("{finalizer} is removed by the CSI snapshot-controller (one per cluster)")];
    let owner = |removed_by: String, controller, evidence, workload, since| FinalizerOwner {
        removed_by: Some(removed_by),
        controller,
        evidence,
        workload,
        since,
        by_permission_only: false,
        added_by_person: None,
    };
    let lease = l.leases.named(g, |n| n == "snapshot-controller-leader").into_iter().next();
    let lease_state = lease.and_then(|id| g.object(id)).map(|o| lease_status(o, l.now));
    if let Some(st) = &lease_state {
        evidence.push(st.evidence.clone());
    }
    let holder = lease.and_then(|id| l.leases.holder_workload(id)).map(|(w, _)| w);
    let named = l.workloads.named_by(|n| n == "snapshot-controller").into_iter().map(|(w, _)| w).next();
    if let Some(w) = holder.or(named) {
        let wo = g.object(w).expect("workloads are observed");
        let ws = workload_state(g, &l.workloads, w);
        evidence.extend(ws.evidence);
        let fresh = lease_state.as_ref().is_some_and(|st| st.state == ControllerState::Alive);
        let state = if fresh { ControllerState::Alive } else { ws.state };
        let since = (state == ControllerState::Down)
            .then(|| lease_state.as_ref().and_then(|st| st.since).or(ws.since))
            .flatten();
        let c = Controller::of(wo);
        return owner(c.to_string(), state, evidence, Some(c), since);
    }
    if let Some(st) = lease_state {
        return owner("leader of lease snapshot-controller-leader".into(), st.state, evidence, None, st.since);
    }
    let state = if let Some(who) = super::managed::managed_cluster(g).filter(|p| *p == "GKE") {
        evidence
            .push(format!("no snapshot-controller in the cluster, as expected: {who} runs it in the control plane"));
        ControllerState::Unknown
    } else if let Some(spot) = l.visibility.blind_spot() {
        evidence.push(format!("no snapshot-controller found, but {spot}"));
        ControllerState::Unknown
    } else {
        evidence.push(
            "searched: Lease snapshot-controller-leader and workloads named snapshot-controller in every namespace — none found: the snapshot controller appears not to be installed".into(),
        );
        ControllerState::Missing
    };
    owner("CSI snapshot-controller".into(), state, evidence, None, None)
}

/// Who runs the controller of the object's CSI driver outside the cluster, if a managed control
/// plane does (`managed`), for a CSI finalizer.
pub(super) fn managed_driver(l: &Liveness<'_>, object: NodeId, finalizer: &str) -> Option<&'static str> {
    let (driver, _) = driver_of(l, object, finalizer);
    driver.as_deref().and_then(managed_csi_driver)
}

pub(super) fn driver_key(l: &Liveness<'_>, object: NodeId, finalizer: &str) -> String {
    let (driver, sanitized) = driver_of(l, object, finalizer);
    format!("{driver:?}\0{sanitized:?}")
}

pub(super) fn csi_owner(l: &Liveness<'_>, object: NodeId, finalizer: &str) -> FinalizerOwner {
    let g = l.graph;
    let sidecar = Sidecar::of(finalizer).expect("csi_owner is asked only about CSI finalizers");
    if sidecar == Sidecar::SnapshotController {
        return snapshot_controller(l, finalizer);
    }
    let (driver, sanitized) = driver_of(l, object, finalizer);
    let shown = driver.clone().or_else(|| sanitized.clone()).unwrap_or_else(|| "its CSI driver".into());
    let mut evidence = vec![format!("{finalizer} is removed by the {} sidecar of {shown}", sidecar.name())];
    let unowned = |controller, evidence| FinalizerOwner {
        removed_by: Some(format!("CSI {} of {shown}", sidecar.name())),
        controller,
        evidence,
        workload: None,
        since: None,
        by_permission_only: false,
        added_by_person: None,
    };
    let Some(s) = sanitized else {
        evidence.push(format!("the {} of this object is not recorded, so its driver cannot be told", "CSI driver"));
        return unowned(ControllerState::Unknown, evidence);
    };

    // 1. the CSIDriver object
    let (csidriver, unread) = registration(l, &s, &shown, &mut evidence);

    // 2. the sidecars' leases, in any namespace
    let SidecarLeases { names: lease_names, own: own_state, holders } = sidecar_leases(l, sidecar, &s, &mut evidence);

    // 3. the controller and node plugin workloads: the leases' holders, else named after the driver
    let prefix = driver.as_deref().and_then(|d| d.split('.').next()).map(|first| format!("{first}-csi"));
    let by_name: Vec<NodeId> = l
        .workloads
        .named_by(|n| n.contains(s.as_str()) || prefix.as_deref().is_some_and(|p| n.starts_with(p)))
        .into_iter()
        .filter(|&(_, how)| how == super::workload::NamedBy::Name)
        .map(|(w, _)| w)
        .collect();
    let is_node_plugin = |w: NodeId| g.observed_kind(w).is_some_and(|(_, k)| k == "DaemonSet");
    let mut controllers: Vec<NodeId> = holders.clone();
    controllers.extend(by_name.iter().copied().filter(|&w| !is_node_plugin(w) && !holders.contains(&w)));
    let node_plugins: Vec<NodeId> = by_name.iter().copied().filter(|&w| is_node_plugin(w)).collect();
    for &w in &node_plugins {
        if let Some(o) = g.object(w) {
            evidence.push(format!("node plugin {}", describe(o)));
        }
    }

    if let Some(&w) = controllers.first() {
        let wo = g.object(w).expect("controllers are observed workloads");
        let how = if holders.contains(&w) { "holds the driver's leases" } else { "is named after the driver" };
        evidence.push(format!("controller plugin {} {how}", describe(wo)));
        let ws = workload_state(g, &l.workloads, w);
        evidence.extend(ws.evidence);
        let fresh = own_state.as_ref().is_some_and(|(_, st)| st.state == ControllerState::Alive);
        let (state, since) = match ws.state {
            ControllerState::Alive => (ControllerState::Alive, None),
            _ if fresh => (ControllerState::Alive, None),
            ControllerState::Unknown if own_state.is_none() => (ControllerState::Unknown, None),
            _ => (ControllerState::Down, own_state.as_ref().and_then(|(_, st)| st.since).or(ws.since)),
        };
        let c = Controller::of(wo);
        return FinalizerOwner {
            removed_by: Some(format!("{c} ({})", sidecar.name())),
            controller: state,
            evidence,
            workload: Some(c),
            since,
            by_permission_only: false,
            added_by_person: None,
        };
    }
    if let Some((lease, st)) = own_state {
        evidence.push("no controller workload of the driver found; its lease decides".into());
        return FinalizerOwner {
            removed_by: Some(format!("leader of lease {lease}")),
            controller: st.state,
            evidence,
            workload: None,
            since: st.since,
            by_permission_only: false,
            added_by_person: None,
        };
    }
    if let Some(who) = driver.as_deref().and_then(managed_csi_driver) {
        evidence.push(format!("no controller of it in the cluster, as expected: {who}"));
        return unowned(ControllerState::Unknown, evidence);
    }
    if let Some(spot) = l.visibility.blind_spot() {
        evidence.push(format!("no controller found, but {spot}"));
        return unowned(ControllerState::Unknown, evidence);
    }
    if csidriver.is_none()
        && let Some(gap) = unread
    {
        evidence.push(format!("no controller found, but CSIDriver objects could not be read (\"{gap}\")"));
        return unowned(ControllerState::Unknown, evidence);
    }
    if csidriver.is_some() && !node_plugins.is_empty() {
        evidence.push(
            "the driver is registered and its node plugin runs, but no controller plugin or sidecar lease was found: it may run outside the cluster".into(),
        );
        return unowned(ControllerState::Unknown, evidence);
    }
    evidence.push(format!(
        "searched: CSIDriver {shown}, the sidecars' Leases ({}) in every namespace, and workloads named after {} — none found: the driver appears to be uninstalled",
        lease_names[1..].join(", "),
        prefix.as_deref().unwrap_or(s.as_str())
    ));
    unowned(ControllerState::Missing, evidence)
}

/// Whether the driver is registered (its CSIDriver object), said in `evidence`; and the gap
/// that may hide it, when its objects could not be read.
fn registration<'g>(
    l: &Liveness<'g>,
    s: &str,
    shown: &str,
    evidence: &mut Vec<String>,
) -> (Option<String>, Option<&'g crate::snapshot::Gap>) {
    let g = l.graph;
    let registered: Vec<String> = g
        .of_kind("storage.k8s.io", "CSIDriver")
        .iter()
        .filter_map(|&id| g.object(id).map(|o| o.name.clone()))
        .collect();
    let csidriver = registered.iter().find(|d| sanitize(d) == s).cloned();
    // a refused or failed read is no evidence that the driver is unregistered
    let unread = g.gaps().iter().find(|gap| gap.may_hide("storage.k8s.io", Some("csidrivers"), None));
    match (&csidriver, unread) {
        (Some(d), _) => evidence.push(format!("CSIDriver {d} is registered")),
        (None, Some(gap)) => evidence.push(format!("CSIDriver objects could not be read (\"{gap}\")")),
        (None, None) if registered.is_empty() => evidence.push("the snapshot holds no CSIDriver object".into()),
        (None, None) => evidence.push(format!("no CSIDriver {shown} is registered (only {})", registered.join(", "))),
    }
    (csidriver, unread)
}

/// The sidecars' leases of a driver, in any namespace, said in `evidence`.
struct SidecarLeases {
    /// The lease names looked for, this sidecar's first.
    names: [String; 5],
    /// This sidecar's own lease, `namespace/name`, and its freshness.
    own: Option<(String, super::lease::LeaseState)>,
    /// The workloads whose pods hold any of them.
    holders: Vec<NodeId>,
}

fn sidecar_leases(l: &Liveness<'_>, sidecar: Sidecar, s: &str, evidence: &mut Vec<String>) -> SidecarLeases {
    let g = l.graph;
    let own_lease = sidecar.lease(s);
    let lease_names = [
        own_lease.clone(),
        format!("external-attacher-leader-{s}"),
        s.to_string(),
        format!("external-resizer-{s}"),
        format!("external-snapshotter-leader-{s}"),
    ];
    let mut leases: Vec<NodeId> = g
        .of_kind("coordination.k8s.io", "Lease")
        .iter()
        .copied()
        .filter(|&id| g.object(id).is_some_and(|o| lease_names.contains(&o.name)))
        .collect();
    leases.sort_by_key(|&id| g.object(id).map(|o| o.name != own_lease));
    let mut own_state = None;
    let mut holders: Vec<NodeId> = Vec::new();
    for &id in &leases {
        let Some(lo) = g.object(id) else { continue };
        let st = lease_status(lo, l.now);
        let mine = lo.name == own_lease;
        evidence.push(if mine {
            st.evidence.clone()
        } else {
            format!("{} (another sidecar of the driver)", st.evidence)
        });
        if let Some((w, _)) = l.leases.holder_workload(id)
            && !holders.contains(&w)
        {
            holders.push(w);
        }
        if mine {
            own_state = Some((format!("{}/{}", lo.namespace_str(), lo.name), st));
        }
    }
    if leases.is_empty() {
        evidence.push(format!("no Lease {} (nor another sidecar's of the driver) in any namespace", own_lease));
    }
    SidecarLeases { names: lease_names, own: own_state, holders }
}

//! A pod the kubelet cannot finish (contract §4.3 `PodTerminationStalled`, and the time rules).
//!
//! Once a pod's grace period ends (`deletionTimestamp`), its kubelet kills what is left, tears
//! down its volumes and devices, and sends the final DELETE; only then does the pod leave (or,
//! with finalizers, only then does `deletionGracePeriodSeconds` read 0). A pod still there
//! with a grace period left in `deletionGracePeriodSeconds` long after that end, on a node whose
//! kubelet is alive, is one the kubelet cannot finish: stuck, finalizers or not. Before
//! `--stuck-after` has passed since the end of the grace period it is in progress: the kubelet
//! retries, and storage that comes back lets it finish by itself.
//!
//! The kubelet says why in its Warning events about the pod, quoted, never matched: by reason
//! (`pkg/kubelet/events`: `FailedKillPod`, `ExceededGracePeriod`, `FailedPreStopHook`,
//! `FailedUnMount`, `FailedUnmapDevice`), whatever else it reports quoted as it is. A call that
//! has not returned (an unmount of an unreachable NFS server) reports nothing: the answer says
//! so rather than guess. What the pod's teardown needs where the cluster shows it is named: the
//! CSI drivers of its volumes (and whether the driver is gone), the VolumeAttachments that keep
//! them on the node, the ResourceClaims it holds (and whether the DRA driver that allocated one
//! still has its kubelet plugin on the node, as the ResourceSlices it publishes there say).

use k8s_openapi::jiff::Timestamp;

use crate::controllers::{ControllerState, lease_state};
use crate::graph::{Graph, NodeId};
use crate::names::{LEASE, NODE_LEASE_NAMESPACE};
use crate::snapshot::Object;

use super::describe;
use super::events::{self, Event, Index};
use super::finding::{Finding, FindingCode, Related, Severity, Subject};
use super::remedy;
use super::step::{Command, Reach, Step};

/// Kubelet Warning events quoted at most, most recent first (one per reason).
const QUOTED: usize = 3;

/// The node a pod is bound to, as the kubelet's liveness goes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum NodeState {
    /// No kubelet will confirm the pod's deletion: the node is gone, NotReady, or its kubelet
    /// stopped renewing its lease (what is wrong, in words).
    Lost(String),
    /// Ready, and its node lease fresh where one was read: its kubelet runs (the evidence).
    Alive(String),
    /// No Ready condition was read: nothing is claimed either way.
    Unjudged,
}

/// The state of node `name` at `now`: its Ready condition, then its lease in kube-node-lease
/// (the kubelet's heartbeat, renewed every 10 s by default; the node lifecycle controller
/// marks the node NotReady only after its grace period, so a stale lease is seen first).
pub(super) fn node_state(g: &Graph, name: &str, now: Timestamp) -> NodeState {
    let Some(node) = g.find("", "Node", None, name).and_then(|n| g.object(n)) else {
        return NodeState::Lost(format!("its node {name} no longer exists"));
    };
    let ready = match node.condition("Ready") {
        Some(c) if c.is_true() => format!("{name} is Ready ({})", c.reason),
        Some(c) => return NodeState::Lost(format!("its node {name} is NotReady ({} {})", c.reason, c.message)),
        None => return NodeState::Unjudged,
    };
    let lease = g.find(LEASE.0, LEASE.1, Some(NODE_LEASE_NAMESPACE), name).and_then(|l| g.object(l));
    match lease.map(|l| lease_state(l, now)) {
        Some((ControllerState::Alive, evidence)) => NodeState::Alive(format!("{ready}; {}", evidence.join("; "))),
        Some((_, evidence)) => NodeState::Lost(format!(
            "its node {name} still reads Ready, but its kubelet has stopped renewing its heartbeat: {}",
            evidence.join("; ")
        )),
        // a read that failed there may hide it; else the kubelet has none (every kubelet
        // since 1.17 renews one): Ready is all there is to go on either way
        None if g.gaps().iter().any(|gap| gap.may_hide(LEASE.0, Some("leases"), Some(NODE_LEASE_NAMESPACE))) => {
            NodeState::Alive(format!("{ready} (its lease in kube-node-lease could not be read)"))
        }
        None => NodeState::Alive(format!("{ready} (it has no lease in kube-node-lease)")),
    }
}

/// When the kubelet of a live node stops what is left of the answer's pod: the end of its
/// grace period (`deletionTimestamp`) and the seconds until then, while it is ahead; `None`
/// for anything else (not a pod, not in graceful termination, its node not judged alive).
/// In progress reads with when it ends (contract §4.3.4).
pub fn kills_at(g: &Graph, d: &super::Diagnosis) -> Option<(Timestamp, i64)> {
    let pod = g.object(d.object).filter(|o| o.kind == "Pod" && o.group().is_empty())?;
    (pod.deletion_grace_period_seconds.unwrap_or(0) > 0).then_some(())?;
    let left = pod.grace_left(d.now)?;
    let node = pod.str_field("/spec/nodeName")?;
    matches!(node_state(g, node, d.now), NodeState::Alive(_)).then_some((pod.deletion_timestamp?, left))
}

/// `PodTerminationStalled` for pod `x`, bound to `node_name` whose kubelet is alive (`alive`:
/// the evidence), when its grace period ended more than `stuck_after` seconds before `now`.
pub(super) fn stalled(
    g: &Graph,
    idx: &Index,
    x: NodeId,
    node_name: &str,
    alive: &str,
    now: Timestamp,
    stuck_after: i64,
) -> Option<Finding> {
    let pod = g.object(x)?;
    (pod.deletion_grace_period_seconds.unwrap_or(0) > 0).then_some(())?;
    let ended = pod.deletion_timestamp?;
    let past = now.as_second() - ended.as_second();
    if past <= stuck_after {
        return None;
    }
    let reports = kubelet_reports(idx, pod);
    let waits = WaitsOn::of(g, pod, node_name);
    let mut message = format!(
        "{}'s grace period ended at {ended} ({} ago, longer than --stuck-after {}) and it is still there, on {node_name}, whose kubelet is alive ({alive}): the kubelet cannot finish it",
        describe(g, x),
        crate::age::human(past),
        crate::age::human(stuck_after),
    );
    if reports.is_empty() {
        message.push_str(&format!(
            ". The kubelet has reported no Warning about it since the deletion (a call that has not returned, such as an unmount of an unreachable NFS server, reports nothing; Events also expire, kube-apiserver --event-ttl): its log on {node_name} says what it waits for"
        ));
    } else {
        let quoted: Vec<String> = reports.iter().map(|e| events::describe_event(e, now)).collect();
        message.push_str(&format!(". The kubelet reports: {}", quoted.join("; ")));
    }
    for w in &waits.words {
        message.push_str(&format!(". {w}"));
    }
    let node = g.find("", "Node", None, node_name);
    let related = node.into_iter().chain(waits.objects.iter().copied()).map(Related::Node).collect();
    Some(Finding {
        code: FindingCode::PodTerminationStalled,
        severity: Severity::Error,
        object: x,
        related,
        message,
        remedy: steps(g, x, node_name, &reports, &waits, past),
        subject: Subject::Related,
        cannot_tell: false,
    })
}

/// The kubelet's Warning events about the pod since its deletion was requested, one per
/// reason (its most recent), most recent first.
fn kubelet_reports<'i>(idx: &'i Index, pod: &Object) -> Vec<&'i Event> {
    let requested = pod.deletion_requested_at();
    let mut out: Vec<&Event> = Vec::new();
    for e in idx.warnings(&pod.uid) {
        let by_kubelet = e.reporting_controller.as_deref() == Some("kubelet");
        let since_deletion = matches!((e.last_seen, requested), (Some(t), Some(r)) if t >= r);
        if by_kubelet && since_deletion && !out.iter().any(|o| o.reason == e.reason) {
            out.push(e);
        }
    }
    out.truncate(QUOTED);
    out
}

/// What the kubelet's reasons say about the teardown: the runtime cannot stop a container,
/// or a volume will not come off the node.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Cause {
    kill: bool,
    unmount: bool,
}

impl Cause {
    fn of(reports: &[&Event]) -> Cause {
        let is = |e: &&&Event, reasons: &[&str]| reasons.iter().any(|r| e.reason.eq_ignore_ascii_case(r));
        Cause {
            kill: reports.iter().any(|e| is(&e, &["FailedKillPod", "ExceededGracePeriod"])),
            unmount: reports.iter().any(|e| is(&e, &["FailedUnMount", "FailedUnmapDevice"])),
        }
    }
}

/// What the pod's teardown needs, where the cluster shows it.
#[derive(Default)]
struct WaitsOn {
    /// VolumeAttachments, PersistentVolumes and ResourceClaims, for `related`.
    objects: Vec<NodeId>,
    /// Each in words.
    words: Vec<String>,
    /// The CSI drivers of its volumes that are gone (no CSIDriver object while others were read).
    drivers_gone: Vec<String>,
    /// The DRA drivers of its claims whose kubelet plugin on the node is gone.
    dra_gone: Vec<String>,
}

impl WaitsOn {
    fn of(g: &Graph, pod: &Object, node: &str) -> WaitsOn {
        let mut w = WaitsOn::default();
        let csidrivers_read = !g.of_kind("storage.k8s.io", "CSIDriver").is_empty();
        for (pv, driver) in csi_volumes(g, pod) {
            let gone = csidrivers_read && g.find("storage.k8s.io", "CSIDriver", None, &driver).is_none();
            let attachments: Vec<NodeId> = g
                .of_kind("storage.k8s.io", "VolumeAttachment")
                .iter()
                .copied()
                .filter(|&va| {
                    g.object(va).is_some_and(|o| {
                        o.str_field("/spec/nodeName") == Some(node)
                            && o.str_field("/spec/source/persistentVolumeName") == Some(g.identity(pv).name)
                    })
                })
                .collect();
            let held =
                attachments.iter().map(|&a| format!("VolumeAttachment {}", g.identity(a).name)).collect::<Vec<_>>();
            let mut line = format!("Its volume {} is served by CSI driver {driver}", describe(g, pv));
            if gone {
                line.push_str(&format!(", which is gone (no CSIDriver {driver}): nothing on {node} can unmount it"));
                w.drivers_gone.push(driver.clone());
            }
            if !held.is_empty() {
                line.push_str(&format!("; {} keeps it attached to {node}", held.join(", ")));
            }
            w.words.push(line);
            w.objects.push(pv);
            w.objects.extend(attachments);
        }
        let claims = resource_claims(g, pod);
        if !claims.is_empty() {
            let names: Vec<String> = claims.iter().map(|&c| describe(g, c)).collect();
            w.words.push(format!(
                "It holds {}: the kubelet unprepares its devices through the claim's DRA driver plugin on {node} before the pod can go",
                names.join(", ")
            ));
            for &c in &claims {
                for driver in claim_drivers(g, c).into_iter().filter(|d| plugin_gone(g, d, node)) {
                    w.words.push(format!(
                        "{} was allocated by DRA driver {driver}, which publishes ResourceSlices for other nodes but none for {node}: its kubelet plugin there is gone, and nothing unprepares the claim's devices",
                        describe(g, c)
                    ));
                    w.dra_gone.push(driver);
                }
            }
            w.objects.extend(claims);
        }
        w
    }
}

/// The DRA drivers that allocated claim `c`'s devices (`status.allocation.devices.results`).
fn claim_drivers(g: &Graph, c: NodeId) -> Vec<String> {
    let mut out: Vec<String> = g
        .object(c)
        .and_then(|o| o.field("/status/allocation/devices/results"))
        .and_then(|v| v.as_array())
        .into_iter()
        .flatten()
        .filter_map(|r| r.get("driver")?.as_str().map(String::from))
        .collect();
    out.sort();
    out.dedup();
    out
}

/// Whether DRA driver `driver` publishes node-local ResourceSlices (`spec.nodeName`) for other
/// nodes but none for `node`: its kubelet plugin, which publishes them, is not running there. A
/// driver whose slices are not node-local (network-attached devices) proves nothing either way.
fn plugin_gone(g: &Graph, driver: &str, node: &str) -> bool {
    let nodes: Vec<&str> = g
        .of_kind("resource.k8s.io", "ResourceSlice")
        .iter()
        .filter_map(|&s| g.object(s))
        .filter(|s| s.str_field("/spec/driver") == Some(driver))
        .filter_map(|s| s.str_field("/spec/nodeName"))
        .collect();
    !nodes.is_empty() && !nodes.contains(&node)
}

/// The pod's PersistentVolumes served by a CSI driver, through its claims, with the driver.
fn csi_volumes(g: &Graph, pod: &Object) -> Vec<(NodeId, String)> {
    let ns = pod.namespace.as_deref();
    let volumes = pod.field("/spec/volumes").and_then(|v| v.as_array()).cloned().unwrap_or_default();
    volumes
        .iter()
        .filter_map(|v| v.pointer("/persistentVolumeClaim/claimName")?.as_str())
        .filter_map(|claim| g.find("", "PersistentVolumeClaim", ns, claim).and_then(|c| g.object(c)))
        .filter_map(|pvc| g.find("", "PersistentVolume", None, pvc.str_field("/spec/volumeName")?))
        .filter_map(|pv| Some((pv, g.object(pv)?.str_field("/spec/csi/driver")?.to_string())))
        .collect()
}

/// The ResourceClaims the pod holds (`status.resourceClaimStatuses`, then the claims its spec
/// names directly), those the input has.
fn resource_claims(g: &Graph, pod: &Object) -> Vec<NodeId> {
    let ns = pod.namespace.as_deref();
    let names = |pointer: &str| -> Vec<String> {
        pod.field(pointer)
            .and_then(|v| v.as_array())
            .into_iter()
            .flatten()
            .filter_map(|c| c.get("resourceClaimName")?.as_str().map(String::from))
            .collect()
    };
    let mut out: Vec<NodeId> = names("/status/resourceClaimStatuses")
        .into_iter()
        .chain(names("/spec/resourceClaims"))
        .filter_map(|n| g.find("resource.k8s.io", "ResourceClaim", ns, &n))
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}

/// Safest first: what the kubelet and the runtime say; what the teardown waits on, restored;
/// the node drained and rebooted; the force delete last (it frees the name, not the node).
fn steps(g: &Graph, x: NodeId, node: &str, reports: &[&Event], waits: &WaitsOn, past: i64) -> Vec<Step> {
    let id = g.identity(x);
    let runtime = g
        .find("", "Node", None, node)
        .and_then(|n| g.object(n))
        .and_then(|n| n.str_field("/status/nodeInfo/containerRuntimeVersion"))
        .and_then(|v| v.split_once("://").map(|(name, _)| name.to_string()))
        .unwrap_or_else(|| "container runtime".into());
    let since = super::progress::go_duration(past + 60);
    let mut out = vec![
        Step::run(
            Reach::Inspect,
            format!("Read what the kubelet reported about {} (its events):", describe(g, x)),
            Command::kubectl(["get"])
                .arg("events")
                .namespace(id.namespace)
                .flag("--field-selector", format!("involvedObject.uid={}", id.uid))
                .flag("--sort-by", ".lastTimestamp"),
        ),
        Step::advice(
            Reach::Inspect,
            format!(
                "On {node}, read the kubelet's and {runtime}'s logs about the pod since its grace period ended (journalctl -u kubelet -u {runtime} --since=-{since} | grep {}), and look for its processes in uninterruptible sleep (state D, ps -eo pid,stat,wchan,cmd): they wait on storage, and no signal ends them.",
                id.uid
            ),
        ),
    ];
    let cause = Cause::of(reports);
    for driver in &waits.drivers_gone {
        out.push(Step::advice(
            Reach::Restore,
            format!("Reinstall CSI driver {driver} (its node plugin on {node}): the kubelet then unmounts the volume and finishes the pod by itself."),
        ));
    }
    for driver in &waits.dra_gone {
        out.push(Step::advice(
            Reach::Restore,
            format!("Bring back DRA driver {driver}'s kubelet plugin on {node} (its DaemonSet's pod there): the kubelet then unprepares the claim's devices and finishes the pod by itself."),
        ));
    }
    if cause.unmount || cause.kill || reports.is_empty() {
        out.push(Step::advice(
            Reach::Restore,
            format!(
                "Bring back what the pod's volumes or devices depend on (an NFS or iSCSI server, a CSI or DRA node plugin on {node}): the kubelet retries, and finishes the pod by itself once the teardown returns."
            ),
        ));
    }
    out.push(Step::run(
        Reach::Disrupt,
        format!(
            "If nothing brings it back: drain {node} and reboot it (a process stuck in the kernel ends only with the node); its other pods move first."
        ),
        Command::kubectl(["drain"]).arg(node).switch("--ignore-daemonsets"),
    ));
    out.push(Step::run(
        Reach::Destructive,
        format!(
            "Last resort: force the pod's deletion. This removes only the API object: its processes, mounts and devices stay on {node} until its kubelet cleans them up, and a StatefulSet may start the replacement while this one still holds its volume."
        ),
        remedy::on_object(g, x, ["delete"]).flag("--grace-period", "0").switch("--force"),
    ));
    out
}

#[cfg(test)]
#[path = "kubelet_tests.rs"]
mod tests;

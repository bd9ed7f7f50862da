//! Built-in controllers whose condition already holds (issue 11; contract §4.3
//! `ControllerStalled`). Each built-in finalizer is removed by its controller once something
//! is true of the cluster; where the input shows it is already true, and the finalizer has
//! stayed well past the time the controller takes, the controller missed the event.
//!
//! The conditions follow the controllers' own code:
//! - `kubernetes.io/pvc-protection` (`pvc_protection_controller.go`, `podUsesPVC`): a pod uses
//!   the claim only once scheduled (`spec.nodeName` set). A `persistentVolumeClaim` volume
//!   counts whatever the pod's phase or deletion state, for as long as the pod exists (a
//!   Succeeded pod still holds it; kubernetes#92598, the change in #123320 was not merged). A
//!   generic ephemeral volume (`<pod>-<volume>`, owned by the pod) counts until the pod is shut
//!   down (deletionTimestamp with a zero grace period).
//! - `kubernetes.io/pv-protection` (`pv_protection_controller.go`, `isBeingUsed`): the volume's
//!   `status.phase` is not `Bound`.
//! - `batch.kubernetes.io/job-tracking` (`job_controller.go`, `syncOrphanPod`,
//!   `canRemoveFinalizer`): the pod Succeeded or Failed, or it has no controller reference, or
//!   its batch/v1 Job controller is gone (not found by name, or another uid) or being deleted.
//!   A pod controlled by anything but a batch/v1 Job never loses it to the Job controller.
//! - `customresourcecleanup.apiextensions.k8s.io` (`crd_finalizer.go`): no instance remains.
//! - a namespace's `kubernetes` (`namespaced_resources_deleter.go`): nothing remains in it.
//!
//! Grace times ([`grace`]): these controllers act on the watch event within seconds; a failed
//! update is retried through client-go's default controller rate limiter (5 ms, doubling per
//! failure), which passes five minutes only after about sixteen failures in a row; the CRD
//! finalizer polls for its instances' removal for at most a minute before it requeues. The
//! namespace controller also resyncs every namespace every five minutes
//! (`--namespace-sync-period`), so it gets two of those.

use crate::names::{CRD_CLEANUP, JOB_TRACKING, PV_PROTECTION, PVC_PROTECTION};

use k8s_openapi::jiff::Timestamp;

use super::shared::Shared;
use crate::graph::{Graph, NodeId};
use crate::snapshot::Object;

use super::finding::{Finding, FindingCode, Related, Severity, Subject};
use super::remedy;
use super::step::{Command, Effect, Reach, Sends, Step};
use super::{describe, grounds};
use crate::admission::Operation;

/// How long a built-in finalizer may stay after its condition holds before the answer calls
/// its controller stalled (see the module documentation for where these come from).
pub fn grace(finalizer: &str) -> i64 {
    match finalizer {
        "kubernetes" => 600,
        _ => 300,
    }
}

/// The finalizers this module judges on object `x`: the built-in ones, and the CSI
/// external-attacher's on a PersistentVolume (its condition is as plain: no VolumeAttachment
/// names the volume).
pub fn judged(g: &Graph, x: NodeId, finalizer: &str) -> bool {
    matches!(finalizer, PVC_PROTECTION | PV_PROTECTION | JOB_TRACKING | CRD_CLEANUP)
        || attacher_on_volume(g, x, finalizer)
}

/// `external-attacher/<driver>` on a PersistentVolume.
fn attacher_on_volume(g: &Graph, x: NodeId, finalizer: &str) -> bool {
    finalizer.starts_with("external-attacher/") && g.observed_kind(x) == Some(("", "PersistentVolume"))
}

/// VolumeAttachment: a CSI volume's attachment to a node.
const VOLUME_ATTACHMENT: (&str, &str) = ("storage.k8s.io", "VolumeAttachment");

/// What the input says about a built-in finalizer's condition.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Judgement {
    /// It holds: the controller has nothing left to wait for. `since`: when it came to hold,
    /// where the input records it.
    Holds {
        /// What holds, in words (`no pod uses the claim`).
        what: String,
        /// When it came to hold, where the input records it.
        since: Option<Timestamp>,
    },
    /// It does not hold yet: the controller waits for `on`. `stuck`: nothing in flight will
    /// change that without someone acting. `remedy`: what would.
    Waits {
        /// The objects it waits for (the pods that still use the claim, …).
        on: Vec<NodeId>,
        /// What it waits for, in words.
        what: String,
        /// Nothing in flight will change it without someone acting.
        stuck: bool,
        /// What would change it.
        remedy: Vec<Step>,
    },
    /// The input cannot tell: the absence it would rest on was not read.
    Blind {
        /// What would have to be known, in words.
        what: String,
        /// Why it is not (the read that was missing).
        why: String,
        /// The command that would settle it.
        check: Step,
    },
    /// Its controller will never remove it here (job-tracking on a pod no Job controls).
    Never {
        /// Why, in words.
        what: String,
    },
}

/// Judges one built-in finalizer on one object; `None` for finalizers not modelled here.
pub fn judge(g: &Graph, shared: &Shared, x: NodeId, finalizer: &str) -> Option<Judgement> {
    let o = g.object(x)?;
    Some(match finalizer {
        PVC_PROTECTION => claim(g, shared, o),
        PV_PROTECTION => volume(g, shared, o),
        f if attacher_on_volume(g, x, f) => attached_volume(g, o),
        JOB_TRACKING => job_pod(g, x, o),
        CRD_CLEANUP => crd(g, o),
        _ => return None,
    })
}

/// The pods that keep a claim in use, by the PVC-protection controller's rule (`podUsesPVC`),
/// among the candidates the namespace's claim index names (built once per namespace).
pub fn claim_users(g: &Graph, shared: &Shared, pvc: &Object) -> Vec<NodeId> {
    shared
        .claim_users(g, pvc.namespace.as_deref(), &pvc.name)
        .into_iter()
        .filter(|&id| g.object(id).is_some_and(|p| pod_uses_claim(p, pvc)))
        .collect()
}

fn pod_uses_claim(pod: &Object, pvc: &Object) -> bool {
    // only scheduled pods: the kubelet will not start a pod on a claim being deleted
    if pod.str_field("/spec/nodeName").is_none_or(str::is_empty) {
        return false;
    }
    let shut_down = pod.is_deleting() && pod.deletion_grace_period_seconds == Some(0);
    let Some(vols) = pod.field("/spec/volumes").and_then(|v| v.as_array()) else { return false };
    vols.iter().any(|v| {
        if v.pointer("/persistentVolumeClaim/claimName").and_then(|c| c.as_str()) == Some(pvc.name.as_str()) {
            return true;
        }
        // generic ephemeral volume: the claim `<pod>-<volume>`, controlled by this pod
        if v.get("ephemeral").is_some() && !shut_down {
            let vol = v.get("name").and_then(|n| n.as_str()).unwrap_or("");
            return format!("{}-{vol}", pod.name) == pvc.name
                && pvc.owner_references.iter().any(|r| r.is_controller() && r.uid == pod.uid);
        }
        false
    })
}

fn claim(g: &Graph, shared: &Shared, pvc: &Object) -> Judgement {
    let users = claim_users(g, shared, pvc);
    if users.is_empty() {
        if let Some(why) = grounds::blind_to(g, "", "Pod", pvc.namespace.as_deref()) {
            return Judgement::Blind {
                what: "no pod in the input uses the claim".into(),
                why,
                check: Step::run(
                    Reach::Inspect,
                    "See which pods of the namespace still mount the claim (the PVC-protection controller keeps it while a scheduled pod that exists names it).",
                    Command::kubectl(["get"]).arg("pods").namespace(pvc.namespace.as_deref()).flag("-o", "wide"),
                ),
            };
        }
        return Judgement::Holds { what: "no pod uses the claim".into(), since: None };
    }
    let mut remedy = Vec::new();
    let mut stuck = false;
    let mut parts = Vec::new();
    for &u in &users {
        let Some(p) = g.object(u) else { continue };
        let phase = p.str_field("/status/phase").unwrap_or("Unknown");
        if p.is_deleting() {
            parts.push(format!("{} ({phase}, being deleted)", describe(g, u)));
            continue;
        }
        // a pod nobody deletes keeps the claim forever
        stuck = true;
        let finished = matches!(phase, "Succeeded" | "Failed");
        parts.push(format!("{} ({phase}{})", describe(g, u), if finished { ", finished but not deleted" } else { "" }));
        remedy.push(stop_pod(g, u, finished));
    }
    Judgement::Waits { on: users, what: format!("the claim is still used by {}", parts.join(", ")), stuck, remedy }
}

/// The steps that stop the pods using a claim (each by its workload, which would recreate it).
fn stop_users(g: &Graph, users: &[NodeId]) -> Vec<Step> {
    users
        .iter()
        .filter_map(|&u| {
            let p = g.object(u).filter(|p| !p.is_deleting())?;
            let finished = matches!(p.str_field("/status/phase"), Some("Succeeded" | "Failed"));
            Some(stop_pod(g, u, finished))
        })
        .collect()
}

/// Stopping one pod that uses a claim: its workload scaled to zero or stopped, else the pod deleted.
fn stop_pod(g: &Graph, u: NodeId, finished: bool) -> Step {
    let name = &g.identity(u).name;
    match workload_of(g, u) {
        Some(w) if !finished && scalable(g, w) => Step::run(
            Reach::Disrupt,
            format!(
                "Scale {} to zero: its pod {name} uses the claim, and deleting only the pod would not do (the controller recreates it at once).",
                describe(g, w),
            ),
            remedy::on_object(g, w, ["scale"]).flag("--replicas", "0"),
        ),
        Some(w) if !finished => Step::run(
            Reach::Disrupt,
            format!("Stop {} (it recreates {name}, which uses the claim).", describe(g, w)),
            remedy::inspect(g, w),
        ),
        _ => Step::run(
            Reach::Disrupt,
            format!(
                "Delete {}{}: the claim stays in use for as long as the pod exists.",
                describe(g, u),
                if finished { ", which has finished" } else { "" }
            ),
            remedy::on_object(g, u, ["delete"]),
        ),
    }
}

/// The workload that controls a pod: ReplicaSet → Deployment, StatefulSet, DaemonSet,
/// ReplicationController, Job → CronJob; `None` for a bare pod or an absent controller.
pub fn workload_of(g: &Graph, pod: NodeId) -> Option<NodeId> {
    let mut cur = g.controller_of(pod).filter(|&c| g.object(c).is_some())?;
    for _ in 0..2 {
        let (group, kind) = g.observed_kind(cur)?;
        let climbs = matches!((group, kind), ("apps", "ReplicaSet") | ("batch", "Job"));
        match g.controller_of(cur).filter(|&c| g.object(c).is_some()) {
            Some(up) if climbs => cur = up,
            _ => break,
        }
    }
    Some(cur)
}

fn scalable(g: &Graph, w: NodeId) -> bool {
    matches!(
        g.observed_kind(w),
        Some(("apps", "Deployment" | "StatefulSet" | "ReplicaSet") | ("", "ReplicationController"))
    )
}

fn volume(g: &Graph, shared: &Shared, pv: &Object) -> Judgement {
    let Some(phase) = pv.str_field("/status/phase") else {
        return Judgement::Blind {
            what: "the volume's phase".into(),
            why: "the input holds the PersistentVolume without its status".into(),
            check: Step::run(
                Reach::Inspect,
                "Read the volume's status.phase.",
                Command::kubectl(["get"]).arg("persistentvolumes").arg(pv.name.as_str()).flag("-o", "yaml"),
            ),
        };
    };
    if phase != "Bound" {
        let since = pv.str_field("/status/lastPhaseTransitionTime").and_then(|t| t.parse().ok());
        return Judgement::Holds { what: format!("the volume is no longer bound (phase {phase})"), since };
    }
    let ns = pv.str_field("/spec/claimRef/namespace");
    let name = pv.str_field("/spec/claimRef/name").unwrap_or("");
    let Some(c) = g.find("", "PersistentVolumeClaim", ns, name) else {
        return Judgement::Waits {
            on: Vec::new(),
            what: format!(
                "the volume is still Bound (phase Bound) to claim {}/{name}, which the input does not hold; the persistent volume controller marks it Released once the claim is gone",
                ns.unwrap_or("")
            ),
            stuck: false,
            remedy: Vec::new(),
        };
    };
    let claim = g.object(c).expect("found objects are observed");
    if claim.is_deleting() {
        // the claim goes first (its own pvc-protection is judged on it), then the volume is Released
        return Judgement::Waits {
            on: vec![c],
            what: format!("the volume is still Bound to {}, which is being deleted", describe(g, c)),
            stuck: false,
            remedy: vec![Step::run(
                Reach::Inspect,
                format!("{} must go first.", describe(g, c)),
                remedy::inspect(g, c),
            )],
        };
    }
    bound_in_use(g, shared, pv, c, claim)
}

/// A volume deleted while its claim is Bound and nobody deletes the claim: the PV-protection
/// controller is right to wait, and nothing will unbind the claim on its own, so the deletion
/// is stuck until someone stops what uses the claim and deletes it.
fn bound_in_use(g: &Graph, shared: &Shared, pv: &Object, c: NodeId, claim: &Object) -> Judgement {
    let users = claim_users(g, shared, claim);
    let used_by: Vec<String> = users
        .iter()
        .map(|&u| match workload_of(g, u) {
            Some(w) => format!("{} of {}", describe(g, u), describe(g, w)),
            None => describe(g, u),
        })
        .collect();
    let use_text = if used_by.is_empty() {
        "no pod in the input uses it".to_string()
    } else {
        format!("it is used by {}", used_by.join(", "))
    };
    let reclaim = pv.str_field("/spec/persistentVolumeReclaimPolicy").unwrap_or("Retain");
    let what = format!(
        "the volume is still Bound to {}, which nothing is deleting ({use_text}); the claim keeps it bound for as long as it exists, so the deletion finishes only once the claim is gone",
        describe(g, c)
    );
    let mut steps = vec![
        Step::run(
            Reach::Inspect,
            format!(
                "See what uses {} (Used By): the volume goes only after the claim does. Meanwhile the volume keeps serving it, and its data is safe.",
                describe(g, c)
            ),
            remedy::on_object(g, c, ["describe"]),
        ),
        Step::advice(
            Reach::Inspect,
            format!(
                "Do not remove {PV_PROTECTION} by hand: that takes the volume away from a claim that is bound{}.",
                if used_by.is_empty() { "" } else { " and mounted" }
            ),
        ),
    ];
    steps.extend(stop_users(g, &users));
    steps.push(Step::run(
        Reach::Destructive,
        format!(
            "If the volume really is to go, delete the claim once no pod uses it (reclaim policy {reclaim}: {}); the volume is then Released and goes.",
            if reclaim == "Delete" {
                "the disk is deleted with it"
            } else {
                "the disk itself survives, to be bound again through a new PersistentVolume"
            }
        ),
        remedy::on_object(g, c, ["delete"]),
    ));
    Judgement::Waits { on: vec![c], what, stuck: true, remedy: steps }
}

/// The external-attacher's finalizer on a PersistentVolume: removed once no VolumeAttachment
/// names the volume (the attachment goes when the volume is detached, after its pods leave the
/// node).
fn attached_volume(g: &Graph, pv: &Object) -> Judgement {
    let attachments: Vec<NodeId> = g
        .of_kind(VOLUME_ATTACHMENT.0, VOLUME_ATTACHMENT.1)
        .iter()
        .copied()
        .filter(|&a| {
            g.object(a).and_then(|o| o.str_field("/spec/source/persistentVolumeName")) == Some(pv.name.as_str())
        })
        .collect();
    if attachments.is_empty() {
        if let Some(why) = grounds::blind_to(g, VOLUME_ATTACHMENT.0, VOLUME_ATTACHMENT.1, None) {
            return Judgement::Blind {
                what: "no VolumeAttachment in the input names the volume".into(),
                why,
                check: Step::run(
                    Reach::Inspect,
                    "See whether a VolumeAttachment still names the volume.",
                    Command::kubectl(["get"]).arg("volumeattachments.storage.k8s.io"),
                ),
            };
        }
        return Judgement::Holds { what: "no VolumeAttachment names the volume".into(), since: None };
    }
    let parts: Vec<String> = attachments
        .iter()
        .filter_map(|&a| {
            let o = g.object(a)?;
            Some(format!("{} (node {})", describe(g, a), o.str_field("/spec/nodeName").unwrap_or("unknown")))
        })
        .collect();
    Judgement::Waits {
        what: format!(
            "the volume is still attached: {} names it; it is detached once no pod on that node uses it",
            parts.join(", ")
        ),
        on: attachments,
        stuck: false,
        remedy: Vec::new(),
    }
}

fn job_pod(g: &Graph, x: NodeId, pod: &Object) -> Judgement {
    let phase = pod.str_field("/status/phase").unwrap_or("");
    let Some(r) = pod.owner_references.iter().find(|r| r.is_controller()) else {
        return Judgement::Holds {
            what: "the pod has no controller: the Job controller releases orphaned pods".into(),
            since: None,
        };
    };
    if r.api_version != "batch/v1" || r.kind != "Job" {
        if matches!(phase, "Succeeded" | "Failed") {
            return Judgement::Never {
                what: format!(
                    "the pod is controlled by {} {}, not by a batch/v1 Job: the Job controller does not release it",
                    r.kind, r.name
                ),
            };
        }
        return Judgement::Never {
            what: format!("the pod is controlled by {} {}, not by a batch/v1 Job", r.kind, r.name),
        };
    }
    if matches!(phase, "Succeeded" | "Failed") {
        let since = finished_at(pod);
        return Judgement::Holds { what: format!("the pod has finished (phase {phase})"), since };
    }
    let job = g.controller_of(x).filter(|&j| g.object(j).is_some());
    match job {
        None => {
            if let Some(why) = grounds::blind_to(g, "batch", "Job", pod.namespace.as_deref()) {
                return Judgement::Blind {
                    what: format!("its Job {} is not in the input", r.name),
                    why,
                    check: Step::run(
                        Reach::Inspect,
                        format!("See whether Job {} still exists.", r.name),
                        Command::kubectl(["get"])
                            .arg("jobs.batch")
                            .arg(r.name.as_str())
                            .namespace(pod.namespace.as_deref()),
                    ),
                };
            }
            Judgement::Holds { what: format!("its Job {} is gone", r.name), since: None }
        }
        Some(j) if g.object(j).is_some_and(Object::is_deleting) => {
            Judgement::Holds { what: format!("its Job {} is being deleted", describe(g, j)), since: None }
        }
        Some(j) => Judgement::Waits {
            on: Vec::new(),
            what: format!(
                "the pod has not finished (phase {}) and {} still tracks it",
                if phase.is_empty() { "unknown" } else { phase },
                describe(g, j)
            ),
            stuck: false,
            remedy: vec![Step::run(
                Reach::Inspect,
                format!("See how {} is doing.", describe(g, j)),
                Command::kubectl(["describe"])
                    .arg("jobs.batch")
                    .arg(g.identity(j).name)
                    .namespace(pod.namespace.as_deref()),
            )],
        },
    }
}

/// When a pod finished: its containers' latest `finishedAt`, else its Ready condition's
/// last transition.
fn finished_at(pod: &Object) -> Option<Timestamp> {
    let containers = pod.field("/status/containerStatuses").and_then(|v| v.as_array());
    let latest = containers
        .into_iter()
        .flatten()
        .filter_map(|c| c.pointer("/state/terminated/finishedAt")?.as_str()?.parse::<Timestamp>().ok())
        .max();
    latest.or_else(|| pod.condition("Ready").and_then(|c| c.last_transition_time))
}

fn crd(g: &Graph, crd: &Object) -> Judgement {
    let group = crd.str_field("/spec/group").unwrap_or("");
    let kind = crd.str_field("/spec/names/kind").unwrap_or("");
    let instances: Vec<NodeId> = g.of_kind(group, kind).to_vec();
    if instances.is_empty() {
        if let Some(why) = grounds::blind_to(g, group, kind, None) {
            return Judgement::Blind {
                what: format!("no {kind} is in the input"),
                why,
                check: Step::run(
                    Reach::Inspect,
                    format!("List the remaining {kind} objects."),
                    Command::kubectl(["get"]).arg(crd.name.as_str()).switch("-A"),
                ),
            };
        }
        return Judgement::Holds { what: format!("no {kind} remains"), since: None };
    }
    Judgement::Waits {
        what: format!("the CRD finalizer deletes every {kind} first; {} instance(s) remain", instances.len()),
        on: instances,
        stuck: false,
        remedy: Vec::new(),
    }
}

/// The namespace's `kubernetes` finalizer: nothing is left in it. `since`: when its
/// `NamespaceContentRemaining` condition turned False, where recorded.
pub fn namespace_empty(g: &Graph, ns: &Object) -> Judgement {
    // the controller's own count says something remains: nothing read is no proof of nothing
    // there (contract §4.3.4); quoted, as it words it
    let remaining = ["NamespaceContentRemaining", "NamespaceFinalizersRemaining"]
        .into_iter()
        .find_map(|t| ns.condition(t).filter(|c| c.is_true()).map(|c| (t, c)))
        .map(|(t, c)| format!("its {t} condition says otherwise ({}: {:?})", c.reason, c.message));
    if let Some(why) = remaining.or_else(|| grounds::blind_to_namespace(g, &ns.name)) {
        return Judgement::Blind {
            what: format!("nothing in the input is left in namespace {}", ns.name),
            why,
            check: Step::run(
                Reach::Inspect,
                "Read the namespace's conditions: the namespace controller says there what remains.",
                Command::kubectl(["get"]).arg("namespaces").arg(ns.name.as_str()).flag("-o", "yaml"),
            ),
        };
    }
    let since =
        ns.condition("NamespaceContentRemaining").filter(|c| c.status == "False").and_then(|c| c.last_transition_time);
    Judgement::Holds { what: "nothing is left in the namespace".into(), since }
}

/// The findings for a condition that holds: `FinalizerPending` within the grace time,
/// `ControllerStalled` past it. Returns the finding and whether it makes the object stuck.
pub fn holds_finding(
    g: &Graph,
    x: NodeId,
    finalizer: &str,
    who: &str,
    what: &str,
    since: Option<Timestamp>,
    now: Timestamp,
) -> (Finding, bool) {
    let o = g.object(x).expect("judged objects are observed");
    let deleted = o.deletion_timestamp.unwrap_or(now);
    // the finalizer has had nothing to wait for since the later of the two
    let start = since.map_or(deleted, |s| s.max(deleted));
    let waited = (now.as_second() - start.as_second()).max(0);
    let grace = grace(finalizer);
    let requeue = requeue(g, x, now);
    if waited <= grace {
        let finding = Finding {
            code: FindingCode::FinalizerPending,
            severity: Severity::Info,
            object: x,
            related: Vec::new(),
            message: format!(
                "{finalizer} is removed by {who} once its condition holds, and it does: {what}, for {} so far; the controller acts within seconds, so this is in progress (it is called stalled after {})",
                crate::age::human(waited),
                crate::age::human(grace)
            ),
            remedy: vec![
                Step::run(
                    Reach::Inspect,
                    format!(
                        "Check again in {}: {finalizer} should be gone by then.",
                        crate::age::human(grace - waited)
                    ),
                    remedy::inspect(g, x),
                ),
                Step::new(
                    Reach::Restore,
                    format!(
                        "If {finalizer} is still there in {}, make the controller look again with an update that changes nothing it reads (this is a change to the object):",
                        crate::age::human(grace - waited)
                    ),
                    requeue.command,
                ),
            ],
            subject: Subject::Related,
            cannot_tell: false,
        };
        return (finding, false);
    }
    let mut remedy = vec![requeue];
    remedy.push(restart(who));
    if let Some(p) = remedy::remove_finalizer(g, x, finalizer) {
        remedy.push(Step::run(
            Reach::Destructive,
            format!(
                "Only if it stays after that: remove {finalizer} by hand. That is safe here because what it guards already holds ({what}); check once more first."
            ),
            p,
        ));
    } else if finalizer == "kubernetes" {
        // spec.finalizers, cleared only through the namespace's finalize subresource
        remedy.push(Step::advice(
            Reach::Destructive,
            format!(
                "Only if it stays after that: clear 'kubernetes' from spec.finalizers through the finalize subresource (kubectl replace --raw /api/v1/namespaces/{}/finalize -f FILE, FILE being the namespace's JSON without it). That is safe here because {what}; check once more first.",
                g.identity(x).name
            ),
        ));
    }
    let since_text = match since {
        Some(s) if s > deleted => format!("since {s}"),
        _ => format!("since the delete at {deleted}"),
    };
    let finding = Finding {
        code: FindingCode::ControllerStalled,
        severity: Severity::Error,
        object: x,
        related: Vec::new(),
        message: format!(
            "{} keeps {finalizer} although {what} ({since_text}, {} ago); {who} removes it within seconds of that, so it missed the event (its watch handlers fire only on changes: a lost event is not seen again until the next resync)",
            describe(g, x),
            crate::age::human(waited)
        ),
        remedy,
        subject: Subject::Related,
        cannot_tell: false,
    };
    (finding, true)
}

/// An update that re-queues the object for its controller: an annotation that nothing
/// reads. It is a change, marked as one.
pub fn requeue(g: &Graph, x: NodeId, now: Timestamp) -> Step {
    Step::run(
        Reach::Restore,
        "Make the controller look again: an update to the object (an annotation nothing reads) re-queues it through the controller's watch. This changes the object.",
        remedy::on_object(g, x, ["annotate"])
            .arg(format!("kubectl-gc/requeued-at={now}"))
            .switch("--overwrite")
            .sending(Sends { object: x, op: Operation::Update, effect: Effect::Nudge }),
    )
}

/// Restarting the component whose controller missed the event.
pub fn restart(who: &str) -> Step {
    Step::advice(
        Reach::Restore,
        format!(
            "If that does not help, restart {who}: a new leader relists everything and acts on it (on a managed control plane, ask the provider)."
        ),
    )
}

/// The finding for a condition the input cannot judge: said so, never a root cause.
pub fn blind_finding(g: &Graph, x: NodeId, finalizer: &str, who: &str, what: &str, why: &str, check: Step) -> Finding {
    Finding {
        code: FindingCode::FinalizerPending,
        severity: Severity::Warning,
        object: x,
        related: Vec::new(),
        message: format!(
            "{finalizer} on {} is removed by {who} once its condition holds; {what}, but that rests on an absence the input cannot vouch for: {why}. Whether the controller is waiting or missed the event cannot be told from this input",
            describe(g, x)
        ),
        remedy: vec![check],
        subject: Subject::Related,
        cannot_tell: false,
    }
}

/// The finding for a condition that does not hold yet; `stuck`: nothing in flight will make
/// it hold (an Error then: someone has to act).
pub fn waits_finding(
    x: NodeId,
    finalizer: &str,
    who: &str,
    what: &str,
    on: &[NodeId],
    stuck: bool,
    remedy: Vec<Step>,
) -> Finding {
    Finding {
        code: FindingCode::FinalizerPending,
        severity: if stuck { Severity::Error } else { Severity::Info },
        object: x,
        related: on.iter().map(|&n| Related::Node(n)).collect(),
        message: format!("{finalizer} is removed by {who} once its condition holds; not yet: {what}"),
        remedy,
        subject: Subject::Related,
        cannot_tell: false,
    }
}

#[cfg(test)]
#[path = "builtin_conditions_tests.rs"]
mod tests;

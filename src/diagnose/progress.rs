//! Running is not acting (issue 11; contract §4.3 `FinalizerNotProgressing`). A finalizer
//! whose controller is judged Alive is "in progress" only for so long: past `--stuck-after`
//! (default 1h) the answer calls it stuck, names the controller, says since when the
//! finalizer waits, quotes the object's recent Warning events (the controller's own account
//! of why it fails) and gives the exact `kubectl logs` commands for the controller's pods,
//! the leader first where a lease names it. Before that it stays `FinalizerPending`, with
//! the same places to look as its next step: an answer always has one.

use k8s_openapi::jiff::Timestamp;

use crate::controllers::FinalizerOwner;
use crate::graph::{Graph, NodeId};

use super::describe;
use super::events::{self, Index};
use super::finding::{Finding, FindingCode, Related, Severity, Subject};
use super::remedy;
use super::step::{Command, Reach, Step};

/// The `--stuck-after` default: one hour.
pub const DEFAULT_STUCK_AFTER: i64 = 3600;

/// What `why-stuck` is asked beyond the object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Options {
    /// How long (seconds) a finalizer whose controller is alive may stay before the answer
    /// calls it stuck (`--stuck-after`).
    pub stuck_after: i64,
}

impl Default for Options {
    fn default() -> Options {
        Options { stuck_after: DEFAULT_STUCK_AFTER }
    }
}

/// A duration as kubectl's `--since` takes it: `3h0m0s` → `3h`, `4500` s → `1h15m`.
pub fn go_duration(seconds: i64) -> String {
    let s = seconds.max(1);
    let (h, m, sec) = (s / 3600, (s / 60) % 60, s % 60);
    let mut out = String::new();
    if h > 0 {
        out.push_str(&format!("{h}h"));
    }
    if m > 0 {
        out.push_str(&format!("{m}m"));
    }
    if sec > 0 || out.is_empty() {
        out.push_str(&format!("{sec}s"));
    }
    out
}

/// The finding for a finalizer whose controller is alive and for which no condition is
/// modelled: `FinalizerPending` until `--stuck-after`, `FinalizerNotProgressing` past it.
/// Returns the finding and whether it makes the object stuck.
#[allow(clippy::too_many_arguments)] // the answer's context, one value each; a struct would only rename them
pub fn alive_finding(
    g: &Graph,
    idx: &Index,
    x: NodeId,
    at: Option<usize>,
    finalizer: &str,
    owner: &FinalizerOwner,
    now: Timestamp,
    opts: &Options,
) -> (Finding, bool) {
    let o = g.object(x).expect("explained objects are observed");
    let clock = super::clock::judge(g, idx, x, finalizer, owner, now, opts.stuck_after);
    let since = o.deletion_timestamp.unwrap_or(now);
    // how long the finalizer has waited since the wait began (the grace period's end, or a sign
    // of progress since), for the logs' --since: from the grace period's end
    let waited = (now.as_second() - clock.start.as_second()).max(0);
    let waited_all = (now.as_second() - since.as_second()).max(0);
    let signs = if clock.signs.is_empty() { String::new() } else { format!("; {}", clock.signs.join("; ")) };
    let who = owner.removed_by.clone().unwrap_or_else(|| format!("the controller of {finalizer}"));
    let evidence = latest_warning(g, idx, x, now);
    let mut steps = look_at(g, x, owner, waited_all);
    // a create its cleanup needs, refused in a namespace being deleted: a deadlock, at once
    if let Some(r) = super::create_refused::find(g, idx, x, finalizer, owner) {
        return (r.finding(g, x, at, finalizer, owner, now, steps), true);
    }
    let related: Vec<Related> = clock.in_grace.iter().map(|&p| Related::Node(p)).collect();
    if !clock.in_grace.is_empty() {
        // the pods' own promise of time: in progress whatever --stuck-after says
        let finding = Finding {
            code: FindingCode::FinalizerPending,
            severity: Severity::Info,
            object: x,
            related,
            message: format!(
                "{finalizer} is removed by {who}, which is alive, once the pods it waits for are gone; they are within their grace period, so the deletion is in progress whatever --stuck-after says, and --stuck-after ({}) counts from {}{signs}{evidence} ({})",
                crate::age::human(opts.stuck_after),
                clock.start,
                decisive(owner)
            ),
            remedy: steps,
            subject: Subject::Finalizer { name: finalizer.to_string(), owner: owner.clone() },
            cannot_tell: false,
        };
        return (finding, false);
    }
    if clock.failing.is_none() && waited <= opts.stuck_after {
        let finding = Finding {
            code: FindingCode::FinalizerPending,
            severity: Severity::Info,
            object: x,
            related,
            message: format!(
                "{finalizer} is removed by {who}, which is alive; it has waited {} of the {} allowed before the answer calls it stuck (--stuck-after){signs}{evidence} ({})",
                crate::age::human(waited),
                crate::age::human(opts.stuck_after),
                decisive(owner)
            ),
            remedy: steps,
            subject: Subject::Finalizer { name: finalizer.to_string(), owner: owner.clone() },
            cannot_tell: false,
        };
        return (finding, false);
    }
    if let Some(w) = &owner.workload {
        steps.push(Step::run(
            Reach::Restore,
            format!(
                "If its logs show it wedged rather than failing, restart {w} (a rollout replaces its pods one by one)."
            ),
            Command::kubectl(["rollout", "restart"])
                .arg(format!("{}/{}", w.kind.to_lowercase(), w.name))
                .namespace(w.namespace.as_deref()),
        ));
    }
    if let Some(p) = remedy::remove_finalizer_at(g, x, at, finalizer) {
        steps.push(Step::run(
            Reach::Destructive,
            format!(
                "Last resort, only once whatever {finalizer} guards has been cleaned up by hand (its controller is failing at exactly that): remove the finalizer."
            ),
            p,
        ));
    }
    let finding = Finding {
        code: FindingCode::FinalizerNotProgressing,
        severity: Severity::Error,
        object: x,
        related: Vec::new(),
        message: match &clock.failing {
            // a repeating failure ends the wait early: more time changes nothing
            Some(failing) if waited <= opts.stuck_after => format!(
                "{} has kept {finalizer} since {since} ({}); it is removed by {who}, which is alive but failing at it: {failing}, which ends the wait before --stuck-after ({}){signs}{evidence}; the failure rests on Events alone ({})",
                describe(g, x),
                crate::age::human(waited_all),
                crate::age::human(opts.stuck_after),
                super::events::writable_by(g, x)
            ),
            _ => format!(
                "{} has kept {finalizer} since {since} ({}, longer than --stuck-after {} since the wait began at {}); it is removed by {who}, which is alive but not acting on it{signs}{evidence}",
                describe(g, x),
                crate::age::human(waited_all),
                crate::age::human(opts.stuck_after),
                clock.start
            ),
        },
        remedy: steps,
        subject: Subject::Finalizer { name: finalizer.to_string(), owner: owner.clone() },
        cannot_tell: false,
    };
    (finding, true)
}

/// The object's most recent Warning event, as a clause (`; its most recent Warning event: …`),
/// or that none was read.
fn latest_warning(g: &Graph, idx: &Index, x: NodeId, now: Timestamp) -> String {
    let warnings = idx.warnings(g.identity(x).uid);
    match warnings.first() {
        Some(e) => format!(
            "; its most recent Warning event: {}{}",
            events::describe_event(e, now),
            if warnings.len() > 1 { format!(" ({} Warning events in all)", warnings.len()) } else { String::new() }
        ),
        // the same words whether other Events were read or none: a live answer reads only the
        // Events of the objects it names, an offline input may hold every Event or none
        None => format!(
            "; no Warning event of {} was read (Events expire an hour after their last occurrence by default, kube-apiserver --event-ttl)",
            describe(g, x)
        ),
    }
}

/// The evidence that decided the controller is alive (the liveness verdict, which comes
/// last): the rest is the finalizer's own evidence, printed once beside it, not in every message.
fn decisive(owner: &FinalizerOwner) -> &str {
    owner.evidence.last().map(String::as_str).unwrap_or("no evidence")
}

/// Where to look: the object's events, then the controller's logs (leader first).
fn look_at(g: &Graph, x: NodeId, owner: &FinalizerOwner, waited: i64) -> Vec<Step> {
    let mut steps = vec![events_step(g, x)];
    // logs of less than a minute say nothing yet (contract §4.3.4)
    if waited >= 60 {
        steps.extend(logs(g, owner, waited));
    }
    steps
}

/// Read what the controller reported about `x`: its Events, by uid, oldest first.
pub(super) fn events_step(g: &Graph, x: NodeId) -> Step {
    let id = g.identity(x);
    Step::run(
        Reach::Inspect,
        format!("Read what the controller reported about {} (its events):", describe(g, x)),
        Command::kubectl(["get"])
            .arg("events")
            .namespace(Some(id.namespace.unwrap_or("default")))
            .flag("--field-selector", format!("involvedObject.uid={}", id.uid))
            .flag("--sort-by", ".lastTimestamp"),
    )
}

/// `kubectl logs` for the controller's pods since the finalizer began to wait: the pod that
/// holds its leader lease first (only the leader acts), then the others.
pub fn logs(g: &Graph, owner: &FinalizerOwner, waited: i64) -> Vec<Step> {
    let since = go_duration(waited + 60);
    let Some(w) = &owner.workload else {
        let who = owner.removed_by.as_deref().unwrap_or("the controller");
        if let Some(step) = control_plane_logs(g, who, &since) {
            return vec![step];
        }
        return vec![Step::advice(Reach::Inspect, format!("Read the logs of {who} since the delete ({since} ago)."))];
    };
    let ns = w.namespace.as_deref();
    let Some(wl) = g.find(w.group(), &w.kind, ns, &w.name) else {
        return vec![workload_logs(w, &since)];
    };
    // its pods not being deleted (those are going: their logs end)
    let mut pods: Vec<NodeId> = crate::controllers::pods_of(g, wl)
        .into_iter()
        .filter(|&p| g.object(p).is_some_and(|o| !o.is_deleting()))
        .collect();
    let leader = leader_pod(g, ns, &pods);
    if let Some((l, _)) = &leader {
        let l = *l;
        pods.retain(|&p| p != l);
        pods.insert(0, l);
    }
    if pods.is_empty() {
        return vec![workload_logs(w, &since)];
    }
    pods.iter()
        .take(3)
        .enumerate()
        .map(|(i, &p)| {
            let name = g.identity(p).name;
            let text = match &leader {
                Some((l, lease)) if *l == p => format!("Read the logs of the leader, {name} (lease {lease} names it):"),
                _ if i == 0 => format!("Read the logs of {name}, a pod of {w}:"),
                _ => format!("And of {name}:"),
            };
            Step::run(
                Reach::Inspect,
                text,
                Command::kubectl(["logs"])
                    .arg(name)
                    .namespace(ns)
                    .switch("--all-containers")
                    .flag("--since", since.clone()),
            )
        })
        .collect()
}

/// A control-plane component's logs where its static pod is visible: the leader's, named by
/// its kube-system lease (`<node>_<uuid>`; the static pod is `<component>-<node>`).
fn control_plane_logs(g: &Graph, who: &str, since: &str) -> Option<Step> {
    let component = ["kube-controller-manager", "cloud-controller-manager", "kube-scheduler"]
        .into_iter()
        .find(|c| who.starts_with(c))?;
    let lease = g.find("coordination.k8s.io", "Lease", Some("kube-system"), component).and_then(|l| g.object(l))?;
    let holder = lease.str_field("/spec/holderIdentity")?;
    let node = holder.split_once('_').map_or(holder, |(n, _)| n);
    let pod = format!("{component}-{node}");
    g.find("", "Pod", Some("kube-system"), &pod)?;
    Some(Step::run(
        Reach::Inspect,
        format!("Read the logs of the leading {component}, {pod} (lease kube-system/{component} names its node):"),
        Command::kubectl(["logs"]).arg(pod).namespace(Some("kube-system")).flag("--since", since),
    ))
}

fn workload_logs(w: &crate::controllers::Controller, since: &str) -> Step {
    Step::run(
        Reach::Inspect,
        format!("Read the logs of {w}:"),
        Command::kubectl(["logs"])
            .arg(format!("{}/{}", w.kind.to_lowercase(), w.name))
            .namespace(w.namespace.as_deref())
            .switch("--all-containers")
            .flag("--since", since),
    )
}

/// The pod among `pods` whose name a Lease's holder identity starts with (`<pod>_<uuid>`, as
/// controller-runtime and client-go write it), and that lease as `ns/name`.
fn leader_pod(g: &Graph, ns: Option<&str>, pods: &[NodeId]) -> Option<(NodeId, String)> {
    for &l in g.of_kind("coordination.k8s.io", "Lease") {
        let Some(lease) = g.object(l) else { continue };
        if lease.namespace.as_deref() != ns {
            continue;
        }
        let Some(holder) = lease.str_field("/spec/holderIdentity") else { continue };
        let pod_name = holder.split_once('_').map_or(holder, |(p, _)| p);
        if let Some(&p) = pods.iter().find(|&&p| g.identity(p).name == pod_name) {
            return Some((p, format!("{}/{}", lease.namespace_str(), lease.name)));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_control_plane_leader_is_found_through_its_lease_and_static_pod() {
        use crate::testing::{ObjExt, graph, obj};
        let lease = obj("coordination.k8s.io/v1", "Lease", Some("kube-system"), "kube-controller-manager", "l")
            .with("spec", serde_json::json!({"holderIdentity": "cp-2_0a1b", "leaseDurationSeconds": 15}));
        let pods = [
            obj("v1", "Pod", Some("kube-system"), "kube-controller-manager-cp-1", "p1"),
            obj("v1", "Pod", Some("kube-system"), "kube-controller-manager-cp-2", "p2"),
        ];
        let g = graph([vec![lease.clone()], pods.to_vec()].concat());
        let step = control_plane_logs(&g, "kube-controller-manager (job controller)", "3h").expect("the leader's pod");
        let line = step.command.unwrap().line(&Default::default());
        assert_eq!(line, "kubectl logs kube-controller-manager-cp-2 -n kube-system --since=3h");
        // a managed control plane shows no static pod: no command is made up
        let g = graph(vec![lease]);
        assert!(control_plane_logs(&g, "kube-controller-manager (job controller)", "3h").is_none());
    }

    #[test]
    fn since_is_written_as_go_durations() {
        assert_eq!(go_duration(10_800), "3h");
        assert_eq!(go_duration(4500), "1h15m");
        assert_eq!(go_duration(90), "1m30s");
        assert_eq!(go_duration(0), "1s");
    }
}

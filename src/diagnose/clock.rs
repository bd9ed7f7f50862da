//! When the wait of a finalizer whose controller is alive starts, and whether it has already
//! ended (contract §4.3, "Time is judged from the object's own promises and signs of
//! progress"). `--stuck-after` counts from the end of the object's grace period
//! (`deletionTimestamp`), or later:
//! - from the end of the grace period of the pods it waits on (a Node being drained waits for
//!   the pods bound to it; while any is within its grace period, the wait is the pod owner's own
//!   promise of time, and the answer is in progress whatever `--stuck-after` says);
//! - from the controller's last write to the object (the managedFields entry of the manager that
//!   added the finalizer, when it is no person's client);
//! - from the controller's last Normal event about the object.
//!
//! A Warning of the controller about the object that repeats (the same reason, seen
//! [`REPEATS`] times or more since the deletion, the last time within `--stuck-after`) ends the
//! wait early: the controller is failing at exactly this, and waiting longer changes nothing.
//! Every sign that moved the clock is named in the answer.

use k8s_openapi::jiff::Timestamp;

use crate::controllers::{FinalizerOwner, ManagerKind, classify_manager, finalizer_domain};
use crate::graph::{Graph, NodeId};

use super::describe;
use super::events::{Event, Index};

/// A Warning seen this many times since the deletion (one reason, summed over its Events) is a
/// repeating failure.
pub const REPEATS: i64 = 3;

/// From when `--stuck-after` counts for one finalizer, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Clock {
    /// The start of the wait: the latest of the object's grace end, the grace ends of the pods it
    /// waits on, and the controller's last write or Normal event about it.
    pub start: Timestamp,
    /// Each sign that moved `start`, in words.
    pub signs: Vec<String>,
    /// Pods it waits on that are still within their grace period: in progress.
    pub in_grace: Vec<NodeId>,
    /// A repeating Warning of the controller about the object, in words: the wait is over.
    pub failing: Option<String>,
}

/// The clock of `finalizer` on `x`, whose controller `owner` is alive, at `now`.
pub fn judge(
    g: &Graph,
    idx: &Index,
    x: NodeId,
    finalizer: &str,
    owner: &FinalizerOwner,
    now: Timestamp,
    stuck_after: i64,
) -> Clock {
    let o = g.object(x).expect("explained objects are observed");
    let grace_end = o.deletion_timestamp.unwrap_or(now);
    let requested = o.deletion_requested_at().unwrap_or(now);
    let mut clock = Clock { start: grace_end, signs: Vec::new(), in_grace: Vec::new(), failing: None };
    // the pods a Node being drained waits for
    if o.kind == "Node" && o.group().is_empty() {
        for (p, end, grace) in pods_in_grace(g, &o.name, now) {
            clock.signs.push(format!(
                "it waits for {}, whose grace period (deletionGracePeriodSeconds {grace}) runs until {end}",
                describe(g, p)
            ));
            clock.in_grace.push(p);
            clock.start = clock.start.max(end);
        }
    }
    // the controller's own last write to the object
    let adder = o
        .finalizer_managers
        .iter()
        .filter(|m| m.finalizers.iter().any(|f| f == finalizer))
        .filter(|m| classify_manager(&m.manager) == ManagerKind::Controller)
        .filter_map(|m| m.time.map(|t| (t, m)))
        .max_by_key(|(t, _)| *t);
    if let Some((t, m)) = adder
        && t > requested
        && t > clock.start
    {
        clock.start = t;
        clock.signs.push(format!(
            "field manager \"{}\", which added {finalizer}, last wrote the object at {t} (managedFields), after the deletion: the wait counts from then",
            m.manager
        ));
    }
    let events: Vec<&Event> = idx
        .about(&o.uid)
        .iter()
        .filter(|e| e.reporting_controller.as_deref().is_some_and(|c| by_the_controller(c, owner, finalizer)))
        .filter(|e| e.last_seen.is_some_and(|t| t >= requested))
        .collect();
    // the controller's last Normal event about it
    if let Some(e) = events.iter().filter(|e| !e.is_warning()).max_by_key(|e| e.last_seen)
        && let Some(t) = e.last_seen.filter(|t| *t > clock.start)
    {
        clock.start = t;
        clock.signs.push(format!(
            "{} reported progress about it at {t} (Normal event {}: {:?}): the wait counts from then",
            e.reporting_controller.as_deref().unwrap_or("the controller"),
            e.reason,
            e.message
        ));
    }
    // a Warning the controller keeps repeating about it
    let mut by_reason: Vec<(&str, i64, Timestamp, &Event)> = Vec::new();
    for e in events.iter().filter(|e| e.is_warning()) {
        let t = e.last_seen.expect("filtered on last_seen");
        match by_reason.iter_mut().find(|(r, ..)| *r == e.reason) {
            Some(entry) => {
                entry.1 += e.count;
                if t > entry.2 {
                    (entry.2, entry.3) = (t, e);
                }
            }
            None => by_reason.push((e.reason.as_str(), e.count, t, e)),
        }
    }
    let last_normal = events.iter().filter(|e| !e.is_warning()).filter_map(|e| e.last_seen).max();
    clock.failing = by_reason
        .into_iter()
        .filter(|(_, count, last, _)| {
            *count >= REPEATS
                && now.as_second() - last.as_second() <= stuck_after
                && last_normal.is_none_or(|n| n < *last)
        })
        .max_by_key(|(_, count, last, _)| (*last, *count))
        .map(|(reason, count, last, e)| {
            format!(
                "{} repeats the same failure about it: Warning {reason} seen {count} times since the deletion, last at {last} ({:?})",
                e.reporting_controller.as_deref().unwrap_or("the controller"),
                e.message
            )
        });
    clock
}

/// The pods bound to node `node` that are being deleted and still within their grace period:
/// each with the end of its grace period and the period's length.
fn pods_in_grace(g: &Graph, node: &str, now: Timestamp) -> Vec<(NodeId, Timestamp, i64)> {
    g.of_kind("", "Pod")
        .iter()
        .filter_map(|&p| {
            let o = g.object(p)?;
            (o.str_field("/spec/nodeName") == Some(node)).then_some(())?;
            o.grace_left(now)?;
            Some((p, o.deletion_timestamp?, o.deletion_grace_period_seconds.unwrap_or(0)))
        })
        .collect()
}

/// Whether a component that reports Events (`reportingController`, `source.component`) is the
/// controller `owner` names: its workload's name, a word of who removes the finalizer, or the
/// finalizer's domain (`media.example.com/bucket` for `media.example.com/cleanup`). Case is
/// ignored; a component named by none of them is someone else.
pub fn by_the_controller(component: &str, owner: &FinalizerOwner, finalizer: &str) -> bool {
    let c = component.to_ascii_lowercase();
    if c.is_empty() {
        return false;
    }
    let workload = owner.workload.as_ref().map(|w| w.name.to_ascii_lowercase());
    let by_workload =
        workload.is_some_and(|w| c == w || c.ends_with(&format!("/{w}")) || c.starts_with(&format!("{w}-")));
    let by_name = owner.removed_by.as_deref().is_some_and(|r| {
        r.to_ascii_lowercase().split(|ch: char| ch.is_whitespace() || "/()\"".contains(ch)).any(|word| word == c)
    });
    // a built-in component's controller in words reports as those words hyphenated:
    // `cloud-controller-manager (service controller)` as `service-controller`
    let by_controller_name = owner
        .removed_by
        .as_deref()
        .and_then(|r| r.split_once('(')?.1.strip_suffix(')'))
        .is_some_and(|inner| inner.to_ascii_lowercase().split_whitespace().collect::<Vec<_>>().join("-") == c);
    let by_domain = finalizer_domain(finalizer)
        .map(str::to_ascii_lowercase)
        .is_some_and(|d| c == d || c.strip_prefix(&d).is_some_and(|rest| rest.starts_with('/')));
    by_workload || by_name || by_controller_name || by_domain
}

#[cfg(test)]
#[path = "clock_tests.rs"]
mod tests;

//! The garbage collector's missed steps (issue 11; kubernetes#115570). When an owner enters
//! foreground deletion, the GC's graph builder enqueues all of its dependents, and each one is
//! deleted (or, where another owner still holds it, its reference unblocked) by
//! `attemptToDeleteItem` within moments (gc-semantics §3.6, §4.5). The GC has no periodic
//! resync: if it missed the owner's transition, its blocking dependents are never deleted and
//! the owner waits forever. A blocking dependent with no deletionTimestamp long after the
//! owner's foreground deletion began is that miss.

use crate::names::FOREGROUND_DELETION;

use k8s_openapi::jiff::Timestamp;

use crate::graph::{Graph, NodeId};

use super::describe;
use super::finding::{Finding, FindingCode, Related, Severity, Subject};
use super::owners::owner_findings;
use super::remedy;
use super::step::{Reach, Step};
use crate::collector::GcVerdict;

/// How long after the owner's foreground deletion began its blocking dependents may still
/// not be deleted before the answer calls it a miss: the GC deletes them with
/// `--concurrent-gc-syncs` (20) workers, a couple of requests each, so even thousands of
/// dependents are marked well within ten minutes.
pub const STEP_GRACE: i64 = 600;

/// At most this many delete commands are printed (the rest are counted).
const MAX_COMMANDS: usize = 10;

/// The foreground owner's blocking dependents the GC should have deleted long ago but that
/// are not being deleted; those the GC can never act on (an unresolvable owner kind) are
/// explained elsewhere.
pub fn waiting_undeleted(g: &Graph, x: NodeId) -> Vec<NodeId> {
    g.blocking_dependents(x)
        .filter(|&d| g.object(d).is_some_and(|o| !o.is_deleting()))
        .filter(|&d| owner_findings(g, d).1 != GcVerdict::NeverActedOn)
        .collect()
}

/// `GarbageCollectorStalled` for a foreground owner whose blocking dependents were never
/// deleted, past [`STEP_GRACE`]; `down`: why kube-controller-manager is not judged alive,
/// said in the same finding.
pub fn missed_deletes(g: &Graph, x: NodeId, now: Timestamp, down: Option<&str>) -> Option<Finding> {
    let o = g.object(x)?;
    if !o.has_finalizer(FOREGROUND_DELETION) {
        return None;
    }
    let began = o.deletion_timestamp?;
    let age = now.as_second() - began.as_second();
    if age <= STEP_GRACE {
        return None;
    }
    let waiting = waiting_undeleted(g, x);
    if waiting.is_empty() {
        return None;
    }
    let names: Vec<String> = waiting.iter().take(5).map(|&d| describe(g, d)).collect();
    let more = if waiting.len() > 5 { format!(" and {} more", waiting.len() - 5) } else { String::new() };
    let why = match down {
        Some(d) => format!(
            "kube-controller-manager, which runs the garbage collector, is not judged alive ({d}), and when it was it missed the owner's transition to foreground deletion"
        ),
        None => "kube-controller-manager is alive, so its garbage collector missed the owner's transition to foreground deletion (kubernetes#115570; it has no periodic resync)".into(),
    };
    let mut remedy = Vec::new();
    if down.is_none() {
        remedy.push(Step::advice(
            Reach::Restore,
            "Restarting kube-controller-manager makes the garbage collector rebuild its graph and act on the owner (on a managed control plane, ask the provider).",
        ));
    }
    for &d in waiting.iter().take(MAX_COMMANDS) {
        remedy.push(Step::run(
            Reach::Disrupt,
            format!("Delete the waiting dependent {} (what the garbage collector should have done):", describe(g, d)),
            remedy::on_object(g, d, ["delete"]).flag("--wait", "false"),
        ));
    }
    if waiting.len() > MAX_COMMANDS {
        remedy.push(Step::advice(
            Reach::Disrupt,
            format!("… and the {} other waiting dependents (-o json lists them all).", waiting.len() - MAX_COMMANDS),
        ));
    }
    remedy.push(Step::run(
        Reach::Disrupt,
        format!(
            "Or re-issue the delete of {} with Background propagation: the API server drops foregroundDeletion and the dependents are collected afterwards.",
            describe(g, x)
        ),
        remedy::redelete_background(g, x),
    ));
    Some(Finding {
        code: FindingCode::GarbageCollectorStalled,
        severity: Severity::Error,
        object: x,
        related: waiting.iter().map(|&d| Related::Node(d)).collect(),
        message: format!(
            "{} has been in foreground deletion for {} and waits for {} blocking dependent(s) that are not being deleted ({}{more}); the garbage collector deletes them within moments of the owner's transition: {why}",
            describe(g, x),
            crate::age::human(age),
            waiting.len(),
            names.join(", ")
        ),
        remedy,
        subject: Subject::GarbageCollector,
        cannot_tell: false,
    })
}

/// Why "no blocking dependent remains" cannot be trusted: dependents may be of any kind, so
/// any failed listing may hide one, and an input that holds nothing near the owner shows none.
pub fn blind_to_dependents(g: &Graph, x: NodeId) -> Option<String> {
    if let Some(e) = g.gaps().iter().find(|e| e.may_hide_any(None)) {
        return Some(format!("a dependent may be among what could not be read (\"{e}\")"));
    }
    let id = g.identity(x);
    let others = match id.namespace {
        Some(ns) => g.in_namespace(Some(ns)).any(|(n, _)| n != x),
        None => g.observed().any(|(n, _)| n != x),
    };
    if !others && !g.has_discovery() {
        return Some(match id.namespace {
            Some(ns) => format!("the input holds nothing else in namespace {ns}"),
            None => "the input holds nothing else".into(),
        });
    }
    None
}

//! `FinalizerReAdded`: a mutation puts a finalizer back on the UPDATE that removes one, and the
//! API server refuses it ([`crate::admission::readds`] finds the refusal and the mutators).
//! A refusal, not a stall: the controller is alive and acts, and its UPDATE is what is refused
//! (contract §4.3.4). The remedies take the mutation out of that UPDATE's path, safest first;
//! a patch removing the finalizer is refused the same way until then
//! ([`super::admission::warn_rejected_patches`] says so on every one printed).

use k8s_openapi::jiff::Timestamp;
use serde_json::json;

use crate::admission::readds::{Mutator, ReAdded};
use crate::graph::{Graph, NodeId};

use super::admission::{read_it, some_of};
use super::events::{Event, describe_event};
use super::finding::{Finding, FindingCode, Related, Severity, Subject};
use super::step::{Command, Reach, Step};
use super::{describe, remedy};

/// The condition that keeps a mutation off the UPDATEs of objects being deleted (an UPDATE
/// cannot unset a deletionTimestamp, so `object` has it whenever `oldObject` does); other
/// operations pass, and a DELETE, whose `object` is null, is never dereferenced.
pub const SKIP_DELETING: &str = r#"request.operation != "UPDATE" || !has(object.metadata.deletionTimestamp)"#;

/// The finding for `x`, whose finalizer removal `r` says a mutation undoes, at `now`.
pub(super) fn finding(g: &Graph, x: NodeId, r: &ReAdded, now: Timestamp) -> Finding {
    let who: Vec<String> = r.mutators.iter().map(|m| describe_mutator(g, m)).collect();
    let one = match who.len() {
        1 => who[0].clone(),
        _ => format!("one of {}", some_of(&who)),
    };
    let quoted = describe_event(
        &Event {
            type_: "Warning".into(),
            reason: r.refusal.reason.clone(),
            message: r.refusal.message.clone(),
            count: r.refusal.count,
            last_seen: r.refusal.last_seen,
            reporting_controller: r.refusal.reporter.clone(),
        },
        now,
    );
    let caveats: Vec<&str> = r.mutators.iter().flat_map(|m| m.caveats.iter().map(String::as_str)).collect();
    let mut message = format!(
        "The UPDATE that removes a finalizer from {} is refused: it passes {one}, which mutates it, and comes out adding a finalizer, which the API server refuses for an object being deleted (metadata.finalizers: Forbidden). Waiting will not finish it, and a patch removing the finalizer is refused the same way until the mutation is out of its path. Quoted: {quoted}",
        describe(g, x)
    );
    if !caveats.is_empty() {
        message.push_str(&format!(" (whether each applies could not all be evaluated: {})", caveats.join("; ")));
    }
    let mut related: Vec<Related> = Vec::new();
    for m in &r.mutators {
        for n in std::iter::once(m.by).chain(m.binding) {
            if !related.contains(&Related::Node(n)) {
                related.push(Related::Node(n));
            }
        }
    }
    Finding {
        code: FindingCode::FinalizerReAdded,
        severity: Severity::Error,
        object: x,
        related,
        message,
        remedy: steps(g, &r.mutators),
        subject: Subject::Related,
        cannot_tell: false,
    }
}

/// `MutatingWebhookConfiguration x (webhook y)`, `MutatingAdmissionPolicy p (binding b)`, with
/// the mutations that write finalizers quoted.
fn describe_mutator(g: &Graph, m: &Mutator) -> String {
    match (&m.webhook, m.binding) {
        (Some((w, _)), _) => format!("{} (webhook {w})", describe(g, m.by)),
        (None, b) => {
            let binding = b.map(|b| format!(" (binding {})", g.identity(b).name)).unwrap_or_default();
            format!("{}{binding}, whose mutations write finalizers ({})", describe(g, m.by), m.writes.join("; "))
        }
    }
}

/// Safest first: read each mutator; keep it off the UPDATEs of objects being deleted (a
/// matchCondition); remove it, last.
fn steps(g: &Graph, mutators: &[Mutator]) -> Vec<Step> {
    let mut out = Vec::new();
    let mut seen: Vec<NodeId> = Vec::new();
    for m in mutators {
        if !seen.contains(&m.by) {
            out.push(read_it(g, m.by, "which of its webhooks or mutations adds the finalizer, and to what"));
            seen.push(m.by);
        }
        out.push(Step::run(
            Reach::Disrupt,
            format!(
                "Keep {} off the UPDATEs of objects being deleted with a matchCondition (Kubernetes 1.28+): the controller's next UPDATE then goes through and it removes its finalizer itself. Whatever installed it may revert this; the lasting fix is the mutation skipping objects that have a deletionTimestamp.",
                describe_mutator(g, m)
            ),
            skip_deleting(g, m),
        ));
    }
    for by in seen {
        out.push(Step::run(
            Reach::Destructive,
            format!(
                "Or remove {}: it then mutates nothing it matches (what it adds to new objects too) until it is installed again.",
                describe(g, by)
            ),
            remedy::on_object(g, by, ["delete"]),
        ));
    }
    out
}

/// A JSON patch adding [`SKIP_DELETING`] to the webhook's or the policy's matchConditions
/// (appended when some exist: an `add` at the list would replace them).
fn skip_deleting(g: &Graph, m: &Mutator) -> Command {
    let base = match &m.webhook {
        Some((_, i)) => format!("/webhooks/{i}"),
        None => "/spec".to_string(),
    };
    let existing = g.object(m.by).and_then(|o| match &m.webhook {
        Some((_, i)) => o.body.get("webhooks").and_then(|w| w.get(*i)).and_then(|w| w.get("matchConditions")).cloned(),
        None => o.field("/spec/matchConditions").cloned(),
    });
    let condition = json!({"name": "skip-objects-being-deleted", "expression": SKIP_DELETING});
    let op = match existing.as_ref().and_then(|v| v.as_array()) {
        Some(_) => json!([{"op": "add", "path": format!("{base}/matchConditions/-"), "value": condition}]),
        None => json!([{"op": "add", "path": format!("{base}/matchConditions"), "value": [condition]}]),
    };
    remedy::on_object(g, m.by, ["patch"]).flag("--type", "json").flag("-p", op.to_string())
}

#[cfg(test)]
#[path = "readded_tests.rs"]
mod tests;

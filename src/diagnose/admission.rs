//! The admission webhooks in the way of a deletion, as findings: a dead backend behind a
//! `failurePolicy: Fail` webhook that intercepts the UPDATE removing a finalizer or the DELETE
//! still to come makes the object stuck on its own account (`AdmissionWebhookUnavailable`).
//! Which webhooks intercept what is [`crate::admission`]'s.

use super::step::{Command, Reach, Step};
use super::{Explainer, Finding, FindingCode, Related, Severity, Subject, describe, remedy};
use crate::admission::backend::{self, Backend, Target};
use crate::admission::webhooks::{Interceptor, Operation, interceptors};
use crate::graph::{Graph, NodeId};
use crate::snapshot::Object;

impl Explainer<'_, '_> {
    /// The admission webhooks in the way of `x`'s deletion: the UPDATE that removes a
    /// finalizer when `x` is being deleted, the DELETE still to come when something waits for
    /// `x` to go. A dead backend makes `x` stuck on its own account.
    pub(super) fn explain_admission(&mut self, x: NodeId) {
        let g = self.g;
        let Some(o) = g.object(x) else { return };
        let op = if o.is_deleting() {
            if o.finalizers.is_empty() {
                return;
            }
            Operation::Update
        } else if x != self.target && will_be_deleted(g, o, x) {
            Operation::Delete
        } else {
            return;
        };
        for i in interceptors(g, x, op) {
            if !i.backend.is_dead() {
                // an unjudged backend is named in the finalizers' evidence (`note_unjudged`)
                continue;
            }
            let finding = unavailable(g, x, &i);
            self.findings.push(finding);
            self.local_stuck.push(x);
        }
    }
}

/// What the admission check could not judge for the target, in its finalizers' evidence (once
/// they are all reported): a webhook intercepting the UPDATE that removes them whose backend
/// cannot be judged, and webhook configurations that could not be read at all — then whether
/// a webhook rejects that UPDATE is unknown, and the answer must not read as if none did.
pub fn note_unjudged(g: &Graph, target: NodeId, finalizers: &mut [super::FinalizerReport]) {
    let Some(o) = g.object(target) else { return };
    if !o.is_deleting() || o.finalizers.is_empty() || o.group() == "admissionregistration.k8s.io" {
        return;
    }
    let mut notes = Vec::new();
    for i in interceptors(g, target, Operation::Update) {
        if matches!(i.backend, Backend::Unknown(_)) {
            notes.push(format!(
                "{} intercepts UPDATE of {} with failurePolicy Fail, and its backend cannot be judged ({}): if it does not answer, the finalizer's removal is rejected",
                i.describe(g),
                describe(g, target),
                i.backend.describe(&i.target)
            ));
        }
    }
    let unread: Vec<&str> = ["validatingwebhookconfigurations", "mutatingwebhookconfigurations"]
        .into_iter()
        .filter(|r| backend::unread(g, r))
        .collect();
    if !unread.is_empty() {
        notes.push(format!(
            "admission webhooks: Unknown — {} could not be read, so whether a webhook rejects the UPDATE that removes the finalizer from {} is not known",
            unread.join(" and "),
            describe(g, target)
        ));
    }
    for f in finalizers {
        f.owner.evidence.extend(notes.iter().cloned());
    }
}

/// Whether something will send a DELETE for `x`: the namespace controller (its namespace is
/// terminating) or the garbage collector (an owner is being deleted).
fn will_be_deleted(g: &Graph, o: &Object, x: NodeId) -> bool {
    o.namespace.as_deref().is_some_and(|ns| backend::namespace_terminating(g, ns))
        || g.owner_nodes(x).iter().any(|&p| g.object(p).is_some_and(|p| p.is_deleting()))
}

/// `AdmissionWebhookUnavailable` for one dead interceptor of one object.
fn unavailable(g: &Graph, x: NodeId, i: &Interceptor) -> Finding {
    let o = g.object(x).expect("explained objects are observed");
    let what = match i.operation {
        Operation::Update => format!(
            "the UPDATE that removes {} (its controller's patch, and any patch printed here)",
            o.finalizers.join(", ")
        ),
        Operation::Delete => {
            "the DELETE that removes it (the namespace controller's, the garbage collector's, and kubectl's)".into()
        }
    };
    let mut message = format!(
        "{} intercepts {} of {} with failurePolicy Fail, and its backend cannot serve: {}. Every such request is rejected: {what}",
        i.describe(g),
        i.operation.as_str(),
        describe(g, x),
        i.backend.describe(&i.target)
    );
    if !i.caveats.is_empty() {
        message.push_str(&format!(" (it may not apply: {})", i.caveats.join("; ")));
    }
    let conf = g.identity(i.configuration);
    let conf_resource = conf.kind.to_lowercase();
    let mut remedy = vec![Step::run(
        Reach::Inspect,
        format!("Read the webhook configuration {}: which webhook, which backend.", conf.name),
        Command::kubectl(["get"]).arg(conf_resource.clone()).arg(conf.name).flag("-o", "yaml"),
    )];
    if let Target::Service { namespace, name } = &i.target {
        match &i.backend {
            Backend::NamespaceTerminating { namespace: dying, .. } => remedy.push(Step::advice(
                Reach::Inspect,
                format!(
                    "Its backend cannot be restored where it was: namespace {dying} is being deleted and nothing can be created in it. Run the webhook's server in another namespace and point the configuration at it, or remove the configuration."
                ),
            )),
            _ => {
                remedy.push(Step::run(
                    Reach::Inspect,
                    format!("See why Service {namespace}/{name} has no ready endpoint (its pods, their events)."),
                    Command::kubectl(["describe"]).arg("service").arg(name.as_str()).namespace(Some(namespace)),
                ));
                remedy.push(Step::advice(
                    Reach::Restore,
                    format!(
                        "Restore the webhook's backend (Service {namespace}/{name} and ready pods behind it); the rejected requests then succeed on their next retry."
                    ),
                ));
            }
        }
    }
    remedy.push(Step::run(
        Reach::Disrupt,
        "If its operator is gone for good (or, knowingly, until the backend is back), take the stale configuration out of the path. This turns off whatever it enforced for every object it covers; re-applying its manifest restores it. Webhook configurations are never themselves subject to webhooks, so this delete is not rejected.",
        Command::kubectl(["delete"]).arg(conf_resource).arg(conf.name),
    ));
    let mut related = vec![Related::Node(i.configuration)];
    if let Some(s) = i.backend.service() {
        related.push(Related::Node(s));
    }
    Finding {
        code: FindingCode::AdmissionWebhookUnavailable,
        severity: Severity::Error,
        object: x,
        related,
        message,
        remedy,
        subject: Subject::Related,
        cannot_tell: false,
    }
}

/// Any step that removes a finalizer of an object whose UPDATE a dead webhook rejects says so,
/// and goes after the webhook's own steps (it is Destructive; they are at most Disrupt).
pub fn warn_rejected_patches(g: &Graph, findings: &mut [Finding]) {
    let blocked: Vec<(NodeId, NodeId)> = findings
        .iter()
        .filter(|f| f.code == FindingCode::AdmissionWebhookUnavailable)
        .filter(|f| g.object(f.object).is_some_and(|o| o.is_deleting()))
        .filter_map(|f| match f.related.first() {
            Some(Related::Node(c)) => Some((f.object, *c)),
            _ => None,
        })
        .collect();
    for f in findings.iter_mut() {
        for &(x, conf) in blocked.iter().filter(|(x, _)| *x == f.object) {
            let Some(o) = g.object(x) else { continue };
            let patches: Vec<Command> = o
                .finalizers
                .iter()
                .enumerate()
                .filter_map(|(i, fin)| remedy::remove_finalizer_at(g, x, Some(i), fin))
                .collect();
            for s in &mut f.remedy {
                if s.command.as_ref().is_some_and(|c| patches.contains(c)) {
                    s.text.push_str(&format!(
                        " Until {}'s backend serves again or the configuration is removed, this patch is rejected like the controller's.",
                        describe(g, conf)
                    ));
                }
            }
        }
    }
}

#[cfg(test)]
#[path = "admission_tests.rs"]
mod tests;

//! The admission webhooks in the way of a deletion, as findings: a dead backend behind a
//! `failurePolicy: Fail` webhook that intercepts the UPDATE removing a finalizer or the DELETE
//! still to come makes the object stuck on its own account (`AdmissionWebhookUnavailable`).
//! Which webhooks intercept what is [`crate::admission`]'s; what admission policies and
//! quoted denials say is [`super::denials`]'s.

use std::collections::{HashMap, HashSet};

use super::denials::{fails_to_configure, may_deny, params_going, seen_denying};
use super::step::{Command, Reach, Step};
use super::{Explainer, Finding, FindingCode, Related, Severity, Subject, describe, remedy};
use crate::admission::Index;
use crate::admission::backend::{self, Backend, Target};
use crate::admission::policies::PolicyMatch;
use crate::admission::webhooks::{Interceptor, Operation};
use crate::collector::{OwnerState, classify_reference};
use crate::graph::{Graph, NodeId};
use crate::names::ORPHAN;
use crate::snapshot::Object;

impl Explainer<'_, '_> {
    /// The admission webhooks in the way of `x`'s deletion: the UPDATE that removes a
    /// finalizer when `x` is being deleted, the DELETE still to come when something waits for
    /// `x` to go. A dead backend makes `x` stuck on its own account.
    pub(super) fn explain_admission(&mut self, x: NodeId) {
        let g = self.g;
        let Some(o) = g.object(x) else { return };
        let mut ops = Vec::new();
        if o.is_deleting() {
            if !o.finalizers.is_empty() {
                ops.push(Operation::Update);
            }
            // a pod leaves storage only through the kubelet's final DELETE (grace period 0),
            // sent once its containers have stopped (`status_manager`'s `canBeDeleted`)
            if is_pod(o) {
                ops.push(Operation::Delete);
            }
        } else {
            // the target too: in a terminating namespace, or with its owners going, it is
            // being deleted by a controller even without a deletionTimestamp of its own
            ops.extend(request_to_come(g, o, x));
        }
        let index = &self.shared.admission;
        // a denial quoted in Events decides; the first seen speaks for the object
        let denial = ops.iter().find_map(|&op| index.denials(g, x, op).first().map(|d| (op, (*d).clone())));
        if let Some((op, d)) = &denial {
            // a policy that fails to configure: the configuration says why, and what fixes it
            match index.policies(g, x, *op).into_iter().find(|m| m.policy == d.by && m.denies()) {
                Some(m) => self.findings.push(fails_to_configure(g, x, &m, &[*op], Some(d))),
                None => self.findings.push(seen_denying(g, x, *op, d)),
            }
            self.local_stuck.push(x);
        }
        // a mutation that puts a finalizer back on the UPDATE removing one: refused every time
        let readded = o.is_deleting().then(|| index.readded(g, x)).flatten().filter(|_| denial.is_none());
        let mutators: Vec<NodeId> = readded.iter().flat_map(|r| r.mutators.iter().map(|m| m.by)).collect();
        if let Some(r) = &readded {
            self.findings.push(super::readded::finding(g, x, r, self.now));
            self.local_stuck.push(x);
        }
        // policies that may deny, each (policy, binding) once with every request it applies to;
        // and those whose params are going with a namespace being deleted: once they are gone,
        // the binding fails to configure and denies
        let mut may: Vec<(PolicyMatch, Vec<Operation>)> = Vec::new();
        let going = |m: &PolicyMatch| {
            m.deny_when_params_gone
                && !m.params.is_empty()
                && m.params
                    .iter()
                    .all(|&p| g.identity(p).namespace.is_some_and(|ns| backend::namespace_terminating(g, ns)))
        };
        for &op in &ops {
            // (a reference patch changes no finalizer: expressions about finalizers do not apply)
            let patch = op == Operation::Update && !o.is_deleting();
            for m in index
                .policies(g, x, op)
                .into_iter()
                .filter(|m| (m.may_deny() && !(patch && m.misconfigured.is_none())) || going(m))
            {
                if denial.as_ref().is_some_and(|(_, d)| d.by == m.policy) || mutators.contains(&m.policy) {
                    continue;
                }
                match may.iter_mut().find(|(k, _)| k.policy == m.policy && k.binding == m.binding) {
                    Some((_, seen)) => seen.push(op),
                    None => may.push((m, vec![op])),
                }
            }
        }
        for &op in &ops {
            let found = self.shared.admission.interceptors(g, x, op);
            // an unjudged backend is named in the finalizers' evidence (`note_unjudged`)
            for hooks in by_configuration(found.iter().filter(|i| i.backend.is_dead())) {
                self.findings.push(unavailable(g, x, &hooks));
                self.local_stuck.push(x);
            }
        }
        for (m, on) in may {
            if m.denies() {
                self.findings.push(fails_to_configure(g, x, &m, &on, None));
                self.local_stuck.push(x);
            } else if m.may_deny() && m.misconfigured.is_none() {
                // its CEL, evaluated against the request, where it can be
                match super::evaluated::verdict(g, x, &m, &on) {
                    super::evaluated::Verdict::Denies(found) => {
                        self.findings.push(found);
                        self.local_stuck.push(x);
                    }
                    super::evaluated::Verdict::Admits => {}
                    super::evaluated::Verdict::MayDeny(found) => self.findings.push(found),
                }
            } else if m.may_deny() {
                self.findings.push(may_deny(g, x, &m, &on));
            } else {
                self.findings.push(params_going(g, x, &m, &on));
            }
        }
    }
}

/// Interceptors grouped by their configuration, in the order first met: one finding (or note)
/// per configuration, however many of its webhooks intercept the request.
fn by_configuration<'a>(found: impl IntoIterator<Item = &'a Interceptor>) -> Vec<Vec<&'a Interceptor>> {
    let mut at: HashMap<NodeId, usize> = HashMap::new();
    let mut out: Vec<Vec<&Interceptor>> = Vec::new();
    for i in found {
        let k = *at.entry(i.configuration).or_insert_with(|| {
            out.push(Vec::new());
            out.len() - 1
        });
        out[k].push(i);
    }
    out
}

/// How many webhook names a message lists before it says how many more there are.
pub(super) const NAMED: usize = 3;

/// The first [`NAMED`] of `items`, and how many more there are: `a, b, c and 7 more`.
pub(super) fn some_of(items: &[impl AsRef<str>]) -> String {
    let named: Vec<&str> = items.iter().take(NAMED).map(AsRef::as_ref).collect();
    first_of(&named, items.len())
}

/// [`some_of`] for `total` items of which the caller made only the first [`NAMED`] (`first`):
/// a list of 40,000 is not written out to name three.
pub(super) fn first_of(first: &[impl AsRef<str>], total: usize) -> String {
    let named = first.iter().take(NAMED).map(AsRef::as_ref).collect::<Vec<_>>().join(", ");
    match total.saturating_sub(NAMED) {
        0 => named,
        more => format!("{named} and {more} more"),
    }
}

/// `ValidatingWebhookConfiguration x (webhook a)`, or `(webhooks a, b, c and 7 more)`.
fn describe_hooks(g: &Graph, hooks: &[&Interceptor]) -> String {
    let names: Vec<&str> = hooks.iter().map(|i| i.webhook.as_str()).collect();
    let list = some_of(&names);
    format!("{} (webhook{} {list})", describe(g, hooks[0].configuration), if hooks.len() > 1 { "s" } else { "" })
}

/// What the admission check could not judge for the target, in its finalizers' evidence (once
/// they are all reported): a webhook intercepting the UPDATE that removes them whose backend
/// cannot be judged, and webhook configurations that could not be read at all — then whether
/// a webhook rejects that UPDATE is unknown, and the answer must not read as if none did.
pub fn note_unjudged(g: &Graph, index: &Index, target: NodeId, finalizers: &mut [super::FinalizerReport]) {
    let Some(o) = g.object(target) else { return };
    if !o.is_deleting() || o.finalizers.is_empty() || o.group() == "admissionregistration.k8s.io" {
        return;
    }
    let mut notes = Vec::new();
    let found = index.interceptors(g, target, Operation::Update);
    for hooks in by_configuration(found.iter().filter(|i| matches!(i.backend, Backend::Unknown(_)))) {
        let i = hooks[0];
        notes.push(format!(
            "{} intercept{} UPDATE of {} with failurePolicy Fail, and {} backend cannot be judged ({}{}): if it does not answer, the finalizer's removal is rejected",
            describe_hooks(g, &hooks),
            if hooks.len() > 1 { "" } else { "s" },
            describe(g, target),
            if hooks.len() > 1 { "the first one's" } else { "its" },
            i.backend.describe(&i.target),
            if hooks.len() > 1 { format!("; {} webhooks in all", hooks.len()) } else { String::new() },
        ));
    }
    let unread: Vec<&str> = ["validatingwebhookconfigurations", "mutatingwebhookconfigurations"]
        .into_iter()
        .filter(|r| backend::unread(g, "admissionregistration.k8s.io", r))
        .collect();
    if !unread.is_empty() {
        notes.push(format!(
            "admission webhooks: Unknown — {} could not be read, so whether a webhook rejects the UPDATE that removes the finalizer from {} is not known",
            unread.join(" and "),
            describe(g, target)
        ));
    }
    let unread: Vec<&str> = crate::admission::policies::Kind::ALL
        .into_iter()
        .flat_map(|k| k.resources())
        .filter(|r| backend::unread(g, crate::admission::policies::GROUP, r))
        .collect();
    if !unread.is_empty() {
        notes.push(format!(
            "admission policies: Unknown — {} could not be read, so whether a policy denies the UPDATE that removes the finalizer from {} is not known",
            unread.join(" and "),
            describe(g, target)
        ));
    }
    for f in finalizers {
        f.owner.evidence.extend(notes.iter().cloned());
    }
}

/// A core Pod.
fn is_pod(o: &Object) -> bool {
    o.kind == "Pod" && o.group().is_empty()
}

/// The request still to come for `x`, which is not being deleted: the namespace controller's
/// DELETE (its namespace is terminating), or the garbage collector's once no solid owner is
/// left (an owner being deleted, and not orphaning it, while no other owner holds it), or,
/// where an owner deleted in the foreground waits for it and another owner holds it, the GC's
/// PATCH that removes the waiting reference (an UPDATE: attemptToDeleteItem with solid owners
/// left). None when every reference does not resolve: the GC never acts on it then.
fn request_to_come(g: &Graph, o: &Object, x: NodeId) -> Option<Operation> {
    if o.namespace.as_deref().is_some_and(|ns| backend::namespace_terminating(g, ns)) {
        return Some(Operation::Delete);
    }
    let states: Vec<OwnerState> = o.owner_references.iter().map(|r| classify_reference(g, x, r)).collect();
    if states.iter().any(OwnerState::is_error) {
        return None;
    }
    let owners: Vec<&Object> = g.owner_nodes(x).iter().filter_map(|&p| g.object(p)).collect();
    if owners.iter().any(|p| p.is_deleting() && !p.has_finalizer(ORPHAN)) && !owners.iter().any(|p| !p.is_deleting()) {
        return Some(Operation::Delete);
    }
    (states.contains(&OwnerState::Solid) && states.contains(&OwnerState::Waiting)).then_some(Operation::Update)
}

/// `AdmissionWebhookUnavailable` for the dead interceptors of one configuration on one object.
fn unavailable(g: &Graph, x: NodeId, hooks: &[&Interceptor]) -> Finding {
    let o = g.object(x).expect("explained objects are observed");
    // one that surely intercepts speaks for the configuration, if there is one
    let i = hooks.iter().find(|h| h.caveats.is_empty()).copied().unwrap_or(hooks[0]);
    let what = match i.operation {
        Operation::Update if !o.is_deleting() => {
            "the garbage collector's PATCH that removes its reference to the owner being deleted in the foreground, which waits for it".into()
        }
        Operation::Update => format!(
            "the UPDATE that removes {} (its controller's patch, and any patch printed here)",
            o.finalizers.join(", ")
        ),
        Operation::Delete if o.is_deleting() && is_pod(o) => {
            "the kubelet's final DELETE (grace period 0) that removes the pod once its containers have stopped, and any later delete, even with --force".into()
        }
        Operation::Delete => {
            "the DELETE that removes it (the namespace controller's, the garbage collector's, and kubectl's)".into()
        }
    };
    let mut message = format!(
        "{} intercept{} {} of {} with failurePolicy Fail, and {} cannot serve: {}{}. Every such request is rejected: {what}",
        describe_hooks(g, hooks),
        if hooks.len() > 1 { "" } else { "s" },
        i.operation.as_str(),
        describe(g, x),
        if hooks.len() > 1 { "their backends" } else { "its backend" },
        i.backend.describe(&i.target),
        if hooks.len() > 1 {
            format!(" (webhook {}; {} webhooks in all)", i.webhook, hooks.len())
        } else {
            String::new()
        },
    );
    if !i.caveats.is_empty() {
        // every one of them may not be called
        message.push_str(&format!(" (it may not apply: {})", i.caveats.join("; ")));
    }
    // the pod is its own webhook's backend and nothing replaces it while it remains
    let held = is_pod(o).then(|| hooks.iter().find_map(|h| serves_itself(g, x, o, &h.target))).flatten();
    if let Some(why) = &held {
        message.push_str(&format!(". It holds itself: {why}"));
    }
    let conf = g.identity(i.configuration);
    let conf_resource = conf.kind.to_lowercase();
    let mut remedy = vec![Step::run(
        Reach::Inspect,
        format!("Read the webhook configuration {}: which webhook, which backend.", conf.name),
        Command::kubectl(["get"]).arg(conf_resource.clone()).arg(conf.name).flag("-o", "yaml"),
    )];
    remedy.extend(backend_steps(hooks, held.is_some()));
    remedy.push(Step::run(
        Reach::Disrupt,
        "If its operator is gone for good (or, knowingly, until the backend is back), take the stale configuration out of the path. This turns off whatever it enforced for every object it covers; re-applying its manifest restores it. Webhook configurations are never themselves subject to webhooks, so this delete is not rejected.",
        Command::kubectl(["delete"]).arg(conf_resource).arg(conf.name),
    ));
    let mut related = vec![Related::Node(i.configuration)];
    for s in hooks.iter().filter_map(|h| h.backend.service()) {
        if !related.contains(&Related::Node(s)) {
            related.push(Related::Node(s));
        }
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

/// What restores each distinct backend of `hooks`, the first few (the configuration's removal
/// covers the rest); `held`: the pod asked about is its own webhook's backend.
fn backend_steps(hooks: &[&Interceptor], held: bool) -> Vec<Step> {
    let mut steps = Vec::new();
    // each distinct backend once (the first few: the configuration's removal covers the rest)
    let mut backends: Vec<(&Target, &Backend)> = Vec::new();
    for h in hooks {
        if backends.len() < NAMED && !backends.iter().any(|(t, _)| *t == &h.target) {
            backends.push((&h.target, &h.backend));
        }
    }
    for (target, backend) in backends {
        let Target::Service { namespace, name, .. } = target else { continue };
        match backend {
            Backend::NamespaceTerminating { namespace: dying, .. } => steps.push(Step::advice(
                Reach::Inspect,
                format!(
                    "Its backend cannot be restored where it was: namespace {dying} is being deleted and nothing can be created in it. Run the webhook's server in another namespace and point the configuration at it, or remove the configuration."
                ),
            )),
            Backend::NoSuchPort { port, .. } => {
                steps.push(Step::run(
                    Reach::Inspect,
                    format!(
                        "Compare the ports of Service {namespace}/{name} with the webhook's clientConfig.service.port ({port})."
                    ),
                    Command::kubectl(["get"]).arg("service").arg(name.as_str()).namespace(Some(namespace)).flag("-o", "yaml"),
                ));
                steps.push(Step::advice(
                    Reach::Restore,
                    format!(
                        "Expose port {port} on Service {namespace}/{name} again, or point the webhook's clientConfig.service.port at a port it exposes; the rejected requests then succeed on their next retry."
                    ),
                ));
            }
            _ if held => steps.push(Step::advice(
                Reach::Inspect,
                format!(
                    "Its backend cannot come back by itself: this pod is behind Service {namespace}/{name}, and its replacement waits for it to go. Run the webhook's server elsewhere and point the configuration at it, or take the configuration out of the path (below); then the pod goes and is replaced."
                ),
            )),
            _ => {
                steps.push(Step::run(
                    Reach::Inspect,
                    format!("See why Service {namespace}/{name} has no ready endpoint (its pods, their events)."),
                    Command::kubectl(["describe"]).arg("service").arg(name.as_str()).namespace(Some(namespace)),
                ));
                steps.push(Step::advice(
                    Reach::Restore,
                    format!(
                        "Restore the webhook's backend (Service {namespace}/{name} and ready pods behind it); the rejected requests then succeed on their next retry."
                    ),
                ));
            }
        }
    }
    steps
}

/// What `op` is, for `x`, in a message.
pub(super) fn request(g: &Graph, x: NodeId, o: &Object, op: Operation) -> String {
    match op {
        Operation::Update if !o.is_deleting() => format!(
            "the garbage collector's PATCH that removes the reference {} holds to an owner being deleted in the foreground",
            describe(g, x)
        ),
        Operation::Update => format!("the UPDATE that removes {} from {}", o.finalizers.join(", "), describe(g, x)),
        Operation::Delete if o.is_deleting() && is_pod(o) => {
            format!("the kubelet's final DELETE (grace period 0) of {}", describe(g, x))
        }
        Operation::Delete => format!("the DELETE that removes {}", describe(g, x)),
    }
}

/// `kubectl get <resource> <name> -o yaml`, to read a configuration, policy or binding.
pub(super) fn read_it(g: &Graph, n: NodeId, why: &str) -> Step {
    let id = g.identity(n);
    Step::run(
        Reach::Inspect,
        format!("Read {} {}: {why}", id.kind, id.name),
        Command::kubectl(["get"]).arg(id.kind.to_lowercase()).arg(id.name).flag("-o", "yaml"),
    )
}

/// Why pod `x` is the backend of the webhook calling `target` and cannot make room for one
/// that serves: the Service's selector matches the pod's labels, and the pod's workload brings
/// up a replacement only once it is gone (a StatefulSet, a DaemonSet, none: a bare pod) or is
/// being deleted itself. A ReplicaSet's replacement starts at once and serves again.
fn serves_itself(g: &Graph, x: NodeId, o: &Object, target: &Target) -> Option<String> {
    let Target::Service { namespace, name, .. } = target else { return None };
    if o.namespace.as_deref() != Some(namespace.as_str()) {
        return None;
    }
    let svc = g.find("", "Service", Some(namespace), name).and_then(|s| g.object(s))?;
    let selector = svc.field("/spec/selector").and_then(serde_json::Value::as_object).filter(|m| !m.is_empty())?;
    if !selector.iter().all(|(k, v)| o.label(k) == v.as_str()) {
        return None;
    }
    let workload = g.controller_of(x).filter(|&c| g.object(c).is_some());
    let waits = match workload {
        None => Some("nothing replaces a bare pod".to_string()),
        Some(w) => {
            let (kind, deleting) = (g.identity(w).kind, g.object(w).is_some_and(|o| o.is_deleting()));
            match kind {
                _ if deleting => Some(format!("{} is being deleted, so no replacement comes", describe(g, w))),
                "StatefulSet" | "DaemonSet" => {
                    Some(format!("{} brings up its replacement only once it is gone", describe(g, w)))
                }
                _ => None,
            }
        }
    }?;
    Some(format!(
        "{} is behind Service {namespace}/{name} itself (its selector matches the pod's labels), so the webhook it serves rejects its own removal, and {waits}",
        describe(g, x)
    ))
}

/// Any step that removes a finalizer of an object whose UPDATE a dead webhook rejects says so,
/// and goes after the webhook's own steps (it is Destructive; they are at most Disrupt).
pub fn warn_rejected_patches(g: &Graph, index: &Index, findings: &mut [Finding]) {
    // object → the configurations whose dead webhooks reject its UPDATEs, each once, in order
    let mut blocked: HashMap<NodeId, Vec<NodeId>> = HashMap::new();
    for f in findings.iter().filter(|f| f.code == FindingCode::AdmissionWebhookUnavailable) {
        if let (Some(Related::Node(c)), true) = (f.related.first(), g.object(f.object).is_some_and(|o| o.is_deleting()))
        {
            let confs = blocked.entry(f.object).or_default();
            if !confs.contains(c) {
                confs.push(*c);
            }
        }
    }
    // object → who was seen denying its finalizers' removal
    let mut denied: HashMap<NodeId, NodeId> = HashMap::new();
    for f in findings.iter().filter(|f| f.code == FindingCode::AdmissionDenied && f.severity == Severity::Error) {
        if let Some(d) = index.denials(g, f.object, Operation::Update).first() {
            denied.entry(f.object).or_insert(d.by);
        } else if let Some(m) = index.policies(g, f.object, Operation::Update).iter().find(|m| m.denies()) {
            denied.entry(f.object).or_insert(m.policy);
        } else if let Some(Related::Node(p)) = f.related.first() {
            // a policy whose CEL, evaluated, denies (`evaluated`)
            denied.entry(f.object).or_insert(*p);
        }
    }
    // object → the first mutator that puts a finalizer back on its finalizer removal
    let mut readded: HashMap<NodeId, NodeId> = HashMap::new();
    for f in findings.iter().filter(|f| f.code == FindingCode::FinalizerReAdded) {
        if let Some(Related::Node(c)) = f.related.first() {
            readded.entry(f.object).or_insert(*c);
        }
    }
    let mut patches: HashMap<NodeId, (HashSet<Command>, String)> = HashMap::new();
    for f in findings.iter_mut() {
        let (confs, by, mutated) = (blocked.get(&f.object), denied.get(&f.object), readded.get(&f.object));
        if confs.is_none() && by.is_none() && mutated.is_none() {
            continue;
        }
        let (commands, sentence) = patches.entry(f.object).or_insert_with(|| {
            let (commands, mut sentence) = match confs {
                Some(confs) => rejected_patches(g, f.object, confs),
                None => (rejected_patches(g, f.object, &[]).0, String::new()),
            };
            if let Some(&by) = by {
                sentence.push_str(&format!(
                    " Until {} allows it, this patch is denied like the controller's.",
                    describe(g, by)
                ));
            }
            if let Some(&m) = mutated {
                sentence.push_str(&format!(
                    " Until {} no longer puts a finalizer back on it (the step above), this patch is refused like the controller's.",
                    describe(g, m)
                ));
            }
            (commands, sentence)
        });
        for s in &mut f.remedy {
            if s.command.as_ref().is_some_and(|c| commands.contains(c)) {
                s.append(sentence);
            }
        }
    }
}

/// The patches that would remove `x`'s finalizers, and what to say on each: which
/// configurations reject them until their backends serve again.
fn rejected_patches(g: &Graph, x: NodeId, confs: &[NodeId]) -> (HashSet<Command>, String) {
    let fins = g.object(x).map(|o| o.finalizers.as_slice()).unwrap_or_default();
    let commands =
        fins.iter().enumerate().filter_map(|(i, fin)| remedy::remove_finalizer_at(g, x, Some(i), fin)).collect();
    let named: Vec<String> = confs.iter().take(NAMED).map(|&c| describe(g, c)).collect();
    let sentence = match confs.len() {
        1 => format!(
            " Until {}'s backend serves again or the configuration is removed, this patch is rejected like the controller's.",
            named[0]
        ),
        n => format!(
            " Until the backends of {}{} serve again or those configurations are removed, this patch is rejected like the controller's.",
            named.join(", "),
            if n > NAMED { format!(" and {} more configurations", n - NAMED) } else { String::new() }
        ),
    };
    (commands, sentence)
}

#[cfg(test)]
#[path = "admission_tests.rs"]
mod tests;

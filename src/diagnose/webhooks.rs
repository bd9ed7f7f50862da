//! Admission webhooks that reject the requests a deletion needs.
//!
//! A finalizer leaves through an UPDATE (its controller's patch, or a printed `kubectl patch`);
//! an object that a namespace or an owner's deletion still has to remove leaves through a
//! DELETE (the namespace controller's, the garbage collector's). A Validating- or
//! MutatingWebhookConfiguration whose webhook intercepts that request with
//! `failurePolicy: Fail` (the v1 default) and whose backend cannot serve rejects it, every time.
//!
//! Which webhooks are called mirrors the API server (`admission/plugin/webhook`):
//! `predicates/rules.Matcher` (scope, operations incl. `*`, apiGroups, apiVersions,
//! resources with `res/sub` and `*`), `predicates/namespace` (the namespace's labels; a
//! Namespace is matched on its own labels; cluster-scoped objects always match),
//! `predicates/object` (the object's labels, old or new) and `matchConditions` (CEL, not
//! evaluated here: a webhook with conditions "may match", and the answer says so). Requests
//! for webhook configurations themselves are exempt (`IsExemptAdmissionConfigurationResource`).
//! `matchPolicy: Equivalent` (the v1 default) also sends requests made through another
//! version of the same resource, so apiVersions are then not compared: the version a
//! controller uses is not known.

use serde_json::Value;

use super::backend::{self, Backend, Target};
use super::step::{Command, Reach, Step};
use super::{Explainer, Finding, FindingCode, Related, Severity, Subject, describe, remedy};
use crate::graph::{Graph, NodeId};
use crate::snapshot::Object;

/// The request a deletion needs from the API server.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operation {
    /// Removing a finalizer (a patch is an UPDATE to admission).
    Update,
    /// `DELETE` of the object (the namespace controller's and the GC's deletions too).
    Delete,
}

impl Operation {
    /// As admission's `rules[].operations` spell it (`UPDATE`, `DELETE`).
    pub fn as_str(self) -> &'static str {
        match self {
            Operation::Update => "UPDATE",
            Operation::Delete => "DELETE",
        }
    }
}

/// Whether a webhook's rules and selectors send the request to it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Match {
    /// The rules or a selector leave the request out.
    No,
    /// Every rule and selector matches.
    Yes,
    /// Matches as far as can be told; the strings say what could not be evaluated.
    Maybe(Vec<String>),
}

/// One webhook that intercepts the request with `failurePolicy: Fail`.
#[derive(Clone, Debug)]
pub struct Interceptor {
    /// The Validating- or MutatingWebhookConfiguration.
    pub configuration: NodeId,
    /// The webhook's `name` within it.
    pub webhook: String,
    /// The request it intercepts.
    pub operation: Operation,
    /// Where its `clientConfig` points.
    pub target: Target,
    /// The judged state of that backend: a dead one rejects the request.
    pub backend: Backend,
    /// What could not be evaluated (matchConditions, labels not read).
    pub caveats: Vec<String>,
}

impl Interceptor {
    /// `ValidatingWebhookConfiguration ledger-policy (webhook accounts.ledger…)`.
    pub fn describe(&self, g: &Graph) -> String {
        format!("{} (webhook {})", describe(g, self.configuration), self.webhook)
    }
}

/// The `failurePolicy: Fail` webhooks that intercept `op` on object `x`, with their backends.
pub fn interceptors(g: &Graph, x: NodeId, op: Operation) -> Vec<Interceptor> {
    let Some(o) = g.object(x) else { return Vec::new() };
    if o.group() == "admissionregistration.k8s.io" {
        return Vec::new();
    }
    let Some(t) = g.mapper().kind(o.group(), &o.kind) else { return Vec::new() };
    let mut out = Vec::new();
    for kind in ["ValidatingWebhookConfiguration", "MutatingWebhookConfiguration"] {
        for &c in g.of_kind("admissionregistration.k8s.io", kind) {
            let Some(conf) = g.object(c) else { continue };
            for w in conf.body.get("webhooks").and_then(Value::as_array).into_iter().flatten() {
                // v1 defaults failurePolicy to Fail
                if w.get("failurePolicy").and_then(Value::as_str).unwrap_or("Fail") != "Fail" {
                    continue;
                }
                let caveats = match webhook_matches(g, w, o, &t.plural, t.namespaced, op) {
                    Match::No => continue,
                    Match::Yes => Vec::new(),
                    Match::Maybe(c) => c,
                };
                let target = backend::target_of(w.get("clientConfig"));
                out.push(Interceptor {
                    configuration: c,
                    webhook: w.get("name").and_then(Value::as_str).unwrap_or("").to_string(),
                    operation: op,
                    backend: backend::judge(g, &target),
                    target,
                    caveats,
                });
            }
        }
    }
    out
}

/// Rules, then namespaceSelector, objectSelector and matchConditions, as the API server does.
pub fn webhook_matches(g: &Graph, w: &Value, o: &Object, plural: &str, namespaced: bool, op: Operation) -> Match {
    let exact = w.get("matchPolicy").and_then(Value::as_str) == Some("Exact");
    let rules = w.get("rules").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
    if !rules.iter().any(|r| rule_matches(r, o, plural, namespaced, op, exact)) {
        return Match::No;
    }
    let mut caveats = Vec::new();
    // namespaceSelector: a Namespace by its own labels, namespaced objects by their namespace's
    let ns_labels: Option<Option<&[(String, String)]>> = if o.kind == "Namespace" && o.group().is_empty() {
        Some(Some(&o.labels))
    } else {
        o.namespace
            .as_ref()
            .map(|ns| g.find("", "Namespace", None, ns).and_then(|n| g.object(n)).map(|n| n.labels.as_slice()))
    };
    // cluster-scoped objects other than namespaces always match a namespaceSelector
    if let Some(labels) = ns_labels {
        match selector_matches(w.get("namespaceSelector"), labels) {
            Some(false) => return Match::No,
            Some(true) => {}
            None => caveats.push(format!(
                "the namespace {}'s labels were not read, so its namespaceSelector may or may not match",
                o.namespace_str()
            )),
        }
    }
    // objectSelector: the snapshot keeps labels of objects being deleted and of the kinds whose
    // body it reads; other objects' labels may have been dropped
    let labels_kept =
        o.is_deleting() || crate::snapshot::object::keeps_body(o.group(), &o.kind) || !o.labels.is_empty();
    match selector_matches(w.get("objectSelector"), labels_kept.then_some(o.labels.as_slice())) {
        Some(false) => return Match::No,
        None => caveats.push("the object's labels were not read, so its objectSelector may or may not match".into()),
        Some(true) => {}
    }
    if let Some(conds) = w.get("matchConditions").and_then(Value::as_array).filter(|c| !c.is_empty()) {
        let names: Vec<&str> = conds.iter().filter_map(|c| c.get("name").and_then(Value::as_str)).collect();
        caveats.push(format!(
            "its matchConditions ({}) are CEL expressions not evaluated here: it may not be called",
            names.join(", ")
        ));
    }
    if caveats.is_empty() { Match::Yes } else { Match::Maybe(caveats) }
}

/// `predicates/rules.Matcher`: scope, operation, group, version (Exact only), resource.
fn rule_matches(r: &Value, o: &Object, plural: &str, namespaced: bool, op: Operation, exact: bool) -> bool {
    let list = |k: &str| -> Vec<&str> {
        r.get(k).and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str).collect()
    };
    let any_of = |items: &[&str], want: &str| items.iter().any(|i| *i == "*" || *i == want);
    let is_namespace = o.kind == "Namespace" && o.group().is_empty();
    let scope_ok = match r.get("scope").and_then(Value::as_str).unwrap_or("*") {
        "*" => true,
        "Namespaced" => namespaced && !is_namespace,
        "Cluster" => !namespaced || is_namespace,
        _ => false,
    };
    let ops = list("operations");
    let op_ok = ops.iter().any(|x| *x == "*" || *x == op.as_str());
    let version_ok = !exact || any_of(&list("apiVersions"), o.version());
    // the request is on the main resource: no subresource
    let resource_ok = list("resources").iter().any(|res| {
        let (res, sub) = res.split_once('/').unwrap_or((res, ""));
        (res == "*" || res == plural) && (sub == "*" || sub.is_empty())
    });
    scope_ok && op_ok && any_of(&list("apiGroups"), o.group()) && version_ok && resource_ok
}

/// A LabelSelector against labels: Some(bool) when it can be evaluated, None when the labels
/// were not read (an empty or absent selector matches everything, read or not).
pub fn selector_matches(sel: Option<&Value>, labels: Option<&[(String, String)]>) -> Option<bool> {
    let Some(sel) = sel.filter(|s| s.as_object().is_some_and(|m| m.values().any(|v| !is_empty(v)))) else {
        return Some(true);
    };
    let labels = labels?;
    let get = |k: &str| labels.iter().find(|(lk, _)| lk == k).map(|(_, v)| v.as_str());
    for (k, v) in sel.get("matchLabels").and_then(Value::as_object).into_iter().flatten() {
        if get(k) != v.as_str() {
            return Some(false);
        }
    }
    for e in sel.get("matchExpressions").and_then(Value::as_array).into_iter().flatten() {
        let key = e.get("key").and_then(Value::as_str).unwrap_or("");
        let values: Vec<&str> =
            e.get("values").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str).collect();
        let ok = match (e.get("operator").and_then(Value::as_str).unwrap_or(""), get(key)) {
            ("In", Some(v)) => values.contains(&v),
            ("In", None) => false,
            ("NotIn", Some(v)) => !values.contains(&v),
            ("NotIn", None) => true,
            ("Exists", v) => v.is_some(),
            ("DoesNotExist", v) => v.is_none(),
            // an invalid operator: the API server would have refused the configuration
            _ => false,
        };
        if !ok {
            return Some(false);
        }
    }
    Some(true)
}

fn is_empty(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::Object(m) => m.is_empty(),
        Value::Array(a) => a.is_empty(),
        _ => false,
    }
}

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
#[path = "webhooks_tests.rs"]
mod tests;

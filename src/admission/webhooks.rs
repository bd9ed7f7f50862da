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

use super::backend::{Backend, Target};
use super::describe;
use super::selector::selector_matches;
use crate::graph::{Graph, NodeId};
use crate::snapshot::Object;

/// The request a deletion needs from the API server.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
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

/// The `failurePolicy: Fail` webhooks that intercept `op` on object `x`, with their backends
/// (one question; an answer asking many keeps an [`Index`](super::index::Index)).
pub fn interceptors(g: &Graph, x: NodeId, op: Operation) -> Vec<Interceptor> {
    super::index::Index::new(g).interceptors(g, x, op).to_vec()
}

/// Rules, then namespaceSelector, objectSelector and matchConditions, as the API server does.
pub fn webhook_matches(g: &Graph, w: &Value, o: &Object, plural: &str, namespaced: bool, op: Operation) -> Match {
    let exact = w.get("matchPolicy").and_then(Value::as_str) == Some("Exact");
    let rules = w.get("rules").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
    if !rules.iter().any(|r| rule_matches(r, o, plural, namespaced, op, exact)) {
        return Match::No;
    }
    let Some(mut caveats) = selectors_match(g, w, o) else { return Match::No };
    if let Some(conds) = w.get("matchConditions").and_then(Value::as_array).filter(|c| !c.is_empty()) {
        let names: Vec<&str> = conds.iter().filter_map(|c| c.get("name").and_then(Value::as_str)).collect();
        caveats.push(format!(
            "its matchConditions ({}) are CEL expressions not evaluated here: it may not be called",
            names.join(", ")
        ));
    }
    if caveats.is_empty() { Match::Yes } else { Match::Maybe(caveats) }
}

/// `namespaceSelector` and `objectSelector` of `holder` (a webhook, a policy's
/// `matchConstraints`, a binding's `matchResources`) on `o`, as the API server's
/// `predicates/namespace` and `predicates/object` do: None when one leaves the request out,
/// else what could not be evaluated (labels not read).
pub fn selectors_match(g: &Graph, holder: &Value, o: &Object) -> Option<Vec<String>> {
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
        match selector_matches(holder.get("namespaceSelector"), labels) {
            Some(false) => return None,
            Some(true) => {}
            None => caveats.push(format!(
                "the namespace {}'s labels were not read, so its namespaceSelector may or may not match",
                o.namespace_str()
            )),
        }
    }
    // objectSelector: the snapshot keeps labels of objects being deleted and of the kinds whose
    // body it reads; other objects' labels may have been dropped
    match selector_matches(holder.get("objectSelector"), labels_kept(o).then_some(o.labels.as_slice())) {
        Some(false) => return None,
        None => caveats.push("the object's labels were not read, so its objectSelector may or may not match".into()),
        Some(true) => {}
    }
    Some(caveats)
}

/// Whether the snapshot kept `o`'s labels: those of objects being deleted and of the kinds
/// whose body it reads; other objects' labels may have been dropped (none left means unknown).
pub fn labels_kept(o: &Object) -> bool {
    o.is_deleting() || crate::snapshot::object::keeps_body(o.group(), &o.kind) || !o.labels.is_empty()
}

/// `predicates/rules.Matcher`: scope, operation, group, version (Exact only), resource.
pub(super) fn rule_matches(r: &Value, o: &Object, plural: &str, namespaced: bool, op: Operation, exact: bool) -> bool {
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

#[cfg(test)]
#[path = "webhooks_tests.rs"]
mod tests;

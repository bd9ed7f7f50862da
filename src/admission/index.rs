//! The `failurePolicy: Fail` webhooks indexed by what they intercept, built once per answer.
//!
//! A cluster may hold thousands of webhooks (one configuration of 5,000 was seen), and an answer
//! asks about many requests (every object of a namespace, every step of a plan). Scanning every
//! webhook for every request is quadratic; here each webhook is filed once under each (API
//! group, resource, operation) its rules name, wildcards under `*`, so a request looks at the
//! webhooks filed under its own group and resource or a wildcard, and only those are matched in
//! full ([`webhooks::webhook_matches`]). Each backend is judged once ([`Backends`]).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use serde_json::Value;

use super::backend::{self, Backends, Target};
use super::denials::{Denial, Denials, Denier};
use super::policies::{Policies, PolicyMatch};
use super::readds::{ReAdded, Refusals};
use super::webhooks::{self, Interceptor, Match, Operation};
use crate::graph::{Graph, NodeId};

/// One webhook with `failurePolicy: Fail` (the v1 default).
struct Hook {
    /// Its Validating- or MutatingWebhookConfiguration.
    configuration: NodeId,
    /// Its place in the configuration's `webhooks`.
    position: usize,
    /// Its `name`.
    name: String,
    /// Where its `clientConfig` points.
    target: Target,
}

/// (apiGroup, resource, operation) as a rule names them; `*` kept as written.
type Key = (String, String, Operation);

/// What a request's match depends on besides the webhooks: the object's apiVersion and kind,
/// its namespace (whose labels a namespaceSelector reads), whether its labels were kept and
/// which they are (objectSelector), and the operation. Objects alike in all of these (a
/// namespace's thousand ConfigMaps) are matched once.
type Asked = (String, String, Option<String>, bool, Vec<(String, String)>, Operation);

/// The webhooks that may reject a request, found without scanning the others.
#[derive(Default)]
pub struct Index {
    hooks: Vec<Hook>,
    /// Positions in `hooks`, ascending, each once per key.
    by_key: HashMap<Key, Vec<usize>>,
    backends: Backends,
    answered: Mutex<HashMap<Asked, Arc<Vec<Interceptor>>>>,
    /// The admission policies with their bindings.
    policies: Policies,
    /// The denials quoted in Events, read on first use (one pass over the Events).
    denials: OnceLock<Denials>,
    /// The refusals of finalizer removals a mutation undid, read on first use.
    refusals: OnceLock<Refusals>,
}

impl Index {
    /// Files every `failurePolicy: Fail` webhook of `g`'s webhook configurations, Validating
    /// ones first, each configuration's webhooks in order (the order answers name them in).
    pub fn new(g: &Graph) -> Index {
        let mut index = Index { policies: Policies::new(g), ..Index::default() };
        for kind in ["ValidatingWebhookConfiguration", "MutatingWebhookConfiguration"] {
            for &c in g.of_kind("admissionregistration.k8s.io", kind) {
                let Some(conf) = g.object(c) else { continue };
                for (position, w) in
                    conf.body.get("webhooks").and_then(Value::as_array).into_iter().flatten().enumerate()
                {
                    if w.get("failurePolicy").and_then(Value::as_str).unwrap_or("Fail") != "Fail" {
                        continue;
                    }
                    let id = index.hooks.len();
                    index.hooks.push(Hook {
                        configuration: c,
                        position,
                        name: w.get("name").and_then(Value::as_str).unwrap_or("").to_string(),
                        target: backend::target_of(w.get("clientConfig")),
                    });
                    for key in keys(w) {
                        let ids = index.by_key.entry(key).or_default();
                        if ids.last() != Some(&id) {
                            ids.push(id);
                        }
                    }
                }
            }
        }
        index
    }

    /// The `failurePolicy: Fail` webhooks that intercept `op` on object `x`, with their
    /// backends, in the order the index files them.
    pub fn interceptors(&self, g: &Graph, x: NodeId, op: Operation) -> Arc<Vec<Interceptor>> {
        let Some(o) = g.object(x) else { return Arc::default() };
        // requests for webhook configurations themselves are never sent to webhooks
        if o.group() == "admissionregistration.k8s.io" || self.hooks.is_empty() {
            return Arc::default();
        }
        let asked: Asked = (
            o.api_version.clone(),
            o.kind.clone(),
            o.namespace.clone(),
            webhooks::labels_kept(o),
            o.labels.clone(),
            op,
        );
        if let Some(found) = self.answered.lock().unwrap_or_else(|e| e.into_inner()).get(&asked) {
            return found.clone();
        }
        let found = Arc::new(self.match_now(g, x, op));
        self.answered.lock().unwrap_or_else(|e| e.into_inner()).insert(asked, found.clone());
        found
    }

    fn match_now(&self, g: &Graph, x: NodeId, op: Operation) -> Vec<Interceptor> {
        let Some(o) = g.object(x) else { return Vec::new() };
        let Some(t) = g.mapper().kind(o.group(), &o.kind) else { return Vec::new() };
        let mut candidates: Vec<usize> = Vec::new();
        for group in [o.group(), "*"] {
            for resource in [t.plural.as_str(), "*"] {
                if let Some(ids) = self.by_key.get(&(group.to_string(), resource.to_string(), op)) {
                    candidates.extend(ids);
                }
            }
        }
        candidates.sort_unstable();
        candidates.dedup();
        let mut out = Vec::new();
        for id in candidates {
            let h = &self.hooks[id];
            let Some(w) =
                g.object(h.configuration).and_then(|c| c.body.get("webhooks")).and_then(|ws| ws.get(h.position))
            else {
                continue;
            };
            let caveats = match webhooks::webhook_matches(g, w, o, &t.plural, t.namespaced, op) {
                Match::No => continue,
                Match::Yes => Vec::new(),
                Match::Maybe(c) => c,
            };
            out.push(Interceptor {
                configuration: h.configuration,
                webhook: h.name.clone(),
                operation: op,
                backend: self.backends.judge(g, &h.target),
                target: h.target.clone(),
                caveats,
            });
        }
        out
    }

    /// The admission policies that apply to `op` on `x` (through each binding).
    pub fn policies(&self, g: &Graph, x: NodeId, op: Operation) -> Vec<PolicyMatch> {
        self.policies.matching(g, x, op)
    }

    /// The denials of `op` on `x` quoted in Events, most recent first.
    pub fn denials(&self, g: &Graph, x: NodeId, op: Operation) -> Vec<&Denial> {
        self.denials.get_or_init(|| Denials::new(g)).of(g, &self.policies, x, op)
    }

    /// The refusal of `x`'s finalizer removal because a mutation put a finalizer back, and
    /// who mutates that UPDATE (see [`super::readds`]).
    pub fn readded(&self, g: &Graph, x: NodeId) -> Option<ReAdded<'_>> {
        self.refusals.get_or_init(|| Refusals::new(g)).of(g, &self.policies, x)
    }

    /// A create refused in a namespace, quoted in a Warning about `x` since its deletion, and
    /// that namespace's name (see [`Refusals::create_refused`]).
    pub fn create_refused(&self, g: &Graph, x: NodeId) -> Option<(&str, &super::readds::Refusal)> {
        self.refusals.get_or_init(|| Refusals::new(g)).create_refused(g, x)
    }

    /// Who `message` quotes as denying a request (see [`Denials::quoted`]).
    pub fn quoted_denier(&self, g: &Graph, message: &str) -> Option<Denier> {
        self.denials.get_or_init(|| Denials::new(g)).quoted(g, message)
    }

    /// The backends judged so far, shared with other checks that call Services.
    pub fn backends(&self) -> &Backends {
        &self.backends
    }
}

/// Every (group, resource, operation) a webhook's rules name for the requests a deletion
/// sends: UPDATE and DELETE (`*` stands for both) on a main resource (a rule for a subresource
/// only, `pods/status`, never sees them).
fn keys(w: &Value) -> Vec<Key> {
    let list = |r: &Value, k: &str| -> Vec<String> {
        r.get(k).and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str).map(String::from).collect()
    };
    let mut out = Vec::new();
    for r in w.get("rules").and_then(Value::as_array).into_iter().flatten() {
        let ops = list(r, "operations");
        let ops: Vec<Operation> = [Operation::Update, Operation::Delete]
            .into_iter()
            .filter(|op| ops.iter().any(|x| x == "*" || x == op.as_str()))
            .collect();
        let resources: Vec<String> = list(r, "resources")
            .into_iter()
            .filter_map(|res| match res.split_once('/') {
                None => Some(res),
                Some((main, "*")) => Some(main.to_string()),
                Some(_) => None,
            })
            .collect();
        for group in list(r, "apiGroups") {
            for res in &resources {
                for &op in &ops {
                    out.push((group.clone(), res.clone(), op));
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::testing::{graph, node, obj};

    fn config(name: &str, uid: &str, rules: Value) -> Value {
        let mut c = obj("admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration", None, name, uid);
        c["webhooks"] = json!([{"name": format!("{name}.example.org"), "rules": rules,
            "clientConfig": {"service": {"namespace": "hooks", "name": "gone"}}}]);
        c
    }

    #[test]
    fn a_request_finds_the_webhooks_filed_under_its_resource_or_a_wildcard_in_order() {
        let g = graph(vec![
            obj("v1", "Namespace", None, "hooks", "ns-hooks"),
            obj("v1", "ConfigMap", Some("hooks"), "cm", "cm"),
            config(
                "exact",
                "c1",
                json!([{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["DELETE"], "resources": ["configmaps"]}]),
            ),
            config(
                "any-resource",
                "c2",
                json!([{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["*"], "resources": ["*"]}]),
            ),
            config(
                "any-group",
                "c3",
                json!([{"apiGroups": ["*"], "apiVersions": ["*"], "operations": ["DELETE"], "resources": ["configmaps/*"]}]),
            ),
            config(
                "pods",
                "c4",
                json!([{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["DELETE"], "resources": ["pods"]}]),
            ),
            config(
                "status-only",
                "c5",
                json!([{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["*"], "resources": ["configmaps/status"]}]),
            ),
            config(
                "update-only",
                "c6",
                json!([{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["UPDATE"], "resources": ["configmaps"]}]),
            ),
        ]);
        let index = Index::new(&g);
        let names = |op| -> Vec<String> {
            index.interceptors(&g, node(&g, "ConfigMap", "cm"), op).iter().map(|i| i.webhook.clone()).collect()
        };
        assert_eq!(
            names(Operation::Delete),
            // the graph's order of configurations (by name), as the unindexed scan gave
            ["any-group.example.org", "any-resource.example.org", "exact.example.org"].map(String::from)
        );
        assert_eq!(names(Operation::Update), ["any-resource.example.org", "update-only.example.org"].map(String::from));
    }

    #[test]
    fn every_webhook_calling_one_service_gets_one_verdict() {
        let g = graph(vec![
            obj("v1", "Namespace", None, "hooks", "ns-hooks"),
            obj("v1", "ConfigMap", Some("hooks"), "cm", "cm"),
            config(
                "a",
                "c1",
                json!([{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["DELETE"], "resources": ["configmaps"]}]),
            ),
            config(
                "b",
                "c2",
                json!([{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["DELETE"], "resources": ["configmaps"]}]),
            ),
        ]);
        let index = Index::new(&g);
        let found = index.interceptors(&g, node(&g, "ConfigMap", "cm"), Operation::Delete);
        let again = index.interceptors(&g, node(&g, "ConfigMap", "cm"), Operation::Delete);
        assert!(Arc::ptr_eq(&found, &again), "asked again: the same answer, not matched again");
        assert_eq!(found.len(), 2);
        assert!(found.iter().all(|i| i.backend == backend::Backend::ServiceMissing));
        assert_eq!(index.backends.judged_count(), 1);
    }
}

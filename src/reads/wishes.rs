//! The live reads the webhook, conversion and namespace checks need, as data, for the live
//! source's read plan (`source::live`); offline, all of it is ordinary snapshot objects.
//!
//! [`wanted`] is asked twice: first with what the read plan already holds (it may hold no webhook
//! configuration yet), then again once the configurations and CRDs are in, when it also names
//! the backends they call. Each round only adds reads; a read already answered is not repeated
//! by a source that de-duplicates on (group, resource, namespace, name, selector).
//!
//! What is read and why:
//! - every Validating- and MutatingWebhookConfiguration, full: they are few and small, and the
//!   rules, selectors and `clientConfig` decide whether a request is intercepted;
//! - the CRD of the target's kind and of the kinds in a terminating target namespace, full:
//!   `spec.conversion`, `spec.versions`, `status.storedVersions`;
//! - namespaces, with labels (metadata-only is enough): `namespaceSelector`, and whether a
//!   backend's namespace is terminating;
//! - for a PersistentVolume bound to a claim, the pods of the claim's namespace, full: which
//!   of them use the claim (`spec.volumes`) is what the volume waits for;
//! - the admission policies and their bindings, full, where there are any; then the params
//!   the bindings of ValidatingAdmissionPolicies name, metadata-only ([`params_wanted`]);
//! - for each Service a webhook or conversion webhook names (only those that could intercept the
//!   target or its namespace's content): the Service (full: `spec.type`) and its EndpointSlices
//!   by the label `kubernetes.io/service-name=<name>` (full: `endpoints[].conditions.ready`).
//!
//! Under partial RBAC a read that fails goes to `incomplete` with its resource name; the checks
//! then say the backend "cannot be judged" instead of calling it missing.

use crate::names::CRD;

use serde_json::Value;

use crate::admission::backend::{self, Target};
use crate::admission::conversion;
use crate::graph::{Graph, NodeId};

/// One GET or LIST the checks need.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Read {
    /// The API group; empty for the core group.
    pub group: String,
    /// The version read (`v1`).
    pub version: String,
    /// The plural resource name (`validatingwebhookconfigurations`).
    pub resource: String,
    /// None: cluster-scoped, or every namespace.
    pub namespace: Option<String>,
    /// Some: a GET of one object; None: a LIST.
    pub name: Option<String>,
    /// `labelSelector`, as written (`kubernetes.io/service-name=…`).
    pub label_selector: Option<String>,
    /// The whole object, not metadata-only.
    pub full: bool,
    /// Why the answer needs it, for the request log and `incomplete`.
    pub why: &'static str,
}

fn list(group: &str, version: &str, resource: &str, full: bool, why: &'static str) -> Read {
    Read {
        group: group.into(),
        version: version.into(),
        resource: resource.into(),
        namespace: None,
        name: None,
        label_selector: None,
        full,
        why,
    }
}

/// The reads for why-stuck on `target`, given what `g` already holds (see the module doc).
pub fn wanted(g: &Graph, target: NodeId) -> Vec<Read> {
    const ADM: &str = "admissionregistration.k8s.io";
    const WHY_HOOKS: &str = "admission webhooks that may reject the update or delete a deletion needs";
    let mut out = vec![
        list(ADM, "v1", "validatingwebhookconfigurations", true, WHY_HOOKS),
        list(ADM, "v1", "mutatingwebhookconfigurations", true, WHY_HOOKS),
        list("", "v1", "namespaces", false, "namespace labels for namespaceSelector; terminating backends"),
    ];
    out.extend(policies_wanted(g));
    let id = g.identity(target);
    // the kinds whose CRD matters: the target's, and everything in a terminating namespace
    let mut kinds: Vec<(String, String)> = vec![(id.group().to_string(), id.kind.to_string())];
    let is_namespace = id.kind == "Namespace" && id.group().is_empty();
    if is_namespace {
        for (_, o) in g.in_namespace(Some(id.name)) {
            kinds.push((o.group().to_string(), o.kind.clone()));
        }
    }
    kinds.sort();
    kinds.dedup();
    let mut crds: Vec<NodeId> = Vec::new();
    // built-in groups are served by the API server itself, never through a CRD
    let custom = |group: &str| !crate::discovery::builtin::BUILTINS.iter().any(|b| b.group == group);
    for (group, kind) in kinds.iter().filter(|(g, _)| custom(g)) {
        match conversion::crd_of(g, group, kind) {
            Some(c) => crds.push(c),
            // served at one version, its objects are never converted on their way to the
            // namespace controller or the garbage collector (`conversion::converter_judged_by`
            // asks for two served versions): the server's discovery says so without the CRD
            None if served_once(g, group, kind) => {}
            None => {
                // a CRD is named `<plural>.<group>`; without discovery the plural is unknown,
                // and then every CRD is read (a namespace's check reads them all anyway)
                let mut r = list(
                    "apiextensions.k8s.io",
                    "v1",
                    "customresourcedefinitions",
                    true,
                    "conversion webhook of the object's CRD",
                );
                // (a plural inferred from objects is a guess: it names no CRD)
                r.name = g
                    .mapper()
                    .kind(group, kind)
                    .filter(|t| t.origin != crate::discovery::Origin::Inferred)
                    .map(|t| format!("{}.{group}", t.plural));
                out.push(r);
            }
        }
    }
    if is_namespace {
        // a content failure may come from a CRD whose objects could not be listed at all
        out.push(list(
            "apiextensions.k8s.io",
            "v1",
            "customresourcedefinitions",
            true,
            "conversion webhooks of the namespace's content",
        ));
        crds.extend(g.of_kind(CRD.0, CRD.1).iter().copied());
    }
    out.extend(backends(g, &crds));
    // a bound volume waits for its claim, and the answer names the pods that use the claim
    if id.kind == "PersistentVolume"
        && id.group().is_empty()
        && let Some(ns) = g.object(target).and_then(|o| o.str_field("/spec/claimRef/namespace"))
    {
        let mut pods = list("", "v1", "pods", true, "the pods that use a bound volume's claim");
        pods.namespace = Some(ns.to_string());
        out.push(pods);
    }
    out
}

/// Whether the server's discovery serves `group`/`kind` at one version only (a CRD's served
/// versions are what discovery lists for it).
fn served_once(g: &Graph, group: &str, kind: &str) -> bool {
    g.mapper()
        .kind(group, kind)
        .is_some_and(|t| t.origin == crate::discovery::Origin::Discovery && t.versions.len() < 2)
}

/// The admission policies and their bindings, in full, where the lists read so far
/// (metadata-only) hold any: a ValidatingAdmissionPolicy or MutatingAdmissionPolicy applies
/// only through a binding, so a kind with no policy or no binding is not read again.
pub fn policies_wanted(g: &Graph) -> Vec<Read> {
    use crate::admission::policies::{GROUP, Kind};
    const WHY: &str = "admission policies that may deny the update or delete a deletion needs";
    let mut out = Vec::new();
    for kind in Kind::ALL {
        if g.of_kind(GROUP, kind.policy()).is_empty() || g.of_kind(GROUP, kind.binding()).is_empty() {
            continue;
        }
        for resource in kind.resources() {
            out.push(list(GROUP, "v1", resource, true, WHY));
        }
    }
    out.extend(params_wanted(g));
    out
}

/// The params the bindings of ValidatingAdmissionPolicies name, metadata-only (names and
/// labels are what `paramRef` finds them by): a binding whose params are missing fails to
/// configure, and denies, with `parameterNotFoundAction: Deny` (`admission::params`). Known
/// once the policies and bindings are read in full; a cluster-scoped paramKind is read with
/// every scope already, a namespaced one in the namespace `paramRef` names, else everywhere
/// (each request's own namespace is where its params are looked for).
pub fn params_wanted(g: &Graph) -> Vec<Read> {
    use crate::admission::policies::{GROUP, Kind};
    const WHY: &str = "the params an admission policy's binding names: missing, they may deny";
    let text = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).filter(|s| !s.is_empty()).map(str::to_string);
    let mut out: Vec<Read> = Vec::new();
    for &p in g.of_kind(GROUP, Kind::Validating.policy()) {
        let Some(pk) = g.object(p).and_then(|p| p.field("/spec/paramKind")) else { continue };
        let (Some(api_version), Some(kind)) = (text(pk, "apiVersion"), text(pk, "kind")) else { continue };
        let Ok(t) = g.mapper().rest_mapping(&api_version, &kind) else { continue };
        if !t.namespaced {
            continue;
        }
        let version = api_version.rsplit_once('/').map_or(api_version.as_str(), |(_, v)| v);
        let policy = g.identity(p).name;
        for &b in g.of_kind(GROUP, Kind::Validating.binding()) {
            let Some(spec) = g.object(b).and_then(|b| b.field("/spec")) else { continue };
            if text(spec, "policyName").as_deref() != Some(policy) {
                continue;
            }
            let Some(r) = spec.get("paramRef") else { continue };
            let mut read = list(&t.group, version, &t.plural, false, WHY);
            read.namespace = text(r, "namespace");
            if !out.contains(&read) {
                out.push(read);
            }
        }
    }
    out
}

/// The Services and EndpointSlices of the backends of every webhook configuration in `g` and
/// of every CRD's conversion webhook: what a capture holds so that any answer from it sees the
/// backends (the configurations and CRDs are in it already).
pub fn backends_of_all(g: &Graph) -> Vec<Read> {
    backends(g, g.of_kind(CRD.0, CRD.1))
}

/// The backends of the conversion webhooks of `crds` and of every admission webhook in `g`.
fn backends(g: &Graph, crds: &[NodeId]) -> Vec<Read> {
    const ADM: &str = "admissionregistration.k8s.io";
    let mut out = Vec::new();
    let mut services: Vec<(String, String)> = Vec::new();
    for &c in crds {
        if let Some(o) = g.object(c)
            && o.str_field("/spec/conversion/strategy") == Some("Webhook")
            && let Target::Service { namespace, name, .. } =
                backend::target_of(o.field("/spec/conversion/webhook/clientConfig"))
        {
            services.push((namespace, name));
        }
    }
    for kind in ["ValidatingWebhookConfiguration", "MutatingWebhookConfiguration"] {
        for &c in g.of_kind(ADM, kind) {
            let Some(conf) = g.object(c) else { continue };
            for w in conf.body.get("webhooks").and_then(Value::as_array).into_iter().flatten() {
                if let Target::Service { namespace, name, .. } = backend::target_of(w.get("clientConfig")) {
                    services.push((namespace, name));
                }
            }
        }
    }
    services.sort();
    services.dedup();
    for (ns, name) in services {
        let mut svc = list("", "v1", "services", true, "the backend a webhook calls");
        svc.namespace = Some(ns.clone());
        svc.name = Some(name.clone());
        out.push(svc);
        let mut eps =
            list("discovery.k8s.io", "v1", "endpointslices", true, "whether a webhook's backend has a ready endpoint");
        eps.namespace = Some(ns);
        eps.label_selector = Some(format!("kubernetes.io/service-name={name}"));
        out.push(eps);
    }
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::testing::{ObjExt, graph, node, obj};

    #[test]
    fn the_first_round_reads_the_configurations_and_the_targets_crd() {
        let g = graph(vec![
            obj("ledger.example.org/v1", "Account", Some("finance"), "a", "a").deleting("2026-01-01T00:00:00Z"),
        ]);
        let r = wanted(&g, node(&g, "Account", "a"));
        assert!(r.iter().any(|r| r.resource == "validatingwebhookconfigurations" && r.full));
        assert!(r.iter().any(|r| r.resource == "mutatingwebhookconfigurations" && r.full));
        assert!(
            // no discovery here: the plural is unknown, so every CRD is listed
            r.iter().any(|r| r.resource == "customresourcedefinitions" && r.name.is_none() && r.full)
        );
        assert!(!r.iter().any(|r| r.resource == "services"), "no backend is known yet");
    }

    /// Discovery serving the kind at `versions`.
    fn served(versions: &[&str]) -> Vec<Value> {
        versions
            .iter()
            .map(|v| {
                json!({"kind": "APIResourceList", "groupVersion": format!("ledger.example.org/{v}"), "resources": [
                    {"name": "accounts", "singularName": "account", "namespaced": true, "kind": "Account",
                     "verbs": ["get", "list", "delete"]}]})
            })
            .collect()
    }

    #[test]
    fn a_kind_served_at_one_version_needs_no_crd_for_its_conversion() {
        let account =
            obj("ledger.example.org/v1", "Account", Some("finance"), "a", "a").deleting("2026-01-01T00:00:00Z");
        let is_crd = |r: &Read| r.resource == "customresourcedefinitions";
        let mut once = served(&["v1"]);
        once.push(account.clone());
        let g = graph(once);
        assert!(!wanted(&g, node(&g, "Account", "a")).iter().any(is_crd));
        // two served versions: the CRD says whether a webhook converts between them
        let mut twice = served(&["v1", "v2"]);
        twice.push(account);
        let g = graph(twice);
        let r = wanted(&g, node(&g, "Account", "a"));
        let crd = r.iter().find(|r| is_crd(r)).expect("the CRD is read");
        assert_eq!(crd.name.as_deref(), Some("accounts.ledger.example.org"));
        assert!(crd.full);
    }

    #[test]
    fn the_second_round_reads_only_the_backends_named() {
        let conf = obj("admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration", None, "p", "p").with(
            "webhooks",
            json!([{"name": "w", "clientConfig": {"service": {"namespace": "hooks", "name": "hook"}}},
                   {"name": "u", "clientConfig": {"url": "https://example.com"}}]),
        );
        let g = graph(vec![conf, obj("v1", "ConfigMap", Some("x"), "c", "c")]);
        let r = wanted(&g, node(&g, "ConfigMap", "c"));
        let svcs: Vec<_> = r.iter().filter(|r| r.resource == "services").collect();
        assert_eq!(svcs.len(), 1);
        assert_eq!((svcs[0].namespace.as_deref(), svcs[0].name.as_deref()), (Some("hooks"), Some("hook")));
        let eps = r.iter().find(|r| r.resource == "endpointslices").expect("slices");
        assert_eq!(eps.label_selector.as_deref(), Some("kubernetes.io/service-name=hook"));
        assert!(eps.full);
    }

    #[test]
    fn the_params_bindings_name_are_read_where_they_are_looked_for() {
        let policy = |name: &str, api_version: &str, kind: &str| {
            obj("admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicy", None, name, &format!("vap-{name}"))
                .with("spec", json!({"paramKind": {"apiVersion": api_version, "kind": kind}}))
        };
        let binding = |name: &str, policy: &str, param_ref: Value| {
            obj("admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicyBinding", None, name, &format!("b-{name}"))
                .with("spec", json!({"policyName": policy, "validationActions": ["Deny"], "paramRef": param_ref}))
        };
        let g = graph(vec![
            policy("limits", "v1", "ConfigMap"),
            binding("there", "limits", json!({"name": "l", "namespace": "params"})),
            binding("own", "limits", json!({"selector": {}})),
            binding("twice", "limits", json!({"name": "m", "namespace": "params"})),
            // cluster-scoped params are read with every scope; unserved ones cannot be read
            policy("nodes", "v1", "Node"),
            binding("n", "nodes", json!({"name": "x"})),
            policy("gone", "quota.example.com/v1", "Quota"),
            binding("q", "gone", json!({"name": "x"})),
        ]);
        let r = params_wanted(&g);
        let got: Vec<_> = r.iter().map(|r| (r.resource.as_str(), r.namespace.as_deref(), r.full)).collect();
        assert_eq!(got, [("configmaps", None, false), ("configmaps", Some("params"), false)]);
        // the policies first read by name only: nothing known of their params yet
        assert!(params_wanted(&graph(vec![])).is_empty());
    }
}

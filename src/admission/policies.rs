//! Admission policies in front of the requests a deletion needs: ValidatingAdmissionPolicy
//! (`admissionregistration.k8s.io/v1`, GA in 1.30) and MutatingAdmissionPolicy (v1alpha1 in
//! 1.32, v1beta1 in 1.34, v1 in 1.36), each applied through its bindings.
//!
//! Which policies apply to a request mirrors the API server
//! (`admission/plugin/policy/generic/policy_dispatcher.go`, `policy/matching/matching.go`):
//! the policy's `matchConstraints` (namespaceSelector, objectSelector, excludeResourceRules
//! first, then resourceRules with their resourceNames; `matchPolicy: Equivalent`, the default,
//! compares no versions), then each binding whose `policyName` names it, through its own
//! `matchResources` (absent: everything the policy matches; empty resourceRules there do not
//! constrain). A ValidatingAdmissionPolicyBinding rejects only with `Deny` among its
//! `validationActions` (`Warn` and `Audit` never refuse a request). A MutatingAdmissionPolicy
//! patches the object of a request, and a DELETE has none (`dispatcher.go` skips it): it is
//! matched for UPDATEs only, where a mutation that writes the finalizers back undoes their
//! removal. Requests for the admission configuration resources themselves are exempt (the
//! plugin's `isExcludedFromAPIHooks`).
//!
//! CEL is not evaluated here. A policy that applies and whose expressions (validations,
//! matchConditions, variables, mutations) read `finalizers` or `deletionTimestamp` is what a
//! deletion may run into; only a denial quoted in Events ([`super::denials`]) says it does.

use std::collections::HashMap;

use serde_json::Value;

use super::webhooks::{Operation, rule_matches, selectors_match};
use crate::graph::{Graph, NodeId};
use crate::snapshot::Object;

/// The API group of policies and bindings.
pub const GROUP: &str = "admissionregistration.k8s.io";

/// The two kinds of admission policy, with their binding kinds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `ValidatingAdmissionPolicy`.
    Validating,
    /// `MutatingAdmissionPolicy`.
    Mutating,
}

impl Kind {
    /// Both, Validating first (the order answers name them in).
    pub const ALL: [Kind; 2] = [Kind::Validating, Kind::Mutating];

    /// The policy's kind.
    pub fn policy(self) -> &'static str {
        match self {
            Kind::Validating => "ValidatingAdmissionPolicy",
            Kind::Mutating => "MutatingAdmissionPolicy",
        }
    }

    /// The resources of the policy and of its binding, as the API serves them.
    pub fn resources(self) -> [&'static str; 2] {
        match self {
            Kind::Validating => ["validatingadmissionpolicies", "validatingadmissionpolicybindings"],
            Kind::Mutating => ["mutatingadmissionpolicies", "mutatingadmissionpolicybindings"],
        }
    }

    /// Its binding's kind.
    pub fn binding(self) -> &'static str {
        match self {
            Kind::Validating => "ValidatingAdmissionPolicyBinding",
            Kind::Mutating => "MutatingAdmissionPolicyBinding",
        }
    }
}

/// One (policy, binding) that applies to a request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PolicyMatch {
    /// Validating or Mutating.
    pub kind: Kind,
    /// The policy.
    pub policy: NodeId,
    /// The binding through which it applies.
    pub binding: NodeId,
    /// The request.
    pub operation: Operation,
    /// The expressions that read `finalizers` or `deletionTimestamp`, quoted with where they
    /// are (`validations[0]: "…"`); empty when none does.
    pub reads: Vec<String>,
    /// What could not be evaluated (labels not read, matchConditions): it may not apply.
    pub caveats: Vec<String>,
}

impl PolicyMatch {
    /// Whether it may deny (or undo) what the deletion needs: its expressions read the fields.
    pub fn may_deny(&self) -> bool {
        !self.reads.is_empty()
    }

    /// `ValidatingAdmissionPolicy x (binding y)`.
    pub fn describe(&self, g: &Graph) -> String {
        format!("{} {} (binding {})", self.kind.policy(), g.identity(self.policy).name, g.identity(self.binding).name)
    }
}

/// The policies of a graph with their bindings, by kind and policy name.
#[derive(Default)]
pub struct Policies {
    /// (kind, policy, its bindings in graph order).
    bound: Vec<(Kind, NodeId, Vec<NodeId>)>,
}

impl Policies {
    /// Every policy of `g` that some binding names, Validating first, by name.
    pub fn new(g: &Graph) -> Policies {
        let mut bound = Vec::new();
        for kind in Kind::ALL {
            let mut by_name: HashMap<&str, Vec<NodeId>> = HashMap::new();
            for &b in g.of_kind(GROUP, kind.binding()) {
                if let Some(name) = g.object(b).and_then(|o| o.str_field("/spec/policyName")) {
                    by_name.entry(name).or_default().push(b);
                }
            }
            for &p in g.of_kind(GROUP, kind.policy()) {
                // a policy no binding names applies to nothing (`policy_source.go`)
                if let Some(bindings) = by_name.remove(g.identity(p).name) {
                    bound.push((kind, p, bindings));
                }
            }
        }
        Policies { bound }
    }

    /// Whether any bound policy was read.
    pub fn is_empty(&self) -> bool {
        self.bound.is_empty()
    }

    /// The (policy, binding) pairs that apply to `op` on `x`, in order.
    pub fn matching(&self, g: &Graph, x: NodeId, op: Operation) -> Vec<PolicyMatch> {
        let Some(o) = g.object(x) else { return Vec::new() };
        if o.group() == GROUP || self.bound.is_empty() {
            return Vec::new();
        }
        let Some(t) = g.mapper().kind(o.group(), &o.kind) else { return Vec::new() };
        let mut out = Vec::new();
        for (kind, p, bindings) in &self.bound {
            // a mutation needs an object to patch; a DELETE has none
            if *kind == Kind::Mutating && op == Operation::Delete {
                continue;
            }
            let Some(spec) = g.object(*p).and_then(|p| p.field("/spec")) else { continue };
            let empty = Value::Null;
            let constraints = spec.get("matchConstraints").unwrap_or(&empty);
            let Some(mut caveats) = resources_match(g, constraints, o, &t.plural, t.namespaced, op) else { continue };
            if let Some(names) = condition_names(spec) {
                caveats.push(format!(
                    "its matchConditions ({names}) are CEL expressions not evaluated here: it may not apply"
                ));
            }
            let reads = reads_deletion_fields(*kind, spec);
            for &b in bindings {
                let Some(bspec) = g.object(b).and_then(|b| b.field("/spec")) else { continue };
                if *kind == Kind::Validating && !validation_actions(bspec).any(|a| a == "Deny") {
                    continue;
                }
                let Some(mut more) = bspec
                    .get("matchResources")
                    .map_or(Some(Vec::new()), |m| resources_match(g, m, o, &t.plural, t.namespaced, op))
                else {
                    continue;
                };
                more.splice(0..0, caveats.iter().cloned());
                out.push(PolicyMatch {
                    kind: *kind,
                    policy: *p,
                    binding: b,
                    operation: op,
                    reads: reads.clone(),
                    caveats: more,
                });
            }
        }
        out
    }
}

/// A `MatchResources` (a policy's `matchConstraints`, a binding's `matchResources`) on `op`
/// of `o`: None when it leaves the request out, else what could not be evaluated.
fn resources_match(
    g: &Graph,
    m: &Value,
    o: &Object,
    plural: &str,
    namespaced: bool,
    op: Operation,
) -> Option<Vec<String>> {
    let caveats = selectors_match(g, m, o)?;
    let exact = m.get("matchPolicy").and_then(Value::as_str) == Some("Exact");
    let named = |r: &Value| {
        let names: Vec<&str> =
            r.get("resourceNames").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str).collect();
        names.is_empty() || names.contains(&o.name.as_str())
    };
    let rules = |k: &str| m.get(k).and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
    let hits = |r: &Value| rule_matches(r, o, plural, namespaced, op, exact) && named(r);
    if rules("excludeResourceRules").iter().any(hits) {
        return None;
    }
    let include = rules("resourceRules");
    // no resourceRules: every resource (a binding's; a policy must have some)
    if !include.is_empty() && !include.iter().any(hits) {
        return None;
    }
    Some(caveats)
}

fn validation_actions(bspec: &Value) -> impl Iterator<Item = &str> {
    bspec.get("validationActions").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str)
}

fn condition_names(spec: &Value) -> Option<String> {
    let conds = spec.get("matchConditions").and_then(Value::as_array).filter(|c| !c.is_empty())?;
    Some(conds.iter().filter_map(|c| c.get("name").and_then(Value::as_str)).collect::<Vec<_>>().join(", "))
}

/// How long a quoted expression may be before it is cut.
const QUOTED: usize = 160;

/// The expressions of a policy that read `finalizers` or `deletionTimestamp` (of `object`,
/// `oldObject` or through a variable), quoted with where they are.
fn reads_deletion_fields(kind: Kind, spec: &Value) -> Vec<String> {
    let mut out = Vec::new();
    let mut look = |place: String, e: Option<&Value>| {
        if let Some(e) = e.and_then(Value::as_str)
            && (e.contains("finalizers") || e.contains("deletionTimestamp"))
        {
            let mut q: String = e.chars().take(QUOTED).collect();
            if q.len() < e.len() {
                q.push('…');
            }
            out.push(format!("{place}: {q:?}"));
        }
    };
    let list = |k: &str| spec.get(k).and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
    for (i, c) in list("matchConditions").iter().enumerate() {
        look(format!("matchConditions[{i}]"), c.get("expression"));
    }
    for (i, v) in list("variables").iter().enumerate() {
        look(format!("variables[{i}]"), v.get("expression"));
    }
    match kind {
        Kind::Validating => {
            for (i, v) in list("validations").iter().enumerate() {
                look(format!("validations[{i}]"), v.get("expression"));
            }
        }
        Kind::Mutating => {
            for (i, m) in list("mutations").iter().enumerate() {
                look(format!("mutations[{i}]"), m.pointer("/applyConfiguration/expression"));
                look(format!("mutations[{i}]"), m.pointer("/jsonPatch/expression"));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::testing::{ObjExt, graph, node, obj};

    const PROTECT: &str = "!has(oldObject.metadata.deletionTimestamp) || object.metadata.finalizers.size() > 0";

    fn policy(name: &str, rules: Value) -> Value {
        obj("admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicy", None, name, &format!("vap-{name}")).with(
            "spec",
            json!({"failurePolicy": "Fail", "matchConstraints": {"resourceRules": rules},
                   "validations": [{"expression": PROTECT, "message": "keep the finalizer"}]}),
        )
    }

    fn binding(name: &str, policy: &str, actions: &[&str], match_resources: Option<Value>) -> Value {
        let mut spec = json!({"policyName": policy, "validationActions": actions});
        if let Some(m) = match_resources {
            spec["matchResources"] = m;
        }
        obj("admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicyBinding", None, name, &format!("b-{name}"))
            .with("spec", spec)
    }

    fn cm_rule(ops: &[&str]) -> Value {
        json!([{"apiGroups": [""], "apiVersions": ["v1"], "operations": ops, "resources": ["configmaps"]}])
    }

    fn world(extra: Vec<Value>) -> Graph {
        let mut objs = vec![
            obj("v1", "Namespace", None, "d", "ns-d")
                .with("metadata", json!({"name": "d", "uid": "ns-d", "labels": {"env": "prod"}})),
            obj("v1", "ConfigMap", Some("d"), "cm", "cm")
                .deleting("2026-11-29T11:00:00Z")
                .finalizers(&["example.com/keep"]),
        ];
        objs.extend(extra);
        graph(objs)
    }

    fn found(g: &Graph, op: Operation) -> Vec<(String, String)> {
        Policies::new(g)
            .matching(g, node(g, "ConfigMap", "cm"), op)
            .iter()
            .map(|m| (g.identity(m.policy).name.to_string(), g.identity(m.binding).name.to_string()))
            .collect()
    }

    #[test]
    fn a_bound_policy_whose_rules_cover_the_request_applies_and_reads_the_fields() {
        let g = world(vec![policy("keep", cm_rule(&["UPDATE"])), binding("keep-all", "keep", &["Deny"], None)]);
        let m = Policies::new(&g).matching(&g, node(&g, "ConfigMap", "cm"), Operation::Update);
        assert_eq!(m.len(), 1);
        assert!(m[0].may_deny() && m[0].caveats.is_empty(), "{m:?}");
        assert!(m[0].reads[0].starts_with("validations[0]: ") && m[0].reads[0].contains("deletionTimestamp"));
        assert_eq!(m[0].describe(&g), "ValidatingAdmissionPolicy keep (binding keep-all)");
        // the rules name UPDATE only
        assert!(found(&g, Operation::Delete).is_empty());
    }

    #[test]
    fn no_binding_or_one_that_only_warns_applies_nothing() {
        let g = world(vec![policy("keep", cm_rule(&["*"]))]);
        assert!(found(&g, Operation::Update).is_empty());
        let g = world(vec![policy("keep", cm_rule(&["*"])), binding("warn", "keep", &["Warn", "Audit"], None)]);
        assert!(found(&g, Operation::Update).is_empty());
        let g = world(vec![policy("keep", cm_rule(&["*"])), binding("other", "not-keep", &["Deny"], None)]);
        assert!(found(&g, Operation::Update).is_empty());
    }

    #[test]
    fn excluded_resources_selectors_and_resource_names_leave_the_request_out() {
        let mut p = policy("keep", cm_rule(&["*"]));
        p["spec"]["matchConstraints"]["excludeResourceRules"] = cm_rule(&["UPDATE"]);
        let g = world(vec![p, binding("b", "keep", &["Deny"], None)]);
        assert!(found(&g, Operation::Update).is_empty());
        assert_eq!(found(&g, Operation::Delete).len(), 1);
        // the binding narrows to namespaces labelled env=dev: d is prod
        let g = world(vec![
            policy("keep", cm_rule(&["*"])),
            binding("dev", "keep", &["Deny"], Some(json!({"namespaceSelector": {"matchLabels": {"env": "dev"}}}))),
            binding("prod", "keep", &["Deny"], Some(json!({"namespaceSelector": {"matchLabels": {"env": "prod"}}}))),
        ]);
        assert_eq!(found(&g, Operation::Update), [("keep".to_string(), "prod".to_string())]);
        let mut named = cm_rule(&["*"]);
        named[0]["resourceNames"] = json!(["other"]);
        let g = world(vec![policy("keep", named), binding("b", "keep", &["Deny"], None)]);
        assert!(found(&g, Operation::Update).is_empty());
    }

    #[test]
    fn a_mutating_policy_applies_to_updates_only_and_its_conditions_are_caveats() {
        let p = obj("admissionregistration.k8s.io/v1beta1", "MutatingAdmissionPolicy", None, "readd", "map").with(
            "spec",
            json!({"matchConstraints": {"resourceRules": cm_rule(&["*"])},
                   "matchConditions": [{"name": "deleting", "expression": "has(object.metadata.deletionTimestamp)"}],
                   "mutations": [{"patchType": "ApplyConfiguration", "applyConfiguration":
                       {"expression": "Object{metadata: Object.metadata{finalizers: ['example.com/keep']}}"}}]}),
        );
        let b = obj("admissionregistration.k8s.io/v1beta1", "MutatingAdmissionPolicyBinding", None, "readd", "mapb")
            .with("spec", json!({"policyName": "readd"}));
        let g = world(vec![p, b]);
        let m = Policies::new(&g).matching(&g, node(&g, "ConfigMap", "cm"), Operation::Update);
        assert_eq!(m.len(), 1);
        assert_eq!(m[0].kind, Kind::Mutating);
        assert_eq!(m[0].reads.len(), 2, "{:?}", m[0].reads);
        assert!(m[0].caveats[0].contains("deleting"), "{:?}", m[0].caveats);
        assert!(found(&g, Operation::Delete).is_empty());
    }

    #[test]
    fn a_policy_that_reads_neither_field_applies_but_may_not_deny() {
        let mut p = policy("labels", cm_rule(&["*"]));
        p["spec"]["validations"] = json!([{"expression": "has(object.metadata.labels)"}]);
        let g = world(vec![p, binding("b", "labels", &["Deny"], None)]);
        let m = Policies::new(&g).matching(&g, node(&g, "ConfigMap", "cm"), Operation::Update);
        assert_eq!(m.len(), 1);
        assert!(!m[0].may_deny());
    }
}

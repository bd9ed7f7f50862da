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
//! CEL is not evaluated here but in [`super::evaluate`], where it can be. A policy that applies and whose expressions (validations,
//! matchConditions, variables, mutations) read `finalizers` or `deletionTimestamp` is what a
//! deletion may run into; only a denial quoted in Events ([`super::denials`]) says it does.
//! What does not need CEL is told: a ValidatingAdmissionPolicy whose paramKind is not served,
//! or a binding whose params are missing with `parameterNotFoundAction: Deny`, denies every
//! request it matches under `failurePolicy: Fail`, whatever its validationActions; missing
//! params with `Allow` invoke nothing ([`super::params`]). (MutatingAdmissionPolicy's params
//! are not judged.)

use std::collections::HashMap;

use serde_json::Value;

use super::params::{self, Misconfigured, Params};
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
    /// The binding through which it applies; `None` when the policy itself fails to
    /// configure (then no binding is consulted).
    pub binding: Option<NodeId>,
    /// The request.
    pub operation: Operation,
    /// The expressions that may refuse the request, quoted with where they are
    /// (`validations[0]: "…"`): on an UPDATE, those that read `finalizers` or
    /// `deletionTimestamp`; on a DELETE, every validation. Empty when none may.
    pub reads: Vec<String>,
    /// What could not be evaluated (labels not read, matchConditions): it may not apply.
    pub caveats: Vec<String>,
    /// The policy or binding fails to configure, and `failurePolicy: Fail` turns that into a
    /// denial of the request (no expression is evaluated then).
    pub misconfigured: Option<Misconfigured>,
    /// The params the binding found, when it takes some.
    pub params: Vec<NodeId>,
    /// With every one of `params` gone, the binding fails to configure and denies
    /// (`parameterNotFoundAction: Deny`, `failurePolicy: Fail`), whatever its validationActions:
    /// a match kept for that alone, a Warn-only binding's, may deny nothing while they exist.
    pub deny_when_params_gone: bool,
}

impl PolicyMatch {
    /// Whether it may deny (or undo) what the deletion needs: it fails to configure, or some
    /// of its expressions may refuse the request ([`PolicyMatch::reads`]).
    pub fn may_deny(&self) -> bool {
        self.misconfigured.is_some() || !self.reads.is_empty()
    }

    /// Whether the input shows that it denies the request: it fails to configure, the input
    /// shows why, and nothing leaves its match in doubt.
    pub fn denies(&self) -> bool {
        self.misconfigured.as_ref().is_some_and(|m| m.unsure.is_none()) && self.caveats.is_empty()
    }

    /// Why its expressions may refuse the request, in words, before they are quoted.
    pub fn why_deciding(&self) -> &'static str {
        // `object.`, not `oldObject.` (`namespaceObject` is spelt with a capital O)
        let reads_object = self.reads.iter().any(|q| q.replace("oldObject", "").contains("object."));
        match self.operation {
            Operation::Update => "its expressions read finalizers or deletionTimestamp",
            Operation::Delete if reads_object => {
                "its validations decide on DELETEs (and one reads `object`, which is null on a DELETE: the expression fails, and failurePolicy Fail turns that into a denial)"
            }
            Operation::Delete => "its validations decide on DELETEs",
        }
    }

    /// What fails to configure and why, with the input's doubt if any: `ValidatingAdmissionPolicy
    /// x (binding y) fails to configure: its paramRef finds no …`.
    pub fn fails_to_configure(&self, g: &Graph) -> Option<String> {
        let m = self.misconfigured.as_ref()?;
        let doubt = m.unsure.iter().chain(&self.caveats).cloned().collect::<Vec<_>>();
        Some(format!(
            "{} fails to configure: {}{}",
            self.describe(g),
            m.why,
            if doubt.is_empty() { String::new() } else { format!(" (not certain: {})", doubt.join("; ")) }
        ))
    }

    /// `ValidatingAdmissionPolicy x (binding y)`, or `ValidatingAdmissionPolicy x`.
    pub fn describe(&self, g: &Graph) -> String {
        super::denier(g, self.policy, self.binding)
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
            let Some(caveats) = resources_match(g, constraints, o, &t.plural, t.namespaced, op) else { continue };
            let validating = *kind == Kind::Validating;
            let fails_closed = params::fails_closed(spec);
            // what every match of this policy shares; one that fails to configure reads nothing
            let base = PolicyMatch {
                kind: *kind,
                policy: *p,
                binding: None,
                operation: op,
                reads: deciding(*kind, spec, op),
                caveats: Vec::new(),
                misconfigured: None,
                params: Vec::new(),
                deny_when_params_gone: false,
            };
            let failing = |binding: Option<NodeId>, caveats: Vec<String>, m: Misconfigured| PolicyMatch {
                binding,
                caveats,
                reads: Vec::new(),
                misconfigured: Some(m),
                ..base.clone()
            };
            if validating {
                match params::policy_config(g, spec) {
                    params::Policy::LeftOut => continue,
                    params::Policy::Misconfigured(m) => {
                        if fails_closed {
                            out.push(failing(None, caveats, m));
                        }
                        continue;
                    }
                    params::Policy::Configures => {}
                }
            }
            let conditions = condition_names(spec).map(|names| {
                format!("its matchConditions ({names}) are CEL expressions not evaluated here: it may not apply")
            });
            for &b in bindings {
                let Some(bspec) = g.object(b).and_then(|b| b.field("/spec")) else { continue };
                let Some(own) = bspec
                    .get("matchResources")
                    .map_or(Some(Vec::new()), |m| resources_match(g, m, o, &t.plural, t.namespaced, op))
                else {
                    continue;
                };
                let (mut params, mut deny_when_params_gone) = (Vec::new(), false);
                if validating {
                    // a configuration error is judged before any expression, matchConditions too
                    match params::collect(g, spec, bspec, o) {
                        Params::Misconfigured(m) => {
                            if fails_closed {
                                out.push(failing(Some(b), [caveats.clone(), own].concat(), m));
                            }
                            continue;
                        }
                        Params::NotInvoked => continue,
                        Params::Evaluated => {}
                        Params::Found { params: found, deny_when_gone } => {
                            (params, deny_when_params_gone) = (found, deny_when_gone);
                        }
                    }
                    if !validation_actions(bspec).any(|a| a == "Deny") {
                        if deny_when_params_gone {
                            out.push(PolicyMatch {
                                binding: Some(b),
                                caveats: [caveats.clone(), own].concat(),
                                reads: Vec::new(),
                                params,
                                deny_when_params_gone,
                                ..base.clone()
                            });
                        }
                        continue;
                    }
                }
                let caveats = caveats.iter().chain(&conditions).chain(&own).cloned().collect();
                out.push(PolicyMatch { binding: Some(b), caveats, params, deny_when_params_gone, ..base.clone() });
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

/// The expressions of a policy that may refuse `op`, quoted with where they are. On an UPDATE
/// (a finalizer's removal, all else unchanged), those that read `finalizers` or
/// `deletionTimestamp` (of `object`, `oldObject` or through a variable). On a DELETE, every
/// validation: a policy whose rules send it DELETEs decides on them whatever it reads (and
/// `object` is null then: an expression that reads it fails, and `failurePolicy: Fail` turns
/// the failure into a denial).
fn deciding(kind: Kind, spec: &Value, op: Operation) -> Vec<String> {
    let mut out = Vec::new();
    let every = op == Operation::Delete;
    let mut look = |place: String, e: Option<&Value>, any: bool| {
        if let Some(e) = e.and_then(Value::as_str)
            && (any || e.contains("finalizers") || e.contains("deletionTimestamp"))
        {
            let mut q: String = e.chars().take(QUOTED).collect();
            if q.len() < e.len() {
                q.push('…');
            }
            out.push(format!("{place}: {q:?}"));
        }
    };
    let list = |k: &str| spec.get(k).and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
    if !every {
        for (i, c) in list("matchConditions").iter().enumerate() {
            look(format!("matchConditions[{i}]"), c.get("expression"), false);
        }
        for (i, v) in list("variables").iter().enumerate() {
            look(format!("variables[{i}]"), v.get("expression"), false);
        }
    }
    match kind {
        Kind::Validating => {
            for (i, v) in list("validations").iter().enumerate() {
                look(format!("validations[{i}]"), v.get("expression"), every);
            }
        }
        Kind::Mutating => {
            for (i, m) in list("mutations").iter().enumerate() {
                look(format!("mutations[{i}]"), m.pointer("/applyConfiguration/expression"), false);
                look(format!("mutations[{i}]"), m.pointer("/jsonPatch/expression"), false);
            }
        }
    }
    out
}

#[cfg(test)]
#[path = "policies_tests.rs"]
mod tests;

//! Whether a ValidatingAdmissionPolicy, and each of its bindings, can be configured for a
//! request at all: its `paramKind` must be a served type, and a binding's `paramRef` must
//! find its params or else, with `parameterNotFoundAction: Deny`, fail. The API server turns
//! such a configuration error into a denial by the policy's `failurePolicy` alone (`Fail`
//! when unset): neither the binding's `validationActions` nor any CEL expression is consulted
//! (`policy/validating/dispatcher.go`, `addConfigError`). Params found, or none needed, leave
//! the verdict to the expressions, which are not evaluated here; none found with
//! `parameterNotFoundAction: Allow` means the binding is not invoked at all.
//!
//! Mirrors `policy/generic/policy_source.go` (`ensureParamsForPolicyLocked`: the paramKind is
//! REST-mapped at its version) and `policy/generic/policy_dispatcher.go` (`CollectParams`).
//!
//! An absence is told only where the input shows it: discovery data (what every live read
//! and `kubectl gc snapshot` carry) says what is served; params are looked for among what was
//! read of their type, and a failed read there, or a file that holds no object of the type
//! and no discovery data, makes the error one that *may* happen (`unsure`).

use serde_json::Value;

use super::selector::Parsed;
use super::webhooks::labels_kept;
use crate::discovery::{Origin, ResourceType};
use crate::graph::{Graph, NodeId};
use crate::snapshot::Object;

/// A policy or binding that fails to configure for a request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Misconfigured {
    /// What is wrong, in words (`its paramKind example.com/v1 Limits is not served`).
    pub why: String,
    /// What the input does not show that would settle it; `None` when it shows it.
    pub unsure: Option<String>,
    /// What would let it configure again, in words, for the remedy.
    pub fix: String,
}

/// How a binding's params stand for one request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Params {
    /// The policy's expressions are evaluated (without params, or once per param found), or
    /// may be (a param that the binding may select was read without its labels, or its type
    /// could not be read): they decide.
    Evaluated,
    /// Params were found: the expressions are evaluated once per param. With
    /// `parameterNotFoundAction: Deny` under `failurePolicy: Fail`, the binding fails to
    /// configure once they are all gone (`deny_when_gone`): what a plan that deletes them says.
    Found {
        /// The params found.
        params: Vec<NodeId>,
        /// Missing, they would deny.
        deny_when_gone: bool,
    },
    /// No param found and `parameterNotFoundAction` is not `Deny`: the binding is not invoked.
    NotInvoked,
    /// The binding fails to configure for this request.
    Misconfigured(Misconfigured),
}

/// Whether the policy's configuration errors deny (`failurePolicy: Fail`, the default).
pub fn fails_closed(spec: &Value) -> bool {
    spec.get("failurePolicy").and_then(Value::as_str) != Some("Ignore")
}

/// How a policy itself stands, before any binding is looked at.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Policy {
    /// Its paramKind's apiVersion does not parse: the API server leaves it out altogether.
    LeftOut,
    /// It configures: its bindings are consulted.
    Configures,
    /// Its paramKind is not served: every request its matchConstraints match fails to
    /// configure, whatever its bindings say.
    Misconfigured(Misconfigured),
}

/// The policy's own configuration (`ensureParamsForPolicyLocked`).
pub fn policy_config(g: &Graph, spec: &Value) -> Policy {
    let Some((api_version, kind)) = param_kind(spec) else { return Policy::Configures };
    if api_version.matches('/').count() > 1 || api_version.is_empty() {
        return Policy::LeftOut;
    }
    if g.mapper().rest_mapping(api_version, kind).is_ok() {
        return Policy::Configures;
    }
    let group = api_version.rsplit_once('/').map_or("", |(g, _)| g);
    let unsure = if !discovered(g) {
        Some("the input holds no discovery data to tell what the server serves".to_string())
    } else if g.gaps().iter().any(|gap| gap.is_discovery() && gap.may_hide(group, None, None)) {
        Some(format!("the discovery of API group {group:?} failed"))
    } else {
        None
    };
    Policy::Misconfigured(Misconfigured {
        why: format!("its paramKind ({api_version} {kind}) is not a type the server serves"),
        unsure,
        fix: format!(
            "serve {kind} at {api_version} again (its CustomResourceDefinition), or remove the policy's paramKind"
        ),
    })
}

/// The params of one binding for a request about `o` (the policy's own error is
/// [`policy_config`]'s, asked first).
pub fn collect(g: &Graph, spec: &Value, bspec: &Value, o: &Object) -> Params {
    let (Some((api_version, kind)), Some(r)) = (param_kind(spec), bspec.get("paramRef").filter(|r| r.is_object()))
    else {
        return Params::Evaluated;
    };
    let Ok(t) = g.mapper().rest_mapping(api_version, kind) else { return Params::Evaluated };
    let text = |k: &str| r.get(k).and_then(Value::as_str).filter(|s| !s.is_empty());
    let wrong =
        |why: String, fix: &str| Params::Misconfigured(Misconfigured { why, unsure: None, fix: fix.to_string() });
    // the admission request's namespace: a Namespace's own name for a Namespace
    let request_ns =
        if o.kind == "Namespace" && o.group().is_empty() { Some(o.name.as_str()) } else { o.namespace.as_deref() };
    let namespace = match (t.namespaced, text("namespace")) {
        (false, Some(_)) => {
            return wrong(
                format!("its paramRef names a namespace, and the paramKind {kind} is cluster-scoped"),
                "remove the binding's paramRef.namespace",
            );
        }
        (false, None) => None,
        (true, Some(ns)) => Some(ns),
        (true, None) => match request_ns {
            Some(ns) => Some(ns),
            None => {
                return wrong(
                    format!(
                        "its paramRef names no namespace for the namespaced paramKind {kind}, and {} is cluster-scoped",
                        o.kind
                    ),
                    "set the binding's paramRef.namespace, or narrow its matchResources to namespaced resources",
                );
            }
        },
    };
    let unsure = read_unsure(g, t, namespace);
    let deny = r.get("parameterNotFoundAction").and_then(Value::as_str) == Some("Deny");
    let (found, looked_for): (Vec<NodeId>, String) = match (text("name"), r.get("selector")) {
        (Some(name), _) => (
            g.find(&t.group, &t.kind, namespace, name).into_iter().collect(),
            format!("{kind} {}", place(namespace, name)),
        ),
        (None, Some(sel)) => {
            let mut unread = false;
            let selector = Parsed::new(Some(sel));
            let found = g
                .of_kind(&t.group, &t.kind)
                .iter()
                .copied()
                .filter(|&p| {
                    let Some(p) = g.object(p) else { return false };
                    if t.namespaced && p.namespace.as_deref() != namespace {
                        return false;
                    }
                    match selector.matches(labels_kept(p).then_some(p.labels.as_slice())) {
                        Some(m) => m,
                        None => {
                            unread = true;
                            false
                        }
                    }
                })
                .collect::<Vec<_>>();
            // one whose labels were not read may be it: nothing is claimed then
            if unread {
                return Params::Evaluated;
            }
            let sel = serde_json::to_string(sel).unwrap_or_default();
            (
                found,
                format!(
                    "{kind} objects{} selected by {sel}",
                    namespace.map(|ns| format!(" in {ns}")).unwrap_or_default()
                ),
            )
        }
        // validation requires one of them
        (None, None) => return Params::Evaluated,
    };
    if !found.is_empty() {
        return Params::Found { params: found, deny_when_gone: deny && fails_closed(spec) };
    }
    if !deny {
        // nothing found, and Allow: the binding is not invoked; unsure, it may be
        return if unsure.is_some() { Params::Evaluated } else { Params::NotInvoked };
    }
    Params::Misconfigured(Misconfigured {
        why: format!("its paramRef finds no {looked_for}, and its parameterNotFoundAction is Deny"),
        unsure,
        fix: format!("create the {looked_for}, or set the binding's paramRef.parameterNotFoundAction to Allow"),
    })
}

/// The policy's `paramKind`: (apiVersion, kind).
fn param_kind(spec: &Value) -> Option<(&str, &str)> {
    let p = spec.get("paramKind")?;
    Some((p.get("apiVersion")?.as_str()?, p.get("kind")?.as_str()?))
}

/// What may hide a param of type `t` in `namespace`: a failed read of the type there, or a
/// file that holds neither discovery data nor any object of the type (it may not have been
/// read at all).
fn read_unsure(g: &Graph, t: &ResourceType, namespace: Option<&str>) -> Option<String> {
    if g.gaps().iter().any(|gap| gap.may_hide(&t.group, Some(&t.plural), namespace)) {
        return Some(format!("{} could not be read", t.qualified_plural()));
    }
    (!discovered(g) && g.of_kind(&t.group, &t.kind).is_empty())
        .then(|| format!("the input holds no {} object and no discovery data: they may not have been read", t.kind))
}

/// Whether the input carries discovery data (live reads and `kubectl gc snapshot` files do):
/// then what it does not serve is not served.
fn discovered(g: &Graph) -> bool {
    g.mapper().types().iter().any(|t| t.origin == Origin::Discovery)
}

fn place(namespace: Option<&str>, name: &str) -> String {
    namespace.map_or_else(|| name.to_string(), |ns| format!("{ns}/{name}"))
}

//! The CEL of a ValidatingAdmissionPolicy, evaluated against the very request a deletion needs
//! (issue 41): the UPDATE that removes one finalizer (`oldObject` as stored, `object` without
//! that finalizer), or the DELETE (`oldObject` as stored, `object` null), with `request` and
//! `namespaceObject` as the API server gives them.
//!
//! Only where the answer can be definite: every function an expression calls is one the `cel`
//! crate (cel-rust) evaluates as Kubernetes does ([`SUPPORTED`]: the operators, `size`,
//! `contains`, `startsWith`, `endsWith`, conversions, and the macros `has`, `all`, `exists`,
//! `exists_one`, `map`, `filter`), and every field it reads was read ([`fields_known`]: of an
//! object, the metadata the input keeps, and its spec and status for the kinds whose body it
//! keeps; of `request`, what the request itself says, never who sends it). Then: every
//! matchCondition true and a validation false **denies**, with the message the policy returns;
//! a matchCondition false or every validation true **admits**. Anything else (a function such
//! as `matches` or Kubernetes' libraries, `params`, `authorizer`, `request.userInfo`, a field
//! not read, an evaluation error, a cost beyond the budget) leaves it **undecided**, saying
//! which, and the caller keeps its "may deny".
//!
//! Bounded: an expression longer than the API server accepts is not evaluated, and neither is
//! one whose estimated cost (its length times the size of the lists its comprehensions may
//! range over, once per comprehension) exceeds the API server's per-expression budget
//! ([`COST_BUDGET`]), so no evaluation runs long whatever the input.

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use super::policies::{Kind, PolicyMatch};
use super::webhooks::{Operation, labels_kept};
use crate::graph::{Graph, NodeId};
use crate::snapshot::Object;
use crate::snapshot::object::keeps_body;

/// The longest expression evaluated: the API server's limit on a policy's expressions (5 KiB).
pub const MAX_EXPRESSION: usize = 5 * 1024;

/// The deepest nesting of brackets evaluated: the parser and the evaluator recurse, and a
/// deeper expression (never a real policy's) could exhaust a stack.
pub const MAX_NESTING: usize = 16;

/// The stack of the thread an expression is parsed and evaluated on: ample for
/// [`MAX_NESTING`], whatever thread asks.
const STACK: usize = 32 << 20;

/// The API server's runtime cost limit per expression (`PerCallLimit`), the budget the
/// estimate is held to.
pub const COST_BUDGET: u64 = 1_000_000;

/// The functions (and operators, as the parser names them) evaluated as Kubernetes does.
pub const SUPPORTED: &[&str] = &[
    "_==_",
    "_!=_",
    "_<_",
    "_<=_",
    "_>_",
    "_>=_",
    "_&&_",
    "_||_",
    "!_",
    "-_",
    "_+_",
    "_-_",
    "_*_",
    "_/_",
    "_%_",
    "_?_:_",
    "_[_]",
    "@in",
    "@not_strictly_false",
    "size",
    "contains",
    "startsWith",
    "endsWith",
    "string",
    "int",
    "uint",
    "double",
    "bool",
    "type",
];

/// The top-level variables of a policy's expressions that are given.
const GIVEN: &[&str] = &["object", "oldObject", "request", "namespaceObject", "variables"];

/// A path standing for a variable read whole (not only compared to null).
const WHOLE: &str = "(whole)";

/// What `request` holds here: what the request itself says (never who sends it).
const REQUEST_FIELDS: &[&str] = &["operation", "name", "namespace", "kind", "resource", "subResource"];

/// The verdict of a policy's expressions on a request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Judged {
    /// A validation is false (every matchCondition true): the policy's message, and the
    /// finalizer whose removal it denies (`None` for a DELETE).
    Denies {
        /// The message the API server returns, as it writes it.
        message: String,
        /// The finalizer whose removal is denied.
        finalizer: Option<String>,
    },
    /// A matchCondition is false, or every validation is true, for every request evaluated.
    Admits,
    /// What kept it from a definite answer.
    Undecided(String),
}

/// The verdict of policy match `m` on `x`'s request (`m.operation`).
pub fn judge(g: &Graph, m: &PolicyMatch, x: NodeId) -> Judged {
    if m.kind != Kind::Validating {
        return Judged::Undecided("a MutatingAdmissionPolicy's mutations are not evaluated".into());
    }
    let (Some(o), Some(spec)) = (g.object(x), g.object(m.policy).and_then(|p| p.field("/spec"))) else {
        return Judged::Undecided("the policy's spec was not read".into());
    };
    let Some(t) = g.mapper().kind(o.group(), &o.kind) else {
        return Judged::Undecided(format!("the resource of {} is not known", o.kind));
    };
    if m.operation == Operation::Update && (!o.is_deleting() || o.finalizers.is_empty()) {
        // the UPDATE evaluated is a finalizer's removal; an owner reference's is another
        return Judged::Undecided("only the UPDATE that removes a finalizer is evaluated".into());
    }
    let stored = known_object(o);
    let custom = !o.group().is_empty() && super::conversion::crd_of(g, o.group(), &o.kind).is_some();
    let namespace = o.namespace.as_deref().and_then(|ns| g.find("", "Namespace", None, ns)).and_then(|n| g.object(n));
    let mut base = Inputs {
        request: json!({
            "operation": m.operation.as_str(),
            "name": o.name,
            "namespace": o.namespace.clone().unwrap_or_default(),
            "kind": {"group": o.group(), "version": o.version(), "kind": o.kind},
            "resource": {"group": o.group(), "version": o.version(), "resource": t.plural},
            "subResource": "",
        }),
        namespace_object: namespace.map(known_object).unwrap_or(Value::Null),
        object: Value::Null,
        old_object: stored.clone(),
        known: Known::of(o, namespace),
    };
    // the requests this deletion sends: each finalizer's removal, or the DELETE
    let requests: Vec<(Option<String>, Value)> = match m.operation {
        Operation::Delete => vec![(None, Value::Null)],
        Operation::Update => o
            .finalizers
            .iter()
            .map(|f| {
                let mut new = stored.clone();
                let rest: Vec<&String> = o.finalizers.iter().filter(|g| *g != f).collect();
                match new["metadata"].as_object_mut() {
                    // a built-in kind's typed object drops an empty list (`omitempty`)
                    Some(meta) if rest.is_empty() && !custom => {
                        meta.remove("finalizers");
                    }
                    _ => new["metadata"]["finalizers"] = json!(rest),
                }
                (Some(f.clone()), new)
            })
            .collect(),
    };
    let mut undecided = None;
    for (finalizer, object) in requests {
        base.object = object;
        match one_request(spec, &base) {
            Judged::Denies { message, .. } => {
                // a match the input could not settle (labels not read) leaves a denial in doubt
                let doubts: Vec<&String> =
                    m.caveats.iter().filter(|c| !c.starts_with("its matchConditions (")).collect();
                if !doubts.is_empty() {
                    let d: Vec<&str> = doubts.iter().map(|s| s.as_str()).collect();
                    return Judged::Undecided(format!("its expressions deny, but it may not apply: {}", d.join("; ")));
                }
                let message = format!("{} denied request: {message}", denied_by(g, m));
                return Judged::Denies { message, finalizer };
            }
            Judged::Admits => {}
            Judged::Undecided(why) => undecided = undecided.or(Some(why)),
        }
    }
    undecided.map_or(Judged::Admits, Judged::Undecided)
}

/// How the API server names the denier: `ValidatingAdmissionPolicy 'p' with binding 'b'`.
fn denied_by(g: &Graph, m: &PolicyMatch) -> String {
    let policy = g.identity(m.policy).name;
    match m.binding {
        Some(b) => format!("ValidatingAdmissionPolicy '{policy}' with binding '{}'", g.identity(b).name),
        None => format!("ValidatingAdmissionPolicy '{policy}'"),
    }
}

/// What the expressions are given for one request.
struct Inputs {
    request: Value,
    namespace_object: Value,
    object: Value,
    old_object: Value,
    known: Known,
}

/// The fields of the inputs the input holds in full.
struct Known {
    /// `metadata` fields of the object.
    object_meta: Vec<&'static str>,
    /// Top-level fields besides metadata (spec, status) of the object.
    object_body: bool,
    namespace_meta: Vec<&'static str>,
}

impl Known {
    fn of(o: &Object, namespace: Option<&Object>) -> Known {
        Known {
            object_meta: meta_known(o),
            object_body: keeps_body(o.group(), &o.kind),
            namespace_meta: namespace.map(meta_known).unwrap_or_default(),
        }
    }
}

fn meta_known(o: &Object) -> Vec<&'static str> {
    let mut out = vec![
        "name",
        "namespace",
        "uid",
        "resourceVersion",
        "creationTimestamp",
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
        "finalizers",
    ];
    if labels_kept(o) {
        out.push("labels");
    }
    out
}

/// The object as far as the input knows it: the metadata kept, and the body for the kinds
/// whose body is kept.
fn known_object(o: &Object) -> Value {
    let mut meta = Map::new();
    meta.insert("name".into(), json!(o.name));
    if let Some(ns) = &o.namespace {
        meta.insert("namespace".into(), json!(ns));
    }
    meta.insert("uid".into(), json!(o.uid.0));
    if let Some(rv) = &o.resource_version {
        meta.insert("resourceVersion".into(), json!(rv));
    }
    if let Some(t) = o.creation_timestamp {
        meta.insert("creationTimestamp".into(), json!(t.to_string()));
    }
    if let Some(t) = o.deletion_timestamp {
        meta.insert("deletionTimestamp".into(), json!(t.to_string()));
    }
    if let Some(s) = o.deletion_grace_period_seconds {
        meta.insert("deletionGracePeriodSeconds".into(), json!(s));
    }
    if !o.finalizers.is_empty() {
        meta.insert("finalizers".into(), json!(o.finalizers));
    }
    if labels_kept(o) && !o.labels.is_empty() {
        let labels: BTreeMap<&str, &str> = o.labels.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        meta.insert("labels".into(), json!(labels));
    }
    let mut out = Map::new();
    out.insert("apiVersion".into(), json!(o.api_version));
    out.insert("kind".into(), json!(o.kind));
    out.insert("metadata".into(), Value::Object(meta));
    if keeps_body(o.group(), &o.kind) {
        for (k, v) in o.body.map() {
            out.insert(k.clone(), v.clone());
        }
    }
    Value::Object(out)
}

/// The policy on one request: its variables, matchConditions, then validations, in order.
fn one_request(spec: &Value, inputs: &Inputs) -> Judged {
    let list = |k: &str| spec.get(k).and_then(Value::as_array).cloned().unwrap_or_default();
    let mut variables: Vec<(String, Result<Value, String>)> = Vec::new();
    for v in list("variables") {
        let name = v.get("name").and_then(Value::as_str).unwrap_or_default().to_string();
        let got = match v.get("expression").and_then(Value::as_str) {
            Some(e) => evaluate(e, inputs, &variables),
            None => Err(format!("variable {name} has no expression")),
        };
        variables.push((name, got));
    }
    for c in list("matchConditions") {
        let Some(e) = c.get("expression").and_then(Value::as_str) else { continue };
        match evaluate(e, inputs, &variables) {
            Ok(Value::Bool(true)) => {}
            Ok(Value::Bool(false)) => return Judged::Admits,
            Ok(other) => return Judged::Undecided(format!("matchCondition {e:?} gave {other}, not a bool")),
            Err(why) => return Judged::Undecided(why),
        }
    }
    for v in list("validations") {
        let Some(e) = v.get("expression").and_then(Value::as_str) else { continue };
        match evaluate(e, inputs, &variables) {
            Ok(Value::Bool(true)) => {}
            Ok(Value::Bool(false)) => {
                return Judged::Denies { message: message(&v, e, inputs, &variables), finalizer: None };
            }
            Ok(other) => return Judged::Undecided(format!("validation {e:?} gave {other}, not a bool")),
            Err(why) => return Judged::Undecided(why),
        }
    }
    Judged::Admits
}

/// The message a failed validation returns: its messageExpression's string where that
/// evaluates, else its message, else the API server's `failed expression: <expression>`.
fn message(v: &Value, expression: &str, inputs: &Inputs, variables: &[(String, Result<Value, String>)]) -> String {
    if let Some(e) = v.get("messageExpression").and_then(Value::as_str)
        && let Ok(Value::String(s)) = evaluate(e, inputs, variables)
        && !s.trim().is_empty()
    {
        return s;
    }
    match v.get("message").and_then(Value::as_str).filter(|m| !m.is_empty()) {
        Some(m) => m.to_string(),
        None => format!("failed expression: {expression}"),
    }
}

/// One expression, as JSON, or why it was not evaluated: on a thread of its own with a stack
/// of [`STACK`], as the parser and the evaluator recurse.
fn evaluate(source: &str, inputs: &Inputs, variables: &[(String, Result<Value, String>)]) -> Result<Value, String> {
    if source.len() > MAX_EXPRESSION {
        return Err(format!("an expression of {} bytes is longer than the API server accepts", source.len()));
    }
    if nesting(source) > MAX_NESTING {
        return Err(format!("{source:?} nests deeper than {MAX_NESTING} brackets, which is not evaluated here"));
    }
    std::thread::scope(|s| {
        std::thread::Builder::new()
            .stack_size(STACK)
            .spawn_scoped(s, || evaluate_here(source, inputs, variables))
            .map_err(|e| format!("no thread to evaluate {source:?} on ({e})"))?
            .join()
            .unwrap_or_else(|_| Err(format!("{source:?} could not be evaluated here")))
    })
}

/// The deepest nesting of brackets in `source`, outside string literals.
fn nesting(source: &str) -> usize {
    let (mut depth, mut deepest, mut quote, mut escaped) = (0usize, 0usize, None::<char>, false);
    for c in source.chars() {
        match quote {
            Some(q) => {
                if escaped {
                    escaped = false;
                } else if c == '\\' {
                    escaped = true;
                } else if c == q {
                    quote = None;
                }
            }
            None => match c {
                '\'' | '"' => quote = Some(c),
                '(' | '[' | '{' => {
                    depth += 1;
                    deepest = deepest.max(depth);
                }
                ')' | ']' | '}' => depth = depth.saturating_sub(1),
                _ => {}
            },
        }
    }
    deepest
}

fn evaluate_here(
    source: &str,
    inputs: &Inputs,
    variables: &[(String, Result<Value, String>)],
) -> Result<Value, String> {
    let program = ::cel::Program::compile(source).map_err(|e| format!("{source:?} does not parse here ({e})"))?;
    let refs = program.references();
    if let Some(f) = refs.functions().into_iter().find(|f| !SUPPORTED.contains(f)) {
        return Err(format!("{source:?} calls {f}, which is not evaluated here"));
    }
    if let Some(v) = ["authorizer", "params"].into_iter().find(|v| refs.has_variable(v)) {
        return Err(format!("{source:?} reads {v}, which is not evaluated here"));
    }
    fields_known(source, &inputs.known)?;
    // the last finalizer removed from a custom resource: whether its emptied list is in the
    // request (as the client sent it) or not cannot be told
    let emptied = inputs.object.pointer("/metadata/finalizers").and_then(Value::as_array).is_some_and(Vec::is_empty);
    let reads_it = || paths(source).iter().any(|(v, p)| v == "object" && p.len() > 1 && p[1] == "finalizers");
    if emptied && reads_it() {
        return Err(format!(
            "{source:?} reads the finalizers of the request, and whether a custom resource's emptied list is in it cannot be told"
        ));
    }
    let lists = [&inputs.object, &inputs.old_object, &inputs.namespace_object].map(widest_list);
    let cost = estimate_cost(source, lists.into_iter().max().unwrap_or(0));
    if cost > COST_BUDGET {
        return Err(format!("{source:?} may cost more than the API server's budget ({cost} > {COST_BUDGET})"));
    }
    let mut ctx = ::cel::Context::default();
    let add = |ctx: &mut ::cel::Context, name: &str, v: &Value| -> Result<(), String> {
        let v = ::cel::to_value(v).map_err(|e| format!("{name} cannot be given to CEL ({e})"))?;
        ctx.add_variable_from_value(name.to_string(), v);
        Ok(())
    };
    add(&mut ctx, "object", &inputs.object)?;
    add(&mut ctx, "oldObject", &inputs.old_object)?;
    add(&mut ctx, "request", &inputs.request)?;
    add(&mut ctx, "namespaceObject", &inputs.namespace_object)?;
    if refs.has_variable("variables") {
        let mut vars = Map::new();
        for (name, got) in variables {
            match got {
                Ok(v) => {
                    vars.insert(name.clone(), v.clone());
                }
                // a variable that could not be evaluated, read or not: the answer cannot rest on it
                Err(why) => return Err(format!("variable {name}: {why}")),
            }
        }
        add(&mut ctx, "variables", &Value::Object(vars))?;
    }
    let got = program.execute(&ctx).map_err(|e| format!("{source:?} fails here ({e})"))?;
    to_json(&got).ok_or_else(|| format!("{source:?} gave a value that is not plain data"))
}

fn to_json(v: &::cel::Value) -> Option<Value> {
    use ::cel::Value as C;
    Some(match v {
        C::Null => Value::Null,
        C::Bool(b) => json!(b),
        C::Int(i) => json!(i),
        C::UInt(u) => json!(u),
        C::Float(f) => json!(f),
        C::String(s) => json!(s.as_str()),
        C::List(l) => Value::Array(l.iter().map(to_json).collect::<Option<_>>()?),
        C::Map(m) => {
            let mut out = Map::new();
            for (k, v) in m.map.iter() {
                let key = match k {
                    ::cel::objects::Key::String(s) => s.to_string(),
                    other => format!("{other:?}"),
                };
                out.insert(key, to_json(v)?);
            }
            Value::Object(out)
        }
        _ => return None,
    })
}

/// The length of the longest list in `v` (what a comprehension may range over).
fn widest_list(v: &Value) -> usize {
    match v {
        Value::Array(a) => a.iter().map(widest_list).max().unwrap_or(0).max(a.len()),
        Value::Object(m) => m.values().map(widest_list).max().unwrap_or(0).max(m.len()),
        _ => 0,
    }
}

/// The cost estimate: the expression's length, times the widest list plus one for each
/// comprehension it holds (nested or not: an upper bound).
fn estimate_cost(source: &str, widest: usize) -> u64 {
    let comprehensions = [".all(", ".exists(", ".exists_one(", ".map(", ".filter("]
        .iter()
        .map(|m| source.matches(m).count())
        .sum::<usize>();
    let per = (widest as u64).saturating_add(1);
    (0..comprehensions).fold(source.len() as u64, |c, _| c.saturating_mul(per))
}

/// Whether every field the expression reads of `object`, `oldObject`, `namespaceObject` and
/// `request` is one the input holds; else which is not.
fn fields_known(source: &str, known: &Known) -> Result<(), String> {
    for (var, path) in paths(source) {
        let missing = |what: String| Err(format!("{source:?} reads {what}, which the input does not hold"));
        match var.as_str() {
            "object" | "oldObject" | "namespaceObject" => {
                let (meta, body) = if var == "namespaceObject" {
                    (&known.namespace_meta, true)
                } else {
                    (&known.object_meta, known.object_body)
                };
                match path.first().map(String::as_str) {
                    // `object == null` and the like: a whole object compared to null only
                    None => {}
                    Some(WHOLE) => return missing(format!("{var} as a whole")),
                    Some("metadata") => match path.get(1) {
                        Some(f) if meta.contains(&f.as_str()) => {}
                        Some(f) => return missing(format!("{var}.metadata.{f}")),
                        None => return missing(format!("{var}.metadata as a whole")),
                    },
                    Some("apiVersion" | "kind") => {}
                    Some("spec" | "status") if body => {}
                    Some(f) => return missing(format!("{var}.{f}")),
                }
            }
            "request" => match path.first().filter(|f| *f != WHOLE) {
                Some(f) if REQUEST_FIELDS.contains(&f.as_str()) => {}
                Some(f) => return missing(format!("request.{f} (who sends the request, and how, is not known)")),
                None => return missing("request as a whole".into()),
            },
            _ => {}
        }
    }
    Ok(())
}

/// Each use of a given variable in `source` (outside string literals, not a field of
/// something else) with the fields selected after it (`object.metadata.labels['a']` gives
/// `object`, `[metadata, labels]`). A whole object is kept only where it is compared to null.
fn paths(source: &str) -> Vec<(String, Vec<String>)> {
    let chars: Vec<char> = source.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    let ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    while i < chars.len() {
        let c = chars[i];
        if c == '\'' || c == '"' {
            // skip the literal (escapes included)
            i += 1;
            while i < chars.len() && chars[i] != c {
                i += if chars[i] == '\\' { 2 } else { 1 };
            }
            i += 1;
            continue;
        }
        if !(c.is_ascii_alphabetic() || c == '_') {
            i += 1;
            continue;
        }
        let start = i;
        while i < chars.len() && ident(chars[i]) {
            i += 1;
        }
        let word: String = chars[start..i].iter().collect();
        let selected = start > 0 && chars[..start].iter().rev().find(|c| !c.is_whitespace()) == Some(&'.');
        if selected || !GIVEN.contains(&word.as_str()) || word == "variables" {
            continue;
        }
        let mut path = Vec::new();
        loop {
            let mut j = i;
            while j < chars.len() && chars[j].is_whitespace() {
                j += 1;
            }
            if j < chars.len()
                && chars[j] == '.'
                && j + 1 < chars.len()
                && (chars[j + 1].is_ascii_alphabetic() || chars[j + 1] == '_')
            {
                let s = j + 1;
                let mut e = s;
                while e < chars.len() && ident(chars[e]) {
                    e += 1;
                }
                path.push(chars[s..e].iter().collect());
                i = e;
            } else {
                break;
            }
        }
        if path.is_empty() {
            // compared to null, it reads nothing; anything else reads it whole
            let rest: String = chars[i..].iter().collect::<String>().split_whitespace().collect::<Vec<_>>().join(" ");
            let before: String =
                chars[..start].iter().collect::<String>().split_whitespace().collect::<Vec<_>>().join(" ");
            let null_compared = rest.starts_with("== null")
                || rest.starts_with("!= null")
                || before.ends_with("null ==")
                || before.ends_with("null !=");
            if !null_compared {
                path.push(WHOLE.into());
            }
        }
        out.push((word, path));
    }
    out
}

#[cfg(test)]
#[path = "evaluate_tests.rs"]
mod tests;

//! Mutations that put a finalizer back (contract §4.3 `FinalizerReAdded`).
//!
//! The API server refuses an UPDATE of an object being deleted that adds a finalizer
//! (apimachinery's `ValidateObjectMetaUpdate`: while the old object has a deletionTimestamp,
//! `ValidateNoNewFinalizers` returns a `field.Forbidden` on `metadata.finalizers`). Mutating
//! admission runs before that validation, so a mutating webhook or MutatingAdmissionPolicy that
//! adds its finalizer to every UPDATE it matches turns the controller's finalizer-removing
//! UPDATE into one that adds a finalizer: refused, every time, and any printed patch with it.
//!
//! Seen, not guessed: a Warning Event about the object, since its deletion was requested, that
//! quotes that field error. The error reads `<field>: <type>: <detail>` (`field.Error`), so
//! the field path and the error type are its structure, `metadata.finalizers: Forbidden`; the
//! detail is the API server's wording, quoted, never matched. The mutators are those that are
//! sent that UPDATE: every mutating webhook whose rules and selectors match it (whatever its
//! failurePolicy: a serving webhook's patch is applied either way), and every
//! MutatingAdmissionPolicy that applies to it and whose mutations read `finalizers`. Without
//! one the refusal has another author (a controller adding its own finalizer to an object
//! being deleted): no re-adding mutation is claimed.
//!
//! The same pass reads the other refusal a cleanup meets in a namespace being deleted: a create
//! there, which NamespaceLifecycle refuses ([`names_namespace`]; `diagnose::create_refused`).

use std::collections::HashMap;

use k8s_openapi::jiff::Timestamp;
use serde_json::Value;

use super::policies::{GROUP, Kind, Policies};
use super::webhooks::{self, Match, Operation};
use crate::graph::{Graph, NodeId};
use crate::snapshot::{Object, Uid};

/// The structure of the refusal in a message: the field and the error type of `field.Error`.
const FIELD_ERROR: &str = "metadata.finalizers: Forbidden";

/// One Warning Event quoting the refusal of an UPDATE that added a finalizer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refusal {
    /// The Event's reason (the reporter's).
    pub reason: String,
    /// The Event's message (`note`), as written.
    pub message: String,
    /// Who reported it (`reportingController`, `source.component`).
    pub reporter: Option<String>,
    /// How many times (`count`, `series.count`, else 1).
    pub count: i64,
    /// When it was last seen.
    pub last_seen: Option<Timestamp>,
}

/// A mutating webhook configuration (one of its webhooks) or a MutatingAdmissionPolicy (and
/// its binding) sent the finalizer-removing UPDATE.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mutator {
    /// The MutatingWebhookConfiguration or the MutatingAdmissionPolicy.
    pub by: NodeId,
    /// The webhook's name and its place in the configuration's `webhooks`, for a configuration.
    pub webhook: Option<(String, usize)>,
    /// The policy's binding.
    pub binding: Option<NodeId>,
    /// The policy's mutations that write finalizers, quoted.
    pub writes: Vec<String>,
    /// What could not be evaluated (matchConditions, labels not read): it may not apply.
    pub caveats: Vec<String>,
}

/// A refused finalizer removal and the mutations that may have put the finalizer back.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReAdded<'a> {
    /// The most recent refusal quoted.
    pub refusal: &'a Refusal,
    /// Every mutator sent the UPDATE (never empty).
    pub mutators: Vec<Mutator>,
}

/// The refusals quoted in Events, by the uid of the object they are about.
#[derive(Default)]
pub struct Refusals {
    by_uid: HashMap<Uid, Vec<Refusal>>,
    /// Creates refused in a namespace being deleted, with that namespace ([`names_namespace`]).
    creates: HashMap<Uid, Vec<(String, Refusal)>>,
}

impl Refusals {
    /// One pass over the Events of `g` (none looked at when nothing mutates: no refusal could
    /// be a mutation's).
    pub fn new(g: &Graph) -> Refusals {
        let mut out = Refusals::default();
        let mutating = ["MutatingWebhookConfiguration", "MutatingAdmissionPolicy"];
        let mutates = mutating.iter().any(|k| !g.of_kind(GROUP, k).is_empty());
        let terminating = g.of_kind("", "Namespace").iter().any(|&n| g.object(n).is_some_and(|n| n.is_deleting()));
        if !mutates && !terminating {
            return out;
        }
        for o in g.objects().iter().filter(|o| o.kind == "Event") {
            let Some((uid, r)) = read(o) else { continue };
            if let Some(ns) = names_namespace(&r.message).filter(|_| terminating) {
                out.creates.entry(uid.clone()).or_default().push((ns.to_string(), r.clone()));
            }
            if mutates && r.message.contains(FIELD_ERROR) {
                out.by_uid.entry(uid).or_default().push(r);
            }
        }
        let recent_first =
            |a: &Refusal, b: &Refusal| b.last_seen.cmp(&a.last_seen).then_with(|| a.message.cmp(&b.message));
        for v in out.by_uid.values_mut() {
            v.sort_by(recent_first);
        }
        for v in out.creates.values_mut() {
            v.sort_by(|(_, a), (_, b)| recent_first(a, b));
        }
        out
    }

    /// The most recent Warning about `x`, since its deletion was requested, that quotes a
    /// create refused in a namespace, with that namespace's name ([`names_namespace`]); whether
    /// that namespace is being deleted is the caller's to judge (a plan's world changes).
    pub fn create_refused<'a>(&'a self, g: &Graph, x: NodeId) -> Option<(&'a str, &'a Refusal)> {
        let o = g.object(x).filter(|o| o.is_deleting())?;
        let since = o.deletion_requested_at();
        self.creates
            .get(&o.uid)?
            .iter()
            .find(|(_, r)| !matches!((since, r.last_seen), (Some(s), Some(t)) if t < s))
            .map(|(ns, r)| (ns.as_str(), r))
    }

    /// The refusal of `x`'s finalizer removal and who mutates that UPDATE, when `x` is being
    /// deleted, a refusal was seen since its deletion was requested, and a mutator is sent it.
    pub fn of<'a>(&'a self, g: &Graph, policies: &Policies, x: NodeId) -> Option<ReAdded<'a>> {
        let o = g.object(x).filter(|o| o.is_deleting())?;
        let since = o.deletion_requested_at();
        let refusal =
            self.by_uid.get(&o.uid)?.iter().find(|r| !matches!((since, r.last_seen), (Some(s), Some(t)) if t < s))?;
        let mutators = mutators(g, policies, x);
        (!mutators.is_empty()).then_some(ReAdded { refusal, mutators })
    }
}

/// Who mutates an UPDATE of `x`: its mutating webhooks, then the MutatingAdmissionPolicies
/// that apply to it and write finalizers.
pub fn mutators(g: &Graph, policies: &Policies, x: NodeId) -> Vec<Mutator> {
    let Some(o) = g.object(x) else { return Vec::new() };
    let Some(t) = g.mapper().kind(o.group(), &o.kind) else { return Vec::new() };
    let mut out = Vec::new();
    if o.group() == GROUP {
        // requests for admission configuration are never sent to webhooks or policies
        return out;
    }
    for &c in g.of_kind(GROUP, "MutatingWebhookConfiguration") {
        let Some(conf) = g.object(c) else { continue };
        for (i, w) in conf.body.get("webhooks").and_then(Value::as_array).into_iter().flatten().enumerate() {
            let caveats = match webhooks::webhook_matches(g, w, o, &t.plural, t.namespaced, Operation::Update) {
                Match::No => continue,
                Match::Yes => Vec::new(),
                Match::Maybe(c) => c,
            };
            let name = w.get("name").and_then(Value::as_str).unwrap_or_default().to_string();
            out.push(Mutator { by: c, webhook: Some((name, i)), binding: None, writes: Vec::new(), caveats });
        }
    }
    for m in policies.matching(g, x, Operation::Update) {
        if m.kind == Kind::Mutating && !m.reads.is_empty() {
            out.push(Mutator { by: m.policy, webhook: None, binding: m.binding, writes: m.reads, caveats: m.caveats });
        }
    }
    out
}

/// A Warning Event whose message quotes the field error: the uid it is about and the refusal.
fn read(o: &Object) -> Option<(Uid, Refusal)> {
    let (uid, e) = crate::snapshot::event::read(o)?;
    if e.type_ != "Warning" || (!e.message.contains(FIELD_ERROR) && names_namespace(&e.message).is_none()) {
        return None;
    }
    let refusal = Refusal {
        reason: e.reason,
        message: e.message,
        reporter: e.reporting_controller,
        count: e.count,
        last_seen: e.last_seen,
    };
    Some((uid, refusal))
}

/// The namespace a Forbidden error names as NamespaceLifecycle does when it refuses a create
/// in a namespace being deleted: `<resource> "<name>" is forbidden: … namespace <name> …`, the
/// name unquoted (its status cause, `NamespaceTerminating`, does not survive into an Event).
/// RBAC's refusal names it quoted (`in the namespace "<name>"`) and is not this. The rest of
/// the wording is the API server's, quoted by callers, never matched.
pub fn names_namespace(message: &str) -> Option<&str> {
    if !message.to_ascii_lowercase().contains("forbidden") {
        return None;
    }
    message.match_indices("namespace ").find_map(|(i, m)| {
        let rest = &message[i + m.len()..];
        let end = rest.find(|c: char| !(c.is_ascii_alphanumeric() || c == '-')).unwrap_or(rest.len());
        (end > 0).then_some(&rest[..end])
    })
}

#[cfg(test)]
mod tests {
    use super::names_namespace;

    #[test]
    fn the_namespace_is_read_as_namespace_lifecycle_names_it_not_as_rbac_quotes_it() {
        let lifecycle = "failed to create secret: secrets \"x-token\" is forbidden: unable to create new content in namespace labs because it is being terminated";
        assert_eq!(names_namespace(lifecycle), Some("labs"));
        let rbac = "secrets is forbidden: User \"system:serviceaccount:ops:op\" cannot create resource \"secrets\" in API group \"\" in the namespace \"labs\"";
        assert_eq!(names_namespace(rbac), None);
        // not a refusal at all
        assert_eq!(names_namespace("created secret in namespace labs"), None);
    }
}

//! Denials seen: Warning Events about an object whose message says `denied` and quotes, by
//! name, a webhook of a configuration or an admission policy (or its binding) that the graph
//! holds. The API server's rejections read `admission webhook "<name>" denied the request`
//! and `ValidatingAdmissionPolicy '<name>' with binding '<binding>' denied request`; the
//! controller whose request was refused usually repeats them in its Events. Only the names
//! the cluster holds are matched, never the surrounding wording (it changes between
//! releases); the message is quoted as written.
//!
//! A denial counts for a request only when its denier could have been sent that request (a
//! webhook of the configuration, or the policy through the binding quoted, matches it), and
//! only when it was seen after the deletion that sends the request was requested (the object's,
//! else its namespace's or an owner's): an older one was about another request.

use std::collections::HashMap;

use k8s_openapi::jiff::Timestamp;
use serde_json::Value;

use super::policies::{GROUP, Kind, Policies};
use super::webhooks::{self, Match, Operation};

/// The conditions in which the namespace controller repeats its error deleting content.
pub const CONTENT_FAILURES: [&str; 2] =
    ["NamespaceDeletionContentFailure", "NamespaceDeletionGroupVersionParsingFailure"];
use crate::graph::{Graph, NodeId};
use crate::snapshot::{Object, Uid};

/// One Warning Event that quotes a denial.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Denial {
    /// The webhook configuration or the policy that denied.
    pub by: NodeId,
    /// The policy's binding, when the message quotes one.
    pub binding: Option<NodeId>,
    /// The webhook's name, for a configuration.
    pub webhook: Option<String>,
    /// The Event's reason.
    pub reason: String,
    /// The Event's message (`note`), as written.
    pub message: String,
    /// Who reported it (`reportingController`, `source.component`).
    pub reporter: Option<String>,
    /// When it was last seen.
    pub last_seen: Option<Timestamp>,
    /// Where it is quoted.
    pub seen_in: SeenIn,
}

/// Where a denial is quoted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SeenIn {
    /// A Warning Event about the object.
    Event,
    /// A condition of the terminating namespace that holds the object: the namespace
    /// controller's DELETE of its content was denied (no Event can be written there, and the
    /// controller repeats its error in the condition).
    NamespaceCondition {
        /// The namespace.
        namespace: String,
        /// The condition's type.
        condition: String,
    },
}

impl Denial {
    /// Where it is quoted, for people: `a Warning Event (Reason by component)`.
    pub fn quoted_by(&self) -> String {
        match &self.seen_in {
            SeenIn::Event => {
                let by = self.reporter.as_deref().map(|r| format!(" by {r}")).unwrap_or_default();
                format!("a Warning Event ({}{by})", self.reason)
            }
            SeenIn::NamespaceCondition { namespace, condition } => {
                format!("the {condition} condition of namespace {namespace} ({})", self.reason)
            }
        }
    }
}

/// The denials of a graph, by the uid of the object the Events are about.
#[derive(Default)]
pub struct Denials {
    by_uid: HashMap<Uid, Vec<Denial>>,
    /// Denials of the namespace controller's DELETEs of content, by the namespace whose
    /// condition quotes them: about every object there the denier could have been sent.
    by_namespace: HashMap<String, Vec<Denial>>,
    /// Every name a denial may quote.
    names: Vec<Quoted>,
}

/// Who a message quotes as denying a request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Denier {
    /// The webhook configuration or the policy.
    pub by: NodeId,
    /// The policy's binding, when the message quotes one.
    pub binding: Option<NodeId>,
    /// The webhook's name, for a configuration.
    pub webhook: Option<String>,
}

/// A name the cluster holds, quoted as the API server quotes it, and who it is.
struct Quoted {
    text: String,
    by: NodeId,
    webhook: Option<String>,
    kind: Option<Kind>,
}

impl Denials {
    /// One pass over the Events of `g` (none are looked at when no configuration or policy
    /// was read: a denial must name one).
    pub fn new(g: &Graph) -> Denials {
        let mut names: Vec<Quoted> = Vec::new();
        for kind in ["ValidatingWebhookConfiguration", "MutatingWebhookConfiguration"] {
            for &c in g.of_kind(GROUP, kind) {
                let Some(conf) = g.object(c) else { continue };
                for w in conf.body.get("webhooks").and_then(Value::as_array).into_iter().flatten() {
                    if let Some(n) = w.get("name").and_then(Value::as_str) {
                        names.push(Quoted { text: format!("\"{n}\""), by: c, webhook: Some(n.into()), kind: None });
                    }
                }
            }
        }
        for kind in Kind::ALL {
            for &p in g.of_kind(GROUP, kind.policy()) {
                names.push(Quoted {
                    text: format!("'{}'", g.identity(p).name),
                    by: p,
                    webhook: None,
                    kind: Some(kind),
                });
            }
        }
        let mut out = Denials { names, ..Denials::default() };
        if out.names.is_empty() {
            return out;
        }
        for o in g.objects().iter().filter(|o| o.kind == "Event") {
            let Some((uid, q, mut d)) = read(o, &out.names) else { continue };
            if !crate::graph::event_speaks_about(g, o, &uid) {
                continue;
            }
            d.binding = binding_quoted(g, q, &d.message);
            out.by_uid.entry(uid).or_default().push(d);
        }
        for &n in g.of_kind("", "Namespace") {
            let Some(ns) = g.object(n).filter(|o| o.is_deleting()) else { continue };
            for t in CONTENT_FAILURES {
                let Some(c) = ns.condition(t).filter(|c| c.is_true()) else { continue };
                let Some(q) = denier_in(c.message, &out.names) else { continue };
                out.by_namespace.entry(ns.name.clone()).or_default().push(Denial {
                    by: q.by,
                    binding: binding_quoted(g, q, c.message),
                    webhook: q.webhook.clone(),
                    reason: c.reason.to_string(),
                    message: c.message.to_string(),
                    reporter: Some("namespace-controller".into()),
                    last_seen: c.last_transition_time,
                    seen_in: SeenIn::NamespaceCondition { namespace: ns.name.clone(), condition: t.to_string() },
                });
            }
        }
        for v in out.by_uid.values_mut() {
            v.sort_by(|a, b| b.last_seen.cmp(&a.last_seen).then_with(|| a.message.cmp(&b.message)));
        }
        out
    }

    /// Who `message` (a namespace condition's, say, which repeats the namespace controller's
    /// error) quotes as denying, by the names the cluster holds and the word `denied` alone.
    pub fn quoted(&self, g: &Graph, message: &str) -> Option<Denier> {
        let q = denier_in(message, &self.names)?;
        Some(Denier { by: q.by, binding: binding_quoted(g, q, message), webhook: q.webhook.clone() })
    }

    /// The denials seen of `op` on `x`, most recent first (see the module doc for which count).
    pub fn of(&self, g: &Graph, policies: &Policies, x: NodeId, op: Operation) -> Vec<&Denial> {
        let Some(o) = g.object(x) else { return Vec::new() };
        // the namespace controller's DELETE, denied as its namespace's condition quotes, of
        // what is still there undeleted (a denied DELETE sets no deletionTimestamp)
        let content = (op == Operation::Delete && !o.is_deleting())
            .then(|| o.namespace.as_deref().and_then(|ns| self.by_namespace.get(ns)))
            .flatten();
        let all = self.by_uid.get(&o.uid).into_iter().flatten().chain(content.into_iter().flatten());
        // from when the request can have been sent: the object's deletion, else its
        // namespace's or an owner's (the namespace controller's and the GC's DELETEs)
        let since = o.deletion_requested_at().or_else(|| {
            let ns = o.namespace.as_deref().and_then(|ns| g.find("", "Namespace", None, ns));
            ns.into_iter()
                .chain(g.owner_nodes(x).iter().copied())
                .filter_map(|n| g.object(n).and_then(|n| n.deletion_requested_at()))
                .min()
        });
        all.filter(|d| !matches!((since, d.last_seen), (Some(s), Some(t)) if t < s))
            .filter(|d| could_deny(g, policies, d, o, x, op))
            .collect()
    }
}

/// Whether the denier of `d` is sent `op` on `o`: one of the configuration's webhooks (the
/// one quoted) matches it, whatever its failurePolicy (a serving webhook's answer counts
/// either way); or the policy applies to it (through the binding quoted, if any).
fn could_deny(g: &Graph, policies: &Policies, d: &Denial, o: &Object, x: NodeId, op: Operation) -> bool {
    let Some(conf) = g.object(d.by) else { return false };
    if d.webhook.is_none() {
        return policies
            .matching(g, x, op)
            .iter()
            .any(|m| m.policy == d.by && d.binding.is_none_or(|b| m.binding == Some(b)));
    }
    let Some(t) = g.mapper().kind(o.group(), &o.kind) else { return false };
    conf.body.get("webhooks").and_then(Value::as_array).into_iter().flatten().any(|w| {
        w.get("name").and_then(Value::as_str) == d.webhook.as_deref()
            && webhooks::webhook_matches(g, w, o, &t.plural, t.namespaced, op) != Match::No
    })
}

/// A Warning Event that says `denied` and quotes one of `names`: the uid it is about, the
/// name, and the denial (its binding not looked up yet).
fn read<'a>(o: &Object, names: &'a [Quoted]) -> Option<(Uid, &'a Quoted, Denial)> {
    let (uid, e) = crate::snapshot::event::read(o)?;
    if e.type_ != "Warning" {
        return None;
    }
    let q = denier_in(&e.message, names)?;
    let d = Denial {
        by: q.by,
        binding: None,
        webhook: q.webhook.clone(),
        reason: e.reason,
        message: e.message,
        reporter: e.reporting_controller,
        last_seen: e.last_seen,
        seen_in: SeenIn::Event,
    };
    Some((uid, q, d))
}

/// The name among `names` that a message saying `denied` quotes.
fn denier_in<'a>(message: &str, names: &'a [Quoted]) -> Option<&'a Quoted> {
    if !message.contains("denied") {
        return None;
    }
    names.iter().find(|q| message.contains(q.text.as_str()))
}

/// The binding of the policy `q` that `message` quotes (`with binding '<name>'`), by name.
fn binding_quoted(g: &Graph, q: &Quoted, message: &str) -> Option<NodeId> {
    let kind = q.kind?;
    let policy = g.identity(q.by).name;
    g.of_kind(GROUP, kind.binding()).iter().copied().find(|&b| {
        g.object(b).and_then(|b| b.str_field("/spec/policyName")) == Some(policy)
            && message.contains(&format!("'{}'", g.identity(b).name))
    })
}

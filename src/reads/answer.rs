//! What a why-stuck answer reads beyond the objects around it, decided by the analysis itself
//! on a graph of what has been read so far: the admission and conversion webhooks that may
//! reject the requests a deletion needs, and their backends ([`crate::reads::wishes::wanted`],
//! in two rounds: the configurations and CRDs, then the Services and EndpointSlices they name);
//! then the Events of the objects the answer names ([`crate::diagnose::events::wanted`]), each
//! by its uid (`involvedObject.uid`), never a list of every Event.
//!
//! A capture of a namespace has no one answer to ask: it reads the backends of every webhook it
//! holds ([`crate::reads::wishes::backends_of_all`]), and the Events outside the namespace
//! that the answers about what is being deleted in it show ([`capture_event_objects`]), so that
//! answers from the file see them.

use k8s_openapi::jiff::Timestamp;

use crate::controllers::Liveness;
use crate::graph::{Graph, NodeId};
use crate::reads::wishes::Read;
use crate::snapshot::Uid;
use crate::source::live::Discovery;
use crate::source::live::ask::{Answered, Ask, Body, Fetch, Use};

use super::TargetRef;

/// The object asked about, if it was read.
pub fn target_node(g: &Graph, t: &TargetRef) -> Option<NodeId> {
    g.find(&t.group, &t.kind, t.namespace.as_deref(), &t.name)
}

/// The asks for the analysis's reads that no answer so far covers (a type discovery does not
/// serve has nothing to read).
pub fn asks_for(d: &Discovery, reads: &[Read], answers: &[Answered]) -> Vec<Ask> {
    let mut out: Vec<Ask> = Vec::new();
    for r in reads {
        let Some(t) = d.types.iter().find(|t| t.group == r.group && t.plural == r.resource) else { continue };
        let mut a = match &r.name {
            Some(n) => Ask::get(t, r.namespace.clone(), n, r.why),
            None => Ask::list(t, r.namespace.clone(), r.why),
        };
        if let Some(l) = &r.label_selector {
            a = a.labelled(l.clone());
        }
        if r.full {
            a = a.full();
        }
        let known = answers.iter().map(|x| &x.ask).chain(&out).any(|x| covered(x, &a));
        if !known {
            out.push(a);
        }
    }
    out
}

/// Whether the answer to `by` holds everything `a` would read: the same read, or a list of the
/// type where `a` reads with at least its body (a list kept to named objects covers a GET of
/// one of them).
fn covered(by: &Ask, a: &Ask) -> bool {
    if by.use_ != Use::Objects || by.kind != a.kind || (a.body == Body::Full && by.body != Body::Full) {
        return false;
    }
    if by.namespace == a.namespace && by.fetch == a.fetch {
        return true;
    }
    let where_ = a.namespace.as_deref();
    // a list everywhere covers every namespace; a list in one covers reads within it
    let place = by.namespace.is_none() || (by.namespace.as_deref() == where_ && where_.is_some());
    match (&by.fetch, &a.fetch) {
        (Fetch::List { field_selector: None, label_selector: None, only: None, except: None }, _) => place,
        (Fetch::List { field_selector: None, label_selector: None, only: None, except: Some(x) }, _) => {
            by.namespace.is_none() && where_.is_some_and(|ns| !x.contains(ns))
        }
        (Fetch::List { field_selector: None, label_selector: None, only: Some(o), except: None }, Fetch::Get(n)) => {
            place && o.contains(&(a.namespace.clone(), n.clone()))
        }
        _ => false,
    }
}

/// The Events of `objects` ((uid, kind, namespace), as `diagnose::events::wanted` names them):
/// one list each, in the object's namespace (a cluster-scoped object's Events are recorded in
/// `default`, as client-go's recorders do), narrowed to its uid. Read through core/v1
/// (`involvedObject.uid`), which serves every Event (events.k8s.io/v1 serves the same objects
/// from the same storage), or through events.k8s.io/v1 (`regarding.uid`) where core/v1's are
/// not served.
pub fn event_asks(d: &Discovery, objects: Vec<(Uid, String, Option<String>)>) -> Vec<Ask> {
    let (t, field) = match (d.find("", "Event"), d.find("events.k8s.io", "Event")) {
        (Some(t), _) => (t, "involvedObject.uid"),
        (None, Some(t)) => (t, "regarding.uid"),
        (None, None) => return Vec::new(),
    };
    objects
        .into_iter()
        .map(|(uid, kind, ns)| {
            let ns = ns.unwrap_or_else(|| "default".into());
            Ask::list(t, Some(ns), format!("the Events of the {kind} the answer names (uid {})", uid.0))
                .full()
                .selecting(format!("{field}={}", uid.0))
        })
        .collect()
}

/// The objects whose Events the answer about `target` shows, judged on `g` at `now`.
pub fn answer_event_objects(
    g: &Graph,
    target: NodeId,
    now: Timestamp,
    o: &crate::diagnose::Options,
) -> Vec<(Uid, String, Option<String>)> {
    let live = Liveness::new(g, now);
    let d = crate::diagnose::why_stuck_with(g, &live, target, o);
    crate::diagnose::events::wanted(g, &d)
}

/// The objects outside namespace `ns` whose Events the answers about `ns` show: the answers
/// about the namespace and each object being deleted in it (what `kubectl gc snapshot -n` is
/// taken for), judged on `g` at `now`. The namespace's own Events are listed with it.
pub fn capture_event_objects(
    g: &Graph,
    ns: &str,
    now: Timestamp,
    o: &crate::diagnose::Options,
) -> Vec<(Uid, String, Option<String>)> {
    let mut out = super::sweep::event_objects(g, &super::Scope::Namespace(ns.to_string()), now, o);
    out.retain(|(_, _, namespace)| namespace.as_deref() != Some(ns));
    out
}

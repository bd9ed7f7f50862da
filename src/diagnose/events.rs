//! Events as evidence (issue 11): the recent Warning events of the object asked about and of
//! the objects its answer names (blockers, claim users, what a controller waits for). Core
//! `v1` Events are matched by `involvedObject.uid`, `events.k8s.io/v1` Events by
//! `regarding.uid`; never by name, so an event of an earlier object of the same name is not
//! taken for this one's; and only from the object's own namespace (`default` for a
//! cluster-scoped one: `graph::event_speaks_about`), so an Event forged elsewhere is none. An
//! answer resting on Events alone says who could have written them ([`writable_by`]). The garbage collector ignores Events (`graph::ignored_by_gc`), so
//! they are read from the snapshot's objects, not from the graph.
//!
//! Their messages are quoted as written, never matched: components reword them between
//! releases. [`wanted`] says which objects' Events an answer reads, for a live reader that
//! asks for them by uid (field selectors) rather than listing every Event of the cluster.

use std::collections::HashMap;

use k8s_openapi::jiff::Timestamp;

use crate::graph::{Graph, NodeId};
use crate::snapshot::Uid;
pub use crate::snapshot::event::Event;
use crate::snapshot::event::read;

use super::{Diagnosis, Related};

/// Who could have written the Events about `x`: said by an answer that rests on them alone,
/// since the API server checks nothing of an Event but its namespace.
pub fn writable_by(g: &Graph, x: NodeId) -> String {
    let ns = crate::graph::events_namespace(g.identity(x).namespace);
    format!("Events can be written by anyone allowed to create Events in namespace \"{ns}\"")
}

/// At most this many Warning events per object are shown, most recent first.
pub const PER_OBJECT: usize = 3;
/// At most this many objects' events are shown per answer (a namespace may name thousands).
pub const MAX_OBJECTS: usize = 20;

impl Event {
    /// Whether `type` is `Warning` (the only ones an answer shows).
    pub fn is_warning(&self) -> bool {
        self.type_ == "Warning"
    }
}

/// The events of an answer, per object.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ObjectEvents {
    /// The object the Events are about (`involvedObject`/`regarding` uid).
    pub object: NodeId,
    /// Most recent first, at most [`PER_OBJECT`].
    pub warnings: Vec<Event>,
    /// How many Warning events the object has in all.
    pub total_warnings: usize,
}

/// The snapshot's Events, by the uid of the object they are about.
#[derive(Default)]
pub struct Index {
    by_uid: HashMap<Uid, Vec<Event>>,
    /// Whether the input holds any Event at all.
    any: bool,
}

impl Index {
    /// Indexes the core/v1 and events.k8s.io/v1 Events of `g` by the uid they are about.
    pub fn new(g: &Graph) -> Index {
        let mut idx = Index::default();
        for o in g.objects() {
            if o.kind != "Event" || !crate::graph::ignored_by_gc(o.group(), &o.kind) {
                continue;
            }
            idx.any = true;
            if let Some((uid, e)) = read(o)
                && crate::graph::event_speaks_about(g, o, &uid)
            {
                idx.by_uid.entry(uid).or_default().push(e);
            }
        }
        for v in idx.by_uid.values_mut() {
            // most recent first; ties by reason and message for a stable order
            v.sort_by(|a, b| {
                b.last_seen.cmp(&a.last_seen).then_with(|| (&a.reason, &a.message).cmp(&(&b.reason, &b.message)))
            });
        }
        idx
    }

    /// Whether the input holds any Event.
    pub fn any(&self) -> bool {
        self.any
    }

    /// Every Event of one object (Normal and Warning), most recent first.
    pub fn about(&self, uid: &Uid) -> &[Event] {
        self.by_uid.get(uid).map_or(&[], Vec::as_slice)
    }

    /// The Warning events of one object, most recent first.
    pub fn warnings(&self, uid: &Uid) -> Vec<&Event> {
        self.by_uid.get(uid).into_iter().flatten().filter(|e| e.is_warning()).collect()
    }

    /// The object's most recent Warning events, if it has any.
    pub fn of(&self, g: &Graph, x: NodeId) -> Option<ObjectEvents> {
        let all = self.warnings(g.identity(x).uid);
        (!all.is_empty()).then(|| ObjectEvents {
            object: x,
            total_warnings: all.len(),
            warnings: all.into_iter().take(PER_OBJECT).cloned().collect(),
        })
    }
}

/// The objects whose Events an answer shows: the object asked about first, then every
/// object its findings name (the finding's object and its related objects), in order, each
/// once, at most [`MAX_OBJECTS`]. Objects that do not exist (virtual nodes) have no Events.
pub fn answer_objects(g: &Graph, d: &Diagnosis) -> Vec<NodeId> {
    let mut out = vec![d.object];
    let named = d.findings.iter().flat_map(|f| {
        std::iter::once(f.object).chain(f.related.iter().filter_map(|r| match r {
            Related::Node(n) => Some(*n),
            Related::Absent { .. } => None,
        }))
    });
    for n in named {
        if out.len() >= MAX_OBJECTS {
            break;
        }
        if g.object(n).is_some() && !out.contains(&n) {
            out.push(n);
        }
    }
    out
}

/// What a live reader must fetch for an answer's Events: for each object of
/// [`answer_objects`], its uid, kind and namespace. Events are namespaced with the object they
/// are about (cluster-scoped objects' Events live in `default`), so each is one list in one
/// namespace with `fieldSelector=involvedObject.uid=<uid>` (core/v1) or
/// `regarding.uid=<uid>` (events.k8s.io/v1): never a cluster-wide list. A 403 on it goes to
/// `incomplete` and the answer stands.
pub fn wanted(g: &Graph, d: &Diagnosis) -> Vec<(Uid, String, Option<String>)> {
    answer_objects(g, d)
        .into_iter()
        .map(|n| {
            let id = g.identity(n);
            (id.uid.clone(), id.kind.to_string(), id.namespace.map(str::to_string))
        })
        .collect()
}

/// The Warning events of the answer's objects, for [`Diagnosis::events`].
pub fn for_answer(g: &Graph, idx: &Index, d: &Diagnosis) -> Vec<ObjectEvents> {
    answer_objects(g, d).into_iter().filter_map(|n| idx.of(g, n)).collect()
}

/// One line of evidence: `PurgeFailed ×3, last seen 2026-… (13m ago) by bucket-controller:
/// "bucket not empty: …"`.
pub fn describe_event(e: &Event, now: Timestamp) -> String {
    let when = match e.last_seen {
        Some(t) => format!(", last seen {t} ({} ago)", crate::age::human(now.as_second() - t.as_second())),
        None => String::new(),
    };
    let by = e.reporting_controller.as_deref().map(|c| format!(" by {c}")).unwrap_or_default();
    format!("{} ×{}{when}{by}: {:?}", e.reason, e.count, e.message)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{graph, obj};
    use serde_json::{Value, json};

    fn core_event(name: &str, about_uid: &str, type_: &str, reason: &str, last: &str) -> Value {
        obj("v1", "Event", Some("studio"), name, &format!("ev-{name}"))
            .with_field(
                "involvedObject",
                json!({"kind": "Bucket", "name": "raw", "namespace": "studio", "uid": about_uid}),
            )
            .with_field("type", json!(type_))
            .with_field("reason", json!(reason))
            .with_field("message", json!(format!("{reason} happened")))
            .with_field("count", json!(2))
            .with_field("lastTimestamp", json!(last))
            .with_field("source", json!({"component": "bucket-controller"}))
    }

    trait With {
        fn with_field(self, k: &str, v: Value) -> Value;
    }
    impl With for Value {
        fn with_field(mut self, k: &str, v: Value) -> Value {
            self[k] = v;
            self
        }
    }

    #[test]
    fn an_answer_wants_the_events_of_its_object_and_of_what_it_names_only() {
        let lease = obj("coordination.k8s.io/v1", "Lease", Some("kube-system"), "kube-controller-manager", "l")
            .with_field(
                "spec",
                json!({"holderIdentity": "cp_1", "leaseDurationSeconds": 15, "renewTime": "2026-11-29T11:59:59Z"}),
            );
        let pvc = obj("v1", "PersistentVolumeClaim", Some("batch"), "data", "pvc-1").with_field(
            "metadata",
            json!({"name": "data", "namespace": "batch", "uid": "pvc-1",
                "deletionTimestamp": "2026-11-29T11:00:00Z", "finalizers": ["kubernetes.io/pvc-protection"]}),
        );
        let pod = |name: &str, uid: &str, claim: &str| {
            obj("v1", "Pod", Some("batch"), name, uid).with_field(
                "spec",
                json!({"nodeName": "w1", "volumes": [{"name": "d", "persistentVolumeClaim": {"claimName": claim}}]}),
            )
        };
        let g = graph(vec![lease, pvc, pod("user", "pod-1", "data"), pod("other", "pod-2", "elsewhere")]);
        let live = crate::controllers::Liveness::new(&g, "2026-11-29T12:00:00Z".parse().unwrap());
        let target = crate::testing::node(&g, "PersistentVolumeClaim", "data");
        let d = crate::diagnose::why_stuck(&g, &live, target);
        let wanted: Vec<(String, String, Option<String>)> =
            wanted(&g, &d).into_iter().map(|(u, k, ns)| (u.0, k, ns)).collect();
        assert_eq!(
            wanted,
            [
                ("pvc-1".to_string(), "PersistentVolumeClaim".to_string(), Some("batch".to_string())),
                ("pod-1".to_string(), "Pod".to_string(), Some("batch".to_string())),
            ]
        );
    }

    #[test]
    fn warnings_are_matched_by_uid_and_sorted_most_recent_first() {
        let g = graph(vec![
            obj("media.example.com/v1", "Bucket", Some("studio"), "raw", "b1"),
            core_event("a", "b1", "Warning", "PurgeFailed", "2026-11-29T11:00:00Z"),
            core_event("b", "b1", "Warning", "PurgeFailed", "2026-11-29T11:30:00Z"),
            core_event("c", "b1", "Normal", "Purging", "2026-11-29T11:40:00Z"),
            // same name, another (earlier) object: not this one's
            core_event("d", "old-b1", "Warning", "Other", "2026-11-29T11:50:00Z"),
            obj("events.k8s.io/v1", "Event", Some("studio"), "e", "ev-e")
                .with_field("regarding", json!({"uid": "b1"}))
                .with_field("type", json!("Warning"))
                .with_field("reason", json!("QuotaExceeded"))
                .with_field("note", json!("over quota"))
                .with_field("series", json!({"count": 7, "lastObservedTime": "2026-11-29T11:45:00Z"}))
                .with_field("reportingController", json!("media.example.com/bucket")),
        ]);
        let idx = Index::new(&g);
        let w = idx.warnings(&Uid("b1".into()));
        let reasons: Vec<&str> = w.iter().map(|e| e.reason.as_str()).collect();
        assert_eq!(reasons, ["QuotaExceeded", "PurgeFailed", "PurgeFailed"]);
        assert_eq!(w[0].count, 7);
        assert_eq!(w[0].message, "over quota");
        assert_eq!(w[0].reporting_controller.as_deref(), Some("media.example.com/bucket"));
        assert_eq!(w[1].count, 2);
        assert_eq!(w[1].reporting_controller.as_deref(), Some("bucket-controller"));
        let now: Timestamp = "2026-11-29T12:00:00Z".parse().unwrap();
        let line = describe_event(w[1], now);
        assert!(
            line.starts_with("PurgeFailed ×2, last seen 2026-11-29T11:30:00Z (30m ago) by bucket-controller"),
            "{line}"
        );
        assert!(idx.any());
    }
}

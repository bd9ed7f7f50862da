//! Which Events may speak about an object: only those in the object's own namespace, where
//! Kubernetes keeps them, and for a cluster-scoped object only those in `default` (or
//! `kube-system`, which the API server's validation also accepts for an Event with an
//! `eventTime`: pkg/apis/core/validation/events.go, `legacyValidateEvent`).
//!
//! An Event's `involvedObject`/`regarding` is written by whoever creates the Event, and the
//! validation only checks it against the Event's own namespace: anyone allowed to create Events
//! in some namespace can name any uid there. Matching by uid alone would let an Event forged in
//! a namespace its author controls speak about an object elsewhere; the object's real namespace
//! (from the graph, not from the Event) decides.

use super::Graph;
use crate::snapshot::{Object, Uid};

/// Whether the Event `event`, about the object with `uid`, may be evidence about it: the
/// object is in the input and the Event lives where that object's Events live.
pub fn event_speaks_about(g: &Graph, event: &Object, uid: &Uid) -> bool {
    let Some(x) = g.by_uid(uid) else { return false };
    let at = event.namespace.as_deref().unwrap_or("");
    match g.identity(x).namespace {
        Some(ns) => at == ns,
        None => matches!(at, "default" | "kube-system"),
    }
}

/// Where the Events of an object in `namespace` (`None`: cluster-scoped) live: for the words
/// that say who could have written them.
pub fn events_namespace(namespace: Option<&str>) -> &str {
    namespace.unwrap_or("default")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::graph_of;

    #[test]
    fn only_events_where_the_objects_events_live_speak_about_it() {
        let ev = |ns: &str, uid: &str| {
            format!(
                r#"{{"apiVersion":"v1","kind":"Event","metadata":{{"name":"e-{ns}-{uid}","namespace":"{ns}","uid":"ev-{ns}-{uid}"}},"involvedObject":{{"uid":"{uid}"}}}}"#
            )
        };
        let docs = [
            r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","namespace":"shop","uid":"cm"}}"#
                .to_string(),
            r#"{"apiVersion":"v1","kind":"PersistentVolume","metadata":{"name":"pv","uid":"pv"}}"#.to_string(),
            ev("shop", "cm"),
            ev("forger", "cm"),
            ev("default", "cm"),
            ev("default", "pv"),
            ev("kube-system", "pv"),
            ev("forger", "pv"),
            ev("shop", "nobody"),
        ];
        let g = graph_of(&docs.iter().map(String::as_str).collect::<Vec<_>>());
        let speaks = |ns: &str, uid: &str| {
            let e = g.objects().iter().find(|o| o.name == format!("e-{ns}-{uid}")).expect("the event");
            event_speaks_about(&g, e, &Uid(uid.into()))
        };
        assert!(speaks("shop", "cm"));
        assert!(!speaks("forger", "cm"), "another namespace");
        assert!(!speaks("default", "cm"), "default is not a namespaced object's");
        assert!(speaks("default", "pv") && speaks("kube-system", "pv"), "a cluster-scoped object's");
        assert!(!speaks("forger", "pv"));
        assert!(!speaks("shop", "nobody"), "about no object of the input");
        assert_eq!(events_namespace(None), "default");
    }
}

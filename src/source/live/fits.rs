//! Whether a watch event is about what the watch asked for (`--watch`): its object's kind (where
//! the wire carries it), namespace, name, field and label selectors. An event about anything
//! else (a Pod's DELETED on a Site's watch, from a broken proxy or a server that mixes streams)
//! changes nothing: taken for the watched object, it could make it "gone" — a false all-clear.
//!
//! A DELETED event is checked on its kind, namespace and name only: the API server sends one
//! when an object stops matching a label or field selector, carrying its new state, which no
//! longer matches by definition.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::value::RawValue;

use crate::snapshot::raw::RawDoc;

use super::ask::{Ask, Fetch};

/// meta.k8s.io's versions, which a metadata-only object carries.
const META_VERSIONS: [&str; 2] = ["meta.k8s.io/v1", "meta.k8s.io/v1beta1"];

/// Why an event's object is not of what `ask` watches, or `None` when it is (or cannot be told
/// apart). `metadata`: the watch asked for metadata-only objects; `deleted`: a DELETED event;
/// `object` the event's object as sent (for fields the document does not keep).
pub fn foreign(ask: &Ask, metadata: bool, doc: &RawDoc, object: &RawValue, deleted: bool) -> Option<String> {
    let t = &ask.kind;
    let (kind, version) = (doc.kind.as_deref(), doc.api_version.as_deref());
    let kind_fits = match kind {
        None => true,
        Some("PartialObjectMetadata") => metadata && version.is_none_or(|v| META_VERSIONS.contains(&v)),
        Some(k) => k == t.kind && version.is_none_or(|v| v == t.api_version()),
    };
    if !kind_fits {
        return Some(format!("a {} ({})", kind.unwrap_or_default(), version.unwrap_or("no apiVersion")));
    }
    let meta = doc.metadata.as_ref();
    let name = meta.and_then(|m| m.name.as_deref()).unwrap_or("");
    let namespace = meta.and_then(|m| m.namespace.as_deref()).filter(|n| !n.is_empty());
    let shown = || match namespace {
        Some(ns) => format!("{} {ns}/{name}", t.kind),
        None => format!("{} {name}", t.kind),
    };
    if t.namespaced && ask.namespace.is_some() && namespace != ask.namespace.as_deref() {
        return Some(format!("{} (another namespace)", shown()));
    }
    if let Fetch::Get(asked) = &ask.fetch
        && asked != name
    {
        return Some(format!("{} (another name)", shown()));
    }
    if deleted {
        return None;
    }
    let Fetch::List { label_selector, .. } = &ask.fetch else { return None };
    let mut body: Option<serde_json::Value> = None;
    for term in ask.fetch.field_selector().iter().flat_map(|s| s.split(',')) {
        let Some((field, want, equal)) = field_term(term) else { continue };
        let got = match field {
            "metadata.name" => Some(name.to_string()),
            "metadata.namespace" => Some(namespace.unwrap_or("").to_string()),
            _ => {
                let v = body.get_or_insert_with(|| serde_json::from_str(object.get()).unwrap_or_default());
                field_value(v, field)
            }
        };
        // a field the object does not carry cannot be told apart
        if got.is_some_and(|g| (g == want) != equal) {
            return Some(format!("{} (not {term})", shown()));
        }
    }
    if let Some(selector) = label_selector {
        #[derive(Deserialize, Default)]
        #[serde(default)]
        struct Labelled {
            metadata: Labels,
        }
        #[derive(Deserialize, Default)]
        #[serde(default)]
        struct Labels {
            labels: BTreeMap<String, String>,
        }
        let labels = serde_json::from_str::<Labelled>(object.get()).unwrap_or_default().metadata.labels;
        if let Some(term) = split_terms(selector).into_iter().find(|t| label_term_fails(t, &labels)) {
            return Some(format!("{} (not {term})", shown()));
        }
    }
    None
}

/// `field=value`, `field==value`, `field!=value`: (field, value, whether equal).
fn field_term(term: &str) -> Option<(&str, &str, bool)> {
    if let Some((f, v)) = term.split_once("!=") {
        return Some((f.trim(), v.trim(), false));
    }
    let (f, v) = term.split_once("==").or_else(|| term.split_once('='))?;
    Some((f.trim(), v.trim(), true))
}

/// A dotted field of an object as a string (`involvedObject.uid`), if it has it.
fn field_value(v: &serde_json::Value, field: &str) -> Option<String> {
    let mut cur = v;
    for part in field.split('.') {
        cur = cur.get(part)?;
    }
    match cur {
        serde_json::Value::String(s) => Some(s.clone()),
        serde_json::Value::Null => None,
        other => Some(other.to_string()),
    }
}

/// A label selector's terms (commas inside `in (a,b)` are not separators).
fn split_terms(selector: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut depth, mut start) = (0i32, 0);
    for (i, c) in selector.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                out.push(selector[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(selector[start..].trim());
    out.retain(|t| !t.is_empty());
    out
}

/// Whether one label term surely fails on `labels` (a form not read here never fails).
fn label_term_fails(term: &str, labels: &BTreeMap<String, String>) -> bool {
    if term.contains('(') {
        return false;
    }
    if let Some(key) = term.strip_prefix('!') {
        return labels.contains_key(key.trim());
    }
    match field_term(term) {
        Some((k, v, equal)) => (labels.get(k).map(String::as_str) == Some(v)) != equal,
        None => !labels.contains_key(term),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::snapshot::raw::JsonDoc;
    use crate::source::live::discovery::ListType;

    fn t(kind: &str, plural: &str) -> ListType {
        crate::testing::list_type("", "v1", plural, kind, true)
    }

    fn check(ask: &Ask, metadata: bool, json: &str, deleted: bool) -> Option<String> {
        let raw: Box<RawValue> = serde_json::from_str(json).unwrap();
        let JsonDoc(d) = serde_json::from_str(json).unwrap();
        foreign(ask, metadata, &d, &raw, deleted)
    }

    #[test]
    fn an_event_of_another_kind_namespace_or_name_is_foreign() {
        let get = Ask::get(&t("ConfigMap", "configmaps"), Some("labs".into()), "alpha", "t");
        let own = r#"{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"alpha","namespace":"labs","uid":"u"}}"#;
        assert_eq!(check(&get, false, own, true), None);
        let pod = r#"{"kind":"Pod","apiVersion":"v1","metadata":{"name":"alpha","namespace":"labs","uid":"p"}}"#;
        assert_eq!(check(&get, false, pod, true).as_deref(), Some("a Pod (v1)"));
        let meta = r#"{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1","metadata":{"name":"alpha","namespace":"labs"}}"#;
        assert_eq!(check(&get, true, meta, false), None);
        assert!(check(&get, false, meta, false).is_some(), "metadata-only where the objects were asked");
        let elsewhere = r#"{"metadata":{"name":"alpha","namespace":"prod"}}"#;
        assert!(check(&get, false, elsewhere, true).unwrap().contains("another namespace"));
        let other = r#"{"metadata":{"name":"beta","namespace":"labs"}}"#;
        assert!(check(&get, false, other, true).unwrap().contains("another name"));
    }

    #[test]
    fn added_and_modified_objects_must_match_the_selectors_deleted_need_not() {
        let events =
            Ask::list(&t("Event", "events"), Some("labs".into()), "t").selecting("involvedObject.uid=u1".into());
        let of = |uid: &str| {
            format!(r#"{{"metadata":{{"name":"e","namespace":"labs"}},"involvedObject":{{"uid":"{uid}"}}}}"#)
        };
        assert_eq!(check(&events, false, &of("u1"), false), None);
        assert!(check(&events, false, &of("u2"), false).unwrap().contains("not involvedObject.uid=u1"));
        let pods = Ask::list(&t("Pod", "pods"), Some("labs".into()), "t").labelled("app=web,tier!=db,!legacy".into());
        let labelled = |l: &str| format!(r#"{{"metadata":{{"name":"p","namespace":"labs","labels":{{{l}}}}}}}"#);
        assert_eq!(check(&pods, false, &labelled(r#""app":"web""#), false), None);
        assert!(check(&pods, false, &labelled(r#""app":"db""#), false).is_some());
        assert!(check(&pods, false, &labelled(r#""app":"web","tier":"db""#), false).is_some());
        assert!(check(&pods, false, &labelled(r#""app":"web","legacy":"1""#), false).is_some());
        // no longer matching: DELETED, with its new labels
        assert_eq!(check(&pods, false, &labelled(r#""app":"db""#), true), None);
        // a set-based term is not read here: never foreign for it
        let set = Ask::list(&t("Pod", "pods"), Some("labs".into()), "t").labelled("app in (web, api)".into());
        assert_eq!(check(&set, false, &labelled(r#""app":"x""#), false), None);
    }
}

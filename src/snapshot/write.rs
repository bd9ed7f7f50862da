//! A [`Snapshot`] back to the snapshot-file JSON that `kubectl gc snapshot` writes: one `List`
//! with `capturedAt`, `incomplete`, the `APIResourceList` discovery data and the objects (one
//! item a line), which `source::file::load` reads back to the same snapshot.

use std::io::{self, Write};

use serde_json::{Map, Value, json};

use super::{ApiResource, Object, ResourceList, Snapshot};

/// Writes the snapshot as one JSON `List`.
pub fn write(snapshot: &Snapshot, w: &mut impl Write) -> io::Result<()> {
    let mut head = Map::new();
    head.insert("apiVersion".into(), "v1".into());
    head.insert("kind".into(), "List".into());
    head.insert("metadata".into(), json!({}));
    if let Some(t) = snapshot.captured_at {
        head.insert("capturedAt".into(), t.to_string().into());
    }
    if let Some(c) = &snapshot.context {
        head.insert("capturedContext".into(), c.clone().into());
    }
    if let Some(n) = &snapshot.namespace {
        head.insert("capturedNamespace".into(), n.clone().into());
    }
    if let Some(s) = &snapshot.server {
        head.insert("capturedServer".into(), s.clone().into());
    }
    if let Some(v) = &snapshot.server_version {
        head.insert("serverVersion".into(), v.clone().into());
    }
    head.insert("incomplete".into(), snapshot.incomplete.iter().map(super::Gap::to_json).collect::<Vec<_>>().into());
    let head = serde_json::to_string(&Value::Object(head))?;
    // `{…}` without its closing brace, then the items one a line
    w.write_all(&head.as_bytes()[..head.len() - 1])?;
    w.write_all(b",\"items\":[")?;
    let lists = snapshot.resource_lists.iter().map(|l| serde_json::to_string(&resource_list(l)));
    for (i, line) in lists.chain(snapshot.objects.iter().map(object_line)).enumerate() {
        w.write_all(if i == 0 { b"\n" } else { b",\n" })?;
        w.write_all(line?.as_bytes())?;
    }
    w.write_all(b"\n]}\n")
}

/// An `APIResourceList` document.
pub fn resource_list(l: &ResourceList) -> Value {
    json!({
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": l.group_version,
        "resources": l.resources.iter().map(api_resource).collect::<Vec<_>>(),
    })
}

fn api_resource(r: &ApiResource) -> Value {
    let mut m = Map::new();
    m.insert("name".into(), r.plural.clone().into());
    if let Some(s) = &r.singular {
        m.insert("singularName".into(), s.clone().into());
    }
    m.insert("namespaced".into(), r.namespaced.into());
    if let Some(g) = &r.group {
        m.insert("group".into(), g.clone().into());
    }
    if let Some(v) = &r.version {
        m.insert("version".into(), v.clone().into());
    }
    m.insert("kind".into(), r.kind.clone().into());
    m.insert("verbs".into(), json!(r.verbs));
    if !r.short_names.is_empty() {
        m.insert("shortNames".into(), json!(r.short_names));
    }
    if !r.categories.is_empty() {
        m.insert("categories".into(), json!(r.categories));
    }
    Value::Object(m)
}

/// An object as one line of JSON: its apiVersion, kind and metadata, then its body's fields as
/// they were read (a body kept as text, every pod's, is written without being parsed).
fn object_line(o: &Object) -> serde_json::Result<String> {
    let mut line = serde_json::to_string(&object_head(o))?;
    if let Some(body) = o.body.json_text() {
        // `{…}` and `{…}` joined into one object
        line.pop();
        line.push(',');
        line.push_str(&body[1..]);
    }
    Ok(line)
}

fn object_head(o: &Object) -> Value {
    let mut meta = Map::new();
    meta.insert("name".into(), o.name.clone().into());
    if let Some(ns) = &o.namespace {
        meta.insert("namespace".into(), ns.clone().into());
    }
    meta.insert("uid".into(), o.uid.0.clone().into());
    if let Some(rv) = &o.resource_version {
        meta.insert("resourceVersion".into(), rv.clone().into());
    }
    if let Some(t) = o.creation_timestamp {
        meta.insert("creationTimestamp".into(), t.to_string().into());
    }
    if let Some(t) = o.deletion_timestamp {
        meta.insert("deletionTimestamp".into(), t.to_string().into());
    }
    if let Some(s) = o.deletion_grace_period_seconds {
        meta.insert("deletionGracePeriodSeconds".into(), s.into());
    }
    if !o.labels.is_empty() {
        meta.insert("labels".into(), json!(o.labels.iter().cloned().collect::<std::collections::BTreeMap<_, _>>()));
    }
    if !o.finalizers.is_empty() {
        meta.insert("finalizers".into(), json!(o.finalizers));
    }
    if !o.owner_references.is_empty() {
        let refs: Vec<Value> = o
            .owner_references
            .iter()
            .map(|r| {
                let mut m = Map::new();
                m.insert("apiVersion".into(), r.api_version.clone().into());
                m.insert("kind".into(), r.kind.clone().into());
                m.insert("name".into(), r.name.clone().into());
                m.insert("uid".into(), r.uid.0.clone().into());
                if let Some(c) = r.controller {
                    m.insert("controller".into(), c.into());
                }
                if let Some(b) = r.block_owner_deletion {
                    m.insert("blockOwnerDeletion".into(), b.into());
                }
                Value::Object(m)
            })
            .collect();
        meta.insert("ownerReferences".into(), refs.into());
    }
    if !o.finalizer_managers.is_empty() {
        // only the finalizer part of each managedFields entry is kept
        let entries: Vec<Value> = o
            .finalizer_managers
            .iter()
            .map(|m| {
                let fins: Map<String, Value> =
                    m.finalizers.iter().map(|f| (format!("v:{}", Value::String(f.clone())), json!({}))).collect();
                let mut e = Map::new();
                e.insert("manager".into(), m.manager.clone().into());
                e.insert("operation".into(), m.operation.clone().into());
                if let Some(t) = m.time {
                    e.insert("time".into(), t.to_string().into());
                }
                e.insert("fieldsType".into(), "FieldsV1".into());
                e.insert("fieldsV1".into(), json!({"f:metadata": {"f:finalizers": fins}}));
                Value::Object(e)
            })
            .collect();
        meta.insert("managedFields".into(), entries.into());
    }
    let mut m = Map::new();
    m.insert("apiVersion".into(), o.api_version.clone().into());
    m.insert("kind".into(), o.kind.clone().into());
    m.insert("metadata".into(), Value::Object(meta));
    Value::Object(m)
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::snapshot::raw::Flattened;
    use crate::source::file::parse_into;

    fn read(bytes: &[u8]) -> Snapshot {
        let mut flat = Flattened::default();
        parse_into(Path::new("s.json"), bytes, &mut flat).unwrap();
        Snapshot::from_flattened(flat)
    }

    fn assert_same(a: &Snapshot, b: &Snapshot) {
        assert_eq!(a.captured_at, b.captured_at);
        assert_eq!(a.objects, b.objects);
        assert_eq!(a.resource_lists, b.resource_lists);
        assert_eq!(a.incomplete, b.incomplete);
        assert_eq!(a.server_version, b.server_version);
        assert_eq!((&a.context, &a.namespace, &a.server), (&b.context, &b.namespace, &b.server));
    }

    /// Where a snapshot was taken (context, its namespace, the server URL) is written and read
    /// back, by both readers; two files that disagree on any of it name none of it.
    #[test]
    fn the_context_its_namespace_and_the_server_are_recorded() {
        let s = Snapshot {
            context: Some("prod".into()),
            namespace: Some("labs".into()),
            server: Some("https://prod.example:6443".into()),
            ..Default::default()
        };
        let mut buf = Vec::new();
        write(&s, &mut buf).unwrap();
        let text = String::from_utf8(buf.clone()).unwrap();
        assert!(text.contains(r#""capturedNamespace":"labs","capturedServer":"https://prod.example:6443""#), "{text}");
        let again = read(&buf);
        assert_same(&s, &again);
        assert_eq!(again.server.as_deref(), Some("https://prod.example:6443"));
        let whole: crate::snapshot::raw::RawDoc = serde_json::from_slice(&buf).unwrap();
        assert_eq!(whole.captured_namespace.as_deref(), Some("labs"), "the whole-document reader too");
        assert_eq!(whole.captured_server.as_deref(), Some("https://prod.example:6443"));

        let mut flat = Flattened::default();
        parse_into(Path::new("a.json"), &buf, &mut flat).unwrap();
        let other = br#"{"kind":"List","capturedContext":"prod","capturedNamespace":"labs","capturedServer":"https://other:6443","items":[]}"#;
        parse_into(Path::new("b.json"), other, &mut flat).unwrap();
        let both = Snapshot::from_flattened(flat);
        assert_eq!((both.context, both.namespace, both.server), (None, None, None), "same context name, other server");
        assert!(both.warnings.iter().any(|w| w.contains("different contexts or servers")), "{:?}", both.warnings);
    }

    #[test]
    fn the_server_version_is_written_and_read_back_as_text_or_as_the_version_document() {
        let as_document =
            read(br#"{"kind":"List","serverVersion":{"major":"1","minor":"34","gitVersion":"v1.34.2"},"items":[]}"#);
        assert_eq!(as_document.server_version.as_deref(), Some("v1.34.2"));
        let mut buf = Vec::new();
        write(&as_document, &mut buf).unwrap();
        assert!(String::from_utf8_lossy(&buf).contains(r#""serverVersion":"v1.34.2""#));
        assert_same(&as_document, &read(&buf));
        // major and minor alone (some distributions leave gitVersion out)
        let bare = read(br#"{"kind":"List","serverVersion":{"major":"1","minor":"32+"},"items":[]}"#);
        assert_eq!(bare.server_version.as_deref(), Some("v1.32+"));
        // a file without one records none
        assert_eq!(read(br#"{"kind":"List","items":[]}"#).server_version, None);
    }

    #[test]
    fn written_snapshot_reads_back_the_same() {
        let original = read(
            br#"{"kind":"List","capturedAt":"2026-11-29T12:00:00Z","incomplete":["secrets: forbidden"],"items":[
              {"kind":"APIResourceList","groupVersion":"own.labhub.io/v1","resources":[
                {"name":"sites","singularName":"site","namespaced":true,"kind":"Site","verbs":["get","list"],"shortNames":["st"]}]},
              {"apiVersion":"own.labhub.io/v1","kind":"Site","metadata":{"name":"alpha","namespace":"labs","uid":"u1",
                "resourceVersion":"7","creationTimestamp":"2026-11-01T00:00:00Z","deletionTimestamp":"2026-11-29T11:00:00Z",
                "deletionGracePeriodSeconds":0,"finalizers":["own.labhub.io/cleanup"],"labels":{"app":"a"},
                "managedFields":[{"manager":"site-operator","operation":"Update","time":"2026-11-01T00:00:01Z",
                  "fieldsV1":{"f:metadata":{"f:finalizers":{".":{},"v:\"own.labhub.io/cleanup\"":{}}}}}]},
               "spec":{"x":1}},
              {"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","namespace":"labs","uid":"u2",
                "ownerReferences":[{"apiVersion":"own.labhub.io/v1","kind":"Site","name":"alpha","uid":"u1","controller":true,"blockOwnerDeletion":true}]},
               "data":{"k":"v"}},
              {"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d","namespace":"labs","uid":"u3"},"status":{"readyReplicas":1}}
            ]}"#,
        );
        assert_eq!(original.objects.len(), 3);
        let mut buf = Vec::new();
        write(&original, &mut buf).unwrap();
        let again = read(&buf);
        assert_same(&original, &again);
        // and writing again gives the same bytes
        let mut buf2 = Vec::new();
        write(&again, &mut buf2).unwrap();
        assert_eq!(String::from_utf8(buf).unwrap(), String::from_utf8(buf2).unwrap());
    }

    /// Gaps are written as objects (typed fields and their line) and read back typed; a file
    /// written before that (lines alone) still loads, its lines becoming line-only gaps.
    #[test]
    fn gaps_are_written_typed_and_old_files_still_load() {
        use crate::snapshot::{Gap, Missing, Resource};
        let gap = Gap::new(
            Missing::List { resource: Resource::new("apps", "v1", "deployments"), namespace: Some("labs".into()) },
            "forbidden (403)",
        );
        let s = Snapshot { incomplete: vec![gap.clone(), Gap::recorded("a line")], ..Default::default() };
        let mut buf = Vec::new();
        write(&s, &mut buf).unwrap();
        let text = String::from_utf8(buf.clone()).unwrap();
        assert!(
            text.contains(r#"{"what":{"read":"list","group":"apps","version":"v1","resource":"deployments","namespace":"labs"},"why":"forbidden (403)","line":"deployments.apps in namespace \"labs\" could not be listed: forbidden (403)"}"#),
            "{text}"
        );
        assert_eq!(read(&buf).incomplete, [gap, Gap::recorded("a line")]);
        // the head of a file written before: serverVersion, context and lines alone
        let old = read(
            br#"{"apiVersion":"v1","kind":"List","metadata":{},"capturedAt":"2026-11-29T12:00:00Z","capturedContext":"prod",
                "serverVersion":"v1.34.2","incomplete":["pods in namespace \"quota-system\" could not be listed: forbidden (403)"],"items":[]}"#,
        );
        assert_eq!(old.server_version.as_deref(), Some("v1.34.2"));
        assert_eq!(old.context.as_deref(), Some("prod"));
        assert_eq!(
            old.incomplete,
            [Gap::recorded("pods in namespace \"quota-system\" could not be listed: forbidden (403)")]
        );
        assert!(old.incomplete[0].may_hide("rbac.authorization.k8s.io", None, None), "a line alone may hide anything");
    }

    /// `kubectl gc snapshot` keeps the Events it reads with every field an answer shows.
    #[test]
    fn events_keep_what_an_answer_shows() {
        let original = read(
            br#"{"kind":"List","items":[
              {"apiVersion":"events.k8s.io/v1","kind":"Event","metadata":{"name":"e","namespace":"labs","uid":"e1"},
               "regarding":{"uid":"u1"},"type":"Warning","reason":"CleanupFailed","note":"bucket not empty",
               "series":{"count":4,"lastObservedTime":"2026-11-29T11:59:00Z"},"eventTime":"2026-11-29T11:00:00Z",
               "reportingController":"example.com/op","reportingInstance":"op-7f9c","deprecatedCount":2,"deprecatedSource":{"component":"op"}},
              {"apiVersion":"v1","kind":"Event","metadata":{"name":"f","namespace":"labs","uid":"e2"},
               "involvedObject":{"uid":"u1"},"type":"Warning","reason":"Retry","message":"again","count":3,
               "lastTimestamp":"2026-11-29T11:58:00Z","source":{"component":"op"},"reportingComponent":"op-rc"}
            ]}"#,
        );
        let mut buf = Vec::new();
        write(&original, &mut buf).unwrap();
        let again = read(&buf);
        assert_same(&original, &again);
        let text = String::from_utf8(buf).unwrap();
        for field in [
            "series",
            "eventTime",
            "reportingController",
            "reportingInstance",
            "deprecatedSource",
            "reportingComponent",
            "source",
        ] {
            assert!(text.contains(&format!("\"{field}\"")), "{field} was dropped: {text}");
        }
    }

    #[test]
    fn every_fixture_round_trips() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path().join("snapshot.json");
            let original = read(&std::fs::read(&path).unwrap());
            let mut buf = Vec::new();
            write(&original, &mut buf).unwrap();
            assert_same(&original, &read(&buf));
        }
    }
}

//! Entry points for the fuzz targets under `fuzz/` and for the bounded property tests of the
//! normal suite: arbitrary bytes through the snapshot parser, or through the protobuf list
//! decoder, and whatever parses through every answer and renderer. Each returns normally
//! (an error or an answer, both fine); a panic, a hang or an abort is the bug.

use std::path::Path;

use k8s_openapi::jiff::Timestamp;
use serde_json::{Value, json};

use crate::controllers::Liveness;
use crate::graph::Graph;
use crate::plan::{AssumeFinalizers, Cascade, PlanOptions};
use crate::render::style::Style;
use crate::snapshot::Snapshot;
use crate::snapshot::raw::Flattened;

/// Objects answered about per input: enough to reach owners, dependents and controllers,
/// few enough to keep each run short.
const TARGETS: usize = 4;

/// Arbitrary bytes as a snapshot file, both as JSON and as YAML; whatever parses is answered.
pub fn snapshot(bytes: &[u8]) {
    for name in ["fuzz.json", "fuzz.yaml"] {
        let mut flat = Flattened::default();
        if crate::source::file::parse_into(Path::new(name), bytes, &mut flat).is_ok() {
            answer(Snapshot::from_flattened(flat));
        }
    }
}

/// Arbitrary bytes as a protobuf `PartialObjectMetadataList` answer: as the whole body (with
/// the envelope's magic prepended when missing, to get past it), and as the list inside a
/// well-formed envelope (to get past that); whatever decodes is answered.
pub fn protobuf_list(bytes: &[u8]) {
    use crate::source::live::protobuf::{MAGIC, decode_metadata_list};
    use prost::Message;
    let framed = if bytes.starts_with(MAGIC) { bytes.to_vec() } else { [MAGIC.as_slice(), bytes].concat() };
    let mut enveloped = MAGIC.to_vec();
    crate::source::live::pb::Unknown {
        type_meta: Some(crate::source::live::pb::TypeMeta {
            api_version: Some("meta.k8s.io/v1".into()),
            kind: Some("PartialObjectMetadataList".into()),
        }),
        raw: Some(bytes.to_vec()),
        content_encoding: None,
        content_type: None,
    }
    .encode(&mut enveloped)
    .expect("a Vec grows as needed");
    for body in [framed, enveloped] {
        let Ok(page) = decode_metadata_list(&body) else { continue };
        let mut flat = Flattened::default();
        for mut d in page.items {
            d.api_version = Some("v1".into());
            d.kind = Some("ConfigMap".into());
            flat.push(d);
        }
        answer(Snapshot::from_flattened(flat));
    }
}

/// A small cluster the admission and Events targets put their input into: a namespace whose
/// ConfigMap and Pod are being deleted, an operator with a serving webhook Service.
fn base() -> Vec<Value> {
    let meta = |name: &str, ns: Option<&str>| {
        let mut m = json!({"name": name, "uid": format!("uid-{name}"), "creationTimestamp": "2026-11-29T08:00:00Z"});
        if let Some(ns) = ns {
            m["namespace"] = ns.into();
        }
        m
    };
    let mut cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta("cfg", Some("shop"))});
    cm["metadata"]["deletionTimestamp"] = "2026-11-29T10:00:00Z".into();
    cm["metadata"]["finalizers"] = json!(["shop.example.com/cleanup"]);
    let mut pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": meta("web-1", Some("shop")),
        "spec": {"nodeName": "node-1", "serviceAccountName": "shop-operator"}});
    pod["metadata"]["deletionTimestamp"] = "2026-11-29T10:00:30Z".into();
    pod["metadata"]["deletionGracePeriodSeconds"] = 30.into();
    vec![
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": meta("shop", None)}),
        cm,
        pod,
        json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta("shop-operator", Some("shop")),
            "spec": {"replicas": 1, "template": {"spec": {"serviceAccountName": "shop-operator"}}},
            "status": {"replicas": 1, "readyReplicas": 1}}),
        json!({"apiVersion": "v1", "kind": "Service", "metadata": meta("hook", Some("shop")),
            "spec": {"selector": {"app": "shop-operator"}}}),
        json!({"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
            "metadata": {"name": "hook-x", "namespace": "shop", "uid": "uid-hook-x",
                "labels": {"kubernetes.io/service-name": "hook"}},
            "endpoints": [{"addresses": ["10.0.0.1"], "conditions": {"ready": true}}]}),
    ]
}

/// `base()` with `extra` added, as a snapshot file, answered.
fn answer_with(extra: Vec<Value>) {
    let mut items = base();
    items.extend(extra);
    let list = json!({"kind": "List", "items": items, "metadata": {}});
    let mut flat = Flattened::default();
    if crate::source::file::parse_into(Path::new("fuzz.json"), list.to_string().as_bytes(), &mut flat).is_ok() {
        answer(Snapshot::from_flattened(flat));
    }
}

/// Arbitrary bytes as JSON (else as a string): the input as a whole admission object of each
/// kind, and as one webhook, one policy `spec` or one binding `spec` inside a well-formed one.
pub fn admission(bytes: &[u8]) {
    let v = serde_json::from_slice::<Value>(bytes).unwrap_or_else(|_| String::from_utf8_lossy(bytes).into());
    const V1: &str = "admissionregistration.k8s.io/v1";
    for (api, kind, field) in [
        (V1, "ValidatingWebhookConfiguration", "webhooks"),
        (V1, "MutatingWebhookConfiguration", "webhooks"),
        (V1, "ValidatingAdmissionPolicy", "spec"),
        (V1, "ValidatingAdmissionPolicyBinding", "spec"),
        ("admissionregistration.k8s.io/v1beta1", "MutatingAdmissionPolicy", "spec"),
    ] {
        let mut inside = json!({"apiVersion": api, "kind": kind, "metadata": {"name": "fuzz", "uid": "uid-fuzz"}});
        inside[field] = if field == "webhooks" { json!([v.clone()]) } else { v.clone() };
        let mut whole = v.clone();
        if let Some(o) = whole.as_object_mut() {
            o.insert("apiVersion".into(), api.into());
            o.insert("kind".into(), kind.into());
        }
        answer_with(vec![inside, whole]);
    }
}

/// Arbitrary bytes as a CEL expression (UTF-8, lossily): the variable, matchCondition,
/// validation and messageExpression of a ValidatingAdmissionPolicy bound with Deny to the
/// ConfigMaps being deleted, evaluated on the removal of their finalizer and on their DELETE
/// (`admission::evaluate`), then every answer.
pub fn cel_expression(bytes: &[u8]) {
    let e = String::from_utf8_lossy(bytes);
    const V1: &str = "admissionregistration.k8s.io/v1";
    let policy = json!({"apiVersion": V1, "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": "fuzz", "uid": "uid-fuzz"},
        "spec": {"failurePolicy": "Fail",
            "matchConstraints": {"resourceRules": [{"apiGroups": [""], "apiVersions": ["v1"],
                "operations": ["UPDATE", "DELETE"], "resources": ["configmaps"]}]},
            "variables": [{"name": "v", "expression": e}],
            "matchConditions": [{"name": "m", "expression": e}],
            "validations": [{"expression": e, "messageExpression": e},
                            {"expression": format!("variables.v == {e}")}]}});
    let binding = json!({"apiVersion": V1, "kind": "ValidatingAdmissionPolicyBinding",
        "metadata": {"name": "fuzz-all", "uid": "uid-fuzz-all"},
        "spec": {"policyName": "fuzz", "validationActions": ["Deny"]}});
    let mut items = base();
    items.extend([policy, binding]);
    let list = json!({"kind": "List", "items": items, "metadata": {}});
    let mut flat = Flattened::default();
    if crate::source::file::parse_into(Path::new("fuzz.json"), list.to_string().as_bytes(), &mut flat).is_err() {
        return;
    }
    let snapshot = Snapshot::from_flattened(flat);
    let g = Graph::build(snapshot.clone());
    let index = crate::admission::Index::new(&g);
    for &x in g.of_kind("", "ConfigMap") {
        for op in [crate::admission::Operation::Update, crate::admission::Operation::Delete] {
            for m in index.policies(&g, x, op) {
                let _ = crate::admission::evaluate::judge(&g, &m, x);
            }
        }
    }
    answer(snapshot);
}

/// Arbitrary bytes as JSON (else as a message): an Event about the ConfigMap being deleted,
/// the input's fields over a well-formed Event's, and the input as a whole Event.
pub fn events(bytes: &[u8]) {
    let v = serde_json::from_slice::<Value>(bytes).unwrap_or_else(|_| String::from_utf8_lossy(bytes).into());
    let mut event = json!({"apiVersion": "v1", "kind": "Event",
        "metadata": {"name": "cfg.1", "namespace": "shop", "uid": "uid-event"},
        "involvedObject": {"apiVersion": "v1", "kind": "ConfigMap", "namespace": "shop", "name": "cfg", "uid": "uid-cfg"},
        "type": "Warning", "reason": "CleanupFailed", "message": "failed", "count": 3,
        "source": {"component": "shop-operator"}, "reportingController": "shop-operator",
        "lastTimestamp": "2026-11-29T10:30:00Z"});
    match &v {
        Value::Object(fields) => fields.iter().for_each(|(k, x)| event[k] = x.clone()),
        other => event["message"] = other.clone(),
    }
    let mut whole = v;
    if let Some(o) = whole.as_object_mut() {
        o.insert("apiVersion".into(), "v1".into());
        o.insert("kind".into(), "Event".into());
    }
    answer_with(vec![event, whole]);
}

fn answer(s: Snapshot) {
    let now = s.captured_at.unwrap_or(Timestamp::UNIX_EPOCH);
    let g = Graph::build(s);
    let live = Liveness::new(&g, now);
    let targets: Vec<_> = g.observed().map(|(id, _)| id).take(TARGETS).collect();
    let conn = crate::diagnose::step::Connection::unbound("fuzzing");
    let mut sink = Vec::new();
    for t in targets {
        let d = crate::diagnose::why_stuck(&g, &live, t);
        let _ = crate::render::text::write_why_stuck(&g, &d, &conn, Style::PLAIN, &mut sink);
        let _ = crate::render::json::write(&crate::render::json::why_stuck(&g, &d, &conn), &mut sink);
        for dir in [crate::tree::Direction::Dependents, crate::tree::Direction::Owners] {
            let tree = crate::tree::build(&g, &live, t, dir);
            let _ = crate::render::text::write_tree(&g, &tree, now.as_second(), Style::PLAIN, &mut sink);
            let _ = crate::render::json::write_tree(&g, &tree, &mut sink);
            let _ = crate::render::tree_yaml::write_tree(&g, &tree, &mut sink);
        }
        for cascade in [Cascade::Background, Cascade::Foreground, Cascade::Orphan] {
            let opts = PlanOptions { cascade, assume_finalizers: Some(AssumeFinalizers::Stuck), now };
            let p = crate::plan::plan(&g, &live, t, &opts);
            let _ = crate::render::plan::write_text(&p, &g, false, &mut sink);
            let _ = crate::render::plan::write_json(&p, &g, &mut sink);
        }
        sink.clear();
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    /// Inputs that look like snapshots, so the parser gets past its first byte: a List of
    /// objects built from arbitrary pieces, then mutated bytes.
    fn snapshotish() -> impl Strategy<Value = Vec<u8>> {
        let name = "[a-z0-9.\\-]{0,6}|.{0,4}";
        let obj = (
            prop::sample::select(vec!["v1", "apps/v1", "own.labhub.io/v1", "", "a/b/c"]),
            prop::sample::select(vec!["ConfigMap", "Namespace", "Pod", "Site", "Deployment", "Lease", ""]),
            name,
            prop::option::of("[a-c]{1,2}"),
            prop::collection::vec(("[a-z0-9]{0,3}", any::<bool>(), any::<bool>()), 0..3),
            prop::collection::vec(prop::sample::select(vec!["foregroundDeletion", "orphan", "kubernetes", "x.io/y"]), 0..3),
            any::<bool>(),
        )
            .prop_map(|(api, kind, name, ns, owners, fin, deleting)| {
                let owners: Vec<_> = owners
                    .into_iter()
                    .map(|(uid, c, b)| serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap", "name": uid, "uid": uid, "controller": c, "blockOwnerDeletion": b}))
                    .collect();
                let mut meta = serde_json::json!({"name": name, "uid": name, "ownerReferences": owners, "finalizers": fin});
                if let Some(ns) = ns {
                    meta["namespace"] = ns.into();
                }
                if deleting {
                    meta["deletionTimestamp"] = "2026-11-29T10:00:00Z".into();
                }
                serde_json::json!({"apiVersion": api, "kind": kind, "metadata": meta})
            });
        (prop::collection::vec(obj, 0..8), prop::collection::vec((any::<usize>(), any::<u8>()), 0..4), any::<bool>())
            .prop_map(|(items, flips, yaml)| {
                let list = serde_json::json!({"kind": "List", "items": items});
                let mut bytes = if yaml {
                    serde_saphyr::to_string(&list).unwrap().into_bytes()
                } else {
                    list.to_string().into_bytes()
                };
                for (at, b) in flips {
                    if !bytes.is_empty() {
                        let i = at % bytes.len();
                        bytes[i] = b;
                    }
                }
                bytes
            })
    }

    /// Odd JSON: any value, nested a little, with strings that are keys the readers look for.
    fn jsonish() -> impl Strategy<Value = serde_json::Value> {
        use serde_json::{Value, json};
        let key = prop::sample::select(
            concat!(
                "name rules operations resources apiGroups apiVersions scope failurePolicy ",
                "clientConfig service namespace port path url namespaceSelector objectSelector ",
                "matchLabels matchExpressions key operator values matchPolicy matchConstraints resourceRules ",
                "validations expression validationActions policyName matchResources reason message type ",
                "count lastTimestamp eventTime series involvedObject uid kind source ",
                "component reportingController reportingInstance firstTimestamp ",
            )
            .split_whitespace()
            .collect::<Vec<_>>(),
        );
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            any::<i64>().prop_map(Value::from),
            any::<f64>().prop_map(|f| json!(f)),
            prop::sample::select(vec![
                "*",
                "*/*",
                "pods",
                "pods/*",
                "DELETE",
                "UPDATE",
                "Fail",
                "Ignore",
                "In",
                "NotIn",
                "Exists",
                "configmaps",
                "",
                "v1",
                "Deny",
                "Warning",
                "has(object.metadata.finalizers)",
                "2026-11-29T10:00:00Z",
                "9999-99-99"
            ])
            .prop_map(Value::from),
            ".{0,8}".prop_map(Value::from),
        ];
        leaf.prop_recursive(4, 48, 6, move |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::from),
                prop::collection::vec((key.clone(), inner), 0..6)
                    .prop_map(|kv| Value::Object(kv.into_iter().map(|(k, v)| (k.to_string(), v)).collect())),
            ]
        })
    }

    /// Well-formed lists whose fields hold anything: out-of-range times, odd strings, field
    /// sets that are not JSON; then a few bytes flipped.
    fn protobufish() -> impl Strategy<Value = Vec<u8>> {
        use crate::source::live::pb;
        let meta = (
            prop::option::of(".{0,6}"),
            prop::option::of("[a-c]{0,2}"),
            prop::option::of("[a-z0-9]{0,3}"),
            prop::option::of((any::<i64>(), any::<i32>())),
            prop::collection::vec((prop::option::of("[a-z0-9]{0,3}"), prop::option::of(any::<bool>())), 0..3),
            prop::collection::vec(".{0,8}", 0..3),
            prop::collection::vec(
                (prop::option::of(".{0,4}"), prop::option::of(prop::collection::vec(any::<u8>(), 0..24))),
                0..2,
            ),
        )
            .prop_map(|(name, namespace, uid, deleted, owners, finalizers, managed)| {
                pb::PartialObjectMetadata {
                    metadata: Some(pb::ObjectMeta {
                        name,
                        namespace,
                        uid: uid.clone(),
                        deletion_timestamp: deleted
                            .map(|(seconds, nanos)| pb::Time { seconds: Some(seconds), nanos: Some(nanos) }),
                        owner_references: owners
                            .into_iter()
                            .map(|(u, c)| pb::OwnerReference {
                                api_version: Some("v1".into()),
                                kind: Some("ConfigMap".into()),
                                name: u.clone(),
                                uid: u,
                                controller: c,
                                block_owner_deletion: c,
                            })
                            .collect(),
                        finalizers,
                        managed_fields: managed
                            .into_iter()
                            .map(|(manager, raw)| pb::ManagedFieldsEntry {
                                manager,
                                fields_type: Some("FieldsV1".into()),
                                fields_v1: raw.map(|raw| pb::FieldsV1 { raw: Some(raw) }),
                                ..Default::default()
                            })
                            .collect(),
                        ..Default::default()
                    }),
                }
            });
        (prop::collection::vec(meta, 0..6), prop::collection::vec((any::<usize>(), any::<u8>()), 0..3)).prop_map(
            |(items, flips)| {
                let list = pb::PartialObjectMetadataList { items, ..Default::default() };
                let mut bytes = crate::source::live::protobuf::encode_metadata_list(&list);
                for (at, b) in flips {
                    let i = at % bytes.len();
                    bytes[i] = b;
                }
                bytes
            },
        )
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

        #[test]
        fn arbitrary_bytes_as_a_snapshot_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
            super::snapshot(&bytes);
        }

        #[test]
        fn snapshot_like_input_never_panics(bytes in snapshotish()) {
            super::snapshot(&bytes);
        }

        #[test]
        fn arbitrary_bytes_as_admission_configurations_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..256)) {
            super::admission(&bytes);
        }

        #[test]
        fn admission_like_input_never_panics(v in jsonish()) {
            super::admission(v.to_string().as_bytes());
        }

        #[test]
        fn arbitrary_bytes_as_a_cel_expression_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..128)) {
            super::cel_expression(&bytes);
        }

        #[test]
        fn cel_like_expressions_never_panic(e in "[a-zA-Z_.()'\\[\\]{}:?!=<>&|+*/%, 0-9-]{0,96}") {
            super::cel_expression(e.as_bytes());
        }

        #[test]
        fn event_like_input_never_panics(v in jsonish()) {
            super::events(v.to_string().as_bytes());
        }

        #[test]
        fn arbitrary_bytes_as_a_protobuf_list_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
            super::protobuf_list(&bytes);
        }

        #[test]
        fn protobuf_lists_with_arbitrary_fields_never_panic(bytes in protobufish()) {
            super::protobuf_list(&bytes);
        }
    }
}

//! Entry points for the fuzz targets under `fuzz/` and for the bounded property tests of the
//! normal suite: arbitrary bytes through the snapshot parser, or through the protobuf list
//! decoder, and whatever parses through every answer and renderer. Each returns normally
//! (an error or an answer, both fine); a panic, a hang or an abort is the bug.

use std::path::Path;

use k8s_openapi::jiff::Timestamp;

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
    k8s_pb::apimachinery::pkg::runtime::Unknown {
        type_meta: Some(k8s_pb::apimachinery::pkg::runtime::TypeMeta {
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

    /// Well-formed lists whose fields hold anything: out-of-range times, odd strings, field
    /// sets that are not JSON; then a few bytes flipped.
    fn protobufish() -> impl Strategy<Value = Vec<u8>> {
        use k8s_pb::apimachinery::pkg::apis::meta::v1 as pb;
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
        fn arbitrary_bytes_as_a_protobuf_list_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
            super::protobuf_list(&bytes);
        }

        #[test]
        fn protobuf_lists_with_arbitrary_fields_never_panic(bytes in protobufish()) {
            super::protobuf_list(&bytes);
        }
    }
}

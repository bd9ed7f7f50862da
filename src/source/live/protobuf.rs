//! Metadata-only lists in Kubernetes' protobuf encoding, as the garbage collector itself reads
//! them (the metadata client asks for `application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList`
//! first and JSON second). The API server serves it for every type, custom resources
//! included (their handler encodes meta.k8s.io's types in protobuf, though never the custom
//! objects themselves); an aggregated API server may not, and answers JSON instead: the
//! answer's Content-Type says which came.
//!
//! The wire form is the 4-byte magic `k8s\0` and a `runtime.Unknown` whose `raw` holds the
//! `PartialObjectMetadataList`; the messages are upstream's `generated.proto` ones
//! ([`pb`]), decoded by prost. Each item becomes the same
//! [`RawDoc`] its JSON form gives, so both encodings give the same snapshot.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;
use prost::Message;

use crate::snapshot::object::FinalizerManager;
use crate::snapshot::raw::{RawDoc, RawFieldsV1, RawManagedFields, RawMeta, RawOwnerRef};
use crate::source::live::pb;

/// The media type a protobuf answer carries (parameters follow it).
pub const MEDIA_TYPE: &str = "application/vnd.kubernetes.protobuf";
/// The envelope's magic prefix.
pub const MAGIC: &[u8; 4] = b"k8s\0";

/// Whether an answer's Content-Type is Kubernetes protobuf.
pub fn is_protobuf(content_type: &str) -> bool {
    content_type.trim_start().to_ascii_lowercase().starts_with(MEDIA_TYPE)
}

/// One page: its items and its continue token.
pub struct Page {
    /// The items, each as a document the snapshot parser reads.
    pub items: Vec<RawDoc>,
    /// `metadata.continue`: the token for the next page; `None` on the last.
    pub continue_: Option<String>,
    /// `metadata.resourceVersion`: what the list is consistent with (a watch resumes from it).
    pub resource_version: Option<String>,
}

/// Decodes a protobuf `PartialObjectMetadataList` answer.
pub fn decode_metadata_list(body: &[u8]) -> Result<Page, String> {
    let rest = body.strip_prefix(MAGIC.as_slice()).ok_or("no k8s protobuf envelope (magic prefix missing)")?;
    let unknown = pb::Unknown::decode(rest).map_err(|e| format!("envelope: {e}"))?;
    let kind = unknown.type_meta.as_ref().and_then(|t| t.kind.as_deref()).unwrap_or("");
    let api_version = unknown.type_meta.as_ref().and_then(|t| t.api_version.as_deref()).unwrap_or("");
    // the kind and group asked for: another list (a PodList) is never read as this one
    if kind != "PartialObjectMetadataList" || !["meta.k8s.io/v1", "meta.k8s.io/v1beta1"].contains(&api_version) {
        let shown = |s: &str| s.chars().take(60).collect::<String>();
        return Err(format!(
            "expected a PartialObjectMetadataList (meta.k8s.io/v1), got {:?} ({:?})",
            shown(kind),
            shown(api_version)
        ));
    }
    if unknown.content_encoding.as_deref().is_some_and(|e| !e.is_empty()) {
        return Err(format!("unsupported content encoding {:?}", unknown.content_encoding));
    }
    let list = pb::PartialObjectMetadataList::decode(unknown.raw.as_deref().unwrap_or_default())
        .map_err(|e| format!("list: {e}"))?;
    let continue_ = list.metadata.as_ref().and_then(|m| m.r#continue.clone()).filter(|c| !c.is_empty());
    let resource_version = list.metadata.and_then(|m| m.resource_version).filter(|v| !v.is_empty());
    let items =
        list.items.into_iter().map(|i| RawDoc { metadata: i.metadata.map(meta), ..Default::default() }).collect();
    Ok(Page { items, continue_, resource_version })
}

fn non_empty(s: Option<String>) -> Option<String> {
    s.filter(|s| !s.is_empty())
}

fn time(t: Option<pb::Time>) -> Option<Timestamp> {
    let t = t?;
    Timestamp::new(t.seconds.unwrap_or(0), t.nanos.unwrap_or(0)).ok()
}

fn meta(m: pb::ObjectMeta) -> RawMeta {
    RawMeta {
        name: non_empty(m.name),
        namespace: non_empty(m.namespace),
        uid: non_empty(m.uid),
        resource_version: non_empty(m.resource_version),
        creation_timestamp: time(m.creation_timestamp).map(Time),
        deletion_timestamp: time(m.deletion_timestamp).map(Time),
        deletion_grace_period_seconds: m.deletion_grace_period_seconds,
        finalizers: (!m.finalizers.is_empty()).then_some(m.finalizers),
        owner_references: (!m.owner_references.is_empty()).then(|| {
            m.owner_references
                .into_iter()
                .map(|r| RawOwnerRef {
                    api_version: r.api_version,
                    kind: r.kind,
                    name: r.name,
                    uid: r.uid,
                    controller: r.controller,
                    block_owner_deletion: r.block_owner_deletion,
                })
                .collect()
        }),
        labels: (!m.labels.is_empty()).then_some(m.labels),
        managed_fields: (!m.managed_fields.is_empty()).then(|| managed_fields(m.managed_fields)),
    }
}

/// The entries that set finalizers, as the JSON reader keeps them: `fieldsV1.raw` is the
/// field set's JSON, of which only `f:metadata.f:finalizers` is read.
fn managed_fields(entries: Vec<pb::ManagedFieldsEntry>) -> RawManagedFields {
    let mut out = Vec::new();
    for e in entries {
        let Some(raw) = e.fields_v1.and_then(|f| f.raw) else { continue };
        let finalizers: Vec<String> = serde_json::from_slice::<RawFieldsV1>(&raw)
            .ok()
            .and_then(|f| f.metadata)
            .and_then(|m| m.finalizers)
            .map(|f| f.into_keys().filter_map(|k| k.strip_prefix("v:").map(unquote)).collect())
            .unwrap_or_default();
        if !finalizers.is_empty() {
            out.push(FinalizerManager {
                manager: e.manager.unwrap_or_default(),
                operation: e.operation.unwrap_or_default(),
                time: time(e.time),
                finalizers,
            });
        }
    }
    RawManagedFields(out)
}

/// Set keys are `v:"<json value>"`.
fn unquote(s: &str) -> String {
    serde_json::from_str::<String>(s).unwrap_or_else(|_| s.to_string())
}

/// Encodes a page as the API server does (for the test server and the tests).
pub fn encode_metadata_list(list: &pb::PartialObjectMetadataList) -> Vec<u8> {
    let unknown = pb::Unknown {
        type_meta: Some(pb::TypeMeta {
            api_version: Some("meta.k8s.io/v1".into()),
            kind: Some("PartialObjectMetadataList".into()),
        }),
        raw: Some(list.encode_to_vec()),
        content_encoding: Some(String::new()),
        content_type: Some(String::new()),
    };
    let mut out = MAGIC.to_vec();
    unknown.encode(&mut out).expect("a Vec grows as needed");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_page_decodes_to_what_its_json_gives() {
        let fields = br#"{"f:metadata":{"f:finalizers":{".":{},"v:\"own.labhub.io/cleanup\"":{}}}}"#.to_vec();
        let item = pb::PartialObjectMetadata {
            metadata: Some(pb::ObjectMeta {
                name: Some("alpha".into()),
                namespace: Some("labs".into()),
                uid: Some("u1".into()),
                resource_version: Some("12".into()),
                creation_timestamp: Some(pb::Time { seconds: Some(1_764_410_400), nanos: Some(0) }),
                finalizers: vec!["own.labhub.io/cleanup".into()],
                owner_references: vec![pb::OwnerReference {
                    api_version: Some("v1".into()),
                    kind: Some("ConfigMap".into()),
                    name: Some("o".into()),
                    uid: Some("u0".into()),
                    controller: Some(true),
                    block_owner_deletion: None,
                }],
                managed_fields: vec![
                    pb::ManagedFieldsEntry {
                        manager: Some("site-operator".into()),
                        operation: Some("Update".into()),
                        time: Some(pb::Time { seconds: Some(1_764_410_400), nanos: Some(0) }),
                        fields_type: Some("FieldsV1".into()),
                        fields_v1: Some(pb::FieldsV1 { raw: Some(fields) }),
                        ..Default::default()
                    },
                    pb::ManagedFieldsEntry {
                        manager: Some("kubelet".into()),
                        fields_v1: Some(pb::FieldsV1 { raw: Some(br#"{"f:status":{}}"#.to_vec()) }),
                        ..Default::default()
                    },
                ],
                ..Default::default()
            }),
        };
        let list = pb::PartialObjectMetadataList {
            metadata: Some(pb::ListMeta { r#continue: Some("next".into()), ..Default::default() }),
            items: vec![item],
        };
        let page = decode_metadata_list(&encode_metadata_list(&list)).unwrap();
        assert_eq!(page.continue_.as_deref(), Some("next"));
        let json = r#"{"metadata":{"name":"alpha","namespace":"labs","uid":"u1","resourceVersion":"12","creationTimestamp":"2025-11-29T10:00:00Z",
            "finalizers":["own.labhub.io/cleanup"],"ownerReferences":[{"apiVersion":"v1","kind":"ConfigMap","name":"o","uid":"u0","controller":true}],
            "managedFields":[{"manager":"site-operator","operation":"Update","time":"2025-11-29T10:00:00Z","fieldsType":"FieldsV1",
                              "fieldsV1":{"f:metadata":{"f:finalizers":{".":{},"v:\"own.labhub.io/cleanup\"":{}}}}},
                             {"manager":"kubelet","fieldsV1":{"f:status":{}}}]}}"#;
        let from_json: RawDoc = serde_json::from_str(json).unwrap();
        let stamp = |mut d: RawDoc| {
            d.api_version = Some("v1".into());
            d.kind = Some("ConfigMap".into());
            let mut flat = crate::snapshot::raw::Flattened::default();
            flat.push(d);
            flat.objects
        };
        let (a, b) = (stamp(page.items.into_iter().next().unwrap()), stamp(from_json));
        assert_eq!(a, b);
        assert_eq!(a[0].finalizer_managers.len(), 1);
    }

    #[test]
    fn what_is_not_a_metadata_list_is_refused() {
        assert!(decode_metadata_list(b"{\"kind\":\"List\"}").is_err());
        let mut other = MAGIC.to_vec();
        pb::Unknown {
            type_meta: Some(pb::TypeMeta { api_version: Some("v1".into()), kind: Some("PodList".into()) }),
            ..Default::default()
        }
        .encode(&mut other)
        .unwrap();
        assert!(decode_metadata_list(&other).err().is_some_and(|e| e.contains("PodList")));
        assert!(is_protobuf("application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"));
        assert!(!is_protobuf("application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"));
    }
}

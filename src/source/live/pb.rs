//! The few protobuf messages a metadata-only list is made of, as prost structs: meta/v1's
//! `PartialObjectMetadataList` and what it holds, and runtime's `Unknown` envelope.
//!
//! Field names and tags are those of upstream's `generated.proto`
//! (staging/src/k8s.io/apimachinery/pkg/apis/meta/v1 and pkg/runtime), as the kube-rs
//! project's k8s-pb 0.9 generates them; the test `upstream_bytes_decode` holds bytes k8s-pb
//! encoded. Declared here rather than taken from k8s-pb because that crate compiles every
//! Kubernetes message (about a tenth of a fresh install's build) for these ten. Every field
//! of these messages is kept, not just the ones read: the test API server encodes with them,
//! and what it sends must weigh what a real server's answer weighs.

// each field is upstream's, documented in its generated.proto and the API reference
#![allow(missing_docs)]

use std::collections::BTreeMap;

/// meta/v1 `ObjectMeta` (tags 15 and 16 were `clusterName` and an initializer list, removed
/// upstream).
#[derive(Clone, PartialEq, prost::Message)]
pub struct ObjectMeta {
    #[prost(string, optional, tag = "1")]
    pub name: Option<String>,
    #[prost(string, optional, tag = "2")]
    pub generate_name: Option<String>,
    #[prost(string, optional, tag = "3")]
    pub namespace: Option<String>,
    #[prost(string, optional, tag = "4")]
    pub self_link: Option<String>,
    #[prost(string, optional, tag = "5")]
    pub uid: Option<String>,
    #[prost(string, optional, tag = "6")]
    pub resource_version: Option<String>,
    #[prost(int64, optional, tag = "7")]
    pub generation: Option<i64>,
    #[prost(message, optional, tag = "8")]
    pub creation_timestamp: Option<Time>,
    #[prost(message, optional, tag = "9")]
    pub deletion_timestamp: Option<Time>,
    #[prost(int64, optional, tag = "10")]
    pub deletion_grace_period_seconds: Option<i64>,
    #[prost(btree_map = "string, string", tag = "11")]
    pub labels: BTreeMap<String, String>,
    #[prost(btree_map = "string, string", tag = "12")]
    pub annotations: BTreeMap<String, String>,
    #[prost(message, repeated, tag = "13")]
    pub owner_references: Vec<OwnerReference>,
    #[prost(string, repeated, tag = "14")]
    pub finalizers: Vec<String>,
    #[prost(message, repeated, tag = "17")]
    pub managed_fields: Vec<ManagedFieldsEntry>,
}

/// meta/v1 `OwnerReference`.
#[derive(Clone, PartialEq, Eq, prost::Message)]
pub struct OwnerReference {
    #[prost(string, optional, tag = "5")]
    pub api_version: Option<String>,
    #[prost(string, optional, tag = "1")]
    pub kind: Option<String>,
    #[prost(string, optional, tag = "3")]
    pub name: Option<String>,
    #[prost(string, optional, tag = "4")]
    pub uid: Option<String>,
    #[prost(bool, optional, tag = "6")]
    pub controller: Option<bool>,
    #[prost(bool, optional, tag = "7")]
    pub block_owner_deletion: Option<bool>,
}

/// meta/v1 `ManagedFieldsEntry`.
#[derive(Clone, PartialEq, Eq, prost::Message)]
pub struct ManagedFieldsEntry {
    #[prost(string, optional, tag = "1")]
    pub manager: Option<String>,
    #[prost(string, optional, tag = "2")]
    pub operation: Option<String>,
    #[prost(string, optional, tag = "3")]
    pub api_version: Option<String>,
    #[prost(message, optional, tag = "4")]
    pub time: Option<Time>,
    #[prost(string, optional, tag = "6")]
    pub fields_type: Option<String>,
    #[prost(message, optional, tag = "7")]
    pub fields_v1: Option<FieldsV1>,
    #[prost(string, optional, tag = "8")]
    pub subresource: Option<String>,
}

/// meta/v1 `FieldsV1`: the field set's JSON, as bytes.
#[derive(Clone, PartialEq, Eq, prost::Message)]
pub struct FieldsV1 {
    #[prost(bytes = "vec", optional, tag = "1")]
    pub raw: Option<Vec<u8>>,
}

/// meta/v1 `Time`, encoded as a protobuf `Timestamp` is.
#[derive(Clone, Copy, PartialEq, Eq, prost::Message)]
pub struct Time {
    #[prost(int64, optional, tag = "1")]
    pub seconds: Option<i64>,
    #[prost(int32, optional, tag = "2")]
    pub nanos: Option<i32>,
}

/// meta/v1 `ListMeta`.
#[derive(Clone, PartialEq, Eq, prost::Message)]
pub struct ListMeta {
    #[prost(string, optional, tag = "1")]
    pub self_link: Option<String>,
    #[prost(string, optional, tag = "2")]
    pub resource_version: Option<String>,
    #[prost(string, optional, tag = "3")]
    pub r#continue: Option<String>,
    #[prost(int64, optional, tag = "4")]
    pub remaining_item_count: Option<i64>,
}

/// meta/v1 `PartialObjectMetadata`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct PartialObjectMetadata {
    #[prost(message, optional, tag = "1")]
    pub metadata: Option<ObjectMeta>,
}

/// meta/v1 `PartialObjectMetadataList`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct PartialObjectMetadataList {
    #[prost(message, optional, tag = "1")]
    pub metadata: Option<ListMeta>,
    #[prost(message, repeated, tag = "2")]
    pub items: Vec<PartialObjectMetadata>,
}

/// runtime `Unknown`: the envelope every protobuf answer comes in, after the magic.
#[derive(Clone, PartialEq, Eq, prost::Message)]
pub struct Unknown {
    #[prost(message, optional, tag = "1")]
    pub type_meta: Option<TypeMeta>,
    #[prost(bytes = "vec", optional, tag = "2")]
    pub raw: Option<Vec<u8>>,
    #[prost(string, optional, tag = "3")]
    pub content_encoding: Option<String>,
    #[prost(string, optional, tag = "4")]
    pub content_type: Option<String>,
}

/// runtime `TypeMeta`.
#[derive(Clone, PartialEq, Eq, prost::Message)]
pub struct TypeMeta {
    #[prost(string, optional, tag = "1")]
    pub api_version: Option<String>,
    #[prost(string, optional, tag = "2")]
    pub kind: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use prost::Message;

    /// A list with every field of these messages set, as k8s-pb 0.9 encoded it (its
    /// `Unknown`, `PartialObjectMetadataList`, `ObjectMeta`, …).
    const UPSTREAM: &str = "0a2b0a0e6d6574612e6b38732e696f2f763112195061727469616c4f626a6563744d657461646174614c69737412c7010a0c0a022f6c1201391a0163200412b6010ab3010a05616c7068611203616c2d1a046c61627322022f782a027531320231323803420808a088abc90610074a08088489abc9061007501e5a080a0361707012016162090a046e6f746512016e6a1a0a09436f6e6669674d61701a016f220275302a0276313001380072156f776e2e6c61626875622e696f2f636c65616e75708a01320a026f7012065570646174651a027631220808a088abc906100732084669656c647356313a040a027b7d42067374617475731a002200";

    fn every_field() -> Unknown {
        let t = |seconds| Some(Time { seconds: Some(seconds), nanos: Some(7) });
        let meta = ObjectMeta {
            name: Some("alpha".into()),
            generate_name: Some("al-".into()),
            namespace: Some("labs".into()),
            self_link: Some("/x".into()),
            uid: Some("u1".into()),
            resource_version: Some("12".into()),
            generation: Some(3),
            creation_timestamp: t(1_764_410_400),
            deletion_timestamp: t(1_764_410_500),
            deletion_grace_period_seconds: Some(30),
            labels: [("app".to_string(), "a".to_string())].into(),
            annotations: [("note".to_string(), "n".to_string())].into(),
            owner_references: vec![OwnerReference {
                api_version: Some("v1".into()),
                kind: Some("ConfigMap".into()),
                name: Some("o".into()),
                uid: Some("u0".into()),
                controller: Some(true),
                block_owner_deletion: Some(false),
            }],
            finalizers: vec!["own.labhub.io/cleanup".into()],
            managed_fields: vec![ManagedFieldsEntry {
                manager: Some("op".into()),
                operation: Some("Update".into()),
                api_version: Some("v1".into()),
                time: t(1_764_410_400),
                fields_type: Some("FieldsV1".into()),
                fields_v1: Some(FieldsV1 { raw: Some(b"{}".to_vec()) }),
                subresource: Some("status".into()),
            }],
        };
        let list = PartialObjectMetadataList {
            metadata: Some(ListMeta {
                self_link: Some("/l".into()),
                resource_version: Some("9".into()),
                r#continue: Some("c".into()),
                remaining_item_count: Some(4),
            }),
            items: vec![PartialObjectMetadata { metadata: Some(meta) }],
        };
        Unknown {
            type_meta: Some(TypeMeta {
                api_version: Some("meta.k8s.io/v1".into()),
                kind: Some("PartialObjectMetadataList".into()),
            }),
            raw: Some(list.encode_to_vec()),
            content_encoding: Some(String::new()),
            content_type: Some(String::new()),
        }
    }

    fn hex(bytes: &[u8]) -> String {
        bytes.iter().map(|b| format!("{b:02x}")).collect()
    }

    #[test]
    fn upstream_bytes_decode() {
        let bytes: Vec<u8> =
            (0..UPSTREAM.len()).step_by(2).map(|i| u8::from_str_radix(&UPSTREAM[i..i + 2], 16).unwrap()).collect();
        let ours = every_field();
        // the same bytes both ways: every tag and wire type is upstream's
        assert_eq!(hex(&ours.encode_to_vec()), UPSTREAM);
        let read = Unknown::decode(bytes.as_slice()).unwrap();
        assert_eq!(read, ours);
        let list = PartialObjectMetadataList::decode(read.raw.unwrap().as_slice()).unwrap();
        let meta = list.items[0].metadata.as_ref().unwrap();
        assert_eq!(meta.owner_references[0].uid.as_deref(), Some("u0"));
        assert_eq!(meta.managed_fields[0].subresource.as_deref(), Some("status"));
        assert_eq!(list.metadata.unwrap().r#continue.as_deref(), Some("c"));
    }
}

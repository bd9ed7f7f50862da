//! A snapshot object's JSON metadata as the API server encodes it in protobuf (k8s-pb's
//! `ObjectMeta`): timestamps as seconds, `fieldsV1` as the raw JSON of the field set.

use kubectl_gc::source::live::pb;
use serde_json::Value;

fn string(v: &Value) -> Option<String> {
    v.as_str().map(str::to_string)
}

fn time(v: &Value) -> Option<pb::Time> {
    let t: k8s_openapi::jiff::Timestamp = v.as_str()?.parse().ok()?;
    Some(pb::Time { seconds: Some(t.as_second()), nanos: Some(t.subsec_nanosecond()) })
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array().into_iter().flatten().filter_map(string).collect()
}

fn map(v: &Value) -> std::collections::BTreeMap<String, String> {
    v.as_object().into_iter().flatten().filter_map(|(k, v)| Some((k.clone(), string(v)?))).collect()
}

pub fn object_meta(m: &Value) -> pb::ObjectMeta {
    pb::ObjectMeta {
        name: string(&m["name"]),
        generate_name: string(&m["generateName"]),
        namespace: string(&m["namespace"]),
        uid: string(&m["uid"]),
        resource_version: string(&m["resourceVersion"]),
        generation: m["generation"].as_i64(),
        creation_timestamp: time(&m["creationTimestamp"]),
        deletion_timestamp: time(&m["deletionTimestamp"]),
        deletion_grace_period_seconds: m["deletionGracePeriodSeconds"].as_i64(),
        labels: map(&m["labels"]),
        annotations: map(&m["annotations"]),
        owner_references: m["ownerReferences"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|r| pb::OwnerReference {
                api_version: string(&r["apiVersion"]),
                kind: string(&r["kind"]),
                name: string(&r["name"]),
                uid: string(&r["uid"]),
                controller: r["controller"].as_bool(),
                block_owner_deletion: r["blockOwnerDeletion"].as_bool(),
            })
            .collect(),
        finalizers: strings(&m["finalizers"]),
        managed_fields: m["managedFields"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|e| pb::ManagedFieldsEntry {
                manager: string(&e["manager"]),
                operation: string(&e["operation"]),
                api_version: string(&e["apiVersion"]),
                time: time(&e["time"]),
                fields_type: string(&e["fieldsType"]),
                fields_v1: (!e["fieldsV1"].is_null())
                    .then(|| pb::FieldsV1 { raw: Some(serde_json::to_vec(&e["fieldsV1"]).unwrap()) }),
                subresource: string(&e["subresource"]),
            })
            .collect(),
        ..Default::default()
    }
}

//! The lenient wire shape of snapshot documents, and its validation into [`Object`]s.
//!
//! Unknown fields are skipped without being built (serde ignores them), so a full
//! `kubectl get -o json` dump costs little more than a metadata-only one.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;

use super::object::{Body, Object, OwnerRef, Uid, group_of, keeps_body};
use super::{ApiResource, ResourceList};

/// One document: an object, a `List`/`*List` with `items`, or an `APIResourceList`.
#[derive(Clone, Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
pub struct RawDoc {
    /// `apiVersion`; an object without one is skipped (counted in [`Skipped::objects`]).
    pub api_version: Option<String>,
    /// `kind`: an object's kind, `List`/`*List`, or `APIResourceList`.
    pub kind: Option<String>,
    /// `metadata`; an object without one is skipped.
    pub metadata: Option<RawMeta>,
    /// A List's `items`, flattened in file order by [`Flattened::push`].
    pub items: Option<Vec<RawDoc>>,
    // APIResourceList
    /// An `APIResourceList`'s `groupVersion` (`apps/v1`, or `v1` for the core group).
    pub group_version: Option<String>,
    /// An `APIResourceList`'s `resources`.
    pub resources: Option<Vec<RawApiResource>>,
    // what `kubectl gc snapshot` adds to its List
    /// When `kubectl gc snapshot` took the snapshot; the latest of several files wins.
    pub captured_at: Option<Time>,
    /// The kubeconfig context `kubectl gc snapshot` read from.
    pub captured_context: Option<String>,
    /// What `kubectl gc snapshot` could not read, as recorded phrases (become [`super::Gap`]s).
    pub incomplete: Option<Vec<String>>,
    // bodies the analysis reads, for the kinds in `keeps_body`
    /// `spec` (kept only for the kinds in `keeps_body`, like every field below).
    pub spec: Option<Value>,
    /// `status`: conditions, phase, replica counts.
    pub status: Option<Value>,
    /// Roles' and ClusterRoles' `rules`.
    pub rules: Option<Value>,
    /// RoleBindings' and ClusterRoleBindings' `roleRef`.
    pub role_ref: Option<Value>,
    /// RoleBindings' and ClusterRoleBindings' `subjects`.
    pub subjects: Option<Value>,
    /// An aggregated ClusterRole's `aggregationRule`.
    pub aggregation_rule: Option<Value>,
    /// A core/v1 Event's `involvedObject`: the object it is about.
    pub involved_object: Option<Value>,
    /// An events.k8s.io/v1 Event's `regarding`: the object it is about.
    pub regarding: Option<Value>,
    /// An Event's `reason` (a CamelCase word, matched on; its message is only quoted).
    pub reason: Option<Value>,
    /// A core/v1 Event's `message`.
    pub message: Option<Value>,
    /// An events.k8s.io/v1 Event's `note` (its message).
    pub note: Option<Value>,
    /// An Event's `type` (`Normal` or `Warning`).
    #[serde(rename = "type")]
    pub type_: Option<Value>,
    /// core/v1 Endpoints' `subsets`: whether a webhook's or APIService's Service has ready
    /// backends.
    pub subsets: Option<Value>,
    /// discovery.k8s.io/v1 EndpointSlices' `endpoints`, read for the same reason.
    pub endpoints: Option<Value>,
    /// A core/v1 Event's `lastTimestamp`: when it last happened.
    pub last_timestamp: Option<Value>,
    /// A core/v1 Event's `count`: how many times it happened.
    pub count: Option<Value>,
    // the rest of an Event that an answer shows: how often, when last, and who reported it
    /// An events.k8s.io/v1 Event's `series` (`count`, `lastObservedTime`) when it repeats.
    pub series: Option<Value>,
    /// An events.k8s.io/v1 Event's `eventTime` (microsecond precision).
    pub event_time: Option<Value>,
    /// A core/v1 Event's `source` (`component`, `host`).
    pub source: Option<Value>,
    /// A core/v1 Event's `reportingComponent`.
    pub reporting_component: Option<Value>,
    /// An events.k8s.io/v1 Event's `reportingController`.
    pub reporting_controller: Option<Value>,
    /// events.k8s.io/v1 `deprecatedCount`: the core/v1 `count` seen through the new API.
    pub deprecated_count: Option<Value>,
    /// events.k8s.io/v1 `deprecatedLastTimestamp`: the core/v1 `lastTimestamp`.
    pub deprecated_last_timestamp: Option<Value>,
    /// events.k8s.io/v1 `deprecatedSource`: the core/v1 `source`.
    pub deprecated_source: Option<Value>,
    /// Validating- and MutatingWebhookConfigurations: the webhooks, their rules and backends.
    pub webhooks: Option<Value>,
    /// The same body fields as JSON text, when read by the streaming reader (which never
    /// builds them): (field name, text).
    #[serde(skip)]
    pub raw_body: Vec<(&'static str, Box<RawValue>)>,
}

/// `metadata`, keeping only what the graph, the GC model and the answers read.
#[derive(Clone, Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
pub struct RawMeta {
    /// `metadata.name`; an object without one is skipped.
    pub name: Option<String>,
    /// `metadata.namespace`; absent or empty for cluster-scoped objects.
    pub namespace: Option<String>,
    /// `metadata.uid`: the identity owner references point at; an object without one is skipped.
    pub uid: Option<String>,
    /// `metadata.resourceVersion`, opaque.
    pub resource_version: Option<String>,
    /// `metadata.creationTimestamp`.
    pub creation_timestamp: Option<Time>,
    /// `metadata.deletionTimestamp`: set once deletion was requested; the object waits on its
    /// finalizers.
    pub deletion_timestamp: Option<Time>,
    /// `metadata.deletionGracePeriodSeconds`, in seconds (pods, mostly).
    pub deletion_grace_period_seconds: Option<i64>,
    /// `metadata.finalizers`: what must be removed before the API server deletes the object.
    pub finalizers: Option<Vec<String>>,
    /// `metadata.ownerReferences`; entries missing a coordinate are dropped and counted.
    pub owner_references: Option<Vec<RawOwnerRef>>,
    /// `metadata.labels`; kept only for body kinds and objects being deleted (see `object`).
    pub labels: Option<BTreeMap<String, String>>,
    /// `metadata.managedFields`, reduced to who set which finalizer.
    pub managed_fields: Option<RawManagedFields>,
}

/// One `metadata.ownerReferences[]` entry as written; all four coordinates are required to keep it.
#[derive(Clone, Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
pub struct RawOwnerRef {
    /// The owner's `apiVersion`.
    pub api_version: Option<String>,
    /// The owner's `kind`.
    pub kind: Option<String>,
    /// The owner's `name` (in the dependent's namespace, or cluster-scoped).
    pub name: Option<String>,
    /// The owner's `uid`: the GC counts an owner with this name but another uid as absent.
    pub uid: Option<String>,
    /// `controller`: at most one owner reference per object is the managing controller.
    pub controller: Option<bool>,
    /// `blockOwnerDeletion`: whether foreground deletion of the owner waits for this dependent.
    pub block_owner_deletion: Option<bool>,
}

/// `metadata.managedFields`, keeping only the entries that set finalizers: most entries of
/// most objects set none, and are skipped without copying a string.
#[derive(Clone, Default)]
pub struct RawManagedFields(pub Vec<super::object::FinalizerManager>);

impl<'de> Deserialize<'de> for RawManagedFields {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Entries;
        impl<'de> serde::de::Visitor<'de> for Entries {
            type Value = RawManagedFields;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a list of managedFields entries")
            }
            fn visit_unit<E>(self) -> Result<RawManagedFields, E> {
                Ok(RawManagedFields::default())
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<RawManagedFields, A::Error> {
                let mut out = Vec::new();
                while let Some(e) = seq.next_element::<Entry<'de>>()? {
                    let fins: Vec<String> = e
                        .fields_v1
                        .and_then(|f| f.metadata)
                        .and_then(|m| m.finalizers)
                        .map(|f| f.into_keys().filter_map(|k| k.strip_prefix("v:").map(unquote)).collect())
                        .unwrap_or_default();
                    if !fins.is_empty() {
                        out.push(super::object::FinalizerManager {
                            manager: e.manager.map(|m| m.0.into_owned()).unwrap_or_default(),
                            operation: e.operation.map(|m| m.0.into_owned()).unwrap_or_default(),
                            time: e.time.and_then(|t| t.0.parse().ok()),
                            finalizers: fins,
                        });
                    }
                }
                Ok(RawManagedFields(out))
            }
        }
        d.deserialize_any(Entries)
    }
}

/// A string borrowed from the input where it can be (no escapes), copied only when kept.
struct Text<'de>(std::borrow::Cow<'de, str>);

impl<'de: 'a, 'a> Deserialize<'de> for Text<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> serde::de::Visitor<'de> for V<'a> {
            type Value = Text<'a>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Text<'a>, E> {
                Ok(Text(std::borrow::Cow::Borrowed(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Text<'a>, E> {
                Ok(Text(std::borrow::Cow::Owned(v.to_string())))
            }
        }
        d.deserialize_str(V(std::marker::PhantomData))
    }
}

/// Only `f:metadata.f:finalizers` of a managedFields entry is read.
#[derive(Deserialize, Default)]
#[serde(default)]
pub struct RawFieldsV1 {
    /// `f:metadata`.
    #[serde(rename = "f:metadata")]
    pub metadata: Option<RawFieldsMeta>,
}

/// `f:metadata` of a managedFields entry: only `f:finalizers` is read.
#[derive(Deserialize, Default)]
#[serde(default)]
pub struct RawFieldsMeta {
    /// `f:finalizers`: keys are `v:"<finalizer>"`, values are ignored.
    #[serde(rename = "f:finalizers")]
    pub finalizers: Option<BTreeMap<String, serde::de::IgnoredAny>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Entry<'a> {
    #[serde(borrow, default)]
    manager: Option<Text<'a>>,
    #[serde(borrow, default)]
    operation: Option<Text<'a>>,
    #[serde(borrow, default)]
    time: Option<Text<'a>>,
    #[serde(default)]
    fields_v1: Option<RawFieldsV1>,
}

/// One `resources[]` entry of an `APIResourceList` (discovery).
#[derive(Clone, Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
pub struct RawApiResource {
    /// The plural resource name (`deployments`), or `resource/subresource`; entries without one are
    /// dropped.
    pub name: String,
    /// `singularName`; empty is treated as absent.
    pub singular_name: Option<String>,
    /// Whether objects of this resource live in a namespace.
    pub namespaced: bool,
    /// The group, when it differs from the list's `groupVersion` (rare).
    pub group: Option<String>,
    /// The version, when it differs from the list's `groupVersion` (rare).
    pub version: Option<String>,
    /// The kind served; entries without one are dropped.
    pub kind: String,
    /// The verbs served (`delete`, `list`, `watch`, ...).
    pub verbs: Vec<String>,
    /// `shortNames` (`deploy`), as kubectl accepts them.
    pub short_names: Vec<String>,
    /// `categories` (`all`), as kubectl accepts them.
    pub categories: Vec<String>,
}

/// What validation found wrong with input it still read.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Skipped {
    /// Objects without apiVersion, kind, name or uid.
    pub objects: usize,
    /// Owner references missing a coordinate (the API server never stores these).
    pub owner_refs: usize,
}

/// Everything flattened out of one or more documents.
#[derive(Default)]
pub struct Flattened {
    /// Every valid object read, in file order (the first of two sharing a uid wins later).
    pub objects: Vec<Object>,
    /// Every `APIResourceList` read: what the snapshotted cluster served.
    pub resource_lists: Vec<ResourceList>,
    /// The latest `capturedAt` among the documents read.
    pub captured_at: Option<k8s_openapi::jiff::Timestamp>,
    /// The context a `kubectl gc snapshot` file recorded; files that disagree record none.
    pub captured_context: Option<String>,
    /// Whether two files named different contexts (then no context is named at all).
    pub contexts_differ: bool,
    /// What the snapshot recorded it could not read.
    pub incomplete: Vec<super::Gap>,
    /// What was read but not kept, counted.
    pub skipped: Skipped,
    /// Where a List item parsed apart from its file failed (the streaming reader's workers
    /// see only the item): set with the parse error, for the caller to place it in the file.
    pub item_error: Option<stream::ItemError>,
}

impl Flattened {
    /// Appends what another reader read after this one's (the order of objects is kept: the
    /// first of two objects sharing a uid wins).
    pub fn append(&mut self, mut other: Flattened) {
        self.objects.append(&mut other.objects);
        self.resource_lists.append(&mut other.resource_lists);
        if let Some(t) = other.captured_at {
            self.captured_at = Some(self.captured_at.map_or(t, |c| c.max(t)));
        }
        if let Some(c) = other.captured_context {
            self.record_context(c);
        }
        self.contexts_differ |= other.contexts_differ;
        self.incomplete.append(&mut other.incomplete);
        self.skipped.objects += other.skipped.objects;
        self.skipped.owner_refs += other.skipped.owner_refs;
    }

    fn record_context(&mut self, c: String) {
        match &self.captured_context {
            Some(have) if *have != c => {
                self.contexts_differ = true;
                self.captured_context = None;
            }
            _ if self.contexts_differ => {}
            _ => self.captured_context = Some(c),
        }
    }

    /// Adds a document: objects go to `objects`, lists are flattened (iteratively, so a
    /// deeply nested input cannot overflow the stack).
    pub fn push(&mut self, doc: RawDoc) {
        let mut stack = vec![doc];
        while let Some(mut doc) = stack.pop() {
            if let Some(t) = doc.captured_at.take() {
                self.captured_at = Some(self.captured_at.map_or(t.0, |c| c.max(t.0)));
            }
            if let Some(c) = doc.captured_context.take() {
                self.record_context(c);
            }
            if let Some(inc) = doc.incomplete.take() {
                self.incomplete.extend(inc.into_iter().map(super::Gap::recorded));
            }
            if let Some(items) = doc.items.take() {
                // reversed so that items come out in file order
                stack.extend(items.into_iter().rev());
                continue;
            }
            if doc.kind.as_deref() == Some("APIResourceList") {
                if let Some(list) = resource_list(&mut doc) {
                    self.resource_lists.push(list);
                }
                continue;
            }
            match object(doc, &mut self.skipped) {
                Some(o) => self.objects.push(o),
                None => self.skipped.objects += 1,
            }
        }
    }
}

fn resource_list(doc: &mut RawDoc) -> Option<ResourceList> {
    let gv = doc.group_version.take()?;
    let resources = doc
        .resources
        .take()
        .unwrap_or_default()
        .into_iter()
        .filter(|r| !r.kind.is_empty() && !r.name.is_empty())
        .map(|r| ApiResource {
            plural: r.name,
            singular: r.singular_name.filter(|s| !s.is_empty()),
            namespaced: r.namespaced,
            group: r.group,
            version: r.version,
            kind: r.kind,
            verbs: r.verbs,
            short_names: r.short_names,
            categories: r.categories,
        })
        .collect();
    Some(ResourceList { group_version: gv, resources })
}

fn non_empty(s: Option<String>) -> Option<String> {
    s.filter(|s| !s.is_empty())
}

fn object(doc: RawDoc, skipped: &mut Skipped) -> Option<Object> {
    let api_version = non_empty(doc.api_version)?;
    let kind = non_empty(doc.kind)?;
    let meta = doc.metadata?;
    let name = non_empty(meta.name)?;
    let uid = non_empty(meta.uid)?;
    let owner_references = meta
        .owner_references
        .unwrap_or_default()
        .into_iter()
        .filter_map(|r| {
            let r = owner_ref(r);
            if r.is_none() {
                skipped.owner_refs += 1;
            }
            r
        })
        .collect();
    let finalizer_managers = meta.managed_fields.map(|m| m.0).unwrap_or_default();
    let keep_body = keeps_body(group_of(&api_version), &kind);
    let body = if !keep_body {
        Body::default()
    } else if !doc.raw_body.is_empty() {
        Body::from_raw(doc.raw_body.iter().map(|(k, v)| (*k, &**v)))
    } else {
        let fields = [
            ("spec", doc.spec),
            ("status", doc.status),
            ("rules", doc.rules),
            ("roleRef", doc.role_ref),
            ("subjects", doc.subjects),
            ("aggregationRule", doc.aggregation_rule),
            ("involvedObject", doc.involved_object),
            ("regarding", doc.regarding),
            ("reason", doc.reason),
            ("message", doc.message),
            ("note", doc.note),
            ("type", doc.type_),
            ("subsets", doc.subsets),
            ("endpoints", doc.endpoints),
            ("lastTimestamp", doc.last_timestamp),
            ("count", doc.count),
            ("series", doc.series),
            ("eventTime", doc.event_time),
            ("source", doc.source),
            ("reportingComponent", doc.reporting_component),
            ("reportingController", doc.reporting_controller),
            ("deprecatedCount", doc.deprecated_count),
            ("deprecatedLastTimestamp", doc.deprecated_last_timestamp),
            ("deprecatedSource", doc.deprecated_source),
            ("webhooks", doc.webhooks),
        ];
        Body::from_map(fields.into_iter().filter_map(|(k, v)| Some((k.to_string(), v?))).collect())
    };
    let deleting = meta.deletion_timestamp.is_some();
    Some(Object {
        api_version,
        kind,
        namespace: non_empty(meta.namespace),
        name,
        uid: Uid(uid),
        resource_version: meta.resource_version,
        creation_timestamp: meta.creation_timestamp.map(|t| t.0),
        deletion_timestamp: meta.deletion_timestamp.map(|t| t.0),
        deletion_grace_period_seconds: meta.deletion_grace_period_seconds,
        finalizers: meta.finalizers.unwrap_or_default(),
        owner_references,
        // labels cost more than the rest of the metadata together; only the kinds whose body the
        // analysis reads keep them (a static control-plane pod's `component`), and objects being
        // deleted (few), whose labels an admission webhook's objectSelector is matched against
        labels: match meta.labels {
            Some(l) if keep_body || deleting => l.into_iter().collect(),
            _ => Vec::new(),
        },
        finalizer_managers,
        body,
    })
}

fn owner_ref(r: RawOwnerRef) -> Option<OwnerRef> {
    Some(OwnerRef {
        api_version: non_empty(r.api_version)?,
        kind: non_empty(r.kind)?,
        name: non_empty(r.name)?,
        uid: Uid(non_empty(r.uid)?),
        controller: r.controller,
        block_owner_deletion: r.block_owner_deletion,
    })
}

/// managedFields set keys are `v:"<json value>"`.
fn unquote(s: &str) -> String {
    serde_json::from_str::<String>(s).unwrap_or_else(|_| s.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flatten(json: &str) -> Flattened {
        let mut f = Flattened::default();
        f.push(serde_json::from_str(json).unwrap());
        f
    }

    #[test]
    fn nested_lists_flatten_in_file_order() {
        let f = flatten(
            r#"{"kind":"List","items":[
                {"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","uid":"1"}},
                {"kind":"ConfigMapList","items":[{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"b","uid":"2"}}]},
                {"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","uid":"3"}}]}"#,
        );
        let names: Vec<_> = f.objects.iter().map(|o| o.name.as_str()).collect();
        assert_eq!(names, ["a", "b", "c"]);
    }

    #[test]
    fn objects_missing_a_coordinate_are_counted_not_kept() {
        let f = flatten(
            r#"{"kind":"List","items":[
                {"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"}},
                {"apiVersion":"v1","metadata":{"name":"b","uid":"2"}},
                {"kind":"ConfigMap","metadata":{"name":"c","uid":"3"}},
                {"apiVersion":"v1","kind":"ConfigMap","metadata":{"uid":"4"}},
                {"apiVersion":"v1","kind":"ConfigMap"},
                {"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"ok","uid":"5",
                  "ownerReferences":[{"apiVersion":"v1","kind":"Pod","name":"p"}]}}]}"#,
        );
        assert_eq!(f.objects.len(), 1);
        assert_eq!(f.skipped.objects, 5);
        assert_eq!(f.skipped.owner_refs, 1);
        assert!(f.objects[0].owner_references.is_empty());
    }

    #[test]
    fn managed_fields_name_the_manager_of_each_finalizer() {
        let f = flatten(
            r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","uid":"1",
                "finalizers":["x.io/cleanup"],
                "managedFields":[
                  {"manager":"kubectl","operation":"Update","fieldsV1":{"f:data":{}}},
                  {"manager":"x-operator","operation":"Update","time":"2026-11-29T10:00:00Z",
                   "fieldsV1":{"f:metadata":{"f:finalizers":{".":{},"v:\"x.io/cleanup\"":{}}}}}]}}"#,
        );
        let m = &f.objects[0].finalizer_managers;
        assert_eq!(m.len(), 1);
        assert_eq!(m[0].manager, "x-operator");
        assert_eq!(m[0].finalizers, ["x.io/cleanup"]);
        assert!(m[0].time.is_some());
    }

    #[test]
    fn webhook_configurations_keep_their_webhooks_and_deleting_objects_their_labels() {
        let f = flatten(
            r#"{"kind":"List","items":[
                {"apiVersion":"admissionregistration.k8s.io/v1","kind":"ValidatingWebhookConfiguration",
                 "metadata":{"name":"p","uid":"1"},"webhooks":[{"name":"w","failurePolicy":"Fail"}]},
                {"apiVersion":"x.io/v1","kind":"Thing","metadata":{"name":"a","uid":"2","labels":{"tier":"gold"},
                 "deletionTimestamp":"2026-11-29T10:00:00Z","finalizers":["x.io/f"]}},
                {"apiVersion":"x.io/v1","kind":"Thing","metadata":{"name":"b","uid":"3","labels":{"tier":"gold"}}}]}"#,
        );
        let hooks = f.objects[0].body.get("webhooks").and_then(|w| w.as_array().cloned()).unwrap_or_default();
        assert_eq!(hooks.len(), 1);
        assert_eq!(f.objects[1].label("tier"), Some("gold"), "an objectSelector is matched on them");
        assert!(f.objects[2].labels.is_empty(), "other objects' labels are still dropped");
    }

    #[test]
    fn secrets_keep_no_body() {
        let f = flatten(
            r#"{"apiVersion":"v1","kind":"Secret","metadata":{"name":"a","uid":"1"},"data":{"k":"djE="},"type":"Opaque"}"#,
        );
        assert!(f.objects[0].body.is_empty());
    }

    #[test]
    fn capture_time_and_resource_lists_are_read() {
        let f = flatten(
            r#"{"kind":"List","capturedAt":"2026-11-29T12:00:00Z","incomplete":["pods: forbidden"],"items":[
                {"kind":"APIResourceList","groupVersion":"own.labhub.io/v1","resources":[
                  {"name":"sites","singularName":"site","namespaced":true,"kind":"Site","verbs":["list"],"shortNames":["st"]}]}]}"#,
        );
        assert_eq!(f.captured_at.unwrap().to_string(), "2026-11-29T12:00:00Z");
        assert_eq!(f.incomplete, ["pods: forbidden"]);
        assert_eq!(f.resource_lists[0].resources[0].short_names, ["st"]);
        assert!(f.objects.is_empty());
    }
}

/// Streaming deserialization straight into a [`Flattened`]: a `List`'s items are validated
/// one by one as they are read, never collected, and the spec and status of kinds the
/// analysis does not read are skipped without being built. What a 1M-object file costs is
/// then its objects, not a tree of every value in it.
pub mod stream {
    use std::fmt;

    use serde::de::{DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
    use serde::{Deserialize, Deserializer};

    use super::{Flattened, RawDoc, RawValue, group_of, keeps_body};

    #[derive(Deserialize)]
    #[serde(field_identifier, rename_all = "camelCase")]
    enum Field {
        ApiVersion,
        Kind,
        Metadata,
        Items,
        GroupVersion,
        Resources,
        CapturedAt,
        CapturedContext,
        Incomplete,
        Spec,
        Status,
        Rules,
        RoleRef,
        Subjects,
        AggregationRule,
        InvolvedObject,
        Regarding,
        Reason,
        Message,
        Note,
        #[serde(rename = "type")]
        Type,
        Subsets,
        Endpoints,
        LastTimestamp,
        Count,
        Series,
        EventTime,
        Source,
        ReportingComponent,
        ReportingController,
        DeprecatedCount,
        DeprecatedLastTimestamp,
        DeprecatedSource,
        Webhooks,
        #[serde(other)]
        Other,
    }

    /// One top-level value: an object (maybe a List) or an array of them.
    ///
    /// With `consumed` (JSON from a slice only), a List's items are cut out as raw slices
    /// and parsed in batches on every core, and `consumed` is called with the address range
    /// of each batch parsed: a caller reading a mapped file releases it, so the file never
    /// weighs in whole next to the objects built from it.
    pub struct TopLevel<'a> {
        /// Where the objects and lists read go.
        pub flat: &'a mut Flattened,
        /// Called with each parsed batch's address range, when the input is a slice that may be
        /// released.
        pub consumed: Option<&'a Release<'a>>,
    }

    /// Called with the address range of items already parsed, which the caller may release.
    pub type Release<'a> = dyn Fn(usize, usize) + Sync + 'a;

    impl<'de> DeserializeSeed<'de> for TopLevel<'_> {
        type Value = ();
        fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
            d.deserialize_any(DocOrSeq(self.flat, self.consumed))
        }
    }

    /// An error inside one item of a JSON List parsed apart (by the pipeline's workers): the
    /// item's text and the error's line and column within it, so that the caller, which
    /// holds the whole input, can say where in the file it is.
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct ItemError {
        /// The address of the item's first byte (within the caller's input).
        pub item_start: usize,
        /// The error's line within the item's text (1-based, as serde_json counts).
        pub line: usize,
        /// The error's column within that line (1-based, as serde_json counts).
        pub column: usize,
        /// serde_json's message, without its own position.
        pub message: String,
    }

    impl ItemError {
        /// The item's offset in `input`, which holds it.
        pub fn offset_in(&self, input: &[u8]) -> usize {
            self.item_start.saturating_sub(input.as_ptr() as usize).min(input.len())
        }
    }

    /// One document; a `List`'s items go to the same `Flattened` as they are read.
    pub struct Doc<'a>(pub &'a mut Flattened);

    impl<'de> DeserializeSeed<'de> for Doc<'_> {
        type Value = ();
        fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
            d.deserialize_any(DocOrSeq(self.0, None))
        }
    }

    struct DocOrSeq<'a>(&'a mut Flattened, Option<&'a Release<'a>>);

    impl<'de> Visitor<'de> for DocOrSeq<'_> {
        type Value = ();

        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("a Kubernetes object, a List, or an array of objects")
        }

        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
            while seq.next_element_seed(Doc(&mut *self.0))?.is_some() {}
            Ok(())
        }

        fn visit_unit<E>(self) -> Result<(), E> {
            Ok(())
        }

        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
            let (flat, consumed) = (self.0, self.1);
            let mut doc = RawDoc::default();
            let mut had_items = false;
            while let Some(key) = map.next_key::<Field>()? {
                // the body of kinds the analysis does not read is skipped unbuilt; kubectl and
                // the API write apiVersion and kind first, so this is almost always known
                let wanted = || match (&doc.api_version, &doc.kind) {
                    (Some(av), Some(k)) => keeps_body(group_of(av), k),
                    _ => true,
                };
                macro_rules! body {
                    ($key:literal) => {{
                        if wanted() {
                            // kept as text: parsed only if some answer reads it
                            if let Some(raw) = map.next_value::<Option<Box<RawValue>>>()? {
                                doc.raw_body.push(($key, raw));
                            }
                        } else {
                            map.next_value::<IgnoredAny>()?;
                        }
                    }};
                }
                match key {
                    Field::ApiVersion => doc.api_version = map.next_value()?,
                    Field::Kind => doc.kind = map.next_value()?,
                    Field::Metadata => doc.metadata = map.next_value()?,
                    Field::Items => {
                        had_items = true;
                        match consumed {
                            None => map.next_value_seed(Items(&mut *flat))?,
                            Some(release) => map.next_value_seed(Pipeline { flat: &mut *flat, release })?,
                        }
                    }
                    Field::GroupVersion => doc.group_version = map.next_value()?,
                    Field::Resources => doc.resources = map.next_value()?,
                    Field::CapturedAt => doc.captured_at = map.next_value()?,
                    Field::CapturedContext => doc.captured_context = map.next_value()?,
                    Field::Incomplete => doc.incomplete = map.next_value()?,
                    Field::Spec => body!("spec"),
                    Field::Status => body!("status"),
                    Field::Rules => body!("rules"),
                    Field::RoleRef => body!("roleRef"),
                    Field::Subjects => body!("subjects"),
                    Field::AggregationRule => body!("aggregationRule"),
                    Field::InvolvedObject => body!("involvedObject"),
                    Field::Regarding => body!("regarding"),
                    Field::Reason => body!("reason"),
                    Field::Message => body!("message"),
                    Field::Note => body!("note"),
                    Field::Type => body!("type"),
                    Field::Subsets => body!("subsets"),
                    Field::Endpoints => body!("endpoints"),
                    Field::LastTimestamp => body!("lastTimestamp"),
                    Field::Count => body!("count"),
                    Field::Series => body!("series"),
                    Field::EventTime => body!("eventTime"),
                    Field::Source => body!("source"),
                    Field::ReportingComponent => body!("reportingComponent"),
                    Field::ReportingController => body!("reportingController"),
                    Field::DeprecatedCount => body!("deprecatedCount"),
                    Field::DeprecatedLastTimestamp => body!("deprecatedLastTimestamp"),
                    Field::DeprecatedSource => body!("deprecatedSource"),
                    Field::Webhooks => body!("webhooks"),
                    Field::Other => {
                        map.next_value::<IgnoredAny>()?;
                    }
                }
            }
            if had_items {
                // a list: its items are in already; keep what the list itself says
                doc.items = Some(Vec::new());
            }
            flat.push(doc);
            Ok(())
        }
    }

    /// Items parsed per batch, on every core: this thread cuts the List's items out of the
    /// input (validating its syntax) while workers build the objects. Batches are put back in
    /// file order as they come, so memory holds little beyond the objects themselves.
    struct Pipeline<'a> {
        flat: &'a mut Flattened,
        release: &'a Release<'a>,
    }

    const BATCH: usize = 2048;

    type Parsed = (usize, Result<Flattened, ItemError>);

    /// Parses one batch of raw items; an error says which item and where in it.
    fn parse_batch(items: &[&serde_json::value::RawValue], release: &Release<'_>) -> Result<Flattened, ItemError> {
        let mut flat = Flattened::default();
        for raw in items {
            let text = raw.get();
            let mut de = serde_json::Deserializer::from_str(text);
            Doc(&mut flat).deserialize(&mut de).map_err(|e| {
                let message = e.to_string();
                ItemError {
                    item_start: text.as_ptr() as usize,
                    line: e.line(),
                    column: e.column(),
                    message: message.split(" at line ").next().unwrap_or(&message).to_string(),
                }
            })?;
        }
        if let (Some(first), Some(last)) = (items.first(), items.last()) {
            release(first.get().as_ptr() as usize, last.get().as_ptr() as usize + last.get().len());
        }
        Ok(flat)
    }

    impl<'de> DeserializeSeed<'de> for Pipeline<'_> {
        type Value = ();
        fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
            let workers = std::thread::available_parallelism().map_or(1, |n| n.get());
            let release = self.release;
            let (work_tx, work_rx) =
                std::sync::mpsc::sync_channel::<(usize, Vec<&'de serde_json::value::RawValue>)>(workers * 2);
            let work_rx = std::sync::Mutex::new(work_rx);
            let (done_tx, done_rx) = std::sync::mpsc::channel::<Parsed>();
            std::thread::scope(|scope| {
                for _ in 0..workers {
                    let (work_rx, done_tx) = (&work_rx, done_tx.clone());
                    scope.spawn(move || {
                        loop {
                            let next = work_rx.lock().unwrap_or_else(|e| e.into_inner()).recv();
                            let Ok((seq, batch)) = next else { break };
                            if done_tx.send((seq, parse_batch(&batch, release))).is_err() {
                                break;
                            }
                        }
                    });
                }
                drop(done_tx);
                let mut order =
                    InOrder { flat: self.flat, next: 0, waiting: std::collections::BTreeMap::new(), error: None };
                let cut = d.deserialize_option(Cutter { work: work_tx, done: &done_rx, order: &mut order });
                // the work channel is closed (the cutter owned it): workers finish and hang up
                for parsed in done_rx.iter() {
                    order.put(parsed);
                }
                cut?;
                match order.error.take() {
                    Some(e) => {
                        let message = e.message.clone();
                        order.flat.item_error = Some(e);
                        Err(serde::de::Error::custom(message))
                    }
                    None => Ok(()),
                }
            })
        }
    }

    /// Parsed batches, appended in file order; the first error (in file order) is kept.
    struct InOrder<'a> {
        flat: &'a mut Flattened,
        next: usize,
        waiting: std::collections::BTreeMap<usize, Result<Flattened, ItemError>>,
        error: Option<ItemError>,
    }

    impl InOrder<'_> {
        fn put(&mut self, (seq, parsed): Parsed) {
            self.waiting.insert(seq, parsed);
            while let Some(parsed) = self.waiting.remove(&self.next) {
                self.next += 1;
                match parsed {
                    Ok(f) if self.error.is_none() => self.flat.append(f),
                    Ok(_) => {}
                    Err(e) => {
                        self.error.get_or_insert(e);
                    }
                }
            }
        }
    }

    /// Cuts `items` (or `null`) into batches of raw items for the workers.
    struct Cutter<'b, 'a, 'de> {
        work: std::sync::mpsc::SyncSender<(usize, Vec<&'de serde_json::value::RawValue>)>,
        done: &'b std::sync::mpsc::Receiver<Parsed>,
        order: &'b mut InOrder<'a>,
    }

    impl<'de> Visitor<'de> for Cutter<'_, '_, 'de> {
        type Value = ();

        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("a list of items")
        }

        fn visit_none<E>(self) -> Result<(), E> {
            Ok(())
        }

        fn visit_unit<E>(self) -> Result<(), E> {
            Ok(())
        }

        fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
            d.deserialize_seq(self)
        }

        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
            let mut sent = 0;
            let mut batch = Vec::with_capacity(BATCH);
            while let Some(raw) = seq.next_element::<&'de serde_json::value::RawValue>()? {
                batch.push(raw);
                if batch.len() == BATCH {
                    let full = std::mem::replace(&mut batch, Vec::with_capacity(BATCH));
                    if self.work.send((sent, full)).is_err() {
                        break;
                    }
                    sent += 1;
                    // put back what is parsed already, so its memory is reused
                    for parsed in self.done.try_iter() {
                        self.order.put(parsed);
                    }
                }
            }
            if !batch.is_empty() {
                let _ = self.work.send((sent, batch));
            }
            Ok(())
        }
    }

    struct Items<'a>(&'a mut Flattened);

    impl<'de> DeserializeSeed<'de> for Items<'_> {
        type Value = ();
        fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
            d.deserialize_any(DocOrSeq(self.0, None))
        }
    }
}

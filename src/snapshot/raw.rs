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

pub mod stream;

/// One document: an object, a `List`/`*List` with `items`, or an `APIResourceList`.
///
/// Deserialized as a derived struct would be (unknown fields skipped, a repeated field refused),
/// with the body fields of [`BODY_FIELDS`] gathered into `body`.
#[derive(Clone, Default)]
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
    /// That context's namespace (what `-n` defaulted to when the snapshot was taken).
    pub captured_namespace: Option<String>,
    /// The API server URL `kubectl gc snapshot` read from.
    pub captured_server: Option<String>,
    /// The server's version as `kubectl gc snapshot` read it from `/version`: its `gitVersion`
    /// as a string, or the `/version` document itself.
    pub server_version: Option<RawServerVersion>,
    /// What `kubectl gc snapshot` could not read: typed entries with their line, or (a file
    /// written before gaps were typed) the lines alone; each becomes a [`super::Gap`].
    pub incomplete: Option<Vec<Value>>,
    /// The body fields present and not null: kept as JSON text when read by the streaming
    /// reader or as a [`JsonDoc`] (neither builds them), else built. Read for every kind the
    /// reader does not skip; only the kinds in `keeps_body` keep it as their object's body
    /// (shared with it, not copied).
    pub body: Body,
}

impl RawDoc {
    /// A body field by name (one of [`BODY_FIELDS`]); a body kept as text is parsed on first use.
    pub fn body_field(&self, name: &str) -> Option<&Value> {
        self.body.get(name)
    }
}

/// A [`RawDoc`] read from JSON with its body fields kept as text, as the live reader reads
/// API answers: a pod's spec and status cost one string each, not a tree of maps, until some
/// answer reads them (most never are). YAML cannot keep text, so files read [`RawDoc`] itself.
pub struct JsonDoc(pub RawDoc);

impl<'de> Deserialize<'de> for JsonDoc {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_struct("RawDoc", &ALL_FIELDS, DocVisitor { body_as_text: true }).map(JsonDoc)
    }
}

/// The body fields the analysis reads, for the kinds in `keeps_body`; every other field of an
/// object but its metadata is skipped unbuilt. Written once: the readers recognise these keys
/// from this table, and an object's body is built from what they found.
pub const BODY_FIELDS: &[&str] = &[
    "spec",
    "status",                  // conditions, phase, replica counts
    "rules",                   // Roles' and ClusterRoles'
    "roleRef",                 // RoleBindings' and ClusterRoleBindings'
    "subjects",                // RoleBindings' and ClusterRoleBindings'
    "aggregationRule",         // an aggregated ClusterRole's
    "involvedObject",          // a core/v1 Event's: the object it is about
    "regarding",               // an events.k8s.io/v1 Event's: the object it is about
    "reason",                  // an Event's (a CamelCase word, matched on; its message is only quoted)
    "message",                 // a core/v1 Event's
    "note",                    // an events.k8s.io/v1 Event's message
    "type",                    // an Event's (`Normal` or `Warning`)
    "subsets",                 // core/v1 Endpoints': whether a webhook's or APIService's Service has ready backends
    "endpoints",               // discovery.k8s.io/v1 EndpointSlices', read for the same reason
    "lastTimestamp",           // a core/v1 Event's: when it last happened
    "count",                   // a core/v1 Event's: how many times it happened
    "series",                  // an events.k8s.io/v1 Event's (`count`, `lastObservedTime`) when it repeats
    "eventTime",               // an events.k8s.io/v1 Event's (microsecond precision)
    "source",                  // a core/v1 Event's (`component`, `host`)
    "reportingComponent",      // a core/v1 Event's
    "reportingController",     // an events.k8s.io/v1 Event's
    "reportingInstance",       // an Event's: the reporting controller's instance (often its pod), an attribution clue
    "deprecatedCount",         // events.k8s.io/v1: the core/v1 `count` seen through the new API
    "deprecatedLastTimestamp", // events.k8s.io/v1: the core/v1 `lastTimestamp`
    "deprecatedSource",        // events.k8s.io/v1: the core/v1 `source`
    "webhooks",                // Validating- and MutatingWebhookConfigurations: their rules and backends
];

/// The fields of [`RawDoc`] read as themselves, in the order a derived struct would number
/// them (before the body fields).
const HEAD_FIELDS: [&str; 12] = [
    "apiVersion",
    "kind",
    "metadata",
    "items",
    "groupVersion",
    "resources",
    "capturedAt",
    "capturedContext",
    "incomplete",
    "serverVersion",
    "capturedNamespace",
    "capturedServer",
];

/// Every field name [`RawDoc`] reads, as `deserialize_struct` is told them.
const ALL_FIELDS: [&str; HEAD_FIELDS.len() + BODY_FIELDS.len()] = {
    let mut all = [""; HEAD_FIELDS.len() + BODY_FIELDS.len()];
    let mut i = 0;
    while i < all.len() {
        all[i] = if i < HEAD_FIELDS.len() { HEAD_FIELDS[i] } else { BODY_FIELDS[i - HEAD_FIELDS.len()] };
        i += 1;
    }
    all
};

// `DocVisitor` marks the fields it has read in a u64
const _: () = assert!(ALL_FIELDS.len() <= 64);

/// A key of a document, as both readers (this one and [`stream`]) recognise it.
#[derive(Clone, Copy)]
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
    ServerVersion,
    CapturedNamespace,
    CapturedServer,
    /// One of [`BODY_FIELDS`], by index.
    Body(usize),
    Other,
}

impl Field {
    /// The field numbered `i` in [`ALL_FIELDS`] (as formats that name fields by number do).
    fn numbered(i: usize) -> Field {
        const HEAD: [Field; 12] = [
            Field::ApiVersion,
            Field::Kind,
            Field::Metadata,
            Field::Items,
            Field::GroupVersion,
            Field::Resources,
            Field::CapturedAt,
            Field::CapturedContext,
            Field::Incomplete,
            Field::ServerVersion,
            Field::CapturedNamespace,
            Field::CapturedServer,
        ];
        match i.checked_sub(HEAD.len()) {
            None => HEAD[i],
            Some(b) if b < BODY_FIELDS.len() => Field::Body(b),
            Some(_) => Field::Other,
        }
    }

    fn named(key: &str) -> Field {
        match key {
            "apiVersion" => Field::ApiVersion,
            "kind" => Field::Kind,
            "metadata" => Field::Metadata,
            "items" => Field::Items,
            "groupVersion" => Field::GroupVersion,
            "resources" => Field::Resources,
            "capturedAt" => Field::CapturedAt,
            "capturedContext" => Field::CapturedContext,
            "incomplete" => Field::Incomplete,
            "serverVersion" => Field::ServerVersion,
            "capturedNamespace" => Field::CapturedNamespace,
            "capturedServer" => Field::CapturedServer,
            _ => BODY_FIELDS.iter().position(|f| *f == key).map_or(Field::Other, Field::Body),
        }
    }

    /// The field's index in [`ALL_FIELDS`], `None` for an unknown one.
    fn index(self) -> Option<usize> {
        Some(match self {
            Field::ApiVersion => 0,
            Field::Kind => 1,
            Field::Metadata => 2,
            Field::Items => 3,
            Field::GroupVersion => 4,
            Field::Resources => 5,
            Field::CapturedAt => 6,
            Field::CapturedContext => 7,
            Field::Incomplete => 8,
            Field::ServerVersion => 9,
            Field::CapturedNamespace => 10,
            Field::CapturedServer => 11,
            Field::Body(b) => HEAD_FIELDS.len() + b,
            Field::Other => return None,
        })
    }
}

impl<'de> Deserialize<'de> for Field {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = Field;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("field identifier")
            }
            fn visit_u64<E>(self, i: u64) -> Result<Field, E> {
                Ok(usize::try_from(i).map_or(Field::Other, Field::numbered))
            }
            fn visit_str<E>(self, key: &str) -> Result<Field, E> {
                Ok(Field::named(key))
            }
            fn visit_bytes<E>(self, key: &[u8]) -> Result<Field, E> {
                Ok(std::str::from_utf8(key).map_or(Field::Other, Field::named))
            }
        }
        d.deserialize_identifier(V)
    }
}

impl<'de> Deserialize<'de> for RawDoc {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_struct("RawDoc", &ALL_FIELDS, DocVisitor { body_as_text: false })
    }
}

/// Reads a [`RawDoc`] whole (YAML, nested items): every body field is built, or with
/// `body_as_text` (JSON only) kept as text.
struct DocVisitor {
    body_as_text: bool,
}

impl<'de> serde::de::Visitor<'de> for DocVisitor {
    type Value = RawDoc;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("struct RawDoc")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<RawDoc, A::Error> {
        let mut doc = RawDoc::default();
        let mut body: [Option<Value>; BODY_FIELDS.len()] = std::array::from_fn(|_| None);
        let mut text: [Option<Box<RawValue>>; BODY_FIELDS.len()] = std::array::from_fn(|_| None);
        let mut seen = 0u64;
        while let Some(key) = map.next_key::<Field>()? {
            if let Some(i) = key.index() {
                if seen & (1 << i) != 0 {
                    return Err(serde::de::Error::duplicate_field(ALL_FIELDS[i]));
                }
                seen |= 1 << i;
            }
            match key {
                Field::ApiVersion => doc.api_version = map.next_value()?,
                Field::Kind => doc.kind = map.next_value()?,
                Field::Metadata => doc.metadata = map.next_value()?,
                Field::Items => doc.items = map.next_value()?,
                Field::GroupVersion => doc.group_version = map.next_value()?,
                Field::Resources => doc.resources = map.next_value()?,
                Field::CapturedAt => doc.captured_at = map.next_value()?,
                Field::CapturedContext => doc.captured_context = map.next_value()?,
                Field::CapturedNamespace => doc.captured_namespace = map.next_value()?,
                Field::CapturedServer => doc.captured_server = map.next_value()?,
                Field::Incomplete => doc.incomplete = map.next_value()?,
                Field::ServerVersion => doc.server_version = map.next_value()?,
                // (a null one is absent either way)
                Field::Body(b) if self.body_as_text => text[b] = map.next_value()?,
                Field::Body(b) => body[b] = map.next_value()?,
                Field::Other => {
                    map.next_value::<serde::de::IgnoredAny>()?;
                }
            }
        }
        doc.body = if self.body_as_text {
            Body::from_raw(keep_present(text).iter().map(|(k, v)| (*k, &**v)))
        } else {
            built(body)
        };
        Ok(doc)
    }

    /// Fields by position, as a derived struct reads a sequence (missing ones are absent).
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<RawDoc, A::Error> {
        let mut doc = RawDoc::default();
        let mut body: [Option<Value>; BODY_FIELDS.len()] = std::array::from_fn(|_| None);
        macro_rules! next {
            ($($place:expr),*) => {$(
                match seq.next_element()? {
                    Some(v) => $place = v,
                    None => {
                        doc.body = built(body);
                        return Ok(doc);
                    }
                }
            )*};
        }
        next!(
            doc.api_version,
            doc.kind,
            doc.metadata,
            doc.items,
            doc.group_version,
            doc.resources,
            doc.captured_at,
            doc.captured_context,
            doc.incomplete,
            doc.server_version,
            doc.captured_namespace,
            doc.captured_server
        );
        for b in 0..BODY_FIELDS.len() {
            next!(body[b]);
        }
        doc.body = built(body);
        Ok(doc)
    }
}

/// The body fields given, named, in table order.
fn keep_present<T>(body: [Option<T>; BODY_FIELDS.len()]) -> Vec<(&'static str, T)> {
    BODY_FIELDS.iter().zip(body).filter_map(|(k, v)| Some((*k, v?))).collect()
}

/// The body of the built fields given.
fn built(body: [Option<Value>; BODY_FIELDS.len()]) -> Body {
    Body::from_map(keep_present(body).into_iter().map(|(k, v)| (k.to_string(), v)).collect())
}

/// `serverVersion` as a snapshot file records it: the `gitVersion` alone (`"v1.34.2"`), or
/// the whole `/version` document (`gitVersion`, `major`, `minor`, …).
#[derive(Clone, Debug, Deserialize)]
#[serde(untagged)]
pub enum RawServerVersion {
    /// The `gitVersion` string.
    Text(String),
    /// The `/version` document.
    Info {
        /// `gitVersion` (`v1.34.2`).
        #[serde(rename = "gitVersion", default)]
        git_version: Option<String>,
        /// `major` (`1`).
        #[serde(default)]
        major: Option<String>,
        /// `minor` (`34`, or `34+` on some distributions).
        #[serde(default)]
        minor: Option<String>,
    },
}

impl RawServerVersion {
    /// The version as `gitVersion` spells it, made from `major`/`minor` when it is absent.
    pub fn git_version(self) -> Option<String> {
        match self {
            RawServerVersion::Text(s) => Some(s).filter(|s| !s.is_empty()),
            RawServerVersion::Info { git_version: Some(v), .. } if !v.is_empty() => Some(v),
            RawServerVersion::Info { major: Some(a), minor: Some(b), .. } => Some(format!("v{a}.{b}")),
            RawServerVersion::Info { .. } => None,
        }
    }
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

/// Where a `kubectl gc snapshot` file says it was captured.
#[derive(Default, PartialEq)]
struct Captured {
    context: Option<String>,
    namespace: Option<String>,
    server: Option<String>,
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
    /// That context's namespace, as the file recorded it beside the context (none when the
    /// files disagree on either).
    pub captured_namespace: Option<String>,
    /// The API server URL recorded beside the context (none when the files disagree).
    pub captured_server: Option<String>,
    /// Whether two files named different contexts, namespaces or servers (then none is named).
    pub contexts_differ: bool,
    /// The server version a `kubectl gc snapshot` file recorded; files that disagree record none.
    pub server_version: Option<String>,
    /// Whether two files recorded different server versions (then none is kept).
    pub versions_differ: bool,
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
        if other.captured_context.is_some() || other.captured_namespace.is_some() || other.captured_server.is_some() {
            self.record_context(Captured {
                context: other.captured_context,
                namespace: other.captured_namespace,
                server: other.captured_server,
            });
        }
        self.contexts_differ |= other.contexts_differ;
        if let Some(v) = other.server_version {
            self.record_version(v);
        }
        self.versions_differ |= other.versions_differ;
        self.incomplete.append(&mut other.incomplete);
        self.skipped.objects += other.skipped.objects;
        self.skipped.owner_refs += other.skipped.owner_refs;
    }

    fn record_version(&mut self, v: String) {
        match &self.server_version {
            Some(have) if *have != v => {
                self.versions_differ = true;
                self.server_version = None;
            }
            _ if self.versions_differ => {}
            _ => self.server_version = Some(v),
        }
    }

    /// Records where a file was captured: the first file's context, namespace and server,
    /// unless another file names a different one of them (then none at all: a command bound
    /// to either cluster could reach the wrong one).
    fn record_context(&mut self, c: Captured) {
        if self.contexts_differ {
            return;
        }
        let have = Captured {
            context: self.captured_context.clone(),
            namespace: self.captured_namespace.clone(),
            server: self.captured_server.clone(),
        };
        let unset = have == Captured::default();
        if !unset && have != c {
            self.contexts_differ = true;
            self.captured_context = None;
            self.captured_namespace = None;
            self.captured_server = None;
        } else {
            self.captured_context = c.context;
            self.captured_namespace = c.namespace;
            self.captured_server = c.server;
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
            let captured = Captured {
                context: doc.captured_context.take(),
                namespace: doc.captured_namespace.take(),
                server: doc.captured_server.take(),
            };
            if captured != Captured::default() {
                self.record_context(captured);
            }
            if let Some(v) = doc.server_version.take().and_then(RawServerVersion::git_version) {
                self.record_version(v);
            }
            if let Some(inc) = doc.incomplete.take() {
                self.incomplete.extend(inc.into_iter().map(super::Gap::from_json));
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
    let body = if keep_body { doc.body } else { Body::default() };
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

    #[test]
    fn a_doc_read_whole_gathers_its_body_fields_in_table_order_and_refuses_a_repeated_one() {
        let doc: RawDoc = serde_json::from_str(
            r#"{"status":{"phase":"Running"},"apiVersion":"v1","kind":"Pod","type":null,"spec":{"nodeName":"n"},
                "data":{"k":"v"},"metadata":{"name":"p","uid":"1"}}"#,
        )
        .unwrap();
        let names: Vec<_> = doc.body.map().keys().cloned().collect();
        assert_eq!(names, ["spec", "status"], "null and unknown fields are left out");
        assert_eq!(doc.body_field("status").and_then(|s| s.get("phase")), Some(&serde_json::json!("Running")));
        let twice = serde_json::from_str::<RawDoc>(r#"{"spec":{},"kind":"Pod","spec":{}}"#);
        assert!(twice.err().is_some_and(|e| e.to_string().contains("duplicate field `spec`")));
        let twice = serde_json::from_str::<RawDoc>(r#"{"type":"Normal","type":"Warning"}"#);
        assert!(twice.err().is_some_and(|e| e.to_string().contains("duplicate field `type`")));
    }

    #[test]
    fn a_json_doc_keeps_its_body_as_text_and_builds_the_same_object() {
        let json = r#"{"apiVersion":"v1","kind":"Pod","type":null,"status":{"phase":"Running"},
            "spec":{"nodeName":"n","volumes":[{"name":"v"}]},"data":{"k":"v"},"metadata":{"name":"p","uid":"1"}}"#;
        let JsonDoc(text) = serde_json::from_str(json).unwrap();
        assert!(matches!(text.body.json_text(), Some(std::borrow::Cow::Borrowed(_))), "nothing is built");
        let names: Vec<_> = text.body.map().keys().cloned().collect();
        assert_eq!(names, ["spec", "status"], "null and unknown fields are left out");
        assert_eq!(text.body_field("spec").and_then(|s| s.pointer("/volumes/0/name")), Some(&serde_json::json!("v")));
        assert!(text.body_field("type").is_none());
        let whole: RawDoc = serde_json::from_str(json).unwrap();
        let object = |d: RawDoc| {
            let mut f = Flattened::default();
            f.push(d);
            f.objects.pop().unwrap()
        };
        assert_eq!(object(text), object(whole));
        let twice = serde_json::from_str::<JsonDoc>(r#"{"spec":{},"kind":"Pod","spec":{}}"#);
        assert!(twice.err().is_some_and(|e| e.to_string().contains("duplicate field `spec`")));
    }

    #[test]
    fn the_streaming_reader_and_the_whole_reader_build_the_same_objects() {
        use serde::de::DeserializeSeed;
        let json = r#"{"kind":"List","items":[
            {"apiVersion":"v1","kind":"Event","metadata":{"name":"e","uid":"1"},"type":"Warning","reason":"Failed",
             "involvedObject":{"kind":"Pod","name":"p"},"count":3,"message":"m","other":[1,2]},
            {"apiVersion":"rbac.authorization.k8s.io/v1","kind":"RoleBinding","metadata":{"name":"b","uid":"2"},
             "subjects":[{"kind":"ServiceAccount","name":"s","namespace":"x"}],"roleRef":{"kind":"Role","name":"r"}},
            {"apiVersion":"v1","kind":"Secret","metadata":{"name":"s","uid":"3"},"type":"Opaque"}]}"#;
        let whole = flatten(json);
        let mut streamed = Flattened::default();
        stream::Doc(&mut streamed).deserialize(&mut serde_json::Deserializer::from_str(json)).unwrap();
        assert_eq!(whole.objects.len(), 3);
        assert_eq!(whole.objects, streamed.objects);
        assert_eq!(whole.objects[0].body.get("count"), Some(&serde_json::json!(3)));
        assert!(whole.objects[0].body.get("other").is_none());
        assert!(whole.objects[2].body.is_empty());
    }
}

//! One Kubernetes object as the analysis sees it: its metadata in full, and its spec and
//! status only for the kinds whose spec or status some answer reads (`keeps_body`).

use crate::names::{API_SERVICE, CRD};

use std::borrow::Cow;
use std::fmt;

use k8s_openapi::jiff::Timestamp;
use std::sync::{Arc, OnceLock};

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

/// An object's uid. A newtype so a uid never passes for a name.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Uid(pub String);

impl fmt::Display for Uid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl Uid {
    /// The uid as text, e.g. for an owner reference's `uid` or a `--uid` precondition.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// `metadata.ownerReferences[i]`: the four coordinates and the two flags.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct OwnerRef {
    /// The owner's `apiVersion`; with `kind` it says where the GC looks the owner up.
    pub api_version: String,
    /// The owner's `kind`.
    pub kind: String,
    /// The owner's name. A reference has no namespace: a namespaced owner is looked up in the
    /// dependent's namespace.
    pub name: String,
    /// The owner's uid: an existing object under the same name but another uid is not the owner
    /// (the GC treats it as absent).
    pub uid: Uid,
    /// `controller`: at most one reference per object is the managing controller's.
    pub controller: Option<bool>,
    /// `blockOwnerDeletion`: see [`OwnerRef::blocks`].
    pub block_owner_deletion: Option<bool>,
}

impl OwnerRef {
    /// `blockOwnerDeletion: true`: a foreground-deleting owner waits for this dependent.
    pub fn blocks(&self) -> bool {
        self.block_owner_deletion == Some(true)
    }

    /// `controller: true`: this owner is the object's managing controller.
    pub fn is_controller(&self) -> bool {
        self.controller == Some(true)
    }

    /// The API group of the reference's apiVersion ("" for the core group).
    pub fn group(&self) -> &str {
        group_of(&self.api_version)
    }
}

/// Who set which finalizers, read from `metadata.managedFields` (the finalizer list is a set, so
/// server-side apply records a manager for each entry).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FinalizerManager {
    /// The field manager's name (`managedFields[i].manager`), e.g. a controller's binary name.
    pub manager: String,
    /// `Apply` or `Update`.
    pub operation: String,
    /// When that manager last wrote these fields, if recorded.
    pub time: Option<Timestamp>,
    /// The finalizers this entry owns (`f:metadata.f:finalizers.v:"…"`).
    pub finalizers: Vec<String>,
}

/// A snapshot object. `namespace` is `None` for cluster-scoped objects.
#[derive(Clone, Debug, PartialEq)]
pub struct Object {
    /// `apiVersion`, e.g. `apps/v1`.
    pub api_version: String,
    /// `kind`, e.g. `Deployment`.
    pub kind: String,
    /// `metadata.namespace`; `None` for cluster-scoped objects.
    pub namespace: Option<String>,
    /// `metadata.name`.
    pub name: String,
    /// `metadata.uid`: the identity owner references point at.
    pub uid: Uid,
    /// `metadata.resourceVersion`, kept so a printed patch can be made conditional on it.
    pub resource_version: Option<String>,
    /// `metadata.creationTimestamp`.
    pub creation_timestamp: Option<Timestamp>,
    /// `metadata.deletionTimestamp`: set when deletion was requested; the object stays until its
    /// finalizers are gone.
    pub deletion_timestamp: Option<Timestamp>,
    /// `metadata.deletionGracePeriodSeconds`: a pod's grace period, so the deletion was
    /// requested this long before `deletion_timestamp`.
    pub deletion_grace_period_seconds: Option<i64>,
    /// `metadata.finalizers`, in order.
    pub finalizers: Vec<String>,
    /// `metadata.ownerReferences`, in order.
    pub owner_references: Vec<OwnerRef>,
    /// Labels, sorted by key; kept only for the kinds in [`keeps_body`].
    pub labels: Vec<(String, String)>,
    /// Who set which finalizers (from `managedFields`), the evidence for who removes them.
    pub finalizer_managers: Vec<FinalizerManager>,
    /// Top-level fields other than apiVersion, kind and metadata (spec, status, rules, …),
    /// kept only where `keeps_body` says the analysis reads them. Secrets never keep theirs.
    pub body: Body,
}

/// An object's kept body. Read from JSON it stays JSON text until a field of it is asked
/// for: most bodies (every pod's of a million) are never read, and as text one costs one
/// allocation rather than a tree of maps. The text is shared: a live read's document and the
/// object made of it hold the same one.
#[derive(Clone, Default)]
pub struct Body {
    /// `{"spec":…,"status":…}`, or none when the body came parsed (YAML) or is empty.
    text: Option<Arc<str>>,
    parsed: OnceLock<Box<Map<String, Value>>>,
}

impl Body {
    /// A body from its top-level fields' JSON texts (as read, so already valid JSON).
    pub fn from_raw<'a>(fields: impl IntoIterator<Item = (&'a str, &'a RawValue)>) -> Body {
        let mut text = String::new();
        for (key, raw) in fields {
            text.push(if text.is_empty() { '{' } else { ',' });
            // keys are field names of our own (spec, roleRef, …): nothing to escape
            text.push('"');
            text.push_str(key);
            text.push_str("\":");
            text.push_str(raw.get());
        }
        if text.is_empty() {
            return Body::default();
        }
        text.push('}');
        Body { text: Some(Arc::from(text)), parsed: OnceLock::new() }
    }

    /// A body from already-parsed top-level fields (YAML).
    pub fn from_map(map: Map<String, Value>) -> Body {
        let parsed = OnceLock::new();
        if !map.is_empty() {
            let _ = parsed.set(Box::new(map));
        }
        Body { text: None, parsed }
    }

    /// The body's top-level fields, parsed on first use and kept; empty when there is none.
    pub fn map(&self) -> &Map<String, Value> {
        static EMPTY: OnceLock<Map<String, Value>> = OnceLock::new();
        let Some(text) = &self.text else {
            return self.parsed.get().map(|m| &**m).unwrap_or_else(|| EMPTY.get_or_init(Map::new));
        };
        // the text was JSON when read; should it fail anyway, the body reads as empty
        self.parsed.get_or_init(|| Box::new(serde_json::from_str(text).unwrap_or_default()))
    }

    /// True when no body was kept (most kinds keep none).
    pub fn is_empty(&self) -> bool {
        self.text.is_none() && self.parsed.get().is_none_or(|m| m.is_empty())
    }

    /// The body read into a type that takes only what it needs; nothing parsed is kept.
    /// A body that does not fit the type reads as its default.
    pub fn read<T: DeserializeOwned + Default>(&self) -> T {
        if let Some(text) = &self.text
            && self.parsed.get().is_none()
        {
            return serde_json::from_str(text).unwrap_or_default();
        }
        T::deserialize(&Value::Object(self.map().clone())).unwrap_or_default()
    }

    /// The body as a JSON object's text (`{"spec":…}`), a body kept as text as it is (not
    /// parsed); none when there is no body.
    pub fn json_text(&self) -> Option<Cow<'_, str>> {
        if let Some(text) = &self.text {
            return Some(Cow::Borrowed(text));
        }
        let map = self.parsed.get().filter(|m| !m.is_empty())?;
        serde_json::to_string(map).ok().map(Cow::Owned)
    }

    /// One top-level field (`spec`, `status`, …) of the body.
    pub fn get(&self, key: &str) -> Option<&Value> {
        if self.is_empty() {
            return None;
        }
        self.map().get(key)
    }
}

impl PartialEq for Body {
    fn eq(&self, other: &Body) -> bool {
        // the same text is the same body, without parsing either (a watch compares every
        // object it keeps on each change: `Graph::grow_to`)
        if let (Some(a), Some(b)) = (&self.text, &other.text)
            && a == b
        {
            return true;
        }
        self.map() == other.map()
    }
}

impl fmt::Debug for Body {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.map().fmt(f)
    }
}

impl Object {
    /// The API group of `apiVersion` ("" for the core group).
    pub fn group(&self) -> &str {
        group_of(&self.api_version)
    }

    /// The version of `apiVersion`, e.g. `v1`.
    pub fn version(&self) -> &str {
        version_of(&self.api_version)
    }

    /// True when `metadata.deletionTimestamp` is set.
    pub fn is_deleting(&self) -> bool {
        self.deletion_timestamp.is_some()
    }

    /// When the deletion was requested: `deletionTimestamp` is the *end* of a graceful
    /// deletion's grace period (a pod's), so the request came `deletionGracePeriodSeconds`
    /// before it; for everything else the two are the same.
    pub fn deletion_requested_at(&self) -> Option<Timestamp> {
        let dt = self.deletion_timestamp?;
        let grace = self.deletion_grace_period_seconds.unwrap_or(0).max(0);
        Some(Timestamp::from_second(dt.as_second() - grace).unwrap_or(dt))
    }

    /// Seconds left of the grace period at `now` (`deletionTimestamp` still ahead); `None` when
    /// not deleting or the grace period is over.
    pub fn grace_left(&self, now: Timestamp) -> Option<i64> {
        let left = self.deletion_timestamp?.as_second() - now.as_second();
        (left > 0).then_some(left)
    }

    /// The value of label `key`, if the object kept its labels.
    pub fn label(&self, key: &str) -> Option<&str> {
        self.labels.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
    }

    /// True when `name` is in `metadata.finalizers`.
    pub fn has_finalizer(&self, name: &str) -> bool {
        self.finalizers.iter().any(|f| f == name)
    }

    /// The namespace, or "" for a cluster-scoped object (how the API paths and the GC spell it).
    pub fn namespace_str(&self) -> &str {
        self.namespace.as_deref().unwrap_or("")
    }

    /// A field of the kept body, by a JSON pointer such as `/status/phase`.
    pub fn field(&self, pointer: &str) -> Option<&Value> {
        let rest = pointer.strip_prefix('/')?;
        let (first, tail) = match rest.split_once('/') {
            Some((a, b)) => (a, Some(b)),
            None => (rest, None),
        };
        let top = self.body.get(first)?;
        match tail {
            Some(t) => top.pointer(&format!("/{t}")),
            None => Some(top),
        }
    }

    /// A string field of the kept body by JSON pointer; `None` when absent or not a string.
    pub fn str_field(&self, pointer: &str) -> Option<&str> {
        self.field(pointer).and_then(|v| v.as_str())
    }

    /// `status.conditions[type=…]` as (status, reason, message).
    pub fn condition(&self, type_: &str) -> Option<Condition<'_>> {
        self.field("/status/conditions")?
            .as_array()?
            .iter()
            .find(|c| c.get("type").and_then(|t| t.as_str()) == Some(type_))
            .map(|c| Condition {
                status: c.get("status").and_then(|v| v.as_str()).unwrap_or(""),
                reason: c.get("reason").and_then(|v| v.as_str()).unwrap_or(""),
                message: c.get("message").and_then(|v| v.as_str()).unwrap_or(""),
                last_transition_time: c.get("lastTransitionTime").and_then(|v| v.as_str()).and_then(|s| s.parse().ok()),
            })
    }
}

/// One status condition, borrowed from the object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Condition<'a> {
    /// `True`, `False` or `Unknown`, as written.
    pub status: &'a str,
    /// The machine-readable reason, the thing to match on.
    pub reason: &'a str,
    /// The human message: quote it, never match on it (its wording changes between releases).
    pub message: &'a str,
    /// `lastTransitionTime`, when present and parseable.
    pub last_transition_time: Option<Timestamp>,
}

impl Condition<'_> {
    /// `status: "True"`.
    pub fn is_true(&self) -> bool {
        self.status == "True"
    }
}

/// The group of an apiVersion: `apps/v1` → `apps`, `v1` → "".
pub fn group_of(api_version: &str) -> &str {
    match api_version.rsplit_once('/') {
        Some((g, _)) => g,
        None => "",
    }
}

/// The version of an apiVersion: `apps/v1` → `v1`, `v1` → `v1`.
pub fn version_of(api_version: &str) -> &str {
    match api_version.rsplit_once('/') {
        Some((_, v)) => v,
        None => api_version,
    }
}

/// Whether the analysis reads this kind's spec or status; everything else is kept
/// metadata-only, as the live path lists it.
pub fn keeps_body(group: &str, kind: &str) -> bool {
    matches!(
        (group, kind),
        ("", "Namespace")
            | ("", "Node")
            | ("", "Pod")
            | ("", "PersistentVolumeClaim")
            | ("", "PersistentVolume")
            | ("", "Service")
            | ("", "Endpoints")
            | ("", "Event")
            | ("", "ServiceAccount")
            | ("events.k8s.io", "Event")
            | ("coordination.k8s.io", "Lease")
            | CRD
            | API_SERVICE
            | ("apps", "Deployment")
            | ("apps", "StatefulSet")
            | ("apps", "DaemonSet")
            | ("apps", "ReplicaSet")
            | ("rbac.authorization.k8s.io", "Role")
            | ("rbac.authorization.k8s.io", "ClusterRole")
            | ("rbac.authorization.k8s.io", "RoleBinding")
            | ("rbac.authorization.k8s.io", "ClusterRoleBinding")
            | ("discovery.k8s.io", "EndpointSlice")
            | ("storage.k8s.io", "VolumeAttachment")
            | ("resource.k8s.io", "ResourceClaim")
            | ("resource.k8s.io", "ResourceSlice")
            | ("admissionregistration.k8s.io", "ValidatingWebhookConfiguration")
            | ("admissionregistration.k8s.io", "MutatingWebhookConfiguration")
            | ("admissionregistration.k8s.io", "ValidatingAdmissionPolicy")
            | ("admissionregistration.k8s.io", "ValidatingAdmissionPolicyBinding")
            | ("admissionregistration.k8s.io", "MutatingAdmissionPolicy")
            | ("admissionregistration.k8s.io", "MutatingAdmissionPolicyBinding")
    )
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_body_is_written_as_its_text_without_being_parsed_or_from_its_map() {
        let spec: Box<RawValue> = serde_json::from_str(r#"{"nodeName": "n"}"#).unwrap();
        let text = Body::from_raw([("spec", &*spec)]);
        assert!(matches!(text.json_text(), Some(Cow::Borrowed(r#"{"spec":{"nodeName": "n"}}"#))));
        assert!(text.parsed.get().is_none(), "writing a text body does not parse it");
        let map = Body::from_map(json!({"spec": {"nodeName": "n"}}).as_object().unwrap().clone());
        assert_eq!(map.json_text().as_deref(), Some(r#"{"spec":{"nodeName":"n"}}"#));
        assert_eq!(text, map);
        assert!(Body::from_raw([]).json_text().is_none() && Body::from_map(Map::new()).json_text().is_none());
    }
}

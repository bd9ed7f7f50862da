//! The REST mapper: kind ↔ resource ↔ scope and served versions, and the `TYPE` argument.
//!
//! Sources, strongest first (contract §3): the snapshot's discovery data (`APIResourceList`),
//! its CustomResourceDefinitions, the built-in types. A group/kind known by none of them, or
//! an apiVersion none of them serves, is *unresolvable*, as the GC's REST mapping fails.

use crate::names::CRD;

pub mod builtin;

use std::collections::HashMap;

use crate::snapshot::object::{group_of, version_of};
use crate::snapshot::{Gap, Missing, Resource, Snapshot};

/// Where a resource's mapping came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Origin {
    /// From the server's or the snapshot's discovery documents (`APIResourceList`): authoritative.
    Discovery,
    /// From a CustomResourceDefinition in the snapshot (its `spec.names`, scope and served versions).
    CustomResourceDefinition,
    /// From the plugin's table of built-in Kubernetes types (`discovery::builtin`).
    Builtin,
    /// Known only from objects of the kind present in the snapshot (`kubectl get site alpha
    /// -o yaml` saved without its CRD): the scope and versions are inferred from them, the
    /// plural guessed as kubectl's `UnsafeGuessKindToResource` does.
    Inferred,
}

/// One resource type (group + kind), with every version served.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResourceType {
    /// The API group; "" for the core group.
    pub group: String,
    /// The kind, e.g. `ReplicaSet`.
    pub kind: String,
    /// The resource name in URLs, e.g. `replicasets`.
    pub plural: String,
    /// The singular name kubectl accepts, e.g. `replicaset`.
    pub singular: String,
    /// Short names kubectl accepts, e.g. `rs`.
    pub short_names: Vec<String>,
    /// True when objects live in a namespace; decides the URL and whether an owner reference
    /// across namespaces is valid.
    pub namespaced: bool,
    /// Served versions, preferred first.
    pub versions: Vec<String>,
    /// The verbs the server allows on the resource (`list`, `delete`, …); empty when unknown.
    pub verbs: Vec<String>,
    /// Where this mapping came from.
    pub origin: Origin,
}

impl ResourceType {
    /// The apiVersion of the preferred served version (`v1` when none is known).
    pub fn preferred_api_version(&self) -> String {
        api_version(&self.group, self.versions.first().map(String::as_str).unwrap_or("v1"))
    }

    /// `pods`, `deployments.apps`: the form kubectl prints and takes.
    pub fn qualified_plural(&self) -> String {
        if self.group.is_empty() { self.plural.clone() } else { format!("{}.{}", self.plural, self.group) }
    }

    /// True when `version` is among the served versions.
    pub fn serves(&self, version: &str) -> bool {
        self.versions.iter().any(|v| v == version)
    }
}

/// `group/version`, or just `version` for the core group.
pub fn api_version(group: &str, version: &str) -> String {
    if group.is_empty() { version.to_string() } else { format!("{group}/{version}") }
}

/// Why an apiVersion/kind does not map (the GC's restMappingError).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Unresolvable {
    /// No source knows this group and kind.
    UnknownKind,
    /// The group and kind are known, but not at this version.
    VersionNotServed {
        /// The versions that are served, preferred first.
        served: Vec<String>,
    },
    /// The apiVersion does not parse as `[group/]version`.
    MalformedApiVersion,
}

impl std::fmt::Display for Unresolvable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unresolvable::UnknownKind => f.write_str("no served API has this kind"),
            Unresolvable::VersionNotServed { served } => {
                write!(f, "this version is not served (served: {})", served.join(", "))
            }
            Unresolvable::MalformedApiVersion => f.write_str("the apiVersion is malformed"),
        }
    }
}

/// Why a TYPE argument did not name exactly one resource.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ResolveError {
    #[error("the server doesn't have a resource type \"{0}\"")]
    /// The argument names no resource type (kubectl's wording).
    Unknown(String),
    #[error("resource type \"{arg}\" is ambiguous: it matches {}", .candidates.join(", "))]
    /// The argument matches more than one resource type (e.g. a short name two CRDs share).
    Ambiguous {
        /// The argument as typed.
        arg: String,
        /// Each match, as a qualified plural (`sites.a.example`).
        candidates: Vec<String>,
    },
}

/// kind ↔ resource ↔ scope for every type the snapshot or the built-in table knows.
#[derive(Clone, Debug, Default)]
pub struct RestMapper {
    types: Vec<ResourceType>,
    by_group_kind: HashMap<(String, String), usize>,
}

impl RestMapper {
    /// The mapper for a snapshot: its discovery data, then its CRDs, then the built-in table, then
    /// kinds inferred from its objects.
    pub fn from_snapshot(snapshot: &Snapshot) -> RestMapper {
        let mut m = RestMapper::default();
        for list in &snapshot.resource_lists {
            let (group, version) = (group_of(&list.group_version), version_of(&list.group_version));
            for r in &list.resources {
                if r.plural.contains('/') {
                    continue; // a subresource
                }
                let group = r.group.as_deref().unwrap_or(group);
                let version = r.version.as_deref().unwrap_or(version);
                m.add(ResourceType {
                    group: group.to_string(),
                    kind: r.kind.clone(),
                    plural: r.plural.clone(),
                    singular: r.singular.clone().unwrap_or_else(|| r.kind.to_lowercase()),
                    short_names: r.short_names.clone(),
                    namespaced: r.namespaced,
                    versions: vec![version.to_string()],
                    verbs: r.verbs.clone(),
                    origin: Origin::Discovery,
                });
            }
        }
        for crd in snapshot.objects.iter().filter(|o| (o.group(), o.kind.as_str()) == CRD) {
            if let Some(t) = crd_type(crd) {
                m.add(t);
            }
        }
        for b in builtin::BUILTINS {
            let short = builtin::SHORT_NAMES
                .iter()
                .find(|(g, p, _)| *g == b.group && *p == b.plural)
                .map(|(_, _, s)| s.iter().map(|s| s.to_string()).collect())
                .unwrap_or_default();
            m.add(ResourceType {
                group: b.group.to_string(),
                kind: b.kind.to_string(),
                plural: b.plural.to_string(),
                singular: b.kind.to_lowercase(),
                short_names: short,
                namespaced: b.namespaced,
                versions: vec![b.version.to_string()],
                verbs: ["get", "list", "watch", "delete"].map(String::from).to_vec(),
                origin: Origin::Builtin,
            });
        }
        m.infer_from_objects(snapshot);
        for t in &mut m.types {
            t.versions.sort_by_key(|v| std::cmp::Reverse(version_priority(v)));
            t.versions.dedup();
        }
        m
    }

    /// Adds a type, or another version of a type already known from the same source; a
    /// weaker source never overrides a stronger one.
    fn add(&mut self, t: ResourceType) {
        let key = (t.group.clone(), t.kind.clone());
        match self.by_group_kind.get(&key) {
            Some(&i) => {
                let known = &mut self.types[i];
                if known.origin == t.origin {
                    for v in t.versions {
                        if !known.versions.contains(&v) {
                            known.versions.push(v);
                        }
                    }
                }
            }
            None => {
                self.by_group_kind.insert(key, self.types.len());
                self.types.push(t);
            }
        }
    }

    /// Kinds no other source knows, taken from the objects of the snapshot: an object of a kind
    /// was served when it was read, so its kind can be named and mapped, but its scope (from the
    /// objects' namespaces) and its versions (their apiVersions) are inferred, and say so
    /// ([`RestMapper::inferred`]).
    fn infer_from_objects(&mut self, snapshot: &Snapshot) {
        // one lookup per object, without allocating: None = known from a stronger source
        let mut seen: rustc_hash::FxHashMap<(&str, &str), Option<usize>> = Default::default();
        for o in &snapshot.objects {
            let key = (o.group(), o.kind.as_str());
            let slot = match seen.get(&key) {
                Some(slot) => *slot,
                None => {
                    let slot = if self.kind(key.0, key.1).is_some() || key.1.is_empty() {
                        None
                    } else {
                        let singular = key.1.to_lowercase();
                        let plural = match singular.as_bytes().last() {
                            Some(b's') => format!("{singular}es"),
                            Some(b'y') => format!("{}ies", &singular[..singular.len() - 1]),
                            _ => format!("{singular}s"),
                        };
                        self.add(ResourceType {
                            group: key.0.to_string(),
                            kind: key.1.to_string(),
                            plural,
                            singular,
                            short_names: Vec::new(),
                            namespaced: false,
                            versions: Vec::new(),
                            verbs: Vec::new(),
                            origin: Origin::Inferred,
                        });
                        Some(self.types.len() - 1)
                    };
                    seen.insert(key, slot);
                    slot
                }
            };
            if let Some(i) = slot {
                let t = &mut self.types[i];
                t.namespaced |= o.namespace.is_some();
                let v = version_of(&o.api_version);
                if !v.is_empty() && !t.versions.iter().any(|x| x == v) {
                    t.versions.push(v.to_string());
                }
            }
        }
    }

    /// The kinds whose scope and versions were inferred from the objects present.
    pub fn inferred(&self) -> impl Iterator<Item = &ResourceType> {
        self.types.iter().filter(|t| t.origin == Origin::Inferred)
    }

    /// What an answer must say about an inferred kind (a warning, and an `incomplete` entry).
    pub fn inferred_gap(t: &ResourceType) -> Gap {
        let what = Missing::Scope {
            resource: Resource::new(&t.group, "", &t.plural),
            namespaced: t.namespaced,
            versions: t.versions.clone(),
        };
        Gap::new(what, "")
    }

    /// Every known type, in the mapper's order.
    pub fn types(&self) -> &[ResourceType] {
        &self.types
    }

    /// The type of a group and kind, whatever the version.
    pub fn kind(&self, group: &str, kind: &str) -> Option<&ResourceType> {
        // A borrowed lookup without allocating would need a raw-entry API; this is cold enough.
        self.by_group_kind.get(&(group.to_string(), kind.to_string())).map(|&i| &self.types[i])
    }

    /// The GC's REST mapping of an owner reference's apiVersion and kind.
    pub fn rest_mapping(&self, api_version: &str, kind: &str) -> Result<&ResourceType, Unresolvable> {
        let version = version_of(api_version);
        if version.is_empty() || api_version.matches('/').count() > 1 || group_of(api_version).ends_with('/') {
            return Err(Unresolvable::MalformedApiVersion);
        }
        let t = self.kind(group_of(api_version), kind).ok_or(Unresolvable::UnknownKind)?;
        if t.serves(version) { Ok(t) } else { Err(Unresolvable::VersionNotServed { served: t.versions.clone() }) }
    }

    /// Resolves a TYPE argument as kubectl does: kind, plural, singular or short name,
    /// case-insensitive, optionally qualified as `resource.group` or `resource.version.group`.
    /// Among several groups the core group wins, as kubectl's shortcut expander prefers it.
    pub fn resolve(&self, arg: &str) -> Result<&ResourceType, ResolveError> {
        let lower = arg.to_lowercase();
        let named = |t: &ResourceType, n: &str| {
            t.plural == n || t.singular == n || t.kind.to_lowercase() == n || t.short_names.iter().any(|s| s == n)
        };
        let mut found: Vec<&ResourceType> = self.types.iter().filter(|t| named(t, &lower)).collect();
        if found.is_empty()
            && let Some((name, rest)) = lower.split_once('.')
        {
            found = self
                .types
                .iter()
                .filter(|t| named(t, name))
                .filter(|t| {
                    t.group == rest
                        || rest
                            .split_once('.')
                            .is_some_and(|(v, g)| t.group == g && looks_like_version(v) && t.serves(v))
                        || (looks_like_version(rest) && t.group.is_empty() && t.serves(rest))
                })
                .collect();
        }
        if found.len() > 1 {
            let core: Vec<_> = found.iter().copied().filter(|t| t.group.is_empty()).collect();
            if core.len() == 1 {
                found = core;
            }
        }
        match found.as_slice() {
            [one] => Ok(one),
            [] => Err(ResolveError::Unknown(arg.to_string())),
            many => {
                let mut candidates: Vec<String> = many.iter().map(|t| t.qualified_plural()).collect();
                candidates.sort();
                Err(ResolveError::Ambiguous { arg: arg.to_string(), candidates })
            }
        }
    }
}

fn crd_type(crd: &crate::snapshot::Object) -> Option<ResourceType> {
    let spec = crd.field("/spec")?;
    let names = spec.get("names")?;
    let s = |v: &serde_json::Value, k: &str| v.get(k).and_then(|x| x.as_str()).map(str::to_string);
    let kind = s(names, "kind")?;
    let plural = s(names, "plural")?;
    let versions: Vec<String> = spec
        .get("versions")
        .and_then(|v| v.as_array())
        .map(|vs| {
            vs.iter()
                .filter(|v| v.get("served").and_then(|b| b.as_bool()).unwrap_or(true))
                .filter_map(|v| s(v, "name"))
                .collect()
        })
        .or_else(|| s(spec, "version").map(|v| vec![v]))
        .unwrap_or_default();
    Some(ResourceType {
        group: s(spec, "group")?,
        singular: s(names, "singular").unwrap_or_else(|| kind.to_lowercase()),
        short_names: names
            .get("shortNames")
            .and_then(|v| v.as_array())
            .map(|a| a.iter().filter_map(|x| x.as_str().map(str::to_string)).collect())
            .unwrap_or_default(),
        namespaced: s(spec, "scope").as_deref() != Some("Cluster"),
        kind,
        plural,
        versions,
        verbs: ["get", "list", "watch", "delete"].map(String::from).to_vec(),
        origin: Origin::CustomResourceDefinition,
    })
}

fn looks_like_version(v: &str) -> bool {
    v.strip_prefix('v').is_some_and(|r| r.starts_with(|c: char| c.is_ascii_digit()))
}

/// Kubernetes version priority: GA over beta over alpha, then the higher number
/// (`v2` > `v1` > `v1beta2` > `v1beta1` > `v1alpha1`), then anything else.
pub fn version_priority(v: &str) -> (u8, u32, u32) {
    let Some(rest) = v.strip_prefix('v') else { return (0, 0, 0) };
    let digits: String = rest.chars().take_while(|c| c.is_ascii_digit()).collect();
    let Ok(major) = digits.parse::<u32>() else { return (0, 0, 0) };
    let tail = &rest[digits.len()..];
    let (level, minor) = if tail.is_empty() {
        (3, 0)
    } else if let Some(n) = tail.strip_prefix("beta") {
        (2, n.parse().unwrap_or(0))
    } else if let Some(n) = tail.strip_prefix("alpha") {
        (1, n.parse().unwrap_or(0))
    } else {
        return (0, 0, 0);
    };
    (level, major, minor)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mapper() -> RestMapper {
        RestMapper::from_snapshot(&Snapshot::default())
    }

    #[test]
    fn builtin_table_comes_from_k8s_openapi() {
        let m = mapper();
        let pod = m.kind("", "Pod").unwrap();
        assert_eq!((pod.plural.as_str(), pod.namespaced), ("pods", true));
        assert!(!m.kind("", "Namespace").unwrap().namespaced);
        assert!(!m.kind("rbac.authorization.k8s.io", "ClusterRole").unwrap().namespaced);
        assert!(m.kind("apiextensions.k8s.io", "CustomResourceDefinition").is_some());
        assert_eq!(m.kind("autoscaling", "HorizontalPodAutoscaler").unwrap().versions, ["v2", "v1"]);
    }

    #[test]
    fn resolves_kubectl_type_forms() {
        let m = mapper();
        for arg in
            ["deploy", "Deployment", "deployments", "deployment", "deployments.apps", "deployments.v1.apps", "DEPLOY"]
        {
            assert_eq!(m.resolve(arg).unwrap().kind, "Deployment", "{arg}");
        }
        assert_eq!(m.resolve("rs").unwrap().kind, "ReplicaSet");
        assert_eq!(m.resolve("ns").unwrap().kind, "Namespace");
        assert_eq!(m.resolve("po").unwrap().kind, "Pod");
        assert_eq!(m.resolve("crd").unwrap().kind, "CustomResourceDefinition");
        // events exist in the core group and in events.k8s.io: core wins, as in kubectl
        assert_eq!(m.resolve("events").unwrap().group, "");
        assert_eq!(m.resolve("events.events.k8s.io").unwrap().group, "events.k8s.io");
        assert!(matches!(m.resolve("deployments.v1beta1.apps"), Err(ResolveError::Unknown(_))));
        assert!(matches!(m.resolve("nosuchthing"), Err(ResolveError::Unknown(_))));
    }

    #[test]
    fn rest_mapping_rejects_unserved_versions_and_unknown_kinds() {
        let m = mapper();
        assert!(m.rest_mapping("apps/v1", "Deployment").is_ok());
        assert!(matches!(m.rest_mapping("extensions/v1beta1", "Deployment"), Err(Unresolvable::UnknownKind)));
        assert!(matches!(m.rest_mapping("apps/v1beta1", "Deployment"), Err(Unresolvable::VersionNotServed { .. })));
        assert!(matches!(m.rest_mapping("test/v1", "invalid0"), Err(Unresolvable::UnknownKind)));
        assert!(matches!(m.rest_mapping("a/b/c", "Pod"), Err(Unresolvable::MalformedApiVersion)));
        assert!(matches!(m.rest_mapping("", "Pod"), Err(Unresolvable::MalformedApiVersion)));
    }

    #[test]
    fn version_priority_orders_like_kubernetes() {
        let mut v = vec!["v1alpha1", "v1", "v2beta1", "v1beta2", "v2", "foo"];
        v.sort_by_key(|x| std::cmp::Reverse(version_priority(x)));
        assert_eq!(v, ["v2", "v1", "v2beta1", "v1beta2", "v1alpha1", "foo"]);
    }

    #[test]
    fn kinds_known_only_from_objects_are_inferred_with_their_scope_and_versions() {
        use crate::testing::obj;
        let s = crate::testing::snapshot(vec![
            obj("own.labhub.io/v1", "Site", Some("labs"), "a", "1"),
            obj("own.labhub.io/v2", "Site", None, "b", "2"),
            obj("x.io/v1", "NetworkPolicy", None, "c", "3"),
            obj("x.io/v1", "Class", None, "d", "4"),
            obj("v1", "ConfigMap", Some("a"), "e", "5"),
        ]);
        let m = RestMapper::from_snapshot(&s);
        let site = m.resolve("sites.own.labhub.io").unwrap();
        assert_eq!((site.namespaced, site.origin), (true, Origin::Inferred));
        assert_eq!(site.versions, ["v2", "v1"]);
        assert!(!m.resolve("networkpolicies.x.io").unwrap().namespaced);
        assert_eq!(m.resolve("classes.x.io").unwrap().kind, "Class");
        assert_eq!(m.inferred().count(), 3, "built-in kinds are not inferred");
        assert!(m.rest_mapping("own.labhub.io/v1", "Site").is_ok());
        assert!(m.rest_mapping("own.labhub.io/v3", "Site").is_err());
    }
}

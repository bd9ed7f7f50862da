//! What could not be read, typed: what is missing and why, so that code asks "were the CRDs
//! listed?" of the data rather than of a sentence. `Display` is the line people read (and the
//! `line` a snapshot file keeps beside the typed fields, for people and for older readers).
//!
//! In a snapshot file each `incomplete` entry is an object:
//! `{"what": {"read": "list", "group": "apps", "version": "v1", "resource": "deployments",
//! "namespace": "labs"}, "why": "forbidden (403)", "line": "deployments.apps in namespace …"}`.
//! A file written before gaps were typed holds the lines alone (strings); they come back as
//! [`Missing::Recorded`] and are judged conservatively: nothing parses their words.

use std::fmt;

use serde_json::{Map, Value, json};

/// One thing that could not be read, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Gap {
    /// What could not be read.
    pub what: Missing,
    /// Why, in a short phrase (`forbidden (403)`, `no answer within 5s`); empty for
    /// [`Missing::Recorded`].
    pub why: String,
}

/// An API resource as the server serves it: what a request for it names.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Resource {
    /// The API group; "" for the core group.
    pub group: String,
    /// The version it was read in; "" when unknown.
    pub version: String,
    /// The resource name in URLs (`deployments`).
    pub resource: String,
}

impl Resource {
    /// A resource of `group` (`""` for the core group), `version` and plural `resource`.
    pub fn new(group: impl Into<String>, version: impl Into<String>, resource: impl Into<String>) -> Resource {
        Resource { group: group.into(), version: version.into(), resource: resource.into() }
    }

    /// The resource as kubectl names it: `pods`, `deployments.apps`.
    pub fn qualified(&self) -> String {
        if self.group.is_empty() { self.resource.clone() } else { format!("{}.{}", self.resource, self.group) }
    }
}

/// What is missing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Missing {
    /// The types an API group version serves.
    Discovery {
        /// The API group; "" for the core group.
        group: String,
        /// The version.
        version: String,
    },
    /// A resource's list, in one namespace or everywhere.
    List {
        /// What was listed.
        resource: Resource,
        /// The namespace listed; `None` for all namespaces or a cluster-scoped type.
        namespace: Option<String>,
    },
    /// Objects of a resource in full (one named, or the ones wanted of a list).
    Bodies {
        /// What was read.
        resource: Resource,
        /// The namespace read in; `None` for all namespaces or a cluster-scoped type.
        namespace: Option<String>,
        /// The object, when one was read by name; `None` for the objects of a list.
        name: Option<String>,
    },
    /// The managedFields of objects of a resource, read again after a list left them out.
    ManagedFields {
        /// What was read.
        resource: Resource,
        /// The namespace read in; `None` for all namespaces or a cluster-scoped type.
        namespace: Option<String>,
        /// The object, when one was read by name; `None` for the whole list.
        name: Option<String>,
    },
    /// A kind the input gives no discovery data or CRD for: its scope and served versions
    /// were inferred from the objects present (nothing was left unread; the mapping is a guess).
    Scope {
        /// The resource (its plural guessed as kubectl does; no version).
        resource: Resource,
        /// What was inferred: namespaced when any of its objects has a namespace.
        namespaced: bool,
        /// The versions its objects carry.
        versions: Vec<String>,
    },
    /// A line of a snapshot file's `incomplete` list, without typed fields (a file written
    /// before gaps were typed, or by a newer reader with a kind of gap this one does not know).
    Recorded(String),
}

impl Gap {
    /// A gap of `what`, for the reason `why`.
    pub fn new(what: Missing, why: impl Into<String>) -> Gap {
        Gap { what, why: why.into() }
    }

    /// A line read back from a snapshot file.
    pub fn recorded(line: impl Into<String>) -> Gap {
        Gap { what: Missing::Recorded(line.into()), why: String::new() }
    }

    /// Whether this is the failed list of `resource` (as kubectl names it), in any namespace.
    pub fn is_list_of(&self, qualified: &str) -> bool {
        matches!(&self.what, Missing::List { resource, .. } if resource.qualified() == qualified)
    }

    /// Whether the objects of `resource` in `group` (any resource of the group when `None`)
    /// in `namespace` (anywhere when `None`) may be among what this gap left unread: a failed
    /// list or full read of it there or everywhere, or the failed discovery of its group.
    ///
    /// managedFields and inferred scopes hide no object. A [`Missing::Recorded`] line may hide
    /// anything: its words are for people, and reading a verdict out of them would let a
    /// reworded message change it, so an absence is never trusted beside one.
    pub fn may_hide(&self, group: &str, resource: Option<&str>, namespace: Option<&str>) -> bool {
        let here = |ns: &Option<String>| ns.is_none() || namespace.is_none() || ns.as_deref() == namespace;
        match &self.what {
            Missing::Discovery { group: g, .. } => g == group,
            Missing::List { resource: r, namespace: ns } | Missing::Bodies { resource: r, namespace: ns, .. } => {
                r.group == group && resource.is_none_or(|p| r.resource == p) && here(ns)
            }
            Missing::ManagedFields { .. } | Missing::Scope { .. } => false,
            Missing::Recorded(_) => true,
        }
    }

    /// Whether objects of some kind in `namespace` (anywhere when `None`) may be among what
    /// this gap left unread (as [`Gap::may_hide`], for every resource at once).
    pub fn may_hide_any(&self, namespace: Option<&str>) -> bool {
        let here = |ns: &Option<String>| ns.is_none() || namespace.is_none() || ns.as_deref() == namespace;
        match &self.what {
            Missing::Discovery { .. } | Missing::Recorded(_) => true,
            Missing::List { namespace: ns, .. } | Missing::Bodies { namespace: ns, .. } => here(ns),
            Missing::ManagedFields { .. } | Missing::Scope { .. } => false,
        }
    }

    /// Whether an object being deleted in `namespace` (anywhere when `None`) may be unseen
    /// because of this gap: a failed discovery or list there or everywhere (Events aside: no
    /// sweep finds deletions among them), or a line that may be either. A failed read of
    /// bodies or managedFields hides no object: its metadata was read.
    pub fn may_hide_deletions(&self, namespace: Option<&str>) -> bool {
        match &self.what {
            // Events of either API, not any resource a CRD names `events`
            Missing::List { resource: r, .. }
                if r.resource == "events" && matches!(r.group.as_str(), "" | "events.k8s.io") =>
            {
                false
            }
            Missing::List { .. } | Missing::Discovery { .. } | Missing::Recorded(_) => self.may_hide_any(namespace),
            Missing::Bodies { .. } | Missing::ManagedFields { .. } | Missing::Scope { .. } => false,
        }
    }

    /// Whether this is the failed discovery of an API group.
    pub fn is_discovery(&self) -> bool {
        matches!(self.what, Missing::Discovery { .. })
    }

    /// The entry a snapshot file's `incomplete` list holds: the typed fields and the line.
    pub fn to_json(&self) -> Value {
        let line = self.to_string();
        let mut what = Map::new();
        let put_resource = |read: &str, r: &Resource, what: &mut Map<String, Value>| {
            what.insert("read".into(), read.into());
            what.insert("group".into(), r.group.clone().into());
            if !r.version.is_empty() {
                what.insert("version".into(), r.version.clone().into());
            }
            what.insert("resource".into(), r.resource.clone().into());
        };
        let place = |what: &mut Map<String, Value>, ns: &Option<String>, name: &Option<String>| {
            if let Some(ns) = ns {
                what.insert("namespace".into(), ns.clone().into());
            }
            if let Some(n) = name {
                what.insert("name".into(), n.clone().into());
            }
        };
        match &self.what {
            Missing::Discovery { group, version } => {
                what.insert("read".into(), "discovery".into());
                what.insert("group".into(), group.clone().into());
                what.insert("version".into(), version.clone().into());
            }
            Missing::List { resource, namespace } => {
                put_resource("list", resource, &mut what);
                place(&mut what, namespace, &None);
            }
            Missing::Bodies { resource, namespace, name } => {
                put_resource("bodies", resource, &mut what);
                place(&mut what, namespace, name);
            }
            Missing::ManagedFields { resource, namespace, name } => {
                put_resource("managedFields", resource, &mut what);
                place(&mut what, namespace, name);
            }
            Missing::Scope { resource, namespaced, versions } => {
                put_resource("scope", resource, &mut what);
                what.insert("namespaced".into(), (*namespaced).into());
                what.insert("versions".into(), json!(versions));
            }
            Missing::Recorded(_) => return json!({ "line": line }),
        }
        json!({ "what": what, "why": self.why, "line": line })
    }

    /// An entry of a snapshot file's `incomplete` list: an object as [`Gap::to_json`] writes
    /// it, or a line alone (a file written before gaps were typed). An object whose `what`
    /// this reader does not know keeps its line; one without a line is kept as its JSON text,
    /// so that it is still said, and still judged as possibly hiding anything.
    pub fn from_json(v: Value) -> Gap {
        match v {
            Value::String(line) => Gap::recorded(line),
            Value::Object(m) => {
                let typed = m.get("what").and_then(|w| typed(w.as_object()?));
                let why = m.get("why").and_then(Value::as_str).unwrap_or_default();
                match (typed, m.get("line").and_then(Value::as_str)) {
                    (Some(what), _) => Gap::new(what, why),
                    (None, Some(line)) => Gap::recorded(line),
                    (None, None) => Gap::recorded(Value::Object(m).to_string()),
                }
            }
            other => Gap::recorded(other.to_string()),
        }
    }
}

/// The typed `what` of an entry, when it is one of the kinds this reader knows.
fn typed(w: &Map<String, Value>) -> Option<Missing> {
    let s = |k: &str| w.get(k).and_then(Value::as_str).map(str::to_string);
    let resource = || Some(Resource::new(s("group")?, s("version").unwrap_or_default(), s("resource")?));
    Some(match w.get("read")?.as_str()? {
        "discovery" => Missing::Discovery { group: s("group")?, version: s("version")? },
        "list" => Missing::List { resource: resource()?, namespace: s("namespace") },
        "bodies" => Missing::Bodies { resource: resource()?, namespace: s("namespace"), name: s("name") },
        "managedFields" => Missing::ManagedFields { resource: resource()?, namespace: s("namespace"), name: s("name") },
        "scope" => Missing::Scope {
            resource: resource()?,
            namespaced: w.get("namespaced")?.as_bool()?,
            versions: w
                .get("versions")?
                .as_array()?
                .iter()
                .map(|v| v.as_str().map(str::to_string))
                .collect::<Option<_>>()?,
        },
        _ => return None,
    })
}

fn in_namespace(ns: &Option<String>) -> String {
    ns.as_ref().map(|ns| format!(" in namespace \"{ns}\"")).unwrap_or_default()
}

fn named(name: &Option<String>) -> String {
    name.as_ref().map(|n| format!(" \"{n}\"")).unwrap_or_default()
}

impl fmt::Display for Gap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let why = &self.why;
        match &self.what {
            Missing::Discovery { group, version } => {
                let gv = if group.is_empty() { version.clone() } else { format!("{group}/{version}") };
                write!(f, "API group {gv} could not be discovered: {why}")
            }
            Missing::List { resource, namespace } => {
                write!(f, "{}{} could not be listed: {why}", resource.qualified(), in_namespace(namespace))
            }
            // the namespace is not in the line: a named object is found by the name the
            // answer already gives
            Missing::Bodies { resource, name, .. } => {
                write!(f, "{}{} could not be read in full: {why}", resource.qualified(), named(name))
            }
            Missing::ManagedFields { resource, namespace, name } => write!(
                f,
                "the managedFields of {}{}{} could not be read: {why}",
                resource.qualified(),
                named(name),
                in_namespace(namespace)
            ),
            Missing::Scope { resource, namespaced, versions } => write!(
                f,
                "{} has no discovery data or CustomResourceDefinition in the snapshot: its scope ({}) and served versions ({}) were inferred from the objects present",
                resource.qualified(),
                if *namespaced { "namespaced" } else { "cluster-scoped" },
                versions.join(", ")
            ),
            Missing::Recorded(line) => f.write_str(line),
        }
    }
}

/// A line as a snapshot file records it.
impl From<&str> for Gap {
    fn from(line: &str) -> Gap {
        Gap::recorded(line)
    }
}

/// A gap equals the line it prints (as tests and snapshot files state them).
impl PartialEq<&str> for Gap {
    fn eq(&self, other: &&str) -> bool {
        self.to_string().as_str() == *other
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(group: &str, resource: &str, ns: Option<&str>) -> Missing {
        Missing::List { resource: Resource::new(group, "v1", resource), namespace: ns.map(Into::into) }
    }

    #[test]
    fn gaps_print_the_lines_answers_have_always_printed() {
        assert_eq!(
            Gap::new(list("", "configmaps", None), "forbidden (403)"),
            "configmaps could not be listed: forbidden (403)"
        );
        assert_eq!(
            Gap::new(list("", "configmaps", Some("labs")), "no answer within 1s"),
            "configmaps in namespace \"labs\" could not be listed: no answer within 1s"
        );
        let crd = Resource::new("apiextensions.k8s.io", "v1", "customresourcedefinitions");
        assert_eq!(
            Gap::new(
                Missing::Bodies { resource: crd.clone(), namespace: None, name: Some("sites.own.labhub.io".into()) },
                "x"
            ),
            "customresourcedefinitions.apiextensions.k8s.io \"sites.own.labhub.io\" could not be read in full: x"
        );
        assert_eq!(
            Gap::new(
                Missing::ManagedFields {
                    resource: Resource::new("own.labhub.io", "v1", "sites"),
                    namespace: Some("labs".into()),
                    name: Some("alpha".into())
                },
                "y"
            ),
            "the managedFields of sites.own.labhub.io \"alpha\" in namespace \"labs\" could not be read: y"
        );
        assert_eq!(
            Gap::new(Missing::Discovery { group: "metrics.k8s.io".into(), version: "v1beta1".into() }, "z"),
            "API group metrics.k8s.io/v1beta1 could not be discovered: z"
        );
        assert_eq!(
            Gap::new(Missing::Discovery { group: String::new(), version: "v1".into() }, "z"),
            "API group v1 could not be discovered: z"
        );
        assert_eq!(Gap::recorded("secrets: forbidden"), "secrets: forbidden");
        let crds = "customresourcedefinitions.apiextensions.k8s.io";
        assert!(Gap::new(Missing::List { resource: crd, namespace: None }, "w").is_list_of(crds));
        assert!(!Gap::recorded(format!("{crds} could not be listed: w")).is_list_of(crds));
    }

    #[test]
    fn what_a_gap_may_hide_is_read_from_its_fields() {
        let pods_there = Gap::new(list("", "pods", Some("batch")), "403");
        assert!(pods_there.may_hide("", Some("pods"), Some("batch")));
        assert!(pods_there.may_hide("", Some("pods"), None), "a cluster-wide absence rests on every namespace");
        assert!(
            !pods_there.may_hide("", Some("pods"), Some("other")),
            "another namespace's failure hides nothing here"
        );
        assert!(!pods_there.may_hide("", Some("podtemplates"), None));
        assert!(!pods_there.may_hide("apps", None, None));
        assert!(Gap::new(list("", "pods", None), "403").may_hide("", Some("pods"), Some("batch")));
        let jobs = Gap::new(list("batch", "jobs", None), "timeout");
        assert!(jobs.may_hide("batch", Some("jobs"), None) && jobs.may_hide("batch", None, None));
        assert!(!jobs.may_hide("", Some("jobs"), None), "the core group is not batch");
        let batch = Gap::new(Missing::Discovery { group: "batch".into(), version: "v1".into() }, "503");
        assert!(batch.may_hide("batch", Some("jobs"), Some("x")) && !batch.may_hide("apps", None, None));
        assert!(batch.may_hide_any(Some("x")));
        let mf = Missing::ManagedFields { resource: Resource::new("", "v1", "pods"), namespace: None, name: None };
        assert!(!Gap::new(mf, "x").may_hide("", Some("pods"), None), "managedFields hide no object");
        assert!(!pods_there.may_hide_any(Some("other")) && pods_there.may_hide_any(Some("batch")));
        // a line without fields: anything may be behind it, whatever its words say
        let line = Gap::recorded("podtemplates could not be listed");
        assert!(line.may_hide("", Some("pods"), Some("batch")) && line.may_hide_any(Some("batch")));
    }

    #[test]
    fn entries_are_written_typed_with_their_line_and_read_back() {
        let gaps = [
            Gap::new(list("apps", "deployments", Some("labs")), "forbidden (403)"),
            Gap::new(Missing::Discovery { group: "metrics.k8s.io".into(), version: "v1beta1".into() }, "503"),
            Gap::new(
                Missing::Bodies {
                    resource: Resource::new("", "v1", "pods"),
                    namespace: Some("a".into()),
                    name: Some("p".into()),
                },
                "x",
            ),
            Gap::new(
                Missing::ManagedFields { resource: Resource::new("x.io", "v2", "sites"), namespace: None, name: None },
                "y",
            ),
            Gap::new(
                Missing::Scope {
                    resource: Resource::new("x.io", "", "sites"),
                    namespaced: true,
                    versions: vec!["v1".into()],
                },
                "",
            ),
            Gap::recorded("secrets: forbidden"),
        ];
        for g in gaps {
            let v = g.to_json();
            assert_eq!(v["line"], g.to_string(), "{v}");
            assert_eq!(Gap::from_json(v.clone()), g, "{v}");
        }
        let v = Gap::new(list("apps", "deployments", Some("labs")), "forbidden (403)").to_json();
        assert_eq!(
            v,
            json!({"what": {"read": "list", "group": "apps", "version": "v1", "resource": "deployments", "namespace": "labs"},
                   "why": "forbidden (403)", "line": "deployments.apps in namespace \"labs\" could not be listed: forbidden (403)"})
        );
    }

    #[test]
    fn old_and_unknown_entries_keep_their_line() {
        assert_eq!(Gap::from_json(json!("pods: forbidden")), Gap::recorded("pods: forbidden"));
        let future =
            json!({"what": {"read": "watch", "resource": "pods"}, "why": "gone", "line": "pods could not be watched"});
        assert_eq!(Gap::from_json(future), Gap::recorded("pods could not be watched"));
        let bare = Gap::from_json(json!({"what": {"read": "list"}}));
        assert!(matches!(bare.what, Missing::Recorded(ref l) if l.contains("list")), "{bare:?}");
        assert!(matches!(Gap::from_json(json!(7)).what, Missing::Recorded(_)));
    }
}

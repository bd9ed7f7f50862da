//! Test builders: snapshots from compact object descriptions, so each test reads as its
//! scenario (the GC tests' makeID / makeNode).

use serde_json::{Value, json};

use crate::graph::{Graph, NodeId};
use crate::snapshot::Snapshot;
use crate::snapshot::raw::{Flattened, RawDoc};

/// A served type as discovery gives it: `list_type("apps", "v1", "deployments", "Deployment", true)`.
pub fn list_type(
    group: &str,
    version: &str,
    plural: &str,
    kind: &str,
    namespaced: bool,
) -> crate::source::live::ListType {
    crate::source::live::ListType {
        group: group.into(),
        version: version.into(),
        plural: plural.into(),
        kind: kind.into(),
        namespaced,
    }
}

/// An object: `obj("v1", "ConfigMap", Some("ns"), "name", "uid")`, refined with the methods below.
pub fn obj(api_version: &str, kind: &str, namespace: Option<&str>, name: &str, uid: &str) -> Value {
    let mut meta = json!({"name": name, "uid": uid, "resourceVersion": "1"});
    if let Some(ns) = namespace {
        meta["namespace"] = json!(ns);
    }
    json!({"apiVersion": api_version, "kind": kind, "metadata": meta})
}

pub trait ObjExt {
    fn owned_by(self, api_version: &str, kind: &str, name: &str, uid: &str, block: Option<bool>) -> Value;
    fn deleting(self, at: &str) -> Value;
    fn finalizers(self, f: &[&str]) -> Value;
    fn with(self, key: &str, v: Value) -> Value;
}

impl ObjExt for Value {
    fn owned_by(mut self, api_version: &str, kind: &str, name: &str, uid: &str, block: Option<bool>) -> Value {
        let mut r = json!({"apiVersion": api_version, "kind": kind, "name": name, "uid": uid});
        if let Some(b) = block {
            r["blockOwnerDeletion"] = json!(b);
        }
        let refs = self["metadata"]["ownerReferences"].as_array().cloned().unwrap_or_default();
        let mut refs = refs;
        refs.push(r);
        self["metadata"]["ownerReferences"] = json!(refs);
        self
    }
    fn deleting(mut self, at: &str) -> Value {
        self["metadata"]["deletionTimestamp"] = json!(at);
        self["metadata"]["deletionGracePeriodSeconds"] = json!(0);
        self
    }
    fn finalizers(mut self, f: &[&str]) -> Value {
        self["metadata"]["finalizers"] = json!(f);
        self
    }
    fn with(mut self, key: &str, v: Value) -> Value {
        self[key] = v;
        self
    }
}

pub fn snapshot(objects: Vec<Value>) -> Snapshot {
    let mut f = Flattened::default();
    for o in objects {
        f.push(serde_json::from_value::<RawDoc>(o).expect("test object"));
    }
    Snapshot::from_flattened(f)
}

pub fn graph(objects: Vec<Value>) -> Graph {
    Graph::build(snapshot(objects))
}

/// The node of an observed object by kind and name.
pub fn node(g: &Graph, kind: &str, name: &str) -> NodeId {
    g.observed()
        .find(|(_, o)| o.kind == kind && o.name == name)
        .map(|(id, _)| id)
        .unwrap_or_else(|| panic!("no {kind} {name}"))
}

/// A graph over JSON object snippets.
pub fn graph_of(docs: &[&str]) -> Graph {
    graph_with(docs, &[])
}

/// A list of `resource` in `group` that was refused (403), everywhere: a typed gap.
pub fn forbidden(group: &str, resource: &str) -> crate::snapshot::Gap {
    let resource = crate::snapshot::Resource::new(group, "v1", resource);
    crate::snapshot::Gap::new(crate::snapshot::Missing::List { resource, namespace: None }, "forbidden")
}

/// A graph over JSON object snippets, with `incomplete` entries.
pub fn graph_with(docs: &[&str], incomplete: &[crate::snapshot::Gap]) -> Graph {
    let mut f = Flattened::default();
    for d in docs {
        f.push(serde_json::from_str::<RawDoc>(d).unwrap_or_else(|e| panic!("bad test JSON ({e}): {d}")));
    }
    f.incomplete.extend(incomplete.iter().cloned());
    Graph::build(Snapshot::from_flattened(f))
}

/// A graph of `objects` read as live reads and `kubectl gc snapshot` files are: with discovery
/// data (so what it does not serve is not served), and with `incomplete` reads failed.
pub fn graph_discovered(objects: Vec<Value>, incomplete: Vec<crate::snapshot::Gap>) -> Graph {
    let mut s = snapshot(objects);
    s.resource_lists.push(core_resource_list("configmaps", "ConfigMap"));
    s.incomplete = incomplete;
    Graph::build(s)
}

/// Discovery data serving one core/v1 resource (namespaced, listable): what a capture records.
pub fn core_resource_list(plural: &str, kind: &str) -> crate::snapshot::ResourceList {
    crate::snapshot::ResourceList {
        group_version: "v1".into(),
        resources: vec![crate::snapshot::ApiResource {
            plural: plural.into(),
            singular: None,
            namespaced: true,
            group: None,
            version: None,
            kind: kind.into(),
            verbs: vec!["list".into()],
            short_names: vec![],
            categories: vec![],
        }],
    }
}

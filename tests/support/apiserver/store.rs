//! What the test API server serves: the objects of a snapshot file, and the resource types
//! derived from its own built-in table ([`super::builtins`], independent of the product's),
//! the snapshot's CustomResourceDefinitions, its APIResourceList items and its APIServices
//! (groups without resources of their own).

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::{Value, json};

use kubectl_gc::discovery::version_priority;

use super::builtins::BUILTINS;

/// One served resource at one version.
#[derive(Clone, Debug)]
pub struct Res {
    pub group: String,
    pub version: String,
    pub plural: String,
    pub singular: String,
    pub kind: String,
    pub namespaced: bool,
    pub short_names: Vec<String>,
    /// Built-in list items carry no apiVersion/kind on the wire; custom resources do.
    pub builtin: bool,
}

impl Res {
    pub fn api_version(&self) -> String {
        if self.group.is_empty() { self.version.clone() } else { format!("{}/{}", self.group, self.version) }
    }

    pub fn discovery_json(&self) -> Value {
        let mut v = json!({
            "name": self.plural,
            "singularName": self.singular,
            "namespaced": self.namespaced,
            "kind": self.kind,
            "verbs": ["get", "list", "watch"],
        });
        if !self.short_names.is_empty() {
            v["shortNames"] = json!(self.short_names);
        }
        v
    }

    pub fn aggregated_json(&self) -> Value {
        let mut v = json!({
            "resource": self.plural,
            "responseKind": {"group": self.group, "version": self.version, "kind": self.kind},
            "scope": if self.namespaced { "Namespaced" } else { "Cluster" },
            "singularResource": self.singular,
            "verbs": ["get", "list", "watch"],
        });
        if !self.short_names.is_empty() {
            v["shortNames"] = json!(self.short_names);
        }
        v
    }
}

pub struct Store {
    pub objects: Vec<Value>,
    pub resources: Vec<Res>,
    /// group → versions, preferred first (groups from APIServices may have no resources).
    pub groups: BTreeMap<String, Vec<String>>,
    by_kind: std::collections::HashMap<(String, String), Vec<usize>>,
}

impl Store {
    pub fn load(path: &Path) -> Store {
        let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
        let doc: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("parsing {}: {e}", path.display()));
        let mut objects = Vec::new();
        let mut lists = Vec::new();
        let mut stack = vec![doc];
        while let Some(d) = stack.pop() {
            if let Some(items) = d.get("items").and_then(|i| i.as_array()) {
                stack.extend(items.iter().rev().cloned());
                continue;
            }
            match d.get("kind").and_then(|k| k.as_str()) {
                Some("APIResourceList") => lists.push(d),
                Some(_) => objects.push(d),
                None => {}
            }
        }
        let mut resources: Vec<Res> = Vec::new();
        let mut add = |r: Res| {
            if !resources.iter().any(|x| x.group == r.group && x.version == r.version && x.plural == r.plural) {
                resources.push(r);
            }
        };
        for l in &lists {
            let gv = l["groupVersion"].as_str().unwrap_or_default();
            let (group, version) = gv.rsplit_once('/').unwrap_or(("", gv));
            for r in l["resources"].as_array().into_iter().flatten() {
                let s = |k: &str| r[k].as_str().unwrap_or_default().to_string();
                if s("name").contains('/') {
                    continue;
                }
                add(Res {
                    group: group.into(),
                    version: version.into(),
                    plural: s("name"),
                    singular: s("singularName"),
                    kind: s("kind"),
                    namespaced: r["namespaced"].as_bool().unwrap_or(false),
                    short_names: strings(&r["shortNames"]),
                    builtin: false,
                });
            }
        }
        for crd in objects.iter().filter(|o| o["kind"] == "CustomResourceDefinition") {
            let spec = &crd["spec"];
            let names = &spec["names"];
            for v in spec["versions"].as_array().into_iter().flatten().filter(|v| v["served"].as_bool() != Some(false))
            {
                add(Res {
                    group: spec["group"].as_str().unwrap_or_default().into(),
                    version: v["name"].as_str().unwrap_or_default().into(),
                    plural: names["plural"].as_str().unwrap_or_default().into(),
                    singular: names["singular"]
                        .as_str()
                        .map(str::to_string)
                        .unwrap_or_else(|| names["kind"].as_str().unwrap_or_default().to_lowercase()),
                    kind: names["kind"].as_str().unwrap_or_default().into(),
                    namespaced: spec["scope"].as_str() != Some("Cluster"),
                    short_names: strings(&names["shortNames"]),
                    builtin: false,
                });
            }
        }
        for &(group, version, plural, kind, namespaced, short) in BUILTINS {
            add(Res {
                group: group.into(),
                version: version.into(),
                plural: plural.into(),
                singular: kind.to_lowercase(),
                kind: kind.into(),
                namespaced,
                short_names: short.iter().map(|s| s.to_string()).collect(),
                builtin: true,
            });
        }
        let mut groups: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for r in &resources {
            let vs = groups.entry(r.group.clone()).or_default();
            if !vs.contains(&r.version) {
                vs.push(r.version.clone());
            }
        }
        for svc in objects.iter().filter(|o| o["kind"] == "APIService") {
            if let (Some(g), Some(v)) = (svc["spec"]["group"].as_str(), svc["spec"]["version"].as_str()) {
                let vs = groups.entry(g.to_string()).or_default();
                if !vs.iter().any(|x| x == v) {
                    vs.push(v.to_string());
                }
            }
        }
        for vs in groups.values_mut() {
            vs.sort_by_key(|v| std::cmp::Reverse(version_priority(v)));
        }
        let by_kind = index_by_kind(&objects);
        Store { objects, resources, groups, by_kind }
    }

    pub fn resources_in(&self, group: &str, version: &str) -> impl Iterator<Item = &Res> {
        self.resources.iter().filter(move |r| r.group == group && r.version == version)
    }

    pub fn resource(&self, group: &str, version: &str, plural: &str) -> Option<&Res> {
        self.resources_in(group, version).find(|r| r.plural == plural)
    }

    /// The objects of a resource (any stored version), in etcd key order (namespace, name).
    /// Events are one resource served by two groups: `events.k8s.io` lists the core ones too.
    pub fn objects_of(&self, r: &Res, namespace: Option<&str>) -> Vec<&Value> {
        let mut keys = vec![(r.group.clone(), r.kind.clone())];
        if r.group == "events.k8s.io" && r.kind == "Event" {
            keys.push((String::new(), "Event".into()));
        }
        let mut out: Vec<&Value> = keys
            .iter()
            .flat_map(|k| self.by_kind.get(k).into_iter().flatten())
            .map(|&i| &self.objects[i])
            .filter(|o| namespace.is_none_or(|ns| o["metadata"]["namespace"].as_str() == Some(ns)))
            .collect();
        if keys.len() > 1 {
            out.sort_by(|a, b| name_of(a).cmp(&name_of(b)));
        }
        out
    }
}

/// Objects of each (group, kind), sorted by namespace and name, as lists return them.
fn index_by_kind(objects: &[Value]) -> std::collections::HashMap<(String, String), Vec<usize>> {
    let mut by_kind: std::collections::HashMap<(String, String), Vec<usize>> = std::collections::HashMap::new();
    for (i, o) in objects.iter().enumerate() {
        let key = (
            group_of(o["apiVersion"].as_str().unwrap_or_default()).to_string(),
            o["kind"].as_str().unwrap_or_default().to_string(),
        );
        by_kind.entry(key).or_default().push(i);
    }
    for v in by_kind.values_mut() {
        v.sort_by(|&a, &b| name_of(&objects[a]).cmp(&name_of(&objects[b])));
    }
    by_kind
}

fn name_of(o: &Value) -> (&str, &str) {
    (o["metadata"]["namespace"].as_str().unwrap_or_default(), o["metadata"]["name"].as_str().unwrap_or_default())
}

/// A core (v1) Event as `events.k8s.io/v1` serves it.
pub fn as_events_v1(o: &Value) -> Value {
    if o["apiVersion"] != "v1" {
        return o.clone();
    }
    let mut e = serde_json::Map::new();
    e.insert("metadata".into(), o["metadata"].clone());
    for (from, to) in [
        ("involvedObject", "regarding"),
        ("related", "related"),
        ("reason", "reason"),
        ("message", "note"),
        ("type", "type"),
        ("eventTime", "eventTime"),
        ("action", "action"),
        ("reportingComponent", "reportingController"),
        ("reportingInstance", "reportingInstance"),
        ("source", "deprecatedSource"),
        ("firstTimestamp", "deprecatedFirstTimestamp"),
        ("lastTimestamp", "deprecatedLastTimestamp"),
        ("count", "deprecatedCount"),
    ] {
        if let Some(v) = o.get(from) {
            e.insert(to.into(), v.clone());
        }
    }
    Value::Object(e)
}

fn group_of(api_version: &str) -> &str {
    api_version.rsplit_once('/').map_or("", |(g, _)| g)
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array().into_iter().flatten().filter_map(|s| s.as_str().map(str::to_string)).collect()
}

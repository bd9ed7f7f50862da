//! What the test API server serves: the objects of a snapshot file, and the resource types
//! derived from its own built-in table ([`super::builtins`], independent of the product's),
//! the snapshot's CustomResourceDefinitions, its APIResourceList items and its APIServices
//! (groups without resources of their own).
//!
//! The objects change ([`Store::put`], [`Store::remove`]): each change takes the next
//! resourceVersion and is kept in a history that watches replay from any resourceVersion after
//! the last compaction ([`Store::compact`]; an older one is 410 Gone, as etcd's compaction
//! makes it).

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
    pub resources: Vec<Res>,
    /// group → versions, preferred first (groups from APIServices may have no resources).
    pub groups: BTreeMap<String, Vec<String>>,
    objects: std::sync::RwLock<Objects>,
}

/// The objects as they are now, and how they came to be.
struct Objects {
    /// By (group, kind), then (namespace, name): list order.
    by_kind: std::collections::HashMap<(String, String), Vec<Value>>,
    /// The resourceVersion of the last change (lists answer it).
    rv: u64,
    /// Changes after `compacted`, oldest first.
    history: Vec<Change>,
    /// Watches from a resourceVersion before this one are answered 410 Gone.
    compacted: u64,
}

/// One change to the store, as a watch replays it.
#[derive(Clone, Debug)]
pub struct Change {
    pub rv: u64,
    /// The object before (`None`: created).
    pub before: Option<Value>,
    /// The object after (`None`: removed).
    pub after: Option<Value>,
}

impl Change {
    /// The (group, kind) changed.
    pub fn key(&self) -> (String, String) {
        let o = self.after.as_ref().or(self.before.as_ref()).expect("a change has an object");
        key_of(o)
    }
}

/// Why a watch cannot start where it asks.
#[derive(Debug)]
pub struct Expired;

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
        let mut by_kind: std::collections::HashMap<(String, String), Vec<Value>> = Default::default();
        for o in objects {
            by_kind.entry(key_of(&o)).or_default().push(o);
        }
        for v in by_kind.values_mut() {
            v.sort_by(|a, b| name_of(a).cmp(&name_of(b)));
        }
        // nothing compacted yet: a watch from an object's own (older) resourceVersion replays
        // the changes since the load, which are all there are
        let objects = Objects { by_kind, rv: FIRST_RV, history: Vec::new(), compacted: 0 };
        Store { resources, groups, objects: std::sync::RwLock::new(objects) }
    }

    /// The resourceVersion of the last change.
    pub fn resource_version(&self) -> u64 {
        self.objects.read().unwrap().rv
    }

    /// Adds or replaces an object (by apiVersion's group, kind, namespace and name), with the
    /// next resourceVersion (a uid is given to an object that has none). Returns it.
    pub fn put(&self, mut o: Value) -> u64 {
        let mut w = self.objects.write().unwrap();
        w.rv += 1;
        let rv = w.rv;
        o["metadata"]["resourceVersion"] = rv.to_string().into();
        if o["metadata"]["uid"].is_null() {
            o["metadata"]["uid"] = format!("uid-{}-{rv}", name_of(&o).1).into();
        }
        let list = w.by_kind.entry(key_of(&o)).or_default();
        let before = match list.binary_search_by(|x| name_of(x).cmp(&name_of(&o))) {
            Ok(i) => Some(std::mem::replace(&mut list[i], o.clone())),
            Err(i) => {
                list.insert(i, o.clone());
                None
            }
        };
        w.history.push(Change { rv, before, after: Some(o) });
        rv
    }

    /// Removes an object; `None` when there was none.
    pub fn remove(&self, api_version: &str, kind: &str, namespace: Option<&str>, name: &str) -> Option<u64> {
        let mut w = self.objects.write().unwrap();
        let key = (group_of(api_version).to_string(), kind.to_string());
        let at = (namespace.unwrap_or_default(), name);
        let list = w.by_kind.get_mut(&key)?;
        let i = list.iter().position(|x| name_of(x) == at)?;
        let before = list.remove(i);
        w.rv += 1;
        let rv = w.rv;
        w.history.push(Change { rv, before: Some(before), after: None });
        Some(rv)
    }

    /// Forgets the history: a watch from any resourceVersion seen so far is 410 Gone (the
    /// compaction takes a resourceVersion of its own, as etcd's does, from which a relist's
    /// watch then starts).
    pub fn compact(&self) {
        let mut w = self.objects.write().unwrap();
        w.rv += 1;
        w.compacted = w.rv;
        w.history.clear();
    }

    /// The changes after `rv` (oldest first), or [`Expired`] when they were compacted away.
    pub fn changes_since(&self, rv: u64) -> Result<Vec<Change>, Expired> {
        let r = self.objects.read().unwrap();
        if rv < r.compacted {
            return Err(Expired);
        }
        Ok(r.history.iter().filter(|c| c.rv > rv).cloned().collect())
    }

    pub fn resources_in(&self, group: &str, version: &str) -> impl Iterator<Item = &Res> {
        self.resources.iter().filter(move |r| r.group == group && r.version == version)
    }

    pub fn resource(&self, group: &str, version: &str, plural: &str) -> Option<&Res> {
        self.resources_in(group, version).find(|r| r.plural == plural)
    }

    /// The objects of a resource (any stored version), in etcd key order (namespace, name).
    /// Events are one resource served by two groups: `events.k8s.io` lists the core ones too.
    pub fn objects_of(&self, r: &Res, namespace: Option<&str>) -> Vec<Value> {
        let mut keys = vec![(r.group.clone(), r.kind.clone())];
        if r.group == "events.k8s.io" && r.kind == "Event" {
            keys.push((String::new(), "Event".into()));
        }
        let objects = self.objects.read().unwrap();
        let mut out: Vec<Value> = keys
            .iter()
            .flat_map(|k| objects.by_kind.get(k).into_iter().flatten())
            .filter(|o| namespace.is_none_or(|ns| o["metadata"]["namespace"].as_str() == Some(ns)))
            .cloned()
            .collect();
        if keys.len() > 1 {
            out.sort_by(|a, b| name_of(a).cmp(&name_of(b)));
        }
        out
    }

    /// Whether a change concerns resource `r` (Events: either group).
    pub fn is_of(r: &Res, c: &Change) -> bool {
        let (g, k) = c.key();
        k == r.kind && (g == r.group || (r.group == "events.k8s.io" && k == "Event" && g.is_empty()))
    }
}

/// The resourceVersion of the objects as loaded (lists answered "4242" before objects changed).
pub const FIRST_RV: u64 = 4242;

fn name_of(o: &Value) -> (&str, &str) {
    (o["metadata"]["namespace"].as_str().unwrap_or_default(), o["metadata"]["name"].as_str().unwrap_or_default())
}

fn key_of(o: &Value) -> (String, String) {
    (
        group_of(o["apiVersion"].as_str().unwrap_or_default()).to_string(),
        o["kind"].as_str().unwrap_or_default().to_string(),
    )
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

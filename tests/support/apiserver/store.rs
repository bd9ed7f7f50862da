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

/// The verbs a real API server advertises for a resource: this server answers reads only,
/// but the discovery it serves is the cluster's, and clients judge by it (the namespace
/// controller deletes only what it can discover as deletable).
const VERBS: [&str; 8] = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"];

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
            "verbs": VERBS,
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
            "verbs": VERBS,
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

/// One stored object: its compact JSON, once, as etcd holds an object's bytes; answers parse
/// what they render from it (its metadata, or the whole object) one object at a time, so that
/// a cluster of 100k objects with full bodies is held in about its JSON's size, and a list
/// costs the objects of its page, not copies of every object of its kind.
#[derive(Debug)]
pub struct Stored {
    pub namespace: Box<str>,
    pub name: Box<str>,
    json: Box<str>,
}

impl Stored {
    fn new(o: &Value) -> Stored {
        let (ns, name) = name_of(o);
        Stored { namespace: ns.into(), name: name.into(), json: serde_json::to_string(o).unwrap().into() }
    }

    /// The object.
    pub fn value(&self) -> Value {
        serde_json::from_str(&self.json).expect("stored as JSON")
    }

    /// Its metadata alone (the rest of the object is skipped, not built).
    pub fn metadata(&self) -> Value {
        #[derive(serde::Deserialize)]
        struct Head {
            #[serde(default)]
            metadata: Value,
        }
        serde_json::from_str::<Head>(&self.json).expect("stored as JSON").metadata
    }

    fn key(&self) -> (&str, &str) {
        (&self.namespace, &self.name)
    }
}

/// The objects as they are now, and how they came to be.
struct Objects {
    /// By (group, kind), then (namespace, name): list order.
    by_kind: std::collections::HashMap<(String, String), Vec<std::sync::Arc<Stored>>>,
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

/// A document of a snapshot file, read only as far as sorting it needs: a list's items stay
/// text (borrowed from the file) until each is looked at.
#[derive(serde::Deserialize)]
struct Peek<'a> {
    #[serde(default)]
    kind: Value,
    #[serde(borrow, default)]
    items: Option<&'a serde_json::value::RawValue>,
}

impl Store {
    pub fn load(path: &Path) -> Store {
        let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
        let parse_err = |e: serde_json::Error| -> ! { panic!("parsing {}: {e}", path.display()) };
        // what discovery is derived from is parsed whole; every other object is kept as
        // compact JSON (a file written indented is compacted once)
        let mut lists: Vec<Value> = Vec::new();
        let mut described: Vec<Value> = Vec::new();
        let mut stored: Vec<((String, String), Stored)> = Vec::new();
        let mut stack: Vec<&str> = vec![text.as_str()];
        while let Some(doc) = stack.pop() {
            let Ok(peek) = serde_json::from_str::<Peek>(doc) else {
                // not an object: nothing to serve, but it must be JSON
                serde_json::from_str::<serde::de::IgnoredAny>(doc).unwrap_or_else(|e| parse_err(e));
                continue;
            };
            let items =
                peek.items.and_then(|i| serde_json::from_str::<Vec<&serde_json::value::RawValue>>(i.get()).ok());
            if let Some(items) = items {
                stack.extend(items.iter().rev().map(|i| i.get()));
                continue;
            }
            match peek.kind.as_str() {
                Some("APIResourceList") => lists.push(serde_json::from_str(doc).unwrap_or_else(|e| parse_err(e))),
                Some(kind) => {
                    let o: Value = serde_json::from_str(doc).unwrap_or_else(|e| parse_err(e));
                    if kind == "CustomResourceDefinition" || kind == "APIService" {
                        described.push(o.clone());
                    }
                    stored.push((key_of(&o), Stored::new(&o)));
                }
                None => {}
            }
        }
        drop(text);
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
        for crd in described.iter().filter(|o| o["kind"] == "CustomResourceDefinition") {
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
        for svc in described.iter().filter(|o| o["kind"] == "APIService") {
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
        let mut by_kind: std::collections::HashMap<(String, String), Vec<std::sync::Arc<Stored>>> = Default::default();
        for (key, o) in stored {
            by_kind.entry(key).or_default().push(std::sync::Arc::new(o));
        }
        for v in by_kind.values_mut() {
            v.sort_by(|a, b| a.key().cmp(&b.key()));
        }
        // nothing compacted yet: a watch from an object's own (older) resourceVersion replays
        // the changes since the load, which are all there are. The store's version is past
        // every object's, as etcd's revision is (a fixture's objects carry their cluster's)
        let newest = by_kind
            .values()
            .flatten()
            .filter_map(|o| o.metadata()["resourceVersion"].as_str()?.parse::<u64>().ok())
            .max();
        let rv = newest.map_or(FIRST_RV, |n| n.max(FIRST_RV));
        let objects = Objects { by_kind, rv, history: Vec::new(), compacted: 0 };
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
        let new = std::sync::Arc::new(Stored::new(&o));
        let before = match list.binary_search_by(|x| x.key().cmp(&name_of(&o))) {
            Ok(i) => Some(std::mem::replace(&mut list[i], new).value()),
            Err(i) => {
                list.insert(i, new);
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
        let i = list.iter().position(|x| x.key() == at)?;
        let before = list.remove(i).value();
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
        // the history is in resourceVersion order: a watch of a busy server (heartbeats) must
        // not scan all of it on every change
        let from = r.history.partition_point(|c| c.rv <= rv);
        Ok(r.history[from..].to_vec())
    }

    pub fn resources_in(&self, group: &str, version: &str) -> impl Iterator<Item = &Res> {
        self.resources.iter().filter(move |r| r.group == group && r.version == version)
    }

    pub fn resource(&self, group: &str, version: &str, plural: &str) -> Option<&Res> {
        self.resources_in(group, version).find(|r| r.plural == plural)
    }

    /// The objects of a resource (any stored version), in etcd key order (namespace, name),
    /// as stored (shared, not copied). Events are one resource served by two groups:
    /// `events.k8s.io` lists the core ones too.
    pub fn stored_of(&self, r: &Res, namespace: Option<&str>) -> Vec<std::sync::Arc<Stored>> {
        let mut keys = vec![(r.group.clone(), r.kind.clone())];
        if r.group == "events.k8s.io" && r.kind == "Event" {
            keys.push((String::new(), "Event".into()));
        }
        let objects = self.objects.read().unwrap();
        let mut out: Vec<std::sync::Arc<Stored>> = Vec::new();
        for list in keys.iter().filter_map(|k| objects.by_kind.get(k)) {
            let range = match namespace {
                // sorted by namespace first: its objects are one run
                Some(ns) => {
                    let start = list.partition_point(|o| &*o.namespace < ns);
                    let end = start + list[start..].partition_point(|o| &*o.namespace == ns);
                    &list[start..end]
                }
                None => &list[..],
            };
            out.extend(range.iter().cloned());
        }
        if keys.len() > 1 {
            out.sort_by(|a, b| a.key().cmp(&b.key()));
        }
        out
    }

    /// One object of a resource by namespace and name.
    pub fn get(&self, r: &Res, namespace: Option<&str>, name: &str) -> Option<std::sync::Arc<Stored>> {
        self.stored_of(r, namespace).into_iter().find(|o| &*o.name == name)
    }

    /// The objects of a resource, parsed (see [`Store::stored_of`]).
    pub fn objects_of(&self, r: &Res, namespace: Option<&str>) -> Vec<Value> {
        self.stored_of(r, namespace).iter().map(|o| o.value()).collect()
    }

    /// Whether a change concerns resource `r` (Events: either group).
    pub fn is_of(r: &Res, c: &Change) -> bool {
        let (g, k) = c.key();
        k == r.kind && (g == r.group || (r.group == "events.k8s.io" && k == "Event" && g.is_empty()))
    }
}

/// The resourceVersion of the objects as loaded (lists answered "4242" before objects changed),
/// unless one of them has a later one.
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

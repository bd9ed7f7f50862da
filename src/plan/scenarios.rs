//! The integration, e2e and namespace scenarios of gc-semantics §7 (I1–I14, E1–E11,
//! N1–N4), each built as a snapshot and run through the simulation, asserting the outcome
//! §7 lists.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::{Value, json};

use super::*;
use crate::controllers::Liveness;
use crate::graph::Graph;
use crate::snapshot::Snapshot;

pub const NOW: &str = "2026-11-29T12:00:00Z";

/// A test object, as JSON.
#[derive(Clone)]
pub struct Obj(pub Value);

pub fn uid_of(kind: &str, ns: Option<&str>, name: &str) -> String {
    format!("uid-{}-{}-{}", kind.to_lowercase(), ns.unwrap_or("_"), name)
}

pub fn obj(api_version: &str, kind: &str, ns: Option<&str>, name: &str) -> Obj {
    let mut meta = json!({"name": name, "uid": uid_of(kind, ns, name)});
    if let Some(ns) = ns {
        meta["namespace"] = json!(ns);
    }
    Obj(json!({"apiVersion": api_version, "kind": kind, "metadata": meta}))
}

impl Obj {
    pub fn uid(&self) -> String {
        self.0["metadata"]["uid"].as_str().unwrap().to_string()
    }
    /// An ownerRef to `owner`; `c`/`b` set `controller`/`blockOwnerDeletion` when `Some`.
    pub fn owned_by(self, owner: &Obj, c: Option<bool>, b: Option<bool>) -> Obj {
        let (av, kind, name, uid) = (
            owner.0["apiVersion"].as_str().unwrap().to_string(),
            owner.0["kind"].as_str().unwrap().to_string(),
            owner.0["metadata"]["name"].as_str().unwrap().to_string(),
            owner.uid(),
        );
        self.owner_ref(&av, &kind, &name, &uid, c, b)
    }
    pub fn owner_ref(mut self, av: &str, kind: &str, name: &str, uid: &str, c: Option<bool>, b: Option<bool>) -> Obj {
        let mut r = json!({"apiVersion": av, "kind": kind, "name": name, "uid": uid});
        if let Some(c) = c {
            r["controller"] = json!(c);
        }
        if let Some(b) = b {
            r["blockOwnerDeletion"] = json!(b);
        }
        let m = &mut self.0["metadata"];
        if m.get("ownerReferences").is_none() {
            m["ownerReferences"] = json!([]);
        }
        m["ownerReferences"].as_array_mut().unwrap().push(r);
        self
    }
    /// A workload controller's ref: `controller` and `blockOwnerDeletion` true.
    pub fn controlled_by(self, owner: &Obj) -> Obj {
        self.owned_by(owner, Some(true), Some(true))
    }
    pub fn fin(mut self, f: &[&str]) -> Obj {
        self.0["metadata"]["finalizers"] = json!(f);
        self
    }
    pub fn deleting(mut self, at: &str) -> Obj {
        self.0["metadata"]["deletionTimestamp"] = json!(at);
        self.0["metadata"]["deletionGracePeriodSeconds"] = json!(0);
        self
    }
    pub fn set(mut self, pointer_parent: &str, key: &str, v: Value) -> Obj {
        let mut cur = &mut self.0;
        for part in pointer_parent.split('/').filter(|p| !p.is_empty()) {
            if cur.get(part).is_none() {
                cur[part] = json!({});
            }
            cur = &mut cur[part];
        }
        cur[key] = v;
        self
    }
    /// A pod scheduled on `node` and running.
    pub fn on_node(self, node: &str) -> Obj {
        self.set("spec", "nodeName", json!(node)).set("status", "phase", json!("Running"))
    }
}

pub fn ready_node(name: &str) -> Obj {
    obj("v1", "Node", None, name).set("status", "conditions", json!([{"type": "Ready", "status": "True"}]))
}

pub fn namespace(name: &str) -> Obj {
    obj("v1", "Namespace", None, name).set("spec", "finalizers", json!(["kubernetes"])).set(
        "status",
        "phase",
        json!("Active"),
    )
}

pub fn crd(group: &str, kind: &str, plural: &str, scope: &str) -> Obj {
    obj("apiextensions.k8s.io/v1", "CustomResourceDefinition", None, &format!("{plural}.{group}"))
        .set("spec", "group", json!(group))
        .set("spec", "scope", json!(scope))
        .set("spec", "names", json!({"kind": kind, "plural": plural, "singular": kind.to_lowercase()}))
        .set("spec", "versions", json!([{"name": "v1", "served": true, "storage": true}]))
        .set("status", "conditions", json!([{"type": "Established", "status": "True"}]))
}

pub fn graph(objs: &[Obj]) -> Graph {
    graph_of_list(json!({"apiVersion": "v1", "kind": "List"}), objs)
}

/// A graph read from a `kubectl gc snapshot` file that records the server's version.
pub fn graph_at(server_version: &str, objs: &[Obj]) -> Graph {
    graph_of_list(json!({"apiVersion": "v1", "kind": "List", "serverVersion": server_version}), objs)
}

fn graph_of_list(mut list: Value, objs: &[Obj]) -> Graph {
    list["items"] = objs.iter().map(|o| o.0.clone()).collect();
    let text = serde_json::to_vec(&list).unwrap();
    let mut flat = crate::snapshot::raw::Flattened::default();
    crate::source::file::parse_into(Path::new("scenario.json"), &text, &mut flat).unwrap();
    Graph::build(Snapshot::from_flattened(flat))
}

/// Final state of every observed object after a scenario.
#[derive(Debug)]
pub struct Outcome {
    pub plan: Plan,
    /// key → (deletionTimestamp set, finalizers, owner names) for objects still stored.
    pub left: BTreeMap<String, (bool, Vec<String>, Vec<String>)>,
    pub removed: Vec<String>,
    pub blocked: Vec<String>,
}

impl Outcome {
    pub fn exists(&self, key: &str) -> bool {
        self.left.contains_key(key)
    }
    pub fn gone(&self, key: &str) -> bool {
        !self.exists(key)
    }
    pub fn owners(&self, key: &str) -> Vec<String> {
        self.left[key].2.clone()
    }
    pub fn deleting(&self, key: &str) -> bool {
        self.left[key].0
    }
    pub fn finalizers(&self, key: &str) -> Vec<String> {
        self.left[key].1.clone()
    }
    pub fn count(&self, prefix: &str) -> usize {
        self.left.keys().filter(|k| k.starts_with(prefix)).count()
    }
    /// Position of the Remove step of `key`.
    pub fn removed_at(&self, g: &Graph, key: &str) -> usize {
        self.plan
            .steps
            .iter()
            .position(|s| s.action == Action::Remove && ObjRef::of_node(g, s.object).key() == key)
            .unwrap_or_else(|| panic!("no Remove of {key}"))
    }
}

pub fn snapshot_state(sim: &Simulation) -> BTreeMap<String, (bool, Vec<String>, Vec<String>)> {
    let w = &sim.world;
    w.g.observed()
        .filter(|(n, _)| w.stored(*n))
        .map(|(n, _)| {
            let owners = w.owners_of(n).iter().map(|r| r.name.clone()).collect();
            (ObjRef::of_node(w.g, n).key(), (w.deletion_of(n).is_some(), w.finalizers_of(n).to_vec(), owners))
        })
        .collect()
}

/// Runs `script` against a fresh simulation of `g`, then lets it settle.
pub fn run_with(g: &Graph, assume: Option<AssumeFinalizers>, script: impl FnOnce(&mut Simulation)) -> Outcome {
    let now: Timestamp = NOW.parse().unwrap();
    let lv = Liveness::new(g, now);
    let mut sim = Simulation::new(g, &lv, assume, now);
    script(&mut sim);
    sim.run();
    let left = snapshot_state(&sim);
    let plan = sim.finish(NodeId(0), Cascade::Background);
    let removed = plan.result.removed.iter().map(|&n| ObjRef::of_node(g, n).key()).collect();
    let blocked = plan.result.blocked.iter().map(|b| ObjRef::of_node(g, b.object).key()).collect();
    Outcome { plan, left, removed, blocked }
}

pub fn id(g: &Graph, o: &Obj) -> NodeId {
    g.by_uid(&crate::snapshot::Uid(o.uid())).unwrap()
}

/// Deletes `target` with `cascade` as kubectl does.
pub fn delete(g: &Graph, target: &Obj, cascade: Option<Cascade>) -> Outcome {
    let t = id(g, target);
    run_with(g, None, |s| s.delete(t, "client", cascade))
}

fn pods(rc: &Obj, ns: &str, prefix: &str, n: usize) -> Vec<Obj> {
    (0..n).map(|i| obj("v1", "Pod", Some(ns), &format!("{prefix}-{i}")).owned_by(rc, None, None)).collect()
}

// ----- §7.2 integration tests ------------------------------------------------------------

#[test]
fn i1_cascading_deletion() {
    let rc1 = obj("v1", "ReplicationController", Some("d"), "rc1");
    let rc2 = obj("v1", "ReplicationController", Some("d"), "rc2");
    let pod1 = obj("v1", "Pod", Some("d"), "pod1").owned_by(&rc1, None, None);
    let pod3 = obj("v1", "Pod", Some("d"), "pod3").owned_by(&rc1, None, None).owned_by(&rc2, None, None);
    let pod2 = obj("v1", "Pod", Some("d"), "pod2");
    let g = graph(&[rc1.clone(), rc2, pod1, pod2, pod3]);
    let o = delete(&g, &rc1, Some(Cascade::Background));
    assert!(o.gone("ReplicationController/d/rc1"));
    assert!(o.gone("Pod/d/pod1"));
    assert!(o.exists("Pod/d/pod2") && o.exists("Pod/d/pod3"));
    assert_eq!(o.owners("Pod/d/pod3"), ["rc2"], "pod3 loses its rc1 ref (§3.2 F1)");
}

#[test]
fn i2_create_with_non_existent_owner() {
    let pod = obj("v1", "Pod", Some("d"), "pod").owner_ref(
        "v1",
        "ReplicationController",
        "test.rc.1",
        "doesn't matter",
        None,
        None,
    );
    let g = graph(&[pod]);
    let o = run_with(&g, None, |s| s.observe_all());
    assert!(o.gone("Pod/d/pod"), "{:?}", o.left);
}

#[test]
fn i3_stressing_cascading_deletion() {
    let mut objs = Vec::new();
    let mut cases: Vec<(Obj, Option<Cascade>)> = Vec::new();
    for g in 0..2 {
        let c1 = obj("v1", "ReplicationController", Some("d"), &format!("c1-{g}"));
        let c2 = obj("v1", "ReplicationController", Some("d"), &format!("c2-{g}")).fin(&["orphan"]);
        let c3 = obj("v1", "ReplicationController", Some("d"), &format!("c3-{g}")).fin(&["orphan"]);
        let c4 = obj("v1", "ReplicationController", Some("d"), &format!("c4-{g}"));
        let c5 = obj("v1", "ReplicationController", Some("d"), &format!("c5-{g}"));
        for (rc, p) in [
            (c1, None),
            (c2, None),
            (c3, Some(Cascade::Background)),
            (c4, Some(Cascade::Orphan)),
            (c5, Some(Cascade::Orphan)),
        ] {
            let name = rc.0["metadata"]["name"].as_str().unwrap().to_string();
            objs.extend(pods(&rc, "d", &format!("{name}-pod"), 3));
            objs.push(rc.clone());
            cases.push((rc, p));
        }
    }
    let g = graph(&objs);
    let ids: Vec<(NodeId, Option<Cascade>)> = cases.iter().map(|(rc, p)| (id(&g, rc), *p)).collect();
    let o = run_with(&g, None, |s| {
        for (n, p) in ids {
            s.delete(n, "client", p);
        }
    });
    assert_eq!(o.count("ReplicationController/"), 0);
    assert_eq!(o.count("Pod/"), 2 * 4 * 3, "pods of c1, c2, c4, c5 remain");
    assert_eq!(o.count("Pod/d/c3-"), 0, "c3's pods are deleted");
    assert!(o.left.values().all(|(_, _, owners)| owners.is_empty()), "no RC uid is left in any pod");
}

#[test]
fn i4_orphaning() {
    let rc = obj("v1", "ReplicationController", Some("d"), "rc1");
    let mut objs = pods(&rc, "d", "pod", 3);
    objs.push(rc.clone());
    let g = graph(&objs);
    let o = delete(&g, &rc, Some(Cascade::Orphan));
    assert!(o.gone("ReplicationController/d/rc1"));
    for i in 0..3 {
        assert!(o.owners(&format!("Pod/d/pod-{i}")).is_empty());
    }
    assert_eq!(o.plan.result.owner_refs_removed.len(), 3);
}

#[test]
fn i5_solid_owner_does_not_block_waiting_owner() {
    let rc1 = obj("v1", "ReplicationController", Some("d"), "rc1");
    let rc2 = obj("v1", "ReplicationController", Some("d"), "rc2");
    let pod = obj("v1", "Pod", Some("d"), "pod").owned_by(&rc1, None, Some(true)).owned_by(&rc2, None, None);
    let g = graph(&[rc1.clone(), rc2, pod]);
    let o = delete(&g, &rc1, Some(Cascade::Foreground));
    assert!(o.gone("ReplicationController/d/rc1"));
    assert_eq!(o.owners("Pod/d/pod"), ["rc2"]);
    assert!(!o.deleting("Pod/d/pod"));
    assert!(o.blocked.is_empty());
}

#[test]
fn i6_non_blocking_owner_ref_does_not_block() {
    let rc1 = obj("v1", "ReplicationController", Some("d"), "rc1");
    let pod1 = obj("v1", "Pod", Some("d"), "pod1").owned_by(&rc1, None, None).fin(&["x/y"]);
    let pod2 = obj("v1", "Pod", Some("d"), "pod2").owned_by(&rc1, None, Some(false)).fin(&["x/y"]);
    let g = graph(&[rc1.clone(), pod1, pod2]);
    let o = delete(&g, &rc1, Some(Cascade::Foreground));
    assert!(o.gone("ReplicationController/d/rc1"));
    for p in ["Pod/d/pod1", "Pod/d/pod2"] {
        assert!(o.deleting(p), "{p} gets a deletionTimestamp");
        assert_eq!(o.finalizers(p), ["x/y"]);
    }
    assert_eq!(o.blocked, ["Pod/d/pod1", "Pod/d/pod2"]);
}

#[test]
fn i7_double_deletion_with_finalizer() {
    let lucy = obj("v1", "Pod", Some("d"), "lucy").fin(&["x/y"]);
    let g = graph(std::slice::from_ref(&lucy));
    let n = id(&g, &lucy);
    let now: Timestamp = NOW.parse().unwrap();
    let lv = Liveness::new(&g, now);
    let mut sim = Simulation::new(&g, &lv, None, now);
    sim.delete(n, "client", Some(Cascade::Foreground));
    sim.run();
    assert_eq!(sim.world.finalizers_of(n), ["x/y"], "(1) the GC removes foregroundDeletion");
    sim.delete(n, "client", Some(Cascade::Foreground));
    let before = sim.world.steps.len();
    sim.run();
    assert_eq!(sim.world.finalizers_of(n), ["x/y"], "(2) added again, removed again");
    assert!(
        sim.world.steps[before..]
            .iter()
            .any(|s| s.action == Action::RemoveFinalizer { finalizer: "foregroundDeletion".into() })
    );
    sim.remove_finalizer(n, "x/y", "client");
    sim.run();
    assert!(!sim.world.stored(n), "(3) the pod is gone");
}

#[test]
fn i8_blocking_owner_ref_does_block() {
    let rc1 = obj("v1", "ReplicationController", Some("d"), "rc1");
    let pod = obj("v1", "Pod", Some("d"), "pod").owned_by(&rc1, None, Some(true)).fin(&["x/y"]);
    let g = graph(&[rc1.clone(), pod]);
    let o = delete(&g, &rc1, Some(Cascade::Foreground));
    assert!(o.exists("ReplicationController/d/rc1"));
    assert!(o.deleting("ReplicationController/d/rc1"));
    assert_eq!(o.finalizers("ReplicationController/d/rc1"), ["foregroundDeletion"]);
    assert!(o.deleting("Pod/d/pod"));
    assert_eq!(sorted(&o.blocked), ["Pod/d/pod", "ReplicationController/d/rc1"]);
}

#[test]
fn i9_custom_resource_cascading_deletion() {
    let c = crd("example.com", "Foo", "foos", "Namespaced");
    let owner = obj("example.com/v1", "Foo", Some("d"), "owner");
    let dep = obj("example.com/v1", "Foo", Some("d"), "dependent").owned_by(&owner, None, None);
    let g = graph(&[c, owner.clone(), dep]);
    let o = delete(&g, &owner, Some(Cascade::Foreground));
    assert!(o.gone("Foo/d/owner") && o.gone("Foo/d/dependent"));
}

#[test]
fn i10_mixed_relationships() {
    let c = crd("example.com", "Foo", "foos", "Namespaced");
    let cr_owner = obj("example.com/v1", "Foo", Some("d"), "cr-owner");
    let cm_dep = obj("v1", "ConfigMap", Some("d"), "cm-dependent").owned_by(&cr_owner, None, None);
    let cm_owner = obj("v1", "ConfigMap", Some("d"), "cm-owner");
    let cr_dep = obj("example.com/v1", "Foo", Some("d"), "cr-dependent").owned_by(&cm_owner, None, None);
    let g = graph(&[c, cr_owner.clone(), cm_dep, cm_owner.clone(), cr_dep]);
    let o = delete(&g, &cr_owner, Some(Cascade::Foreground));
    assert_eq!(o.removed.len(), 2);
    assert!(o.gone("Foo/d/cr-owner") && o.gone("ConfigMap/d/cm-dependent"));
    let o = delete(&g, &cm_owner, Some(Cascade::Foreground));
    assert_eq!(o.removed.len(), 2);
    assert!(o.gone("ConfigMap/d/cm-owner") && o.gone("Foo/d/cr-dependent"));
}

#[test]
fn i11_crd_deletion_cascading() {
    let c = crd("example.com", "Foo", "foos", "Namespaced");
    let owner = obj("example.com/v1", "Foo", Some("d"), "owner");
    let cm = obj("v1", "ConfigMap", Some("d"), "dependent").owned_by(&owner, None, None);
    let g = graph(&[c.clone(), owner, cm]);
    let o = delete(&g, &c, Some(Cascade::Background));
    assert!(o.gone("CustomResourceDefinition//foos.example.com"));
    assert!(o.gone("Foo/d/owner") && o.gone("ConfigMap/d/dependent"));
    let (cr, cm, crd_at) = (
        o.removed_at(&g, "Foo/d/owner"),
        o.removed_at(&g, "ConfigMap/d/dependent"),
        o.removed_at(&g, "CustomResourceDefinition//foos.example.com"),
    );
    assert!(cr < cm && cm < crd_at, "the CR goes (CRD finalizer), then the ConfigMap (GC), then the CRD");
}

#[test]
fn i12_cascading_delete_despite_an_unsyncable_crd() {
    // A CRD the GC cannot watch does not stop it elsewhere.
    let broken = crd("broken.example.com", "Bar", "bars", "Namespaced");
    let rc1 = obj("v1", "ReplicationController", Some("d"), "rc1");
    let pod = obj("v1", "Pod", Some("d"), "pod").owned_by(&rc1, None, None);
    let g = graph(&[broken, rc1.clone(), pod]);
    let o = delete(&g, &rc1, Some(Cascade::Background));
    assert!(o.gone("Pod/d/pod"));
}

#[test]
fn i13_cross_namespace_references() {
    let parent = obj("v1", "ConfigMap", Some("b"), "parent");
    let mut objs = vec![parent.clone()];
    for i in 0..10 {
        objs.push(obj("v1", "Secret", Some("b"), &format!("child-{i}")).owned_by(&parent, Some(false), None));
    }
    let bad = |o: Obj| o.owner_ref("v1", "Pod", "invalid", &parent.uid(), Some(false), None);
    for i in 0..5 {
        for o in [
            obj("v1", "ConfigMap", Some("a"), &format!("invalid-child-{i}")),
            obj("v1", "Secret", Some("a"), &format!("invalid-child-a-{i}")),
        ] {
            let mut o = o;
            for k in 0..25 {
                o = o.owner_ref("test/v1", &format!("invalid{k}"), "invalid", &format!("invalid-uid-{k}"), None, None);
            }
            objs.push(bad(o));
        }
        objs.push(bad(obj("v1", "Secret", Some("a"), &format!("invalid-child-b-{i}"))).set(
            "metadata",
            "labels",
            json!({"single-bad-reference": "true"}),
        ));
    }
    let g = graph(&objs);
    let o = run_with(&g, None, |s| s.observe_all());
    assert_eq!(o.count("Secret/a/invalid-child-b-"), 0, "the single-bad-ref secrets are deleted");
    assert_eq!(o.count("Secret/b/child-"), 10, "the valid children remain");
    assert!(o.exists("ConfigMap/b/parent"));
    assert_eq!(o.count("ConfigMap/a/invalid-child-"), 5, "26-ref objects remain (§6.9)");
    assert_eq!(o.count("Secret/a/invalid-child-a-"), 5);
    assert!(o.plan.notes.iter().any(|n| n.contains("no REST mapping")), "{:?}", o.plan.notes);
}

#[test]
fn i14_cluster_scoped_owners() {
    let pv = obj("v1", "PersistentVolume", None, "pv-valid");
    let valid = obj("v1", "ConfigMap", Some("d"), "cm-valid").owned_by(&pv, None, None);
    let missing = obj("v1", "ConfigMap", Some("d"), "cm-missing").owner_ref(
        "v1",
        "PersistentVolume",
        "missing-name",
        "missing-uid",
        None,
        None,
    );
    let invalid = obj("v1", "ConfigMap", Some("d"), "cm-invalid").owner_ref(
        "unknown.group/v1",
        "UnknownType",
        "invalid-name",
        "invalid-uid",
        None,
        None,
    );
    let g = graph(&[pv, valid, missing, invalid]);
    let o = run_with(&g, None, |s| s.observe_all());
    assert!(o.gone("ConfigMap/d/cm-missing"));
    assert!(o.exists("ConfigMap/d/cm-valid") && o.exists("ConfigMap/d/cm-invalid"));
}

// ----- §7.3 e2e tests ---------------------------------------------------------------------

fn rc_with_running_pods(name: &str, n: usize) -> (Obj, Vec<Obj>) {
    let rc = obj("v1", "ReplicationController", Some("e2e"), name);
    let pods = (0..n)
        .map(|i| obj("v1", "Pod", Some("e2e"), &format!("{name}-{i}")).controlled_by(&rc).on_node("node-1"))
        .collect();
    (rc, pods)
}

#[test]
fn e1_delete_pods_created_by_rc_when_not_orphaning() {
    let (rc, mut objs) = rc_with_running_pods("rc", 2);
    objs.extend([rc.clone(), ready_node("node-1")]);
    let g = graph(&objs);
    let o = delete(&g, &rc, Some(Cascade::Background));
    assert_eq!(o.count("ReplicationController/"), 0);
    assert_eq!(o.count("Pod/"), 0);
    assert!(o.plan.steps.iter().any(|s| s.actor == "kubelet"), "running pods leave through the kubelet");
}

#[test]
fn e2_orphan_pods_created_by_rc_if_delete_options_say_so() {
    let (rc, mut objs) = rc_with_running_pods("rc", 10);
    objs.extend([rc.clone(), ready_node("node-1")]);
    let g = graph(&objs);
    let o = delete(&g, &rc, Some(Cascade::Orphan));
    assert_eq!(o.count("ReplicationController/"), 0);
    assert_eq!(o.count("Pod/"), 10);
}

#[test]
fn e3_orphan_pods_created_by_rc_if_no_policy() {
    let (rc, mut objs) = rc_with_running_pods("rc", 2);
    objs.extend([rc.clone(), ready_node("node-1")]);
    let g = graph(&objs);
    let o = delete(&g, &rc, None);
    assert_eq!(o.count("ReplicationController/"), 0);
    assert_eq!(o.count("Pod/"), 2, "v1 RC defaults to Orphan (§2.3)");
}

fn deployment(ns: &str) -> (Obj, Obj, Vec<Obj>) {
    let d = obj("apps/v1", "Deployment", Some(ns), "web");
    let rs = obj("apps/v1", "ReplicaSet", Some(ns), "web-1").controlled_by(&d);
    let pods = (0..2)
        .map(|i| obj("v1", "Pod", Some(ns), &format!("web-1-{i}")).controlled_by(&rs).on_node("node-1"))
        .collect();
    (d, rs, pods)
}

#[test]
fn e4_delete_rs_created_by_deployment_when_not_orphaning() {
    let (d, rs, mut objs) = deployment("e2e");
    objs.extend([d.clone(), rs, ready_node("node-1")]);
    let g = graph(&objs);
    let o = delete(&g, &d, Some(Cascade::Background));
    assert_eq!(o.count("Deployment/") + o.count("ReplicaSet/") + o.count("Pod/"), 0);
}

#[test]
fn e5_orphan_rs_created_by_deployment() {
    let (d, rs, mut objs) = deployment("e2e");
    objs.extend([d.clone(), rs, ready_node("node-1")]);
    let g = graph(&objs);
    let o = delete(&g, &d, Some(Cascade::Orphan));
    assert_eq!((o.count("Deployment/"), o.count("ReplicaSet/"), o.count("Pod/")), (0, 1, 2));
    assert!(o.owners("ReplicaSet/e2e/web-1").is_empty(), "the RS has no controller ownerRef");
}

#[test]
fn e6_keep_rc_until_all_pods_deleted() {
    let (rc, mut objs) = rc_with_running_pods("rc", 10);
    objs.extend([rc.clone(), ready_node("node-1")]);
    let g = graph(&objs);
    let o = delete(&g, &rc, Some(Cascade::Foreground));
    assert_eq!(o.count("Pod/"), 0);
    let rc_at = o.removed_at(&g, "ReplicationController/e2e/rc");
    for i in 0..10 {
        assert!(o.removed_at(&g, &format!("Pod/e2e/rc-{i}")) < rc_at);
    }
}

#[test]
fn e7_dependents_with_valid_and_waiting_owner_stay() {
    let (rc1, pods1) = rc_with_running_pods("rc1", 6);
    let rc2 = obj("v1", "ReplicationController", Some("e2e"), "rc2");
    let mut objs: Vec<Obj> =
        pods1.into_iter().enumerate().map(|(i, p)| if i % 2 == 0 { p.owned_by(&rc2, None, None) } else { p }).collect();
    objs.extend([rc1.clone(), rc2, ready_node("node-1")]);
    let g = graph(&objs);
    let o = delete(&g, &rc1, Some(Cascade::Foreground));
    assert!(o.gone("ReplicationController/e2e/rc1"));
    assert_eq!(o.count("Pod/"), 3);
    for i in [0, 2, 4] {
        let k = format!("Pod/e2e/rc1-{i}");
        assert!(!o.deleting(&k), "{k} has no deletionTimestamp");
        assert_eq!(o.owners(&k), ["rc2"]);
    }
}

#[test]
fn e8_not_blocked_by_dependency_circle() {
    let p1 = obj("v1", "Pod", Some("e2e"), "pod1");
    let p2 = obj("v1", "Pod", Some("e2e"), "pod2");
    let p3 = obj("v1", "Pod", Some("e2e"), "pod3");
    let objs = [
        p1.clone().controlled_by(&p3).on_node("node-1"),
        p2.clone().controlled_by(&p1).on_node("node-1"),
        p3.clone().controlled_by(&p2).on_node("node-1"),
        ready_node("node-1"),
    ];
    let g = graph(&objs);
    let o = delete(&g, &p1, Some(Cascade::Foreground));
    assert_eq!(o.count("Pod/"), 0, "{:?}", o.blocked);
    assert!(o.plan.steps.iter().any(|s| matches!(s.action, Action::UnblockOwnerReferences { .. })));
    assert!(o.plan.notes.iter().any(|n| n.contains("cycle")));
}

fn cluster_crs() -> (Obj, Obj, Obj) {
    let c = crd("example.com", "Baz", "bazs", "Cluster");
    let owner = obj("example.com/v1", "Baz", None, "owner");
    let dep = obj("example.com/v1", "Baz", None, "dependent").owned_by(&owner, None, None);
    (c, owner, dep)
}

#[test]
fn e9_cascading_deletion_of_custom_resources() {
    let (c, owner, dep) = cluster_crs();
    let g = graph(&[c, owner.clone(), dep]);
    let o = delete(&g, &owner, Some(Cascade::Background));
    assert!(o.gone("Baz//owner") && o.gone("Baz//dependent"));
}

#[test]
fn e10_orphan_deletion_of_custom_resources() {
    let (c, owner, dep) = cluster_crs();
    let g = graph(&[c, owner.clone(), dep]);
    let o = delete(&g, &owner, Some(Cascade::Orphan));
    assert!(o.gone("Baz//owner"));
    assert!(o.exists("Baz//dependent"));
    assert!(o.owners("Baz//dependent").is_empty());
}

#[test]
fn e11_delete_jobs_and_pods_created_by_cronjob() {
    let cj = obj("batch/v1", "CronJob", Some("e2e"), "cj");
    let job = obj("batch/v1", "Job", Some("e2e"), "cj-1").controlled_by(&cj);
    let pod = obj("v1", "Pod", Some("e2e"), "cj-1-x")
        .controlled_by(&job)
        .on_node("node-1")
        .fin(&["batch.kubernetes.io/job-tracking"]);
    let g = graph(&[cj.clone(), job, pod, ready_node("node-1")]);
    let o = delete(&g, &cj, Some(Cascade::Background));
    assert_eq!(o.count("CronJob/") + o.count("Job/") + o.count("Pod/"), 0, "{:?}", o.blocked);
    assert!(
        o.plan
            .steps
            .iter()
            .any(|s| s.action == Action::RemoveFinalizer { finalizer: "batch.kubernetes.io/job-tracking".into() })
    );
}

// ----- §7.4 namespace tests ---------------------------------------------------------------

fn terminating_namespace(name: &str) -> Obj {
    namespace(name).deleting("2026-11-29T11:00:00Z").set("status", "phase", json!("Terminating"))
}

#[test]
fn n1_pending_finalize_deletes_content_then_finalizes() {
    let ns = terminating_namespace("n1");
    let cm = obj("v1", "ConfigMap", Some("n1"), "cm");
    let pod = obj("v1", "Pod", Some("n1"), "pod").on_node("node-1");
    let g = graph(&[ns.clone(), cm, pod, ready_node("node-1")]);
    let o = delete(&g, &ns, Some(Cascade::Background));
    assert!(o.gone("Namespace//n1") && o.gone("ConfigMap/n1/cm") && o.gone("Pod/n1/pod"));
    assert!(
        o.plan.steps.iter().any(|s| s.actor == "namespace-controller"
            && s.action == Action::RemoveFinalizer { finalizer: "kubernetes".into() })
    );
    assert!(o.removed_at(&g, "Pod/n1/pod") < o.removed_at(&g, "ConfigMap/n1/cm"), "pods first");
}

#[test]
fn n1_complete_finalize_and_discovery_error() {
    // spec.finalizers empty: the next DELETE goes through the generic store and removes it
    let ns = terminating_namespace("done").set("spec", "finalizers", json!([]));
    let g = graph(std::slice::from_ref(&ns));
    let o = delete(&g, &ns, Some(Cascade::Background));
    assert!(o.gone("Namespace//done"));
    assert!(!o.plan.steps.iter().any(|s| s.actor == "namespace-controller"));

    // discovery error with pending finalizers: content is still deleted, no finalize
    let ns = terminating_namespace("broken").set(
        "status",
        "conditions",
        json!([{"type": "NamespaceDeletionDiscoveryFailure", "status": "True", "message": "metrics.k8s.io/v1beta1 failing"}]),
    );
    let cm = obj("v1", "ConfigMap", Some("broken"), "cm");
    let g = graph(&[ns.clone(), cm]);
    let o = delete(&g, &ns, Some(Cascade::Background));
    assert!(o.gone("ConfigMap/broken/cm"));
    assert_eq!(o.blocked, ["Namespace//broken"]);
    assert!(o.plan.result.blocked[0].reason.contains("discovery fails"));
    assert_eq!(o.finalizers("Namespace//broken"), Vec::<String>::new());
}

#[test]
fn n2_active_namespace_is_left_alone() {
    let ns = namespace("active");
    let cm = obj("v1", "ConfigMap", Some("active"), "cm");
    let g = graph(&[ns, cm]);
    let o = run_with(&g, None, |_| {});
    assert!(o.plan.steps.is_empty());
    assert!(o.exists("Namespace//active") && o.exists("ConfigMap/active/cm"));
}

#[test]
fn n3_resource_without_objects_or_delete_support_does_not_block() {
    // A served type with no objects in the namespace: the controller's deletecollection /
    // list find nothing, which is not an error.
    let c = crd("example.com", "Foo", "foos", "Namespaced");
    let ns = namespace("n3");
    let g = graph(&[c, ns.clone()]);
    let o = delete(&g, &ns, Some(Cascade::Background));
    assert!(o.gone("Namespace//n3"));
    assert!(o.blocked.is_empty());
}

/// A namespace holding a pod that cannot go (its finalizer's controller is gone) and a
/// ConfigMap, planned against a server of `version`.
fn namespace_with_a_stuck_pod(version: &str) -> (Graph, Outcome) {
    let ns = namespace("n5");
    let pod = obj("v1", "Pod", Some("n5"), "pod").on_node("node-1").fin(&["e2e.example.com/finalizer"]);
    let cm = obj("v1", "ConfigMap", Some("n5"), "cm");
    let g = graph_at(version, &[ns.clone(), pod, cm, ready_node("node-1")]);
    let o = delete(&g, &ns, Some(Cascade::Background));
    (g, o)
}

#[test]
fn ordered_namespace_deletion_follows_the_servers_version() {
    // 1.34: ordered deletion is locked on; the ConfigMap is not even attempted
    let (g, o) = namespace_with_a_stuck_pod("v1.34.1");
    assert!(o.deleting("Pod/n5/pod"));
    assert!(o.exists("ConfigMap/n5/cm") && !o.deleting("ConfigMap/n5/cm"));
    assert_eq!(o.blocked, ["Namespace//n5", "Pod/n5/pod"]);
    let ns = id(&g, &namespace("n5"));
    let why = &o.plan.result.blocked.iter().find(|b| b.object == ns).expect("the namespace is blocked").reason;
    assert!(why.contains("pods are deleted first"), "{why}");
    assert!(o.plan.notes.iter().any(|n| n.contains("pods first") && n.contains("v1.34.1")), "{:?}", o.plan.notes);
    // 1.32: one wave; the ConfigMap goes while the pod stays
    let (g, o) = namespace_with_a_stuck_pod("v1.32.9");
    assert!(o.deleting("Pod/n5/pod"));
    assert!(o.gone("ConfigMap/n5/cm"), "before 1.33 the rest is deleted in the same pass");
    assert_eq!(o.blocked, ["Namespace//n5", "Pod/n5/pod"]);
    assert!(o.removed_at(&g, "ConfigMap/n5/cm") > 0);
    assert!(o.plan.notes.iter().any(|n| n.contains("one wave") && n.contains("v1.32.9")), "{:?}", o.plan.notes);
}

#[test]
fn n4_pods_are_deleted_first() {
    let ns = namespace("n4");
    let pod = obj("v1", "Pod", Some("n4"), "pod").on_node("node-1").fin(&["e2e.example.com/finalizer"]);
    let cm = obj("v1", "ConfigMap", Some("n4"), "cm");
    let g = graph(&[ns.clone(), pod.clone(), cm, ready_node("node-1")]);
    let o = delete(&g, &ns, Some(Cascade::Background));
    assert!(o.deleting("Pod/n4/pod"));
    assert!(
        o.exists("ConfigMap/n4/cm") && !o.deleting("ConfigMap/n4/cm"),
        "nothing else is deleted while a pod remains"
    );
    assert_eq!(o.blocked, ["Namespace//n4", "Pod/n4/pod"]);

    // once the pod's finalizer is removed, the pod goes, then the rest, then the namespace
    let (nsid, podid) = (id(&g, &ns), id(&g, &pod));
    let o = run_with(&g, None, |s| {
        s.delete(nsid, "client", Some(Cascade::Background));
        s.run();
        s.remove_finalizer(podid, "e2e.example.com/finalizer", "client");
    });
    assert!(o.gone("Pod/n4/pod") && o.gone("ConfigMap/n4/cm") && o.gone("Namespace//n4"));
    assert!(o.removed_at(&g, "Pod/n4/pod") < o.removed_at(&g, "ConfigMap/n4/cm"));
    assert!(o.blocked.is_empty());
}

// ----- edge cases found along the way ----------------------------------------------------

#[test]
fn self_owner_with_block_waits_for_itself_in_foreground() {
    // processDeletingDependentsItem lists the object as its own blocking dependent and never
    // enqueues it (it is deletingDependents): the real GC hangs here too.
    let x = obj("v1", "ConfigMap", Some("d"), "x");
    let x = x.clone().owned_by(&x, None, Some(true));
    let g = graph(std::slice::from_ref(&x));
    let o = delete(&g, &x, Some(Cascade::Foreground));
    assert_eq!(o.blocked, ["ConfigMap/d/x"]);
    let o = delete(&g, &x, Some(Cascade::Background));
    assert!(o.gone("ConfigMap/d/x"));
}

#[test]
fn re_delete_with_background_unsticks_a_foreground_deletion() {
    // §2.5: the GC finalizers are recomputed from the new request
    let owner =
        obj("v1", "ConfigMap", Some("d"), "owner").fin(&["foregroundDeletion"]).deleting("2026-11-29T10:00:00Z");
    let dep = obj("v1", "ConfigMap", Some("d"), "dep")
        .owned_by(&owner, None, Some(true))
        .fin(&["x/y"])
        .deleting("2026-11-29T10:00:00Z");
    let g = graph(&[owner.clone(), dep]);
    let o = delete(&g, &owner, Some(Cascade::Foreground));
    assert_eq!(sorted(&o.blocked), ["ConfigMap/d/dep", "ConfigMap/d/owner"]);
    let o = delete(&g, &owner, Some(Cascade::Background));
    assert!(o.gone("ConfigMap/d/owner"));
    assert_eq!(o.blocked, ["ConfigMap/d/dep"]);
}

#[test]
fn pvc_protection_waits_for_the_pod_and_pods_on_a_lost_node_block() {
    let pvc = obj("v1", "PersistentVolumeClaim", Some("d"), "data").fin(&["kubernetes.io/pvc-protection"]);
    let pod = obj("v1", "Pod", Some("d"), "db").on_node("node-1").set(
        "spec",
        "volumes",
        json!([{"name": "v", "persistentVolumeClaim": {"claimName": "data"}}]),
    );
    let ns = namespace("d");
    // the node is Ready: the pod leaves, then the claim
    let g = graph(&[ns.clone(), pvc.clone(), pod.clone(), ready_node("node-1")]);
    let o = delete(&g, &ns, Some(Cascade::Background));
    assert!(o.gone("PersistentVolumeClaim/d/data") && o.gone("Pod/d/db") && o.gone("Namespace//d"));
    // no such node: the pod stays Terminating, so does everything after it
    let g = graph(&[ns.clone(), pvc, pod]);
    let o = delete(&g, &ns, Some(Cascade::Background));
    assert_eq!(o.blocked, ["Namespace//d", "Pod/d/db"]);
    assert!(o.exists("PersistentVolumeClaim/d/data") && !o.deleting("PersistentVolumeClaim/d/data"));
}

fn sorted(v: &[String]) -> Vec<String> {
    let mut v = v.to_vec();
    v.sort();
    v
}

// ----- admission and conversion webhooks in front of the plan's requests ------------------

/// A ValidatingWebhookConfiguration `name` whose one webhook intercepts `ops` on `resources`
/// of `group`, calls Service hooks/hook, with `failure_policy`.
fn webhook(name: &str, group: &str, resources: &[&str], ops: &[&str], failure_policy: &str) -> Obj {
    obj("admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration", None, name).set(
        "",
        "webhooks",
        json!([{
            "name": format!("{name}.hooks.example.com"),
            "failurePolicy": failure_policy,
            "rules": [{"apiGroups": [group], "apiVersions": ["*"], "operations": ops, "resources": resources}],
            "clientConfig": {"service": {"namespace": "hooks", "name": "hook"}},
            "sideEffects": "None",
            "admissionReviewVersions": ["v1"]
        }]),
    )
}

/// Service hooks/hook and an EndpointSlice with one endpoint, ready or not.
fn hook_backend(ready: bool) -> Vec<Obj> {
    let svc = obj("v1", "Service", Some("hooks"), "hook").set("spec", "type", json!("ClusterIP"));
    let slice = obj("discovery.k8s.io/v1", "EndpointSlice", Some("hooks"), "hook-x1")
        .set("metadata", "labels", json!({"kubernetes.io/service-name": "hook"}))
        .set("", "endpoints", json!([{"addresses": ["10.0.0.7"], "conditions": {"ready": ready}}]));
    vec![namespace("hooks"), svc, slice]
}

pub fn blocked_reason(o: &Outcome, g: &Graph, key: &str) -> String {
    o.plan
        .result
        .blocked
        .iter()
        .find(|b| ObjRef::of_node(g, b.object).key() == key)
        .unwrap_or_else(|| panic!("{key} is not blocked: {:?}", o.blocked))
        .reason
        .clone()
}

#[test]
fn a_dead_delete_webhook_rejects_the_gcs_delete_and_the_foreground_owner_waits() {
    let rs = obj("apps/v1", "ReplicaSet", Some("d"), "rs");
    let pod = obj("v1", "Pod", Some("d"), "pod").controlled_by(&rs);
    let mut objs = vec![namespace("d"), rs.clone(), pod, webhook("pod-guard", "", &["pods"], &["DELETE"], "Fail")];
    // the Service's pods are gone: its only endpoint is not ready
    objs.extend(hook_backend(false));
    let g = graph(&objs);
    let o = delete(&g, &rs, Some(Cascade::Foreground));
    assert!(o.exists("Pod/d/pod") && !o.deleting("Pod/d/pod"), "{:?}", o.left);
    assert!(o.deleting("ReplicaSet/d/rs"));
    assert_eq!(sorted(&o.blocked), ["Pod/d/pod", "ReplicaSet/d/rs"]);
    let pod_why = blocked_reason(&o, &g, "Pod/d/pod");
    assert!(pod_why.contains("garbage-collector's DELETE is rejected"), "{pod_why}");
    assert!(pod_why.contains("ValidatingWebhookConfiguration pod-guard"), "{pod_why}");
    assert!(pod_why.contains("Service hooks/hook has no ready endpoint"), "{pod_why}");
    let rs_why = blocked_reason(&o, &g, "ReplicaSet/d/rs");
    assert!(rs_why.contains("waits for blocking dependent(s) Pod d/pod"), "{rs_why}");
    assert!(rs_why.contains("rejected by ValidatingWebhookConfiguration pod-guard"), "{rs_why}");
    let step = o.plan.steps.iter().find(|s| matches!(s.action, Action::Blocked { .. }) && s.actor == "kube-apiserver");
    assert!(step.is_some(), "{:?}", o.plan.steps);
}

#[test]
fn a_dead_update_webhook_rejects_a_finalizer_removal_even_when_controllers_are_assumed_to_act() {
    let cm = obj("v1", "ConfigMap", Some("d"), "cm").fin(&["example.com/cleanup"]).deleting("2026-11-29T11:00:00Z");
    let mut objs = vec![namespace("d"), cm.clone(), webhook("cm-guard", "", &["configmaps"], &["UPDATE"], "Fail")];
    objs.extend(hook_backend(false));
    let g = graph(&objs);
    let t = id(&g, &cm);
    let o = run_with(&g, Some(AssumeFinalizers::Removed), |s| s.delete(t, "kubectl", Some(Cascade::Background)));
    assert_eq!(o.blocked, ["ConfigMap/d/cm"]);
    assert_eq!(o.finalizers("ConfigMap/d/cm"), ["example.com/cleanup"]);
    let why = blocked_reason(&o, &g, "ConfigMap/d/cm");
    assert!(why.contains("UPDATE removing finalizer example.com/cleanup is rejected"), "{why}");
    assert!(why.contains("cm-guard"), "{why}");
    assert!(
        o.plan.steps.iter().any(|s| s.action
            == Action::Blocked { finalizer: Some("example.com/cleanup".into()), reason: why.clone() }
            && s.actor == "kube-apiserver")
    );
    assert!(!o.plan.steps.iter().any(|s| matches!(s.action, Action::RemoveFinalizer { .. })));
}

#[test]
fn an_ignore_webhook_or_a_live_backend_lets_the_requests_through() {
    let cm = obj("v1", "ConfigMap", Some("d"), "cm").fin(&["example.com/cleanup"]);
    let rs = obj("apps/v1", "ReplicaSet", Some("d"), "rs");
    let pod = obj("v1", "Pod", Some("d"), "pod").controlled_by(&rs);
    for (policy, ready) in [("Ignore", false), ("Fail", true)] {
        let mut objs = vec![
            namespace("d"),
            cm.clone(),
            rs.clone(),
            pod.clone(),
            webhook("guard", "", &["configmaps", "pods"], &["UPDATE", "DELETE"], policy),
        ];
        objs.extend(hook_backend(ready));
        let g = graph(&objs);
        let (c, r) = (id(&g, &cm), id(&g, &rs));
        let o = run_with(&g, Some(AssumeFinalizers::Removed), |s| {
            s.delete(c, "kubectl", Some(Cascade::Background));
            s.delete(r, "kubectl", Some(Cascade::Foreground));
        });
        assert!(o.blocked.is_empty(), "{policy}, ready {ready}: {:?}", o.plan.result.blocked);
        assert!(o.gone("ConfigMap/d/cm") && o.gone("Pod/d/pod") && o.gone("ReplicaSet/d/rs"), "{:?}", o.left);
    }
}

#[test]
fn a_dead_webhook_that_may_not_match_blocks_and_says_may() {
    let cm = obj("v1", "ConfigMap", Some("d"), "cm").fin(&["example.com/cleanup"]).deleting("2026-11-29T11:00:00Z");
    let mut hook = webhook("cel-guard", "", &["configmaps"], &["UPDATE"], "Fail");
    hook.0["webhooks"][0]["matchConditions"] =
        json!([{"name": "only-prod", "expression": "object.metadata.name.startsWith('prod')"}]);
    let mut objs = vec![namespace("d"), cm.clone(), hook];
    objs.extend(hook_backend(false));
    let g = graph(&objs);
    let t = id(&g, &cm);
    let o = run_with(&g, Some(AssumeFinalizers::Removed), |s| s.delete(t, "kubectl", Some(Cascade::Background)));
    let why = blocked_reason(&o, &g, "ConfigMap/d/cm");
    assert!(why.contains("may be rejected") && why.contains("only-prod"), "{why}");
    assert!(
        o.plan.notes.iter().any(|n| n.contains("may or may not intercept") && n.contains("cel-guard")),
        "{:?}",
        o.plan.notes
    );
}

#[test]
fn a_url_webhook_does_not_block_but_is_noted() {
    let cm = obj("v1", "ConfigMap", Some("d"), "cm").fin(&["example.com/cleanup"]).deleting("2026-11-29T11:00:00Z");
    let mut hook = webhook("far-guard", "", &["configmaps"], &["UPDATE"], "Fail");
    hook.0["webhooks"][0]["clientConfig"] = json!({"url": "https://guard.example.com/validate"});
    let g = graph(&[namespace("d"), cm.clone(), hook]);
    let t = id(&g, &cm);
    let o = run_with(&g, Some(AssumeFinalizers::Removed), |s| s.delete(t, "kubectl", Some(Cascade::Background)));
    assert!(o.gone("ConfigMap/d/cm"), "{:?}", o.plan.result.blocked);
    assert!(
        o.plan.notes.iter().any(|n| n.contains("far-guard") && n.contains("https://guard.example.com/validate")),
        "{:?}",
        o.plan.notes
    );
}

#[test]
fn a_webhook_whose_backend_the_plan_deletes_rejects_what_comes_after() {
    // deleting namespace hooks, which runs the webhook that guards its own ConfigMaps
    let cm = obj("v1", "ConfigMap", Some("hooks"), "cm");
    let mut objs = vec![cm, webhook("self-guard", "", &["configmaps"], &["DELETE"], "Fail")];
    objs.extend(hook_backend(true));
    let g = graph(&objs);
    let ns = id(&g, &namespace("hooks"));
    let o = run_with(&g, None, |s| s.delete(ns, "kubectl", Some(Cascade::Background)));
    assert!(o.exists("ConfigMap/hooks/cm"), "{:?}", o.left);
    let why = blocked_reason(&o, &g, "ConfigMap/hooks/cm");
    assert!(why.contains("namespace-controller's DELETE is rejected") && why.contains("by this plan"), "{why}");
    let ns_why = blocked_reason(&o, &g, "Namespace//hooks");
    assert!(ns_why.contains("content remains: ConfigMap hooks/cm"), "{ns_why}");
    assert!(o.plan.notes.iter().any(|n| n.contains("self-guard") && n.contains("racy")), "{:?}", o.plan.notes);
}

#[test]
fn a_dead_conversion_webhook_keeps_a_namespaces_content() {
    let c = crd("shop.example.net", "Cart", "carts", "Namespaced")
        .set(
            "spec",
            "versions",
            json!([{"name": "v1", "served": true, "storage": false}, {"name": "v2", "served": true, "storage": true}]),
        )
        .set(
            "spec",
            "conversion",
            json!({"strategy": "Webhook", "webhook": {"clientConfig": {"service": {"namespace": "shop-system", "name": "conv"}}, "conversionReviewVersions": ["v1"]}}),
        )
        .set("status", "storedVersions", json!(["v1", "v2"]));
    let ns = terminating_namespace("shop");
    let cart = obj("shop.example.net/v1", "Cart", Some("shop"), "c1");
    let cm = obj("v1", "ConfigMap", Some("shop"), "cm");
    let g = graph(&[c, namespace("shop-system"), ns.clone(), cart, cm]);
    let o = delete(&g, &ns, Some(Cascade::Background));
    assert!(o.gone("ConfigMap/shop/cm"));
    assert!(o.exists("Cart/shop/c1"), "{:?}", o.left);
    assert_eq!(sorted(&o.blocked), ["Cart/shop/c1", "Namespace//shop"]);
    let why = blocked_reason(&o, &g, "Cart/shop/c1");
    assert!(why.contains("namespace-controller's DELETE fails"), "{why}");
    assert!(why.contains("CustomResourceDefinition carts.shop.example.net"), "{why}");
    assert!(why.contains("Service shop-system/conv does not exist"), "{why}");
    let ns_why = blocked_reason(&o, &g, "Namespace//shop");
    assert!(ns_why.contains("content remains: Cart shop/c1"), "{ns_why}");
}

#[test]
fn a_webhook_configuration_the_plan_deletes_rejects_nothing_afterwards() {
    // the stale configuration is deleted first (kubectl), then the pod: nothing is rejected
    let pod = obj("v1", "Pod", Some("d"), "pod");
    let hook = webhook("pod-guard", "", &["pods"], &["DELETE"], "Fail");
    let mut objs = vec![namespace("d"), pod.clone(), hook.clone()];
    objs.extend(hook_backend(false));
    let g = graph(&objs);
    let (p, h) = (id(&g, &pod), id(&g, &hook));
    let o = run_with(&g, None, |s| s.delete(p, "kubectl", Some(Cascade::Background)));
    assert_eq!(o.blocked, ["Pod/d/pod"]);
    let o = run_with(&g, None, |s| {
        s.delete(h, "kubectl", Some(Cascade::Background));
        s.delete(p, "kubectl", Some(Cascade::Background));
    });
    assert!(o.blocked.is_empty() && o.gone("Pod/d/pod"), "{:?}", o.plan.result.blocked);
}

#[test]
fn a_webhook_whose_pods_the_plan_deletes_for_good_rejects_what_comes_after() {
    let rs = obj("apps/v1", "ReplicaSet", Some("hooks"), "hook-rs");
    let pod = obj("v1", "Pod", Some("hooks"), "hook-1").controlled_by(&rs);
    let cm = obj("v1", "ConfigMap", Some("d"), "cm");
    let mut objs = vec![namespace("d"), rs.clone(), pod.clone(), cm.clone()];
    objs.push(webhook("cm-guard", "", &["configmaps"], &["DELETE"], "Fail"));
    objs.extend(hook_backend(true));
    let last = objs.len() - 1;
    objs[last].0["endpoints"][0]["targetRef"] = json!({"kind": "Pod", "namespace": "hooks", "name": "hook-1"});
    let g = graph(&objs);
    let (r, p, c) = (id(&g, &rs), id(&g, &pod), id(&g, &cm));
    // the ReplicaSet goes with its pod: nothing serves the webhook any more
    let o = run_with(&g, None, |s| {
        s.delete(r, "kubectl", Some(Cascade::Background));
        s.run();
        s.delete(c, "kubectl", Some(Cascade::Background));
    });
    assert!(o.gone("Pod/hooks/hook-1") && o.exists("ConfigMap/d/cm"), "{:?}", o.left);
    let why = blocked_reason(&o, &g, "ConfigMap/d/cm");
    assert!(why.contains("cm-guard") && why.contains("by this plan"), "{why}");
    // only the pod goes: its ReplicaSet brings up another, the webhook keeps serving
    let o = run_with(&g, None, |s| {
        s.delete(p, "kubectl", Some(Cascade::Background));
        s.run();
        s.delete(c, "kubectl", Some(Cascade::Background));
    });
    assert!(o.gone("ConfigMap/d/cm") && o.blocked.is_empty(), "{:?}", o.plan.result.blocked);
}

#[test]
fn the_kubelets_final_delete_rejected_by_a_dead_webhook_keeps_a_terminating_pod() {
    let rs = obj("apps/v1", "ReplicaSet", Some("d"), "rs");
    // deleted with a grace period: its containers stop, then the kubelet sends DELETE (grace 0)
    let pod = obj("v1", "Pod", Some("d"), "pod")
        .controlled_by(&rs)
        .on_node("node-1")
        .set("metadata", "deletionTimestamp", json!("2026-11-29T11:00:30Z"))
        .set("metadata", "deletionGracePeriodSeconds", json!(30));
    let mut objs = vec![namespace("d"), rs.clone(), pod, ready_node("node-1")];
    objs.extend(hook_backend(false));
    let g = graph(&objs);
    let o = delete(&g, &rs, Some(Cascade::Background));
    assert!(o.gone("Pod/d/pod") && o.plan.steps.iter().any(|s| s.actor == "kubelet"), "{:?}", o.left);
    objs.push(webhook("pod-guard", "", &["pods"], &["DELETE"], "Fail"));
    let g = graph(&objs);
    let o = delete(&g, &rs, Some(Cascade::Background));
    assert_eq!(o.blocked, ["Pod/d/pod"]);
    let why = blocked_reason(&o, &g, "Pod/d/pod");
    assert!(why.contains("kubelet's DELETE is rejected") && why.contains("pod-guard"), "{why}");
}

// ----- admission policies ------------------------------------------------------------------

fn keep_policy() -> Vec<Obj> {
    let p = obj("admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicy", None, "keep").set(
        "",
        "spec",
        json!({"matchConstraints": {"resourceRules": [{"apiGroups": [""], "apiVersions": ["v1"],
                   "operations": ["UPDATE"], "resources": ["configmaps"]}]},
               // who sends the request is not known: its CEL cannot be settled, it may deny
               "validations": [{"expression": "!has(oldObject.metadata.deletionTimestamp) || size(object.metadata.finalizers) > 0 || request.userInfo.username == 'system:serviceaccount:d:keeper'"}]}),
    );
    let b = obj("admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicyBinding", None, "keep-all").set(
        "",
        "spec",
        json!({"policyName": "keep", "validationActions": ["Deny"]}),
    );
    vec![p, b]
}

#[test]
fn a_policy_that_may_deny_is_a_note_and_one_seen_denying_blocks() {
    let cm = obj("v1", "ConfigMap", Some("d"), "cm").fin(&["example.com/cleanup"]).deleting("2026-11-29T11:00:00Z");
    let mut objs = vec![namespace("d"), cm.clone()];
    objs.extend(keep_policy());
    let g = graph(&objs);
    let t = id(&g, &cm);
    let o = run_with(&g, Some(AssumeFinalizers::Removed), |s| s.delete(t, "kubectl", Some(Cascade::Background)));
    assert!(o.gone("ConfigMap/d/cm"), "{:?}", o.plan.result.blocked);
    assert!(
        o.plan
            .notes
            .iter()
            .any(|n| n.contains("ValidatingAdmissionPolicy keep (binding keep-all)") && n.contains("may be rejected")),
        "{:?}",
        o.plan.notes
    );
    // the controller's Warning quotes the policy's denial: the removal is denied again
    objs.push(
        obj("v1", "Event", Some("d"), "cm.1")
            .set("", "involvedObject", json!({"kind": "ConfigMap", "namespace": "d", "name": "cm", "uid": cm.uid()}))
            .set("", "type", json!("Warning"))
            .set("", "reason", json!("FinalizerRemovalFailed"))
            .set("", "lastTimestamp", json!("2026-11-29T11:30:00Z"))
            .set("", "message", json!("ValidatingAdmissionPolicy 'keep' with binding 'keep-all' denied request: no")),
    );
    let g = graph(&objs);
    let t = id(&g, &cm);
    let o = run_with(&g, Some(AssumeFinalizers::Removed), |s| s.delete(t, "kubectl", Some(Cascade::Background)));
    assert_eq!(o.blocked, ["ConfigMap/d/cm"]);
    let why = blocked_reason(&o, &g, "ConfigMap/d/cm");
    assert!(
        why.contains("is denied") && why.contains("binding keep-all") && why.contains("denied request: no"),
        "{why}"
    );
}

#[test]
fn a_policy_on_deletes_is_a_note_once_for_all_the_content_it_may_refuse() {
    let mut objs = vec![namespace("d")];
    objs.extend((0..3).map(|i| obj("v1", "ConfigMap", Some("d"), &format!("cm-{i}"))));
    let mut keep = keep_policy();
    keep[0].0["spec"]["matchConstraints"]["resourceRules"][0]["operations"] = json!(["DELETE"]);
    keep[0].0["spec"]["validations"] = json!([{"expression": "!('keep' in oldObject.metadata.labels)"}]);
    objs.extend(keep);
    let g = graph(&objs);
    let ns = g.find("", "Namespace", None, "d").unwrap();
    let o = run_with(&g, Some(AssumeFinalizers::Removed), |s| s.delete(ns, "kubectl", Some(Cascade::Background)));
    // CEL is not evaluated: the DELETEs are taken, and the plan says once that they may be refused
    assert!(o.gone("ConfigMap/d/cm-0") && o.gone("Namespace/d"), "{:?}", o.plan.result.blocked);
    let notes: Vec<_> = o.plan.notes.iter().filter(|n| n.contains("ValidatingAdmissionPolicy keep")).collect();
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(
        notes[0].contains("DELETE requests") && notes[0].contains("its validations decide on DELETEs"),
        "{}",
        notes[0]
    );
}

#[test]
fn a_namespace_whose_policy_params_go_first_cannot_delete_the_rest() {
    // per-namespace params (a ConfigMap in the request's namespace), Warn-only, Deny when missing
    let mut objs = vec![namespace("d"), crd("ledger.example.org", "Account", "accounts", "Namespaced")];
    objs.push(obj("v1", "ConfigMap", Some("d"), "limits"));
    objs.push(obj("ledger.example.org/v1", "Account", Some("d"), "acme"));
    let mut keep = keep_policy();
    keep[0].0["spec"]["paramKind"] = json!({"apiVersion": "v1", "kind": "ConfigMap"});
    keep[0].0["spec"]["matchConstraints"]["resourceRules"] = json!([{"apiGroups": ["ledger.example.org"],
        "apiVersions": ["*"], "operations": ["DELETE"], "resources": ["accounts"]}]);
    keep[1].0["spec"]["validationActions"] = json!(["Warn"]);
    keep[1].0["spec"]["paramRef"] = json!({"name": "limits", "parameterNotFoundAction": "Deny"});
    objs.extend(keep);
    let plan = |objs: &[Obj]| {
        let g = graph(objs);
        let ns = g.find("", "Namespace", None, "d").unwrap();
        (run_with(&g, Some(AssumeFinalizers::Removed), |s| s.delete(ns, "kubectl", Some(Cascade::Background))), g)
    };
    let (o, g) = plan(&objs);
    // the ConfigMap goes, then the Account's DELETE fails to configure: the namespace stays
    assert!(o.gone("ConfigMap/d/limits"), "{:?}", o.plan.result.blocked);
    assert!(o.blocked.contains(&"Account/d/acme".to_string()), "{:?}", o.blocked);
    let why = blocked_reason(&o, &g, "Account/d/acme");
    assert!(why.contains("fails to configure once its params are gone (ConfigMap d/limits"), "{why}");
    assert!(why.contains("may be rejected") && why.contains("no fixed order"), "{why}");
    // params elsewhere, which the plan leaves: nothing blocks
    let elsewhere: Vec<Obj> = objs
        .iter()
        .cloned()
        .map(|mut o| {
            if o.0["kind"] == "ValidatingAdmissionPolicyBinding" {
                o.0["spec"]["paramRef"]["namespace"] = json!("policy");
            }
            if o.0["kind"] == "ConfigMap" {
                o.0["metadata"]["namespace"] = json!("policy");
                o.0["metadata"]["uid"] = json!("cm-policy-limits");
            }
            o
        })
        .collect();
    let (o, _) = plan(&[elsewhere, vec![namespace("policy")]].concat());
    assert!(o.gone("Account/d/acme") && o.gone("Namespace/d"), "{:?}", o.blocked);
}

#[test]
fn a_policy_whose_param_kind_is_not_served_blocks_the_finalizers_removal_it_matches() {
    let cm = obj("v1", "ConfigMap", Some("d"), "cm").fin(&["example.com/cleanup"]).deleting("2026-11-29T11:00:00Z");
    let mut objs = vec![namespace("d"), cm.clone()];
    let mut keep = keep_policy();
    keep[0].0["spec"]["paramKind"] = json!({"apiVersion": "quota.example.com/v1", "kind": "Quota"});
    objs.extend(keep);
    let plan = |objs: &[Obj]| {
        let g = graph(objs);
        let t = id(&g, &cm);
        (run_with(&g, Some(AssumeFinalizers::Removed), |s| s.delete(t, "kubectl", Some(Cascade::Background))), g)
    };
    // without discovery data, whether Quota is served is not known: a note, and the step taken
    let (o, _) = plan(&objs);
    assert!(o.gone("ConfigMap/d/cm"), "{:?}", o.plan.result.blocked);
    assert!(
        o.plan.notes.iter().any(|n| n.contains("fails to configure") && n.contains("not certain")),
        "{:?}",
        o.plan.notes
    );
    // with discovery data that does not serve it: denied, every time
    objs.push(Obj(json!({"apiVersion": "v1", "kind": "APIResourceList", "groupVersion": "v1",
        "resources": [{"name": "configmaps", "singularName": "configmap", "namespaced": true, "kind": "ConfigMap", "verbs": ["list"]}]})));
    let (o, g) = plan(&objs);
    assert_eq!(o.blocked, ["ConfigMap/d/cm"]);
    let why = blocked_reason(&o, &g, "ConfigMap/d/cm");
    assert!(
        why.contains("is denied") && why.contains("quota.example.com/v1 Quota") && why.contains("failurePolicy Fail"),
        "{why}"
    );
}

// ----- a controller the plan deletes before it removes its finalizer ------------------------

/// Deployment ops/op-operator (ready), its ReplicaSet and running pod, and ConfigMap
/// `cm_ns`/state carrying op.example.com/drain, which field manager "op-operator" added.
fn operator_and_its_object(cm_ns: &str) -> (Vec<Obj>, Obj, Obj) {
    let dep = obj("apps/v1", "Deployment", Some("ops"), "op-operator")
        .set("spec", "replicas", json!(1))
        .set("status", "readyReplicas", json!(1))
        .set("status", "replicas", json!(1));
    let rs = obj("apps/v1", "ReplicaSet", Some("ops"), "op-operator-5d9c").controlled_by(&dep);
    let pod = obj("v1", "Pod", Some("ops"), "op-operator-5d9c-x1").controlled_by(&rs).on_node("node-1").set(
        "status",
        "conditions",
        json!([{"type": "Ready", "status": "True"}]),
    );
    let cm = obj("v1", "ConfigMap", Some(cm_ns), "state").fin(&["op.example.com/drain"]).set(
        "metadata",
        "managedFields",
        json!([{"manager": "op-operator", "operation": "Update", "time": "2026-11-20T10:00:00Z",
                "fieldsV1": {"f:metadata": {"f:finalizers": {".": {}, "v:\"op.example.com/drain\"": {}}}}}]),
    );
    let mut objs = vec![namespace("ops"), ready_node("node-1"), dep.clone(), rs, pod, cm.clone()];
    if cm_ns != "ops" {
        objs.push(namespace(cm_ns));
    }
    (objs, dep, cm)
}

#[test]
fn deleting_the_namespace_an_operator_runs_in_blocks_what_it_finalizes_there() {
    let (objs, _, cm) = operator_and_its_object("ops");
    let g = graph(&objs);
    // the ConfigMap alone: its controller is alive and removes the finalizer
    let o = delete(&g, &cm, Some(Cascade::Background));
    assert!(o.gone("ConfigMap/ops/state"), "{:?}", o.plan.result.blocked);
    // the whole namespace: the operator goes with it and the ConfigMap stays
    let o = delete(&g, &namespace("ops"), Some(Cascade::Background));
    assert!(o.exists("ConfigMap/ops/state") && o.deleting("ConfigMap/ops/state"), "{:?}", o.left);
    let why = blocked_reason(&o, &g, "ConfigMap/ops/state");
    assert!(why.contains("holds itself") && why.contains("Deployment ops/op-operator"), "{why}");
}

#[test]
fn deleting_an_operators_deployment_blocks_what_it_finalizes_elsewhere_once_deleted() {
    let (objs, dep, cm) = operator_and_its_object("apps");
    let g = graph(&objs);
    let (d, c) = (id(&g, &dep), id(&g, &cm));
    let o = run_with(&g, None, |s| {
        s.delete(d, "kubectl", Some(Cascade::Background));
        s.delete(c, "kubectl", Some(Cascade::Background));
    });
    assert!(o.gone("Deployment/ops/op-operator"));
    let why = blocked_reason(&o, &g, "ConfigMap/apps/state");
    assert!(why.contains("holds itself"), "{why}");
    // its custom resources first, then the operator: nothing held
    let o = run_with(&g, None, |s| {
        s.delete(c, "kubectl", Some(Cascade::Background));
        s.run();
        s.delete(d, "kubectl", Some(Cascade::Background));
    });
    assert!(o.blocked.is_empty() && o.gone("ConfigMap/apps/state"), "{:?}", o.plan.result.blocked);
}

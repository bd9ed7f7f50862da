//! Scenarios on the stuck-everywhere fixture (three Sites whose operator is gone in two
//! namespaces, a claim held by a running pod, a ConfigMap whose live controller is at work),
//! varied by adding objects to it.

use k8s_openapi::jiff::Timestamp;
use serde_json::{Value, json};

use super::*;
use crate::graph::Graph;
use crate::snapshot::Snapshot;
use crate::snapshot::raw::{Flattened, RawDoc};

fn items() -> Vec<Value> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/stuck-everywhere/snapshot.json");
    let v: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    v["items"].as_array().unwrap().clone()
}

fn graph(items: Vec<Value>) -> Graph {
    graph_missing(items, Vec::new())
}

fn now() -> Timestamp {
    "2026-11-29T12:00:00Z".parse().unwrap()
}

fn run(g: &Graph, scope: Scope, stuck_only: bool) -> Sweep {
    let live = Liveness::new(g, now());
    sweep(g, &live, &Options { scope, stuck_only, answer: Default::default() })
}

/// A group as `(verdict, code, ["Kind ns/name", …])`.
fn groups(g: &Graph, s: &Sweep) -> Vec<(Verdict, &'static str, Vec<String>)> {
    s.groups
        .iter()
        .map(|grp| {
            (
                grp.verdict,
                grp.cause.code.map_or("", |c| c.as_str()),
                grp.objects.iter().map(|&o| diagnose::describe(g, o)).collect(),
            )
        })
        .collect()
}

/// A Site like the fixture's, keeping `finalizer`, set by the field manager `manager`, deleted at `at`.
fn site(ns: &str, name: &str, finalizer: &str, manager: &str, at: &str) -> Value {
    json!({"apiVersion": "web.example.com/v1", "kind": "Site",
        "metadata": {"name": name, "namespace": ns, "uid": format!("uid-{ns}-{name}"), "resourceVersion": "7",
            "deletionTimestamp": at, "deletionGracePeriodSeconds": 0, "finalizers": [finalizer],
            "managedFields": [{"manager": manager, "operation": "Update", "apiVersion": "web.example.com/v1",
                "time": "2026-10-05T12:00:01Z", "fieldsType": "FieldsV1",
                "fieldsV1": {"f:metadata": {"f:finalizers": {".": {}, format!("v:\"{finalizer}\""): {}}}}}]},
        "spec": {"domain": "x.example.com"}})
}

#[test]
fn the_same_cause_across_namespaces_is_one_group_oldest_first() {
    let g = graph(items());
    let s = run(&g, Scope::Cluster, false);
    let got = groups(&g, &s);
    assert_eq!(
        got[0],
        (
            Verdict::Stuck,
            "FinalizerControllerMissing",
            vec!["Site team-a/blog".into(), "Site team-a/shop".into(), "Site team-b/docs".into()]
        )
    );
    assert_eq!(s.groups[0].oldest_deleting_for_seconds, 3 * 3600);
    assert_eq!(s.groups[0].cause.culprit, Culprit::Controller("field manager \"site-operator\"".into()));
    // every object in exactly one group, and one answer per object, in group order
    let listed: Vec<NodeId> = s.groups.iter().flat_map(|grp| grp.objects.iter().copied()).collect();
    assert_eq!(listed.len(), 5);
    assert_eq!(listed, s.answers.iter().map(|d| d.object).collect::<Vec<_>>());
}

#[test]
fn different_controllers_are_different_groups() {
    let mut items = items();
    items.push(site("team-b", "wiki", "dns.other.example/record", "other-operator", "2026-11-29T08:00:00Z"));
    let g = graph(items);
    let s = run(&g, Scope::Cluster, false);
    let missing: Vec<_> =
        s.groups.iter().filter(|grp| grp.cause.code == Some(FindingCode::FinalizerControllerMissing)).collect();
    assert_eq!(missing.len(), 2, "{:#?}", groups(&g, &s));
    // the newer operator's single object is the oldest deletion: its group comes first
    assert_eq!(missing[0].objects.len(), 1);
    assert_eq!(missing[0].cause.culprit, Culprit::Controller("field manager \"other-operator\"".into()));
    assert_eq!(missing[1].objects.len(), 3);
}

#[test]
fn a_terminating_namespace_joins_the_group_of_its_contents_cause() {
    let mut items = items();
    for o in &mut items {
        if o["kind"] == "Namespace" && o["metadata"]["name"] == "team-b" {
            o["metadata"]["deletionTimestamp"] = json!("2026-11-29T11:30:00Z");
            o["spec"] = json!({"finalizers": ["kubernetes"]});
            o["status"] = json!({"phase": "Terminating"});
        }
    }
    let g = graph(items);
    let s = run(&g, Scope::Cluster, false);
    let got = groups(&g, &s);
    assert_eq!(got[0].1, "FinalizerControllerMissing");
    assert_eq!(
        got[0].2,
        vec!["Site team-a/blog", "Site team-a/shop", "Site team-b/docs", "Namespace team-b"],
        "{got:#?}"
    );
    assert_eq!(s.groups.len(), 3, "the namespace makes no group of its own: {got:#?}");
}

#[test]
fn in_progress_objects_are_apart_and_not_stuck() {
    let g = graph(items());
    let s = run(&g, Scope::Cluster, false);
    let last = s.groups.last().unwrap();
    assert_eq!(last.verdict, Verdict::InProgress);
    assert_eq!(diagnose::describe(&g, last.objects[0]), "ConfigMap team-a/feature-flags");
    assert!(!s.answers[last.answers[0]].stuck);
    // the claim held by a running pod is stuck, though its controller is alive
    let pvc = s.groups.iter().find(|grp| grp.cause.code == Some(FindingCode::FinalizerPending)).unwrap();
    assert_eq!(pvc.verdict, Verdict::Stuck);

    // without the stuck objects, nothing is stuck
    let only_moving: Vec<Value> =
        items().into_iter().filter(|o| o["kind"] != "Site" && o["kind"] != "PersistentVolumeClaim").collect();
    let g = graph(only_moving);
    let s = run(&g, Scope::Cluster, false);
    assert!(!s.stuck());
    assert_eq!(
        groups(&g, &s),
        vec![(Verdict::InProgress, "FinalizerPending", vec!["ConfigMap team-a/feature-flags".into()])]
    );
    let s = run(&g, Scope::Cluster, true);
    assert!(s.groups.is_empty() && s.answers.is_empty());
    assert_eq!(s.left_out, 1);
}

#[test]
fn a_namespace_scope_holds_its_objects_and_its_namespace_only() {
    let g = graph(items());
    let s = run(&g, Scope::Namespace("team-c".into()), false);
    assert_eq!(
        groups(&g, &s),
        vec![(Verdict::Stuck, "FinalizerPending", vec!["PersistentVolumeClaim team-c/uploads".into()])]
    );
    let s = run(&g, Scope::Namespace("team-a".into()), true);
    assert_eq!(
        groups(&g, &s),
        vec![(
            Verdict::Stuck,
            "FinalizerControllerMissing",
            vec!["Site team-a/blog".into(), "Site team-a/shop".into()]
        )]
    );
    assert_eq!(s.left_out, 1);
    assert!(run(&g, Scope::Namespace("sync-system".into()), false).answers.is_empty());
}

#[test]
fn group_steps_are_merged_per_text_with_every_objects_command() {
    let g = graph(items());
    let s = run(&g, Scope::Cluster, false);
    let grp = &s.groups[0];
    let patch = grp.remedy.iter().find(|r| r.step.reach == diagnose::Reach::Destructive).expect("a finalizer patch");
    assert_eq!(patch.commands.len(), 3, "one patch per Site under one heading");
    let texts: Vec<&str> = grp.remedy.iter().map(|r| r.step.text.as_ref()).collect();
    let mut unique = texts.clone();
    unique.dedup();
    assert_eq!(texts, unique, "no step twice");
    assert!(grp.remedy.windows(2).all(|w| w[0].step.reach <= w[1].step.reach), "safest first");
}

#[test]
fn answers_are_exactly_those_of_why_stuck() {
    let g = graph(items());
    let live = Liveness::new(&g, now());
    let s = sweep(&g, &live, &Options { scope: Scope::Cluster, stuck_only: false, answer: Default::default() });
    for d in &s.answers {
        let one = diagnose::why_stuck(&g, &live, d.object);
        assert!(d.waits_on_answers.is_empty(), "no answer here waits on another");
        assert_eq!((one.stuck, &one.findings), (d.stuck, &d.findings));
    }
}

/// A foreground chain: c0 ← c1 ← … ← c{n-1}, each deleting with foregroundDeletion and a
/// blocking reference to the one before, the last also keeping `last_finalizer`.
fn chain(n: usize, last_finalizer: &str) -> Vec<Value> {
    (0..n)
        .map(|i| {
            let mut fins = vec!["foregroundDeletion".to_string()];
            if i == n - 1 {
                fins.push(last_finalizer.to_string());
            }
            let mut meta = json!({"name": format!("c{i}"), "namespace": "deep", "uid": format!("u{i}"),
                "resourceVersion": "7", "deletionTimestamp": "2026-11-29T11:00:00Z", "finalizers": fins});
            if i > 0 {
                meta["ownerReferences"] = json!([{"apiVersion": "v1", "kind": "ConfigMap", "name": format!("c{}", i - 1),
                    "uid": format!("u{}", i - 1), "blockOwnerDeletion": true}]);
            }
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta})
        })
        .collect()
}

/// Each answer of a chain stops at the next link (which has its own answer) instead of walking
/// the rest again, and is still stuck and grouped as a whole walk makes it: under the cause at
/// the chain's end.
#[test]
fn a_chain_is_walked_once_and_answered_as_whole_walks_answer_it() {
    let mut items = items();
    items.extend(chain(50, "gone.example.com/cleanup"));
    let g = graph(items);
    let live = Liveness::new(&g, now());
    let s = sweep(
        &g,
        &live,
        &Options { scope: Scope::Namespace("deep".into()), stuck_only: false, answer: Default::default() },
    );
    assert_eq!(s.answers.len(), 50);
    for d in &s.answers {
        let one = diagnose::why_stuck(&g, &live, d.object);
        assert_eq!(one.stuck, d.stuck, "{}", diagnose::describe(&g, d.object));
        assert!(d.findings.len() <= 3, "{} findings: the rest of the chain again", d.findings.len());
    }
    assert!(s.stuck());
    let got = groups(&g, &s);
    assert_eq!(got.len(), 1, "{got:#?}");
    let one = diagnose::why_stuck(&g, &live, s.answers[0].object);
    let whole = group(&g, vec![one], false);
    assert_eq!(got[0].1, whole.groups[0].cause.code.unwrap().as_str(), "the whole walk's cause");
    assert_eq!(s.groups[0].cause.culprit, whole.groups[0].cause.culprit);
    // not stuck at the end: nothing is
    let mut items = self::items();
    items.extend(chain(5, "kubernetes.io/pvc-protection"));
    let g = graph(items);
    let live = Liveness::new(&g, now());
    let s = sweep(
        &g,
        &live,
        &Options { scope: Scope::Namespace("deep".into()), stuck_only: false, answer: Default::default() },
    );
    for d in &s.answers {
        assert_eq!(diagnose::why_stuck(&g, &live, d.object).stuck, d.stuck);
    }
}

#[test]
fn objects_nothing_holds_share_one_group_without_a_code() {
    let mut items = items();
    for i in 0..3 {
        items.push(
            json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": format!("p{i}"), "namespace": "team-b",
            "uid": format!("pod-{i}"), "deletionTimestamp": "2026-11-29T11:59:50Z", "deletionGracePeriodSeconds": 30},
            "spec": {"nodeName": "worker-1"}}),
        );
    }
    let g = graph(items);
    let s = run(&g, Scope::Namespace("team-b".into()), false);
    let got = groups(&g, &s);
    assert_eq!(got.len(), 2, "{got:#?}");
    assert_eq!(
        got[1],
        (Verdict::InProgress, "", vec!["Pod team-b/p0".into(), "Pod team-b/p1".into(), "Pod team-b/p2".into()])
    );
    assert_eq!(s.groups[1].cause.culprit, Culprit::Nothing);
}

/// The fixture's graph with `gaps` as what its read could not see.
fn graph_missing(items: Vec<Value>, gaps: Vec<Gap>) -> Graph {
    let mut f = Flattened::default();
    for o in items {
        f.push(serde_json::from_value::<RawDoc>(o).unwrap());
    }
    let mut snapshot = Snapshot::from_flattened(f);
    snapshot.incomplete = gaps;
    Graph::build(snapshot)
}

#[test]
fn a_failed_read_that_may_hide_a_deletion_in_scope_leaves_the_sweep_unknown_never_reassuring() {
    let list = |group: &str, resource: &str, ns: Option<&str>| {
        let what = Missing::List { resource: Resource::new(group, "v1", resource), namespace: ns.map(Into::into) };
        Gap::new(what, "forbidden (403)")
    };
    // without the stuck Sites and claim: one ConfigMap in progress, in team-a
    let no_sites = || {
        items().into_iter().filter(|o| o["kind"] != "Site" && o["kind"] != "PersistentVolumeClaim").collect::<Vec<_>>()
    };
    let team_a = || Scope::Namespace("team-a".into());
    let verdict = |gaps: Vec<Gap>, scope: Scope| {
        let g = graph_missing(no_sites(), gaps);
        let s = run(&g, scope, false);
        (s.verdict(), s.unseen)
    };
    assert_eq!(verdict(vec![], team_a()), (Some(Verdict::InProgress), 0));
    let hiding = [
        (list("", "secrets", Some("team-a")), team_a()),
        (list("", "secrets", None), team_a()),
        (list("", "nodes", None), Scope::Cluster),
        (Gap::new(Missing::Discovery { group: "web.example.com".into(), version: "v1".into() }, "503"), team_a()),
        (Gap::recorded("sites.web.example.com could not be listed"), team_a()),
        // a custom resource that happens to be called events: its objects may be being deleted
        (list("audit.example.com", "events", Some("team-a")), team_a()),
    ];
    for (gap, scope) in hiding {
        assert_eq!(verdict(vec![gap.clone()], scope), (Some(Verdict::Unknown), 1), "{gap}");
    }
    let harmless = [
        list("", "secrets", Some("team-b")),
        // cluster-scoped: no deletion in a namespace hides there
        list("", "nodes", None),
        list("rbac.authorization.k8s.io", "clusterroles", None),
        // the namespace itself was read
        list("", "namespaces", None),
        // no sweep finds deletions among Events
        list("", "events", Some("team-a")),
        list("events.k8s.io", "events", None),
        // bodies and managedFields hide no object: its metadata was read
        Gap::new(Missing::Bodies { resource: Resource::new("", "v1", "pods"), namespace: None, name: None }, "403"),
    ];
    for gap in harmless {
        assert_eq!(verdict(vec![gap.clone()], team_a()), (Some(Verdict::InProgress), 0), "{gap}");
    }
    // the namespace itself not read: its deletion may be what is unseen
    let without_ns = no_sites().into_iter().filter(|o| o["kind"] != "Namespace").collect();
    let g = graph_missing(without_ns, vec![list("", "namespaces", None)]);
    assert_eq!(run(&g, team_a(), false).unseen, 1);
    // nothing seen being deleted: unknown rather than nothing, when something may hide it
    let quiet = Scope::Namespace("sync-system".into());
    assert_eq!(verdict(vec![], quiet.clone()), (None, 0));
    assert_eq!(verdict(vec![list("", "secrets", Some("sync-system"))], quiet), (Some(Verdict::Unknown), 1));
    // stuck stays stuck
    let g = graph_missing(items(), vec![list("", "secrets", None)]);
    assert_eq!(run(&g, Scope::Cluster, false).verdict(), Some(Verdict::Stuck));
}

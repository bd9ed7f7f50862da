//! Text and JSON rendering of pathological answers must stay linear:
//! `cargo bench --bench text -- [--sizes 10k,40k]`.
//!
//! Three shapes, each at every size: a terminating namespace holding N objects that wait on one
//! finalizer whose controller is gone (N identical removals, grouped in text), one object with N
//! finalizers, one object with N owner references to absent owners. For each: why-stuck, then
//! its text and its JSON, with the time per object, so a super-linear phase shows as a growing
//! per-object cost. Then what a cluster's shape must not stall (issue 25), at
//! `--plan-size` (100k) and `--chain-depth` (10k): `plan` of that namespace (every object
//! blocked) with its text, `why-stuck --plan` of the object with that many finalizers, and
//! `why-stuck --all` over a foreground chain that deep, with its text and JSON. Timing lives
//! here, never in the test suite.

use std::time::{Duration, Instant};

use kubectl_gc::controllers::Liveness;
use kubectl_gc::diagnose::{Connection, why_stuck};
use kubectl_gc::graph::Graph;
use kubectl_gc::render::{self, style::Style};
use serde_json::{Value, json};

const NOW: &str = "2026-11-29T12:00:00Z";

fn meta(name: &str, uid: &str) -> Value {
    json!({"name": name, "namespace": "big", "uid": uid, "resourceVersion": "7",
           "creationTimestamp": "2026-11-29T10:00:00Z"})
}

fn shape(kind: &str, n: usize) -> (Vec<Value>, (&'static str, &'static str, Option<&'static str>, &'static str)) {
    let mut items = vec![json!({"apiVersion": "v1", "kind": "Namespace",
        "metadata": {"name": "big", "uid": "ns", "deletionTimestamp": "2026-11-29T11:00:00Z"},
        "spec": {"finalizers": ["kubernetes"]}})];
    match kind {
        "namespace" => {
            for i in 0..n {
                let mut m = meta(&format!("cm-{i}"), &format!("u{i}"));
                m["deletionTimestamp"] = "2026-11-29T11:00:00Z".into();
                m["finalizers"] = json!(["example.com/cleanup"]);
                items.push(json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": m}));
            }
            (items, ("", "Namespace", None, "big"))
        }
        "finalizers" => {
            let mut m = meta("many", "m");
            m["deletionTimestamp"] = "2026-11-29T11:00:00Z".into();
            m["finalizers"] = (0..n).map(|i| format!("example.com/f-{i}")).collect();
            items.push(json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": m}));
            (items, ("", "ConfigMap", Some("big"), "many"))
        }
        _ => {
            let mut m = meta("many", "m");
            m["ownerReferences"] = (0..n)
                .map(|i| json!({"apiVersion": "v1", "kind": "ConfigMap", "name": format!("gone-{i}"), "uid": format!("g{i}")}))
                .collect();
            items.push(json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": m}));
            (items, ("", "ConfigMap", Some("big"), "many"))
        }
    }
}

/// A foreground chain `c0 ← c1 ← …` in namespace `deep`, each deleting with
/// foregroundDeletion and a blocking reference to the one before; the last keeps a finalizer
/// whose controller is gone.
fn chain(n: usize) -> Vec<Value> {
    (0..n)
        .map(|i| {
            let mut fins = vec!["foregroundDeletion"];
            if i == n - 1 {
                fins.push("example.com/cleanup");
            }
            let mut m = meta(&format!("c{i}"), &format!("c{i}"));
            m["namespace"] = "deep".into();
            m["deletionTimestamp"] = "2026-11-29T11:00:00Z".into();
            m["finalizers"] = json!(fins);
            if i > 0 {
                m["ownerReferences"] = json!([{"apiVersion": "v1", "kind": "ConfigMap", "name": format!("c{}", i - 1),
                    "uid": format!("c{}", i - 1), "blockOwnerDeletion": true}]);
            }
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": m})
        })
        .collect()
}

fn load(dir: &std::path::Path, name: &str, items: Vec<Value>) -> Graph {
    let file = dir.join(format!("{name}.json"));
    std::fs::write(&file, serde_json::to_vec(&json!({"kind": "List", "items": items})).unwrap()).unwrap();
    Graph::build(kubectl_gc::source::file::load(&[file]).expect("loads"))
}

fn secs(d: Duration) -> String {
    format!("{:.3}s", d.as_secs_f64())
}

/// The rows of what a cluster's shape must not stall.
fn shapes_that_must_not_stall(dir: &std::path::Path, plan_size: usize, depth: usize) {
    use kubectl_gc::plan::{AssumeFinalizers, Cascade, PlanOptions, plan};
    let now: k8s_openapi::jiff::Timestamp = NOW.parse().expect("a time");
    let st = Style { color: false, width: Some(100) };
    println!();
    println!("{:<44} {:>9} {:>9} {:>9}", "row", "answer", "text", "json");

    let (items, _) = shape("namespace", plan_size);
    let g = load(dir, "plan", items);
    let target = g.find("", "Namespace", None, "big").expect("the namespace");
    let live = Liveness::new(&g, now);
    let t = Instant::now();
    let p = plan(&g, &live, target, &PlanOptions { cascade: Cascade::Background, assume_finalizers: None, now });
    let answer = t.elapsed();
    let t = Instant::now();
    let mut text = Vec::new();
    render::plan::write_text_styled(&p, &g, st, &mut text).unwrap();
    let text_t = t.elapsed();
    let t = Instant::now();
    let mut out = Vec::new();
    render::plan::write_json(&p, &g, &mut out).unwrap();
    let row = format!("plan namespace/big ({plan_size} objects, {} blocked)", p.result.blocked.len());
    println!("{row:<44} {:>9} {:>9} {:>9}", secs(answer), secs(text_t), secs(t.elapsed()));

    let (items, _) = shape("finalizers", plan_size);
    let g = load(dir, "fins", items);
    let target = g.find("", "ConfigMap", Some("big"), "many").expect("the object");
    let live = Liveness::new(&g, now);
    let t = Instant::now();
    let opts = PlanOptions { cascade: Cascade::Background, assume_finalizers: Some(AssumeFinalizers::Removed), now };
    let p = plan(&g, &live, target, &opts);
    let answer = t.elapsed();
    let t = Instant::now();
    let mut text = Vec::new();
    render::plan::write_text_styled(&p, &g, st, &mut text).unwrap();
    let row = format!("why-stuck --plan's plan ({plan_size} finalizers)");
    println!("{row:<44} {:>9} {:>9} {:>9}", secs(answer), secs(t.elapsed()), "-");

    let g = load(dir, "chain", chain(depth));
    let live = Liveness::new(&g, now);
    let t = Instant::now();
    let opts = kubectl_gc::sweep::Options {
        scope: kubectl_gc::sweep::Scope::Namespace("deep".into()),
        stuck_only: false,
        answer: Default::default(),
    };
    let s = kubectl_gc::sweep::sweep(&g, &live, &opts);
    let answer = t.elapsed();
    let conn = Connection::default().with("--context", "bench");
    let t = Instant::now();
    let mut text = Vec::new();
    render::sweep::write_text(&g, &s, &conn, st, &mut text).unwrap();
    let text_t = t.elapsed();
    let t = Instant::now();
    let mut out = Vec::new();
    render::json::write(&render::sweep::to_json(&g, &s, &conn), &mut out).unwrap();
    let row = format!("why-stuck --all -n deep ({depth}-deep chain)");
    println!("{row:<44} {:>9} {:>9} {:>9}", secs(answer), secs(text_t), secs(t.elapsed()));
}

fn parse_size(s: &str) -> usize {
    let s = s.trim().to_lowercase();
    match s.strip_suffix('k') {
        Some(k) => k.parse::<usize>().expect("size") * 1000,
        None => s.parse().expect("size"),
    }
}

fn main() {
    let argv: Vec<String> = std::env::args().collect();
    let sizes: Vec<usize> = argv
        .iter()
        .position(|a| a == "--sizes")
        .map(|i| argv[i + 1].split(',').map(parse_size).collect())
        .unwrap_or_else(|| vec![10_000, 40_000]);
    let flag = |name: &str, default: usize| {
        argv.iter().position(|a| a == name).map(|i| parse_size(&argv[i + 1])).unwrap_or(default)
    };
    let (plan_size, depth) = (flag("--plan-size", 100_000), flag("--chain-depth", 10_000));
    let dir = tempfile::tempdir().expect("a temp dir");
    let now = NOW.parse().expect("a time");
    println!("{:<11} {:>7}  {:>9} {:>9} {:>9}  {:>8}", "shape", "n", "why-stuck", "text", "json", "µs/obj");
    for kind in ["namespace", "finalizers", "owner-refs"] {
        for &n in &sizes {
            let (items, (group, k, ns, name)) = shape(kind, n);
            let file = dir.path().join(format!("{kind}-{n}.json"));
            std::fs::write(&file, serde_json::to_vec(&json!({"kind": "List", "items": items})).unwrap()).unwrap();
            let g = Graph::build(kubectl_gc::source::file::load(&[file]).expect("loads"));
            let target = g.find(group, k, ns, name).expect("the target");
            let live = Liveness::new(&g, now);
            let t = Instant::now();
            let d = why_stuck(&g, &live, target);
            let diagnose = t.elapsed();
            let conn = Connection::default().with("--context", "bench");
            let t = Instant::now();
            let mut text = Vec::new();
            render::text::write_why_stuck(&g, &d, &conn, Style { color: false, width: Some(80) }, &mut text).unwrap();
            let text_t = t.elapsed();
            let t = Instant::now();
            let mut out = Vec::new();
            render::json::write(&render::json::why_stuck(&g, &d, &conn), &mut out).unwrap();
            let json_t = t.elapsed();
            let total: Duration = diagnose + text_t + json_t;
            println!(
                "{kind:<11} {n:>7}  {:>8.3}s {:>8.3}s {:>8.3}s  {:>8.2}",
                diagnose.as_secs_f64(),
                text_t.as_secs_f64(),
                json_t.as_secs_f64(),
                total.as_secs_f64() * 1e6 / n as f64
            );
        }
    }
    shapes_that_must_not_stall(dir.path(), plan_size, depth);
}

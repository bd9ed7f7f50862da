//! Text and JSON rendering of pathological answers must stay linear:
//! `cargo bench --bench text -- [--sizes 10k,40k]`.
//!
//! Three shapes, each at every size: a terminating namespace holding N objects that wait on one
//! finalizer whose controller is gone (N identical removals, grouped in text), one object with N
//! finalizers, one object with N owner references to absent owners. For each: why-stuck, then
//! its text and its JSON, with the time per object, so a super-linear phase shows as a growing
//! per-object cost. Timing lives here, never in the test suite.

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
}

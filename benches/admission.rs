//! Admission webhooks in numbers must stay linear: `cargo bench --bench admission -- [--sizes 1k,10k]`.
//!
//! Shapes, each at every size N (webhooks), all with `failurePolicy: Fail` and backends that
//! are gone (50 Services, none exists):
//! - `one-config`: one ValidatingWebhookConfiguration of N webhooks, every one intercepting the
//!   UPDATE that removes the target's finalizer (issue 25: 5,000 such gave no answer in 60 s);
//! - `configs`: N configurations of one such webhook each (N findings);
//! - `elsewhere`: N webhooks on other resources, none matching, and a terminating namespace of
//!   1,000 ConfigMaps whose why-stuck and plan ask admission about every one of them;
//! - `namespace`: N webhooks intercepting DELETE of ConfigMaps, the same namespace.
//!
//! For each: why-stuck, its text and JSON, and (namespaces) the plan, with the time per webhook.
//! Timing lives here, never in the test suite.

use std::time::{Duration, Instant};

use kubectl_gc::controllers::Liveness;
use kubectl_gc::diagnose::{Connection, why_stuck};
use kubectl_gc::graph::Graph;
use kubectl_gc::render::{self, style::Style};
use serde_json::{Value, json};

const NOW: &str = "2026-11-29T12:00:00Z";
const DELETED: &str = "2026-11-29T11:00:00Z";
const CONFIGMAPS: usize = 1000;

fn webhook(i: usize, group: &str, resource: &str, op: &str) -> Value {
    json!({"name": format!("h{i}.hooks.example.org"), "failurePolicy": "Fail", "sideEffects": "None",
        "admissionReviewVersions": ["v1"],
        "rules": [{"apiGroups": [group], "apiVersions": ["*"], "operations": [op], "resources": [resource]}],
        "clientConfig": {"service": {"namespace": "hooks", "name": format!("svc-{}", i % 50)}}})
}

fn configuration(name: &str, webhooks: Vec<Value>) -> Value {
    json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration",
        "metadata": {"name": name, "uid": format!("vwc-{name}"), "resourceVersion": "1",
                     "creationTimestamp": "2026-11-01T00:00:00Z"},
        "webhooks": webhooks})
}

fn namespace(name: &str, deleting: bool) -> Value {
    let mut m = json!({"name": name, "uid": format!("ns-{name}"), "resourceVersion": "1",
                       "creationTimestamp": "2026-11-01T00:00:00Z"});
    if deleting {
        m["deletionTimestamp"] = DELETED.into();
    }
    json!({"apiVersion": "v1", "kind": "Namespace", "metadata": m, "spec": {"finalizers": ["kubernetes"]}})
}

/// The objects, and the target (kind, namespace, name).
fn shape(kind: &str, n: usize) -> (Vec<Value>, (&'static str, Option<&'static str>, &'static str)) {
    let mut items = vec![namespace("hooks", false)];
    match kind {
        "one-config" | "configs" => {
            items.push(namespace("big", false));
            items.push(json!({"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": "held", "namespace": "big", "uid": "held", "resourceVersion": "1",
                             "creationTimestamp": "2026-11-01T00:00:00Z", "deletionTimestamp": DELETED,
                             "finalizers": ["example.com/cleanup"]}}));
            let hooks = (0..n).map(|i| webhook(i, "", "configmaps", "UPDATE"));
            if kind == "one-config" {
                items.push(configuration("policy", hooks.collect()));
            } else {
                items.extend(hooks.enumerate().map(|(i, h)| configuration(&format!("policy-{i}"), vec![h])));
            }
            (items, ("ConfigMap", Some("big"), "held"))
        }
        _ => {
            items.push(namespace("big", true));
            for i in 0..CONFIGMAPS {
                items.push(json!({"apiVersion": "v1", "kind": "ConfigMap",
                    "metadata": {"name": format!("cm-{i}"), "namespace": "big", "uid": format!("cm-{i}"),
                                 "resourceVersion": "1", "creationTimestamp": "2026-11-01T00:00:00Z"}}));
            }
            let hooks: Vec<Value> = if kind == "elsewhere" {
                (0..n).map(|i| webhook(i, "other.example.org", &format!("things{i}"), "*")).collect()
            } else {
                (0..n).map(|i| webhook(i, "", "configmaps", "DELETE")).collect()
            };
            items.push(configuration("policy", hooks));
            (items, ("Namespace", None, "big"))
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
        .unwrap_or_else(|| vec![1_000, 10_000]);
    let dir = tempfile::tempdir().expect("a temp dir");
    let now = NOW.parse().expect("a time");
    println!(
        "{:<10} {:>7}  {:>9} {:>9} {:>9} {:>9}  {:>8}",
        "shape", "webhooks", "why-stuck", "text", "json", "plan", "µs/hook"
    );
    for kind in ["one-config", "configs", "elsewhere", "namespace"] {
        for &n in &sizes {
            let (items, (k, ns, name)) = shape(kind, n);
            let file = dir.path().join(format!("{kind}-{n}.json"));
            std::fs::write(&file, serde_json::to_vec(&json!({"kind": "List", "items": items})).unwrap()).unwrap();
            let g = Graph::build(kubectl_gc::source::file::load(&[file]).expect("loads"));
            let target = g.find("", k, ns, name).expect("the target");
            let live = Liveness::new(&g, now);
            let t = Instant::now();
            let d = why_stuck(&g, &live, target);
            let diagnose = t.elapsed();
            assert!(d.stuck || kind == "elsewhere", "{kind}: the dead webhooks hold the target");
            let conn = Connection::default().with("--context", "bench");
            let t = Instant::now();
            let mut text = Vec::new();
            render::text::write_why_stuck(&g, &d, &conn, Style { color: false, width: Some(80) }, &mut text).unwrap();
            let text_t = t.elapsed();
            let t = Instant::now();
            let mut out = Vec::new();
            render::json::write(&render::json::why_stuck(&g, &d, &conn), &mut out).unwrap();
            let json_t = t.elapsed();
            let plan_t = (k == "Namespace").then(|| {
                let opts = kubectl_gc::plan::PlanOptions {
                    cascade: kubectl_gc::plan::Cascade::Background,
                    assume_finalizers: None,
                    now,
                };
                let t = Instant::now();
                let p = kubectl_gc::plan::plan(&g, &live, target, &opts);
                assert!(p.is_blocked() || kind == "elsewhere", "{kind}: the plan is blocked");
                t.elapsed()
            });
            let total: Duration = diagnose + text_t + json_t + plan_t.unwrap_or_default();
            println!(
                "{kind:<10} {n:>7}  {:>8.3}s {:>8.3}s {:>8.3}s {:>9}  {:>8.2}",
                diagnose.as_secs_f64(),
                text_t.as_secs_f64(),
                json_t.as_secs_f64(),
                plan_t.map_or("-".to_string(), |p| format!("{:.3}s", p.as_secs_f64())),
                total.as_secs_f64() * 1e6 / n as f64
            );
        }
    }
}

//! The benchmark's generator on a tiny size: it runs, is deterministic, and plants what the
//! benchmark asks about (timing lives in benches/, never here).

#[path = "../benches/synth.rs"]
mod synth;

use kubectl_gc::controllers::Liveness;
use kubectl_gc::graph::Graph;

fn generate(opts: &synth::Options) -> (Vec<u8>, synth::Landmarks) {
    let mut out = Vec::new();
    let (_, lm) = synth::generate(opts, &mut out).expect("generates");
    (out, lm)
}

#[test]
fn the_generator_is_deterministic_and_plants_a_stuck_object() {
    let opts = synth::Options {
        objects: 2_000,
        namespaces: 10,
        crds: 20,
        crd_groups: 4,
        chain_depth: 50,
        ..Default::default()
    };
    let (a, lm) = generate(&opts);
    let (b, _) = generate(&opts);
    assert_eq!(a, b, "same flags, same bytes");
    let (c, _) = generate(&synth::Options { seed: 2, ..opts.clone() });
    assert_ne!(a, c, "another seed, another cluster");

    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("synth.json");
    std::fs::write(&file, &a).unwrap();
    let snapshot = kubectl_gc::source::file::load(&[file]).expect("the generated file loads");
    assert!(snapshot.objects.len() >= 2_000, "{}", snapshot.objects.len());
    assert!(snapshot.warnings.is_empty(), "{:?}", snapshot.warnings);
    let g = Graph::build(snapshot);
    let (plural, ns, name) = lm.stuck.expect("a stuck custom resource");
    let t = g.mapper().resolve(&plural).expect("its CRD is in the snapshot");
    let target = g.find(&t.group, &t.kind, Some(&ns), &name).expect("the stuck object");
    let now = synth::NOW.parse().unwrap();
    let live = Liveness::new(&g, now);
    let d = kubectl_gc::diagnose::why_stuck(&g, &live, target);
    assert!(d.stuck, "its operator is scaled to zero");
    assert!(d.findings.iter().any(|f| f.code == kubectl_gc::diagnose::FindingCode::FinalizerControllerDown));
    let ns_node = g.find("", "Namespace", None, lm.namespace.as_deref().unwrap()).unwrap();
    let plan = kubectl_gc::plan::plan(
        &g,
        &live,
        ns_node,
        &kubectl_gc::plan::PlanOptions { cascade: kubectl_gc::plan::Cascade::Background, assume_finalizers: None, now },
    );
    assert!(!plan.result.removed.is_empty());
}

#[test]
fn terminating_marks_the_asked_share_of_objects_and_nothing_without_it() {
    let opts = synth::Options {
        objects: 5_000,
        namespaces: 10,
        crds: 20,
        crd_groups: 4,
        chain_depth: 50,
        ..Default::default()
    };
    let count = |bytes: &[u8]| {
        let v: serde_json::Value = serde_json::from_slice(bytes).unwrap();
        v["items"].as_array().unwrap().iter().filter(|o| o["metadata"].get("deletionTimestamp").is_some()).count()
    };
    let (plain, lm) = generate(&opts);
    assert_eq!(lm.terminating, 0);
    let planted = count(&plain);
    let (marked, lm) = generate(&synth::Options { terminating_percent: 1.0, ..opts.clone() });
    assert!((45..=55).contains(&lm.terminating), "{} marked for 1% of 5,000", lm.terminating);
    assert_eq!(count(&marked), planted + lm.terminating);
}

//! Planner properties over generated owner graphs: multiple owners, cycles, dangling,
//! uid-mismatched and unresolvable references, `blockOwnerDeletion`, user finalizers, mixed
//! scopes; each run under every cascade.

use std::collections::{HashMap, HashSet};

use proptest::prelude::*;

use super::scenarios::{NOW, Obj, graph, obj};
use super::*;
use crate::collector::references::{OwnerState, classify_reference};
use crate::controllers::Liveness;
use crate::graph::Graph;
use crate::snapshot::Uid;

#[derive(Clone, Debug)]
enum Ref {
    To { owner: usize, block: Option<bool> },
    Dangling { block: Option<bool> },
    UidMismatch { owner: usize },
    Unresolvable,
}

#[derive(Clone, Debug)]
struct Spec {
    kind: u8,
    finalizer: u8,
    refs: Vec<Ref>,
}

fn spec(n: usize) -> impl Strategy<Value = Spec> {
    let block = prop_oneof![Just(None), Just(Some(true)), Just(Some(false))];
    let r = prop_oneof![
        6 => (0..n, block.clone()).prop_map(|(owner, block)| Ref::To { owner, block }),
        1 => block.prop_map(|block| Ref::Dangling { block }),
        1 => (0..n).prop_map(|owner| Ref::UidMismatch { owner }),
        1 => Just(Ref::Unresolvable),
    ];
    (0u8..10, 0u8..6, proptest::collection::vec(r, 0..3)).prop_map(|(kind, finalizer, refs)| Spec {
        kind,
        finalizer,
        refs,
    })
}

fn world_strategy() -> impl Strategy<Value = (Vec<Spec>, usize, u8)> {
    (1usize..12).prop_flat_map(|n| (proptest::collection::vec(spec(n), n), 0..n, 0u8..3))
}

fn build(specs: &[Spec]) -> Graph {
    let base: Vec<Obj> = specs
        .iter()
        .enumerate()
        .map(|(i, s)| match s.kind {
            0 => obj("rbac.authorization.k8s.io/v1", "ClusterRole", None, &format!("o{i}")),
            1 => obj("v1", "Pod", Some("p"), &format!("o{i}")),
            _ => obj("v1", "ConfigMap", Some("p"), &format!("o{i}")),
        })
        .collect();
    let objs: Vec<Obj> = specs
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let mut o = base[i].clone();
            for r in &s.refs {
                o = match r {
                    Ref::To { owner, block } => o.owned_by(&base[*owner], None, *block),
                    Ref::Dangling { block } => {
                        o.owner_ref("v1", "ConfigMap", "gone", &format!("gone-{i}"), None, *block)
                    }
                    Ref::UidMismatch { owner } => {
                        let b = &base[*owner].0;
                        o.owner_ref(
                            b["apiVersion"].as_str().unwrap(),
                            b["kind"].as_str().unwrap(),
                            b["metadata"]["name"].as_str().unwrap(),
                            "stale-uid",
                            None,
                            Some(true),
                        )
                    }
                    Ref::Unresolvable => o.owner_ref("nope.example/v1", "Nope", "x", "nope-uid", None, None),
                };
            }
            match s.finalizer {
                0 => o.fin(&["x/y"]),
                1 => o.fin(&["batch.kubernetes.io/job-tracking"]),
                _ => o,
            }
        })
        .collect();
    graph(&objs)
}

fn cascade_of(c: u8) -> Cascade {
    [Cascade::Background, Cascade::Foreground, Cascade::Orphan][c as usize]
}

fn run(g: &Graph, target: NodeId, cascade: Cascade) -> Plan {
    let now: Timestamp = NOW.parse().unwrap();
    let lv = Liveness::new(g, now);
    plan(g, &lv, target, &PlanOptions { cascade, assume_finalizers: None, now })
}

/// The target and its transitive graph dependents.
fn reach(g: &Graph, target: NodeId) -> HashSet<NodeId> {
    let mut seen = HashSet::from([target]);
    let mut stack = vec![target];
    while let Some(n) = stack.pop() {
        for &d in &g.node(n).dependents {
            if seen.insert(d) {
                stack.push(d);
            }
        }
    }
    seen
}

/// Owners solid at the start, per object.
fn solid_owners(g: &Graph, n: NodeId) -> Vec<NodeId> {
    g.owners(n)
        .iter()
        .filter(|r| classify_reference(g, n, r) == OwnerState::Solid)
        .filter_map(|r| g.by_uid(&r.uid))
        .collect()
}

/// Whether `d` lost its reference to `owner` before step position `before`.
fn stripped_before(g: &Graph, p: &Plan, d: NodeId, owner: NodeId, before: usize) -> bool {
    let uid = Some(g.identity(owner).uid.clone());
    p.steps[..before].iter().any(|s| {
        s.object == d
            && match &s.action {
                Action::RemoveOwnerReferences { owners } | Action::UnblockOwnerReferences { owners } => {
                    owners.iter().any(|o| o.uid == uid)
                }
                _ => false,
            }
    })
}

fn check(specs: &[Spec], t: usize, c: u8) -> Result<(), TestCaseError> {
    let g = build(specs);
    let (kind, ns) = match specs[t].kind {
        0 => ("ClusterRole", None),
        1 => ("Pod", Some("p")),
        _ => ("ConfigMap", Some("p")),
    };
    let target = g.by_uid(&Uid(super::scenarios::uid_of(kind, ns, &format!("o{t}")))).unwrap();
    let cascade = cascade_of(c);
    let p = run(&g, target, cascade);

    // deterministic
    prop_assert_eq!(&p, &run(&g, target, cascade));

    let removed: HashSet<NodeId> = p.result.removed.iter().copied().collect();
    let blocked: HashSet<NodeId> = p.result.blocked.iter().map(|b| b.object).collect();
    prop_assert!(removed.is_disjoint(&blocked), "removed ∩ blocked");
    prop_assert_eq!(removed.len(), p.result.removed.len(), "removed listed once");

    // confined to the deletion's reach
    let r = reach(&g, target);
    for s in &p.steps {
        prop_assert!(r.contains(&s.object), "step {:?} outside the reach", s);
    }

    if cascade == Cascade::Orphan {
        prop_assert!(removed.iter().all(|&n| n == target), "orphan removed a dependent: {:?}", removed);
    }

    let pos_remove: HashMap<NodeId, usize> =
        p.steps.iter().enumerate().filter(|(_, s)| s.action == Action::Remove).map(|(i, s)| (s.object, i)).collect();
    let deleting_at_end: HashSet<NodeId> = blocked.clone();
    for &n in &removed {
        if n == target {
            continue;
        }
        for o in solid_owners(&g, n) {
            let at = pos_remove[&n];
            let ok = removed.contains(&o) || stripped_before(&g, &p, n, o, at) || deleting_at_end.contains(&o);
            prop_assert!(ok, "{:?} removed while its owner {:?} stays and still owns it", n, o);
            if cascade == Cascade::Background {
                prop_assert!(
                    removed.contains(&o) || stripped_before(&g, &p, n, o, at),
                    "background removed {:?} with a solid owner {:?} left",
                    n,
                    o
                );
            }
        }
    }

    for (i, s) in p.steps.iter().enumerate() {
        match &s.action {
            Action::Remove => {
                // a Remove follows the request that caused it and every finalizer removal
                prop_assert!(
                    p.steps[..i].iter().any(|e| e.object == s.object
                        && matches!(e.action, Action::Delete { .. } | Action::RemoveFinalizer { .. })),
                    "Remove without a cause"
                );
                prop_assert!(
                    !p.steps[i + 1..].iter().any(|e| e.object == s.object
                        && matches!(
                            e.action,
                            Action::RemoveFinalizer { .. } | Action::MarkDeleting { .. } | Action::Remove
                        )),
                    "a step after Remove"
                );
            }
            Action::RemoveFinalizer { finalizer } if finalizer == "foregroundDeletion" => {
                // Foreground: every blocking dependent is gone or no longer blocks first
                let o = s.object;
                for &d in &g.node(o).dependents {
                    if g.refs_to(d, o).any(|r| r.blocks()) {
                        let gone = pos_remove.get(&d).is_some_and(|&j| j < i);
                        prop_assert!(
                            gone || stripped_before(&g, &p, d, o, i),
                            "{:?} lost foregroundDeletion before its blocking dependent {:?}",
                            o,
                            d
                        );
                    }
                }
            }
            Action::Delete { .. } if s.actor == "garbage-collector" => {
                // Background: a dependent is deleted only once its solid owners are gone,
                // waiting, or stripped from it
                for o in solid_owners(&g, s.object) {
                    let gone = pos_remove.get(&o).is_some_and(|&j| j < i);
                    let waiting = p.steps[..i].iter().any(|e| {
                        e.object == o && matches!(&e.action, Action::MarkDeleting { finalizers, .. } if finalizers.iter().any(|f| f == "foregroundDeletion"))
                    });
                    prop_assert!(
                        gone || waiting || stripped_before(&g, &p, s.object, o, i),
                        "GC deleted {:?} before its owner {:?}",
                        s.object,
                        o
                    );
                }
            }
            _ => {}
        }
    }
    // with no finalizer nobody removes, every kind resolvable and no cluster-scoped object
    // naming a namespaced owner, nothing ends blocked
    // (an object owning itself with blockOwnerDeletion waits for itself in Foreground
    // forever, as in the real GC: processDeletingDependentsItem lists it as its own
    // blocking dependent and never enqueues it)
    let clean = specs.iter().enumerate().all(|(i, s)| {
        let self_blocking = s.refs.iter().any(|r| matches!(r, Ref::To { owner, block: Some(true) } if *owner == i));
        let unresolvable = s.refs.iter().any(|r| matches!(r, Ref::Unresolvable));
        let cluster_with_namespaced_owner = s.kind == 0
            && s.refs.iter().any(|r| {
                matches!(r, Ref::To { owner, .. } | Ref::UidMismatch { owner } if specs[*owner].kind != 0)
                    || matches!(r, Ref::Dangling { .. })
            });
        let stuck_finalizer = s.finalizer == 0;
        !(stuck_finalizer || self_blocking || unresolvable || cluster_with_namespaced_owner)
    });
    if clean {
        prop_assert!(blocked.is_empty(), "blocked without user finalizers: {:?}", p.result.blocked);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]
    #[test]
    fn planner_properties((specs, t, c) in world_strategy()) {
        check(&specs, t, c)?;
    }
}

/// 10,000-deep owner chain: no recursion, in every cascade.
#[test]
fn deep_chains_do_not_overflow() {
    let mut objs: Vec<Obj> = Vec::new();
    for i in 0..10_000 {
        let mut o = obj("v1", "ConfigMap", Some("p"), &format!("c{i}"));
        if i > 0 {
            o = o.owned_by(&objs[i - 1], Some(true), Some(true));
        }
        objs.push(o);
    }
    let g = graph(&objs);
    let head = g.find("", "ConfigMap", Some("p"), "c0").unwrap();
    for c in [Cascade::Background, Cascade::Foreground] {
        let p = run(&g, head, c);
        assert_eq!(p.result.removed.len(), 10_000, "{c:?}");
        if c == Cascade::Foreground {
            // the deepest goes first, the head last
            assert_eq!(p.result.removed.last(), Some(&head));
        } else {
            assert_eq!(p.result.removed.first(), Some(&head));
        }
    }
    let p = run(&g, head, Cascade::Orphan);
    assert_eq!(p.result.removed, [head]);
}

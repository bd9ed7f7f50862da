//! The planner: a deterministic dry run of `kubectl delete --cascade=… <target>` — the API
//! server's DELETE (gc-semantics §2), the garbage collector (§3, §4), the namespace
//! controller (§5.2) and the other finalizer controllers (§8), run to a fixpoint (§9).
//!
//! # Expected flow
//! 1. The user's DELETE, with an explicit `propagationPolicy` as kubectl sends it.
//! 2. The GC queues are drained; every request they make goes back through the API server
//!    rules and the graph builder's reactions.
//! 3. When the GC has nothing left, the kubelet and the finalizer controllers act (alive
//!    controllers whose condition holds), then the namespace controller; back to 2.
//! 4. What is left with a deletionTimestamp is *blocked*, with the reason.
//!
//! # Guarantees
//! Same graph, options and `now` give the same plan. No recursion; the work is
//! proportional to the objects the deletion reaches (plus one pass over the graph for a
//! Namespace or CRD target, or a pvc-protection finalizer).
//!
//! # Assumptions
//! Every informer is synced and sees every change at once; the GC workers run one item at
//! a time in FIFO order; a finalizer whose controller is Alive is removed once its
//! condition holds, if admission lets the UPDATE through (`admission::review`: a dead
//! `failurePolicy: Fail` webhook or conversion webhook rejects requests, which then never
//! happen; `--assume-finalizers=removed` does not override that); garbage the GC would collect anyway, unrelated to the target, is left
//! out (virtual owners reached by the plan are not followed to their other dependents).
//!
//! # Caveats
//! Where the real GC races (§9: cycle detection, orphaning vs. unobserved dependents,
//! NotFound vs. informer delete), the plan picks one order and says so in `notes`.

mod finalizers;
mod namespace;
mod queue;
mod step;
mod world;

#[cfg(test)]
mod fixtures_test;
#[cfg(test)]
mod proptests;
#[cfg(test)]
mod refusals_tests;
#[cfg(test)]
pub(crate) mod scenarios;

use k8s_openapi::jiff::Timestamp;

use crate::collector::decide::Stuck;
use crate::controllers::{ControllerState, Liveness};
use crate::graph::{Graph, NodeId};

pub use queue::{Queues, Work, WorkQueue};
pub use step::{Action, BlockedObject, Cascade, ObjRef, Plan, PlanResult, Step};
pub use world::World;

use crate::admission::review::Rejection;
use finalizers::{Controllers, Verdict};
use namespace::NamespaceController;
use world::{APISERVER, CRD_FINALIZER, FOREGROUND, GC, ORPHAN};

/// `--assume-finalizers`: overrides what the planner assumes of non-GC finalizers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AssumeFinalizers {
    /// Every controller is taken as alive (conditions such as "no pod uses the claim" still apply).
    Removed,
    /// No such finalizer is ever removed.
    Stuck,
}

/// How to plan.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PlanOptions {
    /// The `--cascade` of the planned `kubectl delete` (its `propagationPolicy`).
    pub cascade: Cascade,
    /// `--assume-finalizers`; `None`: judge each finalizer's controller by what the snapshot shows.
    pub assume_finalizers: Option<AssumeFinalizers>,
    /// The plan's clock: `--now`, else the snapshot's capture time, else the present.
    pub now: Timestamp,
}

/// Plans `kubectl delete --cascade=<opts.cascade> <target>`.
pub fn plan(g: &Graph, liveness: &Liveness, target: NodeId, opts: &PlanOptions) -> Plan {
    let mut sim = Simulation::new(g, liveness, opts.assume_finalizers, opts.now);
    sim.delete(target, "kubectl", Some(opts.cascade));
    sim.run();
    sim.finish(target, opts.cascade)
}

/// The simulation behind [`plan`], open for scenario tests: send requests, let everything
/// settle, read the outcome.
pub struct Simulation<'g, 'l> {
    /// The API server, GC graph and queues being simulated, and the steps so far.
    pub world: World<'g>,
    lv: &'l Liveness<'l>,
    assume: Option<AssumeFinalizers>,
    controllers: Controllers,
    namespaces: NamespaceController,
    gc_alive: bool,
    gc_evidence: String,
}

/// Safety net against a bug looping forever; never reached by a correct simulation.
const MAX_ITEMS: usize = 50_000_000;

impl<'g, 'l> Simulation<'g, 'l> {
    /// A simulation at `now` in which nothing has happened yet; the GC's liveness is judged once,
    /// from the `foregroundDeletion` finalizer's controller.
    pub fn new(g: &'g Graph, lv: &'l Liveness<'l>, assume: Option<AssumeFinalizers>, now: Timestamp) -> Self {
        let mut world = World::new(g, now);
        // The GC runs in kube-controller-manager; `foregroundDeletion` names it.
        let gc = g.node_ids().next().map(|first| lv.finalizer(first, FOREGROUND));
        let (gc_alive, gc_evidence) = match gc {
            Some(o) => (
                o.controller == ControllerState::Alive,
                format!("{} ({})", o.controller.as_str(), o.evidence.join("; ")),
            ),
            None => (true, String::new()),
        };
        if !gc_alive {
            world.note(format!(
                "the garbage collector is not running ({gc_evidence}): Background deletions leave dependents behind, Foreground and Orphan deletions hang"
            ));
        }
        for i in g.gaps() {
            world.note(format!("incomplete input: {i}"));
        }
        Simulation {
            world,
            lv,
            assume,
            controllers: Controllers::default(),
            namespaces: NamespaceController::default(),
            gc_alive,
            gc_evidence,
        }
    }

    /// A DELETE of `n` sent by `actor`, then what a GC that has been watching `n` already
    /// does for its state (a re-DELETE that changes nothing still has pending GC work).
    pub fn delete(&mut self, n: NodeId, actor: &str, propagation: Option<Cascade>) {
        self.world.wave = self.world.max_wave.max(1);
        if !self.world.steps.is_empty() {
            self.world.wave += 1;
        }
        // rejected by admission: nothing changes, but an object already being deleted still
        // has the GC's pending work
        if self.world.delete(n, actor, propagation, None)
            && propagation == Some(Cascade::Orphan)
            && self.world.stored(n)
        {
            self.world.note(
                "orphaning strips only the dependents the GC has observed; one created or not yet observed meanwhile keeps its reference and is then deleted as dangling (the garbage collector orphans from its own graph, not from a fresh list)".into(),
            );
        }
        self.world.resume(n);
    }

    /// A client removes a finalizer (e.g. after fixing an operator); false when admission
    /// rejects it.
    pub fn remove_finalizer(&mut self, n: NodeId, finalizer: &str, actor: &str) -> bool {
        self.world.wave = self.world.max_wave + 1;
        self.world.remove_finalizer(n, finalizer, actor)
    }

    /// A GC (re)start: every node of the graph is observed as new and queued, as after a
    /// controller-manager restart. Garbage unrelated to any request is then collected too.
    pub fn observe_all(&mut self) {
        let g = self.world.g;
        self.world.collect_unrelated = true;
        for n in g.node_ids() {
            self.world.queues.attempt_to_delete.add(n, self.world.max_wave + 1);
        }
    }

    /// Runs the GC, the controllers and the namespace controller until nothing moves.
    pub fn run(&mut self) {
        let mut items = 0usize;
        loop {
            if self.gc_alive {
                while let Some((work, n, wave)) = self.world.queues.pop() {
                    items += 1;
                    if items > MAX_ITEMS {
                        self.world.note("the simulation was cut short (too many GC work items)".into());
                        return;
                    }
                    self.world.wave = wave;
                    match work {
                        Work::Delete => self.world.attempt_to_delete(n),
                        Work::Orphan => self.world.attempt_to_orphan(n),
                    }
                }
            }
            self.world.wave = self.world.max_wave + 1;
            if self.controllers.round(&mut self.world, self.lv, self.assume) {
                continue;
            }
            if self.namespaces.round(&mut self.world, self.lv) {
                continue;
            }
            break;
        }
    }

    /// Collects the outcome and the blocked objects.
    pub fn finish(mut self, target: NodeId, cascade: Cascade) -> Plan {
        let g = self.world.g;
        // notes for items the GC cannot act on
        let mut stuck: Vec<(NodeId, Stuck)> = self.world.gc_stuck.iter().map(|(k, v)| (*k, v.clone())).collect();
        stuck.sort_by_key(|(n, _)| *n);
        for (n, why) in &stuck {
            if g.object(*n).is_none() {
                continue;
            }
            let r = ObjRef::of_node(g, *n).display();
            self.world.note(format!("{r}: {}", stuck_text(why)));
        }

        let mut blocked = Vec::new();
        self.world.wave = self.world.max_wave + 1;
        let deleting: Vec<NodeId> = self.world.deleting.iter().copied().collect();
        for n in deleting {
            if !self.world.stored(n) {
                continue;
            }
            let reasons = self.blocked_reasons(n);
            if reasons.is_empty() {
                continue;
            }
            for (actor, finalizer, reason) in &reasons {
                self.world.emit(actor, Action::Blocked { finalizer: finalizer.clone(), reason: reason.clone() }, n);
            }
            let mut finalizers = self.world.finalizers_of(n).to_vec();
            if let Some(s) = self.world.state(n) {
                finalizers.extend(s.spec_finalizers.iter().cloned());
            }
            let reason = reasons.into_iter().map(|(_, _, r)| r).collect::<Vec<_>>().join("; ");
            blocked.push(BlockedObject { object: n, finalizers, reason });
        }
        // objects not being deleted whose DELETE (or a patch the GC needs) the API server rejects
        let mut refused: Vec<NodeId> = self.world.rejected.keys().copied().collect();
        refused.sort();
        for n in refused {
            if !self.world.stored(n) || self.world.deleting.contains(&n) {
                continue;
            }
            let rejections: Vec<Rejection> = self.world.rejections(n).into_iter().cloned().collect();
            if rejections.is_empty() {
                continue;
            }
            for r in &rejections {
                self.world.emit(
                    APISERVER,
                    Action::Blocked { finalizer: r.finalizer.clone(), reason: r.reason.clone() },
                    n,
                );
            }
            let reason = rejections.into_iter().map(|r| r.reason).collect::<Vec<_>>().join("; ");
            blocked.push(BlockedObject { object: n, finalizers: self.world.finalizers_of(n).to_vec(), reason });
        }

        let mut owner_refs_removed = Vec::new();
        for &n in &self.world.touched {
            if !self.world.stored(n) {
                continue;
            }
            let Some(s) = self.world.state(n) else { continue };
            if s.lost.is_empty() {
                continue;
            }
            let ns = g.identity(n).namespace;
            let mut owners: Vec<ObjRef> = Vec::new();
            for r in &s.lost {
                let o = ObjRef::of_owner(g, r, ns);
                if !owners.contains(&o) {
                    owners.push(o);
                }
            }
            owner_refs_removed.push((n, owners));
        }
        let removed = self.world.removed.clone();
        let (steps, notes) = self.world.into_parts();
        Plan { target, cascade, steps, result: PlanResult { removed, owner_refs_removed, blocked }, notes }
    }

    /// Why a deleting object will not finish: (actor, finalizer, reason) per cause.
    fn blocked_reasons(&mut self, n: NodeId) -> Vec<(String, Option<String>, String)> {
        let w = &self.world;
        let mut out = Vec::new();
        if let Some(why) = self.controllers.kubelet_blocked(w, n) {
            out.push((finalizers::KUBELET.to_string(), None, why));
        }
        let rejections = w.rejections(n);
        for r in &rejections {
            out.push((APISERVER.into(), r.finalizer.clone(), r.reason.clone()));
        }
        let rejected = |f: &str| rejections.iter().any(|r| r.finalizer.as_deref() == Some(f));
        for f in w.finalizers_of(n).to_vec() {
            let f = f.as_str();
            if f == FOREGROUND || f == ORPHAN {
                if !self.gc_alive {
                    out.push((
                        GC.into(),
                        Some(f.into()),
                        format!("{f}: the garbage collector is not running ({})", self.gc_evidence),
                    ));
                    continue;
                }
                if rejected(f) {
                    continue;
                }
                if f == ORPHAN {
                    out.push((
                        GC.into(),
                        Some(f.into()),
                        format!("{f}: the garbage collector has not orphaned the dependents"),
                    ));
                    continue;
                }
                let blocking = self.world.blocking_dependents_of(n);
                let list: Vec<String> = blocking
                    .iter()
                    .take(10)
                    .map(|&d| {
                        let mut s = ObjRef::of_node(g_of(w), d).display();
                        if let Some(why) = w.gc_stuck.get(&d) {
                            s.push_str(&format!(" (the GC cannot act on it: {})", stuck_text(why)));
                        } else if let Some(r) = w.rejections(d).first() {
                            s.push_str(&format!(" ({})", r.short));
                        } else if w.deletion_of(d).is_some() {
                            s.push_str(" (itself blocked)");
                        }
                        s
                    })
                    .collect();
                let more =
                    if blocking.len() > 10 { format!(" and {} more", blocking.len() - 10) } else { String::new() };
                let reason = if blocking.is_empty() {
                    format!("{f}: no blocking dependent is left, yet the GC was never prompted to remove it")
                } else {
                    format!("{f}: waits for blocking dependent(s) {}{more}", list.join(", "))
                };
                out.push((GC.into(), Some(f.into()), reason));
                continue;
            }
            if f == CRD_FINALIZER && finalizers::is_crd(w, n) {
                match self.controllers.crd_verdict(w, self.lv, self.assume, n) {
                    Verdict::Stuck { actor, reason } | Verdict::Wait { actor, reason } => {
                        out.push((actor, Some(f.into()), reason))
                    }
                    Verdict::Remove { actor } => {
                        out.push((actor, Some(f.into()), format!("{f}: instances remain")));
                    }
                }
                continue;
            }
            match self.controllers.verdict(w, self.lv, self.assume, n, f) {
                Verdict::Stuck { actor, reason } | Verdict::Wait { actor, reason } => {
                    out.push((actor, Some(f.into()), reason))
                }
                Verdict::Remove { .. } => {}
            }
        }
        if namespace::is_namespace(w, n)
            && let Some(why) = self.namespaces.blocked_reason(w, self.lv, n)
        {
            out.push((namespace::NAMESPACE_CONTROLLER.into(), Some(world::NS_FINALIZER.into()), why));
        }
        out
    }
}

fn g_of<'g>(w: &World<'g>) -> &'g Graph {
    w.g
}

fn stuck_text(why: &Stuck) -> String {
    match why {
        Stuck::Unresolvable { api_version, kind, why } => format!(
            "{api_version}/{kind} has no REST mapping ({why}); the GC requeues it forever and never acts on it (the garbage collector's restMappingError)"
        ),
        Stuck::NamespacedOwnerOfClusterScoped { owner } => format!(
            "it is cluster-scoped and names a namespaced owner ({} {}); the GC drops it and never collects it (the garbage collector records an OwnerRefInvalidNamespace event)",
            owner.kind, owner.name
        ),
    }
}

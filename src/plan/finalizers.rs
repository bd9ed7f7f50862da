//! The controllers other than the GC that finish deletions (gc-semantics §8): the kubelet
//! for pods in graceful termination, the finalizer controllers (pvc/pv protection, job
//! tracking, CRD cleanup, operators), each acting only when its controller is alive and its
//! condition holds.

use crate::names::{CRD, PV_PROTECTION, PVC_PROTECTION};

use std::collections::HashMap;

use super::AssumeFinalizers;
use super::world::{CRD_FINALIZER, FOREGROUND, ORPHAN, World};
use crate::controllers::{ControllerState, Liveness};
use crate::graph::NodeId;

pub const KUBELET: &str = "kubelet";

/// What happens to one finalizer of a deleting object.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// The controller removes it now.
    Remove { actor: String },
    /// The controller is alive but its condition does not hold (yet).
    Wait { actor: String, reason: String },
    /// No live controller: it stays.
    Stuck { actor: String, reason: String },
}

/// State the finalizer controllers keep across rounds.
#[derive(Default)]
pub struct Controllers {
    /// (namespace, claim name) → pods naming the claim; built on first use.
    claim_users: Option<HashMap<(String, String), Vec<NodeId>>>,
    /// CRD → its instances; the CRD finalizer controller has sent their DELETEs.
    crd_instances: HashMap<NodeId, Vec<NodeId>>,
}

impl Controllers {
    /// One round over the deleting objects; true if anything changed.
    pub fn round(&mut self, w: &mut World, lv: &Liveness, assume: Option<AssumeFinalizers>) -> bool {
        let mut changed = false;
        let work: Vec<NodeId> = w.deleting.iter().copied().collect();
        for n in work {
            if !w.stored(n) {
                continue;
            }
            if let Some(node) = self.kubelet_target(w, n)
                && node_ready(w, &node)
                && kubelet_stalled(w, n).is_none()
            {
                // a rejected DELETE leaves the pod as it was: nothing moved
                changed |= w.delete(n, KUBELET, None, Some(0));
                if !w.stored(n) {
                    continue;
                }
            }
            let fins: Vec<String> = w.finalizers_of(n).to_vec();
            // the removals decided, applied together (one rewrite of the list, not one each)
            let mut batch: Vec<(String, String)> = Vec::new();
            for f in fins {
                if f == ORPHAN || f == FOREGROUND || !w.stored(n) {
                    continue;
                }
                if f == CRD_FINALIZER && is_crd(w, n) {
                    changed |= w.remove_finalizers(n, std::mem::take(&mut batch));
                    changed |= self.crd_round(w, lv, assume, n);
                    continue;
                }
                if let Verdict::Remove { actor } = self.verdict(w, lv, assume, n, &f) {
                    // the controller acts; admission may still reject its UPDATE
                    batch.push((f, actor));
                }
            }
            changed |= w.remove_finalizers(n, batch);
        }
        changed
    }

    /// The node a pod in graceful termination waits on, if it does.
    pub fn kubelet_target(&self, w: &World, n: NodeId) -> Option<String> {
        let (group, kind) = w.kind_of(n);
        if !(group.is_empty() && kind == "Pod") || w.deletion_of(n).is_none() {
            return None;
        }
        if w.grace_of(n).is_none_or(|g| g <= 0) {
            return None;
        }
        let o = w.g.object(n)?;
        Some(o.str_field("/spec/nodeName").unwrap_or("").to_string())
    }

    /// Why the kubelet will not finish a pod, if it will not.
    pub fn kubelet_blocked(&self, w: &World, n: NodeId) -> Option<String> {
        let node = self.kubelet_target(w, n)?;
        if node_ready(w, &node) {
            let past = kubelet_stalled(w, n)?;
            return Some(format!(
                "the pod's grace period ended {} ago and it is still Terminating on {node}, whose kubelet is alive: the kubelet cannot finish it (why-stuck's PodTerminationStalled says what it reports)",
                hours_minutes(past)
            ));
        }
        let why = match w.g.find("", "Node", None, &node) {
            Some(id) if w.stored(id) => format!("node {node} is NotReady"),
            _ => format!("node {node} does not exist"),
        };
        Some(format!(
            "the pod is Terminating on {node}, but {why}: no kubelet will confirm its termination (force-delete with --grace-period=0 --force)"
        ))
    }

    /// The verdict for one non-GC finalizer.
    pub fn verdict(
        &mut self,
        w: &World,
        lv: &Liveness,
        assume: Option<AssumeFinalizers>,
        n: NodeId,
        f: &str,
    ) -> Verdict {
        let owner = lv.finalizer(n, f);
        let actor = owner.removed_by.clone().unwrap_or_else(|| "unknown controller".to_string());
        match assume {
            Some(AssumeFinalizers::Stuck) => {
                return Verdict::Stuck {
                    actor,
                    reason: format!("{f} is assumed never removed (--assume-finalizers=stuck)"),
                };
            }
            Some(AssumeFinalizers::Removed) => {}
            None if owner.controller != ControllerState::Alive => {
                let who = owner.removed_by.as_deref().unwrap_or("its controller");
                let mut reason = format!("{f}: {who} is {}", owner.controller.as_str());
                if !owner.evidence.is_empty() {
                    reason.push_str(&format!(": {}", owner.evidence.last().map(String::as_str).unwrap_or_default()));
                }
                return Verdict::Stuck { actor, reason };
            }
            None => {
                if let Some(why) = held_by_plan(w, &owner) {
                    return Verdict::Stuck { actor, reason: format!("{f}: {why}") };
                }
            }
        }
        match f {
            PVC_PROTECTION => {
                let users = self.claim_users_of(w, n);
                if users.is_empty() {
                    Verdict::Remove { actor }
                } else {
                    let names: Vec<String> = users.iter().map(|&p| super::ObjRef::of_node(w.g, p).display()).collect();
                    Verdict::Wait { actor, reason: format!("{f}: the claim is still used by {}", names.join(", ")) }
                }
            }
            PV_PROTECTION => match bound_claim(w, n) {
                None => Verdict::Remove { actor },
                Some(c) => Verdict::Wait {
                    actor,
                    reason: format!("{f}: the volume is still bound to {}", super::ObjRef::of_node(w.g, c).display()),
                },
            },
            _ => Verdict::Remove { actor },
        }
    }

    fn claim_users_of(&mut self, w: &World, pvc: NodeId) -> Vec<NodeId> {
        let index = self.claim_users.get_or_insert_with(|| {
            let mut m: HashMap<(String, String), Vec<NodeId>> = HashMap::new();
            for (id, o) in w.g.observed() {
                if o.kind != "Pod" || !o.group().is_empty() {
                    continue;
                }
                let Some(vols) = o.field("/spec/volumes").and_then(|v| v.as_array()) else { continue };
                for v in vols {
                    if let Some(c) = v.pointer("/persistentVolumeClaim/claimName").and_then(|c| c.as_str()) {
                        m.entry((o.namespace_str().to_string(), c.to_string())).or_default().push(id);
                    }
                }
            }
            m
        });
        let id = w.g.identity(pvc);
        let key = (id.namespace.unwrap_or_default().to_string(), id.name.to_string());
        index.get(&key).map(|v| v.iter().copied().filter(|&p| w.stored(p)).collect()).unwrap_or_default()
    }

    /// The CRD finalizer controller (§2.8); true if it did something.
    fn crd_round(&mut self, w: &mut World, lv: &Liveness, assume: Option<AssumeFinalizers>, crd: NodeId) -> bool {
        let actor = match self.crd_verdict(w, lv, assume, crd) {
            Verdict::Stuck { .. } => return false,
            Verdict::Remove { actor } | Verdict::Wait { actor, .. } => actor,
        };
        let o = w.g.object(crd).expect("a stored CRD is observed");
        if !o.condition("Established").is_some_and(|c| c.is_true()) {
            return w.remove_finalizer(crd, CRD_FINALIZER, &actor);
        }
        if let std::collections::hash_map::Entry::Vacant(e) = self.crd_instances.entry(crd) {
            let insts = instances(w, crd);
            for &i in &insts {
                if w.stored(i) {
                    // DeleteCollection through storage with nil options: grace 0, no policy,
                    // and no admission
                    w.delete_admitted(i, &actor, None, Some(0));
                }
            }
            e.insert(insts);
            return true;
        }
        if self.crd_instances[&crd].iter().any(|&i| w.stored(i)) {
            return false;
        }
        w.remove_finalizer(crd, CRD_FINALIZER, &actor)
    }

    /// The CRD cleanup finalizer's verdict; `Wait` lists the instances that remain.
    pub fn crd_verdict(&self, w: &World, lv: &Liveness, assume: Option<AssumeFinalizers>, crd: NodeId) -> Verdict {
        let owner = lv.finalizer(crd, CRD_FINALIZER);
        let actor = owner.removed_by.clone().unwrap_or_else(|| "kube-apiserver (CRD finalizer controller)".into());
        match assume {
            Some(AssumeFinalizers::Stuck) => {
                return Verdict::Stuck {
                    actor,
                    reason: format!("{CRD_FINALIZER} is assumed never removed (--assume-finalizers=stuck)"),
                };
            }
            None if owner.controller != ControllerState::Alive => {
                return Verdict::Stuck {
                    actor,
                    reason: format!("{CRD_FINALIZER}: the CRD finalizer controller is {}", owner.controller.as_str()),
                };
            }
            _ => {}
        }
        let left: Vec<String> = self
            .crd_instances
            .get(&crd)
            .map(|v| {
                v.iter().copied().filter(|&i| w.stored(i)).map(|i| super::ObjRef::of_node(w.g, i).display()).collect()
            })
            .unwrap_or_default();
        if left.is_empty() {
            Verdict::Remove { actor }
        } else {
            Verdict::Wait { actor, reason: format!("{CRD_FINALIZER}: instances remain: {}", left.join(", ")) }
        }
    }
}

pub fn is_crd(w: &World, n: NodeId) -> bool {
    w.kind_of(n) == CRD
}

/// The instances of a CRD in the snapshot.
fn instances(w: &World, crd: NodeId) -> Vec<NodeId> {
    let Some(o) = w.g.object(crd) else { return Vec::new() };
    let (Some(group), Some(kind)) = (o.str_field("/spec/group"), o.str_field("/spec/names/kind")) else {
        return Vec::new();
    };
    w.g.observed()
        .map(|(n, _)| n)
        .filter(|&n| {
            let id = w.g.identity(n);
            id.kind == kind && id.group() == group
        })
        .collect()
}

/// How long past the end of its grace period a pod on a Ready node is left to its kubelet:
/// `why-stuck`'s default `--stuck-after`, past which it calls the pod `PodTerminationStalled`
/// (contract §4.3). A plan takes no `--stuck-after`; it blocks what the default calls stuck.
pub const KUBELET_STALLED_AFTER: i64 = 3600;

/// How long ago the grace period of pod `n` ended, when that is more than
/// [`KUBELET_STALLED_AFTER`]: its kubelet has not finished it and will not.
fn kubelet_stalled(w: &World, n: NodeId) -> Option<i64> {
    let past = w.now.as_second() - w.deletion_of(n)?.as_second();
    (past > KUBELET_STALLED_AFTER).then_some(past)
}

/// `1h30m`, `45m`: a duration long past an hour as the plan says it.
fn hours_minutes(seconds: i64) -> String {
    let (h, m) = (seconds / 3600, (seconds % 3600) / 60);
    if h > 0 { format!("{h}h{m}m") } else { format!("{m}m") }
}

/// Whether a Node exists and reports Ready=True.
pub fn node_ready(w: &World, name: &str) -> bool {
    if name.is_empty() {
        return false;
    }
    match w.g.find("", "Node", None, name) {
        Some(id) if w.stored(id) => w.g.object(id).and_then(|o| o.condition("Ready")).is_some_and(|c| c.is_true()),
        _ => false,
    }
}

/// The claim a PersistentVolume is still bound to, if any.
fn bound_claim(w: &World, pv: NodeId) -> Option<NodeId> {
    let o = w.g.object(pv)?;
    if o.str_field("/status/phase") != Some("Bound") {
        return None;
    }
    let ns = o.str_field("/spec/claimRef/namespace")?;
    let name = o.str_field("/spec/claimRef/name")?;
    let id = w.g.find("", "PersistentVolumeClaim", Some(ns), name)?;
    if !w.stored(id) {
        return None;
    }
    match o.str_field("/spec/claimRef/uid") {
        Some(uid) if uid != w.g.identity(id).uid.as_str() => None,
        _ => Some(id),
    }
}

/// Why a controller alive now cannot remove a finalizer once the plan has gone this far: the
/// plan deletes what runs it (its workload, an owner of the workload, or its namespace, whose
/// pods the namespace controller deletes and which nothing can recreate pods in). The
/// controller holds itself: "alive" was true before the plan, not after.
fn held_by_plan(w: &World, owner: &crate::controllers::FinalizerOwner) -> Option<String> {
    let c = owner.workload.as_ref()?;
    let group = if c.kind == "Pod" { "" } else { "apps" };
    let workload = w.g.find(group, &c.kind, c.namespace.as_deref(), &c.name)?;
    let mut cur = Some(workload);
    for _ in 0..4 {
        let Some(n) = cur else { break };
        if !w.stored(n) || w.deletion_of(n).is_some() {
            let what = super::ObjRef::of_node(w.g, n).display();
            return Some(format!(
                "its controller {c} is itself deleted along the way ({what}), so it stops before it removes the finalizer and nothing brings it back: it holds itself"
            ));
        }
        cur = w.g.controller_of(n);
    }
    let ns = c.namespace.as_deref()?;
    let node = w.g.find("", "Namespace", None, ns)?;
    (w.deletion_of(node).is_some()).then(|| {
        format!(
            "its controller {c} runs in namespace {ns}, which is being deleted: its pods are deleted and none can be created there again, so it stops before it removes the finalizer: it holds itself"
        )
    })
}

//! What `why-stuck --all` reads beyond the scope's metadata: a read plan of its own, rather than
//! a capture's. The scope step lists every type as `tree` does (metadata-only across namespaces
//! with `-A`; the namespace in full with `-n`); from that pass, which finds what is being
//! deleted, bodies are read only where an answer about one of those objects reads them:
//!
//! - Pods and claims in full in the namespaces that hold a terminating claim, that are
//!   themselves terminating, or that a terminating volume's claim lives in: which pod still
//!   mounts a claim is in the pods' specs (`kubernetes.io/pvc-protection`), a namespace's pod
//!   wave in its pods' states. A terminating pod elsewhere is read by name (its grace and node
//!   are in its own body), with managedFields left out of the lists, as of every full list
//!   here (the sweep re-reads them for the finalizers its answers attribute).
//! - Workloads and ServiceAccounts in full in the namespaces where pods are being deleted (or
//!   that are): a pod's answer judges its own workload (a controller that holds itself).
//! - Every other object being deleted whose kind's body the analysis reads, by name
//!   ([`OWN_BODIES`]: a GET each when few, else lists kept to them).
//! - Workloads, pods and ServiceAccounts where controllers live, managedFields for the
//!   finalizers no built-in controller removes, workloads named like their managers, the CRDs
//!   being deleted: as for one answer (the plan's later steps).
//! - For each answer: the webhooks and backends its deletion meets, and the Events of the
//!   objects it names (by uid when they are few, else by namespace: never every Event of the
//!   cluster), decided on the graph of what was read, as for one answer.
//!
//! With `-n NS` the scope step already reads the namespace in full; only the per-answer reads
//! remain.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::jiff::Timestamp;

use crate::controllers::Liveness;
use crate::graph::{Graph, NodeId};
use crate::snapshot::Uid;
use crate::snapshot::object::keeps_body;
use crate::snapshot::raw::RawDoc;
use crate::source::live::ask::{Answered, Ask, Body, Named};
use crate::source::live::{Discovery, ListType};

use super::{EVERYWHERE, Limits, Scope, by_name};

/// Objects being deleted whose own bodies are read: a GET each up to 16 per type; more, a list
/// in each namespace concerned up to 8; more, one list everywhere (each kept to them).
pub const OWN_BODIES: Limits = Limits { gets: 16, namespaces: 8 };

/// Answer-named objects whose Events are listed by uid, one list each, up to this many; more,
/// the Events of each namespace concerned are listed once.
pub const EVENTS_BY_UID: usize = 16;

/// The kinds read in full in the namespaces where claims are being deleted (or that are).
const WITH_CLAIMS: [(&str, &str); 2] = [("", "Pod"), ("", "PersistentVolumeClaim")];

/// The kinds read in full in the namespaces where pods are being deleted, or that are: a pod's
/// answer judges its own workload (a controller that holds itself through its own pod, whose
/// StatefulSet or DaemonSet replaces it only once it is gone) by its status and ServiceAccount,
/// as one answer reads its namespace. (A custom resource's controller is judged where
/// controllers live: the namespaces of the ServiceAccounts RBAC binds and of Leases.)
const BESIDE_DELETIONS: [(&str, &str); 5] = [
    ("", "ServiceAccount"),
    ("apps", "Deployment"),
    ("apps", "StatefulSet"),
    ("apps", "DaemonSet"),
    ("apps", "ReplicaSet"),
];

/// What the metadata pass found: the namespaces whose pods and claims are read in full, and
/// the objects being deleted whose own bodies are.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Deleting {
    /// Namespaces holding a terminating claim, terminating namespaces, and the namespaces of
    /// the claims of terminating volumes.
    pub claim_namespaces: BTreeSet<String>,
    /// By type (its index in discovery): the terminating objects read metadata-only.
    pub own_bodies: BTreeMap<usize, Named>,
    /// Namespaces holding a pod being deleted, or being deleted themselves, whose workloads and
    /// ServiceAccounts are read in full ([`BESIDE_DELETIONS`]).
    pub namespaces: BTreeSet<String>,
}

fn deleting(doc: &RawDoc) -> bool {
    doc.metadata.as_ref().is_some_and(|m| m.deletion_timestamp.is_some())
}

/// A terminating volume's claim's namespace (`spec.claimRef.namespace`).
fn claim_namespace(doc: &RawDoc) -> Option<String> {
    let spec = doc.body_field("spec")?;
    spec.pointer("/claimRef/namespace")?.as_str().map(str::to_string)
}

/// The namespaces being deleted, among the answers of the metadata pass.
pub fn terminating_namespaces(answers: &[Answered]) -> BTreeSet<String> {
    answers
        .iter()
        .filter(|a| a.ask.kind.group.is_empty() && a.ask.kind.kind == "Namespace")
        .flat_map(|a| a.result.iter().flatten())
        .filter(|doc| deleting(doc))
        .filter_map(|doc| doc.metadata.as_ref()?.name.clone())
        .collect()
}

/// The deletions in the answers of the metadata pass, and what their answers read of them.
pub fn deleting_in(d: &Discovery, answers: &[Answered]) -> Deleting {
    let mut out = Deleting::default();
    for a in answers {
        let t = &a.ask.kind;
        for doc in a.result.iter().flatten().filter(|doc| deleting(doc)) {
            let Some(m) = doc.metadata.as_ref() else { continue };
            let (Some(name), ns) = (m.name.clone(), m.namespace.clone()) else { continue };
            match (t.group.as_str(), t.kind.as_str()) {
                ("", "Namespace") => {
                    out.namespaces.insert(name.clone());
                    out.claim_namespaces.insert(name);
                    continue;
                }
                // its own body (grace, node) is read by name below, and its workload beside it:
                // no other pod or claim of its namespace is in its answer
                ("", "Pod") => out.namespaces.extend(ns.clone()),
                ("", "PersistentVolumeClaim") => {
                    out.claim_namespaces.extend(ns);
                    continue;
                }
                ("", "PersistentVolume") => out.claim_namespaces.extend(claim_namespace(doc)),
                _ => {}
            }
            let body_read = a.ask.body == Body::Full || !t.namespaced;
            if !body_read
                && keeps_body(&t.group, &t.kind)
                && let Some(i) = d.types.iter().position(|x| x == t)
            {
                out.own_bodies.entry(i).or_default().insert((ns, name));
            }
        }
    }
    out
}

/// The asks for what [`deleting_in`] found, leaving out what the metadata pass already read
/// in full.
pub fn body_asks(d: &Discovery, found: &Deleting, answers: &[Answered]) -> Vec<Ask> {
    let mut asks = Vec::new();
    let lists = [
        (&WITH_CLAIMS[..], &found.claim_namespaces, "a namespace where claims are being deleted"),
        (&BESIDE_DELETIONS[..], &found.namespaces, "a namespace where something is being deleted"),
    ];
    for (kinds, namespaces, why) in lists {
        for t in kinds.iter().filter_map(|(g, k)| d.find(g, k)) {
            for ns in namespaces {
                if !answers.iter().any(|a| a.ask.covers(t, Some(ns), Body::Full)) {
                    asks.push(Ask::list(t, Some(ns.clone()), why).full().dropping_managed_fields(true));
                }
            }
        }
    }
    let among = |t: &ListType, kinds: &[(&str, &str)]| kinds.iter().any(|&(g, k)| t.group == g && t.kind == k);
    for (&i, objects) in &found.own_bodies {
        let t: &ListType = &d.types[i];
        if among(t, EVERYWHERE) {
            continue;
        }
        // those the namespace lists above read already
        let listed = |ns: &Option<String>| {
            let ns = ns.as_deref().unwrap_or_default();
            (among(t, &WITH_CLAIMS) && found.claim_namespaces.contains(ns))
                || (among(t, &BESIDE_DELETIONS) && found.namespaces.contains(ns))
        };
        let objects: Named = objects.iter().filter(|(ns, _)| !listed(ns)).cloned().collect();
        asks.extend(
            by_name(t, &objects, OWN_BODIES, "an object being deleted whose spec or status its answer reads")
                .into_iter()
                .map(|a| a.full().dropping_managed_fields(true)),
        );
    }
    asks
}

/// The objects `why-stuck --all` answers about in `scope`, on the graph read so far: those the
/// sweep itself answers about.
pub fn answered(g: &Graph, scope: &Scope) -> Vec<NodeId> {
    let swept = match scope {
        Scope::Cluster => crate::sweep::Scope::Cluster,
        Scope::Namespace(ns) => crate::sweep::Scope::Namespace(ns.clone()),
    };
    crate::sweep::terminating(g, &swept)
}

/// The analysis's reads (webhooks and their backends) for every answer of the sweep.
pub fn reads_of_answers(g: &Graph, scope: &Scope) -> Vec<crate::diagnose::reads::Read> {
    let mut out: Vec<crate::diagnose::reads::Read> = Vec::new();
    for x in answered(g, scope) {
        for r in crate::diagnose::reads::wanted(g, x) {
            if !out.contains(&r) {
                out.push(r);
            }
        }
    }
    out
}

/// The objects whose Events the answers of the sweep show, each once.
pub fn event_objects(
    g: &Graph,
    scope: &Scope,
    now: Timestamp,
    o: &crate::diagnose::Options,
) -> Vec<(Uid, String, Option<String>)> {
    let live = Liveness::new(g, now);
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    for x in answered(g, scope) {
        let d = crate::diagnose::why_stuck_with(g, &live, x, o);
        for e in crate::diagnose::events::wanted(g, &d) {
            if seen.insert(e.0.clone()) {
                out.push(e);
            }
        }
    }
    out
}

/// The Events of `objects`: by uid when few ([`EVENTS_BY_UID`]), else every Event of each
/// namespace concerned, once (the answers show only those of the objects they name).
pub fn event_asks(d: &Discovery, objects: Vec<(Uid, String, Option<String>)>) -> Vec<Ask> {
    if objects.len() <= EVENTS_BY_UID {
        return super::answer::event_asks(d, objects);
    }
    let Some(t) = d.find("", "Event").or_else(|| d.find("events.k8s.io", "Event")) else { return Vec::new() };
    let namespaces: BTreeSet<String> =
        objects.into_iter().map(|(_, _, ns)| ns.unwrap_or_else(|| "default".into())).collect();
    namespaces
        .into_iter()
        .map(|ns| Ask::list(t, Some(ns), "the Events of the objects the answers name, in their namespace").full())
        .collect()
}

//! What `why-stuck --all` reads beyond the scope's metadata: a read plan of its own, rather than
//! a capture's. The scope step lists every type as `tree` does (metadata-only across namespaces
//! with `-A`; the namespace in full with `-n`); from that pass, which finds what is being
//! deleted, bodies are read only where an answer about one of those objects reads them. With
//! `-A` the namespaces, volumes and claims ([`FIRST`]) are read a round before the rest, so that
//! the scope reads the pods of the namespaces below in full and every other pod metadata-only,
//! each once ([`pod_asks`]):
//!
//! - Pods in full in the namespaces that hold a terminating claim, that are themselves
//!   terminating, or that a terminating volume's claim lives in: which pod still mounts a
//!   claim is in the pods' specs (`kubernetes.io/pvc-protection`), a namespace's pod wave in
//!   its pods' states. Claims in full in the last two (a namespace's content, a volume's
//!   claim); a terminating claim elsewhere is not read again (its answer is in the pods).
//!   managedFields are left out of these reads, as of every full list here (the sweep re-reads
//!   them for the finalizers its answers attribute). Where these namespaces are most of the
//!   cluster's, at most 16 lists of every namespace but the others replace a list each ([`in_full`]).
//! - Workloads and ServiceAccounts in full in the namespaces where pods are being deleted (or
//!   that are): a pod's answer judges its own workload (a controller that holds itself).
//! - A pod or Service being deleted elsewhere, by name ([`OWN_BODIES`]: a pod's grace and node,
//!   a Service's load balancer, are in its own body; [`OWN_GETS_PER_NAMESPACE`]: a GET each where they are few among their namespace's,
//!   else a list of that namespace kept to them).
//! - Workloads, pods and ServiceAccounts where controllers live, managedFields for the
//!   finalizers no built-in controller removes, workloads named like their managers, the CRDs
//!   being deleted: as for one answer (the plan's later steps).
//! - For each answer: the webhooks and backends its deletion meets, and the Events of the
//!   objects it names (by uid where they are few in their namespace, else by namespace, or
//!   by a few lists of every namespace but the others where those are most: never every Event of
//!   the cluster), decided on the graph of what was read, as for one answer.
//!
//! With `-n NS` the scope step already reads the namespace in full; only the per-answer reads
//! remain.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::jiff::Timestamp;

use crate::controllers::Liveness;
use crate::graph::{Graph, NodeId};
use crate::snapshot::Uid;
use crate::snapshot::raw::RawDoc;
use crate::source::live::ask::{Answered, Ask, Body, Fetch, Named};
use crate::source::live::{Discovery, ListType};

use super::{EVERYWHERE, Scope};

/// Objects being deleted whose own bodies are read, in one namespace: a GET each up to this
/// many, unless two or more are at least a quarter of their type's objects there; else a list
/// of the namespace kept to them. A list sends every object of the namespace, a GET only its own: 31
/// Deployments being deleted among 688 were one list of them all (1.46 MB of the 10k
/// benchmark's 12.3 MB), and are 31 GETs; the requests stay bounded by namespaces, not objects.
pub const OWN_GETS_PER_NAMESPACE: usize = 4;

/// Answer-named objects whose Events are listed by uid, one list each, up to this many in a
/// namespace; more, the Events of that namespace are listed once. A namespace's Events are
/// often most of its objects on a busy cluster, and a list of them all to show those of one or
/// two objects reads them all; the requests stay bounded by namespaces, not objects.
pub const EVENTS_BY_UID_PER_NAMESPACE: usize = 4;

/// The namespaced kinds whose answer, when one of them is being deleted, reads its own spec or
/// status: a pod's (its grace period and node, its phase and containers, the Job tracking
/// it). The answers about the others read their metadata and other objects: a claim's the
/// pods that mount it (`PODS`), a workload deleted in the foreground its dependents; a
/// workload's replicas, a Service's type or a Lease's renewals are read where they judge a
/// controller or a webhook's backend, by those steps. Cluster-scoped objects are listed in
/// full by the metadata pass.
// a Service's: the load balancer a removal of its finalizer leaves behind (`diagnose::leaves`)
const OWN_BODIES: [(&str, &str); 2] = [("", "Pod"), ("", "Service")];

fn among(t: &ListType, kinds: &[(&str, &str)]) -> bool {
    kinds.iter().any(|&(g, k)| t.group == g && t.kind == k)
}

/// Read in full in the namespaces where claims are being deleted (or that are): which pod
/// still mounts a claim is in the pods' specs.
const PODS: [(&str, &str); 1] = [("", "Pod")];

/// Read in full in the namespaces that are being deleted (their content's answers) and where a
/// terminating volume's claim lives (the volume's answer judges its claim); a claim being
/// deleted elsewhere is read by name ([`OWN_GETS_PER_NAMESPACE`]): its answer is in its
/// namespace's pods, not in its other claims.
const CLAIMS: [(&str, &str); 1] = [("", "PersistentVolumeClaim")];

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

/// Read first when sweeping every namespace: where namespaces, volumes and claims are being
/// deleted tells where pods are read in full ([`Deleting::pod_namespaces`]), so that the scope
/// reads each pod once, in full there and metadata-only elsewhere ([`pod_asks`]).
pub const FIRST: [(&str, &str); 3] = [("", "Namespace"), ("", "PersistentVolume"), ("", "PersistentVolumeClaim")];

/// The longest field selector that leaves namespaces out of a list of every namespace. The API
/// server reads selectors from the URL, whose request line must fit its header limit (1 MiB by
/// default); past this, the namespaces are listed one by one (and the pods of the namespaces
/// read in full are listed twice, metadata-only with the others and in full).
const EXCLUDING_AT_MOST: usize = 16 * 1024;

/// Whether `metadata.namespace!=` terms for `namespaces` fit in one selector.
fn fits(namespaces: &BTreeSet<String>) -> bool {
    namespaces.iter().map(|ns| "metadata.namespace!=,".len() + ns.len()).sum::<usize>() <= EXCLUDING_AT_MOST
}

/// The scope's pods for `why-stuck --all -A`: in full in `namespaces` (without managedFields,
/// as every full list of the sweep), and `everywhere` (the metadata list of every namespace)
/// narrowed to the other namespaces by `metadata.namespace!=` terms.
pub fn pod_asks(everywhere: Ask, namespaces: &BTreeSet<String>, known: Option<&BTreeSet<String>>) -> Vec<Ask> {
    if namespaces.is_empty() || !fits(namespaces) {
        return vec![everywhere];
    }
    let mut asks = in_full(&everywhere.kind, namespaces, known, PODS_WHY);
    asks.push(everywhere.except(namespaces.clone()));
    asks
}

/// How many lists of several namespaces each [`in_full`] makes at most: the session's default
/// `--concurrency`, the lists it reads at once. A list's pages are read one after another, so
/// one list of many namespaces would take as many round trips in a row as it has pages.
const LISTS_AT_ONCE: usize = 16;

/// The objects of `t` in full in `namespaces`, without managedFields: one list of each; or,
/// where they are more than [`LISTS_AT_ONCE`] and most of the namespaces `known` (the metadata
/// pass's), [`LISTS_AT_ONCE`] lists of every namespace but those of the others and the rest,
/// each in its share of `namespaces`. Both send the same objects (but those of a namespace
/// created since, which every list of the second sends too); the second fills its pages (a
/// list of a namespace is at least one request, however few its objects), and the API server,
/// which filters a list of every namespace from its cache, looks at the others' objects
/// without sending them.
fn in_full(t: &ListType, namespaces: &BTreeSet<String>, known: Option<&BTreeSet<String>>, why: &str) -> Vec<Ask> {
    let most =
        known.filter(|k| namespaces.len() > LISTS_AT_ONCE && k.difference(namespaces).count() < namespaces.len());
    if let Some(known) = most.filter(|k| fits(k)) {
        let wanted: Vec<&String> = namespaces.iter().collect();
        let share = wanted.len().div_ceil(LISTS_AT_ONCE);
        return wanted
            .chunks(share)
            .map(|mine| {
                let others: BTreeSet<String> = known.iter().filter(|ns| !mine.contains(ns)).cloned().collect();
                Ask::list(
                    t,
                    None,
                    format!("{why}: {} of them, by a list of every namespace but the others", mine.len()),
                )
                .full()
                .dropping_managed_fields(true)
                .except(others)
            })
            .collect();
    }
    namespaces.iter().map(|ns| full_list(t, ns, why)).collect()
}

/// The namespaces the metadata pass listed, if it could list them.
pub fn namespaces_in(answers: &[Answered]) -> Option<BTreeSet<String>> {
    let listed = answers.iter().find(|a| {
        a.ask.kind.group.is_empty() && a.ask.kind.kind == "Namespace" && matches!(a.ask.fetch, Fetch::List { .. })
    })?;
    let docs = listed.result.as_ref().ok()?;
    Some(docs.iter().filter_map(|doc| doc.metadata.as_ref()?.name.clone()).collect())
}

/// Why the pods of a namespace are read in full ([`PODS`]).
const PODS_WHY: &str = "a namespace where claims are being deleted";

/// One namespace's objects of `t` in full, without managedFields, as every full list of the
/// sweep (it reads them again for the finalizers its answers attribute).
fn full_list(t: &ListType, ns: &str, why: &str) -> Ask {
    Ask::list(t, Some(ns.to_string()), why).full().dropping_managed_fields(true)
}

/// What the metadata pass found: the namespaces whose pods and claims are read in full, and
/// the objects being deleted whose own bodies are.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Deleting {
    /// Namespaces holding a terminating claim, terminating namespaces, and the namespaces of
    /// the claims of terminating volumes: their pods are read in full (`PODS`).
    pub pod_namespaces: BTreeSet<String>,
    /// Terminating namespaces and the namespaces of the claims of terminating volumes: their
    /// claims are read in full (`CLAIMS`).
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
                    out.pod_namespaces.insert(name.clone());
                    out.claim_namespaces.insert(name);
                    continue;
                }
                // its own body (grace, node) is read by name below, and its workload beside it:
                // no other pod or claim of its namespace is in its answer
                ("", "Pod") => out.namespaces.extend(ns.clone()),
                // its own body is read by name below
                ("", "PersistentVolumeClaim") => out.pod_namespaces.extend(ns.clone()),
                ("", "PersistentVolume") => {
                    let ns = claim_namespace(doc);
                    out.pod_namespaces.extend(ns.clone());
                    out.claim_namespaces.extend(ns);
                }
                _ => {}
            }
            let body_read = a.ask.body == Body::Full || !t.namespaced;
            if !body_read
                && among(t, &OWN_BODIES)
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
    let known = namespaces_in(answers);
    let lists = [
        (&PODS[..], &found.pod_namespaces, PODS_WHY),
        (&CLAIMS[..], &found.claim_namespaces, "a namespace being deleted, or a terminating volume's claim's"),
        (&BESIDE_DELETIONS[..], &found.namespaces, "a namespace where something is being deleted"),
    ];
    for (kinds, namespaces, why) in lists {
        for t in kinds.iter().filter_map(|(g, k)| d.find(g, k)) {
            let unread: BTreeSet<String> = namespaces
                .iter()
                .filter(|ns| !answers.iter().any(|a| a.ask.covers(t, Some(ns), Body::Full)))
                .cloned()
                .collect();
            asks.extend(in_full(t, &unread, known.as_ref(), why));
        }
    }
    for (&i, objects) in &found.own_bodies {
        let t: &ListType = &d.types[i];
        if among(t, EVERYWHERE) {
            continue;
        }
        // those the namespace lists above read already
        let listed = |ns: &Option<String>| {
            let ns = ns.as_deref().unwrap_or_default();
            (among(t, &PODS) && found.pod_namespaces.contains(ns))
                || (among(t, &CLAIMS) && found.claim_namespaces.contains(ns))
                || (among(t, &BESIDE_DELETIONS) && found.namespaces.contains(ns))
        };
        let objects: Named = objects.iter().filter(|(ns, _)| !listed(ns)).cloned().collect();
        asks.extend(own_body_asks(t, &objects, answers).into_iter().map(|a| a.full().dropping_managed_fields(true)));
    }
    asks
}

/// The asks for the own bodies of `objects` of type `t`, namespace by namespace, by what the
/// metadata pass counted there ([`OWN_GETS_PER_NAMESPACE`]).
fn own_body_asks(t: &ListType, objects: &Named, answers: &[Answered]) -> Vec<Ask> {
    const WHY: &str = "an object being deleted whose spec or status its answer reads";
    let mut counted: BTreeMap<Option<&str>, usize> = BTreeMap::new();
    for a in answers.iter().filter(|a| a.ask.kind == *t && a.ask.use_ == crate::source::live::ask::Use::Objects) {
        for m in a.result.iter().flatten().filter_map(|doc| doc.metadata.as_ref()) {
            *counted.entry(m.namespace.as_deref()).or_default() += 1;
        }
    }
    let mut by_namespace: BTreeMap<&Option<String>, Named> = BTreeMap::new();
    for o in objects {
        by_namespace.entry(&o.0).or_default().insert(o.clone());
    }
    let mut asks = Vec::new();
    for (ns, wanted) in by_namespace {
        let there = counted.get(&ns.as_deref()).copied().unwrap_or(0);
        if wanted.len() <= OWN_GETS_PER_NAMESPACE && super::by_name::few_among(wanted.len(), there) {
            asks.extend(wanted.iter().map(|(ns, n)| Ask::get(t, ns.clone(), n, WHY)));
        } else {
            asks.push(Ask::list(t, ns.clone(), WHY).only(wanted));
        }
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
pub fn reads_of_answers(g: &Graph, scope: &Scope) -> Vec<crate::reads::wishes::Read> {
    let mut out: Vec<crate::reads::wishes::Read> = Vec::new();
    for x in answered(g, scope) {
        for r in crate::reads::wishes::wanted(g, x) {
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

/// The Events of `objects`, namespace by namespace: by uid where they are few there
/// ([`EVENTS_BY_UID_PER_NAMESPACE`]), else every Event of the namespace, once (the answers show
/// only those of the objects they name). A cluster-scoped object's Events are in `default`.
/// Where those namespaces are most of many namespaces `known`, a few lists of every namespace
/// but the others ([`in_full`]).
pub fn event_asks(
    d: &Discovery,
    objects: Vec<(Uid, String, Option<String>)>,
    known: Option<&BTreeSet<String>>,
) -> Vec<Ask> {
    let Some(t) = d.find("", "Event").or_else(|| d.find("events.k8s.io", "Event")) else { return Vec::new() };
    let mut by_namespace: BTreeMap<String, Vec<(Uid, String, Option<String>)>> = BTreeMap::new();
    for o in objects {
        by_namespace.entry(o.2.clone().unwrap_or_else(|| "default".into())).or_default().push(o);
    }
    let mut asks = Vec::new();
    let mut whole = BTreeSet::new();
    for (ns, named) in by_namespace {
        if named.len() <= EVENTS_BY_UID_PER_NAMESPACE {
            asks.extend(super::answer::event_asks(d, named));
        } else {
            whole.insert(ns);
        }
    }
    // (an Event's managedFields say nothing an answer shows)
    asks.extend(in_full(t, &whole, known, "the Events of the objects the answers name, in their namespace"));
    asks
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::source::live::ask::Fetch;

    fn pods() -> ListType {
        crate::testing::list_type("", "v1", "pods", "Pod", true)
    }

    /// The metadata pass's list of pods: `n` in each namespace, the first `deleting` of them
    /// being deleted.
    fn listed(namespaces: &[(&str, usize, usize)]) -> Answered {
        let mut docs = Vec::new();
        for &(ns, n, deleting) in namespaces {
            for i in 0..n {
                let mut m = json!({"name": format!("d{i}"), "namespace": ns, "uid": format!("{ns}-{i}")});
                if i < deleting {
                    m["deletionTimestamp"] = json!("2026-11-29T10:00:00Z");
                }
                let d = json!({"apiVersion": "v1", "kind": "Pod", "metadata": m});
                docs.push(serde_json::from_value(d).unwrap());
            }
        }
        Answered { ask: Ask::list(&pods(), None, "scope"), result: Ok(docs), managed_fields_dropped: true }
    }

    /// A few objects being deleted among many of their type in a namespace are read by name:
    /// a list would send them all. Where they are many, or most of the namespace's, a list of
    /// that namespace (kept to them) is fewer requests for about the same bytes; never a list
    /// of every namespace.
    #[test]
    fn own_bodies_are_read_by_name_where_they_are_few_among_their_namespaces() {
        let d = Discovery { types: vec![pods()], ..Discovery::default() };
        let answers = vec![listed(&[("few", 40, 2), ("most", 3, 2), ("many", 60, 6), ("none", 50, 0), ("one", 1, 1)])];
        let asks = body_asks(&d, &deleting_in(&d, &answers), &answers);
        let shown: Vec<String> = asks
            .iter()
            .map(|a| {
                let ns = a.namespace.as_deref().unwrap_or("*");
                match &a.fetch {
                    Fetch::Get(n) => format!("get {ns}/{n}"),
                    Fetch::List { only, .. } => format!("list {ns} only {}", only.as_ref().map_or(0, |o| o.len())),
                }
            })
            .collect();
        assert_eq!(
            shown,
            ["get few/d0", "get few/d1", "list many only 6", "list most only 2", "get one/d0"],
            "{asks:?}"
        );
        assert!(asks.iter().all(|a| a.body == Body::Full), "{asks:?}");
    }

    /// Events by uid where a namespace holds few of the objects the answers name; where it
    /// holds many, one list of its Events instead; a cluster-scoped object's are in `default`.
    #[test]
    fn events_are_read_by_uid_where_few_are_named_in_a_namespace_else_by_namespace() {
        let events = ListType {
            group: String::new(),
            version: "v1".into(),
            plural: "events".into(),
            kind: "Event".into(),
            namespaced: true,
        };
        let d = Discovery { types: vec![events], ..Discovery::default() };
        fn named(ns: Option<&'static str>, n: usize) -> impl Iterator<Item = (Uid, String, Option<String>)> {
            (0..n).map(move |i| (Uid(format!("{}-{i}", ns.unwrap_or("cluster"))), "Widget".into(), ns.map(Into::into)))
        }
        let objects: Vec<_> = named(Some("few"), 2).chain(named(Some("many"), 5)).chain(named(None, 1)).collect();
        let shown: Vec<String> = event_asks(&d, objects, None)
            .iter()
            .map(|a| match &a.fetch {
                Fetch::List { field_selector, .. } => {
                    format!("{} {}", a.namespace.as_deref().unwrap_or("*"), field_selector.as_deref().unwrap_or("all"))
                }
                Fetch::Get(n) => format!("get {n}"),
            })
            .collect();
        assert_eq!(
            shown,
            [
                "default involvedObject.uid=cluster-0",
                "few involvedObject.uid=few-0",
                "few involvedObject.uid=few-1",
                "many all"
            ]
        );
    }

    /// `n` namespaces, `prefix-0` …
    fn many(prefix: &str, n: usize) -> BTreeSet<String> {
        (0..n).map(|i| format!("{prefix}-{i:02}")).collect()
    }

    /// The namespaces each list of every namespace but some reads: the known ones it does not
    /// leave out.
    fn read_by(a: &Ask, known: &BTreeSet<String>) -> BTreeSet<String> {
        match &a.fetch {
            Fetch::List { except: Some(x), .. } => known.difference(x).cloned().collect(),
            _ => a.namespace.iter().cloned().collect(),
        }
    }

    /// Pods in full where most of many namespaces need them: at most `LISTS_AT_ONCE` lists of
    /// every namespace but the others, which between them read each wanted namespace once and
    /// no other (and cover those namespaces for later rounds); where few namespaces want them,
    /// or the namespaces are not known, a list of each. The metadata list leaves them out
    /// either way.
    #[test]
    fn most_namespaces_are_read_in_a_few_lists_of_every_namespace_but_the_rest() {
        let everywhere = Ask::list(&pods(), None, "scope").dropping_managed_fields(true);
        let wanted = many("app", 40);
        let known: BTreeSet<String> = wanted.iter().cloned().chain(many("sys", 10)).collect();
        let asks = pod_asks(everywhere.clone(), &wanted, Some(&known));
        let (meta, full) = asks.split_last().unwrap();
        assert!(full.len() <= LISTS_AT_ONCE && full.len() > 1, "{}", full.len());
        let mut seen = BTreeSet::new();
        for a in full {
            assert!(a.namespace.is_none() && a.body == Body::Full, "{a:?}");
            assert!(a.managed_fields == crate::source::live::ask::ManagedFields::Drop);
            let mine = read_by(a, &known);
            assert!(mine.is_subset(&wanted) && !mine.is_empty(), "{mine:?}");
            assert!(mine.is_disjoint(&seen), "read twice: {mine:?}");
            seen.extend(mine);
        }
        assert_eq!(seen, wanted);
        let t = pods();
        assert!(wanted.iter().all(|ns| full.iter().any(|a| a.covers(&t, Some(ns), Body::Full))));
        assert!(!full.iter().any(|a| a.covers(&t, Some("sys-03"), Body::Full) || a.covers(&t, None, Body::Full)));
        assert_eq!(read_by(meta, &known), many("sys", 10), "the metadata list: {meta:?}");
        assert!(meta.body == Body::Metadata && meta.covers(&t, Some("sys-03"), Body::Metadata));
        assert!(!meta.covers(&t, Some("app-03"), Body::Metadata));
        // the selector sent: one `metadata.namespace!=` term for each namespace left out
        let sent = full[0].fetch.field_selector().unwrap();
        assert_eq!(sent.split(',').count(), known.len() - read_by(&full[0], &known).len(), "{sent}");
        assert!(sent.split(',').all(|t| t.starts_with("metadata.namespace!=")), "{sent}");
        // few namespaces, or most of few, or the namespaces unknown: a list of each
        let more_others: BTreeSet<String> = wanted.iter().cloned().chain(many("sys", 40)).collect();
        for (known, n) in [(Some(&more_others), 40), (None, 40)] {
            let asks = pod_asks(everywhere.clone(), &wanted, known);
            assert_eq!(asks.len(), n + 1, "{asks:?}");
            assert!(asks[..n].iter().all(|a| a.namespace.is_some()), "{asks:?}");
        }
        let few = many("app", 3);
        assert_eq!(pod_asks(everywhere, &few, Some(&known)).len(), 4);
    }

    /// The Events of namespaces where answers name many objects: in most of many namespaces, a
    /// few lists of every namespace but the others; the namespaces with few keep their lists by
    /// uid, and no list of every namespace reads them.
    #[test]
    fn the_events_of_most_namespaces_are_a_few_lists_of_every_namespace_but_the_rest() {
        let events = ListType {
            group: "".into(),
            version: "v1".into(),
            plural: "events".into(),
            kind: "Event".into(),
            namespaced: true,
        };
        let d = Discovery { types: vec![events], ..Discovery::default() };
        let named = |ns: &str, n: usize| -> Vec<(Uid, String, Option<String>)> {
            (0..n).map(|i| (Uid(format!("{ns}-{i}")), "Widget".to_string(), Some(ns.to_string()))).collect()
        };
        let busy = many("app", 20);
        let mut objects: Vec<_> = busy.iter().flat_map(|ns| named(ns, 5)).collect();
        objects.extend(named("quiet", 1));
        let known: BTreeSet<String> = busy.iter().cloned().chain(["quiet".to_string()]).collect();
        let asks = event_asks(&d, objects.clone(), Some(&known));
        let (by_uid, lists): (Vec<&Ask>, Vec<&Ask>) = asks.iter().partition(|a| a.namespace.is_some());
        assert_eq!(by_uid.len(), 1, "{by_uid:?}");
        assert_eq!(by_uid[0].fetch.field_selector().as_deref(), Some("involvedObject.uid=quiet-0"));
        let read: BTreeSet<String> = lists.iter().flat_map(|a| read_by(a, &known)).collect();
        assert_eq!(read, busy);
        assert!(lists.len() <= LISTS_AT_ONCE, "{}", lists.len());
        let elsewhere: BTreeSet<String> = known.iter().cloned().chain(many("other", 30)).collect();
        let asks = event_asks(&d, objects, Some(&elsewhere));
        assert_eq!(asks.len(), 21, "a list of each busy namespace, by uid in the quiet one: {asks:?}");
    }
}

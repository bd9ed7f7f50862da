//! The live cluster: kubeconfig → read-only client → discovery → paged, metadata-only lists,
//! with bounded concurrency, into the same [`Snapshot`] the file source produces (responses
//! are parsed by `snapshot::raw`, so live and offline objects are identical).
//!
//! What cannot be read (a 403 on a type, a failing group, a timed-out list) goes into
//! `Snapshot.incomplete` and the rest goes on; only a failure to reach or discover the server
//! at all is an [`Error`].
//!
//! Scope: [`Scope::Cluster`] reads every type everywhere. [`Scope::Namespace`] reads what an
//! answer about that namespace needs: every cluster-scoped type; every namespaced type in the
//! namespace; the kinds controller liveness is judged by ([`EVERYWHERE`]) in every namespace;
//! then, in every namespace (metadata-only), each namespaced owner kind that the objects read
//! name in owner references whose owner was not among them, so that a cross-namespace or
//! recreated owner is told from an absent one.
//!
//! Answers never list what the garbage collector ignores (Events: `ignored_by_gc`), whose
//! objects never enter its graph; a capture (`bodies_everywhere`) keeps them.
//!
//! Bodies: with [`ReadOptions::bodies_everywhere`] off, the namespaced kinds whose spec or
//! status the analysis reads (pods, workloads, claims, …) are listed metadata-only across
//! namespaces, and in full only where an answer reads them: the namespace in focus and the
//! namespaces controllers live in (those of the ServiceAccounts that RBAC bindings name and of
//! leader-election Leases). Pods and workloads are most of a cluster's bytes.
//!
//! CustomResourceDefinitions, whose schemas are most of the rest (tens to hundreds of KB
//! each), are listed metadata-only too: a CRD's name is `<plural>.<group>`, and discovery
//! knows the kind, scope and versions of every served type. Only the CRDs whose spec or
//! status an answer reads are then fetched in full (one GET each, or one full list when there
//! are more than [`CRD_GETS`]): those being deleted (the CRD finalizer's cleanup of their
//! instances), the object asked about and the CRDs among its dependents (what a plan may
//! delete), and any CRD that discovery does not serve (so that it maps its kind as before).
//!
//! managedFields: an answer's metadata-only lists ask for them to be left out first
//! (`drop=metadata.managedFields`, KEP-5958, alpha in Kubernetes 1.37 behind
//! `ManagedFieldsOptOut`), then as before; a server without the gate ignores the parameter and
//! sends them. The analysis reads them only for who set a finalizer that no built-in
//! controller removes, so where a list came without any, its objects with such finalizers are
//! read again with them (a GET each, or a list
//! per namespace when many: [`MANAGED_FIELDS_GETS`]) and merged by uid, before the workloads
//! named like those managers are looked up. Captures (`bodies_everywhere`) keep them.

pub mod cache;
pub mod discovery;
pub mod error;
pub mod http;
pub mod kubeconfig;
pub mod list;
pub mod protobuf;

use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::Path;

use futures::{StreamExt, stream};
use k8s_openapi::jiff::Timestamp;

use crate::controllers::builtin_owner;
use crate::snapshot::Snapshot;
use crate::snapshot::object::group_of;
use crate::snapshot::raw::{Flattened, RawDoc};

pub use discovery::{Discovery, ListType};
pub use error::Error;
pub use http::{Failure, Reader};
pub use kubeconfig::ConnectOptions;

/// Kinds read in every namespace even when the answer is about one: the evidence for
/// whether a controller is running (leader leases, workloads and their ready replicas).
pub const EVERYWHERE: &[(&str, &str)] =
    &[("coordination.k8s.io", "Lease"), ("rbac.authorization.k8s.io", "RoleBinding")];

/// Kinds read, in full, only in the namespaces where controllers live: those of the
/// ServiceAccounts that RBAC bindings name and of the leader-election Leases. Pods and
/// workloads are most of a cluster's bytes; an operator's are all liveness needs of them.
pub const IN_CONTROLLER_NAMESPACES: &[(&str, &str)] = &[
    ("", "Pod"),
    ("", "ServiceAccount"),
    ("", "Endpoints"),
    ("apps", "Deployment"),
    ("apps", "StatefulSet"),
    ("apps", "DaemonSet"),
    ("apps", "ReplicaSet"),
];

/// Workload kinds looked up by name, wherever they are, when a field manager that set a
/// finalizer is named like one (`managedFields` attribution).
pub const NAMED_LIKE_MANAGERS: &[(&str, &str)] =
    &[("apps", "Deployment"), ("apps", "StatefulSet"), ("apps", "DaemonSet")];

/// Where a list came without managedFields (KEP-5958), the objects of a type with finalizers
/// are read again with a GET each up to this many; more, with lists.
pub const MANAGED_FIELDS_GETS: usize = 16;
/// …with a list in each namespace concerned up to this many namespaces; more, one list of the
/// type everywhere.
pub const MANAGED_FIELDS_NAMESPACES: usize = 8;

/// More CRDs wanted in full than this are read with one full list rather than a GET each.
pub const CRD_GETS: usize = 32;

const CRD: (&str, &str) = ("apiextensions.k8s.io", "CustomResourceDefinition");

fn is_crd(t: &ListType) -> bool {
    t.group == CRD.0 && t.kind == CRD.1
}

/// The object an answer is about.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TargetRef {
    pub group: String,
    pub kind: String,
    pub namespace: Option<String>,
    pub name: String,
}

/// A connection: the read-only client and the context's namespace.
pub struct Session {
    pub reader: Reader,
    pub default_namespace: String,
    /// The kubeconfig context in use, if one was (see `kubeconfig::Loaded::context`).
    pub context: Option<String>,
}

/// Loads the kubeconfig and builds the client (no request is sent yet).
pub async fn connect(o: &ConnectOptions) -> Result<Session, Error> {
    let loaded = kubeconfig::load(o).await?;
    Ok(Session {
        reader: Reader::new(loaded.config, o.request_timeout, loaded.headers)?,
        default_namespace: loaded.default_namespace,
        context: loaded.context,
    })
}

/// What to read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Scope {
    /// Every type in every namespace (`-A`).
    Cluster,
    /// What an answer about one namespace needs (see the module docs).
    Namespace(String),
}

/// Progress of the listing: requests (one per type and namespace) done out of planned.
#[derive(Clone, Copy, Debug)]
pub struct Progress {
    pub done: usize,
    pub total: usize,
}

pub struct ReadOptions<'a> {
    pub scope: Scope,
    /// List the bodies the analysis reads in every namespace (`kubectl gc snapshot`, for a
    /// complete capture), rather than only where an answer reads them.
    pub bodies_everywhere: bool,
    /// The namespace of the object asked about, whose bodies are always read.
    pub focus: Option<String>,
    /// The object asked about: if it is a CRD, or has CRDs among its dependents, those are
    /// read in full.
    pub target: Option<TargetRef>,
    /// Lists in flight at once.
    pub concurrency: usize,
    /// The capture time recorded in the snapshot.
    pub now: Timestamp,
    pub progress: Option<&'a (dyn Fn(Progress) + Sync)>,
}

impl ReadOptions<'_> {
    /// One request more done out of `total`.
    fn tick(&self, done: &mut usize, total: usize) {
        *done += 1;
        if let Some(p) = self.progress {
            p(Progress { done: *done, total });
        }
    }
}

impl Session {
    /// Discovers the served types (see [`discovery::discover`]).
    pub async fn discover(&self, concurrency: usize) -> Result<Discovery, Error> {
        discovery::discover(&self.reader, concurrency).await
    }

    /// Discovery from the cache under `cache_dir` when fresh at `now` (unix seconds), else
    /// from the server (and then cached).
    pub async fn discover_cached(
        &self,
        concurrency: usize,
        cache_dir: Option<&Path>,
        now: i64,
        fresh: bool,
    ) -> Result<Discovery, Error> {
        let dir = cache_dir.map(|c| cache::dir_for(c, self.reader.server()));
        if !fresh && let Some(d) = dir.as_deref().and_then(|d| cache::read(d, now)) {
            return Ok(d);
        }
        let d = self.discover(concurrency).await?;
        if let Some(dir) = &dir {
            cache::write(dir, &d, now);
        }
        Ok(d)
    }

    /// Records the CRDs a read saw with the discovery fetched (and cached) at `now`; see
    /// [`cache::record_crds`].
    pub fn record_crds(&self, cache_dir: Option<&Path>, now: i64, s: &Snapshot) {
        if let Some(c) = cache_dir {
            cache::record_crds(&cache::dir_for(c, self.reader.server()), now, s);
        }
    }

    /// Whether one object exists: `Some(false)` on 404, `None` when the server would not say
    /// (forbidden, failing): the caller goes on and lets the lists decide.
    pub async fn exists(&self, t: &ListType, namespace: Option<&str>, name: &str) -> Result<Option<bool>, Error> {
        // a CRD's schema is not needed to know it exists (it is read in full later if wanted)
        let got = if is_crd(t) {
            list::get_metadata(&self.reader, t, namespace, name).await
        } else {
            list::get(&self.reader, t, namespace, name).await
        };
        match got {
            Ok(_) => Ok(Some(true)),
            Err(Failure::Status { code: 404, .. }) => Ok(Some(false)),
            Err(Failure::Transport(m)) => {
                Err(Failure::Transport(m).into_error(self.reader.server(), &t.path(namespace)))
            }
            Err(_) => Ok(None),
        }
    }

    /// Reads the scope into a snapshot; what could not be read is named in `incomplete`.
    pub async fn read(&self, d: &Discovery, o: &ReadOptions<'_>) -> Snapshot {
        let everywhere = |t: &ListType| EVERYWHERE.iter().any(|(g, k)| t.group == *g && t.kind == *k);
        // small kinds whose bodies every answer may read, wherever they are
        let small = |t: &ListType| {
            matches!(
                (t.group.as_str(), t.kind.as_str()),
                ("coordination.k8s.io", "Lease") | ("rbac.authorization.k8s.io", "RoleBinding")
            )
        };
        let focus = match &o.scope {
            Scope::Namespace(ns) => Some(ns.clone()),
            Scope::Cluster => o.focus.clone(),
        };
        // (type, namespace, full): a type listed metadata-only across namespaces is listed again
        // in full where its bodies are read
        let mut tasks: Vec<Task> = Vec::new();
        for t in &d.types {
            // what the garbage collector ignores never enters an answer (a capture keeps it)
            if !o.bodies_everywhere && crate::graph::ignored_by_gc(&t.group, &t.kind) {
                continue;
            }
            // CRDs: metadata-only here; the few whose bodies an answer reads are fetched below
            if is_crd(t) && !o.bodies_everywhere {
                tasks.push((t.clone(), None, false));
                continue;
            }
            let body = list::wants_body(t);
            match &o.scope {
                Scope::Namespace(ns) if t.namespaced && !everywhere(t) => {
                    tasks.push((t.clone(), Some(ns.clone()), true))
                }
                _ if !t.namespaced || !body || o.bodies_everywhere || small(t) => tasks.push((t.clone(), None, true)),
                _ => {
                    tasks.push((t.clone(), None, false));
                    if let Some(ns) = &focus {
                        tasks.push((t.clone(), Some(ns.clone()), true));
                    }
                }
            }
        }
        let mut done = 0;
        let mut total = tasks.len();
        let (mut first, first_dropped) = self.run(&tasks, o, &mut done, &mut total).await;

        let mut second_tasks: Vec<Task> = Vec::new();
        // owner kinds named by what was read, in every namespace
        if let Scope::Namespace(_) = o.scope {
            // only the kinds of owners not found among what was read: an owner in the same
            // namespace needs no cluster-wide list to be told from an absent one
            let read_uids: HashSet<&str> = first
                .iter()
                .flat_map(|(_, res)| res.iter().flatten())
                .filter_map(|doc| doc.metadata.as_ref()?.uid.as_deref())
                .collect();
            let mut wanted = BTreeSet::new();
            for (_, res) in &first {
                for doc in res.iter().flatten() {
                    for r in doc.metadata.iter().flat_map(|m| m.owner_references.iter().flatten()) {
                        if r.uid.as_deref().is_some_and(|u| read_uids.contains(u)) {
                            continue;
                        }
                        if let (Some(av), Some(kind)) = (&r.api_version, &r.kind) {
                            wanted.insert((group_of(av).to_string(), kind.clone()));
                        }
                    }
                }
            }
            for (g, k) in wanted {
                if let Some(t) = d.find(&g, &k)
                    && !tasks.iter().any(|(tt, ns, _)| tt == t && ns.is_none())
                {
                    second_tasks.push((t.clone(), None, false));
                }
            }
        }
        // the bodies controller liveness reads, where controllers live
        if !o.bodies_everywhere {
            for ns in controller_namespaces(&first) {
                if focus.as_deref() == Some(ns.as_str()) {
                    continue;
                }
                for t in d.types.iter().filter(|t| t.namespaced && list::wants_body(t) && !small(t)) {
                    let listed_in_full =
                        |(tt, n, full): &Task| tt == t && *full && (n.is_none() || n.as_deref() == Some(ns.as_str()));
                    let wanted = IN_CONTROLLER_NAMESPACES.iter().any(|(g, k)| t.group == *g && t.kind == *k);
                    if wanted && !tasks.iter().any(listed_in_full) {
                        second_tasks.push((t.clone(), Some(ns.clone()), true));
                    }
                }
            }
        }
        total += second_tasks.len();
        let (mut second, second_dropped) = self.run(&second_tasks, o, &mut done, &mut total).await;

        // the managers of finalizers, where lists came without managedFields (before the
        // workloads named like them are looked up)
        let mut managed_fields_failures = Vec::new();
        if first_dropped.iter().chain(&second_dropped).any(|d| *d) {
            let n = first.len();
            let mut both: Vec<_> = first.into_iter().chain(second).collect();
            let dropped: Vec<bool> = first_dropped.into_iter().chain(second_dropped).collect();
            managed_fields_failures = self.restore_managed_fields(&mut both, &dropped, o, &mut done, &mut total).await;
            second = both.split_off(n);
            first = both;
        }

        // workloads named like the field managers that set finalizers, wherever they run
        if !o.bodies_everywhere {
            let mut managers = BTreeSet::new();
            for (_, res) in &first {
                for doc in res.iter().flatten() {
                    for m in doc.metadata.iter().flat_map(|m| m.managed_fields.iter()).flat_map(|m| m.0.iter()) {
                        // managers are asked about only for finalizers no built-in controller removes
                        let attributed = m.finalizers.iter().any(|f| builtin_owner(f).is_none());
                        if attributed && !m.manager.is_empty() && !m.manager.starts_with("kubectl") {
                            managers.insert(m.manager.clone());
                        }
                    }
                }
            }
            let named: Vec<(ListType, String)> = managers
                .into_iter()
                .take(32)
                .flat_map(|m| {
                    NAMED_LIKE_MANAGERS
                        .iter()
                        .filter_map(|(g, k)| d.find(g, k))
                        .map(move |t| (t.clone(), m.clone()))
                        .collect::<Vec<_>>()
                })
                .collect();
            total += named.len();
            let mut s = stream::iter(named)
                .map(|(t, m)| async move {
                    let selector = format!("metadata.name={m}");
                    let res = list::list_selected(&self.reader, &t, None, true, Some(&selector)).await;
                    ((t, None, true), res)
                })
                .buffered(o.concurrency.max(1));
            while let Some(r) = s.next().await {
                o.tick(&mut done, total);
                second.push(r);
            }
        }

        // the CRDs whose spec or status the answer reads, in full
        let mut crd_failures = Vec::new();
        if !o.bodies_everywhere
            && let Some(t) = d.types.iter().find(|t| is_crd(t))
        {
            let names = crd_bodies_wanted(
                d,
                o.target.as_ref(),
                first.iter().chain(&second).flat_map(|(_, r)| r.iter().flatten()),
            );
            if !names.is_empty() {
                let (docs, failed) = self.crd_bodies(t, names, o, &mut done, &mut total).await;
                second.push(((t.clone(), None, true), Ok(docs)));
                crd_failures = failed;
            }
        }

        let mut flat = Flattened::default();
        let mut incomplete = d.incomplete.clone();
        incomplete.extend(crd_failures);
        incomplete.extend(managed_fields_failures);
        let mut seen = HashSet::new();
        let (full, meta): (Vec<_>, Vec<_>) = first.into_iter().chain(second).partition(|((_, _, full), _)| *full);
        for ((t, ns, _), res) in full.into_iter().chain(meta) {
            match res {
                Ok(docs) => {
                    for doc in docs {
                        let uid = doc.metadata.as_ref().and_then(|m| m.uid.clone());
                        if uid.is_none_or(|u| seen.insert(u)) {
                            flat.push(doc);
                        }
                    }
                }
                Err(f) => incomplete.push(match ns {
                    Some(ns) => {
                        format!("{} in namespace \"{ns}\" could not be listed: {}", t.qualified(), f.describe())
                    }
                    None => format!("{} could not be listed: {}", t.qualified(), f.describe()),
                }),
            }
        }
        flat.captured_at = Some(o.now);
        flat.resource_lists = d.lists.clone();
        flat.incomplete = incomplete;
        Snapshot::from_flattened(flat)
    }

    /// CRDs by name, in full: a GET each, or one full list filtered to them when there are
    /// many. A CRD gone since it was listed is left as listed; a failure is named.
    async fn crd_bodies(
        &self,
        t: &ListType,
        names: BTreeSet<String>,
        o: &ReadOptions<'_>,
        done: &mut usize,
        total: &mut usize,
    ) -> (Vec<RawDoc>, Vec<String>) {
        if names.len() > CRD_GETS {
            *total += 1;
            let res = list::list(&self.reader, t, None, true).await;
            o.tick(done, *total);
            return match res {
                Ok(docs) => (
                    docs.into_iter()
                        .filter(|d| {
                            d.metadata.as_ref().and_then(|m| m.name.as_ref()).is_some_and(|n| names.contains(n))
                        })
                        .collect(),
                    Vec::new(),
                ),
                Err(f) => (Vec::new(), vec![format!("{} could not be read in full: {}", t.qualified(), f.describe())]),
            };
        }
        *total += names.len();
        let mut s = stream::iter(names)
            .map(|n| async move {
                let res = list::get(&self.reader, t, None, &n).await;
                (n, res)
            })
            .buffered(o.concurrency.max(1));
        let (mut docs, mut failed) = (Vec::new(), Vec::new());
        while let Some((n, res)) = s.next().await {
            o.tick(done, *total);
            match res {
                Ok(doc) => docs.push(doc),
                Err(Failure::Status { code: 404, .. }) => {}
                Err(f) => failed.push(format!("{} \"{n}\" could not be read in full: {}", t.qualified(), f.describe())),
            }
        }
        (docs, failed)
    }

    #[allow(clippy::type_complexity)]
    async fn run(
        &self,
        tasks: &[Task],
        o: &ReadOptions<'_>,
        done: &mut usize,
        total: &mut usize,
    ) -> (Vec<(Task, Result<Vec<RawDoc>, Failure>)>, Vec<bool>) {
        let drop = !o.bodies_everywhere;
        let mut s = stream::iter(tasks.iter().cloned())
            .map(|(t, ns, full)| async move {
                let res = list::list_dropping(&self.reader, &t, ns.as_deref(), full, drop).await;
                ((t, ns, full), res)
            })
            .buffered(o.concurrency.max(1));
        let mut out = Vec::with_capacity(tasks.len());
        let mut dropped = Vec::with_capacity(tasks.len());
        while let Some((task, res)) = s.next().await {
            o.tick(done, *total);
            dropped.push(res.as_ref().is_ok_and(|l| l.managed_fields_dropped));
            out.push((task, res.map(|l| l.docs)));
        }
        (out, dropped)
    }

    /// The managers of finalizers, where a list came without managedFields: the objects with
    /// a finalizer that no built-in controller removes (only those are attributed by
    /// managedFields) whose managedFields no other answer carried are read again, metadata-only
    /// and with managedFields, and their entries put back by uid. Bounded per type: up to
    /// [`MANAGED_FIELDS_GETS`] objects are read with a GET each; more are read with a list
    /// of the type in each namespace concerned (up to [`MANAGED_FIELDS_NAMESPACES`]), or one
    /// list of the type everywhere. Returns what could not be read.
    #[allow(clippy::type_complexity)]
    async fn restore_managed_fields(
        &self,
        read: &mut [(Task, Result<Vec<RawDoc>, Failure>)],
        dropped: &[bool],
        o: &ReadOptions<'_>,
        done: &mut usize,
        total: &mut usize,
    ) -> Vec<String> {
        let carried: HashSet<String> = read
            .iter()
            .flat_map(|(_, res)| res.iter().flatten())
            .filter_map(|d| d.metadata.as_ref().filter(|m| m.managed_fields.is_some())?.uid.clone())
            .collect();
        // type → (uid → (namespace, name))
        let mut wanted: Vec<(ListType, HashMap<String, (Option<String>, String)>)> = Vec::new();
        for (((t, _, _), res), _) in read.iter().zip(dropped).filter(|(_, d)| **d) {
            for m in res.iter().flatten().filter_map(|d| d.metadata.as_ref()) {
                let (Some(uid), Some(name)) = (&m.uid, &m.name) else { continue };
                // a built-in finalizer's remover is known without them
                if !m.finalizers.iter().flatten().any(|f| builtin_owner(f).is_none()) || carried.contains(uid) {
                    continue;
                }
                let i = match wanted.iter().position(|(w, _)| w == t) {
                    Some(i) => i,
                    None => {
                        wanted.push((t.clone(), HashMap::new()));
                        wanted.len() - 1
                    }
                };
                wanted[i].1.insert(uid.clone(), (m.namespace.clone(), name.clone()));
            }
        }
        if wanted.is_empty() {
            return Vec::new();
        }
        // one request: a GET of an object, or a list of a type in a namespace (None: everywhere)
        enum Ask {
            Get(ListType, Option<String>, String),
            List(ListType, Option<String>),
        }
        let mut asks = Vec::new();
        for (t, objects) in &wanted {
            if objects.len() <= MANAGED_FIELDS_GETS {
                asks.extend(objects.values().map(|(ns, n)| Ask::Get(t.clone(), ns.clone(), n.clone())));
                continue;
            }
            let namespaces: BTreeSet<Option<String>> = objects.values().map(|(ns, _)| ns.clone()).collect();
            if t.namespaced && namespaces.len() <= MANAGED_FIELDS_NAMESPACES {
                asks.extend(namespaces.into_iter().map(|ns| Ask::List(t.clone(), ns)));
            } else {
                asks.push(Ask::List(t.clone(), None));
            }
        }
        *total += asks.len();
        let mut s = stream::iter(asks)
            .map(|a| async move {
                match a {
                    Ask::Get(t, ns, n) => {
                        let res = list::get_metadata(&self.reader, &t, ns.as_deref(), &n).await.map(|d| vec![d]);
                        let what = match &ns {
                            Some(ns) => format!("{} \"{n}\" in namespace \"{ns}\"", t.qualified()),
                            None => format!("{} \"{n}\"", t.qualified()),
                        };
                        (what, res)
                    }
                    Ask::List(t, ns) => {
                        let res = list::list(&self.reader, &t, ns.as_deref(), false).await;
                        let what = match &ns {
                            Some(ns) => format!("{} in namespace \"{ns}\"", t.qualified()),
                            None => t.qualified(),
                        };
                        (what, res)
                    }
                }
            })
            .buffered(o.concurrency.max(1));
        let wanted_uids: HashSet<&String> = wanted.iter().flat_map(|(_, objects)| objects.keys()).collect();
        let mut found: HashMap<String, Vec<crate::snapshot::object::FinalizerManager>> = HashMap::new();
        let mut failed = Vec::new();
        while let Some((what, res)) = s.next().await {
            o.tick(done, *total);
            match res {
                Ok(docs) => {
                    for m in docs.into_iter().filter_map(|d| d.metadata) {
                        if let (Some(uid), Some(mf)) = (m.uid, m.managed_fields)
                            && wanted_uids.contains(&uid)
                        {
                            found.insert(uid, mf.0);
                        }
                    }
                }
                // gone since it was listed: it is answered as listed
                Err(Failure::Status { code: 404, .. }) => {}
                Err(f) => failed.push(format!("the managedFields of {what} could not be read: {}", f.describe())),
            }
        }
        drop(s);
        for (_, res) in read.iter_mut() {
            for m in res.iter_mut().flatten().filter_map(|d| d.metadata.as_mut()) {
                if m.managed_fields.is_none()
                    && let Some(entries) = m.uid.as_ref().and_then(|u| found.get(u))
                {
                    m.managed_fields = Some(crate::snapshot::raw::RawManagedFields(entries.clone()));
                }
            }
        }
        failed
    }
}

/// The CRDs, among those read (metadata-only), whose spec or status an answer reads: those
/// being deleted, those discovery does not serve (their name is `<plural>.<group>`), and the
/// target and the CRDs among its dependents (following owner references by uid, as the
/// garbage collector links them).
fn crd_bodies_wanted<'a>(
    d: &Discovery,
    target: Option<&TargetRef>,
    read: impl Iterator<Item = &'a RawDoc>,
) -> BTreeSet<String> {
    let docs: Vec<&RawDoc> = read.collect();
    let is_crd_doc = |doc: &RawDoc| {
        doc.kind.as_deref() == Some(CRD.1) && doc.api_version.as_deref().is_some_and(|av| group_of(av) == CRD.0)
    };
    let served: HashSet<(&str, &str)> = d
        .lists
        .iter()
        .flat_map(|l| {
            let g = group_of(&l.group_version);
            l.resources.iter().map(move |r| (r.group.as_deref().unwrap_or(g), r.plural.as_str()))
        })
        .collect();
    let mut out = BTreeSet::new();
    for doc in docs.iter().filter(|doc| is_crd_doc(doc)) {
        let Some(m) = &doc.metadata else { continue };
        let Some(name) = &m.name else { continue };
        let covered = name.split_once('.').is_some_and(|(plural, group)| served.contains(&(group, plural)));
        if m.deletion_timestamp.is_some() || !covered {
            out.insert(name.clone());
        }
    }
    let Some(tr) = target else { return out };
    if tr.group == CRD.0 && tr.kind == CRD.1 {
        out.insert(tr.name.clone());
    }
    let is_target = |doc: &RawDoc| {
        doc.kind.as_deref() == Some(tr.kind.as_str())
            && doc.api_version.as_deref().is_some_and(|av| group_of(av) == tr.group)
            && doc
                .metadata
                .as_ref()
                .is_some_and(|m| m.name.as_deref() == Some(tr.name.as_str()) && m.namespace == tr.namespace)
    };
    // only a CRD with owner references can be a dependent
    if !docs.iter().any(|doc| {
        is_crd_doc(doc)
            && doc.metadata.as_ref().is_some_and(|m| m.owner_references.as_ref().is_some_and(|r| !r.is_empty()))
    }) {
        return out;
    }
    let Some(start) = docs.iter().find(|doc| is_target(doc)).and_then(|doc| doc.metadata.as_ref()?.uid.as_deref())
    else {
        return out;
    };
    // dependents by owner uid; only what reaches a CRD matters, but any object may be between
    let mut children: HashMap<&str, Vec<&RawDoc>> = HashMap::new();
    for doc in &docs {
        for r in doc.metadata.iter().flat_map(|m| m.owner_references.iter().flatten()) {
            if let Some(u) = r.uid.as_deref() {
                children.entry(u).or_default().push(doc);
            }
        }
    }
    let mut seen: HashSet<&str> = HashSet::from([start]);
    let mut queue = vec![start];
    while let Some(u) = queue.pop() {
        for child in children.get(u).into_iter().flatten() {
            let Some(m) = &child.metadata else { continue };
            let Some(cu) = m.uid.as_deref() else { continue };
            if !seen.insert(cu) {
                continue;
            }
            if is_crd_doc(child)
                && let Some(n) = &m.name
            {
                out.insert(n.clone());
            }
            queue.push(cu);
        }
    }
    out
}

/// One list: a type, a namespace (`None`: every namespace), and whether bodies are read.
type Task = (ListType, Option<String>, bool);

/// Namespaces that hold controllers: those of the ServiceAccounts that (Cluster)RoleBindings
/// name, and of leader-election Leases (node heartbeats aside).
#[allow(clippy::type_complexity)]
fn controller_namespaces(read: &[(Task, Result<Vec<RawDoc>, Failure>)]) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for ((t, _, _), res) in read {
        let Ok(docs) = res else { continue };
        match (t.group.as_str(), t.kind.as_str()) {
            ("rbac.authorization.k8s.io", "RoleBinding" | "ClusterRoleBinding") => {
                for doc in docs {
                    for s in doc.subjects.as_ref().and_then(|v| v.as_array()).into_iter().flatten() {
                        if s.get("kind").and_then(|k| k.as_str()) == Some("ServiceAccount")
                            && let Some(ns) = s.get("namespace").and_then(|n| n.as_str())
                        {
                            out.insert(ns.to_string());
                        }
                    }
                }
            }
            ("coordination.k8s.io", "Lease") => {
                for doc in docs {
                    if let Some(ns) = doc.metadata.as_ref().and_then(|m| m.namespace.as_deref())
                        && ns != "kube-node-lease"
                    {
                        out.insert(ns.to_string());
                    }
                }
            }
            _ => {}
        }
    }
    out
}

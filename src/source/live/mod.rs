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
//! name in their owner references, so that a cross-namespace or recreated owner is told from
//! an absent one.

pub mod cache;
pub mod discovery;
pub mod error;
pub mod http;
pub mod kubeconfig;
pub mod list;

use std::collections::{BTreeSet, HashSet};
use std::path::Path;

use futures::{stream, StreamExt};
use k8s_openapi::jiff::Timestamp;

use crate::snapshot::object::group_of;
use crate::snapshot::raw::{Flattened, RawDoc};
use crate::snapshot::Snapshot;

pub use discovery::{Discovery, ListType};
pub use error::Error;
pub use http::{Failure, Reader};
pub use kubeconfig::ConnectOptions;

/// Kinds read in every namespace even when the answer is about one: the evidence for
/// whether a controller is running (leader leases, workloads and their ready replicas).
pub const EVERYWHERE: &[(&str, &str)] = &[
    ("coordination.k8s.io", "Lease"),
    ("apps", "Deployment"),
    ("apps", "StatefulSet"),
    ("apps", "DaemonSet"),
    ("apps", "ReplicaSet"),
    ("rbac.authorization.k8s.io", "RoleBinding"),
];

/// Kinds read, in a second pass, only in the namespaces where controllers live: those of the
/// ServiceAccounts that RBAC bindings name and of the leader-election Leases. Pods are the
/// biggest type of a cluster; an operator's pods are all liveness needs of them.
pub const IN_CONTROLLER_NAMESPACES: &[(&str, &str)] = &[("", "Pod"), ("", "ServiceAccount")];

/// A connection: the read-only client and the context's namespace.
pub struct Session {
    pub reader: Reader,
    pub default_namespace: String,
}

/// Loads the kubeconfig and builds the client (no request is sent yet).
pub async fn connect(o: &ConnectOptions) -> Result<Session, Error> {
    let loaded = kubeconfig::load(o).await?;
    Ok(Session { reader: Reader::new(loaded.config, o.request_timeout)?, default_namespace: loaded.default_namespace })
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
    /// Lists in flight at once.
    pub concurrency: usize,
    /// The capture time recorded in the snapshot.
    pub now: Timestamp,
    pub progress: Option<&'a (dyn Fn(Progress) + Sync)>,
}

impl Session {
    /// Discovers the served types (see [`discovery::discover`]).
    pub async fn discover(&self, concurrency: usize) -> Result<Discovery, Error> {
        discovery::discover(&self.reader, concurrency).await
    }

    /// Discovery from the cache under `cache_dir` when fresh at `now` (unix seconds), else
    /// from the server (and then cached).
    pub async fn discover_cached(&self, concurrency: usize, cache_dir: Option<&Path>, now: i64, fresh: bool) -> Result<Discovery, Error> {
        let dir = cache_dir.map(|c| cache::dir_for(c, self.reader.server()));
        if !fresh
            && let Some(d) = dir.as_deref().and_then(|d| cache::read(d, now))
        {
            return Ok(d);
        }
        let d = self.discover(concurrency).await?;
        if let Some(dir) = &dir {
            cache::write(dir, &d, now);
        }
        Ok(d)
    }

    /// Whether one object exists: `Some(false)` on 404, `None` when the server would not say
    /// (forbidden, failing): the caller goes on and lets the lists decide.
    pub async fn exists(&self, t: &ListType, namespace: Option<&str>, name: &str) -> Result<Option<bool>, Error> {
        match list::get(&self.reader, t, namespace, name).await {
            Ok(_) => Ok(Some(true)),
            Err(Failure::Status { code: 404, .. }) => Ok(Some(false)),
            Err(Failure::Transport(m)) => Err(Failure::Transport(m).into_error(self.reader.server(), &t.path(namespace))),
            Err(_) => Ok(None),
        }
    }

    /// Reads the scope into a snapshot; what could not be read is named in `incomplete`.
    pub async fn read(&self, d: &Discovery, o: &ReadOptions<'_>) -> Snapshot {
        let everywhere = |t: &ListType| EVERYWHERE.iter().any(|(g, k)| t.group == *g && t.kind == *k);
        let tasks: Vec<(ListType, Option<String>)> = d
            .types
            .iter()
            .map(|t| match &o.scope {
                Scope::Namespace(ns) if t.namespaced && !everywhere(t) => (t.clone(), Some(ns.clone())),
                _ => (t.clone(), None),
            })
            .collect();
        let mut done = 0;
        let mut total = tasks.len();
        let first = self.run(&tasks, o, &mut done, &mut total).await;

        // owner kinds named by what was read, in every namespace
        let mut second_tasks = Vec::new();
        if let Scope::Namespace(_) = o.scope {
            let mut wanted = BTreeSet::new();
            for (_, res) in &first {
                for doc in res.iter().flatten() {
                    for r in doc.metadata.iter().flat_map(|m| m.owner_references.iter().flatten()) {
                        if let (Some(av), Some(kind)) = (&r.api_version, &r.kind) {
                            wanted.insert((group_of(av).to_string(), kind.clone()));
                        }
                    }
                }
            }
            for (g, k) in wanted {
                if let Some(t) = d.find(&g, &k)
                    && tasks.iter().any(|(tt, ns)| tt == t && ns.is_some())
                {
                    second_tasks.push((t.clone(), None));
                }
            }
            // the pods and service accounts of controllers, where controllers live
            let listed_ns = match &o.scope {
                Scope::Namespace(ns) => ns.clone(),
                Scope::Cluster => unreachable!(),
            };
            for ns in controller_namespaces(&first) {
                if ns == listed_ns {
                    continue;
                }
                for (g, k) in IN_CONTROLLER_NAMESPACES {
                    if let Some(t) = d.find(g, k)
                        && !second_tasks.iter().any(|(tt, n): &(ListType, Option<String>)| tt == t && n.is_none())
                    {
                        second_tasks.push((t.clone(), Some(ns.clone())));
                    }
                }
            }
        }
        total += second_tasks.len();
        let second = self.run(&second_tasks, o, &mut done, &mut total).await;

        let mut flat = Flattened::default();
        let mut incomplete = d.incomplete.clone();
        let mut seen = HashSet::new();
        for ((t, ns), res) in first.into_iter().chain(second) {
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
                    Some(ns) => format!("{} in namespace \"{ns}\" could not be listed: {}", t.qualified(), f.describe()),
                    None => format!("{} could not be listed: {}", t.qualified(), f.describe()),
                }),
            }
        }
        flat.captured_at = Some(o.now);
        flat.resource_lists = d.lists.clone();
        flat.incomplete = incomplete;
        Snapshot::from_flattened(flat)
    }

    #[allow(clippy::type_complexity)]
    async fn run(
        &self,
        tasks: &[(ListType, Option<String>)],
        o: &ReadOptions<'_>,
        done: &mut usize,
        total: &mut usize,
    ) -> Vec<((ListType, Option<String>), Result<Vec<RawDoc>, Failure>)> {
        let mut s = stream::iter(tasks.iter().cloned())
            .map(|(t, ns)| async move {
                let res = list::list(&self.reader, &t, ns.as_deref()).await;
                ((t, ns), res)
            })
            .buffered(o.concurrency.max(1));
        let mut out = Vec::with_capacity(tasks.len());
        while let Some(r) = s.next().await {
            *done += 1;
            if let Some(p) = o.progress {
                p(Progress { done: *done, total: *total });
            }
            out.push(r);
        }
        out
    }
}

/// Namespaces that hold controllers: those of the ServiceAccounts that (Cluster)RoleBindings
/// name, and of leader-election Leases (node heartbeats aside).
#[allow(clippy::type_complexity)]
fn controller_namespaces(read: &[((ListType, Option<String>), Result<Vec<RawDoc>, Failure>)]) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for ((t, _), res) in read {
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

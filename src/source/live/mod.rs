//! The live cluster: kubeconfig → read-only client → discovery → paged, metadata-only lists,
//! with bounded concurrency, into the same [`Snapshot`] the file source produces (responses
//! are parsed by `snapshot::raw`, so live and offline objects are identical).
//!
//! What to read is not decided here: a [`ReadPlan`] (the analysis's policy, `crate::reads`)
//! returns [`Ask`]s round by round from what has been read, and [`Session::read`] executes
//! them (see [`ask`]) and assembles the answers into a snapshot.
//!
//! What cannot be read (a 403 on a type, a failing group, a timed-out list) goes into
//! `Snapshot.incomplete` and the rest goes on; only a failure to reach or discover the server
//! at all is an [`Error`].
//!
//! managedFields: a plan may ask for a metadata-only list without them
//! (`drop=metadata.managedFields`, KEP-5958, alpha in Kubernetes 1.37 behind
//! `ManagedFieldsOptOut`); a server without the gate ignores the parameter and sends them. The
//! answer says whether they were left out ([`Answered::managed_fields_dropped`]), and a plan
//! may then read some objects again for their managedFields alone ([`ask::Use`]), which are
//! put back on the objects by uid.

pub mod ask;
pub mod cache;
pub mod discovery;
pub mod error;
pub mod fits;
pub mod http;
pub mod kubeconfig;
pub mod list;
pub mod pace;
pub mod pb;
pub mod protobuf;
pub mod so_far;
pub mod watch;

use std::collections::{HashMap, HashSet};
use std::path::Path;

use futures::{StreamExt, stream};
use k8s_openapi::jiff::Timestamp;

use crate::snapshot::raw::{Flattened, RawManagedFields};
use crate::snapshot::{Gap, Missing, Resource, Snapshot};

pub use ask::{Answered, Ask, ReadPlan};
pub use discovery::{Discovery, ListType};
pub use error::Error;
pub use http::{Failure, Reader};
pub use kubeconfig::ConnectOptions;

/// A connection: the read-only client and the context's namespace.
pub struct Session {
    /// The read-only HTTP client, bound to the context's cluster and credentials.
    pub reader: Reader,
    /// The context's namespace, else `default`: what `-n` defaults to, as in kubectl.
    pub default_namespace: String,
    /// The kubeconfig context in use, if one was (see `kubeconfig::Loaded::context`).
    pub context: Option<String>,
    /// The kubeconfig file that context was read through, when not the default path (see
    /// `kubeconfig::Loaded::kubeconfig`).
    pub kubeconfig: Option<std::path::PathBuf>,
    /// The API server URL (see `kubeconfig::Loaded::server`).
    pub server: String,
}

/// Loads the kubeconfig and builds the client (no request is sent yet).
pub async fn connect(o: &ConnectOptions) -> Result<Session, Error> {
    let loaded = kubeconfig::load(o).await?;
    let mut reader = Reader::new(loaded.config, o.request_timeout, loaded.headers)?;
    if let Some(bytes) = o.memory_budget {
        reader = reader.memory_budget(bytes);
    }
    Ok(Session {
        reader,
        default_namespace: loaded.default_namespace,
        context: loaded.context,
        kubeconfig: loaded.kubeconfig,
        server: loaded.server,
    })
}

/// Progress of the listing: requests (one per type and namespace) done out of planned.
#[derive(Clone, Copy, Debug)]
pub struct Progress {
    /// Requests answered so far.
    pub done: usize,
    /// Requests asked so far; it grows as each round of the plan asks for more.
    pub total: usize,
}

/// How to read (what to read is the plan's).
pub struct ReadOptions<'a> {
    /// Lists in flight at once.
    pub concurrency: usize,
    /// The capture time recorded in the snapshot.
    pub now: Timestamp,
    /// Called after each request, for a progress line; `None` reports nothing.
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
        // no body is needed to know it exists (a plan reads it in full later if wanted)
        match list::get_metadata(&self.reader, t, namespace, name).await {
            Ok(_) => Ok(Some(true)),
            Err(Failure::Status { code: 404, .. }) => Ok(Some(false)),
            Err(f @ Failure::Transport { .. }) => Err(f.into_error(self.reader.server(), &t.path(namespace))),
            Err(_) => Ok(None),
        }
    }

    /// The server's `gitVersion` from `/version`; `Err` says why it could not be read (the
    /// answer then judges by the nodes' kubelet versions, and says so).
    pub async fn server_version(&self) -> Result<String, String> {
        let answer = self.reader.get("/version", "application/json").await.map_err(|f| f.describe())?;
        let v: crate::snapshot::raw::RawServerVersion =
            serde_json::from_slice(&answer.body).map_err(|e| format!("not a version document: {e}"))?;
        v.git_version().ok_or_else(|| "the version document names no version".to_string())
    }

    /// Reads what `plan` asks for, round by round, into a snapshot; what could not be read is
    /// named in `incomplete`.
    pub async fn read<P: ReadPlan>(&self, d: &Discovery, o: &ReadOptions<'_>, plan: &mut P) -> Snapshot {
        let mut answers: Vec<Answered> = Vec::new();
        let (mut done, mut total) = (0, 0);
        loop {
            let asks = plan.next(d, &answers);
            if asks.is_empty() {
                break;
            }
            total += asks.len();
            let mut s = stream::iter(asks).map(|a| self.execute(d, a)).buffered(o.concurrency.max(1));
            while let Some(answered) = s.next().await {
                o.tick(&mut done, total);
                answers.push(answered);
            }
        }
        assemble(d, answers, o.now)
    }

    /// One ask: one request (a list is paged).
    async fn execute(&self, d: &Discovery, ask: Ask) -> Answered {
        self.execute_versioned(d, ask).await.0
    }

    /// One ask, and where a watch of the same objects resumes: the resourceVersion its answer
    /// is current at (a list's; a GET's object's) and the version that answered.
    pub async fn execute_versioned(&self, d: &Discovery, ask: Ask) -> (Answered, Resume) {
        let mut version = None;
        let mut served = ask.kind.clone();
        let full = ask.body == ask::Body::Full;
        let (result, managed_fields_dropped) = match &ask.fetch {
            ask::Fetch::Get(name) => {
                let ns = ask.namespace.as_deref();
                let drop = ask.managed_fields == ask::ManagedFields::Drop;
                let res = if full {
                    list::get_dropping(&self.reader, &ask.kind, ns, name, drop).await
                } else {
                    list::get_metadata(&self.reader, &ask.kind, ns, name).await.map(|d| (d, false))
                };
                version = res.as_ref().ok().and_then(|(d, _)| d.metadata.as_ref()?.resource_version.clone());
                let dropped = res.as_ref().is_ok_and(|(_, dropped)| *dropped);
                (res.map(|(d, _)| vec![d]), dropped)
            }
            ask::Fetch::List { label_selector, only, .. } => {
                let drop = ask.managed_fields == ask::ManagedFields::Drop;
                let field_selector = ask.fetch.field_selector();
                let selectors = list::Selectors { field: field_selector.as_deref(), label: label_selector.as_deref() };
                let mut listed =
                    list::list(&self.reader, &ask.kind, ask.namespace.as_deref(), full, drop, selectors).await;
                // a custom resource's list that fails inside the server (500: a conversion
                // webhook down fails the whole list) is asked at each other version served: the
                // one its objects are stored at needs no conversion. The first failure stands
                // when none answers.
                if matches!(listed, Err(Failure::Status { code: 500, .. })) && !ask.kind.group.is_empty() {
                    for other in d.other_versions(&ask.kind) {
                        let again =
                            list::list(&self.reader, &other, ask.namespace.as_deref(), full, drop, selectors).await;
                        if again.is_ok() {
                            (listed, served) = (again, other);
                            break;
                        }
                    }
                }
                match listed {
                    Ok(l) => {
                        version = l.resource_version;
                        let mut docs = l.docs;
                        if let Some(only) = only {
                            docs.retain(|d| {
                                d.metadata.as_ref().is_some_and(|m| {
                                    m.name.as_ref().is_some_and(|n| only.contains(&(m.namespace.clone(), n.clone())))
                                })
                            });
                        }
                        (Ok(docs), l.managed_fields_dropped)
                    }
                    Err(f) => (Err(f), false),
                }
            }
        };
        (Answered { ask, result, managed_fields_dropped }, Resume { version, kind: served })
    }
}

/// Where a watch of an answer's objects resumes.
pub struct Resume {
    /// The resourceVersion the answer is current at.
    pub version: Option<String>,
    /// The type at the version that answered (see [`Discovery::other_versions`]).
    pub kind: ListType,
}

/// The snapshot the answers so far make, as [`Session::read`] would return it were the read to
/// end here (a copy; the answers stay the caller's). A plan that reads round by round keeps
/// them with [`so_far::SoFar`] instead, which copies each document once.
pub fn snapshot_so_far(d: &Discovery, answers: &[Answered], now: Timestamp) -> Snapshot {
    assemble(d, answers.to_vec(), now)
}

/// The snapshot of a read's answers: the objects of answers for objects, those read in full
/// first (an object listed both ways keeps its body) and among them those read by name (a GET
/// comes after the list that holds the same object, or is followed apart from it: it is the
/// newer), the first of each uid; the managedFields
/// of answers for managedFields put back by uid on objects read without them; each failure a
/// gap ([`gaps_of`]).
fn assemble(d: &Discovery, answers: Vec<Answered>, now: Timestamp) -> Snapshot {
    use ask::{Body, Use};
    let mut flat = Flattened::default();
    let incomplete = gaps_of(d, &answers);
    let mut restored: HashMap<String, RawManagedFields> = HashMap::new();
    let mut objects = Vec::new();
    for a in answers {
        let Answered { ask, result, .. } = a;
        match (result, ask.use_) {
            (Ok(docs), Use::Objects) => {
                let by_name = matches!(ask.fetch, ask::Fetch::Get(_));
                objects.push(((ask.body == Body::Full, by_name), docs))
            }
            (Ok(docs), Use::ManagedFieldsOnly) => {
                for m in docs.into_iter().filter_map(|d| d.metadata) {
                    if let (Some(uid), Some(mf)) = (m.uid, m.managed_fields) {
                        restored.insert(uid, mf);
                    }
                }
            }
            (Err(_), _) => {}
        }
    }
    let mut seen = HashSet::new();
    // in full by name, in full, metadata-only; in answer order within each
    objects.sort_by_key(|((full, by_name), _)| std::cmp::Reverse((*full, *by_name && *full)));
    for (_, docs) in objects {
        for mut doc in docs {
            let uid = doc.metadata.as_ref().and_then(|m| m.uid.clone());
            if uid.as_ref().is_none_or(|u| seen.insert(u.clone())) {
                if let Some(m) = doc.metadata.as_mut()
                    && m.managed_fields.is_none()
                    && let Some(mf) = m.uid.as_ref().and_then(|u| restored.get(u))
                {
                    m.managed_fields = Some(RawManagedFields(mf.0.clone()));
                }
                flat.push(doc);
            }
        }
    }
    flat.captured_at = Some(now);
    flat.resource_lists = d.lists.clone();
    flat.incomplete = incomplete;
    Snapshot::from_flattened(flat)
}

/// What a read's answers could not read, each failure a gap: discovery's first, then objects
/// read in full by name, then managedFields, then lists (those read in full before
/// metadata-only ones). A GET of an object gone since it was listed is no gap: it is answered
/// as listed.
fn gaps_of(d: &Discovery, answers: &[Answered]) -> Vec<Gap> {
    use ask::{Body, Fetch, Use};
    let mut incomplete = d.incomplete.clone();
    let (mut bodies_gaps, mut managed_gaps, mut list_gaps) = (Vec::new(), Vec::new(), Vec::new());
    for Answered { ask, result, .. } in answers {
        let Err(f) = result else { continue };
        match (f, ask.use_) {
            (Failure::Status { code: 404, .. }, _) if matches!(ask.fetch, Fetch::Get(_)) => {}
            (Failure::Status { code: 404, .. }, Use::ManagedFieldsOnly) => {}
            // read by name to be followed apart (`Follow`), and held from a list anyway
            _ if held_by_a_list(answers, ask) => {}
            (f, use_) => {
                let resource = Resource::new(&ask.kind.group, &ask.kind.version, &ask.kind.plural);
                let why = f.describe();
                let name = match &ask.fetch {
                    Fetch::Get(n) => Some(n.clone()),
                    Fetch::List { .. } => None,
                };
                let namespace = ask.namespace.clone();
                if use_ == Use::ManagedFieldsOnly {
                    managed_gaps.push(Gap::new(Missing::ManagedFields { resource, namespace, name }, why));
                } else if ask.body == Body::Full
                    && (name.is_some() || matches!(&ask.fetch, Fetch::List { only: Some(_), .. }))
                {
                    bodies_gaps.push(Gap::new(Missing::Bodies { resource, namespace, name }, why));
                } else {
                    list_gaps.push((ask.body == Body::Full, Gap::new(Missing::List { resource, namespace }, why)));
                }
            }
        }
    }
    incomplete.extend(bodies_gaps);
    incomplete.extend(managed_gaps);
    let (full_gaps, meta_gaps): (Vec<_>, Vec<_>) = list_gaps.into_iter().partition(|(full, _)| *full);
    incomplete.extend(full_gaps.into_iter().chain(meta_gaps).map(|(_, g)| g));
    incomplete
}

/// Whether `get` asks for an object that a list among `answers` holds, with its body where it
/// asks for it.
fn held_by_a_list(answers: &[Answered], get: &Ask) -> bool {
    let ask::Fetch::Get(name) = &get.fetch else { return false };
    answers.iter().any(|a| {
        let listed = matches!(a.ask.fetch, ask::Fetch::List { .. }) && a.ask.kind == get.kind;
        let body = a.ask.body == ask::Body::Full || get.body == ask::Body::Metadata;
        listed
            && body
            && a.ask.use_ == ask::Use::Objects
            && a.result
                .iter()
                .flatten()
                .filter_map(|d| d.metadata.as_ref())
                .any(|m| m.name.as_deref() == Some(name.as_str()) && m.namespace.as_deref() == get.namespace.as_deref())
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::ask::{Answered, Ask};
    use super::*;
    use crate::snapshot::raw::RawDoc;

    fn t(plural: &str, kind: &str) -> ListType {
        crate::testing::list_type("", "v1", plural, kind, true)
    }

    fn cm(name: &str) -> RawDoc {
        serde_json::from_value(json!({"apiVersion": "v1", "kind": "ConfigMap",
                                      "metadata": {"name": name, "namespace": "labs", "uid": format!("u-{name}")}}))
        .unwrap()
    }

    fn failed(code: u16) -> Result<Vec<RawDoc>, Failure> {
        Err(Failure::Status { code, reason: String::new(), message: "no".into() })
    }

    #[test]
    fn answers_become_one_snapshot_bodies_first_managed_fields_put_back_and_gaps_in_order() {
        let cms = t("configmaps", "ConfigMap");
        let with_managed_fields: RawDoc = serde_json::from_value(json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "a", "namespace": "labs", "uid": "u-a",
                         "managedFields": [{"manager": "op", "operation": "Update",
                             "fieldsV1": {"f:metadata": {"f:finalizers": {"v:\"x.io/f\"": {}}}}}]}}))
        .unwrap();
        let mut listed = cm("a");
        listed.metadata.as_mut().unwrap().finalizers = Some(vec!["x.io/f".into()]);
        let answers = vec![
            Answered { ask: Ask::list(&cms, None, "t"), result: Ok(vec![listed]), managed_fields_dropped: true },
            Answered {
                ask: Ask::list(&cms, Some("labs".into()), "t").full(),
                result: Ok(vec![cm("b")]),
                managed_fields_dropped: false,
            },
            Answered {
                ask: Ask::list(&t("pods", "Pod"), None, "t"),
                result: failed(403),
                managed_fields_dropped: false,
            },
            Answered {
                ask: Ask::get(&cms, Some("labs".into()), "a", "t").for_managed_fields(),
                result: Ok(vec![with_managed_fields]),
                managed_fields_dropped: false,
            },
            Answered {
                ask: Ask::get(&cms, Some("labs".into()), "gone", "t").for_managed_fields(),
                result: failed(404),
                managed_fields_dropped: false,
            },
            Answered {
                ask: Ask::get(&t("secrets", "Secret"), Some("labs".into()), "s", "t").full(),
                result: failed(500),
                managed_fields_dropped: false,
            },
        ];
        let s = assemble(&Discovery::default(), answers, "2026-11-29T12:00:00Z".parse().unwrap());
        // the full list's object comes first; the listed one got its managedFields back
        let names: Vec<&str> = s.objects.iter().map(|o| o.name.as_str()).collect();
        assert_eq!(names, ["b", "a"]);
        assert_eq!(s.objects[1].finalizer_managers.first().map(|m| m.manager.as_str()), Some("op"));
        // a GET of an object gone since it was listed is no gap
        let gaps: Vec<String> = s.incomplete.iter().map(ToString::to_string).collect();
        assert_eq!(
            gaps,
            [
                "secrets \"s\" could not be read in full: the server answered 500: no",
                "pods could not be listed: forbidden (403)",
            ]
        );
        assert!(s.incomplete[1].is_list_of("pods"));
    }

    /// A Node followed by name beside the list that holds it (`reads::nodes`): the one read by
    /// name stands, being the newer, and a refusal of it is no gap.
    #[test]
    fn an_object_read_by_name_in_full_stands_for_its_copy_in_a_list_and_needs_no_gap_when_refused() {
        let cms = t("configmaps", "ConfigMap");
        let mut newer = cm("a");
        newer.metadata.as_mut().unwrap().finalizers = Some(vec!["x.io/newer".into()]);
        let answers = vec![
            Answered {
                ask: Ask::list(&cms, None, "t").full(),
                result: Ok(vec![cm("a"), cm("b")]),
                managed_fields_dropped: false,
            },
            Answered {
                ask: Ask::get(&cms, Some("labs".into()), "a", "t").full(),
                result: Ok(vec![newer]),
                managed_fields_dropped: false,
            },
            Answered {
                ask: Ask::get(&cms, Some("labs".into()), "b", "t").full(),
                result: failed(403),
                managed_fields_dropped: false,
            },
            Answered {
                ask: Ask::get(&cms, Some("labs".into()), "c", "t").full(),
                result: failed(403),
                managed_fields_dropped: false,
            },
        ];
        let s = assemble(&Discovery::default(), answers, "2026-11-29T12:00:00Z".parse().unwrap());
        let a = s.objects.iter().find(|o| o.name == "a").unwrap();
        assert_eq!(a.finalizers, ["x.io/newer"], "the copy read by name stands");
        assert_eq!(s.objects.len(), 2);
        let gaps: Vec<String> = s.incomplete.iter().map(ToString::to_string).collect();
        assert_eq!(gaps.len(), 1, "b is held by the list, c is not: {gaps:?}");
        assert!(gaps[0].contains("\"c\""), "{gaps:?}");
    }
}

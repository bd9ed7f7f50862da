//! The request layer: what one invocation asks, resolved once, and the one path every answer
//! is read through (a single answer, `why-stuck --all`, and each answer of `--watch`).
//!
//! The target, split once by [`Invocation`], is resolved once by the source that reads it:
//! live, by discovery, into the [`TargetRef`] the read plan uses and the graph is searched for;
//! offline, by the snapshot's own mapper. The namespace `-n` defaults to is the one the live
//! session's kubeconfig context names (else `default`), returned with the read and decided by
//! [`Invocation::namespace`].

use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use k8s_openapi::jiff::Timestamp;

use kubectl_gc::diagnose::{self, Connection};
use kubectl_gc::graph::{Graph, NodeId};
use kubectl_gc::reads::TargetRef;
use kubectl_gc::snapshot::{Gap, Missing, Snapshot};
use kubectl_gc::source;

use super::invocation::{Invocation, Namespace, NamespaceFrom, ObjectArg, ReadThrough, Source};
use super::output;

/// A boolean flag's value, as kubectl (pflag, Go's `strconv.ParseBool`) takes it in
/// `--flag=VALUE`: `1 t T TRUE true True`, `0 f F FALSE false False`. The bare flag is true;
/// `--flag false` is the flag and an argument, as in kubectl.
pub fn kube_bool(s: &str) -> Result<bool, String> {
    match s {
        "1" | "t" | "T" | "TRUE" | "true" | "True" => Ok(true),
        "0" | "f" | "F" | "FALSE" | "false" | "False" => Ok(false),
        _ => Err(format!("invalid boolean {s:?}: use true or false")),
    }
}

/// What one answer is read for.
#[derive(Clone, Debug)]
pub struct Request {
    /// The object asked about (`None`: a scope, for `--all` and `snapshot`).
    pub target: Option<ObjectArg>,
    /// The answer follows dependents (`tree`, `plan`): every namespace is read, as the GC
    /// links a dependent to its owner by uid from any of them.
    pub dependents_anywhere: bool,
    /// The answer is why-stuck's, judged with these options.
    pub why_stuck: Option<diagnose::Options>,
    /// Whether the server's version is read after the objects.
    pub version: kubectl_gc::reads::VersionRead,
    /// The answer judges admission (why-stuck, plan): admission policies are read in full.
    pub admission: bool,
}

/// What a read gave: the graph, the time it is judged at, the target found in it, the
/// namespace `-n` stands for, and the cluster printed commands are bound to.
pub struct Loaded {
    /// The objects read.
    pub graph: Graph,
    /// `--now`, else the capture time, else the clock.
    pub now: Timestamp,
    /// The object asked about.
    pub target: Option<NodeId>,
    /// `-n`, else the context's namespace (live, or as a `kubectl gc snapshot` file recorded
    /// it), else `default`.
    pub namespace: Namespace,
    /// What the printed commands name.
    pub connection: Connection,
}

/// A live read's outcome, before the graph is built.
pub struct LiveRead {
    /// What was read.
    pub snapshot: Snapshot,
    /// The target as discovery resolved it.
    pub target: Option<TargetRef>,
    /// The kubeconfig context's namespace, else `default`.
    pub context_namespace: String,
    /// The kubeconfig file the context was read through, when not the default one.
    pub kubeconfig: Option<PathBuf>,
}

/// Reads what `request` needs, offline (`--snapshot`) or live, and finds its target.
pub fn load(inv: &Invocation, request: &Request) -> Result<Loaded> {
    match &inv.source {
        Source::Live => {
            let read = super::live::read(inv, request)?;
            let through =
                ReadThrough::Live { context: read.snapshot.context.as_deref(), kubeconfig: read.kubeconfig.as_deref() };
            let connection = inv.bound(through);
            let namespace = inv.namespace(Some((&read.context_namespace, NamespaceFrom::Context)));
            loaded(inv, read.snapshot, namespace, connection, |g, ns| match &read.target {
                Some(t) => locate(g, t).map(Some),
                None => request.target.as_ref().map(|t| resolve(g, t, ns, None)).transpose(),
            })
        }
        Source::Snapshot(paths) => {
            let snapshot = source::file::load(paths).context("reading the snapshot")?;
            let through =
                ReadThrough::Snapshot { context: snapshot.context.as_deref(), server: snapshot.server.as_deref() };
            let connection = inv.bound(through);
            // as live: the namespace of the context the snapshot was taken through
            let namespace = inv.namespace(snapshot.namespace.as_deref().map(|ns| (ns, NamespaceFrom::Snapshot)));
            loaded(inv, snapshot, namespace, connection, |g, ns| {
                // an empty file (a failed `kubectl get > file`) answers nothing: not even "nothing
                // is being deleted"
                let files = paths.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ");
                if g.objects().is_empty() {
                    bail!("the snapshot holds no objects ({files}): nothing can be answered from it");
                }
                request.target.as_ref().map(|t| resolve(g, t, ns, Some(&files))).transpose()
            })
        }
    }
}

/// The graph of a snapshot, its time and its target (`find`, given the graph and the namespace).
fn loaded(
    inv: &Invocation,
    snapshot: Snapshot,
    namespace: Namespace,
    connection: Connection,
    find: impl FnOnce(&Graph, &str) -> Result<Option<NodeId>>,
) -> Result<Loaded> {
    let t0 = std::time::Instant::now();
    warn_about(&snapshot);
    let now = inv.clock.judged_at(snapshot.captured_at);
    output::timing("load", t0);
    let graph = build(snapshot);
    let target = find(&graph, &namespace.name)?;
    Ok(Loaded { graph, now, target, namespace, connection })
}

/// The graph of a snapshot, with the kinds named only by the objects present said to rest on
/// inference.
pub fn build(snapshot: Snapshot) -> Graph {
    let t1 = std::time::Instant::now();
    let mut g = Graph::build(snapshot);
    let inferred: Vec<Gap> = g.mapper().inferred().map(kubectl_gc::discovery::RestMapper::inferred_gap).collect();
    for gap in inferred {
        output::warn(&gap.to_string());
        g.record_gap(gap);
    }
    output::timing("graph", t1);
    g
}

/// Warnings and gaps of a read, on stderr.
pub fn warn_about(s: &Snapshot) {
    for w in &s.warnings {
        output::warn(w);
    }
    for i in &s.incomplete {
        output::warn(&format!("incomplete: {i}"));
    }
}

/// The process is about to exit: handing millions of small allocations back one by one would
/// only delay it (a tenth of a second on 100k objects), so the graph is left to the OS.
pub fn exit_without_freeing(g: Graph) {
    std::mem::forget(g);
}

/// What could not be read of a type where the target would be (its namespace, or every
/// namespace): an absent object there is unknown, not "not found". Judged by the gaps' typed
/// fields; a line without them (an older snapshot file) may hide the target too.
fn unread<'g>(g: &'g Graph, group: &str, plural: &str, ns: Option<&str>) -> Option<&'g Gap> {
    g.gaps().iter().find(|i| i.may_hide(group, Some(plural), ns))
}

/// Resolves TYPE (as typed) and NAME, in namespace `ns` for a namespaced type, through the
/// graph's own mapper (offline: the snapshot's discovery data, CRDs and built-in types, from
/// `files`).
pub fn resolve(g: &Graph, target: &ObjectArg, ns: &str, files: Option<&str>) -> Result<NodeId> {
    let rt = g.mapper().resolve(&target.type_arg).map_err(|e| {
        // offline too: a snapshot whose capture could not discover some groups says so
        // (a line without fields, from an older snapshot file, may be such a failure too)
        let failed: Vec<String> = g
            .gaps()
            .iter()
            .filter(|i| i.is_discovery() || matches!(i.what, Missing::Recorded(_)))
            .map(|i| i.to_string())
            .collect();
        match (&e, files) {
            // "the server doesn't have a resource type" would send the reader to a cluster
            // that was never asked: say what the file lacks
            (kubectl_gc::discovery::ResolveError::Unknown(ty), Some(files)) if failed.is_empty() => anyhow::anyhow!(
                "the snapshot doesn't have a resource type \"{ty}\": no discovery data, CRD or object of it is in {files}"
            ),
            _ => super::live::unresolved(e, &failed),
        }
    })?;
    let t = TargetRef {
        group: rt.group.clone(),
        kind: rt.kind.clone(),
        namespace: rt.namespaced.then(|| ns.to_string()),
        name: target.name.clone(),
    };
    locate(g, &t)
}

/// The object a resolved target names, or why it cannot be answered about.
pub fn locate(g: &Graph, t: &TargetRef) -> Result<NodeId> {
    let bare = g.mapper().kind(&t.group, &t.kind).map(|rt| rt.plural.clone());
    let bare = bare.unwrap_or_else(|| t.kind.to_lowercase());
    let plural = if t.group.is_empty() { bare.clone() } else { format!("{bare}.{}", t.group) };
    let (ns, name) = (t.namespace.as_deref(), t.name.as_str());
    match g.find(&t.group, &t.kind, ns, name) {
        Some(id) => Ok(id),
        None if let Some(why) = unread(g, &t.group, &bare, ns) => {
            let place = ns.map(|ns| format!(" in namespace \"{ns}\"")).unwrap_or_default();
            match why.what {
                Missing::Recorded(_) => {
                    bail!(
                        "cannot tell whether {plural} \"{name}\" exists{place}: it may be among what the snapshot could not read ({why})"
                    )
                }
                _ => bail!("cannot tell whether {plural} \"{name}\" exists{place}: it could not be read ({why})"),
            }
        }
        None => match ns {
            Some(ns) => bail!("{plural} \"{name}\" not found in namespace \"{ns}\""),
            None => bail!("{plural} \"{name}\" not found"),
        },
    }
}

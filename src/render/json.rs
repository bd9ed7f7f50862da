//! JSON wire types (contract §4): camelCase, stable keys, built apart from the engine's
//! types so a refactor cannot change the contract by accident.

use std::io::{self, Write};

use serde::Serialize;

use crate::diagnose::{Connection, Diagnosis, Finding, Related, Step};
use crate::graph::{Graph, NodeId};
use crate::tree::Tree;

/// Contract §4.1. `namespace` is omitted for cluster-scoped objects, `uid` for an owner that
/// does not exist.
#[derive(Clone, Debug, Serialize, PartialEq, Eq, PartialOrd, Ord)]
#[serde(rename_all = "camelCase")]
pub struct ObjectRef {
    /// `apiVersion` as written on the object (or in the owner reference for an absent owner).
    pub api_version: String,
    /// `kind`, e.g. `ReplicaSet`.
    pub kind: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    /// The namespace; `None` for cluster-scoped objects.
    pub namespace: Option<String>,
    /// `metadata.name`.
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    /// `metadata.uid`; `None` when the object does not exist (a dangling owner reference).
    pub uid: Option<String>,
}

/// The contract's reference to node `n` of the graph (a virtual owner has no uid).
pub fn object_ref(g: &Graph, n: NodeId) -> ObjectRef {
    crate::plan::ObjRef::of_node(g, n).into()
}

impl From<crate::plan::ObjRef> for ObjectRef {
    fn from(r: crate::plan::ObjRef) -> ObjectRef {
        ObjectRef {
            api_version: r.api_version,
            kind: r.kind,
            namespace: r.namespace,
            name: r.name,
            uid: r.uid.map(|u| u.0),
        }
    }
}

/// The contract's reference to a finding's related object, present in the graph or not.
pub fn related_ref(g: &Graph, r: &Related) -> ObjectRef {
    match r {
        Related::Node(n) => object_ref(g, *n),
        Related::Absent { api_version, kind, namespace, name } => ObjectRef {
            api_version: api_version.clone(),
            kind: kind.clone(),
            namespace: namespace.clone(),
            name: name.clone(),
            uid: None,
        },
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
/// Contract §4.3: the whole answer of `why-stuck -o json` for one object.
pub struct WhyStuckJson {
    /// The object asked about.
    pub object: ObjectRef,
    /// `metadata.deletionTimestamp` (RFC 3339); `None` when it is not being deleted.
    pub deletion_timestamp: Option<String>,
    /// Seconds since the deletion was requested (for a pod in its grace period, the
    /// `deletionTimestamp` minus `deletionGracePeriodSeconds`); `None` when not being deleted.
    pub deleting_for_seconds: Option<i64>,
    /// The answer in one word: `Stuck`, `InProgress`, `Unknown` or `NotDeleting` (contract
    /// §4.3; [`Diagnosis::verdict`]).
    pub verdict: &'static str,
    /// True exactly when `verdict` is `Stuck`: the object, or something it waits on, will not
    /// finish without someone acting.
    pub stuck: bool,
    /// One entry per finalizer still on the object, in its order.
    pub finalizers: Vec<FinalizerJson>,
    /// What holds the object, ranked; each carries its remedy.
    pub findings: Vec<FindingJson>,
    /// The whole answer's remedy list, in the order the text prints it (ranked safest first
    /// across every finding), each step naming the findings it serves (contract §4.3.1).
    pub steps: Vec<AnswerStepJson>,
    /// What could not be read, in words; non-empty means the answer may be missing something.
    pub incomplete: Vec<String>,
    /// The most recent Warning events of the object and of the objects the answer names
    /// (docs/stuck-or-in-progress.md: "Events as evidence"); empty when none was found.
    pub events: Vec<EventJson>,
    /// With `why-stuck --plan`: the planner's dry run once the blockers are gone.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub plan: Option<serde_json::Value>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
/// Contract §4.3: one finalizer still on the object and who is expected to remove it.
pub struct FinalizerJson {
    /// The finalizer as written in `metadata.finalizers`.
    pub name: String,
    /// The component or workload expected to remove it; `None` when nobody is known.
    pub removed_by: Option<String>,
    /// That controller's state: `Alive`, `Down`, `Missing` or `Unknown`.
    pub controller: &'static str,
    /// What the state was judged from (pods, managed fields, leases), in words.
    pub evidence: Vec<String>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
/// Contract §4.3: one finding in the wire shape.
pub struct FindingJson {
    /// The stable finding code (contract §4.3 table).
    pub code: &'static str,
    /// `Error`, `Warning` or `Info`.
    pub severity: &'static str,
    /// The object the finding is about.
    pub object: ObjectRef,
    /// Other objects it names (the blocking dependent, the webhook configuration, the CRD…).
    pub related: Vec<ObjectRef>,
    /// One sentence for a person; Kubernetes' own messages appear quoted inside it.
    pub message: String,
    /// What to do about it, safest step first.
    pub remedy: Vec<StepJson>,
}

/// One Warning event of an object the answer names, quoted as written.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EventJson {
    /// The object the event is about (`involvedObject`/`regarding`).
    pub object: ObjectRef,
    #[serde(rename = "type")]
    /// The event's `type`; always `Warning` today.
    pub type_: String,
    /// The event's `reason`, e.g. `FailedDelete`.
    pub reason: String,
    /// How many times it was seen (`count`, `series.count`, else 1).
    pub count: i64,
    /// When it was last seen (RFC 3339); `None` when the event carries no time.
    pub last_seen: Option<String>,
    /// The event's message, quoted as written.
    pub message: String,
    /// The component that reported it (`reportingController`/`reportingComponent`, else
    /// `source.component`).
    pub reporting_controller: Option<String>,
}

/// The diagnosis's Warning events, flattened in the order the diagnosis ranked them.
pub fn events_json(g: &Graph, d: &Diagnosis) -> Vec<EventJson> {
    d.events
        .iter()
        .flat_map(|oe| {
            oe.warnings.iter().map(move |e| EventJson {
                object: object_ref(g, oe.object),
                type_: e.type_.clone(),
                reason: e.reason.clone(),
                count: e.count,
                last_seen: e.last_seen.map(|t| t.to_string()),
                message: e.message.clone(),
                reporting_controller: e.reporting_controller.clone(),
            })
        })
        .collect()
}

/// Contract §4.3.1: one ranked step; `command` is one shell line bound to the cluster.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StepJson {
    /// What to do, for a person.
    pub text: String,
    /// The command, shell-quoted and bound to the cluster the answer was read from; `None`
    /// when the step is not a command.
    pub command: Option<String>,
    /// True for steps that disrupt workloads or destroy data (`Reach::Disrupt` or
    /// `Reach::Destructive`).
    pub destructive: bool,
}

/// One step of the whole answer: a remedy step and the findings it serves.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AnswerStepJson {
    /// What to do, for a person.
    pub text: String,
    /// The command, shell-quoted and bound to the cluster; `None` when the step is advice.
    pub command: Option<String>,
    /// As a finding's step: `Reach::Disrupt` or `Reach::Destructive`.
    pub destructive: bool,
    /// Indexes into `findings` of the findings whose remedy holds this step.
    pub findings: Vec<usize>,
}

/// The answer's steps ranked across all its findings (`diagnose::step::served`).
pub fn answer_steps(d: &Diagnosis, conn: &Connection) -> Vec<AnswerStepJson> {
    let steps = d.findings.iter().enumerate().flat_map(|(i, f)| f.remedy.iter().map(move |s| (i, s)));
    crate::diagnose::step::served(steps)
        .into_iter()
        .map(|s| AnswerStepJson {
            text: s.step.text.to_string(),
            command: s.command.map(|c| c.line(conn)),
            destructive: s.step.reach.destructive(),
            findings: s.findings,
        })
        .collect()
}

/// One remedy step in the wire shape; `conn` supplies the cluster-binding flags.
pub fn step_json(s: &Step, conn: &Connection) -> StepJson {
    StepJson {
        text: s.text.to_string(),
        command: s.command.as_ref().map(|c| c.line(conn)),
        destructive: s.reach.destructive(),
    }
}

/// One finding in the wire shape.
pub fn finding_json(g: &Graph, f: &Finding, conn: &Connection) -> FindingJson {
    FindingJson {
        code: f.code.as_str(),
        severity: f.severity.as_str(),
        object: object_ref(g, f.object),
        related: f.related.iter().map(|r| related_ref(g, r)).collect(),
        message: f.message.clone(),
        remedy: f.remedy.iter().map(|s| step_json(s, conn)).collect(),
    }
}

/// The whole `why-stuck -o json` answer for one diagnosis.
pub fn why_stuck(g: &Graph, d: &Diagnosis, conn: &Connection) -> WhyStuckJson {
    WhyStuckJson {
        object: object_ref(g, d.object),
        deletion_timestamp: d.deletion_timestamp.map(|t| t.to_string()),
        deleting_for_seconds: d.deleting_for_seconds,
        verdict: d.verdict().as_str(),
        stuck: d.verdict() == crate::diagnose::Verdict::Stuck,
        finalizers: d
            .finalizers
            .iter()
            .map(|f| FinalizerJson {
                name: f.name.clone(),
                removed_by: f.owner.removed_by.clone(),
                controller: f.owner.controller.as_str(),
                evidence: f.owner.evidence.clone(),
            })
            .collect(),
        findings: d.findings.iter().map(|f| finding_json(g, f, conn)).collect(),
        steps: answer_steps(d, conn),
        incomplete: d.incomplete.clone(),
        events: events_json(g, d),
        plan: None,
    }
}

/// Writes any wire value as pretty JSON followed by a newline.
pub fn write<T: Serialize>(value: &T, w: &mut impl Write) -> io::Result<()> {
    super::safe_json::to_writer_pretty(&mut *w, value)?;
    w.write_all(b"\n")
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct TreeNodeHead<'a> {
    object: ObjectRef,
    deletion_timestamp: Option<String>,
    finalizers: &'a [String],
    edge: Option<EdgeJson>,
    problems: Vec<&'static str>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    already_shown: bool,
    /// An absent owner that was recreated: the object that has its kind and name now.
    #[serde(skip_serializing_if = "Option::is_none")]
    recreated_as: Option<ObjectRef>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct EdgeJson {
    controller: bool,
    block_owner_deletion: bool,
}

/// Contract §4.4, written with an explicit stack (not serde recursion) so that deep owner
/// chains cannot overflow the stack: each node's fields, then its children under
/// `dependents` (or `owners`). The root also carries `incomplete`, what could not be read
/// (dependents there may be missing), as every other JSON answer does.
pub fn write_tree(g: &Graph, tree: &Tree, w: &mut impl Write) -> io::Result<()> {
    if !tree.entries.is_empty() {
        let incomplete: Vec<String> = g.gaps().iter().map(|i| i.to_string()).collect();
        write_subtree(g, tree, 0, Some(&incomplete), w)?;
    }
    w.write_all(b"\n")
}

/// One node's fields, as `write_tree` and the YAML writer put them.
pub(crate) fn tree_head<'a>(g: &'a Graph, e: &crate::tree::Entry) -> impl Serialize + 'a {
    TreeNodeHead {
        object: object_ref(g, e.node),
        deletion_timestamp: g.object(e.node).and_then(|o| o.deletion_timestamp).map(|t| t.to_string()),
        finalizers: g.object(e.node).map(|o| o.finalizers.as_slice()).unwrap_or(&[]),
        edge: e.edge.map(|x| EdgeJson { controller: x.controller, block_owner_deletion: x.block_owner_deletion }),
        problems: e.problems.iter().map(|p| p.as_str()).collect(),
        already_shown: e.repeated,
        recreated_as: e.recreated_as.map(|live| object_ref(g, live)),
    }
}

/// The node at `start` and everything under it, as one JSON object; returns the index after
/// its subtree. `incomplete` is written into this node when given (the root).
pub(crate) fn write_subtree(
    g: &Graph,
    tree: &Tree,
    start: usize,
    incomplete: Option<&[String]>,
    w: &mut impl Write,
) -> io::Result<usize> {
    let key = tree.direction.as_str();
    let base = tree.entries[start].depth;
    let mut open = 0usize;
    let mut i = start;
    while let Some(e) = tree.entries.get(i).filter(|e| i == start || e.depth > base) {
        let mut text = super::safe_json::to_string(&tree_head(g, e))?;
        text.pop(); // the closing brace: children follow
        if i > start && e.depth == tree.entries[i - 1].depth + 1 {
            // first child of the previous entry: its array is already open
        } else if i > start {
            w.write_all(b",")?;
        }
        w.write_all(text.as_bytes())?;
        if let Some(inc) = incomplete.filter(|_| i == start) {
            w.write_all(b",\"incomplete\":")?;
            w.write_all(super::safe_json::to_string(inc)?.as_bytes())?;
        }
        write!(w, ",\"{key}\":[")?;
        open += 1;
        i += 1;
        let next_depth = tree.entries.get(i).map(|n| n.depth).filter(|d| *d > base);
        // close this node and any ancestors the next entry is not under
        let close_to = match next_depth {
            Some(d) if d > e.depth => continue,
            Some(d) => d,
            None => base,
        };
        for _ in close_to..=e.depth {
            w.write_all(b"]}")?;
            open -= 1;
        }
    }
    debug_assert_eq!(open, 0);
    Ok(i)
}

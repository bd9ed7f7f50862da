//! `why-stuck`: why an object will not go away, down to the root cause, and what to do.
//!
//! # Expected flow
//! The target is explained first: its deletion age, each finalizer with who removes it
//! ([`Liveness`]), its owner-reference problems. Whatever it waits on is then explained the
//! same way, breadth first: blocking dependents (`foregroundDeletion`), a namespace's content,
//! a CRD's instances, the pods that use a protected claim. An object is *stuck* when nothing
//! in flight will finish it (a controller down or missing, a failing API group, a reference
//! the GC never acts on), or when something it waits on is stuck.
//!
//! # Guarantees
//! Pure: the same graph, liveness and `now` give the same diagnosis. No recursion.

mod admission;
mod answer;
pub use crate::remedy::{self, step};
pub mod builtin_conditions;
pub mod causes;
pub mod clock;
mod create_refused;
mod denials;
mod evaluated;
pub mod events;
mod explain;
pub mod finding;
mod gc_steps;
mod grounds;
mod kubelet;
mod leaves;
mod namespace;
mod out_of_sight;
mod owners;
mod patches;
pub mod progress;
mod readded;
mod self_hold;
pub mod shared;
mod unconvertible;
pub mod verdict;

#[cfg(test)]
mod blockers_tests;

use k8s_openapi::jiff::Timestamp;

use crate::admission::{Operation, backend};
use crate::controllers::{ControllerState, FinalizerOwner, Liveness};
use crate::graph::{Graph, NodeId};

pub use crate::collector::GcVerdict;
pub use finding::{Finding, FindingCode, Related, Severity, Subject};
pub use kubelet::kills_at;
pub use owners::owner_findings;
pub use progress::Options;
pub use shared::Shared;
pub use step::{Command, Connection, Reach, Step};
pub use verdict::Verdict;

use explain::Explainer;

/// One remaining finalizer of the target.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FinalizerReport {
    /// The finalizer as written in `metadata.finalizers`.
    pub name: String,
    /// Who removes it, whether that controller is alive, and the evidence.
    pub owner: FinalizerOwner,
}

/// The answer of `why-stuck` (contract §4.3).
#[derive(Clone, Debug)]
pub struct Diagnosis {
    /// The object asked about.
    pub object: NodeId,
    /// Its `metadata.deletionTimestamp`; `None` when its deletion was never requested.
    pub deletion_timestamp: Option<Timestamp>,
    /// Seconds from the deletion's request to `now` (never negative): for a pod in its grace
    /// period, from `deletion_timestamp` minus `deletionGracePeriodSeconds`; `None` when not
    /// deleting.
    pub deleting_for_seconds: Option<i64>,
    /// Whether the object, or something it waits on, cannot finish deleting (the CLI then exits 2).
    pub stuck: bool,
    /// Each remaining finalizer of the object, in `metadata.finalizers` order.
    pub finalizers: Vec<FinalizerReport>,
    /// What was found, on the object and on what it waits on (each remedy's steps safest first).
    pub findings: Vec<Finding>,
    /// Objects that are stuck on their own account (not merely waiting on another).
    pub root_causes: Vec<NodeId>,
    /// What the GC does with the target given its owner references.
    pub gc_verdict: GcVerdict,
    /// What the input could not read, for people: the snapshot's gaps, then the analysis's own.
    pub incomplete: Vec<String>,
    /// The recent Warning events of the object and of the objects the answer names.
    pub events: Vec<events::ObjectEvents>,
    /// The reference time the answer was judged at.
    pub now: Timestamp,
    /// In a sweep (`why-stuck --all`), the objects this answer waits on that have an answer of
    /// their own there, where this one stops (see [`Shared::answering`]): the sweep makes it
    /// stuck when one of them is. Empty for one answer, which walks everything.
    pub waits_on_answers: Vec<NodeId>,
}

pub use crate::graph::describe;

/// What is said of the controller of a finalizer that is not alive, after "it is removed by":
/// who, its state and the decisive evidence (`Deployment ops/x, which exists but is not
/// running: …`), and the root cause when its namespace is being deleted. The text's root-cause
/// section groups objects by it.
pub fn removed_by_clause(g: &Graph, owner: &FinalizerOwner, finalizer: &str) -> String {
    let who = owner.removed_by.clone().unwrap_or_else(|| format!("the controller of {finalizer}"));
    let state = match owner.controller {
        ControllerState::Down => "exists but is not running",
        ControllerState::Missing => "was not found (uninstalled?)",
        ControllerState::Alive => "is alive",
        ControllerState::Unknown => "could not be judged",
    };
    // the decisive evidence is the liveness verdict, which comes last
    let why = owner.evidence.last().map(|e| format!(": {e}")).unwrap_or_default();
    if owner.controller == ControllerState::Missing && owner.added_by_person.is_some() {
        // no controller to have been uninstalled: a person added it
        return format!("no controller: a person added it by hand{why}");
    }
    let mut out = format!("{who}, which {state}{why}");
    if let Some(home) = namespace::controller_home(owner).filter(|ns| backend::namespace_terminating(g, ns)) {
        out.push_str(&namespace::dying_home_cause(&home));
    } else if owner.controller != ControllerState::Alive
        && let Some(h) = self_hold::find(g, owner, finalizer)
    {
        out.push_str(&h.cause(g, finalizer));
    }
    out
}

/// [`why_stuck_with`] with the default options (`--stuck-after` at its default).
pub fn why_stuck(g: &Graph, live: &Liveness, target: NodeId) -> Diagnosis {
    why_stuck_with(g, live, target, &Options::default())
}

/// [`why_stuck`] with options (`--stuck-after`).
pub fn why_stuck_with(g: &Graph, live: &Liveness, target: NodeId, opts: &Options) -> Diagnosis {
    why_stuck_sharing(g, live, &Shared::new(g), target, opts)
}

/// [`why_stuck_with`], sharing the indexes an answer builds over the whole graph or a
/// namespace with the other answers given the same `shared` (`why-stuck --all`); the answer
/// is the same.
pub fn why_stuck_sharing(g: &Graph, live: &Liveness, shared: &Shared, target: NodeId, opts: &Options) -> Diagnosis {
    let now = live.now();
    let mut e = Explainer::new(g, live, shared, target, opts);
    e.walk();
    if let Some(cycle) = shared.owner_cycle(g, target) {
        e.findings.push(Finding {
            code: FindingCode::OwnerReferenceCycle,
            severity: Severity::Info,
            object: target,
            related: cycle.iter().filter(|&&c| c != target).map(|&c| Related::Node(c)).collect(),
            message: format!(
                "owner references form a cycle through {} object(s); a foreground deletion of one of them ends (the GC unblocks the cycle), but none of them is ever collected while all exist",
                cycle.len()
            ),
            remedy: Vec::new(),
            subject: Subject::Context,
            cannot_tell: false,
        });
    }
    let stuck_set = e.propagate_stuck();
    denials::group_waiting(g, target, &mut e.findings);
    admission::warn_rejected_patches(g, &shared.admission, &mut e.findings);
    patches::merge_per_object(g, &mut e.findings);
    causes::check_steps(g, &shared.admission, &mut e.refusals, &mut e.findings);
    answer::say_what_is_left(g, &mut e.findings);
    admission::note_unjudged(g, &shared.admission, target, &mut e.finalizers);
    for f in &mut e.findings {
        step::rank(&mut f.remedy);
    }
    let o = g.object(target);
    let dt = o.and_then(|o| o.deletion_timestamp);
    // from the request, not from the end of a grace period (contract §4.3)
    let requested = o.and_then(|o| o.deletion_requested_at());
    let mut root_causes: Vec<NodeId> = e.local_stuck.clone();
    root_causes.sort_unstable();
    root_causes.dedup();
    let mut incomplete: Vec<String> = g.gaps().iter().map(ToString::to_string).collect();
    for i in e.incomplete {
        if !incomplete.contains(&i) {
            incomplete.push(i);
        }
    }
    let mut d = Diagnosis {
        object: target,
        deletion_timestamp: dt,
        deleting_for_seconds: requested.map(|t| (now.as_second() - t.as_second()).max(0)),
        stuck: stuck_set.contains(&target),
        finalizers: e.finalizers,
        findings: e.findings,
        root_causes,
        gc_verdict: owner_findings(g, target).1,
        incomplete,
        events: Vec::new(),
        now,
        waits_on_answers: e.frontier,
    };
    d.events = events::for_answer(g, &shared.events, &d);
    answer::cap_per_object(g, &mut d);
    answer::calm(&mut d);
    d
}

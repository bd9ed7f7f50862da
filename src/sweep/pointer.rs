//! `why-stuck ns/X` on a namespace that is not being deleted: its own answer is only "not
//! deleting", yet deletions inside it may be stuck. The answer then points to
//! `why-stuck --all -n X`, with the counts that sweep finds: judged by [`sweep`](super::sweep)
//! itself, so the pointer never disagrees with what the command it prints will say.

use crate::controllers::Liveness;
use crate::diagnose::{Command, Diagnosis, FindingCode, Reach, Step, Verdict};
use crate::graph::Graph;

use super::{Options, Scope, sweep};

/// How the objects being deleted in a namespace are judged by `why-stuck --all -n NS`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    /// Objects with a deletionTimestamp in it.
    pub deleting: usize,
    /// Of those, how many are stuck.
    pub stuck: usize,
    /// Of those, how many could not be judged.
    pub unknown: usize,
}

/// The sweep of namespace `ns` (every answer, none left out), counted by verdict.
pub fn tally(g: &Graph, live: &Liveness, ns: &str, answer: &crate::diagnose::Options) -> Tally {
    let s = sweep(g, live, &Options { scope: Scope::Namespace(ns.to_string()), stuck_only: false, answer: *answer });
    let count = |v: Verdict| s.answers.iter().filter(|d| d.verdict() == v).count();
    Tally { deleting: s.answers.len(), stuck: count(Verdict::Stuck), unknown: count(Verdict::Unknown) }
}

/// When `d` answers about a Namespace that is not being deleted and holds objects that are,
/// adds to its `NotBeingDeleted` finding the step that answers them all (`why-stuck --all -n`),
/// saying how many there are and how many are stuck. Leaves every other answer as it is.
pub fn point_to_sweep(g: &Graph, live: &Liveness, d: &mut Diagnosis, answer: &crate::diagnose::Options) {
    let id = g.identity(d.object);
    if !(id.group().is_empty() && id.kind == "Namespace") || d.verdict() != Verdict::NotDeleting {
        return;
    }
    let ns = id.name.to_string();
    let t = tally(g, live, &ns, answer);
    if t.deleting == 0 {
        return;
    }
    let Some(f) = d.findings.iter_mut().find(|f| f.code == FindingCode::NotBeingDeleted && f.object == d.object) else {
        return;
    };
    let objects =
        if t.deleting == 1 { "1 object in it is".to_string() } else { format!("{} objects in it are", t.deleting) };
    let mut judged = format!("{} of them stuck", t.stuck);
    if t.unknown > 0 {
        judged.push_str(&format!(", {} that could not be judged", t.unknown));
    }
    let text = format!("{objects} being deleted, {judged}: answer each, grouped by root cause, with why-stuck --all");
    f.message.push_str(&format!("; {objects} being deleted, {judged}"));
    let command = Command::gc(["why-stuck"]).switch("--all").flag("-n", ns);
    f.remedy.push(Step::run(Reach::Inspect, text, command));
}

//! Causes: what refuses the requests a deletion needs, and what that means for the rest of the
//! answer. This is where subsumption is decided, and only here (contract §4.3.4).
//!
//! A refusal (a denial seen, a dead webhook with `failurePolicy: Fail`, a policy that fails to
//! configure or whose CEL denies, a mutation that puts the finalizer back, a dead conversion
//! webhook) explains why a controller that is alive has not acted.
//! Every stall finding (`ControllerStalled`, `GarbageCollectorStalled`,
//! `FinalizerNotProgressing`) asks [`refusal`] first and is not said when a refusal explains
//! it: the refusal is the root cause, and the stall's steps (re-queue the object, restart the
//! controller) cannot help. Then [`check_steps`] holds every printed step against the answer's
//! own refusals: a step whose request is refused says so, and one that can only nudge a
//! controller into a request that is refused anyway is left out.
//!
//! What counts as refused is the same model `plan` uses through `admission::review`: the same
//! index, the same denials, the same backends.

use std::collections::HashMap;

use crate::admission::conversion::{converter_judged_by, crd_of};
use crate::admission::evaluate::{Judged, judge};
use crate::admission::{Index, Operation};
use crate::graph::{Graph, NodeId};

use super::describe;
use super::finding::Finding;
use super::step::{Effect, Step};

/// Why a request on an object is refused, every time it is sent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refusal {
    /// The request refused.
    pub op: Operation,
    /// What refuses it: webhook configurations, policies, the CRD whose conversion fails.
    pub by: Vec<NodeId>,
}

impl Refusal {
    /// `ValidatingWebhookConfiguration x, ValidatingAdmissionPolicy y`, for sentences.
    pub fn named(&self, g: &Graph) -> String {
        self.by.iter().map(|&b| describe(g, b)).collect::<Vec<_>>().join(", ")
    }
}

/// Whether `op` on `x` is refused on every try, and by what. Definite refusals only: a policy
/// that merely may deny, or a backend that cannot be judged, refuses nothing here (their
/// findings are warnings, and say what would settle them).
pub fn refusal(g: &Graph, index: &Index, x: NodeId, op: Operation) -> Option<Refusal> {
    let o = g.object(x)?;
    let mut by: Vec<NodeId> = Vec::new();
    let mut add = |n: NodeId| {
        if !by.contains(&n) {
            by.push(n);
        }
    };
    for d in index.denials(g, x, op) {
        add(d.by);
    }
    // a policy that fails to configure, or whose CEL, evaluated against the request, denies
    for m in index.policies(g, x, op) {
        if m.denies() || (m.may_deny() && m.misconfigured.is_none() && matches!(judge(g, &m, x), Judged::Denies { .. }))
        {
            add(m.policy);
        }
    }
    for i in index.interceptors(g, x, op).iter().filter(|i| i.backend.is_dead()) {
        add(i.configuration);
    }
    // a mutation that puts a finalizer back on the UPDATE removing one
    if op == Operation::Update
        && let Some(r) = index.readded(g, x)
    {
        for m in &r.mutators {
            add(m.by);
        }
    }
    // a dead converter refuses every request at the preferred version: the GC's, the
    // namespace controller's and kubectl's
    if !o.group().is_empty()
        && let Some(c) = crd_of(g, o.group(), &o.kind)
        && converter_judged_by(g, c, index.backends()).is_some_and(|c| c.backend.is_dead())
    {
        add(c);
    }
    (!by.is_empty()).then_some(Refusal { op, by })
}

/// The refusals found for the objects an answer names, asked once per (object, request).
#[derive(Default)]
pub struct Refusals {
    seen: HashMap<(NodeId, Operation), Option<Refusal>>,
}

impl Refusals {
    /// [`refusal`], remembered.
    pub fn of(&mut self, g: &Graph, index: &Index, x: NodeId, op: Operation) -> Option<&Refusal> {
        self.seen.entry((x, op)).or_insert_with(|| refusal(g, index, x, op)).as_ref()
    }
}

/// Holds every step of `findings` against the refusals of the requests they send: a nudge (a
/// change whose only use is to make a controller send its request again) is left out when that
/// request is refused; any other step whose own request is refused says so, and by whom, unless
/// it already does.
pub fn check_steps(g: &Graph, index: &Index, refusals: &mut Refusals, findings: &mut [Finding]) {
    for f in findings.iter_mut() {
        let mut kept: Vec<Step> = Vec::with_capacity(f.remedy.len());
        for mut s in std::mem::take(&mut f.remedy) {
            let Some(sends) = s.command.as_ref().and_then(|c| c.sends()) else {
                kept.push(s);
                continue;
            };
            let Some(r) = refusals.of(g, index, sends.object, sends.op) else {
                kept.push(s);
                continue;
            };
            if sends.effect == Effect::Nudge {
                continue;
            }
            if !says_refused(&s.text) {
                s.append(&format!(
                    " Until {} allows its {} of {}, this is refused like the controller's request.",
                    r.named(g),
                    r.op.as_str(),
                    describe(g, sends.object)
                ));
            }
            kept.push(s);
        }
        f.remedy = kept;
    }
}

/// Whether a step's text already says its request is refused.
fn says_refused(text: &str) -> bool {
    ["refused", "rejected", "denied"].iter().any(|w| text.contains(w))
}

/// What is said of a finalizer whose remover is at work but whose UPDATE is refused, in its
/// evidence: neither a wait nor a stall, so no finding of its own (the refusal's finding is the
/// root cause, and makes the answer stuck).
pub fn refused_evidence(g: &Graph, r: &Refusal) -> String {
    format!("its removal is refused (by {}, above): waiting will not finish it", r.named(g))
}

//! The simulated cluster: API-server storage and the GC graph over the objects the plan
//! reaches, copied lazily from the snapshot graph (never the whole snapshot).
//!
//! Requests follow gc-semantics §2 (DELETE, finalizer removal, patches); every change is fed
//! at once to the graph builder's rules (§4: ownerRef diffs, `processTransitions`, informer
//! delete), which fill the GC queues. `apply` performs a [`Decision`] of the GC worker.

use crate::names::CRD;

use std::collections::{BTreeSet, HashMap, HashSet};

use k8s_openapi::jiff::Timestamp;

use super::queue::Queues;
use super::step::{Action, Cascade, ObjRef, Step};
use crate::admission::Operation;
use crate::admission::review::{self as admission, AdmissionView, Rejection, Request};
use crate::collector::decide::{Decision, GcView, LiveItem, Propagation, Stuck};
use crate::collector::references::LiveOwner;
use crate::discovery::Unresolvable;
use crate::graph::{Graph, NodeId, Presence};
use crate::snapshot::{Object, OwnerRef};

pub use crate::names::{
    CRD_CLEANUP as CRD_FINALIZER, FOREGROUND_DELETION as FOREGROUND, NAMESPACE_FINALIZER as NS_FINALIZER, ORPHAN,
};

pub const APISERVER: &str = "kube-apiserver";
pub const GC: &str = "garbage-collector";

/// The simulated state of one object (or virtual node).
#[derive(Clone, Debug)]
pub struct ObjState {
    /// In storage and in the GC graph (a virtual node: in the graph only).
    pub present: bool,
    pub deletion: Option<Timestamp>,
    pub grace: Option<i64>,
    pub finalizers: Vec<String>,
    pub owners: Vec<OwnerRef>,
    /// Namespaces only: `spec.finalizers`.
    pub spec_finalizers: Vec<String>,
    /// Graph flags (§1.2), one-way.
    pub being_deleted: bool,
    pub deleting_dependents: bool,
    /// Present graph dependents with a reference to this uid / with a blocking one.
    dependents: usize,
    blocking: usize,
    /// Owner references removed by the plan.
    pub lost: Vec<OwnerRef>,
    /// The graph-builder transitions for the state this object had when the plan first saw
    /// it have been replayed (a GC that restarts sees every object as new).
    resumed: bool,
}

/// API server + GC graph + GC queues, and the steps taken so far.
pub struct World<'g> {
    /// The observed snapshot; the plan's changes live in `states`, never in the graph.
    pub g: &'g Graph,
    /// The plan's clock: deletionTimestamps set by the plan take this time.
    pub now: Timestamp,
    states: HashMap<NodeId, ObjState>,
    removed_kinds: HashSet<(String, String)>,
    /// The GC's `attemptToDelete` and `attemptToOrphan` queues.
    pub queues: Queues,
    /// The steps emitted so far, in `seq` order.
    pub steps: Vec<Step>,
    /// Wave of the steps being emitted.
    pub wave: u32,
    /// The highest wave a step was emitted in.
    pub max_wave: u32,
    /// Objects a request or the GC worker acted on, or looked at as an item.
    pub touched: BTreeSet<NodeId>,
    /// Touched objects still stored with a deletionTimestamp (the other controllers' work list).
    pub deleting: BTreeSet<NodeId>,
    /// Objects gone from storage, in the order they left.
    pub removed: Vec<NodeId>,
    /// Items the GC cannot act on, and why.
    pub gc_stuck: HashMap<NodeId, Stuck>,
    /// Requests the API server refused (admission webhooks, conversion), per object.
    pub rejected: HashMap<NodeId, Vec<Rejection>>,
    /// The webhooks by what they intercept, when some request may be refused at all
    /// ([`admission::applies`]).
    admission: Option<crate::admission::Index>,
    visited: HashSet<NodeId>,
    notes: Vec<String>,
    noted: HashSet<String>,
    /// Follow absent (virtual) owners to all their dependents, as a restarted GC does. Off
    /// for a plan: that garbage would be collected anyway and is unrelated to the target.
    pub collect_unrelated: bool,
}

impl<'g> World<'g> {
    /// A world where nothing has happened yet: every object as the snapshot shows it, at `now`.
    pub fn new(g: &'g Graph, now: Timestamp) -> World<'g> {
        World {
            g,
            now,
            states: HashMap::new(),
            removed_kinds: HashSet::new(),
            queues: Queues::default(),
            steps: Vec::new(),
            wave: 1,
            max_wave: 1,
            touched: BTreeSet::new(),
            deleting: BTreeSet::new(),
            removed: Vec::new(),
            gc_stuck: HashMap::new(),
            rejected: HashMap::new(),
            admission: admission::applies(g).then(|| crate::admission::Index::new(g)),
            visited: HashSet::new(),
            notes: Vec::new(),
            noted: HashSet::new(),
            collect_unrelated: false,
        }
    }

    /// The steps and the notes, once the plan is done.
    pub fn into_parts(self) -> (Vec<Step>, Vec<String>) {
        (self.steps, self.notes)
    }

    /// Adds a note for the plan's `notes`, once (the same text twice is kept once).
    pub fn note(&mut self, s: String) {
        if self.noted.insert(s.clone()) {
            self.notes.push(s);
        }
    }

    /// The notes so far, in the order first added.
    pub fn notes(&self) -> &[String] {
        &self.notes
    }

    // ----- reading -----------------------------------------------------------------------

    fn observed(&self, n: NodeId) -> Option<&'g Object> {
        self.g.object(n)
    }

    /// The state of `n` if the plan has copied it.
    pub fn state(&self, n: NodeId) -> Option<&ObjState> {
        self.states.get(&n)
    }

    /// In storage (observed and not removed).
    pub fn stored(&self, n: NodeId) -> bool {
        match self.states.get(&n) {
            Some(s) => s.present && self.observed(n).is_some(),
            None => self.observed(n).is_some(),
        }
    }

    fn present(&self, n: NodeId) -> bool {
        self.states.get(&n).map(|s| s.present).unwrap_or(true)
    }

    /// `metadata.ownerReferences` of `n` as the plan left them.
    pub fn owners_of(&self, n: NodeId) -> &[OwnerRef] {
        match self.states.get(&n) {
            Some(s) => &s.owners,
            None => self.g.owners(n),
        }
    }

    /// `metadata.finalizers` of `n` as the plan left them.
    pub fn finalizers_of(&self, n: NodeId) -> &[String] {
        match self.states.get(&n) {
            Some(s) => &s.finalizers,
            None => self.observed(n).map(|o| o.finalizers.as_slice()).unwrap_or(&[]),
        }
    }

    /// `metadata.deletionTimestamp` of `n` as the plan left it.
    pub fn deletion_of(&self, n: NodeId) -> Option<Timestamp> {
        match self.states.get(&n) {
            Some(s) => s.deletion,
            None => self.observed(n).and_then(|o| o.deletion_timestamp),
        }
    }

    /// `metadata.deletionGracePeriodSeconds` of `n` (seconds) as the plan left it.
    pub fn grace_of(&self, n: NodeId) -> Option<i64> {
        match self.states.get(&n) {
            Some(s) => s.grace,
            None => self.observed(n).and_then(|o| o.deletion_grace_period_seconds),
        }
    }

    /// (group, kind) of `n`; the group is empty for the core group.
    pub fn kind_of(&self, n: NodeId) -> (&'g str, &'g str) {
        let i = self.g.identity(n);
        (i.group(), i.kind)
    }

    /// Contribution of `d` to the counts of the owner with `uid`: (dependent, blocking).
    fn contribution(present: bool, owners: &[OwnerRef], uid: &crate::snapshot::Uid) -> (bool, bool) {
        if !present {
            return (false, false);
        }
        let mut dep = false;
        let mut block = false;
        for r in owners.iter().filter(|r| &r.uid == uid) {
            dep = true;
            block |= r.blocks();
        }
        (dep, block)
    }

    /// Current graph dependents of `n`.
    pub fn dependents_of(&self, n: NodeId) -> Vec<NodeId> {
        self.dependents_where(n, |(dependent, _)| dependent)
    }

    /// The current graph dependents of `n` whose reference to it has `blockOwnerDeletion: true`
    /// (what foreground deletion waits for).
    pub fn blocking_dependents_of(&self, n: NodeId) -> Vec<NodeId> {
        if self.states.get(&n).is_some_and(|s| s.blocking == 0) {
            return Vec::new();
        }
        self.dependents_where(n, |(_, blocking)| blocking)
    }

    /// The graph dependents of `n` whose (is a dependent, blocks) contribution passes `keep`.
    fn dependents_where(&self, n: NodeId, keep: impl Fn((bool, bool)) -> bool) -> Vec<NodeId> {
        let uid = &self.g.identity(n).uid;
        self.g
            .node(n)
            .dependents
            .iter()
            .copied()
            .filter(|&d| keep(Self::contribution(self.present(d), self.owners_of(d), uid)))
            .collect()
    }

    fn flags(&self, n: NodeId) -> (bool, bool) {
        match self.states.get(&n) {
            Some(s) => (s.being_deleted, s.deleting_dependents),
            None => match self.observed(n) {
                Some(o) => (o.is_deleting(), o.is_deleting() && o.has_finalizer(FOREGROUND)),
                None => (false, false),
            },
        }
    }

    // ----- copying -----------------------------------------------------------------------

    fn materialize(&self, n: NodeId) -> ObjState {
        let uid = &self.g.identity(n).uid;
        let (mut dependents, mut blocking) = (0, 0);
        for &d in &self.g.node(n).dependents {
            let (dep, block) = Self::contribution(self.present(d), self.owners_of(d), uid);
            dependents += dep as usize;
            blocking += block as usize;
        }
        match self.observed(n) {
            Some(o) => ObjState {
                present: true,
                deletion: o.deletion_timestamp,
                grace: o.deletion_grace_period_seconds,
                finalizers: o.finalizers.clone(),
                owners: o.owner_references.clone(),
                spec_finalizers: if o.kind == "Namespace" && o.group().is_empty() {
                    match o.field("/spec/finalizers").and_then(|v| v.as_array()) {
                        Some(a) => a.iter().filter_map(|v| v.as_str().map(str::to_string)).collect(),
                        // the namespace strategy always sets it; a metadata-only copy lacks it
                        None if o.field("/spec").is_none() => vec![NS_FINALIZER.to_string()],
                        None => Vec::new(),
                    }
                } else {
                    Vec::new()
                },
                being_deleted: o.is_deleting(),
                deleting_dependents: o.is_deleting() && o.has_finalizer(FOREGROUND),
                dependents,
                blocking,
                lost: Vec::new(),
                resumed: false,
            },
            None => ObjState {
                present: true,
                deletion: None,
                grace: None,
                finalizers: Vec::new(),
                owners: Vec::new(),
                spec_finalizers: Vec::new(),
                being_deleted: false,
                deleting_dependents: false,
                dependents,
                blocking,
                lost: Vec::new(),
                resumed: true,
            },
        }
    }

    /// The mutable state of `n`, copied from the snapshot on first use.
    pub fn st(&mut self, n: NodeId) -> &mut ObjState {
        if !self.states.contains_key(&n) {
            let s = self.materialize(n);
            self.states.insert(n, s);
        }
        self.states.get_mut(&n).expect("inserted just above")
    }

    /// Marks `n` as part of the plan.
    pub fn touch(&mut self, n: NodeId) {
        if self.touched.insert(n) && self.stored(n) && self.deletion_of(n).is_some() {
            self.deleting.insert(n);
        }
        self.st(n);
    }

    // ----- steps -------------------------------------------------------------------------

    /// Appends a step by `actor` on `n`, in the current wave.
    pub fn emit(&mut self, actor: &str, action: Action, n: NodeId) {
        let seq = self.steps.len() as u32 + 1;
        self.max_wave = self.max_wave.max(self.wave);
        self.steps.push(Step { seq, wave: self.wave, actor: actor.to_string(), action, object: n });
    }

    fn enqueue_delete(&mut self, n: NodeId) {
        let w = self.wave + 1;
        self.queues.attempt_to_delete.add(n, w);
    }

    fn enqueue_orphan(&mut self, n: NodeId) {
        let w = self.wave + 1;
        self.queues.attempt_to_orphan.add(n, w);
    }

    // ----- graph builder (§4) ------------------------------------------------------------

    fn adjust_owner_counts(&mut self, uid: &crate::snapshot::Uid, old: (bool, bool), new: (bool, bool)) {
        if old == new {
            return;
        }
        let Some(o) = self.g.by_uid(uid) else { return };
        if let Some(s) = self.states.get_mut(&o) {
            s.dependents = s.dependents + new.0 as usize - old.0 as usize;
            s.blocking = s.blocking + new.1 as usize - old.1 as usize;
        }
    }

    /// §4.3 + §4.5 for an update of `n` from (old owners, old deletion, old finalizers).
    fn on_update(&mut self, n: NodeId, old_owners: &[OwnerRef], old_deletion: Option<Timestamp>, old_fins: &[String]) {
        let new_owners = self.owners_of(n).to_vec();
        if old_owners != new_owners.as_slice() {
            let mut uids: Vec<&crate::snapshot::Uid> =
                old_owners.iter().chain(new_owners.iter()).map(|r| &r.uid).collect();
            uids.sort();
            uids.dedup();
            for uid in uids {
                let old = Self::contribution(true, old_owners, uid);
                let new = Self::contribution(true, &new_owners, uid);
                self.adjust_owner_counts(uid, old, new);
                // addUnblockedOwnersToDeleteQueue: a blocking ref removed or turned off
                if old.1
                    && !new.1
                    && let Some(o) = self.g.by_uid(uid)
                {
                    let virtual_owner = self.g.node(o).presence == Presence::Virtual;
                    if self.present(o) && (self.collect_unrelated || !virtual_owner) {
                        self.enqueue_delete(o);
                    }
                }
            }
        }
        let (deletion, fins) = (self.deletion_of(n), self.finalizers_of(n).to_vec());
        if deletion.is_some() {
            self.st(n).being_deleted = true;
        }
        let starts = |f: &str| {
            deletion.is_some()
                && fins.iter().any(|x| x == f)
                && (old_deletion.is_none() || !old_fins.iter().any(|x| x == f))
        };
        if starts(ORPHAN) {
            self.st(n).resumed = true;
            self.enqueue_orphan(n);
        } else if starts(FOREGROUND) {
            self.start_foreground(n);
        }
    }

    fn start_foreground(&mut self, n: NodeId) {
        let s = self.st(n);
        s.deleting_dependents = true;
        s.resumed = true;
        for d in self.dependents_of(n) {
            self.enqueue_delete(d);
        }
        self.enqueue_delete(n);
    }

    /// Replays §4.2/§4.5 for an object as first observed (old object nil): what a GC that
    /// has been watching it has already done.
    pub fn resume(&mut self, n: NodeId) {
        let s = self.st(n);
        if s.resumed || !s.present {
            return;
        }
        s.resumed = true;
        let (deletion, fins) = (s.deletion, s.finalizers.clone());
        if deletion.is_none() {
            return;
        }
        if fins.iter().any(|f| f == ORPHAN) {
            self.enqueue_orphan(n);
        } else if fins.iter().any(|f| f == FOREGROUND) {
            self.start_foreground(n);
        }
    }

    /// §4.6: the informer delete event.
    fn on_remove(&mut self, n: NodeId) {
        let deps = self.dependents_of(n);
        let owners = self.owners_of(n).to_vec();
        self.st(n).present = false;
        let mut seen = HashSet::new();
        for r in &owners {
            if !seen.insert(&r.uid) {
                continue;
            }
            let c = Self::contribution(true, &owners, &r.uid);
            self.adjust_owner_counts(&r.uid, c, (false, false));
            if let Some(o) = self.g.by_uid(&r.uid)
                && self.present(o)
                && self.flags(o).1
            {
                self.enqueue_delete(o);
            }
        }
        for d in deps {
            self.enqueue_delete(d);
        }
    }

    /// The object leaves storage.
    fn remove(&mut self, n: NodeId) {
        self.emit(APISERVER, Action::Remove, n);
        self.on_remove(n);
        self.deleting.remove(&n);
        self.removed.push(n);
        let (group, kind) = self.kind_of(n);
        if (group, kind) == CRD
            && let Some(o) = self.observed(n)
            && let (Some(g), Some(k)) = (o.str_field("/spec/group"), o.str_field("/spec/names/kind"))
        {
            self.removed_kinds.insert((g.to_string(), k.to_string()));
        }
    }

    // ----- API server (§2) ---------------------------------------------------------------

    /// A DELETE of `n` sent by `actor` (§2.4, §2.5, §2.8, §5.1); false when admission
    /// rejects it (the rejection is recorded, the object is untouched).
    pub fn delete(&mut self, n: NodeId, actor: &str, propagation: Option<Cascade>, grace: Option<i64>) -> bool {
        self.touch(n);
        if self.stored(n) && !self.admit(n, Operation::Delete, actor, "DELETE".into(), None) {
            return false;
        }
        self.delete_admitted(n, actor, propagation, grace);
        true
    }

    /// A DELETE that does not pass admission: the CRD finalizer controller deletes instances
    /// through storage (`crd_finalizer.go`).
    pub fn delete_admitted(&mut self, n: NodeId, actor: &str, propagation: Option<Cascade>, grace: Option<i64>) {
        self.touch(n);
        self.emit(actor, Action::Delete { propagation, grace }, n);
        if !self.stored(n) {
            return; // 404
        }
        let obj = self.observed(n).expect("stored objects are observed");
        let (group, kind) = (obj.group(), obj.kind.as_str());
        let s = self.st(n);
        let (old_owners, old_deletion, old_fins, old_grace) =
            (s.owners.clone(), s.deletion, s.finalizers.clone(), s.grace);
        let now = self.now;

        if group.is_empty() && kind == "Namespace" {
            if old_deletion.is_none() {
                let s = self.st(n);
                s.deletion = Some(now);
                if let Some(p) = propagation {
                    set_presence(&mut s.finalizers, ORPHAN, p == Cascade::Orphan);
                    set_presence(&mut s.finalizers, FOREGROUND, p == Cascade::Foreground);
                }
                self.mark(n, old_owners, old_deletion, old_fins);
                return;
            }
            if !self.st(n).spec_finalizers.is_empty() {
                return; // a no-op while the namespace controller has not finalized it
            }
        }
        if (group, kind) == CRD && old_deletion.is_none() {
            let s = self.st(n);
            s.deletion = Some(now);
            s.grace = Some(0);
            set_presence(&mut s.finalizers, CRD_FINALIZER, true);
            self.mark(n, old_owners, old_deletion, old_fins);
            return;
        }

        // BeforeDelete (§2.4 step 2): only pods delete gracefully.
        let mut graceful: Option<(Timestamp, i64)> = None;
        if group.is_empty() && kind == "Pod" {
            match old_deletion {
                None => {
                    let scheduled = obj.str_field("/spec/nodeName").is_some_and(|s| !s.is_empty());
                    let terminal = matches!(obj.str_field("/status/phase"), Some("Succeeded" | "Failed"));
                    let mut g = grace
                        .or_else(|| obj.field("/spec/terminationGracePeriodSeconds").and_then(|v| v.as_i64()))
                        .unwrap_or(30);
                    if g < 0 {
                        g = 1;
                    }
                    if !scheduled || terminal {
                        g = 0;
                    }
                    graceful = Some((ts_add(now, g), g));
                }
                Some(_) => match old_grace {
                    None | Some(0) => {}
                    Some(cur) => match grace {
                        Some(g) if g < cur => graceful = Some((now.max(ts_add(now, g.max(0))), g.max(0))),
                        _ => return, // pendingGraceful: nothing changes
                    },
                },
            }
        }

        // §2.2
        let default_orphan =
            (group.is_empty() && kind == "ReplicationController") || (group == "batch" && kind == "Job");
        let first_gc = old_fins.iter().find(|f| *f == ORPHAN || *f == FOREGROUND).map(String::as_str);
        let (want_orphan, want_fg) = match propagation {
            Some(p) => (p == Cascade::Orphan, p == Cascade::Foreground),
            None => match first_gc {
                Some(ORPHAN) => (true, false),
                Some(_) => (false, true),
                None => (default_orphan, false),
            },
        };
        let mut new_fins: Vec<String> = old_fins.iter().filter(|f| *f != ORPHAN && *f != FOREGROUND).cloned().collect();
        if want_orphan {
            new_fins.push(ORPHAN.into());
        }
        if want_fg {
            new_fins.push(FOREGROUND.into());
        }
        let changed = as_set(&old_fins) != as_set(&new_fins);
        if graceful.is_none() && old_fins.is_empty() && !changed {
            self.remove(n);
            return;
        }
        let pending = !new_fins.is_empty();
        let s = self.st(n);
        s.finalizers = new_fins;
        match graceful {
            None if pending => {
                s.deletion = Some(match old_deletion {
                    Some(d) if d < now => d,
                    _ => now,
                });
                s.grace = Some(0);
                self.mark(n, old_owners, old_deletion, old_fins);
            }
            None => self.remove(n),
            Some((at, g)) => {
                s.deletion = Some(match old_deletion {
                    Some(d) if d < at => d,
                    _ => at,
                });
                s.grace = Some(g);
                if pending || g > 0 {
                    self.mark(n, old_owners, old_deletion, old_fins);
                } else {
                    self.remove(n);
                }
            }
        }
    }

    /// Persists a deleting object: a MarkDeleting step when something visible changed.
    fn mark(&mut self, n: NodeId, old_owners: Vec<OwnerRef>, old_deletion: Option<Timestamp>, old_fins: Vec<String>) {
        let s = self.st(n);
        let (fins, grace, deletion) = (s.finalizers.clone(), s.grace, s.deletion);
        if old_deletion.is_none() || old_fins != fins || (old_deletion != deletion) {
            let g = grace.filter(|&g| g > 0);
            self.emit(APISERVER, Action::MarkDeleting { finalizers: fins, grace: g }, n);
        }
        if deletion.is_some() {
            self.deleting.insert(n);
        }
        self.on_update(n, &old_owners, old_deletion, &old_fins);
    }

    /// An UPDATE that removes one finalizer (§2.6, §3.5.3); NotFound or already gone is fine.
    /// False when admission rejects it.
    pub fn remove_finalizer(&mut self, n: NodeId, finalizer: &str, actor: &str) -> bool {
        self.touch(n);
        if !self.stored(n) || !self.finalizers_of(n).iter().any(|f| f == finalizer) {
            return true;
        }
        let what = format!("UPDATE removing finalizer {finalizer}");
        if !self.admit(n, Operation::Update, actor, what, Some(finalizer)) {
            return false;
        }
        self.emit(actor, Action::RemoveFinalizer { finalizer: finalizer.to_string() }, n);
        let s = self.st(n);
        let (old_owners, old_deletion, old_fins) = (s.owners.clone(), s.deletion, s.finalizers.clone());
        s.finalizers.retain(|f| f != finalizer);
        self.after_finalizer_change(n, old_owners, old_deletion, old_fins);
        true
    }

    /// The UPDATEs of several controllers, each removing its finalizer of `n`, in order: the
    /// same steps and end state as [`World::remove_finalizer`] one after the other (removing a
    /// finalizer other than orphan/foreground starts nothing of the GC's, so the updates in
    /// between change nothing else), with the object's finalizers rewritten once rather than
    /// once per removal (an object with thousands of finalizers stays linear). The results
    /// or-ed; false for none.
    pub fn remove_finalizers(&mut self, n: NodeId, batch: Vec<(String, String)>) -> bool {
        if batch.len() <= 1 {
            return batch.into_iter().any(|(f, actor)| self.remove_finalizer(n, &f, &actor));
        }
        self.touch(n);
        if !self.stored(n) {
            return true;
        }
        let present: HashSet<String> = self.finalizers_of(n).iter().cloned().collect();
        let mut removed: HashSet<String> = HashSet::new();
        let mut any = false;
        for (f, actor) in batch {
            if !present.contains(&f) || removed.contains(&f) {
                any = true; // already gone is fine, as for one
                continue;
            }
            let what = format!("UPDATE removing finalizer {f}");
            if !self.admit(n, Operation::Update, &actor, what, Some(&f)) {
                continue;
            }
            self.emit(&actor, Action::RemoveFinalizer { finalizer: f.clone() }, n);
            removed.insert(f);
            any = true;
        }
        if removed.is_empty() {
            return any;
        }
        let s = self.st(n);
        let old_fins = std::mem::take(&mut s.finalizers);
        s.finalizers = old_fins.iter().filter(|f| !removed.contains(*f)).cloned().collect();
        let (old_owners, old_deletion) = (s.owners.clone(), s.deletion);
        self.after_finalizer_change(n, old_owners, old_deletion, old_fins);
        any
    }

    /// Passes `op` on `n` through admission; a rejection is recorded (once) and false returned.
    fn admit(&mut self, n: NodeId, op: Operation, actor: &str, what: String, finalizer: Option<&str>) -> bool {
        let Some(index) = &self.admission else { return true };
        let (rejection, notes) =
            admission::review(self, index, n, &Request { op, actor, what, finalizer, preferred_version: actor == GC });
        for note in notes {
            self.note(note);
        }
        let Some(r) = rejection else { return true };
        let list = self.rejected.entry(n).or_default();
        if !list.contains(&r) {
            list.push(r);
        }
        false
    }

    /// The recorded rejections of `n` that still hold: a finalizer's removal only while the
    /// finalizer is there.
    pub fn rejections(&self, n: NodeId) -> Vec<&Rejection> {
        let fins = self.finalizers_of(n);
        self.rejected
            .get(&n)
            .into_iter()
            .flatten()
            .filter(|r| r.finalizer.as_ref().is_none_or(|f| fins.contains(f)))
            .collect()
    }

    /// The namespace controller's `/finalize`: `kubernetes` leaves `spec.finalizers`.
    pub fn finalize_namespace(&mut self, n: NodeId, actor: &str) {
        let s = self.st(n);
        if !s.spec_finalizers.iter().any(|f| f == NS_FINALIZER) {
            return;
        }
        s.spec_finalizers.retain(|f| f != NS_FINALIZER);
        let (old_owners, old_deletion, old_fins) = (s.owners.clone(), s.deletion, s.finalizers.clone());
        self.emit(actor, Action::RemoveFinalizer { finalizer: NS_FINALIZER.into() }, n);
        self.after_finalizer_change(n, old_owners, old_deletion, old_fins);
    }

    fn after_finalizer_change(
        &mut self,
        n: NodeId,
        old_owners: Vec<OwnerRef>,
        old_deletion: Option<Timestamp>,
        old_fins: Vec<String>,
    ) {
        let s = self.st(n);
        let done = s.finalizers.is_empty()
            && s.spec_finalizers.is_empty()
            && s.deletion.is_some()
            && matches!(s.grace, None | Some(0));
        if done {
            self.remove(n);
        } else {
            self.on_update(n, &old_owners, old_deletion, &old_fins);
        }
    }

    /// The GC's strategic-merge patch removing every reference with one of `uids` (§3.5.1);
    /// false when admission rejects it.
    pub fn remove_owner_refs(&mut self, n: NodeId, uids: &[crate::snapshot::Uid], actor: &str) -> bool {
        self.touch(n);
        if !self.stored(n) {
            return true;
        }
        let old = self.owners_of(n).to_vec();
        let (gone, kept): (Vec<OwnerRef>, Vec<OwnerRef>) = old.iter().cloned().partition(|r| uids.contains(&r.uid));
        if gone.is_empty() {
            return true;
        }
        if !self.admit(n, Operation::Update, actor, "UPDATE removing owner references".into(), None) {
            return false;
        }
        let ns = self.g.identity(n).namespace;
        let owners = gone.iter().map(|r| ObjRef::of_owner(self.g, r, ns)).collect();
        self.emit(actor, Action::RemoveOwnerReferences { owners }, n);
        let s = self.st(n);
        s.owners = kept;
        s.lost.extend(gone);
        let (d, f) = (s.deletion, s.finalizers.clone());
        self.on_update(n, &old, d, &f);
        true
    }

    /// The GC's unblock patch (§3.5.2): `blockOwnerDeletion: false` on every blocking ref;
    /// false when admission rejects it.
    pub fn unblock(&mut self, n: NodeId) -> bool {
        let old = self.owners_of(n).to_vec();
        if !old.iter().any(OwnerRef::blocks) {
            return true;
        }
        if !self.admit(n, Operation::Update, GC, "UPDATE unblocking owner references".into(), None) {
            return false;
        }
        let ns = self.g.identity(n).namespace;
        let owners = old.iter().filter(|r| r.blocks()).map(|r| ObjRef::of_owner(self.g, r, ns)).collect();
        self.emit(GC, Action::UnblockOwnerReferences { owners }, n);
        let s = self.st(n);
        for r in &mut s.owners {
            if r.blocks() {
                r.block_owner_deletion = Some(false);
            }
        }
        let (d, f) = (s.deletion, s.finalizers.clone());
        self.on_update(n, &old, d, &f);
        true
    }

    // ----- the GC worker (§3) ------------------------------------------------------------

    /// One `attemptToDelete` item: decide, then apply.
    pub fn attempt_to_delete(&mut self, n: NodeId) {
        if self.observed(n).is_some() {
            self.touch(n);
        } else {
            self.st(n);
        }
        if self.visited.insert(n) {
            self.resume(n);
        }
        if !self.present(n) && self.g.node(n).presence == Presence::Virtual {
            return; // a stale virtual pointer (§3.1)
        }
        let d = crate::collector::decide::attempt_to_delete_item(&*self, n);
        self.apply(n, d);
    }

    /// Performs a decision of the GC worker.
    pub fn apply(&mut self, n: NodeId, d: Decision) {
        match d {
            Decision::AwaitFinalDelete | Decision::NotGarbage => {}
            Decision::Gone => {
                if self.g.node(n).presence == Presence::Virtual && self.present(n) {
                    // virtual delete event (§4.7): the absent owner leaves the graph
                    if self.collect_unrelated {
                        self.on_remove(n);
                    } else {
                        self.st(n).present = false;
                    }
                }
            }
            Decision::Stuck(why) => {
                self.gc_stuck.insert(n, why);
            }
            Decision::RemoveOwnerReferences { uids } => {
                self.remove_owner_refs(n, &uids, GC);
            }
            Decision::Delete { propagation, unblock } => {
                if unblock {
                    // a rejected patch is an error: the GC requeues the item and deletes nothing
                    if !self.unblock(n) {
                        return;
                    }
                    let r = ObjRef::of_node(self.g, n).display();
                    self.note(format!(
                        "{r}: the GC's cycle check (a dependent already deleting its dependents) unblocks its owner references before deleting it in Foreground; the real check is racy and can also fire outside a cycle (the garbage collector's processDeletingDependentsItem)"
                    ));
                }
                let p = match propagation {
                    Propagation::Orphan => Cascade::Orphan,
                    Propagation::Background => Cascade::Background,
                    Propagation::Foreground => Cascade::Foreground,
                };
                self.delete(n, GC, Some(p), None);
            }
            Decision::RemoveForegroundFinalizer => {
                self.remove_finalizer(n, FOREGROUND, GC);
            }
            Decision::AwaitBlockingDependents { enqueue, .. } => {
                for d in enqueue {
                    if !self.visited.contains(&d) {
                        self.enqueue_delete(d);
                    }
                }
            }
        }
    }

    /// One `attemptToOrphan` item (§3.7).
    pub fn attempt_to_orphan(&mut self, n: NodeId) {
        self.touch(n);
        let d = crate::collector::decide::attempt_to_orphan(&*self, n);
        let uid = self.g.identity(n).uid.clone();
        let mut orphaned = true;
        for dep in d.dependents {
            orphaned &= self.remove_owner_refs(dep, std::slice::from_ref(&uid), GC);
        }
        // a failed patch fails the item: the GC requeues it and keeps the finalizer (§3.7)
        if orphaned {
            self.remove_finalizer(n, ORPHAN, GC);
        }
    }
}

impl AdmissionView for World<'_> {
    fn graph(&self) -> &Graph {
        self.g
    }

    fn stored(&self, n: NodeId) -> bool {
        World::stored(self, n)
    }

    fn deleting(&self, n: NodeId) -> bool {
        self.deletion_of(n).is_some()
    }

    fn owners_of(&self, n: NodeId) -> &[OwnerRef] {
        World::owners_of(self, n)
    }
}

impl GcView for World<'_> {
    fn graph(&self) -> &Graph {
        self.g
    }

    fn mapping(&self, api_version: &str, kind: &str) -> Result<bool, Unresolvable> {
        let t = self.g.mapper().rest_mapping(api_version, kind)?;
        if self.removed_kinds.contains(&(t.group.clone(), t.kind.clone())) {
            return Err(Unresolvable::UnknownKind);
        }
        Ok(t.namespaced)
    }

    fn item(&self, n: NodeId) -> Option<LiveItem<'_>> {
        if !self.stored(n) {
            return None;
        }
        Some(LiveItem {
            namespace: self.g.identity(n).namespace,
            owners: self.owners_of(n),
            finalizers: self.finalizers_of(n),
        })
    }

    fn get(&self, group: &str, kind: &str, namespace: Option<&str>, name: &str) -> Option<LiveOwner<'_>> {
        let id = self.g.find(group, kind, namespace, name)?;
        if !self.stored(id) {
            return None;
        }
        Some(LiveOwner {
            uid: self.g.identity(id).uid,
            deleting_with_foreground: self.deletion_of(id).is_some()
                && self.finalizers_of(id).iter().any(|f| f == FOREGROUND),
        })
    }

    fn in_graph(&self, n: NodeId) -> bool {
        self.present(n)
    }

    fn is_virtual(&self, n: NodeId) -> bool {
        self.g.node(n).presence == Presence::Virtual
    }

    fn being_deleted(&self, n: NodeId) -> bool {
        self.flags(n).0
    }

    fn deleting_dependents(&self, n: NodeId) -> bool {
        self.flags(n).1
    }

    fn has_dependents(&self, n: NodeId) -> bool {
        match self.states.get(&n) {
            Some(s) => s.dependents > 0,
            None => !self.dependents_of(n).is_empty(),
        }
    }

    fn any_dependent_deleting_dependents(&self, n: NodeId) -> bool {
        self.dependents_of(n).into_iter().any(|d| self.flags(d).1)
    }

    fn blocking_dependents(&self, n: NodeId) -> Vec<NodeId> {
        self.blocking_dependents_of(n)
    }

    fn dependents(&self, n: NodeId) -> Vec<NodeId> {
        self.dependents_of(n)
    }
}

fn set_presence(list: &mut Vec<String>, f: &str, present: bool) {
    let has = list.iter().any(|x| x == f);
    if present && !has {
        list.push(f.to_string());
    } else if !present && has {
        list.retain(|x| x != f);
    }
}

fn as_set(v: &[String]) -> BTreeSet<&str> {
    v.iter().map(String::as_str).collect()
}

pub fn ts_add(t: Timestamp, seconds: i64) -> Timestamp {
    Timestamp::from_second(t.as_second().saturating_add(seconds)).unwrap_or(t)
}

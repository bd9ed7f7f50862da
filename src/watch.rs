//! What changed between two answers of `--watch` (contract §4.5): the objects an answer rests
//! on gone (each said once, as `Deleted`) or recreated under the same name, finalizers
//! removed, added or re-added, deletions started, a finalizer's controller down or back, other
//! findings new or resolved, and the verdict. Pure: an [`Observed`] is taken of each answer,
//! and [`Changes::between`] compares two.

pub mod lag;

use std::collections::{BTreeMap, BTreeSet};

use crate::diagnose::{self, Diagnosis, FindingCode, Severity, describe};
use crate::graph::{Graph, NodeId};

/// Where a watched deletion stands: the single answer's verdict ([`diagnose::Verdict`], the
/// same type and rule, so a watch says Unknown exactly when `why-stuck` alone would), or gone.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Verdict {
    /// The object (every object, with `--all`) is gone, or another one has its name now.
    Gone,
    /// Still there: what a single answer says of it.
    Answer(diagnose::Verdict),
}

impl Verdict {
    /// Something will not finish without someone acting.
    pub const STUCK: Verdict = Verdict::Answer(diagnose::Verdict::Stuck);
    /// Nothing was found stuck, but something the verdict rests on could not be read or judged.
    pub const UNKNOWN: Verdict = Verdict::Answer(diagnose::Verdict::Unknown);
    /// Under way, as far as can be seen.
    pub const IN_PROGRESS: Verdict = Verdict::Answer(diagnose::Verdict::InProgress);
    /// Nothing is being deleted (yet).
    pub const NOT_DELETING: Verdict = Verdict::Answer(diagnose::Verdict::NotDeleting);

    /// The name printed and in JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Gone => "Gone",
            Verdict::Answer(v) => v.as_str(),
        }
    }

    /// The verdict of one why-stuck answer: [`Diagnosis::verdict`].
    pub fn of(d: &Diagnosis) -> Verdict {
        Verdict::Answer(d.verdict())
    }
}

impl From<diagnose::Verdict> for Verdict {
    fn from(v: diagnose::Verdict) -> Verdict {
        Verdict::Answer(v)
    }
}

/// One object as an answer saw it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Seen {
    /// `Kind namespace/name`.
    pub name: String,
    /// Its finalizers, in order.
    pub finalizers: Vec<String>,
    /// Whether it has a deletionTimestamp.
    pub deleting: bool,
}

/// What an answer rests on, as far as changes are told: its objects by uid, its findings
/// (code and object), and its verdict.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Observed {
    /// By uid.
    pub objects: BTreeMap<String, Seen>,
    /// (code, `Kind namespace/name` of the finding's object).
    pub findings: BTreeSet<(FindingCode, String)>,
    /// Those of [`Observed::findings`] that hold the deletion (severity `Error`: someone has
    /// to act).
    pub holding: BTreeSet<(FindingCode, String)>,
    /// The uid of every object the answer's input held, in the answer or not: an object new to
    /// the answer that was there all along did not appear.
    pub known: BTreeSet<String>,
    /// The verdict.
    pub verdict: Verdict,
}

impl Observed {
    /// Observes `nodes` of `g` (those observed; virtual owners have no state to change) and
    /// the findings of `answers`, under `verdict`.
    pub fn new<'a>(
        g: &Graph,
        nodes: impl IntoIterator<Item = NodeId>,
        answers: impl IntoIterator<Item = &'a Diagnosis>,
        verdict: Verdict,
    ) -> Observed {
        let mut objects = BTreeMap::new();
        for x in nodes {
            if let Some(o) = g.object(x) {
                let seen = Seen { name: describe(g, x), finalizers: o.finalizers.clone(), deleting: o.is_deleting() };
                objects.insert(o.uid.0.clone(), seen);
            }
        }
        let mut findings = BTreeSet::new();
        let mut holding = BTreeSet::new();
        for f in answers.into_iter().flat_map(|d| d.findings.iter()) {
            if f.code == FindingCode::NotBeingDeleted {
                continue;
            }
            let key = (f.code, describe(g, f.object));
            if f.severity == Severity::Error {
                holding.insert(key.clone());
            }
            findings.insert(key);
        }
        let known = g.observed().map(|(_, o)| o.uid.0.clone()).collect();
        Observed { objects, findings, holding, known, verdict }
    }

    /// Nothing at all: what a watch compares its first answer with.
    pub fn nothing() -> Observed {
        Observed {
            objects: BTreeMap::new(),
            findings: BTreeSet::new(),
            holding: BTreeSet::new(),
            known: BTreeSet::new(),
            verdict: Verdict::NOT_DELETING,
        }
    }
}

/// What kind of change.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum ChangeKind {
    /// An object is gone.
    Deleted,
    /// Another object (another uid) has the name of one that was there.
    Recreated,
    /// An object appeared (a new dependent).
    Appeared,
    /// An object's deletion was requested.
    DeletionStarted,
    /// A finalizer was removed.
    FinalizerRemoved,
    /// A finalizer was added.
    FinalizerAdded,
    /// A finalizer removed earlier was added again (by its controller, typically).
    FinalizerReAdded,
    /// A finalizer's controller was found down or missing.
    ControllerDown,
    /// A finalizer's controller that was down or missing is no longer.
    ControllerBack,
    /// A finding appeared.
    FindingNew,
    /// A finding went away.
    FindingResolved,
    /// A finding on an object became another (FinalizerPending past its grace, say).
    FindingChanged,
    /// The verdict changed.
    Verdict,
}

impl ChangeKind {
    /// The name in JSON and text.
    pub fn as_str(self) -> &'static str {
        match self {
            ChangeKind::Deleted => "Deleted",
            ChangeKind::Recreated => "Recreated",
            ChangeKind::Appeared => "Appeared",
            ChangeKind::DeletionStarted => "DeletionStarted",
            ChangeKind::FinalizerRemoved => "FinalizerRemoved",
            ChangeKind::FinalizerAdded => "FinalizerAdded",
            ChangeKind::FinalizerReAdded => "FinalizerReAdded",
            ChangeKind::ControllerDown => "ControllerDown",
            ChangeKind::ControllerBack => "ControllerBack",
            ChangeKind::FindingNew => "FindingNew",
            ChangeKind::FindingResolved => "FindingResolved",
            ChangeKind::FindingChanged => "FindingChanged",
            ChangeKind::Verdict => "VerdictChanged",
        }
    }
}

/// One change, for people and for JSON.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Change {
    /// What kind.
    pub kind: ChangeKind,
    /// `Kind namespace/name` of the object concerned, if one is.
    pub object: Option<String>,
    /// One line: what happened.
    pub message: String,
}

/// Changes told so far, across answers (a finalizer removed then added again is "re-added").
#[derive(Default)]
pub struct Changes {
    removed: BTreeSet<(String, String)>,
}

fn is_controller_down(c: FindingCode) -> bool {
    matches!(c, FindingCode::FinalizerControllerDown | FindingCode::FinalizerControllerMissing)
}

/// Whether a finalizer's controller found down or missing in `prev` no longer is in `next`, on
/// an object still there: it came back (scaled up again, its lease renewed), a sign of progress
/// that restarts the clock (contract §4.3: signs of progress restart it).
pub fn controller_back(prev: &Observed, next: &Observed) -> bool {
    let names: BTreeSet<&str> = next.objects.values().map(|s| s.name.as_str()).collect();
    prev.findings.iter().any(|(c, o)| {
        is_controller_down(*c)
            && names.contains(o.as_str())
            && !next.findings.iter().any(|(n, p)| p == o && is_controller_down(*n))
    })
}

impl Changes {
    /// What changed from `prev` to `next`, objects first (gone, then changed, then new), then
    /// findings, then the verdict.
    pub fn between(&mut self, prev: &Observed, next: &Observed) -> Vec<Change> {
        let mut out = Vec::new();
        let change = |kind, object: &str, message: String| Change { kind, object: Some(object.into()), message };
        let names_now: BTreeMap<&str, &str> = next.objects.iter().map(|(u, s)| (s.name.as_str(), u.as_str())).collect();
        for (uid, was) in &prev.objects {
            if next.objects.contains_key(uid) {
                continue;
            }
            match names_now.get(was.name.as_str()) {
                Some(_) => out.push(change(
                    ChangeKind::Recreated,
                    &was.name,
                    format!("{} was deleted and another object was created under its name", was.name),
                )),
                None => out.push(change(ChangeKind::Deleted, &was.name, format!("{} is gone", was.name))),
            }
        }
        for (uid, now) in &next.objects {
            let Some(was) = prev.objects.get(uid) else {
                let recreated = prev.objects.values().any(|s| s.name == now.name);
                // an object the answer now names that was there all along did not appear
                let known = prev.known.contains(uid);
                if !recreated && !known && !prev.objects.is_empty() {
                    out.push(change(ChangeKind::Appeared, &now.name, format!("{} appeared", now.name)));
                }
                continue;
            };
            if now.deleting && !was.deleting {
                out.push(change(ChangeKind::DeletionStarted, &now.name, format!("{} is being deleted", now.name)));
            }
            for f in was.finalizers.iter().filter(|f| !now.finalizers.contains(f)) {
                self.removed.insert((uid.clone(), f.clone()));
                out.push(change(
                    ChangeKind::FinalizerRemoved,
                    &now.name,
                    format!("finalizer {f} removed from {}", now.name),
                ));
            }
            for f in now.finalizers.iter().filter(|f| !was.finalizers.contains(f)) {
                let (kind, word) = if self.removed.contains(&(uid.clone(), f.clone())) {
                    (ChangeKind::FinalizerReAdded, "re-added to")
                } else {
                    (ChangeKind::FinalizerAdded, "added to")
                };
                out.push(change(kind, &now.name, format!("finalizer {f} {word} {}", now.name)));
            }
        }
        let gone: BTreeSet<&str> =
            prev.objects.iter().filter(|(u, _)| !next.objects.contains_key(*u)).map(|(_, s)| s.name.as_str()).collect();
        let went: Vec<&(FindingCode, String)> = prev.findings.difference(&next.findings).collect();
        let came: Vec<&(FindingCode, String)> = next.findings.difference(&prev.findings).collect();
        // one finding become another on the same object (FinalizerPending past its grace is
        // FinalizerNotProgressing): one change, saying which way it went
        let mut changed_on: BTreeSet<&str> = BTreeSet::new();
        for (code, object) in &went {
            if is_controller_down(*code) || gone.contains(object.as_str()) || changed_on.contains(object.as_str()) {
                continue;
            }
            if let Some((new, _)) = came.iter().find(|(c, o)| o == object && !is_controller_down(*c)) {
                changed_on.insert(object.as_str());
                out.push(change(
                    ChangeKind::FindingChanged,
                    object,
                    format!("{} → {} on {object}", code.as_str(), new.as_str()),
                ));
            }
        }
        for (code, object) in prev.findings.difference(&next.findings) {
            if gone.contains(object.as_str()) {
                // said once, as Deleted
                continue;
            }
            if !is_controller_down(*code) && changed_on.contains(object.as_str()) {
                continue;
            }
            if is_controller_down(*code) {
                let back = format!("the controller of a finalizer on {object} is no longer down ({})", code.as_str());
                out.push(change(ChangeKind::ControllerBack, object, back));
            } else {
                out.push(change(
                    ChangeKind::FindingResolved,
                    object,
                    format!("{} resolved on {object}", code.as_str()),
                ));
            }
        }
        for (code, object) in next.findings.difference(&prev.findings) {
            if !is_controller_down(*code) && changed_on.contains(object.as_str()) {
                continue;
            }
            if is_controller_down(*code) {
                let down = format!("the controller of a finalizer on {object} is down ({})", code.as_str());
                out.push(change(ChangeKind::ControllerDown, object, down));
            } else {
                out.push(change(ChangeKind::FindingNew, object, format!("{} on {object}", code.as_str())));
            }
        }
        if prev.verdict != next.verdict && !prev.objects.is_empty() {
            out.push(Change {
                kind: ChangeKind::Verdict,
                object: None,
                message: format!("verdict {} → {}", prev.verdict.as_str(), next.verdict.as_str()),
            });
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seen(name: &str, finalizers: &[&str], deleting: bool) -> Seen {
        Seen { name: name.into(), finalizers: finalizers.iter().map(|f| f.to_string()).collect(), deleting }
    }

    fn observed(objects: &[(&str, Seen)], findings: &[(FindingCode, &str)], verdict: Verdict) -> Observed {
        Observed {
            objects: objects.iter().map(|(u, s)| (u.to_string(), s.clone())).collect(),
            findings: findings.iter().map(|(c, o)| (*c, o.to_string())).collect(),
            holding: BTreeSet::new(),
            known: objects.iter().map(|(u, _)| u.to_string()).collect(),
            verdict,
        }
    }

    #[test]
    fn gone_objects_are_told_once_and_a_finalizer_back_is_re_added() {
        let mut c = Changes::default();
        let a = observed(
            &[("u1", seen("Site labs/alpha", &["own.io/cleanup"], true)), ("u2", seen("Pod labs/p", &[], true))],
            &[
                (FindingCode::FinalizerControllerDown, "Site labs/alpha"),
                (FindingCode::BlockingDependent, "Pod labs/p"),
            ],
            Verdict::STUCK,
        );
        // the pod goes, the finalizer is removed, the controller is back
        let b = observed(&[("u1", seen("Site labs/alpha", &[], true))], &[], Verdict::IN_PROGRESS);
        let kinds: Vec<ChangeKind> = c.between(&a, &b).iter().map(|x| x.kind).collect();
        assert_eq!(
            kinds,
            [ChangeKind::Deleted, ChangeKind::FinalizerRemoved, ChangeKind::ControllerBack, ChangeKind::Verdict]
        );
        // the controller puts it back: re-added, not merely added
        let d = observed(&[("u1", seen("Site labs/alpha", &["own.io/cleanup"], true))], &[], Verdict::IN_PROGRESS);
        let got = c.between(&b, &d);
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].kind, ChangeKind::FinalizerReAdded);
        assert_eq!(got[0].message, "finalizer own.io/cleanup re-added to Site labs/alpha");
        // nothing new, nothing said
        assert!(c.between(&d, &d).is_empty());
    }

    #[test]
    fn a_finding_become_another_is_one_change_and_an_object_there_all_along_did_not_appear() {
        let mut c = Changes::default();
        let site = ("u1", seen("Site labs/alpha", &["own.io/cleanup"], true));
        let mut a = observed(
            std::slice::from_ref(&site),
            &[(FindingCode::FinalizerPending, "Site labs/alpha")],
            Verdict::IN_PROGRESS,
        );
        a.known.insert("u2".into());
        let b = observed(
            &[site, ("u2", seen("Deployment ops/operator", &[], false))],
            &[(FindingCode::FinalizerNotProgressing, "Site labs/alpha")],
            Verdict::STUCK,
        );
        let got = c.between(&a, &b);
        let kinds: Vec<ChangeKind> = got.iter().map(|x| x.kind).collect();
        assert_eq!(kinds, [ChangeKind::FindingChanged, ChangeKind::Verdict], "{got:?}");
        assert_eq!(got[0].message, "FinalizerPending → FinalizerNotProgressing on Site labs/alpha");
        // one that was not in the input before did appear
        a.known.clear();
        let kinds: Vec<ChangeKind> = c.between(&a, &b).iter().map(|x| x.kind).collect();
        assert_eq!(kinds[0], ChangeKind::Appeared);
    }

    #[test]
    fn another_object_under_the_same_name_is_recreated_not_the_same() {
        let mut c = Changes::default();
        let a = observed(&[("u1", seen("Site labs/alpha", &["f"], true))], &[], Verdict::IN_PROGRESS);
        let b = observed(&[("u9", seen("Site labs/alpha", &[], false))], &[], Verdict::NOT_DELETING);
        let kinds: Vec<ChangeKind> = c.between(&a, &b).iter().map(|x| x.kind).collect();
        assert_eq!(kinds, [ChangeKind::Recreated, ChangeKind::Verdict]);
    }
}

//! The normal lag of the built-in cleaners, as a watch sees it (contract §4.3: built-in
//! controllers whose condition already holds get a few minutes at most). A single answer cannot
//! tell when a condition began to hold (when the last dependent or the last pod went) and
//! counts from the delete; so a foreground owner deleted ten minutes ago whose last dependent
//! went a second ago reads `GarbageCollectorStalled` until the GC removes `foregroundDeletion`
//! a moment later, and a claim's `ControllerStalled` likewise until pvc-protection acts. A
//! watch saw the condition arise: it gives the cleaner its time from then, holding back an
//! answer that is stuck only by such findings until they have stood for that long, so a healthy
//! finish reads InProgress then Gone, never Stuck in between. Findings of the first answer are
//! the single answer's: the watch did not see them arise.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use crate::diagnose::FindingCode;
use crate::diagnose::builtin_conditions;

use super::{Observed, Verdict};

/// How long the garbage collector gets once a foreground owner has nothing left to wait for:
/// the single answer's grace for it (`GC_GRACE_SECONDS` in diagnose).
pub const GC_LAG: Duration = Duration::from_secs(60);

/// What a built-in cleaner's finding may stand before it counts, once seen to arise: the
/// single answer's grace times (`builtin_conditions::grace`); `None` for any other finding.
pub fn allowed(code: FindingCode, object: &str) -> Option<Duration> {
    match code {
        FindingCode::GarbageCollectorStalled => Some(GC_LAG),
        FindingCode::ControllerStalled => {
            // a namespace's `kubernetes` finalizer gets two of the namespace controller's resyncs
            let finalizer = if object.starts_with("Namespace ") { "kubernetes" } else { "" };
            Some(Duration::from_secs(builtin_conditions::grace(finalizer).max(0) as u64))
        }
        _ => None,
    }
}

/// When each cleaner's finding was first seen in this watch (`None`: in its first answer).
#[derive(Debug, Default)]
pub struct Lag {
    seen: BTreeMap<(FindingCode, String), Option<Instant>>,
}

impl Lag {
    /// The first answer's findings: not seen to arise.
    pub fn start(first: &Observed) -> Lag {
        let seen = first.holding.iter().filter(|(c, o)| allowed(*c, o).is_some()).map(|k| (k.clone(), None)).collect();
        Lag { seen }
    }

    /// Whether the answer `next`, judged at `now`, is held back: stuck only by cleaners'
    /// findings seen to arise less than their time ago. Returns when the last of them is due.
    pub fn holds(&mut self, next: &Observed, now: Instant) -> Option<Instant> {
        // findings gone are forgotten: one that comes back has arisen again
        self.seen.retain(|k, _| next.holding.contains(k));
        let mut due = None;
        for (code, object) in &next.holding {
            let allowed = allowed(*code, object)?;
            let since = *self.seen.entry((*code, object.clone())).or_insert(Some(now));
            let end = since? + allowed;
            if end <= now {
                return None;
            }
            due = due.max(Some(end));
        }
        (next.verdict == Verdict::STUCK).then_some(due).flatten()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    fn stuck_by(holding: &[(FindingCode, &str)]) -> Observed {
        let holding: BTreeSet<_> = holding.iter().map(|(c, o)| (*c, o.to_string())).collect();
        Observed {
            objects: BTreeMap::new(),
            findings: holding.clone(),
            holding,
            known: BTreeSet::new(),
            verdict: Verdict::STUCK,
        }
    }

    #[test]
    fn a_cleaners_finding_seen_to_arise_is_held_back_for_its_time_only() {
        let t0 = Instant::now();
        let mut lag = Lag::start(&Observed::nothing());
        let gc = stuck_by(&[(FindingCode::GarbageCollectorStalled, "Site labs/alpha")]);
        assert_eq!(lag.holds(&gc, t0), Some(t0 + GC_LAG));
        assert_eq!(lag.holds(&gc, t0 + Duration::from_secs(30)), Some(t0 + GC_LAG));
        assert_eq!(lag.holds(&gc, t0 + GC_LAG), None, "past its time: stuck");
        // a claim's pvc-protection: five minutes; a namespace's: ten
        let claim = stuck_by(&[(FindingCode::ControllerStalled, "PersistentVolumeClaim labs/data")]);
        assert_eq!(lag.holds(&claim, t0), Some(t0 + Duration::from_secs(300)));
        let ns = stuck_by(&[(FindingCode::ControllerStalled, "Namespace labs")]);
        assert_eq!(lag.holds(&ns, t0), Some(t0 + Duration::from_secs(600)));
    }

    #[test]
    fn anything_else_holding_it_or_a_finding_of_the_first_answer_is_not_held_back() {
        let t0 = Instant::now();
        let both = stuck_by(&[
            (FindingCode::GarbageCollectorStalled, "Site labs/alpha"),
            (FindingCode::FinalizerControllerDown, "Site labs/alpha"),
        ]);
        assert_eq!(Lag::start(&Observed::nothing()).holds(&both, t0), None);
        let gc = stuck_by(&[(FindingCode::GarbageCollectorStalled, "Site labs/alpha")]);
        assert_eq!(Lag::start(&gc).holds(&gc, t0), None, "the single answer's, not seen to arise");
        // not stuck: nothing to hold back
        let mut pending = gc.clone();
        pending.verdict = Verdict::IN_PROGRESS;
        assert_eq!(Lag::start(&Observed::nothing()).holds(&pending, t0), None);
    }
}

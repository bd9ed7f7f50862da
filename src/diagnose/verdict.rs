//! The answer in one word (contract §4.3): one rule, [`Diagnosis::verdict`], that the text's
//! first line, the JSON's `verdict` and `stuck`, `why-stuck --all`'s groups and the exit code
//! all read, so they cannot disagree.

use super::Diagnosis;

/// The verdict of an answer, in the order `why-stuck --all` lists its groups (and the order in
/// which several answers' verdicts give way: the first wins the exit code).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Verdict {
    /// The object, or something it waits on, will not finish without someone acting (exit 2).
    Stuck,
    /// Nothing was found stuck, but something the verdict rests on could not be read or judged
    /// (exit 3: never "nothing to do").
    Unknown,
    /// Being deleted, and what it waits on is under way (exit 0).
    InProgress,
    /// The object has no deletionTimestamp, and nothing it waits on is stuck (exit 0).
    NotDeleting,
}

impl Verdict {
    /// The contract's name: `Stuck`, `Unknown`, `InProgress` or `NotDeleting`.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Stuck => "Stuck",
            Verdict::Unknown => "Unknown",
            Verdict::InProgress => "InProgress",
            Verdict::NotDeleting => "NotDeleting",
        }
    }

    /// The worst of several verdicts (`why-stuck --all`): stuck, then unknown, then the rest;
    /// `None` for none.
    pub fn worst(verdicts: impl IntoIterator<Item = Verdict>) -> Option<Verdict> {
        verdicts.into_iter().min()
    }
}

impl Diagnosis {
    /// Stuck when the object or something it waits on is stuck; else NotDeleting when it has no
    /// deletionTimestamp; else Unknown when a finding says it cannot tell; else InProgress.
    pub fn verdict(&self) -> Verdict {
        if self.stuck {
            Verdict::Stuck
        } else if self.deletion_timestamp.is_none() {
            Verdict::NotDeleting
        } else if self.findings.iter().any(|f| f.cannot_tell) {
            Verdict::Unknown
        } else {
            Verdict::InProgress
        }
    }
}

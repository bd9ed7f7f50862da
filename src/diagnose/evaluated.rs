//! A policy that may deny, judged by evaluating its CEL against the request
//! ([`crate::admission::evaluate`]): a definite denial is `AdmissionDenied`, stuck, with the
//! policy's own message; a definite admission is no finding at all; otherwise the "may deny"
//! Warning stands, saying what kept the evaluation from an answer.

use super::denials::{ask_admission, denier_steps, may_deny};
use super::{Finding, FindingCode, Severity, Subject, admission::request, describe};
use crate::admission::evaluate::{Judged, judge};
use crate::admission::policies::PolicyMatch;
use crate::admission::webhooks::Operation;
use crate::graph::{Graph, NodeId};

/// The policy's verdict on the requests `ops` of `x`, as the answer gives it.
pub(super) enum Verdict {
    /// It denies one of them: the finding, stuck.
    Denies(Finding),
    /// It admits all of them: nothing to say.
    Admits,
    /// The "may deny" Warning, with what kept it undecided.
    MayDeny(Finding),
}

/// Evaluates `m` on each request of `ops`: a denial of any decides, then any doubt.
pub(super) fn verdict(g: &Graph, x: NodeId, m: &PolicyMatch, ops: &[Operation]) -> Verdict {
    let mut doubt: Option<String> = None;
    for &op in ops {
        let one = PolicyMatch { operation: op, ..m.clone() };
        match judge(g, &one, x) {
            Judged::Denies { message, finalizer } => return Verdict::Denies(denied(g, x, m, op, &message, finalizer)),
            Judged::Admits => {}
            Judged::Undecided(why) => doubt = doubt.or(Some(why)),
        }
    }
    match doubt {
        None => Verdict::Admits,
        Some(why) => {
            let mut found = may_deny(g, x, m, ops);
            found.message.push_str(&format!(". Its CEL was evaluated as far as it could be: {why}"));
            Verdict::MayDeny(found)
        }
    }
}

fn denied(g: &Graph, x: NodeId, m: &PolicyMatch, op: Operation, message: &str, finalizer: Option<String>) -> Finding {
    let o = g.object(x).expect("explained objects are observed");
    let what = match &finalizer {
        Some(f) => format!("the UPDATE that removes {f} from {}", describe(g, x)),
        None => request(g, x, o, op),
    };
    let (related, mut remedy) = denier_steps(g, m.policy, m.binding, &what);
    remedy.extend(ask_admission(g, x, o, &[op]));
    Finding {
        code: FindingCode::AdmissionDenied,
        severity: Severity::Error,
        object: x,
        related,
        message: format!(
            "{} denies {what}: its CEL, evaluated against that request, fails a validation, and the API server answers {message:?}. Until the policy or its binding allows it, the request is refused on every retry, printed patches too",
            m.describe(g)
        ),
        remedy,
        subject: Subject::Related,
        cannot_tell: false,
    }
}

#[cfg(test)]
#[path = "evaluated_tests.rs"]
mod tests;

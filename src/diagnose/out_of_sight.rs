//! A controller a managed control plane runs out of sight that reports its own repeated failure
//! about the object (contract §4.3, time rules): the presumption that it runs for
//! `--stuck-after` ends, because it visibly runs, and fails. Its Warning events about the object
//! (one reason, a growing count, the last within `--stuck-after`: [`clock::judge`]'s `failing`)
//! are the strongest evidence there is, stronger than anything the cluster shows of it: the
//! answer is `FinalizerNotProgressing`, stuck, the failure quoted, never "cannot tell".

use k8s_openapi::jiff::Timestamp;

use crate::controllers::FinalizerOwner;
use crate::graph::{Graph, NodeId};

use super::events::Index;
use super::finding::{Finding, FindingCode, Severity, Subject};
use super::progress::{Options, events_step};
use super::step::{Reach, Step};
use super::{clock, describe, remedy};

/// `FinalizerNotProgressing` for `finalizer` on `x`, whose controller `owner` a managed control
/// plane runs out of sight (`who_runs` says who), when that controller repeats a failure about
/// `x`; `None` while it does not (the presumption stands).
#[allow(clippy::too_many_arguments)] // the answer's context, one value each, as `alive_finding`
pub(super) fn repeats_a_failure(
    g: &Graph,
    idx: &Index,
    x: NodeId,
    at: Option<usize>,
    finalizer: &str,
    owner: &FinalizerOwner,
    who_runs: &str,
    now: Timestamp,
    opts: &Options,
) -> Option<Finding> {
    let failing = clock::judge(g, idx, x, finalizer, owner, now, opts.stuck_after).failing?;
    let o = g.object(x)?;
    let since = o.deletion_timestamp.unwrap_or(now);
    let waited = crate::age::human((now.as_second() - since.as_second()).max(0));
    let who = owner.removed_by.clone().unwrap_or_else(|| format!("the controller of {finalizer}"));
    let message = format!(
        "{} has kept {finalizer} since {since} ({waited}); it is removed by {who}, which cannot be seen ({who_runs}) but runs and fails at it: {failing}. Its own repeated failure ends the presumption that it is merely running: more time changes nothing until what it reports is fixed",
        describe(g, x)
    );
    let mut steps = vec![
        events_step(g, x),
        Step::advice(
            Reach::Inspect,
            format!(
                "The provider runs {who}: its logs are in the provider's control-plane logging, where that is turned on. The failure quoted names what it cannot do in the cloud account (a resource still in use, a quota, a permission)."
            ),
        ),
        Step::advice(
            Reach::Restore,
            format!(
                "Fix what the failure names in the cloud account (release the dependency, restore the permission); {who} retries by itself and removes {finalizer} once it succeeds."
            ),
        ),
    ];
    if let Some(p) = remedy::remove_finalizer_at(g, x, at, finalizer) {
        steps.push(Step::run(
            Reach::Destructive,
            format!(
                "Last resort, only once whatever {finalizer} guards has been deleted by hand in the cloud account (removed first, the finalizer leaves it behind in the account, still billed): remove the finalizer."
            ),
            p,
        ));
    }
    Some(Finding {
        code: FindingCode::FinalizerNotProgressing,
        severity: Severity::Error,
        object: x,
        related: Vec::new(),
        message,
        remedy: steps,
        subject: Subject::Finalizer { name: finalizer.to_string(), owner: owner.clone() },
        cannot_tell: false,
    })
}

#[cfg(test)]
#[path = "out_of_sight_tests.rs"]
mod tests;

//! Admission policies and quoted denials, as findings: a denial quoted in Events
//! (`AdmissionDenied`, stuck), a ValidatingAdmissionPolicy that fails to configure for the
//! request (stuck), one that may deny it or whose params go with a namespace being deleted (a
//! Warning, with the dry run that settles it), and the grouping of these and of dead webhooks
//! into one finding per denier for the DELETEs of what an answer waits for
//! ([`group_waiting`]). Which policies apply, and what Events quote, is
//! [`crate::admission`]'s.

use std::collections::HashSet;

use super::admission::{read_it, request, some_of};
use super::remedy;
use super::step::{Reach, Step};
use super::{Finding, FindingCode, Related, Severity, Subject, describe};
use crate::admission::denials::Denial;
use crate::admission::policies::{Kind, PolicyMatch};
use crate::admission::webhooks::Operation;
use crate::graph::{Graph, NodeId};

/// `AdmissionDenied` from a denial quoted in the object's Warning Events (see
/// [`crate::admission::denials`]): stuck, until the denier allows the request.
pub(super) fn seen_denying(g: &Graph, x: NodeId, op: Operation, d: &Denial) -> Finding {
    let o = g.object(x).expect("explained objects are observed");
    let by = crate::admission::denier(g, d.by, d.binding);
    let (related, remedy) = denier_steps(g, d.by, d.binding, "this request");
    Finding {
        code: FindingCode::AdmissionDenied,
        severity: Severity::Error,
        object: x,
        related,
        message: format!(
            "{by} denies {}; {} quotes: {:?}. Until it allows it, the request is rejected on every retry, printed patches too{}",
            request(g, x, o, op),
            d.quoted_by(),
            d.message,
            match d.seen_in {
                // an Event's author is anyone allowed to create Events there; a namespace's
                // condition is the namespace controller's own
                crate::admission::denials::SeenIn::Event => format!(
                    ". This rests on that Event alone: {} (confirm the denial in the denier's own logs before weakening it)",
                    super::events::writable_by(g, x)
                ),
                _ => String::new(),
            }
        ),
        remedy,
        subject: Subject::Related,
        cannot_tell: false,
    }
}

/// What a finding about a denier points at: it, then its binding if any.
fn related(by: NodeId, binding: Option<NodeId>) -> Vec<Related> {
    std::iter::once(by).chain(binding).map(Related::Node).collect()
}

/// The steps that read a policy (or webhook configuration) and its binding, if any.
fn read_both(g: &Graph, by: NodeId, binding: Option<NodeId>, by_why: &str, binding_why: &str) -> Vec<Step> {
    std::iter::once(read_it(g, by, by_why)).chain(binding.map(|b| read_it(g, b, binding_why))).collect()
}

/// What a seen denial points at (the configuration or policy, and its binding) and the steps
/// that read and adjust it so that it allows `what`, the request it denied.
pub(super) fn denier_steps(g: &Graph, by: NodeId, binding: Option<NodeId>, what: &str) -> (Vec<Related>, Vec<Step>) {
    let related = related(by, binding);
    let mut remedy = read_both(
        g,
        by,
        binding,
        "what it denies and why.",
        "which requests it applies the policy to, with which validationActions.",
    );
    if let Some(b) = binding {
        remedy.push(Step::advice(
            Reach::Disrupt,
            format!(
                "Adjust the binding {} (narrow its matchResources, or validationActions Warn instead of Deny) so it allows {what}; deleting it turns the policy off for every object it covers.",
                g.identity(b).name
            ),
        ));
    } else {
        remedy.push(Step::advice(
            Reach::Disrupt,
            format!(
                "Adjust it so it allows {what}; removing it turns off whatever it enforces for every object it covers."
            ),
        ));
    }
    (related, remedy)
}

/// `AdmissionDenied` from the configuration alone: the policy (or its binding) fails to
/// configure for a request this deletion needs (its paramKind not served, its params
/// missing with `parameterNotFoundAction: Deny`), and `failurePolicy: Fail` denies every such
/// request, whatever the expressions and the binding's validationActions say.
pub(super) fn fails_to_configure(
    g: &Graph,
    x: NodeId,
    m: &PolicyMatch,
    ops: &[Operation],
    seen: Option<&Denial>,
) -> Finding {
    let o = g.object(x).expect("explained objects are observed");
    let requests: Vec<String> = ops.iter().map(|&op| request(g, x, o, op)).collect();
    let failing = m.fails_to_configure(g).expect("only a policy that fails to configure denies by it");
    let fix = m.misconfigured.as_ref().map(|c| c.fix.as_str()).unwrap_or_default();
    let mut remedy =
        read_both(g, m.policy, m.binding, "its paramKind and failurePolicy.", "its paramRef and what it matches.");
    remedy.push(Step::advice(
        Reach::Restore,
        format!("Let it configure again: {fix}. The requests it denied are retried by whoever sent them."),
    ));
    remedy.push(Step::advice(
        Reach::Disrupt,
        "Or set the policy's failurePolicy to Ignore, or remove the binding: that turns off what it enforces for every object it covers.",
    ));
    Finding {
        code: FindingCode::AdmissionDenied,
        severity: Severity::Error,
        object: x,
        related: related(m.policy, m.binding),
        message: format!(
            "{failing}. With failurePolicy Fail the API server denies every request the policy matches while it does (no expression is evaluated, whatever the binding's validationActions): {} {} rejected on every retry, printed patches too",
            requests.join(" and "),
            if requests.len() > 1 { "are" } else { "is" },
        ) + &seen
            .map(|d| format!(". A Warning Event ({}) quotes the denial: {:?}", d.reason, d.message))
            .unwrap_or_default(),
        remedy,
        subject: Subject::Related,
        cannot_tell: false,
    }
}

/// `AdmissionDenied` as a Warning: a policy applies to a request this deletion needs and its
/// expressions may refuse it (they read finalizers or deletionTimestamp; on a DELETE, any
/// validation), or it may fail to configure (what would
/// settle it was not read); CEL is not evaluated, and no denial was seen, so it may or may not
/// deny. Not stuck by itself; a configuration error that may be one leaves the verdict Unknown.
pub(super) fn may_deny(g: &Graph, x: NodeId, m: &PolicyMatch, ops: &[Operation]) -> Finding {
    let o = g.object(x).expect("explained objects are observed");
    let requests: Vec<String> = ops.iter().map(|&op| request(g, x, o, op)).collect();
    let them = if ops.len() > 1 { "them" } else { "it" };
    let message = match m.fails_to_configure(g) {
        Some(failing) => format!(
            "{failing}. If it does, failurePolicy Fail denies {} whatever its expressions and the binding's validationActions; no Event quoting a denial was seen",
            requests.join(" and "),
        ),
        None => {
            let effect = match m.kind {
                Kind::Validating => "with validationActions Deny",
                Kind::Mutating => "and a mutation may write the finalizers back or fail the request",
            };
            let mut message = format!(
                "{} applies to {} {effect}, and {} ({}). CEL is not evaluated here: it may deny {them}; no Event quoting a denial was seen",
                m.describe(g),
                requests.join(" and "),
                m.why_deciding(),
                m.reads.join("; "),
            );
            if !m.caveats.is_empty() {
                message.push_str(&format!(" (it may not apply: {})", m.caveats.join("; ")));
            }
            message
        }
    };
    let mut remedy = read_both(
        g,
        m.policy,
        m.binding,
        "what its validations allow on a deletion.",
        "which requests it applies the policy to.",
    );
    // a denial would be quoted there
    remedy.push(super::progress::events_step(g, x));
    remedy.extend(ask_admission(g, x, o, ops));
    Finding {
        code: FindingCode::AdmissionDenied,
        severity: Severity::Warning,
        object: x,
        related: related(m.policy, m.binding),
        message,
        remedy,
        subject: Subject::Related,
        // a configuration error the input cannot vouch for (no discovery data, its params'
        // type unread): if it is one, nothing this policy matches goes; the dry run settles it
        cannot_tell: m.misconfigured.is_some(),
    }
}

/// What settles a "may deny": the request itself as a server-side dry run, which goes through
/// admission (policies, and webhooks that declare themselves free of side effects) and stores
/// nothing. The finalizer's removal for an UPDATE (its first finalizer: any one sends the
/// UPDATE), the DELETE for a DELETE.
pub(super) fn ask_admission(g: &Graph, x: NodeId, o: &crate::snapshot::Object, ops: &[Operation]) -> Option<Step> {
    let (what, command) = if ops.contains(&Operation::Update) {
        // a finalizer's removal; a reference patch is the garbage collector's, not printed
        if !o.is_deleting() {
            return None;
        }
        let f = o.finalizers.first()?;
        (format!("the UPDATE that removes {f}"), remedy::remove_finalizer_at(g, x, Some(0), f)?)
    } else {
        ("its DELETE".to_string(), remedy::on_object(g, x, ["delete"]))
    };
    Some(Step::run(
        Reach::Inspect,
        format!(
            "Ask the API server whether admission refuses {what} of {}, changing nothing: a server-side dry run is admitted (policies, and webhooks that declare no side effects) and not stored.",
            describe(g, x)
        ),
        command.flag("--dry-run", "server"),
    ))
}

/// `AdmissionDenied` as a Warning: the binding takes its params from objects of a namespace
/// being deleted, and fails to configure once they are gone (`parameterNotFoundAction: Deny`,
/// `failurePolicy: Fail`, whatever its validationActions). The namespace controller deletes
/// types in no fixed order: whatever it deletes after them is denied, and then never goes.
pub(super) fn params_going(g: &Graph, x: NodeId, m: &PolicyMatch, ops: &[Operation]) -> Finding {
    let o = g.object(x).expect("explained objects are observed");
    let requests: Vec<String> = ops.iter().map(|&op| request(g, x, o, op)).collect();
    let params: Vec<String> = m.params.iter().map(|&p| describe(g, p)).collect();
    let mut remedy = read_both(g, m.policy, m.binding, "its paramKind and failurePolicy.", "its paramRef.");
    if let Some(b) = m.binding {
        remedy.push(Step::advice(
            Reach::Disrupt,
            format!(
                "Before its params go, set the binding {}'s paramRef.parameterNotFoundAction to Allow (or take its params from a namespace that stays), so that what is deleted after them is not denied.",
                g.identity(b).name
            ),
        ));
    }
    Finding {
        code: FindingCode::AdmissionDenied,
        severity: Severity::Warning,
        object: x,
        related: related(m.policy, m.binding),
        message: format!(
            "{} takes its params from {}, which go with a namespace being deleted; once they are gone it fails to configure (parameterNotFoundAction Deny) and failurePolicy Fail denies {} whatever its validationActions. The namespace controller deletes types in no fixed order: whatever it deletes after them is denied, and then never goes",
            m.describe(g),
            params.join(", "),
            requests.join(" and "),
        ),
        remedy,
        subject: Subject::Related,
        cannot_tell: false,
    }
}

/// One finding per policy, binding or webhook configuration for the DELETEs it refuses or may
/// refuse of objects the answer waits for but that are not being deleted yet (a namespace's
/// content, a foreground owner's dependents), naming them all, rather than one per object: a
/// namespace may hold thousands. The first object's finding is kept, its request widened to
/// all of them. And a policy an Error finding names as denying is not also said to be one that
/// may.
pub fn group_waiting(g: &Graph, target: NodeId, findings: &mut Vec<Finding>) {
    // (the first finding's index, the objects after it)
    let mut groups: Vec<(usize, Vec<NodeId>)> = Vec::new();
    let mut merged = vec![false; findings.len()];
    for (i, f) in findings.iter().enumerate() {
        let waiting = f.object != target && g.object(f.object).is_some_and(|o| !o.is_deleting());
        let admission = matches!(f.code, FindingCode::AdmissionDenied | FindingCode::AdmissionWebhookUnavailable);
        if !admission || !waiting {
            continue;
        }
        let alike = |j: &usize| {
            let k = &findings[*j];
            (k.code, k.severity, &k.related) == (f.code, f.severity, &f.related)
        };
        match groups.iter_mut().find(|(j, _)| alike(j)) {
            Some((_, more)) => {
                more.push(f.object);
                merged[i] = true;
            }
            None => groups.push((i, Vec::new())),
        }
    }
    for (j, more) in groups.into_iter().filter(|(_, more)| !more.is_empty()) {
        let f = &mut findings[j];
        let Some(o) = g.object(f.object) else { continue };
        let all: Vec<String> = std::iter::once(f.object).chain(more.iter().copied()).map(|x| describe(g, x)).collect();
        let objects = format!("{} objects ({})", all.len(), some_of(&all));
        f.message = match f.code {
            FindingCode::AdmissionWebhookUnavailable => f
                .message
                .replacen(&format!(" of {} ", all[0]), &format!(" of {objects} "), 1)
                .replacen("the DELETE that removes it", "the DELETE that removes each", 1),
            _ => f
                .message
                .replacen(&request(g, f.object, o, Operation::Delete), &format!("the DELETEs that remove {objects}"), 1)
                .replacen("it may deny it;", "it may deny them;", 1)
                .replacen(" is rejected on every retry", " are rejected on every retry", 1),
        };
        f.related.extend(more.into_iter().map(Related::Node));
    }
    let mut i = 0;
    findings.retain(|_| {
        i += 1;
        !merged[i - 1]
    });
    // a policy seen denying (in an Event, in a namespace's condition) is not also one that "may"
    let denying: HashSet<NodeId> = findings
        .iter()
        .filter(|f| f.severity == Severity::Error)
        .filter(|f| matches!(f.code, FindingCode::AdmissionDenied | FindingCode::NamespaceContentDeletionFailure))
        .flat_map(|f| f.related.iter())
        .filter_map(|r| match r {
            Related::Node(n) => Some(*n),
            _ => None,
        })
        .collect();
    findings.retain(|f| {
        let may = f.code == FindingCode::AdmissionDenied && f.severity == Severity::Warning;
        !(may && matches!(f.related.first(), Some(Related::Node(p)) if denying.contains(p)))
    });
}

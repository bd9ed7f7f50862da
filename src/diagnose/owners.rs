//! Owner-reference problems on one object, and what the GC will therefore do with it
//! (gc-semantics §3.2 D–F, §6).

use crate::names::FOREGROUND_DELETION;

use crate::collector::{Dangling, GcVerdict, OwnerState, classify_reference};
use crate::graph::{Graph, NodeId};

use super::finding::{Finding, FindingCode, Related, Severity, Subject};
use super::remedy;

/// Classifies every owner reference of `x`, returning the problems found and the verdict.
pub fn owner_findings(g: &Graph, x: NodeId) -> (Vec<Finding>, GcVerdict) {
    let refs = g.owners(x);
    if refs.is_empty() {
        return (Vec::new(), GcVerdict::NoOwners);
    }
    let states: Vec<OwnerState> = refs.iter().map(|r| classify_reference(g, x, r)).collect();
    let verdict = GcVerdict::of(&states);
    let consequence = match verdict {
        GcVerdict::NeverActedOn => {
            "the garbage collector never acts on this object (no deletion, no clean-up of its other references)"
        }
        GcVerdict::Kept => {
            "another owner is solid, so the garbage collector strips this reference and keeps the object"
        }
        GcVerdict::Collected => "no owner is solid, so the garbage collector deletes this object",
        GcVerdict::Untold => {
            "no other owner is known solid, and one could not be read: whether the garbage collector keeps this object cannot be told"
        }
        GcVerdict::NoOwners => "",
    };
    let x_ref = super::describe(g, x);
    // The garbage collector does not act on an object that is already being deleted (unless
    // it is deleting its dependents): its references are a note, not something to repair.
    let deleting = g.object(x).is_some_and(|o| o.is_deleting() && !o.has_finalizer(FOREGROUND_DELETION));
    let mut out = Vec::new();
    for (i, (r, state)) in refs.iter().zip(&states).enumerate() {
        let named = format!("{} {}", r.kind, r.name);
        let absent = || Related::Absent {
            api_version: r.api_version.clone(),
            kind: r.kind.clone(),
            namespace: g.identity(x).namespace.map(str::to_string),
            name: r.name.clone(),
        };
        let Some(code) = FindingCode::of_owner_state(state) else { continue };
        let (related, message) = match state {
            OwnerState::Solid | OwnerState::Waiting | OwnerState::Unread => continue,
            OwnerState::Dangling(Dangling::UidMismatch { live }) => (
                vec![Related::Node(*live)],
                format!(
                    "owner reference to {named} carries uid {}, but {named} now has uid {} (recreated under the same name): the owner counts as absent; {consequence}",
                    r.uid,
                    g.identity(*live).uid
                ),
            ),
            OwnerState::Dangling(Dangling::InvalidNamespace { actual }) => (
                vec![Related::Node(*actual)],
                format!(
                    "owner {named} lives in namespace {}, but a namespaced owner is looked up in the dependent's namespace ({}): the owner counts as absent; {consequence}",
                    g.identity(*actual).namespace.unwrap_or(""),
                    g.identity(x).namespace.unwrap_or("")
                ),
            ),
            OwnerState::Dangling(Dangling::WrongCoordinates { actual }) => (
                vec![Related::Node(*actual)],
                format!(
                    "owner reference to {} {named} carries the uid of {}: the GC looks up {named}, does not find it with that uid, and counts the owner as absent; {consequence}",
                    r.api_version,
                    super::describe(g, *actual)
                ),
            ),
            OwnerState::Dangling(Dangling::Absent) => (
                vec![absent()],
                format!("owner {} {named} (uid {}) does not exist; {consequence}", r.api_version, r.uid),
            ),
            OwnerState::Unresolvable(why) => (
                vec![absent()],
                format!(
                    "owner reference to {} {named}: {why}; the GC retries the REST mapping forever and {consequence}",
                    r.api_version
                ),
            ),
            OwnerState::NamespacedOwnerOfClusterScoped => (
                vec![g.by_uid(&r.uid).map_or_else(absent, Related::Node)],
                format!("cluster-scoped {x_ref} names the namespaced owner {named}: invalid; {consequence}"),
            ),
        };
        if deleting {
            out.push(Finding {
                code,
                severity: Severity::Info,
                object: x,
                related,
                message: format!(
                    "{message} (it is already being deleted, so the garbage collector no longer acts on its owner references)"
                ),
                remedy: Vec::new(),
                subject: Subject::Related,
                cannot_tell: false,
            });
            continue;
        }
        out.push(Finding {
            code,
            severity: Severity::Warning,
            object: x,
            related,
            message,
            remedy: remedy::fix_owner_reference(g, x, i, r, verdict),
            subject: Subject::Related,
            cannot_tell: false,
        });
    }
    (out, verdict)
}

/// The owners of `x` that the input could not read where the GC would look them up, for the
/// answer's `incomplete`: neither present nor absent (contract §4.3.4).
pub fn unread_owners(g: &Graph, x: NodeId) -> Vec<String> {
    // only a failed read makes an owner unread: no gap, no second classification
    if g.gaps().is_empty() {
        return Vec::new();
    }
    g.owners(x)
        .iter()
        .filter(|r| classify_reference(g, x, r) == OwnerState::Unread)
        .map(|r| {
            format!(
                "owner {} {} {} of {}: not in the input, and its type could not be read there, so whether it exists cannot be told",
                r.api_version,
                r.kind,
                r.name,
                super::describe(g, x)
            )
        })
        .collect()
}

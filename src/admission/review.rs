//! The API server's admission in front of a plan's requests, in a world the plan changes.
//!
//! Every request the plan sends (a DELETE, an UPDATE that removes a finalizer or an owner
//! reference) first passes the admission webhooks. One that intercepts it with
//! `failurePolicy: Fail` and whose backend cannot serve rejects it, every time: the
//! controller, the garbage collector or the namespace controller retries forever and the step
//! never happens. Likewise, objects of a CRD whose conversion webhook is needed and dead cannot
//! be read or deleted at the preferred version, which the garbage collector, the namespace
//! controller and kubectl use.
//!
//! Which webhooks intercept what and whether a backend serves is judged by the same functions
//! as `why-stuck` ([`Index::interceptors`], [`conversion::converter`], `backend::judge`).
//! The world is read through [`AdmissionView`] (as the GC's decisions read it through
//! `GcView`), so this module knows nothing of the planner.
//! On top of that the plan's own progress counts: a backend Service the plan deletes, one in
//! a namespace the plan starts deleting (as `backend::judge` says of a Service in a terminating
//! namespace), or one whose ready endpoints' pods the plan deletes along with their owners, is
//! dead from then on. A webhook configuration the plan deletes intercepts nothing afterwards.
//!
//! Admission policies ([`super::policies`]), denials quoted in Events ([`super::denials`]) and
//! mutations seen putting a finalizer back ([`super::readds`]) are judged as `why-stuck`
//! judges them: a request whose denial or refusal was seen is refused again; a
//! policy that fails to configure denies; one whose expressions may refuse the request may
//! deny (a note). And the plan's own progress counts here too: a binding whose params the plan
//! has deleted (with `parameterNotFoundAction: Deny`) fails to configure from then on.
//!
//! # Undecidable cases
//! - A webhook whose backend is dead but whose match cannot be settled (CEL `matchConditions`,
//!   labels that were not read) *blocks*, and the reason says it "may be rejected" and why: a
//!   plan that shows the step done would reassure falsely.
//! - A webhook whose backend cannot be judged (a `url`, an ExternalName Service, endpoints not
//!   read) does not block: the step is taken and `notes` says it may be rejected.
//! - A controller's own UPDATE of an object behind a dead conversion webhook is taken (the
//!   controller may read and write the stored version, which needs no conversion) with a note.
//!
//! Exempt: the CRD finalizer controller deletes instances through storage, not through
//! admission (`apiextensions-apiserver` `finalizer/crd_finalizer.go`); the namespace
//! controller's `/finalize` is a subresource webhooks on `namespaces` do not match.

use crate::names::CRD;

use super::Index;
use super::backend::{self, Backend, Target};
use super::conversion;
use super::describe;
use super::policies::PolicyMatch;
use super::webhooks::Operation;
use crate::graph::{Graph, NodeId};
use crate::snapshot::OwnerRef;

/// What admission reads of the world a plan changes: what is still stored, what is being
/// deleted, and who owns it, now.
pub trait AdmissionView {
    /// The observed graph the view's node ids refer to.
    fn graph(&self) -> &Graph;
    /// Whether `n` is still stored (a configuration, Service or pod deleted since is not).
    fn stored(&self, n: NodeId) -> bool;
    /// Whether `n` has a deletionTimestamp now.
    fn deleting(&self, n: NodeId) -> bool;
    /// `n`'s owner references now.
    fn owners_of(&self, n: NodeId) -> &[OwnerRef];
}

/// A request the API server refuses.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rejection {
    /// The finalizer the request was to remove, if it was.
    pub finalizer: Option<String>,
    /// Who sent what, what rejects it and why.
    pub reason: String,
    /// Short, for an owner that waits on this object: `its DELETE is rejected by …`.
    pub short: String,
}

/// One request, for admission and for messages.
pub struct Request<'a> {
    /// What admission sees of it.
    pub op: Operation,
    /// Who sends it (`garbage-collector`, a controller), for messages.
    pub actor: &'a str,
    /// `DELETE`, `UPDATE removing finalizer x`.
    pub what: String,
    /// The finalizer an UPDATE removes.
    pub finalizer: Option<&'a str>,
    /// The sender reads and writes at the resource's preferred version (the GC, the namespace
    /// controller, kubectl); a controller may use the stored one, which needs no conversion.
    pub preferred_version: bool,
}

/// Whether admission can refuse anything here: a webhook configuration, an admission policy,
/// a CRD converting through a webhook or a namespace being deleted (NamespaceLifecycle refuses
/// creates there) was read. Without one, requests are not reviewed at all.
pub fn applies(g: &Graph) -> bool {
    [
        "ValidatingWebhookConfiguration",
        "MutatingWebhookConfiguration",
        "ValidatingAdmissionPolicy",
        "MutatingAdmissionPolicy",
    ]
    .iter()
    .any(|k| !g.of_kind("admissionregistration.k8s.io", k).is_empty())
        || g.of_kind(CRD.0, CRD.1)
            .iter()
            .any(|&c| g.object(c).is_some_and(|o| o.str_field("/spec/conversion/strategy") == Some("Webhook")))
        || g.of_kind("", "Namespace").iter().any(|&n| g.object(n).is_some_and(|n| n.is_deleting()))
}

/// The admission verdict on `req` for `n`: the rejection, if any, and what could not be judged.
/// Each kind of refusal is asked in turn, the first found decides: a dead converter, a denial
/// seen, a finalizer put back, a create refused in a terminating namespace, a policy, a webhook.
pub fn review(w: &impl AdmissionView, index: &Index, n: NodeId, req: &Request) -> (Option<Rejection>, Vec<String>) {
    let mut r = Review { w, index, n, req, notes: Vec::new() };
    let found = r
        .conversion()
        .or_else(|| r.seen_denial())
        .or_else(|| r.finalizer_put_back())
        .or_else(|| r.create_refused())
        .or_else(|| r.policies())
        .or_else(|| r.webhooks());
    (found, r.notes)
}

/// One request under review, and the notes gathered on the way.
struct Review<'a, W> {
    w: &'a W,
    index: &'a Index,
    n: NodeId,
    req: &'a Request<'a>,
    notes: Vec<String>,
}

impl<W: AdmissionView> Review<'_, W> {
    /// The rejection of this request: `why` it fails, `by` whom.
    fn reject(&self, why: String, by: String) -> Rejection {
        let Request { actor, what, finalizer, .. } = self.req;
        Rejection {
            finalizer: finalizer.map(str::to_string),
            reason: format!("{}{actor}'s {what} {why}", finalizer.map(|f| format!("{f}: ")).unwrap_or_default()),
            short: format!("its {what} is rejected by {by}"),
        }
    }

    /// Whether the request is the UPDATE that removes a finalizer of an object being deleted.
    fn removes_a_finalizer(&self) -> bool {
        self.req.op == Operation::Update && self.req.finalizer.is_some() && self.w.deleting(self.n)
    }

    /// A CRD converting through a dead webhook: no request at the preferred version passes.
    fn conversion(&mut self) -> Option<Rejection> {
        let (w, index, n, g) = (self.w, self.index, self.n, self.w.graph());
        let obj = describe(g, n);
        let actor = self.req.actor;
        if let Some(c) =
            g.object(n).filter(|o| !o.group().is_empty()).and_then(|o| conversion::crd_of(g, o.group(), &o.kind))
            && let Some(conv) = conversion::converter_judged_by(g, c, index.backends())
        {
            let (backend, by_plan) = in_plan(w, &conv.backend, &conv.target);
            if backend.is_dead() {
                if by_plan && let Backend::NamespaceTerminating { namespace, .. } = &backend {
                    self.notes.push(racy_note(&describe(g, c), namespace));
                }
                let why = format!(
                    "{} converts its objects through a webhook whose backend cannot serve ({}{}): {obj} is stored as {} and cannot be read or deleted at {}, the version {actor} uses",
                    describe(g, c),
                    backend.describe(&conv.target),
                    if by_plan { ", by this plan" } else { "" },
                    conv.stored_elsewhere.join(", "),
                    conv.preferred,
                );
                if self.req.op == Operation::Delete || self.req.preferred_version {
                    return Some(self.reject(format!("fails: {why}"), describe(g, c)));
                }
                // one note per CRD, not per object: a namespace may hold thousands
                self.notes.push(format!(
                "{} converts through a webhook whose backend cannot serve ({}): its controllers' UPDATEs (finalizer removals) are taken as done, which holds only if they read and write a stored version ({}) that needs no conversion",
                describe(g, c),
                backend.describe(&conv.target),
                conv.stored_elsewhere.join(", "),
            ));
            }
        }

        None
    }

    /// A denial quoted in Events: the same request is denied again (a denier the plan deleted
    /// denies nothing any more).
    fn seen_denial(&mut self) -> Option<Rejection> {
        let (w, index, n, g) = (self.w, self.index, self.n, self.w.graph());
        if let Some(d) = index.denials(g, n, self.req.op).into_iter().find(|d| w.stored(d.by)) {
            let by = super::denier(g, d.by, d.binding);
            let why = format!("is denied: {by} denied it before; {} quotes: {:?}", d.quoted_by(), d.message);
            return Some(self.reject(why, describe(g, d.by)));
        }
        None
    }

    /// A mutation seen putting a finalizer back on the UPDATE that removes one: refused again
    /// while that mutator is stored (`readds`).
    fn finalizer_put_back(&mut self) -> Option<Rejection> {
        let (w, index, n, g) = (self.w, self.index, self.n, self.w.graph());
        let obj = describe(g, n);
        if self.removes_a_finalizer()
            && let Some(r) = index.readded(g, n)
            && let Some(m) = r.mutators.iter().find(|m| w.stored(m.by) && m.binding.is_none_or(|b| w.stored(b)))
        {
            let why = format!(
                "is refused: {} mutates it to add a finalizer back, which the API server refuses for an object being deleted; a Warning Event about {obj} quotes: {:?}",
                super::denier(g, m.by, m.binding),
                r.refusal.message
            );
            return Some(self.reject(why, describe(g, m.by)));
        }
        None
    }

    /// A cleanup refused a create in a namespace being deleted: the controller's UPDATE that
    /// removes its finalizer never comes while that namespace is being deleted (NamespaceLifecycle).
    fn create_refused(&mut self) -> Option<Rejection> {
        let (w, index, n, g) = (self.w, self.index, self.n, self.w.graph());
        let obj = describe(g, n);
        if self.removes_a_finalizer()
            && let Some((ns, r)) = index.create_refused(g, n)
            && g.find("", "Namespace", None, ns).is_some_and(|ns| w.deleting(ns))
        {
            let why = format!(
                "never comes: its cleanup must create something in namespace {ns}, which is being deleted, and the API server creates nothing new there; a Warning Event about {obj} quotes: {:?}",
                r.message
            );
            return Some(self.reject(why, format!("the deletion of namespace {ns}")));
        }
        None
    }

    /// Admission policies: one that fails to configure denies under failurePolicy Fail; one
    /// whose CEL, evaluated, fails a validation denies; one that cannot be evaluated may deny
    /// (a note, one per policy, binding and operation, not per object).
    fn policies(&mut self) -> Option<Rejection> {
        let (w, index, n, g) = (self.w, self.index, self.n, self.w.graph());
        let stored = |m: &PolicyMatch| w.stored(m.policy) && m.binding.is_none_or(|b| w.stored(b));
        let matches = index.policies(g, n, self.req.op);
        // a binding whose params the plan has removed by now fails to configure; the namespace
        // controller deletes a namespace's types in no fixed order, so this is racy: taken as
        // rejected, never shown done
        let orphaned = |m: &&PolicyMatch| {
            m.deny_when_params_gone && stored(m) && !m.params.is_empty() && m.params.iter().all(|&p| !w.stored(p))
        };
        if let Some(m) = matches.iter().find(orphaned) {
            let gone: Vec<String> = m.params.iter().map(|&p| describe(g, p)).collect();
            let with_namespace = m.params.iter().any(|&p| {
                g.identity(p)
                    .namespace
                    .and_then(|ns| g.find("", "Namespace", None, ns))
                    .is_some_and(|ns| w.deleting(ns))
            });
            let why = format!(
                "may be rejected (taken as rejected): {} fails to configure once its params are gone ({}, removed by this plan): its parameterNotFoundAction is Deny, and failurePolicy Fail then denies whatever its validationActions{}",
                m.describe(g),
                gone.join(", "),
                if with_namespace {
                    "; the namespace controller deletes a namespace's types in no fixed order, so whatever it deletes after them is denied"
                } else {
                    ""
                }
            );
            return Some(self.reject(why, describe(g, m.policy)));
        }
        for m in matches.into_iter().filter(|m| m.may_deny() && stored(m)) {
            if let Some(failing) = m.fails_to_configure(g) {
                if m.denies() {
                    let why =
                        format!("is denied: {failing}, and its failurePolicy Fail denies every request it matches");
                    return Some(self.reject(why, describe(g, m.policy)));
                }
                self.notes.push(format!(
                "{failing}: with failurePolicy Fail, the {} requests of this plan it matches would be rejected and the plan not go as shown",
                self.req.op.as_str()
            ));
                continue;
            }
            // its CEL, evaluated against the request where it can be (`evaluate`)
            let why = match super::evaluate::judge(g, &m, n) {
                super::evaluate::Judged::Denies { message, .. } => {
                    let why = format!(
                        "is denied: {}'s CEL, evaluated against it, fails a validation: {message:?}",
                        m.describe(g)
                    );
                    return Some(self.reject(why, describe(g, m.policy)));
                }
                super::evaluate::Judged::Admits => continue,
                super::evaluate::Judged::Undecided(why) => why,
            };
            self.notes.push(format!(
            "{} applies to {} requests of this plan and {} ({}): its CEL was evaluated as far as it could be ({why}), so they may be rejected and the plan not go as shown",
            m.describe(g),
            self.req.op.as_str(),
            m.why_deciding(),
            m.reads.join("; ")
        ));
        }

        None
    }

    /// Webhooks with failurePolicy Fail whose backend cannot serve (a configuration the plan
    /// has deleted intercepts nothing any more).
    fn webhooks(&mut self) -> Option<Rejection> {
        let (w, index, n, g) = (self.w, self.index, self.n, self.w.graph());
        let obj = describe(g, n);
        let mut maybe: Option<Rejection> = None;
        for i in index.interceptors(g, n, self.req.op).iter().filter(|i| w.stored(i.configuration)) {
            let (backend, by_plan) = in_plan(w, &i.backend, &i.target);
            let hook = i.describe(g);
            let judged = backend.describe(&i.target);
            if let Backend::Unknown(_) = backend {
                // one note per webhook and operation, not per object
                self.notes.push(format!(
                "{hook} intercepts {} requests of this plan with failurePolicy Fail and its backend cannot be judged ({judged}): if it does not answer, they are rejected and the plan does not go as shown",
                self.req.op.as_str()
            ));
                continue;
            }
            if !backend.is_dead() {
                continue;
            }
            if by_plan && let Backend::NamespaceTerminating { namespace, .. } = &backend {
                self.notes.push(racy_note(&hook, namespace));
            }
            let why = format!(
                "{hook} intercepts {} of {obj} with failurePolicy Fail, and its backend cannot serve: {judged}{}",
                self.req.op.as_str(),
                if by_plan { " (by this plan)" } else { "" }
            );
            let by = describe(g, i.configuration);
            if i.caveats.is_empty() {
                return Some(self.reject(format!("is rejected: {why}"), by));
            }
            let caveats = i.caveats.join("; ");
            self.notes.push(format!(
            "{hook} may or may not intercept {} requests of this plan ({caveats}); with its backend dead, the plan takes them as rejected",
            self.req.op.as_str()
        ));
            maybe.get_or_insert_with(|| {
                self.reject(format!("may be rejected (not evaluated here: {caveats}; taken as rejected): {why}"), by)
            });
        }
        maybe
    }
}

/// A pod the plan deletes (or has deleted) whose owners are gone or going too: no controller
/// brings up a replacement.
fn gone_for_good(w: &impl AdmissionView, pod: NodeId) -> bool {
    (!w.stored(pod) || w.deleting(pod))
        && w.owners_of(pod).iter().all(|r| w.graph().by_uid(&r.uid).is_none_or(|o| !w.stored(o) || w.deleting(o)))
}

/// The plan takes a backend in a namespace it deletes as gone at once; the real one stops
/// when the namespace controller deletes its pods, so earlier requests may still pass.
fn racy_note(what: &str, namespace: &str) -> String {
    format!(
        "{what}: its backend is taken as gone from the moment namespace {namespace} starts terminating; the namespace controller deletes its pods first, so requests sent before they stop may still pass (racy)"
    )
}

/// The backend as the plan leaves it: a Service the plan removed, or one in a namespace the
/// plan is deleting, cannot serve any more. True when it is the plan that killed it.
fn in_plan(w: &impl AdmissionView, backend: &Backend, target: &Target) -> (Backend, bool) {
    if backend.is_dead() {
        return (backend.clone(), false);
    }
    let Target::Service { namespace, name, .. } = target else { return (backend.clone(), false) };
    let g = w.graph();
    if let Some(ns) = g.find("", "Namespace", None, namespace)
        && w.deleting(ns)
    {
        let service = g.find("", "Service", Some(namespace), name).filter(|&s| w.stored(s));
        return (Backend::NamespaceTerminating { service, namespace: namespace.clone() }, true);
    }
    if let Some(s) = g.find("", "Service", Some(namespace), name)
        && !w.stored(s)
    {
        return (Backend::ServiceMissing, true);
    }
    // every pod behind a ready endpoint deleted by the plan, and nothing left to replace it
    if let Backend::Serving { service } = backend
        && let Some(pods) = backend::ready_endpoint_pods(g, namespace, name)
        && pods.iter().all(|&p| gone_for_good(w, p))
    {
        return (Backend::NoReadyEndpoints { service: *service, not_ready: pods.len() }, true);
    }
    (backend.clone(), false)
}

//! What the namespace controller says about a terminating namespace, and the controllers that
//! lived in the namespace being deleted.
//!
//! The namespace controller (`pkg/controller/namespace/deletion`, `status_condition_utils.go`)
//! keeps five conditions on a terminating namespace; each is True with a failure reason and
//! False with an "ok" one:
//!
//! | type | reason when True | cause looked for |
//! |---|---|---|
//! | `NamespaceDeletionDiscoveryFailure` | `DiscoveryFailed` | an unavailable APIService |
//! | `NamespaceDeletionGroupVersionParsingFailure` | `GroupVersionParsingFailed` | a malformed group/version |
//! | `NamespaceDeletionContentFailure` | `ContentDeletionFailed` | a dead conversion webhook, an admission webhook on DELETE, an APIService |
//! | `NamespaceContentRemaining` | `SomeResourcesRemain` | the content still there |
//! | `NamespaceFinalizersRemaining` | `SomeFinalizerRemain` | the finalizers' controllers |
//!
//! They are matched by type and status, quoted, never parsed: their messages change between
//! releases. A failed content deletion is `NamespaceContentDeletionFailure`; the others are
//! quoted as evidence of the namespace's `kubernetes` finalizer, next to the findings that
//! explain them.
//!
//! The namespace controller deletes pods first, so an operator installed in the namespace being
//! deleted is gone before the objects it finalizes; and nothing can be created in a terminating
//! namespace, so it cannot be reinstalled or scaled up there.

use crate::names::{API_SERVICE, CRD};

use super::step::{Reach, Step};
use super::unconvertible;
use super::{Explainer, FindingCode, Related, Severity, describe, remedy};
use crate::admission::Operation;
use crate::admission::{backend, conversion};
use crate::controllers::FinalizerOwner;
use crate::graph::{Graph, NodeId};
use crate::snapshot::Object;

/// The namespace controller's conditions, in the order it writes them.
pub const CONDITIONS: [&str; 5] = [
    "NamespaceDeletionDiscoveryFailure",
    "NamespaceDeletionGroupVersionParsingFailure",
    "NamespaceDeletionContentFailure",
    "NamespaceContentRemaining",
    "NamespaceFinalizersRemaining",
];

// the conditions that say the controller failed to delete content (not merely waits for it)
use crate::admission::denials::CONTENT_FAILURES;

/// `type=True (Reason): "message"`, for quoting.
fn quote(ns: &Object, type_: &str) -> Option<String> {
    let c = ns.condition(type_).filter(|c| c.is_true())?;
    Some(format!("{type_}=True ({}): \"{}\"", c.reason, c.message))
}

/// What each True condition is tied to, for the evidence of the `kubernetes` finalizer.
fn tie(type_: &str) -> &'static str {
    match type_ {
        "NamespaceDeletionDiscoveryFailure" => "an API group cannot be discovered (see NamespaceDiscoveryFailure)",
        "NamespaceDeletionGroupVersionParsingFailure" | "NamespaceDeletionContentFailure" => {
            "the controller could not delete some content (see NamespaceContentDeletionFailure)"
        }
        "NamespaceContentRemaining" => "the content still in the namespace, each object explained below",
        _ => "finalizers of the remaining content, each with its controller judged below",
    }
}

impl Explainer<'_, '_> {
    /// Quotes every True condition of terminating namespace `x`, and explains a failed content
    /// deletion with the causes found.
    pub(super) fn explain_namespace_conditions(&mut self, x: NodeId) {
        let g = self.g;
        let Some(ns) = g.object(x) else { return };
        let quoted: Vec<(&str, String)> = CONDITIONS.iter().filter_map(|t| Some((*t, quote(ns, t)?))).collect();
        if x == self.target {
            for f in self.finalizers.iter_mut().filter(|f| f.name == "kubernetes") {
                for (t, q) in &quoted {
                    f.owner.evidence.push(format!("{q}: {}", tie(t)));
                }
            }
        }
        let failures: Vec<&String> =
            quoted.iter().filter(|(t, _)| CONTENT_FAILURES.contains(t)).map(|(_, q)| q).collect();
        if failures.is_empty() {
            return;
        }
        let (causes, related, mut remedies) = self.content_failure_causes(x);
        let mut message = format!(
            "the namespace controller could not delete all content of {}: {}",
            describe(g, x),
            failures.iter().map(|s| s.as_str()).collect::<Vec<_>>().join("; ")
        );
        if causes.is_empty() {
            message.push_str(
                ". No cause was found in what was read: the quoted message names the resource types that failed",
            );
        } else {
            message.push_str(&format!(". Cause found: {}", causes.join("; ")));
        }
        let remaining = g.in_namespace(Some(ns.name.as_str())).count();
        if remaining > 0
            && ns.condition("NamespaceContentRemaining").is_some_and(|c| !c.is_true())
            && let Some(c) = ns.condition("NamespaceContentRemaining")
        {
            message.push_str(&format!(
                ". {remaining} object(s) are still there although NamespaceContentRemaining says \"{}\": the controller does not count what it could not list",
                c.message
            ));
        }
        remedies.insert(
            0,
            Step::run(
                Reach::Inspect,
                "Read the namespace's conditions; do not clear its 'kubernetes' finalizer by hand: that strands whatever it still holds, including the content that could not be deleted.",
                remedy::inspect(g, x),
            ),
        );
        self.finding(FindingCode::NamespaceContentDeletionFailure, Severity::Error, x, related, message, remedies);
        self.local_stuck.push(x);
    }

    /// The content still in terminating namespace `x`, each object waited for. Under ordered
    /// namespace deletion ([`crate::release`]) pods go first and nothing else is attempted
    /// while one remains: one `NamespaceWaitingForPods` names the pods and counts what waits
    /// behind them, instead of a finding for each object not attempted yet.
    pub(super) fn explain_namespace_content(&mut self, x: NodeId) {
        let g = self.g;
        let Some(ns) = g.object(x) else { return };
        let is_pod = |c: NodeId| {
            let id = g.identity(c);
            id.kind == "Pod" && id.group().is_empty()
        };
        let content: Vec<NodeId> = g.in_namespace(Some(ns.name.as_str())).map(|(id, _)| id).collect();
        let pods: Vec<NodeId> = content.iter().copied().filter(|&c| is_pod(c)).collect();
        let order = crate::release::namespace_deletion(g);
        let waiting = order.pods_first && !pods.is_empty();
        let untouched = |c: NodeId| !is_pod(c) && g.object(c).is_some_and(|o| !o.is_deleting());
        if waiting {
            self.waiting_for_pods(
                x,
                &pods,
                &content.iter().copied().filter(|&c| untouched(c)).collect::<Vec<_>>(),
                &order,
            );
        }
        for c in content {
            let o = g.object(c).expect("observed");
            if waiting && untouched(c) {
                // counted in NamespaceWaitingForPods; still explained (its own problems show)
                self.wait_for(x, c);
                continue;
            }
            let state = if o.is_deleting() {
                format!("is being deleted and keeps finalizers [{}]", o.finalizers.join(", "))
            } else {
                "has not been deleted yet".to_string()
            };
            self.finding(
                FindingCode::NamespaceContentRemaining,
                Severity::Warning,
                c,
                vec![Related::Node(x)],
                format!("terminating namespace {} still holds {}, which {state}", ns.name, describe(g, c)),
                Vec::new(),
            )
            .subject = super::Subject::Context;
            self.wait_for(x, c);
        }
    }

    fn waiting_for_pods(
        &mut self,
        x: NodeId,
        pods: &[NodeId],
        untouched: &[NodeId],
        order: &crate::release::NamespaceDeletion,
    ) {
        let g = self.g;
        let name = g.identity(x).name.to_string();
        let shown: Vec<String> = pods.iter().take(10).map(|&p| describe(g, p)).collect();
        let more =
            if pods.len() > shown.len() { format!(" and {} more", pods.len() - shown.len()) } else { String::new() };
        let rest = if untouched.is_empty() {
            "Nothing else is left in it".to_string()
        } else {
            let mut kinds: std::collections::BTreeMap<&str, usize> = std::collections::BTreeMap::new();
            for &u in untouched {
                *kinds.entry(g.identity(u).kind).or_default() += 1;
            }
            let kinds: Vec<String> = kinds.iter().map(|(k, n)| format!("{n} {k}")).collect();
            format!(
                "The rest of its content ({} object(s): {}) has not been attempted yet (none of it is being deleted); the controller deletes it once the pods are gone",
                untouched.len(),
                kinds.join(", ")
            )
        };
        let message = format!(
            "namespace {name} is in its pod wave: under ordered namespace deletion the namespace controller deletes nothing but pods until every pod is gone, and {} remain ({}{more}). {rest}. What holds the pods is the cause. (Ordered deletion: {}.) The namespace's conditions may read as if nothing were left: the controller writes them without counting what remains while pods do",
            pods.len(),
            shown.join(", "),
            order.basis
        );
        let remedies = vec![
            Step::run(
                Reach::Inspect,
                format!("See the pods that hold namespace {name} (each is explained below):"),
                crate::diagnose::Command::kubectl(["get"])
                    .arg("pods")
                    .namespace(Some(name.as_str()))
                    .flag("-o", "wide"),
            ),
            Step::advice(
                Reach::Inspect,
                "Do not clear the namespace's 'kubernetes' finalizer by hand: everything not attempted yet would be stranded in storage.",
            ),
        ];
        self.finding(
            FindingCode::NamespaceWaitingForPods,
            Severity::Warning,
            x,
            pods.iter().map(|&p| Related::Node(p)).collect(),
            message,
            remedies,
        )
        .subject = super::Subject::Context;
    }

    /// Causes of a content-deletion failure: CRDs with a dead conversion webhook, admission
    /// webhooks that reject the DELETE of the content, unavailable APIServices.
    fn content_failure_causes(&mut self, x: NodeId) -> (Vec<String>, Vec<Related>, Vec<Step>) {
        let g = self.g;
        let ns = g.object(x).expect("explained objects are observed").name.clone();
        let (mut causes, mut related, mut remedies) = (Vec::new(), Vec::new(), Vec::new());
        for &crd in g.of_kind(CRD.0, CRD.1) {
            let Some(o) = g.object(crd) else { continue };
            if o.str_field("/spec/scope") == Some("Cluster") {
                continue;
            }
            let Some(dead) = conversion::dead_converter(g, crd) else { continue };
            let group = o.str_field("/spec/group").unwrap_or("");
            let kind = o.str_field("/spec/names/kind").unwrap_or("");
            let held = g.of_kind(group, kind).iter().filter(|&&i| g.identity(i).namespace == Some(ns.as_str())).count();
            causes.push(format!(
                "{}'s conversion webhook cannot serve ({}); {held} of its objects were read in the namespace",
                describe(g, crd),
                dead.backend.describe(&dead.target)
            ));
            related.push(Related::Node(crd));
            if held == 0 {
                // its objects are not in what was read (they cannot be listed live): say it on
                // the CRD, or nothing would carry the remedies
                let f = unconvertible::unavailable(g, crd, &dead);
                self.findings.push(f);
            }
        }
        let mut confs: Vec<NodeId> = Vec::new();
        for (c, o) in g.in_namespace(Some(ns.as_str())) {
            if o.is_deleting() {
                continue;
            }
            for i in self.shared.admission.interceptors(g, c, Operation::Delete).iter().filter(|i| i.backend.is_dead())
            {
                if !confs.contains(&i.configuration) {
                    confs.push(i.configuration);
                    causes.push(format!(
                        "{} rejects the DELETE of {} ({})",
                        describe(g, i.configuration),
                        describe(g, c),
                        i.backend.describe(&i.target)
                    ));
                    related.push(Related::Node(i.configuration));
                }
            }
        }
        // a denial the condition quotes: the namespace controller's own error, repeated
        let ns_obj = g.object(x).expect("explained objects are observed");
        for t in CONTENT_FAILURES {
            let Some(c) = ns_obj.condition(t).filter(|c| c.is_true()) else { continue };
            let Some(d) = self.shared.admission.quoted_denier(g, c.message) else { continue };
            if related.contains(&Related::Node(d.by)) {
                continue;
            }
            let by = crate::admission::denier(g, d.by, d.binding);
            causes.push(format!(
                "{by} denied the namespace controller's DELETE of content (the {t} condition quotes it)"
            ));
            let (r, steps) = super::denials::denier_steps(g, d.by, d.binding, "the namespace controller's DELETEs");
            related.extend(r);
            remedies.extend(steps);
        }
        for &a in g.of_kind(API_SERVICE.0, API_SERVICE.1) {
            let Some(o) = g.object(a) else { continue };
            if let Some(c) = o.condition("Available").filter(|c| !c.is_true()) {
                causes.push(format!("APIService {} is unavailable ({}: \"{}\")", o.name, c.reason, c.message));
                related.push(Related::Node(a));
            }
        }
        if causes.is_empty() {
            remedies.push(Step::advice(
                Reach::Inspect,
                "Look for the resource types the quoted message names: their API server, conversion webhook or admission webhooks.",
            ));
        }
        (causes, related, remedies)
    }
}

/// The namespace the controller of a finalizer runs (or ran) in, from its attribution: the
/// workload found, else the ServiceAccount its RBAC names or the lease it would hold (as
/// `removed_by` names them: `ServiceAccount ns/name`, `leader of lease ns/name`).
pub fn controller_home(owner: &FinalizerOwner) -> Option<String> {
    if let Some(w) = &owner.workload {
        return w.namespace.clone();
    }
    let by = owner.removed_by.as_deref()?;
    let rest = by.strip_prefix("ServiceAccount ").or_else(|| by.strip_prefix("leader of lease "))?;
    rest.split_once('/').map(|(ns, _)| ns.to_string())
}

/// The root cause, when a finalizer's controller lived in namespace `home`, which is being
/// deleted (appended to what is said of the controller).
pub fn dying_home_cause(home: &str) -> String {
    format!(
        ". Root cause: its controller ran in namespace {home}, which is being deleted: the namespace controller removes workloads (pods first) before the objects they finalize, and nothing can be created in a terminating namespace, so it cannot be brought back there"
    )
}

/// Remedies for a finalizer whose controller lived in namespace `home`, which is being deleted.
/// Nothing restores it there; what can work is running it elsewhere, or cleaning up by hand and
/// then removing the finalizer ([`dying_home_cause`] says why).
pub fn dying_home(g: &Graph, x: NodeId, f: &str, home: &str) -> Vec<Step> {
    let mut steps = vec![Step::advice(
        Reach::Restore,
        format!(
            "Run the controller of {f} outside namespace {home} (install it into another namespace, with its RBAC bound to the new ServiceAccount); it then finishes its cleanup and removes {f} itself."
        ),
    )];
    if let Some(p) = remedy::remove_finalizer(g, x, f) {
        steps.push(Step::run(
            Reach::Destructive,
            format!(
                "Or clean up by hand what {f} guards for {} (whatever its controller created outside this object, in or outside the cluster), then remove the finalizer: without that cleanup it is stranded.",
                describe(g, x)
            ),
            p,
        ));
    }
    steps
}

/// Finalizers whose controller deletes far more than the object when it runs again.
pub fn cascade_warning(f: &str) -> Option<String> {
    f.starts_with("resources-finalizer.argocd.argoproj.io").then(|| {
        format!(
            "Beware: {f} is Argo CD's cascading finalizer. When Argo CD's application controller runs again, it deletes every resource this Application manages before removing the finalizer. If those resources must stay, remove the finalizer instead (they are then left in place, unmanaged)."
        )
    })
}

/// The step that restores an APIService's backend, unless its Service is in a namespace being
/// deleted (then it cannot come back there).
pub fn apiservice_restore_step(g: &Graph, o: &Object) -> Step {
    let svc_ns = o.str_field("/spec/service/namespace").unwrap_or("");
    let svc =
        o.str_field("/spec/service/name").map(|n| format!("{svc_ns}/{n}")).unwrap_or_else(|| "its backend".into());
    if !svc_ns.is_empty() && backend::namespace_terminating(g, svc_ns) {
        return Step::advice(
            Reach::Inspect,
            format!(
                "The API server behind APIService {} (service {svc}) cannot be brought back where it was: namespace {svc_ns} is being deleted and nothing can be created in it. Run it in another namespace and point the APIService at it, or delete the stale registration.",
                o.name
            ),
        );
    }
    Step::advice(Reach::Restore, format!("Restore the API server behind APIService {} (service {svc}).", o.name))
}

#[cfg(test)]
#[path = "namespace_tests.rs"]
mod tests;

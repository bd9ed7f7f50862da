//! A controller that must create something in a namespace being deleted to finish its cleanup
//! (a Secret, an Event, a Job) and is refused: the API server's NamespaceLifecycle admission
//! refuses every create in a terminating namespace (`unable to create new content in namespace
//! X because it is being terminated`, a Forbidden error whose status cause
//! `NamespaceTerminating` does not survive into an Event). The finalizer then waits on the
//! namespace's deletion, and the namespace waits on the finalizer: a deadlock no time ends.
//!
//! Seen in the controller's own Warning events about the object, since its deletion was
//! requested: a Forbidden error (`<resource> "<name>" is forbidden: …`, the StatusError
//! format) that names a namespace being deleted as `namespace <name>`, unquoted, as
//! NamespaceLifecycle writes it (RBAC's refusal reads `in the namespace "<name>"`, quoted, and
//! is not this). The rest of the wording is quoted, never matched. A refusal ends the wait at
//! once (contract §4.3, time rules: a denial quoted from admission): `FinalizerNotProgressing`,
//! stuck, the deadlock named, and the steps that can work: let the controller finish outside
//! the namespace, or remove the finalizer once what it guards outside the cluster is cleaned up.

use k8s_openapi::jiff::Timestamp;

use crate::admission::backend::namespace_terminating;
use crate::admission::readds::names_namespace;
use crate::controllers::FinalizerOwner;
use crate::graph::{Graph, NodeId};

use super::clock::by_the_controller;
use super::describe;
use super::events::{Event, Index, describe_event};
use super::finding::{Finding, FindingCode, Severity, Subject};
use super::remedy;
use super::step::{Reach, Step};

/// The refusal seen, and the namespace whose deletion refuses it.
pub(super) struct CreateRefused<'i> {
    /// The terminating namespace the refusal names.
    pub namespace: String,
    /// The controller's most recent Warning event quoting it.
    pub event: &'i Event,
}

/// The refusal of a create in a terminating namespace that the controller of `finalizer` on
/// `x` reports about `x` since `x`'s deletion was requested, if it does.
pub(super) fn find<'i>(
    g: &Graph,
    idx: &'i Index,
    x: NodeId,
    finalizer: &str,
    owner: &FinalizerOwner,
) -> Option<CreateRefused<'i>> {
    let o = g.object(x)?;
    let requested = o.deletion_requested_at()?;
    idx.warnings(&o.uid).into_iter().find_map(|e| {
        let by = e.reporting_controller.as_deref().is_some_and(|c| by_the_controller(c, owner, finalizer));
        let recent = e.last_seen.is_some_and(|t| t >= requested);
        if !(by && recent) {
            return None;
        }
        let namespace = names_namespace(&e.message).filter(|ns| namespace_terminating(g, ns))?;
        Some(CreateRefused { namespace: namespace.to_string(), event: e })
    })
}

impl CreateRefused<'_> {
    /// `FinalizerNotProgressing` naming the deadlock; `look` is where to read (events, logs).
    #[allow(clippy::too_many_arguments)] // the answer's context, one value each, as `alive_finding`
    pub(super) fn finding(
        &self,
        g: &Graph,
        x: NodeId,
        at: Option<usize>,
        finalizer: &str,
        owner: &FinalizerOwner,
        now: Timestamp,
        look: Vec<Step>,
    ) -> Finding {
        let who = owner.removed_by.clone().unwrap_or_else(|| format!("the controller of {finalizer}"));
        let ns = &self.namespace;
        let deadlock = if g.identity(x).namespace == Some(ns.as_str()) {
            format!("{finalizer} waits for the namespace's deletion to end, and the namespace waits for {finalizer}")
        } else {
            format!("{finalizer} waits for namespace {ns}'s deletion to end")
        };
        let message = format!(
            "{} keeps {finalizer}; {who}, which is alive, is refused what its cleanup must create in namespace {ns}, which is being deleted (the API server creates nothing new in a terminating namespace): {deadlock}, and no time ends that. It reports: {}",
            describe(g, x),
            describe_event(self.event, now)
        );
        let mut steps = look;
        steps.push(Step::advice(
            Reach::Restore,
            format!(
                "Let {who} finish outside namespace {ns}: where it can be told to keep what it creates for its cleanup elsewhere (another namespace, or not at all), its cleanup completes and it removes {finalizer} itself. Deleting the namespace's content first, or the object before the namespace next time, avoids the deadlock."
            ),
        ));
        if let Some(p) = remedy::remove_finalizer_at(g, x, at, finalizer) {
            steps.push(Step::run(
                Reach::Destructive,
                format!(
                    "Or, once whatever {finalizer} guards outside the cluster has been cleaned up by hand (its controller cannot finish it here): remove the finalizer."
                ),
                p,
            ));
        }
        Finding {
            code: FindingCode::FinalizerNotProgressing,
            severity: Severity::Error,
            object: x,
            related: g.find("", "Namespace", None, ns).map(super::Related::Node).into_iter().collect(),
            message,
            remedy: steps,
            subject: Subject::Finalizer { name: finalizer.to_string(), owner: owner.clone() },
            cannot_tell: false,
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use crate::controllers::{Controller, ControllerState, FinalizerOwner};
    use crate::diagnose::events::Index;
    use crate::diagnose::progress::{Options, alive_finding};
    use crate::diagnose::{FindingCode, Reach};
    use crate::testing::{ObjExt, graph, node, obj};

    const CLEANUP: &str = "media.example.com/cleanup";

    fn alive() -> FinalizerOwner {
        FinalizerOwner {
            removed_by: Some("Deployment media-system/bucket-controller".into()),
            controller: ControllerState::Alive,
            evidence: vec!["1/1 pods ready".into()],
            workload: Some(Controller {
                kind: "Deployment".into(),
                namespace: Some("media-system".into()),
                name: "bucket-controller".into(),
            }),
            since: None,
            by_permission_only: false,
            added_by_person: None,
        }
    }

    /// Namespace studio being deleted, its bucket keeping the finalizer, and the controller's
    /// Warning about the bucket quoting `message` twice.
    fn judge(message: &str) -> (crate::diagnose::Finding, bool) {
        let ns = obj("v1", "Namespace", None, "studio", "ns").deleting("2026-11-29T11:50:00Z");
        let bucket = obj("media.example.com/v1", "Bucket", Some("studio"), "raw", "b1")
            .deleting("2026-11-29T11:50:00Z")
            .finalizers(&[CLEANUP]);
        let event: Value = obj("v1", "Event", Some("studio"), "raw.1", "e1")
            .with("involvedObject", json!({"kind": "Bucket", "name": "raw", "namespace": "studio", "uid": "b1"}))
            .with("type", json!("Warning"))
            .with("reason", json!("PurgeFailed"))
            .with("message", json!(message))
            .with("count", json!(2))
            .with("lastTimestamp", json!("2026-11-29T11:58:00Z"))
            .with("source", json!({"component": "bucket-controller"}));
        let g = graph(vec![ns, bucket, event]);
        let idx = Index::new(&g);
        let x = node(&g, "Bucket", "raw");
        alive_finding(
            &g,
            &idx,
            x,
            Some(0),
            CLEANUP,
            &alive(),
            "2026-11-29T12:00:00Z".parse().unwrap(),
            &Options::default(),
        )
    }

    #[test]
    fn a_create_refused_in_the_namespace_being_deleted_is_a_deadlock_at_once() {
        let (f, stuck) = judge(
            "purging: jobs.batch \"purge-raw\" is forbidden: unable to create new content in namespace studio because it is being terminated",
        );
        assert!(stuck, "ten minutes into the deletion, twice seen: a deadlock ends the wait at once");
        assert_eq!(f.code, FindingCode::FinalizerNotProgressing);
        assert!(f.message.contains("the namespace waits for media.example.com/cleanup"), "{}", f.message);
        assert!(f.message.contains("because it is being terminated"), "quoted: {}", f.message);
        assert!(f.remedy.iter().any(|s| s.text.contains("finish outside namespace studio")));
        assert!(!f.remedy.iter().any(|s| s.text.contains("restart")), "a restart changes nothing here");
        assert_eq!(f.remedy.last().map(|s| s.reach), Some(Reach::Destructive));
    }

    #[test]
    fn an_rbac_refusal_in_that_namespace_is_not_this_deadlock() {
        let (f, stuck) = judge(
            "jobs.batch is forbidden: User \"system:serviceaccount:media-system:bucket-controller\" cannot create resource \"jobs\" in API group \"batch\" in the namespace \"studio\"",
        );
        assert!(!stuck);
        assert_eq!(f.code, FindingCode::FinalizerPending);
    }
}

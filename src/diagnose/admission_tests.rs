//! The findings a webhook gives on a stuck object (its matching is `admission::webhooks`'s tests).

use serde_json::{Value, json};

use super::*;
use crate::controllers::Liveness;
use crate::diagnose::why_stuck;
use crate::testing::{ObjExt, graph, node, obj};

const NOW: &str = "2026-11-29T12:00:00Z";
const DELETED: &str = "2026-11-29T11:00:00Z";

fn crd() -> Value {
    obj("apiextensions.k8s.io/v1", "CustomResourceDefinition", None, "accounts.ledger.example.org", "crd").with(
        "spec",
        json!({"group": "ledger.example.org", "scope": "Namespaced",
               "names": {"kind": "Account", "plural": "accounts", "singular": "account", "listKind": "AccountList"},
               "versions": [{"name": "v1", "served": true, "storage": true}]}),
    )
}

fn ns(name: &str, labels: Value) -> Value {
    let mut n = obj("v1", "Namespace", None, name, &format!("ns-{name}"));
    n["metadata"]["labels"] = labels;
    n
}

fn account(labels: Value) -> Value {
    let mut a = obj("ledger.example.org/v1", "Account", Some("finance"), "acme", "acme")
        .deleting(DELETED)
        .finalizers(&["ledger.example.org/archive"]);
    a["metadata"]["labels"] = labels;
    a
}

fn rule(ops: &[&str], resources: &[&str], scope: &str) -> Value {
    json!({"apiGroups": ["ledger.example.org"], "apiVersions": ["v1"], "operations": ops, "resources": resources, "scope": scope})
}

fn config(webhook: Value) -> Value {
    obj("admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration", None, "ledger-policy", "vwc")
        .with("webhooks", json!([webhook]))
}

fn hook(rules: Value) -> Value {
    json!({"name": "accounts.ledger.example.org", "failurePolicy": "Fail", "rules": rules,
           "clientConfig": {"service": {"namespace": "ledger-system", "name": "ledger-webhook"}}})
}

/// The account, its namespace, the backend's namespace (no Service: missing), and `webhook`.
fn world(webhook: Value, account_labels: Value, ns_labels: Value) -> Graph {
    graph(vec![
        crd(),
        ns("finance", ns_labels),
        ns("ledger-system", json!({})),
        account(account_labels),
        config(webhook),
    ])
}

fn diagnose(g: &Graph) -> crate::diagnose::Diagnosis {
    let live = Liveness::new(g, NOW.parse().unwrap());
    why_stuck(g, &live, node(g, "Account", "acme"))
}

#[test]
fn a_dead_backend_makes_the_object_stuck_with_the_configuration_related() {
    let g = world(hook(json!([rule(&["UPDATE"], &["accounts"], "*")])), json!({}), json!({}));
    let d = diagnose(&g);
    assert!(d.stuck);
    let f = d.findings.iter().find(|f| f.code == FindingCode::AdmissionWebhookUnavailable).expect("finding");
    assert_eq!(f.related.first(), Some(&Related::Node(node(&g, "ValidatingWebhookConfiguration", "ledger-policy"))));
    let conn = crate::diagnose::Connection::default();
    let delete = f.remedy.iter().filter_map(|s| s.command.as_ref()).map(|c| c.line(&conn));
    assert!(
        delete.clone().any(|l| l == "kubectl delete validatingwebhookconfiguration ledger-policy"),
        "{:?}",
        delete.collect::<Vec<_>>()
    );
    assert!(!f.remedy[0].reach.destructive());
}

/// The answer's step that patches a finalizer away.
fn finalizer_patch(d: &crate::diagnose::Diagnosis) -> &crate::diagnose::step::Step {
    d.findings
        .iter()
        .flat_map(|f| &f.remedy)
        .find(|s| s.command.as_ref().is_some_and(|c| c.line(&Default::default()).starts_with("kubectl patch")))
        .expect("a finalizer patch")
}

#[test]
fn a_finalizer_patch_in_the_same_answer_says_it_will_be_rejected() {
    // no controller anywhere: the answer also prints the finalizer's removal
    let g = world(hook(json!([rule(&["UPDATE"], &["accounts"], "*")])), json!({}), json!({}));
    let d = diagnose(&g);
    let patch = finalizer_patch(&d);
    assert!(patch.text.contains("rejected"), "{}", patch.text);
    assert!(patch.reach > Reach::Disrupt, "the patch ranks after removing the configuration");
}

/// The account behind a webhook whose Service `svc` has a ready endpoint, and `extra`.
fn behind_service(svc: Value, extra: Vec<Value>) -> Graph {
    let mut slice = obj("discovery.k8s.io/v1", "EndpointSlice", Some("ledger-system"), "lw-1", "sl")
        .with("endpoints", json!([{"addresses": ["10.0.0.1"], "conditions": {"ready": true}}]));
    slice["metadata"]["labels"] = json!({"kubernetes.io/service-name": "ledger-webhook"});
    let mut objs = vec![
        crd(),
        ns("finance", json!({})),
        ns("ledger-system", json!({})),
        account(json!({})),
        config(hook(json!([rule(&["UPDATE"], &["accounts"], "*")]))),
        svc,
        slice,
    ];
    objs.extend(extra);
    graph(objs)
}

fn cluster_ip_service() -> Value {
    obj("v1", "Service", Some("ledger-system"), "ledger-webhook", "svc").with("spec", json!({"type": "ClusterIP"}))
}

#[test]
fn a_serving_backend_gives_no_finding() {
    let g = behind_service(cluster_ip_service(), vec![]);
    let d = diagnose(&g);
    assert!(!d.findings.iter().any(|f| f.code == FindingCode::AdmissionWebhookUnavailable));
}

#[test]
fn content_of_a_terminating_namespace_is_checked_for_delete() {
    let mut cm = obj("v1", "ConfigMap", Some("finance"), "cfg", "cm");
    cm["metadata"]["labels"] = json!({});
    let w = json!({"name": "cm.example.org", "failurePolicy": "Fail",
        "rules": [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["DELETE"], "resources": ["configmaps"]}],
        "clientConfig": {"service": {"namespace": "ledger-system", "name": "ledger-webhook"}}});
    let g = graph(vec![
        ns("finance", json!({})).deleting(DELETED).with("spec", json!({"finalizers": ["kubernetes"]})),
        ns("ledger-system", json!({})),
        cm,
        config(w),
    ]);
    let live = Liveness::new(&g, NOW.parse().unwrap());
    let d = why_stuck(&g, &live, node(&g, "Namespace", "finance"));
    assert!(d.stuck);
    assert!(
        d.findings
            .iter()
            .any(|f| f.code == FindingCode::AdmissionWebhookUnavailable && f.object == node(&g, "ConfigMap", "cfg"))
    );
}

#[test]
fn a_backend_in_a_terminating_namespace_is_not_offered_for_restore() {
    let g = graph(vec![
        crd(),
        ns("finance", json!({})),
        ns("ledger-system", json!({})).deleting(DELETED),
        account(json!({})),
        config(hook(json!([rule(&["UPDATE"], &["accounts"], "*")]))),
    ]);
    let d = diagnose(&g);
    let f = d.findings.iter().find(|f| f.code == FindingCode::AdmissionWebhookUnavailable).expect("finding");
    assert!(f.message.contains("being deleted"), "{}", f.message);
    assert!(!f.remedy.iter().any(|s| s.reach == Reach::Restore), "{:?}", f.remedy);
}

fn evidence(g: &Graph) -> Vec<String> {
    let live = Liveness::new(g, NOW.parse().unwrap());
    let d = why_stuck(g, &live, node(g, "Account", "acme"));
    d.finalizers.iter().flat_map(|f| f.owner.evidence.clone()).collect()
}

#[test]
fn an_unjudged_backend_is_named_in_the_finalizers_evidence() {
    let mut h = hook(json!([rule(&["UPDATE"], &["accounts"], "*")]));
    h["clientConfig"] = json!({"url": "https://hooks.example.com/validate"});
    let e = evidence(&world(h, json!({}), json!({})));
    assert!(
        e.iter().any(|e| e.contains("cannot be judged") && e.contains("https://hooks.example.com/validate")),
        "{e:?}"
    );
}

#[test]
fn unreadable_webhook_configurations_leave_the_admission_check_unknown() {
    let mut s = crate::testing::snapshot(vec![crd(), ns("finance", json!({})), account(json!({}))]);
    s.incomplete.push(
        "validatingwebhookconfigurations.admissionregistration.k8s.io could not be listed: forbidden (403)".into(),
    );
    let e = evidence(&Graph::build(s));
    assert!(
        e.iter().any(|e| e.starts_with("admission webhooks: Unknown") && e.contains("validatingwebhookconfigurations")),
        "{e:?}"
    );
    // read, and none there: nothing to say
    let e = evidence(&graph(vec![crd(), ns("finance", json!({})), account(json!({}))]));
    assert!(!e.iter().any(|e| e.contains("admission webhooks")), "{e:?}");
}

#[test]
fn a_terminating_pod_whose_final_delete_a_dead_webhook_rejects_is_stuck() {
    let w = json!({"name": "pods.example.org", "failurePolicy": "Fail",
        "rules": [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["DELETE"], "resources": ["pods"]}],
        "clientConfig": {"service": {"namespace": "ledger-system", "name": "ledger-webhook"}}});
    let pod = obj("v1", "Pod", Some("finance"), "p", "p").deleting(DELETED);
    let g = graph(vec![ns("finance", json!({})), ns("ledger-system", json!({})), pod, config(w)]);
    let live = Liveness::new(&g, NOW.parse().unwrap());
    let d = why_stuck(&g, &live, node(&g, "Pod", "p"));
    assert!(d.stuck);
    let f = d.findings.iter().find(|f| f.code == FindingCode::AdmissionWebhookUnavailable).expect("finding");
    assert!(f.message.contains("kubelet's final DELETE"), "{}", f.message);
    // the same pod, no webhook on pods DELETE: no such finding
    let g = graph(vec![ns("finance", json!({})), obj("v1", "Pod", Some("finance"), "p", "p").deleting(DELETED)]);
    let live = Liveness::new(&g, NOW.parse().unwrap());
    let d = why_stuck(&g, &live, node(&g, "Pod", "p"));
    assert!(!d.findings.iter().any(|f| f.code == FindingCode::AdmissionWebhookUnavailable));
}

#[test]
fn a_serving_webhook_seen_denying_in_an_event_makes_the_object_stuck() {
    let event = |msg: &str| {
        obj("v1", "Event", Some("finance"), "acme.1", "ev-1")
            .with("involvedObject", json!({"kind": "Account", "name": "acme", "namespace": "finance", "uid": "acme"}))
            .with("type", json!("Warning"))
            .with("reason", json!("FinalizerRemovalFailed"))
            .with("message", json!(msg))
    };
    let world = |ev: Value| behind_service(cluster_ip_service(), vec![ev]);
    let g = world(event(
        "admission webhook \"accounts.ledger.example.org\" denied the request: accounts with a balance keep their finalizer",
    ));
    let d = diagnose(&g);
    let f = d.findings.iter().find(|f| f.code == FindingCode::AdmissionDenied).expect("a seen denial");
    assert_eq!(f.severity, Severity::Error);
    assert_eq!(f.related, [Related::Node(node(&g, "ValidatingWebhookConfiguration", "ledger-policy"))]);
    assert!(f.message.contains("accounts with a balance keep their finalizer"), "{}", f.message);
    // a denial naming a webhook the cluster does not hold decides nothing
    let g = world(event("admission webhook \"other.example.org\" denied the request: no"));
    assert!(!diagnose(&g).findings.iter().any(|f| f.code == FindingCode::AdmissionDenied));
}

// ----- admission policies ------------------------------------------------------------------

/// Only the account controller may remove the archive finalizer: who sends a request is not
/// known here, so its CEL cannot be settled and it may deny.
const KEEP: &str = "!has(oldObject.metadata.deletionTimestamp) || 'ledger.example.org/archive' in object.metadata.finalizers || request.userInfo.username == 'system:serviceaccount:ledger:account-controller'";

fn policy(ops: &[&str]) -> Value {
    obj("admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicy", None, "keep-archive", "vap").with(
        "spec",
        json!({"failurePolicy": "Fail",
               "matchConstraints": {"resourceRules": [rule(ops, &["accounts"], "*")]},
               "validations": [{"expression": KEEP, "message": "accounts keep their archive finalizer"}]}),
    )
}

fn binding(actions: &[&str]) -> Value {
    obj("admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicyBinding", None, "keep-archive-all", "vapb")
        .with("spec", json!({"policyName": "keep-archive", "validationActions": actions}))
}

fn denial_event(message: &str, last: &str) -> Value {
    obj("v1", "Event", Some("finance"), "acme.2", "ev-2")
        .with("involvedObject", json!({"kind": "Account", "name": "acme", "namespace": "finance", "uid": "acme"}))
        .with("type", json!("Warning"))
        .with("reason", json!("FinalizerRemovalFailed"))
        .with("source", json!({"component": "account-controller"}))
        .with("lastTimestamp", json!(last))
        .with("message", json!(message))
}

/// What a finding about the policy points at: it, then its binding.
fn policy_and_binding(g: &Graph) -> [Related; 2] {
    [
        Related::Node(node(g, "ValidatingAdmissionPolicy", "keep-archive")),
        Related::Node(node(g, "ValidatingAdmissionPolicyBinding", "keep-archive-all")),
    ]
}

fn policy_world(extra: Vec<Value>) -> Graph {
    let mut objs = vec![crd(), ns("finance", json!({})), account(json!({}))];
    objs.extend(extra);
    graph(objs)
}

#[test]
fn a_policy_that_reads_the_finalizers_on_the_update_is_a_warning_that_it_may_deny() {
    let g = policy_world(vec![policy(&["UPDATE"]), binding(&["Deny"])]);
    let d = diagnose(&g);
    let f = d.findings.iter().find(|f| f.code == FindingCode::AdmissionDenied).expect("a may-deny warning");
    assert_eq!(f.severity, Severity::Warning);
    assert_eq!(f.related, policy_and_binding(&g));
    assert!(f.message.contains("may deny") && f.message.contains("deletionTimestamp"), "{}", f.message);
    assert!(f.remedy.iter().all(|s| !s.reach.destructive()), "{:?}", f.remedy);
    // what settles it: the finalizer's removal as a server-side dry run, which changes nothing
    let ask = f.remedy.iter().find(|s| s.text.starts_with("Ask the API server")).expect("a dry run");
    let line = ask.command.as_ref().unwrap().line(&Default::default());
    assert_eq!(ask.reach, Reach::Inspect);
    assert!(
        line.starts_with("kubectl patch accounts.ledger.example.org acme -n finance --type=json")
            && line.ends_with("--dry-run=server"),
        "{line}"
    );
    // a warning only: the verdict is the one without the policy
    let without = diagnose(&policy_world(vec![]));
    assert_eq!(d.verdict(), without.verdict());
    // Warn only, or rules that never see the UPDATE: nothing to say
    for g in [
        policy_world(vec![policy(&["UPDATE"]), binding(&["Warn", "Audit"])]),
        policy_world(vec![policy(&["CREATE"]), binding(&["Deny"])]),
    ] {
        assert!(!diagnose(&g).findings.iter().any(|f| f.code == FindingCode::AdmissionDenied));
    }
}

#[test]
fn a_policy_seen_denying_in_an_event_makes_the_object_stuck() {
    let quoted = "removing finalizer ledger.example.org/archive: accounts.ledger.example.org \"acme\" is forbidden: ValidatingAdmissionPolicy 'keep-archive' with binding 'keep-archive-all' denied request: accounts keep their archive finalizer";
    let g = policy_world(vec![policy(&["UPDATE"]), binding(&["Deny"]), denial_event(quoted, "2026-11-29T11:58:00Z")]);
    let d = diagnose(&g);
    assert!(d.stuck);
    let found: Vec<_> = d.findings.iter().filter(|f| f.code == FindingCode::AdmissionDenied).collect();
    assert_eq!(found.len(), 1, "the denial replaces the warning: {found:?}");
    let f = found[0];
    assert_eq!(f.severity, Severity::Error);
    assert_eq!(f.related.len(), 2, "the policy and its binding");
    assert!(
        f.message.contains("denied request: accounts keep their archive finalizer")
            && f.message.contains("binding keep-archive-all"),
        "{}",
        f.message
    );
    // the finalizer's removal printed in the same answer is denied too, and says so
    let patch = finalizer_patch(&d);
    assert!(patch.text.contains("ValidatingAdmissionPolicy keep-archive allows it"), "{}", patch.text);
    // seen before the deletion was asked for: about another request
    let g = policy_world(vec![policy(&["UPDATE"]), binding(&["Deny"]), denial_event(quoted, "2026-11-29T10:00:00Z")]);
    assert!(
        !diagnose(&g).findings.iter().any(|f| f.code == FindingCode::AdmissionDenied && f.severity == Severity::Error)
    );
    // a policy whose rules never see the UPDATE did not deny it
    let g = policy_world(vec![policy(&["CREATE"]), binding(&["Deny"]), denial_event(quoted, "2026-11-29T11:58:00Z")]);
    assert!(!diagnose(&g).findings.iter().any(|f| f.code == FindingCode::AdmissionDenied));
}

#[test]
fn a_denial_of_the_namespace_controllers_delete_counts_only_once_the_namespace_is_deleted() {
    // the Account is not being deleted; its namespace is, so the namespace controller DELETEs it
    let acct = obj("ledger.example.org/v1", "Account", Some("finance"), "acme", "acme");
    let quoted = "ValidatingAdmissionPolicy 'keep-archive' with binding 'keep-archive-all' denied request: no";
    let world = |last: &str| {
        graph(vec![
            crd(),
            ns("finance", json!({}))
                .deleting("2026-11-29T11:30:00Z")
                .with("spec", json!({"finalizers": ["kubernetes"]})),
            acct.clone(),
            policy(&["DELETE"]),
            binding(&["Deny"]),
            denial_event(quoted, last),
        ])
    };
    let ns_answer = |g: &Graph| {
        let live = Liveness::new(g, NOW.parse().unwrap());
        why_stuck(g, &live, node(g, "Namespace", "finance"))
    };
    let g = world("2026-11-29T11:45:00Z");
    let d = ns_answer(&g);
    let f = d
        .findings
        .iter()
        .find(|f| f.code == FindingCode::AdmissionDenied)
        .unwrap_or_else(|| panic!("{:#?}", d.findings.iter().map(|f| (f.code, &f.message)).collect::<Vec<_>>()));
    assert_eq!((f.severity, f.object), (Severity::Error, node(&g, "Account", "acme")));
    assert!(f.message.contains("the DELETE that removes Account finance/acme"), "{}", f.message);
    // seen before the namespace was deleted: about another request
    let g = world("2026-11-29T11:00:00Z");
    assert!(
        !ns_answer(&g).findings.iter().any(|f| f.code == FindingCode::AdmissionDenied && f.severity == Severity::Error)
    );
}

/// The policy taking its params from a ConfigMap that `finance/limits` names, bound Warn-only,
/// read with discovery data (as live reads are).
fn params_world(extra: Vec<Value>) -> Graph {
    let mut p = policy(&["UPDATE"]);
    p["spec"]["paramKind"] = json!({"apiVersion": "v1", "kind": "ConfigMap"});
    let mut b = binding(&["Warn"]);
    b["spec"]["paramRef"] = json!({"name": "limits", "namespace": "finance", "parameterNotFoundAction": "Deny"});
    let mut objs = vec![crd(), ns("finance", json!({})), account(json!({})), p, b];
    objs.extend(extra);
    crate::testing::graph_discovered(objs, vec![])
}

#[test]
fn a_policy_whose_params_are_missing_denies_the_finalizers_removal_and_the_object_is_stuck() {
    let g = params_world(vec![]);
    let d = diagnose(&g);
    assert!(d.stuck);
    let f = d.findings.iter().find(|f| f.code == FindingCode::AdmissionDenied).expect("a denial by configuration");
    assert_eq!(f.severity, Severity::Error);
    assert_eq!(f.related, policy_and_binding(&g));
    for part in ["fails to configure", "ConfigMap finance/limits", "the UPDATE that removes ledger.example.org/archive"]
    {
        assert!(f.message.contains(part), "{part}: {}", f.message);
    }
    // read first, then let it configure (create the params), and only then turn it off
    let reaches: Vec<Reach> = f.remedy.iter().map(|s| s.reach).collect();
    assert_eq!(reaches, [Reach::Inspect, Reach::Inspect, Reach::Restore, Reach::Disrupt], "{:?}", f.remedy);
    assert!(f.remedy[2].text.contains("create the ConfigMap finance/limits"), "{}", f.remedy[2].text);
    // the finalizer's removal printed in the same answer is denied too, and says so
    assert!(finalizer_patch(&d).text.contains("ValidatingAdmissionPolicy keep-archive allows it"));
    // the params there: the expressions decide, and a Warn-only binding denies nothing
    let limits = obj("v1", "ConfigMap", Some("finance"), "limits", "cm-limits");
    let d = diagnose(&params_world(vec![limits]));
    assert!(!d.findings.iter().any(|f| f.code == FindingCode::AdmissionDenied), "{:?}", d.findings);
    assert_eq!(d.verdict(), diagnose(&policy_world(vec![])).verdict());
}

/// Namespace finance being deleted with three Accounts in it (none being deleted), a policy on
/// their DELETEs bound with Deny, and `condition` on the namespace when given.
fn deleting_namespace_with_a_delete_policy(condition: Option<&str>) -> Graph {
    let mut p = policy(&["DELETE"]);
    p["spec"]["validations"] = json!([{"expression": "!('keep' in oldObject.metadata.labels)"}]);
    let mut finance =
        ns("finance", json!({})).deleting("2026-11-29T11:30:00Z").with("spec", json!({"finalizers": ["kubernetes"]}));
    if let Some(message) = condition {
        finance["status"] = json!({"phase": "Terminating", "conditions": [{"type": "NamespaceDeletionContentFailure",
            "status": "True", "reason": "ContentDeletionFailed", "message": message}]});
    }
    let mut objs = vec![crd(), finance, p, binding(&["Deny"])];
    for i in 0..3 {
        objs.push(obj("ledger.example.org/v1", "Account", Some("finance"), &format!("acct-{i}"), &format!("acct-{i}")));
    }
    graph(objs)
}

fn namespace_answer(g: &Graph) -> crate::diagnose::Diagnosis {
    let live = Liveness::new(g, NOW.parse().unwrap());
    why_stuck(g, &live, node(g, "Namespace", "finance"))
}

#[test]
fn a_policy_that_may_deny_the_deletes_of_a_namespaces_content_is_one_warning_naming_them() {
    let g = deleting_namespace_with_a_delete_policy(None);
    let d = namespace_answer(&g);
    let found: Vec<_> = d.findings.iter().filter(|f| f.code == FindingCode::AdmissionDenied).collect();
    assert_eq!(found.len(), 1, "one for the three Accounts: {found:?}");
    let f = found[0];
    assert_eq!(f.severity, Severity::Warning);
    assert!(
        f.message.contains(
            "the DELETEs that remove 3 objects (Account finance/acct-0, Account finance/acct-1, Account finance/acct-2)"
        ),
        "{}",
        f.message
    );
    assert!(f.message.contains("it may deny them"), "{}", f.message);
    for i in 0..3 {
        assert!(
            f.object == node(&g, "Account", &format!("acct-{i}"))
                || f.related.contains(&Related::Node(node(&g, "Account", &format!("acct-{i}"))))
        );
    }
}

#[test]
fn a_denial_the_namespaces_condition_quotes_is_the_cause_of_its_content_failure() {
    let quoted = "Failed to delete all resource types, 1 remaining: accounts.ledger.example.org \"acct-0\" is forbidden: ValidatingAdmissionPolicy 'keep-archive' with binding 'keep-archive-all' denied request: kept";
    let g = deleting_namespace_with_a_delete_policy(Some(quoted));
    let d = namespace_answer(&g);
    assert!(d.stuck);
    let f =
        d.findings.iter().find(|f| f.code == FindingCode::NamespaceContentDeletionFailure).expect("content failure");
    assert!(f.message.contains("Cause found: ValidatingAdmissionPolicy keep-archive (binding keep-archive-all) denied the namespace controller's DELETE"), "{}", f.message);
    assert!(f.related.contains(&Related::Node(node(&g, "ValidatingAdmissionPolicy", "keep-archive"))));
    assert!(
        f.remedy.iter().any(|s| s.text.contains("so it allows the namespace controller's DELETEs")),
        "{:?}",
        f.remedy
    );
    // seen denying: no warning that it "may"
    assert!(
        !d.findings.iter().any(|f| f.code == FindingCode::AdmissionDenied && f.severity == Severity::Warning),
        "{:?}",
        d.findings
    );
    // one model (contract §4.3.4): the content the condition's denier is sent the DELETE of is
    // denied in each answer about it, and plan blocks it and the namespace
    let acct = node(&g, "Account", "acct-1");
    let live = Liveness::new(&g, NOW.parse().unwrap());
    let a = why_stuck(&g, &live, acct);
    assert!(
        a.findings.iter().any(|f| f.code == FindingCode::AdmissionDenied
            && f.severity == Severity::Error
            && f.message.contains("the NamespaceDeletionContentFailure condition of namespace finance")),
        "{:?}",
        a.findings
    );
    let opts = crate::plan::PlanOptions {
        cascade: crate::plan::Cascade::Background,
        assume_finalizers: None,
        now: NOW.parse().unwrap(),
    };
    let p = crate::plan::plan(&g, &live, node(&g, "Namespace", "finance"), &opts);
    let blocked: Vec<NodeId> = p.result.blocked.iter().map(|b| b.object).collect();
    for i in 0..3 {
        assert!(blocked.contains(&node(&g, "Account", &format!("acct-{i}"))), "{blocked:?}");
    }
    assert!(blocked.contains(&node(&g, "Namespace", "finance")), "{blocked:?}");
    // a message that quotes no name the cluster holds: no cause
    let g =
        deleting_namespace_with_a_delete_policy(Some("Failed to delete all resource types, 1 remaining: some error"));
    let f = namespace_answer(&g)
        .findings
        .into_iter()
        .find(|f| f.code == FindingCode::NamespaceContentDeletionFailure)
        .unwrap();
    assert!(f.message.contains("No cause was found"), "{}", f.message);
}

#[test]
fn a_seen_denial_by_a_policy_that_fails_to_configure_is_answered_with_its_configuration() {
    let quoted = "ValidatingAdmissionPolicy 'keep-archive' with binding 'keep-archive-all' denied request: failed to configure binding: no params found";
    let g = params_world(vec![denial_event(quoted, "2026-11-29T11:58:00Z")]);
    let d = diagnose(&g);
    let found: Vec<_> = d.findings.iter().filter(|f| f.code == FindingCode::AdmissionDenied).collect();
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(
        found[0].message.contains("fails to configure")
            && found[0].message.contains("A Warning Event (FinalizerRemovalFailed) quotes the denial"),
        "{}",
        found[0].message
    );
    assert!(
        found[0]
            .remedy
            .iter()
            .any(|s| s.text.starts_with("Let it configure again: create the ConfigMap finance/limits")),
        "{:?}",
        found[0].remedy
    );
}

#[test]
fn a_backend_service_that_no_longer_exposes_the_port_called_makes_the_object_stuck() {
    let svc = obj("v1", "Service", Some("ledger-system"), "ledger-webhook", "svc").with(
        "spec",
        json!({"type": "ClusterIP", "clusterIP": "10.96.0.9", "ports": [{"name": "https", "port": 9443}]}),
    );
    let g = behind_service(svc, vec![]);
    let d = diagnose(&g);
    assert!(d.stuck);
    let f = d.findings.iter().find(|f| f.code == FindingCode::AdmissionWebhookUnavailable).expect("finding");
    assert!(f.message.contains("exposes no port 443, the one called (it exposes 9443)"), "{}", f.message);
    let texts: Vec<&str> = f.remedy.iter().map(|s| s.text.as_ref()).collect();
    assert!(
        texts.iter().any(|t| t.starts_with("Expose port 443 on Service ledger-system/ledger-webhook again")),
        "{texts:?}"
    );
    assert!(!texts.iter().any(|t| t.contains("no ready endpoint")), "{texts:?}");
}

/// Namespace finance being deleted with three Accounts, a Warn-only binding of a policy on
/// their DELETEs that takes its params from ConfigMap `limits` of the request's namespace
/// (Deny when missing), the ConfigMap there when `params`; read with discovery data.
fn namespace_with_its_own_params(params: bool) -> Graph {
    let mut p = policy(&["DELETE"]);
    p["spec"]["paramKind"] = json!({"apiVersion": "v1", "kind": "ConfigMap"});
    let mut b = binding(&["Warn"]);
    b["spec"]["paramRef"] = json!({"name": "limits", "parameterNotFoundAction": "Deny"});
    let finance =
        ns("finance", json!({})).deleting("2026-11-29T11:30:00Z").with("spec", json!({"finalizers": ["kubernetes"]}));
    let mut objs = vec![crd(), finance, p, b];
    for i in 0..3 {
        objs.push(obj("ledger.example.org/v1", "Account", Some("finance"), &format!("acct-{i}"), &format!("acct-{i}")));
    }
    if params {
        objs.push(obj("v1", "ConfigMap", Some("finance"), "limits", "cm-limits"));
    }
    crate::testing::graph_discovered(objs, vec![])
}

#[test]
fn params_that_go_with_the_namespace_are_a_warning_and_once_gone_the_namespace_is_stuck() {
    let g = namespace_with_its_own_params(true);
    let d = namespace_answer(&g);
    let found: Vec<_> = d.findings.iter().filter(|f| f.code == FindingCode::AdmissionDenied).collect();
    assert_eq!(found.len(), 1, "one for the three Accounts: {found:?}");
    assert_eq!(found[0].severity, Severity::Warning);
    for part in ["takes its params from ConfigMap finance/limits", "3 objects", "no fixed order"] {
        assert!(found[0].message.contains(part), "{part}: {}", found[0].message);
    }
    // in progress: only steps that change nothing (contract §4.3.4), reading what the warning names
    assert!(
        !found[0].remedy.is_empty() && found[0].remedy.iter().all(|s| s.reach == Reach::Inspect),
        "{:?}",
        found[0].remedy
    );
    // the params already gone: every DELETE left is denied, and the namespace never finishes
    let g = namespace_with_its_own_params(false);
    let d = namespace_answer(&g);
    assert!(d.stuck);
    let found: Vec<_> = d.findings.iter().filter(|f| f.code == FindingCode::AdmissionDenied).collect();
    assert_eq!(found.len(), 1, "one for the three Accounts: {found:?}");
    assert_eq!(found[0].severity, Severity::Error);
    assert!(found[0].message.contains("finds no ConfigMap finance/limits"), "{}", found[0].message);
    assert!(
        found[0].message.contains("the DELETEs that remove 3 objects") && found[0].message.contains("are rejected"),
        "{}",
        found[0].message
    );
}

#[test]
fn a_dead_webhook_in_front_of_a_namespaces_content_is_one_finding_naming_it() {
    let w = json!({"name": "cm.example.org", "failurePolicy": "Fail",
        "rules": [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["DELETE"], "resources": ["configmaps"]}],
        "clientConfig": {"service": {"namespace": "ledger-system", "name": "ledger-webhook"}}});
    let mut objs = vec![
        ns("finance", json!({})).deleting(DELETED).with("spec", json!({"finalizers": ["kubernetes"]})),
        ns("ledger-system", json!({})),
        config(w),
    ];
    objs.extend((0..3).map(|i| obj("v1", "ConfigMap", Some("finance"), &format!("cfg-{i}"), &format!("cm-{i}"))));
    let g = graph(objs);
    let d = namespace_answer(&g);
    assert!(d.stuck);
    let found: Vec<_> = d.findings.iter().filter(|f| f.code == FindingCode::AdmissionWebhookUnavailable).collect();
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(
        found[0].message.contains(
            "intercepts DELETE of 3 objects (ConfigMap finance/cfg-0, ConfigMap finance/cfg-1, ConfigMap finance/cfg-2)"
        ),
        "{}",
        found[0].message
    );
    assert!(found[0].related.contains(&Related::Node(node(&g, "ConfigMap", "cfg-2"))));
}

/// The webhook that would reject a DELETE matters only where the garbage collector will send
/// one: not for a dependent another owner still holds, nor for one its owner orphans.
#[test]
fn a_dead_webhook_on_deletes_is_not_in_the_way_of_a_dependent_the_gc_keeps() {
    let world = |owner_finalizer: &str, second_owner: bool, ops: &[&str]| {
        let w = json!({"name": "accounts.example.org", "failurePolicy": "Fail",
            "rules": [rule(ops, &["accounts"], "*")],
            "clientConfig": {"service": {"namespace": "ledger-system", "name": "ledger-webhook"}}});
        let owner = obj("v1", "ConfigMap", Some("finance"), "book", "book")
            .deleting("2026-11-29T11:30:00Z")
            .finalizers(&[owner_finalizer]);
        let mut dep = obj("ledger.example.org/v1", "Account", Some("finance"), "acme", "acme").owned_by(
            "v1",
            "ConfigMap",
            "book",
            "book",
            Some(true),
        );
        let mut objs = vec![crd(), ns("finance", json!({})), ns("ledger-system", json!({})), owner, config(w)];
        if second_owner {
            dep = dep.owned_by("v1", "ConfigMap", "ledger", "ledger", None);
            objs.push(obj("v1", "ConfigMap", Some("finance"), "ledger", "ledger"));
        }
        objs.push(dep);
        graph(objs)
    };
    let answer = |g: &Graph| {
        let live = Liveness::new(g, NOW.parse().unwrap());
        why_stuck(g, &live, node(g, "ConfigMap", "book"))
    };
    let rejection = |g: &Graph| {
        answer(g)
            .findings
            .into_iter()
            .find(|f| f.code == FindingCode::AdmissionWebhookUnavailable && f.object == node(g, "Account", "acme"))
    };
    // foreground: the GC deletes the blocking dependent, and its DELETE is rejected
    assert!(rejection(&world("foregroundDeletion", false, &["DELETE"])).is_some());
    // another owner holds it: the GC patches the reference away instead of deleting it
    assert!(rejection(&world("foregroundDeletion", true, &["DELETE"])).is_none());
    // ... and that PATCH is an UPDATE, which a dead webhook on UPDATEs rejects
    let f = rejection(&world("foregroundDeletion", true, &["UPDATE"])).expect("the patch rejected");
    assert!(f.message.contains("garbage collector's PATCH that removes its reference"), "{}", f.message);
}

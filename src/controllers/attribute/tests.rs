//! The ladder on small clusters: one scenario per rung, and for ties, GitOps appliers, client
//! libraries' managers, operands, a person's client. Each asserts the verdict, who removes the
//! finalizer, and that the evidence names the rung that decided.

use k8s_openapi::jiff::Timestamp;

use crate::controllers::{ControllerState, FinalizerOwner, Liveness};
use crate::testing::graph_of;

use ControllerState::*;

mod weighing;

const FINALIZER: &str = "acme.example.com/cleanup";

fn now() -> Timestamp {
    "2026-11-29T12:00:00Z".parse().unwrap()
}

/// A Widget (acme.example.com) being deleted, its CRD, kube-controller-manager's lease, and an
/// unrelated workload (so that Pods, workloads, RBAC and Leases are all in view).
fn base(widget_meta: &str) -> Vec<String> {
    vec![
        format!(
            r#"{{"apiVersion":"acme.example.com/v1","kind":"Widget","metadata":{{"name":"w1","namespace":"labs","uid":"widget",
            "finalizers":["{FINALIZER}"],"deletionTimestamp":"2026-11-29T11:58:00Z"{widget_meta}}}}}"#
        ),
        r#"{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"widgets.acme.example.com","uid":"crd"},
            "spec":{"group":"acme.example.com","names":{"kind":"Widget","plural":"widgets"}}}"#
            .into(),
        r#"{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"kube-controller-manager","namespace":"kube-system","uid":"kcm"},
            "spec":{"holderIdentity":"cp-1_x","leaseDurationSeconds":15,"renewTime":"2026-11-29T11:59:55Z"}}"#
            .into(),
        r#"{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRole","metadata":{"name":"view","uid":"view"},
            "rules":[{"apiGroups":[""],"resources":["pods"],"verbs":["get"]}]}"#
            .into(),
    ]
    .into_iter()
    .chain(workload("web", "shop", "web", true, ""))
    .collect()
}

/// Deployment → ReplicaSet → Pod `<name>-rs-p`, running as `sa`; `owner`: extra metadata
/// (owner references) of the Deployment.
fn workload(name: &str, ns: &str, sa: &str, ready: bool, owner: &str) -> Vec<String> {
    let status = if ready { "True" } else { "False" };
    let ready_replicas = u8::from(ready);
    vec![
        format!(
            r#"{{"apiVersion":"apps/v1","kind":"Deployment","metadata":{{"name":"{name}","namespace":"{ns}","uid":"d-{name}"{owner}}},
            "spec":{{"replicas":1,"template":{{"spec":{{"serviceAccountName":"{sa}","containers":[{{"name":"main"}}]}}}}}},
            "status":{{"readyReplicas":{ready_replicas}}}}}"#
        ),
        format!(
            r#"{{"apiVersion":"apps/v1","kind":"ReplicaSet","metadata":{{"name":"{name}-rs","namespace":"{ns}","uid":"rs-{name}",
            "ownerReferences":[{{"apiVersion":"apps/v1","kind":"Deployment","name":"{name}","uid":"d-{name}","controller":true}}]}}}}"#
        ),
        format!(
            r#"{{"apiVersion":"v1","kind":"Pod","metadata":{{"name":"{name}-rs-p","namespace":"{ns}","uid":"p-{name}",
            "ownerReferences":[{{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"{name}-rs","uid":"rs-{name}","controller":true}}]}},
            "spec":{{"serviceAccountName":"{sa}","containers":[{{"name":"main"}}]}},
            "status":{{"phase":"Running","conditions":[{{"type":"Ready","status":"{status}"}}]}}}}"#
        ),
    ]
}

/// A ClusterRole that may update widgets and widgets/finalizers, bound to `ns/sa`.
fn may_update_widgets(ns: &str, sa: &str) -> Vec<String> {
    vec![
        format!(
            r#"{{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRole","metadata":{{"name":"widgets-{sa}","uid":"cr-{sa}"}},
            "rules":[{{"apiGroups":["acme.example.com"],"resources":["widgets","widgets/finalizers"],"verbs":["update","patch"]}}]}}"#
        ),
        format!(
            r#"{{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRoleBinding","metadata":{{"name":"widgets-{sa}","uid":"crb-{sa}"}},
            "roleRef":{{"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole","name":"widgets-{sa}"}},
            "subjects":[{{"kind":"ServiceAccount","name":"{sa}","namespace":"{ns}"}}]}}"#
        ),
    ]
}

/// cluster-admin bound to `ns/sa`.
fn cluster_admin(ns: &str, sa: &str) -> Vec<String> {
    vec![
        r#"{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRole","metadata":{"name":"cluster-admin","uid":"admin"},
            "rules":[{"apiGroups":["*"],"resources":["*"],"verbs":["*"]}]}"#
            .into(),
        format!(
            r#"{{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRoleBinding","metadata":{{"name":"admin-{sa}","uid":"crb-admin-{sa}"}},
            "roleRef":{{"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole","name":"cluster-admin"}},
            "subjects":[{{"kind":"ServiceAccount","name":"{sa}","namespace":"{ns}"}}]}}"#
        ),
    ]
}

/// A leader lease `ns/name` held by `holder` (a pod name), renewed 2s ago.
fn lease(ns: &str, name: &str, holder: &str) -> String {
    format!(
        r#"{{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{{"name":"{name}","namespace":"{ns}","uid":"l-{name}"}},
        "spec":{{"holderIdentity":"{holder}_1","leaseDurationSeconds":15,"renewTime":"2026-11-29T11:59:58Z"}}}}"#
    )
}

/// `,"managedFields":[…]`: `manager` added the finalizer.
fn added_by(manager: &str) -> String {
    format!(
        r#","managedFields":[{{"manager":"{manager}","operation":"Update","time":"2026-11-20T10:00:00Z",
        "fieldsV1":{{"f:metadata":{{"f:finalizers":{{"v:\"{FINALIZER}\"":{{}}}}}}}}}}]"#
    )
}

/// A core/v1 Event about the widget, from `component`.
fn event(component: &str) -> String {
    format!(
        r#"{{"apiVersion":"v1","kind":"Event","metadata":{{"name":"w1.1","namespace":"labs","uid":"ev-{component}"}},
        "involvedObject":{{"apiVersion":"acme.example.com/v1","kind":"Widget","name":"w1","namespace":"labs","uid":"widget"}},
        "type":"Normal","reason":"Cleaning","message":"deleting the bucket","source":{{"component":"{component}"}}}}"#
    )
}

fn answer(docs: &[Vec<String>]) -> FinalizerOwner {
    let all: Vec<&str> = docs.iter().flatten().map(String::as_str).collect();
    let g = graph_of(&all);
    let id = g.find("acme.example.com", "Widget", Some("labs"), "w1").expect("the widget");
    Liveness::new(&g, now()).finalizer(id, FINALIZER)
}

#[track_caller]
fn check(a: &FinalizerOwner, state: ControllerState, removed_by: Option<&str>, needles: &[&str]) {
    assert_eq!(a.controller, state, "{:#?}", a.evidence);
    assert_eq!(a.removed_by.as_deref(), removed_by, "{:#?}", a.evidence);
    for n in needles {
        assert!(a.evidence.iter().any(|e| e.contains(n)), "no evidence line mentions {n:?}:\n{:#?}", a.evidence);
    }
}

#[test]
fn rung_1_the_adder_resolved_to_a_workload() {
    let a = answer(&[base(&added_by("gizmo")), workload("gizmo", "acme", "gizmo", true, "")]);
    check(
        &a,
        Alive,
        Some("Deployment acme/gizmo"),
        &["decided by rung 1 (the field manager that added the finalizer)"],
    );
    // down, it is Down: the one that added it is not running
    let a = answer(&[base(&added_by("gizmo")), workload("gizmo", "acme", "gizmo", false, "")]);
    check(&a, Down, Some("Deployment acme/gizmo"), &["decided by rung 1"]);
}

#[test]
fn rung_2_the_component_reporting_in_the_objects_events() {
    let a = answer(&[base(""), vec![event("gizmo")], workload("gizmo", "acme", "gizmo", true, "")]);
    check(
        &a,
        Alive,
        Some("Deployment acme/gizmo"),
        &["Events about it are reported by \"gizmo\"; that name matches Deployment acme/gizmo", "decided by rung 2"],
    );
    // a reporting instance names the pod when the component's name names no workload
    let new_api = r#"{"apiVersion":"events.k8s.io/v1","kind":"Event","metadata":{"name":"w1.2","namespace":"labs","uid":"ev2"},
        "regarding":{"apiVersion":"acme.example.com/v1","kind":"Widget","name":"w1","namespace":"labs","uid":"widget"},
        "type":"Normal","reason":"Cleaning","note":"…","reportingController":"acme.example.com/cleaner","reportingInstance":"cleaner-gizmo-rs-p"}"#;
    let a = answer(&[base(""), vec![new_api.into()], workload("gizmo", "acme", "gizmo", true, "")]);
    check(
        &a,
        Alive,
        Some("Deployment acme/gizmo"),
        &["its instance cleaner-gizmo-rs-p is a Pod of", "decided by rung 2"],
    );
    // the kubelet and kube-controller-manager's controllers report about everything: no tie
    let a = answer(&[base(""), vec![event("kubelet")], workload("kubelet", "acme", "kubelet", true, "")]);
    assert_ne!(a.removed_by.as_deref(), Some("Deployment acme/kubelet"), "{:#?}", a.evidence);
}

#[test]
fn rung_3_a_lease_of_the_domain_or_held_with_permission() {
    let domain_lease = lease("acme", "5f1e.acme.example.com", "gizmo-rs-p");
    let a = answer(&[base(""), vec![domain_lease], workload("gizmo", "acme", "gizmo", true, "")]);
    check(&a, Alive, Some("Deployment acme/gizmo"), &["decided by rung 3 (a leader-election lease)"]);
    // a lease named after itself, held by a workload that may update widgets
    let own = lease("acme", "gizmo-leader", "gizmo-rs-p");
    let a = answer(&[
        base(""),
        vec![own],
        workload("gizmo", "acme", "gizmo", true, ""),
        may_update_widgets("acme", "gizmo"),
    ]);
    check(
        &a,
        Alive,
        Some("Deployment acme/gizmo"),
        &["which RBAC lets update the resource, holds leader-election lease acme/gizmo-leader", "decided by rung 3"],
    );
    // without the lease, the same permission proves nothing
    let a = answer(&[base(""), workload("gizmo", "acme", "gizmo", true, ""), may_update_widgets("acme", "gizmo")]);
    check(&a, Unknown, Some("Deployment acme/gizmo"), &["by permission only (RBAC)", "permission is not ownership"]);
    assert!(a.by_permission_only);
}

#[test]
fn rung_4_a_name_together_with_rbac() {
    // named by the kind (Widget → widget-operator) with RBAC on widgets
    let op = || workload("widget-operator", "acme", "widget-operator", true, "");
    let a = answer(&[base(""), op(), may_update_widgets("acme", "widget-operator")]);
    check(&a, Alive, Some("Deployment acme/widget-operator"), &["decided by rung 4 (a name together with RBAC"]);
    // bound to cluster-admin: permission all the same
    let a = answer(&[base(""), op(), cluster_admin("acme", "widget-operator")]);
    check(&a, Alive, Some("Deployment acme/widget-operator"), &["decided by rung 4", "cluster-admin (every resource)"]);
    // the name alone: never Alive
    let a = answer(&[base(""), op()]);
    check(&a, Unknown, Some("Deployment acme/widget-operator"), &["by name only", "a name is not ownership"]);
    assert!(a.by_permission_only);
}

#[test]
fn a_product_prefix_alone_is_never_the_controller() {
    // acme-telemetry bears the domain's label `acme` as a prefix, runs, and holds its own lease
    let a = answer(&[
        base(&added_by("acme-operator")),
        workload("acme-telemetry", "acme", "acme-telemetry", true, ""),
        vec![lease("acme", "acme-telemetry", "acme-telemetry-rs-p")],
    ]);
    check(
        &a,
        Missing,
        Some("field manager \"acme-operator\""),
        &["only bears the product's prefix", "by a product-name prefix only", "decided by rung 1"],
    );
    assert_eq!(a.workload, None);
}

#[test]
fn candidates_that_tie_are_unknown_naming_both_whichever_runs() {
    let a = answer(&[
        base(""),
        workload("widget-operator", "acme", "widget-operator", false, ""),
        workload("widget-controller", "acme", "widget-controller", true, ""),
        may_update_widgets("acme", "widget-operator"),
        may_update_widgets("acme", "widget-controller"),
    ]);
    check(
        &a,
        Unknown,
        Some("Deployment acme/widget-controller or Deployment acme/widget-operator"),
        &["decided by rung 4 (a name together with RBAC on the resource): candidates tie"],
    );
    assert_eq!(a.workload, None);
}

#[test]
fn gitops_appliers_add_finalizers_but_are_not_their_controllers() {
    let a =
        answer(&[base(&added_by("argocd-controller")), workload("argocd-controller", "argocd", "argocd", true, "")]);
    check(&a, Missing, None, &["a GitOps or deployment tool applies the finalizers its manifests carry", "searched:"]);
    // Flux's own finalizer on its own object is its controller's
    let hr = r#"{"apiVersion":"helm.toolkit.fluxcd.io/v2","kind":"HelmRelease","metadata":{"name":"podinfo","namespace":"apps","uid":"hr",
        "finalizers":["finalizers.fluxcd.io"],"deletionTimestamp":"2026-11-29T11:58:00Z",
        "managedFields":[{"manager":"helm-controller","operation":"Update",
          "fieldsV1":{"f:metadata":{"f:finalizers":{"v:\"finalizers.fluxcd.io\"":{}}}}}]}}"#;
    let docs: Vec<Vec<String>> =
        vec![base(""), vec![hr.into()], workload("helm-controller", "flux-system", "helm-controller", true, "")];
    let all: Vec<&str> = docs.iter().flatten().map(String::as_str).collect();
    let g = graph_of(&all);
    let id = g.find("helm.toolkit.fluxcd.io", "HelmRelease", Some("apps"), "podinfo").unwrap();
    let a = Liveness::new(&g, now()).finalizer(id, "finalizers.fluxcd.io");
    check(&a, Alive, Some("Deployment flux-system/helm-controller"), &["decided by rung 1"]);
}

#[test]
fn a_client_librarys_default_manager_names_no_one() {
    for library in ["Go-http-client", "OpenAPI-Generator", "python-requests"] {
        let a = answer(&[base(&added_by(library)), workload(&library.to_ascii_lowercase(), "acme", "x", true, "")]);
        check(&a, Missing, None, &["a client library's default name, which names no controller"]);
        // what else the cluster says still decides
        let a = answer(&[
            base(&added_by(library)),
            workload("widget-operator", "acme", "widget-operator", true, ""),
            may_update_widgets("acme", "widget-operator"),
        ]);
        check(&a, Alive, Some("Deployment acme/widget-operator"), &["decided by rung 4"]);
    }
}

#[test]
fn an_operand_never_stands_in_for_its_operator() {
    // a Deployment owned by a custom resource, named like the kind, with RBAC on widgets
    let owned = r#","ownerReferences":[{"apiVersion":"storage.acme.example.com/v1","kind":"StorageCluster","name":"main","uid":"sc","controller":true}]"#;
    let a = answer(&[
        base(""),
        workload("widget-mon", "acme", "widget-mon", true, owned),
        workload("widget-operator", "acme", "widget-operator", true, owned),
        may_update_widgets("acme", "widget-operator"),
    ]);
    check(
        &a,
        Unknown,
        Some("Deployment acme/widget-operator"),
        &["is an operand: it is owned by StorageCluster main", "as an operand only"],
    );
    // OLM installs operators under a ClusterServiceVersion: not an operand
    let csv = r#","ownerReferences":[{"apiVersion":"operators.coreos.com/v1alpha1","kind":"ClusterServiceVersion","name":"widget.v1","uid":"csv","controller":true}]"#;
    let a = answer(&[
        base(""),
        workload("widget-operator", "acme", "widget-operator", true, csv),
        may_update_widgets("acme", "widget-operator"),
    ]);
    check(&a, Alive, Some("Deployment acme/widget-operator"), &["decided by rung 4"]);
}

#[test]
fn a_persons_client_means_nothing_removes_it_even_without_a_domain() {
    let hold = r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"freeze","namespace":"ops","uid":"cm",
        "finalizers":["hold-it"],"deletionTimestamp":"2026-11-29T09:00:00Z",
        "managedFields":[{"manager":"kubectl-patch","operation":"Update",
          "fieldsV1":{"f:metadata":{"f:finalizers":{"v:\"hold-it\"":{}}}}}]}}"#;
    let docs: Vec<Vec<String>> = vec![base(""), vec![hold.into()]];
    let all: Vec<&str> = docs.iter().flatten().map(String::as_str).collect();
    let g = graph_of(&all);
    let id = g.find("", "ConfigMap", Some("ops"), "freeze").unwrap();
    let a = Liveness::new(&g, now()).finalizer(id, "hold-it");
    check(
        &a,
        Missing,
        None,
        &["a person's client (field manager \"kubectl-patch\") added the finalizer", "decided by rung 1"],
    );
    assert_eq!(a.added_by_person.as_deref(), Some("kubectl-patch"));
    // where Pods and RBAC could not be read, the absence proves nothing
    let g = crate::testing::graph_with(
        &[hold],
        &[
            crate::testing::forbidden("", "pods"),
            crate::testing::forbidden("rbac.authorization.k8s.io", "clusterroles"),
        ],
    );
    let id = g.find("", "ConfigMap", Some("ops"), "freeze").unwrap();
    let a = Liveness::new(&g, now()).finalizer(id, "hold-it");
    assert_eq!(a.controller, Unknown, "{:#?}", a.evidence);
}

//! Scenarios for attribution and liveness: one per attribution path and per verdict, each
//! asserting the state and that the evidence names what was found.

use k8s_openapi::jiff::Timestamp;

use super::{ControllerState, FinalizerOwner, Liveness};
use crate::graph::Graph;

pub(crate) use crate::testing::{graph_of, graph_with};

fn fixture(name: &str) -> Graph {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(name).join("snapshot.json");
    Graph::build(crate::source::file::load(&[path]).expect("fixture loads"))
}

fn now() -> Timestamp {
    "2026-11-29T12:00:00Z".parse().unwrap()
}

/// The answer for `finalizer` on the object `group/kind ns/name`.
fn answer(g: &Graph, group: &str, kind: &str, ns: Option<&str>, name: &str, finalizer: &str) -> FinalizerOwner {
    let id = g.find(group, kind, ns, name).unwrap_or_else(|| panic!("{kind} {name} not in the test snapshot"));
    Liveness::new(g, now()).finalizer(id, finalizer)
}

#[track_caller]
fn assert_evidence(a: &FinalizerOwner, needles: &[&str]) {
    for n in needles {
        assert!(a.evidence.iter().any(|e| e.contains(n)), "no evidence line mentions {n:?}:\n{:#?}", a.evidence);
    }
}

// Pieces of small snapshots.
const SITE: &str = r#"{"apiVersion":"own.labhub.io/v1","kind":"Site","metadata":{"name":"alpha","namespace":"labs","uid":"site",
    "finalizers":["own.labhub.io/cleanup"],"deletionTimestamp":"2026-11-29T10:00:00Z"}}"#;
const CRD: &str = r#"{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"sites.own.labhub.io","uid":"crd"},
    "spec":{"group":"own.labhub.io","names":{"kind":"Site","plural":"sites"}}}"#;
const KCM_LEASE: &str = r#"{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"kube-controller-manager","namespace":"kube-system","uid":"kcm"},
    "spec":{"holderIdentity":"cp-1_x","leaseDurationSeconds":15,"renewTime":"2026-11-29T11:59:55Z"}}"#;
const ROLE: &str = r#"{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"Role","metadata":{"name":"site-ctl","namespace":"ops","uid":"role"},
    "rules":[{"apiGroups":["own.labhub.io"],"resources":["sites","sites/finalizers"],"verbs":["update","patch"]}]}"#;
const ROLE_BINDING: &str = r#"{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"RoleBinding","metadata":{"name":"site-ctl","namespace":"ops","uid":"rb"},
    "roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"Role","name":"site-ctl"},
    "subjects":[{"kind":"ServiceAccount","name":"site-ctl","namespace":"ops"}]}"#;
const ADMIN: &str = r#"{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRole","metadata":{"name":"cluster-admin","uid":"admin"},
    "rules":[{"apiGroups":["*"],"resources":["*"],"verbs":["*"]}]}"#;
const ADMIN_BINDING: &str = r#"{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRoleBinding","metadata":{"name":"ci-admin","uid":"crb-admin"},
    "roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole","name":"cluster-admin"},
    "subjects":[{"kind":"ServiceAccount","name":"ci","namespace":"ci"}]}"#;
const CI_DEPLOYMENT: &str = r#"{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"ci-runner","namespace":"ci","uid":"ci"},
    "spec":{"replicas":1,"template":{"spec":{"serviceAccountName":"ci"}}},"status":{"readyReplicas":1}}"#;

/// `ops/site-ctl`: a Deployment → ReplicaSet → Pod running as ServiceAccount ops/site-ctl, with
/// the given pod status.
fn site_ctl(pod_status: &str) -> Vec<String> {
    vec![
        r#"{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"site-ctl","namespace":"ops","uid":"dep"},
            "spec":{"replicas":1,"template":{"spec":{"serviceAccountName":"site-ctl","containers":[{"name":"manager"}]}}},
            "status":{"replicas":1}}"#
            .to_string(),
        r#"{"apiVersion":"apps/v1","kind":"ReplicaSet","metadata":{"name":"site-ctl-6c9f","namespace":"ops","uid":"rs",
            "ownerReferences":[{"apiVersion":"apps/v1","kind":"Deployment","name":"site-ctl","uid":"dep","controller":true}]}}"#
            .to_string(),
        format!(
            r#"{{"apiVersion":"v1","kind":"Pod","metadata":{{"name":"site-ctl-6c9f-q7","namespace":"ops","uid":"pod",
            "ownerReferences":[{{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"site-ctl-6c9f","uid":"rs","controller":true}}]}},
            "spec":{{"serviceAccountName":"site-ctl","containers":[{{"name":"manager"}}]}},"status":{pod_status}}}"#
        ),
    ]
}

/// `ops/ops-agent`: the same workload, RBAC and pod as [`site_ctl`] under a name that neither
/// the finalizer nor the kind `Site` gives, so that only its permission ties it.
fn ops_agent(pod_status: &str) -> Vec<String> {
    let mut v: Vec<String> = site_ctl(pod_status).iter().map(|d| d.replace("site-ctl", "ops-agent")).collect();
    v.push(ROLE.replace("site-ctl", "ops-agent"));
    v.push(ROLE_BINDING.replace("site-ctl", "ops-agent"));
    v
}

const READY: &str = r#"{"phase":"Running","conditions":[{"type":"Ready","status":"True"}]}"#;

fn docs<'a>(fixed: &[&'a str], extra: &'a [String]) -> Vec<&'a str> {
    fixed.iter().copied().chain(extra.iter().map(String::as_str)).collect()
}

// --- built-in owners and the control plane ---------------------------------------------------

#[test]
fn foreground_deletion_is_the_garbage_collectors_alive_by_its_lease() {
    let g = fixture("site-operator-gone");
    let a = answer(&g, "own.labhub.io", "Site", Some("labs"), "alpha", "foregroundDeletion");
    assert_eq!(a.controller, ControllerState::Alive);
    assert_eq!(a.removed_by.as_deref(), Some("kube-controller-manager (garbage collector)"));
    assert_evidence(
        &a,
        &[
            "built-in finalizer",
            "lease kube-system/kube-controller-manager held by control-plane-1_5c1e, renewed 6s ago",
        ],
    );
}

#[test]
fn builtins_are_assumed_alive_when_the_control_plane_is_not_visible() {
    let g = graph_of(&[
        r#"{"apiVersion":"v1","kind":"PersistentVolumeClaim","metadata":{"name":"data","namespace":"labs","uid":"pvc",
        "finalizers":["kubernetes.io/pvc-protection"]}}"#,
    ]);
    let a = answer(&g, "", "PersistentVolumeClaim", Some("labs"), "data", "kubernetes.io/pvc-protection");
    assert_eq!(a.controller, ControllerState::Alive);
    assert_eq!(a.removed_by.as_deref(), Some("kube-controller-manager (pvc-protection controller)"));
    assert_evidence(&a, &["assumed alive (control plane not visible)"]);
}

#[test]
fn a_stale_controller_manager_lease_means_the_garbage_collector_is_down() {
    let stale = KCM_LEASE.replace("11:59:55Z", "11:00:00Z");
    let g = graph_of(&[SITE, &stale]);
    let a = answer(&g, "own.labhub.io", "Site", Some("labs"), "alpha", "orphan");
    assert_eq!(a.controller, ControllerState::Down);
    assert_eq!(a.since, Some("2026-11-29T11:00:00Z".parse().unwrap()));
    assert_evidence(&a, &["kube-system/kube-controller-manager", "last renewed at 2026-11-29T11:00:00Z (60m ago"]);
}

#[test]
fn without_a_lease_static_control_plane_pods_tell_liveness() {
    let g = graph_of(&[
        SITE,
        r#"{"apiVersion":"v1","kind":"Pod","metadata":{"name":"kube-controller-manager-cp1","namespace":"kube-system","uid":"kcm-pod",
            "labels":{"component":"kube-controller-manager"}},"status":{"conditions":[{"type":"Ready","status":"False"}]}}"#,
    ]);
    let a = answer(&g, "own.labhub.io", "Site", Some("labs"), "alpha", "foregroundDeletion");
    assert_eq!(a.controller, ControllerState::Down);
    assert_evidence(&a, &["Pod kube-system/kube-controller-manager-cp1 is not Ready"]);
}

#[test]
fn load_balancer_cleanup_is_unknown_when_only_the_cloud_controller_is_unseen() {
    let g = graph_of(&[
        KCM_LEASE,
        r#"{"apiVersion":"v1","kind":"Service","metadata":{"name":"lb","namespace":"labs","uid":"svc",
            "finalizers":["service.kubernetes.io/load-balancer-cleanup"]}}"#,
    ]);
    let a = answer(&g, "", "Service", Some("labs"), "lb", "service.kubernetes.io/load-balancer-cleanup");
    assert_eq!(a.controller, ControllerState::Unknown);
    assert_evidence(&a, &["no kube-system/cloud-controller-manager lease"]);
}

// --- attribution paths -----------------------------------------------------------------------

#[test]
fn managed_fields_name_the_controller_that_added_the_finalizer() {
    let g = graph_of(&[
        r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","namespace":"labs","uid":"cm",
            "finalizers":["acme.example.com/cleanup"],
            "managedFields":[
              {"manager":"kubectl-client-side-apply","operation":"Update","fieldsV1":{"f:metadata":{"f:finalizers":{"v:\"other.example.com/x\"":{}}}}},
              {"manager":"acme-operator","operation":"Update","time":"2026-11-20T10:00:00Z",
               "fieldsV1":{"f:metadata":{"f:finalizers":{".":{},"v:\"acme.example.com/cleanup\"":{}}}}}]}}"#,
        r#"{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"acme-operator","namespace":"acme","uid":"d"},
            "spec":{"replicas":1},"status":{"readyReplicas":1}}"#,
    ]);
    let a = answer(&g, "", "ConfigMap", Some("labs"), "c", "acme.example.com/cleanup");
    assert_eq!(a.controller, ControllerState::Alive);
    assert_eq!(a.removed_by.as_deref(), Some("Deployment acme/acme-operator"));
    assert_evidence(
        &a,
        &[
            "managedFields: field manager \"acme-operator\" (Update at 2026-11-20T10:00:00Z) added it; that name matches Deployment acme/acme-operator",
            "1/1 ready replicas",
        ],
    );
    assert!(!a.evidence.iter().any(|e| e.contains("kubectl")), "{:#?}", a.evidence);
}

#[test]
fn a_workload_read_metadata_only_is_unknown_not_down() {
    // a live answer reads workload bodies only where controllers live: without its replicas, a
    // workload must not be judged Down
    let g = graph_of(&[
        r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","namespace":"labs","uid":"cm",
            "finalizers":["acme.example.com/cleanup"],
            "managedFields":[{"manager":"acme-operator","operation":"Update",
               "fieldsV1":{"f:metadata":{"f:finalizers":{"v:\"acme.example.com/cleanup\"":{}}}}}]}}"#,
        r#"{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"acme-operator","namespace":"acme","uid":"d"}}"#,
    ]);
    let a = answer(&g, "", "ConfigMap", Some("labs"), "c", "acme.example.com/cleanup");
    assert_eq!(a.controller, ControllerState::Unknown, "{:#?}", a.evidence);
    assert_evidence(&a, &["Deployment acme/acme-operator's spec and status were not read"]);
}

#[test]
fn a_client_field_manager_is_not_taken_for_the_controller() {
    let g = graph_of(&[
        KCM_LEASE,
        r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","namespace":"labs","uid":"cm",
            "finalizers":["acme.example.com/cleanup"],
            "managedFields":[{"manager":"kubectl-edit","operation":"Update",
               "fieldsV1":{"f:metadata":{"f:finalizers":{"v:\"acme.example.com/cleanup\"":{}}}}}]}}"#,
        r#"{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"kubectl-edit","namespace":"x","uid":"d"},"spec":{"replicas":1}}"#,
    ]);
    let a = answer(&g, "", "ConfigMap", Some("labs"), "c", "acme.example.com/cleanup");
    assert_eq!(a.controller, ControllerState::Missing);
    assert_eq!(a.workload, None);
    assert_evidence(
        &a,
        &[
            "field manager \"kubectl-edit\" (Update) added it: a person's client",
            "decided by rung 1 (the field manager that added the finalizer): a person's client (field manager \"kubectl-edit\")",
        ],
    );
    assert_eq!(a.added_by_person.as_deref(), Some("kubectl-edit"));
}

#[test]
fn permission_alone_finds_the_workload_but_never_makes_it_alive() {
    // RBAC leads to a running workload, but nothing else ties it to this finalizer: an operator
    // may hold `sites/finalizers` only to grant it to others
    let ctl = ops_agent(READY);
    let g = graph_of(&docs(&[SITE, CRD, KCM_LEASE, ADMIN, ADMIN_BINDING, CI_DEPLOYMENT], &ctl));
    let a = answer(&g, "own.labhub.io", "Site", Some("labs"), "alpha", "own.labhub.io/cleanup");
    assert_eq!(a.controller, ControllerState::Unknown, "{:#?}", a.evidence);
    assert_eq!(a.removed_by.as_deref(), Some("Deployment ops/ops-agent"));
    assert_evidence(
        &a,
        &[
            "domain own.labhub.io matches CRD sites.own.labhub.io (group own.labhub.io)",
            "Role ops/ops-agent may update sites, sites/finalizers (own.labhub.io); RoleBinding ops/ops-agent binds it to ServiceAccount ops/ops-agent",
            "ServiceAccount ops/ops-agent runs Pod ops-agent-6c9f-q7 of Deployment ops/ops-agent",
            "Deployment ops/ops-agent: 1/1 ready (Pod ops-agent-6c9f-q7 Ready)",
            "by permission only",
            "permission is not ownership",
        ],
    );
    // cluster-admin's wildcard grants name nobody
    assert!(!a.evidence.iter().any(|e| e.contains("ci-runner") || e.contains("cluster-admin")), "{:#?}", a.evidence);
}

#[test]
fn a_leader_lease_of_its_domain_ties_the_permitted_workload_and_it_is_alive() {
    let ctl = site_ctl(READY);
    let lease = r#"{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"abc.own.labhub.io","namespace":"ops","uid":"l"},
        "spec":{"holderIdentity":"site-ctl-6c9f-q7_1","leaseDurationSeconds":15,"renewTime":"2026-11-29T11:59:58Z"}}"#;
    let g = graph_of(&docs(&[SITE, CRD, KCM_LEASE, ROLE, ROLE_BINDING, lease], &ctl));
    let a = answer(&g, "own.labhub.io", "Site", Some("labs"), "alpha", "own.labhub.io/cleanup");
    assert_eq!(a.controller, ControllerState::Alive, "{:#?}", a.evidence);
    assert_eq!(a.removed_by.as_deref(), Some("Deployment ops/site-ctl"));
    assert!(!a.evidence.iter().any(|e| e.contains("by permission only")), "{:#?}", a.evidence);
}

#[test]
fn a_field_manager_found_nowhere_outweighs_a_permitted_live_operator() {
    // permission-is-not-ownership: data-operator may update backups/finalizers and runs, but the
    // finalizer was added by `snapshot-agent`, which is gone; data-operator's lease names its own API
    let g = fixture("permission-is-not-ownership");
    let a = answer(
        &g,
        "data.example.io",
        "Backup",
        Some("reporting"),
        "orders-db-2026-11-28",
        "data.example.io/snapshot-agent",
    );
    assert_eq!(a.controller, ControllerState::Missing, "{:#?}", a.evidence);
    assert_eq!(a.removed_by.as_deref(), Some("field manager \"snapshot-agent\""));
    assert_eq!(a.workload, None);
    assert_evidence(
        &a,
        &[
            "Deployment data-system/data-operator is tied to this finalizer by permission only",
            "the finalizer names the component snapshot-agent, and no workload",
            "field manager \"snapshot-agent\" added the finalizer and no workload, container, ServiceAccount, app label, program, image or lease of that name remains",
        ],
    );
    // a finalizer of the same domain naming no component: data-operator bears the domain's
    // label `data`, but its own lease names another domain, so the name does not tie it
    let a =
        answer(&g, "data.example.io", "Backup", Some("reporting"), "orders-db-2026-11-28", "data.example.io/retain");
    assert_eq!(a.controller, ControllerState::Unknown, "{:#?}", a.evidence);
    assert!(a.by_permission_only);
    assert_evidence(&a, &["its own leader lease data-system/3c7e9a1f.platform.example.io names platform.example.io"]);
}

#[test]
fn a_core_object_carrying_an_operator_finalizer_points_at_the_operator() {
    let g = fixture("site-operator-gone");
    let a = answer(&g, "", "ConfigMap", Some("labs"), "alpha-config", "own.labhub.io/cleanup");
    assert_eq!(a.controller, ControllerState::Down);
    assert_eq!(a.removed_by.as_deref(), Some("Deployment site-system/site-operator"));
    assert_evidence(&a, &["ClusterRole site-operator may update sites, sites/finalizers (own.labhub.io)"]);
}

#[test]
fn the_service_account_with_finalizer_rights_wins_over_an_editor() {
    let editor = r#"{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRole","metadata":{"name":"site-editor","uid":"ed"},
        "rules":[{"apiGroups":["own.labhub.io"],"resources":["sites"],"verbs":["update","patch"]}]}"#;
    let editor_binding = r#"{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRoleBinding","metadata":{"name":"ci-sites","uid":"edb"},
        "roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole","name":"site-editor"},
        "subjects":[{"kind":"User","name":"system:serviceaccount:ci:ci"}]}"#;
    let ctl = site_ctl(r#"{"phase":"Running","conditions":[{"type":"Ready","status":"False"}]}"#);
    let g = graph_of(&docs(&[SITE, CRD, KCM_LEASE, ROLE, ROLE_BINDING, editor, editor_binding, CI_DEPLOYMENT], &ctl));
    let a = answer(&g, "own.labhub.io", "Site", Some("labs"), "alpha", "own.labhub.io/cleanup");
    assert_eq!(a.removed_by.as_deref(), Some("Deployment ops/site-ctl"));
    assert_eq!(a.controller, ControllerState::Down);
    assert_evidence(&a, &["chose Deployment ops/site-ctl; other candidates: Deployment ci/ci-runner"]);
}

#[test]
fn a_kubebuilder_lease_and_its_holder_name_the_workload() {
    let g = graph_of(&[
        r#"{"apiVersion":"acme.example.com/v1","kind":"Widget","metadata":{"name":"w","namespace":"labs","uid":"w",
            "finalizers":["acme.example.com/finalizer"]}}"#,
        r#"{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"9a8b7c6d.example.com","namespace":"acme-system","uid":"l"},
            "spec":{"holderIdentity":"acme-ctl-5f6d7-abcde_0b1c","leaseDurationSeconds":15,"renewTime":"2026-11-29T11:59:58Z"}}"#,
        r#"{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"acme-ctl","namespace":"acme-system","uid":"d"},"spec":{"replicas":1}}"#,
        r#"{"apiVersion":"apps/v1","kind":"ReplicaSet","metadata":{"name":"acme-ctl-5f6d7","namespace":"acme-system","uid":"rs",
            "ownerReferences":[{"apiVersion":"apps/v1","kind":"Deployment","name":"acme-ctl","uid":"d","controller":true}]}}"#,
        r#"{"apiVersion":"v1","kind":"Pod","metadata":{"name":"acme-ctl-5f6d7-abcde","namespace":"acme-system","uid":"p",
            "ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"acme-ctl-5f6d7","uid":"rs","controller":true}]}}"#,
    ]);
    let a = answer(&g, "acme.example.com", "Widget", Some("labs"), "w", "acme.example.com/finalizer");
    assert_eq!(a.controller, ControllerState::Alive);
    assert_eq!(a.removed_by.as_deref(), Some("Deployment acme-system/acme-ctl"));
    assert_evidence(
        &a,
        &[
            "leader-election lease acme-system/9a8b7c6d.example.com matches acme.example.com; holder acme-ctl-5f6d7-abcde_0b1c: Pod acme-ctl-5f6d7-abcde of Deployment acme-system/acme-ctl",
            "renewed 2s ago",
        ],
    );
}

// --- liveness verdicts -----------------------------------------------------------------------

#[test]
fn site_basics_operator_is_alive_with_a_ready_pod_and_a_fresh_lease() {
    let g = fixture("site-basics");
    let a = answer(&g, "own.labhub.io", "Site", Some("labs"), "alpha", "own.labhub.io/cleanup");
    assert_eq!(a.controller, ControllerState::Alive);
    assert_eq!(a.removed_by.as_deref(), Some("Deployment site-system/site-operator"));
    assert_eq!(a.since, None);
    assert_evidence(
        &a,
        &[
            "ServiceAccount site-system/site-operator runs Pod site-operator-7d4b9c-x0 of Deployment site-system/site-operator",
            "Deployment site-system/site-operator: 1/1 ready (Pod site-operator-7d4b9c-x0 Ready)",
            "lease site-system/f1c2e3d4.own.labhub.io held by site-operator-7d4b9c-x0_3f2a, renewed 0s ago",
        ],
    );
}

#[test]
fn scaled_to_zero_operator_is_down_since_its_lease_went_stale() {
    let g = fixture("site-operator-gone");
    let a = answer(&g, "own.labhub.io", "Site", Some("labs"), "alpha", "own.labhub.io/cleanup");
    assert_eq!(a.controller, ControllerState::Down);
    assert_eq!(a.removed_by.as_deref(), Some("Deployment site-system/site-operator"));
    assert_eq!(a.since, Some("2026-11-29T08:40:00Z".parse().unwrap()));
    assert_evidence(
        &a,
        &[
            "ServiceAccount site-system/site-operator is the pod template's account of Deployment site-system/site-operator",
            "holder site-operator-7d4b9c-old_9e1d: no Pod site-operator-7d4b9c-old remains; its name points at ReplicaSet site-operator-7d4b9c of Deployment site-system/site-operator",
            "Deployment site-system/site-operator is scaled to zero (spec.replicas: 0)",
            "was last renewed at 2026-11-29T08:40:00Z (3h20m ago",
        ],
    );
}

#[test]
fn a_stale_lease_whose_holder_is_gone_means_down_since_the_last_renewal() {
    let g = graph_of(&[
        SITE,
        CRD,
        r#"{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"f1c2e3d4.own.labhub.io","namespace":"site-system","uid":"l"},
            "spec":{"holderIdentity":"site-operator-7d4b9c-zz_1","leaseDurationSeconds":15,"renewTime":"2026-11-29T09:00:00Z"}}"#,
    ]);
    let a = answer(&g, "own.labhub.io", "Site", Some("labs"), "alpha", "own.labhub.io/cleanup");
    assert_eq!(a.controller, ControllerState::Down);
    assert_eq!(a.removed_by.as_deref(), Some("leader of lease site-system/f1c2e3d4.own.labhub.io"));
    assert_eq!(a.since, Some("2026-11-29T09:00:00Z".parse().unwrap()));
    assert_evidence(
        &a,
        &[
            "its holder site-operator-7d4b9c-zz_1 is no Pod or workload in the snapshot",
            "last renewed at 2026-11-29T09:00:00Z (3h ago",
        ],
    );
}

#[test]
fn a_crash_looping_operator_is_down() {
    let ctl = site_ctl(
        r#"{"phase":"Running","conditions":[{"type":"Ready","status":"False","lastTransitionTime":"2026-11-29T11:10:00Z"}],
            "containerStatuses":[{"name":"manager","ready":false,"restartCount":37,
              "state":{"waiting":{"reason":"CrashLoopBackOff"}}}]}"#,
    );
    let g = graph_of(&docs(&[SITE, CRD, KCM_LEASE, ROLE, ROLE_BINDING], &ctl));
    let a = answer(&g, "own.labhub.io", "Site", Some("labs"), "alpha", "own.labhub.io/cleanup");
    assert_eq!(a.controller, ControllerState::Down);
    assert_eq!(a.removed_by.as_deref(), Some("Deployment ops/site-ctl"));
    assert_eq!(a.since, Some("2026-11-29T11:10:00Z".parse().unwrap()));
    assert_evidence(&a, &["Pod site-ctl-6c9f-q7 container manager is crash-looping (CrashLoopBackOff, 37 restarts)"]);
}

#[test]
fn a_fresh_lease_keeps_the_controller_alive_even_without_ready_pods_in_view() {
    let ctl = site_ctl(r#"{"phase":"Pending"}"#);
    let lease = r#"{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"abc.own.labhub.io","namespace":"ops","uid":"l"},
        "spec":{"holderIdentity":"site-ctl-6c9f-zz_1","leaseDurationSeconds":30,"renewTime":"2026-11-29T11:59:50Z"}}"#;
    let g = graph_of(&docs(&[SITE, CRD, ROLE, ROLE_BINDING, lease], &ctl));
    let a = answer(&g, "own.labhub.io", "Site", Some("labs"), "alpha", "own.labhub.io/cleanup");
    assert_eq!(a.controller, ControllerState::Alive);
    assert_evidence(
        &a,
        &["Pod site-ctl-6c9f-q7 is Pending", "lease ops/abc.own.labhub.io held by site-ctl-6c9f-zz_1, renewed 10s ago"],
    );
}

#[test]
fn an_uninstalled_operator_is_missing() {
    let g = fixture("namespace-terminating");
    let a = answer(&g, "own.labhub.io", "Site", Some("labs"), "alpha", "own.labhub.io/cleanup");
    assert_eq!(a.controller, ControllerState::Missing);
    assert_eq!(a.workload, None);
    assert_evidence(
        &a,
        &[
            "domain own.labhub.io matches CRD sites.own.labhub.io",
            "no Role or ClusterRole (wildcard admin roles aside) grants update or patch on own.labhub.io",
            "no leader-election lease is named after own.labhub.io",
            "the controller appears to be uninstalled",
        ],
    );
}

#[test]
fn leftover_rbac_without_a_workload_is_still_missing() {
    let g = graph_of(&[SITE, CRD, KCM_LEASE, ROLE, ROLE_BINDING, CI_DEPLOYMENT]);
    let a = answer(&g, "own.labhub.io", "Site", Some("labs"), "alpha", "own.labhub.io/cleanup");
    assert_eq!(a.controller, ControllerState::Missing);
    assert_eq!(a.removed_by.as_deref(), Some("ServiceAccount ops/site-ctl"));
    assert_evidence(&a, &["no Pod or workload runs as ServiceAccount ops/site-ctl", "(only its RBAC remains)"]);
}

#[test]
fn unreadable_pods_and_rbac_make_an_absence_unknown() {
    let g = graph_with(
        &[SITE, CRD, KCM_LEASE, CI_DEPLOYMENT],
        &[
            crate::testing::forbidden("", "pods"),
            crate::testing::forbidden("rbac.authorization.k8s.io", "clusterrolebindings"),
        ],
    );
    let a = answer(&g, "own.labhub.io", "Site", Some("labs"), "alpha", "own.labhub.io/cleanup");
    assert_eq!(a.controller, ControllerState::Unknown);
    assert_evidence(
        &a,
        &[
            "could not read Pods (\"pods could not be listed: forbidden\"), RBAC objects (\"clusterrolebindings.rbac.authorization.k8s.io could not be listed: forbidden\")",
        ],
    );
}

/// A snapshot file written before gaps were typed holds lines alone: whatever they say, the
/// sources they might hide are taken as unreadable, so an absence is Unknown, never Missing.
#[test]
fn a_line_without_fields_makes_an_absence_unknown_whatever_it_says() {
    let g = graph_with(&[SITE, CRD, KCM_LEASE, CI_DEPLOYMENT], &["sites.own.labhub.io: forbidden".into()]);
    let a = answer(&g, "own.labhub.io", "Site", Some("labs"), "alpha", "own.labhub.io/cleanup");
    assert_eq!(a.controller, ControllerState::Unknown);
    assert_evidence(&a, &["could not read Pods (\"sites.own.labhub.io: forbidden\")"]);
    // the same line, typed as a list of sites, hides no controller: the absence is earned
    let typed =
        graph_with(&[SITE, CRD, KCM_LEASE, CI_DEPLOYMENT], &[crate::testing::forbidden("own.labhub.io", "sites")]);
    let a = answer(&typed, "own.labhub.io", "Site", Some("labs"), "alpha", "own.labhub.io/cleanup");
    assert_eq!(a.controller, ControllerState::Missing);
}

#[test]
fn a_snapshot_with_nothing_to_search_is_unknown() {
    let g = graph_of(&[SITE, CRD]);
    let a = answer(&g, "own.labhub.io", "Site", Some("labs"), "alpha", "own.labhub.io/cleanup");
    assert_eq!(a.controller, ControllerState::Unknown);
    assert_evidence(&a, &["holds no Pods, workloads, RBAC objects or Leases"]);
}

#[test]
fn a_bare_finalizer_without_a_manager_is_unknown() {
    let g = graph_of(&[
        KCM_LEASE,
        r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","namespace":"labs","uid":"cm","finalizers":["wait-for-it"]}}"#,
    ]);
    let a = answer(&g, "", "ConfigMap", Some("labs"), "c", "wait-for-it");
    assert_eq!(a.controller, ControllerState::Unknown);
    assert_evidence(&a, &["wait-for-it names no domain"]);
}

#[test]
fn a_unique_container_named_like_the_field_manager_identifies_the_controller() {
    // kubebuilder's default manager name is `manager`, its container's name
    let g = graph_of(&[
        KCM_LEASE,
        r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","namespace":"labs","uid":"cm",
            "finalizers":["acme.example.com/cleanup"],
            "managedFields":[{"manager":"manager","operation":"Update",
               "fieldsV1":{"f:metadata":{"f:finalizers":{"v:\"acme.example.com/cleanup\"":{}}}}}]}}"#,
        r#"{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"acme-controller-manager","namespace":"acme-system","uid":"d"},
            "spec":{"replicas":1,"template":{"spec":{"containers":[{"name":"manager"},{"name":"kube-rbac-proxy"}]}}},
            "status":{"readyReplicas":0,"conditions":[{"type":"Available","status":"False","lastTransitionTime":"2026-11-29T07:00:00Z"}]}}"#,
    ]);
    let a = answer(&g, "", "ConfigMap", Some("labs"), "c", "acme.example.com/cleanup");
    assert_eq!(a.removed_by.as_deref(), Some("Deployment acme-system/acme-controller-manager"));
    assert_eq!(a.controller, ControllerState::Down);
    assert_eq!(a.since, Some("2026-11-29T07:00:00Z".parse().unwrap()));
    assert_evidence(
        &a,
        &[
            "field manager \"manager\" (Update) added it; that name matches Deployment acme-system/acme-controller-manager",
            "has no ready replica (0/1), and no Pod of it is in the snapshot",
        ],
    );
}

#[test]
fn an_unlisted_kubernetes_finalizer_is_unknown_not_missing() {
    let g = graph_of(&[
        KCM_LEASE,
        r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","namespace":"labs","uid":"cm","finalizers":["kubernetes.io/new-protection"]}}"#,
    ]);
    let a = answer(&g, "", "ConfigMap", Some("labs"), "c", "kubernetes.io/new-protection");
    assert_eq!(a.controller, ControllerState::Unknown);
    assert_evidence(&a, &["Kubernetes-reserved domain"]);
}

#[test]
fn objects_sharing_a_finalizer_get_the_same_answer() {
    let g = fixture("site-operator-gone");
    let l = Liveness::new(&g, now());
    let ids: Vec<_> =
        ["alpha-config", "alpha-audit"].iter().map(|n| g.find("", "ConfigMap", Some("labs"), n).unwrap()).collect();
    let a = l.finalizer(ids[0], "own.labhub.io/cleanup");
    assert_eq!(a, l.finalizer(ids[1], "own.labhub.io/cleanup"));
    assert_eq!(a.controller, ControllerState::Down);
}

// --- both directions earned ------------------------------------------------------------------

const VELERO: &[&str] = &[
    r#"{"apiVersion":"velero.io/v1","kind":"Restore","metadata":{"name":"nightly","namespace":"velero","uid":"r",
        "finalizers":["restores.velero.io/external-resources-finalizer"],"deletionTimestamp":"2026-11-29T11:57:30Z"}}"#,
    r#"{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"restores.velero.io","uid":"crd"},
        "spec":{"group":"velero.io","names":{"kind":"Restore","plural":"restores"}}}"#,
    KCM_LEASE,
    ADMIN,
    r#"{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRoleBinding","metadata":{"name":"velero","uid":"crb"},
        "roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole","name":"cluster-admin"},
        "subjects":[{"kind":"ServiceAccount","name":"velero","namespace":"velero"}]}"#,
];

fn velero(replicas_ready: u32) -> Vec<String> {
    vec![format!(
        r#"{{"apiVersion":"apps/v1","kind":"Deployment","metadata":{{"name":"velero","namespace":"velero","uid":"d"}},
            "spec":{{"replicas":1,"template":{{"spec":{{"serviceAccountName":"velero","containers":[{{"name":"velero"}}]}}}}}},
            "status":{{"readyReplicas":{replicas_ready}}}}}"#
    )]
}

#[test]
fn a_controller_bound_to_cluster_admin_is_found_by_its_name_not_missing() {
    let d = velero(1);
    let g = graph_of(&docs(VELERO, &d));
    let a = answer(
        &g,
        "velero.io",
        "Restore",
        Some("velero"),
        "nightly",
        "restores.velero.io/external-resources-finalizer",
    );
    assert_eq!(a.controller, ControllerState::Alive, "{:#?}", a.evidence);
    assert_eq!(a.removed_by.as_deref(), Some("Deployment velero/velero"));
    assert_evidence(
        &a,
        &[
            "Deployment velero/velero is named by the finalizer (by its name",
            "ClusterRoleBinding velero binds ClusterRole cluster-admin (every resource) to ServiceAccount velero/velero",
            "1/1 ready",
        ],
    );
    // the same controller, down, is Down (scale it up), not Missing (reinstall)
    let d = velero(0);
    let g = graph_of(&docs(VELERO, &d));
    let a = answer(
        &g,
        "velero.io",
        "Restore",
        Some("velero"),
        "nightly",
        "restores.velero.io/external-resources-finalizer",
    );
    assert_eq!(a.controller, ControllerState::Down, "{:#?}", a.evidence);
}

#[test]
fn the_admin_bound_fixture_is_alive_by_its_field_manager() {
    let g = fixture("admin-bound-controller");
    let a = answer(
        &g,
        "archive.example.net",
        "Restore",
        Some("archive"),
        "ledger-2026-11-29",
        "restores.archive.example.net/external-resources",
    );
    assert_eq!(a.controller, ControllerState::Alive, "{:#?}", a.evidence);
    assert_eq!(a.removed_by.as_deref(), Some("Deployment vault-backup/archiver"));
}

#[test]
fn a_domain_that_is_no_api_group_names_a_workload_that_is_not_alive_by_its_name_alone() {
    // `controller.cattle.io` is no API group and no RBAC is in view; `cattle-cluster-agent`
    // runs as ServiceAccount `cattle`, a name the finalizer gives: a name alone, never Alive
    let secret = |managers: &str| {
        format!(
            r#"{{"apiVersion":"v1","kind":"Secret","metadata":{{"name":"c-m-1","namespace":"fleet-default","uid":"s",
            "finalizers":["controller.cattle.io/cluster-agent-controller-cleanup"],"deletionTimestamp":"2026-11-29T11:50:00Z"{managers}}}}}"#
        )
    };
    let agent = r#"{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"cattle-cluster-agent","namespace":"cattle-system","uid":"d"},
            "spec":{"replicas":1,"template":{"spec":{"serviceAccountName":"cattle","containers":[{"name":"cluster-register"}]}}},
            "status":{"readyReplicas":1}}"#;
    let web = r#"{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"shop","uid":"w"},
            "spec":{"replicas":1},"status":{"readyReplicas":1}}"#;
    let f = "controller.cattle.io/cluster-agent-controller-cleanup";
    let plain = secret("");
    let g = graph_of(&[KCM_LEASE, &plain, agent, web]);
    let a = answer(&g, "", "Secret", Some("fleet-default"), "c-m-1", f);
    assert_eq!(a.controller, ControllerState::Unknown, "{:#?}", a.evidence);
    assert!(a.by_permission_only);
    assert_evidence(&a, &["named by the finalizer (by its ServiceAccount", "tied to this finalizer by name only"]);
    // its field manager added the finalizer: rung 1 ties it
    let added = secret(
        r#","managedFields":[{"manager":"cattle-cluster-agent","operation":"Update",
            "fieldsV1":{"f:metadata":{"f:finalizers":{"v:\"controller.cattle.io/cluster-agent-controller-cleanup\"":{}}}}}]"#,
    );
    let g = graph_of(&[KCM_LEASE, &added, agent, web]);
    let a = answer(&g, "", "Secret", Some("fleet-default"), "c-m-1", f);
    assert_eq!(a.controller, ControllerState::Alive, "{:#?}", a.evidence);
    assert_eq!(a.removed_by.as_deref(), Some("Deployment cattle-system/cattle-cluster-agent"));
    assert_evidence(&a, &["decided by rung 1 (the field manager that added the finalizer)"]);
}

/// A visible cluster with one unrelated operator: Pods, workloads, RBAC and Leases all readable.
const VISIBLE: &[&str] = &[KCM_LEASE, ROLE, ROLE_BINDING, CI_DEPLOYMENT];

#[test]
fn a_managed_control_plane_finalizer_is_unknown_not_missing_and_nothing_destructive_comes_first() {
    let neg = r#"{"apiVersion":"networking.gke.io/v1beta1","kind":"ServiceNetworkEndpointGroup","metadata":{"name":"k8s1-neg","namespace":"shop","uid":"neg",
        "finalizers":["networking.gke.io/neg-finalizer"],"deletionTimestamp":"2026-11-29T09:00:00Z"}}"#;
    let g = graph_of(&[VISIBLE, &[neg]].concat());
    let a = answer(
        &g,
        "networking.gke.io",
        "ServiceNetworkEndpointGroup",
        Some("shop"),
        "k8s1-neg",
        "networking.gke.io/neg-finalizer",
    );
    assert_eq!(a.controller, ControllerState::Unknown, "{:#?}", a.evidence);
    assert_evidence(&a, &["run by Google in the control plane", "proves nothing"]);
    let d = why(&g, "networking.gke.io", "ServiceNetworkEndpointGroup", Some("shop"), "k8s1-neg");
    assert!(!d.stuck);
    assert_safest_first(&d);
    assert!(!d.findings.iter().any(|f| f.code == crate::diagnose::FindingCode::FinalizerControllerMissing));
}

#[test]
fn a_just_deleted_object_whose_controller_is_not_found_is_looked_at_again_first() {
    let cm = r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","namespace":"labs","uid":"cm",
        "finalizers":["acme.example.com/cleanup"],"deletionTimestamp":"2026-11-29T11:57:30Z"}}"#;
    let g = graph_of(&[VISIBLE, &[cm]].concat());
    let a = answer(&g, "", "ConfigMap", Some("labs"), "c", "acme.example.com/cleanup");
    assert_eq!(a.controller, ControllerState::Missing, "{:#?}", a.evidence);
    assert_evidence(&a, &["searched: workloads, containers, ServiceAccounts, app labels and Leases named acme"]);
    let d = why(&g, "", "ConfigMap", Some("labs"), "c");
    assert_safest_first(&d);
    let first = &d.findings.iter().find(|f| !f.remedy.is_empty()).expect("a remedy").remedy[0];
    assert_eq!(first.reach, crate::diagnose::Reach::Inspect);
    assert!(first.text.contains("deleted only 2m"), "{first:?}");
}

// --- CSI ---------------------------------------------------------------------------------------

#[test]
fn csi_attacher_of_a_running_driver_is_alive_by_its_lease_and_controller() {
    let g = fixture("csi-driver-removed");
    let va = "csi-00b962ee2d396803286901b07ec8b1083c203ca85d3974d80e6b158e3e836bba";
    let a = answer(&g, "storage.k8s.io", "VolumeAttachment", None, va, "external-attacher/disk-csi-example-com");
    assert_eq!(a.controller, ControllerState::Alive, "{:#?}", a.evidence);
    assert_eq!(a.removed_by.as_deref(), Some("Deployment kube-system/disk-csi-controller (external-attacher)"));
    assert_evidence(
        &a,
        &[
            "CSIDriver disk.csi.example.com is registered",
            "lease kube-system/external-attacher-leader-disk-csi-example-com held by disk-csi-controller",
            "node plugin DaemonSet kube-system/disk-csi-node",
        ],
    );
}

#[test]
fn csi_attacher_of_an_uninstalled_driver_is_missing_and_says_what_was_searched() {
    let g = fixture("csi-driver-removed");
    let pv = "pvc-5f0e2c71-9b3d-4e8a-a6f4-1d2c3b4a5e6f";
    let a = answer(&g, "", "PersistentVolume", None, pv, "external-attacher/block-csi-example-com");
    assert_eq!(a.controller, ControllerState::Missing, "{:#?}", a.evidence);
    assert_evidence(
        &a,
        &[
            "no CSIDriver block.csi.example.com is registered (only disk.csi.example.com)",
            "searched: CSIDriver block.csi.example.com, the sidecars' Leases (external-attacher-leader-block-csi-example-com",
        ],
    );
}

#[test]
fn csi_provisioner_with_a_stale_lease_and_an_unready_controller_is_down() {
    let g = graph_of(&[
        KCM_LEASE,
        r#"{"apiVersion":"v1","kind":"PersistentVolume","metadata":{"name":"pv1","uid":"pv",
            "finalizers":["external-provisioner.volume.kubernetes.io/finalizer"],"deletionTimestamp":"2026-11-29T11:00:00Z"},
            "spec":{"csi":{"driver":"ebs.csi.aws.com","volumeHandle":"vol-1"}}}"#,
        r#"{"apiVersion":"storage.k8s.io/v1","kind":"CSIDriver","metadata":{"name":"ebs.csi.aws.com","uid":"drv"}}"#,
        r#"{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"ebs-csi-aws-com","namespace":"kube-system","uid":"l"},
            "spec":{"holderIdentity":"ebs-csi-controller-7f-abc","leaseDurationSeconds":15,"renewTime":"2026-11-29T10:30:00Z"}}"#,
        r#"{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"ebs-csi-controller","namespace":"kube-system","uid":"d"},
            "spec":{"replicas":2,"template":{"spec":{"containers":[{"name":"ebs-plugin"},{"name":"csi-provisioner"}]}}},
            "status":{"readyReplicas":0}}"#,
    ]);
    let a = answer(&g, "", "PersistentVolume", None, "pv1", "external-provisioner.volume.kubernetes.io/finalizer");
    assert_eq!(a.controller, ControllerState::Down, "{:#?}", a.evidence);
    assert_eq!(a.workload.as_ref().map(|w| w.name.as_str()), Some("ebs-csi-controller"));
    assert_eq!(a.since, Some("2026-11-29T10:30:00Z".parse().unwrap()));
    assert_evidence(&a, &["lease kube-system/ebs-csi-aws-com held by ebs-csi-controller-7f-abc was last renewed"]);
}

#[test]
fn csi_driver_run_by_a_managed_control_plane_is_unknown_not_missing() {
    let g = graph_of(&[
        KCM_LEASE,
        CI_DEPLOYMENT,
        r#"{"apiVersion":"v1","kind":"PersistentVolume","metadata":{"name":"pv1","uid":"pv",
            "finalizers":["external-attacher/pd-csi-storage-gke-io"],"deletionTimestamp":"2026-11-29T11:00:00Z"},
            "spec":{"csi":{"driver":"pd.csi.storage.gke.io","volumeHandle":"d-1"}}}"#,
    ]);
    let a = answer(&g, "", "PersistentVolume", None, "pv1", "external-attacher/pd-csi-storage-gke-io");
    assert_eq!(a.controller, ControllerState::Unknown, "{:#?}", a.evidence);
    assert_evidence(&a, &["GKE runs this driver's controller in the control plane"]);
}

#[test]
fn cloud_controller_manager_out_of_sight_is_unknown_not_assumed_alive() {
    let g = graph_of(&[r#"{"apiVersion":"v1","kind":"Service","metadata":{"name":"lb","namespace":"labs","uid":"svc",
            "finalizers":["service.kubernetes.io/load-balancer-cleanup"]}}"#]);
    let a = answer(&g, "", "Service", Some("labs"), "lb", "service.kubernetes.io/load-balancer-cleanup");
    assert_eq!(a.controller, ControllerState::Unknown);
    assert_eq!(a.evidence.iter().filter(|e| e.contains("cloud-controller-manager")).count(), 2, "{:#?}", a.evidence);
    assert_evidence(&a, &["the control plane is not visible"]);
}

fn why(g: &Graph, group: &str, kind: &str, ns: Option<&str>, name: &str) -> crate::diagnose::Diagnosis {
    let id = g.find(group, kind, ns, name).unwrap_or_else(|| panic!("{kind} {name} not in the test snapshot"));
    crate::diagnose::why_stuck(g, &Liveness::new(g, now()), id)
}

/// No destructive step precedes a non-destructive one, across the whole answer.
#[track_caller]
fn assert_safest_first(d: &crate::diagnose::Diagnosis) {
    let steps: Vec<&crate::diagnose::Step> = d.findings.iter().flat_map(|f| &f.remedy).collect();
    assert!(!steps.is_empty(), "no remedy at all: {:#?}", d.findings);
    let first_destructive = steps.iter().position(|s| s.reach.destructive()).unwrap_or(steps.len());
    assert!(steps[first_destructive..].iter().all(|s| s.reach.destructive()), "{steps:#?}");
    assert!(!steps[0].reach.destructive(), "{steps:#?}");
}

#[test]
fn permission_alone_never_keeps_an_old_deletion_in_progress() {
    let ctl = ops_agent(READY);
    // two hours into the deletion: stuck, with the candidate's logs as the first step
    let g = graph_of(&docs(&[SITE, CRD, KCM_LEASE], &ctl));
    let d = why(&g, "own.labhub.io", "Site", Some("labs"), "alpha");
    assert!(d.stuck, "{:#?}", d.findings);
    assert_safest_first(&d);
    let f = d.findings.iter().find(|f| f.code == crate::diagnose::FindingCode::FinalizerControllerUnknown).unwrap();
    assert_eq!(f.severity, crate::diagnose::Severity::Error);
    let first = f.remedy[0].command.as_ref().map(|c| c.line(&crate::diagnose::Connection::default()));
    assert_eq!(first.as_deref(), Some("kubectl logs deployment/ops-agent -n ops"), "{:#?}", f.remedy);
    // twenty minutes in: not stuck, but not "in progress" either
    let young = SITE.replace("10:00:00Z", "11:40:00Z");
    let g = graph_of(&docs(&[&young, CRD, KCM_LEASE], &ctl));
    let d = why(&g, "own.labhub.io", "Site", Some("labs"), "alpha");
    assert!(!d.stuck);
    let mut out = Vec::new();
    crate::render::text::write_why_stuck(
        &g,
        &d,
        &crate::diagnose::Connection::default(),
        crate::render::style::Style::PLAIN,
        &mut out,
    )
    .unwrap();
    let text = String::from_utf8(out).unwrap();
    assert!(text.starts_with("UNKNOWN Site labs/alpha has been terminating for 20m"), "{text}");
    assert!(!text.contains("in progress"), "{text}");
}

#[test]
fn the_topic_operator_named_by_the_finalizer_beats_the_cluster_operator_that_may_only_delegate() {
    // Strimzi: the cluster operator may update kafkatopics/finalizers only to grant it to the
    // entity operator it deploys; the topic operator runs there as container `topic-operator`
    let crd = r#"{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"kafkatopics.kafka.strimzi.io","uid":"crd"},
        "spec":{"group":"kafka.strimzi.io","names":{"kind":"KafkaTopic","plural":"kafkatopics"}}}"#;
    let topic = r#"{"apiVersion":"kafka.strimzi.io/v1beta2","kind":"KafkaTopic","metadata":{"name":"orders","namespace":"kafka","uid":"t",
        "finalizers":["strimzi.io/topic-operator"],"deletionTimestamp":"2026-11-29T11:58:00Z"}}"#;
    let role = r#"{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRole","metadata":{"name":"strimzi-entity-operator","uid":"cr"},
        "rules":[{"apiGroups":["kafka.strimzi.io"],"resources":["kafkatopics","kafkatopics/finalizers"],"verbs":["update","patch"]}]}"#;
    let binding = r#"{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRoleBinding","metadata":{"name":"strimzi-cluster-operator-entity-operator-delegation","uid":"crb"},
        "roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole","name":"strimzi-entity-operator"},
        "subjects":[{"kind":"ServiceAccount","name":"strimzi-cluster-operator","namespace":"kafka"}]}"#;
    let cluster_operator = r#"{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"strimzi-cluster-operator","namespace":"kafka","uid":"co"},
        "spec":{"replicas":1,"template":{"spec":{"serviceAccountName":"strimzi-cluster-operator","containers":[{"name":"strimzi-cluster-operator"}]}}},
        "status":{"readyReplicas":1}}"#;
    let entity_operator = r#"{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"my-cluster-entity-operator","namespace":"kafka","uid":"eo"},
        "spec":{"replicas":1,"template":{"spec":{"serviceAccountName":"my-cluster-entity-operator","containers":[{"name":"topic-operator"},{"name":"user-operator"}]}}},
        "status":{"readyReplicas":1}}"#;
    // as Strimzi does, the cluster operator binds the role to the entity operator's account
    let delegated = r#"{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"RoleBinding","metadata":{"name":"my-cluster-entity-topic-operator-role","namespace":"kafka","uid":"rb"},
        "roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole","name":"strimzi-entity-operator"},
        "subjects":[{"kind":"ServiceAccount","name":"my-cluster-entity-operator","namespace":"kafka"}]}"#;
    let g = graph_of(&[KCM_LEASE, crd, topic, role, binding, delegated, cluster_operator, entity_operator]);
    let a = answer(&g, "kafka.strimzi.io", "KafkaTopic", Some("kafka"), "orders", "strimzi.io/topic-operator");
    assert_eq!(a.controller, ControllerState::Alive, "{:#?}", a.evidence);
    assert_eq!(a.removed_by.as_deref(), Some("Deployment kafka/my-cluster-entity-operator"));
    assert_evidence(
        &a,
        &["named by the finalizer (by a container", "other candidates: Deployment kafka/strimzi-cluster-operator"],
    );
    // without the entity operator, the cluster operator's permission proves nothing
    let g = graph_of(&[KCM_LEASE, crd, topic, role, binding, cluster_operator]);
    let a = answer(&g, "kafka.strimzi.io", "KafkaTopic", Some("kafka"), "orders", "strimzi.io/topic-operator");
    assert_eq!(a.controller, ControllerState::Unknown, "{:#?}", a.evidence);
    assert!(a.by_permission_only);
    assert_evidence(&a, &["Deployment kafka/strimzi-cluster-operator is tied to this finalizer by permission only"]);
}

#[test]
fn a_flux_helm_release_just_deleted_is_pending_on_the_helm_controller_bound_to_a_wide_role() {
    let g = graph_of(&[
        KCM_LEASE,
        ADMIN,
        r#"{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"helmreleases.helm.toolkit.fluxcd.io","uid":"crd"},
            "spec":{"group":"helm.toolkit.fluxcd.io","names":{"kind":"HelmRelease","plural":"helmreleases"}}}"#,
        r#"{"apiVersion":"helm.toolkit.fluxcd.io/v2","kind":"HelmRelease","metadata":{"name":"podinfo","namespace":"apps","uid":"hr",
            "finalizers":["finalizers.fluxcd.io"],"deletionTimestamp":"2026-11-29T11:58:00Z"}}"#,
        r#"{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRoleBinding","metadata":{"name":"cluster-reconciler-flux-system","uid":"crb"},
            "roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole","name":"cluster-admin"},
            "subjects":[{"kind":"ServiceAccount","name":"helm-controller","namespace":"flux-system"},
                        {"kind":"ServiceAccount","name":"kustomize-controller","namespace":"flux-system"}]}"#,
        r#"{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"helm-controller","namespace":"flux-system","uid":"hc"},
            "spec":{"replicas":1,"template":{"spec":{"serviceAccountName":"helm-controller","containers":[{"name":"manager"}]}}},
            "status":{"readyReplicas":1}}"#,
        r#"{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"kustomize-controller","namespace":"flux-system","uid":"kc"},
            "spec":{"replicas":1,"template":{"spec":{"serviceAccountName":"kustomize-controller","containers":[{"name":"manager"}]}}},
            "status":{"readyReplicas":1}}"#,
    ]);
    let a = answer(&g, "helm.toolkit.fluxcd.io", "HelmRelease", Some("apps"), "podinfo", "finalizers.fluxcd.io");
    assert_eq!(a.controller, ControllerState::Alive, "{:#?}", a.evidence);
    assert_eq!(a.removed_by.as_deref(), Some("Deployment flux-system/helm-controller"));
    let d = why(&g, "helm.toolkit.fluxcd.io", "HelmRelease", Some("apps"), "podinfo");
    assert!(!d.stuck);
    assert_safest_first(&d);
    assert!(d.findings.iter().any(|f| f.code == crate::diagnose::FindingCode::FinalizerPending));
}

#[test]
fn snapshot_finalizers_belong_to_the_one_snapshot_controller() {
    let snap = r#"{"apiVersion":"snapshot.storage.k8s.io/v1","kind":"VolumeSnapshot","metadata":{"name":"s1","namespace":"db","uid":"vs",
        "finalizers":["snapshot.storage.kubernetes.io/volumesnapshot-bound-protection"],"deletionTimestamp":"2026-11-29T11:00:00Z"}}"#;
    let f = "snapshot.storage.kubernetes.io/volumesnapshot-bound-protection";
    // installed and leading
    let g = graph_of(&[
        KCM_LEASE,
        snap,
        r#"{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"snapshot-controller-leader","namespace":"kube-system","uid":"l"},
            "spec":{"holderIdentity":"snapshot-controller-5d8f-xyz12","leaseDurationSeconds":15,"renewTime":"2026-11-29T11:59:59Z"}}"#,
        r#"{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"snapshot-controller","namespace":"kube-system","uid":"d"},
            "spec":{"replicas":2},"status":{"readyReplicas":2}}"#,
    ]);
    let a = answer(&g, "snapshot.storage.k8s.io", "VolumeSnapshot", Some("db"), "s1", f);
    assert_eq!(a.controller, ControllerState::Alive, "{:#?}", a.evidence);
    assert_eq!(a.removed_by.as_deref(), Some("Deployment kube-system/snapshot-controller"));
    // not installed, everything readable: Missing, saying what was searched
    let g = graph_of(&[VISIBLE, &[snap]].concat());
    let a = answer(&g, "snapshot.storage.k8s.io", "VolumeSnapshot", Some("db"), "s1", f);
    assert_eq!(a.controller, ControllerState::Missing, "{:#?}", a.evidence);
    assert_evidence(&a, &["searched: Lease snapshot-controller-leader"]);
    // on GKE it runs in the control plane: Unknown
    let node = r#"{"apiVersion":"v1","kind":"Node","metadata":{"name":"gke-pool-1","uid":"n","labels":{"cloud.google.com/gke-nodepool":"pool-1"}}}"#;
    let g = graph_of(&[VISIBLE, &[snap, node]].concat());
    let a = answer(&g, "snapshot.storage.k8s.io", "VolumeSnapshot", Some("db"), "s1", f);
    assert_eq!(a.controller, ControllerState::Unknown, "{:#?}", a.evidence);
}

#[test]
fn cloud_controller_manager_of_a_managed_cluster_is_unknown_and_says_whose() {
    let g = graph_of(&[
        KCM_LEASE,
        r#"{"apiVersion":"v1","kind":"Node","metadata":{"name":"ip-10-0-1-2","uid":"n","labels":{"eks.amazonaws.com/nodegroup":"ng-1"}}}"#,
        r#"{"apiVersion":"v1","kind":"Service","metadata":{"name":"lb","namespace":"labs","uid":"svc",
            "finalizers":["service.kubernetes.io/load-balancer-cleanup"],"deletionTimestamp":"2026-11-29T11:00:00Z"}}"#,
    ]);
    let a = answer(&g, "", "Service", Some("labs"), "lb", "service.kubernetes.io/load-balancer-cleanup");
    assert_eq!(a.controller, ControllerState::Unknown);
    assert_evidence(&a, &["the nodes are EKS's, which runs it in the control plane"]);
    let d = why(&g, "", "Service", Some("labs"), "lb");
    assert!(!d.stuck);
    assert_safest_first(&d);
}

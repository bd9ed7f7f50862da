//! Weighing the rungs together (contract §4.3.3): ties of live candidates, field managers
//! that are a binary's name, RBAC on the object's own resource, leases named after a Go
//! package, install provenance, operands tied twice; and, for each, that names alone still
//! decide nothing.

use super::*;

/// The workload's Deployment with its container running `command` from `image`.
fn running(mut docs: Vec<String>, command: &str, image: &str) -> Vec<String> {
    docs[0] = docs[0].replace(
        r#""containers":[{"name":"main"}]"#,
        &format!(
            r#""containers":[{{"name":"main","command":["{command}"],"args":["--metrics=:8080"],"image":"{image}"}}]"#
        ),
    );
    docs
}

/// The base, its CRD labelled `labels` (a JSON object's members).
fn base_with_crd_labels(widget_meta: &str, labels: &str) -> Vec<String> {
    let mut docs = base(widget_meta);
    docs[1] = docs[1].replace(r#""uid":"crd"}"#, &format!(r#""uid":"crd","labels":{{{labels}}}}}"#));
    assert!(docs[1].contains("labels"), "the CRD took its labels");
    docs
}

/// `,"managedFields":[…]`: `manager` added the finalizer at `time`.
fn added_at(manager: &str, time: &str) -> String {
    added_by(manager).replace("2026-11-20T10:00:00Z", time)
}

/// Role `configmaps` update, bound to `ns/sa`.
fn may_update_configmaps(ns: &str, sa: &str) -> Vec<String> {
    vec![
        format!(
            r#"{{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRole","metadata":{{"name":"cm-{sa}","uid":"cm-cr-{sa}"}},
            "rules":[{{"apiGroups":[""],"resources":["configmaps"],"verbs":["get","update","patch"]}}]}}"#
        ),
        format!(
            r#"{{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRoleBinding","metadata":{{"name":"cm-{sa}","uid":"cm-crb-{sa}"}},
            "roleRef":{{"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole","name":"cm-{sa}"}},
            "subjects":[{{"kind":"ServiceAccount","name":"{sa}","namespace":"{ns}"}}]}}"#
        ),
    ]
}

#[test]
fn a_tie_of_live_candidates_is_alive_and_of_down_ones_down() {
    let both = |ready_a, ready_b| {
        answer(&[
            base(""),
            workload("widget-operator", "acme", "widget-operator", ready_a, ""),
            workload("widget-controller", "acme", "widget-controller", ready_b, ""),
            may_update_widgets("acme", "widget-operator"),
            may_update_widgets("acme", "widget-controller"),
        ])
    };
    let a = both(true, true);
    check(
        &a,
        Alive,
        Some("one of Deployment acme/widget-controller or Deployment acme/widget-operator"),
        &["every one of them runs: a tie says which of them removes it, not whether it runs"],
    );
    assert_eq!(a.workload, None, "a tie names no one workload");
    let a = both(false, false);
    check(
        &a,
        Down,
        Some("one of Deployment acme/widget-controller or Deployment acme/widget-operator"),
        &["none of them runs"],
    );
    // disagreeing: one runs, one does not
    let a = both(true, false);
    check(
        &a,
        Unknown,
        Some("Deployment acme/widget-controller or Deployment acme/widget-operator"),
        &["do not agree on whether it runs"],
    );
}

#[test]
fn a_tie_by_names_alone_stays_unknown_however_alive() {
    // two live siblings named by the domain's label, no RBAC: weighing brings no name back
    let a = answer(&[
        base(""),
        workload("acme-api", "acme", "acme-api", true, ""),
        workload("acme-ui", "acme", "acme-ui", true, ""),
    ]);
    assert_eq!(a.controller, Unknown, "{:#?}", a.evidence);
    assert!(a.by_permission_only, "{:#?}", a.evidence);
    assert!(!a.removed_by.as_deref().unwrap_or("").starts_with("one of"), "{:?}", a.removed_by);
}

#[test]
fn a_field_manager_resolves_to_the_program_a_container_runs_or_its_image() {
    let a = answer(&[
        base(&added_by("lanternd")),
        running(
            workload("nightwatch", "ops", "nightwatch", true, ""),
            "/usr/local/bin/lanternd",
            "reg.example/ops/ctl:v1",
        ),
    ]);
    check(
        &a,
        Alive,
        Some("Deployment ops/nightwatch"),
        &["(by a program its containers run, or their image)", "decided by rung 1"],
    );
    let a = answer(&[
        base(&added_by("lanternd")),
        running(
            workload("nightwatch", "ops", "nightwatch", true, ""),
            "/ko-app",
            "reg.example/ops/lanternd:v1@sha256:ab",
        ),
    ]);
    check(&a, Alive, Some("Deployment ops/nightwatch"), &["decided by rung 1"]);
    // a flag's value names no program
    let a = answer(&[
        base(&added_by("lanternd")),
        running(workload("nightwatch", "ops", "nightwatch", true, ""), "--name=lanternd", "reg.example/ops/ctl:v1"),
    ]);
    check(&a, Missing, Some("field manager \"lanternd\""), &["the controller appears to be uninstalled"]);
}

#[test]
fn a_finalizer_never_names_a_workload_by_its_image() {
    // the domain's label `acme` is the image's repository: programs and images resolve
    // field managers, never a finalizer's names
    let a = answer(&[
        base(""),
        running(workload("gateway", "edge", "gateway", true, ""), "/gw", "reg.example/edge/acme:v1"),
        may_update_widgets("edge", "gateway"),
    ]);
    check(&a, Unknown, Some("Deployment edge/gateway"), &["by permission only (RBAC)"]);
}

#[test]
fn a_manager_writing_since_the_deletion_is_alive_whoever_runs_it() {
    let a = answer(&[base(&added_at("ghostd", "2026-11-29T11:59:00Z"))]);
    check(
        &a,
        Alive,
        Some("field manager \"ghostd\""),
        &["wrote the object after its deletion began", "decided by rung 1"],
    );
    // its last write before the deletion: its absence is evidence
    let a = answer(&[base(&added_at("ghostd", "2026-11-29T11:00:00Z"))]);
    check(&a, Missing, Some("field manager \"ghostd\""), &["the controller appears to be uninstalled"]);
}

#[test]
fn rbac_is_read_on_the_objects_own_resource_whatever_the_domain() {
    // a framework's finalizer on a ConfigMap: its reporter holds a lease and may update configmaps
    let cm = r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"zone","namespace":"labs","uid":"zone",
        "finalizers":["kitframe.example.io/finalizer"],"deletionTimestamp":"2026-11-29T11:58:00Z"}}"#;
    let ev = r#"{"apiVersion":"v1","kind":"Event","metadata":{"name":"zone.1","namespace":"labs","uid":"ev-zone"},
        "involvedObject":{"apiVersion":"v1","kind":"ConfigMap","name":"zone","namespace":"labs","uid":"zone"},
        "type":"Normal","reason":"Handler","message":"started","source":{"component":"kitframe"}}"#;
    let docs: Vec<Vec<String>> = vec![
        base(""),
        vec![cm.into(), ev.into(), lease("dns", "zone-publisher", "zone-publisher-rs-p")],
        running(workload("zone-publisher", "dns", "zone-publisher", true, ""), "kitframe", "reg.example/dns/zp:v1"),
        may_update_configmaps("dns", "zone-publisher"),
    ];
    let all: Vec<&str> = docs.iter().flatten().map(String::as_str).collect();
    let g = graph_of(&all);
    let id = g.find("", "ConfigMap", Some("labs"), "zone").unwrap();
    let a = Liveness::new(&g, now()).finalizer(id, "kitframe.example.io/finalizer");
    check(
        &a,
        Alive,
        Some("Deployment dns/zone-publisher"),
        &[
            "may update configmaps",
            "which RBAC lets update the resource, holds leader-election lease dns/zone-publisher",
            "rungs 2 (Events) and 3 (a leader lease) tie Deployment dns/zone-publisher",
        ],
    );
}

#[test]
fn a_lease_named_after_a_go_package_counts_for_its_holder() {
    let knative = "widget-controller.github.com.acme.widgets.pkg.reconciler.widget.reconciler.00-of-01";
    let a = answer(&[
        base(""),
        vec![lease("acme", knative, "widget-controller-rs-p")],
        workload("widget-controller", "acme", "widget-controller", true, ""),
        may_update_widgets("acme", "widget-controller"),
    ]);
    check(&a, Alive, Some("Deployment acme/widget-controller"), &["decided by rung 3"]);
    // a lease named after another domain is that domain's: the name with RBAC decides
    let a = answer(&[
        base(""),
        vec![lease("acme", "5f1e.other.example.org", "widget-controller-rs-p")],
        workload("widget-controller", "acme", "widget-controller", true, ""),
        may_update_widgets("acme", "widget-controller"),
    ]);
    assert_ne!(a.controller, Alive, "{:#?}", a.evidence);
    assert_eq!(super::super::named::lease_domain(knative), None);
    assert_eq!(super::super::named::lease_domain("5f1e.other.example.org"), Some("other.example.org"));
    assert_eq!(super::super::named::lease_domain("gizmo-leader"), None);
}

#[test]
fn an_installation_with_no_workload_left_is_named_missing() {
    let helm = r#""app.kubernetes.io/instance":"gizmo-operator","app.kubernetes.io/managed-by":"Helm","app.kubernetes.io/part-of":"acme""#;
    // a live sibling by prefix, another release of the same product: Missing, the release named
    let dashboard = r#","labels":{"app.kubernetes.io/instance":"acme-dashboard","app.kubernetes.io/part-of":"acme"}"#;
    let a = answer(&[
        base_with_crd_labels(&added_by("manager"), helm),
        workload("acme-dashboard", "acme", "acme-dashboard", true, dashboard),
    ]);
    check(
        &a,
        Missing,
        Some("Helm release gizmo-operator"),
        &[
            "none of its workloads runs: no Deployment, StatefulSet or DaemonSet bears app.kubernetes.io/instance=gizmo-operator",
        ],
    );
    // the release's workload with RBAC on widgets, named like nothing: rung 4 by provenance
    let release = r#","labels":{"app.kubernetes.io/instance":"gizmo-operator"}"#;
    let a = answer(&[
        base_with_crd_labels("", helm),
        workload("gizmo", "acme", "gizmo", true, release),
        may_update_widgets("acme", "gizmo"),
    ]);
    check(
        &a,
        Alive,
        Some("Deployment acme/gizmo"),
        &["tied by install provenance", "decided by rung 4 (install provenance"],
    );
    // without RBAC on widgets it ties nothing, and the installation is not gone
    let a = answer(&[base_with_crd_labels("", helm), workload("gizmo", "acme", "gizmo", true, release)]);
    check(&a, Missing, None, &["install provenance ties it to nothing", "no rung of the ladder ties a controller"]);
}

#[test]
fn a_crd_owned_by_a_workload_is_installed_by_it() {
    // an operator that creates its CRD and owns it: the installation is the operator itself
    let mut docs = base("");
    docs[1] = docs[1].replace(
        r#""uid":"crd"}"#,
        r#""uid":"crd","ownerReferences":[{"apiVersion":"apps/v1","kind":"Deployment","name":"gizmo","uid":"d-gizmo","controller":true}]}"#,
    );
    let a = answer(&[docs.clone(), workload("gizmo", "acme", "gizmo", true, ""), may_update_widgets("acme", "gizmo")]);
    check(
        &a,
        Alive,
        Some("Deployment acme/gizmo"),
        &["Deployment gizmo installed CRD", "decided by rung 4 (install provenance"],
    );
    // a revision whose workload is gone: its installation has nothing left
    docs[1] = docs[1].replace(
        r#""kind":"Deployment","name":"gizmo","uid":"d-gizmo""#,
        r#""kind":"ProviderRevision","name":"gizmo-1a2b","uid":"rev""#,
    );
    let a = answer(&[docs, workload("acme-web", "acme", "acme-web", true, "")]);
    check(&a, Missing, Some("ProviderRevision gizmo-1a2b"), &["bears an owner reference to that ProviderRevision"]);
}

#[test]
fn an_operand_is_the_controller_when_a_second_rung_agrees() {
    let owned = r#","ownerReferences":[{"apiVersion":"storage.acme.example.com/v1","kind":"StorageCluster","name":"main","uid":"sc","controller":true}]"#;
    let a = answer(&[
        base(""),
        workload("widget-operator", "acme", "widget-operator", true, owned),
        may_update_widgets("acme", "widget-operator"),
        vec![lease("acme", "widget-operator-leader", "widget-operator-rs-p")],
    ]);
    check(&a, Alive, Some("Deployment acme/widget-operator"), &["is an operand", "decided by rung 3"]);
}

#[test]
fn the_evidence_says_which_rungs_agreed_and_which_did_not_once_each() {
    // rung 1 ties gizmo; rung 4 ties widget-operator instead
    let a = answer(&[
        base(&added_by("gizmo")),
        workload("gizmo", "acme", "gizmo", true, ""),
        workload("widget-operator", "acme", "widget-operator", true, ""),
        may_update_widgets("acme", "widget-operator"),
    ]);
    check(
        &a,
        Alive,
        Some("Deployment acme/gizmo"),
        &[
            "weighing the rungs: rung 1 (the field manager) ties Deployment acme/gizmo; rung 4 (a name with RBAC) ties Deployment acme/widget-operator instead; silent: 2 (Events), 3 (a leader lease)",
        ],
    );
    let mut seen = std::collections::HashSet::new();
    assert!(a.evidence.iter().all(|e| seen.insert(e)), "a line repeats: {:#?}", a.evidence);
    assert!(a.evidence.iter().filter(|e| e.starts_with("weighing the rungs")).count() == 1);
}

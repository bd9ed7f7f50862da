//! The read policy, driven against an in-memory cluster: no HTTP.

use serde_json::{Value, json};

use super::*;
use crate::snapshot::raw::RawDoc;
use crate::source::live::ask::{Body, Fetch, Use};

use crate::testing::list_type as t;

fn discovery() -> Discovery {
    Discovery {
        types: vec![
            t("", "v1", "pods", "Pod", true),
            t("", "v1", "configmaps", "ConfigMap", true),
            t("", "v1", "events", "Event", true),
            t("", "v1", "namespaces", "Namespace", false),
            t("apps", "v1", "deployments", "Deployment", true),
            t("apps", "v1", "replicasets", "ReplicaSet", true),
            t("coordination.k8s.io", "v1", "leases", "Lease", true),
            t("rbac.authorization.k8s.io", "v1", "rolebindings", "RoleBinding", true),
            t("apiextensions.k8s.io", "v1", "customresourcedefinitions", "CustomResourceDefinition", false),
            t("own.labhub.io", "v1", "sites", "Site", true),
        ],
        ..Discovery::default()
    }
}

/// The test discovery with claims served.
fn with_claims() -> Discovery {
    let mut d = discovery();
    d.types.push(t("", "v1", "persistentvolumeclaims", "PersistentVolumeClaim", true));
    d
}

/// `why-stuck --all -A`.
fn sweeping_all() -> Wants {
    Wants {
        scope: Scope::Cluster,
        capture: false,
        focus: None,
        target: None,
        why_stuck: Some(WhyStuck {
            now: "2026-11-29T12:00:00Z".parse().unwrap(),
            options: crate::diagnose::Options::default(),
        }),
        admission: true,
    }
}

fn answer(wants: Wants) -> Wants {
    wants
}

fn namespace(ns: &str) -> Wants {
    Wants {
        scope: Scope::Namespace(ns.into()),
        capture: false,
        focus: None,
        target: None,
        why_stuck: None,
        admission: false,
    }
}

fn doc(v: Value) -> RawDoc {
    serde_json::from_value(v).unwrap()
}

/// An object of `kind` (`group/version` in `api_version`), with extra metadata.
fn object(api_version: &str, kind: &str, ns: Option<&str>, name: &str, meta: Value) -> Value {
    let mut m = json!({"name": name, "uid": format!("uid-{kind}-{name}")});
    if let Some(ns) = ns {
        m["namespace"] = json!(ns);
    }
    for (k, v) in meta.as_object().unwrap() {
        m[k] = v.clone();
    }
    json!({"apiVersion": api_version, "kind": kind, "metadata": m})
}

/// A cluster in memory, answering asks as a server would: lists filtered by namespace and
/// `metadata.name=` selector, GETs by name (404: absent), managedFields left out of the
/// metadata-only lists that ask so when `drops` is set.
struct Cluster {
    objects: Vec<Value>,
    drops: bool,
}

impl Cluster {
    fn answer(&self, ask: &Ask) -> Answered {
        let mine = |o: &&Value| {
            let av = o["apiVersion"].as_str().unwrap();
            crate::snapshot::object::group_of(av) == ask.kind.group && o["kind"] == ask.kind.kind.as_str()
        };
        let in_ns = |o: &&Value| match &ask.namespace {
            Some(ns) if ask.kind.namespaced => o["metadata"]["namespace"] == ns.as_str(),
            _ => true,
        };
        let mut found: Vec<Value> = self.objects.iter().filter(mine).filter(in_ns).cloned().collect();
        let drop = self.drops && ask.managed_fields == ManagedFieldsAsk::Drop && !matches!(ask.fetch, Fetch::Get(_));
        let drop = drop && !(ask.body == Body::Full && keeps_body(&ask.kind.group, &ask.kind.kind));
        if drop {
            for o in &mut found {
                o["metadata"].as_object_mut().unwrap().remove("managedFields");
            }
        }
        let result = match &ask.fetch {
            Fetch::Get(name) => match found.into_iter().find(|o| o["metadata"]["name"] == name.as_str()) {
                Some(o) => Ok(vec![doc(o)]),
                None => Err(crate::source::live::Failure::Status {
                    code: 404,
                    reason: "NotFound".into(),
                    message: String::new(),
                }),
            },
            Fetch::List { field_selector, label_selector, only, except } => Ok(found
                .into_iter()
                .filter(|o| {
                    except
                        .as_ref()
                        .is_none_or(|x| !o["metadata"]["namespace"].as_str().is_some_and(|ns| x.contains(ns)))
                })
                .filter(|o| match field_selector.as_deref().and_then(|s| s.split_once('=')) {
                    Some(("metadata.name", n)) => o["metadata"]["name"] == n,
                    Some(("involvedObject.uid", u)) => o["involvedObject"]["uid"] == u,
                    Some(_) => false,
                    None => true,
                })
                .filter(|o| match label_selector.as_deref().and_then(|s| s.split_once('=')) {
                    Some((k, v)) => o["metadata"]["labels"][k] == v,
                    None => true,
                })
                .map(doc)
                .filter(|d| {
                    only.as_ref().is_none_or(|only| {
                        let m = d.metadata.as_ref().unwrap();
                        only.contains(&(m.namespace.clone(), m.name.clone().unwrap()))
                    })
                })
                .collect()),
        };
        Answered { ask: ask.clone(), result, managed_fields_dropped: drop }
    }
}

use crate::source::live::ask::ManagedFields as ManagedFieldsAsk;

/// Every round of asks, as the session would execute them.
fn rounds(wants: Wants, cluster: &Cluster) -> Vec<Vec<Ask>> {
    rounds_with(&discovery(), wants, cluster)
}

fn rounds_with(d: &Discovery, wants: Wants, cluster: &Cluster) -> Vec<Vec<Ask>> {
    let d = d.clone();
    let mut plan = Plan::new(wants);
    let mut answers = Vec::new();
    let mut out = Vec::new();
    loop {
        let asks = plan.next(&d, &answers);
        if asks.is_empty() {
            return out;
        }
        answers.extend(asks.iter().map(|a| cluster.answer(a)));
        out.push(asks);
    }
}

fn show(a: &Ask) -> String {
    let what = match &a.fetch {
        Fetch::Get(n) => format!("get {} {n}", a.kind.qualified()),
        Fetch::List { field_selector: None, except: Some(_), .. } => {
            format!("list {} {}", a.kind.qualified(), a.fetch.field_selector().unwrap_or_default())
        }
        Fetch::List { field_selector: Some(s), .. } => format!("list {} {s}", a.kind.qualified()),
        Fetch::List { label_selector: Some(s), .. } => format!("list {} -l {s}", a.kind.qualified()),
        Fetch::List { only: Some(o), .. } => format!("list {} only {}", a.kind.qualified(), o.len()),
        Fetch::List { .. } => format!("list {}", a.kind.qualified()),
    };
    let ns = a.namespace.as_deref().map(|n| format!(" -n {n}")).unwrap_or_default();
    let body = if a.body == Body::Full { " full" } else { "" };
    let mf = if a.use_ == Use::ManagedFieldsOnly { " for-managedFields" } else { "" };
    format!("{what}{ns}{body}{mf}")
}

fn all(rounds: &[Vec<Ask>]) -> Vec<String> {
    rounds.iter().flatten().map(show).collect()
}

fn empty() -> Cluster {
    Cluster { objects: Vec::new(), drops: true }
}

#[test]
fn a_namespaced_answer_reads_its_namespace_in_full_and_bodies_elsewhere_metadata_only() {
    let r = rounds(namespace("labs"), &empty());
    assert_eq!(r.len(), 1, "nothing read, nothing more to ask: {r:?}");
    assert_eq!(
        all(&r),
        [
            "list pods -n labs full",
            "list configmaps -n labs full",
            "list namespaces full",
            "list deployments.apps -n labs full",
            "list replicasets.apps -n labs full",
            // node heartbeats aside: those an answer judges are read by name (`nodes`)
            "list leases.coordination.k8s.io metadata.namespace!=kube-node-lease full",
            "list rolebindings.rbac.authorization.k8s.io full",
            "list customresourcedefinitions.apiextensions.k8s.io",
            "list sites.own.labhub.io -n labs full",
        ]
    );
    // answers ask for metadata lists without managedFields, and keep them in the lists of the
    // kinds read in full (only the sweep's bodies beside deletions leave them out); Events are
    // never listed
    for a in &r[0] {
        let kept = a.body == Body::Full && keeps_body(&a.kind.group, &a.kind.kind);
        let expected = if kept { ManagedFieldsAsk::Keep } else { ManagedFieldsAsk::Drop };
        assert_eq!(a.managed_fields, expected, "{a:?}");
    }
}

#[test]
fn a_cluster_answer_lists_bodies_metadata_only_but_in_the_focus_namespace() {
    let wants = Wants {
        scope: Scope::Cluster,
        capture: false,
        focus: Some("labs".into()),
        target: None,
        why_stuck: None,
        admission: false,
    };
    let r = all(&rounds(answer(wants), &empty()));
    assert!(r.contains(&"list pods".to_string()) && r.contains(&"list pods -n labs full".to_string()), "{r:?}");
    assert!(r.contains(&"list configmaps full".to_string()), "{r:?}");
}

#[test]
fn a_capture_keeps_events_bodies_and_managed_fields() {
    let wants =
        Wants { scope: Scope::Cluster, capture: true, focus: None, target: None, why_stuck: None, admission: false };
    let r = rounds(wants, &empty());
    let shown = all(&r);
    assert!(shown.contains(&"list events full".to_string()), "{shown:?}");
    assert!(shown.contains(&"list customresourcedefinitions.apiextensions.k8s.io full".to_string()));
    assert!(r.iter().flatten().all(|a| a.managed_fields == ManagedFieldsAsk::Keep));
}

fn operator_cluster(drops: bool) -> Cluster {
    Cluster {
        drops,
        objects: vec![
            object(
                "own.labhub.io/v1",
                "Site",
                Some("labs"),
                "alpha",
                json!({"deletionTimestamp": "2026-11-29T12:00:00Z", "finalizers": ["own.labhub.io/cleanup"],
                       "managedFields": [{"manager": "site-operator", "operation": "Update",
                                          "fieldsV1": {"f:metadata": {"f:finalizers": {"v:\"own.labhub.io/cleanup\"": {}}}}},
                                         {"manager": "kubectl-client-side-apply", "operation": "Update",
                                          "fieldsV1": {"f:metadata": {"f:finalizers": {"v:\"own.labhub.io/cleanup\"": {}}}}}]}),
            ),
            object(
                "v1",
                "ConfigMap",
                Some("labs"),
                "owned",
                json!({"ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs", "uid": "elsewhere"}]}),
            ),
            object("coordination.k8s.io/v1", "Lease", Some("operators"), "site-operator-lock", json!({})),
            object("coordination.k8s.io/v1", "Lease", Some("kube-node-lease"), "node-1", json!({})),
            object("apps/v1", "Deployment", Some("operators"), "site-operator", json!({})),
        ],
    }
}

#[test]
fn owners_not_found_are_looked_for_everywhere_and_controllers_where_they_live() {
    let r = rounds(namespace("labs"), &operator_cluster(false));
    let second = r[1].iter().map(show).collect::<Vec<_>>();
    assert_eq!(
        second,
        [
            // the ConfigMap's owner is not among what was read
            "list replicasets.apps",
            // the Lease's namespace holds a controller (node heartbeats do not)
            "list pods -n operators full",
            "list deployments.apps -n operators full",
            "list replicasets.apps -n operators full",
        ]
    );
    assert!(r[1][0].body == Body::Metadata);
}

#[test]
fn an_owner_found_among_what_was_read_needs_no_list_everywhere() {
    let mut c = operator_cluster(false);
    c.objects.push(object("apps/v1", "ReplicaSet", Some("labs"), "rs", json!({})));
    c.objects[1]["metadata"]["ownerReferences"][0]["uid"] = json!("uid-ReplicaSet-rs");
    let r = all(&rounds(namespace("labs"), &c));
    assert!(!r.contains(&"list replicasets.apps".to_string()), "{r:?}");
}

#[test]
fn workloads_named_like_a_controller_manager_are_looked_up_but_not_clients() {
    let r = all(&rounds(namespace("labs"), &operator_cluster(false)));
    assert!(r.contains(&"list deployments.apps metadata.name=site-operator full".to_string()), "{r:?}");
    assert!(!r.iter().any(|a| a.contains("kubectl")), "kubectl is a client, never looked up: {r:?}");
    assert!(!r.iter().any(|a| a.contains("for-managedFields")), "nothing was left out: {r:?}");
}

#[test]
fn managed_fields_left_out_are_read_again_for_custom_finalizers_only() {
    let mut c = operator_cluster(true);
    c.objects.push(object(
        "v1",
        "ConfigMap",
        Some("labs"),
        "protected",
        json!({"finalizers": ["kubernetes"], "managedFields": [{"manager": "x", "fieldsV1": {}}]}),
    ));
    let r = rounds(namespace("labs"), &c);
    let shown = all(&r);
    let restores: Vec<_> = shown.iter().filter(|s| s.contains("for-managedFields")).collect();
    assert_eq!(restores, ["get sites.own.labhub.io alpha -n labs for-managedFields"], "{shown:?}");
    // and the manager they name is then looked up
    assert!(shown.contains(&"list deployments.apps metadata.name=site-operator full".to_string()), "{shown:?}");
}

#[test]
fn managed_fields_of_a_quarter_or_more_of_a_type_are_read_with_a_list_not_a_get_each() {
    // (sites, those with a custom finalizer): a GET each while under a quarter of their type's
    for (sites, finalized, expected) in [(20, 4, "get"), (20, 5, "list"), (1, 1, "get")] {
        let other = |i: usize| if i % 2 == 1 { "labs" } else { "other" };
        let mut c = operator_cluster(true);
        c.objects.remove(0);
        for i in 0..sites {
            let finalizers = if i < finalized { json!(["own.labhub.io/cleanup"]) } else { json!([]) };
            c.objects.push(object(
                "own.labhub.io/v1",
                "Site",
                Some(other(i)),
                &format!("s{i}"),
                json!({"finalizers": finalizers,
                       "managedFields": [{"manager": "site-operator", "operation": "Update", "fieldsV1": {}}]}),
            ));
        }
        // spread over two namespaces: one list everywhere, not one per namespace
        let shown = all(&rounds(Wants { scope: Scope::Cluster, ..namespace("labs") }, &c));
        let restores: Vec<_> = shown.iter().filter(|s| s.contains("for-managedFields")).collect();
        let n = if expected == "get" { finalized } else { 1 };
        assert!(expected == "get" || !restores[0].contains(" -n "), "{restores:?}");
        assert_eq!(restores.len(), n, "{sites} sites, {finalized} finalized: {restores:?}");
        assert!(restores.iter().all(|r| r.starts_with(expected)), "{sites} sites, {finalized} finalized: {restores:?}");
    }
}

#[test]
fn named_objects_are_read_a_get_each_when_few_else_with_lists_kept_to_them() {
    let pods = t("", "v1", "pods", "Pod", true);
    let named = |n: usize, namespaces: usize| -> Named {
        (0..n).map(|i| (Some(format!("ns{}", i % namespaces)), format!("p{i}"))).collect()
    };
    let limits = Limits { gets: 2, namespaces: 2 };
    let gets = by_name(&pods, &named(2, 2), limits, "test");
    assert!(gets.iter().all(|a| matches!(a.fetch, Fetch::Get(_))) && gets.len() == 2);
    let per_ns = by_name(&pods, &named(3, 2), limits, "test");
    assert_eq!(per_ns.iter().map(show).collect::<Vec<_>>(), ["list pods only 3 -n ns0", "list pods only 3 -n ns1"]);
    let everywhere = by_name(&pods, &named(5, 3), limits, "test");
    assert_eq!(everywhere.iter().map(show).collect::<Vec<_>>(), ["list pods only 5"]);
    assert!(by_name(&pods, &BTreeSet::new(), limits, "test").is_empty());
}

fn crd(name: &str, meta: Value) -> Value {
    object("apiextensions.k8s.io/v1", "CustomResourceDefinition", None, name, meta)
}

#[test]
fn crds_being_deleted_unserved_or_targeted_are_read_in_full() {
    let mut c = empty();
    c.objects = vec![
        crd("gone.own.labhub.io", json!({"deletionTimestamp": "2026-11-29T12:00:00Z"})),
        crd("quiet.own.labhub.io", json!({})),
    ];
    // `sites.own.labhub.io` is served (in the discovery lists), the others are not
    let mut d = discovery();
    d.lists.push(crate::snapshot::ResourceList {
        group_version: "own.labhub.io/v1".into(),
        resources: vec![crate::snapshot::ApiResource {
            plural: "quiet".into(),
            singular: None,
            namespaced: true,
            group: None,
            version: None,
            kind: "Quiet".into(),
            verbs: vec!["list".into()],
            short_names: vec![],
            categories: vec![],
        }],
    });
    let docs: Vec<RawDoc> = c.objects.iter().cloned().map(doc).collect();
    let wanted = crd_bodies_wanted(&d, None, docs.iter());
    assert_eq!(wanted.into_iter().collect::<Vec<_>>(), ["gone.own.labhub.io"]);
    let target = TargetRef {
        group: "apiextensions.k8s.io".into(),
        kind: "CustomResourceDefinition".into(),
        namespace: None,
        name: "quiet.own.labhub.io".into(),
    };
    assert_eq!(crd_bodies_wanted(&d, Some(&target), docs.iter()).len(), 2);
}

#[test]
fn many_crds_wanted_in_full_are_read_with_one_list_and_a_capture_reads_none_again() {
    let mut c = empty();
    c.objects = (0..40).map(|i| crd(&format!("c{i}.own.labhub.io"), json!({}))).collect();
    let r = rounds(namespace("labs"), &c);
    assert_eq!(
        r.last().unwrap().iter().map(show).collect::<Vec<_>>(),
        ["list customresourcedefinitions.apiextensions.k8s.io only 40 full"]
    );
    c.objects.truncate(3);
    let r = rounds(namespace("labs"), &c);
    assert_eq!(r.last().unwrap().len(), 3);
    assert!(r.last().unwrap().iter().all(|a| matches!(a.fetch, Fetch::Get(_)) && a.body == Body::Full));
    let capture = Wants { capture: true, ..namespace("labs") };
    assert_eq!(rounds(capture, &c).len(), 1, "a capture lists CRDs in full at once");
}

#[test]
fn a_namespace_capture_reads_what_its_answers_read_elsewhere() {
    // `kubectl gc snapshot -n labs`: the operator's workloads in another namespace, and the
    // workload named like the finalizer's manager, as a live answer reads them
    let capture = Wants { capture: true, ..namespace("labs") };
    let r = all(&rounds(capture, &operator_cluster(false)));
    assert!(r.contains(&"list deployments.apps -n operators full".to_string()), "{r:?}");
    assert!(r.contains(&"list deployments.apps metadata.name=site-operator full".to_string()), "{r:?}");
    // a capture of every namespace holds all of that already
    let everything =
        Wants { scope: Scope::Cluster, capture: true, focus: None, target: None, why_stuck: None, admission: false };
    assert_eq!(rounds(everything, &operator_cluster(false)).len(), 1);
}

#[test]
fn the_plan_ends() {
    let d = discovery();
    let mut plan = Plan::new(namespace("labs"));
    let c = operator_cluster(true);
    let mut answers = Vec::new();
    for _ in 0..STEPS.len() {
        let asks = plan.next(&d, &answers);
        answers.extend(asks.iter().map(|a| c.answer(a)));
    }
    assert!(plan.next(&d, &answers).is_empty());
    assert!(plan.next(&d, &answers).is_empty());
}

/// A Site being deleted in labs, a webhook on sites' UPDATE whose backend (hooks/hook) is not
/// there, and Events of the Site and of another object.
fn webhook_cluster() -> (Discovery, Cluster) {
    let mut d = discovery();
    d.types.extend([
        t("", "v1", "services", "Service", true),
        t("discovery.k8s.io", "v1", "endpointslices", "EndpointSlice", true),
        t(
            "admissionregistration.k8s.io",
            "v1",
            "validatingwebhookconfigurations",
            "ValidatingWebhookConfiguration",
            false,
        ),
    ]);
    let mut crd = object("apiextensions.k8s.io/v1", "CustomResourceDefinition", None, "sites.own.labhub.io", json!({}));
    crd["spec"] = json!({"group": "own.labhub.io", "scope": "Namespaced",
        "names": {"plural": "sites", "singular": "site", "kind": "Site"},
        "versions": [{"name": "v1", "served": true, "storage": true}]});
    let mut hook =
        object("admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration", None, "policy", json!({}));
    hook["webhooks"] = json!([{"name": "sites.policy", "failurePolicy": "Fail",
        "clientConfig": {"service": {"namespace": "hooks", "name": "hook"}},
        "rules": [{"apiGroups": ["own.labhub.io"], "apiVersions": ["v1"], "operations": ["UPDATE"], "resources": ["sites"]}]}]);
    let event = |name: &str, about: &str| {
        let mut e = object("v1", "Event", Some("labs"), name, json!({}));
        e["involvedObject"] = json!({"uid": about});
        e["type"] = json!("Warning");
        e
    };
    let objects = vec![
        object("v1", "Namespace", None, "labs", json!({})),
        object("v1", "Namespace", None, "hooks", json!({})),
        object(
            "own.labhub.io/v1",
            "Site",
            Some("labs"),
            "alpha",
            json!({"deletionTimestamp": "2026-11-29T11:00:00Z", "finalizers": ["own.labhub.io/cleanup"]}),
        ),
        crd,
        hook,
        event("alpha.1", "uid-Site-alpha"),
        event("other.1", "uid-ConfigMap-other"),
    ];
    (d, Cluster { objects, drops: false })
}

fn why_stuck_site(capture: bool) -> Wants {
    Wants {
        scope: Scope::Namespace("labs".into()),
        capture,
        focus: Some("labs".into()),
        target: (!capture).then(|| TargetRef {
            group: "own.labhub.io".into(),
            kind: "Site".into(),
            namespace: Some("labs".into()),
            name: "alpha".into(),
        }),
        why_stuck: (!capture).then(|| WhyStuck {
            now: "2026-11-29T12:00:00Z".parse().unwrap(),
            options: crate::diagnose::Options::default(),
        }),
        admission: true,
    }
}

#[test]
fn why_stuck_reads_the_webhooks_backends_then_the_events_of_what_its_answer_names() {
    let (d, cluster) = webhook_cluster();
    let r = rounds_with(&d, why_stuck_site(false), &cluster);
    let shown: Vec<Vec<String>> = r.iter().map(|round| round.iter().map(show).collect()).collect();
    let n = shown.len();
    // the CRD of the target's kind, by its name, in full (its conversion webhook); then the
    // backend the webhook names; then the Events of the Site and of the configuration whose
    // dead backend the answer names (a cluster-scoped object's Events are in default)
    assert_eq!(shown[n - 3], ["get customresourcedefinitions.apiextensions.k8s.io sites.own.labhub.io full"]);
    assert_eq!(
        shown[n - 2],
        [
            "get services hook -n hooks full",
            "list endpointslices.discovery.k8s.io -l kubernetes.io/service-name=hook -n hooks full"
        ]
    );
    assert_eq!(
        shown[n - 1],
        [
            "list events involvedObject.uid=uid-Site-alpha -n labs full",
            "list events involvedObject.uid=uid-ValidatingWebhookConfiguration-policy -n default full",
        ]
    );
    // the configurations and namespaces wanted are those the scope read already
    let all = all(&r);
    assert_eq!(all.iter().filter(|a| a.contains("validatingwebhookconfigurations")).count(), 1, "{all:?}");
    assert!(!all.iter().any(|a| a == "list events" || a.starts_with("list events -n")), "{all:?}");
}

#[test]
fn answers_without_why_stuck_read_no_webhook_backends_and_no_events() {
    let (d, cluster) = webhook_cluster();
    let mut wants = why_stuck_site(false);
    wants.why_stuck = None;
    let all = all(&rounds_with(&d, wants, &cluster));
    assert!(!all.iter().any(|a| a.contains("events") || a.contains("hooks")), "{all:?}");
}

#[test]
fn a_namespace_capture_reads_the_backends_of_every_webhook_it_holds() {
    let (d, cluster) = webhook_cluster();
    let all = all(&rounds_with(&d, why_stuck_site(true), &cluster));
    assert!(all.contains(&"get services hook -n hooks full".to_string()), "{all:?}");
    assert!(
        all.contains(
            &"list endpointslices.discovery.k8s.io -l kubernetes.io/service-name=hook -n hooks full".to_string()
        ),
        "{all:?}"
    );
}

#[test]
fn events_are_read_through_events_k8s_io_where_core_events_are_not_served() {
    let (mut d, mut cluster) = webhook_cluster();
    d.types.retain(|t| !(t.group.is_empty() && t.kind == "Event"));
    d.types.push(t("events.k8s.io", "v1", "events", "Event", true));
    for o in &mut cluster.objects {
        if o["kind"] == "Event" {
            o["apiVersion"] = json!("events.k8s.io/v1");
        }
    }
    let r = rounds_with(&d, why_stuck_site(false), &cluster);
    let last: Vec<String> = r.last().unwrap().iter().map(show).collect();
    assert_eq!(last[0], "list events.events.k8s.io regarding.uid=uid-Site-alpha -n labs full", "{last:?}");
}

/// `why-stuck --all -A`: the metadata pass finds what is being deleted; the pod being deleted is
/// then read by name (the workload being deleted is not: its answer reads none of its own
/// spec or status), never every pod, nor the pods of a namespace where only a pod or a custom
/// resource is being deleted.
#[test]
fn the_sweep_reads_bodies_only_where_its_answers_read_them() {
    let gone = json!({"deletionTimestamp": "2026-11-29T11:00:00Z", "finalizers": ["x.io/f"]});
    let cluster = Cluster {
        objects: vec![
            object("v1", "Pod", Some("batch"), "job-1", gone.clone()),
            object("v1", "Pod", Some("batch"), "job-2", json!({})),
            object("v1", "Pod", Some("labs"), "web-1", json!({})),
            object("apps/v1", "Deployment", Some("web"), "front", gone.clone()),
            object("own.labhub.io/v1", "Site", Some("labs"), "alpha", gone),
            object("own.labhub.io/v1", "Site", Some("labs"), "beta", json!({"finalizers": ["x.io/f"]})),
        ],
        drops: true,
    };
    let wants = sweeping_all();
    assert!(wants.sweeping());
    let r = rounds_with(&with_claims(), wants, &cluster);
    // where claims, volumes and namespaces are being deleted (none here), then the scope
    let claims: Vec<String> = r[0].iter().map(show).collect();
    assert!(claims.contains(&"list persistentvolumeclaims".to_string()), "{claims:?}");
    assert!(!claims.iter().any(|a| a.starts_with("list pods")), "{claims:?}");
    let first: Vec<String> = r[1].iter().map(show).collect();
    assert!(first.contains(&"list pods".to_string()), "metadata-only first: {first:?}");
    assert!(!first.iter().any(|a| a.starts_with("list pods") && a.ends_with("full")), "{first:?}");
    let second: Vec<String> = r[2].iter().map(show).collect();
    // the pod being deleted by name (its grace and node), its namespace's workloads beside it,
    // and no other pod or claim there: only a claim being deleted needs the pods that mount it
    assert!(second.contains(&"get pods job-1 -n batch full".to_string()), "{second:?}");
    assert!(second.contains(&"list deployments.apps -n batch full".to_string()), "{second:?}");
    let every = all(&r);
    for a in ["get deployments.apps front -n web full", "list deployments.apps -n web full"] {
        assert!(!every.contains(&a.to_string()), "{a}: {every:?}");
    }
    assert!(
        ![
            "list pods full",
            "list pods -n labs full",
            "list pods -n batch full",
            "list persistentvolumeclaims -n batch full"
        ]
        .iter()
        .any(|a| every.contains(&a.to_string())),
        "{every:?}"
    );
    // managedFields again only for the finalizers its answers attribute (the Site being deleted)
    let restores: Vec<&String> = every.iter().filter(|s| s.contains("for-managedFields")).collect();
    assert!(restores.contains(&&"get sites.own.labhub.io alpha -n labs for-managedFields".to_string()), "{every:?}");
    assert!(!restores.iter().any(|s| s.contains("beta")), "a Site not being deleted: {every:?}");
    // Events only by uid, in a namespace
    for e in every.iter().filter(|a| a.starts_with("list events")) {
        assert!(e.contains("involvedObject.uid=") && e.contains(" -n "), "{e}");
    }
    // a capture reads every body at once, and so is no sweep
    let capture =
        Wants { scope: Scope::Cluster, capture: true, focus: None, target: None, why_stuck: None, admission: true };
    assert!(!capture.sweeping());
}

/// `why-stuck --all -A` where a claim is being deleted: the claims are read before the scope, so
/// that the pods of its namespace are read once, in full, and every other namespace's
/// metadata-only (a list narrowed by `metadata.namespace!=`), never twice.
#[test]
fn the_sweep_reads_the_pods_where_a_claim_is_being_deleted_once() {
    let gone = json!({"deletionTimestamp": "2026-11-29T11:00:00Z", "finalizers": ["kubernetes.io/pvc-protection"]});
    let cluster = Cluster {
        objects: vec![
            object("v1", "PersistentVolumeClaim", Some("data"), "store", gone),
            object("v1", "Pod", Some("data"), "db-0", json!({})),
            object("v1", "Pod", Some("labs"), "web-1", json!({})),
        ],
        drops: true,
    };
    let wants = sweeping_all();
    let r = rounds_with(&with_claims(), wants, &cluster);
    let scope: Vec<String> = r[1].iter().map(show).collect();
    assert!(scope.contains(&"list pods -n data full".to_string()), "{scope:?}");
    assert!(scope.contains(&"list pods metadata.namespace!=data".to_string()), "{scope:?}");
    let every = all(&r);
    let pods: Vec<&String> = every.iter().filter(|a| a.starts_with("list pods") || a.starts_with("get pods")).collect();
    assert_eq!(pods.len(), 2, "each pod read once: {pods:?}");
    // nor the claim in full: its answer reads its namespace's pods, not its own spec or status
    assert!(
        !every.iter().any(|a| a.starts_with("get persistentvolumeclaims")
            || a.ends_with("full") && a.contains("persistentvolumeclaims")),
        "{every:?}"
    );
}

#[test]
fn a_namespace_whose_list_of_namespaces_is_refused_is_read_by_name() {
    let cluster = Cluster {
        objects: vec![object("v1", "Namespace", None, "labs", json!({"deletionTimestamp": "2026-11-29T11:00:00Z"}))],
        drops: true,
    };
    // as a namespace's user: the list of namespaces refused, the GET of their own allowed
    let refused = |a: &Ask| matches!(a.fetch, Fetch::List { .. }) && a.kind.plural == "namespaces";
    let run = |wants: Wants, refuse: bool| {
        let d = discovery();
        let mut plan = Plan::new(wants);
        let (mut answers, mut asked) = (Vec::new(), Vec::new());
        loop {
            let asks = plan.next(&d, &answers);
            if asks.is_empty() {
                return (asked, answers);
            }
            for a in asks {
                asked.push(show(&a));
                let mut answer = cluster.answer(&a);
                if refuse && refused(&a) {
                    answer.result = Err(crate::source::live::Failure::Status {
                        code: 403,
                        reason: "Forbidden".into(),
                        message: "no".into(),
                    });
                }
                answers.push(answer);
            }
        }
    };
    let (asked, answers) = run(namespace("labs"), true);
    assert!(asked.contains(&"get namespaces labs full".to_string()), "{asked:?}");
    let got = answers.iter().find(|a| matches!(&a.ask.fetch, Fetch::Get(n) if n == "labs")).unwrap();
    assert!(got.result.as_ref().is_ok_and(|docs| docs.len() == 1));
    // allowed to list them, or reading the cluster: no GET
    for (wants, refuse) in [(namespace("labs"), false), (sweeping_all(), true)] {
        let (asked, _) = run(wants, refuse);
        assert!(!asked.iter().any(|a| a.starts_with("get namespaces")), "{asked:?}");
    }
}

/// `nodes` nodes with a heartbeat each, and in `labs` a pod on each of the first `terminating`
/// in graceful termination, and one more pod, running, on the last node.
fn heartbeats(nodes: usize, terminating: usize) -> Cluster {
    let mut objects = Vec::new();
    for n in 0..nodes {
        let name = format!("worker-{n}");
        objects.push(object("coordination.k8s.io/v1", "Lease", Some("kube-node-lease"), &name, json!({})));
    }
    let pod = |name: &str, node: &str, meta: Value| {
        let mut p = object("v1", "Pod", Some("labs"), name, meta);
        p["spec"] = json!({"nodeName": node});
        p
    };
    for n in 0..terminating {
        let terminating = json!({"deletionTimestamp": "2026-11-29T12:00:00Z", "deletionGracePeriodSeconds": 30});
        objects.push(pod(&format!("web-{n}"), &format!("worker-{n}"), terminating));
    }
    objects.push(pod("running", &format!("worker-{}", nodes - 1), json!({})));
    // deleted, its grace period over: no kubelet is waited for
    objects.push(pod("done", &format!("worker-{}", nodes - 2), json!({"deletionTimestamp": "2026-11-29T12:00:00Z"})));
    objects.push(object("coordination.k8s.io/v1", "Lease", Some("operators"), "site-operator-lock", json!({})));
    Cluster { objects, drops: false }
}

fn heartbeat_reads(r: &[Vec<Ask>]) -> Vec<String> {
    all(r).into_iter().filter(|a| a.contains("leases")).collect()
}

#[test]
fn only_the_heartbeats_of_the_nodes_of_terminating_pods_are_read_and_by_name() {
    let r = rounds(namespace("labs"), &heartbeats(300, 2));
    assert_eq!(
        heartbeat_reads(&r),
        [
            "list leases.coordination.k8s.io metadata.namespace!=kube-node-lease full",
            "get leases.coordination.k8s.io worker-0 -n kube-node-lease full",
            "get leases.coordination.k8s.io worker-1 -n kube-node-lease full",
        ]
    );
    // and the heartbeats are not taken for a namespace controllers live in
    assert!(!all(&r).iter().any(|a| a.contains("-n kube-node-lease") && !a.contains("leases")), "{r:?}");
}

#[test]
fn nodes_are_followed_quietly_and_those_judged_by_name_closely() {
    use crate::source::live::ask::Follow;
    let mut d = discovery();
    d.types.push(t("", "v1", "nodes", "Node", false));
    let mut cluster = heartbeats(300, 2);
    cluster.objects.extend((0..300).map(|n| object("v1", "Node", None, &format!("worker-{n}"), json!({}))));
    let r = rounds_with(&d, namespace("labs"), &cluster);
    let asks: Vec<&Ask> = r.iter().flatten().filter(|a| a.kind.kind == "Node").collect();
    let shown: Vec<String> = asks.iter().map(|a| show(a)).collect();
    assert_eq!(shown, ["list nodes full", "get nodes worker-0 full", "get nodes worker-1 full"]);
    let follows: Vec<Follow> = asks.iter().map(|a| a.follow).collect();
    assert_eq!(follows, [Follow::Quietly, Follow::Closely, Follow::Closely]);
    // too many judged: none by name (their heartbeats still are)
    let r = rounds_with(&d, namespace("labs"), &heartbeats(300, 20));
    assert_eq!(r.iter().flatten().filter(|a| a.kind.kind == "Node").count(), 1);
    // where every heartbeat is read, Nodes are followed closely as every other read
    let capture =
        Wants { scope: Scope::Cluster, capture: true, focus: None, target: None, why_stuck: None, admission: false };
    let r = rounds_with(&d, capture, &cluster);
    assert!(r.iter().flatten().filter(|a| a.kind.kind == "Node").all(|a| a.follow == Follow::Closely));
}

#[test]
fn many_nodes_judged_are_read_in_one_list_of_their_heartbeats() {
    let r = rounds(namespace("labs"), &heartbeats(300, 20));
    let reads = heartbeat_reads(&r);
    assert_eq!(reads[1..], ["list leases.coordination.k8s.io only 20 -n kube-node-lease full"], "{reads:?}");
}

#[test]
fn the_node_asked_about_has_its_heartbeat_read_as_its_dependent() {
    let mut d = discovery();
    d.types.push(t("", "v1", "nodes", "Node", false));
    let target = TargetRef { group: "".into(), kind: "Node".into(), namespace: None, name: "worker-7".into() };
    let wants = Wants {
        scope: Scope::Cluster,
        capture: false,
        focus: None,
        target: Some(target),
        why_stuck: None,
        admission: false,
    };
    let reads = heartbeat_reads(&rounds_with(&d, wants, &heartbeats(10, 0)));
    assert_eq!(reads[1..], ["get leases.coordination.k8s.io worker-7 -n kube-node-lease full"], "{reads:?}");
}

#[test]
fn every_heartbeat_is_read_where_the_read_is_for_every_object() {
    let cluster = heartbeats(300, 2);
    let capture =
        Wants { scope: Scope::Cluster, capture: true, focus: None, target: None, why_stuck: None, admission: false };
    let about_them = namespace("kube-node-lease");
    for wants in [capture, sweeping_all(), about_them] {
        let reads = heartbeat_reads(&rounds(wants.clone(), &cluster));
        assert_eq!(reads, ["list leases.coordination.k8s.io full"], "{wants:?}");
    }
}

//! What a live why-stuck reads beyond the objects around it, checked on the test API server's
//! request log: the Events of the objects its answer names, each by uid, and the webhook
//! configurations and their backends as `reads::wishes::wanted` says; partial RBAC on
//! either is named in `incomplete` and the answer goes on without claiming what it could not
//! see; and captures hold what those answers read.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::Value;

use crate::support::apiserver::{ApiServer, Fault, FaultKind, Options, Recorded};
use crate::support::{self, DEADLINE, Env, NOW, assert_read_only, run, stderr};

fn fixture(name: &str) -> PathBuf {
    support::root().join("tests/fixtures").join(name).join("snapshot.json")
}

const WEBHOOK: &[&str] = &["why-stuck", "account/acme-payroll", "-n", "finance"];
const EVENTS: &[&str] = &["why-stuck", "bucket/raw-footage", "-n", "studio"];

fn gc(env: &Env, args: &[&str]) -> Output {
    let mut c = env.gc();
    c.args(args).args(["-o", "json", "--now", NOW, "--request-timeout", "5s"]);
    run(c, DEADLINE)
}

fn offline(file: &Path, args: &[&str]) -> Output {
    let env = Env::new("http://127.0.0.1:9", None);
    let mut c = env.command(support::bin());
    c.args(args).args(["-o", "json", "--now", NOW, "--snapshot"]).arg(file);
    run(c, DEADLINE)
}

fn json(o: &Output) -> Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("not JSON ({e}); stderr: {}", stderr(o)))
}

/// The answer with printed commands unbound: live they name the context `test` they were read
/// through, a plain file names none (as `tests/live.rs` compares them).
fn unbound(o: &Output) -> Value {
    fn unbind(v: Value) -> Value {
        match v {
            Value::String(s) => Value::String(support::unbound(&s)),
            Value::Array(a) => Value::Array(a.into_iter().map(unbind).collect()),
            Value::Object(m) => Value::Object(m.into_iter().map(|(k, v)| (k, unbind(v))).collect()),
            v => v,
        }
    }
    unbind(json(o))
}

fn query(r: &Recorded, key: &str) -> Option<String> {
    form_urlencoded::parse(r.query.as_bytes()).find(|(k, _)| k == key).map(|(_, v)| v.into_owned())
}

fn is_events(r: &Recorded) -> bool {
    r.path.ends_with("/events")
}

/// The uids of the objects an answer names: its object, and each finding's object and related
/// objects that exist.
fn named_uids(answer: &Value) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut add = |r: &Value| {
        if let Some(u) = r["uid"].as_str() {
            out.insert(u.to_string());
        }
    };
    add(&answer["object"]);
    for f in answer["findings"].as_array().into_iter().flatten() {
        add(&f["object"]);
        for r in f["related"].as_array().into_iter().flatten() {
            add(r);
        }
    }
    out
}

fn incomplete(answer: &Value) -> Vec<String> {
    answer["incomplete"].as_array().into_iter().flatten().filter_map(|v| v.as_str().map(str::to_string)).collect()
}

#[test]
fn events_are_read_by_uid_and_only_for_the_objects_the_answer_names() {
    for (name, args) in [("operator-alive-not-acting", EVENTS), ("webhook-blocks-finalizer", WEBHOOK)] {
        let server = ApiServer::start(&fixture(name));
        let env = Env::new(&server.url(), None);
        let o = gc(&env, args);
        assert!(matches!(o.status.code(), Some(0 | 2)), "{name}: {}", stderr(&o));
        let answer = json(&o);
        let reqs = server.requests();
        let events: Vec<&Recorded> = reqs.iter().filter(|r| is_events(r)).collect();
        assert!(!events.is_empty(), "{name}: no Events read");
        let mut asked = BTreeSet::new();
        for r in &events {
            let selector =
                query(r, "fieldSelector").unwrap_or_else(|| panic!("{name}: an unfiltered Events list: {r:?}"));
            let uid = selector.strip_prefix("involvedObject.uid=").unwrap_or_else(|| panic!("{name}: {selector}"));
            assert!(r.path.contains("/namespaces/"), "{name}: Events listed across namespaces: {r:?}");
            asked.insert(uid.to_string());
        }
        assert_eq!(asked, named_uids(&answer), "{name}: Events read for exactly the objects the answer names");
        // and the answer shows what was read: the target's Warning events
        assert!(!answer["events"].as_array().unwrap().is_empty(), "{name}: {answer}");
        assert_read_only(&server);
    }
    // the webhook backend's pod has an Event, but the answer does not name the pod
    let server = ApiServer::start(&fixture("webhook-blocks-finalizer"));
    let env = Env::new(&server.url(), None);
    gc(&env, WEBHOOK);
    let pod_uid = "97716b4c-096f-5bd7-8815-36cb4120bc80";
    assert!(!server.requests().iter().any(|r| is_events(r) && r.query.contains(pod_uid)));
}

#[test]
fn tree_and_plan_read_no_events_and_no_backends() {
    let server = ApiServer::start(&fixture("webhook-blocks-finalizer"));
    let env = Env::new(&server.url(), None);
    for args in
        [&["tree", "account/acme-payroll", "-n", "finance"][..], &["plan", "account/acme-payroll", "-n", "finance"][..]]
    {
        server.clear_requests();
        let o = gc(&env, args);
        assert!(matches!(o.status.code(), Some(0 | 2)), "{args:?}: {}", stderr(&o));
        let reqs = server.requests();
        assert!(!reqs.iter().any(is_events), "{args:?} read Events");
        assert!(!reqs.iter().any(|r| query(r, "labelSelector").is_some()), "{args:?} read backends' slices");
        assert!(!reqs.iter().any(|r| r.path.contains("/services/")), "{args:?} read a Service by name");
    }
}

#[test]
fn webhook_configurations_and_backends_are_read_as_wanted() {
    let server = ApiServer::start(&fixture("webhook-blocks-finalizer"));
    let env = Env::new(&server.url(), None);
    let o = gc(&env, WEBHOOK);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let reqs = server.requests();
    const ADM: &str = "/apis/admissionregistration.k8s.io/v1/";
    for kind in ["validatingwebhookconfigurations", "mutatingwebhookconfigurations"] {
        let lists: Vec<_> = reqs.iter().filter(|r| r.path == format!("{ADM}{kind}")).collect();
        assert_eq!(lists.len(), 1, "{kind}: one list");
        assert!(!lists[0].wants_metadata(), "{kind} are read in full");
    }
    // the backend's Service, by name, in full, and its slices by the service-name label; the
    // namespace of the answer (finance) is read as ever, and nothing else of ledger-system's
    assert!(
        reqs.iter()
            .any(|r| r.path == "/api/v1/namespaces/ledger-system/services/ledger-webhook" && !r.wants_metadata())
    );
    let slices: Vec<_> = reqs.iter().filter(|r| r.path.ends_with("/endpointslices")).collect();
    for r in &slices {
        if r.path.contains("/namespaces/finance/") {
            continue;
        }
        assert_eq!(r.path, "/apis/discovery.k8s.io/v1/namespaces/ledger-system/endpointslices", "{r:?}");
        assert_eq!(query(r, "labelSelector").as_deref(), Some("kubernetes.io/service-name=ledger-webhook"));
        assert!(!r.wants_metadata());
    }
    assert!(slices.iter().any(|r| query(r, "labelSelector").is_some()), "the backend's slices were read");
    assert!(
        !reqs
            .iter()
            .any(|r| r.path.starts_with("/api/v1/namespaces/ledger-system/services") && r.path.ends_with("/services"))
    );
    // read once each
    let mut seen = BTreeSet::new();
    for r in reqs.iter().filter(|r| r.path.contains("ledger-system")) {
        assert!(seen.insert((r.path.clone(), r.query.clone())), "read twice: {r:?}");
    }
    let answer = json(&o);
    assert!(answer["findings"].as_array().unwrap().iter().any(|f| f["code"] == "AdmissionWebhookUnavailable"));
    assert_read_only(&server);
}

fn with_faults(name: &str, faults: Vec<Fault>) -> (ApiServer, Env) {
    let server = ApiServer::start_with(&fixture(name), Options { faults, ..Options::default() }, 0);
    let env = Env::new(&server.url(), None);
    (server, env)
}

#[test]
fn forbidden_events_are_named_in_incomplete_and_the_answer_goes_on() {
    let (server, env) =
        with_faults("operator-alive-not-acting", vec![Fault::resource("events", FaultKind::Status(403))]);
    let o = gc(&env, EVENTS);
    let want = offline(&fixture("operator-alive-not-acting"), EVENTS);
    assert_eq!(o.status.code(), want.status.code(), "{}", stderr(&o));
    let (got, want) = (json(&o), json(&want));
    assert!(incomplete(&got).iter().any(|i| i.starts_with("events") && i.contains("403")), "{:?}", incomplete(&got));
    assert!(stderr(&o).contains("warning: incomplete: events"), "{}", stderr(&o));
    // the same findings and verdict; no event is shown
    assert_eq!(got["stuck"], want["stuck"]);
    let codes =
        |v: &Value| -> Vec<Value> { v["findings"].as_array().unwrap().iter().map(|f| f["code"].clone()).collect() };
    assert_eq!(codes(&got), codes(&want));
    assert_eq!(got["events"], serde_json::json!([]));
    assert_read_only(&server);
}

#[test]
fn forbidden_webhook_configurations_leave_the_admission_check_unknown() {
    let (server, env) = with_faults(
        "webhook-blocks-finalizer",
        vec![Fault::resource("validatingwebhookconfigurations", FaultKind::Status(403))],
    );
    let o = gc(&env, WEBHOOK);
    assert!(matches!(o.status.code(), Some(0 | 2)), "{}", stderr(&o));
    let got = json(&o);
    assert!(
        incomplete(&got).iter().any(|i| i.starts_with("validatingwebhookconfigurations") && i.contains("403")),
        "{:?}",
        incomplete(&got)
    );
    // no webhook finding can be made, and the answer says the check could not be done
    assert!(!got["findings"].as_array().unwrap().iter().any(|f| f["code"] == "AdmissionWebhookUnavailable"));
    for f in got["finalizers"].as_array().unwrap() {
        let evidence: Vec<&str> = f["evidence"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
        assert!(
            evidence
                .iter()
                .any(|e| e.starts_with("admission webhooks: Unknown") && e.contains("validatingwebhookconfigurations")),
            "{evidence:?}"
        );
    }
    // backends are read only for the webhooks that were read: none here
    assert!(!server.requests().iter().any(|r| query(r, "labelSelector").is_some()));
    assert_read_only(&server);
}

#[test]
fn forbidden_backends_are_not_taken_for_missing_ones() {
    let (_server, env) =
        with_faults("webhook-blocks-finalizer", vec![Fault::resource("services", FaultKind::Status(403))]);
    let got = json(&gc(&env, WEBHOOK));
    assert!(incomplete(&got).iter().any(|i| i.starts_with("services")), "{:?}", incomplete(&got));
    let findings = got["findings"].as_array().unwrap();
    assert!(!findings.iter().any(|f| f["code"] == "AdmissionWebhookUnavailable"), "{findings:?}");
    let evidence = got["finalizers"][0]["evidence"].to_string();
    assert!(evidence.contains("cannot be judged") && evidence.contains("Services could not be read"), "{evidence}");
}

/// `kubectl gc snapshot` (of every namespace, and of the answer's namespace alone) then
/// `--snapshot`: the same answer as live, Events and webhook backends included.
#[test]
fn captures_hold_what_the_webhook_and_event_answers_read() {
    for (name, args, ns) in
        [("webhook-blocks-finalizer", WEBHOOK, "finance"), ("operator-alive-not-acting", EVENTS, "studio")]
    {
        let server = ApiServer::start(&fixture(name));
        let env = Env::new(&server.url(), None);
        let live = gc(&env, args);
        for scope in [&["-A"][..], &["-n", ns][..]] {
            let file = env.dir.path().join("capture.json");
            let mut c = env.gc();
            c.arg("snapshot").args(scope).args(["--file"]).arg(&file).arg("--force");
            let o = run(c, DEADLINE);
            assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
            let replay = offline(&file, args);
            assert_eq!(replay.status.code(), live.status.code(), "{name} {scope:?}: {}", stderr(&replay));
            assert_eq!(
                support::without_kubeconfigs(json(&replay)),
                support::without_kubeconfigs(json(&live)),
                "{name} {scope:?}: the capture's answer differs from live"
            );
            assert!(!json(&replay)["events"].as_array().unwrap().is_empty(), "{name} {scope:?}");
        }
        assert_read_only(&server);
    }
}

/// An object without Warning events in a cluster that has other Events: live, only the
/// answer's objects' Events are read, and the answer says the same as offline, where every
/// Event is in the input.
#[test]
fn an_object_without_events_reads_the_same_live_as_offline() {
    let mut v: Value = serde_json::from_slice(&std::fs::read(fixture("operator-alive-not-acting")).unwrap()).unwrap();
    let items = v["items"].as_array_mut().unwrap();
    let mut other = items.iter().find(|o| o["kind"] == "Event").unwrap().clone();
    items.retain(|o| o["kind"] != "Event");
    other["metadata"]["name"] = "elsewhere.1".into();
    other["metadata"]["uid"] = "ev-elsewhere".into();
    other["involvedObject"]["uid"] = "not-in-the-answer".into();
    items.push(other);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("snapshot.json");
    std::fs::write(&file, serde_json::to_vec(&v).unwrap()).unwrap();
    let server = ApiServer::start(&file);
    let env = Env::new(&server.url(), None);
    let got = gc(&env, EVENTS);
    let want = offline(&file, EVENTS);
    assert_eq!(got.status.code(), want.status.code(), "{}", stderr(&got));
    assert_eq!(unbound(&got), unbound(&want));
    let text = json(&got)["findings"].to_string();
    assert!(text.contains("no Warning event of Bucket studio/raw-footage was read"), "{text}");
    assert!(!server.requests().iter().any(|r| is_events(r) && r.query.contains("not-in-the-answer")));
}

/// `snapshot -n finance` holds the Events, outside finance, of what the answers about it name:
/// here the webhook backend's Service in ledger-system.
#[test]
fn a_namespace_capture_holds_the_events_its_answers_show_from_elsewhere() {
    let mut v: Value = serde_json::from_slice(&std::fs::read(fixture("webhook-blocks-finalizer")).unwrap()).unwrap();
    let items = v["items"].as_array_mut().unwrap();
    let svc_uid = items.iter().find(|o| o["kind"] == "Service").unwrap()["metadata"]["uid"].clone();
    let mut e = items.iter().find(|o| o["kind"] == "Event").unwrap().clone();
    e["metadata"]["name"] = "ledger-webhook.1".into();
    e["metadata"]["namespace"] = "ledger-system".into();
    e["metadata"]["uid"] = "ev-svc".into();
    e["involvedObject"] = serde_json::json!({"apiVersion": "v1", "kind": "Service", "name": "ledger-webhook",
        "namespace": "ledger-system", "uid": svc_uid});
    e["type"] = "Warning".into();
    e["reason"] = "FailedToUpdateEndpointSlices".into();
    items.push(e);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("snapshot.json");
    std::fs::write(&file, serde_json::to_vec(&v).unwrap()).unwrap();
    let server = ApiServer::start(&file);
    let env = Env::new(&server.url(), None);
    let live = gc(&env, WEBHOOK);
    let shown = json(&live)["events"].to_string();
    assert!(shown.contains("FailedToUpdateEndpointSlices"), "{shown}");
    server.clear_requests();
    let capture = dir.path().join("capture.json");
    let mut c = env.gc();
    c.args(["snapshot", "-n", "finance", "--now", NOW, "--file"]).arg(&capture);
    let o = run(c, DEADLINE);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // by uid, not the whole of ledger-system's Events
    let reqs = server.requests();
    let elsewhere: Vec<_> = reqs.iter().filter(|r| is_events(r) && !r.path.contains("/namespaces/finance/")).collect();
    assert!(!elsewhere.is_empty());
    assert!(elsewhere.iter().all(|r| query(r, "fieldSelector").is_some_and(|f| f.starts_with("involvedObject.uid="))));
    let replay = offline(&capture, WEBHOOK);
    assert_eq!(replay.status.code(), live.status.code());
    assert_eq!(support::without_kubeconfigs(json(&replay)), support::without_kubeconfigs(json(&live)));
    assert_read_only(&server);
}

/// The server's version (`/version`) is read only by answers that judge by it (a Namespace's
/// deletion, which goes pods first from 1.33) and by a capture, which records it; the same
/// namespace on a 1.32 server is deleted in one wave, and its answer says so.
#[test]
fn the_server_version_is_read_only_where_an_answer_judges_by_it() {
    let file = fixture("namespace-waiting-for-pods");
    let is_version = |r: &Recorded| r.path == "/version";
    let waiting = |answer: &Value| {
        answer["findings"].as_array().unwrap().iter().find(|f| f["code"] == "NamespaceWaitingForPods").cloned()
    };
    let server = ApiServer::start(&file);
    let env = Env::new(&server.url(), None);
    for args in [&["why-stuck", "pod/trainer-0", "-n", "labs"][..], &["tree", "ns/labs"][..]] {
        server.clear_requests();
        let o = gc(&env, args);
        assert!(matches!(o.status.code(), Some(0 | 2)), "{args:?}: {}", stderr(&o));
        assert!(!server.requests().iter().any(is_version), "{args:?} read /version");
    }
    for args in [&["why-stuck", "ns/labs"][..], &["plan", "ns/labs"][..]] {
        server.clear_requests();
        let o = gc(&env, args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert_eq!(server.requests().iter().filter(|r| is_version(r)).count(), 1, "{args:?}: one /version read");
        let answer = json(&o);
        let judged = match args[0] {
            "plan" => answer["notes"].to_string(),
            _ => waiting(&answer).expect("the pod wave")["message"].to_string(),
        };
        assert!(judged.contains(crate::support::apiserver::VERSION), "{args:?}: judged by /version: {judged}");
    }
    // a capture records it, and answers from the capture judge by it as live ones do
    let capture = env.dir.path().join("capture.json");
    let mut c = env.gc();
    c.args(["snapshot", "-A", "--file"]).arg(&capture);
    let o = run(c, DEADLINE);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let written: Value = serde_json::from_slice(&std::fs::read(&capture).unwrap()).unwrap();
    assert_eq!(written["serverVersion"], crate::support::apiserver::VERSION);
    assert_eq!(unbound(&offline(&capture, &["why-stuck", "ns/labs"])), unbound(&gc(&env, &["why-stuck", "ns/labs"])));
    assert_read_only(&server);

    // a 1.32 server: one wave, so no pod wave; the ConfigMaps are content like the pod
    let old = ApiServer::start_with(&file, Options { version: "v1.32.4", ..Options::default() }, 0);
    let env = Env::new(&old.url(), None);
    let answer = json(&gc(&env, &["why-stuck", "ns/labs"]));
    assert!(waiting(&answer).is_none(), "{answer}");
    let remaining = answer["findings"].as_array().unwrap().iter().filter(|f| f["code"] == "NamespaceContentRemaining");
    assert!(remaining.count() > 1);
    let plan = json(&gc(&env, &["plan", "ns/labs"]));
    assert!(plan["notes"].to_string().contains("one wave"), "{}", plan["notes"]);
    assert_read_only(&old);
}

/// webhook-blocks-finalizer with a ValidatingAdmissionPolicy bound with `Deny` that reads the
/// Account's deletionTimestamp on UPDATE and who sends it (not known, so its CEL cannot be
/// settled): a warning that it may deny the finalizer's removal.
fn with_policy(dir: &Path) -> PathBuf {
    let mut v: Value = serde_json::from_slice(&std::fs::read(fixture("webhook-blocks-finalizer")).unwrap()).unwrap();
    let items = v["items"].as_array_mut().unwrap();
    items.push(serde_json::json!({
        "apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": "keep-archive", "uid": "vap-keep-archive"},
        "spec": {"failurePolicy": "Fail",
            "matchConstraints": {"resourceRules": [{"apiGroups": ["ledger.example.org"], "apiVersions": ["*"],
                "operations": ["UPDATE"], "resources": ["accounts"]}]},
            // who sends the request is not known: its CEL cannot be settled, so it may deny
            "validations": [{"expression": "!has(oldObject.metadata.deletionTimestamp) || size(object.metadata.finalizers) > 0 || request.userInfo.username == 'system:serviceaccount:ledger:account-controller'"}]}
    }));
    items.push(serde_json::json!({
        "apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicyBinding",
        "metadata": {"name": "keep-archive-all", "uid": "vapb-keep-archive-all"},
        "spec": {"policyName": "keep-archive", "validationActions": ["Deny"]}
    }));
    let file = dir.join("snapshot.json");
    std::fs::write(&file, serde_json::to_vec(&v).unwrap()).unwrap();
    file
}

/// `snapshot -n finance` answers WEBHOOK offline as `live` did.
fn assert_capture_answers_as_live(env: &Env, dir: &Path, live: &Output) {
    let capture = dir.join("capture.json");
    let mut c = env.gc();
    c.args(["snapshot", "-n", "finance", "--now", NOW, "--file"]).arg(&capture);
    let s = run(c, DEADLINE);
    assert_eq!(s.status.code(), Some(0), "{}", stderr(&s));
    assert_eq!(unbound(&offline(&capture, WEBHOOK)), unbound(live));
}

const ADM: &str = "/apis/admissionregistration.k8s.io/v1/";

/// The lists of `resource` made: (metadata-only ones, full ones).
fn lists_of(reqs: &[Recorded], resource: &str) -> (usize, usize) {
    let lists: Vec<_> = reqs.iter().filter(|r| r.path == format!("{ADM}{resource}")).collect();
    (lists.iter().filter(|r| r.wants_metadata()).count(), lists.iter().filter(|r| !r.wants_metadata()).count())
}

#[test]
fn admission_policies_are_read_in_full_only_by_answers_that_judge_admission() {
    let dir = tempfile::tempdir().unwrap();
    let file = with_policy(dir.path());
    let server = ApiServer::start(&file);
    let env = Env::new(&server.url(), None);
    // why-stuck: the names first, then in full (there are some); no mutating ones, none read again
    let o = gc(&env, WEBHOOK);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let reqs = server.requests();
    for resource in ["validatingadmissionpolicies", "validatingadmissionpolicybindings"] {
        assert_eq!(lists_of(&reqs, resource), (1, 1), "{resource}");
    }
    for resource in ["mutatingadmissionpolicies", "mutatingadmissionpolicybindings"] {
        assert_eq!(lists_of(&reqs, resource), (1, 0), "{resource}: none there, not read again");
    }
    let answer = json(&o);
    let warning = answer["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["code"] == "AdmissionDenied")
        .unwrap_or_else(|| panic!("no policy finding: {answer}"));
    assert_eq!(warning["severity"], "Warning");
    // live and offline agree
    assert_eq!(unbound(&o), unbound(&offline(&file, WEBHOOK)));
    // plan: the policies too, and its notes say the removal may be rejected
    server.clear_requests();
    let plan = gc(&env, &["plan", "account/acme-payroll", "-n", "finance"]);
    assert!(matches!(plan.status.code(), Some(0 | 2)), "{}", stderr(&plan));
    assert_eq!(lists_of(&server.requests(), "validatingadmissionpolicies"), (1, 1));
    assert!(json(&plan)["notes"].to_string().contains("ValidatingAdmissionPolicy keep-archive"), "{}", json(&plan));
    // tree judges no admission: names only
    server.clear_requests();
    let tree = gc(&env, &["tree", "account/acme-payroll", "-n", "finance"]);
    assert_eq!(tree.status.code(), Some(0), "{}", stderr(&tree));
    assert_eq!(lists_of(&server.requests(), "validatingadmissionpolicies"), (1, 0));
    // a capture keeps them, and answers from it see the policy
    assert_capture_answers_as_live(&env, dir.path(), &o);
    assert_read_only(&server);
}

#[test]
fn forbidden_admission_policies_leave_the_policy_check_unknown() {
    let dir = tempfile::tempdir().unwrap();
    let file = with_policy(dir.path());
    let faults = vec![Fault::resource("validatingadmissionpolicies", FaultKind::Status(403))];
    let server = ApiServer::start_with(&file, Options { faults, ..Options::default() }, 0);
    let env = Env::new(&server.url(), None);
    let got = json(&gc(&env, WEBHOOK));
    assert!(incomplete(&got).iter().any(|i| i.starts_with("validatingadmissionpolicies")), "{:?}", incomplete(&got));
    // no policy finding can be made, and the finalizer's evidence says so
    assert!(!got["findings"].as_array().unwrap().iter().any(|f| f["code"] == "AdmissionDenied"), "{got}");
    let evidence = got["finalizers"][0]["evidence"].to_string();
    assert!(evidence.contains("admission policies: Unknown"), "{evidence}");
    assert_read_only(&server);
}

/// webhook-blocks-finalizer with a ValidatingAdmissionPolicy that takes its params from
/// ConfigMap `ledger-params/limits` (another namespace than the Account's), bound Warn-only
/// with `parameterNotFoundAction: Deny`; with the ConfigMap when `params` is true.
fn with_params(dir: &Path, params: bool) -> PathBuf {
    let file = with_policy(dir);
    let mut v: Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    let items = v["items"].as_array_mut().unwrap();
    for o in items.iter_mut() {
        match o["kind"].as_str() {
            Some("ValidatingAdmissionPolicy") => {
                o["spec"]["paramKind"] = serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap"})
            }
            Some("ValidatingAdmissionPolicyBinding") => {
                o["spec"]["validationActions"] = serde_json::json!(["Warn"]);
                o["spec"]["paramRef"] = serde_json::json!({"name": "limits", "namespace": "ledger-params", "parameterNotFoundAction": "Deny"});
            }
            _ => {}
        }
    }
    items.push(serde_json::json!({"apiVersion": "v1", "kind": "Namespace",
        "metadata": {"name": "ledger-params", "uid": "ns-ledger-params"}}));
    if params {
        items.push(serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "limits", "namespace": "ledger-params", "uid": "cm-limits"}, "data": {"max": "3"}}));
    }
    std::fs::write(&file, serde_json::to_vec(&v).unwrap()).unwrap();
    file
}

fn policy_findings(answer: &Value) -> Vec<(String, String)> {
    let findings = answer["findings"].as_array().unwrap().iter();
    findings
        .filter(|f| f["code"] == "AdmissionDenied")
        .map(|f| (f["severity"].as_str().unwrap().to_string(), f["message"].as_str().unwrap().to_string()))
        .collect()
}

#[test]
fn a_policys_params_are_read_where_its_binding_names_them_and_missing_ones_deny() {
    let dir = tempfile::tempdir().unwrap();
    let file = with_params(dir.path(), false);
    let server = ApiServer::start(&file);
    let env = Env::new(&server.url(), None);
    let o = gc(&env, WEBHOOK);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    // the ConfigMaps of ledger-params, names only: the scope is finance
    let params: Vec<_> =
        server.requests().into_iter().filter(|r| r.path == "/api/v1/namespaces/ledger-params/configmaps").collect();
    assert!(params.len() == 1 && params[0].wants_metadata(), "{params:?}");
    let found = policy_findings(&json(&o));
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].0, "Error");
    assert!(
        found[0].1.contains("fails to configure") && found[0].1.contains("ConfigMap ledger-params/limits"),
        "{}",
        found[0].1
    );
    // a capture of finance reads them too: its offline answer is the live one
    assert_capture_answers_as_live(&env, dir.path(), &o);
    assert_read_only(&server);
    // the params there: the Warn-only binding denies nothing
    let dir = tempfile::tempdir().unwrap();
    let server = ApiServer::start(&with_params(dir.path(), true));
    let env = Env::new(&server.url(), None);
    let found = policy_findings(&json(&gc(&env, WEBHOOK)));
    assert!(found.is_empty(), "{found:?}");
    assert_read_only(&server);
}

//! Events from another namespace are never evidence (issue 43): for every check of every
//! fixture, Events forged in a namespace their author controls — naming each object's uid,
//! quoting each webhook and admission policy as denying, reported as each workload, repeated
//! past the threshold that ends a wait — change no answer, text or JSON.

use serde_json::{Value, json};

use crate::util::{code, fixtures_dir, run};

/// Forged Events about every object of `snapshot`, in namespace `forger`.
fn forge(snapshot: &Value, now: &str) -> Vec<Value> {
    let items = snapshot["items"].as_array().cloned().unwrap_or_default();
    let str_at = |v: &Value, p: &str| v.pointer(p).and_then(Value::as_str).map(str::to_string);
    let mut quoted: Vec<String> = Vec::new();
    let mut reporters: Vec<String> = vec!["kube-controller-manager".into(), "generic-garbage-collector".into()];
    for i in &items {
        match i["kind"].as_str() {
            Some("ValidatingWebhookConfiguration" | "MutatingWebhookConfiguration") => {
                for w in i["webhooks"].as_array().into_iter().flatten() {
                    if let Some(n) = w["name"].as_str() {
                        quoted.push(format!("admission webhook \"{n}\" denied the request: forged"));
                    }
                }
            }
            Some("ValidatingAdmissionPolicy") => {
                if let Some(n) = str_at(i, "/metadata/name") {
                    quoted.push(format!("ValidatingAdmissionPolicy '{n}' with binding '{n}' denied request: forged"));
                }
            }
            Some("Deployment" | "StatefulSet" | "DaemonSet") => reporters.extend(str_at(i, "/metadata/name")),
            _ => {}
        }
    }
    if quoted.is_empty() {
        quoted.push("denied: forged".into());
    }
    let mut out = Vec::new();
    for (n, i) in items.iter().enumerate() {
        let (Some(uid), Some(kind), Some(name)) =
            (str_at(i, "/metadata/uid"), str_at(i, "/kind"), str_at(i, "/metadata/name"))
        else {
            continue;
        };
        if kind == "Event" || kind == "APIResourceList" {
            continue;
        }
        let about = json!({"apiVersion": i["apiVersion"], "kind": kind, "name": name, "uid": uid,
                           "namespace": i["metadata"]["namespace"]});
        for (k, message) in quoted.iter().enumerate() {
            let reporter = &reporters[(n + k) % reporters.len()];
            out.push(json!({
                "apiVersion": "v1", "kind": "Event",
                "metadata": {"name": format!("forged-{n}-{k}"), "namespace": "forger", "uid": format!("forged-{n}-{k}"),
                             "creationTimestamp": now},
                "involvedObject": about, "type": "Warning", "reason": "FailedDelete", "message": message,
                "count": 500, "firstTimestamp": now, "lastTimestamp": now,
                "source": {"component": reporter}, "reportingComponent": reporter
            }));
            out.push(json!({
                "apiVersion": "events.k8s.io/v1", "kind": "Event",
                "metadata": {"name": format!("forged-new-{n}-{k}"), "namespace": "forger", "uid": format!("forged-new-{n}-{k}"),
                             "creationTimestamp": now},
                "regarding": about, "type": "Normal", "reason": "Progress", "note": "forged progress",
                "eventTime": now, "series": {"count": 500, "lastObservedTime": now},
                "reportingController": reporter, "reportingInstance": format!("{reporter}-0")
            }));
        }
    }
    out
}

#[test]
fn events_forged_in_another_namespace_change_no_answer() {
    let mut checked = 0;
    for entry in std::fs::read_dir(fixtures_dir()).unwrap() {
        let dir = entry.unwrap().path();
        let Ok(expected) = std::fs::read_to_string(dir.join("expected.json")) else { continue };
        let expected: Value = serde_json::from_str(&expected).unwrap();
        let now = expected["now"].as_str().unwrap_or("2026-11-29T12:00:00Z").to_string();
        let mut snapshot: Value = serde_json::from_slice(&std::fs::read(dir.join("snapshot.json")).unwrap()).unwrap();
        let forged = forge(&snapshot, &now);
        assert!(!forged.is_empty(), "{}", dir.display());
        snapshot["items"].as_array_mut().unwrap().extend(forged);
        let file = tempfile::Builder::new().suffix(".json").tempfile().unwrap();
        std::fs::write(file.path(), serde_json::to_vec(&snapshot).unwrap()).unwrap();
        for chk in expected["checks"].as_array().into_iter().flatten() {
            let args: Vec<String> =
                chk["args"].as_array().unwrap().iter().map(|a| a.as_str().unwrap().into()).collect();
            for output in ["json", "text"] {
                let answer = |snap: &std::path::Path| {
                    let mut argv: Vec<String> = args.clone();
                    argv.extend(["--snapshot".into(), snap.display().to_string(), "--now".into(), now.clone()]);
                    argv.extend(["-o".into(), output.into()]);
                    run(&argv.iter().map(String::as_str).collect::<Vec<_>>())
                };
                let (honest, forged) = (answer(&dir.join("snapshot.json")), answer(file.path()));
                let what = format!("{} {args:?} -o {output}", dir.display());
                assert_eq!(code(&forged), code(&honest), "{what}: {}", String::from_utf8_lossy(&forged.stdout));
                assert_eq!(
                    String::from_utf8_lossy(&forged.stdout),
                    String::from_utf8_lossy(&honest.stdout),
                    "{what}: a forged Event changed the answer"
                );
                checked += 1;
            }
        }
    }
    assert!(checked > 40, "{checked} answers compared");
}

/// A denial quoted by an Event in the object's own namespace is evidence, and the answer says
/// who could have written it; the same Event in another namespace is none.
#[test]
fn a_denial_resting_on_an_event_says_who_could_have_written_it() {
    let dir = fixtures_dir().join("webhook-blocks-finalizer");
    let mut snapshot: Value = serde_json::from_slice(&std::fs::read(dir.join("snapshot.json")).unwrap()).unwrap();
    let items = snapshot["items"].as_array_mut().unwrap();
    let account = items.iter().find(|i| i["kind"] == "Account").unwrap().clone();
    let event = |ns: &str| {
        json!({"apiVersion": "v1", "kind": "Event",
               "metadata": {"name": format!("denied-{ns}"), "namespace": ns, "uid": format!("denied-{ns}"),
                            "creationTimestamp": "2026-11-29T11:59:00Z"},
               "involvedObject": {"apiVersion": account["apiVersion"], "kind": "Account", "name": "acme-payroll",
                                  "namespace": "finance", "uid": account["metadata"]["uid"]},
               "type": "Warning", "reason": "FailedUpdate",
               "message": "admission webhook \"accounts.ledger-policy.ledger.example.org\" denied the request: archive first",
               "count": 3, "lastTimestamp": "2026-11-29T11:59:00Z", "source": {"component": "account-controller"}})
    };
    let answer = |ns: &str| {
        let mut s = snapshot.clone();
        s["items"].as_array_mut().unwrap().push(event(ns));
        let file = tempfile::Builder::new().suffix(".json").tempfile().unwrap();
        std::fs::write(file.path(), serde_json::to_vec(&s).unwrap()).unwrap();
        let p = file.path().display().to_string();
        let out = run(&[
            "why-stuck",
            "account/acme-payroll",
            "-n",
            "finance",
            "--snapshot",
            &p,
            "--now",
            "2026-11-29T12:00:00Z",
            "-o",
            "json",
        ]);
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        v["findings"].as_array().unwrap().iter().find(|f| f["code"] == "AdmissionDenied").cloned()
    };
    let denied = answer("finance").expect("the object's own Event quoting a denial is evidence");
    let message = denied["message"].as_str().unwrap();
    assert!(
        message.contains("rests on that Event alone: Events can be written by anyone allowed to create Events in namespace \"finance\""),
        "{message}"
    );
    assert_eq!(answer("ledger-tenant"), None, "an Event from another namespace is no evidence");
}

/// A controller's repeated Warning about the object ends the wait early only from the object's
/// own namespace, and the answer says the failure rests on Events alone.
#[test]
fn a_repeated_failure_ends_the_wait_only_from_the_objects_namespace_and_says_so() {
    let dir = fixtures_dir().join("operator-alive-not-acting");
    let snapshot: Value = serde_json::from_slice(&std::fs::read(dir.join("snapshot.json")).unwrap()).unwrap();
    let bucket = snapshot["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["kind"] == "Bucket" && i["metadata"]["name"] == "raw-footage")
        .unwrap()
        .clone();
    let answer = |ns: &str| {
        let mut s = snapshot.clone();
        s["items"].as_array_mut().unwrap().push(json!({
            "apiVersion": "v1", "kind": "Event",
            "metadata": {"name": "purge-failed", "namespace": ns, "uid": "ev-purge", "creationTimestamp": "2026-11-29T11:00:00Z"},
            "involvedObject": {"apiVersion": bucket["apiVersion"], "kind": "Bucket", "name": "raw-footage",
                               "namespace": "studio", "uid": bucket["metadata"]["uid"]},
            "type": "Warning", "reason": "PurgeFailed", "message": "purging objects: access denied", "count": 30,
            "firstTimestamp": "2026-11-29T11:00:00Z", "lastTimestamp": "2026-11-29T11:59:00Z",
            "source": {"component": "media-operator-controller-manager"},
            "reportingComponent": "media-operator-controller-manager"}));
        let file = tempfile::Builder::new().suffix(".json").tempfile().unwrap();
        std::fs::write(file.path(), serde_json::to_vec(&s).unwrap()).unwrap();
        let p = file.path().display().to_string();
        let args = ["why-stuck", "bucket/raw-footage", "-n", "studio", "--stuck-after", "4h", "--snapshot", &p];
        let out = run(&[&args[..], &["--now", "2026-11-29T12:00:00Z", "-o", "json"]].concat());
        (code(&out), serde_json::from_slice::<Value>(&out.stdout).unwrap())
    };
    let (exit, v) = answer("studio");
    assert_eq!(exit, 2, "its own controller failing at it, again and again: stuck");
    let f = v["findings"].as_array().unwrap().iter().find(|f| f["code"] == "FinalizerNotProgressing").expect("{v:#}");
    assert!(
        f["message"].as_str().unwrap().contains(
            "the failure rests on Events alone (Events can be written by anyone allowed to create Events in namespace \"studio\")"
        ),
        "{f:#}"
    );
    let (exit, v) = answer("elsewhere");
    assert_eq!(exit, 0, "the same Event from another namespace changes nothing: {v:#}");
    assert_eq!(v["verdict"], "InProgress");
}

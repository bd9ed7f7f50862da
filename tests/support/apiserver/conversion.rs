//! Conversion as the API server does it for custom resources: objects are stored at the CRD's
//! storage version, and a request at any other version converts each object of its answer as
//! `spec.conversion` says. With strategy `Webhook` that is a call to the webhook's Service; a
//! Service that is not in the store cannot be called, so every such request with an object to
//! convert fails whole (a list is not answered in part), as the API server's does: code 500,
//! no reason, the converter's error as the message (`kubectl` prints it as `Error from server:
//! conversion webhook for …`). At the storage version, or with nothing to convert, it answers.
//! A webhook given by URL is taken to answer (nothing here says it does not).

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use super::store::{Res, Store};

/// The failure a request at `res` for these objects meets, if its conversion cannot be made.
pub fn refusal(store: &Store, res: &Res, namespace: Option<&str>, name: Option<&str>) -> Option<Response> {
    if res.builtin {
        return None;
    }
    let crd = crd_of(store, res)?;
    let spec = &crd["spec"];
    if spec["conversion"]["strategy"].as_str() != Some("Webhook") {
        return None;
    }
    let storage =
        spec["versions"].as_array()?.iter().find(|v| v["storage"].as_bool() == Some(true))?["name"].as_str()?;
    let service = &spec["conversion"]["webhook"]["clientConfig"]["service"];
    let (svc, svc_ns) = (service["name"].as_str()?, service["namespace"].as_str()?);
    if storage == res.version || service_exists(store, svc_ns, svc) {
        return None;
    }
    let converted = store.stored_of(res, namespace).iter().any(|o| name.is_none_or(|n| &*o.name == n));
    if !converted {
        return None;
    }
    let port = service["port"].as_u64().unwrap_or(443);
    let path = service["path"].as_str().unwrap_or_default();
    let message = format!(
        "conversion webhook for {}/{storage}, Kind={} failed: Post \"https://{svc}.{svc_ns}.svc:{port}{path}?timeout=30s\": service \"{svc}\" not found",
        res.group, res.kind
    );
    let body = json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": message, "code": 500});
    let mut r = super::json_response(body, "application/json").into_response();
    *r.status_mut() = StatusCode::INTERNAL_SERVER_ERROR;
    Some(r)
}

fn crd_of(store: &Store, res: &Res) -> Option<Value> {
    let crds = store.resource("apiextensions.k8s.io", "v1", "customresourcedefinitions")?;
    let serves = |c: &Value| {
        c["spec"]["group"].as_str() == Some(&res.group) && c["spec"]["names"]["plural"].as_str() == Some(&res.plural)
    };
    // the API server names a CRD `<plural>.<group>`; only a file's odd one is looked for further
    if let Some(c) = store.get(crds, None, &format!("{}.{}", res.plural, res.group)).map(|c| c.value())
        && serves(&c)
    {
        return Some(c);
    }
    store.stored_of(crds, None).iter().map(|c| c.value()).find(serves)
}

fn service_exists(store: &Store, namespace: &str, name: &str) -> bool {
    store.resource("", "v1", "services").is_some_and(|r| store.get(r, Some(namespace), name).is_some())
}

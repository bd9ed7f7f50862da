//! WATCH (`GET …?watch=1`), as the API server serves it: a stream of `{"type", "object"}`
//! lines (`ADDED`, `MODIFIED`, `DELETED`, `BOOKMARK`, `ERROR`) from the store's history after
//! `resourceVersion` (none or `0`: the current objects as `ADDED` first), narrowed by namespace,
//! label and field selectors (an object that starts or stops matching is `ADDED` or `DELETED`,
//! as the watch cache sends it), metadata-only (`PartialObjectMetadata`) when the Accept header
//! asks, with a `BOOKMARK` every [`super::Options::bookmark_every`] when
//! `allowWatchBookmarks=true`, and an end after `timeoutSeconds`.
//!
//! A resourceVersion older than the last compaction is answered with an `ERROR` event holding a
//! 410 `Expired` Status (as the watch cache answers it), which a client must relist after.
//!
//! Scripted changes ([`Scripted`], from the first WATCH request on) and the test's own
//! ([`super::ApiServer::apply`]) are [`Action`]s: an object put or removed, every open watch
//! dropped (the stream ends: the client resumes from the last resourceVersion it saw), or
//! expired (the history compacted and every open watch ended with a 410 ERROR).

use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::http::{HeaderValue, header};
use axum::response::Response;
use futures::{SinkExt, StreamExt};
use serde_json::{Value, json};

use super::store::{Change, Res, Store};
use super::{Shared, field_match, field_terms, label_match, selectable, status};

/// What open watches are told.
#[derive(Clone, Copy, Debug)]
pub enum Signal {
    /// The store changed: send what matches.
    Changed,
    /// End every stream (a dropped connection, an apiserver restarting).
    Drop,
    /// End every stream with a 410 ERROR (the history was compacted).
    Expire,
}

/// One change a test or a script makes.
#[derive(Clone, Debug)]
pub enum Action {
    /// Add or replace this object (with the next resourceVersion).
    Put(Value),
    /// Remove this object.
    Remove { api_version: String, kind: String, namespace: Option<String>, name: String },
    /// End every open watch stream.
    DropWatches,
    /// Compact the history and end every open watch with 410 Gone.
    ExpireWatches,
    /// The server goes away for this long (every connection closed, none accepted), then
    /// comes back on the same address with the same objects and history, as an API server
    /// restarted by a control-plane upgrade.
    Outage(Duration),
}

impl Action {
    /// Removes `o` (its apiVersion, kind, namespace and name).
    pub fn remove(o: &Value) -> Action {
        let s = |v: &Value| v.as_str().unwrap_or_default().to_string();
        Action::Remove {
            api_version: s(&o["apiVersion"]),
            kind: s(&o["kind"]),
            namespace: o["metadata"]["namespace"].as_str().map(str::to_string),
            name: s(&o["metadata"]["name"]),
        }
    }

    /// A script's step as JSON: `{"put": OBJECT}`, `{"remove": OBJECT}` (only its apiVersion,
    /// kind and metadata's namespace and name are read), `{"drop": true}`, `{"expire": true}`.
    pub fn from_json(v: &Value) -> Option<Action> {
        if let Some(o) = v.get("put") {
            return Some(Action::Put(o.clone()));
        }
        if let Some(o) = v.get("remove") {
            return Some(Action::remove(o));
        }
        if v.get("drop").is_some() {
            return Some(Action::DropWatches);
        }
        if let Some(secs) = v.get("outage").and_then(Value::as_f64) {
            return Some(Action::Outage(Duration::from_secs_f64(secs)));
        }
        v.get("expire").map(|_| Action::ExpireWatches)
    }
}

/// A step of a script: `action`, `after` the step before it (the first: after the first WATCH
/// request).
#[derive(Clone, Debug)]
pub struct Scripted {
    pub after: Duration,
    pub action: Action,
}

/// Applies one action and tells the open watches.
pub fn apply(s: &Shared, a: Action) {
    let signal = match a {
        Action::Put(o) => {
            s.store.put(o);
            Signal::Changed
        }
        Action::Remove { api_version, kind, namespace, name } => {
            s.store.remove(&api_version, &kind, namespace.as_deref(), &name);
            Signal::Changed
        }
        Action::DropWatches => Signal::Drop,
        Action::ExpireWatches => {
            s.store.compact();
            Signal::Expire
        }
        Action::Outage(d) => {
            let _ = s.outages.send(d);
            return;
        }
    };
    let _ = s.signals.send(signal);
}

/// Faults on one watch's stream.
#[derive(Default)]
pub struct Shape {
    /// Lines sent before anything else.
    pub first: Vec<Value>,
    /// The stream ends after its first line.
    pub end_after_one: bool,
}

/// What one watch sends.
struct Filter {
    res: Res,
    namespace: Option<String>,
    labels: String,
    fields: Vec<(String, String, bool)>,
    metadata: bool,
}

impl Filter {
    fn matches(&self, o: &Value) -> bool {
        let fields: Vec<(&str, &str, bool)> =
            self.fields.iter().map(|(k, v, e)| (k.as_str(), v.as_str(), *e)).collect();
        self.namespace.as_deref().is_none_or(|ns| o["metadata"]["namespace"].as_str() == Some(ns))
            && label_match(&self.labels, &o["metadata"]["labels"])
            && field_match(&fields, o)
    }

    /// The object as this watch carries it.
    fn shown(&self, o: &Value) -> Value {
        if self.metadata {
            return json!({"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": o["metadata"]});
        }
        let mut o = if self.res.group == "events.k8s.io" { super::store::as_events_v1(o) } else { o.clone() };
        o["apiVersion"] = self.res.api_version().into();
        o["kind"] = self.res.kind.clone().into();
        o
    }

    /// The event a change makes on this watch, if any.
    fn event(&self, c: &Change) -> Option<Value> {
        if !Store::is_of(&self.res, c) {
            return None;
        }
        let was = c.before.as_ref().is_some_and(|o| self.matches(o));
        let is = c.after.as_ref().is_some_and(|o| self.matches(o));
        let (kind, o) = match (was, is, &c.after) {
            (true, true, Some(a)) => ("MODIFIED", a.clone()),
            (false, true, Some(a)) => ("ADDED", a.clone()),
            (true, _, after) => {
                // removed, or no longer selected: the last state, at the change's version
                let mut o = after.clone().or_else(|| c.before.clone())?;
                o["metadata"]["resourceVersion"] = c.rv.to_string().into();
                ("DELETED", o)
            }
            _ => return None,
        };
        Some(json!({"type": kind, "object": self.shown(&o)}))
    }
}

/// Answers a WATCH request on `res` (in `namespace`, or every one).
pub fn watch(
    s: Arc<Shared>,
    res: Res,
    namespace: Option<String>,
    q: &[(String, String)],
    accept: &str,
    shape: Shape,
) -> Response {
    let param = |k: &str| q.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
    let fields = match field_terms(param("fieldSelector").unwrap_or("")) {
        Ok(terms) => match terms.iter().find(|(f, _, _)| !selectable(&res, f)) {
            Some((f, _, _)) => return status(400, "BadRequest", &format!("field label not supported: {f}"), None),
            None => terms.into_iter().map(|(k, v, e)| (k.to_string(), v.to_string(), e)).collect(),
        },
        Err(term) => return status(400, "BadRequest", &format!("invalid selector: '{term}'"), None),
    };
    let from = match param("resourceVersion").unwrap_or("") {
        "" | "0" => None,
        rv => match rv.parse::<u64>() {
            Ok(n) => Some(n),
            Err(_) => return status(400, "BadRequest", &format!("invalid resource version: {rv}"), None),
        },
    };
    let bookmarks = param("allowWatchBookmarks") == Some("true");
    let timeout = param("timeoutSeconds").and_then(|t| t.parse::<u64>().ok()).map(Duration::from_secs);
    let filter = Filter {
        res,
        namespace,
        labels: param("labelSelector").unwrap_or("").to_string(),
        fields,
        metadata: accept.contains("as=PartialObjectMetadata"),
    };
    start_script(&s);
    let (tx, rx) = futures::channel::mpsc::channel::<axum::body::Bytes>(64);
    let first = shape.first;
    let stream_state = s.clone();
    tokio::spawn(async move {
        let mut tx = tx;
        for line in &first {
            if !send(&stream_state, &mut tx, line).await {
                return;
            }
        }
        stream(stream_state, filter, from, bookmarks, timeout, tx).await
    });
    let rx = rx.map(Ok::<_, std::convert::Infallible>);
    let body = if shape.end_after_one { Body::from_stream(rx.take(1)) } else { Body::from_stream(rx) };
    let mut r = Response::new(body);
    r.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json;stream=watch"));
    r
}

/// The script, once, from the first WATCH request on.
fn start_script(s: &Arc<Shared>) {
    let Some(script) = s.script.lock().unwrap().take() else { return };
    let s = s.clone();
    std::thread::spawn(move || {
        for step in script {
            std::thread::sleep(step.after);
            apply(&s, step.action);
        }
    });
}

type Tx = futures::channel::mpsc::Sender<axum::body::Bytes>;

/// Sends one event line; `false` when the client has gone.
async fn send(s: &Shared, tx: &mut Tx, event: &Value) -> bool {
    let mut line = serde_json::to_vec(event).unwrap();
    line.push(b'\n');
    s.bytes_sent.fetch_add(line.len() as u64, std::sync::atomic::Ordering::Relaxed);
    tx.send(axum::body::Bytes::from(line)).await.is_ok()
}

fn expired(rv: u64) -> Value {
    json!({"type": "ERROR", "object": {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": format!("too old resource version: {rv}"), "reason": "Expired", "code": 410}})
}

async fn stream(s: Arc<Shared>, f: Filter, from: Option<u64>, bookmarks: bool, timeout: Option<Duration>, mut tx: Tx) {
    // subscribed before the history is read: a change in between is seen by both, sent once
    let mut signals = s.signals.subscribe();
    let deadline = tokio::time::sleep(timeout.unwrap_or(Duration::from_secs(24 * 3600)));
    tokio::pin!(deadline);
    let mut sent = match from {
        Some(rv) => rv,
        None => {
            // "start at most recent": the current objects first
            let rv = s.store.resource_version();
            for o in s.store.objects_of(&f.res, f.namespace.as_deref()).iter().filter(|o| f.matches(o)) {
                if !send(&s, &mut tx, &json!({"type": "ADDED", "object": f.shown(o)})).await {
                    return;
                }
            }
            rv
        }
    };
    loop {
        match s.store.changes_since(sent) {
            Err(_) => {
                send(&s, &mut tx, &expired(sent)).await;
                return;
            }
            Ok(changes) => {
                for c in &changes {
                    if let Some(e) = f.event(c)
                        && !send(&s, &mut tx, &e).await
                    {
                        return;
                    }
                    sent = c.rv;
                }
            }
        }
        let mut tick = tokio::time::interval_at(tokio::time::Instant::now() + s.bookmark_every, s.bookmark_every);
        loop {
            tokio::select! {
                sig = signals.recv() => match sig {
                    Ok(Signal::Changed) | Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => break,
                    Ok(Signal::Drop) | Err(_) => return,
                    Ok(Signal::Expire) => {
                        send(&s, &mut tx, &expired(sent)).await;
                        return;
                    }
                },
                _ = tick.tick(), if bookmarks => {
                    // every change up to the store's version has been looked at
                    let now = s.store.resource_version().max(sent);
                    if s.store.changes_since(sent).is_ok_and(|c| c.is_empty()) {
                        sent = now;
                    }
                    let object = json!({"kind": f.res.kind, "apiVersion": f.res.api_version(),
                                        "metadata": {"resourceVersion": sent.to_string()}});
                    if !send(&s, &mut tx, &json!({"type": "BOOKMARK", "object": object})).await {
                        return;
                    }
                },
                _ = &mut deadline => return,
            }
        }
    }
}

//! An in-process Kubernetes API server for tests (axum on 127.0.0.1, its own thread and
//! runtime), serving a snapshot file with the API's wire behaviour: `/version`, legacy and
//! aggregated discovery (with the Content-Type kubectl requires), per-group resource lists,
//! list and get on namespaced and cluster-wide paths with `limit`/`continue`, metadata-only
//! answers when the Accept header asks for them, label selectors, field selectors on the fields
//! the API server makes selectable (`metadata.*`; Events' `involvedObject.*`/`regarding.*`,
//! `reason`, `type`; any other field is refused with 400, as the API server refuses it), KEP-5958's
//! `drop=metadata.managedFields` Accept parameter (honoured as a 1.37 server with the
//! `ManagedFieldsOptOut` gate on, or not: see [`DropManagedFields`]), and injected faults per
//! resource or group, and conversion webhooks whose Service is gone failing as they do (see
//! [`conversion`]). Every request is recorded for assertions. WATCH (`?watch=1`) is served
//! from the store's history, with bookmarks, scripted changes over time and faults on the
//! stream (see [`watch`]).
//!
//! Also the example binary `cargo run --example apiserver -- --snapshot FILE --port N`.

#![allow(dead_code)]

pub mod builtins;
pub mod conversion;
pub mod protobuf;
pub mod store;
pub mod watch;

use std::net::SocketAddr;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Map, Value, json};

use store::{Res, Store};

pub const AGGREGATED_CONTENT_TYPE: &str = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";
pub const AGGREGATED_V2BETA1_CONTENT_TYPE: &str =
    "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList";
pub const METADATA_LIST_CONTENT_TYPE: &str = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1";
pub const METADATA_CONTENT_TYPE: &str = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1";
pub const PROTOBUF_METADATA_LIST_CONTENT_TYPE: &str =
    "application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1";

/// One request as the server saw it.
#[derive(Clone, Debug)]
pub struct Recorded {
    pub method: String,
    pub path: String,
    pub query: String,
    pub accept: String,
    pub authorization: String,
    pub impersonate_user: String,
    /// `Impersonate-Extra-*` headers as `key=value` (the key as sent), in order.
    pub impersonate_extra: Vec<String>,
    pub accept_encoding: String,
    pub user_agent: String,
    /// The answer's body bytes (uncompressed; 0 for a stream such as a WATCH, whose lines
    /// count in [`ApiServer::bytes_sent`] only).
    pub bytes: u64,
    /// When it came.
    pub at: std::time::Instant,
}

impl Recorded {
    pub fn is_watch(&self) -> bool {
        form_urlencoded::parse(self.query.as_bytes()).any(|(k, v)| k == "watch" && (v == "1" || v == "true"))
    }

    pub fn wants_metadata(&self) -> bool {
        self.accept.contains("as=PartialObjectMetadata")
    }

    /// Whether the client offered to take protobuf.
    pub fn offers_protobuf(&self) -> bool {
        self.accept.contains("application/vnd.kubernetes.protobuf")
    }

    /// Whether the client asked for answers without managedFields (KEP-5958) anywhere in
    /// its Accept header.
    pub fn asks_drop(&self) -> bool {
        self.accept.split(',').any(|m| drop_param(m).is_some())
    }

    /// Whether the first media type of the Accept header asks without managedFields.
    pub fn asks_drop_first(&self) -> bool {
        self.accept.split(',').next().is_some_and(|m| drop_param(m).is_some())
    }
}

/// What the server does with the Accept parameter `drop=metadata.managedFields` (KEP-5958).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DropManagedFields {
    /// A 1.37 server with the `ManagedFieldsOptOut` gate on, as KEP-5958 specifies it
    /// (kubernetes/enhancements#6015) and kubernetes/kubernetes#139561 implements it: JSON
    /// answers (metadata-only or full) leave managedFields out; the protobuf serializer has no
    /// such variant, so a protobuf answer keeps them whatever the parameter says.
    Honour,
    /// A server without the gate or before 1.37: the parameter is unknown, and the apiserver's
    /// negotiation (`acceptMediaTypeOptions`) records unknown parameters and serves the media
    /// type as if they were absent, managedFields included.
    Ignore,
    /// A stricter server (or proxy) that finds no media type it serves with that parameter and
    /// goes on to the next entry of the Accept header.
    Skip,
}

/// The `drop` parameter's value of one media type of an Accept header.
fn drop_param(media: &str) -> Option<&str> {
    media.split(';').skip(1).find_map(|p| p.trim().strip_prefix("drop="))
}

/// What goes wrong.
#[derive(Clone, Debug)]
pub enum FaultKind {
    /// An error Status with this code (403, 404, 500, …).
    Status(u16),
    /// 410 Gone (`Expired`), as when a continue token is too old.
    Gone,
    /// 429 with `Retry-After: secs`.
    TooMany { retry_after: u64 },
    /// A plain-text 503, as an unavailable aggregated API answers; in aggregated discovery
    /// the group's versions are `Stale`.
    Unavailable,
    /// 406 to metadata-only requests (a server that cannot produce PartialObjectMetadata).
    NoMetadata,
    /// No protobuf: metadata-only lists are answered in JSON whatever the client prefers (an
    /// aggregated API server that only speaks JSON).
    NoProtobuf,
    /// Answer normally after this delay.
    Slow(Duration),
    /// Drop the connection mid-answer.
    Reset,
    /// An error Status with this code and this message: a hostile or broken server's words
    /// (terminal escapes, a forged second line) that the client must not print raw.
    StatusMessage(u16, String),
    /// A list page with no items whose continue token is always the same: paging never ends.
    EndlessContinue,
    /// A list page with no items and a fresh continue token every time: paging never ends,
    /// and no token repeats.
    FreshContinue,
    /// After this delay, a list page with one new ConfigMap and a fresh continue token every
    /// time: paging never ends, every page brings something, and no token repeats.
    SlowFreshItems(Duration),
    /// A 200 answer with this JSON body (`{}`, a Status): not a list.
    NotAList(Value),
    /// A 200 JSON answer that never ends (no Content-Length, chunks forever).
    Oversized,
    /// An error Status whose body never ends (a 500 followed by chunks forever).
    EndlessError,
    /// WATCH only: these event lines first (events of another kind, namespace or name), then
    /// the watch as served.
    Foreign(Vec<Value>),
    /// WATCH only: the stream ends after its first line (an event or a bookmark), as a proxy
    /// that closes every stream does.
    EndAfterOne,
    /// WATCH only: ADDED events of objects nobody made, each with a 1 MiB annotation, as fast
    /// as they are read (a server inventing objects).
    Inventing,
}

/// A fault on the requests it matches.
#[derive(Clone, Debug)]
pub struct Fault {
    /// A resource's plural (any group), matched on list and get.
    pub resource: Option<String>,
    /// An API group: matched on its discovery path and on its resources.
    pub group: Option<String>,
    /// An exact path (e.g. `/api`, `/apis`), matched before anything else.
    pub path: Option<String>,
    /// Only requests that carry a continue token.
    pub on_continue: bool,
    /// Only WATCH requests (`?watch=1`).
    pub on_watch: bool,
    pub kind: FaultKind,
    /// How many times it fires (`None`: always).
    pub remaining: Option<usize>,
}

impl Fault {
    pub fn resource(plural: &str, kind: FaultKind) -> Fault {
        Fault {
            resource: Some(plural.into()),
            group: None,
            path: None,
            on_continue: false,
            on_watch: false,
            kind,
            remaining: None,
        }
    }

    /// Every list and get, of any resource (discovery is left alone).
    pub fn every_resource(kind: FaultKind) -> Fault {
        Fault::resource("*", kind)
    }

    pub fn group(group: &str, kind: FaultKind) -> Fault {
        Fault {
            resource: None,
            group: Some(group.into()),
            path: None,
            on_continue: false,
            on_watch: false,
            kind,
            remaining: None,
        }
    }

    pub fn path(path: &str, kind: FaultKind) -> Fault {
        Fault {
            resource: None,
            group: None,
            path: Some(path.into()),
            on_continue: false,
            on_watch: false,
            kind,
            remaining: None,
        }
    }

    pub fn on_continue(mut self) -> Fault {
        self.on_continue = true;
        self
    }

    pub fn on_watch(mut self) -> Fault {
        self.on_watch = true;
        self
    }

    pub fn times(mut self, n: usize) -> Fault {
        self.remaining = Some(n);
        self
    }
}

/// Server behaviour.
#[derive(Clone, Debug)]
pub struct Options {
    /// Serve aggregated discovery when asked (else only the legacy documents).
    pub aggregated: bool,
    /// The version of aggregated discovery served: `v2` (1.30+), or `v2beta1` alone (1.26 to
    /// 1.29 servers, where it was beta).
    pub aggregated_version: &'static str,
    /// Most items in one page, whatever limit the client asks (0: no cap), so that small
    /// fixtures exercise `continue`.
    pub max_page: usize,
    pub faults: Vec<Fault>,
    /// Serve metadata-only lists in protobuf to clients that prefer it (as the API server
    /// does, custom resources included); off, JSON only (a server that never speaks it).
    pub protobuf: bool,
    /// The `drop=metadata.managedFields` Accept parameter (default: honoured).
    pub drop_managed_fields: DropManagedFields,
    /// How often a watch that allows them gets a BOOKMARK (default: every second).
    pub bookmark_every: Duration,
    /// Changes made over time, from the first WATCH request on.
    pub script: Vec<watch::Scripted>,
    /// The `gitVersion` that `/version` reports (default: [`VERSION`]).
    pub version: &'static str,
    /// Print each answered request to stderr (bytes, method, path and query, Accept), for a
    /// server run by hand (`--log`).
    pub echo: bool,
}

/// The `gitVersion` the server reports unless told otherwise: a 1.37 server.
pub const VERSION: &str = "v1.37.0-kubectl-gc-test";

impl Default for Options {
    fn default() -> Options {
        Options {
            aggregated: true,
            aggregated_version: "v2",
            max_page: 0,
            faults: Vec::new(),
            protobuf: true,
            drop_managed_fields: DropManagedFields::Honour,
            bookmark_every: Duration::from_secs(1),
            script: Vec::new(),
            version: VERSION,
            echo: false,
        }
    }
}

pub struct Shared {
    store: Store,
    bookmark_every: Duration,
    /// The script, until the first WATCH request starts it.
    script: Mutex<Option<Vec<watch::Scripted>>>,
    /// What open watches are told: a change, or to drop or expire.
    signals: tokio::sync::broadcast::Sender<watch::Signal>,
    /// The server's runtime, for changes made from the test's thread.
    runtime: Mutex<Option<tokio::runtime::Handle>>,
    /// Outages asked for ([`watch::Action::Outage`]): the server thread goes down that long.
    outages: tokio::sync::mpsc::UnboundedSender<Duration>,
    aggregated: bool,
    aggregated_version: &'static str,
    max_page: usize,
    protobuf: bool,
    version: &'static str,
    echo: bool,
    drop_managed_fields: Mutex<DropManagedFields>,
    faults: Mutex<Vec<Fault>>,
    log: Mutex<Vec<Recorded>>,
    /// Response body bytes sent (uncompressed), for the benchmark's transfer figures.
    bytes_sent: std::sync::atomic::AtomicU64,
    /// Lists answered in protobuf.
    protobuf_answers: std::sync::atomic::AtomicUsize,
    /// Answers (lists and gets) that left managedFields out.
    dropped_answers: std::sync::atomic::AtomicUsize,
}

/// A running server; stops when dropped.
pub struct ApiServer {
    pub addr: SocketAddr,
    shared: Arc<Shared>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
}

impl ApiServer {
    pub fn start(snapshot: &Path) -> ApiServer {
        ApiServer::start_with(snapshot, Options::default(), 0)
    }

    pub fn start_with(snapshot: &Path, options: Options, port: u16) -> ApiServer {
        let (outages, mut outage_rx) = tokio::sync::mpsc::unbounded_channel();
        let shared = Arc::new(Shared {
            outages,
            store: Store::load(snapshot),
            bookmark_every: options.bookmark_every,
            script: Mutex::new(Some(options.script)),
            signals: tokio::sync::broadcast::channel(1024).0,
            runtime: Mutex::new(None),
            aggregated: options.aggregated,
            aggregated_version: options.aggregated_version,
            max_page: options.max_page,
            protobuf: options.protobuf,
            version: options.version,
            echo: options.echo,
            drop_managed_fields: Mutex::new(options.drop_managed_fields),
            faults: Mutex::new(options.faults),
            log: Mutex::new(Vec::new()),
            bytes_sent: std::sync::atomic::AtomicU64::new(0),
            protobuf_answers: std::sync::atomic::AtomicUsize::new(0),
            dropped_answers: std::sync::atomic::AtomicUsize::new(0),
        });
        let (stop_tx, mut stop_rx) = tokio::sync::oneshot::channel::<()>();
        let (addr_tx, addr_rx) = std::sync::mpsc::channel();
        let state = shared.clone();
        std::thread::spawn(move || {
            let mut port = port;
            // each outage drops the runtime (every connection and stream with it), waits, and
            // serves again on the same address
            loop {
                let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
                *state.runtime.lock().unwrap() = Some(rt.handle().clone());
                let app_state = state.clone();
                let addr_tx = addr_tx.clone();
                let next = rt.block_on(async {
                    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await.expect("binding 127.0.0.1");
                    let _ = addr_tx.send(listener.local_addr().unwrap());
                    port = listener.local_addr().unwrap().port();
                    let app = axum::Router::new().fallback(handle).with_state(app_state);
                    let server = axum::serve(listener, app);
                    tokio::select! {
                        _ = server => None,
                        _ = &mut stop_rx => None,
                        d = outage_rx.recv() => d,
                    }
                });
                rt.shutdown_timeout(Duration::from_secs(1));
                match next {
                    Some(d) => std::thread::sleep(d),
                    None => return,
                }
            }
        });
        let addr = addr_rx.recv_timeout(Duration::from_secs(10)).expect("test API server did not start");
        ApiServer { addr, shared, stop: Some(stop_tx) }
    }

    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Every request so far.
    pub fn requests(&self) -> Vec<Recorded> {
        self.shared.log.lock().unwrap().clone()
    }

    pub fn clear_requests(&self) {
        self.shared.log.lock().unwrap().clear();
        self.shared.bytes_sent.store(0, std::sync::atomic::Ordering::Relaxed);
        self.shared.protobuf_answers.store(0, std::sync::atomic::Ordering::Relaxed);
        self.shared.dropped_answers.store(0, std::sync::atomic::Ordering::Relaxed);
    }

    /// Answers that left managedFields out since the start (or the last `clear_requests`).
    pub fn dropped_answers(&self) -> usize {
        self.shared.dropped_answers.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Switches how `drop=metadata.managedFields` is treated from the next request on.
    pub fn set_drop_managed_fields(&self, d: DropManagedFields) {
        *self.shared.drop_managed_fields.lock().unwrap() = d;
    }

    /// Response body bytes sent since the start (or the last `clear_requests`).
    pub fn bytes_sent(&self) -> u64 {
        self.shared.bytes_sent.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Lists answered in protobuf since the start (or the last `clear_requests`).
    pub fn protobuf_answers(&self) -> usize {
        self.shared.protobuf_answers.load(std::sync::atomic::Ordering::Relaxed)
    }

    pub fn set_faults(&self, faults: Vec<Fault>) {
        *self.shared.faults.lock().unwrap() = faults;
    }

    /// Goes away for `d` (every connection closed, none accepted), then serves again on the
    /// same address.
    pub fn outage(&self, d: Duration) {
        let _ = self.shared.outages.send(d);
    }

    /// Changes the objects (or the open watches) now, as a script's step would.
    pub fn apply(&self, action: watch::Action) {
        watch::apply(&self.shared, action);
    }

    /// The WATCH requests so far.
    pub fn watches(&self) -> Vec<Recorded> {
        self.requests().into_iter().filter(Recorded::is_watch).collect()
    }
}

impl Drop for ApiServer {
    fn drop(&mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
    }
}

async fn handle(State(s): State<Arc<Shared>>, req: Request) -> Response {
    let mut logged = None;
    let r = respond(s.clone(), req, &mut logged).await;
    let n = axum::body::HttpBody::size_hint(r.body()).exact().unwrap_or(0);
    s.bytes_sent.fetch_add(n, std::sync::atomic::Ordering::Relaxed);
    if let Some(i) = logged
        && let Some(rec) = s.log.lock().unwrap().get_mut(i)
    {
        rec.bytes = n;
        if s.echo {
            eprintln!("{n}\t{} {}?{}\t{}", rec.method, rec.path, rec.query, rec.accept);
        }
    }
    r
}

/// Answers `req`; `logged` is set to its place in the request log.
async fn respond(s: Arc<Shared>, req: Request, logged: &mut Option<usize>) -> Response {
    let accept = req.headers().get(header::ACCEPT).and_then(|v| v.to_str().ok()).unwrap_or("").to_string();
    let path = req.uri().path().to_string();
    let query = req.uri().query().unwrap_or("").to_string();
    let (authorization, impersonate_user, accept_encoding, impersonate_extra) = {
        let header_of = |n: &str| req.headers().get(n).and_then(|v| v.to_str().ok()).unwrap_or("").to_string();
        let extra: Vec<String> = req
            .headers()
            .iter()
            .filter_map(|(n, v)| {
                Some(format!("{}={}", n.as_str().strip_prefix("impersonate-extra-")?, v.to_str().ok()?))
            })
            .collect();
        (header_of("authorization"), header_of("impersonate-user"), header_of("accept-encoding"), extra)
    };
    let user_agent = req.headers().get(header::USER_AGENT).and_then(|v| v.to_str().ok()).unwrap_or("").to_string();
    {
        let mut log = s.log.lock().unwrap();
        *logged = Some(log.len());
        log.push(Recorded {
            method: req.method().to_string(),
            path: path.clone(),
            query: query.clone(),
            accept: accept.clone(),
            authorization,
            impersonate_user,
            impersonate_extra,
            accept_encoding,
            user_agent,
            bytes: 0,
            at: std::time::Instant::now(),
        });
    }
    let method = req.method().clone();
    drop(req);
    if method != Method::GET {
        return status(
            405,
            "MethodNotAllowed",
            &format!("{method} is not allowed on this read-only test server"),
            None,
        );
    }
    let q: Vec<(String, String)> = form_urlencoded::parse(query.as_bytes()).into_owned().collect();
    let param = |k: &str| q.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
    let segs: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    let is_watch = param("watch").is_some_and(|w| w == "true" || w == "1");
    if let Some(r) = fault(&s, Target::Path(&path), false, is_watch, &accept).await {
        return r;
    }
    let aggregated_media = format!("g=apidiscovery.k8s.io;v={};as=APIGroupDiscoveryList", s.aggregated_version);
    let wants_aggregated = s.aggregated && accept.split(',').any(|m| m.contains(&aggregated_media));
    let aggregated_type: &'static str =
        if s.aggregated_version == "v2" { AGGREGATED_CONTENT_TYPE } else { AGGREGATED_V2BETA1_CONTENT_TYPE };

    // (group, version, rest of the path)
    let (group, version, rest): (Option<&str>, Option<&str>, &[&str]) = match segs.as_slice() {
        ["version"] => return json_response(version_info(s.version), "application/json"),
        ["api"] if wants_aggregated => return json_response(aggregated(&s, true), aggregated_type),
        ["api"] => {
            return json_response(
                json!({"kind": "APIVersions", "versions": ["v1"], "serverAddressByClientCIDRs": []}),
                "application/json",
            );
        }
        ["apis"] if wants_aggregated => return json_response(aggregated(&s, false), aggregated_type),
        ["apis"] => return json_response(group_list(&s), "application/json"),
        ["api", v, rest @ ..] => (Some(""), Some(*v), rest),
        ["apis", g, v, rest @ ..] => (Some(*g), Some(*v), rest),
        ["apis", g] => return group_doc(&s, g),
        _ => return status(404, "NotFound", "the server could not find the requested resource", None),
    };
    let (group, version) = (group.unwrap_or(""), version.unwrap_or(""));
    if !s.store.groups.get(group).is_some_and(|vs| vs.iter().any(|v| v == version)) {
        return status(404, "NotFound", "the server could not find the requested resource", None);
    }
    // (namespace, plural, name)
    let (namespace, plural, name) = match rest {
        [] => (None, None, None),
        ["namespaces", ns, p] => (Some(*ns), Some(*p), None),
        ["namespaces", ns, p, n] => (Some(*ns), Some(*p), Some(*n)),
        [p] => (None, Some(*p), None),
        [p, n] => (None, Some(*p), Some(*n)),
        _ => return status(404, "NotFound", "the server could not find the requested resource", None),
    };
    if let Some(r) = fault(&s, Target::Api { group, plural }, param("continue").is_some(), is_watch, &accept).await {
        return r;
    }
    let Some(plural) = plural else {
        let resources: Vec<Value> = s.store.resources_in(group, version).map(Res::discovery_json).collect();
        let gv = if group.is_empty() { version.to_string() } else { format!("{group}/{version}") };
        return json_response(
            json!({"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv, "resources": resources}),
            "application/json",
        );
    };
    let Some(res) = s.store.resource(group, version, plural) else {
        return status(404, "NotFound", "the server could not find the requested resource", None);
    };
    if namespace.is_some() && !res.namespaced {
        return status(404, "NotFound", "the server could not find the requested resource", None);
    }
    if let Some(r) = conversion::refusal(&s.store, res, namespace, name) {
        return r;
    }
    match name {
        Some(name) => get(&s, res, namespace, name, &accept),
        None if is_watch => {
            let (res, namespace) = (res.clone(), namespace.map(str::to_string));
            let (mut first, mut one) = (Vec::new(), false);
            for f in s
                .faults
                .lock()
                .unwrap()
                .iter()
                .filter(|f| matches!(f.resource.as_deref(), Some(r) if r == plural || r == "*"))
            {
                match &f.kind {
                    FaultKind::Foreign(lines) => first.extend(lines.iter().cloned()),
                    FaultKind::EndAfterOne => one = true,
                    _ => {}
                }
            }
            let shape = watch::Shape { first, end_after_one: one };
            watch::watch(s.clone(), res, namespace, &q, &accept, shape)
        }
        None => {
            let protobuf = s.protobuf
                && !s.faults.lock().unwrap().iter().any(|f| {
                    matches!(f.kind, FaultKind::NoProtobuf)
                        && (f.resource.as_deref() == Some(plural) || f.group.as_deref() == Some(group))
                });
            list(&s, res, namespace, &q, &accept, protobuf)
        }
    }
}

/// What a list answers, by the first media type of the Accept header the server can produce
/// (as the API server negotiates): a protobuf or JSON `PartialObjectMetadataList`, or the
/// objects in full (JSON).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ListAs {
    ProtobufMetadata,
    JsonMetadata,
    Full,
}

/// Also whether managedFields are left out (the chosen media type's `drop` parameter names
/// them, and the server honours it).
fn negotiate(accept: &str, protobuf: bool, d: DropManagedFields) -> (ListAs, bool) {
    for media in accept.split(',').map(str::trim) {
        let dropping = match (drop_param(media), d) {
            (None, _) | (Some(_), DropManagedFields::Ignore) => false,
            (Some(_), DropManagedFields::Skip) => continue,
            // unknown drop targets are ignored (forward compatibility)
            (Some(v), DropManagedFields::Honour) => drops_managed_fields(v),
        };
        let metadata = media.contains("as=PartialObjectMetadataList");
        if media.starts_with("application/vnd.kubernetes.protobuf") && metadata && protobuf {
            // JSON only (KEP-5958): protobuf answers keep managedFields
            return (ListAs::ProtobufMetadata, false);
        }
        if media.starts_with("application/json") && metadata {
            return (ListAs::JsonMetadata, dropping);
        }
        if media.starts_with("application/json") || media.starts_with("*/*") || media.is_empty() {
            return (ListAs::Full, dropping);
        }
    }
    (ListAs::Full, false)
}

/// Whether a `drop` value names managedFields (fields are joined with `+`).
fn drops_managed_fields(v: &str) -> bool {
    v.split('+').any(|f| f.trim() == "metadata.managedFields")
}

enum Target<'a> {
    Path(&'a str),
    Api { group: &'a str, plural: Option<&'a str> },
}

async fn fault(s: &Shared, target: Target<'_>, has_continue: bool, is_watch: bool, accept: &str) -> Option<Response> {
    let (group, plural) = match target {
        Target::Api { group, plural } => (Some(group), plural),
        Target::Path(_) => (None, None),
    };
    let kind = {
        let mut faults = s.faults.lock().unwrap();
        let hit = faults.iter_mut().find(|f| {
            let by_path = matches!(target, Target::Path(p) if f.path.as_deref() == Some(p));
            let by_group = group.is_some() && f.group.as_deref() == group;
            let by_resource =
                plural.is_some() && (f.resource.as_deref() == plural || f.resource.as_deref() == Some("*"));
            (by_path || by_group || by_resource)
                && (!f.on_continue || has_continue)
                && (!f.on_watch || is_watch)
                && f.remaining != Some(0)
                && (!matches!(f.kind, FaultKind::NoMetadata) || accept.contains("as=PartialObjectMetadata"))
                && !matches!(f.kind, FaultKind::NoProtobuf | FaultKind::Foreign(_) | FaultKind::EndAfterOne)
        })?;
        if let Some(n) = &mut hit.remaining {
            *n -= 1;
        }
        hit.kind.clone()
    };
    Some(match kind {
        FaultKind::Status(403) => status(
            403,
            "Forbidden",
            &format!(
                "{} is forbidden: User \"test\" cannot list resource",
                plural.or(group).unwrap_or("this resource")
            ),
            None,
        ),
        FaultKind::Status(404) => status(404, "NotFound", "the server could not find the requested resource", None),
        FaultKind::Status(code) => status(
            code,
            "InternalError",
            "an error on the server (\"injected\") has prevented the request from succeeding",
            None,
        ),
        FaultKind::Gone => status(
            410,
            "Expired",
            "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter.",
            Some(json!({"continue": "inconsistent"})),
        ),
        FaultKind::TooMany { retry_after } => {
            let mut r = status(429, "TooManyRequests", "too many requests, please try again later", None);
            r.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from_str(&retry_after.to_string()).unwrap());
            r
        }
        FaultKind::Unavailable => {
            let mut r = Response::new(Body::from("service unavailable\n"));
            *r.status_mut() = StatusCode::SERVICE_UNAVAILABLE;
            r.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("text/plain; charset=utf-8"));
            r
        }
        FaultKind::NoMetadata => {
            status(406, "NotAcceptable", "only the following media types are accepted: application/json", None)
        }
        FaultKind::NoProtobuf | FaultKind::Foreign(_) | FaultKind::EndAfterOne => return None,
        FaultKind::EndlessError => {
            static CHUNK: [u8; 1 << 20] = [b'x'; 1 << 20];
            let stream = futures::stream::repeat_with(|| {
                Ok::<axum::body::Bytes, std::io::Error>(axum::body::Bytes::from_static(&CHUNK))
            });
            let mut r = Response::new(Body::from_stream(stream));
            *r.status_mut() = StatusCode::INTERNAL_SERVER_ERROR;
            r.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
            r
        }
        FaultKind::Inventing => {
            let pad = "x".repeat(1 << 20);
            let stream = futures::StreamExt::map(futures::stream::iter(1u64..), move |n| {
                let line = json!({"type": "ADDED", "object": {"metadata": {"name": format!("invented-{n}"),
                    "namespace": "site-system", "uid": format!("invented-{n}"),
                    "resourceVersion": (1_000_000 + n).to_string(), "annotations": {"pad": pad}}}});
                let mut b = serde_json::to_vec(&line).unwrap();
                b.push(b'\n');
                Ok::<axum::body::Bytes, std::io::Error>(axum::body::Bytes::from(b))
            });
            let mut r = Response::new(Body::from_stream(stream));
            r.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json;stream=watch"));
            r
        }
        FaultKind::Slow(d) => {
            tokio::time::sleep(d).await;
            return None;
        }
        FaultKind::StatusMessage(code, message) => status(code, "InternalError", &message, None),
        FaultKind::EndlessContinue => json_response(
            json!({"kind": "ConfigMapList", "apiVersion": "v1", "metadata": {"continue": "again"}, "items": []}),
            "application/json",
        ),
        FaultKind::FreshContinue => {
            static PAGES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
            let n = PAGES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            json_response(
                json!({"kind": "ConfigMapList", "apiVersion": "v1", "metadata": {"continue": format!("fresh-{n}")}, "items": []}),
                "application/json",
            )
        }
        FaultKind::SlowFreshItems(d) => {
            static PAGES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
            tokio::time::sleep(d).await;
            let n = PAGES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let item = json!({"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": format!("page-{n}"), "namespace": "labs", "uid": format!("page-{n}"), "resourceVersion": "1"}});
            json_response(
                json!({"kind": "ConfigMapList", "apiVersion": "v1", "metadata": {"continue": format!("items-{n}")}, "items": [item]}),
                "application/json",
            )
        }
        FaultKind::NotAList(v) => json_response(v, "application/json"),
        FaultKind::Oversized => {
            static CHUNK: [u8; 1 << 20] = [b' '; 1 << 20];
            let stream = futures::stream::repeat_with(|| {
                Ok::<axum::body::Bytes, std::io::Error>(axum::body::Bytes::from_static(&CHUNK))
            });
            let mut r = Response::new(Body::from_stream(stream));
            r.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
            r
        }
        FaultKind::Reset => {
            let stream = futures::stream::once(async {
                Err::<axum::body::Bytes, std::io::Error>(std::io::Error::new(
                    std::io::ErrorKind::ConnectionReset,
                    "injected reset",
                ))
            });
            let mut r = Response::new(Body::from_stream(stream));
            r.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
            r
        }
    })
}

fn get(s: &Shared, res: &Res, namespace: Option<&str>, name: &str, accept: &str) -> Response {
    let Some(stored) = s.store.get(res, namespace, name) else {
        return status(404, "NotFound", &format!("{}{} \"{name}\" not found", res.plural, group_suffix(res)), None);
    };
    // one object: its first media type decides (the client's GETs offer one)
    let dropping = *s.drop_managed_fields.lock().unwrap() == DropManagedFields::Honour
        && accept.split(',').next().and_then(drop_param).is_some_and(drops_managed_fields);
    if dropping {
        s.dropped_answers.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }
    if accept.contains("as=PartialObjectMetadata") && !accept.contains("as=PartialObjectMetadataList") {
        let mut metadata = stored.metadata();
        if dropping && let Some(m) = metadata.as_object_mut() {
            m.remove("managedFields");
        }
        let body = json!({"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": metadata});
        return json_response(body, METADATA_CONTENT_TYPE);
    }
    let mut o = stored.value();
    if dropping && let Some(m) = o["metadata"].as_object_mut() {
        m.remove("managedFields");
    }
    o["apiVersion"] = res.api_version().into();
    json_response(o, "application/json")
}

fn list(
    s: &Shared,
    res: &Res,
    namespace: Option<&str>,
    q: &[(String, String)],
    accept: &str,
    protobuf: bool,
) -> Response {
    let param = |k: &str| q.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
    let labels = param("labelSelector").unwrap_or("");
    let fields = match field_terms(param("fieldSelector").unwrap_or("")) {
        Ok(terms) => match terms.iter().find(|(f, _, _)| !selectable(res, f)) {
            Some((f, _, _)) => return status(400, "BadRequest", &format!("field label not supported: {f}"), None),
            None => terms,
        },
        Err(term) => return status(400, "BadRequest", &format!("invalid selector: '{term}'"), None),
    };
    // the resourceVersion the list is consistent with: read before the objects (a change in
    // between is then replayed by a watch from it, never lost)
    let rv = s.store.resource_version();
    // labels and fields other than the object's name and namespace are read from the object
    let by_metadata_only = fields.iter().all(|(f, _, _)| *f == "metadata.name" || *f == "metadata.namespace");
    let all: Vec<std::sync::Arc<store::Stored>> = s
        .store
        .stored_of(res, namespace)
        .into_iter()
        .filter(|o| {
            let named = fields.iter().all(|(f, v, eq)| {
                let is = if *f == "metadata.name" { &*o.name } else { &*o.namespace };
                (is == *v) == *eq
            });
            match (labels.is_empty(), by_metadata_only) {
                (true, true) => named,
                (false, true) => named && label_match(labels, &o.metadata()["labels"]),
                _ => {
                    let v = o.value();
                    label_match(labels, &v["metadata"]["labels"]) && field_match(&fields, &v)
                }
            }
        })
        .collect();
    let start: usize = match param("continue") {
        Some(c) => match c.strip_prefix("offset-").and_then(|n| n.parse().ok()) {
            Some(n) => n,
            None => return status(400, "BadRequest", "invalid continue token", None),
        },
        None => 0,
    };
    let mut limit = param("limit").and_then(|l| l.parse::<usize>().ok()).filter(|l| *l > 0).unwrap_or(usize::MAX);
    if s.max_page > 0 {
        limit = limit.min(s.max_page);
    }
    let page: Vec<&store::Stored> = all.iter().skip(start).take(limit).map(|o| &**o).collect();
    let next = start.saturating_add(page.len());
    let mut meta = Map::new();
    meta.insert("resourceVersion".into(), rv.to_string().into());
    if next < all.len() {
        meta.insert("continue".into(), format!("offset-{next}").into());
        meta.insert("remainingItemCount".into(), (all.len() - next).into());
    }
    let (answer, dropping) = negotiate(accept, protobuf, *s.drop_managed_fields.lock().unwrap());
    if dropping {
        s.dropped_answers.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }
    // each object parsed as far as the answer shows it, and only those of the page
    let metadata_of = |o: &store::Stored| {
        let mut m = o.metadata();
        if dropping && let Some(m) = m.as_object_mut() {
            m.remove("managedFields");
        }
        m
    };
    if answer == ListAs::ProtobufMetadata {
        use kubectl_gc::source::live::pb;
        let list = pb::PartialObjectMetadataList {
            metadata: Some(pb::ListMeta {
                resource_version: meta.get("resourceVersion").and_then(|v| v.as_str()).map(str::to_string),
                r#continue: meta.get("continue").and_then(|v| v.as_str()).map(str::to_string),
                remaining_item_count: meta.get("remainingItemCount").and_then(|v| v.as_i64()),
                ..Default::default()
            }),
            items: page
                .iter()
                .map(|o| pb::PartialObjectMetadata { metadata: Some(protobuf::object_meta(&metadata_of(o))) })
                .collect(),
        };
        let mut r = Response::new(Body::from(kubectl_gc::source::live::protobuf::encode_metadata_list(&list)));
        r.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static(PROTOBUF_METADATA_LIST_CONTENT_TYPE));
        s.protobuf_answers.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        return r;
    }
    if answer == ListAs::JsonMetadata {
        let items: Vec<Value> = page
            .iter()
            .map(|o| json!({"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": metadata_of(o)}))
            .collect();
        let body = json!({"kind": "PartialObjectMetadataList", "apiVersion": "meta.k8s.io/v1", "metadata": meta, "items": items});
        return json_response(body, METADATA_LIST_CONTENT_TYPE);
    }
    let items: Vec<Value> = page
        .iter()
        .map(|o| {
            let mut o = o.value();
            if dropping && let Some(m) = o["metadata"].as_object_mut() {
                m.remove("managedFields");
            }
            if res.group == "events.k8s.io" {
                o = store::as_events_v1(&o);
            }
            if res.builtin {
                // built-in list items carry no apiVersion/kind on the wire
                if let Some(m) = o.as_object_mut() {
                    m.remove("apiVersion");
                    m.remove("kind");
                }
            } else {
                o["apiVersion"] = res.api_version().into();
            }
            o
        })
        .collect();
    let body =
        json!({"kind": format!("{}List", res.kind), "apiVersion": res.api_version(), "metadata": meta, "items": items});
    json_response(body, "application/json")
}

/// `a=b`, `a==b`, `a!=b`, `a`, `!a`, comma-separated (set-based forms are not needed).
pub(crate) fn label_match(selector: &str, labels: &Value) -> bool {
    selector.split(',').map(str::trim).filter(|t| !t.is_empty()).all(|term| {
        let get = |k: &str| labels.get(k.trim()).and_then(|v| v.as_str());
        if let Some((k, v)) = term.split_once("!=") {
            get(k) != Some(v.trim())
        } else if let Some((k, v)) = term.split_once("==").or_else(|| term.split_once('=')) {
            get(k) == Some(v.trim())
        } else if let Some(k) = term.strip_prefix('!') {
            get(k).is_none()
        } else {
            get(term).is_some()
        }
    })
}

/// The terms of a field selector: (field, value, equal), or the first term that is not one.
pub(crate) fn field_terms(selector: &str) -> Result<Vec<(&str, &str, bool)>, &str> {
    selector
        .split(',')
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .map(|term| match term.split_once("!=") {
            Some((k, v)) => Ok((k.trim(), v.trim(), false)),
            None => match term.split_once("==").or_else(|| term.split_once('=')) {
                Some((k, v)) => Ok((k.trim(), v.trim(), true)),
                None => Err(term),
            },
        })
        .collect()
}

/// The fields a list may be selected by, as the API server registers them: `metadata.name`
/// and `metadata.namespace` for every resource; for core/v1 Events also `involvedObject.*`,
/// `reason`, `type`, `source`, `reportingComponent`; for events.k8s.io/v1 Events the same under
/// its own names (`regarding.*`, `reason`, `type`, `reportingController`). Any other field is
/// refused (400), as the API server refuses it.
pub(crate) fn selectable(res: &Res, field: &str) -> bool {
    const ABOUT: &[&str] = &["kind", "namespace", "name", "uid", "apiVersion", "resourceVersion", "fieldPath"];
    let about = |prefix: &str| field.strip_prefix(prefix).is_some_and(|f| ABOUT.contains(&f));
    match (res.group.as_str(), res.kind.as_str()) {
        _ if field == "metadata.name" || field == "metadata.namespace" => true,
        ("", "Event") => {
            about("involvedObject.") || ["reason", "type", "source", "reportingComponent"].contains(&field)
        }
        ("events.k8s.io", "Event") => about("regarding.") || ["reason", "type", "reportingController"].contains(&field),
        _ => false,
    }
}

/// A field's value in a stored object. Events are stored once for both APIs (as core/v1 or as
/// events.k8s.io/v1), so `involvedObject.*` and `regarding.*` read either form.
fn field_value<'a>(o: &'a Value, field: &str) -> Option<&'a str> {
    let about = |f: &str| o["involvedObject"][f].as_str().or_else(|| o["regarding"][f].as_str());
    if let Some(f) = field.strip_prefix("involvedObject.").or_else(|| field.strip_prefix("regarding.")) {
        return about(f);
    }
    match field {
        "metadata.name" => o["metadata"]["name"].as_str(),
        "metadata.namespace" => o["metadata"]["namespace"].as_str(),
        "source" => o["source"]["component"].as_str(),
        "reportingController" | "reportingComponent" => {
            o["reportingComponent"].as_str().or_else(|| o["reportingController"].as_str())
        }
        f => o[f].as_str(),
    }
}

pub(crate) fn field_match(terms: &[(&str, &str, bool)], o: &Value) -> bool {
    terms.iter().all(|(k, v, eq)| (field_value(o, k) == Some(*v)) == *eq)
}

fn group_suffix(r: &Res) -> String {
    if r.group.is_empty() { String::new() } else { format!(".{}", r.group) }
}

fn version_info(git_version: &str) -> Value {
    let minor = git_version.split('.').nth(1).unwrap_or("37");
    json!({"major": "1", "minor": minor, "gitVersion": git_version, "gitCommit": "0", "gitTreeState": "clean",
           "buildDate": "2026-11-29T00:00:00Z", "goVersion": "go1.26", "compiler": "gc", "platform": "linux/amd64"})
}

fn is_unavailable(s: &Shared, group: &str) -> bool {
    s.faults
        .lock()
        .unwrap()
        .iter()
        .any(|f| f.group.as_deref() == Some(group) && matches!(f.kind, FaultKind::Unavailable))
}

fn aggregated(s: &Shared, core: bool) -> Value {
    let items: Vec<Value> = s
        .store
        .groups
        .iter()
        .filter(|(g, _)| g.is_empty() == core)
        .map(|(g, versions)| {
            let stale = is_unavailable(s, g);
            let versions: Vec<Value> = versions
                .iter()
                .map(|v| {
                    let resources: Vec<Value> = s.store.resources_in(g, v).map(Res::aggregated_json).collect();
                    json!({"version": v, "resources": resources, "freshness": if stale { "Stale" } else { "Current" }})
                })
                .collect();
            let mut meta = json!({"creationTimestamp": null});
            if !g.is_empty() {
                meta["name"] = g.clone().into();
            }
            json!({"metadata": meta, "versions": versions})
        })
        .collect();
    let api_version = format!("apidiscovery.k8s.io/{}", s.aggregated_version);
    json!({"kind": "APIGroupDiscoveryList", "apiVersion": api_version, "metadata": {}, "items": items})
}

fn group_json(g: &str, versions: &[String]) -> Value {
    let vs: Vec<Value> = versions.iter().map(|v| json!({"groupVersion": format!("{g}/{v}"), "version": v})).collect();
    json!({"name": g, "versions": vs, "preferredVersion": vs.first().cloned().unwrap_or(Value::Null)})
}

fn group_list(s: &Shared) -> Value {
    let groups: Vec<Value> =
        s.store.groups.iter().filter(|(g, _)| !g.is_empty()).map(|(g, vs)| group_json(g, vs)).collect();
    json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": groups})
}

fn group_doc(s: &Shared, g: &str) -> Response {
    match s.store.groups.get(g) {
        Some(vs) if !g.is_empty() => {
            let mut v = group_json(g, vs);
            v["kind"] = "APIGroup".into();
            v["apiVersion"] = "v1".into();
            json_response(v, "application/json")
        }
        _ => status(404, "NotFound", "the server could not find the requested resource", None),
    }
}

pub(crate) fn json_response(v: Value, content_type: &'static str) -> Response {
    let mut r = Response::new(Body::from(serde_json::to_vec(&v).unwrap()));
    r.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    r
}

pub(crate) fn status(code: u16, reason: &str, message: &str, metadata: Option<Value>) -> Response {
    let body = json!({"kind": "Status", "apiVersion": "v1", "metadata": metadata.unwrap_or(json!({})), "status": "Failure",
                      "message": message, "reason": reason, "code": code});
    let mut r = json_response(body, "application/json").into_response();
    *r.status_mut() = StatusCode::from_u16(code).unwrap();
    r
}

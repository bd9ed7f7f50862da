//! The read-only HTTP layer: GET and nothing else. There is no call here that could write to
//! the cluster, by construction. Retries 429 and 5xx with a small budget (honouring
//! Retry-After), bounds every request by `--request-timeout`, and turns answers into
//! [`Failure`]s that callers record as partial input or report as errors.

use std::time::Duration;

use http_body_util::BodyExt;

use super::error::{Cause, Error, humantime};
use super::kubeconfig::flatten;

type Bytes = Vec<u8>;

/// Attempts per request (1 + retries) for 429 and 5xx answers.
const ATTEMPTS: u32 = 3;
/// Longest Retry-After honoured; a server asking for more gets a failure instead.
const MAX_RETRY_AFTER: Duration = Duration::from_secs(3);
/// The largest answer read: 512 MiB. A page of [`super::list::PAGE`] objects in full is tens of
/// MB (etcd caps one object at 1.5 MiB); past this a server is not sending a list.
pub const MAX_BODY: u64 = 512 * 1024 * 1024;
/// The run's memory budget for answers, all requests together (16 lists in flight each
/// holding [`MAX_BODY`] would be 8 GiB): 1 GiB. What is decoded from an answer is smaller
/// than the answer, so the run's memory stays within about twice this.
pub const MEMORY_BUDGET: u64 = 1024 * 1024 * 1024;
/// The most of an error answer to a WATCH that is read (its Status).
const MAX_ERROR_BODY: usize = 64 * 1024;
/// Echoed words of a server (a Status message, a decoding error) are cut to this many
/// characters.
pub const ECHO_CHARS: usize = 300;

/// The budget and what the run's answers hold of it, shared by a reader's clones.
#[derive(Debug)]
struct Budget {
    limit: u64,
    used: std::sync::atomic::AtomicU64,
}

impl Budget {
    /// Takes `n` bytes more, or says no (taking nothing).
    fn take(&self, n: u64) -> bool {
        use std::sync::atomic::Ordering::Relaxed;
        self.used.fetch_update(Relaxed, Relaxed, |u| u.checked_add(n).filter(|&t| t <= self.limit)).is_ok()
    }
    fn give_back(&self, n: u64) {
        self.used.fetch_sub(n, std::sync::atomic::Ordering::Relaxed);
    }
}

/// The part of the run's budget an answer holds: given back when dropped (an answer decoded
/// and thrown away, a list that failed or starts over), or [`Charge::keep`]t for the run when
/// what was decoded from it stays.
#[derive(Debug)]
pub struct Charge {
    budget: std::sync::Arc<Budget>,
    bytes: u64,
}

impl Charge {
    /// What was decoded from the answer stays for the run: so does its charge.
    pub fn keep(mut self) {
        self.bytes = 0;
    }
}

impl Drop for Charge {
    fn drop(&mut self) {
        if self.bytes > 0 {
            self.budget.give_back(self.bytes);
        }
    }
}

/// A read-only client: GET only.
#[derive(Clone)]
pub struct Reader {
    client: kube::Client,
    server: String,
    timeout: Option<Duration>,
    headers: Vec<(http::HeaderName, http::HeaderValue)>,
    max_body: u64,
    /// The run's memory budget for answers (see [`MEMORY_BUDGET`]).
    budget: std::sync::Arc<Budget>,
    /// What the server has shown of KEP-5958's opt-out, shared by the reader's clones.
    opt_out: std::sync::Arc<std::sync::atomic::AtomicU8>,
}

/// Whether the server honours `drop=metadata.managedFields`, as far as its answers showed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OptOut {
    /// No answer has shown it yet.
    Unknown = 0,
    /// An answer came without managedFields when asked to drop them.
    Honoured = 1,
    /// An answer came with managedFields despite the opt-out: the reader stops asking.
    Ignored = 2,
}

/// A successful answer.
pub struct Answer {
    /// The answer's `Content-Type` (JSON, protobuf, or JSON's aggregated-discovery variant).
    pub content_type: String,
    /// The body, read whole (at most [`Reader::max_body`] bytes).
    pub body: Bytes,
    /// Its part of the run's budget.
    pub charge: Charge,
}

/// Why one request did not succeed.
#[derive(Debug, Clone)]
pub enum Failure {
    /// The server answered with an error status.
    Status {
        /// The HTTP status code.
        code: u16,
        /// The `Status` object's `reason` (`Forbidden`, `NotFound`, …), the thing to match on.
        reason: String,
        /// The `Status` object's message, to quote.
        message: String,
    },
    /// No answer within `--request-timeout`.
    Timeout(Duration),
    /// The connection failed (refused, reset, TLS); `retriable` when it broke in a way a new
    /// attempt may not (reset, closed early), as told by the error's kind, not its wording.
    Transport {
        /// The underlying error.
        cause: Cause,
        /// Whether a new attempt may succeed.
        retriable: bool,
    },
    /// A 200 answer that could not be decoded.
    Decode(String),
    /// A 200 answer to a list that is not a list (`{}`, a Status): not taken as empty. The kind
    /// it said it was, if any.
    NotAList(String),
    /// A 200 answer that is a list, but not of what was asked (a PodList where ConfigMaps were
    /// asked, or an item of another kind): never used as the asked-for list.
    WrongList {
        /// What came, as `Kind (apiVersion)`, from the server's words (cut when printed).
        got: String,
        /// The kind asked for, as `Kind (apiVersion)`.
        asked: String,
    },
    /// Paging that would not end.
    Paging(Paging),
    /// An answer larger than the reader accepts ([`Reader::max_body`]), in bytes.
    TooLarge(u64),
    /// An answer that would take the run's answers past its memory budget, in bytes.
    OverBudget(u64),
}

/// Why a paged list was given up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Paging {
    /// The server sent a continue token it had sent before.
    RepeatedToken,
    /// More pages than this.
    TooManyPages(usize),
    /// This many pages in a row held no object, each with a continue token.
    EmptyPages(usize),
    /// Still paging after the list's time limit ([`super::list::time_limit`]).
    TooLong {
        /// The pages read by then.
        pages: usize,
        /// The limit.
        limit: Duration,
    },
}

impl Failure {
    /// The HTTP status code, for [`Failure::Status`].
    pub fn code(&self) -> Option<u16> {
        match self {
            Failure::Status { code, .. } => Some(*code),
            _ => None,
        }
    }

    /// One short phrase for `incomplete` lines.
    pub fn describe(&self) -> String {
        match self {
            Failure::Status { code: 403, .. } => "forbidden (403)".into(),
            Failure::Status { code, reason, message } => {
                let msg = if message.is_empty() { reason.clone() } else { message.clone() };
                let msg: String = msg.lines().next().unwrap_or("").chars().take(ECHO_CHARS).collect();
                if msg.is_empty() {
                    format!("the server answered {code}")
                } else {
                    format!("the server answered {code}: {msg}")
                }
            }
            Failure::Timeout(d) => format!("no answer within {}", humantime(*d)),
            Failure::Transport { cause, .. } => format!("connection failed: {cause}"),
            Failure::Decode(m) => {
                let m: String = m.lines().next().unwrap_or("").chars().take(ECHO_CHARS).collect();
                format!("unreadable answer: {m}")
            }
            Failure::NotAList(kind) if kind.is_empty() => "the answer is not a list".into(),
            Failure::NotAList(kind) => {
                let kind: String = kind.chars().take(60).collect();
                format!("the answer is a {kind}, not a list")
            }
            Failure::WrongList { got, asked } => {
                let got: String = got.chars().take(120).collect();
                format!("the answer is a {got}, asked for {asked}: not used")
            }
            Failure::Paging(Paging::RepeatedToken) => {
                "the server sent a continue token again (the list would never end)".into()
            }
            Failure::Paging(Paging::TooManyPages(n)) => format!("more than {n} pages (the list would never end)"),
            Failure::Paging(Paging::EmptyPages(n)) => {
                format!("{n} pages in a row held no object and asked for more (the list would never end)")
            }
            Failure::Paging(Paging::TooLong { pages, limit }) => {
                format!("given up after {pages} pages: the list did not end within {}", humantime(*limit))
            }
            Failure::TooLarge(n) => format!("the answer is larger than {} MiB; not read", n / (1024 * 1024)),
            Failure::OverBudget(n) => {
                format!("the run's answers would pass its memory budget of {} MiB; not read", n / (1024 * 1024))
            }
        }
    }

    /// The same failure as an error of the whole run.
    pub fn into_error(self, server: &str, path: &str) -> Error {
        let (server, path) = (server.to_string(), path.to_string());
        match self {
            Failure::Status { code, reason, message } => {
                let message =
                    if message.is_empty() { format!("{code} {reason}") } else { format!("{message} ({code})") };
                Error::Api { server, path, code, message }
            }
            Failure::Timeout(timeout) => Error::Timeout { server, path, timeout },
            Failure::Transport { cause, .. } => Error::Unreachable { server, source: cause },
            f @ (Failure::Decode(_)
            | Failure::NotAList(_)
            | Failure::WrongList { .. }
            | Failure::Paging(_)
            | Failure::TooLarge(_)
            | Failure::OverBudget(_)) => Error::Decode { server, path, source: Cause::plain(f.describe()) },
        }
    }
}

impl Reader {
    /// `--request-timeout`, if one bounds each request.
    pub fn request_timeout(&self) -> Option<Duration> {
        self.timeout
    }

    /// A reader whose every request also carries `headers`.
    pub fn new(
        config: kube::Config,
        timeout: Option<Duration>,
        headers: Vec<(http::HeaderName, http::HeaderValue)>,
    ) -> Result<Reader, Error> {
        // what errors print and the cache directory is named after: never `user:password@`
        let server = super::kubeconfig::without_userinfo(config.cluster_url.to_string().trim_end_matches('/'));
        let client = kube::Client::try_from(config).map_err(|e| {
            let shown = super::kubeconfig::redacted(&e);
            Error::Client(Cause::new(e, shown))
        })?;
        let mut headers = headers;
        headers.push((http::header::USER_AGENT, user_agent()));
        let budget = std::sync::Arc::new(Budget { limit: MEMORY_BUDGET, used: Default::default() });
        Ok(Reader { client, server, timeout, headers, max_body: MAX_BODY, budget, opt_out: Default::default() })
    }

    /// The same reader with a memory budget of `bytes` for the run's answers instead of
    /// [`MEMORY_BUDGET`] (a smaller machine).
    pub fn memory_budget(mut self, bytes: u64) -> Reader {
        self.budget = std::sync::Arc::new(Budget { limit: bytes, used: Default::default() });
        self
    }

    /// The run's memory budget for answers, in bytes.
    pub fn budget(&self) -> u64 {
        self.budget.limit
    }

    /// What the server's answers showed of the managedFields opt-out so far.
    pub fn opt_out(&self) -> OptOut {
        match self.opt_out.load(std::sync::atomic::Ordering::Relaxed) {
            1 => OptOut::Honoured,
            2 => OptOut::Ignored,
            _ => OptOut::Unknown,
        }
    }

    /// Records what an answer showed; "ignored" is final (one server behind a load balancer
    /// may honour it while another does not: then protobuf is the safer bet).
    pub fn learn_opt_out(&self, o: OptOut) {
        use std::sync::atomic::Ordering::Relaxed;
        let _ = self.opt_out.fetch_update(Relaxed, Relaxed, |cur| (cur != OptOut::Ignored as u8).then_some(o as u8));
    }

    /// The same reader, refusing answers larger than `bytes`.
    pub fn max_body(mut self, bytes: u64) -> Reader {
        self.max_body = bytes;
        self
    }

    /// `bytes` of the run's memory budget, for what a watch keeps of an event (given back when
    /// the charge is dropped), or [`Failure::OverBudget`].
    pub fn charge(&self, bytes: u64) -> Result<Charge, Failure> {
        if !self.budget.take(bytes) {
            return Err(Failure::OverBudget(self.budget.limit));
        }
        Ok(Charge { budget: self.budget.clone(), bytes })
    }

    /// The server URL, as the errors name it.
    pub fn server(&self) -> &str {
        &self.server
    }

    /// GET `path` (with its query) asking for `accept`.
    pub async fn get(&self, path: &str, accept: &str) -> Result<Answer, Failure> {
        let mut attempt = 1;
        loop {
            let once = self.get_once(path, accept);
            let result = match self.timeout {
                Some(t) => tokio::time::timeout(t, once).await.unwrap_or(Err((Failure::Timeout(t), None))),
                None => once.await,
            };
            match result {
                Ok(a) => return Ok(a),
                Err((f, retry_after)) => {
                    let retriable = match &f {
                        Failure::Status { code, .. } => *code == 429 || (500..=504).contains(code) && *code != 501,
                        Failure::Transport { retriable, .. } => *retriable,
                        _ => false,
                    };
                    if !retriable || attempt >= ATTEMPTS {
                        return Err(f);
                    }
                    let wait = match retry_after {
                        Some(d) if d > MAX_RETRY_AFTER => return Err(f),
                        Some(d) => d,
                        None => backoff(attempt),
                    };
                    tokio::time::sleep(wait).await;
                    attempt += 1;
                }
            }
        }
    }

    /// GET `path` as a stream (a WATCH): the answer's head within `--request-timeout`, then
    /// its body as it comes, for as long as the server sends it. Not retried: a watch resumes
    /// from where it was instead. An error status is a [`Failure::Status`].
    pub async fn stream(&self, path: &str, accept: &str) -> Result<kube::client::Body, Failure> {
        let mut req = http::Request::get(path).header(http::header::ACCEPT, accept);
        for (name, value) in &self.headers {
            req = req.header(name, value);
        }
        let req = req.body(kube::client::Body::from(Vec::new())).map_err(|e| {
            let shown = e.to_string();
            Failure::Transport { cause: Cause::new(e, shown), retriable: false }
        })?;
        let sent = self.client.send(req);
        let resp = match self.timeout {
            Some(t) => tokio::time::timeout(t, sent).await.map_err(|_| Failure::Timeout(t))?,
            None => sent.await,
        }
        .map_err(transport)?;
        let status = resp.status();
        if status.is_success() {
            return Ok(resp.into_body());
        }
        // an error's Status is small: what a server sends past that is not read (a 1 GB error
        // body would otherwise be held whole)
        let mut body = Vec::new();
        let mut stream = resp.into_body();
        while let Some(Ok(frame)) = stream.frame().await {
            if let Ok(data) = frame.into_data() {
                body.extend_from_slice(&data[..data.len().min(MAX_ERROR_BODY - body.len())]);
                if body.len() >= MAX_ERROR_BODY {
                    break;
                }
            }
        }
        let (reason, message) = match serde_json::from_slice::<StatusBody>(&body) {
            Ok(s) => (s.reason, s.message),
            Err(_) => (status.canonical_reason().unwrap_or("").to_string(), String::new()),
        };
        Err(Failure::Status { code: status.as_u16(), reason, message })
    }

    async fn get_once(&self, path: &str, accept: &str) -> Result<Answer, (Failure, Option<Duration>)> {
        let mut req = http::Request::get(path).header(http::header::ACCEPT, accept);
        for (name, value) in &self.headers {
            req = req.header(name, value);
        }
        let req = req.body(kube::client::Body::from(Vec::new())).map_err(|e| {
            let shown = e.to_string();
            (Failure::Transport { cause: Cause::new(e, shown), retriable: false }, None)
        })?;
        let resp = self.client.send(req).await.map_err(|e| (transport(e), None))?;
        let status = resp.status();
        let header =
            |n: http::header::HeaderName| resp.headers().get(n).and_then(|v| v.to_str().ok()).map(str::to_string);
        let content_type = header(http::header::CONTENT_TYPE).unwrap_or_default();
        let retry_after =
            header(http::header::RETRY_AFTER).and_then(|s| s.trim().parse::<u64>().ok()).map(Duration::from_secs);
        let declared = header(http::header::CONTENT_LENGTH).and_then(|s| s.trim().parse::<u64>().ok());
        if declared.is_some_and(|n| n > self.max_body) {
            return Err((Failure::TooLarge(self.max_body), None));
        }
        // read at most `max_body` bytes, whatever the header said (or without one), each taken
        // from the run's budget as it comes (given back if the answer is not kept)
        // The frames are kept as they come and joined once at the end: a body grown by
        // doubling would hold up to twice its bytes, and leave the smaller copies behind.
        let mut charge = Charge { budget: self.budget.clone(), bytes: 0 };
        let mut frames = Vec::new();
        let mut stream = resp.into_body();
        while let Some(frame) = stream.frame().await {
            let frame = frame.map_err(|e| (transport(e), None))?;
            if let Ok(data) = frame.into_data() {
                if charge.bytes + data.len() as u64 > self.max_body {
                    return Err((Failure::TooLarge(self.max_body), None));
                }
                if !self.budget.take(data.len() as u64) {
                    return Err((Failure::OverBudget(self.budget.limit), None));
                }
                charge.bytes += data.len() as u64;
                frames.push(data);
            }
        }
        let mut body = Vec::with_capacity(usize::try_from(charge.bytes).unwrap_or(usize::MAX));
        for f in frames {
            body.extend_from_slice(&f);
        }
        if status.is_success() {
            return Ok(Answer { content_type, body, charge });
        }
        let (reason, message) = match serde_json::from_slice::<StatusBody>(&body) {
            Ok(s) => (s.reason, s.message),
            Err(_) => {
                (status.canonical_reason().unwrap_or("").to_string(), String::from_utf8_lossy(&body).trim().to_string())
            }
        };
        Err((Failure::Status { code: status.as_u16(), reason, message }, retry_after))
    }
}

/// What kubectl plugins send, as kubectl does: `kubectl-gc/<version> (<os>/<arch>)`, with Go's
/// names for the platform (`linux/amd64`).
pub fn user_agent() -> http::HeaderValue {
    let arch = match std::env::consts::ARCH {
        "x86_64" => "amd64",
        "aarch64" => "arm64",
        "x86" => "386",
        other => other,
    };
    let ua = format!("kubectl-gc/{} ({}/{arch})", env!("CARGO_PKG_VERSION"), std::env::consts::OS);
    http::HeaderValue::from_str(&ua).expect("a version and platform names are header-safe")
}

#[derive(serde::Deserialize)]
struct StatusBody {
    #[serde(default)]
    reason: String,
    #[serde(default)]
    message: String,
}

/// Waits between attempts: 200 ms, then 400 ms, each with up to half again of random jitter
/// (so that the plugin's concurrent lists do not retry in step).
pub(crate) fn backoff(attempt: u32) -> Duration {
    use std::hash::{BuildHasher, Hasher};
    let base = 100u64 << attempt;
    // a random number without a crate: the std hasher's per-process random keys
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u32(attempt);
    Duration::from_millis(base + h.finish() % (base / 2 + 1))
}

/// A transport failure: its innermost message, and whether it is retriable by the kind of the
/// error (an I/O reset, abort, broken pipe or early end; a connection hyper saw closed or a
/// message cut short), never by its wording.
fn transport(e: kube::Error) -> Failure {
    let mut retriable = false;
    let mut cur: Option<&(dyn std::error::Error + 'static)> = Some(&e);
    while let Some(x) = cur {
        if let Some(io) = x.downcast_ref::<std::io::Error>() {
            use std::io::ErrorKind::*;
            retriable |= matches!(io.kind(), ConnectionReset | ConnectionAborted | BrokenPipe | UnexpectedEof);
        }
        if let Some(h) = x.downcast_ref::<hyper::Error>() {
            retriable |= h.is_incomplete_message() || h.is_closed() || h.is_canceled();
        }
        cur = x.source();
    }
    let shown = transport_message(&e);
    Failure::Transport { cause: Cause::new(e, shown), retriable }
}

/// The innermost cause of a transport error, which says what actually happened
/// ("Connection refused (os error 111)"), rather than kube's and hyper's wrappers.
fn transport_message(e: &kube::Error) -> String {
    if matches!(e, kube::Error::Auth(_)) {
        // an exec plugin run to refresh a token: its output is never quoted
        return super::kubeconfig::redacted(e);
    }
    let mut last = e.to_string();
    let mut cur: Option<&dyn std::error::Error> = std::error::Error::source(e);
    while let Some(s) = cur {
        last = s.to_string();
        cur = s.source();
    }
    if last.is_empty() { flatten(e) } else { last }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_with_at_most_half_again_of_jitter() {
        for _ in 0..100 {
            let (a, b) = (backoff(1).as_millis(), backoff(2).as_millis());
            assert!((200..=300).contains(&a) && (400..=600).contains(&b), "{a} {b}");
        }
    }
}

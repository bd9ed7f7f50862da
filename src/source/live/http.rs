//! The read-only HTTP layer: GET and nothing else. There is no call here that could write to
//! the cluster, by construction. Retries 429 and 5xx with a small budget (honouring
//! Retry-After), bounds every request by `--request-timeout`, and turns answers into
//! [`Failure`]s that callers record as partial input or report as errors.

use std::time::Duration;

use http_body_util::BodyExt;

use super::error::{Error, humantime};
use super::kubeconfig::flatten;

type Bytes = Vec<u8>;

/// Attempts per request (1 + retries) for 429 and 5xx answers.
const ATTEMPTS: u32 = 3;
/// Longest Retry-After honoured; a server asking for more gets a failure instead.
const MAX_RETRY_AFTER: Duration = Duration::from_secs(3);

/// A read-only client: GET only.
#[derive(Clone)]
pub struct Reader {
    client: kube::Client,
    server: String,
    timeout: Option<Duration>,
    headers: Vec<(http::HeaderName, http::HeaderValue)>,
}

/// A successful answer.
pub struct Answer {
    pub content_type: String,
    pub body: Bytes,
}

/// Why one request did not succeed.
#[derive(Debug, Clone)]
pub enum Failure {
    /// The server answered with an error status.
    Status { code: u16, reason: String, message: String },
    /// No answer within `--request-timeout`.
    Timeout(Duration),
    /// The connection failed (refused, reset, TLS).
    Transport(String),
}

impl Failure {
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
                let msg: String = msg.lines().next().unwrap_or("").chars().take(160).collect();
                if msg.is_empty() {
                    format!("the server answered {code}")
                } else {
                    format!("the server answered {code}: {msg}")
                }
            }
            Failure::Timeout(d) => format!("no answer within {}", humantime(*d)),
            Failure::Transport(m) => format!("connection failed: {m}"),
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
            Failure::Transport(message) => Error::Unreachable { server, message },
        }
    }
}

impl Reader {
    /// A reader whose every request also carries `headers`.
    pub fn new(
        config: kube::Config,
        timeout: Option<Duration>,
        headers: Vec<(http::HeaderName, http::HeaderValue)>,
    ) -> Result<Reader, Error> {
        // what errors print and the cache directory is named after: never `user:password@`
        let server = super::kubeconfig::without_userinfo(config.cluster_url.to_string().trim_end_matches('/'));
        let client = kube::Client::try_from(config).map_err(|e| Error::Config(super::kubeconfig::redacted(&e)))?;
        Ok(Reader { client, server, timeout, headers })
    }

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
                        Failure::Transport(m) => {
                            m.contains("reset") || m.contains("closed") || m.contains("incomplete")
                        }
                        Failure::Timeout(_) => false,
                    };
                    if !retriable || attempt >= ATTEMPTS {
                        return Err(f);
                    }
                    let wait = match retry_after {
                        Some(d) if d > MAX_RETRY_AFTER => return Err(f),
                        Some(d) => d,
                        None => Duration::from_millis(100 << attempt),
                    };
                    tokio::time::sleep(wait).await;
                    attempt += 1;
                }
            }
        }
    }

    async fn get_once(&self, path: &str, accept: &str) -> Result<Answer, (Failure, Option<Duration>)> {
        let mut req = http::Request::get(path).header(http::header::ACCEPT, accept);
        for (name, value) in &self.headers {
            req = req.header(name, value);
        }
        let req =
            req.body(kube::client::Body::from(Vec::new())).map_err(|e| (Failure::Transport(e.to_string()), None))?;
        let resp = self.client.send(req).await.map_err(|e| (Failure::Transport(transport_message(&e)), None))?;
        let status = resp.status();
        let header =
            |n: http::header::HeaderName| resp.headers().get(n).and_then(|v| v.to_str().ok()).map(str::to_string);
        let content_type = header(http::header::CONTENT_TYPE).unwrap_or_default();
        let retry_after =
            header(http::header::RETRY_AFTER).and_then(|s| s.trim().parse::<u64>().ok()).map(Duration::from_secs);
        let body = resp
            .into_body()
            .collect()
            .await
            .map_err(|e| (Failure::Transport(transport_message(&e)), None))?
            .to_bytes()
            .to_vec();
        if status.is_success() {
            return Ok(Answer { content_type, body });
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

#[derive(serde::Deserialize)]
struct StatusBody {
    #[serde(default)]
    reason: String,
    #[serde(default)]
    message: String,
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

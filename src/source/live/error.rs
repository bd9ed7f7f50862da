//! Why the live path could not answer at all (partial failures are data: `Snapshot.incomplete`).

use std::path::PathBuf;
use std::time::Duration;

/// A failure of the live path as a whole: nothing to answer. Each variant names what was
/// looked for and where.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("no kubeconfig found ({looked}): set KUBECONFIG, pass --kubeconfig, or give --server")]
    /// No kubeconfig file exists where kubectl would look.
    NoKubeconfig {
        /// The places looked at, in words.
        looked: String,
    },
    #[error("cannot read kubeconfig {}", path.display())]
    /// A kubeconfig exists but cannot be read or parsed.
    Kubeconfig {
        /// The file that failed.
        path: PathBuf,
        /// What went wrong reading or parsing it.
        #[source]
        source: Cause,
    },
    #[error("context \"{0}\" does not exist in the kubeconfig")]
    /// `--context` (or `current-context`) names a context the kubeconfig lacks.
    UnknownContext(String),
    #[error("the kubeconfig has no current context: pass --context, or --server")]
    /// The kubeconfig sets no `current-context` and none was given.
    NoContext,
    /// Settings this plugin refuses (`--as-group` without `--as`, a context without a server).
    #[error("invalid connection settings: {0}")]
    Config(String),
    /// Settings the client library refused.
    #[error("invalid connection settings")]
    Client(#[source] Cause),
    #[error("cannot reach the API server at {server}")]
    /// No connection to the server (refused, DNS, TLS, proxy): nothing could be read.
    Unreachable {
        /// The server URL.
        server: String,
        /// The transport failure.
        #[source]
        source: Cause,
    },
    #[error("the API server at {server} did not answer {path} within {}", humantime(*.timeout))]
    /// A request got no complete answer in time (after its retries).
    Timeout {
        /// The server URL.
        server: String,
        /// The request path.
        path: String,
        /// The per-request timeout that expired.
        timeout: Duration,
    },
    #[error("the API server at {server} refused {path}: {message}")]
    /// The server answered with an error status for a read the answer cannot do without.
    Api {
        /// The server URL.
        server: String,
        /// The request path.
        path: String,
        /// The HTTP status code.
        code: u16,
        /// The `Status` message from the server, quoted.
        message: String,
    },
    #[error("the API server at {server} sent an unreadable answer to {path}")]
    /// The server answered 2xx, but the body could not be decoded.
    Decode {
        /// The server URL.
        server: String,
        /// The request path.
        path: String,
        /// The decoder's error.
        #[source]
        source: Cause,
    },
}

/// The cause of an [`Error`]: the underlying error itself (for code: [`Cause::error`]), shown
/// as one phrase — what actually happened (`Connection refused (os error 111)`), not the
/// wrappers kube and hyper put around it. It ends the chain, so `error: {e:#}` stays one line.
#[derive(Debug, Clone)]
pub struct Cause {
    shown: String,
    error: Option<std::sync::Arc<dyn std::error::Error + Send + Sync>>,
}

impl Cause {
    /// An error, shown as `shown`.
    pub fn new(error: impl std::error::Error + Send + Sync + 'static, shown: String) -> Cause {
        Cause { shown, error: Some(std::sync::Arc::new(error)) }
    }

    /// A cause this plugin found itself (no underlying error).
    pub fn plain(shown: impl Into<String>) -> Cause {
        Cause { shown: shown.into(), error: None }
    }

    /// The underlying error, if there is one.
    pub fn error(&self) -> Option<&(dyn std::error::Error + Send + Sync + 'static)> {
        self.error.as_deref()
    }
}

impl std::fmt::Display for Cause {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.shown)
    }
}

impl std::error::Error for Cause {}

pub(crate) fn humantime(d: Duration) -> String {
    if d.subsec_millis() == 0 { format!("{}s", d.as_secs()) } else { format!("{}ms", d.as_millis()) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn causes_are_sources_and_the_line_reads_as_before() {
        let io = std::io::Error::new(std::io::ErrorKind::ConnectionRefused, "Connection refused (os error 111)");
        let e = Error::Unreachable {
            server: "https://127.0.0.1:9".into(),
            source: Cause::new(io, "Connection refused (os error 111)".into()),
        };
        let cause = std::error::Error::source(&e).expect("the cause is the source");
        let io = cause.downcast_ref::<Cause>().and_then(Cause::error).and_then(|e| e.downcast_ref::<std::io::Error>());
        assert_eq!(io.map(|e| e.kind()), Some(std::io::ErrorKind::ConnectionRefused));
        assert_eq!(
            format!("{:#}", anyhow::Error::from(e)),
            "cannot reach the API server at https://127.0.0.1:9: Connection refused (os error 111)"
        );
    }
}

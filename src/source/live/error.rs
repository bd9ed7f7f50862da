//! Why the live path could not answer at all (partial failures are data: `Snapshot.incomplete`).

use std::path::PathBuf;
use std::time::Duration;

/// A failure of the live path as a whole: nothing to answer. Each variant names what was
/// looked for and where.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("no kubeconfig found ({looked}): set KUBECONFIG, pass --kubeconfig, or give --server")]
    NoKubeconfig { looked: String },
    #[error("cannot read kubeconfig {}: {message}", path.display())]
    Kubeconfig { path: PathBuf, message: String },
    #[error("context \"{0}\" does not exist in the kubeconfig")]
    UnknownContext(String),
    #[error("the kubeconfig has no current context: pass --context, or --server")]
    NoContext,
    #[error("invalid connection settings: {0}")]
    Config(String),
    #[error("cannot reach the API server at {server}: {message}")]
    Unreachable { server: String, message: String },
    #[error("the API server at {server} did not answer {path} within {}", humantime(*.timeout))]
    Timeout { server: String, path: String, timeout: Duration },
    #[error("the API server at {server} refused {path}: {message}")]
    Api { server: String, path: String, code: u16, message: String },
    #[error("the API server at {server} sent an unreadable answer to {path}: {message}")]
    Decode { server: String, path: String, message: String },
}

pub(crate) fn humantime(d: Duration) -> String {
    if d.subsec_millis() == 0 { format!("{}s", d.as_secs()) } else { format!("{}ms", d.as_millis()) }
}

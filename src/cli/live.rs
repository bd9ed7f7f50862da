//! CLI glue for the live path: flags and environment → `source::live`, the scope an answer
//! needs, the progress line, and the context's namespace for `-n`'s default.

use std::io::{IsTerminal, Write};
use std::sync::OnceLock;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use k8s_openapi::jiff::{SignedDuration, Timestamp};

use kubectl_gc::discovery::RestMapper;
use kubectl_gc::reads::{self, Scope};
use kubectl_gc::snapshot::Snapshot;
use kubectl_gc::source::live::{self, ConnectOptions, Progress, ReadOptions};

use super::args::{Connection, Global, Target};

static CONTEXT_NAMESPACE: OnceLock<String> = OnceLock::new();
static KUBECONFIG_READ: OnceLock<Option<std::path::PathBuf>> = OnceLock::new();

/// The kubeconfig context's namespace, once the live path has loaded it.
pub fn context_namespace() -> Option<String> {
    CONTEXT_NAMESPACE.get().cloned()
}

/// The kubeconfig file the live path read its context through, when not the default path
/// (see `kubeconfig::Loaded::kubeconfig`); `None` before a live read, or when there was none.
pub fn kubeconfig_read() -> Option<std::path::PathBuf> {
    KUBECONFIG_READ.get().cloned().flatten()
}

/// Reads what an answer about `target` needs (or, without a target, the `-n`/`-A` scope of
/// `kubectl gc snapshot`) from the cluster. `dependents_anywhere`: the answer follows
/// dependents (`tree`, `plan`), and the GC links a dependent to its owner by uid from any
/// namespace, so every namespace is listed (metadata-only), as offline sees them.
/// `why_stuck`: the answer is why-stuck's, judged with these options: its webhooks and the
/// Events of the objects it names are read too.
pub fn read(
    global: &Global,
    target: Option<&Target>,
    dependents_anywhere: bool,
    why_stuck: Option<kubectl_gc::diagnose::Options>,
) -> Result<Snapshot> {
    let opts = connect_options(&global.connection)?;
    let now = Timestamp::now();
    // the time the answer is judged at, as `load` decides it: which objects it names may depend on it
    let judged_at = match &global.now {
        Some(s) => s.parse::<Timestamp>().with_context(|| format!("--now {s:?} is not an RFC 3339 time"))?,
        None => now,
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    rt.block_on(async {
        let session = live::connect(&opts).await?;
        let _ = CONTEXT_NAMESPACE.set(session.default_namespace.clone());
        let _ = KUBECONFIG_READ.set(session.kubeconfig.clone());
        let concurrency = global.connection.concurrency.max(1);
        let cache_dir = cache_dir(&global.connection);
        let unix = now.as_second();
        let mut discovery = session.discover_cached(concurrency, cache_dir.as_deref(), unix, false).await?;
        let namespace = global.namespace.clone().unwrap_or_else(|| session.default_namespace.clone());
        let mut focus = None;
        let mut target_ref = None;
        let scope = match (global.all_namespaces, target.and_then(split_target)) {
            (true, None) => Scope::Cluster,
            (false, None) => Scope::Namespace(namespace),
            (_, Some((type_arg, name))) => {
                let mapper = |d: &live::Discovery| {
                    RestMapper::from_snapshot(&Snapshot { resource_lists: d.lists.clone(), ..Default::default() })
                };
                let mut resolved = mapper(&discovery).resolve(type_arg).cloned();
                if resolved.is_err() && discovery.from_cache {
                    // a type the cached discovery does not know: ask the server
                    discovery = session.discover_cached(concurrency, cache_dir.as_deref(), unix, true).await?;
                    resolved = mapper(&discovery).resolve(type_arg).cloned();
                }
                let rt = resolved.map_err(|e| {
                    let failed: Vec<String> = discovery.incomplete.iter().map(|g| g.to_string()).collect();
                    unresolved(e, &failed)
                })?;
                let ns = rt.namespaced.then_some(namespace);
                if let Some(t) = discovery.find(&rt.group, &rt.kind)
                    && session.exists(t, ns.as_deref(), name).await? == Some(false)
                {
                    match &ns {
                        Some(ns) => bail!("{} \"{name}\" not found in namespace \"{ns}\"", rt.qualified_plural()),
                        None => bail!("{} \"{name}\" not found", rt.qualified_plural()),
                    }
                }
                target_ref = Some(reads::TargetRef {
                    group: rt.group.clone(),
                    kind: rt.kind.clone(),
                    namespace: ns.clone(),
                    name: name.to_string(),
                });
                focus =
                    ns.clone().or_else(|| (rt.group.is_empty() && rt.kind == "Namespace").then(|| name.to_string()));
                match ns {
                    _ if dependents_anywhere || global.all_namespaces => Scope::Cluster,
                    Some(ns) => Scope::Namespace(ns),
                    None if rt.group.is_empty() && rt.kind == "Namespace" => Scope::Namespace(name.to_string()),
                    // a cluster-scoped owner's dependents may be in any namespace
                    None => Scope::Cluster,
                }
            }
        };
        let tty = std::io::stderr().is_terminal();
        let progress = |p: Progress| {
            let _ = write!(std::io::stderr().lock(), "\rreading {}/{} lists…", p.done, p.total);
        };
        // a capture (`kubectl gc snapshot`) keeps every body; an answer reads bodies where it needs them
        let why_stuck = why_stuck.map(|options| reads::WhyStuck { now: judged_at, options });
        let wants = reads::Wants { scope, capture: target.is_none(), focus, target: target_ref, why_stuck };
        let options =
            ReadOptions { concurrency, now, progress: tty.then_some(&progress as &(dyn Fn(Progress) + Sync)) };
        let mut snapshot = session.read(&discovery, &options, &mut reads::Plan::new(wants.clone())).await;
        if discovery.from_cache && live::cache::is_stale_for(&discovery, &snapshot) {
            // the cluster may serve types the cached discovery lacks: rediscover, and read again
            // if discovery did change (a CRD's labels changing changes nothing served)
            let fresh = session.discover_cached(concurrency, cache_dir.as_deref(), unix, true).await?;
            let changed = fresh.types != discovery.types
                || fresh.lists != discovery.lists
                || fresh.incomplete != discovery.incomplete;
            discovery = fresh;
            if changed {
                snapshot = session.read(&discovery, &options, &mut reads::Plan::new(wants.clone())).await;
            }
        }
        if !discovery.from_cache {
            // what the cache is later checked against
            session.record_crds(cache_dir.as_deref(), unix, &snapshot);
        }
        if tty {
            let _ = write!(std::io::stderr().lock(), "\r\x1b[2K");
        }
        snapshot.context = session.context.clone();
        Ok(snapshot)
    })
}

/// A TYPE that discovery did not find: when some API groups could not be discovered, it may
/// be theirs, and the error says so rather than "the server doesn't have a resource type".
pub(super) fn unresolved(e: kubectl_gc::discovery::ResolveError, failed: &[String]) -> anyhow::Error {
    match (&e, failed) {
        (kubectl_gc::discovery::ResolveError::Unknown(arg), [first, rest @ ..]) => anyhow::anyhow!(
            "resource type \"{arg}\" is not among the API groups that could be discovered; {}{}",
            first,
            if rest.is_empty() { String::new() } else { format!(" (and {} more failing group(s))", rest.len()) }
        ),
        _ => e.into(),
    }
}

/// `--cache-dir`, else `KUBECACHEDIR` (clap reads it), else `~/.kube/cache`.
fn cache_dir(c: &Connection) -> Option<std::path::PathBuf> {
    c.cache_dir
        .clone()
        .or_else(|| std::env::var_os("HOME").map(|h| std::path::Path::new(&h).join(".kube").join("cache")))
}

/// `TYPE/NAME` or `TYPE NAME`; `None` when malformed (the resolver reports it).
fn split_target(t: &Target) -> Option<(&str, &str)> {
    let (ty, name) = match (t.what.split_once('/'), &t.name) {
        (Some((ty, name)), None) => (ty, name),
        (None, Some(name)) => (t.what.as_str(), name.as_str()),
        _ => return None,
    };
    (!ty.is_empty() && !name.is_empty()).then_some((ty, name))
}

fn connect_options(c: &Connection) -> Result<ConnectOptions> {
    let env = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
    Ok(ConnectOptions {
        kubeconfig: c.kubeconfig.clone(),
        kubeconfig_env: std::env::var_os("KUBECONFIG"),
        home: std::env::var_os("HOME").map(Into::into),
        context: c.context.clone(),
        cluster: c.cluster.clone(),
        user: c.user.clone(),
        server: c.server.clone(),
        token: c.token.clone(),
        as_user: c.as_user.clone(),
        as_groups: c.as_group.clone(),
        as_uid: c.as_uid.clone(),
        as_user_extra: c
            .as_user_extra
            .iter()
            .map(|kv| match kv.split_once('=') {
                Some((k, v)) if !k.is_empty() => Ok((k.to_string(), v.to_string())),
                _ => Err(anyhow::anyhow!("--as-user-extra takes KEY=VALUE, not \"{kv}\"")),
            })
            .collect::<Result<_>>()?,
        client_certificate: c.client_certificate.clone(),
        client_key: c.client_key.clone(),
        disable_compression: c.disable_compression,
        request_timeout: match &c.request_timeout {
            Some(s) => request_timeout(s)?,
            None => None,
        },
        insecure_skip_tls_verify: c.insecure_skip_tls_verify,
        certificate_authority: c.certificate_authority.clone(),
        tls_server_name: c.tls_server_name.clone(),
        no_proxy: env("NO_PROXY").or_else(|| env("no_proxy")),
        memory_budget: match env("KUBECTL_GC_MEMORY_BUDGET") {
            Some(mib) => Some(
                mib.trim()
                    .parse::<u64>()
                    .ok()
                    .filter(|&m| m > 0)
                    .and_then(|m| m.checked_mul(1024 * 1024))
                    .with_context(|| format!("KUBECTL_GC_MEMORY_BUDGET={mib:?} is not a size in MiB"))?,
            ),
            None => None,
        },
    })
}

/// kubectl's `--request-timeout`: "0" is no limit, a bare number is seconds, else a
/// duration such as "30s", "1m", "500ms".
fn request_timeout(s: &str) -> Result<Option<Duration>> {
    let s = s.trim();
    if let Ok(n) = s.parse::<u64>() {
        return Ok((n > 0).then(|| Duration::from_secs(n)));
    }
    let d: SignedDuration = s
        .parse()
        .with_context(|| format!("--request-timeout {s:?} is not a duration (use e.g. 30s, 1m, 500ms, or 0)"))?;
    if d.is_negative() {
        bail!("--request-timeout {s:?} is negative");
    }
    Ok((!d.is_zero()).then(|| d.unsigned_abs()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_timeouts_parse_like_kubectl() {
        assert_eq!(request_timeout("0").unwrap(), None);
        assert_eq!(request_timeout("5").unwrap(), Some(Duration::from_secs(5)));
        assert_eq!(request_timeout("30s").unwrap(), Some(Duration::from_secs(30)));
        assert_eq!(request_timeout("1m").unwrap(), Some(Duration::from_secs(60)));
        assert_eq!(request_timeout("500ms").unwrap(), Some(Duration::from_millis(500)));
        assert!(request_timeout("soon").is_err());
    }
}

//! CLI glue for the live path: flags and environment → `source::live`, the scope an answer
//! needs, and the progress line. [`Live`] is an open connection (runtime, session, discovery)
//! that reads once ([`read`]) or again and again (`--watch`).

use std::io::{IsTerminal, Write};

use anyhow::{Context, Result, bail};
use k8s_openapi::jiff::Timestamp;

use kubectl_gc::discovery::RestMapper;
use kubectl_gc::reads::{self, Scope, TargetRef, Wants};
use kubectl_gc::snapshot::Snapshot;
use kubectl_gc::source::live::{self, ConnectOptions, Progress, ReadOptions};

use super::args::Connection;
use super::invocation::{Invocation, Namespace, NamespaceFrom, ObjectArg};
use super::request::{LiveRead, Request};

/// An open connection: the async runtime, the session and the discovery it reads with.
pub struct Live {
    /// The runtime every request runs on.
    pub rt: tokio::runtime::Runtime,
    /// The client and the context's namespace.
    pub session: live::Session,
    /// The served types (cached, or fresh from the server).
    pub discovery: live::Discovery,
    /// Requests in flight at once.
    pub concurrency: usize,
    cache_dir: Option<std::path::PathBuf>,
    /// The clock when the connection was opened (the capture time of its reads).
    pub opened_at: Timestamp,
    /// The time answers are judged at, as `load` decides it (`--now`, else the clock).
    pub judged_at: Timestamp,
}

/// Reads what `request` needs from the cluster (or, without a target, the `-n`/`-A` scope of
/// `kubectl gc snapshot`): see [`Live::wants`].
pub fn read(inv: &Invocation, request: &Request) -> Result<LiveRead> {
    let mut live = Live::open(inv)?;
    let (wants, target) = live.wants(inv, request)?;
    let mut snapshot = live.read(&wants)?;
    if request.version.wanted(wants.target.as_ref(), &snapshot) {
        match live.rt.block_on(live.session.server_version()) {
            Ok(v) => snapshot.server_version = Some(v),
            Err(why) => snapshot.warnings.push(format!("the server's version could not be read: {why}")),
        }
    }
    let Live { session, .. } = live;
    Ok(LiveRead { snapshot, target, context_namespace: session.default_namespace, kubeconfig: session.kubeconfig })
}

impl Live {
    /// Connects (kubeconfig and flags) and discovers the served types (from the cache when fresh).
    pub fn open(inv: &Invocation) -> Result<Live> {
        let opts = connect_options(&inv.connection)?;
        let now = Timestamp::now();
        let judged_at = inv.clock.judged_at(Some(now));
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .context("starting the async runtime")?;
        let concurrency = inv.connection.concurrency.max(1);
        let cache_dir = cache_dir(&inv.connection);
        let (session, discovery) = rt.block_on(async {
            let session = live::connect(&opts).await?;
            let discovery = session.discover_cached(concurrency, cache_dir.as_deref(), now.as_second(), false).await?;
            anyhow::Ok((session, discovery))
        })?;
        Ok(Live { rt, session, discovery, concurrency, cache_dir, opened_at: now, judged_at })
    }

    /// The namespace `-n` stands for, this session's context's when not given.
    pub fn namespace(&self, inv: &Invocation) -> Namespace {
        inv.namespace(Some((&self.session.default_namespace, NamespaceFrom::Context)))
    }

    /// What an answer about the request's target needs (or, without one, the `-n`/`-A` scope
    /// of a capture), and the target as discovery resolves it. `dependents_anywhere`: the
    /// answer follows dependents (`tree`, `plan`), and the GC links a dependent to its owner by
    /// uid from any namespace, so every namespace is listed (metadata-only), as offline sees
    /// them. `why_stuck`: the answer is why-stuck's, judged with these options: its webhooks
    /// and the Events of the objects it names are read too. A target that is not there is an
    /// error here, before anything else is read.
    pub fn wants(&mut self, inv: &Invocation, request: &Request) -> Result<(Wants, Option<TargetRef>)> {
        let namespace = self.namespace(inv).name;
        let unix = self.opened_at.as_second();
        let mut focus = None;
        let mut target_ref = None;
        let scope = match (inv.all_namespaces, &request.target) {
            (true, None) => Scope::Cluster,
            (false, None) => Scope::Namespace(namespace),
            (_, Some(ObjectArg { type_arg, name })) => {
                let mapper = |d: &live::Discovery| {
                    RestMapper::from_snapshot(&Snapshot { resource_lists: d.lists.clone(), ..Default::default() })
                };
                let mut resolved = mapper(&self.discovery).resolve(type_arg).cloned();
                if resolved.is_err() && self.discovery.from_cache {
                    // a type the cached discovery does not know: ask the server
                    self.discovery = self.rt.block_on(self.session.discover_cached(
                        self.concurrency,
                        self.cache_dir.as_deref(),
                        unix,
                        true,
                    ))?;
                    resolved = mapper(&self.discovery).resolve(type_arg).cloned();
                }
                let rt = resolved.map_err(|e| {
                    let failed: Vec<String> = self.discovery.incomplete.iter().map(|g| g.to_string()).collect();
                    unresolved(e, &failed)
                })?;
                let ns = rt.namespaced.then_some(namespace);
                if let Some(t) = self.discovery.find(&rt.group, &rt.kind)
                    && self.rt.block_on(self.session.exists(t, ns.as_deref(), name))? == Some(false)
                {
                    match &ns {
                        Some(ns) => bail!("{} \"{name}\" not found in namespace \"{ns}\"", rt.qualified_plural()),
                        None => bail!("{} \"{name}\" not found", rt.qualified_plural()),
                    }
                }
                target_ref = Some(TargetRef {
                    group: rt.group.clone(),
                    kind: rt.kind.clone(),
                    namespace: ns.clone(),
                    name: name.to_string(),
                });
                focus =
                    ns.clone().or_else(|| (rt.group.is_empty() && rt.kind == "Namespace").then(|| name.to_string()));
                match ns {
                    _ if request.dependents_anywhere || inv.all_namespaces => Scope::Cluster,
                    Some(ns) => Scope::Namespace(ns),
                    None if rt.group.is_empty() && rt.kind == "Namespace" => Scope::Namespace(name.to_string()),
                    // a cluster-scoped owner's dependents may be in any namespace
                    None => Scope::Cluster,
                }
            }
        };
        // a capture (`kubectl gc snapshot`) keeps every body; an answer (`why-stuck --all`
        // included) reads bodies where it needs them
        let why_stuck = request.why_stuck.map(|options| reads::WhyStuck { now: self.judged_at, options });
        // (a capture is what records the server's version: `VersionRead::Record`)
        let capture = request.target.is_none() && request.version == reads::VersionRead::Record;
        Ok((
            Wants { scope, capture, focus, target: target_ref.clone(), why_stuck, admission: request.admission },
            target_ref,
        ))
    }

    /// Reads what `wants` asks for, with a progress line on a terminal; rediscovers (and
    /// reads again) when the cached discovery proves stale.
    pub fn read(&mut self, wants: &Wants) -> Result<Snapshot> {
        let unix = self.opened_at.as_second();
        let tty = std::io::stderr().is_terminal();
        let progress = |p: Progress| {
            let _ = write!(std::io::stderr().lock(), "\rreading {}/{} lists…", p.done, p.total);
        };
        let options = ReadOptions {
            concurrency: self.concurrency,
            now: self.opened_at,
            progress: tty.then_some(&progress as &(dyn Fn(Progress) + Sync)),
        };
        let session = &self.session;
        let mut snapshot =
            self.rt.block_on(session.read(&self.discovery, &options, &mut reads::Plan::new(wants.clone())));
        if self.discovery.from_cache && live::cache::is_stale_for(&self.discovery, &snapshot) {
            // the cluster may serve types the cached discovery lacks: rediscover, and read again
            // if discovery did change (a CRD's labels changing changes nothing served)
            let fresh =
                self.rt.block_on(session.discover_cached(self.concurrency, self.cache_dir.as_deref(), unix, true))?;
            let changed = fresh.types != self.discovery.types
                || fresh.lists != self.discovery.lists
                || fresh.incomplete != self.discovery.incomplete;
            self.discovery = fresh;
            if changed {
                snapshot =
                    self.rt.block_on(session.read(&self.discovery, &options, &mut reads::Plan::new(wants.clone())));
            }
        }
        if !self.discovery.from_cache {
            // what the cache is later checked against
            session.record_crds(self.cache_dir.as_deref(), unix, &snapshot);
        }
        if tty {
            let _ = write!(std::io::stderr().lock(), "\r\x1b[2K");
        }
        snapshot.context = session.context.clone();
        snapshot.namespace = Some(session.default_namespace.clone());
        snapshot.server = Some(session.server.clone());
        Ok(snapshot)
    }
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
        request_timeout: c.request_timeout.and_then(|d| d.limit()),
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

//! kubectl's connection flags and kubeconfig rules → a `kube::Config`: `--kubeconfig`, else
//! every file of `KUBECONFIG` merged, else `~/.kube/config`; `--context`, `--cluster`,
//! `--user`; `-s/--server` (also without any kubeconfig), `--token`, impersonation, TLS
//! settings, `--request-timeout`; NO_PROXY applied to the cluster host (kube applies it to the
//! proxy's), and kube's default retries switched off.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

use kube::config::{
    AuthInfo, Cluster, Context, KubeConfigOptions, Kubeconfig, KubeconfigError, NamedAuthInfo, NamedCluster,
    NamedContext,
};

use super::error::{Cause, Error};

/// How to reach the cluster: kubectl's flags plus the environment the CLI read for us.
#[derive(Clone, Debug, Default)]
pub struct ConnectOptions {
    /// `--kubeconfig`: one file, used alone (as kubectl, it replaces `KUBECONFIG`).
    pub kubeconfig: Option<PathBuf>,
    /// The value of `KUBECONFIG` (several paths, merged; missing files skipped as kubectl does).
    pub kubeconfig_env: Option<OsString>,
    /// `$HOME`, for `~/.kube/config`.
    pub home: Option<PathBuf>,
    /// `--context`: the kubeconfig context to use instead of `current-context`.
    pub context: Option<String>,
    /// `--cluster`: overrides the context's cluster.
    pub cluster: Option<String>,
    /// `--user`: overrides the context's user (`AuthInfo`).
    pub user: Option<String>,
    /// `-s/--server`: the API server URL; works without any kubeconfig.
    pub server: Option<String>,
    /// `--token`: a bearer token, replacing the user's credentials.
    pub token: Option<String>,
    /// `--as`: the user to impersonate (`Impersonate-User`).
    pub as_user: Option<String>,
    /// `--as-group`, repeatable (`Impersonate-Group`); requires `--as`.
    pub as_groups: Vec<String>,
    /// `--as-uid` (`Impersonate-Uid`).
    pub as_uid: Option<String>,
    /// `--as-user-extra KEY=VALUE`, in order (a key may repeat).
    pub as_user_extra: Vec<(String, String)>,
    /// `--client-certificate`: a PEM file for TLS client authentication.
    pub client_certificate: Option<PathBuf>,
    /// `--client-key`: the PEM key of `--client-certificate`.
    pub client_key: Option<PathBuf>,
    /// `--disable-compression`: ask for uncompressed answers (`Accept-Encoding: identity`).
    pub disable_compression: bool,
    /// Per request; `None` = no limit (kubectl's "0").
    pub request_timeout: Option<Duration>,
    /// `--insecure-skip-tls-verify`: do not check the server's certificate.
    pub insecure_skip_tls_verify: bool,
    /// `--certificate-authority`: a PEM file of CAs to trust for the server.
    pub certificate_authority: Option<PathBuf>,
    /// `--tls-server-name`: the name to check the server's certificate against (SNI).
    pub tls_server_name: Option<String>,
    /// The value of `NO_PROXY`/`no_proxy`.
    pub no_proxy: Option<String>,
    /// The run's memory budget for answers, in bytes (`KUBECTL_GC_MEMORY_BUDGET`, in MiB);
    /// `None`: [`super::http::MEMORY_BUDGET`].
    pub memory_budget: Option<u64>,
}

const FLAGS: &str = "kubectl-gc-flags";

/// The loaded configuration and the context's namespace.
pub struct Loaded {
    /// The client configuration, with kube's retries off and the flags applied.
    pub config: kube::Config,
    /// The context's namespace, else `default`: what `-n` defaults to, as in kubectl.
    pub default_namespace: String,
    /// The kubeconfig context the connection resolved to (`None` when only flags such as
    /// `--server` describe it): printed commands name it, so they act on this cluster.
    pub context: Option<String>,
    /// The kubeconfig file the context was read through, when it is not the default
    /// `~/.kube/config`: `--kubeconfig`, else the first file of `KUBECONFIG` that defines the
    /// context (absolute). Printed commands name it, so a shell whose `KUBECONFIG` names
    /// another file with a context of the same name cannot take them elsewhere.
    pub kubeconfig: Option<PathBuf>,
    /// The API server URL the context (and flags) resolve to, without any userinfo: a
    /// snapshot records it, so that offline commands name the cluster (`--server=`).
    pub server: String,
    /// Headers every request carries besides kube's own: `Impersonate-Extra-*` (kube reads
    /// a kubeconfig's extras but does not send them) and `Accept-Encoding: identity` for
    /// `--disable-compression`.
    pub headers: Vec<(http::HeaderName, http::HeaderValue)>,
}

/// Resolves the flags and kubeconfig files as kubectl does, into the client's configuration.
pub async fn load(o: &ConnectOptions) -> Result<Loaded, Error> {
    if !o.as_groups.is_empty() && o.as_user.is_none() {
        return Err(Error::Config("--as-group requires --as".into()));
    }
    if !o.as_user_extra.is_empty() && o.as_user.is_none() {
        return Err(Error::Config("--as-user-extra requires --as".into()));
    }
    for path in [&o.client_certificate, &o.client_key].into_iter().flatten() {
        if let Err(e) = std::fs::metadata(path) {
            return Err(Error::Config(format!("{}: {e}", path.display())));
        }
    }
    let (mut kc, files) = match read_kubeconfig(o)? {
        Some(read) => read,
        None if o.server.is_some() => (Kubeconfig::default(), Vec::new()),
        None => return Err(Error::NoKubeconfig { looked: looked(o) }),
    };
    let context = match o.context.clone().or_else(|| kc.current_context.clone()) {
        Some(c) => c,
        None if o.server.is_some() => {
            kc.contexts.push(NamedContext {
                name: FLAGS.into(),
                context: Some(Context { cluster: FLAGS.into(), ..Default::default() }),
                ..Default::default()
            });
            FLAGS.into()
        }
        None => return Err(Error::NoContext),
    };
    let ctx = kc
        .contexts
        .iter()
        .find(|c| c.name == context)
        .and_then(|c| c.context.clone())
        .ok_or_else(|| Error::UnknownContext(context.clone()))?;
    let cluster_name = o.cluster.clone().unwrap_or_else(|| ctx.cluster.clone());
    let user_name = o.user.clone().or_else(|| ctx.user.clone());

    // Cluster flags edit the cluster the context resolves to (creating it for --server).
    cluster_flags(&mut kc, &cluster_name, o)?;

    // User flags edit the user the context resolves to (creating one when there is none).
    let user_name = user_flags(&mut kc, user_name, o);

    if let Some(name) = &user_name {
        settle_token(&mut kc, name, o.token.is_some())?;
    }
    let options = KubeConfigOptions { context: Some(context.clone()), cluster: Some(cluster_name), user: user_name };
    let mut config = kube::Config::from_custom_kubeconfig(kc, &options).await.map_err(|e| match e {
        KubeconfigError::LoadContext(c) => Error::UnknownContext(c),
        KubeconfigError::MissingClusterUrl => {
            Error::Config(format!("context \"{context}\" names a cluster without a server"))
        }
        other => {
            let shown = redacted(&other);
            Error::Client(Cause::new(other, shown))
        }
    })?;
    config.default_retry = false;
    // `--request-timeout` bounds each whole request (see `http::Reader`); kube's own
    // read_timeout would only bound each socket read, and report it as a transport error.
    config.read_timeout = None;
    if o.request_timeout.is_some() {
        config.connect_timeout = o.request_timeout;
    }
    if let Some(host) = config.cluster_url.host()
        && bypasses_proxy(host, o.no_proxy.as_deref())
    {
        config.proxy_url = None;
    }
    let default_namespace = config.default_namespace.clone();
    let headers = extra_headers(o)?;
    let kubeconfig = (context != FLAGS).then(|| defining_file(&files, &context, o.home.as_deref())).flatten();
    let context = (context != FLAGS).then_some(context);
    let server = without_userinfo(config.cluster_url.to_string().trim_end_matches('/'));
    Ok(Loaded { config, default_namespace, context, kubeconfig, server, headers })
}

/// `--server`, `--certificate-authority`, `--insecure-skip-tls-verify` and `--tls-server-name`
/// applied to the cluster the context resolves to, as kubectl's flags override it.
fn cluster_flags(kc: &mut Kubeconfig, cluster_name: &str, o: &ConnectOptions) -> Result<(), Error> {
    if !kc.clusters.iter().any(|c| c.name == *cluster_name) {
        if o.server.is_none() {
            return Err(Error::Config(format!("cluster \"{cluster_name}\" does not exist in the kubeconfig")));
        }
        kc.clusters.push(NamedCluster {
            name: cluster_name.to_string(),
            cluster: Some(Cluster::default()),
            other: Default::default(),
        });
    }
    let named = kc.clusters.iter_mut().find(|c| c.name == *cluster_name).expect("cluster entry ensured above");
    let cluster = named.cluster.get_or_insert_with(Cluster::default);
    if let Some(s) = &o.server {
        cluster.server = Some(s.clone());
    }
    if let Some(ca) = &o.certificate_authority {
        cluster.certificate_authority = Some(ca.display().to_string());
        cluster.certificate_authority_data = None;
    }
    if o.insecure_skip_tls_verify {
        cluster.insecure_skip_tls_verify = Some(true);
        cluster.certificate_authority = None;
        cluster.certificate_authority_data = None;
    }
    if let Some(n) = &o.tls_server_name {
        cluster.tls_server_name = Some(n.clone());
    }
    Ok(())
}

/// `--token`, `--as`, `--as-group`, `--as-uid`, `--client-certificate` and `--client-key`
/// applied to the user the context resolves to; the user's name afterwards.
fn user_flags(kc: &mut Kubeconfig, mut user_name: Option<String>, o: &ConnectOptions) -> Option<String> {
    let wants_user_edit = o.token.is_some()
        || o.as_user.is_some()
        || o.as_uid.is_some()
        || o.client_certificate.is_some()
        || o.client_key.is_some();
    if wants_user_edit || user_name.is_none() {
        let name = user_name.clone().unwrap_or_else(|| FLAGS.to_string());
        if !kc.auth_infos.iter().any(|a| a.name == name) {
            kc.auth_infos.push(NamedAuthInfo {
                name: name.clone(),
                auth_info: Some(AuthInfo::default()),
                ..Default::default()
            });
        }
        let a = kc.auth_infos.iter_mut().find(|a| a.name == name).expect("user entry ensured above");
        let auth = a.auth_info.get_or_insert_with(AuthInfo::default);
        if let Some(t) = &o.token {
            *auth = AuthInfo {
                token: Some(t.clone().into()),
                impersonate: auth.impersonate.take(),
                impersonate_groups: auth.impersonate_groups.take(),
                impersonate_uid: auth.impersonate_uid.take(),
                ..Default::default()
            };
        }
        if let Some(u) = &o.as_user {
            auth.impersonate = Some(u.clone());
            auth.impersonate_groups = (!o.as_groups.is_empty()).then(|| o.as_groups.clone());
        }
        if let Some(u) = &o.as_uid {
            auth.impersonate_uid = Some(u.clone());
        }
        if let Some(p) = &o.client_certificate {
            auth.client_certificate = Some(p.display().to_string());
            auth.client_certificate_data = None;
        }
        if let Some(p) = &o.client_key {
            auth.client_key = Some(p.display().to_string());
            auth.client_key_data = None;
        }
        user_name = Some(name);
    }
    user_name
}

/// The headers kubectl adds from flags: `--as-user-extra`, `--disable-compression`.
fn extra_headers(o: &ConnectOptions) -> Result<Vec<(http::HeaderName, http::HeaderValue)>, Error> {
    let mut headers = Vec::new();
    for (key, value) in &o.as_user_extra {
        let name = http::HeaderName::from_bytes(format!("impersonate-extra-{}", escape_extra_key(key)).as_bytes())
            .map_err(|e| Error::Config(format!("--as-user-extra {key}: {e}")))?;
        let value =
            http::HeaderValue::from_str(value).map_err(|e| Error::Config(format!("--as-user-extra {key}: {e}")))?;
        headers.push((name, value));
    }
    if o.disable_compression {
        headers.push((http::header::ACCEPT_ENCODING, http::HeaderValue::from_static("identity")));
    }
    Ok(headers)
}

/// An extra's key as client-go writes it into a header name: characters a header name cannot
/// hold are percent-encoded (the API server decodes them).
fn escape_extra_key(key: &str) -> String {
    let mut out = String::new();
    for b in key.bytes() {
        let legal = b.is_ascii_alphanumeric() || b"!#$&'*+-.^_`|~".contains(&b);
        if legal && b != b'%' {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// A kubeconfig file read, and the contexts it defines.
struct File {
    path: PathBuf,
    contexts: Vec<String>,
}

impl File {
    fn of(path: &Path, kc: &Kubeconfig) -> File {
        File { path: path.to_path_buf(), contexts: kc.contexts.iter().map(|c| c.name.clone()).collect() }
    }
}

/// The kubeconfig kubectl would read (the files merged, in order), or `None` when there is
/// none at all.
fn read_kubeconfig(o: &ConnectOptions) -> Result<Option<(Kubeconfig, Vec<File>)>, Error> {
    let read = |p: &PathBuf| Kubeconfig::read_from(p).map_err(|e| kubeconfig_error(p, e));
    if let Some(p) = &o.kubeconfig {
        if !p.exists() {
            return Err(Error::Kubeconfig { path: p.clone(), source: Cause::plain("no such file") });
        }
        let kc = read(p)?;
        let file = File::of(p, &kc);
        return Ok(Some((kc, vec![file])));
    }
    if let Some(env) = o.kubeconfig_env.as_ref().filter(|v| !v.is_empty()) {
        let mut merged: Option<Kubeconfig> = None;
        let mut files = Vec::new();
        for p in std::env::split_paths(env).filter(|p| !p.as_os_str().is_empty() && p.exists()) {
            let kc = read(&p)?;
            files.push(File::of(&p, &kc));
            merged = Some(match merged {
                Some(m) => m.merge(kc).map_err(|e| kubeconfig_error(&p, e))?,
                None => kc,
            });
        }
        return Ok(merged.map(|m| (m, files)));
    }
    match &o.home {
        Some(h) => {
            let p = h.join(".kube").join("config");
            if p.exists() {
                let kc = read(&p)?;
                let file = File::of(&p, &kc);
                Ok(Some((kc, vec![file])))
            } else {
                Ok(None)
            }
        }
        None => Ok(None),
    }
}

/// The file a printed command must name for `context` to mean what it meant here: the first
/// file that defines it (kubectl's merge keeps the first definition), made absolute so the
/// command works from any directory; `None` for the default `~/.kube/config`, which kubectl
/// reads without being told.
fn defining_file(files: &[File], context: &str, home: Option<&Path>) -> Option<PathBuf> {
    let file = files.iter().find(|f| f.contexts.iter().any(|c| c == context))?;
    let path = std::path::absolute(&file.path).unwrap_or_else(|_| file.path.clone());
    let default = home.map(|h| h.join(".kube").join("config"));
    let is_default = default.is_some_and(|d| std::path::absolute(&d).unwrap_or(d) == path);
    (!is_default).then_some(path)
}

fn looked(o: &ConnectOptions) -> String {
    match (&o.kubeconfig_env, &o.home) {
        (Some(v), _) if !v.is_empty() => format!("KUBECONFIG={} names no existing file", v.to_string_lossy()),
        (_, Some(h)) => format!("{} does not exist", h.join(".kube").join("config").display()),
        _ => "KUBECONFIG and HOME are not set".into(),
    }
}

/// Like Go's net/http (`httpproxy`): loopback never goes through a proxy; a NO_PROXY entry is
/// `*` (everything), a CIDR block (`10.0.0.0/8`, `fd00::/8`) holding the host's IP, an IP
/// (`10.0.0.1`, `::1`, `[::1]:6443`), or a domain (with an optional port) matching the host
/// itself or as a suffix.
pub fn bypasses_proxy(host: &str, no_proxy: Option<&str>) -> bool {
    use std::net::IpAddr;
    let host = host.trim_start_matches('[').trim_end_matches(']').to_ascii_lowercase();
    let ip = host.parse::<IpAddr>().ok();
    let loopback = host == "localhost" || host.ends_with(".localhost") || ip.is_some_and(|ip| ip.is_loopback());
    if loopback {
        return true;
    }
    no_proxy.unwrap_or("").split(',').map(|e| e.trim().to_ascii_lowercase()).filter(|e| !e.is_empty()).any(|e| {
        if e == "*" {
            return true;
        }
        if let Some((net, bits)) = e.split_once('/') {
            return match (ip, net.parse::<IpAddr>(), bits.parse::<u32>()) {
                (Some(ip), Ok(net), Ok(bits)) => in_cidr(ip, net, bits),
                _ => false,
            };
        }
        // an IP with or without a port: `::1`, `[::1]`, `[::1]:6443`, `10.0.0.1:6443`
        let bare = match e.strip_prefix('[') {
            Some(rest) => rest.split(']').next().unwrap_or(rest),
            None if e.parse::<IpAddr>().is_ok() => e.as_str(),
            None => e.rsplit_once(':').map_or(e.as_str(), |(h, _)| h),
        };
        if let Ok(entry) = bare.parse::<IpAddr>() {
            return ip == Some(entry);
        }
        let domain = bare.trim_start_matches("*.").trim_start_matches('.');
        host == domain || host.ends_with(&format!(".{domain}"))
    })
}

/// The bearer token of the user the run authenticates as, made safe to send: a token file is
/// read and trimmed as client-go's `fileTokenSource` does (`strings.TrimSpace`; empty is an
/// error), and a token with a character an HTTP header cannot carry (a `token: |` block's
/// newline, a control character) is one error here, not a panic in the HTTP layer. The token
/// itself is never quoted.
fn settle_token(kc: &mut Kubeconfig, user: &str, from_flag: bool) -> Result<(), Error> {
    let Some(auth) = kc.auth_infos.iter_mut().find(|a| a.name == user).and_then(|a| a.auth_info.as_mut()) else {
        return Ok(());
    };
    let source = if from_flag { "--token".to_string() } else { format!("the token of user \"{user}\"") };
    if auth.username.is_some() && auth.password.is_some() {
        return Ok(()); // basic auth comes first (kube's order, client-go's too)
    }
    if let Some(t) = &auth.token {
        use secrecy::ExposeSecret;
        return check_token(t.expose_secret(), &source);
    }
    if let Some(path) = auth.token_file.clone() {
        let text =
            std::fs::read_to_string(&path).map_err(|e| Error::Config(format!("cannot read token file {path}: {e}")))?;
        let token = text.trim();
        if token.is_empty() {
            return Err(Error::Config(format!("read empty token from file {path}")));
        }
        check_token(token, &format!("the token in {path}"))?;
        auth.token = Some(token.to_string().into());
        auth.token_file = None;
    }
    Ok(())
}

fn check_token(token: &str, source: &str) -> Result<(), Error> {
    if http::HeaderValue::from_str(&format!("Bearer {token}")).is_err() {
        let hint = if token.ends_with('\n') { " (it ends in a line break)" } else { "" };
        return Err(Error::Config(format!(
            "{source} holds a character an HTTP header cannot carry (a control character or line break){hint}"
        )));
    }
    Ok(())
}

/// A configuration error, its causes on one line, with nothing of what the kubeconfig or an
/// exec plugin holds: a YAML error says where (line and column), not the lines around it
/// (serde-saphyr quotes them, tokens included); a failing exec plugin's output and a
/// malformed ExecCredential are not quoted (they may hold credentials).
pub(crate) fn redacted(e: &(dyn std::error::Error + 'static)) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut cur: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(err) = cur {
        if let Some(safe) = safe_summary(err) {
            parts.push(safe);
            break;
        }
        let msg = err.to_string();
        let next = err.source().map(|s| s.to_string());
        // the part of this message that is not its cause's (thiserror often repeats it)
        let own = match &next {
            Some(n) if !n.is_empty() && msg.ends_with(n.as_str()) => {
                msg[..msg.len() - n.len()].trim_end().trim_end_matches(':').to_string()
            }
            _ => msg.lines().next().unwrap_or("").to_string(),
        };
        if !own.is_empty() && !parts.iter().any(|p| p.contains(&own)) {
            parts.push(own);
        }
        cur = err.source();
    }
    parts.join(": ")
}

/// What may be said of the errors that carry kubeconfig or plugin content.
fn safe_summary(e: &(dyn std::error::Error + 'static)) -> Option<String> {
    use kube::client::AuthError;
    let yaml = |y: &serde_saphyr::Error| match y.location() {
        Some(l) => format!("not valid YAML at line {} column {} (the text is not shown)", l.line(), l.column()),
        None => "not valid YAML (the text is not shown)".to_string(),
    };
    if let Some(k) = e.downcast_ref::<KubeconfigError>() {
        return match k {
            KubeconfigError::Parse(y) => Some(format!("failed to parse kubeconfig YAML: {}", yaml(y))),
            _ => None,
        };
    }
    if let Some(kube::Error::Auth(a)) = e.downcast_ref::<kube::Error>() {
        return safe_summary(a).map(|s| format!("auth error: {s}"));
    }
    if let Some(a) = e.downcast_ref::<AuthError>() {
        return match a {
            AuthError::AuthExecRun { out, .. } => Some(format!(
                "the exec credential plugin failed ({}); its output is not shown, as it may hold credentials: run the plugin by hand to see why",
                out.status
            )),
            AuthError::AuthExecParse(_) => Some(
                "the exec credential plugin's output is not a valid ExecCredential (not shown: it may hold credentials)"
                    .to_string(),
            ),
            _ => None,
        };
    }
    e.downcast_ref::<serde_saphyr::Error>().map(yaml)
}

/// A server URL as it may be printed: without `user:password@`.
pub fn without_userinfo(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else { return url.to_string() };
    let authority_end = rest.find('/').unwrap_or(rest.len());
    match rest[..authority_end].rfind('@') {
        Some(at) => format!("{scheme}://{}", &rest[at + 1..]),
        None => url.to_string(),
    }
}

/// Whether `ip` is in the block `net/bits` (of the same family).
fn in_cidr(ip: std::net::IpAddr, net: std::net::IpAddr, bits: u32) -> bool {
    use std::net::IpAddr::{V4, V6};
    match (ip, net) {
        (V4(ip), V4(net)) if bits <= 32 => {
            let mask = u32::MAX.checked_shl(32 - bits).unwrap_or(0);
            u32::from(ip) & mask == u32::from(net) & mask
        }
        (V6(ip), V6(net)) if bits <= 128 => {
            let mask = u128::MAX.checked_shl(128 - bits).unwrap_or(0);
            u128::from(ip) & mask == u128::from(net) & mask
        }
        _ => false,
    }
}

fn kubeconfig_error(path: &Path, e: kube::config::KubeconfigError) -> Error {
    let shown = redacted(&e);
    Error::Kubeconfig { path: path.to_path_buf(), source: Cause::new(e, shown) }
}

/// An error and its causes on one line.
pub(crate) fn flatten(e: &dyn std::error::Error) -> String {
    let mut msg = e.to_string();
    let mut cur = e.source();
    while let Some(s) = cur {
        let s_msg = s.to_string();
        if !msg.contains(&s_msg) {
            msg.push_str(": ");
            msg.push_str(&s_msg);
        }
        cur = s.source();
    }
    msg
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_file_named_is_the_first_that_defines_the_context() {
        let file = |p: &str, cs: &[&str]| File { path: p.into(), contexts: cs.iter().map(|c| c.to_string()).collect() };
        let files = [file("/k/a.yaml", &["dev"]), file("/k/b.yaml", &["prod"]), file("/k/c.yaml", &["prod"])];
        assert_eq!(defining_file(&files, "prod", None), Some(PathBuf::from("/k/b.yaml")));
        assert_eq!(defining_file(&files, "dev", Some(Path::new("/h"))), Some(PathBuf::from("/k/a.yaml")));
        assert_eq!(defining_file(&files, "none", None), None);
        let home = [file("/h/.kube/config", &["prod"])];
        assert_eq!(defining_file(&home, "prod", Some(Path::new("/h"))), None, "the default path goes unsaid");
        let relative = defining_file(&[file("a.yaml", &["x"])], "x", None).unwrap();
        assert!(relative.is_absolute() && relative.ends_with("a.yaml"), "{}", relative.display());
    }

    #[test]
    fn userinfo_is_dropped_from_printed_urls() {
        assert_eq!(without_userinfo("https://admin:hunter2@10.0.0.1:6443/x"), "https://10.0.0.1:6443/x");
        assert_eq!(without_userinfo("https://a@b@h"), "https://h");
        assert_eq!(without_userinfo("https://h/p@q"), "https://h/p@q");
        assert_eq!(without_userinfo("h:1"), "h:1");
    }

    #[test]
    fn loopback_and_no_proxy_hosts_bypass_the_proxy() {
        assert!(bypasses_proxy("127.0.0.1", None));
        assert!(bypasses_proxy("localhost", None));
        assert!(bypasses_proxy("[::1]", None));
        assert!(!bypasses_proxy("api.example.com", None));
        assert!(bypasses_proxy("api.example.com", Some("foo, .example.com")));
        assert!(bypasses_proxy("example.com", Some("example.com")));
        assert!(bypasses_proxy("10.0.0.1", Some("10.0.0.1")));
        assert!(bypasses_proxy("x.y", Some("*")));
        assert!(!bypasses_proxy("notexample.com", Some("example.com")));
    }

    #[test]
    fn no_proxy_cidr_and_ipv6_entries_are_honoured() {
        assert!(bypasses_proxy("10.1.2.3", Some("192.168.0.0/16, 10.0.0.0/8")));
        assert!(!bypasses_proxy("11.1.2.3", Some("10.0.0.0/8")));
        assert!(bypasses_proxy("10.1.2.3", Some("0.0.0.0/0")));
        assert!(bypasses_proxy("[fd00::5]", Some("fd00::/8")));
        assert!(!bypasses_proxy("[fe80::5]", Some("fd00::/8")));
        assert!(!bypasses_proxy("10.1.2.3", Some("fd00::/8")), "families never mix");
        assert!(bypasses_proxy("[2001:db8::1]", Some("2001:db8::1")));
        assert!(bypasses_proxy("[2001:db8::1]", Some("[2001:db8::1]:6443")));
        assert!(!bypasses_proxy("[2001:db8::2]", Some("2001:db8::1")));
        assert!(bypasses_proxy("10.0.0.1", Some("10.0.0.1:6443")));
        assert!(bypasses_proxy("api.example.com", Some("example.com:6443")));
        // a CIDR entry never matches a name
        assert!(!bypasses_proxy("api.example.com", Some("10.0.0.0/8")));
    }
}

//! One invocation, resolved once from the arguments and passed down: where the objects come
//! from, the object asked about, the namespace `-n` stands for (and where that came from), the
//! clock answers are judged by, how text is styled, and the connection the printed commands
//! are bound to. Nothing below `run` reads the raw arguments again.

use std::path::{Path, PathBuf};

use anyhow::Result;
use k8s_openapi::jiff::Timestamp;

use kubectl_gc::diagnose::Connection;
use kubectl_gc::render::style::Style;

use super::args::{self, Args, Command, Global};
use super::output;

/// The object named on the command line, split once: TYPE as typed, and NAME.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ObjectArg {
    /// A kind, plural, singular or short name, maybe qualified (`deployments.apps`).
    pub type_arg: String,
    /// The object's name.
    pub name: String,
}

/// The clock answers are judged by: `--now`, parsed once when the arguments are (a bad value
/// is refused there, exit 1), or the wall clock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Clock {
    /// `--now`: every answer is judged at this instant, live or offline, however long it runs.
    Fixed(Timestamp),
    /// No `--now`: a snapshot's capture time, else the time of judging.
    Wall,
}

impl Clock {
    /// The time an answer read at `captured` (a snapshot's capture time, if it records one) is
    /// judged at.
    pub fn judged_at(self, captured: Option<Timestamp>) -> Timestamp {
        match self {
            Clock::Fixed(t) => t,
            Clock::Wall => captured.unwrap_or_else(Timestamp::now),
        }
    }

    /// The time now, as this invocation tells it (`--now` stands still).
    pub fn now(self) -> Timestamp {
        self.judged_at(None)
    }

    /// Whether time passes for the answers: not under `--now`.
    pub fn moves(self) -> bool {
        self == Clock::Wall
    }
}

/// `--now`'s value parser: RFC 3339, refused with the accepted form when it is not.
pub fn parse_now(s: &str) -> Result<Timestamp, String> {
    s.parse::<Timestamp>().map_err(|e| format!("--now takes an RFC 3339 time, such as 2026-11-29T12:00:00Z ({e})"))
}

/// Where the namespace `-n` stands for came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NamespaceFrom {
    /// `-n`/`--namespace`.
    Flag,
    /// The live kubeconfig context's (kube gives `default` when the context names none).
    Context,
    /// The context a `kubectl gc snapshot` file recorded.
    Snapshot,
    /// Nothing named one: `default`, as kubectl.
    Default,
}

/// The namespace `-n` stands for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Namespace {
    pub name: String,
    pub from: NamespaceFrom,
}

/// Where the objects come from.
#[derive(Clone, Debug)]
pub enum Source {
    /// The cluster, through the kubeconfig and the connection flags.
    Live,
    /// `--snapshot` files and directories.
    Snapshot(Vec<PathBuf>),
}

/// What an answer was read through, as the printed commands name it.
#[derive(Clone, Copy, Debug)]
pub enum ReadThrough<'a> {
    /// Live: the kubeconfig context used, and the file it was read from when not the default.
    Live { context: Option<&'a str>, kubeconfig: Option<&'a Path> },
    /// Offline: what a `kubectl gc snapshot` file recorded.
    Snapshot { context: Option<&'a str>, server: Option<&'a str> },
}

/// One invocation, resolved.
#[derive(Debug)]
pub struct Invocation {
    /// Live or offline.
    pub source: Source,
    /// The object asked about (`None`: `--all`, `snapshot`, completion).
    pub target: Option<ObjectArg>,
    /// `-n` as given.
    namespace_flag: Option<String>,
    /// `-A`.
    pub all_namespaces: bool,
    /// `--now`, or the clock.
    pub clock: Clock,
    /// Colour and width of text output.
    pub style: Style,
    /// kubectl's connection flags.
    pub connection: args::Connection,
}

impl Invocation {
    /// Resolves the arguments: the target is split and checked here, once.
    pub fn new(args: &Args) -> Result<Invocation> {
        let target = match &args.command {
            Command::WhyStuck(a) => a.target().as_ref().map(split).transpose()?,
            Command::Tree(a) => Some(split(&a.target)?),
            Command::Plan(a) => Some(split(&a.target)?),
            Command::Snapshot(_) | Command::Completion(_) | Command::Complete(_) => None,
        };
        Ok(Invocation::of(&args.global, target))
    }

    /// The invocation of `global` about `target`.
    pub fn of(global: &Global, target: Option<ObjectArg>) -> Invocation {
        Invocation {
            source: if global.snapshot.is_empty() { Source::Live } else { Source::Snapshot(global.snapshot.clone()) },
            target,
            namespace_flag: global.namespace.clone(),
            all_namespaces: global.all_namespaces,
            clock: global.now.map_or(Clock::Wall, Clock::Fixed),
            style: Style { color: output::use_color(global.color), width: output::text_width(global.width) },
            connection: global.connection.clone(),
        }
    }

    /// Whether the objects come from `--snapshot`.
    pub fn offline(&self) -> bool {
        matches!(self.source, Source::Snapshot(_))
    }

    /// `-n` as given, for titles (`-n labs`).
    pub fn namespace_flag(&self) -> Option<&str> {
        self.namespace_flag.as_deref()
    }

    /// The namespace `-n` stands for: the flag, else the one the read names (the live
    /// context's, or the one a snapshot file recorded), else `default`. The one place it is
    /// decided.
    pub fn namespace(&self, read: Option<(&str, NamespaceFrom)>) -> Namespace {
        match (&self.namespace_flag, read) {
            (Some(ns), _) => Namespace { name: ns.clone(), from: NamespaceFrom::Flag },
            (None, Some((ns, from))) => Namespace { name: ns.to_string(), from },
            (None, None) => Namespace { name: "default".to_string(), from: NamespaceFrom::Default },
        }
    }

    /// The cluster every printed command is bound to: the connection flags this invocation
    /// used (never a token), else the kubeconfig context the answer was read through (live) or
    /// that a `kubectl gc snapshot` file recorded (offline), so a command pasted later cannot
    /// act on whatever context is current then; live, with the kubeconfig file that context
    /// was read from unless it is the default one, so a shell whose `KUBECONFIG` names another
    /// file with a context of the same name cannot take the command there. Offline, no
    /// kubeconfig file is known: the server URL the file recorded is named beside its context
    /// for the same reason.
    pub fn bound(&self, read: ReadThrough<'_>) -> Connection {
        let (read_context, kubeconfig) = match read {
            ReadThrough::Snapshot { context, server } => return recorded(context, server),
            ReadThrough::Live { context, kubeconfig } => (context, kubeconfig),
        };
        let c = &self.connection;
        let mut conn = Connection::default();
        // the file the context was read through (absolute), else the flag as given
        if let Some(p) = kubeconfig.or(c.kubeconfig.as_deref()) {
            conn = conn.with("--kubeconfig", p.display().to_string());
        }
        let words = [
            ("--context", c.context.as_deref().or(read_context)),
            ("--cluster", c.cluster.as_deref()),
            ("--user", c.user.as_deref()),
            ("--server", c.server.as_deref()),
            ("--as", c.as_user.as_deref()),
        ];
        for (flag, v) in words {
            if let Some(v) = v {
                conn = conn.with(flag, v.to_string());
            }
        }
        for group in &c.as_group {
            conn = conn.with("--as-group", group.clone());
        }
        if let Some(uid) = &c.as_uid {
            conn = conn.with("--as-uid", uid.clone());
        }
        for extra in &c.as_user_extra {
            conn = conn.with("--as-user-extra", extra.clone());
        }
        if !conn.is_bound() {
            conn = Connection::unbound("no context was named; add the one you read from before running them");
        }
        conn
    }
}

/// The connection a snapshot file recorded.
fn recorded(context: Option<&str>, server: Option<&str>) -> Connection {
    match (context, server) {
        (Some(ctx), server) => {
            let conn = Connection::default().with("--context", ctx.to_string());
            match server {
                Some(s) => conn.with("--server", s.to_string()),
                None => conn,
            }
        }
        (None, Some(s)) => Connection::default().with("--server", s.to_string()),
        (None, None) => Connection::unbound(
            "the snapshot file records no context (only `kubectl gc snapshot` writes one); add --context before running them",
        ),
    }
}

/// `TYPE/NAME` or `TYPE NAME`, checked once.
pub fn split(t: &args::Target) -> Result<ObjectArg> {
    use anyhow::bail;
    let (type_arg, name) = match (t.what.split_once('/'), &t.name) {
        (Some((ty, name)), None) => (ty, name),
        (None, Some(name)) => (t.what.as_str(), name.as_str()),
        (Some(_), Some(extra)) => bail!("there is more than one object named: {} and {extra}; name one object", t.what),
        (None, None) => bail!("resource name may not be empty: give TYPE/NAME or TYPE NAME"),
    };
    // kubectl's own checks, before anything is read: no object's name holds a slash (it is a
    // path segment), so the slash is a typo, not a name to look up
    if name.contains('/') {
        match t.name {
            None => bail!("arguments in resource/name form may not have more than one slash: {:?}", t.what),
            Some(_) => bail!("give the object as TYPE/NAME or TYPE NAME, not both ({} {name})", t.what),
        }
    }
    if name.is_empty() || type_arg.is_empty() {
        bail!("give the object as TYPE/NAME or TYPE NAME, not {:?}", t.what);
    }
    Ok(ObjectArg { type_arg: type_arg.to_string(), name: name.to_string() })
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    fn invocation(argv: &[&str]) -> Invocation {
        let args = Args::try_parse_from(["kubectl-gc"].iter().chain(argv)).unwrap();
        Invocation::new(&args).unwrap()
    }

    #[test]
    fn the_namespace_is_decided_in_one_place_and_says_where_it_came_from() {
        let flagged = invocation(&["tree", "site/alpha", "-n", "labs", "--color=never"]);
        assert_eq!(
            flagged.namespace(Some(("team", NamespaceFrom::Context))),
            Namespace { name: "labs".into(), from: NamespaceFrom::Flag }
        );
        let bare = invocation(&["tree", "site/alpha", "--color=never"]);
        assert_eq!(bare.namespace(Some(("team", NamespaceFrom::Snapshot))).from, NamespaceFrom::Snapshot);
        assert_eq!(bare.namespace(None), Namespace { name: "default".into(), from: NamespaceFrom::Default });
    }

    #[test]
    fn now_is_parsed_once_and_stands_still() {
        let at: Timestamp = "2026-11-29T12:00:00Z".parse().unwrap();
        let fixed = invocation(&["plan", "deploy/web", "--now", "2026-11-29T12:00:00Z", "--color=never"]);
        assert_eq!(fixed.clock, Clock::Fixed(at));
        assert!(!fixed.clock.moves());
        assert_eq!(fixed.clock.judged_at(Some(Timestamp::UNIX_EPOCH)), at, "--now wins over the capture time");
        let wall = invocation(&["plan", "deploy/web", "--color=never"]);
        assert_eq!(wall.clock.judged_at(Some(at)), at, "else the capture time");
        assert!(wall.clock.moves());
        let err = Args::try_parse_from(["kubectl-gc", "tree", "ns/x", "--now", "noon"]).unwrap_err().to_string();
        assert!(err.contains("--now") && err.contains("RFC 3339"), "{err}");
    }

    #[test]
    fn a_target_is_split_once_and_malformed_ones_refused() {
        let t = |what: &str, name: Option<&str>| args::Target { what: what.into(), name: name.map(Into::into) };
        let ok = |type_arg: &str, name: &str| ObjectArg { type_arg: type_arg.into(), name: name.into() };
        assert_eq!(split(&t("site/alpha", None)).unwrap(), ok("site", "alpha"));
        assert_eq!(split(&t("site", Some("alpha"))).unwrap(), ok("site", "alpha"));
        for (what, name) in [("site/alpha", Some("beta")), ("site", None), ("site/", None), ("/alpha", None)] {
            assert!(split(&t(what, name)).is_err(), "{what} {name:?}");
        }
        let refused = |what: &str, name: Option<&str>| split(&t(what, name)).unwrap_err().to_string();
        assert!(refused("a/b/c", None).contains("may not have more than one slash"));
        assert!(refused("site/alpha/", None).contains("may not have more than one slash"));
        assert!(refused("site", Some("sites/alpha")).contains("not both"));
    }

    #[test]
    fn printed_commands_name_the_cluster_read() {
        let live = invocation(&["tree", "site/alpha", "--color=never", "--as", "jane"]);
        let conn = live.bound(ReadThrough::Live { context: Some("prod"), kubeconfig: Some(Path::new("/k/config")) });
        let want =
            Connection::default().with("--kubeconfig", "/k/config").with("--context", "prod").with("--as", "jane");
        assert_eq!(conn, want);
        let offline = invocation(&["tree", "site/alpha", "--color=never", "--snapshot", "f.json"]);
        assert!(offline.offline());
        assert!(!offline.bound(ReadThrough::Snapshot { context: None, server: None }).is_bound());
        assert_eq!(
            offline.bound(ReadThrough::Snapshot { context: Some("prod"), server: Some("https://k:6443") }),
            Connection::default().with("--context", "prod").with("--server", "https://k:6443")
        );
    }
}

//! The command line as typed (clap derive): subcommands, kubectl's connection flags, and
//! what each subcommand takes. No I/O here.

use std::path::PathBuf;

use clap::{Args as ClapArgs, Parser, Subcommand, ValueEnum};

use k8s_openapi::jiff::Timestamp;

use super::duration::KubeDuration;
use super::invocation::parse_now;
use super::request::kube_bool;

const EXAMPLES: &str = "\
Examples:
  # Why is this namespace still Terminating?
  kubectl gc why-stuck ns/labs

  # Why won't this custom resource go away? (exit 2 when stuck)
  kubectl gc why-stuck site/alpha -n labs

  # Everything being deleted in a namespace (or -A: the cluster), grouped by root cause
  kubectl gc why-stuck --all -n labs

  # What hangs off a Deployment, and what owns a Pod
  kubectl gc tree deploy/web -n shop
  kubectl gc tree pod web-59d7f45ffb-h2x8k -n shop --owners

  # What would a foreground delete do, without doing it
  kubectl gc plan deploy/web -n shop --cascade=foreground

  # The same questions on a saved snapshot (kubectl get -A -o json, or kubectl gc snapshot)
  kubectl gc why-stuck ns/labs --snapshot cluster.json --now 2026-11-29T12:00:00Z

  # A picture for the incident notes
  kubectl gc tree site/alpha -n labs -o dot | dot -Tsvg > alpha.svg

  # Shell completion: see kubectl gc completion --help";

/// Why won't this Kubernetes object go away, and what will the garbage collector do if I
/// delete it? Read-only: never changes the cluster.
#[derive(Parser, Debug)]
#[command(name = "kubectl-gc", bin_name = "kubectl gc", version, after_help = EXAMPLES, max_term_width = 100, args_override_self = true)]
pub struct Args {
    #[command(subcommand)]
    pub command: Command,
    #[command(flatten)]
    pub global: Global,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Explain why an object is not going away: finalizers and who removes them, blocking
    /// dependents, owner-reference problems, namespace content, and the safest next step; with
    /// --all, every object being deleted in a namespace (-n) or the cluster (-A), by root cause.
    #[command(after_help = "Examples:
  kubectl gc why-stuck ns/labs
  kubectl gc why-stuck site/alpha -n labs -o json
  kubectl gc why-stuck pvc data-db-0 -n prod
  kubectl gc why-stuck bucket/raw -n studio --stuck-after 4h   # stuck only after 4h
  kubectl gc why-stuck --all -A                # every stuck deletion, grouped by root cause
  kubectl gc why-stuck --all -n labs --stuck-only

Exit status: 0 nothing is stuck, 1 the command failed, 2 stuck, 3 could not be judged.")]
    WhyStuck(WhyStuckArgs),
    /// Show an object's dependents (or, with --owners, its owners) as the garbage collector's
    /// graph holds them, with deletion state, finalizers and bad references inline.
    #[command(after_help = "Examples:
  kubectl gc tree deploy/web -n shop
  kubectl gc tree site alpha -n labs -o json
  kubectl gc tree pod/web-59d7f45ffb-h2x8k -n shop --owners
  kubectl gc tree site/alpha -n labs -o dot | dot -Tsvg > alpha.svg   # Graphviz
  kubectl gc tree site/alpha -n labs -o mermaid    # for a ```mermaid block in Markdown")]
    Tree(TreeArgs),
    /// Dry-run a delete: what the API server, the garbage collector and the namespace
    /// controller would remove, in what order, what is orphaned, and what would block.
    #[command(after_help = "Examples:
  kubectl gc plan deploy/web -n shop                       # kubectl's default: background
  kubectl gc plan site/alpha -n labs --cascade=foreground
  kubectl gc plan ns/labs --assume-finalizers=removed -o json

Exit status: 0 the plan completes, 1 the command failed, 2 the plan ends with blocked objects.")]
    Plan(PlanArgs),
    /// Save what the live path reads (objects, discovery data, capture time) to a file that
    /// --snapshot loads to the very same answers.
    #[command(after_help = "Examples:
  kubectl gc snapshot -A --file cluster.json
  kubectl gc snapshot -n labs --file labs.json
  kubectl gc why-stuck ns/labs --snapshot labs.json

The file is created readable by its owner only (it holds pod specs), written whole before it
replaces anything, and an existing file is kept unless --force is given.")]
    Snapshot(SnapshotArgs),
    /// Print a completion script for kubectl-gc run on its own (bash, zsh or fish). For
    /// `kubectl gc <TAB>`, put kubectl_complete-gc on PATH instead.
    #[command(after_help = COMPLETION_EXAMPLES)]
    Completion(CompletionArgs),
    /// kubectl's plugin completion protocol (cobra's `__complete`): candidates for the last
    /// word, then `:<directive>`. kubectl_complete-gc runs this.
    #[command(name = "__complete", hide = true, disable_help_flag = true)]
    Complete(CompleteArgs),
}

const COMPLETION_EXAMPLES: &str = "\
Examples:
  # kubectl gc <TAB> (kubectl 1.26+) needs kubectl_complete-gc on PATH. The release archive
  # ships it beside kubectl-gc; krew does not link it, so do it once after a krew install:
  ln -sf \"$(dirname \"$(readlink -f \"$(command -v kubectl-gc)\")\")/kubectl_complete-gc\" \\
    \"${KREW_ROOT:-$HOME/.krew}/bin/kubectl_complete-gc\"

  # kubectl-gc <TAB>, when run on its own
  source <(kubectl gc completion bash)                            # bash: in ~/.bashrc
  kubectl gc completion zsh > \"${fpath[1]}/_kubectl-gc\"           # zsh
  kubectl gc completion fish > ~/.config/fish/completions/kubectl-gc.fish";

#[derive(ClapArgs, Debug)]
pub struct CompletionArgs {
    /// The shell to write the script for
    #[arg(value_enum)]
    pub shell: CompletionShell,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum CompletionShell {
    Bash,
    Zsh,
    Fish,
}

#[derive(ClapArgs, Debug)]
pub struct CompleteArgs {
    /// The words typed after `kubectl gc`, the last one being completed ("" for a new word)
    #[arg(num_args = 0.., allow_hyphen_values = true, trailing_var_arg = true)]
    pub words: Vec<String>,
}

/// `TYPE/NAME` or `TYPE NAME`, as kubectl takes them.
#[derive(ClapArgs, Debug, Clone)]
pub struct Target {
    /// TYPE/NAME, or TYPE followed by NAME (kinds, plurals, short names; `deployments.apps`)
    #[arg(value_name = "TYPE[/NAME]")]
    pub what: String,
    /// NAME, when TYPE is given on its own
    #[arg(value_name = "NAME")]
    pub name: Option<String>,
}

#[derive(ClapArgs, Debug)]
pub struct WhyStuckArgs {
    /// TYPE/NAME, or TYPE followed by NAME (kinds, plurals, short names; `deployments.apps`)
    #[arg(value_name = "TYPE[/NAME]", required_unless_present = "all")]
    pub what: Option<String>,
    /// NAME, when TYPE is given on its own
    #[arg(value_name = "NAME")]
    pub name: Option<String>,
    /// Every object being deleted in the namespace (-n) or the cluster (-A), grouped by root cause
    #[arg(long, conflicts_with_all = ["what", "name", "plan"], value_name = "BOOL", num_args = 0..=1, require_equals = true, default_missing_value = "true", default_value = "false", hide_default_value = true, value_parser = kube_bool, action = clap::ArgAction::Set)]
    pub all: bool,
    /// With --all: leave out the objects whose deletion is merely in progress
    // (not `requires = "all"`: a flag's default satisfies it; without an object, TYPE is
    // required unless --all is given)
    #[arg(long, conflicts_with_all = ["what", "name", "plan"], value_name = "BOOL", num_args = 0..=1, require_equals = true, default_missing_value = "true", default_value = "false", hide_default_value = true, value_parser = kube_bool, action = clap::ArgAction::Set)]
    pub stuck_only: bool,
    /// Output format
    #[arg(short = 'o', long = "output", value_enum, default_value_t = Format::Text)]
    pub output: Format,
    /// Also print the planner's dry run of what happens once the blocker is gone
    #[arg(long, conflicts_with = "watch", value_name = "BOOL", num_args = 0..=1, require_equals = true, default_missing_value = "true", default_value = "false", hide_default_value = true, value_parser = kube_bool, action = clap::ArgAction::Set)]
    pub plan: bool,
    /// How long a finalizer whose controller is alive may stay before the answer calls it
    /// stuck (FinalizerNotProgressing), as kubectl takes durations: 90s, 15m, 4h, 1h30m
    #[arg(long = "stuck-after", value_name = "DURATION", default_value = "1h")]
    pub stuck_after: KubeDuration,
    #[command(flatten)]
    pub watch: WatchFlags,
}

/// `--watch` and what ends it (contract §4.5).
#[derive(ClapArgs, Debug, Clone, Copy)]
pub struct WatchFlags {
    /// Follow the deletion live (WATCH requests), re-judging the answer on every change, until
    /// it ends: exit 0 when gone, 2 when Stuck for --stuck-after with nothing changing (or at
    /// --timeout), 3 at --timeout still undecided or when Unknown for --stuck-after with nothing
    /// changing
    #[arg(short = 'w', long, value_name = "BOOL", num_args = 0..=1, require_equals = true, default_missing_value = "true", default_value = "false", hide_default_value = true, value_parser = kube_bool, action = clap::ArgAction::Set)]
    pub watch: bool,
    /// With --watch: give up after this long (exit 2 if the answer is Stuck then, else 3)
    #[arg(long, value_name = "DURATION", requires = "watch")]
    pub timeout: Option<KubeDuration>,
    /// With --watch: end as soon as the answer is Stuck (exit 2; Unknown is watched on)
    #[arg(long, value_enum, value_name = "stuck", requires = "watch")]
    pub until: Option<Until>,
}

/// What ends a watch early.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Until {
    /// As soon as the answer is Stuck.
    Stuck,
}

impl WhyStuckArgs {
    /// The object asked about (`None` with `--all`).
    pub fn target(&self) -> Option<Target> {
        self.what.clone().map(|what| Target { what, name: self.name.clone() })
    }

    /// How the answer is judged.
    pub fn options(&self) -> kubectl_gc::diagnose::Options {
        kubectl_gc::diagnose::Options { stuck_after: self.stuck_after.seconds() }
    }
}

#[derive(ClapArgs, Debug)]
pub struct TreeArgs {
    #[command(flatten)]
    pub target: Target,
    /// Output format
    #[arg(short = 'o', long = "output", value_enum, default_value_t = TreeFormat::Text)]
    pub output: TreeFormat,
    /// Show owners upward instead of dependents downward
    #[arg(long, value_name = "BOOL", num_args = 0..=1, require_equals = true, default_missing_value = "true", default_value = "false", hide_default_value = true, value_parser = kube_bool, action = clap::ArgAction::Set)]
    pub owners: bool,
    /// With --watch: how long the root may stay Stuck with nothing changing before the watch
    /// ends (exit 2); also how long a finalizer whose controller is alive may stay
    #[arg(long = "stuck-after", value_name = "DURATION", default_value = "1h", requires = "watch")]
    pub stuck_after: KubeDuration,
    #[command(flatten)]
    pub watch: WatchFlags,
}

#[derive(ClapArgs, Debug)]
pub struct PlanArgs {
    #[command(flatten)]
    pub target: Target,
    /// Output format
    #[arg(short = 'o', long = "output", value_enum, default_value_t = Format::Text)]
    pub output: Format,
    /// Propagation policy of the simulated delete, as kubectl delete --cascade
    #[arg(long, value_enum, default_value_t = CascadeArg::Background)]
    pub cascade: CascadeArg,
    /// Assume every non-GC finalizer is removed, or that none is (default: by controller liveness)
    #[arg(long, value_enum, value_name = "removed|stuck")]
    pub assume_finalizers: Option<AssumeArg>,
}

#[derive(ClapArgs, Debug)]
pub struct SnapshotArgs {
    /// Output format (a snapshot is JSON)
    #[arg(short = 'o', long = "output", value_enum, default_value = "json")]
    pub output: SnapshotFormat,
    /// File to write (default: standard output)
    #[arg(long = "file", value_name = "FILE")]
    pub file: Option<PathBuf>,
    /// Replace the file if it exists
    #[arg(long, requires = "file", value_name = "BOOL", num_args = 0..=1, require_equals = true, default_missing_value = "true", default_value = "false", hide_default_value = true, value_parser = kube_bool, action = clap::ArgAction::Set)]
    pub force: bool,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum SnapshotFormat {
    Json,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Text,
    Json,
    Yaml,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum TreeFormat {
    Text,
    Json,
    Yaml,
    Dot,
    Mermaid,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum CascadeArg {
    Background,
    Foreground,
    Orphan,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum AssumeArg {
    Removed,
    Stuck,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum ColorChoice {
    Auto,
    Always,
    Never,
}

/// Flags every subcommand takes, anywhere after `kubectl gc`.
#[derive(ClapArgs, Debug)]
pub struct Global {
    /// Read objects from a snapshot file or directory instead of the cluster (repeatable)
    #[arg(long, global = true, value_name = "PATH", help_heading = "Input")]
    pub snapshot: Vec<PathBuf>,
    /// Reference time for ages and lease freshness (default: the snapshot's capture time, else now)
    #[arg(long, global = true, value_name = "RFC3339", help_heading = "Input", value_parser = parse_now)]
    pub now: Option<Timestamp>,
    /// Namespace of the object (default: the context's namespace, else "default")
    #[arg(short = 'n', long, global = true, value_name = "NS")]
    pub namespace: Option<String>,
    /// Read every namespace, not only what the answer needs
    #[arg(short = 'A', long, global = true, value_name = "BOOL", num_args = 0..=1, require_equals = true, default_missing_value = "true", default_value = "false", hide_default_value = true, value_parser = kube_bool, action = clap::ArgAction::Set)]
    pub all_namespaces: bool,
    /// Colour: auto (on a terminal, unless NO_COLOR is set and not empty), always, never
    #[arg(long, global = true, value_enum, default_value_t = ColorChoice::Auto, value_name = "WHEN")]
    pub color: ColorChoice,
    /// Wrap text output at N columns (0: never). Default: the terminal's width (80 when it
    /// cannot be read); no wrapping when stdout is not a terminal. Commands are never broken.
    #[arg(long, global = true, value_name = "N")]
    pub width: Option<usize>,
    #[command(flatten)]
    pub connection: Connection,
}

/// kubectl's connection flags (cli-runtime's ConfigFlags).
#[derive(ClapArgs, Debug, Default, Clone)]
pub struct Connection {
    /// Path to the kubeconfig file (default: KUBECONFIG, else ~/.kube/config)
    #[arg(long, global = true, value_name = "PATH", help_heading = "Connection")]
    pub kubeconfig: Option<PathBuf>,
    /// The kubeconfig context to use
    #[arg(long, global = true, help_heading = "Connection")]
    pub context: Option<String>,
    /// The kubeconfig cluster to use
    #[arg(long, global = true, help_heading = "Connection")]
    pub cluster: Option<String>,
    /// The kubeconfig user to use
    #[arg(long, global = true, help_heading = "Connection")]
    pub user: Option<String>,
    /// The address and port of the Kubernetes API server
    #[arg(short = 's', long, global = true, help_heading = "Connection")]
    pub server: Option<String>,
    /// Bearer token for authentication to the API server
    #[arg(long, global = true, help_heading = "Connection")]
    pub token: Option<String>,
    /// Username to impersonate for the operation
    #[arg(long = "as", global = true, value_name = "USER", help_heading = "Connection")]
    pub as_user: Option<String>,
    /// Group to impersonate (repeatable)
    #[arg(long = "as-group", global = true, value_name = "GROUP", help_heading = "Connection")]
    pub as_group: Vec<String>,
    /// UID to impersonate
    #[arg(long = "as-uid", global = true, value_name = "UID", help_heading = "Connection")]
    pub as_uid: Option<String>,
    /// User extra to impersonate, KEY=VALUE (repeatable; a key may take several values)
    #[arg(long = "as-user-extra", global = true, value_name = "KEY=VALUE", help_heading = "Connection")]
    pub as_user_extra: Vec<String>,
    /// Path to a client certificate file for TLS
    #[arg(long, global = true, value_name = "PATH", help_heading = "Connection")]
    pub client_certificate: Option<PathBuf>,
    /// Path to a client key file for TLS
    #[arg(long, global = true, value_name = "PATH", help_heading = "Connection")]
    pub client_key: Option<PathBuf>,
    /// Ask the server not to compress its answers
    #[arg(long, global = true, help_heading = "Connection", value_name = "BOOL", num_args = 0..=1, require_equals = true, default_missing_value = "true", default_value = "false", hide_default_value = true, value_parser = kube_bool, action = clap::ArgAction::Set)]
    pub disable_compression: bool,
    /// How long to wait for one server request ("0" = no limit; "30s", "1m")
    #[arg(long, global = true, value_name = "DURATION", help_heading = "Connection", value_parser = KubeDuration::parse_or_seconds)]
    pub request_timeout: Option<KubeDuration>,
    /// Do not check the server's certificate (insecure)
    #[arg(long, global = true, help_heading = "Connection", value_name = "BOOL", num_args = 0..=1, require_equals = true, default_missing_value = "true", default_value = "false", hide_default_value = true, value_parser = kube_bool, action = clap::ArgAction::Set)]
    pub insecure_skip_tls_verify: bool,
    /// Path to a CA certificate file
    #[arg(long, global = true, value_name = "PATH", help_heading = "Connection")]
    pub certificate_authority: Option<PathBuf>,
    /// Server name for certificate validation
    #[arg(long, global = true, help_heading = "Connection")]
    pub tls_server_name: Option<String>,
    /// Discovery cache directory (default: KUBECACHEDIR, else ~/.kube/cache)
    #[arg(long, global = true, value_name = "DIR", env = "KUBECACHEDIR", help_heading = "Connection")]
    pub cache_dir: Option<PathBuf>,
    /// Requests in flight at once while listing
    #[arg(long, global = true, default_value_t = 16, help_heading = "Connection")]
    pub concurrency: usize,
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn clap_definition_is_consistent() {
        Args::command().debug_assert();
    }

    /// main answers `__complete` before clap (so leading flags stay words); the hidden entry
    /// still takes what follows a subcommand verbatim.
    #[test]
    fn complete_is_hidden_and_takes_words_after_a_subcommand() {
        let cmd = Args::command();
        assert!(cmd.find_subcommand("__complete").is_some_and(|c| c.is_hide_set()));
        for words in
            [vec!["tree", "--snapshot", "f.json", "-n", "labs", "site", ""], vec!["why", "--help"], vec![""], vec![]]
        {
            let argv = ["kubectl-gc", "__complete"].into_iter().chain(words.iter().copied());
            let a = Args::try_parse_from(argv).unwrap_or_else(|e| panic!("{words:?}: {e}"));
            let Command::Complete(c) = a.command else { panic!("not __complete") };
            assert_eq!(c.words, words);
        }
    }

    #[test]
    fn why_stuck_takes_an_object_or_all_but_not_both() {
        let a = Args::try_parse_from(["kubectl-gc", "why-stuck", "--all", "-A", "--stuck-only"]).unwrap();
        let Command::WhyStuck(w) = a.command else { panic!("not why-stuck") };
        assert!(w.all && w.stuck_only && w.target().is_none() && a.global.all_namespaces);
        let a = Args::try_parse_from(["kubectl-gc", "why-stuck", "site", "alpha"]).unwrap();
        let Command::WhyStuck(w) = a.command else { panic!("not why-stuck") };
        assert_eq!(w.target().map(|t| (t.what, t.name)), Some(("site".into(), Some("alpha".into()))));
        for bad in [
            vec!["why-stuck", "--all", "site/alpha"],
            vec!["why-stuck", "--all", "--plan"],
            vec!["why-stuck", "--stuck-only", "site/alpha"],
            vec!["why-stuck", "--stuck-only"],
            vec!["why-stuck"],
        ] {
            let argv = ["kubectl-gc"].into_iter().chain(bad.iter().copied());
            assert!(Args::try_parse_from(argv).is_err(), "{bad:?} should not parse");
        }
    }

    #[test]
    fn flags_are_accepted_after_the_subcommand_and_its_arguments() {
        let a = Args::try_parse_from(["kubectl-gc", "tree", "site/alpha", "-n", "labs", "--context", "x", "--owners"])
            .unwrap();
        assert_eq!(a.global.namespace.as_deref(), Some("labs"));
        assert_eq!(a.global.connection.context.as_deref(), Some("x"));
        let a =
            Args::try_parse_from(["kubectl-gc", "-n", "labs", "plan", "deploy", "web", "--cascade=orphan"]).unwrap();
        let Command::Plan(p) = a.command else { panic!("not plan") };
        assert_eq!(
            (p.target.what.as_str(), p.target.name.as_deref(), p.cascade),
            ("deploy", Some("web"), CascadeArg::Orphan)
        );
    }
}

//! Completion for `kubectl gc <TAB>`, in cobra's `__complete` protocol, which kubectl (1.26+)
//! expects from a plugin's `kubectl_complete-gc`: one candidate a line (`value<TAB>description`),
//! then `:<directive>` (4 = no file completion; 0 = the shell's default, file names).
//!
//! The words are read with the clap definition itself (which flags take a value, which
//! subcommands exist), so completion cannot drift from what the parser accepts. TYPE comes from
//! the REST mapper of the `--snapshot` files when given, else from the built-in types; NAME from
//! the snapshot's objects of that type in the `-n` namespace (or all with `-A`). Completion never
//! fails loudly: an unreadable snapshot or kubeconfig just yields no candidates.

use std::collections::BTreeSet;
use std::ffi::OsString;
use std::io::{self, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Arg, CommandFactory};

use kubectl_gc::discovery::RestMapper;
use kubectl_gc::snapshot::Snapshot;
use kubectl_gc::source;

use super::args::{Args, CompletionShell};

/// cobra's ShellCompDirectiveDefault: the shell may fall back to file names.
pub const DEFAULT: u32 = 0;
/// cobra's ShellCompDirectiveNoFileComp.
pub const NO_FILE_COMP: u32 = 4;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Candidate {
    pub value: String,
    pub description: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Completion {
    pub candidates: Vec<Candidate>,
    pub directive: u32,
}

impl Completion {
    fn none() -> Completion {
        Completion { candidates: Vec::new(), directive: NO_FILE_COMP }
    }

    fn files() -> Completion {
        Completion { candidates: Vec::new(), directive: DEFAULT }
    }
}

/// `kubectl-gc __complete WORDS…`: answers on stdout; always exits 0.
pub fn main(words: &[OsString]) -> ExitCode {
    let words: Vec<String> = words.iter().map(|w| w.to_string_lossy().into_owned()).collect();
    let mut out = io::stdout().lock();
    let _ = write(&complete(&words), &mut out).and_then(|_| out.flush());
    ExitCode::SUCCESS
}

/// `kubectl gc completion SHELL`: the script for `kubectl-gc` run on its own. Each asks
/// `kubectl-gc __complete WORDS…` for every candidate, as kubectl_complete-gc does for
/// `kubectl gc <TAB>`, so flags, TYPE and NAME complete the same way in both, and what the
/// parser hides (`__complete`) is never offered. Registered for the `kubectl-gc` command only,
/// never for `kubectl`, whose own completion reaches `kubectl gc` through kubectl_complete-gc.
pub fn generate_script(shell: CompletionShell, w: &mut impl Write) -> io::Result<()> {
    w.write_all(
        match shell {
            CompletionShell::Bash => include_str!("completion/kubectl-gc.bash"),
            CompletionShell::Zsh => include_str!("completion/kubectl-gc.zsh"),
            CompletionShell::Fish => include_str!("completion/kubectl-gc.fish"),
        }
        .as_bytes(),
    )
}

/// Writes cobra's format. Only candidates a shell reads back as themselves are offered:
/// kubectl's own bash completion passes them through `compgen -W`, which expands `$(…)`,
/// backquotes, globs and `~`, and splits at blanks, so a hostile name in a snapshot would run
/// on TAB. Such a candidate is dropped (Kubernetes names never need quoting); in a
/// description a line break or TAB becomes a space, and what a shell would expand, or any other
/// control or bidi character, a `?`.
pub fn write(c: &Completion, w: &mut impl Write) -> io::Result<()> {
    for cand in &c.candidates {
        if !is_inert(&cand.value) {
            continue;
        }
        match &cand.description {
            Some(d) if !d.is_empty() => {
                let d: String = d
                    .chars()
                    .map(|ch| match ch {
                        _ if ch.is_control() && ch.is_whitespace() => ' ',
                        _ if ch.is_control() || kubectl_gc::names::is_bidi(ch) || "$`\\\"'!".contains(ch) => '?',
                        _ => ch,
                    })
                    .collect();
                writeln!(w, "{}\t{}", cand.value, d.trim())?
            }
            _ => writeln!(w, "{}", cand.value)?,
        }
    }
    writeln!(w, ":{}", c.directive)
}

/// Whether a shell reads `value` back unchanged, unquoted: letters, digits and `-_./:@+=,%`
/// only (every Kubernetes name, flag and enum value is made of these).
fn is_inert(value: &str) -> bool {
    !value.is_empty() && value.chars().all(|c| c.is_ascii_alphanumeric() || "-_./:@+=,%".contains(c))
}

/// What the words before the one being completed say.
#[derive(Default)]
struct Seen {
    subcommand: Option<String>,
    positionals: Vec<String>,
    snapshots: Vec<PathBuf>,
    namespace: Option<String>,
    all_namespaces: bool,
    kubeconfig: Option<PathBuf>,
}

impl Seen {
    fn record(&mut self, arg: &Arg, value: Option<&str>) {
        match (arg.get_id().as_str(), value) {
            ("snapshot", Some(v)) => self.snapshots.push(PathBuf::from(v)),
            ("namespace", Some(v)) => self.namespace = Some(v.to_string()),
            ("kubeconfig", Some(v)) => self.kubeconfig = Some(PathBuf::from(v)),
            ("all_namespaces", v) => self.all_namespaces = v.is_none_or(|v| super::request::kube_bool(v) == Ok(true)),
            _ => {}
        }
    }
}

/// The candidates for the last word, given all the words after `kubectl gc`.
pub fn complete(words: &[String]) -> Completion {
    let mut root = Args::command();
    root.build();
    let (last, before) = match words.split_last() {
        Some((last, before)) => (last.as_str(), before),
        None => ("", &[][..]),
    };

    let mut seen = Seen::default();
    let mut pending: Option<Arg> = None;
    let mut only_positionals = false;
    for word in before {
        let cmd = current(&root, &seen);
        if let Some(arg) = pending.take() {
            seen.record(&arg, Some(word));
            continue;
        }
        if !only_positionals && word == "--" {
            only_positionals = true;
        } else if !only_positionals && word.starts_with("--") {
            let (name, value) = match word[2..].split_once('=') {
                Some((n, v)) => (n, Some(v)),
                None => (&word[2..], None),
            };
            if let Some(arg) = cmd.get_arguments().find(|a| a.get_long() == Some(name)) {
                match (takes_value(arg), value) {
                    (true, None) if !arg.is_require_equals_set() => pending = Some(arg.clone()),
                    (_, v) => seen.record(arg, v),
                }
            }
        } else if !only_positionals && word.starts_with('-') && word.len() > 1 {
            // a cluster of short flags: -A, -n labs, -nlabs, -An labs
            for (i, ch) in word.char_indices().skip(1) {
                let Some(arg) = cmd.get_arguments().find(|a| a.get_short() == Some(ch)) else { break };
                // a kubectl-style boolean takes a value only after `=`: -A, -A=false
                if arg.is_require_equals_set() {
                    let rest = &word[i + ch.len_utf8()..];
                    match rest.strip_prefix('=') {
                        Some(v) => {
                            seen.record(arg, Some(v));
                            break;
                        }
                        None => {
                            seen.record(arg, None);
                            continue;
                        }
                    }
                }
                if takes_value(arg) {
                    let rest = &word[i + ch.len_utf8()..];
                    let rest = rest.strip_prefix('=').unwrap_or(rest);
                    if rest.is_empty() {
                        pending = Some(arg.clone());
                    } else {
                        seen.record(arg, Some(rest));
                    }
                    break;
                }
                seen.record(arg, None);
            }
        } else if seen.subcommand.is_none() && root.find_subcommand(word).is_some() {
            seen.subcommand = root.find_subcommand(word).map(|s| s.get_name().to_string());
        } else {
            seen.positionals.push(word.clone());
        }
    }

    let cmd = current(&root, &seen);
    if let Some(arg) = pending {
        return value_of(&arg, last, "", &seen);
    }
    if !only_positionals && last.starts_with('-') {
        if let Some((name, partial)) = last.strip_prefix("--").and_then(|l| l.split_once('=')) {
            return match cmd.get_arguments().find(|a| a.get_long() == Some(name)) {
                Some(arg) if takes_value(arg) => value_of(arg, partial, &format!("--{name}="), &seen),
                _ => Completion::none(),
            };
        }
        return flags(cmd, last);
    }
    match seen.subcommand.as_deref() {
        None => subcommands(&root, last),
        Some("help") => subcommands(&root, last),
        Some("completion") if seen.positionals.is_empty() => {
            match cmd.get_arguments().find(|a| a.get_id() == "shell") {
                Some(arg) => value_of(arg, last, "", &seen),
                None => Completion::none(),
            }
        }
        Some("why-stuck" | "tree" | "plan") => target(&seen, last),
        _ => Completion::none(),
    }
}

fn current<'a>(root: &'a clap::Command, seen: &Seen) -> &'a clap::Command {
    seen.subcommand.as_deref().and_then(|s| root.find_subcommand(s)).unwrap_or(root)
}

fn takes_value(arg: &Arg) -> bool {
    arg.get_action().takes_values()
}

fn subcommands(root: &clap::Command, prefix: &str) -> Completion {
    let candidates = root
        .get_subcommands()
        .filter(|s| !s.is_hide_set() && s.get_name().starts_with(prefix))
        .map(|s| Candidate { value: s.get_name().to_string(), description: s.get_about().map(first_sentence) })
        .collect();
    Completion { candidates, directive: NO_FILE_COMP }
}

fn flags(cmd: &clap::Command, prefix: &str) -> Completion {
    let mut candidates: Vec<Candidate> = cmd
        .get_arguments()
        .filter(|a| !a.is_hide_set() && !a.is_positional())
        .filter_map(|a| {
            let value = format!("--{}", a.get_long()?);
            value.starts_with(prefix).then(|| Candidate { value, description: a.get_help().map(first_sentence) })
        })
        .collect();
    candidates.sort_by(|a, b| a.value.cmp(&b.value));
    Completion { candidates, directive: NO_FILE_COMP }
}

/// Candidates for a flag's value; `prefix` is prepended to each (`--output=`).
fn value_of(arg: &Arg, partial: &str, prefix: &str, seen: &Seen) -> Completion {
    let possible = arg.get_possible_values();
    let values: Vec<Candidate> = if !possible.is_empty() {
        possible
            .iter()
            .filter(|p| !p.is_hide_set())
            .map(|p| Candidate { value: p.get_name().to_string(), description: p.get_help().map(first_sentence) })
            .collect()
    } else {
        match arg.get_id().as_str() {
            "snapshot" | "kubeconfig" | "certificate_authority" | "cache_dir" | "file" => return Completion::files(),
            "namespace" => namespaces(seen),
            "context" | "cluster" | "user" => kubeconfig_names(arg.get_id().as_str(), seen),
            _ => Vec::new(),
        }
    };
    let candidates = values
        .into_iter()
        .filter(|c| c.value.starts_with(partial))
        .map(|c| Candidate { value: format!("{prefix}{}", c.value), description: c.description })
        .collect();
    Completion { candidates, directive: NO_FILE_COMP }
}

/// `TYPE`, `TYPE/NAME` or, after a TYPE, `NAME`.
fn target(seen: &Seen, last: &str) -> Completion {
    let snapshot = load(seen);
    let mapper = RestMapper::from_snapshot(snapshot.as_ref().unwrap_or(&Snapshot::default()));
    let candidates = match seen.positionals.as_slice() {
        [] => match last.split_once('/') {
            Some((ty, partial)) => names(&mapper, snapshot.as_ref(), seen, ty, partial)
                .into_iter()
                .map(|c| Candidate { value: format!("{ty}/{}", c.value), description: c.description })
                .collect(),
            None => types(&mapper, last),
        },
        [ty] if !ty.contains('/') => names(&mapper, snapshot.as_ref(), seen, ty, last),
        _ => Vec::new(),
    };
    Completion { candidates, directive: NO_FILE_COMP }
}

fn load(seen: &Seen) -> Option<Snapshot> {
    if seen.snapshots.is_empty() {
        return None;
    }
    source::file::load(&seen.snapshots).ok()
}

/// Resource types as kubectl completes them: plural names, qualified by group where two
/// groups share a plural (the core group keeps the bare name, as TYPE resolution does).
fn types(mapper: &RestMapper, prefix: &str) -> Vec<Candidate> {
    let all = mapper.types();
    let mut out: Vec<Candidate> = all
        .iter()
        .map(|t| {
            let shared = all.iter().filter(|o| o.plural == t.plural).count() > 1;
            let core_has_it = all.iter().any(|o| o.plural == t.plural && o.group.is_empty());
            let value =
                if shared && !(t.group.is_empty() && core_has_it) { t.qualified_plural() } else { t.plural.clone() };
            let description = if t.group.is_empty() { t.kind.clone() } else { format!("{} ({})", t.kind, t.group) };
            Candidate { value, description: Some(description) }
        })
        .filter(|c| c.value.to_lowercase().starts_with(&prefix.to_lowercase()))
        .collect();
    out.sort_by(|a, b| a.value.cmp(&b.value));
    out.dedup_by(|a, b| a.value == b.value);
    out
}

/// Names of the snapshot's objects of type `ty` in the namespace `-n` names (default
/// "default", as TYPE/NAME resolution does), or in every namespace with `-A`.
fn names(mapper: &RestMapper, snapshot: Option<&Snapshot>, seen: &Seen, ty: &str, prefix: &str) -> Vec<Candidate> {
    let (Some(snapshot), Ok(rt)) = (snapshot, mapper.resolve(ty)) else { return Vec::new() };
    let ns = seen.namespace.clone().unwrap_or_else(|| "default".to_string());
    let mut out: Vec<Candidate> = snapshot
        .objects
        .iter()
        .filter(|o| o.kind == rt.kind && o.group() == rt.group && o.name.starts_with(prefix))
        .filter(|o| !rt.namespaced || seen.all_namespaces || o.namespace.as_deref() == Some(ns.as_str()))
        .map(|o| {
            let mut d = Vec::new();
            if seen.all_namespaces
                && let Some(ns) = &o.namespace
            {
                d.push(format!("namespace {ns}"));
            }
            if o.is_deleting() {
                d.push("Terminating".to_string());
            }
            Candidate { value: o.name.clone(), description: (!d.is_empty()).then(|| d.join(", ")) }
        })
        .collect();
    out.sort_by(|a, b| a.value.cmp(&b.value));
    out.dedup_by(|a, b| a.value == b.value);
    out
}

fn namespaces(seen: &Seen) -> Vec<Candidate> {
    let Some(snapshot) = load(seen) else { return Vec::new() };
    let set: BTreeSet<String> = snapshot
        .objects
        .iter()
        .filter_map(|o| {
            if o.kind == "Namespace" && o.group().is_empty() { Some(o.name.clone()) } else { o.namespace.clone() }
        })
        .collect();
    set.into_iter().map(|value| Candidate { value, description: None }).collect()
}

/// Context, cluster or user names of the kubeconfig (`--kubeconfig`, else KUBECONFIG, else
/// ~/.kube/config).
fn kubeconfig_names(which: &str, seen: &Seen) -> Vec<Candidate> {
    let config = match &seen.kubeconfig {
        Some(p) => kube::config::Kubeconfig::read_from(p),
        None => kube::config::Kubeconfig::read(),
    };
    let Ok(config) = config else { return Vec::new() };
    let names: Vec<String> = match which {
        "context" => config.contexts.into_iter().map(|c| c.name).collect(),
        "cluster" => config.clusters.into_iter().map(|c| c.name).collect(),
        _ => config.auth_infos.into_iter().map(|c| c.name).collect(),
    };
    names.into_iter().map(|value| Candidate { value, description: None }).collect()
}

/// The head of a help text, for a one-line description: up to the first `: `, `. `, `; `
/// or ` (`.
fn first_sentence(s: &clap::builder::StyledStr) -> String {
    let s = s.to_string();
    let line = s.lines().next().unwrap_or("");
    let end = [": ", ". ", "; ", " ("].iter().filter_map(|sep| line.find(sep)).min().unwrap_or(line.len());
    line[..end].trim_end_matches('.').to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(words: &[&str]) -> (Vec<String>, u32) {
        let words: Vec<String> = words.iter().map(|w| w.to_string()).collect();
        let c = complete(&words);
        (c.candidates.into_iter().map(|c| c.value).collect(), c.directive)
    }

    fn fixture(name: &str) -> String {
        format!("{}/tests/fixtures/{name}/snapshot.json", env!("CARGO_MANIFEST_DIR"))
    }

    #[test]
    fn subcommands_first_without_the_hidden_entry() {
        let (v, d) = values(&[""]);
        for s in ["why-stuck", "tree", "plan", "snapshot", "completion"] {
            assert!(v.contains(&s.to_string()), "{s} in {v:?}");
        }
        assert!(!v.iter().any(|s| s.starts_with("__")));
        assert_eq!(d, NO_FILE_COMP);
        assert_eq!(values(&["why"]).0, ["why-stuck"]);
        assert_eq!(values(&["-n", "labs", "tr"]).0, ["tree"]);
    }

    #[test]
    fn flags_of_the_subcommand_including_globals() {
        let (v, _) = values(&["tree", "--o"]);
        assert_eq!(v, ["--output", "--owners"]);
        let (v, _) = values(&["plan", "--cas"]);
        assert_eq!(v, ["--cascade"]);
        let (v, _) = values(&["why-stuck", "--"]);
        assert!(v.contains(&"--snapshot".to_string()) && v.contains(&"--context".to_string()));
    }

    #[test]
    fn enum_values_in_both_forms() {
        assert_eq!(values(&["tree", "-o", "m"]).0, ["mermaid"]);
        assert_eq!(values(&["tree", "--output=d"]).0, ["--output=dot"]);
        assert_eq!(values(&["--color", ""]).0, ["auto", "always", "never"]);
        assert_eq!(values(&["completion", ""]).0, ["bash", "zsh", "fish"]);
    }

    #[test]
    fn file_flags_fall_back_to_file_names() {
        assert_eq!(values(&["tree", "--snapshot", ""]), (vec![], DEFAULT));
        assert_eq!(values(&["tree", "--snapshot=te"]), (vec![], DEFAULT));
        assert_eq!(values(&["--kubeconfig", "x"]), (vec![], DEFAULT));
    }

    #[test]
    fn types_from_the_builtin_table_or_the_snapshot() {
        let (v, _) = values(&["tree", "deploy"]);
        assert_eq!(v, ["deployments"]);
        assert!(!values(&["tree", ""]).0.contains(&"sites".to_string()));
        let f = fixture("site-operator-gone");
        let (v, _) = values(&["tree", "--snapshot", &f, "si"]);
        assert_eq!(v, ["sites"]);
        // events: core keeps the bare name, events.k8s.io is qualified
        let (v, _) = values(&["tree", "events"]);
        assert_eq!(v, ["events", "events.events.k8s.io"]);
    }

    #[test]
    fn names_of_that_type_in_the_namespace() {
        let f = fixture("site-operator-gone");
        assert_eq!(
            values(&["tree", "--snapshot", &f, "-n", "labs", "configmap", ""]).0,
            ["alpha-audit", "alpha-config"]
        );
        assert_eq!(values(&["tree", "-nlabs", "--snapshot", &f, "site/"]).0, ["site/alpha"]);
        assert_eq!(values(&["tree", "--snapshot", &f, "configmap", ""]).0, Vec::<String>::new(), "default namespace");
        assert_eq!(values(&["tree", "--snapshot", &f, "-A", "configmap", "alpha-c"]).0, ["alpha-config"]);
        // kubectl's boolean forms: a value only after `=`
        assert_eq!(
            values(&["tree", "--snapshot", &f, "--all-namespaces=true", "configmap", "alpha-c"]).0,
            ["alpha-config"]
        );
        assert_eq!(values(&["tree", "--snapshot", &f, "-A=false", "configmap", "alpha-c"]).0, Vec::<String>::new());
        assert_eq!(values(&["tree", "--snapshot", &f, "-A", "-n", "labs", "configmap", "alpha-c"]).0, ["alpha-config"]);
        assert_eq!(values(&["why-stuck", "--snapshot", &f, "ns", "l"]).0, ["labs"], "cluster-scoped");
        assert_eq!(values(&["tree", "--snapshot", &f, "-n", ""]).0, ["kube-system", "labs", "site-system"]);
        // nothing after NAME
        assert_eq!(values(&["tree", "--snapshot", &f, "-n", "labs", "site", "alpha", ""]).0, Vec::<String>::new());
    }

    #[test]
    fn output_is_cobras_format() {
        let c = Completion {
            candidates: vec![
                Candidate { value: "tree".into(), description: Some("Show\tthe tree".into()) },
                Candidate { value: "bad\nvalue".into(), description: None },
                Candidate { value: "plain".into(), description: None },
            ],
            directive: NO_FILE_COMP,
        };
        let mut out = Vec::new();
        write(&c, &mut out).unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), "tree\tShow the tree\nplain\n:4\n");
    }
}

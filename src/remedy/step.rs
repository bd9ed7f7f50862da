//! A next step as data (contract §4.3.1): what to do, the kubectl command that does it, and how
//! far it reaches. Commands are argument vectors, not strings: the cluster they are bound to and
//! the shell quoting are added once, when they are printed ([`Command::line`]), so no name from
//! the cluster can become shell syntax or a kubectl flag, and no printed command can act on
//! another cluster than the one the answer was read from.

use std::fmt::Write as _;
use std::sync::Arc;

/// How far a step reaches, in the order steps are ranked: everything that changes nothing
/// comes before anything that restores a controller, which comes before anything that stops,
/// deletes or strips something.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Reach {
    /// Reads only: look at logs, events, an object.
    Inspect,
    /// Changes the cluster without taking anything away: scale a controller back up, restore
    /// a backend, re-queue an object for its controller, restart a component.
    Restore,
    /// Takes something away that comes back (scaling a workload down, deleting pods a
    /// controller recreates) or changes how a deletion proceeds.
    Disrupt,
    /// Cannot be undone and may strand what a finalizer guards: removing a finalizer, deleting
    /// a configuration, force-deleting a pod.
    Destructive,
}

impl Reach {
    /// The contract's `destructive` flag: anything past restoring.
    pub fn destructive(self) -> bool {
        self >= Reach::Disrupt
    }
}

/// One ranked next step.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Step {
    /// What to do and why, as prose without the command; shared, as the step is when many
    /// findings print it (one patch for 2,000 finalizers is one text, not 2,000).
    pub text: Arc<str>,
    /// The command to run, if the step is one; printed, never executed.
    pub command: Option<Command>,
    /// How far it reaches: steps are ranked by it, safest first.
    pub reach: Reach,
}

impl Step {
    /// A step with an optional command.
    pub fn new(reach: Reach, text: impl Into<Arc<str>>, command: Option<Command>) -> Step {
        Step { text: text.into(), command, reach }
    }
    /// Adds a sentence to the text.
    pub fn append(&mut self, sentence: &str) {
        self.text = format!("{}{sentence}", self.text).into();
    }
    /// Advice with no command (what to check, what not to do).
    pub fn advice(reach: Reach, text: impl Into<Arc<str>>) -> Step {
        Step::new(reach, text, None)
    }
    /// A step that runs `command`.
    pub fn run(reach: Reach, text: impl Into<Arc<str>>, command: Command) -> Step {
        Step::new(reach, text, Some(command))
    }
}

/// One step of a printed answer: steps that say the same thing at the same reach, once, with
/// every distinct command they carry — the same finalizer removal on 40 objects of a
/// namespace is one heading with 40 commands.
#[derive(Debug)]
pub struct Grouped<'a> {
    /// The first of the steps grouped.
    pub step: &'a Step,
    /// Their distinct commands, in the order first seen.
    pub commands: Vec<&'a Command>,
}

/// Groups steps by (reach, text) and ranks the groups safest first, first seen first among
/// equals; linear in the number of steps.
pub fn group<'a>(steps: impl IntoIterator<Item = &'a Step>) -> Vec<Grouped<'a>> {
    let mut at: rustc_hash::FxHashMap<(Reach, &str), usize> = Default::default();
    let mut seen: rustc_hash::FxHashSet<(usize, &Command)> = Default::default();
    let mut out: Vec<Grouped> = Vec::new();
    for s in steps {
        let k = *at.entry((s.reach, &*s.text)).or_insert_with(|| {
            out.push(Grouped { step: s, commands: Vec::new() });
            out.len() - 1
        });
        if let Some(c) = &s.command
            && seen.insert((k, c))
        {
            out[k].commands.push(c);
        }
    }
    out.sort_by_key(|g| g.step.reach);
    out
}

/// One step of a whole answer (contract §4.3 `steps`): a step with one command (or none), and
/// the indexes of the findings whose remedy holds it.
#[derive(Debug)]
pub struct Served<'a> {
    /// The first of the steps with this text, reach and command.
    pub step: &'a Step,
    /// Its command; `None` for advice.
    pub command: Option<&'a Command>,
    /// The findings it serves (indexes into the answer's findings), in order, each once.
    pub findings: Vec<usize>,
}

/// The whole answer's steps, in the order [`group`] prints them: groups of the same text and
/// reach ranked safest first (first seen first among equals), each group's distinct commands
/// in the order first seen, one entry per command (advice without a command is one entry, and
/// joins the group's first command when the group has one). `steps` pairs each step with the
/// index of the finding it comes from. Linear in the number of steps.
pub fn served<'a>(steps: impl IntoIterator<Item = (usize, &'a Step)>) -> Vec<Served<'a>> {
    use rustc_hash::FxHashMap as HashMap;
    let mut groups: HashMap<(Reach, &str), usize> = HashMap::default();
    let mut at: HashMap<(usize, Option<&Command>), usize> = HashMap::default();
    // (group, entry), in the order first seen
    let mut out: Vec<(usize, Served)> = Vec::new();
    for (i, s) in steps {
        let next = groups.len();
        let k = *groups.entry((s.reach, &*s.text)).or_insert(next);
        let e = *at.entry((k, s.command.as_ref())).or_insert_with(|| {
            out.push((k, Served { step: s, command: s.command.as_ref(), findings: Vec::new() }));
            out.len() - 1
        });
        let served = &mut out[e].1.findings;
        if served.last() != Some(&i) {
            served.push(i);
        }
    }
    // advice in a group that also has commands: the text prints only the commands, so its
    // findings join the group's first command
    let mut first_command: HashMap<usize, usize> = HashMap::default();
    for (e, (k, s)) in out.iter().enumerate() {
        if s.command.is_some() {
            first_command.entry(*k).or_insert(e);
        }
    }
    for e in 0..out.len() {
        if out[e].1.command.is_none()
            && let Some(&into) = first_command.get(&out[e].0)
        {
            let moved = std::mem::take(&mut out[e].1.findings);
            let into = &mut out[into].1.findings;
            into.extend(moved);
            into.sort_unstable();
            into.dedup();
        }
    }
    let mut entries: Vec<(Reach, usize, usize, Served)> = out
        .into_iter()
        .enumerate()
        .filter(|(_, (k, s))| s.command.is_some() || !first_command.contains_key(k))
        .map(|(e, (k, s))| (s.step.reach, k, e, s))
        .collect();
    // groups safest first, first seen first among equals; a group's entries as first seen
    entries.sort_by_key(|(reach, k, e, _)| (*reach, *k, *e));
    entries.into_iter().map(|(.., s)| s).collect()
}

/// Sorts steps safest first, keeping the order of equals (stable).
pub fn rank(steps: &mut [Step]) {
    steps.sort_by_key(|s| s.reach);
}

/// A `kubectl` invocation: the subcommand, positional arguments (resource and names, which may
/// come from the cluster) and flags (`-n NS`, `--type json`, …).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Command(Arc<Parts>);

/// What a [`Command`] is made of; shared between the findings that print it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Parts {
    verb: Vec<String>,
    positionals: Vec<String>,
    flags: Vec<(String, Option<String>)>,
    /// A kubectl plugin's command (`kubectl gc …`): kubectl finds a plugin only by the words
    /// before the first flag, so the connection's flags go after the subcommand.
    plugin: bool,
    /// The request it sends that admission judges, when it changes an object of the answer.
    sends: Option<Sends>,
}

/// The request a printed command sends, for checking it against the answer's refusals
/// (`diagnose::causes::check_steps`). Never printed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Sends {
    /// The object it changes.
    pub object: crate::graph::NodeId,
    /// What admission sees of it (a patch is an UPDATE).
    pub op: crate::admission::Operation,
    /// What it does to the object.
    pub effect: Effect,
}

/// What a printed command does to the object it changes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Effect {
    /// Any other change.
    Change,
    /// Its only use is to make a controller send its own request again (a re-queue): useless
    /// when that request is refused.
    Nudge,
    /// It removes finalizers: whatever they guard is left behind.
    RemoveFinalizers,
}

impl Command {
    /// `kubectl <verb…>`, e.g. `Command::kubectl(["rollout", "restart"])`.
    pub fn kubectl<const N: usize>(verb: [&str; N]) -> Command {
        Command(Arc::new(Parts {
            verb: verb.iter().map(|s| s.to_string()).collect(),
            positionals: Vec::new(),
            flags: Vec::new(),
            plugin: false,
            sends: None,
        }))
    }
    /// `kubectl gc <verb…>`: this plugin's own command, e.g. `Command::gc(["why-stuck"])`.
    pub fn gc<const N: usize>(verb: [&str; N]) -> Command {
        let mut c = Command::kubectl(verb);
        let p = Arc::make_mut(&mut c.0);
        p.verb.insert(0, "gc".to_string());
        p.plugin = true;
        c
    }
    /// A positional argument (`deployment/x`); quoted when printed, as it may come from the cluster.
    pub fn arg(mut self, a: impl Into<String>) -> Command {
        Arc::make_mut(&mut self.0).positionals.push(a.into());
        self
    }
    /// A flag with a value (`-n labs`, `--type json`).
    pub fn flag(mut self, name: &str, value: impl Into<String>) -> Command {
        Arc::make_mut(&mut self.0).flags.push((name.to_string(), Some(value.into())));
        self
    }
    /// A flag without a value (`--force`).
    pub fn switch(mut self, name: &str) -> Command {
        Arc::make_mut(&mut self.0).flags.push((name.to_string(), None));
        self
    }
    /// Records the request the command sends (see [`Sends`]).
    pub fn sending(mut self, sends: Sends) -> Command {
        Arc::make_mut(&mut self.0).sends = Some(sends);
        self
    }
    /// The request the command sends, when it changes an object of the answer.
    pub fn sends(&self) -> Option<&Sends> {
        self.0.sends.as_ref()
    }
    /// `-n NS` when the object is namespaced.
    pub fn namespace(self, ns: Option<&str>) -> Command {
        match ns {
            Some(ns) => self.flag("-n", ns),
            None => self,
        }
    }

    /// One shell line: `kubectl`, the connection's flags, the subcommand, then the words (a
    /// plugin's: `kubectl gc`, the subcommand, then the connection's flags and the words).
    /// Every word from data is quoted; a positional that begins with `-` is put after `--`
    /// (flags first), and a flag value that begins with `-` is joined with `=`, so neither can
    /// be read as a flag. Long flags are written `--name=value`, as kubectl's own examples are.
    pub fn line(&self, connection: &Connection) -> String {
        let p = &*self.0;
        let mut out = String::from("kubectl");
        let mut word = |w: &str| {
            out.push(' ');
            out.push_str(&shell_word(w));
        };
        let flag_words = |flags: &[(String, Option<String>)], word: &mut dyn FnMut(&str)| {
            for (name, value) in flags {
                match value {
                    Some(v) if v.starts_with('-') || name.starts_with("--") => word(&format!("{name}={v}")),
                    Some(v) => {
                        word(name);
                        word(v);
                    }
                    None => word(name),
                }
            }
        };
        if !p.plugin {
            flag_words(&connection.flags, &mut word);
        }
        for v in &p.verb {
            word(v);
        }
        if p.plugin {
            flag_words(&connection.flags, &mut word);
        }
        if p.positionals.iter().any(|p| p.starts_with('-')) {
            flag_words(&p.flags, &mut word);
            word("--");
            for p in &p.positionals {
                word(p);
            }
        } else {
            for p in &p.positionals {
                word(p);
            }
            flag_words(&p.flags, &mut word);
        }
        out
    }
}

/// The cluster an answer was read from, as the flags that name it on a kubectl command line.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Connection {
    flags: Vec<(String, Option<String>)>,
    /// Why no flag names the cluster, said once with the answer (an arbitrary snapshot file).
    pub unbound: Option<String>,
}

impl Connection {
    /// No cluster named, and why (the answer says it once).
    pub fn unbound(why: impl Into<String>) -> Connection {
        Connection { flags: Vec::new(), unbound: Some(why.into()) }
    }
    /// Adds `--name value` (kubectl's connection flags: `--context`, `--kubeconfig`, …).
    pub fn with(mut self, name: &str, value: impl Into<String>) -> Connection {
        self.flags.push((name.to_string(), Some(value.into())));
        self
    }
    /// True when some flag names the cluster, so a printed command acts on the one read.
    pub fn is_bound(&self) -> bool {
        !self.flags.is_empty()
    }
}

/// A word as a POSIX shell reads it back unchanged: bare when it holds only characters no
/// shell treats specially, single-quoted otherwise, and in bash's `$'…'` form when it holds
/// control characters (so a command stays one line).
pub fn shell_word(s: &str) -> String {
    let safe = |c: char| c.is_ascii_alphanumeric() || "-_./:@%+=,".contains(c);
    if !s.is_empty() && s.chars().all(safe) {
        return s.to_string();
    }
    // bidi controls too: a terminal would reorder the line, and text output escapes them
    let special = |c: char| c.is_control() || crate::names::is_bidi(c);
    if s.chars().any(special) {
        let mut out = String::from("$'");
        for c in s.chars() {
            match c {
                '\'' => out.push_str("\\'"),
                '\\' => out.push_str("\\\\"),
                '\n' => out.push_str("\\n"),
                '\r' => out.push_str("\\r"),
                '\t' => out.push_str("\\t"),
                c if c.is_control() && (c as u32) < 0x80 => {
                    let _ = write!(out, "\\x{:02x}", c as u32);
                }
                c if special(c) => {
                    let _ = write!(out, "\\u{:04x}", c as u32);
                }
                c => out.push(c),
            }
        }
        out.push('\'');
        return out;
    }
    format!("'{}'", s.replace('\'', r"'\''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_are_quoted_only_when_needed() {
        assert_eq!(shell_word("sites.own.labhub.io"), "sites.own.labhub.io");
        assert_eq!(shell_word("a b"), "'a b'");
        assert_eq!(shell_word("$(rm -rf /)"), "'$(rm -rf /)'");
        assert_eq!(shell_word("it's"), r"'it'\''s'");
        assert_eq!(shell_word(""), "''");
        assert_eq!(shell_word("x\ny"), r"$'x\ny'");
        assert_eq!(shell_word("a'\u{1b}"), r"$'a\'\x1b'");
        assert_eq!(shell_word("a\u{202e}b"), r"$'a\u202eb'");
    }

    #[test]
    fn the_connection_comes_first_and_names_never_become_flags() {
        let c = Connection::default().with("--context", "prod east");
        let cmd = Command::kubectl(["delete"]).arg("apiservice").arg("--all").namespace(Some("-x"));
        assert_eq!(cmd.line(&c), "kubectl '--context=prod east' delete -n=-x -- apiservice --all");
        let plain = Command::kubectl(["scale"]).arg("deployment/web").namespace(Some("shop")).flag("--replicas", "1");
        assert_eq!(plain.line(&Connection::default()), "kubectl scale deployment/web -n shop --replicas=1");
    }

    #[test]
    fn the_answers_steps_are_ranked_across_findings_and_name_the_findings_they_serve() {
        let patch = |n: &str| Command::kubectl(["patch"]).arg(n);
        let a = [Step::run(Reach::Destructive, "remove it", patch("a")), Step::advice(Reach::Inspect, "look")];
        let b = [
            Step::run(Reach::Destructive, "remove it", patch("b")),
            Step::advice(Reach::Inspect, "look"),
            Step::advice(Reach::Restore, "bring it back"),
        ];
        let steps = a.iter().map(|s| (0, s)).chain(b.iter().map(|s| (1, s)));
        let got: Vec<(&str, Option<&Command>, Vec<usize>)> =
            served(steps).into_iter().map(|s| (s.step.text.as_ref(), s.command, s.findings)).collect();
        let (pa, pb) = (patch("a"), patch("b"));
        assert_eq!(
            got,
            [
                ("look", None, vec![0, 1]),
                ("bring it back", None, vec![1]),
                ("remove it", Some(&pa), vec![0]),
                ("remove it", Some(&pb), vec![1]),
            ]
        );
    }

    #[test]
    fn ranking_is_stable_and_safest_first() {
        let mut steps = vec![
            Step::advice(Reach::Destructive, "d"),
            Step::advice(Reach::Inspect, "i1"),
            Step::advice(Reach::Restore, "r"),
            Step::advice(Reach::Inspect, "i2"),
        ];
        rank(&mut steps);
        let order: Vec<&str> = steps.iter().map(|s| &*s.text).collect();
        assert_eq!(order, ["i1", "i2", "r", "d"]);
        assert!(!Reach::Restore.destructive() && Reach::Disrupt.destructive());
    }
}

//! Text for people: `why-stuck` reads like a runbook (verdict and root cause first, then the
//! evidence, then the next step); `tree` is an indented tree with deletion state inline.

use std::collections::BTreeMap;
use std::io::{self, Write};

use crate::age;
use crate::controllers::ControllerState;
use crate::diagnose::step::{self, Grouped};
use crate::diagnose::{
    Connection, Diagnosis, FindingCode, GcVerdict, Severity, Subject, Verdict, describe, removed_by_clause,
};
use crate::graph::{Graph, NodeId};
use crate::tree::{Direction, Tree};

use super::style::{Style, sanitize};

/// `why-stuck` for people: verdict and root cause first, then the evidence, then next steps.
pub fn write_why_stuck(g: &Graph, d: &Diagnosis, conn: &Connection, st: Style, w: &mut impl Write) -> io::Result<()> {
    writeln!(w, "{}", st.wrap(&verdict_line(g, d, st), "", "  "))?;
    let roots = Roots::of(d);
    write_root_causes(g, d, &roots, st, w)?;
    write_finalizers(d, st, w)?;
    write_findings(g, d, &roots, st, w)?;
    write_events(g, d, st, w)?;
    write_next_steps(d, conn, st, w)?;
    write_incomplete(d, st, w)
}

/// The answer in one line: the verdict, the object, how long it has been terminating.
fn verdict_line(g: &Graph, d: &Diagnosis, st: Style) -> String {
    let target = sanitize(&describe(g, d.object));
    let age = age::human(d.deleting_for_seconds.unwrap_or(0));
    match d.verdict() {
        Verdict::NotDeleting => {
            let gc = match d.gc_verdict {
                GcVerdict::Collected => " but the garbage collector will delete it: no owner reference is solid",
                GcVerdict::NeverActedOn => {
                    "; the garbage collector will never act on it (an owner reference it cannot resolve)"
                }
                GcVerdict::Kept => "; it has a solid owner",
                GcVerdict::Untold => {
                    "; whether the garbage collector keeps it cannot be told (an owner could not be read)"
                }
                GcVerdict::NoOwners => "",
            };
            format!("{} {target} is not being deleted{gc}.", st.strong("NOT DELETING"))
        }
        Verdict::Stuck if d.deletion_timestamp.is_none() => format!(
            "{} {target} is not being deleted, but what its deletion would wait on will not finish without someone acting.",
            st.bad("STUCK")
        ),
        Verdict::Stuck => format!(
            "{} {target} has been terminating for {age} and will not finish without someone acting.",
            st.bad("STUCK")
        ),
        // a finding that cannot tell earns no "in progress"
        Verdict::Unknown => format!(
            "{} {target} has been terminating for {age}; whether anything will finish it could not be told (see Findings).",
            st.strong("UNKNOWN")
        ),
        Verdict::InProgress => {
            // where the end is known, when (a pod in its grace period on a live node)
            let when = crate::diagnose::kills_at(g, d)
                .map(|(t, left)| {
                    format!(" The kubelet kills it at {}, in {}.", t.strftime("%H:%M:%S"), age::human(left))
                })
                .unwrap_or_default();
            format!(
                "{} {target} has been terminating for {age}; its deletion is in progress.{when}",
                st.good("IN PROGRESS")
            )
        }
    }
}

/// Which findings are root causes: the Error findings on the objects stuck on their own
/// account; where none is an Error (a claim a running pod holds: the controller is right to
/// wait), their findings as they are.
struct Roots<'d> {
    d: &'d Diagnosis,
    error_roots: bool,
}

impl<'d> Roots<'d> {
    fn of(d: &'d Diagnosis) -> Roots<'d> {
        let error_roots = d.findings.iter().any(|f| Self::rooted(d, f) && f.severity == Severity::Error);
        Roots { d, error_roots }
    }
    // root_causes is sorted: a binary search keeps 40k stuck objects linear
    fn rooted(d: &Diagnosis, f: &crate::diagnose::Finding) -> bool {
        d.root_causes.binary_search(&f.object).is_ok()
    }
    fn is_root(&self, f: &crate::diagnose::Finding) -> bool {
        Self::rooted(self.d, f)
            && (f.severity == Severity::Error || (!self.error_roots && f.code != FindingCode::NotBeingDeleted))
    }
}

/// The root causes, finalizers grouped by the controller that must remove them.
fn write_root_causes(g: &Graph, d: &Diagnosis, roots: &Roots, st: Style, w: &mut impl Write) -> io::Result<()> {
    if d.stuck && d.findings.iter().any(|f| roots.is_root(f)) {
        writeln!(w, "\n{}", st.strong("Root cause"))?;
        // objects whose finalizers wait on the same controller that is down or missing: the
        // controller once, then the objects
        let mut by_controller: BTreeMap<(String, String), Vec<String>> = BTreeMap::new();
        for f in d.findings.iter().filter(|f| roots.is_root(f)) {
            match (f.code, &f.subject) {
                (
                    FindingCode::FinalizerControllerDown | FindingCode::FinalizerControllerMissing,
                    Subject::Finalizer { name, owner },
                ) => {
                    by_controller
                        .entry((f.code.as_str().to_string(), removed_by_clause(g, owner, name)))
                        .or_default()
                        .push(format!("{} keeps {name}", describe(g, f.object)));
                }
                _ => {
                    let line = format!("{} {}", st.bad(f.code.as_str()), sanitize(&f.message));
                    writeln!(w, "{}", st.wrap(&line, "  ", "      "))?
                }
            }
        }
        for ((code, controller), objects) in &by_controller {
            let line = format!("{} {}", st.bad(code), sanitize(controller));
            writeln!(w, "{}", st.wrap(&line, "  ", "      "))?;
            for o in objects.iter().take(LISTED) {
                writeln!(w, "{}", st.wrap(&sanitize(o), "      ", "        "))?;
            }
            if objects.len() > LISTED {
                writeln!(w, "      … and {} more (-o json lists them all)", objects.len() - LISTED)?;
            }
        }
    }
    Ok(())
}

/// The target's finalizers, each with who removes it, its state and the evidence.
fn write_finalizers(d: &Diagnosis, st: Style, w: &mut impl Write) -> io::Result<()> {
    if !d.finalizers.is_empty() {
        writeln!(w, "\n{}", st.strong("Finalizers"))?;
        for f in &d.finalizers {
            let state = match f.owner.controller {
                ControllerState::Alive => st.good("Alive"),
                ControllerState::Down => st.bad("Down"),
                ControllerState::Missing => st.bad("Missing"),
                ControllerState::Unknown => st.warn("Unknown"),
            };
            let line = format!(
                "{}  removed by {} [{state}]",
                sanitize(&f.name),
                sanitize(f.owner.removed_by.as_deref().unwrap_or(if f.owner.added_by_person.is_some() {
                    "no controller (a person added it)"
                } else {
                    "an unidentified controller"
                }))
            );
            writeln!(w, "{}", st.wrap(&line, "  ", "      "))?;
            for e in &f.owner.evidence {
                writeln!(w, "{}", st.wrap(&st.dim(&sanitize(e)), "      ", "        "))?;
            }
        }
    }
    Ok(())
}

/// The evidence: the findings that are not root causes, then a namespace's content grouped.
fn write_findings(g: &Graph, d: &Diagnosis, roots: &Roots, st: Style, w: &mut impl Write) -> io::Result<()> {
    let (content, rest): (Vec<_>, Vec<_>) =
        d.findings.iter().partition(|f| f.code == FindingCode::NamespaceContentRemaining);
    let shown: Vec<_> =
        rest.iter().filter(|f| f.code != FindingCode::NotBeingDeleted && !(d.stuck && roots.is_root(f))).collect();
    if !shown.is_empty() {
        writeln!(w, "\n{}", st.strong(if d.stuck { "What waits on it" } else { "Findings" }))?;
        for f in &shown {
            let code = match f.severity {
                Severity::Error => st.bad(f.code.as_str()),
                Severity::Warning => st.warn(f.code.as_str()),
                Severity::Info => st.dim(f.code.as_str()),
            };
            writeln!(w, "{}", st.wrap(&format!("{code}  {}", sanitize(&describe(g, f.object))), "  ", "      "))?;
            writeln!(w, "{}", st.wrap(&sanitize(&f.message), "      ", "      "))?;
        }
    }
    if !content.is_empty() {
        writeln!(w, "\n{} ({} object(s))", st.strong("Content still in the namespace"), content.len())?;
        let mut by_finalizers: BTreeMap<String, Vec<NodeId>> = BTreeMap::new();
        for f in &content {
            let fins = g.object(f.object).map(|o| o.finalizers.join(", ")).unwrap_or_default();
            by_finalizers.entry(fins).or_default().push(f.object);
        }
        for (fins, objs) in &by_finalizers {
            let label = if fins.is_empty() { "no finalizers".to_string() } else { format!("waiting on {fins}") };
            writeln!(w, "{}", st.wrap(&format!("{} object(s), {}:", objs.len(), sanitize(&label)), "  ", "    "))?;
            for o in objs.iter().take(LISTED) {
                writeln!(w, "    {}", sanitize(&describe(g, *o)))?;
            }
            if objs.len() > LISTED {
                writeln!(w, "    … and {} more (-o json lists them all)", objs.len() - LISTED)?;
            }
        }
    }
    Ok(())
}

/// What the controllers reported: recent Warning events, quoted.
fn write_events(g: &Graph, d: &Diagnosis, st: Style, w: &mut impl Write) -> io::Result<()> {
    if !d.events.is_empty() {
        writeln!(w, "\n{}", st.strong("Recent Warning events"))?;
        for oe in &d.events {
            let more = if oe.total_warnings > oe.warnings.len() {
                format!(" ({} of {})", oe.warnings.len(), oe.total_warnings)
            } else {
                String::new()
            };
            writeln!(w, "{}", st.wrap(&format!("{}{more}", sanitize(&describe(g, oe.object))), "  ", "    "))?;
            for e in &oe.warnings {
                let line = sanitize(&crate::diagnose::events::describe_event(e, d.now));
                writeln!(w, "{}", st.wrap(&line, "      ", "        "))?;
            }
        }
    }
    Ok(())
}

/// The next steps, ranked safest first, each command on one line to paste.
fn write_next_steps(d: &Diagnosis, conn: &Connection, st: Style, w: &mut impl Write) -> io::Result<()> {
    let remedies = next_steps(d);
    if !remedies.is_empty() {
        writeln!(w, "\n{}", st.strong("Next steps (safest first; nothing was changed)"))?;
        for (i, r) in remedies.iter().enumerate() {
            let mark = if r.step.reach.destructive() { st.warn(" [destructive]") } else { String::new() };
            let count = if r.commands.len() > 1 {
                format!(" ({} objects, one command each)", r.commands.len())
            } else {
                String::new()
            };
            let number = format!("  {}. ", i + 1);
            let line = format!("{}{count}{mark}", sanitize(&r.step.text));
            writeln!(w, "{}", st.wrap(&line, &number, &" ".repeat(number.len())))?;
            // a command is never wrapped: it stays one line to paste
            for c in &r.commands {
                writeln!(w, "       {}", sanitize(&c.line(conn)))?;
            }
        }
        if let Some(why) = &conn.unbound
            && remedies.iter().any(|r| !r.commands.is_empty())
        {
            let line = st.dim(&sanitize(&format!("(these commands name no cluster: {why})")));
            writeln!(w, "{}", st.wrap(&line, "  ", "   "))?;
        }
    }
    Ok(())
}

/// What the answer could not see.
fn write_incomplete(d: &Diagnosis, st: Style, w: &mut impl Write) -> io::Result<()> {
    if !d.incomplete.is_empty() {
        writeln!(w, "\n{}", st.warn("Incomplete: the answer could not see"))?;
        for i in &d.incomplete {
            writeln!(w, "{}", st.wrap(&sanitize(i), "  - ", "    "))?;
        }
    }
    Ok(())
}

/// Objects listed by name in a group before "… and N more".
const LISTED: usize = 20;

/// Deeper levels are not drawn, only numbered: a 10,000-deep chain stays readable and linear.
const MAX_DRAWN_DEPTH: usize = 32;

/// For each entry, whether no later sibling follows it (one backward pass).
fn last_siblings(tree: &Tree) -> Vec<bool> {
    let mut out = vec![true; tree.entries.len()];
    let mut seen: Vec<bool> = Vec::new();
    for (i, e) in tree.entries.iter().enumerate().rev() {
        seen.truncate(e.depth + 1);
        seen.resize(e.depth + 1, false);
        out[i] = !seen[e.depth];
        seen[e.depth] = true;
    }
    out
}

/// `tree`: kubectl-tree's columns (NAME drawn as a tree, READY, STATUS, AGE), then what the
/// garbage collector cares about: the edge's flags, the deletion and its finalizers, problems.
pub fn write_tree(g: &Graph, tree: &Tree, now_s: i64, st: Style, w: &mut impl Write) -> io::Result<()> {
    let root_ns = tree.entries.first().and_then(|e| g.identity(e.node).namespace);
    let is_last = last_siblings(tree);
    // first pass: the cells (whether the ancestor at each depth was the last of its siblings)
    let mut rows: Vec<[String; 4]> = Vec::with_capacity(tree.entries.len());
    let mut conts: Vec<String> = Vec::with_capacity(tree.entries.len());
    let mut last_at_depth: Vec<bool> = Vec::new();
    for (i, e) in tree.entries.iter().enumerate() {
        last_at_depth.truncate(e.depth);
        let mut prefix = String::new();
        for d in 1..e.depth.min(MAX_DRAWN_DEPTH) {
            prefix.push_str(if last_at_depth.get(d).copied().unwrap_or(true) { "    " } else { "│   " });
        }
        if e.depth >= MAX_DRAWN_DEPTH {
            prefix.push_str(&format!("… [depth {}] ", e.depth));
        }
        // where a wrapped line goes on: under the entry, the tree's guides kept
        let mut cont = prefix.clone();
        if e.depth > 0 {
            prefix.push_str(if is_last[i] { "└── " } else { "├── " });
            cont.push_str(if is_last[i] { "    " } else { "│   " });
        }
        let has_children = tree.entries.get(i + 1).is_some_and(|n| n.depth > e.depth);
        cont.push_str(if has_children { "│     " } else { "      " });
        conts.push(cont);
        last_at_depth.push(is_last[i]);
        let id = &g.identity(e.node);
        let mut name = format!("{}/{}", id.kind, id.name);
        if id.namespace != root_ns
            && let Some(ns) = &id.namespace
        {
            name = format!("{name} -n {ns}");
        }
        let (ready, status, age) = match g.object(e.node) {
            None if e.recreated_as.is_some() => ("-".to_string(), "Recreated".to_string(), "-".to_string()),
            None => ("-".to_string(), "Absent".to_string(), "-".to_string()),
            Some(o) => {
                let ready = o.condition("Ready").map(|c| c.status.to_string()).filter(|s| !s.is_empty());
                let status = if o.is_deleting() {
                    "Terminating".to_string()
                } else {
                    match o.condition("Ready") {
                        Some(c) if !c.is_true() && !c.reason.is_empty() => c.reason.to_string(),
                        _ => o.str_field("/status/phase").unwrap_or("-").to_string(),
                    }
                };
                let age = o.creation_timestamp.map(|c| age::human(now_s - c.as_second())).unwrap_or("-".into());
                (ready.unwrap_or_else(|| "-".into()), status, age)
            }
        };
        rows.push([format!("{prefix}{}", sanitize(&name)), sanitize(&ready), sanitize(&status), age]);
    }
    // column widths, capped so one long name does not push every row off the screen
    let width = |k: usize, cap: usize| rows.iter().map(|r| super::style::columns(&r[k])).max().unwrap_or(0).min(cap);
    let widths = [width(0, 64).max(4), width(1, 8).max(5), width(2, 24).max(6)];
    let pad = |s: &str, n: usize| {
        let c = super::style::columns(s);
        if c >= n { s.to_string() } else { format!("{s}{}", " ".repeat(n - c)) }
    };
    writeln!(w, "{}  {}  {}  AGE", pad("NAME", widths[0]), pad("READY", widths[1]), pad("STATUS", widths[2]))?;
    for ((e, row), cont) in tree.entries.iter().zip(&rows).zip(&conts) {
        let status = match row[2].as_str() {
            "Terminating" => st.warn(&pad(&row[2], widths[2])),
            "Absent" | "Recreated" => st.bad(&pad(&row[2], widths[2])),
            _ => pad(&row[2], widths[2]),
        };
        let columns =
            format!("{}  {}  {status}  {}", st.strong(&pad(&row[0], widths[0])), pad(&row[1], widths[1]), row[3]);
        // what follows the columns: wrapped at --width (the columns themselves stay whole)
        let line = annotations(g, e, now_s, st);
        let line = line.trim();
        if line.is_empty() {
            writeln!(w, "{}", columns.trim_end())?;
        } else {
            writeln!(w, "{}", st.wrap_after(line, &format!("{}  ", columns.trim_end()), cont))?;
        }
    }
    if tree.entries.len() == 1 {
        let what = match tree.direction {
            Direction::Dependents => "no dependents",
            Direction::Owners => "no owners",
        };
        writeln!(w, "{}", st.dim(&format!("({what})")))?;
    }
    Ok(())
}

/// What `tree` says after an entry's columns: the edge's flags, the deletion and its
/// finalizers, a recreated or absent owner, problems.
fn annotations(g: &Graph, e: &crate::tree::Entry, now_s: i64, st: Style) -> String {
    let mut line = String::new();
    if let Some(edge) = e.edge {
        let mut marks = Vec::new();
        if edge.controller {
            marks.push("controller");
        }
        if edge.block_owner_deletion {
            marks.push("blockOwnerDeletion");
        }
        if !marks.is_empty() {
            line.push_str(&st.dim(&format!("  [{}]", marks.join(", "))));
        }
    }
    match (g.object(e.node), e.recreated_as) {
        (None, Some(live)) => line.push_str(&st.bad(&format!(
            "  (uid {} not found: {} has uid {} now, the owner was recreated; the GC treats this owner as absent)",
            sanitize(&g.identity(e.node).uid.0),
            sanitize(&crate::diagnose::describe(g, live)),
            sanitize(&g.identity(live).uid.0)
        ))),
        (None, None) => line.push_str(&st.bad("  (referenced, not found)")),
        (Some(o), _) => {
            if let Some(asked) = o.deletion_requested_at() {
                line.push_str(&format!("  deleting for {}", age::human(now_s - asked.as_second())));
                if !o.finalizers.is_empty() {
                    line.push_str(&format!(" [{}]", sanitize(&o.finalizers.join(", "))));
                }
            }
        }
    }
    if e.repeated {
        line.push_str(&st.dim("  (shown above)"));
    }
    if !e.problems.is_empty() {
        let codes: Vec<&str> = e.problems.iter().map(|p| p.as_str()).collect();
        line.push_str(&format!("  {}", st.bad(&format!("⚠ {}", codes.join(", ")))));
    }
    line
}

/// Every step of the answer, grouped and ranked safest first across all findings.
fn next_steps(d: &Diagnosis) -> Vec<Grouped<'_>> {
    step::group(d.findings.iter().flat_map(|f| &f.remedy))
}

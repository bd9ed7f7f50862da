//! `why-stuck --all`: a summary table (comfy-table, kubectl's borderless style), then each
//! group — its cause, its next steps once for the whole group, its objects — and the JSON
//! wire shape of contract §4.3.2.

use std::collections::BTreeSet;
use std::io::{self, Write};

use comfy_table::{ContentArrangement, Table, presets};
use serde::Serialize;

use crate::age;
use crate::diagnose::{Connection, describe};
use crate::graph::Graph;
use crate::sweep::{Culprit, Group, Sweep, Verdict};

use super::json::{ObjectRef, WhyStuckJson, object_ref, related_ref, why_stuck};
use super::style::{Style, sanitize};

/// Objects listed per group before "… and N more" (JSON lists them all).
const OBJECTS_SHOWN: usize = 20;

/// Contract §4.3.2: the groups, each with its verdict, and every answer.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SweepJson {
    /// One per root cause.
    pub groups: Vec<GroupJson>,
    /// One `why-stuck` answer per object, in group order.
    pub answers: Vec<WhyStuckJson>,
    /// What could not be read.
    pub incomplete: Vec<String>,
}

/// One group: its cause and its objects, oldest first.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GroupJson {
    /// What holds the objects.
    pub cause: CauseJson,
    /// `Stuck`, `Unknown` or `InProgress`.
    pub verdict: &'static str,
    /// The objects, oldest deletion first.
    pub objects: Vec<ObjectRef>,
    /// How long the oldest has been deleting.
    pub oldest_deleting_for_seconds: i64,
}

/// A group's root cause.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CauseJson {
    /// null when nothing holds the objects (no finding).
    pub code: Option<&'static str>,
    /// The oldest object's cause, and how many more share it.
    pub message: String,
    /// What the cause names (the controller's workload, a webhook configuration, …).
    pub related: Vec<ObjectRef>,
}

/// The wire value of a sweep.
pub fn to_json(g: &Graph, s: &Sweep, conn: &Connection) -> SweepJson {
    SweepJson {
        groups: s
            .groups
            .iter()
            .map(|grp| GroupJson {
                cause: CauseJson {
                    code: grp.cause.code.map(|c| c.as_str()),
                    message: grp.cause.message.clone(),
                    related: grp.cause.related.iter().map(|r| related_ref(g, r)).collect(),
                },
                verdict: grp.verdict.as_str(),
                objects: grp.objects.iter().map(|&o| object_ref(g, o)).collect(),
                oldest_deleting_for_seconds: grp.oldest_deleting_for_seconds,
            })
            .collect(),
        answers: s.answers.iter().map(|d| why_stuck(g, d, conn)).collect(),
        incomplete: s.incomplete.clone(),
    }
}

/// What a group's cause is about, in a few words: the controller, the garbage collector, or
/// the objects named.
pub fn culprit_label(g: &Graph, grp: &Group) -> String {
    match &grp.cause.culprit {
        Culprit::Controller(who) => who.clone(),
        Culprit::GarbageCollector => "garbage collector".to_string(),
        Culprit::Objects(nodes) => {
            let mut names: Vec<String> = nodes.iter().take(3).map(|&n| describe(g, n)).collect();
            if nodes.len() > 3 {
                names.push(format!("{} more", nodes.len() - 3));
            }
            names.join(", ")
        }
        Culprit::Object(n) => describe(g, *n),
        Culprit::Nothing => "nothing holds them".to_string(),
    }
}

fn code(grp: &Group) -> &'static str {
    grp.cause.code.map_or("Terminating", |c| c.as_str())
}

fn verdict_word(v: Verdict) -> &'static str {
    match v {
        Verdict::Stuck => "stuck",
        Verdict::Unknown => "unknown",
        Verdict::InProgress => "in progress",
        Verdict::NotDeleting => "not deleting",
    }
}

fn namespaces(g: &Graph, grp: &Group) -> String {
    let ns: BTreeSet<&str> = grp.objects.iter().filter_map(|&o| g.identity(o).namespace).collect();
    match ns.len() {
        0 => "-".to_string(),
        1..=3 => ns.into_iter().collect::<Vec<_>>().join(","),
        n => format!("{n} namespaces"),
    }
}

/// Characters a wrapped summary cell keeps.
const CELL_CHARS: usize = 240;

/// `s` cut to [`CELL_CHARS`], with `…` where it was cut.
fn cut_cell(s: String) -> String {
    match s.char_indices().nth(CELL_CHARS) {
        Some((at, _)) => format!("{}…", &s[..at]),
        None => s,
    }
}

/// The summary table: one row per group, kubectl's borderless columns. Arrangement is fixed
/// (no terminal probing in a renderer), so the same answer gives the same bytes.
pub fn summary_table(g: &Graph, s: &Sweep, width: Option<usize>) -> Table {
    let mut t = Table::new();
    // within the text's width when it has one (cells wrap at spaces), else as wide as it needs
    let arrangement = if width.is_some() { ContentArrangement::Dynamic } else { ContentArrangement::Disabled };
    if let Some(w) = width {
        t.set_width(u16::try_from(w).unwrap_or(u16::MAX));
    }
    t.load_style(presets::NOTHING).set_content_arrangement(arrangement).set_header([
        "CAUSE",
        "VERDICT",
        "OBJECTS",
        "NAMESPACES",
        "OLDEST",
    ]);
    // comfy-table wraps a cell by re-measuring what is left of it for every line it cuts: a
    // cell of a hostile length (a controller or object name of megabytes) would take time
    // quadratic in it, and a table cell of more than a few lines helps no one (the group's
    // text below says it whole)
    let cell = |s: String| if width.is_some() { cut_cell(s) } else { s };
    for grp in &s.groups {
        t.add_row([
            cell(sanitize(&format!("{} ({})", code(grp), culprit_label(g, grp)))),
            verdict_word(grp.verdict).to_string(),
            grp.objects.len().to_string(),
            cell(sanitize(&namespaces(g, grp))),
            age::human(grp.oldest_deleting_for_seconds),
        ]);
    }
    t
}

/// Text for people: the verdict, the summary table, then each group's cause, next steps and
/// objects.
pub fn write_text(g: &Graph, s: &Sweep, conn: &Connection, st: Style, w: &mut impl Write) -> io::Result<()> {
    let count = |v: Verdict| s.groups.iter().filter(|grp| grp.verdict == v).map(|grp| grp.objects.len()).sum::<usize>();
    let (stuck, unknown, moving) = (count(Verdict::Stuck), count(Verdict::Unknown), count(Verdict::InProgress));
    let groups = |v: Verdict| s.groups.iter().filter(|grp| grp.verdict == v).count();
    // 1. the verdict
    // a failed read that may hide a deletion: the exit code is 3, and "nothing" is never said alone
    let unseen = match s.unseen {
        0 => None,
        1 => Some("1 read that could show deletions failed (below)".to_string()),
        n => Some(format!("{n} reads that could show deletions failed (below)")),
    };
    if s.answers.is_empty() && s.left_out == 0 {
        let head = match (&unseen, &s.absent_namespace) {
            (Some(why), _) => format!("{} no object in scope was seen being deleted, but {why}.", st.strong("UNKNOWN")),
            // what was read, not what exists: a file may hold some namespaces only
            (None, Some(ns)) => format!(
                "{} nothing in scope is being deleted; no namespace {} was read (a typo? `kubectl get namespaces` lists them).",
                st.good("NOTHING TERMINATING"),
                sanitize(&format!("{ns:?}"))
            ),
            (None, None) => format!("{} nothing in scope is being deleted.", st.good("NOTHING TERMINATING")),
        };
        writeln!(w, "{}", st.wrap(&head, "", ""))?;
    } else if stuck > 0 {
        let head = format!(
            "{} {stuck} object(s) will not finish deleting without someone acting, for {} cause(s).",
            st.bad("STUCK"),
            groups(Verdict::Stuck)
        );
        writeln!(w, "{}", st.wrap(&head, "", ""))?;
    } else if unknown > 0 {
        // the exit code is 3: the first line says why, never "nothing stuck" alone
        let head = format!(
            "{} nothing in scope was found stuck, but {unknown} object(s) could not be judged, for {} cause(s).",
            st.strong("UNKNOWN"),
            groups(Verdict::Unknown)
        );
        writeln!(w, "{}", st.wrap(&head, "", ""))?;
    } else if let Some(why) = &unseen {
        let head = format!("{} no deletion seen in scope is stuck, but {why}.", st.strong("UNKNOWN"));
        writeln!(w, "{}", st.wrap(&head, "", ""))?;
    } else {
        writeln!(w, "{} no deletion in scope is stuck.", st.good("NOTHING STUCK"))?;
    }
    let mut also = Vec::new();
    if unknown > 0 && stuck > 0 {
        also.push(format!("{unknown} cannot be judged"));
    }
    if let Some(why) = unseen.filter(|_| stuck > 0 || unknown > 0) {
        also.push(why);
    }
    if moving > 0 {
        also.push(format!("{moving} in progress"));
    }
    if s.left_out > 0 {
        also.push(format!("{} in progress not shown (--stuck-only)", s.left_out));
    }
    if !also.is_empty() {
        writeln!(w, "{}", st.wrap(&st.dim(&format!("Also: {}.", also.join("; "))), "", "  "))?;
    }
    if s.groups.is_empty() {
        return write_incomplete(s, st, w);
    }
    // 2. the summary
    writeln!(w)?;
    let table = summary_table(g, s, st.width).to_string();
    for line in table.lines() {
        writeln!(w, "{}", line.trim_end())?;
    }
    // 3. each group: cause, next steps once, objects
    let mut heading = None;
    for (n, grp) in s.groups.iter().enumerate() {
        let section = match grp.verdict {
            Verdict::Stuck => "Stuck",
            Verdict::Unknown => "Cannot be judged",
            Verdict::InProgress => "In progress",
            Verdict::NotDeleting => "Not being deleted",
        };
        if heading != Some(section) {
            writeln!(w, "\n{}", st.strong(&format!("== {section}")))?;
            heading = Some(section);
        }
        write_group(g, s, n, grp, conn, st, w)?;
    }
    if let Some(why) = &conn.unbound
        && s.groups.iter().any(|grp| grp.remedy.iter().any(|r| !r.commands.is_empty()))
    {
        writeln!(w, "\n{}", st.wrap(&st.dim(&sanitize(&format!("(these commands name no cluster: {why})"))), "", ""))?;
    }
    writeln!(w, "\n{}", st.dim("kubectl gc why-stuck TYPE/NAME explains one object in full."))?;
    write_incomplete(s, st, w)
}

/// One group of `why-stuck --all`: its cause, its next steps once, its objects oldest first.
fn write_group(
    g: &Graph,
    s: &Sweep,
    n: usize,
    grp: &crate::sweep::Group,
    conn: &Connection,
    st: Style,
    w: &mut impl Write,
) -> io::Result<()> {
    let code = match grp.verdict {
        Verdict::Stuck => st.bad(code(grp)),
        Verdict::Unknown => st.warn(code(grp)),
        Verdict::InProgress | Verdict::NotDeleting => st.dim(code(grp)),
    };
    let head = format!(
        "{code}  {} — {} object(s), oldest {}",
        sanitize(&culprit_label(g, grp)),
        grp.objects.len(),
        age::human(grp.oldest_deleting_for_seconds)
    );
    writeln!(w, "\n{}", st.wrap(&head, &format!("{}. ", n + 1), "   "))?;
    writeln!(w, "{}", st.wrap(&sanitize(&grp.cause.message), "   ", "   "))?;
    if !grp.remedy.is_empty() {
        writeln!(w, "   {}", st.strong("Next steps for the group (safest first; nothing was changed)"))?;
        for (i, r) in grp.remedy.iter().enumerate() {
            let mark = if r.step.reach.destructive() { st.warn(" [destructive]") } else { String::new() };
            let per = if r.commands.len() > 1 { format!(" ({} commands)", r.commands.len()) } else { String::new() };
            let text = format!("{}{per}{mark}", sanitize(&r.step.text));
            writeln!(w, "{}", st.wrap(&text, &format!("   {}. ", i + 1), "      "))?;
            for c in &r.commands {
                writeln!(w, "        {}", sanitize(&c.line(conn)))?;
            }
        }
    }
    writeln!(w, "   {}", st.strong("Objects (oldest first)"))?;
    for (&o, &a) in grp.objects.iter().zip(&grp.answers).take(OBJECTS_SHOWN) {
        let age = s.answers[a].deleting_for_seconds.unwrap_or(0);
        writeln!(w, "     {}  {}", sanitize(&describe(g, o)), st.dim(&format!("terminating {}", age::human(age))))?;
    }
    if grp.objects.len() > OBJECTS_SHOWN {
        writeln!(w, "     … and {} more (-o json lists them all)", grp.objects.len() - OBJECTS_SHOWN)?;
    }
    Ok(())
}

fn write_incomplete(s: &Sweep, st: Style, w: &mut impl Write) -> io::Result<()> {
    if !s.incomplete.is_empty() {
        writeln!(w, "\n{}", st.warn("Incomplete: the answer could not see"))?;
        for i in &s.incomplete {
            writeln!(w, "{}", st.wrap(&sanitize(i), "  - ", "    "))?;
        }
    }
    if s.namespaces_unlisted && s.unseen > 0 {
        let hint = "The namespaces could not be listed: an identity that may read only some of them gets its answer for one with `kubectl gc why-stuck --all -n <namespace>`, which reads that namespace by name.";
        writeln!(w, "\n{}", st.wrap(hint, "", ""))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_long_cell_is_cut_where_it_would_wrap_for_lines() {
        assert_eq!(super::cut_cell("short".into()), "short");
        let long = "é".repeat(super::CELL_CHARS + 5);
        let cut = super::cut_cell(long);
        assert_eq!(cut.chars().count(), super::CELL_CHARS + 1);
        assert!(cut.ends_with("é…"));
    }
}

//! `tree -o dot`: the tree as a Graphviz digraph (`kubectl gc tree … -o dot | dot -Tsvg`).
//!
//! Arrows always point from owner to dependent ("owns"), whichever way the tree was walked.
//! Objects are grouped in one cluster per namespace; cluster-scoped objects stand outside.
//! Terminating, stuck (a finalizer whose controller is down or missing) and absent (virtual)
//! objects, blocking (`blockOwnerDeletion`) and invalid references are styled apart, and a
//! legend explains the styles. Every label is a quoted DOT string, escaped.

use std::io::{self, Write};

use crate::graph::Graph;
use crate::tree::Tree;

use super::picture::{self, Edge, Node, Picture};

const FONT: &str = "Helvetica";
const INK: &str = "#374151";
const TERMINATING_FILL: &str = "#fef3c7";
const TERMINATING_INK: &str = "#b45309";
const STUCK_FILL: &str = "#fee2e2";
const STUCK_INK: &str = "#b91c1c";
const ABSENT_FILL: &str = "#f3f4f6";
const ABSENT_INK: &str = "#6b7280";
const BLOCKING_INK: &str = "#1d4ed8";

/// A tree as a Graphviz `digraph`.
pub fn write_tree(g: &Graph, tree: &Tree, w: &mut impl Write) -> io::Result<()> {
    write_picture(&picture::build(g, tree), w)
}

/// A picture as a Graphviz `digraph`.
pub fn write_picture(p: &Picture, w: &mut impl Write) -> io::Result<()> {
    let walk = p.direction.as_str();
    let root = p.root().map(|n| n.title.as_str()).unwrap_or("");
    writeln!(w, "// kubectl gc tree: {} of {}; render with: dot -Tsvg -o tree.svg", walk, comment(root))?;
    writeln!(w, "digraph \"kubectl-gc\" {{")?;
    writeln!(w, "  graph [rankdir=LR, fontname=\"{FONT}\", fontsize=11, nodesep=0.3, ranksep=0.6];")?;
    writeln!(
        w,
        "  node [shape=box, style=\"rounded,filled\", fillcolor=\"#ffffff\", color=\"{INK}\", fontname=\"{FONT}\", fontsize=10];"
    )?;
    writeln!(w, "  edge [color=\"{INK}\", fontname=\"{FONT}\", fontsize=9];")?;
    // one cluster per namespace, then the cluster-scoped objects
    for (i, ns) in p.namespaces().into_iter().enumerate() {
        writeln!(w, "  subgraph cluster_ns{i} {{")?;
        writeln!(
            w,
            "    label={}; labeljust=l; style=\"rounded,dashed\"; color=\"#9ca3af\"; fontcolor=\"#4b5563\";",
            quote(&format!("namespace {ns}"))
        )?;
        for n in p.nodes.iter().filter(|n| n.namespace.as_deref() == Some(ns)) {
            write_node(n, "    ", w)?;
        }
        writeln!(w, "  }}")?;
    }
    for n in p.nodes.iter().filter(|n| n.namespace.is_none()) {
        write_node(n, "  ", w)?;
    }
    for e in &p.edges {
        write_edge(e, w)?;
    }
    write_legend(w)?;
    writeln!(w, "}}")
}

fn write_node(n: &Node, indent: &str, w: &mut impl Write) -> io::Result<()> {
    let mut label = n.title.clone();
    for d in &n.details {
        label.push('\n');
        label.push_str(d);
    }
    write!(w, "{indent}n{} [label={}", n.id.0, quote(&label))?;
    write!(w, ", class={}", quote(&classes(n).join(" ")))?;
    write_node_style(n, w)?;
    writeln!(w, "];")
}

/// The state classes of a node (SVG `class`, and what the style below follows).
pub fn classes(n: &Node) -> Vec<&'static str> {
    let mut c = vec!["object"];
    if n.root {
        c.push("root");
    }
    if n.absent {
        c.push("absent");
    }
    if n.terminating {
        c.push("terminating");
    }
    if n.stuck {
        c.push("stuck");
    }
    c
}

fn write_node_style(n: &Node, w: &mut impl Write) -> io::Result<()> {
    let penwidth = if n.root {
        3
    } else if n.stuck {
        2
    } else {
        1
    };
    if n.absent {
        write!(
            w,
            ", style=\"rounded,filled,dashed\", fillcolor=\"{ABSENT_FILL}\", color=\"{ABSENT_INK}\", fontcolor=\"{ABSENT_INK}\""
        )?;
    } else if n.stuck {
        write!(w, ", fillcolor=\"{STUCK_FILL}\", color=\"{STUCK_INK}\"")?;
    } else if n.terminating {
        write!(w, ", fillcolor=\"{TERMINATING_FILL}\", color=\"{TERMINATING_INK}\"")?;
    }
    if penwidth > 1 {
        write!(w, ", penwidth={penwidth}")?;
    }
    Ok(())
}

fn write_edge(e: &Edge, w: &mut impl Write) -> io::Result<()> {
    write!(w, "  n{} -> n{}", e.owner.0, e.dependent.0)?;
    let mut attrs: Vec<String> = Vec::new();
    let mut class = vec!["owns"];
    if e.controller {
        class.push("controller");
    } else {
        attrs.push("arrowhead=onormal".to_string());
    }
    if e.blocking {
        class.push("blocking");
        attrs.push("penwidth=2.5".to_string());
    }
    if e.invalid.is_some() {
        class.push("invalid");
        attrs.push(format!("style=dashed, color=\"{STUCK_INK}\", fontcolor=\"{STUCK_INK}\""));
    } else if e.blocking {
        attrs.push(format!("color=\"{BLOCKING_INK}\""));
    }
    if let Some(label) = e.label() {
        attrs.push(format!("label={}", quote(&label)));
    }
    attrs.insert(0, format!("class={}", quote(&class.join(" "))));
    writeln!(w, " [{}];", attrs.join(", "))
}

/// The legend: one table (an HTML-like label) with a swatch for each node state and a sample
/// of each kind of edge, so it takes no rank of the graph and stays compact.
fn write_legend(w: &mut impl Write) -> io::Result<()> {
    let cell = |fill: &str, ink: &str, style: &str, text: &str| {
        format!(
            "<td bgcolor=\"{fill}\" color=\"{ink}\" style=\"rounded{style}\" border=\"1\"><font color=\"{ink}\">{text}</font></td>"
        )
    };
    let arrow = |ink: &str, glyph: &str, text: &str| {
        format!("<td align=\"left\"><font color=\"{ink}\">{glyph}</font> {text}</td>")
    };
    let rows = [
        (cell("#ffffff", INK, "", "object"), arrow(INK, "&#8212;&#8212;&#9654;", "owns (controller)")),
        (
            cell(TERMINATING_FILL, TERMINATING_INK, "", "terminating"),
            arrow(INK, "&#8212;&#8212;&#9655;", "owns (not controller)"),
        ),
        (
            cell(STUCK_FILL, STUCK_INK, "", "stuck: finalizer's controller down or missing"),
            arrow(BLOCKING_INK, "<b>&#9473;&#9473;&#9654;</b>", "blockOwnerDeletion"),
        ),
        (
            cell(ABSENT_FILL, ABSENT_INK, ",dashed", "absent: referenced, not found"),
            arrow(STUCK_INK, "- - &#9654;", "invalid or dangling reference"),
        ),
    ];
    let mut table = String::from("<table border=\"0\" cellspacing=\"4\" cellpadding=\"2\">");
    for (state, edge) in rows {
        table.push_str(&format!("<tr>{state}{edge}</tr>"));
    }
    table.push_str(
        "<tr><td border=\"3\" style=\"rounded\" color=\"#374151\">the object asked about</td><td></td></tr></table>",
    );
    writeln!(w, "  subgraph cluster_legend {{")?;
    writeln!(
        w,
        "    label=\"Legend\"; labeljust=l; style=\"rounded\"; color=\"#d1d5db\"; fontcolor=\"#4b5563\"; fontsize=10;"
    )?;
    writeln!(w, "    legend [shape=plaintext, style=\"\", fontsize=9, margin=0, label=<{table}>];")?;
    writeln!(w, "  }}")
}

/// A DOT quoted string (`"…"`): backslashes and quotes escaped, so a name can neither end
/// the string nor form an escape such as `\N` or `\l`; newlines become DOT's `\n`.
pub fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => {}
            // the rule every output follows: shown escaped, as text shows it
            c if super::style::is_unsafe(c) => {
                out.push_str(&super::style::sanitize(&c.to_string()).replace('\\', "\\\\"))
            }
            _ => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Text for a `//` comment line: no line breaks.
fn comment(s: &str) -> String {
    s.replace(['\n', '\r'], " ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::NodeId;

    fn node(id: u32, f: impl FnOnce(&mut Node)) -> Node {
        let mut n = Node {
            id: NodeId(id),
            title: format!("ConfigMap/c{id}"),
            namespace: Some("ns".into()),
            details: vec![],
            root: false,
            absent: false,
            terminating: false,
            stuck: false,
        };
        f(&mut n);
        n
    }

    #[test]
    fn each_state_has_its_own_style() {
        let p = Picture {
            direction: crate::tree::Direction::Dependents,
            nodes: vec![
                node(0, |n| n.root = true),
                node(1, |n| n.terminating = true),
                node(2, |n| (n.terminating, n.stuck) = (true, true)),
                node(3, |n| (n.absent, n.namespace) = (true, None)),
            ],
            edges: vec![],
        };
        let mut out = Vec::new();
        write_picture(&p, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        let line =
            |id: &str| text.lines().find(|l| l.trim_start().starts_with(&format!("{id} ["))).unwrap().to_string();
        assert!(line("n0").contains("class=\"object root\"") && line("n0").contains("penwidth=3"));
        assert!(line("n1").contains(&format!("fillcolor=\"{TERMINATING_FILL}\"")));
        assert!(line("n2").contains(&format!("fillcolor=\"{STUCK_FILL}\"")) && line("n2").contains("penwidth=2"));
        assert!(line("n3").contains("dashed") && line("n3").contains(&format!("fillcolor=\"{ABSENT_FILL}\"")));
        assert!(!text.contains("n1 -> "), "no edges made up");
    }

    #[test]
    fn quoting_cannot_end_the_string_or_form_escapes() {
        assert_eq!(quote("plain"), "\"plain\"");
        assert_eq!(quote("a\"b"), "\"a\\\"b\"");
        assert_eq!(quote("x\\N\\ly"), "\"x\\\\N\\\\ly\"");
        assert_eq!(quote("two\nlines"), "\"two\\nlines\"");
        assert_eq!(quote("rtl\u{202e}x\u{9b}"), r#""rtl\\u{202e}x\\u{9b}""#);
        assert_eq!(quote("ünï <b>{x|y}</b>"), "\"ünï <b>{x|y}</b>\"");
    }
}

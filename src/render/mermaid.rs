//! `tree -o mermaid`: the tree as a Mermaid flowchart, for Markdown (GitHub, GitLab) and
//! incident notes. The same picture as `-o dot`: owner → dependent arrows, one subgraph per
//! namespace, classDefs for terminating, stuck, absent and the root; thick links for
//! `blockOwnerDeletion`, dotted red links for invalid or dangling references.
//!
//! Labels are written as `#<code>;` entity codes for every character outside a small safe
//! set, so quotes, brackets, pipes and markup in a name cannot break the syntax.

use std::io::{self, Write};

use crate::graph::Graph;
use crate::tree::Tree;

use super::picture::{self, Node, Picture};

/// A tree as a Mermaid `flowchart`.
pub fn write_tree(g: &Graph, tree: &Tree, w: &mut impl Write) -> io::Result<()> {
    write_picture(&picture::build(g, tree), w)
}

/// A picture as a Mermaid `flowchart`.
pub fn write_picture(p: &Picture, w: &mut impl Write) -> io::Result<()> {
    let walk = p.direction.as_str();
    let root = p.root().map(|n| n.title.as_str()).unwrap_or("");
    writeln!(w, "%% kubectl gc tree: {walk} of {}", escape(root))?;
    writeln!(w, "flowchart LR")?;
    for (i, ns) in p.namespaces().into_iter().enumerate() {
        writeln!(w, "  subgraph ns{i}[\"namespace {}\"]", escape(ns))?;
        for n in p.nodes.iter().filter(|n| n.namespace.as_deref() == Some(ns)) {
            write_node(n, "    ", w)?;
        }
        writeln!(w, "  end")?;
    }
    for n in p.nodes.iter().filter(|n| n.namespace.is_none()) {
        write_node(n, "  ", w)?;
    }
    let mut blocking = Vec::new();
    let mut invalid = Vec::new();
    for (i, e) in p.edges.iter().enumerate() {
        let arrow = if e.invalid.is_some() {
            invalid.push(i);
            "-.->"
        } else if e.blocking {
            blocking.push(i);
            "==>"
        } else {
            "-->"
        };
        match e.label() {
            Some(label) => writeln!(w, "  n{} {arrow}|{}| n{}", e.owner.0, escape(&label), e.dependent.0)?,
            None => writeln!(w, "  n{} {arrow} n{}", e.owner.0, e.dependent.0)?,
        }
    }
    writeln!(w, "  classDef object fill:#ffffff,stroke:#374151,color:#111827")?;
    writeln!(w, "  classDef terminating fill:#fef3c7,stroke:#b45309,color:#111827")?;
    writeln!(w, "  classDef stuck fill:#fee2e2,stroke:#b91c1c,stroke-width:2px,color:#111827")?;
    writeln!(w, "  classDef absent fill:#f3f4f6,stroke:#6b7280,stroke-dasharray:5 5,color:#6b7280")?;
    writeln!(w, "  classDef root stroke-width:3px")?;
    for class in ["object", "terminating", "stuck", "absent", "root"] {
        let members: Vec<String> = p
            .nodes
            .iter()
            .filter(|n| super::dot::classes(n).contains(&class))
            .map(|n| format!("n{}", n.id.0))
            .collect();
        if !members.is_empty() {
            writeln!(w, "  class {} {class}", members.join(","))?;
        }
    }
    if !blocking.is_empty() {
        writeln!(w, "  linkStyle {} stroke:#1d4ed8,stroke-width:2.5px", join(&blocking))?;
    }
    if !invalid.is_empty() {
        writeln!(w, "  linkStyle {} stroke:#b91c1c", join(&invalid))?;
    }
    Ok(())
}

fn write_node(n: &Node, indent: &str, w: &mut impl Write) -> io::Result<()> {
    let mut label = escape(&n.title);
    for d in &n.details {
        label.push_str("<br/>");
        label.push_str(&escape(d));
    }
    let (open, close) = if n.absent { ("[/", "/]") } else { ("[", "]") };
    writeln!(w, "{indent}n{}{open}\"{label}\"{close}", n.id.0)
}

fn join(ix: &[usize]) -> String {
    ix.iter().map(|i| i.to_string()).collect::<Vec<_>>().join(",")
}

/// Mermaid entity codes (`#34;`) for everything but letters, digits and ` ./:_-,!`, so no
/// character of a name is syntax (quotes, brackets, pipes, `<`, `%%`, `;`).
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if c.is_ascii_alphanumeric() || matches!(c, ' ' | '.' | '/' | ':' | '_' | '-' | ',' | '!') {
            out.push(c);
        } else {
            out.push_str(&format!("#{};", c as u32));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::escape;

    #[test]
    fn names_cannot_break_the_syntax() {
        assert_eq!(escape("web-59d7.f45ffb"), "web-59d7.f45ffb");
        assert_eq!(escape("a\"b|c]d"), "a#34;b#124;c#93;d");
        assert_eq!(escape("<script>"), "#60;script#62;");
        assert_eq!(escape("%%x;"), "#37;#37;x#59;");
    }
}

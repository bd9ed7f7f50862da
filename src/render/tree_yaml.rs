//! `tree -o yaml`: the JSON shape (contract §4.4) in block YAML, written node by node from
//! the tree's flat entries, never through a nested value (which parsers and serializers
//! bound by depth: a 64-level owner chain used to fail). Block YAML indents each level, so
//! below [`BLOCK_DEPTH`] levels a subtree is written in flow style (its JSON, which is YAML
//! too) to keep the output linear in the tree's size.

use std::io::{self, Write};

use crate::graph::Graph;
use crate::tree::Tree;

use super::json::{tree_head, write_subtree};

/// Levels written in block style; deeper subtrees are one flow-style line each.
pub const BLOCK_DEPTH: usize = 32;

/// `tree -o yaml`: the JSON tree's shape, block style for the first [`BLOCK_DEPTH`] levels.
pub fn write_tree(g: &Graph, tree: &Tree, w: &mut impl Write) -> io::Result<()> {
    let key = tree.direction.as_str();
    let mut i = 0;
    while let Some(e) = tree.entries.get(i) {
        let depth = e.depth;
        // a node at depth d ≥ 1 is an item of its parent's list, indented 2(d-1)
        let pad = "  ".repeat(depth.saturating_sub(1));
        let (first, rest) =
            if depth == 0 { (String::new(), String::new()) } else { (format!("{pad}- "), format!("{pad}  ")) };
        if depth > BLOCK_DEPTH {
            w.write_all(first.as_bytes())?;
            i = write_subtree(g, tree, i, None, w)?;
            w.write_all(b"\n")?;
        } else {
            let head = super::safe_yaml::to_string(&tree_head(g, e))?;
            for (n, line) in head.lines().enumerate() {
                let lead = if n == 0 { &first } else { &rest };
                writeln!(w, "{lead}{line}")?;
            }
            if depth == 0 {
                let inc = g.gaps();
                if inc.is_empty() {
                    writeln!(w, "incomplete: []")?;
                } else {
                    writeln!(w, "incomplete:")?;
                    for item in inc {
                        writeln!(w, "- {}", super::safe_json::to_string(&item.to_string())?)?;
                    }
                }
            }
            i += 1;
            let has_children = tree.entries.get(i).is_some_and(|n| n.depth > depth);
            writeln!(w, "{rest}{key}:{}", if has_children { "" } else { " []" })?;
        }
    }
    Ok(())
}

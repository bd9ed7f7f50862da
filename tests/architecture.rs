//! The layer order of docs/design.md, enforced: source → snapshot → graph → diagnose / plan /
//! tree → render → cli. Each library module (src/lib.rs) may `use crate::…` only the modules
//! its row below lists; its tests (`#[cfg(test)]` items and the files they declare) may reach
//! across, as tests exercise the whole flow. A module added to src/lib.rs fails here until it
//! is given a row, and the rows must form no cycle.
//!
//! The cli is the binary crate (src/main.rs, src/cli/): it sees the library only through
//! `kubectl_gc::`, and the library cannot name it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Each module, and what it may import, lowest layer first.
const ALLOWED: &[(&str, &[&str])] = &[
    // helpers for any layer: names and quoting, ages
    ("names", &[]),
    ("age", &[]),
    // the objects as read: plain data
    ("snapshot", &["names"]),
    // the REST mapper, from the snapshot's discovery data
    ("discovery", &["names", "snapshot"]),
    // the only I/O: files and the cluster into snapshots; executes the asks of a read plan
    ("source", &["names", "snapshot", "discovery"]),
    // the GC's graph
    ("graph", &["snapshot", "discovery"]),
    // which Kubernetes release the input comes from
    ("release", &["snapshot", "graph"]),
    // the GC's decisions, admission in front of the API server, who removes a finalizer
    ("collector", &["names", "snapshot", "discovery", "graph"]),
    ("admission", &["names", "snapshot", "discovery", "graph"]),
    ("controllers", &["age", "names", "snapshot", "graph"]),
    // next steps as data: what to do, the command, how far it reaches, the request it sends
    ("remedy", &["age", "names", "snapshot", "graph", "collector", "admission", "controllers"]),
    // the analyses (pure); diagnose and plan are peers: neither imports the other
    (
        "diagnose",
        &[
            "age",
            "names",
            "snapshot",
            "discovery",
            "graph",
            "release",
            "collector",
            "admission",
            "controllers",
            "remedy",
        ],
    ),
    ("plan", &["names", "snapshot", "discovery", "graph", "release", "collector", "admission", "controllers"]),
    ("tree", &["graph", "collector", "controllers", "diagnose"]),
    ("sweep", &["snapshot", "graph", "controllers", "diagnose"]),
    ("watch", &["graph", "diagnose"]),
    // what a live answer reads: the analyses' needs as asks that source executes
    (
        "reads",
        &[
            "names",
            "snapshot",
            "discovery",
            "graph",
            "release",
            "admission",
            "controllers",
            "diagnose",
            "sweep",
            "source",
        ],
    ),
    // text, JSON, YAML, DOT, mermaid
    ("render", &["age", "names", "graph", "collector", "controllers", "diagnose", "plan", "tree", "sweep"]),
    // drivers of the whole flow, as the cli is: the fuzz entry points, and test helpers
    ("fuzz", &["*"]),
    ("testing", &["*"]),
];

fn src() -> PathBuf {
    crate::support::root().join("src")
}

/// The modules src/lib.rs declares.
fn declared() -> BTreeSet<String> {
    let lib = std::fs::read_to_string(src().join("lib.rs")).unwrap();
    lib.lines()
        .filter_map(|l| l.trim().strip_prefix("pub mod ").or_else(|| l.trim().strip_prefix("pub(crate) mod ")))
        .map(|m| m.trim_end_matches(';').to_string())
        .collect()
}

/// The text without comments (`//` to the end of the line, outside string literals).
fn without_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.lines() {
        let mut in_str = false;
        let mut prev = ' ';
        let mut cut = line.len();
        for (i, c) in line.char_indices() {
            if c == '"' && prev != '\\' {
                in_str = !in_str;
            }
            if !in_str && c == '/' && prev == '/' {
                cut = i - 1;
                break;
            }
            prev = c;
        }
        out.push_str(&line[..cut]);
        out.push('\n');
    }
    out
}

/// The code that is not under `#[cfg(test)]`, and the modules of `#[cfg(test)] mod x;` (as
/// `@file` when a `#[path]` names the file).
fn outside_tests(code: &str) -> (String, Vec<String>) {
    let mut out = String::new();
    let mut test_mods = Vec::new();
    let mut rest = code;
    while let Some(at) = rest.find("#[cfg(test)]") {
        out.push_str(&rest[..at]);
        let item = &rest[at + "#[cfg(test)]".len()..];
        // the item ends at its first `;` at depth 0, or with its balanced block
        let mut depth = 0usize;
        let mut end = item.len();
        for (i, c) in item.char_indices() {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        end = i + 1;
                        break;
                    }
                }
                ';' if depth == 0 => {
                    end = i + 1;
                    break;
                }
                _ => {}
            }
        }
        let head = item[..end].trim();
        if head.ends_with(';')
            && let Some(name) = head.trim_end_matches(';').split_whitespace().last()
            && head.split_whitespace().any(|w| w == "mod")
        {
            // `#[path = "x_tests.rs"] mod tests;` names its file, beside this one
            match head.split_once("#[path = \"").and_then(|(_, r)| r.split_once('"')) {
                Some((file, _)) => test_mods.push(format!("@{file}")),
                None => test_mods.push(name.to_string()),
            }
        }
        rest = &item[end..];
    }
    out.push_str(rest);
    (out, test_mods)
}

/// The top-level modules `code` names through `crate::`: `crate::x::…` and each name at the
/// first level of `crate::{x, y::{…}}`.
fn imports(code: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let ident = |s: &str| s.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect::<String>();
    for (at, _) in code.match_indices("crate::") {
        // `$crate::` in macros and `kubectl_gc::crate`-like words are not this crate's path
        if code[..at].ends_with(|c: char| c.is_alphanumeric() || c == '_' || c == '$') {
            continue;
        }
        let after = &code[at + "crate::".len()..];
        if let Some(list) = after.strip_prefix('{') {
            let mut depth = 0usize;
            let mut word_start = true;
            for (i, c) in list.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => word_start = true,
                    c if c.is_whitespace() => {}
                    _ if word_start && depth == 0 => {
                        out.insert(ident(&list[i..]));
                        word_start = false;
                    }
                    _ => {}
                }
            }
        } else {
            out.insert(ident(after));
        }
    }
    out.remove("");
    out
}

/// Every library file with its top-level module, leaving out the binary's and the files that
/// `#[cfg(test)] mod x;` declares.
fn library_files() -> Vec<(String, PathBuf, String)> {
    let mut files = Vec::new();
    let mut stack = vec![src()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") {
                files.push(p);
            }
        }
    }
    files.sort();
    let mut test_files: BTreeSet<PathBuf> = BTreeSet::new();
    let mut out = Vec::new();
    for p in &files {
        let rel = p.strip_prefix(src()).unwrap();
        let top = rel.components().next().unwrap().as_os_str().to_string_lossy().trim_end_matches(".rs").to_string();
        if ["main", "lib", "cli", "bin"].contains(&top.as_str()) {
            continue;
        }
        let (code, test_mods) = outside_tests(&without_comments(&std::fs::read_to_string(p).unwrap()));
        // `mod x;` in a/mod.rs or a.rs is a/x.rs or a/x/mod.rs; in a/b.rs it is a/b/x.rs
        let stem = p.file_stem().unwrap().to_string_lossy();
        let base = if stem == "mod" || p.parent() == Some(src().as_path()) && stem == "lib" {
            p.parent().unwrap().to_path_buf()
        } else {
            p.with_extension("")
        };
        for m in test_mods {
            if let Some(file) = m.strip_prefix('@') {
                test_files.insert(p.parent().unwrap().join(file));
                continue;
            }
            test_files.insert(base.join(format!("{m}.rs")));
            test_files.insert(base.join(&m).join("mod.rs"));
        }
        out.push((top, p.clone(), code));
    }
    // files under a test module's directory are test code too
    let under_test = |p: &Path| test_files.iter().any(|t| p == t || p.starts_with(t.with_extension("")));
    out.into_iter().filter(|(_, p, _)| !under_test(p)).collect()
}

#[test]
fn every_module_imports_only_what_its_layer_allows() {
    let table: BTreeMap<&str, &[&str]> = ALLOWED.iter().copied().collect();
    let declared = declared();
    for m in &declared {
        assert!(table.contains_key(m.as_str()), "src/lib.rs declares `{m}`, which has no row in ALLOWED: place it");
    }
    for m in table.keys() {
        assert!(declared.contains(*m), "ALLOWED has a row for `{m}`, which src/lib.rs does not declare");
    }
    let mut violations = Vec::new();
    let mut checked = 0;
    for (top, path, code) in library_files() {
        let allowed = table[top.as_str()];
        for used in imports(&code) {
            checked += 1;
            if used == top || used == "self" || allowed.contains(&"*") || allowed.contains(&used.as_str()) {
                continue;
            }
            assert!(declared.contains(&used), "{}: crate::{used} is no module of src/lib.rs", path.display());
            violations.push(format!("{}: `{top}` uses crate::{used}", path.strip_prefix(src()).unwrap().display()));
        }
    }
    assert!(checked > 200, "only {checked} imports seen: the scan is broken");
    assert!(
        violations.is_empty(),
        "imports against the layer order (tests/architecture.rs):\n{}",
        violations.join("\n")
    );
}

#[test]
fn the_layer_table_has_no_cycle() {
    let table: BTreeMap<&str, &[&str]> = ALLOWED.iter().copied().collect();
    // each row may name only rows above it: the table is its own topological order
    for (i, (m, deps)) in ALLOWED.iter().enumerate() {
        for d in deps.iter().filter(|d| **d != "*") {
            let at = ALLOWED.iter().position(|(n, _)| n == d).unwrap_or_else(|| panic!("{m} allows unknown {d}"));
            assert!(at < i, "`{m}` may import `{d}`, which comes after it: a cycle is possible");
            assert!(table.contains_key(d));
        }
    }
}

/// The scan itself: comments, test items, `crate::{…}` lists and `$crate` are read right.
#[test]
fn the_scan_reads_imports_as_rustc_does() {
    let code = without_comments(
        "use crate::graph::Graph; // crate::render is only named here\n\
         use crate::{diagnose::{self, Step}, snapshot};\n\
         let x = crate::plan::plan(g);\n\
         let url = \"http://crate::tree\";\n\
         macro_rules! m { () => { $crate::watch::x() } }\n\
         #[cfg(test)]\nmod tests { use crate::render::text; }\n\
         #[cfg(test)]\nmod more;\n\
         #[cfg(test)]\n#[path = \"x_tests.rs\"]\nmod tests;\n",
    );
    let (code, test_mods) = outside_tests(&code);
    assert_eq!(test_mods, ["more", "@x_tests.rs"]);
    let got: Vec<String> = imports(&code).into_iter().collect();
    // the string literal is not skipped by the scan: it would only ever over-report
    assert_eq!(got, ["diagnose", "graph", "plan", "snapshot", "tree"]);
}

/// docs/design.md names every top-level module of `src/`: a module added without a line there
/// is one a reader cannot place.
#[test]
fn the_design_names_every_module() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let lib = std::fs::read_to_string(root.join("src/lib.rs")).unwrap();
    let design = std::fs::read_to_string(root.join("docs/design.md")).unwrap();
    let modules: Vec<&str> = lib
        .lines()
        .filter_map(|l| l.trim().strip_prefix("pub mod ").or_else(|| l.trim().strip_prefix("mod ")))
        .map(|m| m.trim_end_matches(';'))
        .collect();
    assert!(modules.len() > 10, "{modules:?}");
    let unnamed: Vec<&&str> = modules.iter().filter(|m| !design.contains(&format!("src/{m}"))).collect();
    assert!(unnamed.is_empty(), "docs/design.md does not name {unnamed:?}");
}

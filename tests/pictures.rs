//! Issue 7, pictures: `tree -o dot` (Graphviz) and `tree -o mermaid` on the fixtures, their
//! structure asserted on the text, and the DOT rendered by Graphviz when it is installed.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

const NOW: &str = "2026-11-29T12:00:00Z";

fn fixture(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(name).join("snapshot.json").display().to_string()
}

fn tree(snapshot: &str, args: &[&str], output: &str) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_kubectl-gc"))
        .arg("tree")
        .args(args)
        .args(["--snapshot", snapshot, "--now", NOW, "-o", output])
        .env_remove("KUBECONFIG")
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

/// The objects and references of a DOT text as kubectl-gc writes it (one statement a line),
/// outside the legend: node id → (label, class, attributes, cluster label), and edges.
#[derive(Debug, Default)]
struct Dot {
    nodes: BTreeMap<String, DotNode>,
    edges: Vec<DotEdge>,
    clusters: Vec<String>,
}

#[derive(Debug, Clone)]
struct DotNode {
    label: String,
    class: String,
    attrs: String,
    cluster: Option<String>,
}

#[derive(Debug, Clone)]
struct DotEdge {
    from: String,
    to: String,
    class: String,
    label: Option<String>,
    attrs: String,
}

/// The value of `key="…"` in an attribute list, unescaped.
fn attr(attrs: &str, key: &str) -> Option<String> {
    let start = attrs.find(&format!("{key}=\""))? + key.len() + 2;
    let mut out = String::new();
    let mut chars = attrs[start..].chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next()? {
                'n' => out.push('\n'),
                other => out.push(other),
            },
            '"' => return Some(out),
            c => out.push(c),
        }
    }
    None
}

fn parse_dot(text: &str) -> Dot {
    let mut dot = Dot::default();
    let mut cluster: Option<String> = None;
    let mut in_legend = false;
    for line in text.lines().map(str::trim) {
        if line.starts_with("subgraph cluster_legend") {
            in_legend = true;
        } else if line.starts_with("subgraph cluster_ns") {
            cluster = Some(String::new());
        } else if line == "}" {
            cluster = None;
            in_legend = false;
        } else if in_legend {
            continue;
        } else if line.starts_with("label=") && cluster.is_some() {
            let l = attr(line, "label").unwrap();
            dot.clusters.push(l.clone());
            cluster = Some(l);
        } else if let Some((head, attrs)) = line.split_once(" [") {
            if let Some((from, to)) = head.split_once(" -> ") {
                dot.edges.push(DotEdge {
                    from: from.to_string(),
                    to: to.to_string(),
                    class: attr(attrs, "class").unwrap_or_default(),
                    label: attr(attrs, "label"),
                    attrs: attrs.to_string(),
                });
            } else if head.starts_with('n') && head[1..].chars().all(|c| c.is_ascii_digit()) {
                dot.nodes.insert(
                    head.to_string(),
                    DotNode {
                        label: attr(attrs, "label").unwrap(),
                        class: attr(attrs, "class").unwrap_or_default(),
                        attrs: attrs.to_string(),
                        cluster: cluster.clone().filter(|c| !c.is_empty()),
                    },
                );
            }
        }
    }
    dot
}

impl Dot {
    fn node(&self, title: &str) -> (&String, &DotNode) {
        self.nodes
            .iter()
            .find(|(_, n)| n.label.lines().next() == Some(title))
            .unwrap_or_else(|| panic!("no node {title} in {:#?}", self.nodes))
    }
    fn edge(&self, from: &str, to: &str) -> &DotEdge {
        let (f, _) = self.node(from);
        let (t, _) = self.node(to);
        self.edges.iter().find(|e| &e.from == f && &e.to == t).unwrap_or_else(|| panic!("no edge {from} -> {to}"))
    }
}

fn assert_well_formed_dot(text: &str) {
    let first_statement = text.lines().find(|l| !l.starts_with("//")).unwrap();
    assert_eq!(first_statement, "digraph \"kubectl-gc\" {");
    assert!(text.ends_with("}\n"));
    // braces balance outside quoted strings
    let (mut depth, mut quoted, mut escaped) = (0i32, false, false);
    for c in text.lines().filter(|l| !l.starts_with("//")).flat_map(|l| l.chars().chain(['\n'])) {
        match (quoted, escaped, c) {
            (true, true, _) => escaped = false,
            (true, false, '\\') => escaped = true,
            (_, false, '"') => quoted = !quoted,
            (false, _, '{') => depth += 1,
            (false, _, '}') => depth -= 1,
            _ => {}
        }
        assert!(depth >= 0);
    }
    assert_eq!((depth, quoted), (0, false), "balanced braces and quotes");
    assert!(text.contains("subgraph cluster_legend {"), "a legend");
}

#[test]
fn dot_groups_namespaces_and_marks_invalid_references() {
    let text = tree(&fixture("cross-namespace"), &["site/alpha", "-n", "labs"], "dot");
    assert_well_formed_dot(&text);
    let dot = parse_dot(&text);
    assert_eq!(dot.clusters, ["namespace labs", "namespace tenant-b"]);
    assert_eq!(dot.nodes.len(), 4, "{:#?}", dot.nodes);
    let (_, site) = dot.node("Site/alpha");
    assert_eq!(site.class, "object root");
    assert_eq!(site.cluster.as_deref(), Some("namespace labs"));
    let (_, shared) = dot.node("ConfigMap/shared-config");
    assert_eq!(shared.cluster.as_deref(), Some("namespace tenant-b"));
    assert!(shared.label.contains("OwnerRefInvalidNamespace"));
    let (_, reader) = dot.node("ClusterRole/alpha-reader");
    assert_eq!(reader.cluster, None, "cluster-scoped: outside every namespace");

    assert_eq!(dot.edges.len(), 3);
    let ok = dot.edge("Site/alpha", "ConfigMap/alpha-config");
    assert_eq!(ok.class, "owns controller blocking");
    assert_eq!(ok.label.as_deref(), Some("blockOwnerDeletion"));
    assert!(!ok.attrs.contains("dashed"));
    let cross = dot.edge("Site/alpha", "ConfigMap/shared-config");
    assert_eq!(cross.class, "owns controller blocking invalid");
    assert_eq!(cross.label.as_deref(), Some("invalid namespace, blockOwnerDeletion"));
    assert!(cross.attrs.contains("style=dashed"));
    let scope = dot.edge("Site/alpha", "ClusterRole/alpha-reader");
    assert_eq!(scope.class, "owns invalid", "not a controller reference");
    assert!(scope.attrs.contains("arrowhead=onormal"));
    // no attribute given twice in one statement
    for e in &dot.edges {
        for key in ["color", "style", "label", "penwidth"] {
            assert!(
                e.attrs.matches(&format!(" {key}=")).count() + usize::from(e.attrs.starts_with(&format!("{key}=")))
                    <= 1,
                "{e:?}"
            );
        }
    }
}

#[test]
fn dot_marks_terminating_stuck_and_blocking() {
    let text = tree(&fixture("site-operator-gone"), &["site/alpha", "-n", "labs"], "dot");
    assert_well_formed_dot(&text);
    let dot = parse_dot(&text);
    let (_, site) = dot.node("Site/alpha");
    assert_eq!(site.class, "object root terminating stuck");
    assert!(site.label.contains("Terminating") && site.label.contains("own.labhub.io/cleanup, foregroundDeletion"));
    assert!(site.label.contains("FinalizerControllerDown"));
    assert!(site.attrs.contains("fillcolor=\"#fee2e2\""), "stuck fill");
    // the dependents wait on the same operator's finalizer
    let (_, audit) = dot.node("ConfigMap/alpha-audit");
    assert_eq!(audit.class, "object terminating stuck");
    assert!(audit.label.contains("FinalizerControllerDown"));
    assert_eq!(dot.edge("Site/alpha", "ConfigMap/alpha-config").class, "owns controller blocking");
    assert_eq!(dot.edge("Site/alpha", "ConfigMap/alpha-audit").class, "owns", "alpha-audit does not block");
}

#[test]
fn dot_shows_an_absent_owner_as_virtual() {
    let text = tree(&fixture("site-uid-mismatch"), &["configmap/alpha-config", "-n", "labs", "--owners"], "dot");
    assert_well_formed_dot(&text);
    let dot = parse_dot(&text);
    let (_, owner) = dot.node("Site/alpha");
    assert_eq!(owner.class, "object absent");
    assert!(owner.attrs.contains("dashed") && owner.label.contains("absent"));
    // arrows point owner → dependent even when walking up to the owners
    let e = dot.edge("Site/alpha", "ConfigMap/alpha-config");
    assert!(e.class.contains("invalid"));
    assert_eq!(e.label.as_deref(), Some("uid mismatch, blockOwnerDeletion"));
}

/// A snapshot whose names would break DOT or Mermaid if written raw.
fn hostile_snapshot() -> tempfile::NamedTempFile {
    let items = serde_json::json!([
        {"apiVersion": "apps/v1", "kind": "Deployment",
         "metadata": {"name": "web", "namespace": "shop", "uid": "00000000-0000-0000-0000-000000000001"}},
        {"apiVersion": "v1", "kind": "ConfigMap",
         "metadata": {"name": "evil\"}; x -> y [label=\\N\\l|<b>%%", "namespace": "shop",
                      "uid": "00000000-0000-0000-0000-000000000002",
                      "ownerReferences": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "web",
                                           "uid": "00000000-0000-0000-0000-000000000001", "controller": true}]}}
    ]);
    let f = tempfile::Builder::new().suffix(".json").tempfile().unwrap();
    std::fs::write(
        f.path(),
        serde_json::to_vec(&serde_json::json!({"apiVersion": "v1", "kind": "List", "items": items})).unwrap(),
    )
    .unwrap();
    f
}

const HOSTILE: &str = "evil\"}; x -> y [label=\\N\\l|<b>%%";

#[test]
fn names_are_escaped() {
    let snap = hostile_snapshot();
    let path = snap.path().display().to_string();
    let text = tree(&path, &["deploy/web", "-n", "shop"], "dot");
    assert_well_formed_dot(&text);
    let dot = parse_dot(&text);
    assert_eq!(dot.nodes.len(), 2, "the name made no node of its own: {text}");
    assert_eq!(dot.edges.len(), 1, "the name made no edge of its own: {text}");
    dot.node(&format!("ConfigMap/{HOSTILE}"));
    assert!(text.contains(r#"label="ConfigMap/evil\"}; x -> y [label=\\N\\l|<b>%%""#), "{text}");
    render_if_graphviz(&text, "svg");

    let mm = tree(&path, &["deploy/web", "-n", "shop"], "mermaid");
    let node_line = mm.lines().find(|l| l.contains("ConfigMap/")).unwrap();
    assert!(
        node_line
            .ends_with(r#"["ConfigMap/evil#34;#125;#59; x -#62; y #91;label#61;#92;N#92;l#124;#60;b#62;#37;#37;"]"#),
        "{node_line}"
    );
    let body: Vec<&str> = mm.lines().filter(|l| !l.starts_with("%%")).collect();
    assert!(body.iter().all(|l| !l.contains("%%")), "no comment opener in the body");
}

/// `dot -T<format>`: the output's magic bytes. Graphviz's `dot` is found on PATH; absent, the
/// test fails unless `KUBECTL_GC_TEST_NO_GRAPHVIZ=1` leaves the render out (the DOT text is
/// still checked).
fn render_if_graphviz(text: &str, format: &str) -> Option<Vec<u8>> {
    let dot = crate::support::tool("dot", "KUBECTL_GC_TEST_NO_GRAPHVIZ")?;
    let mut child = Command::new(dot)
        .arg(format!("-T{format}"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("running dot");
    child.stdin.take().unwrap().write_all(text.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "dot -T{format} failed: {stderr}\n{text}");
    assert!(stderr.trim().is_empty(), "dot warned: {stderr}");
    Some(out.stdout)
}

#[test]
fn graphviz_renders_every_fixture() {
    let cases: [(&str, &[&str]); 4] = [
        ("site-operator-gone", &["site/alpha", "-n", "labs"]),
        ("cross-namespace", &["site/alpha", "-n", "labs"]),
        ("site-uid-mismatch", &["configmap/alpha-config", "-n", "labs", "--owners"]),
        ("namespace-terminating", &["ns/labs"]),
    ];
    for (name, args) in cases {
        let text = tree(&fixture(name), args, "dot");
        assert_well_formed_dot(&text);
        if let Some(png) = render_if_graphviz(&text, "png") {
            assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"), "{name}: a PNG");
        }
    }
}

#[test]
fn mermaid_is_a_flowchart_with_class_defs() {
    let text = tree(&fixture("site-operator-gone"), &["site/alpha", "-n", "labs"], "mermaid");
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].starts_with("%% kubectl gc tree: dependents of Site/alpha"));
    assert_eq!(lines[1], "flowchart LR");
    assert_eq!(
        lines.iter().filter(|l| l.trim_start().starts_with("subgraph ")).count(),
        lines.iter().filter(|l| l.trim() == "end").count()
    );
    assert!(lines.contains(&"  subgraph ns0[\"namespace labs\"]"));
    // nodes: id["label"], details after <br/>
    let nodes: Vec<&str> = lines.iter().map(|l| l.trim()).filter(|l| l.starts_with('n') && l.contains("[\"")).collect();
    assert_eq!(nodes.len(), 3, "{text}");
    let site = nodes.iter().find(|l| l.contains("[\"Site/alpha")).unwrap();
    assert!(site.contains("<br/>Terminating<br/>") && site.contains("FinalizerControllerDown"), "{site}");
    let site_id = site.split('[').next().unwrap();
    // edges: thick for blockOwnerDeletion, plain otherwise
    let edges: Vec<&str> = lines
        .iter()
        .map(|l| l.trim())
        .filter(|l| l.contains("-->") || l.contains("==>") || l.contains("-.->"))
        .collect();
    assert_eq!(edges.len(), 2, "{text}");
    assert!(edges.iter().any(|e| e.starts_with(&format!("{site_id} ==>|blockOwnerDeletion| n"))), "{edges:?}");
    assert!(edges.iter().any(|e| e.starts_with(&format!("{site_id} --> n"))), "{edges:?}");
    for class in ["object", "terminating", "stuck", "absent", "root"] {
        assert!(lines.iter().any(|l| l.trim().starts_with(&format!("classDef {class} "))), "classDef {class}");
    }
    assert!(lines.contains(&format!("  class {site_id} root").as_str()), "{text}");
    assert!(lines.iter().any(|l| l.starts_with("  class ") && l.ends_with(" stuck") && l.contains(site_id)));
    assert!(lines.iter().any(|l| l.starts_with("  linkStyle ")), "blocking links coloured");
}

#[test]
fn mermaid_marks_invalid_references_and_absent_owners() {
    let text = tree(&fixture("site-uid-mismatch"), &["configmap/alpha-config", "-n", "labs", "--owners"], "mermaid");
    assert!(text.contains(" -.->|uid mismatch, blockOwnerDeletion| n"), "{text}");
    let absent = text.lines().find(|l| l.contains("Site/alpha")).unwrap();
    // the uid the reference names is gone, but Site/alpha exists under another: recreated
    assert!(
        absent.contains("[/\"Site/alpha<br/>absent: recreated, uid c80fc950-f935-5065-b01d-9c488eccf41b now"),
        "{absent}"
    );
    let id = absent.trim().split('[').next().unwrap();
    assert!(text.lines().any(|l| l == format!("  class {id} absent")), "{text}");
    let text = tree(&fixture("cross-namespace"), &["site/alpha", "-n", "labs"], "mermaid");
    assert!(text.contains("subgraph ns1[\"namespace tenant-b\"]"));
    assert!(text.contains("-.->|invalid namespace, blockOwnerDeletion|"));
    assert!(text.contains("-.->|namespaced owner of cluster-scoped|"));
}

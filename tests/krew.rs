//! Issue 7, packaging: the krew-index manifest (krew/gc.yaml) against krew's rules, the
//! krew-release-bot template (krew/.krew.yaml) rendered as the bot renders it, the release
//! archive krew/release.sh packs, and the conventions of a kubectl plugin.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::Value;

use crate::util::gc;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn read(rel: &str) -> String {
    std::fs::read_to_string(root().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

fn parse(yaml: &str) -> Value {
    serde_saphyr::from_str::<Value>(yaml).unwrap_or_else(|e| panic!("not YAML: {e}\n{yaml}"))
}

const OS_ARCH: [(&str, &str); 6] = [
    ("linux", "amd64"),
    ("linux", "arm64"),
    ("darwin", "amd64"),
    ("darwin", "arm64"),
    ("windows", "amd64"),
    ("windows", "arm64"),
];

/// krew's `ValidatePlugin` (pkg/index/validation), plus this project's own rules: every
/// os/arch of OS_ARCH exactly once, and the version of Cargo.toml. Returns every violation.
fn validate(m: &Value, file_stem: &str) -> Vec<String> {
    let mut errs = Vec::new();
    let s = |v: &Value, p: &str| v.pointer(p).and_then(Value::as_str).map(str::to_string);
    if s(m, "/apiVersion").as_deref() != Some("krew.googlecontainertools.github.com/v1alpha2") {
        errs.push("apiVersion must be krew.googlecontainertools.github.com/v1alpha2".into());
    }
    if s(m, "/kind").as_deref() != Some("Plugin") {
        errs.push("kind must be Plugin".into());
    }
    let name = s(m, "/metadata/name").unwrap_or_default();
    if name != file_stem {
        errs.push(format!("metadata.name {name:?} does not match the file name {file_stem:?}"));
    }
    if name.is_empty() || !name.chars().all(|c| c.is_alphanumeric() || c == '_' || c == '-') {
        errs.push(format!("metadata.name {name:?} is not ^[\\w-]+$"));
    }
    if is_windows_device_name(&name) {
        errs.push(format!("metadata.name {name:?} is a Windows device name"));
    }
    let version = s(m, "/spec/version").unwrap_or_default();
    if !is_semver_with_v(&version) {
        errs.push(format!("spec.version {version:?} is not semver with a leading v"));
    }
    if version != format!("v{}", env!("CARGO_PKG_VERSION")) {
        errs.push(format!("spec.version {version:?} is not Cargo.toml's v{}", env!("CARGO_PKG_VERSION")));
    }
    match s(m, "/spec/shortDescription") {
        Some(d) if !d.trim().is_empty() && !d.trim().contains('\n') => {}
        _ => errs.push("spec.shortDescription must be one non-empty line".into()),
    }
    if s(m, "/spec/description").is_none_or(|d| d.trim().is_empty()) {
        errs.push("spec.description is required".into());
    }
    let platforms = m.pointer("/spec/platforms").and_then(Value::as_array).cloned().unwrap_or_default();
    if platforms.is_empty() {
        errs.push("spec.platforms is empty".into());
    }
    let mut seen: Vec<(String, String)> = Vec::new();
    for (i, p) in platforms.iter().enumerate() {
        let at = format!("spec.platforms[{i}]");
        let labels = p.pointer("/selector/matchLabels").and_then(Value::as_object);
        let exprs = p.pointer("/selector/matchExpressions").and_then(Value::as_array);
        if labels.is_none_or(|l| l.is_empty()) && exprs.is_none_or(|e| e.is_empty()) {
            errs.push(format!("{at}.selector is empty"));
        }
        if let Some(sel) = p.get("selector").and_then(Value::as_object) {
            for k in sel.keys().filter(|k| *k != "matchLabels" && *k != "matchExpressions") {
                errs.push(format!("{at}.selector has {k:?}"));
            }
        }
        for k in labels.into_iter().flat_map(|l| l.keys()) {
            if k != "os" && k != "arch" {
                errs.push(format!("{at}.selector label {k:?} is neither os nor arch"));
            }
        }
        for e in exprs.into_iter().flatten() {
            if let Some(k) = e.get("key").and_then(Value::as_str).filter(|k| *k != "os" && *k != "arch") {
                errs.push(format!("{at}.selector expression key {k:?} is neither os nor arch"));
            }
        }
        let os = labels.and_then(|l| l.get("os")).and_then(Value::as_str).unwrap_or("").to_string();
        let arch = labels.and_then(|l| l.get("arch")).and_then(Value::as_str).unwrap_or("").to_string();
        let uri = s(p, "/uri").unwrap_or_default();
        if !(uri.ends_with(".tar.gz") || uri.ends_with(".zip")) {
            errs.push(format!("{at}.uri {uri:?} is not a .tar.gz or .zip"));
        }
        if !uri.starts_with("https://") {
            errs.push(format!("{at}.uri {uri:?} is not https"));
        }
        let sha = s(p, "/sha256").unwrap_or_default();
        if sha.len() != 64 || !sha.chars().all(|c| c.is_ascii_digit() || ('a'..='f').contains(&c)) {
            errs.push(format!("{at}.sha256 {sha:?} is not 64 lowercase hex characters"));
        }
        let bin = s(p, "/bin").unwrap_or_default();
        if bin.is_empty() {
            errs.push(format!("{at}.bin is required"));
        }
        if os == "windows" && !bin.ends_with(".exe") {
            errs.push(format!("{at}.bin {bin:?} must end in .exe on windows"));
        }
        if os != "windows" && bin != "kubectl-gc" && bin != "./kubectl-gc" {
            errs.push(format!("{at}.bin {bin:?} is not kubectl-gc"));
        }
        if p.get("files").is_some_and(|files| files.as_array().is_none_or(|f| f.is_empty())) {
            errs.push(format!("{at}.files, when given, must not be empty"));
        }
        if seen.contains(&(os.clone(), arch.clone())) {
            errs.push(format!("{at}: more than one platform for {os}/{arch}"));
        }
        seen.push((os, arch));
    }
    for (os, arch) in OS_ARCH {
        if !seen.contains(&(os.to_string(), arch.to_string())) {
            errs.push(format!("no platform for {os}/{arch}"));
        }
    }
    errs
}

fn is_windows_device_name(name: &str) -> bool {
    let n = name.to_ascii_uppercase();
    ["CON", "PRN", "AUX", "NUL"].contains(&n.as_str())
        || ((n.starts_with("COM") || n.starts_with("LPT")) && n.len() == 4 && n.as_bytes()[3].is_ascii_digit())
}

/// `vMAJOR.MINOR.PATCH[-pre][+build]`, numbers without leading zeros.
fn is_semver_with_v(v: &str) -> bool {
    let Some(rest) = v.strip_prefix('v') else { return false };
    let (core, _build) = rest.split_once('+').unwrap_or((rest, ""));
    let (core, pre) = core.split_once('-').map_or((core, None), |(c, p)| (c, Some(p)));
    let ident_ok = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '-');
    let nums: Vec<&str> = core.split('.').collect();
    nums.len() == 3
        && nums
            .iter()
            .all(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()) && (n.len() == 1 || !n.starts_with('0')))
        && pre.is_none_or(ident_ok)
}

#[test]
fn index_manifest_follows_krews_rules() {
    let m = parse(&read("krew/gc.yaml"));
    let errs = validate(&m, "gc");
    assert!(errs.is_empty(), "krew/gc.yaml:\n  {}", errs.join("\n  "));
    let caveats = m.pointer("/spec/caveats").and_then(Value::as_str).unwrap_or("");
    assert!(caveats.contains("read-only"), "caveats say it is read-only");
    assert!(caveats.contains("RBAC"), "caveats say answers may be partial under RBAC");
    assert!(m.pointer("/spec/homepage").and_then(Value::as_str).is_some_and(|h| h.starts_with("https://")));
    for p in m.pointer("/spec/platforms").and_then(Value::as_array).unwrap() {
        let uri = p["uri"].as_str().unwrap();
        let (os, arch) = (
            p["selector"]["matchLabels"]["os"].as_str().unwrap(),
            p["selector"]["matchLabels"]["arch"].as_str().unwrap(),
        );
        let ext = if os == "windows" { "zip" } else { "tar.gz" };
        let asset = format!("kubectl-gc_v{}_{os}_{arch}.{ext}", env!("CARGO_PKG_VERSION"));
        assert!(
            uri.ends_with(&format!("/v{}/{asset}", env!("CARGO_PKG_VERSION"))),
            "{uri} is the asset release.sh names {asset}"
        );
    }
}

#[test]
fn the_validator_catches_what_krew_rejects() {
    let good = parse(&read("krew/gc.yaml"));
    assert!(validate(&good, "gc").is_empty());
    let broken = |f: &dyn Fn(&mut Value), stem: &str, expect: &str| {
        let mut m = good.clone();
        f(&mut m);
        let errs = validate(&m, stem);
        assert!(errs.iter().any(|e| e.contains(expect)), "expected {expect:?} in {errs:?}");
    };
    broken(&|_| {}, "garbage", "does not match the file name");
    broken(&|m| m["metadata"]["name"] = "con".into(), "con", "Windows device name");
    broken(&|m| m["metadata"]["name"] = "g c".into(), "g c", "is not ^[\\w-]+$");
    broken(&|m| m["spec"]["version"] = "0.1.0".into(), "gc", "leading v");
    broken(&|m| m["spec"]["version"] = "v0.1".into(), "gc", "leading v");
    broken(&|m| m["spec"]["version"] = "v9.9.9".into(), "gc", "Cargo.toml");
    broken(&|m| m["spec"]["shortDescription"] = "".into(), "gc", "shortDescription");
    broken(&|m| m["spec"]["platforms"][0]["sha256"] = "ABC".into(), "gc", "sha256");
    broken(&|m| m["spec"]["platforms"][0]["uri"] = "https://x/kubectl-gc".into(), "gc", ".tar.gz or .zip");
    broken(&|m| m["spec"]["platforms"][4]["bin"] = "kubectl-gc".into(), "gc", ".exe on windows");
    broken(
        &|m| m["spec"]["platforms"][0]["selector"]["matchLabels"]["distro"] = "x".into(),
        "gc",
        "neither os nor arch",
    );
    broken(&|m| m["spec"]["platforms"][0]["selector"] = serde_json::json!({}), "gc", "selector is empty");
    broken(
        &|m| m["spec"]["platforms"][1]["selector"]["matchLabels"]["arch"] = "amd64".into(),
        "gc",
        "more than one platform",
    );
    broken(&|m| m["spec"]["platforms"][0]["files"] = serde_json::json!([]), "gc", "must not be empty");
}

/// Renders the krew-release-bot template as the bot does (pkg/source/template.go):
/// `{{ .TagName }}`, and `{{ addURIAndSha "URL" .TagName | indent N }}`, which writes
/// `uri: URL` and `sha256: …`, every line after the first padded by N spaces.
fn render_release_bot_template(t: &str, tag: &str, sha: &str) -> String {
    let mut out = String::new();
    let mut rest = t;
    while let Some(start) = rest.find("{{") {
        out.push_str(&rest[..start]);
        let action = &rest[start + 2..];
        let body = action.trim_start();
        if let Some(after) = body.strip_prefix("addURIAndSha") {
            let after = after.trim_start();
            let q = after.strip_prefix('"').expect("addURIAndSha takes a quoted URL");
            let end = q.find('"').expect("closing quote");
            let url = q[..end].replace("{{ .TagName }}", tag).replace("{{.TagName}}", tag);
            let tail = &q[end + 1..];
            let close = tail.find("}}").expect("}}");
            let args = tail[..close].trim();
            let mut text = format!("uri: {url}\n    sha256: {sha}");
            if let Some(n) = args.split("| indent").nth(1) {
                let n: usize = n.trim().parse().expect("indent N");
                let pad = " ".repeat(n);
                text = text.replace("    sha256:", "sha256:");
                text = format!("{pad}{}", text.replace('\n', &format!("\n{pad}"))).trim().to_string();
            } else {
                assert_eq!(args, ".TagName", "addURIAndSha's second argument");
            }
            out.push_str(&text);
            rest = &tail[close + 2..];
        } else {
            let close = action.find("}}").expect("}}");
            assert_eq!(action[..close].trim(), ".TagName", "unknown template action");
            out.push_str(tag);
            rest = &action[close + 2..];
        }
    }
    out.push_str(rest);
    out
}

#[test]
fn release_bot_template_renders_to_the_index_manifest() {
    let tag = format!("v{}", env!("CARGO_PKG_VERSION"));
    let sha = "0123456789abcdef".repeat(4);
    let template = read("krew/.krew.yaml");
    assert!(template.contains("{{ .TagName }}") && template.contains("addURIAndSha"));
    let rendered = render_release_bot_template(&template, &tag, &sha);
    let mut m = parse(&rendered);
    let errs = validate(&m, "gc");
    assert!(errs.is_empty(), "rendered krew/.krew.yaml:\n  {}\n{rendered}", errs.join("\n  "));
    // the same manifest as krew/gc.yaml, but for the digests
    let mut index = parse(&read("krew/gc.yaml"));
    for v in [&mut m, &mut index] {
        for p in v.pointer_mut("/spec/platforms").and_then(Value::as_array_mut).unwrap() {
            p["sha256"] = Value::Null;
        }
    }
    assert_eq!(m, index, "krew/.krew.yaml and krew/gc.yaml disagree");
}

#[test]
fn license_is_the_apache_2_text_cargo_declares() {
    let license = read("LICENSE");
    assert!(license.contains("Apache License") && license.contains("Version 2.0, January 2004"));
    assert!(license.contains("END OF TERMS AND CONDITIONS"), "the full text, not a notice");
    assert!(read("Cargo.toml").contains("license = \"Apache-2.0\""));
}

fn host_platform() -> (&'static str, &'static str) {
    let os = match std::env::consts::OS {
        "macos" => "darwin",
        other => other,
    };
    let arch = match std::env::consts::ARCH {
        "x86_64" => "amd64",
        "aarch64" => "arm64",
        other => other,
    };
    (os, arch)
}

fn bin_dir() -> PathBuf {
    Path::new(env!("CARGO_BIN_EXE_kubectl-gc")).parent().unwrap().to_path_buf()
}

#[test]
#[cfg(unix)]
fn release_script_packs_the_layout_the_manifest_expects() {
    let out = tempfile::tempdir().unwrap();
    let run = Command::new("bash")
        .arg(root().join("krew/release.sh"))
        .args(["--bin-dir".as_ref(), bin_dir().as_os_str(), "--out".as_ref(), out.path().as_os_str()])
        .env("GZIP_LEVEL", "1")
        .env_remove("CARGO_TARGET_DIR")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&run.stdout);
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "release.sh failed:\n{stderr}");

    // "<sha256>  <archive>" on stdout, and the archive named as the manifest's uri says
    let (os, arch) = host_platform();
    let (printed_sha, path) =
        stdout.trim().rsplit_once('\n').map_or(stdout.trim(), |(_, l)| l).split_once("  ").unwrap();
    let path = PathBuf::from(path);
    let expected = format!("kubectl-gc_v{}_{os}_{arch}.tar.gz", env!("CARGO_PKG_VERSION"));
    assert_eq!(path.file_name().unwrap().to_str().unwrap(), expected);
    assert_eq!(path.parent().unwrap(), out.path().canonicalize().unwrap());
    let bytes = std::fs::read(&path).unwrap();
    let digest = ring::digest::digest(&ring::digest::SHA256, &bytes);
    let actual: String = digest.as_ref().iter().map(|b| format!("{b:02x}")).collect();
    assert_eq!(printed_sha, actual, "the printed sha256 is the archive's");
    let sidecar = std::fs::read_to_string(format!("{}.sha256", path.display())).unwrap();
    assert_eq!(sidecar.trim(), format!("{actual}  {expected}"));

    // exactly the three files, at the top level, binaries executable
    let listing = Command::new("tar").arg("-tvzf").arg(&path).output().unwrap();
    assert!(listing.status.success());
    let listing = String::from_utf8_lossy(&listing.stdout);
    let entries: BTreeSet<(String, String)> = listing
        .lines()
        .map(|l| {
            let cols: Vec<&str> = l.split_whitespace().collect();
            (cols[cols.len() - 1].to_string(), cols[0].to_string())
        })
        .collect();
    let names: BTreeSet<&str> = entries.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, BTreeSet::from(["LICENSE", "kubectl-gc", "kubectl_complete-gc"]), "{listing}");
    for (name, mode) in &entries {
        let want = if name == "LICENSE" { "-rw-r--r--" } else { "-rwxr-xr-x" };
        assert_eq!(mode, want, "{name}");
    }

    // installed as krew would (extracted), the plugin and its completion work
    let dir = tempfile::tempdir().unwrap();
    let x = Command::new("tar").arg("-xzf").arg(&path).arg("-C").arg(dir.path()).status().unwrap();
    assert!(x.success());
    let v = Command::new(dir.path().join("kubectl-gc")).arg("--version").output().unwrap();
    assert_eq!(String::from_utf8_lossy(&v.stdout).trim(), format!("kubectl-gc {}", env!("CARGO_PKG_VERSION")));
    let c = Command::new(dir.path().join("kubectl_complete-gc"))
        .arg("why")
        .env("PATH", "/nonexistent") // it must find the kubectl-gc beside it
        .output()
        .unwrap();
    let c = String::from_utf8_lossy(&c.stdout);
    assert!(c.starts_with("why-stuck\t") && c.ends_with(":4\n"), "{c}");
}

// --- conventions of a kubectl plugin ------------------------------------------------------

fn fixture(name: &str) -> String {
    root().join("tests/fixtures").join(name).join("snapshot.json").display().to_string()
}

const NOW: &str = "2026-11-29T12:00:00Z";

#[test]
fn version_help_and_errors_look_like_kubectls() {
    let v = gc().arg("--version").output().unwrap();
    assert!(v.status.success());
    assert_eq!(String::from_utf8_lossy(&v.stdout).trim(), format!("kubectl-gc {}", env!("CARGO_PKG_VERSION")));

    // every subcommand's help says `kubectl gc` and has runbook examples
    for sub in ["why-stuck", "tree", "plan", "snapshot", "completion"] {
        let h = gc().args([sub, "--help"]).output().unwrap();
        assert!(h.status.success(), "{sub} --help");
        let text = String::from_utf8_lossy(&h.stdout);
        assert!(text.contains(&format!("Usage: kubectl gc {sub}")), "{sub}: {text}");
        assert!(text.contains("Examples:") && text.contains(&format!("kubectl gc {sub}")), "{sub} has examples");
    }

    // errors: one line on stderr, kubectl's prefix, exit 1, nothing on stdout
    let e = gc().args(["tree", "widgets/x", "--snapshot", &fixture("site-basics"), "--now", NOW]).output().unwrap();
    assert_eq!(e.status.code(), Some(1));
    assert!(e.stdout.is_empty());
    let err = String::from_utf8_lossy(&e.stderr);
    assert!(err.starts_with("error: ") && err.contains("widgets"), "{err}");
    let e = gc().args(["tree", "--output=png", "deploy/web"]).output().unwrap();
    assert_eq!(e.status.code(), Some(1), "usage errors exit 1, not clap's 2 (2 means stuck)");
    assert!(String::from_utf8_lossy(&e.stderr).starts_with("error: "));
}

#[test]
fn colour_follows_the_flag_and_no_color() {
    let args = ["tree", "site/alpha", "-n", "labs", "--snapshot", &fixture("site-operator-gone"), "--now", NOW];
    let has_ansi = |o: &std::process::Output| o.stdout.contains(&0x1b);
    let always = gc().args(args).arg("--color=always").output().unwrap();
    assert!(has_ansi(&always), "--color=always colours even into a pipe");
    let never = gc().args(args).arg("--color=never").output().unwrap();
    assert!(!has_ansi(&never));
    let auto = gc().args(args).output().unwrap();
    assert!(!has_ansi(&auto), "auto: not a terminal, NO_COLOR set");
    let auto = gc().args(args).env_remove("NO_COLOR").output().unwrap();
    assert!(!has_ansi(&auto), "auto: not a terminal");
    for o in [&always, &never] {
        assert_eq!(o.status.code(), Some(0));
        assert!(!has_ansi_in(&o.stderr));
    }
}

fn has_ansi_in(b: &[u8]) -> bool {
    b.contains(&0x1b)
}

/// A snapshot where one Deployment owns `n` ConfigMaps: output far larger than a pipe buffer.
pub fn big_snapshot(n: usize) -> tempfile::NamedTempFile {
    let mut items = vec![serde_json::json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "shop", "uid": "00000000-0000-0000-0000-000000000001",
                     "creationTimestamp": "2026-11-29T10:00:00Z"}
    })];
    for i in 0..n {
        items.push(serde_json::json!({
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": format!("web-config-{i:05}"), "namespace": "shop", "uid": format!("10000000-0000-0000-0000-{i:012}"),
                         "creationTimestamp": "2026-11-29T10:00:00Z",
                         "ownerReferences": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "web",
                                              "uid": "00000000-0000-0000-0000-000000000001", "controller": true, "blockOwnerDeletion": true}]}
        }));
    }
    let f = tempfile::Builder::new().suffix(".json").tempfile().unwrap();
    std::fs::write(
        f.path(),
        serde_json::to_vec(&serde_json::json!({"apiVersion": "v1", "kind": "List", "items": items})).unwrap(),
    )
    .unwrap();
    f
}

#[test]
fn a_closed_pipe_ends_quietly() {
    let snap = big_snapshot(5000);
    let path = snap.path().display().to_string();
    for output in ["text", "json", "yaml", "dot", "mermaid"] {
        let mut child = gc()
            .args(["tree", "deploy/web", "-n", "shop", "--snapshot", &path, "--now", NOW, "-o", output])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // read one line (as `| head -1` does), then close the pipe
        let mut stdout = child.stdout.take().unwrap();
        let mut first = [0u8; 64];
        let n = std::io::Read::read(&mut stdout, &mut first).unwrap();
        assert!(n > 0, "{output}: some output");
        drop(stdout);
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            !stderr.contains("panicked") && !stderr.contains("Broken pipe") && !stderr.contains("error"),
            "{output}: {stderr}"
        );
        assert_eq!(out.status.code(), Some(0), "{output}: the answer was computed; exit 0, killed by no signal");
    }
}

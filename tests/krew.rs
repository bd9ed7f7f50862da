//! Packaging (issues 7 and 24): the krew manifest against krew's own validation
//! (kubernetes-sigs/krew, pkg/index/validation/validate.go) and this project's rules; its
//! template (krew/.krew.yaml) rendered both as krew-release-bot renders it and by
//! krew/manifest.sh; the archive and manifest krew/release.sh produce; the conventions of a
//! kubectl plugin.

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

/// The platforms a release builds (.github/workflows/release.yml), each once in the manifest.
pub const OS_ARCH: [(&str, &str); 6] = [
    ("linux", "amd64"),
    ("linux", "arm64"),
    ("darwin", "amd64"),
    ("darwin", "arm64"),
    ("windows", "amd64"),
    ("windows", "arm64"),
];

/// The krew plugin name: krew links the plugin as `kubectl-<name, '-' as '_'>`
/// (pkg/installation/install.go, pluginNameToBin), so this name is what people type after
/// `kubectl`, and it must stay `gc`.
const PLUGIN_NAME: &str = "gc";

fn krew_symlink_name(plugin: &str) -> String {
    format!("kubectl-{}", plugin.replace('-', "_"))
}

/// krew's `ValidatePlugin(name, plugin)`, rule by rule (pkg/index/validation/validate.go):
/// the first violation, as krew stops at it.
fn krew_validate(m: &Value, name: &str) -> Result<(), String> {
    let s = |v: &Value, p: &str| v.pointer(p).and_then(Value::as_str).map(str::to_string);
    if s(m, "/apiVersion").as_deref() != Some("krew.googlecontainertools.github.com/v1alpha2") {
        return Err("apiVersion is not krew.googlecontainertools.github.com/v1alpha2".into());
    }
    if s(m, "/kind").as_deref() != Some("Plugin") {
        return Err("kind is not Plugin".into());
    }
    if !is_safe_plugin_name(name) {
        return Err(format!(
            "the plugin name {name:?} is not allowed, must match ^[\\w-]+$ (and no Windows device name)"
        ));
    }
    if s(m, "/metadata/name").as_deref() != Some(name) {
        return Err(format!("plugin should be named {name:?}, not {:?}", s(m, "/metadata/name")));
    }
    if s(m, "/spec/shortDescription").unwrap_or_default().is_empty() {
        return Err("should have a short description".into());
    }
    let platforms = m.pointer("/spec/platforms").and_then(Value::as_array).cloned().unwrap_or_default();
    if platforms.is_empty() {
        return Err("should have a platform specified".into());
    }
    let version = s(m, "/spec/version").unwrap_or_default();
    if version.is_empty() {
        return Err("should have a version specified".into());
    }
    if !is_semver_with_v(&version) {
        return Err(format!("failed to parse plugin version {version:?}"));
    }
    for (i, p) in platforms.iter().enumerate() {
        krew_validate_platform(p).map_err(|e| format!("platform {i} is badly constructed: {e}"))?;
    }
    Ok(())
}

/// krew's `validatePlatform`, `validateFiles` and `validateSelector`.
fn krew_validate_platform(p: &Value) -> Result<(), String> {
    let s = |p2: &str| p.pointer(p2).and_then(Value::as_str).unwrap_or("").to_string();
    if s("/uri").is_empty() {
        return Err("`uri` has to be set".into());
    }
    let sha = s("/sha256");
    if sha.is_empty() {
        return Err("`sha256` sum has to be set".into());
    }
    if sha.len() != 64 || !sha.bytes().all(|c| c.is_ascii_digit() || (b'a'..=b'f').contains(&c)) {
        return Err(format!("`sha256` value {sha} is not valid, must match pattern ^[a-f0-9]{{64}}$"));
    }
    if s("/bin").is_empty() {
        return Err("`bin` has to be set".into());
    }
    match p.get("files") {
        None | Some(Value::Null) => {}
        Some(Value::Array(ops)) if ops.is_empty() => return Err("`files` has to be unspecified or non-empty".into()),
        Some(Value::Array(ops)) => {
            for op in ops {
                if op.get("from").and_then(Value::as_str).unwrap_or("").is_empty() {
                    return Err("`from` field has to be set".into());
                }
                if op.get("to").and_then(Value::as_str).unwrap_or("").is_empty() {
                    return Err("`to` field has to be set".into());
                }
            }
        }
        Some(other) => return Err(format!("`files` is not a list: {other}")),
    }
    let sel = match p.get("selector") {
        None | Some(Value::Null) => return Err("nil selector is not supported".into()),
        Some(sel) => sel,
    };
    let labels = sel.get("matchLabels").filter(|v| !v.is_null());
    let exprs = sel.get("matchExpressions").filter(|v| !v.is_null());
    let n_exprs = exprs.and_then(Value::as_array).map_or(0, Vec::len);
    if labels.is_none() && n_exprs == 0 {
        return Err("empty selector is not supported".into());
    }
    let label_keys = labels.and_then(Value::as_object).into_iter().flat_map(|l| l.keys().cloned());
    let expr_keys = exprs
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|e| e.get("key").and_then(Value::as_str).unwrap_or("").to_string());
    if let Some(k) = label_keys.chain(expr_keys).find(|k| k != "os" && k != "arch") {
        return Err(format!("key {k:?} not supported"));
    }
    if labels.and_then(Value::as_object).is_some_and(|l| l.is_empty()) {
        return Err("`matchLabels` specified but empty".into());
    }
    if exprs.is_some() && n_exprs == 0 {
        return Err("`matchExpressions` specified but empty".into());
    }
    Ok(())
}

/// krew's `IsSafePluginName`: `^[\w-]+$` (Go's `\w` is ASCII) and no Windows device name.
fn is_safe_plugin_name(name: &str) -> bool {
    const FORBIDDEN: [&str; 22] = [
        "CON", "PRN", "AUX", "NUL", "COM1", "COM2", "COM3", "COM4", "COM5", "COM6", "COM7", "COM8", "COM9", "LPT1",
        "LPT2", "LPT3", "LPT4", "LPT5", "LPT6", "LPT7", "LPT8", "LPT9",
    ];
    !name.is_empty()
        && name.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'_' || c == b'-')
        && !FORBIDDEN.iter().any(|f| f.eq_ignore_ascii_case(name))
}

/// `vMAJOR.MINOR.PATCH[-pre][+build]`, numbers without leading zeros (krew parses spec.version
/// as semver with a leading v).
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

/// This project's rules beyond krew's: the version of Cargo.toml, each platform once and named as
/// krew/release.sh names its archive, https release URLs, the binary krew links, the name that
/// keeps the command `kubectl gc`, and the index reviewers' asks (shortDescription at most 50
/// characters, description wrapped at 80). `platforms` are the os/arch the manifest must hold.
fn project_rules(m: &Value, platforms: &[(&str, &str)]) -> Vec<String> {
    let mut errs = Vec::new();
    let s = |v: &Value, p: &str| v.pointer(p).and_then(Value::as_str).unwrap_or("").to_string();
    let version = format!("v{}", env!("CARGO_PKG_VERSION"));
    if s(m, "/spec/version") != version {
        errs.push(format!("spec.version {:?} is not Cargo.toml's {version}", s(m, "/spec/version")));
    }
    let name = s(m, "/metadata/name");
    if krew_symlink_name(&name) != "kubectl-gc" {
        errs.push(format!("krew would link metadata.name {name:?} as {}, not kubectl-gc", krew_symlink_name(&name)));
    }
    let short = s(m, "/spec/shortDescription");
    if short.chars().count() > 50 || short.contains('\n') {
        errs.push(format!("spec.shortDescription {short:?} is not one line of at most 50 characters"));
    }
    if s(m, "/spec/description").trim().is_empty() {
        errs.push("spec.description is empty".into());
    }
    if let Some(l) = s(m, "/spec/description").lines().find(|l| l.chars().count() > 80) {
        errs.push(format!("spec.description has a line over 80 characters: {l:?}"));
    }
    if !s(m, "/spec/homepage").starts_with("https://") {
        errs.push("spec.homepage is not https".into());
    }
    let mut seen = Vec::new();
    for (i, p) in m.pointer("/spec/platforms").and_then(Value::as_array).into_iter().flatten().enumerate() {
        let (os, arch) = (s(p, "/selector/matchLabels/os"), s(p, "/selector/matchLabels/arch"));
        let ext = if os == "windows" { "zip" } else { "tar.gz" };
        let asset = format!("kubectl-gc_{version}_{os}_{arch}.{ext}");
        let uri = s(p, "/uri");
        if uri != format!("https://github.com/labhub/kubectl-gc/releases/download/{version}/{asset}") {
            errs.push(format!("platforms[{i}].uri {uri:?} is not the release's {asset}"));
        }
        let bin = if os == "windows" { "kubectl-gc.exe" } else { "kubectl-gc" };
        if s(p, "/bin") != bin {
            errs.push(format!("platforms[{i}].bin {:?} is not {bin}", s(p, "/bin")));
        }
        if seen.contains(&(os.clone(), arch.clone())) {
            errs.push(format!("platforms[{i}]: more than one platform for {os}/{arch}"));
        }
        seen.push((os, arch));
    }
    let want: BTreeSet<(String, String)> = platforms.iter().map(|(o, a)| (o.to_string(), a.to_string())).collect();
    let got: BTreeSet<(String, String)> = seen.into_iter().collect();
    if got != want {
        errs.push(format!("platforms {got:?}, not {want:?}"));
    }
    errs
}

/// Every violation, krew's first.
fn violations(m: &Value, platforms: &[(&str, &str)]) -> Vec<String> {
    let mut errs: Vec<String> = krew_validate(m, PLUGIN_NAME).err().into_iter().collect();
    errs.extend(project_rules(m, platforms));
    errs
}

/// Renders the krew-release-bot template as the bot does (pkg/source/template.go):
/// `{{ .TagName }}`, and `{{ addURIAndSha "URL" .TagName | indent N }}`, which writes
/// `uri: URL` and `sha256: <sha_of(URL)>`, every line after the first padded by N spaces.
fn render_release_bot_template(t: &str, tag: &str, sha_of: &dyn Fn(&str) -> String) -> String {
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
            let (second, indent) = args.split_once('|').map_or((args, None), |(a, i)| (a.trim(), Some(i.trim())));
            assert_eq!(second, ".TagName", "addURIAndSha's second argument");
            let n: usize = indent.map_or(0, |i| i.strip_prefix("indent").expect("| indent N").trim().parse().unwrap());
            out.push_str(&format!("uri: {url}\n{}sha256: {}", " ".repeat(n), sha_of(&url)));
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

fn tag() -> String {
    format!("v{}", env!("CARGO_PKG_VERSION"))
}

/// The template as the bot renders it, a made-up digest per archive.
fn bot_rendered() -> Value {
    let fake = |url: &str| {
        let d = ring::digest::digest(&ring::digest::SHA256, url.as_bytes());
        d.as_ref().iter().map(|b| format!("{b:02x}")).collect::<String>()
    };
    parse(&render_release_bot_template(&read("krew/.krew.yaml"), &tag(), &fake))
}

#[test]
fn the_template_renders_to_a_manifest_krew_accepts() {
    let m = bot_rendered();
    let errs = violations(&m, &OS_ARCH);
    assert!(errs.is_empty(), "krew/.krew.yaml rendered as krew-release-bot does:\n  {}", errs.join("\n  "));
    let caveats = m.pointer("/spec/caveats").and_then(Value::as_str).unwrap_or("");
    assert!(caveats.contains("read-only"), "caveats say it is read-only");
    assert!(caveats.contains("RBAC"), "caveats say answers may be partial under RBAC");
    assert!(caveats.contains("kubectl_complete-gc"), "caveats say how to link the completion helper");
}

#[test]
fn the_validator_catches_what_krew_rejects() {
    let good = bot_rendered();
    assert!(violations(&good, &OS_ARCH).is_empty());
    let broken = |f: &dyn Fn(&mut Value), expect: &str| {
        let mut m = good.clone();
        f(&mut m);
        let errs = violations(&m, &OS_ARCH);
        assert!(errs.iter().any(|e| e.contains(expect)), "expected {expect:?} in {errs:?}");
    };
    // krew's own rules
    broken(&|m| m["apiVersion"] = "krew.googlecontainertools.github.com/v1alpha1".into(), "apiVersion");
    broken(&|m| m["kind"] = "Plugins".into(), "kind is not Plugin");
    broken(&|m| m["metadata"]["name"] = "tree".into(), "plugin should be named \"gc\"");
    broken(&|m| m["spec"]["shortDescription"] = "".into(), "short description");
    broken(&|m| m["spec"]["platforms"] = serde_json::json!([]), "should have a platform");
    broken(&|m| m["spec"]["version"] = Value::Null, "should have a version");
    broken(&|m| m["spec"]["version"] = "0.1.0".into(), "failed to parse plugin version");
    broken(&|m| m["spec"]["version"] = "v0.1".into(), "failed to parse plugin version");
    broken(&|m| m["spec"]["platforms"][0]["uri"] = Value::Null, "`uri` has to be set");
    broken(&|m| m["spec"]["platforms"][0]["sha256"] = Value::Null, "`sha256` sum has to be set");
    broken(&|m| m["spec"]["platforms"][0]["sha256"] = "ABC".into(), "is not valid, must match");
    broken(&|m| m["spec"]["platforms"][1]["sha256"] = "A".repeat(64).into(), "is not valid, must match");
    broken(&|m| m["spec"]["platforms"][0]["bin"] = "".into(), "`bin` has to be set");
    broken(&|m| m["spec"]["platforms"][0]["files"] = serde_json::json!([]), "unspecified or non-empty");
    broken(&|m| m["spec"]["platforms"][0]["files"] = serde_json::json!([{"from": "*"}]), "`to` field");
    broken(&|m| m["spec"]["platforms"][0]["selector"] = Value::Null, "nil selector");
    broken(&|m| m["spec"]["platforms"][0]["selector"] = serde_json::json!({}), "empty selector");
    broken(&|m| m["spec"]["platforms"][0]["selector"]["matchLabels"]["distro"] = "x".into(), "key \"distro\"");
    broken(&|m| m["spec"]["platforms"][0]["selector"]["matchLabels"] = serde_json::json!({}), "specified but empty");
    broken(
        &|m| m["spec"]["platforms"][0]["selector"]["matchExpressions"] = serde_json::json!([]),
        "`matchExpressions` specified but empty",
    );
    assert!(!is_safe_plugin_name("con") && !is_safe_plugin_name("LPT1") && !is_safe_plugin_name("g c"));
    assert!(!is_safe_plugin_name("gç") && is_safe_plugin_name("com0") && is_safe_plugin_name("gc_why-2"));
    // this project's
    broken(&|m| m["spec"]["version"] = "v9.9.9".into(), "Cargo.toml");
    broken(&|m| m["spec"]["shortDescription"] = "x".repeat(51).into(), "at most 50");
    broken(&|m| m["spec"]["description"] = format!("{}\n", "x".repeat(81)).into(), "over 80");
    broken(&|m| m["spec"]["platforms"][0]["uri"] = "https://x/kubectl-gc.tar.gz".into(), "is not the release's");
    broken(&|m| m["spec"]["platforms"][4]["bin"] = "kubectl-gc".into(), "is not kubectl-gc.exe");
    broken(&|m| m["spec"]["platforms"][1]["selector"]["matchLabels"]["arch"] = "amd64".into(), "more than one");
    broken(&|m| m["spec"]["platforms"].as_array_mut().unwrap().truncate(4), "platforms {");
    assert_eq!(krew_symlink_name("gc"), "kubectl-gc");
    assert_eq!(krew_symlink_name("gc-explain"), "kubectl-gc_explain", "another name would change the command");
}

#[test]
#[cfg(unix)]
fn manifest_script_renders_the_template_as_the_bot_does() {
    let dist = tempfile::tempdir().unwrap();
    let mut sums = std::collections::BTreeMap::new();
    for (os, arch) in OS_ARCH {
        let ext = if os == "windows" { "zip" } else { "tar.gz" };
        let name = format!("kubectl-gc_{}_{os}_{arch}.{ext}", tag());
        let bytes = format!("archive of {os}/{arch}");
        std::fs::write(dist.path().join(&name), &bytes).unwrap();
        let d = ring::digest::digest(&ring::digest::SHA256, bytes.as_bytes());
        sums.insert(name, d.as_ref().iter().map(|b| format!("{b:02x}")).collect::<String>());
    }
    let script = |extra: &[&str]| {
        Command::new("bash")
            .arg(root().join("krew/manifest.sh"))
            .args(["--tag", &tag(), "--dist"])
            .arg(dist.path())
            .args(extra)
            .output()
            .unwrap()
    };
    let out = script(&["--all"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let rendered = parse(&String::from_utf8_lossy(&out.stdout));
    let errs = violations(&rendered, &OS_ARCH);
    assert!(errs.is_empty(), "krew/manifest.sh --all:\n  {}", errs.join("\n  "));
    let sha_of = |url: &str| sums[url.rsplit('/').next().unwrap()].clone();
    let bot = parse(&render_release_bot_template(&read("krew/.krew.yaml"), &tag(), &sha_of));
    assert_eq!(rendered, bot, "krew/manifest.sh and krew-release-bot render the template alike");

    // one archive missing: --all refuses; without it, that platform is left out and named
    std::fs::remove_file(dist.path().join(format!("kubectl-gc_{}_darwin_amd64.tar.gz", tag()))).unwrap();
    let out = script(&["--all"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("darwin_amd64"));
    let out = script(&[]);
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("darwin_amd64"), "the left-out platform is named");
    let partial = parse(&String::from_utf8_lossy(&out.stdout));
    let four: Vec<_> = OS_ARCH.into_iter().filter(|p| *p != ("darwin", "amd64")).collect();
    assert!(violations(&partial, &four).is_empty(), "{:?}", violations(&partial, &four));
    let bad = Command::new("bash").arg(root().join("krew/manifest.sh")).args(["--tag", "0.1.0"]).output().unwrap();
    assert_eq!(bad.status.code(), Some(1), "a tag without its v is refused");
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

    // and the krew manifest of that archive: krew's rules, this machine's platform only, the
    // archive's name as the release's uri and its digest
    let manifest = parse(&std::fs::read_to_string(out.path().join("gc.yaml")).unwrap());
    let errs = violations(&manifest, &[(os, arch)]);
    assert!(errs.is_empty(), "target/dist/gc.yaml:\n  {}", errs.join("\n  "));
    let platform = &manifest["spec"]["platforms"][0];
    assert_eq!(platform["sha256"].as_str(), Some(actual.as_str()), "the manifest's sha256 is the archive's");
    assert!(platform["uri"].as_str().unwrap().ends_with(&format!("/{expected}")), "{platform}");

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

#[test]
#[cfg(unix)]
fn the_fallback_name_is_ready_in_the_template() {
    let template = read("krew/.krew.yaml");
    assert!(template.contains("fallback is `gc-explain`"), "the template names its fallback");
    let dist = tempfile::tempdir().unwrap();
    for (os, arch) in OS_ARCH {
        let ext = if os == "windows" { "zip" } else { "tar.gz" };
        std::fs::write(dist.path().join(format!("kubectl-gc_{}_{os}_{arch}.{ext}", tag())), os).unwrap();
    }
    let render = |name: &str| {
        Command::new("bash")
            .arg(root().join("krew/manifest.sh"))
            .args(["--tag", &tag(), "--all", "--name", name, "--dist"])
            .arg(dist.path())
            .output()
            .unwrap()
    };
    let out = render("gc-explain");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let m = parse(&String::from_utf8_lossy(&out.stdout));
    assert_eq!(krew_validate(&m, "gc-explain"), Ok(()), "krew accepts the manifest under the fallback name");
    assert_eq!(krew_symlink_name("gc-explain"), "kubectl-gc_explain");
    let caveats = m["spec"]["caveats"].as_str().unwrap();
    assert!(caveats.contains("/bin/kubectl_complete-gc_explain\""), "the helper linked as kubectl finds it: {caveats}");
    assert!(caveats.contains("/kubectl_complete-gc\""), "from the helper the archive holds: {caveats}");
    assert!(caveats.contains("`kubectl gc-explain <TAB>`"), "{caveats}");
    let default = parse(&String::from_utf8_lossy(&render("gc").stdout));
    assert_eq!(default, {
        let out = Command::new("bash")
            .arg(root().join("krew/manifest.sh"))
            .args(["--tag", &tag(), "--all", "--dist"])
            .arg(dist.path())
            .output()
            .unwrap();
        parse(&String::from_utf8_lossy(&out.stdout))
    });
    assert_eq!(render("Gc;rm").status.code(), Some(1), "not a krew name");
}

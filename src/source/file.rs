//! Snapshot files: JSON or YAML, one object, a `List`/`*List`, several YAML documents or
//! concatenated JSON values; directories read recursively (`*.json`, `*.yaml`, `*.yml`).

use std::path::{Path, PathBuf};

use crate::snapshot::Snapshot;
use crate::snapshot::raw::{Flattened, RawDoc};

/// Why a snapshot could not be read.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("cannot read {path}")]
    /// A file or directory could not be read.
    Read {
        /// What was being read.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    #[error("{path}:{line}:{column}: {message}")]
    /// A JSON file is not valid JSON.
    Parse {
        /// The file.
        path: PathBuf,
        /// 1-based line of the error.
        line: usize,
        /// 1-based column of the error.
        column: usize,
        /// The parser's message.
        message: String,
    },
    #[error("{path}: {message}")]
    /// A YAML file is not valid YAML.
    ParseYaml {
        /// The file.
        path: PathBuf,
        /// The parser's message (it carries the position).
        message: String,
    },
    #[error("{path}: no *.json, *.yaml or *.yml files found")]
    /// A directory holds no snapshot file.
    Empty {
        /// The directory.
        path: PathBuf,
    },
    #[error("{path}: {message}")]
    /// The file parses but is not Kubernetes objects (no `kind`, no `metadata`, …).
    NotSnapshot {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        message: String,
    },
}

/// The most a snapshot that is not a regular file (a pipe, `<(kubectl get …)`) may hold: it
/// cannot be mapped, so it is read into memory, and an endless source (`/dev/zero`,
/// `/dev/urandom`) must end in an error rather than in the OOM killer.
const STREAM_LIMIT: u64 = 2 << 30;

/// Reads every path (file or directory) into one snapshot.
pub fn load(paths: &[PathBuf]) -> Result<Snapshot, Error> {
    let mut flat = Flattened::default();
    let mut walk = Walk::default();
    for path in paths {
        let files = walk.files_under(path)?;
        if files.is_empty() && walk.visited_before(path) {
            continue; // the same directory named twice (or through a link): read once
        }
        if files.is_empty() {
            return Err(Error::Empty { path: path.clone() });
        }
        for file in files {
            let bytes = map(&file).map_err(|source| Error::Read { path: file.clone(), source })?;
            match &bytes {
                Bytes::Mapped(m) if is_json(&file, m) => {
                    // release the pages of items already parsed, whole pages inside each range
                    let base = m.as_ptr() as usize;
                    let release = |from: usize, to: usize| {
                        let start = (from.saturating_sub(base) + PAGE - 1) & !(PAGE - 1);
                        let end = to.saturating_sub(base).min(m.len()) & !(PAGE - 1);
                        if end > start {
                            // SAFETY: a read-only shared file mapping: dropping its pages only
                            // makes a later read fault them in again from the file.
                            let _ = unsafe {
                                m.unchecked_advise_range(memmap2::UncheckedAdvice::DontNeed, start, end - start)
                            };
                        }
                    };
                    // Room for every object up front: growing by doubling would copy them all
                    // into fresh memory again and again. Capacity never written costs no
                    // resident page, so the generous guess (no real object is under 256
                    // bytes of JSON) is free.
                    flat.objects.reserve(m.len() / 256);
                    parse_json(&file, m, Some(&release), &mut flat)?;
                }
                _ => parse_into(&file, &bytes, &mut flat)?,
            }
        }
    }
    let mut snapshot = Snapshot::from_flattened(flat);
    snapshot.warnings.extend(walk.warnings);
    Ok(snapshot)
}

/// The file's bytes, mapped rather than copied: a 1 GB snapshot then costs page cache, not a
/// gigabyte of freshly zeroed heap. Small files are read.
fn map(path: &Path) -> std::io::Result<Bytes> {
    let file = std::fs::File::open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return read_stream(file);
    }
    let len = meta.len();
    if len < 1 << 20 {
        let mut v = Vec::with_capacity(len as usize);
        std::io::Read::read_to_end(&mut &file, &mut v)?;
        return Ok(Bytes::Read(v));
    }
    // SAFETY: the map is read-only and lives only while this file is parsed. A file truncated
    // meanwhile by another process could fault (SIGBUS); snapshots are written once and read
    // later, and a file that changes under us could not be parsed consistently anyway.
    unsafe { memmap2::Mmap::map(&file) }.map(Bytes::Mapped)
}

/// A pipe or device, read to its end in chunks: a NUL byte, which neither JSON nor YAML
/// allows, fails at once (so `/dev/zero` is refused at its first byte), and so does more than
/// [`STREAM_LIMIT`].
fn read_stream(file: std::fs::File) -> std::io::Result<Bytes> {
    use std::io::Read;
    let mut out = Vec::new();
    let mut chunk = vec![0u8; 64 * 1024];
    let mut file = file.take(STREAM_LIMIT + 1);
    loop {
        let n = match file.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if let Some(at) = chunk[..n].iter().position(|&b| b == 0) {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!("not a snapshot: a NUL byte at offset {} (JSON and YAML are text)", out.len() + at),
            ));
        }
        out.extend_from_slice(&chunk[..n]);
        if out.len() as u64 > STREAM_LIMIT {
            return Err(std::io::Error::new(
                std::io::ErrorKind::FileTooLarge,
                format!("not a regular file and longer than {} GiB: give a file instead", STREAM_LIMIT >> 30),
            ));
        }
    }
    Ok(Bytes::Read(out))
}

enum Bytes {
    Read(Vec<u8>),
    Mapped(memmap2::Mmap),
}

impl std::ops::Deref for Bytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            Bytes::Read(v) => v,
            Bytes::Mapped(m) => m,
        }
    }
}

const PAGE: usize = 4096;

fn is_json(path: &Path, bytes: &[u8]) -> bool {
    let looks_json = bytes.iter().find(|b| !b.is_ascii_whitespace()).is_some_and(|b| *b == b'{' || *b == b'[');
    match path.extension().and_then(|e| e.to_str()).unwrap_or("") {
        "json" => true,
        "yaml" | "yml" => false,
        _ => looks_json,
    }
}

/// Parses one file's bytes; the format is told by the extension, else by the first
/// non-blank byte (`{` or `[` is JSON).
pub fn parse_into(path: &Path, bytes: &[u8], flat: &mut Flattened) -> Result<(), Error> {
    let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
    let looks_json = bytes.iter().find(|b| !b.is_ascii_whitespace()).is_some_and(|b| *b == b'{' || *b == b'[');
    let json = match ext {
        "json" => true,
        "yaml" | "yml" => looks_json && serde_json::from_slice::<serde::de::IgnoredAny>(bytes).is_ok(),
        _ => looks_json,
    };
    if json { parse_json(path, bytes, None, flat) } else { parse_yaml(path, bytes, flat) }
}

fn parse_json(
    path: &Path,
    bytes: &[u8],
    consumed: Option<&crate::snapshot::raw::stream::Release<'_>>,
    flat: &mut Flattened,
) -> Result<(), Error> {
    use serde::de::DeserializeSeed;
    // a stream of top-level values, each an object, a List, or an array of objects
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let parse_error = |e: serde_json::Error, item: Option<crate::snapshot::raw::stream::ItemError>| {
        // an error inside a List item read apart: its position is within the item
        if let Some(item) = item {
            let before = &bytes[..item.offset_in(bytes)];
            let lines_before = before.iter().filter(|&&b| b == b'\n').count();
            let column_base = before.len() - before.iter().rposition(|&b| b == b'\n').map_or(0, |p| p + 1);
            return Error::Parse {
                path: path.to_path_buf(),
                line: lines_before + item.line,
                column: if item.line == 1 { column_base + item.column } else { item.column },
                message: item.message,
            };
        }
        Error::Parse {
            path: path.to_path_buf(),
            line: e.line(),
            column: e.column(),
            message: strip_position(&e.to_string()),
        }
    };
    loop {
        match de.end() {
            Ok(()) => return Ok(()),
            Err(_) => {
                let top = crate::snapshot::raw::stream::TopLevel { flat: &mut *flat, consumed };
                if let Err(e) = top.deserialize(&mut de) {
                    return Err(parse_error(e, flat.item_error.take()));
                }
            }
        }
    }
}

fn parse_yaml(path: &Path, bytes: &[u8], flat: &mut Flattened) -> Result<(), Error> {
    let text = std::str::from_utf8(bytes)
        .map_err(|e| Error::ParseYaml { path: path.to_path_buf(), message: format!("not UTF-8: {e}") })?;
    let docs: Vec<Option<RawDoc>> =
        serde_saphyr::from_multiple_with_options(text, yaml_options(text.len())).map_err(|e| Error::ParseYaml {
            path: path.to_path_buf(),
            message: e.to_string().lines().next().unwrap_or_default().to_string(),
        })?;
    docs.into_iter().flatten().for_each(|d| flat.push(d));
    Ok(())
}

/// serde-saphyr's default budgets (1,024 documents, 250,000 nodes) suit configuration files,
/// not cluster dumps: a 6,000-object List is over them. Budgets that grow with the input keep
/// the protection that matters, against inputs that expand beyond their size: every node,
/// event and document but an alias's replay costs at least a byte of the input, and alias
/// replay keeps its own fixed bounds (total replayed events, anchors, aliases), so a "billion
/// laughs" still fails.
fn yaml_options(len: usize) -> serde_saphyr::Options {
    let mut budget = serde_saphyr::Budget::default();
    budget.max_documents = budget.max_documents.max(len);
    budget.max_nodes = budget.max_nodes.max(len);
    budget.max_events = budget.max_events.max(len.saturating_mul(2));
    budget.max_total_scalar_bytes = budget.max_total_scalar_bytes.max(len);
    budget.max_reader_input_bytes = None; // the text is already in memory
    let mut options = serde_saphyr::Options::default();
    options.budget = Some(budget);
    options
}

/// serde_json appends " at line L column C"; the error already carries them as fields.
fn strip_position(msg: &str) -> String {
    match msg.rfind(" at line ") {
        Some(i) => msg[..i].to_string(),
        None => msg.to_string(),
    }
}

/// Walks snapshot paths: each directory and each file once, however many links lead to it.
#[derive(Default)]
struct Walk {
    /// (device, inode) of every directory and file reached so far.
    seen: std::collections::HashSet<(u64, u64)>,
    warnings: Vec<String>,
    warned_loop: bool,
}

impl Walk {
    fn visited_before(&self, path: &Path) -> bool {
        std::fs::metadata(path).is_ok_and(|m| self.seen.contains(&identity(&m)))
    }

    /// The snapshot files under a path, sorted so that runs are reproducible. Links are
    /// followed, but a directory or file already reached (a link loop, or two links to one
    /// place) is skipped, with one warning.
    fn files_under(&mut self, path: &Path) -> Result<Vec<PathBuf>, Error> {
        let meta = std::fs::metadata(path).map_err(|source| Error::Read { path: path.to_path_buf(), source })?;
        if !meta.is_dir() {
            if !self.seen.insert(identity(&meta)) {
                return Ok(Vec::new());
            }
            return Ok(vec![path.to_path_buf()]);
        }
        let mut out = Vec::new();
        let mut it = walkdir::WalkDir::new(path).follow_links(true).sort_by_file_name().into_iter();
        while let Some(entry) = it.next() {
            let entry = match entry {
                Ok(e) => e,
                Err(e) if e.loop_ancestor().is_some() => {
                    self.warn_loop(e.path().unwrap_or(path));
                    continue;
                }
                Err(e) => {
                    let at = e.path().unwrap_or(path).to_path_buf();
                    let source = e.into_io_error().unwrap_or_else(|| std::io::Error::other("cannot walk"));
                    return Err(Error::Read { path: at, source });
                }
            };
            let p = entry.path();
            let meta = entry.metadata().map_err(|e| Error::Read {
                path: p.to_path_buf(),
                source: e.into_io_error().unwrap_or_else(|| std::io::Error::other("cannot stat")),
            })?;
            let first = self.seen.insert(identity(&meta));
            if meta.is_dir() {
                if !first {
                    self.warn_loop(p);
                    it.skip_current_dir();
                }
                continue;
            }
            if !first || !matches!(p.extension().and_then(|e| e.to_str()), Some("json" | "yaml" | "yml")) {
                continue;
            }
            if !meta.is_file() {
                // a pipe or device in a directory would block or never end: only files count
                self.warnings.push(format!("skipped {}: not a regular file", p.display()));
                continue;
            }
            out.push(p.to_path_buf());
        }
        Ok(out)
    }

    fn warn_loop(&mut self, at: &Path) {
        if !self.warned_loop {
            self.warned_loop = true;
            self.warnings.push(format!(
                "{} leads to a directory already read (a symbolic link loop or a second link): each directory and file is read once",
                at.display()
            ));
        }
    }
}

#[cfg(unix)]
fn identity(m: &std::fs::Metadata) -> (u64, u64) {
    use std::os::unix::fs::MetadataExt;
    (m.dev(), m.ino())
}

#[cfg(not(unix))]
fn identity(_: &std::fs::Metadata) -> (u64, u64) {
    // no inode numbers: every entry counts as new (walkdir still stops at loops)
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    (u64::MAX, NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(name: &str, text: &str) -> Result<Snapshot, Error> {
        let mut flat = Flattened::default();
        parse_into(Path::new(name), text.as_bytes(), &mut flat)?;
        Ok(Snapshot::from_flattened(flat))
    }

    #[test]
    fn broken_json_names_file_line_and_column() {
        let err = parse("x.json", "{\n  \"kind\": \"List\",\n  \"items\": [ }\n").unwrap_err();
        let msg = err.to_string();
        assert!(msg.starts_with("x.json:3:"), "{msg}");
    }

    #[test]
    fn yaml_with_several_documents() {
        let s = parse(
            "x.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, uid: '1'}\n---\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: b, uid: '2'}\n",
        )
        .unwrap();
        assert_eq!(s.objects.len(), 2);
    }

    #[test]
    fn broken_yaml_is_an_error_naming_the_file() {
        let err = parse("bad.yaml", "kind: [unclosed\n").unwrap_err();
        assert!(err.to_string().starts_with("bad.yaml: "), "{err}");
    }

    #[test]
    fn concatenated_json_values_and_arrays() {
        let s = parse(
            "x.json",
            r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","uid":"1"}}
               [{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"b","uid":"2"}}]"#,
        )
        .unwrap();
        assert_eq!(s.objects.len(), 2);
    }

    #[test]
    fn lists_stream_their_items_and_keep_only_the_bodies_the_analysis_reads() {
        let s = parse(
            "x.json",
            r#"{"kind":"List","items":[
                 {"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","uid":"1"},"data":{"k":"v"},"spec":{"x":1}},
                 {"kind":"PodList","items":[{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","uid":"2"},"status":{"phase":"Running"}}]},
                 {"kind":"List","items":null}],
               "capturedAt":"2026-11-29T12:00:00Z","incomplete":["secrets: forbidden"]}"#,
        )
        .unwrap();
        assert_eq!(s.objects.len(), 2);
        assert!(s.objects[0].body.is_empty(), "a ConfigMap's body is not kept");
        assert_eq!(s.objects[1].str_field("/status/phase"), Some("Running"));
        assert_eq!(s.captured_at.unwrap().to_string(), "2026-11-29T12:00:00Z", "read after the items");
        assert_eq!(s.incomplete, ["secrets: forbidden"]);
    }

    #[test]
    fn a_big_mapped_list_reports_errors_at_their_place_in_the_file() {
        // over the size that is mapped and read item by item
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big.json");
        let mut text = String::from("{\"apiVersion\": \"v1\", \"kind\": \"List\",\n \"items\": [\n");
        let mut n = 0;
        while text.len() < 3 << 20 {
            text.push_str(&format!(
                "  {{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{{\"name\":\"c{n}\",\"namespace\":\"a\",\"uid\":\"u{n}\"}},\"data\":{{\"k\":\"{}\"}}}},\n",
                "x".repeat(200)
            ));
            n += 1;
        }
        let good = format!(
            "{text}  {{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{{\"name\":\"last\",\"uid\":\"z\"}}}}\n]}}\n"
        );
        std::fs::write(&path, &good).unwrap();
        let s = load(std::slice::from_ref(&path)).unwrap();
        assert_eq!(s.objects.len(), n + 1);
        assert_eq!(s.objects[n].name, "last");
        // a broken item on the last line but two: line and column are the file's
        let bad_line = good.lines().count() - 2 + 1;
        let bad =
            format!("{text}  {{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{{\"name\": tru}}}}\n]}}\n");
        std::fs::write(&path, &bad).unwrap();
        let err = load(std::slice::from_ref(&path)).unwrap_err().to_string();
        assert!(err.starts_with(&format!("{}:{bad_line}:", path.display())), "{err} (expected line {bad_line})");
        assert!(!err.contains("item@"), "{err}");
        assert_eq!(err.matches(" at line ").count(), 0, "{err}");
    }

    #[test]
    fn odd_inputs_never_panic() {
        for text in ["", "null", "[]", "42", "\"x\"", "{}", "{\"items\": null}", "- a\n- b\n", "~", "{\"metadata\": 3}"]
        {
            let _ = parse("odd.json", text);
            let _ = parse("odd.yaml", text);
        }
    }

    #[test]
    fn duplicate_uids_are_warned_about() {
        let s = parse(
            "x.json",
            r#"[{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","uid":"1"}},
                {"apiVersion":"v1","kind":"Secret","metadata":{"name":"b","uid":"1"}}]"#,
        )
        .unwrap();
        assert_eq!(s.objects.len(), 1);
        assert!(s.warnings.iter().any(|w| w.contains("duplicate uid")), "{:?}", s.warnings);
    }

    const CM: &str = r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namespace":"x","uid":"1"}}"#;

    #[cfg(unix)]
    #[test]
    fn directory_link_loops_are_walked_once_with_one_warning() {
        use std::os::unix::fs::symlink;
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a");
        std::fs::create_dir_all(a.join("b")).unwrap();
        std::fs::write(a.join("x.json"), CM).unwrap();
        symlink(&a, a.join("loop")).unwrap(); // one loop: back to the top
        symlink(&a, a.join("b").join("up")).unwrap(); // a second one, deeper
        symlink(a.join("b"), a.join("side")).unwrap(); // two links to one directory
        symlink(a.join("x.json"), a.join("b").join("again.json")).unwrap(); // and to one file
        let s = load(&[a.clone(), a.join("b")]).unwrap();
        assert_eq!(s.objects.len(), 1);
        assert!(!s.warnings.iter().any(|w| w.contains("duplicate uid")), "{:?}", s.warnings);
        assert_eq!(s.warnings.iter().filter(|w| w.contains("already read")).count(), 1, "{:?}", s.warnings);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_device_is_refused_at_its_first_bytes() {
        let t = std::time::Instant::now();
        let err = load(&[PathBuf::from("/dev/zero")]).unwrap_err();
        assert!(format!("{:#}", anyhow::Error::from(err)).contains("NUL byte at offset 0"));
        assert!(t.elapsed() < std::time::Duration::from_secs(20), "read far beyond the first chunk");
    }

    #[cfg(unix)]
    #[test]
    fn a_pipe_is_read_as_a_stream() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("p");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let writer = {
            let fifo = fifo.clone();
            std::thread::spawn(move || std::fs::write(fifo, CM).unwrap())
        };
        let s = load(std::slice::from_ref(&fifo)).unwrap();
        writer.join().unwrap();
        assert_eq!(s.objects.len(), 1);
    }

    #[test]
    fn a_yaml_list_of_6000_objects_loads() {
        let mut text = String::from("apiVersion: v1\nkind: List\nitems:\n");
        for i in 0..6000 {
            text.push_str(&format!(
                "- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: c{i}\n    namespace: x\n    uid: u{i}\n    labels: {{a: b, c: d, e: f, g: h}}\n    finalizers: [x/y]\n    ownerReferences:\n    - {{apiVersion: v1, kind: ConfigMap, name: o, uid: o{i}, controller: true}}\n  data: {{k1: v, k2: v, k3: v, k4: v, k5: v, k6: v, k7: v, k8: v, k9: v, k10: v, k11: v, k12: v}}\n"
            ));
        }
        let s = parse("big.yaml", &text).unwrap();
        assert_eq!(s.objects.len(), 6000);
        // and as 2,000 documents
        let docs: String = (0..2000)
            .map(|i| format!("apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: c{i}, uid: u{i}}}\n---\n"))
            .collect();
        assert_eq!(parse("docs.yaml", &docs).unwrap().objects.len(), 2000);
    }

    #[test]
    fn a_yaml_alias_bomb_is_refused() {
        let mut text = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
        for i in 1..12 {
            let p = i - 1;
            text.push_str(&format!(
                "a{i}: &a{i} [*a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}]\n"
            ));
        }
        text.push_str("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, uid: u}\n");
        let t = std::time::Instant::now();
        let err = parse("bomb.yaml", &text).unwrap_err().to_string();
        assert!(err.contains("alias") || err.contains("budget") || err.contains("replay"), "{err}");
        assert!(t.elapsed() < std::time::Duration::from_secs(20));
    }
}

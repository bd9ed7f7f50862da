//! Snapshot files: JSON or YAML, one object, a `List`/`*List`, several YAML documents or
//! concatenated JSON values; directories read recursively (`*.json`, `*.yaml`, `*.yml`).

use std::path::{Path, PathBuf};

use crate::snapshot::Snapshot;
use crate::snapshot::raw::{Flattened, RawDoc};

/// Why a snapshot could not be read.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("cannot read {path}")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}:{line}:{column}: {message}")]
    Parse { path: PathBuf, line: usize, column: usize, message: String },
    #[error("{path}: {message}")]
    ParseYaml { path: PathBuf, message: String },
    #[error("{path}: no *.json, *.yaml or *.yml files found")]
    Empty { path: PathBuf },
}

/// Reads every path (file or directory) into one snapshot.
pub fn load(paths: &[PathBuf]) -> Result<Snapshot, Error> {
    let mut flat = Flattened::default();
    for path in paths {
        let files = files_under(path)?;
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
    Ok(Snapshot::from_flattened(flat))
}

/// The file's bytes, mapped rather than copied: a 1 GB snapshot then costs page cache, not a
/// gigabyte of freshly zeroed heap. Small files are read.
fn map(path: &Path) -> std::io::Result<Bytes> {
    let file = std::fs::File::open(path)?;
    let len = file.metadata()?.len();
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
    let docs: Vec<Option<RawDoc>> = serde_saphyr::from_multiple(text).map_err(|e| Error::ParseYaml {
        path: path.to_path_buf(),
        message: e.to_string().lines().next().unwrap_or_default().to_string(),
    })?;
    docs.into_iter().flatten().for_each(|d| flat.push(d));
    Ok(())
}

/// serde_json appends " at line L column C"; the error already carries them as fields.
fn strip_position(msg: &str) -> String {
    match msg.rfind(" at line ") {
        Some(i) => msg[..i].to_string(),
        None => msg.to_string(),
    }
}

/// The snapshot files under a path, sorted so that runs are reproducible.
fn files_under(path: &Path) -> Result<Vec<PathBuf>, Error> {
    let meta = std::fs::metadata(path).map_err(|source| Error::Read { path: path.to_path_buf(), source })?;
    if !meta.is_dir() {
        return Ok(vec![path.to_path_buf()]);
    }
    let mut out = Vec::new();
    let mut dirs = vec![path.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        let entries = std::fs::read_dir(&dir).map_err(|source| Error::Read { path: dir.clone(), source })?;
        for entry in entries {
            let entry = entry.map_err(|source| Error::Read { path: dir.clone(), source })?;
            let p = entry.path();
            if p.is_dir() {
                dirs.push(p);
            } else if matches!(p.extension().and_then(|e| e.to_str()), Some("json" | "yaml" | "yml")) {
                out.push(p);
            }
        }
    }
    out.sort();
    Ok(out)
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
}

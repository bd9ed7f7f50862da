//! Snapshot files: JSON or YAML, one object, a `List`/`*List`, several YAML documents or
//! concatenated JSON values; directories read recursively (`*.json`, `*.yaml`, `*.yml`).

use std::path::{Path, PathBuf};

use crate::snapshot::raw::{Flattened, RawDoc};
use crate::snapshot::Snapshot;

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
            parse_into(&file, &bytes, &mut flat)?;
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
    if json {
        parse_json(path, bytes, flat)
    } else {
        parse_yaml(path, bytes, flat)
    }
}

fn parse_json(path: &Path, bytes: &[u8], flat: &mut Flattened) -> Result<(), Error> {
    use serde::de::DeserializeSeed;
    // a stream of top-level values, each an object, a List, or an array of objects
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let parse_error = |e: serde_json::Error| Error::Parse {
        path: path.to_path_buf(),
        line: e.line(),
        column: e.column(),
        message: strip_position(&e.to_string()),
    };
    loop {
        match de.end() {
            Ok(()) => return Ok(()),
            Err(_) => crate::snapshot::raw::stream::TopLevel(&mut *flat).deserialize(&mut de).map_err(parse_error)?,
        }
    }
}

fn parse_yaml(path: &Path, bytes: &[u8], flat: &mut Flattened) -> Result<(), Error> {
    let text = std::str::from_utf8(bytes).map_err(|e| Error::ParseYaml {
        path: path.to_path_buf(),
        message: format!("not UTF-8: {e}"),
    })?;
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
    fn odd_inputs_never_panic() {
        for text in ["", "null", "[]", "42", "\"x\"", "{}", "{\"items\": null}", "- a\n- b\n", "~", "{\"metadata\": 3}"] {
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

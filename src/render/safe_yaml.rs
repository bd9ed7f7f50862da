//! YAML for terminals and log viewers, by the rule text and JSON follow ([`super::style::is_unsafe`]):
//! serde-saphyr escapes control characters (C0, DEL, C1) by double-quoting the scalar, but
//! writes bidi controls as they are, in any style. A string holding a character the rule
//! escapes is written instead as its JSON string from [`super::safe_json`] — JSON's escapes
//! (`\"`, `\\`, `\n`, `\uXXXX`) are YAML's double-quoted escapes, so it reads back the same.
//!
//! serde-saphyr chooses each scalar's style and has no hook to force one, so such strings are
//! first replaced by placeholders it writes plain (a random nonce: no name from the cluster can
//! forge one), and the placeholders then by the quoted strings, in one pass over the text.

use std::io;

use serde::Serialize;
use serde_json::Value;

use super::style::is_unsafe;

/// A character the rule escapes and serde-saphyr may leave raw; line breaks and tabs are
/// YAML's own (block scalars), and serde-saphyr escapes the other controls.
fn needs_quoting(c: char) -> bool {
    is_unsafe(c) && c != '\n' && c != '\t'
}

/// Block YAML, escaped for terminals; the same bytes as serde-saphyr's when nothing needs it.
pub fn to_string<T: Serialize>(value: &T) -> io::Result<String> {
    let text = serde_saphyr::to_string(value).map_err(io::Error::other)?;
    if !text.chars().any(needs_quoting) {
        return Ok(text);
    }
    let mut v = serde_json::to_value(value).map_err(io::Error::other)?;
    let prefix = format!("kubectlgcq{:016x}n", nonce());
    let mut originals = Vec::new();
    mark(&mut v, &prefix, &mut originals);
    let text = serde_saphyr::to_string(&v).map_err(io::Error::other)?;
    let mut out = String::with_capacity(text.len());
    let mut rest = text.as_str();
    while let Some(at) = rest.find(&prefix) {
        out.push_str(&rest[..at]);
        let after = &rest[at + prefix.len()..];
        let digits = after.find('z').filter(|&n| n > 0 && after[..n].bytes().all(|b| b.is_ascii_digit()));
        match digits.and_then(|n| Some((n, originals.get(after[..n].parse::<usize>().ok()?)?))) {
            Some((n, s)) => {
                out.push_str(&super::safe_json::to_string(s)?);
                rest = &after[n + 1..];
            }
            None => {
                out.push_str(&prefix);
                rest = after;
            }
        }
    }
    out.push_str(rest);
    Ok(out)
}

/// Replaces every string (value or key) that needs quoting by `<prefix><n>z`, keeping it as
/// `originals[n]`.
fn mark(v: &mut Value, prefix: &str, originals: &mut Vec<String>) {
    let hold = |s: String, originals: &mut Vec<String>| {
        if !s.chars().any(needs_quoting) {
            return s;
        }
        originals.push(s);
        format!("{prefix}{}z", originals.len() - 1)
    };
    match v {
        Value::String(s) => *s = hold(std::mem::take(s), originals),
        Value::Array(a) => a.iter_mut().for_each(|x| mark(x, prefix, originals)),
        Value::Object(m) => {
            let entries = std::mem::take(m);
            for (k, mut x) in entries {
                mark(&mut x, prefix, originals);
                m.insert(hold(k, originals), x);
            }
        }
        _ => {}
    }
}

/// A random number without a crate: the std hasher's per-process random keys.
fn nonce() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u8(0);
    h.finish()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    #[test]
    fn bidi_and_c1_are_escaped_and_the_value_reads_back_the_same() {
        let v = json!({
            "holder": "op\u{202e}lanigiro",
            "manager": "a\u{9b}2Jb",
            "message": "two\nlines \u{2066}x",
            "plain": "é ok",
            "list": ["\u{200f}", "fine"],
            "k\u{202d}ey": 1,
        });
        let text = super::to_string(&v).unwrap();
        assert!(!text.chars().any(super::needs_quoting), "{text}");
        assert!(text.contains(r"\u202e") && text.contains("plain: é ok"), "{text}");
        assert!(!text.contains("kubectlgcq"), "{text}");
        let back: serde_json::Value = serde_saphyr::from_str(&text).unwrap();
        assert_eq!(back, v);
    }

    #[test]
    fn nothing_to_escape_is_serde_saphyrs_own_output() {
        let v = json!({"name": "web", "count": 2, "message": "a: b # c"});
        assert_eq!(super::to_string(&v).unwrap(), serde_saphyr::to_string(&v).unwrap());
    }

    #[test]
    fn a_forged_placeholder_stays_text() {
        let v = json!({"a": "kubectlgcq0000000000000000n0z", "b": "x\u{202e}"});
        let back: serde_json::Value = serde_saphyr::from_str(&super::to_string(&v).unwrap()).unwrap();
        assert_eq!(back, v);
    }
}

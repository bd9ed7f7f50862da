//! JSON for terminals and log viewers: serde_json escapes only C0 controls, `"` and `\`; this
//! formatter also escapes DEL, C1 controls (U+0080–U+009F, a terminal's 8-bit CSI/OSC) and
//! bidi overrides, which would otherwise reach whoever `cat`s the output — the one rule text
//! and YAML follow too ([`super::style::is_unsafe`]). The JSON means the same.

use std::io::{self, Write};

use serde::Serialize;
use serde_json::ser::{CompactFormatter, Formatter, PrettyFormatter};

/// Wraps a formatter, escaping what a terminal would act on.
pub struct Safe<F>(pub F);

/// serde_json escapes C0 itself, so a fragment holds only what it leaves.
fn risky(c: char) -> bool {
    super::style::is_unsafe(c)
}

macro_rules! delegate {
    ($($name:ident ( $($arg:ident : $ty:ty),* )),* $(,)?) => {
        $(fn $name<W: ?Sized + Write>(&mut self, w: &mut W $(, $arg: $ty)*) -> io::Result<()> {
            self.0.$name(w $(, $arg)*)
        })*
    };
}

impl<F: Formatter> Formatter for Safe<F> {
    fn write_string_fragment<W: ?Sized + Write>(&mut self, w: &mut W, fragment: &str) -> io::Result<()> {
        if !fragment.chars().any(risky) {
            return w.write_all(fragment.as_bytes());
        }
        let mut start = 0;
        for (i, c) in fragment.char_indices() {
            if risky(c) {
                w.write_all(&fragment.as_bytes()[start..i])?;
                write!(w, "\\u{:04x}", c as u32)?;
                start = i + c.len_utf8();
            }
        }
        w.write_all(&fragment.as_bytes()[start..])
    }
    delegate!(
        begin_array(),
        end_array(),
        begin_array_value(first: bool),
        end_array_value(),
        begin_object(),
        end_object(),
        begin_object_key(first: bool),
        end_object_key(),
        begin_object_value(),
        end_object_value(),
    );
}

/// Pretty JSON, escaped for terminals.
pub fn to_writer_pretty<T: Serialize + ?Sized>(w: &mut impl Write, value: &T) -> io::Result<()> {
    let mut ser = serde_json::Serializer::with_formatter(w, Safe(PrettyFormatter::new()));
    value.serialize(&mut ser).map_err(io::Error::other)
}

/// Compact JSON, escaped for terminals.
pub fn to_string<T: Serialize + ?Sized>(value: &T) -> io::Result<String> {
    let mut out = Vec::new();
    let mut ser = serde_json::Serializer::with_formatter(&mut out, Safe(CompactFormatter));
    value.serialize(&mut ser).map_err(io::Error::other)?;
    String::from_utf8(out).map_err(io::Error::other)
}

#[cfg(test)]
mod tests {
    #[test]
    fn c1_controls_and_bidi_overrides_are_escaped_and_the_value_is_unchanged() {
        let v = serde_json::json!({"name": "a\u{9b}2Jb\u{202e}c\u{85}d\n", "plain": "é"});
        let text = super::to_string(&v).unwrap();
        assert!(!text.contains('\u{9b}') && !text.contains('\u{202e}') && !text.contains('\u{85}'), "{text}");
        assert!(text.contains(r"\u009b") && text.contains(r"\u202e") && text.contains('é'), "{text}");
        let back: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(back, v);
        let mut pretty = Vec::new();
        super::to_writer_pretty(&mut pretty, &v).unwrap();
        let back: serde_json::Value = serde_json::from_slice(&pretty).unwrap();
        assert_eq!(back, v);
        assert!(String::from_utf8(pretty).unwrap().contains("\n  \"name\""));
    }
}

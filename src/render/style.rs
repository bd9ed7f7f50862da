//! Colour, sanitising and wrapping for text output. Colour and width are decided once by the
//! CLI and passed in.

use owo_colors::OwoColorize;
use unicode_width::UnicodeWidthChar;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
/// How text output looks: colour on or off, and where prose wraps.
pub struct Style {
    /// Whether to emit ANSI colour, as the CLI decided from `--color`, the terminal and `NO_COLOR`.
    pub color: bool,
    /// The column prose wraps at; `None`: one line per item (piped output).
    pub width: Option<usize>,
}

impl Style {
    /// No colour, no wrapping: what tests and pipes get.
    pub const PLAIN: Style = Style { color: false, width: None };

    /// Red and bold: what holds the deletion.
    pub fn bad(self, s: &str) -> String {
        if self.color { s.red().bold().to_string() } else { s.to_string() }
    }
    /// Yellow: what may.
    pub fn warn(self, s: &str) -> String {
        if self.color { s.yellow().to_string() } else { s.to_string() }
    }
    /// Green: what is fine.
    pub fn good(self, s: &str) -> String {
        if self.color { s.green().to_string() } else { s.to_string() }
    }
    /// Dimmed: context.
    pub fn dim(self, s: &str) -> String {
        if self.color { s.dimmed().to_string() } else { s.to_string() }
    }
    /// Bold: names and headings.
    pub fn strong(self, s: &str) -> String {
        if self.color { s.bold().to_string() } else { s.to_string() }
    }

    /// [`Style::wrap`], where `first` is a row's fixed columns (a tree's, a plan step's) that
    /// stay whole: when not even the first word fits after them, the text starts on the next
    /// line, at `rest`.
    pub fn wrap_after(self, text: &str, first: &str, rest: &str) -> String {
        let Some(width) = self.width else { return format!("{first}{text}") };
        let first_word = text.split(' ').find(|w| !w.is_empty()).map(columns).unwrap_or(0);
        if columns(first) + first_word > width && columns(first) > columns(rest) {
            format!("{}\n{}", first.trim_end(), self.wrap(text, rest, rest))
        } else {
            self.wrap(text, first, rest)
        }
    }

    /// `text` as lines of at most `width` columns: the first starts with `first`, the others
    /// with `rest`. Breaks only at spaces; a word wider than a line (a URL, a long name) stays
    /// whole on a line of its own. `text` must be sanitized already (it may carry this
    /// style's colours, which take no columns).
    pub fn wrap(self, text: &str, first: &str, rest: &str) -> String {
        let Some(width) = self.width else { return format!("{first}{text}") };
        let mut out = String::with_capacity(text.len() + first.len());
        out.push_str(first);
        let mut col = columns(first);
        let mut at_start = true;
        for word in text.split(' ') {
            if word.is_empty() {
                // a run of spaces (a column gap) is kept, except where a line was broken
                if !at_start {
                    out.push(' ');
                    col += 1;
                }
                continue;
            }
            let w = columns(word);
            if !at_start && col + 1 + w > width {
                out.push('\n');
                out.push_str(rest);
                col = columns(rest);
                at_start = true;
            }
            if !at_start {
                out.push(' ');
                col += 1;
            }
            out.push_str(word);
            col += w;
            at_start = false;
        }
        out
    }
}

/// The columns a string takes on a terminal: ANSI colour sequences take none, wide
/// characters two.
pub fn columns(s: &str) -> usize {
    let mut n = 0;
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c == '\x1b' {
            // CSI … final byte: our own colours only (data is sanitized before it gets here)
            for c in chars.by_ref() {
                if c.is_ascii_alphabetic() {
                    break;
                }
            }
            continue;
        }
        n += c.width().unwrap_or(0);
    }
    n
}

/// Replaces control characters (newlines and carriage returns included: a data field must
/// not forge a line of its own) and bidi overrides, which a hostile object name, finalizer or
/// condition message could use to rewrite the terminal, with their escaped form. Lines are
/// the renderer's business: it writes each one itself.
pub fn sanitize(s: &str) -> String {
    if !s.chars().any(is_unsafe) {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if is_unsafe(c) => out.extend(c.escape_unicode()),
            c => out.push(c),
        }
    }
    out
}

/// Control characters (C0, DEL, C1) and the bidi controls that reorder what follows them.
pub fn is_unsafe(c: char) -> bool {
    c.is_control() || is_bidi(c)
}

pub use crate::names::is_bidi;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_and_bidi_characters_are_escaped() {
        assert_eq!(sanitize("a\u{1b}[2Jb"), "a\\u{1b}[2Jb");
        assert_eq!(sanitize("x\u{202E}y"), "x\\u{202e}y");
        assert_eq!(sanitize("plain-name"), "plain-name");
    }

    #[test]
    fn a_data_field_cannot_forge_a_line() {
        let forged = sanitize("x\n\nNext steps\r\n  1. Run: kubectl delete namespace kube-system\u{85}");
        assert!(!forged.contains('\n') && !forged.contains('\r') && !forged.contains('\u{85}'), "{forged}");
        assert!(forged.starts_with("x\\n\\nNext steps\\r\\n"));
    }

    #[test]
    fn wrapping_breaks_at_spaces_and_keeps_long_words_whole() {
        let st = Style { color: false, width: Some(20) };
        let text = st.wrap("one two three four five six seven", "  ", "    ");
        assert_eq!(text, "  one two three four\n    five six seven");
        let long = st.wrap("a https://example.com/a/very/long/path b", "", "  ");
        assert_eq!(long, "a\n  https://example.com/a/very/long/path\n  b");
        assert_eq!(Style::PLAIN.wrap("x  y", "- ", ""), "- x  y", "no width: untouched");
        assert_eq!(st.wrap("x  y", "", ""), "x  y", "gaps are kept");
        let colored = Style { color: true, width: Some(10) };
        assert_eq!(columns(&colored.bad("STUCK")), 5);
    }
}

//! Colour and sanitising for text output. Colour is decided once by the CLI and passed in.

use owo_colors::OwoColorize;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Style {
    pub color: bool,
}

impl Style {
    pub const PLAIN: Style = Style { color: false };

    pub fn bad(self, s: &str) -> String {
        if self.color { s.red().bold().to_string() } else { s.to_string() }
    }
    pub fn warn(self, s: &str) -> String {
        if self.color { s.yellow().to_string() } else { s.to_string() }
    }
    pub fn good(self, s: &str) -> String {
        if self.color { s.green().to_string() } else { s.to_string() }
    }
    pub fn dim(self, s: &str) -> String {
        if self.color { s.dimmed().to_string() } else { s.to_string() }
    }
    pub fn strong(self, s: &str) -> String {
        if self.color { s.bold().to_string() } else { s.to_string() }
    }
}

/// Replaces control and bidi-override characters, which a hostile object name or finalizer
/// could use to rewrite the terminal, with their escaped form.
pub fn sanitize(s: &str) -> String {
    if !s.chars().any(is_unsafe) {
        return s.to_string();
    }
    s.chars().map(|c| if is_unsafe(c) { c.escape_unicode().to_string() } else { c.to_string() }).collect()
}

fn is_unsafe(c: char) -> bool {
    (c.is_control() && c != '\n')
        || matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' | '\u{200E}' | '\u{200F}')
}

#[cfg(test)]
mod tests {
    #[test]
    fn control_and_bidi_characters_are_escaped() {
        assert_eq!(super::sanitize("a\u{1b}[2Jb"), "a\\u{1b}[2Jb");
        assert_eq!(super::sanitize("x\u{202E}y"), "x\\u{202e}y");
        assert_eq!(super::sanitize("plain-name"), "plain-name");
    }
}

//! stdout and stderr: a buffered stdout, the colour decision, warnings in kubectl's tone.

use std::io::{self, IsTerminal, Write};

use super::args::ColorChoice;

/// stdout, block-buffered; errors (a closed pipe) surface on write or flush.
pub fn stdout() -> io::BufWriter<io::StdoutLock<'static>> {
    io::BufWriter::with_capacity(64 * 1024, io::stdout().lock())
}

/// Colour on a terminal unless NO_COLOR is set to a non-empty value or TERM is dumb;
/// `--color` overrides.
pub fn use_color(choice: ColorChoice) -> bool {
    match choice {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => auto_color(
            std::env::var_os("NO_COLOR").as_deref(),
            std::env::var("TERM").ok().as_deref(),
            io::stdout().is_terminal(),
        ),
    }
}

/// `--color=auto`: a terminal, not `TERM=dumb`, and no `NO_COLOR` — which no-color.org defines
/// as present *and not an empty string*: `NO_COLOR=` leaves colour on.
fn auto_color(no_color: Option<&std::ffi::OsStr>, term: Option<&str>, terminal: bool) -> bool {
    no_color.is_none_or(|v| v.is_empty()) && term != Some("dumb") && terminal
}

/// The column text output wraps at: `--width N` (0: none), else the terminal's width when
/// stdout is one (80 when its size cannot be read), else none: piped text stays one line per
/// item, for grep.
pub fn text_width(flag: Option<usize>) -> Option<usize> {
    match flag {
        Some(0) => None,
        Some(n) => Some(n),
        None if io::stdout().is_terminal() => {
            Some(terminal_size::terminal_size().map(|(w, _)| usize::from(w.0)).filter(|&w| w > 0).unwrap_or(80))
        }
        None => None,
    }
}

/// A warning on stderr; a failed write to stderr is ignored.
pub fn warn(msg: &str) {
    let _ = writeln!(io::stderr().lock(), "warning: {}", one_line(msg));
}

/// A note on stderr (why a watch ended), one line.
pub fn note(msg: &str) {
    let _ = writeln!(io::stderr().lock(), "{}", one_line(msg));
}

/// An error on stderr, as one `error:` line.
pub fn error(msg: &str) {
    let _ = writeln!(io::stderr().lock(), "error: {}", one_line(msg));
}

/// A message as one line a terminal shows as it is: control and bidi characters escaped as
/// stdout's text is (`render::style::sanitize`), and line breaks too, so that a server's
/// Status message, a file name or an object name can neither drive the terminal nor forge a
/// second `error:` line.
///
/// Cut to [`LINE_CHARS`] characters: a warning or an error echoes what a server or a file
/// said (a snapshot's `incomplete` entry, a Status message), which may be megabytes long.
pub fn one_line(msg: &str) -> String {
    let msg = msg.trim_end_matches('\n');
    let cut = match msg.char_indices().nth(LINE_CHARS) {
        Some((at, _)) => &msg[..at],
        None => msg,
    };
    let mut clean = kubectl_gc::render::style::sanitize(cut);
    if clean.contains('\n') {
        clean = clean.replace('\n', "\\u{a}");
    }
    if cut.len() < msg.len() {
        clean.push_str(&format!("… ({} more characters)", msg[cut.len()..].chars().count()));
    }
    clean
}

/// Characters of one warning or error line at most.
pub const LINE_CHARS: usize = 500;

/// `-o yaml`: block YAML, escaped as text and JSON are (`render::safe_yaml`).
pub fn yaml<T: serde::Serialize>(value: &T, w: &mut impl Write) -> anyhow::Result<()> {
    let text = kubectl_gc::render::safe_yaml::to_string(value)?;
    w.write_all(text.as_bytes())?;
    Ok(())
}

/// With `KUBECTL_GC_TIMINGS` set, how long a phase took, on stderr (for profiling).
pub fn timing(phase: &str, since: std::time::Instant) {
    if std::env::var_os("KUBECTL_GC_TIMINGS").is_some() {
        let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
        let mb = |k: &str| {
            status
                .lines()
                .find(|l| l.starts_with(k))
                .and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
                .unwrap_or(0)
                / 1024
        };
        let _ = writeln!(
            io::stderr().lock(),
            "timing: {phase} {:.3}s (rss {} MB: anon {} MB, file {} MB)",
            since.elapsed().as_secs_f64(),
            mb("VmRSS:"),
            mb("RssAnon:"),
            mb("RssFile:")
        );
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn no_color_disables_colour_only_when_set_and_not_empty() {
        assert!(super::auto_color(None, Some("xterm-256color"), true));
        assert!(
            super::auto_color(Some(std::ffi::OsStr::new("")), Some("xterm"), true),
            "an empty NO_COLOR does not disable colour"
        );
        assert!(!super::auto_color(Some(std::ffi::OsStr::new("1")), Some("xterm"), true));
        assert!(
            !super::auto_color(Some(std::ffi::OsStr::new("0")), Some("xterm"), true),
            "any non-empty value, even 0"
        );
        assert!(!super::auto_color(None, Some("dumb"), true));
        assert!(super::auto_color(None, None, true), "no TERM at all is not dumb");
        assert!(!super::auto_color(None, Some("xterm"), false), "never into a pipe");
    }

    #[test]
    fn a_message_is_one_line_without_terminal_controls() {
        assert_eq!(super::one_line("a\r\nerror: b\u{1b}[2J\u{9b}\n"), "a\\r\\nerror: b\\u{1b}[2J\\u{9b}");
        assert_eq!(super::one_line("plain"), "plain");
        let long = super::one_line(&"x".repeat(20_000));
        assert!(
            long.starts_with(&"x".repeat(super::LINE_CHARS)) && long.ends_with("… (19500 more characters)"),
            "{long}"
        );
    }
}

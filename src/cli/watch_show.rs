//! How `--watch` shows its answers (contract §4.5): redrawn in place on a terminal, a line per
//! change when piped, a JSON object a line, a YAML document per answer; and the terminal left
//! clean however the watch ends.

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use anyhow::Result;
use k8s_openapi::jiff::Timestamp;

use kubectl_gc::render;
use kubectl_gc::source::live::pace::GIVE_UP;
use kubectl_gc::source::live::watch::Note;
use kubectl_gc::watch::{Change, ChangeKind, Observed, Verdict};

use super::output;
use super::watch::human;

/// One answer, judged.
pub struct Judged {
    pub observed: Observed,
    /// The answer as the single answer writes it in the watch's format: text, one line of
    /// JSON, or YAML (`None` once gone).
    pub answer: Option<Vec<u8>>,
}

pub enum Mode {
    /// Redrawn in place; `rows` drawn last time (a line wider than the terminal takes more),
    /// `width` the terminal's columns then.
    Terminal { rows: usize, width: usize },
    /// One line per change.
    Lines,
    /// One JSON object per answer.
    Json,
    /// One YAML document per answer.
    Yaml,
}

pub struct Out {
    pub mode: Mode,
    pub started: Instant,
    pub title: String,
    /// The changes shown in the terminal's header.
    pub last: String,
    /// On a terminal, what is said beside the answers (a read that keeps failing), by read.
    pub status: Vec<(String, String)>,
    /// Watch events ignored as not about what was watched.
    pub ignored: u64,
    /// The verdict of the last answer written, or being written: how the watch ends when its
    /// reader goes away.
    pub shown: Option<Verdict>,
}

fn mark(k: ChangeKind) -> &'static str {
    match k {
        ChangeKind::Deleted | ChangeKind::Recreated => "✗",
        ChangeKind::FinalizerRemoved | ChangeKind::FindingResolved | ChangeKind::ControllerBack => "-",
        ChangeKind::FinalizerAdded | ChangeKind::FinalizerReAdded | ChangeKind::FindingNew | ChangeKind::Appeared => {
            "+"
        }
        ChangeKind::ControllerDown => "!",
        ChangeKind::DeletionStarted | ChangeKind::Verdict | ChangeKind::FindingChanged => "~",
    }
}

/// The changes as the JSON and YAML records carry them.
#[derive(serde::Serialize)]
struct Record<'a> {
    time: String,
    verdict: &'static str,
    change: Vec<ChangeWire<'a>>,
}

#[derive(serde::Serialize)]
struct ChangeWire<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    object: Option<&'a str>,
    message: &'a str,
}

impl Out {
    fn elapsed(&self) -> String {
        format!("+{}", human(self.started.elapsed()))
    }

    /// A new answer, and the changes that led to it.
    pub fn answer(&mut self, j: &Judged, changes: &[Change]) -> Result<()> {
        self.shown = Some(j.observed.verdict);
        let time = Timestamp::now().round(k8s_openapi::jiff::Unit::Second).unwrap_or_else(|_| Timestamp::now());
        let verdict = j.observed.verdict.as_str();
        let record = || Record {
            time: time.to_string(),
            verdict,
            change: changes
                .iter()
                .map(|c| ChangeWire { kind: c.kind.as_str(), object: c.object.as_deref(), message: &c.message })
                .collect(),
        };
        let mut w = output::stdout();
        match self.mode {
            Mode::Json => {
                // {"time", "verdict", "change", "answer"}: the answer's own line spliced in
                let mut head = render::safe_json::to_string(&record())?;
                head.pop();
                w.write_all(head.as_bytes())?;
                w.write_all(b",\"answer\":")?;
                match &j.answer {
                    Some(a) => w.write_all(a.trim_ascii_end())?,
                    None => w.write_all(b"null")?,
                }
                w.write_all(b"}\n")?;
            }
            Mode::Yaml => {
                // a document per answer; the answer is the single answer's YAML, indented
                w.write_all(b"---\n")?;
                w.write_all(render::safe_yaml::to_string(&record())?.as_bytes())?;
                match &j.answer {
                    Some(a) => {
                        w.write_all(b"answer:\n")?;
                        for line in String::from_utf8_lossy(a).lines() {
                            writeln!(w, "  {line}")?;
                        }
                    }
                    None => w.write_all(b"answer: null\n")?,
                }
            }
            Mode::Lines => {
                if changes.is_empty() {
                    let text = j.answer.as_deref().map(String::from_utf8_lossy).unwrap_or_default();
                    let first = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("").trim();
                    writeln!(w, "{time} {} {verdict} watching {}: {first}", self.elapsed(), sanitize(&self.title))?;
                }
                for c in changes {
                    writeln!(w, "{time} {} {verdict} {}: {}", self.elapsed(), c.kind.as_str(), sanitize(&c.message))?;
                }
            }
            Mode::Terminal { .. } => {
                let mut header = String::new();
                if !changes.is_empty() {
                    header.push_str(&format!("Changed at {time} ({}):\n", self.elapsed()));
                    for c in changes {
                        header.push_str(&format!("  {} {}\n", mark(c.kind), sanitize(&c.message)));
                    }
                }
                self.last = header;
                drop(w);
                return self.redraw(j);
            }
        }
        w.flush()?;
        Ok(())
    }

    /// What the followers say beside the answers: on stderr, or on a terminal in the frame's
    /// header (a warning on stderr would break the frame drawn in place).
    pub fn tell(&mut self, notes: Vec<Note>, ignored: u64) -> Result<()> {
        self.ignored = ignored;
        for n in notes {
            let (read, line) = match n {
                Note::Failing { read, problem, failing_for } => {
                    let line = format!(
                        "watching {read} keeps failing ({} so far): {problem}; asked again with backoff, given up after {} of failing",
                        human(failing_for),
                        human(GIVE_UP)
                    );
                    (read, Some(line))
                }
                Note::Recovered { read } => {
                    if !matches!(self.mode, Mode::Terminal { .. }) {
                        output::warn(&sanitize(&format!("watching {read} works again")));
                    }
                    (read, None)
                }
                Note::Ignored { read, what } => {
                    let line = format!(
                        "the watch of {read} sent an event about {what}, which it did not ask for: ignored (as is any other)"
                    );
                    (format!("ignored {read}"), Some(line))
                }
            };
            self.status.retain(|(r, _)| *r != read);
            let Some(line) = line else { continue };
            if matches!(self.mode, Mode::Terminal { .. }) {
                self.status.push((read, line));
            } else {
                output::warn(&sanitize(&line));
            }
        }
        Ok(())
    }

    /// The terminal's frame again (the elapsed time moves on): each line overwritten in place,
    /// the whole frame in one write, so that Ctrl-C finds whole frames. The frame fits the
    /// screen: the header (what is watched, the verdict, what went wrong, what changed) first,
    /// then as much of the answer as fits, the rest cut with a line saying so.
    pub fn redraw(&mut self, j: &Judged) -> Result<()> {
        let (width, height) = terminal_size::terminal_size()
            .map_or((80, 24), |(w, h)| (usize::from(w.0).max(1), usize::from(h.0).max(1)));
        let mut head = vec![title_line(
            &sanitize(&self.title),
            j.observed.verdict.as_str(),
            &human(self.started.elapsed()),
            width,
        )];
        head.extend(self.status.iter().map(|(_, l)| format!("! {}", sanitize(l))));
        head.extend(self.last.lines().map(str::to_string));
        let answer = j.answer.as_deref().map(String::from_utf8_lossy).unwrap_or_default();
        let lines = fit(head, answer.lines(), width, height);
        let Mode::Terminal { rows, width: drawn_at } = &mut self.mode else { return Ok(()) };
        let mut bytes = Vec::with_capacity(lines.iter().map(|l| l.len() + 4).sum::<usize>() + 64);
        if *rows > 0 {
            // taller than the screen, the cursor cannot go back up far enough; resized, the last
            // frame's rows are no longer known (a terminal may have wrapped its lines again)
            if *rows >= height || width != *drawn_at {
                bytes.extend_from_slice(b"\x1b[H\x1b[2J");
            } else {
                bytes.extend_from_slice(format!("\x1b[{rows}F").as_bytes());
            }
        }
        let mut drawn = 0;
        for l in &lines {
            bytes.extend_from_slice(l.as_bytes());
            bytes.extend_from_slice(b"\x1b[K\n");
            drawn += terminal_rows(l, width);
        }
        bytes.extend_from_slice(b"\x1b[J");
        let mut w = output::stdout();
        w.write_all(&bytes)?;
        w.flush()?;
        *rows = drawn;
        *drawn_at = width;
        Ok(())
    }
}

/// The frame's first line, on one row (short of the last column, where a terminal's pending
/// wrap would let the erase that follows take the last character): what is watched, the
/// verdict, the elapsed time, and how to stop if there is room; a title too long is cut.
fn title_line(title: &str, verdict: &str, elapsed: &str, width: usize) -> String {
    let room = width.saturating_sub(1);
    let full = format!("Watching {title} — {verdict} · {elapsed} elapsed · Ctrl-C to stop");
    if render::style::columns(&full) <= room {
        return full;
    }
    let tail = format!(" — {verdict} · {elapsed} elapsed");
    let keep = room.saturating_sub(render::style::columns(&tail) + "Watching …".len());
    let mut cut = String::new();
    for c in title.chars() {
        if render::style::columns(&cut) + unicode_width::UnicodeWidthChar::width(c).unwrap_or(0) > keep {
            cut.push('…');
            break;
        }
        cut.push(c);
    }
    format!("Watching {cut}{tail}")
}

/// What fits a screen `height` rows high and `width` wide, leaving its last row for the cursor:
/// the header (its first line always; what changed cut first if even that does not fit), a
/// blank line, then the answer's lines while they fit, and a last line saying how many more
/// there are.
fn fit<'a>(head: Vec<String>, answer: impl Iterator<Item = &'a str>, width: usize, height: usize) -> Vec<String> {
    let room = height.saturating_sub(1).max(2);
    let rows = |l: &str| terminal_rows(l, width);
    let mut out = Vec::new();
    let mut used = 0;
    let head_len = head.len();
    for (i, l) in head.into_iter().enumerate() {
        // the line saying what was cut needs a row of its own
        if i > 0 && used + rows(&l) + 1 > room {
            out.push(format!("  … {} more changes", head_len - i));
            used += 1;
            break;
        }
        used += rows(&l);
        out.push(l);
    }
    let answer: Vec<&str> = answer.collect();
    if answer.is_empty() || used + 2 > room {
        return out;
    }
    out.push(String::new());
    used += 1;
    for (i, l) in answer.iter().enumerate() {
        let last = i + 1 == answer.len();
        if used + rows(l) + usize::from(!last) > room {
            out.push(format!("… {} more lines (widen the terminal or pipe the output)", answer.len() - i));
            break;
        }
        used += rows(l);
        out.push(l.to_string());
    }
    out
}

/// Text from the cluster, escaped for a terminal.
fn sanitize(s: &str) -> String {
    render::style::sanitize(s)
}

/// The rows a line takes on a terminal `width` columns wide (escape sequences take none).
fn terminal_rows(line: &str, width: usize) -> usize {
    render::style::columns(line).div_ceil(width).max(1)
}

/// The terminal's cursor, hidden while the frame is redrawn and shown again on every way out.
/// Ctrl-C (SIGINT) and SIGTERM end a watch as they end `kubectl get -w`, by the signal (a
/// shell says 130 for SIGINT), but first a handler shows the cursor again: frames are written
/// whole, each ending at the start of a line, so nothing is left half drawn.
pub mod terminal {
    use super::*;

    static HIDDEN: AtomicBool = AtomicBool::new(false);
    const SHOW: &[u8] = b"\x1b[?25h";

    extern "C" fn on_signal(signal: libc::c_int) {
        if HIDDEN.load(Ordering::SeqCst) {
            // SAFETY: write(2) is async-signal-safe; the buffer is static.
            unsafe {
                libc::write(1, SHOW.as_ptr().cast(), SHOW.len());
            }
        }
        // SAFETY: signal(2) and raise(3) are async-signal-safe. The signal is blocked while
        // its handler runs, so the raised one is delivered on return, with the default
        // action: the process ends by it, as it would have without the handler.
        unsafe {
            libc::signal(signal, libc::SIG_DFL);
            libc::raise(signal);
        }
    }

    pub fn hide_cursor() {
        let handler = on_signal as extern "C" fn(libc::c_int);
        // SAFETY: the handler only calls async-signal-safe functions.
        unsafe {
            libc::signal(libc::SIGINT, handler as libc::sighandler_t);
            libc::signal(libc::SIGTERM, handler as libc::sighandler_t);
        }
        HIDDEN.store(true, Ordering::SeqCst);
        let mut w = std::io::stdout().lock();
        let _ = w.write_all(b"\x1b[?25l");
        let _ = w.flush();
    }

    pub fn show_cursor() {
        if HIDDEN.swap(false, Ordering::SeqCst) {
            let mut w = std::io::stdout().lock();
            let _ = w.write_all(SHOW);
            let _ = w.flush();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{fit, title_line};

    #[test]
    fn the_first_line_fits_one_row() {
        let t = title_line("why-stuck site/alpha -n labs", "InProgress", "3s", 400);
        assert_eq!(t, "Watching why-stuck site/alpha -n labs — InProgress · 3s elapsed · Ctrl-C to stop");
        let t = title_line("why-stuck site/alpha -n labs", "NotDeleting", "10s", 80);
        assert_eq!(t, "Watching why-stuck site/alpha -n labs — NotDeleting · 10s elapsed");
        let t = title_line(&"x".repeat(200), "Stuck", "1m", 80);
        assert!(t.ends_with("x… — Stuck · 1m elapsed") && t.chars().count() <= 79, "{t}");
    }

    #[test]
    fn a_frame_keeps_its_header_and_cuts_the_answer_to_the_screen() {
        let head = vec!["Watching x — Stuck".to_string(), "Changed at t:".into(), "  ✗ a is gone".into()];
        let answer: Vec<String> = (0..40).map(|i| format!("line {i}")).collect();
        let f = fit(head.clone(), answer.iter().map(String::as_str), 80, 24);
        assert_eq!(f.len(), 23, "{f:#?}");
        assert_eq!(&f[..3], &head[..]);
        assert_eq!(f[4], "line 0");
        assert_eq!(f[22], "… 22 more lines (widen the terminal or pipe the output)");
        // lines wider than the screen take their rows
        let wide: Vec<String> = (0..10).map(|_| "x".repeat(100)).collect();
        let f = fit(head.clone(), wide.iter().map(String::as_str), 80, 24);
        assert_eq!(f.len(), 3 + 1 + 9 + 1, "{f:#?}");
        // a short answer is whole
        let f = fit(head.clone(), ["a", "b"].into_iter(), 80, 24);
        assert_eq!(f.len(), 6);
        // more changes than rows: the first line stays, the changes are cut
        let mut many = vec!["Watching x — Stuck".to_string()];
        many.extend((0..40).map(|i| format!("  - change {i}")));
        let f = fit(many, answer.iter().map(String::as_str), 80, 10);
        assert_eq!(f.len(), 9);
        assert_eq!(f[0], "Watching x — Stuck");
        assert_eq!(f[8], "  … 33 more changes");
    }
}

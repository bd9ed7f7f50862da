//! `--watch` on a real terminal: a pseudo-terminal from util-linux `script`, the answer redrawn
//! in place, and a real Ctrl-C (the byte 0x03 typed into the terminal, which its line
//! discipline turns into SIGINT for the foreground process) leaving the terminal clean.

use std::io::{Read, Write};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::support::apiserver::ApiServer;
use crate::support::apiserver::watch::Action;
use crate::support::{Env, NOW, assert_read_only, bin};

use super::watch::{SITE, deleting_site, object, server, step};

const HIDE: &str = "\x1b[?25l";
const SHOW: &str = "\x1b[?25h";
/// The cursor home and the screen erased: a frame drawn afresh.
const CLEAR: &str = "\x1b[H\x1b[2J";
/// Columns of the pseudo-terminal: wide, so most lines take one row.
const COLS: usize = 400;

/// What the terminal has shown so far, `\r\n` (the terminal's ONLCR) read as `\n`.
struct Screen(Arc<Mutex<Vec<u8>>>);

impl Screen {
    fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().unwrap()).replace("\r\n", "\n")
    }

    fn wait_for(&self, what: &str, deadline: Duration) {
        let t = Instant::now();
        while !self.text().contains(what) {
            assert!(t.elapsed() < deadline, "{what:?} not shown within {deadline:?}:\n{:?}", self.text());
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// `kubectl-gc ARGS` in a pseudo-terminal of 60 rows and [`COLS`] columns.
fn in_terminal(server: &ApiServer, args: &str) -> (std::process::Child, Screen, Env) {
    in_terminal_beside(server, args, "")
}

/// The same, with `beside` (shell, ending in `&`) run alongside on the same terminal.
fn in_terminal_beside(server: &ApiServer, args: &str, beside: &str) -> (std::process::Child, Screen, Env) {
    in_terminal_sized(server, args, beside, (60, COLS))
}

/// The same, in a terminal of `rows` and `cols`.
fn in_terminal_sized(
    server: &ApiServer,
    args: &str,
    beside: &str,
    (rows, cols): (usize, usize),
) -> (std::process::Child, Screen, Env) {
    let env = Env::new(&server.url(), None);
    let inner = format!("stty rows {rows} cols {cols}; {beside} exec '{}' --now {NOW} {args}", bin());
    let mut c = env.command("script");
    c.env("KUBECONFIG", &env.kubeconfig).env("TERM", "xterm");
    c.args(["-qefc", &inner, "/dev/null"]).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::null());
    let mut child = c.spawn().expect("util-linux script (Debian's bsdutils) runs the watch in a pseudo-terminal");
    let mut out = child.stdout.take().unwrap();
    let shown = Arc::new(Mutex::new(Vec::new()));
    let into = shown.clone();
    std::thread::spawn(move || {
        let mut b = [0u8; 4096];
        while let Ok(n) = out.read(&mut b) {
            if n == 0 {
                break;
            }
            into.lock().unwrap().extend_from_slice(&b[..n]);
        }
    });
    // the environment (its kubeconfig) must outlive the child
    (child, Screen(shown), env)
}

/// The rows a line of a frame takes (escape sequences take none; the frame is ASCII and
/// narrow symbols).
fn rows(line: &str) -> usize {
    let mut n = 0usize;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        if c == '\x1b' {
            chars.by_ref().find(|c| c.is_ascii_alphabetic());
            continue;
        }
        n += 1;
    }
    n.div_ceil(COLS).max(1)
}

/// Where the cursor is moved up to redraw (`ESC [ n F`), and by how many rows.
fn moves_up(text: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    for (at, _) in text.match_indices("\x1b[") {
        let rest = &text[at + 2..];
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        if digits > 0 && rest.as_bytes().get(digits) == Some(&b'F') {
            out.push((at, rest[..digits].parse().unwrap()));
        }
    }
    out
}

/// Ctrl-C typed into the terminal; how the watch ended.
fn interrupt(child: &mut std::process::Child, screen: &Screen) -> std::process::ExitStatus {
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(b"\x03").unwrap();
    stdin.flush().unwrap();
    let t = Instant::now();
    loop {
        if let Some(s) = child.try_wait().unwrap() {
            return s;
        }
        assert!(t.elapsed() < Duration::from_secs(10), "Ctrl-C did not end the watch:\n{:?}", screen.text());
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn on_a_terminal_the_answer_is_redrawn_in_place_and_ctrl_c_leaves_it_clean() {
    // the Site is marked for deletion, then one dependent goes; nothing ends the watch
    let script = vec![
        step(400, Action::Put(deleting_site(&["foregroundDeletion", "own.labhub.io/cleanup"]))),
        step(600, Action::remove(&object(SITE, "ConfigMap", "alpha-config"))),
    ];
    let server = server(SITE, script, Vec::new());
    let (mut child, screen, _env) = in_terminal(&server, "why-stuck site/alpha -n labs --watch");
    screen.wait_for("✗ ConfigMap labs/alpha-config is gone", Duration::from_secs(30));
    // a frame or two more (the elapsed time redrawn each second), then Ctrl-C typed
    std::thread::sleep(Duration::from_millis(1500));
    let status = interrupt(&mut child, &screen);
    let text = screen.text();
    // ended by the signal, as kubectl get -w is: the shell's 130 (`script -e` passes it on)
    assert_eq!(status.code(), Some(130), "{text:?}");

    // the cursor hidden once at the start, shown once at the very end
    assert_eq!(text.matches(HIDE).count(), 1, "{text:?}");
    assert_eq!(text.matches(SHOW).count(), 1, "{text:?}");
    assert!(text.find(HIDE) < text.find("Watching "), "{text:?}");
    let (drawn, after) = text.rsplit_once(SHOW).unwrap();
    assert!(after.trim().is_empty(), "written after the cursor came back: {after:?}");
    // no partial line: the last frame is whole (it ends erasing below its last line) and only
    // the terminal's own echo of Ctrl-C follows it
    let last_frame_end = drawn.rfind("\n\x1b[J").expect("a whole frame");
    assert_eq!(drawn[last_frame_end + "\n\x1b[J".len()..].replace("^C", ""), "", "{text:?}");

    // frames: each after the first moves up over exactly the rows the one before took
    let ups = moves_up(drawn);
    assert!(ups.len() >= 3, "redrawn at least three times: {text:?}");
    let mut from = drawn.find("Watching ").unwrap();
    for (at, n) in &ups {
        let frame = &drawn[from..*at];
        let took: usize = frame.split("\x1b[K\n").filter(|l| !l.starts_with("\x1b[J")).map(rows).sum();
        assert_eq!(*n, took, "moved up {n} rows over a frame of {took}:\n{frame:?}");
        from = at + format!("\x1b[{n}F").len();
    }
    // the header: what is watched, the verdict, the elapsed time; the changes marked
    assert!(text.contains("Watching why-stuck site/alpha -n labs — InProgress · "), "{text:?}");
    assert!(text.contains(" elapsed · Ctrl-C to stop"), "{text:?}");
    assert!(text.contains("Changed at "), "{text:?}");
    assert!(text.contains("  ~ Site labs/alpha is being deleted"), "{text:?}");
    assert!(text.contains("  ~ verdict NotDeleting → InProgress"), "{text:?}");
    assert_read_only(&server);
}

/// A terminal resized mid-watch: the last frame's rows at the old width are not what they take
/// now (a terminal may wrap them again), so the next frame clears the screen instead of moving
/// up a count that is no longer true, and frames after it move up again.
#[test]
fn a_terminal_resized_mid_watch_is_cleared_once_and_redrawn_in_place_after() {
    let script = vec![step(200, Action::Put(deleting_site(&["foregroundDeletion", "own.labhub.io/cleanup"])))];
    let server = server(SITE, script, Vec::new());
    let (mut child, screen, _env) = in_terminal_beside(
        &server,
        "why-stuck site/alpha -n labs --watch",
        "(sleep 3; stty rows 200 cols 150 </dev/tty) &",
    );
    screen.wait_for("Watching ", Duration::from_secs(30));
    // the resize (400 columns to 150), then two frames more (redrawn each second)
    let t = Instant::now();
    while !screen.text().contains(CLEAR) {
        assert!(t.elapsed() < Duration::from_secs(20), "not cleared after the resize:\n{:?}", screen.text());
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(2500));
    let status = interrupt(&mut child, &screen);
    let text = screen.text();
    assert_eq!(status.code(), Some(130), "{text:?}");
    // the frame is shorter than the screen before and after: only the resize clears it, once
    assert_eq!(text.matches(CLEAR).count(), 1, "{text:?}");
    let cleared = text.find(CLEAR).unwrap();
    let ups = moves_up(&text);
    assert!(ups.iter().any(|(at, _)| *at < cleared), "redrawn in place before the resize: {text:?}");
    assert!(ups.iter().any(|(at, _)| *at > cleared), "redrawn in place after it: {text:?}");
    assert_read_only(&server);
}

/// A screen of `rows` × `cols` as a terminal shows what is written to it: the few sequences a
/// watch writes (erase line `K`, erase below `J`, home `H`, clear `2J`, up to a line's start
/// `F`, cursor shown or hidden, colours), text wrapped at the last column as xterm wraps it.
struct Vt {
    rows: usize,
    cols: usize,
    cells: Vec<Vec<char>>,
    row: usize,
    col: usize,
    /// A character was written in the last column: the next one goes on the next row.
    wrap: bool,
}

impl Vt {
    fn new(rows: usize, cols: usize) -> Vt {
        Vt { rows, cols, cells: vec![vec![' '; cols]; rows], row: 0, col: 0, wrap: false }
    }

    fn down(&mut self) {
        if self.row + 1 == self.rows {
            self.cells.remove(0);
            self.cells.push(vec![' '; self.cols]);
        } else {
            self.row += 1;
        }
    }

    /// Writes `text` (sequences and all).
    fn feed(&mut self, text: &str) {
        let mut chars = text.chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                '\x1b' => {
                    if chars.next_if_eq(&'[').is_none() {
                        continue;
                    }
                    let mut params = String::new();
                    let mut end = ' ';
                    for c in chars.by_ref() {
                        if c.is_ascii_alphabetic() {
                            end = c;
                            break;
                        }
                        params.push(c);
                    }
                    self.wrap = false;
                    let n: usize = params.parse().unwrap_or(0);
                    match end {
                        'K' => self.cells[self.row][self.col..].fill(' '),
                        'J' if params == "2" => self.cells.iter_mut().for_each(|r| r.fill(' ')),
                        'J' => {
                            self.cells[self.row][self.col..].fill(' ');
                            self.cells[self.row + 1..].iter_mut().for_each(|r| r.fill(' '));
                        }
                        'H' => (self.row, self.col) = (0, 0),
                        'F' => (self.row, self.col) = (self.row.saturating_sub(n.max(1)), 0),
                        _ => {}
                    }
                }
                '\r' => (self.col, self.wrap) = (0, false),
                // the terminal's ONLCR: `\r\n`, read as `\n` (see [`Screen::text`])
                '\n' => {
                    (self.col, self.wrap) = (0, false);
                    self.down();
                }
                c => {
                    let w = unicode_width::UnicodeWidthChar::width(c).unwrap_or(0);
                    if w == 0 {
                        continue;
                    }
                    if self.wrap || self.col + w > self.cols {
                        self.col = 0;
                        self.wrap = false;
                        self.down();
                    }
                    self.cells[self.row][self.col] = c;
                    if w == 2 && self.col + 1 < self.cols {
                        self.cells[self.row][self.col + 1] = ' ';
                    }
                    if self.col + w >= self.cols {
                        self.col = self.cols - 1;
                        self.wrap = true;
                    } else {
                        self.col += w;
                    }
                }
            }
        }
    }

    fn line(&self, r: usize) -> String {
        self.cells[r].iter().collect::<String>().trim_end().to_string()
    }
}

/// In an 80×24 terminal, after every redraw: the verdict line on the top row and what changed
/// right under it, whole; an answer longer than the screen cut with a line saying so. Read from
/// the screen as the terminal shows it.
#[test]
fn in_an_80_by_24_terminal_the_verdict_and_what_changed_stay_on_screen_after_every_redraw() {
    // the Site marked, then its dependents going one by one, slowly enough for frames between
    let mut script = vec![step(400, Action::Put(deleting_site(&["foregroundDeletion", "own.labhub.io/cleanup"])))];
    for (kind, name) in [("ConfigMap", "alpha-config"), ("ConfigMap", "alpha-scripts"), ("Service", "alpha")] {
        script.push(step(1500, Action::remove(&object(SITE, kind, name))));
    }
    let server = server(SITE, script, Vec::new());
    let (mut child, screen, _env) = in_terminal_sized(&server, "why-stuck site/alpha -n labs --watch", "", (24, 80));
    screen.wait_for("Service labs/alpha is gone", Duration::from_secs(40));
    std::thread::sleep(Duration::from_millis(1500));
    let status = interrupt(&mut child, &screen);
    assert_eq!(status.code(), Some(130));
    let text = screen.text();
    let (drawn, _) = text.rsplit_once(SHOW).unwrap();
    // frame by frame: each ends erasing below its last line
    let mut vt = Vt::new(24, 80);
    let (mut frames, mut cut, mut with_changes) = (0, 0, 0);
    let mut rest = drawn;
    while let Some(end) = rest.find("\x1b[J") {
        vt.feed(&rest[..end + 3]);
        rest = &rest[end + 3..];
        frames += 1;
        let top = vt.line(0);
        assert!(top.starts_with("Watching why-stuck site/alpha -n labs — "), "frame {frames}, top row: {top:?}");
        assert!(top.ends_with(" elapsed"), "frame {frames}: {top:?}");
        let shown: Vec<String> = (0..24).map(|r| vt.line(r)).collect();
        if shown[1].starts_with("Changed at ") {
            with_changes += 1;
            // the changes whole: marked lines from row 2 on, up to the blank line
            let changes: Vec<&String> = shown[2..].iter().take_while(|l| !l.is_empty()).collect();
            assert!(!changes.is_empty() && changes.iter().all(|l| l.starts_with("  ")), "{shown:#?}");
        }
        if shown.iter().any(|l| l.ends_with("more lines (widen the terminal or pipe the output)")) {
            cut += 1;
            // the cut line is the frame's last, on the screen's last row but one (the cursor's
            // row is left free)
            assert!(shown[22].starts_with("… "), "{shown:#?}");
        }
    }
    assert!(frames >= 4, "{frames} frames: {text:?}");
    assert!(with_changes >= 3, "{with_changes} frames with changes");
    assert!(cut >= 1, "the answer was never longer than the screen: {text:?}");
    assert!(vt.line(1).starts_with("Changed at ") && text.contains("✗ Service labs/alpha is gone"), "{text:?}");
    assert_read_only(&server);
}

//! `--watch` (contract §4.5): `why-stuck <obj>`, `why-stuck --all` and `tree <obj>`, followed
//! live until the deletion ends.
//!
//! The first answer is read as a single answer is (the same request, the same read plan), but
//! through [`Kept`], which follows each read with a WATCH of exactly what it read. On each
//! report the kept objects are updated; reports that come close together are taken as one
//! change (debounced), then the answer is judged again through the same path: a fresh read
//! plan answered from the kept objects (only asks it had not made before are read, and then
//! followed too), the graph grown by what changed in what is kept (`Graph::grow_to`), the
//! analysis, the renderer. Nothing is listed
//! again unless a watch's history is gone (410).
//!
//! Output (`watch_show.rs`): on a terminal the answer is redrawn in place under a header
//! (verdict, elapsed time, the changes that led to it, marked); piped, one line per change with
//! its time; `-o yaml`, a YAML document per answer; `-o json`,
//! one JSON object a line, `{"time", "change", "answer"}`. It ends by itself: 0 when gone, 2
//! when Stuck for `--stuck-after` with nothing changing (at once with `--until=stuck`, and at
//! `--timeout` when Stuck then), 3 at `--timeout` still undecided or when Unknown for
//! `--stuck-after` with nothing changing (the contract is silent there: an undecided watch that
//! learns nothing still ends, and 3 is "cannot be judged"), 1 on failure (a watch that keeps
//! failing). The verdict is the single answer's (`Diagnosis::verdict`), so a watch is Unknown
//! exactly when `why-stuck` alone exits 3; but the watch knows when things happened, which a
//! single answer cannot: a cleaner's finding seen to arise is given the cleaner's time before
//! it counts (`kubectl_gc::watch::lag`), and a controller seen to come back restarts the clock.

use std::io::IsTerminal;
use std::time::{Duration, Instant};

use anyhow::{Result, bail};
use k8s_openapi::jiff::Timestamp;

use kubectl_gc::controllers::Liveness;
use kubectl_gc::diagnose::{self, Connection};
use kubectl_gc::graph::{Graph, NodeId};
use kubectl_gc::reads::{self, TargetRef, Wants};
use kubectl_gc::render::{self, style::Style};
use kubectl_gc::snapshot::Uid;
use kubectl_gc::source::live::watch::Kept;
use kubectl_gc::source::live::{ReadOptions, snapshot_so_far};
use kubectl_gc::sweep;
use kubectl_gc::tree::{self, Direction};
use kubectl_gc::watch::lag::Lag;
use kubectl_gc::watch::{Changes, Observed, Verdict, controller_back};

use super::args::{Until, WatchFlags};
use super::exit::{Exit, is_broken_pipe};
use super::invocation::{Invocation, ReadThrough};
use super::live::Live;
use super::output;
use super::request::{self, Request};
use super::watch_show::{Judged, Mode, Out, terminal};

/// Reports closer together than this are one change.
const DEBOUNCE: Duration = Duration::from_millis(200);
/// A change is judged at the latest this long after its first report, however many follow.
const DEBOUNCE_MAX: Duration = Duration::from_secs(1);
/// How long the last answer (gone) waits for reads being resumed to catch up.
const CATCH_UP: Duration = Duration::from_secs(30);
/// How often the answer is judged again with nothing reported, for what time alone changes.
const REJUDGE: Duration = Duration::from_secs(15);

/// What is watched.
#[derive(Clone, Debug)]
pub enum Subject {
    /// `why-stuck <obj>`.
    WhyStuck,
    /// `tree <obj>` (dependents, or owners).
    Tree(Direction),
    /// `why-stuck --all`, in the `-n`/`-A` scope.
    All {
        /// `--stuck-only`.
        stuck_only: bool,
    },
}

/// How each answer of a watch is written (`-o`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// Redrawn in place on a terminal; piped, one line per change.
    Text,
    /// One JSON object a line.
    Json,
    /// A YAML document per answer (`---`), as `kubectl get -w -o yaml` streams them.
    Yaml,
}

/// How a watch is shown and when it ends.
pub struct Options {
    /// `-o`.
    pub format: Format,
    /// How answers are judged (`--stuck-after`).
    pub answer: diagnose::Options,
    /// Stuck this long with nothing changing ends the watch (exit 2).
    pub stuck_after: Duration,
    /// The flags.
    pub flags: WatchFlags,
    /// What is watched, as typed (for the header).
    pub title: String,
}

/// The target's uid when the watch began: another object under its name is not it.
struct Target {
    reference: TargetRef,
    uid: String,
}

/// Runs a watch; `request` is the same request a single answer makes.
pub fn run(inv: &Invocation, request: &Request, subject: Subject, o: &Options) -> Result<Exit> {
    if inv.offline() {
        bail!("--watch follows the cluster live and a snapshot does not change: give --watch or --snapshot, not both");
    }
    let mut live = Live::open(inv)?;
    let (wants, target) = live.wants(inv, request)?;
    // `--all`: `-A`, else `-n`, else the context's namespace
    let scope =
        if inv.all_namespaces { sweep::Scope::Cluster } else { sweep::Scope::Namespace(live.namespace(inv).name) };
    let conn = inv.bound(ReadThrough::Live {
        context: live.session.context.as_deref(),
        kubeconfig: live.session.kubeconfig.as_deref(),
    });
    let st = inv.style;
    let mode = if o.format == Format::Json {
        Mode::Json
    } else if o.format == Format::Yaml {
        Mode::Yaml
    } else if std::io::stdout().is_terminal() {
        Mode::Terminal { rows: 0, width: 0 }
    } else {
        Mode::Lines
    };
    let mut out = Out {
        mode,
        started: Instant::now(),
        title: o.title.clone(),
        last: String::new(),
        status: Vec::new(),
        ignored: 0,
        shown: None,
    };
    if matches!(out.mode, Mode::Terminal { .. }) {
        terminal::hide_cursor();
    }
    let result = live.rt.block_on(follow(&live, inv, &wants, target, (&subject, &scope), o, &conn, st, &mut out));
    terminal::show_cursor();
    // the reader went away (`… --watch | head -1`): the watch ends there with the code of the
    // answer it was writing, as at --timeout; a reader gone is not the object gone (0)
    let result = match result {
        Err(e) if is_broken_pipe(&e) => Ok(reader_gone(out.shown)),
        r => r,
    };
    if out.ignored > 0 {
        output::note(&format!(
            "{} watch events were about something not watched (another kind, namespace or name, or not selected), and were ignored",
            out.ignored
        ));
    }
    result
}

#[allow(clippy::too_many_arguments)]
async fn follow(
    live: &Live,
    inv: &Invocation,
    wants: &Wants,
    target: Option<TargetRef>,
    subject: (&Subject, &sweep::Scope),
    o: &Options,
    conn: &Connection,
    st: Style,
    out: &mut Out,
) -> Result<Exit> {
    let mut kept = Kept::default();
    let read = ReadOptions { concurrency: live.concurrency, now: live.opened_at, progress: None };
    let answers = kept.read(&live.session, &live.discovery, &read, &mut reads::Plan::new(wants.clone())).await;
    let mut snapshot = snapshot_so_far(&live.discovery, &answers, Timestamp::now());
    snapshot.context = live.session.context.clone();
    request::warn_about(&snapshot);
    let mut g = request::build(snapshot);
    let target = match target {
        Some(t) => {
            let x = request::locate(&g, &t)?;
            let uid = g.object(x).map(|o| o.uid.0.clone()).unwrap_or_default();
            Some(Target { reference: t, uid })
        }
        None => None,
    };
    // when a finalizer's controller was last seen to come back: --stuck-after counts from then
    let mut back_at: Option<Timestamp> = None;
    let judge = |g: &Graph, prev: &Observed, back_at: Option<Timestamp>| -> Judged {
        let now = inv.clock.now();
        judge(g, (now, back_at), target.as_ref(), subject, o, conn, st, prev)
    };
    let mut changes = Changes::default();
    let mut prev = judge(&g, &Observed::nothing(), None);
    let mut lag = Lag::start(&prev.observed);
    out.answer(&prev, &[])?;
    let mut last_change = Instant::now();
    let deadline = o.flags.timeout.and_then(|t| t.limit()).map(|t| tokio::time::Instant::now() + t);
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    // time alone changes an answer (a grace period ends, a finalizer outstays --stuck-after):
    // judged again from what is kept, without a request; not under --now, whose clock stands
    let mut clock = tokio::time::interval_at(tokio::time::Instant::now() + REJUDGE, REJUDGE);
    let clock_moves = inv.clock.moves();
    // an answer held back for a cleaner's normal lag is judged again when that is over
    let mut held: Option<tokio::time::Instant> = None;
    let mut catch_up: Option<tokio::time::Instant> = None;
    loop {
        if let Some(exit) = ended(&prev.observed, o) {
            return Ok(exit);
        }
        let quiet_at = tokio::time::Instant::from_std(last_change + o.stuck_after);
        let undecided = matches!(prev.observed.verdict, Verdict::STUCK | Verdict::UNKNOWN);
        tokio::select! {
            (id, event) = kept.next() => {
                let mut changed = apply(&mut kept, id, event)?;
                let until = Instant::now() + DEBOUNCE_MAX;
                while Instant::now() < until {
                    match tokio::time::timeout(DEBOUNCE, kept.next()).await {
                        Ok((id, event)) => changed |= apply(&mut kept, id, event)?,
                        Err(_) => break,
                    }
                }
                out.tell(kept.notes(), kept.ignored())?;
                let caught_up = catch_up.is_some() && kept.behind() == 0;
                if !changed && !caught_up {
                    continue;
                }
            }
            _ = clock.tick(), if clock_moves => {}
            _ = tokio::time::sleep_until(held.unwrap_or_else(tokio::time::Instant::now)), if held.is_some() => {}
            _ = tokio::time::sleep_until(quiet_at), if undecided => {
                let quiet = human(o.stuck_after);
                return Ok(match prev.observed.verdict {
                    Verdict::STUCK => {
                        output::note(&format!("stuck, with nothing changing for {quiet}"));
                        Exit::Stuck
                    }
                    _ => {
                        output::note(&format!(
                            "undecided (Unknown), with nothing changing for {quiet}: the answer says what would settle it"
                        ));
                        Exit::Unknown
                    }
                });
            }
            _ = tokio::time::sleep_until(deadline.unwrap_or_else(tokio::time::Instant::now)), if deadline.is_some() => {
                return Ok(at_timeout(prev.observed.verdict));
            }
            _ = tick.tick(), if matches!(out.mode, Mode::Terminal { .. }) => {
                out.redraw(&prev)?;
                continue;
            }
        }
        // something it rests on changed, or the clock moved: judged again from what is kept
        let answers = kept.read(&live.session, &live.discovery, &read, &mut reads::Plan::new(wants.clone())).await;
        let mut snapshot = snapshot_so_far(&live.discovery, &answers, Timestamp::now());
        snapshot.context = live.session.context.clone();
        // grown by what changed (what did not keeps its node), not built again
        g.grow_to(snapshot);
        let mut next = judge(&g, &prev.observed, back_at);
        if controller_back(&prev.observed, &next.observed) {
            // a sign of progress: the clock starts again from the controller's return
            back_at = Some(inv.clock.now());
            next = judge(&g, &prev.observed, back_at);
        }
        held = hold(&mut lag, &next.observed, kept.behind(), &mut catch_up);
        if held.is_some() {
            continue;
        }
        let told = changes.between(&prev.observed, &next.observed);
        if !told.is_empty() {
            last_change = Instant::now();
            out.answer(&next, &told)?;
        }
        prev = next;
    }
}

/// Whether an answer is held back, and until when: stuck only by a cleaner's finding that has
/// just arisen (not yet a change, see [`Lag`]); or the last answer (gone) while reads are being
/// resumed, until they have caught up (what went with it told too) or [`CATCH_UP`] has passed.
fn hold(
    lag: &mut Lag,
    next: &Observed,
    behind: usize,
    catch_up: &mut Option<tokio::time::Instant>,
) -> Option<tokio::time::Instant> {
    if let Some(until) = lag.holds(next, Instant::now()) {
        return Some(tokio::time::Instant::from_std(until));
    }
    if next.verdict == Verdict::Gone && behind > 0 {
        let until = *catch_up.get_or_insert_with(|| tokio::time::Instant::now() + CATCH_UP);
        return (tokio::time::Instant::now() < until).then_some(until);
    }
    None
}

/// How a watch ends at `--timeout`: 2 when the answer is Stuck (decided: a script waiting for
/// 2 is told so), 3 when it is still undecided.
fn at_timeout(verdict: Verdict) -> Exit {
    if verdict == Verdict::STUCK {
        output::note("--timeout passed and the deletion is stuck");
        return Exit::Stuck;
    }
    output::note(&format!("--timeout passed and the deletion is still undecided ({})", verdict.as_str()));
    Exit::Unknown
}

/// How a watch ends when its reader goes away: 0 when the last answer written was gone, 2
/// when Stuck, else 3 (still undecided).
fn reader_gone(shown: Option<Verdict>) -> Exit {
    match shown {
        Some(Verdict::Gone) => Exit::Ok,
        Some(Verdict::STUCK) => Exit::Stuck,
        _ => Exit::Unknown,
    }
}

/// Whether the watch ends on this answer: gone, or Stuck under `--until=stuck`. Unknown is
/// not Stuck (never a false alarm) and not done (never "nothing to do"): it is watched on,
/// for a change that settles it, until `--timeout` or `--stuck-after` of nothing changing
/// (exit 3 either way).
fn ended(now: &Observed, o: &Options) -> Option<Exit> {
    match now.verdict {
        Verdict::Gone => Some(Exit::Ok),
        Verdict::STUCK if o.flags.until == Some(Until::Stuck) => Some(Exit::Stuck),
        _ => None,
    }
}

fn apply(kept: &mut Kept, id: u64, event: kubectl_gc::source::live::watch::Event) -> Result<bool> {
    kept.apply(id, event).map_err(|failed| {
        let (ask, why) = *failed;
        anyhow::anyhow!("the watch keeps failing: watching {} ({}): {why}", ask.kind.qualified(), ask.why)
    })
}

/// Judges the answer on `g`.
#[allow(clippy::too_many_arguments)]
fn judge(
    g: &Graph,
    (now, back_at): (Timestamp, Option<Timestamp>),
    target: Option<&Target>,
    (subject, scope): (&Subject, &sweep::Scope),
    o: &Options,
    conn: &Connection,
    st: Style,
    prev: &Observed,
) -> Judged {
    let live = Liveness::new(g, now);
    let mut out = Vec::new();
    if let Some(t) = target {
        let found = g.find(&t.reference.group, &t.reference.kind, t.reference.namespace.as_deref(), &t.reference.name);
        let same = found.filter(|&x| g.object(x).is_some_and(|obj| obj.uid.0 == t.uid));
        let Some(x) = same else {
            // gone: what was seen of the rest stays (said gone when it goes); another object
            // under the name is seen as such
            let mut observed = prev.clone();
            // what went with it is told gone too
            observed
                .objects
                .retain(|uid, _| *uid != t.uid && g.by_uid(&Uid(uid.clone())).and_then(|x| g.object(x)).is_some());
            if let Some(other) = found {
                observed.objects.extend(Observed::new(g, [other], [], Verdict::Gone).objects);
            }
            observed.findings.clear();
            observed.verdict = Verdict::Gone;
            return Judged { observed, answer: None };
        };
        // a controller back since the deletion: --stuck-after counts from its return
        let mut answer = o.answer;
        if let (Some(back), Some(deleted)) = (back_at, g.object(x).and_then(|o| o.deletion_timestamp)) {
            answer.stuck_after += (back.as_second() - deleted.as_second()).max(0);
        }
        let mut d = diagnose::why_stuck_with(g, &live, x, &answer);
        let verdict = Verdict::of(&d);
        let nodes: Vec<NodeId> = match subject {
            Subject::Tree(dir) => {
                let t = tree::build(g, &live, x, *dir);
                let _ = match o.format {
                    Format::Text => render::text::write_tree(g, &t, now.as_second(), st, &mut out),
                    // one line: the tree's JSON writer writes no line breaks inside
                    Format::Json => render::json::write_tree(g, &t, &mut out),
                    Format::Yaml => render::tree_yaml::write_tree(g, &t, &mut out),
                };
                t.entries.iter().map(|e| e.node).collect()
            }
            _ => {
                // as the single answer does: a namespace not being deleted that holds
                // deletions points to why-stuck --all
                kubectl_gc::sweep::point_to_sweep(g, &live, &mut d, &answer);
                let _ = match o.format {
                    Format::Text => render::text::write_why_stuck(g, &d, conn, st, &mut out),
                    Format::Json => data(&render::json::why_stuck(g, &d, conn), o.format, &mut out),
                    Format::Yaml => data(&render::json::why_stuck(g, &d, conn), o.format, &mut out),
                };
                tree::build(g, &live, x, Direction::Dependents).entries.iter().map(|e| e.node).collect()
            }
        };
        let nodes = nodes.into_iter().chain(d.findings.iter().map(|f| f.object));
        return Judged { observed: Observed::new(g, nodes, [&d], verdict), answer: Some(out) };
    }
    let Subject::All { stuck_only } = subject else { unreachable!("a watch of one object has a target") };
    let options = sweep::Options { scope: scope.clone(), stuck_only: *stuck_only, answer: o.answer };
    let s = sweep::sweep(g, &live, &options);
    let ids = sweep::terminating(g, scope);
    // the worst answer's, as the single sweep's exit code (objects left out by --stuck-only
    // are in progress)
    let verdict = if ids.is_empty() { Verdict::Gone } else { s.verdict().map_or(Verdict::IN_PROGRESS, Verdict::from) };
    let _ = match o.format {
        Format::Text => render::sweep::write_text(g, &s, conn, st, &mut out),
        _ => data(&render::sweep::to_json(g, &s, conn), o.format, &mut out),
    };
    Judged { observed: Observed::new(g, ids, &s.answers, verdict), answer: Some(out) }
}

/// An answer's wire value, as one line of JSON or as YAML (escaped as the single answer's).
fn data<T: serde::Serialize>(value: &T, format: Format, w: &mut Vec<u8>) -> std::io::Result<()> {
    match format {
        Format::Yaml => w.extend_from_slice(render::safe_yaml::to_string(value)?.as_bytes()),
        _ => w.extend_from_slice(render::safe_json::to_string(value)?.as_bytes()),
    }
    Ok(())
}

pub(super) fn human(d: Duration) -> String {
    kubectl_gc::age::human(d.as_secs() as i64)
}

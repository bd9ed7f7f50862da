//! One function per subcommand: load → build → answer → render. The arguments are resolved
//! once into an [`Invocation`] and passed down; each answer's exit code is decided before it
//! is written, so a reader that goes away (`| head`) does not change it.

use kubectl_gc::names::{FOREGROUND_DELETION, ORPHAN};

use std::io::Write;

use anyhow::{Context, Result, bail};

use kubectl_gc::controllers::Liveness;
use kubectl_gc::graph::{Graph, NodeId};
use kubectl_gc::plan::{self, AssumeFinalizers, Cascade, Plan, PlanOptions};
use kubectl_gc::reads::VersionRead;
use kubectl_gc::render;
use kubectl_gc::{diagnose, tree};

use super::args::{
    Args, AssumeArg, CascadeArg, Command, CompleteArgs, CompletionArgs, Format, PlanArgs, SnapshotArgs, Target,
    TreeArgs, TreeFormat, WatchFlags, WhyStuckArgs,
};
use super::duration::KubeDuration;
use super::exit::{Exit, written};
use super::invocation::Invocation;
use super::output;
use super::request::{self, Loaded, Request, exit_without_freeing, warn_about};
use super::watch::{Format as WatchFormat, Options as WatchOptions, Subject};

/// Runs the subcommand the arguments name.
pub fn run(args: Args) -> Result<Exit> {
    let inv = Invocation::new(&args)?;
    match &args.command {
        Command::WhyStuck(a) if a.all && a.watch.watch => super::sweep::watch(&inv, a),
        Command::WhyStuck(a) if a.all => super::sweep::run(&inv, a),
        Command::WhyStuck(a) if a.watch.watch => why_stuck_watch(&inv, a),
        Command::WhyStuck(a) => why_stuck(&inv, a),
        Command::Tree(a) if a.watch.watch => tree_watch(&inv, a),
        Command::Tree(a) => tree(&inv, a),
        Command::Plan(a) => plan(&inv, a),
        Command::Snapshot(a) => snapshot(&inv, a),
        Command::Completion(a) => completion(a),
        Command::Complete(a) => complete(a),
    }
}

/// How a watch writes each answer, by `-o`.
pub fn watch_format(f: Format) -> WatchFormat {
    match f {
        Format::Text => WatchFormat::Text,
        Format::Json => WatchFormat::Json,
        Format::Yaml => WatchFormat::Yaml,
    }
}

/// How a watch of `t` ends and is shown (its title names `t` as typed).
fn watch_options(
    inv: &Invocation,
    t: &Target,
    format: WatchFormat,
    answer: diagnose::Options,
    stuck_after: KubeDuration,
    flags: WatchFlags,
    command: &str,
) -> WatchOptions {
    let what = match &t.name {
        Some(n) => format!("{} {n}", t.what),
        None => t.what.clone(),
    };
    let ns = inv.namespace_flag().map(|ns| format!(" -n {ns}")).unwrap_or_default();
    WatchOptions { format, answer, stuck_after: stuck_after.0, flags, title: format!("{command} {what}{ns}") }
}

/// The request of an answer about the invocation's target.
fn about(
    inv: &Invocation,
    dependents_anywhere: bool,
    why_stuck: Option<diagnose::Options>,
    version: VersionRead,
) -> Result<Request> {
    let target = inv.target.clone().context("name the object as TYPE/NAME, or give --all")?;
    // tree alone judges no request's admission
    let admission = why_stuck.is_some() || version != VersionRead::Never;
    Ok(Request { target: Some(target), dependents_anywhere, why_stuck, version, admission })
}

/// The graph read for `request`, the time it is judged at, and the object asked about in it.
fn load(inv: &Invocation, request: &Request) -> Result<(Loaded, NodeId)> {
    let loaded = request::load(inv, request)?;
    let target = loaded.target.context("no object was named")?;
    Ok((loaded, target))
}

/// `why-stuck TYPE/NAME`.
fn why_stuck(inv: &Invocation, a: &WhyStuckArgs) -> Result<Exit> {
    let opts = a.options();
    let (loaded, target) = load(inv, &about(inv, false, Some(opts), VersionRead::WhereJudged)?)?;
    let Loaded { graph: g, now, connection: conn, .. } = loaded;
    let t = std::time::Instant::now();
    let live = Liveness::new(&g, now);
    output::timing("controller index", t);
    let t = std::time::Instant::now();
    let mut d = diagnose::why_stuck_with(&g, &live, target, &opts);
    // a namespace not being deleted that holds deletions: point to why-stuck --all -n
    kubectl_gc::sweep::point_to_sweep(&g, &live, &mut d, &opts);
    output::timing("why-stuck", t);
    let then = a.plan.then(|| plan_once_unblocked(&g, &live, target, now));
    let exit = Exit::from_verdict(Some(d.verdict()));
    let mut out = output::stdout();
    let shown = match a.output {
        Format::Text => (|| -> Result<()> {
            render::text::write_why_stuck(&g, &d, &conn, inv.style, &mut out)?;
            if let Some(p) = &then {
                // the heading says what the plan shows: done once the finalizers go, or
                // blocked even then
                let heading = if p.is_blocked() {
                    "Even with every remaining finalizer removed by its controller, the deletion stays blocked:"
                } else {
                    "Once the blockers are gone (every remaining finalizer removed by its controller):"
                };
                writeln!(out, "\n{heading}\n")?;
                render::plan::write_text_styled(p, &g, inv.style, &mut out)?;
            }
            Ok(())
        })(),
        Format::Json | Format::Yaml => {
            let mut wire = render::json::why_stuck(&g, &d, &conn);
            wire.plan = then.as_ref().map(|p| render::plan::to_value(p, &g));
            if a.output == Format::Json {
                render::json::write(&wire, &mut out).map_err(Into::into)
            } else {
                output::yaml(&wire, &mut out)
            }
        }
    };
    let exit = written(exit, shown.and_then(|()| Ok(out.flush()?)))?;
    exit_without_freeing(g);
    Ok(exit)
}

/// `why-stuck --plan`: what happens once the blockers are gone, under the propagation the
/// deletion already has (kubectl's default, background, if it has none yet).
fn plan_once_unblocked(g: &Graph, live: &Liveness, target: NodeId, now: k8s_openapi::jiff::Timestamp) -> Plan {
    let cascade = match g.object(target) {
        Some(o) if o.has_finalizer(ORPHAN) => Cascade::Orphan,
        Some(o) if o.has_finalizer(FOREGROUND_DELETION) => Cascade::Foreground,
        _ => Cascade::Background,
    };
    let opts = PlanOptions { cascade, assume_finalizers: Some(AssumeFinalizers::Removed), now };
    plan::plan(g, live, target, &opts)
}

/// `why-stuck TYPE/NAME --watch`.
fn why_stuck_watch(inv: &Invocation, a: &WhyStuckArgs) -> Result<Exit> {
    let request = about(inv, false, Some(a.options()), VersionRead::WhereJudged)?;
    let t = a.target().context("name the object as TYPE/NAME, or give --all")?;
    let o = watch_options(inv, &t, watch_format(a.output), a.options(), a.stuck_after, a.watch, "why-stuck");
    super::watch::run(inv, &request, Subject::WhyStuck, &o)
}

/// Which way `tree` walks.
fn direction(a: &TreeArgs) -> tree::Direction {
    if a.owners { tree::Direction::Owners } else { tree::Direction::Dependents }
}

/// `tree TYPE/NAME`.
fn tree(inv: &Invocation, a: &TreeArgs) -> Result<Exit> {
    let (Loaded { graph: g, now, .. }, target) = load(inv, &about(inv, true, None, VersionRead::Never)?)?;
    let live = Liveness::new(&g, now);
    let t = tree::build(&g, &live, target, direction(a));
    let mut out = output::stdout();
    let shown = match a.output {
        TreeFormat::Text => render::text::write_tree(&g, &t, now.as_second(), inv.style, &mut out),
        TreeFormat::Json => render::json::write_tree(&g, &t, &mut out),
        TreeFormat::Yaml => render::tree_yaml::write_tree(&g, &t, &mut out),
        TreeFormat::Dot => render::dot::write_tree(&g, &t, &mut out),
        TreeFormat::Mermaid => render::mermaid::write_tree(&g, &t, &mut out),
    };
    let exit = written(Exit::Ok, shown.and_then(|()| out.flush()).map_err(Into::into))?;
    drop(t);
    exit_without_freeing(g);
    Ok(exit)
}

/// `tree TYPE/NAME --watch`.
fn tree_watch(inv: &Invocation, a: &TreeArgs) -> Result<Exit> {
    let format = match a.output {
        TreeFormat::Text => WatchFormat::Text,
        TreeFormat::Json => WatchFormat::Json,
        TreeFormat::Yaml => WatchFormat::Yaml,
        TreeFormat::Dot | TreeFormat::Mermaid => bail!(
            "--watch writes the tree as text, JSON lines or YAML documents; -o dot and -o mermaid draw it once, without --watch"
        ),
    };
    let answer = diagnose::Options { stuck_after: a.stuck_after.seconds() };
    let o = watch_options(inv, &a.target, format, answer, a.stuck_after, a.watch, "tree");
    super::watch::run(inv, &about(inv, true, Some(answer), VersionRead::Never)?, Subject::Tree(direction(a)), &o)
}

/// `plan TYPE/NAME`.
fn plan(inv: &Invocation, a: &PlanArgs) -> Result<Exit> {
    let (Loaded { graph: g, now, .. }, target) = load(inv, &about(inv, true, None, VersionRead::WhereJudged)?)?;
    let live = Liveness::new(&g, now);
    let opts = PlanOptions {
        cascade: match a.cascade {
            CascadeArg::Background => Cascade::Background,
            CascadeArg::Foreground => Cascade::Foreground,
            CascadeArg::Orphan => Cascade::Orphan,
        },
        assume_finalizers: a.assume_finalizers.map(|x| match x {
            AssumeArg::Removed => AssumeFinalizers::Removed,
            AssumeArg::Stuck => AssumeFinalizers::Stuck,
        }),
        now,
    };
    let p = plan::plan(&g, &live, target, &opts);
    let exit = Exit::from_stuck(p.is_blocked());
    let mut out = output::stdout();
    let shown = match a.output {
        Format::Text => render::plan::write_text_styled(&p, &g, inv.style, &mut out).map_err(Into::into),
        Format::Json => render::plan::write_json(&p, &g, &mut out).map_err(Into::into),
        Format::Yaml => output::yaml(&render::plan::to_value(&p, &g), &mut out),
    };
    let exit = written(exit, shown.and_then(|()| Ok(out.flush()?)))?;
    drop(p);
    exit_without_freeing(g);
    Ok(exit)
}

/// `snapshot`: what the live path reads, to a file or stdout.
fn snapshot(inv: &Invocation, a: &SnapshotArgs) -> Result<Exit> {
    if inv.offline() {
        bail!("kubectl gc snapshot reads the cluster; it does not take --snapshot");
    }
    // refused before the cluster is read, and again (atomically) when the file is placed
    if let Some(path) = &a.file
        && !a.force
        && std::fs::symlink_metadata(path).is_ok()
    {
        bail!("{} exists: give --force to replace it, or another --file", path.display());
    }
    // the answers a capture is taken for are judged with why-stuck's default options
    let capture = Request {
        target: None,
        dependents_anywhere: false,
        why_stuck: Some(diagnose::Options::default()),
        version: VersionRead::Record,
        admission: true,
    };
    let snapshot = super::live::read(inv, &capture)?.snapshot;
    warn_about(&snapshot);
    match &a.file {
        Some(path) => super::snapshot_file::write(path, a.force, |w| {
            kubectl_gc::snapshot::write::write(&snapshot, w).map_err(Into::into)
        })?,
        None => {
            let mut out = output::stdout();
            let shown = kubectl_gc::snapshot::write::write(&snapshot, &mut out).map_err(Into::into);
            return written(Exit::Ok, shown.and_then(|()| Ok(out.flush()?)));
        }
    }
    Ok(Exit::Ok)
}

/// `completion SHELL`: the script.
fn completion(a: &CompletionArgs) -> Result<Exit> {
    let mut out = output::stdout();
    super::complete::generate_script(a.shell, &mut out)?;
    out.flush()?;
    Ok(Exit::Ok)
}

/// `__complete WORDS…`: main answers it before clap parses it, so flags among the words stay
/// words; this serves a parse that got here anyway.
fn complete(a: &CompleteArgs) -> Result<Exit> {
    let mut out = output::stdout();
    super::complete::write(&super::complete::complete(&a.words), &mut out)?;
    out.flush()?;
    Ok(Exit::Ok)
}

//! One function per subcommand: load → build → answer → render.

use kubectl_gc::names::{FOREGROUND_DELETION, ORPHAN};

use std::io::Write;

use anyhow::{Context, Result, bail};

use kubectl_gc::controllers::Liveness;
use kubectl_gc::plan::{self, AssumeFinalizers, Cascade, PlanOptions};
use kubectl_gc::reads::VersionRead;
use kubectl_gc::render;
use kubectl_gc::{diagnose, tree};

use super::args::{Args, AssumeArg, CascadeArg, Command, Format, Target, TreeFormat, WatchFlags};
use super::exit::Exit;
use super::output;
use super::request::{self, KubeDuration, Loaded, Request, connection, exit_without_freeing, style, warn_about};
use super::watch::{Format as WatchFormat, Options as WatchOptions, Subject};

/// How a watch writes each answer, by `-o`.
pub fn watch_format(f: Format) -> WatchFormat {
    match f {
        Format::Text => WatchFormat::Text,
        Format::Json => WatchFormat::Json,
        Format::Yaml => WatchFormat::Yaml,
    }
}

/// How a watch of `t` ends and is shown.
fn watch_options(
    format: WatchFormat,
    answer: diagnose::Options,
    stuck_after: KubeDuration,
    flags: WatchFlags,
    command: &str,
    t: &Target,
    global: &super::args::Global,
) -> WatchOptions {
    let what = match &t.name {
        Some(n) => format!("{} {n}", t.what),
        None => t.what.clone(),
    };
    let ns = global.namespace.as_ref().map(|ns| format!(" -n {ns}")).unwrap_or_default();
    WatchOptions { format, answer, stuck_after: stuck_after.0, flags, title: format!("{command} {what}{ns}") }
}

/// The request of an answer about one object.
fn about(
    t: &Target,
    dependents_anywhere: bool,
    why_stuck: Option<diagnose::Options>,
    version: VersionRead,
) -> Result<Request> {
    // tree alone judges no request's admission
    let admission = why_stuck.is_some() || version != VersionRead::Never;
    Ok(Request { target: Some(request::split(t)?), dependents_anywhere, why_stuck, version, admission })
}

pub fn run(args: Args) -> Result<Exit> {
    let global = &args.global;
    match &args.command {
        Command::WhyStuck(a) if a.all => super::sweep::run(global, a),
        Command::WhyStuck(a) if a.watch.watch => {
            let t = a.target().context("name the object as TYPE/NAME, or give --all")?;
            let o = watch_options(watch_format(a.output), a.options(), a.stuck_after, a.watch, "why-stuck", &t, global);
            super::watch::run(
                global,
                &about(&t, false, Some(a.options()), VersionRead::WhereJudged)?,
                Subject::WhyStuck,
                &o,
            )
        }
        Command::Tree(a) if a.watch.watch => {
            let format = match a.output {
                TreeFormat::Text => WatchFormat::Text,
                TreeFormat::Json => WatchFormat::Json,
                TreeFormat::Yaml => WatchFormat::Yaml,
                TreeFormat::Dot | TreeFormat::Mermaid => bail!(
                    "--watch writes the tree as text, JSON lines or YAML documents; -o dot and -o mermaid draw it once, without --watch"
                ),
            };
            let answer = diagnose::Options { stuck_after: a.stuck_after.seconds() };
            let o = watch_options(format, answer, a.stuck_after, a.watch, "tree", &a.target, global);
            let dir = if a.owners { tree::Direction::Owners } else { tree::Direction::Dependents };
            super::watch::run(
                global,
                &about(&a.target, true, Some(answer), VersionRead::Never)?,
                Subject::Tree(dir),
                &o,
            )
        }
        Command::WhyStuck(a) => {
            let t = a.target().context("name the object as TYPE/NAME, or give --all")?;
            let opts = a.options();
            let Loaded { graph: g, now, target, .. } =
                request::load(global, &about(&t, false, Some(opts), VersionRead::WhereJudged)?)?;
            let target = target.context("no object was named")?;
            let t = std::time::Instant::now();
            let live = Liveness::new(&g, now);
            output::timing("controller index", t);
            let t = std::time::Instant::now();
            let mut d = diagnose::why_stuck_with(&g, &live, target, &opts);
            // a namespace not being deleted that holds deletions: point to why-stuck --all -n
            kubectl_gc::sweep::point_to_sweep(&g, &live, &mut d, &opts);
            output::timing("why-stuck", t);
            // --plan: what happens once the blockers are gone, under the propagation the
            // deletion already has (kubectl's default, background, if it has none yet)
            let then = a.plan.then(|| {
                let o = g.object(target);
                let cascade = match o {
                    Some(o) if o.has_finalizer(ORPHAN) => Cascade::Orphan,
                    Some(o) if o.has_finalizer(FOREGROUND_DELETION) => Cascade::Foreground,
                    _ => Cascade::Background,
                };
                let opts = PlanOptions { cascade, assume_finalizers: Some(AssumeFinalizers::Removed), now };
                plan::plan(&g, &live, target, &opts)
            });
            let mut out = output::stdout();
            match a.output {
                Format::Text => {
                    render::text::write_why_stuck(
                        &g,
                        &d,
                        &connection(global, g.captured_context(), g.captured_server()),
                        style(global),
                        &mut out,
                    )?;
                    if let Some(p) = &then {
                        // the heading says what the plan shows: done once the finalizers go, or
                        // blocked even then
                        let heading = if p.is_blocked() {
                            "Even with every remaining finalizer removed by its controller, the deletion stays blocked:"
                        } else {
                            "Once the blockers are gone (every remaining finalizer removed by its controller):"
                        };
                        writeln!(out, "\n{heading}\n")?;
                        render::plan::write_text_styled(p, &g, style(global), &mut out)?;
                    }
                }
                Format::Json | Format::Yaml => {
                    let mut wire =
                        render::json::why_stuck(&g, &d, &connection(global, g.captured_context(), g.captured_server()));
                    wire.plan = then.as_ref().map(|p| render::plan::to_value(p, &g));
                    if a.output == Format::Json {
                        render::json::write(&wire, &mut out)?;
                    } else {
                        output::yaml(&wire, &mut out)?;
                    }
                }
            }
            out.flush()?;
            exit_without_freeing(g);
            Ok(Exit::from_verdict(Some(d.verdict())))
        }
        Command::Tree(a) => {
            let Loaded { graph: g, now, target, .. } =
                request::load(global, &about(&a.target, true, None, VersionRead::Never)?)?;
            let target = target.context("no object was named")?;
            let live = Liveness::new(&g, now);
            let dir = if a.owners { tree::Direction::Owners } else { tree::Direction::Dependents };
            let t = tree::build(&g, &live, target, dir);
            let mut out = output::stdout();
            match a.output {
                TreeFormat::Text => render::text::write_tree(&g, &t, now.as_second(), style(global), &mut out)?,
                TreeFormat::Json => render::json::write_tree(&g, &t, &mut out)?,
                TreeFormat::Yaml => render::tree_yaml::write_tree(&g, &t, &mut out)?,
                TreeFormat::Dot => render::dot::write_tree(&g, &t, &mut out)?,
                TreeFormat::Mermaid => render::mermaid::write_tree(&g, &t, &mut out)?,
            }
            out.flush()?;
            drop(t);
            exit_without_freeing(g);
            Ok(Exit::Ok)
        }
        Command::Plan(a) => {
            let Loaded { graph: g, now, target, .. } =
                request::load(global, &about(&a.target, true, None, VersionRead::WhereJudged)?)?;
            let target = target.context("no object was named")?;
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
            let mut out = output::stdout();
            match a.output {
                Format::Text => render::plan::write_text_styled(&p, &g, style(global), &mut out)?,
                Format::Json => render::plan::write_json(&p, &g, &mut out)?,
                Format::Yaml => output::yaml(&render::plan::to_value(&p, &g), &mut out)?,
            }
            out.flush()?;
            let blocked = p.is_blocked();
            drop(p);
            exit_without_freeing(g);
            Ok(Exit::from_stuck(blocked))
        }
        Command::Snapshot(a) => {
            if !global.snapshot.is_empty() {
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
            let snapshot = super::live::read(global, &capture)?.snapshot;
            warn_about(&snapshot);
            match &a.file {
                Some(path) => super::snapshot_file::write(path, a.force, |w| {
                    kubectl_gc::snapshot::write::write(&snapshot, w).map_err(Into::into)
                })?,
                None => {
                    let mut out = output::stdout();
                    kubectl_gc::snapshot::write::write(&snapshot, &mut out)?;
                    out.flush()?;
                }
            }
            Ok(Exit::Ok)
        }
        Command::Completion(a) => {
            let mut out = output::stdout();
            super::complete::generate_script(a.shell, &mut out)?;
            out.flush()?;
            Ok(Exit::Ok)
        }
        Command::Complete(a) => {
            // main answers `__complete` before clap parses it, so flags among the words stay
            // words; this arm serves a parse that got here anyway.
            let mut out = output::stdout();
            super::complete::write(&super::complete::complete(&a.words), &mut out)?;
            out.flush()?;
            Ok(Exit::Ok)
        }
    }
}

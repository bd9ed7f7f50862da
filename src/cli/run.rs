//! One function per subcommand: load → build → answer → render.

use kubectl_gc::names::{FOREGROUND_DELETION, ORPHAN};

use std::io::Write;

use anyhow::{Context, Result, bail};
use k8s_openapi::jiff::Timestamp;

use kubectl_gc::controllers::Liveness;
use kubectl_gc::diagnose::Connection;
use kubectl_gc::graph::{Graph, NodeId};
use kubectl_gc::plan::{self, AssumeFinalizers, Cascade, PlanOptions};
use kubectl_gc::render::{self, style::Style};
use kubectl_gc::snapshot::Snapshot;
use kubectl_gc::{diagnose, source, tree};

use super::args::{Args, AssumeArg, CascadeArg, Command, Format, Global, Target, TreeFormat};
use super::exit::Exit;
use super::output;

pub fn run(args: Args) -> Result<Exit> {
    let global = &args.global;
    match &args.command {
        Command::WhyStuck(a) if a.all => super::sweep::run(global, a),
        Command::WhyStuck(a) => {
            let t = a.target().context("name the object as TYPE/NAME, or give --all")?;
            let opts = diagnose::Options { stuck_after: a.stuck_after };
            let (g, now) = load(global, Some(&t), false, Some(opts))?;
            let target = resolve(&g, &t, global)?;
            let t = std::time::Instant::now();
            let live = Liveness::new(&g, now);
            output::timing("controller index", t);
            let t = std::time::Instant::now();
            let d = diagnose::why_stuck_with(&g, &live, target, &opts);
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
                        &connection(global, g.captured_context()),
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
                    let mut wire = render::json::why_stuck(&g, &d, &connection(global, g.captured_context()));
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
            Ok(Exit::from_stuck(d.stuck))
        }
        Command::Tree(a) => {
            let (g, now) = load(global, Some(&a.target), true, None)?;
            let target = resolve(&g, &a.target, global)?;
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
            let (g, now) = load(global, Some(&a.target), true, None)?;
            let target = resolve(&g, &a.target, global)?;
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
            let snapshot = super::live::read(global, None, false, Some(diagnose::Options::default()))?;
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
            super::complete::generate_script(a.shell, &mut out);
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

/// The process is about to exit: handing millions of small allocations back one by one would
/// only delay it (a tenth of a second on 100k objects), so the graph is left to the OS.
pub(super) fn exit_without_freeing(g: Graph) {
    std::mem::forget(g);
}

/// The cluster every printed command is bound to: the connection flags this invocation used
/// (never a token), else the kubeconfig context the answer was read through (live) or that a
/// `kubectl gc snapshot` file recorded (offline), so a command pasted later cannot act on
/// whatever context is current then; live, with the kubeconfig file that context was read
/// from unless it is the default one, so a shell whose `KUBECONFIG` names another file with
/// a context of the same name cannot take the command there.
pub(super) fn connection(global: &Global, read_context: Option<&str>) -> Connection {
    let c = &global.connection;
    if !global.snapshot.is_empty() {
        return match read_context {
            Some(ctx) => Connection::default().with("--context", ctx.to_string()),
            None => Connection::unbound(
                "the snapshot file records no context (only `kubectl gc snapshot` writes one); add --context before running them",
            ),
        };
    }
    let mut conn = Connection::default();
    // the file the context was read through (absolute), else the flag as given
    if let Some(p) = super::live::kubeconfig_read().or_else(|| c.kubeconfig.clone()) {
        conn = conn.with("--kubeconfig", p.display().to_string());
    }
    let words = [
        ("--context", c.context.as_deref().or(read_context)),
        ("--cluster", c.cluster.as_deref()),
        ("--user", c.user.as_deref()),
        ("--server", c.server.as_deref()),
        ("--as", c.as_user.as_deref()),
    ];
    for (flag, v) in words {
        if let Some(v) = v {
            conn = conn.with(flag, v.to_string());
        }
    }
    for group in &c.as_group {
        conn = conn.with("--as-group", group.clone());
    }
    if let Some(uid) = &c.as_uid {
        conn = conn.with("--as-uid", uid.clone());
    }
    for extra in &c.as_user_extra {
        conn = conn.with("--as-user-extra", extra.clone());
    }
    if !conn.is_bound() {
        conn = Connection::unbound("no context was named; add the one you read from before running them");
    }
    conn
}

pub(super) fn style(global: &Global) -> Style {
    Style { color: output::use_color(global.color), width: output::text_width(global.width) }
}

/// Reads the objects and decides the reference time.
/// Offline with `--snapshot`, else live: what an answer about `target` needs.
/// `why_stuck`: the answer is why-stuck's, with these options (see `live::read`).
fn load(
    global: &Global,
    target: Option<&Target>,
    dependents_anywhere: bool,
    why_stuck: Option<diagnose::Options>,
) -> Result<(Graph, Timestamp)> {
    load_from(global, || super::live::read(global, target, dependents_anywhere, why_stuck))
}

/// [`load`], with the live read given.
pub(super) fn load_from(global: &Global, live: impl FnOnce() -> Result<Snapshot>) -> Result<(Graph, Timestamp)> {
    let t0 = std::time::Instant::now();
    let snapshot = if global.snapshot.is_empty() {
        live()?
    } else {
        source::file::load(&global.snapshot).context("reading the snapshot")?
    };
    warn_about(&snapshot);
    let now = match &global.now {
        Some(s) => s.parse::<Timestamp>().with_context(|| format!("--now {s:?} is not an RFC 3339 time"))?,
        None => snapshot.captured_at.unwrap_or_else(Timestamp::now),
    };
    output::timing("load", t0);
    let t1 = std::time::Instant::now();
    let mut g = Graph::build(snapshot);
    // kinds named only by the objects present: answered, and said to rest on inference
    let inferred: Vec<String> = g.mapper().inferred().map(kubectl_gc::discovery::RestMapper::inferred_note).collect();
    for note in inferred {
        output::warn(&note);
        g.record_gap(kubectl_gc::snapshot::Gap::recorded(note));
    }
    output::timing("graph", t1);
    Ok((g, now))
}

fn warn_about(s: &Snapshot) {
    for w in &s.warnings {
        output::warn(w);
    }
    for i in &s.incomplete {
        output::warn(&format!("incomplete: {i}"));
    }
}

/// What could not be read of a type where the target would be (its namespace, or every
/// namespace): an absent object there is unknown, not "not found".
fn unread(g: &Graph, plural: &str, ns: Option<&str>) -> Option<String> {
    use kubectl_gc::snapshot::gap::Missing;
    let here = ns.map(|ns| format!("{plural} in namespace \"{ns}\" "));
    let everywhere = format!("{plural} could not");
    g.gaps()
        .iter()
        .find(|i| match &i.what {
            Missing::List { resource, namespace } | Missing::Bodies { resource, name: namespace } => {
                resource == plural && (namespace.is_none() || namespace.as_deref() == ns)
            }
            Missing::Recorded(line) => {
                line.starts_with(&everywhere) || here.as_ref().is_some_and(|h| line.starts_with(h.as_str()))
            }
            _ => false,
        })
        .map(|i| i.to_string())
}

/// Resolves `TYPE/NAME` or `TYPE NAME` and `-n` to one object of the graph.
pub fn resolve(g: &Graph, t: &Target, global: &Global) -> Result<NodeId> {
    let (type_arg, name) = match (t.what.split_once('/'), &t.name) {
        (Some((ty, name)), None) => (ty, name),
        (None, Some(name)) => (t.what.as_str(), name.as_str()),
        (Some(_), Some(extra)) => bail!("there is more than one object named: {} and {extra}; name one object", t.what),
        (None, None) => bail!("resource name may not be empty: give TYPE/NAME or TYPE NAME"),
    };
    if name.is_empty() || type_arg.is_empty() {
        bail!("give the object as TYPE/NAME or TYPE NAME, not {:?}", t.what);
    }
    let rt = g.mapper().resolve(type_arg).map_err(|e| {
        // offline too: a snapshot whose capture could not discover some groups says so
        let failed: Vec<String> =
            g.gaps().iter().map(|i| i.to_string()).filter(|i| i.contains("could not be discovered")).collect();
        super::live::unresolved(e, &failed)
    })?;
    let ns = rt.namespaced.then(|| {
        global.namespace.clone().or_else(super::live::context_namespace).unwrap_or_else(|| "default".to_string())
    });
    match g.find(&rt.group, &rt.kind, ns.as_deref(), name) {
        Some(id) => Ok(id),
        None if let Some(why) = unread(g, &rt.qualified_plural(), ns.as_deref()) => {
            let place = ns.map(|ns| format!(" in namespace \"{ns}\"")).unwrap_or_default();
            bail!(
                "cannot tell whether {} \"{name}\" exists{place}: it could not be read ({why})",
                rt.qualified_plural()
            )
        }
        None => match ns {
            Some(ns) => bail!("{} \"{name}\" not found in namespace \"{ns}\"", rt.qualified_plural()),
            None => bail!("{} \"{name}\" not found", rt.qualified_plural()),
        },
    }
}

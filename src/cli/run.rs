//! One function per subcommand: load → build → answer → render.

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
            let (g, now) = load(global, Some(&t), false)?;
            let target = resolve(&g, &t, global)?;
            let t = std::time::Instant::now();
            let live = Liveness::new(&g, now);
            output::timing("controller index", t);
            let t = std::time::Instant::now();
            let d = diagnose::why_stuck(&g, &live, target);
            output::timing("why-stuck", t);
            // --plan: what happens once the blockers are gone, under the propagation the
            // deletion already has (kubectl's default, background, if it has none yet)
            let then = a.plan.then(|| {
                let o = g.object(target);
                let cascade = match o {
                    Some(o) if o.has_finalizer("orphan") => Cascade::Orphan,
                    Some(o) if o.has_finalizer("foregroundDeletion") => Cascade::Foreground,
                    _ => Cascade::Background,
                };
                let opts = PlanOptions { cascade, assume_finalizers: Some(AssumeFinalizers::Removed), now };
                plan::plan(&g, &live, target, &opts)
            });
            let mut out = output::stdout();
            match a.output {
                Format::Text => {
                    render::text::write_why_stuck(&g, &d, &connection(global), style(global), &mut out)?;
                    if let Some(p) = &then {
                        writeln!(
                            out,
                            "\nOnce the blockers are gone (every remaining finalizer removed by its controller):\n"
                        )?;
                        render::plan::write_text(p, &g, style(global).color, &mut out)?;
                    }
                }
                Format::Json | Format::Yaml => {
                    let mut wire = render::json::why_stuck(&g, &d, &connection(global));
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
            let (g, now) = load(global, Some(&a.target), true)?;
            let target = resolve(&g, &a.target, global)?;
            let live = Liveness::new(&g, now);
            let dir = if a.owners { tree::Direction::Owners } else { tree::Direction::Dependents };
            let t = tree::build(&g, &live, target, dir);
            let mut out = output::stdout();
            match a.output {
                TreeFormat::Text => render::text::write_tree(&g, &t, now.as_second(), style(global), &mut out)?,
                TreeFormat::Json => render::json::write_tree(&g, &t, &mut out)?,
                TreeFormat::Yaml => {
                    let mut buf = Vec::new();
                    render::json::write_tree(&g, &t, &mut buf)?;
                    let v: serde_json::Value = serde_json::from_slice(&buf)?;
                    output::yaml(&v, &mut out)?;
                }
                TreeFormat::Dot => render::dot::write_tree(&g, &t, &mut out)?,
                TreeFormat::Mermaid => render::mermaid::write_tree(&g, &t, &mut out)?,
            }
            out.flush()?;
            drop(t);
            exit_without_freeing(g);
            Ok(Exit::Ok)
        }
        Command::Plan(a) => {
            let (g, now) = load(global, Some(&a.target), true)?;
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
                Format::Text => render::plan::write_text(&p, &g, style(global).color, &mut out)?,
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
            let snapshot = super::live::read(global, None, false)?;
            warn_about(&snapshot);
            match &a.output {
                Some(path) => {
                    let file =
                        std::fs::File::create(path).with_context(|| format!("cannot create {}", path.display()))?;
                    let mut w = std::io::BufWriter::new(file);
                    kubectl_gc::snapshot::write::write(&snapshot, &mut w)
                        .and_then(|_| w.flush())
                        .with_context(|| format!("writing {}", path.display()))?;
                }
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
/// (never a token), so a command pasted later cannot act on whatever context is current then.
pub(super) fn connection(global: &Global) -> Connection {
    let c = &global.connection;
    if !global.snapshot.is_empty() {
        return Connection::unbound("they were derived from a snapshot file; add --context before running them");
    }
    let mut conn = Connection::default();
    let paths = [("--kubeconfig", &c.kubeconfig)];
    for (flag, v) in paths {
        if let Some(p) = v {
            conn = conn.with(flag, p.display().to_string());
        }
    }
    let words = [
        ("--context", &c.context),
        ("--cluster", &c.cluster),
        ("--user", &c.user),
        ("--server", &c.server),
        ("--as", &c.as_user),
    ];
    for (flag, v) in words {
        if let Some(v) = v {
            conn = conn.with(flag, v.clone());
        }
    }
    for group in &c.as_group {
        conn = conn.with("--as-group", group.clone());
    }
    if let Some(uid) = &c.as_uid {
        conn = conn.with("--as-uid", uid.clone());
    }
    if !conn.is_bound() {
        conn = Connection::unbound("no --context was given; add the one you read from before running them");
    }
    conn
}

pub(super) fn style(global: &Global) -> Style {
    Style { color: output::use_color(global.color) }
}

/// Reads the objects and decides the reference time.
/// Offline with `--snapshot`, else live: what an answer about `target` needs.
fn load(global: &Global, target: Option<&Target>, dependents_anywhere: bool) -> Result<(Graph, Timestamp)> {
    load_from(global, || super::live::read(global, target, dependents_anywhere))
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
    let g = Graph::build(snapshot);
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
    let rt = g.mapper.resolve(type_arg)?;
    let ns = rt.namespaced.then(|| {
        global.namespace.clone().or_else(super::live::context_namespace).unwrap_or_else(|| "default".to_string())
    });
    match g.find(&rt.group, &rt.kind, ns.as_deref(), name) {
        Some(id) => Ok(id),
        None => match ns {
            Some(ns) => bail!("{} \"{name}\" not found in namespace \"{ns}\"", rt.qualified_plural()),
            None => bail!("{} \"{name}\" not found", rt.qualified_plural()),
        },
    }
}

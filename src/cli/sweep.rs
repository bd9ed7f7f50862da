//! `why-stuck --all`: load the scope, answer every terminating object, group, render.
//!
//! Live, the read is the sweep's own plan (`kubectl_gc::reads::sweep`): the scope's metadata
//! first, which finds what is being deleted, then bodies only where those answers read them.

use std::io::Write;

use anyhow::Result;

use kubectl_gc::controllers::Liveness;
use kubectl_gc::render;
use kubectl_gc::sweep::{self, Options, Scope};

use super::args::{Format, Global, WhyStuckArgs};
use super::exit::Exit;
use super::output;
use super::request::{self, Loaded, Request, connection, exit_without_freeing, style};

pub fn run(global: &Global, a: &WhyStuckArgs) -> Result<Exit> {
    let answer = a.options();
    // no target: the sweep's read of the scope (not a capture: `VersionRead::WhereJudged`),
    // planned from what the answers about every object being deleted in it read
    let request = Request {
        target: None,
        dependents_anywhere: false,
        why_stuck: Some(answer),
        version: kubectl_gc::reads::VersionRead::WhereJudged,
        admission: true,
    };
    if a.watch.watch {
        let scope = if global.all_namespaces {
            "-A".to_string()
        } else {
            global.namespace.as_ref().map(|ns| format!("-n {ns}")).unwrap_or_default()
        };
        let o = super::watch::Options {
            format: super::run::watch_format(a.output),
            answer,
            stuck_after: a.stuck_after.0,
            flags: a.watch,
            title: format!("why-stuck --all {scope}").trim_end().to_string(),
        };
        return super::watch::run(global, &request, super::watch::Subject::All { stuck_only: a.stuck_only }, &o);
    }
    let Loaded { graph: g, now, namespace, .. } = request::load(global, &request)?;
    let scope = if global.all_namespaces { Scope::Cluster } else { Scope::Namespace(namespace) };
    let t = std::time::Instant::now();
    let live = Liveness::new(&g, now);
    output::timing("controller index", t);
    let t = std::time::Instant::now();
    let s = sweep::sweep(&g, &live, &Options { scope, stuck_only: a.stuck_only, answer });
    output::timing("why-stuck --all", t);
    let conn = connection(global, g.captured_context(), g.captured_server());
    let t = std::time::Instant::now();
    let mut out = output::stdout();
    match a.output {
        Format::Text => render::sweep::write_text(&g, &s, &conn, style(global), &mut out)?,
        Format::Json => render::json::write(&render::sweep::to_json(&g, &s, &conn), &mut out)?,
        Format::Yaml => output::yaml(&render::sweep::to_json(&g, &s, &conn), &mut out)?,
    }
    out.flush()?;
    output::timing("render", t);
    // 2 when anything is stuck, else 3 when anything could not be judged, else 0
    let verdict = s.verdict();
    drop(s);
    drop(live);
    exit_without_freeing(g);
    Ok(Exit::from_verdict(verdict))
}

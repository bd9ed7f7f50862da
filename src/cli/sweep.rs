//! `why-stuck --all`: load the scope, answer every terminating object, group, render.
//!
//! Live, the read is the sweep's own plan (`kubectl_gc::reads::sweep`): the scope's metadata
//! first, which finds what is being deleted, then bodies only where those answers read them.

use std::io::Write;

use anyhow::Result;

use kubectl_gc::controllers::Liveness;
use kubectl_gc::render;
use kubectl_gc::sweep::{self, Options, Scope};

use super::args::{Format, WhyStuckArgs};
use super::exit::{Exit, written};
use super::invocation::Invocation;
use super::output;
use super::request::{self, Loaded, Request, exit_without_freeing};

/// No target: the sweep's read of the scope (not a capture: `VersionRead::WhereJudged`),
/// planned from what the answers about every object being deleted in it read.
fn request(answer: kubectl_gc::diagnose::Options) -> Request {
    Request {
        target: None,
        dependents_anywhere: false,
        why_stuck: Some(answer),
        version: kubectl_gc::reads::VersionRead::WhereJudged,
        admission: true,
    }
}

/// `why-stuck --all --watch`.
pub fn watch(inv: &Invocation, a: &WhyStuckArgs) -> Result<Exit> {
    let scope = match inv.namespace_flag() {
        _ if inv.all_namespaces => "-A".to_string(),
        Some(ns) => format!("-n {ns}"),
        None => String::new(),
    };
    let o = super::watch::Options {
        format: super::run::watch_format(a.output),
        answer: a.options(),
        stuck_after: a.stuck_after.0,
        flags: a.watch,
        title: format!("why-stuck --all {scope}").trim_end().to_string(),
    };
    super::watch::run(inv, &request(a.options()), super::watch::Subject::All { stuck_only: a.stuck_only }, &o)
}

/// `why-stuck --all`.
pub fn run(inv: &Invocation, a: &WhyStuckArgs) -> Result<Exit> {
    let answer = a.options();
    let Loaded { graph: g, now, namespace, connection: conn, .. } = request::load(inv, &request(answer))?;
    let scope = if inv.all_namespaces { Scope::Cluster } else { Scope::Namespace(namespace.name) };
    let t = std::time::Instant::now();
    let live = Liveness::new(&g, now);
    output::timing("controller index", t);
    let t = std::time::Instant::now();
    let s = sweep::sweep(&g, &live, &Options { scope, stuck_only: a.stuck_only, answer });
    output::timing("why-stuck --all", t);
    // 2 when anything is stuck, else 3 when anything could not be judged, else 0
    let exit = Exit::from_verdict(s.verdict());
    let t = std::time::Instant::now();
    let mut out = output::stdout();
    let shown = match a.output {
        Format::Text => render::sweep::write_text(&g, &s, &conn, inv.style, &mut out).map_err(Into::into),
        Format::Json => render::json::write(&render::sweep::to_json(&g, &s, &conn), &mut out).map_err(Into::into),
        Format::Yaml => output::yaml(&render::sweep::to_json(&g, &s, &conn), &mut out),
    };
    let exit = written(exit, shown.and_then(|()| Ok(out.flush()?)))?;
    output::timing("render", t);
    drop(s);
    drop(live);
    exit_without_freeing(g);
    Ok(exit)
}

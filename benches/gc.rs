//! The benchmark: `cargo bench --bench gc -- [--sizes 10k,100k,1M] [--skip-live]`.
//!
//! Offline, per size, on a synthetic cluster (benches/synth.rs): each phase of the engine
//! (load, graph, why-stuck on a stuck object, plan of a namespace) beside two floors measured
//! on the same file — reading it and checking its JSON syntax without building anything
//! (serde's `IgnoredAny`), and parsing it into `serde_json::Value` (what a naive tool does) —
//! and the peak memory of the real binary answering `why-stuck`.
//! Timing lives here, never in the test suite.

#[path = "synth.rs"]
mod synth;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use kubectl_gc::controllers::Liveness;
use kubectl_gc::graph::Graph;

struct Args {
    sizes: Vec<usize>,
    naive_up_to: usize,
    skip_live: bool,
}

fn parse_args() -> Args {
    let mut a = Args { sizes: vec![10_000, 100_000], naive_up_to: 200_000, skip_live: false };
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let mut i = 0;
    while i < argv.len() {
        match argv[i].as_str() {
            "--sizes" => {
                a.sizes = argv[i + 1].split(',').map(|s| synth::parse_size(s).expect("size")).collect();
                i += 1;
            }
            "--naive-up-to" => {
                a.naive_up_to = synth::parse_size(&argv[i + 1]).expect("size");
                i += 1;
            }
            "--skip-live" => a.skip_live = true,
            _ => {} // cargo bench passes --bench
        }
        i += 1;
    }
    a
}

fn secs(d: Duration) -> String {
    format!("{:.3}s", d.as_secs_f64())
}

/// Best of `n` runs.
fn best<T>(n: usize, mut f: impl FnMut() -> T) -> (Duration, T) {
    let mut best = Duration::MAX;
    let mut last = None;
    for _ in 0..n {
        let t = Instant::now();
        let v = f();
        best = best.min(t.elapsed());
        last = Some(v);
    }
    (best, last.expect("n > 0"))
}

/// Peak resident memory of a child process, in bytes (wait4's rusage).
fn peak_rss_of(cmd: &mut std::process::Command) -> (u64, i32) {
    let child = cmd.stdout(std::process::Stdio::null()).stderr(std::process::Stdio::null()).spawn().expect("spawn");
    let pid = child.id() as i32;
    let mut status = 0;
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: waiting for our own child, with valid out-pointers.
    let r = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(r, pid, "wait4");
    std::mem::forget(child);
    ((usage.ru_maxrss as u64) * 1024, libc::WEXITSTATUS(status))
}

fn release_binary() -> PathBuf {
    let exe = std::env::current_exe().expect("bench path");
    // target/release/deps/gc-… → target/release/kubectl-gc
    exe.parent().and_then(Path::parent).expect("target dir").join("kubectl-gc")
}

fn main() {
    let args = parse_args();
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/bench");
    std::fs::create_dir_all(&dir).expect("target/bench");
    let bin = release_binary();
    println!("kubectl-gc benchmark — {} cores, {}", std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1), machine());
    println!("binary: {}", bin.display());
    let mut why_stuck_by_size = Vec::new();
    for &n in &args.sizes {
        let opts = synth::Options { objects: n, ..Default::default() };
        let file = dir.join(format!("synth-{n}.json"));
        let (count, lm) = synth::generate(&opts, std::io::BufWriter::new(std::fs::File::create(&file).expect("create"))).expect("generate");
        let bytes = std::fs::metadata(&file).expect("stat").len();
        println!("\n== {count} objects, {:.1} MB ({})", bytes as f64 / 1e6, file.display());
        let runs = if n >= 1_000_000 { 1 } else { 3 };

        let (syntax, _) = best(runs, || {
            let data = std::fs::read(&file).expect("read");
            serde_json::from_slice::<serde::de::IgnoredAny>(&data).expect("valid JSON");
        });
        println!("  floor: read + syntax (IgnoredAny)     {}", secs(syntax));
        let naive = (n <= args.naive_up_to).then(|| {
            best(1, || {
                let data = std::fs::read(&file).expect("read");
                serde_json::from_slice::<serde_json::Value>(&data).expect("valid JSON")
            })
            .0
        });
        match naive {
            Some(d) => println!("  naive: parse into serde_json::Value   {}", secs(d)),
            None => println!("  naive: skipped above --naive-up-to"),
        }

        println!("  {}", rss());
        let (load, snapshot) = best(runs, || kubectl_gc::source::file::load(std::slice::from_ref(&file)).expect("load"));
        let (graph_t, g) = best(1, || Graph::build(snapshot.clone()));
        let now: k8s_openapi::jiff::Timestamp = synth::NOW.parse().unwrap();
        let (stuck_plural, stuck_ns, stuck_name) = lm.stuck.clone().expect("the generator plants a stuck object");
        let rt = g.mapper.resolve(&stuck_plural).expect("stuck type");
        let target = g.find(&rt.group, &rt.kind, Some(&stuck_ns), &stuck_name).expect("stuck object");
        let (liveness_t, _) = best(runs, || Liveness::new(&g, now));
        let live = Liveness::new(&g, now);
        let (why_t, d) = best(runs, || kubectl_gc::diagnose::why_stuck(&g, &live, target));
        assert!(d.stuck, "the planted object is stuck");
        let ns = lm.namespace.clone().expect("namespace");
        let ns_node = g.find("", "Namespace", None, &ns).expect("namespace node");
        let popts = kubectl_gc::plan::PlanOptions { cascade: kubectl_gc::plan::Cascade::Background, assume_finalizers: None, now };
        let (plan_t, p) = best(runs, || kubectl_gc::plan::plan(&g, &live, ns_node, &popts));
        println!("  load (read + parse + validate)        {}", secs(load));
        println!("  graph                                 {}  {}", secs(graph_t), rss());
        println!("  controller index (Liveness::new)      {}", secs(liveness_t));
        println!("  why-stuck {stuck_plural}/{stuck_name}   {}", secs(why_t));
        println!("  plan ns/{ns} ({} removed, {} blocked)  {}", p.result.removed.len(), p.result.blocked.len(), secs(plan_t));

        // the real binary, end to end, with its peak memory
        let mut cmd = std::process::Command::new(&bin);
        cmd.args(["why-stuck", &format!("{stuck_plural}/{stuck_name}"), "-n", &stuck_ns, "-o", "json", "--now", synth::NOW, "--snapshot"]).arg(&file);
        let t = Instant::now();
        let (rss, code) = peak_rss_of(&mut cmd);
        let e2e = t.elapsed();
        assert_eq!(code, 2, "why-stuck on the stuck object exits 2");
        println!("  kubectl-gc why-stuck (whole process)  {}   peak RSS {:.0} MB = {:.2}× the file", secs(e2e), rss as f64 / 1e6, rss as f64 / bytes as f64);
        println!("  ratios: why-stuck process / syntax floor = {:.2}×{}", e2e.as_secs_f64() / syntax.as_secs_f64(),
            naive.map(|nv| format!(", / naive parse = {:.2}×", e2e.as_secs_f64() / nv.as_secs_f64())).unwrap_or_default());
        why_stuck_by_size.push((n, e2e));
    }
    if let (Some(small), Some(big)) = (why_stuck_by_size.iter().find(|x| x.0 == 100_000), why_stuck_by_size.iter().find(|x| x.0 == 1_000_000)) {
        println!("\n1M / 100k why-stuck time: {:.1}× (target ≤ 11×)", big.1.as_secs_f64() / small.1.as_secs_f64());
    }
    if !args.skip_live {
        println!("\n(live benchmark: see issue 6; run with the test API server once it is merged)");
    }
}

/// This process's current and peak resident memory, in MB (Linux).
fn rss() -> String {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |k: &str| status.lines().find(|l| l.starts_with(k)).and_then(|l| l.split_whitespace().nth(1)).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0) / 1024;
    format!("[rss {} MB, peak {} MB]", field("VmRSS:"), field("VmHWM:"))
}

fn machine() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| s.lines().find(|l| l.starts_with("model name")).map(|l| l.split(':').nth(1).unwrap_or("").trim().to_string()))
        .unwrap_or_else(|| std::env::consts::ARCH.to_string())
}

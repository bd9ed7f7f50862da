//! The benchmark: `cargo bench --bench gc -- [--sizes 10k,100k,1M] [--skip-live] [--skip-offline]
//! [--live-sizes 10k,100k] [--live-terminating 1%]`.
//!
//! Live, per size: the test API server serving the `--full` cluster, and each command's wall
//! time, requests, bytes and peak memory (`why-stuck` on one object, with `-A`, `--all -A`,
//! `tree -A`, `snapshot -A`, and kubectl listing every type), as a table.
//!
//! Offline, per size, on a synthetic cluster (benches/synth.rs): each phase of the engine
//! (load, graph, why-stuck on a stuck object, why-stuck --all -A, plan of a namespace) beside
//! two floors measured on the same file — reading it and checking its JSON syntax without
//! building anything (serde's `IgnoredAny`), and parsing it into `serde_json::Value` (what a
//! naive tool does) — and the real binary answering `why-stuck` (its peak memory) and
//! `why-stuck --all -A`. The clusters have 1% of their objects being deleted.
//! Timing lives here, never in the test suite.

#[path = "synth.rs"]
mod synth;

#[path = "../tests/support/apiserver/mod.rs"]
mod apiserver;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use kubectl_gc::controllers::Liveness;
use kubectl_gc::graph::Graph;

struct Args {
    sizes: Vec<usize>,
    naive_up_to: usize,
    skip_live: bool,
    /// The sizes the live rows are measured at (`--live-sizes 10k,100k`; `--live-size N` for one).
    live_sizes: Vec<usize>,
    /// The share of objects being deleted in the live clusters (`--live-terminating 1%`).
    live_terminating: f64,
}

fn parse_args() -> Args {
    let mut a = Args {
        sizes: vec![10_000, 100_000],
        naive_up_to: 200_000,
        skip_live: false,
        live_sizes: vec![10_000, 100_000],
        live_terminating: 1.0,
    };
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
            // the live rows alone
            "--skip-offline" => a.sizes.clear(),
            "--live-size" => {
                a.live_sizes = vec![synth::parse_size(&argv[i + 1]).expect("size")];
                i += 1;
            }
            "--live-sizes" => {
                a.live_sizes = argv[i + 1].split(',').map(|s| synth::parse_size(s).expect("size")).collect();
                i += 1;
            }
            "--live-terminating" => {
                a.live_terminating = argv[i + 1].trim_end_matches('%').parse().expect("--live-terminating 1%");
                i += 1;
            }
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
    PathBuf::from(env!("CARGO_BIN_EXE_kubectl-gc"))
}

fn main() {
    let args = parse_args();
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/bench");
    std::fs::create_dir_all(&dir).expect("target/bench");
    let bin = release_binary();
    println!(
        "kubectl-gc benchmark — {} cores, {}",
        std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1),
        machine()
    );
    println!("binary: {}", bin.display());
    // Every file first, and the binary's end-to-end runs before this process holds anything
    // big: Linux reports a child's peak memory including what its parent held when it forked.
    let mut files = Vec::new();
    for &n in &args.sizes {
        // 1% of the objects being deleted, for `why-stuck --all`
        let opts = synth::Options { objects: n, terminating_percent: 1.0, ..Default::default() };
        let file = dir.join(format!("synth-{n}.json"));
        let (count, lm) =
            synth::generate(&opts, std::io::BufWriter::new(std::fs::File::create(&file).expect("create")))
                .expect("generate");
        let (stuck_plural, stuck_ns, stuck_name) = lm.stuck.clone().expect("the generator plants a stuck object");
        let mut e2e = Duration::MAX;
        let mut rss = 0;
        // best of three at every size, so that the 1M / 100k ratio compares like with like
        for _ in 0..3 {
            let mut cmd = std::process::Command::new(&bin);
            cmd.args([
                "why-stuck",
                &format!("{stuck_plural}/{stuck_name}"),
                "-n",
                &stuck_ns,
                "-o",
                "json",
                "--now",
                synth::NOW,
                "--snapshot",
            ])
            .arg(&file);
            let t = Instant::now();
            let (r, code) = peak_rss_of(&mut cmd);
            e2e = e2e.min(t.elapsed());
            rss = rss.max(r);
            assert_eq!(code, 2, "why-stuck on the stuck object exits 2");
        }
        // why-stuck --all -A on the same file: every terminating object answered and grouped
        let mut all_e2e = Duration::MAX;
        for _ in 0..3 {
            let mut cmd = std::process::Command::new(&bin);
            cmd.args(["why-stuck", "--all", "-A", "-o", "json", "--now", synth::NOW, "--snapshot"]).arg(&file);
            let t = Instant::now();
            let (_, code) = peak_rss_of(&mut cmd);
            all_e2e = all_e2e.min(t.elapsed());
            assert_eq!(code, 2, "why-stuck --all -A exits 2: the planted objects are stuck");
        }
        files.push((n, count, lm, file, e2e, rss, all_e2e));
    }
    let mut why_stuck_by_size = Vec::new();
    let mut all_by_size = Vec::new();
    for (n, count, lm, file, e2e, rss, all_e2e) in files {
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

        let (load, snapshot) =
            best(runs, || kubectl_gc::source::file::load(std::slice::from_ref(&file)).expect("load"));
        let (graph_t, g) = best(1, || Graph::build(snapshot.clone()));
        drop(snapshot);
        let now: k8s_openapi::jiff::Timestamp = synth::NOW.parse().unwrap();
        let (stuck_plural, stuck_ns, stuck_name) = lm.stuck.clone().expect("the generator plants a stuck object");
        let rt = g.mapper().resolve(&stuck_plural).expect("stuck type");
        let target = g.find(&rt.group, &rt.kind, Some(&stuck_ns), &stuck_name).expect("stuck object");
        let (liveness_t, _) = best(runs, || Liveness::new(&g, now));
        let live = Liveness::new(&g, now);
        let (why_t, d) = best(runs, || kubectl_gc::diagnose::why_stuck(&g, &live, target));
        assert!(d.stuck, "the planted object is stuck");
        let ns = lm.namespace.clone().expect("namespace");
        let ns_node = g.find("", "Namespace", None, &ns).expect("namespace node");
        let popts = kubectl_gc::plan::PlanOptions {
            cascade: kubectl_gc::plan::Cascade::Background,
            assume_finalizers: None,
            now,
        };
        let (plan_t, p) = best(runs, || kubectl_gc::plan::plan(&g, &live, ns_node, &popts));
        let (sweep_t, sw) = best(runs, || {
            kubectl_gc::sweep::sweep(
                &g,
                &live,
                &kubectl_gc::sweep::Options {
                    scope: kubectl_gc::sweep::Scope::Cluster,
                    stuck_only: false,
                    answer: Default::default(),
                },
            )
        });
        println!("  load (read + parse + validate)        {}", secs(load));
        println!("  graph                                 {}", secs(graph_t));
        println!("  controller index (Liveness::new)      {}", secs(liveness_t));
        println!("  why-stuck {stuck_plural}/{stuck_name}   {}", secs(why_t));
        println!(
            "  why-stuck --all -A ({} terminating, {} stuck, {} groups)  {}",
            sw.answers.len(),
            sw.answers.iter().filter(|d| d.stuck).count(),
            sw.groups.len(),
            secs(sweep_t)
        );
        println!(
            "  plan ns/{ns} ({} removed, {} blocked)  {}",
            p.result.removed.len(),
            p.result.blocked.len(),
            secs(plan_t)
        );
        println!(
            "  kubectl-gc why-stuck (whole process)  {}   peak RSS {:.0} MB = {:.2}× the file (target ≤ 2.5×)",
            secs(e2e),
            rss as f64 / 1e6,
            rss as f64 / bytes as f64
        );
        println!(
            "  ratios: why-stuck process / syntax floor = {:.2}× (target ≤ 3×){}",
            e2e.as_secs_f64() / syntax.as_secs_f64(),
            naive
                .map(|nv| format!(", / naive parse = {:.2}× (target ≤ 0.3×)", e2e.as_secs_f64() / nv.as_secs_f64()))
                .unwrap_or_default()
        );
        println!(
            "  kubectl-gc why-stuck --all -A -o json (whole process)  {} = {:.2}× one why-stuck (target ≤ 1.5×)",
            secs(all_e2e),
            all_e2e.as_secs_f64() / e2e.as_secs_f64()
        );
        why_stuck_by_size.push((n, e2e));
        all_by_size.push((n, all_e2e));
    }
    if let (Some(small), Some(big)) =
        (all_by_size.iter().find(|x| x.0 == 100_000), all_by_size.iter().find(|x| x.0 == 1_000_000))
    {
        println!(
            "1M / 100k why-stuck --all -A time: {:.1}× (target ≤ 11×)",
            big.1.as_secs_f64() / small.1.as_secs_f64()
        );
    }
    if let (Some(small), Some(big)) =
        (why_stuck_by_size.iter().find(|x| x.0 == 100_000), why_stuck_by_size.iter().find(|x| x.0 == 1_000_000))
    {
        println!("\n1M / 100k why-stuck time: {:.1}× (target ≤ 11×)", big.1.as_secs_f64() / small.1.as_secs_f64());
    }
    if !args.skip_live {
        for &n in &args.live_sizes {
            live(&dir, &bin, n, args.live_terminating);
        }
    }
}

/// One command against the test API server: wall time, requests and bytes the server sent,
/// the process's CPU time (user + system) and its peak resident memory.
struct Measured {
    wall: Duration,
    cpu: Duration,
    requests: usize,
    discovery_requests: usize,
    bytes: u64,
    peak: u64,
}

fn measure(server: &apiserver::ApiServer, cmd: &mut std::process::Command) -> Measured {
    server.clear_requests();
    let err = tempfile::NamedTempFile::new().expect("stderr file");
    let rss = tempfile::NamedTempFile::new().expect("rss file");
    // through GNU time: a child of this process (which holds the served cluster) would report
    // this process's peak as its own (Linux keeps the peak across exec), a grandchild does not
    let mut timed = std::process::Command::new("/usr/bin/time");
    timed.arg("-f").arg("%U %S %M").arg("-o").arg(rss.path()).arg(cmd.get_program()).args(cmd.get_args());
    for (k, v) in cmd.get_envs() {
        match v {
            Some(v) => timed.env(k, v),
            None => timed.env_remove(k),
        };
    }
    timed.stdout(std::process::Stdio::null()).stderr(err.reopen().expect("stderr file"));
    let t = Instant::now();
    let status = timed.status().expect("run /usr/bin/time");
    let wall = t.elapsed();
    assert!(
        status.code().is_some_and(|c| matches!(c, 0 | 2 | 3)),
        "{:?} failed: {}",
        cmd,
        std::fs::read_to_string(err.path()).unwrap_or_default()
    );
    // GNU time's last line: user seconds, system seconds, peak kB
    let timing = std::fs::read_to_string(rss.path()).unwrap_or_default();
    let fields: Vec<&str> = timing.lines().last().unwrap_or_default().split_whitespace().collect();
    let (cpu, peak_kb) = match fields[..] {
        [user, sys, peak] => (
            user.parse::<f64>().expect("GNU time's %U") + sys.parse::<f64>().expect("GNU time's %S"),
            peak.parse::<u64>().expect("GNU time's %M"),
        ),
        _ => panic!("GNU time wrote {timing:?}"),
    };
    let reqs = server.requests();
    let discovery_requests = reqs
        .iter()
        .filter(|r| {
            let segments = r.path.split('/').filter(|s| !s.is_empty()).count();
            r.path == "/version"
                || (r.path.starts_with("/api/") || r.path == "/api") && segments <= 2
                || r.path.starts_with("/apis") && segments <= 3
        })
        .count();
    Measured {
        wall,
        cpu: Duration::from_secs_f64(cpu),
        requests: reqs.len(),
        discovery_requests,
        bytes: server.bytes_sent(),
        peak: peak_kb * 1024,
    }
}

/// One row of the live table.
fn row(what: &str, m: &Measured) {
    println!(
        "  | {what:<44} | {:>8} | {:>8} | {:>6} | {:>9.1} MB | {:>7.0} MB |",
        secs(m.wall),
        secs(m.cpu),
        m.requests,
        m.bytes as f64 / 1e6,
        m.peak as f64 / 1e6
    );
}

fn hermetic(cmd: &mut std::process::Command, home: &Path, kubeconfig: &Path) {
    for v in ["HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "KUBECACHEDIR"] {
        cmd.env_remove(v);
    }
    cmd.env("HOME", home).env("KUBECONFIG", kubeconfig).env("NO_COLOR", "1");
}

/// Live, against the repository's test API server serving a synthetic cluster over HTTP on
/// 127.0.0.1: kubectl-gc's listing against kubectl listing every listable type by hand.
fn live(dir: &Path, bin: &Path, n: usize, terminating: f64) {
    let opts = synth::Options { objects: n, full: true, terminating_percent: terminating, ..Default::default() };
    let file = dir.join(format!("synth-full-{n}.json"));
    let (count, lm) = synth::generate(&opts, std::io::BufWriter::new(std::fs::File::create(&file).expect("create")))
        .expect("generate");
    println!(
        "\n== live: {count} objects ({} namespaces, {} being deleted, full objects as the API serves them), test API server on 127.0.0.1",
        opts.namespaces, lm.terminating
    );
    let server = apiserver::ApiServer::start(&file);
    let file_mb = std::fs::metadata(&file).map_or(0.0, |m| m.len() as f64 / 1e6);
    println!(
        "  test API server loaded: {file_mb:.0} MB file, this process {:.0} MB resident (peak {:.0} MB)",
        status_kb("VmRSS") as f64 / 1e3,
        status_kb("VmHWM") as f64 / 1e3
    );
    let tmp = dir.join("live-home");
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp).expect("home");
    let kubeconfig = tmp.join("kubeconfig");
    std::fs::write(
        &kubeconfig,
        format!("apiVersion: v1\nkind: Config\nclusters:\n- name: bench\n  cluster: {{server: \"{}\"}}\ncontexts:\n- name: bench\n  context: {{cluster: bench, user: bench, namespace: default}}\ncurrent-context: bench\nusers:\n- name: bench\n  user: {{token: bench}}\n", server.url()),
    )
    .expect("kubeconfig");
    let (dns, dname) = lm.deployment.clone().expect("a deployment");

    // kubectl-gc tree -A, cold discovery cache
    let mut gc = std::process::Command::new(bin);
    gc.args(["tree", &format!("deploy/{dname}"), "-n", &dns, "-A", "-o", "json", "--cache-dir"])
        .arg(tmp.join("gc-cache"));
    hermetic(&mut gc, &tmp, &kubeconfig);
    let ours = measure(&server, &mut gc);
    let tree_log = server.requests();
    let ours_protobuf = server.protobuf_answers();
    // the same against a server without KEP-5958's opt-out (before 1.37, or the alpha
    // `ManagedFieldsOptOut` gate off): `drop=metadata.managedFields` is ignored
    server.set_drop_managed_fields(apiserver::DropManagedFields::Ignore);
    let mut gc_old = std::process::Command::new(bin);
    gc_old
        .args(["tree", &format!("deploy/{dname}"), "-n", &dns, "-A", "-o", "json", "--cache-dir"])
        .arg(tmp.join("gc-cache-old"));
    hermetic(&mut gc_old, &tmp, &kubeconfig);
    let ours_old = measure(&server, &mut gc_old);
    server.set_drop_managed_fields(apiserver::DropManagedFields::Honour);

    // why-stuck --all -A: every terminating object (a metadata pass, then bodies where its
    // answers read them), cold discovery cache, against tree -A's requests and bytes
    let mut all = std::process::Command::new(bin);
    all.args(["why-stuck", "--all", "-A", "-o", "json", "--cache-dir"]).arg(tmp.join("gc-cache-all"));
    hermetic(&mut all, &tmp, &kubeconfig);
    let sweep = measure(&server, &mut all);
    let sweep_log = server.requests();

    // kubectl, the way people do it by hand: discover every listable type, then get them all
    let mut types = std::process::Command::new("kubectl");
    types.args(["api-resources", "--verbs=list", "-o", "name", "--cache-dir"]).arg(tmp.join("kubectl-cache"));
    hermetic(&mut types, &tmp, &kubeconfig);
    let t = Instant::now();
    server.clear_requests();
    let listed = types.output().expect("kubectl api-resources");
    let disc_reqs = server.requests().len();
    let disc_bytes = server.bytes_sent();
    let names: Vec<String> = String::from_utf8_lossy(&listed.stdout).lines().map(str::to_string).collect();
    let mut get = std::process::Command::new("kubectl");
    get.args(["get", &names.join(","), "-A", "-o", "json", "--cache-dir"]).arg(tmp.join("kubectl-cache"));
    hermetic(&mut get, &tmp, &kubeconfig);
    let mut theirs = measure(&server, &mut get);
    let mut their_accepts: Vec<String> =
        server.requests().iter().filter(|r| r.query.contains("limit=")).map(|r| r.accept.clone()).collect();
    their_accepts.sort();
    their_accepts.dedup();
    theirs.wall = t.elapsed();
    theirs.requests += disc_reqs;
    theirs.bytes += disc_bytes;

    println!(
        "  kubectl-gc tree deploy/{dname} -A      {}  {:>5} requests ({} discovery)  {:>7.1} MB",
        secs(ours.wall),
        ours.requests,
        ours.discovery_requests,
        ours.bytes as f64 / 1e6
    );
    println!(
        "    ({ours_protobuf} metadata lists answered in protobuf; the server honours drop=metadata.managedFields in JSON, as KEP-5958 specifies, alpha in 1.37)"
    );
    println!(
        "  … against a server without it         {}  {:>5} requests ({} discovery)  {:>7.1} MB",
        secs(ours_old.wall),
        ours_old.requests,
        ours_old.discovery_requests,
        ours_old.bytes as f64 / 1e6
    );
    println!(
        "  kubectl get <{} types> -A -o json  {}  {:>5} requests  {:>7.1} MB",
        names.len(),
        secs(theirs.wall),
        theirs.requests,
        theirs.bytes as f64 / 1e6
    );
    println!("    (kubectl's lists asked for: {})", their_accepts.join(" | "));
    println!(
        "  ratio: {:.1}× faster, {:.1}× fewer bytes (targets ≥ 5×, ≥ 3×); discovery in {} requests (target ≤ 3)",
        theirs.wall.as_secs_f64() / ours.wall.as_secs_f64(),
        theirs.bytes as f64 / ours.bytes.max(1) as f64,
        ours.discovery_requests
    );
    println!(
        "  ratio without the opt-out: {:.1}× faster, {:.1}× fewer bytes",
        theirs.wall.as_secs_f64() / ours_old.wall.as_secs_f64(),
        theirs.bytes as f64 / ours_old.bytes.max(1) as f64
    );

    println!(
        "  kubectl-gc why-stuck --all -A          {}  {:>5} requests ({} discovery)  {:>7.1} MB  ({} requests than tree -A, target ≤)",
        secs(sweep.wall),
        sweep.requests,
        sweep.discovery_requests,
        sweep.bytes as f64 / 1e6,
        if sweep.requests <= ours.requests { "no more" } else { "MORE" }
    );

    // why-stuck on a namespaced object: what the cheap path transfers
    let (plural, sns, sname) = lm.stuck.clone().expect("a stuck object");
    let mut ws = std::process::Command::new(bin);
    ws.args(["why-stuck", &format!("{plural}/{sname}"), "-n", &sns, "-o", "json", "--cache-dir"])
        .arg(tmp.join("gc-cache"));
    hermetic(&mut ws, &tmp, &kubeconfig);
    let cheap = measure(&server, &mut ws);
    println!(
        "  kubectl-gc why-stuck {plural}/{sname} -n {sns}  {}  {} requests  {:.1} MB = {:.1} % of kubectl's full listing, {:.1} % of kubectl-gc's own -A listing (target ≤ 10 %)",
        secs(cheap.wall),
        cheap.requests,
        cheap.bytes as f64 / 1e6,
        100.0 * cheap.bytes as f64 / theirs.bytes.max(1) as f64,
        100.0 * cheap.bytes as f64 / ours.bytes.max(1) as f64
    );

    // the same object with -A, and the capture of everything
    let mut wsa = std::process::Command::new(bin);
    wsa.args(["why-stuck", &format!("{plural}/{sname}"), "-n", &sns, "-A", "-o", "json", "--cache-dir"])
        .arg(tmp.join("gc-cache"));
    hermetic(&mut wsa, &tmp, &kubeconfig);
    let cheap_a = measure(&server, &mut wsa);
    let capture_file = tmp.join(format!("capture-{n}.json"));
    let _ = std::fs::remove_file(&capture_file);
    let mut snap = std::process::Command::new(bin);
    snap.args(["snapshot", "-A", "--file"]).arg(&capture_file).arg("--cache-dir").arg(tmp.join("gc-cache-snapshot"));
    hermetic(&mut snap, &tmp, &kubeconfig);
    let capture = measure(&server, &mut snap);
    let _ = std::fs::remove_file(&capture_file);

    println!(
        "\n  | command ({count} objects, {} being deleted) | wall | CPU | requests | bytes | peak memory |",
        lm.terminating
    );
    println!("  |---|---|---|---|---|---|");
    row(&format!("why-stuck {plural}/{sname} -n {sns}"), &cheap);
    row(&format!("why-stuck {plural}/{sname} -n {sns} -A"), &cheap_a);
    row("why-stuck --all -A", &sweep);
    row(&format!("tree deploy/{dname} -n {dns} -A"), &ours);
    row("snapshot -A", &capture);
    row(&format!("kubectl api-resources + get <{} types> -A -o json", names.len()), &theirs);
    breakdown("why-stuck --all -A", &sweep_log);
    breakdown(&format!("tree deploy/{dname} -n {dns} -A"), &tree_log);
    println!(
        "  the process holding the test API server: peak {:.0} MB resident over the run",
        status_kb("VmHWM") as f64 / 1e3
    );
    println!(
        "  --all -A against tree -A: {:.2}× the bytes (target ≤ 1.5×), {} against {} requests (target ≤); against snapshot -A: {:.2}× the bytes",
        sweep.bytes as f64 / ours.bytes.max(1) as f64,
        sweep.requests,
        ours.requests,
        sweep.bytes as f64 / capture.bytes.max(1) as f64
    );
}

/// What one request read, for the breakdown: verb, body, managedFields, resource, where.
fn class_of(r: &apiserver::Recorded) -> String {
    let segs: Vec<&str> = r.path.split('/').filter(|s| !s.is_empty()).collect();
    let rest: &[&str] = match segs.as_slice() {
        ["api", _, rest @ ..] => rest,
        ["apis", _, _, rest @ ..] => rest,
        _ => &[],
    };
    let (plural, named, scope) = match rest {
        [] => return "discovery".into(),
        ["namespaces", _, p] => (*p, false, "in a namespace"),
        ["namespaces", _, p, _] => (*p, true, "in a namespace"),
        [p] => (*p, false, "everywhere"),
        [p, _] => (*p, true, "cluster-scoped"),
        _ => return "other".into(),
    };
    let group = match segs.as_slice() {
        ["apis", g, ..] => format!(".{g}"),
        _ => String::new(),
    };
    let body = if r.wants_metadata() { "metadata" } else { "full" };
    let managed = if r.asks_drop_first() { "" } else { " +managedFields" };
    let verb = if named { "GET" } else { "LIST" };
    let mut selected = String::new();
    for (k, v) in form_urlencoded::parse(r.query.as_bytes()) {
        if k == "fieldSelector" || k == "labelSelector" {
            let field = v.split(['=', '!']).next().unwrap_or_default().to_string();
            selected = format!(" by {field}");
        }
    }
    format!("{verb} {body}{managed} {plural}{group} {scope}{selected}")
}

/// The bytes of a command's requests by what they read, largest first.
fn breakdown(what: &str, log: &[apiserver::Recorded]) {
    let mut by: std::collections::BTreeMap<String, (usize, u64)> = Default::default();
    for r in log {
        let e = by.entry(class_of(r)).or_default();
        e.0 += 1;
        e.1 += r.bytes;
    }
    let total: u64 = log.iter().map(|r| r.bytes).sum();
    let mut rows: Vec<_> = by.into_iter().collect();
    rows.sort_by(|a, b| b.1.1.cmp(&a.1.1).then(a.0.cmp(&b.0)));
    println!("\n  where {what}'s {:.2} MB go (requests, bytes, share):", total as f64 / 1e6);
    for (class, (n, b)) in rows.iter().take(25) {
        println!(
            "    {:>5}  {:>8.3} MB  {:>5.1} %  {class}",
            n,
            *b as f64 / 1e6,
            100.0 * *b as f64 / total.max(1) as f64
        );
    }
    if rows.len() > 25 {
        let (n, b) = rows[25..].iter().fold((0, 0), |(n, b), (_, (m, c))| (n + m, b + c));
        println!(
            "    {:>5}  {:>8.3} MB  {:>5.1} %  ({} other classes)",
            n,
            b as f64 / 1e6,
            100.0 * b as f64 / total.max(1) as f64,
            rows.len() - 25
        );
    }
}

/// A figure of this process's `/proc/self/status` (kB).
fn status_kb(key: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            let line = s.lines().find(|l| l.starts_with(key))?.to_string();
            line.split_whitespace().nth(1)?.parse().ok()
        })
        .unwrap_or(0)
}

fn machine() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .map(|l| l.split(':').nth(1).unwrap_or("").trim().to_string())
        })
        .unwrap_or_else(|| std::env::consts::ARCH.to_string())
}

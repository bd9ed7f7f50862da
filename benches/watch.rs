//! `cargo bench --bench watch -- [--minutes 10] [--changes 100] [--objects 1000] [--nodes 300]
//! [--every 2] [--bin PATH]`: what following a deletion costs the API server, `why-stuck
//! --watch` against re-running `why-stuck` every 2 s (issues 22 and 42: at least 20× fewer
//! bytes), and what it costs the watch itself: its CPU (user + system) for the first answer and
//! per change after it (issue 45). `--bin` measures another build of the plugin (an earlier
//! commit's) with the same bench.
//!
//! A namespace of 1,000 objects (site-basics' control plane and operator, its Site `labs/alpha`
//! with 97 dependents, and ConfigMaps, Secrets, Services and Pods beside it, with the
//! managedFields, labels and last-applied annotations objects carry), in a cluster of 300 nodes
//! whose kubelets heartbeat as they do by default (each renews its Lease in kube-node-lease
//! every 10 s, `nodeLeaseDurationSeconds` 40 / 4, and reports its Node's status every 5 min,
//! `nodeStatusReportFrequency`: 30 Lease and one Node updates a second, on both servers), goes
//! through 100 changes,
//! evenly spread over 10 minutes of real time: the Site's foreground deletion starts, its
//! dependents go one by one, the GC's finalizer is removed, the Site goes. Two test API servers
//! on 127.0.0.1 get the same changes at the same moments; against one, `kubectl-gc why-stuck
//! site/alpha -n labs --watch -o json` runs from start to end (it ends by itself when the Site
//! is gone); against the other, `kubectl-gc why-stuck site/alpha -n labs -o json` is run every
//! `--every` seconds, sharing one HOME (so its discovery cache, as a loop in a shell would).
//! The servers count requests and response bytes (list and GET bodies, and every watch event
//! line, bookmarks included). They send bookmarks every 60 s and end a watch at the
//! `timeoutSeconds` it asks, as kube-apiserver's watch cache does (`defaultBookmarkFrequency`,
//! staging/src/k8s.io/apiserver/pkg/storage/cacher). Time is not compressed: stream resumes
//! and bookmarks depend on it. `--minutes 1 --changes 10` is a quick look, not the row.
//!
//! The counts do not depend on how the binary was built: `cargo bench --profile dev --bench
//! watch` gives the same row, sooner.

#[path = "../tests/support/apiserver/mod.rs"]
mod apiserver;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use apiserver::watch::Action;
use apiserver::{ApiServer, Options};

/// The fixture's clock: its operator's lease is fresh then.
const NOW: &str = "2026-11-29T12:00:00Z";
const NS: &str = "labs";

struct Args {
    minutes: f64,
    changes: usize,
    objects: usize,
    nodes: usize,
    every: f64,
    bin: Option<PathBuf>,
}

fn parse_args() -> Args {
    let mut a = Args { minutes: 10.0, changes: 100, objects: 1000, nodes: 300, every: 2.0, bin: None };
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let mut i = 0;
    while i < argv.len() {
        let value = || argv.get(i + 1).and_then(|v| v.parse::<f64>().ok()).expect("a number");
        match argv[i].as_str() {
            "--minutes" => a.minutes = value(),
            "--changes" => a.changes = value() as usize,
            "--objects" => a.objects = value() as usize,
            "--nodes" => a.nodes = value() as usize,
            "--every" => a.every = value(),
            "--bin" => a.bin = Some(PathBuf::from(&argv[i + 1])),
            _ => {
                i += 1; // cargo bench passes --bench
                continue;
            }
        }
        i += 2;
    }
    assert!(a.changes >= 4, "at least: the deletion starts, a dependent goes, the finalizer, the Site");
    a
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn uid(n: usize) -> String {
    format!("7a1c{n:04x}-0000-4000-8000-{n:012x}")
}

/// One managedFields entry as a client's apply leaves it.
fn managed(manager: &str, fields: Value) -> Value {
    json!([{"manager": manager, "operation": "Apply", "apiVersion": "v1", "time": "2026-11-01T00:00:00Z",
            "fieldsType": "FieldsV1", "fieldsV1": fields}])
}

/// Metadata as objects in a namespace carry it: labels, an applier's managedFields, and on
/// every other one kubectl's last-applied annotation.
fn metadata(n: usize, name: &str, owner: Option<&Value>) -> Value {
    let labels = json!({"app.kubernetes.io/name": "shop", "app.kubernetes.io/instance": format!("shop-{}", n % 7),
                        "app.kubernetes.io/part-of": "labs", "team": "platform"});
    let mut m = json!({"name": name, "namespace": NS, "uid": uid(n), "resourceVersion": "1",
                       "creationTimestamp": "2026-11-01T00:00:00Z", "labels": labels,
                       "managedFields": managed("argocd-controller", json!({"f:metadata": {"f:labels": {
                           "f:app.kubernetes.io/name": {}, "f:app.kubernetes.io/instance": {},
                           "f:app.kubernetes.io/part-of": {}, "f:team": {}}}, "f:data": {".": {}, "f:config.yaml": {}}}))});
    if n.is_multiple_of(2) {
        let applied = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": NS,
                             "labels": m["labels"].clone()}, "data": {"config.yaml": "x".repeat(300)}});
        m["annotations"] = json!({"kubectl.kubernetes.io/last-applied-configuration": applied.to_string()});
    }
    if let Some(o) = owner {
        m["ownerReferences"] = json!([{"apiVersion": o["apiVersion"], "kind": o["kind"], "name": o["metadata"]["name"],
                                       "uid": o["metadata"]["uid"], "controller": true, "blockOwnerDeletion": true}]);
    }
    m
}

/// Pod `n`, on one of `nodes` nodes.
fn pod(n: usize, owner: &Value, nodes: usize) -> Value {
    let name = format!("web-59d7f45ffb-{n:05}");
    let conditions: Vec<Value> =
        ["PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady", "PodScheduled"]
            .iter()
            .map(|t| json!({"type": t, "status": "True", "lastTransitionTime": "2026-11-01T00:00:10Z"}))
            .collect();
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": metadata(n, &name, Some(owner)),
        "spec": {"nodeName": format!("worker-{}", n % nodes.max(1)), "serviceAccountName": "default", "restartPolicy": "Always",
            "containers": [{"name": "web", "image": "registry.example/shop/web:1.42.0",
                "ports": [{"containerPort": 8080, "protocol": "TCP"}],
                "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}, "limits": {"memory": "256Mi"}},
                "env": [{"name": "CONFIG", "value": "/etc/shop/config.yaml"}],
                "volumeMounts": [{"name": "config", "mountPath": "/etc/shop"},
                                 {"name": "kube-api-access", "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount", "readOnly": true}],
                "readinessProbe": {"httpGet": {"path": "/healthz", "port": 8080}, "periodSeconds": 10}}],
            "volumes": [{"name": "config", "configMap": {"name": "web-config"}},
                        {"name": "kube-api-access", "projected": {"sources": [{"serviceAccountToken": {"path": "token", "expirationSeconds": 3607}}]}}],
            "tolerations": [{"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}]},
        "status": {"phase": "Running", "podIP": format!("10.0.{}.{}", n / 250, n % 250), "hostIP": "10.1.0.11",
            "startTime": "2026-11-01T00:00:05Z", "qosClass": "Burstable",
            "conditions": conditions,
            "containerStatuses": [{"name": "web", "ready": true, "restartCount": 0, "started": true,
                "image": "registry.example/shop/web:1.42.0", "imageID": "registry.example/shop/web@sha256:".to_string() + &"ab".repeat(32),
                "containerID": format!("containerd://{}", "cd".repeat(32)),
                "state": {"running": {"startedAt": "2026-11-01T00:00:08Z"}}}]}})
}

/// Node `i` as its kubelet last reported it (`beat`: which report), a cloud node's labels,
/// addresses, capacity and images.
fn node(i: usize, beat: usize) -> Value {
    let name = format!("worker-{i}");
    let at = format!("2026-11-29T11:{:02}:{:02}Z", 55 + beat / 60 % 5, beat % 60);
    let conditions: Vec<Value> = [
        ("MemoryPressure", "False", "KubeletHasSufficientMemory"),
        ("DiskPressure", "False", "KubeletHasNoDiskPressure"),
        ("PIDPressure", "False", "KubeletHasSufficientPID"),
        ("Ready", "True", "KubeletReady"),
    ]
    .iter()
    .map(|(t, s, r)| {
        json!({"type": t, "status": s, "reason": r, "message": format!("kubelet reports {r}"),
                            "lastHeartbeatTime": at, "lastTransitionTime": "2026-11-01T00:00:00Z"})
    })
    .collect();
    let images: Vec<Value> = (0..8)
        .map(|k| {
            json!({"names": [format!("registry.example/base/image-{k}@sha256:{}", "ef".repeat(32)),
                                  format!("registry.example/base/image-{k}:1.{k}.0")], "sizeBytes": 50_000_000 + k})
        })
        .collect();
    json!({"apiVersion": "v1", "kind": "Node",
        "metadata": {"name": name, "uid": format!("0de0{i:04x}-0000-4000-8000-{i:012x}"),
            "creationTimestamp": "2026-11-01T00:00:00Z",
            "labels": {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
                       "node.kubernetes.io/instance-type": "m6i.xlarge", "topology.kubernetes.io/zone": "eu-west-1a"}},
        "spec": {"podCIDR": format!("10.244.{}.0/24", i % 250), "providerID": format!("aws:///eu-west-1a/i-{i:017x}")},
        "status": {"conditions": conditions,
            "addresses": [{"type": "InternalIP", "address": format!("10.1.{}.{}", i / 250, i % 250)},
                          {"type": "Hostname", "address": name}],
            "capacity": {"cpu": "4", "memory": "16064496Ki", "pods": "58", "ephemeral-storage": "83873772Ki"},
            "allocatable": {"cpu": "3920m", "memory": "15047664Ki", "pods": "58", "ephemeral-storage": "76224326324"},
            "nodeInfo": {"kubeletVersion": "v1.34.2", "containerRuntimeVersion": "containerd://2.1.4",
                         "kernelVersion": "6.1.0", "osImage": "Bottlerocket OS 1.40.0", "architecture": "amd64",
                         "operatingSystem": "linux"},
            "images": images}})
}

/// Node `i`'s heartbeat (`beat`: which renewal), owned by its Node as the kubelet makes it.
fn heartbeat(i: usize, beat: usize) -> Value {
    let name = format!("worker-{i}");
    json!({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
        "metadata": {"name": name, "namespace": "kube-node-lease", "uid": format!("1ea5{i:04x}-0000-4000-8000-{i:012x}"),
            "creationTimestamp": "2026-11-01T00:00:00Z",
            "ownerReferences": [{"apiVersion": "v1", "kind": "Node", "name": name,
                                 "uid": format!("0de0{i:04x}-0000-4000-8000-{i:012x}")}]},
        "spec": {"holderIdentity": name, "leaseDurationSeconds": 40,
                 "renewTime": format!("2026-11-29T11:59:{:02}.{:06}Z", 50 + beat % 10, beat % 1_000_000)}})
}

/// The cluster: site-basics, `nodes` nodes with their heartbeats, and `objects` in `labs` of
/// which `dependents` are the Site's.
fn cluster(objects: usize, dependents: usize, nodes: usize) -> (Value, Vec<Value>, Value) {
    let path = root().join("tests/fixtures/site-basics/snapshot.json");
    let mut v: Value = serde_json::from_str(&std::fs::read_to_string(path).expect("site-basics")).unwrap();
    let items = v["items"].as_array_mut().unwrap();
    let find = |items: &[Value], kind: &str, name: &str| {
        items.iter().find(|o| o["kind"] == kind && o["metadata"]["name"] == name).cloned().unwrap()
    };
    let site = find(items, "Site", "alpha");
    let rs = find(items, "ReplicaSet", "web-59d7f45ffb");
    let mut owned: Vec<Value> = ["alpha-config", "alpha-scripts"]
        .iter()
        .map(|n| find(items, "ConfigMap", n))
        .chain([find(items, "Service", "alpha"), find(items, "Secret", "alpha-credentials")])
        .collect();
    items.extend((0..nodes).flat_map(|i| [node(i, 0), heartbeat(i, 0)]));
    let in_ns = items.iter().filter(|o| o["metadata"]["namespace"] == NS).count();
    let mut n = 0;
    while owned.len() < dependents {
        n += 1;
        let name = format!("alpha-shard-{n:03}");
        let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": metadata(n, &name, Some(&site)),
                        "data": {"shard": n.to_string()}});
        items.push(cm.clone());
        owned.push(cm);
    }
    let fill = objects.saturating_sub(in_ns + n);
    for i in 0..fill {
        n += 1;
        let o = match i % 10 {
            0..=3 => json!({"apiVersion": "v1", "kind": "ConfigMap",
                            "metadata": metadata(n, &format!("shop-config-{n:04}"), None),
                            "data": {"config.yaml": "key: value\n".repeat(20)}}),
            4 | 5 => json!({"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
                            "metadata": metadata(n, &format!("shop-secret-{n:04}"), None),
                            "data": {"password": "c2VjcmV0"}}),
            6 => json!({"apiVersion": "v1", "kind": "Service",
                        "metadata": metadata(n, &format!("shop-svc-{n:04}"), None),
                        "spec": {"type": "ClusterIP", "clusterIP": format!("10.96.{}.{}", n / 250, n % 250),
                                 "ports": [{"port": 80, "targetPort": 8080, "protocol": "TCP"}],
                                 "selector": {"app.kubernetes.io/name": "shop"}}}),
            _ => pod(n, &rs, nodes),
        };
        items.push(o);
    }
    (v, owned, site)
}

/// The Site being deleted (foreground) with these finalizers.
fn deleting(site: &Value, finalizers: &[&str]) -> Value {
    let mut s = site.clone();
    s["metadata"]["deletionTimestamp"] = "2026-11-29T11:59:00Z".into();
    s["metadata"]["finalizers"] = finalizers.iter().map(|f| Value::from(*f)).collect();
    s
}

fn kubeconfig(dir: &Path, server: &str) -> PathBuf {
    let path = dir.join("kubeconfig");
    let text = format!(
        "apiVersion: v1\nkind: Config\ncurrent-context: bench\nclusters:\n- name: bench\n  cluster:\n    server: {server}\n\
         contexts:\n- name: bench\n  context:\n    cluster: bench\n    user: bench\nusers:\n- name: bench\n  user:\n    token: bench\n"
    );
    std::fs::write(&path, text).unwrap();
    path
}

fn gc(bin: &Path, dir: &Path, server: &ApiServer, args: &[&str]) -> Command {
    let home = dir.join("home");
    std::fs::create_dir_all(&home).unwrap();
    let mut c = Command::new(bin);
    c.env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", &home)
        .env("KUBECONFIG", kubeconfig(dir, &server.url()))
        .env("NO_COLOR", "1")
        .args(["--now", NOW])
        .args(args);
    c
}

/// What a server was asked and sent.
struct Cost {
    lists: usize,
    watches: usize,
    bytes: u64,
}

fn cost(server: &ApiServer) -> Cost {
    let log = server.requests();
    let watches = log.iter().filter(|r| r.is_watch()).count();
    Cost { lists: log.len() - watches, watches, bytes: server.bytes_sent() }
}

/// CPU (user + system) a running process has used so far (`/proc/<pid>/stat`).
fn cpu_so_far(pid: u32) -> Duration {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("/proc/<pid>/stat");
    // the fields after the command's parenthesis: utime and stime are the 12th and 13th
    let fields: Vec<&str> = stat[stat.rfind(')').expect("(comm)") + 2..].split(' ').collect();
    let ticks: u64 = fields[11].parse::<u64>().expect("utime") + fields[12].parse::<u64>().expect("stime");
    // SAFETY: sysconf has no preconditions.
    let per_second = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as u64;
    Duration::from_secs_f64(ticks as f64 / per_second as f64)
}

/// The exit code and CPU (user + system, wait4's rusage) of a child once it has ended.
fn reaped(pid: u32) -> Option<(i32, Duration)> {
    let mut status = 0;
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: waiting for our own child, with valid out-pointers.
    let r = unsafe { libc::wait4(pid as i32, &mut status, libc::WNOHANG, &mut usage) };
    if r == 0 {
        return None;
    }
    assert_eq!(r, pid as i32, "wait4");
    let tv = |t: libc::timeval| Duration::from_secs(t.tv_sec as u64) + Duration::from_micros(t.tv_usec as u64);
    Some((libc::WEXITSTATUS(status), tv(usage.ru_utime) + tv(usage.ru_stime)))
}

/// The kubelets of `nodes` nodes, until `done`: each renews its heartbeat every 10 s and
/// reports its Node's status every 5 min (30 renewals to one report), spread evenly, on every
/// server at once. Returns how many heartbeats were renewed and statuses reported.
fn kubelets(
    nodes: usize,
    servers: &[Arc<ApiServer>],
    done: Arc<AtomicBool>,
) -> std::thread::JoinHandle<(usize, usize)> {
    let servers = servers.to_vec();
    std::thread::spawn(move || {
        if nodes == 0 {
            return (0, 0);
        }
        let every = Duration::from_secs(10) / nodes as u32;
        let start = Instant::now();
        let (mut beat, mut reports) = (0usize, 0usize);
        while !done.load(Ordering::SeqCst) {
            let (i, round) = (beat % nodes, beat / nodes);
            // each node's report at its own turn, so that about one comes a second
            let report = (round + i) % 30 == 29;
            for s in &servers {
                s.apply(Action::Put(heartbeat(i, round + 1)));
                if report {
                    s.apply(Action::Put(node(i, (round + i) / 30 + 1)));
                }
            }
            reports += usize::from(report);
            beat += 1;
            if let Some(wait) = (every * beat as u32).checked_sub(start.elapsed()) {
                std::thread::sleep(wait);
            }
        }
        (beat, reports)
    })
}

fn mb(b: u64) -> String {
    format!("{:.2} MB", b as f64 / 1e6)
}

fn main() {
    let a = parse_args();
    let bin = a.bin.clone().unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_kubectl-gc")));
    let dir = root().join("target/bench/watch");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    // the changes: the deletion starts, dependents go, the GC's finalizer goes, the Site goes
    let dependents = a.changes - 3;
    let (snapshot, owned, site) = cluster(a.objects, dependents, a.nodes);
    let file = dir.join("cluster.json");
    std::fs::write(&file, serde_json::to_vec(&snapshot).unwrap()).unwrap();
    let in_ns = snapshot["items"].as_array().unwrap().iter().filter(|o| o["metadata"]["namespace"] == NS).count();
    let mut changes = vec![Action::Put(deleting(&site, &["foregroundDeletion", "own.labhub.io/cleanup"]))];
    changes.extend(owned.iter().map(Action::remove));
    changes.push(Action::Put(deleting(&site, &["own.labhub.io/cleanup"])));
    changes.push(Action::remove(&deleting(&site, &[])));
    assert_eq!(changes.len(), a.changes);
    let total = Duration::from_secs_f64(a.minutes * 60.0);
    let gap = total / a.changes as u32;
    println!("binary: {}", bin.display());
    println!(
        "namespace {NS}: {in_ns} objects, in a cluster of {} nodes heartbeating ({} bytes as JSON in all), \
         {} changes, one every {:.1}s over {:.1} min; re-run every {}s",
        a.nodes,
        std::fs::metadata(&file).unwrap().len(),
        a.changes,
        gap.as_secs_f64(),
        a.minutes,
        a.every
    );

    let options = || Options { bookmark_every: Duration::from_secs(60), ..Options::default() };
    let watched = Arc::new(ApiServer::start_with(&file, options(), 0));
    let polled = Arc::new(ApiServer::start_with(&file, options(), 0));
    let (wdir, pdir) = (dir.join("watch"), dir.join("poll"));
    std::fs::create_dir_all(&wdir).unwrap();
    std::fs::create_dir_all(&pdir).unwrap();

    let start = Instant::now();
    let out = std::fs::File::create(dir.join("watch.jsonl")).unwrap();
    let watch = gc(&bin, &wdir, &watched, &["why-stuck", "site/alpha", "-n", NS, "--watch", "-o", "json"])
        .stdout(out)
        .stderr(Stdio::inherit())
        .spawn()
        .expect("kubectl-gc --watch");

    let done = Arc::new(AtomicBool::new(false));
    let poller = {
        let (done, bin, pdir) = (done.clone(), bin.clone(), pdir.clone());
        let url = polled.url();
        let every = Duration::from_secs_f64(a.every);
        std::thread::spawn(move || {
            let mut runs = 0usize;
            let mut slow = 0usize;
            let mut next = Instant::now();
            while !done.load(Ordering::SeqCst) {
                let t = Instant::now();
                let mut c = Command::new(&bin);
                c.env_clear()
                    .env("PATH", std::env::var_os("PATH").unwrap_or_default())
                    .env("HOME", pdir.join("home"))
                    .env("KUBECONFIG", kubeconfig(&pdir, &url))
                    .env("NO_COLOR", "1")
                    .args(["--now", NOW, "why-stuck", "site/alpha", "-n", NS, "-o", "json"])
                    .stdout(Stdio::null())
                    .stderr(Stdio::null());
                let status = c.status().expect("kubectl-gc");
                // 0 or 2 while the Site is there; 1 once it is gone (not found): a loop in a
                // shell would stop then, and so does this one
                if status.code() == Some(1) {
                    break;
                }
                runs += 1;
                if t.elapsed() > every {
                    slow += 1;
                }
                next += every;
                if let Some(wait) = next.checked_duration_since(Instant::now()) {
                    std::thread::sleep(wait);
                }
            }
            (runs, slow)
        })
    };

    let kubelets = kubelets(a.nodes, &[watched.clone(), polled.clone()], done.clone());

    let pid = watch.id();
    // reaped below by wait4, for its CPU
    std::mem::forget(watch);
    let mut first_answer = Duration::ZERO;
    for (i, change) in changes.into_iter().enumerate() {
        let at = gap * (i as u32 + 1);
        if let Some(wait) = at.checked_sub(start.elapsed()) {
            std::thread::sleep(wait);
        }
        if i == 0 {
            // the first answer is written by now (it takes a fraction of the gap)
            first_answer = cpu_so_far(pid);
        }
        polled.apply(change.clone());
        watched.apply(change);
    }
    let (status, cpu) = loop {
        if let Some(ended) = reaped(pid) {
            break ended;
        }
        assert!(start.elapsed() < total + Duration::from_secs(60), "the watch did not end after the Site went");
        std::thread::sleep(Duration::from_millis(50));
    };
    let watch_took = start.elapsed();
    done.store(true, Ordering::SeqCst);
    let (runs, slow) = poller.join().unwrap();
    let (beats, reports) = kubelets.join().unwrap();
    assert_eq!(status, 0, "the watch ends 0 when the Site is gone");
    let lines = std::fs::read_to_string(dir.join("watch.jsonl")).unwrap();
    let told: usize = lines
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).expect("a JSON line")["change"].as_array().map_or(0, Vec::len))
        .sum();

    let w = cost(&watched);
    let p = cost(&polled);
    println!("\n| {:<44} | {:>8} | {:>8} | {:>10} |", "", "requests", "watches", "bytes");
    println!("|{}|{}|{}|{}|", "-".repeat(46), "-".repeat(10), "-".repeat(10), "-".repeat(12));
    println!(
        "| {:<44} | {:>8} | {:>8} | {:>10} |",
        format!("why-stuck --watch ({:.1} min, {} answers)", watch_took.as_secs_f64() / 60.0, lines.lines().count()),
        w.lists + w.watches,
        w.watches,
        mb(w.bytes)
    );
    println!(
        "| {:<44} | {:>8} | {:>8} | {:>10} |",
        format!("why-stuck every {}s ({runs} runs, {slow} over {}s)", a.every, a.every),
        p.lists + p.watches,
        p.watches,
        mb(p.bytes)
    );
    println!("\nthe {} kubelets renewed {beats} heartbeats and reported {reports} Node statuses", a.nodes);
    println!(
        "the watch told {told} changes; {:.1}× fewer bytes, {:.1}× fewer requests (target: ≥ 20× fewer bytes)",
        p.bytes as f64 / w.bytes.max(1) as f64,
        (p.lists + p.watches) as f64 / (w.lists + w.watches).max(1) as f64
    );
    let after = cpu.saturating_sub(first_answer);
    println!(
        "the watch's CPU (user + system): {:.2} s in all, {:.2} s to its first answer, {:.1} ms per change after it ({} changes)",
        cpu.as_secs_f64(),
        first_answer.as_secs_f64(),
        after.as_secs_f64() * 1e3 / a.changes as f64,
        a.changes
    );
}

//! A deterministic synthetic cluster, for benchmarks and scale tests.
//!
//! `cargo run --release --example synth -- --objects 100000 --out cluster.json` writes a
//! snapshot (a `List` with `capturedAt`) shaped like a real cluster:
//! - a control plane (kube-controller-manager lease, nodes) and `--crds` custom types in
//!   `--crd-groups` groups (Crossplane-like clusters have 300+), each with its operator
//!   (namespace, ServiceAccount, ClusterRole + binding, Deployment → ReplicaSet → Pod, leader
//!   lease);
//! - `--namespaces` application namespaces holding Deployments → ReplicaSets → Pods,
//!   StatefulSets with PVCs, custom resources owning ConfigMaps, Secrets and Services, and a
//!   deep owner chain;
//! - a sprinkling of trouble: custom resources stuck deleting on a finalizer whose operator is
//!   scaled to zero, owner references to recreated owners, cross-namespace references;
//! - with `--terminating 1%`, that share of the objects being deleted (for `why-stuck --all`):
//!   custom resources, claims still mounted, Deployments deleted in the foreground.
//!
//! Every object carries realistic `managedFields` unless `--metadata-only-lean` is given;
//! `--full` adds spec and status bodies to every object (what `kubectl get -o json` returns).
//! The same flags and `--seed` always give the same bytes.

#![allow(dead_code)]

use std::io::Write;

use serde_json::{Value, json};

#[derive(Clone, Debug)]
pub struct Options {
    pub objects: usize,
    pub namespaces: usize,
    pub crds: usize,
    pub crd_groups: usize,
    pub seed: u64,
    pub full: bool,
    pub managed_fields: bool,
    pub chain_depth: usize,
    /// Percent of all objects being deleted (`--terminating 1%`): custom resources (stuck where
    /// their operator is scaled to zero, in progress elsewhere), claims still mounted by their
    /// StatefulSet's running pod (stuck), Deployments deleted in the foreground (in progress).
    /// 0 (the default) leaves the cluster as it always was.
    pub terminating_percent: f64,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            objects: 10_000,
            namespaces: 100,
            crds: 300,
            crd_groups: 30,
            seed: 1,
            full: false,
            managed_fields: true,
            chain_depth: 1000,
            terminating_percent: 0.0,
        }
    }
}

impl Options {
    pub fn from_args(args: &[String]) -> Result<(Options, Option<String>), String> {
        let mut o = Options::default();
        let mut out = None;
        let mut it = args.iter();
        while let Some(a) = it.next() {
            let mut val = |name: &str| it.next().cloned().ok_or(format!("{name} needs a value"));
            match a.as_str() {
                "--objects" => o.objects = parse_size(&val(a)?)?,
                "--namespaces" => o.namespaces = val(a)?.parse().map_err(|e| format!("{e}"))?,
                "--crds" => o.crds = val(a)?.parse().map_err(|e| format!("{e}"))?,
                "--crd-groups" => o.crd_groups = val(a)?.parse().map_err(|e| format!("{e}"))?,
                "--seed" => o.seed = val(a)?.parse().map_err(|e| format!("{e}"))?,
                "--chain-depth" => o.chain_depth = val(a)?.parse().map_err(|e| format!("{e}"))?,
                "--terminating" => {
                    let v = val(a)?;
                    o.terminating_percent =
                        v.trim_end_matches('%').parse().map_err(|e| format!("--terminating {v}: {e}"))?
                }
                "--full" => o.full = true,
                "--metadata-only-lean" => o.managed_fields = false,
                "--out" | "-o" => out = Some(val(a)?),
                other => return Err(format!("unknown flag {other}")),
            }
        }
        Ok((o, out))
    }
}

/// "100k", "1M", "10000".
pub fn parse_size(s: &str) -> Result<usize, String> {
    let (num, mul) = match s.chars().last() {
        Some('k' | 'K') => (&s[..s.len() - 1], 1_000),
        Some('m' | 'M') => (&s[..s.len() - 1], 1_000_000),
        _ => (s, 1),
    };
    num.parse::<usize>().map(|n| n * mul).map_err(|e| format!("{s}: {e}"))
}

/// xorshift64*: small, deterministic, good enough for shapes.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
    fn hex(&mut self, n: usize) -> String {
        (0..n).map(|_| char::from_digit((self.next() % 16) as u32, 16).unwrap()).collect()
    }
}

/// Names of the interesting objects the benchmark asks about.
#[derive(Clone, Debug, Default)]
pub struct Landmarks {
    /// A custom resource stuck deleting: (plural.group, namespace, name).
    pub stuck: Option<(String, String, String)>,
    /// A namespace to plan the deletion of.
    pub namespace: Option<String>,
    /// A Deployment: (namespace, name).
    pub deployment: Option<(String, String)>,
    /// How many objects `--terminating` marked as being deleted.
    pub terminating: usize,
}

pub const NOW: &str = "2026-11-29T12:00:00Z";

pub struct Writer<W: Write> {
    w: W,
    first: bool,
    count: usize,
    /// Objects marked as being deleted by `--terminating`.
    terminating: usize,
    rng: Rng,
    opts: Options,
}

impl<W: Write> Writer<W> {
    fn uid(&mut self) -> String {
        let h = self.rng.hex(32);
        format!("{}-{}-{}-{}-{}", &h[0..8], &h[8..12], &h[12..16], &h[16..20], &h[20..32])
    }

    fn emit(&mut self, mut o: Value) -> std::io::Result<()> {
        let kind = o["kind"].as_str().unwrap_or("").to_string();
        if self.opts.terminating_percent > 0.0 {
            self.maybe_terminating(&kind, &mut o);
        }
        if self.opts.full {
            annotate(&kind, &mut o);
        }
        if self.opts.managed_fields {
            let manager = o["metadata"]["labels"]["app.kubernetes.io/managed-by"]
                .as_str()
                .unwrap_or("kube-controller-manager")
                .to_string();
            o["metadata"]["managedFields"] = if self.opts.full {
                Value::Array(managed_fields(&kind, &o))
            } else {
                uniform_managed_fields(&manager, &o)
            };
            let api_version = o["apiVersion"].clone();
            if let Some(fins) = o["metadata"]["finalizers"].as_array().cloned() {
                let mut set = serde_json::Map::new();
                set.insert(".".into(), json!({}));
                for f in fins {
                    set.insert(format!("v:{}", f), json!({}));
                }
                o["metadata"]["managedFields"].as_array_mut().unwrap().push(
                    json!({"manager": manager, "operation": "Update", "apiVersion": api_version, "time": "2026-11-21T10:00:00Z", "fieldsType": "FieldsV1", "fieldsV1": {"f:metadata": {"f:finalizers": set}}}),
                );
            }
        }
        if self.opts.full {
            full_body(&kind, &mut o, self.count);
        } else {
            let keep = matches!(
                kind.as_str(),
                "Namespace"
                    | "Node"
                    | "Pod"
                    | "Lease"
                    | "CustomResourceDefinition"
                    | "Deployment"
                    | "ReplicaSet"
                    | "StatefulSet"
                    | "ClusterRole"
                    | "ClusterRoleBinding"
                    | "PersistentVolumeClaim"
            );
            if !keep {
                let m = o.as_object_mut().unwrap();
                m.retain(|k, _| k == "apiVersion" || k == "kind" || k == "metadata");
            }
        }
        if !self.first {
            self.w.write_all(b",\n")?;
        }
        self.first = false;
        serde_json::to_writer(&mut self.w, &o)?;
        self.count += 1;
        Ok(())
    }
}

impl<W: Write> Writer<W> {
    /// `--terminating`: marks the next object that can carry a deletion whenever fewer than
    /// the asked share of the objects so far are being deleted, so they are spread evenly
    /// over the kinds and namespaces; deletion times spread over the last 12 hours.
    fn maybe_terminating(&mut self, kind: &str, o: &mut Value) {
        let custom = o["apiVersion"].as_str().unwrap_or("").contains(".synth.example.com/");
        let m = &mut o["metadata"];
        if m.get("deletionTimestamp").is_some() || m.get("namespace").is_none() {
            return;
        }
        let eligible = match kind {
            "Deployment" => !m["name"].as_str().unwrap_or("").starts_with("operator"),
            "PersistentVolumeClaim" => true,
            _ => custom,
        };
        let due = (self.terminating as f64) < (self.count + 1) as f64 * self.opts.terminating_percent / 100.0;
        if !eligible || !due {
            return;
        }
        if kind == "Deployment" {
            m["finalizers"] = json!(["foregroundDeletion"]);
        }
        let minutes = (self.terminating * 7919) % 720;
        m["deletionTimestamp"] = json!(format!("2026-11-29T{:02}:{:02}:00Z", minutes / 60, minutes % 60));
        m["deletionGracePeriodSeconds"] = json!(0);
        self.terminating += 1;
    }
}

fn meta(name: &str, ns: Option<&str>, uid: &str, created: &str) -> Value {
    let mut m = json!({"name": name, "uid": uid, "resourceVersion": "1", "creationTimestamp": created,
                       "labels": {"app": name, "app.kubernetes.io/managed-by": "synth"}});
    if let Some(ns) = ns {
        m["namespace"] = json!(ns);
    }
    m
}

fn owner(api_version: &str, kind: &str, name: &str, uid: &str) -> Value {
    json!({"apiVersion": api_version, "kind": kind, "name": name, "uid": uid, "controller": true, "blockOwnerDeletion": true})
}

/// Writes the cluster; returns the number of objects and the landmarks.
pub fn generate<W: Write>(opts: &Options, w: W) -> std::io::Result<(usize, Landmarks)> {
    let mut s = Writer {
        w,
        first: true,
        count: 0,
        terminating: 0,
        rng: Rng(opts.seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1),
        opts: opts.clone(),
    };
    let mut lm = Landmarks::default();
    s.w.write_all(
        format!("{{\"apiVersion\":\"v1\",\"kind\":\"List\",\"metadata\":{{}},\"capturedAt\":\"{NOW}\",\"items\":[\n")
            .as_bytes(),
    )?;
    let created = "2026-11-20T10:00:00Z";
    // control plane
    for ns in ["kube-system", "default"] {
        let uid = s.uid();
        s.emit(json!({"apiVersion":"v1","kind":"Namespace","metadata":meta(ns,None,&uid,created),"spec":{"finalizers":["kubernetes"]},"status":{"phase":"Active"}}))?;
    }
    let uid = s.uid();
    s.emit(json!({"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":meta("kube-controller-manager",Some("kube-system"),&uid,created),
        "spec":{"holderIdentity":"cp-1_abc","leaseDurationSeconds":15,"renewTime":"2026-11-29T11:59:55.000000Z"}}))?;
    for i in 0..(opts.objects / 2000).clamp(1, 500) {
        let uid = s.uid();
        s.emit(json!({"apiVersion":"v1","kind":"Node","metadata":meta(&format!("node-{i}"),None,&uid,created),"status":{"conditions":[{"type":"Ready","status":"True"}]}}))?;
    }
    // custom types and their operators
    let mut kinds = Vec::new();
    for t in 0..opts.crds {
        let group = format!("g{}.synth.example.com", t % opts.crd_groups.max(1));
        let kind = format!("Widget{t}");
        let plural = format!("widget{t}s");
        let uid = s.uid();
        s.emit(json!({"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":meta(&format!("{plural}.{group}"),None,&uid,created),
            "spec":{"group":group,"scope":"Namespaced","names":{"kind":kind,"plural":plural,"singular":kind.to_lowercase(),"listKind":format!("{kind}List")},
                    "versions":[{"name":"v1","served":true,"storage":true}]},
            "status":{"conditions":[{"type":"Established","status":"True"}]}}))?;
        kinds.push((group, kind, plural));
    }
    for g in 0..opts.crd_groups.min(opts.crds) {
        let group = format!("g{g}.synth.example.com");
        let ns = format!("operator-{g}");
        let down = g == 0; // the operator of group 0 is scaled to zero: its finalizers are stuck
        let nsuid = s.uid();
        s.emit(json!({"apiVersion":"v1","kind":"Namespace","metadata":meta(&ns,None,&nsuid,created),"spec":{"finalizers":["kubernetes"]},"status":{"phase":"Active"}}))?;
        let sa = s.uid();
        s.emit(json!({"apiVersion":"v1","kind":"ServiceAccount","metadata":meta("operator",Some(&ns),&sa,created)}))?;
        let cr = s.uid();
        let resources: Vec<String> =
            kinds.iter().filter(|k| k.0 == group).flat_map(|k| [k.2.clone(), format!("{}/finalizers", k.2)]).collect();
        s.emit(json!({"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRole","metadata":meta(&format!("operator-{g}"),None,&cr,created),
            "rules":[{"apiGroups":[group],"resources":resources,"verbs":["get","list","watch","update","patch"]}]}))?;
        let crb = s.uid();
        s.emit(json!({"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRoleBinding","metadata":meta(&format!("operator-{g}"),None,&crb,created),
            "roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole","name":format!("operator-{g}")},
            "subjects":[{"kind":"ServiceAccount","name":"operator","namespace":ns}]}))?;
        let replicas = if down { 0 } else { 1 };
        let d = s.uid();
        s.emit(json!({"apiVersion":"apps/v1","kind":"Deployment","metadata":meta("operator",Some(&ns),&d,created),
            "spec":{"replicas":replicas,"selector":{"matchLabels":{"app":"operator"}},"template":{"spec":{"serviceAccountName":"operator"}}},
            "status":{"replicas":replicas,"readyReplicas":replicas}}))?;
        let rs = s.uid();
        let mut m = meta("operator-5f6d7", Some(&ns), &rs, created);
        m["ownerReferences"] = json!([owner("apps/v1", "Deployment", "operator", &d)]);
        s.emit(json!({"apiVersion":"apps/v1","kind":"ReplicaSet","metadata":m,"spec":{"replicas":replicas},"status":{"replicas":replicas,"readyReplicas":replicas}}))?;
        if !down {
            let p = s.uid();
            let mut m = meta("operator-5f6d7-x1", Some(&ns), &p, created);
            m["ownerReferences"] = json!([owner("apps/v1", "ReplicaSet", "operator-5f6d7", &rs)]);
            s.emit(json!({"apiVersion":"v1","kind":"Pod","metadata":m,"spec":{"serviceAccountName":"operator","nodeName":"node-0"},
                "status":{"phase":"Running","conditions":[{"type":"Ready","status":"True"}]}}))?;
        }
        let l = s.uid();
        let renew = if down { "2026-11-29T08:00:00.000000Z" } else { "2026-11-29T11:59:58.000000Z" };
        s.emit(json!({"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":meta(&format!("a1b2c3.{group}"),Some(&ns),&l,created),
            "spec":{"holderIdentity":"operator-5f6d7-x1_1234","leaseDurationSeconds":15,"renewTime":renew}}))?;
    }
    // application namespaces, filled round-robin until the object budget is spent
    let namespaces: Vec<String> = (0..opts.namespaces.max(1)).map(|i| format!("app-{i}")).collect();
    for ns in &namespaces {
        let uid = s.uid();
        s.emit(json!({"apiVersion":"v1","kind":"Namespace","metadata":meta(ns,None,&uid,created),"spec":{"finalizers":["kubernetes"]},"status":{"phase":"Active"}}))?;
    }
    lm.namespace = namespaces.get(1).cloned().or_else(|| namespaces.first().cloned());
    // a deep owner chain in the first namespace
    let mut prev: Option<(String, String)> = None;
    for i in 0..opts.chain_depth.min(opts.objects / 10) {
        let uid = s.uid();
        let name = format!("chain-{i}");
        let mut m = meta(&name, Some(&namespaces[0]), &uid, created);
        if let Some((pn, pu)) = &prev {
            m["ownerReferences"] = json!([owner("v1", "ConfigMap", pn, pu)]);
        }
        s.emit(json!({"apiVersion":"v1","kind":"ConfigMap","metadata":m}))?;
        prev = Some((name, uid));
    }
    let mut round = 0usize;
    while s.count < opts.objects {
        for (ni, ns) in namespaces.iter().enumerate() {
            if s.count >= opts.objects {
                break;
            }
            let shape = s.rng.below(10);
            let base = format!("w{round}");
            match shape {
                // Deployment → ReplicaSet → 3 Pods
                0..=3 => {
                    let d = s.uid();
                    s.emit(
                        json!({"apiVersion":"apps/v1","kind":"Deployment","metadata":meta(&base,Some(ns),&d,created),
                        "spec":{"replicas":3},"status":{"replicas":3,"readyReplicas":3}}),
                    )?;
                    if lm.deployment.is_none() {
                        lm.deployment = Some((ns.clone(), base.clone()));
                    }
                    let rs = s.uid();
                    let rsname = format!("{base}-{}", s.rng.hex(8));
                    let mut m = meta(&rsname, Some(ns), &rs, created);
                    m["ownerReferences"] = json!([owner("apps/v1", "Deployment", &base, &d)]);
                    s.emit(json!({"apiVersion":"apps/v1","kind":"ReplicaSet","metadata":m,"spec":{"replicas":3},"status":{"replicas":3,"readyReplicas":3}}))?;
                    for p in 0..3 {
                        let pu = s.uid();
                        let mut m = meta(&format!("{rsname}-{}{p}", s.rng.hex(4)), Some(ns), &pu, created);
                        m["ownerReferences"] = json!([owner("apps/v1", "ReplicaSet", &rsname, &rs)]);
                        s.emit(json!({"apiVersion":"v1","kind":"Pod","metadata":m,"spec":{"nodeName":"node-0","serviceAccountName":"default"},
                            "status":{"phase":"Running","conditions":[{"type":"Ready","status":"True"}]}}))?;
                    }
                    // the deployment controller's event (kept for an hour, so a cluster holds
                    // those of its recent rollouts): counted in the object budget
                    if opts.full && s.count < opts.objects {
                        let n = s.count as u64;
                        let eu =
                            format!("{:08x}-e0e0-4e0e-8e0e-{:012x}", n.wrapping_mul(2_654_435_761) & 0xffff_ffff, n);
                        s.emit(json!({"apiVersion":"v1","kind":"Event",
                            "metadata":{"name":format!("{base}.{:016x}", n.wrapping_mul(0x9E37_79B9_7F4A_7C15)),"namespace":ns,"uid":eu,"resourceVersion":"1","creationTimestamp":created},
                            "involvedObject":{"kind":"Deployment","namespace":ns,"name":base,"uid":d,"apiVersion":"apps/v1","resourceVersion":"1"},
                            "reason":"ScalingReplicaSet","message":format!("Scaled up replica set {rsname} from 0 to 3"),"source":{"component":"deployment-controller"},
                            "firstTimestamp":created,"lastTimestamp":created,"count":1,"type":"Normal","eventTime":null,"reportingComponent":"deployment-controller","reportingInstance":""}))?;
                    }
                }
                // StatefulSet with 2 pods and their PVCs
                4 | 5 => {
                    let st = s.uid();
                    s.emit(json!({"apiVersion":"apps/v1","kind":"StatefulSet","metadata":meta(&base,Some(ns),&st,created),"spec":{"replicas":2},"status":{"readyReplicas":2}}))?;
                    for p in 0..2 {
                        let pu = s.uid();
                        let mut m = meta(&format!("{base}-{p}"), Some(ns), &pu, created);
                        m["ownerReferences"] = json!([owner("apps/v1", "StatefulSet", &base, &st)]);
                        s.emit(json!({"apiVersion":"v1","kind":"Pod","metadata":m,"spec":{"nodeName":"node-0","volumes":[{"name":"data","persistentVolumeClaim":{"claimName":format!("data-{base}-{p}")}}]},
                            "status":{"phase":"Running","conditions":[{"type":"Ready","status":"True"}]}}))?;
                        let cu = s.uid();
                        let mut m = meta(&format!("data-{base}-{p}"), Some(ns), &cu, created);
                        m["finalizers"] = json!(["kubernetes.io/pvc-protection"]);
                        s.emit(json!({"apiVersion":"v1","kind":"PersistentVolumeClaim","metadata":m,"status":{"phase":"Bound"}}))?;
                    }
                }
                // a custom resource owning a ConfigMap, a Secret and a Service
                _ => {
                    let (group, kind, plural) = kinds[(round * 7 + ni) % kinds.len().max(1)].clone();
                    let cu = s.uid();
                    let mut m = meta(&base, Some(ns), &cu, created);
                    let fin = format!("{group}/cleanup");
                    m["finalizers"] = json!([fin]);
                    let stuck = group.starts_with("g0.") && s.rng.below(4) == 0;
                    if stuck {
                        m["deletionTimestamp"] = json!("2026-11-29T10:00:00Z");
                        m["deletionGracePeriodSeconds"] = json!(0);
                        if lm.stuck.is_none() {
                            lm.stuck = Some((format!("{plural}.{group}"), ns.clone(), base.clone()));
                        }
                    }
                    s.emit(json!({"apiVersion":format!("{group}/v1"),"kind":kind,"metadata":m,"spec":{"size":3}}))?;
                    for (k, suffix) in [("ConfigMap", "config"), ("Secret", "creds"), ("Service", "svc")] {
                        let du = s.uid();
                        let mut m = meta(&format!("{base}-{suffix}"), Some(ns), &du, created);
                        // trouble: a stale uid (recreated owner) or another namespace, now and then
                        let (ouid, trouble) = match s.rng.below(50) {
                            0 => ("0000dead-0000-0000-0000-000000000000".to_string(), true),
                            _ => (cu.clone(), false),
                        };
                        let _ = trouble;
                        m["ownerReferences"] = json!([owner(&format!("{group}/v1"), &kind, &base, &ouid)]);
                        s.emit(json!({"apiVersion":"v1","kind":k,"metadata":m}))?;
                    }
                }
            }
        }
        round += 1;
    }
    s.w.write_all(b"\n]}\n")?;
    s.w.flush()?;
    lm.terminating = s.terminating;
    Ok((s.count, lm))
}

// ----- realistic shapes --------------------------------------------------------------------
//
// Sizes aimed for, per kind, as compact JSON (what `kubectl get -o json` returns), modelled on
// objects of a current cluster (kube 1.3x, workloads applied by a client, the controllers' and
// the kubelet's own field managers, a service mesh's sidecar in every application pod);
// managedFields / whole object, as measured on this generator at 10k objects:
// - Pod (a Deployment's or StatefulSet's: an application container with a port, two env vars,
//   resources, a readiness probe, a ConfigMap or claim volume; an injected mesh proxy with its
//   arguments, environment, probes and security context): 4.3 KB / 10.7 KB.
//   kube-controller-manager's entry holds the whole pod spec's field set (the sidecar's too:
//   the webhook's patch is part of the creator's request), the kubelet's the status (five
//   conditions, pod IPs, two container statuses); the object adds the defaulted spec, the
//   projected service-account token volume and tolerations.
// - Deployment 2.4 / 4.6 KB (the client's spec set, the controller's revision annotation and
//   status); ReplicaSet 2.0 / 3.9 KB; StatefulSet 2.1 / 4.2 KB (volumeClaimTemplates, update
//   strategy); PersistentVolumeClaim 1.2 / 2.1 KB (binding annotations by the controller and
//   the scheduler).
// - ConfigMap, Secret and Service an operator created: 0.3–0.5 / 1.0–1.3 KB; a custom resource
//   1.0 / 1.7 KB (status conditions).
// - CustomResourceDefinition 1.0 / 53 KB on average (18–71 KB, and one in fifteen ≈181 KB): an
//   openAPIV3Schema whose spec.forProvider, spec.initProvider and status.atProvider each
//   describe 20–100 fields (265 for the large ones), as Crossplane's generated CRDs do (theirs
//   run from tens to hundreds of KB).
// - Event (one per Deployment: the deployment controller's ScalingReplicaSet) 0.3 / 1.0 KB; the
//   API serves each both as v1 and as events.k8s.io/v1.
// managedFields are about 31 % of all bytes (pods 40 %, CRDs 2 %), and most of what a
// metadata-only reader of the garbage collector's inputs transfers.

/// The metadata-only variant's managedFields: the same two entries on every object (a
/// Deployment-like field set, a client-side apply), about 0.7 KB, as the offline figures have
/// always been measured on; `--full` models each kind instead (see above).
fn uniform_managed_fields(manager: &str, o: &Value) -> Value {
    json!([
        {"manager": manager, "operation": "Update", "apiVersion": o["apiVersion"], "time": "2026-11-20T10:00:00Z", "fieldsType": "FieldsV1",
         "fieldsV1": {"f:metadata": {"f:labels": {".": {}, "f:app": {}, "f:app.kubernetes.io/managed-by": {}}, "f:ownerReferences": {".": {}, "k:{\"uid\":\"x\"}": {}}},
                      "f:spec": {".": {}, "f:replicas": {}, "f:selector": {}, "f:template": {"f:metadata": {"f:labels": {".": {}, "f:app": {}}}, "f:spec": {"f:containers": {"k:{\"name\":\"main\"}": {".": {}, "f:image": {}, "f:name": {}, "f:resources": {}}}}}}}},
        {"manager": "kubectl-client-side-apply", "operation": "Update", "apiVersion": o["apiVersion"], "time": "2026-11-19T09:00:00Z", "fieldsType": "FieldsV1",
         "fieldsV1": {"f:metadata": {"f:annotations": {".": {}, "f:kubectl.kubernetes.io/last-applied-configuration": {}}}}}
    ])
}

/// The annotations controllers set on what they manage (in every variant: they are metadata).
fn annotate(kind: &str, o: &mut Value) {
    let a = match kind {
        "Deployment" => json!({"deployment.kubernetes.io/revision": "1"}),
        "ReplicaSet" => {
            let r = o["spec"]["replicas"].as_u64().unwrap_or(1);
            json!({"deployment.kubernetes.io/desired-replicas": r.to_string(), "deployment.kubernetes.io/max-replicas": (r + 1).to_string(), "deployment.kubernetes.io/revision": "1"})
        }
        "PersistentVolumeClaim" => {
            json!({"pv.kubernetes.io/bind-completed": "yes", "pv.kubernetes.io/bound-by-controller": "yes",
            "volume.beta.kubernetes.io/storage-provisioner": "rancher.io/local-path", "volume.kubernetes.io/selected-node": "node-0",
            "volume.kubernetes.io/storage-provisioner": "rancher.io/local-path"})
        }
        _ => return,
    };
    o["metadata"]["annotations"] = a;
}

fn mf(manager: &str, api_version: &Value, time: &str, subresource: Option<&str>, fields: Value) -> Value {
    let mut e = json!({"manager": manager, "operation": "Update", "apiVersion": api_version, "time": time, "fieldsType": "FieldsV1", "fieldsV1": fields});
    if let Some(s) = subresource {
        e["subresource"] = json!(s);
    }
    e
}

/// `{".": {}, "f:a": {}, …}` (or without the "." when `dot` is false).
fn fset(dot: bool, names: &[&str]) -> Value {
    let mut m = serde_json::Map::new();
    if dot {
        m.insert(".".into(), json!({}));
    }
    for n in names {
        m.insert(format!("f:{n}"), json!({}));
    }
    Value::Object(m)
}

fn labels_set(o: &Value) -> Value {
    let names: Vec<String> =
        o["metadata"]["labels"].as_object().map(|l| l.keys().cloned().collect()).unwrap_or_default();
    fset(true, &names.iter().map(String::as_str).collect::<Vec<_>>())
}

fn owners_set(o: &Value) -> Option<Value> {
    let refs = o["metadata"]["ownerReferences"].as_array()?;
    let mut m = serde_json::Map::new();
    m.insert(".".into(), json!({}));
    for r in refs {
        m.insert(format!("k:{{\"uid\":\"{}\"}}", r["uid"].as_str().unwrap_or("")), json!({}));
    }
    Some(Value::Object(m))
}

/// `f:metadata` with the labels (and owner references) the creator set.
fn meta_set(o: &Value, extra: &[(&str, Value)]) -> Value {
    let mut m = json!({"f:labels": labels_set(o)});
    if let Some(owners) = owners_set(o) {
        m["f:ownerReferences"] = owners;
    }
    for (k, v) in extra {
        m[*k] = v.clone();
    }
    m
}

fn condition_set() -> Value {
    fset(true, &["lastTransitionTime", "message", "reason", "status", "type"])
}

fn container_set() -> Value {
    json!({"k:{\"name\":\"main\"}": {".": {}, "f:args": {},
        "f:env": {".": {}, "k:{\"name\":\"MODE\"}": fset(true, &["name", "value"]),
                  "k:{\"name\":\"POD_NAME\"}": {".": {}, "f:name": {}, "f:valueFrom": {".": {}, "f:fieldRef": {}}}},
        "f:image": {}, "f:imagePullPolicy": {}, "f:name": {},
        "f:ports": {".": {}, "k:{\"containerPort\":8080,\"protocol\":\"TCP\"}": fset(true, &["containerPort", "name", "protocol"])},
        "f:readinessProbe": {".": {}, "f:failureThreshold": {}, "f:httpGet": fset(true, &["path", "port", "scheme"]), "f:periodSeconds": {}, "f:successThreshold": {}, "f:timeoutSeconds": {}},
        "f:resources": {".": {}, "f:limits": fset(true, &["memory"]), "f:requests": fset(true, &["cpu", "memory"])},
        "f:terminationMessagePath": {}, "f:terminationMessagePolicy": {},
        "f:volumeMounts": {".": {}, "k:{\"mountPath\":\"/etc/app\"}": fset(true, &["mountPath", "name"])}}})
}

/// A pod spec's field set, as the creator of a pod or a pod template owns it.
fn pod_spec_set(pod: bool, volume: &str) -> Value {
    let mut s = json!({"f:containers": container_set(), "f:dnsPolicy": {}, "f:restartPolicy": {}, "f:schedulerName": {}, "f:securityContext": {},
        "f:serviceAccountName": {}, "f:terminationGracePeriodSeconds": {},
        "f:volumes": {".": {}, format!("k:{{\"name\":\"{volume}\"}}"): {".": {}, "f:name": {}, (if volume == "config" { "f:configMap" } else { "f:persistentVolumeClaim" }): fset(true, &[if volume == "config" { "name" } else { "claimName" }])}}});
    if pod {
        s["f:enableServiceLinks"] = json!({});
        // the injected sidecar is owned by whoever created the pod (the webhook's patch is
        // part of that request)
        s["f:containers"]["k:{\"name\":\"proxy\"}"] = sidecar_set();
    }
    s
}

/// The sidecar's field set (see [`sidecar`]).
fn sidecar_set() -> Value {
    let mut env = serde_json::Map::new();
    env.insert(".".into(), json!({}));
    for k in SIDECAR_ENV {
        env.insert(format!("k:{{\"name\":\"{k}\"}}"), fset(true, &["name", "value"]));
    }
    json!({".": {}, "f:args": {}, "f:env": env, "f:image": {}, "f:imagePullPolicy": {}, "f:name": {},
        "f:ports": {".": {}, "k:{\"containerPort\":15090,\"protocol\":\"TCP\"}": fset(true, &["containerPort", "name", "protocol"])},
        "f:readinessProbe": {".": {}, "f:failureThreshold": {}, "f:httpGet": fset(true, &["path", "port", "scheme"]), "f:initialDelaySeconds": {}, "f:periodSeconds": {}, "f:successThreshold": {}, "f:timeoutSeconds": {}},
        "f:resources": {".": {}, "f:limits": fset(true, &["cpu", "memory"]), "f:requests": fset(true, &["cpu", "memory"])},
        "f:securityContext": {".": {}, "f:allowPrivilegeEscalation": {}, "f:capabilities": {".": {}, "f:drop": {}}, "f:privileged": {}, "f:readOnlyRootFilesystem": {}, "f:runAsGroup": {}, "f:runAsNonRoot": {}, "f:runAsUser": {}},
        "f:startupProbe": {".": {}, "f:failureThreshold": {}, "f:httpGet": fset(true, &["path", "port", "scheme"]), "f:periodSeconds": {}, "f:successThreshold": {}, "f:timeoutSeconds": {}},
        "f:terminationMessagePath": {}, "f:terminationMessagePolicy": {},
        "f:volumeMounts": {".": {}, "k:{\"mountPath\":\"/etc/istio/proxy\"}": fset(true, &["mountPath", "name"]), "k:{\"mountPath\":\"/var/lib/istio/data\"}": fset(true, &["mountPath", "name"])}})
}

const SIDECAR_ENV: [&str; 12] = [
    "PILOT_CERT_PROVIDER",
    "CA_ADDR",
    "POD_NAME",
    "POD_NAMESPACE",
    "INSTANCE_IP",
    "SERVICE_ACCOUNT",
    "HOST_IP",
    "ISTIO_CPU_LIMIT",
    "PROXY_CONFIG",
    "ISTIO_META_CLUSTER_ID",
    "ISTIO_META_WORKLOAD_NAME",
    "ISTIO_META_MESH_ID",
];

fn managed_fields(kind: &str, o: &Value) -> Vec<Value> {
    let av = &o["apiVersion"];
    let by = o["metadata"]["labels"]["app.kubernetes.io/managed-by"].as_str().unwrap_or("kube-controller-manager");
    let (t0, t1) = ("2026-11-20T10:00:00Z", "2026-11-20T10:01:00Z");
    let kcm = "kube-controller-manager";
    let template = |hash: &[&str]| {
        let mut labels = vec!["app"];
        labels.extend_from_slice(hash);
        json!({"f:metadata": {"f:labels": fset(true, &labels)}, "f:spec": pod_spec_set(false, "config")})
    };
    match kind {
        "Pod" => {
            let sts = o["metadata"]["ownerReferences"][0]["kind"] == "StatefulSet";
            let extra: Vec<(&str, Value)> = if sts { vec![] } else { vec![("f:generateName", json!({}))] };
            vec![
                mf(
                    kcm,
                    av,
                    t0,
                    None,
                    json!({"f:metadata": meta_set(o, &extra), "f:spec": pod_spec_set(true, if sts { "data" } else { "config" })}),
                ),
                mf(
                    "kubelet",
                    av,
                    t1,
                    Some("status"),
                    json!({"f:status": {
                    "f:conditions": {"k:{\"type\":\"ContainersReady\"}": fset(true, &["lastProbeTime", "lastTransitionTime", "status", "type"]),
                                     "k:{\"type\":\"Initialized\"}": fset(true, &["lastProbeTime", "lastTransitionTime", "status", "type"]),
                                     "k:{\"type\":\"PodReadyToStartContainers\"}": fset(true, &["lastProbeTime", "lastTransitionTime", "status", "type"]),
                                     "k:{\"type\":\"Ready\"}": fset(true, &["lastProbeTime", "lastTransitionTime", "status", "type"])},
                    "f:containerStatuses": {}, "f:hostIP": {}, "f:hostIPs": {}, "f:phase": {}, "f:podIP": {},
                    "f:podIPs": {".": {}, "k:{\"ip\":\"10.244.3.17\"}": fset(true, &["ip"])}, "f:startTime": {}}}),
                ),
            ]
        }
        "ReplicaSet" => vec![
            mf(
                kcm,
                av,
                t0,
                None,
                json!({"f:metadata": meta_set(o, &[("f:annotations", fset(true, &["deployment.kubernetes.io/desired-replicas", "deployment.kubernetes.io/max-replicas", "deployment.kubernetes.io/revision"]))]),
                "f:spec": {"f:replicas": {}, "f:selector": {}, "f:template": template(&["pod-template-hash"])}}),
            ),
            mf(
                kcm,
                av,
                t1,
                Some("status"),
                json!({"f:status": fset(false, &["availableReplicas", "fullyLabeledReplicas", "observedGeneration", "readyReplicas", "replicas"])}),
            ),
        ],
        "Deployment" => vec![
            mf(
                by,
                av,
                t0,
                None,
                json!({"f:metadata": meta_set(o, &[]), "f:spec": {"f:progressDeadlineSeconds": {}, "f:replicas": {}, "f:revisionHistoryLimit": {}, "f:selector": {},
                "f:strategy": {"f:rollingUpdate": fset(true, &["maxSurge", "maxUnavailable"]), "f:type": {}}, "f:template": template(&[])}}),
            ),
            mf(
                kcm,
                av,
                t1,
                None,
                json!({"f:metadata": {"f:annotations": fset(true, &["deployment.kubernetes.io/revision"])}}),
            ),
            mf(
                kcm,
                av,
                t1,
                Some("status"),
                json!({"f:status": {"f:availableReplicas": {}, "f:conditions": {".": {},
                "k:{\"type\":\"Available\"}": fset(true, &["lastTransitionTime", "lastUpdateTime", "message", "reason", "status", "type"]),
                "k:{\"type\":\"Progressing\"}": fset(true, &["lastTransitionTime", "lastUpdateTime", "message", "reason", "status", "type"])},
                "f:observedGeneration": {}, "f:readyReplicas": {}, "f:replicas": {}, "f:updatedReplicas": {}}}),
            ),
        ],
        "StatefulSet" => vec![
            mf(
                by,
                av,
                t0,
                None,
                json!({"f:metadata": meta_set(o, &[]), "f:spec": {"f:persistentVolumeClaimRetentionPolicy": fset(true, &["whenDeleted", "whenScaled"]),
                "f:podManagementPolicy": {}, "f:replicas": {}, "f:revisionHistoryLimit": {}, "f:selector": {}, "f:serviceName": {}, "f:template": template(&[]),
                "f:updateStrategy": {"f:rollingUpdate": fset(true, &["partition"]), "f:type": {}}, "f:volumeClaimTemplates": {}}}),
            ),
            mf(
                kcm,
                av,
                t1,
                Some("status"),
                json!({"f:status": fset(false, &["availableReplicas", "collisionCount", "currentReplicas", "currentRevision", "observedGeneration", "readyReplicas", "replicas", "updateRevision", "updatedReplicas"])}),
            ),
        ],
        "PersistentVolumeClaim" => vec![
            mf(
                kcm,
                av,
                t0,
                None,
                json!({"f:metadata": meta_set(o, &[("f:annotations", fset(true, &["pv.kubernetes.io/bind-completed", "pv.kubernetes.io/bound-by-controller", "volume.beta.kubernetes.io/storage-provisioner", "volume.kubernetes.io/storage-provisioner"]))]),
                "f:spec": {"f:accessModes": {}, "f:resources": {"f:requests": fset(true, &["storage"])}, "f:volumeMode": {}, "f:volumeName": {}}}),
            ),
            mf(
                "kube-scheduler",
                av,
                t0,
                None,
                json!({"f:metadata": {"f:annotations": {"f:volume.kubernetes.io/selected-node": {}}}}),
            ),
            mf(
                kcm,
                av,
                t1,
                Some("status"),
                json!({"f:status": {"f:accessModes": {}, "f:capacity": fset(true, &["storage"]), "f:phase": {}}}),
            ),
        ],
        "ConfigMap" => {
            vec![mf(by, av, t0, None, json!({"f:data": fset(true, &["app.yaml"]), "f:metadata": meta_set(o, &[])}))]
        }
        "Secret" => vec![mf(
            by,
            av,
            t0,
            None,
            json!({"f:data": fset(true, &["password", "username"]), "f:metadata": meta_set(o, &[]), "f:type": {}}),
        )],
        "Service" => vec![mf(
            by,
            av,
            t0,
            None,
            json!({"f:metadata": meta_set(o, &[]), "f:spec": {"f:internalTrafficPolicy": {},
            "f:ports": {".": {}, "k:{\"port\":80,\"protocol\":\"TCP\"}": fset(true, &["name", "port", "protocol", "targetPort"])}, "f:selector": {}, "f:sessionAffinity": {}, "f:type": {}}}),
        )],
        "Namespace" => vec![mf(by, av, t0, None, json!({"f:metadata": {"f:labels": labels_set(o)}}))],
        "ServiceAccount" | "ClusterRole" | "ClusterRoleBinding" => {
            let mut f = json!({"f:metadata": meta_set(o, &[])});
            match kind {
                "ClusterRole" => f["f:rules"] = json!({}),
                "ClusterRoleBinding" => {
                    f["f:roleRef"] = json!({});
                    f["f:subjects"] = json!({});
                }
                _ => {}
            }
            vec![mf(by, av, t0, None, f)]
        }
        "Node" => vec![
            mf(
                "kubelet",
                av,
                t0,
                None,
                json!({"f:metadata": {"f:annotations": fset(true, &["node.alpha.kubernetes.io/ttl", "volumes.kubernetes.io/controller-managed-attach-detach"]), "f:labels": labels_set(o)}}),
            ),
            mf(
                "kubelet",
                av,
                t1,
                Some("status"),
                json!({"f:status": {"f:allocatable": {}, "f:capacity": {}, "f:conditions": {"k:{\"type\":\"Ready\"}": fset(true, &["lastHeartbeatTime", "lastTransitionTime", "message", "reason", "status"])}, "f:images": {}, "f:nodeInfo": {}}}),
            ),
        ],
        "Lease" => vec![mf(
            by,
            av,
            t0,
            None,
            json!({"f:spec": fset(false, &["acquireTime", "holderIdentity", "leaseDurationSeconds", "leaseTransitions", "renewTime"])}),
        )],
        "CustomResourceDefinition" => vec![
            mf(
                by,
                av,
                t0,
                None,
                json!({"f:metadata": meta_set(o, &[]), "f:spec": {"f:conversion": fset(true, &["strategy"]), "f:group": {}, "f:names": fset(false, &["categories", "kind", "listKind", "plural", "singular"]), "f:scope": {}, "f:versions": {}}}),
            ),
            mf(
                "kube-apiserver",
                av,
                t1,
                Some("status"),
                json!({"f:status": {"f:acceptedNames": fset(false, &["categories", "kind", "listKind", "plural", "singular"]),
                "f:conditions": {"k:{\"type\":\"Established\"}": condition_set(), "k:{\"type\":\"NamesAccepted\"}": condition_set()}}}),
            ),
        ],
        "Event" => vec![mf(
            kcm,
            av,
            t0,
            None,
            json!({"f:count": {}, "f:firstTimestamp": {}, "f:involvedObject": {}, "f:lastTimestamp": {}, "f:message": {}, "f:reason": {},
            "f:reportingComponent": {}, "f:source": {"f:component": {}}, "f:type": {}}),
        )],
        _ if o["apiVersion"].as_str().is_some_and(|a| a.contains(".synth.example.com/")) => vec![
            mf(
                by,
                av,
                t0,
                None,
                json!({"f:metadata": meta_set(o, &[]), "f:spec": fset(true, &["region", "size", "tier"])}),
            ),
            mf(
                "operator",
                av,
                t1,
                Some("status"),
                json!({"f:status": {".": {}, "f:conditions": {".": {}, "k:{\"type\":\"Ready\"}": condition_set(), "k:{\"type\":\"Synced\"}": condition_set()}, "f:observedGeneration": {}}}),
            ),
        ],
        _ => vec![mf(by, av, t0, None, json!({"f:metadata": meta_set(o, &[])}))],
    }
}

fn container() -> Value {
    json!({"name": "main", "image": "registry.example.com/team/app:v1.42.7", "args": ["--port=8080", "--log-level=info"],
        "env": [{"name": "MODE", "value": "production"}, {"name": "POD_NAME", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.name"}}}],
        "ports": [{"name": "http", "containerPort": 8080, "protocol": "TCP"}],
        "resources": {"limits": {"memory": "256Mi"}, "requests": {"cpu": "100m", "memory": "128Mi"}},
        "readinessProbe": {"httpGet": {"path": "/healthz", "port": 8080, "scheme": "HTTP"}, "timeoutSeconds": 1, "periodSeconds": 10, "successThreshold": 1, "failureThreshold": 3},
        "volumeMounts": [{"name": "config", "mountPath": "/etc/app"}],
        "terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File", "imagePullPolicy": "IfNotPresent"})
}

/// A mesh proxy sidecar, as injected into most production pods (its arguments, environment,
/// probes and security context are most of a pod's spec on such clusters).
fn sidecar() -> Value {
    let env: Vec<Value> = SIDECAR_ENV
        .iter()
        .map(|k| json!({"name": k, "value": format!("value-of-{}", k.to_ascii_lowercase())}))
        .collect();
    json!({"name": "proxy", "image": "registry.example.com/mesh/proxy:v1.24.3",
        "args": ["proxy", "sidecar", "--domain", "$(POD_NAMESPACE).svc.cluster.local", "--proxyLogLevel=warning", "--proxyComponentLogLevel=misc:error", "--log_output_level=default:info"],
        "env": env,
        "ports": [{"name": "http-envoy-prom", "containerPort": 15090, "protocol": "TCP"}],
        "resources": {"limits": {"cpu": "2", "memory": "1Gi"}, "requests": {"cpu": "100m", "memory": "128Mi"}},
        "readinessProbe": {"httpGet": {"path": "/healthz/ready", "port": 15021, "scheme": "HTTP"}, "initialDelaySeconds": 1, "timeoutSeconds": 3, "periodSeconds": 2, "successThreshold": 1, "failureThreshold": 30},
        "startupProbe": {"httpGet": {"path": "/healthz/ready", "port": 15021, "scheme": "HTTP"}, "timeoutSeconds": 3, "periodSeconds": 1, "successThreshold": 1, "failureThreshold": 600},
        "securityContext": {"allowPrivilegeEscalation": false, "capabilities": {"drop": ["ALL"]}, "privileged": false, "readOnlyRootFilesystem": true, "runAsGroup": 1337, "runAsNonRoot": true, "runAsUser": 1337},
        "volumeMounts": [{"name": "workload-socket", "mountPath": "/var/run/secrets/workload-spiffe-uds"}, {"name": "istio-envoy", "mountPath": "/etc/istio/proxy"}, {"name": "istio-data", "mountPath": "/var/lib/istio/data"}, {"name": "istio-podinfo", "mountPath": "/etc/istio/pod"}],
        "terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File", "imagePullPolicy": "IfNotPresent"})
}

fn template_spec(sa: &Value, volume: Value) -> Value {
    json!({"containers": [container()], "restartPolicy": "Always", "terminationGracePeriodSeconds": 30, "dnsPolicy": "ClusterFirst",
        "serviceAccountName": sa, "securityContext": {}, "schedulerName": "default-scheduler", "volumes": [volume]})
}

fn condition(kind: &str, reason: &str, message: &str) -> Value {
    json!({"type": kind, "status": "True", "lastTransitionTime": "2026-11-20T10:01:00Z", "reason": reason, "message": message})
}

/// Merges `add` into `o` (objects key by key; anything else replaces).
fn merge(o: &mut Value, add: Value) {
    match (o, add) {
        (Value::Object(a), Value::Object(b)) => {
            for (k, v) in b {
                merge(a.entry(k).or_insert(Value::Null), v);
            }
        }
        (slot, v) => *slot = v,
    }
}

/// The spec and status the API returns besides what the analysis reads (which the generator
/// set already and which stays as it is).
fn full_body(kind: &str, o: &mut Value, n: usize) {
    let name = o["metadata"]["name"].clone();
    let ip = format!("10.244.{}.{}", (n / 250) % 256, n % 250 + 2);
    let config = json!({"name": "config", "configMap": {"name": format!("{}-config", name.as_str().unwrap_or("")), "defaultMode": 420}});
    match kind {
        "Pod" => {
            let sa = o["spec"]["serviceAccountName"].clone();
            let sa = if sa.is_null() { json!("default") } else { sa };
            let mut c = container();
            c["volumeMounts"].as_array_mut().unwrap().push(json!({"name": "kube-api-access-x7k2p", "readOnly": true, "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount"}));
            // a StatefulSet's pod keeps its claim (set by the generator), others mount a ConfigMap
            let volume = o["spec"]["volumes"].get(0).cloned().unwrap_or(config);
            let mut spec = template_spec(&sa, volume);
            // and a sidecar (a service-mesh proxy or log shipper, as most production pods carry)
            spec["containers"] = json!([c, sidecar()]);
            spec["volumes"].as_array_mut().unwrap().push(json!({"name": "kube-api-access-x7k2p", "projected": {"sources": [
                {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
                {"downwardAPI": {"items": [{"path": "namespace", "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}]}}], "defaultMode": 420}}));
            spec["serviceAccount"] = sa;
            spec["tolerations"] = json!([{"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
                                         {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}]);
            spec["priority"] = json!(0);
            spec["enableServiceLinks"] = json!(true);
            spec["preemptionPolicy"] = json!("PreemptLowerPriority");
            let since = "2026-11-20T10:00:30Z";
            let cond =
                |t: &str| json!({"type": t, "status": "True", "lastProbeTime": null, "lastTransitionTime": since});
            let status = json!({"phase": "Running", "hostIP": "192.168.10.21", "hostIPs": [{"ip": "192.168.10.21"}], "podIP": ip, "podIPs": [{"ip": ip}], "startTime": since, "qosClass": "Burstable",
                "conditions": [cond("PodReadyToStartContainers"), cond("Initialized"), cond("Ready"), cond("ContainersReady"), cond("PodScheduled")],
                "containerStatuses": [{"name": "main", "state": {"running": {"startedAt": "2026-11-20T10:00:41Z"}}, "lastState": {}, "ready": true, "restartCount": 0,
                    "image": "registry.example.com/team/app:v1.42.7", "imageID": "registry.example.com/team/app@sha256:5d1c3c0cbbbe3bb0b2c8d8a5e6ef1a6c5ce0d5e0a4f6b1c7d2e9a0b4c3d2e1f0",
                    "containerID": format!("containerd://{:064x}", (n as u128).wrapping_mul(0x9E37_79B9_7F4A_7C15_F39C_C060_5CED_C835)), "started": true,
                    "volumeMounts": [{"name": "config", "mountPath": "/etc/app"}, {"name": "kube-api-access-x7k2p", "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount", "readOnly": true, "recursiveReadOnly": "Disabled"}],
                    "resources": {"limits": {"memory": "256Mi"}, "requests": {"cpu": "100m", "memory": "128Mi"}}, "user": {"linux": {"uid": 65532, "gid": 65532, "supplementalGroups": [65532]}}},
                    {"name": "proxy", "state": {"running": {"startedAt": "2026-11-20T10:00:39Z"}}, "lastState": {}, "ready": true, "restartCount": 0,
                    "image": "registry.example.com/mesh/proxy:v1.24.3", "imageID": "registry.example.com/mesh/proxy@sha256:9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a0b9c8d7e6f5a4b3c2d1e0f9a8b",
                    "containerID": format!("containerd://{:064x}", (n as u128 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15_F39C_C060_5CED_C835)), "started": true,
                    "resources": {"limits": {"cpu": "2", "memory": "1Gi"}, "requests": {"cpu": "100m", "memory": "128Mi"}}, "user": {"linux": {"uid": 1337, "gid": 1337, "supplementalGroups": [1337]}}}]});
            merge(o, json!({"spec": spec, "status": status}));
        }
        "Deployment" | "ReplicaSet" | "StatefulSet" => {
            let sa = o["spec"]["template"]["spec"]["serviceAccountName"].clone();
            let sa = if sa.is_null() { json!("default") } else { sa };
            let labels = json!({"app": name});
            let replicas = o["spec"]["replicas"].clone();
            let mut add = json!({"spec": {"selector": {"matchLabels": labels}, "template": {"metadata": {"labels": labels, "creationTimestamp": null}, "spec": template_spec(&sa, config)}, "revisionHistoryLimit": 10},
                                 "status": {"observedGeneration": 1, "replicas": replicas, "readyReplicas": replicas, "availableReplicas": replicas}});
            match kind {
                "Deployment" => merge(
                    &mut add,
                    json!({"spec": {"strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"}}, "progressDeadlineSeconds": 600},
                    "status": {"updatedReplicas": replicas, "conditions": [
                        {"type": "Available", "status": "True", "lastUpdateTime": "2026-11-20T10:01:00Z", "lastTransitionTime": "2026-11-20T10:01:00Z", "reason": "MinimumReplicasAvailable", "message": "Deployment has minimum availability."},
                        {"type": "Progressing", "status": "True", "lastUpdateTime": "2026-11-20T10:01:00Z", "lastTransitionTime": "2026-11-20T10:00:00Z", "reason": "NewReplicaSetAvailable", "message": format!("ReplicaSet \"{}-5f6d7c9b8\" has successfully progressed.", name.as_str().unwrap_or(""))}]}}),
                ),
                "ReplicaSet" => merge(&mut add, json!({"status": {"fullyLabeledReplicas": replicas}})),
                _ => {
                    add["spec"]["template"]["spec"]["volumes"] =
                        json!([{"name": "data", "persistentVolumeClaim": {"claimName": "data"}}]);
                    merge(
                        &mut add,
                        json!({"spec": {"serviceName": name, "podManagementPolicy": "OrderedReady", "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}},
                        "persistentVolumeClaimRetentionPolicy": {"whenDeleted": "Retain", "whenScaled": "Retain"},
                        "volumeClaimTemplates": [{"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "data", "creationTimestamp": null},
                            "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "10Gi"}}, "volumeMode": "Filesystem"}, "status": {"phase": "Pending"}}]},
                        "status": {"currentReplicas": replicas, "updatedReplicas": replicas, "currentRevision": format!("{}-7b9c5d6f4", name.as_str().unwrap_or("")),
                                   "updateRevision": format!("{}-7b9c5d6f4", name.as_str().unwrap_or("")), "collisionCount": 0}}),
                    );
                }
            }
            merge(o, add);
        }
        "PersistentVolumeClaim" => merge(
            o,
            json!({"spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "10Gi"}}, "volumeName": format!("pvc-{:032x}", n), "storageClassName": "standard", "volumeMode": "Filesystem"},
            "status": {"accessModes": ["ReadWriteOnce"], "capacity": {"storage": "10Gi"}}}),
        ),
        "ConfigMap" => {
            o["data"] = json!({"app.yaml": "server:\n  port: 8080\n  readTimeout: 30s\n  writeTimeout: 30s\nlogging:\n  level: info\n  format: json\ncache:\n  size: 512Mi\n  ttl: 10m\nupstream:\n  url: http://backend.internal:8080\n  retries: 3\nfeatures:\n  - audit\n  - metrics\n  - tracing\n"})
        }
        "Secret" => {
            o["data"] = json!({"password": "c2VjcmV0LXBhc3N3b3JkLXZhbHVlLWZvci10aGUtc2VydmljZQ==", "username": "YXBwLXNlcnZpY2UtYWNjb3VudA=="});
            o["type"] = json!("Opaque");
        }
        "Service" => {
            o["spec"] = json!({"type": "ClusterIP", "clusterIP": format!("10.96.{}.{}", (n / 250) % 256, n % 250 + 2), "clusterIPs": [format!("10.96.{}.{}", (n / 250) % 256, n % 250 + 2)],
            "internalTrafficPolicy": "Cluster", "ipFamilies": ["IPv4"], "ipFamilyPolicy": "SingleStack", "sessionAffinity": "None",
            "ports": [{"name": "http", "port": 80, "targetPort": 8080, "protocol": "TCP"}], "selector": {"app": name}})
        }
        "CustomResourceDefinition" => {
            let t: usize = o["spec"]["names"]["kind"]
                .as_str()
                .and_then(|k| k.trim_start_matches("Widget").parse().ok())
                .unwrap_or(0);
            merge(o, json!({"spec": {"conversion": {"strategy": "None"}}}));
            // one in fifteen as large as the largest generated provider CRDs (≈186 KB)
            let fields = if t % 15 == 7 { 265 } else { 20 + (t * 37) % 81 };
            let schema = crd_schema(o["spec"]["names"]["kind"].as_str().unwrap_or(""), fields);
            if let Some(v) = o["spec"]["versions"].get_mut(0) {
                merge(
                    v,
                    json!({"schema": {"openAPIV3Schema": schema}, "subresources": {"status": {}},
                    "additionalPrinterColumns": [{"name": "READY", "type": "string", "jsonPath": ".status.conditions[?(@.type=='Ready')].status"},
                                                 {"name": "SYNCED", "type": "string", "jsonPath": ".status.conditions[?(@.type=='Synced')].status"},
                                                 {"name": "AGE", "type": "date", "jsonPath": ".metadata.creationTimestamp"}]}),
                );
            }
            let names = o["spec"]["names"].clone();
            merge(
                o,
                json!({"status": {"acceptedNames": names, "storedVersions": ["v1"], "conditions": [
                condition("NamesAccepted", "NoConflicts", "no conflicts found"), condition("Established", "InitialNamesAccepted", "the initial names have been accepted")]}}),
            );
        }
        _ if o["apiVersion"].as_str().is_some_and(|a| a.contains(".synth.example.com/")) => merge(
            o,
            json!({
            "spec": {"tier": "standard", "region": "eu-west-1", "deletionPolicy": "Delete", "providerConfigRef": {"name": "default"}},
            "status": {"observedGeneration": 1, "conditions": [condition("Ready", "Available", ""), condition("Synced", "ReconcileSuccess", "")]}}),
        ),
        _ => {}
    }
}

/// An openAPIV3Schema like a generated provider CRD's: `fields` described properties under
/// spec.forProvider, spec.initProvider and status.atProvider.
fn crd_schema(kind: &str, fields: usize) -> Value {
    let props = |what: &str| {
        let mut m = serde_json::Map::new();
        for i in 0..fields {
            let ty = ["string", "number", "boolean", "string"][i % 4];
            m.insert(
                format!("field{i}"),
                json!({"type": ty, "description": format!("Field{i} {what} the {kind}: the value the provider reconciles for this setting, as documented by the upstream API; changes are applied in place where the API allows it.")}),
            );
        }
        Value::Object(m)
    };
    json!({"type": "object", "description": format!("{kind} is the Schema for the {kind} API. Manages a resource of the external provider."),
        "properties": {
            "apiVersion": {"type": "string", "description": "APIVersion defines the versioned schema of this representation of an object. Servers should convert recognized schemas to the latest internal value, and may reject unrecognized values."},
            "kind": {"type": "string", "description": "Kind is a string value representing the REST resource this object represents. Servers may infer this from the endpoint the client submits requests to. Cannot be updated. In CamelCase."},
            "metadata": {"type": "object"},
            "spec": {"type": "object", "description": format!("{kind}Spec defines the desired state of {kind}"), "properties": {
                "deletionPolicy": {"type": "string", "default": "Delete", "enum": ["Orphan", "Delete"], "description": "DeletionPolicy specifies what will happen to the underlying external resource when this managed resource is deleted."},
                "forProvider": {"type": "object", "properties": props("set for")},
                "initProvider": {"type": "object", "description": "THIS IS A BETA FIELD. It will be honored unless the Management Policies feature flag is disabled.", "properties": props("initialised for")},
                "providerConfigRef": {"type": "object", "properties": {"name": {"type": "string", "description": "Name of the referenced object."}}, "required": ["name"]}},
                "required": ["forProvider"]},
            "status": {"type": "object", "description": format!("{kind}Status defines the observed state of {kind}."), "properties": {
                "atProvider": {"type": "object", "properties": props("observed on")},
                "conditions": {"type": "array", "description": "Conditions of the resource.", "items": {"type": "object", "required": ["lastTransitionTime", "reason", "status", "type"], "properties": {
                    "lastTransitionTime": {"type": "string", "format": "date-time", "description": "LastTransitionTime is the last time this condition transitioned from one status to another."},
                    "message": {"type": "string", "description": "A Message containing details about this condition's last transition from one status to another, if any."},
                    "reason": {"type": "string", "description": "A Reason for this condition's last transition from one status to another."},
                    "status": {"type": "string", "description": "Status of this condition; is it currently True, False, or Unknown?"},
                    "type": {"type": "string", "description": "Type of this condition. At most one of each condition type may apply to a resource at any point in time."}}},
                    "x-kubernetes-list-map-keys": ["type"], "x-kubernetes-list-type": "map"},
                "observedGeneration": {"type": "integer", "format": "int64"}}}}})
}

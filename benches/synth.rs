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
//!   scaled to zero, owner references to recreated owners, cross-namespace references.
//!
//! Every object carries realistic `managedFields` unless `--metadata-only-lean` is given;
//! `--full` adds spec and status bodies to every object (what `kubectl get -o json` returns).
//! The same flags and `--seed` always give the same bytes.

#![allow(dead_code)]

use std::io::Write;

use serde_json::{json, Value};

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
}

impl Default for Options {
    fn default() -> Self {
        Options { objects: 10_000, namespaces: 100, crds: 300, crd_groups: 30, seed: 1, full: false, managed_fields: true, chain_depth: 1000 }
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
}

pub const NOW: &str = "2026-11-29T12:00:00Z";

pub struct Writer<W: Write> {
    w: W,
    first: bool,
    count: usize,
    rng: Rng,
    opts: Options,
}

impl<W: Write> Writer<W> {
    fn uid(&mut self) -> String {
        let h = self.rng.hex(32);
        format!("{}-{}-{}-{}-{}", &h[0..8], &h[8..12], &h[12..16], &h[16..20], &h[20..32])
    }

    fn emit(&mut self, mut o: Value) -> std::io::Result<()> {
        if self.opts.managed_fields {
            let manager = o["metadata"]["labels"]["app.kubernetes.io/managed-by"].as_str().unwrap_or("kube-controller-manager").to_string();
            o["metadata"]["managedFields"] = json!([
                {"manager": manager, "operation": "Update", "apiVersion": o["apiVersion"], "time": "2026-11-20T10:00:00Z", "fieldsType": "FieldsV1",
                 "fieldsV1": {"f:metadata": {"f:labels": {".": {}, "f:app": {}, "f:app.kubernetes.io/managed-by": {}}, "f:ownerReferences": {".": {}, "k:{\"uid\":\"x\"}": {}}},
                              "f:spec": {".": {}, "f:replicas": {}, "f:selector": {}, "f:template": {"f:metadata": {"f:labels": {".": {}, "f:app": {}}}, "f:spec": {"f:containers": {"k:{\"name\":\"main\"}": {".": {}, "f:image": {}, "f:name": {}, "f:resources": {}}}}}}}},
                {"manager": "kubectl-client-side-apply", "operation": "Update", "apiVersion": o["apiVersion"], "time": "2026-11-19T09:00:00Z", "fieldsType": "FieldsV1",
                 "fieldsV1": {"f:metadata": {"f:annotations": {".": {}, "f:kubectl.kubernetes.io/last-applied-configuration": {}}}}}
            ]);
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
            // what a real cluster returns besides metadata: a pod template's worth of spec
            let kind = o["kind"].as_str().unwrap_or("").to_string();
            let containers = json!([{"name": "main", "image": "registry.example.com/team/app:v1.42.7",
                "args": ["--port=8080", "--log-level=info"],
                "env": [{"name": "MODE", "value": "production"}, {"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
                        {"name": "CACHE_SIZE", "value": "512Mi"}, {"name": "REGION", "value": "eu-west-1"}],
                "ports": [{"name": "http", "containerPort": 8080, "protocol": "TCP"}],
                "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}, "limits": {"memory": "256Mi"}},
                "readinessProbe": {"httpGet": {"path": "/healthz", "port": 8080}, "periodSeconds": 10},
                "volumeMounts": [{"name": "config", "mountPath": "/etc/app"}, {"name": "kube-api-access", "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount", "readOnly": true}],
                "terminationMessagePath": "/dev/termination-log", "imagePullPolicy": "IfNotPresent"}]);
            match kind.as_str() {
                "Pod" => {
                    o["spec"]["containers"] = containers;
                    o["spec"]["restartPolicy"] = json!("Always");
                    o["spec"]["dnsPolicy"] = json!("ClusterFirst");
                    o["spec"]["tolerations"] = json!([{"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}]);
                    o["status"]["podIP"] = json!("10.244.3.17");
                    o["status"]["containerStatuses"] = json!([{"name": "main", "ready": true, "restartCount": 0, "image": "registry.example.com/team/app:v1.42.7",
                        "imageID": "registry.example.com/team/app@sha256:5d1c3c0cbbbe3bb0b2c8d8a5e6ef1a6c5ce0d5e0a4f6b1c7d2e9a0b4c3d2e1f0",
                        "containerID": "containerd://2b7c9f0e3d4a5b6c7d8e9f0a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6e7f8a9b0c", "started": true,
                        "state": {"running": {"startedAt": "2026-11-20T10:01:00Z"}}}]);
                }
                "Deployment" | "StatefulSet" | "ReplicaSet" => {
                    o["spec"]["template"] = json!({"metadata": {"labels": {"app": o["metadata"]["name"]}}, "spec": {"containers": containers}});
                }
                "ConfigMap" => o["data"] = json!({"app.yaml": "server:\n  port: 8080\n  timeout: 30s\nfeatures:\n  - a\n  - b\n"}),
                "Secret" => o["data"] = json!({"password": "c2VjcmV0LXBhc3N3b3JkLXZhbHVl", "username": "YWRtaW4="}),
                "Service" => o["spec"] = json!({"type": "ClusterIP", "clusterIP": "10.96.12.34", "ports": [{"name": "http", "port": 80, "targetPort": 8080, "protocol": "TCP"}], "selector": {"app": o["metadata"]["name"]}}),
                _ => {}
            }
        } else {
            let kind = o["kind"].as_str().unwrap_or("").to_string();
            let keep = matches!(kind.as_str(), "Namespace" | "Node" | "Pod" | "Lease" | "CustomResourceDefinition" | "Deployment" | "ReplicaSet" | "StatefulSet" | "ClusterRole" | "ClusterRoleBinding" | "PersistentVolumeClaim");
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
    let mut s = Writer { w, first: true, count: 0, rng: Rng(opts.seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1), opts: opts.clone() };
    let mut lm = Landmarks::default();
    s.w.write_all(format!("{{\"apiVersion\":\"v1\",\"kind\":\"List\",\"metadata\":{{}},\"capturedAt\":\"{NOW}\",\"items\":[\n").as_bytes())?;
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
        let resources: Vec<String> = kinds.iter().filter(|k| k.0 == group).flat_map(|k| [k.2.clone(), format!("{}/finalizers", k.2)]).collect();
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
                    s.emit(json!({"apiVersion":"apps/v1","kind":"Deployment","metadata":meta(&base,Some(ns),&d,created),
                        "spec":{"replicas":3},"status":{"replicas":3,"readyReplicas":3}}))?;
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
    Ok((s.count, lm))
}

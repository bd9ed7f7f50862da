//! Workloads (Deployment, StatefulSet, DaemonSet, bare ReplicaSet, Job, bare Pod), the Pods they
//! run, the ServiceAccounts those run as, and whether a workload is up: ready Pods, replicas,
//! scale to zero, crash loops.

use std::sync::OnceLock;

use rustc_hash::FxHashMap;

use serde::Deserialize;
use std::fmt;

use k8s_openapi::jiff::Timestamp;

use super::ControllerState;
use crate::graph::{Graph, NodeId};
use crate::snapshot::Object;

/// A ServiceAccount: namespace and name.
pub type SaKey = (String, String);

/// The workload that runs a controller, as `removed_by` names it: `Deployment site-system/site-operator`.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Controller {
    /// `Deployment`, `StatefulSet`, `DaemonSet`, `Pod`, …
    pub kind: String,
    /// Its namespace.
    pub namespace: Option<String>,
    /// Its name.
    pub name: String,
}

impl Controller {
    /// The workload that is `o`.
    pub fn of(o: &Object) -> Controller {
        Controller { kind: o.kind.clone(), namespace: o.namespace.clone(), name: o.name.clone() }
    }
    /// The API group of its kind: `apps`, `batch`, or the core group.
    pub fn group(&self) -> &'static str {
        match self.kind.as_str() {
            "Deployment" | "StatefulSet" | "DaemonSet" | "ReplicaSet" => "apps",
            "Job" => "batch",
            _ => "",
        }
    }
}

/// The pods of a workload, in node order: found down its dependents, through the same
/// controller references (at most three) that lead a pod up to it.
pub fn pods_of(g: &Graph, workload: NodeId) -> Vec<NodeId> {
    let mut pods = Vec::new();
    let mut level = vec![workload];
    for _ in 0..=3 {
        let mut next = Vec::new();
        for &n in &level {
            if is_pod(g, n) && workload_of(g, n) == workload {
                pods.push(n);
            }
            next.extend(g.node(n).dependents.iter().copied().filter(|&d| g.controller_of(d) == Some(n)));
        }
        level = next;
    }
    pods.sort_unstable();
    pods.dedup();
    pods
}

/// The replicas a workload asks for, and the ready ones its status counts.
fn replicas(o: &Object) -> (i64, i64) {
    match (o.group(), o.kind.as_str()) {
        ("", "Pod") => (1, i64::from(pod_ready(o))),
        ("apps", "DaemonSet") => {
            (int(o, "/status/desiredNumberScheduled").unwrap_or(1), int(o, "/status/numberReady").unwrap_or(0))
        }
        ("batch", "Job") => (int(o, "/spec/parallelism").unwrap_or(1), int(o, "/status/ready").unwrap_or(0)),
        _ => (int(o, "/spec/replicas").unwrap_or(1), int(o, "/status/readyReplicas").unwrap_or(0)),
    }
}

/// Whether the workload asks for no replica at all (`spec.replicas: 0`; a DaemonSet scheduled
/// nowhere): scaling it back up is what restores it.
pub fn scaled_to_zero(o: &Object) -> bool {
    !o.body.is_empty() && replicas(o).0 == 0
}

impl fmt::Display for Controller {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.namespace {
            Some(ns) => write!(f, "{} {ns}/{}", self.kind, self.name),
            None => write!(f, "{} {}", self.kind, self.name),
        }
    }
}

/// `Kind ns/name` of any object, for evidence.
pub fn describe(o: &Object) -> String {
    Controller::of(o).to_string()
}

fn is_workload(group: &str, kind: &str) -> bool {
    matches!(
        (group, kind),
        ("apps", "Deployment" | "StatefulSet" | "DaemonSet" | "ReplicaSet")
            | ("", "ReplicationController")
            | ("batch", "Job")
    )
}

/// Kinds that carry a pod template and can be matched by template ServiceAccount or container name.
fn has_template(group: &str, kind: &str) -> bool {
    matches!((group, kind), ("apps", "Deployment" | "StatefulSet" | "DaemonSet"))
}

/// The two things the indexes read of a pod spec. Read straight from the body's text, every
/// other field skipped: a million pods are indexed without building their specs. `C`: what is
/// read of each container, its name ([`Container`]) or, for the by-name index only, what it
/// runs ([`Programs`]).
#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default, bound(deserialize = "C: Deserialize<'de> + Default"))]
struct PodSpecOf<C> {
    service_account_name: Option<String>,
    service_account: Option<String>,
    containers: Vec<C>,
}

type PodSpec = PodSpecOf<Container>;

#[derive(Deserialize, Default)]
#[serde(default)]
struct Container {
    name: Option<String>,
}

/// What a container runs: read only for workloads and bare pods, when the by-name index is built.
#[derive(Deserialize, Default)]
#[serde(default)]
struct Programs {
    command: Vec<String>,
    args: Vec<String>,
    image: Option<String>,
}

impl Programs {
    /// The names a client in this container goes by when it names itself: the programs its
    /// command and args run (client-go's default field manager and event component are the
    /// binary's name: `/usr/local/bin/lanternd` is `lanternd`; a framework's runner,
    /// `kopf run …`, is `kopf`), and its image's repository (`…/nightwatch/controller:v2` is
    /// `controller`). Flags, `k=v` pairs and URLs name no program.
    fn program_names(&self) -> Vec<String> {
        let words = self.command.iter().chain(&self.args).flat_map(|a| a.split_whitespace());
        let mut out: Vec<String> = words
            .filter(|w| !w.starts_with('-') && !w.contains('=') && !w.contains("://") && !w.contains('$'))
            .filter_map(|w| w.rsplit('/').next())
            .filter(|b| !b.is_empty())
            .map(str::to_string)
            .collect();
        if let Some(repo) = self.image.as_deref().map(image_repository) {
            out.push(repo.to_string());
        }
        out.sort_unstable();
        out.dedup();
        out
    }
}

/// The last path segment of an image reference, without tag or digest:
/// `registry:5000/org/controller:v1@sha256:…` is `controller`.
fn image_repository(image: &str) -> &str {
    let no_digest = image.split('@').next().unwrap_or(image);
    let last = no_digest.rsplit('/').next().unwrap_or(no_digest);
    last.split(':').next().unwrap_or(last)
}

#[derive(Deserialize, Default)]
#[serde(default, bound(deserialize = "C: Deserialize<'de> + Default"))]
struct PodBody<C> {
    spec: Option<PodSpecOf<C>>,
}

#[derive(Deserialize, Default)]
#[serde(default, bound(deserialize = "C: Deserialize<'de> + Default"))]
struct TemplateBody<C> {
    spec: Option<TemplateSpec<C>>,
}

#[derive(Deserialize, Default)]
#[serde(default, bound(deserialize = "C: Deserialize<'de> + Default"))]
struct TemplateSpec<C> {
    template: Option<PodBody<C>>,
}

impl PodSpecOf<Programs> {
    fn program_names(&self) -> Vec<String> {
        self.containers.iter().flat_map(Programs::program_names).collect()
    }
}

impl PodSpec {
    /// The ServiceAccount the pod runs as (`default` when unset).
    fn service_account(&self) -> String {
        [&self.service_account_name, &self.service_account]
            .into_iter()
            .flatten()
            .find(|s| !s.is_empty())
            .map_or("default", |s| s.as_str())
            .to_string()
    }

    fn container_names(&self) -> impl Iterator<Item = &str> {
        self.containers.iter().filter_map(|c| c.name.as_deref())
    }
}

/// Questions about workloads and the pods they run, answered from the graph when asked: each
/// looks at one namespace or one workload's dependents, so a question about one finalizer
/// never reads a million pods. Only the cluster-wide by-name index is built, on first use.
pub struct Workloads<'g> {
    g: &'g Graph,
    named: OnceLock<Named>,
}

/// Workloads and bare pods by name, by container name, and by the ServiceAccount and the
/// `app.kubernetes.io/name` (or `app`) label they run under: the names a finalizer or a field
/// manager can point at even when no specific RBAC rule does (a controller bound to cluster-admin).
#[derive(Default)]
struct Named {
    by_name: FxHashMap<String, Vec<NodeId>>,
    by_container: FxHashMap<String, Vec<NodeId>>,
    by_account: FxHashMap<String, Vec<NodeId>>,
    by_label: FxHashMap<String, Vec<NodeId>>,
    /// By the programs their containers run and their images' repositories: what a client's
    /// self-given name (a field manager, an event's component) resolves against when no
    /// workload bears it. Never a finalizer's name: a product's images all bear its name.
    by_program: FxHashMap<String, Vec<NodeId>>,
}

/// How a workload matched a name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum NamedBy {
    Name,
    Container,
    ServiceAccount,
    Label,
    Program,
}

impl NamedBy {
    pub fn label(self) -> &'static str {
        match self {
            NamedBy::Name => "its name",
            NamedBy::Container => "a container",
            NamedBy::ServiceAccount => "its ServiceAccount",
            NamedBy::Label => "its app label",
            NamedBy::Program => "a program its containers run, or their image",
        }
    }
}

fn is_pod(g: &Graph, id: NodeId) -> bool {
    g.observed_kind(id) == Some(("", "Pod"))
}

fn pod_spec<C: serde::de::DeserializeOwned + Default>(o: &Object) -> PodSpecOf<C> {
    o.body.read::<PodBody<C>>().spec.unwrap_or_default()
}

fn template_spec<C: serde::de::DeserializeOwned + Default>(o: &Object) -> PodSpecOf<C> {
    o.body.read::<TemplateBody<C>>().spec.and_then(|s| s.template).and_then(|t| t.spec).unwrap_or_default()
}

impl<'g> Workloads<'g> {
    pub fn new(g: &'g Graph) -> Workloads<'g> {
        Workloads { g, named: OnceLock::new() }
    }

    fn named(&self) -> &Named {
        self.named.get_or_init(|| {
            let g = self.g;
            let mut n = Named::default();
            let kinds = [("", "Pod"), ("apps", "Deployment"), ("apps", "StatefulSet"), ("apps", "DaemonSet")];
            for id in g.of_kinds(&kinds) {
                let Some(o) = g.object(id) else { continue };
                let (spec, programs): (PodSpec, PodSpecOf<Programs>) = if is_pod(g, id) {
                    if workload_of(g, id) != id {
                        continue;
                    }
                    (pod_spec(o), pod_spec(o))
                } else {
                    (template_spec(o), template_spec(o))
                };
                n.by_name.entry(o.name.clone()).or_default().push(id);
                for c in spec.container_names() {
                    n.by_container.entry(c.to_string()).or_default().push(id);
                }
                for p in programs.program_names() {
                    n.by_program.entry(p).or_default().push(id);
                }
                n.by_account.entry(spec.service_account()).or_default().push(id);
                if let Some(app) = o.label("app.kubernetes.io/name").or_else(|| o.label("app")) {
                    n.by_label.entry(app.to_string()).or_default().push(id);
                }
            }
            for v in n
                .by_container
                .values_mut()
                .chain(n.by_account.values_mut())
                .chain(n.by_label.values_mut())
                .chain(n.by_program.values_mut())
            {
                v.dedup();
            }
            n
        })
    }

    /// The workload a pod belongs to (the pod itself when it has no workload owner); `None`
    /// for anything but a pod.
    pub fn workload_of_pod(&self, pod: NodeId) -> Option<NodeId> {
        is_pod(self.g, pod).then(|| workload_of(self.g, pod))
    }

    /// The pods of a workload ([`pods_of`]).
    pub fn pods_of(&self, workload: NodeId) -> Vec<NodeId> {
        pods_of(self.g, workload)
    }

    /// Pods in the ServiceAccount's namespace that run as it, in node order.
    pub fn pods_running_as(&self, sa: &SaKey) -> Vec<NodeId> {
        let g = self.g;
        g.in_namespace(Some(&sa.0))
            .filter(|&(id, o)| is_pod(g, id) && pod_spec::<Container>(o).service_account() == sa.1)
            .map(|(id, _)| id)
            .collect()
    }

    /// Deployments, StatefulSets and DaemonSets whose pod template runs as `sa`.
    pub fn templated_as(&self, sa: &SaKey) -> Vec<NodeId> {
        let g = self.g;
        g.in_namespace(Some(&sa.0))
            .filter(|&(id, o)| {
                g.observed_kind(id).is_some_and(|(group, kind)| has_template(group, kind))
                    && template_spec::<Container>(o).service_account() == sa.1
            })
            .map(|(id, _)| id)
            .collect()
    }

    /// Workloads (or bare pods) named `name`, or with a container, ServiceAccount (other than
    /// `default`), app label, program or image of that name: where a client that calls itself
    /// `name` runs.
    pub fn named_or_running(&self, name: &str) -> Vec<NodeId> {
        let n = self.named();
        let account = if name == "default" { None } else { n.by_account.get(name) };
        let mut v: Vec<NodeId> = n
            .by_name
            .get(name)
            .into_iter()
            .chain(n.by_container.get(name))
            .chain(account)
            .chain(n.by_label.get(name))
            .chain(n.by_program.get(name))
            .flatten()
            .copied()
            .collect();
        v.sort_unstable();
        v.dedup();
        v
    }

    /// Workloads (or bare pods) that `matches` names by their name, a container, their
    /// ServiceAccount or their app label, each with the first way it matched. The `default`
    /// ServiceAccount names nothing.
    pub fn named_by(&self, matches: impl Fn(&str) -> bool) -> Vec<(NodeId, NamedBy)> {
        let n = self.named();
        let mut v: Vec<(NodeId, NamedBy)> = Vec::new();
        let indexes = [
            (&n.by_name, NamedBy::Name),
            (&n.by_container, NamedBy::Container),
            (&n.by_account, NamedBy::ServiceAccount),
            (&n.by_label, NamedBy::Label),
        ];
        for (index, how) in indexes {
            for (key, ids) in index.iter() {
                if (how == NamedBy::ServiceAccount && key == "default") || !matches(key) {
                    continue;
                }
                v.extend(ids.iter().map(|&id| (id, how)));
            }
        }
        v.sort_unstable();
        v.dedup_by_key(|(id, _)| *id);
        v
    }

    /// The ServiceAccount a workload's pods (or a bare pod) run as.
    pub fn service_account_of(&self, wl: NodeId) -> Option<SaKey> {
        let g = self.g;
        let o = g.object(wl)?;
        let ns = o.namespace.clone()?;
        let spec: PodSpec = if is_pod(g, wl) {
            pod_spec(o)
        } else if g.observed_kind(wl).is_some_and(|(group, kind)| has_template(group, kind)) {
            template_spec(o)
        } else {
            return None;
        };
        Some((ns, spec.service_account()))
    }

    /// How a workload that [`Workloads::named_or_running`] found bears `name`: the first of its
    /// name, a container, its ServiceAccount, its app label, a program or image.
    pub fn how_named(&self, wl: NodeId, name: &str) -> Option<NamedBy> {
        let n = self.named();
        let has = |index: &FxHashMap<String, Vec<NodeId>>| index.get(name).is_some_and(|v| v.contains(&wl));
        [
            (&n.by_name, NamedBy::Name),
            (&n.by_container, NamedBy::Container),
            (&n.by_account, NamedBy::ServiceAccount),
            (&n.by_label, NamedBy::Label),
            (&n.by_program, NamedBy::Program),
        ]
        .into_iter()
        .find(|(index, how)| (*how != NamedBy::ServiceAccount || name != "default") && has(index))
        .map(|(_, how)| how)
    }

    pub fn is_named(&self, wl: NodeId, name: &str) -> bool {
        self.g.object(wl).is_some_and(|o| o.name == name)
    }
}

/// Follows controller owner references from a pod up to its workload: Pod → ReplicaSet →
/// Deployment, Pod → StatefulSet/DaemonSet/Job. A pod with no observed workload owner is its own.
fn workload_of(g: &Graph, pod: NodeId) -> NodeId {
    let mut cur = pod;
    for _ in 0..3 {
        let Some(owner) = g.controller_of(cur) else { break };
        // a virtual owner has no observed kind
        let Some((group, kind)) = g.observed_kind(owner) else { break };
        if !is_workload(group, kind) {
            break;
        }
        cur = owner;
        if kind != "ReplicaSet" {
            break;
        }
    }
    cur
}

/// A controller's state with its evidence, and since when it is down where known.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct State {
    pub state: ControllerState,
    pub evidence: Vec<String>,
    pub since: Option<Timestamp>,
}

fn int(o: &Object, ptr: &str) -> Option<i64> {
    o.field(ptr).and_then(|v| v.as_i64())
}

fn pod_ready(p: &Object) -> bool {
    !p.is_deleting() && p.condition("Ready").is_some_and(|c| c.is_true())
}

/// A crash-looping container of a pod: (container, restarts), when its waiting reason is
/// CrashLoopBackOff, or it has restarted at least 5 times and is not ready.
fn crash_loop(p: &Object) -> Option<(String, i64)> {
    let statuses = p.field("/status/containerStatuses")?.as_array()?;
    statuses.iter().find_map(|c| {
        let name = c.get("name").and_then(|v| v.as_str()).unwrap_or("?").to_string();
        let restarts = c.get("restartCount").and_then(|v| v.as_i64()).unwrap_or(0);
        let waiting = c.pointer("/state/waiting/reason").and_then(|v| v.as_str());
        let ready = c.get("ready").and_then(|v| v.as_bool()).unwrap_or(false);
        (waiting == Some("CrashLoopBackOff") || (restarts >= 5 && !ready)).then_some((name, restarts))
    })
}

/// Why a pod is not ready, in a few words: its phase and any waiting reason.
fn pod_trouble(p: &Object) -> String {
    let phase = p.str_field("/status/phase").unwrap_or("unknown phase");
    let waiting = p
        .field("/status/containerStatuses")
        .and_then(|v| v.as_array())
        .into_iter()
        .flatten()
        .find_map(|c| c.pointer("/state/waiting/reason").and_then(|v| v.as_str()));
    match (p.is_deleting(), waiting) {
        (true, _) => format!("Pod {} is terminating", p.name),
        (false, Some(w)) => format!("Pod {} is {phase}, waiting: {w}", p.name),
        (false, None) => format!("Pod {} is {phase} and not Ready", p.name),
    }
}

/// Whether a workload is running: Alive with a ready pod (or ready replicas in its status), else
/// Down — scaled to zero, crash-looping, or with no ready replica — saying since when where known.
pub fn workload_state(g: &Graph, w: &Workloads, wl: NodeId) -> State {
    let Some(o) = g.object(wl) else {
        return State {
            state: ControllerState::Missing,
            evidence: vec!["the workload is not in the snapshot".into()],
            since: None,
        };
    };
    let name = describe(o);
    if o.body.is_empty() && crate::snapshot::object::keeps_body(o.group(), &o.kind) {
        // read metadata-only (a live answer reads workload bodies only where controllers live):
        // its replicas are not known, and a guess would be a false "Down"
        return State {
            state: ControllerState::Unknown,
            evidence: vec![format!("{name}'s spec and status were not read")],
            since: None,
        };
    }
    let pods: Vec<&Object> = w.pods_of(wl).iter().filter_map(|&p| g.object(p)).collect();
    let (desired, status_ready) = replicas(o);
    let ready: Vec<&str> = pods.iter().filter(|p| pod_ready(p)).map(|p| p.name.as_str()).collect();
    let mut evidence = Vec::new();
    if o.is_deleting() {
        evidence.push(format!("{name} is itself being deleted"));
    }
    if !ready.is_empty() || status_ready > 0 {
        let shown = if ready.is_empty() {
            format!("{status_ready}/{desired} ready replicas in its status")
        } else {
            format!("{}/{desired} ready (Pod {} Ready)", ready.len().max(status_ready as usize), ready.join(", "))
        };
        evidence.push(format!("{name}: {shown}"));
        return State { state: ControllerState::Alive, evidence, since: None };
    }
    let since = o.condition("Available").filter(|c| !c.is_true()).and_then(|c| c.last_transition_time).or_else(|| {
        pods.iter()
            .filter_map(|p| p.condition("Ready").filter(|c| !c.is_true()).and_then(|c| c.last_transition_time))
            .min()
    });
    if scaled_to_zero(o) {
        let field = if o.kind == "DaemonSet" { "status.desiredNumberScheduled" } else { "spec.replicas" };
        evidence.push(format!("{name} is scaled to zero ({field}: 0)"));
    } else if let Some((p, (c, n))) = pods.iter().find_map(|p| crash_loop(p).map(|x| (p, x))) {
        evidence.push(format!(
            "{name} has no ready replica (0/{desired}): Pod {} container {c} is crash-looping (CrashLoopBackOff, {n} restarts)",
            p.name
        ));
    } else {
        let mut line = format!("{name} has no ready replica (0/{desired})");
        if pods.is_empty() {
            line.push_str(", and no Pod of it is in the snapshot");
        } else {
            let trouble: Vec<String> = pods.iter().take(3).map(|p| pod_trouble(p)).collect();
            line.push_str(&format!(": {}", trouble.join("; ")));
        }
        evidence.push(line);
    }
    State { state: ControllerState::Down, evidence, since }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::controllers::tests::graph_of;

    #[test]
    fn a_container_goes_by_the_programs_it_runs_and_its_image() {
        let p = Programs {
            command: vec!["/bin/sh".into(), "-c".into(), "exec /usr/local/bin/lanternd --probe=:8081".into()],
            args: vec!["--status-api=https://status.example.io/api/v2".into(), "s3://bucket/x".into()],
            image: Some("registry.example.com:5000/ops/ctl:v2.3@sha256:ab12".into()),
        };
        assert_eq!(p.program_names(), ["ctl", "exec", "lanternd", "sh"]);
        assert_eq!(image_repository("nginx"), "nginx");
        assert_eq!(image_repository("ghcr.io/org/operator:1.0"), "operator");
    }

    #[test]
    fn pods_resolve_through_replicasets_to_their_deployment() {
        let g = graph_of(&[
            r#"{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"op","namespace":"s","uid":"d"},
                "spec":{"replicas":1,"template":{"spec":{"serviceAccountName":"op-sa","containers":[{"name":"manager"}]}}}}"#,
            r#"{"apiVersion":"apps/v1","kind":"ReplicaSet","metadata":{"name":"op-1","namespace":"s","uid":"r",
                "ownerReferences":[{"apiVersion":"apps/v1","kind":"Deployment","name":"op","uid":"d","controller":true}]}}"#,
            r#"{"apiVersion":"v1","kind":"Pod","metadata":{"name":"op-1-a","namespace":"s","uid":"p",
                "ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"op-1","uid":"r","controller":true}]},
                "spec":{"serviceAccountName":"op-sa"}}"#,
        ]);
        let w = Workloads::new(&g);
        let pod = g.find("", "Pod", Some("s"), "op-1-a").unwrap();
        let dep = g.find("apps", "Deployment", Some("s"), "op").unwrap();
        assert_eq!(w.workload_of_pod(pod), Some(dep));
        let sa = ("s".to_string(), "op-sa".to_string());
        assert_eq!(w.pods_running_as(&sa), [pod]);
        assert_eq!(w.templated_as(&sa), [dep]);
        assert_eq!(w.named_or_running("manager"), [dep]);
    }
}

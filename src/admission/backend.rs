//! Whether the backend of a webhook (admission or conversion) or of an APIService can serve.
//!
//! The API server calls a webhook at `clientConfig.service` (a Service, reached through its
//! endpoints) or at `clientConfig.url` (anywhere). Only the first can be judged from the
//! cluster: the Service must exist, must not be in a namespace being deleted (the namespace
//! controller deletes its pods first, and nothing can be created there again), and must have a
//! ready endpoint (EndpointSlice `endpoints[].conditions.ready`; unset means ready, as the
//! EndpointSlice API documents; `Endpoints.subsets[].addresses` when no slice was read).

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use serde_json::Value;

use crate::graph::{Graph, NodeId};

/// What a `clientConfig` points at.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Target {
    /// `clientConfig.service`: a Service, called through its endpoints.
    Service {
        /// The Service's namespace.
        namespace: String,
        /// The Service's name.
        name: String,
        /// The Service port called (`clientConfig.service.port`, 443 when unset).
        port: i64,
    },
    /// `clientConfig.url`: an address outside the cluster's view, never judged.
    Url(String),
    /// Neither set: the configuration is invalid and the API server never admits it.
    None,
}

/// Reads `clientConfig` (admission webhooks, `spec.conversion.webhook.clientConfig` of a CRD).
pub fn target_of(client_config: Option<&Value>) -> Target {
    let Some(c) = client_config else { return Target::None };
    if let Some(s) = c.get("service") {
        let str_of = |k: &str| s.get(k).and_then(Value::as_str).unwrap_or("").to_string();
        let port = s.get("port").and_then(Value::as_i64).unwrap_or(443);
        return Target::Service { namespace: str_of("namespace"), name: str_of("name"), port };
    }
    match c.get("url").and_then(Value::as_str) {
        Some(u) => Target::Url(u.to_string()),
        None => Target::None,
    }
}

/// The judged state of a backend.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Backend {
    /// A ready endpoint exists.
    Serving {
        /// The Service read.
        service: NodeId,
    },
    /// No Service of that name was read, and Services were readable.
    ServiceMissing,
    /// The Service exists but exposes no port the webhook calls: the API server's resolver
    /// (`util/proxy` `findServicePort`, by ClusterIP or by endpoint) fails every call.
    NoSuchPort {
        /// The Service read.
        service: NodeId,
        /// The port called.
        port: i64,
        /// The ports it exposes.
        exposed: Vec<i64>,
    },
    /// The Service exists, its endpoints were read, and none is ready.
    NoReadyEndpoints {
        /// The Service read.
        service: NodeId,
        /// How many endpoints were read not ready (0: none at all).
        not_ready: usize,
    },
    /// The Service is in a namespace being deleted: whatever serves it is going or gone and
    /// cannot be recreated there.
    NamespaceTerminating {
        /// The Service, if it was read (it may already be gone).
        service: Option<NodeId>,
        /// The namespace being deleted.
        namespace: String,
    },
    /// Not judgeable from the cluster: a `url`, an ExternalName Service, or endpoints that were
    /// not read. The string says which.
    Unknown(String),
}

impl Backend {
    /// The API server cannot reach anything: calls fail (and a `failurePolicy: Fail` webhook
    /// rejects the request).
    pub fn is_dead(&self) -> bool {
        matches!(
            self,
            Backend::ServiceMissing
                | Backend::NoSuchPort { .. }
                | Backend::NoReadyEndpoints { .. }
                | Backend::NamespaceTerminating { .. }
        )
    }

    /// The Service read behind the backend, when one was.
    pub fn service(&self) -> Option<NodeId> {
        match self {
            Backend::Serving { service }
            | Backend::NoReadyEndpoints { service, .. }
            | Backend::NoSuchPort { service, .. } => Some(*service),
            Backend::NamespaceTerminating { service, .. } => *service,
            _ => None,
        }
    }

    /// Why it cannot serve, or why it cannot be judged, for messages.
    pub fn describe(&self, target: &Target) -> String {
        let svc = match target {
            Target::Service { namespace, name, .. } => format!("Service {namespace}/{name}"),
            Target::Url(u) => format!("URL {u}"),
            Target::None => "no backend".into(),
        };
        match self {
            Backend::Serving { .. } => format!("{svc} has a ready endpoint"),
            Backend::ServiceMissing => format!("{svc} does not exist"),
            Backend::NoSuchPort { port, exposed, .. } => format!(
                "{svc} exposes no port {port}, the one called (it exposes {})",
                if exposed.is_empty() {
                    "none".to_string()
                } else {
                    exposed.iter().map(i64::to_string).collect::<Vec<_>>().join(", ")
                }
            ),
            Backend::NoReadyEndpoints { not_ready: 0, .. } => format!("{svc} has no endpoints"),
            Backend::NoReadyEndpoints { not_ready, .. } => {
                format!("{svc} has no ready endpoint ({not_ready} not ready)")
            }
            Backend::NamespaceTerminating { service: Some(_), namespace } => {
                format!("{svc} is in namespace {namespace}, which is being deleted")
            }
            Backend::NamespaceTerminating { service: None, namespace } => {
                format!("{svc} is gone with namespace {namespace}, which is being deleted")
            }
            Backend::Unknown(why) => format!("{svc}: {why}"),
        }
    }
}

/// Judges the backend a `clientConfig` names (one question: [`Backends`] keeps the answers
/// when many webhooks are judged).
pub fn judge(g: &Graph, target: &Target) -> Backend {
    Backends::default().judge(g, target)
}

/// Ready and not-ready endpoint counts per Service (namespace, name), from one pass over the
/// EndpointSlices; None when no slice can be used.
type SliceCounts = Option<HashMap<(String, String), (usize, usize)>>;

/// Backends judged once each: every webhook calling the same Service gets the same verdict
/// without another look at it, and the EndpointSlices are read in one pass for all of them.
#[derive(Default)]
pub struct Backends {
    judged: Mutex<HashMap<Target, Backend>>,
    slices: OnceLock<SliceCounts>,
}

impl Backends {
    /// The judged state of `target`'s backend, judged on first ask.
    pub fn judge(&self, g: &Graph, target: &Target) -> Backend {
        if let Some(b) = self.judged.lock().unwrap_or_else(|e| e.into_inner()).get(target) {
            return b.clone();
        }
        let b = self.judge_now(g, target);
        self.judged.lock().unwrap_or_else(|e| e.into_inner()).insert(target.clone(), b.clone());
        b
    }

    /// How many backends were judged (each once).
    #[cfg(test)]
    pub(crate) fn judged_count(&self) -> usize {
        self.judged.lock().unwrap_or_else(|e| e.into_inner()).len()
    }

    fn judge_now(&self, g: &Graph, target: &Target) -> Backend {
        let (namespace, name, port) = match target {
            Target::Service { namespace, name, port } => (namespace.as_str(), name.as_str(), *port),
            Target::Url(_) => {
                return Backend::Unknown(
                    "a URL outside the cluster's Services; whether it answers cannot be judged".into(),
                );
            }
            Target::None => return Backend::ServiceMissing,
        };
        let service = g.find("", "Service", Some(namespace), name);
        if namespace_terminating(g, namespace) {
            return Backend::NamespaceTerminating { service, namespace: namespace.to_string() };
        }
        let Some(service) = service else {
            if unread(g, "", "services") {
                return Backend::Unknown("Services could not be read".into());
            }
            return Backend::ServiceMissing;
        };
        let svc = g.object(service).expect("found nodes are observed");
        if svc.str_field("/spec/type") == Some("ExternalName") {
            return Backend::Unknown(format!(
                "an ExternalName Service (to {}) whose target cannot be judged",
                svc.str_field("/spec/externalName").unwrap_or("?")
            ));
        }
        // both resolvers (by ClusterIP, the default, and by endpoint) look the port up first;
        // a Service whose spec was not read is not judged on it
        if let Some(ports) = svc.field("/spec/ports").and_then(Value::as_array) {
            let exposed: Vec<i64> = ports.iter().filter_map(|p| p.get("port").and_then(Value::as_i64)).collect();
            if !exposed.contains(&port) {
                return Backend::NoSuchPort { service, port, exposed };
            }
        }
        if svc.str_field("/spec/clusterIP") == Some("None") {
            return Backend::Unknown(
                "a headless Service (clusterIP None): the API server reaches it only with --enable-aggregator-routing, else every call fails".into(),
            );
        }
        match self.endpoints(g, namespace, name) {
            Some((ready, _)) if ready > 0 => Backend::Serving { service },
            Some((_, not_ready)) => Backend::NoReadyEndpoints { service, not_ready },
            None => Backend::Unknown("neither its EndpointSlices nor its Endpoints were read".into()),
        }
    }

    /// (ready, not ready) endpoints of a Service: from its EndpointSlices when any
    /// EndpointSlice was read, else from its Endpoints object; None when neither kind was read.
    fn endpoints(&self, g: &Graph, namespace: &str, service: &str) -> Option<(usize, usize)> {
        if let Some(counts) = self.slices.get_or_init(|| slice_counts(g)) {
            return Some(counts.get(&(namespace.to_string(), service.to_string())).copied().unwrap_or((0, 0)));
        }
        endpoints_object(g, namespace, service)
    }
}

/// Every read EndpointSlice's endpoints counted per Service it serves (its
/// `kubernetes.io/service-name` label), ready or not.
fn slice_counts(g: &Graph) -> SliceCounts {
    let slices = g.of_kind("discovery.k8s.io", "EndpointSlice");
    if slices.is_empty() || unread(g, "discovery.k8s.io", "endpointslices") {
        return None;
    }
    let mut counts: HashMap<(String, String), (usize, usize)> = HashMap::new();
    for o in slices.iter().filter_map(|&s| g.object(s)) {
        let (Some(namespace), Some(service)) = (o.namespace.as_deref(), o.label("kubernetes.io/service-name")) else {
            continue;
        };
        let c = counts.entry((namespace.to_string(), service.to_string())).or_default();
        for e in o.field("/endpoints").and_then(Value::as_array).into_iter().flatten() {
            // "nil should be interpreted as ready" (discovery/v1 EndpointConditions)
            match e.pointer("/conditions/ready").and_then(Value::as_bool) {
                Some(false) => c.1 += 1,
                _ => c.0 += 1,
            }
        }
    }
    Some(counts)
}

/// (ready, not ready) addresses of a Service's Endpoints object, when Endpoints were read.
fn endpoints_object(g: &Graph, namespace: &str, service: &str) -> Option<(usize, usize)> {
    let eps = g.of_kind("", "Endpoints");
    if eps.is_empty() || unread(g, "", "endpoints") {
        return None;
    }
    let Some(o) = g.find("", "Endpoints", Some(namespace), service).and_then(|e| g.object(e)) else {
        return Some((0, 0));
    };
    let count = |key: &str| -> usize {
        o.field("/subsets")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .map(|s| s.get(key).and_then(Value::as_array).map_or(0, Vec::len))
            .sum()
    };
    Some((count("addresses"), count("notReadyAddresses")))
}

/// The pods behind a Service's ready endpoints (the EndpointSlices' `targetRef`s), when every
/// ready endpoint names a pod that was read; None otherwise. The planner uses it to tell when
/// deleting those pods leaves the Service with no ready endpoint.
pub fn ready_endpoint_pods(g: &Graph, namespace: &str, service: &str) -> Option<Vec<NodeId>> {
    let mut pods = Vec::new();
    for o in g.of_kind("discovery.k8s.io", "EndpointSlice").iter().filter_map(|&s| g.object(s)) {
        if o.namespace.as_deref() != Some(namespace) || o.label("kubernetes.io/service-name") != Some(service) {
            continue;
        }
        for e in o.field("/endpoints").and_then(Value::as_array).into_iter().flatten() {
            if e.pointer("/conditions/ready").and_then(Value::as_bool) == Some(false) {
                continue;
            }
            let r = e.get("targetRef")?;
            if r.get("kind").and_then(Value::as_str) != Some("Pod") {
                return None;
            }
            let ns = r.get("namespace").and_then(Value::as_str).unwrap_or(namespace);
            pods.push(g.find("", "Pod", Some(ns), r.get("name").and_then(Value::as_str)?)?);
        }
    }
    (!pods.is_empty()).then_some(pods)
}

/// Whether a namespace is being deleted (its deletionTimestamp is set).
pub fn namespace_terminating(g: &Graph, namespace: &str) -> bool {
    g.find("", "Namespace", None, namespace).and_then(|n| g.object(n)).is_some_and(|n| n.is_deleting())
}

/// Whether the snapshot says objects of a resource may not have been read, anywhere (by the
/// gaps' typed fields: its list, its group's discovery; a line without fields may hide any).
pub fn unread(g: &Graph, group: &str, resource: &str) -> bool {
    g.gaps().iter().any(|s| s.may_hide(group, Some(resource), None))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::testing::{ObjExt, graph, obj};

    fn svc_target() -> Target {
        Target::Service { namespace: "hooks".into(), name: "hook".into(), port: 443 }
    }

    fn ns(name: &str) -> Value {
        obj("v1", "Namespace", None, name, &format!("ns-{name}"))
    }

    fn service() -> Value {
        obj("v1", "Service", Some("hooks"), "hook", "svc").with("spec", json!({"type": "ClusterIP"}))
    }

    fn slice(ready: Option<bool>) -> Value {
        let mut cond = json!({});
        if let Some(r) = ready {
            cond = json!({"ready": r});
        }
        let mut s = obj("discovery.k8s.io/v1", "EndpointSlice", Some("hooks"), "hook-abc", "sl")
            .with("endpoints", json!([{"addresses": ["10.0.0.1"], "conditions": cond}]));
        s["metadata"]["labels"] = json!({"kubernetes.io/service-name": "hook"});
        s
    }

    #[test]
    fn a_ready_endpoint_serves() {
        let g = graph(vec![ns("hooks"), service(), slice(Some(true))]);
        assert!(matches!(judge(&g, &svc_target()), Backend::Serving { .. }));
    }

    #[test]
    fn a_service_without_the_port_called_is_dead_whatever_its_endpoints() {
        let with_ports = |ports: Value, cluster_ip: &str| {
            obj("v1", "Service", Some("hooks"), "hook", "svc")
                .with("spec", json!({"type": "ClusterIP", "clusterIP": cluster_ip, "ports": ports}))
        };
        let at = |port: i64| Target::Service { namespace: "hooks".into(), name: "hook".into(), port };
        let g = graph(vec![
            ns("hooks"),
            with_ports(json!([{"port": 8443, "targetPort": 9443}]), "10.96.0.9"),
            slice(Some(true)),
        ]);
        let b = judge(&g, &at(443));
        assert!(matches!(&b, Backend::NoSuchPort { port: 443, exposed, .. } if exposed == &[8443]), "{b:?}");
        assert!(b.is_dead());
        assert_eq!(b.describe(&at(443)), "Service hooks/hook exposes no port 443, the one called (it exposes 8443)");
        assert!(matches!(judge(&g, &at(8443)), Backend::Serving { .. }));
        // the port read from clientConfig, 443 when unset
        assert_eq!(target_of(Some(&json!({"service": {"namespace": "hooks", "name": "hook"}}))), at(443));
        assert_eq!(
            target_of(Some(&json!({"service": {"namespace": "hooks", "name": "hook", "port": 8443}}))),
            at(8443)
        );
        // headless: reached only with aggregator routing, which the cluster does not show
        let g = graph(vec![ns("hooks"), with_ports(json!([{"port": 443}]), "None"), slice(Some(true))]);
        let b = judge(&g, &at(443));
        assert!(matches!(&b, Backend::Unknown(why) if why.contains("headless")), "{b:?}");
        // ports not read (a spec without them): not judged on them
        let g = graph(vec![ns("hooks"), service(), slice(Some(true))]);
        assert!(matches!(judge(&g, &at(8443)), Backend::Serving { .. }));
    }

    #[test]
    fn an_unset_ready_condition_counts_as_ready() {
        let g = graph(vec![ns("hooks"), service(), slice(None)]);
        assert!(matches!(judge(&g, &svc_target()), Backend::Serving { .. }));
    }

    #[test]
    fn only_not_ready_endpoints_is_dead() {
        let g = graph(vec![ns("hooks"), service(), slice(Some(false))]);
        let b = judge(&g, &svc_target());
        assert!(matches!(b, Backend::NoReadyEndpoints { not_ready: 1, .. }), "{b:?}");
        assert!(b.is_dead());
    }

    #[test]
    fn a_missing_service_is_dead() {
        let g = graph(vec![ns("hooks")]);
        assert_eq!(judge(&g, &svc_target()), Backend::ServiceMissing);
    }

    #[test]
    fn a_service_in_a_terminating_namespace_is_dead_even_while_ready() {
        let g = graph(vec![ns("hooks").deleting("2026-01-01T00:00:00Z"), service(), slice(Some(true))]);
        let b = judge(&g, &svc_target());
        assert!(matches!(b, Backend::NamespaceTerminating { service: Some(_), .. }), "{b:?}");
        assert!(b.is_dead());
    }

    #[test]
    fn a_url_cannot_be_judged() {
        let g = graph(vec![]);
        let t = target_of(Some(&json!({"url": "https://hooks.example.com/validate"})));
        let b = judge(&g, &t);
        assert!(matches!(b, Backend::Unknown(_)));
        assert!(!b.is_dead());
        assert!(b.describe(&t).contains("https://hooks.example.com/validate"));
    }

    #[test]
    fn endpoints_not_read_cannot_be_judged() {
        let g = graph(vec![ns("hooks"), service()]);
        assert!(matches!(judge(&g, &svc_target()), Backend::Unknown(_)));
    }

    #[test]
    fn unreadable_services_are_not_missing() {
        let mut s = crate::testing::snapshot(vec![ns("hooks")]);
        s.incomplete.push("services: forbidden".into());
        let g = Graph::build(s);
        assert!(matches!(judge(&g, &svc_target()), Backend::Unknown(_)));
    }

    #[test]
    fn ready_endpoints_name_their_pods_or_nothing() {
        let pod = obj("v1", "Pod", Some("hooks"), "hook-1", "p1");
        let mut s = slice(Some(true));
        s["endpoints"][0]["targetRef"] = json!({"kind": "Pod", "namespace": "hooks", "name": "hook-1"});
        let g = graph(vec![ns("hooks"), service(), s, pod]);
        assert_eq!(ready_endpoint_pods(&g, "hooks", "hook"), Some(vec![crate::testing::node(&g, "Pod", "hook-1")]));
        // an endpoint without a targetRef: its server cannot be told
        let g = graph(vec![ns("hooks"), service(), slice(Some(true))]);
        assert_eq!(ready_endpoint_pods(&g, "hooks", "hook"), None);
    }

    #[test]
    fn endpoints_objects_are_read_when_no_slice_was() {
        let ep = obj("v1", "Endpoints", Some("hooks"), "hook", "ep")
            .with("subsets", json!([{"notReadyAddresses": [{"ip": "10.0.0.1"}]}]));
        let g = graph(vec![ns("hooks"), service(), ep]);
        assert!(matches!(judge(&g, &svc_target()), Backend::NoReadyEndpoints { not_ready: 1, .. }));
    }
}

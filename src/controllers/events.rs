//! Who reports about an object in its Events: the second rung of attribution (contract
//! §4.3.3). A controller records Events about the objects it reconciles, naming itself in
//! `source.component` (core/v1, client-go's `EventRecorder`), or `reportingController` and
//! `reportingInstance` (events.k8s.io/v1, and core/v1's `reportingComponent`); the instance is
//! usually `<component>-<pod name>` or the pod's name. Events are matched by the uid of the
//! object they are about, never by name. Messages are not read.

use std::collections::{BTreeSet, HashMap};

use serde_json::Value;

use crate::graph::Graph;
use crate::snapshot::{Object, Uid};

/// One component that reported about an object.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Reporter {
    /// `reportingController` / `reportingComponent`, else `source.component`.
    pub component: String,
    /// `reportingInstance` (often the pod's name), when given.
    pub instance: Option<String>,
}

/// Components that report about objects they do not finalize: the kubelet, the scheduler and
/// kube-controller-manager's controllers (their finalizers are built-in, judged elsewhere).
fn bystander(component: &str) -> bool {
    let c = component.to_ascii_lowercase();
    matches!(
        c.as_str(),
        "kubelet" | "default-scheduler" | "kube-scheduler" | "kube-controller-manager" | "kube-apiserver"
    ) || c.starts_with("kubelet")
        || c.ends_with("-controller") && BUILTIN_CONTROLLERS.contains(&c.trim_end_matches("-controller"))
}

/// kube-controller-manager's controllers, as they name themselves in Events (`<name>-controller`).
const BUILTIN_CONTROLLERS: &[&str] = &[
    "deployment",
    "replicaset",
    "statefulset",
    "daemonset",
    "job",
    "cronjob",
    "garbage-collector",
    "namespace",
    "persistentvolume",
    "persistentvolume-expander",
    "attachdetach",
    "endpoint",
    "endpointslice",
    "endpoint-slice",
    "service",
    "node",
    "taint-eviction",
    "horizontal-pod-autoscaler",
    "disruption",
    "resource-claim",
];

/// The snapshot's Events, as reporters by the uid of the object they are about.
#[derive(Default)]
pub struct Reporters {
    by_uid: HashMap<Uid, BTreeSet<Reporter>>,
}

impl Reporters {
    pub fn new(g: &Graph) -> Reporters {
        let mut r = Reporters::default();
        for o in g.objects() {
            if o.kind != "Event" || !crate::graph::ignored_by_gc(o.group(), &o.kind) {
                continue;
            }
            if let Some((uid, rep)) = read(o)
                && !bystander(&rep.component)
                && crate::graph::event_speaks_about(g, o, &uid)
            {
                r.by_uid.entry(uid).or_default().insert(rep);
            }
        }
        r
    }

    /// The components (bystanders aside) that reported about the object with this uid.
    pub fn of(&self, uid: &Uid) -> impl Iterator<Item = &Reporter> {
        self.by_uid.get(uid).into_iter().flatten()
    }
}

fn read(o: &Object) -> Option<(Uid, Reporter)> {
    let body = o.body.map();
    let s = |v: Option<&Value>| v.and_then(|v| v.as_str()).filter(|s| !s.is_empty()).map(str::to_string);
    let new_api = o.group() == "events.k8s.io";
    let about = if new_api { body.get("regarding") } else { body.get("involvedObject") };
    let uid = s(about.and_then(|a| a.get("uid")))?;
    let source = if new_api { body.get("deprecatedSource") } else { body.get("source") };
    let component = s(body.get(if new_api { "reportingController" } else { "reportingComponent" }))
        .or_else(|| s(source.and_then(|s| s.get("component"))))?;
    let instance = s(body.get("reportingInstance"));
    Some((Uid(uid), Reporter { component, instance }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bystanders_report_about_everything_and_name_no_controller() {
        for c in ["kubelet", "default-scheduler", "deployment-controller", "garbage-collector-controller"] {
            assert!(bystander(c), "{c}");
        }
        for c in ["bucket-controller", "snapshot-operator", "backup.example.dev/snapshot-operator"] {
            assert!(!bystander(c), "{c}");
        }
    }
}

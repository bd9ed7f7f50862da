//! Rung 2: the component that reports about the object in its Events (`source.component`,
//! `reportingController`, `reportingInstance`), resolved to a workload: by the component's
//! name (or what follows its last `/`: `example.dev/snapshot-operator`), else by the pod its
//! instance names (`<component>-<pod>` or the pod itself). Built-in components (the kubelet,
//! kube-controller-manager's controllers) report about everything and are not read here.

use super::super::workload::describe;
use super::{Pass, Search, Tie};
use crate::graph::NodeId;

#[derive(Default, Debug)]
pub(super) struct Reporters {
    pub pass: Pass,
    /// Matches of a generic component name that only confirm other passes' candidates.
    pub confirming: Vec<(NodeId, Tie)>,
}

pub(super) fn pass(s: &Search<'_>) -> Reporters {
    let l = s.l;
    let mut out = Reporters::default();
    let Some(o) = s.obj else { return out };
    let reporters: Vec<_> = l.reporters().of(&o.uid).cloned().collect();
    for r in reporters.iter().take(3) {
        let short = r.component.rsplit('/').next().unwrap_or(&r.component);
        let mut found = l.workloads.named_or_running(short);
        let mut how = "that name matches".to_string();
        if found.is_empty()
            && let Some(pod) = r.instance.as_deref().and_then(|i| instance_pod(s, short, i))
            && let Some(w) = l.workloads.workload_of_pod(pod)
        {
            found.push(w);
            how = format!("its instance {} is a Pod of", r.instance.as_deref().unwrap_or(""));
        }
        let about = format!("Events about it are reported by {:?}", r.component);
        if found.is_empty() {
            out.pass.evidence.push(format!(
                "{about}; no workload, container, ServiceAccount, app label, program or image of that name is in the snapshot"
            ));
            continue;
        }
        for &w in &found {
            if l.workloads.is_named(w, short) || found.len() == 1 {
                out.pass.tie(w, Tie::Reporter);
            } else {
                out.confirming.push((w, Tie::Reporter));
            }
        }
        let names: Vec<String> = found
            .iter()
            .take(3)
            .filter_map(|&w| {
                let by = l.workloads.how_named(w, short).map(|h| format!(" (by {})", h.label())).unwrap_or_default();
                l.graph.object(w).map(|o| format!("{}{by}", describe(o)))
            })
            .collect();
        out.pass.evidence.push(format!("{about}; {how} {}", names.join(", ")));
    }
    out
}

/// The Pod a reporting instance names: its name, or what follows the component's name and a
/// dash (client-go's events library reports `<component>-<hostname>`, a pod's hostname being
/// its name).
fn instance_pod(s: &Search<'_>, component: &str, instance: &str) -> Option<NodeId> {
    let g = s.l.graph;
    let name = instance.strip_prefix(component).and_then(|r| r.strip_prefix('-')).unwrap_or(instance);
    g.of_kind("", "Pod").iter().copied().find(|&p| g.object(p).is_some_and(|o| o.name == name || o.name == instance))
}

//! Rung 1: the field manager that added the finalizer (`metadata.managedFields`), resolved to a
//! workload by its name, a container, its ServiceAccount or its app label.
//!
//! A manager resolves when a workload bears its name, or when exactly one workload matches it
//! otherwise (kubebuilder's `manager` container); a manager that matches several only confirms
//! the candidates other passes found. A person's client (`kubectl-edit`) means a person added
//! it; GitOps appliers and client libraries' default managers name no controller (except an
//! applier's own finalizers: Flux's `finalizers.fluxcd.io` by `helm-controller`).

use super::super::domain::domains_match;
use super::super::managed_fields::{self, ManagerKind, own_domain};
use super::super::workload::describe;
use super::{Pass, Search, Tie};
use crate::graph::NodeId;
use crate::snapshot::Object;

/// What the managedFields say.
#[derive(Default, Debug)]
pub(super) struct Adders {
    pub pass: Pass,
    /// Matches of a manager that resolves to no one in particular: ties only a candidate found
    /// by another pass.
    pub confirming: Vec<(NodeId, Tie)>,
    /// Person clients that added the finalizer (`kubectl-edit`).
    pub persons: Vec<String>,
    /// Controllers' managers that added it and that no workload bears (names that every
    /// framework's controllers share, such as `manager`, aside): the adder is gone.
    pub absent: Vec<String>,
    /// Every controller's manager that added it.
    pub controllers: Vec<String>,
    /// Controllers' managers that added it, that no workload bears, and that wrote the object
    /// since its deletion began: whatever runs as them is alive (evidence of life, never of
    /// absence).
    pub writing: Vec<String>,
}

/// Field manager names that every controller of a framework uses, so they name no one in
/// particular when no workload matches them (kubebuilder's `manager`).
fn generic(m: &str) -> bool {
    matches!(m.to_ascii_lowercase().as_str(), "manager" | "controller" | "operator" | "main" | "app" | "server")
}

pub(super) fn pass(s: &Search<'_>) -> Adders {
    let mut out = Adders::default();
    for m in s.obj.into_iter().flat_map(|o| managed_fields::managers_of(o, s.finalizer)) {
        let who = managed_fields::describe(m);
        let own = own_domain(&m.manager).is_some_and(|d| s.domain.is_some_and(|f| domains_match(f, d)));
        let line = match managed_fields::classify(&m.manager) {
            ManagerKind::Person => {
                if !out.persons.contains(&m.manager) {
                    out.persons.push(m.manager.clone());
                }
                format!("managedFields: {who} added it: a person's client, so a person added the finalizer")
            }
            ManagerKind::Applier if !own => format!(
                "managedFields: {who} added it: a GitOps or deployment tool applies the finalizers its manifests carry, and is not their controller"
            ),
            ManagerKind::Library => format!(
                "managedFields: {who} added it: that is a client library's default name, which names no controller"
            ),
            ManagerKind::ControlPlane => format!("managedFields: {who} (a control-plane component) added it"),
            ManagerKind::Applier | ManagerKind::Controller => {
                out.controllers.push(m.manager.clone());
                let since_deletion =
                    m.time.is_some_and(|t| s.obj.and_then(Object::deletion_requested_at).is_some_and(|d| t >= d));
                resolve(s, &m.manager, &who, since_deletion, &mut out)
            }
        };
        out.pass.evidence.push(line);
    }
    out
}

fn resolve(s: &Search<'_>, manager: &str, who: &str, since_deletion: bool, out: &mut Adders) -> String {
    let l = s.l;
    let found = l.workloads.named_or_running(manager);
    if found.is_empty() && since_deletion {
        if !out.writing.iter().any(|a| a == manager) {
            out.writing.push(manager.to_string());
        }
        return format!(
            "managedFields: {who} added it and wrote the object after its deletion began: whatever runs as \"{manager}\" is alive, though no workload, container, ServiceAccount, app label, program or image of that name is in the snapshot"
        );
    }
    if found.is_empty() {
        if !generic(manager) && !out.absent.iter().any(|a| a == manager) {
            out.absent.push(manager.to_string());
        }
        return format!(
            "managedFields: {who} added it; no workload, container, ServiceAccount, app label, program or image of that name is in the snapshot"
        );
    }
    for &w in &found {
        if l.workloads.is_named(w, manager) || found.len() == 1 {
            out.pass.tie(w, Tie::Adder);
        } else {
            out.confirming.push((w, Tie::Adder));
        }
    }
    let names: Vec<String> = found
        .iter()
        .take(3)
        .filter_map(|&w| {
            let by = l.workloads.how_named(w, manager).map(|h| format!(" (by {})", h.label())).unwrap_or_default();
            l.graph.object(w).map(|o| format!("{}{by}", describe(o)))
        })
        .collect();
    format!("managedFields: {who} added it; that name matches {}", names.join(", "))
}

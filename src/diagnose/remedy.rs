//! Next steps, printed as exact commands for a human to run; the plugin never runs them.

use crate::controllers::{ControllerState, FinalizerOwner};
use crate::graph::{Graph, NodeId};
use crate::snapshot::OwnerRef;

use super::owners::GcVerdict;

/// `sites.own.labhub.io alpha -n labs`: how kubectl names the object.
pub fn kubectl_target(g: &Graph, x: NodeId) -> String {
    let id = &g.identity(x);
    let resource =
        g.mapper.kind(id.group(), id.kind).map(|t| t.qualified_plural()).unwrap_or_else(|| id.kind.to_lowercase());
    match &id.namespace {
        Some(ns) => format!("{resource} {} -n {ns}", shell_word(id.name)),
        None => format!("{resource} {}", shell_word(id.name)),
    }
}

/// A JSON patch that removes exactly one finalizer, guarded by the object's resourceVersion
/// and the finalizer's position, so it fails rather than removes the wrong thing.
pub fn remove_finalizer(g: &Graph, x: NodeId, finalizer: &str) -> Option<String> {
    let o = g.object(x)?;
    let i = o.finalizers.iter().position(|f| f == finalizer)?;
    let mut ops = Vec::new();
    if let Some(rv) = &o.resource_version {
        ops.push(serde_json::json!({"op": "test", "path": "/metadata/resourceVersion", "value": rv}));
    }
    ops.push(serde_json::json!({"op": "test", "path": format!("/metadata/finalizers/{i}"), "value": finalizer}));
    ops.push(serde_json::json!({"op": "remove", "path": format!("/metadata/finalizers/{i}")}));
    Some(format!(
        "kubectl patch {} --type=json -p {}",
        kubectl_target(g, x),
        shell_quote(&serde_json::Value::Array(ops).to_string())
    ))
}

/// How to bring back the controller that owns a finalizer, most specific first.
pub fn restore_controller(owner: &FinalizerOwner, f: &str) -> Vec<String> {
    let who = owner.removed_by.as_deref().unwrap_or("the controller");
    let mut out = Vec::new();
    match (owner.controller, &owner.workload) {
        (ControllerState::Down, Some(w)) => {
            let ns = w.namespace.as_deref().map(|n| format!(" -n {n}")).unwrap_or_default();
            let res = w.kind.to_lowercase();
            if owner.evidence.iter().any(|e| e.contains("scaled to zero")) {
                out.push(format!(
                    "Scale {who} back up so it removes {f} itself: kubectl scale {res}/{}{ns} --replicas=1",
                    w.name
                ));
            } else {
                out.push(format!(
                    "Bring {who} back so it removes {f} itself; see why its pods are not ready: kubectl describe {res}/{}{ns}",
                    w.name
                ));
            }
        }
        (ControllerState::Down, None) => out.push(format!("Bring {who} back so it removes {f} itself.")),
        (ControllerState::Missing, _) => out.push(format!(
            "Reinstall the controller that owns {f} (the operator of its API group), so it can clean up and remove it."
        )),
        _ => out.push(format!("Find the controller that owns {f} and check that it is running.")),
    }
    out
}

/// Re-DELETE with Background: the API server drops `foregroundDeletion`/`orphan`
/// (gc-semantics §2.5); other finalizers still hold the object.
pub fn redelete_background(g: &Graph, x: NodeId) -> String {
    format!("kubectl delete {} --cascade=background --wait=false", kubectl_target(g, x))
}

pub fn fix_owner_reference(g: &Graph, x: NodeId, r: &OwnerRef, verdict: GcVerdict) -> Vec<String> {
    let Some(o) = g.object(x) else { return Vec::new() };
    let Some(i) = o.owner_references.iter().position(|x| x == r) else { return Vec::new() };
    let mut ops = Vec::new();
    if let Some(rv) = &o.resource_version {
        ops.push(serde_json::json!({"op": "test", "path": "/metadata/resourceVersion", "value": rv}));
    }
    ops.push(serde_json::json!({"op": "test", "path": format!("/metadata/ownerReferences/{i}/uid"), "value": r.uid.as_str()}));
    ops.push(serde_json::json!({"op": "remove", "path": format!("/metadata/ownerReferences/{i}")}));
    let patch = format!(
        "kubectl patch {} --type=json -p {}",
        kubectl_target(g, x),
        shell_quote(&serde_json::Value::Array(ops).to_string())
    );
    match verdict {
        GcVerdict::Collected => vec![
            format!("If the object should outlive this owner, remove the stale reference before the garbage collector acts (it may already have): {patch}"),
            "If it should belong to the current owner, let that owner's controller re-adopt it, or point the reference at the owner's current uid.".into(),
        ],
        _ => vec![format!("Remove or correct the invalid reference: {patch}")],
    }
}

fn shell_word(s: &str) -> String {
    if s.chars().all(|c| c.is_ascii_alphanumeric() || "-._:/@".contains(c)) { s.to_string() } else { shell_quote(s) }
}

/// Single-quotes a word for POSIX shells.
pub fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

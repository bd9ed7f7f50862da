//! Next steps, as exact commands for a human to run; the plugin never runs them. A step is
//! data ([`step`]): what to do, the command, how far it reaches, and the request it sends, so
//! that the answer can rank steps and hold them against its own refusals
//! (`diagnose::causes`).

pub mod step;

use crate::controllers::{ControllerState, FinalizerOwner};
use crate::graph::{Graph, NodeId};
use crate::snapshot::OwnerRef;

use crate::admission::Operation;
use crate::collector::GcVerdict;
use step::{Command, Effect, Reach, Sends, Step};

/// How kubectl names the object: its qualified plural (`sites.own.labhub.io`), and its name.
pub fn resource_of(g: &Graph, x: NodeId) -> String {
    let id = &g.identity(x);
    g.mapper().kind(id.group(), id.kind).map(|t| t.qualified_plural()).unwrap_or_else(|| id.kind.to_lowercase())
}

/// `kubectl <verb> <resource> <name> [-n ns]` for one object, with the request it sends.
pub fn on_object<const N: usize>(g: &Graph, x: NodeId, verb: [&str; N]) -> Command {
    let id = g.identity(x);
    let c = Command::kubectl(verb).arg(resource_of(g, x)).arg(id.name).namespace(id.namespace);
    let op = match verb.first().copied() {
        Some("annotate" | "label" | "patch" | "edit" | "replace" | "apply" | "scale") => Operation::Update,
        Some("delete") => Operation::Delete,
        _ => return c,
    };
    c.sending(Sends { object: x, op, effect: Effect::Change })
}

/// Reads the object as the cluster has it now.
pub fn inspect(g: &Graph, x: NodeId) -> Command {
    on_object(g, x, ["get"]).flag("-o", "yaml")
}

/// A JSON patch that removes exactly one finalizer, guarded by the object's resourceVersion
/// and the finalizer's position, so it fails rather than removes the wrong thing.
pub fn remove_finalizer(g: &Graph, x: NodeId, finalizer: &str) -> Option<Command> {
    remove_finalizer_at(g, x, None, finalizer)
}

/// [`remove_finalizer`], with the finalizer's position when the caller knows it (walking 40k
/// finalizers must not search for each of them).
pub fn remove_finalizer_at(g: &Graph, x: NodeId, at: Option<usize>, finalizer: &str) -> Option<Command> {
    let o = g.object(x)?;
    let i = match at {
        Some(i) if o.finalizers.get(i).is_some_and(|f| f == finalizer) => i,
        _ => o.finalizers.iter().position(|f| f == finalizer)?,
    };
    remove_finalizers_at(g, x, &[i])
}

/// One JSON patch that removes the finalizers at positions `at` (each as the object holds it):
/// the resourceVersion and every finalizer tested first, then removed from the last position
/// down, so no removal shifts the position of one still to come. None when a position is out
/// of range or `at` is empty.
pub fn remove_finalizers_at(g: &Graph, x: NodeId, at: &[usize]) -> Option<Command> {
    let o = g.object(x)?;
    let mut at: Vec<usize> = at.to_vec();
    at.sort_unstable();
    at.dedup();
    if at.is_empty() || at.iter().any(|&i| i >= o.finalizers.len()) {
        return None;
    }
    let mut ops = Vec::new();
    if let Some(rv) = &o.resource_version {
        ops.push(serde_json::json!({"op": "test", "path": "/metadata/resourceVersion", "value": rv}));
    }
    for &i in &at {
        ops.push(
            serde_json::json!({"op": "test", "path": format!("/metadata/finalizers/{i}"), "value": o.finalizers[i]}),
        );
    }
    for &i in at.iter().rev() {
        ops.push(serde_json::json!({"op": "remove", "path": format!("/metadata/finalizers/{i}")}));
    }
    let patch = on_object(g, x, ["patch"]).flag("--type", "json").flag("-p", serde_json::Value::Array(ops).to_string());
    Some(patch.sending(Sends { object: x, op: Operation::Update, effect: Effect::RemoveFinalizers }))
}

/// How to bring back the controller that owns a finalizer, most specific first.
pub fn restore_controller(g: &Graph, owner: &FinalizerOwner, f: &str) -> Vec<Step> {
    let who = owner.removed_by.as_deref().unwrap_or("the controller");
    let mut out = Vec::new();
    match (owner.controller, &owner.workload) {
        (ControllerState::Down, Some(w)) => {
            let workload = format!("{}/{}", w.kind.to_lowercase(), w.name);
            let scaled_to_zero = g
                .find(w.group(), &w.kind, w.namespace.as_deref(), &w.name)
                .and_then(|n| g.object(n))
                .is_some_and(crate::controllers::scaled_to_zero);
            if scaled_to_zero {
                out.push(Step::run(
                    Reach::Restore,
                    format!("Scale {who} back up so it removes {f} itself."),
                    Command::kubectl(["scale"]).arg(workload).namespace(w.namespace.as_deref()).flag("--replicas", "1"),
                ));
            } else {
                out.push(Step::run(
                    Reach::Inspect,
                    format!("See why the pods of {who} are not ready; once it runs again it removes {f} itself."),
                    Command::kubectl(["describe"]).arg(workload).namespace(w.namespace.as_deref()),
                ));
            }
        }
        (ControllerState::Down, None) => {
            out.push(Step::advice(Reach::Restore, format!("Bring {who} back so it removes {f} itself.")))
        }
        (ControllerState::Missing, _) if owner.added_by_person.is_some() => out.push(Step::advice(
            Reach::Inspect,
            format!(
                "A person added {f} by hand (field manager \"{}\"), and no controller removes it: ask whoever added it, or the object's owners, whether what it holds the object for is over; then it is theirs to remove.",
                owner.added_by_person.as_deref().unwrap_or_default()
            ),
        )),
        (ControllerState::Missing, _) => out.push(Step::advice(
            Reach::Restore,
            match &owner.removed_by {
                Some(who) => format!("Reinstall {who}, so it cleans up what {f} guards and removes it itself."),
                None => format!("Reinstall the controller that owns {f}, so it cleans up what it guards and removes it itself."),
            },
        )),
        (ControllerState::Unknown, Some(w)) if owner.by_permission_only => out.push(Step::run(
            Reach::Inspect,
            format!("See whether {who} handles {f} at all (only its permission to update the object ties it to the finalizer): its logs say."),
            Command::kubectl(["logs"]).arg(format!("{}/{}", w.kind.to_lowercase(), w.name)).namespace(w.namespace.as_deref()),
        )),
        _ => out.push(Step::advice(
            Reach::Inspect,
            format!("Find the controller that owns {f} and check that it is running; the evidence says what could not be seen."),
        )),
    }
    out
}

/// For a deletion only seconds or minutes old whose controller was not found: look again first.
pub fn recheck(g: &Graph, x: NodeId, age_seconds: i64) -> Step {
    Step::run(
        Reach::Inspect,
        format!(
            "It was deleted only {} ago: a controller that cleans up external resources may not have finished, and one just being reinstalled may not be back yet. Look again in a few minutes before changing anything.",
            crate::age::human(age_seconds)
        ),
        inspect(g, x),
    )
}

/// Re-DELETE with Background: the API server drops `foregroundDeletion`/`orphan`
/// (gc-semantics §2.5); other finalizers still hold the object.
pub fn redelete_background(g: &Graph, x: NodeId) -> Command {
    on_object(g, x, ["delete"]).flag("--cascade", "background").flag("--wait", "false")
}

/// `i` is the reference's position among the object's owner references (found by the caller
/// as it walks them, so 20k references cost 20k steps, not 20k²).
pub fn fix_owner_reference(g: &Graph, x: NodeId, i: usize, r: &OwnerRef, verdict: GcVerdict) -> Vec<Step> {
    let Some(o) = g.object(x) else { return Vec::new() };
    if o.owner_references.get(i) != Some(r) {
        return Vec::new();
    }
    let mut ops = Vec::new();
    if let Some(rv) = &o.resource_version {
        ops.push(serde_json::json!({"op": "test", "path": "/metadata/resourceVersion", "value": rv}));
    }
    ops.push(serde_json::json!({"op": "test", "path": format!("/metadata/ownerReferences/{i}/uid"), "value": r.uid.as_str()}));
    ops.push(serde_json::json!({"op": "remove", "path": format!("/metadata/ownerReferences/{i}")}));
    let patch = on_object(g, x, ["patch"]).flag("--type", "json").flag("-p", serde_json::Value::Array(ops).to_string());
    match verdict {
        GcVerdict::Collected => vec![
            Step::advice(
                Reach::Restore,
                "If it should belong to the current owner, let that owner's controller re-adopt it, or point the reference at the owner's current uid.",
            ),
            Step::run(
                Reach::Disrupt,
                "If the object should outlive this owner, remove the stale reference before the garbage collector acts (it may already have).",
                patch,
            ),
        ],
        _ => vec![Step::run(Reach::Disrupt, "Remove or correct the invalid reference.", patch)],
    }
}

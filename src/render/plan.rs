//! Rendering of a [`Plan`]: JSON exactly as contract §4.2 fixes it, and text for people in
//! an incident (waves, outcome, what blocks and why).
//!
//! The JSON goes through wire structs of its own ([`PlanJson`]), never through the planner's
//! types, so a refactor of the planner cannot change the contract. [`to_wire`] gives the
//! serializable value for other formats (YAML).

use std::io::{self, Write};

use serde::Serialize;

use super::json::ObjectRef;

use super::style::sanitize;
use crate::graph::Graph;
use crate::plan::{Action, ObjRef, Plan};

/// `plan -o json` (contract §4.2).
#[derive(Clone, Debug, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct PlanJson {
    /// The object the plan deletes.
    pub target: ObjectRef,
    /// The propagation asked for: `Background`, `Foreground` or `Orphan`.
    pub cascade: &'static str,
    /// One order in which the real system could do it; an object's `Remove` comes after every
    /// step it depends on.
    pub steps: Vec<StepJson>,
    /// Where everything ends up.
    pub result: ResultJson,
    /// What the planner could not know (unresolvable kinds, racy spots of the real GC,
    /// incomplete input).
    pub notes: Vec<String>,
}

/// One step; the optional keys appear only for the actions that carry them.
#[derive(Clone, Debug, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct StepJson {
    /// 1-based position in the order.
    pub seq: u32,
    /// Who acts: `kube-apiserver`, `garbage-collector`, `namespace-controller`, or the
    /// controller expected to remove a finalizer.
    pub actor: String,
    /// `Delete`, `MarkDeleting`, `Remove`, `RemoveOwnerReferences`, `UnblockOwnerReferences`,
    /// `RemoveFinalizer` or `Blocked`.
    pub action: &'static str,
    /// The object acted on.
    pub object: ObjectRef,
    #[serde(skip_serializing_if = "Option::is_none")]
    /// `MarkDeleting`: the finalizers the object carries once its deletionTimestamp is set.
    pub finalizers: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    /// `Delete`: the propagation policy of the DELETE.
    pub propagation: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    /// `RemoveOwnerReferences`/`UnblockOwnerReferences`: the owners whose references change.
    pub owners: Option<Vec<ObjectRef>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    /// `RemoveFinalizer`/`Blocked`: the finalizer concerned.
    pub finalizer: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    /// Why, in words: for `Blocked`, why nothing will remove the finalizer; for a finalizer
    /// removal, what it waited for or that its controller is assumed to act.
    pub reason: Option<String>,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
/// Contract §4.2 `result`: where the plan leaves the objects it touches.
pub struct ResultJson {
    /// Objects gone at the end.
    pub removed: Vec<ObjectRef>,
    /// Objects that remain and lost owner references.
    pub owner_refs_removed: Vec<OwnerRefsRemovedJson>,
    /// Objects left with a deletionTimestamp and finalizers nothing will remove.
    pub blocked: Vec<BlockedJson>,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
/// An object that remains and the owners it no longer references.
pub struct OwnerRefsRemovedJson {
    /// The object that remains.
    pub object: ObjectRef,
    /// The owners whose references were removed from it.
    pub owners: Vec<ObjectRef>,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
/// An object the plan leaves terminating for good.
pub struct BlockedJson {
    /// The object.
    pub object: ObjectRef,
    /// The finalizers that stay on it.
    pub finalizers: Vec<String>,
    /// Why nothing removes them (the controller down or missing, in words).
    pub reason: String,
}

fn wire_ref(r: ObjRef) -> ObjectRef {
    r.into()
}

fn node_ref(g: &Graph, n: crate::graph::NodeId) -> ObjectRef {
    wire_ref(ObjRef::of_node(g, n))
}

/// The contract's JSON value of a plan.
pub fn to_wire(plan: &Plan, g: &Graph) -> PlanJson {
    let steps = plan
        .steps
        .iter()
        .map(|s| {
            let mut j = StepJson {
                seq: s.seq,
                actor: s.actor.clone(),
                action: s.action.name(),
                object: node_ref(g, s.object),
                finalizers: None,
                propagation: None,
                owners: None,
                finalizer: None,
                reason: None,
            };
            match &s.action {
                Action::Delete { propagation, .. } => j.propagation = propagation.map(|p| p.as_str()),
                Action::MarkDeleting { finalizers, .. } => j.finalizers = Some(finalizers.clone()),
                Action::Remove => {}
                Action::RemoveOwnerReferences { owners } | Action::UnblockOwnerReferences { owners } => {
                    j.owners = Some(owners.iter().cloned().map(wire_ref).collect())
                }
                Action::RemoveFinalizer { finalizer } => j.finalizer = Some(finalizer.clone()),
                Action::Blocked { finalizer, reason } => {
                    j.finalizer = finalizer.clone();
                    j.reason = Some(reason.clone());
                }
            }
            j
        })
        .collect();
    let r = &plan.result;
    PlanJson {
        target: node_ref(g, plan.target),
        cascade: plan.cascade.as_str(),
        steps,
        result: ResultJson {
            removed: r.removed.iter().map(|&n| node_ref(g, n)).collect(),
            owner_refs_removed: r
                .owner_refs_removed
                .iter()
                .map(|(n, owners)| OwnerRefsRemovedJson {
                    object: node_ref(g, *n),
                    owners: owners.iter().cloned().map(wire_ref).collect(),
                })
                .collect(),
            blocked: r
                .blocked
                .iter()
                .map(|b| BlockedJson {
                    object: node_ref(g, b.object),
                    finalizers: b.finalizers.clone(),
                    reason: b.reason.clone(),
                })
                .collect(),
        },
        notes: already_requested(plan, g)
            .map(|seq| {
                format!(
                    "{} is already being deleted: step {seq} stands for the deletion already requested, not a new one",
                    ObjRef::of_node(g, plan.target).display()
                )
            })
            .into_iter()
            .chain(plan.notes.iter().cloned())
            .collect(),
    }
}

/// The JSON as a `serde_json::Value` (for YAML output and tests).
pub fn to_value(plan: &Plan, g: &Graph) -> serde_json::Value {
    serde_json::to_value(to_wire(plan, g)).expect("the wire structs serialize to JSON")
}

/// `plan -o json`: pretty-printed, newline-terminated.
pub fn write_json(plan: &Plan, g: &Graph, w: &mut impl Write) -> io::Result<()> {
    super::safe_json::to_writer_pretty(&mut *w, &to_wire(plan, g))?;
    writeln!(w)
}

fn show(r: &ObjRef) -> String {
    sanitize(&r.display())
}

fn step_detail(a: &Action) -> String {
    match a {
        Action::Delete { propagation, grace } => {
            let mut parts = Vec::new();
            if let Some(p) = propagation {
                parts.push(format!("propagationPolicy={}", p.as_str()));
            }
            if let Some(g) = grace {
                parts.push(format!("gracePeriodSeconds={g}"));
            }
            if parts.is_empty() { String::new() } else { format!(" ({})", parts.join(", ")) }
        }
        Action::MarkDeleting { finalizers, grace } => {
            let mut s = format!(" (finalizers: [{}]", sanitize(&finalizers.join(", ")));
            if let Some(g) = grace {
                s.push_str(&format!(", grace {g}s"));
            }
            s.push(')');
            s
        }
        Action::Remove => String::new(),
        Action::RemoveOwnerReferences { owners } | Action::UnblockOwnerReferences { owners } => {
            format!(" (owners: {})", owners.iter().map(show).collect::<Vec<_>>().join(", "))
        }
        Action::RemoveFinalizer { finalizer } => format!(" ({})", sanitize(finalizer)),
        Action::Blocked { finalizer, .. } => {
            finalizer.as_ref().map(|f| format!(" ({})", sanitize(f))).unwrap_or_default()
        }
    }
}

/// The seq of the plan's first step when it is the user's DELETE of a target that already has
/// a deletionTimestamp: that delete was issued already, and is not a step to take.
fn already_requested(plan: &Plan, g: &Graph) -> Option<u32> {
    let first = plan.steps.first()?;
    let deleting = g.object(plan.target).is_some_and(|o| o.is_deleting());
    (deleting && first.object == plan.target && matches!(first.action, Action::Delete { .. })).then_some(first.seq)
}

/// `plan -o text`: the waves, the outcome, then what blocks and why, then the notes.
pub fn write_text(plan: &Plan, g: &Graph, color: bool, w: &mut impl Write) -> io::Result<()> {
    write_text_styled(plan, g, super::style::Style { color, width: None }, w)
}

/// [`write_text`] with the terminal's width: the reasons and notes wrap (the table of steps
/// does not; a step stays one row).
pub fn write_text_styled(plan: &Plan, g: &Graph, st: super::style::Style, w: &mut impl Write) -> io::Result<()> {
    let p = st;
    let target = show(&ObjRef::of_node(g, plan.target));
    let requested = already_requested(plan, g);
    if requested.is_some() {
        writeln!(
            w,
            "{}",
            p.strong(&format!(
                "Plan: {target} is already being deleted; what follows (cascade {})",
                plan.cascade.as_str()
            ))
        )?;
    } else {
        writeln!(w, "{}", p.strong(&format!("Plan: delete {target} (cascade {})", plan.cascade.as_str())))?;
    }
    let steps: Vec<_> =
        plan.steps.iter().filter(|s| !matches!(s.action, Action::Blocked { .. }) && Some(s.seq) != requested).collect();
    let actor_width = steps.iter().map(|s| s.actor.len()).max().unwrap_or(0).min(48);
    let mut wave_no = 0;
    let mut last_wave = None;
    for s in &steps {
        if last_wave != Some(s.wave) {
            wave_no += 1;
            last_wave = Some(s.wave);
            writeln!(w)?;
            writeln!(w, "{}", p.strong(&format!("Wave {wave_no}")))?;
        }
        let action = format!("{:<22}", s.action.name());
        let action = match s.action {
            Action::Remove => p.good(&action),
            _ => action,
        };
        // seq, actor, action and object stay whole; the detail wraps at --width, under the
        // object's column (or all of it under the actor when even the object does not fit)
        let head = format!("  {:>4}  {:<actor_width$}  {action} ", s.seq, sanitize(&s.actor));
        let object = show(&ObjRef::of_node(g, s.object));
        let detail = step_detail(&s.action);
        let fits = st.width.is_none_or(|wd| super::style::columns(&head) + super::style::columns(&object) <= wd);
        if fits {
            let rest = " ".repeat(super::style::columns(&head));
            match detail.strip_prefix(' ') {
                Some(detail) => writeln!(w, "{}", st.wrap_after(&p.dim(detail), &format!("{head}{object} "), &rest))?,
                None => writeln!(w, "{head}{object}{}", p.dim(&detail))?,
            }
        } else {
            // too narrow for the columns: the object and its detail go on under the actor
            let text = format!("{object}{}", p.dim(&detail));
            writeln!(w, "{}\n{}", head.trim_end(), st.wrap(&text, "        ", "        "))?;
        }
    }
    let r = &plan.result;
    writeln!(w)?;
    writeln!(w, "{}", p.strong("Outcome"))?;
    writeln!(w, "  removed: {}", r.removed.len())?;
    for &n in &r.removed {
        writeln!(w, "    {} {}", p.good("-"), show(&ObjRef::of_node(g, n)))?;
    }
    if !r.owner_refs_removed.is_empty() {
        writeln!(w, "  kept, with owner references removed: {}", r.owner_refs_removed.len())?;
        for (n, owners) in &r.owner_refs_removed {
            let o: Vec<String> = owners.iter().map(show).collect();
            writeln!(w, "    {} {} (no longer owned by {})", p.warn("~"), show(&ObjRef::of_node(g, *n)), o.join(", "))?;
        }
    }
    writeln!(w, "  blocked: {}", r.blocked.len())?;
    if !r.blocked.is_empty() {
        // each blocked object's Blocked steps, in order, found once (not a scan per object)
        let mut reasons: rustc_hash::FxHashMap<crate::graph::NodeId, Vec<(&str, &str)>> = Default::default();
        for s in &plan.steps {
            if let Action::Blocked { reason, .. } = &s.action {
                reasons.entry(s.object).or_default().push((s.actor.as_str(), reason.as_str()));
            }
        }
        writeln!(w)?;
        writeln!(w, "{}", p.bad("Blocked"))?;
        for b in &r.blocked {
            let fins = if b.finalizers.is_empty() {
                String::new()
            } else {
                format!(" [{}]", sanitize(&b.finalizers.join(", ")))
            };
            writeln!(w, "  {} {}{fins}", p.bad("!"), show(&ObjRef::of_node(g, b.object)))?;
            for (actor, reason) in reasons.get(&b.object).into_iter().flatten() {
                writeln!(
                    w,
                    "{}",
                    st.wrap(&format!("{}: {}", sanitize(actor), sanitize(reason)), "      ", "        ")
                )?;
            }
        }
    }
    if !plan.notes.is_empty() {
        writeln!(w)?;
        writeln!(w, "{}", p.strong("Notes"))?;
        for n in &plan.notes {
            writeln!(w, "{}", st.wrap(&sanitize(n), "  - ", "    "))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::controllers::Liveness;
    use crate::plan::scenarios::{NOW, graph, id, obj};
    use crate::plan::{Cascade, PlanOptions, plan};

    fn keys(v: &serde_json::Value) -> Vec<&str> {
        let mut k: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
        k.sort();
        k
    }

    #[test]
    fn json_follows_the_contract() {
        let t = obj("rbac.authorization.k8s.io/v1", "ClusterRole", None, "t");
        let s = obj("v1", "ConfigMap", Some("d"), "solid");
        let d = obj("v1", "ConfigMap", Some("d"), "dep")
            .owned_by(&t, None, Some(true))
            .owned_by(&s, None, None)
            .owner_ref("v1", "ConfigMap", "absent", "absent-uid", None, None);
        let g = graph(&[t.clone(), s, d]);
        let now = NOW.parse().unwrap();
        let lv = Liveness::new(&g, now);
        let p = plan(&g, &lv, id(&g, &t), &PlanOptions { cascade: Cascade::Background, assume_finalizers: None, now });
        let v = to_value(&p, &g);
        assert_eq!(keys(&v), ["cascade", "notes", "result", "steps", "target"]);
        assert_eq!(v["cascade"], "Background");
        assert_eq!(
            keys(&v["target"]),
            ["apiVersion", "kind", "name", "uid"],
            "no namespace for a cluster-scoped target"
        );
        assert_eq!(keys(&v["result"]), ["blocked", "ownerRefsRemoved", "removed"]);
        let steps = v["steps"].as_array().unwrap();
        assert_eq!(steps[0]["seq"], 1);
        assert_eq!(steps[0]["action"], "Delete");
        assert_eq!(steps[0]["propagation"], "Background");
        assert_eq!(keys(&steps[1]), ["action", "actor", "object", "seq"]);
        assert_eq!(steps[1]["action"], "Remove");
        let strip = steps.iter().find(|s| s["action"] == "RemoveOwnerReferences").unwrap();
        assert_eq!(strip["actor"], "garbage-collector");
        let owners = strip["owners"].as_array().unwrap();
        assert_eq!(owners.len(), 2);
        assert!(owners[0].get("uid").is_some() && owners[0].get("namespace").is_none(), "{owners:?}");
        assert!(owners[1].get("uid").is_none(), "an absent owner has no uid: {owners:?}");
        assert_eq!(owners[1]["namespace"], "d");
        let orr = &v["result"]["ownerRefsRemoved"][0];
        assert_eq!(orr["object"]["name"], "dep");
        assert_eq!(orr["object"]["namespace"], "d");

        let mut out = Vec::new();
        write_json(&p, &g, &mut out).unwrap();
        let back: serde_json::Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(back, v);
    }

    #[test]
    fn text_shows_waves_outcome_and_blockers() {
        let owner = obj("v1", "ConfigMap", Some("d"), "owner");
        let dep = obj("v1", "ConfigMap", Some("d"), "dep")
            .owned_by(&owner, None, Some(true))
            .fin(&["example.com/\u{202E}stuck"]);
        let g = graph(&[owner.clone(), dep]);
        let now = NOW.parse().unwrap();
        let lv = Liveness::new(&g, now);
        let p =
            plan(&g, &lv, id(&g, &owner), &PlanOptions { cascade: Cascade::Foreground, assume_finalizers: None, now });
        assert!(p.is_blocked());
        let mut out = Vec::new();
        write_text(&p, &g, false, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        for want in [
            "Plan: delete ConfigMap d/owner (cascade Foreground)",
            "Wave 1",
            "Wave 2",
            "Outcome",
            "blocked: 2",
            "Blocked",
            "waits for blocking dependent(s) ConfigMap d/dep",
        ] {
            assert!(text.contains(want), "{want:?} missing in\n{text}");
        }
        assert!(!text.contains('\u{202E}'), "bidi characters are escaped");
        assert!(!text.contains('\x1b'));
        let mut colored = Vec::new();
        write_text(&p, &g, true, &mut colored).unwrap();
        assert!(String::from_utf8(colored).unwrap().contains("\x1b[1m"));
    }
}

//! The answer's words for each [`Why`]: who removes the finalizer, and the evidence, the line
//! that says what decided coming last (findings quote the last line).

use super::super::lease::lease_status;
use super::super::workload::describe;
use super::super::{ControllerState, FinalizerOwner, Liveness};
use super::alive::{Life, note_blind_spot};
use super::pick::Pick;
use super::verdict::{Found, Why};
use super::{Rung, Search};
use crate::graph::NodeId;

const NONE: &str = "no rung of the ladder ties a controller to it";

/// What every explanation reads.
pub(super) struct Ctx<'a> {
    pub s: &'a Search<'a>,
    pub found: &'a Found,
    pub picked: &'a Pick,
    pub blind: Option<String>,
    pub managed: Option<&'static str>,
    pub freshest: Option<NodeId>,
    pub state: ControllerState,
}

impl Ctx<'_> {
    fn owner(&self, evidence: Vec<String>) -> FinalizerOwner {
        FinalizerOwner {
            removed_by: None,
            controller: self.state,
            evidence,
            workload: None,
            since: None,
            by_permission_only: false,
            added_by_person: None,
        }
    }

    fn describe_all(&self, ws: &[NodeId]) -> Vec<String> {
        ws.iter().take(4).filter_map(|&w| self.s.l.graph.object(w).map(describe)).collect()
    }
}

/// One candidate tied only weakly: never Alive; only a Down verdict dates anything.
pub(super) fn weak(c: &Ctx<'_>, j: FinalizerOwner) -> FinalizerOwner {
    let Pick::One { best, .. } = c.picked else { unreachable!("a weak verdict is one candidate's") };
    let ties = c.found.cands[best];
    let w = j.workload.clone().expect("a judged workload");
    let mut evidence = j.evidence.clone();
    evidence.push(format!(
        "{w} is tied to this finalizer {}: no field manager, Event, leader lease, or name or installation together with RBAC ties it (rung 5 of the ladder: never enough to call it Alive)",
        ties.weakness()
    ));
    if j.controller == ControllerState::Alive {
        let not = if ties.permission { "permission is not ownership" } else { "a name is not ownership" };
        evidence.push(format!(
            "{w} runs, but {not}: what would settle it is its field manager on this object, its Events about it, a leader lease of this domain, or its logs"
        ));
    }
    let since = if c.state == ControllerState::Down { j.since } else { None };
    FinalizerOwner { controller: c.state, evidence, by_permission_only: true, since, ..j }
}

/// Candidates tied at `rung`, all alive or all down: which of them removes it is open, whether
/// it runs is not.
pub(super) fn tie_agrees(c: &Ctx<'_>, rung: Rung, lives: Vec<Life>) -> FinalizerOwner {
    let Pick::Tie { tied, .. } = c.picked else { unreachable!("a tie is a tie's") };
    let names = c.describe_all(tied);
    let mut evidence = c.found.evidence.clone();
    let since = lives.iter().filter_map(|x| x.since).max();
    for x in lives {
        evidence.extend(x.evidence);
    }
    let how = if c.state == ControllerState::Alive { "every one of them runs" } else { "none of them runs" };
    if c.state == ControllerState::Down {
        note_blind_spot(c.s.l, &mut evidence);
    }
    evidence.push(format!(
        "decided by {}: candidates tie, {}, and {how}: a tie says which of them removes it, not whether it runs",
        rung.label(),
        names.join(" and ")
    ));
    FinalizerOwner { removed_by: Some(format!("one of {}", or_list_owned(&names))), since, ..c.owner(evidence) }
}

/// Every other verdict: a tie that stays open, something gone, a person, a lease, nothing.
pub(super) fn other(c: &Ctx<'_>, why: Why, judged: Option<Vec<String>>) -> FinalizerOwner {
    let (s, found) = (c.s, c.found);
    let mut owner = c.owner(judged.unwrap_or_else(|| found.evidence.clone()));
    let ev = &mut owner.evidence;
    let weak_line = |ev: &mut Vec<String>| {
        if let Pick::One { best, .. } = c.picked
            && let Some(o) = s.l.graph.object(*best)
        {
            ev.push(format!(
                "{} is tied to this finalizer {}: no field manager, Event, leader lease, or name or installation together with RBAC ties it",
                describe(o),
                found.cands[best].weakness()
            ));
        }
    };
    match why {
        Why::Tie => {
            let Pick::Tie { tied, rung } = c.picked else { unreachable!("a tie is a tie's") };
            let names = c.describe_all(tied);
            let at = rung.map_or("rung 5 (weak evidence only)", Rung::label);
            let open =
                if rung.is_some() { "and they do not agree on whether it runs" } else { "by weak evidence only" };
            ev.push(format!(
                "decided by {at}: candidates tie, {}, {open}; what would settle it is the field manager that added the finalizer, their Events about the object, a leader lease of this domain, or their logs",
                names.join(" and ")
            ));
            owner.removed_by = Some(names.join(" or "));
            owner.by_permission_only = rung.is_none();
        }
        Why::Writing => {
            let m = &found.writing[0];
            owner.removed_by = Some(format!("field manager \"{m}\""));
            ev.push(format!(
                "decided by {}: field manager \"{m}\" added the finalizer and wrote the object after its deletion began: whatever runs as it is alive, though no workload in the snapshot resolves to it",
                Rung::Adder.label()
            ));
        }
        Why::AdderGone => {
            let m = &found.absent_adders[0];
            owner.removed_by = Some(format!("field manager \"{m}\""));
            weak_line(ev);
            ev.push(format!(
                "decided by {}: field manager \"{m}\" added the finalizer and no workload, container, ServiceAccount, app label, program, image or lease of that name remains: its controller appears to be uninstalled; {}",
                Rung::Adder.label(),
                searched(s, found)
            ));
        }
        Why::InstallationGone => {
            let i = found.installation_gone.clone().unwrap_or_default();
            weak_line(ev);
            ev.push(format!(
                "decided by install provenance: {i} installed the CRD that serves this kind, and none of its workloads runs: the controller appears to have been uninstalled with it, its CRD kept; {}",
                searched(s, found)
            ));
            owner.removed_by = Some(i);
        }
        Why::Person => {
            let m = &found.persons[0];
            owner.added_by_person = Some(m.clone());
            ev.push(format!(
                "decided by {}: a person's client (field manager \"{m}\") added the finalizer, and nothing else ties a controller to it: no controller will remove it; {}",
                Rung::Adder.label(),
                searched(s, found)
            ));
        }
        Why::LeaseOnly => {
            let lease = c.freshest.expect("a lease verdict has a lease");
            let lo = s.l.graph.object(lease).expect("unheld leases are observed");
            let st = lease_status(lo, s.l.now);
            ev.push(format!("decided by {} with no workload found: {}", Rung::Lease.label(), st.evidence));
            note_blind_spot(s.l, ev);
            owner.removed_by = Some(format!("leader of lease {}/{}", lo.namespace_str(), lo.name));
            owner.since = st.since;
        }
        Why::Blind => {
            owner.removed_by = removed_by_of(found);
            ev.push(format!("{NONE}, but {}", c.blind.clone().unwrap_or_default()));
        }
        Why::NothingToSearch => {
            ev.push(format!("{} names no domain, and no managedFields entry says who added it: {NONE}", s.finalizer))
        }
        Why::Managed => {
            owner.removed_by = removed_by_of(found);
            ev.push(format!(
                "no controller of it in the cluster, as expected: {}; its absence here proves nothing",
                c.managed.unwrap_or_default()
            ));
        }
        Why::Reserved => ev.push(format!(
            "{} is in a Kubernetes-reserved domain but not among the known built-in finalizers: {NONE}",
            s.finalizer
        )),
        Why::Absent => {
            owner.removed_by = removed_by_of(found);
            ev.push(absent_line(s.l, s, found));
        }
        Why::Rung(_) | Why::Weak | Why::TieAgrees(_) => unreachable!("judged by their own writers"),
    }
    owner
}

/// Missing with nothing found: what was searched, and what the snapshot did not hold.
fn absent_line(l: &Liveness<'_>, s: &Search<'_>, found: &Found) -> String {
    let what = s.domain.or(found.adders.first().map(String::as_str)).unwrap_or(s.finalizer);
    let mut line = format!(
        "{NONE}: no workload, Pod or leader-election lease found for {what}: the controller appears to be uninstalled"
    );
    if !found.idle_accounts.is_empty() {
        line.push_str(" (only its RBAC remains)");
    }
    let absent = l.visibility.absent();
    if !absent.is_empty() {
        let labels: Vec<&str> = absent.iter().map(|s| s.label()).collect();
        line.push_str(&format!("; the snapshot holds no {}", or_list(&labels)));
    }
    // the verdict's line comes last (findings quote it) and says what the search covered
    line.push_str(&format!("; {}", searched(s, found)));
    line
}

fn removed_by_of(found: &Found) -> Option<String> {
    found
        .idle_accounts
        .first()
        .map(|(ns, n)| format!("ServiceAccount {ns}/{n}"))
        .or_else(|| found.adders.first().map(|m| format!("field manager \"{m}\"")))
}

/// The lease renewed last.
pub(super) fn freshest(l: &Liveness<'_>, leases: &[NodeId]) -> Option<NodeId> {
    leases.iter().copied().max_by_key(|&id| {
        l.graph.object(id).and_then(|o| o.str_field("/spec/renewTime")).map(str::to_string).unwrap_or_default()
    })
}

/// What a Missing verdict searched, so that the absence can be checked.
fn searched(s: &Search<'_>, found: &Found) -> String {
    let mut parts = Vec::new();
    if !found.adders.is_empty() {
        parts.push(format!(
            "workloads, containers, ServiceAccounts, programs and images named {}",
            found.adders.join(", ")
        ));
    }
    if !found.names.is_empty() {
        parts.push(format!(
            "workloads, containers, ServiceAccounts, app labels and Leases named {}",
            found.names.list()
        ));
    }
    if s.domain.is_some() {
        parts.push(format!(
            "ServiceAccounts that RBAC lets update {}, and the Pods that run as them",
            s.groups.join(", ")
        ));
        parts.push(format!("leader-election Leases named after {}", s.domain.unwrap_or_default()));
    }
    if s.obj.is_some() {
        parts.push("the components reporting about it in its Events".to_string());
    }
    format!("searched: {}", parts.join("; "))
}

/// `a`, `a or b`, `a, b or c`.
fn or_list(items: &[&str]) -> String {
    match items {
        [] => String::new(),
        [one] => one.to_string(),
        [init @ .., last] => format!("{} or {last}", init.join(", ")),
    }
}

fn or_list_owned(items: &[String]) -> String {
    or_list(&items.iter().map(String::as_str).collect::<Vec<_>>())
}

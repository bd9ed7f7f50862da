//! Permission: the finalizer's domain → the CRD groups it names → the RBAC subjects allowed to
//! update them (or their `/finalizers`) → their ServiceAccounts → the Pods running as them →
//! their workloads. Alone it ties no one (an operator may hold `…/finalizers` only to grant it
//! to the agents it installs, and RBAC outlives what it was for); with a name (rung 4) or a
//! lease its workload holds (rung 3), it does.

use std::collections::BTreeMap;

use super::super::workload::{SaKey, describe};
use super::{Pass, Search, Tie, Ties};
use crate::graph::NodeId;

#[derive(Default, Debug)]
pub(super) struct Permitted {
    pub pass: Pass,
    /// ServiceAccounts RBAC permits that nothing runs as.
    pub idle_accounts: Vec<SaKey>,
}

pub(super) fn pass(s: &Search<'_>) -> Permitted {
    let l = s.l;
    let g = l.graph;
    let mut out = Permitted::default();
    let Some(d) = s.domain else { return out };
    let ev = &mut out.pass.evidence;
    let crds: Vec<_> = l.crds.matching(d).collect();
    if crds.is_empty() {
        ev.push(format!("domain {d} matches no CustomResourceDefinition group"));
    } else {
        let names: Vec<String> = crds.iter().map(|c| format!("{} (group {})", c.name, c.group)).collect();
        ev.push(format!("domain {d} matches CRD {}", names.join(", ")));
    }
    let grants = l.rbac.grants_for(d, &l.crds);
    if grants.is_empty() {
        ev.push(format!(
            "no Role or ClusterRole (wildcard admin roles aside) grants update or patch on {} to a ServiceAccount",
            s.groups.join(", ")
        ));
    }
    for sg in &grants {
        out.pass.evidence.extend(sg.evidence.iter().cloned());
        let (ns, name) = &sg.sa;
        let mut found: Vec<(NodeId, Option<&str>)> = Vec::new();
        for p in l.workloads.pods_running_as(&sg.sa) {
            if let Some(w) = l.workloads.workload_of_pod(p)
                && !found.iter().any(|(x, _)| *x == w)
            {
                found.push((w, g.object(p).map(|o| o.name.as_str())));
            }
        }
        for w in l.workloads.templated_as(&sg.sa) {
            if !found.iter().any(|(x, _)| *x == w) {
                found.push((w, None));
            }
        }
        if found.is_empty() {
            out.pass.evidence.push(format!("no Pod or workload runs as ServiceAccount {ns}/{name}"));
            out.idle_accounts.push(sg.sa.clone());
        }
        for (w, pod) in found.iter().take(3) {
            let Some(wo) = g.object(*w) else { continue };
            let line = match pod {
                Some(p) if *p != wo.name => format!("ServiceAccount {ns}/{name} runs Pod {p} of {}", describe(wo)),
                Some(_) => format!("ServiceAccount {ns}/{name} runs {}", describe(wo)),
                None => format!(
                    "ServiceAccount {ns}/{name} is the pod template's account of {} (no Pod of it running)",
                    describe(wo)
                ),
            };
            out.pass.evidence.push(line);
            out.pass.tie(*w, Tie::Permission { finalizers: sg.finalizers });
        }
    }
    out
}

/// How RBAC lets a workload update the object's own resource (or its `/finalizers`), whatever
/// the finalizer's domain (`<framework>.example/…` on a ConfigMap needs `configmaps`): the
/// grant's lines and the tie; else a role that may update everything (cluster-admin: no one in
/// particular, but permission all the same); `None` when neither.
pub(super) fn on_own_resource(s: &Search<'_>, w: NodeId) -> Option<(Vec<String>, Tie)> {
    let l = s.l;
    let sa = l.workloads.service_account_of(w)?;
    if let Some((group, plural)) = &s.resource {
        let (lines, finalizers) = l.rbac.grants_on(&sa, group, plural);
        if !lines.is_empty() {
            return Some((lines, Tie::Permission { finalizers }));
        }
    }
    (!l.rbac.wide_grants_to(&sa).is_empty()).then(|| (Vec::new(), Tie::WidePermission))
}

/// RBAC on the object's own resource for the candidates the other rungs found that the domain's
/// grants did not already tie (contract §4.3.3: RBAC is read for the object's resource).
pub(super) fn own_resource(s: &Search<'_>, cands: &BTreeMap<NodeId, Ties>) -> Pass {
    let mut out = Pass::default();
    for (&w, c) in cands {
        if c.permission || c.wide {
            continue;
        }
        if let Some((lines, t)) = on_own_resource(s, w) {
            out.evidence.extend(lines);
            out.tie(w, t);
        }
    }
    out
}

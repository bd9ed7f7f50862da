//! Names: workloads, containers, ServiceAccounts, app labels and the holders of Leases that the
//! finalizer names (its path, its domain's distinctive labels, the object's API group's) or the
//! object's kind names (`naming`), and whether RBAC lets each update the resource. A name with
//! permission is rung 4; a name alone, or only the product's prefix (`harbourmesh-pilot`), is
//! never enough. A workload whose own leader lease names another domain is not taken by name.

use super::super::naming::{FinalizerNames, NameMatch};
use super::super::workload::describe;
use super::{Pass, Search, Tie};
use crate::graph::NodeId;

#[derive(Default, Debug)]
pub(super) struct Named {
    pub pass: Pass,
    /// The component the finalizer's path names, when no workload bears it.
    pub absent_component: Option<String>,
    /// Every name the finalizer and the object give (for what a Missing verdict searched).
    pub names: FinalizerNames,
}

pub(super) fn pass(s: &Search<'_>, permitted: &Pass) -> Named {
    let l = s.l;
    let g = l.graph;
    let (group, kind) = s.obj.map_or(("", ""), |o| (o.group(), o.kind.as_str()));
    let names = FinalizerNames::of(s.finalizer).with_group_of_object(s.finalizer, group).with_kind(group, kind);
    let mut out = Named { names: names.clone(), ..Named::default() };
    // the path is the more specific name: where a workload bears it, the domain's labels (which
    // every component of a product bears) name no one
    let by_path = names.path_only().filter(|p| !l.workloads.named_by(|n| p.matches(n)).is_empty());
    let absent_component = names.component().filter(|_| by_path.is_none()).map(str::to_string);
    if let Some(c) = &absent_component {
        out.pass.evidence.push(format!(
            "the finalizer names the component {c}, and no workload, container, ServiceAccount or app label bears that name"
        ));
    }
    let nobody = FinalizerNames::default();
    let naming = match (&by_path, &absent_component) {
        (Some(p), _) => p,
        (None, Some(_)) => &nobody,
        (None, None) => &names,
    };
    out.absent_component = absent_component;
    if naming.is_empty() {
        return out;
    }
    let exact = |n: &str| naming.match_of(n) == Some(NameMatch::Named);
    let strong: Vec<(NodeId, String)> =
        l.workloads.named_by(exact).into_iter().map(|(w, how)| (w, format!("by {}", how.label()))).collect();
    let mut found: Vec<(NodeId, String)> = l
        .workloads
        .named_by(|n| naming.matches(n))
        .into_iter()
        .map(|(w, how)| match strong.iter().find(|(x, _)| *x == w) {
            Some((_, by)) => (w, by.clone()),
            None => (w, format!("by {}", how.label())),
        })
        .collect();
    let domain_leases = l.leases.matching(g, &s.groups.iter().map(String::as_str).collect::<Vec<_>>());
    let mut lease_named: Vec<NodeId> = Vec::new();
    for lease in l.leases.named(g, |n| naming.matches(n)) {
        if domain_leases.contains(&lease) {
            continue;
        }
        if let (Some((w, _)), Some(lo)) = (l.leases.holder_workload(lease), g.object(lease))
            && !found.iter().any(|(x, _)| *x == w)
        {
            if exact(&lo.name) {
                lease_named.push(w);
            }
            found.push((w, format!("by its leader lease {}/{}", lo.namespace_str(), lo.name)));
        }
    }
    let mut shown = 0;
    for (w, how) in found {
        let Some(wo) = g.object(w) else { continue };
        if let Some(other) = foreign_lease(s, w) {
            out.pass
                .evidence
                .push(format!("{} is named like the finalizer ({how}), but its own {other}", describe(wo)));
            continue;
        }
        let is_named = strong.iter().any(|(x, _)| *x == w) || lease_named.contains(&w);
        if shown < 3 {
            out.pass.evidence.push(if is_named {
                format!(
                    "{} is named by the finalizer ({how}; the names it and the object's kind give: {})",
                    describe(wo),
                    naming.list()
                )
            } else {
                format!(
                    "{} only bears the product's prefix of a name the finalizer gives ({how}; the names it and the object's kind give: {}), as every component of a product does",
                    describe(wo),
                    naming.list()
                )
            });
        }
        shown += 1;
        out.pass.tie(w, if is_named { Tie::Named } else { Tie::ProductPrefix });
        permission_of(s, w, permitted, &mut out.pass);
    }
    out
}

/// Whether RBAC lets a named workload update the object's resource (or its `/finalizers`),
/// beyond what the permission pass found.
fn permission_of(s: &Search<'_>, w: NodeId, permitted: &Pass, out: &mut Pass) {
    if permitted.ties.iter().any(|&(x, t)| x == w && matches!(t, Tie::Permission { .. })) {
        return;
    }
    if let Some((lines, t)) = super::permission::on_own_resource(s, w) {
        out.evidence.extend(lines);
        out.tie(w, t);
    }
}

/// The domain a leader lease is named after (kubebuilder's `<id>.<domain>`): what follows its
/// first dot, when that is a DNS name ending in a top-level domain (letters only). Knative names
/// a reconciler's leases after its Go package and a shard
/// (`<component>.github.com.<org>.<repo>.pkg.reconciler.<kind>.reconciler.00-of-01`): no domain,
/// so such a lease counts for whoever holds it (contract §4.3.3, "Weighing the rungs together").
pub(super) fn lease_domain(name: &str) -> Option<&str> {
    let (_, d) = name.split_once('.')?;
    let tld = d.rsplit('.').next()?;
    (d.contains('.') && !tld.is_empty() && tld.bytes().all(|b| b.is_ascii_alphabetic())).then_some(d)
}

/// A domain-named leader lease (`<id>.<domain>`) that the workload holds for another domain
/// than the search's, described; `None` when it holds none or one of these.
pub(super) fn foreign_lease(s: &Search<'_>, w: NodeId) -> Option<String> {
    let l = s.l;
    let g = l.graph;
    let held: Vec<&crate::snapshot::Object> = l.leases.of_workload(w).iter().filter_map(|&id| g.object(id)).collect();
    let domain_of = |name: &str| lease_domain(name).map(str::to_string);
    if held.is_empty()
        || held.iter().any(|o| {
            domain_of(&o.name).is_none_or(|d| s.groups.iter().any(|gr| super::super::domain::domains_match(&d, gr)))
        })
    {
        return None;
    }
    let o = held[0];
    Some(format!("leader lease {}/{} names {}", o.namespace_str(), o.name, domain_of(&o.name).unwrap_or_default()))
}

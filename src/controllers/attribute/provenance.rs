//! Install provenance (contract §4.3.3, "Weighing the rungs together"): the CRD that serves the
//! object's kind says which installation put it there (a controller owner reference to what
//! installed it: Crossplane's ProviderRevision, or an operator's own Deployment; OLM's
//! `olm.owner` label, or operator-controller's (OLM v1) `olm.operatorframework.io/owner-name`;
//! Helm's or a tool's `app.kubernetes.io/instance`; `app.kubernetes.io/part-of`), and the workloads of
//! that installation are the controller's likely home. One that may update the resource ties at
//! rung 4; one that may not ties nothing (a dashboard of the same product). An installation with
//! no workload left (the operator uninstalled, its CRDs kept) is evidence for Missing, and the
//! answer names it so that the person knows what to reinstall.
//!
//! Helm's `meta.helm.sh/release-name` annotations are not read: the snapshot keeps labels, not
//! annotations; the chart's `app.kubernetes.io/instance` label carries the release's name.

use std::collections::BTreeMap;

use super::super::workload::describe;
use super::{Pass, Search, Tie, Ties};
use crate::graph::NodeId;
use crate::snapshot::Object;

/// How the CRD names what installed it, most specific first.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Key {
    /// A controller owner reference: (kind, uid).
    Owner(String, String),
    /// A label and its value.
    Label(&'static str, String),
}

impl Key {
    fn of(crd: &Object) -> Option<(Key, String)> {
        if let Some(r) = crd.owner_references.iter().find(|r| r.is_controller()) {
            return Some((Key::Owner(r.kind.clone(), r.uid.0.clone()), format!("{} {}", r.kind, r.name)));
        }
        if let Some(csv) = crd.label("olm.owner") {
            let ns = crd.label("olm.owner.namespace").map(|n| format!("{n}/")).unwrap_or_default();
            return Some((Key::Label("olm.owner", csv.to_string()), format!("ClusterServiceVersion {ns}{csv}")));
        }
        if let Some(owner) = crd.label("olm.operatorframework.io/owner-name") {
            let kind = crd.label("olm.operatorframework.io/owner-kind").unwrap_or("ClusterExtension");
            return Some((
                Key::Label("olm.operatorframework.io/owner-name", owner.to_string()),
                format!("{kind} {owner}"),
            ));
        }
        if let Some(i) = crd.label("app.kubernetes.io/instance") {
            let by = match crd.label("app.kubernetes.io/managed-by") {
                Some(m) if m.eq_ignore_ascii_case("helm") => format!("Helm release {i}"),
                _ => format!("the installation {i} (app.kubernetes.io/instance)"),
            };
            return Some((Key::Label("app.kubernetes.io/instance", i.to_string()), by));
        }
        crd.label("app.kubernetes.io/part-of").map(|p| {
            (
                Key::Label("app.kubernetes.io/part-of", p.to_string()),
                format!("the installation of {p} (app.kubernetes.io/part-of)"),
            )
        })
    }

    /// Whether `o` is of the installation: it bears the label, or is owned by (or is) the owner.
    fn marks(&self, o: &Object) -> bool {
        match self {
            Key::Owner(kind, uid) => {
                (&o.kind == kind && o.uid.0 == *uid)
                    || o.owner_references.iter().any(|r| &r.kind == kind && r.uid.0 == *uid)
            }
            Key::Label(k, v) => o.label(k) == Some(v.as_str()),
        }
    }

    fn what(&self) -> String {
        match self {
            Key::Owner(kind, _) => format!("an owner reference to that {kind}"),
            Key::Label(k, v) => format!("{k}={v}"),
        }
    }
}

#[derive(Default, Debug)]
pub(super) struct Provenance {
    pub pass: Pass,
    /// The installation that installed the kind's CRD, when none of its workloads is left.
    pub gone: Option<String>,
}

pub(super) fn pass(s: &Search<'_>, cands: &BTreeMap<NodeId, Ties>) -> Provenance {
    let l = s.l;
    let g = l.graph;
    let mut out = Provenance::default();
    let Some((group, plural)) = &s.resource else { return out };
    // by its plural, else by its kind (where discovery did not give the plural, it was guessed)
    let kind = s.obj.map_or("", |o| o.kind.as_str());
    let crd = l.crds.serving(group, plural).or_else(|| {
        l.crds
            .matching(group)
            .find(|c| c.group == *group && g.object(c.node).and_then(|o| o.str_field("/spec/names/kind")) == Some(kind))
    });
    let Some(crd) = crd else { return out };
    let Some(co) = g.object(crd.node) else { return out };
    let Some((key, installer)) = Key::of(co) else { return out };
    let kinds = [("apps", "Deployment"), ("apps", "StatefulSet"), ("apps", "DaemonSet")];
    let installed: Vec<NodeId> =
        g.of_kinds(&kinds).into_iter().filter(|&w| g.object(w).is_some_and(|o| key.marks(o))).collect();
    let about = format!("{installer} installed CRD {}", crd.name);
    if installed.is_empty() {
        out.pass.evidence.push(format!(
            "{about}; none of its workloads runs: no Deployment, StatefulSet or DaemonSet bears {}",
            key.what()
        ));
        out.gone = Some(installer);
        return out;
    }
    for &w in installed.iter().take(3) {
        let Some(wo) = g.object(w) else { continue };
        let permitted = cands.get(&w).is_some_and(|c| c.permission || c.wide) || {
            let granted = super::permission::on_own_resource(s, w);
            let found = granted.is_some();
            if let Some((lines, t)) = granted {
                out.pass.evidence.extend(lines);
                out.pass.tie(w, t);
            }
            found
        };
        if permitted {
            out.pass.evidence.push(format!(
                "{about}, and {} of that installation may update {plural}: tied by install provenance",
                describe(wo)
            ));
            out.pass.tie(w, Tie::Installed);
        } else {
            out.pass.evidence.push(format!(
                "{about}; {} of that installation may not update {plural}: install provenance ties it to nothing",
                describe(wo)
            ));
        }
    }
    out
}

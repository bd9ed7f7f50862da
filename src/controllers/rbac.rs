//! Who may update a resource: Roles and ClusterRoles whose rules grant `update` or `patch` on an
//! API group's resources (or their `finalizers` subresource), and the ServiceAccounts bound to
//! them. Rules that grant everything (`apiGroups: ["*"]`, `resources: ["*"]`, as cluster-admin
//! and the built-in controllers' roles do) say nothing about one operator and are ignored.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use serde_json::Value;

use super::domain::{Crds, domains_match};
use super::workload::SaKey;
use crate::graph::Graph;

/// A Role (namespaced) or ClusterRole.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RoleKey {
    /// `None` for a ClusterRole.
    pub namespace: Option<String>,
    pub name: String,
}

impl RoleKey {
    fn describe(&self) -> String {
        match &self.namespace {
            Some(ns) => format!("Role {ns}/{}", self.name),
            None => format!("ClusterRole {}", self.name),
        }
    }
}

/// One rule granting update or patch in `group` on `resources`.
#[derive(Clone, Debug)]
struct Grant {
    role: RoleKey,
    resources: Vec<String>,
}

#[derive(Clone, Debug)]
struct Binding {
    /// `ClusterRoleBinding name` or `RoleBinding ns/name`.
    describe: String,
    subjects: Vec<SaKey>,
}

/// A ServiceAccount allowed to update the resources a finalizer's domain names, and how.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SaGrant {
    pub sa: SaKey,
    /// Whether it may update a `…/finalizers` subresource (what controller-runtime operators ask
    /// for; editors and CI accounts rarely do).
    pub finalizers: bool,
    /// One line per role and binding: `ClusterRole x may update sites, sites/finalizers
    /// (own.labhub.io); ClusterRoleBinding x binds it to ServiceAccount ns/sa`.
    pub evidence: Vec<String>,
}

/// RBAC rules and bindings, indexed once.
#[derive(Default)]
pub struct Rbac {
    /// Rules by the API group they name (never `*`).
    by_group: BTreeMap<String, Vec<Grant>>,
    /// Rules with `apiGroups: ["*"]` and named resources.
    any_group: Vec<Grant>,
    bindings: HashMap<RoleKey, Vec<Binding>>,
    /// Roles that may update every resource of every group (cluster-admin and the like).
    wide: BTreeSet<RoleKey>,
}

fn strings(v: Option<&Value>) -> Vec<String> {
    v.and_then(|v| v.as_array()).into_iter().flatten().filter_map(|s| s.as_str().map(str::to_string)).collect()
}

/// The ServiceAccount a binding subject names, if any (`ServiceAccount`, or a `User`
/// `system:serviceaccount:<ns>:<name>`).
fn subject_sa(s: &Value, binding_ns: Option<&str>) -> Option<SaKey> {
    let kind = s.get("kind")?.as_str()?;
    let name = s.get("name")?.as_str()?;
    match kind {
        "ServiceAccount" => {
            let ns = s.get("namespace").and_then(|v| v.as_str()).filter(|n| !n.is_empty()).or(binding_ns)?;
            Some((ns.to_string(), name.to_string()))
        }
        "User" => {
            let rest = name.strip_prefix("system:serviceaccount:")?;
            let (ns, n) = rest.split_once(':')?;
            Some((ns.to_string(), n.to_string()))
        }
        _ => None,
    }
}

impl Rbac {
    pub fn new(g: &Graph) -> Rbac {
        let mut r = Rbac::default();
        const RBAC: &str = "rbac.authorization.k8s.io";
        let kinds = [(RBAC, "Role"), (RBAC, "ClusterRole"), (RBAC, "RoleBinding"), (RBAC, "ClusterRoleBinding")];
        for id in g.of_kinds(&kinds) {
            let Some(o) = g.object(id) else { continue };
            match o.kind.as_str() {
                "Role" | "ClusterRole" => {
                    let role = RoleKey {
                        namespace: (o.kind == "Role").then(|| o.namespace_str().to_string()),
                        name: o.name.clone(),
                    };
                    for rule in o.field("/rules").and_then(|v| v.as_array()).into_iter().flatten() {
                        let verbs = strings(rule.get("verbs"));
                        if !verbs.iter().any(|v| v == "update" || v == "patch" || v == "*") {
                            continue;
                        }
                        let groups = strings(rule.get("apiGroups"));
                        let resources = strings(rule.get("resources"));
                        let star_group = groups.iter().any(|gr| gr == "*");
                        if star_group && resources.iter().any(|r| r == "*") {
                            r.wide.insert(role.clone());
                            continue; // cluster-admin and the like
                        }
                        let grant = Grant { role: role.clone(), resources };
                        if star_group {
                            r.any_group.push(grant);
                        } else {
                            for gr in groups {
                                r.by_group.entry(gr).or_default().push(grant.clone());
                            }
                        }
                    }
                }
                "RoleBinding" | "ClusterRoleBinding" => {
                    let ns = (o.kind == "RoleBinding").then(|| o.namespace_str());
                    let (Some(kind), Some(name)) = (o.str_field("/roleRef/kind"), o.str_field("/roleRef/name")) else {
                        continue;
                    };
                    let role = RoleKey {
                        namespace: (kind == "Role").then(|| ns.unwrap_or("").to_string()),
                        name: name.to_string(),
                    };
                    let subjects: Vec<SaKey> = o
                        .field("/subjects")
                        .and_then(|v| v.as_array())
                        .into_iter()
                        .flatten()
                        .filter_map(|s| subject_sa(s, ns))
                        .collect();
                    let describe = match ns {
                        Some(ns) => format!("RoleBinding {ns}/{}", o.name),
                        None => format!("ClusterRoleBinding {}", o.name),
                    };
                    r.bindings.entry(role).or_default().push(Binding { describe, subjects });
                }
                _ => {}
            }
        }
        r
    }

    /// The ServiceAccounts allowed to update or patch what `domain` names: the resources of
    /// every API group matching the domain (the CRDs' plurals and their `finalizers`
    /// subresource where the CRDs are known, any resource of the group otherwise).
    pub fn grants_for<'s>(&'s self, domain: &'s str, crds: &'s Crds) -> Vec<SaGrant> {
        // role → (groups, resources it may update)
        let mut roles: BTreeMap<&RoleKey, (BTreeSet<&str>, BTreeSet<&str>)> = BTreeMap::new();
        let mut add = |gr: &'s Grant, group: &'s str, plurals: &[&str]| {
            let hits = gr.resources.iter().map(String::as_str).filter(|r| resource_matches(r, plurals));
            let mut hits = hits.peekable();
            if hits.peek().is_some() {
                let e = roles.entry(&gr.role).or_default();
                e.0.insert(group);
                e.1.extend(hits);
            }
        };
        for (group, grants) in self.by_group.iter().filter(|(gr, _)| domains_match(gr, domain)) {
            let plurals: Vec<&str> = crds.plurals_of(group).collect();
            for gr in grants {
                add(gr, group, &plurals);
            }
        }
        for c in crds.matching(domain) {
            for gr in &self.any_group {
                add(gr, &c.group, &[&c.plural]);
            }
        }
        let mut by_sa: BTreeMap<SaKey, SaGrant> = BTreeMap::new();
        for (role, (groups, resources)) in roles {
            let finalizers = resources.iter().any(|r| r.ends_with("/finalizers"));
            for b in self.bindings.get(role).into_iter().flatten() {
                for sa in &b.subjects {
                    let line = format!(
                        "{} may update {} ({}); {} binds it to ServiceAccount {}/{}",
                        role.describe(),
                        resources.iter().copied().collect::<Vec<_>>().join(", "),
                        groups.iter().copied().collect::<Vec<_>>().join(", "),
                        b.describe,
                        sa.0,
                        sa.1
                    );
                    let e = by_sa.entry(sa.clone()).or_insert_with(|| SaGrant {
                        sa: sa.clone(),
                        finalizers: false,
                        evidence: Vec::new(),
                    });
                    e.finalizers |= finalizers;
                    if !e.evidence.contains(&line) {
                        e.evidence.push(line);
                    }
                }
            }
        }
        by_sa.into_values().collect()
    }
}

impl Rbac {
    /// How `sa` may update `plural` in `group` (or its `/finalizers`) through a rule that names
    /// that group or every group: one line per role and binding. Wide roles are
    /// [`Rbac::wide_grants_to`]'s. The flag: whether `/finalizers` is among what it may update.
    pub fn grants_on(&self, sa: &SaKey, group: &str, plural: &str) -> (Vec<String>, bool) {
        let grants = self.by_group.get(group).into_iter().flatten().chain(&self.any_group);
        let mut out = Vec::new();
        let mut finalizers = false;
        for gr in grants {
            let hits: Vec<&str> =
                gr.resources.iter().map(String::as_str).filter(|r| resource_matches(r, &[plural])).collect();
            if hits.is_empty() {
                continue;
            }
            for b in self.bindings.get(&gr.role).into_iter().flatten().filter(|b| b.subjects.contains(sa)) {
                finalizers |= hits.iter().any(|r| r.ends_with("/finalizers"));
                let line = format!(
                    "{} may update {} ({}); {} binds it to ServiceAccount {}/{}",
                    gr.role.describe(),
                    hits.join(", "),
                    if group.is_empty() { "core" } else { group },
                    b.describe,
                    sa.0,
                    sa.1
                );
                if !out.contains(&line) {
                    out.push(line);
                }
            }
        }
        (out, finalizers)
    }

    /// How `sa` is bound to a role that may update everything: one line per binding. Such a
    /// grant names no controller in particular (attribution skips it), but a workload found by
    /// its name or field manager is said to run with it.
    pub fn wide_grants_to(&self, sa: &SaKey) -> Vec<String> {
        let mut out = Vec::new();
        for role in &self.wide {
            for b in self.bindings.get(role).into_iter().flatten() {
                if b.subjects.contains(sa) {
                    out.push(format!(
                        "{} binds {} (every resource) to ServiceAccount {}/{}",
                        b.describe,
                        role.describe(),
                        sa.0,
                        sa.1
                    ));
                }
            }
        }
        out
    }
}

/// Whether a rule's resource covers one of `plurals` (or anything, when no plural is known).
fn resource_matches(r: &str, plurals: &[&str]) -> bool {
    if r == "*" || r == "*/finalizers" {
        return true;
    }
    let base = r.strip_suffix("/finalizers").unwrap_or(r);
    if r.contains('/') && !r.ends_with("/finalizers") {
        return false; // status and other subresources do not touch metadata.finalizers
    }
    plurals.is_empty() || plurals.contains(&base)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::controllers::tests::graph_of;

    #[test]
    fn only_specific_update_rules_name_service_accounts() {
        let g = graph_of(&[
            r#"{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"sites.own.labhub.io","uid":"c"},
                "spec":{"group":"own.labhub.io","names":{"plural":"sites"}}}"#,
            r#"{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRole","metadata":{"name":"admin-ish","uid":"a"},
                "rules":[{"apiGroups":["*"],"resources":["*"],"verbs":["*"]}]}"#,
            r#"{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRole","metadata":{"name":"status-writer","uid":"s"},
                "rules":[{"apiGroups":["own.labhub.io"],"resources":["sites/status"],"verbs":["update"]}]}"#,
            r#"{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRole","metadata":{"name":"reader","uid":"r"},
                "rules":[{"apiGroups":["own.labhub.io"],"resources":["sites"],"verbs":["get","list"]}]}"#,
            r#"{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRole","metadata":{"name":"finalizer-only","uid":"f"},
                "rules":[{"apiGroups":["*"],"resources":["sites/finalizers"],"verbs":["update"]}]}"#,
            r#"{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRoleBinding","metadata":{"name":"all","uid":"b"},
                "roleRef":{"kind":"ClusterRole","name":"admin-ish"},
                "subjects":[{"kind":"ServiceAccount","name":"admin","namespace":"x"}]}"#,
            r#"{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRoleBinding","metadata":{"name":"st","uid":"b2"},
                "roleRef":{"kind":"ClusterRole","name":"status-writer"},"subjects":[{"kind":"ServiceAccount","name":"st","namespace":"x"}]}"#,
            r#"{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRoleBinding","metadata":{"name":"rd","uid":"b3"},
                "roleRef":{"kind":"ClusterRole","name":"reader"},"subjects":[{"kind":"ServiceAccount","name":"rd","namespace":"x"}]}"#,
            r#"{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"RoleBinding","metadata":{"name":"fin","namespace":"ops","uid":"b4"},
                "roleRef":{"kind":"ClusterRole","name":"finalizer-only"},
                "subjects":[{"kind":"User","name":"system:serviceaccount:ops:op"},{"kind":"Group","name":"devs"}]}"#,
        ]);
        let rbac = Rbac::new(&g);
        let crds = Crds::new(&g);
        let grants = rbac.grants_for("own.labhub.io", &crds);
        assert_eq!(grants.len(), 1, "{grants:#?}");
        assert_eq!(grants[0].sa, ("ops".to_string(), "op".to_string()));
        assert!(grants[0].finalizers);
        assert!(grants[0].evidence[0].contains("RoleBinding ops/fin binds it to ServiceAccount ops/op"), "{grants:#?}");
        assert!(rbac.grants_for("other.example.com", &crds).is_empty());
    }
}

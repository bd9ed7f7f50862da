//! Owners and controllers: which kinds to look for across namespaces, and where controllers live.

use std::collections::{BTreeSet, HashSet};

use serde_json::Value;

use crate::snapshot::object::group_of;
use crate::source::live::ask::Answered;
use crate::source::live::{Discovery, ListType};

/// The namespaced kinds of owners that the objects read name but that are not among them (by
/// uid): an owner in the same namespace needs no cluster-wide list to be told from an absent
/// one. In group, kind order; only kinds discovery serves.
pub fn missing_owner_kinds<'d>(d: &'d Discovery, read: &[Answered]) -> Vec<&'d ListType> {
    let docs = || read.iter().flat_map(|a| a.result.iter().flatten());
    let read_uids: HashSet<&str> = docs().filter_map(|doc| doc.metadata.as_ref()?.uid.as_deref()).collect();
    let mut wanted = BTreeSet::new();
    for doc in docs() {
        for r in doc.metadata.iter().flat_map(|m| m.owner_references.iter().flatten()) {
            if r.uid.as_deref().is_some_and(|u| read_uids.contains(u)) {
                continue;
            }
            if let (Some(av), Some(kind)) = (&r.api_version, &r.kind) {
                wanted.insert((group_of(av).to_string(), kind.clone()));
            }
        }
    }
    wanted.into_iter().filter_map(|(g, k)| d.find(&g, &k)).collect()
}

/// Namespaces that hold controllers: those of the ServiceAccounts that (Cluster)RoleBindings
/// name, and of leader-election Leases (node heartbeats aside).
pub fn controller_namespaces(read: &[Answered]) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for a in read {
        let Ok(docs) = &a.result else { continue };
        match (a.ask.kind.group.as_str(), a.ask.kind.kind.as_str()) {
            ("rbac.authorization.k8s.io", "RoleBinding" | "ClusterRoleBinding") => {
                for doc in docs {
                    for s in doc.body_field("subjects").and_then(Value::as_array).into_iter().flatten() {
                        if s.get("kind").and_then(|k| k.as_str()) == Some("ServiceAccount")
                            && let Some(ns) = s.get("namespace").and_then(|n| n.as_str())
                        {
                            out.insert(ns.to_string());
                        }
                    }
                }
            }
            ("coordination.k8s.io", "Lease") => {
                for doc in docs {
                    if let Some(ns) = doc.metadata.as_ref().and_then(|m| m.namespace.as_deref())
                        && ns != crate::names::NODE_LEASE_NAMESPACE
                    {
                        out.insert(ns.to_string());
                    }
                }
            }
            _ => {}
        }
    }
    out
}

//! Which CustomResourceDefinitions an answer reads in full.

use std::collections::{BTreeSet, HashMap, HashSet};

use crate::snapshot::object::group_of;
use crate::snapshot::raw::RawDoc;
use crate::source::live::Discovery;

use super::{CRD, TargetRef};

/// The CRDs, among those read (metadata-only), whose spec or status an answer reads: those
/// being deleted, those discovery does not serve (their name is `<plural>.<group>`), and the
/// target and the CRDs among its dependents (following owner references by uid, as the
/// garbage collector links them; the graph is not built yet, and only what reaches a CRD
/// matters here).
pub fn crd_bodies_wanted<'a>(
    d: &Discovery,
    target: Option<&TargetRef>,
    read: impl Iterator<Item = &'a RawDoc>,
) -> BTreeSet<String> {
    let docs: Vec<&RawDoc> = read.collect();
    let is_crd_doc = |doc: &RawDoc| {
        doc.kind.as_deref() == Some(CRD.1) && doc.api_version.as_deref().is_some_and(|av| group_of(av) == CRD.0)
    };
    let served: HashSet<(&str, &str)> = d
        .lists
        .iter()
        .flat_map(|l| {
            let g = group_of(&l.group_version);
            l.resources.iter().map(move |r| (r.group.as_deref().unwrap_or(g), r.plural.as_str()))
        })
        .collect();
    let mut out = BTreeSet::new();
    for doc in docs.iter().filter(|doc| is_crd_doc(doc)) {
        let Some(m) = &doc.metadata else { continue };
        let Some(name) = &m.name else { continue };
        let covered = name.split_once('.').is_some_and(|(plural, group)| served.contains(&(group, plural)));
        if m.deletion_timestamp.is_some() || !covered {
            out.insert(name.clone());
        }
    }
    let Some(tr) = target else { return out };
    if tr.group == CRD.0 && tr.kind == CRD.1 {
        out.insert(tr.name.clone());
    }
    let is_target = |doc: &RawDoc| {
        doc.kind.as_deref() == Some(tr.kind.as_str())
            && doc.api_version.as_deref().is_some_and(|av| group_of(av) == tr.group)
            && doc
                .metadata
                .as_ref()
                .is_some_and(|m| m.name.as_deref() == Some(tr.name.as_str()) && m.namespace == tr.namespace)
    };
    // only a CRD with owner references can be a dependent
    if !docs.iter().any(|doc| {
        is_crd_doc(doc)
            && doc.metadata.as_ref().is_some_and(|m| m.owner_references.as_ref().is_some_and(|r| !r.is_empty()))
    }) {
        return out;
    }
    let Some(start) = docs.iter().find(|doc| is_target(doc)).and_then(|doc| doc.metadata.as_ref()?.uid.as_deref())
    else {
        return out;
    };
    // dependents by owner uid; only what reaches a CRD matters, but any object may be between
    let mut children: HashMap<&str, Vec<&RawDoc>> = HashMap::new();
    for doc in &docs {
        for r in doc.metadata.iter().flat_map(|m| m.owner_references.iter().flatten()) {
            if let Some(u) = r.uid.as_deref() {
                children.entry(u).or_default().push(doc);
            }
        }
    }
    let mut seen: HashSet<&str> = HashSet::from([start]);
    let mut queue = vec![start];
    while let Some(u) = queue.pop() {
        for child in children.get(u).into_iter().flatten() {
            let Some(m) = &child.metadata else { continue };
            let Some(cu) = m.uid.as_deref() else { continue };
            if !seen.insert(cu) {
                continue;
            }
            if is_crd_doc(child)
                && let Some(n) = &m.name
            {
                out.insert(n.clone());
            }
            queue.push(cu);
        }
    }
    out
}

//! Reading named objects: a GET each when they are few, else lists kept to them.

use std::collections::BTreeSet;

use crate::source::live::ListType;
use crate::source::live::ask::{Ask, Named};

/// When named objects are read with lists rather than a GET each.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Up to this many objects: a GET each.
    pub gets: usize,
    /// More, of a namespaced type in up to this many namespaces: a list in each; more: one
    /// list of the type everywhere.
    pub namespaces: usize,
}

/// Whether `wanted` objects are few among the `there` a list would send: under a quarter of
/// them, or one (a list is never cheaper than its GET). A GET costs what it reads, a list what
/// its type holds where it lists: at a quarter or more, one list reads at most four times
/// their bytes, in one request instead of one per object.
pub fn few_among(wanted: usize, there: usize) -> bool {
    wanted == 1 || wanted * 4 < there
}

/// The asks that read `objects` ((namespace, name)) of type `t`: a metadata-only GET each up
/// to `limits.gets`; else lists (metadata-only) kept to those objects, one per namespace
/// concerned when they are few enough, else one across every namespace. Callers set the body
/// and use.
pub fn by_name(t: &ListType, objects: &Named, limits: Limits, why: &str) -> Vec<Ask> {
    if objects.is_empty() {
        return Vec::new();
    }
    if objects.len() <= limits.gets {
        return objects.iter().map(|(ns, n)| Ask::get(t, ns.clone(), n, why)).collect();
    }
    let namespaces: BTreeSet<&Option<String>> = objects.iter().map(|(ns, _)| ns).collect();
    if t.namespaced && namespaces.len() <= limits.namespaces {
        namespaces.into_iter().map(|ns| Ask::list(t, ns.clone(), why).only(objects.clone())).collect()
    } else {
        vec![Ask::list(t, None, why).only(objects.clone())]
    }
}

//! Plain data: what was read from a cluster or a file, before any analysis.

pub mod event;
pub mod gap;
pub mod object;
pub mod raw;
pub mod write;

pub use gap::{Gap, Missing, Resource};
pub use object::{Condition, FinalizerManager, Object, OwnerRef, Uid};

use k8s_openapi::jiff::Timestamp;

/// One resource of an `APIResourceList` (discovery data, as `kubectl gc snapshot` records it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ApiResource {
    /// The resource name in URLs (`replicasets`), or `resource/subresource` (`pods/status`).
    pub plural: String,
    /// The singular name, when the server gives one.
    pub singular: Option<String>,
    /// True when objects live in a namespace.
    pub namespaced: bool,
    /// The group when it differs from the list's (e.g. a subresource of another group).
    pub group: Option<String>,
    /// The version when it differs from the list's.
    pub version: Option<String>,
    /// The kind of objects it serves.
    pub kind: String,
    /// The verbs allowed (`list`, `delete`, …).
    pub verbs: Vec<String>,
    /// Short names kubectl accepts (`rs`).
    pub short_names: Vec<String>,
    /// Categories (`all`).
    pub categories: Vec<String>,
}

/// An `APIResourceList`: the resources served in one group/version.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResourceList {
    /// `group/version`, or `v1` for the core group.
    pub group_version: String,
    /// The resources served there.
    pub resources: Vec<ApiResource>,
}

/// Everything one run reads: the objects, the discovery data that came with them, when they
/// were captured, and what could not be read.
#[derive(Clone, Debug, Default)]
pub struct Snapshot {
    /// When the objects were read: the answers' "now" unless `--now` is given, so a file read
    /// tomorrow answers as of its capture (the clock when unrecorded).
    pub captured_at: Option<Timestamp>,
    /// The kubeconfig context the objects were read through (live, or as a `kubectl gc
    /// snapshot` file recorded it): the cluster printed commands are bound to.
    pub context: Option<String>,
    /// That context's namespace when the snapshot was taken (a `kubectl gc snapshot` file
    /// records it): what `-n` defaults to offline, as it did live.
    pub namespace: Option<String>,
    /// The API server URL the objects were read from (a `kubectl gc snapshot` file records
    /// it): printed commands name it beside the context, so that a context of the same name in
    /// another kubeconfig cannot take them to another cluster.
    pub server: Option<String>,
    /// The server's version (`gitVersion`, e.g. `v1.34.2`), as read from `/version` live or
    /// recorded by `kubectl gc snapshot`: behaviour that changed between releases (ordered
    /// namespace deletion) is judged by it. `None` when unread or unrecorded.
    pub server_version: Option<String>,
    /// The objects, in the order read (the graph sorts its own nodes).
    pub objects: Vec<Object>,
    /// The discovery data read with the objects; empty for a file without any.
    pub resource_lists: Vec<ResourceList>,
    /// What could not be read (a forbidden type, a failing group): answers that depend on
    /// it are Unknown, never guessed.
    pub incomplete: Vec<Gap>,
    /// Input problems that did not stop the run (skipped objects, duplicate uids).
    pub warnings: Vec<String>,
}

impl Snapshot {
    /// Builds a snapshot from flattened documents, warning once about what was skipped and
    /// keeping the first of any objects that share a uid.
    pub fn from_flattened(f: raw::Flattened) -> Snapshot {
        let mut warnings = Vec::new();
        if f.skipped.objects > 0 {
            warnings.push(format!(
                "skipped {} object(s) without apiVersion, kind, metadata.name or metadata.uid",
                f.skipped.objects
            ));
        }
        if f.contexts_differ {
            warnings.push(
                "the snapshot files were captured from different contexts or servers; printed commands name none"
                    .into(),
            );
        }
        if f.versions_differ {
            warnings.push("the snapshot files record different server versions; none is assumed".into());
        }
        if f.skipped.owner_refs > 0 {
            warnings.push(format!(
                "ignored {} owner reference(s) missing apiVersion, kind, name or uid",
                f.skipped.owner_refs
            ));
        }
        // Duplicate uids, found through a map from each uid's hash to its first object, which
        // copies no string and stays linear (a sort by uid is cache-hostile at a million).
        let objects = f.objects;
        let mut first_of: rustc_hash::FxHashMap<u64, u32> =
            rustc_hash::FxHashMap::with_capacity_and_hasher(objects.len(), Default::default());
        let mut collided: Vec<u32> = Vec::new();
        let mut drop = vec![false; objects.len()];
        let mut duplicates = Vec::new();
        for (i, o) in objects.iter().enumerate() {
            let h = {
                use std::hash::Hasher;
                let mut h = rustc_hash::FxHasher::default();
                h.write(o.uid.as_str().as_bytes());
                h.finish()
            };
            let earlier = match first_of.entry(h) {
                std::collections::hash_map::Entry::Vacant(v) => {
                    v.insert(i as u32);
                    continue;
                }
                std::collections::hash_map::Entry::Occupied(e) => {
                    // same hash: the same uid, or (rarely) another uid with that hash
                    std::iter::once(*e.get())
                        .chain(collided.iter().copied())
                        .find(|&j| objects[j as usize].uid == o.uid)
                }
            };
            let Some(j) = earlier else {
                collided.push(i as u32);
                continue;
            };
            let first = &objects[j as usize];
            // the same object read twice (overlapping files) is not worth a warning
            if (&first.kind, &first.namespace, &first.name) != (&o.kind, &o.namespace, &o.name) {
                duplicates.push(format!(
                    "{} is shared by {} {}{} and {} {}{}",
                    o.uid,
                    first.kind,
                    ns_prefix(&first.namespace),
                    first.name,
                    o.kind,
                    ns_prefix(&o.namespace),
                    o.name
                ));
            }
            drop[i] = true;
        }
        let mut objects = objects;
        // keep the first of each uid, in input order
        let mut i = 0;
        objects.retain(|_| {
            i += 1;
            !drop[i - 1]
        });
        // no shrink_to_fit: it would copy every object into fresh memory, and the spare
        // capacity was never written, so it holds no resident page
        if !duplicates.is_empty() {
            warnings.push(format!(
                "{} duplicate uid(s), keeping the first object of each: {}",
                duplicates.len(),
                duplicates.join("; ")
            ));
        }
        Snapshot {
            captured_at: f.captured_at,
            context: f.captured_context,
            namespace: f.captured_namespace,
            server: f.captured_server,
            server_version: f.server_version,
            objects,
            resource_lists: f.resource_lists,
            incomplete: f.incomplete,
            warnings,
        }
    }
}

fn ns_prefix(ns: &Option<String>) -> String {
    ns.as_ref().map(|n| format!("{n}/")).unwrap_or_default()
}

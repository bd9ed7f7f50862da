//! The discovery cache, where kubectl keeps its own: `<cache-dir>/discovery/<host>/`
//! (`--cache-dir`, else `KUBECACHEDIR`, else `~/.kube/cache`), in a file of our own
//! (`kubectl-gc.json`: the APIResourceLists and when they were fetched) so that kubectl's
//! files are never touched. Written only after a discovery that had no failing group; read
//! while younger than [`TTL_SECONDS`]. A stale cache is caught by the caller (an unknown TYPE, a
//! changed CRD, or an APIService the cached lists do not serve) and discovery is redone.
//!
//! CRDs are listed metadata-only, so their served versions cannot be compared with the cached
//! lists. Instead the file records the CRDs (name → resourceVersion) that the read right after
//! a fresh discovery saw ([`record_crds`]); a later read whose CRDs differ — one created,
//! removed, or changed in any way (a served version added, established, recreated: every
//! change moves the resourceVersion) — makes the cache stale. A CRD that discovery does not
//! serve is read in full (see [`crate::reads`]), and an Established one then also
//! makes it stale, which catches a CRD created between that discovery and that read; a
//! served version added to an existing CRD in those few seconds is caught only by the TTL.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::snapshot::Snapshot;
use crate::snapshot::raw::{Flattened, RawDoc};
use crate::snapshot::write::resource_list;

use super::discovery::{Discovery, assemble};

/// kubectl's discovery cache lifetime.
pub const TTL_SECONDS: i64 = 6 * 60 * 60;
const FILE: &str = "kubectl-gc.json";

/// kubectl's per-server directory: the host without scheme, characters other than
/// `[\w/.]` replaced by `_` (`computeDiscoverCacheDir`).
pub fn dir_for(cache_dir: &Path, server: &str) -> PathBuf {
    let host = server.replacen("https://", "", 1).replacen("http://", "", 1);
    let safe: String = host
        .trim_end_matches('/')
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || matches!(c, '_' | '/' | '.') { c } else { '_' })
        .collect();
    cache_dir.join("discovery").join(safe)
}

/// The cached discovery, if there is one younger than the TTL at `now` (unix seconds).
pub fn read(dir: &Path, now: i64) -> Option<Discovery> {
    let text = std::fs::read(dir.join(FILE)).ok()?;
    let v: Value = serde_json::from_slice(&text).ok()?;
    let fetched = v.get("fetchedAt")?.as_i64()?;
    if now < fetched || now - fetched > TTL_SECONDS {
        return None;
    }
    let aggregated = v.get("aggregated").and_then(|a| a.as_bool()).unwrap_or(false);
    let doc: RawDoc = serde_json::from_value(json!({"kind": "List", "items": v.get("items")?})).ok()?;
    let mut flat = Flattened::default();
    flat.push(doc);
    let lists = Snapshot::from_flattened(flat).resource_lists;
    if lists.is_empty() {
        return None;
    }
    let found = lists.into_iter().map(|l| (l.group_version.clone(), Ok(l))).collect();
    let mut d = assemble(Discovery { aggregated, ..Discovery::default() }, found);
    d.from_cache = true;
    d.crds = v.get("crds").and_then(|c| serde_json::from_value(c.clone()).ok());
    Some(d)
}

/// Saves a complete discovery (one with failing groups is not cached). Errors are ignored:
/// a cache that cannot be written only costs time.
pub fn write(dir: &Path, d: &Discovery, now: i64) {
    if !d.incomplete.is_empty() || d.lists.is_empty() {
        return;
    }
    let items: Vec<Value> = d.lists.iter().map(resource_list).collect();
    let v = json!({"fetchedAt": now, "aggregated": d.aggregated, "items": items});
    let Ok(bytes) = serde_json::to_vec(&v) else { return };
    if std::fs::create_dir_all(dir).is_err() {
        return;
    }
    let tmp = dir.join(format!("{FILE}.{}.tmp", std::process::id()));
    if std::fs::write(&tmp, bytes).is_ok() && std::fs::rename(&tmp, dir.join(FILE)).is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
}

/// Records, in the cache written at `now` (the discovery just fetched), the CRDs a read with
/// that discovery saw. Nothing is recorded when the CRDs could not be listed, or when the
/// file is another run's (a discovery with failing groups is not cached).
pub fn record_crds(dir: &Path, now: i64, s: &Snapshot) {
    let Some(crds) = crds_of(s) else { return };
    let Ok(text) = std::fs::read(dir.join(FILE)) else { return };
    let Ok(mut v) = serde_json::from_slice::<Value>(&text) else { return };
    if v.get("fetchedAt").and_then(|f| f.as_i64()) != Some(now) {
        return;
    }
    v["crds"] = json!(crds);
    let Ok(bytes) = serde_json::to_vec(&v) else { return };
    let tmp = dir.join(format!("{FILE}.{}.tmp", std::process::id()));
    if std::fs::write(&tmp, bytes).is_ok() && std::fs::rename(&tmp, dir.join(FILE)).is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
}

/// The CRDs of a snapshot, name → resourceVersion; `None` when they could not be listed.
pub fn crds_of(s: &Snapshot) -> Option<BTreeMap<String, String>> {
    if s.incomplete.iter().any(|g| g.is_list_of("customresourcedefinitions.apiextensions.k8s.io")) {
        return None;
    }
    Some(
        s.objects
            .iter()
            .filter(|o| o.group() == "apiextensions.k8s.io" && o.kind == "CustomResourceDefinition")
            .map(|o| (o.name.clone(), o.resource_version.clone().unwrap_or_default()))
            .collect(),
    )
}

/// Whether a snapshot read with cached discovery may show types that discovery does not have:
/// its CRDs differ from those recorded with the cache (or none were recorded), a CRD read in
/// full is Established with a served version the cache lacks, or an APIService's group
/// version is not served.
pub fn is_stale_for(d: &Discovery, s: &Snapshot) -> bool {
    let crds_changed = match (&d.crds, crds_of(s)) {
        (Some(recorded), Some(seen)) => *recorded != seen,
        // a cache from before CRDs were recorded: refresh it once
        (None, Some(_)) => true,
        // the CRDs could not be listed: nothing to compare
        (_, None) => false,
    };
    if crds_changed {
        return true;
    }
    let serves = |gv: &str| d.lists.iter().any(|l| l.group_version == gv);
    let serves_kind = |gv: &str, kind: &str| {
        d.lists.iter().any(|l| l.group_version == gv && l.resources.iter().any(|r| r.kind == kind))
    };
    s.objects.iter().any(|o| match (o.group(), o.kind.as_str()) {
        // only the CRDs read in full (metadata-only ones have no conditions: never Established here)
        ("apiextensions.k8s.io", "CustomResourceDefinition") => {
            let group = o.str_field("/spec/group").unwrap_or("");
            let kind = o.str_field("/spec/names/kind").unwrap_or("");
            let established = o.condition("Established").is_some_and(|c| c.is_true());
            established
                && o.field("/spec/versions").and_then(|v| v.as_array()).into_iter().flatten().any(|v| {
                    v.get("served").and_then(|b| b.as_bool()).unwrap_or(true)
                        && v.get("name")
                            .and_then(|n| n.as_str())
                            .is_some_and(|n| !serves_kind(&format!("{group}/{n}"), kind))
                })
        }
        ("apiregistration.k8s.io", "APIService") => {
            let (g, v) = (o.str_field("/spec/group").unwrap_or(""), o.str_field("/spec/version").unwrap_or(""));
            !g.is_empty() && !v.is_empty() && !serves(&format!("{g}/{v}"))
        }
        _ => false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cache_dir_is_kubectls() {
        assert_eq!(dir_for(Path::new("/c"), "https://10.0.0.1:6443"), Path::new("/c/discovery/10.0.0.1_6443"));
        assert_eq!(dir_for(Path::new("/c"), "http://127.0.0.1:8001/"), Path::new("/c/discovery/127.0.0.1_8001"));
    }
}

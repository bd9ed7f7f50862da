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

use crate::names::{API_SERVICE, CRD};

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
/// `[\w/.]` replaced by `_` (`computeDiscoverCacheDir`). A server URL's path may hold `..`
/// (`https://h/../../x`): such components, and `.` and empty ones, become `_`, so the
/// directory is always inside `<cache-dir>/discovery`.
pub fn dir_for(cache_dir: &Path, server: &str) -> PathBuf {
    let host = server.replacen("https://", "", 1).replacen("http://", "", 1);
    let safe: String = host
        .trim_end_matches('/')
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || matches!(c, '_' | '/' | '.') { c } else { '_' })
        .collect();
    let mut dir = cache_dir.join("discovery");
    for part in safe.split('/') {
        dir.push(if part.is_empty() || part.chars().all(|c| c == '.') { "_" } else { part });
    }
    dir
}

/// The cached discovery, if there is one younger than the TTL at `now` (unix seconds).
pub fn read(dir: &Path, now: i64) -> Option<Discovery> {
    let text = std::fs::read(dir.join(FILE)).ok()?;
    let v: Value = serde_json::from_slice(&text).ok()?;
    let fetched = v.get("fetchedAt")?.as_i64()?;
    // range-checked: a tampered or corrupt time (i64::MIN) must not overflow into "fresh"
    if !now.checked_sub(fetched).is_some_and(|age| (0..=TTL_SECONDS).contains(&age)) {
        return None;
    }
    let aggregated = v.get("aggregated").and_then(|a| a.as_bool()).unwrap_or(false);
    let doc: RawDoc = serde_json::from_value(json!({"kind": "List", "items": v.get("items")?})).ok()?;
    let mut flat = Flattened::default();
    flat.push(doc);
    let lists = Snapshot::from_flattened(flat).resource_lists;
    if lists.is_empty() || !lists.iter().all(well_formed) {
        return None;
    }
    let found = lists.into_iter().map(|l| (l.group_version.clone(), Ok(l))).collect();
    let mut d = assemble(Discovery { aggregated, ..Discovery::default() }, found);
    d.from_cache = true;
    d.crds = v.get("crds").and_then(|c| serde_json::from_value(c.clone()).ok());
    Some(d)
}

/// Whether a cached list names only what a server could serve: request paths are built from
/// these names, so a tampered file must not steer a read elsewhere (`../`, `?`, another
/// resource's path). Which kind a resource maps to cannot be checked here; the core `secrets`
/// resource is never read in full whatever its mapping says (see `list::is_secret`).
fn well_formed(l: &crate::snapshot::ResourceList) -> bool {
    let name = |s: &str| {
        !s.is_empty() && s.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'.')
    };
    let (group, version) = l.group_version.rsplit_once('/').unwrap_or(("", &l.group_version));
    let path_safe = |s: &str| !s.split('.').any(|p| p.is_empty());
    (group.is_empty() || (name(group) && path_safe(group)))
        && name(version)
        && path_safe(version)
        && l.resources.iter().all(|r| {
            let mut parts = r.plural.splitn(2, '/');
            parts.all(|p| name(p) && path_safe(p))
                && r.group.as_deref().is_none_or(|g| g.is_empty() || (name(g) && path_safe(g)))
                && r.version.as_deref().is_none_or(|v| name(v) && path_safe(v))
        })
}

/// Writes `bytes` as `dir/FILE`: into a temporary file created exclusively under a random
/// name (a file or link planted under a predictable name is never followed or overwritten),
/// renamed over the old one when complete.
fn replace(dir: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let mut tmp = tempfile::Builder::new().prefix(".kubectl-gc.").suffix(".tmp").tempfile_in(dir)?;
    tmp.write_all(bytes)?;
    tmp.as_file().sync_all()?;
    tmp.persist(dir.join(FILE)).map_err(|e| e.error)?;
    Ok(())
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
    let _ = replace(dir, &bytes);
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
    let _ = replace(dir, &bytes);
}

/// The CRDs of a snapshot, name → resourceVersion; `None` when they could not be listed.
pub fn crds_of(s: &Snapshot) -> Option<BTreeMap<String, String>> {
    if s.incomplete.iter().any(|g| g.is_list_of("customresourcedefinitions.apiextensions.k8s.io")) {
        return None;
    }
    Some(
        s.objects
            .iter()
            .filter(|o| (o.group(), o.kind.as_str()) == CRD)
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
        CRD => {
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
        API_SERVICE => {
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

    #[test]
    fn a_server_path_never_leads_out_of_the_cache_directory() {
        let d = dir_for(Path::new("/c"), "https://h:1/../../../../tmp/x/./y//z");
        assert_eq!(d, Path::new("/c/discovery/h_1/_/_/_/_/tmp/x/_/y/_/z"));
        assert!(d.components().all(|c| !matches!(c, std::path::Component::ParentDir)));
    }

    fn discovery() -> Discovery {
        let core = crate::testing::core_resource_list("configmaps", "ConfigMap");
        Discovery { lists: vec![core], ..Discovery::default() }
    }

    #[test]
    fn cached_times_are_range_checked() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), &discovery(), 1000);
        assert!(read(dir.path(), 1000 + TTL_SECONDS).is_some());
        assert!(read(dir.path(), 1000 + TTL_SECONDS + 1).is_none());
        assert!(read(dir.path(), 999).is_none(), "from the future");
        let text = std::fs::read_to_string(dir.path().join(FILE)).unwrap().replace("1000", &i64::MIN.to_string());
        std::fs::write(dir.path().join(FILE), text).unwrap();
        assert!(read(dir.path(), 1000).is_none(), "i64::MIN never expires if age overflows");
        assert!(read(dir.path(), i64::MAX).is_none());
    }

    #[test]
    fn names_that_would_steer_a_request_elsewhere_void_the_cache() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), &discovery(), 1000);
        let good = std::fs::read_to_string(dir.path().join(FILE)).unwrap();
        for bad in ["../secrets", "secrets?x=1", "a/b/c", "Secrets", ".."] {
            std::fs::write(dir.path().join(FILE), good.replace("\"configmaps\"", &format!("\"{bad}\""))).unwrap();
            assert!(read(dir.path(), 1000).is_none(), "{bad}");
        }
        assert!(read(dir.path(), 1000).is_none());
        std::fs::write(dir.path().join(FILE), &good).unwrap();
        assert!(read(dir.path(), 1000).is_some());
    }

    #[cfg(unix)]
    #[test]
    fn a_planted_link_is_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        std::fs::write(&victim, "keep").unwrap();
        // every name the old code could have used, and more
        for pid in [std::process::id(), 1, 2] {
            std::os::unix::fs::symlink(&victim, dir.path().join(format!("{FILE}.{pid}.tmp"))).unwrap();
        }
        write(dir.path(), &discovery(), 1000);
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep");
        assert!(read(dir.path(), 1000).is_some());
        let leftovers = std::fs::read_dir(dir.path()).unwrap().filter(|e| {
            let n = e.as_ref().unwrap().file_name();
            n.to_string_lossy().starts_with(".kubectl-gc.")
        });
        assert_eq!(leftovers.count(), 0, "the temporary file is renamed");
    }
}

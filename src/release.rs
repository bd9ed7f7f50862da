//! Which Kubernetes release the input comes from, for behaviour that changed between releases:
//! ordered namespace deletion (KEP-5080, feature gate `OrderedNamespaceDeletion`: beta and off
//! by default in 1.30–1.32, on by default in 1.33, GA and locked on since 1.34), under which the
//! namespace controller deletes a namespace's pods first and nothing else until every pod is
//! gone.
//!
//! The evidence, strongest first (contract §3): the API server's own version (`/version`, read
//! live or recorded by `kubectl gc snapshot` as `serverVersion`); else the nodes' kubelet
//! versions, which bound it from below (a kubelet is never newer than its API server, and at
//! most three minor releases older); else nothing, and the answer says which behaviour it
//! assumed (the current one: pods first).

use crate::graph::Graph;

/// A `major.minor` release.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Release {
    /// `1`.
    pub major: u32,
    /// `34`.
    pub minor: u32,
}

impl Release {
    /// Parses `v1.34.2`, `1.34`, `v1.33.1-gke.100`, `v1.30.4+k3s1` (the major and minor only).
    pub fn parse(s: &str) -> Option<Release> {
        let s = s.trim().trim_start_matches('v');
        let mut parts = s.split('.');
        let major = parts.next()?.parse().ok()?;
        let minor: String = parts.next()?.chars().take_while(char::is_ascii_digit).collect();
        Some(Release { major, minor: minor.parse().ok()? })
    }

    const fn of(minor: u32) -> Release {
        Release { major: 1, minor }
    }
}

impl std::fmt::Display for Release {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

/// The first release where ordered namespace deletion is on by default.
const ORDERED_BY_DEFAULT: Release = Release::of(33);
/// The first release where it cannot be turned off.
const ORDERED_LOCKED: Release = Release::of(34);
/// How many minor releases a kubelet may lag its API server (the version skew policy).
const KUBELET_SKEW: u32 = 3;

/// How the namespace controller deletes a namespace's content on this cluster, and why the
/// answer thinks so.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NamespaceDeletion {
    /// Pods first, and nothing else until every pod is gone (KEP-5080); false: one wave.
    pub pods_first: bool,
    /// Whether that was assumed rather than read from a version (the answer then says so).
    pub assumed: bool,
    /// The evidence in words, for the answer and the plan's notes.
    pub basis: String,
}

/// The first release with the unsafe delete of objects that cannot be read from storage
/// (KEP-3926, `DeleteOptions.ignoreStoreReadErrorWithClusterBreakingPotential`, feature gate
/// `AllowUnsafeMalformedObjectDeletion`: alpha, off by default, from 1.32; beta from 1.36).
const UNSAFE_DELETE: Release = Release::of(32);

/// Whether the input's API server can have the unsafe delete: `Some(false)` when its version
/// (or its kubelets', bounding it) is older than 1.32, `Some(true)` when it is 1.32 or newer,
/// None when nothing says; with the evidence in words.
pub fn unsafe_delete(g: &Graph) -> (Option<bool>, String) {
    if let Some((v, r)) = g.server_version().and_then(|v| Some((v, Release::parse(v)?))) {
        return if r >= UNSAFE_DELETE {
            (Some(true), format!("the API server is {v}"))
        } else {
            (Some(false), format!("the API server is {v}, and the option arrived in 1.32"))
        };
    }
    match newest_kubelet(g) {
        Some((r, v)) if r >= UNSAFE_DELETE => (Some(true), format!("the nodes' kubelets report up to {v}")),
        Some((r, v)) if r.major == 1 && r.minor + KUBELET_SKEW < UNSAFE_DELETE.minor => (
            Some(false),
            format!(
                "the nodes' kubelets report at most {v}, so the API server is older than 1.32, where the option arrived"
            ),
        ),
        _ => (None, "the input records no server version".into()),
    }
}

/// The newest kubelet version among the nodes in the input, with its text.
fn newest_kubelet(g: &Graph) -> Option<(Release, String)> {
    g.of_kind("", "Node")
        .iter()
        .filter_map(|&n| {
            let v = g.object(n)?.str_field("/status/nodeInfo/kubeletVersion")?;
            Some((Release::parse(v)?, v.to_string()))
        })
        .max_by_key(|(r, _)| *r)
}

/// Judges ordered namespace deletion from the input's version evidence.
pub fn namespace_deletion(g: &Graph) -> NamespaceDeletion {
    let judged = |pods_first, basis: String| NamespaceDeletion { pods_first, assumed: false, basis };
    if let Some((v, r)) = g.server_version().and_then(|v| Some((v, Release::parse(v)?))) {
        return if r >= ORDERED_LOCKED {
            judged(true, format!("the API server is {v}: ordered namespace deletion is always on since 1.34"))
        } else if r >= ORDERED_BY_DEFAULT {
            judged(
                true,
                format!(
                    "the API server is {v}: ordered namespace deletion is on by default in 1.33 (unless the OrderedNamespaceDeletion feature gate was turned off)"
                ),
            )
        } else {
            judged(
                false,
                format!(
                    "the API server is {v}: before 1.33 ordered namespace deletion is off by default, so the namespace controller deletes all content in one wave (unless the OrderedNamespaceDeletion feature gate was turned on)"
                ),
            )
        };
    }
    let assumed = |basis: String| NamespaceDeletion { pods_first: true, assumed: true, basis };
    match newest_kubelet(g) {
        Some((r, v)) if r >= ORDERED_BY_DEFAULT => judged(
            true,
            format!(
                "the input records no server version, but the nodes' kubelets report up to {v}, and an API server is never older than its kubelets: ordered namespace deletion is on (by default in 1.33, always since 1.34)"
            ),
        ),
        Some((r, v)) if r.major == 1 && r.minor + KUBELET_SKEW < ORDERED_BY_DEFAULT.minor => judged(
            false,
            format!(
                "the input records no server version, but the nodes' kubelets report at most {v}, and an API server is at most {KUBELET_SKEW} minor releases newer than its kubelets: before 1.33 the namespace controller deletes all content in one wave"
            ),
        ),
        Some((_, v)) => assumed(format!(
            "the input records no server version, and the nodes' kubelets (up to {v}) allow an API server before or after 1.33: assumed ordered namespace deletion (pods first, as since 1.33)"
        )),
        None => assumed(
            "the input records neither the server's version nor any node's kubelet version: assumed ordered namespace deletion (pods first, as since 1.33)".into(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::testing::{ObjExt, obj, snapshot};

    fn node(version: &str) -> serde_json::Value {
        obj("v1", "Node", None, &format!("n-{version}"), &format!("u-{version}"))
            .with("status", json!({"nodeInfo": {"kubeletVersion": version}}))
    }

    fn judge(server: Option<&str>, kubelets: &[&str]) -> NamespaceDeletion {
        let mut s = snapshot(kubelets.iter().map(|v| node(v)).collect());
        s.server_version = server.map(String::from);
        namespace_deletion(&crate::graph::Graph::build(s))
    }

    #[test]
    fn releases_parse_with_distribution_suffixes() {
        assert_eq!(Release::parse("v1.34.2"), Some(Release::of(34)));
        assert_eq!(Release::parse("v1.33.1-gke.100"), Some(Release::of(33)));
        assert_eq!(Release::parse("1.30+"), Some(Release::of(30)));
        assert_eq!(Release::parse("v1.30.4+k3s1"), Some(Release::of(30)));
        assert_eq!(Release::parse("latest"), None);
    }

    #[test]
    fn the_server_version_decides_and_beats_the_kubelets() {
        let j = judge(Some("v1.34.0"), &["v1.31.0"]);
        assert!(j.pods_first && !j.assumed, "{j:?}");
        let j = judge(Some("v1.33.2"), &[]);
        assert!(j.pods_first && j.basis.contains("by default"), "{j:?}");
        let j = judge(Some("v1.32.5"), &["v1.32.5"]);
        assert!(!j.pods_first && !j.assumed, "{j:?}");
    }

    #[test]
    fn kubelets_bound_the_server_from_below_and_within_the_skew() {
        // a 1.37 kubelet: the server is 1.37 or newer
        let j = judge(None, &["v1.30.1", "v1.37.1"]);
        assert!(j.pods_first && !j.assumed && j.basis.contains("v1.37.1"), "{j:?}");
        // 1.29 kubelets: the server is at most 1.32
        let j = judge(None, &["v1.29.3"]);
        assert!(!j.pods_first && !j.assumed, "{j:?}");
        // 1.31 kubelets: the server may be 1.31 to 1.34; assumed, and said
        let j = judge(None, &["v1.31.3"]);
        assert!(j.pods_first && j.assumed && j.basis.contains("assumed"), "{j:?}");
        let j = judge(None, &[]);
        assert!(j.pods_first && j.assumed, "{j:?}");
    }
}

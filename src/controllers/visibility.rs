//! What the snapshot lets us see: a verdict of Missing needs Pods, workloads, RBAC and Leases
//! to have been readable; where they were not, the verdict is Unknown and says what was missing.

use crate::names::CRD;

use crate::graph::Graph;

/// A kind of evidence the attribution reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Source {
    Pods,
    Workloads,
    Rbac,
    Leases,
    Crds,
}

impl Source {
    pub const ALL: [Source; 5] = [Source::Pods, Source::Workloads, Source::Rbac, Source::Leases, Source::Crds];

    pub fn label(self) -> &'static str {
        match self {
            Source::Pods => "Pods",
            Source::Workloads => "workloads",
            Source::Rbac => "RBAC objects",
            Source::Leases => "Leases",
            Source::Crds => "CustomResourceDefinitions",
        }
    }

    fn of(group: &str, kind: &str) -> Option<Source> {
        Some(match (group, kind) {
            ("", "Pod") => Source::Pods,
            ("apps", "Deployment" | "StatefulSet" | "DaemonSet" | "ReplicaSet") => Source::Workloads,
            ("rbac.authorization.k8s.io", _) => Source::Rbac,
            ("coordination.k8s.io", "Lease") => Source::Leases,
            CRD => Source::Crds,
            _ => return None,
        })
    }

    /// Whether an `incomplete` entry (free text such as `pods: forbidden` or
    /// `rbac.authorization.k8s.io/v1: 503`) names this source.
    fn named_by(self, entry: &str) -> bool {
        let lower = entry.to_ascii_lowercase();
        lower
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '.' || c == '/' || c == '-'))
            .filter(|t| !t.is_empty())
            .any(|t| {
                let resource = |r: &str| t == r || t.starts_with(&format!("{r}.")) || t.starts_with(&format!("{r}/"));
                let group = |gr: &str| t == gr || t.starts_with(&format!("{gr}/")) || t.ends_with(&format!(".{gr}"));
                match self {
                    Source::Pods => resource("pods"),
                    Source::Workloads => {
                        ["deployments", "statefulsets", "daemonsets", "replicasets"].iter().any(|r| resource(r))
                            || group("apps")
                    }
                    Source::Rbac => {
                        ["roles", "clusterroles", "rolebindings", "clusterrolebindings"].iter().any(|r| resource(r))
                            || t.contains("rbac.authorization.k8s.io")
                    }
                    Source::Leases => resource("leases") || t.contains("coordination.k8s.io"),
                    Source::Crds => resource("customresourcedefinitions") || t.contains("apiextensions.k8s.io"),
                }
            })
    }
}

/// Which sources the snapshot holds objects of, and which its `incomplete` list says were unreadable.
#[derive(Clone, Debug, Default)]
pub struct Visibility {
    present: Vec<Source>,
    /// Each unreadable source with the `incomplete` entry that says so.
    unreadable: Vec<(Source, String)>,
}

impl Visibility {
    pub fn new(g: &Graph) -> Visibility {
        let mut present = Vec::new();
        for (group, kind) in g.kinds() {
            if let Some(src) = Source::of(group, kind)
                && !present.contains(&src)
            {
                present.push(src);
            }
        }
        present.sort();
        let mut unreadable = Vec::new();
        for src in Source::ALL {
            if let Some(e) = g.gaps().iter().find(|e| src.named_by(e.subject())) {
                unreadable.push((src, e.to_string()));
            }
        }
        Visibility { present, unreadable }
    }

    pub fn present(&self, src: Source) -> bool {
        self.present.contains(&src)
    }

    pub fn unreadable(&self, src: Source) -> Option<&str> {
        self.unreadable.iter().find(|(s, _)| *s == src).map(|(_, e)| e.as_str())
    }

    /// Why an absence cannot be trusted: the sources a search for a controller needs were
    /// unreadable, or the snapshot holds none of them at all. `None` when an absence is real.
    pub fn blind_spot(&self) -> Option<String> {
        let needed = [Source::Pods, Source::Workloads, Source::Rbac, Source::Leases];
        let unreadable: Vec<String> =
            needed.iter().filter_map(|&s| self.unreadable(s).map(|e| format!("{} (\"{e}\")", s.label()))).collect();
        if !unreadable.is_empty() {
            return Some(format!("could not read {}", unreadable.join(", ")));
        }
        if needed.iter().all(|&s| !self.present(s)) {
            return Some("the snapshot holds no Pods, workloads, RBAC objects or Leases to look in".into());
        }
        None
    }

    /// The needed sources of which the snapshot holds no object, for the evidence of a Missing verdict.
    pub fn absent(&self) -> Vec<Source> {
        [Source::Pods, Source::Workloads, Source::Rbac, Source::Leases]
            .into_iter()
            .filter(|&s| !self.present(s))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn incomplete_entries_name_the_sources_they_hide() {
        assert!(Source::Pods.named_by("pods: forbidden"));
        assert!(Source::Rbac.named_by("clusterrolebindings.rbac.authorization.k8s.io is forbidden"));
        assert!(Source::Rbac.named_by("rbac.authorization.k8s.io/v1: 503"));
        assert!(Source::Leases.named_by("leases.coordination.k8s.io: forbidden"));
        assert!(Source::Workloads.named_by("deployments.apps: forbidden"));
        assert!(Source::Workloads.named_by("apps/v1: timeout"));
        assert!(!Source::Pods.named_by("podsecuritypolicies: not found"));
        assert!(!Source::Workloads.named_by("sites.own.labhub.io: forbidden"));
    }
}

//! What the snapshot lets us see: a verdict of Missing needs Pods, workloads, RBAC and Leases
//! to have been readable; where they were not, the verdict is Unknown and says what was missing.

use crate::names::CRD;

use crate::graph::Graph;
use crate::snapshot::Gap;

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

    /// The API groups and resources (`None`: all of the group) whose objects this source is.
    fn resources(self) -> &'static [(&'static str, Option<&'static str>)] {
        match self {
            Source::Pods => &[("", Some("pods"))],
            Source::Workloads => &[("apps", None)],
            Source::Rbac => &[("rbac.authorization.k8s.io", None)],
            Source::Leases => &[("coordination.k8s.io", Some("leases"))],
            Source::Crds => &[("apiextensions.k8s.io", Some("customresourcedefinitions"))],
        }
    }

    /// Whether a gap may hide objects of this source, in any namespace (a controller may live
    /// anywhere), by the gap's typed fields; a line without them may hide any (`Gap::may_hide`).
    fn hidden_by(self, gap: &Gap) -> bool {
        self.resources().iter().any(|&(group, resource)| gap.may_hide(group, resource, None))
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
            if let Some(e) = g.gaps().iter().find(|e| src.hidden_by(e)) {
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

    /// The needed sources of which the snapshot holds no object, for the evidence of a Missing
    /// verdict: read and empty, never one whose read was refused or failed (that one is
    /// [`Visibility::unreadable`], and "holds no" would call a refusal an absence).
    pub fn absent(&self) -> Vec<Source> {
        [Source::Pods, Source::Workloads, Source::Rbac, Source::Leases]
            .into_iter()
            .filter(|&s| !self.present(s) && self.unreadable(s).is_none())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refused_source_is_unreadable_not_absent() {
        let v = Visibility {
            present: vec![Source::Pods],
            unreadable: vec![(Source::Rbac, "clusterrolebindings could not be listed: forbidden (403)".into())],
        };
        assert_eq!(v.absent(), [Source::Workloads, Source::Leases]);
        assert!(v.blind_spot().is_some_and(|b| b.contains("could not read RBAC objects")));
    }

    #[test]
    fn gaps_hide_the_sources_their_fields_name() {
        use crate::snapshot::{Missing, Resource};
        let list = |g: &str, r: &str, ns: Option<&str>| {
            Gap::new(Missing::List { resource: Resource::new(g, "v1", r), namespace: ns.map(Into::into) }, "403")
        };
        assert!(Source::Pods.hidden_by(&list("", "pods", Some("quota-system"))));
        assert!(Source::Rbac.hidden_by(&list("rbac.authorization.k8s.io", "clusterrolebindings", None)));
        let rbac =
            Gap::new(Missing::Discovery { group: "rbac.authorization.k8s.io".into(), version: "v1".into() }, "503");
        assert!(Source::Rbac.hidden_by(&rbac) && !Source::Pods.hidden_by(&rbac));
        assert!(Source::Leases.hidden_by(&list("coordination.k8s.io", "leases", None)));
        assert!(Source::Workloads.hidden_by(&list("apps", "deployments", None)));
        let apps = Gap::new(Missing::Discovery { group: "apps".into(), version: "v1".into() }, "timeout");
        assert!(Source::Workloads.hidden_by(&apps));
        assert!(!Source::Pods.hidden_by(&list("policy", "podsecuritypolicies", None)));
        assert!(!Source::Pods.hidden_by(&list("", "podtemplates", None)));
        assert!(!Source::Workloads.hidden_by(&list("own.labhub.io", "sites", None)));
        // a line without fields (a snapshot file written before gaps were typed) may hide any
        for src in Source::ALL {
            assert!(src.hidden_by(&Gap::recorded("sites.own.labhub.io: forbidden")), "{src:?}");
        }
    }
}

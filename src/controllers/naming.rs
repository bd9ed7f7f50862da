//! The names a finalizer gives its controller, for domains and paths that RBAC does not tie to
//! anyone (a controller bound to cluster-admin, or a domain that is no API group, such as
//! `controller.cattle.io`): the path after the `/` (`strimzi.io/topic-operator` →
//! `topic-operator`) and the distinctive labels of its domain (`restores.velero.io` → `velero`,
//! `controller.cattle.io` → `cattle`), and the kind of the custom resource it is on (`Tenant`
//! → `tenant`). A workload, container, ServiceAccount, app label or Lease is *named* by one of
//! them when equal to it or to it and a controller's suffix (`tenant-operator`, `helm-controller`,
//! `media-operator-controller-manager`); one that only begins with it and a dash
//! (`harbourmesh-pilot`, `ledger-webhook`) bears the product's prefix, which every component of
//! a product bears: never a tie by itself (contract §4.3.3).

use super::domain::finalizer_domain;

/// Labels and paths that name no one: top-level domains, Kubernetes' own words, and the words
/// every finalizer uses.
const GENERIC: &[&str] = &[
    "io",
    "com",
    "net",
    "org",
    "dev",
    "app",
    "cloud",
    "ai",
    "co",
    "sh",
    "me",
    "tech",
    "info",
    "biz",
    "us",
    "eu",
    "example",
    "www",
    "k8s",
    "x-k8s",
    "kubernetes",
    "kube",
    "sigs",
    "api",
    "apis",
    "core",
    "system",
    "controller",
    "controllers",
    "operator",
    "operators",
    "manager",
    "finalizer",
    "finalizers",
    "cleanup",
    "protection",
    "resource",
    "resources",
    "external",
    "delete",
    "deletion",
    "ingress",
    "service",
    "services",
    "networking",
    "network",
    "storage",
    "group",
    "gateway",
    "config",
    "cluster",
    "default",
    "wait",
    "hook",
    "hooks",
    "the",
];

/// How a name matches one the finalizer gives.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum NameMatch {
    /// Only the product's prefix: `harbourmesh-pilot` for `harbourmesh`.
    Prefix,
    /// The name itself, or it and a controller's suffix: `snapshot-operator` for `snapshot`.
    Named,
}

/// What follows a given name and a dash in a controller's own name: kubebuilder's
/// `<name>-controller-manager`, operator-sdk's `<name>-operator`, `<name>-controller`,
/// `<name>-manager`, `<name>-ctl`.
const CONTROLLER_SUFFIXES: &[&str] = &["operator", "controller", "controllers", "manager", "ctl", "controller-manager"];

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FinalizerNames {
    /// The path first (when distinctive), then the domain's labels.
    names: Vec<String>,
    /// Whether `names[0]` is the path: the more specific name (`strimzi.io/topic-operator`
    /// names the topic operator; `strimzi` names every Strimzi component).
    has_path: bool,
}

impl FinalizerNames {
    pub fn of(finalizer: &str) -> FinalizerNames {
        let mut names: Vec<String> = Vec::new();
        let add = |names: &mut Vec<String>, n: &str| {
            let n = n.to_ascii_lowercase();
            let distinctive = n.len() >= 3
                && !GENERIC.contains(&n.as_str())
                && n.chars().any(|c| c.is_ascii_alphabetic())
                && !(n.starts_with('v') && n[1..].chars().all(|c| c.is_ascii_digit()));
            if distinctive && !names.contains(&n) {
                names.push(n);
            }
        };
        if let Some((_, path)) = finalizer.split_once('/') {
            add(&mut names, path);
        }
        let has_path = !names.is_empty();
        if let Some(d) = finalizer_domain(finalizer) {
            for label in d.split('.') {
                add(&mut names, label);
            }
        }
        FinalizerNames { names, has_path }
    }

    /// Adds the labels of the object's API group when the finalizer's domain is a sibling of it
    /// under the same registered domain: Flux puts `finalizers.fluxcd.io` on every kind, and the
    /// HelmRelease's group `helm.toolkit.fluxcd.io` is what names `helm-controller`.
    pub fn with_group_of_object(mut self, finalizer: &str, group: &str) -> FinalizerNames {
        let Some(domain) = finalizer_domain(finalizer) else { return self };
        let registered = |d: &str| {
            let labels: Vec<&str> = d.rsplitn(3, '.').take(2).collect();
            (labels.len() == 2).then(|| format!("{}.{}", labels[1], labels[0]).to_ascii_lowercase())
        };
        if group.is_empty() || group.eq_ignore_ascii_case(domain) || registered(group) != registered(domain) {
            return self;
        }
        for label in group.split('.') {
            let n = label.to_ascii_lowercase();
            if n.len() >= 3 && !GENERIC.contains(&n.as_str()) && !self.names.contains(&n) {
                self.names.push(n);
            }
        }
        self
    }

    /// The path when it names a component (`topic-operator`, `snapshot-agent`,
    /// `…-controller`) rather than a purpose (`cleanup`, `external-resources-finalizer`): when no
    /// workload bears it, that component is absent, and the domain's labels — which every
    /// component of the product bears — must not stand in for it.
    pub fn component(&self) -> Option<&str> {
        const SUFFIXES: &[&str] = &["-operator", "-controller", "-agent", "-manager", "-webhook", "-provisioner"];
        let p = self.names.first().filter(|_| self.has_path)?;
        SUFFIXES.iter().any(|s| p.ends_with(s)).then_some(p.as_str())
    }

    /// Adds the kind of the object the finalizer is on, when it is a custom resource's (a
    /// built-in kind such as `ConfigMap` names no operator): `Tenant` names `tenant-operator`.
    pub fn with_kind(mut self, group: &str, kind: &str) -> FinalizerNames {
        let custom = group.contains('.') && !super::domain::kubernetes_owned(group);
        let n = kind.to_ascii_lowercase();
        if custom && n.len() >= 3 && !GENERIC.contains(&n.as_str()) && !self.names.contains(&n) {
            self.names.push(n);
        }
        self
    }

    /// The names with only the path, when there is one.
    pub fn path_only(&self) -> Option<FinalizerNames> {
        self.has_path.then(|| FinalizerNames { names: vec![self.names[0].clone()], has_path: true })
    }

    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// Whether `name` is named by one of the names, or only begins with one and a dash
    /// (`cattle-cluster-agent`).
    pub fn matches(&self, name: &str) -> bool {
        self.match_of(name).is_some()
    }

    /// How `name` matches the names, the closest match first: named by one, or bearing one
    /// only as its prefix.
    pub fn match_of(&self, name: &str) -> Option<NameMatch> {
        let name = name.to_ascii_lowercase();
        self.names
            .iter()
            .filter_map(|n| {
                if name == *n {
                    return Some(NameMatch::Named);
                }
                let rest = name.strip_prefix(n.as_str())?.strip_prefix('-')?;
                let controller = CONTROLLER_SUFFIXES.contains(&rest)
                    || ["operator-", "controller-"].iter().any(|p| rest.starts_with(p));
                Some(if controller { NameMatch::Named } else { NameMatch::Prefix })
            })
            .max()
    }

    /// `velero, restores`.
    pub fn list(&self) -> String {
        self.names.join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_and_distinctive_domain_labels_name_the_controller() {
        let n = FinalizerNames::of("controller.cattle.io/cluster-agent-controller-cleanup");
        assert!(n.matches("cattle-cluster-agent"));
        assert!(n.matches("cluster-agent-controller-cleanup"));
        assert!(!n.matches("cattlex"));
        assert!(!n.matches("controller"));
        let v = FinalizerNames::of("restores.velero.io/external-resources-finalizer");
        assert!(v.matches("velero"));
        assert!(!v.matches("io"));
        assert!(FinalizerNames::of("kubernetes.io/cleanup").is_empty());
        let f = FinalizerNames::of("finalizers.fluxcd.io")
            .with_group_of_object("finalizers.fluxcd.io", "helm.toolkit.fluxcd.io");
        assert!(f.matches("helm-controller") && !f.matches("kustomize-controller"));
        let other = FinalizerNames::of("finalizers.fluxcd.io").with_group_of_object("finalizers.fluxcd.io", "apps");
        assert!(!other.matches("apps-controller"));
        let s = FinalizerNames::of("strimzi.io/topic-operator");
        assert!(s.matches("topic-operator") && s.matches("strimzi-cluster-operator"));
        let p = s.path_only().unwrap();
        assert!(p.matches("topic-operator") && !p.matches("strimzi-cluster-operator"));
    }

    #[test]
    fn a_controllers_suffix_names_it_and_a_product_prefix_does_not() {
        let h = FinalizerNames::of("harbourmesh-finalizer.install.harbourmesh.example.io");
        let table = [
            ("harbourmesh-pilot", Some(NameMatch::Prefix)),
            ("harbourmesh-telemetry", Some(NameMatch::Prefix)),
            ("harbourmesh-operator", Some(NameMatch::Named)),
            ("harbourmesh", Some(NameMatch::Named)),
            ("harbourmesh-controller-manager", Some(NameMatch::Named)),
            ("harbourmesh-operator-controller-manager", Some(NameMatch::Named)),
            ("web", None),
        ];
        for (name, want) in table {
            assert_eq!(h.match_of(name), want, "{name}");
        }
        // the kind of a custom resource names its operator; a built-in kind names no one
        let k = FinalizerNames::of("backup.example.dev/snapshot-cleanup").with_kind("backup.example.dev", "Snapshot");
        assert_eq!(k.match_of("snapshot-operator"), Some(NameMatch::Named));
        assert_eq!(k.match_of("snapshot-ui"), Some(NameMatch::Prefix));
        let c = FinalizerNames::of("ops.example.com/hold").with_kind("", "ConfigMap");
        assert!(!c.matches("configmap-operator"));
    }
}

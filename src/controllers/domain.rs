//! A finalizer's domain (`own.labhub.io/cleanup` → `own.labhub.io`) and the CustomResourceDefinitions
//! whose API group it names: the first link from a finalizer to the controller that removes it.

use crate::names::CRD;

use crate::graph::{Graph, NodeId};

/// The domain part of a finalizer: the prefix before `/`, or the whole name when it has no `/`
/// but looks like a domain (`cephcluster.ceph.rook.io`). `None` for bare names (`wait-for-x`).
pub fn finalizer_domain(finalizer: &str) -> Option<&str> {
    let d = finalizer.split_once('/').map_or(finalizer, |(d, _)| d);
    (d.contains('.') && !d.starts_with('.') && !d.ends_with('.') && !d.contains(' ')).then_some(d)
}

/// Whether two domains are equal or one is a sub-domain of the other. Single-label names
/// (`apps`, `io`) never match: a finalizer domain must not drift to a top-level domain.
pub fn domains_match(a: &str, b: &str) -> bool {
    if !a.contains('.') || !b.contains('.') {
        return false;
    }
    a.eq_ignore_ascii_case(b) || is_subdomain(a, b) || is_subdomain(b, a)
}

fn is_subdomain(sub: &str, parent: &str) -> bool {
    let (sub, parent) = (sub.as_bytes(), parent.as_bytes());
    sub.len() > parent.len()
        && sub[sub.len() - parent.len() - 1] == b'.'
        && sub[sub.len() - parent.len()..].eq_ignore_ascii_case(parent)
}

/// Domains Kubernetes itself reserves (`kubernetes.io`, `k8s.io` and their sub-domains).
pub fn kubernetes_owned(domain: &str) -> bool {
    ["kubernetes.io", "k8s.io"].iter().any(|k| domain.eq_ignore_ascii_case(k) || is_subdomain(domain, k))
}

/// One CustomResourceDefinition: its group and plural (`spec.group`, `spec.names.plural`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Crd {
    pub node: NodeId,
    pub name: String,
    pub group: String,
    pub plural: String,
}

/// The CustomResourceDefinitions of the snapshot.
#[derive(Default)]
pub struct Crds {
    crds: Vec<Crd>,
}

impl Crds {
    pub fn new(g: &Graph) -> Crds {
        let mut crds: Vec<Crd> = g
            .of_kind(CRD.0, CRD.1)
            .iter()
            .filter_map(|&id| Some((id, g.object(id)?)))
            .filter_map(|(id, o)| {
                let (plural, group) = match (o.str_field("/spec/names/plural"), o.str_field("/spec/group")) {
                    (Some(p), Some(gr)) => (p.to_string(), gr.to_string()),
                    // metadata-only: the name is `<plural>.<group>`
                    _ => o.name.split_once('.').map(|(p, gr)| (p.to_string(), gr.to_string()))?,
                };
                Some(Crd { node: id, name: o.name.clone(), group, plural })
            })
            .collect();
        crds.sort_by(|a, b| a.name.cmp(&b.name));
        Crds { crds }
    }

    /// CRDs whose group matches the domain (equal, parent or sub-domain).
    pub fn matching<'a>(&'a self, domain: &'a str) -> impl Iterator<Item = &'a Crd> + 'a {
        self.crds.iter().filter(move |c| domains_match(&c.group, domain))
    }

    /// The CRD that serves `plural` in `group`, when one is visible.
    pub fn serving(&self, group: &str, plural: &str) -> Option<&Crd> {
        self.crds.iter().find(|c| c.group == group && c.plural == plural)
    }

    /// The plurals the CRDs define in a group (empty when no CRD of that group is visible).
    pub fn plurals_of<'a>(&'a self, group: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        self.crds.iter().filter(move |c| c.group == group).map(|c| c.plural.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_domain_is_the_prefix_before_the_slash() {
        assert_eq!(finalizer_domain("own.labhub.io/cleanup"), Some("own.labhub.io"));
        assert_eq!(finalizer_domain("cephcluster.ceph.rook.io"), Some("cephcluster.ceph.rook.io"));
        assert_eq!(finalizer_domain("wait-for-x"), None);
        assert_eq!(finalizer_domain("foregroundDeletion"), None);
    }

    #[test]
    fn domains_match_when_equal_or_nested_but_never_on_one_label() {
        assert!(domains_match("own.labhub.io", "own.labhub.io"));
        assert!(domains_match("own.labhub.io", "labhub.io"));
        assert!(domains_match("labhub.io", "x.own.labhub.io"));
        assert!(!domains_match("own.labhub.io", "other.labhub.io"));
        assert!(!domains_match("own.labhub.io", "io"));
        assert!(!domains_match("notlabhub.io", "labhub.io"));
        assert!(kubernetes_owned("snapshot.storage.k8s.io"));
        assert!(!kubernetes_owned("own.labhub.io"));
    }
}

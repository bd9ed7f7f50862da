//! What could not be read, typed: what is missing and why, so that code asks "were the CRDs
//! listed?" of the data rather than of a sentence. `Display` is the line people (and the
//! snapshot file's `incomplete` list) read; a snapshot file's lines come back as
//! [`Missing::Recorded`].

use std::fmt;

/// One thing that could not be read, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Gap {
    /// What could not be read.
    pub what: Missing,
    /// Why, in a short phrase (`forbidden (403)`, `no answer within 5s`); empty for
    /// [`Missing::Recorded`].
    pub why: String,
}

/// What is missing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Missing {
    /// The types an API group version serves.
    Discovery {
        /// `group/version`, or `v1` for the core group.
        group_version: String,
    },
    /// A resource's list (`pods`, `deployments.apps`), in one namespace or everywhere.
    List {
        /// The resource as kubectl names it (`deployments.apps`).
        resource: String,
        /// The namespace listed; `None` for all namespaces or a cluster-scoped type.
        namespace: Option<String>,
    },
    /// Objects of a resource in full (one named, or the list they were read from).
    Bodies {
        /// The resource as kubectl names it.
        resource: String,
        /// The object, when one was read by name; `None` for the whole list.
        name: Option<String>,
    },
    /// The managedFields of objects of a resource, read again after a list left them out.
    ManagedFields {
        /// The resource as kubectl names it.
        resource: String,
        /// The namespace read in; `None` for all namespaces or a cluster-scoped type.
        namespace: Option<String>,
        /// The object, when one was read by name; `None` for the whole list.
        name: Option<String>,
    },
    /// A line of a snapshot file's `incomplete` list, as written.
    Recorded(String),
}

impl Gap {
    /// A gap of `what`, for the reason `why`.
    pub fn new(what: Missing, why: impl Into<String>) -> Gap {
        Gap { what, why: why.into() }
    }

    /// A line read back from a snapshot file.
    pub fn recorded(line: impl Into<String>) -> Gap {
        Gap { what: Missing::Recorded(line.into()), why: String::new() }
    }

    /// What the gap is about, as text to match a source by: the resource or group version
    /// (never the server's message, which may name anything); a recorded line whole.
    pub fn subject(&self) -> &str {
        match &self.what {
            Missing::Discovery { group_version } => group_version,
            Missing::List { resource, .. }
            | Missing::Bodies { resource, .. }
            | Missing::ManagedFields { resource, .. } => resource,
            Missing::Recorded(line) => line,
        }
    }

    /// Whether this is the failed list of `resource` everywhere (or, with `namespace`, there).
    pub fn is_list_of(&self, resource: &str) -> bool {
        matches!(&self.what, Missing::List { resource: r, .. } if r == resource)
    }
}

fn in_namespace(ns: &Option<String>) -> String {
    ns.as_ref().map(|ns| format!(" in namespace \"{ns}\"")).unwrap_or_default()
}

fn named(name: &Option<String>) -> String {
    name.as_ref().map(|n| format!(" \"{n}\"")).unwrap_or_default()
}

impl fmt::Display for Gap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let why = &self.why;
        match &self.what {
            Missing::Discovery { group_version } => {
                write!(f, "API group {group_version} could not be discovered: {why}")
            }
            Missing::List { resource, namespace } => {
                write!(f, "{resource}{} could not be listed: {why}", in_namespace(namespace))
            }
            Missing::Bodies { resource, name } => {
                write!(f, "{resource}{} could not be read in full: {why}", named(name))
            }
            Missing::ManagedFields { resource, namespace, name } => write!(
                f,
                "the managedFields of {resource}{}{} could not be read: {why}",
                named(name),
                in_namespace(namespace)
            ),
            Missing::Recorded(line) => f.write_str(line),
        }
    }
}

/// A line as a snapshot file records it.
impl From<&str> for Gap {
    fn from(line: &str) -> Gap {
        Gap::recorded(line)
    }
}

/// A gap equals the line it prints (as tests and snapshot files state them).
impl PartialEq<&str> for Gap {
    fn eq(&self, other: &&str) -> bool {
        self.to_string().as_str() == *other
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gaps_print_the_lines_answers_have_always_printed() {
        let list = |ns: Option<&str>| Missing::List { resource: "configmaps".into(), namespace: ns.map(Into::into) };
        assert_eq!(Gap::new(list(None), "forbidden (403)"), "configmaps could not be listed: forbidden (403)");
        assert_eq!(
            Gap::new(list(Some("labs")), "no answer within 1s"),
            "configmaps in namespace \"labs\" could not be listed: no answer within 1s"
        );
        let crd = "customresourcedefinitions.apiextensions.k8s.io".to_string();
        assert_eq!(
            Gap::new(Missing::Bodies { resource: crd.clone(), name: Some("sites.own.labhub.io".into()) }, "x"),
            "customresourcedefinitions.apiextensions.k8s.io \"sites.own.labhub.io\" could not be read in full: x"
        );
        assert_eq!(
            Gap::new(
                Missing::ManagedFields {
                    resource: "sites.own.labhub.io".into(),
                    namespace: Some("labs".into()),
                    name: Some("alpha".into())
                },
                "y"
            ),
            "the managedFields of sites.own.labhub.io \"alpha\" in namespace \"labs\" could not be read: y"
        );
        assert_eq!(
            Gap::new(Missing::Discovery { group_version: "metrics.k8s.io/v1beta1".into() }, "z"),
            "API group metrics.k8s.io/v1beta1 could not be discovered: z"
        );
        assert_eq!(Gap::recorded("secrets: forbidden"), "secrets: forbidden");
        assert!(Gap::new(Missing::List { resource: crd.clone(), namespace: None }, "w").is_list_of(&crd));
        assert!(!Gap::recorded(format!("{crd} could not be listed: w")).is_list_of(&crd));
    }
}

//! Kubernetes label selectors (`metav1.LabelSelector`), as webhooks' `namespaceSelector` and
//! `objectSelector` and policy bindings' `matchResources` use them: parsed and matched by
//! kube-core (`kube::core::Selector`), whose operators are apimachinery's
//! (`matchLabels`; `In`, `NotIn`, `Exists`, `DoesNotExist`). What is ours is what the snapshot
//! adds: labels that were not read.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use kube::core::{Selector, SelectorExt};
use serde::Deserialize;
use serde_json::Value;

/// A selector as a holder gives it, parsed once.
#[derive(Clone, Debug)]
pub enum Parsed {
    /// Absent or empty: every object, its labels read or not.
    Everything,
    /// Matched against labels.
    Selector(Selector),
    /// Not a valid selector (an operator apimachinery does not know, `In` without values, a
    /// value of the wrong type): the API server refuses such a configuration when it is
    /// written, so only a hand-made snapshot holds one; it selects nothing.
    Invalid,
}

impl Parsed {
    /// Parses `sel` (`null` and `{}` select everything, as the API server defaults them).
    pub fn new(sel: Option<&Value>) -> Parsed {
        let Some(sel) = sel.filter(|s| !s.is_null()) else { return Parsed::Everything };
        match LabelSelector::deserialize(sel).map_err(|_| ()).and_then(|s| Selector::try_from(s).map_err(|_| ())) {
            Ok(s) if s.selects_all() => Parsed::Everything,
            Ok(s) => Parsed::Selector(s),
            Err(()) => Parsed::Invalid,
        }
    }

    /// Whether `labels` are selected: None when they were not read and it matters.
    pub fn matches(&self, labels: Option<&[(String, String)]>) -> Option<bool> {
        match self {
            Parsed::Everything => Some(true),
            Parsed::Invalid => Some(false),
            Parsed::Selector(s) => {
                let labels: BTreeMap<String, String> = labels?.iter().cloned().collect();
                Some(s.matches(&labels))
            }
        }
    }
}

/// A LabelSelector against labels: Some(bool) when it can be evaluated, None when the labels
/// were not read (an empty or absent selector matches everything, read or not).
pub fn selector_matches(sel: Option<&Value>, labels: Option<&[(String, String)]>) -> Option<bool> {
    Parsed::new(sel).matches(labels)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn labels(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    #[test]
    fn operators_match_as_apimachinery_does() {
        let l = labels(&[("tier", "gold"), ("env", "prod")]);
        let m = |sel: Value| selector_matches(Some(&sel), Some(&l));
        assert_eq!(m(json!({"matchLabels": {"tier": "gold"}})), Some(true));
        assert_eq!(m(json!({"matchLabels": {"tier": "gold", "zone": "a"}})), Some(false));
        let expr = |op: &str, key: &str, values: &[&str]| json!({"matchExpressions": [{"key": key, "operator": op, "values": values}]});
        assert_eq!(m(expr("In", "tier", &["gold", "silver"])), Some(true));
        assert_eq!(m(expr("In", "zone", &["a"])), Some(false), "In needs the key");
        assert_eq!(m(expr("NotIn", "tier", &["silver"])), Some(true));
        assert_eq!(m(expr("NotIn", "zone", &["a"])), Some(true), "NotIn holds without the key");
        assert_eq!(m(json!({"matchExpressions": [{"key": "env", "operator": "Exists"}]})), Some(true));
        assert_eq!(m(json!({"matchExpressions": [{"key": "env", "operator": "DoesNotExist"}]})), Some(false));
        // both parts must hold
        assert_eq!(
            m(
                json!({"matchLabels": {"tier": "gold"}, "matchExpressions": [{"key": "env", "operator": "DoesNotExist"}]})
            ),
            Some(false)
        );
    }

    #[test]
    fn unread_labels_matter_only_to_a_selector_that_selects() {
        for everything in
            [None, Some(json!(null)), Some(json!({})), Some(json!({"matchLabels": {}, "matchExpressions": []}))]
        {
            assert_eq!(selector_matches(everything.as_ref(), None), Some(true), "{everything:?}");
        }
        assert_eq!(selector_matches(Some(&json!({"matchLabels": {"tier": "gold"}})), None), None);
    }

    #[test]
    fn an_invalid_selector_selects_nothing() {
        let l = labels(&[("tier", "gold")]);
        for bad in [
            json!({"matchExpressions": [{"key": "tier", "operator": "Near", "values": ["gold"]}]}),
            json!({"matchExpressions": [{"key": "tier", "operator": "In"}]}),
            json!({"matchLabels": {"tier": 1}}),
        ] {
            assert_eq!(selector_matches(Some(&bad), Some(&l)), Some(false), "{bad}");
        }
    }
}

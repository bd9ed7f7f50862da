//! Kubernetes label selectors (`metav1.LabelSelector`), as webhooks' `namespaceSelector` and
//! `objectSelector` and policy bindings' `matchResources` use them.

use serde_json::Value;

/// A LabelSelector against labels: Some(bool) when it can be evaluated, None when the labels
/// were not read (an empty or absent selector matches everything, read or not).
pub fn selector_matches(sel: Option<&Value>, labels: Option<&[(String, String)]>) -> Option<bool> {
    let Some(sel) = sel.filter(|s| s.as_object().is_some_and(|m| m.values().any(|v| !is_empty(v)))) else {
        return Some(true);
    };
    let labels = labels?;
    let get = |k: &str| labels.iter().find(|(lk, _)| lk == k).map(|(_, v)| v.as_str());
    for (k, v) in sel.get("matchLabels").and_then(Value::as_object).into_iter().flatten() {
        if get(k) != v.as_str() {
            return Some(false);
        }
    }
    for e in sel.get("matchExpressions").and_then(Value::as_array).into_iter().flatten() {
        let key = e.get("key").and_then(Value::as_str).unwrap_or("");
        let values: Vec<&str> =
            e.get("values").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str).collect();
        let ok = match (e.get("operator").and_then(Value::as_str).unwrap_or(""), get(key)) {
            ("In", Some(v)) => values.contains(&v),
            ("In", None) => false,
            ("NotIn", Some(v)) => !values.contains(&v),
            ("NotIn", None) => true,
            ("Exists", v) => v.is_some(),
            ("DoesNotExist", v) => v.is_none(),
            // an invalid operator: the API server would have refused the configuration
            _ => false,
        };
        if !ok {
            return Some(false);
        }
    }
    Some(true)
}

fn is_empty(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::Object(m) => m.is_empty(),
        Value::Array(a) => a.is_empty(),
        _ => false,
    }
}

//! What a verdict rests on: a verdict drawn from an absence ("no pod uses the claim", "the Job
//! is gone", "no instances remain") is only as good as the listing it was drawn from. Where
//! the input shows nothing of that kind (a snapshot of one object, `kubectl get pvc -o json`)
//! or says the listing failed (`incomplete`), the absence proves nothing, and the answer says
//! so instead of stating a root cause as fact.

use crate::graph::Graph;

/// Why an absence of `group`/`kind` objects (in `namespace`, when given) cannot be trusted, or
/// `None` when the input shows that kind was read there.
///
/// Read: no `incomplete` entry names the resource (or, for a namespace, that namespace's
/// listing of it), and the input holds objects of that kind somewhere, or discovery data
/// that says it was listed (what `kubectl gc snapshot` writes).
pub fn blind_to(g: &Graph, group: &str, kind: &str, namespace: Option<&str>) -> Option<String> {
    let plural = g
        .mapper()
        .kind(group, kind)
        .map(|t| t.plural.clone())
        .unwrap_or_else(|| format!("{}s", kind.to_ascii_lowercase()));
    let qualified = if group.is_empty() { plural.clone() } else { format!("{plural}.{group}") };
    let what = match namespace {
        Some(ns) => format!("{qualified} in namespace {ns}"),
        None => qualified.clone(),
    };
    if let Some(e) = g.gaps().iter().find(|e| names_resource(&e.to_string(), &plural, group, namespace)) {
        return Some(format!("{what} could not be read (\"{e}\")"));
    }
    if !g.of_kind(group, kind).is_empty() {
        return None;
    }
    if g.discovered(group, kind) {
        return None;
    }
    Some(format!("the input holds no {qualified} at all, and no discovery data that says they were listed"))
}

/// Why the content of a namespace cannot be known to be empty, or `None` when the input is
/// a capture (`kubectl gc snapshot`, with its discovery data) that read that namespace whole.
pub fn blind_to_namespace(g: &Graph, namespace: &str) -> Option<String> {
    if let Some(e) = g
        .gaps()
        .iter()
        .map(ToString::to_string)
        .find(|e| e.contains(&format!("\"{namespace}\"")) || !e.contains("namespace"))
    {
        return Some(format!("not everything in namespace {namespace} could be read (\"{e}\")"));
    }
    if !g.has_discovery() {
        return Some(format!(
            "the input is not a capture with discovery data (kubectl gc snapshot), so whether namespace {namespace} still holds objects of kinds it does not include cannot be told"
        ));
    }
    None
}

/// Whether an `incomplete` entry (free text such as `pods in namespace "x" could not be
/// listed: 403` or `batch/v1: 503`) names this resource, in this namespace or cluster-wide.
fn names_resource(entry: &str, plural: &str, group: &str, namespace: Option<&str>) -> bool {
    let lower = entry.to_ascii_lowercase();
    let tokens: Vec<&str> = lower
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '.' || c == '/' || c == '-'))
        .filter(|t| !t.is_empty())
        .collect();
    let resource = tokens.iter().any(|t| {
        let bare = *t == plural || t.starts_with(&format!("{plural}/"));
        let qualified =
            !group.is_empty() && (*t == format!("{plural}.{group}") || t.starts_with(&format!("{plural}.{group}/")));
        let whole_group = !group.is_empty() && (*t == group || t.starts_with(&format!("{group}/")));
        (bare && (group.is_empty() || !t.contains('.'))) || qualified || whole_group
    });
    if !resource {
        return false;
    }
    // a failure in another namespace does not hide this one
    match (namespace, lower.find("in namespace")) {
        (Some(ns), Some(_)) => lower.contains(&format!("\"{}\"", ns.to_ascii_lowercase())),
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{graph, obj};

    #[test]
    fn incomplete_entries_name_what_they_hide() {
        assert!(names_resource("pods could not be listed: 403 forbidden", "pods", "", Some("batch")));
        assert!(names_resource("pods in namespace \"batch\" could not be listed: 403", "pods", "", Some("batch")));
        assert!(!names_resource("pods in namespace \"other\" could not be listed: 403", "pods", "", Some("batch")));
        assert!(names_resource("jobs.batch could not be listed: timeout", "jobs", "batch", None));
        assert!(names_resource("API group batch/v1 could not be discovered: 503", "jobs", "batch", None));
        assert!(!names_resource("podtemplates could not be listed", "pods", "", None));
        assert!(!names_resource("sites.own.labhub.io could not be listed", "pods", "", None));
    }

    #[test]
    fn an_absence_counts_only_where_the_kind_was_read() {
        let one_claim = graph(vec![obj("v1", "PersistentVolumeClaim", Some("batch"), "data", "c1")]);
        let why = blind_to(&one_claim, "", "Pod", Some("batch")).expect("no pods anywhere: blind");
        assert!(why.contains("no pods"), "{why}");
        let with_pods = graph(vec![
            obj("v1", "PersistentVolumeClaim", Some("batch"), "data", "c1"),
            obj("v1", "Pod", Some("kube-system"), "etcd-cp", "p1"),
        ]);
        assert_eq!(blind_to(&with_pods, "", "Pod", Some("batch")), None);
        let mut forbidden = crate::testing::snapshot(vec![obj("v1", "Pod", Some("kube-system"), "etcd-cp", "p1")]);
        forbidden.incomplete.push("pods in namespace \"batch\" could not be listed: 403 Forbidden".into());
        let g = Graph::build(forbidden);
        assert!(blind_to(&g, "", "Pod", Some("batch")).is_some_and(|w| w.contains("403")));
        assert_eq!(blind_to(&g, "", "Pod", Some("kube-system")), None);
    }
}

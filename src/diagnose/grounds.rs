//! What a verdict rests on: a verdict drawn from an absence ("no pod uses the claim", "the Job
//! is gone", "no instances remain") is only as good as the listing it was drawn from. Where
//! the input shows nothing of that kind (a snapshot of one object, `kubectl get pvc -o json`)
//! or says the listing failed (`incomplete`), the absence proves nothing, and the answer says
//! so instead of stating a root cause as fact.

use crate::graph::Graph;

/// Why an absence of `group`/`kind` objects (in `namespace`, when given) cannot be trusted, or
/// `None` when the input shows that kind was read there.
///
/// Read: no `incomplete` entry may hide the resource (by its typed fields: a failed list or
/// full read of it there or everywhere, a failed discovery of its group; a line without fields
/// may hide anything), and the input holds objects of that kind somewhere, or discovery data
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
    if let Some(e) = g.gaps().iter().find(|e| e.may_hide(group, Some(&plural), namespace)) {
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
    // a list everywhere or of this namespace, a failed group, or a line without fields
    if let Some(e) = g.gaps().iter().find(|e| e.may_hide_any(Some(namespace))) {
        return Some(format!("not everything in namespace {namespace} could be read (\"{e}\")"));
    }
    if !g.has_discovery() {
        return Some(format!(
            "the input is not a capture with discovery data (kubectl gc snapshot), so whether namespace {namespace} still holds objects of kinds it does not include cannot be told"
        ));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{graph, obj};

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
        let pods = crate::snapshot::Resource::new("", "v1", "pods");
        let what = crate::snapshot::Missing::List { resource: pods, namespace: Some("batch".into()) };
        forbidden.incomplete.push(crate::snapshot::Gap::new(what, "403 Forbidden"));
        let g = Graph::build(forbidden);
        assert!(blind_to(&g, "", "Pod", Some("batch")).is_some_and(|w| w.contains("403")));
        assert_eq!(blind_to(&g, "", "Pod", Some("kube-system")), None);
        assert!(blind_to_namespace(&g, "batch").is_some() && blind_to(&g, "", "Pod", None).is_some());
        // a line without fields (an older snapshot file) may hide anything: nothing is trusted
        let mut old = crate::testing::snapshot(vec![obj("v1", "Pod", Some("kube-system"), "etcd-cp", "p1")]);
        old.incomplete.push("sites.own.labhub.io could not be listed: 403".into());
        let g = Graph::build(old);
        assert!(blind_to(&g, "", "Pod", Some("kube-system")).is_some());
        assert!(blind_to_namespace(&g, "kube-system").is_some());
    }
}

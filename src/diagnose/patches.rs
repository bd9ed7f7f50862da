//! One patch per object: the finalizer-removal patches of an answer, merged when several are
//! for the same object. Each patch is guarded by the object's resourceVersion and by the
//! finalizer's position, so of two patches for one object the second always fails: the first
//! changes the resourceVersion (and shifts the positions after the one it removed). One patch
//! that tests every finalizer it removes, then removes them from the last position down, does
//! what the two were meant to.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::graph::{Graph, NodeId};

use super::finding::{Finding, Related};
use super::remedy;
use super::step::{Command, Reach, Step};

/// Replaces, in every finding's remedy, the steps that remove finalizers of the same object one
/// patch each by one step with one patch for all of them (the text keeps each step's condition).
pub fn merge_per_object(g: &Graph, findings: &mut [Finding]) {
    // (object, finalizer position) of every single-finalizer patch the answer prints, with
    // the text of the step that carries it, in the order first seen
    let mut by_object: BTreeMap<NodeId, Vec<(usize, Arc<str>)>> = BTreeMap::new();
    let mut single = Singles::default();
    for f in findings.iter() {
        for s in f.remedy.iter().filter(|s| s.reach == Reach::Destructive) {
            let Some(c) = &s.command else { continue };
            let Some((x, i)) = removal_of(g, f, c, &mut single) else { continue };
            let wanted = by_object.entry(x).or_default();
            if !wanted.iter().any(|(j, _)| *j == i) {
                wanted.push((i, s.text.clone()));
            }
        }
    }
    by_object.retain(|_, w| w.len() > 1);
    if by_object.is_empty() {
        return;
    }
    let merged: BTreeMap<NodeId, Step> = by_object
        .iter()
        .filter_map(|(&x, wanted)| {
            let at: Vec<usize> = wanted.iter().map(|(i, _)| *i).collect();
            let patch = remedy::remove_finalizers_at(g, x, &at)?;
            let text = merged_text(at.len(), &crate::diagnose::describe(g, x), wanted.iter().map(|(_, t)| &**t));
            Some((x, Step::run(Reach::Destructive, text, patch)))
        })
        .collect();
    for f in findings.iter_mut() {
        let mut out: Vec<Step> = Vec::with_capacity(f.remedy.len());
        for s in std::mem::take(&mut f.remedy) {
            let target = s
                .command
                .as_ref()
                .filter(|_| s.reach == Reach::Destructive)
                .and_then(|c| single.patches.get(c))
                .and_then(|(x, _)| merged.get(x));
            match target {
                Some(m) if out.contains(m) => {}
                Some(m) => out.push(m.clone()),
                None => out.push(s),
            }
        }
        f.remedy = out;
    }
}

/// How many conditions a merged patch's text lists before it counts the rest.
const CONDITIONS: usize = 5;

/// The single-finalizer patches [`remedy::remove_finalizer_at`] writes, by command, for the
/// objects looked at so far: found by hashing, so 40,000 objects cost 40,000 look-ups.
#[derive(Default)]
struct Singles {
    patches: rustc_hash::FxHashMap<Command, (NodeId, usize)>,
    objects: rustc_hash::FxHashSet<NodeId>,
}

/// The merged step's one sentence: each single step's condition becomes a clause of it ("Last
/// resort, only once …: remove the finalizer." gives "only once …"), so that two last resorts
/// read as one, not as sentences run together.
fn merged_text<'t>(n: usize, object: &str, steps: impl Iterator<Item = &'t str>) -> String {
    let mut last_resort = false;
    let clauses: Vec<&str> = steps
        .map(|t| {
            let t = t.trim().trim_end_matches('.');
            let t = match t.strip_prefix("Last resort, ") {
                Some(rest) => {
                    last_resort = true;
                    rest
                }
                None => t,
            };
            t.strip_suffix(": remove the finalizer").unwrap_or(t)
        })
        .collect();
    // the first few conditions: thousands would make one step megabytes long
    let more = match clauses.len().saturating_sub(CONDITIONS) {
        0 => String::new(),
        n => format!("; and {n} more, each on the condition its own finding gives"),
    };
    let clauses = &clauses[..clauses.len().min(CONDITIONS)];
    let head = if last_resort { "Last resort: remove" } else { "Remove" };
    format!(
        "{head} {n} finalizers of {object} in one patch (a patch for each would fail after the first, which changes the object's resourceVersion), each only on its own condition: {}{more}.",
        clauses.join("; and ")
    )
}

/// Which finalizer of which object `c` removes, if it is one of the single-finalizer patches
/// for the finding's object or an object it names (the objects whose finalizer patches a
/// finding prints); memoised in `single`.
fn removal_of(g: &Graph, f: &Finding, c: &Command, single: &mut Singles) -> Option<(NodeId, usize)> {
    if let Some(&hit) = single.patches.get(c) {
        return Some(hit);
    }
    let named = f.related.iter().filter_map(|r| match r {
        Related::Node(n) => Some(*n),
        _ => None,
    });
    for x in std::iter::once(f.object).chain(named) {
        if !single.objects.insert(x) {
            continue;
        }
        let Some(o) = g.object(x) else { continue };
        for (i, fin) in o.finalizers.iter().enumerate() {
            if let Some(p) = remedy::remove_finalizer_at(g, x, Some(i), fin) {
                single.patches.insert(p, (x, i));
            }
        }
    }
    single.patches.get(c).copied()
}

#[cfg(test)]
mod tests {
    use super::merged_text;

    #[test]
    fn two_last_resorts_merge_into_one_sentence() {
        let a = "Last resort, only once whatever a.example/x guards has been cleaned up by hand (its controller is gone): remove the finalizer.";
        let b = "Last resort, once whatever b.example/y guards has been cleaned up by hand (the controller will not): remove the finalizer.";
        let t = merged_text(2, "Site labs/alpha", [a, b].into_iter());
        assert_eq!(t.matches("Last resort").count(), 1, "{t}");
        assert_eq!(t.matches(". ").count(), 0, "one sentence: {t}");
        assert!(t.ends_with("(the controller will not)."), "{t}");
        assert!(
            t.starts_with("Last resort: remove 2 finalizers of Site labs/alpha in one patch")
                && t.contains("condition: only once whatever a.example/x guards")
                && t.contains("(its controller is gone); and once whatever b.example/y guards"),
            "{t}"
        );
        // steps that are not last resorts keep their words, still one sentence
        let t = merged_text(2, "Site labs/alpha", ["Remove x once the bucket is empty.", "Remove y now."].into_iter());
        assert!(t.starts_with("Remove 2 finalizers") && !t.contains("Last resort"), "{t}");
        assert!(t.ends_with("Remove x once the bucket is empty; and Remove y now."), "{t}");
    }
}

//! The answer as a whole, once every finding is in: what it says depends on its verdict
//! (contract §4.3.4).

use std::collections::{HashMap, HashSet};

use super::finding::Finding;
use super::leaves;
use super::step::{Effect, Reach, Step};
use super::{Diagnosis, Verdict};
use crate::graph::{Graph, NodeId};

/// How many steps an answer that is in progress prints at most.
const CALM_STEPS: usize = 3;

/// In progress reads calm and short: only steps that change nothing, at most [`CALM_STEPS`] of
/// them (counted as the answer prints them: the same step of several findings once), first
/// found first. Nothing is to be done, and a list of changes would say otherwise.
pub fn calm(d: &mut Diagnosis) {
    if d.verdict() != Verdict::InProgress {
        return;
    }
    let mut printed: HashSet<Step> = HashSet::new();
    for f in &mut d.findings {
        f.remedy.retain(|s| {
            s.reach == Reach::Inspect
                && (printed.contains(s) || printed.len() < CALM_STEPS && printed.insert(s.clone()))
        });
    }
}

/// How many findings about one object an answer lists before it counts the rest.
const LISTED: usize = 20;

/// At most [`LISTED`] findings about one object (an object may carry 30,000 finalizers, each a
/// finding whose steps include one patch for all of them: listing every one is quadratic in
/// size); the last one listed says how many more there are. The verdict is kept: a finding left
/// out that cannot tell passes that on.
pub fn cap_per_object(g: &Graph, d: &mut Diagnosis) {
    let mut total: HashMap<NodeId, usize> = HashMap::new();
    for f in &d.findings {
        *total.entry(f.object).or_default() += 1;
    }
    if total.values().all(|&n| n <= LISTED) {
        return;
    }
    let mut listed: HashMap<NodeId, usize> = HashMap::new();
    // per object cut short: whether a finding left out cannot tell, and its last one listed
    let mut cut: HashMap<NodeId, (bool, usize)> = HashMap::new();
    let mut kept: Vec<Finding> = Vec::with_capacity(d.findings.len().min(total.len() * LISTED));
    for f in std::mem::take(&mut d.findings) {
        let n = listed.entry(f.object).or_default();
        *n += 1;
        if *n <= LISTED {
            if *n == LISTED {
                cut.insert(f.object, (false, kept.len()));
            }
            kept.push(f);
        } else if let Some((cannot_tell, _)) = cut.get_mut(&f.object) {
            *cannot_tell |= f.cannot_tell;
        }
    }
    for (x, (cannot_tell, last)) in cut {
        if total[&x] == LISTED {
            continue;
        }
        let last = &mut kept[last];
        last.message.push_str(&format!(
            " ({} more findings about {} are not listed; {} in all)",
            total[&x] - LISTED,
            super::describe(g, x),
            total[&x]
        ));
        last.cannot_tell |= cannot_tell;
    }
    d.findings = kept;
}

/// Every step that removes finalizers says what it leaves behind, where the cluster shows it.
/// Once per object: one patch may be printed by thousands of findings.
pub fn say_what_is_left(g: &Graph, findings: &mut [Finding]) {
    let mut left_by: HashMap<NodeId, Option<String>> = HashMap::new();
    for s in findings.iter_mut().flat_map(|f| f.remedy.iter_mut()) {
        let Some(sends) = s.command.as_ref().and_then(|c| c.sends()) else { continue };
        if sends.effect != Effect::RemoveFinalizers {
            continue;
        }
        if let Some(left) = left_by.entry(sends.object).or_insert_with(|| leaves::behind(g, sends.object)) {
            s.append(&format!(" It leaves behind {left}."));
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::controllers::Liveness;
    use crate::diagnose::{Command, why_stuck};
    use crate::testing::{ObjExt, graph, node, obj};

    #[test]
    fn in_progress_keeps_three_steps_that_change_nothing_and_stuck_keeps_all() {
        let bucket = obj("media.example.com/v1", "Bucket", Some("studio"), "raw", "b-1")
            .deleting("2026-11-29T11:59:30Z")
            .finalizers(&["media.example.com/purge"]);
        let lease = obj("coordination.k8s.io/v1", "Lease", Some("media"), "8f3c.media.example.com", "l-1").with(
            "spec",
            json!({"holderIdentity": "op-1_x", "leaseDurationSeconds": 15, "renewTime": "2026-11-29T11:59:55Z"}),
        );
        let g = graph(vec![bucket, lease]);
        let live = Liveness::new(&g, "2026-11-29T12:00:00Z".parse().unwrap());
        let mut d = why_stuck(&g, &live, node(&g, "Bucket", "raw"));
        assert_eq!(d.verdict(), Verdict::InProgress);
        let read =
            |i: usize| Step::run(Reach::Inspect, format!("read {i}"), Command::kubectl(["get"]).arg(format!("x{i}")));
        let steps = vec![Step::advice(Reach::Restore, "restart it"), read(1), read(2), read(1), read(3), read(4)];
        d.findings[0].remedy = steps.clone();
        let mut stuck = d.clone();
        calm(&mut d);
        assert_eq!(d.findings[0].remedy, [read(1), read(2), read(1), read(3)]);
        stuck.stuck = true;
        calm(&mut stuck);
        assert_eq!(stuck.findings[0].remedy, steps);
    }

    #[test]
    fn findings_past_the_cap_are_counted_for_every_object() {
        let bucket = obj("media.example.com/v1", "Bucket", Some("studio"), "raw", "b-1")
            .deleting("2026-11-29T11:00:00Z")
            .finalizers(&["media.example.com/purge"]);
        let other = obj("media.example.com/v1", "Bucket", Some("studio"), "cooked", "b-2");
        let g = graph(vec![bucket, other]);
        let live = Liveness::new(&g, "2026-11-29T12:00:00Z".parse().unwrap());
        let mut d = why_stuck(&g, &live, node(&g, "Bucket", "raw"));
        let one = d.findings[0].clone();
        let (raw, cooked) = (node(&g, "Bucket", "raw"), node(&g, "Bucket", "cooked"));
        d.findings = (0..25)
            .map(|_| super::Finding { object: raw, ..one.clone() })
            .chain((0..30).map(|_| super::Finding { object: cooked, cannot_tell: true, ..one.clone() }))
            .collect();
        cap_per_object(&g, &mut d);
        let about = |x| d.findings.iter().filter(|f| f.object == x).collect::<Vec<_>>();
        assert_eq!((about(raw).len(), about(cooked).len()), (LISTED, LISTED));
        assert!(
            about(raw)[LISTED - 1]
                .message
                .ends_with("(5 more findings about Bucket studio/raw are not listed; 25 in all)")
        );
        assert!(
            about(cooked)[LISTED - 1]
                .message
                .ends_with("(10 more findings about Bucket studio/cooked are not listed; 30 in all)")
        );
    }
}

//! What answers about several objects share (`why-stuck --all`): a question one answer asks of
//! a whole namespace is answered once per namespace and kept, so a thousand answers do not
//! scan a namespace a thousand times. One answer alone pays what it always did: one scan of
//! the namespace it asks about.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use serde::Deserialize;

use crate::graph::{Graph, NodeId};

/// Claim name → the pods that mount it (in node order), for one namespace.
type ClaimUsers = HashMap<String, Vec<NodeId>>;

/// Indexes several answers share: the Events by the object they are about (one pass over
/// the snapshot), and per-namespace indexes built on first use.
pub struct Shared {
    /// Events by involved object (built once: a pass over every object of the snapshot).
    pub events: super::events::Index,
    /// The webhooks by what they intercept, and their backends judged once.
    pub admission: crate::admission::Index,
    claim_users: Mutex<HashMap<Option<String>, Arc<ClaimUsers>>>,
    /// The objects a sweep answers, each with an answer of its own: another answer stops at
    /// them (see [`Shared::answering`]). Empty for one answer.
    answered: HashSet<NodeId>,
    /// The owner-reference cycle of each node on one, for a sweep (one Tarjan pass instead of
    /// a walk of every answer's ancestors, which a deep chain makes quadratic).
    cycles: Option<HashMap<NodeId, Arc<Vec<NodeId>>>>,
}

impl Shared {
    /// The indexes for answers over `g`.
    pub fn new(g: &Graph) -> Shared {
        Shared {
            events: super::events::Index::new(g),
            admission: crate::admission::Index::new(g),
            claim_users: Mutex::new(HashMap::new()),
            answered: HashSet::new(),
            cycles: None,
        }
    }

    /// The indexes for a sweep answering each of `answered` (`why-stuck --all`): an answer
    /// walks what its object waits on up to the objects that have answers of their own, names
    /// them ([`super::Diagnosis::waits_on_answers`]) and leaves their findings to their answers,
    /// so a foreground chain of N costs N, not N²/2.
    pub fn answering(g: &Graph, answered: impl IntoIterator<Item = NodeId>) -> Shared {
        let mut cycles = HashMap::new();
        for c in crate::graph::owner_cycles(g) {
            let c = Arc::new(c);
            for &n in c.iter() {
                cycles.insert(n, c.clone());
            }
        }
        Shared { answered: answered.into_iter().collect(), cycles: Some(cycles), ..Shared::new(g) }
    }

    /// Whether `n` has an answer of its own in the sweep these indexes serve.
    pub fn is_answered(&self, n: NodeId) -> bool {
        self.answered.contains(&n)
    }

    /// The owner-reference cycle through `n` (see [`crate::graph::owner_cycle_through`]).
    pub fn owner_cycle(&self, g: &Graph, n: NodeId) -> Option<Vec<NodeId>> {
        match &self.cycles {
            Some(index) => index.get(&n).map(|c| c.to_vec()),
            None => crate::graph::owner_cycle_through(g, n),
        }
    }

    /// The pods of `namespace` whose volumes name the claim `claim`.
    pub fn claim_users(&self, g: &Graph, namespace: Option<&str>, claim: &str) -> Vec<NodeId> {
        let key = namespace.map(String::from);
        let cached = self.claim_users.lock().unwrap_or_else(|e| e.into_inner()).get(&key).cloned();
        let index = cached.unwrap_or_else(|| {
            let built = Arc::new(claims_in(g, namespace));
            self.claim_users.lock().unwrap_or_else(|e| e.into_inner()).insert(key, built.clone());
            built
        });
        index.get(claim).cloned().unwrap_or_default()
    }
}

/// The pods' spec, as far as claims go: read typed, so no pod's whole body is parsed and kept.
#[derive(Deserialize, Default)]
struct PodVolumes {
    #[serde(default)]
    spec: Option<Spec>,
}

#[derive(Deserialize, Default)]
struct Spec {
    #[serde(default)]
    volumes: Option<Vec<Volume>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Volume {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    persistent_volume_claim: Option<ClaimSource>,
    /// A generic ephemeral volume: its claim is `<pod>-<volume>`.
    #[serde(default)]
    ephemeral: Option<serde::de::IgnoredAny>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ClaimSource {
    #[serde(default)]
    claim_name: Option<String>,
}

/// Claim name → the pods of the namespace that may use it: those naming it in a volume, and
/// those whose generic ephemeral volume's claim carries that name. Candidates only: the
/// PVC-protection controller's exact rule (`builtin_conditions`) is applied to them.
fn claims_in(g: &Graph, namespace: Option<&str>) -> ClaimUsers {
    let mut out = ClaimUsers::new();
    for (id, p) in g.in_namespace(namespace) {
        if p.kind != "Pod" || !p.group().is_empty() || p.body.is_empty() {
            continue;
        }
        let volumes = p.body.read::<PodVolumes>().spec.and_then(|s| s.volumes).unwrap_or_default();
        let mut names: Vec<String> = volumes
            .into_iter()
            .filter_map(|v| match (v.persistent_volume_claim, v.ephemeral, v.name) {
                (Some(c), _, _) => c.claim_name,
                (None, Some(_), Some(vol)) => Some(format!("{}-{vol}", p.name)),
                _ => None,
            })
            .collect();
        names.dedup();
        for n in names {
            let pods = out.entry(n).or_default();
            if pods.last() != Some(&id) {
                pods.push(id);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use crate::testing::{ObjExt, graph, node, obj};
    use serde_json::json;

    #[test]
    fn pods_are_found_by_the_claims_they_mount_in_their_namespace_only() {
        let vol = |c: &str| json!({"volumes": [{"name": "d", "persistentVolumeClaim": {"claimName": c}}, {"name": "e", "emptyDir": {}}]});
        let g = graph(vec![
            obj("v1", "Pod", Some("a"), "p1", "1").with("spec", vol("data")),
            obj("v1", "Pod", Some("a"), "p2", "2").with("spec", vol("other")),
            obj("v1", "Pod", Some("b"), "p3", "3").with("spec", vol("data")),
            obj("v1", "Pod", Some("a"), "p4", "4"),
        ]);
        let shared = super::Shared::new(&g);
        assert_eq!(shared.claim_users(&g, Some("a"), "data"), vec![node(&g, "Pod", "p1")]);
        assert_eq!(shared.claim_users(&g, Some("a"), "other"), vec![node(&g, "Pod", "p2")]);
        assert_eq!(shared.claim_users(&g, Some("b"), "data"), vec![node(&g, "Pod", "p3")]);
        assert!(shared.claim_users(&g, Some("a"), "none").is_empty());
    }
}

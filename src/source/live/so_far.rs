//! The objects of a read's answers, kept as the answers come, for a plan whose next asks
//! depend on an analysis of what was read: each round, only the answers since the last one
//! are turned into objects, under the same rules as the read's own snapshot (`assemble`): the
//! first object of each uid, one read in full taking the place of one read without its body,
//! managedFields read again put back by uid. Each document is copied once, when its answer is
//! new; the answers stay the plan's.
//!
//! One difference from the read's snapshot: objects stand in the order their answers came
//! (an object read in full later takes the place of its metadata), where `assemble` puts the
//! answers read in full first. Nodes are in their own order either way; only Events are read
//! in input order, and they come only in full lists (a capture's), in their answers' order.

use std::collections::HashMap;

use crate::snapshot::raw::{Flattened, RawDoc, RawManagedFields};
use crate::snapshot::{Gap, Object};

use super::ask::{Answered, Body, Use};
use super::{Discovery, gaps_of};

/// Where the object of a uid came from, and where it is.
struct Slot {
    /// Its answer and document (among the answer's).
    answer: usize,
    doc: usize,
    /// Read with its body.
    full: bool,
    /// Its index among the objects so far; `None` when the document was not an object (no
    /// name, …): it still holds the uid, as in `assemble`.
    index: Option<usize>,
}

/// What the answers so far make; see the module docs.
#[derive(Default)]
pub struct SoFar {
    /// Answers taken so far.
    taken: usize,
    /// Objects so far.
    objects: usize,
    slots: HashMap<String, Slot>,
    /// managedFields read again, by uid (the last read of each wins, as in `assemble`).
    restored: HashMap<String, RawManagedFields>,
}

/// What the answers since the last round change: objects that take the place of earlier ones
/// (by index), objects that follow them, and every gap as the answers so far leave them.
pub struct Round {
    /// (index among the objects so far, the object now).
    pub replaced: Vec<(usize, Object)>,
    /// New objects, in the order of their answers.
    pub added: Vec<Object>,
    /// What could not be read, in `assemble`'s order.
    pub incomplete: Vec<Gap>,
}

impl Round {
    /// The first round's objects as a snapshot (read at `now`, with discovery's lists), to
    /// build a graph from; later rounds grow it.
    pub fn into_snapshot(self, d: &Discovery, now: k8s_openapi::jiff::Timestamp) -> crate::snapshot::Snapshot {
        debug_assert!(self.replaced.is_empty(), "the first round replaces nothing");
        crate::snapshot::Snapshot {
            captured_at: Some(now),
            objects: self.added,
            resource_lists: d.lists.clone(),
            incomplete: self.incomplete,
            ..Default::default()
        }
    }

    /// The object at index `i` is now `o`: one of an earlier round (below `base`) is replaced,
    /// one of this round's is changed where it stands.
    fn place(&mut self, base: usize, i: usize, o: Object) {
        match i.checked_sub(base) {
            Some(j) => self.added[j] = o,
            None => self.replaced.push((i, o)),
        }
    }
}

impl SoFar {
    /// How many answers have been taken.
    pub fn taken(&self) -> usize {
        self.taken
    }

    /// Takes the answers after those already taken.
    pub fn take(&mut self, d: &Discovery, answers: &[Answered]) -> Round {
        let mut round = Round { replaced: Vec::new(), added: Vec::new(), incomplete: gaps_of(d, answers) };
        let first = self.taken.min(answers.len());
        let base = self.objects;
        // (answer, doc) of objects whose managedFields came back since: converted again
        let mut restore: Vec<String> = Vec::new();
        for (ai, a) in answers.iter().enumerate().skip(first) {
            let Ok(docs) = &a.result else { continue };
            match a.ask.use_ {
                Use::ManagedFieldsOnly => {
                    for m in docs.iter().filter_map(|d| d.metadata.as_ref()) {
                        if let (Some(uid), Some(mf)) = (&m.uid, &m.managed_fields) {
                            self.restored.insert(uid.clone(), RawManagedFields(mf.0.clone()));
                            restore.push(uid.clone());
                        }
                    }
                }
                Use::Objects => {
                    let full = a.ask.body == Body::Full;
                    for (di, doc) in docs.iter().enumerate() {
                        let Some(uid) = doc.metadata.as_ref().and_then(|m| m.uid.as_deref()) else {
                            continue;
                        };
                        let index = match self.slots.get(uid) {
                            None => None,
                            // a body read after the object's metadata takes its place
                            Some(s) if full && !s.full => s.index,
                            Some(_) => continue,
                        };
                        let object = self.object(doc);
                        let index = match (index, object) {
                            (Some(i), Some(o)) => {
                                round.place(base, i, o);
                                Some(i)
                            }
                            (None, Some(o)) => {
                                round.added.push(o);
                                self.objects += 1;
                                Some(self.objects - 1)
                            }
                            // (an invalid body read again leaves the object as it was)
                            (i, None) => i,
                        };
                        self.slots.insert(uid.to_string(), Slot { answer: ai, doc: di, full, index });
                    }
                }
            }
        }
        for uid in restore {
            let Some(s) = self.slots.get(&uid) else { continue };
            let Ok(docs) = &answers[s.answer].result else { continue };
            let doc = &docs[s.doc];
            if doc.metadata.as_ref().is_some_and(|m| m.managed_fields.is_none())
                && let (Some(i), Some(o)) = (s.index, self.object(doc))
            {
                round.place(base, i, o);
            }
        }
        self.taken = answers.len();
        round
    }

    /// The object of one document, with the managedFields read again for it.
    fn object(&self, doc: &RawDoc) -> Option<Object> {
        let mut doc = doc.clone();
        if let Some(m) = doc.metadata.as_mut()
            && m.managed_fields.is_none()
            && let Some(mf) = m.uid.as_ref().and_then(|u| self.restored.get(u))
        {
            m.managed_fields = Some(RawManagedFields(mf.0.clone()));
        }
        let mut f = Flattened::default();
        f.push(doc);
        f.objects.pop()
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use serde_json::json;

    use super::super::{Failure, ListType, assemble};
    use super::*;
    use crate::graph::{Graph, dump};
    use crate::source::live::ask::Ask;

    fn cms() -> ListType {
        crate::testing::list_type("", "v1", "configmaps", "ConfigMap", true)
    }

    /// One document: object `i` of a few, owned by uid `owner` (there are more uids than
    /// objects: some owners are never read), with a finalizer whose manager its managedFields
    /// name when it carries them.
    fn doc(i: usize, owner: usize, managed: bool) -> RawDoc {
        let mut meta = json!({"name": format!("n{i}"), "namespace": "labs", "uid": format!("u{i}"),
            "finalizers": ["x.io/f"],
            "ownerReferences": [{"apiVersion": "v1", "kind": "ConfigMap", "name": format!("n{owner}"),
                                 "uid": format!("u{owner}"), "controller": true}]});
        if managed {
            meta["managedFields"] = json!([{"manager": format!("op-{owner}"), "operation": "Update",
                "fieldsV1": {"f:metadata": {"f:finalizers": {"v:\"x.io/f\"": {}}}}}]);
        }
        serde_json::from_value(json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta})).expect("doc")
    }

    /// An answer: a list metadata-only (0), in full (1), managedFields read again (2), or a
    /// failure (3), of documents (object, owner, with managedFields).
    fn answer(how: usize, docs: &[(usize, usize, bool)]) -> Answered {
        let failed_in = format!("ns{}", docs.len());
        let docs = || docs.iter().map(|&(i, o, m)| doc(i, o, m)).collect();
        let (ask, result) = match how {
            0 => (Ask::list(&cms(), None, "t"), Ok(docs())),
            1 => (Ask::list(&cms(), Some("labs".into()), "t").full(), Ok(docs())),
            2 => (Ask::get(&cms(), Some("labs".into()), "n0", "t").for_managed_fields(), Ok(docs())),
            _ => (
                Ask::list(&cms(), Some(failed_in), "t"),
                Err(Failure::Status { code: 403, reason: String::new(), message: "no".into() }),
            ),
        };
        Answered { ask, result, managed_fields_dropped: false }
    }

    /// The graph as the read's snapshot makes it, its objects in whatever order (that order is
    /// `assemble`'s: in full first).
    fn sorted((mut objects, rest): (Vec<String>, Vec<String>)) -> (Vec<String>, Vec<String>) {
        objects.sort();
        (objects, rest)
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]
        #[test]
        fn rounds_taken_make_the_graph_of_the_read_snapshot(
            answers in prop::collection::vec(
                (0..4usize, prop::collection::vec((0..6usize, 0..8usize, any::<bool>()), 0..5)), 1..8),
            cuts in prop::collection::vec(0..8usize, 0..4),
        ) {
            let answers: Vec<Answered> = answers.iter().map(|(how, docs)| answer(*how, docs)).collect();
            let d = Discovery::default();
            let now = k8s_openapi::jiff::Timestamp::UNIX_EPOCH;
            let mut ends: Vec<usize> = cuts.into_iter().map(|c| c.min(answers.len())).collect();
            ends.push(answers.len());
            ends.sort_unstable();
            let mut so_far = SoFar::default();
            let mut g: Option<Graph> = None;
            for end in ends {
                let round = so_far.take(&d, &answers[..end]);
                prop_assert_eq!(so_far.taken(), end);
                match g.as_mut() {
                    Some(g) => g.grow(round.replaced, round.added, round.incomplete),
                    None => g = Some(Graph::build(round.into_snapshot(&d, now))),
                }
                let once = Graph::build(assemble(&d, answers[..end].to_vec(), now));
                prop_assert_eq!(sorted(dump(g.as_ref().expect("built"))), sorted(dump(&once)), "after {} answers", end);
            }
        }
    }
}

//! Streaming deserialization straight into a [`Flattened`]: a `List`'s items are validated
//! one by one as they are read, never collected, and the spec and status of kinds the
//! analysis does not read are skipped without being built. What a 1M-object file costs is
//! then its objects, not a tree of every value in it.

use std::fmt;

use serde::Deserializer;
use serde::de::{DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};

use super::{BODY_FIELDS, Body, Field, Flattened, RawDoc, RawValue, group_of, keeps_body};

/// One top-level value: an object (maybe a List) or an array of them.
///
/// With `consumed` (JSON from a slice only), a List's items are cut out as raw slices
/// and parsed in batches on every core, and `consumed` is called with the address range
/// of each batch parsed: a caller reading a mapped file releases it, so the file never
/// weighs in whole next to the objects built from it.
pub struct TopLevel<'a> {
    /// Where the objects and lists read go.
    pub flat: &'a mut Flattened,
    /// Called with each parsed batch's address range, when the input is a slice that may be
    /// released.
    pub consumed: Option<&'a Release<'a>>,
}

/// Called with the address range of items already parsed, which the caller may release.
pub type Release<'a> = dyn Fn(usize, usize) + Sync + 'a;

impl<'de> DeserializeSeed<'de> for TopLevel<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(DocOrSeq(self.flat, self.consumed))
    }
}

/// An error inside one item of a JSON List parsed apart (by the pipeline's workers): the
/// item's text and the error's line and column within it, so that the caller, which
/// holds the whole input, can say where in the file it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ItemError {
    /// The address of the item's first byte (within the caller's input).
    pub item_start: usize,
    /// The error's line within the item's text (1-based, as serde_json counts).
    pub line: usize,
    /// The error's column within that line (1-based, as serde_json counts).
    pub column: usize,
    /// serde_json's message, without its own position.
    pub message: String,
}

impl ItemError {
    /// The item's offset in `input`, which holds it.
    pub fn offset_in(&self, input: &[u8]) -> usize {
        self.item_start.saturating_sub(input.as_ptr() as usize).min(input.len())
    }
}

/// One document; a `List`'s items go to the same `Flattened` as they are read.
pub struct Doc<'a>(pub &'a mut Flattened);

impl<'de> DeserializeSeed<'de> for Doc<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(DocOrSeq(self.0, None))
    }
}

struct DocOrSeq<'a>(&'a mut Flattened, Option<&'a Release<'a>>);

impl<'de> Visitor<'de> for DocOrSeq<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a Kubernetes object, a List, or an array of objects")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element_seed(Doc(&mut *self.0))?.is_some() {}
        Ok(())
    }

    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let (flat, consumed) = (self.0, self.1);
        let mut doc = RawDoc::default();
        let mut text: Vec<(&'static str, Box<RawValue>)> = Vec::new();
        let mut had_items = false;
        while let Some(key) = map.next_key::<Field>()? {
            // the body of kinds the analysis does not read is skipped unbuilt; kubectl and
            // the API write apiVersion and kind first, so this is almost always known
            let wanted = || match (&doc.api_version, &doc.kind) {
                (Some(av), Some(k)) => keeps_body(group_of(av), k),
                _ => true,
            };
            match key {
                Field::ApiVersion => doc.api_version = map.next_value()?,
                Field::Kind => doc.kind = map.next_value()?,
                Field::Metadata => doc.metadata = map.next_value()?,
                Field::Items => {
                    had_items = true;
                    match consumed {
                        None => map.next_value_seed(Items(&mut *flat))?,
                        Some(release) => map.next_value_seed(Pipeline { flat: &mut *flat, release })?,
                    }
                }
                Field::GroupVersion => doc.group_version = map.next_value()?,
                Field::Resources => doc.resources = map.next_value()?,
                Field::CapturedAt => doc.captured_at = map.next_value()?,
                Field::CapturedContext => doc.captured_context = map.next_value()?,
                Field::CapturedNamespace => doc.captured_namespace = map.next_value()?,
                Field::CapturedServer => doc.captured_server = map.next_value()?,
                Field::ServerVersion => doc.server_version = map.next_value()?,
                Field::Incomplete => doc.incomplete = map.next_value()?,
                Field::Body(i) => {
                    if wanted() {
                        // kept as text: parsed only if some answer reads it
                        if let Some(raw) = map.next_value::<Option<Box<RawValue>>>()? {
                            text.push((BODY_FIELDS[i], raw));
                        }
                    } else {
                        map.next_value::<IgnoredAny>()?;
                    }
                }
                Field::Other => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        doc.body = Body::from_raw(text.iter().map(|(k, v)| (*k, &**v)));
        if had_items {
            // a list: its items are in already; keep what the list itself says
            doc.items = Some(Vec::new());
        }
        flat.push(doc);
        Ok(())
    }
}

/// Items parsed per batch, on every core: this thread cuts the List's items out of the
/// input (validating its syntax) while workers build the objects. Batches are put back in
/// file order as they come, so memory holds little beyond the objects themselves.
struct Pipeline<'a> {
    flat: &'a mut Flattened,
    release: &'a Release<'a>,
}

const BATCH: usize = 2048;

type Parsed = (usize, Result<Flattened, ItemError>);

/// Parses one batch of raw items; an error says which item and where in it.
fn parse_batch(items: &[&serde_json::value::RawValue], release: &Release<'_>) -> Result<Flattened, ItemError> {
    let mut flat = Flattened::default();
    for raw in items {
        let text = raw.get();
        let mut de = serde_json::Deserializer::from_str(text);
        Doc(&mut flat).deserialize(&mut de).map_err(|e| {
            let message = e.to_string();
            ItemError {
                item_start: text.as_ptr() as usize,
                line: e.line(),
                column: e.column(),
                message: message.split(" at line ").next().unwrap_or(&message).to_string(),
            }
        })?;
    }
    if let (Some(first), Some(last)) = (items.first(), items.last()) {
        release(first.get().as_ptr() as usize, last.get().as_ptr() as usize + last.get().len());
    }
    Ok(flat)
}

impl<'de> DeserializeSeed<'de> for Pipeline<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        let workers = std::thread::available_parallelism().map_or(1, |n| n.get());
        let release = self.release;
        let (work_tx, work_rx) =
            std::sync::mpsc::sync_channel::<(usize, Vec<&'de serde_json::value::RawValue>)>(workers * 2);
        let work_rx = std::sync::Mutex::new(work_rx);
        let (done_tx, done_rx) = std::sync::mpsc::channel::<Parsed>();
        std::thread::scope(|scope| {
            for _ in 0..workers {
                let (work_rx, done_tx) = (&work_rx, done_tx.clone());
                scope.spawn(move || {
                    loop {
                        let next = work_rx.lock().unwrap_or_else(|e| e.into_inner()).recv();
                        let Ok((seq, batch)) = next else { break };
                        if done_tx.send((seq, parse_batch(&batch, release))).is_err() {
                            break;
                        }
                    }
                });
            }
            drop(done_tx);
            let mut order =
                InOrder { flat: self.flat, next: 0, waiting: std::collections::BTreeMap::new(), error: None };
            let cut = d.deserialize_option(Cutter { work: work_tx, done: &done_rx, order: &mut order });
            // the work channel is closed (the cutter owned it): workers finish and hang up
            for parsed in done_rx.iter() {
                order.put(parsed);
            }
            cut?;
            match order.error.take() {
                Some(e) => {
                    let message = e.message.clone();
                    order.flat.item_error = Some(e);
                    Err(serde::de::Error::custom(message))
                }
                None => Ok(()),
            }
        })
    }
}

/// Parsed batches, appended in file order; the first error (in file order) is kept.
struct InOrder<'a> {
    flat: &'a mut Flattened,
    next: usize,
    waiting: std::collections::BTreeMap<usize, Result<Flattened, ItemError>>,
    error: Option<ItemError>,
}

impl InOrder<'_> {
    fn put(&mut self, (seq, parsed): Parsed) {
        self.waiting.insert(seq, parsed);
        while let Some(parsed) = self.waiting.remove(&self.next) {
            self.next += 1;
            match parsed {
                Ok(f) if self.error.is_none() => self.flat.append(f),
                Ok(_) => {}
                Err(e) => {
                    self.error.get_or_insert(e);
                }
            }
        }
    }
}

/// Cuts `items` (or `null`) into batches of raw items for the workers.
struct Cutter<'b, 'a, 'de> {
    work: std::sync::mpsc::SyncSender<(usize, Vec<&'de serde_json::value::RawValue>)>,
    done: &'b std::sync::mpsc::Receiver<Parsed>,
    order: &'b mut InOrder<'a>,
}

impl<'de> Visitor<'de> for Cutter<'_, '_, 'de> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a list of items")
    }

    fn visit_none<E>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_seq(self)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let mut sent = 0;
        let mut batch = Vec::with_capacity(BATCH);
        while let Some(raw) = seq.next_element::<&'de serde_json::value::RawValue>()? {
            batch.push(raw);
            if batch.len() == BATCH {
                let full = std::mem::replace(&mut batch, Vec::with_capacity(BATCH));
                if self.work.send((sent, full)).is_err() {
                    break;
                }
                sent += 1;
                // put back what is parsed already, so its memory is reused
                for parsed in self.done.try_iter() {
                    self.order.put(parsed);
                }
            }
        }
        if !batch.is_empty() {
            let _ = self.work.send((sent, batch));
        }
        Ok(())
    }
}

struct Items<'a>(&'a mut Flattened);

impl<'de> DeserializeSeed<'de> for Items<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(DocOrSeq(self.0, None))
    }
}

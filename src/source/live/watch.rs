//! Following reads (`--watch`): every read of an answer kept current by a WATCH of exactly
//! what it read (the same type, namespace, field and label selectors; a GET as a watch of its
//! one name, `fieldSelector=metadata.name=…`), so an answer can be judged again on each change
//! without listing anything again.
//!
//! What is read and watched is the read plan's: [`Kept::read`] runs a plan (a fresh one each
//! time the answer is judged again), answering each ask it has already answered from the kept,
//! current objects, and reading (then following) only the asks that are new — a dependent
//! that appeared, the Events of an object the answer now names. Asks the plan no longer makes
//! stop being followed.
//!
//! Each followed read is one task: a WATCH from the resourceVersion of its answer with
//! bookmarks (`allowWatchBookmarks=true`), resumed from the last resourceVersion seen when the
//! stream ends or breaks, relisted (the same list, once) when the server answers 410 Gone, with
//! a growing wait between failed attempts and at most [`MAX_FAILURES`] failures in a row, after
//! which the follower gives up and says why ([`Event::Failed`]). Streams are asked to end after
//! [`WATCH_SECONDS`] (the server's own timeout otherwise), as client-go's reflectors do, and are
//! then resumed.
//!
//! Read-only: a WATCH is a GET.

use std::time::Duration;

use futures::StreamExt;
use http_body_util::BodyExt;
use serde::Deserialize;

use crate::snapshot::raw::{JsonDoc, RawDoc};

use super::ask::{Answered, Ask, Body, Fetch, ReadPlan, Use};
use super::discovery::{Discovery, ListType};
use super::http::{Failure, Reader};
use super::list::{self, METADATA_ACCEPT, wants_body};
use super::{ReadOptions, Resume, Session};

/// Failed attempts in a row after which a follower gives up.
pub const MAX_FAILURES: u32 = 6;
/// Longest wait between attempts.
pub const MAX_BACKOFF: Duration = Duration::from_secs(5);
/// How long a watch is asked to last (`timeoutSeconds`) before it is resumed.
pub const WATCH_SECONDS: u64 = 300;
/// The most bytes one event line may take: etcd caps an object at 1.5 MiB; a line past this
/// is not an event.
pub const MAX_LINE: usize = 8 * 1024 * 1024;

/// What a follower reports about its read.
pub enum Event {
    /// An object was added or changed (`ADDED`, `MODIFIED`).
    Applied(RawDoc),
    /// An object was removed, or no longer matches the read's selectors (`DELETED`).
    Deleted(RawDoc),
    /// The history was gone (410): the read's objects as listed again.
    Relisted(Vec<RawDoc>),
    /// The follower gave up after [`MAX_FAILURES`] failures in a row.
    Failed(Failure),
}

/// Which follower reported.
pub type FollowerId = u64;

struct Entry {
    id: FollowerId,
    answered: Answered,
    task: Option<futures::future::AbortHandle>,
    used: bool,
}

impl Drop for Entry {
    fn drop(&mut self) {
        if let Some(t) = self.task.take() {
            t.abort();
        }
    }
}

/// The reads of an answer, kept current by their followers. The followers run while
/// [`Kept::next`] waits (on the caller's task: nothing is spawned), so they pause while the
/// answer is judged, and what came meanwhile waits in the connection.
pub struct Kept {
    entries: Vec<Entry>,
    next_id: FollowerId,
    tx: tokio::sync::mpsc::UnboundedSender<(FollowerId, Event)>,
    rx: tokio::sync::mpsc::UnboundedReceiver<(FollowerId, Event)>,
    running: futures::stream::FuturesUnordered<futures::future::LocalBoxFuture<'static, ()>>,
}

impl Default for Kept {
    fn default() -> Kept {
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        Kept { entries: Vec::new(), next_id: 0, tx, rx, running: Default::default() }
    }
}

impl Kept {
    /// Runs `plan`, round by round, answering what is kept from the kept objects and reading
    /// (then following) the rest; drops the followers of asks the plan no longer makes. Returns
    /// the answers in the plan's order, as [`Session::read`] would have read them now.
    pub async fn read<P: ReadPlan>(
        &mut self,
        session: &Session,
        d: &Discovery,
        o: &ReadOptions<'_>,
        plan: &mut P,
    ) -> Vec<Answered> {
        for e in &mut self.entries {
            e.used = false;
        }
        let mut answers: Vec<Answered> = Vec::new();
        loop {
            let asks = plan.next(d, &answers);
            if asks.is_empty() {
                break;
            }
            let mut round: Vec<Option<Answered>> = Vec::with_capacity(asks.len());
            let mut new = Vec::new();
            for (i, ask) in asks.into_iter().enumerate() {
                match self.entries.iter_mut().find(|e| !e.used && e.answered.ask == ask) {
                    Some(e) => {
                        e.used = true;
                        round.push(Some(e.answered.clone()));
                    }
                    None => {
                        round.push(None);
                        new.push((i, ask));
                    }
                }
            }
            let read: Vec<(usize, (Answered, Resume))> = futures::stream::iter(new)
                .map(|(i, ask)| async move { (i, session.execute_versioned(d, ask).await) })
                .buffered(o.concurrency.max(1))
                .collect()
                .await;
            for (i, (answered, resume)) in read {
                round[i] = Some(answered.clone());
                self.follow(session, answered, resume);
            }
            answers.extend(round.into_iter().flatten());
        }
        self.entries.retain(|e| e.used);
        answers
    }

    /// Keeps an answer, and follows it where it can be followed: objects read (a GET that
    /// found nothing too: its object may come), never a read only for managedFields.
    fn follow(&mut self, session: &Session, answered: Answered, resume: Resume) {
        let id = self.next_id;
        self.next_id += 1;
        let followed = answered.ask.use_ == Use::Objects
            && match &answered.result {
                Ok(_) => true,
                Err(Failure::Status { code: 404, .. }) => matches!(answered.ask.fetch, Fetch::Get(_)),
                Err(_) => false,
            };
        let task = followed.then(|| {
            use futures::FutureExt;
            // at the version that answered: the one asked may be the one that cannot
            let ask = Ask { kind: resume.kind, ..answered.ask.clone() };
            let (reader, tx, version) = (session.reader.clone(), self.tx.clone(), resume.version);
            let (handle, registration) = futures::future::AbortHandle::new_pair();
            let run = futures::future::Abortable::new(follower(reader, ask, version, id, tx), registration);
            self.running.push(run.map(|_| ()).boxed_local());
            handle
        });
        self.entries.push(Entry { id, answered, task, used: true });
    }

    /// How many reads are followed (one WATCH stream each).
    pub fn followed(&self) -> usize {
        self.entries.iter().filter(|e| e.task.is_some()).count()
    }

    /// The next report of any follower (waits for one, running the followers meanwhile).
    pub async fn next(&mut self) -> (FollowerId, Event) {
        loop {
            if let Ok(m) = self.rx.try_recv() {
                return m;
            }
            tokio::select! {
                m = self.rx.recv() => if let Some(m) = m { return m },
                Some(()) = self.running.next(), if !self.running.is_empty() => {}
            }
        }
    }

    /// Applies a report to the objects kept: whether they changed, or the failure a follower
    /// gave up on (with the read it was following). A report from a follower since dropped
    /// changes nothing.
    pub fn apply(&mut self, id: FollowerId, event: Event) -> Result<bool, Box<(Ask, Failure)>> {
        let Some(e) = self.entries.iter_mut().find(|e| e.id == id) else { return Ok(false) };
        let only = match &e.answered.ask.fetch {
            Fetch::List { only: Some(o), .. } => Some(o.clone()),
            _ => None,
        };
        let kept = |d: &RawDoc| {
            only.as_ref().is_none_or(|o| {
                d.metadata
                    .as_ref()
                    .is_some_and(|m| m.name.as_ref().is_some_and(|n| o.contains(&(m.namespace.clone(), n.clone()))))
            })
        };
        if e.answered.result.is_err() && !matches!(event, Event::Failed(_)) {
            // a GET that found nothing: its object came
            e.answered.result = Ok(Vec::new());
        }
        let Ok(docs) = &mut e.answered.result else { return Ok(false) };
        match event {
            Event::Applied(d) if kept(&d) => {
                match docs.iter().position(|x| same(x, &d)) {
                    Some(i) => docs[i] = d,
                    None => docs.push(d),
                }
                Ok(true)
            }
            Event::Applied(_) => Ok(false),
            Event::Deleted(d) => {
                let before = docs.len();
                docs.retain(|x| !same(x, &d));
                Ok(docs.len() != before)
            }
            Event::Relisted(new) => {
                *docs = new.into_iter().filter(|d| kept(d)).collect();
                Ok(true)
            }
            Event::Failed(f) => Err(Box::new((e.answered.ask.clone(), f))),
        }
    }
}

/// The same object: by uid, else by namespace and name.
fn same(a: &RawDoc, b: &RawDoc) -> bool {
    let (Some(a), Some(b)) = (&a.metadata, &b.metadata) else { return false };
    match (&a.uid, &b.uid) {
        (Some(x), Some(y)) => x == y,
        _ => a.namespace == b.namespace && a.name == b.name,
    }
}

/// How a stream ended.
enum End {
    /// The server ended it (its timeout, or ours): resume.
    Closed { delivered: bool },
    /// 410 Gone: relist.
    Gone,
    /// It failed.
    Failed(Failure),
}

/// `{"type": …, "object": …}`.
#[derive(Deserialize)]
struct Line {
    #[serde(rename = "type")]
    kind: String,
    object: Box<serde_json::value::RawValue>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Status {
    code: u16,
    reason: String,
    message: String,
}

/// The path and query of a WATCH of what `ask` reads, from `version`.
pub fn watch_path(ask: &Ask, version: Option<&str>) -> String {
    let mut q = form_urlencoded::Serializer::new(String::new());
    q.append_pair("watch", "1");
    q.append_pair("allowWatchBookmarks", "true");
    // spread over a minute, as reflectors spread theirs, so that streams do not end together
    let jitter = super::http::backoff(1).as_millis() as u64 % 60;
    q.append_pair("timeoutSeconds", &(WATCH_SECONDS + jitter).to_string());
    if let Some(v) = version {
        q.append_pair("resourceVersion", v);
    }
    let (field, label) = selectors(ask);
    if let Some(f) = &field {
        q.append_pair("fieldSelector", f);
    }
    if let Some(l) = &label {
        q.append_pair("labelSelector", l);
    }
    format!("{}?{}", ask.kind.path(ask.namespace.as_deref()), q.finish())
}

/// The field and label selectors of a read (a GET: its name).
fn selectors(ask: &Ask) -> (Option<String>, Option<String>) {
    match &ask.fetch {
        Fetch::Get(name) => (Some(format!("metadata.name={name}")), None),
        Fetch::List { label_selector, .. } => (ask.fetch.field_selector(), label_selector.clone()),
    }
}

fn full(ask: &Ask) -> bool {
    ask.body == Body::Full && wants_body(&ask.kind)
}

/// Follows one read until dropped, or until it gives up.
async fn follower(
    reader: Reader,
    ask: Ask,
    mut version: Option<String>,
    id: FollowerId,
    tx: tokio::sync::mpsc::UnboundedSender<(FollowerId, Event)>,
) {
    let mut failures = 0u32;
    loop {
        let end = stream_once(&reader, &ask, &mut version, &mut |e| tx.send((id, e)).is_ok()).await;
        let failure = match end {
            End::Closed { delivered: true } => {
                failures = 0;
                continue;
            }
            // ended at once with nothing: not a hot loop, a failure
            End::Closed { delivered: false } => None,
            End::Gone => match relist(&reader, &ask).await {
                Ok((docs, v)) => {
                    version = v;
                    if tx.send((id, Event::Relisted(docs))).is_err() {
                        return;
                    }
                    failures = 0;
                    continue;
                }
                Err(f) => Some(f),
            },
            End::Failed(f) => Some(f),
        };
        failures += 1;
        if failures >= MAX_FAILURES {
            let f = failure.unwrap_or(Failure::Decode("the server ends every watch at once".into()));
            let _ = tx.send((id, Event::Failed(f)));
            return;
        }
        let wait = super::http::backoff(failures).min(MAX_BACKOFF);
        tokio::time::sleep(wait).await;
    }
}

/// The read listed again (after a 410), and the resourceVersion to watch from.
async fn relist(reader: &Reader, ask: &Ask) -> Result<(Vec<RawDoc>, Option<String>), Failure> {
    let (field, label) = selectors(ask);
    let selectors = list::Selectors { field: field.as_deref(), label: label.as_deref() };
    let l = list::list(reader, &ask.kind, ask.namespace.as_deref(), ask.body == Body::Full, false, selectors).await?;
    Ok((l.docs, l.resource_version))
}

/// One WATCH stream, until it ends; `version` follows the events and bookmarks.
async fn stream_once(
    reader: &Reader,
    ask: &Ask,
    version: &mut Option<String>,
    report: &mut impl FnMut(Event) -> bool,
) -> End {
    let accept = if full(ask) { list::JSON } else { METADATA_ACCEPT };
    let mut body = match reader.stream(&watch_path(ask, version.as_deref()), accept).await {
        Ok(b) => b,
        Err(Failure::Status { code: 410, .. }) => return End::Gone,
        Err(f) => return End::Failed(f),
    };
    let mut buf: Vec<u8> = Vec::new();
    let mut delivered = false;
    while let Some(frame) = body.frame().await {
        let data = match frame {
            Ok(f) => match f.into_data() {
                Ok(d) => d,
                Err(_) => continue,
            },
            // a broken stream: resumed from the last version, as a closed one
            Err(_) => return End::Closed { delivered },
        };
        buf.extend_from_slice(&data);
        while let Some(nl) = buf.iter().position(|&b| b == b'\n') {
            let line: Vec<u8> = buf.drain(..=nl).collect();
            if line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            match event(&ask.kind, &line) {
                Ok(Parsed::Event(e, v)) => {
                    delivered = true;
                    if v.is_some() {
                        *version = v;
                    }
                    if !report(*e) {
                        return End::Closed { delivered };
                    }
                }
                Ok(Parsed::Bookmark(v)) => {
                    delivered = true;
                    if v.is_some() {
                        *version = v;
                    }
                }
                Ok(Parsed::Gone) => return End::Gone,
                Err(f) => return End::Failed(f),
            }
        }
        if buf.len() > MAX_LINE {
            return End::Failed(Failure::TooLarge(MAX_LINE as u64));
        }
    }
    End::Closed { delivered }
}

enum Parsed {
    Event(Box<Event>, Option<String>),
    Bookmark(Option<String>),
    Gone,
}

/// One event line.
fn event(t: &ListType, line: &[u8]) -> Result<Parsed, Failure> {
    let decode = |e: serde_json::Error| Failure::Decode(e.to_string());
    let l: Line = serde_json::from_slice(line).map_err(decode)?;
    let doc = || -> Result<RawDoc, Failure> {
        let JsonDoc(d) = serde_json::from_str(l.object.get()).map_err(decode)?;
        Ok(list::stamp(d, t))
    };
    let version = |d: &RawDoc| d.metadata.as_ref().and_then(|m| m.resource_version.clone());
    Ok(match l.kind.as_str() {
        "ADDED" | "MODIFIED" => {
            let d = doc()?;
            let v = version(&d);
            Parsed::Event(Box::new(Event::Applied(d)), v)
        }
        "DELETED" => {
            let d = doc()?;
            let v = version(&d);
            Parsed::Event(Box::new(Event::Deleted(d)), v)
        }
        "BOOKMARK" => Parsed::Bookmark(version(&doc()?)),
        "ERROR" => {
            let s: Status = serde_json::from_str(l.object.get()).map_err(decode)?;
            if s.code == 410 {
                Parsed::Gone
            } else {
                return Err(Failure::Status { code: s.code, reason: s.reason, message: s.message });
            }
        }
        other => return Err(Failure::Decode(format!("unknown watch event type {other:?}"))),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t() -> ListType {
        ListType {
            group: String::new(),
            version: "v1".into(),
            plural: "pods".into(),
            kind: "Pod".into(),
            namespaced: true,
        }
    }

    #[test]
    fn a_watch_asks_for_what_its_read_read_from_where_it_was() {
        let get = Ask::get(&t(), Some("labs".into()), "web-0", "t");
        let p = watch_path(&get, Some("42"));
        assert!(p.starts_with("/api/v1/namespaces/labs/pods?watch=1&allowWatchBookmarks=true&timeoutSeconds="), "{p}");
        assert!(p.ends_with("&resourceVersion=42&fieldSelector=metadata.name%3Dweb-0"), "{p}");
        let events = Ask::list(&t(), Some("labs".into()), "t").selecting("involvedObject.uid=u1".into());
        assert!(watch_path(&events, None).ends_with("&fieldSelector=involvedObject.uid%3Du1"));
        let services = Ask::list(&t(), None, "t").labelled("kubernetes.io/service-name=hook".into());
        let p = watch_path(&services, Some("7"));
        assert!(
            p.starts_with("/api/v1/pods?")
                && p.ends_with("&resourceVersion=7&labelSelector=kubernetes.io%2Fservice-name%3Dhook")
        );
    }

    #[test]
    fn event_lines_become_events_bookmarks_or_gone() {
        let line = br#"{"type":"MODIFIED","object":{"metadata":{"name":"a","namespace":"labs","uid":"u","resourceVersion":"9"}}}"#;
        let Ok(Parsed::Event(e, Some(v))) = event(&t(), line) else { panic!("not an event") };
        let Event::Applied(d) = *e else { panic!("not applied") };
        assert_eq!((d.kind.as_deref(), v.as_str()), (Some("Pod"), "9"));
        let line =
            br#"{"type":"BOOKMARK","object":{"kind":"Pod","apiVersion":"v1","metadata":{"resourceVersion":"12"}}}"#;
        assert!(matches!(event(&t(), line), Ok(Parsed::Bookmark(Some(v))) if v == "12"));
        let line = br#"{"type":"ERROR","object":{"kind":"Status","code":410,"reason":"Expired"}}"#;
        assert!(matches!(event(&t(), line), Ok(Parsed::Gone)));
        let line = br#"{"type":"ERROR","object":{"kind":"Status","code":500,"message":"boom"}}"#;
        assert!(matches!(event(&t(), line), Err(Failure::Status { code: 500, .. })));
        assert!(event(&t(), br#"{"type":"SURPRISE","object":{}}"#).is_err());
    }
}

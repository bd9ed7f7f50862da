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
//! stream ends or breaks, relisted (the same list) when the server answers 410 Gone, paced as
//! client-go's reflector paces it and within a bucket of every follower's attempts, giving up
//! after a bounded time of failing ([`pace`]), which it says ([`Event::Failed`]). Streams are
//! asked to end after [`WATCH_SECONDS`] (the server's own timeout otherwise), as client-go's
//! reflectors do, and are then resumed. Each event is checked against its read
//! ([`fits::foreign`]) and what is kept of it charged to the run's memory budget.
//!
//! Read-only: a WATCH is a GET.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;
use std::time::{Duration, Instant};

use futures::StreamExt;
use http_body_util::BodyExt;
use serde::Deserialize;

use crate::snapshot::raw::{JsonDoc, RawDoc};

use super::ask::{Answered, Ask, Body, Fetch, Follow, ReadPlan, Use};
use super::discovery::Discovery;
use super::http::{Charge, Failure, Reader};
use super::list::{self, METADATA_ACCEPT, wants_body};
use super::{ReadOptions, Resume, Session, fits, pace};

/// How long a watch is asked to last (`timeoutSeconds`) before it is resumed.
pub const WATCH_SECONDS: u64 = 300;
/// The most bytes one event line may take: etcd caps an object at 1.5 MiB; a line past this
/// is not an event.
pub const MAX_LINE: usize = 8 * 1024 * 1024;

/// What a follower reports about its read.
pub enum Event {
    /// An object was added or changed (`ADDED`, `MODIFIED`), with the part of the run's memory
    /// budget it holds while kept.
    Applied(RawDoc, Charge),
    /// An object was removed, or no longer matches the read's selectors (`DELETED`).
    Deleted(RawDoc),
    /// The history was gone (410): the read's objects as listed again.
    Relisted(Vec<RawDoc>),
    /// An event about something the read did not ask for (another kind, namespace, name, or
    /// an object its selectors do not select), ignored: what it was.
    Ignored(String),
    /// The follower has been failing for a while (said once, until it recovers); it goes on.
    Failing {
        /// The last failure.
        problem: String,
        /// Since the first failure after the last healthy stream.
        failing_for: Duration,
    },
    /// A follower that was [`Event::Failing`] has a healthy stream again.
    Recovered,
    /// Its stream opened (`true`), or ended and is being resumed (`false`): between the two
    /// what is kept of the read may be behind.
    Streaming(bool),
    /// The follower gave up (see [`pace::Trouble`]): why.
    Failed(String),
}

/// Which follower reported.
pub type FollowerId = u64;

struct Entry {
    id: FollowerId,
    answered: Answered,
    task: Option<futures::future::AbortHandle>,
    used: bool,
    /// The budget held by the objects events brought, by [`key`].
    held: HashMap<String, Charge>,
}

impl Drop for Entry {
    fn drop(&mut self) {
        if let Some(t) = self.task.take() {
            t.abort();
        }
    }
}

/// Something a watch says beside its answers.
pub enum Note {
    /// A followed read keeps failing (it is retried with backoff).
    Failing {
        /// The read, as `kind (why)`.
        read: String,
        /// Its last failure.
        problem: String,
        /// For how long.
        failing_for: Duration,
    },
    /// It works again.
    Recovered {
        /// The read.
        read: String,
    },
    /// The first event ignored as not of what was asked.
    Ignored {
        /// The read.
        read: String,
        /// What the event was about.
        what: String,
    },
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
    /// Every follower's attempts after their first, together.
    bucket: Rc<RefCell<pace::Bucket>>,
    /// Events ignored as not of what was asked.
    ignored: u64,
    notes: Vec<Note>,
    /// Followers whose stream ended and is not open again yet.
    behind: std::collections::BTreeSet<FollowerId>,
}

impl Default for Kept {
    fn default() -> Kept {
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        Kept {
            entries: Vec::new(),
            next_id: 0,
            tx,
            rx,
            running: Default::default(),
            bucket: Rc::new(RefCell::new(pace::Bucket::new(std::time::Instant::now()))),
            ignored: 0,
            notes: Vec::new(),
            behind: Default::default(),
        }
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
            let to = Reporter { id, tx: self.tx.clone() };
            let f = Follower { reader: session.reader.clone(), ask, bucket: self.bucket.clone() };
            let (handle, registration) = futures::future::AbortHandle::new_pair();
            let run = futures::future::Abortable::new(f.run(resume.version, to), registration);
            self.running.push(run.map(|_| ()).boxed_local());
            handle
        });
        self.entries.push(Entry { id, answered, task, used: true, held: HashMap::new() });
    }

    /// How many reads are followed (one WATCH stream each).
    pub fn followed(&self) -> usize {
        self.entries.iter().filter(|e| e.task.is_some()).count()
    }

    /// How many followed reads are being resumed (what is kept of them may be behind).
    pub fn behind(&self) -> usize {
        self.entries.iter().filter(|e| self.behind.contains(&e.id)).count()
    }

    /// Events ignored so far as not of what their watch asked for.
    pub fn ignored(&self) -> u64 {
        self.ignored
    }

    /// What is to be said beside the answers since the last call.
    pub fn notes(&mut self) -> Vec<Note> {
        std::mem::take(&mut self.notes)
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

    /// Applies a report to the objects kept: whether they changed (never, for a read followed
    /// quietly: [`Follow::Quietly`], kept for the next judging), or why a follower gave up
    /// (with the read it was following). A report from a follower since dropped changes
    /// nothing.
    pub fn apply(&mut self, id: FollowerId, event: Event) -> Result<bool, Box<(Ask, String)>> {
        let Some(e) = self.entries.iter_mut().find(|e| e.id == id) else { return Ok(false) };
        let read = || format!("{} ({})", e.answered.ask.kind.qualified(), e.answered.ask.why);
        match event {
            Event::Ignored(what) => {
                self.ignored += 1;
                if self.ignored == 1 {
                    self.notes.push(Note::Ignored { read: read(), what });
                }
                return Ok(false);
            }
            Event::Failing { problem, failing_for } => {
                self.notes.push(Note::Failing { read: read(), problem, failing_for });
                return Ok(false);
            }
            Event::Recovered => {
                self.notes.push(Note::Recovered { read: read() });
                return Ok(false);
            }
            Event::Streaming(open) => {
                if open {
                    self.behind.remove(&id);
                } else {
                    self.behind.insert(id);
                }
                return Ok(false);
            }
            Event::Failed(why) => return Err(Box::new((e.answered.ask.clone(), why))),
            _ => {}
        }
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
        if e.answered.result.is_err() {
            // a GET that found nothing: its object came
            e.answered.result = Ok(Vec::new());
        }
        let quiet = e.answered.ask.follow == Follow::Quietly;
        let Ok(docs) = &mut e.answered.result else { return Ok(false) };
        let changed = match event {
            Event::Applied(d, charge) if kept(&d) => {
                // the object's earlier state, if an event brought it, gives its part back
                e.held.insert(key(&d), charge);
                match docs.iter().position(|x| same(x, &d)) {
                    Some(i) => docs[i] = d,
                    None => docs.push(d),
                }
                true
            }
            Event::Applied(..) => false,
            Event::Deleted(d) => {
                let before = docs.len();
                docs.retain(|x| !same(x, &d));
                e.held.remove(&key(&d));
                docs.len() != before
            }
            Event::Relisted(new) => {
                *docs = new.into_iter().filter(|d| kept(d)).collect();
                e.held.clear();
                true
            }
            _ => false,
        };
        Ok(changed && !quiet)
    }
}

/// The same object: by uid where either has one (an event without one is not the object
/// kept with one), else by namespace and name.
fn same(a: &RawDoc, b: &RawDoc) -> bool {
    let (Some(a), Some(b)) = (&a.metadata, &b.metadata) else { return false };
    match (&a.uid, &b.uid) {
        (None, None) => a.namespace == b.namespace && a.name == b.name,
        (x, y) => x == y,
    }
}

/// What an object's held budget is kept under: its uid, else its namespace and name.
fn key(d: &RawDoc) -> String {
    let Some(m) = &d.metadata else { return String::new() };
    match &m.uid {
        Some(u) => u.clone(),
        None => format!("{}/{}", m.namespace.as_deref().unwrap_or(""), m.name.as_deref().unwrap_or("")),
    }
}

/// How a stream ended.
enum End {
    /// The server ended it (its timeout, or ours), or it broke: resume.
    Closed,
    /// 410 Gone: relist.
    Gone,
    /// It failed.
    Failed(Failure),
    /// Nobody listens any more.
    Dropped,
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

/// Where a follower sends its reports.
struct Reporter {
    id: FollowerId,
    tx: tokio::sync::mpsc::UnboundedSender<(FollowerId, Event)>,
}

impl Reporter {
    /// `false` once nobody listens.
    fn send(&self, e: Event) -> bool {
        self.tx.send((self.id, e)).is_ok()
    }
}

/// One followed read.
struct Follower {
    reader: Reader,
    ask: Ask,
    bucket: Rc<RefCell<pace::Bucket>>,
}

impl Follower {
    /// Follows the read until dropped, or until it gives up: WATCH from `version`, resumed at
    /// once after a healthy stream, else after a backoff (a relist first after 410 Gone), every
    /// attempt after the first within the bucket of every follower's (see [`pace`]).
    async fn run(self, mut version: Option<String>, to: Reporter) {
        let mut backoff = pace::Backoff::default();
        let mut trouble = pace::Trouble::default();
        let mut relist_due = false;
        // the first attempt, and the first again after a healthy stream, go at once and outside
        // the bucket: a stream dropped once (a server restarting, a proxy's idle timeout) is
        // resumed as client-go's reflector resumes it, and every follower resumes together
        let mut free = true;
        loop {
            if !free {
                let wait = self.bucket.borrow_mut().take(Instant::now());
                if !wait.is_zero() {
                    tokio::time::sleep(wait).await;
                }
            }
            let started = Instant::now();
            let problem = if relist_due {
                match relist(&self.reader, &self.ask).await {
                    Ok((docs, v)) => {
                        version = v;
                        relist_due = false;
                        if !to.send(Event::Relisted(docs)) {
                            return;
                        }
                        // the watch after it goes as the relist went
                        continue;
                    }
                    Err(f) => pace::Problem::Failed(f),
                }
            } else {
                let end = stream_once(&self.reader, &self.ask, &mut version, &to).await;
                if !matches!(end, End::Dropped) && !to.send(Event::Streaming(false)) {
                    return;
                }
                match end {
                    End::Dropped => return,
                    End::Closed if started.elapsed() >= pace::HEALTHY => {
                        backoff.reset();
                        free = true;
                        if trouble.clear() && !to.send(Event::Recovered) {
                            return;
                        }
                        continue;
                    }
                    End::Closed => pace::Problem::EndedEarly { after: started.elapsed() },
                    End::Gone => {
                        relist_due = true;
                        pace::Problem::Expired
                    }
                    End::Failed(f) => pace::Problem::Failed(f),
                }
            };
            let now = Instant::now();
            let first_problem = trouble.is_clear();
            match trouble.record(now, &problem) {
                pace::Next::GiveUp => {
                    let _ = to.send(Event::Failed(problem.describe()));
                    return;
                }
                pace::Next::Warn { failing_for } => {
                    if !to.send(Event::Failing { problem: problem.describe(), failing_for }) {
                        return;
                    }
                }
                pace::Next::Retry => {}
            }
            // the first problem after a healthy stream is asked again at once; the rest wait
            free = first_problem && problem.lasting() == pace::Lasting::Passing;
            if !free {
                tokio::time::sleep(backoff.next(now, pace::random01())).await;
            }
        }
    }
}

/// The read listed again (after a 410), and the resourceVersion to watch from.
async fn relist(reader: &Reader, ask: &Ask) -> Result<(Vec<RawDoc>, Option<String>), Failure> {
    let (field, label) = selectors(ask);
    let selectors = list::Selectors { field: field.as_deref(), label: label.as_deref() };
    let l = list::list(reader, &ask.kind, ask.namespace.as_deref(), ask.body == Body::Full, false, selectors).await?;
    Ok((l.docs, l.resource_version))
}

/// One WATCH stream, until it ends; `version` follows the events and bookmarks. Each event's
/// object is checked against the read ([`fits::foreign`]) and charged to the run's memory
/// budget while kept.
async fn stream_once(reader: &Reader, ask: &Ask, version: &mut Option<String>, to: &Reporter) -> End {
    let metadata = !full(ask);
    let accept = if metadata { METADATA_ACCEPT } else { list::JSON };
    let mut body = match reader.stream(&watch_path(ask, version.as_deref()), accept).await {
        Ok(b) => {
            if !to.send(Event::Streaming(true)) {
                return End::Dropped;
            }
            b
        }
        Err(Failure::Status { code: 410, .. }) => return End::Gone,
        Err(f) => return End::Failed(f),
    };
    let mut buf: Vec<u8> = Vec::new();
    while let Some(frame) = body.frame().await {
        let data = match frame {
            Ok(f) => match f.into_data() {
                Ok(d) => d,
                Err(_) => continue,
            },
            // a broken stream: resumed from the last version, as a closed one
            Err(_) => return End::Closed,
        };
        buf.extend_from_slice(&data);
        while let Some(nl) = buf.iter().position(|&b| b == b'\n') {
            let line: Vec<u8> = buf.drain(..=nl).collect();
            if line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            let report = match event(ask, metadata, &line) {
                Ok(Parsed::Change { doc, deleted, version: v }) => {
                    if v.is_some() {
                        *version = v;
                    }
                    if deleted {
                        Event::Deleted(*doc)
                    } else {
                        match reader.charge(line.len() as u64) {
                            Ok(charge) => Event::Applied(*doc, charge),
                            Err(f) => return End::Failed(f),
                        }
                    }
                }
                Ok(Parsed::Bookmark(v)) => {
                    if v.is_some() {
                        *version = v;
                    }
                    continue;
                }
                Ok(Parsed::Foreign(what)) => Event::Ignored(what),
                Ok(Parsed::Gone) => return End::Gone,
                Err(f) => return End::Failed(f),
            };
            if !to.send(report) {
                return End::Dropped;
            }
        }
        if buf.len() > MAX_LINE {
            return End::Failed(Failure::TooLarge(MAX_LINE as u64));
        }
    }
    End::Closed
}

enum Parsed {
    /// An object added or changed, or (`deleted`) removed; the resourceVersion it is at.
    Change {
        doc: Box<RawDoc>,
        deleted: bool,
        version: Option<String>,
    },
    Bookmark(Option<String>),
    /// An event about something not asked for: what it was about.
    Foreign(String),
    Gone,
}

/// One event line of the watch of `ask` (`metadata`: metadata-only objects asked for).
fn event(ask: &Ask, metadata: bool, line: &[u8]) -> Result<Parsed, Failure> {
    let decode = |e: serde_json::Error| Failure::Decode(e.to_string());
    let l: Line = serde_json::from_slice(line).map_err(decode)?;
    let doc = || -> Result<RawDoc, Failure> {
        let JsonDoc(d) = serde_json::from_str(l.object.get()).map_err(decode)?;
        Ok(d)
    };
    let version = |d: &RawDoc| d.metadata.as_ref().and_then(|m| m.resource_version.clone());
    let change = |deleted: bool| -> Result<Parsed, Failure> {
        let d = doc()?;
        if let Some(what) = fits::foreign(ask, metadata, &d, &l.object, deleted) {
            return Ok(Parsed::Foreign(what));
        }
        let d = list::stamp(d, &ask.kind);
        Ok(Parsed::Change { version: version(&d), doc: Box::new(d), deleted })
    };
    Ok(match l.kind.as_str() {
        "ADDED" | "MODIFIED" => change(false)?,
        "DELETED" => change(true)?,
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
    use crate::source::live::discovery::ListType;

    fn t() -> ListType {
        crate::testing::list_type("", "v1", "pods", "Pod", true)
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
    fn event_lines_become_events_bookmarks_or_gone_and_foreign_ones_are_told_apart() {
        let pods = Ask::list(&t(), Some("labs".into()), "t");
        let line = br#"{"type":"MODIFIED","object":{"metadata":{"name":"a","namespace":"labs","uid":"u","resourceVersion":"9"}}}"#;
        let Ok(Parsed::Change { doc, deleted: false, version: Some(v) }) = event(&pods, true, line) else {
            panic!("not a change")
        };
        assert_eq!((doc.kind.as_deref(), v.as_str()), (Some("Pod"), "9"));
        let line =
            br#"{"type":"BOOKMARK","object":{"kind":"Pod","apiVersion":"v1","metadata":{"resourceVersion":"12"}}}"#;
        assert!(matches!(event(&pods, true, line), Ok(Parsed::Bookmark(Some(v))) if v == "12"));
        let line = br#"{"type":"ERROR","object":{"kind":"Status","code":410,"reason":"Expired"}}"#;
        assert!(matches!(event(&pods, true, line), Ok(Parsed::Gone)));
        let line = br#"{"type":"ERROR","object":{"kind":"Status","code":500,"message":"boom"}}"#;
        assert!(matches!(event(&pods, true, line), Err(Failure::Status { code: 500, .. })));
        assert!(event(&pods, true, br#"{"type":"SURPRISE","object":{}}"#).is_err());
        // a Site's DELETED on the pods' watch, or a pod of another namespace: ignored
        let site = br#"{"type":"DELETED","object":{"kind":"Site","apiVersion":"labhub.io/v1","metadata":{"name":"a","namespace":"labs","uid":"s"}}}"#;
        assert!(matches!(event(&pods, true, site), Ok(Parsed::Foreign(w)) if w == "a Site (labhub.io/v1)"));
        let elsewhere = br#"{"type":"ADDED","object":{"metadata":{"name":"a","namespace":"prod","uid":"p"}}}"#;
        assert!(matches!(event(&pods, true, elsewhere), Ok(Parsed::Foreign(_))));
    }

    fn node(name: &str, ready: &str) -> RawDoc {
        let JsonDoc(d) = serde_json::from_value(serde_json::json!({"metadata": {"name": name, "uid": name},
            "status": {"conditions": [{"type": "Ready", "status": ready}]}}))
        .unwrap();
        d
    }

    /// Kept with one read of `ask` holding `docs`, not followed (no task).
    fn kept(ask: Ask, docs: Vec<RawDoc>) -> Kept {
        let mut k = Kept::default();
        let answered = Answered { ask, result: Ok(docs), managed_fields_dropped: false };
        k.entries.push(Entry { id: 0, answered, task: None, used: true, held: HashMap::new() });
        k
    }

    #[test]
    fn a_read_followed_quietly_keeps_what_changed_without_calling_it_a_change() {
        let nodes = Ask::list(&t(), None, "t").full();
        for (ask, loud) in [(nodes.clone(), true), (nodes.quietly(), false)] {
            let mut k = kept(ask, vec![node("n1", "True")]);
            assert_eq!(k.apply(0, Event::Relisted(vec![node("n1", "False")])).ok(), Some(loud));
            let kept_now = k.entries[0].answered.result.as_ref().ok().unwrap();
            assert_eq!(kept_now[0].body_field("status").unwrap()["conditions"][0]["status"], "False");
            assert_eq!(k.apply(0, Event::Deleted(node("n1", "False"))).ok(), Some(loud));
            assert!(k.entries[0].answered.result.as_ref().is_ok_and(|d| d.is_empty()));
        }
    }

    #[test]
    fn an_event_without_a_uid_is_not_the_object_kept_with_one() {
        let doc = |uid: Option<&str>| {
            let JsonDoc(d) =
                serde_json::from_value(serde_json::json!({"metadata": {"name": "a", "namespace": "labs", "uid": uid}}))
                    .unwrap();
            d
        };
        assert!(same(&doc(Some("u")), &doc(Some("u"))));
        assert!(!same(&doc(Some("u")), &doc(None)));
        assert!(!same(&doc(Some("u")), &doc(Some("v"))));
        assert!(same(&doc(None), &doc(None)));
    }
}

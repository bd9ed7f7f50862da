//! An Event object as the analysis reads it, whichever API wrote it (core/v1 or
//! events.k8s.io/v1): one reader for every use of Events (evidence, denials, refusals).

use k8s_openapi::jiff::Timestamp;
use serde_json::Value;

use super::{Object, Uid};

/// One Event, as the answer shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Event {
    /// `Warning` or `Normal` (as the event says).
    pub type_: String,
    /// The Event's `reason` (CamelCase; what a check matches on).
    pub reason: String,
    /// The Event's `message` (core/v1) or `note` (events.k8s.io/v1): quoted, never matched.
    pub message: String,
    /// How many times it was seen (`count`, `series.count`, else 1).
    pub count: i64,
    /// When it was last seen: `series.lastObservedTime`, `lastTimestamp`, `eventTime`, else
    /// the Event's creation.
    pub last_seen: Option<Timestamp>,
    /// `reportingController`/`reportingComponent`, else `source.component`.
    pub reporting_controller: Option<String>,
}

/// The Event `o` is, and the uid of the object it is about (`involvedObject`/`regarding`).
pub fn read(o: &Object) -> Option<(Uid, Event)> {
    let body = o.body.map();
    let s = |v: Option<&Value>| v.and_then(|v| v.as_str()).filter(|s| !s.is_empty()).map(str::to_string);
    let t = |v: Option<&Value>| v.and_then(|v| v.as_str()).and_then(|s| s.parse::<Timestamp>().ok());
    let new_api = o.group() == "events.k8s.io";
    let about = if new_api { body.get("regarding") } else { body.get("involvedObject") };
    let uid = s(about.and_then(|a| a.get("uid")))?;
    let series = body.get("series");
    let count = series
        .and_then(|s| s.get("count"))
        .or_else(|| body.get(if new_api { "deprecatedCount" } else { "count" }))
        .and_then(Value::as_i64)
        .filter(|&c| c > 0)
        .unwrap_or(1);
    let last_seen = t(series.and_then(|s| s.get("lastObservedTime")))
        .or_else(|| t(body.get(if new_api { "deprecatedLastTimestamp" } else { "lastTimestamp" })))
        .or_else(|| t(body.get("eventTime")))
        .or(o.creation_timestamp);
    let source = if new_api { body.get("deprecatedSource") } else { body.get("source") };
    let reporting_controller = s(body.get(if new_api { "reportingController" } else { "reportingComponent" }))
        .or_else(|| s(source.and_then(|s| s.get("component"))));
    let event = Event {
        type_: s(body.get("type")).unwrap_or_else(|| "Normal".into()),
        reason: s(body.get("reason")).unwrap_or_default(),
        message: s(body.get(if new_api { "note" } else { "message" })).unwrap_or_default(),
        count,
        last_seen,
        reporting_controller,
    };
    Some((Uid(uid), event))
}

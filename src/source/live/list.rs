//! Listing one type: metadata-only (`PartialObjectMetadataList`, in protobuf where the server
//! offers it, else JSON: see [`super::protobuf`]) unless the analysis reads the kind's spec or
//! status (`keeps_body`), paged (limit 500, `continue`, a fresh relist on 410 Gone), with a
//! full list as the fallback when the server cannot produce metadata (406) — except for
//! Secrets, whose contents are never fetched. Answers' metadata-only lists are asked without
//! managedFields first ([`METADATA_LIST_ACCEPT_DROP`], KEP-5958) until the server shows it
//! does not honour that ([`Reader::opt_out`]); captures keep them.

use serde::Deserialize;

use crate::snapshot::object::keeps_body;
use crate::snapshot::raw::RawDoc;

use super::discovery::ListType;
use super::http::{Failure, OptOut, Paging, Reader};

/// Objects per page (`limit`), kubectl's default `--chunk-size`: few round trips, and a page in
/// full is typically tens of MB (see [`super::http::MAX_BODY`]).
pub const PAGE: usize = 500;
/// What the garbage collector's metadata client asks for: protobuf first, JSON second (but no
/// plain JSON: a server that cannot produce metadata answers 406, and Secrets are then not
/// read in full).
pub const METADATA_LIST_ACCEPT: &str = "application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1";
/// KEP-5958's opt-out of `metadata.managedFields` (alpha in Kubernetes 1.37,
/// `ManagedFieldsOptOut`), first in the one form a server can honour: the KEP adds the variant
/// to the JSON (and CBOR) serializers only, and its implementation
/// (kubernetes/kubernetes#139561) to JSON alone, so a protobuf answer always carries them.
/// Then [`METADATA_LIST_ACCEPT`]. A server that does not know the `drop` parameter ignores it
/// (the apiserver's negotiation records unknown parameters and serves the media type as if
/// they were absent) and one that refused such an entry would go on to the next: either way
/// today's answer comes back, with managedFields — in JSON from the first, after which the
/// reader asks for protobuf first ([`Reader::opt_out`]).
pub const METADATA_LIST_ACCEPT_DROP: &str = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1;drop=metadata.managedFields,\
application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,\
application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1";
/// What a GET of one object asks for when only its metadata is read: a `PartialObjectMetadata`
/// in JSON, the only form a GET's answer is decoded from (no plain-JSON fallback: a 406
/// is handled by the caller).
pub const METADATA_ACCEPT: &str = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1";
pub(crate) const JSON: &str = "application/json";

/// A JSON list page. `items` is an `Option` so that an answer without it (`{}`, a Status) is
/// told from an empty list.
#[derive(Deserialize, Default)]
#[serde(default)]
struct Page {
    kind: Option<String>,
    metadata: PageMeta,
    items: Option<Vec<RawDoc>>,
}

impl Page {
    fn is_list(&self) -> bool {
        self.items.is_some() || self.kind.as_deref().is_some_and(|k| k.ends_with("List"))
    }
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct PageMeta {
    #[serde(rename = "continue")]
    continue_: Option<String>,
    #[serde(rename = "resourceVersion")]
    resource_version: Option<String>,
}

/// Whether a type is listed in full (its body is analysed) or metadata-only. Never the core
/// `secrets` resource, whatever kind a (tampered) discovery mapping gives it.
pub fn wants_body(t: &ListType) -> bool {
    !is_secret(t) && keeps_body(&t.group, &t.kind)
}

/// The core `secrets` resource (or a subresource of it), by the path it is read from rather
/// than by kind.
fn is_secret(t: &ListType) -> bool {
    t.group.is_empty() && t.plural.split('/').next() == Some("secrets")
}

/// A list and whether its answer came without managedFields.
pub struct Listed {
    /// The objects read, from every page.
    pub docs: Vec<RawDoc>,
    /// Asked without managedFields ([`METADATA_LIST_ACCEPT_DROP`]) and no object of the answer
    /// carries any: the server honoured the opt-out (an object written since server-side apply
    /// has at least one entry), so the managers of finalizers must be read again.
    pub managed_fields_dropped: bool,
    /// The last page's `metadata.resourceVersion`: what a watch of the same list resumes from.
    pub resource_version: Option<String>,
}

/// A list's narrowing: a field selector (`metadata.name=…`, `involvedObject.uid=…`) and a
/// label selector (`kubernetes.io/service-name=…`), each passed to the server as written.
#[derive(Clone, Copy, Debug, Default)]
pub struct Selectors<'a> {
    /// `fieldSelector`, passed as written.
    pub field: Option<&'a str>,
    /// `labelSelector`, passed as written.
    pub label: Option<&'a str>,
}

/// Every object of a type, in one namespace or across all, optionally narrowed by
/// [`Selectors`]. `full` lists the kinds whose body is analysed in full (with
/// managedFields); otherwise the list is metadata-only, asked without managedFields first
/// when `drop` is set.
pub async fn list(
    r: &Reader,
    t: &ListType,
    namespace: Option<&str>,
    full: bool,
    drop: bool,
    selectors: Selectors<'_>,
) -> Result<Listed, Failure> {
    let kept = |(docs, _, resource_version)| Listed { docs, managed_fields_dropped: false, resource_version };
    if full && wants_body(t) {
        return paged(r, t, namespace, JSON, selectors).await.map(kept);
    }
    // once the server has shown it does not honour the opt-out, protobuf is asked for first
    let drop = drop && r.opt_out() != OptOut::Ignored;
    let accept = if drop { METADATA_LIST_ACCEPT_DROP } else { METADATA_LIST_ACCEPT };
    let (docs, protobuf, resource_version) = match paged(r, t, namespace, accept, selectors).await {
        Err(Failure::Status { code: 406, .. }) if !is_secret(t) => {
            return paged(r, t, namespace, JSON, selectors).await.map(kept);
        }
        other => other?,
    };
    let carried = docs.iter().any(|d| d.metadata.as_ref().is_some_and(|m| m.managed_fields.is_some()));
    if drop {
        // protobuf: the server passed over the JSON entry that asked; JSON with managedFields:
        // it ignored the parameter; JSON without any (and objects to show it): honoured
        if protobuf || carried {
            r.learn_opt_out(OptOut::Ignored);
        } else if !docs.is_empty() {
            r.learn_opt_out(OptOut::Honoured);
        }
    }
    Ok(Listed { docs, managed_fields_dropped: drop && !carried, resource_version })
}

/// Pages of one list at most: 25,000 pages of [`PAGE`] are 12.5 million objects, far beyond
/// any cluster; a server still sending continue tokens then is paging forever.
pub const MAX_PAGES: usize = 25_000;

async fn paged(
    r: &Reader,
    t: &ListType,
    namespace: Option<&str>,
    accept: &str,
    selectors: Selectors<'_>,
) -> Result<(Vec<RawDoc>, bool, Option<String>), Failure> {
    let base = t.path(namespace);
    let mut protobuf = false;
    let mut relisted = false;
    'relist: loop {
        let mut out = Vec::new();
        let mut token: Option<String> = None;
        // every token seen: a server that hands one back again would page forever
        let mut tokens = std::collections::HashSet::new();
        loop {
            let mut q = form_urlencoded::Serializer::new(String::new());
            q.append_pair("limit", &PAGE.to_string());
            if let Some(f) = selectors.field {
                q.append_pair("fieldSelector", f);
            }
            if let Some(l) = selectors.label {
                q.append_pair("labelSelector", l);
            }
            if let Some(tok) = &token {
                q.append_pair("continue", tok);
            }
            let path = format!("{base}?{}", q.finish());
            let answer = match r.get(&path, accept).await {
                Ok(a) => a,
                // the continue token expired: start over once, from a fresh list
                Err(Failure::Status { code: 410, .. }) if token.is_some() && !relisted => {
                    relisted = true;
                    continue 'relist;
                }
                Err(f) => return Err(f),
            };
            protobuf |= super::protobuf::is_protobuf(&answer.content_type);
            let (items, next, version) = if super::protobuf::is_protobuf(&answer.content_type) {
                let page = super::protobuf::decode_metadata_list(&answer.body).map_err(Failure::Decode)?;
                (page.items, page.continue_, page.resource_version)
            } else {
                let page: Page = serde_json::from_slice(&answer.body).map_err(|e| Failure::Decode(e.to_string()))?;
                // `{}` or a Status with a 200 is not an empty list
                if !page.is_list() {
                    return Err(Failure::NotAList(page.kind.unwrap_or_default()));
                }
                (page.items.unwrap_or_default(), page.metadata.continue_, page.metadata.resource_version)
            };
            out.extend(items.into_iter().map(|d| stamp(d, t)));
            match next.filter(|c| !c.is_empty()) {
                Some(c) if !tokens.insert(c.clone()) => return Err(Failure::Paging(Paging::RepeatedToken)),
                Some(_) if tokens.len() >= MAX_PAGES => return Err(Failure::Paging(Paging::TooManyPages(MAX_PAGES))),
                Some(c) => token = Some(c),
                None => return Ok((out, protobuf, version)),
            }
        }
    }
}

/// One object, metadata-only (or in full for the kinds whose body is analysed).
pub async fn get(r: &Reader, t: &ListType, namespace: Option<&str>, name: &str) -> Result<RawDoc, Failure> {
    get_as(r, t, namespace, name, if wants_body(t) { JSON } else { METADATA_ACCEPT }).await
}

/// One object, metadata-only whatever its kind; in full (never a Secret) where the server
/// cannot produce metadata (406).
pub async fn get_metadata(r: &Reader, t: &ListType, namespace: Option<&str>, name: &str) -> Result<RawDoc, Failure> {
    match get_as(r, t, namespace, name, METADATA_ACCEPT).await {
        Err(Failure::Status { code: 406, .. }) if !is_secret(t) => get_as(r, t, namespace, name, JSON).await,
        other => other,
    }
}

async fn get_as(
    r: &Reader,
    t: &ListType,
    namespace: Option<&str>,
    name: &str,
    accept: &str,
) -> Result<RawDoc, Failure> {
    let path = format!("{}/{}", t.path(namespace), name);
    let a = r.get(&path, accept).await?;
    serde_json::from_slice::<RawDoc>(&a.body).map(|d| stamp(d, t)).map_err(|e| Failure::Decode(e.to_string()))
}

/// List items carry no apiVersion/kind (built-in types), or meta.k8s.io's
/// `PartialObjectMetadata`: every object gets its type's own.
pub(crate) fn stamp(mut d: RawDoc, t: &ListType) -> RawDoc {
    d.api_version = Some(t.api_version());
    d.kind = Some(t.kind.clone());
    d.items = None;
    d.captured_at = None;
    d.incomplete = None;
    d
}

//! Listing one type: metadata-only (`PartialObjectMetadataList`, in protobuf where the server
//! offers it, else JSON: see [`super::protobuf`]) unless the analysis reads the kind's spec or
//! status (`keeps_body`), paged (limit 500, `continue`, a fresh relist on 410 Gone), with a
//! full list as the fallback when the server cannot produce metadata (406) — except for
//! Secrets, whose contents are never fetched. Answers' metadata-only lists (and full lists whose ask
//! says so) are asked without managedFields first ([`METADATA_LIST_ACCEPT_DROP`],
//! [`FULL_LIST_ACCEPT_DROP`], KEP-5958) until the server shows it does not honour that
//! ([`Reader::opt_out`]); captures keep them.

use serde::Deserialize;

use crate::snapshot::object::keeps_body;
use crate::snapshot::raw::{JsonDoc, RawDoc};

use super::discovery::ListType;
use super::http::{Failure, OptOut, Paging, Reader};

/// Objects per page (`limit`), kubectl's default `--chunk-size`: few round trips, and a page in
/// full is typically tens of MB (see [`super::http::MAX_BODY`], [`super::http::MEMORY_BUDGET`]).
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
/// A full list without managedFields (KEP-5958's JSON variant), then plain JSON: a server
/// without the gate ignores the parameter and one that refuses it goes on to the second entry,
/// so either way today's answer comes back, with managedFields.
pub const FULL_LIST_ACCEPT_DROP: &str = "application/json;drop=metadata.managedFields,application/json";

/// A JSON list page. `items` is an `Option` so that an answer without it (`{}`, a Status) is
/// told from an empty list.
#[derive(Deserialize, Default)]
#[serde(default)]
struct Page {
    kind: Option<String>,
    #[serde(rename = "apiVersion")]
    api_version: Option<String>,
    metadata: PageMeta,
    items: Option<Vec<JsonDoc>>,
}

impl Page {
    fn is_list(&self) -> bool {
        self.items.is_some() || self.kind.as_deref().is_some_and(|k| k.ends_with("List"))
    }
}

/// meta.k8s.io's versions, which a metadata-only answer's list and items carry.
const META_VERSIONS: [&str; 2] = ["meta.k8s.io/v1", "meta.k8s.io/v1beta1"];

/// Checks a list answer's `kind` and `apiVersion`, and those of its items where they carry
/// them, against what was asked: the type's own list (`ConfigMapList`, `v1`), or, for a
/// metadata-only request, meta.k8s.io's `PartialObjectMetadataList`. Anything else (a PodList
/// for ConfigMaps, a SecretList for webhook configurations) would be taken for the type's
/// objects: it is a [`Failure::WrongList`].
fn check_kind(
    t: &ListType,
    metadata: bool,
    kind: Option<&str>,
    api_version: Option<&str>,
    items: &[RawDoc],
) -> Result<(), Failure> {
    let own = (format!("{}List", t.kind), t.api_version());
    let asked = || format!("{} ({})", t.kind, own.1);
    let shown = |k: Option<&str>, v: Option<&str>| {
        format!("{} ({})", k.unwrap_or("list without a kind"), v.unwrap_or("no apiVersion"))
    };
    let list_ok = match (kind, api_version) {
        (Some(k), Some(v)) if k == own.0 && v == own.1 => true,
        (Some("PartialObjectMetadataList"), Some(v)) => metadata && META_VERSIONS.contains(&v),
        _ => false,
    };
    if !list_ok {
        return Err(Failure::WrongList { got: shown(kind, api_version), asked: asked() });
    }
    // items carry their type where the list does not leave it out (custom resources,
    // PartialObjectMetadata): one of another kind is not this type's object
    for d in items {
        let (k, v) = (d.kind.as_deref(), d.api_version.as_deref());
        let fits = match k {
            None => true,
            Some("PartialObjectMetadata") => metadata && v.is_none_or(|v| META_VERSIONS.contains(&v)),
            Some(k) => k == t.kind && v.is_none_or(|v| v == own.1),
        };
        if !fits {
            return Err(Failure::WrongList { got: format!("list holding a {}", shown(k, v)), asked: asked() });
        }
    }
    Ok(())
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
/// [`Selectors`]. `full` lists the kinds whose body is analysed in full; otherwise the list
/// is metadata-only. Either is asked without managedFields first when `drop` is set
/// ([`FULL_LIST_ACCEPT_DROP`], [`METADATA_LIST_ACCEPT_DROP`]).
pub async fn list(
    r: &Reader,
    t: &ListType,
    namespace: Option<&str>,
    full: bool,
    drop: bool,
    selectors: Selectors<'_>,
) -> Result<Listed, Failure> {
    let kept = |(docs, _, resource_version)| Listed { docs, managed_fields_dropped: false, resource_version };
    // once the server has shown it does not honour the opt-out, it is not asked again (and
    // protobuf is asked for first)
    let drop = drop && r.opt_out() != OptOut::Ignored;
    if full && wants_body(t) {
        if !drop {
            return paged(r, t, namespace, JSON, selectors).await.map(kept);
        }
        let (docs, _, resource_version) = paged(r, t, namespace, FULL_LIST_ACCEPT_DROP, selectors).await?;
        let carried = docs.iter().any(|d| d.metadata.as_ref().is_some_and(|m| m.managed_fields.is_some()));
        if carried {
            r.learn_opt_out(OptOut::Ignored);
        } else if !docs.is_empty() {
            r.learn_opt_out(OptOut::Honoured);
        }
        return Ok(Listed { docs, managed_fields_dropped: !carried, resource_version });
    }
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

/// The fewest bytes an object of a list takes (name, namespace, uid, resourceVersion and a
/// timestamp, in protobuf): what the page cap is reckoned with.
pub const MIN_OBJECT_BYTES: u64 = 256;

/// Pages of one list at most, as the run's memory budget allows: more full pages than the
/// budget could hold objects of (1 GiB: 8,388 pages of [`PAGE`], 4 million objects) cannot be
/// read whole anyway, so a server still sending continue tokens then — a fresh one every
/// page, with nothing on it — is paging forever, and the list is given up.
pub fn max_pages(budget: u64) -> usize {
    usize::try_from(budget / (PAGE as u64 * MIN_OBJECT_BYTES)).unwrap_or(usize::MAX).max(16)
}

/// Pages in a row with no object, each asking for more, after which a list is given up: the
/// API server fills a page before it hands out a continue token, so a run of empty ones is a
/// server paging forever (with fresh tokens, which the repeated-token check cannot see).
pub const MAX_EMPTY_PAGES: usize = 16;

/// How long one list may take, all its pages: ten times `--request-timeout` (at least 10 s),
/// else 3 minutes. A list still paging then is given up, with a gap that says so, rather than
/// holding the answer for the many minutes a server paging forever would take to reach
/// [`max_pages`].
pub fn time_limit(request_timeout: Option<std::time::Duration>) -> std::time::Duration {
    match request_timeout {
        Some(t) => (t * 10).max(std::time::Duration::from_secs(10)),
        None => std::time::Duration::from_secs(180),
    }
}

async fn paged(
    r: &Reader,
    t: &ListType,
    namespace: Option<&str>,
    accept: &str,
    selectors: Selectors<'_>,
) -> Result<(Vec<RawDoc>, bool, Option<String>), Failure> {
    let base = t.path(namespace);
    let max_pages = max_pages(r.budget());
    let limit = time_limit(r.request_timeout());
    let started = tokio::time::Instant::now();
    let mut protobuf = false;
    let mut relisted = false;
    'relist: loop {
        let mut out = Vec::new();
        // the pages' parts of the run's budget: kept with the list, given back if it fails
        let mut charges = Vec::new();
        let mut token: Option<String> = None;
        // every token seen: a server that hands one back again would page forever
        let mut tokens = std::collections::HashSet::new();
        let mut empty_in_a_row = 0;
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
                // the envelope's kind and apiVersion are checked where it is decoded
                let page = super::protobuf::decode_metadata_list(&answer.body).map_err(Failure::Decode)?;
                (page.items, page.continue_, page.resource_version)
            } else {
                let page: Page = serde_json::from_slice(&answer.body).map_err(|e| Failure::Decode(e.to_string()))?;
                // `{}` or a Status with a 200 is not an empty list
                if !page.is_list() {
                    return Err(Failure::NotAList(page.kind.unwrap_or_default()));
                }
                let items: Vec<RawDoc> = page.items.unwrap_or_default().into_iter().map(|JsonDoc(d)| d).collect();
                check_kind(
                    t,
                    accept.contains("as=PartialObjectMetadata"),
                    page.kind.as_deref(),
                    page.api_version.as_deref(),
                    &items,
                )?;
                (items, page.metadata.continue_, page.metadata.resource_version)
            };
            empty_in_a_row = if items.is_empty() { empty_in_a_row + 1 } else { 0 };
            out.extend(items.into_iter().map(|d| stamp(d, t)));
            charges.push(answer.charge);
            match next.filter(|c| !c.is_empty()) {
                Some(c) if !tokens.insert(c.clone()) => return Err(Failure::Paging(Paging::RepeatedToken)),
                Some(_) if tokens.len() >= max_pages => return Err(Failure::Paging(Paging::TooManyPages(max_pages))),
                Some(_) if empty_in_a_row >= MAX_EMPTY_PAGES => {
                    return Err(Failure::Paging(Paging::EmptyPages(empty_in_a_row)));
                }
                Some(_) if started.elapsed() >= limit => {
                    return Err(Failure::Paging(Paging::TooLong { pages: tokens.len(), limit }));
                }
                Some(c) => token = Some(c),
                None => {
                    charges.into_iter().for_each(super::http::Charge::keep);
                    return Ok((out, protobuf, version));
                }
            }
        }
    }
}

/// One object, metadata-only (or in full for the kinds whose body is analysed).
pub async fn get(r: &Reader, t: &ListType, namespace: Option<&str>, name: &str) -> Result<RawDoc, Failure> {
    get_as(r, t, namespace, name, if wants_body(t) { JSON } else { METADATA_ACCEPT }).await
}

/// [`get`], asking a kind read in full without managedFields (KEP-5958 covers a GET's answer
/// as a list's: [`FULL_LIST_ACCEPT_DROP`]); also whether they were left out (asked, and the
/// object came without).
pub async fn get_dropping(
    r: &Reader,
    t: &ListType,
    namespace: Option<&str>,
    name: &str,
    drop: bool,
) -> Result<(RawDoc, bool), Failure> {
    // as a list: a server shown not to honour the opt-out is not asked again
    if !drop || !wants_body(t) || r.opt_out() == OptOut::Ignored {
        return get(r, t, namespace, name).await.map(|d| (d, false));
    }
    let d = get_as(r, t, namespace, name, FULL_LIST_ACCEPT_DROP).await?;
    let dropped = d.metadata.as_ref().is_some_and(|m| m.managed_fields.is_none());
    r.learn_opt_out(if dropped { OptOut::Honoured } else { OptOut::Ignored });
    Ok((d, dropped))
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
    let JsonDoc(d) = serde_json::from_slice(&a.body).map_err(|e| Failure::Decode(e.to_string()))?;
    a.charge.keep();
    // one object of another kind (a Secret for a webhook configuration) is not this one
    let fits = match d.kind.as_deref() {
        Some("PartialObjectMetadata") => accept == METADATA_ACCEPT,
        Some(k) => k == t.kind,
        None => true,
    };
    if !fits {
        let got =
            format!("{} ({})", d.kind.as_deref().unwrap_or(""), d.api_version.as_deref().unwrap_or("no apiVersion"));
        return Err(Failure::WrongList { got, asked: format!("{} ({})", t.kind, t.api_version()) });
    }
    Ok(stamp(d, t))
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

#[cfg(test)]
mod tests {
    use super::*;

    fn t(group: &str, version: &str, plural: &str, kind: &str) -> ListType {
        crate::testing::list_type(group, version, plural, kind, true)
    }

    fn item(kind: Option<&str>, api_version: Option<&str>) -> RawDoc {
        RawDoc { kind: kind.map(Into::into), api_version: api_version.map(Into::into), ..Default::default() }
    }

    #[test]
    fn a_list_of_another_kind_is_refused_with_what_came() {
        let cm = t("", "v1", "configmaps", "ConfigMap");
        assert!(check_kind(&cm, false, Some("ConfigMapList"), Some("v1"), &[]).is_ok());
        assert!(check_kind(&cm, true, Some("PartialObjectMetadataList"), Some("meta.k8s.io/v1"), &[]).is_ok());
        // a metadata list answers a metadata request only
        assert!(check_kind(&cm, false, Some("PartialObjectMetadataList"), Some("meta.k8s.io/v1"), &[]).is_err());
        let Err(Failure::WrongList { got, asked }) = check_kind(&cm, false, Some("PodList"), Some("v1"), &[]) else {
            panic!("a PodList for ConfigMaps")
        };
        assert_eq!((got.as_str(), asked.as_str()), ("PodList (v1)", "ConfigMap (v1)"));
        // the right kind at another group or version is not it either
        assert!(check_kind(&cm, false, Some("ConfigMapList"), Some("apps/v1"), &[]).is_err());
        assert!(check_kind(&cm, false, None, None, &[]).is_err());
        let vwc = t(
            "admissionregistration.k8s.io",
            "v1",
            "validatingwebhookconfigurations",
            "ValidatingWebhookConfiguration",
        );
        assert!(check_kind(&vwc, false, Some("SecretList"), Some("v1"), &[]).is_err());
    }

    #[test]
    fn the_page_cap_follows_from_the_budget() {
        assert_eq!(max_pages(super::super::http::MEMORY_BUDGET), 8388);
        assert_eq!(max_pages(64 * 1024 * 1024), 524);
        assert_eq!(max_pages(1), 16, "a few pages whatever the budget");
    }

    #[test]
    fn an_item_of_another_kind_spoils_the_list() {
        let site = t("own.labhub.io", "v1", "sites", "Site");
        let list = |items: &[RawDoc], metadata: bool| {
            let kind = if metadata { "PartialObjectMetadataList" } else { "SiteList" };
            let v = if metadata { "meta.k8s.io/v1" } else { "own.labhub.io/v1" };
            check_kind(&site, metadata, Some(kind), Some(v), items)
        };
        assert!(list(&[item(Some("Site"), Some("own.labhub.io/v1")), item(None, None)], false).is_ok());
        assert!(list(&[item(Some("PartialObjectMetadata"), Some("meta.k8s.io/v1"))], true).is_ok());
        assert!(list(&[item(Some("Secret"), Some("v1"))], false).is_err());
        assert!(list(&[item(Some("Site"), Some("own.labhub.io/v2"))], false).is_err());
        assert!(list(&[item(Some("PartialObjectMetadata"), Some("meta.k8s.io/v1"))], false).is_err());
    }
}

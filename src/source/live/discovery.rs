//! Which types the server serves: aggregated discovery (`apidiscovery.k8s.io/v2`, two
//! requests) when the server answers it, else legacy discovery group by group. A group that
//! fails (a 503 from an unavailable aggregated API, a Stale freshness) is recorded and the rest
//! goes on: unlike kube's `Discovery::run`, one bad group never fails the whole.

use futures::{StreamExt, stream};
use serde::Deserialize;

use crate::snapshot::raw::RawApiResource;
use crate::snapshot::{ApiResource, Gap, Missing, ResourceList};

use super::error::Error;
use super::http::Reader;

/// What kubectl sends: aggregated discovery (`v2`, then `v2beta1` as 1.26 to 1.29 serve it:
/// the same shape), plain JSON (legacy) as the fallback.
pub const AGGREGATED_ACCEPT: &str = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,\
application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json";
const JSON: &str = "application/json";

/// One listable resource type at the version it is read in.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ListType {
    /// The API group; "" for the core group.
    pub group: String,
    /// The version it is read in: the first discovery offers, the group's preferred one first.
    pub version: String,
    /// The resource name in URLs.
    pub plural: String,
    /// The kind of its objects.
    pub kind: String,
    /// True when objects live in a namespace (the path may then name one).
    pub namespaced: bool,
}

impl ListType {
    /// `group/version`, or `version` for the core group.
    pub fn api_version(&self) -> String {
        crate::discovery::api_version(&self.group, &self.version)
    }

    /// `pods`, `deployments.apps`: as kubectl names it.
    pub fn qualified(&self) -> String {
        if self.group.is_empty() { self.plural.clone() } else { format!("{}.{}", self.plural, self.group) }
    }

    /// The collection path, in one namespace or across all.
    pub fn path(&self, namespace: Option<&str>) -> String {
        let root = if self.group.is_empty() {
            format!("/api/{}", self.version)
        } else {
            format!("/apis/{}/{}", self.group, self.version)
        };
        match namespace {
            Some(ns) if self.namespaced => format!("{root}/namespaces/{ns}/{}", self.plural),
            _ => format!("{root}/{}", self.plural),
        }
    }
}

/// The discovery answer: resource lists for the snapshot, the types to list, and what could
/// not be discovered.
#[derive(Clone, Debug, Default)]
pub struct Discovery {
    /// The `APIResourceList`s the snapshot records.
    pub lists: Vec<ResourceList>,
    /// The types to list (those with the `list` verb), each once, at the version read in.
    pub types: Vec<ListType>,
    /// What could not be discovered (a failing group version, …): answers that depend on it
    /// are Unknown.
    pub incomplete: Vec<crate::snapshot::Gap>,
    /// True when the server answered aggregated discovery (one request, not one per group).
    pub aggregated: bool,
    /// Read from the discovery cache rather than from the server.
    pub from_cache: bool,
    /// With a cached discovery: the CRDs (name → resourceVersion) recorded with it, if any.
    pub crds: Option<std::collections::BTreeMap<String, String>>,
}

impl Discovery {
    /// The listable type of a group and kind.
    pub fn find(&self, group: &str, kind: &str) -> Option<&ListType> {
        self.types.iter().find(|t| t.group == group && t.kind == kind)
    }

    /// The type at each other version its group serves it at, in discovery's order. A custom
    /// resource is listed at its group's preferred version, and when its objects are stored at
    /// another one the API server converts every object of the list, through the CRD's
    /// conversion webhook: with that webhook down the whole list fails (500) while the version
    /// the objects are stored at needs no conversion and still answers.
    pub fn other_versions(&self, t: &ListType) -> Vec<ListType> {
        use crate::snapshot::object::{group_of, version_of};
        self.lists
            .iter()
            .filter(|l| group_of(&l.group_version) == t.group && version_of(&l.group_version) != t.version)
            .filter(|l| {
                l.resources
                    .iter()
                    .any(|r| r.plural == t.plural && r.kind == t.kind && r.verbs.iter().any(|v| v == "list"))
            })
            .map(|l| ListType { version: version_of(&l.group_version).to_string(), ..t.clone() })
            .collect()
    }
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
struct AggList {
    items: Vec<AggGroup>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct AggGroup {
    metadata: NameMeta,
    versions: Vec<AggVersion>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct NameMeta {
    name: String,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct AggVersion {
    version: String,
    resources: Vec<AggResource>,
    freshness: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
struct AggResource {
    resource: String,
    response_kind: Option<Gvk>,
    scope: String,
    singular_resource: Option<String>,
    verbs: Vec<String>,
    short_names: Vec<String>,
    categories: Vec<String>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Gvk {
    group: String,
    version: String,
    kind: String,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct ApiVersions {
    versions: Vec<String>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
struct GroupList {
    groups: Vec<Group>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
struct Group {
    versions: Vec<GroupVersion>,
    preferred_version: Option<GroupVersion>,
}

#[derive(Deserialize, Default, Clone)]
#[serde(rename_all = "camelCase", default)]
struct GroupVersion {
    group_version: String,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
struct RawResourceList {
    group_version: String,
    resources: Vec<RawApiResource>,
}

/// Discovers every group and version the server serves.
pub async fn discover(r: &Reader, concurrency: usize) -> Result<Discovery, Error> {
    let mut d = Discovery::default();
    // group versions in preference order, each with its resource list or why it failed
    let mut found: Vec<(String, Result<ResourceList, String>)> = Vec::new();

    let core = get(r, "/api", AGGREGATED_ACCEPT).await?;
    let mut legacy_paths: Vec<String> = Vec::new();
    match parse_kind(&core).as_str() {
        "APIGroupDiscoveryList" => {
            d.aggregated = true;
            aggregated(decode(r, "/api", &core)?, &mut found);
        }
        _ => {
            let v: ApiVersions = decode(r, "/api", &core)?;
            legacy_paths.extend(v.versions.iter().map(|v| format!("/api/{v}")));
        }
    }
    let apis = get(r, "/apis", AGGREGATED_ACCEPT).await?;
    match parse_kind(&apis).as_str() {
        "APIGroupDiscoveryList" => aggregated(decode(r, "/apis", &apis)?, &mut found),
        _ => {
            d.aggregated = false;
            let groups: GroupList = decode(r, "/apis", &apis)?;
            for g in groups.groups {
                let mut versions: Vec<GroupVersion> = g.preferred_version.clone().into_iter().collect();
                versions.extend(
                    g.versions
                        .into_iter()
                        .filter(|v| Some(&v.group_version) != g.preferred_version.as_ref().map(|p| &p.group_version)),
                );
                legacy_paths.extend(versions.into_iter().map(|v| format!("/apis/{}", v.group_version)));
            }
        }
    }
    if !legacy_paths.is_empty() {
        let answers: Vec<(String, Result<ResourceList, String>)> = stream::iter(legacy_paths)
            .map(|path| async move {
                let gv = path.trim_start_matches("/apis/").trim_start_matches("/api/").to_string();
                let res = match r.get(&path, JSON).await {
                    Ok(a) => serde_json::from_slice::<RawResourceList>(&a.body)
                        .map(|l| resource_list(&gv, l.resources))
                        .map_err(|e| format!("unreadable discovery answer: {e}")),
                    Err(f) => Err(f.describe()),
                };
                (gv, res)
            })
            .buffered(concurrency.max(1))
            .collect()
            .await;
        // core versions first, as /api comes before /apis
        found.extend(answers);
    }

    Ok(assemble(d, found))
}

/// The types to list, from group versions in preference order (the first version serving a
/// resource wins), and the groups that failed.
pub(crate) fn assemble(mut d: Discovery, found: Vec<(String, Result<ResourceList, String>)>) -> Discovery {
    let mut seen = std::collections::HashSet::new();
    let core_events = found
        .iter()
        .any(|(gv, l)| gv == "v1" && l.as_ref().is_ok_and(|l| l.resources.iter().any(|r| r.plural == "events")));
    for (gv, res) in found {
        match res {
            Ok(list) => {
                let (group, version) = match gv.rsplit_once('/') {
                    Some((g, v)) => (g.to_string(), v.to_string()),
                    None => (String::new(), gv.clone()),
                };
                for res in &list.resources {
                    if res.plural.contains('/') || !res.verbs.iter().any(|v| v == "list") {
                        continue;
                    }
                    // the same Event objects are served by the core group and events.k8s.io
                    if core_events && group == "events.k8s.io" && res.plural == "events" {
                        continue;
                    }
                    if seen.insert((group.clone(), res.plural.clone())) {
                        d.types.push(ListType {
                            group: res.group.clone().unwrap_or_else(|| group.clone()),
                            version: res.version.clone().unwrap_or_else(|| version.clone()),
                            plural: res.plural.clone(),
                            kind: res.kind.clone(),
                            namespaced: res.namespaced,
                        });
                    }
                }
                d.lists.push(list);
            }
            Err(why) => {
                // a group version as the API writes it (`apps/v1`, `v1`), not a sentence
                let (group, version) = match gv.rsplit_once('/') {
                    Some((g, v)) => (g.to_string(), v.to_string()),
                    None => (String::new(), gv),
                };
                d.incomplete.push(Gap::new(Missing::Discovery { group, version }, why))
            }
        }
    }
    d
}

fn aggregated(list: AggList, found: &mut Vec<(String, Result<ResourceList, String>)>) {
    for g in list.items {
        for v in g.versions {
            let gv = crate::discovery::api_version(&g.metadata.name, &v.version);
            if v.freshness.as_deref() == Some("Stale") {
                found.push((gv, Err("discovery is stale: the API service behind it is not available".into())));
                continue;
            }
            let resources = v
                .resources
                .into_iter()
                .map(|r| {
                    let kind = r.response_kind.unwrap_or_default();
                    ApiResource {
                        plural: r.resource,
                        singular: r.singular_resource.filter(|s| !s.is_empty()),
                        namespaced: r.scope == "Namespaced",
                        group: (kind.group != g.metadata.name && !kind.kind.is_empty()).then_some(kind.group),
                        version: (kind.version != v.version && !kind.version.is_empty()).then_some(kind.version),
                        kind: kind.kind,
                        verbs: r.verbs,
                        short_names: r.short_names,
                        categories: r.categories,
                    }
                })
                .filter(|r| !r.kind.is_empty())
                .collect();
            found.push((gv.clone(), Ok(ResourceList { group_version: gv, resources })));
        }
    }
}

fn resource_list(gv: &str, resources: Vec<RawApiResource>) -> ResourceList {
    ResourceList {
        group_version: gv.to_string(),
        resources: resources
            .into_iter()
            .filter(|r| !r.kind.is_empty() && !r.name.is_empty() && !r.name.contains('/'))
            .map(|r| ApiResource {
                plural: r.name,
                singular: r.singular_name.filter(|s| !s.is_empty()),
                namespaced: r.namespaced,
                group: r.group.filter(|s| !s.is_empty()),
                version: r.version.filter(|s| !s.is_empty()),
                kind: r.kind,
                verbs: r.verbs,
                short_names: r.short_names,
                categories: r.categories,
            })
            .collect(),
    }
}

async fn get(r: &Reader, path: &str, accept: &str) -> Result<Vec<u8>, Error> {
    r.get(path, accept).await.map(|a| a.body).map_err(|f| f.into_error(r.server(), path))
}

fn parse_kind(body: &[u8]) -> String {
    #[derive(Deserialize)]
    struct K {
        #[serde(default)]
        kind: String,
    }
    serde_json::from_slice::<K>(body).map(|k| k.kind).unwrap_or_default()
}

fn decode<T: serde::de::DeserializeOwned>(r: &Reader, path: &str, body: &[u8]) -> Result<T, Error> {
    serde_json::from_slice(body).map_err(|e| {
        let shown = e.to_string();
        Error::Decode { server: r.server().into(), path: path.into(), source: super::error::Cause::new(e, shown) }
    })
}

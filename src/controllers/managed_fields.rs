//! `metadata.managedFields`: the field manager that added a finalizer. The finalizer list is a
//! set, so server-side apply and update both record a manager per entry.
//!
//! A manager's name is what the client chose, or else the API server's reading of its
//! User-Agent up to the first `/` (`managerOrUserAgent` in the apiserver's handlers): client-go
//! sends `<binary>/<version> …`, so a controller's manager is its binary's name (`manager` for
//! every kubebuilder operator), and a program that sets nothing shows its HTTP library's name.

use crate::snapshot::{FinalizerManager, Object};

/// What kind of client a field manager is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ManagerKind {
    /// A person's tool (`kubectl-edit`, `kubectl-patch`, `kubectl-client-side-apply`, `k9s`): a
    /// person added the finalizer, and no controller removes it unless another tie says so.
    Person,
    /// A GitOps or deployment tool applying manifests (Argo CD, Flux, Helm, Tanka): it adds the
    /// finalizers its manifests carry, not finalizer logic — never the controller (except of
    /// the finalizers of its own domain, [`own_domain`]).
    Applier,
    /// An HTTP or client library's default name, sent by a program that named itself nothing
    /// (`Go-http-client`, `OpenAPI-Generator`, `python-requests`): it names no one.
    Library,
    /// A control-plane component.
    ControlPlane,
    /// Anything else: presumably the controller itself (`site-operator`, kubebuilder's `manager`).
    Controller,
}

/// GitOps and deployment tools' field managers, and the domain of the finalizers that tool
/// itself removes (`""`: none). Argo CD applies as `argocd-controller` (its `ArgoCDSSAManager`)
/// and, client-side, as `argocd-application-controller`; Flux applies as `kustomize-controller`
/// and `helm-controller`, which also put `finalizers.fluxcd.io` on their own objects; Helm's
/// CLI is `helm`; Tanka's `tanka`; Carvel's `kapp`.
const APPLIERS: &[(&str, &str)] = &[
    ("argocd-controller", "argoproj.io"),
    ("argocd-application-controller", "argoproj.io"),
    ("kustomize-controller", "fluxcd.io"),
    ("helm-controller", "fluxcd.io"),
    ("helm", ""),
    ("tanka", ""),
    ("kapp", ""),
];

/// Default User-Agent products of HTTP and Kubernetes client libraries, which become the
/// manager of a program that sets neither: Go's net/http (`Go-http-client/1.1`), the official
/// Python, JavaScript and other generated clients (`OpenAPI-Generator/<v>/python`), Python's
/// requests and urllib, curl, OkHttp, Java's URLConnection (`Java/<v>`), fabric8's Java client,
/// axios and node-fetch; and `unknown`, what some tools send when they have no name.
const LIBRARIES: &[&str] = &[
    "go-http-client",
    "openapi-generator",
    "python-requests",
    "python-urllib",
    "python-httpx",
    "aiohttp",
    "curl",
    "okhttp",
    "java",
    "fabric8-kubernetes-client",
    "axios",
    "node-fetch",
    "unknown",
];

/// What kind of client a field manager is, by its name (case-insensitive).
pub fn classify(manager: &str) -> ManagerKind {
    let m = manager.to_ascii_lowercase();
    if m.starts_with("kubectl") || m.starts_with("k9s") || m == "before-first-apply" || m == "lens" {
        ManagerKind::Person
    } else if APPLIERS.iter().any(|(a, _)| m == *a) || m.starts_with("pulumi-kubernetes") || m == "terraform" {
        ManagerKind::Applier
    } else if LIBRARIES.iter().any(|l| m == *l) {
        ManagerKind::Library
    } else if matches!(
        m.as_str(),
        "kube-controller-manager" | "kube-apiserver" | "kube-scheduler" | "cloud-controller-manager"
    ) {
        ManagerKind::ControlPlane
    } else {
        ManagerKind::Controller
    }
}

/// The domain whose finalizers a GitOps tool removes itself (`fluxcd.io` for Flux's
/// controllers, `argoproj.io` for Argo CD's), when `manager` is such a tool.
pub fn own_domain(manager: &str) -> Option<&'static str> {
    let m = manager.to_ascii_lowercase();
    APPLIERS.iter().find(|(a, d)| m == *a && !d.is_empty()).map(|(_, d)| *d)
}

/// The managers that set `finalizer` on the object, oldest entry first as stored.
pub fn managers_of<'o>(o: &'o Object, finalizer: &'o str) -> impl Iterator<Item = &'o FinalizerManager> + 'o {
    o.finalizer_managers.iter().filter(move |m| m.finalizers.iter().any(|f| f == finalizer))
}

/// `field manager "x" (Update at 2026-…)`.
pub fn describe(m: &FinalizerManager) -> String {
    let mut s = format!("field manager \"{}\"", m.manager);
    match (m.operation.is_empty(), m.time) {
        (false, Some(t)) => s.push_str(&format!(" ({} at {t})", m.operation)),
        (false, None) => s.push_str(&format!(" ({})", m.operation)),
        (true, Some(t)) => s.push_str(&format!(" (at {t})")),
        (true, None) => {}
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn people_appliers_libraries_and_controllers_are_told_apart() {
        let table = [
            ("kubectl-edit", ManagerKind::Person),
            ("kubectl-patch", ManagerKind::Person),
            ("kubectl-client-side-apply", ManagerKind::Person),
            ("kubectl", ManagerKind::Person),
            ("k9s", ManagerKind::Person),
            ("argocd-controller", ManagerKind::Applier),
            ("argocd-application-controller", ManagerKind::Applier),
            ("kustomize-controller", ManagerKind::Applier),
            ("helm-controller", ManagerKind::Applier),
            ("helm", ManagerKind::Applier),
            ("Helm", ManagerKind::Applier),
            ("pulumi-kubernetes-3f2a1c", ManagerKind::Applier),
            ("Go-http-client", ManagerKind::Library),
            ("OpenAPI-Generator", ManagerKind::Library),
            ("python-requests", ManagerKind::Library),
            ("curl", ManagerKind::Library),
            ("kube-controller-manager", ManagerKind::ControlPlane),
            ("manager", ManagerKind::Controller),
            ("site-operator", ManagerKind::Controller),
            ("kubelet-like-operator", ManagerKind::Controller),
        ];
        for (m, kind) in table {
            assert_eq!(classify(m), kind, "{m}");
        }
        assert_eq!(own_domain("kustomize-controller"), Some("fluxcd.io"));
        assert_eq!(own_domain("helm"), None);
        assert_eq!(own_domain("site-operator"), None);
    }
}

//! `metadata.managedFields`: the field manager that added a finalizer. The finalizer list is a
//! set, so server-side apply and update both record a manager per entry.

use crate::snapshot::{FinalizerManager, Object};

/// What kind of client a field manager is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ManagerKind {
    /// A person's tool (`kubectl`, `kubectl-client-side-apply`, `helm`): it applied the finalizer
    /// from a manifest and will not remove it.
    Client,
    /// A control-plane component.
    ControlPlane,
    /// Anything else: presumably the controller itself (`site-operator`, kubebuilder's `manager`).
    Controller,
}

/// What kind of client a field manager is, by its name (case-insensitive).
pub fn classify(manager: &str) -> ManagerKind {
    let m = manager.to_ascii_lowercase();
    if m.starts_with("kubectl") || m == "helm" || m.starts_with("k9s") || m == "before-first-apply" {
        ManagerKind::Client
    } else if matches!(
        m.as_str(),
        "kube-controller-manager" | "kube-apiserver" | "kube-scheduler" | "cloud-controller-manager"
    ) {
        ManagerKind::ControlPlane
    } else {
        ManagerKind::Controller
    }
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
    fn clients_are_told_from_controllers() {
        assert_eq!(classify("kubectl-client-side-apply"), ManagerKind::Client);
        assert_eq!(classify("helm"), ManagerKind::Client);
        assert_eq!(classify("kube-controller-manager"), ManagerKind::ControlPlane);
        assert_eq!(classify("manager"), ManagerKind::Controller);
        assert_eq!(classify("site-operator"), ManagerKind::Controller);
    }
}

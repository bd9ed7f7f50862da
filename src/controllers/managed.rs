//! Finalizers whose controllers a managed control plane runs outside the cluster, where no Pod,
//! workload or Lease of theirs can be seen: not finding them there proves nothing, so their
//! absence is Unknown, never Missing (contract §4.3).
//!
//! Recognised by the finalizer's domain (the names are the providers' own, read in their code and
//! documentation):
//! - GKE: `networking.gke.io/…` and `gke.networking.io/…` — ingress-gce's Ingress finalizers
//!   (`networking.gke.io/ingress-finalizer`, `…-V2`), the NEG controller's
//!   `networking.gke.io/neg-finalizer` on ServiceNetworkEndpointGroups, and the L4 load
//!   balancer controllers' `gke.networking.io/l4-ilb-v1`, `l4-ilb-v2`, `l4-netlb-v2`, `l4-netlb-v3`;
//! - EKS Auto Mode: `*.eks.amazonaws.com` — its load-balancing capability's
//!   `service.eks.amazonaws.com/resources` and `ingress.eks.amazonaws.com/resources`
//!   (the self-installed AWS Load Balancer Controller's `service.k8s.aws/resources`,
//!   `ingress.k8s.aws/resources`, `elbv2.k8s.aws/resources` run in the cluster and are not here);
//! - CSI drivers whose controller the provider runs (`csi` module): GKE's
//!   `pd.csi.storage.gke.io` and `filestore.csi.storage.gke.io`, AKS's `disk.csi.azure.com` and
//!   `file.csi.azure.com`.
//!
//! cloud-controller-manager's `service.kubernetes.io/load-balancer-cleanup` is judged by its
//! Lease (`builtin`): on GKE, EKS and AKS that controller runs in the control plane too.

use super::domain::domains_match;

/// Domains of finalizers that a managed control plane's controllers remove, and who runs them.
const MANAGED_DOMAINS: &[(&str, &str)] = &[
    ("networking.gke.io", "GKE's ingress and NEG controllers (ingress-gce), run by Google in the control plane"),
    ("gke.networking.io", "GKE's load balancer controllers, run by Google in the control plane"),
    ("eks.amazonaws.com", "EKS Auto Mode's managed controllers, run by AWS outside the cluster"),
];

/// CSI drivers whose controller plugin and sidecars the provider runs outside the cluster.
const MANAGED_CSI_DRIVERS: &[(&str, &str)] = &[
    ("pd.csi.storage.gke.io", "GKE runs this driver's controller in the control plane"),
    ("filestore.csi.storage.gke.io", "GKE runs this driver's controller in the control plane"),
    ("disk.csi.azure.com", "AKS runs this driver's controller in the control plane"),
    ("file.csi.azure.com", "AKS runs this driver's controller in the control plane"),
];

/// The managed Kubernetes service the cluster's nodes say it is, by their providers' node labels
/// (`cloud.google.com/gke-nodepool`, `eks.amazonaws.com/nodegroup` or `…/compute-type`,
/// `kubernetes.azure.com/cluster`).
pub fn managed_cluster(g: &crate::graph::Graph) -> Option<&'static str> {
    g.of_kind("", "Node").iter().filter_map(|&id| g.object(id)).find_map(|n| {
        if n.label("cloud.google.com/gke-nodepool").is_some() {
            Some("GKE")
        } else if n.label("eks.amazonaws.com/nodegroup").is_some()
            || n.label("eks.amazonaws.com/compute-type").is_some()
        {
            Some("EKS")
        } else if n.label("kubernetes.azure.com/cluster").is_some() {
            Some("AKS")
        } else {
            None
        }
    })
}

/// Who runs the finalizer's controller outside the cluster, if a managed control plane does.
pub fn managed_controller(domain: &str) -> Option<&'static str> {
    MANAGED_DOMAINS.iter().find(|(d, _)| domains_match(domain, d)).map(|(_, who)| *who)
}

/// Whether a managed control plane runs this CSI driver's controller.
pub fn managed_csi_driver(driver: &str) -> Option<&'static str> {
    MANAGED_CSI_DRIVERS.iter().find(|(d, _)| d.eq_ignore_ascii_case(driver)).map(|(_, who)| *who)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn managed_domains_are_recognised_and_in_cluster_ones_are_not() {
        assert!(managed_controller("networking.gke.io").is_some());
        assert!(managed_controller("gke.networking.io").is_some());
        assert!(managed_controller("service.eks.amazonaws.com").is_some());
        assert!(managed_controller("ingress.k8s.aws").is_none());
        assert!(managed_controller("elbv2.k8s.aws").is_none());
        assert!(managed_csi_driver("pd.csi.storage.gke.io").is_some());
        assert!(managed_csi_driver("ebs.csi.aws.com").is_none());
    }
}

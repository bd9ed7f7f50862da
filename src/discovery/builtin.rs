//! The built-in Kubernetes types, taken from k8s-openapi's `Resource` constants (kind, group,
//! version, plural and scope), never typed by hand. Only stable versions are listed: alpha and
//! beta APIs are off by default, so an owner reference to one is unresolvable offline unless
//! the snapshot's discovery data says the cluster serves it.

use k8s_openapi::{ClusterResourceScope, NamespaceResourceScope, Resource, ResourceScope};

/// One built-in resource, as k8s-openapi describes it.
pub struct Builtin {
    /// The API group; "" for the core group.
    pub group: &'static str,
    /// The stable version the table lists.
    pub version: &'static str,
    /// The kind.
    pub kind: &'static str,
    /// The resource name in URLs.
    pub plural: &'static str,
    /// True when objects live in a namespace.
    pub namespaced: bool,
}

trait Scoped {
    const NAMESPACED: bool;
}
impl Scoped for NamespaceResourceScope {
    const NAMESPACED: bool = true;
}
impl Scoped for ClusterResourceScope {
    const NAMESPACED: bool = false;
}

const fn builtin<T: Resource>() -> Builtin
where
    T::Scope: Scoped + ResourceScope,
{
    Builtin {
        group: T::GROUP,
        version: T::VERSION,
        kind: T::KIND,
        plural: T::URL_PATH_SEGMENT,
        namespaced: <T::Scope as Scoped>::NAMESPACED,
    }
}

macro_rules! builtins {
    ($($t:path,)*) => {
        /// Every listable stable type k8s-openapi knows (generated from its `ListableResource` impls).
        pub const BUILTINS: &[Builtin] = &[$(builtin::<$t>(),)*];
    };
}

use k8s_openapi::{api, apiextensions_apiserver, kube_aggregator};

builtins! {
        api::admissionregistration::v1::MutatingAdmissionPolicy,
        api::admissionregistration::v1::MutatingAdmissionPolicyBinding,
        api::admissionregistration::v1::MutatingWebhookConfiguration,
        api::admissionregistration::v1::ValidatingAdmissionPolicy,
        api::admissionregistration::v1::ValidatingAdmissionPolicyBinding,
        api::admissionregistration::v1::ValidatingWebhookConfiguration,
        api::apps::v1::ControllerRevision,
        api::apps::v1::DaemonSet,
        api::apps::v1::Deployment,
        api::apps::v1::ReplicaSet,
        api::apps::v1::StatefulSet,
        api::autoscaling::v1::HorizontalPodAutoscaler,
        api::autoscaling::v2::HorizontalPodAutoscaler,
        api::batch::v1::CronJob,
        api::batch::v1::Job,
        api::certificates::v1::CertificateSigningRequest,
        api::certificates::v1::ClusterTrustBundle,
        api::certificates::v1::PodCertificateRequest,
        api::coordination::v1::Lease,
        api::core::v1::ComponentStatus,
        api::core::v1::ConfigMap,
        api::core::v1::Endpoints,
        api::core::v1::Event,
        api::core::v1::LimitRange,
        api::core::v1::Namespace,
        api::core::v1::Node,
        api::core::v1::PersistentVolume,
        api::core::v1::PersistentVolumeClaim,
        api::core::v1::Pod,
        api::core::v1::PodTemplate,
        api::core::v1::ReplicationController,
        api::core::v1::ResourceQuota,
        api::core::v1::Secret,
        api::core::v1::Service,
        api::core::v1::ServiceAccount,
        api::discovery::v1::EndpointSlice,
        api::events::v1::Event,
        api::flowcontrol::v1::FlowSchema,
        api::flowcontrol::v1::PriorityLevelConfiguration,
        api::networking::v1::Ingress,
        api::networking::v1::IngressClass,
        api::networking::v1::IPAddress,
        api::networking::v1::NetworkPolicy,
        api::networking::v1::ServiceCIDR,
        api::node::v1::RuntimeClass,
        api::policy::v1::PodDisruptionBudget,
        api::rbac::v1::ClusterRole,
        api::rbac::v1::ClusterRoleBinding,
        api::rbac::v1::Role,
        api::rbac::v1::RoleBinding,
        api::resource::v1::DeviceClass,
        api::resource::v1::DeviceTaintRule,
        api::resource::v1::ResourceClaim,
        api::resource::v1::ResourceClaimTemplate,
        api::resource::v1::ResourceSlice,
        api::scheduling::v1::PriorityClass,
        api::storage::v1::CSIDriver,
        api::storage::v1::CSINode,
        api::storage::v1::CSIStorageCapacity,
        api::storage::v1::StorageClass,
        api::storage::v1::VolumeAttachment,
        api::storage::v1::VolumeAttributesClass,
        api::storagemigration::v1::StorageVersionMigration,
        apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition,
        kube_aggregator::pkg::apis::apiregistration::v1::APIService,
}

/// Short names the API server registers for built-in resources (they live in each
/// resource's storage, not in the OpenAPI schema, so k8s-openapi cannot supply them).
pub const SHORT_NAMES: &[(&str, &str, &[&str])] = &[
    ("", "configmaps", &["cm"]),
    ("", "endpoints", &["ep"]),
    ("", "events", &["ev"]),
    ("", "limitranges", &["limits"]),
    ("", "namespaces", &["ns"]),
    ("", "nodes", &["no"]),
    ("", "persistentvolumeclaims", &["pvc"]),
    ("", "persistentvolumes", &["pv"]),
    ("", "pods", &["po"]),
    ("", "replicationcontrollers", &["rc"]),
    ("", "resourcequotas", &["quota"]),
    ("", "serviceaccounts", &["sa"]),
    ("", "services", &["svc"]),
    ("", "componentstatuses", &["cs"]),
    ("apps", "daemonsets", &["ds"]),
    ("apps", "deployments", &["deploy"]),
    ("apps", "replicasets", &["rs"]),
    ("apps", "statefulsets", &["sts"]),
    ("autoscaling", "horizontalpodautoscalers", &["hpa"]),
    ("batch", "cronjobs", &["cj"]),
    ("certificates.k8s.io", "certificatesigningrequests", &["csr"]),
    ("apiextensions.k8s.io", "customresourcedefinitions", &["crd", "crds"]),
    ("events.k8s.io", "events", &["ev"]),
    ("networking.k8s.io", "ingresses", &["ing"]),
    ("networking.k8s.io", "networkpolicies", &["netpol"]),
    ("policy", "poddisruptionbudgets", &["pdb"]),
    ("scheduling.k8s.io", "priorityclasses", &["pc"]),
    ("storage.k8s.io", "storageclasses", &["sc"]),
    ("storage.k8s.io", "volumeattributesclasses", &["vac"]),
    ("resource.k8s.io", "deviceclasses", &[]),
];

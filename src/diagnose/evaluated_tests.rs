//! A policy's CEL decides the answer where it can be evaluated: a denial is stuck with the
//! policy's own message, an admission says nothing, an unsupported function stays "may deny"
//! and names the function.

use serde_json::{Value, json};

use crate::controllers::Liveness;
use crate::diagnose::{Diagnosis, FindingCode, Related, Severity, Verdict, why_stuck};
use crate::graph::Graph;
use crate::testing::{ObjExt, graph, node, obj};

const NOW: &str = "2026-11-29T12:00:00Z";

fn world(expression: &str) -> Graph {
    graph(world_objects(expression))
}

fn world_objects(expression: &str) -> Vec<Value> {
    let cm = obj("v1", "ConfigMap", Some("ledger"), "q3", "cm1")
        .deleting("2026-11-29T11:00:00Z")
        .finalizers(&["ledger.example.org/archive", "ledger.example.org/audit"]);
    let policy = obj("admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicy", None, "keep-archive", "p1").with(
        "spec",
        json!({"failurePolicy": "Fail",
               "matchConstraints": {"resourceRules": [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["UPDATE"], "resources": ["configmaps"]}]},
               "validations": [{"expression": expression, "message": "ledgers keep their archive finalizer"}]}),
    );
    let binding =
        obj("admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicyBinding", None, "keep-archive-all", "b1")
            .with("spec", json!({"policyName": "keep-archive", "validationActions": ["Deny"]}));
    let ns: Value = obj("v1", "Namespace", None, "ledger", "ns1");
    vec![ns, cm, policy, binding]
}

fn answer(g: &Graph) -> Diagnosis {
    let live = Liveness::new(g, NOW.parse().unwrap());
    why_stuck(g, &live, node(g, "ConfigMap", "q3"))
}

#[test]
fn a_policy_whose_cel_denies_the_removal_is_stuck_with_its_own_message() {
    let g = world(
        "!has(oldObject.metadata.deletionTimestamp) || 'ledger.example.org/archive' in object.metadata.finalizers",
    );
    let d = answer(&g);
    assert_eq!(d.verdict(), Verdict::Stuck);
    let f = d.findings.iter().find(|f| f.code == FindingCode::AdmissionDenied).expect("denied");
    assert_eq!(f.severity, Severity::Error);
    assert!(
        f.message.contains("ValidatingAdmissionPolicy 'keep-archive' with binding 'keep-archive-all' denied request: ledgers keep their archive finalizer"),
        "{}",
        f.message
    );
    assert_eq!(
        f.related,
        [
            Related::Node(node(&g, "ValidatingAdmissionPolicy", "keep-archive")),
            Related::Node(node(&g, "ValidatingAdmissionPolicyBinding", "keep-archive-all"))
        ]
    );
    // the finalizer patch printed for the missing controller is refused the same way, and says so
    let patch = d
        .findings
        .iter()
        .flat_map(|f| &f.remedy)
        .find(|s| {
            s.command
                .as_ref()
                .map(|c| c.line(&Default::default()))
                .is_some_and(|l| l.contains("/metadata/finalizers/0") && !l.contains("--dry-run"))
        })
        .expect("a finalizer patch");
    assert!(patch.text.contains("ValidatingAdmissionPolicy keep-archive allows it"), "{}", patch.text);
}

#[test]
fn a_policy_whose_cel_admits_the_removal_says_nothing() {
    let d = answer(&world("size(object.metadata.finalizers) <= size(oldObject.metadata.finalizers)"));
    assert!(!d.findings.iter().any(|f| f.code == FindingCode::AdmissionDenied), "{:#?}", d.findings);
}

#[test]
fn a_policy_using_an_unsupported_function_may_deny_and_names_it() {
    let d = answer(&world(
        "!has(oldObject.metadata.deletionTimestamp) || object.metadata.finalizers.exists(f, f.matches('^ledger'))",
    ));
    let f = d.findings.iter().find(|f| f.code == FindingCode::AdmissionDenied).expect("may deny");
    assert_eq!(f.severity, Severity::Warning);
    assert!(f.message.contains("may deny") && f.message.contains("calls matches"), "{}", f.message);
}

/// A live controller past `--stuck-after` whose removal the policy's CEL denies: the denial is
/// the one root cause, no stall beside it (contract §4.3.4).
#[test]
fn a_cel_denial_subsumes_the_stall_of_a_live_controller() {
    let expression =
        "!has(oldObject.metadata.deletionTimestamp) || 'ledger.example.org/archive' in object.metadata.finalizers";
    let lease = obj("coordination.k8s.io/v1", "Lease", Some("ledger-system"), "8f3c.ledger.example.org", "l1").with(
        "spec",
        json!({"holderIdentity": "op-1_x", "leaseDurationSeconds": 15, "renewTime": "2026-11-29T11:59:55Z"}),
    );
    let mut objects = world_objects(expression);
    objects.push(lease);
    let g = graph(objects);
    let live = Liveness::new(&g, NOW.parse().unwrap());
    let opts = crate::diagnose::Options { stuck_after: 60 };
    let d = crate::diagnose::why_stuck_with(&g, &live, node(&g, "ConfigMap", "q3"), &opts);
    assert_eq!(d.finalizers[0].owner.controller, crate::controllers::ControllerState::Alive, "{:?}", d.finalizers);
    assert_eq!(d.verdict(), Verdict::Stuck);
    let codes: Vec<FindingCode> = d.findings.iter().map(|f| f.code).collect();
    assert!(codes.contains(&FindingCode::AdmissionDenied), "{codes:?}");
    assert!(!codes.contains(&FindingCode::FinalizerNotProgressing), "{codes:?}");
}

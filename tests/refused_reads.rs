//! Evidence never says a thing is absent where its read was refused (issue 44): a source the
//! cluster would not let us list is "could not be read", never "the snapshot holds no …", and
//! an answer that rests on that absence is Unknown, not Missing.

use serde_json::Value;

use crate::support::apiserver::{ApiServer, Fault, FaultKind, Options};
use crate::support::{DEADLINE, Env, NOW, root, run, stderr};

/// `why-stuck ARGS -o json` against the test API server serving `fixture` with `fault`.
fn answer(fixture: &str, fault: Fault, args: &[&str]) -> (Value, String) {
    let snapshot = root().join("tests/fixtures").join(fixture).join("snapshot.json");
    let server = ApiServer::start_with(&snapshot, Options { faults: vec![fault], ..Options::default() }, 0);
    let env = Env::new(&server.url(), None);
    let mut c = env.gc();
    c.arg("why-stuck").args(args).args(["--now", NOW, "-o", "json"]);
    let o = run(c, DEADLINE);
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    let v: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}\n{}", stderr(&o)));
    crate::support::assert_read_only(&server);
    (v, text)
}

/// The operator's RBAC, Pods and Leases refused one at a time, for the object and for its
/// namespace: the search says what it could not read, never that the snapshot holds none.
#[test]
fn refused_rbac_pods_or_leases_are_never_said_to_be_absent() {
    let faults = [
        (Fault::group("rbac.authorization.k8s.io", FaultKind::Status(403)), "RBAC objects"),
        (Fault::resource("rolebindings", FaultKind::Status(403)), "RBAC objects"),
        (Fault::resource("clusterrolebindings", FaultKind::Status(403)), "RBAC objects"),
        (Fault::resource("clusterroles", FaultKind::Status(403)), "RBAC objects"),
        (Fault::resource("leases", FaultKind::Status(403)), "Leases"),
        (Fault::resource("pods", FaultKind::Status(403)), "Pods"),
    ];
    for (fault, label) in faults {
        for args in [&["site/alpha", "-n", "labs"][..], &["ns/labs"]] {
            let (v, text) = answer("namespace-terminating", fault.clone(), args);
            assert!(!text.contains(&format!("holds no {label}")), "{label} {args:?}: {v:#}");
            assert!(text.contains(&format!("could not read {label}")), "{label} {args:?}: {v:#}");
            assert_eq!(v["verdict"], "Unknown", "{label} {args:?}: nothing proves the controller gone");
        }
    }
}

/// The CSIDriver list refused: not "the snapshot holds no CSIDriver object", and a driver that
/// cannot be looked up is not called uninstalled.
#[test]
fn a_refused_csidriver_list_is_not_an_uninstalled_driver() {
    let pv = ["pv/pvc-5f0e2c71-9b3d-4e8a-a6f4-1d2c3b4a5e6f"];
    let (v, text) = answer("csi-driver-removed", Fault::resource("csidrivers", FaultKind::Status(403)), &pv);
    assert!(!text.contains("holds no CSIDriver"), "{v:#}");
    assert!(text.contains("CSIDriver objects could not be read"), "{v:#}");
    assert_eq!(v["verdict"], "Unknown", "{v:#}");
    // and served, the same answer says the driver is gone
    let (v, _) = answer("csi-driver-removed", Fault::resource("nothing-at-all", FaultKind::Status(403)), &pv);
    assert_eq!(v["verdict"], "Stuck", "{v:#}");
}

//! The JSON contract, as a client would read it: wire structs of the test's own that deny
//! unknown fields, with the closed sets (verdicts, severities, finding codes, plan actions)
//! as enums, and fields the contract always writes required even where they may be null. Every
//! fixture's answers go through them: its checks, `why-stuck --all -A`, and for each object a
//! check names, `tree` both ways, `plan` and `why-stuck --plan`. A field added, renamed or
//! dropped in `src/render/` fails here until the contract (and these structs) say so.

// a field is there to be required and typed by the deserializer, whether or not a check reads it
#![allow(dead_code)]

use std::path::Path;
use std::process::Command;

use serde::{Deserialize, Deserializer};

use crate::support::{self, DEADLINE, NOW, checks, fixtures, run, stderr, stdout};

/// A field the contract always writes, null allowed: missing is an error (unlike a bare
/// `Option`, which serde lets be absent).
fn nullable<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<Option<T>, D::Error> {
    Option::<T>::deserialize(d)
}

/// Contract §4.1.
#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Ref {
    api_version: String,
    kind: String,
    namespace: Option<String>,
    name: String,
    uid: Option<String>,
}

#[derive(Deserialize, Debug, PartialEq, Eq, Clone, Copy)]
enum Verdict {
    Stuck,
    InProgress,
    Unknown,
    NotDeleting,
}

#[derive(Deserialize, Debug, PartialEq, Eq, Clone, Copy)]
enum Severity {
    Error,
    Warning,
    Info,
}

#[derive(Deserialize, Debug, PartialEq, Eq, Clone, Copy)]
enum ControllerState {
    Alive,
    Down,
    Missing,
    Unknown,
}

/// The contract's finding codes (§4.3): a new one fails here until the contract lists it.
#[derive(Deserialize, Debug, PartialEq, Eq, Clone, Copy)]
enum Code {
    NotBeingDeleted,
    FinalizerPending,
    FinalizerControllerDown,
    FinalizerControllerMissing,
    FinalizerControllerUnknown,
    BlockingDependent,
    OwnerUidMismatch,
    DanglingOwnerReference,
    OwnerRefInvalidNamespace,
    UnresolvableOwnerKind,
    NamespaceContentRemaining,
    NamespaceDiscoveryFailure,
    GarbageCollectorStalled,
    OwnerReferenceCycle,
    PodOnUnavailableNode,
    ControllerStalled,
    FinalizerNotProgressing,
    AdmissionWebhookUnavailable,
    AdmissionDenied,
    ConversionWebhookUnavailable,
    NamespaceContentDeletionFailure,
    NamespaceWaitingForPods,
    PodTerminationStalled,
    FinalizerReAdded,
}

/// Contract §4.3.1.
#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Step {
    text: String,
    #[serde(deserialize_with = "nullable")]
    command: Option<String>,
    destructive: bool,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct AnswerStep {
    text: String,
    #[serde(deserialize_with = "nullable")]
    command: Option<String>,
    destructive: bool,
    findings: Vec<usize>,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Finalizer {
    name: String,
    #[serde(deserialize_with = "nullable")]
    removed_by: Option<String>,
    controller: ControllerState,
    evidence: Vec<String>,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Finding {
    code: Code,
    severity: Severity,
    object: Ref,
    related: Vec<Ref>,
    message: String,
    remedy: Vec<Step>,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Event {
    object: Ref,
    #[serde(rename = "type")]
    type_: String,
    reason: String,
    count: i64,
    #[serde(deserialize_with = "nullable")]
    last_seen: Option<String>,
    message: String,
    #[serde(deserialize_with = "nullable")]
    reporting_controller: Option<String>,
}

/// `why-stuck -o json` (contract §4.3).
#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct WhyStuck {
    object: Ref,
    #[serde(deserialize_with = "nullable")]
    deletion_timestamp: Option<String>,
    #[serde(deserialize_with = "nullable")]
    deleting_for_seconds: Option<i64>,
    verdict: Verdict,
    stuck: bool,
    finalizers: Vec<Finalizer>,
    findings: Vec<Finding>,
    steps: Vec<AnswerStep>,
    events: Vec<Event>,
    /// Only under `--plan`.
    plan: Option<Plan>,
    incomplete: Vec<String>,
}

#[derive(Deserialize, Debug, PartialEq, Eq, Clone, Copy)]
enum GroupVerdict {
    Stuck,
    Unknown,
    InProgress,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Cause {
    #[serde(deserialize_with = "nullable")]
    code: Option<Code>,
    message: String,
    related: Vec<Ref>,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Group {
    cause: Cause,
    verdict: GroupVerdict,
    objects: Vec<Ref>,
    oldest_deleting_for_seconds: i64,
}

/// `why-stuck --all -o json` (contract §4.3.2).
#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Sweep {
    groups: Vec<Group>,
    answers: Vec<WhyStuck>,
    incomplete: Vec<String>,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Edge {
    controller: bool,
    block_owner_deletion: bool,
}

/// `tree -o json` (contract §4.4): `dependents`, or with `--owners` `owners`.
#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct TreeNode {
    object: Ref,
    #[serde(deserialize_with = "nullable")]
    deletion_timestamp: Option<String>,
    finalizers: Vec<String>,
    #[serde(deserialize_with = "nullable")]
    edge: Option<Edge>,
    problems: Vec<Code>,
    /// Written only when true: the node was drawn before (a shared dependent, a cycle).
    #[serde(default)]
    already_shown: bool,
    /// An absent owner that was recreated: what has its kind and name now.
    recreated_as: Option<Ref>,
    dependents: Option<Vec<TreeNode>>,
    owners: Option<Vec<TreeNode>>,
    /// The root only.
    incomplete: Option<Vec<String>>,
}

#[derive(Deserialize, Debug, PartialEq, Eq, Clone, Copy)]
enum Cascade {
    Background,
    Foreground,
    Orphan,
}

#[derive(Deserialize, Debug, PartialEq, Eq, Clone, Copy)]
enum Action {
    Delete,
    MarkDeleting,
    Remove,
    RemoveOwnerReferences,
    UnblockOwnerReferences,
    RemoveFinalizer,
    Blocked,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct PlanStep {
    seq: u32,
    actor: String,
    action: Action,
    object: Ref,
    finalizers: Option<Vec<String>>,
    propagation: Option<Cascade>,
    owners: Option<Vec<Ref>>,
    finalizer: Option<String>,
    reason: Option<String>,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct OwnerRefsRemoved {
    object: Ref,
    owners: Vec<Ref>,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Blocked {
    object: Ref,
    finalizers: Vec<String>,
    reason: String,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Outcome {
    removed: Vec<Ref>,
    owner_refs_removed: Vec<OwnerRefsRemoved>,
    blocked: Vec<Blocked>,
}

/// `plan -o json` (contract §4.2).
#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Plan {
    target: Ref,
    cascade: Cascade,
    steps: Vec<PlanStep>,
    result: Outcome,
    notes: Vec<String>,
}

/// What the contract says beyond the shape.
fn check_ref(r: &Ref, what: &str) {
    assert!(!r.api_version.is_empty() && !r.kind.is_empty() && !r.name.is_empty(), "{what}: {r:?}");
    assert!(r.namespace.as_ref().is_none_or(|n| !n.is_empty()), "{what}: empty namespace {r:?}");
    assert!(r.uid.as_ref().is_none_or(|u| !u.is_empty()), "{what}: empty uid {r:?}");
}

fn check_why_stuck(a: &WhyStuck, what: &str) {
    check_ref(&a.object, what);
    assert_eq!(a.stuck, a.verdict == Verdict::Stuck, "{what}: stuck is the verdict");
    assert_eq!(a.deletion_timestamp.is_none(), a.deleting_for_seconds.is_none(), "{what}");
    if a.deletion_timestamp.is_none() {
        assert!(
            matches!(a.verdict, Verdict::NotDeleting | Verdict::Stuck),
            "{what}: {:?} without a deletion",
            a.verdict
        );
    }
    assert!(a.deleting_for_seconds.is_none_or(|s| s >= 0), "{what}");
    for f in &a.findings {
        check_ref(&f.object, what);
        f.related.iter().for_each(|r| check_ref(r, what));
        assert!(!f.message.is_empty(), "{what}: {:?} has no message", f.code);
        assert!(f.remedy.iter().all(|s| !s.text.is_empty()), "{what}");
        assert!(f.remedy.iter().all(|s| s.command.as_ref().is_none_or(|c| !c.contains('\n'))), "{what}");
    }
    for s in &a.steps {
        assert!(!s.text.is_empty() && s.command.as_ref().is_none_or(|c| !c.contains('\n')), "{what}: {s:?}");
        assert!(s.findings.iter().all(|&i| i < a.findings.len()), "{what}: {s:?} names no finding");
        // a step of the answer is a step of every finding it names
        for &i in &s.findings {
            let r = &a.findings[i].remedy;
            assert!(
                r.iter().any(|x| x.text == s.text && x.destructive == s.destructive),
                "{what}: step {:?} is not in finding {i}'s remedy",
                s.text
            );
        }
    }
    // safest first: nothing destructive before a step that is not
    let first_destructive = a.steps.iter().position(|s| s.destructive).unwrap_or(a.steps.len());
    assert!(a.steps[first_destructive..].iter().all(|s| s.destructive), "{what}: steps not ranked safest first");
    for f in &a.finalizers {
        assert!(!f.name.is_empty(), "{what}");
    }
    for e in &a.events {
        check_ref(&e.object, what);
        assert!(e.count >= 1 && !e.reason.is_empty() && !e.type_.is_empty() && !e.message.is_empty(), "{what}: {e:?}");
        assert!(
            e.last_seen.as_ref().is_none_or(|t| !t.is_empty())
                && e.reporting_controller.as_ref().is_none_or(|c| !c.is_empty())
        );
    }
    if let Some(p) = &a.plan {
        check_plan(p, what);
    }
}

fn check_plan(p: &Plan, what: &str) {
    check_ref(&p.target, what);
    for (i, s) in p.steps.iter().enumerate() {
        assert_eq!(s.seq as usize, i + 1, "{what}: seq");
        assert!(!s.actor.is_empty(), "{what}");
        check_ref(&s.object, what);
        // the optional keys appear only for the actions that carry them
        let what = format!("{what}: step {} {:?}", s.seq, s.action);
        assert!(s.finalizers.is_none() || s.action == Action::MarkDeleting, "{what}: finalizers");
        assert!(s.propagation.is_none() || s.action == Action::Delete, "{what}: propagation");
        assert!(
            s.owners.is_none() || matches!(s.action, Action::RemoveOwnerReferences | Action::UnblockOwnerReferences),
            "{what}: owners"
        );
        assert!(
            s.finalizer.is_none() || matches!(s.action, Action::RemoveFinalizer | Action::Blocked),
            "{what}: finalizer"
        );
        // blocked on a finalizer, or on a DELETE that fails (no finalizer then): always why
        assert!(s.action != Action::Blocked || s.reason.as_ref().is_some_and(|r| !r.is_empty()), "{what}: why blocked");
        if let Some(o) = &s.owners {
            o.iter().for_each(|r| check_ref(r, &what));
        }
    }
    p.result.removed.iter().for_each(|r| check_ref(r, what));
    for o in &p.result.owner_refs_removed {
        check_ref(&o.object, what);
        assert!(!o.owners.is_empty(), "{what}");
    }
    for b in &p.result.blocked {
        check_ref(&b.object, what);
        assert!(!b.reason.is_empty(), "{what}");
    }
}

fn check_sweep(s: &Sweep, what: &str) {
    let mut in_groups = 0;
    for g in &s.groups {
        assert!(!g.objects.is_empty() && !g.cause.message.is_empty(), "{what}");
        g.objects.iter().chain(&g.cause.related).for_each(|r| check_ref(r, what));
        assert!(g.oldest_deleting_for_seconds >= 0, "{what}");
        in_groups += g.objects.len();
    }
    // each object is in exactly one group; groups stuck, then unknown, then in progress
    assert_eq!(in_groups, s.answers.len(), "{what}: objects in groups and answers");
    let rank = |v: GroupVerdict| {
        [GroupVerdict::Stuck, GroupVerdict::Unknown, GroupVerdict::InProgress].iter().position(|x| *x == v)
    };
    assert!(s.groups.windows(2).all(|w| rank(w[0].verdict) <= rank(w[1].verdict)), "{what}: group order");
    for a in &s.answers {
        check_why_stuck(a, what);
        assert!(a.deletion_timestamp.is_some(), "{what}: --all answers only what is being deleted");
    }
}

fn check_tree(n: &TreeNode, root: bool, key: &str, what: &str) {
    check_ref(&n.object, what);
    assert_eq!(n.incomplete.is_some(), root, "{what}: incomplete is on the root only");
    assert_eq!(n.edge.is_none(), root, "{what}: every node but the root has an edge");
    let (this, other) = if key == "owners" { (&n.owners, &n.dependents) } else { (&n.dependents, &n.owners) };
    assert!(other.is_none(), "{what}: a {key} tree has no other direction");
    let children = this.as_ref().unwrap_or_else(|| panic!("{what}: no {key} on {:?}", n.object));
    if n.already_shown {
        assert!(children.is_empty(), "{what}: a node already shown is not drawn again");
    }
    if let Some(r) = &n.recreated_as {
        check_ref(r, what);
        assert!(n.object.uid.is_none(), "{what}: only an absent owner is recreated");
    }
    for c in children {
        check_tree(c, false, key, what);
    }
}

fn answer(fixture: &Path, args: &[String]) -> (String, std::process::Output) {
    let mut c = Command::new(support::bin());
    c.args(args).args(["-o", "json", "--now", NOW, "--snapshot"]).arg(fixture.join("snapshot.json"));
    c.env_clear().env("NO_COLOR", "1");
    let out = run(c, DEADLINE);
    let what = format!("{} {}", fixture.file_name().unwrap().to_string_lossy(), args.join(" "));
    assert!(matches!(out.status.code(), Some(0 | 2 | 3)), "{what}: {}", stderr(&out));
    (what, out)
}

fn parse<T: for<'de> Deserialize<'de>>(what: &str, out: &std::process::Output) -> T {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{what}: off the contract: {e}\n{}", stdout(out)))
}

fn strings(a: &[&str]) -> Vec<String> {
    a.iter().map(|s| s.to_string()).collect()
}

/// Every fixture's answers, on the contract's structs.
#[test]
fn every_json_answer_is_on_the_contract() {
    let (mut why, mut all, mut trees, mut plans, mut embedded, mut recreated) = (0, 0, 0, 0, 0, 0);
    for fixture in fixtures() {
        let mut asks: Vec<Vec<String>> = checks(&fixture);
        asks.push(strings(&["why-stuck", "--all", "-A"]));
        // the object of each why-stuck check, both ways in a tree, planned, and planned under why-stuck
        let objects: Vec<Vec<String>> = checks(&fixture)
            .into_iter()
            .filter(|a| a[0] == "why-stuck" && !a.contains(&"--all".to_string()))
            .map(|a| a[1..].iter().take_while(|w| *w != "--stuck-after").cloned().collect())
            .collect();
        for o in objects {
            for head in [&["tree"][..], &["tree", "--owners"], &["plan"], &["why-stuck", "--plan"]] {
                asks.push(strings(head).into_iter().chain(o.iter().cloned()).collect());
            }
        }
        for args in asks {
            let (what, out) = answer(&fixture, &args);
            let owners = args.contains(&"--owners".to_string());
            match args[0].as_str() {
                "why-stuck" if args.contains(&"--all".to_string()) => {
                    check_sweep(&parse::<Sweep>(&what, &out), &what);
                    all += 1;
                }
                "why-stuck" => {
                    let a: WhyStuck = parse(&what, &out);
                    check_why_stuck(&a, &what);
                    embedded += usize::from(a.plan.is_some());
                    why += 1;
                }
                "tree" => {
                    let t: TreeNode = parse(&what, &out);
                    check_tree(&t, true, if owners { "owners" } else { "dependents" }, &what);
                    recreated += usize::from(stdout(&out).contains("\"recreatedAs\""));
                    trees += 1;
                }
                "plan" => {
                    check_plan(&parse::<Plan>(&what, &out), &what);
                    plans += 1;
                }
                other => panic!("{what}: no contract for {other}"),
            }
        }
    }
    assert!(
        why >= 30 && all >= 20 && trees >= 40 && plans >= 25 && embedded >= 25,
        "{why} {all} {trees} {plans} {embedded}"
    );
    assert!(recreated >= 1, "no fixture exercises tree's recreatedAs");
}

/// The structs refuse what the contract does not say: a field too many, a required field
/// missing (even one that may be null), a verdict or code outside the closed sets.
#[test]
fn the_contract_structs_refuse_what_the_contract_does_not_say() {
    let step = serde_json::json!({"text": "t", "command": null, "destructive": false});
    assert!(serde_json::from_value::<Step>(step.clone()).is_ok());
    let mut extra = step.clone();
    extra["why"] = "x".into();
    assert!(serde_json::from_value::<Step>(extra).is_err(), "unknown field accepted");
    let mut missing = step;
    missing.as_object_mut().unwrap().remove("command");
    assert!(serde_json::from_value::<Step>(missing).is_err(), "a missing nullable field accepted");
    assert!(serde_json::from_value::<Verdict>("Stuckish".into()).is_err());
    assert!(serde_json::from_value::<Code>("SomethingNew".into()).is_err());
}

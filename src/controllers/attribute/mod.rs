//! Who removes a finalizer that no built-in controller removes: evidence, strongest first
//! (contract §4.3.3), every rung read before anything is decided ("Weighing the rungs
//! together"), then the liveness of what was found.
//!
//! One pass per kind of evidence, each returning its evidence lines and the workloads it ties
//! ([`Pass`]):
//! 1. [`adder`]: the field manager that added the finalizer (managedFields), resolved to a
//!    workload by its name, containers, ServiceAccount, app label, or the programs and images
//!    its containers run; a person's client means a person added it; GitOps appliers and client
//!    libraries' default managers are clients, never the controller; one that resolves to
//!    nothing but wrote the object since its deletion is alive, whoever runs it;
//! 2. [`reporter`]: the component that reports about the object in its Events;
//! 3. [`leases`]: a leader-election Lease of the finalizer's domain, or one held by a pod of a
//!    workload that RBAC lets update the resource, whatever its name;
//! 4. [`named`] with [`permission`]: a workload named by the finalizer or the object's kind,
//!    together with RBAC that lets it update the resource or its `/finalizers` (read on the
//!    object's own resource for every candidate); [`provenance`]: a workload installed with the
//!    CRD that serves the kind, with that RBAC too, and an installation with nothing left;
//! 5. what is never enough by itself: permission alone ([`permission`]), a name or a product
//!    prefix alone ([`named`]), a workload that is an operand (owned by a custom resource) tied
//!    by one of a lease, a name or its installation.
//!
//! Then [`pick::pick`] chooses among the candidates (the strongest evidence wins; equals tie),
//! and [`verdict::verdict`], the one place that weighs, says Alive, Down, Missing or Unknown:
//! a tie is about which controller, not whether it runs. [`weighing`] says which rungs agreed
//! and which did not, [`explain`] words the answer, naming the rung that decided. Missing is
//! earned: the places the controller could be were readable and empty (or the only adder was a
//! person's client, or the installation of the kind has nothing left), and the evidence says
//! what was searched.

mod adder;
mod alive;
mod explain;
mod leases;
mod named;
mod permission;
mod pick;
mod provenance;
mod reporter;
#[cfg(test)]
mod tests;
mod verdict;
mod weighing;

use std::collections::BTreeMap;

use super::domain::finalizer_domain;
use super::{FinalizerOwner, Liveness};
use crate::graph::NodeId;
use crate::snapshot::Object;

/// The rungs of the ladder that tie a workload to a finalizer, strongest first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(super) enum Rung {
    /// 1: the field manager that added the finalizer is this workload.
    Adder,
    /// 2: the component reporting about the object in its Events is this workload.
    Reporter,
    /// 3: it holds a leader-election lease of the finalizer's domain, or holds a lease and may
    /// update the resource.
    Lease,
    /// 4: it is named by the finalizer or the object's kind, and may update the resource.
    NameAndPermission,
    /// 4: it was installed with the CRD that serves the object's kind, and may update the
    /// resource.
    Provenance,
}

impl Rung {
    /// `rung 3 (a leader-election lease)`: how the evidence names it.
    pub(super) fn label(self) -> &'static str {
        match self {
            Rung::Adder => "rung 1 (the field manager that added the finalizer)",
            Rung::Reporter => "rung 2 (the component reporting about the object in its Events)",
            Rung::Lease => "rung 3 (a leader-election lease)",
            Rung::NameAndPermission => "rung 4 (a name together with RBAC on the resource)",
            Rung::Provenance => "rung 4 (install provenance together with RBAC on the resource)",
        }
    }
}

/// One piece of evidence tying a workload to the finalizer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Tie {
    /// The field manager that added the finalizer resolves to it.
    Adder,
    /// The component reporting about the object in its Events resolves to it.
    Reporter,
    /// It holds a leader lease named after the finalizer's domain.
    DomainLease,
    /// It holds a leader lease naming no other domain (and RBAC on the resource).
    HeldLease,
    /// The finalizer or the object's kind names it.
    Named,
    /// Its name only begins with the product's name the finalizer gives.
    ProductPrefix,
    /// RBAC lets it update the resource; `finalizers`: its `/finalizers` subresource too.
    Permission { finalizers: bool },
    /// It is bound to a role that may update everything (cluster-admin): no one in particular,
    /// but permission enough for a workload named by the finalizer.
    WidePermission,
    /// It is owned by a custom resource: an operand of some operator.
    Operand,
    /// It was installed with the CRD that serves the object's kind (`provenance`).
    Installed,
}

/// Everything that ties one candidate to the finalizer.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Ties {
    pub adder: bool,
    pub reporter: bool,
    pub domain_lease: bool,
    pub held_lease: bool,
    pub named: bool,
    pub prefix: bool,
    pub permission: bool,
    pub finalizers: bool,
    pub wide: bool,
    pub operand: bool,
    pub installed: bool,
}

impl Ties {
    pub(super) fn add(&mut self, t: Tie) {
        match t {
            Tie::Adder => self.adder = true,
            Tie::Reporter => self.reporter = true,
            Tie::DomainLease => self.domain_lease = true,
            Tie::HeldLease => self.held_lease = true,
            Tie::Named => self.named = true,
            Tie::ProductPrefix => self.prefix = true,
            Tie::Permission { finalizers } => {
                self.permission = true;
                self.finalizers |= finalizers;
            }
            Tie::WidePermission => self.wide = true,
            Tie::Operand => self.operand = true,
            Tie::Installed => self.installed = true,
        }
    }

    /// The ties that are evidence only with something else: a lease it holds (naming no other
    /// domain, with RBAC), a name with RBAC, install provenance with RBAC. One of them ties a
    /// workload; an operand (whose name, lease and RBAC may be its operator's product's) needs
    /// two that agree (contract §4.3.3: an operand may be the controller when another rung ties
    /// it, a per-instance operator).
    fn indirect(&self) -> [bool; 3] {
        let permitted = self.permission || self.wide;
        let [lease, named, installed] = [self.held_lease, self.named && permitted, self.installed && permitted];
        let agreeing = [lease, named, installed].iter().filter(|&&b| b).count();
        if self.operand && agreeing < 2 { [false; 3] } else { [lease, named, installed] }
    }

    /// Every rung that ties it, strongest first. Direct evidence (its field manager, its
    /// Events, a lease of the domain) ties an operand too.
    pub(super) fn rungs(&self) -> Vec<Rung> {
        let [lease, named, installed] = self.indirect();
        [
            (self.adder, Rung::Adder),
            (self.reporter, Rung::Reporter),
            (self.domain_lease || lease, Rung::Lease),
            (named, Rung::NameAndPermission),
            (installed, Rung::Provenance),
        ]
        .into_iter()
        .filter_map(|(b, r)| b.then_some(r))
        .collect()
    }

    /// The strongest rung that ties it; `None` when only weak evidence does (permission, a
    /// name or a prefix alone, an operand by one of its name, lease or installation).
    pub(super) fn rung(&self) -> Option<Rung> {
        self.rungs().first().copied()
    }

    /// What the candidates are compared by, strongest evidence first: each rung, then among
    /// the weak, permission on `/finalizers` (what controller-runtime operators ask for),
    /// permission, a name, a prefix.
    pub(super) fn strength(&self) -> [bool; 9] {
        let [lease, named, installed] = self.indirect();
        [
            self.adder,
            self.reporter,
            self.domain_lease || lease,
            named,
            installed,
            self.finalizers,
            self.permission,
            self.named,
            self.prefix,
        ]
    }

    /// How a weakly tied candidate is tied, in the contract's words.
    pub(super) fn weakness(&self) -> &'static str {
        if self.operand && (self.named || self.prefix || self.held_lease) {
            "as an operand only (it is owned by a custom resource; its name and lease are its operator's product's)"
        } else if self.permission {
            "by permission only (RBAC)"
        } else if self.named {
            "by name only"
        } else if self.prefix {
            "by a product-name prefix only"
        } else {
            "by nothing but its running"
        }
    }
}

/// What one pass found: evidence lines in the order found, and the workloads it ties.
#[derive(Default, Debug)]
pub(super) struct Pass {
    pub evidence: Vec<String>,
    pub ties: Vec<(NodeId, Tie)>,
}

impl Pass {
    fn tie(&mut self, w: NodeId, t: Tie) {
        if !self.ties.contains(&(w, t)) {
            self.ties.push((w, t));
        }
    }
}

/// What the search is about: the object, the finalizer, and what they name.
pub(super) struct Search<'a> {
    pub l: &'a Liveness<'a>,
    pub obj: Option<&'a Object>,
    pub finalizer: &'a str,
    pub domain: Option<&'a str>,
    /// The domain and the API groups of the CRDs it matches.
    pub groups: Vec<String>,
    /// The object's API group and resource (plural), where known.
    pub resource: Option<(String, String)>,
}

pub(super) fn attribute(l: &Liveness<'_>, object: NodeId, finalizer: &str) -> FinalizerOwner {
    let g = l.graph;
    let obj = g.object(object);
    let domain = finalizer_domain(finalizer);
    let mut groups: Vec<String> = domain.map(str::to_string).into_iter().collect();
    for c in domain.into_iter().flat_map(|d| l.crds.matching(d)) {
        if !groups.contains(&c.group) {
            groups.push(c.group.clone());
        }
    }
    let resource = obj.map(|o| {
        let plural = g
            .mapper()
            .kind(o.group(), &o.kind)
            .map(|t| t.plural.clone())
            .unwrap_or_else(|| format!("{}s", o.kind.to_ascii_lowercase()));
        (o.group().to_string(), plural)
    });
    let s = Search { l, obj, finalizer, domain, groups, resource };

    let adders = adder::pass(&s);
    let reporters = reporter::pass(&s);
    let permitted = permission::pass(&s);
    let names = named::pass(&s, &permitted.pass);
    let mut cands: BTreeMap<NodeId, Ties> = BTreeMap::new();
    for p in [&adders.pass, &reporters.pass, &permitted.pass, &names.pass] {
        for &(w, t) in &p.ties {
            cands.entry(w).or_default().add(t);
        }
    }
    // a generic manager or reporter (`manager`) matching several workloads only confirms
    // the candidates the other passes found
    for w in adders.confirming.iter().chain(&reporters.confirming) {
        if let Some(c) = cands.get_mut(&w.0) {
            c.add(w.1);
        }
    }
    // every rung is read before anything is decided: RBAC on the object's own resource for
    // whoever another rung found, then what installed the kind's CRD, then leases
    let own = permission::own_resource(&s, &cands);
    let installed = provenance::pass(&s, &cands);
    for &(w, t) in own.ties.iter().chain(&installed.pass.ties) {
        cands.entry(w).or_default().add(t);
    }
    let leased = leases::pass(&s, &cands, names.absent_component.as_deref());
    for &(w, t) in &leased.pass.ties {
        cands.entry(w).or_default().add(t);
    }
    for (&w, c) in cands.iter_mut() {
        if operand_owner(l, w).is_some() {
            c.add(Tie::Operand);
        }
    }
    let mut evidence = Vec::new();
    for p in [adders.pass, reporters.pass, permitted.pass, own, installed.pass, leased.pass, names.pass] {
        evidence.extend(p.evidence);
    }
    for (&w, c) in &cands {
        if c.operand
            && let (Some(o), Some(owner)) = (g.object(w), operand_owner(l, w))
        {
            evidence.push(format!("{} is an operand: it is owned by {owner}", super::workload::describe(o)));
        }
    }
    let found = verdict::Found {
        evidence,
        cands,
        unheld: leased.unheld,
        persons: adders.persons,
        absent_adders: adders.absent,
        adders: adders.controllers,
        writing: adders.writing,
        idle_accounts: permitted.idle_accounts,
        names: names.names,
        installation_gone: installed.gone,
    };
    let picked = pick::pick(&found.cands);
    verdict::verdict(&s, found, picked)
}

/// The custom resource that owns a workload (`ClusterServiceVersion`s aside: OLM installs
/// operators so, and they are no operands), described; `None` when it is no operand.
fn operand_owner(l: &Liveness<'_>, w: NodeId) -> Option<String> {
    let o = l.graph.object(w)?;
    o.owner_references.iter().filter(|r| r.is_controller()).find_map(|r| {
        let group = crate::snapshot::object::group_of(&r.api_version);
        let custom = group.contains('.') && !super::domain::kubernetes_owned(group) && group != "operators.coreos.com";
        custom.then(|| format!("{} {} ({group})", r.kind, r.name))
    })
}

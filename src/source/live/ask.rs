//! The seam between what an answer needs and how it is read: a [`ReadPlan`] (the analysis's
//! policy, in `crate::reads`) returns [`Ask`]s from what has been read so far, and
//! [`super::Session::read`] only executes them, round after round, until the plan asks for
//! nothing more. The session knows HTTP, paging, content negotiation and retries; it does not
//! know why anything is read.
//!
//! Adding a read (as the Events of named objects and the webhooks' backends were, or a
//! terminating-objects pass) is a change to a plan only: return one more [`Ask`] from `ReadPlan::next` — the type, where
//! ([`Ask::namespace`]), how ([`Fetch`]: a list, narrowed by a field selector such as
//! `involvedObject.uid=…`, or a GET of a named object), metadata-only or in full ([`Body`]),
//! with or without managedFields ([`ManagedFields`]), what its answer is for ([`Use`]), and why
//! (for people: in the plan's tests and when debugging a read). Its answer comes back to the plan in the next
//! round as an [`Answered`], and its objects (or its gap) go into the snapshot.

use std::collections::BTreeSet;

use crate::snapshot::raw::RawDoc;

use super::discovery::{Discovery, ListType};
use super::http::Failure;

/// Objects by (namespace, name).
pub type Named = BTreeSet<(Option<String>, String)>;

/// One read the analysis needs: one request (a list is paged, a GET is one object).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ask {
    /// The type read: its group, version, resource path and kind, from discovery.
    pub kind: ListType,
    /// A list: the namespace listed (`None`: every namespace). A GET: the object's namespace.
    pub namespace: Option<String>,
    /// A (paged) list or a GET of one name.
    pub fetch: Fetch,
    /// Metadata-only or in full.
    pub body: Body,
    /// Whether managedFields may be left out of the answer.
    pub managed_fields: ManagedFields,
    /// Whether the answer's objects go into the snapshot or only their managedFields.
    pub use_: Use,
    /// How `--watch` follows it.
    pub follow: Follow,
    /// Why the analysis needs it, for people (tracing, tests).
    pub why: String,
}

/// How a watch (`--watch`) treats a change to what an ask read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Follow {
    /// A change judges the answer again.
    Closely,
    /// A change is kept, and seen when the answer is next judged (another change, or the clock
    /// under a moving clock), but does not judge it again by itself: objects whose frequent
    /// reports matter only where the answer names them, and which the plan then also reads by
    /// name, closely (Nodes: `reads::nodes`).
    Quietly,
}

/// How an ask is read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Fetch {
    /// A (paged) list, optionally narrowed by a field selector (`metadata.name=…`,
    /// `involvedObject.uid=…`) and a label selector (`kubernetes.io/service-name=…`), and
    /// optionally kept to the named objects of its answer ((namespace, name); an object absent
    /// from the answer is not a failure).
    List {
        /// `fieldSelector`, as written.
        field_selector: Option<String>,
        /// `labelSelector`, as written.
        label_selector: Option<String>,
        /// The (namespace, name) pairs kept from the answer; `None` keeps every object.
        only: Option<Named>,
        /// A list of every namespace but these: sent as `metadata.namespace!=` terms of the
        /// field selector, kept typed so that what the answer covers is known without reading
        /// the selector back.
        except: Option<BTreeSet<String>>,
    },
    /// One object by name; a 404 (gone since it was listed) is not a failure.
    Get(String),
}

/// Metadata-only, or in full.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Body {
    /// `PartialObjectMetadata(List)`: names, owners, finalizers, labels — never a spec.
    Metadata,
    /// In full for the kinds whose spec or status the analysis reads
    /// (`snapshot::object::keeps_body`); metadata-only for every other kind, and Secrets
    /// are never read in full.
    Full,
}

/// Whether the answer may leave out `metadata.managedFields` (KEP-5958).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ManagedFields {
    /// Ask with managedFields (captures, one answer's full lists, and reads for the finalizers'
    /// managers).
    Keep,
    /// Ask without them first (metadata-only lists, and the sweep's full lists beside
    /// deletions; a server without the gate sends them anyway). GETs keep them.
    Drop,
}

/// What an answer is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Use {
    /// Its objects go into the snapshot.
    Objects,
    /// Only its objects' managedFields are used: put back, by uid, on objects already read
    /// without them (never adds an object).
    ManagedFieldsOnly,
}

impl Ask {
    /// A list of a type, metadata-only, with managedFields, for its objects.
    pub fn list(kind: &ListType, namespace: Option<String>, why: impl Into<String>) -> Ask {
        Ask {
            kind: kind.clone(),
            namespace,
            fetch: Fetch::List { field_selector: None, label_selector: None, only: None, except: None },
            body: Body::Metadata,
            managed_fields: ManagedFields::Keep,
            use_: Use::Objects,
            follow: Follow::Closely,
            why: why.into(),
        }
    }

    /// A GET of one object, metadata-only, with managedFields, for its object.
    pub fn get(kind: &ListType, namespace: Option<String>, name: &str, why: impl Into<String>) -> Ask {
        Ask { fetch: Fetch::Get(name.to_string()), ..Ask::list(kind, namespace, why) }
    }

    /// Followed quietly by a watch ([`Follow::Quietly`]).
    pub fn quietly(mut self) -> Ask {
        self.follow = Follow::Quietly;
        self
    }

    /// In full ([`Body::Full`]) rather than metadata-only.
    pub fn full(mut self) -> Ask {
        self.body = Body::Full;
        self
    }

    /// With the body given.
    pub fn body(mut self, body: Body) -> Ask {
        self.body = body;
        self
    }

    /// Without managedFields first when `drop` ([`ManagedFields::Drop`]), else with them.
    pub fn dropping_managed_fields(mut self, drop: bool) -> Ask {
        self.managed_fields = if drop { ManagedFields::Drop } else { ManagedFields::Keep };
        self
    }

    /// Narrowed by a field selector (`involvedObject.uid=…`), passed as written; a GET ignores it.
    pub fn selecting(mut self, field_selector: String) -> Ask {
        if let Fetch::List { field_selector: s, .. } = &mut self.fetch {
            *s = Some(field_selector);
        }
        self
    }

    /// Narrowed by a label selector (`kubernetes.io/service-name=…`), passed as written; a GET
    /// ignores it.
    pub fn labelled(mut self, label_selector: String) -> Ask {
        if let Fetch::List { label_selector: s, .. } = &mut self.fetch {
            *s = Some(label_selector);
        }
        self
    }

    /// Keeping only these (namespace, name) from a list's answer; a GET ignores it.
    pub fn only(mut self, objects: Named) -> Ask {
        if let Fetch::List { only, .. } = &mut self.fetch {
            *only = Some(objects);
        }
        self
    }

    /// Listing every namespace but `namespaces` (an ask of every namespace); a GET ignores it.
    pub fn except(mut self, namespaces: BTreeSet<String>) -> Ask {
        if let Fetch::List { except, .. } = &mut self.fetch {
            *except = Some(namespaces);
        }
        self
    }

    /// Read for the managedFields of objects already read without them
    /// ([`Use::ManagedFieldsOnly`]).
    pub fn for_managed_fields(mut self) -> Ask {
        self.use_ = Use::ManagedFieldsOnly;
        self
    }

    /// Whether this ask lists the type across every namespace, or in `namespace`, with the
    /// whole answer kept (no selector, no filter) and in the body given.
    pub fn covers(&self, kind: &ListType, namespace: Option<&str>, body: Body) -> bool {
        self.kind == *kind
            && self.body == body
            && self.use_ == Use::Objects
            && match &self.fetch {
                Fetch::List { field_selector: None, label_selector: None, only: None, except: None } => {
                    self.namespace.is_none() || self.namespace.as_deref() == namespace
                }
                Fetch::List { field_selector: None, label_selector: None, only: None, except: Some(x) } => {
                    self.namespace.is_none() && namespace.is_some_and(|ns| !x.contains(ns))
                }
                _ => false,
            }
    }
}

impl Fetch {
    /// The field selector sent: the one given, and `metadata.namespace!=` for each namespace
    /// left out.
    pub fn field_selector(&self) -> Option<String> {
        let Fetch::List { field_selector, except, .. } = self else { return None };
        let terms: Vec<String> = field_selector
            .iter()
            .cloned()
            .chain(except.iter().flatten().map(|ns| format!("metadata.namespace!={ns}")))
            .collect();
        (!terms.is_empty()).then(|| terms.join(","))
    }
}

/// An ask and its answer.
#[derive(Clone)]
pub struct Answered {
    /// What was asked.
    pub ask: Ask,
    /// The documents read (a list's pages' items, or the one object of a GET), or why not; a
    /// GET answered 404 is a failure the snapshot does not count as a gap.
    pub result: Result<Vec<RawDoc>, Failure>,
    /// Asked without managedFields and no object of the answer carries any: the server
    /// honoured the opt-out (an object written since server-side apply has at least one entry).
    pub managed_fields_dropped: bool,
}

/// The analysis's side of a read: what to read next, given every answer so far (in the order
/// asked). An empty answer ends the read. Called once per round; the asks of one round are
/// read concurrently.
pub trait ReadPlan {
    /// The asks of the next round, from discovery and every answer so far; empty when nothing more
    /// is needed.
    fn next(&mut self, d: &Discovery, answers: &[Answered]) -> Vec<Ask>;
}

//! What the garbage collector ends up doing with an object, given its owner references
//! (attemptToDeleteItem: solid, dangling and waiting owners).

use super::OwnerState;

/// What the GC's attemptToDeleteItem ends up doing with an object, given its references.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GcVerdict {
    /// No owner references: not garbage.
    NoOwners,
    /// At least one solid owner: kept (dangling and waiting references are stripped).
    Kept,
    /// No solid owner and every reference resolves: the GC deletes the object.
    Collected,
    /// A reference the GC cannot resolve (or a namespaced owner of a cluster-scoped object):
    /// the GC never acts on this object, whatever its other references say.
    NeverActedOn,
    /// No owner is known solid and one could not be read: whether the GC keeps or deletes
    /// the object cannot be told from the input.
    Untold,
}

impl GcVerdict {
    /// The verdict for an object whose references were classified as `states`.
    pub fn of(states: &[OwnerState]) -> GcVerdict {
        if states.is_empty() {
            GcVerdict::NoOwners
        } else if states.iter().any(OwnerState::is_error) {
            GcVerdict::NeverActedOn
        } else if states.contains(&OwnerState::Solid) {
            GcVerdict::Kept
        } else if states.contains(&OwnerState::Unread) {
            GcVerdict::Untold
        } else {
            GcVerdict::Collected
        }
    }
}

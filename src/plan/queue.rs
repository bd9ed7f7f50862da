//! The GC's work queues (`attemptToDelete`, `attemptToOrphan`): FIFO and de-duplicated, as
//! a client-go workqueue is. Each entry carries the wave in which it became ready.

use std::collections::{HashSet, VecDeque};

use crate::graph::NodeId;

/// One de-duplicated FIFO queue.
#[derive(Debug, Default)]
pub struct WorkQueue {
    items: VecDeque<(NodeId, u32)>,
    queued: HashSet<NodeId>,
}

impl WorkQueue {
    /// Adds `n` unless it is already waiting (a workqueue keeps one entry per item).
    pub fn add(&mut self, n: NodeId, wave: u32) {
        if self.queued.insert(n) {
            self.items.push_back((n, wave));
        }
    }

    /// Takes the oldest entry and its wave; it may be added again from then on.
    pub fn pop(&mut self) -> Option<(NodeId, u32)> {
        let (n, w) = self.items.pop_front()?;
        self.queued.remove(&n);
        Some((n, w))
    }

    /// Whether nothing waits.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// How many entries wait (each item at most once).
    pub fn len(&self) -> usize {
        self.items.len()
    }
}

/// Both GC queues.
#[derive(Debug, Default)]
pub struct Queues {
    /// `attemptToDelete`: items the GC checks for dangling owners, and owners deleting in the
    /// foreground.
    pub attempt_to_delete: WorkQueue,
    /// `attemptToOrphan`: owners deleted with the `orphan` finalizer, whose dependents lose their
    /// references.
    pub attempt_to_orphan: WorkQueue,
}

/// Which worker an item goes to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Work {
    /// `attemptToDeleteItem`: the item may be collected, or its foreground deletion moved on.
    Delete,
    /// `orphanDependents` and then removal of the `orphan` finalizer.
    Orphan,
}

impl Queues {
    /// The next item: the orphan queue first, so an orphaning owner strips its dependents
    /// before they are looked at again (the real workers run concurrently; see the notes).
    pub fn pop(&mut self) -> Option<(Work, NodeId, u32)> {
        if let Some((n, w)) = self.attempt_to_orphan.pop() {
            return Some((Work::Orphan, n, w));
        }
        self.attempt_to_delete.pop().map(|(n, w)| (Work::Delete, n, w))
    }

    /// Whether both queues are empty (the GC has nothing left to do).
    pub fn is_empty(&self) -> bool {
        self.attempt_to_delete.is_empty() && self.attempt_to_orphan.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deduplicates_and_keeps_fifo_order() {
        let mut q = WorkQueue::default();
        q.add(NodeId(2), 1);
        q.add(NodeId(1), 1);
        q.add(NodeId(2), 3);
        assert_eq!(q.len(), 2);
        assert_eq!(q.pop(), Some((NodeId(2), 1)));
        q.add(NodeId(2), 4);
        assert_eq!(q.pop(), Some((NodeId(1), 1)));
        assert_eq!(q.pop(), Some((NodeId(2), 4)));
        assert!(q.is_empty());
    }

    #[test]
    fn orphan_work_comes_first() {
        let mut q = Queues::default();
        q.attempt_to_delete.add(NodeId(1), 1);
        q.attempt_to_orphan.add(NodeId(2), 1);
        assert_eq!(q.pop(), Some((Work::Orphan, NodeId(2), 1)));
        assert_eq!(q.pop(), Some((Work::Delete, NodeId(1), 1)));
        assert!(q.is_empty());
    }
}

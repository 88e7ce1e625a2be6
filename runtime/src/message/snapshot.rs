//! A message queue's side of a snapshot ([`World::snapshot_messages`](crate::World::snapshot_messages)):
//! the log of kept messages and every reader's cursor, cloned out and put
//! back. Between iterations what writers sent has joined the log (the
//! boundary gathers it); what other threads sent through a
//! [`MessageSender`](crate::MessageSender) and the boundary has not
//! drained yet stays in its queue, untouched.

use std::collections::VecDeque;

use super::{Cursor, Messages};

/// A message queue's log and cursors, as a snapshot keeps them.
#[derive(Debug)]
pub(crate) struct CapturedLog<T> {
    messages: VecDeque<T>,
    first: u64,
    readers: Vec<Cursor>,
    bound: Option<usize>,
    end_at_boundary: u64,
}

impl<T> Default for CapturedLog<T> {
    fn default() -> Self {
        Self {
            messages: VecDeque::new(),
            first: 0,
            readers: Vec::new(),
            bound: None,
            end_at_boundary: 0,
        }
    }
}

impl<T: Clone> Clone for CapturedLog<T> {
    fn clone(&self) -> Self {
        Self {
            messages: self.messages.clone(),
            first: self.first,
            readers: self.readers.clone(),
            bound: self.bound,
            end_at_boundary: self.end_at_boundary,
        }
    }

    /// Field by field, so a snapshot taken again reuses its memory.
    fn clone_from(&mut self, source: &Self) {
        self.messages.clone_from(&source.messages);
        self.first = source.first;
        self.readers.clone_from(&source.readers);
        self.bound = source.bound;
        self.end_at_boundary = source.end_at_boundary;
    }
}

impl<T> CapturedLog<T> {
    /// How many messages it keeps.
    pub(crate) fn len(&self) -> usize {
        self.messages.len()
    }

    /// The bytes of heap memory it holds.
    pub(crate) fn heap_bytes(&self) -> usize {
        self.messages.capacity() * size_of::<T>() + self.readers.capacity() * size_of::<Cursor>()
    }
}

impl<T: Clone + Send + Sync + 'static> Messages<T> {
    /// Clones the log and the readers' cursors into `into` (reusing its
    /// memory).
    ///
    /// # Safety
    /// No node of the world holding it runs (SOUNDNESS N9): the log is
    /// entered only by a reader or through `&mut self`.
    pub(crate) unsafe fn capture_log(&self, into: &mut CapturedLog<T>) {
        self.log.with(|log| {
            // SAFETY: no reader runs (caller), and `&self` excludes `&mut`.
            let log = unsafe { &*log };
            into.messages.clone_from(&log.messages);
            into.first = log.first;
            into.readers.clone_from(&log.readers);
            into.bound = log.bound;
            into.end_at_boundary = log.end_at_boundary;
        });
    }

    /// Puts `from` in place of the log and the readers' cursors; the old
    /// ones come back, for the caller to drop.
    pub(crate) fn restore_log(&mut self, mut from: CapturedLog<T>) -> CapturedLog<T> {
        let log = self.log_mut();
        std::mem::swap(&mut log.messages, &mut from.messages);
        std::mem::swap(&mut log.first, &mut from.first);
        std::mem::swap(&mut log.readers, &mut from.readers);
        std::mem::swap(&mut log.bound, &mut from.bound);
        std::mem::swap(&mut log.end_at_boundary, &mut from.end_at_boundary);
        from
    }
}

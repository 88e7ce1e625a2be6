//! Messages: values systems send to each other, each reader with its own
//! cursor (reference 002's message readers, reference 003's subscriptions).
//!
//! - [`Publish<T>`]: sends. Shared access to the message lane of `T`, so
//!   any number of writers run together; each appends to a lock-on-resize
//!   array (one atomic claim per message).
//! - [`Subscribe<T>`]: reads every message of `T` it has not read, exactly
//!   once. A read-only gate in the lane: it runs after every writer placed
//!   before it in plan order, and a writer placed after it runs after it
//!   (delivering to it in the next iteration). Readers of one type run one
//!   after another, never beside a writer.
//! - [`MessageSender<T>`] (`World::sender`): sends from any thread, through
//!   the collections' bounded MPSC queue, drained at the boundary; once the
//!   world is gone, a send hands the message back
//!   ([`SendError::Disconnected`]).
//!
//! # Order
//!
//! Writers append in whatever order their threads reach the array; the
//! first reader after them (or the boundary) sorts what they appended by
//! where each message was sent: the sending node (plan order), then the
//! node's send order (the place its commands use, so a parallel query's
//! slices send in row order, nested fan-outs in the nested loops' order,
//! and threads the node started itself after its own). Every reader therefore sees one log, the same
//! for every executor and thread count. Messages from other threads follow
//! at the boundary, in the order the queue received them.
//!
//! # Failed nodes
//!
//! A node that fails sends nothing: at the boundary, what it sent with
//! [`Publish`] (from its body or from any slice it fanned out) and what it
//! sent through a [`MessageSender`] of this world from inside its run are
//! dropped unread, on every executor. No reader reads them before: every
//! reader after a writer in plan order waits for it, and a failed node
//! never completes.
//!
//! # Cursors and retention
//!
//! Each reader (a node's body, or one of its run conditions) has a cursor,
//! a message number: it reads from there and moves it as it reads. A reader
//! skipped (run condition false, disabled) keeps it and catches up. A
//! reader's cursor is made when it is registered, at the oldest message
//! kept, so what is sent before it first runs is kept for it. At the boundary, messages every
//! reader has read are dropped (with no reader, messages are kept one more
//! iteration, for readers added next), as are the cursors of removed nodes;
//! with a bound ([`Messages::set_bound`]) the oldest beyond it are dropped
//! too, and a reader that had not read them sees the count
//! ([`Subscribe::missed`]).

#[cfg(loom)]
#[doc(hidden)]
pub mod loom_hooks;
mod param;
mod sender;
pub(crate) mod snapshot;

use std::collections::VecDeque;
use std::fmt;

use sluice_collections::LockOnResizeArray;

use crate::recording::Place;
use crate::sync::UnsafeCell;
use crate::system::BoundaryNodes;

pub use param::{ParRead, Publish, Subscribe, Unread};
pub(crate) use param::{ReaderPart, resolve_messages};
use sender::Inbox;
pub use sender::{MessageSender, SendError};

/// The capacity of a [`MessageSender`]'s queue unless
/// [`World::sender_with_capacity`](crate::World::sender_with_capacity) asks
/// for another.
pub const DEFAULT_SENDER_CAPACITY: usize = 1024;

/// Who reads: a node (registration index; `u32::MAX` off a node) and which
/// part of it (0: the body, `i + 1`: run condition `i`).
pub(crate) type ReaderKey = (u32, u32);

/// One message sent by a running node, with where it was sent.
struct Pending<T> {
    place: Place,
    message: T,
}

/// One reader's cursor.
#[derive(Debug, Clone, Copy)]
struct Cursor {
    key: ReaderKey,
    /// The number of the next message to read.
    next: u64,
    /// Messages dropped (by the bound) before this reader read them, not
    /// yet reported.
    missed: u64,
}

/// The ordered log and the readers' cursors.
///
/// Invariants: `messages[i]` has number `first + i`; `readers` is sorted by
/// key, one cursor per key; `scratch` is empty between uses.
struct Log<T> {
    messages: VecDeque<T>,
    first: u64,
    readers: Vec<Cursor>,
    bound: Option<usize>,
    /// The log's end at the previous boundary.
    end_at_boundary: u64,
    /// Reused to sort what writers appended.
    scratch: Vec<Pending<T>>,
}

impl<T> Log<T> {
    /// The number one past the newest message.
    fn end(&self) -> u64 {
        self.first + self.messages.len() as u64
    }

    /// Appends what writers sent since the last gather, in send order; what
    /// the nodes at the plan positions `failed` sent is dropped instead
    /// (after the rest joined the log, so a panicking `Drop` loses nothing
    /// else).
    fn gather(&mut self, pending: &mut LockOnResizeArray<Pending<T>>, failed: &[u32]) {
        if pending.is_empty() {
            return;
        }
        self.scratch.extend(pending.drain());
        self.scratch.sort_unstable_by_key(|pending| pending.place);
        if failed.is_empty() {
            self.messages
                .extend(self.scratch.drain(..).map(|pending| pending.message));
            return;
        }
        let sent = |pending: &mut Pending<T>| !failed.contains(&pending.place.rank());
        let kept = self.scratch.extract_if(.., sent);
        self.messages.extend(kept.map(|pending| pending.message));
        self.scratch.clear();
    }

    /// The index of `key`'s cursor, made (at the oldest message kept) on
    /// first use; a cursor behind the log counts what it missed.
    fn reader(&mut self, key: ReaderKey) -> usize {
        let index = match self.readers.binary_search_by_key(&key, |cursor| cursor.key) {
            Ok(index) => index,
            Err(index) => {
                let cursor = Cursor {
                    key,
                    next: self.first,
                    missed: 0,
                };
                self.readers.insert(index, cursor);
                index
            }
        };
        let cursor = &mut self.readers[index];
        if cursor.next < self.first {
            cursor.missed += self.first - cursor.next;
            cursor.next = self.first;
        }
        index
    }

    /// Drops the oldest message (numbers move on first, so a panicking
    /// `Drop` leaves the log consistent).
    fn drop_oldest(&mut self) {
        if let Some(message) = self.messages.pop_front() {
            self.first += 1;
            drop(message);
        }
    }
}

/// The messages of type `T` a world holds: the log every reader reads, the
/// readers' cursors, and what writers sent since the last reader. A world
/// makes it on first use (a [`Publish<T>`] or [`Subscribe<T>`] parameter,
/// or [`World::sender`](crate::World::sender)).
pub struct Messages<T: Send + Sync + 'static> {
    /// Sent by running writers, any number at once (`&self`).
    pending: UnsafeCell<LockOnResizeArray<Pending<T>>>,
    /// Entered only by a reader (alone in the lane: the planner makes it a
    /// gate) or through `&mut self` (the boundary).
    log: UnsafeCell<Log<T>>,
    /// The queue other threads send through, once a sender was made.
    inbox: Option<Inbox<T>>,
}

// SAFETY: `pending` is appended to through `&self` by writers, which the
// lane lets run together (the array takes concurrent pushes), and drained
// only by a reader (alone in the lane) or through `&mut self`; `log` is
// entered only by a reader or through `&mut self`; the consumer is reached
// only through `&mut self` (`SyncWrapper`). `T: Send + Sync`.
unsafe impl<T: Send + Sync + 'static> Sync for Messages<T> {}

impl<T: Send + Sync + 'static> Default for Messages<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: Send + Sync + 'static> fmt::Debug for Messages<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Messages")
            .field("type", &std::any::type_name::<T>())
            .finish_non_exhaustive()
    }
}

impl<T: Send + Sync + 'static> Messages<T> {
    /// No messages, no readers, no bound.
    pub fn new() -> Self {
        Self {
            pending: UnsafeCell::new(LockOnResizeArray::new()),
            log: UnsafeCell::new(Log {
                messages: VecDeque::new(),
                first: 0,
                readers: Vec::new(),
                bound: None,
                end_at_boundary: 0,
                scratch: Vec::new(),
            }),
            inbox: None,
        }
    }

    fn log_mut(&mut self) -> &mut Log<T> {
        self.log.get_mut()
    }

    /// The messages kept (read or not by some reader), oldest first,
    /// gathering what writers sent first.
    pub fn kept(&mut self) -> impl ExactSizeIterator<Item = &T> + '_ {
        self.gather();
        self.log.get_mut().messages.iter()
    }

    /// How many messages are kept.
    pub fn len(&mut self) -> usize {
        self.gather();
        self.log_mut().messages.len()
    }

    /// Whether no message is kept.
    pub fn is_empty(&mut self) -> bool {
        self.len() == 0
    }

    /// How many messages have joined the log since it was made (kept,
    /// read, dropped or cleared alike), gathering what writers sent first:
    /// the difference between two calls is what was sent in between (the
    /// inspector's messages per frame).
    ///
    /// ```
    /// use sluice::message::Messages;
    ///
    /// let mut messages = Messages::new();
    /// messages.send(1);
    /// messages.send(2);
    /// messages.clear();
    /// messages.send(3);
    /// assert_eq!(messages.sent(), 3);
    /// assert_eq!(messages.len(), 1);
    /// ```
    pub fn sent(&mut self) -> u64 {
        self.gather();
        self.log_mut().end()
    }

    /// How many readers have a cursor.
    pub fn readers(&mut self) -> usize {
        self.log_mut().readers.len()
    }

    /// Keeps at most `bound` messages (`None`: until every reader read
    /// them); the oldest beyond it are dropped at the boundary.
    pub fn set_bound(&mut self, bound: Option<usize>) {
        self.log_mut().bound = bound;
    }

    /// Sends `message` between iterations: it follows everything sent so
    /// far.
    pub fn send(&mut self, message: T) {
        self.gather();
        self.log_mut().messages.push_back(message);
    }

    /// Drops every message kept (and what writers sent since the last
    /// reader), read or not: every reader's cursor moves past them, and
    /// none of them counts as [missed](Subscribe::missed) (they were
    /// dropped on purpose). What other threads sent through a
    /// [`MessageSender`] joins at the next boundary, as always.
    pub fn clear(&mut self) {
        drop(self.drain());
    }

    /// Takes every message kept (and what writers sent since the last
    /// reader) out, oldest first: every reader's cursor moves past them, as
    /// [`clear`](Self::clear) does. Messages the iterator is dropped before
    /// reaching are dropped.
    ///
    /// ```
    /// use sluice::message::Messages;
    ///
    /// let mut messages = Messages::new();
    /// messages.send(1);
    /// messages.send(2);
    /// assert_eq!(messages.drain().collect::<Vec<_>>(), [1, 2]);
    /// assert!(messages.is_empty());
    /// ```
    pub fn drain(&mut self) -> impl ExactSizeIterator<Item = T> + DoubleEndedIterator + '_ {
        self.gather();
        let log = self.log_mut();
        // Numbers and cursors move first: a message's `Drop` that panics
        // mid-drain leaves the log consistent (the rest are dropped by the
        // unwinding iterator).
        let end = log.end();
        log.first = end;
        for cursor in &mut log.readers {
            cursor.next = cursor.next.max(end);
        }
        log.messages.drain(..)
    }

    /// Moves what writers sent into the log.
    fn gather(&mut self) {
        let (pending, log) = (self.pending.get_mut(), self.log.get_mut());
        log.gather(pending, &[]);
    }

    /// A sender into the queue, made with `capacity` (rounded up to a power
    /// of two) for world `world` on first use.
    pub(crate) fn sender(&mut self, capacity: usize, world: u64) -> MessageSender<T> {
        self.inbox
            .get_or_insert_with(|| Inbox::new(capacity, world))
            .sender()
    }

    /// The boundary: gathers what writers sent, then what other threads
    /// sent, dropping what failed nodes sent; forgets the cursors of nodes
    /// that are gone; drops what every reader has read (with no reader,
    /// what is older than the previous boundary), then the oldest beyond
    /// the bound.
    pub(crate) fn at_boundary(&mut self, nodes: &BoundaryNodes<'_>) {
        let Self {
            inbox,
            log,
            pending,
        } = self;
        let log = log.get_mut();
        log.gather(pending.get_mut(), nodes.failed_ranks);
        if nodes.gather_only {
            return;
        }
        if let Some(inbox) = inbox {
            inbox.drain(nodes.world, nodes.failed, |message| {
                log.messages.push_back(message);
            });
        }
        let live = nodes.live;
        log.readers
            .retain(|cursor| cursor.key.0 == u32::MAX || live(cursor.key.0));
        let read_by_all = log
            .readers
            .iter()
            .map(|cursor| cursor.next)
            .min()
            .unwrap_or(log.end_at_boundary);
        while log.first < read_by_all && !log.messages.is_empty() {
            log.drop_oldest();
        }
        if let Some(bound) = log.bound {
            while log.messages.len() > bound {
                log.drop_oldest();
            }
        }
        log.end_at_boundary = log.end();
    }
}

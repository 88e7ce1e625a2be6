//! The [`Publish`] and [`Subscribe`] parameters, and which part of a node a
//! reader is.

use std::iter::FusedIterator;

use super::{Cursor, Log, Messages, Pending, ReaderKey};
use crate::access::{AccessKind, ServiceId};
use crate::node::NodeBuilder;
use crate::recording::RecordsFor;
use crate::registry::Registry;
use crate::running;
use crate::system::{BoundaryHooks, Param, ReadOnlyParam, ServiceCells};

/// While alive, readers on this thread are part `part` of the running node.
#[derive(Debug)]
pub(crate) struct ReaderPart {
    previous: u32,
}

impl ReaderPart {
    pub(crate) fn enter(part: u32) -> Self {
        Self {
            previous: running::replace_reader_part(part),
        }
    }
}

impl Drop for ReaderPart {
    fn drop(&mut self) {
        let previous = self.previous;
        running::replace_reader_part(previous);
    }
}

/// The running reader's key.
fn reader_key() -> ReaderKey {
    (running::recorder().node(), running::reader_part())
}

/// Makes sure the world holds `Messages<T>`, and that its boundary runs.
pub(crate) fn resolve_messages<T: Send + Sync + 'static>(
    registry: &mut Registry,
    hooks: &mut BoundaryHooks,
) -> ServiceId {
    if registry.get::<Messages<T>>().is_none() {
        registry.insert(Messages::<T>::new());
    }
    let id = registry.resolve::<Messages<T>>();
    hooks.add_messages(id, |slot, nodes| {
        if let Some(messages) = slot
            .value
            .as_deref_mut()
            .and_then(|value| value.downcast_mut::<Messages<T>>())
        {
            messages.at_boundary(nodes);
        }
    });
    id
}

/// Sends messages of type `T` from a system: shared access to `T`'s message
/// lane, so any number of writers run together.
///
/// ```
/// use sluice::{NodeBuilder, Publish, Subscribe, World};
///
/// struct Damage(u32);
/// #[derive(Default)]
/// struct Total(u32);
///
/// let mut world = World::new();
/// world.insert(Total::default());
/// world.add_system(NodeBuilder::new("hit").system(|hits: Publish<Damage>| {
///     hits.send(Damage(3));
///     hits.send(Damage(4));
/// }));
/// world.add_system(NodeBuilder::new("apply").system(
///     |mut hits: Subscribe<Damage>, total: &mut Total| {
///         total.0 += hits.unread().map(|d| d.0).sum::<u32>();
///     },
/// ));
/// world.run_iteration().unwrap();
/// world.run_iteration().unwrap();
/// assert_eq!(world.get::<Total>().unwrap().0, 14, "each message read once");
/// ```
///
/// What it sends belongs to the node handed it, from whichever thread
/// sends (slices it fans out in slice order; threads it starts itself after
/// its own): never read if that node fails.
pub struct Publish<'w, T: Send + Sync + 'static> {
    messages: &'w Messages<T>,
    records_for: RecordsFor,
}

impl<T: Send + Sync + 'static> std::fmt::Debug for Publish<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Publish")
            .field("type", &std::any::type_name::<T>())
            .finish()
    }
}

impl<T: Send + Sync + 'static> Publish<'_, T> {
    /// Sends `message`: readers after this system in plan order read it in
    /// this iteration, readers before it in the next. If this system fails,
    /// it is never read (a failed node contributes nothing it recorded).
    pub fn send(&self, message: T) {
        let pending = Pending {
            place: self.records_for.next_place(),
            message,
        };
        // SAFETY: writers only push (the array takes concurrent pushes);
        // the array is drained only by a reader, which the lane never runs
        // beside a writer, or through `&mut Messages`.
        self.messages
            .pending
            .with(|pending_array| unsafe { (*pending_array).push(pending) });
    }

    /// Sends every message of `messages`, in order, as that many
    /// [`send`](Self::send)s would (bevy's `MessageWriter::write_batch`).
    #[doc(alias = "send_batch")]
    pub fn write_batch(&self, messages: impl IntoIterator<Item = T>) {
        for message in messages {
            self.send(message);
        }
    }
}

// SAFETY: `declare` declares shared access to `Messages<T>`; `fetch` reads
// only its slot, and writers only push to its concurrent array.
unsafe impl<T: Send + Sync + 'static> Param for Publish<'_, T> {
    type Item<'w> = Publish<'w, T>;
    const KIND: AccessKind = AccessKind::Shared;

    fn service_name() -> &'static str {
        std::any::type_name::<Messages<T>>()
    }

    fn declare(node: NodeBuilder) -> NodeBuilder {
        node.reads::<Messages<T>>()
    }

    fn resolve(registry: &mut Registry, hooks: &mut BoundaryHooks) -> ServiceId {
        resolve_messages::<T>(registry, hooks)
    }

    unsafe fn fetch<'w>(id: ServiceId, cells: &ServiceCells<'w>) -> Publish<'w, T> {
        // SAFETY: the node declared shared access to the messages.
        let messages =
            unsafe { cells.get::<Messages<T>>(id) }.expect("resolve inserted the messages");
        Publish {
            messages,
            records_for: RecordsFor::current(),
        }
    }
}

/// Reads the messages of type `T` this reader has not read, exactly once:
/// a system's body and each of its run conditions keep their own cursor.
/// A read-only gate in `T`'s message lane: it runs after every writer
/// before it in plan order (see the [module docs](crate::message)).
pub struct Subscribe<'w, T: Send + Sync + 'static> {
    log: &'w mut Log<T>,
    reader: usize,
}

impl<T: Send + Sync + 'static> std::fmt::Debug for Subscribe<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Subscribe")
            .field("type", &std::any::type_name::<T>())
            .field("unread", &self.len())
            .finish()
    }
}

impl<T: Send + Sync + 'static> Subscribe<'_, T> {
    fn cursor(&self) -> &Cursor {
        &self.log.readers[self.reader]
    }

    /// The unread messages, oldest first; each one read is never read
    /// again by this reader (the cursor moves as the iterator does).
    pub fn unread(&mut self) -> Unread<'_, T> {
        let Log {
            messages,
            first,
            readers,
            ..
        } = &mut *self.log;
        Unread {
            messages,
            first: *first,
            cursor: &mut readers[self.reader].next,
        }
    }

    /// Reads the unread messages in parallel: [`ParRead::for_each`] cuts
    /// them into slices that the threads of the world's pool run while this
    /// system waits, as [`Query::par_for_each`](crate::Query::par_for_each)
    /// does with rows. Every unread message is marked read when it starts.
    ///
    /// ```
    /// use std::sync::atomic::{AtomicU64, Ordering};
    /// use sluice::{NodeBuilder, Publish, Subscribe, World};
    ///
    /// struct Hit(u64);
    /// #[derive(Default)]
    /// struct Total(AtomicU64);
    ///
    /// let mut world = World::new();
    /// world.insert(Total::default());
    /// world.add_system(NodeBuilder::new("hit").system(|hits: Publish<Hit>| {
    ///     hits.write_batch((1..=1_000).map(Hit));
    /// }));
    /// world.add_system(NodeBuilder::new("sum").after("hit").system(
    ///     |mut hits: Subscribe<Hit>, total: &Total| {
    ///         hits.par_read().for_each(|hit| {
    ///             total.0.fetch_add(hit.0, Ordering::Relaxed);
    ///         });
    ///     },
    /// ));
    /// world.run_iteration().unwrap();
    /// assert_eq!(world.get::<Total>().unwrap().0.load(Ordering::Relaxed), 500_500);
    /// ```
    pub fn par_read(&mut self) -> ParRead<'_, T> {
        let Log {
            messages,
            first,
            readers,
            ..
        } = &mut *self.log;
        let cursor = &mut readers[self.reader].next;
        let start = (*cursor - *first) as usize;
        *cursor = *first + messages.len() as u64;
        ParRead {
            messages,
            start,
            per_slice: None,
        }
    }

    /// How many messages are unread.
    pub fn len(&self) -> usize {
        (self.log.end() - self.cursor().next) as usize
    }

    /// Whether every message was read.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Marks every message read without looking at them.
    pub fn clear(&mut self) {
        let end = self.log.end();
        self.log.readers[self.reader].next = end;
    }

    /// How many messages were dropped (by the type's bound) before this
    /// reader read them, since it last asked.
    pub fn missed(&mut self) -> u64 {
        std::mem::take(&mut self.log.readers[self.reader].missed)
    }
}

/// The unread messages of a [`Subscribe`], oldest first; each one the
/// iterator passes is marked read.
#[derive(Debug)]
pub struct Unread<'s, T> {
    messages: &'s std::collections::VecDeque<T>,
    first: u64,
    cursor: &'s mut u64,
}

impl<'s, T> Iterator for Unread<'s, T> {
    type Item = &'s T;

    fn next(&mut self) -> Option<&'s T> {
        let message = self.messages.get((*self.cursor - self.first) as usize)?;
        *self.cursor += 1;
        Some(message)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = self.messages.len() - (*self.cursor - self.first) as usize;
        (left, Some(left))
    }
}

impl<T> ExactSizeIterator for Unread<'_, T> {}
impl<T> FusedIterator for Unread<'_, T> {}

/// Slices per thread when the caller does not choose a slice size (as for
/// a query's `par_for_each`).
const SLICES_PER_THREAD: usize = 16;

/// The smallest automatic slice: below it, a slice costs more to hand out
/// than to read.
const MIN_AUTO_MESSAGES: usize = 64;

/// The messages a [`Subscribe::par_read`] took, read in parallel slices
/// by [`for_each`](Self::for_each) (bevy's `MessageParIter`).
#[derive(Debug)]
pub struct ParRead<'s, T> {
    messages: &'s std::collections::VecDeque<T>,
    /// The first of them in `messages`.
    start: usize,
    per_slice: Option<usize>,
}

impl<T: Send + Sync> ParRead<'_, T> {
    /// Slices of `messages` messages (0 is taken as 1) instead of about
    /// sixteen per thread of at least 64 each.
    pub fn messages_per_slice(mut self, messages: usize) -> Self {
        self.per_slice = Some(messages.max(1));
        self
    }

    /// How many messages it reads.
    pub fn len(&self) -> usize {
        self.messages.len() - self.start
    }

    /// Whether it reads none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Calls `f` with each message, in parallel slices on the threads of the
    /// world's pool taking part (on one thread, or outside a pool, in order
    /// on this one). What `f` records (`Commands`, `Publish`) lands in
    /// message order, whatever the thread count. Allocates nothing.
    ///
    /// # Panics
    /// A panic in `f` stops the slices not yet started and is resumed here
    /// once those in flight are done (the system fails as usual).
    pub fn for_each(self, f: impl Fn(&T) + Sync) {
        let count = self.len();
        let per_slice = self.per_slice.unwrap_or_else(|| {
            let threads = crate::exec::current_thread_count();
            count
                .div_ceil(threads * SLICES_PER_THREAD)
                .max(MIN_AUTO_MESSAGES)
        });
        let (messages, start) = (self.messages, self.start);
        crate::exec::for_each_slice(count.div_ceil(per_slice), &|slices| {
            let from = start + slices.start * per_slice;
            let to = (start + slices.end * per_slice).min(messages.len());
            messages.range(from..to).for_each(&f);
        });
    }
}

// SAFETY: `declare` declares gated access to `Messages<T>` (so the node
// runs alone in the lane: no writer pushes and no other reader runs while
// it does); `fetch` enters the log and drains the pending array, which only
// a node alone in the lane or `&mut Messages` may, and does not bump the
// version (a read-only gate).
unsafe impl<T: Send + Sync + 'static> Param for Subscribe<'_, T> {
    type Item<'w> = Subscribe<'w, T>;
    const KIND: AccessKind = AccessKind::Gated;

    fn service_name() -> &'static str {
        std::any::type_name::<Messages<T>>()
    }

    fn declare(node: NodeBuilder) -> NodeBuilder {
        node.gates::<Messages<T>>()
    }

    fn resolve(registry: &mut Registry, hooks: &mut BoundaryHooks) -> ServiceId {
        let id = resolve_messages::<T>(registry, hooks);
        // The reader's cursor exists from its registration: what is sent
        // before it first runs (its run condition false) is kept for it.
        if let (Some(key), Some(messages)) = (hooks.registering, registry.get_mut::<Messages<T>>())
        {
            messages.log.get_mut().reader(key);
        }
        id
    }

    unsafe fn fetch<'w>(id: ServiceId, cells: &ServiceCells<'w>) -> Subscribe<'w, T> {
        // SAFETY: the node declared gated access (see above).
        let messages =
            unsafe { cells.get::<Messages<T>>(id) }.expect("resolve inserted the messages");
        // SAFETY: alone in the lane (gated access), so nothing else enters
        // the log or the pending array while this reader lives: no writer
        // runs beside it and the node runs on one thread.
        let (log, pending) = unsafe {
            (
                &mut *messages.log.with_mut(|log| log),
                &mut *messages.pending.with_mut(|pending| pending),
            )
        };
        // Every writer before this reader completed: none of them failed.
        log.gather(pending, &[]);
        let reader = log.reader(reader_key());
        Subscribe { log, reader }
    }
}

/// A run condition may read messages, with its own cursor: a condition
/// that reads and returns false moves its cursor, not the body's.
impl<T: Send + Sync + 'static> ReadOnlyParam for Subscribe<'_, T> {}

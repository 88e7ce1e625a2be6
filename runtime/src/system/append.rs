//! Appending: many recorders push into one buffer in parallel, and a gate
//! on the buffer commits (drains) it (reference 003's instance buffer, "an
//! iteration runs its writers and then its drainers").
//!
//! An [`Append<T>`] parameter declares [`AccessKind::Appended`]: shared
//! access to the lane of [`AppendBuffer<T>`], so appenders run together, and
//! the planner puts every appender before every gate of the buffer
//! (`&mut AppendBuffer<T>`, usually a two-point node's commit, see
//! [`NodeSpec::commit`](crate::NodeSpec::commit)) wherever either is
//! registered. A push is the tail bump of one of the buffer's [`SHARDS`]
//! [`AppendArena`]s, the pushing thread's (threads take the shards in turn
//! on their first push): no lock, and the threads of a pool of up to
//! [`SHARDS`] never bump one tail. With one shared tail, two cores pushing at
//! once handed its cache line back and forth on every push (48 ns a push
//! on a 2-core AMD EPYC, `benches/append_commit.rs`). The arenas have no
//! defence against a drain overlapping an add; the graph forbids that
//! overlap (a drain needs `&mut`, which only a gate gets), and checked mode
//! reports it if a plan ever allowed it.
//!
//! Each value is tagged with its recording place (`recording::Place`), so
//! [`AppendBuffer::drain`] yields values by appending node in plan order,
//! then in each node's push order (slices a node fans out in slice order,
//! threads it starts itself after its own): the order of a serial run of
//! the plan, the same for every executor and thread count. A node that fails contributes nothing it appended: the
//! commit never starts in an iteration where one of its appenders failed
//! (it waits for each), and the boundary of that iteration drops the failed
//! nodes' values, so the next commit sees only what succeeded. What no gate
//! took in a run waits at the boundary, and the next drain gives it before
//! that run's values: run by run, each in the order above, as running the
//! plan's runs one after the other would push them. Places are unique within a run, so the drain's
//! sort is unstable and a steady frame allocates nothing
//! (`tests/no_alloc.rs`).

use std::fmt;

use sluice_collections::{AppendArena, Full};

use crate::access::{AccessKind, ServiceId};
use crate::node::NodeBuilder;
use crate::recording::{Place, RecordsFor};
use crate::registry::Registry;
use crate::sync::{Cell, Lock, Ordering, PoisonError, StaticAtomicU64};
use crate::system::output::BoundaryNodes;
use crate::system::{BoundaryHooks, Param, ServiceCells};

/// Slots an [`AppendBuffer`] starts with when made by [`Default`] (or by an
/// `Append<T>` parameter finding none).
const DEFAULT_CAPACITY: usize = 256;

/// How many arenas an [`AppendBuffer`] spreads its pushes over, one per
/// pushing thread up to this many.
pub(crate) const SHARDS: usize = 8;
// `AppendBuffer`'s public docs say 8.
const _: () = assert!(SHARDS == 8);

/// The next shard a thread takes on its first push (modulo [`SHARDS`]). It
/// orders nothing; it only spreads threads over the shards.
static NEXT_SHARD: StaticAtomicU64 = StaticAtomicU64::new(0);

#[cfg(not(loom))]
std::thread_local! {
    /// This thread's shard, `usize::MAX` until its first push.
    static SHARD: Cell<usize> = const { Cell::new(usize::MAX) };
}

// Per loom thread under loom: its threads share one OS thread.
#[cfg(loom)]
loom::thread_local! {
    static SHARD: Cell<usize> = Cell::new(usize::MAX);
}

/// The shard this thread pushes into: taken in turn on its first push, so
/// the threads of one pool (started together) get different ones.
fn this_threads_shard() -> usize {
    SHARD.with(|shard| {
        let mut index = shard.get();
        if index == usize::MAX {
            index = (NEXT_SHARD.fetch_add(1, Ordering::Relaxed) % SHARDS as u64) as usize;
            shard.set(index);
        }
        index
    })
}

/// One thread's (or a few threads') part of an [`AppendBuffer`].
struct Shard<T> {
    /// The lock-free pushes.
    arena: AppendArena<(Place, T)>,
    /// Pushes that found the arena full (rare: the next drain grows it).
    overflow: Lock<Vec<(Place, T)>>,
}

impl<T> Shard<T> {
    fn with_capacity(capacity: usize) -> Self {
        Self {
            arena: AppendArena::with_capacity(capacity),
            overflow: Lock::new(Vec::new()),
        }
    }

    /// The overflow list, locked (a poisoned lock still holds whole
    /// entries: every access pushes or moves them whole).
    fn overflow(&self) -> crate::sync::MutexGuard<'_, Vec<(Place, T)>> {
        self.overflow.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn push(&self, entry: (Place, T)) {
        if let Err(Full(entry)) = self.arena.push(entry) {
            self.overflow().push(entry);
        }
    }

    /// Whether the shard holds no value. No lock: a push overflows only
    /// once the arena (of at least one slot) is full, and [`gather`]
    /// empties both together, so an empty arena means an empty overflow.
    ///
    /// [`gather`]: Self::gather
    fn is_empty(&self) -> bool {
        self.arena.is_empty()
    }

    fn len(&self) -> usize {
        self.arena.len() + self.overflow().len()
    }

    /// Moves every value into `into` (unsorted); whether some had
    /// overflowed the arena.
    fn gather(&mut self, into: &mut Vec<(Place, T)>) -> bool {
        // Uncontended (`&mut self`); `lock` rather than `get_mut` so loom's
        // mutex serves as well.
        into.extend(self.arena.drain());
        let mut overflow = self.overflow();
        let overflowed = !overflow.is_empty();
        into.append(&mut overflow);
        overflowed
    }
}

/// A buffer that any number of nodes append to at once through
/// [`Append<T>`], and that a gate (`&mut AppendBuffer<T>`) drains.
///
/// Pushes go to a lock-free [`AppendArena`], the pushing thread's one of 8
/// shards (so two threads seldom bump one tail); those that find it
/// full go to the shard's overflow list behind a lock, and the next drain
/// grows the shard to hold everything that drain took (what a thread
/// pushes changes from frame to frame), so a steady game soon appends
/// without locking or allocating.
///
/// ```
/// use sluice::{Append, AppendBuffer, IntoSystem, NodeBuilder, World};
///
/// struct Sprite(u32);
/// #[derive(Default)]
/// struct Gpu(Vec<u32>);
///
/// fn terrain(instances: Append<Sprite>) {
///     instances.push(Sprite(1));
/// }
/// fn instanced(instances: Append<Sprite>) {
///     instances.push(Sprite(2));
/// }
/// fn commit(instances: &mut AppendBuffer<Sprite>, gpu: &mut Gpu) {
///     gpu.0.extend(instances.drain().map(|sprite| sprite.0));
/// }
///
/// let mut world = World::new();
/// world.insert(Gpu::default());
/// world.add_system(instanced.commit(commit)); // `instanced` and `instanced@commit`
/// world.add_system(terrain); // registered later, still appends before the commit
/// world.run_iteration()?;
/// assert_eq!(world.get::<Gpu>().unwrap().0, [2, 1]); // in plan order (ties: registration order)
/// # Ok::<(), sluice::IterationError>(())
/// ```
pub struct AppendBuffer<T> {
    /// [`SHARDS`] arenas, each pushed to by the threads that took it.
    shards: Box<[Shard<T>]>,
    /// What earlier runs of the plan appended that no drain took (their
    /// gate did not run): each run's values in place order, the oldest
    /// run's first. Empty in a steady game.
    carried: Vec<(Place, T)>,
    /// Reused by each drain, so a steady drain allocates nothing.
    scratch: Vec<(Place, T)>,
}

impl<T> fmt::Debug for AppendBuffer<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AppendBuffer")
            .field("len", &self.len())
            .field("capacity", &self.capacity())
            .finish_non_exhaustive()
    }
}

impl<T> Default for AppendBuffer<T> {
    fn default() -> Self {
        Self::with_capacity(DEFAULT_CAPACITY)
    }
}

impl<T> AppendBuffer<T> {
    /// An empty buffer that holds `capacity` values without locking,
    /// spread over its 8 shards: each pushing thread's shard takes an
    /// eighth of it (at least 1) before that thread's pushes take the
    /// shard's overflow lock, and the next drain grows the shard to hold
    /// everything that drain took.
    pub fn with_capacity(capacity: usize) -> Self {
        let each = capacity.div_ceil(SHARDS).max(1);
        Self {
            shards: (0..SHARDS).map(|_| Shard::with_capacity(each)).collect(),
            carried: Vec::new(),
            scratch: Vec::new(),
        }
    }

    /// How many values the shards hold together before pushes overflow.
    pub fn capacity(&self) -> usize {
        self.shards.iter().map(|shard| shard.arena.capacity()).sum()
    }

    /// How many values were appended since the last drain (those of pushes
    /// still running included).
    pub fn len(&self) -> usize {
        self.carried.len() + self.shards.iter().map(Shard::len).sum::<usize>()
    }

    /// Whether nothing was appended since the last drain.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Appends `value` at the next place of the node `records_for`, into
    /// this thread's shard.
    #[inline]
    fn push(&self, records_for: RecordsFor, value: T) {
        let place = records_for.next_place();
        self.shards[this_threads_shard()].push((place, value));
    }

    /// Moves what this run of the plan appended into `scratch`, in place
    /// order, and grows each shard that overflowed to hold all of it:
    /// which thread takes which slices (and so which shard gets how many
    /// values) changes from frame to frame, and a shard grown to the whole
    /// frame never overflows again in a steady game (`tests/no_alloc.rs`).
    fn gather(&mut self) {
        let mut overflowed = [false; SHARDS];
        for (shard, overflowed) in self.shards.iter_mut().zip(&mut overflowed) {
            *overflowed = shard.gather(&mut self.scratch);
        }
        let total = self.scratch.len();
        for (shard, _) in self.shards.iter_mut().zip(overflowed).filter(|(_, o)| *o) {
            shard.arena.reserve(total);
        }
        // Within one run no two values share a place (each node runs once,
        // each of its slices has its own index), so an unstable sort gives
        // the one order, and needs no buffer.
        self.scratch.sort_unstable_by_key(|&(place, _)| place);
    }

    /// Takes every value appended since the last drain, in the order a
    /// serial run of the plan pushes them: by appending node in plan
    /// order, then in that node's push order (run by run, oldest first,
    /// when earlier runs' gate did not run), whatever the executor or
    /// thread count. Values the iterator does not reach are dropped with
    /// it.
    pub fn drain(&mut self) -> impl ExactSizeIterator<Item = T> + '_ {
        self.gather();
        if !self.carried.is_empty() {
            // Earlier runs first, each already in place order: the order a
            // serial run of each in turn pushes in. (It allocates; only
            // after a run whose gate did not run.)
            self.carried.append(&mut self.scratch);
            std::mem::swap(&mut self.carried, &mut self.scratch);
        }
        self.scratch.drain(..).map(|(_, value)| value)
    }

    /// The end of a run of the plan: what it appended and no drain took
    /// waits for the next drain, after what earlier runs left, but for what
    /// the failed nodes (`failed`, their positions in this run's plan
    /// order) appended, which is dropped.
    fn end_run(&mut self, failed: &[u32]) {
        if self.shards.iter().all(Shard::is_empty) {
            return;
        }
        self.gather();
        let kept = self
            .scratch
            .extract_if(.., |(place, _)| !failed.contains(&place.rank()));
        self.carried.extend(kept);
        // The failed nodes' values go last, so a panicking `Drop` among
        // them loses nothing kept (the boundary reports the panic).
        self.scratch.clear();
    }
}

/// The boundary of one buffer type: keeps what no drain took for the next
/// one, dropping what failed nodes appended.
fn append_boundary<T: Send + Sync + 'static>(
    slot: &mut crate::registry::ServiceSlot,
    nodes: &BoundaryNodes<'_>,
) {
    if let Some(buffer) = slot
        .value
        .as_deref_mut()
        .and_then(|value| value.downcast_mut::<AppendBuffer<T>>())
    {
        buffer.end_run(nodes.failed_ranks);
    }
}

/// Appends to [`AppendBuffer<T>`] from a system: shared access to the
/// buffer's lane (any number of appenders run together), ordered before
/// every gate of the buffer, which commits what was appended. The world
/// inserts an empty buffer if it holds none.
///
/// Records made through it belong to the node that was handed it, from
/// whichever thread: its slices, or threads it starts itself
/// (`std::thread::scope`, rayon). Those land at the node's place, after
/// the values of its own threads, and not at all if it fails. The handle
/// borrows the node's run, so no thread can push through it after the
/// node returns.
#[derive(Clone, Copy)]
pub struct Append<'w, T> {
    buffer: &'w AppendBuffer<T>,
    records_for: RecordsFor,
}

impl<T> fmt::Debug for Append<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Append").finish_non_exhaustive()
    }
}

impl<T> Append<'_, T> {
    /// Appends `value` for this iteration's commit: lock-free (one tail
    /// bump) while the buffer's arena has room.
    #[inline]
    pub fn push(&self, value: T) {
        self.buffer.push(self.records_for, value);
    }

    /// Appends every value of `values`, in order.
    pub fn extend(&self, values: impl IntoIterator<Item = T>) {
        for value in values {
            self.buffer.push(self.records_for, value);
        }
    }
}

// SAFETY: `fetch` hands out a handle that only pushes into `AppendBuffer<T>`
// through `&self` (never reading a value), which the node declared it
// appends to: shared access, as `&AppendBuffer<T>` would be.
unsafe impl<T: Send + Sync + 'static> Param for Append<'_, T> {
    type Item<'w> = Append<'w, T>;
    const KIND: AccessKind = AccessKind::Appended;

    fn service_name() -> &'static str {
        std::any::type_name::<AppendBuffer<T>>()
    }

    fn declare(node: NodeBuilder) -> NodeBuilder {
        node.appends::<AppendBuffer<T>>()
    }

    fn resolve(registry: &mut Registry, hooks: &mut BoundaryHooks) -> ServiceId {
        if registry.get::<AppendBuffer<T>>().is_none() {
            registry.insert(AppendBuffer::<T>::default());
        }
        let id = registry.resolve::<AppendBuffer<T>>();
        hooks.add_messages(id, append_boundary::<T>);
        id
    }

    #[inline]
    unsafe fn fetch<'w>(id: ServiceId, cells: &ServiceCells<'w>) -> Append<'w, T> {
        // SAFETY: the node declared appending (shared) access to `id`
        // (`declare`) and runs as a plan node, so no gate of `id` runs now.
        match unsafe { cells.get::<AppendBuffer<T>>(id) } {
            Some(buffer) => Append {
                buffer,
                records_for: RecordsFor::current(),
            },
            None => panic!(
                "service `{}` is declared but the world holds no value for it",
                Self::service_name()
            ),
        }
    }
}

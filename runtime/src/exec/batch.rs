//! Batch processors: one node that splits a buffer of items into slices
//! processed in parallel.
//!
//! Three phases with different threading:
//!
//! - [`before_update`](BatchProcessor::before_update) runs on the node's
//!   thread (the scheduling thread), before anything is enqueued;
//! - [`process_batch`](BatchProcessor::process_batch) runs on pool threads in
//!   parallel, one call per slice of [`BATCH_SIZE`](BatchProcessor::BATCH_SIZE)
//!   items;
//! - [`after_update`](BatchProcessor::after_update) runs once, on whichever
//!   thread finishes last, or, for a node pinned to the run's caller
//!   ([`CompiledGraph::with_pinned`](super::CompiledGraph::with_pinned)), on
//!   the caller; by default it clears the buffer.
//!
//! Only after `after_update` is the node complete and its successors
//! released. Slices are prioritized loose work: the node pushes one *helper*
//! job per thread that can help (never one per slice), and each helper claims
//! slices from a shared counter until none is left. The last helper to leave
//! runs `after_update`, unless the node is pinned and that helper is not on
//! the caller: then it hands the finish to the caller (with the run's pinned
//! nodes, `RunSlot::hand_to_caller`), which runs it before anything else it
//! may take. Nothing is allocated per tick.
//!
//! The slices and `after_update` record at the node's place (taken after
//! `before_update`), whichever thread runs them: what they record for a
//! world's boundary belongs to the node, in slice order.

use std::collections::VecDeque;
use std::fmt;
use std::panic::{self, AssertUnwindSafe};
use std::ptr::{self, NonNull};

use crossbeam_utils::CachePadded;

use crate::recording::SliceRecording;
use crate::sync::{AtomicBool, AtomicPtr, AtomicU32, AtomicUsize, Ordering, UnsafeCell};

use super::job::JobRef;
use super::pool::WorkerThread;
use super::run::{CallerJob, NodeContext, NodeOutcome, RunSlot};
use super::slices::claim_guided;

/// A buffer that a batch processor's default `after_update` can empty.
pub trait ClearBuffer {
    /// Removes every item.
    fn clear_buffer(&mut self);
}

impl<T> ClearBuffer for Vec<T> {
    fn clear_buffer(&mut self) {
        self.clear();
    }
}

impl<T> ClearBuffer for VecDeque<T> {
    fn clear_buffer(&mut self) {
        self.clear();
    }
}

/// A system that consumes a buffer of items, split across the pool's threads.
pub trait BatchProcessor: Send + Sync + 'static {
    /// The service holding the items.
    type Buffer: ClearBuffer + Send + Sync + 'static;
    /// One item.
    type Item: Sync;
    /// Items per slice (at least 1).
    const BATCH_SIZE: usize;

    /// The items of `buffer`, in the order slices are cut.
    fn items(buffer: &Self::Buffer) -> &[Self::Item];

    /// Runs on the scheduling thread (the thread that runs the node; for a
    /// pinned node, the run's caller) before the buffer is sliced: the
    /// place for work that mutates shared state.
    fn before_update(&mut self, _buffer: &mut Self::Buffer) {}

    /// Processes the slice of items starting at index `start`. Runs on pool
    /// threads, in parallel with other slices.
    fn process_batch(&self, start: usize, batch: &[Self::Item]);

    /// Runs once, after every slice: the place for serial commits. It runs
    /// on the thread whose slices finished last, except for a pinned node
    /// (a world's [`NodeBuilder::pinned`](crate::NodeBuilder::pinned), or
    /// [`CompiledGraph::with_pinned`](super::CompiledGraph::with_pinned)),
    /// whose `after_update` runs on the run's caller, like its
    /// `before_update`: a worker that finishes last hands it over. The
    /// default clears the buffer, so the node's successors see it empty.
    fn after_update(&mut self, buffer: &mut Self::Buffer) {
        buffer.clear_buffer();
    }
}

/// A buffer a [`BatchNode`] can borrow for the length of a run: an
/// `UnsafeCell` whose exclusive use by one batch at a time is checked.
pub struct BatchBuffer<B> {
    busy: AtomicBool,
    value: UnsafeCell<B>,
}

// SAFETY:
// - The value is only reached through `&mut self` (no batch in flight) or by
//   the one batch that set `busy`: shared by its slices (`B: Sync`), then
//   exclusively by `before_update`/`after_update` (`B: Send`).
unsafe impl<B: Send + Sync> Sync for BatchBuffer<B> {}

impl<B> BatchBuffer<B> {
    /// Wraps `value`.
    pub fn new(value: B) -> Self {
        Self {
            busy: AtomicBool::new(false),
            value: UnsafeCell::new(value),
        }
    }

    /// The buffer, between runs.
    pub fn get_mut(&mut self) -> &mut B {
        self.value.get_mut()
    }

    /// Unwraps the buffer.
    pub fn into_inner(self) -> B {
        self.value.into_inner()
    }
}

impl<B> fmt::Debug for BatchBuffer<B> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BatchBuffer")
            .field("busy", &self.busy.load(Ordering::Relaxed))
            .finish()
    }
}

/// A batch processor ready to run as a node: call
/// [`schedule`](Self::schedule) from the node's body and return what it
/// returns.
pub struct BatchNode<P: BatchProcessor> {
    processor: UnsafeCell<P>,
    /// Set from `schedule` until `after_update` is done.
    busy: AtomicBool,
    /// The next slice to claim.
    next: CachePadded<AtomicUsize>,
    /// Helpers that have not left yet; the last one finishes the batch.
    helpers_left: CachePadded<AtomicUsize>,
    /// How many helpers the batch in flight started with (sizes the claims).
    helpers: AtomicUsize,
    // The current batch, written by `schedule` before the helpers are
    // queued (the queue hand-off publishes them).
    buffer: AtomicPtr<P::Buffer>,
    buffer_busy: AtomicPtr<AtomicBool>,
    slot: AtomicPtr<RunSlot>,
    node: AtomicU32,
    len: AtomicUsize,
    poisoned: AtomicBool,
    /// The scheduling node's recording, for the slices and `after_update`;
    /// written by `schedule` before the helpers are queued, read by them.
    recording: UnsafeCell<Option<SliceRecording>>,
    /// The finish handed to the run's caller when the node is pinned and
    /// its last helper ran elsewhere (one batch in flight at a time, so one
    /// is enough).
    caller_job: CallerJob,
}

// SAFETY:
// - `processor` is shared (`&P`, `P: Sync`) only by the slices of the batch
//   that set `busy`, and used exclusively (`&mut P`) only by that batch's
//   `before_update` (before any helper exists) and `after_update` (after the
//   last helper left); `P: Send`.
// - `recording` is written only by `schedule` while `busy` is newly ours and
//   no helper of the batch exists, and read by the helpers the queue
//   hand-off then publishes it to (a `Copy` value, read, never borrowed
//   across a write).
// - Every other field is atomic.
unsafe impl<P: BatchProcessor> Sync for BatchNode<P> {}

impl<P: BatchProcessor> BatchNode<P> {
    /// Wraps `processor`.
    pub fn new(processor: P) -> Self {
        Self {
            processor: UnsafeCell::new(processor),
            busy: AtomicBool::new(false),
            next: CachePadded::new(AtomicUsize::new(0)),
            helpers_left: CachePadded::new(AtomicUsize::new(0)),
            helpers: AtomicUsize::new(0),
            buffer: AtomicPtr::new(ptr::null_mut()),
            buffer_busy: AtomicPtr::new(ptr::null_mut()),
            slot: AtomicPtr::new(ptr::null_mut()),
            node: AtomicU32::new(0),
            len: AtomicUsize::new(0),
            poisoned: AtomicBool::new(false),
            recording: UnsafeCell::new(None),
            caller_job: CallerJob::new(),
        }
    }

    /// The processor, between runs.
    pub fn processor_mut(&mut self) -> &mut P {
        self.processor.get_mut()
    }

    /// Unwraps the processor.
    pub fn into_inner(self) -> P {
        self.processor.into_inner()
    }

    /// Runs the batch over `buffer` as the current node: `before_update`
    /// here, the slices on the pool, `after_update` on the thread that
    /// finishes last (on the run's caller when the node is pinned). Return
    /// the result from the node's body.
    ///
    /// # Panics
    ///
    /// When this node or `buffer` is already in a batch in flight, when the
    /// node already called [`NodeContext::defer`], or when `BATCH_SIZE` is 0.
    /// (Inside a body, the panic fails the node.)
    pub fn schedule<'scope>(
        &'scope self,
        cx: &NodeContext<'scope>,
        buffer: &'scope BatchBuffer<P::Buffer>,
    ) -> NodeOutcome {
        assert!(
            !buffer.busy.swap(true, Ordering::Acquire),
            "batch buffer already in use by a batch in flight"
        );
        let value = buffer.value.with_mut(NonNull::new);
        let value = value.expect("an UnsafeCell's pointer is never null");
        // SAFETY:
        // - `buffer.busy` was just set: this batch has the buffer to itself
        //   until it clears the flag, and the buffer lives for the run's
        //   scope.
        unsafe { self.schedule_inner(cx, value, Some(&buffer.busy)) }
    }

    /// [`schedule`](Self::schedule) over a buffer held elsewhere (a world's
    /// service under gated access).
    ///
    /// # Safety
    ///
    /// - `buffer` is valid for the run's scope, and nothing else reads or
    ///   writes it until this node completes (at the latest, until the run
    ///   returns).
    pub unsafe fn schedule_raw<'scope>(
        &'scope self,
        cx: &NodeContext<'scope>,
        buffer: NonNull<P::Buffer>,
    ) -> NodeOutcome {
        // SAFETY:
        // - The caller's contract is the one `schedule_inner` needs.
        unsafe { self.schedule_inner(cx, buffer, None) }
    }

    /// # Safety
    ///
    /// - `buffer` is valid for the run's scope and reserved for this batch
    ///   until `busy_flag` (if any) is cleared, or the node completes.
    unsafe fn schedule_inner<'scope>(
        &'scope self,
        cx: &NodeContext<'scope>,
        buffer: NonNull<P::Buffer>,
        buffer_busy: Option<&'scope AtomicBool>,
    ) -> NodeOutcome {
        let _machinery = crate::sync::coarse::machinery();
        if self.busy.swap(true, Ordering::Acquire) {
            if let Some(flag) = buffer_busy {
                flag.store(false, Ordering::Release);
            }
            panic!("batch node already in a batch in flight");
        }
        // Clears both flags if anything below panics or the batch is empty.
        let guard = BusyGuard {
            node: &self.busy,
            buffer: buffer_busy,
        };
        assert!(
            P::BATCH_SIZE > 0,
            "BatchProcessor::BATCH_SIZE must be at least 1"
        );
        assert!(
            !cx.is_deferred(),
            "a batch node must not call NodeContext::defer itself"
        );
        let slices = self.processor.with_mut(|processor| {
            // SAFETY:
            // - `self.busy` is ours: no other batch uses the processor, and
            //   no helper of this one exists yet.
            let processor = unsafe { &mut *processor };
            // SAFETY:
            // - The buffer is reserved for this batch (the caller's
            //   contract), and no helper exists yet.
            let items_buffer = unsafe { &mut *buffer.as_ptr() };
            let _user = crate::sync::coarse::user();
            processor.before_update(items_buffer);
            let len = P::items(items_buffer).len();
            let slices = len.div_ceil(P::BATCH_SIZE);
            if slices == 0 {
                processor.after_update(items_buffer);
            }
            (len, slices)
        });
        let (len, slices) = slices;
        if slices == 0 {
            drop(guard);
            return NodeOutcome::Done;
        }
        std::mem::forget(guard);
        let recording = SliceRecording::take();
        self.recording.with_mut(|slot| {
            // SAFETY:
            // - `self.busy` is ours and no helper of this batch exists yet;
            //   the helpers of the previous batch left before it cleared
            //   `busy` (Release, acquired by the swap above).
            unsafe { *slot = Some(recording) };
        });
        // One helper per thread that can help, as long as they fit in the
        // local deque without reallocating it.
        let helpers = slices
            .min(cx.thread_count())
            .min(cx.worker().spare_capacity().max(1));
        self.buffer.store(buffer.as_ptr(), Ordering::Relaxed);
        self.buffer_busy.store(
            buffer_busy.map_or(ptr::null_mut(), |flag| ptr::from_ref(flag).cast_mut()),
            Ordering::Relaxed,
        );
        self.len.store(len, Ordering::Relaxed);
        self.next.store(0, Ordering::Relaxed);
        self.helpers_left.store(helpers, Ordering::Relaxed);
        self.helpers.store(helpers, Ordering::Relaxed);
        self.poisoned.store(false, Ordering::Relaxed);
        let (slot, node) = cx.defer_raw();
        self.slot.store(slot.as_ptr(), Ordering::Relaxed);
        self.node.store(node, Ordering::Relaxed);
        // The helpers' counts; the queue hand-off below publishes the fields.
        cx.slot().acquire(helpers as u32);
        let worker = cx.worker();
        for _ in 0..helpers {
            // SAFETY:
            // - `self` lives for the run's scope, so past every helper; each
            //   helper carries one of the counts just added.
            worker.push(unsafe { JobRef::new(ptr::from_ref(self).cast(), 0, Self::helper) });
        }
        if helpers > 1 {
            worker.note_fan_out();
        }
        // This thread pops one helper itself once the body returns.
        worker.registry.notify(helpers - 1);
        NodeOutcome::Deferred
    }

    /// A helper job: claims slices until none is left; the last helper to
    /// leave finishes the batch.
    ///
    /// # Safety
    ///
    /// - `data` is a `BatchNode<P>` with a batch in flight, and the job holds
    ///   a count on that batch's run.
    unsafe fn helper(data: *const (), _: u32, worker: &WorkerThread) {
        // SAFETY:
        // - `data` is this batch node, alive for the run's scope.
        let this = unsafe { &*data.cast::<Self>() };
        // SAFETY:
        // - The slot lives in the registry `worker` holds.
        let slot = unsafe { &*this.slot.load(Ordering::Relaxed) };
        let node = this.node.load(Ordering::Relaxed);
        let len = this.len.load(Ordering::Relaxed);
        let buffer = this.buffer.load(Ordering::Relaxed);
        // SAFETY:
        // - Written by `schedule` before this job was queued (the queue
        //   hand-off publishes it), and not written again until the batch is
        //   finished, after every helper left.
        let recording = this.recording.with(|slot| unsafe { *slot });
        {
            let _span = tracing::trace_span!("batch", node).entered();
            let slices = len.div_ceil(P::BATCH_SIZE);
            let helpers = this.helpers.load(Ordering::Relaxed).max(1);
            while let Some(claimed) = claim_guided(&this.next, slices, helpers) {
                let _recording = recording.map(|recording| recording.enter(claimed.start));
                for slice in claimed {
                    if this.poisoned.load(Ordering::Relaxed) {
                        break;
                    }
                    let start = slice * P::BATCH_SIZE;
                    let end = (start + P::BATCH_SIZE).min(len);
                    // A model's printed interleaving shows each slice.
                    #[cfg(loom)]
                    let _traced = crate::model::Span::enter(format_args!("slice {start}..{end}"));
                    let result = this.processor.with(|processor| {
                        // SAFETY:
                        // - A slice was claimed, so the batch is not
                        //   finished: no `&mut` to the processor or the
                        //   buffer exists until this helper leaves.
                        let (processor, items) = unsafe { (&*processor, P::items(&*buffer)) };
                        let _user = crate::sync::coarse::user();
                        panic::catch_unwind(AssertUnwindSafe(|| {
                            processor.process_batch(start, &items[start..end]);
                        }))
                    });
                    if let Err(payload) = result {
                        this.poisoned.store(true, Ordering::Relaxed);
                        slot.fail(node, payload);
                    }
                }
            }
        }
        if this.helpers_left.fetch_sub(1, Ordering::AcqRel) == 1 {
            // A pinned node's `after_update` belongs on the run's caller:
            // a last helper elsewhere hands the finish over instead of
            // running it. (`is_pinned` first reads whether the graph pins
            // anything: an unpinned batch pays a load or two, once.)
            // SAFETY:
            // - This helper holds a count on the run.
            if !slot.is_caller(worker) && unsafe { slot.is_pinned(node) } {
                // SAFETY:
                // - `data` is this batch node, alive for the run's scope,
                //   so past the job; `finish_on_caller` runs its batch's
                //   finish once, on any pool thread.
                let job = unsafe { JobRef::new(data, node, Self::finish_on_caller) };
                // SAFETY:
                // - The job carries the batch's completion count (taken by
                //   `defer_raw`, given back by `finish`); `caller_job` is
                //   not handed over again before it runs, since the next
                //   batch starts only after `finish` clears `busy`.
                // - `worker` belongs to the slot's registry and is not the
                //   caller (checked above).
                unsafe { slot.hand_to_caller(&this.caller_job, job, worker) };
            } else {
                // SAFETY:
                // - This was the last helper; the batch's completion count
                //   is still held.
                unsafe { this.finish(slot, node, worker) };
            }
        }
        slot.release(1, &worker.registry, Some(worker.index));
    }

    /// The finish of a pinned batch, handed to the run's caller by the last
    /// helper (see [`helper`](Self::helper)).
    ///
    /// # Safety
    ///
    /// - `data` is a `BatchNode<P>` whose last helper has left, and the job
    ///   holds the batch's completion count.
    unsafe fn finish_on_caller(data: *const (), node: u32, worker: &WorkerThread) {
        // SAFETY:
        // - `data` is this batch node, alive for the run's scope.
        let this = unsafe { &*data.cast::<Self>() };
        // SAFETY:
        // - The slot lives in the registry `worker` holds; written by
        //   `schedule` before the helpers were queued, and the hand-over
        //   ordered the last helper's reads and writes before this.
        let slot = unsafe { &*this.slot.load(Ordering::Relaxed) };
        // SAFETY:
        // - Every helper has left (the one that handed this over was the
        //   last, and its pop by the caller acquired its push) and the
        //   completion count is held (the function's contract).
        unsafe { this.finish(slot, node, worker) };
    }

    /// Runs `after_update`, frees the flags and completes the node.
    ///
    /// # Safety
    ///
    /// - Every helper of the batch has left (no shared borrow of the
    ///   processor or buffer remains) and the completion count is held.
    unsafe fn finish(&self, slot: &RunSlot, node: u32, worker: &WorkerThread) {
        if !self.poisoned.load(Ordering::Relaxed) {
            let buffer = self.buffer.load(Ordering::Relaxed);
            // SAFETY:
            // - Written by `schedule` before the helpers existed; every
            //   helper has left, and the next write comes after `busy` is
            //   cleared below.
            let recording = self.recording.with(|slot| unsafe { *slot });
            // `after_update` records after every slice.
            let slices = self.len.load(Ordering::Relaxed).div_ceil(P::BATCH_SIZE);
            let _recording = recording.map(|recording| recording.enter(slices));
            let result = self.processor.with_mut(|processor| {
                // SAFETY:
                // - Every helper has left (acquired through `helpers_left`),
                //   so these are the only borrows of the processor and the
                //   buffer.
                let (processor, buffer) = unsafe { (&mut *processor, &mut *buffer) };
                let _user = crate::sync::coarse::user();
                panic::catch_unwind(AssertUnwindSafe(|| processor.after_update(buffer)))
            });
            if let Err(payload) = result {
                slot.fail(node, payload);
            }
        }
        // SAFETY:
        // - The flag, if any, belongs to a `BatchBuffer` that lives for the
        //   run's scope.
        if let Some(flag) = unsafe { self.buffer_busy.load(Ordering::Relaxed).as_ref() } {
            flag.store(false, Ordering::Release);
        }
        self.busy.store(false, Ordering::Release);
        // SAFETY:
        // - The completion count taken by `defer_raw` is given up here;
        //   `worker` belongs to the slot's registry. `self` is not touched
        //   after.
        unsafe { slot.complete_node(node, Some(worker), &worker.registry) };
    }
}

impl<P: BatchProcessor> fmt::Debug for BatchNode<P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BatchNode")
            .field("busy", &self.busy.load(Ordering::Relaxed))
            .field("batch_size", &P::BATCH_SIZE)
            .finish_non_exhaustive()
    }
}

/// Clears a batch's busy flags when dropped.
struct BusyGuard<'a> {
    node: &'a AtomicBool,
    buffer: Option<&'a AtomicBool>,
}

impl Drop for BusyGuard<'_> {
    fn drop(&mut self) {
        if let Some(flag) = self.buffer {
            flag.store(false, Ordering::Release);
        }
        self.node.store(false, Ordering::Release);
    }
}

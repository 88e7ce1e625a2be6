//! [`Scripts`]: one kind's scripts, their waits, and the gather that runs
//! the due ones in parallel.

use std::any::TypeId;
use std::borrow::Cow;
use std::future::Future;
use std::panic::{self, AssertUnwindSafe};
use std::pin::Pin;
use std::ptr;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use enum_map::{EnumMap, enum_map};
use sync_wrapper::SyncWrapper;

use super::cx::{PollGuard, Polling};
use super::step::{Step, StepBody, Wait};
use super::timers::Timers;
use super::{ScriptCx, ScriptId, ScriptKind, SimClock, StepScript, Waiting};
use crate::exec::{for_each_slice, panic_message};
use crate::organise::Cadence;
use crate::sync::{Ordering, StaticAtomicU64};

/// The next store's identity: 2^64 stores never wrap it.
static NEXT_STORE: StaticAtomicU64 = StaticAtomicU64::new(0);

/// A new store identity, for a snapshot read from a save: no store's.
#[cfg_attr(not(feature = "serde"), allow(dead_code))]
pub(super) fn fresh_identity() -> u64 {
    NEXT_STORE.fetch_add(1, Ordering::Relaxed)
}

/// Due scripts per parallel slice: a short script's poll is tens of
/// nanoseconds, so a slice must be long enough to pay for handing it to
/// another thread; a thousand due scripts still make sixteen slices.
const SCRIPTS_PER_SLICE: usize = 64;

/// A condition a step script waits on.
pub(super) type Until<K> = super::step::UntilFn<K>;

/// Everything of a store but its scripts that decides what it does next,
/// for a snapshot: which slots are free and the order they are reused in,
/// the next serial, where the timer rings stand, and the clock steps seen.
#[derive(Debug, Clone, Default)]
pub(super) struct Layout {
    pub(super) slots: usize,
    /// The free list as it was (the last entry is reused first).
    pub(super) free: Vec<u32>,
    pub(super) next_serial: u64,
    pub(super) seen_steps: u64,
    /// Each cadence's timer ring position.
    pub(super) positions: EnumMap<Cadence, u64>,
    /// How many scripts had ended (put back by an exact restore only).
    pub(super) finished: u64,
}

impl Layout {
    /// The heap bytes it holds.
    pub(super) fn heap_bytes(&self) -> usize {
        self.free.capacity() * size_of::<u32>()
    }
}

/// A script's code.
pub(super) enum Body<K: ScriptKind> {
    Async(Pin<Box<dyn Future<Output = ()> + Send>>),
    Step(Box<dyn StepBody<K>>),
}

/// How a script's last poll ended, until the gather settles it.
#[derive(Default)]
enum Outcome {
    #[default]
    Pending,
    Finished,
    Panicked(String),
}

/// A live script's description.
pub(super) struct Live<K: ScriptKind> {
    pub(super) id: ScriptId,
    pub(super) name: Cow<'static, str>,
    pub(super) waiting: Waiting,
    /// A step script's condition while `waiting` is `Condition`.
    pub(super) until: Option<Until<K>>,
}

/// What only the store's `&mut` touches: an `async` script's future and
/// the intents.
struct Work<K: ScriptKind> {
    future: Option<Pin<Box<dyn Future<Output = ()> + Send>>>,
    /// Intents of the last poll; emptied by the gather (capacity kept).
    intents: Vec<K::Intent>,
    outcome: Outcome,
}

/// One slot of the store: a live script or a free slot (whose intent
/// buffer keeps its capacity for the next script).
struct Slot<K: ScriptKind> {
    live: Option<Live<K>>,
    /// A step script's state: plain data (`Send + Sync`), so a world's
    /// snapshot clones it through `&self`. A live script has this or a
    /// future in `work`, never both.
    step: Option<Box<dyn StepBody<K>>>,
    work: SyncWrapper<Work<K>>,
}

/// A script that ended by panicking, in its poll or in its `Drop`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScriptFailure {
    /// The script.
    pub id: ScriptId,
    /// Its name.
    pub name: String,
    /// The panic's message (or a placeholder when it was not a string).
    pub message: String,
}

impl std::fmt::Display for ScriptFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "script `{}` ({}) panicked: {}",
            self.name, self.id, self.message
        )
    }
}

impl std::error::Error for ScriptFailure {}

/// One script, as [`Scripts::iter`] shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScriptInfo<'a> {
    /// Its id.
    pub id: ScriptId,
    /// The name it was started with.
    pub name: &'a str,
    /// What it waits on.
    pub waiting: Waiting,
}

/// The scripts of one kind: a service of the world (see the
/// [module docs](crate::script)).
///
/// Invariants: every live script is in exactly one of `timers`,
/// `fixed_timers` and `every_tick` (by its `waiting`), or is being settled
/// by a gather; entries whose (serial, key) no longer names a live script
/// are stale and skipped; `due` and `every_tick` hold (serial, key) pairs.
pub struct Scripts<K: ScriptKind> {
    slots: Vec<Slot<K>>,
    /// Free slots, reused last-freed first.
    free: Vec<u32>,
    live: usize,
    next_serial: u64,
    /// This store's identity (process-wide, never in an id): a snapshot
    /// records its store's, so a restore knows whose ids it brings.
    identity: u64,
    /// The store whose snapshot this one was restored from while it had
    /// handed out no id, and that snapshot's next serial: serials below it
    /// are that store's history, adopted as this one's.
    adopted: Option<(u64, u64)>,
    /// Scripts waiting on a clock, by the cadence it follows
    /// (`SimClock::now`, `SimClock::fixed_now`): an array offset per wait.
    timers: EnumMap<Cadence, Timers>,
    /// Scripts polled at every gather: new ones, `NextTick`, conditions,
    /// foreign futures.
    every_tick: Vec<(u64, u32)>,
    /// The gather's scratch: the scripts it runs, in start order.
    due: Vec<(u64, u32)>,
    /// Intents of gathered scripts, in start order, for collect.
    collected: SyncWrapper<Vec<(ScriptId, K::Intent)>>,
    /// How many intents `collected` holds (readable through `&self`: a
    /// world's snapshot refuses a store with intents not drained).
    undrained: usize,
    failures: Vec<ScriptFailure>,
    finished: u64,
    /// The clock's step count at the last gather: a paused clock's new
    /// step lets one gather run.
    seen_steps: u64,
}

impl<K: ScriptKind> std::fmt::Debug for Scripts<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Scripts")
            .field("kind", &std::any::type_name::<K>())
            .field("live", &self.live)
            .field("finished", &self.finished)
            .field("failures", &self.failures.len())
            .finish_non_exhaustive()
    }
}

impl<K: ScriptKind> Default for Scripts<K> {
    fn default() -> Self {
        Self::new()
    }
}

/// The slots, shared with the gather's parallel slices.
struct SlotsPtr<K: ScriptKind>(*mut Slot<K>);

// SAFETY: the slices reach disjoint slots only (each due key once), and a
// slot's contents are `Send` (`Slot` is `Send` when its parts are: the
// body is `Send`, intents are `Send`); the pointer itself is only read.
unsafe impl<K: ScriptKind> Sync for SlotsPtr<K> where Slot<K>: Send {}

impl<K: ScriptKind> SlotsPtr<K> {
    /// The slot at `key` (a method, so closures capture the whole wrapper).
    fn at(&self, key: u32) -> *mut Slot<K> {
        self.0.wrapping_add(key as usize)
    }
}

impl<K: ScriptKind> Scripts<K> {
    /// An empty store.
    pub fn new() -> Self {
        Self {
            slots: Vec::new(),
            free: Vec::new(),
            live: 0,
            next_serial: 0,
            identity: NEXT_STORE.fetch_add(1, Ordering::Relaxed),
            adopted: None,
            timers: EnumMap::default(),
            every_tick: Vec::new(),
            due: Vec::new(),
            collected: SyncWrapper::new(Vec::new()),
            undrained: 0,
            failures: Vec::new(),
            finished: 0,
            seen_steps: 0,
        }
    }

    /// Starts an `async` script; it first runs at the next gather.
    /// `script` is called at once with the script's context and returns
    /// the future the gathers poll.
    pub fn start<F, Fut>(&mut self, name: impl Into<Cow<'static, str>>, script: F) -> ScriptId
    where
        F: FnOnce(ScriptCx<K>) -> Fut,
        Fut: Future<Output = ()> + Send + 'static,
    {
        let future = script(ScriptCx::new());
        self.insert(name.into(), Body::Async(Box::pin(future)))
    }

    /// Starts a [`StepScript`], which [`snapshot`](Self::snapshot) can
    /// save; it first steps at the next gather.
    pub fn start_step<S>(&mut self, name: impl Into<Cow<'static, str>>, script: S) -> ScriptId
    where
        S: StepScript<K> + Clone,
    {
        self.insert(name.into(), Body::Step(Box::new(script)))
    }

    fn insert(&mut self, name: Cow<'static, str>, body: Body<K>) -> ScriptId {
        let serial = self.next_serial;
        self.next_serial += 1;
        let key = self.free_slot();
        let id = ScriptId { serial, key };
        self.place(
            Live {
                id,
                name,
                waiting: Waiting::Start,
                until: None,
            },
            body,
        );
        id
    }

    /// A free slot's key, growing the store when none is free.
    fn free_slot(&mut self) -> u32 {
        match self.free.pop() {
            Some(key) => key,
            None => self.grow(),
        }
    }

    /// Adds a free slot (not in the free list) and returns its key.
    fn grow(&mut self) -> u32 {
        let key = u32::try_from(self.slots.len()).expect("fewer than 2^32 scripts at once");
        self.slots.push(Slot {
            live: None,
            step: None,
            work: SyncWrapper::new(Work {
                future: None,
                intents: Vec::new(),
                outcome: Outcome::Pending,
            }),
        });
        key
    }

    /// Puts `live` with `body` in its (free) slot and schedules it.
    pub(super) fn place(&mut self, live: Live<K>, body: Body<K>) {
        let (key, waiting, serial) = (live.id.key, live.waiting, live.id.serial);
        let slot = &mut self.slots[key as usize];
        debug_assert!(slot.live.is_none(), "placed in a free slot");
        match body {
            Body::Async(future) => slot.work.get_mut().future = Some(future),
            Body::Step(step) => slot.step = Some(step),
        }
        slot.live = Some(live);
        self.live += 1;
        self.schedule(serial, key, waiting);
    }

    /// Files a pending script under what it waits on.
    fn schedule(&mut self, serial: u64, key: u32, waiting: Waiting) {
        match timer(waiting) {
            Some((cadence, at)) => self.timers[cadence].push(at, serial, key),
            None => self.every_tick.push((serial, key)),
        }
    }

    /// Cancels the script `id`: its code is dropped unrun, its unapplied
    /// intents with it. Returns whether it was live. A `Drop` that panics
    /// is caught and recorded as the script's failure.
    pub fn cancel(&mut self, id: ScriptId) -> bool {
        if self.get(id).is_none() {
            return false;
        }
        self.free(id.key);
        true
    }

    /// Cancels every script.
    pub fn clear(&mut self) {
        for key in 0..self.slots.len() as u32 {
            if self.slots[key as usize].live.is_some() {
                self.free(key);
            }
        }
        self.timers.values_mut().for_each(Timers::clear);
        self.every_tick.clear();
    }

    /// Frees a live slot, dropping its code and unapplied intents (a
    /// panicking `Drop` becomes the script's failure).
    fn free(&mut self, key: u32) {
        let slot = &mut self.slots[key as usize];
        let live = slot.live.take().expect("freeing a live slot");
        let work = slot.work.get_mut();
        work.outcome = Outcome::Pending;
        let body = (work.future.take(), slot.step.take());
        // Both run, whichever panics (the intents are user values too).
        let dropped = panic::catch_unwind(AssertUnwindSafe(move || drop(body))).and(
            panic::catch_unwind(AssertUnwindSafe(|| work.intents.clear())),
        );
        self.live -= 1;
        self.free.push(key);
        if let Err(payload) = dropped {
            let message = format!("{} (while dropped)", message(&*payload));
            self.fail(live.id, live.name.into_owned(), message);
        }
    }

    /// Records that the script `id` named `name` ended by panicking.
    fn fail(&mut self, id: ScriptId, name: String, message: String) {
        let failure = ScriptFailure { id, name, message };
        tracing::error!(script = %failure.name, id = %failure.id, "{failure}");
        self.failures.push(failure);
    }

    /// Runs every due script: those whose time came on `clock`, those
    /// waiting for a tick or a condition, and new ones; in parallel on the
    /// world's pool when called from a system, each reading `view` and
    /// writing only its own intents. Nothing runs while the clock is
    /// paused, but once after each [`SimClock::step`]. Scripts that end are
    /// removed; panicking ones are recorded in [`failures`](Self::failures).
    pub fn gather(&mut self, clock: &SimClock, view: &K::View<'_>) {
        let stepped = std::mem::replace(&mut self.seen_steps, clock.steps()) != clock.steps();
        if clock.is_paused() && !stepped {
            return;
        }
        let (now, fixed_now) = (clock.now(), clock.fixed_now());
        self.take_due(enum_map! {
            Cadence::Variable => now,
            Cadence::Fixed => fixed_now,
        });
        let slots = SlotsPtr(self.slots.as_mut_ptr());
        let due = &self.due;
        let run = |claimed: std::ops::Range<usize>| {
            let start = claimed.start * SCRIPTS_PER_SLICE;
            let end = (claimed.end * SCRIPTS_PER_SLICE).min(due.len());
            for &(_, key) in &due[start..end] {
                // SAFETY:
                // - `key` indexes `slots` (`take_due` kept live scripts
                //   only) and the store is not resized while `&mut self`
                //   is held here;
                // - `due` names each key once (a live script is in one
                //   wait structure, and stale entries were dropped), so no
                //   two slices reach one slot.
                let slot = unsafe { &mut *slots.at(key) };
                poll(slot, view, now, fixed_now);
            }
        };
        for_each_slice(due.len().div_ceil(SCRIPTS_PER_SLICE), &run);
        for index in 0..self.due.len() {
            let (_, key) = self.due[index];
            self.settle(key);
        }
    }

    /// Fills `due` with the live scripts to run now, in start order.
    fn take_due(&mut self, now: EnumMap<Cadence, Duration>) {
        self.due.clear();
        for (cadence, timers) in &mut self.timers {
            timers.take_due(now[cadence], &mut self.due);
        }
        if now.values().any(|&now| beyond_the_rings(now)) {
            self.file_early_timers_again(now);
        }
        self.due.append(&mut self.every_tick);
        let slots = &self.slots;
        self.due.retain(|&(serial, key)| {
            slots[key as usize]
                .live
                .as_ref()
                .is_some_and(|live| live.id.serial == serial)
        });
        self.due.sort_unstable_by_key(|&(serial, _)| serial);
    }

    /// The rings hold deadlines as u64 nanoseconds, saturating (584 years):
    /// once a clock is past that, every deadline beyond it comes out of
    /// the ring as due. Their exact deadlines are in their `waiting`: the
    /// ones not due yet are filed again, not run.
    #[cold]
    fn file_early_timers_again(&mut self, now: EnumMap<Cadence, Duration>) {
        let Self {
            slots, due, timers, ..
        } = self;
        due.retain(|&(serial, key)| {
            let live = slots[key as usize].live.as_ref();
            match live
                .filter(|live| live.id.serial == serial)
                .and_then(|live| timer(live.waiting))
            {
                Some((cadence, at)) if at > now[cadence] => timers[cadence].push(at, serial, key),
                _ => return true,
            }
            false
        });
    }

    /// After a poll: hands the script's intents to collect, then files it
    /// under its new wait, or removes it.
    fn settle(&mut self, key: u32) {
        let slot = &mut self.slots[key as usize];
        let work = slot.work.get_mut();
        let live = slot.live.as_ref().expect("a polled script is live");
        let (id, waiting) = (live.id, live.waiting);
        let outcome = std::mem::take(&mut work.outcome);
        if let Outcome::Panicked(message) = outcome {
            // What a panicking poll emitted goes with it (`free` clears it).
            let name = live.name.to_string();
            self.fail(id, name, message);
            self.free(key);
            return;
        }
        let collected = self.collected.get_mut();
        collected.extend(work.intents.drain(..).map(|intent| (id, intent)));
        self.undrained = collected.len();
        if let Outcome::Finished = outcome {
            self.finished += 1;
            self.free(key);
        } else {
            self.schedule(id.serial, key, waiting);
        }
    }

    /// The intents gathered so far, in script start order, then emission
    /// order; each is yielded once. Intents nobody drains accumulate.
    pub fn drain_intents(&mut self) -> std::vec::Drain<'_, (ScriptId, K::Intent)> {
        // A `Drain` empties the whole vector, even dropped unread or
        // leaked.
        self.undrained = 0;
        self.collected.get_mut().drain(..)
    }

    /// How many scripts are live.
    pub fn len(&self) -> usize {
        self.live
    }

    /// Whether no script is live.
    pub fn is_empty(&self) -> bool {
        self.live == 0
    }

    /// Every live script with what it waits on, in slot order.
    pub fn iter(&self) -> impl Iterator<Item = ScriptInfo<'_>> + '_ {
        self.slots
            .iter()
            .filter_map(|slot| slot.live.as_ref().map(info))
    }

    /// The script `id`, if it is live.
    pub fn get(&self, id: ScriptId) -> Option<ScriptInfo<'_>> {
        self.slots
            .get(id.key as usize)?
            .live
            .as_ref()
            .filter(|live| live.id == id)
            .map(info)
    }

    /// Scripts that ended by panicking, oldest first.
    pub fn failures(&self) -> &[ScriptFailure] {
        &self.failures
    }

    /// Takes the recorded failures.
    pub fn take_failures(&mut self) -> Vec<ScriptFailure> {
        std::mem::take(&mut self.failures)
    }

    /// How many scripts ran to their end.
    pub fn finished(&self) -> u64 {
        self.finished
    }

    /// Every live script with its step body (`None`: an `async`
    /// script), in slot order (for a snapshot).
    pub(super) fn live_scripts(
        &self,
    ) -> impl Iterator<Item = (&Live<K>, Option<&dyn StepBody<K>>)> + '_ {
        self.slots
            .iter()
            .filter_map(|slot| slot.live.as_ref().map(|live| (live, slot.step.as_deref())))
    }

    /// Takes a new identity, as if a new store: its history so far is no
    /// longer its own (a world's exact restore rewound its ids).
    pub(super) fn renew_identity(&mut self) {
        self.identity = NEXT_STORE.fetch_add(1, Ordering::Relaxed);
        self.adopted = None;
    }

    /// This store's identity, for its snapshots.
    pub(super) fn identity(&self) -> u64 {
        self.identity
    }

    /// How a restore of a snapshot of the store `source`, whose next serial
    /// was `saved_next`, numbers its scripts: the saved serials below the
    /// returned one are kept, the others are handed out afresh (in order).
    ///
    /// A saved id is kept where this store never gave it to another
    /// script: every id of its own snapshots (it handed each to that very
    /// script), every id when it has handed out none (it adopts the
    /// source's history), and the ids of the store it adopted from that
    /// are older than the adoption. Any other saved id may be one this
    /// store gave to a script of its own, so the script gets a new one.
    pub(super) fn kept_below(&mut self, source: u64, saved_next: u64) -> u64 {
        if source == self.identity {
            u64::MAX
        } else if self.next_serial == 0 {
            self.adopted = Some((source, saved_next));
            u64::MAX
        } else {
            match self.adopted {
                Some((adopted, fork)) if adopted == source => fork,
                _ => 0,
            }
        }
    }

    /// Whether this store never started a script (nor was restored).
    pub(super) fn is_fresh(&self) -> bool {
        self.next_serial == 0
    }

    /// The next serial, handed out to a script placed by a restore under a
    /// new id.
    pub(super) fn take_serial(&mut self) -> u64 {
        let serial = self.next_serial;
        self.next_serial += 1;
        serial
    }

    /// What a snapshot saves beside the scripts, into `into` (reusing
    /// its memory).
    pub(super) fn layout_into(&self, into: &mut Layout) {
        into.slots = self.slots.len();
        into.free.clone_from(&self.free);
        into.next_serial = self.next_serial;
        into.seen_steps = self.seen_steps;
        into.positions = EnumMap::from_fn(|cadence| self.timers[cadence].position());
        into.finished = self.finished;
    }

    /// How many intents wait for collect ([`drain_intents`](Self::drain_intents)).
    pub(crate) fn undrained(&self) -> usize {
        self.undrained
    }

    /// Empties the store for a restore and lays it out as `layout` was:
    /// every script cancelled, its free slots reused in the saved order
    /// (then any slots this store has beyond the saved ones, in the order
    /// the saved store would have grown them), the timer rings rebuilt at
    /// their saved positions, the saved clock steps seen. Serials go on
    /// from the larger of this store's and the saved next serial (the
    /// caller then numbers the scripts it gives new ids from there), so an
    /// id handed out after the restore was never handed out before.
    ///
    /// `exact` (a world's restore of this store's own snapshot): the next
    /// serial and the finished count are the saved ones, so the frames
    /// after the restore hand out the very ids the frames after the
    /// snapshot did (an id handed out in the frames undone may name
    /// another script again, as an entity id does after a world's
    /// restore).
    pub(super) fn reset(&mut self, layout: &Layout, exact: bool) {
        self.clear();
        while self.slots.len() < layout.slots {
            self.grow();
        }
        self.free.clear();
        let beyond = u32::try_from(layout.slots).expect("fewer than 2^32 slots");
        self.free.extend((beyond..self.slots.len() as u32).rev());
        self.free.extend_from_slice(&layout.free);
        for (cadence, timers) in &mut self.timers {
            timers.reset(layout.positions[cadence]);
        }
        self.collected.get_mut().clear();
        self.undrained = 0;
        if exact {
            self.next_serial = layout.next_serial;
            self.finished = layout.finished;
        } else {
            self.next_serial = self.next_serial.max(layout.next_serial);
        }
        self.seen_steps = layout.seen_steps;
    }
}

/// The clock a wait is filed under and its deadline, for a wait on time.
fn timer(waiting: Waiting) -> Option<(Cadence, Duration)> {
    match waiting {
        Waiting::Time(at) => Some((Cadence::Variable, at)),
        Waiting::FixedTime(at) => Some((Cadence::Fixed, at)),
        Waiting::Start | Waiting::NextTick | Waiting::Condition(_) | Waiting::Other => None,
    }
}

/// Whether `at` is past what the timer rings tell apart (u64 nanoseconds).
fn beyond_the_rings(at: Duration) -> bool {
    at.as_nanos() >= u128::from(u64::MAX)
}

fn info<K: ScriptKind>(live: &Live<K>) -> ScriptInfo<'_> {
    ScriptInfo {
        id: live.id,
        name: &live.name,
        waiting: live.waiting,
    }
}

/// Runs one due script until it waits again, ends or panics; records the
/// outcome and the new wait in its slot.
fn poll<K: ScriptKind>(slot: &mut Slot<K>, view: &K::View<'_>, now: Duration, fixed_now: Duration) {
    let Slot { live, step, work } = slot;
    let Some(live) = live.as_mut() else {
        return;
    };
    let Work {
        future,
        intents,
        outcome,
    } = work.get_mut();
    *outcome = match (step, future) {
        (None, Some(future)) => {
            let mut polling = Polling {
                kind: TypeId::of::<K>(),
                view: ptr::from_ref(view).cast(),
                intents: ptr::from_mut(intents).cast(),
                now,
                fixed_now,
                id: live.id,
                waiting: Waiting::Other,
            };
            let result = {
                // SAFETY: `polling`, the view and the intents outlive the
                // guard, which drops before any of them is used again.
                let _guard = unsafe { PollGuard::enter(&raw mut polling) };
                panic::catch_unwind(AssertUnwindSafe(|| {
                    future
                        .as_mut()
                        .poll(&mut Context::from_waker(Waker::noop()))
                }))
            };
            match result {
                Ok(Poll::Ready(())) => Outcome::Finished,
                Ok(Poll::Pending) => {
                    live.waiting = polling.waiting;
                    Outcome::Pending
                }
                Err(payload) => Outcome::Panicked(message(&*payload)),
            }
        }
        (Some(step), _) => {
            let result = panic::catch_unwind(AssertUnwindSafe(|| {
                if let Some(until) = live.until
                    && !until(view)
                {
                    return None;
                }
                let mut cx = Step {
                    id: live.id,
                    now,
                    fixed_now,
                    view,
                    intents,
                };
                Some(step.step(&mut cx))
            }));
            match result {
                Ok(None) => Outcome::Pending,
                Ok(Some(Wait::Done)) => Outcome::Finished,
                Ok(Some(wait)) => {
                    live.until = None;
                    live.waiting = match wait {
                        Wait::For(duration) => Waiting::Time(now.saturating_add(duration)),
                        Wait::ForFixed(duration) => {
                            Waiting::FixedTime(fixed_now.saturating_add(duration))
                        }
                        Wait::Until(condition) => {
                            live.until = Some(condition);
                            Waiting::Condition(None)
                        }
                        Wait::NextTick | Wait::Done => Waiting::NextTick,
                    };
                    Outcome::Pending
                }
                Err(payload) => Outcome::Panicked(message(&*payload)),
            }
        }
        (None, None) => unreachable!("a live script has code"),
    };
}

fn message(payload: &(dyn std::any::Any + Send)) -> String {
    panic_message(payload)
        .unwrap_or("a panic without a message")
        .to_owned()
}

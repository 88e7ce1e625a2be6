//! Saving and restoring a store's scripts whose state is data.

use std::borrow::Cow;

use super::step::StepBody;
use super::store::{Body, Layout, Live, Until};
use super::{ScriptId, ScriptKind, Scripts, Waiting};

/// A saved copy of a [`Scripts`] store whose scripts are all
/// [`StepScript`](super::StepScript)s. Restoring it ([`Scripts::restore`])
/// gives a store that behaves as the saved one did from the moment it was
/// saved, intent for intent, in the same store (again and again) or in
/// another world's.
///
/// It holds:
/// - each live script: its id, name, state (a clone of the step script)
///   and what it waits on (a deadline on
///   [`SimClock::now`](super::SimClock::now) or
///   [`fixed_now`](super::SimClock::fixed_now), a condition, the next tick);
/// - the store's layout: which slots are free and the order they are
///   reused in (so scripts started after a restore take the slots they
///   took after the save), the next serial, where its timer rings stood,
///   and the clock steps its last gather saw;
/// - which store it was taken from, so that a restore knows whose ids it
///   brings (see [`Scripts::restore`]).
///
/// It does not hold the clocks: the waits are deadlines on the world's
/// [`SimClock`](super::SimClock), which moves with the world's frame clock
/// and fixed-step accumulator. Save them beside it with
/// [`World::clock_snapshot`](crate::World::clock_snapshot) and restore
/// them together ([`World::restore_clock`](crate::World::restore_clock)).
/// Nor does it hold intents not yet drained (take it between updates,
/// after collect), [`failures`](Scripts::failures), the
/// [`finished`](Scripts::finished) count, or `async` scripts (refused).
pub struct ScriptSnapshot<K: ScriptKind> {
    scripts: Vec<Saved<K>>,
    layout: Layout,
    /// The identity of the store it was taken from.
    source: u64,
}

pub(super) struct Saved<K: ScriptKind> {
    pub(super) id: ScriptId,
    pub(super) name: Cow<'static, str>,
    pub(super) waiting: Waiting,
    pub(super) until: Option<Until<K>>,
    pub(super) body: Box<dyn StepBody<K>>,
}

/// One saved script (for the saves on disk).
#[cfg(feature = "serde")]
pub(super) type SavedScript<K> = Saved<K>;

impl<K: ScriptKind> Clone for ScriptSnapshot<K> {
    fn clone(&self) -> Self {
        Self {
            scripts: self
                .scripts
                .iter()
                .map(|saved| Saved {
                    id: saved.id,
                    name: saved.name.clone(),
                    waiting: saved.waiting,
                    until: saved.until,
                    body: saved.body.boxed_clone(),
                })
                .collect(),
            layout: self.layout.clone(),
            source: self.source,
        }
    }
}

impl<K: ScriptKind> std::fmt::Debug for ScriptSnapshot<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ScriptSnapshot")
            .field("scripts", &self.len())
            .field("next_serial", &self.layout.next_serial)
            .finish()
    }
}

impl<K: ScriptKind> ScriptSnapshot<K> {
    /// How many scripts it holds.
    pub fn len(&self) -> usize {
        self.scripts.len()
    }

    /// Whether it holds no script.
    pub fn is_empty(&self) -> bool {
        self.scripts.is_empty()
    }

    /// The saved scripts' ids, names and waits, in start order.
    pub fn scripts(&self) -> impl Iterator<Item = (ScriptId, &str, Waiting)> + '_ {
        self.scripts
            .iter()
            .map(|saved| (saved.id, &*saved.name, saved.waiting))
    }
}

/// [`Scripts::snapshot`] met a script whose state is not data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotRestorable {
    /// The script.
    pub id: ScriptId,
    /// Its name.
    pub name: String,
}

impl std::fmt::Display for NotRestorable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "script `{}` ({}) is async: only step scripts (state as data) can be snapshotted",
            self.name, self.id
        )
    }
}

impl std::error::Error for NotRestorable {}

impl<K: ScriptKind> ScriptSnapshot<K> {
    /// Its scripts, in serial order (for a save).
    #[cfg(feature = "serde")]
    pub(super) fn saved(&self) -> &[Saved<K>] {
        &self.scripts
    }

    /// Its layout (for a save).
    #[cfg(feature = "serde")]
    pub(super) fn layout(&self) -> &Layout {
        &self.layout
    }

    /// A snapshot of these parts (a save's, checked by the caller).
    #[cfg(feature = "serde")]
    pub(super) fn from_parts(scripts: Vec<Saved<K>>, layout: Layout, source: u64) -> Self {
        Self {
            scripts,
            layout,
            source,
        }
    }

    /// A snapshot holding nothing, to capture into.
    pub(crate) fn empty() -> Self {
        Self {
            scripts: Vec::new(),
            layout: Layout::default(),
            source: u64::MAX,
        }
    }

    /// Captures `store` into this snapshot, reusing its memory: a script
    /// of the type the same entry held last time is cloned with
    /// [`Clone::clone_from`], so a warm capture of the same scripts
    /// allocates nothing. A `Clone` may panic: the snapshot is then
    /// partly filled, for the caller to forget.
    ///
    /// # Errors
    /// The first `async` script, by slot (the snapshot is partly filled).
    pub(crate) fn capture_from(&mut self, store: &Scripts<K>) -> Result<(), NotRestorable> {
        store.layout_into(&mut self.layout);
        self.source = store.identity();
        let mut len = 0;
        for (live, step) in store.live_scripts() {
            let Some(step) = step else {
                self.scripts.truncate(len);
                return Err(NotRestorable {
                    id: live.id,
                    name: live.name.to_string(),
                });
            };
            if let Some(saved) = self.scripts.get_mut(len) {
                saved.id = live.id;
                saved.name.clone_from(&live.name);
                saved.waiting = live.waiting;
                saved.until = live.until;
                step.clone_into_box(&mut saved.body);
            } else {
                self.scripts.push(Saved {
                    id: live.id,
                    name: live.name.clone(),
                    waiting: live.waiting,
                    until: live.until,
                    body: step.boxed_clone(),
                });
            }
            len += 1;
        }
        self.scripts.truncate(len);
        // Serials are unique: an unstable sort is exact, and allocates
        // nothing.
        self.scripts.sort_unstable_by_key(|saved| saved.id.serial);
        Ok(())
    }

    /// A clone of every saved script's state, in order, out of any store:
    /// the only step of a restore that runs user code that may panic
    /// (`Clone`).
    pub(crate) fn stage(&self) -> Vec<Box<dyn StepBody<K>>> {
        self.scripts
            .iter()
            .map(|saved| saved.body.boxed_clone())
            .collect()
    }

    /// The heap bytes it holds: its entries and layout (a script's own
    /// state is counted by its inline size).
    pub(crate) fn heap_bytes(&self) -> usize {
        self.scripts.capacity() * size_of::<Saved<K>>()
            + self
                .scripts
                .iter()
                .map(|saved| size_of_val(&*saved.body))
                .sum::<usize>()
            + self.layout.heap_bytes()
    }
}

impl<K: ScriptKind> Scripts<K> {
    /// Saves every live script, if all are [`StepScript`](super::StepScript)s.
    ///
    /// # Errors
    /// [`NotRestorable`] naming the first `async` script (by slot).
    pub fn snapshot(&self) -> Result<ScriptSnapshot<K>, NotRestorable> {
        let mut snapshot = ScriptSnapshot::empty();
        snapshot.capture_from(self)?;
        Ok(snapshot)
    }

    /// Replaces every script with the snapshot's (the current ones are
    /// cancelled, a panicking `Drop` recorded as a failure), with the same
    /// ids, states and waits, and lays the store out as it was saved (see
    /// [`ScriptSnapshot`]). The timer rings are rebuilt at the saved
    /// position; restore the world's clock with it. Every script's state
    /// is cloned out of the snapshot first: a panicking `Clone` leaves the
    /// store as it was.
    ///
    /// Ids stay unique: the ids of scripts gone with the restore name
    /// nothing afterwards ([`get`](Self::get) is `None`,
    /// [`cancel`](Self::cancel) `false`), and the scripts started after it
    /// get ids above every id this store handed out, even when the snapshot
    /// is older than some of them. The restored scripts keep their saved
    /// ids when the snapshot is this store's own, when this store has
    /// started no script yet (a fresh world: the run goes on with the very
    /// ids the saved one would have handed out, and its
    /// [`finished`](Self::finished) count is the saved one), or, in a store first
    /// restored while fresh, for the ids the first snapshot's store had
    /// handed out by then. Otherwise a saved id may be one this store gave
    /// to a script of its own, so the restored scripts get new ids after
    /// this store's, in their saved order (find them with
    /// [`iter`](Self::iter)); they run as saved all the same.
    ///
    /// A world's [`restore`](crate::World::restore) into the world the
    /// snapshot was taken from differs: it puts the store back exactly,
    /// the next id too (rollback: the frames after it hand out the ids
    /// they handed out, so an id handed out in the frames undone may name
    /// another script again, as an entity id may), and the store then
    /// counts as a new one: a `ScriptSnapshot` taken before restores into
    /// it as another store's does. Into another world it restores as this
    /// method does.
    pub fn restore(&mut self, snapshot: &ScriptSnapshot<K>) {
        let staged = snapshot.stage();
        self.restore_staged(snapshot, staged, false);
    }

    /// [`restore`](Self::restore) with the scripts' states cloned already
    /// (`staged`, from [`ScriptSnapshot::stage`]); nothing here panics but
    /// a cancelled script's `Drop` (recorded as its failure).
    ///
    /// `exact` (a world's restore into the world it was taken from): every
    /// saved id is kept and the ids to hand out next are the saved ones,
    /// so ids handed out in the frames undone are handed out again. The
    /// store then takes a new identity: a [`ScriptSnapshot`] taken before
    /// restores into it as another store's would (new ids where they may
    /// clash), so no two live scripts ever share an id.
    pub(crate) fn restore_staged(
        &mut self,
        snapshot: &ScriptSnapshot<K>,
        staged: Vec<Box<dyn StepBody<K>>>,
        exact: bool,
    ) {
        // A store that never started a script takes the saved one's place
        // whole: its finished count too.
        let fresh = self.is_fresh();
        let kept_below = if exact {
            self.renew_identity();
            u64::MAX
        } else {
            self.kept_below(snapshot.source, snapshot.layout.next_serial)
        };
        self.reset(&snapshot.layout, exact || fresh);
        for (saved, body) in snapshot.scripts.iter().zip(staged) {
            let mut id = saved.id;
            if id.serial >= kept_below {
                id.serial = self.take_serial();
            }
            self.place(
                Live {
                    id,
                    name: saved.name.clone(),
                    waiting: saved.waiting,
                    until: saved.until,
                },
                Body::Step(body),
            );
        }
    }
}

//! A [`ScriptSnapshot`]'s saved form on disk (the `serde` feature): its
//! layout and each script's id, name and wait as plain data, the script's
//! state left to the caller's codec (`snapshot/script_saves.rs`).

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::ScriptId;
use super::snapshot::{SavedScript, ScriptSnapshot};
use super::step::StepBody;
use super::store::{Layout, fresh_identity};
use super::{ScriptKind, Waiting};
use crate::organise::Cadence;

/// What a saved step script waits on (a condition is given back by the
/// loaded state: [`StepScript::resume_wait`](super::StepScript::resume_wait)).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) enum SavedWait {
    /// Not yet run.
    Start,
    /// A deadline on `SimClock::now`.
    Time(Duration),
    /// A deadline on `SimClock::fixed_now`.
    FixedTime(Duration),
    /// The next gather.
    NextTick,
    /// A condition on the view.
    Condition,
}

impl SavedWait {
    /// The saved form of `waiting` (`None`: an `async` script's wait).
    fn of(waiting: Waiting) -> Option<Self> {
        Some(match waiting {
            Waiting::Start => SavedWait::Start,
            Waiting::Time(at) => SavedWait::Time(at),
            Waiting::FixedTime(at) => SavedWait::FixedTime(at),
            Waiting::NextTick => SavedWait::NextTick,
            Waiting::Condition(None) => SavedWait::Condition,
            Waiting::Condition(Some(_)) | Waiting::Other => return None,
        })
    }

    fn waiting(self) -> Waiting {
        match self {
            SavedWait::Start => Waiting::Start,
            SavedWait::Time(at) => Waiting::Time(at),
            SavedWait::FixedTime(at) => Waiting::FixedTime(at),
            SavedWait::NextTick => Waiting::NextTick,
            SavedWait::Condition => Waiting::Condition(None),
        }
    }
}

/// A store's layout as saved: the slot count, the free list in reuse
/// order (last first), the next serial, the clock steps seen, the timer
/// rings' positions (variable, fixed) and the finished count.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct SavedLayout {
    slots: u64,
    free: Vec<u32>,
    next_serial: u64,
    seen_steps: u64,
    positions: (u64, u64),
    finished: u64,
}

/// One saved script, borrowed from a snapshot for a save.
pub(crate) struct SavedEntry<'a, K: ScriptKind> {
    /// Its id's serial and slot.
    pub(crate) serial: u64,
    pub(crate) key: u32,
    pub(crate) name: &'a str,
    /// `None`: not a step script's wait (never in a captured snapshot).
    pub(crate) wait: Option<SavedWait>,
    pub(crate) body: &'a dyn StepBody<K>,
}

/// One script decoded from a save.
pub(crate) struct LoadedScript<K: ScriptKind> {
    pub(crate) serial: u64,
    pub(crate) key: u32,
    pub(crate) name: String,
    pub(crate) wait: SavedWait,
    pub(crate) body: Box<dyn StepBody<K>>,
}

impl<K: ScriptKind> ScriptSnapshot<K> {
    /// The layout as a save holds it.
    pub(crate) fn saved_layout(&self) -> SavedLayout {
        let layout = self.layout();
        SavedLayout {
            slots: layout.slots as u64,
            free: layout.free.clone(),
            next_serial: layout.next_serial,
            seen_steps: layout.seen_steps,
            positions: (
                layout.positions[Cadence::Variable],
                layout.positions[Cadence::Fixed],
            ),
            finished: layout.finished,
        }
    }

    /// Each script as a save holds it, in serial order.
    pub(crate) fn saved_entries(&self) -> impl Iterator<Item = SavedEntry<'_, K>> + '_ {
        self.saved().iter().map(|saved| SavedEntry {
            serial: saved.id.serial,
            key: saved.id.key,
            name: &saved.name,
            wait: SavedWait::of(saved.waiting),
            body: &*saved.body,
        })
    }

    /// A snapshot of the decoded `layout` and `scripts`, checked: every
    /// slot free or live (once), free slots and keys within the slots,
    /// serials rising and below the next serial, and a condition given
    /// back by each script waiting on one. It counts as a store of its
    /// own (a new identity: see [`Scripts::restore`](super::Scripts::restore)).
    ///
    /// # Errors
    /// What contradicts what.
    pub(crate) fn from_saved(
        layout: SavedLayout,
        scripts: Vec<LoadedScript<K>>,
    ) -> Result<Self, String> {
        // Every slot is live or free: the slot count is bounded by what
        // was decoded, so a forged count reserves nothing.
        let slots = scripts.len() + layout.free.len();
        if layout.slots != slots as u64 {
            return Err(format!(
                "the store has {} slots, {} scripts and {} free slots",
                layout.slots,
                scripts.len(),
                layout.free.len()
            ));
        }
        let mut used = vec![false; slots];
        let mut claim = |key: u32, what: &dyn Fn() -> String| match used.get_mut(key as usize) {
            Some(slot) if !*slot => {
                *slot = true;
                Ok(())
            }
            Some(_) => Err(format!("{} takes the slot {key} twice", what())),
            None => Err(format!("{} names the slot {key} of {slots}", what())),
        };
        for &key in &layout.free {
            claim(key, &|| "the free list".to_owned())?;
        }
        let mut previous = None;
        let mut saved = Vec::with_capacity(scripts.len());
        for script in scripts {
            let id = ScriptId {
                serial: script.serial,
                key: script.key,
            };
            claim(script.key, &|| {
                format!("the script `{}` ({id})", script.name)
            })?;
            if previous.is_some_and(|previous| previous >= script.serial)
                || script.serial >= layout.next_serial
            {
                return Err(format!(
                    "the script `{}` has the serial {}: serials rise, below the next ({})",
                    script.name, script.serial, layout.next_serial
                ));
            }
            previous = Some(script.serial);
            let until = match script.wait {
                SavedWait::Condition => Some(script.body.resume_until().ok_or_else(|| {
                    format!(
                        "the script `{}` ({id}) waits on a condition its type {} does not \
                         give back (StepScript::resume_wait)",
                        script.name,
                        script.body.type_name()
                    )
                })?),
                _ => None,
            };
            saved.push(SavedScript {
                id,
                name: script.name.into(),
                waiting: script.wait.waiting(),
                until,
                body: script.body,
            });
        }
        let [variable, fixed] = [layout.positions.0, layout.positions.1];
        let layout = Layout {
            slots,
            free: layout.free,
            next_serial: layout.next_serial,
            seen_steps: layout.seen_steps,
            positions: enum_map::enum_map! {
                Cadence::Variable => variable,
                Cadence::Fixed => fixed,
            },
            finished: layout.finished,
        };
        Ok(ScriptSnapshot::from_parts(saved, layout, fresh_identity()))
    }
}

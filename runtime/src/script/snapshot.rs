//! Saving and restoring a store's scripts whose state is data.

use std::borrow::Cow;

use super::step::StepBody;
use super::store::{Body, Live, Until};
use super::{ScriptId, ScriptKind, Scripts, Waiting};

/// A saved copy of a [`Scripts`] store whose scripts are all
/// [`StepScript`](super::StepScript)s: each script's state, what it waits
/// on and its id. Restoring it ([`Scripts::restore`]) gives a store that
/// behaves as the saved one did from the moment it was saved, in this
/// world or another; take it between ticks, after collect (intents not yet
/// drained are not saved). Save the [`SimClock`](super::SimClock) beside
/// it: waits are deadlines on that clock.
pub struct ScriptSnapshot<K: ScriptKind> {
    scripts: Vec<Saved<K>>,
    next_serial: u64,
    slots: usize,
}

struct Saved<K: ScriptKind> {
    id: ScriptId,
    name: Cow<'static, str>,
    waiting: Waiting,
    until: Option<Until<K>>,
    body: Box<dyn StepBody<K>>,
}

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
            next_serial: self.next_serial,
            slots: self.slots,
        }
    }
}

impl<K: ScriptKind> std::fmt::Debug for ScriptSnapshot<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ScriptSnapshot")
            .field("scripts", &self.len())
            .field("next_serial", &self.next_serial)
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

impl<K: ScriptKind> Scripts<K> {
    /// Saves every live script, if all are [`StepScript`](super::StepScript)s.
    ///
    /// # Errors
    /// [`NotRestorable`] naming the first `async` script (by slot).
    pub fn snapshot(&mut self) -> Result<ScriptSnapshot<K>, NotRestorable> {
        let next_serial = self.next_serial();
        let slots = self.iter().map(|info| info.id.key as usize + 1).max();
        let parts = self.saved_parts().map_err(|live| NotRestorable {
            id: live.id,
            name: live.name.to_string(),
        })?;
        Ok(ScriptSnapshot {
            scripts: parts
                .into_iter()
                .map(|(live, body)| Saved {
                    id: live.id,
                    name: live.name.clone(),
                    waiting: live.waiting,
                    until: live.until,
                    body,
                })
                .collect(),
            next_serial,
            slots: slots.unwrap_or(0),
        })
    }

    /// Replaces every script with the snapshot's (the current ones are
    /// cancelled), with the same ids, states and waits.
    pub fn restore(&mut self, snapshot: &ScriptSnapshot<K>) {
        let taken = snapshot.scripts.iter().map(|saved| saved.id.key);
        self.reset(snapshot.slots, snapshot.next_serial, taken);
        for saved in &snapshot.scripts {
            self.place(
                Live {
                    id: saved.id,
                    name: saved.name.clone(),
                    waiting: saved.waiting,
                    until: saved.until,
                },
                Body::Step(saved.body.boxed_clone()),
            );
        }
    }
}

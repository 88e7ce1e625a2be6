//! Services that are not `Send` (reference 003's main thread: windows, GPU
//! surfaces, audio devices), Bevy's `insert_non_send_resource` for sluice.
//!
//! The value sits in its service's ordinary slot inside a cell that hands
//! it out only on the thread that inserted it (`crate::non_send`): the
//! world stays `Send + Sync`, a world moved elsewhere reaches none of its
//! non-`Send` values there (an iteration run there is refused with
//! [`IterationError::WrongThread`]), and a value dropped elsewhere is
//! leaked, never dropped on the wrong thread. Only nodes pinned to the main
//! thread may name such a service (SL0011): [`NonSend`](crate::NonSend) and
//! [`NonSendMut`](crate::NonSendMut) pin theirs.

use crate::non_send::current_thread;
use crate::world::{IterationError, World};

impl World {
    /// Stores `value`, which need not be `Send` or `Sync`, as the service
    /// `T`, replacing any previous value; it belongs to the calling thread.
    ///
    /// Nodes reach it as [`NonSend<T>`](crate::NonSend) or
    /// [`NonSendMut<T>`](crate::NonSendMut), which pin them to the thread
    /// that runs the iteration; iterations must then run on this thread
    /// ([`IterationError::WrongThread`] otherwise). A node that names `T`
    /// any other way must be pinned ([`NodeBuilder::pinned`](crate::NodeBuilder::pinned),
    /// [`Group::pinned`](crate::Group::pinned)), or the plan refuses it
    /// (SL0011). A replaced value made on another thread is leaked rather
    /// than dropped here, and so is every non-`Send` value of a world
    /// dropped on a thread that is not its own.
    pub fn insert_non_send<T: 'static>(&mut self, value: T) {
        let registry = self.graph.registry_mut();
        let newly_marked = registry
            .id_of::<T>()
            .is_none_or(|id| !registry.table().is_non_send(id));
        let (Some(id), Some(owner)) = (registry.insert_non_send(value), current_thread()) else {
            // The thread is being torn down: there is nothing to own it.
            return;
        };
        match self.non_send.iter_mut().find(|(held, _)| *held == id) {
            Some(entry) => entry.1 = owner,
            None => self.non_send.push((id, owner)),
        }
        // A node planned as naming an ordinary service now names a
        // non-`Send` one: the plan must check it again (SL0011).
        if newly_marked {
            self.stale = true;
        }
    }

    /// The non-`Send` service `T`: `None` when the world holds none, or on
    /// a thread other than the one that inserted it.
    pub fn get_non_send<T: 'static>(&self) -> Option<&T> {
        self.graph.registry().get_non_send()
    }

    /// The non-`Send` service `T`, mutably (bumps its version, as a gate
    /// would): `None` when the world holds none, or on a thread other than
    /// the one that inserted it.
    pub fn get_non_send_mut<T: 'static>(&mut self) -> Option<&mut T> {
        self.graph.registry_mut().get_non_send_mut()
    }

    /// Refuses to run on a thread other than the one that owns the world's
    /// non-`Send` values: its pinned nodes would run here, and reach none.
    pub(super) fn check_main_thread(&self) -> Result<(), IterationError> {
        if self.non_send.is_empty() {
            return Ok(());
        }
        let here = current_thread();
        match self.non_send.iter().find(|(_, owner)| Some(*owner) != here) {
            Some(&(id, _)) => Err(IterationError::WrongThread {
                service: self.graph.registry().table().name(id).to_owned(),
            }),
            None => Ok(()),
        }
    }
}

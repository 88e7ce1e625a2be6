//! Pause, step and resume, and the requests the server queues for the
//! game thread.

use serde::Serialize;

use crate::snapshot::{EntityList, EntityView};

/// What the page asks of the frame loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Command {
    /// Stop at the end of the current frame.
    Pause,
    /// Run one more frame, then stop again.
    Step,
    /// Run freely.
    Resume,
}

/// The pause state after a command: what the API answers.
#[derive(Debug, Clone, Copy, Serialize)]
pub(crate) struct ControlState {
    pub(crate) paused: bool,
    pub(crate) frame: u64,
}

/// A request for the game thread, with where its answer goes.
pub(crate) enum Request {
    /// A pause, step or resume.
    Control(Command, tokio::sync::oneshot::Sender<ControlState>),
    /// One entity's components.
    Entity(u64, tokio::sync::oneshot::Sender<Option<EntityView>>),
    /// A page of entity ids.
    Entities(usize, usize, tokio::sync::oneshot::Sender<EntityList>),
}

/// The frame loop's pause state.
#[derive(Debug, Default)]
pub(crate) struct Control {
    paused: bool,
    /// A step was asked for: the current frame runs, then the loop pauses.
    stepping: bool,
}

impl Control {
    pub(crate) fn paused(&self) -> bool {
        self.paused
    }

    pub(crate) fn resume(&mut self) {
        self.paused = false;
        self.stepping = false;
    }

    pub(crate) fn apply(&mut self, command: Command) {
        match command {
            Command::Pause => {
                self.paused = true;
                self.stepping = false;
            }
            // From a pause: let one frame run. While running: run this
            // frame, pause at its end.
            Command::Step => {
                self.paused = false;
                self.stepping = true;
            }
            Command::Resume => self.resume(),
        }
    }

    /// A frame ended: a step pauses again. Whether the state changed.
    pub(crate) fn end_frame(&mut self) -> bool {
        if self.stepping {
            self.stepping = false;
            self.paused = true;
            true
        } else {
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn step_runs_exactly_one_frame_then_pauses() {
        let mut control = Control::default();
        control.apply(Command::Pause);
        assert!(control.paused());
        control.apply(Command::Step);
        assert!(!control.paused(), "the stepped frame runs");
        assert!(control.end_frame());
        assert!(control.paused(), "paused again after one frame");
        assert!(!control.end_frame());
        control.apply(Command::Resume);
        assert!(!control.paused());
        assert!(!control.end_frame());
        assert!(!control.paused());
    }
}

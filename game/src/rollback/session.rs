//! Serving ggrs: [`BattleConfig`] (the game's types for a session),
//! [`Rollback`] (a [`RollbackGame`] that fulfils a session's requests:
//! save into the cell's [`Snapshot`], load with [`World::restore`](sluice::World::restore),
//! advance), the errors, and the sync test.

use std::fmt;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use ggrs::{
    Config, Frame, GameStateCell, GgrsError, GgrsRequest, PlayerType, PredictRepeatLast,
    SessionBuilder,
};
use sluice::{RestoreError, Snapshot, SnapshotError};

use crate::GameError;
use crate::rollback::battle::{BattleSetup, RollbackGame};
use crate::rollback::input::{BattleInput, PLAYERS};
use crate::rollback::socket::NetConditionsError;

/// The rollback battle's types for ggrs: its input is [`BattleInput`],
/// its saved state a [`SavedFrame`] (a [`Snapshot`] of the world), its peers socket
/// addresses (the in-process [`ChannelSocket`](super::ChannelSocket)
/// makes some up).
#[derive(Debug)]
pub struct BattleConfig;

impl Config for BattleConfig {
    type Input = BattleInput;
    type InputPredictor = PredictRepeatLast;
    type State = SavedFrame;
    type Address = SocketAddr;
}

/// What a ggrs cell holds: a snapshot of the battle and the frame it was
/// taken at (checked before a load changes anything).
///
/// `Clone` (ggrs asks it of a state when its `sync-send` feature is on,
/// as bevy_ggrs turns it on) shares the snapshot; a save writes into it in
/// place while the cell holds the only handle, which is the steady state.
#[derive(Clone, Debug, Default)]
pub struct SavedFrame {
    /// The frame: frames run before the snapshot was taken.
    pub frame: u64,
    /// The battle.
    pub snapshot: Arc<Snapshot>,
}

/// Why a rollback session stopped.
#[derive(Debug)]
#[non_exhaustive]
pub enum RollbackError {
    /// The battle could not be built or a frame failed.
    Game(GameError),
    /// Taking the snapshot ggrs asked to save failed.
    Snapshot {
        /// The frame being saved.
        frame: Frame,
        /// Why.
        error: SnapshotError,
    },
    /// Restoring the snapshot ggrs asked to load failed (the world is as
    /// it was before the load).
    Restore {
        /// The frame being loaded.
        frame: Frame,
        /// Why.
        error: RestoreError,
    },
    /// ggrs asked to load a frame whose cell holds no state.
    NothingSaved {
        /// The frame.
        frame: Frame,
    },
    /// ggrs's frame and the battle's disagree (a request was skipped or
    /// fulfilled out of order); nothing changed.
    FrameMismatch {
        /// What the request said.
        requested: Frame,
        /// The frame the battle is at (to save), or the cell's snapshot
        /// was taken at (to load).
        battle: u64,
    },
    /// ggrs refused a call (building a session, adding input) or its sync
    /// test found a frame whose checksum changed when it was run again.
    Ggrs(GgrsError),
    /// Two peers' checksums of one confirmed frame differ.
    Desync {
        /// The frame.
        frame: Frame,
        /// This peer's checksum.
        local: u128,
        /// The other peer's.
        remote: u128,
    },
    /// The other peer disconnected before the last frame was confirmed.
    Disconnected {
        /// Its address.
        peer: SocketAddr,
    },
    /// The frames were not all confirmed in the time given.
    Timeout {
        /// The time given.
        limit: Duration,
        /// The last confirmed frame, per local session.
        confirmed: Vec<Frame>,
    },
    /// A socket could not be opened.
    Socket(std::io::Error),
    /// The network conditions were out of range.
    Conditions(NetConditionsError),
    /// A setting is out of range (named in the message).
    Setting(String),
}

impl fmt::Display for RollbackError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Game(error) => write!(f, "rollback battle: {error}"),
            Self::Snapshot { frame, error } => {
                write!(f, "rollback: saving frame {frame} failed: {error}")
            }
            Self::Restore { frame, error } => {
                write!(f, "rollback: loading frame {frame} failed: {error}")
            }
            Self::NothingSaved { frame } => {
                write!(
                    f,
                    "rollback: ggrs asked to load frame {frame}, which was never saved"
                )
            }
            Self::FrameMismatch { requested, battle } => write!(
                f,
                "rollback: ggrs's request names frame {requested}, the battle (or the saved state) is at frame {battle}"
            ),
            Self::Ggrs(error) => write!(f, "rollback: ggrs: {error}"),
            Self::Desync {
                frame,
                local,
                remote,
            } => write!(
                f,
                "rollback: desync at frame {frame}: checksum {local:016x} here, {remote:016x} on \
                 the other peer"
            ),
            Self::Disconnected { peer } => {
                write!(f, "rollback: the peer at {peer} disconnected")
            }
            Self::Timeout { limit, confirmed } => write!(
                f,
                "rollback: the frames were not confirmed within {limit:?} (last confirmed frame \
                 per session: {confirmed:?})"
            ),
            Self::Socket(error) => write!(f, "rollback: socket: {error}"),
            Self::Conditions(error) => write!(f, "rollback: {error}"),
            Self::Setting(what) => write!(f, "rollback: {what}"),
        }
    }
}

impl std::error::Error for RollbackError {}

impl From<GgrsError> for RollbackError {
    fn from(error: GgrsError) -> Self {
        Self::Ggrs(error)
    }
}

impl From<GameError> for RollbackError {
    fn from(error: GameError) -> Self {
        Self::Game(error)
    }
}

/// What a [`Rollback`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RollbackStats {
    /// States saved.
    pub saves: u64,
    /// States loaded: rollbacks.
    pub loads: u64,
    /// Frames run, first runs and re-runs after a load.
    pub advances: u64,
    /// Of them, re-runs after a load.
    pub resimulated: u64,
    /// Time spent restoring.
    pub restore_time: Duration,
    /// Time spent saving (snapshot and checksum).
    pub save_time: Duration,
}

/// A [`RollbackGame`] serving a ggrs session's requests, keeping for every
/// frame the checksum of its state and the inputs it last ran with (the
/// final ones for every confirmed frame).
#[derive(Debug)]
pub struct Rollback {
    game: RollbackGame,
    /// By frame: the checksum of the state before that frame ran.
    checksums: Vec<u64>,
    /// By frame: the inputs it ran with.
    inputs: Vec<[BattleInput; PLAYERS]>,
    /// The furthest frame reached, to count re-runs.
    furthest: u64,
    stats: RollbackStats,
}

impl Rollback {
    /// Builds the battle.
    ///
    /// # Errors
    /// As for [`RollbackGame::new`].
    pub fn new(setup: &BattleSetup) -> Result<Self, RollbackError> {
        Ok(Self {
            game: RollbackGame::new(setup)?,
            checksums: Vec::new(),
            inputs: Vec::new(),
            furthest: 0,
            stats: RollbackStats::default(),
        })
    }

    /// Fulfils `requests` in order.
    ///
    /// # Errors
    /// When a save, load or frame fails, or a request names another frame
    /// than the battle's; the requests after it are not fulfilled.
    pub fn handle(
        &mut self,
        requests: Vec<GgrsRequest<BattleConfig>>,
    ) -> Result<(), RollbackError> {
        for request in requests {
            match request {
                GgrsRequest::SaveGameState { cell, frame } => self.save(&cell, frame)?,
                GgrsRequest::LoadGameState { cell, frame } => self.load(&cell, frame)?,
                GgrsRequest::AdvanceFrame { inputs } => {
                    let inputs = std::array::from_fn(|player| {
                        inputs
                            .get(player)
                            .map_or_else(BattleInput::default, |input| input.0)
                    });
                    self.advance(inputs)?;
                }
            }
        }
        Ok(())
    }

    /// Runs the next frame with `inputs`, recording them.
    ///
    /// # Errors
    /// When the frame fails.
    pub fn advance(&mut self, inputs: [BattleInput; PLAYERS]) -> Result<(), RollbackError> {
        let frame = self.game.frame();
        self.game.advance(inputs)?;
        record(&mut self.inputs, frame, inputs);
        self.stats.advances += 1;
        if frame < self.furthest {
            self.stats.resimulated += 1;
        }
        self.furthest = self.furthest.max(frame + 1);
        Ok(())
    }

    fn check_frame(&self, frame: Frame) -> Result<(), RollbackError> {
        if u64::try_from(frame).ok() == Some(self.game.frame()) {
            Ok(())
        } else {
            Err(RollbackError::FrameMismatch {
                requested: frame,
                battle: self.game.frame(),
            })
        }
    }

    fn save(
        &mut self,
        cell: &GameStateCell<SavedFrame>,
        frame: Frame,
    ) -> Result<(), RollbackError> {
        self.check_frame(frame)?;
        let begin = Instant::now();
        // Reuse the snapshot the cell held (ggrs cycles a few cells), so a
        // warm session takes snapshots without allocating.
        let mut saved = cell
            .data()
            .map(|mut held| std::mem::take(held.as_mut_dangerous()))
            .unwrap_or_default();
        if Arc::get_mut(&mut saved.snapshot).is_none() {
            // Shared (a clone of the cell is alive): write a fresh one.
            saved.snapshot = Arc::default();
        }
        let snapshot = Arc::get_mut(&mut saved.snapshot).expect("unique: just checked or made");
        if let Err(error) = self.game.save_into(snapshot) {
            return Err(RollbackError::Snapshot { frame, error });
        }
        saved.frame = self.game.frame();
        // Needed on every save: ggrs compares every frame's checksum
        // (desync detection interval 1), and `checksums` keeps every
        // frame's for the pair's divergence check.
        let checksum = saved.snapshot.checksum();
        cell.save(frame, Some(saved), Some(u128::from(checksum)));
        record(&mut self.checksums, self.game.frame(), checksum);
        self.stats.saves += 1;
        self.stats.save_time += begin.elapsed();
        Ok(())
    }

    fn load(
        &mut self,
        cell: &GameStateCell<SavedFrame>,
        frame: Frame,
    ) -> Result<(), RollbackError> {
        let begin = Instant::now();
        let held = cell.data().ok_or(RollbackError::NothingSaved { frame })?;
        if u64::try_from(frame).ok() != Some(held.frame) {
            return Err(RollbackError::FrameMismatch {
                requested: frame,
                battle: held.frame,
            });
        }
        self.game
            .restore(&held.snapshot)
            .map_err(|error| RollbackError::Restore { frame, error })?;
        drop(held);
        self.stats.loads += 1;
        self.stats.restore_time += begin.elapsed();
        Ok(())
    }

    /// The battle.
    pub fn game(&self) -> &RollbackGame {
        &self.game
    }

    /// The battle, to query.
    pub fn game_mut(&mut self) -> &mut RollbackGame {
        &mut self.game
    }

    /// By frame: the checksum of the state before that frame ran, as last
    /// saved (final for every confirmed frame).
    pub fn checksums(&self) -> &[u64] {
        &self.checksums
    }

    /// By frame: the inputs it last ran with (final for every confirmed
    /// frame).
    pub fn inputs(&self) -> &[[BattleInput; PLAYERS]] {
        &self.inputs
    }

    /// What it did so far.
    pub fn stats(&self) -> RollbackStats {
        self.stats
    }
}

/// Sets `values[at]`, growing `values` by one when `at` is its length.
fn record<T: Copy + Default>(values: &mut Vec<T>, at: u64, value: T) {
    let at = at as usize;
    if at >= values.len() {
        values.resize(at + 1, T::default());
    }
    values[at] = value;
}

/// What a sync test ran.
#[derive(Debug, Clone)]
pub struct SyncTestReport {
    /// Frames run forwards.
    pub frames: u64,
    /// What the battle did: every frame past the check distance was
    /// loaded back and run again.
    pub stats: RollbackStats,
    /// The checksum of the final state.
    pub checksum: u64,
}

/// Runs ggrs's `SyncTestSession` over the battle for `frames` frames with
/// scripted inputs from `seed`: each frame it rolls back `check_distance`
/// frames, runs them again and compares the checksums.
///
/// # Errors
/// [`RollbackError::Ggrs`] with `MismatchedChecksum` when a frame run again
/// differs; [`RollbackError::Setting`] when `check_distance` is not 1 to
/// 15; and as for [`Rollback::handle`].
pub fn run_sync_test(
    setup: &BattleSetup,
    check_distance: usize,
    frames: u64,
    seed: u64,
) -> Result<SyncTestReport, RollbackError> {
    if !(1..=15).contains(&check_distance) {
        return Err(RollbackError::Setting(format!(
            "the check distance is {check_distance}, expected 1 to 15"
        )));
    }
    let mut session = SessionBuilder::<BattleConfig>::new()
        .with_num_players(PLAYERS)?
        .with_max_prediction_window(check_distance + 1)
        .with_check_distance(check_distance)
        .add_player(PlayerType::Local, 0)?
        .add_player(PlayerType::Local, 1)?
        .start_synctest_session()?;
    let mut rollback = Rollback::new(setup)?;
    for frame in 0..frames {
        for player in 0..PLAYERS {
            session.add_local_input(player, BattleInput::scripted(seed, player, frame))?;
        }
        let requests = session.advance_frame()?;
        rollback.handle(requests)?;
    }
    Ok(SyncTestReport {
        frames,
        stats: rollback.stats(),
        checksum: rollback
            .game()
            .checksum()
            .map_err(|error| RollbackError::Snapshot {
                frame: Frame::try_from(frames).unwrap_or(Frame::MAX),
                error,
            })?,
    })
}

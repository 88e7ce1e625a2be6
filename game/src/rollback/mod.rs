//! Rollback networking for the battle (issue 39), on ggrs.
//!
//! - [`RollbackGame`] ([`battle`]): the part of the battle a snapshot
//!   captures whole, steered by the players' [`BattleInput`]s ([`input`]);
//! - [`Rollback`] ([`session`]): a battle serving a ggrs session's
//!   requests: `SaveGameState` takes a [`Snapshot`](sluice::Snapshot) into
//!   the ggrs cell (reusing the one it held) with the battle's checksum for
//!   ggrs's desync detection, `LoadGameState` restores it with
//!   [`World::restore`](sluice::World::restore), `AdvanceFrame` runs a
//!   frame; and [`run_sync_test`], ggrs's `SyncTestSession` over it;
//! - [`LossySocket`] and [`ChannelSocket`] ([`socket`]): latency, jitter,
//!   reordering and loss from a seeded generator over any socket, and an
//!   in-process pair;
//! - [`run_local_pair`] and [`run_udp_peer`] ([`peers`]): two peers in one
//!   process, or one of two over loopback UDP (`sluice-game rollback`);
//! - [`Replay`] ([`replay`]): the inputs of a run, written by
//!   `sluice-game --record FILE` and played back by `--replay FILE`.
//!
//! The session loop, as [`run_local_pair`] drives each peer:
//!
//! ```no_run
//! use sluice_game::rollback::{BattleConfig, BattleInput, BattleSetup, Rollback};
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # let socket = ggrs::UdpNonBlockingSocket::bind_to_port(7000)?;
//! let mut session = ggrs::SessionBuilder::<BattleConfig>::new()
//!     .add_player(ggrs::PlayerType::Local, 0)?
//!     .add_player(ggrs::PlayerType::Remote("127.0.0.1:7001".parse()?), 1)?
//!     .start_p2p_session(socket)?;
//! let mut battle = Rollback::new(&BattleSetup { threads: 2, entities: 2_000 })?;
//! loop {
//!     session.poll_remote_clients();
//!     for _event in session.events() {}
//!     if session.current_state() != ggrs::SessionState::Running {
//!         continue;
//!     }
//!     let frame = session.current_frame() as u64;
//!     session.add_local_input(0, BattleInput::scripted(7, 0, frame))?;
//!     match session.advance_frame() {
//!         // Save: snapshot_into the cell; Load: World::restore; Advance: a frame.
//!         Ok(requests) => battle.handle(requests)?,
//!         Err(ggrs::GgrsError::PredictionThreshold) => {}
//!         Err(error) => return Err(error.into()),
//!     }
//! }
//! # }
//! ```

pub mod battle;
pub mod commands;
pub mod input;
pub mod peers;
pub mod replay;
pub mod session;
pub mod socket;

pub use battle::{BattleSetup, RollbackGame};
pub use input::{BattleInput, Inputs, PLAYERS, apply_inputs};
pub use peers::{PairReport, PeerReport, PeerSetup, UdpPeer, run_local_pair, run_udp_peer};
pub use replay::{Replay, ReplayError};
pub use session::{
    BattleConfig, Rollback, RollbackError, RollbackStats, SavedFrame, SyncTestReport, run_sync_test,
};
pub use socket::{ChannelSocket, LossySocket, NetConditions, NetConditionsError, NetStats};

//! Two peers playing the battle over ggrs's `P2PSession`: in one process
//! ([`run_local_pair`], over [`ChannelSocket`]s) or in two ([`run_udp_peer`],
//! over loopback UDP); both through a [`LossySocket`].

use std::net::SocketAddr;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use ggrs::{
    DesyncDetection, Frame, GgrsError, GgrsEvent, NonBlockingSocket, P2PSession, PlayerType,
    SessionBuilder, SessionState, UdpNonBlockingSocket,
};

use crate::rollback::battle::BattleSetup;
use crate::rollback::input::{BattleInput, PLAYERS};
use crate::rollback::session::{BattleConfig, Rollback, RollbackError, RollbackStats};
use crate::rollback::socket::{ChannelSocket, LossySocket, NetConditions, NetStats};

/// Frames ggrs may run ahead of the last confirmed frame.
pub const MAX_PREDICTION: usize = 8;

/// How a peer plays.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PeerSetup {
    /// Its battle.
    pub battle: BattleSetup,
    /// What its outgoing packets go through.
    pub conditions: NetConditions,
}

/// What one peer saw.
#[derive(Debug, Clone)]
pub struct PeerReport {
    /// The player it played.
    pub player: usize,
    /// Its last confirmed frame.
    pub confirmed: Frame,
    /// By frame: the checksum of the state before that frame ran, as last
    /// saved (final up to `confirmed`).
    pub checksums: Vec<u64>,
    /// By frame: the inputs both players' frames ran with (final before
    /// `confirmed`).
    pub inputs: Vec<[BattleInput; PLAYERS]>,
    /// Saves, loads (rollbacks), frames run again.
    pub stats: RollbackStats,
    /// What its socket did to its packets.
    pub net: NetStats,
    /// Frames ggrs asked it to skip (it ran ahead of the other peer).
    pub skipped: u64,
}

impl PeerReport {
    /// The checksum of the state after `frames` frames, if that frame was
    /// confirmed and saved.
    pub fn checksum_at(&self, frames: u64) -> Option<u64> {
        let confirmed = u64::try_from(self.confirmed).ok()?;
        if frames > confirmed {
            return None;
        }
        self.checksums.get(frames as usize).copied()
    }
}

/// One peer: its session, its battle, and the loop that drives them.
struct Peer {
    player: usize,
    session: P2PSession<BattleConfig>,
    rollback: Rollback,
    seed: u64,
    skipped: u64,
    /// The socket's statistics (the session owns the socket).
    net: Arc<Mutex<NetStats>>,
}

impl Peer {
    fn start<S: NonBlockingSocket<SocketAddr> + 'static>(
        player: usize,
        remote: SocketAddr,
        battle: &BattleSetup,
        socket: LossySocket<S, SocketAddr>,
        seed: u64,
    ) -> Result<Self, RollbackError> {
        if player >= PLAYERS {
            return Err(RollbackError::Setting(format!(
                "player {player}: expected 0 or 1"
            )));
        }
        let net = Arc::new(Mutex::new(NetStats::default()));
        let watched = WatchedSocket {
            inner: socket,
            stats: net.clone(),
        };
        let session = SessionBuilder::<BattleConfig>::new()
            .with_num_players(PLAYERS)?
            .with_max_prediction_window(MAX_PREDICTION)
            .with_desync_detection_mode(DesyncDetection::On { interval: 1 })
            .with_disconnect_timeout(Duration::from_secs(10))
            .add_player(PlayerType::Local, player)?
            .add_player(PlayerType::Remote(remote), 1 - player)?
            .start_p2p_session(watched)?;
        Ok(Self {
            player,
            session,
            rollback: Rollback::new(battle)?,
            seed,
            skipped: 0,
            net,
        })
    }

    /// One turn: poll, read the events, and when running, add this frame's
    /// input and fulfil what ggrs asks. Whether a frame was advanced.
    fn turn(&mut self) -> Result<bool, RollbackError> {
        self.session.poll_remote_clients();
        for event in self.session.events() {
            match event {
                GgrsEvent::DesyncDetected {
                    frame,
                    local_checksum,
                    remote_checksum,
                    ..
                } => {
                    return Err(RollbackError::Desync {
                        frame,
                        local: local_checksum,
                        remote: remote_checksum,
                    });
                }
                GgrsEvent::Disconnected { addr } => {
                    return Err(RollbackError::Disconnected { peer: addr });
                }
                GgrsEvent::WaitRecommendation { skip_frames } => {
                    self.skipped += u64::from(skip_frames);
                }
                _ => {}
            }
        }
        if self.session.current_state() != SessionState::Running {
            return Ok(false);
        }
        let frame = u64::try_from(self.session.current_frame()).unwrap_or(0);
        let input = BattleInput::scripted(self.seed, self.player, frame);
        self.session.add_local_input(self.player, input)?;
        match self.session.advance_frame() {
            Ok(requests) => {
                self.rollback.handle(requests)?;
                Ok(true)
            }
            Err(GgrsError::PredictionThreshold) => Ok(false),
            Err(error) => Err(error.into()),
        }
    }

    fn confirmed(&self) -> Frame {
        self.session.confirmed_frame()
    }

    fn report(&self) -> PeerReport {
        PeerReport {
            player: self.player,
            confirmed: self.confirmed(),
            checksums: self.rollback.checksums().to_vec(),
            inputs: self.rollback.inputs().to_vec(),
            stats: self.rollback.stats(),
            net: *self.net.lock().unwrap_or_else(PoisonError::into_inner),
            skipped: self.skipped,
        }
    }
}

/// A socket that publishes its [`LossySocket`]'s statistics after every
/// call (the session owns the socket).
struct WatchedSocket<S> {
    inner: LossySocket<S, SocketAddr>,
    stats: Arc<Mutex<NetStats>>,
}

impl<S: NonBlockingSocket<SocketAddr>> NonBlockingSocket<SocketAddr> for WatchedSocket<S> {
    fn send_to(&mut self, msg: &ggrs::Message, addr: &SocketAddr) {
        self.inner.send_to(msg, addr);
        *self.stats.lock().unwrap_or_else(PoisonError::into_inner) = self.inner.stats();
    }

    fn receive_all_messages(&mut self) -> Vec<(SocketAddr, ggrs::Message)> {
        let received = self.inner.receive_all_messages();
        *self.stats.lock().unwrap_or_else(PoisonError::into_inner) = self.inner.stats();
        received
    }
}

/// What [`run_local_pair`] saw: each peer's report, the frames confirmed
/// on both, and the time it took.
#[derive(Debug, Clone)]
pub struct PairReport {
    /// Per player.
    pub peers: [PeerReport; PLAYERS],
    /// Wall time from the start of synchronisation to the last frame
    /// confirmed on both.
    pub wall: Duration,
    /// Wall time of the frames alone (after both sessions synchronised).
    pub running: Duration,
}

impl PairReport {
    /// The last frame both peers confirmed.
    pub fn confirmed(&self) -> Frame {
        self.peers[0].confirmed.min(self.peers[1].confirmed)
    }

    /// The first frame up to the last confirmed on both whose checksums
    /// differ between the peers; `None` when all agree.
    pub fn first_divergence(&self) -> Option<usize> {
        let frames = usize::try_from(self.confirmed()).ok()? + 1;
        let [first, second] = &self.peers;
        (0..frames
            .min(first.checksums.len())
            .min(second.checksums.len()))
            .find(|&frame| first.checksums[frame] != second.checksums[frame])
    }

    /// Confirmed frames per second of wall time once running, both peers
    /// together in one thread.
    pub fn frames_per_second(&self) -> f64 {
        f64::from(self.confirmed().max(0)) / self.running.as_secs_f64().max(1e-9)
    }
}

/// Two peers in this thread, taking turns: player 0's battle on
/// `setups[0]`, player 1's on `setups[1]`, each sending through its
/// [`LossySocket`] over a [`ChannelSocket`] pair and predicting the
/// other's input, until both confirmed `frames` frames. Inputs are
/// scripted from `seed` ([`BattleInput::scripted`]).
///
/// # Errors
/// [`RollbackError::Desync`] when ggrs finds the peers' checksums of a
/// confirmed frame differ, [`RollbackError::Timeout`] after `limit`, and as
/// for [`Rollback::handle`].
pub fn run_local_pair(
    setups: [PeerSetup; PLAYERS],
    frames: u64,
    seed: u64,
    limit: Duration,
) -> Result<PairReport, RollbackError> {
    let (first, second) = ChannelSocket::pair();
    let addresses = [first.address(), second.address()];
    let wrap = |socket, conditions| {
        LossySocket::new(socket, conditions).map_err(RollbackError::Conditions)
    };
    let mut peers = [
        Peer::start(
            0,
            addresses[1],
            &setups[0].battle,
            wrap(first, setups[0].conditions)?,
            seed,
        )?,
        Peer::start(
            1,
            addresses[0],
            &setups[1].battle,
            wrap(second, setups[1].conditions)?,
            seed,
        )?,
    ];
    let target = Frame::try_from(frames)
        .map_err(|_| RollbackError::Setting(format!("{frames} frames: at most {}", Frame::MAX)))?;
    let begin = Instant::now();
    let mut running_since = None;
    while peers.iter().any(|peer| peer.confirmed() < target) {
        if begin.elapsed() > limit {
            return Err(RollbackError::Timeout {
                limit,
                confirmed: peers.iter().map(Peer::confirmed).collect(),
            });
        }
        let mut advanced = false;
        for peer in &mut peers {
            advanced |= peer.turn()?;
        }
        if advanced {
            running_since.get_or_insert_with(Instant::now);
        } else {
            // Waiting for packets: give the cores to someone else.
            std::thread::sleep(Duration::from_millis(1));
        }
    }
    let running = running_since.map_or(Duration::ZERO, |since| since.elapsed());
    Ok(PairReport {
        peers: [peers[0].report(), peers[1].report()],
        wall: begin.elapsed(),
        running,
    })
}

/// How [`run_udp_peer`] plays.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct UdpPeer {
    /// Its battle and network.
    pub setup: PeerSetup,
    /// The UDP port it binds (on every interface).
    pub local_port: u16,
    /// The other peer's address.
    pub remote: SocketAddr,
    /// Which player it plays, 0 or 1.
    pub player: usize,
    /// Frames to confirm.
    pub frames: u64,
    /// The seed of the scripted inputs (both peers must use the same to
    /// play the same game; each plays only its own player's).
    pub seed: u64,
    /// How long to wait for all frames to be confirmed.
    pub limit: Duration,
}

/// How long a UDP peer keeps answering after its last frame is confirmed,
/// so that the other peer receives what it still needs.
pub const LINGER: Duration = Duration::from_millis(1500);

/// One peer over loopback UDP (a [`UdpNonBlockingSocket`] in a
/// [`LossySocket`]): plays until `frames` frames are confirmed, keeps
/// answering for [`LINGER`], and reports.
///
/// # Errors
/// [`RollbackError::Socket`] when the port cannot be bound, and as for
/// [`run_local_pair`].
pub fn run_udp_peer(peer: &UdpPeer) -> Result<PeerReport, RollbackError> {
    let socket =
        UdpNonBlockingSocket::bind_to_port(peer.local_port).map_err(RollbackError::Socket)?;
    let socket =
        LossySocket::new(socket, peer.setup.conditions).map_err(RollbackError::Conditions)?;
    let mut this = Peer::start(
        peer.player,
        peer.remote,
        &peer.setup.battle,
        socket,
        peer.seed,
    )?;
    let target = Frame::try_from(peer.frames).map_err(|_| {
        RollbackError::Setting(format!("{} frames: at most {}", peer.frames, Frame::MAX))
    })?;
    let begin = Instant::now();
    let mut done_at: Option<(Instant, PeerReport)> = None;
    loop {
        if let Some((at, _)) = &done_at
            && at.elapsed() > LINGER
        {
            break;
        }
        if done_at.is_none() && begin.elapsed() > peer.limit {
            return Err(RollbackError::Timeout {
                limit: peer.limit,
                confirmed: vec![this.confirmed()],
            });
        }
        let advanced = match this.turn() {
            Ok(advanced) => advanced,
            // The other peer may leave once it has what it needs.
            Err(RollbackError::Disconnected { .. }) if done_at.is_some() => break,
            Err(error) => return Err(error),
        };
        if done_at.is_none() && this.confirmed() >= target {
            done_at = Some((Instant::now(), this.report()));
        }
        if !advanced {
            std::thread::sleep(Duration::from_millis(1));
        }
    }
    Ok(done_at
        .map(|(_, report)| report)
        .unwrap_or_else(|| this.report()))
}

//! Sockets for ggrs: [`LossySocket`], which wraps any socket and adds
//! latency, jitter, reordering and loss drawn from a seeded generator (the
//! machines that test this have no netem), and [`ChannelSocket`], an
//! in-process pair.

use crossbeam_channel as mpsc;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fmt;
use std::hash::Hash;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use ggrs::{Message, NonBlockingSocket};

/// The network a [`LossySocket`] pretends to send over.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NetConditions {
    /// Every packet's one-way delay, at least.
    pub latency: Duration,
    /// Up to this much more delay, drawn per packet (packets overtake one
    /// another when it exceeds their spacing).
    pub jitter: Duration,
    /// The chance, from 0 to 1, that a packet is lost.
    pub loss: f64,
    /// The chance, from 0 to 1, that a packet is held back by another
    /// `latency + jitter`, so that later packets overtake it.
    pub reorder: f64,
    /// The seed of the draws: the same seed, the same fate for the n-th
    /// packet.
    pub seed: u64,
}

impl NetConditions {
    /// A perfect network: no delay, no loss.
    pub const PERFECT: NetConditions = NetConditions {
        latency: Duration::ZERO,
        jitter: Duration::ZERO,
        loss: 0.0,
        reorder: 0.0,
        seed: 0,
    };

    /// A rough one: 20 ms plus up to 30 ms of jitter, 10% loss, 5% held
    /// back.
    pub fn rough(seed: u64) -> Self {
        Self {
            latency: Duration::from_millis(20),
            jitter: Duration::from_millis(30),
            loss: 0.1,
            reorder: 0.05,
            seed,
        }
    }

    /// Checks that the chances are between 0 and 1 and the delays below a
    /// minute.
    ///
    /// # Errors
    /// [`NetConditionsError`] naming the field that is out of range.
    pub fn check(&self) -> Result<(), NetConditionsError> {
        for (field, chance) in [("loss", self.loss), ("reorder", self.reorder)] {
            if !(0.0..=1.0).contains(&chance) {
                return Err(NetConditionsError::Chance {
                    field,
                    value: chance,
                });
            }
        }
        for (field, delay) in [("latency", self.latency), ("jitter", self.jitter)] {
            if delay > MAX_DELAY {
                return Err(NetConditionsError::Delay {
                    field,
                    value: delay,
                });
            }
        }
        Ok(())
    }
}

/// The longest latency or jitter a [`LossySocket`] takes.
pub const MAX_DELAY: Duration = Duration::from_secs(60);

/// Why [`NetConditions`] were refused.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum NetConditionsError {
    /// A chance (`loss` or `reorder`) is not between 0 and 1 (or is NaN).
    Chance {
        /// The field.
        field: &'static str,
        /// What it held.
        value: f64,
    },
    /// A delay (`latency` or `jitter`) is over [`MAX_DELAY`].
    Delay {
        /// The field.
        field: &'static str,
        /// What it held.
        value: Duration,
    },
}

impl fmt::Display for NetConditionsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Chance { field, value } => write!(
                f,
                "network conditions: {field} is {value}, expected a chance from 0 to 1"
            ),
            Self::Delay { field, value } => write!(
                f,
                "network conditions: {field} is {value:?}, expected at most {MAX_DELAY:?}"
            ),
        }
    }
}

impl std::error::Error for NetConditionsError {}

/// What a [`LossySocket`] did to the packets sent through it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NetStats {
    /// Packets handed to it.
    pub sent: u64,
    /// Of them, lost.
    pub lost: u64,
    /// Of them, held back to be overtaken.
    pub held_back: u64,
    /// Of them, handed on to the inner socket so far.
    pub delivered: u64,
}

/// A packet waiting for its time.
#[derive(Debug)]
struct Delayed<A> {
    due: Instant,
    /// Breaks ties in sending order.
    order: u64,
    message: Message,
    to: A,
}

impl<A> PartialEq for Delayed<A> {
    fn eq(&self, other: &Self) -> bool {
        (self.due, self.order) == (other.due, other.order)
    }
}

impl<A> Eq for Delayed<A> {}

impl<A> PartialOrd for Delayed<A> {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl<A> Ord for Delayed<A> {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        (self.due, self.order).cmp(&(other.due, other.order))
    }
}

/// A socket that delays, reorders and drops what is sent through `inner`,
/// by [`NetConditions`]. Packets wait on the sending side and go out to
/// `inner` once due, at the next send or receive; each packet's fate is
/// drawn from a generator seeded by the conditions.
#[derive(Debug)]
pub struct LossySocket<S, A> {
    inner: S,
    conditions: NetConditions,
    rng: fastrand::Rng,
    waiting: BinaryHeap<Reverse<Delayed<A>>>,
    stats: NetStats,
}

impl<S, A> LossySocket<S, A>
where
    S: NonBlockingSocket<A>,
    A: Clone + PartialEq + Eq + Hash + Send + Sync,
{
    /// Wraps `inner`.
    ///
    /// # Errors
    /// When `conditions` are out of range ([`NetConditions::check`]).
    pub fn new(inner: S, conditions: NetConditions) -> Result<Self, NetConditionsError> {
        conditions.check()?;
        Ok(Self {
            inner,
            rng: fastrand::Rng::with_seed(conditions.seed),
            conditions,
            waiting: BinaryHeap::new(),
            stats: NetStats::default(),
        })
    }

    /// What happened to the packets so far.
    pub fn stats(&self) -> NetStats {
        self.stats
    }

    /// Packets sent but not yet handed on.
    pub fn in_flight(&self) -> usize {
        self.waiting.len()
    }

    /// Hands every due packet to the inner socket.
    fn flush(&mut self, now: Instant) {
        while let Some(Reverse(next)) = self.waiting.peek() {
            if next.due > now {
                break;
            }
            let Some(Reverse(packet)) = self.waiting.pop() else {
                break;
            };
            self.inner.send_to(&packet.message, &packet.to);
            self.stats.delivered += 1;
        }
    }

    fn delay(&mut self) -> Duration {
        let NetConditions {
            latency, jitter, ..
        } = self.conditions;
        let mut delay = latency + jitter.mul_f64(self.rng.f64());
        if self.rng.f64() < self.conditions.reorder {
            self.stats.held_back += 1;
            delay += latency + jitter;
        }
        delay
    }
}

impl<S, A> NonBlockingSocket<A> for LossySocket<S, A>
where
    S: NonBlockingSocket<A>,
    A: Clone + PartialEq + Eq + Hash + Send + Sync,
{
    fn send_to(&mut self, msg: &Message, addr: &A) {
        let now = Instant::now();
        self.stats.sent += 1;
        // Both draws every packet, so a packet's fate depends only on the
        // seed and its place in the sequence.
        let lost = self.rng.f64() < self.conditions.loss;
        let delay = self.delay();
        if lost {
            self.stats.lost += 1;
        } else {
            let order = self.stats.sent;
            self.waiting.push(Reverse(Delayed {
                due: now + delay,
                order,
                message: msg.clone(),
                to: addr.clone(),
            }));
        }
        self.flush(now);
    }

    fn receive_all_messages(&mut self) -> Vec<(A, Message)> {
        self.flush(Instant::now());
        self.inner.receive_all_messages()
    }
}

/// One end of an in-process socket pair ([`ChannelSocket::pair`]): what
/// one end sends to the other's [`address`](ChannelSocket::address) the
/// other receives; a send to any other address is dropped, as a network
/// would.
#[derive(Debug)]
pub struct ChannelSocket {
    address: SocketAddr,
    peer: SocketAddr,
    outgoing: mpsc::Sender<Message>,
    incoming: mpsc::Receiver<Message>,
}

impl ChannelSocket {
    /// Two connected ends, with the made-up addresses `127.0.0.1:1` and
    /// `127.0.0.1:2`.
    pub fn pair() -> (ChannelSocket, ChannelSocket) {
        let (first_address, second_address) = (
            SocketAddr::from(([127, 0, 0, 1], 1)),
            SocketAddr::from(([127, 0, 0, 1], 2)),
        );
        let (to_second, second_incoming) = mpsc::unbounded();
        let (to_first, first_incoming) = mpsc::unbounded();
        (
            ChannelSocket {
                address: first_address,
                peer: second_address,
                outgoing: to_second,
                incoming: first_incoming,
            },
            ChannelSocket {
                address: second_address,
                peer: first_address,
                outgoing: to_first,
                incoming: second_incoming,
            },
        )
    }

    /// This end's address (what the other end names it by).
    pub fn address(&self) -> SocketAddr {
        self.address
    }

    /// The other end's address.
    pub fn peer(&self) -> SocketAddr {
        self.peer
    }
}

impl NonBlockingSocket<SocketAddr> for ChannelSocket {
    fn send_to(&mut self, msg: &Message, addr: &SocketAddr) {
        if *addr == self.peer {
            // A closed other end is a peer gone: the packet is lost.
            let _ = self.outgoing.send(msg.clone());
        }
    }

    fn receive_all_messages(&mut self) -> Vec<(SocketAddr, Message)> {
        self.incoming
            .try_iter()
            .map(|message| (self.peer, message))
            .collect()
    }
}

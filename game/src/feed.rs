//! Input and the network feed: two threads outside the world send messages
//! through `World::sender`, each stamped with the frame it belongs to.
//!
//! The handshake keeps the game reproducible whatever the timing: before
//! frame `k` runs, the main thread asks both feeders for frame `k`, and
//! waits until each has queued its messages for `k` and said so. The world
//! drains the queues at the first boundary of update `k`: that of its first
//! fixed step if the frame runs one, else the frame's own. Either way which
//! frame reads frame `k`'s input depends only on the (fake, fixed) delta
//! sequence: never on timing, never split.

use std::sync::mpsc;
use std::thread::JoinHandle;

use sluice::{FrameTime, MessageSender, Subscribe, World, system};

use crate::math::{Vec2, mix, unit};
use crate::units::{ARENA, CAPTAINS};

/// One frame of the player's input, from the input thread.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PlayerInput {
    /// The frame it was sampled for.
    pub frame: u64,
    /// The stick, each axis in `[-1, 1]`: moves red's rally point.
    pub stick: Vec2,
    /// The strike button: an airstrike ahead of the rally point.
    pub strike: bool,
}

/// An order of the network peer (blue): send a captain to a waypoint.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NetOrder {
    /// The frame it was sent for.
    pub frame: u64,
    /// Which blue captain.
    pub captain: u8,
    /// Where to.
    pub waypoint: Vec2,
}

/// The player's state as of the last input read.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct InputState {
    /// Where red's captains gather (each in its own lane around it).
    pub rally: Vec2,
    /// Whether an airstrike was called this frame.
    pub strike: bool,
    /// Inputs read so far.
    pub received: u64,
    /// Inputs from the future or older than the previous frame (the
    /// handshake keeps this at zero).
    pub out_of_step: u64,
}

impl Default for InputState {
    fn default() -> Self {
        Self {
            rally: Vec2::new(ARENA * 0.47, ARENA * 0.5),
            strike: false,
            received: 0,
            out_of_step: 0,
        }
    }
}

/// The network peer's standing orders.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Orders {
    /// Where each blue captain is sent.
    pub waypoints: [Vec2; CAPTAINS],
    /// Orders read so far.
    pub received: u64,
    /// Orders from the future or older than the previous frame.
    pub out_of_step: u64,
}

impl Default for Orders {
    fn default() -> Self {
        Self {
            waypoints: std::array::from_fn(|index| {
                Vec2::new(ARENA * 0.53, ARENA * 0.5 + (index as f32 - 1.5) * 160.0)
            }),
            received: 0,
            out_of_step: 0,
        }
    }
}

/// What the input thread sends for `frame`.
pub fn player_input(frame: u64) -> PlayerInput {
    let t = frame as f32 * 0.02;
    PlayerInput {
        frame,
        stick: Vec2::new(0.3 + 0.7 * t.cos(), (t * 0.7).sin()),
        strike: frame % 90 == 45,
    }
}

/// What the network thread sends for `frame`: a new waypoint for one
/// captain every 15 frames.
pub fn net_orders(frame: u64) -> Option<NetOrder> {
    if !frame.is_multiple_of(15) {
        return None;
    }
    let seed = mix(frame);
    Some(NetOrder {
        frame,
        captain: (seed % CAPTAINS as u64) as u8,
        waypoint: Vec2::new(
            ARENA * (0.4 + 0.2 * unit(seed ^ 3)),
            ARENA * (0.1 + 0.8 * unit(seed ^ 4)),
        ),
    })
}

/// Whether a message stamped `sent` is read in time in frame `now`: in the
/// frame it was sent for (when a fixed step's boundary drained it) or in
/// the next (when the frame's own boundary did), never earlier or later.
pub fn in_step(sent: u64, now: u64) -> bool {
    sent == now || sent + 1 == now
}

/// Applies the input sampled for this frame or the previous one.
#[system(phase = PreUpdate, stage = "Feed", group = "Feed")]
pub fn read_input(time: &FrameTime, mut inputs: Subscribe<PlayerInput>, state: &mut InputState) {
    state.strike = false;
    let dt = time.delta.as_secs_f32();
    for input in inputs.unread() {
        state.received += 1;
        if !in_step(input.frame, time.frame) {
            state.out_of_step += 1;
        }
        state.rally = (state.rally + input.stick * (30.0 * dt)).clamp(0.0, ARENA - 0.01);
        state.strike |= input.strike;
    }
}

/// Applies the network peer's orders.
#[system(phase = PreUpdate, stage = "Feed", group = "Feed")]
pub fn read_network(time: &FrameTime, mut packets: Subscribe<NetOrder>, orders: &mut Orders) {
    for order in packets.unread() {
        orders.received += 1;
        if !in_step(order.frame, time.frame) {
            orders.out_of_step += 1;
        }
        orders.waypoints[usize::from(order.captain) % CAPTAINS] = order.waypoint;
    }
}

/// The two feeding threads and the handshake with them.
#[derive(Debug)]
pub struct Feeders {
    requests: Vec<mpsc::Sender<u64>>,
    done: mpsc::Receiver<u64>,
    threads: Vec<JoinHandle<()>>,
}

impl Feeders {
    /// Starts the input and network threads, each with its own sender into
    /// `world`.
    pub fn start(world: &mut World) -> Self {
        let (done_tx, done) = mpsc::channel();
        let mut feeders = Feeders {
            requests: Vec::new(),
            done,
            threads: Vec::new(),
        };
        let input = world.sender::<PlayerInput>();
        feeders.spawn("input", done_tx.clone(), move |frame| {
            deliver(&input, player_input(frame));
        });
        let network = world.sender::<NetOrder>();
        feeders.spawn("network", done_tx, move |frame| {
            if let Some(order) = net_orders(frame) {
                deliver(&network, order);
            }
        });
        feeders
    }

    fn spawn(
        &mut self,
        name: &str,
        done: mpsc::Sender<u64>,
        mut feed: impl FnMut(u64) + Send + 'static,
    ) {
        let (request, requests) = mpsc::channel::<u64>();
        let thread = std::thread::Builder::new()
            .name(format!("feed-{name}"))
            .spawn(move || {
                for frame in requests {
                    feed(frame);
                    if done.send(frame).is_err() {
                        return;
                    }
                }
            })
            .expect("the operating system refused a feeder thread");
        self.requests.push(request);
        self.threads.push(thread);
    }

    /// Asks every feeder for `frame`'s messages and waits until all are
    /// queued.
    pub fn feed(&self, frame: u64) {
        for request in &self.requests {
            request.send(frame).expect("a feeder thread stopped");
        }
        for _ in &self.requests {
            let fed = self.done.recv().expect("a feeder thread stopped");
            debug_assert_eq!(fed, frame);
        }
    }
}

impl Drop for Feeders {
    fn drop(&mut self) {
        self.requests.clear();
        for thread in self.threads.drain(..) {
            let _ = thread.join();
        }
    }
}

/// Sends `message`, waiting while the queue is full (it is drained at each
/// boundary; with the handshake it never fills); drops it once the world
/// is gone.
fn deliver<T>(sender: &MessageSender<T>, mut message: T) {
    loop {
        match sender.send(message) {
            Ok(()) => return,
            Err(full) if full.is_full() => {
                message = full.into_inner();
                std::thread::yield_now();
            }
            Err(_gone) => return,
        }
    }
}

/// The plugin of the input and network feeds: their state services and the systems that read them.
#[derive(Debug, Default)]
pub struct FeedPlugin;

impl sluice::plugin::Plugin for FeedPlugin {
    fn requires(&self) -> sluice::plugin::Requires {
        use sluice::plugin::Requires;
        Requires::new().plugin::<crate::FramePlugin>()
    }

    fn build(&self, world: &mut sluice::World) {
        world.insert(InputState::default());
        world.insert(Orders::default());
        world.add_system(read_input);
        world.add_system(read_network);
    }
}

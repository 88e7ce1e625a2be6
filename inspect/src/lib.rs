//! sluice-inspect: a live inspector for a running sluice world.
//!
//! An [`Inspector`] serves one world on a loopback port: an HTTP API
//! (described by the OpenAPI document at `/openapi.json`), a WebSocket
//! (`/ws`) that pushes the world's view as it changes, and one page (`/`)
//! that draws it: the lanes-and-gates picture of the plan, frame times with
//! the running peak, the per-node timings sorted by cost, the spike list,
//! archetypes and entity counts, an entity browser, messages per type,
//! scripts and what each waits on, states and plugins. The page pauses,
//! steps and resumes the world.
//!
//! The game loop calls [`Inspector::frame`] once per frame, between
//! iterations. A game that does not create an inspector pays nothing. With
//! one, `frame` publishes a snapshot at most every
//! [`InspectorOptions::publish_every`] (an `ArcSwap` store and a watch
//! notification: it never waits for a client), answers the queued entity
//! requests (at most [`InspectorOptions::requests_per_frame`]), and blocks
//! only while the user paused the world from the page.
//!
//! ```no_run
//! use sluice::World;
//! use sluice_inspect::{Inspector, InspectorOptions};
//!
//! #[derive(Debug)]
//! struct Hp(u32);
//!
//! let mut world = World::new();
//! world.enable_timing(true);
//! world.spawn((Hp(10),));
//! let mut inspector = Inspector::start("127.0.0.1:0", InspectorOptions::default())?;
//! inspector.component::<Hp>(); // shown as `Hp(10)` in the entity browser
//! println!("inspector on http://{}", inspector.local_addr());
//! loop {
//!     world.run_iteration().unwrap();
//!     inspector.frame(&mut world);
//! #   break;
//! }
//! # Ok::<(), sluice_inspect::InspectError>(())
//! ```

mod control;
mod server;
mod snapshot;
mod watch;

use std::fmt;
use std::net::{SocketAddr, ToSocketAddrs};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use arc_swap::ArcSwap;
use sluice::World;

pub use snapshot::{
    ArchetypeView, EntityList, EntityListItem, EntityView, FrameView, MessageCount, NodeTiming,
    ScriptView, Snapshot, SpikeView, StateView,
};

use control::{Control, Request};
use watch::Watches;

/// How an [`Inspector`] behaves; [`Default`] suits a game at 60 Hz.
#[derive(Debug, Clone)]
pub struct InspectorOptions {
    /// The shortest time between two published snapshots (clients see the
    /// world at most this often). A pause, step or resume publishes at once.
    pub publish_every: Duration,
    /// Frame times kept for the page's figure (the running peak is over
    /// these).
    pub frame_history: usize,
    /// Most spikes a snapshot carries (the newest).
    pub spikes_shown: usize,
    /// Most archetypes a snapshot carries (the largest).
    pub archetypes_shown: usize,
    /// Most connections served at once; a connection past it is closed
    /// as soon as it is accepted.
    pub max_connections: usize,
    /// Most requests waiting for the game thread (entity look-ups, pause,
    /// step, resume); a request past it is refused with 503.
    pub request_queue: usize,
    /// Most queued requests answered in one call of [`Inspector::frame`].
    pub requests_per_frame: usize,
    /// Largest request body accepted, in bytes; a larger one is refused
    /// with 413.
    pub max_body: usize,
    /// How long a connection may take to send a request's head (its
    /// request line and headers), counted from when the server starts
    /// reading it; a connection still sending past it is closed. Idle
    /// keep-alive connections are closed after it too. Without it, a
    /// client that opens connections and stalls would hold every one of
    /// [`max_connections`](Self::max_connections).
    pub request_head_within: Duration,
}

impl Default for InspectorOptions {
    fn default() -> Self {
        Self {
            publish_every: Duration::from_millis(100),
            frame_history: 240,
            spikes_shown: 32,
            archetypes_shown: 64,
            max_connections: 64,
            request_queue: 64,
            requests_per_frame: 16,
            max_body: 16 * 1024,
            request_head_within: Duration::from_secs(10),
        }
    }
}

/// Why an [`Inspector`] did not start.
#[non_exhaustive]
#[derive(Debug)]
pub enum InspectError {
    /// The address did not resolve to a socket address.
    Address {
        /// The address as given.
        address: String,
        /// What resolving it said.
        error: std::io::Error,
    },
    /// The address is not a loopback one: the inspector serves this machine
    /// only (it can pause the game and read every entity).
    NotLoopback {
        /// The address as resolved.
        address: SocketAddr,
    },
    /// The port could not be bound (taken, or not allowed).
    Bind {
        /// The address.
        address: SocketAddr,
        /// What binding said.
        error: std::io::Error,
    },
    /// The server's thread or runtime did not start.
    Runtime(std::io::Error),
    /// An option is out of range.
    Option {
        /// The option's name.
        name: &'static str,
        /// Why.
        reason: &'static str,
    },
}

impl fmt::Display for InspectError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            InspectError::Address { address, error } => {
                write!(f, "inspector address `{address}` does not resolve: {error}")
            }
            InspectError::NotLoopback { address } => write!(
                f,
                "inspector address {address} is not a loopback address (use 127.0.0.1 or [::1])"
            ),
            InspectError::Bind { address, error } => {
                write!(f, "inspector could not listen on {address}: {error}")
            }
            InspectError::Runtime(error) => {
                write!(f, "inspector's server did not start: {error}")
            }
            InspectError::Option { name, reason } => {
                write!(f, "inspector option `{name}` {reason}")
            }
        }
    }
}

impl std::error::Error for InspectError {}

/// What the game thread and the server share.
pub(crate) struct Shared {
    /// The newest snapshot.
    pub(crate) snapshot: ArcSwap<Snapshot>,
    /// The newest picture of the plan (SVG) with the plan version it shows.
    pub(crate) plan_svg: ArcSwap<(u64, String)>,
    /// Connections open now.
    pub(crate) connections: AtomicUsize,
    /// The options.
    pub(crate) options: InspectorOptions,
}

/// A live inspector: serves a world on a loopback port while the game loop
/// calls [`frame`](Inspector::frame). Dropping it stops the server.
pub struct Inspector {
    shared: Arc<Shared>,
    address: SocketAddr,
    requests: crossbeam_channel::Receiver<Request>,
    published: tokio::sync::watch::Sender<u64>,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
    watches: Watches,
    control: Control,
    frames: u64,
    version: u64,
    last_frame: Option<Instant>,
    last_publish: Option<Instant>,
    frame_times: std::collections::VecDeque<f32>,
    plan_version: u64,
    plan_seen: Option<std::sync::Weak<sluice::Plan>>,
    timing_enabled: bool,
}

impl fmt::Debug for Inspector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Inspector")
            .field("address", &self.address)
            .field("frames", &self.frames)
            .field("paused", &self.control.paused())
            .finish_non_exhaustive()
    }
}

impl Inspector {
    /// Starts serving on `address` (a loopback address; port 0 picks a free
    /// port, [`local_addr`](Inspector::local_addr) says which). The server
    /// runs on its own thread; the world is read only inside
    /// [`frame`](Inspector::frame).
    ///
    /// # Errors
    /// [`InspectError`]: the address does not resolve, is not loopback, or
    /// cannot be bound; an option is out of range; the thread did not start.
    pub fn start(
        address: impl ToSocketAddrs + fmt::Display,
        options: InspectorOptions,
    ) -> Result<Self, InspectError> {
        let shown = address.to_string();
        let resolved = address
            .to_socket_addrs()
            .map_err(|error| InspectError::Address {
                address: shown.clone(),
                error,
            })?
            .next()
            .ok_or_else(|| InspectError::Address {
                address: shown,
                error: std::io::Error::other("no address"),
            })?;
        if !resolved.ip().is_loopback() {
            return Err(InspectError::NotLoopback { address: resolved });
        }
        for (name, value) in [
            ("frame_history", options.frame_history),
            ("max_connections", options.max_connections),
            ("request_queue", options.request_queue),
            ("requests_per_frame", options.requests_per_frame),
        ] {
            if value == 0 {
                return Err(InspectError::Option {
                    name,
                    reason: "must be at least 1",
                });
            }
        }
        if options.request_head_within.is_zero() {
            return Err(InspectError::Option {
                name: "request_head_within",
                reason: "must be above zero",
            });
        }
        let listener =
            std::net::TcpListener::bind(resolved).map_err(|error| InspectError::Bind {
                address: resolved,
                error,
            })?;
        let address = listener.local_addr().map_err(InspectError::Runtime)?;
        listener
            .set_nonblocking(true)
            .map_err(InspectError::Runtime)?;
        let (sender, requests) = crossbeam_channel::bounded(options.request_queue);
        let (published, watch) = tokio::sync::watch::channel(0);
        let (shutdown, stopped) = tokio::sync::oneshot::channel();
        let frame_history = options.frame_history;
        let shared = Arc::new(Shared {
            snapshot: ArcSwap::from_pointee(Snapshot::default()),
            plan_svg: ArcSwap::from_pointee((0, String::new())),
            connections: AtomicUsize::new(0),
            options,
        });
        let thread = server::spawn(listener, Arc::clone(&shared), sender, watch, stopped)
            .map_err(InspectError::Runtime)?;
        Ok(Self {
            shared,
            address,
            requests,
            published,
            shutdown: Some(shutdown),
            thread: Some(thread),
            watches: Watches::default(),
            control: Control::default(),
            frames: 0,
            version: 0,
            last_frame: None,
            last_publish: None,
            frame_times: std::collections::VecDeque::with_capacity(frame_history),
            plan_version: 0,
            plan_seen: None,
            timing_enabled: false,
        })
    }

    /// The address the server listens on.
    pub fn local_addr(&self) -> SocketAddr {
        self.address
    }

    /// Connections open now (HTTP and WebSocket).
    pub fn connections(&self) -> usize {
        self.shared.connections.load(Ordering::Relaxed)
    }

    /// Calls of [`frame`](Inspector::frame) so far: the frame counter the
    /// page shows.
    pub fn frames(&self) -> u64 {
        self.frames
    }

    /// The newest published snapshot (what `/api/snapshot` serves).
    pub fn snapshot(&self) -> Arc<Snapshot> {
        self.shared.snapshot.load_full()
    }

    /// Whether the user paused the world from the page (or the API).
    pub fn is_paused(&self) -> bool {
        self.control.paused()
    }

    /// Shows component `C` in the entity browser as its `Debug` text
    /// (components not registered show their type name only).
    pub fn component<C: sluice::Component + fmt::Debug>(&mut self) -> &mut Self {
        self.watches.component::<C>();
        self
    }

    /// Counts the messages of type `T` sent: in all, and per frame (the mean
    /// since the previous snapshot).
    pub fn messages<T: Send + Sync + 'static>(&mut self) -> &mut Self {
        self.watches.messages::<T>();
        self
    }

    /// Lists the live scripts of kind `K` with what each waits on.
    pub fn scripts<K: sluice::script::ScriptKind>(&mut self) -> &mut Self {
        self.watches.scripts::<K>();
        self
    }

    /// Shows the current value of state `S`.
    pub fn state<S: sluice::state::States>(&mut self) -> &mut Self {
        self.watches.state::<S>();
        self
    }

    /// Call once per frame, between iterations, with the world the game
    /// runs. Measures the frame time (from the previous call), answers queued
    /// requests, publishes a snapshot when one is due, and blocks while the
    /// world is paused (answering requests meanwhile) until the user steps
    /// or resumes. It never waits for a client.
    ///
    /// The first call turns the world's per-node timing on
    /// ([`World::enable_timing`]) so the timing table has figures.
    pub fn frame(&mut self, world: &mut World) {
        if !self.timing_enabled {
            world.enable_timing(true);
            self.timing_enabled = true;
        }
        let now = Instant::now();
        if let Some(last) = self.last_frame {
            if self.frame_times.len() == self.shared.options.frame_history {
                self.frame_times.pop_front();
            }
            self.frame_times.push_back((now - last).as_secs_f32() * 1e3);
        }
        self.frames += 1;
        let mut urgent = self.control.end_frame();
        urgent |= self.answer(world, self.shared.options.requests_per_frame);
        let due = self
            .last_publish
            .is_none_or(|at| now - at >= self.shared.options.publish_every);
        if urgent || due {
            self.publish(world, now);
        }
        while self.control.paused() {
            let request = self
                .requests
                .recv_timeout(self.shared.options.publish_every);
            let changed = match request {
                Ok(request) => self.handle(world, request),
                // The server is gone: nothing can resume the world.
                Err(crossbeam_channel::RecvTimeoutError::Disconnected) => {
                    self.control.resume();
                    true
                }
                Err(crossbeam_channel::RecvTimeoutError::Timeout) => false,
            };
            let more = self.answer(world, self.shared.options.requests_per_frame);
            if changed || more {
                self.publish(world, Instant::now());
            }
        }
        // The time spent paused is not the frame's.
        self.last_frame = Some(Instant::now());
    }

    /// Answers up to `budget` queued requests; whether one changed the
    /// pause state.
    fn answer(&mut self, world: &mut World, budget: usize) -> bool {
        let mut changed = false;
        for _ in 0..budget {
            match self.requests.try_recv() {
                Ok(request) => changed |= self.handle(world, request),
                Err(_) => break,
            }
        }
        changed
    }

    /// Answers one request; whether it changed the pause state.
    fn handle(&mut self, world: &mut World, request: Request) -> bool {
        match request {
            Request::Control(command, reply) => {
                self.control.apply(command);
                // The client may have gone: nothing to tell then.
                let _ = reply.send(control::ControlState {
                    paused: self.control.paused(),
                    frame: self.frames,
                });
                true
            }
            Request::Entity(id, reply) => {
                let _ = reply.send(snapshot::entity(world, id, &self.watches));
                false
            }
            Request::Entities(offset, limit, reply) => {
                let _ = reply.send(snapshot::entities(world, offset, limit));
                false
            }
        }
    }

    /// Publishes the world's view now.
    fn publish(&mut self, world: &mut World, now: Instant) {
        self.refresh_plan(world);
        self.version += 1;
        let snapshot = snapshot::build(
            world,
            snapshot::Frame {
                version: self.version,
                frame: self.frames,
                paused: self.control.paused(),
                plan_version: self.plan_version,
                frame_times: &self.frame_times,
            },
            &mut self.watches,
            &self.shared.options,
        );
        self.shared.snapshot.store(Arc::new(snapshot));
        self.published.send_replace(self.version);
        self.last_publish = Some(now);
    }

    /// Redraws the plan's picture when the world's plan changed.
    fn refresh_plan(&mut self, world: &mut World) {
        let Ok(plan) = world.plan() else { return };
        let same = self
            .plan_seen
            .as_ref()
            .and_then(std::sync::Weak::upgrade)
            .is_some_and(|seen| Arc::ptr_eq(&seen, &plan));
        if same {
            return;
        }
        self.plan_seen = Some(Arc::downgrade(&plan));
        if let Ok(svg) = world.plan_svg() {
            self.plan_version += 1;
            self.shared
                .plan_svg
                .store(Arc::new((self.plan_version, svg)));
        }
    }
}

impl Drop for Inspector {
    fn drop(&mut self) {
        if let Some(shutdown) = self.shutdown.take() {
            let _ = shutdown.send(());
        }
        if let Some(thread) = self.thread.take() {
            // A panic on the server's thread is already reported there.
            let _ = thread.join();
        }
    }
}

//! [`MessageSender`]: messages from outside the world (a network thread, an
//! async task, a tool), through the collections' bounded MPSC queue.
//!
//! The queue's two ends share a [`Link`] with the world's side, the
//! [`Inbox`] in its `Messages<T>`: when the inbox goes (the world dropped,
//! or its `Messages<T>` replaced), it closes the link, and every later
//! `send` hands its message back as [`SendError::Disconnected`].

use std::fmt;

use sluice_collections::mpsc::{self, Consumer, Producer};
use sync_wrapper::SyncWrapper;

use crate::recording::recording_node_of;
use crate::sync::{Arc, AtomicBool, Ordering};

/// One message in a sender's queue, with the node of the world that sent
/// it from inside its run (`u32::MAX` from anywhere else): that node's
/// failure drops it at the boundary.
pub(crate) struct Sent<T> {
    pub(crate) node: u32,
    pub(crate) message: T,
}

/// What the world's side of a queue and its senders share.
struct Link {
    /// Whether the world's side of the queue still exists. Set to false
    /// once, when it drops; read by every `send`.
    open: AtomicBool,
    /// The world the queue feeds, in recordings.
    world: u64,
}

/// The world's side of a sender queue: kept in `Messages<T>`, drained at
/// each boundary, and closing the queue to its senders when dropped.
pub(crate) struct Inbox<T> {
    producer: Producer<Sent<T>>,
    consumer: SyncWrapper<Consumer<Sent<T>>>,
    link: Arc<Link>,
}

impl<T> Inbox<T> {
    /// A queue of `capacity` messages (rounded up to a power of two)
    /// feeding world `world`.
    pub(crate) fn new(capacity: usize, world: u64) -> Self {
        let (producer, consumer) = mpsc::bounded(capacity.max(1).next_power_of_two());
        Self {
            producer,
            consumer: SyncWrapper::new(consumer),
            link: Arc::new(Link {
                open: AtomicBool::new(true),
                world,
            }),
        }
    }

    /// A sender into this queue.
    pub(crate) fn sender(&self) -> MessageSender<T> {
        MessageSender {
            producer: self.producer.clone(),
            link: Arc::clone(&self.link),
        }
    }

    /// Moves every queued message into `deliver`, at world `world`'s
    /// boundary: a message a node in `failed` (registration indices of
    /// `world`) sent from inside its run is dropped instead.
    pub(crate) fn drain(&mut self, world: u64, failed: &[u32], mut deliver: impl FnMut(T)) {
        // Tags name nodes of the world the link was made for: a queue moved
        // to another world (its `Messages<T>` taken out and inserted there)
        // delivers everything.
        let failed = if world == self.link.world {
            failed
        } else {
            &[]
        };
        // A drain, not `pop`: a once-a-frame look must not spin for the
        // last one having found the queue empty (128 spin hints, 3 µs a
        // message type on the game's machine).
        for sent in self.consumer.get_mut().drain() {
            if failed.contains(&sent.node) {
                drop(sent);
            } else {
                deliver(sent.message);
            }
        }
    }
}

impl<T> Drop for Inbox<T> {
    fn drop(&mut self) {
        // Release: a `send` that reads `false` is ordered after everything
        // the world did before it went (its last drain among them).
        self.link.open.store(false, Ordering::Release);
        // What is queued will never be read: drop it now, not when the
        // last sender goes. (A `send` racing with this drop may still add
        // one; its sender's queue drops it.)
        self.consumer.get_mut().drain().for_each(drop);
    }
}

/// Sends messages of type `T` into a world from any thread: `Send + Clone`,
/// lock-free, bounded. The world drains the queue at each iteration
/// boundary into [`Messages<T>`](super::Messages), after the messages its
/// systems sent, so readers see them in the next iteration.
///
/// [`send`](Self::send) never blocks and never loses a message silently:
/// what it cannot queue it hands back in a [`SendError`], a full queue
/// ([`SendError::Full`]: the sender decides whether to wait, retry or drop
/// it) or a world that is gone ([`SendError::Disconnected`]: nothing will
/// ever read the queue again).
///
/// Sent from inside a node of its own world (a batch processor's slice, a
/// parallel query's body), a message is that node's: if the node fails,
/// the message is dropped at the boundary with everything else the node
/// recorded. (Within one boundary, messages arrive in the order the queue
/// received them; a node that needs an order independent of threads sends
/// with [`Publish`](super::Publish).)
///
/// ```
/// use sluice::{NodeBuilder, SendError, Subscribe, World};
///
/// struct Packet(u32);
/// let mut world = World::new();
/// let sender = world.sender::<Packet>();
/// let network = sender.clone();
/// std::thread::spawn(move || network.send(Packet(7)).unwrap()).join().unwrap();
/// world.add_system(NodeBuilder::new("net").system(|mut packets: Subscribe<Packet>| {
///     assert!(packets.unread().all(|p| p.0 == 7));
/// }));
/// world.run_iteration().unwrap(); // the boundary drains the queue
/// world.run_iteration().unwrap(); // the reader sees the packet
/// drop(world);
/// let Err(SendError::Disconnected(packet)) = sender.send(Packet(8)) else {
///     panic!("the world is gone");
/// };
/// assert_eq!(packet.0, 8, "handed back");
/// ```
pub struct MessageSender<T> {
    producer: Producer<Sent<T>>,
    link: Arc<Link>,
}

impl<T> Clone for MessageSender<T> {
    fn clone(&self) -> Self {
        Self {
            producer: self.producer.clone(),
            link: Arc::clone(&self.link),
        }
    }
}

impl<T> fmt::Debug for MessageSender<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MessageSender")
            .field("type", &std::any::type_name::<T>())
            .field("capacity", &self.producer.capacity())
            .field("connected", &self.is_connected())
            .finish()
    }
}

impl<T> MessageSender<T> {
    /// Queues `message` for the world's next boundary.
    ///
    /// `Ok` means the message is in the queue of a live world: the world
    /// reads it at its next iteration boundary, if it runs one (a world
    /// dropped before that drops it unread; a `send` that returns `Ok`
    /// while the world is being dropped on another thread is in that
    /// case). Once the world is gone, every `send` returns
    /// [`SendError::Disconnected`].
    ///
    /// # Errors
    ///
    /// The message, handed back: [`SendError::Disconnected`] when the world
    /// (its `Messages<T>`) is gone, [`SendError::Full`] when the queue is
    /// full (the world has not drained it since it filled).
    pub fn send(&self, message: T) -> Result<(), SendError<T>> {
        // Acquire: pairs with the inbox's Release store when it drops.
        if !self.link.open.load(Ordering::Acquire) {
            return Err(SendError::Disconnected(message));
        }
        let sent = Sent {
            node: recording_node_of(self.link.world),
            message,
        };
        self.producer
            .push(sent)
            .map_err(|sent| SendError::Full(sent.message))
    }

    /// Whether the world is still there to read what is sent (a moment
    /// later it may not be; [`send`](Self::send) says for each message).
    pub fn is_connected(&self) -> bool {
        self.link.open.load(Ordering::Acquire)
    }

    /// How many messages the queue holds between two boundaries.
    pub fn capacity(&self) -> usize {
        self.producer.capacity()
    }
}

/// Why a [`MessageSender`] did not queue a message; the message is handed
/// back either way.
#[non_exhaustive]
#[derive(PartialEq, Eq)]
pub enum SendError<T> {
    /// The queue is full: the world has not drained it since it filled. It
    /// drains it at its next iteration boundary, if it runs one; send again
    /// after that, or drop the message.
    Full(T),
    /// The world the sender was made for is gone (dropped, or its
    /// `Messages<T>` replaced): nothing will ever read this queue again,
    /// and every later send fails the same way.
    Disconnected(T),
}

impl<T> SendError<T> {
    /// The message that was not sent.
    pub fn into_inner(self) -> T {
        match self {
            SendError::Full(message) | SendError::Disconnected(message) => message,
        }
    }

    /// Whether the queue was full (a later send may succeed).
    pub fn is_full(&self) -> bool {
        matches!(self, SendError::Full(_))
    }

    /// Whether the world is gone (no later send will succeed).
    pub fn is_disconnected(&self) -> bool {
        matches!(self, SendError::Disconnected(_))
    }
}

impl<T> fmt::Debug for SendError<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = match self {
            SendError::Full(_) => "Full",
            SendError::Disconnected(_) => "Disconnected",
        };
        f.debug_tuple(name).finish_non_exhaustive()
    }
}

impl<T> fmt::Display for SendError<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = std::any::type_name::<T>();
        match self {
            SendError::Full(_) => write!(
                f,
                "the message queue for `{name}` is full: the world drains it at its next \
                 iteration boundary, if it runs one"
            ),
            SendError::Disconnected(_) => write!(
                f,
                "the world that the message queue for `{name}` fed is gone: nothing will \
                 read the message"
            ),
        }
    }
}

impl<T> std::error::Error for SendError<T> {}

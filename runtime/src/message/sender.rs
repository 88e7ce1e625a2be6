//! [`MessageSender`]: messages from outside the world (a network thread, an
//! async task, a tool), through the collections' bounded MPSC queue.

use std::fmt;

use sluice_collections::mpsc::Producer;

/// Sends messages of type `T` into a world from any thread: `Send + Clone`,
/// lock-free, bounded. The world drains the queue at each iteration
/// boundary into [`Messages<T>`](super::Messages), after the messages its
/// systems sent, so readers see them in the next iteration.
///
/// A full queue refuses the message and hands it back ([`QueueFull`]):
/// nothing is silently lost, and the sender decides whether to wait, retry
/// or drop it.
///
/// ```
/// use sluice::{NodeBuilder, Subscribe, World};
///
/// struct Packet(u32);
/// let mut world = World::new();
/// let sender = world.sender::<Packet>();
/// std::thread::spawn(move || sender.send(Packet(7)).unwrap()).join().unwrap();
/// world.add_system(NodeBuilder::new("net").system(|mut packets: Subscribe<Packet>| {
///     assert!(packets.unread().all(|p| p.0 == 7));
/// }));
/// world.run_iteration().unwrap(); // the boundary drains the queue
/// world.run_iteration().unwrap(); // the reader sees the packet
/// ```
pub struct MessageSender<T> {
    producer: Producer<T>,
}

impl<T> Clone for MessageSender<T> {
    fn clone(&self) -> Self {
        Self {
            producer: self.producer.clone(),
        }
    }
}

impl<T> fmt::Debug for MessageSender<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MessageSender")
            .field("type", &std::any::type_name::<T>())
            .field("capacity", &self.producer.capacity())
            .finish()
    }
}

impl<T> MessageSender<T> {
    pub(crate) fn new(producer: Producer<T>) -> Self {
        Self { producer }
    }

    /// Queues `message` for the world's next boundary, or hands it back
    /// when the queue is full (the world has not drained it since).
    pub fn send(&self, message: T) -> Result<(), QueueFull<T>> {
        self.producer.push(message).map_err(QueueFull)
    }

    /// How many messages the queue holds between two boundaries.
    pub fn capacity(&self) -> usize {
        self.producer.capacity()
    }
}

/// A [`MessageSender`]'s queue was full: the message, handed back.
#[derive(PartialEq, Eq)]
pub struct QueueFull<T>(pub T);

impl<T> QueueFull<T> {
    /// The message that was not sent.
    pub fn into_inner(self) -> T {
        self.0
    }
}

impl<T> fmt::Debug for QueueFull<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("QueueFull").finish_non_exhaustive()
    }
}

impl<T> fmt::Display for QueueFull<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the message queue for {} is full until the world's next boundary",
            std::any::type_name::<T>()
        )
    }
}

impl<T> std::error::Error for QueueFull<T> {}

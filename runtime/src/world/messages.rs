//! The world's side of messages: senders for other threads, and the
//! messages of a type between iterations.

use crate::message::{DEFAULT_SENDER_CAPACITY, MessageSender, Messages, resolve_messages};
use crate::world::World;

impl World {
    /// A handle that sends messages of type `T` into this world from any
    /// thread; they join `T`'s messages at the next boundary. Its queue
    /// holds [`DEFAULT_SENDER_CAPACITY`] messages between two boundaries
    /// (see [`sender_with_capacity`](Self::sender_with_capacity)). Once this
    /// world is dropped, its senders hand every message back
    /// ([`SendError::Disconnected`](crate::SendError::Disconnected)).
    ///
    /// In [`update`](Self::update) every fixed step ends in a boundary, so
    /// what was queued before an update that runs fixed steps joins the
    /// messages after its first step: the fixed plan's readers see it from
    /// the second step, the variable plan's readers in the same update. A
    /// game that needs one frame's messages at one place stamps them with
    /// the frame (as `sluice-game`'s input feed does).
    pub fn sender<T: Send + Sync + 'static>(&mut self) -> MessageSender<T> {
        self.sender_with_capacity(DEFAULT_SENDER_CAPACITY)
    }

    /// As [`sender`](Self::sender), with a queue of `capacity` messages
    /// (rounded up to a power of two) if this is the first sender of `T`;
    /// later senders share the first one's queue.
    pub fn sender_with_capacity<T: Send + Sync + 'static>(
        &mut self,
        capacity: usize,
    ) -> MessageSender<T> {
        let world = self.id;
        self.messages_mut::<T>().sender(capacity, world)
    }

    /// The messages of type `T`, between iterations (made if new): inspect
    /// them, send one, or set a bound.
    pub fn messages_mut<T: Send + Sync + 'static>(&mut self) -> &mut Messages<T> {
        resolve_messages::<T>(self.graph.registry_mut(), &mut self.hooks);
        self.graph
            .registry_mut()
            .get_mut::<Messages<T>>()
            .expect("resolve_messages inserted them")
    }
}

//! Internals the loom model `tests/loom_sender.rs` drives directly,
//! compiled only under `--cfg loom` (hidden, not part of the API): a
//! sender queue without a world around it. Each wrapper calls the real
//! code; nothing here re-implements a protocol.

use super::{MessageSender, Messages};
use crate::system::BoundaryNodes;

/// The world identity the hooks use for their queues.
const WORLD: u64 = u64::MAX;

/// A sender into `messages`' queue (`World::sender_with_capacity`).
pub fn sender<T: Send + Sync + 'static>(
    messages: &mut Messages<T>,
    capacity: usize,
) -> MessageSender<T> {
    messages.sender(capacity, WORLD)
}

/// `messages`' boundary with no failed node (`Messages::at_boundary`).
pub fn boundary<T: Send + Sync + 'static>(messages: &mut Messages<T>) {
    messages.at_boundary(&BoundaryNodes {
        live: &|_| true,
        failed: &[],
        failed_ranks: &[],
        world: WORLD,
        gather_only: false,
    });
}

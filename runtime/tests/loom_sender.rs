//! Loom model of a `MessageSender` racing with the drop of its world's
//! `Messages<T>` (`message/sender.rs`): a send that starts after the drop
//! hands its message back as `Disconnected`; a message is delivered at most
//! once, and every message, delivered, handed back or left in the queue, is
//! dropped exactly once, after the last handle goes.
//!
//! Run with
//! `RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=2 cargo test -p sluice --release --test loom_sender`.
//! Each model here explores inside sluice's machinery too
//! ([`Builder::explore_machinery`](sluice::model::Builder::explore_machinery)):
//! the machinery is what they check.

#![cfg(loom)]

use loom::sync::Arc;
use loom::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use loom::thread;
use sluice::message::loom_hooks;
use sluice::{Messages, SendError};

/// A message that counts its drops.
struct Counted(Arc<AtomicUsize>);

impl Drop for Counted {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::Relaxed);
    }
}

#[test]
fn a_send_racing_with_the_drop_of_its_world() {
    sluice::model::Builder::new()
        .explore_machinery(true)
        .check(|| {
            let drops = Arc::new(AtomicUsize::new(0));
            let mut messages = Messages::<Counted>::new();
            let sender = loom_hooks::sender(&mut messages, 2);
            let dropped = Arc::new(AtomicBool::new(false));
            let pacer = {
                let (drops, dropped) = (drops.clone(), dropped.clone());
                thread::spawn(move || {
                    let mut accepted = 0;
                    for _ in 0..2 {
                        let after_drop = dropped.load(Ordering::Acquire);
                        match sender.send(Counted(drops.clone())) {
                            Ok(()) => {
                                assert!(!after_drop, "Ok after the drop");
                                accepted += 1;
                            }
                            Err(SendError::Disconnected(back)) => drop(back),
                            Err(error) => panic!("the queue has room: {error}"),
                        }
                    }
                    accepted
                })
            };
            loom_hooks::boundary(&mut messages);
            let delivered = messages.len();
            drop(messages);
            dropped.store(true, Ordering::Release);
            let accepted = pacer.join().unwrap();
            assert!(
                delivered <= accepted,
                "{delivered} delivered, {accepted} accepted"
            );
            // The sender (moved into the thread) is gone: every message is.
            assert_eq!(
                drops.load(Ordering::Relaxed),
                2,
                "each message dropped once"
            );
        });
}

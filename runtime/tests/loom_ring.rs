//! Loom model of the run's ready ring (`exec/state.rs`): the bounded MPMC
//! queue ready nodes overflow into when a local deque is full.
//!
//! Run with
//! `RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=2 cargo test -p sluice --release --test loom_ring`.
//! Each model here explores inside sluice's machinery too
//! ([`Builder::explore_machinery`](sluice::model::Builder::explore_machinery)):
//! the machinery is what they check.

#![cfg(loom)]

use loom::cell::UnsafeCell;
use loom::sync::Arc;
use loom::thread;
use sluice::exec::loom_hooks::Ring;

/// What a pusher wrote for a node before pushing it: the popper reads it
/// after popping the node, as a worker reads the node's inputs.
struct Payloads([UnsafeCell<u32>; 2]);

// SAFETY:
// - Each cell is written once, by the one thread that pushes its node, and
//   read only by the thread that popped that node; loom checks that the
//   ring orders the two.
unsafe impl Sync for Payloads {}

/// Two threads each publish a node (with a payload written before the
/// push), a third pops concurrently; the main thread pops the rest. Every
/// node is popped exactly once, and its payload is visible to its popper.
#[test]
fn two_pushers_and_a_popper() {
    sluice::model::Builder::new()
        .explore_machinery(true)
        .check(|| {
            let ring = Arc::new(Ring::new(2));
            let payloads = Arc::new(Payloads([UnsafeCell::new(0), UnsafeCell::new(0)]));
            let pushers: Vec<_> = (0..2u32)
                .map(|node| {
                    let ring = ring.clone();
                    let payloads = payloads.clone();
                    thread::spawn(move || {
                        // SAFETY:
                        // - Only this thread writes this node's payload, before
                        //   the node is published.
                        payloads.0[node as usize].with_mut(|value| unsafe { *value = 10 + node });
                        assert!(ring.push(node));
                    })
                })
                .collect();
            let read = |payloads: &Payloads, node: u32| {
                // SAFETY:
                // - The node was popped, so its pusher is done writing.
                let value = payloads.0[node as usize].with(|value| unsafe { *value });
                assert_eq!(value, 10 + node, "payload of node {node}");
            };
            let popper = {
                let ring = ring.clone();
                let payloads = payloads.clone();
                thread::spawn(move || {
                    let mut popped = Vec::new();
                    while let Some(node) = ring.pop() {
                        read(&payloads, node);
                        popped.push(node);
                    }
                    popped
                })
            };
            for pusher in pushers {
                pusher.join().unwrap();
            }
            let mut popped = popper.join().unwrap();
            while let Some(node) = ring.pop() {
                read(&payloads, node);
                popped.push(node);
            }
            assert!(ring.is_empty());
            popped.sort_unstable();
            assert_eq!(popped, [0, 1], "every node popped exactly once");
        });
}

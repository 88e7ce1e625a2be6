//! Exactly-once delivery on random worlds (issue 11): random writers (how
//! many messages, on which iterations), random readers (run conditions
//! true on random iterations, some reading messages themselves), in random
//! registration order. Every reader and every reading condition sees every
//! message exactly once, and the same sequence on every executor and
//! thread count.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use proptest::prelude::*;
use sluice::exec::ThreadPool;
use sluice::{ExecutorKind, NodeBuilder, Publish, Subscribe, World};

/// A message: (writer, iteration, index within the writer's iteration).
type Message = (u8, u8, u8);

#[derive(Debug, Clone)]
enum Role {
    /// Sends `count` messages on iterations whose bit is set in `when`.
    Writer { count: u8, when: u8 },
    /// Reads; its run condition holds on iterations whose bit is set in
    /// `open`, and reads messages itself when `condition_reads`.
    Reader { open: u8, condition_reads: bool },
}

/// Iterations with random sending and opening; two more follow with every
/// condition open and nothing sent, so every reader catches up.
const ITERATIONS: usize = 6;

fn role() -> impl Strategy<Value = Role> {
    prop_oneof![
        (1u8..4, any::<u8>()).prop_map(|(count, when)| Role::Writer { count, when }),
        (any::<u8>(), any::<bool>()).prop_map(|(open, condition_reads)| Role::Reader {
            open,
            condition_reads
        }),
    ]
}

/// What every reader (body, then condition) saw, in order.
type Seen = Vec<Arc<Mutex<Vec<Message>>>>;

fn run(roles: &[Role], executor: ExecutorKind, threads: usize) -> (Vec<Vec<Message>>, usize) {
    let mut world = World::with_pool(ThreadPool::new(threads).expect("pool"));
    world.set_executor(executor);
    let iteration = Arc::new(AtomicUsize::new(0));
    let mut seen: Seen = Vec::new();
    let mut sent = 0;
    for (index, role) in roles.iter().enumerate() {
        let name = format!("node{index}");
        let iteration = iteration.clone();
        match *role {
            Role::Writer { count, when } => {
                sent += (0..ITERATIONS).filter(|i| when >> i & 1 == 1).count() * count as usize;
                world.add_system(NodeBuilder::new(name).system(move |out: Publish<Message>| {
                    let i = iteration.load(Ordering::Relaxed);
                    if i < ITERATIONS && when >> i & 1 == 1 {
                        for n in 0..count {
                            out.send((index as u8, i as u8, n));
                        }
                    }
                }));
            }
            Role::Reader {
                open,
                condition_reads,
            } => {
                let body = Arc::new(Mutex::new(Vec::new()));
                let condition = Arc::new(Mutex::new(Vec::new()));
                seen.push(body.clone());
                if condition_reads {
                    seen.push(condition.clone());
                }
                let node =
                    NodeBuilder::new(name).system(move |mut messages: Subscribe<Message>| {
                        body.lock().unwrap().extend(messages.unread().copied());
                    });
                world.add_system(node.run_if(move |mut messages: Subscribe<Message>| {
                    if condition_reads {
                        condition.lock().unwrap().extend(messages.unread().copied());
                    }
                    let i = iteration.load(Ordering::Relaxed);
                    i >= ITERATIONS || open >> i & 1 == 1
                }));
            }
        }
    }
    for i in 0..ITERATIONS + 2 {
        iteration.store(i, Ordering::Relaxed);
        world.run_iteration().expect("runs");
    }
    let seen = seen
        .iter()
        .map(|reader| std::mem::take(&mut *reader.lock().unwrap()))
        .collect();
    (seen, sent)
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: if cfg!(miri) { 2 } else { 48 },
        ..ProptestConfig::default()
    })]

    #[test]
    fn every_reader_sees_every_message_once(roles in prop::collection::vec(role(), 2..9)) {
        let (reference, sent) = run(&roles, ExecutorKind::Serial, 1);
        for (reader, messages) in reference.iter().enumerate() {
            let mut unique = messages.clone();
            unique.sort_unstable();
            unique.dedup();
            prop_assert_eq!(unique.len(), messages.len(), "reader {} saw a message twice", reader);
            prop_assert_eq!(messages.len(), sent, "reader {} missed messages", reader);
        }
        for (executor, threads) in [
            (ExecutorKind::Parallel, 2),
            (ExecutorKind::Adaptive, 4),
            (ExecutorKind::Parallel, 1),
        ] {
            let (seen, _) = run(&roles, executor, threads);
            prop_assert_eq!(&seen, &reference, "{:?} on {} threads", executor, threads);
        }
    }
}

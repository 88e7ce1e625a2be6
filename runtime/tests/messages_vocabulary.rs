//! Issue 36, messages: `Publish::write_batch`, `Subscribe::par_read`,
//! `Messages::clear` and `Messages::drain`, on every executor kind and on 1,
//! 2 and 4 threads.

#[path = "support/executors.rs"]
mod executors;

use std::sync::atomic::{AtomicU64, Ordering};

use executors::{PLANNED, executors, quiet_planned_panics, world_on};
use sluice::Messages;
use sluice::prelude::*;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Hit(u64);

#[derive(Default)]
struct Total(AtomicU64);

/// What commands recorded from inside `par_read` appended, in landing order.
#[derive(Default)]
struct Landed(Vec<u64>);

fn messages() -> u64 {
    if cfg!(miri) { 40 } else { 2_000 }
}

#[test]
fn par_read_reads_each_batch_message_once_and_lands_in_message_order() {
    for (executor, threads) in executors() {
        let mut world = world_on(executor, threads);
        world.insert(Total::default());
        world.insert(Landed::default());
        world.add_system(NodeBuilder::new("write").system(|hits: Publish<Hit>| {
            hits.write_batch((0..messages()).map(Hit));
        }));
        world.add_system(NodeBuilder::new("read").after("write").system(
            |mut hits: Subscribe<Hit>, total: &Total, commands: Commands<'_>| {
                let read = hits.par_read().messages_per_slice(7);
                assert_eq!(read.len() as u64, messages());
                read.for_each(|hit| {
                    total.0.fetch_add(hit.0, Ordering::Relaxed);
                    if hit.0 % 100 == 0 {
                        let n = hit.0;
                        commands.queue(move |world: &mut World| {
                            world.get_mut::<Landed>().unwrap().0.push(n);
                        });
                    }
                });
                assert!(hits.is_empty(), "par_read marks every message read");
            },
        ));
        for _ in 0..2 {
            world.run_iteration().unwrap();
        }
        let sum = (0..messages()).sum::<u64>();
        assert_eq!(
            world.get::<Total>().unwrap().0.load(Ordering::Relaxed),
            2 * sum,
            "{executor:?} on {threads}"
        );
        let once: Vec<u64> = (0..messages()).step_by(100).collect();
        let twice: Vec<u64> = once.iter().chain(&once).copied().collect();
        assert_eq!(
            world.get::<Landed>().unwrap().0,
            twice,
            "{executor:?} on {threads}"
        );
    }
}

#[test]
fn par_read_with_automatic_slices_and_nothing_unread() {
    for (executor, threads) in executors() {
        let mut world = world_on(executor, threads);
        world.insert(Total::default());
        world.add_system(NodeBuilder::new("read").system(
            |mut hits: Subscribe<Hit>, total: &Total| {
                hits.par_read().for_each(|hit| {
                    total.0.fetch_add(hit.0 + 1, Ordering::Relaxed);
                });
            },
        ));
        world.run_iteration().unwrap();
        assert_eq!(world.get::<Total>().unwrap().0.load(Ordering::Relaxed), 0);
        world
            .get_mut::<Messages<Hit>>()
            .unwrap()
            .send(Hit(messages()));
        world.run_iteration().unwrap();
        world.run_iteration().unwrap();
        assert_eq!(
            world.get::<Total>().unwrap().0.load(Ordering::Relaxed),
            messages() + 1,
            "{executor:?} on {threads}"
        );
    }
}

#[test]
fn a_panic_inside_par_read_fails_the_system_and_the_world_goes_on() {
    quiet_planned_panics();
    for (executor, threads) in executors() {
        let mut world = world_on(executor, threads);
        world.insert(Total::default());
        let write = world.add_system(NodeBuilder::new("write").system(|hits: Publish<Hit>| {
            hits.write_batch((0..messages()).map(Hit));
        }));
        world.add_system(NodeBuilder::new("reader").after("write").system(
            |mut hits: Subscribe<Hit>, total: &Total| {
                hits.par_read().messages_per_slice(3).for_each(|hit| {
                    if hit.0 == messages() / 2 {
                        panic!("{PLANNED}: message {}", hit.0);
                    }
                    total.0.fetch_add(1, Ordering::Relaxed);
                });
            },
        ));
        let error = world.run_iteration().unwrap_err();
        assert!(error.to_string().contains("reader"), "{error}");
        assert!(error.to_string().contains(PLANNED), "{error}");
        // The world runs on; the failed read's messages were marked read.
        world.remove_node(write).unwrap();
        world.run_iteration().unwrap();
        world.run_iteration().unwrap();
    }
}

#[test]
fn clear_and_drain_move_every_reader_past_without_missing() {
    for (executor, threads) in executors() {
        let mut world = world_on(executor, threads);
        world.insert(Landed::default());
        world.add_system(NodeBuilder::new("read").system(
            |mut hits: Subscribe<Hit>, seen: &mut Landed| {
                assert_eq!(hits.missed(), 0, "cleared messages are not missed");
                seen.0.extend(hits.unread().map(|hit| hit.0));
            },
        ));
        world.run_iteration().unwrap();
        let messages = world.get_mut::<Messages<Hit>>().unwrap();
        messages.send(Hit(1));
        messages.send(Hit(2));
        messages.clear();
        assert!(messages.is_empty());
        messages.send(Hit(3));
        messages.send(Hit(4));
        messages.send(Hit(5));
        let mut drained = messages.drain();
        assert_eq!(drained.len(), 3);
        assert_eq!(drained.next(), Some(Hit(3)));
        drop(drained); // 4 and 5 dropped with it
        assert!(messages.is_empty());
        messages.send(Hit(6));
        world.run_iteration().unwrap();
        world.run_iteration().unwrap();
        assert_eq!(
            world.get::<Landed>().unwrap().0,
            [6],
            "{executor:?} on {threads}"
        );
    }
}

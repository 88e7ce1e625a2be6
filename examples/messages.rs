//! The guide's chapter "Messages" (`docs/guide/05-messages.md`), runnable:
//! `cargo run --example messages`.
//!
//! Two writers send damage, a reader applies it in one order for every
//! thread count, a network thread sends through a `MessageSender`, a
//! reader that sleeps catches up, and a bound drops what a reader never
//! came back for.

use std::time::Duration;

use sluice::{NodeBuilder, Publish, SendError, Subscribe, World};

/// A hit: who sent it, and how hard.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Damage {
    from: &'static str,
    amount: u32,
}

struct Hp(u32);

/// Every hit `apply` read, in the order it read them.
#[derive(Default)]
struct Applied(Vec<Damage>);

/// Whether the sound system is awake this frame.
struct SoundOn(bool);

/// Hits the sound system heard, and how many it missed.
#[derive(Default)]
struct Heard {
    hits: usize,
    missed: u64,
}

fn main() -> Result<(), sluice::IterationError> {
    let mut world = World::new();
    world.insert(Hp(1_000));
    world.insert(Applied::default());
    world.insert(SoundOn(true));
    world.insert(Heard::default());

    // Two writers: shared access to the lane, so they run together.
    world.add_system(NodeBuilder::new("swords").system(|hits: Publish<Damage>| {
        hits.send(Damage {
            from: "sword",
            amount: 5,
        });
        // A thread the node starts itself: its sends land after the node's own.
        std::thread::scope(|scope| {
            scope.spawn(|| {
                hits.send(Damage {
                    from: "sword-thread",
                    amount: 1,
                })
            });
        });
        hits.send(Damage {
            from: "sword",
            amount: 6,
        });
    }));
    world.add_system(NodeBuilder::new("arrows").system(|hits: Publish<Damage>| {
        hits.send(Damage {
            from: "arrow",
            amount: 2,
        });
    }));
    // A reader after both writers in plan order: it reads them this frame.
    // Declared after both, so the order is intentional (no SL0008 warning).
    world.add_system(
        NodeBuilder::new("apply")
            .after("swords")
            .after("arrows")
            .system(
                |mut hits: Subscribe<Damage>, hp: &mut Hp, applied: &mut Applied| {
                    for hit in hits.unread() {
                        hp.0 -= hit.amount;
                        applied.0.push(*hit);
                    }
                },
            ),
    );
    // A second reader with its own cursor, skipped while the sound is off.
    world.add_system(
        NodeBuilder::new("sound")
            .after("apply")
            .system(|mut hits: Subscribe<Damage>, heard: &mut Heard| {
                heard.missed += hits.missed();
                heard.hits += hits.unread().count();
            })
            .run_if(|on: &SoundOn| on.0),
    );

    world.run_iteration()?;
    let order: Vec<&str> = world
        .get::<Applied>()
        .unwrap()
        .0
        .iter()
        .map(|d| d.from)
        .collect();
    println!("frame 1, read in this order: {order:?}");
    // By sending node in plan order, then each node's send order.
    assert_eq!(order, ["sword", "sword", "sword-thread", "arrow"]);
    assert_eq!(world.get::<Hp>().unwrap().0, 1_000 - 14);

    // The network: another thread, a bounded queue drained at the boundary.
    let network = world.sender_with_capacity::<Damage>(4);
    let refused = std::thread::spawn(move || {
        let mut refused = 0;
        for _ in 0..6 {
            match network.send(Damage {
                from: "network",
                amount: 10,
            }) {
                Ok(()) => {}
                // Handed back, never lost silently.
                Err(SendError::Full(_)) => refused += 1,
                Err(error) => panic!("the world is alive: {error}"),
            }
        }
        refused
    })
    .join()
    .expect("the network thread");
    println!("network: 4 queued, {refused} handed back (queue full)");
    assert_eq!(refused, 2);
    world.run_iteration()?; // drains the queue at its boundary
    world.run_iteration()?; // the readers see the packets
    let from_network = world
        .get::<Applied>()
        .unwrap()
        .0
        .iter()
        .filter(|d| d.from == "network")
        .count();
    assert_eq!(from_network, 4);

    // The sound system sleeps for 10 frames; a bound keeps 8 messages for it.
    world.messages_mut::<Damage>().set_bound(Some(8));
    world.insert(SoundOn(false));
    for _ in 0..10 {
        world.update(Duration::from_millis(16))?;
    }
    let kept = world.messages_mut::<Damage>().len();
    println!("while `sound` sleeps: {kept} messages kept (bound 8)");
    assert_eq!(kept, 8);
    let heard_before = world.get::<Heard>().unwrap().hits;
    world.insert(SoundOn(true));
    world.run_iteration()?;
    let heard = world.get::<Heard>().unwrap();
    println!(
        "`sound` woke: read {} more, missed {}",
        heard.hits - heard_before,
        heard.missed
    );
    // 10 frames of 4 hits while asleep, 8 kept; then this frame's 4.
    assert_eq!(heard.missed, 32);
    assert_eq!(heard.hits - heard_before, 8 + 4);

    // `apply` never slept: it read every hit exactly once.
    let applied = world.get::<Applied>().unwrap().0.len();
    println!("`apply` read {applied} hits, each once");
    assert_eq!(applied, 4 * 14 + 4);
    Ok(())
}

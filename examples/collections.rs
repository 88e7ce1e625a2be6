//! The guide's chapter "The collections" (`docs/guide/13-collections.md`), runnable:
//! `cargo run --example collections`.
//!
//! Each structure under its phase contract: systems with shared access push
//! into an `AppendArena` and a `LockOnResizeArray` together and read a
//! `LedgerMap` with no lock while recording writes to it, a network thread
//! pushes through `mpsc::bounded`, and the gated nodes after them (the only
//! ones holding `&mut`) drain and apply.
//! A `RingHistory` keeps the frame's peak; a `Pool` recycles scratch lists.

use sluice::{NodeBuilder, World};
use sluice_collections::{AppendArena, LedgerMap, LockOnResizeArray, Pool, RingHistory, mpsc};

/// Damage dealt this frame: pushed by many systems, drained by one.
struct Hits(AppendArena<u32>);
/// Every event of the run, appended by slices on several threads.
struct EventLog(LockOnResizeArray<String>);
/// Prices read by systems every frame; writes land when applied.
struct Prices(LedgerMap<&'static str, u32>);
/// What the frame summed.
struct Totals {
    damage: u32,
    gold: u32,
}

fn main() {
    let mut world = World::new();
    world.insert(Hits(AppendArena::with_capacity(1_024)));
    world.insert(EventLog(LockOnResizeArray::new()));
    world.insert(Prices(LedgerMap::new()));
    world.insert(Totals { damage: 0, gold: 0 });

    // Together (`&self`): these run side by side.
    world.add_system(
        NodeBuilder::new("swords").system(|hits: &Hits, log: &EventLog| {
            sluice::exec::for_each_slice(4, &|slices| {
                let mut appender = log.0.appender();
                for slice in slices {
                    hits.0.push(3).expect("room for every hit");
                    appender.push(format!("sword {slice}"));
                }
            });
        }),
    );
    world.add_system(
        NodeBuilder::new("arrows").system(|hits: &Hits, log: &EventLog| {
            hits.0.push(4).expect("room for every hit");
            log.0.push("arrow".to_owned());
        }),
    );
    world.add_system(NodeBuilder::new("set_price").system(|prices: &Prices| {
        if !prices.0.contains_key("sword") {
            prices.0.insert("sword", 10); // recorded: lands at `apply`
        }
    }));
    world.add_system(
        NodeBuilder::new("shop").system(|prices: &Prices, totals: &mut Totals| {
            // A plain map lookup, no lock: the prices as of the last `apply`.
            totals.gold += prices.0.get("sword").copied().unwrap_or(0);
        }),
    );
    // Alone (`&mut self`): after every pusher and reader, the only ones
    // that drain and apply (`after` makes the order intentional: SL0008).
    world.add_system(
        NodeBuilder::new("apply_hits")
            .after("swords")
            .after("arrows")
            .after("shop")
            .system(|hits: &mut Hits, totals: &mut Totals| {
                totals.damage += hits.0.drain().sum::<u32>();
            }),
    );
    world.add_system(
        NodeBuilder::new("apply_prices")
            .after("set_price")
            .after("shop")
            .system(|prices: &mut Prices| {
                let landed = prices.0.apply();
                if landed > 0 {
                    println!("{landed} price change landed");
                }
            }),
    );

    // A network thread pushes orders through the bounded queue.
    let (orders, mut inbox) = mpsc::bounded::<u32>(8);
    let network = orders.clone();
    std::thread::spawn(move || {
        for order in 1..=3 {
            network.push(order).expect("room for three");
        }
    })
    .join()
    .expect("network ran");

    let scratch: Pool<Vec<u32>> = Pool::new(4);
    let mut frame_peaks = RingHistory::new(3);
    for frame in 0..4_u32 {
        world.run_iteration().expect("the frame runs");
        // The one consumer drains the queue, into a pooled scratch list.
        let mut received = scratch.take();
        received.extend(std::iter::from_fn(|| inbox.pop()));
        frame_peaks.push(frame * 10 + received.len() as u32);
        println!("frame {frame}: {} orders received", received.len());
    }
    drop(orders);

    let totals = world.get::<Totals>().expect("inserted");
    let log = &world.get::<EventLog>().expect("inserted").0;
    println!(
        "damage {}, gold {}, {} events, peak of the last 3 frames {:?}",
        totals.damage,
        totals.gold,
        log.iter().count(),
        frame_peaks.max()
    );
    assert_eq!(totals.damage, 4 * (4 * 3 + 4), "every hit drained once");
    assert_eq!(log.iter().count(), 4 * 5, "every event kept");
    assert_eq!(scratch.idle(), 1, "the scratch list went back each frame");
    assert_eq!(
        frame_peaks.max(),
        Some(30),
        "frame 0 fell out of the window"
    );
    assert_eq!(
        totals.gold,
        3 * 10,
        "frame 0 read the map before the price landed"
    );
}

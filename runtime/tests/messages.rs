//! Messages (issue 11): writers together, readers after the writers before
//! them, exactly-once delivery with per-reader cursors, the same log on
//! every executor and thread count, retention and bounds, and messages from
//! other threads.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use sluice::exec::ThreadPool;
use sluice::{ExecutorKind, Messages, NodeBuilder, Publish, SendError, Subscribe, World};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Hit(u32, u32);

/// What each reader saw, in order, over the whole run.
#[derive(Debug, Default)]
struct Seen(Vec<Vec<Hit>>);

fn world(executor: ExecutorKind, threads: usize) -> World {
    let mut world = World::with_pool(ThreadPool::new(threads).expect("pool"));
    world.set_executor(executor);
    world
}
/// The executors compared with the serial run; under Miri the parallel one
/// only: the adaptive executor runs the serial path until its first probe,
/// 32 iterations in, further than a test runs under Miri.
fn parallel_kinds() -> &'static [ExecutorKind] {
    if cfg!(miri) {
        &[ExecutorKind::Parallel]
    } else {
        &[ExecutorKind::Parallel, ExecutorKind::Adaptive]
    }
}

/// A writer before a reader delivers in the same iteration; a writer after
/// it (ordered `after`) in the next; every message exactly once.
#[test]
fn smoke() {
    let mut world = world(ExecutorKind::Serial, 1);
    world.insert(Seen(vec![Vec::new()]));
    world.add_system(NodeBuilder::new("early").system(|hits: Publish<Hit>| {
        hits.send(Hit(0, 0));
    }));
    world.add_system(NodeBuilder::new("read").system(
        |mut hits: Subscribe<Hit>, seen: &mut Seen| seen.0[0].extend(hits.unread().copied()),
    ));
    world.add_system(
        NodeBuilder::new("late")
            .after("read")
            .system(|hits: Publish<Hit>| hits.send(Hit(1, 0))),
    );
    world.run_iteration().expect("runs");
    assert_eq!(world.get::<Seen>().unwrap().0[0], [Hit(0, 0)], "early only");
    world.run_iteration().expect("runs");
    assert_eq!(
        world.get::<Seen>().unwrap().0[0],
        [Hit(0, 0), Hit(1, 0), Hit(0, 0)],
        "late's of the last iteration, then early's"
    );
}

/// Many writers (some sending from a parallel query) and several readers,
/// one with a run condition that is false on odd iterations: every reader
/// sees every message exactly once, in the same order on every executor and
/// thread count.
#[test]
fn every_reader_sees_one_log_on_every_executor() {
    let writers = if cfg!(miri) { 3 } else { 12 };
    let iterations = if cfg!(miri) { 3 } else { 8 };
    let run = |executor: ExecutorKind, threads: usize| {
        let mut world = world(executor, threads);
        world.insert(Seen(vec![Vec::new(); 3]));
        let frame = Arc::new(AtomicUsize::new(0));
        for w in 0..writers {
            let frame = frame.clone();
            world.add_system(NodeBuilder::new(format!("w{w}")).system(
                move |hits: Publish<Hit>| {
                    let f = frame.load(Ordering::Relaxed) as u32;
                    for i in 0..=(w % 3) {
                        hits.send(Hit(w, f * 10 + i));
                    }
                },
            ));
        }
        for r in 0..3usize {
            let frame = frame.clone();
            let mut reader = NodeBuilder::new(format!("r{r}")).system(
                move |mut hits: Subscribe<Hit>, seen: &mut Seen| {
                    seen.0[r].extend(hits.unread().copied());
                },
            );
            if r == 1 {
                reader = reader.run_if(move || frame.load(Ordering::Relaxed).is_multiple_of(2));
            }
            world.add_system(reader);
        }
        for f in 0..iterations {
            frame.store(f, Ordering::Relaxed);
            world.run_iteration().expect("runs");
        }
        frame.store(0, Ordering::Relaxed);
        world
            .run_iteration()
            .expect("the skipped reader catches up");
        std::mem::take(&mut world.get_mut::<Seen>().unwrap().0)
    };
    let reference = run(ExecutorKind::Serial, 1);
    let sent: usize = (0..writers).map(|w| (w % 3 + 1) as usize).sum::<usize>() * (iterations + 1);
    for seen in &reference {
        assert_eq!(seen.len(), sent, "every message once");
    }
    assert_eq!(reference[0], reference[1], "the skipped reader caught up");
    for &executor in parallel_kinds() {
        for threads in if cfg!(miri) { &[2][..] } else { &[1, 2, 4][..] } {
            assert_eq!(
                run(executor, *threads),
                reference,
                "{executor:?}, {threads} threads"
            );
        }
    }
}

/// A run condition reads with its own cursor: its reads (and a false
/// result) do not move the body's.
#[test]
fn a_condition_has_its_own_cursor() {
    let mut world = world(ExecutorKind::Serial, 1);
    world.insert(Seen(vec![Vec::new()]));
    world.add_system(NodeBuilder::new("send").system(|hits: Publish<Hit>| hits.send(Hit(9, 9))));
    let open = Arc::new(AtomicBool::new(false));
    let gate = open.clone();
    world.add_system(
        NodeBuilder::new("read")
            .system(|mut hits: Subscribe<Hit>, seen: &mut Seen| {
                seen.0[0].extend(hits.unread().copied());
            })
            .run_if(move |mut hits: Subscribe<Hit>| {
                // Reads (and so moves its own cursor) every time.
                hits.unread().count() == 1 && gate.load(Ordering::Relaxed)
            }),
    );
    world.run_iteration().expect("runs");
    world.run_iteration().expect("runs");
    assert!(world.get::<Seen>().unwrap().0[0].is_empty());
    open.store(true, Ordering::Relaxed);
    world.run_iteration().expect("runs");
    assert_eq!(
        world.get::<Seen>().unwrap().0[0].len(),
        3,
        "the body catches up on everything its condition read"
    );
}

/// Messages every reader read are dropped at the boundary; a removed
/// reader no longer holds them; a bound drops the oldest and the reader
/// that missed them is told how many.
#[test]
fn retention_removal_and_bound() {
    let mut world = world(ExecutorKind::Serial, 1);
    world.add_system(NodeBuilder::new("send").system(|hits: Publish<Hit>| {
        for i in 0..4 {
            hits.send(Hit(i, 0));
        }
    }));
    let missed = Arc::new(AtomicUsize::new(0));
    let (counted, reading) = (missed.clone(), Arc::new(AtomicBool::new(true)));
    let read_now = reading.clone();
    let slow = world.add_system(
        NodeBuilder::new("slow")
            .system(move |mut hits: Subscribe<Hit>| {
                counted.fetch_add(hits.missed() as usize, Ordering::Relaxed);
                hits.clear();
            })
            .run_if(move || read_now.load(Ordering::Relaxed)),
    );
    world.run_iteration().expect("runs");
    assert_eq!(world.messages_mut::<Hit>().len(), 0, "read by every reader");
    reading.store(false, Ordering::Relaxed);
    for _ in 0..3 {
        world.run_iteration().expect("runs");
    }
    assert_eq!(
        world.messages_mut::<Hit>().len(),
        12,
        "kept for the skipped reader"
    );
    world.messages_mut::<Hit>().set_bound(Some(5));
    world.run_iteration().expect("runs");
    assert_eq!(world.messages_mut::<Hit>().len(), 5, "the bound");
    reading.store(true, Ordering::Relaxed);
    world.run_iteration().expect("runs");
    assert_eq!(
        missed.load(Ordering::Relaxed),
        11,
        "16 sent while skipped, 5 kept"
    );
    // A removed reader's cursor goes at the next boundary.
    reading.store(false, Ordering::Relaxed);
    world.run_iteration().expect("runs");
    world.remove_node(slow).expect("removable");
    world.run_iteration().expect("runs");
    world.run_iteration().expect("runs");
    assert_eq!(world.messages_mut::<Hit>().readers(), 0);
    assert!(
        world.messages_mut::<Hit>().len() <= 4,
        "with no reader, only the last iteration's are kept"
    );
}

/// Senders on several threads against a small queue: a full queue hands
/// the message back; every message sent is read exactly once.
#[test]
fn senders_from_other_threads() {
    let (threads, per_thread) = if cfg!(miri) { (2, 20) } else { (4, 2_000) };
    let mut world = world(ExecutorKind::Adaptive, 2);
    let sender = world.sender_with_capacity::<Hit>(64);
    assert_eq!(sender.capacity(), 64);
    let seen = Arc::new(AtomicUsize::new(0));
    let sum = Arc::new(AtomicUsize::new(0));
    let (count, total) = (seen.clone(), sum.clone());
    world.add_system(
        NodeBuilder::new("net").system(move |mut hits: Subscribe<Hit>| {
            for hit in hits.unread() {
                count.fetch_add(1, Ordering::Relaxed);
                total.fetch_add(hit.1 as usize, Ordering::Relaxed);
            }
        }),
    );
    let full = Arc::new(AtomicUsize::new(0));
    let done = Arc::new(AtomicUsize::new(0));
    let handles: Vec<_> = (0..threads)
        .map(|t| {
            let (sender, full, done) = (sender.clone(), full.clone(), done.clone());
            std::thread::spawn(move || {
                for i in 0..per_thread {
                    let mut hit = Hit(t, i);
                    loop {
                        match sender.send(hit) {
                            Ok(()) => break,
                            Err(SendError::Full(back)) => {
                                full.fetch_add(1, Ordering::Relaxed);
                                hit = back;
                                std::thread::yield_now();
                            }
                            Err(error) => panic!("the world is alive: {error}"),
                        }
                    }
                }
                done.fetch_add(1, Ordering::Relaxed);
            })
        })
        .collect();
    while done.load(Ordering::Relaxed) < threads as usize {
        world.run_iteration().expect("runs");
    }
    for handle in handles {
        handle.join().expect("sender thread");
    }
    world.run_iteration().expect("drains the rest");
    world.run_iteration().expect("reads the rest");
    let sent = threads as usize * per_thread as usize;
    assert_eq!(seen.load(Ordering::Relaxed), sent, "every message once");
    let expected: usize = threads as usize * (0..per_thread as usize).sum::<usize>();
    assert_eq!(sum.load(Ordering::Relaxed), expected);
    if !cfg!(miri) {
        assert!(
            full.load(Ordering::Relaxed) > 0,
            "the small queue filled up"
        );
    }
}

/// One system naming `T`'s messages twice where either reads (two readers,
/// or a reader beside a writer) is refused as SL0009 before its body runs,
/// naming the node and the messages.
#[test]
fn reading_one_type_twice_in_a_system_is_refused() {
    let ran = Arc::new(AtomicUsize::new(0));
    for twice in 0..2 {
        let mut world = world(ExecutorKind::Serial, 1);
        let counted = ran.clone();
        if twice == 0 {
            world.add_system(NodeBuilder::new("echo").system(
                move |_a: Subscribe<Hit>, _b: Subscribe<Hit>| {
                    counted.fetch_add(1, Ordering::Relaxed);
                },
            ));
        } else {
            world.add_system(NodeBuilder::new("echo").system(
                move |_heard: Subscribe<Hit>, _said: Publish<Hit>| {
                    counted.fetch_add(1, Ordering::Relaxed);
                },
            ));
        }
        let error = world.run_iteration().expect_err("refused");
        let sluice::IterationError::Plan(errors) = &error else {
            panic!("expected a plan error, got {error}");
        };
        let diagnostic = errors
            .errors()
            .find(|d| d.code == "SL0009")
            .unwrap_or_else(|| panic!("no SL0009 in {errors}"));
        assert_eq!(diagnostic.nodes, ["echo"]);
        assert!(
            diagnostic.message.contains("Messages"),
            "{}",
            diagnostic.message
        );
    }
    assert_eq!(ran.load(Ordering::Relaxed), 0, "no body ran");
}

/// A message whose `Drop` panics when the boundary drops it: reported as
/// that step, naming the messages; the world goes on and nothing else is
/// lost.
#[test]
fn a_panicking_drop_at_the_boundary_is_reported() {
    struct Bomb(bool);
    impl Drop for Bomb {
        fn drop(&mut self) {
            if self.0 && !std::thread::panicking() {
                panic!("bomb went off");
            }
        }
    }
    let mut world = world(ExecutorKind::Serial, 1);
    let armed = Arc::new(AtomicBool::new(true));
    let arm = armed.clone();
    world.add_system(NodeBuilder::new("send").system(
        move |out: Publish<Bomb>, hits: Publish<Hit>| {
            out.send(Bomb(arm.swap(false, Ordering::Relaxed)));
            hits.send(Hit(1, 1));
        },
    ));
    let heard = Arc::new(AtomicUsize::new(0));
    let count = heard.clone();
    world.add_system(NodeBuilder::new("read").system(
        move |mut bombs: Subscribe<Bomb>, mut hits: Subscribe<Hit>| {
            bombs.clear();
            count.fetch_add(hits.unread().count(), Ordering::Relaxed);
        },
    ));
    let Err(sluice::IterationError::Boundary(failures)) = world.run_iteration() else {
        panic!("the drop's panic is reported");
    };
    assert_eq!(failures.len(), 1, "{failures:?}");
    let sluice::BoundaryStep::Messages { service } = failures[0].step() else {
        panic!("{failures:?}");
    };
    assert!(service.contains("Bomb"), "{service}");
    assert!(
        failures[0].to_string().contains("bomb went off"),
        "{}",
        failures[0]
    );
    world.run_iteration().expect("the next iteration runs");
    assert_eq!(
        heard.load(Ordering::Relaxed),
        2,
        "the other type was untouched"
    );
    assert_eq!(world.messages_mut::<Bomb>().len(), 0, "the log moved on");
}

/// A sender outliving its world: every send hands its message back as
/// `Disconnected`, though the queue has room; neither error promises a
/// boundary. A world whose `Messages<T>` is replaced disconnects the old
/// senders too, and a new sender is live.
#[test]
fn a_sender_outliving_its_world() {
    let mut world = World::new();
    let sender = world.sender_with_capacity::<Hit>(2);
    assert_eq!(sender.send(Hit(0, 0)), Ok(()));
    assert_eq!(sender.send(Hit(0, 1)), Ok(()));
    let full = sender.send(Hit(0, 2)).expect_err("full");
    assert!(full.is_full(), "{full:?}");
    assert!(full.to_string().contains("if it runs one"), "{full}");
    assert_eq!(full.into_inner(), Hit(0, 2));
    drop(world);
    assert!(!sender.is_connected());
    for i in 0..4 {
        let gone = sender.send(Hit(1, i)).expect_err("the world is gone");
        assert!(gone.is_disconnected(), "{gone:?}");
        assert!(gone.to_string().contains("gone"), "{gone}");
        assert_eq!(gone.into_inner(), Hit(1, i), "the message, handed back");
    }

    let mut world = World::new();
    let old = world.sender::<Hit>();
    world.insert(Messages::<Hit>::new());
    assert_eq!(old.send(Hit(2, 0)), Err(SendError::Disconnected(Hit(2, 0))));
    let new = world.sender::<Hit>();
    assert_eq!(new.send(Hit(2, 1)), Ok(()));
    world.run_iteration().expect("runs");
    assert_eq!(
        world
            .messages_mut::<Hit>()
            .kept()
            .copied()
            .collect::<Vec<_>>(),
        [Hit(2, 1)]
    );
}

/// A sender thread pacing while its world is dropped mid-stream: every send
/// that starts after the drop returns `Disconnected` with its message, never
/// `Ok` or `Full`; once disconnected it stays so; what was read before is a
/// prefix of what was accepted, each message once.
#[test]
fn a_pacing_sender_sees_its_world_dropped() {
    let iterations = if cfg!(miri) { 5 } else { 200 };
    let mut world = world(ExecutorKind::Adaptive, 2);
    let sender = world.sender_with_capacity::<Hit>(16);
    let read = Arc::new(Mutex::new(Vec::new()));
    let reads = read.clone();
    world.add_system(
        NodeBuilder::new("net").system(move |mut hits: Subscribe<Hit>| {
            reads.lock().unwrap().extend(hits.unread().map(|hit| hit.1));
        }),
    );
    let dropped = Arc::new(AtomicBool::new(false));
    let seen_dropped = dropped.clone();
    let accepted_so_far = Arc::new(AtomicUsize::new(0));
    let counted = accepted_so_far.clone();
    let pacer = std::thread::spawn(move || {
        let (mut accepted, mut disconnected) = (Vec::new(), 0);
        for i in 0.. {
            let after_drop = seen_dropped.load(Ordering::Acquire);
            match sender.send(Hit(0, i)) {
                Ok(()) => {
                    assert!(!after_drop, "send {i} after the drop returned Ok");
                    assert_eq!(disconnected, 0, "send {i} Ok after a Disconnected");
                    accepted.push(i);
                    counted.fetch_add(1, Ordering::Relaxed);
                }
                Err(SendError::Full(back)) => {
                    assert!(!after_drop, "send {i} after the drop returned Full");
                    assert_eq!(disconnected, 0, "send {i} Full after a Disconnected");
                    assert_eq!(back, Hit(0, i));
                }
                Err(SendError::Disconnected(back)) => {
                    assert_eq!(back, Hit(0, i), "the message, handed back");
                    disconnected += 1;
                    if after_drop && disconnected > 100 {
                        return accepted;
                    }
                }
                Err(error) => panic!("unexpected: {error}"),
            }
            std::thread::yield_now();
        }
        unreachable!()
    });
    // Mid-stream: the pacer has been sending for a while.
    let mut ran = 0;
    while ran < iterations || accepted_so_far.load(Ordering::Relaxed) < iterations {
        world.run_iteration().expect("runs");
        ran += 1;
    }
    drop(world);
    dropped.store(true, Ordering::Release);
    let accepted = pacer.join().expect("the pacing thread");
    let read = read.lock().unwrap();
    assert!(!accepted.is_empty());
    assert!(
        accepted.starts_with(&read),
        "read {} messages, not a prefix of the {} accepted",
        read.len(),
        accepted.len()
    );
}

//! The main thread (reference 003: each iteration runs on "the main thread
//! and n-1 workers"): services that are not `Send` (`insert_non_send`,
//! `NonSend<T>`, `NonSendMut<T>`), nodes pinned to the thread that runs the
//! iteration (`NodeBuilder::pinned`, `Group::pinned`), and the rule that
//! only pinned nodes name a non-`Send` service (SL0011); a pinned batch
//! processor's `before_update` and `after_update` on that thread.

use std::cell::Cell;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::{self, ThreadId};
use std::time::Duration;

use sluice::exec::ClearBuffer;
use sluice::{
    BatchProcessor, ExecutorKind, Group, IterationError, NodeBuilder, NonSend, NonSendMut,
    ThreadPool, World,
};

/// A window: holds an `Rc`, so it is neither `Send` nor `Sync`.
struct Window {
    frames: Rc<Cell<u32>>,
}

/// What the nodes saw: the threads pinned nodes ran on.
#[derive(Default)]
struct Seen {
    pinned_threads: Mutex<Vec<ThreadId>>,
    unpinned: AtomicUsize,
}

impl Seen {
    /// Logs the calling thread (from a pinned node).
    fn ran_here(&self) {
        self.pinned_threads
            .lock()
            .unwrap()
            .push(thread::current().id());
    }
}

/// The names of the plan's pinned nodes, in plan order.
fn pinned_names(world: &mut World) -> Vec<String> {
    let plan = world.plan().unwrap();
    plan.order()
        .filter(|&node| plan.is_pinned(node))
        .map(|node| plan.node_name(node).to_owned())
        .collect()
}

fn worlds() -> Vec<(String, World)> {
    let mut worlds = Vec::new();
    for threads in [1, 2, 4] {
        for executor in [
            ExecutorKind::Parallel,
            ExecutorKind::Serial,
            ExecutorKind::Adaptive,
        ] {
            let mut world = World::with_pool(ThreadPool::new(threads).unwrap());
            world.set_executor(executor);
            worlds.push((format!("{executor:?} on {threads} threads"), world));
        }
    }
    worlds
}

#[test]
fn non_send_services_are_reached_by_pinned_nodes_on_the_calling_thread() {
    let main = thread::current().id();
    for (what, mut world) in worlds() {
        let frames = Rc::new(Cell::new(0));
        world.insert_non_send(Window {
            frames: Rc::clone(&frames),
        });
        let seen = Arc::new(Seen::default());
        // Unpinned work around the pinned nodes, some of it slow enough that
        // workers take it.
        for i in 0..6 {
            let seen = Arc::clone(&seen);
            world.add_system(NodeBuilder::new(format!("work{i}")).run(move |_| {
                thread::sleep(Duration::from_micros(50));
                seen.unpinned.fetch_add(1, Ordering::Relaxed);
            }));
        }
        let record = Arc::clone(&seen);
        world.add_system(NodeBuilder::new("present").system(
            move |mut window: NonSendMut<Window>| {
                window.frames.set(window.frames.get() + 1);
                let _ = &mut *window;
                record.ran_here();
            },
        ));
        let record = Arc::clone(&seen);
        world.add_system(NodeBuilder::new("title").after("present").system(
            move |window: NonSend<Window>| {
                assert!(window.frames.get() > 0, "after present in plan order");
                record.ran_here();
            },
        ));
        let record = Arc::clone(&seen);
        world.add_system(NodeBuilder::new("audio").pinned().run(move |_| {
            record.ran_here();
        }));
        for _ in 0..10 {
            world.run_iteration().unwrap();
        }
        assert_eq!(frames.get(), 10, "{what}: present ran every frame");
        assert_eq!(world.get_non_send::<Window>().unwrap().frames.get(), 10);
        let threads = seen.pinned_threads.lock().unwrap();
        assert_eq!(threads.len(), 30, "{what}");
        assert!(
            threads.iter().all(|&id| id == main),
            "{what}: a pinned node ran off the main thread"
        );
        assert_eq!(seen.unpinned.load(Ordering::Relaxed), 60, "{what}");
        assert_eq!(
            pinned_names(&mut world),
            ["present", "title", "audio"],
            "{what}"
        );
    }
}

#[test]
fn a_node_naming_a_non_send_service_unpinned_is_refused_with_sl0011() {
    let mut world = World::new();
    world.insert_non_send(Window {
        frames: Rc::new(Cell::new(0)),
    });
    let touched = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&touched);
    world.add_system(
        NodeBuilder::new("sneaky")
            .reads::<Window>()
            .run(move |_| flag.store(true, Ordering::SeqCst)),
    );
    let Err(IterationError::Plan(errors)) = world.run_iteration() else {
        panic!("an unpinned node naming a non-Send service ran");
    };
    let diagnostic = errors
        .errors()
        .find(|d| d.code == "SL0011")
        .expect("SL0011");
    assert_eq!(diagnostic.nodes, ["sneaky"]);
    assert!(diagnostic.message.contains("sneaky"), "{diagnostic}");
    assert!(diagnostic.message.contains("Window"), "{diagnostic}");
    assert!(!touched.load(Ordering::SeqCst), "its body never ran");
}

#[test]
fn registering_first_and_inserting_non_send_later_is_refused_too() {
    struct Plain(u32);
    let mut world = World::new();
    world.insert(Plain(1));
    world.add_system(|plain: &Plain| assert_eq!(plain.0, 1));
    world.run_iteration().unwrap();
    // The same type now held as a non-Send value: the planned node names
    // it unpinned, so the next iteration replans and refuses it.
    world.insert_non_send(Plain(2));
    let Err(IterationError::Plan(errors)) = world.run_iteration() else {
        panic!("the stale plan ran an unpinned node on a non-Send service");
    };
    assert!(errors.errors().any(|d| d.code == "SL0011"), "{errors}");
}

#[test]
fn a_pinned_group_pins_its_members_at_any_depth() {
    let main = thread::current().id();
    let mut world = World::with_pool(ThreadPool::new(4).unwrap());
    world.set_executor(ExecutorKind::Parallel);
    world.insert_non_send(Window {
        frames: Rc::new(Cell::new(0)),
    });
    world.add_group(Group::new("Render").pinned());
    world.add_group(Group::new("Ui").in_group("Render"));
    let threads = Arc::new(Mutex::new(Vec::new()));
    // Slow roots the members wait for: whichever finishes last releases
    // them, mostly a worker.
    for i in 0..4 {
        world.add_system(
            NodeBuilder::new(format!("prep{i}"))
                .before("Render")
                .run(|_| thread::sleep(Duration::from_micros(200))),
        );
    }
    for (name, group) in [("draw", "Render"), ("hud", "Ui")] {
        let threads = Arc::clone(&threads);
        world.add_system(
            NodeBuilder::new(name)
                .in_group(group)
                .gates::<Window>()
                .run(move |cx| {
                    let window = cx.write_non_send::<Window>();
                    window.frames.set(window.frames.get() + 1);
                    threads.lock().unwrap().push(thread::current().id());
                }),
        );
    }
    world.add_system(NodeBuilder::new("physics").run(|_| {}));
    for _ in 0..5 {
        world.run_iteration().unwrap();
    }
    assert_eq!(world.get_non_send::<Window>().unwrap().frames.get(), 10);
    let threads = threads.lock().unwrap();
    assert_eq!(threads.len(), 10);
    assert!(threads.iter().all(|&id| id == main));
    assert_eq!(pinned_names(&mut world), ["draw", "hud"]);
}

/// Sets its flag when dropped.
struct Loud {
    dropped: Arc<AtomicBool>,
    _not_send: Rc<()>,
}

impl Loud {
    fn new(dropped: &Arc<AtomicBool>) -> Self {
        Self {
            dropped: Arc::clone(dropped),
            _not_send: Rc::new(()),
        }
    }
}

impl Drop for Loud {
    fn drop(&mut self) {
        self.dropped.store(true, Ordering::SeqCst);
    }
}

fn assert_send<T: Send>() {}

#[test]
fn a_world_moved_to_another_thread_refuses_to_run_and_never_touches_the_value_there() {
    assert_send::<World>();
    let dropped = Arc::new(AtomicBool::new(false));
    let mut world = World::new();
    world.insert_non_send(Loud::new(&dropped));
    world.add_system(|_loud: NonSend<Loud>| {});
    world.run_iteration().unwrap();
    // Elsewhere: no iteration, no value.
    let world = thread::spawn(move || {
        let mut world = world;
        assert!(world.get_non_send::<Loud>().is_none());
        assert!(world.get_non_send_mut::<Loud>().is_none());
        match world.run_iteration() {
            Err(IterationError::WrongThread { service }) => {
                assert!(service.contains("Loud"), "{service}");
            }
            other => panic!("ran on the wrong thread: {other:?}"),
        }
        world
    })
    .join()
    .unwrap();
    // Back home it runs again, and dropping it here drops the value.
    let mut world = world;
    world.run_iteration().unwrap();
    assert!(world.get_non_send::<Loud>().is_some());
    drop(world);
    assert!(dropped.load(Ordering::SeqCst));
}

#[test]
fn a_world_dropped_on_another_thread_leaks_its_non_send_values() {
    let dropped = Arc::new(AtomicBool::new(false));
    let mut world = World::new();
    world.insert_non_send(Loud::new(&dropped));
    thread::spawn(move || drop(world)).join().unwrap();
    assert!(
        !dropped.load(Ordering::SeqCst),
        "a non-Send value was dropped away from its thread"
    );
}

#[test]
fn a_replaced_non_send_value_is_dropped_where_it_was_made() {
    let first = Arc::new(AtomicBool::new(false));
    let mut world = World::new();
    world.insert_non_send(Loud::new(&first));
    world.insert_non_send(Loud::new(&Arc::default()));
    assert!(
        first.load(Ordering::SeqCst),
        "the replaced value dropped here"
    );
    assert!(world.get_non_send_mut::<Loud>().is_some());
}

#[test]
fn a_panicking_pinned_node_fails_the_iteration_and_the_next_one_runs() {
    let mut world = World::with_pool(ThreadPool::new(2).unwrap());
    world.set_executor(ExecutorKind::Parallel);
    world.insert_non_send(Window {
        frames: Rc::new(Cell::new(0)),
    });
    world.add_system(
        NodeBuilder::new("present").system(|window: NonSendMut<Window>| {
            let frame = window.frames.get();
            window.frames.set(frame + 1);
            assert_ne!(frame, 0, "first frame fails");
        }),
    );
    let Err(IterationError::NodePanicked(panic)) = world.run_iteration() else {
        panic!("the pinned node's panic was lost");
    };
    assert_eq!(panic.nodes(), ["present"]);
    world.run_iteration().unwrap();
    assert_eq!(world.get_non_send::<Window>().unwrap().frames.get(), 2);
}

/// Sprites to draw: a pinned batch processor's buffer.
#[derive(Default)]
struct Sprites(Vec<u32>);

impl ClearBuffer for Sprites {
    fn clear_buffer(&mut self) {
        self.0.clear();
    }
}

/// A pinned batch processor that logs where each phase ran. Its slices
/// take a while, so that the pool's threads share them and often one of
/// them finishes last.
struct Upload {
    seen: Arc<BatchSeen>,
}

/// The threads a batch's phases ran on, and the items its slices saw.
#[derive(Default)]
struct BatchSeen {
    before: Mutex<Vec<ThreadId>>,
    after: Mutex<Vec<ThreadId>>,
    items: AtomicUsize,
}

impl BatchProcessor for Upload {
    type Buffer = Sprites;
    type Item = u32;
    const BATCH_SIZE: usize = 4;

    fn items(buffer: &Sprites) -> &[u32] {
        &buffer.0
    }

    fn before_update(&mut self, buffer: &mut Sprites) {
        self.seen
            .before
            .lock()
            .unwrap()
            .push(thread::current().id());
        buffer.0.extend(0..64);
    }

    fn process_batch(&self, _start: usize, batch: &[u32]) {
        thread::sleep(Duration::from_micros(20));
        self.seen.items.fetch_add(batch.len(), Ordering::Relaxed);
    }

    fn after_update(&mut self, buffer: &mut Sprites) {
        self.seen.after.lock().unwrap().push(thread::current().id());
        buffer.clear_buffer();
    }
}

/// Issue 34, finding 3: a pinned batch processor's `after_update` ran on a
/// worker in 12% to 80% of frames on 2 and 4 threads (on the thread whose
/// slice finished last). A pinned batch runs `before_update` and
/// `after_update` on the thread that runs the iteration, on every executor
/// and thread count; only its slices go to the pool. Its successor, which
/// reads the buffer, sees `after_update` done.
#[test]
fn a_pinned_batch_runs_before_and_after_update_on_the_calling_thread() {
    let main = thread::current().id();
    for (what, mut world) in worlds() {
        world.insert(Sprites::default());
        let seen = Arc::new(BatchSeen::default());
        world.add_system(NodeBuilder::new("upload").pinned().batch_processor(Upload {
            seen: Arc::clone(&seen),
        }));
        let emptied = Arc::new(AtomicUsize::new(0));
        {
            let emptied = Arc::clone(&emptied);
            world.add_system(NodeBuilder::new("after").after("upload").system(
                move |sprites: &Sprites| {
                    if sprites.0.is_empty() {
                        emptied.fetch_add(1, Ordering::Relaxed);
                    }
                },
            ));
        }
        // Unpinned work beside the batch, for the workers.
        for i in 0..3 {
            world.add_system(
                NodeBuilder::new(format!("work{i}"))
                    .run(|_| thread::sleep(Duration::from_micros(50))),
            );
        }
        assert_eq!(pinned_names(&mut world), ["upload"], "{what}");
        let frames = 40;
        for _ in 0..frames {
            world
                .run_iteration()
                .unwrap_or_else(|error| panic!("{what}: {error}"));
        }
        assert_eq!(seen.items.load(Ordering::Relaxed), 64 * frames, "{what}");
        assert_eq!(emptied.load(Ordering::Relaxed), frames, "{what}");
        for (phase, threads) in [
            ("before_update", &seen.before),
            ("after_update", &seen.after),
        ] {
            let threads = threads.lock().unwrap();
            assert_eq!(threads.len(), frames, "{what}: {phase} once a frame");
            let elsewhere = threads.iter().filter(|&&id| id != main).count();
            assert_eq!(
                elsewhere, 0,
                "{what}: the pinned batch's {phase} ran off the calling thread in \
                 {elsewhere} of {frames} frames"
            );
        }
    }
}

//! A tick allocates nothing: after one warm-up iteration, running a plain
//! graph (wide enough to overflow the local deques) and a batch processor
//! with thousands of slices makes no heap allocation at all, on any thread;
//! nor does a steady world frame of query systems (issue 10), nor one with
//! pinned nodes and a non-`Send` service (issue 20).
//!
//! Its own test binary, for the counting global allocator. One test function,
//! so no other test allocates concurrently.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use sluice::exec::{
    BatchBuffer, BatchNode, BatchProcessor, CompiledGraph, ExecutionState, NodeContext,
    NodeFailure, NodeOutcome, SerialExecutor, ThreadPool,
};

#[path = "support/counting_alloc.rs"]
mod counting_alloc;

use counting_alloc::{Counting, Threads, allocations_during};

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Runs `frame` `warm_up` times (first-use registrations: thread-locals,
/// tracing call sites, epoch handles, buffers growing), waits until every
/// worker of `pools` is parked (thread start-up allocates), then runs it
/// `frames` times more counting allocations on every thread: there must be
/// none. `what` names the case.
fn assert_steady_frames_allocate_nothing(
    what: &str,
    pools: &[&ThreadPool],
    warm_up: usize,
    frames: usize,
    mut frame: impl FnMut(),
) {
    for _ in 0..warm_up {
        frame();
    }
    for pool in pools {
        while pool.stats().sleeping_workers + 1 < pool.num_threads() {
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
    }
    let allocations = allocations_during(Threads::Every, || (0..frames).for_each(|_| frame()));
    assert_eq!(
        allocations, 0,
        "{what}: {allocations} allocations in {frames} steady frames"
    );
}

/// [`assert_steady_frames_allocate_nothing`] for a world: 5 warm-up
/// iterations, then 20 counted.
fn assert_steady_world_allocates_nothing(what: &str, world: &mut sluice::World) {
    let pool = world.pool().clone();
    assert_steady_frames_allocate_nothing(what, &[&pool], 5, 20, || {
        world.run_iteration().unwrap();
    });
}

/// Sums `x * 1.5` per slice into an atomic total.
struct Scale {
    total: AtomicU64,
    slices: AtomicUsize,
}

impl BatchProcessor for Scale {
    type Buffer = Vec<u32>;
    type Item = u32;
    const BATCH_SIZE: usize = 32;

    fn items(buffer: &Vec<u32>) -> &[u32] {
        buffer
    }

    fn process_batch(&self, _start: usize, batch: &[u32]) {
        let sum: u64 = batch.iter().map(|&x| u64::from(x) * 3 / 2).sum();
        self.total.fetch_add(sum, Ordering::Relaxed);
        self.slices.fetch_add(1, Ordering::Relaxed);
    }

    fn after_update(&mut self, _buffer: &mut Vec<u32>) {
        // Keep the items: the next tick processes them again.
    }
}

/// A graph that overflows a local deque (200 successors of node 0), has a
/// chain, and a batch node (index 1) between a writer and a reader.
fn graph() -> CompiledGraph {
    let mut edges = vec![(0, 1), (1, 2)];
    for i in 3..203 {
        edges.push((0, i));
        edges.push((i, 203));
    }
    for i in 203..260 {
        edges.push((i, i + 1));
    }
    CompiledGraph::from_edges(261, &edges).unwrap()
}

/// The executor under test.
#[derive(Clone, Copy)]
enum Exec<'a> {
    Pool(&'a ThreadPool),
    Serial(&'a SerialExecutor),
}

impl Exec<'_> {
    fn run<'scope, F>(
        self,
        graph: &CompiledGraph,
        state: &mut ExecutionState,
        body: F,
    ) -> Result<(), NodeFailure>
    where
        F: Fn(&NodeContext<'scope>) -> NodeOutcome + Sync,
    {
        match self {
            Exec::Pool(pool) => pool.run(graph, state, body),
            Exec::Serial(serial) => serial.run(graph, state, body),
        }
    }
}

fn tick(
    exec: Exec<'_>,
    graph: &CompiledGraph,
    state: &mut ExecutionState,
    batch: &BatchNode<Scale>,
    buffer: &BatchBuffer<Vec<u32>>,
    plain_runs: &AtomicUsize,
) {
    exec.run(graph, state, |cx| {
        if cx.node() == 1 {
            batch.schedule(cx, buffer)
        } else {
            plain_runs.fetch_add(1, Ordering::Relaxed);
            NodeOutcome::Done
        }
    })
    .unwrap();
}

#[test]
fn ticks_allocate_nothing() {
    let graph = graph();
    let items = 100_000u32;
    // 100_000 / 32 = 3125 slices per tick.
    let expected_sum: u64 = (0..items).map(|x| u64::from(x) * 3 / 2).sum();
    let pools: Vec<ThreadPool> = [1, 2, 4].map(|t| ThreadPool::new(t).unwrap()).into();
    let serial = SerialExecutor::new();
    for (name, exec) in [
        ("1 thread", Exec::Pool(&pools[0])),
        ("2 threads", Exec::Pool(&pools[1])),
        ("4 threads", Exec::Pool(&pools[2])),
        ("serial", Exec::Serial(&serial)),
    ] {
        for timing in [false, true] {
            let mut state = ExecutionState::new(&graph);
            state.enable_timing(timing);
            let mut batch = BatchNode::new(Scale {
                total: AtomicU64::new(0),
                slices: AtomicUsize::new(0),
            });
            let buffer = BatchBuffer::new((0..items).collect::<Vec<u32>>());
            let plain_runs = AtomicUsize::new(0);
            let ticks = 50;
            assert_steady_frames_allocate_nothing(
                &format!("{name}, timing {timing}"),
                &pools.iter().collect::<Vec<_>>(),
                3,
                ticks,
                || tick(exec, &graph, &mut state, &batch, &buffer, &plain_runs),
            );
            assert_eq!(plain_runs.load(Ordering::Relaxed), (ticks + 3) * 260);
            let scale = batch.processor_mut();
            assert_eq!(
                scale.total.load(Ordering::Relaxed),
                expected_sum * (ticks as u64 + 3)
            );
            assert_eq!(scale.slices.load(Ordering::Relaxed), 3125 * (ticks + 3));
        }
    }
    // In the same test function: nothing else allocates meanwhile.
    query_frames_allocate_nothing();
    init_scratch_frames_allocate_nothing();
    script_ticks_allocate_nothing();
    spike_watch_frames_allocate_nothing();
    pinned_frames_allocate_nothing(&pools);
    append_frames_allocate_nothing();
}

/// Instances appended from whole nodes and from `par_for_each` slices
/// (which thread takes which slice, and so which of the buffer's shards
/// gets how many values, changes from frame to frame), committed by a
/// two-point node, on every executor at 1, 2 and 4 threads: no allocation
/// (the drain sorts in place into the buffer's own scratch list, the
/// boundary finds nothing left). The buffer is made with room for a whole
/// frame in every shard, as a game that knows its frame would; one thread
/// also starts from room for one value, and grows it in the warm-up (a
/// shard grows the first time its thread's pushes overflow it, which on a
/// pool is whenever that thread first takes a slice).
fn append_frames_allocate_nothing() {
    use sluice::{Append, AppendBuffer, ExecutorKind, IntoSystem, NodeBuilder, Query, World};
    struct Committed(u64);
    fn instanced(out: Append<'_, u64>) {
        out.push(1);
    }
    fn commit(buffer: &mut AppendBuffer<u64>, committed: &mut Committed) {
        committed.0 = buffer.drain().sum();
    }
    let frame = 4 * 2_000 + 1;
    let cases = [
        (ExecutorKind::Serial, 1, 1),
        (ExecutorKind::Serial, 2, 8 * frame),
        (ExecutorKind::Parallel, 1, 8 * frame),
        (ExecutorKind::Parallel, 2, 8 * frame),
        (ExecutorKind::Parallel, 4, 8 * frame),
        (ExecutorKind::Adaptive, 2, 8 * frame),
        (ExecutorKind::Adaptive, 4, 8 * frame),
    ];
    for (executor, threads, capacity) in cases {
        let mut world = World::with_pool(ThreadPool::new(threads).unwrap());
        world.set_executor(executor);
        world.insert(Committed(0));
        world.insert(AppendBuffer::<u64>::with_capacity(capacity));
        world.spawn_batch((0..2_000).map(|i| (Pos(i as f32),)));
        world.add_system(instanced.commit(commit));
        for node in 0..4u64 {
            world.add_system(NodeBuilder::new(format!("record{node}")).system(
                move |mut q: Query<&Pos>, out: Append<'_, u64>| {
                    q.par_for_each_sliced(64, |p| out.push(node + p.0 as u64));
                },
            ));
        }
        assert_steady_world_allocates_nothing(
            &format!("{executor:?} x{threads}, room for {capacity}, append frames"),
            &mut world,
        );
        let per_node: u64 = (0..2_000u64).sum();
        let expected = 1 + (0..4u64).map(|node| per_node + 2_000 * node).sum::<u64>();
        assert_eq!(world.get::<Committed>().unwrap().0, expected);
    }
}

#[derive(Debug, Clone, Copy)]
struct Pos(f32);
#[derive(Debug, Clone, Copy)]
struct Vel(f32);
#[derive(Debug, Clone, Copy)]
struct Tagged;

/// A steady world frame of query systems (data, filters, change ticks), a
/// `par_for_each`, a parallel query and messages sent and read on every
/// executor: no allocation once the plan and buffers are built.
fn query_frames_allocate_nothing() {
    use sluice::{Changed, ExecutorKind, NodeBuilder, Query, With, Without, World};
    for executor in [
        ExecutorKind::Serial,
        ExecutorKind::Parallel,
        ExecutorKind::Adaptive,
    ] {
        let mut world = World::with_pool(ThreadPool::new(2).unwrap());
        world.set_executor(executor);
        world.spawn_batch((0..1_000).map(|i| (Pos(i as f32), Vel(1.0))));
        world.spawn_batch((0..100).map(|i| (Pos(i as f32), Vel(2.0), Tagged)));
        world.add_system(
            NodeBuilder::new("move")
                .system(|mut q: Query<(&mut Pos, &Vel)>| q.for_each(|(mut p, v)| p.0 += v.0)),
        );
        world.add_system(
            NodeBuilder::new("damp")
                .system(|mut q: Query<&mut Vel, With<Tagged>>| q.for_each(|mut v| v.0 *= 0.5)),
        );
        world.add_system(NodeBuilder::new("spread").system(
            |mut q: Query<&mut Vel, Without<Tagged>>| {
                q.par_for_each_sliced(64, |mut v| v.0 += 0.25)
            },
        ));
        world.add_system(NodeBuilder::new("shout").system(
            |q: Query<&Pos, With<Tagged>>, shouts: sluice::Publish<u32>| {
                q.iter().for_each(|p| shouts.send(p.0 as u32));
            },
        ));
        world.add_system(
            NodeBuilder::new("hear").system(|mut shouts: sluice::Subscribe<u32>| {
                assert_eq!(shouts.unread().count(), 100);
            }),
        );
        world.add_system(
            NodeBuilder::new("watch").system(|q: Query<&Pos, Changed<Pos>>| {
                assert!(q.iter().count() <= 1_100);
            }),
        );
        assert_steady_world_allocates_nothing(&format!("{executor:?}, query frames"), &mut world);
    }
}

/// Scratch lists for `par_for_each_init`, stocked before the frames.
struct ScratchLists(sluice_collections::Pool<Vec<f32>>);

/// A steady frame of a `par_for_each_init` system whose per-thread state is
/// a scratch list taken from a pool (and given back when the thread's run
/// ends), on every executor at 1, 2 and 4 threads: no allocation, neither
/// by the runners nor by the state they make once per thread.
fn init_scratch_frames_allocate_nothing() {
    use sluice::{ExecutorKind, NodeBuilder, Query, World};
    for executor in [
        ExecutorKind::Serial,
        ExecutorKind::Parallel,
        ExecutorKind::Adaptive,
    ] {
        for threads in [1, 2, 4] {
            let mut world = World::with_pool(ThreadPool::new(threads).unwrap());
            world.set_executor(executor);
            let lists = sluice_collections::Pool::new(8);
            for _ in 0..8 {
                lists.give_back(Vec::with_capacity(4));
            }
            world.insert(ScratchLists(lists));
            world.spawn_batch((0..2_000).map(|i| (Pos(i as f32), Vel(1.0))));
            world.add_system(NodeBuilder::new("scratch").system(
                |mut q: Query<(&Pos, &mut Vel)>, lists: &ScratchLists| {
                    q.par_for_each_init_sliced(
                        16,
                        || lists.0.take(),
                        |list, (pos, mut vel)| {
                            list.clear();
                            list.extend([pos.0, vel.0, 1.0]);
                            vel.0 = list[1] + list[2] - 1.0;
                        },
                    );
                },
            ));
            assert_steady_world_allocates_nothing(
                &format!("{executor:?}, {threads} threads, init scratch"),
                &mut world,
            );
            assert_eq!(
                world.get::<ScratchLists>().unwrap().0.idle(),
                8,
                "lists back"
            );
        }
    }
}

/// Scripts of the waves kind see the tick count and emit a number.
struct Waves;

impl sluice::script::ScriptKind for Waves {
    type View<'v> = u64;
    type Intent = u64;
}

/// A steady update of 2,000 durable scripts (timers, ticks, conditions;
/// 1,000 of them due per tick) gathered on the pool and collected: no
/// allocation once every buffer has grown.
fn script_ticks_allocate_nothing() {
    use sluice::script::{Scripts, SimClock};
    use sluice::{ExecutorKind, NodeBuilder, World};
    use std::time::Duration;
    #[derive(Default)]
    struct Total(u64);
    for executor in [ExecutorKind::Serial, ExecutorKind::Adaptive] {
        let mut world = World::with_pool(ThreadPool::new(2).unwrap());
        world.set_executor(executor);
        world.insert(SimClock::new());
        world.insert(Total::default());
        let mut scripts = Scripts::<Waves>::new();
        for who in 0..2_000u64 {
            scripts.start("script", move |cx| async move {
                loop {
                    match who % 3 {
                        0 => cx.wait(Duration::from_millis(20)).await,
                        1 => cx.next_tick().await,
                        _ => {
                            cx.next_tick().await;
                            cx.wait_until(move |tick| (tick + who) % 2 == 0).await;
                        }
                    }
                    cx.emit(who);
                }
            });
        }
        world.insert(scripts);
        world.add_system(NodeBuilder::new("gather").system(
            |scripts: &mut Scripts<Waves>, clock: &SimClock, total: &Total| {
                scripts.gather(clock, &total.0);
            },
        ));
        world.add_system(NodeBuilder::new("collect").system(
            |scripts: &mut Scripts<Waves>, total: &mut Total| {
                total.0 += scripts.drain_intents().map(|(_, who)| who % 2).sum::<u64>();
            },
        ));
        for _ in 0..10 {
            world.update(Duration::from_millis(10)).unwrap();
        }
        let before = world.get::<Total>().unwrap().0;
        let pool = world.pool().clone();
        assert_steady_frames_allocate_nothing(
            &format!("{executor:?}, script ticks"),
            &[&pool],
            0,
            20,
            || world.update(Duration::from_millis(10)).unwrap(),
        );
        assert!(world.get::<Total>().unwrap().0 > before, "scripts ran");
    }
}

/// The spike watch on (issue 20): judging every node after each run,
/// reporting spikes (a node sleeps every fifth frame) and dropping the
/// oldest kept one make no allocation, on every executor.
fn spike_watch_frames_allocate_nothing() {
    use sluice::{ExecutorKind, NodeBuilder, Query, SpikeWatch, World};
    use std::time::Duration;
    struct Frame(u64);
    for executor in [
        ExecutorKind::Serial,
        ExecutorKind::Parallel,
        ExecutorKind::Adaptive,
    ] {
        let mut world = World::with_pool(ThreadPool::new(2).unwrap());
        world.set_executor(executor);
        world.insert(Frame(0));
        world.spawn_batch((0..200).map(|i| (Pos(i as f32), Vel(1.0))));
        world.add_system(
            NodeBuilder::new("move")
                .system(|mut q: Query<(&mut Pos, &Vel)>| q.for_each(|(mut p, v)| p.0 += v.0)),
        );
        for i in 0..40 {
            world.add_system(NodeBuilder::new(format!("idle {i}")).system(|| {}));
        }
        world.add_system(NodeBuilder::new("present").spike_exempt().system(|| {}));
        world.add_system(NodeBuilder::new("sometimes slow").system(|frame: &Frame| {
            if frame.0 % 5 == 4 {
                std::thread::sleep(Duration::from_millis(5));
            }
        }));
        world
            .set_spike_watch(Some(SpikeWatch {
                window: 4,
                ratio: 2.0,
                min: Duration::from_millis(1),
                keep: 2,
            }))
            .unwrap();
        let mut frame = 0;
        let mut run = |world: &mut World| {
            world.get_mut::<Frame>().unwrap().0 = frame;
            frame += 1;
            world.run_iteration().unwrap();
        };
        // Warm-up, a reported spike included (its `tracing` call site).
        (0..10).for_each(|_| run(&mut world));
        assert!(world.spikes_total() >= 1, "{executor:?}: warmed up");
        let before = world.spikes_total();
        let pool = world.pool().clone();
        assert_steady_frames_allocate_nothing(
            &format!("{executor:?}, watched frames"),
            &[&pool],
            0,
            20,
            || run(&mut world),
        );
        assert!(
            world.spikes_total() > before,
            "{executor:?}: spikes reported"
        );
        assert!(world.spikes().len() <= 2);
    }
}

/// Pinned nodes (issue 20): the graph of [`ticks_allocate_nothing`] with
/// every seventh node pinned, on pools of 2 and 4 threads (pinned nodes
/// released by workers go through the pinned queue), and a steady world
/// frame with a non-`Send` service reached by a `NonSendMut` system and an
/// explicitly pinned node beside unpinned query systems, on every
/// executor: no allocation.
fn pinned_frames_allocate_nothing(pools: &[ThreadPool]) {
    use sluice::{ExecutorKind, NodeBuilder, NonSendMut, Query, World};
    use std::cell::Cell;
    use std::rc::Rc;
    let caller = std::thread::current().id();
    let graph = graph()
        .with_pinned((0..261).filter(|n| n % 7 == 3))
        .unwrap();
    for pool in &pools[1..] {
        let mut state = ExecutionState::new(&graph);
        let off_caller = AtomicUsize::new(0);
        let frame = |state: &mut ExecutionState| {
            pool.run(&graph, state, |cx| {
                if graph.is_pinned(cx.node()) && std::thread::current().id() != caller {
                    off_caller.fetch_add(1, Ordering::Relaxed);
                }
                NodeOutcome::Done
            })
            .unwrap();
        };
        assert_steady_frames_allocate_nothing(
            &format!("{} threads, pinned ticks", pool.num_threads()),
            &[pool],
            3,
            50,
            || frame(&mut state),
        );
        assert_eq!(
            off_caller.load(Ordering::Relaxed),
            0,
            "pinned on the caller"
        );
    }
    struct Window(Rc<Cell<u64>>);
    for executor in [
        ExecutorKind::Serial,
        ExecutorKind::Parallel,
        ExecutorKind::Adaptive,
    ] {
        let mut world = World::with_pool(ThreadPool::new(2).unwrap());
        world.set_executor(executor);
        let presented = Rc::new(Cell::new(0));
        world.insert_non_send(Window(Rc::clone(&presented)));
        world.spawn_batch((0..500).map(|i| (Pos(i as f32), Vel(1.0))));
        for i in 0..8 {
            world.add_system(
                NodeBuilder::new(format!("move {i}"))
                    .system(|q: Query<(&Pos, &Vel)>| assert!(q.iter().count() == 500)),
            );
        }
        world.add_system(
            NodeBuilder::new("present")
                .system(|window: NonSendMut<Window>| window.0.set(window.0.get() + 1)),
        );
        world.add_system(
            NodeBuilder::new("audio")
                .pinned()
                .after("present")
                .system(|mut q: Query<&mut Pos>| q.for_each(|mut p| p.0 += 1.0)),
        );
        assert_steady_world_allocates_nothing(&format!("{executor:?}, pinned frames"), &mut world);
        assert_eq!(presented.get(), 5 + 20);
    }
}

//! A rollback buffer allocates nothing once warm (issue 39): saving frame
//! after frame of a world whose shape does not grow (its archetypes and
//! their row counts, its services, its script stores' scripts) reuses the
//! memory of the slot each save overwrites, and [`World::snapshot_into`]
//! reuses its snapshot's.
//!
//! Its own test binary, for the counting global allocator. One test
//! function, so no other test allocates concurrently.

use sluice::script::{ScriptKind, Scripts, SimClock, Step, StepScript, Wait};
use sluice::{Entity, RollbackBuffer, Snapshot, World};

#[path = "support/counting_alloc.rs"]
mod counting_alloc;

use counting_alloc::{Counting, Threads, traced_allocations_during};

#[global_allocator]
static GLOBAL: Counting = Counting;

#[derive(Clone, Copy, Debug, PartialEq)]
struct Pos(f32, f32);

#[derive(Clone, Copy, Debug, PartialEq)]
struct Vel(f32, f32);

#[derive(Debug, PartialEq)]
struct Scores(Vec<u32>);

/// By hand: `#[derive(Clone)]` writes no `clone_from`, and its default
/// allocates a new value.
impl Clone for Scores {
    fn clone(&self) -> Self {
        Scores(self.0.clone())
    }

    fn clone_from(&mut self, source: &Self) {
        self.0.clone_from(&source.0);
    }
}

/// Step scripts in a store the world snapshots.
struct Patrols;

impl ScriptKind for Patrols {
    type View<'v> = ();
    type Intent = u32;
}

/// A patrol counting its rounds, one a tick, and every third tick waiting
/// on time instead.
#[derive(Clone, Copy)]
struct Patrol {
    rounds: u32,
}

impl StepScript<Patrols> for Patrol {
    fn step(&mut self, cx: &mut Step<'_, '_, Patrols>) -> Wait<Patrols> {
        self.rounds += 1;
        cx.emit(self.rounds);
        if self.rounds.is_multiple_of(3) {
            Wait::For(std::time::Duration::from_millis(1))
        } else {
            Wait::NextTick
        }
    }
}

#[test]
fn saving_frames_once_warm_allocates_nothing() {
    let count = if cfg!(miri) { 50 } else { 5_000 };
    let mut world = World::new();
    world
        .snapshot_component::<Pos>()
        .snapshot_component::<Vel>()
        .snapshot_service::<Scores>();
    world.insert(Scores(vec![0; 64]));
    let mut patrols = Scripts::<Patrols>::new();
    for _ in 0..32 {
        patrols.start_step("patrol", Patrol { rounds: 0 });
    }
    world.insert_scripts(patrols);
    let mut clock = SimClock::new();
    let mut movers: Vec<Entity> = (0..count)
        .map(|i| world.spawn((Pos(i as f32, 0.0), Vel(1.0, 0.0))))
        .collect();
    for i in 0..count / 4 {
        world.spawn((Pos(i as f32, 1.0),));
    }
    // One frame of a steady game: every mover moves, one dies and one is
    // born (the shape stays the same), a score changes.
    let mut frame = |world: &mut World, n: usize| {
        for (mut pos, vel) in world.query::<(&mut Pos, &Vel)>().iter_mut() {
            pos.0 += vel.0;
        }
        let dead = movers.remove(n % movers.len());
        world.despawn(dead).unwrap();
        movers.push(world.spawn((Pos(0.0, 0.0), Vel(1.0, 0.0))));
        world.get_mut::<Scores>().unwrap().0[n % 64] += 1;
        clock.advance(std::time::Duration::from_millis(1));
        let patrols = world.get_mut::<Scripts<Patrols>>().unwrap();
        patrols.gather(&clock, &());
        assert!(patrols.drain_intents().len() > 0);
        // The boundary trims the removal records (kept two frames).
        world.run_iteration().unwrap();
    };
    let frames = 12;
    let mut buffer = RollbackBuffer::new(8);
    let mut snapshot = Snapshot::new();
    // Warm: every slot filled once.
    for n in 0..frames {
        frame(&mut world, n);
        buffer.save(n as i64, &world).unwrap();
        world.snapshot_into(&mut snapshot).unwrap();
    }
    // Each frame's own bookkeeping out of the count: only the saves, on
    // this thread (a snapshot runs on the caller's; the pool's workers
    // starting up allocate on theirs).
    let mut saves = 0;
    let mut traces = Vec::new();
    for n in frames..frames * 2 {
        frame(&mut world, n);
        let (count, traced) = traced_allocations_during(Threads::This, 1, || {
            buffer.save(n as i64, &world).unwrap();
            world.snapshot_into(&mut snapshot).unwrap();
        });
        saves += count;
        traces.extend(traced);
    }
    assert_eq!(
        saves, 0,
        "{saves} allocations in {frames} saves once warm: {traces:#?}"
    );
    // And what was saved is right.
    let kept = buffer.get(frames as i64 * 2 - 1).unwrap();
    assert_eq!(kept.entity_count(), world.entities().len());
    buffer.load(frames as i64 * 2 - 3, &mut world).unwrap();
    assert_eq!(world.entities().len(), snapshot.entity_count());
    assert!(snapshot.report().is_complete(), "the patrols are captured");
    assert_eq!(world.get::<Scripts<Patrols>>().unwrap().len(), 32);
}

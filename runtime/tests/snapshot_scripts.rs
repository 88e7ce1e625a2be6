//! Script stores in world snapshots (issue 39): a `Scripts<K>` opted in
//! ([`World::insert_scripts`], or made by `Commands::start_step_script`)
//! is captured by `World::snapshot` and put back by `World::restore`, so
//! the frames after a restore are the frames that followed the snapshot,
//! ids and slots included; on the serial executor and on a pool.

use std::cell::Cell;
use std::time::Duration;

use sluice::exec::ThreadPool;
use sluice::script::{ScriptId, ScriptKind, Scripts, SimClock, Step, StepScript, Wait, Waiting};
use sluice::{
    Commands, NodeBuilder, PartKind, RestoreError, RollbackBuffer, Snapshot, SnapshotError, World,
};

/// Town scripts: they see the gauge and ask for numbers to be logged.
struct Town;

impl ScriptKind for Town {
    type View<'v> = Gauge;
    type Intent = Cue;
}

/// What the scripts read: it rises by one every frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
struct Gauge(u32);

/// What a script asks for: a number to log, or a new script to start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Cue {
    Log(&'static str, u32),
    Hire(u32),
}

/// Every intent collect applied, with the script that asked.
#[derive(Debug, Default)]
struct Log(Vec<(ScriptId, Cue)>);

thread_local! {
    /// Set to make [`Bell`]'s `Clone` panic (on this test's thread: a
    /// snapshot and a restore clone on the caller's).
    static CLONE_PANICS: Cell<bool> = const { Cell::new(false) };
}

/// Rings every `period` of simulation time, `left` times, then hires a
/// helper and ends.
#[derive(Debug)]
struct Bell {
    period: Duration,
    left: u32,
}

impl Clone for Bell {
    fn clone(&self) -> Self {
        assert!(!CLONE_PANICS.get(), "a bell refuses to be copied");
        Self {
            period: self.period,
            left: self.left,
        }
    }
}

impl StepScript<Town> for Bell {
    fn step(&mut self, cx: &mut Step<'_, '_, Town>) -> Wait<Town> {
        if self.left == 0 {
            cx.emit(Cue::Hire(cx.view().0));
            return Wait::Done;
        }
        self.left -= 1;
        cx.emit(Cue::Log("bell", cx.view().0));
        Wait::For(self.period)
    }
}

/// Waits for the gauge to reach a multiple of 5, logs it, then waits a
/// tick so that it does not log the same value twice.
#[derive(Debug, Clone)]
struct Watch {
    seen: u32,
}

impl StepScript<Town> for Watch {
    fn step(&mut self, cx: &mut Step<'_, '_, Town>) -> Wait<Town> {
        let level = cx.view().0;
        if level.is_multiple_of(5) && level != self.seen {
            self.seen = level;
            cx.emit(Cue::Log("watch", level));
        }
        Wait::Until(|gauge| gauge.0.is_multiple_of(5))
    }
}

/// Logs every tick for `left` ticks (a helper hired by a bell).
#[derive(Debug, Clone)]
struct Helper {
    left: u32,
}

impl StepScript<Town> for Helper {
    fn step(&mut self, cx: &mut Step<'_, '_, Town>) -> Wait<Town> {
        if self.left == 0 {
            return Wait::Done;
        }
        self.left -= 1;
        cx.emit(Cue::Log("helper", self.left));
        Wait::NextTick
    }
}

const FRAME: Duration = Duration::from_millis(100);

/// Frames played after a snapshot (fewer under Miri; enough for a bell to
/// hire a helper either way).
const AFTER: usize = if cfg!(miri) { 16 } else { 40 };

/// A town: the gauge, the clock, three step scripts waiting on time, a
/// condition and the next tick, and the three systems (pump, gather,
/// collect, which hires helpers through `Commands`).
fn town(world: &mut World) {
    town_systems(world);
    let scripts = world.get_mut::<Scripts<Town>>().expect("the store");
    scripts.start_step(
        "fast bell",
        Bell {
            period: Duration::from_millis(300),
            left: 4,
        },
    );
    scripts.start_step("watch", Watch { seen: 0 });
    scripts.start_step(
        "slow bell",
        Bell {
            period: Duration::from_millis(700),
            left: 3,
        },
    );
    scripts.start_step("helper", Helper { left: 2 });
}

/// The town's services, opt-ins and systems, with an empty store.
fn town_systems(world: &mut World) {
    world.insert(SimClock::new());
    world.insert(Gauge(0));
    world.insert(Log::default());
    world.snapshot_service::<Gauge>();
    world.insert_scripts(Scripts::<Town>::new());
    world.add_system(NodeBuilder::new("pump").system(|gauge: &mut Gauge| gauge.0 += 1));
    world.add_system(NodeBuilder::new("gather").after("pump").system(
        |scripts: &mut Scripts<Town>, clock: &SimClock, gauge: &Gauge| {
            scripts.gather(clock, gauge);
        },
    ));
    world.add_system(NodeBuilder::new("collect").after("gather").system(
        |scripts: &mut Scripts<Town>, log: &mut Log, commands: Commands<'_>| {
            for (id, cue) in scripts.drain_intents() {
                if let Cue::Hire(at) = cue {
                    commands.start_step_script::<Town, _>("hired", Helper { left: at % 4 + 1 });
                }
                log.0.push((id, cue));
            }
        },
    ));
}

fn new_world(threads: usize) -> World {
    let mut world = if threads == 1 {
        World::new()
    } else {
        World::with_pool(ThreadPool::new(threads).expect("a pool"))
    };
    town(&mut world);
    world
}

/// A script as the store shows it: id (serial and slot), name, wait.
type ScriptRow = (ScriptId, String, Waiting);

/// The store's scripts as the world shows them, by id.
fn scripts_of(world: &World) -> Vec<ScriptRow> {
    let mut scripts: Vec<_> = world
        .get::<Scripts<Town>>()
        .expect("the store")
        .iter()
        .map(|info| (info.id, info.name.to_owned(), info.waiting))
        .collect();
    scripts.sort_by_key(|(id, _, _)| *id);
    scripts
}

/// Runs `frames` frames; what collect logged in them, and the scripts
/// after.
fn run(world: &mut World, frames: usize) -> (Vec<(ScriptId, Cue)>, Vec<ScriptRow>) {
    let from = world.get::<Log>().expect("the log").0.len();
    for _ in 0..frames {
        world.update(FRAME).expect("a frame");
    }
    let log = world.get::<Log>().expect("the log").0[from..].to_vec();
    (log, scripts_of(world))
}

fn truncate_log(world: &mut World, len: usize) {
    world.get_mut::<Log>().expect("the log").0.truncate(len);
}

/// Snapshot, run N frames, restore, run N frames again: the same intents
/// from the same script ids, the same scripts after; and back to the
/// snapshot the store is as it was.
fn replay(threads: usize) -> Vec<(ScriptId, Cue)> {
    let mut world = new_world(threads);
    run(&mut world, 4);
    let snapshot = world.snapshot().expect("a snapshot");
    assert!(
        snapshot
            .report()
            .entries()
            .iter()
            .all(|e| e.kind() != PartKind::Scripts),
        "the step scripts' store is captured: {:?}",
        snapshot.report().entries()
    );
    let at_snapshot = scripts_of(&world);
    let log_len = world.get::<Log>().unwrap().0.len();
    let first = run(&mut world, AFTER);
    assert!(
        first.0.iter().any(|(_, cue)| matches!(cue, Cue::Hire(_))),
        "the frames hire helpers (scripts started after the snapshot)"
    );
    world.restore(&snapshot).expect("a restore");
    assert_eq!(
        scripts_of(&world),
        at_snapshot,
        "ids, slots and waits as they were"
    );
    truncate_log(&mut world, log_len);
    let second = run(&mut world, AFTER);
    assert_eq!(
        first, second,
        "the frames after the restore ({threads} threads)"
    );
    // Again, from the same snapshot.
    world.restore(&snapshot).expect("a second restore");
    truncate_log(&mut world, log_len);
    assert_eq!(run(&mut world, AFTER), first);
    first.0
}

#[test]
fn restored_scripts_replay_the_frames_that_followed_on_every_executor() {
    let serial = replay(1);
    let pool = replay(2);
    assert_eq!(serial, pool, "the serial executor and a pool of 2 agree");
    let names: Vec<_> = serial
        .iter()
        .filter_map(|(_, cue)| match cue {
            Cue::Log(name, _) => Some(*name),
            Cue::Hire(_) => None,
        })
        .collect();
    for name in ["bell", "watch", "helper"] {
        assert!(names.contains(&name), "{name} logged: {names:?}");
    }
}

#[test]
fn a_rollback_buffer_rolls_scripts_back_frame_by_frame() {
    for threads in [1, 3] {
        let mut world = new_world(threads);
        let mut buffer = RollbackBuffer::new(8);
        let mut logs = Vec::new();
        for frame in 0..30 {
            buffer.save(frame, &world).expect("a save");
            logs.push(world.get::<Log>().unwrap().0.len());
            world.update(FRAME).expect("a frame");
        }
        let ahead = run(&mut world, 5);
        let full = world.get::<Log>().unwrap().0.clone();
        // Back 8 frames, and played forward again: the same log.
        buffer.load(22, &mut world).expect("a load");
        truncate_log(&mut world, logs[22]);
        run(&mut world, 8);
        assert_eq!(
            world.get::<Log>().unwrap().0,
            full[..full.len() - ahead.0.len()]
        );
        assert_eq!(run(&mut world, 5), ahead, "{threads} threads");
    }
}

/// An `async` script's state is not data: the store is left out, named.
#[test]
fn an_async_script_leaves_its_store_out_and_strict_refuses() {
    let mut world = new_world(1);
    world
        .get_mut::<Scripts<Town>>()
        .unwrap()
        .start("dreamer", |cx| async move {
            loop {
                cx.next_tick().await;
            }
        });
    let snapshot = world.snapshot().expect("a snapshot");
    let left_out: Vec<_> = snapshot
        .report()
        .entries()
        .iter()
        .filter(|entry| entry.kind() == PartKind::Scripts)
        .map(|entry| entry.name().to_owned())
        .collect();
    assert_eq!(left_out, [std::any::type_name::<Scripts<Town>>()]);
    // A restore leaves a store it did not capture as it is.
    run(&mut world, 3);
    let now = scripts_of(&world);
    world.restore(&snapshot).expect("a restore");
    assert_eq!(scripts_of(&world), now);
    world.set_snapshot_strict(true);
    match world.snapshot() {
        Err(SnapshotError::LeftOut { names }) => assert!(
            names.iter().any(|name| name.starts_with("scripts ")
                && name.contains("Scripts<snapshot_scripts::Town>")),
            "{names:?}"
        ),
        other => panic!("strict refuses: {other:?}"),
    }
}

/// A store inserted as a plain service is not opted in: named as a
/// script store left out; `snapshot_scripts` opts it in.
#[test]
fn a_store_inserted_as_a_plain_service_is_reported_until_opted_in() {
    let mut world = World::new();
    let mut scripts = Scripts::<Town>::new();
    scripts.start_step("helper", Helper { left: 1 });
    world.insert(scripts);
    let snapshot = world.snapshot().unwrap();
    let entries = snapshot.report().entries();
    assert!(
        entries
            .iter()
            .any(|e| e.kind() == PartKind::Scripts && e.name().contains("Scripts<")),
        "{entries:?}"
    );
    world.snapshot_scripts::<Town>();
    assert!(world.snapshot().unwrap().report().is_complete());
}

/// Intents gathered and not yet collected are not data a snapshot can
/// clone: the store is left out until collect drains them.
#[test]
fn undrained_intents_leave_the_store_out() {
    let mut world = World::new();
    world.insert(SimClock::new());
    let mut scripts = Scripts::<Town>::new();
    scripts.start_step("helper", Helper { left: 3 });
    world.insert_scripts(scripts);
    let clock = SimClock::new();
    world
        .get_mut::<Scripts<Town>>()
        .unwrap()
        .gather(&clock, &Gauge(0));
    let kinds: Vec<_> = world
        .snapshot()
        .unwrap()
        .report()
        .entries()
        .iter()
        .map(|e| e.kind())
        .collect();
    assert_eq!(kinds, [PartKind::Scripts]);
    assert_eq!(
        world
            .get_mut::<Scripts<Town>>()
            .unwrap()
            .drain_intents()
            .len(),
        1
    );
    assert!(world.snapshot().unwrap().report().is_complete());
}

/// Into another world: defined. A world whose store is fresh takes the
/// scripts with their ids and plays the same frames; a world that does
/// not snapshot the store refuses, unchanged.
#[test]
fn restore_into_another_world_is_defined_or_refused() {
    let mut world = new_world(1);
    run(&mut world, 6);
    let snapshot = world.snapshot().unwrap();
    let at_snapshot = scripts_of(&world);
    let ahead = run(&mut world, 30);

    let mut other = World::new();
    town_systems(&mut other);
    other
        .restore(&snapshot)
        .expect("a restore into another world");
    assert_eq!(
        scripts_of(&other),
        at_snapshot,
        "a fresh store keeps the ids"
    );
    assert_eq!(run(&mut other, 30), ahead);

    let mut refusing = World::new();
    refusing.snapshot_service::<Gauge>();
    refusing.insert(Gauge(7));
    match refusing.restore(&snapshot) {
        Err(RestoreError::NotOptedIn { what }) => {
            assert!(
                what.starts_with("scripts ") && what.contains("Scripts<"),
                "{what}"
            );
        }
        other => panic!("refused: {other:?}"),
    }
    assert_eq!(refusing.get::<Gauge>(), Some(&Gauge(7)), "unchanged");
    assert!(refusing.get::<Scripts<Town>>().is_none());
}

/// A store opted in but absent at the snapshot is taken out by the
/// restore, as an opted-in service is.
#[test]
fn a_store_absent_at_the_snapshot_is_taken_out() {
    let mut world = World::new();
    world.snapshot_scripts::<Town>();
    let snapshot = world.snapshot().unwrap();
    world.insert(Scripts::<Town>::new());
    world.restore(&snapshot).unwrap();
    assert!(world.get::<Scripts<Town>>().is_none());
}

/// A step script whose `Clone` panics, in the capture and in the restore:
/// the capture fails named and leaves its snapshot empty, the buffer
/// keeps its other frames; the restore fails named and changes nothing.
#[test]
fn a_panicking_clone_leaves_the_world_and_the_buffer_consistent() {
    let mut world = new_world(2);
    let mut control = new_world(2);
    run(&mut world, 3);
    run(&mut control, 3);
    let mut buffer = RollbackBuffer::new(4);
    buffer.save(3, &world).unwrap();
    let mut snapshot = Snapshot::new();
    world.snapshot_into(&mut snapshot).unwrap();

    CLONE_PANICS.set(true);
    let failed = world.snapshot_into(&mut snapshot);
    let failed_save = buffer.save(4, &world);
    CLONE_PANICS.set(false);
    for failed in [failed, failed_save] {
        match failed {
            Err(SnapshotError::Panicked { what }) => {
                assert!(what.contains("Scripts<snapshot_scripts::Town>"), "{what}");
            }
            other => panic!("the capture fails: {other:?}"),
        }
    }
    assert!(
        !snapshot.is_filled(),
        "a failed capture leaves the snapshot empty"
    );
    assert_eq!(world.restore(&snapshot), Err(RestoreError::Empty));
    assert!(buffer.get(4).is_none() && buffer.get(3).is_some());
    // The world went on as if nothing had been asked of it.
    assert_eq!(run(&mut world, 10), run(&mut control, 10));

    // Now a good snapshot, and a restore whose clone panics.
    world.snapshot_into(&mut snapshot).unwrap();
    run(&mut world, 5);
    run(&mut control, 5);
    let before = scripts_of(&world);
    CLONE_PANICS.set(true);
    let restored = world.restore(&snapshot);
    let loaded = buffer.load(3, &mut world);
    CLONE_PANICS.set(false);
    for restored in [restored, loaded] {
        match restored {
            Err(RestoreError::Panicked { what }) => {
                assert!(what.contains("Scripts<snapshot_scripts::Town>"), "{what}");
            }
            other => panic!("the restore fails: {other:?}"),
        }
    }
    assert_eq!(scripts_of(&world), before, "the store unchanged");
    assert_eq!(
        world.get::<Gauge>(),
        control.get::<Gauge>(),
        "the world unchanged"
    );
    assert_eq!(run(&mut world, 10), run(&mut control, 10));
    // And the buffer's frame still loads.
    buffer.load(3, &mut world).expect("the kept frame loads");
    assert_eq!(world.get::<Gauge>(), Some(&Gauge(3)));
}

/// A world's restore rewinds the store's ids (the frames after it hand
/// out the same ones); a `ScriptSnapshot` taken in the frames it undid
/// then restores with new ids, so no id names two scripts.
#[test]
fn a_script_snapshot_from_the_frames_undone_gets_new_ids() {
    let mut world = new_world(1);
    let snapshot = world.snapshot().unwrap();
    let (first, _) = run(&mut world, 20);
    let future = world.get::<Scripts<Town>>().unwrap().snapshot().unwrap();
    let future_ids: Vec<ScriptId> = future.scripts().map(|(id, _, _)| id).collect();
    assert!(!future_ids.is_empty());
    world.restore(&snapshot).unwrap();
    truncate_log(&mut world, 0);
    let (second, _) = run(&mut world, 20);
    assert_eq!(first, second, "the same ids handed out again");
    let handed_out: Vec<ScriptId> = second.iter().map(|(id, _)| *id).collect();
    world.get_mut::<Scripts<Town>>().unwrap().restore(&future);
    let restored: Vec<ScriptId> = scripts_of(&world).iter().map(|(id, _, _)| *id).collect();
    assert_eq!(restored.len(), future_ids.len());
    for id in &restored {
        assert!(
            !handed_out.contains(id),
            "{id} names a script of the replayed frames too"
        );
    }
}

thread_local! {
    /// Set to make [`Grumpy`]'s `Drop` panic.
    static DROP_PANICS: Cell<bool> = const { Cell::new(false) };
}

/// A script whose `Drop` panics while [`DROP_PANICS`] is set.
#[derive(Debug, Clone)]
struct Grumpy;

impl StepScript<Town> for Grumpy {
    fn step(&mut self, _cx: &mut Step<'_, '_, Town>) -> Wait<Town> {
        Wait::NextTick
    }
}

impl Drop for Grumpy {
    fn drop(&mut self) {
        if DROP_PANICS.get() {
            DROP_PANICS.set(false);
            panic!("grumpy will not go");
        }
    }
}

/// A script started after the snapshot whose `Drop` panics as the restore
/// takes it away: the restore finishes (the store as it was at the
/// snapshot) and the panic is the script's recorded failure; opting in
/// twice is one opt-in.
#[test]
fn a_panicking_drop_during_a_restore_is_the_scripts_failure() {
    let mut world = new_world(1);
    world.snapshot_scripts::<Town>().snapshot_scripts::<Town>();
    run(&mut world, 2);
    let snapshot = world.snapshot().unwrap();
    let at_snapshot = scripts_of(&world);
    let grumpy = world
        .get_mut::<Scripts<Town>>()
        .unwrap()
        .start_step("grumpy", Grumpy);
    run(&mut world, 2);
    DROP_PANICS.set(true);
    world.restore(&snapshot).expect("the restore finishes");
    assert!(!DROP_PANICS.get(), "the drop ran");
    let store = world.get::<Scripts<Town>>().unwrap();
    assert_eq!(scripts_of(&world), at_snapshot);
    let failure = store.failures().last().expect("the failure is recorded");
    assert_eq!(failure.id, grumpy);
    assert!(failure.message.contains("grumpy will not go"), "{failure}");
    assert_eq!(
        world.snapshot().unwrap().report().entries().len(),
        1,
        "one entry, the log: {:?}",
        world.snapshot().unwrap().report().entries()
    );
}

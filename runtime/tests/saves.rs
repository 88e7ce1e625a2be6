//! Saves (issue 19): a save is the world's clock
//! ([`World::clock_snapshot`]) and a store's step scripts
//! ([`Scripts::snapshot`]), taken between updates. Loading it, into the
//! same world after playing on, twice, or into a fresh world at 60 Hz
//! fixed with 16 ms updates, gives the run that continued from the save,
//! intent for intent. Ids are never reused across a restore. And time
//! saturates: an update of any length never panics.

use std::time::Duration;

use sluice::exec::ThreadPool;
use sluice::script::{ScriptId, ScriptKind, ScriptSnapshot, Scripts, SimClock, Step, StepScript};
use sluice::script::{Wait, Waiting};
use sluice::{ClockSnapshot, FixedTime, FrameTime, NodeBuilder, World};

const FRAME: Duration = Duration::from_millis(16);
const SCRIPTS: u32 = if cfg!(miri) { 16 } else { 10_000 };
/// Frames played before the save, and from the save on (about 1 s).
const BEFORE_SAVE: usize = 5;
const AFTER_SAVE: usize = if cfg!(miri) { 8 } else { 62 };
/// Waits per script: long enough that most are still waiting at the save
/// and many still live a second later.
const ROUNDS: u32 = 24;

/// Scripts see a level and report what woke them.
struct Game;

impl ScriptKind for Game {
    type View<'v> = &'v Level;
    type Intent = Woke;
}

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct Level(u32);

/// The game's frame number, restored with a save like any game state.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct Frame(u64);

/// What woke a script, and when (times in µs): a change in timing shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Woke {
    who: u32,
    round: u32,
    after: Shape,
    now_us: u128,
    fixed_us: u128,
    level: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    Start,
    Time,
    Fixed,
    Tick,
    Until,
}

/// Every intent collect applied: (frame, script, intent).
#[derive(Debug, Default)]
struct Applied(Vec<(u64, ScriptId, Woke)>);

/// A step script that cycles through every kind of wait.
#[derive(Debug, Clone)]
struct Mixed {
    who: u32,
    round: u32,
    after: Shape,
}

impl Mixed {
    fn new(who: u32) -> Self {
        Self {
            who,
            round: 0,
            after: Shape::Start,
        }
    }
}

impl StepScript<Game> for Mixed {
    fn step(&mut self, cx: &mut Step<'_, '_, Game>) -> Wait<Game> {
        cx.emit(Woke {
            who: self.who,
            round: self.round,
            after: self.after,
            now_us: cx.now().as_micros(),
            fixed_us: cx.fixed_now().as_micros(),
            level: cx.view().0,
        });
        self.round += 1;
        // A tenth end early, before the save, leaving free slots whose
        // reuse order the save must keep.
        let rounds = if self.who.is_multiple_of(10) {
            1 + self.who % 4
        } else {
            ROUNDS
        };
        if self.round > rounds {
            return Wait::Done;
        }
        let ms = |n: u32| Duration::from_millis(u64::from(n));
        let (shape, wait): (Shape, Wait<Game>) = match (self.who + self.round) % 4 {
            0 => (Shape::Time, Wait::For(ms(10 + self.who % 13 * 7))),
            1 => (Shape::Fixed, Wait::ForFixed(ms(16 + self.who % 5 * 9))),
            2 => (Shape::Tick, Wait::NextTick),
            _ if self.who.is_multiple_of(2) => {
                (Shape::Until, Wait::Until(|level| level.0 % 3 == 0))
            }
            _ => (Shape::Until, Wait::Until(|level| level.0 % 7 == 1)),
        };
        self.after = shape;
        wait
    }
}

/// A world at 60 Hz fixed (the default step) that gathers and collects.
fn world() -> World {
    let mut world = World::with_pool(ThreadPool::new(2).expect("pool"));
    world.insert(SimClock::new());
    world.insert(Level(0));
    world.insert(Frame(0));
    world.insert(Applied::default());
    world.insert(Scripts::<Game>::new());
    world.add_system(NodeBuilder::new("gather").system(
        |scripts: &mut Scripts<Game>, clock: &SimClock, level: &Level| {
            scripts.gather(clock, &level);
        },
    ));
    world.add_system(NodeBuilder::new("collect").system(
        |scripts: &mut Scripts<Game>,
         applied: &mut Applied,
         level: &mut Level,
         frame: &mut Frame| {
            for (id, woke) in scripts.drain_intents() {
                applied.0.push((frame.0, id, woke));
                level.0 = (level.0 + woke.who + woke.round) % 97;
            }
            frame.0 += 1;
        },
    ));
    world
}

fn scripts(world: &mut World) -> &mut Scripts<Game> {
    world.get_mut::<Scripts<Game>>().expect("a store")
}

fn start(world: &mut World, count: u32) {
    let scripts = scripts(world);
    for who in 0..count {
        scripts.start_step(format!("mixed {who}"), Mixed::new(who));
    }
}

/// A game's save: the world's clock, the scripts, the game's own state.
struct Save {
    clock: ClockSnapshot,
    scripts: ScriptSnapshot<Game>,
    level: Level,
    frame: Frame,
}

fn save(world: &mut World) -> Save {
    Save {
        clock: world.clock_snapshot(),
        scripts: scripts(world).snapshot().expect("step scripts only"),
        level: *world.get::<Level>().expect("a level"),
        frame: *world.get::<Frame>().expect("a frame"),
    }
}

fn load(world: &mut World, save: &Save) {
    world.restore_clock(&save.clock);
    scripts(world).restore(&save.scripts);
    world.insert(save.level);
    world.insert(save.frame);
}

/// Plays `frames` updates of 16 ms; returns the intents they applied.
fn play(world: &mut World, frames: usize) -> Vec<(u64, ScriptId, Woke)> {
    for _ in 0..frames {
        world.update(FRAME).expect("the update runs");
    }
    std::mem::take(&mut world.get_mut::<Applied>().expect("applied").0)
}

/// Asserts two runs are the same, intent for intent, naming the first
/// difference (the runs are too long to print whole).
fn assert_same_run(got: &[(u64, ScriptId, Woke)], want: &[(u64, ScriptId, Woke)], what: &str) {
    if let Some(at) = (0..got.len().min(want.len())).find(|&at| got[at] != want[at]) {
        panic!(
            "{what}: intent {at} differs: got {:?}, the continued run had {:?}",
            got[at], want[at]
        );
    }
    assert_eq!(
        got.len(),
        want.len(),
        "{what}: {} intents, the continued run had {}",
        got.len(),
        want.len()
    );
}

/// Every kind of wait fired after the save, so the comparison covers them.
fn assert_covers_every_wait(run: &[(u64, ScriptId, Woke)]) {
    for shape in [Shape::Time, Shape::Fixed, Shape::Tick, Shape::Until] {
        assert!(
            run.iter().any(|(.., woke)| woke.after == shape),
            "no script woke after a {shape:?} wait"
        );
    }
}

/// Finding 6: a save loaded after playing on in the same world, whose
/// timer wheel had moved on, gives the continued run (the waits on time
/// fire at their saved deadlines, not a second late).
#[test]
fn a_save_loaded_in_the_same_world_after_playing_on() {
    let mut world = world();
    start(&mut world, SCRIPTS);
    play(&mut world, BEFORE_SAVE);
    let save = save(&mut world);
    let continued = play(&mut world, AFTER_SAVE);
    assert_covers_every_wait(&continued);
    load(&mut world, &save);
    let loaded = play(&mut world, AFTER_SAVE);
    assert_same_run(&loaded, &continued, "loaded after playing on");
}

/// A save loaded twice in the same world gives the same run both times,
/// and each is the continued run.
#[test]
fn a_save_loaded_twice() {
    let mut world = world();
    start(&mut world, SCRIPTS);
    play(&mut world, BEFORE_SAVE);
    let save = save(&mut world);
    let continued = play(&mut world, AFTER_SAVE);
    for time in ["first", "second"] {
        load(&mut world, &save);
        let loaded = play(&mut world, AFTER_SAVE);
        assert_same_run(&loaded, &continued, &format!("{time} load"));
    }
}

/// Plays on from a save, starting a few more scripts at once and again
/// halfway (they take the ids and slots the saved store would have handed
/// out: the first ones its free slots, in its reuse order).
fn play_on(world: &mut World) -> Vec<(u64, ScriptId, Woke)> {
    let late = |world: &mut World, from: u32| {
        let scripts = scripts(world);
        for who in from..from + 5 {
            scripts.start_step(format!("late {who}"), Mixed::new(who));
        }
    };
    late(world, SCRIPTS);
    let mut run = play(world, AFTER_SAVE / 2);
    late(world, SCRIPTS + 5);
    run.extend(play(world, AFTER_SAVE - AFTER_SAVE / 2));
    run
}

/// Finding 8: a save loaded into a fresh world (60 Hz fixed, 16 ms
/// updates) gives the continued run, waits on fixed time included, and
/// the same scripts live afterwards with the same ids, those started after
/// the save included.
#[test]
fn a_save_loaded_into_a_fresh_world() {
    let mut original = world();
    start(&mut original, SCRIPTS);
    play(&mut original, BEFORE_SAVE);
    let save = save(&mut original);
    let continued = play_on(&mut original);
    assert_covers_every_wait(&continued);
    assert!(continued.iter().any(|(.., woke)| woke.who >= SCRIPTS));

    let mut fresh = world();
    load(&mut fresh, &save);
    let loaded = play_on(&mut fresh);
    assert_same_run(&loaded, &continued, "loaded into a fresh world");
    let live = |world: &mut World| -> Vec<(ScriptId, Waiting)> {
        scripts(world)
            .iter()
            .map(|info| (info.id, info.waiting))
            .collect()
    };
    assert_eq!(live(&mut fresh), live(&mut original));
    assert_eq!(fresh.get::<FrameTime>(), original.get::<FrameTime>());
    assert_eq!(fresh.get::<FixedTime>(), original.get::<FixedTime>());
}

/// A save taken while the clock is paused and stepped by hand: the loaded
/// store runs one gather per step, as the saved one did (it saves the
/// steps its last gather saw, the clock saves its step count).
#[test]
fn a_save_taken_while_paused() {
    let mut world = world();
    start(&mut world, SCRIPTS);
    play(&mut world, BEFORE_SAVE);
    world.get_mut::<SimClock>().unwrap().pause();
    let stepped = |world: &mut World| {
        let mut run = Vec::new();
        for frame in 0..if cfg!(miri) { 6 } else { 12 } {
            // Not at once: the first gather after a load must not run.
            if frame % 3 == 1 {
                world.get_mut::<SimClock>().unwrap().step(FRAME);
            }
            run.extend(play(world, 1));
        }
        world.get_mut::<SimClock>().unwrap().resume();
        run.extend(play(world, 4));
        world.get_mut::<SimClock>().unwrap().pause();
        run
    };
    stepped(&mut world);
    let save = save(&mut world);
    let continued = stepped(&mut world);
    assert!(!continued.is_empty());
    load(&mut world, &save);
    let loaded = stepped(&mut world);
    assert_same_run(&loaded, &continued, "loaded while paused");
}

/// Finding 7: an id taken after a save and gone with its load reads as
/// gone, and no later id equals it; restored ids still name their scripts.
#[test]
fn ids_are_never_reused_across_a_restore() {
    let mut scripts = Scripts::<Game>::new();
    let a = scripts.start_step("a", Mixed::new(0));
    let snapshot = scripts.snapshot().unwrap();
    let b = scripts.start_step("cutscene", Mixed::new(1));
    scripts.restore(&snapshot);
    assert!(scripts.get(b).is_none(), "b went with the restore");
    let c = scripts.start_step("music", Mixed::new(2));
    assert_ne!(c, b);
    assert!(
        c.serial() > b.serial(),
        "fresh ids stay above every id handed out"
    );
    assert!(!scripts.cancel(b), "b names nothing");
    assert_eq!(scripts.get(c).map(|info| info.name), Some("music"));
    assert_eq!(scripts.get(a).map(|info| info.name), Some("a"));

    // Twice more: every id handed out is new.
    let mut seen = vec![a, b, c];
    for round in 0..2 {
        scripts.restore(&snapshot);
        for n in 0..3 {
            let id = scripts.start_step(format!("round {round} #{n}"), Mixed::new(n));
            assert!(!seen.contains(&id), "{id} was handed out before");
            seen.push(id);
        }
        for &old in &seen[1..seen.len() - 3] {
            assert!(scripts.get(old).is_none() && !scripts.cancel(old));
        }
    }
    assert!(scripts.cancel(a), "the restored a is a");

    // Another store's snapshot, restored into a store with ids of its own
    // in the same slots: those ids name nothing afterwards, and the
    // restored script, whose saved id this store had handed out, runs
    // under a new one.
    let mut other = Scripts::<Game>::new();
    let mine = other.start_step("mine", Mixed::new(3));
    other.cancel(mine);
    let mine_too = other.start_step("mine too", Mixed::new(4));
    other.restore(&snapshot);
    for old in [mine, mine_too] {
        assert!(other.get(old).is_none(), "{old} named another script");
        assert!(!other.cancel(old));
    }
    let restored: Vec<ScriptId> = other.iter().map(|info| info.id).collect();
    assert_eq!(restored.len(), 1);
    assert!(restored[0].serial() > mine_too.serial());
    assert_eq!(other.get(restored[0]).map(|info| info.name), Some("a"));
}

/// A fresh store takes a snapshot's ids as they are, every time it is
/// restored; two stores that went separate ways from one save and swap
/// saves again never hand each other's ids to their own scripts; and
/// swapping back and forth keeps the serials small.
#[test]
fn ids_across_stores() {
    let mut first = Scripts::<Game>::new();
    let saved: Vec<ScriptId> = (0..4)
        .map(|n| first.start_step(format!("saved {n}"), Mixed::new(n)))
        .collect();
    let save = first.snapshot().unwrap();
    let mut second = Scripts::<Game>::new();
    for _ in 0..2 {
        second.restore(&save);
        let ids: Vec<ScriptId> = second.iter().map(|info| info.id).collect();
        assert_eq!(ids, saved, "a fresh store keeps the saved ids");
    }
    // The two go separate ways: each hands the same next id to its own
    // script, as the two runs of one save do.
    let theirs = first.start_step("first's", Mixed::new(10));
    let ours = second.start_step("second's", Mixed::new(11));
    assert_eq!(theirs, ours);
    first.restore(&second.snapshot().unwrap());
    assert_eq!(first.get(theirs).map(|info| info.name), None::<&str>);
    assert!(!first.cancel(theirs), "first's id names second's script");
    assert!(first.iter().any(|info| info.name == "second's"));
    // The first's own saved scripts are back under some id, all running.
    assert_eq!(first.len(), 5);
    // A snapshot of the store the second was restored from, older than
    // the split: the second keeps those ids (it adopted that history).
    second.restore(&save);
    let ids: Vec<ScriptId> = second.iter().map(|info| info.id).collect();
    assert_eq!(ids, saved);
    assert!(second.get(ours).is_none());

    for _ in 0..if cfg!(miri) { 10 } else { 100 } {
        first.restore(&second.snapshot().unwrap());
        second.restore(&first.snapshot().unwrap());
    }
    let fresh = second.start_step("after the swaps", Mixed::new(12));
    assert!(
        fresh.serial() < 2_000,
        "serials grow by the scripts placed: {fresh}"
    );
    let names: Vec<&str> = second.iter().map(|info| info.name).collect();
    assert_eq!(names.len(), 5, "{names:?}");
}

/// Finding 5: any update length, after a first one, never panics, and the
/// clocks saturate instead of wrapping.
#[test]
fn updates_of_extreme_lengths() {
    let mut world = world();
    start(&mut world, 8);
    world.update(FRAME).unwrap();
    world.update(Duration::MAX).unwrap();
    world.update(Duration::MAX).unwrap();
    world.update(Duration::ZERO).unwrap();
    let time = *world.get::<FrameTime>().unwrap();
    assert_eq!((time.elapsed, time.frame), (Duration::MAX, 3));
    let clock = world.get::<SimClock>().unwrap();
    assert_eq!(clock.now(), Duration::MAX);
    // A fixed step too long for nanoseconds in a u64 keeps its remainder.
    world.set_fixed_timestep(Duration::MAX);
    world.update(Duration::from_secs(u64::MAX / 2)).unwrap();
    world.update(Duration::from_secs(u64::MAX / 2)).unwrap();
    let fixed = *world.get::<FixedTime>().unwrap();
    assert!(fixed.alpha > 0.99 && fixed.alpha < 1.0, "{fixed:?}");
}

/// A wait that ends beyond what nanoseconds in a u64 hold (584 years)
/// fires at its deadline, not when the clock passes 584 years.
#[test]
fn waits_beyond_584_years_fire_on_time() {
    #[derive(Clone)]
    struct Forever;
    impl StepScript<Game> for Forever {
        fn step(&mut self, cx: &mut Step<'_, '_, Game>) -> Wait<Game> {
            cx.emit(Woke {
                who: 0,
                round: 0,
                after: Shape::Start,
                now_us: cx.now().as_micros(),
                fixed_us: 0,
                level: 0,
            });
            Wait::For(Duration::from_secs(1_000 * 365 * 24 * 3600))
        }
    }
    let mut world = world();
    scripts(&mut world).start_step("forever", Forever);
    world.update(FRAME).unwrap();
    assert_eq!(play(&mut world, 0).len(), 1, "its first step");
    // 600 years: past u64 nanoseconds, 400 years before the deadline.
    world
        .update(Duration::from_secs(600 * 365 * 24 * 3600))
        .unwrap();
    world.update(FRAME).unwrap();
    assert!(play(&mut world, 0).is_empty(), "woken 400 years early");
    world
        .update(Duration::from_secs(400 * 365 * 24 * 3600))
        .unwrap();
    assert_eq!(play(&mut world, 0).len(), 1, "woken at its deadline");
}

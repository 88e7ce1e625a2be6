//! Durable scripts (issue 11): gather and collect as systems, waits on the
//! simulation clock, the same intents in the same order on every executor
//! and thread count, pause and scale, cancellation from systems and
//! commands, panic isolation, and snapshot and restore.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use sluice::exec::ThreadPool;
use sluice::script::{ScriptId, ScriptKind, Scripts, SimClock, Step, StepScript, Wait, Waiting};
use sluice::{Commands, ExecutorKind, NodeBuilder, World};

const TICK: Duration = Duration::from_millis(10);

/// Scripts see the tick number and a level, and emit (who, what).
struct Game;

#[derive(Debug, Default)]
struct Level(u32);

impl ScriptKind for Game {
    type View<'v> = &'v Level;
    type Intent = (u32, u64);
}

/// Every intent collect applied, in order, with the tick it was applied in.
#[derive(Debug, Default)]
struct Applied(Vec<(u64, u32, u64)>);

#[derive(Debug, Default)]
struct Tick(u64);

fn world(executor: ExecutorKind, threads: usize) -> World {
    let mut world = World::with_pool(ThreadPool::new(threads).expect("pool"));
    world.set_executor(executor);
    world.set_fixed_timestep(Duration::from_millis(20));
    world.insert(SimClock::new());
    world.insert(Level(0));
    world.insert(Applied::default());
    world.insert(Tick(0));
    world.insert(Scripts::<Game>::new());
    world.add_system(NodeBuilder::new("gather").system(
        |scripts: &mut Scripts<Game>, clock: &SimClock, level: &Level| {
            scripts.gather(clock, &level);
        },
    ));
    world.add_system(NodeBuilder::new("collect").system(
        |scripts: &mut Scripts<Game>, applied: &mut Applied, level: &mut Level, tick: &mut Tick| {
            for (_, (who, what)) in scripts.drain_intents() {
                applied.0.push((tick.0, who, what));
                level.0 = level.0.wrapping_add(what as u32) % 97;
            }
            tick.0 += 1;
        },
    ));
    world
}

/// Starts `count` scripts of four shapes: timed, fixed-timed, conditional
/// and every tick, each emitting a few intents and ending.
fn start_mixed(scripts: &mut Scripts<Game>, count: u32) {
    for who in 0..count {
        match who % 4 {
            0 => scripts.start(format!("timed {who}"), move |cx| async move {
                for round in 0..3u64 {
                    cx.wait(TICK * (who % 7 + 1)).await;
                    cx.emit((who, round));
                }
            }),
            1 => scripts.start(format!("fixed {who}"), move |cx| async move {
                cx.wait_fixed(Duration::from_millis(40)).await;
                let level = cx.view(|level| level.0);
                cx.emit((who, u64::from(level)));
            }),
            2 => scripts.start(format!("until {who}"), move |cx| async move {
                cx.wait_until(move |level| level.0 % 5 == who % 5).await;
                cx.emit((who, cx.now().as_millis() as u64));
            }),
            _ => scripts.start(format!("ticks {who}"), move |cx| async move {
                for round in 0..(who % 5) {
                    cx.next_tick().await;
                    cx.emit((who, u64::from(round) + 100));
                }
            }),
        };
    }
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

/// A simple script: its first intent at its first gather.
#[test]
fn smoke() {
    let mut world = world(ExecutorKind::Serial, 1);
    let id = world
        .get_mut::<Scripts<Game>>()
        .unwrap()
        .start("hello", |cx| async move {
            cx.emit((7, 1));
            cx.wait(Duration::from_millis(25)).await;
            cx.emit((7, 2));
        });
    let scripts = world.get::<Scripts<Game>>().unwrap();
    assert_eq!(
        scripts.get(id).map(|info| info.waiting),
        Some(Waiting::Start)
    );
    assert_eq!(scripts.get(id).map(|info| info.name), Some("hello"));
    world.update(TICK).unwrap();
    assert_eq!(world.get::<Applied>().unwrap().0, [(0, 7, 1)]);
    let waiting = world
        .get::<Scripts<Game>>()
        .unwrap()
        .get(id)
        .unwrap()
        .waiting;
    assert_eq!(
        waiting,
        Waiting::Time(Duration::from_millis(35)),
        "10 ms + 25 ms"
    );
    world.update(TICK).unwrap();
    world.update(TICK).unwrap();
    assert_eq!(
        world.get::<Applied>().unwrap().0.len(),
        1,
        "not before 35 ms"
    );
    world.update(TICK).unwrap();
    assert_eq!(world.get::<Applied>().unwrap().0, [(0, 7, 1), (3, 7, 2)]);
    let scripts = world.get::<Scripts<Game>>().unwrap();
    assert!(scripts.is_empty() && scripts.get(id).is_none());
    assert_eq!(scripts.finished(), 1);
}

/// Hundreds of scripts of every wait shape: the same intents in the same
/// order on every executor and thread count.
#[test]
fn the_same_intents_on_every_executor_and_thread_count() {
    let count = if cfg!(miri) { 24 } else { 600 };
    let ticks = if cfg!(miri) { 8 } else { 40 };
    let run = |executor: ExecutorKind, threads: usize| {
        let mut world = world(executor, threads);
        start_mixed(world.get_mut::<Scripts<Game>>().unwrap(), count);
        for tick in 0..ticks {
            // Uneven frames: 0, 1 or 2 fixed steps.
            world.update(TICK * (1 + tick % 3)).unwrap();
        }
        let applied = std::mem::take(&mut world.get_mut::<Applied>().unwrap().0);
        let left = world.get::<Scripts<Game>>().unwrap().len();
        (applied, left)
    };
    let (reference, left) = run(ExecutorKind::Serial, 1);
    assert!(
        reference.len() > count as usize,
        "scripts emitted: {}",
        reference.len()
    );
    assert!(left < count as usize, "most scripts ended, {left} left");
    // Under Miri one pool of two: the parallel paths, at a third of the runs.
    let threads: &[usize] = if cfg!(miri) { &[2] } else { &[1, 2, 4] };
    for &executor in parallel_kinds() {
        for &threads in threads {
            assert!(
                run(executor, threads) == (reference.clone(), left),
                "{executor:?} on {threads} threads differs from serial"
            );
        }
    }
}

/// A paused clock wakes nothing; a step wakes what is due once; a scale
/// stretches waits.
#[test]
fn pause_step_and_scale() {
    let mut world = world(ExecutorKind::Serial, 1);
    world
        .get_mut::<Scripts<Game>>()
        .unwrap()
        .start("ticker", |cx| async move {
            for round in 0.. {
                cx.emit((1, round));
                cx.next_tick().await;
            }
        });
    world.update(TICK).unwrap();
    assert_eq!(world.get::<Applied>().unwrap().0.len(), 1);
    world.get_mut::<SimClock>().unwrap().pause();
    for _ in 0..5 {
        world.update(TICK).unwrap();
    }
    assert_eq!(
        world.get::<Applied>().unwrap().0.len(),
        1,
        "paused: nothing woke"
    );
    assert_eq!(world.get::<SimClock>().unwrap().now(), TICK);
    world.get_mut::<SimClock>().unwrap().step(TICK);
    world.run_iteration().unwrap();
    world.run_iteration().unwrap();
    assert_eq!(
        world.get::<Applied>().unwrap().0.len(),
        2,
        "one step, one tick"
    );

    // Scaled by 0.5, a 40 ms wait takes 80 ms of frames.
    let mut world = self::world(ExecutorKind::Serial, 1);
    world.get_mut::<SimClock>().unwrap().set_scale(0.5);
    world
        .get_mut::<Scripts<Game>>()
        .unwrap()
        .start("slow", |cx| async move {
            cx.wait(Duration::from_millis(40)).await;
            cx.emit((2, cx.now().as_millis() as u64));
        });
    let mut frames = 0;
    while world.get::<Applied>().unwrap().0.is_empty() {
        world.update(TICK).unwrap();
        frames += 1;
        assert!(frames < 100, "the script never woke");
    }
    // Started at 5 ms of sim time (first gather), due at 45 ms: frame 9.
    assert_eq!(frames, 9);
    assert_eq!(world.get::<Applied>().unwrap().0[0].2, 45);
}

/// A script that waits on the fixed clock follows fixed steps, not frames.
#[test]
fn fixed_waits_follow_fixed_steps() {
    let mut world = world(ExecutorKind::Serial, 1);
    world
        .get_mut::<Scripts<Game>>()
        .unwrap()
        .start("fixed", |cx| async move {
            cx.wait_fixed(Duration::from_millis(60)).await;
            cx.emit((3, cx.fixed_now().as_millis() as u64));
        });
    // 25 ms frames with a 20 ms step: fixed time 20, 40, 60 (frame 3), ...
    let mut frames = 0;
    while world.get::<Applied>().unwrap().0.is_empty() {
        world.update(Duration::from_millis(25)).unwrap();
        frames += 1;
        assert!(frames < 100);
    }
    // First gather at frame 1 (fixed time 20 ms): due at 80 ms, which the
    // fourth frame reaches (100 ms of frames: five whole steps).
    assert_eq!(frames, 4);
    assert_eq!(world.get::<Applied>().unwrap().0[0].2, 100);
}

/// Cancelled from a system, from commands, and by id after it ended: a
/// cancelled script's intents never land, and its id names nothing.
#[test]
fn cancellation() {
    let mut world = world(ExecutorKind::Serial, 1);
    let scripts = world.get_mut::<Scripts<Game>>().unwrap();
    let forever = |who: u32| {
        move |cx: sluice::script::ScriptCx<Game>| async move {
            loop {
                cx.emit((who, 0));
                cx.next_tick().await;
            }
        }
    };
    let a = scripts.start("a", forever(1));
    let b = scripts.start("b", forever(2));
    world.update(TICK).unwrap();
    assert_eq!(world.get::<Applied>().unwrap().0.len(), 2);
    assert!(world.get_mut::<Scripts<Game>>().unwrap().cancel(a));
    assert!(
        !world.get_mut::<Scripts<Game>>().unwrap().cancel(a),
        "only once"
    );
    world.update(TICK).unwrap();
    assert_eq!(world.get::<Applied>().unwrap().0.last(), Some(&(1, 2, 0)));

    // From commands: b is cancelled, c started, at the boundary.
    let fired = std::sync::atomic::AtomicBool::new(false);
    world.add_system(
        NodeBuilder::new("director").system(move |commands: Commands| {
            if !fired.swap(true, Ordering::Relaxed) {
                commands.cancel_script::<Game>(b);
                commands.start_script::<Game, _, _>("c", |cx| async move {
                    cx.emit((3, 0));
                });
            }
        }),
    );
    for _ in 0..3 {
        world.update(TICK).unwrap();
    }
    let applied = &world.get::<Applied>().unwrap().0;
    let whos: Vec<u32> = applied.iter().map(|&(_, who, _)| who).collect();
    assert_eq!(
        whos.iter().filter(|&&who| who == 3).count(),
        1,
        "c ran once: {whos:?}"
    );
    let after_c = whos.iter().position(|&who| who == 3).unwrap();
    assert!(!whos[after_c..].contains(&2), "b stopped: {whos:?}");
    let scripts = world.get::<Scripts<Game>>().unwrap();
    assert!(scripts.get(b).is_none());
    assert!(scripts.is_empty());
}

/// A panicking script ends with an error naming it; the others go on, and
/// a script whose `Drop` panics when cancelled is reported too.
#[test]
fn a_panicking_script_ends_alone() {
    struct Loud;
    impl Drop for Loud {
        fn drop(&mut self) {
            panic!("loud drop");
        }
    }
    let mut world = world(ExecutorKind::Parallel, 2);
    let scripts = world.get_mut::<Scripts<Game>>().unwrap();
    for who in 0..20 {
        scripts.start(format!("worker {who}"), move |cx| async move {
            for round in 0..3 {
                cx.emit((who, round));
                cx.next_tick().await;
            }
        });
    }
    let bad = scripts.start("bad", |cx| async move {
        cx.next_tick().await;
        panic!("the bad script broke");
    });
    let loud = scripts.start("loud", |cx| async move {
        let _loud = Loud;
        loop {
            cx.next_tick().await;
        }
    });
    for _ in 0..4 {
        world.update(TICK).unwrap();
    }
    assert_eq!(
        world.get::<Applied>().unwrap().0.len(),
        60,
        "every worker finished"
    );
    let scripts = world.get_mut::<Scripts<Game>>().unwrap();
    let failures = scripts.failures().to_vec();
    assert_eq!(failures.len(), 1);
    assert_eq!(failures[0].id, bad);
    assert_eq!(
        failures[0].to_string(),
        format!("script `bad` ({bad}) panicked: the bad script broke")
    );
    assert!(scripts.cancel(loud));
    let failures = scripts.take_failures();
    assert_eq!(failures.len(), 2);
    assert_eq!(failures[1].name, "loud");
    assert_eq!(failures[1].message, "loud drop (while dropped)");
    assert!(scripts.is_empty());
}

/// A wave spawner as a step script: its state is data.
#[derive(Clone, Debug)]
struct Spawner {
    who: u32,
    wave: u64,
}

impl StepScript<Game> for Spawner {
    fn step(&mut self, cx: &mut Step<'_, '_, Game>) -> Wait<Game> {
        self.wave += 1;
        cx.emit((self.who, self.wave * 10 + u64::from(cx.view().0 % 10)));
        match self.wave {
            5 => Wait::Done,
            w if w % 2 == 0 => Wait::Until(|level| level.0 % 2 == 0),
            _ => Wait::For(TICK * self.who),
        }
    }
}

/// Snapshot mid-run, restore into a fresh world: the rest of the run is the
/// same as the original's. An async script is refused by name.
#[test]
fn snapshot_and_restore_round_trip() {
    let start = |world: &mut World| {
        let scripts = world.get_mut::<Scripts<Game>>().unwrap();
        for who in 1..=12 {
            scripts.start_step(format!("spawner {who}"), Spawner { who, wave: 0 });
        }
    };
    let mut original = world(ExecutorKind::Parallel, 2);
    start(&mut original);
    for _ in 0..6 {
        original.update(TICK).unwrap();
    }
    let snapshot = original
        .get_mut::<Scripts<Game>>()
        .unwrap()
        .snapshot()
        .unwrap();
    let clock = original.get::<SimClock>().unwrap().clone();
    let level = original.get::<Level>().unwrap().0;
    let tick = original.get::<Tick>().unwrap().0;
    assert!(!snapshot.is_empty());
    assert!(
        snapshot
            .scripts()
            .all(|(_, name, _)| name.starts_with("spawner"))
    );

    let mut restored = world(ExecutorKind::Serial, 1);
    restored.insert(clock);
    restored.insert(Level(level));
    restored.insert(Tick(tick));
    restored
        .get_mut::<Scripts<Game>>()
        .unwrap()
        .restore(&snapshot.clone());
    let before = original.get::<Applied>().unwrap().0.len();
    for _ in 0..20 {
        original.update(TICK).unwrap();
        restored.update(TICK).unwrap();
    }
    let expected = &original.get::<Applied>().unwrap().0[before..];
    assert!(!expected.is_empty());
    assert_eq!(restored.get::<Applied>().unwrap().0, expected);
    let ids = |world: &World| -> Vec<ScriptId> {
        world
            .get::<Scripts<Game>>()
            .unwrap()
            .iter()
            .map(|info| info.id)
            .collect()
    };
    assert_eq!(ids(&original), ids(&restored));

    // A store restored over live scripts of its own drops them; scripts
    // started after a restore get fresh ids beside the restored ones.
    let mut store = Scripts::<Game>::new();
    for n in 0..20 {
        store.start(
            format!("doomed {n}"),
            |cx| async move { cx.next_tick().await },
        );
    }
    store.restore(&snapshot);
    assert_eq!(store.len(), snapshot.len());
    assert!(store.iter().all(|info| info.name.starts_with("spawner")));
    let fresh = store.start("fresh", |cx| async move { cx.next_tick().await });
    let restored_ids: Vec<ScriptId> = snapshot.scripts().map(|(id, ..)| id).collect();
    assert!(!restored_ids.contains(&fresh));
    assert!(restored_ids.iter().all(|id| id.serial() < fresh.serial()));
    assert_eq!(store.len(), snapshot.len() + 1);

    // Async state is not data.
    let scripts = original.get_mut::<Scripts<Game>>().unwrap();
    let id = scripts.start("async one", |cx| async move { cx.next_tick().await });
    let refused = scripts.snapshot().unwrap_err();
    assert_eq!(refused.id, id);
    assert!(refused.to_string().contains("`async one`"), "{refused}");
}

/// Using a script's context outside its poll panics with a clear message.
#[test]
fn a_context_outside_its_script_panics() {
    let leaked = Arc::new(std::sync::Mutex::new(None));
    let mut scripts = Scripts::<Game>::new();
    let slot = leaked.clone();
    scripts.start("leaker", move |cx| {
        *slot.lock().unwrap() = Some(cx);
        async {}
    });
    let cx = leaked.lock().unwrap().take().unwrap();
    let message = std::panic::catch_unwind(|| cx.now())
        .unwrap_err()
        .downcast::<String>()
        .unwrap();
    assert!(message.contains("outside its script"), "{message}");
}

/// Scripts started and ended while others wait: the counts and waits the
/// store reports stay true.
#[test]
fn inspection() {
    let mut scripts = Scripts::<Game>::new();
    let polls = Arc::new(AtomicUsize::new(0));
    for who in 0..10u32 {
        let polls = polls.clone();
        scripts.start(format!("s{who}"), move |cx| async move {
            polls.fetch_add(1, Ordering::Relaxed);
            if who % 2 == 0 {
                cx.wait(Duration::from_secs(u64::from(who) + 1)).await;
            } else {
                cx.wait_until(|level| level.0 > 100).await;
            }
        });
    }
    let clock = SimClock::new();
    scripts.gather(&clock, &&Level(0));
    assert_eq!(polls.load(Ordering::Relaxed), 10);
    assert_eq!(scripts.len(), 10);
    let waits: Vec<Waiting> = scripts.iter().map(|info| info.waiting).collect();
    assert_eq!(waits[0], Waiting::Time(Duration::from_secs(1)));
    assert!(
        matches!(waits[1], Waiting::Condition(Some(location)) if location.file().ends_with("scripts.rs"))
    );
    scripts.gather(&clock, &&Level(101));
    assert_eq!(scripts.len(), 5, "the conditions held");
    assert_eq!(scripts.finished(), 5);
}

/// Hostile starts and ends: a start command whose closure panics at the
/// boundary is reported as that command and the next command still lands;
/// the intent of a poll that panicked is dropped with its script, and a
/// panic in that `Drop` is another failure of the script, not the gather's.
#[test]
fn panics_at_the_boundary_and_in_intent_drops() {
    let mut world = world(ExecutorKind::Serial, 1);
    let fired = std::sync::atomic::AtomicBool::new(false);
    world.add_system(
        NodeBuilder::new("director").system(move |commands: Commands| {
            if !fired.swap(true, Ordering::Relaxed) {
                commands.start_script::<Game, _, _>("broken", |_cx| -> std::future::Ready<()> {
                    panic!("no script today")
                });
                commands.start_script::<Game, _, _>("fine", |cx| async move { cx.emit((5, 5)) });
            }
        }),
    );
    let Err(sluice::IterationError::Boundary(failures)) = world.update(TICK) else {
        panic!("the start's panic is reported");
    };
    assert_eq!(failures.len(), 1, "{failures:?}");
    let text = failures[0].to_string();
    assert!(
        text.contains("start script `broken`") && text.contains("no script today"),
        "{text}"
    );
    let scripts = world.get::<Scripts<Game>>().unwrap();
    assert_eq!(
        scripts.iter().map(|info| info.name).collect::<Vec<_>>(),
        ["fine"]
    );
    world.update(TICK).expect("the next update runs");
    assert_eq!(world.get::<Applied>().unwrap().0, [(1, 5, 5)]);

    /// Panics when dropped unapplied.
    struct Fragile;
    impl Drop for Fragile {
        fn drop(&mut self) {
            if !std::thread::panicking() {
                panic!("fragile intent dropped");
            }
        }
    }
    struct Brittle;
    impl ScriptKind for Brittle {
        type View<'v> = ();
        type Intent = Fragile;
    }
    let mut store = Scripts::<Brittle>::new();
    let broken = store.start("broken", |cx| async move {
        cx.emit(Fragile);
        panic!("broke after emitting");
    });
    let calm = store.start("calm", |cx| async move {
        cx.next_tick().await;
    });
    // The panicking poll's intent is dropped with the script, and its
    // `Drop` panics too: both are the script's failures, the gather
    // returns, the other script goes on.
    store.gather(&SimClock::new(), &());
    let messages: Vec<(ScriptId, String)> = store
        .failures()
        .iter()
        .map(|failure| (failure.id, failure.message.clone()))
        .collect();
    assert_eq!(
        messages,
        [
            (broken, "broke after emitting".to_owned()),
            (broken, "fragile intent dropped (while dropped)".to_owned()),
        ]
    );
    assert_eq!(
        store.drain_intents().count(),
        0,
        "nothing of it reached collect"
    );
    assert!(store.get(calm).is_some());
}

/// Each clock wakes only the waits on its own cadence: a fixed wait comes
/// due when the fixed time alone reaches it, and a variable wait when the
/// variable time does, however far the other clock has run.
#[test]
fn each_clock_wakes_its_own_waits() {
    let level = Level(0);
    let mut scripts = Scripts::<Game>::new();
    scripts.start("fixed", |cx| async move {
        cx.wait_fixed(Duration::from_millis(30)).await;
        cx.emit((1, cx.fixed_now().as_millis() as u64));
    });
    scripts.start("variable", |cx| async move {
        cx.wait(Duration::from_millis(30)).await;
        cx.emit((2, cx.now().as_millis() as u64));
    });
    let mut clock = SimClock::new();
    let woke = |scripts: &mut Scripts<Game>, clock: &SimClock| {
        scripts.gather(clock, &&level);
        scripts
            .drain_intents()
            .map(|(_, intent)| intent)
            .collect::<Vec<_>>()
    };
    // The first gather starts both waits at time zero.
    assert_eq!(woke(&mut scripts, &clock), []);
    // Only the fixed clock moves: only the fixed wait wakes.
    clock.advance_fixed(Duration::from_millis(40));
    assert_eq!(woke(&mut scripts, &clock), [(1, 40)]);
    // Only the variable clock moves: only the variable wait wakes.
    clock.advance(Duration::from_millis(20));
    assert_eq!(woke(&mut scripts, &clock), []);
    clock.advance(Duration::from_millis(20));
    assert_eq!(woke(&mut scripts, &clock), [(2, 40)]);
    assert_eq!(scripts.len(), 0);
}

//! Time saturates everywhere (issue 19): `World::update` with any
//! sequence of deltas (random, zero, `Duration::MAX`, many summing past
//! the maximum), any fixed step and cap, any clock scale, paused or not,
//! with or without a fixed plan and with scripts waiting on every clock,
//! never panics, and every clock only moves forward.

use std::time::Duration;

use proptest::prelude::*;
use sluice::exec::ThreadPool;
use sluice::script::{ScriptKind, Scripts, SimClock, Step, StepScript, Wait};
use sluice::{Cadence, FixedTime, FrameTime, NodeBuilder, World};

struct Timed;

impl ScriptKind for Timed {
    type View<'v> = ();
    type Intent = Duration;
}

/// Waits `waits[n % len]` on the variable and the fixed clock in turn.
#[derive(Clone)]
struct Waiter {
    waits: Vec<Duration>,
    n: usize,
}

impl StepScript<Timed> for Waiter {
    fn step(&mut self, cx: &mut Step<'_, '_, Timed>) -> Wait<Timed> {
        cx.emit(cx.now());
        self.n += 1;
        let wait = self.waits[self.n % self.waits.len()];
        if self.n.is_multiple_of(2) {
            Wait::For(wait)
        } else {
            Wait::ForFixed(wait)
        }
    }
}

/// Fixed steps the fixed plan ran.
#[derive(Debug, Default)]
struct FixedRuns(u64);

fn duration() -> impl Strategy<Value = Duration> {
    prop_oneof![
        Just(Duration::ZERO),
        Just(Duration::MAX),
        Just(Duration::MAX / 2),
        (0u64..100_000_000).prop_map(Duration::from_nanos),
        any::<u64>().prop_map(Duration::from_nanos),
        (any::<u64>(), 0u32..1_000_000_000).prop_map(|(secs, nanos)| Duration::new(secs, nanos)),
    ]
}

fn step() -> impl Strategy<Value = Duration> {
    prop_oneof![
        Just(Duration::from_nanos(1)),
        Just(Duration::from_nanos(16_666_667)),
        Just(Duration::MAX),
        duration().prop_filter("a step is longer than zero", |step| !step.is_zero()),
    ]
}

fn scale() -> impl Strategy<Value = f64> {
    prop_oneof![
        Just(0.0),
        Just(0.5),
        Just(1.0),
        Just(3.0),
        Just(1e300),
        Just(f64::NAN),
        Just(f64::INFINITY),
    ]
}

#[derive(Debug, Clone)]
struct Case {
    deltas: Vec<Duration>,
    step: Duration,
    max_steps: u32,
    scale: f64,
    paused: bool,
    fixed_plan: bool,
    waits: Vec<Duration>,
}

fn case() -> impl Strategy<Value = Case> {
    (
        prop::collection::vec(duration(), 1..12),
        step(),
        0u32..10,
        scale(),
        any::<bool>(),
        any::<bool>(),
        prop::collection::vec(duration(), 1..4),
    )
        .prop_map(
            |(deltas, step, max_steps, scale, paused, fixed_plan, waits)| Case {
                deltas,
                step,
                max_steps,
                scale,
                paused,
                fixed_plan,
                waits,
            },
        )
}

fn world(case: &Case) -> World {
    let mut world = World::with_pool(ThreadPool::new(1).expect("pool"));
    world.set_fixed_timestep(case.step);
    world.set_max_fixed_steps(case.max_steps);
    let mut clock = SimClock::new();
    clock.set_scale(case.scale);
    if case.paused {
        clock.pause();
    }
    world.insert(clock);
    world.insert(FixedRuns::default());
    let mut scripts = Scripts::<Timed>::new();
    for n in 0..case.waits.len() {
        let waits = case.waits.clone();
        scripts.start_step(format!("waiter {n}"), Waiter { waits, n });
    }
    world.insert(scripts);
    world.add_system(NodeBuilder::new("gather").system(
        |scripts: &mut Scripts<Timed>, clock: &SimClock| {
            scripts.gather(clock, &());
            scripts.drain_intents().for_each(drop);
        },
    ));
    if case.fixed_plan {
        world.add_system(
            NodeBuilder::new("fixed")
                .cadence(Cadence::Fixed)
                .system(|runs: &mut FixedRuns| runs.0 += 1),
        );
    }
    world
}

fn run(case: &Case) -> Result<(), TestCaseError> {
    let mut world = world(case);
    let mut previous: Option<(FrameTime, FixedTime, SimClock)> = None;
    for &delta in &case.deltas {
        world.update(delta).expect("the update runs");
        let frame = *world.get::<FrameTime>().unwrap();
        let fixed = *world.get::<FixedTime>().unwrap();
        let clock = world.get::<SimClock>().unwrap().clone();
        prop_assert_eq!(frame.delta, delta);
        prop_assert!(fixed.steps <= case.max_steps);
        prop_assert!((0.0..1.0).contains(&fixed.alpha), "alpha {}", fixed.alpha);
        if case.fixed_plan {
            prop_assert_eq!(world.get::<FixedRuns>().unwrap().0, fixed.total);
        }
        if let Some((before, fixed_before, clock_before)) = &previous {
            prop_assert!(frame.elapsed >= before.elapsed);
            prop_assert_eq!(frame.elapsed, before.elapsed.saturating_add(delta));
            prop_assert_eq!(frame.frame, before.frame + 1);
            prop_assert_eq!(fixed.total, fixed_before.total + u64::from(fixed.steps));
            prop_assert!(clock.now() >= clock_before.now());
            prop_assert!(clock.fixed_now() >= clock_before.fixed_now());
            if case.paused {
                prop_assert_eq!(clock.now(), clock_before.now());
            }
            if case.scale == 1.0 && !case.paused {
                prop_assert_eq!(clock.now(), clock_before.now().saturating_add(delta));
                let moved = case.step.checked_mul(fixed.steps).unwrap_or(Duration::MAX);
                prop_assert_eq!(
                    clock.fixed_now(),
                    clock_before.fixed_now().saturating_add(moved)
                );
            }
        } else {
            prop_assert_eq!((frame.elapsed, frame.frame), (delta, 0));
        }
        previous = Some((frame, fixed, clock));
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: if cfg!(miri) { 2 } else { 256 },
        // Miri isolates the file system: no regression file there.
        failure_persistence: if cfg!(miri) {
            None
        } else {
            ProptestConfig::default().failure_persistence
        },
        ..ProptestConfig::default()
    })]

    #[test]
    fn updates_of_any_length_never_panic_and_clocks_only_move_forward(case in case()) {
        run(&case)?;
    }
}

/// Many updates whose sum passes `Duration::MAX`, after a first short one.
#[test]
fn updates_summing_past_the_maximum() {
    let case = Case {
        deltas: [Duration::from_millis(16)]
            .into_iter()
            .chain(std::iter::repeat_n(Duration::MAX / 3, 7))
            .chain([Duration::ZERO, Duration::MAX])
            .collect(),
        step: Duration::from_nanos(16_666_667),
        max_steps: 8,
        scale: 1.0,
        paused: false,
        fixed_plan: true,
        waits: vec![Duration::from_millis(10), Duration::MAX],
    };
    run(&case).unwrap();
}

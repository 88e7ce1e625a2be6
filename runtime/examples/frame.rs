//! A headless game frame on sluice: a few dozen systems (input, AI squads,
//! fixed-step movement, escorts following a leader through a
//! `ComponentRef`, deaths and respawns through `Commands`, a render arena
//! with a gated commit, a particle batch processor, a navigation factory, an
//! async asset stream), organised in phases and groups, run for a few
//! hundred frames; prints per-frame timing, the plans' stage views, the
//! plan's diagnostics and the group tree. Actors and escorts are entities; their systems take queries.
//!
//! `cargo run --release -p sluice --example frame [-- FRAMES]`

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::task::{Context as TaskContext, Poll};
use std::time::{Duration, Instant};

use atomic_waker::AtomicWaker;
use sluice::exec::ClearBuffer;
use sluice::{
    BatchProcessor, Commands, ComponentRef, Entity, FixedTime, FrameTime, Group, NodeBuilder,
    Phase, Query, Target, TreeItem, World, factory, run_condition, system,
};
use sluice_collections::{AppendArena, RingHistory};

const ENTITIES: usize = 4_096;
const ESCORTS: usize = 64;
const SQUADS: usize = 8;
const PARTICLES: usize = 65_536;

#[derive(Debug, Clone, Copy, Default)]
struct Vec2 {
    x: f32,
    y: f32,
}

/// This frame's player input (a scripted stick).
#[derive(Debug, Default)]
struct Input {
    stick: Vec2,
    fire: bool,
}

/// Components of actors and escorts.
#[derive(Debug, Clone, Copy, Default)]
struct Pos(Vec2);
#[derive(Debug, Clone, Copy, Default)]
struct Vel(Vec2);
#[derive(Debug, Clone, Copy)]
struct Health(f32);
#[derive(Debug, Clone, Copy)]
struct Squad(usize);
/// An escort's direction towards its leader.
#[derive(Debug, Clone, Copy, Default)]
struct Heading(Vec2);
/// Where each squad wants to go; one service per squad so squads think in parallel.
#[derive(Debug, Default)]
struct Intent<const SQUAD: usize>(Vec2);
#[derive(Debug, Default)]
struct Score(u64);
/// The level's static geometry; changes rarely.
#[derive(Debug)]
struct Terrain {
    revision: u32,
    walls: Vec<Vec2>,
}
/// Built from the terrain by a factory: skipped while the terrain holds still.
#[derive(Debug)]
struct NavMesh {
    revision: u32,
    cells: usize,
}
#[derive(Debug, Clone, Copy)]
struct Draw {
    sprite: u32,
    at: Vec2,
}
/// Draw commands appended concurrently by every drawing system (shared
/// access), committed by one gate.
#[derive(Debug)]
struct DrawArena(AppendArena<Draw>);
#[derive(Debug, Default)]
struct RenderStats {
    submitted: u64,
    dropped: u64,
}
/// Particles simulated by a batch processor; they persist across frames.
#[derive(Debug)]
struct Particles(Vec<f32>);

impl ClearBuffer for Particles {
    fn clear_buffer(&mut self) {
        self.0.clear();
    }
}
#[derive(Debug, Default)]
struct ParticleSum(Arc<AtomicU64>);

/// Advances all particles in parallel slices.
#[derive(Debug)]
struct ParticleSim {
    sum: Arc<AtomicU64>,
}

impl BatchProcessor for ParticleSim {
    type Buffer = Particles;
    type Item = f32;
    const BATCH_SIZE: usize = 4_096;

    fn items(buffer: &Particles) -> &[f32] {
        &buffer.0
    }

    fn process_batch(&self, _start: usize, batch: &[f32]) {
        let energy: f32 = batch.iter().map(|p| (p * 1.0001 + 0.5).sin().abs()).sum();
        self.sum.fetch_add(energy as u64, Ordering::Relaxed);
    }

    fn after_update(&mut self, _buffer: &mut Particles) {
        // Particles persist across frames; nothing to clear.
    }
}

/// A frame counter an async task can wait on.
#[derive(Debug, Default)]
struct FrameSignal {
    frame: AtomicU64,
    waker: AtomicWaker,
}

/// Resolves once the frame signal reaches `target`.
struct UntilFrame {
    signal: Arc<FrameSignal>,
    target: u64,
}

impl Future for UntilFrame {
    type Output = ();
    fn poll(self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<()> {
        self.signal.waker.register(cx.waker());
        if self.signal.frame.load(Ordering::Acquire) >= self.target {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    }
}

/// The signal as a service, so a system can tick it.
#[derive(Debug, Default)]
struct Signal(Arc<FrameSignal>);
#[derive(Debug, Default)]
struct Streamed(Arc<AtomicUsize>);

/// Samples this frame's input; everything in the update phase follows it.
#[system(phase = PreUpdate)]
fn read_input(time: &FrameTime, input: &mut Input) {
    let t = time.elapsed.as_secs_f32();
    input.stick = Vec2 {
        x: t.cos(),
        y: t.sin(),
    };
    input.fire = time.frame.is_multiple_of(30);
}

fn think<const SQUAD: usize>(
    actors: Query<(&Pos, &Squad)>,
    nav: &NavMesh,
    intent: &mut Intent<SQUAD>,
) {
    let members = actors.iter().filter(|(_, squad)| squad.0 == SQUAD);
    let (sum, count) = members.fold((Vec2::default(), 0.0f32), |(s, n), (p, _)| {
        (
            Vec2 {
                x: s.x + p.0.x,
                y: s.y + p.0.y,
            },
            n + 1.0,
        )
    });
    let bias = (nav.cells % 7) as f32 * 0.01;
    intent.0 = Vec2 {
        x: -sum.x / count.max(1.0) + bias,
        y: -sum.y / count.max(1.0),
    };
}

fn steer(
    input: &Input,
    i0: &Intent<0>,
    i1: &Intent<1>,
    i2: &Intent<2>,
    i3: &Intent<3>,
    mut actors: Query<(&mut Vel, &Squad)>,
) {
    let intents = [i0.0, i1.0, i2.0, i3.0];
    actors.for_each(|(mut v, squad)| {
        let goal = intents[squad.0 % intents.len()];
        v.0.x = 0.9 * v.0.x + 0.1 * (goal.x + input.stick.x);
        v.0.y = 0.9 * v.0.y + 0.1 * (goal.y + input.stick.y);
    });
}

/// Escorts turn towards their leader, reading its position through their
/// `ComponentRef<Pos>` (they need no `Pos` of the leader's archetype).
fn follow(mut escorts: Query<(&mut Heading, Target<Pos>)>) {
    escorts.for_each(|(mut heading, leader)| {
        if let Some(leader) = leader {
            heading.0 = Vec2 {
                x: leader.0.x * 0.5,
                y: leader.0.y * 0.5,
            };
        }
    });
}

/// Physics on the fixed cadence: once per whole 1/120 s step, before the
/// frame's variable plan, from the velocities the previous frame steered.
#[system(cadence = Fixed, group = "Physics")]
fn integrate(time: &FixedTime, mut movers: Query<(&mut Pos, &Vel)>) {
    let dt = time.step.as_secs_f32();
    movers.for_each(|(mut p, v)| {
        p.0.x += v.0.x * dt;
        p.0.y += v.0.y * dt;
    });
}

/// Escorts move along their heading, on the same fixed steps.
#[system(cadence = Fixed, group = "Physics")]
fn escort(time: &FixedTime, mut escorts: Query<(&mut Pos, &Heading)>) {
    let dt = time.step.as_secs_f32();
    escorts.for_each(|(mut p, heading)| {
        p.0.x += (heading.0.x - p.0.x) * dt;
        p.0.y += (heading.0.y - p.0.y) * dt;
    });
}

/// Only on frames where the player fires.
#[run_condition]
fn firing(input: &Input) -> bool {
    input.fire
}

/// Actors near the origin take damage; the dead are despawned and a
/// replacement spawns at the rim (both land at the frame's boundary).
#[system(run_if = firing)]
fn damage(
    mut actors: Query<(Entity, &Pos, &mut Health, &Squad)>,
    score: &mut Score,
    commands: Commands<'_>,
) {
    for (entity, p, mut health, squad) in actors.iter_mut() {
        if p.0.x * p.0.x + p.0.y * p.0.y < 0.25 {
            health.0 -= 1.0;
            score.0 += 1;
            if health.0 <= 0.0 {
                commands.despawn(entity);
                commands.spawn(actor(entity.id() as usize, *squad));
            }
        }
    }
}

fn draw_actors(actors: Query<(Entity, &Pos)>, arena: &DrawArena) {
    for (entity, p) in actors.iter() {
        if entity.id().is_multiple_of(4) {
            let _ = arena.0.push(Draw {
                sprite: entity.id() as u32,
                at: p.0,
            });
        }
    }
}

fn draw_hud(score: &Score, health: Query<&Health>, arena: &DrawArena) {
    let alive = health.iter().filter(|h| h.0 > 0.0).count();
    let _ = arena.0.push(Draw {
        sprite: (score.0 as u32) ^ (alive as u32),
        at: Vec2::default(),
    });
}

fn draw_walls(terrain: &Terrain, arena: &DrawArena) {
    for &at in &terrain.walls {
        let _ = arena.0.push(Draw { sprite: 7, at });
    }
}

/// The gated commit: runs after every drawing system of the frame.
fn commit(arena: &mut DrawArena, stats: &mut RenderStats) {
    let capacity = arena.0.capacity();
    let mut checksum = 0u32;
    for draw in arena.0.drain() {
        checksum = checksum.wrapping_add(draw.sprite) ^ (draw.at.x.to_bits());
        stats.submitted += 1;
    }
    std::hint::black_box(checksum);
    // Grow between frames if the arena overflowed (push returns `Full`).
    stats.dropped = stats.dropped.max(capacity as u64);
}

/// Rebuilt only when the terrain changed (a factory is skipped otherwise).
#[factory]
fn build_navmesh(terrain: &Terrain) -> NavMesh {
    NavMesh {
        revision: terrain.revision,
        cells: terrain.walls.len() * 3 + 1,
    }
}

fn tick_signal(time: &FrameTime, signal: &Signal) {
    signal.0.frame.store(time.frame, Ordering::Release);
    signal.0.waker.wake();
}

/// Every 120 frames the level changes: the navigation factory reruns.
fn edit_terrain(time: &FrameTime, terrain: &mut Terrain) {
    if time.frame % 120 == 119 {
        terrain.revision += 1;
        terrain.walls.push(Vec2 {
            x: terrain.revision as f32,
            y: 0.0,
        });
    }
}

/// An actor of `squad`, placed by `seed` on the unit circle.
fn actor(seed: usize, squad: Squad) -> (Pos, Vel, Health, Squad) {
    (
        Pos(Vec2 {
            x: (seed as f32).sin(),
            y: (seed as f32).cos(),
        }),
        Vel::default(),
        Health(10.0),
        squad,
    )
}

fn main() {
    let frames: u64 = std::env::args()
        .nth(1)
        .and_then(|arg| arg.parse().ok())
        .unwrap_or(300);

    let mut world = World::new();
    world.insert(Input::default());
    world.spawn_batch((0..ENTITIES).map(|i| actor(i, Squad(i % SQUADS))));
    // A frozen leader (it never changes archetype) and its escorts, each
    // holding a reference to the leader's position.
    let leader = world.spawn((Pos(Vec2 { x: 2.0, y: 0.0 }), Vel::default(), Squad(0)));
    world.freeze(leader).expect("just spawned");
    let to_leader = ComponentRef::<Pos>::new(&world, leader).expect("frozen, with a Pos");
    world.spawn_batch((0..ESCORTS).map(|i| {
        (
            Pos(Vec2 {
                x: i as f32 * 0.01,
                y: 0.0,
            }),
            Heading::default(),
            to_leader,
        )
    }));
    world.insert(Intent::<0>::default());
    world.insert(Intent::<1>::default());
    world.insert(Intent::<2>::default());
    world.insert(Intent::<3>::default());
    world.insert(Score::default());
    world.insert(Terrain {
        revision: 0,
        walls: vec![Vec2::default(); 64],
    });
    world.insert(DrawArena(AppendArena::with_capacity(2 * ENTITIES)));
    world.insert(RenderStats::default());
    world.insert(Particles(
        (0..PARTICLES).map(|i| i as f32 * 0.001).collect(),
    ));
    let particle_sum = ParticleSum::default();
    let sum = Arc::clone(&particle_sum.0);
    world.insert(particle_sum);
    let signal = Signal::default();
    let frame_signal = Arc::clone(&signal.0);
    world.insert(signal);
    let streamed = Streamed::default();
    let streamed_count = Arc::clone(&streamed.0);
    world.insert(streamed);

    world.add_group(Group::new("Simulation"));
    world.add_group(Group::new("Physics").in_group("Simulation"));
    world.add_group(Group::new("Ai").in_group("Simulation"));
    world.add_group(Group::new("Render"));
    world.set_fixed_timestep(Duration::from_secs(1) / 120);
    world.add_system(read_input);
    world.add_system(
        NodeBuilder::new("tick_signal")
            .phase(Phase::PreUpdate)
            .system(tick_signal),
    );
    world.add_system(edit_terrain);
    world.add_factory(build_navmesh);
    world.add_system(
        NodeBuilder::new("think#0")
            .in_group("Ai")
            .system(think::<0>),
    );
    world.add_system(
        NodeBuilder::new("think#1")
            .in_group("Ai")
            .system(think::<1>),
    );
    world.add_system(
        NodeBuilder::new("think#2")
            .in_group("Ai")
            .system(think::<2>),
    );
    world.add_system(
        NodeBuilder::new("think#3")
            .in_group("Ai")
            .system(think::<3>),
    );
    world.add_system(steer);
    world.add_system(NodeBuilder::new("follow").in_group("Ai").system(follow));
    world.add_system(integrate);
    world.add_system(escort);
    world.add_system(damage);
    let render = |name: &'static str| {
        NodeBuilder::new(name)
            .phase(Phase::PostUpdate)
            .in_group("Render")
    };
    world.add_system(render("draw_actors").system(draw_actors));
    world.add_system(render("draw_hud").system(draw_hud));
    world.add_system(render("draw_walls").system(draw_walls));
    world.add_system(render("commit").system(commit));
    world.add_batch_processor(NodeBuilder::new("particles"), ParticleSim { sum });
    // A one-time registration from inside a frame: joins a later plan.
    world.add_system(NodeBuilder::new("spawn_stats").system(
        |commands: Commands<'_>, time: &FrameTime| {
            if time.frame == 10 {
                commands.add_system(NodeBuilder::new("late_stats").system(
                    |stats: &RenderStats, score: &Score| {
                        std::hint::black_box((stats.submitted, score.0));
                    },
                ));
            }
        },
    ));
    // An async asset stream: one chunk every 30 frames, across frames.
    let stream = world.spawn_task(async move {
        for chunk in 1..=5u64 {
            UntilFrame {
                signal: Arc::clone(&frame_signal),
                target: chunk * 30,
            }
            .await;
            streamed_count.fetch_add(1, Ordering::Relaxed);
        }
    });
    stream.detach();

    world.enable_timing(true);
    let mut frame_times = RingHistory::new(60);
    let started = Instant::now();
    for frame in 0..frames {
        let begin = Instant::now();
        world
            .update(Duration::from_micros(16_667))
            .expect("the frame runs");
        let elapsed = begin.elapsed();
        frame_times.push(elapsed);
        if frame % 50 == 0 || frame + 1 == frames {
            let busiest = world
                .plan()
                .expect("planned")
                .order()
                .max_by_key(|node| world.timings()[node.index()].duration)
                .map(|node| node.index());
            let plan = world.plan().expect("planned");
            let busiest =
                busiest.map_or("-", |node| plan.node_name(sluice::NodeIndex(node as u32)));
            println!(
                "frame {frame:>4}: {:>7.1} us  (peak of last 60: {:>7.1} us, busiest node: {busiest})",
                elapsed.as_secs_f64() * 1e6,
                frame_times.max().unwrap_or_default().as_secs_f64() * 1e6,
            );
        }
    }
    let total = started.elapsed();

    let plans = world.plans().expect("planned");
    for (label, plan) in [("fixed ", plans.fixed()), ("", plans.variable())] {
        println!(
            "\n{label}plan: {} nodes, {} stages",
            plan.len(),
            plan.stage_count()
        );
        for (index, stage) in plan.stages().enumerate() {
            let names: Vec<&str> = stage.iter().map(|&node| plan.node_name(node)).collect();
            println!("{label}stage {index}: {}", names.join(" "));
        }
    }
    let plan = plans.variable();
    // The planner's warnings (SL0008: conflicting nodes ordered only by
    // registration order), found over both cadences.
    match plan.diagnostics() {
        [] => println!("\nplan diagnostics: none"),
        diagnostics => {
            println!("\nplan diagnostics: {}", diagnostics.len());
            for diagnostic in diagnostics {
                println!("  {diagnostic}");
            }
        }
    }
    println!("\ngroups:");
    for (depth, item) in plan.tree() {
        let indent = "  ".repeat(depth + 1);
        match item {
            TreeItem::Group(group) => println!("{indent}{}", plan.hierarchy().group_name(group)),
            TreeItem::Node(node) if plan.hierarchy().group_of(node).is_some() => {
                println!("{indent}{} {}", plan.node_name(node), plan.stage_of(node));
            }
            TreeItem::Node(_) => {}
        }
    }
    let fixed = world.get::<FixedTime>().expect("the world keeps it");
    println!(
        "fixed cadence: {} steps of {:.2} ms ({} dropped in the last update)",
        fixed.total,
        fixed.step.as_secs_f64() * 1e3,
        fixed.dropped
    );
    let stats = world.get::<RenderStats>().expect("inserted");
    let nav = world.get::<NavMesh>().expect("produced");
    println!(
        "\n{frames} frames in {:.1} ms ({:.1} us/frame) on {} threads; {} entities; {} draws submitted; navmesh revision {}; {} asset chunks streamed; score {}",
        total.as_secs_f64() * 1e3,
        total.as_secs_f64() * 1e6 / frames as f64,
        world.pool().num_threads(),
        world.entities().len(),
        stats.submitted,
        nav.revision,
        world
            .get::<Streamed>()
            .expect("inserted")
            .0
            .load(Ordering::Relaxed),
        world.get::<Score>().expect("inserted").0,
    );
}

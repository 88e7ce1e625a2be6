//! The workload of the `snapshot` bench, shared with its test
//! (`benches/tests/snapshot_workload.rs`): the game's unit components,
//! sluice's world, bevy_ggrs's app on bevy 0.19, the `Vec` floor, and the
//! 8-frame rollback on each side.

use sluice::exec::ThreadPool;
use sluice::{ExecutorKind, NodeBuilder, Query, RollbackBuffer, World};

/// The entity counts measured.
pub const COUNTS: [usize; 2] = [20_000, 200_000];
/// Frames re-simulated by one rollback.
pub const ROLLBACK_FRAMES: i64 = 8;

/// The six components, the same bytes on every side.
pub mod units {
    use serde::{Deserialize, Serialize};

    #[derive(Clone, Copy, Default, PartialEq, Debug, Serialize, Deserialize)]
    pub struct Pos {
        pub x: f32,
        pub y: f32,
    }
    #[derive(Clone, Copy, Default, PartialEq, Debug, Serialize, Deserialize)]
    pub struct Vel {
        pub x: f32,
        pub y: f32,
    }
    #[derive(Clone, Copy, Default, PartialEq, Debug, Serialize, Deserialize)]
    pub struct Health(pub i32);
    #[derive(Clone, Copy, Default, PartialEq, Debug, Serialize, Deserialize)]
    pub struct Team(pub u8);
    #[derive(Clone, Copy, Default, PartialEq, Debug, Serialize, Deserialize)]
    pub struct Slot {
        pub x: f32,
        pub y: f32,
    }
    /// The game's weapon holds `Option<Entity>`; an index here, so that
    /// both ECSs store the same thing (`u32::MAX`: no target).
    #[derive(Clone, Copy, Default, PartialEq, Debug, Serialize, Deserialize)]
    pub struct Weapon {
        pub cooldown: u16,
        pub target: u32,
    }

    /// Unit `i` of a world of `n`.
    pub fn unit(i: usize, n: usize) -> (Pos, Vel, Health, Team, Slot, Weapon) {
        let f = i as f32;
        (
            Pos { x: f, y: -f },
            Vel {
                x: (i % 7) as f32 - 3.0,
                y: (i % 5) as f32 - 2.0,
            },
            Health(100),
            Team((i % 2) as u8),
            Slot {
                x: (i % 16) as f32,
                y: (i / 16 % 16) as f32,
            },
            Weapon {
                cooldown: (i % 30) as u16,
                target: ((i * 7919) % n) as u32,
            },
        )
    }

    /// The frame's three systems, one function each, shared by both sides.
    pub fn step_move(pos: &mut Pos, vel: &Vel) {
        pos.x += vel.x * (1.0 / 60.0);
        pos.y += vel.y * (1.0 / 60.0);
    }
    pub fn step_reload(weapon: &mut Weapon) {
        weapon.cooldown = if weapon.cooldown == 0 {
            30
        } else {
            weapon.cooldown - 1
        };
    }
    pub fn step_damage(health: &mut Health, weapon: &Weapon, team: &Team) {
        if weapon.cooldown == 0 {
            health.0 -= 1 + i32::from(team.0);
        }
    }
}
use units::{Health, Pos, Slot, Team, Vel, Weapon};

/// sluice's side: a world opted into snapshots and saves (strict: nothing
/// left out), with the frame's three systems, on the serial executor
/// (`threads` 1) or the parallel one over a pool of `threads`.
pub fn sluice_world(n: usize, threads: usize) -> World {
    let mut world = if threads == 1 {
        let mut world = World::new();
        world.set_executor(ExecutorKind::Serial);
        world
    } else {
        let mut world = World::with_pool(ThreadPool::new(threads).expect("pool"));
        world.set_executor(ExecutorKind::Parallel);
        world
    };
    world
        .save_component::<Pos>("Pos")
        .save_component::<Vel>("Vel")
        .save_component::<Health>("Health")
        .save_component::<Team>("Team")
        .save_component::<Slot>("Slot")
        .save_component::<Weapon>("Weapon")
        .set_snapshot_strict(true);
    world.spawn_batch((0..n).map(|i| units::unit(i, n)));
    world.add_system(
        NodeBuilder::new("move").system(|mut q: Query<(&mut Pos, &Vel)>| {
            q.for_each(|(mut pos, vel)| units::step_move(&mut pos, vel));
        }),
    );
    world.add_system(
        NodeBuilder::new("reload").system(|mut q: Query<&mut Weapon>| {
            q.for_each(|mut weapon| units::step_reload(&mut weapon));
        }),
    );
    world.add_system(NodeBuilder::new("damage").after("reload").system(
        |mut q: Query<(&mut Health, &Weapon, &Team)>| {
            q.for_each(|(mut health, weapon, team)| units::step_damage(&mut health, weapon, team));
        },
    ));
    world.run_iteration().expect("first frame");
    world
}

/// The sum of every unit's health and position, to check both sides
/// simulate the same thing.
pub fn sluice_fingerprint(world: &mut World) -> (i64, f64) {
    let health = world
        .query::<&Health>()
        .iter()
        .map(|h| i64::from(h.0))
        .sum();
    let pos = world
        .query::<&Pos>()
        .iter()
        .map(|p| f64::from(p.x) + f64::from(p.y))
        .sum();
    (health, pos)
}

/// bevy_ggrs's side on bevy 0.19. The six components implement bevy
/// 0.19's `Component` by hand: this crate's `bevy_ecs` is 0.20, so the
/// derive would name the wrong crate.
pub mod ggrs_side {
    use std::hash::{Hash, Hasher};

    use bevy_ggrs::{
        AdvanceWorld, ChecksumPlugin, LoadWorld, Rollback, RollbackApp, RollbackFrameCount,
        SaveWorld, SnapshotPlugin, checksum_hasher,
    };
    use bevy19::app::App;
    use bevy19::ecs::component::{Component, Mutable, StorageType};
    use bevy19::ecs::schedule::IntoScheduleConfigs;
    use bevy19::ecs::system::Query;

    use super::units::{self, Health, Pos, Slot, Team, Vel, Weapon};

    macro_rules! bevy_component {
        ($($t:ty),*) => {$(
            impl Component for $t {
                const STORAGE_TYPE: StorageType = StorageType::Table;
                type Mutability = Mutable;
            }
        )*};
    }
    bevy_component!(Pos, Vel, Health, Team, Slot, Weapon);

    /// Each component's checksum: SeaHash (bevy_ggrs's `checksum_hasher`)
    /// of its fields' bits, what `#[derive(Hash)]` would feed it.
    fn hash_of(bits: &[u32]) -> u64 {
        let mut hasher = checksum_hasher();
        bits.hash(&mut hasher);
        hasher.finish()
    }
    fn hash_pos(p: &Pos) -> u64 {
        hash_of(&[p.x.to_bits(), p.y.to_bits()])
    }
    fn hash_vel(v: &Vel) -> u64 {
        hash_of(&[v.x.to_bits(), v.y.to_bits()])
    }
    fn hash_health(h: &Health) -> u64 {
        hash_of(&[h.0 as u32])
    }
    fn hash_team(t: &Team) -> u64 {
        hash_of(&[u32::from(t.0)])
    }
    fn hash_slot(s: &Slot) -> u64 {
        hash_of(&[s.x.to_bits(), s.y.to_bits()])
    }
    fn hash_weapon(w: &Weapon) -> u64 {
        hash_of(&[u32::from(w.cooldown), w.target])
    }

    /// An app with bevy_ggrs's snapshot plugins for the six components
    /// (and its checksum plugins when `checksum`), `n` rollback units, the
    /// frame's three systems in `AdvanceWorld`, one `SaveWorld` run at
    /// frame 0.
    pub fn app(n: usize, checksum: bool) -> App {
        let mut app = App::new();
        app.add_plugins(SnapshotPlugin);
        app.rollback_component_with_copy::<Pos>()
            .rollback_component_with_copy::<Vel>()
            .rollback_component_with_copy::<Health>()
            .rollback_component_with_copy::<Team>()
            .rollback_component_with_copy::<Slot>()
            .rollback_component_with_copy::<Weapon>();
        if checksum {
            app.add_plugins(ChecksumPlugin)
                .checksum_component::<Pos>(hash_pos)
                .checksum_component::<Vel>(hash_vel)
                .checksum_component::<Health>(hash_health)
                .checksum_component::<Team>(hash_team)
                .checksum_component::<Slot>(hash_slot)
                .checksum_component::<Weapon>(hash_weapon);
        }
        app.add_systems(
            AdvanceWorld,
            (
                |mut q: Query<(&mut Pos, &Vel)>| {
                    for (mut pos, vel) in &mut q {
                        units::step_move(&mut pos, vel);
                    }
                },
                (
                    |mut q: Query<&mut Weapon>| {
                        for mut weapon in &mut q {
                            units::step_reload(&mut weapon);
                        }
                    },
                    |mut q: Query<(&mut Health, &Weapon, &Team)>| {
                        for (mut health, weapon, team) in &mut q {
                            units::step_damage(&mut health, weapon, team);
                        }
                    },
                )
                    .chain(),
            ),
        );
        app.update();
        app.world_mut().spawn_batch((0..n).map(|i| {
            let (pos, vel, health, team, slot, weapon) = units::unit(i, n);
            (pos, vel, health, team, slot, weapon, Rollback)
        }));
        app.world_mut().flush();
        // The sluice side ran one frame when it was built.
        app.world_mut().run_schedule(AdvanceWorld);
        save(&mut app, 0);
        app
    }

    /// `SaveWorld` at `frame`.
    pub fn save(app: &mut App, frame: i32) {
        app.insert_resource(RollbackFrameCount(frame));
        app.world_mut().run_schedule(SaveWorld);
    }

    /// `LoadWorld` at `frame`.
    pub fn load(app: &mut App, frame: i32) {
        app.insert_resource(RollbackFrameCount(frame));
        app.world_mut().run_schedule(LoadWorld);
    }

    /// One simulated frame.
    pub fn advance(app: &mut App) {
        app.world_mut().run_schedule(AdvanceWorld);
    }

    /// The same fingerprint as `sluice_fingerprint`.
    pub fn fingerprint(app: &mut App) -> (i64, f64) {
        let world = app.world_mut();
        let health = world
            .query::<&Health>()
            .iter(world)
            .map(|h| i64::from(h.0))
            .sum();
        let pos = world
            .query::<&Pos>()
            .iter(world)
            .map(|p| f64::from(p.x) + f64::from(p.y))
            .sum();
        (health, pos)
    }

    /// The bytes bevy_ggrs keeps for one frame's component snapshots:
    /// one hashbrown `HashMap<RollbackId, T>` of `n` entries per
    /// component (capacity the next power of two over 8/7 n, a control
    /// byte per bucket), not counting its entity and `RollbackOrdered`
    /// snapshots.
    pub fn bytes_per_snapshot(n: usize) -> usize {
        let buckets = (n * 8).div_ceil(7).next_power_of_two();
        let id = size_of::<bevy_ggrs::RollbackId>();
        let entries: usize = [
            size_of::<Pos>(),
            size_of::<Vel>(),
            size_of::<Health>(),
            size_of::<Team>(),
            size_of::<Slot>(),
            size_of::<Weapon>(),
        ]
        .iter()
        .map(|&t| buckets * ((id + t).next_multiple_of(id.max(4)) + 1))
        .sum();
        entries
    }
}

/// The floor: the six columns as plain vectors, cloned into a warm copy.
#[derive(Clone, Default)]
pub struct Columns {
    pub pos: Vec<Pos>,
    pub vel: Vec<Vel>,
    pub health: Vec<Health>,
    pub team: Vec<Team>,
    pub slot: Vec<Slot>,
    pub weapon: Vec<Weapon>,
}

impl Columns {
    pub fn new(n: usize) -> Self {
        let mut columns = Columns::default();
        for i in 0..n {
            let (pos, vel, health, team, slot, weapon) = units::unit(i, n);
            columns.pos.push(pos);
            columns.vel.push(vel);
            columns.health.push(health);
            columns.team.push(team);
            columns.slot.push(slot);
            columns.weapon.push(weapon);
        }
        columns
    }

    pub fn copy_from(&mut self, from: &Columns) {
        self.pos.clone_from(&from.pos);
        self.vel.clone_from(&from.vel);
        self.health.clone_from(&from.health);
        self.team.clone_from(&from.team);
        self.slot.clone_from(&from.slot);
        self.weapon.clone_from(&from.weapon);
    }

    /// The bytes of the six columns' values.
    pub fn value_bytes(&self) -> usize {
        self.pos.len() * size_of::<Pos>()
            + self.vel.len() * size_of::<Vel>()
            + self.health.len() * size_of::<Health>()
            + self.team.len() * size_of::<Team>()
            + self.slot.len() * size_of::<Slot>()
            + self.weapon.len() * size_of::<Weapon>()
    }
}

/// A rollback buffer of 9 frames (0 to 8) filled the way a session fills
/// it, on `world` restored to frame 0's state first.
pub fn sluice_rollback_buffer(world: &mut World) -> RollbackBuffer {
    let mut buffer = RollbackBuffer::new((ROLLBACK_FRAMES + 1) as usize);
    buffer.save(0, world).expect("save frame 0");
    for frame in 1..=ROLLBACK_FRAMES {
        world.run_iteration().expect("frame");
        buffer.save(frame, world).expect("save");
    }
    buffer
}

/// One 8-frame rollback: back to frame 0, then frames 1 to 8 again.
pub fn sluice_rollback8(world: &mut World, buffer: &mut RollbackBuffer) {
    buffer.load(0, world).expect("load frame 0");
    for frame in 1..=ROLLBACK_FRAMES {
        world.run_iteration().expect("frame");
        buffer.save(frame, world).expect("save");
    }
}

pub fn ggrs_rollback8(app: &mut bevy19::app::App) {
    ggrs_side::load(app, 0);
    for frame in 1..=ROLLBACK_FRAMES as i32 {
        ggrs_side::advance(app);
        ggrs_side::save(app, frame);
    }
}

/// Checks that both sides hold and simulate the same units.
pub fn check_same(n: usize, threads: usize) {
    let mut world = sluice_world(n, threads);
    let mut app = ggrs_side::app(n, false);
    assert_eq!(
        sluice_fingerprint(&mut world),
        ggrs_side::fingerprint(&mut app),
        "built"
    );
    let mut buffer = sluice_rollback_buffer(&mut world);
    for frame in 1..=ROLLBACK_FRAMES as i32 {
        ggrs_side::advance(&mut app);
        ggrs_side::save(&mut app, frame);
    }
    let after_eight = sluice_fingerprint(&mut world);
    assert_eq!(after_eight, ggrs_side::fingerprint(&mut app), "8 frames");
    sluice_rollback8(&mut world, &mut buffer);
    ggrs_rollback8(&mut app);
    assert_eq!(
        sluice_fingerprint(&mut world),
        after_eight,
        "sluice rollback"
    );
    assert_eq!(
        ggrs_side::fingerprint(&mut app),
        after_eight,
        "ggrs rollback"
    );
}

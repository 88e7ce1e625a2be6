//! `battle`: a faithful subset of sluice-game's frame, written twice, once
//! on sluice ([`sluice`]) and once on bevy_ecs 0.20 ([`bevy`]), so the two
//! ECSs can be timed on the same game and checked to reach the same outcome.
//!
//! The subset is the part of the game's frame that costs: physics (units
//! move along their velocity, guns reload), one spatial grid per team
//! (rebuilt each frame by a counting sort), steering by neighbours on those
//! grids (every unit, in parallel, looks for the nearest enemy within
//! [`SENSE`] and the nearest friend within [`PERSONAL`], chases the one and
//! keeps clear of the other, and a loaded gun takes the enemy as its target
//! when it is within [`RANGE`]), shots as `Damage` messages, and deaths:
//! the dead are despawned and respawned at their base through `Commands`.
//! Captains, terrain, navigation, the feeders, scripts and particles are
//! left out. The neighbour search is most of the frame, as in the game.
//!
//! Everything here is shared: the layout, the components, the grid, the
//! rules (pure functions) and the outcome. The two sides differ only in
//! the ECS and scheduler code. Every reduction is order-independent (a
//! nearest neighbour is the least (distance, serial), damage is an integer
//! sum, the checksum a wrapping sum), so neither the order an ECS iterates
//! in nor its thread count changes the outcome: both sides, at any thread
//! count, reach the same [`Outcome`] bit for bit.

pub mod bevy;
pub mod sluice;

use bevy_ecs::component::Component;
use bevy_ecs::resource::Resource;
pub use sluice_game::math::{Vec2, in_disk, mix};

/// How far a gun reaches; also the grid's cell size.
pub const RANGE: f32 = 8.0;
/// How far a unit sees enemies to chase.
pub const SENSE: f32 = RANGE;
/// How close a friend may come before a unit steers away from it.
pub const PERSONAL: f32 = 3.0;
/// Steps between two shots of one gun.
pub const RELOAD: u16 = 30;
/// Hit points of a fresh unit.
pub const FULL_HEALTH: i32 = 100;
/// How fast units run, world units per second.
pub const UNIT_SPEED: f32 = 90.0;
/// The physics step: one per frame, at 60 Hz.
pub const STEP: f32 = 1.0 / 60.0;
/// Frames after which the armies are in contact (they start 200 world
/// units apart, closing at up to twice [`UNIT_SPEED`], slower while they
/// accelerate and keep clear of each other).
pub const WARM_UP_FRAMES: u64 = 150;

/// Where things are for a battle of `units`: the arena grows with the
/// square root of the head count, so the density in the fight, and so the
/// work per unit, is the same at every size.
#[derive(Debug, Clone, Copy, PartialEq, Resource)]
pub struct Layout {
    /// Units at the start, half per team; also the serial stride of a
    /// respawn.
    pub units: u64,
    /// Grid cells on a side.
    pub dim: usize,
    /// The arena is this many world units on a side.
    pub arena: f32,
    /// Units spawn within this radius of their base.
    pub spawn_radius: f32,
    /// Formation slots lie within this radius of the arena's centre.
    pub slot_radius: f32,
    /// Each base is this far from the centre.
    pub base_offset: f32,
}

impl Layout {
    /// The layout for `units` units (20,000 in an arena of 1,024 units).
    pub fn new(units: usize) -> Self {
        let scale = (units.max(2) as f32 / 20_000.0).sqrt().max(0.25);
        let dim = (1024.0 * scale / RANGE).ceil() as usize;
        let spawn_radius = 96.0 * scale;
        Self {
            units: units as u64,
            dim,
            arena: dim as f32 * RANGE,
            spawn_radius,
            slot_radius: 120.0 * scale,
            base_offset: spawn_radius + 100.0,
        }
    }

    /// The middle of the arena, where the armies meet.
    pub fn centre(&self) -> Vec2 {
        Vec2::new(self.arena * 0.5, self.arena * 0.5)
    }

    /// The middle of `team`'s base.
    pub fn base(&self, team: u8) -> Vec2 {
        let side = if team == 0 { -1.0 } else { 1.0 };
        self.centre() + Vec2::new(side * self.base_offset, 0.0)
    }

    /// The grid cell of `at`, clamped into the arena.
    fn cell(&self, at: Vec2) -> (usize, usize) {
        let last = (self.dim - 1) as f32;
        let x = (at.x / RANGE).clamp(0.0, last) as usize;
        let y = (at.y / RANGE).clamp(0.0, last) as usize;
        (x, y)
    }
}

/// Where a unit is.
#[derive(Debug, Clone, Copy, Default, PartialEq, Component)]
pub struct Pos(pub Vec2);

/// How fast a unit moves, world units per second.
#[derive(Debug, Clone, Copy, Default, PartialEq, Component)]
pub struct Vel(pub Vec2);

/// Hit points; at zero or below the unit dies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Component)]
pub struct Health(pub i32);

/// 0 (red) or 1 (blue).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Component)]
pub struct Team(pub u8);

/// A unit's place in the formation, as an offset from the centre.
#[derive(Debug, Clone, Copy, Default, PartialEq, Component)]
pub struct Slot(pub Vec2);

/// A unit's number, the same in both ECSs (their entity ids are not): it
/// seeds the unit, breaks ties between neighbours and keys the checksum.
/// Its parity is the team; a respawn gets `serial + units`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Component)]
pub struct Serial(pub u64);

/// A unit's gun: steps until it can fire again, and whom it aims at this
/// frame (an entity of the ECS it lives in).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Component)]
pub struct Weapon<E: Send + Sync + 'static> {
    /// Steps until the next shot.
    pub cooldown: u16,
    /// The enemy chosen this frame, if any.
    pub target: Option<E>,
}

/// The score so far.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Resource)]
pub struct Score {
    /// Kills by each team.
    pub kills: [u64; 2],
    /// Damage messages applied.
    pub hits: u64,
}

/// Everything a unit is made of, with `E` the ECS's entity.
pub type Unit<E> = (Pos, Vel, Health, Team, Slot, Serial, Weapon<E>);

/// The fresh unit numbered `serial`.
pub fn unit<E: Send + Sync + 'static>(serial: u64, layout: &Layout) -> Unit<E> {
    let team = (serial % 2) as u8;
    let hash = mix(serial);
    (
        Pos(layout.base(team) + in_disk(hash ^ 1, layout.spawn_radius)),
        Vel::default(),
        Health(FULL_HEALTH),
        Team(team),
        Slot(in_disk(hash ^ 2, layout.slot_radius)),
        Serial(serial),
        Weapon {
            cooldown: (hash % u64::from(RELOAD)) as u16,
            target: None,
        },
    )
}

/// The serial of the unit that replaces the dead `serial` (same team).
pub fn respawn_serial(serial: u64, layout: &Layout) -> u64 {
    serial + layout.units.max(2)
}

/// How hard the gun of unit `shooter` hits.
pub fn damage(shooter: Serial) -> i32 {
    20 + (mix(shooter.0) % 16) as i32
}

/// One step of movement: along the velocity, kept in the arena.
pub fn integrate(pos: &mut Pos, vel: Vel, layout: &Layout) {
    pos.0 = (pos.0 + vel.0 * STEP).clamp(0.0, layout.arena - 0.01);
}

/// One step of reloading.
pub fn reload<E: Send + Sync + 'static>(weapon: &mut Weapon<E>) {
    weapon.cooldown = weapon.cooldown.saturating_sub(1);
}

/// One unit in a grid.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Member<E> {
    /// Its entity.
    pub entity: E,
    /// Its serial.
    pub serial: Serial,
    /// Where it is.
    pub at: Vec2,
}

/// The nearest member found by [`Grid::nearest`], with its squared
/// distance.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Nearest<E> {
    /// The member.
    pub member: Member<E>,
    /// Its squared distance.
    pub distance_squared: f32,
}

/// One team's units bucketed by cell of [`RANGE`] units, rebuilt each
/// frame by a counting sort.
#[derive(Debug, Clone)]
pub struct Grid<E> {
    dim: usize,
    starts: Vec<u32>,
    keyed: Vec<(u32, Member<E>)>,
    members: Vec<Member<E>>,
}

impl<E: Copy> Grid<E> {
    /// An empty grid for `layout`.
    pub fn new(layout: &Layout) -> Self {
        Self {
            dim: layout.dim,
            starts: vec![0; layout.dim * layout.dim + 1],
            keyed: Vec::new(),
            members: Vec::new(),
        }
    }

    /// Buckets `units` (in any order) by cell.
    pub fn rebuild(&mut self, layout: &Layout, units: impl Iterator<Item = Member<E>>) {
        self.keyed.clear();
        self.keyed.extend(units.map(|member| {
            let (x, y) = layout.cell(member.at);
            ((y * self.dim + x) as u32, member)
        }));
        self.starts.fill(0);
        for &(key, _) in &self.keyed {
            self.starts[key as usize + 1] += 1;
        }
        for index in 1..self.starts.len() {
            self.starts[index] += self.starts[index - 1];
        }
        self.members.clear();
        let Some(&(_, filler)) = self.keyed.first() else {
            return;
        };
        // Every slot is overwritten below; the filler only sizes the vector.
        self.members.resize(self.keyed.len(), filler);
        for &(key, member) in &self.keyed {
            let slot = &mut self.starts[key as usize];
            self.members[*slot as usize] = member;
            *slot += 1;
        }
        // Each start moved to its bucket's end: shift back by one bucket.
        let buckets = self.starts.len() - 1;
        self.starts.copy_within(0..buckets, 1);
        self.starts[0] = 0;
    }

    /// Units in the grid.
    pub fn len(&self) -> usize {
        self.members.len()
    }

    /// Whether the grid holds no unit.
    pub fn is_empty(&self) -> bool {
        self.members.is_empty()
    }

    /// The nearest member within `radius` of `at` other than `except`, the
    /// lower serial first among equals: the same whatever order the grid
    /// holds its members in.
    pub fn nearest(
        &self,
        layout: &Layout,
        at: Vec2,
        radius: f32,
        except: Serial,
    ) -> Option<Nearest<E>> {
        let (x0, y0) = layout.cell(at - Vec2::new(radius, radius));
        let (x1, y1) = layout.cell(at + Vec2::new(radius, radius));
        let mut best: Option<Nearest<E>> = None;
        for y in y0..=y1 {
            let row = y * self.dim;
            let first = self.starts[row + x0] as usize;
            let last = self.starts[row + x1 + 1] as usize;
            for member in &self.members[first..last] {
                let distance_squared = (member.at - at).length_squared();
                if distance_squared > radius * radius || member.serial == except {
                    continue;
                }
                let closer = best.is_none_or(|best| {
                    distance_squared
                        .total_cmp(&best.distance_squared)
                        .then(member.serial.cmp(&best.member.serial))
                        .is_lt()
                });
                if closer {
                    best = Some(Nearest {
                        member: *member,
                        distance_squared,
                    });
                }
            }
        }
        best
    }
}

/// What a unit decides from its neighbours: its new velocity, and the
/// enemy its gun takes if loaded.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Decision<E> {
    /// The velocity to run at.
    pub vel: Vel,
    /// The nearest enemy within [`RANGE`], if any.
    pub in_range: Option<E>,
}

/// Steering by neighbours: the unit at `pos` chases the nearest enemy
/// within [`SENSE`] to half a gun's reach (or heads for its formation slot
/// when it sees none),
/// keeps clear of the nearest friend within [`PERSONAL`], and eases into
/// the new velocity.
#[allow(clippy::too_many_arguments)]
pub fn decide<E: Copy>(
    layout: &Layout,
    pos: Pos,
    vel: Vel,
    slot: Slot,
    serial: Serial,
    friends: &Grid<E>,
    enemies: &Grid<E>,
) -> Decision<E> {
    let enemy = enemies.nearest(layout, pos.0, SENSE, serial);
    let friend = friends.nearest(layout, pos.0, PERSONAL, serial);
    // An enemy is closed in on to half a gun's reach, a slot all the way.
    let (goal, reach) = enemy.map_or((layout.centre() + slot.0, 0.0), |enemy| {
        (enemy.member.at, RANGE * 0.5)
    });
    let toward = goal - pos.0;
    let urgency = ((toward.length() - reach) / 32.0).clamp(0.0, 1.0);
    let away = friend.map_or(Vec2::ZERO, |friend| {
        (pos.0 - friend.member.at).normalized_or_zero() * 0.5
    });
    let desired = (toward.normalized_or_zero() + away) * (UNIT_SPEED * urgency);
    Decision {
        vel: Vel(vel.0 * 0.85 + desired * 0.15),
        in_range: enemy
            .filter(|enemy| enemy.distance_squared <= RANGE * RANGE)
            .map(|enemy| enemy.member.entity),
    }
}

/// A loaded gun takes `in_range` as its target and starts reloading; every
/// gun forgets last frame's target.
pub fn aim<E: Send + Sync + Copy + 'static>(weapon: &mut Weapon<E>, in_range: Option<E>) {
    weapon.target = None;
    if weapon.cooldown == 0
        && let Some(enemy) = in_range
    {
        weapon.target = Some(enemy);
        weapon.cooldown = RELOAD;
    }
}

/// What a battle came to: the same for both ECSs at any thread count.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Outcome {
    /// Units alive per team.
    pub alive: [u64; 2],
    /// Of them, those below full health.
    pub wounded: [u64; 2],
    /// The score.
    pub score: Score,
    /// A wrapping sum over the units of a hash of each one's serial,
    /// position, velocity, health and cooldown (exact bits).
    pub checksum: u64,
}

impl Outcome {
    /// Counts one unit in.
    pub fn add<E: Send + Sync + 'static>(
        &mut self,
        serial: Serial,
        pos: Pos,
        vel: Vel,
        health: Health,
        weapon: &Weapon<E>,
    ) {
        let team = (serial.0 % 2) as usize;
        self.alive[team] += 1;
        if health.0 < FULL_HEALTH {
            self.wounded[team] += 1;
        }
        let bits = [
            pos.0.x.to_bits(),
            pos.0.y.to_bits(),
            vel.0.x.to_bits(),
            vel.0.y.to_bits(),
            health.0 as u32,
            u32::from(weapon.cooldown),
        ];
        let unit = bits
            .iter()
            .fold(mix(serial.0), |hash, &bits| mix(hash ^ u64::from(bits)));
        self.checksum = self.checksum.wrapping_add(unit);
    }
}

/// A battle on one ECS, for the benches and the outcome test.
pub trait Battle {
    /// Runs one frame.
    fn frame(&mut self);
    /// What the battle has come to so far.
    fn outcome(&mut self) -> Outcome;
}

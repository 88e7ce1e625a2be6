//! Units: the entities that fight. Two teams, each led by a few frozen
//! captains that every unit follows through a [`ComponentRef`].

use std::sync::atomic::{AtomicU64, Ordering};

use sluice::{ComponentRef, Entity, World};

use crate::math::{Vec2, in_disk, mix};

/// The arena is this many world units on a side.
pub const ARENA: f32 = 1024.0;
/// Captains per team; a unit follows captain `seed % CAPTAINS`.
pub const CAPTAINS: usize = 4;
/// Hit points of a fresh unit.
pub const FULL_HEALTH: i32 = 100;

/// Where a unit is.
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Pos(pub Vec2);

/// How fast a unit moves, world units per second.
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Vel(pub Vec2);

/// Hit points; at zero or below the unit dies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Health(pub i32);

/// 0 (red, the player's) or 1 (blue, the network peer's).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Team(pub u8);

/// A unit's place in its captain's formation, as an offset from the captain.
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Slot(pub Vec2);

/// A unit's gun: fixed steps until it can fire again, and whom it aims at
/// this frame.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Weapon {
    /// Fixed steps until the next shot.
    pub cooldown: u16,
    /// The enemy chosen this frame, if any.
    pub target: Option<Entity>,
}

/// A captain: a frozen entity with a [`Pos`] that the units of its team
/// follow.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Captain {
    /// Its team.
    pub team: u8,
    /// Its number within the team, `0..CAPTAINS`.
    pub index: u8,
}

/// The captains of both teams: their entities and the references units
/// hold to their positions.
#[derive(Debug)]
pub struct Captains {
    /// Per team, per captain.
    pub entities: [[Entity; CAPTAINS]; 2],
    /// Per team, per captain: what a unit of that captain holds.
    pub refs: [[ComponentRef<Pos>; CAPTAINS]; 2],
}

/// Everything a unit is made of.
pub type Unit = (Pos, Vel, Health, Team, Slot, Weapon, ComponentRef<Pos>);

/// The middle of `team`'s base, where its units spawn.
pub fn base(team: u8) -> Vec2 {
    if team == 0 {
        Vec2::new(ARENA * 0.25, ARENA * 0.5)
    } else {
        Vec2::new(ARENA * 0.75, ARENA * 0.5)
    }
}

/// A fresh unit of `team`, placed and assigned by `seed`.
pub fn unit(seed: u64, team: u8, captains: &Captains) -> Unit {
    let hash = mix(seed);
    let captain = (hash % CAPTAINS as u64) as usize;
    (
        Pos(base(team) + in_disk(hash ^ 1, 96.0)),
        Vel::default(),
        Health(FULL_HEALTH),
        Team(team),
        Slot(in_disk(hash ^ 2, 120.0)),
        Weapon {
            cooldown: (hash % 30) as u16,
            target: None,
        },
        captains.refs[usize::from(team)][captain],
    )
}

/// Spawns both teams' captains (frozen) and `count` units, half per team,
/// and returns the captains.
pub fn spawn_armies(world: &mut World, count: usize) -> Captains {
    let entities = [0u8, 1].map(|team| {
        std::array::from_fn(|index| {
            let at = base(team) + Vec2::new(0.0, (index as f32 - 1.5) * 160.0);
            let captain = world.spawn((
                Pos(at),
                Captain {
                    team,
                    index: index as u8,
                },
            ));
            world.freeze(captain).expect("just spawned");
            captain
        })
    });
    let refs = entities.map(|team| {
        team.map(|captain| ComponentRef::new(&*world, captain).expect("frozen, with a Pos"))
    });
    let captains = Captains { entities, refs };
    world.spawn_batch((0..count as u64).map(|seed| unit(seed, (seed % 2) as u8, &captains)));
    captains
}

/// Each team's head count, taken at the end of every frame.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Census {
    /// Units alive per team.
    pub alive: [u64; 2],
    /// Of them, those below full health.
    pub wounded: [u64; 2],
}

/// Counts both teams, in parallel slices: each thread taking part counts
/// into its own tally and adds it to the totals once, when it is done.
#[sluice::system(phase = PostUpdate, stage = "Present", group = "Effects")]
pub fn take_census(mut units: sluice::Query<(&Team, &Health)>, census: &mut Census) {
    let totals = Totals::default();
    units.par_for_each_init(
        || Tally {
            counted: Census::default(),
            totals: &totals,
        },
        |tally, (team, health)| {
            let team = usize::from(team.0);
            tally.counted.alive[team] += 1;
            if health.0 < FULL_HEALTH {
                tally.counted.wounded[team] += 1;
            }
        },
    );
    *census = Census {
        alive: totals.alive.map(AtomicU64::into_inner),
        wounded: totals.wounded.map(AtomicU64::into_inner),
    };
}

/// A census being added up by the threads that took part.
#[derive(Default)]
struct Totals {
    alive: [AtomicU64; 2],
    wounded: [AtomicU64; 2],
}

/// One thread's part of a census, added to the totals when it drops (when
/// the thread has no slice left).
struct Tally<'a> {
    counted: Census,
    totals: &'a Totals,
}

impl Drop for Tally<'_> {
    fn drop(&mut self) {
        for team in 0..2 {
            let (alive, wounded) = (self.counted.alive[team], self.counted.wounded[team]);
            self.totals.alive[team].fetch_add(alive, Ordering::Relaxed);
            self.totals.wounded[team].fetch_add(wounded, Ordering::Relaxed);
        }
    }
}

/// The plugin of the head count taken at the end of every frame (the armies spawn with the scene: `spawn_armies`).
#[derive(Debug, Default)]
pub struct UnitsPlugin;

impl sluice::plugin::Plugin for UnitsPlugin {
    fn requires(&self) -> sluice::plugin::Requires {
        use sluice::plugin::Requires;
        Requires::new().plugin::<crate::FramePlugin>()
    }

    fn build(&self, world: &mut sluice::World) {
        world.insert(Census::default());
        world.add_system(take_census);
    }
}

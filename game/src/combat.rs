//! Combat: a spatial grid of the units, guns that pick the nearest enemy in
//! range, damage sent as messages (`Publish<Damage>`, read once by
//! `Subscribe<Damage>`), and deaths: the dead are despawned and respawned
//! at their base through `Commands`, and each death is a `Died` message for
//! the particles.

use std::sync::atomic::{AtomicU64, Ordering};

use sluice::{Commands, Entity, Publish, Query, Subscribe, run_condition, system};

use crate::feed::InputState;
use crate::math::{Vec2, mix};
use crate::units::{ARENA, Captains, Health, Pos, Team, Weapon, unit};

/// How far a gun reaches, in world units (also the grid's cell size).
pub const RANGE: f32 = 8.0;
/// Fixed steps between two shots of one gun.
pub const RELOAD: u16 = 30;
/// How far an airstrike lands ahead of red's rally point.
pub const STRIKE_AHEAD: f32 = 96.0;
/// An airstrike's radius.
pub const STRIKE_RADIUS: f32 = 24.0;
const GRID_DIM: usize = (ARENA / RANGE) as usize;

/// A hit: `amount` off `target`'s health.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Damage {
    /// Who is hit.
    pub target: Entity,
    /// How hard.
    pub amount: i32,
}

/// A unit died here.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Died {
    /// Where.
    pub at: Vec2,
    /// Its team.
    pub team: u8,
}

/// The score so far.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Score {
    /// Kills by each team.
    pub kills: [u64; 2],
    /// Hits landed (damage messages applied to a living unit).
    pub hits: u64,
    /// Airstrikes called.
    pub strikes: u64,
}

/// One unit in the grid.
#[derive(Debug, Clone, Copy)]
struct Cell {
    entity: Entity,
    at: Vec2,
}

/// The units of team `TEAM` bucketed by grid cell of [`RANGE`] units,
/// rebuilt each frame by a counting sort (units of one cell in query
/// order). One grid per team, so the two are built in parallel and a gun
/// searches only its enemies' grid.
#[derive(Debug)]
pub struct Grid<const TEAM: u8> {
    /// Where each cell's units begin in `units`; one more entry than
    /// cells, the last `units.len()`.
    starts: Vec<u32>,
    /// The staged units' cells, by staging order (scratch).
    keys: Vec<u32>,
    /// The team's units in query order (scratch).
    staged: Vec<Cell>,
    /// The team's units by cell, query order within a cell.
    units: Vec<Cell>,
}

impl<const TEAM: u8> Default for Grid<TEAM> {
    fn default() -> Self {
        Self {
            starts: vec![0; GRID_DIM * GRID_DIM + 1],
            keys: Vec::new(),
            staged: Vec::new(),
            units: Vec::new(),
        }
    }
}

/// Red's units by cell.
pub type RedGrid = Grid<0>;
/// Blue's units by cell.
pub type BlueGrid = Grid<1>;

fn grid_cell(at: Vec2) -> (usize, usize) {
    let x = (at.x / RANGE).clamp(0.0, (GRID_DIM - 1) as f32) as usize;
    let y = (at.y / RANGE).clamp(0.0, (GRID_DIM - 1) as f32) as usize;
    (x, y)
}

impl<const TEAM: u8> Grid<TEAM> {
    fn key(at: Vec2) -> u32 {
        let (x, y) = grid_cell(at);
        (y * GRID_DIM + x) as u32
    }

    /// Every unit within `radius` of `at`.
    fn around(&self, at: Vec2, radius: f32) -> impl Iterator<Item = &Cell> {
        let (x0, y0) = grid_cell(at - Vec2::new(radius, radius));
        let (x1, y1) = grid_cell(at + Vec2::new(radius, radius));
        (y0..=y1).flat_map(move |y| {
            let row = y * GRID_DIM;
            let (first, last) = (
                self.starts[row + x0] as usize,
                self.starts[row + x1 + 1] as usize,
            );
            self.units[first..last]
                .iter()
                .filter(move |unit| (unit.at - at).length_squared() <= radius * radius)
        })
    }

    /// The nearest unit within [`RANGE`] of `at`, ties broken by the lower
    /// entity id.
    ///
    /// Plain loops rather than `around(..).min_by(..)`: the iterator chain
    /// kept its state in memory and read it back wider than it wrote it,
    /// which stalls the load until the stores reach the cache (see
    /// `benches/tools/store_forwarding.py`), a few times per gun.
    fn nearest(&self, at: Vec2) -> Option<Entity> {
        let (x0, y0) = grid_cell(at - Vec2::new(RANGE, RANGE));
        let (x1, y1) = grid_cell(at + Vec2::new(RANGE, RANGE));
        let mut nearest: Option<(f32, Entity)> = None;
        for y in y0..=y1 {
            let row = y * GRID_DIM;
            let cells = self.starts[row + x0] as usize..self.starts[row + x1 + 1] as usize;
            for unit in &self.units[cells] {
                let distance = (unit.at - at).length_squared();
                if distance > RANGE * RANGE {
                    continue;
                }
                let closer = nearest.is_none_or(|(best, entity)| {
                    distance
                        .total_cmp(&best)
                        .then(unit.entity.cmp(&entity))
                        .is_lt()
                });
                if closer {
                    nearest = Some((distance, unit.entity));
                }
            }
        }
        nearest.map(|(_, entity)| entity)
    }
}

/// Buckets team `TEAM`'s units by cell (registered once per team).
///
/// One pass over the query stages the team's units beside their keys;
/// the sort then reads only the staged vectors (a second walk over every
/// unit of both teams cost as much as the whole sort).
pub fn build_grid<const TEAM: u8>(mut units: Query<(Entity, &Pos, &Team)>, grid: &mut Grid<TEAM>) {
    let Grid {
        starts,
        keys,
        staged,
        units: cells,
    } = grid;
    keys.clear();
    staged.clear();
    units.for_each(|(entity, pos, team)| {
        if team.0 == TEAM {
            keys.push(Grid::<TEAM>::key(pos.0));
            staged.push(Cell { entity, at: pos.0 });
        }
    });
    starts.fill(0);
    for &key in keys.iter() {
        starts[key as usize + 1] += 1;
    }
    // The running sum in a register: `starts[i] += starts[i - 1]` read back
    // each store it had just made, one store-forwarding wait a cell.
    let mut sum = 0;
    for start in starts.iter_mut() {
        sum += *start;
        *start = sum;
    }
    let Some(&filler) = staged.first() else {
        cells.clear();
        return;
    };
    // Every slot is overwritten below; the filler only sizes the vector
    // (and is written only where it grows).
    cells.truncate(staged.len());
    cells.resize(staged.len(), filler);
    for (&cell, &key) in staged.iter().zip(keys.iter()) {
        let slot = &mut starts[key as usize];
        cells[*slot as usize] = cell;
        *slot += 1;
    }
    // Each start moved to its bucket's end: shift back by one bucket.
    let buckets = starts.len() - 1;
    starts.copy_within(0..buckets, 1);
    starts[0] = 0;
}

/// Every loaded gun (in parallel slices) picks the nearest enemy in range,
/// ties broken by the lower entity id, and starts reloading.
#[system(stage = "Fight", group = "Combat")]
pub fn aim(red: &RedGrid, blue: &BlueGrid, mut guns: Query<(&Pos, &Team, &mut Weapon)>) {
    guns.par_for_each(|(pos, team, mut weapon)| {
        weapon.target = None;
        if weapon.cooldown > 0 {
            return;
        }
        let nearest = match team.0 {
            0 => blue.nearest(pos.0),
            _ => red.nearest(pos.0),
        };
        if let Some(enemy) = nearest {
            weapon.target = Some(enemy);
            weapon.cooldown = RELOAD;
        }
    });
}

/// Every gun with a target fires (in parallel slices): one `Damage` message
/// per shot, landing in row order whatever the thread count.
#[system(stage = "Fight", group = "Combat", after = "aim")]
pub fn fire(mut guns: Query<(Entity, &Weapon)>, hits: Publish<Damage>) {
    guns.par_for_each(|(shooter, weapon)| {
        if let Some(target) = weapon.target {
            hits.send(Damage {
                target,
                amount: 20 + (mix(shooter.id()) % 16) as i32,
            });
        }
    });
}

/// Only on frames where the player called an airstrike.
#[run_condition]
pub fn striking(input: &InputState) -> bool {
    input.strike
}

/// An airstrike ahead of red's rally point hits every blue unit near it.
#[system(stage = "Fight", group = "Combat", run_if = striking)]
pub fn airstrike(input: &InputState, blue: &BlueGrid, hits: Publish<Damage>, score: &mut Score) {
    score.strikes += 1;
    let at = input.rally + Vec2::new(STRIKE_AHEAD, 0.0);
    for unit in blue.around(at, STRIKE_RADIUS) {
        hits.send(Damage {
            target: unit.entity,
            amount: 60,
        });
    }
}

/// Applies this frame's hits, in message order.
#[system(stage = "Resolve", group = "Combat")]
pub fn apply_damage(mut hits: Subscribe<Damage>, mut units: Query<&mut Health>, score: &mut Score) {
    for hit in hits.unread() {
        if let Ok(mut health) = units.get_mut(hit.target)
            && health.0 > 0
        {
            health.0 -= hit.amount;
            score.hits += 1;
        }
    }
}

/// The dead leave (despawned at the boundary), a fresh unit of the same
/// team spawns at its base, and a `Died` message goes to the particles.
/// The units are looked at in parallel slices; the commands and messages
/// land in row order whatever the thread count, and the kills (a few a
/// frame) are counted on two atomics.
#[system(stage = "Resolve", group = "Combat", after = "apply_damage")]
pub fn reap(
    mut units: Query<(Entity, &Health, &Team, &Pos)>,
    captains: &Captains,
    deaths: Publish<Died>,
    score: &mut Score,
    commands: Commands<'_>,
) {
    let kills = [AtomicU64::new(0), AtomicU64::new(0)];
    units.par_for_each(|(entity, health, team, pos)| {
        if health.0 <= 0 {
            commands.despawn(entity);
            commands.spawn(unit(mix(entity.id()), team.0, captains));
            deaths.send(Died {
                at: pos.0,
                team: team.0,
            });
            kills[usize::from(1 - team.0)].fetch_add(1, Ordering::Relaxed);
        }
    });
    for (score, kills) in score.kills.iter_mut().zip(kills) {
        *score += kills.into_inner();
    }
}

/// The plugin of targeting grids, aiming, firing, air strikes, damage and deaths.
#[derive(Debug, Default)]
pub struct CombatPlugin;

impl sluice::plugin::Plugin for CombatPlugin {
    fn requires(&self) -> sluice::plugin::Requires {
        use sluice::plugin::Requires;
        Requires::new()
            .plugin::<crate::FramePlugin>()
            .plugin::<crate::feed::FeedPlugin>()
    }

    fn build(&self, world: &mut sluice::World) {
        world.insert(RedGrid::default());
        world.insert(BlueGrid::default());
        world.insert(Score::default());
        let grid = |name| {
            sluice::NodeBuilder::new(name)
                .in_stage("Think")
                .in_group("Combat")
                .after("lead")
        };
        world.add_system(grid("build_grid#red").system(build_grid::<0>));
        world.add_system(grid("build_grid#blue").system(build_grid::<1>));
        world.add_system(aim);
        world.add_system(fire);
        world.add_system(airstrike);
        world.add_system(apply_damage);
        world.add_system(reap);
    }
}

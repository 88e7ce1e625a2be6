//! Navigation: the terrain (a grid of walls that streamed assets change) and
//! a flow field per team built from it by a factory, which the planner skips
//! while the terrain holds still.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU32, Ordering};

use sluice::factory;

use crate::math::Vec2;
use crate::units::{ARENA, base};

/// Navigation cells per side.
pub const NAV_DIM: usize = 64;
/// World units per navigation cell.
pub const NAV_CELL: f32 = ARENA / NAV_DIM as f32;

/// The level's walls, one flag per navigation cell. Changed only when an
/// asset chunk streams in.
#[derive(Debug, Clone)]
pub struct Terrain {
    /// Bumped by every change.
    pub revision: u32,
    walls: Vec<bool>,
}

impl Terrain {
    /// The opening level: two broken walls across the middle.
    pub fn new() -> Self {
        let mut terrain = Terrain {
            revision: 0,
            walls: vec![false; NAV_DIM * NAV_DIM],
        };
        for y in 0..NAV_DIM {
            // Gaps every 12 cells so both teams can pass.
            if y % 12 >= 3 {
                terrain.set(26, y, true);
                terrain.set(37, y, true);
            }
        }
        terrain
    }

    /// The cell holding `at` (clamped into the arena).
    pub fn cell(at: Vec2) -> (usize, usize) {
        let x = (at.x / NAV_CELL).clamp(0.0, (NAV_DIM - 1) as f32) as usize;
        let y = (at.y / NAV_CELL).clamp(0.0, (NAV_DIM - 1) as f32) as usize;
        (x, y)
    }

    /// Whether cell `(x, y)` is a wall.
    pub fn is_wall(&self, x: usize, y: usize) -> bool {
        self.walls[y * NAV_DIM + x]
    }

    /// Whether the point `at` lies in a wall.
    pub fn blocked(&self, at: Vec2) -> bool {
        let (x, y) = Self::cell(at);
        self.is_wall(x, y)
    }

    /// Makes cell `(x, y)` a wall or open ground (no revision bump: the
    /// caller bumps once per change set).
    pub fn set(&mut self, x: usize, y: usize, wall: bool) {
        self.walls[y * NAV_DIM + x] = wall;
    }

    /// How many cells are walls.
    pub fn wall_count(&self) -> usize {
        self.walls.iter().filter(|&&wall| wall).count()
    }
}

impl Default for Terrain {
    fn default() -> Self {
        Self::new()
    }
}

/// How many times the navigation factory ran: with the factory skipped
/// while the terrain holds still, one more than the terrain's revisions.
#[derive(Debug, Default)]
pub struct NavBuilds(pub AtomicU32);

/// Per team, per cell: the direction towards the enemy base around walls.
#[derive(Debug, Clone)]
pub struct NavField {
    /// The terrain revision this field was built from.
    pub revision: u32,
    flow: [Vec<Vec2>; 2],
}

impl NavField {
    /// Which way `team` should go from `at` to reach the enemy.
    pub fn flow(&self, team: u8, at: Vec2) -> Vec2 {
        let (x, y) = Terrain::cell(at);
        self.flow[usize::from(team)][y * NAV_DIM + x]
    }
}

/// Rebuilds both teams' flow fields: a breadth-first search from the enemy
/// base over open cells, then each cell points at its closest neighbour.
/// A factory: skipped while `Terrain` did not change since it last ran.
#[factory(stage = "Think", group = "Ai")]
pub fn build_navfield(terrain: &Terrain, builds: &NavBuilds) -> NavField {
    builds.0.fetch_add(1, Ordering::Relaxed);
    let flow = [0u8, 1].map(|team| flow_towards(terrain, base(1 - team)));
    NavField {
        revision: terrain.revision,
        flow,
    }
}

fn flow_towards(terrain: &Terrain, goal: Vec2) -> Vec<Vec2> {
    const UNREACHED: u32 = u32::MAX;
    let mut distance = vec![UNREACHED; NAV_DIM * NAV_DIM];
    let mut queue = VecDeque::new();
    let (gx, gy) = Terrain::cell(goal);
    distance[gy * NAV_DIM + gx] = 0;
    queue.push_back((gx, gy));
    while let Some((x, y)) = queue.pop_front() {
        let next = distance[y * NAV_DIM + x] + 1;
        for (nx, ny) in neighbours(x, y) {
            let cell = ny * NAV_DIM + nx;
            if distance[cell] == UNREACHED && !terrain.is_wall(nx, ny) {
                distance[cell] = next;
                queue.push_back((nx, ny));
            }
        }
    }
    let mut flow = vec![Vec2::ZERO; NAV_DIM * NAV_DIM];
    for y in 0..NAV_DIM {
        for x in 0..NAV_DIM {
            let here = distance[y * NAV_DIM + x];
            let best = neighbours(x, y)
                .filter(|&(nx, ny)| distance[ny * NAV_DIM + nx] < here)
                .min_by_key(|&(nx, ny)| distance[ny * NAV_DIM + nx]);
            if let Some((nx, ny)) = best {
                flow[y * NAV_DIM + x] =
                    Vec2::new(nx as f32 - x as f32, ny as f32 - y as f32).normalized_or_zero();
            }
        }
    }
    flow
}

fn neighbours(x: usize, y: usize) -> impl Iterator<Item = (usize, usize)> {
    const STEPS: [(isize, isize); 4] = [(1, 0), (-1, 0), (0, 1), (0, -1)];
    STEPS.into_iter().filter_map(move |(dx, dy)| {
        let nx = x.checked_add_signed(dx)?;
        let ny = y.checked_add_signed(dy)?;
        (nx < NAV_DIM && ny < NAV_DIM).then_some((nx, ny))
    })
}

/// The plugin of the terrain and the flow-field factory.
#[derive(Debug, Default)]
pub struct NavigationPlugin;

impl sluice::plugin::Plugin for NavigationPlugin {
    fn requires(&self) -> sluice::plugin::Requires {
        use sluice::plugin::Requires;
        Requires::new().plugin::<crate::FramePlugin>()
    }

    fn build(&self, world: &mut sluice::World) {
        world.insert(Terrain::new());
        world.insert(NavBuilds::default());
        world.add_factory(build_navfield);
    }
}

//! [`RollbackGame`]: the part of the battle that rolls back, a world every
//! piece of whose changing state a snapshot captures.

use sluice::exec::ThreadPool;
use sluice::{ComponentRef, Entity, RestoreError, Snapshot, SnapshotError, World};

use crate::combat::{CombatPlugin, Score};
use crate::feed::{FeedPlugin, InputState, Orders};
use crate::navigation::NavigationPlugin;
use crate::physics::PhysicsPlugin;
use crate::report::Checksum;
use crate::rollback::input::{BattleInput, Inputs, PLAYERS, apply_inputs};
use crate::steering::SteeringPlugin;
use crate::units::{self, Captain, Census, Health, Pos, Slot, Team, UnitsPlugin, Vel, Weapon};
use crate::{FIXED_STEP, FramePlugin, GameError};

/// How a rollback battle is built.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BattleSetup {
    /// Threads of the world's pool, the calling thread included (1 runs
    /// every node on the calling thread).
    pub threads: usize,
    /// Units at the start, half per team.
    pub entities: usize,
}

impl Default for BattleSetup {
    fn default() -> Self {
        Self {
            threads: 1,
            entities: 2_000,
        }
    }
}

/// The battle of [`crate::Game`] cut down to what a snapshot captures, so
/// that it can be rolled back: the armies, [`SteeringPlugin`],
/// [`CombatPlugin`], [`PhysicsPlugin`] and [`UnitsPlugin`] (with
/// [`FramePlugin`], [`FeedPlugin`] and [`NavigationPlugin`], which they
/// require), steered by the players' [`BattleInput`]s through
/// [`apply_inputs`].
///
/// Left out, and why:
/// - the asset stream and the feeders (`assets`, `feed`'s threads): state
///   in async tasks and other threads, which no snapshot reaches; without
///   the stream the terrain never changes, so the flow fields are built
///   once and need no capture;
/// - the wave scripts and the flow's states: durable scripts and state
///   transitions hold their progress outside components and services;
/// - the particles: a batch processor's buffer, not worth rolling back;
/// - the turrets: the hierarchy's `ChildOf` and `Children` are not `Clone`,
///   so they cannot be opted into snapshots.
///
/// Every frame is one fixed step long, so each update runs exactly one
/// physics step and no leftover time is carried between frames.
#[derive(Debug)]
pub struct RollbackGame {
    world: World,
}

impl RollbackGame {
    /// Builds the battle: the armies, the plugins above, and every
    /// component and service that changes opted into snapshots.
    ///
    /// # Errors
    /// When the pool's threads do not start.
    pub fn new(setup: &BattleSetup) -> Result<Self, GameError> {
        let pool = ThreadPool::new(setup.threads.max(1)).map_err(GameError::Pool)?;
        let mut world = World::with_pool(pool);
        world.set_fixed_timestep(FIXED_STEP);
        world
            .add_plugin(FramePlugin)
            .expect("a new world holds no plugin");
        let captains = units::spawn_armies(&mut world, setup.entities);
        world.insert(captains);
        world.insert(Inputs::default());
        world
            .add_plugins((
                FeedPlugin,
                NavigationPlugin,
                SteeringPlugin,
                CombatPlugin,
                UnitsPlugin,
                PhysicsPlugin,
            ))
            .expect("each plugin is added once");
        world
            .finish_plugins()
            .expect("every plugin the battle requires is added");
        world.add_system(apply_inputs);
        world
            .snapshot_component::<Pos>()
            .snapshot_component::<Vel>()
            .snapshot_component::<Health>()
            .snapshot_component::<Team>()
            .snapshot_component::<Slot>()
            .snapshot_component::<Weapon>()
            .snapshot_component::<ComponentRef<Pos>>()
            .snapshot_component::<Captain>()
            .snapshot_service::<Inputs>()
            .snapshot_service::<InputState>()
            .snapshot_service::<Orders>()
            .snapshot_service::<Score>()
            .snapshot_service::<Census>();
        Ok(Self { world })
    }

    /// Runs the next frame with `inputs` (player 0's, then player 1's).
    ///
    /// # Errors
    /// When the frame fails (a node panicked); the frame is not counted.
    pub fn advance(&mut self, inputs: [BattleInput; PLAYERS]) -> Result<(), GameError> {
        let frame = self.frame();
        self.inputs_mut().push(inputs);
        self.world
            .update(FIXED_STEP)
            .map_err(|error| GameError::Frame(frame, error))?;
        self.inputs_mut().frame += 1;
        Ok(())
    }

    /// Frames run so far (rewound by [`RollbackGame::restore`]).
    pub fn frame(&self) -> u64 {
        self.world.get::<Inputs>().map_or(0, |inputs| inputs.frame)
    }

    /// Captures the battle into `into`, reusing its memory.
    ///
    /// # Errors
    /// As for [`World::snapshot_into`].
    pub fn save_into(&self, into: &mut Snapshot) -> Result<(), SnapshotError> {
        self.world.snapshot_into(into)
    }

    /// Gives back the battle as `snapshot` captured it; on error nothing
    /// changed.
    ///
    /// # Errors
    /// As for [`World::restore`].
    pub fn restore(&mut self, snapshot: &Snapshot) -> Result<(), RestoreError> {
        self.world.restore(snapshot)
    }

    /// A hash of everything that rolls back: every unit's components in
    /// entity order, the captains, the score, the census, both teams'
    /// rally points and the frame counter with its inputs. The same on
    /// every thread count.
    pub fn checksum(&mut self) -> u64 {
        let mut hash = Checksum::default();
        let world = &mut self.world;
        let mut units: Vec<(Entity, Pos, Vel, Health, Team, Slot, Weapon)> = world
            .query::<(Entity, &Pos, &Vel, &Health, &Team, &Slot, &Weapon)>()
            .iter()
            .map(|(entity, pos, vel, health, team, slot, weapon)| {
                (entity, *pos, *vel, *health, *team, *slot, *weapon)
            })
            .collect();
        units.sort_by_key(|unit| unit.0);
        hash.u64(units.len() as u64);
        for (entity, pos, vel, health, team, slot, weapon) in units {
            hash.u64(entity.id());
            for value in [pos.0.x, pos.0.y, vel.0.x, vel.0.y, slot.0.x, slot.0.y] {
                hash.f32(value);
            }
            hash.u64(health.0 as u64);
            hash.u64(u64::from(team.0));
            hash.u64(u64::from(weapon.cooldown));
            hash.u64(weapon.target.map_or(u64::MAX, Entity::id));
        }
        let mut captains: Vec<(Entity, Pos)> = world
            .query::<(Entity, &Pos, &Captain)>()
            .iter()
            .map(|(entity, pos, _)| (entity, *pos))
            .collect();
        captains.sort_by_key(|captain| captain.0);
        for (entity, pos) in captains {
            hash.u64(entity.id());
            hash.f32(pos.0.x);
            hash.f32(pos.0.y);
        }
        if let Some(score) = world.get::<Score>() {
            for value in [score.kills[0], score.kills[1], score.hits, score.strikes] {
                hash.u64(value);
            }
        }
        if let Some(census) = world.get::<Census>() {
            for value in census.alive.iter().chain(&census.wounded) {
                hash.u64(*value);
            }
        }
        if let Some(input) = world.get::<InputState>() {
            hash.f32(input.rally.x);
            hash.f32(input.rally.y);
            hash.u64(u64::from(input.strike));
        }
        if let Some(orders) = world.get::<Orders>() {
            for waypoint in orders.waypoints {
                hash.f32(waypoint.x);
                hash.f32(waypoint.y);
            }
        }
        if let Some(inputs) = world.get::<Inputs>() {
            hash.u64(inputs.frame);
            for input in inputs.current.iter().chain(&inputs.previous) {
                hash.u64(u64::from(input.nudge_x as u8));
                hash.u64(u64::from(input.nudge_y as u8));
                hash.u64(u64::from(input.buttons));
            }
        }
        hash.finish()
    }

    /// One line on the battle: units alive and kills per team, airstrikes.
    pub fn summary(&self) -> String {
        let census = self.world.get::<Census>().cloned().unwrap_or_default();
        let score = self.world.get::<Score>().cloned().unwrap_or_default();
        format!(
            "frame {}: alive red {} blue {}; kills red {} blue {}; hits {}; airstrikes {}",
            self.frame(),
            census.alive[0],
            census.alive[1],
            score.kills[0],
            score.kills[1],
            score.hits,
            score.strikes
        )
    }

    /// The world.
    pub fn world(&self) -> &World {
        &self.world
    }

    /// The world, to query.
    pub fn world_mut(&mut self) -> &mut World {
        &mut self.world
    }

    fn inputs_mut(&mut self) -> &mut Inputs {
        self.world
            .get_mut::<Inputs>()
            .expect("the battle inserts its Inputs when it is built")
    }
}

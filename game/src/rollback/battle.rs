//! [`RollbackGame`]: the part of the battle that rolls back, a world every
//! piece of whose changing state a snapshot captures.

use sluice::{RestoreError, Snapshot, SnapshotError, World};

use crate::combat::{CombatPlugin, Score};
use crate::feed::{FeedPlugin, InputState, Orders};
use crate::navigation::NavigationPlugin;
use crate::physics::PhysicsPlugin;
use crate::rollback::input::{BattleInput, Inputs, PLAYERS, apply_inputs};
use crate::scripts::{DirectorLog, ScriptsPlugin};
use crate::steering::SteeringPlugin;
use crate::turrets::{Turret, TurretsPlugin};
use crate::units::{Captain, Census, Health, Pos, Slot, Team, UnitsPlugin, Vel, Weapon};
use crate::{FIXED_STEP, GameError, battle_world};

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
/// [`CombatPlugin`], [`PhysicsPlugin`], [`UnitsPlugin`] and
/// [`TurretsPlugin`] (a hierarchy, whose `ChildOf`, `Children` and
/// transforms the runtime saves itself), the director's scripts
/// ([`ScriptsPlugin`]: the wave spawner and the opening cutscene, step
/// scripts whose store the world's snapshots capture, and their
/// [`DirectorLog`]), with [`FramePlugin`](crate::FramePlugin), [`FeedPlugin`] and
/// [`NavigationPlugin`], which they require; steered by the players'
/// [`BattleInput`]s through [`apply_inputs`].
///
/// Left out, and why:
/// - the asset stream and the feeders (`assets`, `feed`'s threads): state
///   in async tasks and other threads, which no snapshot reaches; without
///   the stream the terrain never changes, so the flow fields are built
///   once and need no capture;
/// - the flow's states (the game's phases, with its menus and frame
///   budget): not part of the fight;
/// - the particles: presentation, not state of the battle. No system of
///   the battle reads them (only the report and the window do), so the
///   frames that follow do not depend on them; a re-simulated frame
///   emits its sparks again, and rolling back a buffer of thousands of
///   atomics every frame would buy nothing a peer compares.
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
        // The game's own start, the director's scripts included (their
        // store is opted into snapshots as it is inserted).
        let mut world = battle_world(setup.threads, setup.entities)?;
        world.insert(Inputs::default());
        world
            .add_plugins((
                FeedPlugin,
                NavigationPlugin,
                SteeringPlugin,
                CombatPlugin,
                UnitsPlugin,
                PhysicsPlugin,
                TurretsPlugin::default(),
                ScriptsPlugin,
            ))
            .expect("each plugin is added once");
        world
            .finish_plugins()
            .expect("every plugin the battle requires is added");
        world.add_system(apply_inputs);
        // Saved (and so checksummed) under stable names; a unit's
        // reference to its captain as the captain's entity (bound again to
        // the store a load or another world's restore puts it in).
        world
            .save_component::<Pos>("game::Pos")
            .save_component::<Vel>("game::Vel")
            .save_component::<Health>("game::Health")
            .save_component::<Team>("game::Team")
            .save_component::<Slot>("game::Slot")
            .save_component::<Weapon>("game::Weapon")
            .save_component::<Captain>("game::Captain")
            .save_component::<Turret>("game::Turret")
            .save_component_ref::<Pos>("game::CaptainRef")
            .save_service::<Inputs>("game::Inputs")
            .save_service::<InputState>("game::InputState")
            .save_service::<Orders>("game::Orders")
            .save_service::<Score>("game::Score")
            .save_service::<Census>("game::Census")
            .save_service::<DirectorLog>("game::DirectorLog");
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

    /// The checksum of everything saved ([`Snapshot::checksum`]: xxh3-64
    /// of the saved state's encoding): every unit's components, the
    /// captains, the score, the census, both teams' rally points, the
    /// frame counter with its inputs, the entity ids and allocator. The
    /// same on every thread count and machine.
    ///
    /// # Errors
    /// As for [`World::snapshot`].
    pub fn checksum(&self) -> Result<u64, SnapshotError> {
        Ok(self.world.snapshot()?.checksum())
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

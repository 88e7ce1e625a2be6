//! The battle on bevy_ecs 0.20, as a Bevy app would write it: one
//! `Schedule` on the multi-threaded executor, its systems chained in frame
//! order (systems that touch different data grouped so they run side by
//! side), `Query::par_iter_mut` for the per-unit work on the
//! `ComputeTaskPool`, `MessageWriter`/`MessageReader` for damage (the
//! `Messages` buffer swapped each frame, as `App::add_message` arranges),
//! `Commands` for deaths and respawns.

use bevy_ecs::prelude::{
    Commands, Entity, IntoScheduleConfigs, Message, MessageReader, MessageWriter, Messages, Query,
    Res, ResMut, Resource, Schedule, World,
};
use bevy_ecs::schedule::MultiThreadedExecutor;

use super::{
    Battle, Grid, Health, Layout, Member, Outcome, Pos, Score, Serial, Slot, Team, Vel, Weapon,
    aim, damage, decide, integrate, reload, respawn_serial, unit,
};

/// A hit: `amount` off `target`'s health.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Message)]
pub struct Damage {
    /// Who is hit.
    pub target: Entity,
    /// How hard.
    pub amount: i32,
}

/// Team `TEAM`'s units by cell.
#[derive(Debug, Resource)]
pub struct TeamGrid<const TEAM: u8>(pub Grid<Entity>);

fn update_messages(mut damage: ResMut<Messages<Damage>>) {
    damage.update();
}

fn move_units(layout: Res<Layout>, mut units: Query<(&mut Pos, &Vel)>) {
    units
        .par_iter_mut()
        .for_each(|(mut pos, vel)| integrate(&mut pos, *vel, &layout));
}

fn reload_guns(mut guns: Query<&mut Weapon<Entity>>) {
    guns.par_iter_mut()
        .for_each(|mut weapon| reload(&mut weapon));
}

fn build_grid<const TEAM: u8>(
    layout: Res<Layout>,
    units: Query<(Entity, &Pos, &Team, &Serial)>,
    mut grid: ResMut<TeamGrid<TEAM>>,
) {
    let members = units.iter().filter(|(_, _, team, _)| team.0 == TEAM);
    grid.0.rebuild(
        &layout,
        members.map(|(entity, pos, _, serial)| Member {
            entity,
            serial: *serial,
            at: pos.0,
        }),
    );
}

type Steered<'a> = (
    &'a Pos,
    &'a Slot,
    &'a Team,
    &'a Serial,
    &'a mut Vel,
    &'a mut Weapon<Entity>,
);

fn steer(
    layout: Res<Layout>,
    red: Res<TeamGrid<0>>,
    blue: Res<TeamGrid<1>>,
    mut units: Query<Steered<'_>>,
) {
    units
        .par_iter_mut()
        .for_each(|(pos, slot, team, serial, mut vel, mut weapon)| {
            let (friends, enemies) = match team.0 {
                0 => (&red.0, &blue.0),
                _ => (&blue.0, &red.0),
            };
            let decision = decide(&layout, *pos, *vel, *slot, *serial, friends, enemies);
            *vel = decision.vel;
            aim(&mut weapon, decision.in_range);
        });
}

fn fire(guns: Query<(&Serial, &Weapon<Entity>)>, mut hits: MessageWriter<Damage>) {
    for (serial, weapon) in &guns {
        if let Some(target) = weapon.target {
            hits.write(Damage {
                target,
                amount: damage(*serial),
            });
        }
    }
}

fn apply_damage(
    mut hits: MessageReader<Damage>,
    mut units: Query<&mut Health>,
    mut score: ResMut<Score>,
) {
    for hit in hits.read() {
        if let Ok(mut health) = units.get_mut(hit.target) {
            health.0 -= hit.amount;
            score.hits += 1;
        }
    }
}

fn reap(
    layout: Res<Layout>,
    units: Query<(Entity, &Health, &Team, &Serial)>,
    mut score: ResMut<Score>,
    mut commands: Commands,
) {
    for (entity, health, team, serial) in &units {
        if health.0 <= 0 {
            commands.entity(entity).despawn();
            commands.spawn(unit::<Entity>(respawn_serial(serial.0, &layout), &layout));
            score.kills[usize::from(1 - team.0)] += 1;
        }
    }
}

/// The battle in a bevy world. Its systems run on bevy's
/// `ComputeTaskPool`, made once per process
/// ([`init_bevy_pool`](crate::threads::init_bevy_pool)).
pub struct BevyBattle {
    world: World,
    schedule: Schedule,
}

impl std::fmt::Debug for BevyBattle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BevyBattle")
            .field("world", &self.world)
            .finish_non_exhaustive()
    }
}

impl BevyBattle {
    /// `units` units (half per team), on the compute pool as it is (made
    /// with bevy's default size if nobody made it first).
    pub fn new(units: usize) -> Self {
        let mut world = World::new();
        let layout = Layout::new(units);
        world.insert_resource(layout);
        world.insert_resource(Score::default());
        world.insert_resource(TeamGrid::<0>(Grid::new(&layout)));
        world.insert_resource(TeamGrid::<1>(Grid::new(&layout)));
        world.init_resource::<Messages<Damage>>();
        world.spawn_batch((0..units as u64).map(|serial| unit::<Entity>(serial, &layout)));
        let mut schedule = Schedule::default();
        schedule.set_executor(MultiThreadedExecutor::new());
        schedule.add_systems(
            (
                (update_messages, move_units, reload_guns),
                (build_grid::<0>, build_grid::<1>),
                steer,
                fire,
                apply_damage,
                reap,
            )
                .chain(),
        );
        Self { world, schedule }
    }
}

impl Battle for BevyBattle {
    fn frame(&mut self) {
        self.schedule.run(&mut self.world);
    }

    fn outcome(&mut self) -> Outcome {
        let mut outcome = Outcome {
            score: *self.world.resource::<Score>(),
            ..Outcome::default()
        };
        let mut units = self
            .world
            .query::<(&Serial, &Pos, &Vel, &Health, &Weapon<Entity>)>();
        for (serial, pos, vel, health, weapon) in units.iter(&self.world) {
            outcome.add(*serial, *pos, *vel, *health, weapon);
        }
        outcome
    }
}

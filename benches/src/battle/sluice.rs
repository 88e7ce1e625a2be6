//! The battle on sluice, written as the game is: plain functions whose
//! signatures say what they touch, in stages that declare the frame's
//! order (the plan follows from the stages and the access), `Query::par_for_each` for
//! the per-unit work, `Publish`/`Subscribe` for damage, `Commands` for
//! deaths and respawns.

use sluice::exec::ThreadPool;
use sluice::{Commands, Entity, NodeBuilder, Publish, Query, Subscribe, World};

use super::{
    Battle, Grid, Health, Layout, Member, Outcome, Pos, Score, Serial, Slot, Team, Vel, Weapon,
    aim, damage, decide, integrate, reload, respawn_serial, unit,
};

/// A hit: `amount` off `target`'s health.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Damage {
    /// Who is hit.
    pub target: Entity,
    /// How hard.
    pub amount: i32,
}

/// Team `TEAM`'s units by cell.
#[derive(Debug)]
pub struct TeamGrid<const TEAM: u8>(pub Grid<Entity>);

fn move_units(layout: &Layout, mut units: Query<(&mut Pos, &Vel)>) {
    units.par_for_each(|(mut pos, vel)| integrate(&mut pos, *vel, layout));
}

fn reload_guns(mut guns: Query<&mut Weapon<Entity>>) {
    guns.par_for_each(|mut weapon| reload(&mut weapon));
}

fn build_grid<const TEAM: u8>(
    layout: &Layout,
    units: Query<(Entity, &Pos, &Team, &Serial)>,
    grid: &mut TeamGrid<TEAM>,
) {
    let members = units.iter().filter(|(_, _, team, _)| team.0 == TEAM);
    grid.0.rebuild(
        layout,
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

fn steer(layout: &Layout, red: &TeamGrid<0>, blue: &TeamGrid<1>, mut units: Query<Steered<'_>>) {
    units.par_for_each(|(pos, slot, team, serial, mut vel, mut weapon)| {
        let (friends, enemies) = match team.0 {
            0 => (&red.0, &blue.0),
            _ => (&blue.0, &red.0),
        };
        let decision = decide(layout, *pos, *vel, *slot, *serial, friends, enemies);
        *vel = decision.vel;
        aim(&mut weapon, decision.in_range);
    });
}

fn fire(guns: Query<(&Serial, &Weapon<Entity>)>, hits: Publish<Damage>) {
    for (serial, weapon) in guns.iter() {
        if let Some(target) = weapon.target {
            hits.send(Damage {
                target,
                amount: damage(*serial),
            });
        }
    }
}

fn apply_damage(mut hits: Subscribe<Damage>, mut units: Query<&mut Health>, score: &mut Score) {
    for hit in hits.unread() {
        if let Ok(mut health) = units.get_mut(hit.target) {
            health.0 -= hit.amount;
            score.hits += 1;
        }
    }
}

fn reap(
    layout: &Layout,
    units: Query<(Entity, &Health, &Team, &Serial)>,
    score: &mut Score,
    commands: Commands<'_>,
) {
    for (entity, health, team, serial) in units.iter() {
        if health.0 <= 0 {
            commands.despawn(entity);
            commands.spawn(unit::<Entity>(respawn_serial(serial.0, layout), layout));
            score.kills[usize::from(1 - team.0)] += 1;
        }
    }
}

/// The battle in a sluice world.
#[derive(Debug)]
pub struct SluiceBattle {
    world: World,
}

impl SluiceBattle {
    /// `units` units (half per team) in a world whose pool has `threads`
    /// threads, the calling thread included.
    ///
    /// # Panics
    /// When the pool's threads do not start or the plan is refused.
    pub fn new(units: usize, threads: usize) -> Self {
        let pool = ThreadPool::new(threads.max(1)).expect("the battle's pool starts");
        let mut world = World::with_pool(pool);
        let layout = Layout::new(units);
        world.insert(layout);
        world.insert(Score::default());
        world.insert(TeamGrid::<0>(Grid::new(&layout)));
        world.insert(TeamGrid::<1>(Grid::new(&layout)));
        world.spawn_batch((0..units as u64).map(|serial| unit::<Entity>(serial, &layout)));
        // The frame's order, declared: each stage after the one before.
        for (order, stage) in ["Move", "Sense", "Think", "Fight", "Resolve"]
            .into_iter()
            .enumerate()
        {
            world.add_stage(stage, order as i64);
        }
        let node = |name, stage| NodeBuilder::new(name).in_stage(stage);
        world.add_system(node("move_units", "Move").system(move_units));
        world.add_system(node("reload_guns", "Move").system(reload_guns));
        world.add_system(node("build_grid#red", "Sense").system(build_grid::<0>));
        world.add_system(node("build_grid#blue", "Sense").system(build_grid::<1>));
        world.add_system(node("steer", "Think").system(steer));
        world.add_system(node("fire", "Fight").system(fire));
        world.add_system(node("apply_damage", "Resolve").system(apply_damage));
        world.add_system(node("reap", "Resolve").after("apply_damage").system(reap));
        Self { world }
    }

    /// The world, to inspect its plan.
    pub fn world(&self) -> &World {
        &self.world
    }
}

impl Battle for SluiceBattle {
    fn frame(&mut self) {
        self.world.run_iteration().expect("the battle's frame runs");
    }

    fn outcome(&mut self) -> Outcome {
        let mut outcome = Outcome {
            score: *self.world.get::<Score>().expect("inserted at the start"),
            ..Outcome::default()
        };
        let units = self
            .world
            .query::<(&Serial, &Pos, &Vel, &Health, &Weapon<Entity>)>();
        for (serial, pos, vel, health, weapon) in units.iter() {
            outcome.add(*serial, *pos, *vel, *health, weapon);
        }
        outcome
    }
}

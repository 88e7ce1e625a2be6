//! Hooks and observers (the guide's chapter "Hooks and observers",
//! `docs/guide/16-hooks-and-observers.md`), runnable:
//! `cargo run --example observers`.
//!
//! A squad game in miniature: a hook keeps a count of living units, an
//! observer gives every new unit a banner by command, damage is a custom
//! event observed by a system that records deaths as commands, a click on
//! a unit bubbles up to its squad, a captain's observer attached by
//! command watches only her, a unit changing captains fires `ChildOf`'s
//! `Replace` then `Insert`, and an observer that triggers itself without
//! end is stopped at the depth bound, named.

use sluice::prelude::*;
use sluice::{
    Add, BoundaryStep, ChildOf, Entities, Event, Insert, IterationError, On, Remove, Replace,
    Traversal,
};

#[derive(Debug)]
struct Unit {
    hp: u32,
}
#[derive(Debug)]
struct Banner;
#[derive(Debug)]
struct Squad(&'static str);
/// A unit's squad: the link a click bubbles along.
#[derive(Debug)]
struct InSquad(Entity);
impl Traversal for InSquad {
    fn next(&self) -> Option<Entity> {
        Some(self.0)
    }
}

#[derive(Debug, Default)]
struct Census(u32);
#[derive(Debug, Default)]
struct Log(Vec<String>);

struct Damage(u32);
impl Event for Damage {}

struct Clicked;
impl Event for Clicked {
    fn next_target(entities: &Entities, target: Entity) -> Option<Entity> {
        sluice::traverse::<InSquad>(entities, target)
    }
}

struct Echo(u32);
impl Event for Echo {}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut world = World::new();
    world.insert(Census::default());
    world.insert(Log::default());

    // Hooks: one per component and event; they see the world mid-change.
    world.on_add::<Unit>(|_, w| w.get_mut::<Census>().expect("census").0 += 1)?;
    world.on_remove::<Unit>(|cx, w| {
        let hp = w
            .entity(cx.entity)
            .and_then(|e| e.get::<Unit>())
            .map(|u| u.hp);
        w.get_mut::<Log>()
            .expect("log")
            .0
            .push(format!("unit fell at {hp:?} hp"));
        w.get_mut::<Census>().expect("census").0 -= 1;
    })?;

    // Observers: systems run for an event, in registration order.
    world.add_observer::<Add<Unit>, _>(|on: On<Add<Unit>>, commands: Commands<'_>| {
        commands
            .entity(on.target().expect("a unit"))
            .insert((Banner,));
    })?;
    world.add_observer::<Remove<Banner>, _>(|_: On<Remove<Banner>>, log: &mut Log| {
        log.0.push("a banner was lowered".into());
    })?;
    world.add_observer::<Damage, _>(
        |on: On<Damage>, mut units: Query<(Entity, &mut Unit)>, commands: Commands<'_>| {
            for (entity, mut unit) in units.iter_mut() {
                unit.hp = unit.hp.saturating_sub(on.0);
                if unit.hp == 0 {
                    commands.despawn(entity);
                }
            }
        },
    )?;
    world.add_observer::<Clicked, _>(|on: On<Clicked>, squads: Query<&Squad>, log: &mut Log| {
        if let Ok(squad) = squads.get(on.target().expect("a target")) {
            log.0.push(format!("squad {} was clicked", squad.0));
        }
    })?;

    // A frame: units recruited by command, then a volley, all landing at
    // the boundary in command order.
    let red = world.spawn((Squad("red"),));
    world.add_system(NodeBuilder::new("recruit").system(
        move |commands: Commands<'_>, mut done: Local<bool>| {
            if !std::mem::replace(&mut *done, true) {
                commands.spawn((Unit { hp: 3 }, InSquad(red)));
                commands.spawn((Unit { hp: 10 }, InSquad(red)));
                commands.trigger(Damage(4));
            }
        },
    ));
    world.run_iteration()?;
    let bannered = world.query::<&Banner>().iter().count();
    println!(
        "census {}, {bannered} banner(s)",
        world.get::<Census>().expect("census").0
    );

    // A click on a unit bubbles up to its squad.
    let unit = world
        .query::<(Entity, &Unit)>()
        .iter()
        .map(|(e, _)| e)
        .next()
        .expect("a survivor");
    world.trigger_targets(Clicked, unit)?;

    // A captain watched from commands: her observer lands in command order
    // and sees only her.
    world.add_system(NodeBuilder::new("promote").system(
        |commands: Commands<'_>, mut done: Local<bool>| {
            if !std::mem::replace(&mut *done, true) {
                let captain = commands.spawn((Squad("blue"),));
                commands
                    .entity(captain)
                    .observe::<Clicked, _>(|_: On<Clicked>, log: &mut Log| {
                        log.0.push("the blue captain heard the click".into());
                    });
            }
        },
    ));
    world.run_iteration()?;
    let blue = world
        .query::<(Entity, &Squad)>()
        .iter()
        .find(|(_, s)| s.0 == "blue")
        .map(|(e, _)| e)
        .expect("the blue captain");
    world.trigger_targets(Clicked, blue)?;
    world.trigger_targets(Clicked, red)?; // her observer stays quiet

    // Reparenting fires `ChildOf`'s events: leaving one parent, joining
    // the next.
    world.add_observer::<Replace<ChildOf>, _>(|_: On<Replace<ChildOf>>, log: &mut Log| {
        log.0.push("a unit left its captain".into());
    })?;
    world.add_observer::<Insert<ChildOf>, _>(|_: On<Insert<ChildOf>>, log: &mut Log| {
        log.0.push("a unit joined a captain".into());
    })?;
    world.set_parent(unit, red)?;
    world.set_parent(unit, blue)?;

    // An observer that triggers itself forever is stopped at the bound.
    world.set_observer_depth_limit(8);
    world.add_observer::<Echo, _>(|on: On<Echo>, commands: Commands<'_>| {
        commands.trigger(Echo(on.0 + 1));
    })?;
    world.add_system(NodeBuilder::new("shout").system(|commands: Commands<'_>| {
        commands.trigger(Echo(0));
    }));
    match world.run_iteration() {
        Err(IterationError::Boundary(failures)) => {
            for failure in &failures {
                if let BoundaryStep::ObserverChain { chain } = failure.step() {
                    println!("stopped a chain of {} echoes", chain.len());
                }
            }
        }
        other => println!("unexpected: {other:?}"),
    }

    for line in &world.get::<Log>().expect("log").0 {
        println!("{line}");
    }
    Ok(())
}

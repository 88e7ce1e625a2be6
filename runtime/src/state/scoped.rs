//! Entities scoped to a state: despawned by the transition that ends their
//! scope, between the schedules that run for it.

use crate::entity::Entity;
use crate::state::States;
use crate::world::World;

/// An entity that is despawned when the state leaves this value, after
/// `OnExit` ran.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DespawnOnExit<S: States>(pub S);

/// An entity that is despawned when the state enters this value, before
/// `OnEnter` runs (what `OnEnter` spawns is kept).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DespawnOnEnter<S: States>(pub S);

/// An entity that is despawned by every transition `from -> to` for which
/// the predicate holds, after `OnExit` ran.
#[derive(Debug, Clone, Copy)]
pub struct DespawnWhen<S: States>(pub fn(from: &S, to: &S) -> bool);

/// Despawns the entities scoped to leave with `from` (on the way to `to`):
/// [`DespawnOnExit`] and [`DespawnWhen`]; returns how many.
pub(crate) fn despawn_on_exit<S: States>(world: &mut World, from: &S, to: &S) -> usize {
    let mut doomed: Vec<Entity> = world
        .query::<(Entity, &DespawnOnExit<S>)>()
        .iter()
        .filter(|(_, scope)| scope.0 == *from)
        .map(|(entity, _)| entity)
        .collect();
    doomed.extend(
        world
            .query::<(Entity, &DespawnWhen<S>)>()
            .iter()
            .filter(|(_, when)| (when.0)(from, to))
            .map(|(entity, _)| entity),
    );
    despawn_all(world, doomed)
}

/// Despawns the entities scoped to go when `to` is entered; returns how
/// many.
pub(crate) fn despawn_on_enter<S: States>(world: &mut World, to: &S) -> usize {
    let doomed: Vec<Entity> = world
        .query::<(Entity, &DespawnOnEnter<S>)>()
        .iter()
        .filter(|(_, scope)| scope.0 == *to)
        .map(|(entity, _)| entity)
        .collect();
    despawn_all(world, doomed)
}

fn despawn_all(world: &mut World, doomed: Vec<Entity>) -> usize {
    // An entity carrying two scopes that both end is listed twice: the
    // second despawn finds it gone, which is fine.
    doomed
        .into_iter()
        .filter(|&entity| world.despawn(entity).is_ok())
        .count()
}

//! Turrets riding their units (issue 37's hierarchies), in the default
//! game: [`TurretsPlugin`] (last of [`GamePlugins`](crate::GamePlugins))
//! mounts one on every [`EVERY`]-th unit of the opening armies; the
//! checksum ([`report::checksum`](crate::report::checksum)) covers each
//! turret's carrier and world position.
//!
//! [`mount`] gives every `every`-th unit a [`Transform`] and a turret as
//! its child, and installs transform propagation plus [`follow_units`],
//! which writes each carrier's `Transform` from its `Pos` before
//! propagation runs. A unit the battle reaps (`combat::reap` despawns it
//! through `Commands`) takes its turret with it: a despawn takes the
//! subtree.

use sluice::glam::Vec3;
use sluice::plugin::{Plugin, Requires};
use sluice::{Children, Entity, NodeBuilder, Query, Transform, TransformPropagation, With, World};

use crate::FramePlugin;
use crate::units::{Pos, Team};

/// How many units per turret the default game mounts: one in five.
pub const EVERY: usize = 5;

/// Mounts turrets on the units spawned so far (the game spawns its armies
/// before adding its plugins) and installs their systems; see [`mount`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TurretsPlugin {
    /// One turret on every `every`-th unit.
    pub every: usize,
}

impl Default for TurretsPlugin {
    fn default() -> Self {
        Self { every: EVERY }
    }
}

impl Plugin for TurretsPlugin {
    fn requires(&self) -> Requires {
        // Its systems go in the frame's "Present" stage.
        Requires::new().plugin::<FramePlugin>()
    }

    fn build(&self, world: &mut World) {
        mount(world, self.every);
    }
}

/// A turret, riding the unit that is its parent.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Turret {
    /// Where it sits on its carrier.
    pub offset: Vec3,
}

/// The turret's seat on its carrier.
pub const OFFSET: Vec3 = Vec3::new(0.0, 0.0, 1.5);

/// Mounts a turret on every `every`-th unit (frozen ones, the captains,
/// cannot gain children and are skipped) and installs propagation; how
/// many turrets it mounted.
pub fn mount(world: &mut World, every: usize) -> usize {
    // After the battle has moved and reaped its units, beside the report.
    TransformPropagation::add_to_with(world, |node| node.in_stage("Present"));
    let units: Vec<(Entity, Vec3)> = world
        .query_filtered::<(Entity, &Pos), With<Team>>()
        .iter()
        .map(|(e, pos)| (e, Vec3::new(pos.0.x, pos.0.y, 0.0)))
        .collect();
    let mut mounted = 0;
    for (unit, at) in units.into_iter().step_by(every.max(1)) {
        if world.entity(unit).is_some_and(|u| u.is_frozen()) {
            continue;
        }
        let Some(mut carrier) = world.entity_mut(unit) else {
            continue;
        };
        if carrier.insert((Transform::from_translation(at),)).is_err() {
            continue;
        }
        let turret = (
            Turret { offset: OFFSET },
            Transform::from_translation(OFFSET),
        );
        if world.spawn_child(unit, turret).is_ok() {
            mounted += 1;
        }
    }
    world.add_system(
        NodeBuilder::new("turrets::follow_units")
            .in_stage("Present")
            .before(sluice::entity::hierarchy::PROPAGATE_TRANSFORMS)
            .system(follow_units),
    );
    mounted
}

/// Writes each carrier's `Transform` from its `Pos`.
pub fn follow_units(mut carriers: Query<(&Pos, &mut Transform), With<Children>>) {
    carriers.for_each(|(pos, mut transform)| {
        transform.translation = Vec3::new(pos.0.x, pos.0.y, 0.0);
    });
}

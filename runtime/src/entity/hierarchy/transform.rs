//! [`Transform`] (local), [`GlobalTransform`] (world) and
//! [`propagate_transforms`], the ordinary system that keeps the second
//! equal to the parent's `GlobalTransform` times the local `Transform`
//! down the hierarchy.
//!
//! The system recomputes only what changed. Its *candidates* are the
//! entities whose `Transform` or `ChildOf` changed since it last ran, and
//! those that lost their parent; its *starts* are the candidates none of
//! whose ancestors is a candidate. Each start's whole subtree is
//! recomputed from its parent's `GlobalTransform` (still right: neither
//! the parent nor any ancestor changed); every other subtree is skipped
//! without being walked. A static scene costs one pass over the change
//! ticks.
//!
//! The starts' subtrees are disjoint (below), so they run in parallel on
//! the world's pool, one slice of starts per claim; the result is the
//! same on every executor and thread count since each entity's value is a
//! pure function of its ancestors' `Transform`s, computed by exactly one
//! thread.

use std::sync::{Mutex, PoisonError};

use glam::{Affine3A, Quat, Vec3};

use super::{ChildOf, Children};
use crate::entity::query::{Changed, FetchCache, Or, Query, Removed, With};
use crate::entity::{Entity, RequiredError};
use crate::node::NodeBuilder;
use crate::system::Local;
use crate::world::World;

/// An entity's placement relative to its parent (or to the world, for a
/// root): translation, rotation, scale, as Bevy's `Transform`.
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Transform {
    /// Where, in the parent's space.
    pub translation: Vec3,
    /// Which way it faces.
    pub rotation: Quat,
    /// How large, per axis.
    pub scale: Vec3,
}

impl Transform {
    /// No translation, rotation or scaling.
    pub const IDENTITY: Self = Self {
        translation: Vec3::ZERO,
        rotation: Quat::IDENTITY,
        scale: Vec3::ONE,
    };

    /// A translation by `(x, y, z)`.
    pub fn from_xyz(x: f32, y: f32, z: f32) -> Self {
        Self::from_translation(Vec3::new(x, y, z))
    }

    /// A translation.
    pub fn from_translation(translation: Vec3) -> Self {
        Self {
            translation,
            ..Self::IDENTITY
        }
    }

    /// This transform, rotated by `rotation` instead.
    #[must_use]
    pub fn with_rotation(self, rotation: Quat) -> Self {
        Self { rotation, ..self }
    }

    /// This transform, scaled by `scale` instead.
    #[must_use]
    pub fn with_scale(self, scale: Vec3) -> Self {
        Self { scale, ..self }
    }

    /// The affine map: scale, then rotate, then translate.
    #[inline]
    pub fn compute_affine(&self) -> Affine3A {
        Affine3A::from_scale_rotation_translation(self.scale, self.rotation, self.translation)
    }
}

impl Default for Transform {
    fn default() -> Self {
        Self::IDENTITY
    }
}

/// An entity's placement in the world: its parent's `GlobalTransform`
/// times its own [`Transform`], written by [`propagate_transforms`] (a
/// root's is its `Transform`).
#[derive(Clone, Copy, Debug, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct GlobalTransform(Affine3A);

impl GlobalTransform {
    /// The world's own placement.
    pub const IDENTITY: Self = Self(Affine3A::IDENTITY);

    /// The affine map from the entity's space to the world's.
    #[inline]
    pub fn affine(&self) -> Affine3A {
        self.0
    }

    /// Where the entity's origin is in the world.
    #[inline]
    pub fn translation(&self) -> Vec3 {
        self.0.translation.into()
    }

    /// `point`, given in the entity's space, in the world's.
    #[inline]
    pub fn transform_point(&self, point: Vec3) -> Vec3 {
        self.0.transform_point3(point)
    }
}

impl From<Transform> for GlobalTransform {
    fn from(transform: Transform) -> Self {
        Self(transform.compute_affine())
    }
}

/// The node name [`TransformPropagation::add_to`] registers
/// [`propagate_transforms`] under, to order other nodes against.
pub const PROPAGATE_TRANSFORMS: &str = "sluice::propagate_transforms";

/// Installs transform propagation in a world.
#[derive(Debug, Clone, Copy, Default)]
pub struct TransformPropagation;

impl TransformPropagation {
    /// Makes [`Transform`] require [`GlobalTransform`] (so spawning a
    /// `Transform` is enough) and registers [`propagate_transforms`] as
    /// the node `"sluice::propagate_transforms"` in the `PostUpdate`
    /// phase. Installing it twice is refused by the planner as any
    /// duplicate node name is; the requirement is registered once.
    ///
    /// ```
    /// use sluice::{GlobalTransform, Transform, TransformPropagation, World};
    ///
    /// let mut world = World::new();
    /// TransformPropagation::add_to(&mut world);
    /// let ship = world.spawn((Transform::from_xyz(10.0, 0.0, 0.0),));
    /// let turret = world.spawn_child(ship, (Transform::from_xyz(0.0, 1.0, 0.0),))?;
    /// world.run_iteration().unwrap();
    /// let at = world.entity(turret).unwrap().get::<GlobalTransform>().unwrap().translation();
    /// assert_eq!(at, sluice::glam::Vec3::new(10.0, 1.0, 0.0));
    /// # Ok::<(), sluice::EntityError>(())
    /// ```
    pub fn add_to(world: &mut World) {
        Self::add_to_with(world, |node| node.phase(crate::organise::Phase::PostUpdate));
    }

    /// [`add_to`](Self::add_to) with the node placed by `place` instead of
    /// in `PostUpdate`: a world that declares stages names one
    /// (`|node| node.in_stage("Present")`), or orders it by hand.
    pub fn add_to_with(world: &mut World, place: impl FnOnce(NodeBuilder) -> NodeBuilder) {
        match world.register_required::<Transform, GlobalTransform>() {
            Ok(()) | Err(RequiredError::AlreadyRequired { .. }) => {}
            // A cycle needs `GlobalTransform` to require `Transform`: the
            // user's, and harmless to propagation.
            Err(_) => {}
        }
        world
            .add_system(place(NodeBuilder::new(PROPAGATE_TRANSFORMS)).system(propagate_transforms));
    }
}

/// One thread's finds in the scan, handed over when it is done.
struct Found<'a> {
    local: Vec<Entity>,
    into: &'a Mutex<Vec<Entity>>,
}

impl Drop for Found<'_> {
    fn drop(&mut self) {
        if !self.local.is_empty() {
            let mut into = self.into.lock().unwrap_or_else(PoisonError::into_inner);
            into.append(&mut self.local);
        }
    }
}

/// Reused from run to run, so a steady frame allocates nothing.
#[derive(Default, Debug)]
pub struct PropagationScratch {
    /// Sorted and without duplicates, searched by bisection: cheaper than
    /// a hash set for the few thousand a frame moves.
    candidates: Vec<Entity>,
    /// Each start and its parent's `GlobalTransform`.
    starts: Vec<(Entity, Affine3A)>,
}

/// What propagation reads and writes per entity.
type Nodes<'w> = Query<
    'w,
    (
        &'static Transform,
        Option<&'static ChildOf>,
        Option<&'static Children>,
        &'static mut GlobalTransform,
    ),
>;

/// The entities whose own placement changed since the last run.
type Moved<'w> = Query<
    'w,
    (Entity, Option<&'static ChildOf>),
    (
        Or<(Changed<Transform>, Changed<ChildOf>)>,
        With<GlobalTransform>,
    ),
>;

/// Starts per claimed slice when many small subtrees change: enough to
/// make a claim worth its cost.
const STARTS_PER_SLICE: usize = 8;

/// Below this many rows to scan for changes, the scan runs on the calling
/// thread: a few thousand tick reads cost less than a fan-out.
const PARALLEL_SCAN_ROWS: usize = 16_384;

/// Propagates [`Transform`] down the hierarchy into [`GlobalTransform`]:
/// every entity with both gets its parent's `GlobalTransform` times its
/// own `Transform` (a root: its `Transform`). Only the subtrees under a
/// changed `Transform` or `ChildOf`, or an entity that lost its parent,
/// are recomputed, in parallel across subtrees on the world's pool. Reads
/// `Transform`, `ChildOf` and `Children`, gates `GlobalTransform`.
///
/// An entity without a `Transform` (or disabled) ends the walk: its
/// subtree keeps its values until it gets one back.
pub fn propagate_transforms(
    nodes: Nodes<'_>,
    mut moved: Moved<'_>,
    orphaned: Removed<'_, ChildOf>,
    mut scratch: Local<'_, PropagationScratch>,
) {
    let PropagationScratch { candidates, starts } = &mut *scratch;
    candidates.clear();
    starts.clear();
    // The scan of the change ticks: the archetypes no one wrote are
    // skipped whole (the columns' changed bound), so it reads only the
    // written ones' rows. Few rows cost less on this thread than waking a
    // helper (under load, a helper that is preempted holding a slice makes
    // the caller wait for it); many are scanned in parallel, each thread
    // gathering what it finds.
    if moved.count_rows() < PARALLEL_SCAN_ROWS {
        moved.for_each(|(entity, _)| candidates.push(entity));
    } else {
        let found = Mutex::new(Vec::new());
        moved.par_for_each_init(
            || Found {
                local: Vec::new(),
                into: &found,
            },
            |found, (entity, _)| found.local.push(entity),
        );
        candidates.append(&mut found.into_inner().unwrap_or_else(PoisonError::into_inner));
    }
    candidates.extend(orphaned.iter());
    if candidates.is_empty() {
        return;
    }
    candidates.sort_unstable();
    candidates.dedup();
    let candidates = &candidates[..];
    let ids = nodes.prepared_ids();
    let nodes = &nodes;
    let mut cache = FetchCache::default();
    let mut look = |entity| {
        // SAFETY: this loop runs alone (before the fan-out) and drops each
        // item at once, so no two items of one row are ever alive; `cache`
        // is filled only here, from `nodes` with `ids`.
        unsafe { nodes.get_cached(ids, &mut cache, entity) }
            .ok()
            .map(|(_, of, _, global)| (of.map(ChildOf::parent), global.0))
    };
    // A start has no candidate among its ancestors (walked up through
    // `ChildOf`; a stale or transform-less parent ends the walk).
    'candidates: for &candidate in candidates.iter() {
        let Some((parent, _)) = look(candidate) else {
            continue; // despawned since, or without a `Transform`
        };
        let mut up = parent;
        while let Some(at) = up {
            if candidates.binary_search(&at).is_ok() {
                continue 'candidates;
            }
            up = look(at).and_then(|(of, _)| of);
        }
        let parent_global = parent
            .and_then(&mut look)
            .map_or(Affine3A::IDENTITY, |(_, global)| global);
        starts.push((candidate, parent_global));
    }
    // Taken from the sorted candidates, so sorted: the slices are the
    // same from run to run.
    let starts = &starts[..];
    let per_slice =
        STARTS_PER_SLICE.min(starts.len().div_ceil(crate::exec::current_thread_count()));
    let per_slice = per_slice.max(1);
    crate::exec::for_each_slice(starts.len().div_ceil(per_slice), &|slices| {
        let mut stack = Vec::new();
        let mut cache = FetchCache::default();
        let from = slices.start * per_slice;
        let to = (slices.end * per_slice).min(starts.len());
        for &(start, parent_global) in &starts[from..to] {
            // SAFETY:
            // - each start appears once in `starts` (taken from the
            //   deduplicated candidates);
            // - the subtrees walked from two starts are disjoint: the walk
            //   follows a child only when its `ChildOf` names the parent
            //   it was reached from, so an entity reached from start `s`
            //   has `s` on its `ChildOf` chain; a start with another start
            //   on its `ChildOf` chain was left out above (every start is
            //   a candidate), and within one walk every entity is reached
            //   once (one `ChildOf` each, and the walk from a start that
            //   is not on a cycle never enters one: entering needs a
            //   `ChildOf` naming a parent outside it);
            // - so each row of `GlobalTransform` is handed out by at most
            //   one thread, one item at a time; the other lanes are read
            //   shared; the node holds the lanes for the call (`nodes` is
            //   its parameter, borrowed here for the fan-out only);
            // - `cache` is this slice's own, filled only from `nodes`.
            unsafe {
                propagate_subtree(nodes, ids, &mut cache, start, parent_global, &mut stack);
            };
        }
    });
}

/// Writes `start`'s `GlobalTransform` from `parent_global`, then every
/// verified descendant's, depth-first with an explicit stack (a deep chain
/// cannot overflow the thread's). `cache` keeps the last archetypes' fetches
/// (a subtree's entities sit in few archetypes).
///
/// # Safety
/// No other thread hands out an item of `nodes` for `start` or any of its
/// descendants while this runs, the caller holds no item of `nodes`, and
/// `cache` holds only what calls on `nodes` with `ids` put there.
unsafe fn propagate_subtree<'q>(
    nodes: &'q Nodes<'_>,
    ids: Option<(<NodesData as crate::entity::QueryData>::Ids, ())>,
    cache: &mut FetchCache<'q, NodesData>,
    start: Entity,
    parent_global: Affine3A,
    stack: &mut Vec<(Entity, &'q [Entity], Affine3A)>,
) {
    // SAFETY: `start`'s row is this call's alone (caller).
    let Ok((transform, _, children, mut global)) = (unsafe { nodes.get_cached(ids, cache, start) })
    else {
        return;
    };
    let affine = parent_global * transform.compute_affine();
    global.0 = affine;
    drop(global);
    if let Some(children) = children {
        stack.push((start, children.as_slice(), affine));
    }
    while let Some((parent, children, parent_global)) = stack.pop() {
        for &child in children {
            // SAFETY: `child`'s row is this call's alone (caller), and the
            // item of the row before it was dropped at the end of its turn.
            let Ok((transform, of, below, mut global)) =
                (unsafe { nodes.get_cached(ids, cache, child) })
            else {
                continue;
            };
            if of.map(ChildOf::parent) != Some(parent) {
                continue; // a link broken behind the runtime's back
            }
            let affine = parent_global * transform.compute_affine();
            global.0 = affine;
            if let Some(below) = below {
                stack.push((child, below.as_slice(), affine));
            }
        }
    }
}

/// The data of [`Nodes`].
type NodesData = (
    &'static Transform,
    Option<&'static ChildOf>,
    Option<&'static Children>,
    &'static mut GlobalTransform,
);

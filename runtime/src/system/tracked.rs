//! Service change detection: a [`Tracked<T>`] parameter reads `T` as `&T`
//! does (shared on `T`'s lane) and says whether `T` changed or was added
//! since the system (or run condition) last ran; the run conditions
//! [`service_exists`], [`service_changed`] and [`service_added`] are built
//! on it.
//!
//! What counts as a change: every gated access. A `&mut T` parameter (or a
//! `Context` gating `T`, a factory producing `T`, `World::get_mut`,
//! `World::insert`) marks `T` changed whether or not the body writes
//! through it: the world cannot see into a `&mut T`, so it does not claim
//! to know better. Shared access (`&T`, `Gate<&T>`) never does. Changes are
//! stamped on the same clock as component rows (the entity store's ticks),
//! so a reader compares them with the cursor its queries use, and every
//! executor and thread count gives the serial answer: a gate of `T` and a
//! reader of `T` are always ordered in `T`'s lane.

use crate::access::{AccessKind, ServiceId};
use crate::entity::query::change_cursor;
use crate::node::NodeBuilder;
use crate::registry::Registry;
use crate::system::cells::ServiceCells;
use crate::system::condition::ReadOnlyParam;
use crate::system::output::BoundaryHooks;
use crate::system::param::{Param, Service};

/// A service read with its change news: derefs to `&T`, and says whether
/// `T` changed ([`is_changed`](Self::is_changed)) or was added
/// ([`is_added`](Self::is_added)) since this system last ran. Declared as
/// `&T` (shared on `T`'s lane), so it runs beside `T`'s other readers and
/// after its writers, as the ordering rule says. A system's first run sees
/// `T` as changed and added.
///
/// ```
/// use sluice::{Tracked, World};
///
/// struct Score(u32);
/// struct Seen(Vec<bool>);
///
/// let mut world = World::new();
/// world.insert(Score(0));
/// world.insert(Seen(Vec::new()));
/// world.add_system(|score: Tracked<Score>, seen: &mut Seen| seen.0.push(score.is_changed()));
/// world.run_iteration()?; // first run: new
/// world.run_iteration()?; // nothing gated Score: unchanged
/// world.get_mut::<Score>().unwrap().0 = 3;
/// world.run_iteration()?; // changed between iterations
/// assert_eq!(world.get::<Seen>().unwrap().0, [true, false, true]);
/// # Ok::<(), sluice::IterationError>(())
/// ```
#[derive(Debug)]
pub struct Tracked<'w, T> {
    value: &'w T,
    changed: bool,
    added: bool,
}

impl<'w, T> Tracked<'w, T> {
    /// Whether `T` was gated (or inserted) since this system last ran.
    #[inline]
    pub fn is_changed(&self) -> bool {
        self.changed
    }

    /// Whether `T` was inserted into the world (where it was absent) since
    /// this system last ran.
    #[inline]
    pub fn is_added(&self) -> bool {
        self.added
    }

    /// The value for as long as the node runs.
    #[inline]
    pub fn get(&self) -> &'w T {
        self.value
    }
}

impl<T> std::ops::Deref for Tracked<'_, T> {
    type Target = T;

    #[inline]
    fn deref(&self) -> &T {
        self.value
    }
}

/// `T`'s value with its news for the running body, or `None` when the
/// world holds no `T`.
///
/// # Safety
/// The node declared shared (or gated) access to `id` and runs as a node
/// of the world's current plan: no gate of `id` runs now.
unsafe fn tracked<'w, T: Service>(
    id: ServiceId,
    cells: &ServiceCells<'w>,
) -> Option<Tracked<'w, T>> {
    // SAFETY: the caller's guarantee.
    let value = unsafe { cells.get::<T>(id) }?;
    // The run's cursor and tick, shared with its queries (one fresh tick
    // per run): its cursor moves to this tick when the body finishes.
    let (changed, added) = if cells.has_clock() {
        // `run_tick` is `Some` with a clock.
        let (last_run, _) = change_cursor(|| cells.run_tick().unwrap_or_default());
        // SAFETY: the caller's guarantee.
        unsafe { cells.changed_since(id, last_run) }
    } else {
        // Cells without a clock (a lifecycle hook's): everything is news.
        (true, true)
    };
    Some(Tracked {
        value,
        changed,
        added,
    })
}

// SAFETY: `fetch` reads only `T`'s slot (its value, version and ticks),
// through shared access, as the `&T` declaration it reuses declares.
unsafe impl<T: Service> Param for Tracked<'_, T> {
    type Item<'w> = Tracked<'w, T>;
    const KIND: AccessKind = AccessKind::Shared;

    fn service_name() -> &'static str {
        <&T as Param>::service_name()
    }

    fn declare(node: NodeBuilder) -> NodeBuilder {
        <&T as Param>::declare(node)
    }

    fn resolve(registry: &mut Registry, hooks: &mut BoundaryHooks) -> ServiceId {
        <&T as Param>::resolve(registry, hooks)
    }

    #[inline]
    unsafe fn fetch<'w>(id: ServiceId, cells: &ServiceCells<'w>) -> Tracked<'w, T> {
        // SAFETY: the node declared shared access to `id`, and runs as a
        // plan node (the caller's guarantee).
        match unsafe { tracked::<T>(id, cells) } {
            Some(tracked) => tracked,
            None => crate::system::param::missing(Self::service_name()),
        }
    }
}

// SAFETY: as for `Tracked<T>`; the declaration is `Option<&T>`'s.
unsafe impl<T: Service> Param for Option<Tracked<'_, T>> {
    type Item<'w> = Option<Tracked<'w, T>>;
    const KIND: AccessKind = AccessKind::Shared;

    fn service_name() -> &'static str {
        <&T as Param>::service_name()
    }

    fn declare(node: NodeBuilder) -> NodeBuilder {
        <Option<&T> as Param>::declare(node)
    }

    fn resolve(registry: &mut Registry, hooks: &mut BoundaryHooks) -> ServiceId {
        <&T as Param>::resolve(registry, hooks)
    }

    #[inline]
    unsafe fn fetch<'w>(id: ServiceId, cells: &ServiceCells<'w>) -> Option<Tracked<'w, T>> {
        // SAFETY: as for `Tracked<T>`.
        unsafe { tracked::<T>(id, cells) }
    }
}

impl<T: Service> ReadOnlyParam for Tracked<'_, T> {}
impl<T: Service> ReadOnlyParam for Option<Tracked<'_, T>> {}

/// A run condition: whether the world holds a `T`.
///
/// ```
/// use sluice::{NodeBuilder, World, service_exists};
/// struct Paused;
/// struct Frames(u32);
///
/// let mut world = World::new();
/// world.insert(Frames(0));
/// world.add_system(
///     NodeBuilder::new("count")
///         .system(|frames: &mut Frames| frames.0 += 1)
///         .run_if(service_exists::<Paused>),
/// );
/// world.run_iteration()?;
/// world.insert(Paused);
/// world.run_iteration()?;
/// assert_eq!(world.get::<Frames>().unwrap().0, 1);
/// # Ok::<(), sluice::IterationError>(())
/// ```
pub fn service_exists<T: Service>(service: Option<&T>) -> bool {
    service.is_some()
}

/// A run condition: whether `T` changed (was gated or inserted) since the
/// condition last held or failed, that is since the node last reached its
/// conditions. False while the world holds no `T`.
pub fn service_changed<T: Service>(service: Option<Tracked<'_, T>>) -> bool {
    service.is_some_and(|service| service.is_changed())
}

/// A run condition: whether `T` was inserted (where it was absent) since
/// the condition was last evaluated. False while the world holds no `T`.
pub fn service_added<T: Service>(service: Option<Tracked<'_, T>>) -> bool {
    service.is_some_and(|service| service.is_added())
}

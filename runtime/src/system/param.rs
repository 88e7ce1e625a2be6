//! Parameters: how one argument of a system's signature becomes a declaration
//! (`&T` shared, `&mut T` gated) and, at run time, a reference into the world.

use crate::access::{AccessKind, ServiceId};
use crate::node::NodeBuilder;
use crate::registry::Registry;
use crate::system::cells::ServiceCells;
use crate::system::output::BoundaryHooks;

/// A value a world holds: `Send + Sync + 'static`, as DESIGN's vocabulary says.
pub trait Service: Send + Sync + 'static {}
impl<T: Send + Sync + 'static> Service for T {}

/// One parameter of a system or factory function.
///
/// # Safety
/// Implementors must make `fetch` touch only the service `declare` declared,
/// with no stronger access than [`Param::KIND`]: the executor relies on the
/// declaration alone to keep conflicting nodes apart.
pub unsafe trait Param {
    /// What the function receives, borrowed from the world for `'w`.
    type Item<'w>;
    /// How the parameter touches its service.
    const KIND: AccessKind;
    /// The service the parameter touches, named for messages.
    fn service_name() -> &'static str;
    /// Adds the parameter's access to `node`.
    fn declare(node: NodeBuilder) -> NodeBuilder;
    /// The parameter's service id (resolving it if needed), and any work the
    /// parameter needs at iteration boundaries.
    fn resolve(registry: &mut Registry, hooks: &mut BoundaryHooks) -> ServiceId;
    /// Borrows the parameter's value.
    ///
    /// # Safety
    /// - `id` is what [`Param::resolve`] returned for this world.
    /// - The node this parameter belongs to is running as a node of the
    ///   world's current plan, so no conflicting node runs concurrently.
    unsafe fn fetch<'w>(id: ServiceId, cells: &ServiceCells<'w>) -> Self::Item<'w>;
    /// Whether the body may run with this parameter now. `false` skips the
    /// body for this run, as a false run condition does (its change cursor
    /// and message cursors stay where they were): a
    /// [`Single`](crate::entity::query::Single) with no match or several.
    /// Asked of every parameter before any is fetched; a run condition
    /// with a parameter that says no is false. Most parameters always say
    /// yes.
    ///
    /// # Safety
    /// As for [`fetch`](Self::fetch).
    #[inline]
    unsafe fn validate(_id: ServiceId, _cells: &ServiceCells<'_>) -> bool {
        true
    }
}

/// Panics naming a declared service the world holds no value for.
#[cold]
#[inline(never)]
pub(crate) fn missing(service: &str) -> ! {
    panic!(
        "service `{service}` is declared but the world holds no value for it: insert it with `World::insert` or register a factory that produces it"
    )
}

// SAFETY: `fetch` reads only `T`'s slot, through shared access, as declared.
unsafe impl<T: Send + Sync + 'static> Param for &T {
    type Item<'w> = &'w T;
    const KIND: AccessKind = AccessKind::Shared;

    fn service_name() -> &'static str {
        std::any::type_name::<T>()
    }

    fn declare(node: NodeBuilder) -> NodeBuilder {
        node.reads::<T>()
    }

    fn resolve(registry: &mut Registry, _hooks: &mut BoundaryHooks) -> ServiceId {
        registry.resolve::<T>()
    }

    #[inline]
    unsafe fn fetch<'w>(id: ServiceId, cells: &ServiceCells<'w>) -> &'w T {
        // SAFETY: the node declared shared access to `id` (`declare`), and the
        // caller runs it as a plan node, so no gate of `id` runs now.
        match unsafe { cells.get::<T>(id) } {
            Some(value) => value,
            None => missing(Self::service_name()),
        }
    }
}

// SAFETY: `fetch` reaches only `T`'s slot, through gated access, as declared.
unsafe impl<T: Send + Sync + 'static> Param for &mut T {
    type Item<'w> = &'w mut T;
    const KIND: AccessKind = AccessKind::Gated;

    fn service_name() -> &'static str {
        std::any::type_name::<T>()
    }

    fn declare(node: NodeBuilder) -> NodeBuilder {
        node.gates::<T>()
    }

    fn resolve(registry: &mut Registry, _hooks: &mut BoundaryHooks) -> ServiceId {
        registry.resolve::<T>()
    }

    #[inline]
    unsafe fn fetch<'w>(id: ServiceId, cells: &ServiceCells<'w>) -> &'w mut T {
        // SAFETY: the node declared gated access to `id` (`declare`); the plan
        // makes a gate alone in its lane, so this is the only reference.
        match unsafe { cells.get_mut::<T>(id) } {
            Some(value) => value,
            None => missing(Self::service_name()),
        }
    }
}

/// A read-only gate (reference 003's `[GatedAccess] in T`): a barrier in
/// `T`'s lane, like `&mut T` (every accessor before it finishes first, every
/// one after waits for it), that only reads. It does not bump `T`'s version,
/// so factories reading `T` do not rerun because of it.
///
/// ```
/// use sluice::{Gate, World};
/// struct Log(Vec<u32>);
/// fn snapshot(log: Gate<&Log>) {
///     // Sees every write before it in the lane, and none after it.
///     assert!(log.0.len() <= 1);
/// }
/// let mut world = World::new();
/// world.insert(Log(Vec::new()));
/// world.add_system(snapshot);
/// world.run_iteration()?;
/// # Ok::<(), sluice::IterationError>(())
/// ```
#[derive(Debug)]
pub struct Gate<R>(R);

impl<T> std::ops::Deref for Gate<&T> {
    type Target = T;

    #[inline]
    fn deref(&self) -> &T {
        self.0
    }
}

impl<'w, T> Gate<&'w T> {
    /// The value, for as long as the node runs.
    #[inline]
    pub fn get(&self) -> &'w T {
        self.0
    }
}

// SAFETY: `fetch` reads only `T`'s slot, through shared access; the node is
// declared gated, which is stronger (it runs alone in `T`'s lane).
unsafe impl<T: Send + Sync + 'static> Param for Gate<&T> {
    type Item<'w> = Gate<&'w T>;
    const KIND: AccessKind = AccessKind::Gated;

    fn service_name() -> &'static str {
        <&T as Param>::service_name()
    }

    // Declared and resolved as `&mut T`: the same barrier in the lane.
    fn declare(node: NodeBuilder) -> NodeBuilder {
        <&mut T as Param>::declare(node)
    }

    fn resolve(registry: &mut Registry, hooks: &mut BoundaryHooks) -> ServiceId {
        <&mut T as Param>::resolve(registry, hooks)
    }

    #[inline]
    unsafe fn fetch<'w>(id: ServiceId, cells: &ServiceCells<'w>) -> Gate<&'w T> {
        // SAFETY: the node declared gated access to `id` (`declare`), so it
        // runs alone in `id`'s lane; reading through `get` leaves the version
        // where it was.
        match unsafe { cells.get::<T>(id) } {
            Some(value) => Gate(value),
            None => missing(Self::service_name()),
        }
    }
}

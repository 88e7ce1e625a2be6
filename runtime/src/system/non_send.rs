//! [`NonSend`] and [`NonSendMut`]: parameters for services whose value is
//! not `Send` (inserted with [`World::insert_non_send`](crate::World::insert_non_send)),
//! Bevy's names for the same thing. They are `&T` and `&mut T` of the
//! service's lane (shared and gated, ordered by the one rule), and they pin
//! their node to the main thread: the thread that runs the iteration, the
//! only one the value may be touched on.

use std::ops::{Deref, DerefMut};

use crate::access::{AccessKind, ServiceId};
use crate::node::NodeBuilder;
use crate::non_send::NonSendCell;
use crate::registry::Registry;
use crate::system::cells::ServiceCells;
use crate::system::condition::ReadOnlyParam;
use crate::system::output::BoundaryHooks;
use crate::system::param::Param;

/// Shared access to the non-`Send` service `T` (like `&T`); pins the node to
/// the main thread.
///
/// ```
/// use std::rc::Rc;
/// use sluice::{NonSend, World};
///
/// struct Window(Rc<String>);
/// fn title(window: NonSend<Window>) {
///     assert_eq!(*window.0, "sluice");
/// }
/// let mut world = World::new();
/// world.insert_non_send(Window(Rc::new("sluice".to_owned())));
/// world.add_system(title);
/// world.run_iteration()?;
/// # Ok::<(), sluice::IterationError>(())
/// ```
#[derive(Debug)]
pub struct NonSend<'w, T: 'static>(&'w T);

/// Gated access to the non-`Send` service `T` (like `&mut T`); pins the node
/// to the main thread.
#[derive(Debug)]
pub struct NonSendMut<'w, T: 'static>(&'w mut T);

impl<T> Deref for NonSend<'_, T> {
    type Target = T;

    #[inline]
    fn deref(&self) -> &T {
        self.0
    }
}

impl<T> Deref for NonSendMut<'_, T> {
    type Target = T;

    #[inline]
    fn deref(&self) -> &T {
        self.0
    }
}

impl<T> DerefMut for NonSendMut<'_, T> {
    #[inline]
    fn deref_mut(&mut self) -> &mut T {
        self.0
    }
}

#[cold]
#[inline(never)]
fn unreachable_here(service: &str) -> ! {
    panic!(
        "non-Send service `{service}` is declared but not reachable here: insert it with \
         `World::insert_non_send` on the thread that runs the world's iterations"
    )
}

// SAFETY: `fetch` reads only `T`'s slot, through shared access, as declared;
// the value is reached only through `NonSendCell::get`, which is `None` on
// any thread but its own.
unsafe impl<T: 'static> Param for NonSend<'_, T> {
    type Item<'w> = NonSend<'w, T>;
    const KIND: AccessKind = AccessKind::Shared;

    fn service_name() -> &'static str {
        std::any::type_name::<T>()
    }

    fn declare(node: NodeBuilder) -> NodeBuilder {
        node.reads_non_send::<T>()
    }

    fn resolve(registry: &mut Registry, _hooks: &mut BoundaryHooks) -> ServiceId {
        registry.resolve_non_send::<T>()
    }

    #[inline]
    unsafe fn fetch<'w>(id: ServiceId, cells: &ServiceCells<'w>) -> NonSend<'w, T> {
        // SAFETY: the node declared shared access to `id` (`declare`), and the
        // caller runs it as a plan node, so no gate of `id` runs now.
        let cell = unsafe { cells.get::<NonSendCell<T>>(id) };
        match cell.and_then(NonSendCell::get) {
            Some(value) => NonSend(value),
            None => unreachable_here(Self::service_name()),
        }
    }
}

impl<T: 'static> ReadOnlyParam for NonSend<'_, T> {}

// SAFETY: `fetch` reaches only `T`'s slot, through gated access, as
// declared; the value is reached only on its own thread (`NonSendCell`).
unsafe impl<T: 'static> Param for NonSendMut<'_, T> {
    type Item<'w> = NonSendMut<'w, T>;
    const KIND: AccessKind = AccessKind::Gated;

    fn service_name() -> &'static str {
        std::any::type_name::<T>()
    }

    fn declare(node: NodeBuilder) -> NodeBuilder {
        node.gates_non_send::<T>()
    }

    fn resolve(registry: &mut Registry, _hooks: &mut BoundaryHooks) -> ServiceId {
        registry.resolve_non_send::<T>()
    }

    #[inline]
    unsafe fn fetch<'w>(id: ServiceId, cells: &ServiceCells<'w>) -> NonSendMut<'w, T> {
        // SAFETY: the node declared gated access to `id` (`declare`); the plan
        // makes a gate alone in its lane, so this is the only reference.
        let cell = unsafe { cells.get_mut::<NonSendCell<T>>(id) };
        match cell.and_then(NonSendCell::get_mut) {
            Some(value) => NonSendMut(value),
            None => unreachable_here(Self::service_name()),
        }
    }
}

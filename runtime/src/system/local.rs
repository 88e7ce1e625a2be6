//! [`Local<T>`]: state a node keeps for itself from one run to the next.

use std::ops::{Deref, DerefMut};

use std::sync::{Mutex, PoisonError};

use crate::access::{AccessKind, ServiceId};
use crate::node::NodeBuilder;
use crate::registry::Registry;
use crate::system::cells::ServiceCells;
use crate::system::condition::ReadOnlyParam;
use crate::system::output::BoundaryHooks;
use crate::system::param::Param;

/// State a system keeps for itself across iterations, starting at
/// `T::default()`: a counter, a scratch buffer, a timer.
///
/// Each `Local` parameter of each registration is its own value: two
/// registrations of one function have two, a system's body and each of its
/// run conditions have their own, and two `Local<T>` parameters of one
/// function are two values. Removing the node drops its values; registering
/// it again starts from `T::default()`.
///
/// It declares nothing (no service, no lane, no edge): nothing but its own
/// node part ever reaches it, and a node runs on one thread at a time, so
/// `T` needs to be `Send`, not `Sync`. Run conditions may take one too.
///
/// Snapshots leave it out (their report names it) unless its type is opted
/// in with [`World::snapshot_local`](crate::World::snapshot_local).
///
/// ```
/// use sluice::{Local, NodeBuilder, World};
///
/// #[derive(Default)]
/// struct Ticks(Vec<u32>);
///
/// fn count(mut runs: Local<u32>, ticks: &mut Ticks) {
///     *runs += 1;
///     ticks.0.push(*runs);
/// }
///
/// let mut world = World::new();
/// world.insert(Ticks::default());
/// world.add_system(count);
/// world.add_system(NodeBuilder::new("second").system(count)); // its own counter
/// world.run_iteration()?;
/// world.run_iteration()?;
/// assert_eq!(world.get::<Ticks>().unwrap().0, [1, 1, 2, 2]);
/// # Ok::<(), sluice::IterationError>(())
/// ```
pub struct Local<'s, T: Default + Send + 'static> {
    value: &'s mut T,
}

impl<T: Default + Send + std::fmt::Debug + 'static> std::fmt::Debug for Local<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Local").field(&*self.value).finish()
    }
}

impl<T: Default + Send + 'static> Deref for Local<'_, T> {
    type Target = T;

    #[inline]
    fn deref(&self) -> &T {
        self.value
    }
}

impl<T: Default + Send + 'static> DerefMut for Local<'_, T> {
    #[inline]
    fn deref_mut(&mut self) -> &mut T {
        self.value
    }
}

/// What a local's slot holds: `T` in a `Mutex`, which is `Sync` for a
/// `Send` `T` (the slots hold `Send + Sync` values). A run reaches it
/// through `&mut` (`get_mut`: no locking); only a snapshot
/// (`World::snapshot_local`) locks it, to clone it through `&World`.
pub(crate) type LocalValue<T> = Mutex<T>;

// SAFETY: `declare` declares nothing and `fetch` touches only the slot
// `resolve` made for this parameter of this node part alone (no type, name
// or declaration reaches it: `ServiceTable::push_local`), through the one
// `&mut` it lends for the run; a node part runs on one thread at a time.
unsafe impl<T: Default + Send + 'static> Param for Local<'_, T> {
    type Item<'w> = Local<'w, T>;
    // The weakest kind: it touches no service at all.
    const KIND: AccessKind = AccessKind::Shared;

    fn service_name() -> &'static str {
        std::any::type_name::<Self>()
    }

    fn declare(node: NodeBuilder) -> NodeBuilder {
        // No lane: only keeps the positions of the parameters after it.
        node.skips_parameter()
    }

    fn resolve(registry: &mut Registry, hooks: &mut BoundaryHooks) -> ServiceId {
        let id = registry.add_local(std::any::type_name::<Self>(), LocalValue::new(T::default()));
        hooks.add_local(id);
        id
    }

    #[inline]
    unsafe fn fetch<'w>(id: ServiceId, cells: &ServiceCells<'w>) -> Local<'w, T> {
        // SAFETY: `id` is this parameter's own slot (`resolve`, the caller's
        // guarantee), and its node part runs on this thread alone
        // (SOUNDNESS.md S5); the `&mut` is the only one for the run.
        let value = unsafe { cells.local_mut::<LocalValue<T>>(id) };
        Local {
            value: value
                .expect("a local's slot holds its value from registration until removal")
                .get_mut()
                // Poisoned only by a `Clone` that panicked in a snapshot:
                // the value itself is whole.
                .unwrap_or_else(PoisonError::into_inner),
        }
    }
}

/// A run condition may keep state of its own, apart from its body's.
impl<T: Default + Send + 'static> ReadOnlyParam for Local<'_, T> {}

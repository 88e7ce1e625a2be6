//! Optional services: `Option<&T>` and `Option<&mut T>` parameters
//! (reference 002's `OptionalRes<T>`, as in its `Enabled` run condition).
//!
//! Each declares exactly the lane its plain form does (`Option<&T>` shared,
//! `Option<&mut T>` gated), through the same builder calls and so through
//! the one gate (`node::would_alias`): `(&mut T, Option<&T>)` aliases like
//! `(&mut T, &T)`. What differs is only what a missing service means: the
//! parameter is `None` instead of the node failing, and the world's check
//! before the first run (`IterationError::MissingServices`) does not list
//! it. The value is looked up on every run, so a service inserted between
//! iterations is `Some` in the next one and one removed
//! ([`World::remove`](crate::World::remove)) is `None`.
//!
//! ```
//! use sluice::{NodeBuilder, World, run_condition, system};
//!
//! struct FrameTime(f32);
//! struct Moved(u32);
//!
//! #[run_condition]
//! fn enabled(time: Option<&FrameTime>) -> bool {
//!     time.is_some()
//! }
//!
//! #[system(run_if = enabled)]
//! fn step(moved: &mut Moved) {
//!     moved.0 += 1;
//! }
//!
//! let mut world = World::new();
//! world.insert(Moved(0));
//! world.add_system(step);
//! world.run_iteration()?; // no FrameTime: the condition is false
//! world.insert(FrameTime(0.016));
//! world.run_iteration()?;
//! assert_eq!(world.get::<Moved>().map(|m| m.0), Some(1));
//! # Ok::<(), sluice::IterationError>(())
//! ```

use crate::access::{AccessKind, ServiceId};
use crate::node::NodeBuilder;
use crate::registry::Registry;
use crate::system::cells::ServiceCells;
use crate::system::condition::ReadOnlyParam;
use crate::system::output::BoundaryHooks;
use crate::system::param::Param;

// SAFETY: `fetch` reads only `T`'s slot, through shared access, as the
// `&T` declaration it reuses declares.
unsafe impl<T: Send + Sync + 'static> Param for Option<&T> {
    type Item<'w> = Option<&'w T>;
    const KIND: AccessKind = AccessKind::Shared;

    fn service_name() -> &'static str {
        <&T as Param>::service_name()
    }

    fn declare(node: NodeBuilder) -> NodeBuilder {
        node.optionally(<&T as Param>::declare)
    }

    fn resolve(registry: &mut Registry, hooks: &mut BoundaryHooks) -> ServiceId {
        <&T as Param>::resolve(registry, hooks)
    }

    #[inline]
    unsafe fn fetch<'w>(id: ServiceId, cells: &ServiceCells<'w>) -> Option<&'w T> {
        // SAFETY: the node declared shared access to `id` (`declare`), and
        // the caller runs it as a plan node, so no gate of `id` runs now.
        unsafe { cells.get::<T>(id) }
    }
}

// SAFETY: `fetch` reaches only `T`'s slot, through gated access, as the
// `&mut T` declaration it reuses declares.
unsafe impl<T: Send + Sync + 'static> Param for Option<&mut T> {
    type Item<'w> = Option<&'w mut T>;
    const KIND: AccessKind = AccessKind::Gated;

    fn service_name() -> &'static str {
        <&mut T as Param>::service_name()
    }

    fn declare(node: NodeBuilder) -> NodeBuilder {
        node.optionally(<&mut T as Param>::declare)
    }

    fn resolve(registry: &mut Registry, hooks: &mut BoundaryHooks) -> ServiceId {
        <&mut T as Param>::resolve(registry, hooks)
    }

    #[inline]
    unsafe fn fetch<'w>(id: ServiceId, cells: &ServiceCells<'w>) -> Option<&'w mut T> {
        // SAFETY: the node declared gated access to `id` (`declare`); the
        // plan makes a gate alone in its lane, so this is the only
        // reference. An absent value bumps no version (`get_mut`).
        unsafe { cells.get_mut::<T>(id) }
    }
}

impl<T: Send + Sync + 'static> ReadOnlyParam for Option<&T> {}

//! Which entities a query visits beyond what its data requires: `With<T>`
//! and `Without<T>` by archetype, `Changed<T>` and `Added<T>` by row (since
//! the system's last run), and tuples of them.

use std::any::TypeId;
use std::marker::PhantomData;

use crate::entity::column::Column;
use crate::entity::query::Lane;
use crate::entity::query::data::column_of;
use crate::entity::{Archetype, Component, ComponentId, Components, Entities};
use crate::node::NodeBuilder;
use crate::registry::Registry;
use crate::sync::UnsafeCell;

/// Keeps entities that have a `T` (without reading it).
pub struct With<T>(PhantomData<fn() -> T>);

/// Keeps entities that have no `T`.
pub struct Without<T>(PhantomData<fn() -> T>);

/// Keeps entities whose `T` was written (or added) since the system last
/// ran. Reads `T`'s change ticks: shared on `T`'s lane.
pub struct Changed<T>(PhantomData<fn() -> T>);

/// Keeps entities whose `T` was added since the system last ran. Shared on
/// `T`'s lane.
pub struct Added<T>(PhantomData<fn() -> T>);

macro_rules! debug_by_name {
    ($($filter:ident),+) => {$(
        impl<T> std::fmt::Debug for $filter<T> {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(f, "{}<{}>", stringify!($filter), std::any::type_name::<T>())
            }
        }
    )+};
}

debug_by_name!(With, Without, Changed, Added);

/// A filter on the entities a query visits.
///
/// # Safety
/// `declare` declares shared access to the lane of every component whose
/// ticks `row` reads (unless the query's data already declares that lane),
/// and `row` reads nothing else.
pub unsafe trait QueryFilter {
    /// The component ids, looked up once per run.
    type Ids: Copy + Send + Sync;
    /// One archetype's state for [`row`](Self::row).
    type Fetch<'w>: Copy;
    /// Whether [`row`](Self::row) can refuse a row (otherwise only
    /// archetypes are filtered).
    const BY_ROW: bool;
    /// Adds the lanes the filter reads to `node`, except those in `declared`
    /// (the query's data holds them already, as strongly or more).
    fn declare(node: NodeBuilder, declared: &[(TypeId, bool)]) -> NodeBuilder;
    /// Makes sure the world holds those lanes.
    fn resolve(registry: &mut Registry);
    /// The ids (a component never stored has none: no archetype has it).
    fn ids(components: &Components) -> Self::Ids;
    /// Whether the query visits `archetype` at all.
    fn matches(ids: Self::Ids, archetype: &Archetype) -> bool;
    /// `archetype`'s state, for a system whose cursor is `last_run`.
    ///
    /// # Safety
    /// `archetype` matches `ids`.
    unsafe fn fetch<'w>(ids: Self::Ids, archetype: &'w Archetype, last_run: u32)
    -> Self::Fetch<'w>;
    /// Whether the query visits row `row`.
    ///
    /// # Safety
    /// `row` is a live row of the fetched archetype, and the node holds the
    /// lanes `declare` declared.
    unsafe fn row(fetch: Self::Fetch<'_>, row: usize) -> bool;
    /// Whether this names [`Disabled`](crate::Disabled), so the query sees
    /// disabled entities (see [`Allow`](crate::Allow)); `false` unless
    /// overridden.
    #[inline]
    fn sees_disabled() -> bool {
        false
    }
}

/// The methods of an archetype-only filter.
macro_rules! by_archetype {
    () => {
        type Fetch<'w> = ();
        const BY_ROW: bool = false;

        fn declare(node: NodeBuilder, _declared: &[(TypeId, bool)]) -> NodeBuilder {
            node
        }

        fn resolve(_registry: &mut Registry) {}

        unsafe fn fetch<'w>(
            _ids: Self::Ids,
            _archetype: &'w Archetype,
            _last_run: u32,
        ) -> Self::Fetch<'w> {
        }

        #[inline]
        unsafe fn row((): (), _row: usize) -> bool {
            true
        }
    };
}

// SAFETY: reads nothing.
unsafe impl QueryFilter for () {
    type Ids = ();
    by_archetype!();

    fn ids(_components: &Components) {}

    fn matches((): (), _archetype: &Archetype) -> bool {
        true
    }
}

// SAFETY: reads nothing (the archetype's component set only).
unsafe impl<T: Component> QueryFilter for With<T> {
    type Ids = Option<ComponentId>;
    by_archetype!();

    fn ids(components: &Components) -> Option<ComponentId> {
        components.id_of::<T>()
    }

    fn matches(id: Option<ComponentId>, archetype: &Archetype) -> bool {
        id.is_some_and(|id| archetype.contains(id))
    }

    fn sees_disabled() -> bool {
        crate::entity::disabled::is_disabled::<T>()
    }
}

// SAFETY: reads nothing (the archetype's component set only).
unsafe impl<T: Component> QueryFilter for Without<T> {
    type Ids = Option<ComponentId>;
    by_archetype!();

    fn ids(components: &Components) -> Option<ComponentId> {
        components.id_of::<T>()
    }

    fn matches(id: Option<ComponentId>, archetype: &Archetype) -> bool {
        id.is_none_or(|id| !archetype.contains(id))
    }

    fn sees_disabled() -> bool {
        crate::entity::disabled::is_disabled::<T>()
    }
}

/// One archetype's ticks of the filtered component, and the cursor.
#[derive(Debug)]
pub struct TickFetch<'w> {
    /// The column's added ticks, one per row.
    added: &'w [u32],
    /// The column's changed ticks, one per row.
    changed: &'w [UnsafeCell<u32>],
    last_run: u32,
}

impl<'w> TickFetch<'w> {
    fn new(column: &'w Column, last_run: u32) -> Self {
        Self {
            added: column.added_ticks(),
            changed: column.changed_cells(),
            last_run,
        }
    }

    /// Row `row`'s added tick, read without a bound check (a filter reads
    /// one per row visited).
    ///
    /// # Safety
    /// `row` is a live row of the column (below its length, the ticks').
    #[inline]
    unsafe fn added(self, row: usize) -> u32 {
        // SAFETY: `row` is below the slice's length (caller).
        unsafe { *self.added.get_unchecked(row) }
    }

    /// Row `row`'s changed tick, as [`added`](Self::added).
    ///
    /// # Safety
    /// `row` is a live row of the column, and the node holds the column's
    /// lane (`QueryFilter::row`'s contract).
    #[inline]
    unsafe fn changed(self, row: usize) -> u32 {
        // SAFETY: `row` is below the slice's length (caller); the node
        // holds the lane, shared or through its data's gated `&mut`, so
        // no other system writes the cell now, and this query's own `Mut`
        // items write only their own rows' cells, never while this row's
        // is read (a row is filtered before its item is made).
        unsafe { self.changed.get_unchecked(row).with(|tick| *tick) }
    }
}

impl Clone for TickFetch<'_> {
    fn clone(&self) -> Self {
        *self
    }
}

impl Copy for TickFetch<'_> {}

/// The methods of a filter by one component's tick.
macro_rules! by_tick {
    ($tick:ident) => {
        type Ids = Option<ComponentId>;
        type Fetch<'w> = TickFetch<'w>;
        const BY_ROW: bool = true;

        fn declare(node: NodeBuilder, declared: &[(TypeId, bool)]) -> NodeBuilder {
            if declared
                .iter()
                .any(|&(lane, _)| lane == TypeId::of::<Lane<T>>())
            {
                node
            } else {
                Lane::<T>::read(node)
            }
        }

        fn resolve(registry: &mut Registry) {
            Lane::<T>::resolve(registry);
        }

        fn ids(components: &Components) -> Option<ComponentId> {
            components.id_of::<T>()
        }

        fn matches(id: Option<ComponentId>, archetype: &Archetype) -> bool {
            id.is_some_and(|id| archetype.contains(id))
        }

        unsafe fn fetch<'w>(
            id: Option<ComponentId>,
            archetype: &'w Archetype,
            last_run: u32,
        ) -> TickFetch<'w> {
            let id = id.expect("a matching archetype has the component");
            TickFetch::new(column_of(archetype, id), last_run)
        }

        #[inline]
        unsafe fn row(fetch: TickFetch<'_>, row: usize) -> bool {
            // SAFETY: `row` is live and the node holds the lane (caller).
            Entities::is_newer(unsafe { fetch.$tick(row) }, fetch.last_run)
        }
    };
}

// SAFETY: reads `T`'s changed ticks, declared shared on `T`'s lane (or held
// by the query's data).
unsafe impl<T: Component> QueryFilter for Changed<T> {
    by_tick!(changed);
}

// SAFETY: reads `T`'s added ticks, as `Changed<T>`.
unsafe impl<T: Component> QueryFilter for Added<T> {
    by_tick!(added);
}

macro_rules! impl_tuples {
    ($($name:ident $index:tt),+) => {
        // SAFETY: each element keeps its own contract.
        unsafe impl<$($name: QueryFilter),+> QueryFilter for ($($name,)+) {
            type Ids = ($($name::Ids,)+);
            type Fetch<'w> = ($($name::Fetch<'w>,)+);
            const BY_ROW: bool = $($name::BY_ROW)||+;

            fn sees_disabled() -> bool {
                $($name::sees_disabled())||+
            }

            fn declare(node: NodeBuilder, declared: &[(TypeId, bool)]) -> NodeBuilder {
                $(let node = $name::declare(node, declared);)+
                node
            }

            fn resolve(registry: &mut Registry) {
                $($name::resolve(registry);)+
            }

            fn ids(components: &Components) -> Self::Ids {
                ($($name::ids(components),)+)
            }

            fn matches(ids: Self::Ids, archetype: &Archetype) -> bool {
                $($name::matches(ids.$index, archetype))&&+
            }

            unsafe fn fetch<'w>(ids: Self::Ids, archetype: &'w Archetype, last_run: u32) -> Self::Fetch<'w> {
                // SAFETY: forwarded from the caller.
                ($(unsafe { $name::fetch(ids.$index, archetype, last_run) },)+)
            }

            #[inline]
            unsafe fn row(fetch: Self::Fetch<'_>, row: usize) -> bool {
                // SAFETY: forwarded from the caller.
                $((unsafe { $name::row(fetch.$index, row) }))&&+
            }
        }
    };
}

crate::tuples::for_tuples!(impl_tuples, 4);

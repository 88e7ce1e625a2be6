//! Which entities a query visits beyond what its data requires: `With<T>`
//! and `Without<T>` by archetype, `Changed<T>` and `Added<T>` by row (since
//! the system's last run), and tuples of them.

use std::any::TypeId;
use std::marker::PhantomData;

use crate::entity::column::Column;
use crate::entity::query::Lane;
use crate::entity::query::data::column_of;
use crate::entity::{Archetype, Component, ComponentId, Components, Entities, Entity};
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
    /// Whether no row of `archetype` can pass for a system whose cursor is
    /// `last_run`, known without reading a row: a `Changed<T>` whose column
    /// no one wrote since then. A table walk skips such an archetype
    /// whole. `false` (unknown) unless overridden; `true` only when it is
    /// sure.
    #[inline]
    fn refuses_all(ids: Self::Ids, archetype: &Archetype, last_run: u32) -> bool {
        let _ = (ids, archetype, last_run);
        false
    }

    /// Whether this names [`Disabled`](crate::Disabled), so the query sees
    /// disabled entities (see [`Allow`](crate::Allow)); `false` unless
    /// overridden.
    #[inline]
    fn sees_disabled() -> bool {
        false
    }

    /// Whether the filter names a component kept in a sparse set, which
    /// archetypes do not list: the query then takes its sparse walk and
    /// asks [`sparse_row`](Self::sparse_row) of every row (see
    /// [`QueryData::names_sparse`](super::QueryData::names_sparse)).
    /// `false` unless overridden.
    #[inline]
    fn names_sparse(ids: Self::Ids) -> bool {
        let _ = ids;
        false
    }

    /// A sparse-set component every kept entity has (`With<S>`,
    /// `Changed<S>`, `Added<S>`), if any: a query may walk its set. `None`
    /// unless overridden.
    #[inline]
    fn required_sparse(ids: Self::Ids) -> Option<ComponentId> {
        let _ = ids;
        None
    }

    /// Whether this filter keeps every entity of the sparse-set component
    /// `set`'s set, whatever its archetype (`()`, `With<S>` of that
    /// component, [`Allow`](crate::Allow)): the set walk may then skip
    /// asking it row by row. `false` unless overridden.
    #[inline]
    fn keeps_set(ids: Self::Ids, set: ComponentId) -> bool {
        let _ = (ids, set);
        false
    }

    /// Whether the query keeps row `row` of `archetype` (whose entity is
    /// `entity`) on the sparse walk, for a system whose cursor is
    /// `last_run`: sparse-set components are looked up in their sets. The
    /// default fetches the archetype and asks [`row`](Self::row).
    ///
    /// # Safety
    /// `archetype` (one of `entities`') matches `ids`, `row` is a live row
    /// of it, and the node holds the lanes `declare` declared.
    #[inline]
    unsafe fn sparse_row(
        ids: Self::Ids,
        entities: &Entities,
        archetype: &Archetype,
        row: usize,
        entity: Entity,
        last_run: u32,
    ) -> bool {
        let _ = (entities, entity);
        // SAFETY: the caller's.
        !Self::BY_ROW || unsafe { Self::row(Self::fetch(ids, archetype, last_run), row) }
    }
}

/// The `ids` and `names_sparse` of a filter on one component `T`.
macro_rules! component_ids {
    () => {
        fn ids(components: &Components) -> Option<(ComponentId, bool)> {
            crate::entity::query::data::term_of::<T>(components)
        }

        #[inline]
        fn names_sparse(ids: Option<(ComponentId, bool)>) -> bool {
            ids.is_some_and(|(_, sparse)| sparse)
        }
    };
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

    #[inline]
    fn keeps_set((): (), _set: ComponentId) -> bool {
        true
    }
}

// SAFETY: reads nothing (the archetype's component set only).
unsafe impl<T: Component> QueryFilter for With<T> {
    type Ids = Option<(ComponentId, bool)>;
    by_archetype!();
    component_ids!();

    /// A sparse `T` is in no archetype: the sparse walk asks each row.
    fn matches(ids: Option<(ComponentId, bool)>, archetype: &Archetype) -> bool {
        ids.is_some_and(|(id, sparse)| sparse || archetype.contains(id))
    }

    #[inline]
    fn required_sparse(ids: Option<(ComponentId, bool)>) -> Option<ComponentId> {
        ids.filter(|&(_, sparse)| sparse).map(|(id, _)| id)
    }

    /// Every entity of `T`'s own set has `T`.
    #[inline]
    fn keeps_set(ids: Option<(ComponentId, bool)>, set: ComponentId) -> bool {
        ids == Some((set, true))
    }

    #[inline]
    unsafe fn sparse_row(
        ids: Option<(ComponentId, bool)>,
        entities: &Entities,
        _archetype: &Archetype,
        _row: usize,
        entity: Entity,
        _last_run: u32,
    ) -> bool {
        match ids {
            Some((id, true)) => entities
                .sparse_set(id)
                .is_some_and(|set| set.contains(entity)),
            // The archetype has it (it matched).
            _ => true,
        }
    }

    fn sees_disabled() -> bool {
        crate::entity::disabled::is_disabled::<T>()
    }
}

// SAFETY: reads nothing (the archetype's component set only).
unsafe impl<T: Component> QueryFilter for Without<T> {
    type Ids = Option<(ComponentId, bool)>;
    by_archetype!();
    component_ids!();

    /// A sparse `T` is in no archetype: the sparse walk asks each row.
    fn matches(ids: Option<(ComponentId, bool)>, archetype: &Archetype) -> bool {
        ids.is_none_or(|(id, sparse)| sparse || !archetype.contains(id))
    }

    #[inline]
    unsafe fn sparse_row(
        ids: Option<(ComponentId, bool)>,
        entities: &Entities,
        _archetype: &Archetype,
        _row: usize,
        entity: Entity,
        _last_run: u32,
    ) -> bool {
        match ids {
            Some((id, true)) => entities
                .sparse_set(id)
                .is_none_or(|set| !set.contains(entity)),
            // The archetype lacks it (it matched).
            _ => true,
        }
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
    ($tick:ident, $column_tick:ident) => {
        type Ids = Option<(ComponentId, bool)>;
        type Fetch<'w> = TickFetch<'w>;
        const BY_ROW: bool = true;
        component_ids!();

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

        /// A sparse `T` is in no archetype: the sparse walk asks each row.
        fn matches(ids: Option<(ComponentId, bool)>, archetype: &Archetype) -> bool {
            ids.is_some_and(|(id, sparse)| sparse || archetype.contains(id))
        }

        unsafe fn fetch<'w>(
            ids: Option<(ComponentId, bool)>,
            archetype: &'w Archetype,
            last_run: u32,
        ) -> TickFetch<'w> {
            let (id, _) = ids.expect("a matching archetype has the component");
            TickFetch::new(column_of(archetype, id), last_run)
        }

        #[inline]
        unsafe fn row(fetch: TickFetch<'_>, row: usize) -> bool {
            // SAFETY: `row` is live and the node holds the lane (caller).
            Entities::is_newer(unsafe { fetch.$tick(row) }, fetch.last_run)
        }

        #[inline]
        fn required_sparse(ids: Option<(ComponentId, bool)>) -> Option<ComponentId> {
            ids.filter(|&(_, sparse)| sparse).map(|(id, _)| id)
        }

        #[inline]
        unsafe fn sparse_row(
            ids: Option<(ComponentId, bool)>,
            entities: &Entities,
            archetype: &Archetype,
            row: usize,
            entity: Entity,
            last_run: u32,
        ) -> bool {
            let tick = match ids {
                Some((id, true)) => entities.sparse_set(id).and_then(|set| {
                    let index = set.index_of(entity)?;
                    Some(set.column().$column_tick(index))
                }),
                Some((id, false)) => Some(column_of(archetype, id).$column_tick(row)),
                None => None,
            };
            tick.is_some_and(|tick| Entities::is_newer(tick, last_run))
        }
    };
}

// SAFETY: reads `T`'s changed ticks, declared shared on `T`'s lane (or held
// by the query's data).
unsafe impl<T: Component> QueryFilter for Changed<T> {
    by_tick!(changed, changed_tick);

    /// The column's bound: no row's changed tick is newer than it (a
    /// sparse `T` is not in the archetype's columns: unknown).
    #[inline]
    fn refuses_all(ids: Option<(ComponentId, bool)>, archetype: &Archetype, last_run: u32) -> bool {
        match ids {
            Some((_, true)) => false,
            Some((id, false)) if archetype.contains(id) => {
                !Entities::is_newer(column_of(archetype, id).changed_bound(), last_run)
            }
            // No `T` here: nothing passes.
            _ => true,
        }
    }
}

// SAFETY: reads `T`'s added ticks, as `Changed<T>`.
unsafe impl<T: Component> QueryFilter for Added<T> {
    by_tick!(added, added_tick);
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

            #[inline]
            fn refuses_all(ids: Self::Ids, archetype: &Archetype, last_run: u32) -> bool {
                $($name::refuses_all(ids.$index, archetype, last_run))||+
            }

            #[inline]
            fn names_sparse(ids: Self::Ids) -> bool {
                $($name::names_sparse(ids.$index))||+
            }

            #[inline]
            fn required_sparse(ids: Self::Ids) -> Option<ComponentId> {
                None$(.or_else(|| $name::required_sparse(ids.$index)))+
            }

            #[inline]
            fn keeps_set(ids: Self::Ids, set: ComponentId) -> bool {
                $($name::keeps_set(ids.$index, set))&&+
            }

            #[inline]
            unsafe fn sparse_row(ids: Self::Ids, entities: &Entities, archetype: &Archetype, row: usize, entity: Entity, last_run: u32) -> bool {
                // SAFETY: forwarded from the caller.
                $((unsafe { $name::sparse_row(ids.$index, entities, archetype, row, entity, last_run) }))&&+
            }
        }
    };
}

crate::tuples::for_tuples!(impl_tuples, 4);

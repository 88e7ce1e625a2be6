//! What a query yields per entity: `&C`, `Entity`, `Option<&C>` and tuples
//! of them (`&mut C`, `Option<&mut C>` and `Ref<C>`: `change.rs`).

use std::any::TypeId;
use std::marker::PhantomData;

use crate::access::AccessKind;
use crate::entity::column::Column;
use crate::entity::query::RunTicks;
use crate::entity::{Archetype, Component, ComponentId, Components, Entities, Entity};
use crate::node::{Declaration, DeclaredBy, NodeBuilder, would_alias};
use crate::registry::Registry;

/// A component's lane: the service id the planner orders accesses to `C`
/// by. `&C` in a query is shared on it, `&mut C` gated, so the one ordering
/// rule applies to components unchanged.
pub struct Lane<C: 'static>(PhantomData<fn() -> C>);

impl<C: 'static> std::fmt::Debug for Lane<C> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Lane<{}>", std::any::type_name::<C>())
    }
}

impl<C: 'static> Lane<C> {
    /// Declares shared access to `C`'s lane.
    pub(crate) fn read(node: NodeBuilder) -> NodeBuilder {
        node.reads::<Self>()
    }

    /// Declares gated access to `C`'s lane.
    pub(crate) fn gate(node: NodeBuilder) -> NodeBuilder {
        node.gates::<Self>()
    }

    /// Makes sure the world holds the lane (it carries no data).
    pub(crate) fn resolve(registry: &mut Registry) {
        if registry.get::<Self>().is_none() {
            registry.insert(Self(PhantomData));
        }
    }
}

/// One element of a query's item.
///
/// # Safety
/// - `declare` declares shared access to the lane of every component `item`
///   reads, and gated access to the lane of every component it writes;
/// - `fetch` and `item` touch nothing else, and `item` hands out a `&mut`
///   only to a row of a component declared gated.
pub unsafe trait QueryData {
    /// What the query yields per entity, borrowed for `'w`.
    type Item<'w>;
    /// The component ids, looked up once per run.
    type Ids: Copy + Send + Sync;
    /// One archetype's columns, ready for rows.
    type Fetch<'w>: Copy;
    /// Adds the lanes this data touches to `node`.
    fn declare(node: NodeBuilder) -> NodeBuilder;
    /// The lanes `declare` declares (as `TypeId`s of [`Lane`]s), each with
    /// whether it is written.
    fn lanes(out: &mut Vec<(TypeId, bool)>);
    /// Makes sure the world holds those lanes.
    fn resolve(registry: &mut Registry);
    /// The ids, or `None` when a required component was never stored (no
    /// archetype can match).
    fn ids(components: &Components) -> Option<Self::Ids>;
    /// Whether `archetype` has what this data requires.
    fn matches(ids: Self::Ids, archetype: &Archetype) -> bool;
    /// The first component this data requires that `archetype` lacks, by
    /// type name: the reason [`Query::get`](super::Query::get) gives
    /// ([`QueryEntityError::MissingComponent`](super::QueryEntityError::MissingComponent)).
    /// `None` exactly when [`matches`](Self::matches) would say yes.
    fn missing(components: &Components, archetype: &Archetype) -> Option<&'static str>;
    /// Whether this names [`Disabled`](crate::Disabled), so the query sees
    /// disabled entities (see [`Allow`](crate::Allow)); `false` unless
    /// overridden.
    #[inline]
    fn sees_disabled() -> bool {
        false
    }

    /// `archetype`'s columns (`archetype` is one of `entities`'), for a run
    /// comparing and stamping with `ticks`.
    ///
    /// # Safety
    /// `archetype` matches `ids`, and the node runs under the plan.
    unsafe fn fetch<'w>(
        ids: Self::Ids,
        entities: &'w Entities,
        archetype: &'w Archetype,
        ticks: RunTicks,
    ) -> Self::Fetch<'w>;
    /// Row `row`'s item.
    ///
    /// # Safety
    /// `row` is below the archetype's length, and no other item of this row
    /// handed out by this query is alive when a `&mut` is handed out.
    unsafe fn item<'w>(fetch: Self::Fetch<'w>, row: usize) -> Self::Item<'w>;

    /// Whether this data names a component kept in a sparse set
    /// ([`StorageType::SparseSet`](crate::StorageType)), which archetypes
    /// do not list: a query naming one takes its sparse walk, which looks
    /// rows up one by one (decided once per run of the query, so a query
    /// of table components never pays for it). `false` unless overridden.
    #[inline]
    fn names_sparse(ids: Self::Ids) -> bool {
        let _ = ids;
        false
    }

    /// A sparse-set component every item requires (`&S`, `&mut S`,
    /// `Ref<S>`), if any: a query naming one walks that component's set
    /// rather than every archetype. `None` unless overridden.
    #[inline]
    fn required_sparse(ids: Self::Ids) -> Option<ComponentId> {
        let _ = ids;
        None
    }

    /// Whether every term of this data is the sparse-set component `set`,
    /// required (`&S`, `&mut S`, `Ref<S>`, alone or in a tuple): its items
    /// are then [`item`](Self::item)`(fetch, i)` for each index `i` of the
    /// set's column, with a fetch that needs no archetype, so the set walk
    /// may read the column in order instead of looking each entity up
    /// (`query/sparse.rs: DenseItems`). `false` unless overridden; an
    /// override says `true` only when [`matches`](Self::matches) holds for
    /// every archetype and [`fetch`](Self::fetch) reads nothing of it.
    #[inline]
    fn reads_only_set(ids: Self::Ids, set: ComponentId) -> bool {
        let _ = (ids, set);
        false
    }

    /// The sparse-set component this data requires that `entity` lacks,
    /// by type name; `None` when it has them all (always, for data naming
    /// no sparse component).
    #[inline]
    fn sparse_lacks(ids: Self::Ids, entities: &Entities, entity: Entity) -> Option<&'static str> {
        let _ = (ids, entities, entity);
        None
    }

    /// Row `row`'s item on the sparse walk: `entity` is the row's entity,
    /// whose sparse-set components are looked up in their sets; `None`
    /// when it lacks one this data requires. The default is
    /// [`item`](Self::item).
    ///
    /// # Safety
    /// As for [`item`](Self::item); `fetch` was fetched with `ids` from
    /// `entities`.
    #[inline]
    unsafe fn sparse_item<'w>(
        ids: Self::Ids,
        entities: &'w Entities,
        fetch: Self::Fetch<'w>,
        row: usize,
        entity: Entity,
    ) -> Option<Self::Item<'w>> {
        let _ = (ids, entities, entity);
        // SAFETY: the caller's.
        Some(unsafe { Self::item(fetch, row) })
    }

    /// Runs `body` on `fetch`, one archetype of `len` rows: where
    /// [`Query::for_each`](super::Query::for_each) walks the rows. An
    /// element that hands out references to a column passes the column to
    /// `body` as a slice argument of a function of its own
    /// (`within`), so the compiler knows, while the loop runs, that the
    /// columns do not overlap each other or anything else it writes (and
    /// may keep loads across the loop body's stores, or pair them into
    /// vector operations). The default runs `body` as it is.
    ///
    /// # Safety
    /// `len` is the length of the archetype `fetch` was fetched from, and
    /// for the length of the call no reference to a row of a column this
    /// data writes exists other than those `body` makes from the fetch it
    /// is given (nor, for a column it reads, a `&mut`).
    #[inline]
    unsafe fn scoped<'w, R>(
        fetch: Self::Fetch<'w>,
        len: usize,
        body: impl FnOnce(Self::Fetch<'w>) -> R,
    ) -> R {
        let _ = len;
        body(fetch)
    }
}

/// Runs `body` on `column`, a `&mut [C]` or `&[C]`, inside a function
/// that takes it as an argument: such an argument tells the compiler that
/// nothing else touches the column for the call, and that holds for
/// everything inlined into it (the loop over the rows included).
///
/// The guard makes the function too costly for rustc's own (MIR) inliner,
/// which would inline it before LLVM sees the argument, and so lose what
/// the argument tells; LLVM inlines it later (the guard's drop is empty).
#[inline]
pub(crate) fn within<S, R>(column: S, body: impl FnOnce(S) -> R) -> R {
    let _keep_as_a_function = ScopeGuard;
    body(column)
}

/// See [`within`].
struct ScopeGuard;

impl Drop for ScopeGuard {
    #[inline]
    fn drop(&mut self) {}
}

/// Query data that only reads: a query of it may hand out items through
/// `&self`, and serves run conditions.
///
/// # Safety
/// `item` hands out no `&mut`.
pub unsafe trait ReadOnlyQueryData: QueryData {}

/// The `declare`, `lanes` and `resolve` of a `QueryData` impl on one
/// component `C`, declaring its lane with `Lane::<C>::$access` (`$writes`:
/// a gate).
macro_rules! component_lane {
    ($access:ident, $writes:expr) => {
        fn declare(node: NodeBuilder) -> NodeBuilder {
            Lane::<C>::$access(node)
        }

        fn lanes(out: &mut Vec<(TypeId, bool)>) {
            out.push((TypeId::of::<Lane<C>>(), $writes));
        }

        fn resolve(registry: &mut Registry) {
            Lane::<C>::resolve(registry);
        }
    };
}
pub(crate) use component_lane;

/// The methods of a `QueryData` impl that requires one component `C`,
/// declaring its lane with `Lane::<C>::$access` (`$writes`: a gate), whose
/// fetch has an `item` method taking the index of a value in the column
/// (`$item`): a row in a table, the set's index of the row's entity for a
/// sparse-set component.
macro_rules! required_component {
    ($access:ident, $writes:expr, $item:expr) => {
        $crate::entity::query::data::component_lane!($access, $writes);

        fn ids(components: &Components) -> Option<(ComponentId, bool)> {
            $crate::entity::query::data::term_of::<C>(components)
        }

        /// A sparse component is in no archetype's set: any archetype may
        /// hold entities with it, which the sparse walk asks row by row.
        fn matches((id, sparse): (ComponentId, bool), archetype: &Archetype) -> bool {
            sparse || archetype.contains(id)
        }

        fn missing(components: &Components, archetype: &Archetype) -> Option<&'static str> {
            lacks::<C>(components, archetype)
        }

        fn sees_disabled() -> bool {
            crate::entity::disabled::is_disabled::<C>()
        }

        #[inline]
        fn names_sparse((_, sparse): (ComponentId, bool)) -> bool {
            sparse
        }

        #[inline]
        fn required_sparse((id, sparse): (ComponentId, bool)) -> Option<ComponentId> {
            sparse.then_some(id)
        }

        #[inline]
        fn reads_only_set((id, sparse): (ComponentId, bool), set: ComponentId) -> bool {
            sparse && id == set
        }

        #[inline]
        fn sparse_lacks(
            ids: (ComponentId, bool),
            entities: &Entities,
            entity: Entity,
        ) -> Option<&'static str> {
            $crate::entity::query::data::value_index(ids, entities, 0, entity)
                .is_none()
                .then(std::any::type_name::<C>)
        }

        #[inline]
        unsafe fn sparse_item<'w>(
            ids: (ComponentId, bool),
            entities: &'w Entities,
            fetch: Self::Fetch<'w>,
            row: usize,
            entity: Entity,
        ) -> Option<Self::Item<'w>> {
            let index = $crate::entity::query::data::value_index(ids, entities, row, entity)?;
            // SAFETY: `index` is the row's value in the fetched column (a
            // set's index of an entity is its own: distinct rows reach
            // distinct values), handed out as `item` requires (caller).
            Some(unsafe { $item(fetch, index) })
        }
    };
}
pub(crate) use required_component;

/// The methods of a `QueryData` impl that takes `C` where an entity has
/// it and matches every archetype (`Option<&C>`, `Option<&mut C>`),
/// declaring `C`'s lane with `Lane::<C>::$access` (`$writes`: a gate);
/// `$item` as for `required_component`.
macro_rules! optional_component {
    ($access:ident, $writes:expr, $item:expr) => {
        $crate::entity::query::data::component_lane!($access, $writes);

        $crate::entity::query::data::any_archetype!(C);

        fn sees_disabled() -> bool {
            $crate::entity::disabled::is_disabled::<C>()
        }

        #[inline]
        unsafe fn sparse_item<'w>(
            ids: Option<(ComponentId, bool)>,
            entities: &'w Entities,
            fetch: Self::Fetch<'w>,
            row: usize,
            entity: Entity,
        ) -> Option<Self::Item<'w>> {
            let index = ids.and_then(|ids| {
                $crate::entity::query::data::value_index(ids, entities, row, entity)
            });
            Some(fetch.zip(index).map(|(fetch, index)| {
                // SAFETY: as for the required form, for an entity with a
                // value.
                unsafe { $item(fetch, index) }
            }))
        }
    };
}
pub(crate) use optional_component;

/// The `ids`, `matches`, `missing` and `names_sparse` of a `QueryData`
/// impl that matches every archetype and looks `$c`'s id up (for the
/// entities that have it).
macro_rules! any_archetype {
    ($c:ident) => {
        fn ids(components: &Components) -> Option<Option<(ComponentId, bool)>> {
            Some($crate::entity::query::data::term_of::<$c>(components))
        }

        fn matches(_ids: Option<(ComponentId, bool)>, _archetype: &Archetype) -> bool {
            true
        }

        fn missing(_components: &Components, _archetype: &Archetype) -> Option<&'static str> {
            None
        }

        #[inline]
        fn names_sparse(ids: Option<(ComponentId, bool)>) -> bool {
            ids.is_some_and(|(_, sparse)| sparse)
        }
    };
}
pub(crate) use any_archetype;

/// A component's id in a store, and whether it is kept in a sparse set.
#[inline]
pub(crate) fn term_of<C: Component>(components: &Components) -> Option<(ComponentId, bool)> {
    components
        .id_of::<C>()
        .map(|id| (id, components.is_sparse(id)))
}

/// Where the value of `entity` (in `row` of an archetype with the
/// component, for a table one) is in the column a query fetched for the
/// component `(id, sparse)`: `row` for a table component, the set's index
/// of `entity` for a sparse one (`None` when it has none).
#[inline]
pub(crate) fn value_index(
    (id, sparse): (ComponentId, bool),
    entities: &Entities,
    row: usize,
    entity: Entity,
) -> Option<usize> {
    if !sparse {
        return Some(row);
    }
    entities.sparse_set(id)?.index_of(entity)
}

/// The column a query reads the component `(id, sparse)` from for
/// `archetype`'s rows: the archetype's column, or the component's set's.
///
/// # Panics
/// If a table component has no column in `archetype` (the data matched
/// it), or a sparse one has no set.
#[inline]
pub(crate) fn values_of<'w>(
    (id, sparse): (ComponentId, bool),
    entities: &'w Entities,
    archetype: &'w Archetype,
) -> &'w Column {
    if sparse {
        return entities
            .sparse_set(id)
            .expect("a sparse component has a set")
            .column();
    }
    column_of(archetype, id)
}

/// `C`'s type name when `archetype` has no `C` column (and `C` is not kept
/// in a sparse set, whose rows the sparse walk asks one by one).
pub(crate) fn lacks<C: Component>(
    components: &Components,
    archetype: &Archetype,
) -> Option<&'static str> {
    match components.id_of::<C>() {
        Some(id) if archetype.contains(id) || components.is_sparse(id) => None,
        _ => Some(std::any::type_name::<C>()),
    }
}

/// `archetype`'s column of the component `id`.
#[inline]
pub(crate) fn column_of(archetype: &Archetype, id: ComponentId) -> &Column {
    let index = archetype
        .column_index(id)
        .expect("a matching archetype has the component");
    &archetype.columns[index]
}

/// Panics when the lanes of a query's data name one component twice in
/// ways that would alias, naming the query: for queries made outside a
/// system, which the planner's SL0009 does not see. Each lane is a handle of
/// its own, judged by the one gate ([`would_alias`]) as a system's query
/// parameter's lanes are. `lanes` is scratch, reused so the check allocates
/// nothing.
pub(crate) fn assert_no_alias<D: QueryData>(lanes: &mut Vec<(TypeId, bool)>) {
    lanes.clear();
    D::lanes(lanes);
    let declaration = |at: usize, writes: bool| Declaration {
        kind: if writes {
            AccessKind::Gated
        } else {
            AccessKind::Shared
        },
        by: DeclaredBy::Parameter(u8::try_from(at).unwrap_or(u8::MAX)),
    };
    for (i, &(lane, writes)) in lanes.iter().enumerate() {
        let aliases = lanes[..i].iter().enumerate().any(|(j, &(earlier, wrote))| {
            earlier == lane && would_alias(declaration(j, wrote), declaration(i, writes))
        });
        if aliases {
            panic!(
                "query `{}` names a component twice in ways that would alias (a system \
                 with it is refused as SL0009): take it once, as `&mut` if any use writes it",
                std::any::type_name::<D>()
            );
        }
    }
}

// SAFETY: declares `C` shared; `item` reads row `row` of `C`'s column.
unsafe impl<C: Component> QueryData for &C {
    type Item<'w> = &'w C;
    type Ids = (ComponentId, bool);
    type Fetch<'w> = *const C;

    required_component!(read, false, Self::item);

    unsafe fn fetch<'w>(
        ids: (ComponentId, bool),
        entities: &'w Entities,
        archetype: &'w Archetype,
        _ticks: RunTicks,
    ) -> Self::Fetch<'w> {
        values_of(ids, entities, archetype).data().cast::<C>()
    }

    #[inline]
    unsafe fn item<'w>(fetch: *const C, row: usize) -> &'w C {
        // SAFETY: `row` is a live row of the column (caller), which holds
        // initialised `C`s; the lane is read shared, so no `&mut` to it
        // exists while the node runs.
        unsafe { &*fetch.add(row) }
    }

    #[inline]
    unsafe fn scoped<'w, R>(
        fetch: Self::Fetch<'w>,
        len: usize,
        body: impl FnOnce(Self::Fetch<'w>) -> R,
    ) -> R {
        // SAFETY: the column holds `len` initialised `C`s from `fetch` (the
        // archetype's length, caller), and no `&mut` to one exists for the
        // call (caller).
        let column = unsafe { std::slice::from_raw_parts(fetch, len) };
        within(column, |column| body(column.as_ptr()))
    }
}

// SAFETY: `&C` hands out shared references only.
unsafe impl<C: Component> ReadOnlyQueryData for &C {}

// SAFETY: yields only the entity handle, which touches no lane.
unsafe impl QueryData for Entity {
    type Item<'w> = Entity;
    type Ids = ();
    type Fetch<'w> = &'w [Entity];

    fn declare(node: NodeBuilder) -> NodeBuilder {
        node
    }

    fn lanes(_out: &mut Vec<(TypeId, bool)>) {}

    fn resolve(_registry: &mut Registry) {}

    fn ids(_components: &Components) -> Option<()> {
        Some(())
    }

    fn matches((): (), _archetype: &Archetype) -> bool {
        true
    }

    fn missing(_components: &Components, _archetype: &Archetype) -> Option<&'static str> {
        None
    }

    unsafe fn fetch<'w>(
        (): (),
        _entities: &'w Entities,
        archetype: &'w Archetype,
        _ticks: RunTicks,
    ) -> Self::Fetch<'w> {
        archetype.entities()
    }

    #[inline]
    unsafe fn item<'w>(entities: Self::Fetch<'w>, row: usize) -> Self::Item<'w> {
        entities[row]
    }
}

// SAFETY: `Entity` hands out no reference at all.
unsafe impl ReadOnlyQueryData for Entity {}

// SAFETY: as `&C`, for the archetypes that have `C`.
unsafe impl<C: Component> QueryData for Option<&C> {
    type Item<'w> = Option<&'w C>;
    type Ids = Option<(ComponentId, bool)>;
    type Fetch<'w> = Option<*const C>;

    optional_component!(read, false, <&C>::item);

    unsafe fn fetch<'w>(
        ids: Option<(ComponentId, bool)>,
        entities: &'w Entities,
        archetype: &'w Archetype,
        _ticks: RunTicks,
    ) -> Self::Fetch<'w> {
        ids.filter(|&(id, sparse)| sparse || archetype.contains(id))
            .map(|ids| {
                values_of(ids, entities, archetype)
                    .data()
                    .cast::<C>()
                    .cast_const()
            })
    }

    #[inline]
    unsafe fn item<'w>(fetch: Option<*const C>, row: usize) -> Option<&'w C> {
        // SAFETY: as for `&C`.
        fetch.map(|data| unsafe { &*data.add(row) })
    }
}

// SAFETY: shared references only.
unsafe impl<C: Component> ReadOnlyQueryData for Option<&C> {}

/// `P0::scoped(fetch.0, len, |P0| P1::scoped(fetch.1, len, |P1| ..
/// body((P0, P1, ..))))`: each element's scope inside the one before.
macro_rules! nest_scopes {
    ($fetch:ident, $len:ident, $body:ident, [$($done:ident)*];) => {
        $body(($($done,)*))
    };
    ($fetch:ident, $len:ident, $body:ident, [$($done:ident)*]; $name:ident $index:tt $($rest:tt)*) => {
        $name::scoped($fetch.$index, $len, move |$name| {
            nest_scopes!($fetch, $len, $body, [$($done)* $name]; $($rest)*)
        })
    };
}

macro_rules! impl_tuples {
    ($($name:ident $index:tt),+) => {
        // SAFETY: each element keeps its own contract; the elements of one
        // query never alias (a node naming a component twice in aliasing
        // ways is refused by the planner, SL0009).
        unsafe impl<$($name: QueryData),+> QueryData for ($($name,)+) {
            type Item<'w> = ($($name::Item<'w>,)+);
            type Ids = ($($name::Ids,)+);
            type Fetch<'w> = ($($name::Fetch<'w>,)+);

            fn sees_disabled() -> bool {
                $($name::sees_disabled())||+
            }

            fn declare(node: NodeBuilder) -> NodeBuilder {
                $(let node = $name::declare(node);)+
                node
            }

            fn lanes(out: &mut Vec<(TypeId, bool)>) {
                $($name::lanes(out);)+
            }

            fn resolve(registry: &mut Registry) {
                $($name::resolve(registry);)+
            }

            fn ids(components: &Components) -> Option<Self::Ids> {
                Some(($($name::ids(components)?,)+))
            }

            fn matches(ids: Self::Ids, archetype: &Archetype) -> bool {
                $($name::matches(ids.$index, archetype))&&+
            }

            fn missing(components: &Components, archetype: &Archetype) -> Option<&'static str> {
                None$(.or_else(|| $name::missing(components, archetype)))+
            }

            unsafe fn fetch<'w>(ids: Self::Ids, entities: &'w Entities, archetype: &'w Archetype, ticks: RunTicks) -> Self::Fetch<'w> {
                // SAFETY: forwarded from the caller.
                ($(unsafe { $name::fetch(ids.$index, entities, archetype, ticks) },)+)
            }

            #[inline]
            unsafe fn item<'w>(fetch: Self::Fetch<'w>, row: usize) -> Self::Item<'w> {
                // SAFETY: forwarded from the caller.
                ($(unsafe { $name::item(fetch.$index, row) },)+)
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
            fn reads_only_set(ids: Self::Ids, set: ComponentId) -> bool {
                $($name::reads_only_set(ids.$index, set))&&+
            }

            #[inline]
            fn sparse_lacks(ids: Self::Ids, entities: &Entities, entity: Entity) -> Option<&'static str> {
                None$(.or_else(|| $name::sparse_lacks(ids.$index, entities, entity)))+
            }

            #[inline]
            unsafe fn sparse_item<'w>(ids: Self::Ids, entities: &'w Entities, fetch: Self::Fetch<'w>, row: usize, entity: Entity) -> Option<Self::Item<'w>> {
                // SAFETY: forwarded from the caller.
                Some(($(unsafe { $name::sparse_item(ids.$index, entities, fetch.$index, row, entity)? },)+))
            }

            #[inline]
            #[allow(non_snake_case)] // each element's fetch is named after its type
            unsafe fn scoped<'w, R>(fetch: Self::Fetch<'w>, len: usize, body: impl FnOnce(Self::Fetch<'w>) -> R) -> R {
                // SAFETY: forwarded from the caller, element by element.
                unsafe { nest_scopes!(fetch, len, body, []; $($name $index)+) }
            }
        }

        // SAFETY: every element is read-only.
        unsafe impl<$($name: ReadOnlyQueryData),+> ReadOnlyQueryData for ($($name,)+) {}
    };
}

crate::tuples::for_tuples!(impl_tuples, 8);

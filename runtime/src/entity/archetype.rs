//! Archetypes: the tables that hold every entity with one exact set of
//! component types, one [`Column`] per type.

use foldhash::HashMap;

use super::bundle::{BundleId, BundleInfo};
use super::column::{Column, ColumnBlock, reserve_together};
use super::component::{ComponentId, Components};
use super::entity::Entity;

/// An archetype's number in its store: dense, from 0, in creation order.
/// Archetype 0 is the one with no components.
///
/// Only a number: another store numbers its archetypes its own way, and
/// there the id names whichever archetype has that number, or none
/// ([`Entities::archetype`](crate::Entities::archetype) checks).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub struct ArchetypeId(pub u32);

impl ArchetypeId {
    /// The archetype with no components.
    pub const EMPTY: ArchetypeId = ArchetypeId(0);

    /// The id as an index.
    #[inline]
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// Every entity with exactly one set of component types.
///
/// Invariants: `components` is sorted and has no duplicates;
/// `column_by_id[components[i]] == i` and every other entry is `NO_COLUMN`;
/// `columns[i]` holds the values of `components[i]`; every column has
/// `entities.len()` rows, and row `r` of every column belongs to
/// `entities[r]`, whose slot records this archetype and row `r`. The edge
/// caches map a bundle (by id) to the `Edge` an insert or remove of it
/// follows, `NO_EDGE` when not yet known (they only ever memoise
/// `Archetypes::edge`); a remove edge is cached only for a bundle whose
/// every field this archetype has, so a cached one needs no check.
#[derive(Debug)]
pub struct Archetype {
    id: ArchetypeId,
    components: Box<[ComponentId]>,
    /// By component id: the index of its column, or `NO_COLUMN` (ids past
    /// the end have none). Queries look columns up per archetype on every
    /// walk: one load instead of a search.
    column_by_id: Box<[u32]>,
    pub(crate) columns: Box<[Column]>,
    /// The columns' values, in one allocation. Declared after `columns` so
    /// that it is dropped after them (fields drop in order, also while
    /// unwinding from a panicking component `Drop`).
    block: ColumnBlock,
    pub(crate) entities: Vec<Entity>,
    insert_edges: Vec<EdgeId>,
    remove_edges: Vec<EdgeId>,
}

/// An [`Edge`]'s index in [`Archetypes`]' edge list.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct EdgeId(u32);

/// `Archetype::column_by_id`'s "no such column".
const NO_COLUMN: u32 = u32::MAX;

/// The edge cache's "not known yet".
const NO_EDGE: EdgeId = EdgeId(u32::MAX);

/// A column a move drops (a removed component's).
pub(crate) const DROPPED: u32 = u32::MAX;

/// One archetype move, worked out once: inserting or removing one bundle
/// from one archetype. Following it costs no hashing and no search.
///
/// Invariants: `moves[i]` is the index in `to` of source column `i`'s
/// component, or [`DROPPED`] when `to` lacks it; for an insert,
/// `fields[i]` is the index in `to` of bundle field `i`'s column and
/// whether the source already had it; for a removal, `fields[i].column` is
/// field `i`'s column in the source when `fields[i].existed` (a
/// `remove_present` edge may lack fields; `remove` takes only along an
/// edge whose `takes_all` is set); `overwrites` is whether any field's
/// `existed` is set (inserts only); a
/// sparse-set field's `column` is `SPARSE_FIELD` (it has none).
#[derive(Debug)]
pub(crate) struct Edge {
    pub(crate) to: ArchetypeId,
    pub(crate) moves: Box<[u32]>,
    pub(crate) fields: Box<[FieldColumn]>,
    /// An insert along it replaces a value in place (whose drop it then
    /// runs); without one nothing is left pending.
    pub(crate) overwrites: bool,
    /// A removal whose every field is in the source, at least one: what
    /// `remove` (which reads each field back) may move along.
    pub(crate) takes_all: bool,
}

/// Where one bundle field goes (see [`Edge`]).
#[derive(Clone, Copy, Debug)]
pub(crate) struct FieldColumn {
    pub(crate) column: u32,
    pub(crate) existed: bool,
}

impl Archetype {
    /// The archetype's id.
    pub fn id(&self) -> ArchetypeId {
        self.id
    }

    /// Its component types, sorted by id.
    pub fn components(&self) -> &[ComponentId] {
        &self.components
    }

    /// The entities stored here, by row.
    pub fn entities(&self) -> &[Entity] {
        &self.entities
    }

    /// The number of entities stored here.
    #[inline]
    pub fn len(&self) -> usize {
        self.entities.len()
    }

    /// Whether no entity is stored here.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.entities.is_empty()
    }

    /// Whether entities here have component `id`.
    #[inline]
    pub fn contains(&self, id: ComponentId) -> bool {
        self.column_index(id).is_some()
    }

    /// The index of `id`'s column.
    #[inline]
    pub(crate) fn column_index(&self, id: ComponentId) -> Option<usize> {
        match self.column_by_id.get(id.index()) {
            Some(&column) if column != NO_COLUMN => Some(column as usize),
            _ => None,
        }
    }

    /// Makes room for `additional` more rows in every column.
    pub(crate) fn reserve(&mut self, additional: usize) {
        self.entities.reserve(additional);
        reserve_together(&mut self.columns, &mut self.block, additional);
    }

    /// Swap-removes `row` from the entity list (the columns are the
    /// caller's); the entity that moved into `row`, if any.
    pub(crate) fn swap_remove_entity(&mut self, row: usize) -> Option<Entity> {
        self.entities.swap_remove(row);
        self.entities.get(row).copied()
    }

    /// The cached edge of `change` with `bundle`, if known.
    #[inline]
    fn edge(&self, change: Change, bundle: BundleId) -> Option<EdgeId> {
        let edges = match change {
            Change::Insert => &self.insert_edges,
            Change::Remove => &self.remove_edges,
        };
        edges
            .get(bundle.index())
            .copied()
            .filter(|&edge| edge != NO_EDGE)
    }

    /// Caches `edge` as the one `change` with `bundle` follows.
    fn set_edge(&mut self, change: Change, bundle: BundleId, edge: EdgeId) {
        let edges = match change {
            Change::Insert => &mut self.insert_edges,
            Change::Remove => &mut self.remove_edges,
        };
        if edges.len() <= bundle.index() {
            edges.resize(bundle.index() + 1, NO_EDGE);
        }
        edges[bundle.index()] = edge;
    }

    /// The index of `id`'s column, as an edge stores it.
    fn column_of(&self, id: ComponentId) -> Option<u32> {
        self.column_index(id)
            .map(|column| u32::try_from(column).expect("fewer than 2^32 columns"))
    }

    /// Drops every value a move or removal left pending in the columns,
    /// all of them even if one `Drop` panics.
    pub(crate) fn drop_pending(&mut self) {
        let columns = &mut self.columns;
        super::column::each_even_if_one_panics(columns.len(), |i| columns[i].drop_pending());
    }
}

/// Which way a bundle moves an entity between archetypes.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Change {
    /// The bundle's components are added.
    Insert,
    /// The bundle's components are taken away.
    Remove,
}

/// All archetypes of a store, found by their component set, and the moves
/// between them.
///
/// Invariant: `by_set` maps each archetype's component set to its id, and
/// `list[id.index()].id == id`; every `EdgeId` cached in an archetype
/// indexes `edges`.
#[derive(Debug)]
pub(crate) struct Archetypes {
    list: Vec<Archetype>,
    by_set: HashMap<Box<[ComponentId]>, ArchetypeId>,
    edges: Vec<Edge>,
    /// The archetypes holding [`Disabled`](crate::Disabled) (archetypes
    /// are never removed), so whether any entity is disabled costs a look
    /// at these only.
    hiding: Vec<ArchetypeId>,
}

impl Archetypes {
    /// The table with only the empty archetype.
    pub(crate) fn new(components: &Components) -> Self {
        let mut archetypes = Self {
            list: Vec::new(),
            by_set: HashMap::default(),
            edges: Vec::new(),
            hiding: Vec::new(),
        };
        archetypes.get_or_create(&[], components);
        archetypes
    }

    /// The archetype of exactly the (sorted, distinct) set `ids`, created
    /// empty if new.
    pub(crate) fn get_or_create(
        &mut self,
        ids: &[ComponentId],
        components: &Components,
    ) -> ArchetypeId {
        debug_assert!(ids.windows(2).all(|w| w[0] < w[1]), "sorted and distinct");
        if let Some(&id) = self.by_set.get(ids) {
            return id;
        }
        let id = ArchetypeId(u32::try_from(self.list.len()).expect("fewer than 2^32 archetypes"));
        let mut column_by_id = vec![NO_COLUMN; ids.last().map_or(0, |last| last.index() + 1)];
        for (column, id) in ids.iter().enumerate() {
            column_by_id[id.index()] = u32::try_from(column).expect("fewer than 2^32 columns");
        }
        self.list.push(Archetype {
            id,
            components: ids.into(),
            column_by_id: column_by_id.into(),
            columns: ids
                .iter()
                .map(|&c| Column::new_in_block(components.info(c)))
                .collect(),
            block: ColumnBlock::empty(),
            entities: Vec::new(),
            insert_edges: Vec::new(),
            remove_edges: Vec::new(),
        });
        self.by_set.insert(ids.into(), id);
        if ids.contains(&super::disabled::DISABLED) {
            self.hiding.push(id);
        }
        id
    }

    /// Whether any entity is [`Disabled`](crate::Disabled): whether an
    /// archetype holding it has a row.
    #[inline]
    pub(crate) fn any_disabled(&self) -> bool {
        self.hiding
            .iter()
            .any(|&id| !self.list[id.index()].is_empty())
    }

    /// The edge an entity of `from` follows when `bundle` (for a removal,
    /// with every field present in `from`) is inserted or removed; worked
    /// out on first use and cached on `from`.
    #[inline]
    pub(crate) fn edge(
        &mut self,
        from: ArchetypeId,
        change: Change,
        bundle: (BundleId, &BundleInfo),
        components: &Components,
        scratch: &mut Vec<ComponentId>,
    ) -> EdgeId {
        match self.list[from.index()].edge(change, bundle.0) {
            Some(edge) => edge,
            None => self.new_edge(from, change, bundle, components, scratch),
        }
    }

    /// The edge `change` of `bundle` follows from `from`, if cached (a
    /// cached removal's fields are all in `from`).
    #[inline]
    pub(crate) fn cached_edge(
        &self,
        from: ArchetypeId,
        change: Change,
        bundle: BundleId,
    ) -> Option<EdgeId> {
        self.list[from.index()].edge(change, bundle)
    }

    /// [`edge`](Self::edge)'s first use: works the move out and caches it.
    #[cold]
    fn new_edge(
        &mut self,
        from: ArchetypeId,
        change: Change,
        (bundle, info): (BundleId, &BundleInfo),
        components: &Components,
        scratch: &mut Vec<ComponentId>,
    ) -> EdgeId {
        let source = &self.list[from.index()];
        scratch.clear();
        match change {
            Change::Insert => {
                scratch.extend_from_slice(&source.components);
                scratch.extend_from_slice(&info.sorted);
                scratch.sort_unstable();
                scratch.dedup();
            }
            Change::Remove => {
                let kept = source
                    .components
                    .iter()
                    .filter(|c| info.sorted.binary_search(c).is_err());
                scratch.extend(kept);
            }
        }
        let to = self.get_or_create(scratch, components);
        let (source, target) = (&self.list[from.index()], &self.list[to.index()]);
        let moves = source
            .components
            .iter()
            .map(|&c| target.column_of(c).unwrap_or(DROPPED))
            .collect();
        let fields: Box<[FieldColumn]> = info
            .fields
            .iter()
            .map(|&c| match change {
                // Not in any table: the store writes or takes it in its set.
                _ if components.is_sparse(c) => FieldColumn {
                    column: super::bundle::SPARSE_FIELD,
                    existed: false,
                },
                Change::Insert => FieldColumn {
                    column: target.column_of(c).expect("the target has every field"),
                    existed: source.contains(c),
                },
                // A field the source lacks (`remove_present`) has no column.
                Change::Remove => FieldColumn {
                    column: source.column_of(c).unwrap_or(NO_COLUMN),
                    existed: source.contains(c),
                },
            })
            .collect();
        let edge = EdgeId(u32::try_from(self.edges.len()).expect("fewer than 2^32 edges"));
        let overwrites = change == Change::Insert && fields.iter().any(|field| field.existed);
        // A sparse-set field has no column here: the store takes it from
        // its set.
        let mut table_fields = info
            .fields
            .iter()
            .zip(fields.iter())
            .filter(|&(&c, _)| !components.is_sparse(c))
            .map(|(_, field)| field)
            .peekable();
        let takes_all = change == Change::Remove
            && table_fields.peek().is_some()
            && table_fields.all(|field| field.existed);
        self.edges.push(Edge {
            to,
            moves,
            fields,
            overwrites,
            takes_all,
        });
        self.list[from.index()].set_edge(change, bundle, edge);
        edge
    }

    /// The edge with this id.
    #[inline]
    pub(crate) fn edge_info(&self, edge: EdgeId) -> &Edge {
        &self.edges[edge.0 as usize]
    }

    /// An edge and its source and target archetypes (distinct), the
    /// archetypes mutably.
    ///
    /// # Panics
    ///
    /// If the edge leads back to `from`.
    #[inline]
    pub(crate) fn move_parts(
        &mut self,
        from: ArchetypeId,
        edge: EdgeId,
    ) -> (&Edge, &mut Archetype, &mut Archetype) {
        let edge = &self.edges[edge.0 as usize];
        match self.list.get_disjoint_mut([from.index(), edge.to.index()]) {
            Ok([source, target]) => (edge, source, target),
            Err(_) => panic!("an archetype move needs two archetypes ({from:?} to itself)"),
        }
    }

    /// An edge and its source archetype, mutably (the edge may lead back
    /// to it).
    #[inline]
    pub(crate) fn edge_source(
        &mut self,
        from: ArchetypeId,
        edge: EdgeId,
    ) -> (&Edge, &mut Archetype) {
        (&self.edges[edge.0 as usize], &mut self.list[from.index()])
    }

    /// An edge and its target archetype, mutably.
    #[inline]
    pub(crate) fn edge_target(&mut self, edge: EdgeId) -> (&Edge, &mut Archetype) {
        let edge = &self.edges[edge.0 as usize];
        (edge, &mut self.list[edge.to.index()])
    }

    /// The archetype with this id.
    #[inline]
    pub(crate) fn get(&self, id: ArchetypeId) -> Option<&Archetype> {
        self.list.get(id.index())
    }

    /// The archetype with this id (a live entity's location is always
    /// valid).
    #[inline]
    pub(crate) fn get_mut(&mut self, id: ArchetypeId) -> &mut Archetype {
        &mut self.list[id.index()]
    }

    /// Every archetype, by id.
    pub(crate) fn as_slice(&self) -> &[Archetype] {
        &self.list
    }

    /// Every archetype, by id.
    pub(crate) fn iter(&self) -> std::slice::Iter<'_, Archetype> {
        self.list.iter()
    }

    /// Every archetype, by id, mutably.
    pub(crate) fn iter_mut(&mut self) -> std::slice::IterMut<'_, Archetype> {
        self.list.iter_mut()
    }
}

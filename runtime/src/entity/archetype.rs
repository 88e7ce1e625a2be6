//! Archetypes: the tables that hold every entity with one exact set of
//! component types, one [`Column`] per type.

use foldhash::HashMap;

use super::bundle::BundleId;
use super::column::Column;
use super::component::{ComponentId, Components};
use super::entity::Entity;

/// An archetype's number in its store: dense, from 0, in creation order.
/// Archetype 0 is the one with no components.
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
/// `columns[i]` holds the values of `components[i]`; every column has
/// `entities.len()` rows, and row `r` of every column belongs to
/// `entities[r]`, whose slot records this archetype and row `r`. The edge
/// caches map a bundle to the archetype an insert or remove of it leads to
/// (they only ever memoise `Archetypes::get_or_create`).
#[derive(Debug)]
pub struct Archetype {
    id: ArchetypeId,
    components: Box<[ComponentId]>,
    pub(crate) columns: Box<[Column]>,
    pub(crate) entities: Vec<Entity>,
    insert_edges: HashMap<BundleId, ArchetypeId>,
    remove_edges: HashMap<BundleId, ArchetypeId>,
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
        self.components.binary_search(&id).ok()
    }

    /// Makes room for `additional` more rows in every column.
    pub(crate) fn reserve(&mut self, additional: usize) {
        self.entities.reserve(additional);
        for column in &mut self.columns {
            column.reserve(additional);
        }
    }

    /// Swap-removes `row` from the entity list (the columns are the
    /// caller's); the entity that moved into `row`, if any.
    pub(crate) fn swap_remove_entity(&mut self, row: usize) -> Option<Entity> {
        self.entities.swap_remove(row);
        self.entities.get(row).copied()
    }

    /// The cached transitions for one kind of change.
    fn edges(&self, change: Change) -> &HashMap<BundleId, ArchetypeId> {
        match change {
            Change::Insert => &self.insert_edges,
            Change::Remove => &self.remove_edges,
        }
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

/// All archetypes of a store, found by their component set.
///
/// Invariant: `by_set` maps each archetype's component set to its id, and
/// `list[id.index()].id == id`.
#[derive(Debug)]
pub(crate) struct Archetypes {
    list: Vec<Archetype>,
    by_set: HashMap<Box<[ComponentId]>, ArchetypeId>,
}

impl Archetypes {
    /// The table with only the empty archetype.
    pub(crate) fn new(components: &Components) -> Self {
        let mut archetypes = Self {
            list: Vec::new(),
            by_set: HashMap::default(),
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
        self.list.push(Archetype {
            id,
            components: ids.into(),
            columns: ids
                .iter()
                .map(|&c| Column::new(components.info(c)))
                .collect(),
            entities: Vec::new(),
            insert_edges: HashMap::default(),
            remove_edges: HashMap::default(),
        });
        self.by_set.insert(ids.into(), id);
        id
    }

    /// The archetype an entity of `from` moves to when the bundle `bundle`
    /// (component set `ids`, sorted; for a removal, all present in `from`)
    /// is inserted or removed; cached on `from` (the edge), so a repeated
    /// move hashes one bundle id, not the whole component set.
    pub(crate) fn target(
        &mut self,
        from: ArchetypeId,
        change: Change,
        bundle: BundleId,
        ids: &[ComponentId],
        components: &Components,
        scratch: &mut Vec<ComponentId>,
    ) -> ArchetypeId {
        let table = &self.list[from.index()];
        if let Some(&to) = table.edges(change).get(&bundle) {
            return to;
        }
        scratch.clear();
        match change {
            Change::Insert => {
                scratch.extend_from_slice(&table.components);
                scratch.extend_from_slice(ids);
                scratch.sort_unstable();
                scratch.dedup();
            }
            Change::Remove => {
                let kept = table
                    .components
                    .iter()
                    .filter(|c| ids.binary_search(c).is_err());
                scratch.extend(kept);
            }
        }
        let to = self.get_or_create(scratch, components);
        let table = &mut self.list[from.index()];
        match change {
            Change::Insert => table.insert_edges.insert(bundle, to),
            Change::Remove => table.remove_edges.insert(bundle, to),
        };
        to
    }

    /// Two distinct archetypes, both mutably.
    ///
    /// # Panics
    ///
    /// If `a == b`.
    pub(crate) fn pair_mut(
        &mut self,
        a: ArchetypeId,
        b: ArchetypeId,
    ) -> (&mut Archetype, &mut Archetype) {
        assert_ne!(a, b, "an archetype move needs two archetypes");
        if a < b {
            let (low, high) = self.list.split_at_mut(b.index());
            (&mut low[a.index()], &mut high[0])
        } else {
            let (low, high) = self.list.split_at_mut(a.index());
            (&mut high[0], &mut low[b.index()])
        }
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

    /// Whether `from` has a cached edge for `bundle`.
    #[cfg(test)]
    pub(crate) fn has_edge(&self, from: ArchetypeId, change: Change, bundle: BundleId) -> bool {
        self.list[from.index()].edges(change).contains_key(&bundle)
    }
}

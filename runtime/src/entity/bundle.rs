//! [`Bundle`]: a tuple of components spawned, inserted or removed together.

use std::any::TypeId;

use foldhash::HashMap;

use super::archetype::ArchetypeId;
use super::component::{Component, ComponentId, Components};

/// A set of components handled together: spawned, inserted or removed as
/// one archetype move. Implemented for tuples of up to 12 components
/// (and `()`); a bundle naming one type twice is refused when used
/// ([`EntityError::DuplicateComponent`](super::EntityError::DuplicateComponent)).
///
/// Derive it for a struct with `#[derive(Bundle)]` (see
/// [`macro@crate::Bundle`]): each field is one component, or, marked
/// `#[bundle]`, a nested bundle whose components join the struct's.
///
/// # Safety
///
/// The store trusts the three methods to agree: `register` appends one id
/// per component, in a fixed order ("field order"); `write` calls its
/// callback exactly once per field, in field order, and moves that field's
/// value (of its type) to the returned pointer; `take` calls its callback
/// once per field, in field order, and reads a value of that field's type
/// from the returned pointer, taking ownership of it.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a bundle",
    label = "not a bundle: a tuple of components, or a struct with `#[derive(Bundle)]`",
    note = "a field marked `#[bundle]` must itself be a bundle; a plain field is one component"
)]
pub unsafe trait Bundle: Send + Sync + Sized + 'static {
    /// Registers each component type and appends its id, in field order.
    fn register(components: &mut Components, ids: &mut Vec<ComponentId>);

    /// Moves each field, in field order, to the pointer `dest(i)` returns
    /// (a typed write: no size-generic copy per component).
    ///
    /// # Safety
    ///
    /// `dest(i)` must return a pointer valid for a write of field `i`'s
    /// type and aligned for it; whatever it points to is overwritten, not
    /// dropped.
    unsafe fn write(self, dest: impl FnMut(usize) -> *mut u8);

    /// Builds the bundle, reading field `i` from the pointer `read(i)`
    /// returns.
    ///
    /// # Safety
    ///
    /// `read(i)` must return a pointer to a valid, initialised, aligned
    /// value of field `i`'s type that the caller gives up.
    unsafe fn take(read: impl FnMut(usize) -> *mut u8) -> Self;
}

macro_rules! tuple_bundle {
    ($($name:ident $index:tt),*) => {
        // SAFETY: `register`, `write` and `take` walk the same fields in the
        // same order; `write` moves each field once to its pointer, `take`
        // reads each value once from a pointer to its type.
        unsafe impl<$($name: Component),*> Bundle for ($($name,)*) {
            fn register(components: &mut Components, ids: &mut Vec<ComponentId>) {
                $(ids.push(components.register::<$name>());)*
            }

            #[inline]
            unsafe fn write(self, mut dest: impl FnMut(usize) -> *mut u8) {
                // SAFETY: the caller's contract: `dest(i)` is valid and
                // aligned for a write of field `i`'s type.
                unsafe { $(dest($index).cast::<$name>().write(self.$index);)* }
            }

            #[inline]
            unsafe fn take(mut read: impl FnMut(usize) -> *mut u8) -> Self {
                // SAFETY: the caller's contract: `read(i)` points to a
                // valid, aligned value of field `i`'s type that we now own.
                unsafe { ($(read($index).cast::<$name>().read(),)*) }
            }
        }
    };
}

// SAFETY: no fields: `register` appends nothing, `write` and `take` call
// nothing.
unsafe impl Bundle for () {
    fn register(_: &mut Components, _: &mut Vec<ComponentId>) {}

    unsafe fn write(self, _: impl FnMut(usize) -> *mut u8) {}

    unsafe fn take(_: impl FnMut(usize) -> *mut u8) -> Self {}
}

crate::tuples::for_tuples!(tuple_bundle, 12);

/// A bundle type's number in its store's [`Bundles`].
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub(crate) struct BundleId(u32);

impl BundleId {
    /// The id as an index.
    #[inline]
    pub(crate) fn index(self) -> usize {
        self.0 as usize
    }
}

/// What the store remembers about a bundle type.
///
/// Invariant: `fields[i]` is the id of field `i`; `sorted` is the fields
/// kept in tables ([`StorageType::Table`](super::StorageType)), sorted;
/// `spawn_columns[i]` is the index of `fields[i]` in `sorted`, so field
/// `i`'s column in the archetype of exactly these table components, or
/// [`SPARSE_FIELD`] for a sparse-set field; `sparse` lists the sparse-set
/// fields (field index, id) in field order; `duplicate` names a type
/// `fields` holds twice, if any (then the bundle is never used to change
/// the store).
#[derive(Debug)]
pub(crate) struct BundleInfo {
    pub(crate) fields: Box<[ComponentId]>,
    pub(crate) sorted: Box<[ComponentId]>,
    pub(crate) spawn_columns: Box<[u32]>,
    pub(crate) sparse: Box<[(u32, ComponentId)]>,
    pub(crate) duplicate: Option<&'static str>,
    /// The archetype a spawn of this bundle lands in (once known).
    pub(crate) spawn: Option<ArchetypeId>,
}

/// `BundleInfo::spawn_columns`' entry for a field kept in a sparse set.
pub(crate) const SPARSE_FIELD: u32 = u32::MAX;

/// The bundle types a store has seen.
#[derive(Debug, Default)]
pub(crate) struct Bundles {
    infos: Vec<BundleInfo>,
    by_type: HashMap<TypeId, BundleId>,
    /// The bundle looked up last: a loop inserting one bundle type skips
    /// the hash lookup.
    last: Option<(TypeId, BundleId)>,
}

impl Bundles {
    /// `B`'s id, registering `B` (and its components) if it is new.
    #[inline]
    pub(crate) fn register<B: Bundle>(&mut self, components: &mut Components) -> BundleId {
        let type_id = TypeId::of::<B>();
        match self.last {
            Some((last, id)) if last == type_id => id,
            _ => self.look_up::<B>(type_id, components),
        }
    }

    /// [`register`](Self::register) of another type than the last one.
    #[cold]
    fn look_up<B: Bundle>(&mut self, type_id: TypeId, components: &mut Components) -> BundleId {
        if let Some(&id) = self.by_type.get(&type_id) {
            self.last = Some((type_id, id));
            return id;
        }
        let mut fields = Vec::new();
        B::register(components, &mut fields);
        let mut every = fields.clone();
        every.sort_unstable();
        let duplicate = every
            .windows(2)
            .find(|w| w[0] == w[1])
            .map(|w| components.info(w[0]).name());
        let mut sorted = every;
        sorted.retain(|&c| !components.is_sparse(c));
        let spawn_columns = fields
            .iter()
            .map(|&field| {
                if components.is_sparse(field) {
                    return SPARSE_FIELD;
                }
                let column = sorted.partition_point(|&c| c < field);
                u32::try_from(column).expect("fewer than 2^32 fields")
            })
            .collect();
        let sparse = fields
            .iter()
            .enumerate()
            .filter(|&(_, &c)| components.is_sparse(c))
            .map(|(i, &c)| (u32::try_from(i).expect("fewer than 2^32 fields"), c))
            .collect();
        let id = BundleId(u32::try_from(self.infos.len()).expect("fewer than 2^32 bundle types"));
        self.infos.push(BundleInfo {
            fields: fields.into(),
            sorted: sorted.into(),
            spawn_columns,
            sparse,
            duplicate,
            spawn: None,
        });
        self.by_type.insert(type_id, id);
        self.last = Some((type_id, id));
        id
    }

    /// The bundle with this id.
    #[inline]
    pub(crate) fn info(&self, id: BundleId) -> &BundleInfo {
        &self.infos[id.0 as usize]
    }

    /// The bundle with this id.
    #[inline]
    pub(crate) fn info_mut(&mut self, id: BundleId) -> &mut BundleInfo {
        &mut self.infos[id.0 as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn duplicates_are_named() {
        let mut components = Components::new();
        let mut bundles = Bundles::default();
        let ok = bundles.register::<(u8, u16)>(&mut components);
        let twice = bundles.register::<(u8, u32, u8)>(&mut components);
        assert_eq!(bundles.info(ok).duplicate, None);
        assert_eq!(bundles.info(twice).duplicate, Some("u8"));
        assert_eq!(
            &*bundles.info(twice).fields,
            &[ComponentId(0), ComponentId(2), ComponentId(0)]
        );
        assert_eq!(bundles.register::<(u8, u16)>(&mut components), ok);
    }
}

//! The captured parts of a [`Snapshot`](super::Snapshot): one typed value
//! holder per opted-in component or service, behind object-safe traits so
//! a snapshot holds them by type-erased box and code that knows the type
//! (saves, checksums) downcasts through [`CapturedPart::as_any`].

use std::any::Any;
use std::fmt;
use std::ops::Range;

use crate::entity::column::Column;
use crate::entity::{Component, ComponentError, ComponentId, Entities, StorageType};

/// What every captured part is: a typed holder found by type, readable by
/// code that knows the type.
///
/// A component's part is a [`ColumnValues<T>`], a service's a
/// [`ServiceValue<T>`]: `part.as_any().downcast_ref::<ColumnValues<T>>()`
/// gives the typed values.
// The typed access (`as_any`, the names) is for the saves code behind the
// `serde` feature.
#[cfg_attr(not(feature = "serde"), allow(dead_code))]
pub(crate) trait CapturedPart: Send + Sync + fmt::Debug + 'static {
    /// The part as `Any`, to downcast to its typed holder.
    fn as_any(&self) -> &dyn Any;
    /// The part as `Any`, mutably (the store's tests forge captures).
    #[cfg(test)]
    fn as_any_mut(&mut self) -> &mut dyn Any;
    /// The bytes of heap memory it holds (capacity, not length: what the
    /// snapshot costs).
    fn heap_bytes(&self) -> usize;
}

/// A captured component: every value of one component type with its
/// ticks, the rows of every archetype (or the sparse set) one after
/// another, in the order the [`CapturedStore`](crate::entity::CapturedStore)
/// lists them.
pub(crate) trait ComponentPart: CapturedPart {
    /// Forgets the values, keeping the memory.
    fn clear(&mut self);
    /// How many values it holds.
    fn len(&self) -> usize;
    /// Appends clones of every row of `column` and its ticks.
    ///
    /// # Safety
    /// `column` holds values of this part's type.
    unsafe fn capture_column(&mut self, column: &Column);
    /// Each value's added and changed ticks.
    fn ticks(&self) -> (&[u32], &[u32]);
    /// Clones every value into a staging buffer, out of the world: the
    /// only step of a restore that runs user code that may panic (`Clone`).
    fn stage(&self) -> Box<dyn StagedValues>;
    /// Registers the type in `entities` with `storage` (a restore into a
    /// store that never met it).
    fn register(
        &self,
        entities: &mut Entities,
        storage: StorageType,
    ) -> Result<ComponentId, ComponentError>;
}

/// Values cloned for a restore, moved into the store's columns range by
/// range (a move is a byte copy: nothing panics once staged).
pub(crate) trait StagedValues: Send {
    /// Moves the values of `range` to the end of `column` with the ticks
    /// given.
    ///
    /// # Safety
    /// - `column` holds values of this buffer's type and has room for
    ///   `range.len()` more rows (reserved);
    /// - `range` starts where the last move ended (0 at first) and lies
    ///   within the buffer;
    /// - `added` and `changed` have `range.len()` ticks each.
    unsafe fn move_into(
        &mut self,
        range: Range<usize>,
        column: &mut Column,
        added: &[u32],
        changed: &[u32],
    );
}

/// One component type's captured values, with their added and changed
/// ticks (`values[i]` was added at `added[i]`, last changed at
/// `changed[i]`).
pub(crate) struct ColumnValues<T> {
    pub(crate) values: Vec<T>,
    pub(crate) added: Vec<u32>,
    pub(crate) changed: Vec<u32>,
}

impl<T> Default for ColumnValues<T> {
    fn default() -> Self {
        Self {
            values: Vec::new(),
            added: Vec::new(),
            changed: Vec::new(),
        }
    }
}

impl<T> fmt::Debug for ColumnValues<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ColumnValues")
            .field("type", &std::any::type_name::<T>())
            .field("len", &self.values.len())
            .finish()
    }
}

impl<T: Component + Clone> CapturedPart for ColumnValues<T> {
    fn as_any(&self) -> &dyn Any {
        self
    }

    #[cfg(test)]
    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }

    fn heap_bytes(&self) -> usize {
        self.values.capacity() * size_of::<T>()
            + (self.added.capacity() + self.changed.capacity()) * size_of::<u32>()
    }
}

impl<T: Component + Clone> ComponentPart for ColumnValues<T> {
    fn clear(&mut self) {
        self.values.clear();
        self.added.clear();
        self.changed.clear();
    }

    fn len(&self) -> usize {
        self.values.len()
    }

    unsafe fn capture_column(&mut self, column: &Column) {
        // SAFETY:
        // - the column holds `T`s (caller) and its first `row_count` slots
        //   are initialised rows it owns, contiguous from `data` (the
        //   column's invariant), aligned for `T` (dangling and aligned when
        //   empty or zero-sized);
        // - the shared borrow of the column (the world is borrowed shared
        //   for the capture) keeps any writer away while the slice lives.
        let rows =
            unsafe { std::slice::from_raw_parts(column.data().cast::<T>(), column.row_count()) };
        // A panicking `Clone` leaves `values` shorter than the ticks: the
        // caller empties the whole snapshot then.
        self.values.extend_from_slice(rows);
        column.copy_ticks(&mut self.added, &mut self.changed);
    }

    fn ticks(&self) -> (&[u32], &[u32]) {
        (&self.added, &self.changed)
    }

    fn stage(&self) -> Box<dyn StagedValues> {
        Box::new(Staged {
            values: self.values.clone(),
            moved: 0,
        })
    }

    fn register(
        &self,
        entities: &mut Entities,
        storage: StorageType,
    ) -> Result<ComponentId, ComponentError> {
        entities.register_component::<T>(storage)
    }
}

/// Cloned values waiting to move into columns: `values[..moved]` have
/// moved out (the buffer no longer owns them), the rest are owned here.
struct Staged<T> {
    values: Vec<T>,
    moved: usize,
}

impl<T: Component> StagedValues for Staged<T> {
    unsafe fn move_into(
        &mut self,
        range: Range<usize>,
        column: &mut Column,
        added: &[u32],
        changed: &[u32],
    ) {
        debug_assert_eq!(range.start, self.moved);
        debug_assert!(range.end <= self.values.len());
        // SAFETY:
        // - `range` lies in `values` and starts at `moved` (caller), so the
        //   values there are initialised and still owned here; `moved`
        //   moves past them before anything else runs, so they are owned by
        //   the column alone from here (this buffer never drops them);
        // - the column holds `T`s, has room for `range.len()` rows, and
        //   the ticks number as many (caller); a `Vec`'s buffer is not a
        //   column's, so the two do not overlap.
        unsafe {
            let src = self.values.as_ptr().add(range.start).cast::<u8>();
            self.moved = range.end;
            column.append_moved(src, range.len(), added, changed);
        }
    }
}

impl<T> Drop for Staged<T> {
    fn drop(&mut self) {
        let len = self.values.len();
        let moved = self.moved;
        // SAFETY: `values[..moved]` moved out (owned by columns now) and
        // `values[moved..len]` are initialised and owned here: the length
        // drops to 0 first, so the `Vec` frees its buffer without dropping
        // anything, and the rest is dropped once, in place.
        unsafe {
            self.values.set_len(0);
            let rest = std::ptr::slice_from_raw_parts_mut(
                self.values.as_mut_ptr().add(moved),
                len - moved,
            );
            std::ptr::drop_in_place(rest);
        }
    }
}

/// A captured service: a clone of its value (`None`: the world held none
/// when the snapshot was taken, and a restore takes it out).
pub(crate) trait ServicePart: CapturedPart {
    /// Clones `value` in (reusing the memory of the last capture through
    /// `Clone::clone_from`); `false` when it is not of this part's type.
    fn capture(&mut self, value: Option<&(dyn Any + Send + Sync)>) -> bool;
    /// Holds no value any more, keeping the last one's memory for the
    /// next capture.
    fn forget(&mut self);
    /// A clone of the value, boxed as the registry holds services (`None`
    /// when it holds none). May panic (`Clone`).
    fn stage(&self) -> Option<Box<dyn Any + Send + Sync>>;
}

/// One service's captured value.
pub(crate) struct ServiceValue<T> {
    /// The value captured (`None`: the world held none).
    pub(crate) value: Option<T>,
    /// A value of an earlier capture, kept for its memory: the next
    /// capture clones into it (`Clone::clone_from`).
    spare: Option<T>,
}

impl<T> Default for ServiceValue<T> {
    fn default() -> Self {
        Self {
            value: None,
            spare: None,
        }
    }
}

impl<T> fmt::Debug for ServiceValue<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ServiceValue")
            .field("type", &std::any::type_name::<T>())
            .field("present", &self.value.is_some())
            .finish()
    }
}

impl<T: Clone + Send + Sync + 'static> CapturedPart for ServiceValue<T> {
    fn as_any(&self) -> &dyn Any {
        self
    }

    #[cfg(test)]
    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }

    fn heap_bytes(&self) -> usize {
        // The value's own heap (a `Vec` inside it) is out of reach of a
        // type-erased count; its inline size is what is known.
        size_of::<T>() * (usize::from(self.value.is_some()) + usize::from(self.spare.is_some()))
    }
}

impl<T: Clone + Send + Sync + 'static> ServicePart for ServiceValue<T> {
    fn capture(&mut self, value: Option<&(dyn Any + Send + Sync)>) -> bool {
        self.forget();
        let Some(value) = value else {
            return true;
        };
        let Some(value) = value.downcast_ref::<T>() else {
            return false;
        };
        match self.spare.take() {
            Some(mut kept) => {
                // A panicking `clone_from` drops `kept`: the part holds
                // nothing, as a failed capture should.
                kept.clone_from(value);
                self.value = Some(kept);
            }
            None => self.value = Some(value.clone()),
        }
        true
    }

    fn forget(&mut self) {
        if let Some(value) = self.value.take() {
            self.spare = Some(value);
        }
    }

    fn stage(&self) -> Option<Box<dyn Any + Send + Sync>> {
        self.value
            .as_ref()
            .map(|value| Box::new(value.clone()) as Box<dyn Any + Send + Sync>)
    }
}

/// A captured message queue: its log and readers' cursors.
pub(crate) trait MessagesPart: CapturedPart {
    /// Clones the queue `value` (the world's `Messages<T>`) in, reusing
    /// memory; `false` when it is not of this part's type.
    ///
    /// # Safety
    /// No node of the world holding `value` runs (SOUNDNESS N9).
    unsafe fn capture(&mut self, value: &(dyn Any + Send + Sync)) -> bool;
    /// A clone of the captured log, out of the world. May panic (`Clone`).
    fn stage(&self) -> Box<dyn Any + Send>;
    /// Puts a log `stage` made into the queue `value`; the old log, boxed,
    /// for the caller to drop (`None`: not of this part's type).
    fn apply(
        &self,
        staged: Box<dyn Any + Send>,
        value: &mut (dyn Any + Send + Sync),
    ) -> Option<Box<dyn Any + Send>>;
}

/// One message type's captured queue.
pub(crate) struct MessagesValue<T> {
    pub(crate) log: crate::message::snapshot::CapturedLog<T>,
}

impl<T> Default for MessagesValue<T> {
    fn default() -> Self {
        Self {
            log: Default::default(),
        }
    }
}

impl<T> fmt::Debug for MessagesValue<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MessagesValue")
            .field("type", &std::any::type_name::<T>())
            .field("len", &self.log.len())
            .finish()
    }
}

impl<T: Clone + Send + Sync + 'static> CapturedPart for MessagesValue<T> {
    fn as_any(&self) -> &dyn Any {
        self
    }

    #[cfg(test)]
    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }

    fn heap_bytes(&self) -> usize {
        self.log.heap_bytes()
    }
}

impl<T: Clone + Send + Sync + 'static> MessagesPart for MessagesValue<T> {
    unsafe fn capture(&mut self, value: &(dyn Any + Send + Sync)) -> bool {
        let Some(queue) = value.downcast_ref::<crate::Messages<T>>() else {
            return false;
        };
        // SAFETY:
        // - `capture_log` needs that no node of the world holding `queue`
        //   runs; this function's caller promises exactly that for
        //   `value`, which `queue` is (SOUNDNESS N9).
        unsafe { queue.capture_log(&mut self.log) };
        true
    }

    fn stage(&self) -> Box<dyn Any + Send> {
        Box::new(self.log.clone())
    }

    fn apply(
        &self,
        staged: Box<dyn Any + Send>,
        value: &mut (dyn Any + Send + Sync),
    ) -> Option<Box<dyn Any + Send>> {
        let queue = value.downcast_mut::<crate::Messages<T>>()?;
        let log = staged
            .downcast::<crate::message::snapshot::CapturedLog<T>>()
            .ok()?;
        Some(Box::new(queue.restore_log(*log)))
    }
}

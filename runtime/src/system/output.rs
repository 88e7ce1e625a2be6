//! Output parameters: what a factory produces, now ([`Out`]) or for the next
//! iteration ([`Next`]).

use std::marker::PhantomData;

use crate::access::{AccessKind, ServiceId};
use crate::node::NodeBuilder;
use crate::registry::{Registry, ServiceSlot};
use crate::system::cells::ServiceCells;
use crate::system::param::{Param, Service};

/// A factory's output for this iteration: every consumer of `T` runs after the
/// factory, and sees what it [`set`](Out::set).
#[derive(Debug)]
pub struct Out<'w, T> {
    cells: ServiceCells<'w>,
    id: ServiceId,
    _value: PhantomData<fn(T)>,
}

impl<T: Service> Out<'_, T> {
    /// Stores `value` as the service `T` (in place when one is already there),
    /// and bumps its version.
    pub fn set(&mut self, value: T) {
        // SAFETY: the node declared that it produces `id` (`Param::declare`),
        // and the plan orders a producer before every consumer of its output.
        unsafe { self.cells.put(self.id, value) }
    }
}

// SAFETY: `fetch` hands out a handle that only writes `T`'s slot, which the
// node declared it produces.
unsafe impl<T: Service> Param for Out<'_, T> {
    type Item<'w> = Out<'w, T>;
    const KIND: AccessKind = AccessKind::Produced;

    fn service_name() -> &'static str {
        std::any::type_name::<T>()
    }

    fn declare(node: NodeBuilder) -> NodeBuilder {
        node.produces::<T>()
    }

    fn resolve(registry: &mut Registry, _hooks: &mut BoundaryHooks) -> ServiceId {
        registry.resolve::<T>()
    }

    unsafe fn fetch<'w>(id: ServiceId, cells: &ServiceCells<'w>) -> Out<'w, T> {
        Out {
            cells: *cells,
            id,
            _value: PhantomData,
        }
    }
}

/// The pending value of a [`Next<T>`] output: produced during one iteration,
/// swapped into the service `T` at the iteration boundary. Readable as an
/// ordinary service (`&NextValue<T>`) by nodes that run after its producer.
#[derive(Debug)]
pub struct NextValue<T>(Option<T>);

impl<T> NextValue<T> {
    pub(crate) fn new(value: T) -> Self {
        Self(Some(value))
    }

    /// Takes the value out, leaving nothing pending.
    pub(crate) fn take(&mut self) -> Option<T> {
        self.0.take()
    }

    /// The value waiting for the boundary, if one was produced.
    pub fn get(&self) -> Option<&T> {
        self.0.as_ref()
    }
}

/// A factory's output for the next iteration: [`set`](Next::set) stores a
/// value that replaces the service `T` at the iteration boundary, so this
/// iteration's readers of `T` still see the current one.
#[derive(Debug)]
pub struct Next<'w, T> {
    cells: ServiceCells<'w>,
    id: ServiceId,
    _value: PhantomData<fn(T)>,
}

impl<T: Service> Next<'_, T> {
    /// Stores `value` for the next iteration.
    pub fn set(&mut self, value: T) {
        // SAFETY: the node declared that it produces `NextValue<T>` (`id`), and
        // the plan orders a producer before every consumer of its output.
        unsafe { self.cells.put(self.id, NextValue(Some(value))) }
    }
}

// SAFETY: `fetch` hands out a handle that only writes `NextValue<T>`'s slot,
// which the node declared it produces.
unsafe impl<T: Service> Param for Next<'_, T> {
    type Item<'w> = Next<'w, T>;
    const KIND: AccessKind = AccessKind::Produced;

    fn service_name() -> &'static str {
        std::any::type_name::<NextValue<T>>()
    }

    fn declare(node: NodeBuilder) -> NodeBuilder {
        node.produces::<NextValue<T>>()
    }

    fn resolve(registry: &mut Registry, hooks: &mut BoundaryHooks) -> ServiceId {
        let pending = registry.resolve::<NextValue<T>>();
        let target = registry.resolve::<T>();
        hooks.add_swap(pending, target, swap_next::<T>);
        pending
    }

    unsafe fn fetch<'w>(id: ServiceId, cells: &ServiceCells<'w>) -> Next<'w, T> {
        Next {
            cells: *cells,
            id,
            _value: PhantomData,
        }
    }
}

/// Moves a pending `NextValue<T>` into `T`'s slot; false when nothing was pending.
///
/// The new value and its version are in place before the old value is
/// dropped, so a `Drop` that panics leaves both slots consistent.
fn swap_next<T: Service>(pending: &mut ServiceSlot, target: &mut ServiceSlot) -> bool {
    let Some(value) = pending
        .value
        .as_deref_mut()
        .and_then(|value| value.downcast_mut::<NextValue<T>>())
        .and_then(|next| next.0.take())
    else {
        return false;
    };
    target.version += 1;
    match target
        .value
        .as_deref_mut()
        .and_then(|current| current.downcast_mut::<T>())
    {
        Some(current) => drop(std::mem::replace(current, value)),
        None => drop(target.value.replace(Box::new(value))),
    }
    true
}

/// One `Next<T>` output's swap at the boundary.
#[derive(Debug, Clone, Copy)]
struct NextSwap {
    pending: ServiceId,
    target: ServiceId,
    swap: fn(&mut ServiceSlot, &mut ServiceSlot) -> bool,
}

/// One message type's boundary (see `Messages::at_boundary`): the slot of
/// its `Messages<T>`, and whether a node (by registration index) is live.
pub(crate) type MessagesBoundary = fn(&mut ServiceSlot, &dyn Fn(u32) -> bool);

/// What the world does at each iteration boundary for the nodes registered so
/// far: the `Next<T>` swaps, and each message type's boundary.
#[derive(Debug, Default)]
pub struct BoundaryHooks {
    swaps: Vec<NextSwap>,
    messages: Vec<(ServiceId, MessagesBoundary)>,
    /// The node part whose parameters are being resolved (registration
    /// index, 0 for the body or `i + 1` for run condition `i`), so a message
    /// reader gets its cursor when registered, not when it first runs.
    pub(crate) registering: Option<(u32, u32)>,
}

impl BoundaryHooks {
    /// Runs `boundary` on the `Messages<T>` in `id` at every boundary (once
    /// per service, however many nodes read or send it).
    pub(crate) fn add_messages(&mut self, id: ServiceId, boundary: MessagesBoundary) {
        if !self.messages.iter().any(|&(known, _)| known == id) {
            self.messages.push((id, boundary));
        }
    }

    /// Runs every message type's boundary; a panic (a message's `Drop`) is
    /// handed to `failed` with the service, and the other types go on.
    pub(crate) fn apply_messages(
        &self,
        slots: &mut [ServiceSlot],
        live: &dyn Fn(u32) -> bool,
        mut failed: impl FnMut(ServiceId, Box<dyn std::any::Any + Send>),
    ) {
        for &(id, boundary) in &self.messages {
            let Some(slot) = slots.get_mut(id.index()) else {
                continue;
            };
            let run = std::panic::AssertUnwindSafe(|| boundary(slot, live));
            if let Err(payload) = std::panic::catch_unwind(run) {
                failed(id, payload);
            }
        }
    }

    fn add_swap(
        &mut self,
        pending: ServiceId,
        target: ServiceId,
        swap: fn(&mut ServiceSlot, &mut ServiceSlot) -> bool,
    ) {
        // One swap per pending service, however many nodes produce it.
        if !self.swaps.iter().any(|swap| swap.pending == pending) {
            self.swaps.push(NextSwap {
                pending,
                target,
                swap,
            });
        }
    }

    /// Swaps every pending `Next<T>` value into its service; returns how many
    /// moved. A swap whose replaced value panics in `Drop` still lands (the
    /// new value is in place first); the panic is handed to `failed` with
    /// the target service, and the other swaps go on.
    pub fn apply(
        &self,
        slots: &mut [ServiceSlot],
        mut failed: impl FnMut(ServiceId, Box<dyn std::any::Any + Send>),
    ) -> usize {
        let mut moved = 0;
        for swap in &self.swaps {
            let (pending, target) = two_slots(slots, swap.pending, swap.target);
            let swapped = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                (swap.swap)(pending, target)
            }));
            match swapped {
                Ok(swapped) => moved += usize::from(swapped),
                Err(payload) => {
                    moved += 1;
                    failed(swap.target, payload);
                }
            }
        }
        moved
    }
}

/// Two distinct slots, mutably.
fn two_slots(
    slots: &mut [ServiceSlot],
    a: ServiceId,
    b: ServiceId,
) -> (&mut ServiceSlot, &mut ServiceSlot) {
    match slots.get_disjoint_mut([a.index(), b.index()]) {
        Ok([a, b]) => (a, b),
        Err(_) => panic!("a `Next<T>` swap needs two distinct services"),
    }
}

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
///
/// A value produced by a node that then fails is dropped at the boundary:
/// the service keeps its value.
#[derive(Debug)]
pub struct NextValue<T> {
    value: Option<T>,
    /// The node that produced it (registration index; `u32::MAX` off a
    /// node): its failure drops the value.
    producer: u32,
}

impl<T> NextValue<T> {
    /// A value produced by the node recording on this thread.
    pub(crate) fn new(value: T) -> Self {
        Self::produced_by(value, crate::recording::recording_node())
    }

    /// A value produced by node `producer` (registration index).
    fn produced_by(value: T, producer: u32) -> Self {
        Self {
            value: Some(value),
            producer,
        }
    }

    /// Takes the value out, leaving nothing pending.
    pub(crate) fn take(&mut self) -> Option<T> {
        self.value.take()
    }

    /// The value waiting for the boundary, if one was produced.
    pub fn get(&self) -> Option<&T> {
        self.value.as_ref()
    }
}

/// A factory's output for the next iteration: [`set`](Next::set) stores a
/// value that replaces the service `T` at the iteration boundary, so this
/// iteration's readers of `T` still see the current one.
///
/// The value belongs to the node handed the `Next`, whichever thread sets
/// it (one the node started itself included): it is dropped if that node
/// fails.
#[derive(Debug)]
pub struct Next<'w, T> {
    cells: ServiceCells<'w>,
    id: ServiceId,
    /// The node handed this output (registration index).
    producer: u32,
    _value: PhantomData<fn(T)>,
}

impl<T: Service> Next<'_, T> {
    /// Stores `value` for the next iteration (dropped there instead if this
    /// node fails).
    pub fn set(&mut self, value: T) {
        // SAFETY: the node declared that it produces `NextValue<T>` (`id`), and
        // the plan orders a producer before every consumer of its output.
        unsafe {
            self.cells
                .put(self.id, NextValue::produced_by(value, self.producer))
        }
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
            producer: crate::recording::recording_node(),
            _value: PhantomData,
        }
    }
}

/// Moves a pending `NextValue<T>` into `T`'s slot; false when nothing was
/// pending, or when a node in `failed` produced it (the value is dropped).
///
/// The new value and its version are in place before the old value is
/// dropped, so a `Drop` that panics leaves both slots consistent.
fn swap_next<T: Service>(
    pending: &mut ServiceSlot,
    target: &mut ServiceSlot,
    failed: &[u32],
) -> bool {
    let Some(next) = pending
        .value
        .as_deref_mut()
        .and_then(|value| value.downcast_mut::<NextValue<T>>())
    else {
        return false;
    };
    let producer = next.producer;
    let Some(value) = next.value.take() else {
        return false;
    };
    if failed.contains(&producer) {
        drop(value);
        return false;
    }
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
    swap: SwapFn,
}

/// A `Next<T>` swap: the pending slot, the target slot, the failed nodes.
type SwapFn = fn(&mut ServiceSlot, &mut ServiceSlot, &[u32]) -> bool;

/// One message type's boundary (see `Messages::at_boundary`): the slot of
/// its `Messages<T>`, and what the world says of its nodes.
pub(crate) type MessagesBoundary = fn(&mut ServiceSlot, &BoundaryNodes<'_>);

/// What a world's boundary says of its nodes, for its message types.
#[derive(Clone, Copy)]
pub(crate) struct BoundaryNodes<'a> {
    /// Whether a node (registration index) is still registered.
    pub(crate) live: &'a dyn Fn(u32) -> bool,
    /// The nodes that failed in the iteration now ending (registration
    /// indices).
    pub(crate) failed: &'a [u32],
    /// The same nodes' positions in the order of the plan that ran: what
    /// the [`Place`](crate::recording::Place) of each of their records
    /// holds.
    pub(crate) failed_ranks: &'a [u32],
    /// The world's identity in recordings.
    pub(crate) world: u64,
    /// Only what running nodes sent joins (or, sent by a failed one, is
    /// dropped): the end of a one-shot system's run, not a boundary.
    pub(crate) gather_only: bool,
}

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
    /// Every [`Local`](crate::Local)'s slot and the node (registration
    /// index) it belongs to: emptied when the node is removed.
    locals: Vec<(u32, ServiceId)>,
}

impl BoundaryHooks {
    /// Records that the local in slot `id` belongs to the node being
    /// registered (a local resolved off any registration belongs to none).
    pub(crate) fn add_local(&mut self, id: ServiceId) {
        if let Some((node, _)) = self.registering {
            self.locals.push((node, id));
        }
    }

    /// The node (registration index) owning the local in slot `id`, and
    /// the local's position among that node's locals (in the order its
    /// parameters were resolved: the body's, then each run condition's).
    #[cfg(feature = "serde")] // saves of `Local`s only
    pub(crate) fn local_owner(&self, id: ServiceId) -> Option<(u32, u32)> {
        let &(owner, _) = self.locals.iter().find(|&&(_, slot)| slot == id)?;
        let position = self
            .locals
            .iter()
            .take_while(|&&(_, slot)| slot != id)
            .filter(|&&(node, _)| node == owner)
            .count();
        Some((owner, u32::try_from(position).unwrap_or(u32::MAX)))
    }

    /// The slot of the local at `position` among `node`'s locals.
    #[cfg(feature = "serde")] // saves of `Local`s only
    pub(crate) fn local_at(&self, node: u32, position: u32) -> Option<ServiceId> {
        self.locals
            .iter()
            .filter(|&&(owner, _)| owner == node)
            .nth(position as usize)
            .map(|&(_, slot)| slot)
    }

    /// Forgets the locals of `node` (registration index), handing their
    /// slots to `each` to be emptied.
    pub(crate) fn remove_locals(&mut self, node: u32, mut each: impl FnMut(ServiceId)) {
        self.locals.retain(|&(owner, id)| {
            let keep = owner != node;
            if !keep {
                each(id);
            }
            keep
        });
    }

    /// Runs `boundary` on the `Messages<T>` in `id` at every boundary (once
    /// per service, however many nodes read or send it).
    pub(crate) fn add_messages(&mut self, id: ServiceId, boundary: MessagesBoundary) {
        if !self.messages.iter().any(|&(known, _)| known == id) {
            self.messages.push((id, boundary));
        }
    }

    /// Runs every message type's boundary, dropping what the failed nodes
    /// sent; a panic (a message's `Drop`) is handed to `failed` with the
    /// service, and the other types go on.
    /// Whether `id` is a message service (its boundary gathers what was
    /// sent to it).
    pub(crate) fn is_message_service(&self, id: ServiceId) -> bool {
        self.messages.iter().any(|&(known, _)| known == id)
    }

    pub(crate) fn apply_messages(
        &self,
        slots: &mut [ServiceSlot],
        nodes: &BoundaryNodes<'_>,
        mut failed: impl FnMut(ServiceId, Box<dyn std::any::Any + Send>),
    ) {
        for &(id, boundary) in &self.messages {
            let Some(slot) = slots.get_mut(id.index()) else {
                continue;
            };
            let run = std::panic::AssertUnwindSafe(|| boundary(slot, nodes));
            if let Err(payload) = std::panic::catch_unwind(run) {
                failed(id, payload);
            }
        }
    }

    fn add_swap(&mut self, pending: ServiceId, target: ServiceId, swap: SwapFn) {
        // One swap per pending service, however many nodes produce it.
        if !self.swaps.iter().any(|swap| swap.pending == pending) {
            self.swaps.push(NextSwap {
                pending,
                target,
                swap,
            });
        }
    }

    /// Swaps every pending `Next<T>` value into its service, but for those
    /// the nodes in `failed_nodes` (registration indices) produced, which
    /// are dropped; returns how many moved. A swap whose replaced value
    /// panics in `Drop` still lands (the new value is in place first); the
    /// panic is handed to `failed` with the target service, and the other
    /// swaps go on.
    pub fn apply(
        &self,
        slots: &mut [ServiceSlot],
        failed_nodes: &[u32],
        mut failed: impl FnMut(ServiceId, Box<dyn std::any::Any + Send>),
    ) -> usize {
        let mut moved = 0;
        for swap in &self.swaps {
            let (pending, target) = two_slots(slots, swap.pending, swap.target);
            let swapped = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                (swap.swap)(pending, target, failed_nodes)
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

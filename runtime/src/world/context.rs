//! The runtime composition API's view of the world: a node body written as a
//! closure reaches services through a [`Context`], which hands out only
//! what the node declared.

use crate::access::AccessKind;
use crate::non_send::NonSendCell;
use crate::system::{NodeBody, NodeEnv};

/// What a closure registered with [`NodeBuilder::run`](crate::NodeBuilder::run)
/// receives: the services its node declared, and nothing else.
///
/// Each call looks the type up in the world's id table (a hash lookup);
/// functions registered with [`NodeBuilder::system`](crate::NodeBuilder::system)
/// resolve their parameters once, at registration, and pay nothing per call.
#[derive(Debug)]
pub struct Context<'w> {
    env: NodeEnv<'w>,
    /// A lifecycle hook's context: the world is otherwise idle, so every
    /// declared service may be written, shared or gated.
    exclusive: bool,
}

impl<'w> Context<'w> {
    /// The running node's name.
    pub fn name(&self) -> &str {
        self.env.descriptor.name()
    }

    fn declared<T: 'static>(&self, wanted: AccessKind) -> crate::ServiceId {
        let id = self.env.graph.table().id_of::<T>();
        let granted = id.and_then(|id| self.env.descriptor.access().access_to(id));
        match (id, granted) {
            (Some(id), Some(_)) if self.exclusive => id,
            (Some(id), Some(AccessKind::Gated)) => id,
            (Some(id), Some(AccessKind::Shared)) if wanted == AccessKind::Shared => id,
            _ => undeclared(self.name(), std::any::type_name::<T>(), wanted, granted),
        }
    }

    /// Shared access to `T`.
    ///
    /// # Panics
    /// When the node did not declare `T` (shared or gated), or the world holds
    /// no `T`. The executor catches the panic and reports it with the node's name.
    pub fn read<T: Send + Sync + 'static>(&self) -> &T {
        let id = self.declared::<T>(AccessKind::Shared);
        // SAFETY: the node declared access to `id` (checked above) and runs as a
        // plan node (`ContextBody::run`'s contract), so no gate of `id` runs now,
        // or as a lifecycle hook with the world otherwise idle (`exclusive`);
        // the returned borrow is tied to `&self`, so no `&mut` from `write`
        // can coexist with it.
        unsafe { self.env.cells.get::<T>(id) }.unwrap_or_else(|| missing::<T>())
    }

    /// Gated access to `T`.
    ///
    /// # Panics
    /// When the node did not declare `T` gated, or the world holds no `T`.
    pub fn write<T: Send + Sync + 'static>(&mut self) -> &mut T {
        let id = self.declared::<T>(AccessKind::Gated);
        // SAFETY: the node declared gated access to `id`, so it runs alone in
        // `id`'s lane (or it is a lifecycle hook and nothing else runs, per
        // `exclusive`); the borrow is tied to `&mut self`, so it is the only
        // one this context has handed out.
        unsafe { self.env.cells.get_mut::<T>(id) }.unwrap_or_else(|| missing::<T>())
    }

    /// Shared access to the non-`Send` service `T` (see
    /// [`World::insert_non_send`](crate::World::insert_non_send)); the node
    /// declares it with [`NodeBuilder::reads_non_send`](crate::NodeBuilder::reads_non_send),
    /// which pins it to the main thread.
    ///
    /// # Panics
    /// When the node did not declare `T`, the world holds no non-`Send` `T`,
    /// or this is not the thread that inserted it.
    pub fn read_non_send<T: 'static>(&self) -> &T {
        let id = self.declared::<T>(AccessKind::Shared);
        // SAFETY: as for `read`: the node declared access to `id`.
        let cell = unsafe { self.env.cells.get::<NonSendCell<T>>(id) };
        cell.and_then(NonSendCell::get)
            .unwrap_or_else(|| missing::<T>())
    }

    /// Gated access to the non-`Send` service `T`, declared with
    /// [`NodeBuilder::gates_non_send`](crate::NodeBuilder::gates_non_send).
    ///
    /// # Panics
    /// As for [`read_non_send`](Self::read_non_send), and when the node did
    /// not declare `T` gated.
    pub fn write_non_send<T: 'static>(&mut self) -> &mut T {
        let id = self.declared::<T>(AccessKind::Gated);
        // SAFETY: as for `write`: the node declared gated access to `id`.
        let cell = unsafe { self.env.cells.get_mut::<NonSendCell<T>>(id) };
        cell.and_then(NonSendCell::get_mut)
            .unwrap_or_else(|| missing::<T>())
    }
}

impl<'w> Context<'w> {
    /// A lifecycle hook's context.
    ///
    /// # Safety
    /// Nothing else reaches the world's services while the context lives
    /// (the caller holds the world exclusively, between iterations).
    pub(crate) unsafe fn exclusive(env: NodeEnv<'w>) -> Self {
        Self {
            env,
            exclusive: true,
        }
    }
}

#[cold]
#[inline(never)]
fn undeclared(node: &str, service: &str, wanted: AccessKind, granted: Option<AccessKind>) -> ! {
    let wanted = match wanted {
        AccessKind::Gated => "gated (`&mut`)",
        _ => "shared (`&`)",
    };
    match granted {
        Some(kind) => panic!(
            "node `{node}` asked for {wanted} access to `{service}` but declared only {kind:?}: declare it with `.gates::<{service}>()`"
        ),
        None => panic!(
            "node `{node}` asked for {wanted} access to `{service}`, which it did not declare: add `.reads::<{service}>()` or `.gates::<{service}>()` to its builder"
        ),
    }
}

#[cold]
#[inline(never)]
fn missing<T>() -> ! {
    panic!(
        "service `{}` is declared but the world holds no value for it here: insert it with `World::insert` (a non-Send one with `World::insert_non_send`, on the thread that runs the iterations) or register a factory that produces it",
        std::any::type_name::<T>()
    )
}

/// A closure body reached through a [`Context`].
pub(crate) struct ContextBody<F> {
    body: F,
}

impl<F> ContextBody<F> {
    pub(crate) fn new(body: F) -> Self {
        Self { body }
    }
}

impl<F: FnMut(&mut Context<'_>) + Send + 'static> NodeBody for ContextBody<F> {
    unsafe fn run(&mut self, env: &NodeEnv<'_>) {
        let mut context = Context {
            env: *env,
            exclusive: false,
        };
        (self.body)(&mut context);
    }
}

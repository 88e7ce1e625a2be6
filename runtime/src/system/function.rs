//! Functions as node bodies: a system is any `FnMut` whose parameters are all
//! [`Param`]s; a factory also returns the service it produces.
//!
//! The impls use the two-bound trick (`FnMut(P0, ..)` and
//! `FnMut(Item<P0>, ..)`) so that plain `fn hud(hp: &Hp, score: &mut Score)`
//! items, and closures with annotated parameters, satisfy them: the first bound
//! names the parameter types, the second lets the body be called with
//! references of any world lifetime.

use std::marker::PhantomData;

use crate::access::ServiceId;
use crate::node::NodeBuilder;
use crate::registry::Registry;
use crate::system::body::{NodeBody, NodeEnv};
use crate::system::cells::ServiceCells;
use crate::system::output::BoundaryHooks;
use crate::system::param::{Param, Service};
use crate::world::{Declared, DeclaredBody, SystemDeclaration};

/// `P`'s value borrowed for `'w`.
pub type ParamItem<'w, P> = <P as Param>::Item<'w>;

/// A function that can run as a system. `Marker` is the parameter tuple; it
/// only keeps the impls for different arities apart.
pub trait SystemFn<Marker>: Send + 'static {
    /// The resolved service id of every parameter.
    type Ids: Copy + Send + Sync + 'static;
    /// Adds every parameter's access to `node`.
    fn declare(node: NodeBuilder) -> NodeBuilder;
    /// Every parameter's service id, after `declare`'s node was built.
    fn resolve(registry: &mut Registry, hooks: &mut BoundaryHooks) -> Self::Ids;
    /// Runs the function.
    ///
    /// # Safety
    /// `ids` came from [`SystemFn::resolve`] for this world, and the node runs as
    /// a node of the world's current plan (see [`Param::fetch`]).
    unsafe fn call(&mut self, ids: &Self::Ids, cells: &ServiceCells<'_>);
}

/// A function that can run as a factory: a system whose return value is the
/// service it produces (every consumer of `Out` runs after it).
pub trait FactoryFn<Marker>: Send + 'static {
    /// The produced service.
    type Out: Service;
    /// The resolved service id of every parameter.
    type Ids: Copy + Send + Sync + 'static;
    /// Adds every parameter's access, and the produced output, to `node`.
    fn declare(node: NodeBuilder) -> NodeBuilder;
    /// Every parameter's service id, after `declare`'s node was built.
    fn resolve(registry: &mut Registry, hooks: &mut BoundaryHooks) -> Self::Ids;
    /// Runs the function and returns what it produced.
    ///
    /// # Safety
    /// As for [`SystemFn::call`].
    unsafe fn call(&mut self, ids: &Self::Ids, cells: &ServiceCells<'_>) -> Self::Out;
    /// Whether every parameter lets the body run now
    /// ([`Param::validate`](crate::system::Param::validate)); when not, the
    /// factory is skipped and its last output stays, as when its inputs did
    /// not move.
    ///
    /// # Safety
    /// As for [`FactoryFn::call`].
    #[inline]
    unsafe fn validate(&self, _ids: &Self::Ids, _cells: &ServiceCells<'_>) -> bool {
        true
    }
}

/// The items every function-as-node impl shares for the parameters
/// `$param`: the `Ids` array, `declare` (each parameter's access, then
/// `$declared`, an expression of the builder `$node`), and `resolve`.
macro_rules! param_fn_items {
    (($($param:ident $index:tt),*), |$node:ident| $declared:expr) => {
        type Ids = [ServiceId; { 0 $(+ { let _ = $index; 1 })* }];

        #[allow(unused_mut)]
        fn declare(mut $node: NodeBuilder) -> NodeBuilder {
            $($node = $param::declare($node);)*
            $declared
        }

        #[allow(unused_variables)]
        fn resolve(registry: &mut Registry, hooks: &mut BoundaryHooks) -> Self::Ids {
            [$($param::resolve(registry, hooks)),*]
        }
    };
}

/// The body of every function-as-node `call`: fetches each parameter `$param`
/// by its id in `$ids` from `$cells`, then calls `$function` (an
/// `&mut impl FnMut`) with them and evaluates to what it returned.
macro_rules! fetch_and_call {
    ($function:expr, $ids:expr, $cells:expr, ($($param:ident $index:tt),*)) => {{
        // Calling through a helper pins the argument types, so the compiler
        // picks the `FnMut(Item<..>)` bound.
        #[allow(non_snake_case, clippy::too_many_arguments)]
        fn call_inner<Ret, $($param),*>(
            mut f: impl FnMut($($param),*) -> Ret,
            $($param: $param),*
        ) -> Ret {
            f($($param),*)
        }
        // SAFETY: `$ids` resolve each parameter (the caller's guarantee,
        // `SystemFn::call`) and the node runs under the plan, as
        // `Param::fetch` requires; the parameters of one function never
        // alias each other (the plan holds only nodes the gate,
        // `node::would_alias`, let through: SL0009 refuses the rest before
        // they run).
        #[allow(non_snake_case)]
        let ($($param,)*) = ($(unsafe { $param::fetch($ids[$index], $cells) },)*);
        call_inner($function, $($param),*)
    }};
}

/// Whether every parameter `$param` lets the body run now
/// ([`Param::validate`]), asked before any is fetched.
macro_rules! params_validate {
    ($ids:expr, $cells:expr, ($($param:ident $index:tt),*)) => {
        // SAFETY: as for `fetch_and_call!`: `$ids` resolve each parameter
        // and the node runs under the plan.
        true $(&& unsafe { $param::validate($ids[$index], $cells) })*
    };
}

pub(crate) use {fetch_and_call, param_fn_items, params_validate};

macro_rules! impl_functions {
    ($($param:ident $index:tt),*) => {
        impl<Func, $($param: Param),*> SystemFn<fn($($param,)*)> for Func
        where
            Func: Send + 'static,
            for<'a> &'a mut Func: FnMut($($param),*) + FnMut($(ParamItem<'_, $param>),*),
        {
            param_fn_items!(($($param $index),*), |node| node);

            #[inline]
            #[allow(unused_variables, clippy::unused_unit)]
            unsafe fn call(&mut self, ids: &Self::Ids, cells: &ServiceCells<'_>) {
                if !params_validate!(ids, cells, ($($param $index),*)) {
                    return;
                }
                fetch_and_call!(self, ids, cells, ($($param $index),*))
            }
        }

        impl<Func, Decl: SystemDeclaration, $($param: Param),*> SystemFn<(Decl, fn($($param,)*))> for DeclaredBody<Func>
        where
            Func: Send + 'static,
            for<'a> &'a mut Func: FnMut($($param),*) -> Declared<Decl> + FnMut($(ParamItem<'_, $param>),*) -> Declared<Decl>,
        {
            param_fn_items!(($($param $index),*), |node| node);

            #[inline]
            #[allow(unused_variables)]
            unsafe fn call(&mut self, ids: &Self::Ids, cells: &ServiceCells<'_>) {
                if !params_validate!(ids, cells, ($($param $index),*)) {
                    return;
                }
                // The zero-sized token is all a declared system returns.
                let Declared { .. } = fetch_and_call!(&mut self.0, ids, cells, ($($param $index),*));
            }
        }

        impl<Func, Out: Service, $($param: Param),*> FactoryFn<fn($($param,)*) -> Out> for Func
        where
            Func: Send + 'static,
            for<'a> &'a mut Func: FnMut($($param),*) -> Out + FnMut($(ParamItem<'_, $param>),*) -> Out,
        {
            type Out = Out;
            param_fn_items!(($($param $index),*), |node| node.returns::<Out>());

            #[inline]
            #[allow(unused_variables)]
            unsafe fn call(&mut self, ids: &Self::Ids, cells: &ServiceCells<'_>) -> Out {
                fetch_and_call!(self, ids, cells, ($($param $index),*))
            }

            #[inline]
            #[allow(unused_variables)]
            unsafe fn validate(&self, ids: &Self::Ids, cells: &ServiceCells<'_>) -> bool {
                params_validate!(ids, cells, ($($param $index),*))
            }
        }
    };
}

impl_functions!();
crate::tuples::for_tuples!(impl_functions, 12);

/// A system function paired with its resolved ids: the body the executor runs.
pub(crate) struct SystemBody<F: SystemFn<M>, M> {
    pub(crate) function: F,
    pub(crate) ids: F::Ids,
    pub(crate) _marker: PhantomData<fn() -> M>,
}

impl<F: SystemFn<M>, M: 'static> NodeBody for SystemBody<F, M> {
    #[inline]
    unsafe fn run(&mut self, env: &NodeEnv<'_>) {
        // SAFETY: the executor runs this body only as a node of the plan it was
        // registered in, with `ids` resolved against the same world.
        unsafe { self.function.call(&self.ids, &env.cells) }
    }
}

/// A factory function paired with its resolved ids and output id.
pub(crate) struct FactoryBody<F: FactoryFn<M>, M> {
    pub(crate) function: F,
    pub(crate) ids: F::Ids,
    pub(crate) output: ServiceId,
    pub(crate) _marker: PhantomData<fn() -> M>,
}

impl<F: FactoryFn<M>, M: 'static> NodeBody for FactoryBody<F, M> {
    #[inline]
    unsafe fn run(&mut self, env: &NodeEnv<'_>) {
        // SAFETY: as for `SystemBody::run`.
        if !unsafe { self.function.validate(&self.ids, &env.cells) } {
            return;
        }
        // SAFETY: as for `SystemBody::run`.
        let value = unsafe { self.function.call(&self.ids, &env.cells) };
        // SAFETY: the node declared that it produces `output` (`declare`), and
        // the plan puts a producer before every consumer of its output.
        unsafe { env.cells.put(self.output, value) }
    }
}

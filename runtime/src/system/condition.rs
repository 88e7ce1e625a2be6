//! Run conditions: read-only functions returning `bool`, evaluated once when
//! their node is ready; `false` skips the node's body.

use crate::access::ServiceId;
use crate::node::NodeBuilder;
use crate::registry::Registry;
use crate::system::body::NodeEnv;
use crate::system::function::{ParamItem, fetch_and_call, param_fn_items, params_validate};
use crate::system::output::BoundaryHooks;
use crate::system::param::Param;

/// A [`Param`] that only reads (`&T`): the only kind a run condition may take.
pub trait ReadOnlyParam: Param {}
impl<T: Send + Sync + 'static> ReadOnlyParam for &T {}

/// A function that can gate a node: all parameters read-only, returns `bool`.
pub trait ConditionFn<Marker>: Send + 'static {
    /// The resolved service id of every parameter.
    type Ids: Copy + Send + Sync + 'static;
    /// Adds every parameter's (shared) access to `node`.
    fn declare(node: NodeBuilder) -> NodeBuilder;
    /// Every parameter's service id.
    fn resolve(registry: &mut Registry, hooks: &mut BoundaryHooks) -> Self::Ids;
    /// Evaluates the condition.
    ///
    /// # Safety
    /// As for [`SystemFn::call`](crate::SystemFn::call).
    unsafe fn call(&mut self, ids: &Self::Ids, env: &NodeEnv<'_>) -> bool;
}

macro_rules! impl_condition {
    ($($param:ident $index:tt),*) => {
        impl<Func, $($param: ReadOnlyParam),*> ConditionFn<fn($($param,)*) -> bool> for Func
        where
            Func: Send + 'static,
            for<'a> &'a mut Func: FnMut($($param),*) -> bool + FnMut($(ParamItem<'_, $param>),*) -> bool,
        {
            param_fn_items!(($($param $index),*), |node| node);

            #[inline]
            #[allow(unused_variables)]
            unsafe fn call(&mut self, ids: &Self::Ids, env: &NodeEnv<'_>) -> bool {
                // A parameter that refuses the run makes the condition false.
                if !params_validate!(ids, &env.cells, ($($param $index),*)) {
                    return false;
                }
                // Each parameter is read-only (`ReadOnlyParam`).
                fetch_and_call!(self, ids, &env.cells, ($($param $index),*))
            }
        }
    };
}

impl_condition!();
crate::tuples::for_tuples!(impl_condition, 8);

/// A condition type-erased, as a node holds it.
pub trait ConditionBody: Send + 'static {
    /// Evaluates the condition.
    ///
    /// # Safety
    /// As for [`NodeBody::run`](crate::NodeBody::run).
    unsafe fn evaluate(&mut self, env: &NodeEnv<'_>) -> bool;
}

/// A condition function paired with its resolved ids.
pub(crate) struct Condition<F: ConditionFn<M>, M> {
    pub(crate) function: F,
    pub(crate) ids: F::Ids,
    pub(crate) _marker: std::marker::PhantomData<fn() -> M>,
}

impl<F: ConditionFn<M>, M: 'static> ConditionBody for Condition<F, M> {
    #[inline]
    unsafe fn evaluate(&mut self, env: &NodeEnv<'_>) -> bool {
        // SAFETY: forwarded from the caller.
        unsafe { self.function.call(&self.ids, env) }
    }
}

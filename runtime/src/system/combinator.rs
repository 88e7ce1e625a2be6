//! Run-condition combinators: [`not`], [`ConditionExt::and`],
//! [`ConditionExt::or`], and a condition reading another's result,
//! [`ConditionExt::pipe`].

use crate::access::ServiceId;
use crate::node::NodeBuilder;
use crate::registry::Registry;
use crate::system::body::NodeEnv;
use crate::system::condition::{ConditionFn, ReadOnlyParam};
use crate::system::function::{ParamItem, param_fn_items, params_validate};
use crate::system::output::BoundaryHooks;

/// Combines run conditions: `a.and(b)`, `a.or(b)`, and with [`not`],
/// `not(a)`. Each result is itself a condition (combine it again, or hand it
/// to [`run_if`](crate::NodeSpec::run_if)).
///
/// - **Short-circuit**, as `&&` and `||`: `a.and(b)` does not evaluate `b`
///   when `a` is false, `a.or(b)` not when `a` is true.
/// - **Access**: the node reads the union of what the operands read,
///   whichever of them a given iteration evaluates (the plan does not change
///   with the result).
/// - **One condition**: the combination is one run condition of its node;
///   its operands share its message cursor and change cursor, as the
///   parameters of one condition function do, and each operand's
///   [`Local`](crate::Local)s are its own.
/// - **Failure**: an operand that panics fails the node, as any run
///   condition that panics does (the body does not run, and the node records
///   nothing).
///
/// ```
/// use sluice::{ConditionExt, NodeBuilder, World, not};
///
/// struct Paused(bool);
/// struct Night(bool);
/// #[derive(Default)]
/// struct Runs(u32);
///
/// fn paused(p: &Paused) -> bool { p.0 }
/// fn night(n: &Night) -> bool { n.0 }
///
/// let mut world = World::new();
/// world.insert(Paused(false));
/// world.insert(Night(true));
/// world.insert(Runs::default());
/// world.add_system(
///     NodeBuilder::new("prowl")
///         .system(|runs: &mut Runs| runs.0 += 1)
///         .run_if(not(paused).and(night)),
/// );
/// world.run_iteration()?;
/// world.insert(Paused(true));
/// world.run_iteration()?;
/// assert_eq!(world.get::<Runs>().unwrap().0, 1, "paused the second time");
/// # Ok::<(), sluice::IterationError>(())
/// ```
pub trait ConditionExt<Marker>: ConditionFn<Marker> + Sized {
    /// Holds when both hold; `other` is evaluated only when `self` holds.
    fn and<M, C: ConditionFn<M>>(self, other: C) -> AndCondition<Self, C> {
        AndCondition(self, other)
    }

    /// Holds when either holds; `other` is evaluated only when `self` does
    /// not hold.
    fn or<M, C: ConditionFn<M>>(self, other: C) -> OrCondition<Self, C> {
        OrCondition(self, other)
    }

    /// Hands this condition's result to `next`, whose first parameter is
    /// that `bool` and whose other parameters read as any condition's do
    /// (bevy's `condition.pipe(system)` with `In<bool>`): `next`'s signature
    /// declares that it reads another condition's result. `self` is
    /// evaluated once per evaluation of the whole, always (no
    /// short-circuit), and `next` decides.
    ///
    /// ```
    /// use sluice::{ConditionExt, NodeBuilder, World};
    ///
    /// struct Hp(u32);
    /// struct GodMode(bool);
    /// #[derive(Default)]
    /// struct Deaths(u32);
    ///
    /// fn dead(hp: &Hp) -> bool { hp.0 == 0 }
    /// // Dies when dead, unless in god mode.
    /// fn mortal(dead: bool, god: &GodMode) -> bool { dead && !god.0 }
    ///
    /// let mut world = World::new();
    /// world.insert(Hp(0));
    /// world.insert(GodMode(true));
    /// world.insert(Deaths::default());
    /// world.add_system(
    ///     NodeBuilder::new("die")
    ///         .system(|d: &mut Deaths| d.0 += 1)
    ///         .run_if(dead.pipe(mortal)),
    /// );
    /// world.run_iteration()?;
    /// world.insert(GodMode(false));
    /// world.run_iteration()?;
    /// assert_eq!(world.get::<Deaths>().unwrap().0, 1);
    /// # Ok::<(), sluice::IterationError>(())
    /// ```
    fn pipe<M, C: PipedConditionFn<M>>(self, next: C) -> PipeCondition<Self, C> {
        PipeCondition(self, next)
    }
}

impl<Marker, C: ConditionFn<Marker>> ConditionExt<Marker> for C {}

/// Holds when `condition` does not (see [`ConditionExt`]).
pub fn not<M, C: ConditionFn<M>>(condition: C) -> NotCondition<C> {
    NotCondition(condition)
}

/// Two run conditions that must both hold ([`ConditionExt::and`]).
#[derive(Debug, Clone, Copy)]
pub struct AndCondition<A, B>(A, B);

/// Two run conditions of which one must hold ([`ConditionExt::or`]).
#[derive(Debug, Clone, Copy)]
pub struct OrCondition<A, B>(A, B);

/// A run condition negated ([`not`]).
#[derive(Debug, Clone, Copy)]
pub struct NotCondition<C>(C);

/// A run condition whose result another reads ([`ConditionExt::pipe`]).
#[derive(Debug, Clone, Copy)]
pub struct PipeCondition<A, B>(A, B);

/// Marks the [`ConditionFn`] impl of [`PipeCondition`].
#[derive(Debug)]
pub struct PipeMarker<A, B>(std::marker::PhantomData<(A, B)>);

/// A function that reads another run condition's result: its first
/// parameter is that `bool`, every other one read-only, and it returns
/// `bool` ([`ConditionExt::pipe`]).
pub trait PipedConditionFn<Marker>: Send + 'static {
    /// The resolved service id of every parameter after the first.
    type Ids: Copy + Send + Sync + 'static;
    /// Adds every parameter's (shared) access to `node`.
    fn declare(node: NodeBuilder) -> NodeBuilder;
    /// Every parameter's service id.
    fn resolve(registry: &mut Registry, hooks: &mut BoundaryHooks) -> Self::Ids;
    /// Evaluates the condition with `input`, the result it reads.
    ///
    /// # Safety
    /// As for [`ConditionFn::call`].
    unsafe fn call(&mut self, input: bool, ids: &Self::Ids, env: &NodeEnv<'_>) -> bool;
}

macro_rules! impl_piped_condition {
    ($($param:ident $index:tt),*) => {
        impl<Func, $($param: ReadOnlyParam),*> PipedConditionFn<fn(bool, $($param,)*) -> bool> for Func
        where
            Func: Send + 'static,
            for<'a> &'a mut Func:
                FnMut(bool, $($param),*) -> bool + FnMut(bool, $(ParamItem<'_, $param>),*) -> bool,
        {
            param_fn_items!(($($param $index),*), |node| node);

            #[inline]
            #[allow(unused_variables)]
            unsafe fn call(&mut self, input: bool, ids: &Self::Ids, env: &NodeEnv<'_>) -> bool {
                // A parameter that refuses the run makes the condition false.
                if !params_validate!(ids, &env.cells, ($($param $index),*)) {
                    return false;
                }
                // Calling through a helper pins the argument types, so the
                // compiler picks the `FnMut(bool, Item<..>)` bound.
                #[allow(non_snake_case, clippy::too_many_arguments)]
                fn call_inner<$($param),*>(
                    mut f: impl FnMut(bool, $($param),*) -> bool,
                    input: bool,
                    $($param: $param),*
                ) -> bool {
                    f(input, $($param),*)
                }
                // SAFETY: `ids` resolve each parameter (the caller's
                // guarantee) and the node runs under the plan, as
                // `Param::fetch` requires; every parameter is read-only
                // (`ReadOnlyParam`), and the gate refused any that alias
                // (SL0009, `DeclaredBy::Condition`).
                #[allow(non_snake_case)]
                let ($($param,)*) = ($(unsafe { $param::fetch(ids[$index], &env.cells) },)*);
                call_inner(self, input, $($param),*)
            }
        }
    };
}

impl_piped_condition!();
crate::tuples::for_tuples!(impl_piped_condition, 8);

/// The items of a condition made of two parts, `$a` then `$b`: both ids,
/// and each part's declarations as a part of its own (each is called on
/// its own, so its parameters may name what the other's name).
macro_rules! two_part_items {
    ($a:ident, $b:ident) => {
        type Ids = ($a::Ids, $b::Ids);

        fn declare(node: NodeBuilder) -> NodeBuilder {
            $b::declare($a::declare(node.condition_operand()).condition_operand())
        }

        fn resolve(registry: &mut Registry, hooks: &mut BoundaryHooks) -> Self::Ids {
            ($a::resolve(registry, hooks), $b::resolve(registry, hooks))
        }
    };
}

impl<A, B, MA, MB> ConditionFn<PipeMarker<MA, MB>> for PipeCondition<A, B>
where
    A: ConditionFn<MA>,
    B: PipedConditionFn<MB>,
    MA: 'static,
    MB: 'static,
{
    two_part_items!(A, B);

    #[inline]
    unsafe fn call(&mut self, ids: &Self::Ids, env: &NodeEnv<'_>) -> bool {
        // SAFETY: both were resolved by `resolve` for this world and their
        // reads declared by `declare`; the node runs under the plan (the
        // caller's guarantee, forwarded).
        unsafe {
            let input = self.0.call(&ids.0, env);
            self.1.call(input, &ids.1, env)
        }
    }
}

/// Marks the [`ConditionFn`] impl of [`AndCondition`].
#[derive(Debug)]
pub struct AndMarker<A, B>(std::marker::PhantomData<(A, B)>);

/// Marks the [`ConditionFn`] impl of [`OrCondition`].
#[derive(Debug)]
pub struct OrMarker<A, B>(std::marker::PhantomData<(A, B)>);

/// Marks the [`ConditionFn`] impl of [`NotCondition`].
#[derive(Debug)]
pub struct NotMarker<C>(std::marker::PhantomData<C>);

/// The `ConditionFn` impl of a two-operand combinator `$name` that
/// evaluates `$first op $second` with `$op` (`&&` or `||`).
macro_rules! binary_condition {
    ($name:ident, $marker:ident, $op:tt) => {
        impl<A, B, MA, MB> ConditionFn<$marker<MA, MB>> for $name<A, B>
        where
            A: ConditionFn<MA>,
            B: ConditionFn<MB>,
            MA: 'static,
            MB: 'static,
        {
            two_part_items!(A, B);

            #[inline]
            unsafe fn call(&mut self, ids: &Self::Ids, env: &NodeEnv<'_>) -> bool {
                // SAFETY: both operands' ids were resolved by `resolve` for
                // this world and their reads declared by `declare`; the node
                // runs under the plan (the caller's guarantee, forwarded).
                unsafe { self.0.call(&ids.0, env) $op self.1.call(&ids.1, env) }
            }
        }
    };
}

binary_condition!(AndCondition, AndMarker, &&);
binary_condition!(OrCondition, OrMarker, ||);

impl<C: ConditionFn<M>, M: 'static> ConditionFn<NotMarker<M>> for NotCondition<C> {
    type Ids = C::Ids;

    fn declare(node: NodeBuilder) -> NodeBuilder {
        C::declare(node)
    }

    fn resolve(registry: &mut Registry, hooks: &mut BoundaryHooks) -> Self::Ids {
        C::resolve(registry, hooks)
    }

    #[inline]
    unsafe fn call(&mut self, ids: &Self::Ids, env: &NodeEnv<'_>) -> bool {
        // SAFETY: forwarded from the caller, with the operand's own ids.
        !unsafe { self.0.call(ids, env) }
    }
}

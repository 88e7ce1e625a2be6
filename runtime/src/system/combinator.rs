//! Run-condition combinators: [`not`], [`ConditionExt::and`],
//! [`ConditionExt::or`].

use crate::node::NodeBuilder;
use crate::registry::Registry;
use crate::system::body::NodeEnv;
use crate::system::condition::ConditionFn;
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
            type Ids = (A::Ids, B::Ids);

            fn declare(node: NodeBuilder) -> NodeBuilder {
                // Each operand is called on its own: its parameters are one part.
                B::declare(A::declare(node.condition_operand()).condition_operand())
            }

            fn resolve(registry: &mut Registry, hooks: &mut BoundaryHooks) -> Self::Ids {
                (A::resolve(registry, hooks), B::resolve(registry, hooks))
            }

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

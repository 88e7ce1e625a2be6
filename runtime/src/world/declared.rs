//! Declared systems: a `#[system]` function keeps its own name as a plain
//! function item, and carries its declaration (name, key, ordering,
//! organisation, run conditions) in its return type, so `add_system(f)` and
//! `.after(f)` read it from the function item itself.
//!
//! The macro turns `fn stats(score: &mut Stats) { .. }` into
//! `fn stats(score: &mut Stats) -> Declared<__sluice_system_stats> { .. }`,
//! where `__sluice_system_stats` is a braced struct (type namespace only)
//! implementing [`SystemDeclaration`]. Nothing new lives in the value
//! namespace, so a parameter or a local named `stats` is a new binding as
//! anywhere else, and calling `stats(&mut score)` directly still works (the
//! returned [`Declared`] is a zero-sized token).

use std::marker::PhantomData;

use crate::node::NodeBuilder;
use crate::system::SystemFn;
use crate::world::spec::{IntoSystem, NodeSpec};

/// The declaration a `#[system]` function's attribute wrote: emitted by the
/// macro on a hidden braced struct beside the function.
pub trait SystemDeclaration: 'static {
    /// `NodeBuilder::new(name).key(..)` and every ordering and organisation
    /// argument of the attribute.
    fn builder() -> NodeBuilder;

    /// The registration's run conditions (`run_if = ..`), applied to the
    /// built spec.
    fn finish(spec: NodeSpec) -> NodeSpec {
        spec
    }
}

/// The zero-sized token a `#[system]` function returns: its type names the
/// function's [`SystemDeclaration`], so the function item alone carries its
/// registration.
pub struct Declared<D>(PhantomData<fn() -> D>);

impl<D> Declared<D> {
    /// The token; the macro returns it at the end of the function.
    #[inline]
    pub const fn new() -> Self {
        Declared(PhantomData)
    }
}

impl<D> Default for Declared<D> {
    fn default() -> Self {
        Self::new()
    }
}

impl<D> Clone for Declared<D> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<D> Copy for Declared<D> {}

impl<D> std::fmt::Debug for Declared<D> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Declared")
    }
}

/// A declared system's function as a node body: the function's token is
/// dropped after each call.
pub(crate) struct DeclaredBody<F>(pub(crate) F);

/// Marks the [`IntoSystem`] impl for `#[system]` functions: `D` is the
/// declaration, `P` the parameter list.
#[derive(Debug)]
pub struct DeclaredMarker<D, P>(PhantomData<fn() -> (D, P)>);

impl<D: SystemDeclaration, P: 'static, F: Send + 'static> IntoSystem<DeclaredMarker<D, P>> for F
where
    DeclaredBody<F>: SystemFn<(D, P)>,
{
    #[track_caller]
    fn into_system(self) -> NodeSpec {
        D::finish(D::builder().system(DeclaredBody(self)))
    }
}

/// The declaration the macro emits beside a `#[system]` that did not
/// compile: the function is kept as written (its body still checked, its
/// direct calls still valid), and registering it compiles too, so one
/// mistake gives one error. It is never built: the errors stop the build.
pub trait UnbuiltDeclaration: 'static {}

/// A function returning an [`UnbuiltDeclaration`]'s token, with `Args` its
/// parameters (any types: the parameter that is wrong is the error).
pub trait UnbuiltFn<Marker> {}

/// Marks the [`IntoSystem`] impl for a `#[system]` that did not compile.
#[derive(Debug)]
pub struct UnbuiltMarker<M>(PhantomData<M>);

macro_rules! impl_unbuilt {
    ($($arg:ident),*) => {
        impl<F, D: UnbuiltDeclaration, $($arg),*> UnbuiltFn<(D, $($arg,)*)> for F
        where
            F: Fn($($arg),*) -> Declared<D>,
        {
        }
    };
}

impl_unbuilt!();
impl_unbuilt!(A0);
impl_unbuilt!(A0, A1);
impl_unbuilt!(A0, A1, A2);
impl_unbuilt!(A0, A1, A2, A3);
impl_unbuilt!(A0, A1, A2, A3, A4);
impl_unbuilt!(A0, A1, A2, A3, A4, A5);
impl_unbuilt!(A0, A1, A2, A3, A4, A5, A6);
impl_unbuilt!(A0, A1, A2, A3, A4, A5, A6, A7);
impl_unbuilt!(A0, A1, A2, A3, A4, A5, A6, A7, A8);
impl_unbuilt!(A0, A1, A2, A3, A4, A5, A6, A7, A8, A9);
impl_unbuilt!(A0, A1, A2, A3, A4, A5, A6, A7, A8, A9, A10);
impl_unbuilt!(A0, A1, A2, A3, A4, A5, A6, A7, A8, A9, A10, A11);

impl<M: 'static, F: UnbuiltFn<M>> IntoSystem<UnbuiltMarker<M>> for F {
    fn into_system(self) -> NodeSpec {
        unreachable!("this system did not compile")
    }
}

//! Declared nodes: a `#[system]` or `#[factory]` function keeps its own
//! name as a plain function item, and carries its declaration (name, key,
//! ordering, organisation, run conditions) in its return type, so
//! `add_system(f)`, `add_factory(f)` and `.after_node(f)` read it from the
//! function item itself.
//!
//! The macro turns `fn stats(score: &mut Stats) { .. }` into
//! `fn stats(score: &mut Stats) -> Declared<__sluice_system_stats> { .. }`,
//! where `__sluice_system_stats` is a braced struct (type namespace only)
//! implementing [`SystemDeclaration`]; and `fn mesh(t: &Terrain) -> Mesh`
//! into `fn mesh(t: &Terrain) -> Declared<__sluice_factory_mesh, Mesh>`,
//! the struct implementing [`FactoryDeclaration`]. Nothing new lives in
//! the value namespace, so a parameter or a local named `stats` or `mesh`
//! is a new binding as anywhere else, and calling `stats(&mut score)` or
//! `mesh(&terrain).into_inner()` directly still works (a system's
//! [`Declared`] is a zero-sized token; a factory's holds what it produced).

use std::cell::Cell;
use std::marker::PhantomData;

use crate::node::NodeBuilder;
use crate::system::SystemFn;
use crate::world::spec::{IntoFactory, IntoSystem, NodeSpec};

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

/// The declaration a free `#[factory]` function's attribute wrote: emitted
/// by the macro on a hidden braced struct beside the function. Its outputs'
/// shape (one value, a tuple, `Next<T>`, `Out<T>` parameters) is the
/// macro's to route, so the whole registration is written there.
pub trait FactoryDeclaration: 'static {
    /// `NodeBuilder::new(name).key(..)` and every ordering and organisation
    /// argument of the attribute.
    fn builder() -> NodeBuilder;

    /// The registration: [`builder`](Self::builder) running the function
    /// and routing each output, with the run conditions.
    fn spec() -> NodeSpec;
}

/// What a `#[system]` or `#[factory]` function returns: its type names the
/// function's declaration `D`, so the function item alone carries its
/// registration. A system's is a zero-sized token (`R = ()`); a factory's
/// holds the values it produced ([`into_inner`](Self::into_inner)).
///
/// Never a service (it is not `Sync`), so a declared function is not also
/// a plain factory producing its own token.
pub struct Declared<D, R = ()> {
    value: R,
    _declaration: PhantomData<fn() -> D>,
    /// Keeps it from being `Sync`, so never a service.
    _not_sync: PhantomData<Cell<()>>,
}

impl<D> Declared<D> {
    /// The token; the macro returns it at the end of a system.
    #[inline]
    pub const fn new() -> Self {
        Self::with(())
    }
}

impl<D, R> Declared<D, R> {
    /// What a factory produced, declared by `D`; the macro returns it at
    /// the end of a factory.
    #[inline]
    pub const fn with(value: R) -> Self {
        Declared {
            value,
            _declaration: PhantomData,
            _not_sync: PhantomData,
        }
    }

    /// What the function produced (`()` for a system).
    #[inline]
    pub fn into_inner(self) -> R {
        self.value
    }
}

impl<D> Default for Declared<D> {
    fn default() -> Self {
        Self::new()
    }
}

impl<D, R: Clone> Clone for Declared<D, R> {
    fn clone(&self) -> Self {
        Self::with(self.value.clone())
    }
}

impl<D, R: Copy> Copy for Declared<D, R> {}

impl<D, R: std::fmt::Debug> std::fmt::Debug for Declared<D, R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Declared").field(&self.value).finish()
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

/// The declaration the macro emits beside a `#[system]` or free
/// `#[factory]` that did not compile: the function is kept as written (its
/// body still checked, its direct calls still valid), and registering it
/// compiles too, so one mistake gives one error. It is never built: the
/// errors stop the build.
pub trait UnbuiltDeclaration: 'static {}

/// A function returning a [`Declared`] of some declaration, with `Marker`
/// `(declaration, value, parameters..)` (any parameter types: for a node
/// that did not compile, the parameter that is wrong is the error).
pub trait DeclaredFn<Marker> {
    /// The declaration its return type names.
    type Declaration;
}

/// Marks the [`IntoSystem`] and [`IntoFactory`] impls for a node that did
/// not compile.
#[derive(Debug)]
pub struct UnbuiltMarker<M>(PhantomData<M>);

/// Marks the [`IntoFactory`] impl for `#[factory]` functions (and the
/// typed order naming one).
#[derive(Debug)]
pub struct FactoryMarker<M>(PhantomData<M>);

macro_rules! impl_declared_fn {
    ($($arg:ident),*) => {
        impl<F, D, R, $($arg),*> DeclaredFn<(D, R, $($arg,)*)> for F
        where
            F: Fn($($arg),*) -> Declared<D, R>,
        {
            type Declaration = D;
        }
    };
}

impl_declared_fn!();
impl_declared_fn!(A0);
impl_declared_fn!(A0, A1);
impl_declared_fn!(A0, A1, A2);
impl_declared_fn!(A0, A1, A2, A3);
impl_declared_fn!(A0, A1, A2, A3, A4);
impl_declared_fn!(A0, A1, A2, A3, A4, A5);
impl_declared_fn!(A0, A1, A2, A3, A4, A5, A6);
impl_declared_fn!(A0, A1, A2, A3, A4, A5, A6, A7);
impl_declared_fn!(A0, A1, A2, A3, A4, A5, A6, A7, A8);
impl_declared_fn!(A0, A1, A2, A3, A4, A5, A6, A7, A8, A9);
impl_declared_fn!(A0, A1, A2, A3, A4, A5, A6, A7, A8, A9, A10);
impl_declared_fn!(A0, A1, A2, A3, A4, A5, A6, A7, A8, A9, A10, A11);

impl<M: 'static, F: DeclaredFn<M>> IntoSystem<UnbuiltMarker<M>> for F
where
    F::Declaration: UnbuiltDeclaration,
{
    fn into_system(self) -> NodeSpec {
        unreachable!("this system did not compile")
    }
}

impl<M: 'static, F: DeclaredFn<M>> IntoFactory<UnbuiltMarker<M>> for F
where
    F::Declaration: UnbuiltDeclaration,
{
    fn into_factory(self) -> NodeSpec {
        unreachable!("this factory did not compile")
    }
}

impl<M: 'static, F: DeclaredFn<M>> IntoFactory<FactoryMarker<M>> for F
where
    F::Declaration: FactoryDeclaration,
{
    #[track_caller]
    fn into_factory(self) -> NodeSpec {
        // The declaration calls the function by name: its type is this
        // function item's own (the macro emits one declaration per
        // function), so `self` is that very function.
        <F::Declaration as FactoryDeclaration>::spec()
    }
}

//! Orders named by the compiler (issue 23): `.after(other_system)` takes the
//! function item itself, so a typo is a compile error instead of SL0002 at
//! plan build, and `world.add_chain((a, b, c))` orders a run of systems in
//! one call. Both resolve to the same labels a string order would write (a
//! function's instance key), so the plan, its text format and `why` read
//! the same.

use std::marker::PhantomData;

use crate::node::{Label, NodeBuilder};
use crate::plan::NodeIndex;
use crate::system::SystemFn;
use crate::world::World;
use crate::world::declared::{
    DeclaredBody, DeclaredFn, DeclaredMarker, FactoryDeclaration, FactoryMarker, SystemDeclaration,
};
use crate::world::spec::{FunctionMarker, IntoSystem, NodeSpec, function_name};

/// Something an order can name: a node's name, key or a marker's label
/// (`"spawner"`), a plain function item, or a `#[system]` or `#[factory]`
/// function item.
/// A function names its instance key, so it finds exactly the node it
/// registers.
pub trait OrderTarget<Marker> {
    /// The label the order resolves.
    fn order_label(self) -> Label;
}

/// Marks the [`OrderTarget`] impl for labels.
#[derive(Debug)]
pub struct ByLabel;

impl<T: Into<Label>> OrderTarget<ByLabel> for T {
    fn order_label(self) -> Label {
        self.into()
    }
}

impl<M: 'static, F: SystemFn<M>> OrderTarget<FunctionMarker<M>> for F {
    fn order_label(self) -> Label {
        let (name, key, _) = function_name::<F>();
        key.unwrap_or(name)
    }
}

impl<D: SystemDeclaration, P: 'static, F: Send + 'static> OrderTarget<DeclaredMarker<D, P>> for F
where
    DeclaredBody<F>: SystemFn<(D, P)>,
{
    fn order_label(self) -> Label {
        builder_label(&D::builder())
    }
}

impl<M: 'static, F: DeclaredFn<M>> OrderTarget<FactoryMarker<M>> for F
where
    F::Declaration: FactoryDeclaration,
{
    fn order_label(self) -> Label {
        builder_label(&<F::Declaration as FactoryDeclaration>::builder())
    }
}

/// The label that finds exactly `builder`'s node: its key, else its name.
pub(crate) fn builder_label(builder: &NodeBuilder) -> Label {
    builder
        .key_label()
        .cloned()
        .unwrap_or_else(|| builder.name_label().clone())
}

impl NodeBuilder {
    /// The node runs after `target`: a function item (plain, `#[system]` or
    /// `#[factory]`),
    /// checked by the compiler, or anything [`after`](NodeBuilder::after)
    /// takes.
    pub fn after_node<M>(self, target: impl OrderTarget<M>) -> Self {
        self.after(target.order_label())
    }

    /// The node runs before `target` (see [`after_node`](NodeBuilder::after_node)).
    pub fn before_node<M>(self, target: impl OrderTarget<M>) -> Self {
        self.before(target.order_label())
    }
}

impl NodeSpec {
    /// The node runs after `target` (see [`NodeBuilder::after_node`]):
    /// `world.add_system(draw.into_system().after_node(update))`.
    pub fn after_node<M>(mut self, target: impl OrderTarget<M>) -> Self {
        self.builder = self.builder.after(target.order_label());
        self
    }

    /// The node runs before `target` (see [`NodeBuilder::after_node`]).
    pub fn before_node<M>(mut self, target: impl OrderTarget<M>) -> Self {
        self.builder = self.builder.before(target.order_label());
        self
    }

    /// The label that finds exactly this node: its key, else its name.
    pub(crate) fn order_label(&self) -> Label {
        builder_label(&self.builder)
    }
}

/// Systems registered in order, each after the one before it
/// (`world.add_chain((read, think, act))`, Bevy's `(a, b, c).chain()`): a
/// tuple of up to 12 of anything [`World::add_system`] takes.
pub trait IntoChain<Marker> {
    /// The registrations, each ordered after the previous one.
    #[track_caller]
    fn into_chain(self) -> Vec<NodeSpec>;
}

/// Marks the [`IntoChain`] impls: one marker per element.
#[derive(Debug)]
pub struct ChainMarker<M>(PhantomData<M>);

macro_rules! impl_chain {
    ($($system:ident $marker:ident $index:tt),*) => {
        impl<$($system: IntoSystem<$marker>, $marker),*> IntoChain<ChainMarker<($($marker,)*)>>
            for ($($system,)*)
        {
            #[track_caller]
            fn into_chain(self) -> Vec<NodeSpec> {
                let mut specs: Vec<NodeSpec> = Vec::new();
                $(
                    let spec = self.$index.into_system();
                    let spec = match specs.last() {
                        Some(previous) => spec.after_node(previous.order_label()),
                        None => spec,
                    };
                    specs.push(spec);
                )*
                specs
            }
        }
    };
}

impl_chain!(S0 M0 0);
impl_chain!(S0 M0 0, S1 M1 1);
impl_chain!(S0 M0 0, S1 M1 1, S2 M2 2);
impl_chain!(S0 M0 0, S1 M1 1, S2 M2 2, S3 M3 3);
impl_chain!(S0 M0 0, S1 M1 1, S2 M2 2, S3 M3 3, S4 M4 4);
impl_chain!(S0 M0 0, S1 M1 1, S2 M2 2, S3 M3 3, S4 M4 4, S5 M5 5);
impl_chain!(S0 M0 0, S1 M1 1, S2 M2 2, S3 M3 3, S4 M4 4, S5 M5 5, S6 M6 6);
impl_chain!(S0 M0 0, S1 M1 1, S2 M2 2, S3 M3 3, S4 M4 4, S5 M5 5, S6 M6 6, S7 M7 7);
impl_chain!(S0 M0 0, S1 M1 1, S2 M2 2, S3 M3 3, S4 M4 4, S5 M5 5, S6 M6 6, S7 M7 7, S8 M8 8);
impl_chain!(S0 M0 0, S1 M1 1, S2 M2 2, S3 M3 3, S4 M4 4, S5 M5 5, S6 M6 6, S7 M7 7, S8 M8 8, S9 M9 9);
impl_chain!(S0 M0 0, S1 M1 1, S2 M2 2, S3 M3 3, S4 M4 4, S5 M5 5, S6 M6 6, S7 M7 7, S8 M8 8, S9 M9 9, S10 M10 10);
impl_chain!(S0 M0 0, S1 M1 1, S2 M2 2, S3 M3 3, S4 M4 4, S5 M5 5, S6 M6 6, S7 M7 7, S8 M8 8, S9 M9 9, S10 M10 10, S11 M11 11);

impl World {
    /// Registers `systems` (a tuple of up to 12 of anything
    /// [`add_system`](World::add_system) takes), each ordered after the one
    /// before it by its instance key; returns their indices in order. A
    /// chain that meets itself (a system chained with itself, or a chain
    /// against another order) is a cycle: SL0001, naming the nodes.
    #[track_caller]
    pub fn add_chain<M>(&mut self, systems: impl IntoChain<M>) -> Vec<NodeIndex> {
        systems
            .into_chain()
            .into_iter()
            .map(|spec| self.add_system(spec))
            .collect()
    }
}

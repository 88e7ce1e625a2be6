//! Registrations before they have ids: a node's declaration plus a recipe for
//! its body, built once the world has resolved the declared services.

use std::marker::PhantomData;

use crate::node::{Label, NodeBuilder};
use crate::registry::Registry;
use crate::system::{
    BoundaryHooks, Condition, ConditionBody, ConditionFn, FactoryBody, FactoryFn, NodeBody,
    SystemBody, SystemFn,
};
use crate::world::World;
use crate::world::batch::BatchDriver;
use crate::world::context::{Context, ContextBody};
use crate::world::lifecycle::NodeHooks;
use crate::world::node::WholeWorldBody;

/// Makes a node's body once its services have ids in the world's registry.
type BodyRecipe = Box<dyn FnOnce(&mut Registry, &mut BoundaryHooks) -> Box<dyn NodeBody> + Send>;

/// Makes a run condition once its services have ids.
type ConditionRecipe =
    Box<dyn FnOnce(&mut Registry, &mut BoundaryHooks) -> Box<dyn ConditionBody> + Send>;

/// Makes a batch processor's or parallel query's driver once its services
/// have ids.
pub(crate) type BatchRecipe = Box<dyn FnOnce(&mut Registry) -> Box<dyn BatchDriver> + Send>;

/// What a registered node runs.
pub(crate) enum SpecBody {
    /// A system's or factory's body (a function, a closure, a context body).
    Node(BodyRecipe),
    /// A batch processor or parallel query: slices fanned out over the pool.
    Batch(BatchRecipe),
    /// A whole-world system, run by the world itself between the parts of
    /// its plan.
    WholeWorld(WholeWorldBody),
}

/// A node ready to register: its declaration and how to build its body.
///
/// A node that produces something (a return value, an [`Out`](crate::Out) or
/// [`Next`](crate::Next) parameter) is a factory: it is skipped in iterations
/// where none of its inputs changed since its last run. Anything else is a
/// system and runs every iteration.
///
/// Made by [`NodeBuilder::system`], [`NodeBuilder::factory`],
/// [`NodeBuilder::run`], [`NodeBuilder::world`],
/// [`NodeBuilder::batch_processor`], [`NodeBuilder::par_query`], or from a
/// plain function through [`IntoSystem`] /
/// [`IntoFactory`].
pub struct NodeSpec {
    pub(crate) builder: NodeBuilder,
    pub(crate) body: SpecBody,
    pub(crate) conditions: Vec<ConditionRecipe>,
    /// Named after a closure's source location rather than by the user: a
    /// second registration from the same place gets a numbered name instead
    /// of colliding (SL0004 is kept for real duplicates).
    pub(crate) unnamed_closure: bool,
    /// `on_create` / `on_destroy`, when given.
    pub(crate) hooks: Option<Box<NodeHooks>>,
    /// The node's second point, its commit (see [`NodeSpec::commit`]):
    /// registered with it, named and keyed after it when registered.
    pub(crate) commit: Option<Box<NodeSpec>>,
}

impl NodeSpec {
    pub(crate) fn new(builder: NodeBuilder, body: SpecBody) -> Self {
        Self {
            builder,
            body,
            conditions: Vec::new(),
            unnamed_closure: false,
            hooks: None,
            commit: None,
        }
    }

    /// Gives the node a second point in the schedule, its commit
    /// (reference 003's `Instanced`, "one signature, two points"): the
    /// node's body takes its inputs beside every other reader of them, and
    /// `commit` runs later, after the body and after every node that
    /// appends ([`Append<T>`](crate::Append)) to a buffer the commit gates
    /// (`&mut AppendBuffer<T>`, which it drains). One registration, two
    /// vertices in the plan: `name` and `name@commit` (key `key@commit`),
    /// with the node's group, phase, stage, set, cadence, schedule and
    /// `order(n)` (one declaration: the commit is never its node's
    /// duplicate order, SL0005), pinned to the main thread when the node
    /// is ([`NodeBuilder::pinned`], a `NonSend` parameter of the node, or a
    /// pinned group: [`Plan::is_pinned`](crate::Plan::is_pinned) holds for
    /// both points, and both run on the thread that runs the iteration).
    /// Removing or disabling the node does the same to its commit.
    ///
    /// Each point passes the declaration gate on its own: one point may not
    /// append to and gate one buffer (SL0009), while the body may append to
    /// the buffer its commit drains. A second `commit` replaces the first.
    pub fn commit<M: 'static, F: SystemFn<M>>(mut self, commit: F) -> Self {
        self.commit = Some(Box::new(NodeBuilder::new("").system(commit)));
        self
    }

    /// Registers the node under the instance key `key` (the same function
    /// or `#[system]` registered twice needs a second key; SL0004 otherwise).
    pub fn key(mut self, key: impl Into<Label>) -> Self {
        self.builder = self.builder.key(key);
        self
    }

    /// Runs the node in `schedule` (as [`NodeBuilder::in_schedule`]).
    pub fn in_schedule(mut self, schedule: impl Into<crate::organise::Schedule>) -> Self {
        self.builder = self.builder.in_schedule(schedule);
        self
    }

    /// Runs `hook` when the node is created: the first time it joins a
    /// plan, in creation order (see [`NodeBuilder::create_after`]), between
    /// iterations, with exclusive access to the services the node declares
    /// (read or write any of them through the [`Context`]).
    pub fn on_create(mut self, hook: impl FnMut(&mut Context<'_>) + Send + 'static) -> Self {
        self.hooks.get_or_insert_default().on_create = Some(Box::new(hook));
        self
    }

    /// Runs `hook` when the node is destroyed: when it is removed
    /// ([`World::remove_node`](crate::World::remove_node)) or the world is
    /// dropped, in reverse of the order nodes were actually created.
    pub fn on_destroy(mut self, hook: impl FnMut(&mut Context<'_>) + Send + 'static) -> Self {
        self.hooks.get_or_insert_default().on_destroy = Some(Box::new(hook));
        self
    }

    /// Runs the node only in iterations where `condition` holds. The condition
    /// only reads (its `&T` parameters join the node's access set as shared),
    /// and is evaluated once, when the node is ready; `false` skips the body
    /// and leaves a factory's change cursor where it was. Several conditions
    /// must all hold.
    ///
    /// On a batch processor or parallel query
    /// ([`NodeBuilder::batch_processor`], [`NodeBuilder::par_query`]) the
    /// condition is evaluated once for the whole node, on the thread that
    /// runs it, before anything is sliced; `false` runs nothing of it (no
    /// `before_update`, no slice, no `after_update`: the buffer is left as it
    /// is, and a parallel query's change cursor does not move).
    ///
    /// On a whole-world system ([`NodeBuilder::world`]) the world evaluates
    /// it once, on its own thread, when the system is due; `false` skips
    /// the body.
    pub fn run_if<M: 'static, C: ConditionFn<M>>(mut self, condition: C) -> Self {
        self.builder = self.builder.declaring_condition(C::declare);
        self.conditions.push(Box::new(move |registry, hooks| {
            Box::new(Condition {
                ids: C::resolve(registry, hooks),
                function: condition,
                _marker: PhantomData,
            })
        }));
        self
    }
}

impl std::fmt::Debug for NodeSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NodeSpec")
            .field("builder", &self.builder)
            .finish_non_exhaustive()
    }
}

/// The last path segment of a path without generics: `game::ai::think` -> `think`.
fn last_segment(path: &str) -> &str {
    let without_generics = path.split('<').next().unwrap_or(path);
    without_generics.rsplit("::").next().unwrap_or(path)
}

/// The name of a node made from the function `F` with no name given: a
/// function item's own name (`game::ai::think` -> `think`), or for a closure,
/// the function it was written in and where (`setup::{closure}@src/main.rs:12:9`),
/// since every closure's type name ends in the same `{{closure}}`. With it,
/// a function item's instance key: its qualified path (`game::ai::think`),
/// so two functions of one name in different modules are two nodes.
#[track_caller]
pub(crate) fn function_name<F>() -> (Label, Option<Label>, bool) {
    let full = std::any::type_name::<F>();
    match full.find("::{{closure}}") {
        None => (
            Label::Borrowed(last_segment(full)),
            Some(Label::Borrowed(full)),
            false,
        ),
        Some(at) => {
            let parent = last_segment(&full[..at]);
            let location = std::panic::Location::caller();
            let name = format!(
                "{parent}::{{closure}}@{}:{}:{}",
                location.file(),
                location.line(),
                location.column()
            );
            (Label::Owned(name), None, true)
        }
    }
}

/// A spec for `F` under its [`function_name`].
#[track_caller]
fn unnamed<F>(make: impl FnOnce(NodeBuilder) -> NodeSpec) -> NodeSpec {
    let (name, key, closure) = function_name::<F>();
    let node = NodeBuilder::new(name);
    let mut spec = make(match key {
        Some(key) => node.key(key),
        None => node,
    });
    spec.unnamed_closure = closure;
    spec
}

impl NodeBuilder {
    /// Pairs this declaration with a system function; the function's
    /// parameters add their accesses (`&T` shared, `&mut T` gated).
    pub fn system<M: 'static, F: SystemFn<M>>(self, function: F) -> NodeSpec {
        NodeSpec::new(
            self.declaring_parameters(F::declare),
            SpecBody::Node(Box::new(move |registry, hooks| {
                Box::new(SystemBody {
                    ids: F::resolve(registry, hooks),
                    function,
                    _marker: PhantomData,
                })
            })),
        )
    }

    /// Pairs this declaration with a factory function: its parameters are its
    /// inputs, its return value the service it produces. It is skipped in
    /// iterations where none of its inputs changed since its last run.
    pub fn factory<M: 'static, F: FactoryFn<M>>(self, function: F) -> NodeSpec {
        NodeSpec::new(
            self.declaring_parameters(F::declare),
            SpecBody::Node(Box::new(move |registry, hooks| {
                Box::new(FactoryBody {
                    ids: F::resolve(registry, hooks),
                    output: registry.resolve::<F::Out>(),
                    function,
                    _marker: PhantomData,
                })
            })),
        )
    }

    /// Pairs this declaration with a whole-world system: an exclusive node
    /// whose body takes `&mut World` and runs alone, on the thread that
    /// runs the iteration, after every node before it in plan order and
    /// before every node after it (applying spawns, saving the game). What
    /// it registers joins the next plan.
    pub fn world(self, body: impl FnMut(&mut World) + Send + 'static) -> NodeSpec {
        NodeSpec::new(self.whole_world(), SpecBody::WholeWorld(Box::new(body)))
    }

    /// Pairs this declaration with a closure that reaches services through a
    /// [`Context`], which hands out only what was declared:
    /// `NodeBuilder::new("hud").reads::<Hp>().run(|cx| { let hp = cx.read::<Hp>(); })`.
    pub fn run(self, body: impl FnMut(&mut Context<'_>) + Send + 'static) -> NodeSpec {
        NodeSpec::new(
            self,
            SpecBody::Node(Box::new(move |_, _| Box::new(ContextBody::new(body)))),
        )
    }
}

/// Anything [`World::add_system`](crate::World::add_system) accepts: a
/// [`NodeSpec`], or a plain function whose name becomes the node's name.
pub trait IntoSystem<Marker> {
    /// The registration.
    #[track_caller]
    fn into_system(self) -> NodeSpec;

    /// The registration with a second point, its commit:
    /// `world.add_system(instanced.commit(commit_instances))` (see
    /// [`NodeSpec::commit`]).
    #[track_caller]
    fn commit<M: 'static, F: SystemFn<M>>(self, commit: F) -> NodeSpec
    where
        Self: Sized,
    {
        self.into_system().commit(commit)
    }
}

impl IntoSystem<()> for NodeSpec {
    #[track_caller]
    fn into_system(self) -> NodeSpec {
        self
    }
}

/// Marks the [`IntoSystem`] impl for plain functions.
#[derive(Debug)]
pub struct FunctionMarker<M>(PhantomData<M>);

/// Marks the [`IntoSystem`] impl for functions taking `&mut World`.
#[derive(Debug)]
pub struct WholeWorldMarker;

impl<F: FnMut(&mut World) + Send + 'static> IntoSystem<WholeWorldMarker> for F {
    #[track_caller]
    fn into_system(self) -> NodeSpec {
        unnamed::<F>(|node| node.world(self))
    }
}

impl<M: 'static, F: SystemFn<M>> IntoSystem<FunctionMarker<M>> for F {
    #[track_caller]
    fn into_system(self) -> NodeSpec {
        unnamed::<F>(|node| node.system(self))
    }
}

/// Anything [`World::add_factory`](crate::World::add_factory) accepts.
pub trait IntoFactory<Marker> {
    /// The registration.
    #[track_caller]
    fn into_factory(self) -> NodeSpec;
}

impl IntoFactory<()> for NodeSpec {
    #[track_caller]
    fn into_factory(self) -> NodeSpec {
        self
    }
}

impl<M: 'static, F: FactoryFn<M>> IntoFactory<FunctionMarker<M>> for F {
    #[track_caller]
    fn into_factory(self) -> NodeSpec {
        unnamed::<F>(|node| node.factory(self))
    }
}

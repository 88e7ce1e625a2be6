//! Node descriptors: what the planner knows about a node.
//!
//! A [`NodeDescriptor`] carries a node's name, instance key, access set and
//! ordering attributes, with every service already resolved to its id. It holds
//! no runnable body: the executor pairs a body with each descriptor by its
//! registration index.

use std::borrow::Cow;

use crate::access::{AccessKind, AccessSet, INLINE_ACCESSES, ServiceId, SmallList};
use crate::organise::{Cadence, Gated, Phase, Placement, Schedule, SiblingOrder};
use crate::registry::Registry;

/// A node or marker name as written by the user: borrowed when static, owned
/// when built at run time (the CLI).
pub type Label = Cow<'static, str>;

/// A service named in a builder, before it has an id: a type (as the function
/// that resolves it, one pointer), or the index of a name in the builder's
/// `names`.
#[derive(Debug, Clone, Copy)]
enum ServiceKey {
    Type(fn(&mut Registry) -> ServiceId),
    Name(u32),
}

/// What a builder rarely carries, boxed so the builder stays small (it is
/// moved by value through every call of the chain).
#[derive(Debug, Clone, Default)]
struct Rare {
    key: Option<Label>,
    /// Services named by name rather than type (tools, the CLI).
    names: Vec<Label>,
    /// Group, phase, stage, set, cadence, schedule and orders.
    placement: Option<Box<Placement>>,
    /// The body takes `&mut World` (an exclusive node run alone between
    /// the parts of its plan).
    whole_world: bool,
    /// One of the world's own nodes (the scheduling factories): exempt from
    /// organisation a user declares (stages are not required of it).
    builtin: bool,
    /// Never reported by the spike watch (reference 003's `ISpikeExempt`).
    spike_exempt: bool,
    /// Runs only on the thread that runs the iteration.
    pinned: bool,
    /// A group's, stage's or set's run condition node: what it gates.
    gated: Option<Gated>,
    /// Silenced ambiguities (see [`Silenced`]).
    silenced: Silenced,
}

/// The ambiguities (SL0008) a node or group silences on purpose: with the
/// nodes or groups named, or with every node. A silenced pair is still
/// reported, as silenced and by whom, never dropped.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Silenced {
    /// The nodes (by name or key) and groups named by `ambiguous_with`, each
    /// once, in declaration order.
    pub with: Vec<Label>,
    /// Whether `ambiguous_with_all` was called.
    pub all: bool,
}

impl Silenced {
    /// Adds `target`; naming one twice is a no-op (it is silenced once).
    pub(crate) fn add(&mut self, target: Label) {
        if !self.with.contains(&target) {
            self.with.push(target);
        }
    }

    /// Whether nothing is silenced.
    pub fn is_empty(&self) -> bool {
        self.with.is_empty() && !self.all
    }
}

/// Where one declaration of a node's access came from, so that a node naming
/// a service twice can be told which two declarations disagree.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum DeclaredBy {
    /// A call on the builder (`.reads::<T>()`, `.gates::<T>()`, ...).
    Builder,
    /// The parameter at this position (from 0) of the node's function.
    Parameter(u8),
    /// A factory's return value.
    ReturnValue,
    /// Parameter `at` (from 0) of a run condition: conditions run before
    /// the body, never beside it, so they may read what the body writes;
    /// `part` tells the node's conditions (and a combined condition's
    /// operands, called one after the other) apart, and the parameters of
    /// one part must not alias each other, as a body's must not.
    Condition {
        /// Which condition (or operand) of the node, in declaration order.
        part: u16,
        /// The parameter's position in it.
        at: u8,
    },
    /// The runtime itself (a batch processor gating its buffer).
    Runtime,
}

impl DeclaredBy {
    /// Whether this declaration hands the body a borrow or output handle of
    /// its own (which must not overlap another such handle).
    fn hands_out(self) -> bool {
        matches!(self, DeclaredBy::Parameter(_) | DeclaredBy::ReturnValue)
    }

    /// Whether the handles of `self` and `other` are alive at once: both
    /// the body's, or both one condition's (its parameters are fetched
    /// together for one call).
    fn live_together(self, other: DeclaredBy) -> bool {
        match (self, other) {
            (DeclaredBy::Condition { part, .. }, DeclaredBy::Condition { part: other, .. }) => {
                part == other
            }
            _ => self.hands_out() && other.hands_out(),
        }
    }
}

/// One declaration of access: how, and who declared it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Declaration {
    /// Shared, gated or produced.
    pub kind: AccessKind,
    /// The builder call, parameter or return value that declared it.
    pub by: DeclaredBy,
}

impl std::fmt::Display for Declaration {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let how = match self.kind {
            AccessKind::Shared => "shared (`&T`)",
            AccessKind::Gated => "gated (`&mut T`)",
            AccessKind::Produced => "produced (`Out<T>`, `Next<T>` or a return value)",
            AccessKind::Appended => "appended (`Append<T>`)",
        };
        match self.by {
            DeclaredBy::Builder => write!(f, "{how} by a builder call"),
            DeclaredBy::Parameter(at) => write!(f, "{how} by parameter {}", u32::from(at) + 1),
            DeclaredBy::ReturnValue => write!(f, "{how} by the return value"),
            DeclaredBy::Condition { at, .. } => {
                write!(
                    f,
                    "{how} by parameter {} of a run condition",
                    u32::from(at) + 1
                )
            }
            DeclaredBy::Runtime => write!(f, "{how} by the runtime"),
        }
    }
}

/// The one gate every declaration passes: whether two declarations of one
/// service by one node would alias while its body runs.
///
/// **The invariant.** While a body runs, it holds at most one handle on any
/// service or component lane that writes (`&mut T`, `Out<T>`, `Next<T>`, a
/// `&mut C` column of a query), and no other handle on that lane beside it;
/// any number of shared handles (`&T`, `&C`) may coexist. Every unsafe
/// fetch that turns a declared lane into a reference (system parameters,
/// query items, parallel query slices, message cursors) relies on it.
///
/// It is decided here and nowhere else:
/// - two declarations that each hand the body a handle (a function's
///   parameters, each lane of a query counting as its own handle, and a
///   factory's return value) alias unless both are shared (reading or
///   appending, which pushes through `&self`): a factory that
///   consumes what it produces also contradicts the producer-before-consumer
///   rule, and a node that steps a value to the next iteration gates it or
///   produces `Next<T>`;
/// - builder calls hand out nothing and merge (gating subsumes reading): a
///   [`Context`](crate::Context) lends one service at a time under the borrow
///   checker, and a call restating a parameter adds no borrow. So do a run
///   condition's parameters (it runs before the body, never beside it) and
///   the runtime's own declarations.
///
/// Every registration path (typed functions and closures, [`NodeBuilder`],
/// parallel query nodes, batch processors, run conditions, nodes registered
/// through [`Commands`](crate::Commands)) builds its node through
/// [`NodeBuilder::build`], which lists what this refuses; the planner then
/// refuses the node (SL0009) before its body can run. Queries made outside
/// any node (`World::query`) pass their lanes through the same function.
pub(crate) fn would_alias(first: Declaration, second: Declaration) -> bool {
    // An appender's handle only pushes through `&self`: beside a reader or
    // another appender it aliases nothing (two `Append<T>` of one buffer are
    // one declaration); beside a gate of its buffer it would push while the
    // gate drains.
    let shares = |kind| matches!(kind, AccessKind::Shared | AccessKind::Appended);
    let both_shared = shares(first.kind) && shares(second.kind);
    first.by.live_together(second.by) && !both_shared
}

/// A node that names one service twice in ways that would alias: two
/// parameters (or a parameter and the return value) of `service`, not both
/// shared. The planner refuses such a node (SL0009) before its body can run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct DeclaredTwice {
    /// The service named twice.
    pub service: ServiceId,
    /// The earlier declaration.
    pub first: Declaration,
    /// The later one.
    pub second: Declaration,
}

/// One access declared on a builder.
#[derive(Debug, Clone, Copy)]
struct Declared {
    key: ServiceKey,
    kind: AccessKind,
    by: DeclaredBy,
    /// Declared by an optional parameter (`Option<&T>`, `Option<&mut T>`):
    /// the same lane, but a world that holds no `T` is not an error.
    optional: bool,
}

impl Declared {
    fn declaration(&self) -> Declaration {
        Declaration {
            kind: self.kind,
            by: self.by,
        }
    }
}

impl Default for Declared {
    fn default() -> Self {
        Self {
            key: ServiceKey::Name(0),
            kind: AccessKind::Shared,
            by: DeclaredBy::Builder,
            optional: false,
        }
    }
}

/// Who the builder's next declarations come from (see [`DeclaredBy`]).
#[derive(Debug, Clone, Copy)]
enum Declaring {
    Builder,
    /// A function's parameters; the next one has this position.
    Parameters(u8),
    /// A run condition's (or operand's) parameters: its part, and the next
    /// parameter's position.
    Condition {
        part: u16,
        at: u8,
    },
}

/// Builds a [`NodeDescriptor`]:
/// `NodeBuilder::new("hud").reads::<Hp>().gates::<Score>().after("spawner")`.
#[derive(Debug, Clone)]
pub struct NodeBuilder {
    name: Label,
    accesses: SmallList<Declared, INLINE_ACCESSES>,
    rare: Option<Box<Rare>>,
    exclusive: bool,
    declaring: Declaring,
    /// How many condition parts were declared so far (numbering the next).
    condition_parts: u16,
    after: Vec<Label>,
    before: Vec<Label>,
    create_after: Vec<Label>,
    create_before: Vec<Label>,
}

impl NodeBuilder {
    /// A node called `name` that touches nothing and follows nothing.
    pub fn new(name: impl Into<Label>) -> Self {
        Self {
            name: name.into(),
            accesses: SmallList::default(),
            rare: None,
            exclusive: false,
            declaring: Declaring::Builder,
            condition_parts: 0,
            after: Vec::new(),
            before: Vec::new(),
            create_after: Vec::new(),
            create_before: Vec::new(),
        }
    }

    /// The node's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    pub(crate) fn name_label(&self) -> &Label {
        &self.name
    }

    /// Renames the node (keeping an explicit key).
    pub(crate) fn set_name(&mut self, name: Label) {
        self.name = name;
    }

    /// Who declares the next access, advancing the parameter position.
    fn next_declarer(&mut self) -> DeclaredBy {
        match &mut self.declaring {
            Declaring::Builder => DeclaredBy::Builder,
            Declaring::Condition { part, at } => {
                let by = DeclaredBy::Condition {
                    part: *part,
                    at: *at,
                };
                *at = at.saturating_add(1);
                by
            }
            Declaring::Parameters(at) => {
                let by = DeclaredBy::Parameter(*at);
                *at = at.saturating_add(1);
                by
            }
        }
    }

    fn push(&mut self, key: ServiceKey, kind: AccessKind, by: DeclaredBy) {
        self.accesses.push(Declared {
            key,
            kind,
            by,
            optional: false,
        });
    }

    fn typed<T: 'static>(mut self, kind: AccessKind) -> Self {
        let by = self.next_declarer();
        self.push(ServiceKey::Type(|r| r.resolve::<T>()), kind, by);
        self
    }

    fn named(mut self, name: impl Into<Label>, kind: AccessKind) -> Self {
        let names = &mut self.rare.get_or_insert_default().names;
        let index = u32::try_from(names.len()).expect("too many named services");
        names.push(name.into());
        let by = self.next_declarer();
        self.push(ServiceKey::Name(index), kind, by);
        self
    }

    /// Runs `declare` (a function's parameter declarations) with each access
    /// attributed to its parameter position.
    pub(crate) fn declaring_parameters(mut self, declare: impl FnOnce(Self) -> Self) -> Self {
        self.declaring = Declaring::Parameters(0);
        let mut node = declare(self);
        node.declaring = Declaring::Builder;
        node
    }

    /// A parameter that declares nothing (a [`Local`](crate::Local)): the
    /// parameters after it keep their positions in messages.
    pub(crate) fn skips_parameter(mut self) -> Self {
        let _ = self.next_declarer();
        self
    }

    /// Runs `declare` (an optional parameter's declarations: `Option<&T>`,
    /// `Option<&mut T>`) and marks what it declares optional. The lanes are
    /// exactly those `declare` adds, judged by the gate like any other; only
    /// the check that the world holds the service before the first run
    /// ([`IterationError::MissingServices`](crate::IterationError::MissingServices))
    /// skips a service the node declares optionally and nowhere else.
    pub fn optionally(mut self, declare: impl FnOnce(Self) -> Self) -> Self {
        let from = self.accesses.as_slice().len();
        self = declare(self);
        for declared in &mut self.accesses.as_mut_slice()[from..] {
            declared.optional = true;
        }
        self
    }

    /// Runs `declare` (a run condition's declarations) with each access
    /// attributed to a condition.
    pub(crate) fn declaring_condition(mut self, declare: impl FnOnce(Self) -> Self) -> Self {
        self.declaring = Declaring::Condition { part: 0, at: 0 };
        self = self.condition_operand();
        let mut node = declare(self);
        node.declaring = Declaring::Builder;
        node
    }

    /// Starts the next part of the condition being declared: a combined
    /// condition's operand, fetched for a call of its own, whose parameters
    /// may name what another operand's name.
    pub(crate) fn condition_operand(mut self) -> Self {
        if let Declaring::Condition { .. } = self.declaring {
            let part = self.condition_parts;
            self.condition_parts = part.saturating_add(1);
            self.declaring = Declaring::Condition { part, at: 0 };
        }
        self
    }

    /// A factory's return value: the node produces `T`.
    pub(crate) fn returns<T: 'static>(mut self) -> Self {
        let key = ServiceKey::Type(|r| r.resolve::<T>());
        self.push(key, AccessKind::Produced, DeclaredBy::ReturnValue);
        self
    }

    /// Shared access the runtime adds itself (a query's read of the entity
    /// store, a `Commands` parameter's queue): the only declarations that
    /// may name the runtime's own services.
    pub(crate) fn runtime_reads<T: 'static>(mut self) -> Self {
        let key = ServiceKey::Type(|r| r.resolve::<T>());
        self.push(key, AccessKind::Shared, DeclaredBy::Runtime);
        self
    }

    /// Gated access the runtime adds itself (a batch processor's buffer);
    /// merges with whatever the user declared.
    pub(crate) fn runtime_gates<T: 'static>(mut self) -> Self {
        let key = ServiceKey::Type(|r| r.resolve::<T>());
        self.push(key, AccessKind::Gated, DeclaredBy::Runtime);
        self
    }

    /// Shared access to `T` (`&T`).
    pub fn reads<T: 'static>(self) -> Self {
        self.typed::<T>(AccessKind::Shared)
    }

    /// Gated access to `T` (`&mut T`).
    pub fn gates<T: 'static>(self) -> Self {
        self.typed::<T>(AccessKind::Gated)
    }

    /// The node produces `T`: every consumer of `T` runs after it.
    pub fn produces<T: 'static>(self) -> Self {
        self.typed::<T>(AccessKind::Produced)
    }

    /// The node appends to `T` (reference 003's recorders): shared access
    /// in `T`'s lane, and the node runs before every gate of `T` (the
    /// commit that drains it), wherever either is registered.
    pub fn appends<T: 'static>(self) -> Self {
        self.typed::<T>(AccessKind::Appended)
    }

    /// Shared access to the service called `name`.
    pub fn reads_named(self, name: impl Into<Label>) -> Self {
        self.named(name, AccessKind::Shared)
    }

    /// Gated access to the service called `name`.
    pub fn gates_named(self, name: impl Into<Label>) -> Self {
        self.named(name, AccessKind::Gated)
    }

    /// The node produces the service called `name`.
    pub fn produces_named(self, name: impl Into<Label>) -> Self {
        self.named(name, AccessKind::Produced)
    }

    /// The node appends to the service called `name` (see
    /// [`appends`](Self::appends)).
    pub fn appends_named(self, name: impl Into<Label>) -> Self {
        self.named(name, AccessKind::Appended)
    }

    /// Pins the node to the main thread: the thread that calls
    /// [`World::run_iteration`](crate::World::run_iteration) or
    /// [`World::update`](crate::World::update) runs it (worker 0), on every
    /// executor, while the other threads go on with the rest. Its order is
    /// unchanged. Nodes taking [`NonSend`](crate::NonSend) or
    /// [`NonSendMut`](crate::NonSendMut) are pinned already. A two-point
    /// node ([`NodeSpec::commit`](crate::NodeSpec::commit)) is pinned at
    /// both points. A pinned batch processor
    /// ([`batch_processor`](Self::batch_processor)) runs `before_update`
    /// and `after_update` on that thread too; only its slices, like a
    /// parallel query's, run on the pool.
    pub fn pinned(mut self) -> Self {
        self.rare.get_or_insert_default().pinned = true;
        self
    }

    /// Shared access to the non-`Send` service `T` (what a
    /// [`NonSend<T>`](crate::NonSend) parameter declares, read through
    /// [`Context::read_non_send`](crate::Context::read_non_send)); pins the node.
    pub fn reads_non_send<T: 'static>(self) -> Self {
        self.non_send::<T>(AccessKind::Shared)
    }

    /// Gated access to the non-`Send` service `T` (what a
    /// [`NonSendMut<T>`](crate::NonSendMut) parameter declares, written
    /// through [`Context::write_non_send`](crate::Context::write_non_send));
    /// pins the node.
    pub fn gates_non_send<T: 'static>(self) -> Self {
        self.non_send::<T>(AccessKind::Gated)
    }

    fn non_send<T: 'static>(mut self, kind: AccessKind) -> Self {
        let by = self.next_declarer();
        let key = ServiceKey::Type(|r| r.resolve_non_send::<T>());
        self.push(key, kind, by);
        self.pinned()
    }

    /// The node needs the whole world: it conflicts with every other node.
    pub fn exclusive(mut self) -> Self {
        self.exclusive = true;
        self
    }

    /// One of the world's own nodes.
    pub(crate) fn builtin(mut self) -> Self {
        self.rare.get_or_insert_default().builtin = true;
        self
    }

    /// An exclusive node whose body takes `&mut World`.
    pub(crate) fn whole_world(mut self) -> Self {
        self.exclusive = true;
        self.rare.get_or_insert_default().whole_world = true;
        self
    }

    /// The spike watch never reports the node (reference 003's
    /// `ISpikeExempt`): for a node whose time is not its own, such as a
    /// commit that waits on vsync. A two-point node's commit
    /// ([`NodeSpec::commit`](crate::NodeSpec::commit)) is exempt with it.
    /// See [`SpikeWatch`](crate::SpikeWatch).
    pub fn spike_exempt(mut self) -> Self {
        self.rare.get_or_insert_default().spike_exempt = true;
        self
    }

    /// Silences the ambiguity (SL0008) between this node and `target`, a
    /// node (by name or key) or a group (every node in it, at any depth):
    /// their order by registration is what you want. The pair is still
    /// reported, at [`Level::Silenced`](crate::plan::Level::Silenced),
    /// naming who silenced it. Naming one target twice is a no-op; a name
    /// that matches no node or group is SL0002.
    pub fn ambiguous_with(mut self, target: impl Into<Label>) -> Self {
        self.rare
            .get_or_insert_default()
            .silenced
            .add(target.into());
        self
    }

    /// Silences every ambiguity (SL0008) this node is part of (bevy's
    /// `ambiguous_with_all`); each is still reported as silenced.
    pub fn ambiguous_with_all(mut self) -> Self {
        self.rare.get_or_insert_default().silenced.all = true;
        self
    }

    /// The node is the run condition of its group, stage or set.
    pub(crate) fn gating(mut self, gated: Gated) -> Self {
        self.rare.get_or_insert_default().gated = Some(gated);
        self
    }

    /// Whether [`spike_exempt`](Self::spike_exempt) was called.
    pub(crate) fn is_marked_spike_exempt(&self) -> bool {
        self.rare.as_ref().is_some_and(|rare| rare.spike_exempt)
    }

    /// The node runs after the node (by instance key or name) or marker `target`.
    pub fn after(mut self, target: impl Into<Label>) -> Self {
        self.after.push(target.into());
        self
    }

    /// The node runs before the node (by instance key or name) or marker `target`.
    pub fn before(mut self, target: impl Into<Label>) -> Self {
        self.before.push(target.into());
        self
    }

    /// The instance key, for the same function registered twice (defaults to the name).
    pub fn key(mut self, key: impl Into<Label>) -> Self {
        self.rare.get_or_insert_default().key = Some(key.into());
        self
    }

    /// The node's `on_create` runs after `target`'s (reference 004's
    /// `CreateAfter`: the same rules as update order, without groups or
    /// first/last).
    pub fn create_after(mut self, target: impl Into<Label>) -> Self {
        self.create_after.push(target.into());
        self
    }

    /// The node's `on_create` runs before `target`'s.
    pub fn create_before(mut self, target: impl Into<Label>) -> Self {
        self.create_before.push(target.into());
        self
    }

    fn placement_mut(&mut self) -> &mut Placement {
        self.rare
            .get_or_insert_default()
            .placement
            .get_or_insert_default()
    }

    /// Makes the node a child of the group `group` (see [`Group`](crate::Group)).
    pub fn in_group(mut self, group: impl Into<Label>) -> Self {
        self.placement_mut().group = Some(group.into());
        self
    }

    /// Puts the node before every sibling (child of the same group) that is
    /// not `order_first`.
    pub fn order_first(mut self) -> Self {
        self.placement_mut().sibling = Some(SiblingOrder::First);
        self
    }

    /// Puts the node after every sibling that is not `order_last`.
    pub fn order_last(mut self) -> Self {
        self.placement_mut().sibling = Some(SiblingOrder::Last);
        self
    }

    /// Puts the node in `phase` (see [`Phase`]).
    pub fn phase(mut self, phase: Phase) -> Self {
        self.placement_mut().phase = Some(phase);
        self
    }

    /// Makes the node a member of the stage `stage` (declared with
    /// [`World::add_stage`](crate::World::add_stage)).
    pub fn in_stage(mut self, stage: impl Into<Label>) -> Self {
        self.placement_mut().stage = Some(stage.into());
        self
    }

    /// Makes the node a member of the set `set` (declared with
    /// [`World::add_set`](crate::World::add_set)).
    pub fn in_set(mut self, set: impl Into<Label>) -> Self {
        self.placement_mut().set = Some(set.into());
        self
    }

    /// Runs the node on `cadence` (the variable one by default).
    pub fn cadence(mut self, cadence: Cadence) -> Self {
        self.placement_mut().cadence = cadence;
        self
    }

    /// Runs the node in `schedule` ([`Schedule::Update`] by default): a
    /// [`Schedule`], or a state's schedule
    /// ([`OnEnter`](crate::state::OnEnter), [`OnExit`](crate::state::OnExit),
    /// [`OnTransition`](crate::state::OnTransition)).
    pub fn in_schedule(mut self, schedule: impl Into<Schedule>) -> Self {
        self.placement_mut().schedule = schedule.into();
        self
    }

    /// Breaks ties among nodes that nothing else orders: lower runs first
    /// (a node without an order counts as 0), before registration order
    /// decides. Never overrides a dependency. Reference 002: every Run
    /// declaration requires a unique Order, so two nodes of one plan (one
    /// schedule and cadence) with the same order are refused (SL0005); a
    /// two-point node's commit shares its node's order and is not a second
    /// declaration of it.
    pub fn order(mut self, order: i32) -> Self {
        self.placement_mut().order = Some(order);
        self
    }

    /// The instance key if one was set.
    pub(crate) fn key_label(&self) -> Option<&Label> {
        self.rare.as_ref().and_then(|rare| rare.key.as_ref())
    }

    /// Takes `other`'s group, phase, stage, set, cadence, schedule and
    /// orders (a commit point shares its node's).
    pub(crate) fn place_like(&mut self, other: &NodeBuilder) {
        if let Some(placement) = other.rare.as_ref().and_then(|rare| rare.placement.clone()) {
            self.rare.get_or_insert_default().placement = Some(placement);
        }
    }

    /// The node's organisation so far.
    pub fn placement(&self) -> &Placement {
        self.rare
            .as_ref()
            .and_then(|rare| rare.placement.as_deref())
            .unwrap_or(Placement::DEFAULT)
    }

    /// Resolves every service to its id in `registry` (assigning ids to
    /// services not seen before).
    pub fn build(self, registry: &mut Registry) -> NodeDescriptor {
        let mut access = AccessSet::new();
        access.set_exclusive(self.exclusive);
        let rare = self.rare.map(|rare| *rare).unwrap_or_default();
        let Rare {
            key,
            names,
            placement,
            whole_world,
            builtin,
            spike_exempt,
            pinned,
            gated,
            silenced,
        } = rare;
        let declared = self.accesses.as_slice();
        let mut ids = SmallList::<u32, INLINE_ACCESSES>::default();
        let mut runtime_only = Vec::new();
        let mut optional = Vec::new();
        for declaration in declared {
            let id = match declaration.key {
                ServiceKey::Type(resolve) => resolve(registry),
                ServiceKey::Name(index) => registry.resolve_name(&names[index as usize]),
            };
            access.add(id, declaration.kind);
            ids.push(id.0);
            if declared_by_user_on_runtime_service(registry, builtin, declaration.by, id) {
                runtime_only.push(RuntimeOnly {
                    service: id,
                    declaration: declaration.declaration(),
                });
            }
        }
        // A service is optional only when no declaration requires it.
        for (declaration, &id) in declared.iter().zip(ids.as_slice()) {
            let required = |other: (&Declared, &u32)| *other.1 == id && !other.0.optional;
            let id = ServiceId(id);
            if declaration.optional
                && !optional.contains(&id)
                && !declared.iter().zip(ids.as_slice()).any(required)
            {
                optional.push(id);
            }
        }
        NodeDescriptor {
            key: key.unwrap_or_else(|| self.name.clone()),
            name: self.name,
            conflicts: declared_twice(declared, ids.as_slice()),
            optional,
            runtime_only,
            access,
            after: self.after,
            before: self.before,
            placement,
            create_after: self.create_after,
            create_before: self.create_before,
            state: NodeState::Enabled,
            whole_world,
            builtin,
            point: Point::Only,
            spike_exempt,
            pinned,
            gated,
            silenced,
        }
    }
}

/// The second half of the gate: whether a declaration names one of the
/// runtime's own services (the entity store, the command queue, the
/// scheduling state) from user code. Holding `&Entities` would reach every
/// component's column beside nodes that write them on lanes the node never
/// declared, so only the runtime's own declarations (a query's read of the
/// store, beside the lanes it declares) and the world's built-in nodes may.
fn declared_by_user_on_runtime_service(
    registry: &Registry,
    builtin: bool,
    by: DeclaredBy,
    id: ServiceId,
) -> bool {
    !builtin && by != DeclaredBy::Runtime && registry.table().is_private(id)
}

/// A user declaration of one of the runtime's own services: the planner
/// refuses the node (SL0010) before its body can run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct RuntimeOnly {
    /// The runtime's service.
    pub service: ServiceId,
    /// How the node named it.
    pub declaration: Declaration,
}

/// Every service that `declared` names twice in ways that would alias while
/// the body runs (at least one of the two not shared), once per service.
/// A node declares a handful of accesses, so the pairwise scan is cheap.
fn declared_twice(declared: &[Declared], ids: &[u32]) -> Vec<DeclaredTwice> {
    let mut found: Vec<DeclaredTwice> = Vec::new();
    for (i, first) in declared.iter().enumerate() {
        for (j, second) in declared.iter().enumerate().skip(i + 1) {
            let aliases =
                ids[i] == ids[j] && would_alias(first.declaration(), second.declaration());
            let service = ServiceId(ids[i]);
            if aliases && !found.iter().any(|twice| twice.service == service) {
                found.push(DeclaredTwice {
                    service,
                    first: first.declaration(),
                    second: second.declaration(),
                });
            }
        }
    }
    found
}

/// A registered node as the planner sees it, services resolved to ids.
#[derive(Debug, Clone)]
pub struct NodeDescriptor {
    name: Label,
    key: Label,
    access: AccessSet,
    /// Services the node names twice in aliasing ways (empty for a sound
    /// node); the planner refuses the node while any is listed.
    conflicts: Vec<DeclaredTwice>,
    /// The runtime's own services the node's user declarations name (empty
    /// for a sound node); refused as the above.
    runtime_only: Vec<RuntimeOnly>,
    /// Services the node declares only through optional parameters
    /// (`Option<&T>`): a world need not hold them.
    optional: Vec<ServiceId>,
    after: Vec<Label>,
    before: Vec<Label>,
    /// `None` for the default placement (most nodes of a flat world).
    placement: Option<Box<Placement>>,
    create_after: Vec<Label>,
    create_before: Vec<Label>,
    state: NodeState,
    whole_world: bool,
    builtin: bool,
    point: Point,
    spike_exempt: bool,
    pinned: bool,
    gated: Option<Gated>,
    silenced: Silenced,
}

/// Which point of its registration a node is: reference 003's `Instanced`
/// is one registration with two points in the schedule, its body (beside
/// the other readers) and its commit (after every appender).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Point {
    /// A node with one point.
    Only,
    /// The first point of a two-point node, whose commit is `commit`.
    Body {
        /// The second point.
        commit: crate::plan::NodeIndex,
    },
    /// The commit (second point) of the node `of`.
    Commit {
        /// The first point.
        of: crate::plan::NodeIndex,
    },
}

/// Whether a registered node takes part in plans.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NodeState {
    /// Planned and run.
    Enabled,
    /// Kept (its key, its creation) but left out of plans until enabled.
    Disabled,
    /// Gone: its index is never reused, its key is free, and orderings that
    /// name it are dropped.
    Removed,
}

impl NodeDescriptor {
    /// The node's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    pub(crate) fn name_label(&self) -> &Label {
        &self.name
    }

    /// The instance key (the name unless set): unique among a world's nodes.
    pub fn key(&self) -> &str {
        &self.key
    }

    /// What the node touches.
    pub fn access(&self) -> &AccessSet {
        &self.access
    }

    /// The runtime's own services the node's declarations name (see
    /// [`RuntimeOnly`]); a node listing any is refused by the planner.
    pub fn runtime_only(&self) -> &[RuntimeOnly] {
        &self.runtime_only
    }

    /// The services the node names twice in ways that would alias (see
    /// [`DeclaredTwice`]); a node listing any is refused by the planner.
    pub fn declared_twice(&self) -> &[DeclaredTwice] {
        &self.conflicts
    }

    /// Whether the node declares `service` only through optional parameters
    /// (`Option<&T>`, `Option<&mut T>`), so that a world holding no value
    /// for it still runs the node (the parameter is `None`).
    pub fn is_optional(&self, service: ServiceId) -> bool {
        self.optional.contains(&service)
    }

    /// Nodes or markers this node runs after.
    pub fn after(&self) -> &[Label] {
        &self.after
    }

    /// Nodes or markers this node runs before.
    pub fn before(&self) -> &[Label] {
        &self.before
    }

    /// The node's group, phase, stage, set, cadence, schedule and orders.
    pub fn placement(&self) -> &Placement {
        self.placement.as_deref().unwrap_or(Placement::DEFAULT)
    }

    /// Nodes whose `on_create` runs before this one's.
    pub fn create_after(&self) -> &[Label] {
        &self.create_after
    }

    /// Nodes whose `on_create` runs after this one's.
    pub fn create_before(&self) -> &[Label] {
        &self.create_before
    }

    /// Whether the node's body takes `&mut World` (an exclusive node the
    /// world runs alone, between the parts of its plan).
    pub fn needs_world(&self) -> bool {
        self.whole_world
    }

    /// Whether this is one of the world's own nodes (`sluice::plan`,
    /// `sluice::execution`), which no stage declaration applies to.
    pub fn is_builtin(&self) -> bool {
        self.builtin
    }

    /// Whether the node itself is marked [`spike_exempt`](NodeBuilder::spike_exempt)
    /// (a group it is in may exempt it too: [`Group::spike_exempt`](crate::Group::spike_exempt)).
    pub fn is_spike_exempt(&self) -> bool {
        self.spike_exempt
    }

    /// Whether the node itself asks to run on the main thread
    /// ([`NodeBuilder::pinned`], or a `NonSend` parameter); a pinned group
    /// pins it too ([`Plan::is_pinned`](crate::Plan::is_pinned) says both).
    pub fn is_pinned(&self) -> bool {
        self.pinned
    }

    /// Whether the node is the run condition of a group, stage or set
    /// ([`World::run_group_if`](crate::World::run_group_if) and its kin):
    /// evaluated once per iteration, before every member.
    pub fn is_group_condition(&self) -> bool {
        self.gated.is_some()
    }

    pub(crate) fn gated(&self) -> Option<Gated> {
        self.gated
    }

    /// The ambiguities the node silences on purpose.
    pub fn silenced(&self) -> &Silenced {
        &self.silenced
    }

    /// Enabled, disabled or removed.
    pub fn state(&self) -> NodeState {
        self.state
    }

    /// Whether plans include the node.
    pub fn is_enabled(&self) -> bool {
        self.state == NodeState::Enabled
    }

    pub(crate) fn set_state(&mut self, state: NodeState) {
        self.state = state;
    }

    /// Which point of its registration the node is (see [`Point`]).
    pub fn point(&self) -> Point {
        self.point
    }

    pub(crate) fn set_point(&mut self, point: Point) {
        self.point = point;
    }
}

/// A label nodes order themselves against; never run (`PreUpdate`, `Update`).
///
/// Markers may be ordered among themselves:
/// `Marker::new("Update").after("PreUpdate")`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Marker {
    label: Label,
    after: Vec<Label>,
    before: Vec<Label>,
}

impl Marker {
    /// A marker called `label`.
    pub fn new(label: impl Into<Label>) -> Self {
        Self {
            label: label.into(),
            after: Vec::new(),
            before: Vec::new(),
        }
    }

    /// The marker comes after the node or marker `target`.
    pub fn after(mut self, target: impl Into<Label>) -> Self {
        self.after.push(target.into());
        self
    }

    /// The marker comes before the node or marker `target`.
    pub fn before(mut self, target: impl Into<Label>) -> Self {
        self.before.push(target.into());
        self
    }

    /// The marker's label.
    pub fn label(&self) -> &str {
        &self.label
    }

    pub(crate) fn label_cow(&self) -> &Label {
        &self.label
    }

    /// What the marker comes after.
    pub fn after_targets(&self) -> &[Label] {
        &self.after
    }

    /// What the marker comes before.
    pub fn before_targets(&self) -> &[Label] {
        &self.before
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::access::{AccessKind, ServiceId};

    struct Hp;
    struct Score;

    #[test]
    fn builder_resolves_types_and_names_to_the_same_ids() {
        let mut registry = Registry::new();
        let hud = NodeBuilder::new("hud")
            .reads::<Hp>()
            .gates::<Score>()
            .reads_named("Armor")
            .after("spawner")
            .before("render")
            .key("hud#2")
            .build(&mut registry);
        assert_eq!(hud.name(), "hud");
        assert_eq!(hud.key(), "hud#2");
        assert_eq!(hud.after(), ["spawner"]);
        assert_eq!(hud.before(), ["render"]);
        let hp = registry.id_of::<Hp>().unwrap();
        let score = registry.id_of::<Score>().unwrap();
        let armor = registry.id_by_name("Armor").unwrap();
        assert_eq!(hud.access().access_to(hp), Some(AccessKind::Shared));
        assert_eq!(hud.access().access_to(score), Some(AccessKind::Gated));
        assert_eq!(hud.access().access_to(armor), Some(AccessKind::Shared));
        assert_eq!(hud.access().access_to(ServiceId(9)), None);
        let other = NodeBuilder::new("poison")
            .gates::<Hp>()
            .build(&mut registry);
        assert_eq!(other.key(), "poison");
        assert_eq!(other.access().gated().collect::<Vec<_>>(), vec![hp]);
        assert!(other.access().conflicts(hud.access()));
    }
}

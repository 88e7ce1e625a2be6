//! What can go wrong running an iteration.

use std::any::Any;
use std::fmt;

use crate::entity::EntityError;
use crate::exec::NodeFailure;
use crate::plan::PlanErrors;

/// A node whose body panicked: the engine's [`NodeFailure`] (index and
/// payload) with the node's name.
///
/// A node that fails contributes nothing it recorded for the boundary: its
/// commands, its messages (sent with [`Publish`](crate::Publish), or with a
/// [`MessageSender`](crate::MessageSender) of the same world from inside the
/// node) and its `Next<T>` values are dropped unlanded, whether its body or
/// one of its slices panicked, on every executor. What it wrote in place
/// (through `&mut`, `Out<T>`) stays.
pub struct NodePanic {
    /// The failed nodes' names, the first failure's first (never empty).
    nodes: Vec<String>,
    failure: NodeFailure,
    boundary: Vec<BoundaryFailure>,
}

impl NodePanic {
    /// `nodes`: every failed node's name, the first failure's first.
    pub(crate) fn new(
        nodes: Vec<String>,
        failure: NodeFailure,
        boundary: Vec<BoundaryFailure>,
    ) -> Self {
        debug_assert!(!nodes.is_empty(), "a failure names its node");
        Self {
            nodes,
            failure,
            boundary,
        }
    }

    /// Every node that failed in the iteration, each once, the one
    /// [`node`](Self::node) names first. More than one only when other
    /// nodes were already running when the first failed (a parallel
    /// executor), and also failed; none of them contributed anything it
    /// recorded.
    pub fn nodes(&self) -> &[String] {
        &self.nodes
    }

    /// What also panicked at the boundary after the node did (empty almost
    /// always); every other change still landed.
    pub fn boundary_failures(&self) -> &[BoundaryFailure] {
        &self.boundary
    }

    /// The name of the node that panicked (the first one, when several
    /// did).
    pub fn node(&self) -> &str {
        self.nodes.first().map_or("", String::as_str)
    }

    /// The panic's payload, as `catch_unwind` returned it (a refused
    /// command's: the error's message).
    pub fn payload(&self) -> &(dyn Any + Send) {
        self.failure.payload()
    }

    /// The payload, to resume the panic with `std::panic::resume_unwind`.
    pub fn into_payload(self) -> Box<dyn Any + Send> {
        self.failure.into_payload()
    }

    /// The panic message, when the payload is a string.
    pub fn message(&self) -> Option<&str> {
        self.failure.message()
    }
}

impl fmt::Debug for NodePanic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("NodePanic")
            .field("node", &self.node())
            .field("message", &self.message())
            .finish()
    }
}

impl fmt::Display for NodePanic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.message() {
            Some(message) => write!(f, "node `{}` panicked: {message}", self.node())?,
            None => write!(f, "node `{}` panicked", self.node())?,
        }
        for failure in &self.boundary {
            write!(f, "\n{failure}")?;
        }
        Ok(())
    }
}

/// What was being done at an iteration boundary when something panicked.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BoundaryStep {
    /// Landing a command recorded through [`Commands`](crate::Commands):
    /// its position in record order (from 0) and what it does.
    Command {
        /// The command's position in record order, from 0.
        index: usize,
        /// What the command does (`insert \`game::Marker\``).
        what: String,
    },
    /// Swapping a `Next<T>` value into the service `T` (named), or dropping
    /// the value a failed node produced.
    NextSwap {
        /// The service the value replaced.
        service: String,
    },
    /// Dropping, unlanded, a command a failed node recorded: the `Drop` of
    /// a value it carried.
    Discard {
        /// The node that recorded it.
        node: String,
        /// What the command would have done (`insert \`game::Marker\``).
        what: String,
    },
    /// Dropping read messages of the type `service` holds
    /// ([`Messages`](crate::message::Messages)), or those a failed node
    /// sent: a message's `Drop`.
    Messages {
        /// The `Messages<T>` service.
        service: String,
    },
    /// A node's `on_create` hook (the node counts as not created).
    Create {
        /// The node's name.
        node: String,
    },
    /// A node's `on_destroy` hook.
    Destroy {
        /// The node's name.
        node: String,
    },
    /// A component hook (`on_add`, ...) panicked; what it recorded was
    /// dropped, the change that fired it landed.
    Hook {
        /// The hook's name (its closure's type).
        hook: String,
        /// The component's type name.
        component: String,
        /// Which hook.
        event: crate::world::observe::Lifecycle,
        /// The entity whose component it is.
        entity: crate::entity::Entity,
    },
    /// An observer panicked or could not run (a service it needs is
    /// missing); what it recorded was dropped.
    Observer {
        /// The observer's name.
        observer: String,
        /// The event's type name.
        event: String,
    },
    /// Hooks and observers triggered each other deeper than the world's
    /// bound ([`World::set_observer_depth_limit`](crate::World::set_observer_depth_limit)):
    /// the changes past it were dropped, everything before them landed.
    ObserverChain {
        /// The changes delivered, outermost first, then the first change
        /// refused.
        chain: Vec<String>,
    },
    /// An event propagated through too many targets (see
    /// [`MAX_PROPAGATION`](crate::world::observe::MAX_PROPAGATION)), or
    /// its `Drop` panicked after delivery.
    Propagation {
        /// The event's type name.
        event: String,
        /// How many targets it went on to.
        hops: u32,
    },
}

impl fmt::Display for BoundaryStep {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BoundaryStep::Command { index, what } => write!(f, "command #{index} ({what})"),
            BoundaryStep::NextSwap { service } => write!(f, "the `Next` swap into `{service}`"),
            BoundaryStep::Discard { node, what } => {
                write!(f, "dropping failed node `{node}`'s command ({what})")
            }
            BoundaryStep::Messages { service } => {
                write!(f, "dropping read messages of `{service}`")
            }
            BoundaryStep::Create { node } => write!(f, "`{node}`'s on_create"),
            BoundaryStep::Destroy { node } => write!(f, "`{node}`'s on_destroy"),
            BoundaryStep::Hook {
                hook,
                component,
                event,
                entity,
            } => write!(
                f,
                "the {} hook `{hook}` of `{component}` at {entity}",
                event.hook_name()
            ),
            BoundaryStep::Observer { observer, event } => {
                write!(f, "observer `{observer}` of `{event}`")
            }
            BoundaryStep::ObserverChain { chain } => {
                write!(f, "the observer chain {}", chain.join(" -> "))
            }
            BoundaryStep::Propagation { event, hops } => {
                write!(f, "propagating `{event}` ({hops} targets)")
            }
        }
    }
}

/// A panic at an iteration boundary (a value's `Drop` while a command landed
/// or a `Next<T>` value swapped in), or an entity command the world refused
/// (its entity despawned meanwhile, or frozen). A panic is caught: the
/// step's own change still landed (the new value is in place before the old
/// one is dropped); a refused command changed nothing; and every other
/// recorded change landed in record order.
pub struct BoundaryFailure {
    step: BoundaryStep,
    payload: Box<dyn Any + Send>,
    refused: Option<EntityError>,
}

impl BoundaryFailure {
    pub(crate) fn new(step: BoundaryStep, payload: Box<dyn Any + Send>) -> Self {
        Self {
            step,
            payload,
            refused: None,
        }
    }

    pub(crate) fn refused(step: BoundaryStep, error: EntityError) -> Self {
        Self {
            step,
            payload: Box::new(error.to_string()),
            refused: Some(error),
        }
    }

    /// Why the world refused the command, when it was refused rather than
    /// panicking.
    pub fn refused_because(&self) -> Option<&EntityError> {
        self.refused.as_ref()
    }

    /// What was being done.
    pub fn step(&self) -> &BoundaryStep {
        &self.step
    }

    /// The panic's payload, as `catch_unwind` returned it (a refused
    /// command's: the error's message).
    pub fn payload(&self) -> &(dyn Any + Send) {
        &*self.payload
    }

    /// The panic message, when the payload is a string.
    pub fn message(&self) -> Option<&str> {
        crate::exec::panic_message(&*self.payload)
    }
}

impl fmt::Debug for BoundaryFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BoundaryFailure")
            .field("step", &self.step)
            .field("message", &self.message())
            .finish()
    }
}

impl fmt::Display for BoundaryFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = if self.refused.is_some() {
            "was refused"
        } else {
            "panicked"
        };
        write!(f, "{} {what} at the iteration boundary", self.step)?;
        match self.message() {
            Some(message) => write!(f, ": {message}"),
            None => Ok(()),
        }
    }
}

/// A node that touches a service the world does not hold and nothing produces.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MissingService {
    /// The node's name.
    pub node: String,
    /// The service's type name.
    pub service: String,
    /// Whether the node gates the service (`&mut`) rather than reading it.
    pub gated: bool,
}

impl fmt::Display for MissingService {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let verb = if self.gated { "gates" } else { "reads" };
        // `&Commands` in a signature is a reference to a service of that
        // type, which no world holds: the parameter is `Commands<'_>`.
        if self
            .service
            .starts_with("sluice::world::commands::Commands")
        {
            return write!(
                f,
                "node `{}` takes `&Commands` (or `&mut Commands`), which would be a service: \
                 take `Commands<'_>` by value to record changes",
                self.node
            );
        }
        write!(
            f,
            "node `{}` {verb} `{}`, which the world does not hold and no factory produces: insert it with `World::insert` or register a factory that produces it",
            self.node, self.service
        )
    }
}

/// Why [`World::run_iteration`](crate::World::run_iteration) failed.
#[non_exhaustive]
#[derive(Debug)]
pub enum IterationError {
    /// The registrations do not form a valid plan; nothing ran.
    Plan(PlanErrors),
    /// Nodes touch services the world does not hold and nothing produces;
    /// every such access is listed. Nothing ran.
    MissingServices(Vec<MissingService>),
    /// A node's body (or one of its slices) panicked. Nothing new started
    /// after it; nodes already running finished. The failed node
    /// contributed nothing it recorded for the boundary; every node that
    /// completed contributed everything. The world is consistent and the
    /// next iteration runs normally.
    NodePanicked(NodePanic),
    /// Every node ran, but something panicked at the boundary after them (a
    /// value's `Drop`); each failure is listed. The rest of the boundary
    /// landed: every other command in record order, every other swap.
    Boundary(Vec<BoundaryFailure>),
    /// [`World::run_schedule`](crate::World::run_schedule) named a schedule
    /// no node is in. Nothing ran.
    UnknownSchedule(String),
    /// [`World::run_schedule`](crate::World::run_schedule) named `Update`,
    /// the schedule [`World::update`](crate::World::update) (both cadences)
    /// and [`World::run_iteration`](crate::World::run_iteration) (the
    /// variable one) run; call one of those. Nothing ran.
    UpdateSchedule,
    /// A whole-world system, or a custom command landing at the boundary
    /// ([`Commands::queue`](crate::Commands::queue)), asked its world to run
    /// an iteration, an update or a schedule; it may change the world, not
    /// run it. Nothing ran.
    Reentrant,
    /// The world holds a non-`Send` service
    /// ([`World::insert_non_send`](crate::World::insert_non_send)) that
    /// belongs to another thread: its iterations run on that thread (the
    /// main thread), where its pinned nodes reach the value. Nothing ran.
    WrongThread {
        /// The service (the first found).
        service: String,
    },
    /// A plugin waits for a requirement nobody added, or plugins require
    /// each other in a cycle ([`World::finish_plugins`](crate::World::finish_plugins)).
    /// Nothing ran.
    Plugin(crate::plugin::PluginError),
    /// The state point failed: a state went through too many transitions
    /// or a schedule run for a transition failed. The frame before it
    /// landed whole ([`crate::state`]).
    State(crate::state::StateError),
}

impl fmt::Display for IterationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            IterationError::Plan(errors) => write!(f, "the plan could not be built:\n{errors}"),
            IterationError::MissingServices(missing) => {
                for (index, service) in missing.iter().enumerate() {
                    if index > 0 {
                        writeln!(f)?;
                    }
                    write!(f, "{service}")?;
                }
                Ok(())
            }
            IterationError::NodePanicked(panic) => panic.fmt(f),
            IterationError::Boundary(failures) => {
                for (index, failure) in failures.iter().enumerate() {
                    if index > 0 {
                        writeln!(f)?;
                    }
                    write!(f, "{failure}")?;
                }
                Ok(())
            }
            IterationError::WrongThread { service } => write!(
                f,
                "the non-Send service `{service}` belongs to another thread: run the world's \
                 iterations on the thread that inserted it (the main thread)"
            ),
            IterationError::Reentrant => f.write_str(
                "a whole-world system or a custom command asked its world to run; it may \
                 change the world (register, insert, remove), and the world runs what it \
                 registers next",
            ),
            IterationError::UnknownSchedule(name) if name == "Startup" => f.write_str(
                "no node is in the schedule `Startup`; register nodes with \
                 `.in_schedule(Schedule::Startup)`",
            ),
            IterationError::UnknownSchedule(name) => write!(
                f,
                "no node is in the schedule `{name}`; register nodes with \
                 `.in_schedule(Schedule::named({name:?}))`"
            ),
            IterationError::Plugin(error) => error.fmt(f),
            IterationError::State(error) => error.fmt(f),
            IterationError::UpdateSchedule => f.write_str(
                "`Update` is the schedule every update runs: call `World::update` (both \
                 cadences) or `World::run_iteration` (the variable cadence), not `run_schedule`",
            ),
        }
    }
}

impl std::error::Error for IterationError {}

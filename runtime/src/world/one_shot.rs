//! One-shot systems: a system run on the world between iterations, once
//! ([`World::run_system_once`]) or by id ([`World::register_system`],
//! [`World::run_system`], [`Commands::run_system`](crate::Commands::run_system)).
//!
//! A registered system is a node of the graph that no plan holds (it is
//! disabled): its parameters are declared and resolved as any node's, the
//! one gate judges its declarations (SL0009, SL0010, refused here as a
//! plan would refuse them), and its [`Local`](crate::Local) state lives in
//! its cell across runs. It runs on the calling thread with the world to
//! itself; what its commands change lands right after its body, in record
//! order, and nothing of it lands if the body panics. What it sends with
//! `Publish` joins the log when it returns, after everything sent before
//! (dropped if it panicked); what it sends through a `MessageSender`
//! joins at the next boundary, as from any thread.

use std::fmt;
use std::panic::{self, AssertUnwindSafe};

use crate::node::NodeState;
use crate::plan::{NodeIndex, PlanErrors};
use crate::system::{NodeEnv, ServiceCells};
use crate::world::node::WorldNode;
use crate::world::spec::IntoSystem;
use crate::world::{BoundaryFailure, CommandQueue, MissingService, World};

/// Where the first one-shot run after a boundary stands in the order
/// records land: after every node of a plan (a plan has fewer than 2^31
/// nodes); each later run until the boundary stands one further.
const FIRST_ONE_SHOT_RANK: u32 = 1 << 31;

/// A system registered with [`World::register_system`], run by
/// [`World::run_system`] until [`World::unregister_system`]. It names its
/// world's registration: another world refuses it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SystemId {
    node: NodeIndex,
    world: u64,
}

impl SystemId {
    /// The node the system is registered as.
    pub fn node(self) -> NodeIndex {
        self.node
    }
}

/// Why a one-shot system did not run, or did not run through.
#[derive(Debug)]
#[non_exhaustive]
pub enum RunSystemError {
    /// The id names no system registered with this world (another world's
    /// id, or a node added by `add_system`).
    NotRegistered(SystemId),
    /// The system was unregistered.
    Removed {
        /// The system's name.
        system: String,
    },
    /// The system asked to run itself while running (from a whole-world
    /// body, or a command it recorded).
    Recursive {
        /// The system's name.
        system: String,
    },
    /// The one gate refuses its declarations, as a plan would (SL0009,
    /// SL0010); its body never ran.
    Refused {
        /// The system's name.
        system: String,
        /// The gate's verdicts.
        errors: PlanErrors,
    },
    /// Services its parameters need are held by nothing (its body never
    /// ran).
    MissingServices(Vec<MissingService>),
    /// It cannot run as a one-shot system: a batch processor or parallel
    /// query (whose slices need a plan), or a node that produces something
    /// (`Out<T>`, `Next<T>`, a return value: a factory).
    Unsupported {
        /// The system's name.
        system: String,
        /// What it is.
        what: &'static str,
    },
    /// Its body or one of its run conditions panicked: nothing it recorded
    /// lands; what it wrote in place stays.
    Panicked {
        /// The system's name.
        system: String,
        /// The panic's message.
        message: String,
    },
    /// It ran, and some of the commands it recorded failed to land (a
    /// refused entity command, a custom command that panicked); the others
    /// landed.
    CommandsFailed {
        /// The system's name.
        system: String,
        /// What failed, in record order.
        failures: Vec<BoundaryFailure>,
    },
}

impl fmt::Display for RunSystemError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NotRegistered(id) => write!(
                f,
                "no one-shot system is registered as node {} of this world",
                id.node.index()
            ),
            Self::Removed { system } => write!(f, "one-shot system `{system}` was unregistered"),
            Self::Recursive { system } => {
                write!(
                    f,
                    "one-shot system `{system}` asked to run itself while running"
                )
            }
            Self::Refused { system, errors } => {
                write!(
                    f,
                    "one-shot system `{system}` is refused by the gate: {errors}"
                )
            }
            Self::MissingServices(missing) => {
                write!(f, "a one-shot system's services are missing:")?;
                for missing in missing {
                    write!(f, " {missing};")?;
                }
                Ok(())
            }
            Self::Unsupported { system, what } => {
                write!(
                    f,
                    "`{system}` cannot run as a one-shot system: it is {what}"
                )
            }
            Self::Panicked { system, message } => {
                write!(f, "one-shot system `{system}` panicked: {message}")
            }
            Self::CommandsFailed { system, failures } => {
                write!(f, "commands of one-shot system `{system}` failed:")?;
                for failure in failures {
                    write!(f, " {failure};")?;
                }
                Ok(())
            }
        }
    }
}

impl std::error::Error for RunSystemError {}

/// What an observer's run may leave behind, known from its declarations.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ObserverShape {
    /// It takes `Commands`: its runs record into a queue of their own.
    pub(crate) records: bool,
    /// It touches a message service (`Publish`, `Append`): what it sent is
    /// gathered after each run.
    pub(crate) sends: bool,
}

/// The world's one-shot registrations.
#[derive(Debug, Default)]
pub(crate) struct OneShots {
    /// Registered and not unregistered (node indices).
    registered: Vec<u32>,
    /// Those of them the gate let through once (a node's declarations
    /// never change, so it is asked once).
    passed_gate: Vec<u32>,
    /// Running now, outermost first.
    running: Vec<u32>,
    /// Runs since the last boundary: the next run's rank is
    /// `FIRST_ONE_SHOT_RANK + runs`.
    runs: u32,
    /// A spare command queue (a `CommandQueue`, boxed as the world's slot
    /// holds it), swapped in while a one-shot system runs: two pointers
    /// move, not the queue.
    spare: Option<Box<dyn std::any::Any + Send + Sync>>,
}

impl OneShots {
    /// The boundary: runs count afresh.
    pub(crate) fn at_boundary(&mut self) {
        self.runs = 0;
    }
}

impl World {
    /// Registers `system` to run by id ([`run_system`](World::run_system))
    /// between iterations, as often as asked; its [`Local`](crate::Local)
    /// state is kept across runs. It is a node no plan holds: registering
    /// it does not change the plan.
    ///
    /// ```
    /// use sluice::prelude::*;
    ///
    /// #[derive(Default)]
    /// struct Score(u32);
    ///
    /// fn bonus(mut calls: Local<u32>, score: &mut Score) {
    ///     *calls += 1;
    ///     score.0 += *calls;
    /// }
    ///
    /// let mut world = World::new();
    /// world.insert(Score::default());
    /// let id = world.register_system(bonus);
    /// world.run_system(id)?;
    /// world.run_system(id)?;
    /// assert_eq!(world.get::<Score>().unwrap().0, 1 + 2);
    /// world.unregister_system(id)?;
    /// assert!(world.run_system(id).is_err());
    /// # Ok::<(), sluice::RunSystemError>(())
    /// ```
    #[track_caller]
    pub fn register_system<M>(&mut self, system: impl IntoSystem<M>) -> SystemId {
        let mut spec = system.into_system();
        // A key of its own: the same function may be registered twice, or
        // be a node of the plan too.
        let key = format!(
            "{}@one_shot#{}",
            spec.builder.name(),
            self.graph.nodes().len()
        );
        spec.builder = spec.builder.key(key);
        let index = self.add_spec(spec);
        self.graph.set_state(index, NodeState::Disabled);
        let node = u32::try_from(index.index()).expect("fewer than 2^32 nodes");
        self.one_shots.registered.push(node);
        SystemId {
            node: index,
            world: self.id,
        }
    }

    /// Unregisters a system: its id is refused from now on, and its
    /// `Local` state is dropped.
    ///
    /// # Errors
    /// [`RunSystemError::NotRegistered`] or [`RunSystemError::Removed`];
    /// [`RunSystemError::Recursive`] while it runs; a panic of its hooks'
    /// `on_destroy` as [`RunSystemError::CommandsFailed`].
    pub fn unregister_system(&mut self, id: SystemId) -> Result<(), RunSystemError> {
        let node = self.one_shot_node(id)?;
        let system = self.graph.nodes()[node as usize].name().to_owned();
        if self.one_shots.running.contains(&node) {
            return Err(RunSystemError::Recursive { system });
        }
        self.one_shots.registered.retain(|&n| n != node);
        self.one_shots.passed_gate.retain(|&n| n != node);
        self.remove_node(id.node)
            .map_err(|error| RunSystemError::CommandsFailed {
                system,
                failures: match error {
                    crate::IterationError::Boundary(failures) => failures,
                    _ => Vec::new(),
                },
            })
    }

    /// Runs `system` once on the world, now: registered, run and
    /// unregistered (its `Local` state starts from `Default`). Its
    /// parameters are declared as for [`add_system`](World::add_system)
    /// and judged by the same gate; what its commands change lands before
    /// this returns.
    ///
    /// ```
    /// use sluice::prelude::*;
    ///
    /// struct Health(u32);
    ///
    /// let mut world = World::new();
    /// world.spawn((Health(10),));
    /// world.run_system_once(|mut query: Query<&mut Health>, commands: Commands<'_>| {
    ///     for mut health in query.iter_mut() {
    ///         health.0 -= 1;
    ///     }
    ///     commands.spawn((Health(5),));
    /// })?;
    /// let total: u32 = world.query::<&Health>().iter().map(|h| h.0).sum();
    /// assert_eq!(total, 9 + 5);
    /// # Ok::<(), sluice::RunSystemError>(())
    /// ```
    ///
    /// # Errors
    /// As [`run_system`](World::run_system).
    #[track_caller]
    pub fn run_system_once<M>(&mut self, system: impl IntoSystem<M>) -> Result<(), RunSystemError> {
        let id = self.register_system(system);
        let ran = self.run_system(id);
        let removed = self.unregister_system(id);
        ran.and(removed)
    }

    /// Runs the registered system `id` now, on this thread, with the world
    /// to itself: its run conditions, then its body; what its commands
    /// change lands right after, in record order. A system whose run
    /// condition is false (or whose `Single` / `Populated` parameter finds
    /// no match) is skipped, which is `Ok`.
    ///
    /// # Errors
    /// An id this world does not know, or one unregistered; the system
    /// running itself; a declaration the gate refuses; a service it needs
    /// that nothing holds; a kind of node that cannot run alone; a panic
    /// (nothing it recorded lands, the world stays usable); commands of it
    /// that failed to land. Each names the system.
    pub fn run_system(&mut self, id: SystemId) -> Result<(), RunSystemError> {
        let node = self.one_shot_node(id)?;
        let index = node as usize;
        if self.one_shots.running.contains(&node) {
            return Err(RunSystemError::Recursive {
                system: self.system_name(node),
            });
        }
        self.check_one_shot(index)?;
        self.one_shots.running.push(node);
        let ran = self.run_one_shot(node, true);
        self.one_shots.running.pop();
        ran
    }

    /// The name of node `node` (made only for an error).
    fn system_name(&self, node: u32) -> String {
        self.graph.nodes()[node as usize].name().to_owned()
    }

    /// The node `id` names, if it is a registered one-shot system here.
    fn one_shot_node(&self, id: SystemId) -> Result<u32, RunSystemError> {
        let node = u32::try_from(id.node.index()).unwrap_or(u32::MAX);
        if id.world != self.id || id.node.index() >= self.nodes.len() {
            return Err(RunSystemError::NotRegistered(id));
        }
        if self.one_shots.registered.contains(&node) {
            return Ok(node);
        }
        if self.graph.nodes()[node as usize].state() == NodeState::Removed {
            return Err(RunSystemError::Removed {
                system: self.graph.nodes()[node as usize].name().to_owned(),
            });
        }
        Err(RunSystemError::NotRegistered(id))
    }

    /// Whether the registered system `system` can run as an observer: the
    /// gate lets it through and it is a plain system (not a whole-world
    /// one, which could change entities in the middle of a change, nor a
    /// batch or factory). Its services are looked for when it runs.
    pub(super) fn check_observer(&mut self, index: usize) -> Result<(), RunSystemError> {
        match self.check_one_shot(index) {
            Ok(()) | Err(RunSystemError::MissingServices(_)) => {}
            Err(error) => return Err(error),
        }
        if matches!(self.nodes[index], WorldNode::Whole(_)) {
            return Err(RunSystemError::Unsupported {
                system: self.system_name(index as u32),
                what: "a whole-world system (an observer records structural changes as \
                       commands)",
            });
        }
        Ok(())
    }

    /// Runs the observer registered as node `node` for the event in its
    /// slot. Its gate and kind were checked when it was registered
    /// ([`check_observer`](World::check_observer)); its services are
    /// looked for now, as [`run_system`](World::run_system) does. It runs
    /// with a command queue of its own, which is kept to land after the
    /// change being delivered.
    ///
    /// `shape` is [`observer_shape`](World::observer_shape) of it, asked
    /// once at registration: one that records no commands and sends no
    /// messages runs its body alone.
    pub(super) fn run_observer_system(
        &mut self,
        node: u32,
        shape: ObserverShape,
        required: &[crate::ServiceId],
    ) -> Result<(), RunSystemError> {
        // The services it requires, listed once at registration: a few
        // slot reads. Only when one is missing is the full check made, for
        // its error.
        let registry = self.graph.registry();
        if !required
            .iter()
            .all(|&id| registry.slot(id).is_some_and(|slot| slot.value.is_some()))
        {
            self.check_services_of(node as usize)?;
        }
        // Not pushed on `one_shots.running`: an observer's body cannot
        // reach the world (whole-world observers are refused), and what it
        // records lands after it returns, so nothing can ask whether it is
        // running while it runs.
        if shape.records || shape.sends {
            self.run_one_shot(node, shape.sends)
        } else {
            self.run_quiet_observer(node)
        }
    }

    /// The services node `index` requires (declared, not optional): what
    /// [`run_observer_system`](World::run_observer_system) looks for before
    /// each run (its declarations never change, so this is asked once).
    pub(super) fn required_services(&self, index: usize) -> Box<[crate::ServiceId]> {
        let descriptor = &self.graph.view().nodes()[index];
        let access = descriptor.access();
        access
            .shared()
            .chain(access.gated())
            .filter(|&id| !descriptor.is_optional(id))
            .collect()
    }

    /// What a run of node `index` may leave to land or gather after it (its
    /// declarations never change, so this is asked once).
    pub(super) fn observer_shape(&self, index: usize) -> ObserverShape {
        let access = self.graph.view().nodes()[index].access();
        ObserverShape {
            // Only the `Commands` parameter reaches the queue, and it
            // declares it.
            records: access.access_to(self.builtin.commands).is_some(),
            sends: access
                .touches()
                .iter()
                .any(|touch| self.hooks.is_message_service(touch.service())),
        }
    }

    /// What a plan would check before running the node: the gate, the
    /// services, what kind of node it is.
    fn check_one_shot(&mut self, index: usize) -> Result<(), RunSystemError> {
        let graph = self.graph.view();
        let system = graph.nodes()[index].name();
        let node = index as u32;
        if !self.one_shots.passed_gate.contains(&node) {
            let mut verdicts = Vec::new();
            crate::plan::gate_verdicts(&graph, index, &mut verdicts);
            if !verdicts.is_empty() {
                return Err(RunSystemError::Refused {
                    system: system.to_owned(),
                    errors: PlanErrors::new(verdicts),
                });
            }
            self.one_shots.passed_gate.push(node);
        }
        let unsupported = |what| RunSystemError::Unsupported {
            system: system.to_owned(),
            what,
        };
        if matches!(self.nodes[index], WorldNode::Batch(_)) {
            return Err(unsupported("a batch processor or parallel query"));
        }
        if graph.nodes()[index].access().produced().next().is_some() {
            return Err(unsupported("a factory (it produces a value)"));
        }
        self.check_services_of(index)
    }

    /// Whether every service node `index` needs is held (or optional).
    fn check_services_of(&self, index: usize) -> Result<(), RunSystemError> {
        let graph = self.graph.view();
        let system = graph.nodes()[index].name();
        let descriptor = &graph.nodes()[index];
        let access = descriptor.access();
        let registry = self.graph.registry();
        let accesses = || {
            access
                .shared()
                .map(|id| (id, false))
                .chain(access.gated().map(|id| (id, true)))
        };
        let absent = |id| {
            registry.slot(id).is_none_or(|slot| slot.value.is_none()) && !descriptor.is_optional(id)
        };
        // Looked for first, collected only when some are missing: a run
        // allocates nothing.
        if !accesses().any(|(id, _)| absent(id)) {
            return Ok(());
        }
        let missing = accesses()
            .filter(|&(id, _)| absent(id))
            .map(|(id, gated)| MissingService {
                node: system.to_owned(),
                service: registry.table().name(id).to_owned(),
                gated,
            })
            .collect();
        Err(RunSystemError::MissingServices(missing))
    }

    /// Runs the checked one-shot system `node` with a command queue of its
    /// own, then lands what it recorded (or drops it, if it panicked).
    ///
    /// `settle`: whether what it sent is gathered after it (false only for
    /// an observer that touches no message service).
    fn run_one_shot(&mut self, node: u32, settle: bool) -> Result<(), RunSystemError> {
        let rank = FIRST_ONE_SHOT_RANK.saturating_add(self.one_shots.runs);
        self.one_shots.runs = self.one_shots.runs.saturating_add(1);
        let mut queue = self
            .one_shots
            .spare
            .take()
            .unwrap_or_else(|| Box::new(CommandQueue::default()));
        self.swap_command_queue(&mut queue);
        let ran = if matches!(self.nodes[node as usize], WorldNode::Whole(_)) {
            self.run_one_shot_whole(node)
        } else {
            self.run_one_shot_body(node, rank)
        };
        // `queue` is the world's own again; the one-shot's is back in `queue`.
        self.swap_command_queue(&mut queue);
        let mine = queue
            .downcast_mut::<CommandQueue>()
            .expect("the spare is a CommandQueue");
        // What it sent with `Publish` joins the log now, after what was sent
        // before it; if it failed, it is dropped (with what failed nodes of
        // a failed iteration sent, when run by a command at its boundary).
        let mut sent = Vec::new();
        let failed = ran.is_err();
        if failed {
            self.failed_nodes.push(node);
            self.failed_ranks.push(rank);
        }
        if settle {
            self.settle_messages(true, &mut sent);
        }
        if failed {
            self.failed_nodes.pop();
            self.failed_ranks.pop();
        }
        let result = match ran {
            Ok(()) if self.capturing() && !mine.is_empty() => {
                // An observer: what it recorded lands after the change it
                // runs for; the spare queue is replaced.
                let recorded = std::mem::replace(&mut queue, Box::new(CommandQueue::default()));
                self.capture(recorded);
                if sent.is_empty() {
                    Ok(())
                } else {
                    Err(RunSystemError::CommandsFailed {
                        system: self.system_name(node),
                        failures: sent,
                    })
                }
            }
            Ok(()) => {
                // Nothing recorded: nothing to land.
                if !mine.is_empty() {
                    self.land_one_shot_commands(mine, &mut sent);
                }
                if sent.is_empty() {
                    Ok(())
                } else {
                    Err(RunSystemError::CommandsFailed {
                        system: self.system_name(node),
                        failures: sent,
                    })
                }
            }
            Err(payload) => {
                // Nothing it recorded lands: its commands are dropped (a
                // panicking `Drop` among them is caught, as its messages'
                // above).
                let (mut commands, _) = mine.take_all();
                for command in commands.drain(..) {
                    let _ = panic::catch_unwind(AssertUnwindSafe(move || drop(command)));
                }
                Err(RunSystemError::Panicked {
                    system: self.system_name(node),
                    message: crate::exec::panic_message(&*payload)
                        .unwrap_or("a panic without a message")
                        .to_owned(),
                })
            }
        };
        self.one_shots.spare = Some(queue);
        result
    }

    /// Runs the body of the plain (not whole-world) one-shot system `node`
    /// at `rank`, catching a panic.
    fn run_one_shot_body(&mut self, node: u32, rank: u32) -> std::thread::Result<()> {
        let (graph, slots) = self.graph.parts_mut();
        let env = NodeEnv {
            cells: ServiceCells::new(slots),
            graph: &graph,
            descriptor: &graph.nodes()[node as usize],
        };
        let WorldNode::Body(cell) = &self.nodes[node as usize] else {
            unreachable!("checked: a system's body")
        };
        let world = self.id;
        // SAFETY: the world is borrowed exclusively (`&mut self`) and
        // no part of a plan runs now (between iterations, or inside a
        // whole-world system or custom command, which run alone), so
        // the node's declared accesses overlap with nothing; `cells`
        // borrow the world's slots for the whole call; only this
        // thread is inside the cell.
        panic::catch_unwind(AssertUnwindSafe(|| unsafe {
            cell.run(&env, world, node, rank);
        }))
    }

    /// Runs the observer `node` that touches neither the command queue nor
    /// a message service: nothing it does is recorded, so there is no
    /// queue to swap in, nothing to land and nothing to gather after it.
    fn run_quiet_observer(&mut self, node: u32) -> Result<(), RunSystemError> {
        let rank = FIRST_ONE_SHOT_RANK.saturating_add(self.one_shots.runs);
        self.one_shots.runs = self.one_shots.runs.saturating_add(1);
        self.run_one_shot_body(node, rank)
            .map_err(|payload| RunSystemError::Panicked {
                system: self.system_name(node),
                message: crate::exec::panic_message(&*payload)
                    .unwrap_or("a panic without a message")
                    .to_owned(),
            })
    }

    /// A whole-world one-shot system: its run conditions, then its body.
    fn run_one_shot_whole(&mut self, node: u32) -> std::thread::Result<()> {
        let Some(mut body) = self.take_due_whole_body(node)? else {
            return Ok(());
        };
        let previous = std::mem::replace(&mut self.running_whole, true);
        let result = panic::catch_unwind(AssertUnwindSafe(|| body(self)));
        self.running_whole = previous;
        if let WorldNode::Whole(cell) = &mut self.nodes[node as usize] {
            cell.get_mut().body = Some(body);
        }
        result
    }

    /// Swaps the world's command queue (the service every `Commands`
    /// records into) with `queue`, a boxed `CommandQueue`.
    fn swap_command_queue(&mut self, queue: &mut Box<dyn std::any::Any + Send + Sync>) {
        let slot = self
            .graph
            .registry_mut()
            .slot_mut(self.builtin.commands)
            .and_then(|slot| slot.value.as_mut())
            .expect("every world holds its CommandQueue");
        std::mem::swap(slot, queue);
    }

    /// The world's command queue (the service every `Commands` records
    /// into).
    pub(super) fn command_queue_mut(&mut self) -> &mut CommandQueue {
        self.graph
            .registry_mut()
            .slot_mut(self.builtin.commands)
            .and_then(|slot| slot.value.as_deref_mut()?.downcast_mut::<CommandQueue>())
            .expect("every world holds its CommandQueue")
    }
}

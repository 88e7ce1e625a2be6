//! Changes recorded by running nodes and applied at the iteration boundary:
//! the registration ledger.

use std::borrow::Cow;
use std::future::Future;

use sluice_collections::{LockOnResizeArray, PooledList};
use sync_wrapper::SyncWrapper;

use crate::access::{AccessKind, ServiceId};
use crate::entity::{Bundle, Component, ComponentRef, Entity, EntityError};
use crate::node::{Label, NodeBuilder};
use crate::recording::{Place, RecordsFor};
use crate::registry::Registry;
use crate::script::{ScriptCx, ScriptId, ScriptKind, Scripts, StepScript};
use crate::system::{BoundaryHooks, Param, ServiceCells};
use crate::world::World;
use crate::world::spawned::{CommandEntity, Spawned};
use crate::world::spec::{IntoFactory, IntoSystem};

/// The world's `Scripts<K>`, made (and opted into snapshots) if it has
/// none.
fn scripts_of<K: ScriptKind>(world: &mut World) -> &mut Scripts<K> {
    if world.get::<Scripts<K>>().is_none() {
        world.insert_scripts(Scripts::<K>::new());
    }
    world.get_mut::<Scripts<K>>().expect("inserted above")
}

/// One deferred change to a world. Only ever touched through `&mut` (when
/// drained), so `SyncWrapper` lets the ledger be shared without requiring the
/// closure to be `Sync`.
type Command = SyncWrapper<RecordedChange>;

/// A change to apply to the world at the boundary; an entity command the
/// world refuses (its entity gone, or frozen) changes nothing and says why.
/// A spawn hands back the entity it made, for later commands naming its
/// [`Spawned`].
pub(crate) type WorldChange =
    Box<dyn FnOnce(&mut World) -> Result<Option<Entity>, EntityError> + Send>;

/// What a recorded command does, for the message when it fails.
#[derive(Debug, Clone)]
pub(crate) enum CommandLabel {
    /// Inserts the service of this type.
    Insert(&'static str),
    /// Registers the node of this name.
    AddNode(Label),
    /// Spawns an entity with a bundle of this type.
    Spawn(&'static str),
    /// Despawns this entity.
    Despawn(CommandEntity),
    /// Adds a bundle of this type to this entity.
    InsertComponents(CommandEntity, &'static str),
    /// Removes a bundle of this type from this entity.
    RemoveComponents(CommandEntity, &'static str),
    /// Freezes this entity.
    Freeze(CommandEntity),
    /// Starts a script of this kind with this name.
    StartScript(&'static str, String),
    /// Cancels a script of this kind.
    CancelScript(&'static str, ScriptId),
    /// Runs a custom command: the closure's type, where it was queued.
    Custom(&'static str, &'static std::panic::Location<'static>),
    /// Runs the registered one-shot system on this node.
    RunSystem(u32),
    /// A hierarchy change (`set_parent`, `remove_parent`, ...) of this
    /// entity (`entity/hierarchy/commands.rs`).
    Relation(&'static str, CommandEntity),
    /// Triggers an event of this type, at this entity or none.
    Trigger(&'static str, Option<CommandEntity>),
    /// Registers an observer of events of this type watching this entity.
    Observe(&'static str, CommandEntity),
}

impl std::fmt::Display for CommandLabel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CommandLabel::Insert(service) => write!(f, "insert `{service}`"),
            CommandLabel::AddNode(name) => write!(f, "add node `{name}`"),
            CommandLabel::Spawn(bundle) => write!(f, "spawn `{bundle}`"),
            CommandLabel::Despawn(entity) => write!(f, "despawn {entity}"),
            CommandLabel::InsertComponents(entity, bundle) => {
                write!(f, "insert `{bundle}` into {entity}")
            }
            CommandLabel::RemoveComponents(entity, bundle) => {
                write!(f, "remove `{bundle}` from {entity}")
            }
            CommandLabel::Freeze(entity) => write!(f, "freeze {entity}"),
            CommandLabel::StartScript(kind, name) => write!(f, "start script `{name}` of `{kind}`"),
            CommandLabel::CancelScript(kind, id) => write!(f, "cancel script {id} of `{kind}`"),
            CommandLabel::Custom(command, at) => {
                write!(f, "custom command `{command}` queued at {at}")
            }
            CommandLabel::RunSystem(node) => write!(f, "run one-shot system (node {node})"),
            CommandLabel::Relation(what, entity) => write!(f, "{what} of {entity}"),
            CommandLabel::Trigger(event, None) => write!(f, "trigger `{event}`"),
            CommandLabel::Trigger(event, Some(target)) => {
                write!(f, "trigger `{event}` at {target}")
            }
            CommandLabel::Observe(event, entity) => {
                write!(f, "observe `{event}` at {entity}")
            }
        }
    }
}

/// A change, what it does and where it was recorded.
pub(crate) struct RecordedChange {
    pub(crate) label: CommandLabel,
    pub(crate) change: WorldChange,
    /// Where the command was recorded: the order changes land in, and the
    /// node whose failure discards it.
    order: Place,
    /// Its slot in the queue (what a [`Spawned`] names).
    pub(crate) slot: u32,
}

/// The world's ledger of deferred changes: appended to concurrently by running
/// nodes (one atomic slot claim each), drained at the boundary.
#[derive(Debug)]
pub(crate) struct CommandQueue {
    commands: LockOnResizeArray<Command>,
    /// This queue's identity, unique in the process: a [`Spawned`] of
    /// another world's queue resolves to nothing here.
    id: u64,
    /// How many times the queue was drained: a [`Spawned`] of an earlier
    /// iteration resolves to nothing. Written only through `&mut`.
    generation: u32,
}

impl Default for CommandQueue {
    fn default() -> Self {
        Self {
            commands: LockOnResizeArray::default(),
            id: crate::recording::new_world_id(),
            generation: 0,
        }
    }
}

impl RecordedChange {
    /// The recording node's position in the order of the plan that ran
    /// (`u32::MAX` off a node).
    pub(crate) fn rank(&self) -> u32 {
        self.order.rank()
    }
}

/// A node's way into the world's [`CommandQueue`]: what it records lands
/// at the node's place, from whichever thread it records.
#[derive(Debug, Clone, Copy)]
struct QueueHandle<'w> {
    queue: &'w CommandQueue,
    records_for: RecordsFor,
}

impl QueueHandle<'_> {
    /// Records a change that lands no entity.
    fn push(
        &self,
        label: CommandLabel,
        command: impl FnOnce(&mut World) -> Result<(), EntityError> + Send + 'static,
    ) {
        self.push_change(label, Box::new(move |world| command(world).map(|()| None)));
    }

    /// Records `change`; its slot in the queue.
    fn push_change(&self, label: CommandLabel, change: WorldChange) -> u32 {
        let slot = self.queue.commands.push(SyncWrapper::new(RecordedChange {
            label,
            change,
            order: self.records_for.next_place(),
            slot: 0,
        }));
        // A queue holds fewer than `u32::MAX` commands: each takes memory.
        u32::try_from(slot).unwrap_or(u32::MAX)
    }

    fn stamp(&self) -> (u64, u32) {
        self.queue.stamp()
    }
}

impl CommandQueue {
    /// Every recorded change, by recording node in plan order, then in
    /// each node's record order (a stable sort: claim order among commands
    /// recorded off a node, by loose tasks), with how many slots they took. The list's buffer
    /// comes from the per-type pool, so a game recording commands every
    /// frame reuses last frame's. Starts the queue's next generation.
    pub(crate) fn take_all(&mut self) -> (PooledList<RecordedChange>, usize) {
        let mut changes: PooledList<RecordedChange> = self
            .commands
            .drain()
            .map(SyncWrapper::into_inner)
            .zip(0u32..)
            .map(|(change, slot)| RecordedChange { slot, ..change })
            .collect();
        changes.sort_by_key(|change| change.order);
        self.generation = self.generation.wrapping_add(1);
        let slots = changes.len();
        (changes, slots)
    }

    /// The identity and generation a [`Spawned`] recorded now carries.
    pub(crate) fn stamp(&self) -> (u64, u32) {
        (self.id, self.generation)
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.commands.is_empty()
    }
}

/// Records changes to the world from inside a running node; they take effect
/// at the iteration boundary. Nodes registered this way appear in the plan of
/// a later iteration: the plan factory rebuilds the plan during the next
/// iteration, and it is swapped in at that iteration's end.
///
/// A node that fails (its body, or any slice it fans out, panics) lands
/// none of its commands, on every executor: they are dropped at the
/// boundary, unapplied.
///
/// Commands land in plan order: by recording node in the order a serial
/// run of the plan runs them, then in each node's record order, whatever
/// the executor or thread count (slices a node fans out in slice order,
/// as from a loop; threads it starts itself after its own thread).
///
/// Declares shared access to the world's private command queue, so any number of
/// nodes record commands at once. The handle borrows the node's run: the
/// threads a node starts itself record through it as the node does, and
/// none can hold it after the node returns.
#[derive(Debug, Clone, Copy)]
pub struct Commands<'w> {
    queue: QueueHandle<'w>,
}

impl<'w> Commands<'w> {
    /// Commands recording into `queue` (a hook's, off any node).
    pub(crate) fn for_queue(queue: &'w CommandQueue) -> Self {
        Commands {
            queue: QueueHandle {
                queue,
                records_for: RecordsFor::current(),
            },
        }
    }
}

impl Commands<'_> {
    /// Triggers the custom event `event` at the boundary, in command order:
    /// its observers run there (see [`World::trigger`]), and what they
    /// record lands before the next command.
    ///
    /// ```
    /// use sluice::prelude::*;
    /// use sluice::On;
    ///
    /// struct Ping;
    /// impl sluice::Event for Ping {}
    /// #[derive(Default)]
    /// struct Pings(u32);
    ///
    /// let mut world = World::new();
    /// world.insert(Pings::default());
    /// world.add_observer::<Ping, _>(|_: On<Ping>, pings: &mut Pings| pings.0 += 1)?;
    /// world.add_system(NodeBuilder::new("ping").system(|commands: Commands<'_>| {
    ///     commands.trigger(Ping);
    /// }));
    /// world.run_iteration().unwrap();
    /// assert_eq!(world.get::<Pings>().unwrap().0, 1);
    /// # Ok::<(), sluice::ObserveError>(())
    /// ```
    pub fn trigger<E: crate::Event>(&self, event: E) {
        let label = CommandLabel::Trigger(std::any::type_name::<E>(), None);
        self.queue.push(label, move |world| {
            world.trigger_now(event, None);
            Ok(())
        });
    }

    /// Triggers `event` at `target` (alive now, or [`Spawned`] by an
    /// earlier command) at the boundary, in command order; it propagates
    /// as [`World::trigger_targets`] says. Refused when the target is gone.
    pub fn trigger_targets<E: crate::Event>(&self, event: E, target: impl Into<CommandEntity>) {
        let target = target.into();
        let label = CommandLabel::Trigger(std::any::type_name::<E>(), Some(target));
        self.queue.push(label, move |world| {
            let target = world.resolve(target)?;
            if !world.entities().contains(target) {
                return Err(EntityError::NoSuchEntity { entity: target });
            }
            world.trigger_now(event, Some(target));
            Ok(())
        });
    }

    /// Registers a system at the boundary.
    #[track_caller]
    pub fn add_system<M>(&self, system: impl IntoSystem<M>) {
        let spec = system.into_system();
        let label = CommandLabel::AddNode(spec.builder.name_label().clone());
        self.queue.push(label, move |world| {
            world.add_spec(spec);
            Ok(())
        });
    }

    /// Registers a factory at the boundary.
    #[track_caller]
    pub fn add_factory<M>(&self, factory: impl IntoFactory<M>) {
        let spec = factory.into_factory();
        let label = CommandLabel::AddNode(spec.builder.name_label().clone());
        self.queue.push(label, move |world| {
            world.add_spec(spec);
            Ok(())
        });
    }

    /// Runs `command` with the world at the boundary: a custom command,
    /// landing in the same order as every other command (by recording node
    /// in plan order, then in record order), on every executor.
    ///
    /// It may change the world as a whole-world system may (insert, remove,
    /// spawn, register nodes, scope a service), not run it: an iteration,
    /// update or schedule asked for inside is refused
    /// ([`IterationError::Reentrant`](crate::IterationError::Reentrant)).
    /// If it panics, the panic is reported as a boundary failure naming
    /// the command (its closure's type and where it was queued), what it
    /// changed before panicking stays, and the commands after it land.
    /// Like every command, it is dropped unrun if its node fails.
    ///
    /// ```
    /// use sluice::{Commands, NodeBuilder, World};
    ///
    /// #[derive(Default)]
    /// struct Log(Vec<&'static str>);
    ///
    /// let mut world = World::new();
    /// world.insert(Log::default());
    /// world.add_system(NodeBuilder::new("record").system(|commands: Commands| {
    ///     commands.insert(7u32);
    ///     commands.queue(|world: &mut sluice::World| {
    ///         let seen = *world.get::<u32>().unwrap(); // the insert above landed first
    ///         world.get_mut::<Log>().unwrap().0.push(if seen == 7 { "after" } else { "before" });
    ///     });
    /// }));
    /// world.run_iteration()?;
    /// assert_eq!(world.get::<Log>().unwrap().0, ["after"]);
    /// # Ok::<(), sluice::IterationError>(())
    /// ```
    #[track_caller]
    pub fn queue<F: FnOnce(&mut World) + Send + 'static>(&self, command: F) {
        let label =
            CommandLabel::Custom(std::any::type_name::<F>(), std::panic::Location::caller());
        self.queue.push(label, move |world| {
            world.run_custom_command(command);
            Ok(())
        });
    }

    /// Runs the registered one-shot system `id`
    /// ([`World::register_system`]) at the boundary, in command order: it
    /// sees what the commands before it changed, and what its own commands
    /// change lands before the next command. If it cannot run (unknown or
    /// unregistered id, running itself, a missing service) or panics, the
    /// iteration reports a boundary failure naming it
    /// ([`RunSystemError`](crate::RunSystemError)'s message) and the other
    /// commands land.
    ///
    /// ```
    /// use sluice::prelude::*;
    ///
    /// #[derive(Default)]
    /// struct Spawns(u32);
    ///
    /// let mut world = World::new();
    /// world.insert(Spawns::default());
    /// let count = world.register_system(|spawns: &mut Spawns| spawns.0 += 1);
    /// world.add_system(NodeBuilder::new("ask").system(move |commands: Commands<'_>| {
    ///     commands.run_system(count);
    /// }));
    /// world.run_iteration()?;
    /// world.run_iteration()?;
    /// assert_eq!(world.get::<Spawns>().unwrap().0, 2);
    /// # Ok::<(), sluice::IterationError>(())
    /// ```
    pub fn run_system(&self, id: crate::world::SystemId) {
        let node = u32::try_from(id.node().index()).unwrap_or(u32::MAX);
        self.queue
            .push(CommandLabel::RunSystem(node), move |world| {
                if let Err(error) = world.run_system(id) {
                    // Reported as the boundary reports a panicking command,
                    // with the error's message; no panic hook runs.
                    std::panic::resume_unwind(Box::new(error.to_string()));
                }
                Ok(())
            });
    }

    /// Inserts (or replaces) a service at the boundary. If the replaced
    /// value's `Drop` panics, the new value is in place regardless, the
    /// iteration reports the panic, and the commands after this one land.
    pub fn insert<T: Send + Sync + 'static>(&self, value: T) {
        let label = CommandLabel::Insert(std::any::type_name::<T>());
        self.queue.push(label, move |world| {
            world.insert(value);
            Ok(())
        });
    }

    /// Spawns an entity with the components of `bundle` at the boundary.
    /// A bundle naming one type twice is refused there (reported by the
    /// iteration, naming the type).
    ///
    /// The [`Spawned`] handed back names the entity to later commands of
    /// this iteration: give it components that name other new entities
    /// ([`EntityCommands::insert_with`]), aim a [`ComponentRef`] at it
    /// ([`EntityCommands::insert_ref`]), freeze or despawn it. Commands land
    /// in record order, so the entity it becomes is the same for every
    /// thread count.
    ///
    /// ```
    /// use sluice::{Commands, Entity, NodeBuilder, World};
    ///
    /// struct Leader;
    /// struct Follows(Entity);
    ///
    /// let mut world = World::new();
    /// world.add_system(NodeBuilder::new("squad").system(|commands: Commands| {
    ///     let leader = commands.spawn((Leader,));
    ///     let follower = commands.spawn(());
    ///     commands.entity(follower).insert_with(leader, |leader| (Follows(leader),));
    /// }));
    /// world.run_iteration().unwrap();
    /// let mut follows = world.query::<&Follows>();
    /// let leader = follows.iter().next().unwrap().0;
    /// assert!(world.entity(leader).unwrap().get::<Leader>().is_some());
    /// ```
    pub fn spawn<B: Bundle>(&self, bundle: B) -> Spawned {
        let label = CommandLabel::Spawn(std::any::type_name::<B>());
        let (queue, generation) = self.queue.stamp();
        let slot = self.queue.push_change(
            label,
            Box::new(move |world| world.observed_spawn(bundle).map(Some)),
        );
        Spawned {
            queue,
            generation,
            slot,
        }
    }

    /// Spawns an entity with no component at the boundary, and returns its
    /// commands: the entity is reserved now, usable at once by every later
    /// command of this iteration (insert onto it, link other entities to
    /// it with [`EntityCommands::insert_with`], despawn it), and lives from
    /// the boundary on. Its [`Spawned`] is [`EntityCommands::id`].
    ///
    /// ```
    /// use sluice::{Commands, NodeBuilder, World};
    ///
    /// struct Hp(u32);
    ///
    /// let mut world = World::new();
    /// world.add_system(NodeBuilder::new("spawner").system(|commands: Commands| {
    ///     commands.spawn_empty().insert((Hp(3),));
    /// }));
    /// world.run_iteration()?;
    /// assert_eq!(world.query::<&Hp>().iter().map(|hp| hp.0).sum::<u32>(), 3);
    /// # Ok::<(), sluice::IterationError>(())
    /// ```
    pub fn spawn_empty(&self) -> EntityCommands<'_> {
        let spawned = self.spawn(());
        self.entity(spawned)
    }

    /// Despawns `entity` at the boundary (refused if it is gone by then).
    pub fn despawn(&self, entity: impl Into<CommandEntity>) {
        self.entity(entity).despawn();
    }

    /// Starts an `async` script of kind `K` at the boundary (in command
    /// order, so its id is the same for every thread count), making the
    /// world's [`Scripts<K>`] if it has none (opted into snapshots, as
    /// [`World::insert_scripts`] does).
    pub fn start_script<K, F, Fut>(&self, name: impl Into<Cow<'static, str>>, script: F)
    where
        K: ScriptKind,
        F: FnOnce(ScriptCx<K>) -> Fut + Send + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        let name = name.into();
        let label = CommandLabel::StartScript(std::any::type_name::<K>(), name.to_string());
        self.queue.push(label, move |world| {
            scripts_of::<K>(world).start(name, script);
            Ok(())
        });
    }

    /// Starts a [`StepScript`] of kind `K` at the boundary, as
    /// [`start_script`](Self::start_script) does.
    pub fn start_step_script<K, S>(&self, name: impl Into<Cow<'static, str>>, script: S)
    where
        K: ScriptKind,
        S: StepScript<K> + Clone,
    {
        let name = name.into();
        let label = CommandLabel::StartScript(std::any::type_name::<K>(), name.to_string());
        self.queue.push(label, move |world| {
            scripts_of::<K>(world).start_step(name, script);
            Ok(())
        });
    }

    /// Cancels the script `id` of kind `K` at the boundary (nothing if it
    /// has ended by then).
    pub fn cancel_script<K: ScriptKind>(&self, id: ScriptId) {
        let label = CommandLabel::CancelScript(std::any::type_name::<K>(), id);
        self.queue.push(label, move |world| {
            if let Some(scripts) = world.get_mut::<Scripts<K>>() {
                scripts.cancel(id);
            }
            Ok(())
        });
    }

    /// Changes to `entity` (alive now, or [`Spawned`] by an earlier command
    /// of this iteration), at the boundary.
    pub fn entity(&self, entity: impl Into<CommandEntity>) -> EntityCommands<'_> {
        EntityCommands {
            queue: self.queue,
            entity: entity.into(),
        }
    }
}

/// Changes to one entity recorded from a running node; each lands at the
/// boundary, in record order, or is refused there (the entity despawned
/// meanwhile, or frozen) and changes nothing.
#[derive(Debug, Clone, Copy)]
pub struct EntityCommands<'w> {
    queue: QueueHandle<'w>,
    entity: CommandEntity,
}

impl EntityCommands<'_> {
    /// The entity changed.
    pub fn id(&self) -> CommandEntity {
        self.entity
    }

    /// Adds the components of `bundle`, replacing those it already has.
    pub fn insert<B: Bundle>(&self, bundle: B) -> &Self {
        let entity = self.entity;
        let label = CommandLabel::InsertComponents(entity, std::any::type_name::<B>());
        self.queue.push(label, move |world| {
            let entity = world.resolve(entity)?;
            world.observed_insert::<B, true>(entity, bundle)
        });
        self
    }

    /// Adds the components of `bundle` the entity lacks when this lands,
    /// keeping those it has (unchanged, not marked changed).
    pub fn insert_if_new<B: Bundle>(&self, bundle: B) -> &Self {
        let entity = self.entity;
        let label = CommandLabel::InsertComponents(entity, std::any::type_name::<B>());
        self.queue.push(label, move |world| {
            let entity = world.resolve(entity)?;
            world.observed_insert::<B, false>(entity, bundle)
        });
        self
    }

    /// Adds the components `make` builds from the entity `other` landed as
    /// (alive now or [`Spawned`] this iteration): links between new
    /// entities. Refused, changing nothing, when either is not there.
    pub fn insert_with<B: Bundle>(
        &self,
        other: impl Into<CommandEntity>,
        make: impl FnOnce(Entity) -> B + Send + 'static,
    ) -> &Self {
        let (entity, other) = (self.entity, other.into());
        let label = CommandLabel::InsertComponents(entity, std::any::type_name::<B>());
        self.queue.push(label, move |world| {
            let (entity, other) = (world.resolve(entity)?, world.resolve(other)?);
            world.observed_insert::<B, true>(entity, make(other))
        });
        self
    }

    /// Adds the components `make` builds from a [`ComponentRef`] to the `T`
    /// of `target` (alive now or [`Spawned`] this iteration; frozen by the
    /// time this lands, as [`ComponentRef::new`] requires). Refused,
    /// changing nothing, when either entity is not there or the target is
    /// not frozen.
    pub fn insert_ref<T: Component, B: Bundle>(
        &self,
        target: impl Into<CommandEntity>,
        make: impl FnOnce(ComponentRef<T>) -> B + Send + 'static,
    ) -> &Self {
        let (entity, target) = (self.entity, target.into());
        let label = CommandLabel::InsertComponents(entity, std::any::type_name::<B>());
        self.queue.push(label, move |world| {
            let (entity, target) = (world.resolve(entity)?, world.resolve(target)?);
            let reference = ComponentRef::<T>::new(&*world, target)?;
            world.observed_insert::<B, true>(entity, make(reference))
        });
        self
    }

    /// Removes whichever components of `B` the entity has when this lands,
    /// dropping them, as Bevy's `remove` does: one it lacks is no error
    /// (a bundle only partly there loses the part that is). Refused,
    /// changing nothing, when the entity is gone or frozen, or `B` names a
    /// type twice. To learn what was absent, remove it directly between
    /// iterations ([`EntityMut::remove_present`](crate::EntityMut::remove_present)
    /// returns the names), or from a custom command ([`Commands::queue`]).
    pub fn remove<B: Bundle>(&self) -> &Self {
        let entity = self.entity;
        let label = CommandLabel::RemoveComponents(entity, std::any::type_name::<B>());
        self.queue.push(label, move |world| {
            let entity = world.resolve(entity)?;
            world.observed_remove_present::<B>(entity).map(drop)
        });
        self
    }

    /// Freezes the entity: it never gains or loses a component again.
    pub fn freeze(&self) -> &Self {
        let entity = self.entity;
        self.queue.push(CommandLabel::Freeze(entity), move |world| {
            let entity = world.resolve(entity)?;
            world.freeze(entity)
        });
        self
    }

    /// Records a hierarchy change of this entity, `what` naming it in a
    /// failure (`entity/hierarchy/commands.rs`): the hook point the
    /// relation's commands land through.
    pub(crate) fn push_relation(
        &self,
        what: &'static str,
        change: impl FnOnce(&mut World, Entity) -> Result<(), EntityError> + Send + 'static,
    ) {
        let entity = self.entity;
        self.queue
            .push(CommandLabel::Relation(what, entity), move |world| {
                let entity = world.resolve(entity)?;
                change(world, entity)
            });
    }

    /// Registers `observer` for the events `E` aimed at this entity (its
    /// lifecycle events, custom events triggered at it or propagating
    /// through it), at the boundary in command order, as
    /// [`World::observe_entity`] does: it sees every such event that lands
    /// after this command, and goes when the entity is despawned.
    ///
    /// An entity despawned by the time this lands is refused there, naming
    /// the entity ([`EntityError::NoSuchEntity`] in a boundary failure), as
    /// is an observer the gate refuses (the failure carries
    /// [`ObserveError::Refused`](crate::ObserveError::Refused)'s message);
    /// nothing is registered and the other commands land.
    ///
    /// ```
    /// use sluice::prelude::*;
    /// use sluice::{Insert, On};
    ///
    /// struct Hp(u32);
    /// #[derive(Default)]
    /// struct Healed(u32);
    ///
    /// let mut world = World::new();
    /// world.insert(Healed::default());
    /// world.add_system(NodeBuilder::new("spawn").system(|commands: Commands<'_>| {
    ///     commands
    ///         .spawn_with((Hp(1),))
    ///         .observe::<Insert<Hp>, _>(|_: On<Insert<Hp>>, healed: &mut Healed| healed.0 += 1);
    /// }));
    /// world.run_iteration()?; // spawned, then watched: its own spawn is not seen
    /// let hero = world.query_filtered::<Entity, With<Hp>>().iter().next().unwrap();
    /// world.entity_mut(hero).unwrap().insert((Hp(5),))?;
    /// assert_eq!(world.get::<Healed>().unwrap().0, 1);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn observe<E: crate::Event, M: 'static>(
        &self,
        observer: impl crate::world::spec::IntoSystem<M> + Send + 'static,
    ) -> &Self {
        let entity = self.entity;
        let label = CommandLabel::Observe(std::any::type_name::<E>(), entity);
        self.queue.push(label, move |world| {
            let entity = world.resolve(entity)?;
            match world.observe_entity::<E, M>(entity, observer) {
                Ok(_) => Ok(()),
                Err(crate::ObserveError::NoSuchEntity { entity }) => {
                    Err(EntityError::NoSuchEntity { entity })
                }
                // Reported as the boundary reports a panicking command,
                // with the error's message; no panic hook runs.
                Err(error) => std::panic::resume_unwind(Box::new(error.to_string())),
            }
        });
        self
    }

    /// The commands this entity's commands record into.
    pub(crate) fn commands(&self) -> Commands<'_> {
        Commands { queue: self.queue }
    }

    /// Despawns the entity (and, when it has children, its whole subtree:
    /// see [`ChildOf`](crate::ChildOf)).
    pub fn despawn(&self) {
        let entity = self.entity;
        self.queue
            .push(CommandLabel::Despawn(entity), move |world| {
                let entity = world.resolve(entity)?;
                world.despawn(entity)
            });
    }
}

// SAFETY: `fetch` reads only the `CommandQueue` slot, through shared access,
// as `declare` declares.
unsafe impl Param for Commands<'_> {
    type Item<'w> = Commands<'w>;
    const KIND: AccessKind = AccessKind::Shared;

    fn service_name() -> &'static str {
        std::any::type_name::<CommandQueue>()
    }

    fn declare(node: NodeBuilder) -> NodeBuilder {
        node.runtime_reads::<CommandQueue>()
    }

    fn resolve(registry: &mut Registry, _hooks: &mut BoundaryHooks) -> ServiceId {
        registry.resolve::<CommandQueue>()
    }

    unsafe fn fetch<'w>(id: ServiceId, cells: &ServiceCells<'w>) -> Commands<'w> {
        // SAFETY: the node declared shared access to the queue, and only the
        // boundary (outside any iteration) takes it mutably.
        let queue = unsafe { cells.get::<CommandQueue>(id) }
            .expect("every world holds a CommandQueue from its creation");
        Commands {
            queue: QueueHandle {
                queue,
                records_for: RecordsFor::current(),
            },
        }
    }
}

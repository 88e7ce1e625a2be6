//! Plugins: a named bundle of services, systems, groups, schedules and
//! other plugins, added to a world with one call.
//!
//! A [`Plugin`] declares the plugins it [`requires`](Plugin::requires) by
//! type. [`World::add_plugin`] (or [`World::add_plugins`] for a tuple or a
//! [`PluginGroup`]) records it and builds it **at once when every plugin it
//! requires is already built**; otherwise it waits, and is built the moment
//! its last requirement is. So requirements are always built first,
//! whatever order the plugins were added in, and a plugin's services are
//! readable right after the call that completes its requirements.
//!
//! A plugin still waiting when the world next plans (the first
//! [`run_iteration`](World::run_iteration), [`update`](World::update),
//! [`run_schedule`](World::run_schedule) or [`plan`](World::plan)), or
//! when [`World::finish_plugins`] is called, is an error: a requirement
//! nobody added ([`PluginError::MissingRequirement`]) or a cycle of
//! requirements ([`PluginError::Cycle`]), naming the plugins. Nothing runs
//! until it is resolved (add the missing plugin, then run again).
//!
//! Adding a plugin whose [`name`](Plugin::name) is already added is
//! [`PluginError::Duplicate`], and changes nothing: a second instance may
//! carry another configuration, and silently keeping either one would hide
//! that. Call sites that mean "make sure it is there" use
//! [`World::has_plugin`] first. A group or tuple is checked whole before any
//! member is added: one duplicate and none of them is added.
//!
//! ```
//! use sluice::plugin::{Plugin, Requires};
//! use sluice::World;
//!
//! struct Gravity(f32);
//! struct Fallen(u32);
//!
//! struct PhysicsPlugin;
//! impl Plugin for PhysicsPlugin {
//!     fn build(&self, world: &mut World) {
//!         world.insert(Gravity(9.8));
//!     }
//! }
//!
//! struct FallPlugin;
//! impl Plugin for FallPlugin {
//!     fn requires(&self) -> Requires {
//!         Requires::new().plugin::<PhysicsPlugin>()
//!     }
//!     fn build(&self, world: &mut World) {
//!         // Built after PhysicsPlugin, whatever the order of adding.
//!         let g = world.get::<Gravity>().expect("required").0;
//!         world.insert(Fallen(g as u32));
//!     }
//! }
//!
//! let mut world = World::new();
//! world.add_plugins((FallPlugin, PhysicsPlugin)).unwrap();
//! assert_eq!(world.get::<Fallen>().unwrap().0, 9);
//! assert!(world.add_plugin(PhysicsPlugin).is_err()); // a duplicate, named
//! ```

use std::any::TypeId;
use std::borrow::Cow;
use std::fmt;
use std::panic::{self, AssertUnwindSafe};

use crate::world::World;

/// A named bundle of what a part of a game adds to a world.
pub trait Plugin: Send + Sync + 'static {
    /// Adds the plugin's services, systems, groups and schedules to `world`.
    /// Called once, after every plugin it [`requires`](Plugin::requires) was
    /// built.
    fn build(&self, world: &mut World);

    /// The plugins this one needs built before it, by type.
    fn requires(&self) -> Requires {
        Requires::new()
    }

    /// The plugin's name: unique in a world (a second plugin of the same
    /// name is [`PluginError::Duplicate`]); its type's path by default.
    /// A plugin type added more than once with different configurations
    /// gives each instance its own name.
    fn name(&self) -> Cow<'static, str> {
        Cow::Borrowed(std::any::type_name::<Self>())
    }
}

/// The plugins a [`Plugin`] requires, by type: any added plugin of that
/// type satisfies it, whatever its name.
#[derive(Debug, Clone, Default)]
pub struct Requires {
    plugins: Vec<(TypeId, &'static str)>,
}

impl Requires {
    /// No requirement.
    pub fn new() -> Self {
        Self::default()
    }

    /// Requires a plugin of type `P`.
    pub fn plugin<P: Plugin>(mut self) -> Self {
        self.plugins
            .push((TypeId::of::<P>(), std::any::type_name::<P>()));
        self
    }

    /// The required plugins' type names.
    pub fn names(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.plugins.iter().map(|&(_, name)| name)
    }
}

/// Why a plugin could not be added or built.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PluginError {
    /// A plugin of this name is already added (built or waiting). Nothing
    /// of the call that added it again was added.
    Duplicate {
        /// The plugin's name.
        plugin: String,
    },
    /// `plugin` requires a plugin of type `requires`, which nobody added.
    /// `plugin` is kept, waiting: add the requirement and it is built.
    MissingRequirement {
        /// The waiting plugin's name.
        plugin: String,
        /// The missing plugin's type.
        requires: String,
    },
    /// The plugins require one another in a cycle, listed in order with
    /// the first repeated at the end (`a -> b -> a`). They stay waiting.
    Cycle {
        /// The plugins of the cycle.
        plugins: Vec<String>,
    },
    /// `plugin`'s [`build`](Plugin::build) panicked. The nodes it had
    /// registered are removed and the services it had inserted where the
    /// world held none are taken out again; a service it replaced stays
    /// replaced, and groups, stages and sets it declared stay declared.
    /// The plugin is not built (its name stays taken), so the plugins
    /// requiring it wait, and [`World::finish_plugins`] reports them.
    BuildPanicked {
        /// The plugin's name.
        plugin: String,
        /// The panic's message, when it was a string.
        message: String,
    },
    /// [`PluginGroupBuilder::disable`] or [`PluginGroupBuilder::set`] named
    /// a plugin type the group does not hold.
    NotInGroup {
        /// The group's name.
        group: String,
        /// The plugin type named.
        plugin: String,
    },
}

impl fmt::Display for PluginError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PluginError::Duplicate { plugin } => {
                write!(f, "plugin `{plugin}` is already added to this world")
            }
            PluginError::MissingRequirement { plugin, requires } => write!(
                f,
                "plugin `{plugin}` requires plugin `{requires}`, which was not added"
            ),
            PluginError::Cycle { plugins } => write!(
                f,
                "plugins require each other in a cycle: {}",
                plugins.join(" -> ")
            ),
            PluginError::BuildPanicked { plugin, message } => {
                write!(f, "plugin `{plugin}` panicked while building: {message}")
            }
            PluginError::NotInGroup { group, plugin } => {
                write!(f, "plugin group `{group}` holds no plugin `{plugin}`")
            }
        }
    }
}

impl std::error::Error for PluginError {}

/// One added plugin and where it stands.
struct Entry {
    plugin: Box<dyn Plugin>,
    type_id: TypeId,
    name: String,
    requires: Requires,
    built: bool,
}

/// The plugins added to one world, in the order they were added.
#[derive(Default)]
pub(crate) struct PluginSet {
    entries: Vec<Entry>,
    /// Some plugin waits for a requirement.
    waiting: bool,
    /// A build is running: plugins added by it are built when it returns.
    building: bool,
}

/// A plugin boxed with its type, ready to be added.
pub struct BoxedPlugin {
    plugin: Box<dyn Plugin>,
    type_id: TypeId,
}

impl BoxedPlugin {
    /// Boxes `plugin`.
    pub fn new<P: Plugin>(plugin: P) -> Self {
        Self {
            plugin: Box::new(plugin),
            type_id: TypeId::of::<P>(),
        }
    }

    /// The plugin's name.
    pub fn name(&self) -> Cow<'static, str> {
        self.plugin.name()
    }
}

impl fmt::Debug for BoxedPlugin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("BoxedPlugin").field(&self.name()).finish()
    }
}

/// What [`World::add_plugins`] takes: a plugin, a [`PluginGroup`], a
/// [`PluginGroupBuilder`], or a tuple of any of them.
pub trait Plugins<Marker> {
    /// Appends every plugin, in order, to `out`.
    fn collect(self, out: &mut Vec<BoxedPlugin>) -> Result<(), PluginError>;
}

/// [`Plugins`]' marker for a single plugin.
#[doc(hidden)]
#[derive(Debug)]
pub struct PluginMarker;
/// [`Plugins`]' marker for a plugin group.
#[doc(hidden)]
#[derive(Debug)]
pub struct GroupMarker;
/// [`Plugins`]' marker for a group's builder.
#[doc(hidden)]
#[derive(Debug)]
pub struct BuilderMarker;

impl<P: Plugin> Plugins<PluginMarker> for P {
    fn collect(self, out: &mut Vec<BoxedPlugin>) -> Result<(), PluginError> {
        out.push(BoxedPlugin::new(self));
        Ok(())
    }
}

impl<G: PluginGroup> Plugins<GroupMarker> for G {
    fn collect(self, out: &mut Vec<BoxedPlugin>) -> Result<(), PluginError> {
        self.build().collect(out)
    }
}

impl Plugins<BuilderMarker> for PluginGroupBuilder {
    fn collect(self, out: &mut Vec<BoxedPlugin>) -> Result<(), PluginError> {
        if let Some(error) = self.error {
            return Err(error);
        }
        out.extend(self.plugins.into_iter().flatten());
        Ok(())
    }
}

macro_rules! impl_plugins_tuple {
    ($($param:ident $index:tt),*) => {
        impl<$($param),*> Plugins<($($param,)*)> for ($($param,)*)
        where
            $($param: PluginsTupleItem),*
        {
            fn collect(self, out: &mut Vec<BoxedPlugin>) -> Result<(), PluginError> {
                $(self.$index.collect_item(out)?;)*
                Ok(())
            }
        }
    };
}

/// A member of a tuple given to [`World::add_plugins`]: a plugin, a group,
/// or a group's builder.
pub trait PluginsTupleItem {
    /// Appends this member's plugins to `out`.
    fn collect_item(self, out: &mut Vec<BoxedPlugin>) -> Result<(), PluginError>;
}

impl<P: Plugin> PluginsTupleItem for P {
    fn collect_item(self, out: &mut Vec<BoxedPlugin>) -> Result<(), PluginError> {
        out.push(BoxedPlugin::new(self));
        Ok(())
    }
}

impl PluginsTupleItem for PluginGroupBuilder {
    fn collect_item(self, out: &mut Vec<BoxedPlugin>) -> Result<(), PluginError> {
        Plugins::<BuilderMarker>::collect(self, out)
    }
}

crate::tuples::for_tuples!(impl_plugins_tuple, 12);

/// A named list of plugins added together, any of which the user may leave
/// out ([`PluginGroupBuilder::disable`]) or replace
/// ([`PluginGroupBuilder::set`]).
///
/// ```
/// use sluice::plugin::{Plugin, PluginGroup, PluginGroupBuilder};
/// use sluice::World;
///
/// struct Audio;
/// impl Plugin for Audio { fn build(&self, world: &mut World) { world.insert(1u8); } }
/// struct Physics;
/// impl Plugin for Physics { fn build(&self, world: &mut World) { world.insert(2u16); } }
///
/// struct Defaults;
/// impl PluginGroup for Defaults {
///     fn build(self) -> PluginGroupBuilder {
///         PluginGroupBuilder::start::<Self>().add(Audio).add(Physics)
///     }
/// }
///
/// let mut world = World::new();
/// world.add_plugins(Defaults.build().disable::<Audio>()).unwrap();
/// assert!(world.get::<u8>().is_none());
/// assert_eq!(world.get::<u16>(), Some(&2));
/// ```
pub trait PluginGroup: Sized {
    /// The group's plugins, in order.
    fn build(self) -> PluginGroupBuilder;

    /// The group's name: its type's path by default.
    fn name() -> String {
        std::any::type_name::<Self>().to_owned()
    }
}

/// The plugins of a [`PluginGroup`], in order; disabled members are kept
/// as holes so that [`set`](Self::set) keeps their place.
#[derive(Debug)]
pub struct PluginGroupBuilder {
    group: String,
    plugins: Vec<Option<BoxedPlugin>>,
    /// Every member's type, holes included.
    types: Vec<(TypeId, &'static str)>,
    /// The first wrong `disable`/`set`, reported when the group is added.
    error: Option<PluginError>,
}

impl PluginGroupBuilder {
    /// An empty list for the group `G`.
    pub fn start<G: PluginGroup>() -> Self {
        Self {
            group: G::name(),
            plugins: Vec::new(),
            types: Vec::new(),
            error: None,
        }
    }

    /// Appends `plugin`.
    #[allow(clippy::should_implement_trait)]
    pub fn add<P: Plugin>(mut self, plugin: P) -> Self {
        self.plugins.push(Some(BoxedPlugin::new(plugin)));
        self.types
            .push((TypeId::of::<P>(), std::any::type_name::<P>()));
        self
    }

    fn position<P: Plugin>(&mut self) -> Option<usize> {
        let found = self
            .types
            .iter()
            .position(|&(id, _)| id == TypeId::of::<P>());
        if found.is_none() && self.error.is_none() {
            self.error = Some(PluginError::NotInGroup {
                group: self.group.clone(),
                plugin: std::any::type_name::<P>().to_owned(),
            });
        }
        found
    }

    /// Leaves the member of type `P` out. Naming a type the group does not
    /// hold is [`PluginError::NotInGroup`] when the group is added.
    pub fn disable<P: Plugin>(mut self) -> Self {
        if let Some(at) = self.position::<P>() {
            self.plugins[at] = None;
        }
        self
    }

    /// Replaces the member of type `P` with `plugin` (another
    /// configuration), in its place; puts it back if it was disabled.
    pub fn set<P: Plugin>(mut self, plugin: P) -> Self {
        if let Some(at) = self.position::<P>() {
            self.plugins[at] = Some(BoxedPlugin::new(plugin));
        }
        self
    }

    /// Whether a member of type `P` will be added (not disabled).
    pub fn enabled<P: Plugin>(&self) -> bool {
        self.types
            .iter()
            .zip(&self.plugins)
            .any(|(&(id, _), plugin)| id == TypeId::of::<P>() && plugin.is_some())
    }
}

impl World {
    /// Adds `plugin`, building it now if every plugin it requires is built,
    /// or as soon as they are (see the [module](crate::plugin)).
    ///
    /// # Errors
    /// [`PluginError::Duplicate`] when a plugin of its name was added
    /// (nothing changes); [`PluginError::BuildPanicked`] when its build (or
    /// the build of a plugin that was waiting for it) panicked.
    pub fn add_plugin<P: Plugin>(&mut self, plugin: P) -> Result<(), PluginError> {
        self.add_boxed_plugins(vec![BoxedPlugin::new(plugin)])
    }

    /// Adds several plugins at once: a tuple, a [`PluginGroup`] or its
    /// builder. All are checked for duplicates first (none is added if one
    /// is), then added in order, each built as [`add_plugin`](World::add_plugin)
    /// would.
    ///
    /// # Errors
    /// As for [`add_plugin`](World::add_plugin), and
    /// [`PluginError::NotInGroup`] for a group's wrong `disable`/`set`.
    pub fn add_plugins<M>(&mut self, plugins: impl Plugins<M>) -> Result<(), PluginError> {
        let mut boxed = Vec::new();
        plugins.collect(&mut boxed)?;
        self.add_boxed_plugins(boxed)
    }

    fn add_boxed_plugins(&mut self, plugins: Vec<BoxedPlugin>) -> Result<(), PluginError> {
        let set = &mut self.plugins;
        let mut names: Vec<String> = Vec::with_capacity(plugins.len());
        for plugin in &plugins {
            let name = plugin.name().into_owned();
            if set.entries.iter().any(|entry| entry.name == name) || names.contains(&name) {
                return Err(PluginError::Duplicate { plugin: name });
            }
            names.push(name);
        }
        for (plugin, name) in plugins.into_iter().zip(names) {
            let requires = plugin.plugin.requires();
            set.entries.push(Entry {
                plugin: plugin.plugin,
                type_id: plugin.type_id,
                name,
                requires,
                built: false,
            });
        }
        set.waiting = true;
        // Planned again before the next run, which looks for plugins
        // still waiting first.
        self.mark_stale();
        self.build_ready_plugins()
    }

    /// Builds every waiting plugin whose requirements are built, in the
    /// order they were added, until none is ready. A build that adds
    /// plugins has them built after it returns (not inside it).
    fn build_ready_plugins(&mut self) -> Result<(), PluginError> {
        if self.plugins.building {
            return Ok(());
        }
        let mut first_error = None;
        loop {
            let set = &self.plugins;
            let ready = set.entries.iter().position(|entry| {
                !entry.built
                    && entry.requires.plugins.iter().all(|&(id, _)| {
                        set.entries
                            .iter()
                            .any(|other| other.type_id == id && other.built)
                    })
            });
            let Some(at) = ready else { break };
            // Marked built before running, so a panic does not retry it.
            self.plugins.entries[at].built = true;
            if let Err(error) = self.build_one(at) {
                first_error.get_or_insert(error);
            }
        }
        self.plugins.waiting = self.plugins.entries.iter().any(|entry| !entry.built);
        first_error.map_or(Ok(()), Err)
    }

    /// Runs entry `at`'s build; on a panic, undoes what can be undone and
    /// marks it failed (built stays true but it no longer satisfies anyone).
    fn build_one(&mut self, at: usize) -> Result<(), PluginError> {
        // Taken out for the build, so the build may add plugins (which
        // land in `self.plugins` and are built after it returns).
        let entry = &mut self.plugins.entries[at];
        let plugin = std::mem::replace(&mut entry.plugin, Box::new(Placeholder));
        let name = entry.name.clone();
        let before = self.registration_mark();
        self.plugins.building = true;
        let _span = tracing::info_span!("plugin", name = %name).entered();
        let result = panic::catch_unwind(AssertUnwindSafe(|| plugin.build(self)));
        self.plugins.building = false;
        self.plugins.entries[at].plugin = plugin;
        match result {
            Ok(()) => Ok(()),
            Err(payload) => {
                self.undo_registrations(before);
                // A failed plugin satisfies no requirement: its type is
                // made to match nothing.
                self.plugins.entries[at].type_id = TypeId::of::<Placeholder>();
                let message = payload
                    .downcast_ref::<&str>()
                    .map(|s| (*s).to_owned())
                    .or_else(|| payload.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "a non-string panic payload".to_owned());
                Err(PluginError::BuildPanicked {
                    plugin: name,
                    message,
                })
            }
        }
    }

    /// Whether a plugin named `name` is added (built or waiting).
    pub fn has_plugin_named(&self, name: &str) -> bool {
        self.plugins.entries.iter().any(|entry| entry.name == name)
    }

    /// Whether a plugin of type `P` is added (built or waiting).
    pub fn has_plugin<P: Plugin>(&self) -> bool {
        self.plugins
            .entries
            .iter()
            .any(|entry| entry.type_id == TypeId::of::<P>())
    }

    /// The plugins added, in the order they were added, each with whether
    /// it is built.
    pub fn plugins(&self) -> impl Iterator<Item = (&str, bool)> + '_ {
        self.plugins
            .entries
            .iter()
            .map(|entry| (entry.name.as_str(), entry.built))
    }

    /// Checks that no plugin is left waiting: each waiting plugin's
    /// missing requirement, or a cycle among them, is an error (the first
    /// found, in the order plugins were added). The first run of the world
    /// calls it; call it earlier to see the error sooner.
    ///
    /// # Errors
    /// [`PluginError::MissingRequirement`] or [`PluginError::Cycle`]; the
    /// waiting plugins stay waiting.
    pub fn finish_plugins(&mut self) -> Result<(), PluginError> {
        if !self.plugins.waiting {
            return Ok(());
        }
        self.build_ready_plugins()?;
        let entries = &self.plugins.entries;
        let waiting: Vec<usize> = (0..entries.len())
            .filter(|&at| !entries[at].built)
            .collect();
        // A requirement nobody added (or whose plugin failed) first.
        for &at in &waiting {
            for &(id, required) in &entries[at].requires.plugins {
                if !entries.iter().any(|other| other.type_id == id) {
                    return Err(PluginError::MissingRequirement {
                        plugin: entries[at].name.clone(),
                        requires: required.to_owned(),
                    });
                }
            }
        }
        // Every waiting plugin waits on another waiting one: follow the
        // first unbuilt requirement until a plugin repeats.
        if let Some(&start) = waiting.first() {
            let mut path = vec![start];
            let mut at = start;
            loop {
                let next = entries[at].requires.plugins.iter().find_map(|&(id, _)| {
                    entries
                        .iter()
                        .position(|other| other.type_id == id && !other.built)
                });
                let Some(next) = next else { break };
                if let Some(from) = path.iter().position(|&p| p == next) {
                    let mut plugins: Vec<String> = path[from..]
                        .iter()
                        .map(|&p| entries[p].name.clone())
                        .collect();
                    plugins.push(entries[next].name.clone());
                    return Err(PluginError::Cycle { plugins });
                }
                path.push(next);
                at = next;
            }
        }
        Ok(())
    }

    /// Whether plugins wait for requirements (checked before planning).
    pub(crate) fn plugins_waiting(&self) -> bool {
        self.plugins.waiting
    }
}

/// Stands in for a plugin while it builds, and marks a failed one.
struct Placeholder;

impl Plugin for Placeholder {
    fn build(&self, _world: &mut World) {}
}

//! The organisation a node or group declares beside its accesses: its group,
//! phase, stage, set, cadence, schedule, sibling order and tie-break order.
//!
//! None of it is a scheduling mechanism of its own: the planner turns every
//! declaration into ordering edges through marker vertices that never run
//! (`plan/organise.rs`), so the one rule of ordering and serial equivalence
//! hold unchanged. The semantics are those of `plan-format.md`,
//! "Organisation".
//!
//! ```
//! use std::time::Duration;
//! use sluice::{FixedTime, Group, World, system};
//!
//! #[system(phase = PreUpdate)]                 // PreUpdate < Update < PostUpdate
//! fn read_input() {}
//!
//! #[system(group = "Physics", cadence = Fixed)] // its own plan, run per whole step
//! fn integrate(time: &FixedTime) { let _ = time.step; }
//!
//! #[system(group = "Ai", order_first)]         // before its siblings in "Ai"
//! fn perceive() {}
//!
//! #[system(schedule = Startup)]                // once, before the first update
//! fn load_level() {}
//!
//! let mut world = World::new();
//! world.add_group(Group::new("Simulation"));
//! world.add_group(Group::new("Physics").in_group("Simulation"));
//! world.add_group(Group::new("Ai").in_group("Simulation").after("Physics"));
//! world.add_system(read_input);
//! world.add_system(integrate);
//! world.add_system(perceive);
//! world.add_system(load_level);
//! world.set_fixed_timestep(Duration::from_secs(1) / 60);
//! world.update(Duration::from_millis(40)).expect("two fixed steps, then the frame");
//! assert_eq!(world.get::<FixedTime>().map(|t| t.total), Some(2));
//! ```

use crate::node::{Label, Silenced};

/// The three built-in phases of an update (reference 000). Never registered,
/// only targeted: a world where no node names a phase gains no edges; once
/// one does, every node without one is in [`Phase::Update`], and within each
/// cadence every `PreUpdate` node precedes every `Update` node, which precede
/// every `PostUpdate` node.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, enum_map::Enum)]
pub enum Phase {
    /// Before the update proper (input, spawning).
    PreUpdate,
    /// The update proper; the phase of every node that names none.
    Update,
    /// After the update (presentation, cleanup).
    PostUpdate,
}

impl Phase {
    /// The phase's name as written in code (`PreUpdate`).
    pub fn name(self) -> &'static str {
        match self {
            Phase::PreUpdate => "PreUpdate",
            Phase::Update => "Update",
            Phase::PostUpdate => "PostUpdate",
        }
    }

    /// The phase with this name (`PreUpdate`, `Update`, `PostUpdate`).
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "PreUpdate" => Some(Phase::PreUpdate),
            "Update" => Some(Phase::Update),
            "PostUpdate" => Some(Phase::PostUpdate),
            _ => None,
        }
    }
}

/// How often a node runs within [`World::update`](crate::World::update).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, enum_map::Enum)]
pub enum Cadence {
    /// Once per update (the default).
    #[default]
    Variable,
    /// Once per whole fixed step the update's time accrued, before the
    /// variable plan runs; the fixed nodes form a plan of their own.
    Fixed,
}

impl Cadence {
    /// `fixed` or `variable`.
    pub fn name(self) -> &'static str {
        match self {
            Cadence::Variable => "variable",
            Cadence::Fixed => "fixed",
        }
    }
}

/// Which schedule of its world a node belongs to. Each schedule is planned
/// by the same rule and shares the world's services and pool.
///
/// A schedule is its name: the built-in names are the built-in schedules,
/// so `Schedule::named("Startup")` (and `Schedule::Named("Startup".into())`)
/// is [`Schedule::Startup`], and [`World::run_schedule`](crate::World::run_schedule)`("Startup")`
/// reaches the nodes `in_schedule(Schedule::Startup)`.
///
/// ```
/// use sluice::Schedule;
/// assert_eq!(Schedule::named("Startup"), Schedule::Startup);
/// assert_eq!(Schedule::Named("Update".into()), Schedule::Update);
/// assert_ne!(Schedule::named("Save"), Schedule::Startup);
/// ```
#[non_exhaustive]
#[derive(Debug, Clone, Default)]
pub enum Schedule {
    /// Run by every [`World::update`](crate::World::update) and
    /// [`World::run_iteration`](crate::World::run_iteration) (the default).
    #[default]
    Update,
    /// Runs once, before the world's first update.
    Startup,
    /// Runs when the game asks for it: [`World::run_schedule`](crate::World::run_schedule).
    Named(Label),
}

impl Schedule {
    /// The schedule called `name`: a schedule of the game's own
    /// (`Schedule::named("Save")`), or the built-in one of that name
    /// (`Update`, `Startup`).
    pub fn named(name: impl Into<Label>) -> Self {
        let name = name.into();
        match &*name {
            "Update" => Schedule::Update,
            "Startup" => Schedule::Startup,
            _ => Schedule::Named(name),
        }
    }

    /// The schedule as its built-in variant when it is one (a `Named`
    /// schedule spelled `Update` or `Startup` is that schedule).
    pub(crate) fn canonical(&self) -> Schedule {
        match self.identity() {
            (0, _) => Schedule::Update,
            (1, _) => Schedule::Startup,
            _ => self.clone(),
        }
    }

    /// What identifies the schedule: built-in first, then by name (a
    /// `Named` schedule spelled like a built-in one is that one); the kind
    /// is [`NAMED`] for a game's own schedule.
    fn identity(&self) -> (u8, &str) {
        // The variants first: planning compares every node's schedule, and
        // only a `Named` one needs its string looked at.
        match self {
            Schedule::Update => (0, ""),
            Schedule::Startup => (1, ""),
            Schedule::Named(name) => match &**name {
                "Update" => (0, ""),
                "Startup" => (1, ""),
                name => (NAMED, name),
            },
        }
    }

    /// The schedule's name: `Update`, `Startup`, or its own.
    pub fn name(&self) -> &str {
        match self {
            Schedule::Update => "Update",
            Schedule::Startup => "Startup",
            Schedule::Named(name) => name,
        }
    }
}

/// The kind [`Schedule::identity`] gives a game's own schedule.
const NAMED: u8 = 2;

impl PartialEq for Schedule {
    #[inline]
    fn eq(&self, other: &Self) -> bool {
        // Planning compares every node's schedule with its selection's: two
        // built-in ones compare by kind alone (comparing their empty names
        // still called `memcmp`, a quarter of a 1,000-node build).
        let ((kind, name), (other_kind, other_name)) = (self.identity(), other.identity());
        kind == other_kind && (kind != NAMED || name == other_name)
    }
}

impl Eq for Schedule {}

impl PartialOrd for Schedule {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Schedule {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.identity().cmp(&other.identity())
    }
}

impl std::hash::Hash for Schedule {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.identity().hash(state);
    }
}

/// Where an item sits among its siblings (the children of one group, or the
/// ungrouped items): before or after every sibling that does not say the same.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SiblingOrder {
    /// Before every sibling that is not `First`.
    First,
    /// After every sibling that is not `Last`.
    Last,
}

/// What a group's, stage's or set's run condition node gates: every member
/// of the group it is in (at any depth), or of its stage or set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Gated {
    Group,
    Stage,
    Set,
}

/// A node's organisation: everything but its accesses and explicit edges.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Placement {
    /// The group it is a child of.
    pub group: Option<Label>,
    /// Its order among its siblings.
    pub sibling: Option<SiblingOrder>,
    /// Its phase, if it names one.
    pub phase: Option<Phase>,
    /// The stage it is a member of.
    pub stage: Option<Label>,
    /// The set it is a member of.
    pub set: Option<Label>,
    /// Its cadence.
    pub cadence: Cadence,
    /// Its schedule.
    pub schedule: Schedule,
    /// Breaks ties among nodes nothing else orders, before registration
    /// order: lower first (a node without one counts as 0). Never overrides
    /// a dependency. Unique among the nodes of one plan (SL0005).
    pub order: Option<i32>,
}

impl Placement {
    pub(crate) const DEFAULT: &'static Placement = &Placement {
        group: None,
        sibling: None,
        phase: None,
        stage: None,
        set: None,
        cadence: Cadence::Variable,
        schedule: Schedule::Update,
        order: None,
    };
}

/// A group of nodes and other groups (reference 004) that orders as a whole:
/// when it must precede something, every node inside it, at any depth,
/// precedes that; an empty group still carries order through it.
///
/// ```
/// use sluice::Group;
/// let physics = Group::new("Physics").in_group("Simulation").order_first().after("Input");
/// assert_eq!(physics.name(), "Physics");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Group {
    name: Label,
    parent: Option<Label>,
    sibling: Option<SiblingOrder>,
    after: Vec<Label>,
    before: Vec<Label>,
    spike_exempt: bool,
    pinned: bool,
    silenced: Silenced,
}

impl Group {
    /// A top-level group called `name` (groups and nodes share one namespace).
    pub fn new(name: impl Into<Label>) -> Self {
        Self {
            name: name.into(),
            parent: None,
            sibling: None,
            after: Vec::new(),
            before: Vec::new(),
            spike_exempt: false,
            pinned: false,
            silenced: Silenced::default(),
        }
    }

    /// Silences the ambiguities (SL0008) between every node in the group,
    /// at any depth, and `target`: a node (by name or key) or a group
    /// (every node in it). Still reported, as silenced by this group; see
    /// [`NodeBuilder::ambiguous_with`](crate::NodeBuilder::ambiguous_with).
    /// Naming one target twice is a no-op; naming the group itself silences
    /// the pairs among its own members.
    pub fn ambiguous_with(mut self, target: impl Into<Label>) -> Self {
        self.silenced.add(target.into());
        self
    }

    /// Silences every ambiguity (SL0008) of every node in the group, at any
    /// depth; each is still reported as silenced by this group.
    pub fn ambiguous_with_all(mut self) -> Self {
        self.silenced.all = true;
        self
    }

    /// The ambiguities the group silences on purpose.
    pub fn silenced(&self) -> &Silenced {
        &self.silenced
    }

    /// The spike watch reports no node inside the group, at any depth (as
    /// [`NodeBuilder::spike_exempt`](crate::NodeBuilder::spike_exempt) on each).
    pub fn spike_exempt(mut self) -> Self {
        self.spike_exempt = true;
        self
    }

    /// Whether the group is [`spike_exempt`](Group::spike_exempt).
    pub fn is_spike_exempt(&self) -> bool {
        self.spike_exempt
    }

    /// Pins every node inside the group, at any depth, to the main thread
    /// (as [`NodeBuilder::pinned`](crate::NodeBuilder::pinned) on each).
    /// Order is unchanged.
    pub fn pinned(mut self) -> Self {
        self.pinned = true;
        self
    }

    /// Whether the group pins its members.
    pub fn is_pinned(&self) -> bool {
        self.pinned
    }

    /// Makes the group a child of `parent`.
    pub fn in_group(mut self, parent: impl Into<Label>) -> Self {
        self.parent = Some(parent.into());
        self
    }

    /// Puts the group before every sibling that is not `order_first`.
    pub fn order_first(mut self) -> Self {
        self.sibling = Some(SiblingOrder::First);
        self
    }

    /// Puts the group after every sibling that is not `order_last`.
    pub fn order_last(mut self) -> Self {
        self.sibling = Some(SiblingOrder::Last);
        self
    }

    /// Every node inside the group follows the node or group `target`.
    pub fn after(mut self, target: impl Into<Label>) -> Self {
        self.after.push(target.into());
        self
    }

    /// Every node inside the group precedes the node or group `target`.
    pub fn before(mut self, target: impl Into<Label>) -> Self {
        self.before.push(target.into());
        self
    }

    /// The group's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    pub(crate) fn name_label(&self) -> &Label {
        &self.name
    }

    /// The group it is a child of.
    pub fn parent(&self) -> Option<&str> {
        self.parent.as_deref()
    }

    /// Its order among its siblings.
    pub fn sibling_order(&self) -> Option<SiblingOrder> {
        self.sibling
    }

    /// What it follows.
    pub fn after_targets(&self) -> &[Label] {
        &self.after
    }

    /// What it precedes.
    pub fn before_targets(&self) -> &[Label] {
        &self.before
    }
}

/// Stages and sets (reference 002) are flat ordered groups of one kind each.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RankKind {
    /// A stage: once any is declared, every node names one.
    Stage,
    /// A set: membership is optional.
    Set,
}

impl RankKind {
    /// `stage` or `set`.
    pub fn name(self) -> &'static str {
        match self {
            RankKind::Stage => "stage",
            RankKind::Set => "set",
        }
    }
}

/// A declared stage or set: its name and order number. Every member of one
/// precedes every member of each of the same kind with a larger number.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rank {
    /// Stage or set.
    pub kind: RankKind,
    /// Unique among its kind.
    pub name: Label,
    /// Unique among its kind; smaller runs first.
    pub order: i64,
}

/// A world's groups, stages and sets, in declaration order.
#[derive(Debug, Clone, Default)]
pub struct Organisation {
    groups: Vec<Group>,
    ranks: Vec<Rank>,
    /// Whether any node names a phase (phases add nothing until one does);
    /// kept by the graph as nodes are added.
    pub(crate) phases_named: bool,
}

impl Organisation {
    /// Declares a group.
    pub fn add_group(&mut self, group: Group) {
        self.groups.push(group);
    }

    /// Declares a stage or set.
    pub fn add_rank(&mut self, kind: RankKind, name: impl Into<Label>, order: i64) {
        self.ranks.push(Rank {
            kind,
            name: name.into(),
            order,
        });
    }

    /// The groups, in declaration order.
    pub fn groups(&self) -> &[Group] {
        &self.groups
    }

    /// The stages and sets, in declaration order.
    pub fn ranks(&self) -> &[Rank] {
        &self.ranks
    }

    /// Whether nothing beyond the flat plan is declared: no group, stage, set
    /// or phase (the planner's fast path).
    pub(crate) fn is_flat(&self) -> bool {
        self.groups.is_empty() && self.ranks.is_empty() && !self.phases_named
    }
}

//! Run conditions on groups, stages and sets (bevy's
//! `configure_sets(MySet.run_if(cond))`): evaluated once per iteration for
//! every member, which is skipped, not failed, when one is false.
//!
//! Each condition is a node of its own, `run_if(<name>)`, placed in the
//! group, stage or set it gates. The planner orders it before every other
//! member (`plan/conditions.rs`), so it reads what a serial run would have
//! left when the first member starts, on every executor; its parameters are
//! its node's declarations, checked by the one gate as any run condition's
//! are ([`DeclaredBy::Condition`](crate::DeclaredBy::Condition)).

use crate::node::{Label, NodeBuilder};
use crate::organise::Gated;
use crate::plan::NodeIndex;
use crate::system::ConditionFn;
use crate::world::World;

impl World {
    /// Runs every member of the group `group` (at any depth: nested groups'
    /// members and conditions too) only in iterations where `condition`
    /// holds. The condition is evaluated **once per iteration**, before
    /// every member, as the node `run_if(<group>)` (the returned index);
    /// when it is false each member is skipped, as a node whose own
    /// [`run_if`](crate::NodeSpec::run_if) is false: its body does not run
    /// and its change cursor stays. Several conditions on one group must
    /// all hold; combine them with [`ConditionExt`](crate::ConditionExt).
    ///
    /// - **Order**: the condition node is a member of the group, ordered
    ///   before every other member; it reads its services in their lanes
    ///   there (after the writers the group follows), the same on every
    ///   executor.
    /// - **Panics**: a condition that panics fails the iteration like any
    ///   node, naming `run_if(<group>)`; no member starts after it, and the
    ///   next iteration evaluates it again.
    /// - **Plans**: the condition runs in the variable cadence of the
    ///   update schedule; a member in another cadence or schedule is SL0003.
    /// - **Names**: an undeclared group is SL0002, as a node naming it.
    /// - **Lifting it**: removing or disabling the condition node
    ///   ([`World::remove_node`], [`World::set_enabled`]) lifts the
    ///   condition from the next plan on.
    ///
    /// ```
    /// use sluice::{Group, NodeBuilder, World};
    ///
    /// struct Paused(bool);
    /// #[derive(Default)]
    /// struct Steps(u32);
    ///
    /// let mut world = World::new();
    /// world.insert(Paused(false));
    /// world.insert(Steps::default());
    /// world.add_group(Group::new("Physics"));
    /// world.run_group_if("Physics", |p: &Paused| !p.0);
    /// world.add_system(NodeBuilder::new("integrate").in_group("Physics").system(|s: &mut Steps| s.0 += 1));
    /// world.run_iteration()?;
    /// world.insert(Paused(true));
    /// world.run_iteration()?;
    /// assert_eq!(world.get::<Steps>().unwrap().0, 1);
    /// # Ok::<(), sluice::IterationError>(())
    /// ```
    pub fn run_group_if<M: 'static, C: ConditionFn<M>>(
        &mut self,
        group: impl Into<Label>,
        condition: C,
    ) -> NodeIndex {
        self.add_gate(group.into(), Gated::Group, condition)
    }

    /// Runs every member of the stage `stage` only in iterations where
    /// `condition` holds: as [`run_group_if`](Self::run_group_if), with the
    /// condition node `run_if(<stage>)` a member of the stage.
    pub fn run_stage_if<M: 'static, C: ConditionFn<M>>(
        &mut self,
        stage: impl Into<Label>,
        condition: C,
    ) -> NodeIndex {
        self.add_gate(stage.into(), Gated::Stage, condition)
    }

    /// Runs every member of the set `set` only in iterations where
    /// `condition` holds: as [`run_group_if`](Self::run_group_if), with the
    /// condition node `run_if(<set>)` a member of the set.
    pub fn run_set_if<M: 'static, C: ConditionFn<M>>(
        &mut self,
        set: impl Into<Label>,
        condition: C,
    ) -> NodeIndex {
        self.add_gate(set.into(), Gated::Set, condition)
    }

    /// The condition node of `name`: `run_if(name)`, numbered (`#2`...)
    /// when the name already has one, so its key is its own.
    fn condition_node(&self, name: &str) -> NodeBuilder {
        let base = format!("run_if({name})");
        let taken = |candidate: &str| self.graph.nodes().iter().any(|n| n.key() == candidate);
        let mut label = base.clone();
        let mut k = 1;
        while taken(&label) {
            k += 1;
            label = format!("{base}#{k}");
        }
        NodeBuilder::new(label)
    }

    /// Registers the condition node of the group, stage or set `name`.
    fn add_gate<M: 'static, C: ConditionFn<M>>(
        &mut self,
        name: Label,
        gated: Gated,
        condition: C,
    ) -> NodeIndex {
        let node = self.condition_node(&name).gating(gated);
        let node = match gated {
            Gated::Group => node.in_group(name),
            Gated::Stage => node.in_stage(name),
            Gated::Set => node.in_set(name),
        };
        // Its body does nothing: the cell evaluates the condition, and the
        // world's gate records the verdict (`WorldNode::Gate`).
        self.add_system(node.run(|_| {}).run_if(condition))
    }
}

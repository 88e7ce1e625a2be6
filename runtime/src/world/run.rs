//! One iteration: make sure a plan is current, run it, cross the boundary.

use std::panic::{self, AssertUnwindSafe};
use std::sync::Arc;
use std::time::{Duration, Instant};

#[cfg(not(loom))]
use sluice_collections::Pooled;

use crate::ServiceId;
use crate::exec::{NodeContext as RunContext, NodeFailure, NodeOutcome, RunStats, SystemTiming};
use crate::organise::Schedule;
use crate::plan::conditions::NodeGates;
use crate::plan::{GraphView, Level, Plan, Plans};
use crate::system::{BoundaryNodes, NextValue, NodeEnv, ServiceCells};
use crate::world::adaptive::Choice;
#[cfg(any(debug_assertions, feature = "checked"))]
use crate::world::checked::BorrowTracker;
use crate::world::commands::RecordedChange;
use crate::world::error::{
    BoundaryFailure, BoundaryStep, IterationError, MissingService, NodePanic,
};
use crate::world::node::WorldNode;
use crate::world::schedule::{Executions, Part, PlanOutcome};
use crate::world::{BUILTIN_NODES, ExecutorKind, World};

impl World {
    /// Plans now when registrations changed between iterations (or on the
    /// first run); reports the plan factory's last failure once.
    pub(super) fn ensure_plan(&mut self) -> Result<(), IterationError> {
        // Looked at before it is taken: taking moves the whole error, which
        // every iteration would pay for.
        if self.plan_error.is_some()
            && let Some(error) = self.plan_error.take()
        {
            return Err(error);
        }
        // A whole-world system's registrations are planned after the
        // iteration it runs in: its plan stays in place until then.
        if (!self.stale || self.running_whole)
            && let Some(plans) = &self.plans
        {
            if self.recheck_services {
                self.check_services(plans)?;
                self.recheck_services = false;
            }
            return Ok(());
        }
        // Plugins added since the last plan: none may be left waiting.
        if self.plugins_waiting() {
            self.finish_plugins().map_err(IterationError::Plugin)?;
        }
        let plans = self
            .graph
            .build_all(&self.registrations().options)
            .map_err(IterationError::Plan)?;
        self.check_services(&plans)?;
        self.recheck_services = false;
        let creation = self.creation_order(&plans).map_err(IterationError::Plan)?;
        self.install(Arc::new(plans), None);
        self.stale = false;
        let mut failures = Vec::new();
        self.create(&creation, &mut failures);
        // These plans are already what the scheduling factories would build
        // from the current registrations: let them skip until those move.
        let registry = self.graph.registry();
        for node in &mut self.nodes[..BUILTIN_NODES] {
            if let WorldNode::Body(cell) = node {
                cell.mark_current(registry);
            }
        }
        if failures.is_empty() {
            Ok(())
        } else {
            Err(IterationError::Boundary(failures))
        }
    }

    /// Every service a planned node reads or gates must be held by the world
    /// or produced by some node, unless the node declares it only optionally
    /// (`Option<&T>`); lists every access that is none of these.
    fn check_services(&self, plans: &Plans) -> Result<(), IterationError> {
        let registry = self.graph.registry();
        let nodes = self.graph.nodes();
        let mut produced = vec![false; registry.table().len()];
        for (_, plan) in plans.iter() {
            for node in plan.order() {
                for id in nodes[node.index()].access().produced() {
                    produced[id.index()] = true;
                }
            }
        }
        let held = |id: ServiceId| {
            produced[id.index()] || registry.slot(id).is_some_and(|slot| slot.value.is_some())
        };
        let mut missing = Vec::new();
        for (_, plan) in plans.iter() {
            for node in plan.order() {
                let descriptor = &nodes[node.index()];
                let access = descriptor.access();
                let touched = access.shared().map(|id| (id, false));
                for (id, gated) in touched.chain(access.gated().map(|id| (id, true))) {
                    // An `Option<&T>` parameter is `None` while nothing holds `T`.
                    if !held(id) && !descriptor.is_optional(id) {
                        missing.push(MissingService {
                            node: nodes[node.index()].name().to_owned(),
                            service: registry.table().name(id).to_owned(),
                            gated,
                        });
                    }
                }
            }
        }
        if missing.is_empty() {
            Ok(())
        } else {
            Err(IterationError::MissingServices(missing))
        }
    }

    fn registrations(&self) -> &crate::world::Registrations {
        self.graph
            .registry()
            .get()
            .expect("every world holds its Registrations")
    }

    /// Makes `plans` current with their compiled `executions` (compiled here
    /// when `None`); the outgoing states go back to the pool. Timings stay
    /// readable, one entry per registered node. Reports the plans' warnings
    /// (once: plans are installed once).
    fn install(&mut self, plans: Arc<Plans>, executions: Option<Executions>) {
        let mut executions =
            executions.unwrap_or_else(|| Executions::compile(&plans, &self.graph.view()));
        for run in &mut executions.0 {
            for execution in run.executions() {
                execution.state.set_timing(self.clocks_on(), self.timing);
            }
        }
        let mut old = std::mem::replace(&mut self.executions, executions);
        for (index, run) in old.0.iter_mut().enumerate() {
            let mut new = self.executions.0.get_mut(index).map(|new| new.executions());
            for execution in run.executions() {
                // What was measured of a plan's part is the starting point
                // for the same part of its next plan (probed again soon).
                if let Some(new) = new.as_mut().and_then(Iterator::next) {
                    new.adaptive = execution.adaptive.clone();
                    new.adaptive.reset();
                }
                let state = std::mem::take(&mut execution.state);
                // Under loom there are no per-type pools: dropped.
                #[cfg(not(loom))]
                crate::exec::ExecutionState::pool().give_back(state);
                #[cfg(loom)]
                drop(state);
            }
        }
        self.timings = self.carried_timings(&plans);
        self.run_stats
            .resize_with(plans.iter().count(), RunStats::default);
        let nodes = &self.nodes;
        self.spikes.fit(Some(&plans), self.graph.view(), |node| {
            nodes.get(node).is_some_and(WorldNode::skippable)
        });
        report_warnings(plans.variable());
        self.current.store(Some(Arc::clone(plans.variable())));
        self.plans = Some(plans);
        #[cfg(any(debug_assertions, feature = "checked"))]
        {
            let services = self.graph.registry().table().len();
            if self.borrows.services() != services {
                self.borrows = crate::world::checked::BorrowTracker::new(services);
            }
        }
    }

    /// Per plan of `plans`: one entry per registered node (registrations
    /// are only appended, so a node keeps its index), holding the last
    /// measurement of a node that stays in the plan of the same selection
    /// and the default for every other (removed, disabled, or now in
    /// another plan): only a plan's own nodes ever read as having run.
    fn carried_timings(&mut self, plans: &Plans) -> Vec<Vec<SystemTiming>> {
        let registered = self.graph.nodes().len();
        let old = std::mem::take(&mut self.timings);
        let old_plans = self.plans.as_deref();
        plans
            .iter()
            .map(|(selection, plan)| {
                let mut timings = vec![SystemTiming::default(); registered];
                let before = old_plans
                    .and_then(|old| old.iter().position(|(s, _)| s == selection))
                    .and_then(|index| old.get(index));
                if let Some(before) = before {
                    // A slot of a node outside its plan is always the
                    // default, so the old slot is that node's own.
                    for node in plan.order() {
                        if let (Some(slot), Some(&last)) =
                            (timings.get_mut(node.index()), before.get(node.index()))
                        {
                            *slot = last;
                        }
                    }
                }
                timings
            })
            .collect()
    }

    /// Runs the `Startup` schedule if it has not run yet.
    pub(super) fn run_startup(&mut self) -> Result<(), IterationError> {
        if self.started {
            return Ok(());
        }
        self.started = true;
        let plans = self.plans.as_ref().expect("planned before starting");
        let startup = plans
            .iter()
            .position(|(selection, _)| selection.schedule == Schedule::Startup);
        if let Some(index) = startup {
            self.run_plan(index)?;
        }
        // The first state point: initial values entered.
        self.settle_states()
    }

    /// Runs every node of the variable plan once, then crosses the iteration
    /// boundary. The `Startup` schedule runs first, once.
    ///
    /// With the parallel executor the calling thread is worker 0 and works
    /// until the iteration is quiescent: every node done, prioritized loose
    /// tasks drained, regular ones given their window.
    ///
    /// # Errors
    /// [`IterationError::Plan`] when the registrations do not plan (nothing
    /// runs); [`IterationError::NodePanicked`] naming the first node whose body
    /// panicked: nothing new started after it, running work finished, the
    /// boundary was crossed, and the next iteration runs normally.
    pub fn run_iteration(&mut self) -> Result<(), IterationError> {
        if self.running_whole {
            return Err(IterationError::Reentrant);
        }
        self.ensure_plan()?;
        self.run_startup()?;
        self.run_plan(0)?;
        // The state point (`crate::state`): after the boundary, only when
        // the frame ran whole.
        self.settle_states()
    }

    /// Runs plan `index` of [`Plans::iter`] once, part by part (the nodes
    /// between two whole-world systems on the executor, each whole-world
    /// system alone on this thread), and crosses the boundary. What failed
    /// nodes recorded is dropped there, unlanded.
    pub(super) fn run_plan(&mut self, index: usize) -> Result<(), IterationError> {
        self.check_main_thread()?;
        let parts = self.executions.0[index].parts.len();
        let mut failure = None;
        debug_assert!(self.failed_nodes.is_empty(), "cleared by every boundary");
        if let Some(stats) = self.run_stats.get_mut(index).filter(|_| self.timing) {
            stats.clear();
        }
        for part in 0..parts {
            let result = match &self.executions.0[index].parts[part] {
                Part::Nodes(_) => self.execute(index, part).inspect_err(|failure| {
                    let Part::Nodes(execution) = &self.executions.0[index].parts[part] else {
                        unreachable!("matched above")
                    };
                    // Vertex indices to registration indices and plan
                    // positions (the first failure's first, each once); a
                    // barrier never fails.
                    for &vertex in failure.nodes() {
                        if let Some(&node) = execution.vertex_nodes.get(vertex)
                            && node != u32::MAX
                        {
                            self.failed_nodes.push(node);
                            self.failed_ranks.push(execution.vertex_ranks[vertex]);
                        }
                    }
                }),
                &Part::Whole(node, rank) => self.run_whole_world(index, node).inspect_err(|_| {
                    self.failed_nodes.push(node);
                    self.failed_ranks.push(rank);
                }),
            };
            if let Err(failed) = result {
                failure = Some(failed);
                break;
            }
        }
        let boundary = self.cross_boundary();
        if index == 0 {
            self.iterations += 1;
        }
        let Some(failure) = failure else {
            debug_assert!(self.failed_nodes.is_empty() && self.failed_ranks.is_empty());
            return if boundary.is_empty() {
                Ok(())
            } else {
                Err(IterationError::Boundary(boundary))
            };
        };
        // Drained, not dropped: its buffer serves the next failure.
        let nodes = self.graph.nodes();
        let names = self
            .failed_nodes
            .drain(..)
            .map(|node| nodes[node as usize].name().to_owned())
            .collect();
        self.failed_ranks.clear();
        Err(IterationError::NodePanicked(NodePanic::new(
            names, failure, boundary,
        )))
    }

    /// Evaluates the run conditions of the whole-world system `node`, once,
    /// on this thread, and takes its body out if they hold (the caller puts
    /// it back); a condition's panic is returned.
    pub(super) fn take_due_whole_body(
        &mut self,
        node: u32,
    ) -> std::thread::Result<Option<crate::world::node::WholeWorldBody>> {
        self.stamp_service_changes();
        let entities = self.builtin.entities;
        let WorldNode::Whole(cell) = &mut self.nodes[node as usize] else {
            return Ok(None);
        };
        let cell = cell.get_mut();
        // Nothing else runs while a whole-world system is due, so its
        // conditions read the services alone.
        let (graph, slots) = self.graph.parts_mut();
        let env = NodeEnv {
            cells: ServiceCells::new(slots).with_clock(entities),
            graph: &graph,
            descriptor: &graph.nodes()[node as usize],
        };
        // SAFETY: the world is borrowed exclusively (`&mut self`) and no
        // part of a plan runs now (between its parts, or between
        // iterations for a one-shot system), so the conditions' reads
        // (declared by the node, which is exclusive) overlap with nothing.
        let holds =
            panic::catch_unwind(AssertUnwindSafe(|| unsafe { cell.conditions.hold(&env) }))?;
        // Taken only when due: a body left in place is kept for later.
        Ok(if holds { cell.body.take() } else { None })
    }

    /// Runs the whole-world system `node` of plan `index` with the world to
    /// itself.
    fn run_whole_world(&mut self, index: usize, node: u32) -> Result<(), NodeFailure> {
        // A member of a group, stage or set whose condition was false.
        if let Some(gates) = &self.executions.0[index].gates
            && !WorldNode::gates_open(&self.nodes, gates.of(node as usize))
        {
            return Ok(());
        }
        let mut body = match self.take_due_whole_body(node) {
            Ok(Some(body)) => body,
            Ok(None) => return Ok(()),
            Err(payload) => return Err(NodeFailure::new(node as usize, payload)),
        };
        let started = self.clocks_on().then(Instant::now);
        self.running_whole = true;
        let result = panic::catch_unwind(AssertUnwindSafe(|| body(self)));
        self.running_whole = false;
        if let WorldNode::Whole(cell) = &mut self.nodes[node as usize] {
            cell.get_mut().body = Some(body);
        }
        if let Some(started) = started {
            let timing = SystemTiming {
                start: Duration::ZERO,
                duration: started.elapsed(),
                ran: true,
            };
            if result.is_ok() {
                self.spikes
                    .observe_one(node, timing.duration, self.iterations);
            }
            // Its own plan's entry only: in every other plan it did not run.
            if let Some(slot) = self
                .timings
                .get_mut(index)
                .and_then(|timings| timings.get_mut(node as usize))
                .filter(|_| self.timing)
            {
                *slot = timing;
            }
        }
        result.map_err(|payload| NodeFailure::new(node as usize, payload))
    }

    /// Stamps the service changes made since the last part ran (between
    /// iterations, or by a whole-world system) with the change clock's next
    /// tick, so `Tracked<T>` readers compare them as the gated accesses
    /// made while nodes run, which stamp themselves.
    fn stamp_service_changes(&mut self) {
        let next = self.entities().tick().wrapping_add(1);
        self.graph.registry_mut().stamp_unstamped(next);
    }

    fn execute(&mut self, index: usize, part: usize) -> Result<(), NodeFailure> {
        self.stamp_service_changes();
        #[cfg(any(debug_assertions, feature = "checked"))]
        {
            let services = self.graph.registry().table().len();
            if self.borrows.services() != services {
                self.borrows = crate::world::checked::BorrowTracker::new(services);
            }
            self.borrows.reset();
        }
        #[cfg(loom)]
        let own = self.executions.0[index].is_own(part);
        let run = &mut self.executions.0[index];
        let gates = run.gates.as_deref();
        let Part::Nodes(execution) = &mut run.parts[part] else {
            return Ok(());
        };
        let (choice, timed) = match self.executor {
            ExecutorKind::Parallel => (Choice::Pool, false),
            ExecutorKind::Serial => (Choice::Inline, false),
            ExecutorKind::Adaptive if super::pool_threads(&self.pool) == 1 => {
                (Choice::Inline, false)
            }
            // A model explores the pool's interleavings; timing it is moot.
            #[cfg(loom)]
            ExecutorKind::Adaptive => (Choice::Pool, false),
            #[cfg(not(loom))]
            ExecutorKind::Adaptive => execution.adaptive.choose(),
        };
        // An inline run of a steady frame leaves out the world's own
        // factories: nothing moved their inputs, so they would only be
        // visited to skip their bodies.
        let skip: &[u32] = if matches!(choice, Choice::Inline)
            && !execution.own_positions.is_empty()
            && own_factories_unchanged(&mut self.nodes, self.graph.registry())
        {
            &execution.own_positions
        } else {
            &[]
        };
        let entities = self.builtin.entities;
        let (graph, slots) = self.graph.parts_mut();
        let body = node_runner(
            self.id,
            &self.nodes,
            Vertices {
                nodes: &execution.vertex_nodes,
                ranks: &execution.vertex_ranks,
                gates: execution.vertex_gates.as_deref().zip(gates),
            },
            ServiceCells::new(slots).with_clock(entities),
            &graph,
            #[cfg(any(debug_assertions, feature = "checked"))]
            &self.borrows,
        );
        // A model runs the world's own factories on this thread, before the
        // user's nodes, and leaves the loose tasks to the user's part.
        #[cfg(loom)]
        if own {
            return self
                .serial
                .run(&execution.graph, &mut execution.state, body);
        }
        let started = timed.then(Instant::now);
        // A world run from inside a node of its own pool (one world's system
        // running another on the shared pool) runs inline: the pool's run
        // would wait for the very thread it is called on.
        let pool = match choice {
            Choice::Pool => Some(super::pool_or_shared(&self.pool))
                .filter(|pool| !pool.runs_on_current_thread()),
            Choice::Inline => None,
        };
        let result = match pool {
            Some(pool) => {
                pool.run_with_loose(&execution.graph, &mut execution.state, &self.loose, body)
            }
            None => self.serial.run_with_loose_skipping(
                &execution.graph,
                &mut execution.state,
                &self.loose,
                skip,
                body,
            ),
        };
        if let (Some(started), Ok(())) = (started, &result) {
            execution.adaptive.record(choice, started.elapsed());
        }
        if self.spikes.is_on() {
            // After the run, on this thread, from the clocks just read: the
            // watch adds nothing to the nodes' own path.
            let failed = result.as_ref().err().map_or(&[][..], NodeFailure::nodes);
            let nodes = &mut self.nodes;
            self.spikes.observe(
                execution.state.node_nanos(),
                &execution.vertex_nodes,
                failed,
                self.iterations,
                |node| nodes[node as usize].skipped(),
            );
        }
        if self.timing {
            // A serial part's state keeps an earlier parallel run's figures.
            if let (Some(stats), Choice::Pool) = (self.run_stats.get_mut(index), choice) {
                stats.absorb(execution.state.run_stats());
            }
            // Vertex order to registration order; barriers have no entry.
            let timings = &mut self.timings[index];
            for (vertex, timing) in execution.state.timings().iter().enumerate() {
                if let Some(slot) = timings.get_mut(execution.vertex_nodes[vertex] as usize) {
                    *slot = *timing;
                }
            }
        }
        result
    }

    /// The iteration boundary: `Next<T>` values replace their services, the
    /// plan factory's output becomes current, and recorded commands land;
    /// what the nodes in `failed_nodes` recorded (commands, messages,
    /// `Next<T>` values) is dropped instead.
    ///
    /// Transactional per step: a panic in one swap or command (a value's
    /// `Drop`) is caught and listed, and every other step still lands, in
    /// record order. Nothing else here runs user code.
    fn cross_boundary(&mut self) -> Vec<BoundaryFailure> {
        let _span = tracing::info_span!("boundary").entered();
        let mut failures = Vec::new();
        let (table, slots) = self.graph.registry_mut().split_mut();
        self.hooks
            .apply(slots, &self.failed_nodes, |target, payload| {
                let service = table.name(target).to_owned();
                failures.push(BoundaryFailure::new(
                    BoundaryStep::NextSwap { service },
                    payload,
                ));
            });
        let outcome = self
            .take_pending::<PlanOutcome>(self.builtin.next_plan)
            .map(|outcome| outcome.0);
        let executions = self.take_pending::<Executions>(self.builtin.next_execution);
        match outcome {
            Some(Ok(plan)) => match self
                .check_services(&plan)
                .and_then(|()| self.creation_order(&plan).map_err(IterationError::Plan))
            {
                // The execution factory may not have run: a node's panic
                // stops new work, possibly before the factory started.
                Ok(creation) => {
                    self.install(plan, executions);
                    self.create(&creation, &mut failures);
                }
                Err(error) => {
                    // Reported by the next iteration, which then plans again
                    // itself: a service inserted meanwhile lets it through.
                    self.plan_error = Some(error);
                    self.stale = true;
                }
            },
            Some(Err(errors)) => self.plan_error = Some(IterationError::Plan(errors)),
            None => {}
        }
        self.apply_commands(&mut failures);
        // Hooks and observers fired by direct changes since the last one.
        self.report_observer_failures(&mut failures);
        self.messages_boundary(&mut failures);
        self.one_shots.at_boundary();
        // What the next iteration writes is newer than anything so far;
        // removal records of the last two iterations are kept.
        let (oldest, previous) = self.removal_ticks;
        let entities = self.entities_mut();
        let now = entities.advance_tick();
        // However long the game runs, ticks stay comparable.
        let clamped = entities.check_ticks();
        entities.trim_removals(oldest);
        if let Some(now) = clamped {
            for node in &mut self.nodes {
                node.clamp_cursors(now);
            }
            self.graph.registry_mut().clamp_ticks(now);
        }
        self.removal_ticks = (previous, now);
        failures
    }

    /// Every message type's boundary: what writers and other threads sent
    /// joins the log (what failed nodes sent is dropped); the cursors of
    /// removed nodes go; read messages are dropped.
    fn messages_boundary(&mut self, failures: &mut Vec<BoundaryFailure>) {
        self.settle_messages(false, failures);
    }

    /// Every message type's boundary, or (`gather_only`, at the end of a
    /// one-shot system's run) only what running nodes sent joining the
    /// log, less what failed ones sent.
    pub(super) fn settle_messages(
        &mut self,
        gather_only: bool,
        failures: &mut Vec<BoundaryFailure>,
    ) {
        let nodes = &self.nodes;
        let live = |node: u32| {
            nodes
                .get(node as usize)
                .is_some_and(|node| !matches!(node, WorldNode::Removed))
        };
        let (table, slots) = self.graph.registry_mut().split_mut();
        let boundary = BoundaryNodes {
            live: &live,
            failed: &self.failed_nodes,
            failed_ranks: &self.failed_ranks,
            world: self.id,
            gather_only,
        };
        self.hooks
            .apply_messages(slots, &boundary, |service, payload| {
                let service = table.name(service).to_owned();
                failures.push(BoundaryFailure::new(
                    BoundaryStep::Messages { service },
                    payload,
                ));
            });
    }

    /// Takes a built-in factory's pending output without bumping its version
    /// (so its consumers do not rerun for the emptied slot).
    fn take_pending<T: Send + Sync + 'static>(&mut self, id: crate::ServiceId) -> Option<T> {
        self.graph
            .registry_mut()
            .slot_mut(id)?
            .value
            .as_deref_mut()?
            .downcast_mut::<NextValue<T>>()?
            .take()
    }

    /// Lands the ledger of commands recorded during the iteration, but for
    /// those of failed nodes, which are dropped. Nodes they register are
    /// planned by the plan factory during the next iteration.
    fn apply_commands(&mut self, failures: &mut Vec<BoundaryFailure>) {
        // By id, and without moving its version: nothing plans on it, and
        // most boundaries find it empty.
        let queue = self.command_queue_mut();
        if queue.is_empty() {
            return;
        }
        let (queue_id, generation) = queue.stamp();
        let (mut commands, slots) = queue.take_all();
        self.spawns.start(queue_id, generation, slots);
        if !self.failed_nodes.is_empty() {
            self.discard_failed(&mut commands, failures);
        }
        let stale = std::mem::replace(&mut self.stale, false);
        self.land_commands(&mut commands, failures);
        // Registrations from the ledger are planned by the plan factory, not
        // before the next iteration: bump what it reads instead, and only
        // when a command registered something (a game inserting a service
        // every frame does not replan every frame).
        let registered = std::mem::replace(&mut self.stale, stale);
        if registered
            && let Some(slot) = self
                .graph
                .registry_mut()
                .slot_mut(self.builtin.registrations)
        {
            slot.version += 1;
        }
    }

    /// Lands what a one-shot system recorded into `queue`, now, in record
    /// order (its `Spawned` handles resolve among its own commands); what
    /// failed to land goes to `failures`.
    pub(super) fn land_one_shot_commands(
        &mut self,
        queue: &mut crate::world::CommandQueue,
        failures: &mut Vec<BoundaryFailure>,
    ) {
        if queue.is_empty() {
            return;
        }
        let (queue_id, generation) = queue.stamp();
        let (mut commands, slots) = queue.take_all();
        // Landing inside a boundary (a `Commands::run_system`): the
        // boundary's own spawns table is put back after.
        let outer = std::mem::take(&mut self.spawns);
        self.spawns.start(queue_id, generation, slots);
        self.land_commands(&mut commands, failures);
        self.spawns = outer;
    }

    /// Lands `commands` in order; each failure is listed and the others
    /// still land.
    fn land_commands(
        &mut self,
        commands: &mut Vec<RecordedChange>,
        failures: &mut Vec<BoundaryFailure>,
    ) {
        for (index, command) in commands.drain(..).enumerate() {
            let RecordedChange {
                label,
                change,
                slot,
                ..
            } = command;
            // The world stays consistent across a panic here: the only user
            // code a command runs is a replaced value's `Drop`, which runs
            // after the new value and its version are in place (the entity
            // store finishes its bookkeeping before dropping, likewise).
            let landed = panic::catch_unwind(AssertUnwindSafe(|| change(self)));
            let step = || BoundaryStep::Command {
                index,
                what: label.to_string(),
            };
            match landed {
                Ok(Ok(None)) => {}
                Ok(Ok(Some(spawned))) => self.spawns.landed(slot, spawned),
                Ok(Err(refused)) => failures.push(BoundaryFailure::refused(step(), refused)),
                Err(payload) => failures.push(BoundaryFailure::new(step(), payload)),
            }
            // What its hooks and observers failed at, after it.
            self.report_observer_failures(failures);
        }
    }
}

impl World {
    /// The entity a landing command names: alive when recorded, or spawned
    /// by an earlier command of this boundary.
    pub(crate) fn resolve(
        &self,
        entity: crate::world::CommandEntity,
    ) -> Result<crate::entity::Entity, crate::entity::EntityError> {
        self.spawns.resolve(entity)
    }

    /// Drops, unlanded, the commands of `commands` that failed nodes
    /// recorded; a `Drop` that panics (a value the command carried) is
    /// listed, and the others are dropped all the same.
    fn discard_failed(
        &self,
        commands: &mut Vec<RecordedChange>,
        failures: &mut Vec<BoundaryFailure>,
    ) {
        let failed = &self.failed_ranks;
        for command in commands.extract_if(.., |command| failed.contains(&command.rank())) {
            // The failed nodes and their positions, side by side.
            let at = failed
                .iter()
                .position(|&rank| rank == command.rank())
                .expect("extracted for its rank");
            let node = self.graph.nodes()[self.failed_nodes[at] as usize]
                .name()
                .to_owned();
            let what = command.label.to_string();
            let dropped = panic::catch_unwind(AssertUnwindSafe(move || drop(command)));
            if let Err(payload) = dropped {
                let step = BoundaryStep::Discard { node, what };
                failures.push(BoundaryFailure::new(step, payload));
            }
        }
    }
}

/// Emits each warning of a newly installed `plan` (SL0008 ambiguities, at
/// [`AmbiguityLevel::Warn`](crate::plan::AmbiguityLevel::Warn)), once per
/// plan: as a `tracing` warning event whose `code` field is the diagnostic's
/// code when a subscriber is listening, else on stderr, so that a program
/// with no subscriber still sees it (a warning nobody sees is none).
fn report_warnings(plan: &Plan) {
    let listening = tracing::dispatcher::get_default(|dispatch| {
        !dispatch.is::<tracing::subscriber::NoSubscriber>()
    });
    for diagnostic in plan.diagnostics() {
        if diagnostic.level == Level::Warning {
            if listening {
                tracing::warn!(
                    code = diagnostic.code,
                    nodes = ?diagnostic.nodes,
                    "{diagnostic}"
                );
            } else {
                eprintln!("sluice: {diagnostic}");
            }
        }
    }
}

/// What the node runner reads per vertex of an execution.
#[derive(Clone, Copy)]
struct Vertices<'s> {
    /// Each vertex's node (registration index), `u32::MAX` for a barrier.
    nodes: &'s [u32],
    /// Each vertex's position in the plan's order.
    ranks: &'s [u32],
    /// Each vertex's gate ([`NodeGates::per_vertex`]) and the gates of the
    /// nodes with several; `None` when no vertex has one.
    gates: Option<(&'s [u32], &'s NodeGates)>,
}

/// The body the executor calls for every node of one iteration; `'s` is the
/// run's scope, for which the world's nodes and cells are borrowed.
/// Whether the world's own factories would skip their bodies this
/// iteration (their inputs have not moved since their last run); when so,
/// each is recorded as skipped.
fn own_factories_unchanged(nodes: &mut [WorldNode], registry: &crate::registry::Registry) -> bool {
    nodes[..BUILTIN_NODES].iter_mut().all(|node| match node {
        WorldNode::Body(cell) => cell.skip_unchanged(registry),
        _ => false,
    })
}

fn node_runner<'s>(
    world: u64,
    nodes: &'s [WorldNode],
    vertices: Vertices<'s>,
    cells: ServiceCells<'s>,
    graph: &'s GraphView<'s>,
    #[cfg(any(debug_assertions, feature = "checked"))] borrows: &'s BorrowTracker,
) -> impl Fn(&RunContext<'s>) -> NodeOutcome + Sync + 's {
    let Vertices {
        nodes: vertex_nodes,
        ranks: vertex_ranks,
        gates,
    } = vertices;
    // Inlined into the executor's loop, with `WorldNode::run` and
    // `NodeCell::run` (both `inline(always)`), as it was before the group
    // conditions' gate check grew it past the compiler's threshold: the
    // three out of line cost 41 instructions a node (`empty_callgrind 1000
    // 100 serial`: 168 a node against 124 inlined).
    #[inline(always)]
    move |cx| {
        // A barrier (an order kept as a vertex) completes the moment it runs.
        let Some(&index) = vertex_nodes.get(cx.node()).filter(|&&n| n != u32::MAX) else {
            return NodeOutcome::Done;
        };
        // What it records lands in plan order, then its own, and not at
        // all if it fails: the node enters its recording itself.
        let node = index;
        let rank = vertex_ranks[cx.node()];
        let index = index as usize;
        // A member of a group, stage or set whose condition was false this
        // iteration is skipped (and, if it is itself a condition, closes).
        if let Some((vertex_gates, gates)) = gates
            && !WorldNode::gate_open(nodes, vertex_gates[cx.node()], || gates.of(index))
        {
            if let WorldNode::Gate(gate) = &nodes[index] {
                gate.close();
            }
            return NodeOutcome::Done;
        }
        let env = NodeEnv {
            cells,
            graph,
            descriptor: &graph.nodes()[index],
        };
        // A batch node completes when its last slice does, possibly on another
        // thread before its body returns here, and its successors start then:
        // its borrows are checked at its start but not held, or a successor
        // would find them still taken.
        // A model's printed interleaving: this thread starts the node now,
        // and its body returns when this drops.
        #[cfg(loom)]
        let _traced = crate::model::Span::enter(env.descriptor.name());
        #[cfg(any(debug_assertions, feature = "checked"))]
        let _borrows = {
            let taken = borrows.enter(*graph, index);
            (!matches!(nodes[index], WorldNode::Batch(_))).then_some(taken)
        };
        // SAFETY:
        // - the executor runs each node once per iteration, on one thread,
        //   only after every predecessor in the current plan completed;
        // - the plan orders every pair of nodes that conflict on a service
        //   (checked at run time in checked mode), so the node's declared
        //   accesses overlap with no running node's;
        // - `cells` borrow the world's slots exclusively for the run `'s`.
        unsafe { nodes[index].run(&env, cx, world, node, rank) }
    }
}

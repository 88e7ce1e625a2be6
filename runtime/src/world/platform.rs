//! What plugins and states need of the world's insides: marks to undo a
//! failed plugin's registrations, schedules run by name if planned.

use std::any::Any;

use crate::access::ServiceId;
use crate::organise::Schedule;
use crate::plan::NodeIndex;
use crate::world::{IterationError, World};

/// Where a world's registrations stood, to undo what came after.
pub(crate) struct RegistrationMark {
    nodes: usize,
    /// Per service slot then known: whether it held a value.
    held: Vec<bool>,
}

impl World {
    /// Registers a system in `schedule`: a named [`Schedule`] or a state's
    /// ([`OnEnter`](crate::state::OnEnter), [`OnExit`](crate::state::OnExit),
    /// [`OnTransition`](crate::state::OnTransition)). The same as
    /// `add_system(system.into_system().in_schedule(schedule))`.
    #[track_caller]
    pub fn add_system_to<M>(
        &mut self,
        schedule: impl Into<Schedule>,
        system: impl crate::world::IntoSystem<M>,
    ) -> NodeIndex {
        self.add_system(system.into_system().in_schedule(schedule))
    }

    /// Where registrations stand now.
    pub(crate) fn registration_mark(&self) -> RegistrationMark {
        RegistrationMark {
            nodes: self.nodes.len(),
            held: self
                .graph
                .registry()
                .slots()
                .iter()
                .map(|slot| slot.value.is_some())
                .collect(),
        }
    }

    /// Removes the nodes registered since `mark` and takes out the services
    /// inserted since where the world held none. What was replaced stays.
    pub(crate) fn undo_registrations(&mut self, mark: RegistrationMark) {
        for index in (mark.nodes..self.nodes.len()).rev() {
            // Never created (not planned yet): no hook runs.
            let _ = self.remove_node(NodeIndex(
                u32::try_from(index).expect("fewer than 2^32 nodes"),
            ));
        }
        let registry = self.graph.registry_mut();
        let count = registry.slots().len();
        for index in 0..count {
            if mark.held.get(index).copied().unwrap_or(false) {
                continue;
            }
            let id = ServiceId(u32::try_from(index).expect("fewer than 2^32 services"));
            if registry.table().is_private(id) {
                continue;
            }
            if let Some(slot) = registry.slot_mut(id) {
                drop(slot.value.take());
            }
        }
        self.recheck_services = true;
    }

    /// Plans again before the next run.
    pub(crate) fn mark_stale(&mut self) {
        self.stale = true;
    }

    /// Whether a whole-world system is running (the world may not run).
    pub(crate) fn is_running_whole(&self) -> bool {
        self.running_whole
    }

    /// The id of the service `T` (resolved now if need be).
    pub(crate) fn service_id<T: 'static>(&mut self) -> ServiceId {
        self.graph.registry_mut().resolve::<T>()
    }

    /// The version of the service `id` (moved by every insert and gated
    /// access).
    pub(crate) fn service_version(&self, id: ServiceId) -> u64 {
        self.graph.registry().version(id)
    }

    /// The value of the service `id`, if held.
    pub(crate) fn service_by_id_mut(
        &mut self,
        id: ServiceId,
    ) -> Option<&mut (dyn Any + Send + Sync)> {
        self.graph.registry_mut().slot_mut(id)?.value.as_deref_mut()
    }

    /// Runs `schedule` once (as [`World::run_schedule`]) if any node is in
    /// it; does nothing otherwise.
    pub(crate) fn run_schedule_if_planned(
        &mut self,
        schedule: &Schedule,
    ) -> Result<(), IterationError> {
        self.ensure_plan()?;
        let plans = self.plans.as_ref().expect("planned above");
        let found = plans
            .iter()
            .position(|(selection, _)| selection.schedule == *schedule);
        match found {
            Some(index) => self.run_plan(index),
            None => Ok(()),
        }
    }
}

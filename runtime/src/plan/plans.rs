//! Every plan of a world: one per selection (a cadence of a schedule).

use std::sync::Arc;

use crate::organise::Schedule;
use crate::plan::{Plan, Selection};

/// The plans of every selection a world's nodes name, built together so
/// that each problem is reported once: always the update schedule's
/// variable and fixed cadences, then `Startup` and named schedules as nodes
/// name them.
#[derive(Debug, Clone)]
pub struct Plans {
    entries: Vec<(Selection, Arc<Plan>)>,
}

impl Plans {
    pub(crate) fn new(plans: Vec<(Selection, Plan)>) -> Self {
        Self {
            entries: plans
                .into_iter()
                .map(|(selection, plan)| (selection, Arc::new(plan)))
                .collect(),
        }
    }

    /// The plan of `selection`, if any node names it (the update schedule's
    /// two cadences are always there).
    pub fn get(&self, selection: &Selection) -> Option<&Arc<Plan>> {
        self.entries
            .iter()
            .find(|(s, _)| s == selection)
            .map(|(_, plan)| plan)
    }

    /// The plan of a schedule other than `Update` (whose cadences are
    /// [`variable`](Plans::variable) and [`fixed`](Plans::fixed)).
    pub fn schedule(&self, schedule: &Schedule) -> Option<&Arc<Plan>> {
        self.entries
            .iter()
            .find(|(s, _)| &s.schedule == schedule)
            .map(|(_, plan)| plan)
    }

    /// The update schedule's variable cadence: what every update runs.
    pub fn variable(&self) -> &Arc<Plan> {
        &self.entries[0].1
    }

    /// The update schedule's fixed cadence.
    pub fn fixed(&self) -> &Arc<Plan> {
        &self.entries[1].1
    }

    /// Every selection and its plan.
    pub fn iter(&self) -> impl Iterator<Item = (&Selection, &Arc<Plan>)> {
        self.entries
            .iter()
            .map(|(selection, plan)| (selection, plan))
    }
}

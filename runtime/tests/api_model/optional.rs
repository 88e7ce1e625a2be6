//! The API model's optional services and run conditions (issue 20): a
//! `Gauge` service the model inserts and removes (`World::remove`) between
//! iterations; systems taking it as `Option<&Gauge>` / `Option<&mut Gauge>`
//! (a missing service is `None`, never an error; when present, the
//! mutation matches the model); and run conditions reading it on a system,
//! a batch processor and a parallel query (each evaluated once per
//! iteration, in registration order like every other node: its read of
//! `Gauge` is in the node's lane).

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use sluice::exec::{BatchProcessor, ClearBuffer};
use sluice::{NodeBuilder, NodeSpec, World};

use super::{Ent, P, check};

/// The optional service.
#[derive(Debug)]
pub(super) struct Gauge(i64);

/// What the optional readers and the gated system logged:
/// `(serial, what it saw)`; the gated system logs `None`.
#[derive(Debug, Default)]
struct GaugeLog(Vec<(usize, Option<i64>)>);

/// The batch processor's items (never cleared) and what each run summed.
#[derive(Debug)]
struct Readings {
    items: Vec<i64>,
    sums: Vec<(usize, i64)>,
}
impl ClearBuffer for Readings {
    fn clear_buffer(&mut self) {}
}

/// The batch processor's items: 23 of them, in slices of 4 (six slices).
fn readings() -> Vec<i64> {
    (0..23).map(|i| i * 3 - 20).collect()
}

/// A batch processor summing its items in slices, logging the sum.
struct Summing {
    serial: usize,
    sum: AtomicI64,
}
impl BatchProcessor for Summing {
    type Buffer = Readings;
    type Item = i64;
    const BATCH_SIZE: usize = 4;
    fn items(buffer: &Readings) -> &[i64] {
        &buffer.items
    }
    fn process_batch(&self, _start: usize, batch: &[i64]) {
        self.sum.fetch_add(batch.iter().sum(), Ordering::Relaxed);
    }
    fn after_update(&mut self, buffer: &mut Readings) {
        let sum = self.sum.swap(0, Ordering::Relaxed);
        buffer.sums.push((self.serial, sum));
    }
}

/// A system of the optional family.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum OptSys {
    /// `Option<&Gauge>`: logs what it sees.
    Read,
    /// `Option<&mut Gauge>`: adds `k` when there is one.
    Add(i8),
    /// A system run only while the gauge is at least `k`; logs `None`.
    Gated(i8),
    /// A batch processor run only while the gauge is at least `k`.
    Batch(i8),
    /// A parallel query over `&P` (slices of one row) run only while the
    /// gauge is below `k`: adds every p to its total.
    Par(i8),
}

/// An operation between iterations.
#[derive(Debug, Clone, Copy)]
pub(super) enum OptOp {
    Insert(i8),
    Remove,
}

pub(super) fn sys() -> impl Strategy<Value = OptSys> {
    prop_oneof![
        Just(OptSys::Read),
        (-3i8..4).prop_map(OptSys::Add),
        (-5i8..5).prop_map(OptSys::Gated),
        (-5i8..5).prop_map(OptSys::Batch),
        (-5i8..5).prop_map(OptSys::Par),
    ]
}

pub(super) fn op() -> impl Strategy<Value = OptOp> {
    prop_oneof![(-6i8..6).prop_map(OptOp::Insert), Just(OptOp::Remove)]
}

/// The model's side.
#[derive(Debug, Default)]
pub(super) struct OptModel {
    gauge: Option<i64>,
    log: Vec<(usize, Option<i64>)>,
    sums: Vec<(usize, i64)>,
    /// Each parallel query's total, by serial.
    totals: Vec<(usize, i64)>,
    /// Whether each system's body ran (its run condition held) in its last
    /// turn, by serial: a skipped body is no run for the spike watch.
    ran: Vec<(usize, bool)>,
}

impl OptModel {
    /// Runs `system` (serial `serial`) in its turn.
    pub(super) fn run(&mut self, system: OptSys, serial: usize, ents: &[Ent]) {
        let at_least = |k: i8| self.gauge.is_some_and(|g| g >= i64::from(k));
        let runs = match system {
            OptSys::Read | OptSys::Add(_) => true,
            OptSys::Gated(k) | OptSys::Batch(k) => at_least(k),
            OptSys::Par(k) => self.gauge.is_some_and(|g| g < i64::from(k)),
        };
        match self.ran.iter_mut().find(|(s, _)| *s == serial) {
            Some((_, ran)) => *ran = runs,
            None => self.ran.push((serial, runs)),
        }
        match system {
            OptSys::Read => self.log.push((serial, self.gauge)),
            OptSys::Add(k) => {
                if let Some(g) = &mut self.gauge {
                    *g = g.wrapping_add(i64::from(k));
                }
            }
            OptSys::Gated(k) if at_least(k) => self.log.push((serial, None)),
            OptSys::Batch(k) if at_least(k) => {
                self.sums.push((serial, readings().iter().sum()));
            }
            OptSys::Par(k) if self.gauge.is_some_and(|g| g < i64::from(k)) => {
                let sum = ents
                    .iter()
                    .filter(|e| e.alive)
                    .filter_map(|e| e.p)
                    .fold(0, i64::wrapping_add);
                let total = self.total(serial);
                *total = total.wrapping_add(sum);
            }
            OptSys::Gated(_) | OptSys::Batch(_) | OptSys::Par(_) => {}
        }
    }

    /// Whether the system of serial `serial` ran its body in its last turn
    /// (`None`: not of this family, or never run).
    pub(super) fn ran(&self, serial: usize) -> Option<bool> {
        self.ran
            .iter()
            .find(|(s, _)| *s == serial)
            .map(|&(_, ran)| ran)
    }

    fn total(&mut self, serial: usize) -> &mut i64 {
        let at = match self.totals.iter().position(|(s, _)| *s == serial) {
            Some(at) => at,
            None => {
                self.totals.push((serial, 0));
                self.totals.len() - 1
            }
        };
        &mut self.totals[at].1
    }
}

/// The real side: the parallel queries' totals, by serial.
#[derive(Debug, Default)]
pub(super) struct OptReal {
    totals: Vec<(usize, Arc<AtomicI64>)>,
}

/// Inserts what the family's systems log into.
pub(super) fn install(world: &mut World) {
    world.insert(GaugeLog::default());
    world.insert(Readings {
        items: readings(),
        sums: Vec::new(),
    });
}

impl OptReal {
    /// The registration of `system` as serial `serial`.
    pub(super) fn spec(&mut self, system: OptSys, serial: usize, node: NodeBuilder) -> NodeSpec {
        let at_least = move |k: i8| move |g: Option<&Gauge>| g.is_some_and(|g| g.0 >= i64::from(k));
        match system {
            OptSys::Read => node.system(move |gauge: Option<&Gauge>, log: &mut GaugeLog| {
                log.0.push((serial, gauge.map(|g| g.0)));
            }),
            OptSys::Add(k) => node.system(move |gauge: Option<&mut Gauge>| {
                if let Some(g) = gauge {
                    g.0 = g.0.wrapping_add(i64::from(k));
                }
            }),
            OptSys::Gated(k) => node
                .system(move |log: &mut GaugeLog| log.0.push((serial, None)))
                .run_if(at_least(k)),
            OptSys::Batch(k) => node
                .batch_processor(Summing {
                    serial,
                    sum: AtomicI64::new(0),
                })
                .run_if(at_least(k)),
            OptSys::Par(k) => {
                let total = Arc::new(AtomicI64::new(0));
                self.totals.push((serial, Arc::clone(&total)));
                node.par_query::<&P, ()>(1, move |p: &P| {
                    total.fetch_add(p.0, Ordering::Relaxed);
                })
                .run_if(move |g: Option<&Gauge>| g.is_some_and(|g| g.0 < i64::from(k)))
            }
        }
    }
}

/// Applies `op` between iterations.
pub(super) fn apply(
    op: OptOp,
    world: &mut World,
    model: &mut OptModel,
) -> Result<(), TestCaseError> {
    match op {
        OptOp::Insert(g) => {
            world.insert(Gauge(i64::from(g)));
            model.gauge = Some(i64::from(g));
        }
        OptOp::Remove => {
            let removed = world.remove::<Gauge>().map(|g| g.0);
            check(removed == model.gauge, || {
                format!(
                    "World::remove gave {removed:?}, the model held {:?}",
                    model.gauge
                )
            })?;
            model.gauge = None;
        }
    }
    compare(world, None, model)
}

/// Compares the gauge, the logs, the batch sums and (given `real`) the
/// parallel queries' totals.
pub(super) fn compare(
    world: &World,
    real: Option<&OptReal>,
    model: &OptModel,
) -> Result<(), TestCaseError> {
    let gauge = world.get::<Gauge>().map(|g| g.0);
    check(gauge == model.gauge, || {
        format!("the gauge is {gauge:?}, the model {:?}", model.gauge)
    })?;
    let log = &world.get::<GaugeLog>().expect("the gauge log").0;
    check(*log == model.log, || {
        format!(
            "the optional readers logged {log:?}, the model {:?}",
            model.log
        )
    })?;
    let sums = &world.get::<Readings>().expect("the readings").sums;
    check(*sums == model.sums, || {
        format!(
            "the conditioned batches summed {sums:?}, the model {:?}",
            model.sums
        )
    })?;
    if let Some(real) = real {
        for (serial, total) in &real.totals {
            let got = total.load(Ordering::Relaxed);
            let expected = model
                .totals
                .iter()
                .find(|(s, _)| s == serial)
                .map_or(0, |(_, t)| *t);
            check(got == expected, || {
                format!("parallel query #{serial} summed {got}, the model {expected}")
            })?;
        }
    }
    Ok(())
}

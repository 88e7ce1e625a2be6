//! Issue 36's message vocabulary in the API model: a writer sends a batch
//! (`Publish::write_batch`) that a reader reads in parallel slices
//! (`Subscribe::par_read`), on whichever executor the world is on; one
//! message may make the reading closure panic. Before the run, messages
//! sent between iterations are cleared (`Messages::clear`) or drained
//! (`Messages::drain`): the reader never sees them. `Messages::sent`
//! counts every message that joined, cleared, drained or read alike.
//!
//! The model knows what the documentation promises: every message of the
//! batch is read once, whatever the slice size or thread count; a panic in
//! a slice fails the reading node alone (named in the failure), and what
//! was cleared or drained is gone for every reader. Both nodes are
//! registered after every other (in `PostUpdate`), touch only services of
//! their own, and are removed again.

use std::sync::atomic::{AtomicI64, Ordering};

use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use sluice::{Messages, Publish, Subscribe};

use super::systems::{probe, ran_whole, remove};
use super::{Model, Op, Real, check, check_panicked, compare_iteration};

/// The operations of this module.
#[derive(Debug, Clone)]
pub(super) enum MessagesOp {
    /// `values` written as one batch and read by `par_read` in slices of
    /// `per_slice` (`0`: automatic); the read of message `panic_at` (when
    /// in range) panics. `stale` messages sent between iterations are
    /// cleared (or drained, with `drain`) first.
    BatchParRead {
        values: Vec<i8>,
        per_slice: u8,
        panic_at: Option<u8>,
        stale: u8,
        drain: bool,
    },
}

pub(super) fn op() -> impl Strategy<Value = Op> {
    (
        proptest::collection::vec(any::<i8>(), 0..200),
        0u8..9,
        proptest::option::weighted(0.2, any::<u8>()),
        0u8..4,
        any::<bool>(),
    )
        .prop_map(|(values, per_slice, panic_at, stale, drain)| {
            Op::Messages(MessagesOp::BatchParRead {
                values,
                per_slice,
                panic_at,
                stale,
                drain,
            })
        })
}

/// A message of the batch: its index and value.
#[derive(Debug, Clone, Copy)]
struct Batched(usize, i64);

/// What the reader summed, and how many it read.
#[derive(Debug, Default)]
struct BatchSum(AtomicI64, AtomicI64);

/// A stale message's value: far from any batch's sum.
const STALE: i64 = 1 << 40;

pub(super) fn apply(
    op: &MessagesOp,
    real: &mut Real,
    model: &mut Model,
) -> Result<(), TestCaseError> {
    let MessagesOp::BatchParRead {
        ref values,
        per_slice,
        panic_at,
        stale,
        drain,
    } = *op;
    real.world.insert(BatchSum::default());
    let batch: Vec<Batched> = values
        .iter()
        .enumerate()
        .map(|(i, &v)| Batched(i, i64::from(v)))
        .collect();
    let writer =
        real.world
            .add_system(probe("batch_writer").system(move |out: Publish<Batched>| {
                out.write_batch(batch.iter().copied());
            }));
    let panic_at = panic_at.map(usize::from).filter(|&at| at < values.len());
    let reader = real
        .world
        .add_system(probe("par_reader").after("batch_writer").system(
            move |mut input: Subscribe<Batched>, sum: &BatchSum| {
                let read = input.par_read();
                let read = match per_slice {
                    0 => read,
                    n => read.messages_per_slice(usize::from(n)),
                };
                read.for_each(|&Batched(i, v)| {
                    if Some(i) == panic_at {
                        std::panic::panic_any(super::INJECTED);
                    }
                    sum.0.fetch_add(v, Ordering::Relaxed);
                    sum.1.fetch_add(1, Ordering::Relaxed);
                });
            },
        ));
    // Sent between iterations, then cleared or drained: no reader sees them.
    let messages = real
        .world
        .get_mut::<Messages<Batched>>()
        .ok_or_else(|| TestCaseError::fail("the reader's registration made the messages"))?;
    let sent_before = messages.sent();
    for i in 0..usize::from(stale) {
        messages.send(Batched(i, STALE));
    }
    if drain {
        let drained = messages.drain().count();
        check(drained == usize::from(stale), || {
            format!("drained {drained} of {stale} stale messages")
        })?;
    } else {
        messages.clear();
    }
    check(messages.is_empty(), || {
        "messages kept after clear/drain".into()
    })?;
    let sent = messages.sent();
    check(sent == sent_before + u64::from(stale), || {
        format!("sent {sent} after {stale} stale messages from {sent_before}, cleared or not")
    })?;
    let result = real.world.run_iteration();
    let refused = model.run();
    remove(&mut real.world, writer)?;
    remove(&mut real.world, reader)?;
    // The writer ran whatever the reader did: its batch joined.
    let sent = real
        .world
        .get_mut::<Messages<Batched>>()
        .map_or(0, Messages::sent);
    let expected_sent = sent_before + u64::from(stale) + values.len() as u64;
    check(sent == expected_sent, || {
        format!("sent {sent} after the batch, expected {expected_sent}")
    })?;
    let sum = real.world.get::<BatchSum>().expect("the sum");
    let (summed, read) = (sum.0.load(Ordering::Relaxed), sum.1.load(Ordering::Relaxed));
    if panic_at.is_some() {
        // As `Op::InjectPanic`: a node in `PostUpdate` failed.
        model.spikes.injected = true;
        check_panicked(&result, refused, |nodes| nodes == ["par_reader"])?;
        check(read < values.len() as i64, || {
            format!("read {read} of {} though one panicked", values.len())
        })?;
    } else {
        ran_whole(&result, refused)?;
        let expected: i64 = values.iter().map(|&v| i64::from(v)).sum();
        check(summed == expected && read == values.len() as i64, || {
            format!(
                "par_read summed {summed} over {read} messages, the batch {expected} over {}",
                values.len()
            )
        })?;
    }
    compare_iteration(real, model)
}

//! Issue 23's operations in the API model: typed orders and chains.
//!
//! `add_chain((a, b))` registers `a`, then `b` ordered after `a` by its
//! instance key (a typed order). The model runs systems in registration
//! order, which the chain's order agrees with, so its prediction is two
//! `AddSystem`s; the real world must match it on every executor.

use proptest::prelude::*;

use super::{Model, Op, Real, Sys, sys};

/// `Op::Chain` with two random systems.
pub(super) fn chain_op() -> impl Strategy<Value = Op> {
    // An ordered two-point node first in a chain would pull its second
    // after every unordered node: the model's plan order knows orders,
    // not chains, so the first member stays unordered.
    (sys(), sys()).prop_map(|(first, second)| {
        let first = match first {
            Sys::TwoPoint { pinned, .. } => Sys::TwoPoint {
                ordered: false,
                pinned,
            },
            other => other,
        };
        Op::Chain(first, second)
    })
}

/// Applies `Op::Chain`: both registrations in one call.
pub(super) fn chain(
    real: &mut Real,
    model: &mut Model,
    serial: &mut usize,
    first: Sys,
    second: Sys,
) {
    let first_serial = *serial + 1;
    let second_serial = *serial + 2;
    *serial += 2;
    let specs = (
        real.system_spec(first, first_serial),
        real.system_spec(second, second_serial),
    );
    let nodes = real.world.add_chain(specs);
    real.systems.extend(nodes);
    model.systems.push((first, first_serial));
    model.systems.push((second, second_serial));
}

//! Per-row change detection in the API model (issue 36): systems that are
//! handed every `P` mutably but write only some rows, and observers that
//! read the news through `Ref<P>`.
//!
//! The model knows what the documentation promises: a row is changed when a
//! system writes it through its `Mut<P>` (a `DerefMut`, or `set_if_neq` with
//! a different value), and only then; a row handed out and only read is
//! not. `Changed<P>` observers (`Sys::Observer`) and `Ref<P>` observers
//! here then see exactly the rows written since they last ran.

use proptest::prelude::*;
use sluice::{Entity, NodeBuilder, NodeSpec, Query};

use super::{ChangeLog, Ent, P};

/// A system of this part.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ChangeSys {
    /// `Query<&mut P>`: `p += k` for the rows where p is even; the others
    /// are read and left unmarked (k = 0 still writes, and marks).
    EvenBump(i8),
    /// `Query<Option<&mut P>>`: for the rows where p is even,
    /// `set_if_neq(p + k)`: marks only when k is not 0.
    EvenSetIfNeq(i8),
    /// `Query<(Entity, Ref<P>)>`: logs the rows `Ref::is_changed` (or
    /// `is_added`) reports, as `Sys::Observer` does.
    RefObserver { added: bool },
}

pub(super) fn sys() -> impl Strategy<Value = ChangeSys> {
    prop_oneof![
        (-2i8..3).prop_map(ChangeSys::EvenBump),
        (-1i8..2).prop_map(ChangeSys::EvenSetIfNeq),
        any::<bool>().prop_map(|added| ChangeSys::RefObserver { added }),
    ]
}

/// Whether a row with `p` is written.
fn due(p: i64) -> bool {
    p.rem_euclid(2) == 0
}

/// The model's run of `system` (serial `serial`), with the fresh stamp
/// `tick`; an observer logs into `observed` and moves its cursor in
/// `cursors`.
pub(super) fn run(
    system: ChangeSys,
    serial: usize,
    tick: u64,
    ents: &mut [Ent],
    cursors: &mut std::collections::HashMap<usize, u64>,
    observed: &mut Vec<(usize, Vec<usize>)>,
) {
    match system {
        ChangeSys::EvenBump(k) | ChangeSys::EvenSetIfNeq(k) => {
            let marks = matches!(system, ChangeSys::EvenBump(_)) || k != 0;
            for e in ents.iter_mut().filter(|e| e.alive) {
                if let Some(p) = e.p.as_mut().filter(|p| due(**p)) {
                    *p = p.wrapping_add(i64::from(k));
                    if marks {
                        e.p_changed = tick;
                    }
                }
            }
        }
        ChangeSys::RefObserver { added } => {
            let last = cursors.get(&serial).copied().unwrap_or(0);
            let seen = (0..ents.len())
                .filter(|&i| {
                    let e = &ents[i];
                    let at = if added { e.p_added } else { e.p_changed };
                    e.alive && e.p.is_some() && at > last
                })
                .collect();
            observed.push((serial, seen));
            cursors.insert(serial, tick);
        }
    }
}

/// The real system.
pub(super) fn spec(system: ChangeSys, serial: usize, node: NodeBuilder) -> NodeSpec {
    match system {
        ChangeSys::EvenBump(k) => node.system(move |mut q: Query<'_, &mut P>| {
            q.for_each(|mut p| {
                if due(p.0) {
                    p.0 = p.0.wrapping_add(i64::from(k));
                }
            });
        }),
        ChangeSys::EvenSetIfNeq(k) => node.system(move |mut q: Query<'_, Option<&mut P>>| {
            q.for_each(|p| {
                if let Some(mut p) = p.filter(|p| due(p.0)) {
                    let value = P(p.0.wrapping_add(i64::from(k)));
                    assert_eq!(p.set_if_neq(value), k != 0);
                }
            });
        }),
        ChangeSys::RefObserver { added } => node.system(
            move |q: Query<'_, (Entity, sluice::Ref<'_, P>)>, log: &mut ChangeLog| {
                let mut seen: Vec<Entity> = q
                    .iter()
                    .filter(|(_, p)| if added { p.is_added() } else { p.is_changed() })
                    .map(|(entity, _)| entity)
                    .collect();
                seen.sort_unstable();
                log.0.push((serial, seen));
            },
        ),
    }
}

//! Issue 36, change detection that means what it says: a query item
//! `&mut C` is a `Mut<C>` that marks its row changed only when written
//! through, so `Changed<C>` reports exactly the rows a system wrote (not
//! every row it was handed); `Ref<C>` says whether a row changed or was
//! added; `set_if_neq` writes (and marks) only a different value;
//! `Option<&mut C>` items do the same; services say whether they changed
//! or were added since a reader last ran (`Tracked<T>`), and the run
//! conditions `service_changed`, `service_added` and `service_exists` gate
//! on it. Each on every executor kind and on 1, 2 and 4 threads, and per-row
//! ticks still compare right past 2^31 and 2^32.

#[path = "support/executors.rs"]
mod executors;

use executors::{executors, world_on};
use std::collections::BTreeSet;

use sluice::{
    Changed, Entity, Mut, NodeBuilder, Query, Ref, TICK_CHECK_INTERVAL, Tracked, World,
    service_added, service_changed, service_exists,
};

/// The written component.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct A(u32);

/// A row's fixed key: which frames write it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Key(u32);

/// Marks the rows that have no `A` in the `Option<&mut A>` case.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Bare;

/// The frame number, set by the test between iterations.
#[derive(Debug, Default)]
struct Frame(u32);

/// The keys a reader saw, per frame.
#[derive(Debug, Default)]
struct Seen(Vec<BTreeSet<u32>>);

fn rows() -> u32 {
    if cfg!(miri) { 12 } else { 300 }
}

/// Whether frame `frame` writes the row with key `key`: a third of the
/// rows, a different third each frame.
fn writes(key: u32, frame: u32) -> bool {
    (key + frame).is_multiple_of(3)
}

fn frames() -> u32 {
    if cfg!(miri) { 3 } else { 6 }
}

/// The ways a system writes some of the rows it is handed.
#[derive(Debug, Clone, Copy)]
enum WriteBy {
    ForEach,
    IterMut,
    /// One item through `next`, the rest through `for_each` (`fold`).
    IterMutFold,
    ParForEach,
    GetMut,
    OptionMut,
    SetIfNeq,
}

const WRITERS: [WriteBy; 7] = [
    WriteBy::ForEach,
    WriteBy::IterMut,
    WriteBy::IterMutFold,
    WriteBy::ParForEach,
    WriteBy::GetMut,
    WriteBy::OptionMut,
    WriteBy::SetIfNeq,
];

/// Writes row `a` (key `key`) on frame `frame` if it is due, and only reads
/// it otherwise.
fn touch(mut a: Mut<'_, A>, key: u32, frame: u32) {
    if writes(key, frame) {
        a.0 += 1;
    } else {
        // Read through the item: marks nothing.
        assert!(a.0 < u32::MAX);
    }
}

fn add_writer(world: &mut World, by: WriteBy, keys: Vec<(Entity, u32)>) {
    let node = NodeBuilder::new("write");
    match by {
        WriteBy::ForEach => {
            world.add_system(node.system(|frame: &Frame, mut q: Query<(&Key, &mut A)>| {
                q.for_each(|(key, a)| touch(a, key.0, frame.0));
            }))
        }
        WriteBy::IterMut => {
            world.add_system(node.system(|frame: &Frame, mut q: Query<(&Key, &mut A)>| {
                for (key, a) in q.iter_mut() {
                    touch(a, key.0, frame.0);
                }
            }))
        }
        WriteBy::IterMutFold => {
            world.add_system(node.system(|frame: &Frame, mut q: Query<(&Key, &mut A)>| {
                let mut items = q.iter_mut();
                if let Some((key, a)) = items.next() {
                    touch(a, key.0, frame.0);
                }
                items.for_each(|(key, a)| touch(a, key.0, frame.0));
            }))
        }
        WriteBy::ParForEach => {
            world.add_system(node.system(|frame: &Frame, mut q: Query<(&Key, &mut A)>| {
                q.par_for_each_sliced(7, |(key, a)| touch(a, key.0, frame.0));
            }))
        }
        WriteBy::GetMut => {
            world.add_system(node.system(move |frame: &Frame, mut q: Query<&mut A>| {
                for &(entity, key) in &keys {
                    touch(q.get_mut(entity).expect("has A"), key, frame.0);
                }
            }))
        }
        WriteBy::OptionMut => world.add_system(node.system(
            |frame: &Frame, mut q: Query<(&Key, Option<&mut A>)>| {
                q.for_each(|(key, a)| match a {
                    Some(a) => touch(a, key.0, frame.0),
                    None => assert!(!writes(key.0, frame.0) || key.0 % 2 == 1),
                });
            },
        )),
        WriteBy::SetIfNeq => {
            world.add_system(node.system(|frame: &Frame, mut q: Query<(&Key, &mut A)>| {
                q.for_each(|(key, mut a)| {
                    // Every row is offered a value; only due rows get a
                    // different one.
                    let value = if writes(key.0, frame.0) {
                        A(a.0 + 1)
                    } else {
                        *a
                    };
                    assert_eq!(a.set_if_neq(value), writes(key.0, frame.0));
                });
            }))
        }
    };
}

/// A reader of `Changed<A>` after the writer, logging the keys it saw.
fn add_reader(world: &mut World) {
    world.add_system(NodeBuilder::new("read").after("write").system(
        |q: Query<&Key, Changed<A>>, seen: &mut Seen| {
            let keys: Vec<u32> = q.iter().map(|key| key.0).collect();
            // `fold` (and `count`, which folds) walks the rows its own way:
            // the same rows, in the same order.
            let folded = q.iter().fold(Vec::new(), |mut keys, key| {
                keys.push(key.0);
                keys
            });
            assert_eq!(folded, keys);
            assert_eq!(q.iter().count(), keys.len());
            seen.0.push(keys.into_iter().collect());
        },
    ));
}

/// The keys frame `frame` writes, among `keys`.
fn due(keys: &[(Entity, u32)], frame: u32) -> BTreeSet<u32> {
    keys.iter()
        .map(|&(_, key)| key)
        .filter(|&key| writes(key, frame))
        .collect()
}

#[test]
fn partial_writes_are_reported_exactly() {
    let executors = executors();
    for (case, (executor, threads)) in executors.iter().copied().enumerate() {
        for (index, by) in WRITERS.into_iter().enumerate() {
            // Under Miri each way of writing runs on one executor, the
            // executors taking turns: every way and every executor is met
            // at half of Miri's cost.
            if cfg!(miri) && index % executors.len() != case {
                continue;
            }
            let mut world = world_on(executor, threads);
            world.insert(Frame(0));
            world.insert(Seen::default());
            let mut keys = Vec::new();
            for key in 0..rows() {
                // The `Option<&mut A>` case also has rows without an `A`.
                let entity = if matches!(by, WriteBy::OptionMut) && key % 2 == 1 {
                    world.spawn((Key(key), Bare))
                } else {
                    world.spawn((Key(key), A(0)))
                };
                keys.push((entity, key));
            }
            keys.retain(|&(entity, _)| world.entity(entity).unwrap().get::<A>().is_some());
            add_writer(&mut world, by, keys.clone());
            add_reader(&mut world);
            for frame in 0..frames() {
                world.get_mut::<Frame>().unwrap().0 = frame;
                world.run_iteration().expect("runs");
            }
            let seen = &world.get::<Seen>().unwrap().0;
            let every: BTreeSet<u32> = keys.iter().map(|&(_, key)| key).collect();
            assert_eq!(
                seen[0], every,
                "{by:?} {executor:?}/{threads}: first run sees all"
            );
            for frame in 1..frames() {
                assert_eq!(
                    seen[frame as usize],
                    due(&keys, frame),
                    "{by:?} on {executor:?}/{threads}, frame {frame}: exactly the rows written"
                );
            }
        }
    }
}

/// Writing through `bypass_change_detection` is invisible; `is_changed`
/// and `is_added` on a `Mut` say what the writer's cursor says.
#[test]
fn bypass_and_the_writers_own_view() {
    for (executor, threads) in executors() {
        let mut world = world_on(executor, threads);
        world.insert(Seen::default());
        let first = world.spawn((Key(0), A(0)));
        world.add_system(
            NodeBuilder::new("write").system(|mut q: Query<(&Key, &mut A)>| {
                q.for_each(|(_, mut a)| {
                    a.bypass_change_detection().0 += 1;
                });
            }),
        );
        add_reader(&mut world);
        world.add_system(NodeBuilder::new("views").after("read").system(
            |mut q: Query<(&Key, &mut A)>, seen: &mut Seen| {
                let views = q
                    .iter_mut()
                    .map(|(key, a)| {
                        key.0 * 10 + u32::from(a.is_added()) * 2 + u32::from(a.is_changed())
                    })
                    .collect();
                seen.0.push(views);
            },
        ));
        world.run_iteration().unwrap();
        world.run_iteration().unwrap();
        world.spawn((Key(1), A(0)));
        world.run_iteration().unwrap();
        let seen = &world.get::<Seen>().unwrap().0;
        // Frame 0: the reader and the views see the new row.
        assert_eq!(seen[0], BTreeSet::from([0]));
        assert_eq!(seen[1], BTreeSet::from([3]));
        // Frame 1: the bypassing write is invisible.
        assert_eq!(seen[2], BTreeSet::new(), "{executor:?}/{threads}");
        assert_eq!(seen[3], BTreeSet::from([0]));
        // Frame 2: only the new row.
        assert_eq!(seen[4], BTreeSet::from([1]));
        assert_eq!(seen[5], BTreeSet::from([0, 13]));
        assert_eq!(world.entity(first).unwrap().get::<A>(), Some(&A(3)));
    }
}

/// `Ref<A>` says added and changed per row, since the reader last ran.
#[test]
fn ref_reports_added_and_changed_rows() {
    for (executor, threads) in executors() {
        let mut world = world_on(executor, threads);
        world.insert(Frame(0));
        world.insert(Seen::default());
        let keys: Vec<(Entity, u32)> = (0..rows())
            .map(|key| (world.spawn((Key(key), A(0))), key))
            .collect();
        add_writer(&mut world, WriteBy::ForEach, keys.clone());
        // Logs `key * 4 + added * 2 + changed` for every row.
        world.add_system(NodeBuilder::new("read").after("write").system(
            |q: Query<(&Key, Ref<A>)>, seen: &mut Seen| {
                seen.0.push(
                    q.iter()
                        .map(|(key, a)| {
                            key.0 * 4 + u32::from(a.is_added()) * 2 + u32::from(a.is_changed())
                        })
                        .collect(),
                );
            },
        ));
        world.run_iteration().unwrap();
        world.get_mut::<Frame>().unwrap().0 = 1;
        let late = world.spawn((Key(rows()), A(0)));
        world.run_iteration().unwrap();
        let seen = &world.get::<Seen>().unwrap().0;
        let all_new: BTreeSet<u32> = (0..rows()).map(|key| key * 4 + 3).collect();
        assert_eq!(seen[0], all_new, "{executor:?}/{threads}: first run");
        let expected: BTreeSet<u32> = (0..=rows())
            .map(|key| match key {
                key if key == rows() => key * 4 + 3,
                key if writes(key, 1) => key * 4 + 1,
                key => key * 4,
            })
            .collect();
        assert_eq!(
            seen[1], expected,
            "{executor:?}/{threads}: the late row is added, due rows changed"
        );
        assert!(world.entity(late).is_some());
    }
}

/// Per-row ticks past 2^31 and 2^32 (the ticks wrap): a writer that writes
/// some rows is still reported exactly.
#[test]
fn partial_writes_compare_right_past_the_wrap() {
    let mut world = World::new();
    world.insert(Frame(0));
    world.insert(Seen::default());
    let keys: Vec<(Entity, u32)> = (0..rows())
        .map(|key| (world.spawn((Key(key), A(0))), key))
        .collect();
    add_writer(&mut world, WriteBy::ForEach, keys.clone());
    add_reader(&mut world);
    let intervals: u32 = if cfg!(miri) { 17 } else { 18 };
    for interval in 0..intervals {
        world.entities_mut().advance_ticks(TICK_CHECK_INTERVAL);
        world.get_mut::<Frame>().unwrap().0 = interval;
        world.run_iteration().expect("runs");
        if interval > 0 {
            let seen = world.get::<Seen>().unwrap().0.last().unwrap().clone();
            assert_eq!(
                seen,
                due(&keys, interval),
                "interval {interval}, tick {:#x}",
                world.entities().tick()
            );
        }
    }
    assert!(
        world.entities().tick() < TICK_CHECK_INTERVAL * 3,
        "the tick wrapped"
    );
}

/// Rows left unwritten for longer than the comparison's window (past 2^31
/// and 2^32 ticks, while one row is written every frame) never read as
/// changed: not to a reader that runs every frame, not through `Ref`, and
/// not to a reader that runs once in ten frames, whose cursor ages past
/// `MAX_TICK_AGE` between its runs (the store moves both up to that age).
#[test]
fn rows_left_unwritten_past_the_wrap_stay_unchanged() {
    type Keys = BTreeSet<u32>;
    /// What the readers saw: per frame, the every-frame reader's keys, the
    /// keys `Ref` called changed, and the late reader's keys (on its runs).
    #[derive(Debug, Default)]
    struct Log(Vec<(Keys, Keys, Option<Keys>)>);

    let rows: u32 = if cfg!(miri) { 4 } else { 64 };
    let intervals: u32 = 22; // 22 * 2^28 ticks: past 2^32
    let runs = if cfg!(miri) { 1 } else { executors().len() };
    for (executor, threads) in executors().into_iter().take(runs) {
        let mut world = world_on(executor, threads);
        world.insert(Frame(0));
        world.insert(Log::default());
        for key in 0..rows {
            world.spawn((Key(key), A(0)));
        }
        world.add_system(
            NodeBuilder::new("write").system(|mut q: Query<(&Key, &mut A)>| {
                q.for_each(|(key, mut a)| {
                    if key.0 == 0 {
                        a.0 += 1;
                    }
                });
            }),
        );
        world.add_system(NodeBuilder::new("read").after("write").system(
            |changed: Query<&Key, Changed<A>>, all: Query<(&Key, Ref<A>)>, log: &mut Log| {
                let refs = all.iter().filter(|(_, a)| a.is_changed()).map(|(k, _)| k.0);
                log.0
                    .push((changed.iter().map(|k| k.0).collect(), refs.collect(), None));
            },
        ));
        world.add_system(
            NodeBuilder::new("late")
                .after("read")
                .system(|changed: Query<&Key, Changed<A>>, log: &mut Log| {
                    let last = log.0.last_mut().expect("read ran first");
                    last.2 = Some(changed.iter().map(|k| k.0).collect());
                })
                .run_if(|frame: &Frame| frame.0 % 10 == 1),
        );
        for interval in 0..intervals {
            world.entities_mut().advance_ticks(TICK_CHECK_INTERVAL);
            world.get_mut::<Frame>().unwrap().0 = interval;
            world.run_iteration().expect("runs");
        }
        // 16 intervals are 2^32 ticks.
        assert!(
            world.entities().tick() < TICK_CHECK_INTERVAL * (intervals - 15),
            "the tick wrapped"
        );
        let log = &world.get::<Log>().unwrap().0;
        let all: BTreeSet<u32> = (0..rows).collect();
        let hot = BTreeSet::from([0]);
        for (frame, (changed, refs, late)) in log.iter().enumerate() {
            let first = frame == 0;
            let at = format!("{executor:?}/{threads}, frame {frame}");
            assert_eq!(changed, if first { &all } else { &hot }, "{at}");
            assert_eq!(refs, changed, "{at}: Ref agrees with Changed");
            let expected_late = match frame {
                1 => Some(&all), // its first run: every row is new to it
                11 | 21 => Some(&hot),
                _ => None,
            };
            assert_eq!(late.as_ref(), expected_late, "{at}: the late reader");
        }
    }
}

/// A service.
#[derive(Debug, Default, PartialEq)]
struct Score(u32);

/// What a `Tracked<Score>` reader saw each frame: (changed, added).
#[derive(Debug, Default)]
struct News(Vec<(bool, bool)>);

/// Whether the score writer runs this frame.
#[derive(Debug, Default)]
struct WriteNow(bool);

/// Services: a reader sees a change made by a gate since it last ran,
/// whether that gate ran before it in the same frame or after it in the
/// last one, and changes and insertions made between iterations.
#[test]
fn services_report_changes_since_the_reader_last_ran() {
    for (executor, threads) in executors() {
        for reader_first in [false, true] {
            let mut world = world_on(executor, threads);
            world.insert(Score(0));
            world.insert(News::default());
            world.insert(WriteNow(false));
            let writer = |node: NodeBuilder| {
                node.system(|score: &mut Score| score.0 += 1)
                    .run_if(|now: &WriteNow| now.0)
            };
            let reader = |node: NodeBuilder| {
                node.system(|score: Tracked<Score>, news: &mut News| {
                    news.0.push((score.is_changed(), score.is_added()));
                })
            };
            if reader_first {
                world.add_system(reader(NodeBuilder::new("read")));
                world.add_system(writer(NodeBuilder::new("write").after("read")));
            } else {
                world.add_system(writer(NodeBuilder::new("write")));
                world.add_system(reader(NodeBuilder::new("read").after("write")));
            }
            // 0: first run; 1: quiet; 2: the writer runs; 3: quiet; 4: a
            // write between iterations; 5: quiet; 6: removed and inserted.
            let plan = [false, false, true, false, false, false, false, false];
            for (frame, &write) in plan.iter().enumerate() {
                world.get_mut::<WriteNow>().unwrap().0 = write;
                if frame == 4 {
                    world.get_mut::<Score>().unwrap().0 = 10;
                }
                if frame == 6 {
                    world.remove::<Score>();
                    world.insert(Score(0));
                }
                world.run_iteration().expect("runs");
            }
            let news = &world.get::<News>().unwrap().0;
            let (changed, added) = ((true, false), (true, true));
            let quiet = (false, false);
            // The writer's change reaches a reader that ran before it one
            // frame later.
            let mut expected = vec![added, quiet, changed, quiet, changed, quiet, added, quiet];
            if reader_first {
                expected.swap(2, 3);
            }
            assert_eq!(
                news, &expected,
                "{executor:?}/{threads}, reader first: {reader_first}"
            );
        }
    }
}

/// How often each gated system ran.
#[derive(Debug, Default, PartialEq)]
struct Runs {
    changed: u32,
    added: u32,
    exists: u32,
}

/// The run conditions: `service_changed` holds on frames where a gate
/// touched the service since it was last evaluated, `service_added` where it
/// was inserted, `service_exists` while it is there; none fails or panics
/// while it is absent.
#[test]
fn service_conditions_on_every_executor() {
    for (executor, threads) in executors() {
        let mut world = world_on(executor, threads);
        world.insert(Runs::default());
        world.add_system(
            NodeBuilder::new("on change")
                .system(|runs: &mut Runs| runs.changed += 1)
                .run_if(service_changed::<Score>),
        );
        world.add_system(
            NodeBuilder::new("on add")
                .system(|runs: &mut Runs| runs.added += 1)
                .run_if(service_added::<Score>),
        );
        world.add_system(
            NodeBuilder::new("while there")
                .system(|runs: &mut Runs| runs.exists += 1)
                .run_if(service_exists::<Score>),
        );
        // 0: absent; 1: inserted; 2: quiet; 3: written; 4: quiet; 5: removed.
        for frame in 0..6 {
            match frame {
                1 => {
                    world.insert(Score(1));
                }
                3 => world.get_mut::<Score>().unwrap().0 = 2,
                5 => {
                    world.remove::<Score>();
                }
                _ => {}
            }
            world.run_iteration().expect("runs");
        }
        assert_eq!(
            world.get::<Runs>(),
            Some(&Runs {
                changed: 2,
                added: 1,
                exists: 4,
            }),
            "{executor:?}/{threads}"
        );
    }
}

/// A service gated through `&mut T` inside an iteration reads as changed
/// even when the body wrote nothing: the world cannot see into a `&mut T`.
/// `Gate<&T>` (a read-only gate) does not change it.
#[test]
fn a_gate_that_writes_nothing_still_counts() {
    for (executor, threads) in executors() {
        let mut world = world_on(executor, threads);
        world.insert(Score(0));
        world.insert(News::default());
        world.add_system(NodeBuilder::new("touch").system(|_score: &mut Score| {}));
        world.add_system(
            NodeBuilder::new("look")
                .after("touch")
                .system(|_score: sluice::Gate<&Score>| {}),
        );
        world.add_system(NodeBuilder::new("read").after("look").system(
            |score: Tracked<Score>, news: &mut News| {
                news.0.push((score.is_changed(), score.is_added()))
            },
        ));
        world.run_iteration().unwrap();
        world.run_iteration().unwrap();
        assert_eq!(
            world.get::<News>().unwrap().0,
            [(true, true), (true, false)],
            "{executor:?}/{threads}"
        );
    }
}

/// Service ticks compare right past 2^31 and 2^32.
#[test]
fn service_news_past_the_wrap() {
    let mut world = World::new();
    world.insert(Score(0));
    world.insert(News::default());
    world.insert(WriteNow(false));
    world.add_system(
        NodeBuilder::new("write")
            .system(|score: &mut Score| score.0 += 1)
            .run_if(|now: &WriteNow| now.0),
    );
    world.add_system(NodeBuilder::new("read").after("write").system(
        |score: Tracked<Score>, news: &mut News| {
            news.0.push((score.is_changed(), score.is_added()))
        },
    ));
    let intervals: u32 = if cfg!(miri) { 17 } else { 18 };
    for interval in 0..intervals {
        world.entities_mut().advance_ticks(TICK_CHECK_INTERVAL);
        world.get_mut::<WriteNow>().unwrap().0 = interval % 2 == 1;
        world.run_iteration().expect("runs");
    }
    let news = &world.get::<News>().unwrap().0;
    for (interval, &(changed, added)) in news.iter().enumerate().skip(1) {
        assert_eq!(changed, interval % 2 == 1, "interval {interval}");
        assert!(!added, "interval {interval}");
    }
}

/// A second component, whose insertion and removal move a row between
/// archetypes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Tag;

/// A `Changed<A>` scan skips an archetype whose column no one wrote since
/// the reader last ran (the column's changed bound): it must still see a
/// row written outside any system, a row carried by a move into an
/// archetype untouched for frames, a spawn into such an archetype, and a
/// replacement by insert; and must not see a row only moved. Each on every
/// executor kind and thread count.
#[test]
fn skipped_archetypes_still_report_every_write() {
    for (executor, threads) in executors() {
        let mut world = world_on(executor, threads);
        world.insert(Seen::default());
        // Four archetypes: (Key, A), (Key, A, Tag), and two quiet ones.
        let plain: Vec<Entity> = (0..20).map(|key| world.spawn((Key(key), A(0)))).collect();
        let tagged: Vec<Entity> = (20..40)
            .map(|key| world.spawn((Key(key), A(0), Tag)))
            .collect();
        add_reader_alone(&mut world);
        world.run_iteration().expect("runs");
        world.run_iteration().expect("runs");
        let expect = |world: &mut World, keys: &[u32], what: &str| {
            world.run_iteration().expect("runs");
            let seen = world.get::<Seen>().unwrap().0.last().unwrap().clone();
            assert_eq!(
                seen,
                keys.iter().copied().collect::<BTreeSet<u32>>(),
                "{what} on {executor:?}/{threads}"
            );
        };
        expect(&mut world, &[], "a quiet frame");
        world
            .entity_mut(plain[3])
            .unwrap()
            .get_mut::<A>()
            .unwrap()
            .0 = 1;
        expect(&mut world, &[3], "a write through `EntityMut::get_mut`");
        // Written in (Key, A), then moved into (Key, A, Tag), which no one
        // wrote for frames: the move carries the tick.
        world
            .entity_mut(plain[4])
            .unwrap()
            .get_mut::<A>()
            .unwrap()
            .0 = 1;
        world.entity_mut(plain[4]).unwrap().insert((Tag,)).unwrap();
        expect(&mut world, &[4], "a written row moved");
        // Moved only: its tick stays old.
        world
            .entity_mut(tagged[5])
            .unwrap()
            .remove::<(Tag,)>()
            .unwrap();
        expect(&mut world, &[], "a row moved, not written");
        world.entity_mut(plain[6]).unwrap().insert((A(9),)).unwrap();
        world.spawn((Key(99), A(0), Tag));
        expect(&mut world, &[6, 99], "a replacement and a spawn");
        expect(&mut world, &[], "a quiet frame again");
    }
}

/// A reader of `Changed<A>` with no writer before it.
fn add_reader_alone(world: &mut World) {
    world.add_system(NodeBuilder::new("read").system(
        |q: Query<&Key, Changed<A>>, seen: &mut Seen| {
            let keys: BTreeSet<u32> = q.iter().map(|key| key.0).collect();
            assert_eq!(q.iter().count(), keys.len());
            seen.0.push(keys);
        },
    ));
}

//! Damaged and forged saves (issue 39): real saves, mutated (bits flipped,
//! truncated anywhere, ranges spliced, sections duplicated, lengths and
//! counts set huge), with or without their trailing checksum rewritten to
//! match. Loading never panics and never allocates from a forged length;
//! a save changed without its checksum rewritten is always refused; a
//! refused load leaves the world exactly as it was (the `trail` node's
//! saved `Local` included: its next run goes on from its own value); a
//! forged save that happens to be valid loads into a consistent world,
//! whose references (`ComponentRef<Pos>`) each read their live target or,
//! for a target not alive, `None`. The saves hold a step script store
//! (`World::save_scripts`), whose section a mutation aims at too: a
//! damaged one is refused by name, the world's own scripts untouched.

use proptest::prelude::*;
use serde::{Deserialize, Serialize};
use std::time::Duration;

use sluice::script::{ScriptId, ScriptKind, Scripts, SimClock, Step, StepScript, Wait, Waiting};
use sluice::snapshot::LoadError;
use sluice::{ComponentRef, Entity, Local, NodeBuilder, World};

/// Scripts that see nothing and count.
struct Ticks;

impl ScriptKind for Ticks {
    type View<'v> = ();
    type Intent = u32;
}

/// Counts its steps; waits on time, the next tick or a condition by turns.
#[derive(Clone, Debug, Serialize, Deserialize)]
struct Counter {
    steps: u32,
    every: Duration,
}

impl Counter {
    fn wait(&self) -> Wait<Ticks> {
        match self.steps % 3 {
            0 => Wait::For(self.every),
            1 => Wait::NextTick,
            _ => Wait::Until(|()| true),
        }
    }
}

impl StepScript<Ticks> for Counter {
    fn step(&mut self, cx: &mut Step<'_, '_, Ticks>) -> Wait<Ticks> {
        self.steps += 1;
        cx.emit(self.steps);
        self.wait()
    }

    fn resume_wait(&self) -> Option<Wait<Ticks>> {
        Some(self.wait())
    }
}

/// Steps the world's scripts once (what a gather and a collect would do).
fn gather(world: &mut World) {
    let clock = world.get::<SimClock>().unwrap().clone();
    let scripts = world.get_mut::<Scripts<Ticks>>().unwrap();
    scripts.gather(&clock, &());
    scripts.drain_intents().for_each(drop);
}

#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
struct Pos(f32, f32);

/// Zero-sized: a forged length must not make the decoder loop on it.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
struct Marker;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct Name(String);

#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
struct Follows(Entity);

#[derive(Clone, Debug, PartialEq, Default, Serialize, Deserialize)]
struct Log(Vec<u32>);

/// What the `trail` node's `Local` (saved) held after its last run.
#[derive(Clone, Debug, PartialEq, Default)]
struct Trail(Vec<u32>);

/// Appends how many values it holds to its local, and shows it.
fn trail(mut kept: Local<'_, Vec<u32>>, shown: &mut Trail) {
    let next = kept.len() as u32;
    kept.push(next);
    shown.0.clone_from(&kept);
}

fn registered() -> World {
    let mut world = World::new();
    world
        .save_component::<Pos>("pos")
        .save_component::<Marker>("marker")
        .save_component::<Name>("name")
        .save_component::<Follows>("follows")
        .save_service::<Log>("log")
        .save_local::<Vec<u32>>("trail")
        .save_component_ref::<Pos>("follows_pos")
        .save_scripts::<Ticks>("ticks")
        .save_step_script::<Ticks, Counter>("counter");
    world.insert(SimClock::new());
    world.insert_scripts(Scripts::<Ticks>::new());
    world.insert(Trail::default());
    world.add_system(NodeBuilder::new("trail").system(trail));
    world
}

fn source_save() -> Vec<u8> {
    let mut world = registered();
    let mut last = world.spawn((Pos(0.0, 0.0), Marker));
    for i in 1..12u32 {
        last = match i % 3 {
            0 => world.spawn((Pos(i as f32, 1.0), Marker)),
            1 => world.spawn((Name(format!("n{i}")), Follows(last))),
            _ => world.spawn((Pos(-(i as f32), 2.0),)),
        };
        if i % 4 == 0 {
            world.despawn(last).unwrap();
            last = world.spawn((Marker,));
        }
    }
    // References: to frozen targets, one despawned since.
    let mut targets = Vec::new();
    for i in 0..3u32 {
        let target = world.spawn((Pos(i as f32, 5.0),));
        world.freeze(target).unwrap();
        targets.push(target);
    }
    for (i, &target) in targets.iter().chain(&targets[..1]).enumerate() {
        let follows = ComponentRef::<Pos>::new(&world, target).unwrap();
        if i % 2 == 0 {
            world.spawn((follows,));
        } else {
            world.spawn((follows, Marker));
        }
    }
    world.despawn(targets[2]).unwrap();
    world.insert(Log(vec![1, 2, 3]));
    for i in 0..5u64 {
        let scripts = world.get_mut::<Scripts<Ticks>>().unwrap();
        let counter = Counter {
            steps: i as u32,
            every: Duration::from_millis(100 * i),
        };
        let id = scripts.start_step(format!("c{i}"), counter);
        if i == 2 {
            scripts.cancel(id); // a free slot
        }
        gather(&mut world);
    }
    for _ in 0..3 {
        world.run_iteration().unwrap();
    }
    let mut bytes = Vec::new();
    world.snapshot().unwrap().write_to(&mut bytes).unwrap();
    bytes
}

/// The sections' byte ranges (header included) and their length fields'
/// offsets, read the way the format documents them; empty once earlier
/// mutations broke the layout (structural mutations then do nothing).
fn sections(bytes: &[u8]) -> Vec<(std::ops::Range<usize>, usize)> {
    fn walk(bytes: &[u8]) -> Option<Vec<(std::ops::Range<usize>, usize)>> {
        let count = u32::from_le_bytes(bytes.get(12..16)?.try_into().ok()?);
        let mut at = 16usize;
        let mut found = Vec::new();
        for _ in 0..count.min(1000) {
            let name_len = u16::from_le_bytes(bytes.get(at + 1..at + 3)?.try_into().ok()?) as usize;
            let len_at = at + 3 + name_len;
            let len = u64::from_le_bytes(bytes.get(len_at..len_at + 8)?.try_into().ok()?);
            let end = (len_at + 8).checked_add(usize::try_from(len).ok()?)?;
            if end > bytes.len() {
                return None;
            }
            found.push((at..end, len_at));
            at = end;
        }
        Some(found)
    }
    walk(bytes).unwrap_or_default()
}

fn reseal(bytes: &mut [u8]) {
    if bytes.len() < 8 {
        return;
    }
    let body = bytes.len() - 8;
    let digest = xxhash_rust::xxh3::xxh3_64(&bytes[..body]);
    bytes[body..].copy_from_slice(&digest.to_le_bytes());
}

#[derive(Clone, Debug)]
enum Mutation {
    Flip {
        at: usize,
        bit: u8,
    },
    Truncate {
        at: usize,
    },
    Splice {
        from: usize,
        len: usize,
        to: usize,
    },
    DuplicateSection {
        index: usize,
    },
    DropSection {
        index: usize,
    },
    HugeLength {
        index: usize,
        value: u64,
    },
    HugeCount {
        value: u32,
    },
    Byte {
        at: usize,
        value: u8,
    },
    /// A byte of the scripts section's payload.
    ScriptsByte {
        at: usize,
        value: u8,
    },
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<usize>(), 0u8..8).prop_map(|(at, bit)| Mutation::Flip { at, bit }),
        any::<usize>().prop_map(|at| Mutation::Truncate { at }),
        (any::<usize>(), 1usize..64, any::<usize>()).prop_map(|(from, len, to)| Mutation::Splice {
            from,
            len,
            to
        }),
        any::<usize>().prop_map(|index| Mutation::DuplicateSection { index }),
        any::<usize>().prop_map(|index| Mutation::DropSection { index }),
        (
            any::<usize>(),
            prop_oneof![Just(u64::MAX), Just(1u64 << 40), any::<u64>()]
        )
            .prop_map(|(index, value)| Mutation::HugeLength { index, value }),
        prop_oneof![Just(u32::MAX), any::<u32>()].prop_map(|value| Mutation::HugeCount { value }),
        (any::<usize>(), any::<u8>()).prop_map(|(at, value)| Mutation::Byte { at, value }),
        (any::<usize>(), any::<u8>()).prop_map(|(at, value)| Mutation::ScriptsByte { at, value }),
    ]
}

fn apply(bytes: &mut Vec<u8>, mutation: &Mutation) {
    let len = bytes.len();
    let layout = sections(bytes);
    match *mutation {
        Mutation::Flip { at, bit } => bytes[at % len] ^= 1 << bit,
        Mutation::Truncate { at } => bytes.truncate(at % len),
        Mutation::Splice { from, len: n, to } => {
            let from = from % len;
            let piece: Vec<u8> = bytes[from..(from + n).min(len)].to_vec();
            let to = to % len;
            let end = (to + piece.len()).min(len);
            bytes[to..end].copy_from_slice(&piece[..end - to]);
        }
        Mutation::DuplicateSection { .. }
        | Mutation::DropSection { .. }
        | Mutation::HugeLength { .. }
            if layout.is_empty() => {}
        Mutation::DuplicateSection { index } => {
            let (range, _) = layout[index % layout.len()].clone();
            let copy = bytes[range.clone()].to_vec();
            bytes.splice(range.end..range.end, copy);
            let count = u32::from_le_bytes(bytes[12..16].try_into().unwrap()) + 1;
            bytes[12..16].copy_from_slice(&count.to_le_bytes());
        }
        Mutation::DropSection { index } => {
            let (range, _) = layout[index % layout.len()].clone();
            bytes.drain(range);
            let count = u32::from_le_bytes(bytes[12..16].try_into().unwrap()) - 1;
            bytes[12..16].copy_from_slice(&count.to_le_bytes());
        }
        Mutation::HugeLength { index, value } => {
            let (_, len_at) = layout[index % layout.len()];
            bytes[len_at..len_at + 8].copy_from_slice(&value.to_le_bytes());
        }
        Mutation::HugeCount { value } => bytes[12..16].copy_from_slice(&value.to_le_bytes()),
        Mutation::Byte { at, value } => bytes[at % len] = value,
        Mutation::ScriptsByte { at, value } => {
            // The section named `ticks`, if the layout still holds it.
            let scripts = layout
                .iter()
                .find(|(range, _)| bytes[range.start + 3..].starts_with(b"ticks"));
            if let Some((range, len_at)) = scripts {
                let payload = len_at + 8..range.end;
                if !payload.is_empty() {
                    bytes[payload.start + at % payload.len()] = value;
                }
            }
        }
    }
}

/// Each reference's holder, target and what it reads; asserts that it
/// reads its target's `Pos` when the target is alive, and `None` when not.
fn references(world: &mut World) -> Vec<(Entity, Entity, Option<Pos>)> {
    let refs: Vec<(Entity, ComponentRef<Pos>)> = world
        .query::<(Entity, &ComponentRef<Pos>)>()
        .iter()
        .map(|(e, r)| (e, *r))
        .collect();
    let mut rows: Vec<_> = refs
        .into_iter()
        .map(|(holder, follows)| {
            let read = follows.get(&*world).copied();
            let held = world
                .entity(follows.target())
                .and_then(|target| target.get::<Pos>().copied());
            assert_eq!(read, held, "{holder}'s reference to {}", follows.target());
            (holder, follows.target(), read)
        })
        .collect();
    rows.sort_by_key(|row| row.0);
    rows
}

type State = (
    u64,
    usize,
    Vec<(Entity, Pos)>,
    Option<Log>,
    Vec<(ScriptId, String, Waiting)>,
    Vec<(Entity, Entity, Option<Pos>)>,
);

/// What a world holds, as its own checksum (its scripts included), every
/// query's rows, its scripts and its references.
fn state(world: &mut World) -> State {
    let mut pos: Vec<(Entity, Pos)> = world
        .query::<(Entity, &Pos)>()
        .iter()
        .map(|(e, p)| (e, *p))
        .collect();
    pos.sort_by_key(|(e, _)| *e);
    (
        world.snapshot().unwrap().checksum(),
        world.entities().len(),
        pos,
        world.get::<Log>().cloned(),
        world
            .get::<Scripts<Ticks>>()
            .map(|scripts| {
                scripts
                    .iter()
                    .map(|info| (info.id, info.name.to_owned(), info.waiting))
                    .collect()
            })
            .unwrap_or_default(),
        references(world),
    )
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: if cfg!(miri) { 4 } else { 512 },
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn damaged_saves_are_refused_and_change_nothing(
        mutations in proptest::collection::vec(mutation(), 1..4),
        resealed in any::<bool>(),
    ) {
        static SOURCE: std::sync::OnceLock<Vec<u8>> = std::sync::OnceLock::new();
        let source = SOURCE.get_or_init(source_save);
        let mut bytes = source.clone();
        for mutation in &mutations {
            if bytes.len() < 40 {
                break;
            }
            apply(&mut bytes, mutation);
        }
        if resealed {
            reseal(&mut bytes);
        }

        let mut world = registered();
        world.spawn((Pos(7.0, 7.0), Name("bystander".into())));
        world.insert(Log(vec![9]));
        world.get_mut::<Scripts<Ticks>>().unwrap().start_step(
            "own",
            Counter { steps: 1, every: Duration::from_secs(1) },
        );
        gather(&mut world);
        world.run_iteration().unwrap();
        let before = state(&mut world);
        match world.load_from(&bytes[..]) {
            Err(error) => {
                // Every error names itself; and nothing changed, the
                // node's local neither (its next run appends to `[0]`).
                prop_assert!(!error.to_string().is_empty());
                prop_assert_eq!(state(&mut world), before);
                world.run_iteration().unwrap();
                prop_assert_eq!(&world.get::<Trail>().unwrap().0, &[0, 1]);
            }
            Ok(()) => {
                prop_assert!(
                    resealed || bytes == *source,
                    "a changed save loaded without its checksum rewritten"
                );
                // A valid forged save gives a consistent world: it saves
                // and loads again to the same checksum.
                let loaded = state(&mut world);
                let mut again = Vec::new();
                world.snapshot().unwrap().write_to(&mut again).unwrap();
                let mut other = registered();
                other.load_from(&again[..]).unwrap();
                prop_assert_eq!(state(&mut other), loaded);
                // And its scripts run: a forged layout the load let in
                // must not break a gather.
                gather(&mut world);
                gather(&mut other);
            }
        }
    }
}

#[test]
fn the_untouched_save_loads() {
    let source = source_save();
    let mut world = registered();
    world.load_from(&source[..]).unwrap();
    let mut again = Vec::new();
    world.snapshot().unwrap().write_to(&mut again).unwrap();
    assert_eq!(again, source, "a loaded world saves to the same bytes");
    let names: Vec<String> = state(&mut world)
        .4
        .into_iter()
        .map(|(_, name, _)| name)
        .collect();
    assert_eq!(
        names,
        ["c0", "c1", "c3", "c4"],
        "the saved scripts came back"
    );
    // The references came back bound: live targets read, the dead one not.
    let refs = references(&mut world);
    assert_eq!(refs.len(), 4);
    assert_eq!(refs.iter().filter(|(_, _, read)| read.is_some()).count(), 3);
    // The `trail` node's local came back: its next run appends its fourth.
    world.run_iteration().unwrap();
    assert_eq!(world.get::<Trail>().unwrap().0, [0, 1, 2, 3]);
}

#[test]
fn a_duplicated_section_is_named() {
    let mut bytes = source_save();
    apply(&mut bytes, &Mutation::DuplicateSection { index: 1 });
    reseal(&mut bytes);
    let error = registered().load_from(&bytes[..]).unwrap_err();
    assert!(matches!(error, LoadError::Sections { .. }), "{error}");
}

#[test]
fn a_huge_marker_count_is_refused_at_once() {
    // The marker section's value count set to 2^63, resealed: refused by
    // comparing it with the entities' rows, not by decoding 2^63 markers.
    let mut bytes = source_save();
    let layout = sections(&bytes);
    let (range, len_at) = layout
        .iter()
        .find(|(range, _)| bytes[range.start + 3..].starts_with(b"marker"))
        .cloned()
        .unwrap();
    let payload = len_at + 8;
    let mut forged = bytes[..payload].to_vec();
    let mut huge = Vec::new();
    postcard_varint(1 << 63, &mut huge);
    let old_payload_len = range.end - payload;
    forged.extend_from_slice(&huge);
    forged.extend_from_slice(&[0, 0]);
    let new_len = (huge.len() + 2) as u64;
    forged[len_at..len_at + 8].copy_from_slice(&new_len.to_le_bytes());
    forged.extend_from_slice(&bytes[range.end..]);
    let _ = old_payload_len;
    bytes = forged;
    reseal(&mut bytes);
    let error = registered().load_from(&bytes[..]).unwrap_err();
    assert!(matches!(error, LoadError::Shape { .. }), "{error}");
}

/// LEB128, as postcard writes a length.
fn postcard_varint(mut value: u64, out: &mut Vec<u8>) {
    loop {
        let byte = (value & 0x7f) as u8;
        value >>= 7;
        if value == 0 {
            out.push(byte);
            return;
        }
        out.push(byte | 0x80);
    }
}

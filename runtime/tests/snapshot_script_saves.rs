//! Step scripts in saves (issue 39): a script store registered with
//! `World::save_scripts`, its step script types with
//! `World::save_step_script`, is written by `Snapshot::write_to` and read
//! back by `World::load_from` into a fresh world (a new process that
//! registers the same types), whose frames then are the frames that
//! followed the save, ids included, on the serial executor and on a pool;
//! and hostile saves and types: a type not registered at save or load,
//! the same type under two names, a `Serialize` that panics, a
//! `Deserialize` that fails, forged counts, a `Drop` that panics as the
//! load replaces its script. A refused save writes nothing; a refused load
//! changes nothing.

use std::cell::Cell;
use std::time::Duration;

use serde::{Deserialize, Serialize, Serializer};
use sluice::exec::ThreadPool;
use sluice::script::{ScriptId, ScriptKind, Scripts, SimClock, Step, StepScript, Wait, Waiting};
use sluice::snapshot::{LoadError, RegistrationError, SaveError, SectionKind};
use sluice::{Commands, NodeBuilder, World};

/// Town scripts: they see the gauge and ask for numbers to be logged.
struct Town;

impl ScriptKind for Town {
    type View<'v> = Gauge;
    type Intent = Cue;
}

/// What the scripts read: it rises by one every frame (saved).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
struct Gauge(u32);

/// What a script asks for: a number to log, or a helper to hire.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Cue {
    Log(&'static str, u32),
    Hire(u32),
}

/// Every intent collect applied, with the script that asked (not saved:
/// the tests compare the frames after a save with those after its load).
#[derive(Debug, Default)]
struct Log(Vec<(ScriptId, Cue)>);

thread_local! {
    /// Set to make [`Bell`]'s `Serialize` panic (a save encodes on the
    /// caller's thread).
    static SERIALIZE_PANICS: Cell<bool> = const { Cell::new(false) };
}

/// Rings every `period` of simulation time, `left` times, then hires a
/// helper and ends.
#[derive(Debug, Clone, PartialEq, Deserialize)]
struct Bell {
    period: Duration,
    left: u32,
}

impl Serialize for Bell {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        assert!(!SERIALIZE_PANICS.get(), "a bell refuses to be written down");
        (self.period, self.left).serialize(serializer)
    }
}

impl StepScript<Town> for Bell {
    fn step(&mut self, cx: &mut Step<'_, '_, Town>) -> Wait<Town> {
        if self.left == 0 {
            cx.emit(Cue::Hire(cx.view().0));
            return Wait::Done;
        }
        self.left -= 1;
        cx.emit(Cue::Log("bell", cx.view().0));
        Wait::For(self.period)
    }
}

/// Waits for the gauge to reach a multiple of 5 and logs it; its wait is
/// a condition its state gives back for a load.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Watch {
    seen: u32,
}

/// The watch's wait: one function, returned by its step and given back by
/// its state for a load.
fn until_multiple_of_five() -> Wait<Town> {
    Wait::Until(|gauge| gauge.0.is_multiple_of(5))
}

impl StepScript<Town> for Watch {
    fn step(&mut self, cx: &mut Step<'_, '_, Town>) -> Wait<Town> {
        let level = cx.view().0;
        if level.is_multiple_of(5) && level != self.seen {
            self.seen = level;
            cx.emit(Cue::Log("watch", level));
        }
        until_multiple_of_five()
    }

    fn resume_wait(&self) -> Option<Wait<Town>> {
        Some(until_multiple_of_five())
    }
}

/// Logs every tick for `left` ticks (a helper hired by a bell).
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Helper {
    left: u32,
}

impl StepScript<Town> for Helper {
    fn step(&mut self, cx: &mut Step<'_, '_, Town>) -> Wait<Town> {
        if self.left == 0 {
            return Wait::Done;
        }
        self.left -= 1;
        cx.emit(Cue::Log("helper", self.left));
        Wait::NextTick
    }
}

const FRAME: Duration = Duration::from_millis(100);

/// Frames played after a save (enough for the bells to hire helpers).
const AFTER: usize = if cfg!(miri) { 16 } else { 40 };

/// The town's services, registrations and systems, with an empty store:
/// what a new process sets up before it loads.
fn town_systems(world: &mut World) {
    world.insert(SimClock::new());
    world.insert(Gauge(0));
    world.insert(Log::default());
    world.save_service::<Gauge>("gauge");
    world.insert_scripts(Scripts::<Town>::new());
    world
        .save_scripts::<Town>("town")
        .save_step_script::<Town, Bell>("bell")
        .save_step_script::<Town, Watch>("watch")
        .save_step_script::<Town, Helper>("helper");
    world.add_system(NodeBuilder::new("pump").system(|gauge: &mut Gauge| gauge.0 += 1));
    world.add_system(NodeBuilder::new("gather").after("pump").system(
        |scripts: &mut Scripts<Town>, clock: &SimClock, gauge: &Gauge| {
            scripts.gather(clock, gauge);
        },
    ));
    world.add_system(NodeBuilder::new("collect").after("gather").system(
        |scripts: &mut Scripts<Town>, log: &mut Log, commands: Commands<'_>| {
            for (id, cue) in scripts.drain_intents() {
                if let Cue::Hire(at) = cue {
                    commands.start_step_script::<Town, _>("hired", Helper { left: at % 4 + 1 });
                }
                log.0.push((id, cue));
            }
        },
    ));
}

fn empty_world(threads: usize) -> World {
    let mut world = if threads == 1 {
        World::new()
    } else {
        World::with_pool(ThreadPool::new(threads).expect("a pool"))
    };
    town_systems(&mut world);
    world
}

/// A town with its scripts: waiting on time, a condition, the next tick.
fn town(threads: usize) -> World {
    let mut world = empty_world(threads);
    let scripts = world.get_mut::<Scripts<Town>>().expect("the store");
    scripts.start_step(
        "fast bell",
        Bell {
            period: Duration::from_millis(300),
            left: 4,
        },
    );
    scripts.start_step("watch", Watch { seen: 0 });
    scripts.start_step(
        "slow bell",
        Bell {
            period: Duration::from_millis(700),
            left: 3,
        },
    );
    scripts.start_step("helper", Helper { left: 2 });
    world
}

/// A script as the store shows it: id, name, wait.
type ScriptRow = (ScriptId, String, Waiting);

fn scripts_of(world: &World) -> Vec<ScriptRow> {
    let mut scripts: Vec<_> = world
        .get::<Scripts<Town>>()
        .expect("the store")
        .iter()
        .map(|info| (info.id, info.name.to_owned(), info.waiting))
        .collect();
    scripts.sort_by_key(|(id, _, _)| *id);
    scripts
}

/// Everything a test compares of a world: its checksum (scripts
/// included), its scripts, the gauge and the clock.
fn state(world: &World) -> (u64, Vec<ScriptRow>, Gauge, Duration) {
    (
        world.snapshot().expect("a snapshot").checksum(),
        scripts_of(world),
        *world.get::<Gauge>().expect("the gauge"),
        world.get::<SimClock>().expect("the clock").now(),
    )
}

/// Runs `frames` frames; what collect logged in them.
fn run(world: &mut World, frames: usize) -> Vec<(ScriptId, Cue)> {
    let from = world.get::<Log>().expect("the log").0.len();
    for _ in 0..frames {
        world.update(FRAME).expect("a frame");
    }
    world.get::<Log>().expect("the log").0[from..].to_vec()
}

fn save(world: &World) -> Vec<u8> {
    let mut bytes = Vec::new();
    world
        .snapshot()
        .expect("a snapshot")
        .write_to(&mut bytes)
        .expect("a save");
    bytes
}

/// Saves a town after 4 frames, plays on; a fresh world loads the save and
/// plays as many frames: the same intents from the same ids, the same
/// state after.
fn round_trip(threads: usize) -> Vec<(ScriptId, Cue)> {
    let mut world = town(threads);
    run(&mut world, 4);
    let snapshot = world.snapshot().unwrap();
    assert!(
        !snapshot
            .not_saved()
            .iter()
            .any(|name| name.contains("Scripts")),
        "the store is saved: {:?}",
        snapshot.not_saved()
    );
    let bytes = save(&world);
    let saved_state = state(&world);
    let first = run(&mut world, AFTER);
    assert!(
        first.iter().any(|(_, cue)| matches!(cue, Cue::Hire(_))),
        "the frames hire helpers (scripts started after the save)"
    );
    for name in ["bell", "watch", "helper"] {
        assert!(
            first
                .iter()
                .any(|(_, cue)| matches!(cue, Cue::Log(n, _) if *n == name)),
            "{name} logged"
        );
    }

    let mut fresh = empty_world(threads);
    fresh.load_from(&bytes[..]).expect("the save loads");
    assert_eq!(
        state(&fresh),
        saved_state,
        "the store, ids and checksum as saved"
    );
    let second = run(&mut fresh, AFTER);
    assert_eq!(
        first, second,
        "the frames after the load ({threads} threads)"
    );
    assert_eq!(state(&fresh), state(&world), "and the state after them");
    first
}

#[test]
fn a_loaded_save_plays_the_frames_that_followed_it_on_every_executor() {
    let serial = round_trip(1);
    let pool = round_trip(2);
    assert_eq!(serial, pool, "the serial executor and a pool of 2 agree");
}

#[test]
fn a_save_loaded_again_into_its_own_world_runs_as_saved() {
    let mut world = town(1);
    run(&mut world, 4);
    let bytes = save(&world);
    let first: Vec<Cue> = run(&mut world, AFTER).into_iter().map(|(_, c)| c).collect();
    world.load_from(&bytes[..]).expect("the save loads");
    world.get_mut::<Log>().unwrap().0.clear();
    // Its store had handed out ids since: the scripts get new ones, and
    // run as saved all the same.
    let second: Vec<Cue> = run(&mut world, AFTER).into_iter().map(|(_, c)| c).collect();
    assert_eq!(first, second);
}

#[test]
fn a_script_type_not_registered_refuses_the_save_and_writes_nothing() {
    struct Loose;
    impl StepScript<Town> for Loose {
        fn step(&mut self, _: &mut Step<'_, '_, Town>) -> Wait<Town> {
            Wait::NextTick
        }
    }
    impl Clone for Loose {
        fn clone(&self) -> Self {
            Loose
        }
    }
    let mut world = town(1);
    run(&mut world, 2);
    world
        .get_mut::<Scripts<Town>>()
        .unwrap()
        .start_step("loose", Loose);
    let before = state(&world);
    let mut bytes = Vec::new();
    let error = world.snapshot().unwrap().write_to(&mut bytes).unwrap_err();
    let SaveError::NotSaved { ref names } = error else {
        panic!("{error}");
    };
    assert_eq!(names.len(), 1, "{names:?}");
    assert!(
        names[0].contains("Loose") && names[0].contains("Scripts<") && names[0].contains("Town"),
        "names the script type and the store: {names:?}"
    );
    assert!(bytes.is_empty(), "nothing written");
    assert_eq!(state(&world), before, "the world unchanged");
}

#[test]
fn a_store_not_registered_is_not_saved_and_named() {
    let mut world = World::new();
    world.insert(SimClock::new());
    world.insert_scripts(Scripts::<Town>::new());
    world
        .get_mut::<Scripts<Town>>()
        .unwrap()
        .start_step("helper", Helper { left: 1 });
    let snapshot = world.snapshot().unwrap();
    assert!(
        snapshot
            .not_saved()
            .iter()
            .any(|name| name.contains("Scripts<")),
        "{:?}",
        snapshot.not_saved()
    );
    let mut bytes = Vec::new();
    snapshot
        .write_to(&mut bytes)
        .expect("saved without the store");
    let mut other = World::new();
    other.insert(SimClock::new());
    other.load_from(&bytes[..]).expect("loads");
    assert!(other.get::<Scripts<Town>>().is_none(), "no store came");
}

#[test]
fn a_condition_its_state_does_not_give_back_refuses_the_save() {
    #[derive(Clone, Serialize, Deserialize)]
    struct Lazy;
    impl StepScript<Town> for Lazy {
        fn step(&mut self, _: &mut Step<'_, '_, Town>) -> Wait<Town> {
            Wait::Until(|gauge| gauge.0 > 1000)
        }
    }
    let mut world = empty_world(1);
    world.save_step_script::<Town, Lazy>("lazy");
    world
        .get_mut::<Scripts<Town>>()
        .unwrap()
        .start_step("lazy one", Lazy);
    // Not yet run: it waits on its start, and saves.
    save(&world);
    run(&mut world, 1);
    let mut bytes = Vec::new();
    let error = world.snapshot().unwrap().write_to(&mut bytes).unwrap_err();
    assert!(
        matches!(error, SaveError::UnsavedCondition { ref script, type_name, .. }
            if script == "lazy one" && type_name.contains("Lazy")),
        "{error}"
    );
    assert!(bytes.is_empty(), "nothing written");
}

#[test]
fn a_panicking_serialize_writes_nothing_and_changes_nothing() {
    let mut world = town(1);
    run(&mut world, 2);
    let snapshot = world.snapshot().unwrap();
    let before = state(&world);
    let mut bytes = Vec::new();
    SERIALIZE_PANICS.set(true);
    let error = snapshot.write_to(&mut bytes);
    SERIALIZE_PANICS.set(false);
    let error = error.unwrap_err();
    assert!(
        matches!(error, SaveError::Panicked { kind: SectionKind::Scripts, ref name, ref message }
            if name == "town" && message.contains("refuses")),
        "{error}"
    );
    assert!(bytes.is_empty(), "nothing written");
    assert_eq!(state(&world), before);
    snapshot.write_to(&mut bytes).expect("the next save works");
}

/// A world that ran two frames of its own, to load into: the load must
/// leave it as it is when refused.
fn bystander(world: &mut World) -> (u64, Vec<ScriptRow>, Gauge, Duration) {
    world
        .get_mut::<Scripts<Town>>()
        .unwrap()
        .start_step("own helper", Helper { left: 9 });
    run(world, 2);
    state(world)
}

#[test]
fn an_unknown_script_type_refuses_the_load_and_changes_nothing() {
    let mut source = town(1);
    run(&mut source, 2);
    let bytes = save(&source);
    // A world that does not register `Watch`.
    let mut world = World::new();
    world.insert(SimClock::new());
    world.insert(Gauge(0));
    world.insert(Log::default());
    world.save_service::<Gauge>("gauge");
    world.insert_scripts(Scripts::<Town>::new());
    world
        .save_scripts::<Town>("town")
        .save_step_script::<Town, Bell>("bell")
        .save_step_script::<Town, Helper>("helper");
    world.add_system(NodeBuilder::new("gather").system(
        |scripts: &mut Scripts<Town>, clock: &SimClock, gauge: &Gauge| {
            scripts.gather(clock, gauge);
            scripts.drain_intents().for_each(drop);
        },
    ));
    let before = bystander(&mut world);
    let error = world.load_from(&bytes[..]).unwrap_err();
    assert!(
        matches!(error, LoadError::UnknownScript { ref store, ref name }
            if store == "town" && name == "watch"),
        "{error}"
    );
    assert!(error.to_string().contains("watch") && error.to_string().contains("town"));
    assert_eq!(state(&world), before, "the world unchanged");
}

#[test]
fn an_unknown_store_refuses_the_load() {
    let mut source = town(1);
    run(&mut source, 2);
    let bytes = save(&source);
    let mut world = World::new();
    world.insert(SimClock::new());
    world.save_service::<Gauge>("gauge");
    let error = world.load_from(&bytes[..]).unwrap_err();
    assert!(
        matches!(error, LoadError::UnknownType { kind: SectionKind::Scripts, ref name } if name == "town"),
        "{error}"
    );
    assert!(world.get::<Gauge>().is_none(), "nothing loaded");
}

#[test]
fn registrations_keep_one_name_per_type_and_one_type_per_name() {
    let mut world = empty_world(1);
    // The same type under the same name again: fine.
    assert!(world.try_save_step_script::<Town, Bell>("bell").is_ok());
    assert!(world.try_save_scripts::<Town>("town").is_ok());
    // The same type under another name.
    let error = world
        .try_save_step_script::<Town, Bell>("bell2")
        .unwrap_err();
    assert!(
        matches!(
            error,
            RegistrationError::AlreadyNamed {
                name: "bell",
                refused: "bell2",
                ..
            }
        ),
        "{error}"
    );
    // Another type under a taken name: a script's, the store's, a service's.
    for taken in ["bell", "town", "gauge"] {
        let error = world.try_save_step_script::<Town, Even>(taken).unwrap_err();
        assert!(
            matches!(error, RegistrationError::NameTaken { name, .. } if name == taken),
            "{taken}: {error}"
        );
    }
    // A component under a script's name.
    #[derive(Clone, Serialize, Deserialize)]
    struct Hp(u32);
    let error = world.try_save_component::<Hp>("watch").unwrap_err();
    assert!(
        matches!(error, RegistrationError::NameTaken { .. }),
        "{error}"
    );
    // The store under another name.
    let error = world.try_save_scripts::<Town>("city").unwrap_err();
    assert!(
        matches!(error, RegistrationError::AlreadyNamed { .. }),
        "{error}"
    );
    // The recording form refuses every save until fixed.
    world.save_step_script::<Town, Helper>("bell");
    let error = world.snapshot().unwrap().write_to(Vec::new()).unwrap_err();
    assert!(matches!(error, SaveError::Registration { .. }), "{error}");
}

/// Decodes only an even count: its `Deserialize` fails on an odd one.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(try_from = "u32")]
struct Even(u32);

impl TryFrom<u32> for Even {
    type Error = String;
    fn try_from(value: u32) -> Result<Self, String> {
        if value.is_multiple_of(2) {
            Ok(Even(value))
        } else {
            Err(format!("{value} is odd"))
        }
    }
}

impl StepScript<Town> for Even {
    fn step(&mut self, _: &mut Step<'_, '_, Town>) -> Wait<Town> {
        self.0 += 1;
        Wait::NextTick
    }
}

#[test]
fn a_failing_deserialize_refuses_the_load_and_changes_nothing() {
    let mut source = empty_world(1);
    source.save_step_script::<Town, Even>("even");
    source
        .get_mut::<Scripts<Town>>()
        .unwrap()
        .start_step("counter", Even(0));
    run(&mut source, 1); // it counts to 1: odd
    let bytes = save(&source);
    let mut world = empty_world(1);
    world.save_step_script::<Town, Even>("even");
    let before = bystander(&mut world);
    let error = world.load_from(&bytes[..]).unwrap_err();
    assert!(
        matches!(error, LoadError::Shape { kind: SectionKind::Scripts, ref reason, .. }
            if reason.contains("counter") && reason.contains("even")),
        "{error}"
    );
    assert_eq!(state(&world), before);
}

thread_local! {
    static DROPS: Cell<u32> = const { Cell::new(0) };
}

/// Panics when dropped.
#[derive(Clone, Serialize, Deserialize)]
struct Bomb;

impl Drop for Bomb {
    fn drop(&mut self) {
        DROPS.set(DROPS.get() + 1);
        if !std::thread::panicking() {
            panic!("boom");
        }
    }
}

impl StepScript<Town> for Bomb {
    fn step(&mut self, _: &mut Step<'_, '_, Town>) -> Wait<Town> {
        Wait::For(Duration::from_secs(1000))
    }
}

#[test]
fn a_panicking_drop_of_a_replaced_script_is_its_failure_and_the_load_completes() {
    let mut source = town(1);
    run(&mut source, 3);
    let bytes = save(&source);
    let saved = state(&source);
    let mut world = empty_world(1);
    world.save_step_script::<Town, Bomb>("bomb");
    world
        .get_mut::<Scripts<Town>>()
        .unwrap()
        .start_step("bomb", Bomb);
    run(&mut world, 1);
    let drops = DROPS.get();
    world.load_from(&bytes[..]).expect("the load completes");
    assert_eq!(DROPS.get(), drops + 1, "the bomb was dropped");
    let failures = world.get::<Scripts<Town>>().unwrap().failures().to_vec();
    assert!(
        failures
            .iter()
            .any(|failure| failure.name == "bomb" && failure.message.contains("boom")),
        "{failures:?}"
    );
    // The store had started a script of its own since the save: a load
    // puts the saved store back exactly, ids included (as the entity
    // allocator), whatever this store handed out meanwhile.
    assert_eq!(
        state(&world).1,
        saved.1,
        "the saved scripts are in, ids and all"
    );
}

/// The sections of a save: (kind byte, name, payload range).
fn sections(bytes: &[u8]) -> Vec<(u8, String, std::ops::Range<usize>)> {
    let count = u32::from_le_bytes(bytes[12..16].try_into().unwrap());
    let mut at = 16;
    let mut found = Vec::new();
    for _ in 0..count {
        let kind = bytes[at];
        let name_len = u16::from_le_bytes(bytes[at + 1..at + 3].try_into().unwrap()) as usize;
        let name = String::from_utf8(bytes[at + 3..at + 3 + name_len].to_vec()).unwrap();
        let len_at = at + 3 + name_len;
        let len = u64::from_le_bytes(bytes[len_at..len_at + 8].try_into().unwrap()) as usize;
        found.push((kind, name, len_at + 8..len_at + 8 + len));
        at = len_at + 8 + len;
    }
    found
}

/// `bytes` with the scripts section's payload replaced, its length and
/// the trailing checksum rewritten.
fn with_scripts_payload(bytes: &[u8], payload: &[u8]) -> Vec<u8> {
    let (_, _, range) = sections(bytes)
        .into_iter()
        .find(|(_, name, _)| name == "town")
        .expect("a scripts section");
    let mut forged = bytes[..range.start - 8].to_vec();
    forged.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    forged.extend_from_slice(payload);
    forged.extend_from_slice(&bytes[range.end..]);
    let body = forged.len() - 8;
    let digest = xxhash_rust::xxh3::xxh3_64(&forged[..body]);
    forged[body..].copy_from_slice(&digest.to_le_bytes());
    forged
}

/// LEB128, as postcard writes an integer.
fn varint(mut value: u64, out: &mut Vec<u8>) {
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

/// A layout's encoding: slots, free list, next serial, steps seen, ring
/// positions, finished.
fn layout(slots: u64, free: &[u32], next: u64) -> Vec<u8> {
    let mut out = Vec::new();
    varint(slots, &mut out);
    varint(free.len() as u64, &mut out);
    for &key in free {
        varint(u64::from(key), &mut out);
    }
    for value in [next, 0, 0, 0, 0] {
        varint(value, &mut out);
    }
    out
}

#[test]
fn forged_counts_are_refused_without_allocating_from_them() {
    let mut source = town(1);
    run(&mut source, 2);
    let bytes = save(&source);
    let mut world = empty_world(1);
    let before = bystander(&mut world);

    // A script count of 2^62, nothing after it.
    let mut payload = layout(4, &[], 10);
    varint(1 << 62, &mut payload);
    let error = world
        .load_from(&with_scripts_payload(&bytes, &payload)[..])
        .unwrap_err();
    assert!(
        matches!(
            error,
            LoadError::Shape {
                kind: SectionKind::Scripts,
                ..
            }
        ),
        "{error}"
    );

    // A slot count of 2^64 - 1 and no script: refused before any slot.
    let mut payload = layout(u64::MAX, &[], 0);
    varint(0, &mut payload);
    let error = world
        .load_from(&with_scripts_payload(&bytes, &payload)[..])
        .unwrap_err();
    assert!(matches!(error, LoadError::Inconsistent { .. }), "{error}");

    // A free list of 2^62 entries announced.
    let mut payload = Vec::new();
    varint(3, &mut payload);
    varint(1 << 62, &mut payload);
    let error = world
        .load_from(&with_scripts_payload(&bytes, &payload)[..])
        .unwrap_err();
    assert!(matches!(error, LoadError::Shape { .. }), "{error}");

    // A slot freed twice; a free slot out of range.
    for free in [&[1, 1][..], &[7][..]] {
        let mut payload = layout(2, free, 0);
        varint(0, &mut payload);
        let error = world
            .load_from(&with_scripts_payload(&bytes, &payload)[..])
            .unwrap_err();
        assert!(matches!(error, LoadError::Inconsistent { .. }), "{error}");
    }
    assert_eq!(state(&world), before, "every refused load changed nothing");
}

#[test]
fn forged_scripts_that_contradict_the_layout_are_refused() {
    let mut source = town(1);
    run(&mut source, 2);
    let bytes = save(&source);
    let mut world = empty_world(1);
    let before = bystander(&mut world);
    // One helper, entry: (type name, serial, slot, name, wait, state).
    let helper = |serial: u64, key: u32, out: &mut Vec<u8>| {
        varint(6, out);
        out.extend_from_slice(b"helper");
        varint(serial, out);
        varint(u64::from(key), out);
        varint(1, out);
        out.push(b'h');
        varint(3, out); // NextTick
        varint(1, out); // the state's bytes
        varint(2, out); // Helper { left: 2 }
    };
    // Two scripts in one slot; a serial past the next; serials not rising.
    for (scripts, next) in [
        (&[(0, 0), (1, 0)][..], 5),
        (&[(9, 0)][..], 5),
        (&[(3, 0), (2, 1)][..], 5),
    ] {
        let mut payload = layout(2.min(scripts.len() as u64), &[], next);
        if scripts.len() == 1 {
            payload = layout(1, &[], next);
        }
        varint(scripts.len() as u64, &mut payload);
        for &(serial, key) in scripts {
            helper(serial, key, &mut payload);
        }
        let error = world
            .load_from(&with_scripts_payload(&bytes, &payload)[..])
            .unwrap_err();
        assert!(
            matches!(error, LoadError::Inconsistent { .. }),
            "{scripts:?}: {error}"
        );
    }
    // The same, consistent: loads.
    let mut payload = layout(2, &[], 5);
    varint(2, &mut payload);
    helper(0, 1, &mut payload);
    helper(3, 0, &mut payload);
    assert_eq!(state(&world), before, "every refused load changed nothing");
    world
        .load_from(&with_scripts_payload(&bytes, &payload)[..])
        .expect("a consistent forged save loads");
    let names: Vec<_> = scripts_of(&world).into_iter().map(|(_, n, _)| n).collect();
    assert_eq!(names, ["h", "h"]);
}

#[test]
fn the_checksum_and_the_divergence_cover_saved_scripts() {
    let mut one = town(1);
    let mut two = town(2);
    run(&mut one, 5);
    run(&mut two, 5);
    let (a, b) = (one.snapshot().unwrap(), two.snapshot().unwrap());
    assert_eq!(
        a.checksum(),
        b.checksum(),
        "the same scripts, the same checksum"
    );
    assert_eq!(a.divergence(&b), None);
    // One script's state differs: the checksum does, and the divergence
    // names the store.
    let id = scripts_of(&two)
        .into_iter()
        .find(|(_, name, _)| name == "watch")
        .unwrap()
        .0;
    let scripts = two.get_mut::<Scripts<Town>>().unwrap();
    assert!(scripts.cancel(id));
    scripts.start_step("watch", Watch { seen: 1 });
    let b = two.snapshot().unwrap();
    assert_ne!(a.checksum(), b.checksum());
    let divergence = a.divergence(&b).expect("they differ");
    assert_eq!(
        (divergence.kind, divergence.name.as_str()),
        (SectionKind::Scripts, "town")
    );
    // A loaded save has the checksum of the snapshot it was written from.
    let mut fresh = empty_world(1);
    fresh.load_from(&save(&one)[..]).unwrap();
    assert_eq!(fresh.snapshot().unwrap().checksum(), a.checksum());
}

#[test]
fn an_async_script_leaves_the_store_out_of_the_save() {
    let mut world = town(1);
    world
        .get_mut::<Scripts<Town>>()
        .unwrap()
        .start("waiter", |cx| async move {
            cx.next_tick().await;
        });
    let snapshot = world.snapshot().unwrap();
    assert!(
        snapshot
            .not_saved()
            .iter()
            .any(|name| name.contains("Scripts<")),
        "{:?}",
        snapshot.not_saved()
    );
    let bytes = {
        let mut bytes = Vec::new();
        snapshot
            .write_to(&mut bytes)
            .expect("saved without the store");
        bytes
    };
    assert!(
        !sections(&bytes).iter().any(|(_, name, _)| name == "town"),
        "no scripts section"
    );
}

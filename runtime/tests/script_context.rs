//! A script's context (`ScriptCx`) reaches its poll through a thread-local
//! (SOUNDNESS.md, "the script poll context"): these attack that invariant
//! the ways user code can. A context used inside a script of another kind,
//! or after its script ended, panics with a clear message and fails only
//! that script; `emit` inside `view`, and a gather of another store inside
//! a script's view, nest without two live `&mut` to one poll (Miri runs
//! this file).

use std::sync::Mutex;

use sluice::script::{ScriptCx, ScriptId, ScriptKind, Scripts, SimClock};

struct Director;
impl ScriptKind for Director {
    type View<'v> = u64;
    type Intent = u64;
}

struct Music;
impl ScriptKind for Music {
    type View<'v> = &'v Mutex<Scripts<Director>>;
    type Intent = &'static str;
}

/// Contexts kept past their poll (a script leaking its handle), one per test.
static LEAKED: Mutex<Option<ScriptCx<Director>>> = Mutex::new(None);
static LEAKED_OUTSIDE: Mutex<Option<ScriptCx<Director>>> = Mutex::new(None);

fn messages<K: ScriptKind>(store: &Scripts<K>) -> Vec<(ScriptId, String)> {
    store
        .failures()
        .iter()
        .map(|f| (f.id, f.message.clone()))
        .collect()
}

#[test]
fn emit_inside_view_lands_in_order() {
    let mut store = Scripts::<Director>::new();
    let id = store.start("nested", |cx| async move {
        cx.view(|level| {
            cx.emit(*level);
            cx.emit(*level + 1);
        });
        cx.emit(99);
    });
    store.gather(&SimClock::new(), &7);
    let intents: Vec<(ScriptId, u64)> = store.drain_intents().collect();
    assert_eq!(intents, [(id, 7), (id, 8), (id, 99)]);
    assert!(store.failures().is_empty());
}

#[test]
fn a_context_of_another_kind_fails_only_its_script() {
    let director_store = Mutex::new(Scripts::<Director>::new());
    // A director script leaks its context; a music script then uses it.
    director_store
        .lock()
        .unwrap()
        .start("leaker", |cx| async move {
            *LEAKED.lock().unwrap() = Some(cx);
            cx.emit(1);
        });
    director_store.lock().unwrap().gather(&SimClock::new(), &0);
    let mut music = Scripts::<Music>::new();
    let thief = music.start("thief", |_cx| async move {
        let leaked = LEAKED.lock().unwrap().expect("leaked above");
        leaked.emit(5);
    });
    let calm = music.start("calm", |cx| async move {
        cx.emit("calm");
    });
    music.gather(&SimClock::new(), &&director_store);
    let failures = messages(&music);
    assert_eq!(failures.len(), 1, "{failures:?}");
    assert_eq!(failures[0].0, thief);
    assert!(
        failures[0].1.contains("another kind"),
        "the message says why: {}",
        failures[0].1
    );
    let intents: Vec<(ScriptId, &str)> = music.drain_intents().collect();
    assert_eq!(intents, [(calm, "calm")]);
}

#[test]
fn a_context_used_outside_any_poll_panics_clearly() {
    let mut store = Scripts::<Director>::new();
    store.start("leaker", |cx| async move {
        *LEAKED_OUTSIDE.lock().unwrap() = Some(cx);
    });
    store.gather(&SimClock::new(), &0);
    let leaked = LEAKED_OUTSIDE.lock().unwrap().expect("leaked above");
    let outcome = std::panic::catch_unwind(|| leaked.emit(3));
    let payload = outcome.expect_err("a context outside its poll panics");
    let message = payload
        .downcast_ref::<String>()
        .cloned()
        .unwrap_or_default();
    assert!(message.contains("outside its script"), "{message}");
}

#[test]
fn a_gather_inside_a_scripts_view_nests() {
    let inner = Mutex::new(Scripts::<Director>::new());
    let inner_id = inner.lock().unwrap().start("inner", |cx| async move {
        cx.emit(cx.view(|level| *level));
    });
    let mut outer = Scripts::<Music>::new();
    let outer_id = outer.start("outer", |cx| async move {
        cx.emit("before");
        // The inner store's gather polls its script on this thread inside
        // this poll; the outer context is whole again after it.
        cx.view(|store| store.lock().unwrap().gather(&SimClock::new(), &42));
        cx.emit("after");
    });
    outer.gather(&SimClock::new(), &&inner);
    assert!(messages(&outer).is_empty(), "{:?}", messages(&outer));
    let outer_intents: Vec<(ScriptId, &str)> = outer.drain_intents().collect();
    assert_eq!(outer_intents, [(outer_id, "before"), (outer_id, "after")]);
    let inner_intents: Vec<(ScriptId, u64)> = inner.lock().unwrap().drain_intents().collect();
    assert_eq!(inner_intents, [(inner_id, 42)]);
}

//! A get-or-add hit allocates nothing, even with a `String` key looked up
//! by `&str` and state passed as arguments; nor does a pooled list made
//! every frame once its pool holds a buffer (reference 003, "The structures
//! underneath").
//!
//! Its own test binary, for the counting global allocator. It counts only
//! the allocations of the thread that asked (the test harness's own threads
//! allocate when they please, which made a global count flaky).

#![cfg(not(loom))]

use sluice_collections::{GetOrAddMap, PooledList, pooled_list};

// The workspace's one counting allocator (beside the runtime's allocation
// tests, which share it).
#[path = "../../runtime/tests/support/counting_alloc.rs"]
mod counting_alloc;

use counting_alloc::{Counting, Threads, allocations_during};

#[global_allocator]
static GLOBAL: Counting = Counting;

/// What a registry of names might store: built from the key and the state.
fn describe(name: &str, base: u32, scale: u32, label: &'static str) -> (String, u32) {
    (format!("{label}{name}"), base + scale * name.len() as u32)
}

#[test]
fn hits_and_steady_lists_allocate_nothing() {
    let names: GetOrAddMap<String, (String, u32)> = GetOrAddMap::new();
    let keys = ["hp", "armor", "speed", "mana"];
    let base = 7;
    // Misses allocate: the owned key, the value, the map's storage.
    let misses = allocations_during(Threads::This, || {
        for key in keys {
            let value = names.get_or_add3(key, base, 2, "service ", describe);
            assert_eq!(value.1, base + 2 * key.len() as u32);
        }
    });
    assert!(misses >= keys.len(), "misses made {misses} allocations");

    let rounds = if cfg!(miri) { 3 } else { 1_000 };
    let hits = allocations_during(Threads::This, || {
        for _ in 0..rounds {
            for key in keys {
                let one = names.get_or_add(key, base, |name, base| (name.to_owned(), base));
                assert!(one.0.ends_with(key));
                drop(one);
                let two = names.get_or_add2(key, base, 3, |name, a, b| (name.to_owned(), a * b));
                assert!(two.1 >= base);
                drop(two);
                assert!(
                    names
                        .get_or_add3(key, 0, 0, "", describe)
                        .0
                        .starts_with("service ")
                );
            }
        }
    });
    assert_eq!(hits, 0, "get-or-add hits allocated");
    assert_eq!(names.len(), keys.len());

    // A scratch list built every frame: the first one allocates its buffer,
    // every later one reuses it from the per-type pool.
    let frame = |frame: u64| {
        let mut list: PooledList<u64> = pooled_list![frame, frame + 1];
        list.extend(0..30);
        assert_eq!(list.len(), 32);
    };
    frame(0);
    let steady = allocations_during(Threads::This, || {
        for n in 1..=rounds as u64 {
            frame(n);
        }
    });
    assert_eq!(steady, 0, "steady pooled lists allocated");
}

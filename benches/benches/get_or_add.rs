//! `get_or_add`: the hit path of `GetOrAddMap::get_or_add` beside its peers
//! on one `DashMap`: `entry(key).or_insert_with(..)` (the get-or-add dashmap
//! offers) and `get` (a plain read, the floor a hit can reach).
//!
//! Every key is present (built beforehand), so every call is a hit. Two key
//! types: `u64` ids, and `String` names looked up by `&str` (the case the
//! map exists for: `entry` needs an owned key, so a hit through it
//! allocates a `String` first; `get_or_add` looks up the borrowed key).
//! Every map hashes with the same `foldhash::fast::RandomState`. One
//! iteration is one pass over all keys on one thread.

#![allow(missing_docs)]

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use dashmap::DashMap;
use foldhash::fast::RandomState;
use sluice_collections::GetOrAddMap;

const KEYS: u64 = 1_000;

/// Spreads `0..KEYS` over the u64 range (splitmix64), so keys look like ids.
fn key(i: u64) -> u64 {
    let mut z = i.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

fn configure(group: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>) {
    group
        .throughput(Throughput::Elements(KEYS))
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .sample_size(30);
}

fn u64_hits(c: &mut Criterion) {
    let keys: Vec<u64> = (0..KEYS).map(key).collect();
    let ours: GetOrAddMap<u64, u64, RandomState> = GetOrAddMap::with_hasher(RandomState::default());
    let dash: DashMap<u64, u64, RandomState> = DashMap::with_hasher(RandomState::default());
    for &k in &keys {
        ours.get_or_add(&k, (), |k, ()| !k);
        dash.insert(k, !k);
    }
    let mut group = c.benchmark_group("get_or_add/hit_1k_u64_keys");
    configure(&mut group);
    group.bench_function("sluice GetOrAddMap::get_or_add", |b| {
        b.iter(|| {
            keys.iter()
                .map(|k| *ours.get_or_add(black_box(k), (), |k, ()| !k))
                .fold(0, u64::wrapping_add)
        });
    });
    group.bench_function("dashmap DashMap::entry", |b| {
        b.iter(|| {
            keys.iter()
                .map(|&k| *dash.entry(black_box(k)).or_insert_with(|| !k))
                .fold(0, u64::wrapping_add)
        });
    });
    group.bench_function("dashmap DashMap::get", |b| {
        b.iter(|| {
            keys.iter()
                .map(|k| *dash.get(black_box(k)).expect("present"))
                .fold(0, u64::wrapping_add)
        });
    });
    group.finish();
}

fn str_hits(c: &mut Criterion) {
    let names: Vec<String> = (0..KEYS)
        .map(|i| format!("service-{:016x}", key(i)))
        .collect();
    let ours: GetOrAddMap<String, usize, RandomState> =
        GetOrAddMap::with_hasher(RandomState::default());
    let dash: DashMap<String, usize, RandomState> = DashMap::with_hasher(RandomState::default());
    for name in &names {
        ours.get_or_add(name.as_str(), (), |name, ()| name.len());
        dash.insert(name.clone(), name.len());
    }
    let mut group = c.benchmark_group("get_or_add/hit_1k_str_keys");
    configure(&mut group);
    group.bench_function("sluice GetOrAddMap::get_or_add", |b| {
        b.iter(|| {
            names
                .iter()
                .map(|name| *ours.get_or_add(black_box(name.as_str()), (), |name, ()| name.len()))
                .fold(0, usize::wrapping_add)
        });
    });
    group.bench_function("dashmap DashMap::entry", |b| {
        b.iter(|| {
            names
                .iter()
                .map(|name| {
                    let name = black_box(name.as_str());
                    *dash.entry(name.to_owned()).or_insert_with(|| name.len())
                })
                .fold(0, usize::wrapping_add)
        });
    });
    group.bench_function("dashmap DashMap::get", |b| {
        b.iter(|| {
            names
                .iter()
                .map(|name| *dash.get(black_box(name.as_str())).expect("present"))
                .fold(0, usize::wrapping_add)
        });
    });
    group.finish();
}

criterion_group!(benches, u64_hits, str_hits);
criterion_main!(benches);

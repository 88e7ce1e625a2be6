//! `macro_overhead`: 100 systems declared with `#[system]` beside the same
//! 100 registered by hand with `NodeBuilder::new("..").system(f)`, each
//! reading two services and gating one of ten counters; one iteration is one
//! `World::run_iteration`. The two must be equal within noise: the macro
//! expands to the hand-written registration, and the node's body is the
//! function item itself.

#![allow(missing_docs)]

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use sluice::{NodeBuilder, World, system};

struct Input(u64);
struct Scale(u64);

macro_rules! counters {
    ($($c:ident)*) => {
        $(struct $c(u64);)*
        fn insert_services(world: &mut World) {
            world.insert(Input(3));
            world.insert(Scale(5));
            $(world.insert($c(0));)*
        }
    };
}

counters!(C0 C1 C2 C3 C4 C5 C6 C7 C8 C9);

macro_rules! systems {
    ($($m:ident $h:ident $c:ident;)*) => {
        $(
            #[system]
            fn $m(input: &Input, scale: &Scale, counter: &mut $c) {
                counter.0 = counter.0.wrapping_add(input.0 * scale.0);
            }

            fn $h(input: &Input, scale: &Scale, counter: &mut $c) {
                counter.0 = counter.0.wrapping_add(input.0 * scale.0);
            }
        )*

        fn macro_world() -> World {
            let mut world = World::new();
            insert_services(&mut world);
            $(world.add_system($m);)*
            world
        }

        fn hand_world() -> World {
            let mut world = World::new();
            insert_services(&mut world);
            $(world.add_system(NodeBuilder::new(stringify!($h)).system($h));)*
            world
        }
    };
}

systems! {
    m000 h000 C0;
    m001 h001 C1;
    m002 h002 C2;
    m003 h003 C3;
    m004 h004 C4;
    m005 h005 C5;
    m006 h006 C6;
    m007 h007 C7;
    m008 h008 C8;
    m009 h009 C9;
    m010 h010 C0;
    m011 h011 C1;
    m012 h012 C2;
    m013 h013 C3;
    m014 h014 C4;
    m015 h015 C5;
    m016 h016 C6;
    m017 h017 C7;
    m018 h018 C8;
    m019 h019 C9;
    m020 h020 C0;
    m021 h021 C1;
    m022 h022 C2;
    m023 h023 C3;
    m024 h024 C4;
    m025 h025 C5;
    m026 h026 C6;
    m027 h027 C7;
    m028 h028 C8;
    m029 h029 C9;
    m030 h030 C0;
    m031 h031 C1;
    m032 h032 C2;
    m033 h033 C3;
    m034 h034 C4;
    m035 h035 C5;
    m036 h036 C6;
    m037 h037 C7;
    m038 h038 C8;
    m039 h039 C9;
    m040 h040 C0;
    m041 h041 C1;
    m042 h042 C2;
    m043 h043 C3;
    m044 h044 C4;
    m045 h045 C5;
    m046 h046 C6;
    m047 h047 C7;
    m048 h048 C8;
    m049 h049 C9;
    m050 h050 C0;
    m051 h051 C1;
    m052 h052 C2;
    m053 h053 C3;
    m054 h054 C4;
    m055 h055 C5;
    m056 h056 C6;
    m057 h057 C7;
    m058 h058 C8;
    m059 h059 C9;
    m060 h060 C0;
    m061 h061 C1;
    m062 h062 C2;
    m063 h063 C3;
    m064 h064 C4;
    m065 h065 C5;
    m066 h066 C6;
    m067 h067 C7;
    m068 h068 C8;
    m069 h069 C9;
    m070 h070 C0;
    m071 h071 C1;
    m072 h072 C2;
    m073 h073 C3;
    m074 h074 C4;
    m075 h075 C5;
    m076 h076 C6;
    m077 h077 C7;
    m078 h078 C8;
    m079 h079 C9;
    m080 h080 C0;
    m081 h081 C1;
    m082 h082 C2;
    m083 h083 C3;
    m084 h084 C4;
    m085 h085 C5;
    m086 h086 C6;
    m087 h087 C7;
    m088 h088 C8;
    m089 h089 C9;
    m090 h090 C0;
    m091 h091 C1;
    m092 h092 C2;
    m093 h093 C3;
    m094 h094 C4;
    m095 h095 C5;
    m096 h096 C6;
    m097 h097 C7;
    m098 h098 C8;
    m099 h099 C9;
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("macro_overhead");
    let mut by_macro = macro_world();
    let mut by_hand = hand_world();
    by_macro.run_iteration().unwrap();
    by_hand.run_iteration().unwrap();
    group.bench_function("macro (#[system])", |b| {
        b.iter(|| black_box(&mut by_macro).run_iteration().unwrap())
    });
    group.bench_function("hand-written (NodeBuilder)", |b| {
        b.iter(|| black_box(&mut by_hand).run_iteration().unwrap())
    });
    group.finish();
    assert_eq!(
        by_macro.get::<C0>().map(|c| c.0 > 0),
        by_hand.get::<C0>().map(|c| c.0 > 0)
    );
}

criterion_group!(benches, bench);
criterion_main!(benches);

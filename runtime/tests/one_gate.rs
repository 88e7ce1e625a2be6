//! One gate for every declaration (issue 19): whatever gives a body access
//! goes through the same aliasing rule (`node::would_alias`, applied by
//! `NodeBuilder::build` and refused by the planner as SL0009) before the
//! body can run.
//!
//! The table below lists every public registration entry point and tries
//! each aliasing shape on each: two `&mut`, `&mut` beside `&`, beside
//! `Option<&>`, beside `Target<>`, `Option<&mut>` and `Ref<>` beside each, beside another query's change filter,
//! messages twice, services twice, and the runtime's own entity store
//! named by a user. A shape that must be refused is refused with SL0009
//! (SL0010 for the store) naming the node and the lane, and its body never
//! runs; a sound shape runs. `every_registration_site_is_in_the_table` reads the runtime's
//! sources: a new way into the plan that is not listed here fails it.

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use sluice::script::{ScriptKind, Scripts};
use sluice::{
    Added, Allow, AnyOf, Disabled, Has, Or, Populated, Single, StorageType, With, Without,
};
use sluice::{
    Append, AppendBuffer, BatchProcessor, Changed, Commands, ComponentRef, Entities, Entity, Graph,
    IntoSystem, IterationError, NodeBuilder, Publish, Query, QueryData, QueryFilter, Ref,
    Subscribe, Target, World, system,
};

/// How many bodies of the row under test ran (function items cannot
/// capture, so the count is global; the table runs in one test, row by row).
static RAN: AtomicUsize = AtomicUsize::new(0);
/// Serialises the tests of this file that use `RAN`.
static TABLE: Mutex<()> = Mutex::new(());

fn ran() {
    RAN.fetch_add(1, Ordering::SeqCst);
}

#[derive(Debug, Clone, Copy, PartialEq)]
struct A(u64);
/// A component kept in a sparse set: access is by component, whatever its
/// storage, so it aliases exactly as `A` does.
#[derive(Debug, Clone, Copy, PartialEq)]
struct SparseMark(u64);
#[derive(Debug, Default)]
struct R(u64);
#[derive(Debug, Clone, Copy)]
struct M(#[allow(dead_code)] u64);

#[derive(Debug, Default)]
struct Items(Vec<u64>);
impl sluice::exec::ClearBuffer for Items {
    fn clear_buffer(&mut self) {
        self.0.clear();
    }
}

struct Sum;
impl BatchProcessor for Sum {
    type Buffer = Items;
    type Item = u64;
    const BATCH_SIZE: usize = 4;

    fn items(buffer: &Items) -> &[u64] {
        &buffer.0
    }

    fn process_batch(&self, _start: usize, _batch: &[u64]) {
        ran();
    }
}

struct Director;
impl ScriptKind for Director {
    type View<'v> = ();
    type Intent = u64;
}

/// What a row must get.
#[derive(Debug, Clone, Copy)]
enum Expect {
    /// SL0009 for the node `row`, naming a service whose name contains
    /// this, and the body never runs.
    Refused(&'static str),
    /// SL0010 (the runtime's own service named by a user declaration),
    /// naming the service; the body never runs.
    RuntimeOnly(&'static str),
    /// As `Refused`, for the node named first (a commit point, `row@commit`).
    RefusedIn(&'static str, &'static str),
    /// The plan accepts it and the body runs.
    Runs,
    /// A one-shot system (`World::run_system_once`, `World::run_system`):
    /// refused with this code (SL0009, SL0010) naming this lane, its body
    /// never run; the row's `register` keeps the outcome in [`OneShot`].
    OneShotRefused(&'static str, &'static str),
    /// A one-shot system the gate lets through: it ran.
    OneShotRuns,
}

/// What a one-shot row's system returned (its error's message).
struct OneShot(Result<(), String>);

fn keep_one_shot(world: &mut World, outcome: Result<(), sluice::RunSystemError>) {
    world.insert(OneShot(outcome.map_err(|error| error.to_string())));
}

struct Row {
    /// The public entry point.
    entry: &'static str,
    /// The shape tried on it.
    shape: &'static str,
    register: fn(&mut World),
    expect: Expect,
}

/// A world of ten entities, each with `A` and a `ComponentRef<A>` to the
/// first (so `Target<A>` has rows), and the services the shapes name.
fn world() -> World {
    let mut world = World::new();
    world
        .register_component::<SparseMark>(StorageType::SparseSet)
        .expect("a new type");
    let first = world.spawn((A(0),));
    world.freeze(first).expect("a live entity freezes");
    let target = ComponentRef::<A>::new(&world, first).expect("a frozen entity");
    for i in 1..10 {
        let e = world.spawn((A(i), target));
        if i % 2 == 0 {
            world
                .entity_mut(e)
                .expect("alive")
                .insert((SparseMark(i),))
                .expect("inserted");
        }
    }
    world.insert(R(1));
    world.insert(Items((0..16).collect()));
    world.insert(Scripts::<Director>::new());
    world
}

// The function items of the typed paths, generic over the query's shape.

fn one_query<D: QueryData + 'static, F: QueryFilter + 'static>(query: Query<'_, D, F>) {
    let _ = query;
    ran();
}

fn two_queries<D: QueryData + 'static, E: QueryData + 'static, F: QueryFilter + 'static>(
    first: Query<'_, D>,
    second: Query<'_, E, F>,
) {
    let _ = (first, second);
    ran();
}

fn query_factory<D: QueryData + 'static>(query: Query<'_, D>) -> Product {
    let _ = query;
    ran();
    Product
}

#[derive(Debug)]
struct Product;

fn gather<D: QueryData + 'static>(scripts: &mut Scripts<Director>, query: Query<'_, D>) {
    scripts.gather(&sluice::script::SimClock::new(), &());
    let _ = query;
    ran();
}

// `#[system] fn f(q: Query<(&mut A, &mut A)>)` is refused at compile time
// (SA0002, `tests/ui/alias_one_error_per_pair.rs` and its neighbours); a
// `#[system]` that passes the macro reaches the same gate at run time.

#[system]
fn macro_sound(query: Query<(&mut A, Entity), Changed<A>>) {
    let _ = query;
    ran();
}

/// Registers `one_query::<D, F>` through the entry point named by `how`.
macro_rules! query_rows {
    ($rows:ident, $shape:literal, ($($d:tt)*), $f:ty, $expect:expr) => {
        $rows.push(Row {
            entry: "World::add_system(function item)",
            shape: $shape,
            register: |w| {
                w.add_system(NodeBuilder::new("row").system(one_query::<$($d)*, $f>));
            },
            expect: $expect,
        });
        $rows.push(Row {
            entry: "World::add_system(NodeBuilder::system(closure))",
            shape: $shape,
            register: |w| {
                w.add_system(NodeBuilder::new("row").system(|q: Query<'_, $($d)*, $f>| {
                    let _ = q;
                    ran();
                }));
            },
            expect: $expect,
        });
        $rows.push(Row {
            entry: "World::add_factory(NodeBuilder::factory(function item))",
            shape: $shape,
            register: |w| {
                w.add_factory(NodeBuilder::new("row").factory(query_factory::<$($d)*>));
            },
            // The factory's query has no filter: a row whose soundness rests
            // on its filter is tried on the other paths.
            expect: $expect,
        });
        $rows.push(Row {
            entry: "World::add_par_query",
            shape: $shape,
            register: |w| {
                w.add_par_query::<$($d)*, $f>(NodeBuilder::new("row"), 2, |_| ran());
            },
            expect: $expect,
        });
        $rows.push(Row {
            entry: "Commands::add_system (registered from a running node)",
            shape: $shape,
            register: |w| {
                let once = std::sync::Once::new();
                w.add_system(NodeBuilder::new("registrar").system(move |commands: Commands<'_>| {
                    once.call_once(|| {
                        commands
                            .add_system(NodeBuilder::new("row").system(one_query::<$($d)*, $f>));
                    });
                }));
            },
            expect: $expect,
        });
        $rows.push(Row {
            entry: "script gather (a system taking &mut Scripts<K>)",
            shape: $shape,
            register: |w| {
                w.add_system(NodeBuilder::new("row").system(gather::<$($d)*>));
            },
            expect: $expect,
        });
    };
}

/// A shape tried as two parameters of one function.
type Pair = (&'static str, fn(&mut World), Expect);

fn table() -> Vec<Row> {
    let mut rows = Vec::new();
    query_rows!(
        rows,
        "Query<(&mut A, &mut A)>",
        ((&mut A, &mut A)),
        (),
        Expect::Refused("A")
    );
    query_rows!(
        rows,
        "Query<(&mut A, &A)>",
        ((&mut A, &A)),
        (),
        Expect::Refused("A")
    );
    query_rows!(
        rows,
        "Query<(&A, &mut A)>",
        ((&A, &mut A)),
        (),
        Expect::Refused("A")
    );
    query_rows!(
        rows,
        "Query<(&mut A, Option<&A>)>",
        ((&mut A, Option<&A>)),
        (),
        Expect::Refused("A")
    );
    query_rows!(
        rows,
        "Query<(&mut A, Target<A>)>",
        ((&mut A, Target<A>)),
        (),
        Expect::Refused("A")
    );
    query_rows!(
        rows,
        "Query<((&mut A, Entity), &A)> (nested)",
        (((&mut A, Entity), &A)),
        (),
        Expect::Refused("A")
    );
    query_rows!(
        rows,
        "Query<(&A, &A, Option<&A>, Target<A>)> (shared only)",
        ((&A, &A, Option<&A>, Target<A>)),
        (),
        Expect::Runs
    );
    query_rows!(
        rows,
        "Query<(Entity, &mut A), Changed<A>> (the filter beside its own data)",
        ((Entity, &mut A)),
        Changed<A>,
        Expect::Runs
    );
    // Issue 36: `Option<&mut A>` gates `A` like `&mut A`; `Ref<A>` reads it.
    query_rows!(
        rows,
        "Query<(Option<&mut A>, &A)>",
        ((Option<&mut A>, &A)),
        (),
        Expect::Refused("A")
    );
    query_rows!(
        rows,
        "Query<(&A, Option<&mut A>)>",
        ((&A, Option<&mut A>)),
        (),
        Expect::Refused("A")
    );
    query_rows!(
        rows,
        "Query<(Option<&mut A>, Option<&mut A>)>",
        ((Option<&mut A>, Option<&mut A>)),
        (),
        Expect::Refused("A")
    );
    query_rows!(
        rows,
        "Query<(&mut A, Option<&mut A>)>",
        ((&mut A, Option<&mut A>)),
        (),
        Expect::Refused("A")
    );
    query_rows!(
        rows,
        "Query<(Option<&mut A>, Option<&A>)>",
        ((Option<&mut A>, Option<&A>)),
        (),
        Expect::Refused("A")
    );
    query_rows!(
        rows,
        "Query<(Option<&mut A>, Target<A>)>",
        ((Option<&mut A>, Target<A>)),
        (),
        Expect::Refused("A")
    );
    query_rows!(
        rows,
        "Query<((Entity, Option<&mut A>), Ref<A>)> (nested)",
        (((Entity, Option<&mut A>), Ref<A>)),
        (),
        Expect::Refused("A")
    );
    query_rows!(
        rows,
        "Query<(Ref<A>, &mut A)>",
        ((Ref<A>, &mut A)),
        (),
        Expect::Refused("A")
    );
    query_rows!(
        rows,
        "Query<(Ref<A>, &A, Option<&A>)> (shared only)",
        ((Ref<A>, &A, Option<&A>)),
        (),
        Expect::Runs
    );
    query_rows!(
        rows,
        "Query<(Entity, Option<&mut A>), Changed<A>> (the filter beside its own data)",
        ((Entity, Option<&mut A>)),
        Changed<A>,
        Expect::Runs
    );

    // Two parameters of one function.
    let pairs: [Pair; 12] = [
        // --- issue 20: appending (begin) ---
        (
            "Append<R> beside &mut AppendBuffer<R> (appending and gating one buffer in one point)",
            |w| {
                w.add_system(NodeBuilder::new("row").system(
                    |a: Append<'_, R>, b: &mut AppendBuffer<R>| {
                        let _ = (a, b);
                        ran();
                    },
                ));
            },
            Expect::Refused("AppendBuffer"),
        ),
        (
            "Append<R> twice (one declaration)",
            |w| {
                w.add_system(NodeBuilder::new("row").system(
                    |a: Append<'_, R>, b: Append<'_, R>| {
                        a.push(R(1));
                        b.push(R(2));
                        ran();
                    },
                ));
            },
            Expect::Runs,
        ),
        (
            "Append<R> beside &AppendBuffer<R>",
            |w| {
                w.add_system(NodeBuilder::new("row").system(
                    |a: Append<'_, R>, b: &AppendBuffer<R>| {
                        a.push(R(1));
                        let _ = b.len();
                        ran();
                    },
                ));
            },
            Expect::Runs,
        ),
        // --- issue 20: appending (end) ---
        (
            "Query<&mut A> beside Query<&A>",
            |w| {
                w.add_system(NodeBuilder::new("row").system(two_queries::<&mut A, &A, ()>));
            },
            Expect::Refused("A"),
        ),
        (
            "Query<&mut A> beside Query<Entity, Changed<A>>",
            |w| {
                w.add_system(
                    NodeBuilder::new("row").system(two_queries::<&mut A, Entity, Changed<A>>),
                );
            },
            Expect::Refused("A"),
        ),
        (
            "Query<&A> beside Query<Entity, Changed<A>>",
            |w| {
                w.add_system(NodeBuilder::new("row").system(two_queries::<&A, Entity, Changed<A>>));
            },
            Expect::Runs,
        ),
        (
            "&mut R beside &mut R",
            |w| {
                w.add_system(NodeBuilder::new("row").system(|a: &mut R, b: &mut R| {
                    let _ = (a, b);
                    ran();
                }));
            },
            Expect::Refused("R"),
        ),
        (
            "&mut R beside &R",
            |w| {
                w.add_system(NodeBuilder::new("row").system(|a: &mut R, b: &R| {
                    let _ = (a, b);
                    ran();
                }));
            },
            Expect::Refused("R"),
        ),
        (
            "&R beside &R",
            |w| {
                w.add_system(NodeBuilder::new("row").system(|a: &R, b: &R| {
                    let _ = (a, b);
                    ran();
                }));
            },
            Expect::Runs,
        ),
        (
            "Subscribe<M> twice",
            |w| {
                w.add_system(NodeBuilder::new("row").system(
                    |a: Subscribe<'_, M>, b: Subscribe<'_, M>| {
                        let _ = (a, b);
                        ran();
                    },
                ));
            },
            Expect::Refused("M"),
        ),
        (
            "Publish<M> beside Subscribe<M>",
            |w| {
                w.add_system(NodeBuilder::new("row").system(
                    |a: Publish<'_, M>, b: Subscribe<'_, M>| {
                        let _ = (a, b);
                        ran();
                    },
                ));
            },
            Expect::Refused("M"),
        ),
        (
            "Publish<M> twice (two shared writers)",
            |w| {
                w.add_system(NodeBuilder::new("row").system(
                    |a: Publish<'_, M>, b: Publish<'_, M>| {
                        a.send(M(1));
                        b.send(M(2));
                        ran();
                    },
                ));
            },
            Expect::Runs,
        ),
    ];
    for (shape, register, expect) in pairs {
        rows.push(Row {
            entry: "World::add_system(NodeBuilder::system(closure)), two parameters",
            shape,
            register,
            expect,
        });
    }

    // The runtime's own services: the entity store reaches every column.
    rows.push(Row {
        entry: "World::add_system(NodeBuilder::system(closure)), the store",
        shape: "&Entities beside a writer of A",
        register: |w| {
            w.add_system(NodeBuilder::new("row").system(|entities: &Entities| {
                let _ = entities.len();
                ran();
            }));
            w.add_system(NodeBuilder::new("writer").system(one_query::<&mut A, ()>));
        },
        expect: Expect::RuntimeOnly("Entities"),
    });
    rows.push(Row {
        entry: "World::add_system(NodeBuilder::system(closure)), the store",
        shape: "&mut Entities",
        register: |w| {
            w.add_system(NodeBuilder::new("row").system(|entities: &mut Entities| {
                let _ = entities.len();
                ran();
            }));
        },
        expect: Expect::RuntimeOnly("Entities"),
    });
    rows.push(Row {
        entry: "NodeBuilder::run (a Context body), the store",
        shape: ".reads::<Entities>()",
        register: |w| {
            w.add_system(NodeBuilder::new("row").reads::<Entities>().run(|cx| {
                let _ = cx.read::<Entities>().len();
                ran();
            }));
        },
        expect: Expect::RuntimeOnly("Entities"),
    });
    rows.push(Row {
        entry: "NodeSpec::run_if, the store",
        shape: "condition &Entities",
        register: |w| {
            w.add_system(
                NodeBuilder::new("row")
                    .system(one_query::<&A, ()>)
                    .run_if(|entities: &Entities| !entities.is_empty()),
            );
        },
        expect: Expect::RuntimeOnly("Entities"),
    });
    rows.push(Row {
        entry: "World::add_par_query, the store",
        shape: "a builder's .reads::<Entities>() beside the query",
        register: |w| {
            w.add_par_query::<&mut A, ()>(NodeBuilder::new("row").reads::<Entities>(), 2, |_| {
                ran()
            });
        },
        expect: Expect::RuntimeOnly("Entities"),
    });
    rows.push(Row {
        entry: "World::add_batch_processor, the store",
        shape: ".gates::<Entities>()",
        register: |w| {
            w.add_batch_processor(NodeBuilder::new("row").gates::<Entities>(), Sum);
        },
        expect: Expect::RuntimeOnly("Entities"),
    });
    rows.push(Row {
        entry: "#[system] function",
        shape: "Query<(&mut A, Entity), Changed<A>>",
        register: |w| {
            w.add_system(macro_sound);
        },
        expect: Expect::Runs,
    });
    rows.push(Row {
        entry: "World::add_system(unnamed closure)",
        shape: "Query<(&mut A, &A)>",
        register: |w| {
            // Named after its source location; the row's checks look for
            // a node whose name starts with "row" only in the named rows.
            w.add_system(
                NodeBuilder::new("row").system(|q: Query<'_, (&mut A, &A)>| {
                    let _ = q;
                    ran();
                }),
            );
        },
        expect: Expect::Refused("A"),
    });
    rows.push(Row {
        entry: "NodeSpec::run_if (a condition's query beside the body's)",
        shape: "condition Query<(&A, Option<&A>)>, body Query<&mut A>",
        register: |w| {
            let condition = |q: Query<'_, (&A, Option<&A>)>| q.iter().count() == 10;
            w.add_system(
                NodeBuilder::new("row")
                    .system(one_query::<&mut A, ()>)
                    .run_if(condition),
            );
        },
        // A condition runs before its body, never beside it.
        expect: Expect::Runs,
    });
    rows.push(Row {
        entry: "NodeSpec::run_if on an aliasing body",
        shape: "condition &R, body Query<(&mut A, &A)>",
        register: |w| {
            w.add_system(
                NodeBuilder::new("row")
                    .system(one_query::<(&mut A, &A), ()>)
                    .run_if(|r: &R| r.0 == 1),
            );
        },
        expect: Expect::Refused("A"),
    });
    rows.push(Row {
        entry: "NodeBuilder::run (a Context body)",
        shape: ".gates::<R>().reads::<R>() (builder calls merge)",
        register: |w| {
            w.add_system(NodeBuilder::new("row").gates::<R>().reads::<R>().run(|cx| {
                // The context lends one service at a time.
                let before = cx.read::<R>().0;
                cx.write::<R>().0 += 1;
                assert_eq!(cx.read::<R>().0, before + 1);
                ran();
            }));
        },
        expect: Expect::Runs,
    });
    rows.push(Row {
        entry: "NodeSpec::on_create (a lifecycle hook) on an aliasing body",
        shape: "Query<(&mut A, &mut A)>",
        register: |w| {
            w.add_system(
                NodeBuilder::new("row")
                    .system(one_query::<(&mut A, &mut A), ()>)
                    // A hook of a refused node never runs either.
                    .on_create(|_| ran()),
            );
        },
        expect: Expect::Refused("A"),
    });
    rows.push(Row {
        entry: "NodeSpec::on_create (a lifecycle hook)",
        shape: ".gates::<R>().reads::<R>(), the hook's Context",
        register: |w| {
            w.add_system(
                NodeBuilder::new("row")
                    .gates::<R>()
                    .reads::<R>()
                    .run(|_| {})
                    .on_create(|cx| {
                        cx.write::<R>().0 += 1;
                        ran();
                    }),
            );
        },
        expect: Expect::Runs,
    });
    rows.push(Row {
        entry: "NodeBuilder::world (a whole-world system)",
        shape: ".gates::<R>().reads::<R>(), &mut World",
        register: |w| {
            w.add_system(
                NodeBuilder::new("row")
                    .gates::<R>()
                    .reads::<R>()
                    .world(|world| {
                        world.get_mut::<R>().expect("R").0 += 1;
                        ran();
                    }),
            );
        },
        expect: Expect::Runs,
    });
    // --- issue 20: two-point nodes (begin) ---
    rows.push(Row {
        entry: "NodeSpec::commit",
        shape: "body Append<R>, commit &mut AppendBuffer<R> (two points)",
        register: |w| {
            w.add_system(
                NodeBuilder::new("row")
                    .system(|a: Append<'_, R>| {
                        a.push(R(1));
                        ran();
                    })
                    .commit(|b: &mut AppendBuffer<R>| {
                        assert_eq!(b.drain().count(), 1);
                        ran();
                    }),
            );
        },
        expect: Expect::Runs,
    });
    rows.push(Row {
        entry: "NodeSpec::commit on an aliasing commit",
        shape: "commit Append<R> beside &mut AppendBuffer<R>",
        register: |w| {
            w.add_system(NodeBuilder::new("row").system(ran).commit(
                |a: Append<'_, R>, b: &mut AppendBuffer<R>| {
                    let _ = (a, b);
                    ran();
                },
            ));
        },
        expect: Expect::RefusedIn("row@commit", "AppendBuffer"),
    });
    rows.push(Row {
        entry: "IntoSystem::commit (function items)",
        shape: "body Query<(&mut A, &A)>, commit &mut AppendBuffer<R>",
        register: |w| {
            fn commit_row(b: &mut AppendBuffer<R>) {
                let _ = b.drain();
                ran();
            }
            w.add_system(one_query::<(&mut A, &A), ()>.commit(commit_row));
        },
        expect: Expect::RefusedIn("one_query", "A"),
    });
    rows.push(Row {
        entry: "Commands::add_system with NodeSpec::commit",
        shape: "commit Append<R> beside &mut AppendBuffer<R>",
        register: |w| {
            let once = std::sync::Once::new();
            w.add_system(
                NodeBuilder::new("registrar").system(move |commands: Commands<'_>| {
                    once.call_once(|| {
                        commands.add_system(NodeBuilder::new("row").system(ran).commit(
                            |a: Append<'_, R>, b: &mut AppendBuffer<R>| {
                                let _ = (a, b);
                                ran();
                            },
                        ));
                    });
                }),
            );
        },
        expect: Expect::RefusedIn("row@commit", "AppendBuffer"),
    });
    // --- issue 20: two-point nodes (end) ---
    optional_and_conditioned_rows(&mut rows);
    vocabulary_rows(&mut rows);
    local_rows(&mut rows);
    group_condition_rows(&mut rows);
    sparse_rows(&mut rows);
    rows.push(Row {
        entry: "World::add_batch_processor",
        shape: ".gates::<Items>().reads::<Items>() beside the runtime's gate",
        register: |w| {
            w.add_batch_processor(
                NodeBuilder::new("row").gates::<Items>().reads::<Items>(),
                Sum,
            );
        },
        expect: Expect::Runs,
    });
    rows.push(Row {
        entry: "World::run_system_once",
        shape: "Query<(&mut A, &A)>",
        register: |w| {
            let outcome =
                w.run_system_once(NodeBuilder::new("row").system(one_query::<(&mut A, &A), ()>));
            keep_one_shot(w, outcome);
        },
        expect: Expect::OneShotRefused("SL0009", "A"),
    });
    rows.push(Row {
        entry: "World::run_system_once, the store",
        shape: "&Entities",
        register: |w| {
            let outcome =
                w.run_system_once(NodeBuilder::new("row").system(|entities: &Entities| {
                    let _ = entities.len();
                    ran();
                }));
            keep_one_shot(w, outcome);
        },
        expect: Expect::OneShotRefused("SL0010", "Entities"),
    });
    rows.push(Row {
        entry: "World::register_system",
        shape: "&mut R beside &R",
        register: |w| {
            let id = w.register_system(NodeBuilder::new("row").system(|a: &mut R, b: &R| {
                let _ = (a, b);
                ran();
            }));
            let outcome = w.run_system(id);
            keep_one_shot(w, outcome);
        },
        expect: Expect::OneShotRefused("SL0009", "R"),
    });
    rows.push(Row {
        entry: "World::register_system, sound",
        shape: "Query<(&mut A, Entity), Changed<A>>",
        register: |w| {
            let id = w.register_system(
                NodeBuilder::new("row").system(one_query::<(&mut A, Entity), Changed<A>>),
            );
            let outcome = w.run_system(id);
            keep_one_shot(w, outcome);
        },
        expect: Expect::OneShotRuns,
    });
    rows
}

// ---- issue 20: optional services and conditioned batch / par-query nodes ----

#[system]
fn macro_optional(seen: Option<&R>, again: &R, written: Option<&mut A>) {
    let _ = (seen, again, written);
    ran();
}

/// `Option<&T>` / `Option<&mut T>` declare the lanes of `&T` / `&mut T`
/// through the same builder calls, so the gate judges them alike; a
/// condition on a batch processor or parallel query merges with the node's
/// declarations as any condition does.
fn optional_and_conditioned_rows(rows: &mut Vec<Row>) {
    let pairs: [Pair; 5] = [
        (
            "&mut R beside Option<&R>",
            |w| {
                w.add_system(NodeBuilder::new("row").system(|a: &mut R, b: Option<&R>| {
                    let _ = (a, b);
                    ran();
                }));
            },
            Expect::Refused("R"),
        ),
        (
            "Option<&mut R> beside &R",
            |w| {
                w.add_system(NodeBuilder::new("row").system(|a: Option<&mut R>, b: &R| {
                    let _ = (a, b);
                    ran();
                }));
            },
            Expect::Refused("R"),
        ),
        (
            "Option<&mut R> beside Option<&mut R>",
            |w| {
                w.add_system(NodeBuilder::new("row").system(
                    |a: Option<&mut R>, b: Option<&mut R>| {
                        let _ = (a, b);
                        ran();
                    },
                ));
            },
            Expect::Refused("R"),
        ),
        (
            "Option<&R> beside &R (shared only)",
            |w| {
                w.add_system(NodeBuilder::new("row").system(|a: Option<&R>, b: &R| {
                    assert_eq!(a.map(|r| r.0), Some(b.0));
                    ran();
                }));
            },
            Expect::Runs,
        ),
        (
            "Option<&mut M> with no M held (optional: not a missing service)",
            |w| {
                w.add_system(NodeBuilder::new("row").system(|m: Option<&mut M>| {
                    assert!(m.is_none());
                    ran();
                }));
            },
            Expect::Runs,
        ),
    ];
    for (shape, register, expect) in pairs {
        rows.push(Row {
            entry: "World::add_system(NodeBuilder::system(closure)), optional parameters",
            shape,
            register,
            expect,
        });
    }
    rows.push(Row {
        entry: "#[system] function, optional parameters",
        shape: "Option<&R>, &R, Option<&mut A> (no service A held)",
        register: |w| {
            w.add_system(macro_optional);
        },
        expect: Expect::Runs,
    });
    rows.push(Row {
        entry: "NodeSpec::run_if, optional parameters",
        shape: "condition Option<&R> beside a body gating R",
        register: |w| {
            w.add_system(
                NodeBuilder::new("row")
                    .system(|r: &mut R| {
                        r.0 += 1;
                        ran();
                    })
                    .run_if(|r: Option<&R>| r.is_some()),
            );
        },
        // A condition runs before its body, never beside it.
        expect: Expect::Runs,
    });
    rows.push(Row {
        entry: "NodeBuilder::batch_processor + NodeSpec::run_if",
        shape: "condition Option<&Items> beside the runtime's gate of Items",
        register: |w| {
            w.add_system(
                NodeBuilder::new("row")
                    .batch_processor(Sum)
                    .run_if(|items: Option<&Items>| items.is_some_and(|i| !i.0.is_empty())),
            );
        },
        expect: Expect::Runs,
    });
    rows.push(Row {
        entry: "NodeBuilder::batch_processor, the store",
        shape: "condition &Entities",
        register: |w| {
            w.add_system(
                NodeBuilder::new("row")
                    .batch_processor(Sum)
                    .run_if(|entities: &Entities| !entities.is_empty()),
            );
        },
        expect: Expect::RuntimeOnly("Entities"),
    });
    rows.push(Row {
        entry: "NodeBuilder::par_query + NodeSpec::run_if",
        shape: "condition Query<&A> beside the body's Query<&mut A>",
        register: |w| {
            w.add_system(
                NodeBuilder::new("row")
                    .par_query::<&mut A, ()>(2, |_| ran())
                    .run_if(|q: Query<'_, &A>| q.iter().count() == 10),
            );
        },
        expect: Expect::Runs,
    });
    rows.push(Row {
        entry: "NodeBuilder::par_query + NodeSpec::run_if, an aliasing body",
        shape: "condition &R, body Query<(&mut A, &A)>",
        register: |w| {
            w.add_system(
                NodeBuilder::new("row")
                    .par_query::<(&mut A, &A), ()>(2, |_| ran())
                    .run_if(|r: &R| r.0 == 1),
            );
        },
        expect: Expect::Refused("A"),
    });
    rows.push(Row {
        entry: "Commands::add_system (NodeBuilder::par_query from a running node)",
        shape: "Query<(&mut A, Option<&A>)>",
        register: |w| {
            let once = std::sync::Once::new();
            w.add_system(
                NodeBuilder::new("registrar").system(move |commands: Commands<'_>| {
                    once.call_once(|| {
                        commands.add_system(
                            NodeBuilder::new("row")
                                .par_query::<(&mut A, Option<&A>), ()>(2, |_| ran()),
                        );
                    });
                }),
            );
        },
        expect: Expect::Refused("A"),
    });
}

// ---- issue 36: `Local<T>` and run-condition combinators ----

#[system]
fn macro_local(mut count: sluice::Local<'_, u64>, written: &mut R) {
    *count += 1;
    written.0 = *count;
    ran();
}

fn reads_r(r: &R) -> bool {
    r.0 < u64::MAX
}

/// A `Local<T>` declares no lane (its state is its node part's alone), so
/// beside anything it aliases nothing, and it does not shift the positions
/// the gate names; a combined condition's reads merge with the body's
/// declarations as any condition's do.
fn local_rows(rows: &mut Vec<Row>) {
    use sluice::{ConditionExt, Local, not};
    let pairs: [Pair; 8] = [
        // One condition's parameters are fetched together for one call: two
        // readers of one message log there would be two `&mut` of it.
        (
            "a run condition with Subscribe<M> twice",
            |w| {
                w.add_system(NodeBuilder::new("row").system(ran).run_if(
                    |a: Subscribe<'_, M>, b: Subscribe<'_, M>| {
                        let _ = (a, b);
                        true
                    },
                ));
            },
            Expect::Refused("Messages"),
        ),
        // A combined condition calls its operands one after the other.
        (
            "two combined conditions each with Subscribe<M>",
            |w| {
                let first = |a: Subscribe<'_, M>| {
                    let _ = a;
                    true
                };
                let second = |b: Subscribe<'_, M>| {
                    let _ = b;
                    true
                };
                w.add_system(
                    NodeBuilder::new("row")
                        .system(ran)
                        .run_if(first.and(second)),
                );
            },
            Expect::Runs,
        ),
        (
            "Local<R> beside &mut R",
            |w| {
                w.add_system(NodeBuilder::new("row").system(|l: Local<R>, r: &mut R| {
                    let _ = (l, r);
                    ran();
                }));
            },
            Expect::Runs,
        ),
        (
            "Local<u64> beside Local<u64>",
            |w| {
                w.add_system(NodeBuilder::new("row").system(
                    |mut a: Local<u64>, mut b: Local<u64>| {
                        *a += 1;
                        *b += 1;
                        ran();
                    },
                ));
            },
            Expect::Runs,
        ),
        (
            "&mut R, Local<u64>, &mut R",
            |w| {
                w.add_system(NodeBuilder::new("row").system(
                    |a: &mut R, l: Local<u64>, b: &mut R| {
                        let _ = (a, l, b);
                        ran();
                    },
                ));
            },
            Expect::Refused("by parameter 3"),
        ),
        (
            "#[system] with Local<u64> beside &mut R",
            |w| {
                w.add_system(macro_local);
            },
            Expect::Runs,
        ),
        (
            "run_if(Local<u64> condition) beside a body gating R",
            |w| {
                w.add_system(
                    NodeBuilder::new("row")
                        .system(|r: &mut R| {
                            let _ = r;
                            ran();
                        })
                        .run_if(|mut calls: Local<u64>| {
                            *calls += 1;
                            true
                        }),
                );
            },
            Expect::Runs,
        ),
        (
            "run_if(not(reads R).or(reads R)) beside a body gating R",
            |w| {
                w.add_system(
                    NodeBuilder::new("row")
                        .system(|r: &mut R| {
                            let _ = r;
                            ran();
                        })
                        .run_if(not(reads_r).or(reads_r)),
                );
            },
            Expect::Runs,
        ),
    ];
    for (shape, register, expect) in pairs {
        rows.push(Row {
            entry: "World::add_system(NodeBuilder::system(closure))",
            shape,
            register,
            expect,
        });
    }
}

// ---- issue 36: conditions on groups, stages and sets ----

/// A group's, stage's or set's condition is a node of its own
/// (`run_if(<name>)`): its parameters are judged against each other by the
/// gate as one run condition's are (`DeclaredBy::Condition`), combined
/// operands are parts of their own, and its reads sit beside the members'
/// gates in other nodes, never inside them.
fn subscribes_twice(a: Subscribe<'_, M>, b: Subscribe<'_, M>) -> bool {
    let _ = (a, b);
    true
}

fn subscribes(a: Subscribe<'_, M>) -> bool {
    let _ = a;
    true
}

fn piped_subscribes(input: bool, a: Subscribe<'_, M>) -> bool {
    let _ = a;
    input
}

fn piped_subscribes_twice(input: bool, a: Subscribe<'_, M>, b: Subscribe<'_, M>) -> bool {
    let _ = (a, b);
    input
}

fn gates_r(r: &mut R) {
    let _ = r;
    ran();
}

fn group_condition_rows(rows: &mut Vec<Row>) {
    use sluice::{ConditionExt, Group};
    // An entry point, then a `Pair`.
    type EntryPair = (&'static str, &'static str, fn(&mut World), Expect);
    let rows_of: [EntryPair; 7] = [
        (
            "World::run_group_if",
            "a piped condition's second part with Subscribe<M> twice",
            |w| {
                w.add_group(Group::new("G"));
                w.run_group_if("G", subscribes.pipe(piped_subscribes_twice));
                w.add_system(NodeBuilder::new("row").in_group("G").system(ran));
            },
            Expect::RefusedIn("run_if(G)", "Messages"),
        ),
        (
            "World::run_group_if",
            "a piped condition with Subscribe<M> in each part",
            |w| {
                w.add_group(Group::new("G"));
                w.run_group_if("G", subscribes.pipe(piped_subscribes));
                w.add_system(NodeBuilder::new("row").in_group("G").system(ran));
            },
            Expect::Runs,
        ),
        (
            "World::run_group_if",
            "a group condition with Subscribe<M> twice",
            |w| {
                w.add_group(Group::new("G"));
                w.run_group_if("G", subscribes_twice);
                w.add_system(NodeBuilder::new("row").in_group("G").system(ran));
            },
            Expect::RefusedIn("run_if(G)", "Messages"),
        ),
        (
            "World::run_group_if",
            "two combined group conditions each with Subscribe<M>",
            |w| {
                w.add_group(Group::new("G"));
                w.run_group_if("G", subscribes.and(subscribes));
                w.add_system(NodeBuilder::new("row").in_group("G").system(ran));
            },
            Expect::Runs,
        ),
        (
            "World::run_group_if",
            "a group condition reading R beside a member gating R",
            |w| {
                w.add_group(Group::new("G"));
                w.run_group_if("G", reads_r);
                w.add_system(NodeBuilder::new("row").in_group("G").system(gates_r));
            },
            Expect::Runs,
        ),
        (
            "World::run_stage_if",
            "a stage condition with Subscribe<M> twice",
            |w| {
                w.add_stage("S", 0);
                w.run_stage_if("S", subscribes_twice);
                w.add_system(NodeBuilder::new("row").in_stage("S").system(ran));
            },
            Expect::RefusedIn("run_if(S)", "Messages"),
        ),
        (
            "World::run_set_if",
            "a set condition reading R beside a member gating R",
            |w| {
                w.add_set("Audio", 0);
                w.run_set_if("Audio", reads_r);
                w.add_system(NodeBuilder::new("row").in_set("Audio").system(gates_r));
            },
            Expect::Runs,
        ),
    ];
    for (entry, shape, register, expect) in rows_of {
        rows.push(Row {
            entry,
            shape,
            register,
            expect,
        });
    }
}

fn run_row(row: &Row) {
    RAN.store(0, Ordering::SeqCst);
    let mut world = world();
    (row.register)(&mut world);
    let what = format!("{} with {}", row.entry, row.shape);
    match row.expect {
        Expect::OneShotRefused(code, lane) => {
            let outcome = &world.get::<OneShot>().expect("the row kept its outcome").0;
            let error = outcome.as_ref().expect_err(&format!("{what}: refused"));
            assert!(
                error.contains(code) && error.contains(lane),
                "{what}: {error}"
            );
            assert!(error.contains("`row`"), "{what}: names the system: {error}");
            assert_eq!(RAN.load(Ordering::SeqCst), 0, "{what}: nothing of it ran");
            return;
        }
        Expect::OneShotRuns => {
            let outcome = &world.get::<OneShot>().expect("the row kept its outcome").0;
            assert!(outcome.is_ok(), "{what}: runs, got {outcome:?}");
            assert!(RAN.load(Ordering::SeqCst) > 0, "{what}: its body ran");
            return;
        }
        _ => {}
    }
    // Commands register at the first boundary, and the plan built in the
    // next iteration runs in the one after: three iterations reach it.
    let mut outcome = Ok(());
    for _ in 0..3 {
        outcome = world.run_iteration();
        if outcome.is_err() {
            break;
        }
    }
    let (code, lane) = match row.expect {
        Expect::Refused(lane) | Expect::RefusedIn(_, lane) => ("SL0009", lane),
        Expect::RuntimeOnly(service) => ("SL0010", service),
        Expect::Runs | Expect::OneShotRefused(..) | Expect::OneShotRuns => ("", ""),
    };
    match row.expect {
        Expect::Refused(_) | Expect::RefusedIn(..) | Expect::RuntimeOnly(_) => {
            let node = match row.expect {
                Expect::RefusedIn(node, _) => node,
                _ => "row",
            };
            let error = outcome.expect_err(&format!("{what}: refused"));
            let IterationError::Plan(errors) = &error else {
                panic!("{what}: a plan error, got {error}");
            };
            let diagnostic = errors
                .errors()
                .find(|d| d.code == code)
                .unwrap_or_else(|| panic!("{what}: no {code} in {errors}"));
            assert_eq!(diagnostic.nodes, [node], "{what}: names the node");
            assert!(
                diagnostic.message.contains(lane),
                "{what}: names the lane `{lane}`: {}",
                diagnostic.message
            );
            assert_eq!(RAN.load(Ordering::SeqCst), 0, "{what}: nothing of it ran");
        }
        Expect::Runs => {
            outcome.unwrap_or_else(|e| panic!("{what}: runs, got {e}"));
            assert!(RAN.load(Ordering::SeqCst) > 0, "{what}: its body ran");
        }
        Expect::OneShotRefused(..) | Expect::OneShotRuns => unreachable!("returned above"),
    }
}

#[test]
fn every_entry_point_refuses_every_aliasing_shape() {
    let _table = TABLE.lock().unwrap_or_else(|e| e.into_inner());
    let rows = table();
    // Under Miri every tenth row (each makes a world and its pool: about
    // 2.5 s of Miri's reported time apiece).
    let step = if cfg!(miri) { 10 } else { 1 };
    for row in rows.iter().step_by(step) {
        run_row(row);
    }
    // Every public entry point the registration sites below serve is tried.
    for (_, _, entries) in REGISTRATION_SITES {
        for entry in *entries {
            assert!(
                rows.iter().any(|row| row.entry.starts_with(entry)),
                "the table tries no shape on `{entry}`"
            );
        }
    }
}

#[test]
fn a_graph_without_bodies_merges_builder_calls() {
    // `Graph::add_node` takes builder calls only, which hand out nothing.
    let mut graph = Graph::new();
    graph.add_node(NodeBuilder::new("row").gates::<R>().reads::<R>());
    let plan = graph
        .build(&sluice::PlanOptions::default())
        .expect("builder calls merge");
    assert_eq!(plan.len(), 1);
}

/// Every place in the runtime's sources that puts a node into a world's
/// graph (`(file, enclosing function, the public entry points it serves)`).
/// A registration path not listed here fails the test below: add it, and
/// rows for it in the table above.
const REGISTRATION_SITES: &[(&str, &str, &[&str])] = &[
    (
        "world/mod.rs",
        "add_point",
        &[
            "World::run_group_if",
            "World::run_stage_if",
            "World::run_set_if",
            "NodeSpec::commit",
            "IntoSystem::commit",
            "World::add_system",
            "World::add_factory",
            "Commands::add_system",
            "#[system] function",
            "NodeSpec::run_if",
            "NodeSpec::on_create",
            "NodeBuilder::run",
            "NodeBuilder::world",
            "NodeBuilder::batch_processor",
            "NodeBuilder::par_query",
            "script gather",
        ],
    ),
    (
        "world/mod.rs",
        "add_batch_processor",
        &["World::add_batch_processor"],
    ),
    ("world/mod.rs", "add_par_query", &["World::add_par_query"]),
    (
        "world/one_shot.rs",
        "register_system",
        &["World::register_system", "World::run_system_once"],
    ),
    // The world's own scheduling factories: no user body.
    ("world/mod.rs", "add_builtin", &[]),
    ("world/commands.rs", "add_system", &["Commands::add_system"]),
    ("world/commands.rs", "add_factory", &[]),
];

#[cfg(not(miri))]
/// The non-test part of a source file.
fn without_tests(source: &str) -> &str {
    match source.find("#[cfg(test)]\nmod tests") {
        Some(at) => &source[..at],
        None => source,
    }
}

#[cfg(not(miri))]
/// The name of the function whose body holds byte `at`.
fn enclosing_fn(source: &str, at: usize) -> String {
    let before = &source[..at];
    let start = before.rfind("fn ").expect("inside a function") + 3;
    before[start..]
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect()
}

#[cfg(not(miri))]
fn rust_files(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("the runtime's sources") {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs")
            // Unit tests in files of their own (`tests.rs`, `builder_tests.rs`).
            && !path.file_stem().is_some_and(|stem| stem.to_string_lossy().ends_with("tests"))
        {
            out.push(path);
        }
    }
}

// A scan of the sources, not of memory: it runs in `cargo test`; Miri's
// isolation forbids reading files, so it is left out there.
#[cfg(not(miri))]
#[test]
fn every_registration_site_is_in_the_table() {
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut found = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).expect("a readable source");
        let code = without_tests(&text);
        let relative = file
            .strip_prefix(&src)
            .expect("under src")
            .to_string_lossy()
            .replace('\\', "/");
        for needle in [".add_node(", ".add_spec("] {
            for (at, _) in code.match_indices(needle) {
                let line_start = code[..at].rfind('\n').map_or(0, |i| i + 1);
                let line = code[line_start..at].trim_start();
                if line.starts_with("//") {
                    continue; // documentation examples
                }
                found.push((relative.clone(), enclosing_fn(code, at)));
            }
        }
    }
    found.sort();
    found.dedup();
    let mut listed: Vec<(String, String)> = REGISTRATION_SITES
        .iter()
        .map(|(file, function, _)| ((*file).to_owned(), (*function).to_owned()))
        .collect();
    // `add_spec` is itself a site (it calls `add_node`) and is called by
    // the typed entry points, which need no row of their own here.
    listed.extend(["add_system", "add_factory"].map(|f| ("world/mod.rs".to_owned(), f.to_owned())));
    listed.sort();
    for site in &found {
        assert!(
            listed.contains(site),
            "`{}` in {} puts nodes into the plan but is not in the gate's table \
             (REGISTRATION_SITES): list it and try every aliasing shape on it",
            site.1,
            site.0
        );
    }
}

// ---- issue 36: the query vocabulary ----

/// `Has`, `AnyOf`, `Or`, `Single` and `Populated` on every query entry
/// point and beside other queries: `Has` declares nothing (an archetype
/// check), `AnyOf` and `Or` declare what their elements do, `Single` and
/// `Populated` what the query they stand for does.
fn vocabulary_rows(rows: &mut Vec<Row>) {
    query_rows!(
        rows,
        "Query<(Has<A>, &mut A)> (Has reads no data)",
        ((Has<A>, &mut A)),
        (),
        Expect::Runs
    );
    query_rows!(
        rows,
        "Query<(AnyOf<(&mut A, Entity)>, &A)>",
        ((AnyOf<(&mut A, Entity)>, &A)),
        (),
        Expect::Refused("A")
    );
    query_rows!(
        rows,
        "Query<(AnyOf<(&A, Has<R>)>, Option<&A>)> (shared only)",
        ((AnyOf<(&A, Has<R>)>, Option<&A>)),
        (),
        Expect::Runs
    );
    query_rows!(
        rows,
        "Query<(&mut A, &A), Allow<Disabled>> (Allow reads nothing, the pair still aliases)",
        ((&mut A, &A)),
        Allow<Disabled>,
        Expect::Refused("A")
    );
    query_rows!(
        rows,
        "Query<(&mut A, Has<Disabled>), Allow<Disabled>>",
        ((&mut A, Has<Disabled>)),
        Allow<Disabled>,
        Expect::Runs
    );
    query_rows!(
        rows,
        "Query<&mut A, Or<(Changed<A>, Added<A>)>> (the filter beside its own data)",
        (&mut A),
        Or<(Changed<A>, Added<A>)>,
        Expect::Runs
    );
    let pairs: [Pair; 7] = [
        (
            "Query<&mut A> beside Query<Entity, Or<(Without<R>, Changed<A>)>>",
            |w| {
                w.add_system(
                    NodeBuilder::new("row")
                        .system(two_queries::<&mut A, Entity, Or<(Without<R>, Changed<A>)>>),
                );
            },
            Expect::Refused("A"),
        ),
        (
            "Query<Has<A>> beside Query<&mut A>",
            |w| {
                w.add_system(NodeBuilder::new("row").system(two_queries::<Has<A>, &mut A, ()>));
            },
            Expect::Runs,
        ),
        (
            "Single<&mut A> beside Query<&A>",
            |w| {
                w.add_system(NodeBuilder::new("row").system(
                    |a: Single<'_, &mut A>, b: Query<'_, &A>| {
                        let _ = (a, b);
                        ran();
                    },
                ));
            },
            Expect::Refused("A"),
        ),
        (
            "Populated<&mut A> beside Single<(Entity, &A)>",
            |w| {
                w.add_system(NodeBuilder::new("row").system(
                    |a: Populated<'_, &mut A>, b: Single<'_, (Entity, &A)>| {
                        let _ = (a, b);
                        ran();
                    },
                ));
            },
            Expect::Refused("A"),
        ),
        (
            "Single<(&mut A, Has<A>), Without<ComponentRef<A>>> (one match)",
            |w| {
                w.add_system(NodeBuilder::new("row").system(
                    |a: Single<'_, (&mut A, Has<A>), Without<ComponentRef<A>>>| {
                        let (mut a, has) = a.into_inner();
                        assert!(has);
                        a.0 += 1;
                        ran();
                    },
                ));
            },
            Expect::Runs,
        ),
        (
            "Populated<AnyOf<(&mut A, &R)>> beside Populated<Has<A>>",
            |w| {
                w.add_system(NodeBuilder::new("row").system(
                    |mut a: Populated<'_, AnyOf<(&mut A, &R)>>, b: Populated<'_, Has<A>>| {
                        a.for_each(|(a, _)| a.expect("every entity has A").0 += 1);
                        let _ = b;
                        ran();
                    },
                ));
            },
            Expect::Runs,
        ),
        (
            "Single<&A> in a run condition beside a body gating A",
            |w| {
                w.add_system(
                    NodeBuilder::new("row")
                        .system(|mut a: Query<'_, &mut A>| {
                            a.for_each(|mut a| a.0 += 1);
                            ran();
                        })
                        .run_if(|a: Single<'_, &A, Without<ComponentRef<A>>>| a.0 == 0),
                );
            },
            Expect::Runs,
        ),
    ];
    for (shape, register, expect) in pairs {
        rows.push(Row {
            entry: "World::add_system(NodeBuilder::system(closure))",
            shape,
            register,
            expect,
        });
    }
}

/// Issue 36: a sparse-set component's lane is its component's, as a table
/// component's is: the same shapes alias, the same sound ones run.
fn sparse_rows(rows: &mut Vec<Row>) {
    query_rows!(
        rows,
        "Query<(&mut SparseMark, &SparseMark)> (sparse set)",
        ((&mut SparseMark, &SparseMark)),
        (),
        Expect::Refused("SparseMark")
    );
    query_rows!(
        rows,
        "Query<(&mut SparseMark, Option<&SparseMark>)> (sparse set)",
        ((&mut SparseMark, Option<&SparseMark>)),
        (),
        Expect::Refused("SparseMark")
    );
    query_rows!(
        rows,
        "Query<(&mut A, &mut SparseMark), Changed<SparseMark>> (sparse set)",
        ((&mut A, &mut SparseMark)),
        Changed<SparseMark>,
        Expect::Runs
    );
    query_rows!(
        rows,
        "Query<(Has<SparseMark>, &mut SparseMark), With<SparseMark>> (sparse set)",
        ((Has<SparseMark>, &mut SparseMark)),
        With<SparseMark>,
        Expect::Runs
    );
}

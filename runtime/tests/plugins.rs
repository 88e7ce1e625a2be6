//! Plugins: requirements built first, errors by name, groups, a panicking
//! build undone, on every executor.

use std::borrow::Cow;

use sluice::plugin::{Plugin, PluginError, PluginGroup, PluginGroupBuilder, Requires};
use sluice::prelude::*;
use sluice::{ThreadPool, World};

/// The order plugins were built in.
#[derive(Default)]
struct Built(Vec<&'static str>);

fn note(world: &mut World, name: &'static str) {
    world.init_service::<Built>();
    world.get_mut::<Built>().unwrap().0.push(name);
}

struct Core;
impl Plugin for Core {
    fn build(&self, world: &mut World) {
        note(world, "core");
        world.insert(0u64);
        world.add_system(NodeBuilder::new("core::tick").system(|n: &mut u64| *n += 1));
    }
}

struct Physics;
impl Plugin for Physics {
    fn requires(&self) -> Requires {
        Requires::new().plugin::<Core>()
    }
    fn build(&self, world: &mut World) {
        assert!(world.get::<u64>().is_some(), "Core was built first");
        note(world, "physics");
        world.insert(1.5f32);
    }
}

struct Combat;
impl Plugin for Combat {
    fn requires(&self) -> Requires {
        Requires::new().plugin::<Physics>().plugin::<Core>()
    }
    fn build(&self, world: &mut World) {
        note(world, "combat");
        world.add_system(
            NodeBuilder::new("combat::hit")
                .after("core::tick")
                .system(|n: &mut u64, g: &f32| *n += *g as u64 * 10),
        );
    }
}

fn built(world: &World) -> Vec<&'static str> {
    world
        .get::<Built>()
        .map(|b| b.0.clone())
        .unwrap_or_default()
}

#[test]
fn requirements_are_built_first_whatever_the_order_added() {
    for order in 0..3 {
        let mut world = World::new();
        match order {
            0 => world.add_plugins((Combat, Physics, Core)).unwrap(),
            1 => world.add_plugins((Physics, Combat, Core)).unwrap(),
            _ => {
                world.add_plugin(Combat).unwrap();
                assert!(built(&world).is_empty(), "Combat waits");
                world.add_plugin(Core).unwrap();
                assert_eq!(built(&world), ["core"]);
                world.add_plugin(Physics).unwrap();
            }
        }
        assert_eq!(
            built(&world),
            ["core", "physics", "combat"],
            "order {order}"
        );
        assert!(world.plugins().all(|(_, built)| built));
    }
}

#[test]
fn plugins_run_the_same_on_every_executor() {
    let mut results = Vec::new();
    let counts: &[usize] = if cfg!(miri) { &[0, 2] } else { &[0, 2, 4] };
    for &threads in counts {
        let mut world = if threads == 0 {
            let mut world = World::new();
            world.set_executor(ExecutorKind::Serial);
            world
        } else {
            let mut world = World::with_pool(ThreadPool::new(threads).unwrap());
            world.set_executor(ExecutorKind::Parallel);
            world
        };
        world.add_plugins((Combat, Core, Physics)).unwrap();
        for _ in 0..3 {
            world.run_iteration().unwrap();
        }
        results.push(*world.get::<u64>().unwrap());
    }
    assert!(results.iter().all(|&result| result == 33), "{results:?}");
}

#[test]
fn the_same_plugin_twice_is_a_named_error_and_changes_nothing() {
    let mut world = World::new();
    world.add_plugin(Core).unwrap();
    let error = world.add_plugin(Core).unwrap_err();
    assert_eq!(
        error,
        PluginError::Duplicate {
            plugin: std::any::type_name::<Core>().to_owned()
        }
    );
    assert!(error.to_string().contains("Core"));
    assert_eq!(built(&world), ["core"]);
    // A tuple holding a duplicate adds none of its members.
    let error = world.add_plugins((Physics, Core)).unwrap_err();
    assert!(matches!(error, PluginError::Duplicate { .. }));
    assert!(!world.has_plugin::<Physics>());
    let error = world.add_plugins((Physics, Physics)).unwrap_err();
    assert!(matches!(error, PluginError::Duplicate { .. }));
    world.run_iteration().unwrap();
    assert_eq!(*world.get::<u64>().unwrap(), 1, "one core::tick");
}

#[test]
fn a_missing_requirement_is_an_error_naming_both_and_nothing_runs_until_added() {
    let mut world = World::new();
    world.add_plugin(Physics).unwrap();
    let error = world.finish_plugins().unwrap_err();
    let PluginError::MissingRequirement { plugin, requires } = &error else {
        panic!("{error}");
    };
    assert!(
        plugin.ends_with("Physics") && requires.ends_with("Core"),
        "{error}"
    );
    let error = world.run_iteration().unwrap_err();
    assert!(matches!(error, IterationError::Plugin(_)), "{error}");
    assert!(error.to_string().contains("Core"));
    world.add_plugin(Core).unwrap();
    world.run_iteration().unwrap();
    assert_eq!(built(&world), ["core", "physics"]);
}

struct Chicken;
struct Egg;
impl Plugin for Chicken {
    fn requires(&self) -> Requires {
        Requires::new().plugin::<Egg>()
    }
    fn build(&self, _: &mut World) {}
}
impl Plugin for Egg {
    fn requires(&self) -> Requires {
        Requires::new().plugin::<Chicken>()
    }
    fn build(&self, _: &mut World) {}
}

#[test]
fn a_cycle_of_requirements_is_an_error_listing_it() {
    let mut world = World::new();
    world.add_plugins((Chicken, Egg)).unwrap();
    let error = world.finish_plugins().unwrap_err();
    let PluginError::Cycle { plugins } = &error else {
        panic!("{error}");
    };
    assert_eq!(plugins.len(), 3, "{error}");
    assert!(plugins[0].ends_with("Chicken") && plugins[1].ends_with("Egg"));
    assert_eq!(plugins[0], plugins[2]);
    assert!(error.to_string().contains(" -> "));
}

struct Exploding;
impl Plugin for Exploding {
    fn build(&self, world: &mut World) {
        world.insert("half built");
        world.add_system(NodeBuilder::new("half").system(|n: &mut u64| *n += 100));
        panic!("the build failed");
    }
}

struct NeedsExploding;
impl Plugin for NeedsExploding {
    fn requires(&self) -> Requires {
        Requires::new().plugin::<Exploding>()
    }
    fn build(&self, world: &mut World) {
        note(world, "needs exploding");
    }
}

#[test]
fn a_plugin_that_panics_is_reported_by_name_and_its_registrations_undone() {
    let mut world = World::new();
    world.add_plugin(Core).unwrap();
    let error = world.add_plugins((Exploding, NeedsExploding)).unwrap_err();
    let PluginError::BuildPanicked { plugin, message } = &error else {
        panic!("{error}");
    };
    assert!(plugin.ends_with("Exploding"));
    assert_eq!(message, "the build failed");
    assert!(world.get::<&str>().is_none(), "its service was taken out");
    // Its system was removed: only core::tick counts.
    let error = world.run_iteration().unwrap_err();
    assert!(
        matches!(&error, IterationError::Plugin(PluginError::MissingRequirement { plugin, .. }) if plugin.ends_with("NeedsExploding")),
        "{error}"
    );
    assert_eq!(built(&world), ["core"]);
}

struct Named(&'static str);
impl Plugin for Named {
    fn name(&self) -> Cow<'static, str> {
        Cow::Borrowed(self.0)
    }
    fn build(&self, world: &mut World) {
        note(world, self.0);
    }
}

struct Defaults;
impl PluginGroup for Defaults {
    fn build(self) -> PluginGroupBuilder {
        PluginGroupBuilder::start::<Self>()
            .add(Core)
            .add(Physics)
            .add(Named("audio"))
    }
}

#[test]
fn groups_can_leave_a_member_out_or_replace_it() {
    let mut world = World::new();
    world
        .add_plugins(Defaults.build().disable::<Named>())
        .unwrap();
    assert_eq!(built(&world), ["core", "physics"]);

    let mut world = World::new();
    world
        .add_plugins(Defaults.build().set(Named("quiet audio")))
        .unwrap();
    assert_eq!(built(&world), ["core", "physics", "quiet audio"]);

    // Same type, two names: two plugins.
    let mut world = World::new();
    world.add_plugins((Named("a"), Named("b"))).unwrap();
    assert_eq!(built(&world), ["a", "b"]);
    assert!(world.has_plugin_named("b"));

    // Leaving out what the group does not hold is an error naming it.
    let mut world = World::new();
    let error = world
        .add_plugins(Defaults.build().disable::<Combat>())
        .unwrap_err();
    assert!(matches!(error, PluginError::NotInGroup { .. }));
    assert!(error.to_string().contains("Combat"));
    assert!(built(&world).is_empty());

    // A group whole, and a member left out that another needs.
    let mut world = World::new();
    world.add_plugins(Defaults).unwrap();
    assert_eq!(built(&world), ["core", "physics", "audio"]);
    let mut world = World::new();
    world
        .add_plugins(Defaults.build().disable::<Core>())
        .unwrap();
    assert!(world.finish_plugins().is_err());
}

struct AddsAnother;
impl Plugin for AddsAnother {
    fn build(&self, world: &mut World) {
        note(world, "adds another");
        // A plugin added from a build is built after it returns.
        world.add_plugin(Core).unwrap();
        assert!(world.get::<u64>().is_none());
    }
}

#[test]
fn a_plugin_may_add_plugins_which_are_built_after_it() {
    let mut world = World::new();
    world.add_plugin(AddsAnother).unwrap();
    assert_eq!(built(&world), ["adds another", "core"]);
}

/// Reference 004's custom bootstrap as a plugin: one plugin type added to
/// a client world and a server world sharing a pool, each building the
/// plugins of its role (the shared simulation required by both).
mod bootstrap {
    use super::*;

    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    enum Role {
        Server,
        Client,
    }

    #[derive(Default)]
    struct Ticks(u64);
    struct Authority;

    struct Simulation;
    impl Plugin for Simulation {
        fn build(&self, world: &mut World) {
            world.init_service::<Ticks>();
            world.add_system(NodeBuilder::new("simulate").system(|t: &mut Ticks| t.0 += 1));
        }
    }

    struct ServerRole;
    impl Plugin for ServerRole {
        fn requires(&self) -> Requires {
            Requires::new().plugin::<Simulation>()
        }
        fn build(&self, world: &mut World) {
            world.insert(Authority);
        }
    }

    struct Bootstrap(Role);
    impl Plugin for Bootstrap {
        fn build(&self, world: &mut World) {
            match self.0 {
                // The role's plugin first: its requirement is built first.
                Role::Server => world.add_plugins((ServerRole, Simulation)),
                Role::Client => world.add_plugin(Simulation),
            }
            .expect("bootstrapped once");
        }
    }

    #[test]
    fn one_bootstrap_plugin_per_world_builds_each_worlds_role() {
        let pool = ThreadPool::new(2).unwrap();
        let mut server = World::with_pool(pool.clone());
        let mut client = World::with_pool(pool);
        server.add_plugin(Bootstrap(Role::Server)).unwrap();
        client.add_plugin(Bootstrap(Role::Client)).unwrap();
        let names = |world: &World| -> Vec<String> {
            world
                .plugins()
                .map(|(name, _)| name.rsplit("::").next().unwrap().to_owned())
                .collect()
        };
        assert_eq!(names(&server), ["Bootstrap", "ServerRole", "Simulation"]);
        assert_eq!(names(&client), ["Bootstrap", "Simulation"]);
        assert!(server.get::<Authority>().is_some());
        assert!(client.get::<Authority>().is_none());
        // Each at its own rate, on the one pool.
        for _ in 0..3 {
            server.run_iteration().unwrap();
            for _ in 0..2 {
                client.run_iteration().unwrap();
            }
        }
        assert_eq!(server.get::<Ticks>().unwrap().0, 3);
        assert_eq!(client.get::<Ticks>().unwrap().0, 6);
        assert!(matches!(
            client.add_plugin(Bootstrap(Role::Client)),
            Err(PluginError::Duplicate { .. })
        ));
    }
}

struct Selfish;
impl Plugin for Selfish {
    fn requires(&self) -> Requires {
        Requires::new().plugin::<Selfish>()
    }
    fn build(&self, world: &mut World) {
        note(world, "selfish");
    }
}

#[test]
fn a_plugin_requiring_itself_is_a_cycle_of_one_named_and_never_built() {
    let mut world = World::new();
    world.add_plugin(Selfish).unwrap();
    let error = world.finish_plugins().unwrap_err();
    let PluginError::Cycle { plugins } = &error else {
        panic!("{error}");
    };
    assert_eq!(plugins.len(), 2, "{plugins:?}");
    assert!(plugins.iter().all(|name| name.ends_with("Selfish")));
    let error = world.run_iteration().unwrap_err();
    assert!(error.to_string().contains("Selfish -> "), "{error}");
    assert!(world.get::<Built>().is_none(), "never built");
}

struct Twice;
impl PluginGroup for Twice {
    fn build(self) -> PluginGroupBuilder {
        PluginGroupBuilder::start::<Self>().add(Core).add(Core)
    }
}

#[test]
fn a_group_holding_a_plugin_twice_or_added_twice_is_a_named_error_and_adds_nothing() {
    let mut world = World::new();
    let error = world.add_plugins(Twice).unwrap_err();
    assert!(
        matches!(&error, PluginError::Duplicate { plugin } if plugin.ends_with("Core")),
        "{error}"
    );
    assert!(!world.has_plugin::<Core>());
    assert!(world.get::<Built>().is_none());
    // The group once, then again: the second is refused whole.
    let mut world = World::new();
    world.add_plugins(Defaults).unwrap();
    let error = world.add_plugins(Defaults).unwrap_err();
    assert!(matches!(error, PluginError::Duplicate { .. }), "{error}");
    assert_eq!(built(&world), ["core", "physics", "audio"]);
    world.run_iteration().unwrap();
    assert_eq!(*world.get::<u64>().unwrap(), 1, "one core::tick");
}

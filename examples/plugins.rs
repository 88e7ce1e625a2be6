//! Plugins (the guide's chapter "Plugins and states",
//! `docs/guide/14-plugins-and-states.md`), runnable:
//! `cargo run --example plugins`.
//!
//! Reference 004's custom bootstrap, as a plugin: a client world and a
//! server world in one process, on one pool, each updated at its own rate.
//! The same simulation plugin is built into both; a role plugin on top of
//! it makes one the authority and the other a follower, and the bootstrap
//! plugin added to each world picks the role's plugins. The server sends
//! snapshots to the client through the client world's message sender.

use std::time::Duration;

use sluice::plugin::{Plugin, Requires};
use sluice::prelude::*;
use sluice::{MessageSender, ThreadPool};

/// Which side of the connection a world plays.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    Server,
    Client,
}

/// The simulation both worlds run: a ball moving one unit per tick.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
struct Ball {
    tick: u64,
    x: f32,
}

/// What the server tells the client.
#[derive(Debug, Clone, Copy)]
struct Snapshot(Ball);

/// The client's end of the link, held by the server world.
struct ToClient(MessageSender<Snapshot>);

/// How many corrections the client took from the server.
#[derive(Debug, Default)]
struct Corrections(u64);

/// The part both worlds share.
struct SimulationPlugin;

impl Plugin for SimulationPlugin {
    fn build(&self, world: &mut World) {
        world.init_service::<Ball>();
        world.add_system(NodeBuilder::new("simulate").system(|ball: &mut Ball| {
            ball.tick += 1;
            ball.x += 1.0;
        }));
    }
}

/// The authority: sends a snapshot every tick.
struct ServerPlugin {
    to_client: MessageSender<Snapshot>,
}

impl Plugin for ServerPlugin {
    fn requires(&self) -> Requires {
        Requires::new().plugin::<SimulationPlugin>()
    }

    fn build(&self, world: &mut World) {
        world.insert(ToClient(self.to_client.clone()));
        world.add_system(NodeBuilder::new("broadcast").after("simulate").system(
            |ball: &Ball, link: &ToClient| {
                // A full queue drops the snapshot: the next one follows.
                let _ = link.0.send(Snapshot(*ball));
            },
        ));
    }
}

/// The follower: predicts locally, takes the newest snapshot as truth.
struct ClientPlugin;

impl Plugin for ClientPlugin {
    fn requires(&self) -> Requires {
        Requires::new().plugin::<SimulationPlugin>()
    }

    fn build(&self, world: &mut World) {
        world.init_service::<Corrections>();
        world.add_system(NodeBuilder::new("reconcile").after("simulate").system(
            |mut snapshots: Subscribe<Snapshot>, ball: &mut Ball, fixes: &mut Corrections| {
                if let Some(Snapshot(truth)) = snapshots.unread().last() {
                    if truth.x != ball.x {
                        fixes.0 += 1;
                    }
                    *ball = *truth;
                }
            },
        ));
    }
}

/// Reference 004's `ICustomBootstrap`: added to each world, it builds the
/// plugins of that world's role. Its requirements are added by itself,
/// in an order the requirements then correct (the role's plugin first).
struct NetcodeBootstrap {
    role: Role,
    /// The server's link to the client (server only).
    to_client: Option<MessageSender<Snapshot>>,
}

impl Plugin for NetcodeBootstrap {
    fn build(&self, world: &mut World) {
        let added = match (self.role, &self.to_client) {
            (Role::Server, Some(link)) => world.add_plugins((
                ServerPlugin {
                    to_client: link.clone(),
                },
                SimulationPlugin,
            )),
            (Role::Client, _) => world.add_plugins((ClientPlugin, SimulationPlugin)),
            (Role::Server, None) => panic!("a server needs its link to the client"),
        };
        added.expect("a world is bootstrapped once");
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // One pool for both worlds, as reference 004's worlds share the
    // player loop.
    let pool = ThreadPool::new(2)?;
    let mut client = World::with_pool(pool.clone());
    let mut server = World::with_pool(pool);
    let to_client = client.sender::<Snapshot>();

    client.add_plugin(NetcodeBootstrap {
        role: Role::Client,
        to_client: None,
    })?;
    server.add_plugin(NetcodeBootstrap {
        role: Role::Server,
        to_client: Some(to_client),
    })?;
    for world in [&client, &server] {
        let built: Vec<&str> = world
            .plugins()
            .map(|(name, _)| name.rsplit("::").next().unwrap_or(name))
            .collect();
        println!("built: {}", built.join(", "));
    }

    // Bootstrapping twice is refused by name, and changes nothing.
    let again = client.add_plugin(NetcodeBootstrap {
        role: Role::Client,
        to_client: None,
    });
    println!("again: {}", again.unwrap_err());

    // The client runs two frames per server tick; it drifts ahead and is
    // pulled back by each snapshot.
    for _ in 0..10 {
        server.update(Duration::from_millis(33))?;
        client.update(Duration::from_millis(16))?;
        client.update(Duration::from_millis(17))?;
    }
    let server_ball = *server.get::<Ball>().unwrap();
    let client_ball = *client.get::<Ball>().unwrap();
    let corrections = client.get::<Corrections>().unwrap().0;
    println!("server {server_ball:?}, client {client_ball:?}, {corrections} corrections");
    assert_eq!(server_ball.tick, 10);
    // The client's last frame took the server's tick 10 snapshot.
    assert_eq!(client_ball.tick, 10);
    assert!(corrections > 0);
    Ok(())
}

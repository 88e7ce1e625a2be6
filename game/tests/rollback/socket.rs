//! The lossy socket over the in-process pair: loss, delay and reordering
//! from a seed, and refused conditions.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use ggrs::{Message, NonBlockingSocket};
use sluice_game::rollback::{ChannelSocket, LossySocket, NetConditions, NetConditionsError};

fn keep_alive() -> Message {
    serde_json::from_str(r#"{"header":{"magic":7},"body":"KeepAlive"}"#)
        .expect("ggrs's message format")
}

/// Sends `count` packets from one end through `conditions` and collects
/// what the other end received until `wait` passed.
fn deliver(
    conditions: NetConditions,
    count: usize,
    wait: Duration,
) -> (usize, sluice_game::rollback::NetStats) {
    let (sender, mut receiver) = ChannelSocket::pair();
    let to = sender.peer();
    let mut lossy = LossySocket::new(sender, conditions).expect("valid conditions");
    for _ in 0..count {
        lossy.send_to(&keep_alive(), &to);
    }
    let begin = Instant::now();
    let mut received = Vec::new();
    while begin.elapsed() < wait {
        lossy.receive_all_messages();
        received.extend(receiver.receive_all_messages());
        std::thread::sleep(Duration::from_millis(1));
    }
    assert!(
        received
            .iter()
            .all(|(from, message)| *from == lossy_address() && *message == keep_alive())
    );
    (received.len(), lossy.stats())
}

fn lossy_address() -> SocketAddr {
    ChannelSocket::pair().0.address()
}

#[test]
fn a_perfect_network_delivers_everything_at_once() {
    let (received, stats) = deliver(NetConditions::PERFECT, 50, Duration::from_millis(5));
    assert_eq!(received, 50);
    assert_eq!((stats.sent, stats.lost, stats.delivered), (50, 0, 50));
}

#[test]
fn loss_follows_the_seed() {
    let lossy = NetConditions {
        loss: 0.3,
        ..NetConditions::PERFECT
    };
    let (received, stats) = deliver(lossy, 1000, Duration::from_millis(5));
    assert_eq!(received as u64, 1000 - stats.lost);
    assert!(
        (200..400).contains(&stats.lost),
        "{} lost of 1000",
        stats.lost
    );
    let (again, _) = deliver(lossy, 1000, Duration::from_millis(5));
    assert_eq!(received, again, "the same seed lost other packets");
    let (other, _) = deliver(
        NetConditions { seed: 1, ..lossy },
        1000,
        Duration::from_millis(5),
    );
    assert_ne!(received, other, "another seed lost the same number");
}

#[test]
fn latency_holds_packets_back() {
    let slow = NetConditions {
        latency: Duration::from_millis(40),
        jitter: Duration::from_millis(10),
        reorder: 0.5,
        ..NetConditions::PERFECT
    };
    let (sender, mut receiver) = ChannelSocket::pair();
    let to = sender.peer();
    let mut lossy = LossySocket::new(sender, slow).expect("valid conditions");
    for _ in 0..20 {
        lossy.send_to(&keep_alive(), &to);
    }
    lossy.receive_all_messages();
    assert!(
        receiver.receive_all_messages().is_empty(),
        "delivered before the latency"
    );
    assert_eq!(lossy.in_flight(), 20);
    std::thread::sleep(Duration::from_millis(150));
    lossy.receive_all_messages();
    assert_eq!(receiver.receive_all_messages().len(), 20);
    assert!(lossy.stats().held_back > 0, "nothing was held back at 50%");
}

#[test]
fn a_send_to_a_stranger_is_lost() {
    let (mut first, mut second) = ChannelSocket::pair();
    let stranger: SocketAddr = "10.0.0.1:9".parse().expect("an address");
    first.send_to(&keep_alive(), &stranger);
    assert!(second.receive_all_messages().is_empty());
    drop(second);
    // The other end is gone: the packet is lost, nothing panics.
    let peer = first.peer();
    first.send_to(&keep_alive(), &peer);
}

#[test]
fn bad_conditions_are_refused_naming_the_field() {
    let (socket, _) = ChannelSocket::pair();
    for (conditions, field) in [
        (
            NetConditions {
                loss: 1.5,
                ..NetConditions::PERFECT
            },
            "loss",
        ),
        (
            NetConditions {
                loss: f64::NAN,
                ..NetConditions::PERFECT
            },
            "loss",
        ),
        (
            NetConditions {
                reorder: -0.1,
                ..NetConditions::PERFECT
            },
            "reorder",
        ),
        (
            NetConditions {
                latency: Duration::from_secs(3600),
                ..NetConditions::PERFECT
            },
            "latency",
        ),
    ] {
        let error = conditions.check().expect_err("out of range");
        assert!(error.to_string().contains(field), "{error}");
        assert!(matches!(
            error,
            NetConditionsError::Chance { .. } | NetConditionsError::Delay { .. }
        ));
    }
    let (other, _) = ChannelSocket::pair();
    assert!(
        LossySocket::new(
            other,
            NetConditions {
                loss: 2.0,
                ..NetConditions::PERFECT
            }
        )
        .is_err()
    );
    drop(socket);
}

//! The inspector's WebSocket: snapshots pushed, commands answered,
//! malformed messages answered with an error on a connection that stays
//! up, and a client that never reads stalls nothing.

mod common;

use std::time::Duration;

use common::Running;
use futures_util::{SinkExt, StreamExt};
use sluice_inspect::InspectorOptions;
use tokio_tungstenite::tungstenite::Message;

type Socket =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

async fn connect(running: &Running) -> Socket {
    let (socket, _) = tokio_tungstenite::connect_async(format!("ws://{}/ws", running.address))
        .await
        .expect("the WebSocket opens");
    socket
}

/// The next message of `kind` (skipping snapshots unless asked for).
async fn next_of(socket: &mut Socket, kind: &str) -> serde_json::Value {
    let wait = async {
        loop {
            match socket.next().await {
                Some(Ok(Message::Text(text))) => {
                    let value: serde_json::Value = serde_json::from_str(text.as_str()).unwrap();
                    if value["type"] == kind {
                        return value;
                    }
                }
                Some(Ok(_)) => {}
                other => panic!("the socket ended: {other:?}"),
            }
        }
    };
    tokio::time::timeout(Duration::from_secs(20), wait)
        .await
        .unwrap_or_else(|_| panic!("no `{kind}` message within 20 s"))
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

#[test]
fn snapshots_are_pushed_and_commands_answered() {
    let running = Running::start(InspectorOptions {
        publish_every: Duration::from_millis(10),
        ..InspectorOptions::default()
    });
    runtime().block_on(async {
        let mut socket = connect(&running).await;
        let first = next_of(&mut socket, "snapshot").await;
        let second = next_of(&mut socket, "snapshot").await;
        assert!(
            second["snapshot"]["version"].as_u64() > first["snapshot"]["version"].as_u64(),
            "live"
        );
        socket
            .send(Message::text(r#"{"cmd":"entities","limit":2}"#))
            .await
            .unwrap();
        let list = next_of(&mut socket, "entities").await;
        let id = list["list"]["entities"][1]["id"].as_u64().unwrap();
        socket
            .send(Message::text(format!(r#"{{"cmd":"entity","id":{id}}}"#)))
            .await
            .unwrap();
        let entity = next_of(&mut socket, "entity").await;
        assert_eq!(entity["entity"]["id"], id);
        socket
            .send(Message::text(r#"{"cmd":"pause"}"#))
            .await
            .unwrap();
        assert_eq!(next_of(&mut socket, "control").await["paused"], true);
        socket
            .send(Message::text(r#"{"cmd":"resume"}"#))
            .await
            .unwrap();
        assert_eq!(next_of(&mut socket, "control").await["paused"], false);
    });
}

/// The request-head timeout ends HTTP connections that stall, not a
/// WebSocket: a client that only listens keeps receiving snapshots long
/// past it.
#[test]
fn a_quiet_websocket_outlives_the_request_head_timeout() {
    let running = Running::start(InspectorOptions {
        publish_every: Duration::from_millis(10),
        request_head_within: Duration::from_millis(200),
        ..InspectorOptions::default()
    });
    runtime().block_on(async {
        let mut socket = connect(&running).await;
        let first = next_of(&mut socket, "snapshot").await;
        tokio::time::sleep(Duration::from_millis(1000)).await;
        let later = next_of(&mut socket, "snapshot").await;
        assert!(
            later["snapshot"]["version"].as_u64() > first["snapshot"]["version"].as_u64(),
            "the socket still receives new snapshots"
        );
        socket
            .send(Message::text(r#"{"cmd":"entities","limit":1}"#))
            .await
            .unwrap();
        next_of(&mut socket, "entities").await;
    });
}

#[test]
fn malformed_messages_get_an_error_and_the_connection_stays_up() {
    let running = Running::start(InspectorOptions::default());
    runtime().block_on(async {
        let mut socket = connect(&running).await;
        for garbage in [
            "not json",
            r#"{"cmd":"explode"}"#,
            r#"{"cmd":"entity"}"#,
            r#"{"cmd":"entity","id":-4}"#,
            r#"{"cmd":"pause","extra":1}"#,
            r#"{"cmd":"entities","limit":100000}"#,
            "[]",
            "",
        ] {
            socket.send(Message::text(garbage)).await.unwrap();
            let error =
                tokio::time::timeout(Duration::from_secs(10), next_of(&mut socket, "error"))
                    .await
                    .unwrap_or_else(|_| panic!("no error for {garbage:?}"));
            assert!(error["error"].is_string(), "{garbage}: {error}");
        }
        socket
            .send(Message::binary(vec![0u8, 159, 146, 150]))
            .await
            .unwrap();
        assert!(
            next_of(&mut socket, "error").await["error"]
                .as_str()
                .unwrap()
                .contains("binary")
        );
        // Still up: a good command is answered.
        socket
            .send(Message::text(r#"{"cmd":"resume"}"#))
            .await
            .unwrap();
        assert_eq!(next_of(&mut socket, "control").await["paused"], false);
    });
}

#[test]
fn a_message_over_the_size_limit_closes_only_its_connection() {
    let running = Running::start(InspectorOptions {
        max_body: 1024,
        ..InspectorOptions::default()
    });
    runtime().block_on(async {
        let mut big = connect(&running).await;
        let _ = big.send(Message::text("x".repeat(64 * 1024))).await;
        let ended = tokio::time::timeout(Duration::from_secs(20), async {
            while let Some(Ok(_)) = big.next().await {}
        })
        .await;
        assert!(ended.is_ok(), "the oversized connection is closed");
        let mut fine = connect(&running).await;
        next_of(&mut fine, "snapshot").await;
    });
    let before = running.frames();
    running.wait_past(before + 3);
}

#[test]
fn clients_that_never_read_never_stall_the_frame() {
    let running = Running::start(InspectorOptions {
        publish_every: Duration::ZERO,
        ..InspectorOptions::default()
    });
    runtime().block_on(async {
        // Sixteen clients connect and never read a byte; every frame
        // publishes.
        let mut silent = Vec::new();
        for _ in 0..16 {
            silent.push(connect(&running).await);
        }
        let before = running.frames();
        let waited = tokio::task::spawn_blocking({
            let frames = std::sync::Arc::clone(&running.frames);
            move || {
                let deadline = std::time::Instant::now() + Duration::from_secs(20);
                while frames.load(std::sync::atomic::Ordering::Acquire) < before + 200 {
                    assert!(std::time::Instant::now() < deadline, "the frame stalled");
                    std::thread::sleep(Duration::from_millis(5));
                }
            }
        });
        waited.await.unwrap();
        drop(silent);
    });
}

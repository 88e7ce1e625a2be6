//! The inspector's HTTP API as a user (and a hostile one) meets it, on a
//! world running frames on its own thread, over loopback.

mod common;

use std::net::TcpStream;
use std::time::Duration;

use common::{Running, http, raw, small_world};
use sluice_inspect::{InspectError, Inspector, InspectorOptions};

#[test]
fn snapshot_plan_and_page_are_served() {
    let running = Running::start(InspectorOptions {
        publish_every: Duration::from_millis(10),
        ..InspectorOptions::default()
    });
    running.wait_past(5);
    std::thread::sleep(Duration::from_millis(50));
    let snapshot = http(running.address, "GET", "/api/snapshot", "").unwrap();
    assert_eq!(snapshot.status, 200);
    assert_eq!(snapshot.content_type, "application/json");
    let snapshot = snapshot.json();
    assert!(snapshot["frame"].as_u64().unwrap() >= 5);
    assert_eq!(snapshot["entities"], 110);
    assert_eq!(snapshot["archetypes_total"], 2);
    assert_eq!(
        snapshot["archetypes"][0]["entities"], 100,
        "the largest first"
    );
    let names: Vec<&str> = snapshot["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|node| node["name"].as_str().unwrap())
        .collect();
    for name in ["heal", "drift", "ping"] {
        assert!(names.contains(&name), "{name} in {names:?}");
    }
    let costs: Vec<f64> = snapshot["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|node| node["ms"].as_f64().unwrap())
        .collect();
    assert!(
        costs.windows(2).all(|w| w[0] >= w[1]),
        "sorted by cost: {costs:?}"
    );
    let history = snapshot["frames"]["history_ms"].as_array().unwrap();
    assert!(!history.is_empty());
    let peak = snapshot["frames"]["peak_ms"].as_f64().unwrap();
    assert!(history.iter().all(|ms| ms.as_f64().unwrap() <= peak));
    let ping = &snapshot["messages"][0];
    assert!(ping["message"].as_str().unwrap().ends_with("Ping"));
    assert!(ping["sent"].as_u64().unwrap() >= 5, "one a frame: {ping}");
    let per_frame = ping["per_frame"].as_f64().unwrap();
    assert!((per_frame - 1.0).abs() < 1e-3, "one a frame: {ping}");

    let plan = http(running.address, "GET", "/api/plan.svg", "").unwrap();
    assert_eq!(plan.status, 200);
    assert_eq!(plan.content_type, "image/svg+xml");
    assert!(plan.body.contains("<svg") && plan.body.contains("heal"));

    let page = http(running.address, "GET", "/", "").unwrap();
    assert_eq!(page.status, 200);
    assert!(page.content_type.starts_with("text/html"));
    assert!(page.body.contains("sluice inspector"));

    let openapi = http(running.address, "GET", "/openapi.json", "")
        .unwrap()
        .json();
    assert_eq!(openapi["openapi"], "3.0.3");
    for path in [
        "/api/snapshot",
        "/api/plan.svg",
        "/api/entities/{id}",
        "/api/step",
    ] {
        assert!(openapi["paths"][path].is_object(), "{path} documented");
    }
}

#[test]
fn entities_are_browsed_with_registered_components_as_text() {
    let running = Running::start(InspectorOptions::default());
    running.wait_past(2);
    let page = http(running.address, "GET", "/api/entities?offset=0&limit=5", "")
        .unwrap()
        .json();
    assert_eq!(page["total"], 110);
    assert_eq!(page["entities"].as_array().unwrap().len(), 5);
    let id = page["entities"][0]["id"].as_u64().unwrap();
    let entity = http(running.address, "GET", &format!("/api/entities/{id}"), "")
        .unwrap()
        .json();
    assert_eq!(entity["id"], id);
    let components = entity["components"].as_array().unwrap();
    let hp = components
        .iter()
        .find(|c| c["name"].as_str().unwrap().ends_with("Hp"))
        .expect("an Hp");
    assert!(hp["debug"].as_str().unwrap().starts_with("Hp("), "{hp}");
    let pos = components
        .iter()
        .find(|c| c["name"].as_str().unwrap().ends_with("Pos"))
        .expect("a Pos");
    assert!(pos["debug"].is_null(), "Pos is not registered: {pos}");

    let missing = http(running.address, "GET", "/api/entities/12345", "").unwrap();
    assert_eq!(missing.status, 404);
    assert!(missing.json()["error"].as_str().unwrap().contains("12345"));
}

/// The newest snapshot's frame counter and pause flag.
fn frame_and_paused(running: &Running) -> (u64, bool) {
    let snapshot = http(running.address, "GET", "/api/snapshot", "")
        .unwrap()
        .json();
    (
        snapshot["frame"].as_u64().unwrap(),
        snapshot["paused"].as_bool().unwrap(),
    )
}

/// Polls the snapshot until `done` holds (or fails after 20 s).
fn until(running: &Running, done: impl Fn((u64, bool)) -> bool) -> (u64, bool) {
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    loop {
        let seen = frame_and_paused(running);
        if done(seen) {
            return seen;
        }
        assert!(std::time::Instant::now() < deadline, "stuck at {seen:?}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn pause_holds_the_frame_counter_and_step_advances_it_by_one() {
    let running = Running::start(InspectorOptions::default());
    running.wait_past(3);
    let paused = http(running.address, "POST", "/api/pause", "")
        .unwrap()
        .json();
    assert_eq!(paused["paused"], true);
    let (held, _) = until(&running, |(_, paused)| paused);
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(
        frame_and_paused(&running),
        (held, true),
        "paused: no frame runs"
    );
    let mut at = held;
    for _ in 0..3 {
        let stepped = http(running.address, "POST", "/api/step", "")
            .unwrap()
            .json();
        assert_eq!(stepped["paused"], false, "the stepped frame runs");
        let (next, paused) = until(&running, |(frame, _)| frame != at);
        assert_eq!(
            (next, paused),
            (at + 1, true),
            "exactly one frame, then paused"
        );
        std::thread::sleep(Duration::from_millis(150));
        assert_eq!(frame_and_paused(&running), (at + 1, true), "and no more");
        at += 1;
    }
    let resumed = http(running.address, "POST", "/api/resume", "")
        .unwrap()
        .json();
    assert_eq!(resumed["paused"], false);
    until(&running, |(frame, paused)| !paused && frame > at + 5);
}

#[test]
fn bad_requests_get_json_errors_and_the_game_keeps_running() {
    let running = Running::start(InspectorOptions {
        max_body: 1024,
        ..InspectorOptions::default()
    });
    running.wait_past(1);
    for (method, path, status) in [
        ("GET", "/nothing/here", 404),
        ("GET", "/api/entities/not-a-number", 400),
        ("GET", "/api/entities?limit=100000", 400),
        ("GET", "/api/entities?offset=-1", 400),
        ("DELETE", "/api/snapshot", 405),
        ("GET", "/api/pause", 405),
    ] {
        let response = http(running.address, method, path, "").unwrap();
        assert_eq!(
            response.status, status,
            "{method} {path}: {}",
            response.body
        );
        assert_eq!(response.content_type, "application/json", "{method} {path}");
        assert!(response.json()["error"].is_string(), "{method} {path}");
    }
    // A body over the limit, announced: refused before it is read.
    let huge = raw(
        running.address,
        "POST /api/pause HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: 1000000000\r\n\r\n",
    )
    .unwrap();
    assert_eq!(huge.status, 413, "{}", huge.body);
    assert!(huge.json()["error"].as_str().unwrap().contains("1024"));
    // Garbage instead of HTTP: the connection is dropped, nothing else.
    let _ = raw(running.address, "\u{0}\u{1}garbage\r\n\r\n");
    let before = running.frames();
    running.wait_past(before + 3);
    assert_eq!(
        http(running.address, "GET", "/api/snapshot", "")
            .unwrap()
            .status,
        200
    );
}

#[test]
fn a_thousand_connections_stay_bounded_and_never_stall_the_frame() {
    let running = Running::start(InspectorOptions {
        max_connections: 16,
        ..InspectorOptions::default()
    });
    running.wait_past(1);
    let mut held = Vec::new();
    for _ in 0..1000 {
        // Connects even past the cap (the kernel accepts); the server
        // closes those at once.
        if let Ok(stream) = TcpStream::connect(running.address) {
            held.push(stream);
        }
    }
    let before = running.frames();
    running.wait_past(before + 10);
    // The server keeps at most the cap open and closed the rest.
    std::thread::sleep(Duration::from_millis(500));
    let open = held
        .iter_mut()
        .filter(|stream| {
            stream.set_nonblocking(true).unwrap();
            let mut byte = [0u8; 1];
            matches!(std::io::Read::read(&mut &**stream, &mut byte), Err(e) if e.kind() == std::io::ErrorKind::WouldBlock)
        })
        .count();
    assert!(open <= 16, "{open} connections open past the cap of 16");
    assert!(
        held.len() - open >= 900,
        "{} of {} closed",
        held.len() - open,
        held.len()
    );
    drop(held);
    // The idle connections close and the server serves again.
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    loop {
        if let Ok(response) = http(running.address, "GET", "/api/snapshot", "")
            && response.status == 200
        {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the server did not recover"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Slowloris: clients that take every connection slot and then stall,
/// one with nothing sent, the others partway through a request head, are
/// closed once `request_head_within` passes, and the server serves again.
#[test]
fn clients_that_stall_in_a_request_head_are_closed_and_free_their_slots() {
    let running = Running::start(InspectorOptions {
        max_connections: 4,
        request_head_within: Duration::from_millis(500),
        ..InspectorOptions::default()
    });
    running.wait_past(1);
    let stalled_heads = [
        "",
        "GET /api/snapshot HTTP/1.1\r\n",
        "GET /api/snapshot HTTP/1.1\r\nHost: x\r\nX-Slow: a",
        "GET /api/snap",
    ];
    let mut held: Vec<TcpStream> = stalled_heads
        .iter()
        .map(|head| {
            let mut stream = TcpStream::connect(running.address).unwrap();
            std::io::Write::write_all(&mut stream, head.as_bytes()).unwrap();
            stream
        })
        .collect();
    // Every slot is taken: a fifth client is closed unanswered.
    std::thread::sleep(Duration::from_millis(100));
    let refused = http(running.address, "GET", "/api/snapshot", "");
    assert!(
        !matches!(&refused, Ok(response) if response.status == 200),
        "a fifth connection was served past the cap of 4"
    );
    // Each stalled client is closed by the server (its read ends), well
    // before the test's own read timeout.
    let started = std::time::Instant::now();
    for (stream, head) in held.iter_mut().zip(stalled_heads) {
        stream
            .set_read_timeout(Some(Duration::from_secs(20)))
            .unwrap();
        let mut rest = Vec::new();
        let _ = std::io::Read::read_to_end(stream, &mut rest);
        assert!(
            !String::from_utf8_lossy(&rest).contains(" 200 "),
            "the stalled head {head:?} was answered"
        );
    }
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "stalled clients held their slots for {:?}",
        started.elapsed()
    );
    // Their slots are free again.
    let response = http(running.address, "GET", "/api/snapshot", "").unwrap();
    assert_eq!(response.status, 200);
}

#[test]
fn a_full_request_queue_is_refused_not_waited_on() {
    // A world that frames rarely: requests pile up for the game thread.
    let running = Running::start_with(
        InspectorOptions {
            request_queue: 2,
            requests_per_frame: 1,
            ..InspectorOptions::default()
        },
        || {
            let mut world = small_world(1);
            world.add_system(sluice::NodeBuilder::new("slow").system(|| {
                std::thread::sleep(Duration::from_millis(300));
            }));
            world
        },
    );
    running.wait_past(0);
    let address = running.address;
    let askers: Vec<_> = (0..8)
        .map(|_| {
            std::thread::spawn(move || {
                http(address, "GET", "/api/entities?limit=1", "").map(|r| r.status)
            })
        })
        .collect();
    let statuses: Vec<u16> = askers
        .into_iter()
        .map(|asker| asker.join().unwrap().unwrap())
        .collect();
    assert!(statuses.contains(&503), "some refused: {statuses:?}");
    assert!(statuses.contains(&200), "some answered: {statuses:?}");
    assert!(
        statuses.iter().all(|s| *s == 503 || *s == 200),
        "{statuses:?}"
    );
}

#[test]
fn start_refuses_bad_addresses_and_options() {
    assert!(matches!(
        Inspector::start("0.0.0.0:0", InspectorOptions::default()),
        Err(InspectError::NotLoopback { .. })
    ));
    assert!(matches!(
        Inspector::start("no-such-host.invalid:1", InspectorOptions::default()),
        Err(InspectError::Address { .. })
    ));
    assert!(matches!(
        Inspector::start(
            "127.0.0.1:0",
            InspectorOptions {
                max_connections: 0,
                ..InspectorOptions::default()
            }
        ),
        Err(InspectError::Option {
            name: "max_connections",
            ..
        })
    ));
    assert!(matches!(
        Inspector::start(
            "127.0.0.1:0",
            InspectorOptions {
                request_head_within: Duration::ZERO,
                ..InspectorOptions::default()
            }
        ),
        Err(InspectError::Option {
            name: "request_head_within",
            ..
        })
    ));
    let first = Inspector::start("127.0.0.1:0", InspectorOptions::default()).unwrap();
    let taken = Inspector::start(first.local_addr(), InspectorOptions::default());
    let error = taken.expect_err("the port is taken");
    assert!(matches!(error, InspectError::Bind { .. }));
    assert!(error.to_string().contains(&first.local_addr().to_string()));
}

/// The inspector reads the world between frames: what it shows follows
/// the frames run, whatever executor ran them (`heal` adds one to every
/// `Hp` a frame, and the first entity starts at `Hp(0)`).
#[test]
fn serial_and_parallel_worlds_show_the_same_entities() {
    for threads in [1, 3] {
        let running =
            Running::start_with(InspectorOptions::default(), move || small_world(threads));
        running.wait_past(3);
        http(running.address, "POST", "/api/pause", "").unwrap();
        std::thread::sleep(Duration::from_millis(50));
        let before = running.frames();
        http(running.address, "POST", "/api/step", "").unwrap();
        running.wait_past(before);
        std::thread::sleep(Duration::from_millis(50));
        let snapshot = http(running.address, "GET", "/api/snapshot", "")
            .unwrap()
            .json();
        let iterations = snapshot["iterations"].as_u64().unwrap();
        let page = http(running.address, "GET", "/api/entities?limit=1", "")
            .unwrap()
            .json();
        let id = page["entities"][0]["id"].as_u64().unwrap();
        let entity = http(running.address, "GET", &format!("/api/entities/{id}"), "")
            .unwrap()
            .json();
        let hp = entity["components"]
            .as_array()
            .unwrap()
            .iter()
            .find_map(|c| c["debug"].as_str().filter(|text| text.starts_with("Hp(")))
            .expect("an Hp")
            .to_owned();
        assert_eq!(hp, format!("Hp({iterations})"), "{threads} threads");
    }
}

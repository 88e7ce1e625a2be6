//! A world running on its own thread with an inspector, and a plain HTTP
//! client over a TCP stream (loopback only).

#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use sluice::{NodeBuilder, Query, ThreadPool, World};
use sluice_inspect::{Inspector, InspectorOptions};

/// A unit's hit points.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Hp(pub u32);

/// A unit's position.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Pos(pub f32, pub f32);

/// A message the world sends every frame.
#[derive(Debug)]
pub struct Ping;

/// A small world: two systems over a few entities, one message per frame.
pub fn small_world(threads: usize) -> World {
    let mut world = if threads > 1 {
        World::with_pool(ThreadPool::new(threads).expect("pool"))
    } else {
        World::new()
    };
    world.spawn_batch((0..100).map(|i| (Hp(i), Pos(i as f32, 0.0))));
    world.spawn_batch((0..10).map(|i| (Pos(0.0, i as f32),)));
    world.add_system(
        NodeBuilder::new("heal").system(|mut units: Query<&mut Hp>| {
            for mut hp in units.iter_mut() {
                hp.0 += 1;
            }
        }),
    );
    world.add_system(
        NodeBuilder::new("drift").system(|mut units: Query<&mut Pos>| {
            for mut pos in units.iter_mut() {
                pos.0 += 0.5;
            }
        }),
    );
    world.add_system(
        NodeBuilder::new("ping").system(|pings: sluice::Publish<Ping>| pings.send(Ping)),
    );
    world
}

/// A world running frames on its own thread with an inspector.
pub struct Running {
    pub address: SocketAddr,
    pub frames: Arc<AtomicU64>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Running {
    pub fn start(options: InspectorOptions) -> Self {
        Self::start_with(options, || small_world(2))
    }

    pub fn start_with(
        options: InspectorOptions,
        make: impl FnOnce() -> World + Send + 'static,
    ) -> Self {
        let frames = Arc::new(AtomicU64::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let (tell, told) = std::sync::mpsc::channel();
        let thread = {
            let frames = Arc::clone(&frames);
            let stop = Arc::clone(&stop);
            std::thread::spawn(move || {
                let mut world = make();
                let mut inspector =
                    Inspector::start("127.0.0.1:0", options).expect("inspector starts");
                inspector.component::<Hp>().messages::<Ping>();
                tell.send(inspector.local_addr()).unwrap();
                while !stop.load(Ordering::Acquire) {
                    world.run_iteration().expect("frame runs");
                    inspector.frame(&mut world);
                    frames.store(inspector.frames(), Ordering::Release);
                    std::thread::sleep(Duration::from_millis(2));
                }
                // Dropping a paused inspector would be a test bug: the
                // loop above only ends between frames.
            })
        };
        let address = told.recv_timeout(Duration::from_secs(20)).expect("address");
        Self {
            address,
            frames,
            stop,
            thread: Some(thread),
        }
    }

    pub fn frames(&self) -> u64 {
        self.frames.load(Ordering::Acquire)
    }

    /// Waits until the frame counter passes `frames` (or fails after 20 s).
    pub fn wait_past(&self, frames: u64) {
        let deadline = Instant::now() + Duration::from_secs(20);
        while self.frames() <= frames {
            assert!(
                Instant::now() < deadline,
                "the world stalled at frame {}",
                self.frames()
            );
            std::thread::sleep(Duration::from_millis(5));
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
        // A paused world waits for a resume: send one so the thread ends.
        let _ = http(self.address, "POST", "/api/resume", "");
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// A response: status code, content type and body.
#[derive(Debug)]
pub struct Response {
    pub status: u16,
    pub content_type: String,
    pub body: String,
}

impl Response {
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body)
            .unwrap_or_else(|error| panic!("not JSON ({error}): {}", self.body))
    }
}

/// One HTTP/1.1 request with `Connection: close`.
pub fn http(
    address: SocketAddr,
    method: &str,
    path: &str,
    body: &str,
) -> std::io::Result<Response> {
    raw(
        address,
        &format!(
            "{method} {path} HTTP/1.1\r\nHost: {address}\r\nConnection: close\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        ),
    )
}

/// Sends `request` as it is and reads the response.
pub fn raw(address: SocketAddr, request: &str) -> std::io::Result<Response> {
    let mut stream = TcpStream::connect(address)?;
    stream.set_read_timeout(Some(Duration::from_secs(20)))?;
    stream.write_all(request.as_bytes())?;
    // Read to the end of the body: its Content-Length, or the close (some
    // servers keep the connection open whatever the request says).
    let mut bytes = Vec::new();
    let mut chunk = [0u8; 16 * 1024];
    loop {
        if let Some(end) = complete(&bytes) {
            bytes.truncate(end);
            break;
        }
        let read = stream.read(&mut chunk)?;
        if read == 0 {
            break;
        }
        bytes.extend_from_slice(&chunk[..read]);
    }
    let text = String::from_utf8_lossy(&bytes).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|code| code.parse().ok())
        .unwrap_or(0);
    let content_type = head
        .lines()
        .find_map(|line| {
            let (name, value) = line.split_once(':')?;
            name.eq_ignore_ascii_case("content-type")
                .then(|| value.trim().to_owned())
        })
        .unwrap_or_default();
    Ok(Response {
        status,
        content_type,
        body: body.to_owned(),
    })
}

/// Where a response with a Content-Length ends, once it is all in `bytes`.
fn complete(bytes: &[u8]) -> Option<usize> {
    let head_end = bytes.windows(4).position(|w| w == b"\r\n\r\n")? + 4;
    let head = String::from_utf8_lossy(&bytes[..head_end]);
    let length: usize = head.lines().find_map(|line| {
        let (name, value) = line.split_once(':')?;
        name.eq_ignore_ascii_case("content-length")
            .then(|| value.trim().parse().ok())?
    })?;
    (bytes.len() >= head_end + length).then_some(head_end + length)
}

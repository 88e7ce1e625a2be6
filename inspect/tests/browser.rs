//! The inspector's page in a real browser: the game runs with the
//! inspector on a loopback port, headless Chromium (Debian's package,
//! driven by Debian's chromedriver) opens the page, and the test checks
//! what a person would: the plan is drawn, the frame-time figure moves,
//! pause holds the frame counter, step advances it by exactly one, and a
//! selected entity's components are shown.
//!
//! WebDriver is JSON over HTTP, so the test speaks it through the same
//! small HTTP client the API tests use: no browser-automation crate (and
//! its TLS stack) to build, no Node toolchain in CI.
//!
//! Without Chromium or chromedriver the test skips with a note, except
//! under `CI=true`, where it fails saying what is missing (`.ci/run`
//! installs both). `SLUICE_INSPECT_SCREENSHOT=path.png` saves what the page
//! looked like.

mod common;

use std::net::{SocketAddr, TcpListener};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use common::http;
use serde_json::{Value, json};
use sluice_game::{Config, Game};

/// The first of `names` found on the `PATH` (or as an absolute path).
fn find(names: &[&str]) -> Option<String> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    names.iter().find_map(|name| {
        if name.starts_with('/') {
            return std::path::Path::new(name)
                .exists()
                .then(|| name.to_string());
        }
        std::env::split_paths(&path)
            .map(|dir| dir.join(name))
            .find(|candidate| candidate.exists())
            .map(|found| found.display().to_string())
    })
}

/// A free loopback port (bound, then let go).
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// The game on its own thread with the inspector, until dropped.
struct GameRunning {
    address: SocketAddr,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl GameRunning {
    fn start() -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let (tell, told) = std::sync::mpsc::channel();
        let thread = {
            let stop = Arc::clone(&stop);
            std::thread::spawn(move || {
                let config = Config {
                    threads: 2,
                    frames: u64::MAX,
                    entities: 2_000,
                    timing: true,
                };
                let mut game = Game::new(&config).expect("the game starts");
                let mut inspector =
                    sluice_game::inspect::start("127.0.0.1:0").expect("the inspector starts");
                tell.send(inspector.local_addr()).unwrap();
                while !stop.load(Ordering::Acquire) {
                    game.frame().expect("a frame runs");
                    inspector.frame(game.world_mut());
                    // About 120 frames a second: the page has time to read.
                    std::thread::sleep(Duration::from_millis(8));
                }
            })
        };
        let address = told.recv_timeout(Duration::from_secs(60)).unwrap();
        Self {
            address,
            stop,
            thread: Some(thread),
        }
    }
}

impl Drop for GameRunning {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
        let _ = http(self.address, "POST", "/api/resume", "");
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// A child process, killed and reaped when dropped.
struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A chromedriver process and one headless Chromium session in it.
struct Browser {
    _driver: Killed,
    address: SocketAddr,
    session: String,
    _profile: TempDir,
}

/// A fresh directory, removed when dropped.
struct TempDir(std::path::PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

impl Browser {
    fn start(chromium: &str, chromedriver: &str) -> Self {
        let port = free_port();
        let address: SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
        let driver = Command::new(chromedriver)
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("chromedriver starts");
        // Killed on every path from here on, a failed start included.
        let driver = Killed(driver);
        let deadline = Instant::now() + Duration::from_secs(30);
        while http(address, "GET", "/status", "").is_err() {
            assert!(Instant::now() < deadline, "chromedriver did not listen");
            std::thread::sleep(Duration::from_millis(100));
        }
        let profile = TempDir(std::env::temp_dir().join(format!(
            "sluice-inspect-chromium-{}-{port}",
            std::process::id()
        )));
        std::fs::create_dir_all(&profile.0).unwrap();
        let capabilities = json!({
            "capabilities": { "alwaysMatch": {
                "browserName": "chrome",
                "goog:chromeOptions": {
                    "binary": chromium,
                    "args": [
                        "--headless", "--no-sandbox", "--disable-gpu",
                        "--disable-background-networking", "--disable-component-update",
                        "--disable-sync", "--no-first-run", "--disable-dev-shm-usage",
                        "--window-size=1400,2300",
                        format!("--user-data-dir={}", profile.0.display()),
                    ],
                },
            }},
        });
        let mut browser = Self {
            _driver: driver,
            address,
            session: String::new(),
            _profile: profile,
        };
        let created = browser.call("POST", "/session", capabilities);
        browser.session = created["sessionId"]
            .as_str()
            .unwrap_or_else(|| panic!("no session: {created}"))
            .to_owned();
        browser
    }

    /// One WebDriver command; its `value`.
    fn call(&self, method: &str, path: &str, body: Value) -> Value {
        let body = if body.is_null() {
            String::new()
        } else {
            body.to_string()
        };
        let response = common::raw(
            self.address,
            &format!(
                "{method} {path} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
                self.address,
                body.len()
            ),
        )
        .expect("chromedriver answers");
        let value = response.json()["value"].clone();
        assert_eq!(response.status, 200, "{method} {path}: {value}");
        value
    }

    fn session(&self, method: &str, path: &str, body: Value) -> Value {
        self.call(method, &format!("/session/{}{path}", self.session), body)
    }

    fn script(&self, script: &str) -> Value {
        self.session(
            "POST",
            "/execute/sync",
            json!({ "script": script, "args": [] }),
        )
    }

    /// Clicks the first element matching `css`, as a person would.
    fn click(&self, css: &str) {
        let found = self.session(
            "POST",
            "/element",
            json!({ "using": "css selector", "value": css }),
        );
        let element = found
            .as_object()
            .and_then(|object| object.values().next())
            .and_then(Value::as_str)
            .unwrap_or_else(|| panic!("no element {css}: {found}"))
            .to_owned();
        self.session("POST", &format!("/element/{element}/click"), json!({}));
    }

    /// Waits until `script` returns something truthy; returns it.
    fn until(&self, script: &str, what: &str) -> Value {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let value = self.script(script);
            let truthy = match &value {
                Value::Null | Value::Bool(false) => false,
                Value::String(text) => !text.is_empty(),
                _ => true,
            };
            if truthy {
                return value;
            }
            assert!(Instant::now() < deadline, "{what}: still {value}");
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn text(&self, id: &str) -> String {
        self.script(&format!(
            "return document.getElementById('{id}').textContent"
        ))
        .as_str()
        .unwrap_or_default()
        .to_owned()
    }

    fn frame(&self) -> u64 {
        self.text("frame").parse().unwrap_or(0)
    }

    fn screenshot(&self, path: &str) {
        let png = self.session("GET", "/screenshot", Value::Null);
        let bytes = decode_base64(png.as_str().unwrap());
        std::fs::write(path, bytes).unwrap();
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        // Ending the session closes Chromium; then the driver is killed
        // (`Killed`). chromedriver checks the Host header: a loopback one.
        if !self.session.is_empty() {
            let _ = common::raw(
                self.address,
                &format!(
                    "DELETE /session/{} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n\r\n",
                    self.session, self.address
                ),
            );
        }
    }
}

/// Standard base64 (the screenshot's encoding).
fn decode_base64(text: &str) -> Vec<u8> {
    let value = |c: u8| match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' => 62,
        b'/' => 63,
        _ => panic!("not base64: {c}"),
    };
    let digits: Vec<u8> = text
        .bytes()
        .filter(|c| !c.is_ascii_whitespace() && *c != b'=')
        .map(value)
        .collect();
    let mut bytes = Vec::with_capacity(digits.len() * 3 / 4);
    for chunk in digits.chunks(4) {
        let mut n = 0u32;
        for (i, digit) in chunk.iter().enumerate() {
            n |= u32::from(*digit) << (18 - 6 * i);
        }
        let whole = chunk.len() * 6 / 8;
        bytes.extend_from_slice(&n.to_be_bytes()[1..1 + whole]);
    }
    bytes
}

#[test]
fn the_page_shows_the_live_game_and_controls_it() {
    let chromium = find(&["chromium", "chromium-browser", "google-chrome"]);
    let chromedriver = find(&["chromedriver", "/usr/lib/chromium/chromedriver"]);
    let (Some(chromium), Some(chromedriver)) = (chromium, chromedriver) else {
        let note = "the browser test needs Debian's `chromium` and `chromium-driver` \
                    (apt-get install chromium chromium-driver; .ci/run installs them)";
        if std::env::var("CI").is_ok_and(|ci| ci == "true") {
            panic!("{note}");
        }
        eprintln!("skipped: {note}");
        return;
    };
    let game = GameRunning::start();
    let browser = Browser::start(&chromium, &chromedriver);
    browser.session(
        "POST",
        "/url",
        json!({ "url": format!("http://{}/", game.address) }),
    );

    // The plan is drawn: the runtime's lanes-and-gates SVG, with the
    // game's nodes in it.
    browser.until(
        "const svg = document.querySelector('#plan svg'); \
         return svg !== null && svg.textContent.includes('steer');",
        "the plan is drawn",
    );

    // The frame-time figure changes between two reads.
    let figure = "return document.getElementById('frames-line').getAttribute('points')";
    let first = browser.until(figure, "the frame-time figure is drawn");
    let first = first.as_str().expect("points are text").to_owned();
    // Polled rather than read once after a sleep: a loaded machine only
    // takes longer (30 s at most) to show the next frames.
    browser.until(
        &format!(
            "return document.getElementById('frames-line').getAttribute('points') !== {}",
            json!(first)
        ),
        "the frame-time figure moves",
    );
    assert!(browser.text("last-ms").parse::<f64>().unwrap() > 0.0);
    browser.until(
        "return document.querySelectorAll('#nodes tbody tr').length > 5",
        "the timing table fills",
    );

    // Pause stops the frame counter.
    browser.click("#pause");
    browser.until(
        "return document.getElementById('status').textContent === 'paused'",
        "paused",
    );
    std::thread::sleep(Duration::from_millis(300));
    let held = browser.frame();
    std::thread::sleep(Duration::from_millis(700));
    assert_eq!(browser.frame(), held, "paused: the counter holds");

    // Step advances it by exactly one.
    for _ in 0..2 {
        let before = browser.frame();
        browser.click("#step");
        browser.until(
            &format!("return document.getElementById('frame').textContent !== '{before}'"),
            "the step shows",
        );
        std::thread::sleep(Duration::from_millis(500));
        assert_eq!(browser.frame(), before + 1, "one step, one frame");
        assert_eq!(browser.text("status"), "paused");
    }

    // A selected entity's components are shown, as their Debug text.
    browser.until(
        "return document.querySelectorAll('#entity-list li').length > 0",
        "the entity list fills",
    );
    browser.click("#entity-list li");
    let shown = browser.until(
        "const t = document.getElementById('entity-components'); return t && t.textContent;",
        "the entity's components show",
    );
    let shown = shown.as_str().unwrap();
    assert!(shown.contains("Pos(Vec2"), "components as text: {shown}");

    browser.click("#resume");
    let resumed_at = browser.frame();
    browser.until(
        &format!("return Number(document.getElementById('frame').textContent) > {resumed_at} + 5"),
        "the game runs again",
    );
    if let Ok(path) = std::env::var("SLUICE_INSPECT_SCREENSHOT") {
        browser.screenshot(&path);
    }
}

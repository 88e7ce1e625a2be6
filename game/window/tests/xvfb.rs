//! The windowed game on a virtual X display, seen as a person would see it:
//! the test starts `Xvfb`, runs `sluice-game-window` on it, captures the
//! whole screen from the X server with `xwd` (not the game's own
//! framebuffer), and checks both team colours in their halves, the
//! terrain, and that the picture moves.
//!
//! Then it plays: `xdotool` focuses the window and presses Space (the
//! picture holds still), clicks a red unit (its components are printed and
//! the panel shows), and presses Escape (the game exits and reports).
//!
//! `.ci/run` installs `xvfb`, `x11-apps` (for `xwd`) and `xdotool`. Without
//! them the test fails when `CI=true` and is skipped with a note otherwise.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use sluice_game_window::draw::{BLUE, Framebuffer, GROUND, RED, WALL};
use sluice_game_window::write_png;

const WIDTH: u32 = 1280;
const HEIGHT: u32 = 720;

/// A child process killed (by its own id) and reaped when dropped.
struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn installed(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|paths| std::env::split_paths(&paths).any(|dir| dir.join(program).is_file()))
}

/// A display number no X server holds (by its lock file and socket).
fn free_display() -> u32 {
    let start = 100 + std::process::id() % 400;
    (start..start + 400)
        .find(|n| {
            !Path::new(&format!("/tmp/.X{n}-lock")).exists()
                && !Path::new(&format!("/tmp/.X11-unix/X{n}")).exists()
        })
        .expect("a free display number")
}

fn start_xvfb() -> (Killed, String) {
    let number = free_display();
    let display = format!(":{number}");
    let server = Command::new("Xvfb")
        .args([&display, "-screen", "0", &format!("{WIDTH}x{HEIGHT}x24")])
        .args(["-nolisten", "tcp"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("Xvfb starts");
    let server = Killed(server);
    let socket = PathBuf::from(format!("/tmp/.X11-unix/X{number}"));
    let deadline = Instant::now() + Duration::from_secs(20);
    while !socket.exists() {
        assert!(
            Instant::now() < deadline,
            "Xvfb {display} did not come up in 20 s"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    (server, display)
}

/// An XWD capture decoded into `0x00RRGGBB` pixels.
fn capture(display: &str) -> Framebuffer {
    let output = Command::new("xwd")
        .args(["-root", "-silent", "-display", display])
        .output()
        .expect("xwd runs");
    assert!(
        output.status.success(),
        "xwd failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    decode_xwd(&output.stdout)
}

/// Decodes an XWD file (X11 window dump, version 7) of a 24- or 32-bit
/// TrueColor screen: a big-endian header of 25 32-bit fields and the
/// window's name, a colour map, then the rows.
fn decode_xwd(bytes: &[u8]) -> Framebuffer {
    let field = |index: usize| {
        let at = index * 4;
        u32::from_be_bytes(bytes[at..at + 4].try_into().expect("4 bytes"))
    };
    let header_size = field(0) as usize;
    assert_eq!(field(1), 7, "XWD version 7");
    let (width, height) = (field(4), field(5));
    let little_endian = field(7) == 0;
    let bits_per_pixel = field(11);
    let bytes_per_line = field(12) as usize;
    let masks = (field(14), field(15), field(16));
    let colours = field(19) as usize;
    assert_eq!(bits_per_pixel, 32, "a 24-bit screen dumps 32 bits a pixel");
    assert_eq!(masks, (0xFF_0000, 0xFF00, 0xFF), "an RGB TrueColor visual");
    let data = header_size + colours * 12;
    let mut pixels = Vec::with_capacity(width as usize * height as usize);
    for y in 0..height as usize {
        let row = &bytes[data + y * bytes_per_line..][..width as usize * 4];
        pixels.extend(row.chunks_exact(4).map(|pixel| {
            let pixel: [u8; 4] = pixel.try_into().expect("4 bytes");
            let value = if little_endian {
                u32::from_le_bytes(pixel)
            } else {
                u32::from_be_bytes(pixel)
            };
            value & 0x00FF_FFFF
        }));
    }
    Framebuffer::from_pixels(width, height, pixels).expect("width x height pixels")
}

/// How many pixels of `colour` lie left and right of the middle.
fn halves(frame: &Framebuffer, colour: u32) -> (usize, usize) {
    let width = frame.width() as usize;
    let mut counts = (0, 0);
    for (index, &pixel) in frame.pixels().iter().enumerate() {
        if pixel == colour {
            if index % width < width / 2 {
                counts.0 += 1;
            } else {
                counts.1 += 1;
            }
        }
    }
    counts
}

#[test]
fn the_battle_shows_on_a_virtual_display() {
    let began = Instant::now();
    let missing: Vec<&str> = ["Xvfb", "xwd", "xdotool"]
        .into_iter()
        .filter(|program| !installed(program))
        .collect();
    if !missing.is_empty() {
        let message = format!(
            "{} not installed: the window's test needs an X server without a screen \
             and a way to type (apt-get install xvfb x11-apps xdotool; .ci/run installs them)",
            missing.join(" and ")
        );
        assert!(std::env::var("CI").as_deref() != Ok("true"), "{message}");
        eprintln!("skipped: {message}");
        return;
    }
    let (_server, display) = start_xvfb();
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let screenshot = out.join("window-framebuffer.png");
    let _ = std::fs::remove_file(&screenshot);
    let mut game = Command::new(env!("CARGO_BIN_EXE_sluice-game-window"))
        .env("DISPLAY", &display)
        .args([
            "--entities",
            "4000",
            "--threads",
            "2",
            "--screenshot-at",
            "10",
        ])
        .arg("--screenshot")
        .arg(&screenshot)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("the windowed game starts");
    let stdout = game.stdout.take().expect("piped");
    let mut game = Killed(game);
    let (lines, received) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if lines.send(line).is_err() {
                break;
            }
        }
    });
    // Frame 10 was presented once the game says it wrote its screenshot.
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match received.recv_timeout(left) {
            Ok(line) if line.starts_with("screenshot:") => break,
            Ok(_) => {}
            Err(_) => panic!("the game did not reach frame 10 in 120 s"),
        }
    }
    let first = capture(&display);
    assert_eq!((first.width(), first.height()), (WIDTH, HEIGHT));
    write_png(&first, &out.join("window-capture.png")).expect("the capture is written");

    // Red (team 0) holds the left half, blue (team 1) the right.
    let (red_left, red_right) = halves(&first, RED);
    let (blue_left, blue_right) = halves(&first, BLUE);
    assert!(
        red_left > 2_000 && red_right * 10 < red_left,
        "red left {red_left}, right {red_right}"
    );
    assert!(
        blue_right > 2_000 && blue_left * 10 < blue_right,
        "blue left {blue_left}, right {blue_right}"
    );
    // The terrain: open ground over much of the screen, and its walls.
    let pixels = first.pixels().len();
    let ground = first.pixels().iter().filter(|&&p| p == GROUND).count();
    let walls = first.pixels().iter().filter(|&&p| p == WALL).count();
    assert!(
        ground * 5 > pixels,
        "ground covers {ground} of {pixels} pixels"
    );
    assert!(walls > 1_000, "{walls} wall pixels");

    // The picture moves: units march, the HUD's frame counter counts.
    let deadline = Instant::now() + Duration::from_secs(60);
    let changed = loop {
        std::thread::sleep(Duration::from_millis(500));
        let next = capture(&display);
        let changed = first
            .pixels()
            .iter()
            .zip(next.pixels())
            .filter(|(a, b)| a != b)
            .count();
        if changed > 500 || Instant::now() > deadline {
            break changed;
        }
    };
    assert!(changed > 500, "only {changed} pixels changed in 60 s");

    // The game's own framebuffer dump is a PNG of the window's size.
    let png = std::fs::read(&screenshot).expect("the game wrote its screenshot");
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");

    // Space pauses: two captures a second apart are the same picture.
    let xdotool = |args: &[&str]| {
        let status = Command::new("xdotool")
            .env("DISPLAY", &display)
            .args(args)
            .status()
            .expect("xdotool runs");
        assert!(status.success(), "xdotool {args:?} failed");
    };
    let search = Command::new("xdotool")
        .env("DISPLAY", &display)
        .args(["search", "--name", "^sluice"])
        .output()
        .expect("xdotool runs");
    let window = String::from_utf8_lossy(&search.stdout);
    let window = window
        .lines()
        .next()
        .expect("the game's window is found")
        .to_owned();
    xdotool(&["windowfocus", "--sync", &window]);
    xdotool(&["key", "space"]);
    // The game says when it presented its first paused picture: from then
    // on the screen must hold still, however slow a frame is on this machine.
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match received.recv_timeout(left) {
            Ok(line) if line.starts_with("paused:") => break,
            Ok(_) => {}
            Err(_) => panic!("no paused picture announced in 60 s after pressing space"),
        }
    }
    std::thread::sleep(Duration::from_millis(200));
    let paused = capture(&display);
    std::thread::sleep(Duration::from_millis(700));
    let still = capture(&display);
    let moved = paused
        .pixels()
        .iter()
        .zip(still.pixels())
        .filter(|(a, b)| a != b)
        .count();
    assert_eq!(moved, 0, "{moved} pixels changed while paused");

    // A click on a red unit selects it: stdout names it, the panel shows.
    let (x, y) = (1..HEIGHT - 1)
        .flat_map(|y| (1..WIDTH / 2).map(move |x| (x, y)))
        .find(|&(x, y)| {
            [(0, 0), (1, 0), (0, 1)]
                .iter()
                .all(|&(dx, dy)| paused.pixel(x + dx, y + dy) == Some(RED))
        })
        .expect("a red unit on the left");
    xdotool(&["mousemove", &x.to_string(), &y.to_string(), "click", "1"]);
    let deadline = Instant::now() + Duration::from_secs(30);
    let selected = loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match received.recv_timeout(left) {
            Ok(line) if line.starts_with("selected:") => break line,
            Ok(_) => {}
            Err(_) => panic!("no selection printed in 30 s after clicking ({x}, {y})"),
        }
    };
    // Red, unless the armies have met under the cursor on a fast machine.
    assert!(selected.contains("Team("), "{selected}");
    assert!(selected.contains("Health("), "{selected}");
    // The panel shows on the next redraw: poll for it, so a slow machine
    // (a debug build under load) only takes longer.
    let deadline = Instant::now() + Duration::from_secs(30);
    let right_top_text = loop {
        std::thread::sleep(Duration::from_millis(300));
        let panel = capture(&display);
        let text = (40..200)
            .flat_map(|y| (WIDTH - 200..WIDTH).map(move |x| (x, y)))
            .filter(|&(x, y)| panel.pixel(x, y) == Some(sluice_game_window::hud::TEXT))
            .count();
        if text > 100 || Instant::now() > deadline {
            break text;
        }
    };
    assert!(
        right_top_text > 100,
        "the panel's text: {right_top_text} pixels"
    );

    // Escape quits; the game reports its frames.
    xdotool(&["key", "Escape"]);
    let deadline = Instant::now() + Duration::from_secs(30);
    let status = loop {
        if let Some(status) = game.0.try_wait().expect("the game can be waited on") {
            break status;
        }
        assert!(Instant::now() < deadline, "the game did not quit on Escape");
        std::thread::sleep(Duration::from_millis(100));
    };
    assert!(status.success(), "the game exited with {status}");
    let report: Vec<String> = received.try_iter().collect();
    assert!(
        report.iter().any(|line| line.contains("mean frame")),
        "{report:?}"
    );
    drop(game);
    eprintln!(
        "window test: {changed} pixels changed between captures; {:.1} s in all",
        began.elapsed().as_secs_f64()
    );
}

//! The window's event loop (winit's `ApplicationHandler`): it runs game
//! frames as fast as the display takes them, and turns keys and the mouse
//! into what a player expects.
//!
//! | input | does |
//! | --- | --- |
//! | Space | pause / resume (a paused game still pans, zooms and selects; stdout says `paused: frame N` once the paused picture is up) |
//! | `+` / `-` | speed: ¼, ½, 1, 2, 4 or 8 game frames a displayed frame |
//! | arrow keys, drag (any button) | pan |
//! | wheel | zoom about the cursor |
//! | click | select the unit under the cursor: its components on screen, in the title and on stdout |
//! | `R` / Home | reset the view |
//! | Escape | quit |

use std::rc::Rc;
use std::time::{Duration, Instant};

use sluice_game::Game;
use sluice_game::math::Vec2;
use sluice_game::units::Census;
use winit::application::ApplicationHandler;
use winit::dpi::PhysicalSize;
use winit::event::{ElementState, MouseButton, MouseScrollDelta, WindowEvent};
use winit::event_loop::{ActiveEventLoop, ControlFlow, EventLoop};
use winit::keyboard::{Key, NamedKey};
use winit::window::{Window, WindowId};

use crate::draw::Camera;
use crate::hud::Hud;
use crate::render::{Screen, Selection};
use crate::{Options, describe_unit, pick_unit, write_png};

/// The slowest and fastest speeds, as powers of two of game frames per
/// displayed frame.
const SPEEDS: std::ops::RangeInclusive<i32> = -2..=3;
/// How far a drag must move, in pixels, before it pans instead of clicking.
const DRAG_THRESHOLD: f32 = 4.0;
/// How far from a unit a click still selects it, in pixels.
const PICK_REACH: f32 = 12.0;
/// How far an arrow key pans, in pixels.
const ARROW_STEP: f32 = 48.0;

/// What a run measured.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunSummary {
    /// Game frames run.
    pub frames: u64,
    /// Their summed update time (simulation, recording, rasterizing and
    /// presenting: the commit is a node of the frame).
    pub update: Duration,
    /// Displayed frames (redraws).
    pub redraws: u64,
    /// Wall-clock time from the first redraw to the last.
    pub wall: Duration,
    /// Per node of the variable and fixed plans (by node index): its name
    /// and its time summed over the frames run.
    pub nodes: Vec<(String, Duration)>,
}

impl RunSummary {
    /// The mean update time of a game frame.
    pub fn mean_frame(&self) -> Duration {
        self.update / self.frames.max(1) as u32
    }

    /// The `count` nodes that took longest over the run, with their mean
    /// time a frame, longest first.
    pub fn busiest(&self, count: usize) -> Vec<(&str, Duration)> {
        let mut nodes: Vec<(&str, Duration)> = self
            .nodes
            .iter()
            .map(|(name, total)| (name.as_str(), *total / self.frames.max(1) as u32))
            .collect();
        nodes.sort_by_key(|node| std::cmp::Reverse(node.1));
        nodes.truncate(count);
        nodes
    }

    /// Displayed frames a second.
    pub fn fps(&self) -> f64 {
        self.redraws as f64 / self.wall.as_secs_f64().max(1e-9)
    }
}

/// Why the window's run ended badly.
#[derive(Debug)]
#[non_exhaustive]
pub enum AppError {
    /// The event loop could not start (no display: is `DISPLAY` set?).
    EventLoop(winit::error::EventLoopError),
    /// The window could not be made.
    Window(winit::error::OsError),
    /// softbuffer could not present to the window.
    Screen(crate::render::ScreenError),
    /// A game frame failed.
    Game(sluice_game::GameError),
    /// The screenshot could not be written (the path and the reason).
    Screenshot(std::path::PathBuf, std::io::Error),
}

impl std::fmt::Display for AppError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AppError::EventLoop(error) => write!(f, "no event loop (is DISPLAY set?): {error}"),
            AppError::Window(error) => write!(f, "the window could not be made: {error}"),
            AppError::Screen(error) => write!(f, "{error}"),
            AppError::Game(error) => write!(f, "{error}"),
            AppError::Screenshot(path, error) => write!(f, "{}: {error}", path.display()),
        }
    }
}

impl std::error::Error for AppError {}

/// The window's application: the game, the window, and the player's input.
#[derive(Debug)]
pub struct App {
    options: Options,
    game: Game,
    window: Option<Rc<Window>>,
    paused: bool,
    /// Whether a picture with the pause shown has been presented since the
    /// last pause; the first such redraw says so on stdout (`paused: frame
    /// N`), a point after which the screen holds still.
    pause_presented: bool,
    speed: i32,
    owed: f32,
    cursor: Vec2,
    pressed_at: Option<Vec2>,
    dragging: bool,
    summary: RunSummary,
    started: Option<Instant>,
    last_frame: Duration,
    node_times: Vec<Duration>,
    error: Option<AppError>,
}

impl App {
    /// An app running `game` (built by [`crate::build_game`]) as `options`
    /// say.
    pub fn new(options: Options, game: Game) -> Self {
        Self {
            options,
            game,
            window: None,
            paused: false,
            pause_presented: false,
            speed: 0,
            owed: 0.0,
            cursor: Vec2::ZERO,
            pressed_at: None,
            dragging: false,
            summary: RunSummary::default(),
            started: None,
            last_frame: Duration::ZERO,
            node_times: Vec::new(),
            error: None,
        }
    }

    /// Opens the window and runs until it is closed, Escape is pressed or
    /// `--frames` frames have run.
    ///
    /// # Errors
    /// When there is no display, the window or its surface cannot be made,
    /// a frame fails, or the screenshot cannot be written.
    pub fn run(mut self) -> Result<RunSummary, AppError> {
        let event_loop = EventLoop::new().map_err(AppError::EventLoop)?;
        event_loop.set_control_flow(ControlFlow::Poll);
        event_loop.run_app(&mut self).map_err(AppError::EventLoop)?;
        // The nodes' names, from the plans they ran in.
        if let Ok(plans) = self.game.world_mut().plans() {
            let names = plans.variable();
            for (index, node) in self.summary.nodes.iter_mut().enumerate() {
                node.0 = names.node_name(sluice::NodeIndex(index as u32)).to_owned();
            }
        }
        match self.error {
            Some(error) => Err(error),
            None => Ok(self.summary),
        }
    }

    fn fail(&mut self, event_loop: &ActiveEventLoop, error: AppError) {
        self.error = Some(error);
        event_loop.exit();
    }

    fn size(&self) -> (u32, u32) {
        let screen = self.game.world().get_non_send::<Screen>();
        screen.map_or((1, 1), |screen| {
            let frame = screen.framebuffer();
            (frame.width(), frame.height())
        })
    }

    fn camera_mut(&mut self) -> &mut Camera {
        self.game
            .world_mut()
            .get_mut::<Camera>()
            .expect("rendering inserts the camera")
    }

    /// Runs the frames owed at this speed (none when paused), or redraws
    /// the last frame's instances when none is due, then updates the HUD.
    fn redraw(&mut self, event_loop: &ActiveEventLoop) {
        let started = *self.started.get_or_insert_with(Instant::now);
        let due = if self.paused {
            0
        } else {
            self.owed += 2f32.powi(self.speed);
            let due = self.owed.floor();
            self.owed -= due;
            due as u64
        };
        for _ in 0..due {
            let time = match self.game.frame() {
                Ok(time) => time,
                Err(error) => return self.fail(event_loop, AppError::Game(error)),
            };
            self.last_frame = time;
            self.summary.frames += 1;
            self.summary.update += time;
            self.game.node_times(&mut self.node_times);
            self.summary
                .nodes
                .resize(self.node_times.len(), (String::new(), Duration::ZERO));
            for (node, time) in self.summary.nodes.iter_mut().zip(&self.node_times) {
                node.1 += *time;
            }
            if let Err(error) = self.after_frame(event_loop) {
                return self.fail(event_loop, error);
            }
        }
        if due == 0 {
            let world = self.game.world_mut();
            let camera = *world.get::<Camera>().expect("rendering inserts the camera");
            let hud = world.get::<Hud>().cloned().unwrap_or_default();
            if let Some(screen) = world.get_non_send_mut::<Screen>() {
                screen.redraw(&camera, &hud);
            }
        }
        if self.paused && !self.pause_presented {
            // The HUD already said PAUSED (the key updated it), so this
            // picture is the one the screen keeps until the game resumes.
            self.pause_presented = true;
            println!("paused: frame {}", self.summary.frames);
        }
        self.summary.redraws += 1;
        self.summary.wall = started.elapsed();
        self.update_hud();
    }

    /// After each game frame: the presenting error, the progress line, the
    /// screenshot, the end of a `--frames` run.
    fn after_frame(&mut self, event_loop: &ActiveEventLoop) -> Result<(), AppError> {
        let frames = self.summary.frames;
        let screen = self.game.world().get_non_send::<Screen>();
        if let Some(error) = screen.and_then(Screen::last_error) {
            eprintln!("sluice-game-window: presenting: {error}");
        }
        if frames == 1 || frames.is_multiple_of(120) {
            println!(
                "frame {frames:>6}: {:>8.3} ms (mean {:.3} ms)",
                self.last_frame.as_secs_f64() * 1e3,
                self.summary.mean_frame().as_secs_f64() * 1e3
            );
        }
        if frames == self.options.screenshot_at
            && let Some(path) = &self.options.screenshot
            && let Some(screen) = screen
        {
            write_png(screen.framebuffer(), path)
                .map_err(|error| AppError::Screenshot(path.clone(), error))?;
            println!("screenshot: {}", path.display());
        }
        if self.options.frames.is_some_and(|limit| frames >= limit) {
            event_loop.exit();
        }
        Ok(())
    }

    fn update_hud(&mut self) {
        let world = self.game.world();
        let alive = world
            .get::<Census>()
            .map_or(0, |census| census.alive.iter().sum());
        let speed = match self.speed {
            -2 => "1/4".to_owned(),
            -1 => "1/2".to_owned(),
            n => format!("{}", 1 << n),
        };
        let status = format!(
            "frame {}  x{speed}{}  {alive} units  {:.2} ms",
            self.summary.frames,
            if self.paused { "  PAUSED" } else { "" },
            self.last_frame.as_secs_f64() * 1e3,
        );
        let selected = world.get::<Selection>().and_then(|selection| selection.0);
        let panel = selected.map(|entity| describe_unit(world, entity));
        let hud = self
            .game
            .world_mut()
            .get_mut::<Hud>()
            .expect("rendering inserts the HUD");
        hud.status = status;
        hud.panel = panel.unwrap_or_default();
    }

    fn select_at(&mut self, pixel: Vec2) {
        let size = self.size();
        let world = self.game.world_mut();
        let camera = *world.get::<Camera>().expect("rendering inserts the camera");
        let picked = pick_unit(world, &camera, pixel, size, PICK_REACH);
        *world.get_mut::<Selection>().expect("rendering inserts it") = Selection(picked);
        match picked {
            Some(entity) => {
                let lines = describe_unit(world, entity);
                println!("selected: {}", lines.join(" | "));
                if let Some(window) = &self.window {
                    window.set_title(&format!("sluice: {}", lines.join("  ")));
                }
            }
            None => {
                println!("selected: nothing");
                if let Some(window) = &self.window {
                    window.set_title("sluice");
                }
            }
        }
        self.update_hud();
    }

    fn key(&mut self, key: &Key, event_loop: &ActiveEventLoop) {
        let size = self.size();
        let pan = |app: &mut Self, x: f32, y: f32| {
            app.camera_mut().pan_pixels(Vec2::new(x, y), size.0, size.1);
        };
        match key {
            Key::Named(NamedKey::Space) => {
                self.paused = !self.paused;
                self.pause_presented = false;
                self.update_hud();
            }
            Key::Named(NamedKey::Escape) => event_loop.exit(),
            Key::Named(NamedKey::ArrowLeft) => pan(self, ARROW_STEP, 0.0),
            Key::Named(NamedKey::ArrowRight) => pan(self, -ARROW_STEP, 0.0),
            Key::Named(NamedKey::ArrowUp) => pan(self, 0.0, ARROW_STEP),
            Key::Named(NamedKey::ArrowDown) => pan(self, 0.0, -ARROW_STEP),
            Key::Named(NamedKey::Home) => *self.camera_mut() = Camera::default(),
            Key::Character(text) => match text.as_str() {
                "+" | "=" => self.speed = (self.speed + 1).min(*SPEEDS.end()),
                "-" | "_" => self.speed = (self.speed - 1).max(*SPEEDS.start()),
                "r" | "R" => *self.camera_mut() = Camera::default(),
                _ => {}
            },
            _ => {}
        }
        self.update_hud();
    }
}

impl ApplicationHandler for App {
    fn resumed(&mut self, event_loop: &ActiveEventLoop) {
        if self.window.is_some() {
            return;
        }
        let attributes = Window::default_attributes()
            .with_title("sluice")
            .with_inner_size(PhysicalSize::new(self.options.width, self.options.height));
        let window = match event_loop.create_window(attributes) {
            Ok(window) => Rc::new(window),
            Err(error) => return self.fail(event_loop, AppError::Window(error)),
        };
        let screen = self
            .game
            .world_mut()
            .get_non_send_mut::<Screen>()
            .expect("rendering inserts the screen on this thread");
        if let Err(error) = screen.attach(Rc::clone(&window)) {
            return self.fail(event_loop, AppError::Screen(error));
        }
        window.request_redraw();
        self.window = Some(window);
    }

    fn window_event(&mut self, event_loop: &ActiveEventLoop, _: WindowId, event: WindowEvent) {
        match event {
            WindowEvent::CloseRequested => event_loop.exit(),
            WindowEvent::RedrawRequested => self.redraw(event_loop),
            WindowEvent::Resized(size) => {
                if let Some(screen) = self.game.world_mut().get_non_send_mut::<Screen>() {
                    screen.resize(size.width, size.height);
                }
            }
            // A synthetic press is winit replaying a key already down when
            // the window gained focus: the real press follows (or came
            // before the focus), so acting on both would toggle twice.
            WindowEvent::KeyboardInput {
                event,
                is_synthetic: false,
                ..
            } if event.state == ElementState::Pressed => {
                self.key(&event.logical_key, event_loop);
            }
            WindowEvent::CursorMoved { position, .. } => {
                let cursor = Vec2::new(position.x as f32, position.y as f32);
                if let Some(pressed) = self.pressed_at {
                    if !self.dragging && (cursor - pressed).length() >= DRAG_THRESHOLD {
                        self.dragging = true;
                    }
                    if self.dragging {
                        let size = self.size();
                        let delta = cursor - self.cursor;
                        self.camera_mut().pan_pixels(delta, size.0, size.1);
                    }
                }
                self.cursor = cursor;
            }
            WindowEvent::MouseInput { state, button, .. } => match state {
                ElementState::Pressed => {
                    self.pressed_at = Some(self.cursor);
                    self.dragging = false;
                }
                ElementState::Released => {
                    if !self.dragging && button == MouseButton::Left {
                        self.select_at(self.cursor);
                    }
                    self.pressed_at = None;
                    self.dragging = false;
                }
            },
            WindowEvent::MouseWheel { delta, .. } => {
                let steps = match delta {
                    MouseScrollDelta::LineDelta(_, y) => y,
                    MouseScrollDelta::PixelDelta(pixels) => pixels.y as f32 / 40.0,
                };
                let size = self.size();
                let cursor = self.cursor;
                self.camera_mut()
                    .zoom_at(1.15f32.powf(steps), cursor, size.0, size.1);
            }
            _ => {}
        }
    }

    fn about_to_wait(&mut self, _: &ActiveEventLoop) {
        if let Some(window) = &self.window {
            window.request_redraw();
        }
    }
}

//! The game in a window: `cargo run --release -p sluice-game-window`.
//!
//! The same battle as the headless `sluice-game` (that crate's binary never
//! links winit), drawn every frame into a CPU framebuffer with
//! [winit](https://docs.rs/winit) and [softbuffer](https://docs.rs/softbuffer),
//! so it runs on a machine without a GPU.
//!
//! Rendering is written as reference 003 draws its render graph
//! ([`render`]): recorder systems append draw [`Instance`](draw::Instance)s
//! in parallel through `Append<Instance>`, and the two-point node `render`
//! commits on the main thread: pinned, exempt from the spike watch (it
//! waits on the display), its commit gates the instance buffer, drains it,
//! rasterizes and presents. The window and its surface are the non-`Send`
//! service [`Screen`](render::Screen).
//!
//! Keys and mouse ([`app`]): Space pauses, `+`/`-` change the speed, the
//! arrow keys or a drag pan, the wheel zooms, a click selects a unit and
//! shows its components (on screen, in the title and on stdout), Escape
//! quits.

pub mod app;
pub mod draw;
pub mod hud;
pub mod render;

use std::path::{Path, PathBuf};

use sluice::{Entity, World};
use sluice_game::math::Vec2;
use sluice_game::units::{Health, Pos, Slot, Team, Vel, Weapon};
use sluice_game::{Config, Game, GameError};

use crate::draw::{Camera, Framebuffer};

/// The command line of `sluice-game-window`.
#[derive(Debug, Clone, PartialEq, Eq, clap::Parser)]
#[command(
    name = "sluice-game-window",
    version,
    about = "The sluice battle in a window (winit + softbuffer, a CPU framebuffer).",
    long_about = "The sluice battle in a window (winit + softbuffer, a CPU framebuffer).\n\n\
        Keys: Space pause, +/- speed, arrows pan, Escape quit. Mouse: drag to pan, \
        wheel to zoom, click a unit to show its components."
)]
pub struct Options {
    /// Units at the start, half per team (at most 5,000,000).
    #[arg(long, default_value_t = 20_000, value_parser = clap::value_parser!(u32).range(0..=5_000_000))]
    pub entities: u32,
    /// Threads of the world's pool, the main thread included (default: all cores).
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..))]
    pub threads: Option<u16>,
    /// The window's width in pixels (at most 8,192).
    #[arg(long, default_value_t = 1280, value_parser = clap::value_parser!(u32).range(1..=8_192))]
    pub width: u32,
    /// The window's height in pixels (at most 8,192).
    #[arg(long, default_value_t = 720, value_parser = clap::value_parser!(u32).range(1..=8_192))]
    pub height: u32,
    /// Run this many frames with no input, print the mean frame time and exit.
    #[arg(long)]
    pub frames: Option<u64>,
    /// Write the framebuffer as a PNG to FILE after frame `--screenshot-at`.
    #[arg(long, value_name = "FILE")]
    pub screenshot: Option<PathBuf>,
    /// The frame `--screenshot` is taken after.
    #[arg(long, default_value_t = 60, value_name = "N")]
    pub screenshot_at: u64,
}

impl Options {
    /// The game's settings: a battle with no end (the window decides when
    /// to stop), per-node timing on as in the headless game.
    pub fn config(&self) -> Config {
        let cores = std::thread::available_parallelism().map_or(1, usize::from);
        Config {
            threads: self.threads.map_or(cores, usize::from),
            frames: 0,
            entities: self.entities as usize,
            timing: true,
        }
    }
}

/// Builds the game of `options` with rendering added
/// ([`render::add_rendering`]), offscreen until a window is attached.
///
/// # Errors
/// When the game's pool does not start.
pub fn build_game(options: &Options) -> Result<Game, GameError> {
    let mut game = Game::new(&options.config())?;
    render::add_rendering(game.world_mut(), options.width, options.height);
    Ok(game)
}

/// The unit (an entity with a [`Team`]) nearest to pixel `pixel`, within
/// `reach` pixels, in a `width` x `height` view through `camera`.
pub fn pick_unit(
    world: &mut World,
    camera: &Camera,
    pixel: Vec2,
    (width, height): (u32, u32),
    reach: f32,
) -> Option<Entity> {
    let at = camera.to_world(pixel, width, height);
    let reach = reach / camera.scale(width, height);
    let mut best: Option<(f32, Entity)> = None;
    world
        .query::<(Entity, &Pos, &Team)>()
        .for_each(|(entity, pos, _)| {
            let distance = (pos.0 - at).length_squared();
            if distance <= reach * reach && best.is_none_or(|(nearest, _)| distance < nearest) {
                best = Some((distance, entity));
            }
        });
    best.map(|(_, entity)| entity)
}

/// The components of unit `entity`, a line each (what the panel shows);
/// one line saying it is gone when it no longer lives.
pub fn describe_unit(world: &World, entity: Entity) -> Vec<String> {
    let Some(unit) = world.entity(entity) else {
        return vec![format!("{entity:?}: gone")];
    };
    let mut lines = vec![format!("{entity:?}")];
    if let Some(team) = unit.get::<Team>() {
        let name = if team.0 == 0 { "red" } else { "blue" };
        lines.push(format!("Team({}) {name}", team.0));
    }
    if let Some(pos) = unit.get::<Pos>() {
        lines.push(format!("Pos({:.1}, {:.1})", pos.0.x, pos.0.y));
    }
    if let Some(vel) = unit.get::<Vel>() {
        lines.push(format!("Vel({:.1}, {:.1})", vel.0.x, vel.0.y));
    }
    if let Some(health) = unit.get::<Health>() {
        lines.push(format!("Health({})", health.0));
    }
    if let Some(weapon) = unit.get::<Weapon>() {
        lines.push(format!("Weapon cooldown {}", weapon.cooldown));
        match weapon.target {
            Some(target) => lines.push(format!("  target {target:?}")),
            None => lines.push("  no target".to_owned()),
        }
    }
    if let Some(slot) = unit.get::<Slot>() {
        lines.push(format!("Slot({:.1}, {:.1})", slot.0.x, slot.0.y));
    }
    lines
}

/// Writes `frame` to `path` as an 8-bit RGB PNG.
///
/// # Errors
/// When the file cannot be created or written.
pub fn write_png(frame: &Framebuffer, path: &Path) -> std::io::Result<()> {
    let file = std::io::BufWriter::new(std::fs::File::create(path)?);
    let mut encoder = png::Encoder::new(file, frame.width(), frame.height());
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_depth(png::BitDepth::Eight);
    let mut writer = encoder.write_header().map_err(std::io::Error::other)?;
    writer
        .write_image_data(&frame.to_rgb())
        .map_err(std::io::Error::other)?;
    writer.finish().map_err(std::io::Error::other)
}

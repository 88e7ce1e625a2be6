//! Rendering as reference 003 draws its render graph: recorder systems
//! append draw [`Instance`]s in parallel through `Append<Instance>`, and a
//! two-point node, `render`, pinned to the main thread and exempt from the
//! spike watch, commits: its commit gates the `AppendBuffer<Instance>`
//! (so every recorder finishes first, wherever it was registered), drains
//! it, rasterizes into the [`Screen`]'s framebuffer and presents it to the
//! window. The [`Screen`] holds the window and its surface, neither of
//! them `Send`: a non-`Send` service only pinned nodes reach.

use std::num::NonZeroU32;
use std::rc::Rc;

use sluice::plugin::{Plugin, Requires};
use sluice::{Append, AppendBuffer, Entity, NodeBuilder, NonSendMut, Phase, Query, World};
use sluice_game::navigation::{NAV_CELL, NAV_DIM, Terrain};
use sluice_game::particles::Particles;
use sluice_game::units::{ARENA, Captain, Pos, Team};
use winit::window::Window;

use crate::draw::{
    CAPTAIN_COLOURS, Camera, Framebuffer, GROUND, Instance, SELECTED, SPARK, TEAM_COLOURS, WALL,
};
use crate::hud::{Hud, draw_hud};

/// A unit's radius in world units.
pub const UNIT_RADIUS: f32 = 2.5;
/// A spark's half side in world units.
pub const SPARK_HALF: f32 = 1.5;
/// A captain's half side in world units.
pub const CAPTAIN_HALF: f32 = 6.0;

/// The unit the player clicked, if any: a service the app sets and the
/// `render` node's body reads to ring it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Selection(pub Option<Entity>);

/// The window and the softbuffer surface that presents into it.
struct WindowTarget {
    window: Rc<Window>,
    surface: softbuffer::Surface<Rc<Window>, Rc<Window>>,
}

/// Why presenting failed.
#[derive(Debug)]
#[non_exhaustive]
pub enum ScreenError {
    /// softbuffer could not reach the display or the window (the message
    /// says which step: context, surface, resize, buffer or present).
    Surface(&'static str, softbuffer::SoftBufferError),
}

impl std::fmt::Display for ScreenError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ScreenError::Surface(step, error) => write!(f, "softbuffer {step}: {error}"),
        }
    }
}

impl std::error::Error for ScreenError {}

/// The screen: the framebuffer frames are rasterized into, the last
/// frame's instances (kept so that a paused game can still pan and zoom),
/// and the window it presents to (none: offscreen, as in tests). Not
/// `Send` once it holds a window: a non-`Send` service of the main thread.
pub struct Screen {
    frame: Framebuffer,
    kept: Vec<Instance>,
    target: Option<WindowTarget>,
    presented: u64,
    last_error: Option<String>,
}

impl std::fmt::Debug for Screen {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Screen")
            .field("width", &self.frame.width())
            .field("height", &self.frame.height())
            .field("kept", &self.kept.len())
            .field("windowed", &self.target.is_some())
            .field("presented", &self.presented)
            .finish()
    }
}

impl Screen {
    /// An offscreen screen of `width` x `height`: frames are rasterized
    /// but shown nowhere.
    pub fn offscreen(width: u32, height: u32) -> Self {
        Self {
            frame: Framebuffer::new(width, height),
            kept: Vec::new(),
            target: None,
            presented: 0,
            last_error: None,
        }
    }

    /// Presents into `window` from now on, at the window's size.
    ///
    /// # Errors
    /// When softbuffer cannot open the display or a surface on the window.
    pub fn attach(&mut self, window: Rc<Window>) -> Result<(), ScreenError> {
        let context = softbuffer::Context::new(Rc::clone(&window))
            .map_err(|error| ScreenError::Surface("context", error))?;
        let surface = softbuffer::Surface::new(&context, Rc::clone(&window))
            .map_err(|error| ScreenError::Surface("surface", error))?;
        let size = window.inner_size();
        self.frame.resize(size.width, size.height);
        self.target = Some(WindowTarget { window, surface });
        Ok(())
    }

    /// The window presented to, if any.
    pub fn window(&self) -> Option<&Window> {
        self.target.as_ref().map(|target| &*target.window)
    }

    /// Resizes the framebuffer (the window was resized).
    pub fn resize(&mut self, width: u32, height: u32) {
        self.frame.resize(width, height);
    }

    /// The last frame rasterized.
    pub fn framebuffer(&self) -> &Framebuffer {
        &self.frame
    }

    /// The instances of the last frame committed, in drawing order.
    pub fn instances(&self) -> &[Instance] {
        &self.kept
    }

    /// Frames presented (rasterized, and shown when there is a window).
    pub fn presented(&self) -> u64 {
        self.presented
    }

    /// The last presenting error, if any (the game goes on without
    /// showing; the app reports it).
    pub fn last_error(&self) -> Option<&str> {
        self.last_error.as_deref()
    }

    /// Rasterizes the kept instances through `camera`, draws `hud` over
    /// them and presents.
    pub fn redraw(&mut self, camera: &Camera, hud: &Hud) {
        self.frame.draw(&self.kept, camera);
        draw_hud(&mut self.frame, hud);
        if let Err(error) = self.present() {
            self.last_error = Some(error.to_string());
        }
        self.presented += 1;
    }

    fn present(&mut self) -> Result<(), ScreenError> {
        let Some(target) = &mut self.target else {
            return Ok(());
        };
        let (width, height) = (self.frame.width(), self.frame.height());
        let (Some(w), Some(h)) = (NonZeroU32::new(width), NonZeroU32::new(height)) else {
            return Ok(());
        };
        target
            .surface
            .resize(w, h)
            .map_err(|error| ScreenError::Surface("resize", error))?;
        let mut buffer = target
            .surface
            .buffer_mut()
            .map_err(|error| ScreenError::Surface("buffer", error))?;
        buffer.copy_from_slice(self.frame.pixels());
        buffer
            .present()
            .map_err(|error| ScreenError::Surface("present", error))
    }
}

/// Records the terrain: the arena's ground, then its walls.
pub fn record_terrain(terrain: &Terrain, instances: Append<'_, Instance>) {
    let half = ARENA * 0.5;
    instances.push(Instance::square(
        sluice_game::math::Vec2::new(half, half),
        half,
        GROUND,
    ));
    for y in 0..NAV_DIM {
        for x in 0..NAV_DIM {
            if terrain.is_wall(x, y) {
                let centre = sluice_game::math::Vec2::new(
                    (x as f32 + 0.5) * NAV_CELL,
                    (y as f32 + 0.5) * NAV_CELL,
                );
                instances.push(Instance::square(centre, NAV_CELL * 0.5, WALL));
            }
        }
    }
}

/// Records every unit, a disc in its team's colour, in parallel slices of
/// the pool.
pub fn record_units(mut units: Query<'_, (&Pos, &Team)>, instances: Append<'_, Instance>) {
    units.par_for_each(|(pos, team)| {
        let colour = TEAM_COLOURS[usize::from(team.0 & 1)];
        instances.push(Instance::disc(pos.0, UNIT_RADIUS, colour));
    });
}

/// Records the captains, a lighter square each.
pub fn record_captains(mut captains: Query<'_, (&Pos, &Captain)>, instances: Append<'_, Instance>) {
    captains.for_each(|(pos, captain)| {
        let colour = CAPTAIN_COLOURS[usize::from(captain.team & 1)];
        instances.push(Instance::square(pos.0, CAPTAIN_HALF, colour));
    });
}

/// Records the sparks.
pub fn record_sparks(particles: &Particles, instances: Append<'_, Instance>) {
    instances.extend(
        particles
            .sparks()
            .iter()
            .map(|spark| Instance::square(spark.at(), SPARK_HALF, SPARK)),
    );
}

/// The `render` node's body: rings the selected unit, on top of the rest
/// (its body is registered last, so it appends last).
pub fn record_selection(
    selection: &Selection,
    units: Query<'_, &Pos>,
    instances: Append<'_, Instance>,
) {
    if let Some(pos) = selection.0.and_then(|entity| units.get(entity).ok()) {
        instances.push(Instance::ring(pos.0, UNIT_RADIUS * 4.0, SELECTED));
    }
}

/// The `render` node's commit, on the main thread: drains every recorder's
/// instances, rasterizes them and presents.
pub fn commit_frame(
    instances: &mut AppendBuffer<Instance>,
    camera: &Camera,
    hud: &Hud,
    mut screen: NonSendMut<'_, Screen>,
) {
    screen.kept.clear();
    screen.kept.extend(instances.drain());
    screen.redraw(camera, hud);
}

/// The node names the plugin registers, in the order it registers them.
pub const RECORDERS: [&str; 4] = [
    "record_terrain",
    "record_units",
    "record_captains",
    "record_sparks",
];

/// Draws the game: the recorders, the pinned and spike-exempt `render`
/// node and its commit (`render@commit`), and the services they use
/// ([`Camera`], [`Hud`], [`Selection`], an offscreen [`Screen`] until the
/// app attaches a window).
#[derive(Debug, Clone, Copy)]
pub struct RenderPlugin {
    /// The framebuffer's width in pixels.
    pub width: u32,
    /// The framebuffer's height in pixels.
    pub height: u32,
}

impl Default for RenderPlugin {
    fn default() -> Self {
        Self {
            width: 1280,
            height: 720,
        }
    }
}

impl Plugin for RenderPlugin {
    fn requires(&self) -> Requires {
        // The stages its nodes name.
        Requires::new().plugin::<sluice_game::FramePlugin>()
    }

    fn build(&self, world: &mut World) {
        add_rendering(world, self.width, self.height);
    }
}

/// What [`RenderPlugin`] does, for a world whose plugins are already
/// finished (as a [`sluice_game::Game`]'s are).
pub fn add_rendering(world: &mut World, width: u32, height: u32) {
    world.insert(Camera::default());
    world.insert(Hud::default());
    world.insert(Selection::default());
    // Enough for 40,000 units and their sparks without growing in the
    // first frames.
    world.insert(AppendBuffer::<Instance>::with_capacity(1 << 16));
    world.insert_non_send(Screen::offscreen(width, height));
    // The game declares stages, so every node names one: all of these
    // draw what the frame's simulation left, in the last stage.
    let node = |name: &'static str| {
        NodeBuilder::new(name)
            .phase(Phase::PostUpdate)
            .in_stage("Present")
    };
    world.add_system(node(RECORDERS[0]).system(record_terrain));
    world.add_system(node(RECORDERS[1]).system(record_units));
    world.add_system(node(RECORDERS[2]).system(record_captains));
    // After the batch processor that moves the sparks (which the lane
    // rule would also give by registration order; said, so it is meant).
    world.add_system(node(RECORDERS[3]).after("particles").system(record_sparks));
    world.add_system(
        node("render")
            .pinned()
            .spike_exempt()
            .system(record_selection)
            .commit(commit_frame),
    );
}

//! What is drawn and how: draw [`Instance`]s in world units, the
//! [`Camera`] that maps them to pixels, and the [`Framebuffer`] they are
//! rasterized into (filled discs, squares and rings into `0x00RRGGBB`
//! pixels, the format softbuffer presents).

use std::sync::Mutex;

use sluice_game::math::Vec2;
use sluice_game::units::ARENA;

/// Outside the arena.
pub const BACKGROUND: u32 = 0x0012_1418;
/// Open ground: the terrain's colour.
pub const GROUND: u32 = 0x0030_4A36;
/// A wall of the terrain.
pub const WALL: u32 = 0x0078_7C80;
/// Team 0 (red, the player's).
pub const RED: u32 = 0x00E0_3C32;
/// Team 1 (blue, the network peer's).
pub const BLUE: u32 = 0x0034_78F0;
/// A team's captain: a lighter square of its colour.
pub const CAPTAIN_COLOURS: [u32; 2] = [0x00FF_A090, 0x00A0_D0FF];
/// A spark.
pub const SPARK: u32 = 0x00FF_D040;
/// The ring around the selected unit.
pub const SELECTED: u32 = 0x00FF_FFFF;

/// Each team's colour, by `Team.0`.
pub const TEAM_COLOURS: [u32; 2] = [RED, BLUE];

/// The shape of an [`Instance`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// A filled disc of radius `size`.
    Disc,
    /// A filled square of half side `size`.
    Square,
    /// A one-pixel circle of radius `size`.
    Ring,
}

/// One thing to draw, in world units: what recorders append and the commit
/// rasterizes, in the order the buffer drains them (later on top).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Instance {
    /// Its shape.
    pub shape: Shape,
    /// Its centre.
    pub at: Vec2,
    /// Radius (disc, ring) or half side (square), in world units.
    pub size: f32,
    /// `0x00RRGGBB`.
    pub colour: u32,
}

impl Instance {
    /// A filled disc.
    pub fn disc(at: Vec2, radius: f32, colour: u32) -> Self {
        Self {
            shape: Shape::Disc,
            at,
            size: radius,
            colour,
        }
    }

    /// A filled square of half side `half`.
    pub fn square(at: Vec2, half: f32, colour: u32) -> Self {
        Self {
            shape: Shape::Square,
            at,
            size: half,
            colour,
        }
    }

    /// A circle outline.
    pub fn ring(at: Vec2, radius: f32, colour: u32) -> Self {
        Self {
            shape: Shape::Ring,
            at,
            size: radius,
            colour,
        }
    }
}

/// Where the view looks: a service the player moves (pan, zoom) and the
/// commit reads.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Camera {
    /// The world point at the middle of the window.
    pub centre: Vec2,
    /// 1 shows the whole arena; larger is closer.
    pub zoom: f32,
}

impl Default for Camera {
    fn default() -> Self {
        Self {
            centre: Vec2::new(ARENA * 0.5, ARENA * 0.5),
            zoom: 1.0,
        }
    }
}

impl Camera {
    /// The closest zoom allowed.
    pub const MAX_ZOOM: f32 = 64.0;
    /// The farthest zoom allowed.
    pub const MIN_ZOOM: f32 = 0.25;

    /// Pixels per world unit in a `width` x `height` view.
    pub fn scale(&self, width: u32, height: u32) -> f32 {
        width.min(height).max(1) as f32 / ARENA * 0.96 * self.zoom
    }

    /// The pixel `at` falls on, as floats (may lie outside the view).
    pub fn to_screen(&self, at: Vec2, width: u32, height: u32) -> Vec2 {
        let scale = self.scale(width, height);
        Vec2::new(
            (at.x - self.centre.x) * scale + width as f32 * 0.5,
            (at.y - self.centre.y) * scale + height as f32 * 0.5,
        )
    }

    /// The world point under pixel `pixel`.
    pub fn to_world(&self, pixel: Vec2, width: u32, height: u32) -> Vec2 {
        let scale = self.scale(width, height);
        Vec2::new(
            (pixel.x - width as f32 * 0.5) / scale + self.centre.x,
            (pixel.y - height as f32 * 0.5) / scale + self.centre.y,
        )
    }

    /// Moves the view by `pixels` (the world follows the mouse: a drag to
    /// the right moves the centre left).
    pub fn pan_pixels(&mut self, pixels: Vec2, width: u32, height: u32) {
        let scale = self.scale(width, height);
        self.centre = self.centre - pixels * (1.0 / scale);
    }

    /// Zooms by `factor`, keeping the world point under `pixel` in place.
    pub fn zoom_at(&mut self, factor: f32, pixel: Vec2, width: u32, height: u32) {
        let anchor = self.to_world(pixel, width, height);
        self.zoom = (self.zoom * factor).clamp(Self::MIN_ZOOM, Self::MAX_ZOOM);
        let moved = self.to_world(pixel, width, height);
        self.centre += anchor - moved;
    }
}

/// A CPU framebuffer: `width * height` pixels, `0x00RRGGBB`, row by row
/// from the top left.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Framebuffer {
    width: u32,
    height: u32,
    pixels: Vec<u32>,
}

impl Framebuffer {
    /// A framebuffer of `width` x `height` (each at least 1), filled with
    /// [`BACKGROUND`].
    pub fn new(width: u32, height: u32) -> Self {
        let (width, height) = (width.max(1), height.max(1));
        Self {
            width,
            height,
            pixels: vec![BACKGROUND; width as usize * height as usize],
        }
    }

    /// A framebuffer holding `pixels`, row by row; `None` unless there are
    /// exactly `width * height` of them (each side at least 1).
    pub fn from_pixels(width: u32, height: u32, pixels: Vec<u32>) -> Option<Self> {
        let expected = usize::try_from(u64::from(width) * u64::from(height)).ok()?;
        (width > 0 && height > 0 && pixels.len() == expected).then_some(Self {
            width,
            height,
            pixels,
        })
    }

    /// Its width in pixels.
    pub fn width(&self) -> u32 {
        self.width
    }

    /// Its height in pixels.
    pub fn height(&self) -> u32 {
        self.height
    }

    /// Every pixel, row by row.
    pub fn pixels(&self) -> &[u32] {
        &self.pixels
    }

    /// The pixel at `(x, y)`, if inside.
    pub fn pixel(&self, x: u32, y: u32) -> Option<u32> {
        (x < self.width && y < self.height)
            .then(|| self.pixels[y as usize * self.width as usize + x as usize])
    }

    /// Resizes (each side at least 1); the contents are cleared.
    pub fn resize(&mut self, width: u32, height: u32) {
        let (width, height) = (width.max(1), height.max(1));
        self.width = width;
        self.height = height;
        self.pixels.clear();
        self.pixels
            .resize(width as usize * height as usize, BACKGROUND);
    }

    /// Fills every pixel with `colour`.
    pub fn clear(&mut self, colour: u32) {
        self.pixels.fill(colour);
    }

    /// Fills the pixels `x0..x1` x `y0..y1`, clipped to the framebuffer.
    pub fn fill_rect(&mut self, x0: i64, y0: i64, x1: i64, y1: i64, colour: u32) {
        let (w, h) = (i64::from(self.width), i64::from(self.height));
        let (x0, x1) = (x0.clamp(0, w) as usize, x1.clamp(0, w) as usize);
        let (y0, y1) = (y0.clamp(0, h) as usize, y1.clamp(0, h) as usize);
        if x0 >= x1 {
            return;
        }
        for y in y0..y1 {
            let row = y * self.width as usize;
            self.pixels[row + x0..row + x1].fill(colour);
        }
    }

    /// Clears to [`BACKGROUND`] and rasterizes `instances` in order (later
    /// on top) through `camera`, in horizontal bands fanned out over the
    /// pool of the node calling it (`sluice::exec::for_each_slice`; on one
    /// thread outside a pool). Every band draws every instance clipped to
    /// its rows, so the picture is the same for any number of threads.
    pub fn draw(&mut self, instances: &[Instance], camera: &Camera) {
        let (width, height) = (self.width, self.height);
        let rows_per_band = (height as usize).div_ceil(bands());
        let bands: Vec<Mutex<Band<'_>>> = self
            .pixels
            .chunks_mut(rows_per_band * width as usize)
            .enumerate()
            .map(|(index, pixels)| {
                Mutex::new(Band {
                    top: (index * rows_per_band) as i64,
                    width: i64::from(width),
                    pixels,
                })
            })
            .collect();
        let view = View::new(camera, width, height);
        sluice::exec::for_each_slice(bands.len(), &|slices| {
            for index in slices {
                // Each band is locked by the one slice that draws it.
                let mut band = bands[index]
                    .lock()
                    .unwrap_or_else(|poison| poison.into_inner());
                band.pixels.fill(BACKGROUND);
                band.draw(instances, &view);
            }
        });
    }

    /// The pixels as 8-bit RGB triples, row by row (what a PNG holds).
    pub fn to_rgb(&self) -> Vec<u8> {
        self.pixels
            .iter()
            .flat_map(|&pixel| {
                let [_, r, g, b] = pixel.to_be_bytes();
                [r, g, b]
            })
            .collect()
    }
}

/// Horizontal bands a frame is rasterized in: two per core, so that a busy
/// band does not hold the others up, and no more, since every band looks
/// at every instance.
fn bands() -> usize {
    static BANDS: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *BANDS.get_or_init(|| {
        let cores = std::thread::available_parallelism().map_or(1, usize::from);
        (cores * 2).clamp(2, 32)
    })
}

/// The camera's mapping, computed once a frame.
#[derive(Clone, Copy)]
struct View {
    scale: f32,
    offset: Vec2,
}

impl View {
    fn new(camera: &Camera, width: u32, height: u32) -> Self {
        let scale = camera.scale(width, height);
        Self {
            scale,
            offset: camera.to_screen(Vec2::ZERO, width, height),
        }
    }

    fn to_screen(self, at: Vec2) -> Vec2 {
        Vec2::new(
            at.x * self.scale + self.offset.x,
            at.y * self.scale + self.offset.y,
        )
    }
}

/// `x` rounded down, without a call into libm (`f32::floor` is one on a
/// target without SSE4.1), saturating far outside `i64`.
fn floor(x: f32) -> i64 {
    let truncated = x as i64;
    if (truncated as f32) > x {
        truncated - 1
    } else {
        truncated
    }
}

/// Rows `top..top + pixels.len() / width` of a framebuffer.
struct Band<'a> {
    top: i64,
    width: i64,
    pixels: &'a mut [u32],
}

/// The half widths of a disc's rows, for one pixel radius (every unit has
/// the same, so a frame computes it once).
struct DiscSpans {
    radius: f32,
    reach: i64,
    halves: Vec<i64>,
}

impl DiscSpans {
    fn for_radius(&mut self, radius: f32) -> &Self {
        if radius != self.radius {
            self.radius = radius;
            self.reach = radius.ceil() as i64;
            let squared = radius * radius;
            self.halves.clear();
            self.halves.extend((-self.reach..=self.reach).map(|dy| {
                let rest = squared - (dy * dy) as f32;
                if rest < 0.0 { -1 } else { rest.sqrt() as i64 }
            }));
        }
        self
    }
}

impl Band<'_> {
    fn bottom(&self) -> i64 {
        self.top + self.pixels.len() as i64 / self.width
    }

    /// Fills `x0..x1` x `y0..y1` (frame coordinates), clipped to the band.
    fn fill(&mut self, x0: i64, y0: i64, x1: i64, y1: i64, colour: u32) {
        let (x0, x1) = (x0.clamp(0, self.width), x1.clamp(0, self.width));
        let (y0, y1) = (y0.max(self.top), y1.min(self.bottom()));
        if x0 >= x1 || y0 >= y1 {
            return;
        }
        for y in y0..y1 {
            let row = ((y - self.top) * self.width) as usize;
            self.pixels[row + x0 as usize..row + x1 as usize].fill(colour);
        }
    }

    fn plot(&mut self, x: i64, y: i64, colour: u32) {
        if x >= 0 && x < self.width && y >= self.top && y < self.bottom() {
            self.pixels[((y - self.top) * self.width + x) as usize] = colour;
        }
    }

    fn draw(&mut self, instances: &[Instance], view: &View) {
        let (top, bottom) = (self.top as f32, self.bottom() as f32);
        let mut spans = DiscSpans {
            radius: -1.0,
            reach: 0,
            halves: Vec::new(),
        };
        for instance in instances {
            // Whatever lies wholly above or below the band is skipped.
            let y = instance.at.y * view.scale + view.offset.y;
            let size = instance.size * view.scale;
            if y + size + 1.0 < top || y - size - 1.0 > bottom {
                continue;
            }
            let centre = view.to_screen(instance.at);
            match instance.shape {
                Shape::Square => {
                    // At least one pixel, so that far-away things still show.
                    let half = size.max(0.5);
                    let (x0, y0) = ((centre.x - half).round(), (centre.y - half).round());
                    self.fill(
                        x0 as i64,
                        y0 as i64,
                        (centre.x + half).round().max(x0 + 1.0) as i64,
                        (centre.y + half).round().max(y0 + 1.0) as i64,
                        instance.colour,
                    );
                }
                Shape::Disc => {
                    let (cx, cy) = (floor(centre.x), floor(centre.y));
                    if size < 1.0 {
                        self.plot(cx, cy, instance.colour);
                        continue;
                    }
                    let spans = spans.for_radius(size);
                    for (dy, &half) in (-spans.reach..=spans.reach).zip(&spans.halves) {
                        if half >= 0 {
                            let y = cy + dy;
                            self.fill(cx - half, y, cx + half + 1, y + 1, instance.colour);
                        }
                    }
                }
                Shape::Ring => {
                    let steps = (size * 8.0).clamp(8.0, 512.0) as u32;
                    for step in 0..steps {
                        let angle = step as f32 / steps as f32 * std::f32::consts::TAU;
                        self.plot(
                            (centre.x + size * angle.cos()).round() as i64,
                            (centre.y + size * angle.sin()).round() as i64,
                            instance.colour,
                        );
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_disc_fills_its_middle_and_not_its_corners() {
        let mut frame = Framebuffer::new(64, 64);
        let camera = Camera::default();
        let scale = camera.scale(64, 64);
        let middle = camera.to_world(Vec2::new(32.0, 32.0), 64, 64);
        frame.draw(&[Instance::disc(middle, 10.0 / scale, RED)], &camera);
        assert_eq!(frame.pixel(32, 32), Some(RED));
        assert_eq!(frame.pixel(32, 41), Some(RED));
        assert_eq!(frame.pixel(23, 23), Some(BACKGROUND)); // outside the circle
        assert_eq!(frame.pixel(0, 0), Some(BACKGROUND));
    }

    #[test]
    fn later_instances_draw_on_top_and_shapes_clip_at_the_edges() {
        let mut frame = Framebuffer::new(16, 8);
        let camera = Camera::default();
        let corner = camera.to_world(Vec2::new(0.0, 0.0), 16, 8);
        let big = 1.0e6;
        frame.draw(
            &[
                Instance::square(corner, big, GROUND),
                Instance::disc(corner, 3.0 / camera.scale(16, 8), BLUE),
                Instance::ring(corner, big, SELECTED),
            ],
            &camera,
        );
        assert_eq!(frame.pixel(0, 0), Some(BLUE));
        assert_eq!(frame.pixel(15, 7), Some(GROUND));
        assert_eq!(frame.pixel(16, 0), None);
    }

    #[test]
    fn the_camera_maps_back_and_forth_and_zooms_about_the_cursor() {
        let mut camera = Camera::default();
        let at = Vec2::new(100.0, 700.0);
        let pixel = camera.to_screen(at, 1280, 720);
        let back = camera.to_world(pixel, 1280, 720);
        assert!((back - at).length() < 1e-3);
        camera.zoom_at(2.0, pixel, 1280, 720);
        assert_eq!(camera.zoom, 2.0);
        assert!((camera.to_world(pixel, 1280, 720) - at).length() < 1e-2);
        camera.zoom_at(1e9, pixel, 1280, 720);
        assert_eq!(camera.zoom, Camera::MAX_ZOOM);
        let before = camera.centre;
        camera.pan_pixels(Vec2::new(10.0, 0.0), 1280, 720);
        assert!(camera.centre.x < before.x);
    }

    #[test]
    fn floor_rounds_down_on_both_sides_of_zero() {
        for x in [-2.5f32, -2.0, -0.1, 0.0, 0.1, 1.9, 2.0, 1.0e9] {
            assert_eq!(floor(x), x.floor() as i64, "{x}");
        }
    }

    #[test]
    fn a_framebuffer_is_never_empty_and_resizes() {
        let mut frame = Framebuffer::new(0, 0);
        assert_eq!((frame.width(), frame.height()), (1, 1));
        frame.resize(3, 2);
        assert_eq!(frame.pixels().len(), 6);
        frame.clear(RED);
        assert_eq!(frame.to_rgb()[..3], [0xE0, 0x3C, 0x32]);
    }
}

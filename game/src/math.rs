//! Small math for the game: a 2D vector and a seeded hash, so that every
//! run with the same settings computes the same numbers.

use std::ops::{Add, AddAssign, Mul, Sub};

/// A 2D vector in world units (the arena is [`ARENA`](crate::units::ARENA)
/// units on a side).
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Vec2 {
    /// Left to right.
    pub x: f32,
    /// Top to bottom.
    pub y: f32,
}

impl Vec2 {
    /// The origin.
    pub const ZERO: Vec2 = Vec2 { x: 0.0, y: 0.0 };

    /// `(x, y)`.
    pub const fn new(x: f32, y: f32) -> Self {
        Self { x, y }
    }

    /// The squared length.
    pub fn length_squared(self) -> f32 {
        self.x * self.x + self.y * self.y
    }

    /// The length.
    pub fn length(self) -> f32 {
        self.length_squared().sqrt()
    }

    /// The same direction at length 1, or zero for a (nearly) zero vector.
    pub fn normalized_or_zero(self) -> Vec2 {
        let length = self.length();
        if length > 1e-6 {
            self * (1.0 / length)
        } else {
            Vec2::ZERO
        }
    }

    /// Each coordinate clamped into `[min, max]`.
    pub fn clamp(self, min: f32, max: f32) -> Vec2 {
        Vec2::new(self.x.clamp(min, max), self.y.clamp(min, max))
    }
}

impl Add for Vec2 {
    type Output = Vec2;
    fn add(self, other: Vec2) -> Vec2 {
        Vec2::new(self.x + other.x, self.y + other.y)
    }
}

impl AddAssign for Vec2 {
    fn add_assign(&mut self, other: Vec2) {
        *self = *self + other;
    }
}

impl Sub for Vec2 {
    type Output = Vec2;
    fn sub(self, other: Vec2) -> Vec2 {
        Vec2::new(self.x - other.x, self.y - other.y)
    }
}

impl Mul<f32> for Vec2 {
    type Output = Vec2;
    fn mul(self, scale: f32) -> Vec2 {
        Vec2::new(self.x * scale, self.y * scale)
    }
}

/// SplitMix64: a well-mixed 64-bit hash of `seed`.
pub fn mix(seed: u64) -> u64 {
    let mut z = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A number in `[0, 1)` drawn from `seed`.
pub fn unit(seed: u64) -> f32 {
    (mix(seed) >> 40) as f32 / (1u64 << 24) as f32
}

/// A point in the disk of `radius` around the origin, drawn from `seed`.
pub fn in_disk(seed: u64, radius: f32) -> Vec2 {
    let angle = unit(seed) * std::f32::consts::TAU;
    let distance = unit(seed ^ 0x5EED).sqrt() * radius;
    Vec2::new(angle.cos() * distance, angle.sin() * distance)
}

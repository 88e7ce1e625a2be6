//! Scripts: the wave spawner.
//!
//! This is a plain system with a timer standing in for a durable script
//! (a long-lived routine waiting on the simulation clock): every
//! [`WaveTimer::period`] frames it spawns a wave of fresh units for both
//! teams through `Commands`, unless the battlefield is already full.

use sluice::{Commands, FrameTime, Query, system};

use crate::math::mix;
use crate::units::{Captains, Team, unit};

/// The wave spawner's state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WaveTimer {
    /// Frames between two waves.
    pub period: u64,
    /// The frame of the next wave.
    pub next: u64,
    /// Units per team per wave.
    pub size: usize,
    /// No wave while at least this many units are alive.
    pub cap: usize,
    /// Waves spawned so far.
    pub waves: u64,
}

impl WaveTimer {
    /// Waves of `size` units per team every `period` frames while fewer
    /// than `cap` units are alive.
    pub fn new(period: u64, size: usize, cap: usize) -> Self {
        Self {
            period,
            next: period,
            size,
            cap,
            waves: 0,
        }
    }
}

/// Spawns a wave when the timer runs out.
#[system(stage = "Think", group = "Scripts")]
pub fn wave_spawner(
    time: &FrameTime,
    timer: &mut WaveTimer,
    units: Query<&Team>,
    captains: &Captains,
    commands: Commands<'_>,
) {
    if time.frame < timer.next {
        return;
    }
    timer.next += timer.period;
    if units.count() >= timer.cap {
        return;
    }
    timer.waves += 1;
    for index in 0..timer.size as u64 {
        for team in 0..2u8 {
            let seed = mix((timer.waves << 32) | (index << 1) | u64::from(team));
            commands.spawn(unit(seed, team, captains));
        }
    }
}

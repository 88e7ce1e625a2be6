//! The rollback battle's input: what each player sends over the network
//! each frame ([`BattleInput`]), the service the frame reads it from
//! ([`Inputs`]) and the system that applies it ([`apply_inputs`]).

use serde::{Deserialize, Serialize};
use sluice::{FrameTime, system};

use crate::feed::{InputState, Orders};
use crate::math::{Vec2, mix};
use crate::units::{ARENA, base};

/// Players of a rollback battle: player 0 leads red (team 0), player 1
/// leads blue (team 1).
pub const PLAYERS: usize = 2;

/// How fast a full nudge moves a team's rally point, world units per
/// second.
pub const RALLY_SPEED: f32 = 60.0;

/// How fast blue's captains are pulled towards red's base while blue's
/// [`BattleInput::AGGRESSIVE`] bit is held, world units per second.
pub const CHARGE_SPEED: f32 = 40.0;

/// One player's input for one frame: the only game data ggrs sends over
/// the network. Three plain bytes (`#[repr(C)]`, no padding, every bit
/// pattern valid), so any value a peer or a replay file sends is a
/// well-defined input.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct BattleInput {
    /// The rally-point nudge along x, `-127..=127` for a full stick
    /// (`-128` counts as `-127`).
    pub nudge_x: i8,
    /// The rally-point nudge along y, as `nudge_x`.
    pub nudge_y: i8,
    /// Buttons: [`BattleInput::AGGRESSIVE`]; the other bits are ignored.
    pub buttons: u8,
}

impl BattleInput {
    /// The aggression bit: red calls an airstrike on the frame it is
    /// pressed; blue's captains charge while it is held.
    pub const AGGRESSIVE: u8 = 1;

    /// Whether the aggression bit is set.
    pub fn aggressive(self) -> bool {
        self.buttons & Self::AGGRESSIVE != 0
    }

    /// The nudge as a stick, each axis in `[-1, 1]`.
    pub fn stick(self) -> Vec2 {
        let axis = |value: i8| f32::from(value.max(-127)) / 127.0;
        Vec2::new(axis(self.nudge_x), axis(self.nudge_y))
    }

    /// A scripted player's input for `frame`, from `seed`: it holds each
    /// choice for 8 to 39 frames (so that repeating the last input, which
    /// ggrs predicts, is right most of the time and wrong now and then),
    /// and presses the aggression bit one choice in five.
    pub fn scripted(seed: u64, player: usize, frame: u64) -> Self {
        let mut start = 0;
        let mut choice = mix(seed ^ (player as u64 + 1).wrapping_mul(0x9E37_79B9));
        loop {
            let hold = 8 + choice % 32;
            if frame < start + hold {
                break;
            }
            start += hold;
            choice = mix(choice);
        }
        let axis = |bits: u64| [-127i8, -64, 0, 64, 127][(bits % 5) as usize];
        Self {
            nudge_x: axis(choice >> 8),
            nudge_y: axis(choice >> 16),
            buttons: u8::from((choice >> 24).is_multiple_of(5)),
        }
    }
}

/// The inputs of the frame being run and of the one before it (to see a
/// button's press), and how many frames the battle has run: set by the
/// session before each update, part of every snapshot.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Inputs {
    /// This frame's input, per player.
    pub current: [BattleInput; PLAYERS],
    /// The previous frame's input, per player.
    pub previous: [BattleInput; PLAYERS],
    /// Frames run so far (the frame being run, while it runs).
    pub frame: u64,
}

impl Inputs {
    /// Moves to the next frame with `inputs`.
    pub fn push(&mut self, inputs: [BattleInput; PLAYERS]) {
        self.previous = self.current;
        self.current = inputs;
    }
}

/// Applies the frame's inputs, after the feed's own readers (which read no
/// message in a rollback battle): red's stick moves its rally point and a
/// press of its aggression bit calls an airstrike; blue's stick moves its
/// captains' waypoints and its held aggression bit pulls them towards red's
/// base.
#[system(
    phase = PreUpdate,
    stage = "Feed",
    group = "Feed",
    after = "read_input",
    after = "read_network"
)]
pub fn apply_inputs(
    time: &FrameTime,
    inputs: &Inputs,
    state: &mut InputState,
    orders: &mut Orders,
) {
    let dt = time.delta.as_secs_f32();
    let [red, blue] = inputs.current;
    state.rally = (state.rally + red.stick() * (RALLY_SPEED * dt)).clamp(0.0, ARENA - 0.01);
    state.strike = red.aggressive() && !inputs.previous[0].aggressive();
    let charge = if blue.aggressive() {
        (base(0) - base(1)).normalized_or_zero() * (CHARGE_SPEED * dt)
    } else {
        Vec2::ZERO
    };
    let nudge = blue.stick() * (RALLY_SPEED * dt) + charge;
    for waypoint in &mut orders.waypoints {
        *waypoint = (*waypoint + nudge).clamp(0.0, ARENA - 0.01);
    }
}

//! Replays: the inputs a rollback battle ran with, in a small text file
//! that `sluice-game --record FILE` writes and `sluice-game --replay FILE`
//! plays back to the same final checksum.
//!
//! The format, line by line (`#` starts a comment line; blank lines are
//! skipped):
//!
//! ```text
//! sluice-replay 1
//! units 2000
//! frames 3
//! checksum 5d0c2b5e83a1f7c4
//! 0 127 0 0 -64 64 1
//! 1 127 0 0 -64 64 1
//! 2 0 0 1 -64 64 0
//! ```
//!
//! The header: the format's version, the units at the start, the frame
//! count, and (optional) the checksum of the final state. Then one line
//! per frame, in order: the frame number, then per player `nudge_x
//! nudge_y buttons` ([`BattleInput`]'s three fields).
//!
//! ```
//! use sluice_game::rollback::{BattleInput, Replay};
//!
//! let replay = Replay {
//!     units: 100,
//!     inputs: vec![[BattleInput { nudge_x: 127, nudge_y: 0, buttons: 1 }, BattleInput::default()]],
//!     checksum: None,
//! };
//! let mut file = Vec::new();
//! replay.write_to(&mut file).unwrap();
//! assert_eq!(Replay::read_from(&file[..]).unwrap(), replay);
//!
//! let error = Replay::read_from(&b"sluice-replay 1\nunits 100\nframes 2\n0 1 2 3 4 5 6\n"[..]).unwrap_err();
//! assert_eq!(error.to_string(), "replay line 5: the file ends after 1 of its 2 frames");
//! ```

use std::fmt;
use std::io::{self, BufRead, Write};

use ggrs::Frame;

use crate::rollback::battle::{BattleSetup, RollbackGame};
use crate::rollback::input::{BattleInput, PLAYERS};
use crate::rollback::session::RollbackError;

/// The first line of every replay.
pub const MAGIC: &str = "sluice-replay 1";

/// The longest line a replay may hold, in bytes (a frame's line is under
/// 40).
pub const MAX_LINE: usize = 256;

/// The most frames a replay may hold.
pub const MAX_FRAMES: u64 = u32::MAX as u64;

/// The inputs of a rollback battle, frame by frame, and the checksum it
/// ended with.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Replay {
    /// Units at the start, half per team.
    pub units: usize,
    /// By frame: each player's input.
    pub inputs: Vec<[BattleInput; PLAYERS]>,
    /// The checksum of the final state ([`RollbackGame::checksum`]), when
    /// known.
    pub checksum: Option<u64>,
}

/// Why a replay could not be read.
#[derive(Debug)]
#[non_exhaustive]
pub enum ReplayError {
    /// Reading failed.
    Io(io::Error),
    /// A line is not UTF-8 text.
    NotText {
        /// Its number, from 1.
        line: usize,
    },
    /// A line is longer than [`MAX_LINE`] bytes.
    LongLine {
        /// Its number, from 1.
        line: usize,
    },
    /// A line holds something else than what belongs there.
    Unexpected {
        /// Its number, from 1.
        line: usize,
        /// The byte (from 1) where the wrong field starts.
        column: usize,
        /// What belongs there.
        expected: &'static str,
        /// What is there (cut to 40 characters).
        found: String,
    },
    /// A frame's line names another frame than the next.
    FrameOrder {
        /// Its number, from 1.
        line: usize,
        /// The frame expected.
        expected: u64,
        /// The frame found.
        found: u64,
    },
    /// The file ends before its header or all its frames.
    Truncated {
        /// The line after the last, from 1.
        line: usize,
        /// Frames it announced (0 when the header is cut).
        expected: u64,
        /// Frames it held.
        found: u64,
    },
}

impl fmt::Display for ReplayError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Io(error) => write!(f, "replay: {error}"),
            Self::NotText { line } => write!(f, "replay line {line}: not UTF-8 text"),
            Self::LongLine { line } => {
                write!(f, "replay line {line}: longer than {MAX_LINE} bytes")
            }
            Self::Unexpected {
                line,
                column,
                expected,
                found,
            } => write!(
                f,
                "replay line {line}, byte {column}: expected {expected}, found {found:?}"
            ),
            Self::FrameOrder {
                line,
                expected,
                found,
            } => write!(
                f,
                "replay line {line}: frame {found} where frame {expected} belongs"
            ),
            Self::Truncated {
                line,
                expected,
                found,
            } if *expected > 0 => write!(
                f,
                "replay line {line}: the file ends after {found} of its {expected} frames"
            ),
            Self::Truncated { line, .. } => {
                write!(f, "replay line {line}: the file ends inside its header")
            }
        }
    }
}

impl std::error::Error for ReplayError {}

impl From<io::Error> for ReplayError {
    fn from(error: io::Error) -> Self {
        Self::Io(error)
    }
}

/// The lines of a replay, numbered, comments and blank lines skipped.
struct Lines<R> {
    reader: R,
    number: usize,
    buffer: Vec<u8>,
}

impl<R: BufRead> Lines<R> {
    /// The next line with content and its number; `None` at the end.
    fn next(&mut self) -> Result<Option<(usize, String)>, ReplayError> {
        loop {
            self.number += 1;
            self.buffer.clear();
            let mut limited =
                <&mut R as std::io::Read>::take(&mut self.reader, MAX_LINE as u64 + 1);
            let read = limited.read_until(b'\n', &mut self.buffer)?;
            if read == 0 {
                return Ok(None);
            }
            if self.buffer.len() > MAX_LINE {
                return Err(ReplayError::LongLine { line: self.number });
            }
            let text = std::str::from_utf8(&self.buffer)
                .map_err(|_| ReplayError::NotText { line: self.number })?
                .trim_end_matches(['\n', '\r']);
            if text.trim().is_empty() || text.trim_start().starts_with('#') {
                continue;
            }
            return Ok(Some((self.number, text.to_owned())));
        }
    }
}

/// The whitespace-separated fields of `text`, each with the byte (from 1)
/// where it starts.
fn fields(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.split_ascii_whitespace()
        .map(move |field| (field.as_ptr() as usize - text.as_ptr() as usize + 1, field))
}

fn unexpected(line: usize, column: usize, expected: &'static str, found: &str) -> ReplayError {
    ReplayError::Unexpected {
        line,
        column,
        expected,
        found: found.chars().take(40).collect(),
    }
}

impl Replay {
    /// Writes the replay in the format above.
    ///
    /// # Errors
    /// When writing fails.
    pub fn write_to(&self, mut writer: impl Write) -> io::Result<()> {
        writeln!(writer, "{MAGIC}")?;
        writeln!(writer, "units {}", self.units)?;
        writeln!(writer, "frames {}", self.inputs.len())?;
        if let Some(checksum) = self.checksum {
            writeln!(writer, "checksum {checksum:016x}")?;
        }
        for (frame, inputs) in self.inputs.iter().enumerate() {
            write!(writer, "{frame}")?;
            for input in inputs {
                write!(
                    writer,
                    " {} {} {}",
                    input.nudge_x, input.nudge_y, input.buttons
                )?;
            }
            writeln!(writer)?;
        }
        writer.flush()
    }

    /// Reads a replay written by [`Replay::write_to`].
    ///
    /// # Errors
    /// [`ReplayError`] naming the line (and byte) of the first problem.
    pub fn read_from(reader: impl BufRead) -> Result<Self, ReplayError> {
        let mut lines = Lines {
            reader,
            number: 0,
            buffer: Vec::new(),
        };
        let mut header = || -> Result<(usize, String), ReplayError> {
            lines.next()?.ok_or(ReplayError::Truncated {
                line: lines.number,
                expected: 0,
                found: 0,
            })
        };
        let (line, text) = header()?;
        if text.trim() != MAGIC {
            return Err(unexpected(line, 1, "\"sluice-replay 1\"", &text));
        }
        let (line, text) = header()?;
        let units = keyed(line, &text, "units", "\"units N\" (N from 2)")?;
        let units = usize::try_from(units)
            .ok()
            .filter(|units| *units >= 2)
            .ok_or_else(|| unexpected(line, 7, "a unit count from 2", &text))?;
        let (line, text) = header()?;
        let frames = keyed(line, &text, "frames", "\"frames N\"")?;
        if frames > MAX_FRAMES {
            return Err(unexpected(line, 8, "a frame count up to 2^32 - 1", &text));
        }
        let mut replay = Replay {
            units,
            inputs: Vec::new(),
            checksum: None,
        };
        let mut pending = lines.next()?;
        if let Some((line, text)) = &pending
            && text.trim_start().starts_with("checksum")
        {
            replay.checksum = Some(checksum_line(*line, text)?);
            pending = lines.next()?;
        }
        for frame in 0..frames {
            let Some((line, text)) = pending.take() else {
                return Err(ReplayError::Truncated {
                    line: lines.number,
                    expected: frames,
                    found: frame,
                });
            };
            let mut fields = fields(&text);
            let (column, number) = fields.next().unwrap_or((1, ""));
            let found: u64 = number
                .parse()
                .map_err(|_| unexpected(line, column, "a frame number", number))?;
            if found != frame {
                return Err(ReplayError::FrameOrder {
                    line,
                    expected: frame,
                    found,
                });
            }
            let mut bytes = [0u8; 3 * PLAYERS];
            for (index, byte) in bytes.iter_mut().enumerate() {
                let (column, field) = fields.next().ok_or_else(|| {
                    unexpected(
                        line,
                        text.len() + 1,
                        "nudge_x nudge_y buttons for each of the two players",
                        "the end of the line",
                    )
                })?;
                *byte = if index % 3 == 2 {
                    field
                        .parse::<u8>()
                        .map_err(|_| unexpected(line, column, "buttons from 0 to 255", field))?
                } else {
                    field
                        .parse::<i8>()
                        .map_err(|_| unexpected(line, column, "a nudge from -128 to 127", field))?
                        as u8
                };
            }
            if let Some((column, field)) = fields.next() {
                return Err(unexpected(line, column, "the end of the line", field));
            }
            replay
                .inputs
                .push(std::array::from_fn(|player| BattleInput {
                    nudge_x: bytes[3 * player] as i8,
                    nudge_y: bytes[3 * player + 1] as i8,
                    buttons: bytes[3 * player + 2],
                }));
            pending = lines.next()?;
        }
        if let Some((line, text)) = pending {
            return Err(unexpected(line, 1, "the end of the file", &text));
        }
        Ok(replay)
    }

    /// Runs the inputs on a fresh battle of [`Replay::units`] units on
    /// `threads` threads; the checksum of the final state.
    ///
    /// # Errors
    /// As for [`RollbackGame::new`] and [`RollbackGame::advance`].
    pub fn play(&self, threads: usize) -> Result<u64, RollbackError> {
        let mut game = RollbackGame::new(&BattleSetup {
            threads,
            entities: self.units,
        })?;
        for inputs in &self.inputs {
            game.advance(*inputs)?;
        }
        final_checksum(&game)
    }

    /// Runs a battle of `setup` for `frames` frames with inputs scripted
    /// from `seed` ([`BattleInput::scripted`]) and records them with the
    /// final checksum.
    ///
    /// # Errors
    /// As for [`Replay::play`].
    pub fn record_scripted(
        setup: &BattleSetup,
        frames: u64,
        seed: u64,
    ) -> Result<Self, RollbackError> {
        let mut game = RollbackGame::new(setup)?;
        let mut inputs = Vec::new();
        for frame in 0..frames {
            let frame_inputs =
                std::array::from_fn(|player| BattleInput::scripted(seed, player, frame));
            game.advance(frame_inputs)?;
            inputs.push(frame_inputs);
        }
        Ok(Self {
            units: setup.entities,
            inputs,
            checksum: Some(final_checksum(&game)?),
        })
    }
}

/// The checksum of `game`'s state, as ggrs's saves take it.
fn final_checksum(game: &RollbackGame) -> Result<u64, RollbackError> {
    game.checksum().map_err(|error| RollbackError::Snapshot {
        frame: Frame::try_from(game.frame()).unwrap_or(Frame::MAX),
        error,
    })
}

/// `checksum 5d0c2b5e83a1f7c4`: the checksum.
fn checksum_line(line: usize, text: &str) -> Result<u64, ReplayError> {
    let mut fields = fields(text).skip(1);
    let (column, field) = fields.next().ok_or_else(|| {
        unexpected(
            line,
            text.len() + 1,
            "a hexadecimal checksum",
            "the end of the line",
        )
    })?;
    let checksum = u64::from_str_radix(field, 16)
        .map_err(|_| unexpected(line, column, "a hexadecimal checksum", field))?;
    if let Some((column, field)) = fields.next() {
        return Err(unexpected(line, column, "the end of the line", field));
    }
    Ok(checksum)
}

/// `units 2000`: the number after `key`.
fn keyed(line: usize, text: &str, key: &str, expected: &'static str) -> Result<u64, ReplayError> {
    let mut fields = fields(text);
    match (fields.next(), fields.next(), fields.next()) {
        (Some((_, found)), Some((column, value)), None) if found == key => value
            .parse()
            .map_err(|_| unexpected(line, column, expected, value)),
        _ => Err(unexpected(line, 1, expected, text)),
    }
}

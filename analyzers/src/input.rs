//! Reading a file the CLI was given, within a bound.
//!
//! Every file `sluice` reads (a plan file, each source file `sluice check`
//! walks) goes through [`read_bounded`]: it reads at most
//! [`MAX_INPUT_BYTES`] and refuses a file that holds more, so that a device
//! that never ends (`/dev/zero`), a pipe or an enormous file gets a clear
//! error naming it instead of taking the machine's memory.

use std::fmt;
use std::io::{self, Read};
use std::path::Path;

/// The most bytes `sluice` reads of one file: 64 MiB.
pub const MAX_INPUT_BYTES: u64 = 64 << 20;

/// Why a file could not be read.
#[derive(Debug)]
#[non_exhaustive]
pub enum InputError {
    /// The operating system refused (missing, not permitted, a directory...).
    Io(io::Error),
    /// The file holds more than the bound (reading stopped just past it).
    TooLarge {
        /// The bound, in bytes.
        limit: u64,
    },
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            InputError::Io(error) => error.fmt(f),
            InputError::TooLarge { limit } => write!(
                f,
                "it holds more than {} MiB, the most sluice reads of one file (an endless \
                 device or pipe never ends); split it or pass a smaller file",
                limit >> 20
            ),
        }
    }
}

impl std::error::Error for InputError {}

impl From<io::Error> for InputError {
    fn from(error: io::Error) -> Self {
        InputError::Io(error)
    }
}

/// The contents of `path`, or why not: at most [`MAX_INPUT_BYTES`] are read.
pub fn read_bounded(path: &Path) -> Result<Vec<u8>, InputError> {
    read_bounded_from(std::fs::File::open(path)?, MAX_INPUT_BYTES)
}

/// The contents of `reader` when it ends within `limit` bytes; reading stops
/// one byte past the limit otherwise.
pub fn read_bounded_from(reader: impl Read, limit: u64) -> Result<Vec<u8>, InputError> {
    let mut bytes = Vec::new();
    reader
        .take(limit.saturating_add(1))
        .read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(InputError::TooLarge { limit });
    }
    Ok(bytes)
}

/// Where byte `at` of `bytes` sits: the start of its line, its line (from 1)
/// and its column in characters (from 1); for naming the first byte that is
/// not UTF-8 (everything before `at` must be valid UTF-8).
pub fn position_of(bytes: &[u8], at: usize) -> (usize, usize, usize) {
    let line_start = bytes[..at]
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1);
    let line = bytes[..line_start].iter().filter(|&&b| b == b'\n').count() + 1;
    let column = String::from_utf8_lossy(&bytes[line_start..at])
        .chars()
        .count()
        + 1;
    (line_start, line, column)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_endless_reader_stops_just_past_the_bound() {
        // `io::repeat` never ends, like /dev/zero.
        let error = read_bounded_from(io::repeat(0), 1 << 20).unwrap_err();
        assert!(matches!(error, InputError::TooLarge { limit } if limit == 1 << 20));
        assert!(error.to_string().contains("more than 1 MiB"));
        let exact = read_bounded_from(&[7u8; 16][..], 16).unwrap();
        assert_eq!(exact.len(), 16);
    }
}

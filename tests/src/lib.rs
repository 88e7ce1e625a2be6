//! Helpers shared by the sluice integration tests.

/// Calls `$f::<K>(args)` for a service index `$i` known only at run time
/// (`0..16`): the tests' random plans pick services by number, and each
/// number is its own const-generic service type.
#[macro_export]
macro_rules! by_index {
    ($i:expr, $f:ident ( $($arg:expr),* )) => {
        match $i {
            0 => $f::<0>($($arg),*),
            1 => $f::<1>($($arg),*),
            2 => $f::<2>($($arg),*),
            3 => $f::<3>($($arg),*),
            4 => $f::<4>($($arg),*),
            5 => $f::<5>($($arg),*),
            6 => $f::<6>($($arg),*),
            7 => $f::<7>($($arg),*),
            8 => $f::<8>($($arg),*),
            9 => $f::<9>($($arg),*),
            10 => $f::<10>($($arg),*),
            11 => $f::<11>($($arg),*),
            12 => $f::<12>($($arg),*),
            13 => $f::<13>($($arg),*),
            14 => $f::<14>($($arg),*),
            15 => $f::<15>($($arg),*),
            other => unreachable!("service index {other} out of range"),
        }
    };
}

/// The README's Rust examples, compiled and run as doctests so it stays true.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
pub struct ReadmeDoctests;

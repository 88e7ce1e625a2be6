//! [`for_tuples!`]: one list of tuple arities for every trait implemented on
//! tuples (system and condition functions, bundles, query data and filters).

/// Invokes `$m!(P0 0, P1 1, ..)` once per arity from 1 up to `4`, `8` or
/// `12`: each element a type-parameter name and its tuple index.
macro_rules! for_tuples {
    ($m:ident, 4) => {
        $m!(P0 0);
        $m!(P0 0, P1 1);
        $m!(P0 0, P1 1, P2 2);
        $m!(P0 0, P1 1, P2 2, P3 3);
    };
    ($m:ident, 8) => {
        $crate::tuples::for_tuples!($m, 4);
        $m!(P0 0, P1 1, P2 2, P3 3, P4 4);
        $m!(P0 0, P1 1, P2 2, P3 3, P4 4, P5 5);
        $m!(P0 0, P1 1, P2 2, P3 3, P4 4, P5 5, P6 6);
        $m!(P0 0, P1 1, P2 2, P3 3, P4 4, P5 5, P6 6, P7 7);
    };
    ($m:ident, 12) => {
        $crate::tuples::for_tuples!($m, 8);
        $m!(P0 0, P1 1, P2 2, P3 3, P4 4, P5 5, P6 6, P7 7, P8 8);
        $m!(P0 0, P1 1, P2 2, P3 3, P4 4, P5 5, P6 6, P7 7, P8 8, P9 9);
        $m!(P0 0, P1 1, P2 2, P3 3, P4 4, P5 5, P6 6, P7 7, P8 8, P9 9, P10 10);
        $m!(P0 0, P1 1, P2 2, P3 3, P4 4, P5 5, P6 6, P7 7, P8 8, P9 9, P10 10, P11 11);
    };
}

pub(crate) use for_tuples;

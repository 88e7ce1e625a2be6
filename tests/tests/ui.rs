//! Compile-fail and compile-pass tests of the macros: each file under
//! `tests/ui/` is one mistake and the error it gets (`.stderr` beside it);
//! each file under `tests/ui/pass/` must compile without a warning and run.
//! Regenerate the expected output with `TRYBUILD=overwrite` and review it.

#[test]
fn ui() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail("ui/*.rs");
    cases.pass("ui/pass/*.rs");
}

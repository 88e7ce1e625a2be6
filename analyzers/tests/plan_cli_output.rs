//! How `sluice plan` writes its output: through a buffer as it goes (never
//! the whole view in one piece), and what a failing standard output does.

use std::io::{self, Write};

use sluice_analyzers::plan_cli;

/// Records each write it is handed; fails with `fail` once `after` bytes
/// have been written.
struct Recorder {
    writes: Vec<usize>,
    written: usize,
    fail: Option<(usize, io::ErrorKind)>,
}

impl Write for Recorder {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        if let Some((after, kind)) = self.fail
            && self.written >= after
        {
            return Err(io::Error::from(kind));
        }
        self.writes.push(bytes.len());
        self.written += bytes.len();
        Ok(bytes.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// `systems` systems in a chain: one stage each.
fn chain(systems: usize) -> String {
    let mut text = String::from("SYSTEM s0 - - -\n");
    for i in 1..systems {
        text.push_str(&format!("SYSTEM s{i} - - s{}\n", i - 1));
    }
    text
}

fn run(view: &[&str], text: &str, out: &mut Recorder) -> (u8, String) {
    let mut args: Vec<String> = view.iter().map(|v| v.to_string()).collect();
    args.push("chain.plan".to_owned());
    let mut err = Vec::new();
    let status = plan_cli::run_text(&args, text.as_bytes(), out, &mut err);
    (status, String::from_utf8(err).unwrap())
}

fn recorder(fail: Option<(usize, io::ErrorKind)>) -> Recorder {
    Recorder {
        writes: Vec::new(),
        written: 0,
        fail,
    }
}

#[test]
fn every_view_is_written_in_pieces_as_it_goes() {
    let text = chain(20_000);
    for view in [&[][..], &["--dot"], &["--tree"]] {
        let mut out = recorder(None);
        let (status, err) = run(view, &text, &mut out);
        assert_eq!((status, err.as_str()), (0, ""), "{view:?}");
        assert!(out.written > 200_000, "{view:?}: {} bytes", out.written);
        let largest = out.writes.iter().max().copied().unwrap_or(0);
        assert!(
            largest <= 64 << 10,
            "{view:?}: one write of {largest} of {} bytes",
            out.written
        );
    }
}

#[test]
fn a_failing_output_is_reported_and_a_closed_pipe_ends_quietly() {
    let text = chain(20_000);
    let mut out = recorder(Some((10_000, io::ErrorKind::Other)));
    let (status, err) = run(&[], &text, &mut out);
    assert_eq!(status, 2);
    assert!(err.starts_with("error: cannot write the output: "), "{err}");
    assert!(
        out.written < 100_000,
        "writing stopped: {} bytes",
        out.written
    );

    // `sluice plan big.plan | head`: the reader went away.
    let mut out = recorder(Some((10_000, io::ErrorKind::BrokenPipe)));
    let (status, err) = run(&[], &text, &mut out);
    assert_eq!((status, err.as_str()), (0, ""));
    assert!(
        out.written < 100_000,
        "writing stopped: {} bytes",
        out.written
    );
}

/// The library entry point parses as the binary does: `--help` and
/// `--version` on standard output with status 0, bad usage (clap's words,
/// with a suggestion) on standard error with status 2 and nothing on
/// standard output.
#[test]
fn help_version_and_bad_usage_go_where_they_belong() {
    let words =
        |line: &str| -> Vec<String> { line.split_whitespace().map(str::to_owned).collect() };
    for (line, status, on_stdout, on_stderr) in [
        (
            "--help",
            0,
            "Usage: sluice plan [--dot | --tree | --svg]",
            "",
        ),
        ("--version", 0, env!("CARGO_PKG_VERSION"), ""),
        (
            "--tre chain.plan",
            2,
            "",
            "tip: a similar argument exists: '--tree'",
        ),
        (
            "--dot --svg chain.plan",
            2,
            "",
            "error: the argument '--dot' cannot be used with '--svg'",
        ),
        ("", 2, "", "<FILE>"),
    ] {
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let got = plan_cli::run_text(&words(line), chain(2).as_bytes(), &mut out, &mut err);
        let (out, err) = (
            String::from_utf8(out).unwrap(),
            String::from_utf8(err).unwrap(),
        );
        assert_eq!(got, status, "{line}: {out}{err}");
        if on_stdout.is_empty() {
            assert_eq!(out, "", "{line}");
        } else {
            assert!(out.contains(on_stdout), "{line}: {out}");
        }
        if on_stderr.is_empty() {
            assert_eq!(err, "", "{line}");
        } else {
            assert!(err.contains(on_stderr), "{line}: {err}");
        }
    }
}

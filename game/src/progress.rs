//! The frames' progress bar (indicatif) while a person waits for a run.
//!
//! It is drawn on standard error only when standard output and standard
//! error are both terminals; a run whose output goes to a pipe or a file
//! (a test, a script, CI) gets a hidden bar that draws nothing and is not
//! even moved on (indicatif's `inc` on a hidden bar still costs about
//! 0.2 µs). A drawn bar is moved on after each frame, outside the frame's
//! measured time, and redraws itself at most 20 times a second (about 1 µs
//! a frame on average).

use std::io::IsTerminal;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::report::FrameSample;

/// How often the bar's message (the last frame's time) is rewritten, in
/// frames: a message is a small allocation, so not every frame.
const MESSAGE_EVERY: u64 = 16;

/// The bar over the frames of one run.
#[derive(Debug)]
pub struct FrameProgress {
    bar: ProgressBar,
    /// Whether `bar` draws anything: a hidden bar is left alone.
    drawn: bool,
}

impl FrameProgress {
    /// A bar over `frames` frames, drawn on standard error when standard
    /// output and standard error are terminals, else hidden.
    pub fn for_terminal(frames: u64) -> Self {
        let terminal = std::io::stdout().is_terminal() && std::io::stderr().is_terminal();
        let target = if terminal {
            ProgressDrawTarget::stderr()
        } else {
            ProgressDrawTarget::hidden()
        };
        Self::new(frames, target)
    }

    /// A bar over `frames` frames drawn on `target`.
    pub fn new(frames: u64, target: ProgressDrawTarget) -> Self {
        let bar = ProgressBar::with_draw_target(Some(frames), target);
        if let Ok(style) = ProgressStyle::with_template(
            "frames [{bar:24}] {pos}/{len} ({elapsed}, eta {eta}) {wide_msg}",
        ) {
            bar.set_style(style.progress_chars("=> "));
        }
        let drawn = !bar.is_hidden();
        Self { bar, drawn }
    }

    /// Whether the bar draws anything.
    pub fn is_hidden(&self) -> bool {
        !self.drawn
    }

    /// Frames counted so far (none while hidden).
    pub fn frames_done(&self) -> u64 {
        self.bar.position()
    }

    /// Counts the frame of `sample`.
    pub fn on_frame(&self, sample: &FrameSample) {
        if !self.drawn {
            return;
        }
        self.bar.inc(1);
        if sample.frame.is_multiple_of(MESSAGE_EVERY) {
            self.bar.set_message(format!(
                "{:.2} ms, peak {:.2} ms",
                sample.time.as_secs_f64() * 1e3,
                sample.window_peak.as_secs_f64() * 1e3
            ));
        }
    }

    /// Runs `print` (lines for standard output) with the bar out of the
    /// way, so that the lines and the bar do not mix.
    pub fn println(&self, print: impl FnOnce()) {
        self.bar.suspend(print);
    }

    /// Clears the bar: the run's report follows.
    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn sample(frame: u64) -> FrameSample {
        FrameSample {
            frame,
            time: Duration::from_micros(1_500),
            window_peak: Duration::from_micros(2_000),
            busiest: None,
        }
    }

    /// A terminal that records the lines drawn on it.
    #[derive(Debug, Default, Clone)]
    struct Recorder(std::sync::Arc<std::sync::Mutex<String>>);

    impl Recorder {
        fn text(&self) -> String {
            self.0.lock().unwrap().clone()
        }
    }

    impl indicatif::TermLike for Recorder {
        fn width(&self) -> u16 {
            120
        }
        fn move_cursor_up(&self, _: usize) -> std::io::Result<()> {
            Ok(())
        }
        fn move_cursor_down(&self, _: usize) -> std::io::Result<()> {
            Ok(())
        }
        fn move_cursor_right(&self, _: usize) -> std::io::Result<()> {
            Ok(())
        }
        fn move_cursor_left(&self, _: usize) -> std::io::Result<()> {
            Ok(())
        }
        fn write_line(&self, line: &str) -> std::io::Result<()> {
            self.write_str(&format!("{line}\n"))
        }
        fn write_str(&self, text: &str) -> std::io::Result<()> {
            self.0.lock().unwrap().push_str(text);
            Ok(())
        }
        fn clear_line(&self) -> std::io::Result<()> {
            Ok(())
        }
        fn flush(&self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_hidden_bar_is_left_alone() {
        let progress = FrameProgress::new(3, ProgressDrawTarget::hidden());
        assert!(progress.is_hidden());
        for frame in 0..3 {
            progress.on_frame(&sample(frame));
        }
        assert_eq!(progress.frames_done(), 0);
        assert_eq!(progress.bar.message(), "");
        let mut printed = false;
        progress.println(|| printed = true);
        assert!(printed);
        progress.finish();
        assert!(progress.bar.is_finished());
    }

    #[test]
    fn a_drawn_bar_shows_the_last_frame_time() {
        // A target that records what a terminal would show.
        let terminal = Recorder::default();
        let progress = FrameProgress::new(
            32,
            ProgressDrawTarget::term_like(Box::new(terminal.clone())),
        );
        assert!(!progress.is_hidden());
        progress.on_frame(&sample(0));
        assert_eq!(progress.bar.message(), "1.50 ms, peak 2.00 ms");
        assert_eq!(progress.frames_done(), 1);
        // The message changes every MESSAGE_EVERY frames only.
        progress.on_frame(&sample(1));
        progress.bar.tick();
        let drawn = terminal.text();
        assert!(drawn.contains("frames ["), "{drawn:?}");
        assert!(drawn.contains("/32"), "{drawn:?}");
        assert!(drawn.contains("1.50 ms, peak 2.00 ms"), "{drawn:?}");
        assert_eq!(progress.frames_done(), 2);
        progress.finish();
    }
}

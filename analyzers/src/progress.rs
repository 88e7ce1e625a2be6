//! `sluice check`'s progress bar on a terminal (indicatif): files read,
//! then files parsed, then the whole-tree checks.
//!
//! It is drawn on standard error only when standard output and standard
//! error are both terminals, and only once a check has run for
//! [`SHOW_AFTER`]: a small tree finishes before anything is drawn, so
//! nothing flickers, and a pipe or a file never receives a bar.

use std::io::IsTerminal;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::check::Progress;

/// How long a check runs before its bar appears.
pub(crate) const SHOW_AFTER: Duration = Duration::from_millis(300);

/// The bar over the files of one check.
#[derive(Debug)]
pub(crate) struct Files {
    bar: ProgressBar,
    /// Where the bar is drawn once [`SHOW_AFTER`] has passed; `None` keeps
    /// it hidden.
    target: Option<fn() -> ProgressDrawTarget>,
    started: Instant,
    shown: OnceLock<()>,
}

impl Files {
    /// A bar drawn on standard error when standard output and standard
    /// error are terminals, else hidden.
    pub(crate) fn for_terminal() -> Self {
        let terminal = std::io::stdout().is_terminal() && std::io::stderr().is_terminal();
        Self::new(terminal.then_some(ProgressDrawTarget::stderr as fn() -> ProgressDrawTarget))
    }

    /// A bar drawn on `target` once shown, or never when `None`.
    fn new(target: Option<fn() -> ProgressDrawTarget>) -> Self {
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::hidden());
        if let Ok(style) =
            ProgressStyle::with_template("{prefix:>8} [{bar:30}] {pos}/{len} files {wide_msg}")
        {
            bar.set_style(style.progress_chars("=> "));
        }
        Self {
            bar,
            target,
            started: Instant::now(),
            shown: OnceLock::new(),
        }
    }

    /// Moves the bar on for `event`.
    pub(crate) fn on(&self, event: Progress) {
        match event {
            Progress::Found { files } => self.phase("reading", files),
            Progress::Parsing { files } => self.phase("parsing", files),
            Progress::Read | Progress::Parsed => self.bar.inc(1),
            Progress::Checking => {
                self.bar.set_prefix("checking");
                self.bar.set_message("the whole tree");
            }
        }
        if let Some(target) = self.target
            && self.started.elapsed() >= SHOW_AFTER
            && self.shown.set(()).is_ok()
        {
            self.bar.set_draw_target(target());
        }
    }

    fn phase(&self, name: &'static str, files: usize) {
        self.bar.set_prefix(name);
        self.bar.set_length(files as u64);
        self.bar.set_position(0);
    }

    /// Clears the bar (the findings follow on standard output).
    pub(crate) fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bar_follows_the_phases_of_a_check() {
        let files = Files::new(None);
        files.on(Progress::Found { files: 3 });
        assert_eq!((files.bar.length(), files.bar.position()), (Some(3), 0));
        assert_eq!(files.bar.prefix(), "reading");
        for _ in 0..3 {
            files.on(Progress::Read);
        }
        assert_eq!(files.bar.position(), 3);
        files.on(Progress::Parsing { files: 2 });
        assert_eq!((files.bar.length(), files.bar.position()), (Some(2), 0));
        assert_eq!(files.bar.prefix(), "parsing");
        files.on(Progress::Parsed);
        assert_eq!(files.bar.position(), 1);
        files.on(Progress::Checking);
        assert_eq!(files.bar.prefix(), "checking");
        files.finish();
        assert!(files.bar.is_finished());
    }

    #[test]
    fn without_a_terminal_the_bar_is_never_drawn() {
        let files = Files::new(None);
        std::thread::sleep(SHOW_AFTER);
        files.on(Progress::Found { files: 1 });
        assert!(files.bar.is_hidden());
        assert!(files.shown.get().is_none());
    }

    #[test]
    fn with_a_terminal_the_bar_appears_after_a_while_only() {
        let files = Files::new(Some(ProgressDrawTarget::stderr));
        files.on(Progress::Found { files: 1 });
        assert!(files.shown.get().is_none(), "shown at once");
        std::thread::sleep(SHOW_AFTER);
        files.on(Progress::Read);
        assert!(
            files.shown.get().is_some(),
            "not shown after {SHOW_AFTER:?}"
        );
        files.finish();
    }
}

//! The options of `sluice plan`, parsed by clap: what the `sluice` binary
//! takes after `plan`, and what [`super::run`] parses from a slice of
//! strings.

use clap::{ArgGroup, Parser, ValueEnum};
use sluice::{AmbiguityLevel, Packing, PlanOptions};

/// What `sluice plan --help` prints after the options.
const AFTER_HELP: &str = "\
FILE is read up to 64 MiB: a larger file (or a device or pipe that does not
end) is refused, as is a file that is not UTF-8 text.

Exit status: 0 planned, 2 bad usage or bad input (then nothing on standard
output, and every error on standard error as `error[CODE]: FILE:LINE: ...`).

Examples:
  sluice plan --tree analyzers/examples/organised.plan
  sluice plan --dot analyzers/examples/worked.plan | dot -Tsvg > plan.svg
  sluice plan --svg analyzers/examples/organised.plan > plan.svg";

/// `sluice plan`: plans the SYSTEM, GROUP, STAGE and SET lines of FILE
/// (plan-format.md) and prints the stage view, `stage N: names...`, the
/// fixed cadence first (its lines start with `fixed `) when any system has
/// `cadence=fixed`.
///
/// The views (`--dot`, `--tree`, `--svg`) exclude each other; naming one
/// twice is the same as once.
#[derive(Debug, Clone, PartialEq, Eq, Parser)]
#[command(
    name = "sluice plan",
    version,
    override_usage = PlanArgs::USAGE,
    after_help = AFTER_HELP,
    args_override_self = true,
    group(ArgGroup::new("view").args(["dot", "tree", "svg"]))
)]
pub struct PlanArgs {
    /// Graphviz instead of stages: nodes labelled with their stage, edges
    /// with their reasons; the variable cadence is `digraph plan`, preceded
    /// by `digraph fixed` for the fixed cadence when it has systems (two
    /// graphs in one file)
    #[arg(long)]
    pub dot: bool,
    /// The group hierarchy instead of stages: one line per group and
    /// system, two spaces of indent per level, children in plan order (the
    /// fixed cadence's before the variable's, groups without systems last),
    /// `name STAGE`, and `(fixed)` after a fixed system
    #[arg(long)]
    pub tree: bool,
    /// An SVG picture instead of stages (`sluice plan --svg FILE`): one
    /// column per service (its lane), rows of systems by stage, a dot for
    /// each read, a bar for each write (a gate), groups as frames; with
    /// fixed systems, the fixed cadence's panel above the variable one's
    #[arg(long)]
    pub svg: bool,
    /// The stage packing: `order` (each system after every earlier one it
    /// conflicts with) or `first-fit` (the first stage it does not conflict
    /// with, after its explicit predecessors)
    #[arg(long, value_enum, value_name = "P", default_value_t = PackingArg::Order)]
    pub packing: PackingArg,
    /// Also report SL0008 warnings (conflicting systems ordered only by
    /// line order) on standard error
    #[arg(long)]
    pub warn_ambiguous: bool,
    /// The plan file (plan-format.md), read up to 64 MiB
    #[arg(value_name = "FILE")]
    pub file: String,
}

/// The value of `--packing`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
#[non_exhaustive]
pub enum PackingArg {
    /// Registration-order semantics: each system goes after every earlier
    /// system it conflicts with (`Packing::Order`)
    #[default]
    Order,
    /// Denser stages: the first stage a system does not conflict with,
    /// after its explicit predecessors (`Packing::FirstFit`)
    FirstFit,
}

/// What `sluice plan` prints.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(super) enum View {
    #[default]
    Stages,
    Dot,
    Tree,
    Svg,
}

impl PlanArgs {
    /// The usage line: the three views are one choice.
    pub const USAGE: &str =
        "sluice plan [--dot | --tree | --svg] [--packing order|first-fit] [--warn-ambiguous] FILE";

    /// Parses `args`, the words after `sluice plan` (no program name).
    ///
    /// # Errors
    /// clap's error for bad usage, and for `--help` and `--version` (whose
    /// [`clap::Error::exit_code`] is 0 and whose text goes to standard
    /// output).
    pub fn parse_words(args: &[String]) -> Result<Self, clap::Error> {
        Self::try_parse_from(std::iter::once("sluice plan").chain(args.iter().map(String::as_str)))
    }

    /// The planner's options: the packing, and SL0008 reported only on
    /// request (`--warn-ambiguous`), unlike a world's default.
    pub fn plan_options(&self) -> PlanOptions {
        PlanOptions {
            ambiguity: if self.warn_ambiguous {
                AmbiguityLevel::Warn
            } else {
                AmbiguityLevel::Ignore
            },
            packing: match self.packing {
                PackingArg::Order => Packing::Order,
                PackingArg::FirstFit => Packing::FirstFit,
            },
        }
    }

    /// The view asked for (clap has refused two).
    pub(super) fn view(&self) -> View {
        match (self.dot, self.tree, self.svg) {
            (true, _, _) => View::Dot,
            (_, true, _) => View::Tree,
            (_, _, true) => View::Svg,
            _ => View::Stages,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::error::ErrorKind;

    fn parse(line: &str) -> Result<PlanArgs, clap::Error> {
        let words: Vec<String> = line.split_whitespace().map(str::to_owned).collect();
        PlanArgs::parse_words(&words)
    }

    #[test]
    fn views_packing_and_the_file() {
        let args = parse("--tree --packing first-fit --warn-ambiguous a.plan").unwrap();
        assert_eq!(args.view(), View::Tree);
        assert_eq!(args.file, "a.plan");
        let options = args.plan_options();
        assert_eq!(options.packing, Packing::FirstFit);
        assert_eq!(options.ambiguity, AmbiguityLevel::Warn);
        let plain = parse("a.plan").unwrap();
        assert_eq!(plain.view(), View::Stages);
        assert_eq!(plain.plan_options().ambiguity, AmbiguityLevel::Ignore);
        assert_eq!(plain.plan_options().packing, Packing::Order);
        assert_eq!(
            parse("--packing=order --svg --svg -").unwrap().view(),
            View::Svg
        );
        assert_eq!(parse("--dot x").unwrap().view(), View::Dot);
    }

    #[test]
    fn bad_usage_is_a_clap_error_naming_the_option() {
        let two_views = parse("--dot --tree a.plan").unwrap_err();
        assert_eq!(two_views.kind(), ErrorKind::ArgumentConflict);
        let text = two_views.to_string();
        assert!(
            text.contains("'--dot'") && text.contains("'--tree'"),
            "{text}"
        );

        let packing = parse("--packing densest a.plan").unwrap_err();
        assert_eq!(packing.kind(), ErrorKind::InvalidValue);
        let text = packing.to_string();
        assert!(
            text.contains("'densest'") && text.contains("first-fit"),
            "{text}"
        );

        let typo = parse("--tre a.plan").unwrap_err();
        assert_eq!(typo.kind(), ErrorKind::UnknownArgument);
        assert!(
            typo.to_string()
                .contains("similar argument exists: '--tree'")
        );

        assert_eq!(
            parse("").unwrap_err().kind(),
            ErrorKind::MissingRequiredArgument
        );
        assert_eq!(
            parse("a.plan b.plan").unwrap_err().kind(),
            ErrorKind::UnknownArgument
        );
        for error in [parse("--dot --tree a"), parse("")] {
            assert_eq!(error.unwrap_err().exit_code(), 2);
        }
    }

    #[test]
    fn help_and_version_are_printed_with_status_0() {
        let help = parse("--help").unwrap_err();
        assert_eq!(help.kind(), ErrorKind::DisplayHelp);
        assert_eq!(help.exit_code(), 0);
        let text = help.to_string();
        assert!(text.contains(PlanArgs::USAGE), "{text}");
        assert!(
            text.contains("digraph fixed") && text.contains("64 MiB"),
            "{text}"
        );
        let version = parse("--version").unwrap_err();
        assert_eq!(version.kind(), ErrorKind::DisplayVersion);
        assert!(version.to_string().contains(env!("CARGO_PKG_VERSION")));
    }
}

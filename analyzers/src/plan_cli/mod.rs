//! `sluice plan FILE`: a thin reader of the plan text format over the
//! library planner (see the project's `plan-format.md`).
//!
//! Each `SYSTEM` line becomes a node named after the system, reading its
//! `reads`, gating its `writes` (a write implies a read), exclusive when
//! `writes` holds `*`, with its attributes (`group=`, `order=`, `stage=`,
//! `set=`, `phase=`, `cadence=`) as the node's placement. `GROUP`, `STAGE`
//! and `SET` lines become the graph's groups, stages and sets, and both
//! cadences are planned at once ([`Graph::build_all`]).
//!
//! Every problem is reported, each as `error[CODE]: FILE:LINE: message`
//! naming the line of every declaration at fault; malformed lines are
//! `SA0100` (the plan format's code in the analyzers' range), the planner's
//! own are `SL` codes.
//!
//! A malformed line is reported once: no SL0002 or SL0006 follows from it.
//! When its kind and name are readable, the name counts as declared:
//! naming it in `after`/`before` is no SL0002 and orders nothing (the
//! ordering is dropped, as the line is), naming it in `group=` is no SL0002,
//! and a stage or set it names is no SL0006 (and a malformed `STAGE` line
//! does not make stages mandatory). A malformed `GROUP` line that good lines
//! put systems or groups in becomes a placeholder, a group of that name
//! without attributes (a top-level group with no `order=`), so that its
//! members stay together instead of joining the top level's first/last
//! order. The placeholder takes part in planning like any group, and a
//! cycle through it is reported: the runtime names one cycle per strongly
//! connected component, so dropping the cycles that run through a
//! placeholder would also drop, now and then, a cycle of that component
//! that has nothing to do with the malformed line. Since any error means
//! exit 2 with nothing on standard output, a placeholder never shows.
//!
//! Output: the stage view; with fixed systems, the fixed cadence's stages
//! first, each line starting with `fixed `. `--dot` prints Graphviz: the
//! variable cadence as `digraph plan { ... }`; with fixed systems, first the
//! fixed cadence as a graph of its own, `digraph fixed { ... }` (one file,
//! two graphs: `dot` renders each). `--tree` prints the group hierarchy
//! (see `tree.rs` for how the two cadences merge). `--svg` prints the
//! picture of lanes and gates the runtime draws ([`sluice::plan::to_svg`]):
//! with fixed systems, a panel for each cadence, the fixed one first.

mod args;
mod parse;
mod render;
mod tree;

use std::collections::HashSet;
use std::io::{self, BufWriter, Write};
use std::path::Path;

use sluice::{
    Cadence, Diagnostic, DiagnosticKind, Graph, Group, NodeBuilder, Phase, RankKind, SiblingOrder,
};

use crate::input::{InputError, MAX_INPUT_BYTES, read_bounded, read_bounded_from};
use args::View;
pub use args::{PackingArg, PlanArgs};
use parse::{Declares, Parsed};
use render::Lines;

/// A malformed line of the plan text format.
const MALFORMED: &str = "SA0100";

/// Runs `sluice plan` with `args` (the words after the subcommand, parsed
/// by clap as [`PlanArgs`]); returns the exit status: 0 planned (or
/// `--help`, `--version` printed on `stdout`), 2 bad usage (clap's message
/// on `stderr`) or bad input (nothing on `stdout` then).
///
/// FILE is read within [`MAX_INPUT_BYTES`] (a larger file, or a device or
/// pipe that does not end, is refused by name). The output is written to
/// `stdout` as it is made, through a buffer; a reader that goes away (a
/// closed pipe) ends it quietly.
pub fn run(args: &[String], stdout: &mut dyn Write, stderr: &mut dyn Write) -> u8 {
    match PlanArgs::parse_words(args) {
        Ok(args) => run_parsed(&args, stdout, stderr),
        Err(error) => usage_error(&error, stdout, stderr),
    }
}

/// [`run`] with the arguments already parsed (what the `sluice` binary
/// does after clap parsed its whole command line).
pub fn run_parsed(args: &PlanArgs, stdout: &mut dyn Write, stderr: &mut dyn Write) -> u8 {
    run_reading(args, stdout, stderr, |file| read_bounded(Path::new(file)))
}

/// [`run`] with the FILE's contents given as `text` instead of read (the
/// FILE named in `args` is used in messages only): what a test or a fuzzer
/// drives. The same bound applies to `text`.
pub fn run_text(
    args: &[String],
    text: &[u8],
    stdout: &mut dyn Write,
    stderr: &mut dyn Write,
) -> u8 {
    match PlanArgs::parse_words(args) {
        Ok(args) => run_reading(&args, stdout, stderr, |_| {
            read_bounded_from(text, MAX_INPUT_BYTES)
        }),
        Err(error) => usage_error(&error, stdout, stderr),
    }
}

/// Writes clap's `error` where it belongs (help and version on `stdout`,
/// bad usage on `stderr`, as plain text) and returns its exit status.
fn usage_error<'w>(
    error: &clap::Error,
    stdout: &'w mut dyn Write,
    stderr: &'w mut dyn Write,
) -> u8 {
    let out = if error.use_stderr() { stderr } else { stdout };
    let _ = write!(out, "{}", error.render());
    u8::try_from(error.exit_code()).unwrap_or(2)
}

fn run_reading(
    options: &PlanArgs,
    stdout: &mut dyn Write,
    stderr: &mut dyn Write,
    read: impl FnOnce(&str) -> Result<Vec<u8>, InputError>,
) -> u8 {
    let file = options.file.as_str();
    let text = match read(file) {
        Ok(bytes) => match String::from_utf8(bytes) {
            Ok(text) => text,
            Err(error) => {
                let _ = writeln!(stderr, "error: cannot read {file}: {}", not_utf8(&error));
                return 2;
            }
        },
        Err(error) => {
            let _ = writeln!(stderr, "error: cannot read {file}: {error}");
            return 2;
        }
    };
    let mut out = Output {
        inner: BufWriter::new(stdout),
        error: None,
    };
    let Ok(written) = plan(file, &text, options, stderr, &mut out) else {
        return 2;
    };
    let flushed = written.and_then(|()| {
        out.inner.flush().map_err(|error| {
            out.error = Some(error);
            std::fmt::Error
        })
    });
    match flushed {
        Ok(()) => 0,
        Err(_) => match out.error.take() {
            // The reader went away (`sluice plan big.plan | head`): nothing
            // is wrong with the plan.
            Some(error) if error.kind() == io::ErrorKind::BrokenPipe => 0,
            Some(error) => {
                let _ = writeln!(stderr, "error: cannot write the output: {error}");
                2
            }
            None => {
                let _ = writeln!(stderr, "error: cannot write the output");
                2
            }
        },
    }
}

/// Where a file that is not UTF-8 goes wrong: the first invalid byte, by
/// line and column (in characters).
fn not_utf8(error: &std::string::FromUtf8Error) -> String {
    let bytes = error.as_bytes();
    let at = error.utf8_error().valid_up_to();
    let (_, line, column) = crate::input::position_of(bytes, at);
    format!(
        "it is not UTF-8 text: byte 0x{:02X} at line {line}, column {column} is not valid UTF-8",
        bytes[at]
    )
}

/// Standard output as the views write it: text through a buffer, keeping
/// the first I/O error (a view sees only that writing failed).
struct Output<'w> {
    inner: BufWriter<&'w mut dyn Write>,
    error: Option<io::Error>,
}

impl std::fmt::Write for Output<'_> {
    fn write_str(&mut self, text: &str) -> std::fmt::Result {
        self.inner.write_all(text.as_bytes()).map_err(|error| {
            self.error = Some(error);
            std::fmt::Error
        })
    }
}

/// The graph of a parsed file, and the line of everything in it.
struct Built<'t> {
    graph: Graph,
    lines: Lines<'t>,
    /// System and group names declared only by malformed lines.
    malformed_items: HashSet<&'t str>,
    /// Stage and set names declared only by malformed lines.
    malformed_ranks: HashSet<(RankKind, &'t str)>,
    /// SL0002 found before planning: orderings naming a phase (line and
    /// message).
    unknown: Vec<(usize, String)>,
}

fn build<'t>(parsed: &Parsed<'t>) -> Built<'t> {
    let declared: HashSet<&str> = parsed
        .systems
        .iter()
        .map(|s| s.name)
        .chain(parsed.groups.iter().map(|g| g.name))
        .collect();
    // What malformed lines declare, when no good line declares it too.
    let mut malformed_items = HashSet::new();
    let mut malformed_groups = Vec::new();
    let mut malformed_ranks = HashSet::new();
    for malformed in &parsed.malformed {
        match malformed.declares {
            Some(Declares::System(name) | Declares::Group(name))
                if !declared.contains(name) && malformed_items.insert(name) =>
            {
                if matches!(malformed.declares, Some(Declares::Group(_))) {
                    malformed_groups.push((name, malformed.line));
                }
            }
            Some(Declares::Rank(kind, name))
                if !parsed
                    .ranks
                    .iter()
                    .any(|rank| rank.kind == kind && rank.name == name) =>
            {
                malformed_ranks.insert((kind, name));
            }
            _ => {}
        }
    }
    // A name only a malformed line declares orders nothing. The planner lets
    // an ordering target a phase by name; in a plan file names are systems
    // and groups only (a phase is named by `phase=`), so such a target is
    // unknown here unless a line declares it.
    let mut unknown = Vec::new();
    let mut keep = |line: usize, source: &str, relation: &str, target: &str| {
        if declared.contains(target) {
            return true;
        }
        if malformed_items.contains(target) {
            return false;
        }
        if Phase::from_name(target).is_some() {
            unknown.push((
                line,
                format!(
                    "`{source}` is ordered {relation} `{target}`, which is not a declared system \
                     or group (a phase is named by `phase=` only); check the spelling or \
                     declare it"
                ),
            ));
            return false;
        }
        true
    };

    let mut graph = Graph::new();
    let mut lines = Lines::default();
    for system in &parsed.systems {
        let body = graph.add_node(node(system, &mut keep));
        lines.systems.push((system.line, system.name));
        // Issue 20: a `commit=` system is two points, the second
        // `<name>@commit`, after the first and placed with it.
        if !system.commit.is_empty() {
            let commit = graph.add_node(commit_node(system));
            graph.link_commit(body, commit);
            lines.systems.push((system.line, system.name));
        }
    }
    for group in &parsed.groups {
        graph.add_group(self::group(group, &mut keep));
        lines.groups.push(group.line);
    }
    // A malformed group that good lines put something in stays a group (a
    // placeholder without attributes, after the declared groups), so that
    // its members stay together rather than join the top level's first/last
    // order.
    let parents: HashSet<&str> = parsed
        .systems
        .iter()
        .filter_map(|s| s.group)
        .chain(parsed.groups.iter().filter_map(|g| g.parent))
        .collect();
    for (name, line) in malformed_groups {
        if parents.contains(name) {
            graph.add_group(Group::new(name.to_owned()));
            lines.groups.push(line);
        }
    }
    for rank in &parsed.ranks {
        match rank.kind {
            RankKind::Stage => graph.add_stage(rank.name.to_owned(), rank.order),
            RankKind::Set => graph.add_set(rank.name.to_owned(), rank.order),
        }
        lines.ranks.push(rank.line);
    }
    Built {
        graph,
        lines,
        malformed_items,
        malformed_ranks,
        unknown,
    }
}

impl Built<'_> {
    /// Whether `diagnostic` only follows from a malformed line (already
    /// reported): a name only such a line declares, named in `group=` (a
    /// malformed SYSTEM line's name; the item stays at the top level) or as a
    /// stage or set.
    fn excused(&self, diagnostic: &Diagnostic) -> bool {
        match &diagnostic.kind {
            DiagnosticKind::UnknownTarget { target, .. } => {
                self.malformed_items.contains(target.as_str())
            }
            DiagnosticKind::UnknownRank { kind, name, .. } => {
                self.malformed_ranks.contains(&(*kind, name.as_str()))
            }
            _ => false,
        }
    }
}

/// Plans `text` (read from `file`): writes the warnings and errors to
/// `stderr` (each rendered as `error[CODE]: FILE:LINE: ...`), then, when
/// there is no error, the view to `out` as it goes. `Err` when errors were
/// reported (nothing was written to `out`); else what writing returned.
fn plan(
    file: &str,
    text: &str,
    options: &PlanArgs,
    stderr: &mut dyn Write,
    out: &mut dyn std::fmt::Write,
) -> Result<std::fmt::Result, ()> {
    let parsed = parse::parse(text);
    let built = build(&parsed);
    let render = |diagnostic: &Diagnostic| render::render(file, &built.lines, diagnostic);
    let mut errors: Vec<String> = parsed
        .malformed
        .iter()
        .map(|m| format!("error[{MALFORMED}]: {file}:{}: {}", m.line, m.message))
        .chain(
            built
                .unknown
                .iter()
                .map(|(line, message)| format!("error[SL0002]: {file}:{line}: {message}")),
        )
        .collect();
    let mut report = |lines: &[String]| {
        for line in lines {
            let _ = writeln!(stderr, "{line}");
        }
    };
    let plans = match built.graph.build_all(&options.plan_options()) {
        Ok(plans) => plans,
        Err(failure) => {
            errors.extend(
                failure
                    .diagnostics()
                    .iter()
                    .filter(|d| !built.excused(d))
                    .map(render),
            );
            report(&errors);
            return Err(());
        }
    };
    let (fixed, variable) = (plans.fixed(), plans.variable());
    // Both plans carry every diagnostic of the build.
    let warnings: Vec<String> = variable.diagnostics().iter().map(render).collect();
    if !errors.is_empty() {
        errors.extend(warnings);
        report(&errors);
        return Err(());
    }
    report(&warnings);
    let any_fixed = !fixed.is_empty();
    Ok(match options.view() {
        View::Dot => (|| {
            if any_fixed {
                fixed.write_dot("fixed", out)?;
            }
            variable.write_dot("plan", out)
        })(),
        View::Svg => {
            let graph = built.graph.view();
            let svg = if any_fixed {
                sluice::plan::to_svg(
                    graph,
                    &[("fixed cadence", fixed), ("variable cadence", variable)],
                )
            } else {
                variable.to_svg(graph)
            };
            out.write_str(&svg)
        }
        View::Tree => tree::render(
            &tree::Input {
                fixed,
                variable,
                cadences: parsed.systems.iter().map(|s| s.cadence).collect(),
            },
            out,
        ),
        View::Stages => (|| {
            let cadences = [("fixed ", fixed), ("", variable)];
            for (prefix, plan) in cadences {
                for (stage, members) in plan.stages().enumerate() {
                    write!(out, "{prefix}stage {stage}:")?;
                    for &member in members {
                        out.write_char(' ')?;
                        out.write_str(plan.node_name(member))?;
                    }
                    out.write_char('\n')?;
                }
            }
            Ok(())
        })(),
    })
}

/// Whether an ordering of the line `line` (the system or group `source`)
/// keeps its target.
type Keep<'k> = dyn FnMut(usize, &str, &str, &str) -> bool + 'k;

/// The `after` and `before` targets of the line `line` (the system or
/// group `source`) that `keep` keeps.
fn kept<'t>(
    keep: &mut Keep<'_>,
    line: usize,
    source: &str,
    after: &[&'t str],
    before: &[&'t str],
) -> (Vec<&'t str>, Vec<&'t str>) {
    let mut kept = |relation: &str, targets: &[&'t str]| -> Vec<&'t str> {
        targets
            .iter()
            .copied()
            .filter(|target| keep(line, source, relation, target))
            .collect()
    };
    (kept("after", after), kept("before", before))
}

fn node(system: &parse::System<'_>, keep: &mut Keep<'_>) -> NodeBuilder {
    let mut node = NodeBuilder::new(system.name.to_owned());
    // A write implies a read: a service in both columns is one gated access
    // (the planner refuses a node that declares one service twice).
    for &read in &system.reads {
        if !system.writes.contains(&read) {
            node = node.reads_named(read.to_owned());
        }
    }
    for &write in &system.writes {
        node = node.gates_named(write.to_owned());
    }
    for &append in &system.append {
        if !system.writes.contains(&append) {
            node = node.appends_named(append.to_owned());
        }
    }
    if system.exclusive {
        node = node.exclusive();
    }
    let (after, before) = kept(
        keep,
        system.line,
        system.name,
        &system.after,
        &system.before,
    );
    for target in after {
        node = node.after(target.to_owned());
    }
    for target in before {
        node = node.before(target.to_owned());
    }
    for &target in &system.silenced.with {
        node = node.ambiguous_with(target.to_owned());
    }
    if system.silenced.all {
        node = node.ambiguous_with_all();
    }
    placed(node, system)
}

/// The second point of a `commit=` system: `<name>@commit`, gating the
/// `commit=` services, after the system, with its placement.
fn commit_node(system: &parse::System<'_>) -> NodeBuilder {
    let mut node =
        NodeBuilder::new(format!("{}@commit", system.name)).after(system.name.to_owned());
    for &service in &system.commit {
        node = node.gates_named(service.to_owned());
    }
    placed(node, system)
}

/// `node` with `system`'s group, order, stage, set, phase and cadence.
fn placed(mut node: NodeBuilder, system: &parse::System<'_>) -> NodeBuilder {
    if let Some(group) = system.group {
        node = node.in_group(group.to_owned());
    }
    match system.order {
        Some(SiblingOrder::First) => node = node.order_first(),
        Some(SiblingOrder::Last) => node = node.order_last(),
        None => {}
    }
    if let Some(stage) = system.stage {
        node = node.in_stage(stage.to_owned());
    }
    if let Some(set) = system.set {
        node = node.in_set(set.to_owned());
    }
    if let Some(phase) = system.phase {
        node = node.phase(phase);
    }
    if system.cadence == Cadence::Fixed {
        node = node.cadence(Cadence::Fixed);
    }
    node
}

fn group(declaration: &parse::Group<'_>, keep: &mut Keep<'_>) -> Group {
    let mut group = Group::new(declaration.name.to_owned());
    if let Some(parent) = declaration.parent {
        group = group.in_group(parent.to_owned());
    }
    match declaration.order {
        Some(SiblingOrder::First) => group = group.order_first(),
        Some(SiblingOrder::Last) => group = group.order_last(),
        None => {}
    }
    let (after, before) = kept(
        keep,
        declaration.line,
        declaration.name,
        &declaration.after,
        &declaration.before,
    );
    for target in after {
        group = group.after(target.to_owned());
    }
    for target in before {
        group = group.before(target.to_owned());
    }
    for &target in &declaration.silenced.with {
        group = group.ambiguous_with(target.to_owned());
    }
    if declaration.silenced.all {
        group = group.ambiguous_with_all();
    }
    group
}

//! `sluice plan FILE`: a thin reader of the plan text format over the
//! library planner (see the project's `plan-format.md`).
//!
//! Each `SYSTEM` line becomes a node named after the system, reading its
//! `reads`, gating its `writes` (a write implies a read), exclusive when
//! `writes` holds `*`. Every problem is reported, each as
//! `error[CODE]: FILE:LINE: message`; malformed lines are `SA0100` (the plan
//! format's code in the analyzers' range), the planner's own are `SL` codes.

use std::io::Write;

use sluice::{
    AmbiguityLevel, Diagnostic, DiagnosticKind, Graph, Level, NodeBuilder, NodeRef, Packing,
    PlanOptions,
};

/// A malformed line of the plan text format.
const MALFORMED: &str = "SA0100";

const EXPECTED: &str = "expected `SYSTEM <name> <reads> <writes> <after> [<before>]`";

/// One `SYSTEM` line.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Declaration<'t> {
    line: usize,
    name: &'t str,
    reads: Vec<&'t str>,
    writes: Vec<&'t str>,
    exclusive: bool,
    after: Vec<&'t str>,
    before: Vec<&'t str>,
}

/// A malformed line: its number and what was expected.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Malformed {
    line: usize,
    message: String,
}

/// Parses every line, keeping the good declarations and every malformed one.
fn parse(text: &str) -> (Vec<Declaration<'_>>, Vec<Malformed>) {
    let mut declarations = Vec::new();
    let mut malformed = Vec::new();
    for (index, raw) in text.lines().enumerate() {
        let line = index + 1;
        let content = raw.split('#').next().unwrap_or("");
        let words: Vec<&str> = content.split_whitespace().collect();
        if words.is_empty() {
            continue;
        }
        match parse_words(line, &words) {
            Ok(declaration) => declarations.push(declaration),
            Err(message) => malformed.push(Malformed { line, message }),
        }
    }
    (declarations, malformed)
}

fn parse_words<'t>(line: usize, words: &[&'t str]) -> Result<Declaration<'t>, String> {
    if words[0] != "SYSTEM" {
        return Err(format!("{EXPECTED}, found `{}`", words[0]));
    }
    if !(5..=6).contains(&words.len()) {
        return Err(format!(
            "{EXPECTED}: 4 or 5 columns after `SYSTEM`, found {}",
            words.len() - 1
        ));
    }
    let name = words[1];
    if name == "-" || name.contains([',', '*']) {
        return Err(format!("{EXPECTED}: a system name, found `{name}`"));
    }
    let list = |column: &str, word: &'t str, star: bool| -> Result<Vec<&'t str>, String> {
        if word == "-" {
            return Ok(Vec::new());
        }
        let items: Vec<&str> = word.split(',').collect();
        if items.iter().any(|item| item.is_empty() || *item == "-") {
            return Err(format!(
                "{EXPECTED}: `{column}` is `-` or names separated by single commas, found `{word}`"
            ));
        }
        if !star && items.contains(&"*") {
            return Err(format!(
                "{EXPECTED}: `*` (exclusive) belongs in `writes`, found it in `{column}`"
            ));
        }
        Ok(items)
    };
    let reads = list("reads", words[2], false)?;
    let mut writes = list("writes", words[3], true)?;
    let exclusive = writes.contains(&"*");
    writes.retain(|&w| w != "*");
    let after = list("after", words[4], false)?;
    let before = match words.get(5) {
        Some(word) => list("before", word, false)?,
        None => Vec::new(),
    };
    Ok(Declaration {
        line,
        name,
        reads,
        writes,
        exclusive,
        after,
        before,
    })
}

/// Options of `sluice plan`.
#[derive(Debug, Default)]
struct Options {
    dot: bool,
    plan: PlanOptions,
    file: Option<String>,
}

fn parse_args(args: &[String]) -> Result<Options, String> {
    let mut options = Options::default();
    // SL0008 only on request (`--warn-ambiguous`), unlike a world's default.
    options.plan.ambiguity = AmbiguityLevel::Ignore;
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--dot" => options.dot = true,
            "--warn-ambiguous" => options.plan.ambiguity = AmbiguityLevel::Warn,
            "--packing" => {
                let value = args
                    .next()
                    .ok_or("`--packing` needs `order` or `first-fit`")?;
                options.plan.packing = packing(value)?;
            }
            other if other.starts_with("--packing=") => {
                options.plan.packing = packing(&other["--packing=".len()..])?;
            }
            other if other.starts_with('-') && other != "-" => {
                return Err(format!("unknown option `{other}`"));
            }
            file if options.file.is_none() => options.file = Some(file.to_owned()),
            extra => return Err(format!("one FILE expected, found a second: `{extra}`")),
        }
    }
    Ok(options)
}

fn packing(value: &str) -> Result<Packing, String> {
    match value {
        "first-fit" => Ok(Packing::FirstFit),
        "order" => Ok(Packing::Order),
        other => Err(format!(
            "`--packing` takes `order` or `first-fit`, found `{other}`"
        )),
    }
}

/// Runs `sluice plan` with `args` (after the subcommand); returns the exit
/// status: 0 planned, 2 bad usage or bad input (nothing on `stdout` then).
pub fn run(args: &[String], stdout: &mut dyn Write, stderr: &mut dyn Write) -> u8 {
    run_reading(args, stdout, stderr, |file| std::fs::read(file))
}

/// [`run`] with the FILE's contents given as `text` instead of read (the
/// FILE named in `args` is used in messages only): what a test or a fuzzer
/// drives.
pub fn run_text(
    args: &[String],
    text: &[u8],
    stdout: &mut dyn Write,
    stderr: &mut dyn Write,
) -> u8 {
    run_reading(args, stdout, stderr, |_| Ok(text.to_vec()))
}

fn run_reading(
    args: &[String],
    stdout: &mut dyn Write,
    stderr: &mut dyn Write,
    read: impl FnOnce(&str) -> std::io::Result<Vec<u8>>,
) -> u8 {
    let options = match parse_args(args) {
        Ok(Options { file: None, .. }) => {
            let _ = writeln!(stderr, "error: `sluice plan` needs a FILE");
            return 2;
        }
        Ok(options) => options,
        Err(message) => {
            let _ = writeln!(stderr, "error: {message}");
            return 2;
        }
    };
    let file = options.file.as_deref().unwrap_or_default();
    let text = match read(file).and_then(|bytes| {
        String::from_utf8(bytes)
            .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))
    }) {
        Ok(text) => text,
        Err(error) => {
            let _ = writeln!(stderr, "error: cannot read {file}: {error}");
            return 2;
        }
    };
    match plan(file, &text, &options) {
        Ok((output, warnings)) => {
            for warning in warnings {
                let _ = writeln!(stderr, "{warning}");
            }
            let _ = stdout.write_all(output.as_bytes());
            0
        }
        Err(errors) => {
            for error in errors {
                let _ = writeln!(stderr, "{error}");
            }
            2
        }
    }
}

/// Plans `text` (read from `file`): the output and the warnings, or every
/// error (with the warnings), each rendered for standard error.
fn plan(file: &str, text: &str, options: &Options) -> Result<(String, Vec<String>), Vec<String>> {
    let (declarations, malformed) = parse(text);
    let mut graph = Graph::new();
    for declaration in &declarations {
        graph.add_node(node(declaration));
    }
    let render = |diagnostic: &Diagnostic| render(file, &declarations, diagnostic);
    let mut errors: Vec<String> = malformed
        .iter()
        .map(|m| format!("error[{MALFORMED}]: {file}:{}: {}", m.line, m.message))
        .collect();
    match graph.build(&options.plan) {
        Ok(plan) => {
            let warnings: Vec<String> = plan.diagnostics().iter().map(render).collect();
            if !errors.is_empty() {
                errors.extend(warnings);
                return Err(errors);
            }
            let output = if options.dot {
                plan.to_dot()
            } else {
                let mut out = String::new();
                for (stage, members) in plan.stages().enumerate() {
                    let names: Vec<&str> = members.iter().map(|&n| plan.node_name(n)).collect();
                    out.push_str(&format!("stage {stage}: {}\n", names.join(" ")));
                }
                out
            };
            Ok((output, warnings))
        }
        Err(failure) => {
            errors.extend(failure.diagnostics().iter().map(render));
            Err(errors)
        }
    }
}

fn node(declaration: &Declaration<'_>) -> NodeBuilder {
    let mut node = NodeBuilder::new(declaration.name.to_owned());
    // A write implies a read: a service in both columns is one gated access
    // (the planner refuses a node that declares one service twice).
    for &read in &declaration.reads {
        if !declaration.writes.contains(&read) {
            node = node.reads_named(read.to_owned());
        }
    }
    for &write in &declaration.writes {
        node = node.gates_named(write.to_owned());
    }
    if declaration.exclusive {
        node = node.exclusive();
    }
    for &after in &declaration.after {
        node = node.after(after.to_owned());
    }
    for &before in &declaration.before {
        node = node.before(before.to_owned());
    }
    node
}

/// `error[SL0004]: FILE:3, FILE:7: message`: the library's diagnostic with
/// the lines of the systems it is about.
fn render(file: &str, declarations: &[Declaration<'_>], diagnostic: &Diagnostic) -> String {
    let line = |node: &NodeRef| match node {
        NodeRef::Node(index) => Some(declarations[index.index()].line),
        _ => None,
    };
    let lines: Vec<usize> = match &diagnostic.kind {
        DiagnosticKind::Cycle { path } => path.iter().filter_map(line).collect(),
        DiagnosticKind::UnknownTarget { source, .. } => line(source).into_iter().collect(),
        DiagnosticKind::DuplicateKey { first, second, .. } => {
            [first, second].into_iter().filter_map(line).collect()
        }
        DiagnosticKind::Ambiguity { pairs, .. } => {
            let mut lines: Vec<usize> = pairs
                .iter()
                .flat_map(|&(a, b)| [a, b])
                .map(|n| declarations[n.index()].line)
                .collect();
            lines.sort_unstable();
            lines.dedup();
            lines
        }
        // Any other kind: the lines of the systems it names.
        _ => declarations
            .iter()
            .filter(|d| diagnostic.nodes.iter().any(|name| name == d.name))
            .map(|d| d.line)
            .collect(),
    };
    let level = match diagnostic.level {
        Level::Warning => "warning",
        Level::Error => "error",
    };
    let at: Vec<String> = lines.iter().map(|l| format!("{file}:{l}")).collect();
    let at = if at.is_empty() {
        file.to_owned()
    } else {
        at.join(", ")
    };
    format!("{level}[{}]: {at}: {}", diagnostic.code, diagnostic.message)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_lists_comments_and_exclusive() {
        let (declarations, malformed) =
            parse("# header\n\nSYSTEM a  X,Y\t*  -  b # trailing\nSYSTEM b - Z c\n");
        assert!(malformed.is_empty());
        assert_eq!(declarations.len(), 2);
        let a = &declarations[0];
        assert_eq!((a.line, a.name), (3, "a"));
        assert_eq!(a.reads, ["X", "Y"]);
        assert!(a.writes.is_empty() && a.exclusive);
        assert_eq!((a.after.len(), a.before.as_slice()), (0, &["b"][..]));
        assert_eq!(declarations[1].writes, ["Z"]);
        assert_eq!(declarations[1].after, ["c"]);
    }

    #[test]
    fn reports_what_was_expected() {
        let (declarations, malformed) =
            parse("SYSTEM a - -\nSYS b - - -\nSYSTEM - - - -\nSYSTEM c A,,B - -\nSYSTEM d * - -\n");
        assert!(declarations.is_empty());
        let lines: Vec<usize> = malformed.iter().map(|m| m.line).collect();
        assert_eq!(lines, [1, 2, 3, 4, 5]);
        assert!(
            malformed[0]
                .message
                .ends_with("4 or 5 columns after `SYSTEM`, found 3")
        );
        assert!(malformed[1].message.ends_with("found `SYS`"));
        assert!(malformed[2].message.ends_with("a system name, found `-`"));
        assert!(malformed[3].message.contains("found `A,,B`"));
        assert!(malformed[4].message.contains("belongs in `writes`"));
    }
}

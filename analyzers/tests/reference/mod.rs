//! A reference `sluice plan`, written from the plan-format specification
//! (`plan-format.md`) alone, without looking at the planner: the property
//! tests compare the real CLI against it. Also the few helpers both test
//! files use to run the CLI and compare.
//!
//! Everything here favours being obviously right over being fast: the
//! constraints become an explicit graph, reachability is a plain transitive
//! closure (O(n^3)), plan order is the greedy "earliest-declared ready system"
//! loop of the spec, and stages are computed by scanning every earlier system.
//!
//! The spec leaves a few things open; each choice is marked `AMBIGUITY:` where
//! it is made:
//!
//! 1. Duplicate names (SL0004): every line stays a node of its own (its own
//!    columns and attributes still apply and are still checked), but a name
//!    always refers to its first declaration. (The CLI does this for the
//!    original format.)
//! 2. Malformed lines are reported once (issue 9: "a dropped line must not
//!    cascade into SL0002 for every later reference to it"): a malformed
//!    line whose kind (`SYSTEM`, `GROUP`, `STAGE`, `SET`) and name (the word
//!    after the kind, when it is a name and holds no `=`) are readable still
//!    declares that name, unless a good line declares it too (then the good
//!    line is what the name means, and no SL0004 is raised); among malformed
//!    lines the first one declaring a name counts. Whatever the line said
//!    besides its name is lost, so:
//!    - naming such a system or group in `after`/`before` (or `group=`) is
//!      no SL0002 and orders nothing (no SL0003 either: its cadence is
//!      lost); `group=` naming a malformed SYSTEM leaves the item at the top
//!      level;
//!    - a malformed GROUP line is still a group for the items good lines
//!      put in it (`group=`): they stay its children, ordered among
//!      themselves by `order=first`/`last` as siblings, rather than join the
//!      top level. Its attributes are lost with the line, so it is a
//!      top-level group without `order=` (a sibling of the top level's
//!      items like any other) and, as above, orderings naming it add
//!      nothing. So a cycle it closes with the top level's first/last order
//!      is reported, even where its lost `order=` might have avoided it:
//!      leaving out the cycles through it would leave out, now and then, a
//!      cycle of the same component that owes nothing to the malformed
//!      line, since the planner names one cycle per component (see
//!      `plan_cli`);
//!    - a stage or set named only by a malformed STAGE or SET line is no
//!      SL0006 when a system names it (the membership orders nothing), and a
//!      malformed STAGE line does not make stages mandatory.
//! 3. `*` outside `writes` makes the line malformed (it marks exclusivity and
//!    is no name).
//! 4. Cycle codes: one error per cyclic component (strongly connected set
//!    of systems and groups, per cadence), as the original format reports
//!    one cycle per component. SL0001 when only `after`/`before` columns
//!    between systems lie inside it (and for a group that contains itself),
//!    SL0007 when every cycle in it needs an ordering that only organisation
//!    gives (through a group, stage, set, phase or first/last). A component
//!    holding both kinds of cycle may be reported as either, depending on
//!    which of its cycles the message names: `EITHER_CYCLE` in the codes.
//! 5. Cadence: each cadence is planned as if the other's systems did not
//!    exist, so a group holding only systems of the other cadence is empty for
//!    this one and, like any empty group, carries order through it (and a
//!    system ordered after or before such a group is no SL0003: only a column
//!    naming a system of the other cadence is).
//! 6. A group that contains itself (SL0001): the groups on that containment
//!    cycle are treated as top-level items for everything else.
//! 7. `group=` naming an undeclared group or a system is SL0002 and the item
//!    is then a top-level item.
//! 8. Duplicate stage (or set) names: the first declaration's order number
//!    counts; equal order numbers give no order between the two stages.
//! 9. `after=`/`before=` are GROUP attributes only (the attribute table);
//!    on a SYSTEM line they make it malformed, so the "attribute" of SL0003
//!    never applies (groups have no cadence).
//! 10. `--tree`: the top level is ordered like a group's children; empty
//!     groups (no system at any depth, so no "first system") come after
//!     their non-empty siblings, in declaration order; a system's line is
//!     `name N` or `name N (fixed)`; the overall plan order is the fixed plan
//!     then the variable one.
//! 11. STAGE and SET lines take no attributes (one makes the line
//!     malformed); order numbers compare as numbers (`+3` is `3`).

use std::collections::btree_map::Entry;
use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;

use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::TestRunner;

/// In `Outcome::Errors`: a cyclic component the CLI may report as SL0001
/// or as SL0007 (or both), see AMBIGUITY 4.
pub const EITHER_CYCLE: &str = "SL0001|SL0007";

/// What `sluice plan` must do with a text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Exit 0: the stage view and the `--tree` view.
    Planned { stages: String, tree: String },
    /// Exit 2: the codes of the errors, each reported at least once.
    Errors(BTreeSet<&'static str>),
}

/// What the CLI did with a text.
#[derive(Debug)]
pub struct Run {
    pub status: u8,
    pub stdout: String,
    pub stderr: String,
}

/// Runs `sluice plan [options] reference.plan` on `text` through the CLI's
/// library entry point.
pub fn run_cli(options: &[&str], text: &str) -> Run {
    let mut args: Vec<String> = options.iter().map(|o| o.to_string()).collect();
    args.push("reference.plan".to_owned());
    let (mut stdout, mut stderr) = (Vec::new(), Vec::new());
    let status = sluice_analyzers::plan_cli::run_text(
        &args,
        text.as_bytes(),
        &mut stdout as &mut dyn Write,
        &mut stderr as &mut dyn Write,
    );
    Run {
        status,
        stdout: String::from_utf8(stdout).expect("stdout is UTF-8"),
        stderr: String::from_utf8(stderr).expect("stderr is UTF-8"),
    }
}

/// The codes of the `error[CODE]: ...` lines; `warning[CODE]: ...` lines
/// are passed over, and any other line panics, since every line on stderr
/// must be a diagnostic.
pub fn error_codes(stderr: &str) -> BTreeSet<String> {
    stderr
        .lines()
        .filter(|line| !line.starts_with("warning["))
        .map(|line| {
            let code = line
                .strip_prefix("error[")
                .and_then(|rest| rest.split_once("]: "))
                .map(|(code, _)| code);
            code.unwrap_or_else(|| panic!("not a diagnostic line: {line:?}"))
                .to_owned()
        })
        .collect()
}

/// Checks the CLI against the reference on `text`: the same exit status;
/// when planned, the same stdout, an empty stderr, and the same `--tree`
/// output when `tree`; when not, nothing on stdout and the same set of error codes.
/// `Err` carries a readable account of the first difference.
pub fn compare(text: &str, tree: bool) -> Result<(), String> {
    let expected = plan(text);
    let run = run_cli(&[], text);
    let context = || {
        format!(
            "plan text:\n{text}\nCLI stdout:\n{}\nCLI stderr:\n{}",
            run.stdout, run.stderr
        )
    };
    match expected {
        Outcome::Planned {
            stages,
            tree: expected_tree,
        } => {
            if run.status != 0 || run.stdout != stages || !run.stderr.is_empty() {
                return Err(format!(
                    "expected status 0, stdout\n{stages}\nand nothing on stderr, got status {}\n{}",
                    run.status,
                    context()
                ));
            }
            if tree {
                let tree_run = run_cli(&["--tree"], text);
                if tree_run.status != 0 || tree_run.stdout != expected_tree {
                    return Err(format!(
                        "expected `--tree` output\n{expected_tree}\ngot status {}\n{}\nstderr:\n{}\n{}",
                        tree_run.status,
                        tree_run.stdout,
                        tree_run.stderr,
                        context()
                    ));
                }
            }
        }
        Outcome::Errors(codes) => {
            let expected: BTreeSet<String> = codes.iter().map(|c| c.to_string()).collect();
            if run.status != 2
                || !run.stdout.is_empty()
                || !codes_agree(&codes, &error_codes(&run.stderr))
            {
                return Err(format!(
                    "expected status 2, no stdout and error codes {expected:?}, got status {}\n{}",
                    run.status,
                    context()
                ));
            }
        }
    }
    Ok(())
}

/// The property tests' configuration: proptest's default case count (256,
/// or `PROPTEST_CASES`), a handful under Miri, and no regression files
/// written into the source tree.
pub fn proptest_config() -> proptest::test_runner::Config {
    let default = proptest::test_runner::Config::default();
    proptest::test_runner::Config {
        cases: if cfg!(miri) { 4 } else { default.cases },
        failure_persistence: None,
        ..default
    }
}

/// Whether the CLI's error codes are the expected ones, where
/// `EITHER_CYCLE` stands for SL0001, SL0007 or both.
fn codes_agree(expected: &BTreeSet<&'static str>, found: &BTreeSet<String>) -> bool {
    let cycle = |code: &str| code == "SL0001" || code == "SL0007";
    let definite: BTreeSet<&str> = expected
        .iter()
        .copied()
        .filter(|&c| c != EITHER_CYCLE)
        .collect();
    let found: BTreeSet<&str> = found.iter().map(String::as_str).collect();
    if !expected.contains(EITHER_CYCLE) {
        return found == definite;
    }
    let other = |set: &BTreeSet<&str>| -> BTreeSet<String> {
        set.iter()
            .filter(|c| !cycle(c))
            .map(|c| c.to_string())
            .collect()
    };
    other(&found) == other(&definite)
        && definite
            .iter()
            .filter(|c| cycle(c))
            .all(|c| found.contains(c))
        && found.iter().any(|c| cycle(c))
}

/// A list column or value as written: `-` for none, else names joined by
/// commas.
pub fn list(names: &[String]) -> String {
    if names.is_empty() {
        "-".to_owned()
    } else {
        names.join(",")
    }
}

/// The names `picks` index in `pool`: how generated files name resources.
pub fn names_of(pool: &[&str], picks: &[u8]) -> Vec<String> {
    picks
        .iter()
        .map(|&p| pool[usize::from(p) % pool.len()].to_owned())
        .collect()
}

/// Asserts a hand-derived result: the reference plans `text` into `stages`
/// (and `tree`, when given), and the CLI agrees.
pub fn assert_planned(text: &str, stages: &str, tree: Option<&str>) {
    match plan(text) {
        Outcome::Planned {
            stages: planned,
            tree: planned_tree,
        } => {
            assert_eq!(planned, stages, "reference stages of\n{text}");
            if let Some(tree) = tree {
                assert_eq!(planned_tree, tree, "reference tree of\n{text}");
            }
        }
        errors => panic!("reference rejected\n{text}\n{errors:?}"),
    }
    if let Err(difference) = compare(text, tree.is_some()) {
        panic!("{difference}");
    }
}

/// Asserts hand-derived error codes: the reference rejects `text` with
/// exactly `codes`, and the CLI agrees.
pub fn assert_rejected(text: &str, codes: &[&'static str]) {
    assert_eq!(
        plan(text),
        Outcome::Errors(codes.iter().copied().collect()),
        "reference on\n{text}"
    );
    if let Err(difference) = compare(text, false) {
        panic!("{difference}");
    }
}

/// The reference's outcomes over `count` files drawn from `strategy` with a
/// fixed seed: how many plan, and every error code met. What a test uses to
/// show its generator reaches what it aims at.
pub fn outcome_mix<T>(
    strategy: impl Strategy<Value = T>,
    render: impl Fn(&T) -> String,
    count: usize,
) -> (usize, BTreeSet<&'static str>) {
    let mut runner = TestRunner::deterministic();
    let mut planned = 0;
    let mut codes = BTreeSet::new();
    for _ in 0..count {
        let value = strategy.new_tree(&mut runner).expect("a value").current();
        match plan(&render(&value)) {
            Outcome::Planned { .. } => planned += 1,
            Outcome::Errors(found) => codes.extend(found),
        }
    }
    (planned, codes)
}

const MALFORMED: &str = "SA0100";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Cadence {
    Fixed,
    Variable,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Order {
    First,
    Last,
}

#[derive(Debug, Clone)]
struct System {
    name: String,
    reads: Vec<String>,
    writes: Vec<String>,
    exclusive: bool,
    after: Vec<String>,
    before: Vec<String>,
    group: Option<String>,
    order: Option<Order>,
    stage: Option<String>,
    set: Option<String>,
    /// 0 = pre, 1 = update, 2 = post.
    phase: Option<u8>,
    cadence: Cadence,
}

#[derive(Debug, Clone)]
struct Group {
    name: String,
    group: Option<String>,
    order: Option<Order>,
    after: Vec<String>,
    before: Vec<String>,
}

/// A STAGE or SET line.
#[derive(Debug, Clone)]
struct Level {
    name: String,
    number: i64,
}

#[derive(Debug, Clone)]
enum Decl {
    System(System),
    Group(Group),
    Stage(Level),
    Set(Level),
}

/// The kind of line a malformed line is, when readable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    System,
    Group,
    Stage,
    Set,
}

/// What a malformed line still declares (AMBIGUITY 2): its kind and name,
/// when the first word is a line kind and the second a name (a word holding
/// `=` starts the attributes, so it is no name).
fn malformed_declares(line: &str) -> Option<(Kind, String)> {
    let code = line.split('#').next().unwrap_or("");
    let mut words = code.split([' ', '\t']).filter(|w| !w.is_empty());
    let kind = match words.next()? {
        "SYSTEM" => Kind::System,
        "GROUP" => Kind::Group,
        "STAGE" => Kind::Stage,
        "SET" => Kind::Set,
        _ => return None,
    };
    let name = words.next()?;
    (is_name(name) && !name.contains('=')).then(|| (kind, name.to_owned()))
}

/// A name in the shared namespace of systems and groups.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Item {
    System(usize),
    Group(usize),
}

fn is_name(word: &str) -> bool {
    !word.is_empty() && word != "-" && word != "*" && !word.contains(',')
}

/// `-` or names separated by single commas; `*` is allowed only where
/// `star` (the `writes` column), and AMBIGUITY 3: anywhere else it is
/// malformed.
fn column_list(word: &str, star: bool) -> Option<Vec<String>> {
    if word == "-" {
        return Some(Vec::new());
    }
    let names: Vec<String> = word.split(',').map(str::to_owned).collect();
    names
        .iter()
        .all(|n| is_name(n) || (star && n == "*"))
        .then_some(names)
}

/// A value list of an attribute: names separated by single commas.
fn value_list(value: &str) -> Option<Vec<String>> {
    let names: Vec<String> = value.split(',').map(str::to_owned).collect();
    names.iter().all(|n| is_name(n)).then_some(names)
}

/// The attributes of a line, `None` when any is malformed: no `=`, not in
/// `allowed`, repeated, or with an empty value. Values are checked by the
/// caller.
fn attributes<'a>(words: &[&'a str], allowed: &[&str]) -> Option<BTreeMap<&'a str, &'a str>> {
    let mut found = BTreeMap::new();
    for word in words {
        let (key, value) = word.split_once('=')?;
        if !allowed.contains(&key) || value.is_empty() || found.insert(key, value).is_some() {
            return None;
        }
    }
    Some(found)
}

fn order_value(value: Option<&&str>) -> Result<Option<Order>, ()> {
    match value.copied() {
        None => Ok(None),
        Some("first") => Ok(Some(Order::First)),
        Some("last") => Ok(Some(Order::Last)),
        Some(_) => Err(()),
    }
}

fn name_value(value: Option<&&str>) -> Result<Option<String>, ()> {
    match value {
        None => Ok(None),
        Some(v) if is_name(v) => Ok(Some(v.to_string())),
        Some(_) => Err(()),
    }
}

fn list_value(value: Option<&&str>) -> Result<Vec<String>, ()> {
    match value {
        None => Ok(Vec::new()),
        Some(v) => value_list(v).ok_or(()),
    }
}

/// One line: `Ok(None)` for a blank or comment line, `Err(())` when
/// malformed.
fn parse_line(line: &str) -> Result<Option<Decl>, ()> {
    let code = line.split('#').next().unwrap_or("");
    let words: Vec<&str> = code.split([' ', '\t']).filter(|w| !w.is_empty()).collect();
    let Some((&kind, rest)) = words.split_first() else {
        return Ok(None);
    };
    // "The first word holding `=` starts the attributes."
    let split = rest
        .iter()
        .position(|w| w.contains('='))
        .unwrap_or(rest.len());
    let (columns, attrs) = rest.split_at(split);
    match kind {
        "SYSTEM" => {
            // AMBIGUITY 9: no `after=`/`before=` here.
            let attrs = attributes(
                attrs,
                &["group", "order", "stage", "set", "phase", "cadence"],
            )
            .ok_or(())?;
            if !(4..=5).contains(&columns.len()) || !is_name(columns[0]) {
                return Err(());
            }
            let reads = column_list(columns[1], false).ok_or(())?;
            let writes = column_list(columns[2], true).ok_or(())?;
            let after = column_list(columns[3], false).ok_or(())?;
            let before = match columns.get(4) {
                Some(word) => column_list(word, false).ok_or(())?,
                None => Vec::new(),
            };
            let phase = match attrs.get("phase").copied() {
                None => None,
                Some("pre") => Some(0),
                Some("update") => Some(1),
                Some("post") => Some(2),
                Some(_) => return Err(()),
            };
            let cadence = match attrs.get("cadence").copied() {
                None | Some("variable") => Cadence::Variable,
                Some("fixed") => Cadence::Fixed,
                Some(_) => return Err(()),
            };
            Ok(Some(Decl::System(System {
                name: columns[0].to_owned(),
                exclusive: writes.iter().any(|w| w == "*"),
                writes: writes.into_iter().filter(|w| w != "*").collect(),
                reads,
                after,
                before,
                group: name_value(attrs.get("group"))?,
                order: order_value(attrs.get("order"))?,
                stage: name_value(attrs.get("stage"))?,
                set: name_value(attrs.get("set"))?,
                phase,
                cadence,
            })))
        }
        "GROUP" => {
            let attrs = attributes(attrs, &["group", "order", "after", "before"]).ok_or(())?;
            if columns.len() != 1 || !is_name(columns[0]) {
                return Err(());
            }
            Ok(Some(Decl::Group(Group {
                name: columns[0].to_owned(),
                group: name_value(attrs.get("group"))?,
                order: order_value(attrs.get("order"))?,
                after: list_value(attrs.get("after"))?,
                before: list_value(attrs.get("before"))?,
            })))
        }
        "STAGE" | "SET" => {
            // AMBIGUITY 11: no attributes at all.
            if !attrs.is_empty() || columns.len() != 2 || !is_name(columns[0]) {
                return Err(());
            }
            let digits = columns[1].strip_prefix(['+', '-']).unwrap_or(columns[1]);
            if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                return Err(());
            }
            let number: i64 = columns[1].parse().map_err(|_| ())?;
            let level = Level {
                name: columns[0].to_owned(),
                number,
            };
            Ok(Some(if kind == "STAGE" {
                Decl::Stage(level)
            } else {
                Decl::Set(level)
            }))
        }
        _ => Err(()),
    }
}

/// Stages or sets: their order numbers by name (first declaration wins,
/// AMBIGUITY 8), and whether two share a name or a number (SL0005).
fn levels(lines: &[Level]) -> (BTreeMap<String, i64>, bool) {
    let mut numbers = BTreeMap::new();
    let mut clash = false;
    for (i, level) in lines.iter().enumerate() {
        clash |= lines[..i]
            .iter()
            .any(|l| l.name == level.name || l.number == level.number);
        numbers.entry(level.name.clone()).or_insert(level.number);
    }
    (numbers, clash)
}

/// Everything resolved, ready to build a cadence's constraint graph.
struct Model {
    systems: Vec<System>,
    groups: Vec<Group>,
    names: BTreeMap<String, Item>,
    /// The parent group of each system / group, after dropping unknown
    /// parents and the parents of groups on a containment cycle.
    system_parent: Vec<Option<usize>>,
    group_parent: Vec<Option<usize>>,
    /// Stage and set order numbers of each system, when it has a known one.
    stage_number: Vec<Option<i64>>,
    set_number: Vec<Option<i64>>,
    phases_used: bool,
}

/// Node numbering of a cadence graph: systems first, then the entry and exit
/// nodes of each group. "X precedes group G" is `exit(X) -> entry(G)`; a
/// group's entry precedes each child's entry and each child's exit precedes
/// the group's exit, so an order on a group reaches every system and child
/// group inside it; `entry(G) -> exit(G)` lets an empty group carry order
/// through it.
impl Model {
    fn node_count(&self) -> usize {
        self.systems.len() + 2 * self.groups.len()
    }

    fn entry(&self, item: Item) -> usize {
        match item {
            Item::System(s) => s,
            Item::Group(g) => self.systems.len() + 2 * g,
        }
    }

    fn exit(&self, item: Item) -> usize {
        match item {
            Item::System(s) => s,
            Item::Group(g) => self.systems.len() + 2 * g + 1,
        }
    }

    /// All edges `(from, to, direct)` of the graph of `cadence`: only its
    /// systems take part (AMBIGUITY 5); `direct` marks an `after`/`before`
    /// column between two systems, every other edge comes from organisation.
    fn edges(&self, cadence: Cadence) -> Vec<(usize, usize, bool)> {
        // Every edge first, then only those between nodes of this cadence.
        let mut edges = Vec::new();
        // "`from` must precede `to`".
        let mut precede = |from: Item, to: Item, direct: bool| {
            edges.push((self.exit(from), self.entry(to), direct));
        };
        // The `after`/`before` columns and attributes.
        let orders = self
            .systems
            .iter()
            .enumerate()
            .map(|(s, sys)| (Item::System(s), &sys.after, &sys.before))
            .chain(
                self.groups
                    .iter()
                    .enumerate()
                    .map(|(g, group)| (Item::Group(g), &group.after, &group.before)),
            );
        for (item, after, before) in orders {
            let known = |names: &Vec<String>| -> Vec<Item> {
                names
                    .iter()
                    .filter_map(|n| self.names.get(n).copied())
                    .collect()
            };
            for other in known(after) {
                let direct = matches!((other, item), (Item::System(_), Item::System(_)));
                precede(other, item, direct);
            }
            for other in known(before) {
                let direct = matches!((other, item), (Item::System(_), Item::System(_)));
                precede(item, other, direct);
            }
        }
        // Each item's siblings: `order=first` / `order=last`.
        let items: Vec<(Item, Option<usize>, Option<Order>)> = (0..self.systems.len())
            .map(|s| {
                (
                    Item::System(s),
                    self.system_parent[s],
                    self.systems[s].order,
                )
            })
            .chain(
                (0..self.groups.len())
                    .map(|g| (Item::Group(g), self.group_parent[g], self.groups[g].order)),
            )
            .collect();
        for &(item, parent, order) in &items {
            for &(sibling, sibling_parent, sibling_order) in &items {
                if sibling == item || sibling_parent != parent || sibling_order == order {
                    continue;
                }
                match order {
                    Some(Order::First) => precede(item, sibling, false),
                    Some(Order::Last) => precede(sibling, item, false),
                    None => {}
                }
            }
        }
        // Stages, sets and phases: every member of a lower rank precedes every
        // member of a higher one.
        let phase = |s: usize| {
            self.phases_used
                .then(|| i64::from(self.systems[s].phase.unwrap_or(1)))
        };
        for a in 0..self.systems.len() {
            for b in 0..self.systems.len() {
                let lower = |rank: &dyn Fn(usize) -> Option<i64>| match (rank(a), rank(b)) {
                    (Some(x), Some(y)) => x < y,
                    _ => false,
                };
                if lower(&|s| self.stage_number[s])
                    || lower(&|s| self.set_number[s])
                    || lower(&phase)
                {
                    precede(Item::System(a), Item::System(b), false);
                }
            }
        }
        // Containment: a group's entry precedes each child's entry and each
        // child's exit precedes the group's exit.
        for &(item, parent, _) in &items {
            if let Some(p) = parent {
                edges.push((self.entry(Item::Group(p)), self.entry(item), false));
                edges.push((self.exit(item), self.exit(Item::Group(p)), false));
            }
        }
        for g in 0..self.groups.len() {
            // For a group with systems of this cadence inside, the path
            // through them exists anyway, so this edge only matters for empty
            // ones, which carry order through them.
            edges.push((self.entry(Item::Group(g)), self.exit(Item::Group(g)), false));
        }
        // AMBIGUITY 5: the other cadence's systems do not exist here.
        let present =
            |node: usize| node >= self.systems.len() || self.systems[node].cadence == cadence;
        edges.retain(|&(u, v, _)| present(u) && present(v));
        edges
    }
}

/// `reach[u][v]`: a path of one edge or more from `u` to `v`.
fn closure(n: usize, edges: impl IntoIterator<Item = (usize, usize)>) -> Vec<Vec<bool>> {
    let mut reach = vec![vec![false; n]; n];
    for (u, v) in edges {
        reach[u][v] = true;
    }
    for k in 0..n {
        // Row `k` does not change in its own round (only `k -> k -> j` could
        // add to it), so a copy taken first is the row of this round.
        let via = reach[k].clone();
        for row in reach.iter_mut() {
            if row[k] {
                for (cell, &through) in row.iter_mut().zip(&via) {
                    *cell |= through;
                }
            }
        }
    }
    reach
}

fn conflict(a: &System, b: &System) -> bool {
    let touches = |s: &System, r: &String| s.reads.contains(r) || s.writes.contains(r);
    a.exclusive
        || b.exclusive
        || a.writes.iter().any(|w| touches(b, w))
        || b.writes.iter().any(|w| touches(a, w))
}

/// The reference `sluice plan` of `text`.
pub fn plan(text: &str) -> Outcome {
    let mut errors: BTreeSet<&'static str> = BTreeSet::new();
    let mut systems = Vec::new();
    let mut groups = Vec::new();
    let mut stages = Vec::new();
    let mut sets = Vec::new();
    let mut names: BTreeMap<String, Item> = BTreeMap::new();
    // What malformed lines declare (AMBIGUITY 2), in line order.
    let mut malformed = Vec::new();
    for line in text.lines() {
        let Ok(decl) = parse_line(line) else {
            errors.insert(MALFORMED);
            malformed.extend(malformed_declares(line));
            continue;
        };
        let (name, item) = match decl {
            None => continue,
            Some(Decl::Stage(level)) => {
                stages.push(level);
                continue;
            }
            Some(Decl::Set(level)) => {
                sets.push(level);
                continue;
            }
            Some(Decl::System(system)) => {
                systems.push(system);
                let s = systems.len() - 1;
                (systems[s].name.clone(), Item::System(s))
            }
            Some(Decl::Group(group)) => {
                groups.push(group);
                let g = groups.len() - 1;
                (groups[g].name.clone(), Item::Group(g))
            }
        };
        // AMBIGUITY 1: the duplicate stays a node; the name keeps meaning the
        // first declaration.
        match names.entry(name) {
            Entry::Vacant(vacant) => {
                vacant.insert(item);
            }
            Entry::Occupied(_) => {
                errors.insert("SL0004");
            }
        }
    }

    // AMBIGUITY 2: the names only malformed lines declare. A system or group
    // name maps to its malformed group, `None` for a malformed system; the
    // stage and set names are kept per kind.
    let mut broken: BTreeMap<String, Option<usize>> = BTreeMap::new();
    let mut broken_ranks: BTreeSet<(Kind, String)> = BTreeSet::new();
    for (kind, name) in malformed {
        match kind {
            Kind::System | Kind::Group => {
                if names.contains_key(&name) || broken.contains_key(&name) {
                    continue;
                }
                let group = (kind == Kind::Group).then(|| {
                    groups.push(Group {
                        name: name.clone(),
                        group: None,
                        order: None,
                        after: Vec::new(),
                        before: Vec::new(),
                    });
                    groups.len() - 1
                });
                broken.insert(name, group);
            }
            Kind::Stage | Kind::Set => {
                let good = if kind == Kind::Stage { &stages } else { &sets };
                if !good.iter().any(|level: &Level| level.name == name) {
                    broken_ranks.insert((kind, name));
                }
            }
        }
    }

    // `group=`: a declared group, else SL0002 and top level (AMBIGUITY 7);
    // a malformed group holds its children, a malformed system leaves the
    // item at the top level without an error (AMBIGUITY 2).
    let mut parent_of = |group: &Option<String>| match group {
        None => None,
        Some(name) => match (names.get(name), broken.get(name)) {
            (Some(&Item::Group(g)), _) => Some(g),
            (None, Some(&malformed_group)) => malformed_group,
            _ => {
                errors.insert("SL0002");
                None
            }
        },
    };
    let system_parent: Vec<Option<usize>> = systems.iter().map(|s| parent_of(&s.group)).collect();
    let mut group_parent: Vec<Option<usize>> = groups.iter().map(|g| parent_of(&g.group)).collect();
    // A group that contains itself: SL0001, and the groups on that
    // containment cycle lose their parent (AMBIGUITY 6).
    let on_containment_cycle: Vec<bool> = (0..groups.len())
        .map(|g| {
            let mut at = group_parent[g];
            for _ in 0..groups.len() {
                match at {
                    Some(p) if p == g => return true,
                    Some(p) => at = group_parent[p],
                    None => return false,
                }
            }
            false
        })
        .collect();
    for (g, &cyclic) in on_containment_cycle.iter().enumerate() {
        if cyclic {
            errors.insert("SL0001");
            group_parent[g] = None;
        }
    }

    // Unknown names in `after`/`before`; a column naming a system of the
    // other cadence (SL0003).
    for system in &systems {
        for name in system.after.iter().chain(&system.before) {
            match names.get(name) {
                None if !broken.contains_key(name) => {
                    errors.insert("SL0002");
                }
                Some(&Item::System(other)) if systems[other].cadence != system.cadence => {
                    errors.insert("SL0003");
                }
                // A malformed line's name (AMBIGUITY 2), or a good one.
                None | Some(_) => {}
            }
        }
    }
    for group in &groups {
        for name in group.after.iter().chain(&group.before) {
            if !names.contains_key(name) && !broken.contains_key(name) {
                errors.insert("SL0002");
            }
        }
    }

    // Stages and sets.
    let (stage_numbers, stage_clash) = levels(&stages);
    let (set_numbers, set_clash) = levels(&sets);
    if stage_clash || set_clash {
        errors.insert("SL0005");
    }
    // A stage or set only a malformed line declares: no SL0006, no order
    // (AMBIGUITY 2).
    let mut member = |name: &Option<String>, kind: Kind, numbers: &BTreeMap<String, i64>| match name
    {
        None => {
            if kind == Kind::Stage && !stages.is_empty() {
                errors.insert("SL0006");
            }
            None
        }
        Some(name) => {
            let number = numbers.get(name).copied();
            if number.is_none() && !broken_ranks.contains(&(kind, name.clone())) {
                errors.insert("SL0006");
            }
            number
        }
    };
    let stage_number: Vec<Option<i64>> = systems
        .iter()
        .map(|s| member(&s.stage, Kind::Stage, &stage_numbers))
        .collect();
    let set_number: Vec<Option<i64>> = systems
        .iter()
        .map(|s| member(&s.set, Kind::Set, &set_numbers))
        .collect();

    let model = Model {
        phases_used: systems.iter().any(|s| s.phase.is_some()),
        systems,
        groups,
        names,
        system_parent,
        group_parent,
        stage_number,
        set_number,
    };
    let n = model.node_count();
    let cadences = [Cadence::Fixed, Cadence::Variable];
    let reach: Vec<Vec<Vec<bool>>> = cadences
        .iter()
        .map(|&cadence| {
            let edges = model.edges(cadence);
            let full = closure(n, edges.iter().map(|&(u, v, _)| (u, v)));
            // AMBIGUITY 4: one error per cyclic component, SL0001 when only
            // columns between systems lie inside it, SL0007 when every cycle
            // in it needs an ordering from organisation, and either when it
            // holds both kinds of cycle.
            let direct = closure(n, edges.iter().filter(|e| e.2).map(|&(u, v, _)| (u, v)));
            for u in (0..n).filter(|&u| full[u][u]) {
                let inside = |v: usize| full[u][v] && full[v][u];
                let organisation = edges
                    .iter()
                    .any(|&(x, y, is_direct)| !is_direct && inside(x) && inside(y));
                let columns_alone = (0..n).any(|v| inside(v) && direct[v][v]);
                errors.insert(match (organisation, columns_alone) {
                    (false, _) => "SL0001",
                    (true, false) => "SL0007",
                    (true, true) => EITHER_CYCLE,
                });
            }
            full
        })
        .collect();
    if !errors.is_empty() {
        return Outcome::Errors(errors);
    }

    // Plan order and stages, per cadence.
    let systems = &model.systems;
    let mut stage_of = vec![0usize; systems.len()];
    let mut overall_order = Vec::new();
    let mut stages_text = String::new();
    for (c, &cadence) in cadences.iter().enumerate() {
        let reach = &reach[c];
        let members: Vec<usize> = (0..systems.len())
            .filter(|&s| systems[s].cadence == cadence)
            .collect();
        let mut order: Vec<usize> = Vec::new();
        while order.len() < members.len() {
            let next = members
                .iter()
                .copied()
                .find(|&s| {
                    !order.contains(&s)
                        && members
                            .iter()
                            .all(|&p| p == s || !reach[p][s] || order.contains(&p))
                })
                .expect("no cycle, so some system is ready");
            order.push(next);
        }
        for (i, &s) in order.iter().enumerate() {
            stage_of[s] = order[..i]
                .iter()
                .filter(|&&p| reach[p][s] || conflict(&systems[p], &systems[s]))
                .map(|&p| stage_of[p] + 1)
                .max()
                .unwrap_or(0);
        }
        let prefix = if cadence == Cadence::Fixed {
            "fixed "
        } else {
            ""
        };
        let count = order.iter().map(|&s| stage_of[s] + 1).max().unwrap_or(0);
        for stage in 0..count {
            let in_stage: Vec<&str> = order
                .iter()
                .filter(|&&s| stage_of[s] == stage)
                .map(|&s| systems[s].name.as_str())
                .collect();
            stages_text.push_str(&format!("{prefix}stage {stage}: {}\n", in_stage.join(" ")));
        }
        overall_order.extend(order);
    }

    // `--tree` (AMBIGUITY 10).
    let position = |s: usize| overall_order.iter().position(|&o| o == s).unwrap();
    // A group's first system: the earliest position among systems at any
    // depth inside it.
    let first_system = |g: usize| -> Option<usize> {
        (0..systems.len())
            .filter(|&s| {
                let mut at = model.system_parent[s];
                while let Some(p) = at {
                    if p == g {
                        return true;
                    }
                    at = model.group_parent[p];
                }
                false
            })
            .map(position)
            .min()
    };
    let mut tree = String::new();
    print_children(
        &model,
        None,
        0,
        &position,
        &first_system,
        &stage_of,
        &mut tree,
    );
    Outcome::Planned {
        stages: stages_text,
        tree,
    }
}

/// Appends the children of `parent` (the top level for `None`) at `depth`,
/// ordered by their first system, empty groups last in declaration order.
fn print_children(
    model: &Model,
    parent: Option<usize>,
    depth: usize,
    position: &dyn Fn(usize) -> usize,
    first_system: &dyn Fn(usize) -> Option<usize>,
    stage_of: &[usize],
    out: &mut String,
) {
    // (position or none, declaration order, item)
    let mut children: Vec<(Option<usize>, usize, Item)> = Vec::new();
    for s in 0..model.systems.len() {
        if model.system_parent[s] == parent {
            children.push((Some(position(s)), 0, Item::System(s)));
        }
    }
    for g in 0..model.groups.len() {
        if model.group_parent[g] == parent {
            children.push((first_system(g), g, Item::Group(g)));
        }
    }
    // Non-empty first by position (positions are distinct), then the empty
    // groups by declaration.
    children.sort_by_key(|&(pos, decl, _)| (pos.is_none(), pos, decl));
    let indent = "  ".repeat(depth);
    for (_, _, item) in children {
        match item {
            Item::System(s) => {
                let system = &model.systems[s];
                let fixed = if system.cadence == Cadence::Fixed {
                    " (fixed)"
                } else {
                    ""
                };
                out.push_str(&format!("{indent}{} {}{fixed}\n", system.name, stage_of[s]));
            }
            Item::Group(g) => {
                out.push_str(&format!("{indent}{}\n", model.groups[g].name));
                print_children(
                    model,
                    Some(g),
                    depth + 1,
                    position,
                    first_system,
                    stage_of,
                    out,
                );
            }
        }
    }
}

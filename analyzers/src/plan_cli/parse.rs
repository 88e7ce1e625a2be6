//! The plan text format, line by line: `SYSTEM`, `GROUP`, `STAGE` and `SET`
//! lines with their trailing `attr=value` attributes (`plan-format.md`).
//!
//! A line is either a declaration or malformed; a malformed line keeps the
//! name it would have declared (when it has a readable one) so that the
//! planner can be spared errors that only repeat it.

use sluice::{Cadence, Phase, RankKind, SiblingOrder};

/// What a `SYSTEM` line's columns must be.
pub(super) const SYSTEM_EXPECTED: &str =
    "expected `SYSTEM <name> <reads> <writes> <after> [<before>]`";
#[rustfmt::skip]
const SYSTEM_ATTRIBUTES: &[&str] = &[
    "group", "order", "stage", "set", "phase", "cadence", "append", "commit", "ambiguous_with",
];
const GROUP_EXPECTED: &str = "expected `GROUP <name> [<attr>=<value> ...]`";
const GROUP_ATTRIBUTES: &[&str] = &["group", "order", "after", "before", "ambiguous_with"];
/// Every attribute of the format, on any line kind.
#[rustfmt::skip]
const ATTRIBUTES: &[&str] = &[
    "group", "order", "after", "before", "stage", "set", "phase", "cadence", "append", "commit",
    "ambiguous_with",
];

/// One `SYSTEM` line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct System<'t> {
    pub(super) line: usize,
    pub(super) name: &'t str,
    pub(super) reads: Vec<&'t str>,
    pub(super) writes: Vec<&'t str>,
    pub(super) exclusive: bool,
    pub(super) after: Vec<&'t str>,
    pub(super) before: Vec<&'t str>,
    pub(super) group: Option<&'t str>,
    pub(super) order: Option<SiblingOrder>,
    pub(super) stage: Option<&'t str>,
    pub(super) set: Option<&'t str>,
    pub(super) phase: Option<Phase>,
    pub(super) cadence: Cadence,
    /// `append=`: services the system appends to (issue 20's extension).
    pub(super) append: Vec<&'t str>,
    /// `commit=`: services the system's second point, `<name>@commit`,
    /// gates (issue 20's extension); empty for a one-point system.
    pub(super) commit: Vec<&'t str>,
    /// `ambiguous_with=`: the ambiguities it silences (issue 36's extension).
    pub(super) silenced: Silenced<'t>,
}

/// `ambiguous_with=a,b` (those nodes or groups) or `ambiguous_with=*`
/// (every ambiguity of the system or group).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Silenced<'t> {
    pub(super) with: Vec<&'t str>,
    pub(super) all: bool,
}

/// One `GROUP` line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Group<'t> {
    pub(super) line: usize,
    pub(super) name: &'t str,
    pub(super) parent: Option<&'t str>,
    pub(super) order: Option<SiblingOrder>,
    pub(super) after: Vec<&'t str>,
    pub(super) before: Vec<&'t str>,
    /// `ambiguous_with=`: the ambiguities its members silence.
    pub(super) silenced: Silenced<'t>,
}

/// One `STAGE` or `SET` line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Rank<'t> {
    pub(super) line: usize,
    pub(super) kind: RankKind,
    pub(super) name: &'t str,
    pub(super) order: i64,
}

/// The name a malformed line would have declared.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Declares<'t> {
    /// A system.
    System(&'t str),
    /// A group (systems and groups share one namespace).
    Group(&'t str),
    /// A stage or set.
    Rank(RankKind, &'t str),
}

/// A malformed line: its number, what was expected, and the name it would
/// have declared when that much is readable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Malformed<'t> {
    pub(super) line: usize,
    pub(super) message: String,
    pub(super) declares: Option<Declares<'t>>,
}

/// Every line of a file, sorted by kind, each kind in line order.
#[derive(Debug, Default)]
pub(super) struct Parsed<'t> {
    pub(super) systems: Vec<System<'t>>,
    pub(super) groups: Vec<Group<'t>>,
    /// Stages and sets together, in line order (the order of
    /// `Organisation::ranks`).
    pub(super) ranks: Vec<Rank<'t>>,
    pub(super) malformed: Vec<Malformed<'t>>,
}

enum Declaration<'t> {
    System(System<'t>),
    Group(Group<'t>),
    Rank(Rank<'t>),
}

/// Parses every line, keeping the good declarations and every malformed one.
pub(super) fn parse(text: &str) -> Parsed<'_> {
    let mut parsed = Parsed::default();
    for (index, raw) in text.lines().enumerate() {
        let line = index + 1;
        let content = raw.split('#').next().unwrap_or("");
        let words: Vec<&str> = content.split_whitespace().collect();
        if words.is_empty() {
            continue;
        }
        match parse_words(line, &words) {
            Ok(Declaration::System(system)) => parsed.systems.push(system),
            Ok(Declaration::Group(group)) => parsed.groups.push(group),
            Ok(Declaration::Rank(rank)) => parsed.ranks.push(rank),
            Err(message) => parsed.malformed.push(Malformed {
                line,
                message,
                declares: declares(&words),
            }),
        }
    }
    parsed
}

/// The most characters of a word of the file an error message quotes.
const SHOWN_CHARS: usize = 48;

/// A word of the file as an error message quotes it: control characters
/// escaped (binary input prints as text), and cut after [`SHOWN_CHARS`]
/// characters with `...` (a line may be megabytes long).
pub(super) struct Shown<'t>(pub(super) &'t str);

impl std::fmt::Display for Shown<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        use std::fmt::Write;
        for (at, c) in self.0.chars().enumerate() {
            if at == SHOWN_CHARS {
                return f.write_str("...");
            }
            if c.is_control() {
                write!(f, "{}", c.escape_default())?;
            } else {
                f.write_char(c)?;
            }
        }
        Ok(())
    }
}

/// The name a malformed line would have declared: its second word, when the
/// first is a line kind and the second could be a name.
fn declares<'t>(words: &[&'t str]) -> Option<Declares<'t>> {
    let name = *words.get(1)?;
    if !is_name(name) {
        return None;
    }
    match words[0] {
        "SYSTEM" => Some(Declares::System(name)),
        "GROUP" => Some(Declares::Group(name)),
        "STAGE" => Some(Declares::Rank(RankKind::Stage, name)),
        "SET" => Some(Declares::Rank(RankKind::Set, name)),
        _ => None,
    }
}

/// A name of a system, group, stage or set: not `-`, no list separator, no
/// `*` (exclusive), no `=` (attributes).
fn is_name(word: &str) -> bool {
    !word.is_empty() && word != "-" && !word.contains([',', '*', '='])
}

fn parse_words<'t>(line: usize, words: &[&'t str]) -> Result<Declaration<'t>, String> {
    let rest = &words[1..];
    // "The first word holding `=` starts the attributes."
    let split = rest
        .iter()
        .position(|w| w.contains('='))
        .unwrap_or(rest.len());
    let (columns, attributes) = rest.split_at(split);
    match words[0] {
        "SYSTEM" => system(line, columns, attributes).map(Declaration::System),
        "GROUP" => group(line, columns, attributes).map(Declaration::Group),
        "STAGE" => rank(line, RankKind::Stage, columns, attributes).map(Declaration::Rank),
        "SET" => rank(line, RankKind::Set, columns, attributes).map(Declaration::Rank),
        other => Err(format!(
            "expected a `SYSTEM`, `GROUP`, `STAGE` or `SET` line, found `{}`",
            Shown(other)
        )),
    }
}

/// A column list: `-` or names separated by single commas; `*` only where
/// `star` (the `writes` column).
fn column_list<'t>(column: &str, word: &'t str, star: bool) -> Result<Vec<&'t str>, String> {
    if word == "-" {
        return Ok(Vec::new());
    }
    let items: Vec<&str> = word.split(',').collect();
    if items.iter().any(|item| item.is_empty() || *item == "-") {
        return Err(format!(
            "{SYSTEM_EXPECTED}: `{column}` is `-` or names separated by single commas, found \
             `{}`",
            Shown(word)
        ));
    }
    if !star && items.contains(&"*") {
        return Err(format!(
            "{SYSTEM_EXPECTED}: `*` (exclusive) belongs in `writes`, found it in `{column}`"
        ));
    }
    Ok(items)
}

/// The name of a SYSTEM or GROUP line (`what`: `system` or `group`), once
/// its column count `fits`; else `{expected}: {wanted}, found N`, saying
/// where the attributes began when the line has some (a word with `=` ends
/// the columns).
fn named<'t>(
    (expected, what): (&str, &str),
    (fits, wanted): (bool, &str),
    columns: &[&'t str],
    attributes: &[&str],
) -> Result<&'t str, String> {
    if !fits {
        let hint = if attributes.is_empty() {
            ""
        } else {
            " (the attributes start at the first word holding `=`)"
        };
        return Err(format!(
            "{expected}: {wanted}, found {}{hint}",
            columns.len()
        ));
    }
    let name = columns[0];
    if !is_name(name) {
        return Err(format!(
            "{expected}: a {what} name, found `{}`",
            Shown(name)
        ));
    }
    Ok(name)
}

fn system<'t>(
    line: usize,
    columns: &[&'t str],
    attributes: &[&'t str],
) -> Result<System<'t>, String> {
    let name = named(
        (SYSTEM_EXPECTED, "system"),
        (
            (4..=5).contains(&columns.len()),
            "4 or 5 columns after `SYSTEM`",
        ),
        columns,
        attributes,
    )?;
    let reads = column_list("reads", columns[1], false)?;
    let mut writes = column_list("writes", columns[2], true)?;
    let exclusive = writes.contains(&"*");
    writes.retain(|&w| w != "*");
    let after = column_list("after", columns[3], false)?;
    let before = match columns.get(4) {
        Some(word) => column_list("before", word, false)?,
        None => Vec::new(),
    };
    let attributes = Attributes::parse("SYSTEM", SYSTEM_ATTRIBUTES, attributes)?;
    Ok(System {
        line,
        name,
        reads,
        writes,
        exclusive,
        after,
        before,
        group: attributes.name("group")?,
        order: attributes.order()?,
        stage: attributes.name("stage")?,
        set: attributes.name("set")?,
        phase: attributes.choice(
            "phase",
            &[
                ("pre", Phase::PreUpdate),
                ("update", Phase::Update),
                ("post", Phase::PostUpdate),
            ],
        )?,
        cadence: attributes
            .choice(
                "cadence",
                &[("fixed", Cadence::Fixed), ("variable", Cadence::Variable)],
            )?
            .unwrap_or_default(),
        append: attributes.list("append")?,
        commit: attributes.list("commit")?,
        silenced: attributes.silenced()?,
    })
}

fn group<'t>(
    line: usize,
    columns: &[&'t str],
    attributes: &[&'t str],
) -> Result<Group<'t>, String> {
    let name = named(
        (GROUP_EXPECTED, "group"),
        (columns.len() == 1, "1 column after `GROUP`"),
        columns,
        attributes,
    )?;
    let attributes = Attributes::parse("GROUP", GROUP_ATTRIBUTES, attributes)?;
    Ok(Group {
        line,
        name,
        parent: attributes.name("group")?,
        order: attributes.order()?,
        after: attributes.list("after")?,
        before: attributes.list("before")?,
        silenced: attributes.silenced()?,
    })
}

fn rank<'t>(
    line: usize,
    kind: RankKind,
    columns: &[&'t str],
    attributes: &[&'t str],
) -> Result<Rank<'t>, String> {
    let keyword = match kind {
        RankKind::Stage => "STAGE",
        RankKind::Set => "SET",
    };
    let expected = format!("expected `{keyword} <name> <order>`");
    if let Some(attribute) = attributes.first() {
        return Err(format!(
            "{expected}: a {keyword} line takes no attributes, found `{}`",
            Shown(attribute)
        ));
    }
    if columns.len() != 2 {
        return Err(format!(
            "{expected}: 2 columns after `{keyword}`, found {}",
            columns.len()
        ));
    }
    let name = columns[0];
    if !is_name(name) {
        return Err(format!(
            "{expected}: a {} name, found `{}`",
            kind.name(),
            Shown(name)
        ));
    }
    let number = columns[1];
    let digits = number.strip_prefix(['+', '-']).unwrap_or(number);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!(
            "{expected}: an order number (an optionally signed decimal integer), found \
             `{}`",
            Shown(number)
        ));
    }
    let order = number.parse::<i64>().map_err(|_| {
        format!(
            "{expected}: an order number from {} to {}, found `{}`",
            i64::MIN,
            i64::MAX,
            Shown(number)
        )
    })?;
    Ok(Rank {
        line,
        kind,
        name,
        order,
    })
}

/// The attributes of one line, each key once, each value non-empty.
struct Attributes<'t> {
    /// `SYSTEM` or `GROUP`.
    keyword: &'static str,
    /// The attributes that line kind takes.
    allowed: &'static [&'static str],
    found: Vec<(&'t str, &'t str)>,
}

impl<'t> Attributes<'t> {
    fn parse(
        keyword: &'static str,
        allowed: &'static [&'static str],
        words: &[&'t str],
    ) -> Result<Self, String> {
        let attributes = Self {
            keyword,
            allowed,
            found: Vec::with_capacity(words.len()),
        };
        let mut attributes = attributes;
        for &word in words {
            let Some((key, value)) = word.split_once('=') else {
                return Err(attributes.expected(format!(
                    "`{}` follows the attributes but is no `<attr>=<value>`",
                    Shown(word)
                )));
            };
            if !allowed.contains(&key) {
                let problem = if ATTRIBUTES.contains(&key) {
                    let hint = match key {
                        "after" | "before" => {
                            " (a SYSTEM line orders with its `after` and `before` columns)"
                        }
                        _ => " (stages, sets, phases and cadences are per system)",
                    };
                    format!("`{key}=` is not an attribute of a {keyword} line{hint}")
                } else {
                    format!("unknown attribute `{}=`", Shown(key))
                };
                return Err(attributes.expected(problem));
            }
            if attributes.found.iter().any(|&(k, _)| k == key) {
                return Err(attributes.expected(format!("`{key}=` appears twice")));
            }
            if value.is_empty() {
                return Err(attributes.expected(format!("`{key}=` has an empty value")));
            }
            attributes.found.push((key, value));
        }
        Ok(attributes)
    }

    /// `expected SYSTEM attributes `group=`, ...: {problem}`.
    fn expected(&self, problem: String) -> String {
        let list: Vec<String> = self.allowed.iter().map(|a| format!("`{a}=`")).collect();
        format!(
            "expected {} attributes among {}: {problem}",
            self.keyword,
            list.join(", ")
        )
    }

    fn get(&self, key: &str) -> Option<&'t str> {
        self.found.iter().find(|&&(k, _)| k == key).map(|&(_, v)| v)
    }

    /// A value that is one name (`group=G`, `stage=S`, `set=T`).
    fn name(&self, key: &str) -> Result<Option<&'t str>, String> {
        match self.get(key) {
            Some(value) if !is_name(value) => {
                Err(self.expected(format!("`{key}=` takes one name, found `{}`", Shown(value))))
            }
            value => Ok(value),
        }
    }

    /// A value that is names separated by single commas (`after=a,b`).
    fn list(&self, key: &str) -> Result<Vec<&'t str>, String> {
        match self.get(key) {
            None => Ok(Vec::new()),
            Some(value) => {
                let items: Vec<&str> = value.split(',').collect();
                if items.iter().all(|item| is_name(item)) {
                    Ok(items)
                } else {
                    Err(self.expected(format!(
                        "`{key}=` takes names separated by single commas, found `{}`",
                        Shown(value)
                    )))
                }
            }
        }
    }

    /// `ambiguous_with=`: names, or `*` for all.
    fn silenced(&self) -> Result<Silenced<'t>, String> {
        if self.get("ambiguous_with") == Some("*") {
            return Ok(Silenced {
                with: Vec::new(),
                all: true,
            });
        }
        Ok(Silenced {
            with: self.list("ambiguous_with")?,
            all: false,
        })
    }

    /// A value among `choices`.
    fn choice<T: Copy>(&self, key: &str, choices: &[(&str, T)]) -> Result<Option<T>, String> {
        let Some(value) = self.get(key) else {
            return Ok(None);
        };
        match choices.iter().find(|&&(word, _)| word == value) {
            Some(&(_, choice)) => Ok(Some(choice)),
            None => {
                let words: Vec<String> = choices.iter().map(|(w, _)| format!("`{w}`")).collect();
                let words = match words.split_last() {
                    Some((last, rest)) if !rest.is_empty() => {
                        format!("{} or {last}", rest.join(", "))
                    }
                    _ => words.join(""),
                };
                Err(self.expected(format!("`{key}=` takes {words}, found `{}`", Shown(value))))
            }
        }
    }

    /// `order=first` / `order=last`.
    fn order(&self) -> Result<Option<SiblingOrder>, String> {
        self.choice(
            "order",
            &[("first", SiblingOrder::First), ("last", SiblingOrder::Last)],
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_lists_comments_and_exclusive() {
        let parsed = parse("# header\n\nSYSTEM a  X,Y\t*  -  b # trailing\nSYSTEM b - Z c\n");
        assert!(parsed.malformed.is_empty());
        let declarations = &parsed.systems;
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
        let parsed =
            parse("SYSTEM a - -\nSYS b - - -\nSYSTEM - - - -\nSYSTEM c A,,B - -\nSYSTEM d * - -\n");
        assert!(parsed.systems.is_empty());
        let malformed = &parsed.malformed;
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
        let declares: Vec<Option<Declares<'_>>> = malformed.iter().map(|m| m.declares).collect();
        assert_eq!(
            declares,
            [
                Some(Declares::System("a")),
                None,
                None,
                Some(Declares::System("c")),
                Some(Declares::System("d")),
            ]
        );
    }

    #[test]
    fn parses_attributes_groups_stages_and_sets() {
        let parsed = parse(
            "SYSTEM a - - - b group=G order=last stage=S set=T phase=pre cadence=fixed\n\
             GROUP G group=Outer order=first after=x,y before=z\n\
             STAGE S -3\nSET T +7\nGROUP Outer\n",
        );
        assert!(parsed.malformed.is_empty(), "{:?}", parsed.malformed);
        let a = &parsed.systems[0];
        assert_eq!(a.before, ["b"]);
        assert_eq!(
            (a.group, a.order, a.stage, a.set),
            (Some("G"), Some(SiblingOrder::Last), Some("S"), Some("T"))
        );
        assert_eq!(
            (a.phase, a.cadence),
            (Some(Phase::PreUpdate), Cadence::Fixed)
        );
        let g = &parsed.groups[0];
        assert_eq!(
            (g.name, g.parent, g.order),
            ("G", Some("Outer"), Some(SiblingOrder::First))
        );
        assert_eq!(
            (g.after.as_slice(), g.before.as_slice()),
            (&["x", "y"][..], &["z"][..])
        );
        assert_eq!(parsed.groups[1].name, "Outer");
        let ranks: Vec<(RankKind, &str, i64)> = parsed
            .ranks
            .iter()
            .map(|r| (r.kind, r.name, r.order))
            .collect();
        assert_eq!(ranks, [(RankKind::Stage, "S", -3), (RankKind::Set, "T", 7)]);
    }

    #[test]
    fn malformed_attributes_say_what_was_expected() {
        let cases = [
            ("SYSTEM a - - - colour=red", "unknown attribute `colour=`"),
            (
                "SYSTEM a - - - after=b",
                "`after=` is not an attribute of a SYSTEM line",
            ),
            (
                "GROUP G stage=S",
                "`stage=` is not an attribute of a GROUP line",
            ),
            (
                "SYSTEM a - - - order=first order=last",
                "`order=` appears twice",
            ),
            ("SYSTEM a - - - group=", "`group=` has an empty value"),
            (
                "SYSTEM a - - - order=middle",
                "`order=` takes `first` or `last`, found `middle`",
            ),
            (
                "SYSTEM a - - - phase=during",
                "`phase=` takes `pre`, `update` or `post`, found `during`",
            ),
            (
                "SYSTEM a - - - group=A,B",
                "`group=` takes one name, found `A,B`",
            ),
            (
                "GROUP G after=a,,b",
                "names separated by single commas, found `a,,b`",
            ),
            (
                "SYSTEM a - - - phase=pre extra",
                "`extra` follows the attributes",
            ),
            (
                "SYSTEM a - - order=first",
                "found 3 (the attributes start at the first word",
            ),
            ("GROUP G H", "1 column after `GROUP`, found 2"),
            (
                "STAGE S 1 group=G",
                "a STAGE line takes no attributes, found `group=G`",
            ),
            (
                "STAGE S one",
                "an order number (an optionally signed decimal integer), found `one`",
            ),
            ("SET T 1.5", "found `1.5`"),
            ("SET T +", "found `+`"),
            ("STAGE S 99999999999999999999", "an order number from"),
            ("STAGE S", "2 columns after `STAGE`, found 1"),
        ];
        for (line, expected) in cases {
            let parsed = parse(line);
            assert_eq!(parsed.malformed.len(), 1, "{line}");
            let message = &parsed.malformed[0].message;
            assert!(message.contains(expected), "{line}: {message}");
        }
        let declares = |line| parse(line).malformed[0].declares;
        assert_eq!(declares("GROUP G stage=S"), Some(Declares::Group("G")));
        assert_eq!(
            declares("STAGE S one"),
            Some(Declares::Rank(RankKind::Stage, "S"))
        );
        assert_eq!(declares("SYSTEM order=first - - -"), None);
    }
}

//! The node attributes and their arguments:
//! `#[system(after = "spawner", before = Render, name = "hud", exclusive, allow_locks = "why", run_if = enabled)]`,
//! and the organisation of a system or factory:
//! `#[system(phase = PreUpdate, group = "Physics", stage = "Early", set = "Audio", cadence = Fixed,
//! schedule = Startup, order = -1, order_first, key = "ai::update#2")]`.

use proc_macro2::{Span, TokenStream};
use syn::parse::Parser;
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::{Attribute, Expr, ExprLit, Lit, LitStr, Meta, Path, Token};

use crate::code::Code;
use crate::diagnostic::Diagnostic;

/// Which attribute declared the function.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NodeKind {
    /// `#[system]`: runs once per iteration; `&T` shared, `&mut T` gated.
    System,
    /// `#[factory]`: consumes `&T`, produces its return type and `Out<T>`
    /// parameters; `Next<T>` for the next iteration.
    Factory,
    /// `#[run_condition]`: read-only, returns `bool`.
    RunCondition,
}

impl NodeKind {
    /// The attribute's name: `"system"`, `"factory"`, `"run_condition"`.
    pub fn attribute_name(self) -> &'static str {
        match self {
            NodeKind::System => "system",
            NodeKind::Factory => "factory",
            NodeKind::RunCondition => "run_condition",
        }
    }

    /// The kind named by an attribute's path (`system`, `sluice::system`), or
    /// `None` for any other attribute.
    pub fn from_path(path: &Path) -> Option<NodeKind> {
        let last = path.segments.last()?.ident.to_string();
        match last.as_str() {
            "system" => Some(NodeKind::System),
            "factory" => Some(NodeKind::Factory),
            "run_condition" => Some(NodeKind::RunCondition),
            _ => None,
        }
    }

    /// The keys this kind accepts.
    pub fn keys(self) -> &'static [&'static str] {
        match self {
            NodeKind::System | NodeKind::Factory => &[
                "after",
                "before",
                "name",
                "key",
                "exclusive",
                "allow_locks",
                "run_if",
                "phase",
                "group",
                "stage",
                "set",
                "cadence",
                "schedule",
                "order",
                "order_first",
                "order_last",
                "ambiguous_with",
                "ambiguous_with_all",
            ],
            NodeKind::RunCondition => &["name", "allow_locks"],
        }
    }
}

/// What an `after`/`before` names: a node by its name or a marker by its type.
#[derive(Clone, Debug)]
pub enum OrderTarget {
    /// `after = "spawner"`: a node's name (its function's name or `name = ".."`).
    Name(LitStr),
    /// `after = PreUpdate`: a marker type (a phase, a unit struct).
    Marker(Path),
}

impl OrderTarget {
    /// The name as written: the string's value, or the path's last segment.
    pub fn name(&self) -> String {
        match self {
            OrderTarget::Name(lit) => lit.value(),
            OrderTarget::Marker(path) => path
                .segments
                .last()
                .map(|s| s.ident.to_string())
                .unwrap_or_default(),
        }
    }

    /// The span of the value.
    pub fn span(&self) -> Span {
        match self {
            OrderTarget::Name(lit) => lit.span(),
            OrderTarget::Marker(path) => path.span(),
        }
    }
}

/// A value [`parse_args`] checked, and where it was written.
#[derive(Clone, Copy, Debug)]
pub struct Given<T> {
    /// The value.
    pub value: T,
    /// The span of the value as written (for a flag, the flag itself).
    pub span: Span,
}

/// `phase = ..`: one of the runtime's three built-in phases.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Phase {
    /// `PreUpdate`: before the update proper.
    PreUpdate,
    /// `Update`: the update proper, every node's phase when it names none.
    Update,
    /// `PostUpdate`: after the update.
    PostUpdate,
}

impl Phase {
    /// Every phase, in order.
    pub const ALL: [Phase; 3] = [Phase::PreUpdate, Phase::Update, Phase::PostUpdate];

    /// The phase's name as written in code (`PreUpdate`), which is also the
    /// variant of `sluice::Phase` and the marker an ordering may target.
    pub const fn name(self) -> &'static str {
        match self {
            Phase::PreUpdate => "PreUpdate",
            Phase::Update => "Update",
            Phase::PostUpdate => "PostUpdate",
        }
    }
}

/// `cadence = ..`: how often the node runs within an update.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Cadence {
    /// `Variable`: once per update (the default).
    Variable,
    /// `Fixed`: once per whole fixed step, in a plan of its own.
    Fixed,
}

impl Cadence {
    /// Every cadence.
    pub const ALL: [Cadence; 2] = [Cadence::Fixed, Cadence::Variable];

    /// The variant's name (`Fixed`), as in `sluice::Cadence`.
    pub fn name(self) -> &'static str {
        match self {
            Cadence::Variable => "Variable",
            Cadence::Fixed => "Fixed",
        }
    }
}

/// `schedule = ..`: the schedule of its world the node belongs to.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Schedule {
    /// `schedule = Update`: run by every update (the default).
    Update,
    /// `schedule = Startup`: runs once, before the first update.
    Startup,
    /// `schedule = "Save"`: a named schedule the game runs on demand.
    Named(String),
}

/// `order_first` / `order_last`: the node's place among its siblings.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SiblingOrder {
    /// `order_first`: before every sibling that is not `order_first`.
    First,
    /// `order_last`: after every sibling that is not `order_last`.
    Last,
}

impl SiblingOrder {
    /// The flag as written: `order_first` or `order_last`.
    pub fn key(self) -> &'static str {
        match self {
            SiblingOrder::First => "order_first",
            SiblingOrder::Last => "order_last",
        }
    }
}

/// The parsed arguments of a node attribute. Invalid arguments are left out
/// and reported as [`Code::InvalidAttribute`] by [`parse_args`].
#[derive(Clone, Debug, Default)]
pub struct NodeArgs {
    /// `name = ".."`: the node's name instead of the function's.
    pub name: Option<LitStr>,
    /// `key = ".."`: the instance key (by default, the function's qualified
    /// path), for the same function registered twice.
    pub key: Option<LitStr>,
    /// Every `after = ..`, in order.
    pub after: Vec<OrderTarget>,
    /// Every `before = ..`, in order.
    pub before: Vec<OrderTarget>,
    /// `exclusive`: the node gates the whole world.
    pub exclusive: bool,
    /// `allow_locks = "reason"`: the opt-out of [`Code::LockInBody`].
    pub allow_locks: Option<LitStr>,
    /// Every `run_if = path`, in order: run conditions (functions declared
    /// with `#[run_condition]`) that must all hold for the node to run.
    pub run_if: Vec<Path>,
    /// `phase = PreUpdate`: the node's phase.
    pub phase: Option<Given<Phase>>,
    /// `group = "Physics"`: the group the node is a child of.
    pub group: Option<LitStr>,
    /// `stage = "Early"`: the stage the node is a member of.
    pub stage: Option<LitStr>,
    /// `set = "Audio"`: the set the node is a member of.
    pub set: Option<LitStr>,
    /// `cadence = Fixed`: the node's cadence.
    pub cadence: Option<Given<Cadence>>,
    /// `schedule = Startup` / `schedule = "Save"`: the node's schedule.
    pub schedule: Option<Given<Schedule>>,
    /// `order = -1`: the tie-break among nodes nothing else orders.
    pub order: Option<Given<i32>>,
    /// `order_first` / `order_last`.
    pub sibling: Option<Given<SiblingOrder>>,
    /// Every `ambiguous_with = "name"`, in order: systems or groups whose
    /// ambiguities (SL0008) with this node are silenced on purpose.
    pub ambiguous_with: Vec<LitStr>,
    /// `ambiguous_with_all`: every ambiguity of this node is silenced.
    pub ambiguous_with_all: bool,
}

fn invalid(span: Span, message: impl Into<String>, help: impl Into<String>) -> Diagnostic {
    Diagnostic::new(Code::InvalidAttribute, span, message, help)
}

fn string_value(expr: &Expr) -> Option<LitStr> {
    match expr {
        Expr::Lit(ExprLit {
            lit: Lit::Str(s), ..
        }) => Some(s.clone()),
        _ => None,
    }
}

/// A non-empty string for `key` (`group = "Physics"`); `what` says what it
/// names, `example` is a valid value.
fn label_value(key: &str, value: &Expr, what: &str, example: &str) -> Result<LitStr, Diagnostic> {
    match string_value(value) {
        Some(lit) if !lit.value().trim().is_empty() => Ok(lit),
        Some(lit) => Err(invalid(
            lit.span(),
            format!("`{key}` is empty"),
            format!("name the {what}, e.g. `{key} = \"{example}\"`, or leave `{key}` out"),
        )),
        None => Err(invalid(
            value.span(),
            format!("`{key}` must be a string: the name of the {what}"),
            format!("write `{key} = \"{example}\"`"),
        )),
    }
}

/// The last segment of a plain path (`sluice::Phase::PreUpdate` ->
/// `PreUpdate`) and its span (the token a wrong value is reported on), or
/// `None` for any other expression.
fn path_name(value: &Expr) -> Option<(String, Span)> {
    match value {
        Expr::Path(p) if p.qself.is_none() => p
            .path
            .segments
            .last()
            .map(|s| (s.ident.to_string(), s.ident.span())),
        _ => None,
    }
}

/// `a`, `a and b`, `a, b and c`, each in backticks.
fn listed(names: &[&str]) -> String {
    let quoted: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
    match quoted.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
        _ => quoted.concat(),
    }
}

/// `phase = ..` / `cadence = ..`: a path whose last segment is one of
/// `choices` (by [`name`]); `what` is `phase` or `cadence`.
fn variant_value<T: Copy>(
    key: &str,
    value: &Expr,
    what: &str,
    choices: &[T],
    name: impl Fn(T) -> &'static str,
) -> Result<Given<T>, Diagnostic> {
    let names: Vec<&str> = choices.iter().map(|&c| name(c)).collect();
    let first = names.first().copied().unwrap_or_default();
    let help = format!(
        "the {what}s are {}: write `{key} = {first}`",
        listed(&names)
    );
    let Some((written, span)) = path_name(value) else {
        let message = match string_value(value) {
            Some(lit) if names.contains(&lit.value().as_str()) => format!(
                "`{key}` is a path, not a string: write `{key} = {}`",
                lit.value()
            ),
            _ => format!("`{key}` must be one of {}", listed(&names)),
        };
        return Err(invalid(value.span(), message, help));
    };
    match choices.iter().find(|&&c| name(c) == written) {
        Some(&found) => Ok(Given { value: found, span }),
        None => Err(invalid(span, format!("`{written}` is not a {what}"), help)),
    }
}

/// `schedule = Startup` / `schedule = Update` (paths, the built-in
/// schedules) or `schedule = "Save"` (a named one).
fn schedule_value(value: &Expr) -> Result<Given<Schedule>, Diagnostic> {
    let span = value.span();
    let builtin = |name: &str| match name {
        "Startup" => Some(Schedule::Startup),
        "Update" => Some(Schedule::Update),
        _ => None,
    };
    if let Some((written, at)) = path_name(value) {
        return match builtin(&written) {
            Some(value) => Ok(Given { value, span: at }),
            None => Err(invalid(
                at,
                format!("`{written}` is not a built-in schedule"),
                format!(
                    "the built-in schedules are `Startup` and `Update`; a schedule of your own is named by a string: `schedule = \"{written}\"`"
                ),
            )),
        };
    }
    match string_value(value) {
        Some(lit) if lit.value().trim().is_empty() => Err(invalid(
            lit.span(),
            "`schedule` is empty",
            "name the schedule, e.g. `schedule = \"Save\"`, or leave `schedule` out to run in every update",
        )),
        Some(lit) if builtin(&lit.value()).is_some() => Err(invalid(
            lit.span(),
            format!(
                "`schedule = \"{0}\"` names the built-in schedule `{0}` as a string; built-in schedules are written as paths",
                lit.value()
            ),
            format!(
                "write `schedule = {}` for the built-in schedule",
                lit.value()
            ),
        )),
        Some(lit) => Ok(Given {
            value: Schedule::Named(lit.value()),
            span,
        }),
        None => Err(invalid(
            span,
            "`schedule` must be `Startup`, `Update` or a string naming a schedule",
            "write `schedule = Startup`, or `schedule = \"Save\"` for a schedule the game runs with `world.run_schedule(\"Save\")`",
        )),
    }
}

/// `order = 3` / `order = -1`: an integer literal that fits an `i32`.
fn order_value(value: &Expr) -> Result<Given<i32>, Diagnostic> {
    let help = "write an integer from -2147483648 to 2147483647, e.g. `order = -1`: among nodes nothing else orders, lower runs first";
    let int = |expr: &Expr| match expr {
        Expr::Lit(ExprLit {
            lit: Lit::Int(lit), ..
        }) => Some(lit.clone()),
        _ => None,
    };
    let written = match value {
        Expr::Unary(syn::ExprUnary {
            op: syn::UnOp::Neg(_),
            expr,
            ..
        }) => int(expr).map(|lit| (true, lit)),
        other => int(other).map(|lit| (false, lit)),
    };
    let Some((negative, lit)) = written else {
        return Err(invalid(
            value.span(),
            "`order` must be an integer literal",
            help,
        ));
    };
    if !matches!(lit.suffix(), "" | "i32") {
        return Err(invalid(
            lit.span(),
            format!(
                "`order` is an `i32`; the suffix `{}` does not fit it",
                lit.suffix()
            ),
            format!("drop the suffix: `order = {}`", lit.base10_digits()),
        ));
    }
    let digits = lit.base10_digits();
    let text = if negative {
        format!("-{digits}")
    } else {
        digits.to_owned()
    };
    match text.parse::<i32>() {
        Ok(order) => Ok(Given {
            value: order,
            span: value.span(),
        }),
        Err(_) => Err(invalid(
            lit.span(),
            format!("`order = {text}` does not fit in an `i32`"),
            help,
        )),
    }
}

/// Parses the arguments of a `kind` attribute (the tokens between its
/// parentheses, as a macro receives them). Always returns what it could
/// understand, with one [`Code::InvalidAttribute`] diagnostic per problem.
pub fn parse_args(kind: NodeKind, tokens: TokenStream) -> (NodeArgs, Vec<Diagnostic>) {
    let mut args = NodeArgs::default();
    let mut diagnostics = Vec::new();
    if tokens.is_empty() {
        return (args, diagnostics);
    }
    let metas = match Punctuated::<Meta, Token![,]>::parse_terminated.parse2(tokens) {
        Ok(metas) => metas,
        Err(e) => {
            diagnostics.push(invalid(
                e.span(),
                format!("cannot parse the arguments of #[{}]: {e}", kind.attribute_name()),
                "write `key = value` pairs separated by commas, e.g. `after = \"spawner\", exclusive`",
            ));
            return (args, diagnostics);
        }
    };
    let mut seen: Vec<String> = Vec::new();
    for meta in metas {
        let path = meta.path();
        let key = path.get_ident().map(|i| i.to_string()).unwrap_or_else(|| {
            quote::ToTokens::to_token_stream(path)
                .to_string()
                .replace(' ', "")
        });
        if !kind.keys().contains(&key.as_str()) {
            diagnostics.push(invalid(
                path.span(),
                format!("unknown key `{key}` in #[{}]", kind.attribute_name()),
                format!(
                    "the keys #[{}] accepts are: {}",
                    kind.attribute_name(),
                    kind.keys().join(", ")
                ),
            ));
            continue;
        }
        let repeatable =
            key == "after" || key == "before" || key == "run_if" || key == "ambiguous_with";
        if !repeatable && seen.contains(&key) {
            diagnostics.push(invalid(
                path.span(),
                format!("`{key}` is given twice"),
                format!("give `{key}` once"),
            ));
            continue;
        }
        seen.push(key.clone());
        match (key.as_str(), &meta) {
            ("exclusive", Meta::Path(_)) => args.exclusive = true,
            ("exclusive", other) => diagnostics.push(invalid(
                other.span(),
                "`exclusive` takes no value",
                "write a bare `exclusive`",
            )),
            ("after" | "before", Meta::NameValue(nv)) => {
                let target = match &nv.value {
                    Expr::Path(p) if p.qself.is_none() => Some(OrderTarget::Marker(p.path.clone())),
                    value => string_value(value).map(OrderTarget::Name),
                };
                match target {
                    Some(OrderTarget::Name(lit)) if lit.value().trim().is_empty() => diagnostics
                        .push(invalid(
                            lit.span(),
                            format!("`{key}` names nothing"),
                            "name a system (`\"spawner\"`) or a marker type (`PreUpdate`)",
                        )),
                    Some(target) if key == "after" => args.after.push(target),
                    Some(target) => args.before.push(target),
                    None => diagnostics.push(invalid(
                        nv.value.span(),
                        format!("`{key}` must be a string or a path"),
                        format!("write `{key} = \"system_name\"` or `{key} = MarkerType`"),
                    )),
                }
            }
            ("order_first" | "order_last", Meta::Path(flag)) => {
                let order = if key == "order_first" {
                    SiblingOrder::First
                } else {
                    SiblingOrder::Last
                };
                match args.sibling {
                    Some(earlier) => diagnostics.push(invalid(
                        flag.span(),
                        format!("`{key}` contradicts `{}`", earlier.value.key()),
                        "a node is first or last among its siblings, not both: keep one",
                    )),
                    None => {
                        args.sibling = Some(Given {
                            value: order,
                            span: flag.span(),
                        });
                    }
                }
            }
            ("ambiguous_with", Meta::NameValue(nv)) => {
                match label_value(&key, &nv.value, "system or group", "physics") {
                    Ok(lit) => args.ambiguous_with.push(lit),
                    Err(d) => diagnostics.push(d),
                }
            }
            ("ambiguous_with_all", Meta::Path(_)) => args.ambiguous_with_all = true,
            ("ambiguous_with_all", other) => diagnostics.push(invalid(
                other.span(),
                "`ambiguous_with_all` takes no value",
                "write a bare `ambiguous_with_all`",
            )),
            ("order_first" | "order_last", other) => diagnostics.push(invalid(
                other.span(),
                format!("`{key}` takes no value"),
                format!("write a bare `{key}`"),
            )),
            ("phase", Meta::NameValue(nv)) => {
                match variant_value(&key, &nv.value, "phase", &Phase::ALL, Phase::name) {
                    Ok(phase) => args.phase = Some(phase),
                    Err(d) => diagnostics.push(d),
                }
            }
            ("cadence", Meta::NameValue(nv)) => {
                match variant_value(&key, &nv.value, "cadence", &Cadence::ALL, Cadence::name) {
                    Ok(cadence) => args.cadence = Some(cadence),
                    Err(d) => diagnostics.push(d),
                }
            }
            ("schedule", Meta::NameValue(nv)) => match schedule_value(&nv.value) {
                Ok(schedule) => args.schedule = Some(schedule),
                Err(d) => diagnostics.push(d),
            },
            ("order", Meta::NameValue(nv)) => match order_value(&nv.value) {
                Ok(order) => args.order = Some(order),
                Err(d) => diagnostics.push(d),
            },
            ("group" | "stage" | "set" | "key", Meta::NameValue(nv)) => {
                let (what, example, slot) = match key.as_str() {
                    "group" => ("group", "Physics", &mut args.group),
                    "stage" => ("stage", "Early", &mut args.stage),
                    "set" => ("set", "Audio", &mut args.set),
                    _ => ("instance key", "ai::update#2", &mut args.key),
                };
                match label_value(&key, &nv.value, what, example) {
                    Ok(lit) => *slot = Some(lit),
                    Err(d) => diagnostics.push(d),
                }
            }
            ("run_if", Meta::NameValue(nv)) => match &nv.value {
                Expr::Path(p) if p.qself.is_none() => args.run_if.push(p.path.clone()),
                value => diagnostics.push(invalid(
                    value.span(),
                    "`run_if` must be the path of a run condition function",
                    "write `run_if = enabled`, naming a #[run_condition] function",
                )),
            },
            ("name", Meta::NameValue(nv)) => match string_value(&nv.value) {
                Some(lit) if !lit.value().trim().is_empty() => args.name = Some(lit),
                Some(lit) => diagnostics.push(invalid(
                    lit.span(),
                    "`name` is empty",
                    "give the node a non-empty name, or leave `name` out to use the function's",
                )),
                None => diagnostics.push(invalid(
                    nv.value.span(),
                    "`name` must be a string",
                    "write `name = \"hud\"`",
                )),
            },
            ("allow_locks", Meta::NameValue(nv)) => match string_value(&nv.value) {
                Some(lit) if !lit.value().trim().is_empty() => args.allow_locks = Some(lit),
                Some(lit) => diagnostics.push(invalid(
                    lit.span(),
                    "`allow_locks` needs a reason",
                    "say why this node may lock, e.g. `allow_locks = \"talks to a C library\"`",
                )),
                None => diagnostics.push(invalid(
                    nv.value.span(),
                    "`allow_locks` must be a string: the reason",
                    "write `allow_locks = \"why the graph cannot order this access\"`",
                )),
            },
            (_, other) => diagnostics.push(invalid(
                other.span(),
                format!("`{key}` needs a value"),
                format!("write `{key} = ..`"),
            )),
        }
    }
    if let (true, Some(named)) = (args.ambiguous_with_all, args.ambiguous_with.first()) {
        diagnostics.push(invalid(
            named.span(),
            format!(
                "`ambiguous_with = {:?}` is redundant: `ambiguous_with_all` already silences every ambiguity of this node",
                named.value()
            ),
            "keep `ambiguous_with_all`, or name the systems and drop `ambiguous_with_all`",
        ));
    }
    (args, diagnostics)
}

/// The kind and the parsed arguments of a node attribute (`#[system(..)]`),
/// or `None` when `attr` is not one.
pub fn parse_attribute(attr: &Attribute) -> Option<(NodeKind, NodeArgs, Vec<Diagnostic>)> {
    let kind = NodeKind::from_path(attr.path())?;
    let (args, diagnostics) = match &attr.meta {
        Meta::Path(_) => (NodeArgs::default(), Vec::new()),
        Meta::List(list) => parse_args(kind, list.tokens.clone()),
        Meta::NameValue(nv) => (
            NodeArgs::default(),
            vec![invalid(
                nv.eq_token.span,
                format!(
                    "#[{} = ..] is not an attribute form sluice reads",
                    kind.attribute_name()
                ),
                format!(
                    "write #[{}] or #[{}(key = value, ..)]",
                    kind.attribute_name(),
                    kind.attribute_name()
                ),
            )],
        ),
    };
    Some((kind, args, diagnostics))
}

#[cfg(test)]
mod tests {
    use quote::quote;

    use super::*;

    fn messages(tokens: TokenStream) -> Vec<String> {
        parse_args(NodeKind::System, tokens)
            .1
            .into_iter()
            .map(|d| {
                assert_eq!(d.code, Code::InvalidAttribute);
                d.message
            })
            .collect()
    }

    #[test]
    fn the_organisation_keys_parse() {
        let (args, diagnostics) = parse_args(
            NodeKind::Factory,
            quote!(
                phase = sluice::Phase::PreUpdate,
                group = "Physics",
                stage = "Early",
                set = "Audio",
                cadence = Fixed,
                schedule = "Save",
                order = -2147483648,
                order_last,
                key = "ai::update#2"
            ),
        );
        assert!(diagnostics.is_empty(), "{diagnostics:?}");
        assert_eq!(args.phase.unwrap().value, Phase::PreUpdate);
        assert_eq!(args.group.unwrap().value(), "Physics");
        assert_eq!(args.stage.unwrap().value(), "Early");
        assert_eq!(args.set.unwrap().value(), "Audio");
        assert_eq!(args.cadence.unwrap().value, Cadence::Fixed);
        assert_eq!(args.schedule.unwrap().value, Schedule::Named("Save".into()));
        assert_eq!(args.order.unwrap().value, i32::MIN);
        assert_eq!(args.sibling.unwrap().value, SiblingOrder::Last);
        assert_eq!(args.key.unwrap().value(), "ai::update#2");

        let (args, diagnostics) = parse_args(
            NodeKind::System,
            quote!(
                schedule = Startup,
                order = 7i32,
                order_first,
                cadence = Variable
            ),
        );
        assert!(diagnostics.is_empty(), "{diagnostics:?}");
        assert_eq!(args.schedule.unwrap().value, Schedule::Startup);
        assert_eq!(args.order.unwrap().value, 7);
        assert_eq!(args.sibling.unwrap().value, SiblingOrder::First);
        assert_eq!(args.cadence.unwrap().value, Cadence::Variable);
    }

    #[test]
    fn bad_values_are_refused_with_the_choices() {
        assert_eq!(messages(quote!(phase = Updte)), ["`Updte` is not a phase"]);
        let (_, d) = parse_args(NodeKind::System, quote!(phase = Updte));
        assert!(d[0].help.contains("`PreUpdate`, `Update` and `PostUpdate`"));
        assert_eq!(
            messages(quote!(phase = "PreUpdate")),
            ["`phase` is a path, not a string: write `phase = PreUpdate`"]
        );
        assert_eq!(
            messages(quote!(phase = 1)),
            ["`phase` must be one of `PreUpdate`, `Update` and `PostUpdate`"]
        );
        assert_eq!(
            messages(quote!(cadence = Fxed)),
            ["`Fxed` is not a cadence"]
        );
        assert_eq!(
            messages(quote!(schedule = Save)),
            ["`Save` is not a built-in schedule"]
        );
        assert_eq!(
            messages(quote!(schedule = "Startup")),
            [
                "`schedule = \"Startup\"` names the built-in schedule `Startup` as a string; built-in schedules are written as paths"
            ]
        );
        assert_eq!(messages(quote!(group = "")), ["`group` is empty"]);
        assert_eq!(messages(quote!(stage = " ")), ["`stage` is empty"]);
        assert_eq!(
            messages(quote!(set = Audio)),
            ["`set` must be a string: the name of the set"]
        );
        assert_eq!(messages(quote!(key = "")), ["`key` is empty"]);
        assert_eq!(
            messages(quote!(order = 1.5)),
            ["`order` must be an integer literal"]
        );
        assert_eq!(
            messages(quote!(order = "3")),
            ["`order` must be an integer literal"]
        );
        assert_eq!(
            messages(quote!(order = 2147483648)),
            ["`order = 2147483648` does not fit in an `i32`"]
        );
        assert_eq!(
            messages(quote!(order = 3u8)),
            ["`order` is an `i32`; the suffix `u8` does not fit it"]
        );
        assert_eq!(
            messages(quote!(order_first, order_last)),
            ["`order_last` contradicts `order_first`"]
        );
        assert_eq!(
            messages(quote!(order_last = true)),
            ["`order_last` takes no value"]
        );
        assert_eq!(messages(quote!(order)), ["`order` needs a value"]);
        assert_eq!(
            messages(quote!(key = "a", key = "b")),
            ["`key` is given twice"]
        );
        assert_eq!(
            messages(quote!(order_first, order_first)),
            ["`order_first` is given twice"]
        );
        assert_eq!(
            messages(quote!(ambiguous_with = "")),
            ["`ambiguous_with` is empty"]
        );
        assert_eq!(
            messages(quote!(ambiguous_with = physics)),
            ["`ambiguous_with` must be a string: the name of the system or group"]
        );
        assert_eq!(
            messages(quote!(ambiguous_with_all = true)),
            ["`ambiguous_with_all` takes no value"]
        );
        assert_eq!(
            messages(quote!(ambiguous_with_all, ambiguous_with_all)),
            ["`ambiguous_with_all` is given twice"]
        );
        assert_eq!(
            messages(quote!(ambiguous_with_all, ambiguous_with = "poison")),
            [
                "`ambiguous_with = \"poison\"` is redundant: `ambiguous_with_all` already \
                 silences every ambiguity of this node"
            ]
        );
    }

    #[test]
    fn ambiguous_with_repeats_and_keeps_its_order() {
        let (args, diagnostics) = parse_args(
            NodeKind::System,
            quote!(ambiguous_with = "poison", ambiguous_with = "Render"),
        );
        assert!(diagnostics.is_empty(), "{diagnostics:?}");
        let names: Vec<String> = args.ambiguous_with.iter().map(LitStr::value).collect();
        assert_eq!(names, ["poison", "Render"]);
        assert!(!args.ambiguous_with_all);
        let (args, diagnostics) = parse_args(NodeKind::System, quote!(ambiguous_with_all));
        assert!(diagnostics.is_empty(), "{diagnostics:?}");
        assert!(args.ambiguous_with_all);
    }

    /// The column a value's diagnostic starts at, parsing `source` (so the
    /// tokens have real locations).
    fn column(source: &str) -> usize {
        let tokens: TokenStream = source.parse().unwrap();
        let (_, d) = parse_args(NodeKind::System, tokens);
        assert_eq!(d.len(), 1, "{d:?}");
        d[0].span.start().column
    }

    #[test]
    fn a_wrong_value_is_reported_on_the_offending_token() {
        assert_eq!(column("phase = sluice::Phase::Updte"), 23);
        assert_eq!(column("cadence = Cadence::Fxed"), 19);
        assert_eq!(column("schedule = sluice::Schedule::Save"), 29);
        assert_eq!(column("order = -2147483649"), 8);
        assert_eq!(column("group = \"\""), 8);
        assert_eq!(column("order_first, order_last"), 13);
    }

    #[test]
    fn run_conditions_have_no_organisation() {
        let (_, d) = parse_args(NodeKind::RunCondition, quote!(phase = PreUpdate));
        assert_eq!(d.len(), 1);
        assert!(d[0].message.contains("unknown key `phase`"));
    }
}

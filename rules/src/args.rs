//! The node attributes and their arguments:
//! `#[system(after = "spawner", before = Render, name = "hud", exclusive, allow_locks = "why", run_if = enabled)]`.

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
                "exclusive",
                "allow_locks",
                "run_if",
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

/// The parsed arguments of a node attribute. Invalid arguments are left out
/// and reported as [`Code::InvalidAttribute`] by [`parse_args`].
#[derive(Clone, Debug, Default)]
pub struct NodeArgs {
    /// `name = ".."`: the node's name instead of the function's.
    pub name: Option<LitStr>,
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
        let repeatable = key == "after" || key == "before" || key == "run_if";
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

//! SA0012: a `&mut` service that the body only ever reads (the queried
//! components are in [`super::queried`], by the same classification).
//!
//! Conservative by design: a parameter is flagged only when every use of it
//! is one of these reads, and there is at least one:
//!
//! - a field, index or deref read in value position (`x.hp`, `x.v[i]`, `*x`),
//!   including as an operand of a comparison or other binary operator;
//! - a shared borrow (`&x.hp`, `&*x`, `&x`);
//! - an argument of a formatting or assertion macro (`println!`, `assert!`..).
//!
//! Everything else counts as a possible mutation: an assignment or compound
//! assignment whose target is rooted at the parameter, `&mut` of it, any
//! method call whose receiver is rooted at it (methods are ambiguous), the
//! bare parameter anywhere else (passed on, moved, matched, returned), any
//! other macro mentioning it, and any `ref mut` binding in the body. A body
//! that rebinds the parameter's name is not analysed. A parameter that is
//! never used is not flagged either: a gate held only as a barrier is a
//! legitimate declaration.

use proc_macro2::TokenTree;
use syn::visit::{self, Visit};
use syn::{BinOp, Block, Expr, ExprUnary, Macro, UnOp};

use super::collect::macro_exprs;

/// Read-only macros: their arguments are visited like any expression.
const READING_MACROS: [&str; 19] = [
    "println",
    "print",
    "eprintln",
    "eprint",
    "format",
    "format_args",
    "assert",
    "assert_eq",
    "assert_ne",
    "debug_assert",
    "debug_assert_eq",
    "debug_assert_ne",
    "panic",
    "unreachable",
    "trace",
    "debug",
    "info",
    "warn",
    "error",
];

struct Uses<'n> {
    name: &'n str,
    reads: usize,
    mutated: bool,
    shadowed: bool,
}

fn is_compound_assign(op: &BinOp) -> bool {
    matches!(
        op,
        BinOp::AddAssign(_)
            | BinOp::SubAssign(_)
            | BinOp::MulAssign(_)
            | BinOp::DivAssign(_)
            | BinOp::RemAssign(_)
            | BinOp::BitXorAssign(_)
            | BinOp::BitAndAssign(_)
            | BinOp::BitOrAssign(_)
            | BinOp::ShlAssign(_)
            | BinOp::ShrAssign(_)
    )
}

impl Uses<'_> {
    fn is_name(&self, e: &Expr) -> bool {
        is_name(e, self.name)
    }

    /// Whether `e` is a place expression rooted at the parameter: `x`,
    /// `x.a.b`, `x.v[i]`, `*x`, `(x)`.
    fn rooted(&self, e: &Expr) -> bool {
        match e {
            Expr::Field(f) => self.rooted(&f.base),
            Expr::Index(i) => self.rooted(&i.expr),
            Expr::Paren(p) => self.rooted(&p.expr),
            Expr::Group(g) => self.rooted(&g.expr),
            Expr::Unary(ExprUnary {
                op: UnOp::Deref(_),
                expr,
                ..
            }) => self.rooted(expr),
            other => self.is_name(other),
        }
    }

    /// Records a read of a rooted place, visiting only its index expressions.
    fn read_place(&mut self, e: &Expr) {
        match e {
            Expr::Field(f) => self.read_place(&f.base),
            Expr::Index(i) => {
                self.read_place(&i.expr);
                self.visit_expr(&i.index);
            }
            Expr::Paren(p) => self.read_place(&p.expr),
            Expr::Group(g) => self.read_place(&g.expr),
            Expr::Unary(u) => self.read_place(&u.expr),
            _ => self.reads += 1,
        }
    }
}

/// Whether `e` is the bare single-segment path `name`.
pub(super) fn is_name(e: &Expr, name: &str) -> bool {
    matches!(e, Expr::Path(p) if p.qself.is_none() && p.path.is_ident(name))
}

/// Whether the identifier `name` occurs anywhere in `tokens` (a macro's
/// arguments, which may not parse as expressions).
pub(super) fn mentions(tokens: proc_macro2::TokenStream, name: &str) -> bool {
    tokens.into_iter().any(|t| match t {
        TokenTree::Ident(i) => i == name,
        TokenTree::Group(g) => mentions(g.stream(), name),
        _ => false,
    })
}

impl<'ast> Visit<'ast> for Uses<'_> {
    fn visit_expr(&mut self, e: &'ast Expr) {
        match e {
            Expr::Path(_) if self.is_name(e) => self.mutated = true,
            Expr::MethodCall(call) if self.rooted(&call.receiver) => {
                self.mutated = true;
                for arg in &call.args {
                    self.visit_expr(arg);
                }
            }
            Expr::Assign(a) if self.rooted(&a.left) => {
                self.mutated = true;
                self.visit_expr(&a.right);
            }
            Expr::Binary(b) if is_compound_assign(&b.op) && self.rooted(&b.left) => {
                self.mutated = true;
                self.visit_expr(&b.right);
            }
            Expr::Binary(b) if !is_compound_assign(&b.op) => {
                for operand in [&*b.left, &*b.right] {
                    if self.rooted(operand) {
                        self.read_place(operand);
                    } else {
                        self.visit_expr(operand);
                    }
                }
            }
            Expr::Reference(r) if self.rooted(&r.expr) => {
                if r.mutability.is_some() {
                    self.mutated = true;
                } else {
                    self.read_place(&r.expr);
                }
            }
            Expr::Field(_) | Expr::Index(_) | Expr::Unary(_) if self.rooted(e) => {
                self.read_place(e)
            }
            _ => visit::visit_expr(self, e),
        }
    }

    fn visit_pat_ident(&mut self, p: &'ast syn::PatIdent) {
        if p.ident == self.name {
            self.shadowed = true;
        }
        if p.by_ref.is_some() && p.mutability.is_some() {
            self.mutated = true;
        }
        visit::visit_pat_ident(self, p);
    }

    fn visit_macro(&mut self, mac: &'ast Macro) {
        if !mentions(mac.tokens.clone(), self.name) {
            return;
        }
        let reading = mac
            .path
            .segments
            .last()
            .is_some_and(|s| READING_MACROS.contains(&s.ident.to_string().as_str()));
        match macro_exprs(mac) {
            Some(exprs) if reading => {
                for e in &exprs {
                    // a bare `x` in a formatting macro is formatted by reference
                    if self.is_name(e) {
                        self.reads += 1;
                    } else {
                        self.visit_expr(e);
                    }
                }
            }
            _ => self.mutated = true,
        }
    }
}

/// Where a name is looked for: a function's or loop's block, or a closure's
/// body.
#[derive(Clone, Copy, Debug)]
pub enum Scope<'a> {
    /// A block (`{ .. }`).
    Block(&'a Block),
    /// An expression (a closure's body).
    Expr(&'a Expr),
}

/// How many times `name` is read in `scope`, or `None` when it may be
/// mutated there or `scope` rebinds it (see the module documentation for
/// what counts as a read).
pub fn reads(name: &str, scope: Scope<'_>) -> Option<usize> {
    let mut uses = Uses {
        name,
        reads: 0,
        mutated: false,
        shadowed: false,
    };
    match scope {
        Scope::Block(block) => uses.visit_block(block),
        Scope::Expr(expr) => uses.visit_expr(expr),
    }
    (!uses.mutated && !uses.shadowed).then_some(uses.reads)
}

/// Whether the parameter `name` is only ever read in `body` (see the module
/// documentation for what counts as a read).
pub fn only_read(name: &str, body: &Block) -> bool {
    reads(name, Scope::Block(body)).is_some_and(|n| n > 0)
}

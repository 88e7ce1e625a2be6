//! SA0005: a node body that reaches for shared state the graph cannot see.
//!
//! The heuristic, applied to every expression, statement and item in the body
//! (closures, nested items, and the arguments of macros that parse as
//! comma-separated expressions included):
//!
//! - an item `static mut NAME` declared in the body, and any path expression
//!   naming a `static mut` the caller knows of ([`BodyContext::static_muts`];
//!   the analyzers collect them from the whole tree);
//! - a `thread_local!` invocation (by the macro path's last segment);
//! - a method call `.lock()` or `.try_lock()` with no arguments;
//! - a method call `.read()` / `.write()` (and `try_read` / `try_write`) when
//!   it has no arguments (the `RwLock` forms; `io::Read::read(&mut buf)` and
//!   `io::Write::write(buf)` take one) or when its receiver's name mentions a
//!   lock (`lock`, `mutex`, `rwlock`, case-insensitive);
//! - a path with a segment `Mutex`, `RwLock` or `ReentrantMutex` followed by
//!   another segment (`Mutex::new`, `std::sync::RwLock::default`).
//!
//! Known false positive: a raw pointer's `ptr.read()` with no arguments.

use std::collections::HashSet;

use proc_macro2::Span;
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::visit::{self, Visit};
use syn::{Block, Expr, ExprMethodCall, ExprPath, ItemStatic, Macro, StaticMutability, Token};

use crate::code::Code;
use crate::diagnostic::Diagnostic;
use crate::services::TypeAliases;

/// What a caller knows beyond the function's own tokens.
#[derive(Clone, Debug, Default)]
pub struct BodyContext {
    /// Names of `static mut` items declared elsewhere in the tree.
    pub static_muts: HashSet<String>,
    /// How SA0002 tells services apart. `None` (the default, what the macros
    /// use): by their type's tokens, leaving other spellings of one type to
    /// the compiler. `Some`: by resolved last path segment, through these
    /// aliases and imports (what `sluice check` uses; see [`TypeAliases`]).
    pub services: Option<TypeAliases>,
}

const LOCK_TYPES: [&str; 3] = ["Mutex", "RwLock", "ReentrantMutex"];

struct LockFinder<'c> {
    context: &'c BodyContext,
    node: String,
    found: Vec<Diagnostic>,
}

impl LockFinder<'_> {
    fn report(&mut self, span: Span, what: String, help: &str) {
        self.found.push(Diagnostic::new(
            Code::LockInBody,
            span,
            format!("node `{}` {what}", self.node),
            format!(
                "{help}; or, if the graph truly cannot order this access, opt out with `allow_locks = \"reason\"`"
            ),
        ));
    }
}

fn mentions_lock(expr: &Expr) -> bool {
    let text = quote::ToTokens::to_token_stream(expr)
        .to_string()
        .to_lowercase();
    text.contains("lock") || text.contains("mutex")
}

impl<'ast> Visit<'ast> for LockFinder<'_> {
    fn visit_item_static(&mut self, item: &'ast ItemStatic) {
        if let StaticMutability::Mut(m) = &item.mutability {
            self.report(
                m.span,
                format!("declares `static mut {}`", item.ident),
                "keep the value in a service and declare it in the signature",
            );
        }
        visit::visit_item_static(self, item);
    }

    fn visit_macro(&mut self, mac: &'ast Macro) {
        if mac
            .path
            .segments
            .last()
            .is_some_and(|s| s.ident == "thread_local")
        {
            self.report(
                mac.path.span(),
                "uses `thread_local!`".to_string(),
                "keep the value in a service; a node may run on any worker thread",
            );
        }
        // look inside expression-like macros: `println!("{:?}", m.lock())`
        if let Ok(exprs) = mac.parse_body_with(Punctuated::<Expr, Token![,]>::parse_terminated) {
            for e in &exprs {
                self.visit_expr(e);
            }
        }
    }

    fn visit_expr_method_call(&mut self, call: &'ast ExprMethodCall) {
        let method = call.method.to_string();
        let no_args = call.args.is_empty();
        let flagged = match method.as_str() {
            "lock" | "try_lock" => no_args,
            "read" | "write" | "try_read" | "try_write" => no_args || mentions_lock(&call.receiver),
            _ => false,
        };
        if flagged {
            self.report(
                call.method.span(),
                format!("takes a lock (`.{method}()`)"),
                "declare the service as `&T` or `&mut T`: the graph orders the access, no lock needed",
            );
        }
        visit::visit_expr_method_call(self, call);
    }

    fn visit_expr_path(&mut self, path: &'ast ExprPath) {
        let segments: Vec<String> = path
            .path
            .segments
            .iter()
            .map(|s| s.ident.to_string())
            .collect();
        if let Some(pos) = segments
            .iter()
            .position(|s| LOCK_TYPES.contains(&s.as_str()))
            && pos + 1 < segments.len()
        {
            self.report(
                path.span(),
                format!("creates a lock (`{}`)", segments[pos..].join("::")),
                "keep the value in a service and declare it in the signature",
            );
        } else if let Some(last) = segments.last()
            && self.context.static_muts.contains(last)
        {
            self.report(
                path.span(),
                format!("uses `static mut {last}`"),
                "keep the value in a service and declare it in the signature",
            );
        }
        visit::visit_expr_path(self, path);
    }
}

/// Runs SA0005 over `body` of the node `node` (the name used in messages).
pub fn find_locks(node: &str, body: &Block, context: &BodyContext) -> Vec<Diagnostic> {
    let mut finder = LockFinder {
        context,
        node: node.to_string(),
        found: Vec::new(),
    };
    finder.visit_block(body);
    finder.found
}

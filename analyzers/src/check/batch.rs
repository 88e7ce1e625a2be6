//! SA0010: a `process_batch` that allocates.
//!
//! Flagged inside the body (closures included): calls of `Box`, `Vec`,
//! `String`, the std maps and sets, `Rc` and `Arc` constructors (`new`,
//! `with_capacity`, `from`, `from_iter`, `default`, `pin`); the macros
//! `vec!` and `format!`; and the methods `.to_string()`, `.to_owned()`,
//! `.to_vec()` and `.collect()` (every `collect`: one into an owned
//! collection allocates, and one into anything else is rare in a batch).

use proc_macro2::Span;
use syn::spanned::Spanned;
use syn::visit::{self, Visit};
use syn::{Block, Expr, ExprCall, ExprMethodCall, Macro};

use super::collect::macro_exprs;

const ALLOC_TYPES: [&str; 11] = [
    "Box",
    "Vec",
    "String",
    "HashMap",
    "HashSet",
    "BTreeMap",
    "BTreeSet",
    "VecDeque",
    "BinaryHeap",
    "Rc",
    "Arc",
];
const ALLOC_FNS: [&str; 6] = [
    "new",
    "with_capacity",
    "from",
    "from_iter",
    "default",
    "pin",
];
const ALLOC_MACROS: [&str; 2] = ["vec", "format"];
const ALLOC_METHODS: [&str; 4] = ["to_string", "to_owned", "to_vec", "collect"];

/// An allocation found in a body: where, and what (`"Vec::new"`, `"vec!"`).
#[derive(Clone, Debug)]
pub struct Allocation {
    /// The allocating call or macro.
    pub span: Span,
    /// What it is, for the message.
    pub what: String,
}

#[derive(Default)]
struct Finder {
    found: Vec<Allocation>,
}

impl<'ast> Visit<'ast> for Finder {
    fn visit_expr_call(&mut self, call: &'ast ExprCall) {
        if let Expr::Path(func) = &*call.func {
            let segments: Vec<String> = func
                .path
                .segments
                .iter()
                .map(|s| s.ident.to_string())
                .collect();
            if let [.., ty, f] = segments.as_slice()
                && ALLOC_TYPES.contains(&ty.as_str())
                && ALLOC_FNS.contains(&f.as_str())
            {
                self.found.push(Allocation {
                    span: func.span(),
                    what: format!("{ty}::{f}"),
                });
            }
        }
        visit::visit_expr_call(self, call);
    }

    fn visit_expr_method_call(&mut self, call: &'ast ExprMethodCall) {
        let method = call.method.to_string();
        if ALLOC_METHODS.contains(&method.as_str()) {
            self.found.push(Allocation {
                span: call.method.span(),
                what: format!(".{method}()"),
            });
        }
        visit::visit_expr_method_call(self, call);
    }

    fn visit_macro(&mut self, mac: &'ast Macro) {
        if let Some(last) = mac.path.segments.last()
            && ALLOC_MACROS.contains(&last.ident.to_string().as_str())
        {
            self.found.push(Allocation {
                span: mac.path.span(),
                what: format!("{}!", last.ident),
            });
        }
        if let Some(exprs) = macro_exprs(mac) {
            for e in &exprs {
                self.visit_expr(e);
            }
        }
    }
}

/// Every allocation in `body`.
pub fn allocations(body: &Block) -> Vec<Allocation> {
    let mut finder = Finder::default();
    finder.visit_block(body);
    finder.found
}

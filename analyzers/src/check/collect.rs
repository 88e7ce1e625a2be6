//! One pass over every parsed file: the node functions, the `process_batch`
//! bodies, and the names the whole-tree checks look things up in.

use std::collections::HashSet;

use proc_macro2::Span;
use sluice_rules::Phase;
use syn::punctuated::Punctuated;
use syn::visit::{self, Visit};
use syn::{
    Attribute, Block, Expr, ExprCall, ExprLit, ExprMethodCall, ImplItemFn, ItemFn, ItemImpl, Lit,
    Macro, Token,
};

/// The method and function names whose arguments register nodes:
/// `world.add_system(hud)`, `add_systems((a, b))`, `graph.add_node(..)`.
pub const REGISTRATION_CALLS: [&str; 8] = [
    "add_system",
    "add_systems",
    "add_factory",
    "add_factories",
    "add_node",
    "add_nodes",
    "add_run_condition",
    "run_if",
];

/// Constructors whose first string argument names a node, a marker or a
/// group registered at run time: `NodeBuilder::new("spawner")`,
/// `Marker::new("Frame")`, `Group::new("Physics")` (groups share the nodes'
/// namespace, so an ordering may target one).
pub const NAMING_CONSTRUCTORS: [&str; 3] = ["NodeBuilder", "Marker", "Group"];

/// The phases the runtime provides (the ones `phase = ..` accepts, from
/// `sluice-rules`); always known as ordering targets, as the runtime
/// resolves `after = PreUpdate` to the end of that phase.
pub const BUILTIN_MARKERS: [&str; 3] = [
    Phase::ALL[0].name(),
    Phase::ALL[1].name(),
    Phase::ALL[2].name(),
];

/// A function carrying a node attribute, as found in the tree.
#[derive(Debug)]
pub struct FoundNode {
    /// Index of the file in the checked list.
    pub file: usize,
    /// The node attribute.
    pub attr: Attribute,
    /// The function's signature.
    pub sig: syn::Signature,
    /// The function's body.
    pub body: Block,
}

/// A `process_batch` in an `impl .. BatchProcessor for ..`.
#[derive(Debug)]
pub struct FoundBatch {
    /// Index of the file in the checked list.
    pub file: usize,
    /// The implementing type, for messages.
    pub self_ty: String,
    /// The method's body.
    pub body: Block,
}

/// What the pass collected over the whole tree.
#[derive(Debug, Default)]
pub struct Collected {
    /// Every node function.
    pub nodes: Vec<FoundNode>,
    /// Every `process_batch`.
    pub batches: Vec<FoundBatch>,
    /// Identifiers and strings mentioned in registration calls' arguments.
    pub registered: HashSet<String>,
    /// Names an ordering may target, besides the node functions: declared and
    /// imported types, names given to `NodeBuilder::new`/`Marker::new`, and
    /// the built-in phases.
    pub known_names: HashSet<String>,
    /// Names of every `static mut` in the tree.
    pub static_muts: HashSet<String>,
    /// Spans of the registration calls, kept to make the collection testable.
    pub registration_sites: Vec<Span>,
}

/// Walks one parsed file, adding to `collected`.
pub fn collect_file(file_index: usize, file: &syn::File, collected: &mut Collected) {
    let mut visitor = Collector {
        file: file_index,
        out: collected,
        batch_impl: None,
    };
    visitor.visit_file(file);
    for name in BUILTIN_MARKERS {
        collected.known_names.insert(name.to_string());
    }
}

struct Collector<'a> {
    file: usize,
    out: &'a mut Collected,
    batch_impl: Option<String>,
}

fn has_node_attribute(attrs: &[Attribute]) -> Option<&Attribute> {
    attrs
        .iter()
        .find(|a| sluice_rules::NodeKind::from_path(a.path()).is_some())
}

/// Collects every identifier (the last segment of every path) and every
/// string literal under an expression.
struct Mentions<'a>(&'a mut HashSet<String>);

impl<'ast> Visit<'ast> for Mentions<'_> {
    fn visit_path(&mut self, path: &'ast syn::Path) {
        if let Some(last) = path.segments.last() {
            self.0.insert(last.ident.to_string());
        }
        visit::visit_path(self, path);
    }
    fn visit_lit_str(&mut self, lit: &'ast syn::LitStr) {
        self.0.insert(lit.value());
    }
    fn visit_macro(&mut self, mac: &'ast Macro) {
        if let Some(exprs) = macro_exprs(mac) {
            for e in &exprs {
                self.visit_expr(e);
            }
        }
    }
}

/// A macro's arguments, when they parse as comma-separated expressions
/// (`vec![a, b]`, `assert!(x)`).
pub fn macro_exprs(mac: &Macro) -> Option<Punctuated<Expr, Token![,]>> {
    mac.parse_body_with(Punctuated::<Expr, Token![,]>::parse_terminated)
        .ok()
}

impl Collector<'_> {
    fn node(&mut self, attrs: &[Attribute], sig: &syn::Signature, body: &Block) {
        if let Some(attr) = has_node_attribute(attrs) {
            self.out.nodes.push(FoundNode {
                file: self.file,
                attr: attr.clone(),
                sig: sig.clone(),
                body: body.clone(),
            });
        }
    }

    fn mentions(&mut self, args: &Punctuated<Expr, Token![,]>) {
        let mut mentions = Mentions(&mut self.out.registered);
        for arg in args {
            mentions.visit_expr(arg);
        }
    }
}

impl<'ast> Visit<'ast> for Collector<'_> {
    fn visit_item_fn(&mut self, item: &'ast ItemFn) {
        self.node(&item.attrs, &item.sig, &item.block);
        let outer = self.batch_impl.take();
        visit::visit_item_fn(self, item);
        self.batch_impl = outer;
    }

    fn visit_item_impl(&mut self, item: &'ast ItemImpl) {
        let is_batch = item
            .trait_
            .as_ref()
            .and_then(|(_, path, _)| path.segments.last())
            .is_some_and(|s| s.ident == "BatchProcessor");
        let outer = self.batch_impl.take();
        if is_batch {
            self.batch_impl = Some(quote::ToTokens::to_token_stream(&item.self_ty).to_string());
        }
        visit::visit_item_impl(self, item);
        self.batch_impl = outer;
    }

    fn visit_impl_item_fn(&mut self, item: &'ast ImplItemFn) {
        self.node(&item.attrs, &item.sig, &item.block);
        if item.sig.ident == "process_batch"
            && let Some(self_ty) = &self.batch_impl
        {
            self.out.batches.push(FoundBatch {
                file: self.file,
                self_ty: self_ty.clone(),
                body: item.block.clone(),
            });
        }
        visit::visit_impl_item_fn(self, item);
    }

    fn visit_item_struct(&mut self, item: &'ast syn::ItemStruct) {
        self.out.known_names.insert(item.ident.to_string());
        visit::visit_item_struct(self, item);
    }

    fn visit_item_enum(&mut self, item: &'ast syn::ItemEnum) {
        self.out.known_names.insert(item.ident.to_string());
        visit::visit_item_enum(self, item);
    }

    fn visit_item_type(&mut self, item: &'ast syn::ItemType) {
        self.out.known_names.insert(item.ident.to_string());
        visit::visit_item_type(self, item);
    }

    fn visit_item_union(&mut self, item: &'ast syn::ItemUnion) {
        self.out.known_names.insert(item.ident.to_string());
        visit::visit_item_union(self, item);
    }

    fn visit_use_name(&mut self, name: &'ast syn::UseName) {
        self.out.known_names.insert(name.ident.to_string());
    }

    fn visit_use_rename(&mut self, rename: &'ast syn::UseRename) {
        self.out.known_names.insert(rename.rename.to_string());
    }

    fn visit_item_static(&mut self, item: &'ast syn::ItemStatic) {
        if matches!(item.mutability, syn::StaticMutability::Mut(_)) {
            self.out.static_muts.insert(item.ident.to_string());
        }
        visit::visit_item_static(self, item);
    }

    fn visit_expr_method_call(&mut self, call: &'ast ExprMethodCall) {
        if REGISTRATION_CALLS.contains(&call.method.to_string().as_str()) {
            self.out.registration_sites.push(call.method.span());
            self.mentions(&call.args);
        }
        visit::visit_expr_method_call(self, call);
    }

    fn visit_expr_call(&mut self, call: &'ast ExprCall) {
        if let Expr::Path(func) = &*call.func {
            let segments: Vec<String> = func
                .path
                .segments
                .iter()
                .map(|s| s.ident.to_string())
                .collect();
            let last = segments.last().map(String::as_str).unwrap_or_default();
            if REGISTRATION_CALLS.contains(&last) {
                self.mentions(&call.args);
            }
            let constructs_named = segments.len() >= 2
                && last == "new"
                && NAMING_CONSTRUCTORS.contains(&segments[segments.len() - 2].as_str());
            if constructs_named
                && let Some(Expr::Lit(ExprLit {
                    lit: Lit::Str(name),
                    ..
                })) = call.args.first()
            {
                self.out.known_names.insert(name.value());
            }
        }
        visit::visit_expr_call(self, call);
    }

    fn visit_macro(&mut self, mac: &'ast Macro) {
        // registrations inside `vec![..]`, `assert!(..)` and the like
        if let Some(exprs) = macro_exprs(mac) {
            for e in &exprs {
                self.visit_expr(e);
            }
        }
    }
}

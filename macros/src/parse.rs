//! Stage one and two of the pipeline: the item into a [`Node`], then every
//! check (the rules crate's, and the shapes only a macro cares about).

use proc_macro2::TokenStream;
use quote::ToTokens;
use sluice_rules::{Checked, Code, Diagnostic, NodeKind, check_tokens};
use syn::spanned::Spanned;
use syn::{GenericParam, ItemFn};

use crate::{alias, condition, expand, factory, system};

/// A node function, parsed and checked.
pub(crate) struct Node {
    /// The function as written (attributes, visibility, signature, body).
    pub(crate) item: ItemFn,
    /// The rules crate's model of the signature, and its findings.
    pub(crate) checked: Checked,
}

impl Node {
    /// A method (it takes `self`): expanded inside its impl block.
    pub(crate) fn is_method(&self) -> bool {
        self.checked.signature.receiver.is_some()
    }
}

/// The whole pipeline for one attribute: parse, validate, expand (or fall
/// back).
pub(crate) fn node(kind: NodeKind, attr: TokenStream, item: TokenStream) -> TokenStream {
    let item_fn: ItemFn = match syn::parse2(item.clone()) {
        Ok(item_fn) => item_fn,
        Err(_) => {
            let error = syn::Error::new_spanned(
                &item,
                format!(
                    "#[{}] goes on a function (a free `fn` or a method taking `self`)",
                    kind.attribute_name()
                ),
            );
            let mut out = error.to_compile_error();
            out.extend(item);
            return out;
        }
    };
    let mut checked = check_tokens(kind, attr, &item_fn.sig, Some(&item_fn.block));
    checked.diagnostics.extend(macro_checks(&item_fn));
    let node = Node {
        item: item_fn,
        checked,
    };
    let mut expanded = match kind {
        NodeKind::System | NodeKind::Factory => {
            if node.checked.is_ok() {
                if kind == NodeKind::System {
                    system::expand(&node)
                } else {
                    factory::expand(&node)
                }
            } else if node.is_method() {
                expand::fallback(&node)
            } else if kind == NodeKind::System {
                system::fallback(&node)
            } else {
                factory::fallback(&node)
            }
        }
        NodeKind::RunCondition => condition::expand(&node),
    };
    expanded.extend(alias::assertions(&node));
    match node.checked.to_syn_error() {
        Some(error) => {
            let mut out = error.to_compile_error();
            out.extend(expanded);
            out
        }
        None => expanded,
    }
}

/// What the macro needs beyond the rules: a node is registered once, by
/// name, so it cannot be generic over types or constants.
fn macro_checks(item: &ItemFn) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for param in &item.sig.generics.params {
        if matches!(param, GenericParam::Type(_) | GenericParam::Const(_)) {
            out.push(Diagnostic::new(
                Code::InvalidNodeShape,
                param.span(),
                format!(
                    "node `{}` is generic over `{}`",
                    item.sig.ident,
                    param.to_token_stream()
                ),
                "a node is registered once, by name: write one function per type, or register `NodeBuilder::new(\"name\").system(f::<T>)` by hand",
            ));
        }
    }
    out
}

//! `#[system]`: the function's parameters are its access; the node is the
//! function itself.
//!
//! A method keeps its name and gains `<method>_system()`. A free function
//! keeps its name as a plain function item returning a zero-sized
//! `::sluice::Declared<D>` (see `declared.rs`), where `D`'s
//! `SystemDeclaration` impl holds the attribute's arguments:
//! `world.add_system(f)` and `.after_node(f)` read the declaration from the
//! function item's type.

use proc_macro2::TokenStream;
use quote::quote;
use syn::parse_quote;

use crate::declared::{self, Declaration};
use crate::expand::{builder, callee, emit, run_ifs};
use crate::parse::Node;

/// Expands a checked system.
pub(crate) fn expand(node: &Node) -> TokenStream {
    let run_ifs = run_ifs(node);
    if node.is_method() {
        let builder = builder(node);
        let callee = callee(node);
        let spec = quote!(#builder.system(#callee) #run_ifs);
        return emit(node, node.item.sig.clone(), spec, false);
    }
    let declaration = Declaration {
        trait_path: quote!(::sluice::SystemDeclaration),
        items: quote! {
            #[inline]
            fn finish(spec: ::sluice::NodeSpec) -> ::sluice::NodeSpec {
                spec #run_ifs
            }
        },
    };
    declared::emit(
        node,
        node.item.sig.clone(),
        &parse_quote!(()),
        Some(declaration),
    )
}

/// The items emitted beside a free system's errors: the function as
/// written, its declaration unbuilt (see [`declared::emit`]).
pub(crate) fn fallback(node: &Node) -> TokenStream {
    declared::emit(node, node.item.sig.clone(), &parse_quote!(()), None)
}

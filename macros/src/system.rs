//! `#[system]`: the function's parameters are its access; the node is the
//! function itself, registered through `NodeBuilder::system`.

use proc_macro2::TokenStream;
use quote::quote;

use crate::expand::{builder, callee, emit, run_ifs};
use crate::parse::Node;

/// Expands a checked system: `NodeBuilder::new(..)..system(f).run_if(..)`.
pub(crate) fn expand(node: &Node) -> TokenStream {
    let builder = builder(node);
    let callee = callee(node);
    let run_ifs = run_ifs(node);
    let spec = quote!(#builder.system(#callee) #run_ifs);
    emit(node, node.item.sig.clone(), spec, false)
}

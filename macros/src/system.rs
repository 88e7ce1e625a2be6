//! `#[system]`: the function's parameters are its access; the node is the
//! function itself.
//!
//! A method keeps its name and gains `<method>_system()`. A free function
//! keeps its name as a plain function item (the value namespace holds
//! nothing else, so a parameter or local of the same name is an ordinary
//! binding) and returns a zero-sized `::sluice::Declared<D>`, where `D` is a
//! braced struct (type namespace only) whose `SystemDeclaration` impl holds
//! the attribute's arguments: `world.add_system(f)` and `.after(f)` read the
//! declaration from the function item's type.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use syn::{Attribute, Ident, ReturnType, parse_quote};

use crate::expand::{builder, callee, emit, run_ifs};
use crate::parse::Node;

/// Expands a checked system.
pub(crate) fn expand(node: &Node) -> TokenStream {
    let builder = builder(node);
    let run_ifs = run_ifs(node);
    if node.is_method() {
        let callee = callee(node);
        let spec = quote!(#builder.system(#callee) #run_ifs);
        return emit(node, node.item.sig.clone(), spec, false);
    }
    let item = &node.item;
    let attrs = &item.attrs;
    let vis = &item.vis;
    let block = &item.block;
    let declaration = declaration_ident(&item.sig.ident);
    let mut sig = item.sig.clone();
    sig.output = ReturnType::Type(
        Default::default(),
        Box::new(parse_quote!(::sluice::Declared<#declaration>)),
    );
    let cfgs: Vec<&Attribute> = attrs.iter().filter(|a| a.path().is_ident("cfg")).collect();
    let doc = format!(
        "The declaration of the system `{}` (its name, key, ordering, organisation and run conditions), read by `world.add_system({})`.",
        node.checked.signature.name(),
        item.sig.ident,
    );
    quote! {
        #(#attrs)*
        #vis #sig {
            // The body runs in a closure so that its `return`s keep their
            // meaning; the token is what carries the declaration.
            #[allow(clippy::redundant_closure_call, unused_braces)]
            let () = (move || #block)();
            ::sluice::Declared::new()
        }

        #(#cfgs)*
        #[doc = #doc]
        #[doc(hidden)]
        #[allow(non_camel_case_types)]
        #vis struct #declaration {}

        #(#cfgs)*
        impl ::sluice::SystemDeclaration for #declaration {
            #[inline]
            fn builder() -> ::sluice::NodeBuilder {
                #builder
            }

            #[inline]
            fn finish(spec: ::sluice::NodeSpec) -> ::sluice::NodeSpec {
                spec #run_ifs
            }
        }
    }
}

/// The hidden struct carrying a free function's declaration.
fn declaration_ident(function: &Ident) -> Ident {
    format_ident!("__sluice_system_{}", function)
}

/// The items emitted beside a free system's errors: the function as written
/// (its body still checked, direct calls still valid), returning the token
/// of an `UnbuiltDeclaration`, which registers without a second error.
pub(crate) fn fallback(node: &Node) -> TokenStream {
    let item = &node.item;
    let attrs = &item.attrs;
    let vis = &item.vis;
    let block = &item.block;
    let declaration = declaration_ident(&item.sig.ident);
    let mut sig = item.sig.clone();
    sig.output = ReturnType::Type(
        Default::default(),
        Box::new(parse_quote!(::sluice::Declared<#declaration>)),
    );
    quote! {
        #(#attrs)*
        #[allow(dead_code)]
        #vis #sig {
            #[allow(clippy::redundant_closure_call, unused_braces)]
            let () = (move || #block)();
            ::sluice::Declared::new()
        }

        #[doc(hidden)]
        #[allow(non_camel_case_types, dead_code)]
        #vis struct #declaration {}

        impl ::sluice::UnbuiltDeclaration for #declaration {}
    }
}

//! What a free `#[system]` or `#[factory]` function becomes: the function
//! itself under its own name (the value namespace holds nothing else, so a
//! parameter or local of the same name is an ordinary binding), returning
//! `::sluice::Declared<D, R>`, where `D` is a hidden braced struct (type
//! namespace only) whose trait impl holds the attribute's arguments and `R`
//! is what the body returns (`()` for a system). `world.add_system(f)`,
//! `world.add_factory(f)` and `.after_node(f)` read the declaration from
//! the function item's type.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use sluice_rules::NodeKind;
use syn::{Attribute, Ident, ItemFn, ReturnType, Signature, Type, parse_quote};

use crate::expand::builder;
use crate::parse::Node;

/// The hidden struct carrying the declaration of the free function
/// `function` of `kind`.
pub(crate) fn declaration_ident(kind: NodeKind, function: &Ident) -> Ident {
    format_ident!("__sluice_{}_{}", kind.attribute_name(), function)
}

/// The declaration struct's trait impl: `trait_path` with `builder()` (the
/// attribute's arguments, [`builder`]) and `items` (the rest of the
/// trait).
pub(crate) struct Declaration {
    pub(crate) trait_path: TokenStream,
    pub(crate) items: TokenStream,
}

/// The function `node` as kept: `sig`'s inputs (a factory's rewritten into
/// the runtime's terms) returning `Declared<D, value>`, with its body, and
/// the declaration struct `D` implementing `declaration`. Without one (the
/// node did not compile, its errors beside), `D` is an
/// `UnbuiltDeclaration`, which registers without a second error, and
/// nothing emitted counts as unused.
pub(crate) fn emit(
    node: &Node,
    mut sig: Signature,
    value: &Type,
    declaration: Option<Declaration>,
) -> TokenStream {
    let ItemFn {
        attrs,
        vis,
        sig: written,
        block,
    } = &node.item;
    let kind = node.checked.signature.kind;
    let ident = declaration_ident(kind, &written.ident);
    sig.output = ReturnType::Type(
        Default::default(),
        Box::new(parse_quote!(::sluice::Declared<#ident, #value>)),
    );
    let cfgs: Vec<&Attribute> = attrs.iter().filter(|a| a.path().is_ident("cfg")).collect();
    let register = match kind {
        NodeKind::Factory => "add_factory",
        _ => "add_system",
    };
    let doc = format!(
        "The declaration of the {} `{}` (its name, key, ordering, organisation and run conditions), read by `world.{register}({})`.",
        kind.attribute_name(),
        node.checked.signature.name(),
        written.ident,
    );
    let unused = declaration.is_none().then(|| quote!(#[allow(dead_code)]));
    let implementation = match declaration {
        Some(Declaration { trait_path, items }) => {
            let builder = builder(node);
            quote! {
                impl #trait_path for #ident {
                    #[inline]
                    fn builder() -> ::sluice::NodeBuilder {
                        #builder
                    }

                    #items
                }
            }
        }
        None => quote!(impl ::sluice::UnbuiltDeclaration for #ident {}),
    };
    quote! {
        #(#attrs)*
        #unused
        #vis #sig {
            // The body runs in a closure so that its `return`s keep their
            // meaning; the returned `Declared` is what carries the
            // declaration.
            #[allow(clippy::redundant_closure_call, clippy::unused_unit, unused_braces)]
            let __sluice_value = (move || -> #value #block)();
            ::sluice::Declared::with(__sluice_value)
        }

        #(#cfgs)*
        #[doc = #doc]
        #[doc(hidden)]
        #[allow(non_camel_case_types)]
        #unused
        #vis struct #ident {}

        #(#cfgs)*
        #implementation
    }
}

/// What a kept signature returns: its return type, or `()`.
pub(crate) fn value_type(sig: &Signature) -> Type {
    match &sig.output {
        ReturnType::Default => parse_quote!(()),
        ReturnType::Type(_, ty) => (**ty).clone(),
    }
}

//! `#[factory]`: `&T` inputs, outputs from the return type and `Out<T>`
//! parameters, `Next<T>` for the next iteration.
//!
//! The function is kept with its outputs in the runtime's terms: an
//! `Out<T>` parameter becomes `Out<'_, T>` (the runtime's `sluice::Out`
//! handle, through the user's own import), an `Out<Next<T>>` one
//! `Next<'_, T>`, and a `Next<T>` in the return type becomes `T` (the body
//! returns the value; the macro routes it to the next iteration through a
//! `Next<'_, T>` handle spelled with the user's path).
//! Then:
//!
//! - no return value: `NodeBuilder::system(f)` (the `Out` parameters make it
//!   a factory);
//! - one plain return value: `NodeBuilder::factory(f)`;
//! - a tuple, or a `Next<T>`: a non-capturing closure that takes the inputs
//!   plus one `Out`/`Next` parameter per output, calls `f`, destructures the
//!   tuple and sets each output.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use sluice_rules::{ReceiverKind, last_segment_generic};
use syn::{FnArg, GenericArgument, PathArguments, ReturnType, Type, parse_quote};

use crate::expand::{builder, callee, emit, run_ifs};
use crate::parse::Node;

fn strip(ty: &Type) -> &Type {
    match ty {
        Type::Paren(p) => strip(&p.elem),
        Type::Group(g) => strip(&g.elem),
        other => other,
    }
}

/// `ty` with the elided lifetime `'_` as its first generic argument, when
/// it has none: the user's `Out<T>` becomes `Out<'_, T>`, whatever path it
/// was written with, so the signature's types stay the ones its imports name.
fn with_lifetime(ty: &Type) -> Type {
    let mut ty = strip(ty).clone();
    if let Type::Path(path) = &mut ty
        && let Some(last) = path.path.segments.last_mut()
        && let PathArguments::AngleBracketed(args) = &mut last.arguments
        && !args
            .args
            .iter()
            .any(|a| matches!(a, GenericArgument::Lifetime(_)))
    {
        args.args.insert(0, parse_quote!('_));
    }
    ty
}

/// `Out<T>` -> `Out<'_, T>`, `Out<Next<T>>` -> `Next<'_, T>` (the runtime's
/// `sluice::Out` and `sluice::Next` handles); any other type unchanged.
fn rewrite_param(ty: &Type) -> Type {
    match last_segment_generic(strip(ty), "Out") {
        Some(inner) => with_lifetime(inner_or(inner, ty)),
        None => ty.clone(),
    }
}

/// The `Next<T>` inside `Out<Next<T>>`, or the `Out<T>` itself.
fn inner_or<'a>(inner: &'a Type, outer: &'a Type) -> &'a Type {
    if last_segment_generic(strip(inner), "Next").is_some() {
        inner
    } else {
        outer
    }
}

/// The return type with every `Next<T>` leaf replaced by `T`.
fn rewrite_return(ty: &Type) -> Type {
    match ty {
        Type::Paren(p) => rewrite_return(&p.elem),
        Type::Group(g) => rewrite_return(&g.elem),
        Type::Tuple(tuple) => {
            let mut tuple = tuple.clone();
            for elem in tuple.elems.iter_mut() {
                *elem = rewrite_return(elem);
            }
            Type::Tuple(tuple)
        }
        leaf => match last_segment_generic(leaf, "Next") {
            Some(inner) => inner.clone(),
            None => leaf.clone(),
        },
    }
}

/// The factory's signature in the runtime's terms (see the module docs).
pub(crate) fn rewrite_signature(node: &Node) -> syn::Signature {
    let mut sig = node.item.sig.clone();
    for input in sig.inputs.iter_mut() {
        if let FnArg::Typed(typed) = input {
            *typed.ty = rewrite_param(&typed.ty);
        }
    }
    if let ReturnType::Type(_, ty) = &mut sig.output {
        **ty = rewrite_return(ty);
    }
    sig
}

/// A pattern mirroring the return type's tuples, binding `__sluice_out{n}`
/// to the n-th leaf (the order the rules crate flattens them in), and the
/// leaves as written.
fn pattern<'t>(ty: &'t Type, leaves: &mut Vec<&'t Type>) -> TokenStream {
    match ty {
        Type::Paren(p) => pattern(&p.elem, leaves),
        Type::Group(g) => pattern(&g.elem, leaves),
        Type::Tuple(tuple) => {
            let elems: Vec<TokenStream> = tuple
                .elems
                .iter()
                .map(|elem| pattern(elem, leaves))
                .collect();
            quote!((#(#elems,)*))
        }
        leaf => {
            let ident = format_ident!("__sluice_out{}", leaves.len());
            leaves.push(leaf);
            quote!(#ident)
        }
    }
}

/// Expands a checked factory.
pub(crate) fn expand(node: &Node) -> TokenStream {
    let sig = rewrite_signature(node);
    let builder = builder(node);
    let callee = callee(node);
    let run_ifs = run_ifs(node);
    let returned = match &node.item.sig.output {
        ReturnType::Default => None,
        ReturnType::Type(_, ty) => match strip(ty) {
            Type::Tuple(tuple) if tuple.elems.is_empty() => None,
            other => Some(other),
        },
    };
    let spec = match returned {
        None => quote!(#builder.system(#callee) #run_ifs),
        Some(ty) if !matches!(ty, Type::Tuple(_)) && last_segment_generic(ty, "Next").is_none() => {
            quote!(#builder.factory(#callee) #run_ifs)
        }
        Some(ty) => {
            let wrapper = wrapper(node, &sig, ty);
            quote!(#builder.system(#wrapper) #run_ifs)
        }
    };
    emit(node, sig, spec, false)
}

/// The closure that calls the factory and sets each of its outputs.
fn wrapper(node: &Node, sig: &syn::Signature, returned: &Type) -> TokenStream {
    let callee = callee(node);
    let mut params = Vec::new();
    let mut args = Vec::new();
    for (index, input) in sig.inputs.iter().enumerate() {
        let ident = format_ident!("__sluice_in{}", index);
        let ty = match input {
            FnArg::Receiver(_) => match node.checked.signature.receiver.map(|r| r.kind) {
                Some(ReceiverKind::Gated) => quote!(&mut Self),
                _ => quote!(&Self),
            },
            FnArg::Typed(typed) => {
                let ty = &typed.ty;
                quote!(#ty)
            }
        };
        params.push(quote!(#ident: #ty));
        args.push(ident);
    }
    let mut leaves = Vec::new();
    let pattern = pattern(returned, &mut leaves);
    let mut sets = Vec::new();
    for (index, leaf) in leaves.into_iter().enumerate() {
        let value = format_ident!("__sluice_out{}", index);
        let handle = format_ident!("__sluice_handle{}", index);
        // `Next<T>` as the user wrote it (their import of `sluice::Next`), else
        // the runtime's `Out`.
        let handle_ty = if last_segment_generic(leaf, "Next").is_some() {
            let ty = with_lifetime(leaf);
            quote!(#ty)
        } else {
            quote!(::sluice::Out<'_, #leaf>)
        };
        params.push(quote!(mut #handle: #handle_ty));
        sets.push(quote!(#handle.set(#value);));
    }
    quote! {
        |#(#params),*| {
            let #pattern = #callee(#(#args),*);
            #(#sets)*
        }
    }
}

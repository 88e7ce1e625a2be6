//! `#[factory]`: `&T` inputs, outputs from the return type and `Out<T>`
//! parameters, `Next<T>` for the next iteration.
//!
//! The function is kept with its outputs in the runtime's terms: an
//! `Out<T>` parameter becomes `Out<'_, T>` (the runtime's `sluice::Out`
//! handle, through the user's own import), an `Out<Next<T>>` one
//! `Next<'_, T>`, and a `Next<T>` in the return type becomes `T` (the body
//! returns the value; the macro routes it to the next iteration through a
//! `Next<'_, T>` handle spelled with the user's path).
//! A free factory keeps its name as a plain function item returning
//! `::sluice::Declared<D, R>` (see `declared.rs`; `R` the rewritten return
//! type), whose `FactoryDeclaration` impl writes the registration with a
//! nested body function calling the factory by name; a method keeps its
//! name and gains `<method>_factory()`. The registration, by the shape of
//! the outputs:
//!
//! - no return value: `NodeBuilder::system(body)` (the `Out` parameters make
//!   it a factory);
//! - one plain return value: `NodeBuilder::factory(body)`;
//! - a tuple, or a `Next<T>`: `NodeBuilder::system(body)`, the body taking
//!   the inputs plus one `Out`/`Next` parameter per output, calling the
//!   factory, destructuring the tuple and setting each output (for a
//!   method, a non-capturing closure doing the same).

use proc_macro2::TokenStream;
use quote::{ToTokens, format_ident, quote};
use sluice_rules::{ReceiverKind, last_segment_generic};
use syn::{FnArg, GenericArgument, Ident, PathArguments, ReturnType, Type, parse_quote};

use crate::declared::{self, Declaration};
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

/// How a factory's outputs leave it, from its (rewritten) return type.
enum Shape<'t> {
    /// No return value: its `Out` parameters (if any) make it a factory.
    Nothing,
    /// One plain value: the runtime's factory path produces it.
    One,
    /// A tuple or a `Next<T>`: one `Out`/`Next` handle per leaf.
    Handles(&'t Type),
}

fn shape(node: &Node) -> Shape<'_> {
    match &node.item.sig.output {
        ReturnType::Default => Shape::Nothing,
        ReturnType::Type(_, ty) => match strip(ty) {
            Type::Tuple(tuple) if tuple.elems.is_empty() => Shape::Nothing,
            ty if !matches!(ty, Type::Tuple(_)) && last_segment_generic(ty, "Next").is_none() => {
                Shape::One
            }
            ty => Shape::Handles(ty),
        },
    }
}

/// Expands a checked factory.
pub(crate) fn expand(node: &Node) -> TokenStream {
    let sig = rewrite_signature(node);
    let run_ifs = run_ifs(node);
    if node.is_method() {
        let builder = builder(node);
        let callee = callee(node);
        let spec = match shape(node) {
            Shape::Nothing => quote!(#builder.system(#callee) #run_ifs),
            Shape::One => quote!(#builder.factory(#callee) #run_ifs),
            Shape::Handles(returned) => {
                let (params, body) = routed(node, &sig, returned, &callee);
                quote!(#builder.system(|#(#params),*| #body) #run_ifs)
            }
        };
        return emit(node, sig, spec, false);
    }
    // A free factory: its declaration registers a body function calling it
    // by name, which unwraps the `Declared` it returns and routes each
    // output. A nested function (not a closure) keeps the signature's
    // elided lifetimes late-bound, as the function itself has them.
    let ident = &node.item.sig.ident;
    let call = quote!(#ident);
    let generics = &sig.generics;
    let where_clause = &sig.generics.where_clause;
    let (register, params, returns, body) = match shape(node) {
        Shape::Handles(returned) => {
            let (params, body) = routed(node, &sig, returned, &call);
            (quote!(system), params, quote!(), body)
        }
        shape => {
            let (params, args) = inputs(node, &sig);
            let (register, returns) = match shape {
                Shape::One => (quote!(factory), sig.output.to_token_stream()),
                _ => (quote!(system), quote!()),
            };
            (
                register,
                params,
                returns,
                quote!({ #call(#(#args),*).into_inner() }),
            )
        }
    };
    let declaration = Declaration {
        trait_path: quote!(::sluice::FactoryDeclaration),
        items: quote! {
            #[inline]
            fn spec() -> ::sluice::NodeSpec {
                #[inline]
                fn __sluice_body #generics (#(#params),*) #returns #where_clause #body
                Self::builder().#register(__sluice_body) #run_ifs
            }
        },
    };
    let value = declared::value_type(&sig);
    declared::emit(node, sig, &value, Some(declaration))
}

/// The items emitted beside a free factory's errors: the function, its
/// signature rewritten as when it compiles, its declaration unbuilt (see
/// [`declared::emit`]).
pub(crate) fn fallback(node: &Node) -> TokenStream {
    let sig = rewrite_signature(node);
    let value = declared::value_type(&sig);
    declared::emit(node, sig, &value, None)
}

/// The factory's inputs as parameters `__sluice_in{n}: T` (a receiver as
/// `&Self` / `&mut Self`), and the arguments passing them on.
fn inputs(node: &Node, sig: &syn::Signature) -> (Vec<TokenStream>, Vec<Ident>) {
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
    (params, args)
}

/// The parameters and body of the function that calls the factory
/// through `callee` and sets each output of `returned` (a tuple or a
/// `Next<T>`): the inputs plus one `Out`/`Next` handle per output; the
/// body destructures what the factory returned (unwrapping a free one's
/// `Declared`).
fn routed(
    node: &Node,
    sig: &syn::Signature,
    returned: &Type,
    callee: &TokenStream,
) -> (Vec<TokenStream>, TokenStream) {
    let (mut params, args) = inputs(node, sig);
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
    let unwrap = (!node.is_method()).then(|| quote!(.into_inner()));
    let body = quote! {{
        let #pattern = #callee(#(#args),*) #unwrap;
        #(#sets)*
    }};
    (params, body)
}

//! The aliasing assertions: a node's signature must not name one service
//! twice in conflicting ways, whatever path or alias names it.
//!
//! The rules crate's SA0002 compares type *tokens*, so `&Hp` beside
//! `&mut m::Hp`, or beside `&mut Health` with `type Health = Hp`, passes
//! it. Type identity is known only to the compiler, so for every pair of
//! parameters that would conflict if their services were one type (at least
//! one of the two is not shared), the macro emits
//!
//! ```text
//! impl heal {
//!     fn signature() {
//!         trait SignatureGatesAndReadsOneService {}
//!         impl SignatureGatesAndReadsOneService for Hp {}
//!         impl SignatureGatesAndReadsOneService for m::Hp {}
//!     }
//! }
//! ```
//!
//! and rustc reports E0119 (conflicting implementations of the trait for
//! type `Hp`) exactly when the two are one type, each impl spanned on the
//! parameter that names it. Nothing of it exists at run time.
//!
//! Left to the runtime's check: pairs whose types are spelled the same
//! (SA0002 reports those, with the better message), types that mention the
//! function's generic parameters, `Self`, `impl Trait` or `_` (they cannot
//! be named in an item), parameters under `#[cfg]`, methods (the macro sees
//! only the method, not the generics of its impl), and run conditions (every
//! parameter is shared, SA0003 reports the rest).

use std::collections::HashSet;

use proc_macro2::{Ident, Span, TokenStream, TokenTree};
use quote::{ToTokens, quote, quote_spanned};
use sluice_rules::{NodeKind, ParamKind, last_segment_generic};
use syn::visit::Visit;
use syn::{FnArg, GenericParam, ReturnType, Type};

use crate::parse::Node;

/// How one parameter touches its service.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Access {
    Shared,
    Gated,
    Produced,
}

/// One service a parameter (or a returned value) names.
struct Entry {
    access: Access,
    /// The service's type: as written, or `::sluice::NextValue<T>` for `Next<T>`.
    service: TokenStream,
    /// Its tokens as a string: equal strings are SA0002's business.
    key: String,
    /// The first and last token of the type as written, so the impl (and
    /// the error) covers it.
    first: Span,
    last: Span,
}

/// The trait whose two impls conflict when `a` and `b` are one type: the
/// error names it, so it says what the signature does.
fn trait_name(a: Access, b: Access) -> Option<&'static str> {
    use Access::*;
    Some(match (a, b) {
        (Shared, Shared) => return None,
        (Gated, Gated) => "SignatureGatesOneServiceTwice",
        (Gated, Shared) | (Shared, Gated) => "SignatureGatesAndReadsOneService",
        (Produced, Produced) => "SignatureProducesOneServiceTwice",
        (Produced, Shared) | (Shared, Produced) => "SignatureProducesAndReadsOneService",
        (Produced, Gated) | (Gated, Produced) => "SignatureProducesAndGatesOneService",
    })
}

/// The spans of the first and last token of `tokens`.
fn ends(tokens: TokenStream) -> (Span, Span) {
    let mut iter = tokens.into_iter();
    let first = iter.next().map_or_else(Span::call_site, |t| t.span());
    let last = iter.last().map_or(first, |t| match t {
        TokenTree::Group(g) => g.span_close(),
        other => other.span(),
    });
    (first, last)
}

/// Whether `ty` can be named by an item beside the function: it mentions
/// none of `generics`, no `Self`, no `impl Trait` and no `_`.
fn nameable(ty: &Type, generics: &[String]) -> bool {
    struct Finder<'g> {
        generics: &'g [String],
        found: bool,
    }
    impl<'ast> Visit<'ast> for Finder<'_> {
        fn visit_ident(&mut self, ident: &'ast Ident) {
            let name = ident.to_string();
            if name == "Self" || self.generics.contains(&name) {
                self.found = true;
            }
        }
        fn visit_lifetime(&mut self, lifetime: &'ast syn::Lifetime) {
            if self.generics.contains(&lifetime.to_string()) {
                self.found = true;
            }
        }
        fn visit_type_impl_trait(&mut self, _: &'ast syn::TypeImplTrait) {
            self.found = true;
        }
        fn visit_type_infer(&mut self, _: &'ast syn::TypeInfer) {
            self.found = true;
        }
        fn visit_type_macro(&mut self, _: &'ast syn::TypeMacro) {
            // What a macro expands to is unknown: it may name a generic.
            self.found = true;
        }
    }
    let mut finder = Finder {
        generics,
        found: false,
    };
    finder.visit_type(ty);
    !finder.found
}

fn strip(ty: &Type) -> &Type {
    match ty {
        Type::Paren(p) => strip(&p.elem),
        Type::Group(g) => strip(&g.elem),
        other => other,
    }
}

/// `ty`'s service when produced: `::sluice::NextValue<T>` for `next`, with
/// the added tokens spanned on the type as written.
fn produced(ty: &Type, next: bool, first: Span, last: Span) -> TokenStream {
    if !next {
        return ty.to_token_stream();
    }
    let open = quote_spanned!(first=> ::sluice::NextValue<);
    let close = quote_spanned!(last=> >);
    quote!(#open #ty #close)
}

/// The leaves of a factory's return type, in the order the rules crate
/// flattens them in.
fn leaves<'t>(ty: &'t Type, out: &mut Vec<&'t Type>) {
    match strip(ty) {
        Type::Tuple(tuple) => tuple.elems.iter().for_each(|elem| leaves(elem, out)),
        leaf => out.push(leaf),
    }
}

/// Every service the signature names, with how; `None` for one that cannot
/// be checked here.
fn entries(node: &Node) -> Vec<Option<Entry>> {
    let sig = &node.item.sig;
    let generics: Vec<String> = sig
        .generics
        .params
        .iter()
        .map(|param| match param {
            GenericParam::Type(t) => t.ident.to_string(),
            GenericParam::Const(c) => c.ident.to_string(),
            GenericParam::Lifetime(l) => l.lifetime.to_string(),
        })
        .collect();
    let mut out = Vec::new();
    let typed = sig.inputs.iter().filter_map(|input| match input {
        FnArg::Typed(typed) => Some(typed),
        FnArg::Receiver(_) => None,
    });
    for (typed, param) in typed.zip(&node.checked.signature.params) {
        let under_cfg = typed.attrs.iter().any(|a| a.path().is_ident("cfg"));
        let (first, last) = ends(typed.ty.to_token_stream());
        let entry = match &param.kind {
            ParamKind::Shared(ty) => Some((Access::Shared, ty.to_token_stream(), ty)),
            ParamKind::Gated(ty) => Some((Access::Gated, ty.to_token_stream(), ty)),
            ParamKind::Out { ty, next } => {
                Some((Access::Produced, produced(ty, *next, first, last), ty))
            }
            ParamKind::Handle | ParamKind::ByValue => None,
        };
        out.push(
            entry
                .filter(|(_, _, ty)| !under_cfg && nameable(ty, &generics))
                .map(|(access, service, _)| Entry {
                    access,
                    key: service.to_string(),
                    service,
                    first,
                    last,
                }),
        );
    }
    if node.checked.signature.kind == NodeKind::Factory
        && let ReturnType::Type(_, ty) = &sig.output
    {
        let mut written = Vec::new();
        leaves(ty, &mut written);
        for leaf in written {
            let (first, last) = ends(leaf.to_token_stream());
            let (ty, next) = match last_segment_generic(leaf, "Next") {
                Some(inner) => (inner, true),
                None => (leaf, false),
            };
            let is_unit = matches!(ty, Type::Tuple(t) if t.elems.is_empty());
            out.push((!is_unit && nameable(ty, &generics)).then(|| {
                let service = produced(ty, next, first, last);
                Entry {
                    access: Access::Produced,
                    key: service.to_string(),
                    service,
                    first,
                    last,
                }
            }));
        }
    }
    out
}

/// One impl of `trait_ident` for `entry`'s service, spanned on the type as
/// written: `impl` opens at its first token and the impl's (empty) body
/// closes at its last, so rustc's error covers the whole type.
fn impl_for(trait_ident: &str, entry: &Entry) -> TokenStream {
    let (first, last) = (entry.first, entry.last);
    let trait_ident = Ident::new(trait_ident, first);
    let body = quote_spanned!(last=> {});
    let service = &entry.service;
    quote_spanned! {first=>
        impl #trait_ident for #service #body
    }
}

/// The assertions for `node`: for each pair of services that conflict if
/// they are one type (and that SA0002 has not already compared), a trait
/// with one impl for each. Empty for a method or a run condition.
pub(crate) fn assertions(node: &Node) -> TokenStream {
    if node.checked.signature.kind == NodeKind::RunCondition || node.is_method() {
        return TokenStream::new();
    }
    let entries = entries(node);
    let mut seen = HashSet::new();
    let mut blocks = Vec::new();
    for (j, later) in entries.iter().enumerate() {
        let Some(later) = later else { continue };
        for earlier in entries[..j].iter().flatten() {
            let Some(name) = trait_name(earlier.access, later.access) else {
                continue;
            };
            // Spelled the same: SA0002 compares those. Already asserted for
            // this pair of spellings: one mistake, one error.
            let spellings = if earlier.key < later.key {
                (earlier.key.clone(), later.key.clone())
            } else {
                (later.key.clone(), earlier.key.clone())
            };
            if earlier.key == later.key || !seen.insert(spellings) {
                continue;
            }
            let first = impl_for(name, earlier);
            let second = impl_for(name, later);
            let trait_ident = Ident::new(name, Span::call_site());
            blocks.push(quote! {
                {
                    trait #trait_ident {}
                    #first
                    #second
                }
            });
        }
    }
    if blocks.is_empty() {
        return TokenStream::new();
    }
    let cfgs = node
        .item
        .attrs
        .iter()
        .filter(|attr| attr.path().is_ident("cfg"));
    // An anonymous constant: the check names nothing, so it shadows nothing.
    quote! {
        #(#cfgs)*
        const _: () = {
            #(#blocks)*
        };
    }
}

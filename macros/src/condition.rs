//! `#[run_condition]`: checked (read-only, returns `bool`) and kept as
//! written, so the function item itself is the `sluice::ConditionFn` a node's
//! `run_if` takes; nothing is added, so nothing costs.

use proc_macro2::TokenStream;
use quote::{ToTokens, quote};
use sluice_rules::ParamKind;
use syn::{FnArg, Pat, PatWild, ReturnType, Type, parse_quote};

use crate::parse::Node;

/// The function, unchanged; or, when it has errors, a stand-in of the same
/// name that is a valid run condition (every parameter `&T`, `-> bool`, a
/// body that is never run), so that `run_if = name` raises no second error.
pub(crate) fn expand(node: &Node) -> TokenStream {
    if node.checked.is_ok() {
        return node.item.to_token_stream();
    }
    let mut sig = node.item.sig.clone();
    let mut params = node.checked.signature.params.iter();
    for input in sig.inputs.iter_mut() {
        match input {
            FnArg::Receiver(receiver) => {
                receiver.mutability = None;
                *receiver.ty = parse_quote!(&Self);
                receiver.reference = Some((Default::default(), None));
                receiver.colon_token = None;
            }
            FnArg::Typed(typed) => {
                let service: Type = match params.next().map(|p| (&p.kind, &p.ty)) {
                    Some((ParamKind::Shared(ty) | ParamKind::Gated(ty), _)) => ty.clone(),
                    Some((_, ty)) => ty.clone(),
                    None => (*typed.ty).clone(),
                };
                *typed.ty = parse_quote!(&#service);
                *typed.pat = Pat::Wild(PatWild {
                    attrs: Vec::new(),
                    underscore_token: Default::default(),
                });
            }
        }
    }
    sig.output = ReturnType::Type(Default::default(), Box::new(parse_quote!(bool)));
    sig.asyncness = None;
    let attrs = &node.item.attrs;
    let vis = &node.item.vis;
    quote! {
        #(#attrs)*
        #[allow(unused_variables)]
        #vis #sig {
            ::core::unreachable!("this run condition did not compile")
        }
    }
}

//! Stage three of the pipeline, the parts every node kind shares: the
//! builder chain, a method's shape (kept, with an added associated function
//! returning its `NodeSpec`), and a method's fallback emitted beside the
//! errors. A free function's shape is `declared.rs`.

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use sluice_rules::{NodeKind, Schedule, SiblingOrder};
use syn::{Attribute, Signature};

use crate::parse::Node;

/// `::sluice::NodeBuilder::new("name").key(..).after(..).before(..)`, then
/// `.exclusive()` and the organisation (`.phase(..)`, `.in_group(..)`, ...),
/// each argument as the builder call a person would write by hand.
pub(crate) fn builder(node: &Node) -> TokenStream {
    let sig = &node.checked.signature;
    let args = &sig.args;
    let name = sig.name();
    let key = key(node);
    let after = args.after.iter().map(|target| target.name());
    let before = args.before.iter().map(|target| target.name());
    let exclusive = args.exclusive.then(|| quote!(.exclusive()));
    let phase = args.phase.map(|phase| {
        let variant = format_ident!("{}", phase.value.name());
        quote!(.phase(::sluice::Phase::#variant))
    });
    let group = args.group.as_ref().map(|group| quote!(.in_group(#group)));
    let stage = args.stage.as_ref().map(|stage| quote!(.in_stage(#stage)));
    let set = args.set.as_ref().map(|set| quote!(.in_set(#set)));
    let cadence = args.cadence.map(|cadence| {
        let variant = format_ident!("{}", cadence.value.name());
        quote!(.cadence(::sluice::Cadence::#variant))
    });
    let schedule = args
        .schedule
        .as_ref()
        .map(|schedule| match &schedule.value {
            Schedule::Update => quote!(.in_schedule(::sluice::Schedule::Update)),
            Schedule::Startup => quote!(.in_schedule(::sluice::Schedule::Startup)),
            Schedule::Named(name) => quote!(.in_schedule(::sluice::Schedule::named(#name))),
        });
    let order = args.order.map(|order| {
        let order = order.value;
        quote!(.order(#order))
    });
    let sibling = args.sibling.map(|sibling| match sibling.value {
        SiblingOrder::First => quote!(.order_first()),
        SiblingOrder::Last => quote!(.order_last()),
    });
    let ambiguous_with = &args.ambiguous_with;
    let ambiguous_with_all = args
        .ambiguous_with_all
        .then(|| quote!(.ambiguous_with_all()));
    quote! {
        ::sluice::NodeBuilder::new(#name)
            .key(#key)
            #(.after(#after))*
            #(.before(#before))*
            #exclusive
            #phase
            #group
            #stage
            #set
            #cadence
            #schedule
            #order
            #sibling
            #(.ambiguous_with(#ambiguous_with))*
            #ambiguous_with_all
    }
}

/// The node's instance key: `key = ".."` when given, else the function's
/// qualified path, as the runtime keys a plain function
/// (`std::any::type_name` of the function item): `module_path!()::update`
/// for a free function, `<type_name of Self>::tick` for a method (the
/// method's path through its type, generic arguments included).
fn key(node: &Node) -> TokenStream {
    if let Some(key) = &node.checked.signature.args.key {
        return quote!(#key);
    }
    let ident = node.item.sig.ident.to_string();
    if node.is_method() {
        quote! {
            ::std::format!("{}::{}", ::core::any::type_name::<Self>(), #ident)
        }
    } else {
        quote!(::core::concat!(::core::module_path!(), "::", #ident))
    }
}

/// `.run_if(cond)` for every `run_if = cond`, applied to a `NodeSpec`.
pub(crate) fn run_ifs(node: &Node) -> TokenStream {
    let conditions = &node.checked.signature.args.run_if;
    quote!(#(.run_if(#conditions))*)
}

/// The function a method's node body calls: `Self::method`.
pub(crate) fn callee(node: &Node) -> TokenStream {
    let ident = &node.item.sig.ident;
    quote!(Self::#ident)
}

fn is_cfg(attr: &Attribute) -> bool {
    attr.path().is_ident("cfg")
}

/// Emits a method's items: the method as kept (`run_sig`: factories
/// rewrite `Out`/`Next`) and `<method>_system()` / `<method>_factory()`
/// returning `spec`, which calls the method through [`callee`]. With
/// `fallback`, `spec` is never run (the errors beside it stop the build).
pub(crate) fn emit(
    node: &Node,
    run_sig: Signature,
    spec: TokenStream,
    fallback: bool,
) -> TokenStream {
    let kind = node.checked.signature.kind;
    let item = &node.item;
    let vis = &item.vis;
    let block = &item.block;
    let attrs = &item.attrs;
    let ident = &item.sig.ident;
    let cfgs: Vec<&Attribute> = attrs.iter().filter(|a| is_cfg(a)).collect();
    let (added_fn, register_with) = match kind {
        NodeKind::Factory => (format_ident!("{}_factory", ident), "add_factory"),
        _ => (format_ident!("{}_system", ident), "add_system"),
    };
    let allow_unused = fallback.then(|| quote!(#[allow(dead_code)]));
    let doc = format!(
        "The {} `{}` declared by `{ident}`'s signature, for `world.{register_with}(Self::{added_fn}())`.",
        kind.attribute_name(),
        node.checked.signature.name(),
    );
    quote! {
        #(#attrs)*
        #vis #run_sig #block

        #[doc = #doc]
        #(#cfgs)*
        #allow_unused
        #vis fn #added_fn() -> ::sluice::NodeSpec {
            #spec
        }
    }
}

/// The items emitted beside a method's errors: the method kept and a
/// registration that is never reached, so later uses of its name raise no
/// error of their own.
pub(crate) fn fallback(node: &Node) -> TokenStream {
    let run_sig = match node.checked.signature.kind {
        NodeKind::Factory => crate::factory::rewrite_signature(node),
        _ => node.item.sig.clone(),
    };
    let spec = quote_spanned! {Span::call_site()=>
        ::core::unreachable!("this node did not compile")
    };
    emit(node, run_sig, spec, true)
}

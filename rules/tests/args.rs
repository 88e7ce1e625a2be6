//! SA0006: the attribute's own arguments.

mod common;

use common::{check, codes};
use quote::quote;
use sluice_rules::{Code, NodeKind, OrderTarget, parse_args, parse_attribute};
use syn::parse_quote;

fn arg_codes(kind: NodeKind, tokens: proc_macro2::TokenStream) -> Vec<Code> {
    parse_args(kind, tokens).1.iter().map(|d| d.code).collect()
}

#[test]
fn valid_arguments() {
    let (args, diagnostics) = parse_args(
        NodeKind::System,
        quote!(
            after = "spawner",
            after = PreUpdate,
            before = "render",
            name = "hud",
            exclusive,
            allow_locks = "ffi",
            run_if = enabled,
            run_if = rules::not_paused
        ),
    );
    assert!(diagnostics.is_empty(), "{diagnostics:?}");
    assert!(matches!(args.after[0], OrderTarget::Name(_)));
    assert!(matches!(args.after[1], OrderTarget::Marker(_)));
    assert_eq!(args.after[1].name(), "PreUpdate");
    assert_eq!(args.before[0].name(), "render");
    assert_eq!(args.name.unwrap().value(), "hud");
    assert!(args.exclusive);
    assert_eq!(args.allow_locks.unwrap().value(), "ffi");
    assert_eq!(args.run_if.len(), 2);
    assert!(args.run_if[0].is_ident("enabled"));
    assert_eq!(args.run_if[1].segments.len(), 2);
    assert_eq!(
        arg_codes(NodeKind::System, quote!(run_if = "enabled")),
        [Code::InvalidAttribute]
    );
    assert_eq!(
        arg_codes(NodeKind::RunCondition, quote!(run_if = enabled)),
        [Code::InvalidAttribute]
    );
    assert_eq!(arg_codes(NodeKind::Factory, quote!(after = "terrain")), []);
    assert_eq!(
        arg_codes(NodeKind::RunCondition, quote!(name = "enabled")),
        []
    );
}

#[test]
fn unknown_key() {
    let (_, diagnostics) = parse_args(NodeKind::System, quote!(afterr = "spawner"));
    assert_eq!(diagnostics.len(), 1);
    assert_eq!(diagnostics[0].code, Code::InvalidAttribute);
    assert!(diagnostics[0].message.contains("unknown key `afterr`"));
    // ordering means nothing on a run condition
    assert_eq!(
        arg_codes(NodeKind::RunCondition, quote!(after = "x")),
        [Code::InvalidAttribute]
    );
}

#[test]
fn wrong_value_forms() {
    assert_eq!(
        arg_codes(NodeKind::System, quote!(after = 3)),
        [Code::InvalidAttribute]
    );
    assert_eq!(
        arg_codes(NodeKind::System, quote!(after = "")),
        [Code::InvalidAttribute]
    );
    assert_eq!(
        arg_codes(NodeKind::System, quote!(name = hud)),
        [Code::InvalidAttribute]
    );
    assert_eq!(
        arg_codes(NodeKind::System, quote!(exclusive = true)),
        [Code::InvalidAttribute]
    );
    assert_eq!(
        arg_codes(NodeKind::System, quote!(after)),
        [Code::InvalidAttribute]
    );
    assert_eq!(
        arg_codes(NodeKind::System, quote!(name = "a", name = "b")),
        [Code::InvalidAttribute]
    );
    assert_eq!(
        arg_codes(NodeKind::System, quote!(after = , )),
        [Code::InvalidAttribute]
    );
}

#[test]
fn allow_locks_needs_a_reason() {
    assert_eq!(
        arg_codes(NodeKind::System, quote!(allow_locks = "")),
        [Code::InvalidAttribute]
    );
    assert_eq!(
        arg_codes(NodeKind::System, quote!(allow_locks = "  ")),
        [Code::InvalidAttribute]
    );
    assert_eq!(
        arg_codes(NodeKind::System, quote!(allow_locks)),
        [Code::InvalidAttribute]
    );
    assert_eq!(
        arg_codes(
            NodeKind::System,
            quote!(allow_locks = "talks to a C library")
        ),
        []
    );
}

#[test]
fn attribute_forms() {
    let attr: syn::Attribute = parse_quote!(#[sluice::system(after = "a")]);
    let (kind, args, diagnostics) = parse_attribute(&attr).unwrap();
    assert_eq!(kind, NodeKind::System);
    assert_eq!(args.after.len(), 1);
    assert!(diagnostics.is_empty());
    let attr: syn::Attribute = parse_quote!(#[run_condition]);
    assert_eq!(parse_attribute(&attr).unwrap().0, NodeKind::RunCondition);
    let attr: syn::Attribute = parse_quote!(#[factory = "x"]);
    assert_eq!(
        parse_attribute(&attr).unwrap().2[0].code,
        Code::InvalidAttribute
    );
    let attr: syn::Attribute = parse_quote!(#[derive(Debug)]);
    assert!(parse_attribute(&attr).is_none());
}

#[test]
fn argument_errors_come_first_in_a_full_check() {
    let f: syn::ItemFn = parse_quote! { fn hud(hp: Hp) {} };
    let checked = check(NodeKind::System, quote!(colour = "red"), &f);
    assert_eq!(
        codes(&checked),
        [Code::InvalidAttribute, Code::ByValueParam]
    );
}

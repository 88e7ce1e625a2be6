//! SA0001..SA0004 and SA0007: the signature rules, each with a positive and a
//! negative case, and the model the macros expand from.

mod common;

use common::{check, codes_of};
use proc_macro2::TokenStream;
use quote::quote;
use sluice_rules::{Code, NodeKind, ParamKind, ReceiverKind, Signature, type_key};
use syn::parse_quote;

#[test]
fn a_valid_system_has_no_findings_and_classifies_its_parameters() {
    let f: syn::ItemFn = parse_quote! {
        fn hud(hp: &Hp, score: &mut Score, time: &crate::Time) { score.0 += hp.0; }
    };
    let checked = check(NodeKind::System, TokenStream::new(), &f);
    assert!(checked.is_ok(), "{:?}", checked.diagnostics);
    let kinds: Vec<_> = checked
        .signature
        .params
        .iter()
        .map(|p| match &p.kind {
            ParamKind::Shared(t) => format!("shared {}", type_key(t)),
            ParamKind::Gated(t) => format!("gated {}", type_key(t)),
            other => format!("{other:?}"),
        })
        .collect();
    assert_eq!(kinds, ["shared Hp", "gated Score", "shared crate :: Time"]);
    assert_eq!(checked.signature.params[1].ident.as_ref().unwrap(), "score");
    assert_eq!(checked.signature.name(), "hud");
}

#[test]
fn sa0001_by_value_parameter() {
    let f = parse_quote! { fn tick(time: Time, hp: &Hp) {} };
    assert_eq!(codes_of(NodeKind::System, f), [Code::ByValueParam]);
    let f = parse_quote! { fn tick(time: &Time, hp: &mut Hp) {} };
    assert_eq!(codes_of(NodeKind::System, f), []);
}

#[test]
fn sa0001_out_only_in_factories() {
    let f = parse_quote! { fn sys(mesh: Out<Mesh>) {} };
    let checked = check(NodeKind::System, TokenStream::new(), &f);
    assert_eq!(common::codes(&checked), [Code::ByValueParam]);
    assert!(
        checked.diagnostics[0]
            .message
            .contains("only a factory produces")
    );
    let f = parse_quote! { fn build(terrain: &Terrain, mesh: Out<Mesh>) {} };
    assert_eq!(codes_of(NodeKind::Factory, f), []);
}

#[test]
fn sa0001_self_by_value() {
    let f: syn::ImplItemFn = parse_quote! { fn update(self, hp: &Hp) {} };
    let checked = sluice_rules::check_tokens(NodeKind::System, TokenStream::new(), &f.sig, None);
    assert_eq!(common::codes(&checked), [Code::ByValueParam]);
    let f: syn::ImplItemFn = parse_quote! { fn update(&mut self, hp: &Hp) {} };
    let checked = sluice_rules::check_tokens(NodeKind::System, TokenStream::new(), &f.sig, None);
    assert!(checked.is_ok());
    assert_eq!(
        checked.signature.receiver.unwrap().kind,
        ReceiverKind::Gated
    );
}

#[test]
fn sa0002_conflicting_access() {
    let f = parse_quote! { fn a(x: &A, y: &mut A) {} };
    assert_eq!(codes_of(NodeKind::System, f), [Code::ConflictingAccess]);
    let f = parse_quote! { fn a(x: &mut A, y: &mut A) {} };
    assert_eq!(codes_of(NodeKind::System, f), [Code::ConflictingAccess]);
    // token-string comparison: spacing does not matter
    let f = parse_quote! { fn a(x: &Foo<u32>, y: &mut Foo < u32 >) {} };
    assert_eq!(codes_of(NodeKind::System, f), [Code::ConflictingAccess]);
}

#[test]
fn sa0002_shared_twice_and_different_types_are_fine() {
    let f = parse_quote! { fn a(x: &A, y: &A, z: &mut B, w: &mut Foo<u32>, v: &Foo<u64>) {} };
    assert_eq!(codes_of(NodeKind::System, f), []);
}

#[test]
fn sa0002_a_factory_consuming_what_it_produces() {
    let f = parse_quote! { fn build(mesh: &Mesh) -> Mesh { todo!() } };
    assert_eq!(codes_of(NodeKind::Factory, f), [Code::ConflictingAccess]);
    let f = parse_quote! { fn build(a: Out<Mesh>, b: Out<Mesh>) {} };
    assert_eq!(codes_of(NodeKind::Factory, f), [Code::ConflictingAccess]);
    // producing for the next iteration what it reads now is the point of Next<T>
    let f = parse_quote! { fn build(graph: &Graph) -> Next<Graph> { todo!() } };
    assert_eq!(codes_of(NodeKind::Factory, f), []);
}

#[test]
fn sa0002_span_is_on_the_second_parameter() {
    let f: syn::ItemFn = parse_quote! { fn a(x: &A, y: &mut A) {} };
    let checked = check(NodeKind::System, TokenStream::new(), &f);
    let d = &checked.diagnostics[0];
    assert!(d.message.contains("`A` is gated"), "{}", d.message);
    assert_eq!(
        format!("{:?}", d.span),
        format!("{:?}", checked.signature.params[1].span)
    );
}

#[test]
fn sa0003_mut_in_run_condition() {
    let f: syn::ItemFn =
        parse_quote! { fn enabled(time: &Time, flags: &mut Flags) -> bool { true } };
    let checked = check(NodeKind::RunCondition, TokenStream::new(), &f);
    assert_eq!(common::codes(&checked), [Code::MutInRunCondition]);
    assert_eq!(
        format!("{:?}", checked.diagnostics[0].span),
        format!("{:?}", checked.signature.params[1].span)
    );
    let f = parse_quote! { fn enabled(time: &Time, flags: &Flags) -> bool { true } };
    assert_eq!(codes_of(NodeKind::RunCondition, f), []);
    // the same signature is fine in a system
    let f = parse_quote! { fn enabled(time: &Time, flags: &mut Flags) -> bool { true } };
    assert_eq!(codes_of(NodeKind::System, f), []);
}

#[test]
fn sa0003_mut_self_in_run_condition() {
    let f: syn::ImplItemFn = parse_quote! { fn enabled(&mut self) -> bool { true } };
    let checked =
        sluice_rules::check_tokens(NodeKind::RunCondition, TokenStream::new(), &f.sig, None);
    assert_eq!(common::codes(&checked), [Code::MutInRunCondition]);
}

#[test]
fn sa0004_non_static_service() {
    let f = parse_quote! { fn a<'a>(x: &'a Foo<'a>) {} };
    assert_eq!(codes_of(NodeKind::System, f), [Code::NonStaticService]);
    let f = parse_quote! { fn a<'a>(x: &mut Foo<'a>) {} };
    assert_eq!(codes_of(NodeKind::System, f), [Code::NonStaticService]);
    let f = parse_quote! { fn a(x: &Foo<'_>) {} };
    assert_eq!(codes_of(NodeKind::System, f), [Code::NonStaticService]);
    let f = parse_quote! { fn a() -> View<'static, 'b> { todo!() } };
    assert_eq!(codes_of(NodeKind::Factory, f), [Code::NonStaticService]);
}

#[test]
fn sa0004_static_and_elided_are_fine() {
    let f =
        parse_quote! { fn a(x: &'_ Foo, y: &Names<'static>, z: &Box<dyn for<'b> Fn(&'b str)>) {} };
    assert_eq!(codes_of(NodeKind::System, f), []);
}

#[test]
fn sa0007_run_condition_returns_bool() {
    let f = parse_quote! { fn enabled(time: &Time) -> u8 { 1 } };
    assert_eq!(
        codes_of(NodeKind::RunCondition, f),
        [Code::InvalidNodeShape]
    );
    let f = parse_quote! { fn enabled(time: &Time) {} };
    assert_eq!(
        codes_of(NodeKind::RunCondition, f),
        [Code::InvalidNodeShape]
    );
    let f = parse_quote! { fn enabled(time: &Time) -> bool { true } };
    assert_eq!(codes_of(NodeKind::RunCondition, f), []);
}

#[test]
fn sa0007_factory_produces_something_and_nodes_are_not_async() {
    let f = parse_quote! { fn build(terrain: &Terrain) {} };
    assert_eq!(codes_of(NodeKind::Factory, f), [Code::InvalidNodeShape]);
    let f = parse_quote! { async fn tick(time: &Time) {} };
    assert_eq!(codes_of(NodeKind::System, f), [Code::InvalidNodeShape]);
    let f = parse_quote! { fn tick(time: &Time) {} };
    assert_eq!(codes_of(NodeKind::System, f), []);
}

#[test]
fn factory_outputs_flatten_tuples_and_next() {
    let f: syn::ItemFn = parse_quote! {
        fn build(terrain: &Terrain, extra: Out<Next<Lights>>) -> (Mesh, Next<Graph>) { todo!() }
    };
    let checked = check(NodeKind::Factory, TokenStream::new(), &f);
    assert!(checked.is_ok(), "{:?}", checked.diagnostics);
    let produced: Vec<(String, bool)> = checked
        .signature
        .produced()
        .into_iter()
        .map(|(ty, next, _)| (type_key(ty), next))
        .collect();
    assert_eq!(
        produced,
        [
            ("Mesh".to_string(), false),
            ("Graph".to_string(), true),
            ("Lights".to_string(), true)
        ]
    );
}

#[test]
fn name_override_and_attribute_args_reach_the_model() {
    let f: syn::ItemFn = parse_quote! { fn hud(hp: &Hp) {} };
    let checked = check(
        NodeKind::System,
        quote!(
            after = "spawner",
            before = render::Phase,
            name = "overlay",
            exclusive
        ),
        &f,
    );
    assert!(checked.is_ok(), "{:?}", checked.diagnostics);
    let sig: &Signature = &checked.signature;
    assert_eq!(sig.name(), "overlay");
    assert!(sig.args.exclusive);
    assert_eq!(sig.args.after[0].name(), "spawner");
    assert_eq!(sig.args.before[0].name(), "Phase");
}

#[test]
fn diagnostics_become_one_syn_error_per_finding() {
    let f: syn::ItemFn = parse_quote! { fn a(x: A, y: B) {} };
    let checked = check(NodeKind::System, TokenStream::new(), &f);
    let error = checked.to_syn_error().unwrap();
    let messages: Vec<String> = error.into_iter().map(|e| e.to_string()).collect();
    assert_eq!(messages.len(), 2);
    assert!(messages[0].starts_with("SA0001: service parameter `A` is taken by value"));
    assert!(messages[0].contains("= help: take `&A`"));
}

#[test]
fn sa0002_other_spellings_only_with_the_tree_aliases() {
    use sluice_rules::{BodyContext, TypeAliases, validate};
    let f: syn::ItemFn = parse_quote! { fn heal(current: &Hp, hp: &mut m::Hp, b: &mut Health) {} };
    let sig = Signature::parse(NodeKind::System, Default::default(), &f.sig);
    // the macros' mode compares tokens: the compiler checks other spellings
    assert!(validate(&sig, None, &BodyContext::default()).is_empty());
    // `sluice check`'s mode: by last segment, through the tree's aliases
    let mut aliases = TypeAliases::new();
    aliases.add_alias("Health", parse_quote!(Hp));
    let context = BodyContext {
        services: Some(aliases),
        ..BodyContext::default()
    };
    let found = validate(&sig, None, &context);
    assert_eq!(found.len(), 2, "{found:?}");
    assert!(found.iter().all(|d| d.code == Code::ConflictingAccess));
    // each on the later parameter, with a note on the first
    let column = |s: proc_macro2::Span| s.start().column;
    assert_eq!(column(found[0].span), column(sig.params[1].span));
    assert_eq!(column(found[0].notes[0].0), column(sig.params[0].span));
    assert_eq!(column(found[1].span), column(sig.params[2].span));
}

#[test]
fn sa0002_next_and_its_pending_value_with_the_tree_aliases() {
    use sluice_rules::{BodyContext, TypeAliases, validate};
    let context = BodyContext {
        services: Some(TypeAliases::new()),
        ..BodyContext::default()
    };
    let codes = |f: syn::ItemFn| -> Vec<Code> {
        let sig = Signature::parse(NodeKind::Factory, Default::default(), &f.sig);
        validate(&sig, None, &context)
            .iter()
            .map(|d| d.code)
            .collect()
    };
    let conflict = [Code::ConflictingAccess];
    assert_eq!(
        codes(parse_quote! { fn a(p: &mut NextValue<L>, n: Out<Next<L>>) {} }),
        conflict
    );
    assert_eq!(
        codes(parse_quote! { fn a(p: &NextValue<G>) -> Next<G> { todo!() } }),
        conflict
    );
    assert_eq!(
        codes(parse_quote! { fn a(x: Out<Next<L>>, y: Out<Next<m::L>>) {} }),
        conflict
    );
    assert_eq!(
        codes(parse_quote! { fn a(x: &m::Mesh, y: Out<Mesh>) {} }),
        conflict
    );
    // reading the current value while producing the next is the point of Next
    assert_eq!(codes(parse_quote! { fn a(l: &L, n: Out<Next<L>>) {} }), []);
    assert_eq!(
        codes(parse_quote! { fn a(l: &mut L) -> Next<L> { todo!() } }),
        []
    );
}

#[test]
fn sa0002_a_component_named_twice_in_queries() {
    // Read in one query, written in another: the runtime refuses it (SL0009).
    let f = parse_quote! { fn steer(a: Query<&Pos>, b: Query<(&mut Pos, &Vel)>) {} };
    let checked = check(NodeKind::System, TokenStream::new(), &f);
    assert_eq!(common::codes(&checked), [Code::ConflictingAccess]);
    assert!(
        checked.diagnostics[0].message.contains("component `Pos`"),
        "{:?}",
        checked.diagnostics
    );
    // Within one query, through an option or a reference target.
    let f = parse_quote! { fn steer(q: Query<(&mut Pos, Option<&Pos>)>) {} };
    assert_eq!(codes_of(NodeKind::System, f), [Code::ConflictingAccess]);
    let f = parse_quote! { fn steer(q: Query<(&mut Pos, Target<Pos>)>) {} };
    assert_eq!(codes_of(NodeKind::System, f), [Code::ConflictingAccess]);
    // Shared twice, different components, filters: fine.
    let f = parse_quote! {
        fn look(a: Query<(Entity, &Pos), With<Enemy>>, b: Query<&Pos, Changed<Pos>>, c: Query<&mut Vel>) {}
    };
    assert_eq!(codes_of(NodeKind::System, f), []);
    // A component and a service of one name are different lanes.
    let f = parse_quote! { fn mixed(q: Query<&mut Pos>, pos: &Pos) {} };
    assert_eq!(codes_of(NodeKind::System, f), []);
}

// ---- optional services (issue 20): `Option<&T>` / `Option<&mut T>` ----

#[test]
fn optional_services_declare_the_lane_of_their_reference() {
    let f: syn::ItemFn = parse_quote! {
        fn tick(time: Option<&FrameTime>, score: Option<&mut Score>, hp: &Hp) {}
    };
    let checked = check(NodeKind::System, TokenStream::new(), &f);
    assert!(checked.is_ok(), "{:?}", checked.diagnostics);
    let kinds: Vec<_> = checked
        .signature
        .params
        .iter()
        .map(|p| match &p.kind {
            ParamKind::Shared(t) => format!("shared {} {}", type_key(t), p.optional),
            ParamKind::Gated(t) => format!("gated {} {}", type_key(t), p.optional),
            other => format!("{other:?}"),
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "shared FrameTime true",
            "gated Score true",
            "shared Hp false"
        ]
    );
    // `Option<T>` by value is still a by-value service.
    let f = parse_quote! { fn tick(time: Option<FrameTime>) {} };
    assert_eq!(codes_of(NodeKind::System, f), [Code::ByValueParam]);
}

#[test]
fn optional_services_conflict_like_their_references() {
    let f = parse_quote! { fn heal(hp: &mut Hp, seen: Option<&Hp>) {} };
    assert_eq!(codes_of(NodeKind::System, f), [Code::ConflictingAccess]);
    let f = parse_quote! { fn heal(hp: Option<&mut Hp>, again: Option<&mut Hp>) {} };
    assert_eq!(codes_of(NodeKind::System, f), [Code::ConflictingAccess]);
    let f = parse_quote! { fn look(hp: &Hp, seen: Option<&Hp>) {} };
    assert_eq!(codes_of(NodeKind::System, f), []);
}

#[test]
fn sa0003_optional_mut_in_a_run_condition() {
    let f = parse_quote! { fn enabled(time: Option<&mut FrameTime>) -> bool { true } };
    let checked = check(NodeKind::RunCondition, TokenStream::new(), &f);
    assert_eq!(common::codes(&checked), [Code::MutInRunCondition]);
    assert!(
        checked.diagnostics[0]
            .message
            .contains("takes `Option<&mut FrameTime>`"),
        "{}",
        checked.diagnostics[0].message
    );
    let f = parse_quote! { fn enabled(time: Option<&FrameTime>) -> bool { time.is_some() } };
    assert_eq!(codes_of(NodeKind::RunCondition, f), []);
}

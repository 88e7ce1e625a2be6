//! The signature rules: SA0001 (by value), SA0002 (conflicts), SA0003 (`&mut`
//! in a run condition), SA0004 (not `'static`), SA0007 (shape).

use proc_macro2::Span;
use syn::spanned::Spanned;
use syn::{ReturnType, Type};

use crate::args::NodeKind;
use crate::code::Code;
use crate::diagnostic::Diagnostic;
use crate::services::TypeAliases;
use crate::signature::{ParamKind, ReceiverKind, Signature};
use crate::types::{QueryShape, non_static_lifetimes, type_key};

/// Runs every rule that needs only the signature, in parameter order;
/// SA0002 compares services by their type's tokens.
pub fn validate_signature(sig: &Signature) -> Vec<Diagnostic> {
    validate_signature_with(sig, None)
}

/// Runs every rule that needs only the signature, in parameter order; with
/// `services`, SA0002 compares services by resolved last path segment
/// through those aliases (see [`TypeAliases`]), else by their type's tokens.
pub fn validate_signature_with(sig: &Signature, services: Option<&TypeAliases>) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    by_value(sig, &mut out);
    mut_in_condition(sig, &mut out);
    non_static(sig, &mut out);
    match services {
        None => conflicts(sig, &mut out),
        Some(aliases) => resolved_conflicts(sig, aliases, &mut out),
    }
    query_conflicts(sig, &mut out);
    shape(sig, &mut out);
    out
}

/// SA0002 for components: a signature whose queries name one component
/// twice where either names it `&mut` (the runtime refuses it as SL0009).
fn query_conflicts(sig: &Signature, out: &mut Vec<Diagnostic>) {
    let mut seen: Vec<(String, Access)> = Vec::new();
    for p in &sig.params {
        let Some(shape) = QueryShape::of_query(&p.ty) else {
            continue;
        };
        let mut components = Vec::new();
        shape.components(&mut components);
        for (component, mutable) in components {
            let access = if mutable {
                Access::Gated
            } else {
                Access::Shared
            };
            let key = type_key(component);
            let text = ty_text(component);
            if let Some((_, first)) = seen.iter().find(|(k, a)| *k == key && a.conflicts(access)) {
                out.push(Diagnostic::new(
                    Code::ConflictingAccess,
                    p.ty.span(),
                    format!(
                        "component `{text}` is {} here and {} earlier in the same signature",
                        access.describe(),
                        first.describe()
                    ),
                    format!(
                        "name `{text}` once, in one query; `&mut {text}` also lets the body read it"
                    ),
                ));
            }
            seen.push((key, access));
        }
    }
}

fn ty_text(ty: &Type) -> String {
    type_key(ty)
        .replace(" < ", "<")
        .replace(" >", ">")
        .replace("< ", "<")
        .replace(" ,", ",")
        .replace(" :: ", "::")
        .replace("& ", "&")
}

fn by_value(sig: &Signature, out: &mut Vec<Diagnostic>) {
    if let Some(r) = sig.receiver
        && r.kind == ReceiverKind::Value
    {
        out.push(Diagnostic::new(
            Code::ByValueParam,
            r.span,
            format!("`{}` takes `self` by value", sig.ident),
            "take `&self` (or `&mut self` in a system or factory)",
        ));
    }
    for p in &sig.params {
        if !matches!(p.kind, ParamKind::ByValue) {
            continue;
        }
        let text = ty_text(&p.ty);
        let is_out = crate::types::last_segment_generic(&p.ty, "Out").is_some();
        let (message, help) = if is_out {
            (
                format!(
                    "`{text}` in a {}: only a factory produces",
                    sig.kind.attribute_name()
                ),
                "make this function a #[factory], or take the service as `&T` or `&mut T`"
                    .to_string(),
            )
        } else {
            (
                format!("service parameter `{text}` is taken by value"),
                format!(
                    "take `&{text}` to read it or `&mut {text}` to gate it; a node borrows its services"
                ),
            )
        };
        out.push(Diagnostic::new(
            Code::ByValueParam,
            p.ty.span(),
            message,
            help,
        ));
    }
}

fn mut_in_condition(sig: &Signature, out: &mut Vec<Diagnostic>) {
    if sig.kind != NodeKind::RunCondition {
        return;
    }
    if let Some(r) = sig.receiver
        && r.kind == ReceiverKind::Gated
    {
        out.push(Diagnostic::new(
            Code::MutInRunCondition,
            r.span,
            format!("run condition `{}` takes `&mut self`", sig.ident),
            "a run condition is read-only: take `&self`",
        ));
    }
    for p in &sig.params {
        if let ParamKind::Gated(ty) = &p.kind {
            let text = ty_text(ty);
            let (taken, instead) = if p.optional {
                (format!("Option<&mut {text}>"), format!("Option<&{text}>"))
            } else {
                (format!("&mut {text}"), format!("&{text}"))
            };
            out.push(Diagnostic::new(
                Code::MutInRunCondition,
                p.span,
                format!("run condition `{}` takes `{taken}`", sig.ident),
                format!("a run condition is read-only: take `{instead}`"),
            ));
        }
    }
}

fn non_static(sig: &Signature, out: &mut Vec<Diagnostic>) {
    for p in &sig.params {
        let Some(ty) = p.service() else { continue };
        if let Some(lt) = &p.lifetime
            && lt.ident != "_"
        {
            out.push(Diagnostic::new(
                Code::NonStaticService,
                lt.span(),
                format!(
                    "service `{}` is borrowed for the named lifetime `{lt}`",
                    ty_text(ty)
                ),
                "leave the lifetime out (`&T`): the world lends a service for one call only",
            ));
            continue;
        }
        if let Some(lt) = non_static_lifetimes(ty).first() {
            out.push(Diagnostic::new(
                Code::NonStaticService,
                lt.span(),
                format!("service type `{}` is not 'static: it carries the lifetime `{lt}`", ty_text(ty)),
                "a service is `Send + Sync + 'static`: own the data, or hold an index or handle instead of a borrow",
            ));
        }
    }
    for o in &sig.outputs {
        if let Some(lt) = non_static_lifetimes(&o.ty).first() {
            out.push(Diagnostic::new(
                Code::NonStaticService,
                lt.span(),
                format!(
                    "produced type `{}` is not 'static: it carries the lifetime `{lt}`",
                    ty_text(&o.ty)
                ),
                "a service is `Send + Sync + 'static`: produce an owned value",
            ));
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Access {
    Shared,
    Gated,
    Produced { next: bool },
}

impl Access {
    fn describe(self) -> &'static str {
        match self {
            Access::Shared => "read (`&`)",
            Access::Gated => "gated (`&mut`)",
            Access::Produced { next: false } => "produced",
            Access::Produced { next: true } => "produced for the next iteration",
        }
    }

    fn conflicts(self, other: Access) -> bool {
        use Access::*;
        match (self, other) {
            (Shared, Shared) => false,
            (Produced { next: true }, Shared | Gated)
            | (Shared | Gated, Produced { next: true }) => false,
            (Produced { next: a }, Produced { next: b }) => a == b,
            _ => true,
        }
    }
}

fn conflicts(sig: &Signature, out: &mut Vec<Diagnostic>) {
    let mut accesses: Vec<(String, Access, Span, String)> = Vec::new();
    for p in &sig.params {
        let access = match &p.kind {
            ParamKind::Shared(ty) => (ty, Access::Shared),
            ParamKind::Gated(ty) => (ty, Access::Gated),
            ParamKind::Out { ty, next } => (ty, Access::Produced { next: *next }),
            ParamKind::Handle | ParamKind::ByValue => continue,
        };
        accesses.push((type_key(access.0), access.1, p.span, ty_text(access.0)));
    }
    for o in &sig.outputs {
        accesses.push((
            type_key(&o.ty),
            Access::Produced { next: o.next },
            o.span,
            ty_text(&o.ty),
        ));
    }
    for (j, (key, access, span, text)) in accesses.iter().enumerate() {
        let earlier = accesses[..j]
            .iter()
            .find(|(k, a, _, _)| k == key && a.conflicts(*access));
        if let Some((_, first, _, _)) = earlier {
            let help = match (first, access) {
                (Access::Produced { .. }, _) | (_, Access::Produced { .. }) => {
                    "a factory cannot consume what it produces in the same iteration; consume `Next<T>`'s value next iteration, or split the factory".to_string()
                }
                _ => format!("declare `{text}` once; `&mut {text}` also lets the body read it"),
            };
            out.push(Diagnostic::new(
                Code::ConflictingAccess,
                *span,
                format!(
                    "`{text}` is {} here and {} earlier in the same signature",
                    access.describe(),
                    first.describe()
                ),
                help,
            ));
        }
    }
}

/// SA0002 by resolved service: `Out<Next<T>>` and `-> Next<T>` produce the
/// service `NextValue<T>`, so reading or gating `NextValue<T>` beside them
/// conflicts, and reading `T` does not. Two accesses conflict unless both
/// are shared. The finding is on the later declaration, with a note on the
/// earlier one.
fn resolved_conflicts(sig: &Signature, aliases: &TypeAliases, out: &mut Vec<Diagnostic>) {
    struct Declared {
        /// The service touched (`NextValue<T>` for a `Next<T>` output).
        service: Type,
        access: Access,
        span: Span,
        /// As written, for messages (`Next<T>` for a `Next<T>` output).
        text: String,
    }
    let pending = |ty: &Type| -> Type { syn::parse_quote!(NextValue<#ty>) };
    let declared = |ty: &Type, access: Access, span: Span| match access {
        Access::Produced { next: true } => Declared {
            service: pending(ty),
            access,
            span,
            text: format!("Next<{}>", ty_text(ty)),
        },
        _ => Declared {
            service: ty.clone(),
            access,
            span,
            text: ty_text(ty),
        },
    };
    let mut accesses: Vec<Declared> = Vec::new();
    for p in &sig.params {
        let (ty, access) = match &p.kind {
            ParamKind::Shared(ty) => (ty, Access::Shared),
            ParamKind::Gated(ty) => (ty, Access::Gated),
            ParamKind::Out { ty, next } => (ty, Access::Produced { next: *next }),
            ParamKind::Handle | ParamKind::ByValue => continue,
        };
        accesses.push(declared(ty, access, p.span));
    }
    for o in &sig.outputs {
        accesses.push(declared(&o.ty, Access::Produced { next: o.next }, o.span));
    }
    for (j, later) in accesses.iter().enumerate() {
        let earlier = accesses[..j].iter().find(|first| {
            !(first.access == Access::Shared && later.access == Access::Shared)
                && aliases.same_service(&first.service, &later.service)
        });
        let Some(first) = earlier else { continue };
        let service = aliases.resolve_text(&later.service);
        let same_words = first.text == later.text;
        let message = if same_words {
            format!(
                "`{}` is {} here and {} earlier in the same signature",
                later.text,
                later.access.describe(),
                first.access.describe()
            )
        } else {
            format!(
                "`{}` is {} here and `{}` {} earlier in the same signature: both are the service `{service}`",
                later.text,
                later.access.describe(),
                first.text,
                first.access.describe()
            )
        };
        let help = match (first.access, later.access) {
            (Access::Produced { .. }, Access::Produced { .. }) => {
                format!("produce `{service}` once: two outputs of one service would write one slot")
            }
            (Access::Produced { .. }, _) | (_, Access::Produced { .. }) => {
                "a factory cannot consume what it produces in the same iteration; consume `Next<T>`'s value next iteration, or split the factory".to_string()
            }
            _ => format!("declare `{service}` once; `&mut {service}` also lets the body read it"),
        };
        out.push(
            Diagnostic::new(Code::ConflictingAccess, later.span, message, help).with_note(
                first.span,
                format!("`{}` is {} here", first.text, first.access.describe()),
            ),
        );
    }
}

fn shape(sig: &Signature, out: &mut Vec<Diagnostic>) {
    if let Some(span) = sig.asyncness {
        out.push(Diagnostic::new(
            Code::InvalidNodeShape,
            span,
            format!("node `{}` is an `async fn`", sig.ident),
            "a node runs to completion inside its iteration; spawn async work as a loose task instead",
        ));
    }
    match sig.kind {
        NodeKind::RunCondition => {
            let returns_bool = match &sig.output {
                ReturnType::Type(_, ty) => {
                    matches!(&**ty, Type::Path(p) if p.qself.is_none() && p.path.is_ident("bool"))
                }
                ReturnType::Default => false,
            };
            if !returns_bool {
                let span = match &sig.output {
                    ReturnType::Type(_, ty) => ty.span(),
                    ReturnType::Default => sig.ident.span(),
                };
                out.push(Diagnostic::new(
                    Code::InvalidNodeShape,
                    span,
                    format!("run condition `{}` does not return `bool`", sig.ident),
                    "end the signature with `-> bool`",
                ));
            }
        }
        NodeKind::Factory => {
            if sig.produced().is_empty() {
                out.push(Diagnostic::new(
                    Code::InvalidNodeShape,
                    sig.ident.span(),
                    format!("factory `{}` produces nothing", sig.ident),
                    "return what it builds (`-> T`, a tuple for several) or take `Out<T>` parameters; a node that only reads and writes is a #[system]",
                ));
            }
        }
        NodeKind::System => {}
    }
}

//! The data model of a node's signature: what each parameter declares.
//! [`Signature::parse`] never fails; what cannot be a declaration is kept as
//! [`ParamKind::ByValue`] and reported by [`crate::validate`].

use proc_macro2::Span;
use syn::spanned::Spanned;
use syn::{FnArg, Ident, Lifetime, Pat, ReturnType, Type};

use crate::args::{NodeArgs, NodeKind};
use crate::types::{last_segment_generic, strip_groups, type_key};

/// What one parameter declares.
#[derive(Clone, Debug)]
pub enum ParamKind {
    /// `&T` (or `Option<&T>`, see [`Param::optional`]): shared access to
    /// the service `T`.
    Shared(Type),
    /// `&mut T` (or `Option<&mut T>`): gated access to the service `T`.
    Gated(Type),
    /// `Out<T>` (factories only): `T` is produced; `Out<Next<T>>` produces
    /// `T` for the next iteration (`next` is true and the type is `T`).
    Out {
        /// The produced service type.
        ty: Type,
        /// Produced for the next iteration (`Next<T>`).
        next: bool,
    },
    /// A handle the runtime hands out by value and that makes its own
    /// declarations: `Commands<'_>`, `Removed<T>`, `Local<T>` (a node's own
    /// state, which declares nothing), or a `Query<..>` (its components are
    /// lanes; the runtime refuses a query that aliases another parameter,
    /// SL0009).
    Handle,
    /// Anything else (`T` by value, a raw pointer, a tuple...): not a
    /// declaration; reported as [`crate::Code::ByValueParam`].
    ByValue,
}

/// The last path segments of the by-value handles the runtime hands out.
const HANDLES: [&str; 6] = [
    "Commands",
    "Query",
    "Removed",
    "Publish",
    "Subscribe",
    "Local",
];

/// One typed parameter of a node function.
#[derive(Clone, Debug)]
pub struct Param {
    /// The binding's name when the pattern is a plain identifier.
    pub ident: Option<Ident>,
    /// The declared type, as written.
    pub ty: Type,
    /// What it declares.
    pub kind: ParamKind,
    /// The lifetime written on the outer reference (`&'a T`), if any.
    pub lifetime: Option<Lifetime>,
    /// The whole parameter (`pat: Type`).
    pub span: Span,
    /// `Gate<&T>`: gated in `T`'s lane (as `&mut T`) but only read, so
    /// "declared `&mut` but only read" does not apply.
    pub read_gate: bool,
    /// `Option<&T>` / `Option<&mut T>`: the lane of `&T` / `&mut T`
    /// ([`ParamKind::Shared`] / [`ParamKind::Gated`]), `None` while the
    /// world holds no `T`.
    pub optional: bool,
}

impl Param {
    /// The service type this parameter touches (`T` in `&T`, `&mut T`,
    /// `Out<T>`), or `None` for [`ParamKind::ByValue`].
    pub fn service(&self) -> Option<&Type> {
        match &self.kind {
            ParamKind::Shared(ty) | ParamKind::Gated(ty) | ParamKind::Out { ty, .. } => Some(ty),
            ParamKind::Handle | ParamKind::ByValue => None,
        }
    }

    /// The service's type as a string, the key the rules compare services by.
    pub fn service_key(&self) -> Option<String> {
        self.service().map(type_key)
    }
}

/// How a method node takes `self`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReceiverKind {
    /// `&self`.
    Shared,
    /// `&mut self`.
    Gated,
    /// `self` (by value, or `self: Box<Self>` and the like).
    Value,
}

/// The `self` parameter of a method node.
#[derive(Clone, Copy, Debug)]
pub struct Receiver {
    /// How it is taken.
    pub kind: ReceiverKind,
    /// The `self` parameter.
    pub span: Span,
}

/// One value a factory returns (`-> T`, `-> (A, B)`, `-> Next<T>`).
#[derive(Clone, Debug)]
pub struct Output {
    /// The produced type (`T` for `Next<T>`).
    pub ty: Type,
    /// Produced for the next iteration.
    pub next: bool,
    /// The type as written in the return type.
    pub span: Span,
}

/// A node function's signature, classified: the model the macros expand from
/// and the rules check.
#[derive(Clone, Debug)]
pub struct Signature {
    /// The attribute that declared it.
    pub kind: NodeKind,
    /// The function's name.
    pub ident: Ident,
    /// The attribute's arguments.
    pub args: NodeArgs,
    /// `self`, for a method.
    pub receiver: Option<Receiver>,
    /// The typed parameters, in order.
    pub params: Vec<Param>,
    /// What a factory returns, flattened out of a tuple; empty for other
    /// kinds and for `-> ()`.
    pub outputs: Vec<Output>,
    /// The return type as written.
    pub output: ReturnType,
    /// `async fn`.
    pub asyncness: Option<Span>,
}

impl Signature {
    /// Classifies `sig` as a node of `kind` with `args`.
    pub fn parse(kind: NodeKind, args: NodeArgs, sig: &syn::Signature) -> Signature {
        let mut receiver = None;
        let mut params = Vec::new();
        for input in &sig.inputs {
            match input {
                FnArg::Receiver(r) => {
                    let kind = match (&r.reference, &r.mutability, &*r.ty) {
                        (Some(_), None, _) => ReceiverKind::Shared,
                        (Some(_), Some(_), _) => ReceiverKind::Gated,
                        (None, _, Type::Reference(reference)) if reference.mutability.is_some() => {
                            ReceiverKind::Gated
                        }
                        (None, _, Type::Reference(_)) => ReceiverKind::Shared,
                        (None, _, _) => ReceiverKind::Value,
                    };
                    receiver = Some(Receiver {
                        kind,
                        span: r.span(),
                    });
                }
                FnArg::Typed(pat_type) => params.push(classify(kind, pat_type)),
            }
        }
        let outputs = match (kind, &sig.output) {
            (NodeKind::Factory, ReturnType::Type(_, ty)) => flatten_outputs(ty),
            _ => Vec::new(),
        };
        Signature {
            kind,
            ident: sig.ident.clone(),
            args,
            receiver,
            params,
            outputs,
            output: sig.output.clone(),
            asyncness: sig.asyncness.map(|a| a.span),
        }
    }

    /// The node's name: `name = ".."` when given, else the function's name.
    pub fn name(&self) -> String {
        match &self.args.name {
            Some(lit) => lit.value(),
            None => self.ident.to_string(),
        }
    }

    /// Every produced service, from the return type and the `Out<T>`
    /// parameters, with whether it is for the next iteration and its span.
    pub fn produced(&self) -> Vec<(&Type, bool, Span)> {
        let mut produced: Vec<(&Type, bool, Span)> = self
            .outputs
            .iter()
            .map(|o| (&o.ty, o.next, o.span))
            .collect();
        for p in &self.params {
            if let ParamKind::Out { ty, next } = &p.kind {
                produced.push((ty, *next, p.span));
            }
        }
        produced
    }
}

fn binding(pat: &Pat) -> Option<Ident> {
    match pat {
        Pat::Ident(p) => Some(p.ident.clone()),
        _ => None,
    }
}

/// Whether `ty` is one of [`HANDLES`] (by its last path segment).
fn is_handle(ty: &Type) -> bool {
    match ty {
        Type::Path(path) => path
            .path
            .segments
            .last()
            .is_some_and(|segment| HANDLES.iter().any(|handle| segment.ident == handle)),
        _ => false,
    }
}

fn classify(kind: NodeKind, pat_type: &syn::PatType) -> Param {
    let written = strip_groups(&pat_type.ty).clone();
    // `Option<&T>` declares what `&T` does; the reference inside is the
    // parameter's access.
    let optional = match last_segment_generic(&written, "Option").map(strip_groups) {
        Some(inner @ Type::Reference(_)) => Some(inner.clone()),
        _ => None,
    };
    let ty = optional.clone().unwrap_or_else(|| written.clone());
    let mut lifetime = None;
    let read_gate = match last_segment_generic(&ty, "Gate").map(strip_groups) {
        Some(Type::Reference(r)) if r.mutability.is_none() => Some(strip_groups(&r.elem).clone()),
        _ => None,
    };
    let param_kind = match &ty {
        _ if let Some(inner) = &read_gate => ParamKind::Gated(inner.clone()),
        Type::Reference(r) => {
            lifetime = r.lifetime.clone();
            let inner = strip_groups(&r.elem).clone();
            if r.mutability.is_some() {
                ParamKind::Gated(inner)
            } else {
                ParamKind::Shared(inner)
            }
        }
        other => match last_segment_generic(other, "Out") {
            Some(inner) if kind == NodeKind::Factory => match last_segment_generic(inner, "Next") {
                Some(next) => ParamKind::Out {
                    ty: next.clone(),
                    next: true,
                },
                None => ParamKind::Out {
                    ty: inner.clone(),
                    next: false,
                },
            },
            _ if is_handle(other) => ParamKind::Handle,
            _ => ParamKind::ByValue,
        },
    };
    Param {
        ident: binding(&pat_type.pat),
        ty: written,
        kind: param_kind,
        lifetime,
        span: pat_type.span(),
        read_gate: read_gate.is_some(),
        optional: optional.is_some(),
    }
}

fn flatten_outputs(ty: &Type) -> Vec<Output> {
    match strip_groups(ty) {
        Type::Tuple(tuple) => tuple.elems.iter().flat_map(flatten_outputs).collect(),
        other => {
            let (ty, next) = match last_segment_generic(other, "Next") {
                Some(inner) => (inner.clone(), true),
                None => (other.clone(), false),
            };
            vec![Output {
                ty,
                next,
                span: other.span(),
            }]
        }
    }
}

//! The pipeline in one call: parse the attribute arguments, classify the
//! signature, validate it and the body.

use proc_macro2::TokenStream;
use syn::{Attribute, Block};

use crate::args::{NodeKind, parse_args, parse_attribute};
use crate::body::{BodyContext, find_locks};
use crate::diagnostic::Diagnostic;
use crate::signature::Signature;
use crate::validate::validate_signature_with;

/// The result of checking one node function: the model to expand from, and
/// every finding (empty when the function is a valid node).
#[derive(Clone, Debug)]
pub struct Checked {
    /// The classified signature.
    pub signature: Signature,
    /// Every finding, attribute arguments first, then the signature, then the body.
    pub diagnostics: Vec<Diagnostic>,
}

impl Checked {
    /// Whether nothing was found.
    pub fn is_ok(&self) -> bool {
        self.diagnostics.is_empty()
    }

    /// Every finding combined into one `syn::Error`, or `None`.
    pub fn to_syn_error(&self) -> Option<syn::Error> {
        Diagnostic::combine(&self.diagnostics)
    }
}

/// Runs the signature rules and, when `body` is given and the node has not
/// opted out with `allow_locks`, the body rule (SA0005).
pub fn validate(sig: &Signature, body: Option<&Block>, context: &BodyContext) -> Vec<Diagnostic> {
    let mut out = validate_signature_with(sig, context.services.as_ref());
    if let Some(body) = body
        && sig.args.allow_locks.is_none()
    {
        out.extend(find_locks(&sig.ident.to_string(), body, context));
    }
    out
}

/// What a macro calls: `kind` is the attribute, `attr_args` the tokens of its
/// arguments, `sig` and `body` the function's.
pub fn check_tokens(
    kind: NodeKind,
    attr_args: TokenStream,
    sig: &syn::Signature,
    body: Option<&Block>,
) -> Checked {
    let (args, mut diagnostics) = parse_args(kind, attr_args);
    let signature = Signature::parse(kind, args, sig);
    diagnostics.extend(validate(&signature, body, &BodyContext::default()));
    Checked {
        signature,
        diagnostics,
    }
}

/// What the analyzers call for each attribute on a function: `None` when
/// `attr` is not `#[system]`, `#[factory]` or `#[run_condition]`.
pub fn check_attribute(
    attr: &Attribute,
    sig: &syn::Signature,
    body: Option<&Block>,
    context: &BodyContext,
) -> Option<Checked> {
    let (kind, args, mut diagnostics) = parse_attribute(attr)?;
    let signature = Signature::parse(kind, args, sig);
    diagnostics.extend(validate(&signature, body, context));
    Some(Checked {
        signature,
        diagnostics,
    })
}

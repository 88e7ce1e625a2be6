//! The per-function checks of sluice: a node's signature is its declaration.
//!
//! This crate depends on no sluice crate, so both `sluice-macros` (at
//! expansion time) and `sluice-analyzers` (in `sluice check`) can run it.
//! It is a pipeline:
//!
//! 1. [`parse_args`] / [`parse_attribute`]: the attribute's arguments into
//!    [`NodeArgs`] (`after`, `before`, `name`, `key`, `exclusive`,
//!    `allow_locks`, `run_if`, and the organisation: `phase`, `group`,
//!    `stage`, `set`, `cadence`, `schedule`, `order`, `order_first`,
//!    `order_last`), each value checked for its form;
//! 2. [`Signature::parse`]: the function's signature into the model: each
//!    parameter [`ParamKind::Shared`] (`&T`), [`ParamKind::Gated`]
//!    (`&mut T`), [`ParamKind::Out`] (`Out<T>` in a factory) or
//!    [`ParamKind::ByValue`] (an error), and a factory's [`Output`]s;
//! 3. [`validate`]: every rule, as [`Diagnostic`]s with a stable [`Code`],
//!    a message, a help line and the offending token's `Span`.
//!
//! [`check_tokens`] runs all three from a macro's inputs:
//!
//! ```
//! use sluice_rules::{Code, NodeKind, check_tokens};
//! let f: syn::ItemFn = syn::parse_quote! {
//!     fn enabled(time: &mut Time) -> bool { time.paused }
//! };
//! let checked = check_tokens(NodeKind::RunCondition, Default::default(), &f.sig, Some(&f.block));
//! assert_eq!(checked.diagnostics[0].code, Code::MutInRunCondition);
//! // a macro would emit: checked.to_syn_error().unwrap().to_compile_error()
//! ```
//!
//! The [`Code`] table also lists the codes the analyzers check over a whole
//! source tree, so that no code is ever reused.

mod args;
mod body;
mod check;
mod code;
mod diagnostic;
mod services;
mod signature;
mod types;
mod validate;

pub use args::{
    Cadence, Given, NodeArgs, NodeKind, OrderTarget, Phase, Schedule, SiblingOrder, parse_args,
    parse_attribute,
};
pub use body::{BodyContext, find_locks};
pub use check::{Checked, check_attribute, check_tokens, validate};
pub use code::{Code, Level};
pub use diagnostic::Diagnostic;
pub use services::TypeAliases;
pub use signature::{Output, Param, ParamKind, Receiver, ReceiverKind, Signature};
pub use types::{QueryShape, last_segment_generic, non_static_lifetimes, type_key};
pub use validate::{validate_signature, validate_signature_with};

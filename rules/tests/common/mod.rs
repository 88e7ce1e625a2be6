//! Shared helpers for the rules' tests (included with `mod common;`).
#![allow(dead_code)]

use proc_macro2::TokenStream;
use sluice_rules::{Checked, Code, NodeKind, check_tokens};

/// Checks `f` as a `kind` node with `args`.
pub fn check(kind: NodeKind, args: TokenStream, f: &syn::ItemFn) -> Checked {
    check_tokens(kind, args, &f.sig, Some(&f.block))
}

/// The codes of the findings, in order.
pub fn codes(checked: &Checked) -> Vec<Code> {
    checked.diagnostics.iter().map(|d| d.code).collect()
}

/// The codes found when `f` is a plain `kind` node.
pub fn codes_of(kind: NodeKind, f: syn::ItemFn) -> Vec<Code> {
    codes(&check(kind, TokenStream::new(), &f))
}

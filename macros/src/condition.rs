//! `#[run_condition]`: checked (read-only, returns `bool`) and kept as
//! written, so the function item itself is the `sluice::ConditionFn` a node's
//! `run_if` takes; nothing is added, so nothing costs.

use proc_macro2::TokenStream;
use quote::ToTokens;

use crate::parse::Node;

/// The function, unchanged (its errors, if any, are emitted beside it).
pub(crate) fn expand(node: &Node) -> TokenStream {
    node.item.to_token_stream()
}

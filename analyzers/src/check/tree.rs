//! The whole-tree checks: SA0009 (never registered), SA0010 (allocation in
//! `process_batch`), SA0011 (unknown ordering target), SA0012 (`&mut` only
//! read).

use sluice_rules::{Checked, Code, Diagnostic, NodeKind, ParamKind};
use syn::spanned::Spanned;

use super::batch::allocations;
use super::collect::{Collected, FoundNode};
use super::mutation::only_read;

/// A node after the per-function rules.
#[derive(Debug)]
pub struct CheckedNode<'a> {
    /// What the tree pass found.
    pub found: &'a FoundNode,
    /// The rules' model and findings.
    pub checked: Checked,
}

/// Runs the whole-tree checks, returning each finding with its file index.
pub fn tree_checks(collected: &Collected, nodes: &[CheckedNode<'_>]) -> Vec<(usize, Diagnostic)> {
    let mut out = Vec::new();
    let mut names = collected.known_names.clone();
    // a node is known by its name: `name = ".."` when given (then not by its
    // function's name, which the planner never sees), else the function's
    for node in nodes {
        names.insert(node.checked.signature.name());
    }
    // a plain function registered without a macro is a node named after it
    // (`world.add_system(steer)`); a macro node is known only by its name
    let macro_idents: std::collections::HashSet<String> = nodes
        .iter()
        .map(|node| node.checked.signature.ident.to_string())
        .collect();
    names.extend(
        collected
            .registered
            .iter()
            .filter(|mention| !macro_idents.contains(*mention))
            .cloned(),
    );
    for node in nodes {
        let sig = &node.checked.signature;
        let file = node.found.file;
        // a method node is registered through the function the macro adds
        // beside it: `world.add_system(Counter::tick_system())`
        let method_registration = sig
            .receiver
            .is_some()
            .then(|| format!("{}_{}", sig.ident, sig.kind.attribute_name()));
        let registered = collected.registered.contains(&sig.ident.to_string())
            || collected.registered.contains(&sig.name())
            || method_registration.is_some_and(|name| collected.registered.contains(&name));
        if sig.kind != NodeKind::RunCondition && !registered {
            out.push((
                file,
                Diagnostic::new(
                    Code::NeverRegistered,
                    sig.ident.span(),
                    format!(
                        "{} `{}` is declared but never registered",
                        sig.kind.attribute_name(),
                        sig.name()
                    ),
                    format!(
                        "register it (`world.add_{}({})`) or remove it",
                        sig.kind.attribute_name(),
                        sig.ident
                    ),
                ),
            ));
        }
        for target in sig.args.after.iter().chain(&sig.args.before) {
            let name = target.name();
            if !names.contains(&name) {
                out.push((
                    file,
                    Diagnostic::new(
                        Code::UnknownOrderTarget,
                        target.span(),
                        format!("`{}` orders itself against `{name}`, which exists nowhere in the tree", sig.name()),
                        "name a node (its function's name or its `name = \"..\"`) or a marker type declared or imported in the tree",
                    ),
                ));
            }
        }
        // a run condition's `&mut` is already SA0003
        let gated_params = sig
            .params
            .iter()
            .filter(|_| sig.kind != NodeKind::RunCondition);
        for param in gated_params {
            let (ParamKind::Gated(ty), Some(ident)) = (&param.kind, &param.ident) else {
                continue;
            };
            if only_read(&ident.to_string(), &node.found.body) {
                let text = quote::ToTokens::to_token_stream(ty).to_string();
                out.push((
                    file,
                    Diagnostic::new(
                        Code::MutOnlyRead,
                        param.ty.span(),
                        format!("`{ident}` is declared `&mut {text}` but `{}` only ever reads it", sig.ident),
                        format!("take `&{text}`: readers run together, `&mut` is a gate that waits for all of them"),
                    ),
                ));
            }
        }
    }
    for batch in &collected.batches {
        for alloc in allocations(&batch.body) {
            out.push((
                batch.file,
                Diagnostic::new(
                    Code::AllocationInBatch,
                    alloc.span,
                    format!("`process_batch` of `{}` allocates (`{}`)", batch.self_ty, alloc.what),
                    "allocate once, in `before_update` or in the processor's own state; `process_batch` runs thousands of times a tick and must allocate nothing",
                ),
            ));
        }
    }
    out
}

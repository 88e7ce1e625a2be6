//! The whole-tree checks: SA0009 (never registered), SA0010 (allocation in
//! `process_batch`), SA0011 (unknown ordering target), SA0012 (`&mut` only
//! read: a service, or a component a query names).

use proc_macro2::Span;
use quote::ToTokens;
use sluice_rules::{Checked, Code, Diagnostic, NodeKind, Param, ParamKind, QueryShape};
use syn::spanned::Spanned;
use syn::{Block, Ident};

use super::batch::allocations;
use super::collect::{Collected, FoundNode};
use super::mutation::only_read;
use super::queried::only_read_components;

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
    // function's name, which the planner never sees), else the function's;
    // and by its instance key: `key = ".."` when given, else its qualified
    // path (`game::ai::update`), which this pass accepts by its last segment
    // (below)
    for node in nodes {
        let args = &node.checked.signature.args;
        names.insert(node.checked.signature.name());
        names.extend(args.key.as_ref().map(|key| key.value()));
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
    let functions: std::collections::HashSet<&str> = macro_idents
        .iter()
        .chain(&collected.registered)
        .map(String::as_str)
        .collect();
    // `after = "game::ai::update"`: a default instance key, the path of a
    // node function (or a plain function registered) of that name
    let known = |name: &str| {
        names.contains(name)
            || name
                .rsplit_once("::")
                .is_some_and(|(_, last)| functions.contains(last))
    };
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
            if !known(&name) {
                out.push((
                    file,
                    Diagnostic::new(
                        Code::UnknownOrderTarget,
                        target.span(),
                        format!("`{}` orders itself against `{name}`, which exists nowhere in the tree", sig.name()),
                        "name a node (its function's name, its `name = \"..\"` or its `key = \"..\"`), a group, or a marker type declared or imported in the tree",
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
            for (span, message, help) in mut_only_read(param, &sig.ident, &node.found.body) {
                out.push((
                    file,
                    Diagnostic::new(Code::MutOnlyRead, span, message, help),
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

/// SA0012 for one parameter of the node `node`: each `&mut` it declares
/// (the service, or a component of a query) that `body` only ever reads, as
/// the span, message and help of a finding.
fn mut_only_read(param: &Param, node: &Ident, body: &Block) -> Vec<(Span, String, String)> {
    let Some(ident) = &param.ident else {
        return Vec::new();
    };
    let name = ident.to_string();
    if let Some(shape) = QueryShape::of_query(&param.ty) {
        return only_read_components(&name, &shape, body)
            .into_iter()
            .map(|only| {
                let text = only.component.to_token_stream().to_string();
                (
                    only.reference.span(),
                    format!("`{text}` is queried `&mut {text}` in `{node}` but only ever read; `&{text}` would let it share"),
                    format!("query `&{text}`: readers of `{text}` run together, and `&mut {text}` marks every row it visits changed"),
                )
            })
            .collect();
    }
    match &param.kind {
        // An `Option<&mut T>` is only ever unwrapped, never written as a
        // whole: whether its inner reference is written is past this check.
        ParamKind::Gated(ty) if !param.read_gate && !param.optional && only_read(&name, body) => {
            let text = ty.to_token_stream().to_string();
            vec![(
                param.ty.span(),
                format!("`{ident}` is declared `&mut {text}` but `{node}` only ever reads it"),
                format!(
                    "take `&{text}`: readers run together, `&mut` is a gate that waits for all of them"
                ),
            )]
        }
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use sluice_rules::Code;

    use crate::check::{SourceFile, check_files};

    /// `(line, code)` of every finding in `text`, checked as a tree of one file.
    fn findings(text: &str) -> Vec<(usize, Code)> {
        let file = SourceFile::new(PathBuf::from("lib.rs"), text.to_owned());
        let report = check_files(&[file]);
        report.findings.iter().map(|f| (f.line, f.code)).collect()
    }

    #[test]
    fn the_organisation_keys_are_accepted_and_their_targets_known() {
        let text = r#"
            #[system(phase = PreUpdate, group = "Physics", stage = "Early", set = "Audio", cadence = Fixed, order = -1, order_first, key = "ai::update#2")]
            fn organised(hp: &Hp) {}
            #[factory(phase = sluice::Phase::PostUpdate, schedule = "Save", order_last, order = 3)]
            fn saved(hp: &Hp) -> Mesh { todo!() }
            #[system(schedule = Startup, cadence = Variable, after = PreUpdate, before = PostUpdate)]
            fn boot(hp: &Hp) {}
            #[system(after = "Physics", after = "ai::update#2", before = "game::boot")]
            fn targets(hp: &Hp) {}
            pub fn setup(world: &mut World) {
                world.add_group(Group::new("Physics"));
                world.add_systems((organised, boot, targets));
                world.add_factory(saved);
            }
        "#;
        assert_eq!(findings(text), []);
    }

    #[test]
    fn a_wrong_organisation_value_and_an_unknown_path_are_reported() {
        let text = r#"
            #[system(phase = Early, cadence = Fxed, order = 1.5, group = "", order_first, order_last, key = "a", key = "b")]
            fn wrong(hp: &Hp) {}
            #[system(after = "game::nowhere", after = "Physics")]
            fn unknown(hp: &Hp) {}
            pub fn setup(world: &mut World) {
                world.add_systems((wrong, unknown));
            }
        "#;
        let mut want = vec![(2, Code::InvalidAttribute); 6];
        want.extend([(4, Code::UnknownOrderTarget); 2]);
        assert_eq!(findings(text), want);
    }
}

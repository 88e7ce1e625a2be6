//! SA0012 for queries: a component a `Query` names `&mut` that the body only
//! ever reads.
//!
//! Conservative by design. A query parameter is analysed only when every
//! use of it in the body is one of these:
//!
//! - `q.for_each(|pat| ..)` or `q.iter_mut().for_each(|pat| ..)` with a
//!   closure written in place;
//! - `for pat in q.iter_mut() { .. }`;
//! - `q.count()` or `q.is_empty()`.
//!
//! Anything else (`get_mut`, `iter_mut()` chained into other adapters, the
//! query passed on, stored, matched, named in a macro, or its name rebound)
//! and no component of that query is flagged. In each loop the pattern is
//! followed down the data's tuples to the binding of each `&mut C`
//! position; a pattern that cannot be followed there (a binding of a whole
//! tuple, `..`, `ref`, `mut`, a struct pattern) also stops the analysis.
//! The binding's uses in the loop's body are classified as the service
//! rule classifies a parameter's ([`super::mutation`]): a component is
//! flagged when no loop may write through its binding and at least one
//! loop reads it. A `_` binding neither reads nor writes; a component
//! inside `Option<..>` is never flagged.

use syn::visit::{self, Visit};
use syn::{Block, Expr, ExprClosure, ExprMethodCall, Pat, Type};

use sluice_rules::QueryShape;

use super::mutation::{Scope, is_name, mentions, reads};

/// A `&mut C` a query names and the body only reads.
#[derive(Debug)]
pub struct OnlyRead<'a> {
    /// The `&mut C` type, as written in the parameter's type.
    pub reference: &'a Type,
    /// The component `C`.
    pub component: &'a Type,
}

/// Every `&mut C` of the query `shape`, bound to the parameter `name`, that
/// `body` only ever reads (see the module documentation).
pub fn only_read_components<'a>(
    name: &str,
    shape: &QueryShape<'a>,
    body: &Block,
) -> Vec<OnlyRead<'a>> {
    let mut gated = Vec::new();
    gated_positions(shape, &mut gated);
    if gated.is_empty() {
        return Vec::new();
    }
    let mut uses = QueryUses {
        name,
        loops: Vec::new(),
        escapes: false,
    };
    uses.visit_block(body);
    if uses.escapes {
        return Vec::new();
    }
    // per `&mut C` position: reads so far, or `None` once it may be written
    let mut verdicts: Vec<Option<usize>> = vec![Some(0); gated.len()];
    for (pat, scope) in &uses.loops {
        let mut bindings = Vec::new();
        if !bind(shape, pat, &mut bindings) {
            return Vec::new();
        }
        debug_assert_eq!(bindings.len(), gated.len());
        for (verdict, binding) in verdicts.iter_mut().zip(bindings) {
            let Some(binding) = binding else { continue };
            *verdict = verdict.zip(reads(&binding, *scope)).map(|(a, b)| a + b);
        }
    }
    gated
        .into_iter()
        .zip(verdicts)
        .filter(|(_, verdict)| verdict.is_some_and(|n| n > 0))
        .map(|(only_read, _)| only_read)
        .collect()
}

/// The `&mut C` positions of `shape` that are followed: `&mut C` itself and
/// inside tuples, in order (not inside `Option<..>`).
fn gated_positions<'a>(shape: &QueryShape<'a>, out: &mut Vec<OnlyRead<'a>>) {
    match shape {
        QueryShape::Component {
            reference,
            component,
            mutable: true,
        } => out.push(OnlyRead {
            reference,
            component,
        }),
        QueryShape::Tuple(elems) => elems.iter().for_each(|elem| gated_positions(elem, out)),
        _ => {}
    }
}

/// Follows `pat` down `shape`, pushing for each `&mut C` position (in
/// [`gated_positions`]' order) the name it is bound to, or `None` for `_`.
/// False when the pattern cannot be followed to every such position.
fn bind(shape: &QueryShape<'_>, pat: &Pat, out: &mut Vec<Option<String>>) -> bool {
    let pat = match pat {
        Pat::Paren(p) => return bind(shape, &p.pat, out),
        Pat::Type(t) => return bind(shape, &t.pat, out),
        pat => pat,
    };
    let mut inner = Vec::new();
    gated_positions(shape, &mut inner);
    if inner.is_empty() {
        return true;
    }
    match (shape, pat) {
        (_, Pat::Wild(_)) => {
            out.extend(inner.iter().map(|_| None));
            true
        }
        (QueryShape::Component { .. }, Pat::Ident(p))
            if p.by_ref.is_none() && p.mutability.is_none() && p.subpat.is_none() =>
        {
            out.push(Some(p.ident.to_string()));
            true
        }
        (QueryShape::Tuple(elems), Pat::Tuple(pats))
            if elems.len() == pats.elems.len()
                && !pats.elems.iter().any(|p| matches!(p, Pat::Rest(_))) =>
        {
            elems.iter().zip(&pats.elems).all(|(e, p)| bind(e, p, out))
        }
        _ => false,
    }
}

/// The uses of a query parameter in a body: its loops, and whether it is
/// used in any other way.
struct QueryUses<'a, 'n> {
    name: &'n str,
    /// Each loop's item pattern and body.
    loops: Vec<(&'a Pat, Scope<'a>)>,
    escapes: bool,
}

impl<'a> QueryUses<'a, '_> {
    /// `q.method()` with no arguments.
    fn is_call(&self, e: &Expr, method: &str) -> bool {
        matches!(e, Expr::MethodCall(call)
            if call.method == method && call.args.is_empty() && is_name(&call.receiver, self.name))
    }

    /// The closure of `q.for_each(|pat| ..)` or `q.iter_mut().for_each(|pat| ..)`.
    fn for_each(&self, call: &'a ExprMethodCall) -> Option<&'a ExprClosure> {
        let on_query =
            is_name(&call.receiver, self.name) || self.is_call(&call.receiver, "iter_mut");
        if call.method != "for_each" || !on_query || call.args.len() != 1 {
            return None;
        }
        match &call.args[0] {
            Expr::Closure(closure) if closure.inputs.len() == 1 => Some(closure),
            _ => None,
        }
    }
}

impl<'a> Visit<'a> for QueryUses<'a, '_> {
    fn visit_expr(&mut self, e: &'a Expr) {
        if is_name(e, self.name) {
            self.escapes = true;
            return;
        }
        if self.is_call(e, "count") || self.is_call(e, "is_empty") {
            return;
        }
        if let Expr::MethodCall(call) = e
            && let Some(closure) = self.for_each(call)
        {
            self.loops
                .push((&closure.inputs[0], Scope::Expr(&closure.body)));
            self.visit_pat(&closure.inputs[0]);
            self.visit_expr(&closure.body);
            return;
        }
        if let Expr::ForLoop(for_loop) = e
            && self.is_call(&for_loop.expr, "iter_mut")
        {
            self.loops
                .push((&for_loop.pat, Scope::Block(&for_loop.body)));
            self.visit_pat(&for_loop.pat);
            self.visit_block(&for_loop.body);
            return;
        }
        visit::visit_expr(self, e);
    }

    fn visit_pat_ident(&mut self, p: &'a syn::PatIdent) {
        if p.ident == self.name {
            self.escapes = true;
        }
        visit::visit_pat_ident(self, p);
    }

    fn visit_macro(&mut self, mac: &'a syn::Macro) {
        if mentions(mac.tokens.clone(), self.name) {
            self.escapes = true;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flagged(ty: &str, body: &str) -> Vec<String> {
        let ty: Type = syn::parse_str(ty).unwrap();
        let body: Block = syn::parse_str(body).unwrap();
        let shape = QueryShape::of_query(&ty).unwrap();
        only_read_components("q", &shape, &body)
            .iter()
            .map(|o| quote::ToTokens::to_token_stream(o.component).to_string())
            .collect()
    }

    #[test]
    fn each_position_is_judged_on_its_own() {
        let ty = "Query<(&mut A, (&mut B, Entity), Option<&mut C>, &mut D)>";
        let body = "{ q.for_each(|(a, (b, e), c, _)| { b.0 += a.0; touch(c); }); }";
        assert_eq!(flagged(ty, body), ["A"]);
    }

    #[test]
    fn every_loop_must_only_read() {
        let ty = "Query<&mut A>";
        let read = "for a in q.iter_mut() { println!(\"{}\", a.0); }";
        assert_eq!(flagged(ty, &format!("{{ {read} }}")), ["A"]);
        let written = format!("{{ {read} q.iter_mut().for_each(|a| a.0 = 1); }}");
        assert!(flagged(ty, &written).is_empty());
    }

    #[test]
    fn unused_or_unfollowed_is_not_flagged() {
        let ty = "Query<(&mut A, &B)>";
        assert!(flagged(ty, "{ q.for_each(|(_, b)| read(b)); }").is_empty());
        assert!(flagged(ty, "{ q.for_each(|item| read(item.0.x)); }").is_empty());
        assert!(flagged(ty, "{ q.for_each(|(a, ..)| read(a.x)); }").is_empty());
        assert!(flagged(ty, "{ let n = q.count(); }").is_empty());
        assert!(flagged(ty, "{ let q = 1; q.for_each(|(a, b)| read(a.x)); }").is_empty());
        assert!(flagged("Query<(&A, Entity)>", "{ q.for_each(|(a, e)| read(a.x)); }").is_empty());
    }
}

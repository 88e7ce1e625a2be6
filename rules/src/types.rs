//! Helpers over `syn::Type`: the comparison key, generic wrappers, lifetimes.

use quote::ToTokens;
use syn::visit::Visit;
use syn::{GenericArgument, Lifetime, PathArguments, Type};

/// The key two service types are compared by: their token string
/// (`Foo < u32 >` and `Foo<u32>` give the same key; `a::Foo` and `Foo` do not).
pub fn type_key(ty: &Type) -> String {
    ty.to_token_stream().to_string()
}

/// The single generic type argument of a path type whose last segment is
/// `name`: `last_segment_generic(Out<T>, "Out")` is `T`.
pub fn last_segment_generic<'a>(ty: &'a Type, name: &str) -> Option<&'a Type> {
    let Type::Path(path) = ty else { return None };
    if path.qself.is_some() {
        return None;
    }
    let last = path.path.segments.last()?;
    if last.ident != name {
        return None;
    }
    let PathArguments::AngleBracketed(args) = &last.arguments else {
        return None;
    };
    let mut types = args.args.iter().filter_map(|a| match a {
        GenericArgument::Type(t) => Some(t),
        _ => None,
    });
    let first = types.next()?;
    types.next().is_none().then_some(first)
}

/// The first generic type argument of a path type whose last segment is
/// `name`, however many follow: `first_generic(Query<D, F>, "Query")` is `D`.
pub fn first_generic<'a>(ty: &'a Type, name: &str) -> Option<&'a Type> {
    let Type::Path(path) = ty else { return None };
    let last = path.path.segments.last()?;
    if path.qself.is_some() || last.ident != name {
        return None;
    }
    let PathArguments::AngleBracketed(args) = &last.arguments else {
        return None;
    };
    args.args.iter().find_map(|a| match a {
        GenericArgument::Type(t) => Some(t),
        _ => None,
    })
}

/// `ty` without parentheses or invisible groups around it.
pub(crate) fn strip_groups(ty: &Type) -> &Type {
    match ty {
        Type::Paren(p) => strip_groups(&p.elem),
        Type::Group(g) => strip_groups(&g.elem),
        other => other,
    }
}

/// Every lifetime in `ty` other than `'static` (`'_` included: a service
/// type that borrows for an elided lifetime is not `'static` either).
/// Lifetimes bound by a `for<'a>` inside the type are not counted.
pub fn non_static_lifetimes(ty: &Type) -> Vec<Lifetime> {
    #[derive(Default)]
    struct Finder {
        bound: Vec<String>,
        found: Vec<Lifetime>,
    }
    impl<'ast> Visit<'ast> for Finder {
        fn visit_bound_lifetimes(&mut self, b: &'ast syn::BoundLifetimes) {
            for param in &b.lifetimes {
                if let syn::GenericParam::Lifetime(l) = param {
                    self.bound.push(l.lifetime.ident.to_string());
                }
            }
        }
        fn visit_lifetime(&mut self, l: &'ast Lifetime) {
            let name = l.ident.to_string();
            if name != "static" && !self.bound.contains(&name) {
                self.found.push(l.clone());
            }
        }
    }
    let mut finder = Finder::default();
    finder.visit_type(ty);
    finder.found
}

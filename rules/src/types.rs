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

/// The data of a `Query<D, F>` parameter, as written, element by element:
/// what each position of the item the query yields is.
#[derive(Clone, Debug)]
pub enum QueryShape<'a> {
    /// `&C` (`mutable` false) or `&mut C`: `reference` is the whole `&mut C`,
    /// `component` the `C` inside it.
    Component {
        /// The `&C` or `&mut C` type.
        reference: &'a Type,
        /// The component type `C`.
        component: &'a Type,
        /// `&mut C`.
        mutable: bool,
    },
    /// `(A, B, ..)`: one position per element.
    Tuple(Vec<QueryShape<'a>>),
    /// `Option<D>`.
    Optional(Box<QueryShape<'a>>),
    /// `Target<C>`: reads the component `C` of the entity a reference names.
    Target(&'a Type),
    /// `Entity`, or anything else that names no component.
    Other,
}

impl<'a> QueryShape<'a> {
    /// The shape of the data of `ty` when `ty` is `Query<D, ..>` (by its
    /// last path segment), else `None`.
    pub fn of_query(ty: &'a Type) -> Option<QueryShape<'a>> {
        first_generic(ty, "Query").map(QueryShape::of_data)
    }

    /// The shape of the query data `data` (the `D` of `Query<D, F>`).
    pub fn of_data(data: &'a Type) -> QueryShape<'a> {
        let data = strip_groups(data);
        match data {
            Type::Reference(r) => QueryShape::Component {
                reference: data,
                component: strip_groups(&r.elem),
                mutable: r.mutability.is_some(),
            },
            Type::Tuple(tuple) => {
                QueryShape::Tuple(tuple.elems.iter().map(QueryShape::of_data).collect())
            }
            other => {
                if let Some(inner) = last_segment_generic(other, "Option") {
                    QueryShape::Optional(Box::new(QueryShape::of_data(inner)))
                } else if let Some(target) = last_segment_generic(other, "Target") {
                    QueryShape::Target(target)
                } else {
                    QueryShape::Other
                }
            }
        }
    }

    /// Every component the data names, in order, with whether it is named
    /// `&mut` (`Option<&C>` and `Target<C>` read `C`).
    pub fn components(&self, out: &mut Vec<(&'a Type, bool)>) {
        match self {
            QueryShape::Component {
                component, mutable, ..
            } => out.push((component, *mutable)),
            QueryShape::Tuple(elems) => elems.iter().for_each(|elem| elem.components(out)),
            QueryShape::Optional(inner) => inner.components(out),
            QueryShape::Target(target) => out.push((target, false)),
            QueryShape::Other => {}
        }
    }
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

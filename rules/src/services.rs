//! Telling services apart by their types' spelling, for SA0002 in
//! `sluice check` (the macros compare type tokens and leave other spellings
//! of one type to the compiler, which knows).
//!
//! The heuristic, [`TypeAliases::same_service`]:
//!
//! 1. A type alias (`type Health = Hp;`, not generic) or a renaming import
//!    (`use a::Hp as Health;`) declared anywhere in the checked files is
//!    replaced by what it names, whatever path it is spelled through
//!    (`m::Health`), repeatedly (16 steps at most, so a cycle ends). A name
//!    declared as two different things is left alone.
//! 2. A bare name imported without renaming (`use physics::Pos;`) gets the
//!    import's path, so that `Pos` and `render::Pos` can be told apart.
//! 3. Two path types are one service when their last segments are the same
//!    identifier, their generic arguments are pairwise one service, and
//!    their module paths agree: one is empty (a bare name) or a suffix of the
//!    other (`m::Hp` and `game::m::Hp`), after dropping a leading `crate`,
//!    `self`, `super` or `::`. So `Hp`, `m::Hp` and `crate::m::Hp` are one
//!    service, and `physics::Pos` and `render::Pos` are two.
//! 4. Any other type (a tuple, an array, a `dyn Trait`) is compared by its
//!    token string.
//!
//! It errs on the side of reporting: `Pos` (a `physics::Pos` imported by a
//! glob or through a `pub use` the files do not show) beside `render::Pos` is
//! reported as one service. Generic aliases (`type Pool<T> = Vec<T>;`) are not
//! expanded.

use std::collections::HashMap;

use quote::ToTokens;
use syn::visit::Visit;
use syn::{GenericArgument, PathArguments, Type, UseTree};

use crate::types::type_key;

/// How many aliases deep a type is followed.
const MAX_STEPS: u8 = 16;

/// What a name stands for.
#[derive(Clone, Debug)]
enum Meaning {
    /// `type Name = Target;` or `use path::Target as Name;`.
    Alias(Box<Type>),
    /// `use path::Name;`: the module path, as segments.
    Import(Vec<String>),
    /// Declared as two different things: left alone.
    Ambiguous,
}

/// The type aliases, renaming imports and imports declared in the checked
/// files, by name: what [`crate::BodyContext::services`] carries to make
/// SA0002 compare services by their resolved last path segment.
#[derive(Clone, Debug, Default)]
pub struct TypeAliases {
    names: HashMap<String, Meaning>,
}

/// A service type as compared: a path's last segment with its module path
/// and generic arguments, or any other type's tokens.
#[derive(Clone, Debug)]
enum Key {
    Path {
        module: Vec<String>,
        name: String,
        args: Vec<Key>,
    },
    Other(String),
}

impl TypeAliases {
    /// No alias known: services are told apart by path alone.
    pub fn new() -> Self {
        Self::default()
    }

    /// Whether nothing was declared.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// Records `type name = target;`.
    pub fn add_alias(&mut self, name: &str, target: Type) {
        self.add(name, Meaning::Alias(Box::new(target)));
    }

    /// Records every non-generic `type` alias and every `use` (renaming or
    /// not) of `file`, in nested modules and function bodies too.
    pub fn add_file(&mut self, file: &syn::File) {
        struct Collector<'a>(&'a mut TypeAliases);
        impl<'ast> Visit<'ast> for Collector<'_> {
            fn visit_item_type(&mut self, item: &'ast syn::ItemType) {
                if item.generics.params.is_empty() {
                    self.0
                        .add_alias(&item.ident.to_string(), (*item.ty).clone());
                }
                syn::visit::visit_item_type(self, item);
            }
            fn visit_item_use(&mut self, item: &'ast syn::ItemUse) {
                self.0.add_use(&mut Vec::new(), &item.tree);
            }
        }
        Collector(self).visit_file(file);
    }

    fn add_use(&mut self, prefix: &mut Vec<String>, tree: &UseTree) {
        match tree {
            UseTree::Path(path) => {
                prefix.push(path.ident.to_string());
                self.add_use(prefix, &path.tree);
                prefix.pop();
            }
            UseTree::Name(name) => {
                let name = name.ident.to_string();
                if name != "self" {
                    self.add(&name, Meaning::Import(module(prefix.iter().cloned())));
                }
            }
            UseTree::Rename(rename) => {
                let (from, to) = (rename.ident.to_string(), rename.rename.to_string());
                if to == "_" {
                    return;
                }
                if from == to {
                    self.add(&to, Meaning::Import(module(prefix.iter().cloned())));
                    return;
                }
                let mut path = prefix.clone();
                if from != "self" {
                    path.push(from);
                }
                let Ok(target) = syn::parse_str::<Type>(&path.join("::")) else {
                    return;
                };
                self.add(&to, Meaning::Alias(Box::new(target)));
            }
            UseTree::Group(group) => {
                for tree in &group.items {
                    self.add_use(prefix, tree);
                }
            }
            UseTree::Glob(_) => {}
        }
    }

    fn add(&mut self, name: &str, meaning: Meaning) {
        let same = |a: &Meaning, b: &Meaning| match (a, b) {
            (Meaning::Alias(a), Meaning::Alias(b)) => type_key(a) == type_key(b),
            (Meaning::Import(a), Meaning::Import(b)) => a == b,
            _ => false,
        };
        match self.names.get_mut(name) {
            None => {
                self.names.insert(name.to_owned(), meaning);
            }
            Some(known) if same(known, &meaning) => {}
            Some(known) => *known = Meaning::Ambiguous,
        }
    }

    /// Whether `a` and `b` name one service, by the heuristic of this
    /// module's documentation.
    pub fn same_service(&self, a: &Type, b: &Type) -> bool {
        same(&self.key(a, 0), &self.key(b, 0))
    }

    /// `ty` with its aliases replaced, as text (`NextValue<m::Hp>` for
    /// `NextValue<Health>`), for messages.
    pub fn resolve_text(&self, ty: &Type) -> String {
        self.key(ty, 0).to_string()
    }

    fn key(&self, ty: &Type, steps: u8) -> Key {
        let ty = strip(ty);
        let Type::Path(path) = ty else {
            return Key::Other(type_key(ty));
        };
        let Some(last) = path.path.segments.last() else {
            return Key::Other(type_key(ty));
        };
        if path.qself.is_some() {
            return Key::Other(type_key(ty));
        }
        let name = last.ident.to_string();
        let bare = path.path.segments.len() == 1 && path.path.leading_colon.is_none();
        let mut written = module(
            path.path
                .segments
                .iter()
                .take(path.path.segments.len() - 1)
                .map(|s| s.ident.to_string()),
        );
        if last.arguments.is_empty() && steps < MAX_STEPS {
            match self.names.get(&name) {
                Some(Meaning::Alias(target)) => return self.key(target, steps + 1),
                Some(Meaning::Import(module)) if bare => written = module.clone(),
                _ => {}
            }
        }
        let args = match &last.arguments {
            PathArguments::None => Vec::new(),
            PathArguments::AngleBracketed(args) => args
                .args
                .iter()
                .map(|arg| match arg {
                    GenericArgument::Type(t) => self.key(t, steps.saturating_add(1)),
                    other => Key::Other(other.to_token_stream().to_string()),
                })
                .collect(),
            PathArguments::Parenthesized(args) => {
                vec![Key::Other(args.to_token_stream().to_string())]
            }
        };
        Key::Path {
            module: written,
            name,
            args,
        }
    }
}

/// A module path without the segments that say nothing of which module:
/// a leading `crate`, `self`, `super` (any number of them).
fn module(segments: impl Iterator<Item = String>) -> Vec<String> {
    let mut segments: Vec<String> = segments.collect();
    let skip = segments
        .iter()
        .take_while(|s| matches!(s.as_str(), "crate" | "self" | "super"))
        .count();
    segments.drain(..skip);
    segments
}

fn strip(ty: &Type) -> &Type {
    match ty {
        Type::Paren(p) => strip(&p.elem),
        Type::Group(g) => strip(&g.elem),
        other => other,
    }
}

fn same(a: &Key, b: &Key) -> bool {
    match (a, b) {
        (
            Key::Path {
                module: ma,
                name: na,
                args: aa,
            },
            Key::Path {
                module: mb,
                name: nb,
                args: ab,
            },
        ) => {
            na == nb
                && aa.len() == ab.len()
                && aa.iter().zip(ab).all(|(x, y)| same(x, y))
                && (ma.ends_with(mb) || mb.ends_with(ma))
        }
        (Key::Other(a), Key::Other(b)) => a == b,
        _ => false,
    }
}

impl std::fmt::Display for Key {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Key::Path { module, name, args } => {
                for segment in module {
                    write!(f, "{segment}::")?;
                }
                f.write_str(name)?;
                if !args.is_empty() {
                    f.write_str("<")?;
                    for (i, arg) in args.iter().enumerate() {
                        if i > 0 {
                            f.write_str(", ")?;
                        }
                        write!(f, "{arg}")?;
                    }
                    f.write_str(">")?;
                }
                Ok(())
            }
            Key::Other(text) => f.write_str(text),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ty(text: &str) -> Type {
        syn::parse_str(text).unwrap()
    }

    fn aliases(source: &str) -> TypeAliases {
        let mut aliases = TypeAliases::new();
        aliases.add_file(&syn::parse_file(source).unwrap());
        aliases
    }

    #[test]
    fn paths_agree_by_last_segment_and_module_suffix() {
        let none = TypeAliases::new();
        let same = |a: &str, b: &str| none.same_service(&ty(a), &ty(b));
        assert!(same("Hp", "m::Hp"));
        assert!(same("crate::m::Hp", "m::Hp"));
        assert!(same("game::m::Hp", "self::m::Hp"));
        assert!(same("Assets<Mesh>", "Assets<m::Mesh>"));
        assert!(same("(Hp)", "Hp"));
        assert!(!same("physics::Pos", "render::Pos"));
        assert!(!same("Assets<Mesh>", "Assets<Texture>"));
        assert!(!same("Hp", "Mp"));
        assert!(!same("(A, B)", "(A, C)"));
        assert!(same("[u8; 4]", "[u8 ; 4]"));
    }

    #[test]
    fn aliases_renames_and_imports_resolve() {
        let known = aliases(
            "use physics::Pos; use m::{Hp as Life, n::Mana as Mp};\n\
             type Health = Hp; type Vitality = Health; mod inner { type Loop = Loop2; type Loop2 = Loop; }",
        );
        let same = |a: &str, b: &str| known.same_service(&ty(a), &ty(b));
        assert!(same("Health", "Hp"));
        assert!(same("Vitality", "m::Hp"));
        assert!(same("Life", "Hp"));
        assert!(same("Mp", "n::Mana"));
        assert!(same("m::Health", "Hp"));
        assert!(same("NextValue<Health>", "NextValue<Hp>"));
        // the import tells `Pos` from `render::Pos`
        assert!(!same("Pos", "render::Pos"));
        assert!(same("Pos", "physics::Pos"));
        // a cycle ends
        assert!(!same("Loop", "Hp"));
        assert_eq!(known.resolve_text(&ty("Vec<Life>")), "Vec<m::Hp>");
    }

    #[test]
    fn a_name_declared_twice_differently_is_left_alone() {
        let known = aliases("type Health = Hp; mod other { type Health = Mp; }");
        assert!(!known.same_service(&ty("Health"), &ty("Hp")));
        assert!(!known.same_service(&ty("Health"), &ty("Mp")));
        let twice = aliases("type Health = Hp; mod other { type Health = Hp; }");
        assert!(twice.same_service(&ty("Health"), &ty("Hp")));
    }
}

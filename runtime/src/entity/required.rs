//! Required components: inserting a component `A` also inserts each
//! component `A` requires (and each that one requires, transitively) that
//! the entity lacks, made by the requirement's constructor
//! ([`Entities::register_required`], [`Entities::register_required_with`]).
//!
//! Every `Send + Sync + 'static` type is a component (a blanket impl), so
//! there is no component derive to carry a `#[require(B)]` attribute: a
//! requirement is registered on the store (or the world) instead.

use std::fmt;
use std::sync::Arc;

use foldhash::HashMap;

use super::component::{Component, ComponentId};
use super::entity::Entity;
use super::store::{Entities, EntityError};

/// Why a requirement was refused. A refused requirement changes nothing.
#[derive(Clone, PartialEq, Eq, Debug)]
#[non_exhaustive]
pub enum RequiredError {
    /// The requirement would close a cycle: the first component named
    /// requires, link by link, the last, which is the first again (`A`
    /// requiring `A` is the cycle `[A, A]`).
    Cycle {
        /// The components of the cycle, by type name, first and last the
        /// same.
        path: Vec<&'static str>,
    },
    /// `component` already requires `required`.
    AlreadyRequired {
        /// The requiring component's type name.
        component: &'static str,
        /// The required component's type name.
        required: &'static str,
    },
}

impl fmt::Display for RequiredError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Cycle { path } => write!(
                f,
                "required components may not form a cycle: {}",
                path.join(" requires ")
            ),
            Self::AlreadyRequired {
                component,
                required,
            } => write!(f, "{component} already requires {required}"),
        }
    }
}

impl std::error::Error for RequiredError {}

/// Inserts a required component onto an entity that lacks it.
type Insert = Arc<dyn Fn(&mut Entities, Entity) -> Result<(), EntityError> + Send + Sync>;

/// One component a component requires.
#[derive(Clone)]
struct Requirement {
    id: ComponentId,
    name: &'static str,
    insert: Insert,
}

/// Every registered requirement, by requiring component.
#[derive(Default, Clone)]
pub(crate) struct Required {
    by_component: HashMap<ComponentId, Vec<Requirement>>,
}

impl fmt::Debug for Required {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map()
            .entries(
                self.by_component
                    .iter()
                    .map(|(id, list)| (id, list.iter().map(|r| r.name).collect::<Vec<_>>())),
            )
            .finish()
    }
}

impl Required {
    /// Whether no requirement is registered (the fast path of every insert).
    #[inline]
    pub(crate) fn is_empty(&self) -> bool {
        self.by_component.is_empty()
    }

    /// A path of requirements from `from` to `to` (both included), if any.
    fn path(&self, from: ComponentId, to: ComponentId) -> Option<Vec<ComponentId>> {
        if from == to {
            return Some(vec![from]);
        }
        for requirement in self.by_component.get(&from).into_iter().flatten() {
            if let Some(mut rest) = self.path(requirement.id, to) {
                rest.insert(0, from);
                return Some(rest);
            }
        }
        None
    }
}

impl Entities {
    /// Makes `A` require `B`: from now on, every spawn or insert that gives
    /// an entity an `A` also inserts `B::default()` if the entity then
    /// lacks a `B` (a `B` in the same bundle, or one it had, is kept), and
    /// so on transitively. Entities that have an `A` already are not
    /// changed.
    ///
    /// # Errors
    /// [`RequiredError::Cycle`] when `B` requires `A` (directly or through
    /// others, or `A` is `B`), naming the cycle;
    /// [`RequiredError::AlreadyRequired`] when `A` requires `B` already.
    pub fn register_required<A: Component, B: Component + Default>(
        &mut self,
    ) -> Result<(), RequiredError> {
        self.register_required_with::<A, B>(B::default)
    }

    /// As [`register_required`](Self::register_required), `B` made by
    /// `make`.
    ///
    /// If `make` panics during an insert, the insert that required it is
    /// complete, the requirements made before it stay, and the store is
    /// consistent; the panic goes on to the caller.
    ///
    /// # Errors
    /// As [`register_required`](Self::register_required).
    pub fn register_required_with<A: Component, B: Component>(
        &mut self,
        make: impl Fn() -> B + Send + Sync + 'static,
    ) -> Result<(), RequiredError> {
        let a = self.components.register::<A>();
        let b = self.components.register::<B>();
        let name = |id| self.components.info(id).name();
        if let Some(path) = self.required.path(b, a) {
            let mut path: Vec<_> = path.into_iter().map(name).collect();
            path.insert(0, name(a));
            return Err(RequiredError::Cycle { path });
        }
        let list = self.required.by_component.entry(a).or_default();
        if list.iter().any(|requirement| requirement.id == b) {
            return Err(RequiredError::AlreadyRequired {
                component: name(a),
                required: name(b),
            });
        }
        list.push(Requirement {
            id: b,
            name: name(b),
            insert: Arc::new(move |entities, entity| entities.insert_if_new(entity, (make(),))),
        });
        Ok(())
    }

    /// Inserts what the components `given` require onto `entity`, which
    /// has just received them, where it lacks it. Each required insert
    /// applies its own requirements in turn (no cycle: refused at
    /// registration).
    #[cold]
    pub(crate) fn insert_required(&mut self, entity: Entity, given: &[ComponentId]) {
        let wanted: Vec<Requirement> = given
            .iter()
            .filter_map(|id| self.required.by_component.get(id))
            .flatten()
            .cloned()
            .collect();
        for requirement in wanted {
            let lacks = self.contains(entity) && !self.has_component(entity, requirement.id);
            if lacks {
                // Cannot be refused: the entity is alive and movable (it
                // just received `given`), and a one-field bundle names no
                // type twice.
                let inserted = (requirement.insert)(self, entity);
                debug_assert!(inserted.is_ok(), "{inserted:?}");
            }
        }
    }
}

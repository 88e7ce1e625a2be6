//! Why [`Query::get`](super::Query::get) (or `get_many_mut`) found no
//! item.

use crate::entity::Entity;

/// Why a query has no item for an entity: the reason
/// [`Query::get`](super::Query::get) and
/// [`Query::get_mut`](super::Query::get_mut) give.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum QueryEntityError {
    /// The entity is not alive in this world: despawned, never spawned, or
    /// another world's.
    NoSuchEntity(Entity),
    /// The entity is alive but lacks a component the query's data requires.
    MissingComponent {
        /// The entity asked for.
        entity: Entity,
        /// The first required component it lacks, by type name.
        component: &'static str,
    },
    /// The entity has the query's data, but the query's filter (`With`,
    /// `Without`, `Changed`, `Added`) leaves it out.
    FilteredOut {
        /// The entity asked for.
        entity: Entity,
        /// The query's filter, by type name.
        filter: &'static str,
    },
    /// [`Query::get_many_mut`](super::Query::get_many_mut) was asked for
    /// this entity twice: two writable items of one row would alias, so
    /// none is handed out.
    AliasedMutability(Entity),
}

impl QueryEntityError {
    /// The entity asked for.
    pub fn entity(&self) -> Entity {
        match *self {
            Self::NoSuchEntity(entity)
            | Self::AliasedMutability(entity)
            | Self::MissingComponent { entity, .. }
            | Self::FilteredOut { entity, .. } => entity,
        }
    }
}

impl std::fmt::Display for QueryEntityError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::NoSuchEntity(entity) => write!(f, "{entity:?} is not alive in this world"),
            Self::MissingComponent { entity, component } => {
                write!(f, "{entity:?} has no `{component}` component")
            }
            Self::FilteredOut { entity, filter } => {
                write!(f, "{entity:?} is left out by the query's filter `{filter}`")
            }
            Self::AliasedMutability(entity) => write!(
                f,
                "{entity:?} is named twice in one `get_many_mut`: two writable items of one \
                 entity would alias"
            ),
        }
    }
}

impl std::error::Error for QueryEntityError {}

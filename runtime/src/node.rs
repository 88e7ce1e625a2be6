//! Node descriptors: what the planner knows about a node.
//!
//! A [`NodeDescriptor`] carries a node's name, instance key, access set and
//! ordering attributes, with every service already resolved to its id. It holds
//! no runnable body: the executor pairs a body with each descriptor by its
//! registration index.

use std::borrow::Cow;

use crate::access::{AccessKind, AccessSet, INLINE_ACCESSES, ServiceId, SmallList};
use crate::registry::Registry;

/// A node or marker name as written by the user: borrowed when static, owned
/// when built at run time (the CLI).
pub type Label = Cow<'static, str>;

/// A service named in a builder, before it has an id: a type (as the function
/// that resolves it, one pointer), or the index of a name in the builder's
/// `names`.
#[derive(Debug, Clone, Copy)]
enum ServiceKey {
    Type(fn(&mut Registry) -> ServiceId),
    Name(u32),
}

/// What a builder rarely carries, boxed so the builder stays small (it is
/// moved by value through every call of the chain).
#[derive(Debug, Clone, Default)]
struct Rare {
    key: Option<Label>,
    /// Services named by name rather than type (tools, the CLI).
    names: Vec<Label>,
}

/// One access declared on a builder.
#[derive(Debug, Clone, Copy)]
struct Declared {
    key: ServiceKey,
    kind: AccessKind,
}

impl Default for Declared {
    fn default() -> Self {
        Self {
            key: ServiceKey::Name(0),
            kind: AccessKind::Shared,
        }
    }
}

/// Builds a [`NodeDescriptor`]:
/// `NodeBuilder::new("hud").reads::<Hp>().gates::<Score>().after("spawner")`.
#[derive(Debug, Clone)]
pub struct NodeBuilder {
    name: Label,
    accesses: SmallList<Declared, INLINE_ACCESSES>,
    rare: Option<Box<Rare>>,
    exclusive: bool,
    after: Vec<Label>,
    before: Vec<Label>,
}

impl NodeBuilder {
    /// A node called `name` that touches nothing and follows nothing.
    pub fn new(name: impl Into<Label>) -> Self {
        Self {
            name: name.into(),
            accesses: SmallList::default(),
            rare: None,
            exclusive: false,
            after: Vec::new(),
            before: Vec::new(),
        }
    }

    fn typed<T: 'static>(mut self, kind: AccessKind) -> Self {
        let key = ServiceKey::Type(|registry| registry.resolve::<T>());
        self.accesses.push(Declared { key, kind });
        self
    }

    fn named(mut self, name: impl Into<Label>, kind: AccessKind) -> Self {
        let names = &mut self.rare.get_or_insert_default().names;
        let index = u32::try_from(names.len()).expect("too many named services");
        names.push(name.into());
        self.accesses.push(Declared {
            key: ServiceKey::Name(index),
            kind,
        });
        self
    }

    /// Shared access to `T` (`&T`).
    pub fn reads<T: 'static>(self) -> Self {
        self.typed::<T>(AccessKind::Shared)
    }

    /// Gated access to `T` (`&mut T`).
    pub fn gates<T: 'static>(self) -> Self {
        self.typed::<T>(AccessKind::Gated)
    }

    /// The node produces `T`: every consumer of `T` runs after it.
    pub fn produces<T: 'static>(self) -> Self {
        self.typed::<T>(AccessKind::Produced)
    }

    /// Shared access to the service called `name`.
    pub fn reads_named(self, name: impl Into<Label>) -> Self {
        self.named(name, AccessKind::Shared)
    }

    /// Gated access to the service called `name`.
    pub fn gates_named(self, name: impl Into<Label>) -> Self {
        self.named(name, AccessKind::Gated)
    }

    /// The node produces the service called `name`.
    pub fn produces_named(self, name: impl Into<Label>) -> Self {
        self.named(name, AccessKind::Produced)
    }

    /// The node needs the whole world: it conflicts with every other node.
    pub fn exclusive(mut self) -> Self {
        self.exclusive = true;
        self
    }

    /// The node runs after the node (by instance key or name) or marker `target`.
    pub fn after(mut self, target: impl Into<Label>) -> Self {
        self.after.push(target.into());
        self
    }

    /// The node runs before the node (by instance key or name) or marker `target`.
    pub fn before(mut self, target: impl Into<Label>) -> Self {
        self.before.push(target.into());
        self
    }

    /// The instance key, for the same function registered twice (defaults to the name).
    pub fn key(mut self, key: impl Into<Label>) -> Self {
        self.rare.get_or_insert_default().key = Some(key.into());
        self
    }

    /// Resolves every service to its id in `registry` (assigning ids to
    /// services not seen before).
    pub fn build(self, registry: &mut Registry) -> NodeDescriptor {
        let mut access = AccessSet::new();
        access.set_exclusive(self.exclusive);
        let (key, names) = match self.rare {
            Some(rare) => (rare.key, rare.names),
            None => (None, Vec::new()),
        };
        for declared in self.accesses.as_slice() {
            let id = match declared.key {
                ServiceKey::Type(resolve) => resolve(registry),
                ServiceKey::Name(index) => registry.resolve_name(&names[index as usize]),
            };
            access.add(id, declared.kind);
        }
        NodeDescriptor {
            key: key.unwrap_or_else(|| self.name.clone()),
            name: self.name,
            access,
            after: self.after,
            before: self.before,
        }
    }
}

/// A registered node as the planner sees it, services resolved to ids.
#[derive(Debug, Clone)]
pub struct NodeDescriptor {
    name: Label,
    key: Label,
    access: AccessSet,
    after: Vec<Label>,
    before: Vec<Label>,
}

impl NodeDescriptor {
    /// The node's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    pub(crate) fn name_label(&self) -> &Label {
        &self.name
    }

    /// The instance key (the name unless set): unique among a world's nodes.
    pub fn key(&self) -> &str {
        &self.key
    }

    /// What the node touches.
    pub fn access(&self) -> &AccessSet {
        &self.access
    }

    /// Nodes or markers this node runs after.
    pub fn after(&self) -> &[Label] {
        &self.after
    }

    /// Nodes or markers this node runs before.
    pub fn before(&self) -> &[Label] {
        &self.before
    }
}

/// A label nodes order themselves against; never run (`PreUpdate`, `Update`).
///
/// Markers may be ordered among themselves:
/// `Marker::new("Update").after("PreUpdate")`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Marker {
    label: Label,
    after: Vec<Label>,
    before: Vec<Label>,
}

impl Marker {
    /// A marker called `label`.
    pub fn new(label: impl Into<Label>) -> Self {
        Self {
            label: label.into(),
            after: Vec::new(),
            before: Vec::new(),
        }
    }

    /// The marker comes after the node or marker `target`.
    pub fn after(mut self, target: impl Into<Label>) -> Self {
        self.after.push(target.into());
        self
    }

    /// The marker comes before the node or marker `target`.
    pub fn before(mut self, target: impl Into<Label>) -> Self {
        self.before.push(target.into());
        self
    }

    /// The marker's label.
    pub fn label(&self) -> &str {
        &self.label
    }

    pub(crate) fn label_cow(&self) -> &Label {
        &self.label
    }

    /// What the marker comes after.
    pub fn after_targets(&self) -> &[Label] {
        &self.after
    }

    /// What the marker comes before.
    pub fn before_targets(&self) -> &[Label] {
        &self.before
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::access::{AccessKind, ServiceId};

    struct Hp;
    struct Score;

    #[test]
    fn builder_resolves_types_and_names_to_the_same_ids() {
        let mut registry = Registry::new();
        let hud = NodeBuilder::new("hud")
            .reads::<Hp>()
            .gates::<Score>()
            .reads_named("Armor")
            .after("spawner")
            .before("render")
            .key("hud#2")
            .build(&mut registry);
        assert_eq!(hud.name(), "hud");
        assert_eq!(hud.key(), "hud#2");
        assert_eq!(hud.after(), ["spawner"]);
        assert_eq!(hud.before(), ["render"]);
        let hp = registry.id_of::<Hp>().unwrap();
        let score = registry.id_of::<Score>().unwrap();
        let armor = registry.id_by_name("Armor").unwrap();
        assert_eq!(hud.access().access_to(hp), Some(AccessKind::Shared));
        assert_eq!(hud.access().access_to(score), Some(AccessKind::Gated));
        assert_eq!(hud.access().access_to(armor), Some(AccessKind::Shared));
        assert_eq!(hud.access().access_to(ServiceId(9)), None);
        let other = NodeBuilder::new("poison")
            .gates::<Hp>()
            .build(&mut registry);
        assert_eq!(other.key(), "poison");
        assert_eq!(other.access().gated().collect::<Vec<_>>(), vec![hp]);
        assert!(other.access().conflicts(hud.access()));
    }
}

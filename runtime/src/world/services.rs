//! Services made from the world ([`FromWorld`], [`World::init_service`]),
//! taken out for the length of a closure ([`World::service_scope`]), and
//! custom commands run with the world at the boundary.

use std::panic::{self, AssertUnwindSafe};

use crate::world::World;

/// A service the world can make for itself: every `T: Default`, or a type
/// that builds itself from what the world already holds.
///
/// ```
/// use sluice::{FromWorld, World};
///
/// struct Gravity(f32);
/// struct Fall { speed: f32 }
///
/// impl FromWorld for Fall {
///     fn from_world(world: &mut World) -> Self {
///         Fall { speed: world.get::<Gravity>().map_or(9.8, |g| g.0) }
///     }
/// }
///
/// let mut world = World::new();
/// world.insert(Gravity(1.6));
/// world.init_service::<Fall>();
/// assert_eq!(world.get::<Fall>().unwrap().speed, 1.6);
/// ```
pub trait FromWorld {
    /// The value, made with the world at hand.
    fn from_world(world: &mut World) -> Self;
}

impl<T: Default> FromWorld for T {
    fn from_world(_world: &mut World) -> Self {
        T::default()
    }
}

/// Puts a scoped service back into its world when dropped: when the
/// closure returns, and when it unwinds.
struct PutBack<'w, T: Send + Sync + 'static> {
    world: &'w mut World,
    value: Option<T>,
}

impl<T: Send + Sync + 'static> Drop for PutBack<'_, T> {
    fn drop(&mut self) {
        if let Some(value) = self.value.take() {
            // Replaces (and drops) anything inserted as `T` meanwhile; the
            // version moves, as the closure's `&mut T` is a gated access.
            self.world.insert(value);
        }
    }
}

impl World {
    /// Inserts `T::from_world(self)` as the service `T` unless the world
    /// already holds a `T` (which is left as it is): a `Default` type, or
    /// one that builds itself from other services ([`FromWorld`]).
    pub fn init_service<T: FromWorld + Send + Sync + 'static>(&mut self) {
        if self.get::<T>().is_none() {
            let value = T::from_world(self);
            // `from_world` may have inserted a `T` itself: the first one stays.
            if self.get::<T>().is_none() {
                self.insert(value);
            }
        }
    }

    /// Takes the service `T` out for the length of `scope`, which gets the
    /// world and the value at once; `None` (and `scope` is not called) when
    /// the world holds no `T`.
    ///
    /// Inside, the world holds no `T` (`get::<T>()` is `None`; a node that
    /// requires it makes an iteration run inside fail with
    /// [`IterationError::MissingServices`](crate::IterationError::MissingServices)).
    /// The value goes back when `scope` returns, and also when it panics
    /// (the panic then goes on to the caller); a `T` inserted inside is
    /// replaced by it. Its version moves, as a gated access's does, so
    /// factories reading it run again.
    /// The world's own services are never lent: `None`.
    ///
    /// ```
    /// use sluice::World;
    ///
    /// struct Deck(Vec<u32>);
    /// struct Hand(Vec<u32>);
    ///
    /// let mut world = World::new();
    /// world.insert(Deck(vec![1, 2, 3]));
    /// world.insert(Hand(Vec::new()));
    /// let drawn = world.service_scope(|world, deck: &mut Deck| {
    ///     assert!(world.get::<Deck>().is_none(), "taken out");
    ///     let card = deck.0.pop().unwrap();
    ///     world.get_mut::<Hand>().unwrap().0.push(card);
    ///     card
    /// });
    /// assert_eq!(drawn, Some(3));
    /// assert_eq!(world.get::<Deck>().unwrap().0, [1, 2]);
    /// ```
    pub fn service_scope<T: Send + Sync + 'static, R>(
        &mut self,
        scope: impl FnOnce(&mut World, &mut T) -> R,
    ) -> Option<R> {
        let value = self.remove::<T>()?;
        let mut guard = PutBack {
            world: self,
            value: Some(value),
        };
        let PutBack { world, value } = &mut guard;
        let value = value.as_mut().expect("taken out above");
        Some(scope(world, value))
    }

    /// Runs a custom command ([`Commands::queue`](crate::Commands::queue))
    /// with the world, which it may change but not run; a panic goes on to
    /// the boundary, which reports it.
    pub(crate) fn run_custom_command(&mut self, command: impl FnOnce(&mut World)) {
        let previous = std::mem::replace(&mut self.running_whole, true);
        let ran = panic::catch_unwind(AssertUnwindSafe(|| command(self)));
        self.running_whole = previous;
        if let Err(payload) = ran {
            panic::resume_unwind(payload);
        }
    }
}

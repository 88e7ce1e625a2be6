//! The attribute macros of sluice: a node's signature is its declaration.
//!
//! `#[system]`, `#[factory]` and `#[run_condition]` read a function's
//! parameters as the services it touches (`&T` shared, `&mut T` gated,
//! `Out<T>` / the return type produced), check them with the rules of
//! `sluice-rules` (the same checks `sluice check` runs, SA0001-SA0007), and
//! expand to exactly the registration a person would write by hand with
//! `sluice::NodeBuilder`. Use them through `sluice`, which re-exports them.
//!
//! [The guide](https://example.invalid/sluice/blob/main/docs/guide/README.md) starts with
//! them ("Systems and services"), and
//! [ARCHITECTURE.md](https://example.invalid/sluice/blob/main/ARCHITECTURE.md) follows a
//! declaration from here to the gate every registration passes.
//!
//! Each macro is a pipeline: parse the item, validate it (the rules crate,
//! plus the shapes only a macro cares about), then expand it, or, when
//! anything is wrong, emit every
//! error spanned on its offending token *and* a fallback that keeps the
//! function's name defined, so one mistake gives one error.
//!
//! # One service, one access
//!
//! A signature never names one service twice in conflicting ways (at least
//! one of the two not shared: `&mut A` twice, `&mut A` and `&A`, `&A` and
//! `Out<A>`, two `Out<A>`, `Out<Next<A>>` and `&NextValue<A>`, a factory
//! returning `A` and taking `&A`). Spelled the same, SA0002 reports it. By
//! another path (`m::Hp`) or an alias (`type Health = Hp`), only the compiler
//! knows the two are one type, so the macro emits, beside the function, one
//! trait per such pair with an impl for each type: rustc refuses the pair
//! with E0119, "conflicting implementations of trait
//! `SignatureGatesAndReadsOneService` for type `Hp`", pointing at both
//! parameters (the trait names the two accesses). Types mentioning the
//! function's generics, `Self` or `impl Trait`, and the parameters of
//! methods, are left to the runtime's check.
//!
//! # `#[system]` on a free function
//!
//! ```
//! # use sluice::{World, run_condition, system};
//! # pub struct CameraRotation(f32);
//! # pub struct Banners(u32);
//! # #[system]
//! # fn spawner(banners: &mut Banners) { banners.0 += 1; }
//! # #[run_condition]
//! # fn banner_visible(camera: &CameraRotation) -> bool { camera.0 >= 0.0 }
//! /// Draws the banner.
//! #[system(after = "spawner", before = Render, run_if = banner_visible)]
//! pub fn banner(camera: &CameraRotation, banners: &mut Banners) { /* .. */ }
//!
//! # let mut world = World::new();
//! # world.insert(CameraRotation(0.0));
//! # world.insert(Banners(0));
//! # world.add_system(spawner);
//! # world.add_marker("Render");
//! world.add_system(banner);
//! # world.run_iteration().unwrap();
//! ```
//!
//! becomes
//!
//! ```text
//! /// Draws the banner.
//! pub fn banner(
//!     camera: &CameraRotation,
//!     banners: &mut Banners,
//! ) -> ::sluice::Declared<__sluice_system_banner, ()> {
//!     let __sluice_value = (move || -> () { /* .. */ })();
//!     ::sluice::Declared::with(__sluice_value)
//! }
//!
//! #[doc(hidden)]
//! pub struct __sluice_system_banner {}
//!
//! impl ::sluice::SystemDeclaration for __sluice_system_banner {
//!     fn builder() -> ::sluice::NodeBuilder {
//!         ::sluice::NodeBuilder::new("banner")
//!             .key(::core::concat!(::core::module_path!(), "::", "banner"))
//!             .after("spawner")
//!             .before("Render")
//!     }
//!     fn finish(spec: ::sluice::NodeSpec) -> ::sluice::NodeSpec {
//!         spec.run_if(banner_visible)
//!     }
//! }
//! ```
//!
//! The name `banner` stays what it was written as: a function item, callable
//! directly (in a unit test, say; it returns a zero-sized token). The value
//! namespace holds nothing else, so a parameter or a `let banner = ..` in
//! the same module is an ordinary binding (issue 23). The declaration rides
//! in the function's return type: `world.add_system(banner)` (through
//! `IntoSystem<DeclaredMarker<..>>`) builds `builder().system(banner)` and
//! applies `finish`, and a typed order `.after(banner)` reads the key the
//! same way. The hidden struct is braced, so it lives in the type namespace
//! only. Registration costs what the hand-written
//! `NodeBuilder::new("banner").system(f)` costs, and running costs nothing
//! more: the body calls the function item and drops the token.
//!
//! Arguments (parsed by `sluice-rules`):
//!
//! - `after = "name"` / `before = "name"`: order against a node (its name) or
//!   a marker; `after = PreUpdate` (a path) orders against the marker whose
//!   label is the path's **last segment** (`phases::PreUpdate` is
//!   `"PreUpdate"`). Repeatable.
//! - `name = "hud"`: the node's name (default: the function's name). An
//!   ordering names a node by its name (or its key).
//! - `key = "ai::update#2"`: the instance key, unique per world (SL0004).
//!   By default the function's qualified path, as for a plain function:
//!   `concat!(module_path!(), "::", "banner")` (`game::ai::banner`) for a
//!   free function, `format!("{}::{}", type_name::<Self>(), "tick")`
//!   (`game::Counter::tick`) for a method. So two `fn update` of different
//!   modules are two nodes, and registering one function twice is SL0004
//!   until the second registration has a key of its own.
//! - `exclusive`: the node gates the whole world.
//! - `allow_locks = "reason"`: opts the body out of SA0005 (locks,
//!   `static mut`, `thread_local!`).
//! - `run_if = path`: a `#[run_condition]` function; repeatable, all must
//!   hold.
//!
//! The organisation (systems and factories; each at most once, each value
//! checked at expansion, each the `NodeBuilder` call of the same name):
//!
//! - `phase = PreUpdate` (a path ending in `PreUpdate`, `Update` or
//!   `PostUpdate`): `.phase(::sluice::Phase::PreUpdate)`.
//! - `group = "Physics"`, `stage = "Early"`, `set = "Audio"` (non-empty
//!   strings): `.in_group(..)`, `.in_stage(..)`, `.in_set(..)`.
//! - `cadence = Fixed` / `cadence = Variable`: `.cadence(::sluice::Cadence::Fixed)`.
//! - `schedule = Startup` (or `Update`) / `schedule = "Save"`:
//!   `.in_schedule(::sluice::Schedule::Startup)` /
//!   `.in_schedule(::sluice::Schedule::named("Save"))`.
//! - `order = -1` (an integer literal that fits an `i32`): `.order(-1)`.
//! - `order_first` / `order_last` (flags, not both): `.order_first()`.
//! - `ambiguous_with = "physics"` (repeatable, a system's or a group's
//!   name) / `ambiguous_with_all` (a flag; not with `ambiguous_with`):
//!   `.ambiguous_with("physics")` / `.ambiguous_with_all()`, the
//!   ambiguities silenced on purpose (SL0008 at `Level::Silenced`).
//!
//! # `#[system]` on a method
//!
//! Inside an inherent `impl` block, where only impl items can be emitted, the
//! method is kept as written and an associated function `<method>_system()`
//! returning the `NodeSpec` is added beside it:
//! `world.add_system(Counter::tick_system())`. `&self` / `&mut self` is
//! shared / gated access to the service `Self`: `Counter::tick` is a plain
//! function whose first parameter is `&Counter` or `&mut Counter`. A `#[system]`
//! function inside an impl must take `self` (an associated function without
//! one would need a struct, which an impl cannot hold); methods of trait
//! impls cannot be nodes.
//!
//! # `#[factory]`
//!
//! Inputs are `&T`; outputs are the return type (a tuple for several, nested
//! tuples flattened), `Out<T>` parameters, and `Next<T>` for the next
//! iteration, either in the return type or as `Out<Next<T>>`. In the return
//! type `Next<T>` is a marker the macro reads: the body returns a plain `T`.
//! A factory registers with `world.add_factory(name)`; on a method, the
//! added function is `<method>_factory()`.
//!
//! A free factory stays a plain function item of its own name, as a system
//! does: `Out<T>` parameters become `Out<'_, T>`, and the return type
//! becomes `::sluice::Declared<__sluice_factory_name, R>`, `R` the return
//! type with each `Next<T>` written `T`:
//!
//! ```
//! # use sluice::{World, factory};
//! # pub struct Score(u32);
//! # pub struct Banner(u32);
//! #[factory(stage = "Think")]
//! pub fn banner(score: &Score) -> Banner { Banner(score.0) }
//!
//! assert_eq!(banner(&Score(3)).into_inner().0, 3);
//! ```
//!
//! becomes
//!
//! ```text
//! pub fn banner(score: &Score) -> ::sluice::Declared<__sluice_factory_banner, Banner> {
//!     let __sluice_value = (move || -> Banner { Banner(score.0) })();
//!     ::sluice::Declared::with(__sluice_value)
//! }
//!
//! #[doc(hidden)]
//! pub struct __sluice_factory_banner {}
//!
//! impl ::sluice::FactoryDeclaration for __sluice_factory_banner {
//!     fn builder() -> ::sluice::NodeBuilder {
//!         ::sluice::NodeBuilder::new("banner")
//!             .key(::core::concat!(::core::module_path!(), "::", "banner"))
//!             .in_stage("Think")
//!     }
//!     fn spec() -> ::sluice::NodeSpec {
//!         fn __sluice_body(__sluice_in0: &Score) -> Banner {
//!             banner(__sluice_in0).into_inner()
//!         }
//!         Self::builder().factory(__sluice_body)
//!     }
//! }
//! ```
//!
//! So a parameter or a `let banner = ..` in the same module is an ordinary
//! binding, `banner(&score).into_inner()` calls it directly, and
//! `.after_node(banner)` orders against its key. The body function routes
//! the outputs: one plain value through the runtime's factory path
//! (`.factory(body)`); no value (only `Out` parameters) as `.system(body)`;
//! several values, or `Next<T>`, through a body taking one `sluice::Out` /
//! `sluice::Next` handle per output that destructures the returned tuple.
//! Registration and running cost what `NodeBuilder::new("banner").factory(f)`
//! costs.
//!
//! # `#[run_condition]`
//!
//! Read-only (`&T` only; a `&mut` is SA0003, pointing at that parameter),
//! returns `bool`. The function is kept as written, so it is a
//! `sluice::ConditionFn` that `run_if = name` (or `NodeSpec::run_if`) takes.

mod alias;
mod bundle;
mod condition;
mod declared;
mod expand;
mod factory;
mod parse;
mod system;

use proc_macro::TokenStream;
use sluice_rules::NodeKind;

/// Declares a system: a function whose parameters are the services it
/// touches (`&T` shared, `&mut T` gated). See the crate documentation for the
/// expansion and the arguments (`after`, `before`, `name`, `key`,
/// `exclusive`, `allow_locks`, `run_if`, and the organisation: `phase`,
/// `group`, `stage`, `set`, `cadence`, `schedule`, `order`, `order_first`,
/// `order_last`, `ambiguous_with`, `ambiguous_with_all`).
#[proc_macro_attribute]
pub fn system(attr: TokenStream, item: TokenStream) -> TokenStream {
    parse::node(NodeKind::System, attr.into(), item.into()).into()
}

/// Declares a factory: its `&T` parameters are its inputs, its return type
/// and `Out<T>` parameters what it produces (`Next<T>` for the next
/// iteration). It is skipped in iterations where none of its inputs moved.
/// Takes the same arguments as [`macro@system`].
#[proc_macro_attribute]
pub fn factory(attr: TokenStream, item: TokenStream) -> TokenStream {
    parse::node(NodeKind::Factory, attr.into(), item.into()).into()
}

/// Declares a run condition: a read-only function (`&T` parameters only)
/// returning `bool`, named by a node's `run_if = ..`. Arguments: `name`,
/// `allow_locks`.
#[proc_macro_attribute]
pub fn run_condition(attr: TokenStream, item: TokenStream) -> TokenStream {
    parse::node(NodeKind::RunCondition, attr.into(), item.into()).into()
}

/// Derives `sluice::Bundle` for a struct (named, tuple or unit fields):
/// its fields are spawned, inserted and removed together, in one archetype
/// move.
///
/// Every `Send + Sync + 'static` type is a component, so a field is one
/// component unless marked `#[bundle]`: then it is a nested bundle (a
/// derived one, or a tuple of components) whose components join this one's.
///
/// ```
/// # use sluice::{Bundle, World};
/// # #[derive(Debug, PartialEq)] struct Pos(f32);
/// # struct Vel(f32);
/// # struct Hp(u32);
/// #[derive(Bundle)]
/// struct Body { pos: Pos, vel: Vel }
///
/// #[derive(Bundle)]
/// struct Unit { hp: Hp, #[bundle] body: Body }
///
/// # let mut world = World::new();
/// let unit = world.spawn(Unit { hp: Hp(3), body: Body { pos: Pos(0.0), vel: Vel(1.0) } });
/// # assert_eq!(world.entity(unit).unwrap().get::<Pos>(), Some(&Pos(0.0)));
/// ```
///
/// A component type spelled twice among the plain fields is a compile
/// error; one named twice another way (an alias, or inside a nested
/// bundle) is refused when the bundle is used
/// (`EntityError::DuplicateComponent`, naming the type).
#[proc_macro_derive(Bundle, attributes(bundle))]
pub fn derive_bundle(item: TokenStream) -> TokenStream {
    bundle::derive(item.into()).into()
}

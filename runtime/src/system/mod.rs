//! From signatures to node bodies: parameters, functions, and the unsynchronised
//! view of the world's services that running nodes borrow from.

mod append;
mod body;
mod cells;
mod combinator;
mod condition;
mod function;
mod local;
mod non_send;
mod optional;
mod output;
mod param;
mod tracked;

pub use append::{Append, AppendBuffer};
pub use body::{NodeBody, NodeEnv};
pub use cells::ServiceCells;
pub use combinator::{
    AndCondition, AndMarker, ConditionExt, NotCondition, NotMarker, OrCondition, OrMarker,
    PipeCondition, PipeMarker, PipedConditionFn, not,
};
pub(crate) use condition::Condition;
pub use condition::{ConditionBody, ConditionFn, ReadOnlyParam};
pub(crate) use function::{FactoryBody, SystemBody};
pub use function::{FactoryFn, ParamItem, SystemFn};
pub use local::Local;
pub(crate) use local::LocalValue;
pub use non_send::{NonSend, NonSendMut};
pub(crate) use output::BoundaryNodes;
pub use output::{BoundaryHooks, Next, NextValue, Out};
pub use param::{Gate, Param, Service};
pub use tracked::{Tracked, service_added, service_changed, service_exists};

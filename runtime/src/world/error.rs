//! What can go wrong running an iteration.

use std::any::Any;
use std::fmt;

use crate::exec::NodeFailure;
use crate::plan::PlanErrors;

/// A node whose body panicked: the engine's [`NodeFailure`] (index and
/// payload) with the node's name.
pub struct NodePanic {
    node: String,
    failure: NodeFailure,
}

impl NodePanic {
    pub(crate) fn new(node: &str, failure: NodeFailure) -> Self {
        Self {
            node: node.to_owned(),
            failure,
        }
    }

    /// The name of the node that panicked.
    pub fn node(&self) -> &str {
        &self.node
    }

    /// The panic's payload, as `catch_unwind` returned it.
    pub fn payload(&self) -> &(dyn Any + Send) {
        self.failure.payload()
    }

    /// The payload, to resume the panic with `std::panic::resume_unwind`.
    pub fn into_payload(self) -> Box<dyn Any + Send> {
        self.failure.into_payload()
    }

    /// The panic message, when the payload is a string.
    pub fn message(&self) -> Option<&str> {
        self.failure.message()
    }
}

impl fmt::Debug for NodePanic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("NodePanic")
            .field("node", &self.node)
            .field("message", &self.message())
            .finish()
    }
}

impl fmt::Display for NodePanic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.message() {
            Some(message) => write!(f, "node `{}` panicked: {message}", self.node),
            None => write!(f, "node `{}` panicked", self.node),
        }
    }
}

/// A node that touches a service the world does not hold and nothing produces.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MissingService {
    /// The node's name.
    pub node: String,
    /// The service's type name.
    pub service: String,
    /// Whether the node gates the service (`&mut`) rather than reading it.
    pub gated: bool,
}

impl fmt::Display for MissingService {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let verb = if self.gated { "gates" } else { "reads" };
        write!(
            f,
            "node `{}` {verb} `{}`, which the world does not hold and no factory produces: insert it with `World::insert` or register a factory that produces it",
            self.node, self.service
        )
    }
}

/// Why [`World::run_iteration`](crate::World::run_iteration) failed.
#[non_exhaustive]
#[derive(Debug)]
pub enum IterationError {
    /// The registrations do not form a valid plan; nothing ran.
    Plan(PlanErrors),
    /// Nodes touch services the world does not hold and nothing produces;
    /// every such access is listed. Nothing ran.
    MissingServices(Vec<MissingService>),
    /// A node's body panicked. Nothing new started after it; nodes already
    /// running finished. The world is consistent and the next iteration runs
    /// normally.
    NodePanicked(NodePanic),
}

impl fmt::Display for IterationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            IterationError::Plan(errors) => write!(f, "the plan could not be built:\n{errors}"),
            IterationError::MissingServices(missing) => {
                for (index, service) in missing.iter().enumerate() {
                    if index > 0 {
                        writeln!(f)?;
                    }
                    write!(f, "{service}")?;
                }
                Ok(())
            }
            IterationError::NodePanicked(panic) => panic.fmt(f),
        }
    }
}

impl std::error::Error for IterationError {}

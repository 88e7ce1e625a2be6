//! The live inspector on the game (`sluice-game --inspect 127.0.0.1:PORT`):
//! the game's components, messages, scripts and flow registered with a
//! [`sluice_inspect::Inspector`], so the page shows them as text.

use sluice_inspect::{InspectError, Inspector, InspectorOptions};

use crate::combat::{Damage, Died};
use crate::flow::GameFlow;
use crate::scripts::Director;
use crate::units::{Captain, Health, Pos, Slot, Team, Vel, Weapon};

/// Starts an inspector on `address` with the game's types registered.
///
/// # Errors
/// As for [`Inspector::start`]: the address does not resolve, is not a
/// loopback one, or cannot be bound.
pub fn start(address: &str) -> Result<Inspector, InspectError> {
    let mut inspector = Inspector::start(address, InspectorOptions::default())?;
    inspector
        .component::<Pos>()
        .component::<Vel>()
        .component::<Health>()
        .component::<Team>()
        .component::<Slot>()
        .component::<Weapon>()
        .component::<Captain>()
        .messages::<Damage>()
        .messages::<Died>()
        .scripts::<Director>()
        .state::<GameFlow>();
    Ok(inspector)
}

//! What the collections' tests share.

use proptest::prelude::ProptestConfig;

/// The property tests' configuration: 256 cases, 4 under Miri, whose
/// isolation also forbids the file lookups of failure persistence.
pub(crate) fn proptest_config() -> ProptestConfig {
    ProptestConfig {
        cases: if cfg!(miri) { 4 } else { 256 },
        failure_persistence: if cfg!(miri) {
            None
        } else {
            ProptestConfig::default().failure_persistence
        },
        ..ProptestConfig::default()
    }
}

//! The code table: stable, unique, ordered.

use sluice_rules::{Code, Level};

#[test]
fn codes_are_unique_and_sequential() {
    for (i, code) in Code::ALL.iter().enumerate() {
        assert_eq!(code.as_str(), format!("SA{:04}", i + 1));
        assert_eq!(Code::from_str_code(code.as_str()), Some(*code));
        assert!(!code.summary().is_empty());
    }
    assert_eq!(Code::from_str_code("SA9999"), None);
}

#[test]
fn per_function_codes_and_levels() {
    assert!(Code::LockInBody.is_per_function());
    assert!(Code::InvalidNodeShape.is_per_function());
    assert!(!Code::UnparsableFile.is_per_function());
    assert_eq!(Code::MutInRunCondition.level(), Level::Error);
    assert_eq!(Code::MutOnlyRead.level(), Level::Warning);
    assert_eq!(Code::UnknownOrderTarget.level(), Level::Error);
}

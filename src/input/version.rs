//! The one check of a document's `schema_version`: every reader asks it, and words what it
//! finds in its own error.

use serde_json::Value;

/// What is wrong with a document's `schema_version`.
#[derive(Debug, Clone, PartialEq)]
pub enum VersionError {
    /// The field is absent.
    Missing,
    /// It is not a whole number ≥ 0 (the value found).
    NotANumber(Value),
    /// A whole number this build does not read (newer, or older than it still reads).
    Unsupported(u64),
}

/// The version `found` holds where this build reads it: `oldest..=newest`.
pub fn schema_version(
    found: Option<&Value>,
    oldest: u64,
    newest: u64,
) -> Result<u64, VersionError> {
    let v = found.ok_or(VersionError::Missing)?;
    match v.as_u64() {
        Some(n) if (oldest..=newest).contains(&n) => Ok(n),
        Some(n) => Err(VersionError::Unsupported(n)),
        None => Err(VersionError::NotANumber(v.clone())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn each_way_a_version_can_be_wrong_is_told_apart() {
        assert_eq!(schema_version(Some(&json!(1)), 1, 1), Ok(1));
        assert_eq!(schema_version(Some(&json!(2)), 1, 3), Ok(2));
        assert_eq!(schema_version(None, 1, 1), Err(VersionError::Missing));
        assert_eq!(
            schema_version(Some(&json!(2)), 1, 1),
            Err(VersionError::Unsupported(2))
        );
        assert_eq!(
            schema_version(Some(&json!(0)), 1, 1),
            Err(VersionError::Unsupported(0))
        );
        for bad in [json!(-1), json!(1.5), json!("1"), json!(null)] {
            assert_eq!(
                schema_version(Some(&bad), 1, 1),
                Err(VersionError::NotANumber(bad.clone()))
            );
        }
    }
}

//! One `compare` input loaded: a probe profile, or the profile a detection or a report holds,
//! found where its kind says, version-checked and range-checked, each error naming the file.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::probe::{Profile, PROFILE_SCHEMA_VERSION};

/// One loaded input.
#[derive(Debug, Clone)]
pub struct Input {
    pub label: String,
    pub path: PathBuf,
    pub profile: Profile,
    /// Verdict name → holds, when the input carried verdicts.
    pub verdicts: Vec<(String, bool)>,
}

/// Problems with an input file, each naming the file.
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    #[error("'{path}' is not JSON (line {line}, column {column})")]
    Json {
        path: PathBuf,
        line: usize,
        column: usize,
        source: serde_json::Error,
    },
    #[error(
        "'{path}' has schema_version {found}; this tscope reads version {supported}: upgrade tscope \
         for a newer file, or regenerate an older one with `tscope probe --json`"
    )]
    Version {
        path: PathBuf,
        found: u64,
        supported: u32,
    },
    #[error(
        "'{path}' is {what}: compare reads probe profiles (`tscope probe --json`), detections \
         (`detect --json`) and reports (report.json)"
    )]
    WrongKind { path: PathBuf, what: &'static str },
    #[error("'{path}' has no schema_version: is it a file tscope wrote?")]
    NoVersion { path: PathBuf },
    #[error(
        "'{path}' is {what} that holds no profile (no `profile` field): expected `tscope probe \
         --json`, `detect --json` or report.json output"
    )]
    NoProfile { path: PathBuf, what: &'static str },
    #[error("'{path}': {message}")]
    Number { path: PathBuf, message: String },
    #[error("'{path}': the profile does not match schema_version 1")]
    Shape {
        path: PathBuf,
        source: serde_json::Error,
    },
}

impl From<InputError> for crate::error::Error {
    fn from(e: InputError) -> Self {
        crate::error::Error::Other(Box::new(e))
    }
}

fn check_version(path: &Path, found: Option<&Value>) -> Result<(), InputError> {
    use crate::input::VersionError;
    let supported = u64::from(PROFILE_SCHEMA_VERSION);
    match crate::input::schema_version(found, supported, supported) {
        Ok(_) => Ok(()),
        Err(VersionError::NotANumber(x)) => Err(InputError::Number {
            path: path.into(),
            message: format!("schema_version must be a whole number >= 1, got {x}"),
        }),
        Err(VersionError::Missing) => Err(InputError::NoVersion { path: path.into() }),
        Err(VersionError::Unsupported(found)) => Err(InputError::Version {
            path: path.into(),
            found,
            supported: PROFILE_SCHEMA_VERSION,
        }),
    }
}

fn verdicts_of(v: &Value) -> Vec<(String, bool)> {
    v.as_object()
        .map(|m| {
            m.iter()
                .filter_map(|(k, x)| {
                    x.get("holds")
                        .and_then(Value::as_bool)
                        .map(|h| (k.clone(), h))
                })
                .collect()
        })
        .unwrap_or_default()
}

/// A detection or a report: the profile inside, every other field skipped.
#[derive(serde::Deserialize)]
struct Holder {
    profile: Profile,
}

impl Input {
    /// Loads one input file: a regular file of at most [`crate::input::MAX_DOCUMENT`] bytes.
    pub fn load(path: &Path) -> crate::error::Result<Input> {
        let bytes = crate::input::read_document(path, "compare input")?;
        Ok(Input::parse_bytes(&bytes, path)?)
    }

    /// Parses the text of an input; `path` names it in errors.
    pub fn parse(text: &str, path: &Path) -> Result<Input, InputError> {
        Input::parse_bytes(text.as_bytes(), path)
    }

    /// Parses an input from its bytes, in two passes that hold no tree of the document: its
    /// [outline](crate::input::Shape) (versions, where the profile is, the verdicts), then the
    /// profile straight into its type.
    pub fn parse_bytes(bytes: &[u8], path: &Path) -> Result<Input, InputError> {
        let shape = crate::input::Shape::of(bytes).map_err(|e| InputError::Json {
            path: path.into(),
            line: e.line(),
            column: e.column(),
            source: e,
        })?;
        use crate::input::Kind;
        // The kind (its tag, else its fields) decides where the profile is, as for `show`: a
        // probe is one, a detection or a report holds one under `profile`.
        let top = match Kind::of(&shape) {
            Some(Kind::Probe) => true,
            Some(Kind::Detect | Kind::Report) => false,
            None => shape.has("sources"),
            Some(other) => {
                return Err(InputError::WrongKind {
                    path: path.into(),
                    what: other.name(),
                })
            }
        };
        check_version(path, shape.schema_version.as_ref())?;
        // A report holds `profile` and `detect`; a detection holds `profile` and `verdicts`.
        let (profile_shape, verdicts_v, nested) = if top {
            (&shape, None, false)
        } else if let Some(p) = shape.profile.as_deref() {
            let verdicts = shape
                .verdicts
                .as_ref()
                .or_else(|| shape.detect.as_deref().and_then(|d| d.verdicts.as_ref()));
            (p, verdicts, true)
        } else {
            let what = Kind::of(&shape).map_or("a document", Kind::name);
            return Err(InputError::NoProfile {
                path: path.into(),
                what,
            });
        };
        check_version(path, profile_shape.schema_version.as_ref())?;
        let profile = if nested {
            serde_json::from_slice::<Holder>(bytes).map(|h| h.profile)
        } else {
            serde_json::from_slice::<Profile>(bytes)
        }
        .map_err(|e| InputError::Shape {
            path: path.into(),
            source: e,
        })?;
        crate::probe::check::check_profile(&profile).map_err(|message| InputError::Number {
            path: path.into(),
            message,
        })?;
        let label = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        Ok(Input {
            label,
            path: path.into(),
            profile,
            verdicts: verdicts_v.map(verdicts_of).unwrap_or_default(),
        })
    }
}

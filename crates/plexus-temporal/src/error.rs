//! What valid-time writes and reads can refuse or fail at.

use plexus_common::{DecodeError, ErrorKind};
use plexus_storage::StorageError;
use std::fmt;

#[derive(Debug)]
pub enum TemporalError {
    /// The storage underneath failed or refused (a conflict, a full disk).
    Storage(StorageError),
    /// An interval that is empty or reversed (`[from, to)` needs `from < to`).
    EmptyInterval { from: i64, to: i64 },
    /// A write with no valid interval, and no version to take one from.
    NoInterval,
    /// A version id asked for that no version has.
    UnknownVersion(String),
    /// A version id given for a new version that another version has.
    VersionExists(String),
    /// A correction of a version of another kind of entity (a node
    /// version corrected as an edge).
    KindMismatch { version: String },
    /// An id that cannot be used (empty, too long).
    InvalidId { what: &'static str, id: String },
    /// A claim that cannot be stored (an empty name, a confidence
    /// outside `[0, 1]`); the text says which part.
    InvalidClaim(String),
    /// A correction that would change a claim's identity (its statement,
    /// polarity, agent, source or world): assert the new claim instead.
    ClaimIdentity { version: String },
    /// A retraction of an entity never asserted (claims only: their
    /// identities are known from their first assertion).
    UnknownEntity(String),
    /// Stored bytes that do not decode.
    Corrupt(String),
    /// A graph whose valid-time entries are laid out as before the
    /// unversioned part existed, in a store opened read-only: opening it
    /// for writing once converts it (`convert_layout`).
    Unconverted(String),
}

pub type Result<T, E = TemporalError> = std::result::Result<T, E>;

impl TemporalError {
    pub fn kind(&self) -> ErrorKind {
        match self {
            TemporalError::Storage(e) => e.kind(),
            TemporalError::Corrupt(_) => ErrorKind::Corruption,
            _ => ErrorKind::BadInput,
        }
    }
}

impl fmt::Display for TemporalError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TemporalError::Storage(e) => write!(f, "{e}"),
            TemporalError::EmptyInterval { from, to } => write!(
                f,
                "the valid interval [{from}, {to}) is empty: its end must come after its start"
            ),
            TemporalError::NoInterval => {
                f.write_str("a version write needs a valid interval, or a version it supersedes")
            }
            TemporalError::UnknownVersion(v) => write!(f, "no version with id '{v}'"),
            TemporalError::VersionExists(v) => write!(f, "a version with id '{v}' exists already"),
            TemporalError::KindMismatch { version } => {
                write!(f, "version '{version}' is of another kind of entity")
            }
            TemporalError::InvalidId { what, id } => {
                write!(f, "invalid {what} '{id}': ids are 1 to 512 bytes long")
            }
            TemporalError::InvalidClaim(m) => write!(f, "invalid claim: {m}"),
            TemporalError::ClaimIdentity { version } => write!(
                f,
                "a correction of claim version '{version}' changes who claims what \
                 (statement, polarity, agent, source or world): assert a new claim instead"
            ),
            TemporalError::UnknownEntity(id) => {
                write!(
                    f,
                    "no claim '{id}' was ever asserted, so none can be retracted"
                )
            }
            TemporalError::Corrupt(m) => write!(f, "stored valid-time data is damaged: {m}"),
            TemporalError::Unconverted(g) => write!(
                f,
                "graph '{g}' keeps its valid-time versions as an older Plexus wrote them; \
                 open the database for writing once to convert them"
            ),
        }
    }
}

impl std::error::Error for TemporalError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            TemporalError::Storage(e) => Some(e),
            _ => None,
        }
    }
}

impl From<StorageError> for TemporalError {
    fn from(e: StorageError) -> Self {
        TemporalError::Storage(e)
    }
}

impl From<DecodeError> for TemporalError {
    fn from(e: DecodeError) -> Self {
        TemporalError::Corrupt(e.to_string())
    }
}

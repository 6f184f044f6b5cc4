//! What the knowledge layer can refuse or fail at.

use plexus_common::ErrorKind;
use plexus_storage::StorageError;
use plexus_temporal::TemporalError;
use std::fmt;

#[derive(Debug)]
pub enum KnowledgeError {
    /// Reading or writing claims failed (storage underneath included).
    Temporal(TemporalError),
    /// A rule that cannot be kept; the text says what is wrong with it.
    InvalidRule(String),
    /// A modal formula that cannot be evaluated; the text says where.
    InvalidFormula(String),
    /// A bound of a rule run or an evaluation was reached. A rule run
    /// that reaches one writes nothing.
    Limit { what: &'static str, limit: u64 },
    /// A bound given as zero or negative.
    InvalidLimit { what: &'static str },
    /// A version id given for a new rule that another rule version has.
    RuleVersionExists(String),
    /// Truth maintenance asked to resume before any run gave it an instant.
    NoInstant,
}

pub type Result<T, E = KnowledgeError> = std::result::Result<T, E>;

impl KnowledgeError {
    pub fn kind(&self) -> ErrorKind {
        match self {
            KnowledgeError::Temporal(e) => e.kind(),
            KnowledgeError::Limit { .. } => ErrorKind::ResourceLimit,
            _ => ErrorKind::BadInput,
        }
    }
}

impl fmt::Display for KnowledgeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KnowledgeError::Temporal(e) => write!(f, "{e}"),
            KnowledgeError::InvalidRule(m) => write!(f, "invalid rule: {m}"),
            KnowledgeError::InvalidFormula(m) => write!(f, "invalid modal formula: {m}"),
            KnowledgeError::Limit { what, limit } => {
                write!(
                    f,
                    "the evaluation exceeded {what} = {limit}; nothing was written"
                )
            }
            KnowledgeError::InvalidLimit { what } => {
                write!(f, "{what} must be a positive integer")
            }
            KnowledgeError::RuleVersionExists(v) => {
                write!(f, "a rule version with id '{v}' exists already")
            }
            KnowledgeError::NoInstant => {
                f.write_str("truth maintenance needs a valid time: no earlier run or pass gave one")
            }
        }
    }
}

impl std::error::Error for KnowledgeError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            KnowledgeError::Temporal(e) => Some(e),
            _ => None,
        }
    }
}

impl From<TemporalError> for KnowledgeError {
    fn from(e: TemporalError) -> Self {
        KnowledgeError::Temporal(e)
    }
}

impl From<StorageError> for KnowledgeError {
    fn from(e: StorageError) -> Self {
        KnowledgeError::Temporal(TemporalError::Storage(e))
    }
}

impl From<plexus_common::DecodeError> for KnowledgeError {
    fn from(e: plexus_common::DecodeError) -> Self {
        KnowledgeError::Temporal(TemporalError::Corrupt(e.to_string()))
    }
}

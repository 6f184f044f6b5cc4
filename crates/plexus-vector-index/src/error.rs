use plexus_vector::VectorError;
use std::fmt;

/// What a vector index refuses or fails at.
#[derive(Debug)]
pub enum VectorIndexError {
    /// A bad vector (length, a component that is not finite, zero length).
    Vector(VectorError),
    /// A value that is not a list of numbers.
    NotAVector(String),
    /// A bad index option.
    Option { key: String, why: String },
    /// Stored entries that cannot be read.
    Corrupt(String),
    /// A node search of a relationship index, or the other way round.
    WrongEntity {
        index: String,
        /// What the index holds: "nodes" or "relationships".
        holds: &'static str,
    },
    /// The storage under the index failed.
    Storage(plexus_storage::StorageError),
}

impl fmt::Display for VectorIndexError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            VectorIndexError::Vector(e) => write!(f, "{e}"),
            VectorIndexError::NotAVector(t) => {
                write!(f, "a vector is a list of numbers, not a {t}")
            }
            VectorIndexError::Option { key, why } => write!(f, "option `{key}` {why}"),
            VectorIndexError::Corrupt(m) => write!(f, "stored vector index data is damaged: {m}"),
            VectorIndexError::WrongEntity { index, holds } => {
                write!(
                    f,
                    "vector index '{index}' holds {holds}: search it for {holds}"
                )
            }
            VectorIndexError::Storage(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for VectorIndexError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            VectorIndexError::Vector(e) => Some(e),
            VectorIndexError::Storage(e) => Some(e),
            _ => None,
        }
    }
}

impl From<VectorError> for VectorIndexError {
    fn from(e: VectorError) -> Self {
        VectorIndexError::Vector(e)
    }
}

impl From<plexus_storage::StorageError> for VectorIndexError {
    fn from(e: plexus_storage::StorageError) -> Self {
        VectorIndexError::Storage(e)
    }
}

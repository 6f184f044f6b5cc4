use plexus_common::ErrorKind;
use plexus_storage::StorageError;
use std::fmt;

/// Errors of the graph algorithms.
#[derive(Debug)]
pub enum AlgoError {
    Storage(StorageError),
    /// A parameter or the data does not fit the algorithm (a negative
    /// weight, a missing weight, an unknown node).
    BadInput(String),
}

pub type Result<T, E = AlgoError> = std::result::Result<T, E>;

impl AlgoError {
    pub fn kind(&self) -> ErrorKind {
        match self {
            AlgoError::Storage(e) => e.kind(),
            AlgoError::BadInput(_) => ErrorKind::BadInput,
        }
    }
}

impl fmt::Display for AlgoError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AlgoError::Storage(e) => write!(f, "{e}"),
            AlgoError::BadInput(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for AlgoError {}

impl From<StorageError> for AlgoError {
    fn from(e: StorageError) -> Self {
        AlgoError::Storage(e)
    }
}

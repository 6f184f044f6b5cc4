use plexus_common::ErrorKind;
use plexus_storage::StorageError;
use std::fmt;
use std::path::PathBuf;

/// Where in an input file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    pub file: PathBuf,
    /// 1-based line.
    pub line: u64,
    /// 1-based column (field), when known.
    pub column: Option<usize>,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.file.display(), self.line)?;
        if let Some(c) = self.column {
            write!(f, ":{c}")?;
        }
        Ok(())
    }
}

/// Why an import failed. Nothing of a failed import is written.
#[derive(Debug)]
pub enum IngestError {
    /// A file cannot be opened or read.
    Io {
        file: PathBuf,
        error: std::io::Error,
    },
    /// A header, row or value is malformed.
    Bad { at: Location, message: String },
    /// The storage refused the rows (duplicate id, dangling edge, constraint, …).
    Storage(StorageError),
    /// A bug: the thread reading the files failed (its panic message). The
    /// import was stopped and nothing was written.
    Internal(String),
}

impl IngestError {
    pub fn kind(&self) -> ErrorKind {
        match self {
            IngestError::Io { .. } => ErrorKind::Io,
            IngestError::Bad { .. } => ErrorKind::BadInput,
            IngestError::Storage(e) => e.kind(),
            IngestError::Internal(_) => ErrorKind::Internal,
        }
    }

    pub(crate) fn bad(at: Location, message: impl Into<String>) -> IngestError {
        IngestError::Bad {
            at,
            message: message.into(),
        }
    }

    /// As a storage error, to travel through the bulk loader's row iterator.
    pub(crate) fn into_row_error(self) -> StorageError {
        match self {
            IngestError::Storage(e) => e,
            other => StorageError::Invalid(other.to_string()),
        }
    }
}

impl fmt::Display for IngestError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            IngestError::Io { file, error } => write!(f, "{}: {error}", file.display()),
            IngestError::Bad { at, message } => write!(f, "{at}: {message}"),
            IngestError::Storage(e) => write!(f, "{e}"),
            IngestError::Internal(m) => write!(
                f,
                "internal error: the import stopped with nothing written ({m})"
            ),
        }
    }
}

impl std::error::Error for IngestError {}

impl From<StorageError> for IngestError {
    fn from(e: StorageError) -> Self {
        IngestError::Storage(e)
    }
}

use plexus_common::ErrorKind;
use plexus_storage::StorageError;
use std::fmt;
use std::path::PathBuf;

/// Errors of the database facade.
#[derive(Debug)]
pub enum Error {
    Storage(StorageError),
    /// A Cypher query failed: syntax, semantics, types, constraints.
    Query(plexus_query::QueryError),
    /// The path holds something that is not a Plexus database.
    NotADatabase {
        path: PathBuf,
        why: String,
    },
    /// No database at the path (and creation was not asked for).
    Missing(PathBuf),
    /// A database exists at the path already (and creation was asked for).
    Exists(PathBuf),
    /// Another process has the database open.
    /// Another process has the database open for writing (its id, when
    /// the lock file names it).
    Locked(PathBuf, Option<u32>),
    /// A compaction was asked for while another process has the database
    /// open read-only: it would go on reading the old copy.
    ReadersOpen(PathBuf),
    Io {
        path: PathBuf,
        error: std::io::Error,
    },
    /// A query failed earlier in this explicit transaction; it can only be
    /// rolled back.
    TransactionFailed(String),
    /// The transaction was committed or rolled back already.
    TransactionClosed,
    /// A query that writes was run in a read-only transaction
    /// (`Session::begin_read`).
    WriteInReadTransaction,
    /// The operating system refused a thread for a streaming query.
    Thread(std::io::Error),
    /// Arrow refused a result's columns (a bug: their types are inferred
    /// from the values).
    Arrow(arrow_schema::ArrowError),
    /// A vector search refused its input or failed.
    Vector(plexus_vector_index::VectorIndexError),
    /// Valid-time data could not be read or converted.
    Temporal(plexus_temporal::TemporalError),
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    pub fn kind(&self) -> ErrorKind {
        match self {
            Error::Storage(e) => e.kind(),
            Error::Query(e) => e.kind(),
            Error::TransactionFailed(_)
            | Error::TransactionClosed
            | Error::WriteInReadTransaction => ErrorKind::BadInput,
            Error::NotADatabase { .. } | Error::Missing(_) | Error::Exists(_) => {
                ErrorKind::BadInput
            }
            Error::Locked(..) | Error::ReadersOpen(_) | Error::Io { .. } | Error::Thread(_) => {
                ErrorKind::Io
            }
            Error::Arrow(_) => ErrorKind::Internal,
            Error::Temporal(e) => e.kind(),
            Error::Vector(e) => match e {
                plexus_vector_index::VectorIndexError::Storage(s) => s.kind(),
                plexus_vector_index::VectorIndexError::Corrupt(_) => ErrorKind::Corruption,
                _ => ErrorKind::BadInput,
            },
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Storage(e) => write!(f, "{e}"),
            Error::Query(e) => write!(f, "{e}"),
            Error::NotADatabase { path, why } => {
                write!(f, "{} is not a Plexus database: {why}", path.display())
            }
            Error::Missing(p) => write!(
                f,
                "no Plexus database at {} (create one with `plexus init`)",
                p.display()
            ),
            Error::Exists(p) => write!(f, "a Plexus database exists at {} already", p.display()),
            Error::Locked(p, holder) => write!(
                f,
                "the database at {} is open for writing in another process{} \
                 (a second process may open it read-only)",
                p.display(),
                holder
                    .map(|pid| format!(" (pid {pid})"))
                    .unwrap_or_default()
            ),
            Error::ReadersOpen(p) => write!(
                f,
                "the database at {} is open read-only in another process; compaction \
                 would leave that process reading the old copy: close it and compact again",
                p.display()
            ),
            Error::Io { path, error } => write!(f, "{}: {error}", path.display()),
            Error::TransactionFailed(why) => write!(
                f,
                "the transaction can only be rolled back: a query in it failed ({why})"
            ),
            Error::TransactionClosed => f.write_str("the transaction is closed"),
            Error::WriteInReadTransaction => f.write_str(
                "Writing in read access mode not allowed: the transaction was begun read-only; \
                 run writes in a transaction begun for writing",
            ),
            Error::Thread(e) => write!(f, "cannot start a thread for the query: {e}"),
            Error::Arrow(e) => write!(f, "cannot convert the result to Arrow: {e}"),
            Error::Vector(e) => write!(f, "{e}"),
            Error::Temporal(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Storage(e) => Some(e),
            Error::Query(e) => Some(e),
            Error::Io { error, .. } | Error::Thread(error) => Some(error),
            Error::Arrow(e) => Some(e),
            Error::Vector(e) => Some(e),
            Error::Temporal(e) => Some(e),
            _ => None,
        }
    }
}

impl From<StorageError> for Error {
    fn from(e: StorageError) -> Self {
        Error::Storage(e)
    }
}

impl From<plexus_vector_index::VectorIndexError> for Error {
    fn from(e: plexus_vector_index::VectorIndexError) -> Self {
        Error::Vector(e)
    }
}

impl From<plexus_temporal::TemporalError> for Error {
    fn from(e: plexus_temporal::TemporalError) -> Self {
        match e {
            plexus_temporal::TemporalError::Storage(s) => Error::Storage(s),
            other => Error::Temporal(other),
        }
    }
}

impl From<plexus_kv::KvError> for Error {
    fn from(e: plexus_kv::KvError) -> Self {
        Error::Storage(StorageError::Kv(e))
    }
}

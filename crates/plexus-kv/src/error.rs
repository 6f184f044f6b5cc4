use plexus_common::ErrorKind;
use std::fmt;

/// Everything that can go wrong in the key-value layer.
#[derive(Debug)]
pub enum KvError {
    /// The operating system refused: disk full, permissions, missing files.
    Io(std::io::Error),
    /// The backend reported an error of its own.
    Backend {
        backend: &'static str,
        message: String,
    },
    /// A key is longer than the backend accepts.
    KeyTooLong { len: usize, max: usize },
    /// Keys given to `bulk_append` were not strictly ascending.
    NotSorted,
    /// The store is full and could not grow.
    Full(String),
    /// The request cannot be served by this build or backend.
    Unsupported(String),
    /// A keyspace handle that the store was not opened with.
    NoSuchKeyspace(usize),
    /// What fed a write failed (a bug in a thread producing its keys); the
    /// write was stopped and nothing of it landed.
    Aborted(String),
    /// A write to a store opened read-only.
    ReadOnly,
    /// A store opened read-only lacks a keyspace this build keeps (its
    /// name): an older build wrote it, and only a writable open adds it.
    MissingKeyspace(String),
    /// A write refused because an earlier one failed in a way that leaves
    /// unknown what reached the disk (the error it failed with): the store
    /// takes no write until it is opened again (see [`crate::FencedKv`]).
    Fenced(String),
    /// Stored bytes that do not decode, found by a layer that reads through
    /// a snapshot (a damaged block of packed entries): what is wrong.
    Corrupt(String),
    /// The store rolled the write back whole (a serialization failure or a
    /// deadlock between processes): nothing landed; run it again.
    Retry(String),
}

pub type Result<T, E = KvError> = std::result::Result<T, E>;

impl KvError {
    pub fn kind(&self) -> ErrorKind {
        match self {
            KvError::Io(_) => ErrorKind::Io,
            KvError::Backend { .. } => ErrorKind::Io,
            KvError::KeyTooLong { .. } | KvError::Full(_) => ErrorKind::ResourceLimit,
            KvError::NotSorted => ErrorKind::BadInput,
            KvError::Unsupported(_) | KvError::ReadOnly | KvError::MissingKeyspace(_) => {
                ErrorKind::Unsupported
            }
            KvError::NoSuchKeyspace(_) | KvError::Aborted(_) => ErrorKind::Internal,
            KvError::Fenced(_) => ErrorKind::Io,
            KvError::Corrupt(_) => ErrorKind::Corruption,
            KvError::Retry(_) => ErrorKind::Conflict,
        }
    }

    /// Whether a write that failed with this error certainly wrote nothing:
    /// it was refused before anything reached the store (a key too long,
    /// keys out of order, a read-only or fenced store, a stopped feed, a
    /// full map that LMDB aborted). An I/O or backend error may come from
    /// the sync after the data was written — PostgreSQL's "fsyncgate":
    /// what reached the disk is then unknown, and writing the same batch
    /// again could apply it twice.
    pub fn wrote_nothing(&self) -> bool {
        !matches!(self, KvError::Io(_) | KvError::Backend { .. })
    }
}

impl fmt::Display for KvError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KvError::Io(e) => write!(f, "I/O error: {e}"),
            KvError::Backend { backend, message } => write!(f, "{backend}: {message}"),
            KvError::KeyTooLong { len, max } => {
                write!(
                    f,
                    "key of {len} bytes is longer than the backend's limit of {max}"
                )
            }
            KvError::NotSorted => f.write_str("bulk append keys are not in ascending order"),
            KvError::Full(m) => write!(f, "store is full: {m}"),
            KvError::Unsupported(m) => f.write_str(m),
            KvError::NoSuchKeyspace(i) => write!(f, "keyspace #{i} was not opened"),
            KvError::Aborted(why) => write!(f, "the write was stopped, nothing was written: {why}"),
            KvError::ReadOnly => f.write_str("the store is open read-only; nothing was written"),
            KvError::MissingKeyspace(name) => write!(
                f,
                "the store has no keyspace '{name}': an older version of Plexus wrote it; \
                 open it once for writing (which adds the keyspace) before opening it read-only"
            ),
            KvError::Fenced(cause) => write!(
                f,
                "an earlier write failed and what it left on disk is unknown ({cause}); \
                 nothing was written, and the database takes no writes until it is opened again"
            ),
            KvError::Corrupt(what) => write!(f, "damaged data: {what}"),
            KvError::Retry(why) => write!(
                f,
                "the store rolled the write back ({why}); nothing was written, try again"
            ),
        }
    }
}

impl std::error::Error for KvError {}

/// By hand, as `std::io::Error` is not `Clone`: a copy keeps the I/O
/// error's kind and message (every member of a group commit gets the
/// error of the write they shared).
impl Clone for KvError {
    fn clone(&self) -> Self {
        match self {
            KvError::Io(e) => KvError::Io(std::io::Error::new(e.kind(), e.to_string())),
            KvError::Backend { backend, message } => KvError::Backend {
                backend,
                message: message.clone(),
            },
            KvError::KeyTooLong { len, max } => KvError::KeyTooLong {
                len: *len,
                max: *max,
            },
            KvError::NotSorted => KvError::NotSorted,
            KvError::Full(m) => KvError::Full(m.clone()),
            KvError::Unsupported(m) => KvError::Unsupported(m.clone()),
            KvError::MissingKeyspace(name) => KvError::MissingKeyspace(name.clone()),
            KvError::NoSuchKeyspace(i) => KvError::NoSuchKeyspace(*i),
            KvError::Aborted(m) => KvError::Aborted(m.clone()),
            KvError::ReadOnly => KvError::ReadOnly,
            KvError::Fenced(m) => KvError::Fenced(m.clone()),
            KvError::Corrupt(m) => KvError::Corrupt(m.clone()),
            KvError::Retry(m) => KvError::Retry(m.clone()),
        }
    }
}

impl From<std::io::Error> for KvError {
    fn from(e: std::io::Error) -> Self {
        KvError::Io(e)
    }
}

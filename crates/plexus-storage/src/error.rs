use plexus_common::{DecodeError, ErrorKind, ValueType};
use plexus_kv::KvError;
use std::fmt;

/// Everything the graph storage can refuse or fail at.
#[derive(Debug)]
pub enum StorageError {
    /// The key-value layer failed.
    Kv(KvError),
    /// Stored bytes could not be decoded.
    Corrupt(String),
    /// A named graph that does not exist.
    UnknownGraph(String),
    /// A graph with that name exists already.
    GraphExists(String),
    /// A node or edge id that does not exist in this graph.
    NotFound { what: &'static str, id: String },
    /// Creating something whose id is taken.
    AlreadyExists { what: &'static str, id: String },
    /// An edge upsert that would change the edge's endpoints or type.
    EdgeMismatch { id: String, detail: String },
    /// Deleting a node that still has edges without asking to detach them.
    HasEdges { node: String, edges: u64 },
    /// A unique constraint would be violated.
    UniqueViolation {
        index: String,
        value: String,
        existing: String,
    },
    /// A not-null constraint would be violated.
    NotNullViolation {
        constraint: String,
        node: String,
        key: String,
    },
    /// A value of the wrong type for a typed index.
    WrongType {
        index: String,
        node: String,
        expected: ValueType,
        found: ValueType,
    },
    /// An index that does not exist, or none for the asked label and key.
    NoIndex(String),
    /// An index or constraint name that is taken.
    SchemaExists(String),
    /// An index whose maintenance was deferred and that has not been rebuilt.
    IndexStale(String),
    /// A name or id that cannot be used (empty, too long, reserved).
    InvalidName {
        what: &'static str,
        name: String,
        why: &'static str,
    },
    /// Another transaction committed a conflicting change first; retry.
    Conflict(String),
    /// The request is not supported.
    Unsupported(String),
    /// Input that its reader found malformed (a bulk-load row, a file).
    Invalid(String),
    /// A bug: a worker thread failed (its panic message); the operation
    /// was stopped with nothing written.
    Internal(String),
    /// A maintained index (a vector index) refused a node's value.
    Maintained {
        index: String,
        node: String,
        cause: crate::maintain::Cause,
    },
    /// A read as of an instant the graph's history does not reach: history
    /// off (`starts` is `None`), or kept only from `starts` (µs).
    NoHistory {
        graph: String,
        starts: Option<u64>,
        asked: u64,
    },
    /// An error about one row of a bulk load, with where the row came from.
    InRow {
        origin: String,
        error: Box<StorageError>,
    },
}

pub type Result<T, E = StorageError> = std::result::Result<T, E>;

impl StorageError {
    pub fn kind(&self) -> ErrorKind {
        use StorageError::*;
        match self {
            Kv(e) => e.kind(),
            Corrupt(_) => ErrorKind::Corruption,
            Conflict(_) => ErrorKind::Conflict,
            Unsupported(_) => ErrorKind::Unsupported,
            Internal(_) => ErrorKind::Internal,
            InRow { error, .. } => error.kind(),
            Invalid(_) | Maintained { .. } => ErrorKind::BadInput,
            UnknownGraph(_)
            | GraphExists(_)
            | NotFound { .. }
            | AlreadyExists { .. }
            | EdgeMismatch { .. }
            | HasEdges { .. }
            | UniqueViolation { .. }
            | NotNullViolation { .. }
            | WrongType { .. }
            | NoIndex(_)
            | SchemaExists(_)
            | IndexStale(_)
            | InvalidName { .. }
            | NoHistory { .. } => ErrorKind::BadInput,
        }
    }
}

impl fmt::Display for StorageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use StorageError::*;
        match self {
            Kv(e) => write!(f, "{e}"),
            Corrupt(m) => write!(f, "stored data is damaged: {m}"),
            UnknownGraph(g) => write!(f, "no graph named '{g}' (create it first)"),
            GraphExists(g) => write!(f, "a graph named '{g}' exists already"),
            NotFound { what, id } => write!(f, "no {what} with id '{id}'"),
            AlreadyExists { what, id } => write!(f, "{what} id '{id}' is already taken"),
            EdgeMismatch { id, detail } => write!(f, "edge '{id}' exists with {detail}; an edge's endpoints and type cannot change"),
            HasEdges { node, edges } => write!(f, "node '{node}' still has {edges} edge(s); delete them first or detach"),
            UniqueViolation { index, value, existing } => write!(f, "unique constraint '{index}' violated: value {value} is already held by node '{existing}'"),
            NotNullViolation { constraint, node, key } => write!(f, "not-null constraint '{constraint}' violated: node '{node}' has no value for '{key}'"),
            WrongType { index, node, expected, found } => write!(f, "index '{index}' holds {expected} values, but node '{node}' has a {found}"),
            NoIndex(m) => write!(f, "no index {m}"),
            SchemaExists(n) => write!(f, "an index or constraint named '{n}' exists already"),
            IndexStale(n) => write!(f, "index '{n}' is stale (its maintenance was deferred); rebuild it before querying"),
            InvalidName { what, name, why } => write!(f, "invalid {what} '{name}': {why}"),
            Conflict(m) => write!(f, "transaction conflict: {m}; retry the transaction"),
            Unsupported(m) => f.write_str(m),
            Maintained { index, node, cause } if node.is_empty() => write!(f, "index '{index}': {cause}"),
            Maintained { index, node, cause } => write!(f, "index '{index}' refuses the value of node '{node}': {cause}"),
            NoHistory { graph, starts: None, .. } => write!(f, "graph '{graph}' keeps no history; turn it on first (`plexus history on`, Storage::keep_history)"),
            NoHistory { graph, starts: Some(s), asked } => write!(f, "graph '{graph}' keeps history from {} on; {} is earlier", instant(*s), instant(*asked)),
            InRow { origin, error } => write!(f, "{origin}: {error}"),
            Invalid(m) => f.write_str(m),
            Internal(m) => write!(f, "internal error, nothing was written: {m}"),
        }
    }
}

/// A system time (µs since the epoch) as an ISO 8601 instant in UTC.
fn instant(micros: u64) -> String {
    plexus_common::DateTime::from_epoch_micros(micros).to_string()
}

impl std::error::Error for StorageError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            StorageError::Kv(e) => Some(e),
            StorageError::Maintained { cause, .. } => Some(cause.as_ref()),
            StorageError::InRow { error, .. } => Some(error.as_ref()),
            _ => None,
        }
    }
}

impl From<KvError> for StorageError {
    fn from(e: KvError) -> Self {
        StorageError::Kv(e)
    }
}

impl From<DecodeError> for StorageError {
    fn from(e: DecodeError) -> Self {
        StorageError::Corrupt(e.to_string())
    }
}

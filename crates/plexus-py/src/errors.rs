//! Plexus errors as a small Python exception hierarchy, mirroring the Rust
//! error kinds. Every exception is a `plexus.PlexusError`; its `kind`
//! attribute is the Rust `ErrorKind` in words, and the message is the
//! Rust error's (with the query position where there is one).

use plexus::{Error, ErrorKind, QueryError, StorageError};
use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;

create_exception!(plexus, PlexusError, PyException, "Any error of Plexus.");
create_exception!(
    plexus,
    QueryError_,
    PlexusError,
    "A Cypher query is wrong: its syntax, names, types or arguments."
);
create_exception!(
    plexus,
    CypherSyntaxError,
    QueryError_,
    "The query does not parse, or names something that does not exist."
);
create_exception!(
    plexus,
    CypherTypeError,
    QueryError_,
    "A value of the wrong type or out of range while the query ran."
);
create_exception!(
    plexus,
    ConstraintError,
    PlexusError,
    "A write that a constraint refuses (a duplicate id, a node with relationships)."
);
create_exception!(
    plexus,
    ConflictError,
    PlexusError,
    "A concurrent transaction committed a conflicting change first; retrying may succeed."
);
create_exception!(
    plexus,
    ResourceLimitError,
    PlexusError,
    "A limit was reached: a timeout, the memory budget, a cancelled query."
);
create_exception!(
    plexus,
    DatabaseIOError,
    PlexusError,
    "The operating system failed: a file, a lock, a full disk."
);
create_exception!(
    plexus,
    TransactionError,
    PlexusError,
    "The transaction is closed, or failed and can only be rolled back."
);
create_exception!(
    plexus,
    UnsupportedError,
    PlexusError,
    "Valid, but not something Plexus does (yet)."
);
create_exception!(
    plexus,
    CorruptionError,
    PlexusError,
    "Stored data is not what Plexus wrote."
);
create_exception!(
    plexus,
    IngestError,
    PlexusError,
    "An import failed: a malformed file or row (named with its line and column)."
);

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("PlexusError", py.get_type::<PlexusError>())?;
    m.add("QueryError", py.get_type::<QueryError_>())?;
    m.add("CypherSyntaxError", py.get_type::<CypherSyntaxError>())?;
    m.add("CypherTypeError", py.get_type::<CypherTypeError>())?;
    m.add("ConstraintError", py.get_type::<ConstraintError>())?;
    m.add("ConflictError", py.get_type::<ConflictError>())?;
    m.add("ResourceLimitError", py.get_type::<ResourceLimitError>())?;
    m.add("DatabaseIOError", py.get_type::<DatabaseIOError>())?;
    m.add("TransactionError", py.get_type::<TransactionError>())?;
    m.add("UnsupportedError", py.get_type::<UnsupportedError>())?;
    m.add("CorruptionError", py.get_type::<CorruptionError>())?;
    m.add("IngestError", py.get_type::<IngestError>())?;
    Ok(())
}

fn kind_name(k: ErrorKind) -> &'static str {
    match k {
        ErrorKind::BadInput => "bad_input",
        ErrorKind::Conflict => "conflict",
        ErrorKind::Unsupported => "unsupported",
        ErrorKind::Io => "io",
        ErrorKind::Corruption => "corruption",
        ErrorKind::ResourceLimit => "resource_limit",
        ErrorKind::Internal => "internal",
    }
}

/// The exception for an error of a kind, with `kind` set.
fn raise<E: pyo3::PyTypeInfo>(message: String, kind: ErrorKind) -> PyErr {
    let err = PyErr::new::<E, _>(message);
    Python::attach(|py| {
        // Setting an attribute on a fresh exception cannot fail in practice;
        // if it did, the exception is still the right one.
        let _ = err.value(py).setattr("kind", kind_name(kind));
    });
    err
}

/// The exception class of a storage error, by what went wrong.
fn storage(e: &StorageError, message: String) -> PyErr {
    match e {
        StorageError::InRow { error, .. } => storage(error, message),
        StorageError::Conflict(_) => raise::<ConflictError>(message, e.kind()),
        StorageError::UniqueViolation { .. }
        | StorageError::NotNullViolation { .. }
        | StorageError::WrongType { .. }
        | StorageError::HasEdges { .. }
        | StorageError::AlreadyExists { .. } => raise::<ConstraintError>(message, e.kind()),
        _ => by_kind(e.kind(), message),
    }
}

/// Whether a storage error (inside its row) is a constraint or a conflict,
/// which keep their own classes when an import meets them.
fn refused(e: &StorageError) -> bool {
    match e {
        StorageError::InRow { error, .. } => refused(error),
        StorageError::Conflict(_)
        | StorageError::UniqueViolation { .. }
        | StorageError::NotNullViolation { .. }
        | StorageError::WrongType { .. }
        | StorageError::AlreadyExists { .. } => true,
        _ => false,
    }
}

fn by_kind(kind: ErrorKind, message: String) -> PyErr {
    match kind {
        ErrorKind::Conflict => raise::<ConflictError>(message, kind),
        ErrorKind::Unsupported => raise::<UnsupportedError>(message, kind),
        ErrorKind::Io => raise::<DatabaseIOError>(message, kind),
        ErrorKind::Corruption => raise::<CorruptionError>(message, kind),
        ErrorKind::ResourceLimit => raise::<ResourceLimitError>(message, kind),
        ErrorKind::BadInput | ErrorKind::Internal => raise::<PlexusError>(message, kind),
    }
}

fn query(q: &QueryError, message: String) -> PyErr {
    let kind = q.kind();
    match q {
        QueryError::At { error, .. } => query(error, message),
        QueryError::Syntax(_)
        | QueryError::Compile { .. }
        | QueryError::Semantic { .. }
        | QueryError::ParameterMissing { .. } => raise::<CypherSyntaxError>(message, kind),
        QueryError::Type { .. } | QueryError::Argument { .. } | QueryError::Arithmetic(_) => {
            raise::<CypherTypeError>(message, kind)
        }
        QueryError::Constraint { .. } => raise::<ConstraintError>(message, kind),
        QueryError::Storage(cause) => storage(&cause.0, message),
        QueryError::EntityNotFound { .. } | QueryError::Procedure { .. } => {
            raise::<QueryError_>(message, kind)
        }
        _ => by_kind(kind, message),
    }
}

/// A facade error as its Python exception.
pub fn to_py(e: Error) -> PyErr {
    let message = e.to_string();
    match &e {
        Error::Query(q) => query(q, message),
        Error::Storage(s) => storage(s, message),
        Error::TransactionFailed(_) | Error::TransactionClosed | Error::WriteInReadTransaction => {
            raise::<TransactionError>(message, e.kind())
        }
        _ => by_kind(e.kind(), message),
    }
}

/// An import error as its Python exception: storage refusals keep their
/// class (a duplicate id is a `ConstraintError`), malformed input is an
/// `IngestError`.
pub fn ingest(e: plexus::ingest::IngestError) -> PyErr {
    let message = e.to_string();
    match &e {
        plexus::ingest::IngestError::Storage(s) if refused(s) => storage(s, message),
        plexus::ingest::IngestError::Io { .. } => raise::<DatabaseIOError>(message, e.kind()),
        _ => raise::<IngestError>(message, e.kind()),
    }
}

/// An algorithm's error (an unknown graph, a storage failure).
pub fn algo(e: plexus::algo::AlgoError) -> PyErr {
    by_kind(e.kind(), e.to_string())
}

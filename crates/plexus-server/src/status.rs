//! Plexus errors as Neo4j status codes: the code's classification picks the
//! exception a driver raises (`Neo.ClientError.Statement.SyntaxError` →
//! `CypherSyntaxError`) and whether it retries (`Neo.TransientError.*`).

use plexus::{Error, Limit, QueryError, StorageError};

/// A failure to send: a Neo4j status code and a message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    pub code: &'static str,
    pub message: String,
}

impl Failure {
    pub fn new(code: &'static str, message: impl Into<String>) -> Failure {
        Failure {
            code,
            message: message.into(),
        }
    }

    /// The GQLSTATUS Bolt 5.7 adds beside the Neo4j code: the classes
    /// GQL defines for these failures, else the generic `50N42`.
    pub fn gql_status(&self) -> &'static str {
        match self.code {
            SYNTAX => "42001",
            DATABASE_NOT_FOUND => "22000",
            TYPE_ERROR => "22G03",
            CONSTRAINT => "22N41",
            DEADLOCK => "40N01",
            UNAUTHORIZED => "42NFF",
            _ => "50N42",
        }
    }
}

pub const SYNTAX: &str = "Neo.ClientError.Statement.SyntaxError";
pub const SEMANTIC: &str = "Neo.ClientError.Statement.SemanticError";
pub const TYPE_ERROR: &str = "Neo.ClientError.Statement.TypeError";
pub const ARGUMENT: &str = "Neo.ClientError.Statement.ArgumentError";
pub const ARITHMETIC: &str = "Neo.ClientError.Statement.ArithmeticError";
pub const PARAMETER_MISSING: &str = "Neo.ClientError.Statement.ParameterMissing";
pub const UNSUPPORTED: &str = "Neo.ClientError.Statement.UnsupportedOperationError";
pub const ENTITY_NOT_FOUND: &str = "Neo.ClientError.Statement.EntityNotFound";
pub const CONSTRAINT: &str = "Neo.ClientError.Schema.ConstraintValidationFailed";
pub const PROCEDURE_NOT_FOUND: &str = "Neo.ClientError.Procedure.ProcedureNotFound";
pub const PROCEDURE_FAILED: &str = "Neo.ClientError.Procedure.ProcedureCallFailed";
pub const DEADLOCK: &str = "Neo.TransientError.Transaction.DeadlockDetected";
pub const TIMED_OUT: &str = "Neo.ClientError.Transaction.TransactionTimedOutClientConfiguration";
pub const OUT_OF_MEMORY: &str = "Neo.TransientError.General.MemoryPoolOutOfMemoryError";
pub const TERMINATED: &str = "Neo.ClientError.Transaction.Terminated";
pub const TX_FAILED: &str = "Neo.ClientError.Transaction.TransactionMarkedAsFailed";
pub const DATABASE_NOT_FOUND: &str = "Neo.ClientError.Database.DatabaseNotFound";
pub const ACCESS_MODE: &str = "Neo.ClientError.Statement.AccessMode";
pub const UNAUTHORIZED: &str = "Neo.ClientError.Security.Unauthorized";
pub const FORBIDDEN: &str = "Neo.ClientError.Security.Forbidden";
pub const REQUEST_INVALID: &str = "Neo.ClientError.Request.Invalid";
pub const INVALID_STATE: &str = "Neo.ClientError.Request.Invalid";
pub const UNSUPPORTED_ADMIN: &str = "Neo.ClientError.Statement.UnsupportedAdministrationCommand";
pub const DATABASE_ERROR: &str = "Neo.DatabaseError.General.UnknownError";
/// Neo4j's code for a server with no worker free: transient, so retried.
pub const NO_THREADS: &str = "Neo.TransientError.Request.NoThreadsAvailable";
pub const UNAVAILABLE: &str = "Neo.TransientError.General.DatabaseUnavailable";

/// The status of a facade error.
pub fn of(e: &Error) -> Failure {
    let code = match e {
        Error::Query(q) => return of_query(q),
        Error::Storage(s) => of_storage(s),
        Error::TransactionFailed(_) => TX_FAILED,
        Error::TransactionClosed => INVALID_STATE,
        Error::WriteInReadTransaction => ACCESS_MODE,
        Error::Thread(_) => UNAVAILABLE,
        _ => DATABASE_ERROR,
    };
    Failure::new(code, e.to_string())
}

fn of_query(q: &QueryError) -> Failure {
    let code = match q {
        QueryError::At { error, .. } => return of_query(error),
        QueryError::Syntax(_) | QueryError::Compile { .. } => SYNTAX,
        QueryError::Semantic { .. } => SEMANTIC,
        QueryError::Type { .. } => TYPE_ERROR,
        QueryError::Argument { .. } => ARGUMENT,
        QueryError::Arithmetic(_) => ARITHMETIC,
        QueryError::ParameterMissing { .. } => PARAMETER_MISSING,
        QueryError::Unsupported(_) => UNSUPPORTED,
        QueryError::Constraint { .. } => CONSTRAINT,
        QueryError::EntityNotFound { .. } => ENTITY_NOT_FOUND,
        QueryError::Procedure { code, .. } if code.contains("NotFound") => PROCEDURE_NOT_FOUND,
        QueryError::Procedure { .. } => PROCEDURE_FAILED,
        QueryError::Storage(cause) => of_storage(&cause.0),
        QueryError::ResourceLimit(Limit::Timeout(_)) => TIMED_OUT,
        QueryError::ResourceLimit(Limit::Memory(_)) => OUT_OF_MEMORY,
        QueryError::Cancelled => TERMINATED,
    };
    Failure::new(code, q.to_string())
}

fn of_storage(s: &StorageError) -> &'static str {
    match s {
        StorageError::Conflict(_) => DEADLOCK,
        StorageError::UnknownGraph(_) => DATABASE_NOT_FOUND,
        StorageError::UniqueViolation { .. }
        | StorageError::NotNullViolation { .. }
        | StorageError::WrongType { .. }
        | StorageError::HasEdges { .. } => CONSTRAINT,
        StorageError::InRow { error, .. } => of_storage(error),
        StorageError::Unsupported(_) => UNSUPPORTED,
        StorageError::NotFound { .. } => ENTITY_NOT_FOUND,
        StorageError::InvalidName { .. }
        | StorageError::AlreadyExists { .. }
        | StorageError::EdgeMismatch { .. }
        | StorageError::GraphExists(_)
        | StorageError::NoIndex(_)
        | StorageError::SchemaExists(_)
        | StorageError::Invalid(_) => ARGUMENT,
        _ => DATABASE_ERROR,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use plexus::{Database, Params};

    fn failure_of(q: &str) -> Failure {
        let db = Database::in_memory().unwrap();
        let e = db.query("default", q, &Params::new()).unwrap_err();
        of(&e)
    }

    #[test]
    fn query_errors_get_the_codes_drivers_know() {
        assert_eq!(failure_of("RETURN 1 +").code, SYNTAX);
        assert_eq!(failure_of("RETURN x").code, SYNTAX);
        assert_eq!(failure_of("RETURN 1 / 0").code, ARITHMETIC);
        assert_eq!(failure_of("RETURN $nope").code, PARAMETER_MISSING);
        assert_eq!(failure_of("RETURN toUpper(1)").code, TYPE_ERROR);
        assert_eq!(failure_of("CALL no.such.proc()").code, PROCEDURE_NOT_FOUND);
    }

    #[test]
    fn conflicts_are_transient_and_unknown_graphs_are_missing_databases() {
        let conflict = Error::Storage(StorageError::Conflict("x".into()));
        assert_eq!(of(&conflict).code, DEADLOCK);
        assert!(of(&conflict).code.starts_with("Neo.TransientError."));
        let missing = Error::Storage(StorageError::UnknownGraph("g".into()));
        assert_eq!(of(&missing).code, DATABASE_NOT_FOUND);
        assert_eq!(of(&missing).gql_status(), "22000");
    }
}

use crate::limits::Limit;
use plexus_common::ErrorKind;
use plexus_cypher::ParseError;
use plexus_storage::StorageError;
use std::fmt;
use std::sync::Arc;

/// A storage error kept whole inside a [`QueryError`] (its kind and cause
/// survive); shared, since query errors are cloned.
#[derive(Debug, Clone)]
pub struct StorageCause(pub Arc<StorageError>);

impl PartialEq for StorageCause {
    /// Equal when they say the same: storage errors have no equality of
    /// their own (they may hold I/O errors).
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0) || self.0.to_string() == other.0.to_string()
    }
}

/// Why a query failed, in the openCypher error vocabulary.
#[derive(Debug, Clone, PartialEq)]
pub enum QueryError {
    Syntax(Box<ParseError>),
    /// A semantic error found before running: the TCK files these under
    /// SyntaxError with a detail code (UndefinedVariable, …).
    Compile {
        code: &'static str,
        message: String,
    },
    /// A query that is valid Cypher but wrong: unknown variable, misuse.
    Semantic {
        code: &'static str,
        message: String,
    },
    /// A value of the wrong type at run time.
    Type {
        code: &'static str,
        message: String,
    },
    /// A value of the right type but out of range.
    Argument {
        code: &'static str,
        message: String,
    },
    /// Integer overflow or division by zero.
    Arithmetic(String),
    /// A parameter the query names and the run was not given: its name
    /// and, once placed in the text, the line and column of its first use.
    ParameterMissing {
        name: String,
        at: Option<(usize, usize)>,
    },
    Unsupported(String),
    /// A write that a constraint refuses (deleting a connected node,
    /// a duplicate under a unique constraint).
    Constraint {
        code: &'static str,
        message: String,
    },
    /// Reading a deleted entity.
    EntityNotFound {
        code: &'static str,
        message: String,
    },
    /// A CALL of a procedure that does not exist or that failed.
    Procedure {
        code: &'static str,
        message: String,
    },
    /// An error with the byte offset in the query where it was found; the
    /// binder returns it and `Prepared::new`, which has the text, turns the
    /// offset into a line and a column in the message.
    At {
        offset: usize,
        error: Box<QueryError>,
    },
    /// The storage failed or refused for another reason (a conflict with a
    /// concurrent transaction, a corrupt record, an I/O error).
    Storage(StorageCause),
    /// The query reached its timeout or its memory budget.
    ResourceLimit(Limit),
    /// The query was cancelled through its [`crate::CancelHandle`].
    Cancelled,
}

impl QueryError {
    /// The TCK's error type name.
    pub fn type_name(&self) -> &'static str {
        match self {
            QueryError::Syntax(_) | QueryError::Compile { .. } => "SyntaxError",
            QueryError::Semantic { .. } => "SemanticError",
            QueryError::Type { .. } => "TypeError",
            QueryError::Argument { .. } => "ArgumentError",
            QueryError::Arithmetic(_) => "ArithmeticError",
            QueryError::ParameterMissing { .. } => "ParameterMissing",
            QueryError::Unsupported(_) => "Unsupported",
            QueryError::Constraint { .. } => "ConstraintVerificationFailed",
            QueryError::EntityNotFound { .. } => "EntityNotFound",
            QueryError::Storage(_) => "DatabaseError",
            QueryError::ResourceLimit(_) => "ResourceLimit",
            QueryError::Cancelled => "Cancelled",
            QueryError::Procedure { .. } => "ProcedureError",
            QueryError::At { error, .. } => error.type_name(),
        }
    }

    /// The openCypher detail code (`UndefinedVariable`, …), when there is one.
    pub fn detail(&self) -> Option<&'static str> {
        match self {
            QueryError::Syntax(e) => Some(e.code),
            QueryError::Compile { code, .. }
            | QueryError::Semantic { code, .. }
            | QueryError::Type { code, .. }
            | QueryError::Argument { code, .. }
            | QueryError::Constraint { code, .. }
            | QueryError::EntityNotFound { code, .. }
            | QueryError::Procedure { code, .. } => Some(code),
            QueryError::ParameterMissing { .. } => Some("MissingParameter"),
            QueryError::Arithmetic(_)
            | QueryError::Unsupported(_)
            | QueryError::Storage(_)
            | QueryError::Cancelled => None,
            QueryError::ResourceLimit(Limit::Timeout(_)) => Some("Timeout"),
            QueryError::ResourceLimit(Limit::Memory(_)) => Some("MemoryLimit"),
            QueryError::At { error, .. } => error.detail(),
        }
    }

    /// Who is to blame: the storage's own kind for its errors, a resource
    /// limit for timeouts, budgets and cancellation, else the query.
    pub fn kind(&self) -> ErrorKind {
        match self {
            QueryError::Storage(c) => c.0.kind(),
            QueryError::ResourceLimit(_) | QueryError::Cancelled => ErrorKind::ResourceLimit,
            QueryError::Unsupported(_) => ErrorKind::Unsupported,
            QueryError::At { error, .. } => error.kind(),
            _ => ErrorKind::BadInput,
        }
    }

    /// Blames `self` on the byte `offset` of the query's text when it is
    /// about a place in it (not a limit, a cancellation or the storage's)
    /// and no part inside was blamed already: the innermost expression,
    /// pattern or clause that failed names the line and column.
    pub(crate) fn at(self, offset: usize) -> QueryError {
        match self {
            QueryError::Compile { .. }
            | QueryError::Semantic { .. }
            | QueryError::Type { .. }
            | QueryError::Argument { .. }
            | QueryError::Arithmetic(_)
            | QueryError::Procedure { .. }
            | QueryError::ParameterMissing { at: None, .. }
            | QueryError::Unsupported(_) => QueryError::At {
                offset,
                error: Box::new(self),
            },
            other => other,
        }
    }

    /// Replaces a byte offset ([`QueryError::At`]) by the line and column
    /// it falls on in `text`, written into the message of the error inside.
    pub fn located(self, text: &str) -> QueryError {
        let QueryError::At { offset, error } = self else {
            return self;
        };
        // The offset is the parser's, on a character boundary; one that is
        // not (or lies past the end) is blamed on the character it falls in.
        let mut end = offset.min(text.len());
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        let before = text.get(..end).unwrap_or_default();
        let line = before.matches('\n').count() + 1;
        let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
        let mut error = *error;
        match &mut error {
            QueryError::Compile { message, .. }
            | QueryError::Semantic { message, .. }
            | QueryError::Type { message, .. }
            | QueryError::Argument { message, .. }
            | QueryError::Procedure { message, .. }
            | QueryError::Unsupported(message)
            | QueryError::Arithmetic(message) => {
                message.push_str(&format!(" (line {line}, column {column})"));
            }
            QueryError::ParameterMissing { at, .. } => *at = Some((line, column)),
            // The rest are not about a place in the text.
            _ => {}
        }
        error
    }

    /// A missing parameter `name`, not yet placed in the text.
    pub(crate) fn missing(name: &str) -> QueryError {
        QueryError::ParameterMissing {
            name: name.to_string(),
            at: None,
        }
    }

    /// Whether this is a missing parameter, placed or not.
    pub(crate) fn is_parameter_missing(&self) -> bool {
        match self {
            QueryError::ParameterMissing { .. } => true,
            QueryError::At { error, .. } => error.is_parameter_missing(),
            _ => false,
        }
    }

    pub fn type_error(message: impl Into<String>) -> QueryError {
        QueryError::Type {
            code: "InvalidArgumentType",
            message: message.into(),
        }
    }
}

impl fmt::Display for QueryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            QueryError::Syntax(e) => write!(f, "{e}"),
            QueryError::Compile { code, message } => write!(f, "SyntaxError ({code}): {message}"),
            QueryError::Semantic { code, message } => {
                write!(f, "SemanticError ({code}): {message}")
            }
            QueryError::Type { code, message } => write!(f, "TypeError ({code}): {message}"),
            QueryError::Argument { code, message } => {
                write!(f, "ArgumentError ({code}): {message}")
            }
            QueryError::Arithmetic(m) => write!(f, "ArithmeticError: {m}"),
            QueryError::ParameterMissing { name, at } => {
                write!(f, "ParameterMissing: no value for parameter ${name}")?;
                match at {
                    Some((line, column)) => write!(f, " (line {line}, column {column})"),
                    None => Ok(()),
                }
            }
            QueryError::Unsupported(m) => write!(f, "not supported yet: {m}"),
            QueryError::Constraint { code, message } => {
                write!(f, "ConstraintVerificationFailed ({code}): {message}")
            }
            QueryError::EntityNotFound { code, message } => {
                write!(f, "EntityNotFound ({code}): {message}")
            }
            QueryError::Storage(c) => write!(f, "{}", c.0),
            QueryError::ResourceLimit(Limit::Timeout(t)) => write!(
                f,
                "ResourceLimit: the query ran longer than its timeout of {}",
                crate::limits::show_duration(*t)
            ),
            QueryError::ResourceLimit(Limit::Memory(m)) => write!(
                f,
                "ResourceLimit: the query needs more memory than its budget of {}",
                crate::limits::show_bytes(*m)
            ),
            QueryError::Cancelled => write!(f, "the query was cancelled"),
            QueryError::Procedure { code, message } => {
                write!(f, "ProcedureError ({code}): {message}")
            }
            QueryError::At { offset, error } => write!(f, "{error} (at byte {offset})"),
        }
    }
}

impl std::error::Error for QueryError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            QueryError::Storage(c) => Some(&*c.0),
            _ => None,
        }
    }
}

impl From<ParseError> for QueryError {
    fn from(e: ParseError) -> Self {
        QueryError::Syntax(Box::new(e))
    }
}

impl From<StorageError> for QueryError {
    fn from(e: StorageError) -> Self {
        match e {
            StorageError::HasEdges { .. } => QueryError::Constraint {
                code: "DeleteConnectedNode",
                message: format!("{e}; use DETACH DELETE to delete its relationships too"),
            },
            StorageError::UniqueViolation { .. } | StorageError::NotNullViolation { .. } => {
                QueryError::Constraint {
                    code: "ConstraintViolation",
                    message: e.to_string(),
                }
            }
            StorageError::Invalid(m) => QueryError::Type {
                code: "InvalidPropertyType",
                message: m,
            },
            other => QueryError::Storage(StorageCause(Arc::new(other))),
        }
    }
}

impl From<plexus_algo::AlgoError> for QueryError {
    fn from(e: plexus_algo::AlgoError) -> Self {
        match e {
            plexus_algo::AlgoError::Storage(s) => s.into(),
            plexus_algo::AlgoError::BadInput(m) => QueryError::Argument {
                code: "InvalidArgumentValue",
                message: m,
            },
        }
    }
}

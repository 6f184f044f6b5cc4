use plexus_cypher::ParseError;
use std::fmt;

/// Why a query failed, in the openCypher error vocabulary.
#[derive(Debug, Clone, PartialEq)]
pub enum QueryError {
    Syntax(ParseError),
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
    ParameterMissing(String),
    Unsupported(String),
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
            QueryError::ParameterMissing(_) => "ParameterMissing",
            QueryError::Unsupported(_) => "Unsupported",
        }
    }

    /// The openCypher detail code (`UndefinedVariable`, …), when there is one.
    pub fn detail(&self) -> Option<&'static str> {
        match self {
            QueryError::Syntax(e) => Some(e.code),
            QueryError::Compile { code, .. }
            | QueryError::Semantic { code, .. }
            | QueryError::Type { code, .. }
            | QueryError::Argument { code, .. } => Some(code),
            QueryError::ParameterMissing(_) => Some("MissingParameter"),
            QueryError::Arithmetic(_) | QueryError::Unsupported(_) => None,
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
            QueryError::ParameterMissing(p) => {
                write!(f, "ParameterMissing: no value for parameter ${p}")
            }
            QueryError::Unsupported(m) => write!(f, "not supported yet: {m}"),
        }
    }
}

impl std::error::Error for QueryError {}

impl From<ParseError> for QueryError {
    fn from(e: ParseError) -> Self {
        QueryError::Syntax(e)
    }
}

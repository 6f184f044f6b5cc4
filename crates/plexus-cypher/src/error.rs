use std::fmt;

/// A byte range of the query text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Span {
    pub start: usize,
    pub end: usize,
}

impl Span {
    pub fn to(self, other: Span) -> Span {
        Span {
            start: self.start,
            end: other.end.max(self.end),
        }
    }
}

/// A query that does not parse: where, what, and what to do about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    /// The openCypher error detail (`UnexpectedSyntax`, `InvalidRelationshipPattern`, …).
    pub code: &'static str,
    pub message: String,
    pub hint: String,
    pub span: Span,
    /// 1-based line and column (in characters) of the span's start.
    pub line: usize,
    pub column: usize,
}

impl ParseError {
    pub fn new(
        src: &str,
        span: Span,
        code: &'static str,
        message: impl Into<String>,
        hint: impl Into<String>,
    ) -> ParseError {
        let before = &src[..span.start.min(src.len())];
        let line = before.matches('\n').count() + 1;
        let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
        ParseError {
            code,
            message: message.into(),
            hint: hint.into(),
            span,
            line,
            column,
        }
    }

    /// The error kind the openCypher TCK expects for every parse error.
    pub fn kind(&self) -> plexus_common::ErrorKind {
        plexus_common::ErrorKind::BadInput
    }
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "SyntaxError ({}) at line {}, column {}: {}",
            self.code, self.line, self.column, self.message
        )?;
        if !self.hint.is_empty() {
            write!(f, " (hint: {})", self.hint)?;
        }
        Ok(())
    }
}

impl std::error::Error for ParseError {}

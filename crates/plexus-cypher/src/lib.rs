//! Cypher text to a syntax tree with source spans: a `logos` lexer and a
//! hand-written recursive-descent parser with precedence climbing. Bad
//! input is an error with a line, a column, an openCypher error code and a
//! hint — never a panic. This crate knows nothing else of Plexus.
//!
//! ```
//! let q = plexus_cypher::parse("MATCH (a:Person)-[:KNOWS*1..2]->(b) WHERE a.age > 30 RETURN b.name AS name LIMIT 5").unwrap();
//! assert_eq!(q.first.clauses.len(), 2);
//! let e = plexus_cypher::parse("MATCH (a RETURN a").unwrap_err();
//! assert_eq!((e.line, e.column), (1, 10));
//! ```

mod ast;
mod error;
mod lexer;
mod parser;

pub use ast::*;
pub use error::{ParseError, Span};
pub use parser::{parameters, parse, parse_expression, parse_statement, MAX_NESTING};

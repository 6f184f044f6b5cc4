//! Query execution. For now: Cypher expression semantics (three-valued
//! logic, the integer/float distinction, lists, maps, comprehensions,
//! quantifiers, the common functions and aggregations) and a row pipeline
//! for the clauses that need no graph (UNWIND, WITH, RETURN with ORDER BY,
//! SKIP, LIMIT, DISTINCT and aggregation). Clauses that read or write the
//! graph are refused as unsupported until the binder and planner exist.

mod binder;
mod error;
mod eval;
mod exec;
mod graph;
mod mutate;
mod pattern;
mod procedure;

pub use error::QueryError;
pub use exec::{is_write, run_read, run_standalone, run_write, run_write_with, Table};
pub use procedure::{ArgType, ProcedureFn, Procedures, Signature};

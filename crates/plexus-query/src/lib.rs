//! Query execution: the binder's checks, Cypher expression semantics
//! (three-valued logic, the integer/float distinction, lists, maps,
//! comprehensions, quantifiers, functions, aggregation), pattern matching
//! over the storage's adjacency and indexes, and the updating clauses.
//!
//! A query is prepared once ([`Prepared`]: parsed and checked) and run with
//! parameters against a snapshot or a write transaction. Clauses run one
//! after another over materialised rows; a planner with lazily pulled,
//! batched operators is the next step.

mod binder;
mod error;
mod eval;
mod exec;
mod graph;
mod limits;
mod mutate;
mod pattern;
mod plan;
mod procedure;
mod project;
mod schema;
mod temporal;

pub use error::{QueryError, StorageCause};
pub use exec::{run_read, run_standalone, run_write, Prepared, Table};
pub use limits::{CancelHandle, Guard, Limit, QueryLimits};
pub use procedure::{ArgType, ProcedureFn, Procedures, Signature};

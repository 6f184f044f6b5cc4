//! Query execution: the binder's checks, Cypher expression semantics
//! (three-valued logic, the integer/float distinction, lists, maps,
//! comprehensions, quantifiers, functions, aggregation), pattern matching
//! over the storage's adjacency and indexes, and the updating clauses.
//!
//! A query is prepared once ([`Prepared`]: parsed and checked) and run with
//! parameters against a snapshot or a write transaction, under a [`Guard`]
//! that enforces its timeout, memory budget and cancellation. Parts that
//! only read stream row by row through a push pipeline; parts that write
//! run clause after clause over materialised rows. A planner with slot rows
//! and batched operators is the next step.

mod ahead;
mod as_of;
mod binder;
mod builtin;
mod error;
mod eval;
mod exec;
mod functions;
mod graph;
mod knowledge;
mod limits;
mod mutate;
mod pattern;
mod plan;
mod procedure;
mod project;
mod regex;
mod rewrite;
mod row;
mod schema;
mod show;
mod temporal;
mod valid_time;
mod vector;

pub use as_of::instant as instant_micros;
pub use error::{QueryError, StorageCause};
pub use exec::{run_read, run_standalone, run_write, Planned, Prepared, QueryPlan, RowSink, Table};
pub use limits::{CancelHandle, Guard, Limit, QueryLimits};
pub use procedure::{ArgType, ProcedureFn, Procedures, Signature};

/// Runs a step of a recursive phase (binder, evaluator, variable-length
/// matching) with at least 128 KiB of stack, growing it on the heap when
/// less is left: how deep a query or a graph makes these phases recurse
/// never overflows the thread's stack.
pub(crate) fn deep<T>(f: impl FnOnce() -> T) -> T {
    stacker::maybe_grow(128 << 10, 4 << 20, f)
}

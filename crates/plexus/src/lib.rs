//! Plexus: an embedded property-graph database.
//!
//! ```
//! use plexus::{Database, Direction, GraphRead, Props};
//! let dir = tempfile::tempdir().unwrap();
//! let db = Database::create(dir.path().join("db"), Default::default()).unwrap();
//! let mut t = db.write("default").unwrap();
//! let ann = t.create_node(Some("ann"), &["Person"], &Props::new()).unwrap();
//! let bob = t.create_node(Some("bob"), &["Person"], &Props::new()).unwrap();
//! t.create_edge(None, ann, bob, "KNOWS", &Props::new()).unwrap();
//! t.commit().unwrap();
//! let r = db.read("default").unwrap();
//! assert_eq!(r.degree(ann, Direction::Out, None).unwrap(), 1);
//! ```

pub mod arrow;
mod database;
mod error;
mod query;
mod session;
mod workers;

pub use database::{Database, GraphStats, Options, DEFAULT_QUERY_MEMORY, MANIFEST_FILE};
pub use error::{Error, Result};
/// Traversals, shortest paths, sampling and CSR snapshots.
pub use plexus_algo as algo;
pub use plexus_common::{
    Date, DateTime, Duration, ErrorKind, LocalDateTime, LocalTime, NodeValue, PathValue, RelValue,
    Time, Value, ValueType,
};
/// Importing CSV and JSON-lines files.
pub use plexus_ingest as ingest;
/// Claims' four-valued status, Horn rules with truth maintenance and
/// explanations, and modal entailment (GestaltDB's knowledge layer).
pub use plexus_knowledge as knowledge;
pub use plexus_kv::{Backend, Compaction};
pub use plexus_query::{
    instant_micros, CancelHandle, Limit, Procedures, QueryError, QueryLimits, QueryPlan, Table,
};
pub use plexus_storage::{
    BulkEdge, BulkNode, BulkOptions, BulkReport, CommitStats, ConstraintInfo, ConstraintKind,
    ConstraintSpec, Counters, DeleteMode, Direction, Edge, EdgeId, Entity, GraphRead, IndexInfo,
    IndexKind, IndexMode, IndexSpec, IntegrityReport, Isolation, KeyspaceSpace, Neighbor, Node,
    NodeId, Origin, Per, Props, ReadTxn, SpaceReport, SpillLimit, StorageError, TypeId,
    UpgradeReport, WriteTxn, DEFAULT_GRAPH, FORMAT_VERSION,
};
/// Valid-time versions of nodes and edges (bitemporal with the graph's
/// history): assert, correct, retract; read as of an instant.
pub use plexus_temporal as temporal;
/// Vector search in a transaction (`vectors::search`), and the options of
/// a vector index.
pub use plexus_vector_index as vectors;
pub use query::Params;
pub use session::{
    Cursor, Polled, QueryKind, QueryOptions, Session, Started, Summary, Transaction,
};

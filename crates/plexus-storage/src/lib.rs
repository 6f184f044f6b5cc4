//! The property graph on an ordered key-value store: catalog, nodes, edges,
//! packed adjacency in both directions (degrees from it), label members,
//! property and list-element indexes, constraints, counts, named graphs,
//! and optimistic transactions.
//!
//! ```
//! use plexus_storage::{GraphRead, Storage, Direction, Props};
//! let db = Storage::in_memory().unwrap();
//! let mut t = db.write("default").unwrap();
//! let a = t.create_node(Some("ann"), &["Person"], &Props::new()).unwrap();
//! let b = t.create_node(Some("bob"), &["Person"], &Props::new()).unwrap();
//! t.create_edge(None, a, b, "KNOWS", &Props::new()).unwrap();
//! t.commit().unwrap();
//! let r = db.read("default").unwrap();
//! assert_eq!(r.neighbors(a, Direction::Out, Some("KNOWS")).unwrap().len(), 1);
//! assert_eq!(r.label_count("Person").unwrap(), 2);
//! ```

mod adjacency;
mod bulk;
mod catalog;
mod columns;
mod commit;
mod coord;
mod counters;
mod edge_blocks;
mod error;
mod history;
mod ids;
mod integrity;
mod keys;
mod maintain;
mod members;
mod merge;
mod occ;
mod packed;
mod prefix;
mod read;
mod record;
mod schema;
mod schema_cache;
mod space;
mod storage;
mod upgrade;
mod view;
mod write;

pub use bulk::{BulkEdge, BulkNode, BulkOptions, BulkReport, Origin, SpillLimit};
pub use commit::CommitStats;
pub use counters::Counters;
pub use error::{Result, StorageError};
pub use history::PENDING_STAMP;
pub use ids::{Direction, EdgeId, GraphId, NodeId, TypeId};
pub use integrity::IntegrityReport;
pub use maintain::{Cause, EntryWrite, IndexEntries, IndexMaintainer, MaintainedIndex, Staged};
pub use read::{
    stored_equal, Edge, Entity, GraphRead, IdIter, MaintainedView, Neighbor, Node, PairFn, Props,
    ValidPart, ValidVersion, ValidWrite, VALID_KEY_ROOM,
};
pub use schema::{
    ConstraintInfo, ConstraintKind, ConstraintSpec, IndexInfo, IndexKind, IndexMode, IndexSpec,
};
pub use space::{KeyspaceSpace, Per, SpaceReport};
pub use storage::{Isolation, Storage, DEFAULT_GRAPH, FORMAT_VERSION};
pub use upgrade::{convertible, UpgradeReport};
#[doc(hidden)]
pub use view::TxnCore;
pub use write::{DeleteMode, WriteTxn, MAX_ID_LEN};

/// The keyspaces a store must be opened with.
pub const KEYSPACE_NAMES: &[&str] = keys::KEYSPACES;

/// A read-only transaction: a consistent snapshot of one graph. Readers
/// never block writers and are never blocked by them.
pub struct ReadTxn {
    /// Boxed: a transaction's state is most of a kilobyte, and moving it
    /// by value from where it is built to the caller's hands was a sixth
    /// of opening one.
    pub(crate) core: Box<view::TxnCore>,
}

impl ReadTxn {
    /// The system time this transaction reads the graph as of, when it
    /// reads an earlier state (`Storage::read_as_of`).
    pub fn as_of(&self) -> Option<u64> {
        self.core.as_of
    }
}

impl GraphRead for ReadTxn {
    fn core(&self) -> &TxnCore {
        &self.core
    }
}

//! Valid time: versions of nodes and edges that hold over intervals of
//! valid time, written explicitly (assert, correct, retract) and read as
//! of any instant in O(log n), in the same store and transactions as the
//! graph. With the graph's system-time history (`Storage::keep_history`),
//! reads are bitemporal: as of a valid instant, as known at a system time.
//!
//! ```
//! use plexus_storage::Storage;
//! use plexus_temporal::{commit_versions, node_as_of, Interval, NodeState, VersionWrite};
//! let db = Storage::in_memory().unwrap();
//! let ann = |age: i64| NodeState {
//!     labels: vec!["Person".into()],
//!     props: [("age".to_string(), age.into())].into(),
//! };
//! commit_versions(&db, "default", &[
//!     VersionWrite::assert_node("ann", ann(30), Interval::new(0, Some(100)).unwrap()),
//!     VersionWrite::assert_node("ann", ann(31), Interval::from(100)),
//! ]).unwrap();
//! let r = db.read("default").unwrap();
//! let v = node_as_of(&r, "ann", 150).unwrap().unwrap();
//! assert_eq!(v.valid, Interval::from(100));
//! assert!(node_as_of(&r, "ann", -1).unwrap().is_none());
//! ```

mod batch;
mod claim;
mod error;
mod graph;
mod keyspace;
mod props;
mod read;
mod snapshot;
mod time;
mod timeline;
mod version;
mod view;
mod write;

pub use claim::{
    changed_claims, claim_changes_tracked, claim_ids, clear_changed_claims, statement_id,
    track_claim_changes, worlds, ClaimObject, ClaimQuery, ClaimState, Polarity, DEFAULT_WORLD,
};
pub use error::{Result, TemporalError};
pub use graph::{neighbors_as_of, nodes_as_of, shortest_path_as_of, Direction, Step};
pub use keyspace::{convert_layout, needs_converting, refuse_unconverted};
pub use read::{
    as_of, claims_as_of, claims_holding, edge_as_of, holding, latest_within, node_as_of, segments,
    version, versions,
};
pub use snapshot::{Snapshot, Window};
pub use time::Interval;
pub use version::{EdgeState, Kind, NodeState, Op, Props, State, Version};
pub use view::{ValidTimeView, When};
pub use write::{
    commit_versions, rebuild_indexes, write_version, write_versions, VersionWrite, MAX_ID_LEN,
};

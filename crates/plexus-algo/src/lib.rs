//! Traversals, shortest paths and sampling over a read-only graph view.
//!
//! Every algorithm works on a [`GraphView`]: a storage transaction (through
//! [`StoreView`]) or a [`Csr`] snapshot built from one. Algorithms read
//! adjacency only (ids and types), never edge or node records, except where
//! a weight property is asked for. Node ids are internal ids; resolve user
//! ids with `GraphRead::node_id` first.

mod buf;
mod csr;
mod csr_file;
mod error;
mod rng;
mod sample;
mod shortest;
mod traverse;
mod view;

pub use csr::Csr;
pub use error::{AlgoError, Result};
pub use rng::Rng;
pub use sample::{
    layerwise_sample, random_walk, sample_neighbors, sample_paths, Layer, SampleMode, WalkBias,
};
pub use shortest::{all_shortest_paths, shortest_path, weighted_shortest_path};
pub use traverse::{bfs, count_paths, expand_paths, reach, PathSemantics};
pub use view::{Filter, GraphView, Hop, Path, Step, StoreView, TypeFilter};

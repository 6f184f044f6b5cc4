//! `_plexus.TemporalSnapshot`: the relationships of the valid-time graph
//! holding at an instant, or over a window (overlap or contained), as
//! compressed sparse rows with validity arrays, and the leakage-safe
//! samplers of `plexus::temporal::Snapshot`: a causal walk, and hard
//! negatives read from the store (never a positive of any valid time).

use crate::errors;
use crate::snapshot::{NdArray, Owner};
use plexus::temporal::{Snapshot, TemporalError, Window};
use pyo3::exceptions::{PyKeyError, PyValueError};
use pyo3::prelude::*;
use std::sync::Arc;

/// A temporal read's failure as Python sees it.
pub fn error(e: TemporalError) -> PyErr {
    match e {
        TemporalError::Storage(s) => errors::to_py(plexus::Error::Storage(s)),
        TemporalError::Corrupt(what) => {
            errors::to_py(plexus::Error::Storage(plexus::StorageError::Corrupt(what)))
        }
        other => PyValueError::new_err(other.to_string()),
    }
}

/// What valid time a snapshot holds.
pub enum Span {
    At(i64),
    Window { from: i64, to: i64, how: Window },
}

/// A temporal snapshot, with what it needs to read the store again for
/// negatives: the database, the graph and the system time it was read at.
#[pyclass(frozen, module = "plexus._plexus", name = "TemporalSnapshot")]
pub struct TemporalSnapshot {
    snap: Arc<Snapshot>,
    db: plexus::Database,
    graph: String,
    system_time: Option<u64>,
}

/// A read of the graph now, or as of a system time.
pub fn read(
    db: &plexus::Database,
    graph: &str,
    system_time: Option<u64>,
) -> Result<plexus::ReadTxn, plexus::Error> {
    match system_time {
        Some(t) => db.read_as_of(graph, t),
        None => db.read(graph),
    }
}

impl TemporalSnapshot {
    /// Builds the snapshot of `graph` (without the GIL).
    pub fn build(
        py: Python<'_>,
        db: &plexus::Database,
        graph: &str,
        span: Span,
        system_time: Option<u64>,
    ) -> PyResult<TemporalSnapshot> {
        let snap = py.detach(|| -> Result<Snapshot, PyErr> {
            let r = read(db, graph, system_time).map_err(errors::to_py)?;
            match span {
                Span::At(at) => Snapshot::as_of(&r, at),
                Span::Window { from, to, how } => Snapshot::window(&r, from, to, how),
            }
            .map_err(error)
        })?;
        Ok(TemporalSnapshot {
            snap: Arc::new(snap),
            db: db.clone(),
            graph: graph.to_string(),
            system_time,
        })
    }

    fn array<T>(&self, data: &[T], typestr: &'static str) -> NdArray {
        NdArray::held(Owner::Temporal(self.snap.clone()), data, typestr)
    }

    fn index(&self, id: &str) -> PyResult<usize> {
        self.snap
            .index_of(id)
            .ok_or_else(|| PyKeyError::new_err(format!("no node with id {id:?} in the snapshot")))
    }
}

#[pymethods]
impl TemporalSnapshot {
    /// The node ids, sorted; a node's index is its place here.
    fn nodes(&self) -> Vec<String> {
        self.snap.nodes.clone()
    }

    /// The relationship id of each slot.
    fn edges(&self) -> Vec<String> {
        self.snap.edges.clone()
    }

    /// `(offsets, targets, valid_from, valid_to)`: node `i`'s slots are
    /// `offsets[i]:offsets[i + 1]`, each with its target's index and its
    /// validity (microseconds; `valid_to` is 2**63 - 1 where open).
    fn arrays(&self) -> (NdArray, NdArray, NdArray, NdArray) {
        let s = &self.snap;
        let offsets: &[usize] = &s.offsets;
        (
            self.array(offsets, "<u8"),
            self.array(&s.targets, "<u4"),
            self.array(&s.valid_from, "<i8"),
            self.array(&s.valid_to, "<i8"),
        )
    }

    /// A causal random walk of at most `length` steps from node `start`:
    /// each step follows a relationship valid from no earlier than the one
    /// before. Returns the node ids visited (`start` first) and the slots
    /// followed.
    #[pyo3(signature = (start, length, seed=0))]
    fn walk(&self, start: &str, length: usize, seed: u64) -> PyResult<(Vec<String>, Vec<u64>)> {
        let from = self.index(start)?;
        let slots = self.snap.walk(from, length, seed);
        let mut nodes = vec![start.to_string()];
        for &s in &slots {
            let target = self.snap.targets[s] as usize;
            nodes.push(self.snap.nodes[target].clone());
        }
        Ok((nodes, slots.into_iter().map(|s| s as u64).collect()))
    }

    /// Up to `k` node ids of the snapshot, other than `source`, that
    /// `source` has no relationship to at any valid time (read from the
    /// store as of the snapshot's system time): never a positive of the
    /// future.
    #[pyo3(signature = (source, k, seed=0))]
    fn negatives(
        &self,
        py: Python<'_>,
        source: &str,
        k: usize,
        seed: u64,
    ) -> PyResult<Vec<String>> {
        let from = self.index(source)?;
        let picked = py.detach(|| -> PyResult<Vec<usize>> {
            let r = read(&self.db, &self.graph, self.system_time).map_err(errors::to_py)?;
            self.snap.negatives(&r, from, k, seed).map_err(error)
        })?;
        Ok(picked
            .into_iter()
            .map(|i| self.snap.nodes[i].clone())
            .collect())
    }

    #[getter]
    fn num_nodes(&self) -> usize {
        self.snap.nodes.len()
    }

    #[getter]
    fn num_slots(&self) -> usize {
        self.snap.targets.len()
    }
}

//! `_plexus.Snapshot`: a CSR snapshot of one graph with NumPy views of its
//! arrays, id maps, saving and memory-mapped opening, and a seeded sampler
//! for minibatches whose answers are NumPy arrays of dense node indexes.
//!
//! NumPy is reached through its array interface (`__array_interface__`):
//! an [`NdArray`] exposes memory it owns (or that its snapshot owns), and
//! `numpy.asarray` wraps it without a copy, keeping it alive as the base.

use crate::errors;
use crate::graph::{sample_mode, Way};
use plexus::algo::{self, Csr, Filter, GraphView, Rng, WalkBias};
use plexus::{Direction, NodeId};
use pyo3::exceptions::{PyIndexError, PyKeyError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};
use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

/// What keeps an array's memory alive (never read: only held).
#[expect(
    dead_code,
    reason = "each variant only holds the memory an array points into"
)]
pub(crate) enum Owner {
    Snapshot(Arc<Csr>),
    Temporal(Arc<plexus::temporal::Snapshot>),
    I64(Vec<i64>),
    Bool(Vec<bool>),
}

/// One array for NumPy: a pointer, a shape and a type string.
#[pyclass(frozen, module = "plexus._plexus", name = "NdArray")]
pub struct NdArray {
    /// Holds the memory `ptr` points into.
    _owner: Owner,
    ptr: usize,
    shape: Vec<usize>,
    typestr: &'static str,
    readonly: bool,
}

impl NdArray {
    fn view<T>(csr: &Arc<Csr>, data: &[T], typestr: &'static str) -> NdArray {
        NdArray::held(Owner::Snapshot(csr.clone()), data, typestr)
    }

    /// A read-only view of `data`, which `owner` keeps alive.
    pub(crate) fn held<T>(owner: Owner, data: &[T], typestr: &'static str) -> NdArray {
        NdArray {
            ptr: data.as_ptr() as usize,
            shape: vec![data.len()],
            _owner: owner,
            typestr,
            readonly: true,
        }
    }

    fn i64s(v: Vec<i64>, shape: Vec<usize>) -> NdArray {
        NdArray {
            ptr: v.as_ptr() as usize,
            shape,
            _owner: Owner::I64(v),
            typestr: "<i8",
            readonly: false,
        }
    }

    fn bools(v: Vec<bool>) -> NdArray {
        NdArray {
            ptr: v.as_ptr() as usize,
            shape: vec![v.len()],
            _owner: Owner::Bool(v),
            typestr: "|b1",
            readonly: false,
        }
    }
}

#[pymethods]
impl NdArray {
    #[getter]
    fn __array_interface__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        d.set_item("version", 3)?;
        d.set_item("shape", pyo3::types::PyTuple::new(py, &self.shape)?)?;
        d.set_item("typestr", self.typestr)?;
        // An empty Vec's pointer is dangling but non-null, which NumPy accepts
        // for a zero-size array; it never reads it.
        d.set_item("data", (self.ptr, self.readonly))?;
        Ok(d)
    }
}

/// Dense indexes from the little-endian int64 bytes the Python side sends.
fn indexes(bytes: &[u8], n: usize) -> PyResult<Vec<usize>> {
    bytes
        .chunks_exact(8)
        .map(|c| {
            let mut b = [0u8; 8];
            b.copy_from_slice(c);
            let i = i64::from_le_bytes(b);
            usize::try_from(i)
                .ok()
                .filter(|i| *i < n)
                .ok_or_else(|| PyIndexError::new_err(format!("node index {i} is not in 0..{n}")))
        })
        .collect()
}

fn err(e: algo::AlgoError) -> PyErr {
    errors::algo(e)
}

/// A CSR snapshot (see the module documentation).
#[pyclass(frozen, module = "plexus._plexus", name = "Snapshot")]
pub struct Snapshot {
    csr: Arc<Csr>,
    /// User id → dense index, built on first use.
    by_key: OnceLock<HashMap<String, usize>>,
}

impl Snapshot {
    pub fn new(csr: Csr) -> Snapshot {
        Snapshot {
            csr: Arc::new(csr),
            by_key: OnceLock::new(),
        }
    }

    fn node(&self, i: usize) -> NodeId {
        // Indexes are checked against node_count by `indexes`.
        self.csr.node_at(i).unwrap_or(NodeId(u64::MAX))
    }

    fn dense(&self, n: NodeId) -> i64 {
        self.csr.index_of(n).map_or(-1, |i| i as i64)
    }

    fn filter(&self, way: &Way) -> Filter {
        way.filter_of(&*self.csr)
    }

    fn neighbours(&self, i: usize, f: &Filter, out: &mut Vec<algo::Step>) -> PyResult<()> {
        out.clear();
        self.csr.steps(self.node(i), f, out).map_err(err)
    }
}

#[pymethods]
impl Snapshot {
    #[staticmethod]
    fn open(py: Python<'_>, path: PathBuf) -> PyResult<Snapshot> {
        let csr = py.detach(|| Csr::open(&path)).map_err(err)?;
        Ok(Snapshot::new(csr))
    }

    fn save(&self, py: Python<'_>, path: PathBuf) -> PyResult<()> {
        py.detach(|| self.csr.save(&path)).map_err(err)
    }

    #[getter]
    fn num_nodes(&self) -> usize {
        self.csr.node_count()
    }

    #[getter]
    fn num_edges(&self) -> usize {
        self.csr.edge_count()
    }

    #[getter]
    fn version(&self) -> u64 {
        self.csr.version()
    }

    #[getter]
    fn graph(&self) -> String {
        self.csr.graph().to_string()
    }

    /// Relationship type name → the id `edge_types` holds.
    #[getter]
    fn types(&self) -> HashMap<String, u32> {
        self.csr
            .types()
            .iter()
            .map(|(k, t)| (k.clone(), t.0))
            .collect()
    }

    /// `(indptr, indices, edge_ids, edge_types)` of one direction, as
    /// zero-copy read-only arrays.
    fn arrays(&self, direction: &str) -> PyResult<(NdArray, NdArray, NdArray, NdArray)> {
        let dir = match direction {
            "out" => Direction::Out,
            "in" => Direction::In,
            other => {
                return Err(PyValueError::new_err(format!(
                    "a snapshot stores 'out' and 'in' arrays, not {other:?}"
                )))
            }
        };
        let (off, target, edge, rel) = self.csr.arrays(dir);
        Ok((
            NdArray::view(&self.csr, off, "<u8"),
            NdArray::view(&self.csr, target, "<u4"),
            NdArray::view(&self.csr, edge, "<u8"),
            NdArray::view(&self.csr, rel, "<u4"),
        ))
    }

    /// The user id of each node, by dense index.
    fn ids(&self) -> PyResult<Vec<String>> {
        (0..self.csr.node_count())
            .map(|i| {
                self.csr.key(i).map(str::to_string).ok_or_else(|| {
                    PyValueError::new_err("this snapshot was built without user ids")
                })
            })
            .collect()
    }

    /// Dense indexes of user ids (a KeyError names one that is missing).
    fn index(&self, py: Python<'_>, ids: Vec<String>) -> PyResult<NdArray> {
        let map = self.by_key.get_or_init(|| {
            py.detach(|| {
                (0..self.csr.node_count())
                    .filter_map(|i| Some((self.csr.key(i)?.to_string(), i)))
                    .collect()
            })
        });
        let out = ids
            .iter()
            .map(|k| {
                map.get(k)
                    .map(|i| *i as i64)
                    .ok_or_else(|| PyKeyError::new_err(format!("no node with id {k:?}")))
            })
            .collect::<PyResult<Vec<i64>>>()?;
        let n = out.len();
        Ok(NdArray::i64s(out, vec![n]))
    }

    /// Up to `k` sampled neighbours of each node: `(indptr, neighbours)`.
    #[pyo3(signature = (nodes, k, direction="out", types=None, mode="uniform", seed=0))]
    #[expect(clippy::too_many_arguments, reason = "Python keyword arguments")]
    fn sample_neighbors(
        &self,
        py: Python<'_>,
        nodes: &Bound<'_, PyBytes>,
        k: usize,
        direction: &str,
        types: Option<Vec<String>>,
        mode: &str,
        seed: u64,
    ) -> PyResult<(NdArray, NdArray)> {
        let nodes = indexes(nodes.as_bytes(), self.csr.node_count())?;
        let (f, mode) = (
            self.filter(&Way::new(direction, types)?),
            sample_mode(mode)?,
        );
        let (off, picked) = py.detach(|| -> PyResult<_> {
            let mut rng = Rng::new(seed);
            let (mut off, mut picked) = (vec![0i64], Vec::new());
            for i in nodes {
                let steps =
                    algo::sample_neighbors(&*self.csr, self.node(i), &f, k, &mode, &mut rng)
                        .map_err(err)?;
                picked.extend(steps.iter().map(|s| self.dense(s.node)));
                off.push(picked.len() as i64);
            }
            Ok((off, picked))
        })?;
        let (a, b) = (off.len(), picked.len());
        Ok((NdArray::i64s(off, vec![a]), NdArray::i64s(picked, vec![b])))
    }

    /// One walk of `length` steps from each start: shape `(starts, length
    /// + 1)`, `-1` after a walk that could not go on.
    #[pyo3(signature = (starts, length, direction="out", types=None, p=1.0, q=1.0, seed=0))]
    #[expect(clippy::too_many_arguments, reason = "Python keyword arguments")]
    fn random_walks(
        &self,
        py: Python<'_>,
        starts: &Bound<'_, PyBytes>,
        length: usize,
        direction: &str,
        types: Option<Vec<String>>,
        p: f64,
        q: f64,
        seed: u64,
    ) -> PyResult<NdArray> {
        let starts = indexes(starts.as_bytes(), self.csr.node_count())?;
        let f = self.filter(&Way::new(direction, types)?);
        let width = length
            .checked_add(1)
            .ok_or_else(|| PyValueError::new_err("length is too large"))?;
        let rows = starts.len();
        let cells = rows
            .checked_mul(width)
            .filter(|c| *c <= 1 << 32)
            .ok_or_else(|| PyValueError::new_err("too many walk steps for one call"))?;
        let out = py.detach(|| -> PyResult<_> {
            let mut rng = Rng::new(seed);
            let mut out = vec![-1i64; cells];
            for (r, i) in starts.into_iter().enumerate() {
                let walk = algo::random_walk(
                    &*self.csr,
                    self.node(i),
                    length,
                    &f,
                    WalkBias { p, q },
                    &mut rng,
                )
                .map_err(err)?;
                for (c, n) in walk.into_iter().enumerate() {
                    out[r * width + c] = self.dense(n);
                }
            }
            Ok(out)
        })?;
        Ok(NdArray::i64s(out, vec![rows, width]))
    }

    /// GraphSAGE layers: for each, `(nodes, src, dst)` arrays of the nodes
    /// new in the layer and the sampled edges that reached them.
    #[pyo3(signature = (seeds, fanouts, direction="out", types=None, seed=0))]
    fn sample_layers(
        &self,
        py: Python<'_>,
        seeds: &Bound<'_, PyBytes>,
        fanouts: Vec<usize>,
        direction: &str,
        types: Option<Vec<String>>,
        seed: u64,
    ) -> PyResult<Vec<(NdArray, NdArray, NdArray)>> {
        let seeds = indexes(seeds.as_bytes(), self.csr.node_count())?;
        let f = self.filter(&Way::new(direction, types)?);
        let layers = py.detach(|| {
            let ids: Vec<NodeId> = seeds.iter().map(|i| self.node(*i)).collect();
            algo::layerwise_sample(&*self.csr, &ids, &fanouts, &f, &mut Rng::new(seed))
        });
        layers
            .map_err(err)?
            .into_iter()
            .map(|l| {
                let nodes: Vec<i64> = l.nodes.iter().map(|n| self.dense(*n)).collect();
                let src: Vec<i64> = l.edges.iter().map(|e| self.dense(e.0)).collect();
                let dst: Vec<i64> = l.edges.iter().map(|e| self.dense(e.1)).collect();
                let (a, b) = (nodes.len(), src.len());
                Ok((
                    NdArray::i64s(nodes, vec![a]),
                    NdArray::i64s(src, vec![b]),
                    NdArray::i64s(dst, vec![b]),
                ))
            })
            .collect()
    }

    /// Whether each `(src[i], dst[i])` pair is joined that way (positive checks).
    #[pyo3(signature = (src, dst, direction="out", types=None))]
    fn has_edges(
        &self,
        py: Python<'_>,
        src: &Bound<'_, PyBytes>,
        dst: &Bound<'_, PyBytes>,
        direction: &str,
        types: Option<Vec<String>>,
    ) -> PyResult<NdArray> {
        let n = self.csr.node_count();
        let (src, dst) = (indexes(src.as_bytes(), n)?, indexes(dst.as_bytes(), n)?);
        if src.len() != dst.len() {
            return Err(PyValueError::new_err(
                "src and dst must be as long as each other",
            ));
        }
        let f = self.filter(&Way::new(direction, types)?);
        let out = py.detach(|| -> PyResult<_> {
            let mut steps = Vec::new();
            let mut out = Vec::with_capacity(src.len());
            for (a, b) in src.into_iter().zip(dst) {
                self.neighbours(a, &f, &mut steps)?;
                let target = self.node(b);
                out.push(steps.iter().any(|s| s.node == target));
            }
            Ok(out)
        })?;
        Ok(NdArray::bools(out))
    }

    /// The edges among `nodes` (the induced subgraph): `(src, dst)` arrays.
    #[pyo3(signature = (nodes, types=None))]
    fn subgraph(
        &self,
        py: Python<'_>,
        nodes: &Bound<'_, PyBytes>,
        types: Option<Vec<String>>,
    ) -> PyResult<(NdArray, NdArray)> {
        let nodes = indexes(nodes.as_bytes(), self.csr.node_count())?;
        let f = self.filter(&Way::new("out", types)?);
        let (src, dst) = py.detach(|| -> PyResult<_> {
            let members: HashSet<usize> = nodes.iter().copied().collect();
            let (mut src, mut dst) = (Vec::new(), Vec::new());
            let mut steps = Vec::new();
            for &a in &nodes {
                self.neighbours(a, &f, &mut steps)?;
                for s in &steps {
                    let b = self.dense(s.node);
                    if members.contains(&(b as usize)) {
                        src.push(a as i64);
                        dst.push(b);
                    }
                }
            }
            Ok((src, dst))
        })?;
        let n = src.len();
        Ok((NdArray::i64s(src, vec![n]), NdArray::i64s(dst, vec![n])))
    }

    /// `k` negatives per node, shape `(nodes, k)`: nodes it is not joined
    /// to. Hard negatives come from its two-hop neighbourhood (near, yet no
    /// edge); the rest, or all when `hard` is false, uniformly from the
    /// graph. `-1` where the graph has too few.
    #[pyo3(signature = (nodes, k, direction="out", types=None, hard=true, seed=0))]
    #[expect(clippy::too_many_arguments, reason = "Python keyword arguments")]
    fn negatives(
        &self,
        py: Python<'_>,
        nodes: &Bound<'_, PyBytes>,
        k: usize,
        direction: &str,
        types: Option<Vec<String>>,
        hard: bool,
        seed: u64,
    ) -> PyResult<NdArray> {
        let n = self.csr.node_count();
        let nodes = indexes(nodes.as_bytes(), n)?;
        let f = self.filter(&Way::new(direction, types)?);
        let cells = nodes
            .len()
            .checked_mul(k)
            .filter(|c| *c <= 1 << 32)
            .ok_or_else(|| PyValueError::new_err("too many negatives for one call"))?;
        let out = py.detach(|| -> PyResult<_> {
            let mut rng = Rng::new(seed);
            let mut out = vec![-1i64; cells];
            let mut steps = Vec::new();
            for (r, &a) in nodes.iter().enumerate() {
                let picked = self.negatives_of(a, k, &f, hard, &mut rng, &mut steps)?;
                for (c, b) in picked.into_iter().enumerate() {
                    out[r * k + c] = b as i64;
                }
            }
            Ok(out)
        })?;
        Ok(NdArray::i64s(out, vec![nodes.len(), k]))
    }
}

impl Snapshot {
    fn negatives_of(
        &self,
        a: usize,
        k: usize,
        f: &Filter,
        hard: bool,
        rng: &mut Rng,
        steps: &mut Vec<algo::Step>,
    ) -> PyResult<Vec<usize>> {
        let n = self.csr.node_count();
        self.neighbours(a, f, steps)?;
        let mut near: HashSet<usize> = steps.iter().map(|s| self.dense(s.node) as usize).collect();
        near.insert(a);
        let mut picked: Vec<usize> = Vec::with_capacity(k);
        let mut taken: HashSet<usize> = HashSet::new();
        if hard {
            let first: Vec<usize> = near.iter().copied().filter(|x| *x != a).collect();
            let mut two_hop: Vec<usize> = Vec::new();
            for b in first {
                self.neighbours(b, f, steps)?;
                two_hop.extend(
                    steps
                        .iter()
                        .map(|s| self.dense(s.node) as usize)
                        .filter(|c| !near.contains(c)),
                );
            }
            two_hop.sort_unstable();
            two_hop.dedup();
            while picked.len() < k && !two_hop.is_empty() {
                let c = two_hop.swap_remove(rng.below(two_hop.len()));
                taken.insert(c);
                picked.push(c);
            }
        }
        // Uniform draws among the rest: bounded tries, so a dense
        // neighbourhood cannot loop for ever.
        let mut tries = 0usize;
        while picked.len() < k && tries < 64 * k.max(1) {
            tries += 1;
            let c = rng.below(n);
            if !near.contains(&c) && taken.insert(c) {
                picked.push(c);
            }
        }
        Ok(picked)
    }
}

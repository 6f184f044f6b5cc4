//! `_plexus.Database`, `_plexus.Cursor` and `_plexus.Transaction`: the
//! facade's database, session cursors and explicit transactions. The GIL
//! is released whenever Plexus works; Python objects are made only after.

use crate::arrow::{read_stream, ArrowStream};
use crate::convert::{params, to_py};
use crate::errors;
use crate::graph::{path_semantics, sample_mode, Fail, Snapshot, Way};
use plexus::algo::WalkBias;
use plexus::ingest::{BatchInput, ImportOptions, ImportReport, Input};
use plexus::{Options, QueryOptions};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};
use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// Rows pulled from the engine per round trip out of Python.
const FETCH_ROWS: usize = 1024;

/// How long a wait for the engine lasts before Python's signals (Ctrl-C)
/// are checked.
const TICK: Duration = Duration::from_millis(50);

fn lock<T>(m: &Mutex<T>) -> PyResult<MutexGuard<'_, T>> {
    m.lock()
        .map_err(|_| PyRuntimeError::new_err("an earlier call panicked while holding this object"))
}

fn seconds(t: Option<f64>, what: &str) -> PyResult<Option<Duration>> {
    t.map(|s| {
        Duration::try_from_secs_f64(s).map_err(|_| {
            PyValueError::new_err(format!("{what} must be a non-negative number of seconds"))
        })
    })
    .transpose()
}

/// A query's parameters and options from its Python arguments.
fn run_args(
    parameters: Option<Bound<'_, PyAny>>,
    timeout: Option<f64>,
) -> PyResult<(plexus::Params, QueryOptions)> {
    let opts = QueryOptions {
        timeout: seconds(timeout, "timeout")?,
        ..QueryOptions::default()
    };
    Ok((params(parameters.as_ref())?, opts))
}

/// A Plexus database: a folder on disk, or in memory.
#[pyclass(frozen, module = "plexus._plexus", name = "Database")]
pub struct Database {
    pub db: plexus::Database,
}

#[pymethods]
impl Database {
    /// Opens the database at `path` (created when missing and `create`);
    /// `path=None` is a new database in memory. `read_only` opens an
    /// existing database beside a process that may be writing it.
    #[new]
    #[pyo3(signature = (path=None, create=true, timeout=None, memory_limit=None, durable=true, read_only=false))]
    fn new(
        py: Python<'_>,
        path: Option<PathBuf>,
        create: bool,
        timeout: Option<f64>,
        memory_limit: Option<usize>,
        durable: bool,
        read_only: bool,
    ) -> PyResult<Database> {
        let mut opts = Options {
            query_timeout: seconds(timeout, "timeout")?,
            durable,
            read_only,
            ..Options::default()
        };
        if memory_limit.is_some() {
            opts.query_memory_limit = memory_limit;
        }
        let db = py
            .detach(|| match path {
                None => plexus::Database::in_memory_with(opts),
                Some(p) if create => plexus::Database::open_or_create(p, opts),
                Some(p) => plexus::Database::open(p, opts),
            })
            .map_err(errors::to_py)?;
        Ok(Database { db })
    }

    #[getter]
    fn path(&self) -> Option<PathBuf> {
        self.db.path().map(PathBuf::from)
    }

    fn graphs(&self) -> Vec<String> {
        self.db.graphs()
    }

    /// Totals of the commit pipeline since the database was opened.
    fn commit_stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let s = self.db.commit_stats();
        let d = PyDict::new(py);
        d.set_item("commits", s.commits)?;
        d.set_item("conflicts", s.conflicts)?;
        d.set_item("groups", s.groups)?;
        d.set_item("mean_group", s.mean_group())?;
        d.set_item("largest_group", s.largest_group)?;
        d.set_item("write_seconds", s.write_micros as f64 / 1e6)?;
        d.set_item("locked_seconds", s.locked_micros as f64 / 1e6)?;
        d.set_item("waiting", s.waiting)?;
        Ok(d)
    }

    fn create_graph(&self, py: Python<'_>, name: &str) -> PyResult<()> {
        py.detach(|| self.db.create_graph(name))
            .map_err(errors::to_py)
    }

    fn drop_graph(&self, py: Python<'_>, name: &str) -> PyResult<()> {
        py.detach(|| self.db.drop_graph(name))
            .map_err(errors::to_py)
    }

    /// Keeps every later change of `graph` as a version, so that queries
    /// can read it as it was (`MATCH … FOR SYSTEM_TIME AS OF t`). Returns
    /// the instant history starts, in microseconds since 1970.
    fn keep_history(&self, py: Python<'_>, graph: &str) -> PyResult<u64> {
        py.detach(|| self.db.keep_history(graph))
            .map_err(errors::to_py)
    }

    /// Rewrites the database compactly and gives back the space deletes
    /// freed, while queries and writes go on. Refused while another
    /// process has the database open read-only. Returns the bytes on disk
    /// before and after, the batches written meanwhile and replayed into
    /// the copy, and the seconds writes waited.
    fn compact<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let c = py.detach(|| self.db.compact()).map_err(errors::to_py)?;
        let d = PyDict::new(py);
        d.set_item("bytes_before", c.bytes_before)?;
        d.set_item("bytes_after", c.bytes_after)?;
        d.set_item("batches_replayed", c.batches_replayed)?;
        d.set_item("writes_held", c.writes_held.as_secs_f64())?;
        Ok(d)
    }

    /// Stops keeping the history of `graph` and deletes it.
    fn drop_history(&self, py: Python<'_>, graph: &str) -> PyResult<()> {
        py.detach(|| self.db.drop_history(graph))
            .map_err(errors::to_py)
    }

    /// The instant (µs since 1970) `graph`'s history starts, or None.
    fn history_start(&self, graph: &str) -> PyResult<Option<u64>> {
        self.db.history_start(graph).map_err(errors::to_py)
    }

    /// The system time (µs since 1970) of the latest commit that kept
    /// history: a query as of it reads the present.
    fn system_time(&self) -> PyResult<u64> {
        self.db.system_time().map_err(errors::to_py)
    }

    /// Removes the versions of `graph` no read as of `before` (µs) or
    /// later needs; returns how many.
    fn prune_history(&self, py: Python<'_>, graph: &str, before: u64) -> PyResult<u64> {
        py.detach(|| self.db.prune_history(graph, before))
            .map_err(errors::to_py)
    }

    /// Keeps `graph`'s history for `ttl` seconds only (None: for ever);
    /// later commits prune the rest in the background.
    #[pyo3(signature = (graph, ttl=None))]
    fn set_history_retention(&self, py: Python<'_>, graph: &str, ttl: Option<f64>) -> PyResult<()> {
        let ttl = match ttl {
            Some(s) if s.is_finite() && s > 0.0 => Some(std::time::Duration::from_secs_f64(
                s.min(u64::MAX as f64 / 1e6),
            )),
            Some(s) => {
                return Err(PyValueError::new_err(format!(
                    "ttl: {s} is not a positive number of seconds"
                )))
            }
            None => None,
        };
        py.detach(|| self.db.set_history_retention(graph, ttl))
            .map_err(errors::to_py)
    }

    /// How long `graph` keeps its history (seconds), when a policy says.
    fn history_retention(&self, py: Python<'_>, graph: &str) -> PyResult<Option<f64>> {
        py.detach(|| self.db.history_retention(graph))
            .map(|d| d.map(|d| d.as_secs_f64()))
            .map_err(errors::to_py)
    }

    /// Prunes now every graph whose history has a retention policy:
    /// `[(graph, versions removed)]`.
    fn enforce_history_retention(&self, py: Python<'_>) -> PyResult<Vec<(String, u64)>> {
        py.detach(|| self.db.enforce_history_retention())
            .map_err(errors::to_py)
    }

    /// A property index on `key`, of nodes with `label` or (None) of every
    /// node; filled from the nodes there are.
    #[pyo3(signature = (graph, key, label=None))]
    fn create_index(
        &self,
        py: Python<'_>,
        graph: &str,
        key: &str,
        label: Option<String>,
    ) -> PyResult<()> {
        py.detach(|| -> plexus::Result<()> {
            let mut t = self.db.write(graph)?;
            t.create_index(plexus::IndexSpec {
                label,
                ..plexus::IndexSpec::property("", key)
            })?;
            Ok(t.commit()?)
        })
        .map_err(errors::to_py)
    }

    /// The `k` nodes nearest `vector` in the vector index `index`, nearest
    /// first: (node id, score), on a snapshot.
    #[pyo3(signature = (graph, index, vector, k=10))]
    fn vector_search(
        &self,
        py: Python<'_>,
        graph: &str,
        index: &str,
        vector: Vec<f32>,
        k: usize,
    ) -> PyResult<Vec<(String, f64)>> {
        py.detach(|| -> plexus::Result<Vec<(String, f64)>> {
            let r = self.db.read(graph)?;
            let hits = plexus::vectors::search(&r, index, &vector, k, None, None)?;
            let mut out = Vec::with_capacity(hits.len());
            for h in hits {
                if let Some(n) = plexus::GraphRead::node(&r, h.node)? {
                    out.push((n.key, h.score));
                }
            }
            Ok(out)
        })
        .map_err(errors::to_py)
    }

    /// Runs an auto-commit query; its rows stream while they are pulled.
    #[pyo3(signature = (graph, text, parameters=None, timeout=None))]
    fn query(
        &self,
        py: Python<'_>,
        graph: &str,
        text: &str,
        parameters: Option<Bound<'_, PyAny>>,
        timeout: Option<f64>,
    ) -> PyResult<Cursor> {
        let (params, opts) = run_args(parameters, timeout)?;
        let mut started = py
            .detach(|| self.db.session(graph)?.start(text, &params, &opts))
            .map_err(errors::to_py)?;
        // Wait for the columns a tick at a time, so Ctrl-C is noticed.
        loop {
            if let Some(c) = py
                .detach(|| started.poll(Some(TICK)))
                .map_err(errors::to_py)?
            {
                return Ok(Cursor::new(c));
            }
            if let Err(interrupted) = py.check_signals() {
                started.cancel();
                return Err(interrupted);
            }
        }
    }

    /// Opens an explicit transaction on `graph`; with `read_only`, every
    /// query in it reads one snapshot and a query that writes is refused.
    #[pyo3(signature = (graph, read_only=false))]
    fn begin(&self, py: Python<'_>, graph: &str, read_only: bool) -> PyResult<Transaction> {
        let tx = py
            .detach(|| {
                let s = self.db.session(graph)?;
                if read_only {
                    s.begin_read()
                } else {
                    s.begin()
                }
            })
            .map_err(errors::to_py)?;
        Ok(Transaction {
            tx: Mutex::new(Some(tx)),
        })
    }

    /// Loads Arrow data: `nodes` and `edges` are lists of `(label or type
    /// or None, Arrow stream object)`. Into an empty graph by the bulk
    /// path; with `upsert`, merged into a graph that may hold data.
    #[pyo3(signature = (graph, nodes, edges, upsert=false, progress=None, index_mode="maintain"))]
    #[expect(clippy::too_many_arguments, reason = "Python keyword arguments")]
    fn import_arrow<'py>(
        &self,
        py: Python<'py>,
        graph: &str,
        nodes: Vec<(Option<String>, Bound<'py, PyAny>)>,
        edges: Vec<(Option<String>, Bound<'py, PyAny>)>,
        upsert: bool,
        progress: Option<Bound<'py, PyAny>>,
        index_mode: &str,
    ) -> PyResult<Bound<'py, PyDict>> {
        let opts = import_options(index_mode)?;
        let inputs = |list: Vec<(Option<String>, Bound<'py, PyAny>)>, what: &str| {
            list.into_iter()
                .enumerate()
                .map(|(i, (name, obj))| {
                    Ok(BatchInput {
                        name,
                        batches: read_stream(&obj, &format!("{what} #{}", i + 1))?,
                    })
                })
                .collect::<PyResult<Vec<_>>>()
        };
        let (nodes, edges) = (inputs(nodes, "nodes")?, inputs(edges, "edges")?);
        let report = with_progress(py, progress, |tick| {
            if upsert {
                self.db
                    .upsert_batches(graph, nodes, edges, &opts, tick, None)
            } else {
                self.db.import_batches(graph, nodes, edges, &opts, tick)
            }
        })?;
        report_dict(py, &report)
    }

    /// Imports files (CSV, JSON lines, Parquet, Arrow IPC; the format by
    /// extension). A name is `label=path` or `path` as on the command line.
    #[pyo3(signature = (graph, nodes, edges, upsert=false, progress=None, index_mode="maintain"))]
    #[expect(clippy::too_many_arguments, reason = "Python keyword arguments")]
    fn import_files<'py>(
        &self,
        py: Python<'py>,
        graph: &str,
        nodes: Vec<String>,
        edges: Vec<String>,
        upsert: bool,
        progress: Option<Bound<'py, PyAny>>,
        index_mode: &str,
    ) -> PyResult<Bound<'py, PyDict>> {
        let nodes: Vec<Input> = nodes.iter().map(|s| Input::parse(s)).collect();
        let edges: Vec<Input> = edges.iter().map(|s| Input::parse(s)).collect();
        let opts = import_options(index_mode)?;
        let report = with_progress(py, progress, |tick| {
            if upsert {
                self.db
                    .import_upsert(graph, &nodes, &edges, &opts, tick, None)
            } else {
                self.db.import(graph, &nodes, &edges, &opts, tick, None)
            }
        })?;
        report_dict(py, &report)
    }

    /// The ids of the nodes one hop from `node`.
    #[pyo3(signature = (graph, node, direction="out", types=None))]
    fn neighbors(
        &self,
        py: Python<'_>,
        graph: &str,
        node: &str,
        direction: &str,
        types: Option<Vec<String>>,
    ) -> PyResult<Vec<String>> {
        let way = Way::new(direction, types)?;
        traverse(py, &self.db, graph, |s| s.neighbors(node, &way))
    }

    /// How many relationships `node` has that way (from the counters).
    #[pyo3(signature = (graph, node, direction="out", types=None))]
    fn degree(
        &self,
        py: Python<'_>,
        graph: &str,
        node: &str,
        direction: &str,
        types: Option<Vec<String>>,
    ) -> PyResult<u64> {
        let way = Way::new(direction, types)?;
        traverse(py, &self.db, graph, |s| s.degree(node, &way))
    }

    /// `(id, hops)` of every node within `max_depth` hops, breadth first.
    #[pyo3(signature = (graph, node, max_depth, direction="out", types=None))]
    fn bfs(
        &self,
        py: Python<'_>,
        graph: &str,
        node: &str,
        max_depth: u32,
        direction: &str,
        types: Option<Vec<String>>,
    ) -> PyResult<Vec<(String, u32)>> {
        let way = Way::new(direction, types)?;
        traverse(py, &self.db, graph, |s| s.bfs(node, max_depth, &way))
    }

    /// The node ids of one shortest path, or None.
    #[pyo3(signature = (graph, source, target, direction="out", types=None, max_depth=None))]
    #[expect(clippy::too_many_arguments, reason = "Python keyword arguments")]
    fn shortest_path(
        &self,
        py: Python<'_>,
        graph: &str,
        source: &str,
        target: &str,
        direction: &str,
        types: Option<Vec<String>>,
        max_depth: Option<u32>,
    ) -> PyResult<Option<Vec<String>>> {
        let way = Way::new(direction, types)?;
        traverse(py, &self.db, graph, |s| {
            s.shortest_path(source, target, &way, max_depth)
        })
    }

    /// Rebuilds the stale indexes of `graph` (after an import with
    /// `index_mode="defer"`); the names of those rebuilt.
    fn rebuild_indexes(&self, py: Python<'_>, graph: &str) -> PyResult<Vec<String>> {
        py.detach(|| self.db.rebuild_indexes(graph))
            .map_err(errors::to_py)
    }

    /// Typed paths sampled from `node`: at hop `i`, up to `sizes[i]` of the
    /// edges that hop allows from each path's end; each path as node ids.
    #[pyo3(signature = (graph, node, hops, sizes, direction="out", seed=0))]
    #[expect(clippy::too_many_arguments, reason = "Python keyword arguments")]
    fn sample_paths(
        &self,
        py: Python<'_>,
        graph: &str,
        node: &str,
        hops: Vec<Option<Vec<String>>>,
        sizes: Vec<usize>,
        direction: &str,
        seed: u64,
    ) -> PyResult<Vec<Vec<String>>> {
        let ways = Way::hops(direction, hops)?;
        traverse(py, &self.db, graph, |s| {
            s.sample_paths(node, &ways, &sizes, seed)
        })
    }

    /// A CSR snapshot of `graph` with each node's user id, and each edge's
    /// numeric `weight` property when one is named: of the graph as it is,
    /// as it was at `system_time` (a graph that keeps history), or of its
    /// valid-time graph as of `valid_time` (both: bitemporal). Instants are
    /// datetimes, ISO strings or microseconds since 1970.
    #[pyo3(signature = (graph, weight=None, valid_time=None, system_time=None))]
    fn snapshot(
        &self,
        py: Python<'_>,
        graph: &str,
        weight: Option<&str>,
        valid_time: Option<&Bound<'_, PyAny>>,
        system_time: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<crate::snapshot::Snapshot> {
        let valid = instant(valid_time, "valid_time")?;
        let system = system_instant(system_time)?;
        let csr = py.detach(|| -> Result<_, Fail> {
            let r = crate::temporal::read(&self.db, graph, system)?;
            match valid {
                Some(at) => Ok(csr_of(
                    &plexus::temporal::ValidTimeView::new(&r, at),
                    weight,
                )?),
                None => Ok(csr_of(&r, weight)?),
            }
        })?;
        Ok(crate::snapshot::Snapshot::new(csr))
    }

    /// A temporal snapshot of `graph`'s valid-time relationships: those
    /// holding at `valid_time`, or those whose stretches of validity
    /// overlap `window` (`(from, to)`, `to` excluded), or lie within it
    /// when `contained`; as the database knew them at `system_time` when
    /// given (a graph that keeps history).
    #[pyo3(signature = (graph, valid_time=None, window=None, contained=false, system_time=None))]
    fn temporal_snapshot(
        &self,
        py: Python<'_>,
        graph: &str,
        valid_time: Option<&Bound<'_, PyAny>>,
        window: Option<(Bound<'_, PyAny>, Bound<'_, PyAny>)>,
        contained: bool,
        system_time: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<crate::temporal::TemporalSnapshot> {
        use crate::temporal::Span;
        let at = instant(valid_time, "valid_time")?;
        let span = match (at, window) {
            (Some(_), Some(_)) => {
                return Err(PyValueError::new_err("give valid_time or window, not both"))
            }
            (None, None) => {
                return Err(PyValueError::new_err(
                    "give valid_time (an instant) or window (from, to)",
                ))
            }
            (Some(_), None) if contained => {
                return Err(PyValueError::new_err(
                    "contained applies to a window, not to an instant",
                ))
            }
            (Some(at), None) => Span::At(at),
            (None, Some((from, to))) => {
                let from = instant(Some(&from), "window start")?.unwrap_or(i64::MIN);
                let to = instant(Some(&to), "window end")?.unwrap_or(i64::MAX);
                if from >= to {
                    return Err(PyValueError::new_err(format!(
                        "window: the start ({from}) must come before the end ({to})"
                    )));
                }
                let how = if contained {
                    plexus::temporal::Window::Contained
                } else {
                    plexus::temporal::Window::Overlap
                };
                Span::Window { from, to, how }
            }
        };
        let system = system_instant(system_time)?;
        crate::temporal::TemporalSnapshot::build(py, &self.db, graph, span, system)
    }

    /// How many paths from `node` follow `hops` (each hop: the types it may
    /// take, or None for any), as walks or as trails (no edge twice).
    #[pyo3(signature = (graph, node, hops, direction="out", semantics="walk"))]
    fn count_paths(
        &self,
        py: Python<'_>,
        graph: &str,
        node: &str,
        hops: Vec<Option<Vec<String>>>,
        direction: &str,
        semantics: &str,
    ) -> PyResult<u64> {
        let ways = Way::hops(direction, hops)?;
        let sem = path_semantics(semantics)?;
        traverse(py, &self.db, graph, |s| s.count_paths(node, &ways, sem))
    }

    /// Up to `k` sampled neighbours of each node, reproducible by `seed`.
    #[pyo3(signature = (graph, nodes, k, direction="out", types=None, mode="uniform", seed=0))]
    #[expect(clippy::too_many_arguments, reason = "Python keyword arguments")]
    fn sample_neighbors(
        &self,
        py: Python<'_>,
        graph: &str,
        nodes: Vec<String>,
        k: usize,
        direction: &str,
        types: Option<Vec<String>>,
        mode: &str,
        seed: u64,
    ) -> PyResult<Vec<Vec<String>>> {
        let way = Way::new(direction, types)?;
        let mode = sample_mode(mode)?;
        traverse(py, &self.db, graph, |s| {
            s.sample_neighbors(&nodes, k, &way, &mode, seed)
        })
    }

    /// A random walk of up to `length` steps from each node (node2vec with
    /// `p`, `q`), reproducible by `seed`.
    #[pyo3(signature = (graph, nodes, length, direction="out", types=None, p=1.0, q=1.0, seed=0))]
    #[expect(clippy::too_many_arguments, reason = "Python keyword arguments")]
    fn random_walks(
        &self,
        py: Python<'_>,
        graph: &str,
        nodes: Vec<String>,
        length: usize,
        direction: &str,
        types: Option<Vec<String>>,
        p: f64,
        q: f64,
        seed: u64,
    ) -> PyResult<Vec<Vec<String>>> {
        let way = Way::new(direction, types)?;
        let bias = WalkBias { p, q };
        traverse(py, &self.db, graph, |s| {
            s.random_walks(&nodes, length, &way, bias, seed)
        })
    }

    /// Layer-wise neighbourhood sampling for a GNN minibatch.
    #[pyo3(signature = (graph, seeds, fanouts, direction="out", types=None, seed=0))]
    #[expect(clippy::too_many_arguments, reason = "Python keyword arguments")]
    #[expect(clippy::type_complexity, reason = "the Python return shape")]
    fn sample_layers(
        &self,
        py: Python<'_>,
        graph: &str,
        seeds: Vec<String>,
        fanouts: Vec<usize>,
        direction: &str,
        types: Option<Vec<String>>,
        seed: u64,
    ) -> PyResult<Vec<(Vec<String>, Vec<(String, String)>)>> {
        let way = Way::new(direction, types)?;
        traverse(py, &self.db, graph, |s| {
            s.sample_layers(&seeds, &fanouts, &way, seed)
        })
    }
}

/// One traversal on a fresh snapshot of `graph`, without the GIL.
fn traverse<T: Send>(
    py: Python<'_>,
    db: &plexus::Database,
    graph: &str,
    f: impl FnOnce(&Snapshot) -> Result<T, Fail> + Send,
) -> PyResult<T> {
    Ok(py.detach(|| f(&Snapshot::open(db, graph)?))?)
}

/// Runs an import without the GIL; `progress(rows)` is called from this
/// thread, briefly taking the GIL, whenever the importer reports.
fn with_progress<'py>(
    py: Python<'py>,
    progress: Option<Bound<'py, PyAny>>,
    run: impl FnOnce(&mut dyn FnMut(u64)) -> Result<ImportReport, plexus::ingest::IngestError> + Send,
) -> PyResult<ImportReport> {
    let callback = progress.map(Bound::unbind);
    let failed: Mutex<Option<PyErr>> = Mutex::new(None);
    let result = py.detach(|| {
        let mut tick = |rows: u64| {
            if let Some(cb) = &callback {
                Python::attach(|py| {
                    if let Err(e) = cb.call1(py, (rows,)) {
                        if let Ok(mut f) = failed.lock() {
                            f.get_or_insert(e);
                        }
                    }
                });
            }
        };
        run(&mut tick)
    });
    if let Some(e) = lock(&failed)?.take() {
        return Err(e);
    }
    result.map_err(errors::ingest)
}

/// Import options from Python's arguments.
fn import_options(index_mode: &str) -> PyResult<ImportOptions> {
    let index_mode = match index_mode {
        "maintain" => plexus::IndexMode::Maintain,
        "defer" => plexus::IndexMode::Defer,
        "defer-rebuild" | "defer_rebuild" => plexus::IndexMode::DeferRebuild,
        other => {
            return Err(PyValueError::new_err(format!(
                "index_mode must be 'maintain', 'defer' or 'defer-rebuild', not {other:?}"
            )))
        }
    };
    Ok(ImportOptions {
        index_mode,
        ..ImportOptions::default()
    })
}

fn report_dict<'py>(py: Python<'py>, r: &ImportReport) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("nodes", r.nodes)?;
    d.set_item("edges", r.edges)?;
    d.set_item("skipped", r.skipped)?;
    Ok(d)
}

struct CursorState {
    cursor: Option<plexus::Cursor>,
    buffer: VecDeque<Vec<plexus::Value>>,
    summary: Option<plexus::Summary>,
}

/// The rows of one query, pulled in batches.
#[pyclass(frozen, module = "plexus._plexus", name = "Cursor")]
pub struct Cursor {
    columns: Vec<String>,
    state: Mutex<CursorState>,
}

impl Cursor {
    fn new(cursor: plexus::Cursor) -> Cursor {
        Cursor {
            columns: cursor.columns().to_vec(),
            state: Mutex::new(CursorState {
                cursor: Some(cursor),
                buffer: VecDeque::new(),
                summary: None,
            }),
        }
    }

    /// Up to `n` rows, pulled without the GIL. Waits last a tick at a
    /// time and Python's signals are checked between them: Ctrl-C stops
    /// the query and raises KeyboardInterrupt.
    fn pull(&self, py: Python<'_>, n: usize) -> PyResult<Vec<Vec<plexus::Value>>> {
        let mut out: Vec<Vec<plexus::Value>> = Vec::with_capacity(n.min(FETCH_ROWS));
        loop {
            let finished = py.detach(|| self.pull_ready(&mut out, n))?;
            if finished {
                return Ok(out);
            }
            if let Err(interrupted) = py.check_signals() {
                let mut s = lock(&self.state)?;
                if let Some(c) = s.cursor.take() {
                    c.cancel();
                }
                s.buffer.clear();
                return Err(interrupted);
            }
        }
    }

    /// Moves rows into `out` until it holds `n`, the rows end, or a tick
    /// has passed (rows may flow for ever: signals must still be checked);
    /// whether the pull is finished.
    fn pull_ready(&self, out: &mut Vec<Vec<plexus::Value>>, n: usize) -> PyResult<bool> {
        let until = Instant::now() + TICK;
        let mut s = lock(&self.state)?;
        while out.len() < n {
            if let Some(row) = s.buffer.pop_front() {
                out.push(row);
                continue;
            }
            let Some(c) = s.cursor.as_mut() else {
                return Ok(true);
            };
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Ok(false);
            }
            match c.poll_row(left).map_err(errors::to_py)? {
                plexus::Polled::Row(r) => out.push(r),
                plexus::Polled::End => {
                    finish(&mut s);
                    return Ok(true);
                }
                plexus::Polled::Pending => return Ok(false),
            }
        }
        Ok(true)
    }
}

/// Ends a drained cursor, keeping its summary.
fn finish(s: &mut CursorState) {
    if let Some(c) = s.cursor.take() {
        s.summary = c.consume().ok();
    }
}

#[pymethods]
impl Cursor {
    #[getter]
    fn columns(&self) -> Vec<String> {
        self.columns.clone()
    }

    /// Up to `n` more rows as tuples (an empty list at the end).
    fn fetch<'py>(&self, py: Python<'py>, n: usize) -> PyResult<Bound<'py, PyList>> {
        let rows = self.pull(py, n)?;
        let out = PyList::empty(py);
        for row in rows {
            let items: Vec<Bound<'py, PyAny>> =
                row.iter().map(|v| to_py(py, v)).collect::<PyResult<_>>()?;
            out.append(PyTuple::new(py, items)?)?;
        }
        Ok(out)
    }

    /// The rest of the rows as an Arrow stream.
    fn arrow(&self, py: Python<'_>) -> PyResult<ArrowStream> {
        let rows = self.pull(py, usize::MAX)?;
        let (schema, batches) = py
            .detach(|| plexus::arrow::to_record_batches(&self.columns, &rows))
            .map_err(errors::to_py)?;
        Ok(ArrowStream::new(schema, batches))
    }

    /// Drops the rows not pulled (a streaming query stops) and returns the
    /// summary: `rows`, `elapsed` seconds, `kind`, and the write counters.
    fn consume<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let summary = py.detach(|| -> PyResult<_> {
            let mut s = lock(&self.state)?;
            s.buffer.clear();
            finish(&mut s);
            Ok(s.summary.clone())
        })?;
        let d = PyDict::new(py);
        if let Some(sum) = summary {
            d.set_item("rows", sum.rows)?;
            d.set_item("elapsed", sum.elapsed.as_secs_f64())?;
            let kind = match sum.kind {
                plexus::QueryKind::Read => "read",
                plexus::QueryKind::Write => "write",
            };
            d.set_item("kind", kind)?;
            for (name, n) in sum.counters.named() {
                // Bolt's names (`nodes-created`) in Python's spelling.
                d.set_item(name.replace('-', "_"), n)?;
            }
        }
        Ok(d)
    }
}

/// An explicit transaction; rolled back when dropped uncommitted.
#[pyclass(frozen, module = "plexus._plexus", name = "Transaction")]
pub struct Transaction {
    tx: Mutex<Option<plexus::Transaction>>,
}

#[pymethods]
impl Transaction {
    #[pyo3(signature = (text, parameters=None, timeout=None))]
    fn query(
        &self,
        py: Python<'_>,
        text: &str,
        parameters: Option<Bound<'_, PyAny>>,
        timeout: Option<f64>,
    ) -> PyResult<Cursor> {
        let (params, opts) = run_args(parameters, timeout)?;
        let cursor = py.detach(|| -> PyResult<_> {
            let mut g = lock(&self.tx)?;
            let tx = g
                .as_mut()
                .ok_or_else(|| errors::to_py(plexus::Error::TransactionClosed))?;
            tx.run_with(text, &params, &opts).map_err(errors::to_py)
        })?;
        Ok(Cursor::new(cursor))
    }

    fn commit(&self, py: Python<'_>) -> PyResult<()> {
        py.detach(|| -> PyResult<_> {
            let tx = lock(&self.tx)?
                .take()
                .ok_or_else(|| errors::to_py(plexus::Error::TransactionClosed))?;
            tx.commit().map_err(errors::to_py)
        })
    }

    fn rollback(&self, py: Python<'_>) -> PyResult<()> {
        py.detach(|| -> PyResult<_> {
            if let Some(tx) = lock(&self.tx)?.take() {
                tx.rollback();
            }
            Ok(())
        })
    }

    #[getter]
    fn closed(&self) -> PyResult<bool> {
        Ok(lock(&self.tx)?.is_none())
    }
}

/// The CSR of what `r` reads, with user ids (and weights when named).
fn csr_of(r: &impl plexus::GraphRead, weight: Option<&str>) -> Result<plexus::algo::Csr, Fail> {
    let csr = match weight {
        Some(w) => plexus::algo::Csr::build_with_weights(r, w)?,
        None => plexus::algo::Csr::build(r)?,
    };
    Ok(csr.with_keys(r)?)
}

/// A system time argument: an instant no earlier than 1970.
fn system_instant(v: Option<&Bound<'_, PyAny>>) -> PyResult<Option<u64>> {
    match instant(v, "system_time")? {
        Some(t) => u64::try_from(t)
            .map(Some)
            .map_err(|_| PyValueError::new_err("system_time: the instant lies before 1970")),
        None => Ok(None),
    }
}

/// An instant argument as microseconds since 1970, as Cypher reads one.
fn instant(v: Option<&Bound<'_, PyAny>>, what: &str) -> PyResult<Option<i64>> {
    let Some(v) = v.filter(|v| !v.is_none()) else {
        return Ok(None);
    };
    let value = crate::convert::from_py(v, what, 0)?;
    plexus::instant_micros(&value, what)
        .map(Some)
        .map_err(|e| errors::to_py(plexus::Error::Query(e)))
}

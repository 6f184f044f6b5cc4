//! Importing files into a graph: node files per label and edge files per
//! type, as `neo4j-admin import` and Kuzu's COPY take them, in CSV with
//! typed headers, JSON lines, Parquet or Arrow IPC — or, from Rust, Arrow
//! record batches. Rows stream into `Storage::bulk_load`, so an
//! import is one atomic commit: a bad row (named by file, line and column)
//! leaves the database as it was.

mod columnar;
mod csv_source;
mod error;
mod header;
mod jsonl;

pub use error::{IngestError, Location};
pub use header::{Column, ColumnKind, PropType};

use plexus_storage::{
    BulkEdge, BulkNode, BulkOptions, GraphRead, IndexMode, SpillLimit, Storage, StorageError,
};
use std::path::{Path, PathBuf};
use std::sync::{mpsc, Mutex};

/// The format of an input file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Csv,
    JsonLines,
    Parquet,
    /// Arrow IPC file format (`.arrow`, `.feather`, `.ipc`).
    Arrow,
}

impl Format {
    /// By file name: `.jsonl`/`.ndjson` are JSON lines, anything else CSV.
    pub fn of(path: &Path) -> Format {
        match path.extension().and_then(|e| e.to_str()) {
            Some("jsonl" | "ndjson") => Format::JsonLines,
            Some("parquet") => Format::Parquet,
            Some("arrow" | "feather" | "ipc") => Format::Arrow,
            _ => Format::Csv,
        }
    }
}

/// One input file, with the label (nodes) or type (edges) its rows get
/// unless a `:LABEL` / `:TYPE` column says otherwise.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Input {
    pub path: PathBuf,
    pub name: Option<String>,
    pub format: Format,
    /// A CSV file's header line kept in a file of its own (as
    /// `neo4j-admin import` allows): then `path` holds data lines only.
    pub header: Option<PathBuf>,
}

impl Input {
    /// A place in this file, for messages: 1-based `line` and `column`.
    pub(crate) fn at(&self, line: u64, column: Option<usize>) -> Location {
        Location {
            file: self.path.clone(),
            line,
            column,
        }
    }

    /// The file's name as rows' origins show it, shared by all its rows.
    pub(crate) fn source(&self) -> std::sync::Arc<str> {
        self.path.display().to_string().into()
    }

    /// Parses `LABEL=path` or `path`; a CSV path may be `header.csv,data.csv`
    /// (a header file, then the data).
    pub fn parse(arg: &str) -> Input {
        let (name, path) = match arg.split_once('=') {
            Some((n, p)) if !n.is_empty() && !n.contains(['/', '.']) => (Some(n.to_string()), p),
            _ => (None, arg),
        };
        let (header, path) = match path.split_once(',') {
            Some((h, p)) => (Some(PathBuf::from(h)), PathBuf::from(p)),
            None => (None, PathBuf::from(path)),
        };
        Input {
            format: Format::of(&path),
            path,
            name,
            header,
        }
    }
}

/// CSV dialect.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CsvOptions {
    pub delimiter: u8,
    pub quote: u8,
    /// Separates the elements of list columns (`tags:STRING[]`).
    pub array_delimiter: char,
}

impl Default for CsvOptions {
    fn default() -> Self {
        CsvOptions {
            delimiter: b',',
            quote: b'"',
            array_delimiter: ';',
        }
    }
}

/// The rows `files` hold, when every one of them says so up front (Parquet
/// footers do; CSV, JSON lines and Arrow IPC files would have to be read).
/// A progress display uses it for its estimate.
pub fn expected_rows(files: &[Input]) -> Option<u64> {
    files.iter().map(columnar::expected_rows).sum()
}

/// How an import reads files and treats indexes and memory.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ImportOptions {
    pub csv: CsvOptions,
    /// `Maintain` (the default) fills the graph's indexes as part of the
    /// import; `Defer` leaves non-unique ones stale, to be rebuilt later
    /// (`plexus rebuild-indexes`); `DeferRebuild` rebuilds them before the
    /// import returns (for the bulk path, the same as `Maintain`, which
    /// already fills them with one sorted run).
    pub index_mode: IndexMode,
    /// Memory for the keys of a bulk import at most; past it, they are
    /// sorted into files in `spill_dir` and merged as written. A quarter of
    /// the machine's memory by default.
    pub memory: MemoryLimit,
    /// Where keys past the limit go: the system's temporary folder when
    /// `None` (`plexus::Database` names a folder inside the database, as the
    /// temporary one may itself live in memory).
    pub spill_dir: Option<std::path::PathBuf>,
}

/// How much memory a bulk import's keys may take.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MemoryLimit {
    /// A quarter of the machine's memory (or of the control group's limit,
    /// when lower): see [`MemoryLimit::bytes`].
    #[default]
    Machine,
    Bytes(usize),
    Unbounded,
}

/// The least a machine-derived limit allows (a smaller machine still
/// loads, spilling early).
const MIN_MACHINE_LIMIT: usize = 256 << 20;

impl MemoryLimit {
    /// The limit in bytes; `None` when unbounded.
    pub fn bytes(self) -> Option<usize> {
        match self {
            MemoryLimit::Machine => Some((machine_memory() / 4).max(MIN_MACHINE_LIMIT)),
            MemoryLimit::Bytes(n) => Some(n),
            MemoryLimit::Unbounded => None,
        }
    }

    fn spill(self, dir: Option<&std::path::Path>) -> Option<SpillLimit> {
        let bytes = self.bytes()?;
        let dir = dir.map_or_else(
            || std::env::temp_dir().join("plexus-import"),
            |d| d.to_path_buf(),
        );
        Some(SpillLimit { bytes, dir })
    }
}

/// The machine's memory in bytes: the smaller of `/proc/meminfo`'s total
/// and the control group's `memory.max`; 8 GiB where neither can be read
/// (not Linux).
pub fn machine_memory() -> usize {
    let total = std::fs::read_to_string("/proc/meminfo").ok().and_then(|t| {
        let line = t.lines().find(|l| l.starts_with("MemTotal:"))?;
        let kib: usize = line.split_whitespace().nth(1)?.parse().ok()?;
        kib.checked_mul(1024)
    });
    // "max" (no limit) does not parse, and leaves the total.
    let group = std::fs::read_to_string("/sys/fs/cgroup/memory.max")
        .ok()
        .and_then(|t| t.trim().parse::<usize>().ok());
    match (total, group) {
        (Some(t), Some(g)) => t.min(g),
        (Some(t), None) => t,
        (None, Some(g)) => g,
        (None, None) => 8 << 30,
    }
}

/// What an import did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ImportReport {
    pub nodes: u64,
    pub edges: u64,
    /// Rows left out because they were bad (only when skipping is asked for).
    pub skipped: u64,
    /// Rows read per file, in the order given.
    pub files: Vec<(PathBuf, u64)>,
}

/// A row iterator over one file.
type Rows<'a, T> = Box<dyn Iterator<Item = Result<T, StorageError>> + 'a>;

fn node_rows<'a>(
    input: &'a Input,
    opts: &'a CsvOptions,
) -> Result<Rows<'a, BulkNode>, IngestError> {
    Ok(match input.format {
        Format::Csv => Box::new(csv_source::nodes(input, opts)?),
        Format::JsonLines => Box::new(jsonl::nodes(input)?),
        Format::Parquet | Format::Arrow => Box::new(columnar::nodes(input)?),
    })
}

fn edge_rows<'a>(
    input: &'a Input,
    opts: &'a CsvOptions,
) -> Result<Rows<'a, BulkEdge>, IngestError> {
    Ok(match input.format {
        Format::Csv => Box::new(csv_source::edges(input, opts)?),
        Format::JsonLines => Box::new(jsonl::edges(input)?),
        Format::Parquet | Format::Arrow => Box::new(columnar::edges(input)?),
    })
}

/// Record batches for [`import_batches`]: the label (nodes) or type
/// (edges) their rows get, and the batches. Columns are read as in Parquet
/// files (`id`, `label`/`labels`; `src`, `dst`, `type`, `id`).
pub struct BatchInput {
    pub name: Option<String>,
    pub batches: Vec<arrow_array::RecordBatch>,
}

/// Names each batch input (`batches #n`, counted from `first`) for messages.
fn batch_sources(inputs: Vec<BatchInput>, first: usize) -> (Vec<Input>, Vec<columnar::Batches>) {
    inputs
        .into_iter()
        .enumerate()
        .map(|(i, b)| {
            let input = Input {
                path: PathBuf::from(format!("batches #{}", first + i + 1)),
                name: b.name,
                format: Format::Arrow,
                header: None,
            };
            let batches: columnar::Batches = Box::new(b.batches.into_iter().map(Ok));
            (input, batches)
        })
        .unzip()
}

/// Imports Arrow record batches into the empty graph `graph`, as one commit,
/// with the index mode and memory limit of `opts` (its CSV settings do not
/// apply). `progress` is called now and then with the rows read so far.
pub fn import_batches(
    storage: &Storage,
    graph: &str,
    nodes: Vec<BatchInput>,
    edges: Vec<BatchInput>,
    opts: &ImportOptions,
    progress: &mut dyn FnMut(u64),
) -> Result<ImportReport, IngestError> {
    let (n_inputs, n_batches) = batch_sources(nodes, 0);
    let (e_inputs, e_batches) = batch_sources(edges, n_inputs.len());
    // Rows are counted as the loader pulls them; it reports every 100,000.
    let read = std::cell::Cell::new(0u64);
    let progress = std::cell::RefCell::new(progress);
    let tick = || {
        read.set(read.get() + 1);
        if read.get().is_multiple_of(100_000) {
            (progress.borrow_mut())(read.get());
        }
    };
    let mut nodes = n_inputs
        .iter()
        .zip(n_batches)
        .flat_map(|(i, b)| columnar::batch_nodes(i, b))
        .inspect(|_| tick());
    let mut edges = e_inputs
        .iter()
        .zip(e_batches)
        .flat_map(|(i, b)| columnar::batch_edges(i, b))
        .inspect(|_| tick());
    let r = storage.bulk_load_with(
        graph,
        &mut nodes,
        &mut edges,
        BulkOptions {
            skip: None,
            index_mode: opts.index_mode,
            spill: opts.memory.spill(opts.spill_dir.as_deref()),
        },
    )?;
    let progress = progress.into_inner();
    progress(r.nodes + r.edges + r.skipped);
    Ok(ImportReport {
        nodes: r.nodes,
        edges: r.edges,
        skipped: r.skipped,
        files: vec![],
    })
}

/// Imports node and edge files into the empty graph `graph`, as one commit.
/// `progress` is called now and then with the rows read so far. With
/// `skip`, a bad row is handed to it (as a message naming its file and
/// line) and left out instead of failing the import.
///
/// Files are read and parsed on a thread of their own, a chunk of rows
/// ahead of the loader (bounded: a few chunks wait at most), so parsing
/// overlaps building the keys.
pub fn import(
    storage: &Storage,
    graph: &str,
    nodes: &[Input],
    edges: &[Input],
    opts: &ImportOptions,
    progress: &mut dyn FnMut(u64),
    skip: Option<&mut dyn FnMut(&str)>,
) -> Result<ImportReport, IngestError> {
    let fatal: Mutex<Option<IngestError>> = Mutex::new(None);
    let (node_tx, node_rx) = mpsc::sync_channel::<Chunk<BulkNode>>(CHUNKS_AHEAD);
    let (edge_tx, edge_rx) = mpsc::sync_channel::<Chunk<BulkEdge>>(CHUNKS_AHEAD);
    let (result, counts) = std::thread::scope(|scope| {
        let fatal = &fatal;
        // Owns the senders: each channel closes when its files are read.
        let reader = scope.spawn(move || {
            let mut counts = Vec::with_capacity(nodes.len() + edges.len());
            let node_files = nodes.iter().map(|i| node_rows(i, &opts.csv));
            if !guarded(&node_tx, fatal, || {
                send_files(node_files, &node_tx, &mut counts, fatal)
            }) {
                return counts;
            }
            drop(node_tx);
            guarded(&edge_tx, fatal, || {
                send_files(
                    edges.iter().map(|i| edge_rows(i, &opts.csv)),
                    &edge_tx,
                    &mut counts,
                    fatal,
                )
            });
            counts
        });
        let total = std::cell::Cell::new(0u64);
        let progress = std::cell::RefCell::new(progress);
        let tick = || {
            total.set(total.get() + 1);
            if total.get().is_multiple_of(100_000) {
                (progress.borrow_mut())(total.get());
            }
        };
        let expect = |files: &[Input]| files.iter().filter_map(columnar::expected_rows).sum();
        let mut all_nodes = Expected {
            rows: node_rx.into_iter().flatten().inspect(|_| tick()),
            left: expect(nodes),
        };
        let mut all_edges = Expected {
            rows: edge_rx.into_iter().flatten().inspect(|_| tick()),
            left: expect(edges),
        };
        let mut skip = skip;
        let skipping = skip.is_some();
        let mut on_bad = |e: &StorageError| {
            if let Some(f) = skip.as_mut() {
                f(&e.to_string());
            }
        };
        let skipper: Option<&mut dyn FnMut(&StorageError)> =
            if skipping { Some(&mut on_bad) } else { None };
        let result = storage.bulk_load_with(
            graph,
            &mut all_nodes,
            &mut all_edges,
            BulkOptions {
                skip: skipper,
                index_mode: opts.index_mode,
                spill: opts.memory.spill(opts.spill_dir.as_deref()),
            },
        );
        // Hang up before waiting for the reader: a failed load leaves it
        // blocked on a full channel otherwise.
        drop((all_nodes, all_edges));
        let counts = reader.join().unwrap_or_default();
        (progress.borrow_mut())(total.get());
        (result, counts)
    });
    if let Some(e) = fatal.into_inner().unwrap_or_else(|p| p.into_inner()) {
        return Err(e);
    }
    let r = result?;
    let files = nodes
        .iter()
        .chain(edges)
        .zip(counts.into_iter().chain(std::iter::repeat(0)))
        .map(|(i, c)| (i.path.clone(), c))
        .collect();
    Ok(ImportReport {
        nodes: r.nodes,
        edges: r.edges,
        skipped: r.skipped,
        files,
    })
}

/// Rows with the number the files' metadata announce, as a lower bound of
/// `size_hint`: the loader sizes its arrays by it.
struct Expected<I> {
    rows: I,
    left: u64,
}

impl<I: Iterator> Iterator for Expected<I> {
    type Item = I::Item;

    fn next(&mut self) -> Option<I::Item> {
        self.left = self.left.saturating_sub(1);
        self.rows.next()
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (usize::try_from(self.left).unwrap_or(usize::MAX), None)
    }
}

/// Rows handed from the reading thread to the loader at a time.
type Chunk<T> = Vec<Result<T, StorageError>>;
const CHUNK_ROWS: usize = 4096;
const CHUNKS_AHEAD: usize = 4;

/// Runs a reading step so that a panic in it (a bug in a parser) cannot pass
/// for the end of the files: it is recorded as `fatal` and the load is
/// stopped by an error row it cannot skip, so nothing is written. Without
/// this, the channel closing as the thread unwinds would look like the last
/// row, and the rows read so far would be committed as a whole import.
fn guarded<T>(
    tx: &mpsc::SyncSender<Chunk<T>>,
    fatal: &Mutex<Option<IngestError>>,
    step: impl FnOnce() -> bool,
) -> bool {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(step)) {
        Ok(more) => more,
        Err(payload) => {
            let why = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "the reading thread panicked".into());
            *fatal.lock().unwrap_or_else(|p| p.into_inner()) = Some(IngestError::Internal(why));
            let stop = StorageError::Unsupported("the import stopped".into());
            let _ = tx.send(vec![Err(stop)]);
            false
        }
    }
}

/// Reads files and sends their rows in chunks, counting them per file.
/// A file that cannot be opened is `fatal`: it is recorded, and the load is
/// stopped by an error row it cannot skip; then this returns false.
fn send_files<'a, T>(
    files: impl Iterator<Item = Result<Rows<'a, T>, IngestError>>,
    tx: &mpsc::SyncSender<Chunk<T>>,
    counts: &mut Vec<u64>,
    fatal: &Mutex<Option<IngestError>>,
) -> bool {
    for file in files {
        let rows = match file {
            Ok(rows) => rows,
            Err(e) => {
                *fatal.lock().unwrap_or_else(|p| p.into_inner()) = Some(e);
                let stop = StorageError::Unsupported("the import stopped".into());
                let _ = tx.send(vec![Err(stop)]);
                return false;
            }
        };
        let mut n = 0u64;
        let mut chunk = Vec::with_capacity(CHUNK_ROWS);
        for row in rows {
            n += 1;
            chunk.push(row);
            if chunk.len() == CHUNK_ROWS {
                let full = std::mem::replace(&mut chunk, Vec::with_capacity(CHUNK_ROWS));
                if tx.send(full).is_err() {
                    // The loader stopped (a bad row): nothing more to read.
                    return false;
                }
            }
        }
        counts.push(n);
        if !chunk.is_empty() && tx.send(chunk).is_err() {
            return false;
        }
    }
    true
}

/// Imports files into a graph that may hold data already, as one write
/// transaction (all or nothing, like [`import`], but through the
/// transactional path rather than the bulk one, so slower):
///
/// * a node row whose id exists adds its labels and sets the properties it
///   has, keeping the node's other labels and properties; a new id creates
///   the node;
/// * an edge row with an id creates that edge, or replaces the properties
///   of the existing edge with that id (its endpoints and type must be the
///   row's); an edge row without an id always creates a new edge;
/// * edges may join nodes of this import and nodes already in the graph.
///
/// With `skip`, a bad row (a malformed cell, a dangling edge, a constraint
/// it would break) is reported to it and left out; the rest commits.
pub fn upsert(
    storage: &Storage,
    graph: &str,
    nodes: &[Input],
    edges: &[Input],
    opts: &ImportOptions,
    progress: &mut dyn FnMut(u64),
    skip: Option<&mut dyn FnMut(&str)>,
) -> Result<ImportReport, IngestError> {
    let mut node_sources = Vec::with_capacity(nodes.len());
    for input in nodes {
        node_sources.push((input.path.clone(), node_rows(input, &opts.csv)?));
    }
    let mut edge_sources = Vec::with_capacity(edges.len());
    for input in edges {
        edge_sources.push((input.path.clone(), edge_rows(input, &opts.csv)?));
    }
    upsert_rows(
        storage,
        graph,
        node_sources,
        edge_sources,
        opts,
        progress,
        skip,
    )
}

/// [`upsert`] of Arrow record batches rather than files.
pub fn upsert_batches(
    storage: &Storage,
    graph: &str,
    nodes: Vec<BatchInput>,
    edges: Vec<BatchInput>,
    opts: &ImportOptions,
    progress: &mut dyn FnMut(u64),
    skip: Option<&mut dyn FnMut(&str)>,
) -> Result<ImportReport, IngestError> {
    let (n_inputs, n_batches) = batch_sources(nodes, 0);
    let (e_inputs, e_batches) = batch_sources(edges, n_inputs.len());
    let node_sources: Vec<(PathBuf, Rows<'_, BulkNode>)> = n_inputs
        .iter()
        .zip(n_batches)
        .map(|(i, b)| {
            let rows: Rows<'_, BulkNode> = Box::new(columnar::batch_nodes(i, b));
            (i.path.clone(), rows)
        })
        .collect();
    let edge_sources: Vec<(PathBuf, Rows<'_, BulkEdge>)> = e_inputs
        .iter()
        .zip(e_batches)
        .map(|(i, b)| {
            let rows: Rows<'_, BulkEdge> = Box::new(columnar::batch_edges(i, b));
            (i.path.clone(), rows)
        })
        .collect();
    upsert_rows(
        storage,
        graph,
        node_sources,
        edge_sources,
        opts,
        progress,
        skip,
    )
}

/// The transactional load under [`upsert`] and [`upsert_batches`]: named
/// row sources, nodes first.
fn upsert_rows(
    storage: &Storage,
    graph: &str,
    nodes: Vec<(PathBuf, Rows<'_, BulkNode>)>,
    edges: Vec<(PathBuf, Rows<'_, BulkEdge>)>,
    opts: &ImportOptions,
    progress: &mut dyn FnMut(u64),
    mut skip: Option<&mut dyn FnMut(&str)>,
) -> Result<ImportReport, IngestError> {
    let mut files: Vec<(PathBuf, u64)> = Vec::with_capacity(nodes.len() + edges.len());
    let mut txn = storage.write(graph)?;
    txn.set_index_mode(opts.index_mode);
    let mut report = ImportReport {
        nodes: 0,
        edges: 0,
        skipped: 0,
        files: vec![],
    };
    let mut total = 0u64;
    let mut skipped = 0u64;
    // A failing row: skipped and reported, or the end of the import (the
    // transaction is dropped, so nothing is written).
    let mut bad = |e: StorageError| -> Result<(), IngestError> {
        match skip.as_mut() {
            Some(f) => {
                f(&e.to_string());
                skipped += 1;
                Ok(())
            }
            None => Err(e.into()),
        }
    };
    let in_row = |origin: &plexus_storage::Origin, e: StorageError| StorageError::InRow {
        origin: origin.to_string(),
        error: Box::new(e),
    };
    for (path, rows) in nodes {
        let mut count = 0u64;
        for row in rows {
            count += 1;
            let Some(n) = take(row, &mut total, progress, &mut bad)? else {
                continue;
            };
            let labels: Vec<&str> = n.labels.iter().map(String::as_str).collect();
            match txn.merge_node(&n.key, &labels, &n.props) {
                Ok(_) => report.nodes += 1,
                Err(e) => bad(in_row(&n.origin, e))?,
            }
        }
        files.push((path, count));
    }
    for (path, rows) in edges {
        let mut count = 0u64;
        for row in rows {
            count += 1;
            let Some(e) = take(row, &mut total, progress, &mut bad)? else {
                continue;
            };
            let endpoint = |t: &plexus_storage::WriteTxn, key: &str| {
                t.node_id(key)?.ok_or_else(|| StorageError::NotFound {
                    what: "node",
                    id: key.to_string(),
                })
            };
            let written = endpoint(&txn, &e.src)
                .and_then(|s| Ok((s, endpoint(&txn, &e.dst)?)))
                .and_then(|(s, d)| match &e.key {
                    Some(k) if !k.is_empty() => txn.put_edge(k, s, d, &e.rel_type, &e.props),
                    _ => txn.create_edge(None, s, d, &e.rel_type, &e.props),
                });
            match written {
                Ok(_) => report.edges += 1,
                Err(err) => bad(in_row(&e.origin, err))?,
            }
        }
        files.push((path, count));
    }
    report.skipped = skipped;
    txn.commit()?;
    progress(total);
    report.files = files;
    Ok(report)
}

/// Counts a row for the progress report and unwraps it; a bad row goes to
/// `bad` (which skips it, `Ok(None)`, or ends the import).
fn take<T>(
    row: Result<T, StorageError>,
    total: &mut u64,
    progress: &mut dyn FnMut(u64),
    bad: &mut dyn FnMut(StorageError) -> Result<(), IngestError>,
) -> Result<Option<T>, IngestError> {
    *total += 1;
    if total.is_multiple_of(100_000) {
        progress(*total);
    }
    match row {
        Ok(r) => Ok(Some(r)),
        Err(e) => bad(e).map(|_| None),
    }
}

#[cfg(test)]
mod reader_tests {
    use super::*;

    #[test]
    fn a_panicking_reader_stops_the_load_instead_of_ending_it() {
        let (tx, rx) = mpsc::sync_channel::<Chunk<BulkNode>>(CHUNKS_AHEAD);
        let fatal = Mutex::new(None);
        let more = guarded(&tx, &fatal, || panic!("parser bug"));
        assert!(!more);
        drop(tx);
        let rows: Vec<_> = rx.into_iter().flatten().collect();
        assert_eq!(rows.len(), 1, "one error row, not a clean end");
        assert!(rows[0].is_err());
        let e = fatal.into_inner().unwrap().unwrap();
        assert_eq!(e.kind(), plexus_common::ErrorKind::Internal);
        assert!(e.to_string().contains("parser bug"), "{e}");
    }

    #[test]
    fn a_reader_that_finishes_passes_its_answer_through() {
        let (tx, _rx) = mpsc::sync_channel::<Chunk<BulkNode>>(CHUNKS_AHEAD);
        let fatal = Mutex::new(None);
        assert!(guarded(&tx, &fatal, || true));
        assert!(fatal.into_inner().unwrap().is_none());
    }
}

#[cfg(test)]
mod memory_tests {
    use super::MemoryLimit;

    #[test]
    fn a_limit_comes_from_the_machine_unless_given() {
        let machine = MemoryLimit::Machine.bytes().unwrap();
        assert!(machine >= super::MIN_MACHINE_LIMIT);
        assert!(machine <= super::machine_memory().max(super::MIN_MACHINE_LIMIT));
        assert_eq!(MemoryLimit::Bytes(5).bytes(), Some(5));
        assert_eq!(MemoryLimit::Unbounded.bytes(), None);
        let dir = std::path::Path::new("here");
        let spill = MemoryLimit::Bytes(5).spill(Some(dir)).unwrap();
        assert_eq!((spill.bytes, spill.dir.as_path()), (5, dir));
        assert!(MemoryLimit::Unbounded.spill(Some(dir)).is_none());
    }
}

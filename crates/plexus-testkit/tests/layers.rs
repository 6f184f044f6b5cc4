//! The crate layering of DESIGN.md §1, checked on `cargo metadata`: a crate
//! may depend only on the Plexus crates its layer allows. And the default
//! build compiles no C++ database library.

use std::collections::BTreeMap;
use std::process::Command;

/// Each crate and the Plexus crates it may depend on.
fn allowed() -> BTreeMap<&'static str, Vec<&'static str>> {
    let below_query = [
        "plexus-common",
        "plexus-kv",
        "plexus-storage",
        "plexus-vector",
        "plexus-vector-index",
        "plexus-temporal",
        "plexus-knowledge",
        "plexus-ingest",
        "plexus-algo",
        "plexus-cypher",
    ];
    let mut m: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    m.insert("plexus-common", vec![]);
    // The binaries' allocator (ARCHITECTURE.md, plexus-alloc): no layer of
    // its own, beside the crates; only the binaries' crates use it.
    m.insert("plexus-alloc", vec![]);
    m.insert("plexus-kv", vec!["plexus-common"]);
    m.insert("plexus-storage", vec!["plexus-common", "plexus-kv"]);
    m.insert("plexus-vector", vec!["plexus-common", "plexus-kv"]);
    m.insert(
        "plexus-temporal",
        vec!["plexus-common", "plexus-kv", "plexus-storage"],
    );
    // Claims, rules and modal logic over valid-time claims.
    m.insert(
        "plexus-knowledge",
        vec![
            "plexus-common",
            "plexus-kv",
            "plexus-storage",
            "plexus-temporal",
        ],
    );
    m.insert(
        "plexus-ingest",
        vec!["plexus-common", "plexus-storage", "plexus-vector"],
    );
    m.insert("plexus-algo", vec!["plexus-common", "plexus-storage"]);
    // Vector indexes in the graph: storage's maintained-index seam filled
    // with plexus-vector's search (ARCHITECTURE.md).
    m.insert(
        "plexus-vector-index",
        vec!["plexus-common", "plexus-storage", "plexus-vector"],
    );
    m.insert("plexus-cypher", vec!["plexus-common"]);
    m.insert("plexus-query", below_query.to_vec());
    let mut facade = below_query.to_vec();
    facade.push("plexus-query");
    m.insert("plexus", facade);
    m.insert("plexus-server", vec!["plexus"]);
    m.insert("plexus-py", vec!["plexus", "plexus-alloc"]);
    // The `plexus` binary hosts the server (`plexus serve`).
    m.insert(
        "plexus-cli",
        vec!["plexus", "plexus-server", "plexus-alloc"],
    );
    m
}

fn metadata(extra: &[&str]) -> serde_json::Value {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .args(["metadata", "--format-version", "1"])
        .args(extra)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cargo metadata runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn crates_depend_only_on_lower_layers() {
    let meta = metadata(&["--no-deps"]);
    let allowed = allowed();
    let mut problems = Vec::new();
    for pkg in meta["packages"].as_array().unwrap() {
        let name = pkg["name"].as_str().unwrap();
        if matches!(name, "plexus-testkit" | "plexus-bench") {
            continue; // test and benchmark crates may use any layer
        }
        let Some(may) = allowed.get(name) else {
            problems.push(format!("{name} is not in the layer table (DESIGN.md §1)"));
            continue;
        };
        for dep in pkg["dependencies"].as_array().unwrap() {
            let d = dep["name"].as_str().unwrap();
            let dev = dep["kind"].as_str() == Some("dev");
            if d.starts_with("plexus") && !dev && !may.contains(&d) {
                problems.push(format!(
                    "{name} depends on {d}, which its layer may not use"
                ));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn default_build_has_no_cpp_database_library() {
    let meta = metadata(&[]);
    let forbidden = [
        "rocksdb",
        "librocksdb-sys",
        "leveldb",
        "leveldb-sys",
        "duckdb",
        "libduckdb-sys",
        "kuzu",
    ];
    let resolved: Vec<&str> = meta["packages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    for f in forbidden {
        assert!(!resolved.contains(&f), "the default build pulls in {f}");
    }
}

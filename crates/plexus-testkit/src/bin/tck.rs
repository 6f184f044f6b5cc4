//! Runs the openCypher TCK and reports pass counts per area.
//!
//! Usage: tck [--tck-dir DIR] [--store memory|lmdb] [--summary-json FILE] [--write-md FILE] [--failures]

use plexus_testkit::tck;
use std::collections::BTreeMap;
use std::path::PathBuf;

fn main() {
    let mut args = std::env::args().skip(1);
    let (mut dir, mut json, mut md, mut show) = (tck::default_dir(), None, None, false);
    let mut store = tck::Store::Memory;
    while let Some(a) = args.next() {
        match a.as_str() {
            "--tck-dir" => dir = PathBuf::from(args.next().expect("--tck-dir takes a folder")),
            "--summary-json" => json = args.next().map(PathBuf::from),
            "--write-md" => md = args.next().map(PathBuf::from),
            "--failures" => show = true,
            "--store" => {
                let name = args.next().unwrap_or_default();
                store = tck::Store::parse(&name).unwrap_or_else(|| {
                    eprintln!("error: --store takes memory or lmdb, not '{name}'");
                    std::process::exit(2);
                });
            }
            "--list" => {
                for s in tck::load(&dir).expect("read the TCK") {
                    println!("{}", s.file);
                }
                return;
            }
            other => {
                eprintln!("unknown option {other}; usage: tck [--tck-dir DIR] [--summary-json FILE] [--write-md FILE] [--failures] [--list] [--store memory|lmdb]");
                std::process::exit(2);
            }
        }
    }
    let scenarios = match tck::load(&dir) {
        Ok(s) => s,
        Err(e) => {
            eprintln!(
                "error: cannot read the openCypher TCK at {}: {e} (give its folder with --tck-dir)",
                dir.display()
            );
            std::process::exit(1);
        }
    };
    let results = tck::run_all_on(scenarios, store);
    let summary = tck::summarize(&results);
    let mut reasons = BTreeMap::new();
    for (s, o) in &results {
        if let Some(r) = tck::reason(o) {
            *reasons.entry(r).or_insert(0) += 1;
            if show {
                println!("FAIL {} :: {} :: {:?}", s.file, s.name, o);
            }
        }
    }
    for (a, (t, p)) in &summary.areas {
        println!("{a:40} {p:5} / {t:5}");
    }
    println!(
        "TCK: {} passed, {} failed",
        summary.passed,
        summary.total - summary.passed
    );
    if let Some(f) = json {
        std::fs::write(f, summary.to_json()).expect("write the summary");
    }
    if let Some(f) = md {
        std::fs::write(f, summary.markdown(&reasons)).expect("write the report");
    }
}

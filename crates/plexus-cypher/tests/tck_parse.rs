//! Every query of the openCypher TCK that is not meant to be a syntax error
//! must parse. The TCK is read from `../shared/suites/tck` beside the
//! repository (or `PLEXUS_TCK_DIR`); the test says so clearly when it is absent.

use std::path::{Path, PathBuf};

fn tck_dir() -> PathBuf {
    match std::env::var_os("PLEXUS_TCK_DIR") {
        Some(d) => PathBuf::from(d),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/suites/tck"),
    }
}

fn features(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            features(&p, out);
        } else if p.extension().is_some_and(|x| x == "feature") {
            out.push(p);
        }
    }
}

/// The rows of a scenario outline's `Examples:` tables, as (name, value) pairs.
fn examples(scenario: &str) -> Vec<Vec<(String, String)>> {
    let mut rows = Vec::new();
    for block in scenario.split("Examples:").skip(1) {
        let table: Vec<Vec<String>> = block
            .lines()
            .map(str::trim)
            .skip_while(|l| l.is_empty())
            .take_while(|l| l.starts_with('|'))
            .map(|l| {
                l.trim_matches('|')
                    .split('|')
                    .map(|c| c.trim().to_string())
                    .collect()
            })
            .collect();
        if let Some((header, values)) = table.split_first() {
            for v in values {
                rows.push(header.iter().cloned().zip(v.iter().cloned()).collect());
            }
        }
    }
    rows
}

/// (query, the scenario expects a syntax error) for every query block,
/// outlines expanded once per Examples row.
fn queries(text: &str) -> Vec<(String, bool)> {
    let mut out = Vec::new();
    for scenario in text.split("\n  Scenario").skip(1) {
        let rows = if scenario.starts_with(" Outline") {
            examples(scenario)
        } else {
            vec![vec![]]
        };
        for row in rows {
            let mut s = scenario.to_string();
            for (k, v) in &row {
                s = s.replace(&format!("<{k}>"), v);
            }
            queries_of(&s, &mut out);
        }
    }
    out
}

fn queries_of(scenario: &str, out: &mut Vec<(String, bool)>) {
    {
        let syntax_error = scenario.contains("a SyntaxError should be raised");
        let lines: Vec<&str> = scenario.lines().collect();
        let mut i = 0;
        while i < lines.len() {
            let l = lines[i].trim();
            if (l.ends_with("executing query:") || l.ends_with("having executed:"))
                && lines.get(i + 1).is_some_and(|n| n.trim() == "\"\"\"")
            {
                let mut q = Vec::new();
                i += 2;
                while i < lines.len() && lines[i].trim() != "\"\"\"" {
                    q.push(lines[i]);
                    i += 1;
                }
                let is_main = l.ends_with("executing query:");
                out.push((q.join("\n"), syntax_error && is_main));
            }
            i += 1;
        }
    }
}

#[test]
fn tck_queries_parse() {
    let dir = tck_dir().join("features");
    assert!(
        dir.is_dir(),
        "the openCypher TCK is not at {} (set PLEXUS_TCK_DIR)",
        dir.display()
    );
    let mut files = Vec::new();
    features(&dir, &mut files);
    files.sort();
    let (mut ok, mut failed, mut errors_caught, mut errors_total) = (0, Vec::new(), 0, 0);
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        for (q, expect_error) in queries(&text) {
            let r = plexus_cypher::parse(&q);
            if expect_error {
                errors_total += 1;
                errors_caught += r.is_err() as usize;
            } else if let Err(e) = r {
                failed.push(format!(
                    "{}: {e}\n{q}",
                    f.strip_prefix(&dir).unwrap().display()
                ));
            } else {
                ok += 1;
            }
        }
    }
    eprintln!("TCK parse: {ok} parse, {} fail; {errors_caught}/{errors_total} expected syntax errors rejected by the parser alone", failed.len());
    for f in failed.iter().take(40) {
        eprintln!("---\n{f}");
    }
    assert!(ok > 1000, "the TCK should provide thousands of queries");
    assert!(
        failed.is_empty(),
        "{} TCK queries fail to parse",
        failed.len()
    );
}

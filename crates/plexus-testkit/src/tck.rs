//! The openCypher TCK harness: reads `.feature` files (Scenario Outlines
//! expanded), runs each scenario on a fresh database, and compares results,
//! errors and side effects as the TCK's README describes.
//!
//! The engine today is `plexus_query::run_standalone`: queries that need no
//! graph. Scenarios that need setup queries, named graphs, procedures or
//! writes fail as "unsupported" — counted, never skipped.

use plexus_common::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// One expanded scenario.
#[derive(Debug, Clone)]
pub struct Scenario {
    /// `clauses/match`, `expressions/list`, …
    pub area: String,
    pub file: String,
    pub name: String,
    pub text: String,
}

/// What a scenario's run came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    Passed,
    Failed(String),
}

/// The default location: `shared/suites/tck` beside the repository.
pub fn default_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/suites/tck")
}

fn features(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    for e in std::fs::read_dir(dir)? {
        let p = e?.path();
        if p.is_dir() {
            features(&p, out)?;
        } else if p.extension().is_some_and(|x| x == "feature") {
            out.push(p);
        }
    }
    Ok(())
}

fn table(lines: &[&str]) -> Vec<Vec<String>> {
    lines.iter().map(|l| split_row(l.trim())).collect()
}

/// Splits `| a | b |` into cells, keeping `|` inside quotes.
fn split_row(line: &str) -> Vec<String> {
    let inner = line.trim().trim_start_matches('|').trim_end_matches('|');
    let mut cells = Vec::new();
    let mut cur = String::new();
    let mut quote: Option<char> = None;
    let mut chars = inner.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, quote) {
            ('\\', Some(_)) => {
                cur.push(c);
                if let Some(n) = chars.next() {
                    cur.push(n);
                }
            }
            ('\'' | '"', None) => {
                quote = Some(c);
                cur.push(c);
            }
            (q, Some(open)) if q == open => {
                quote = None;
                cur.push(c);
            }
            ('|', None) => cells.push(std::mem::take(&mut cur).trim().to_string()),
            _ => cur.push(c),
        }
    }
    cells.push(cur.trim().to_string());
    cells
}

/// Every scenario under `dir/features`, outlines expanded once per example row.
pub fn load(dir: &Path) -> std::io::Result<Vec<Scenario>> {
    let root = dir.join("features");
    let mut files = Vec::new();
    features(&root, &mut files)?;
    files.sort();
    let mut out = Vec::new();
    for f in files {
        let rel = f
            .strip_prefix(&root)
            .unwrap_or(&f)
            .to_string_lossy()
            .to_string();
        let area = rel.split('/').take(2).collect::<Vec<_>>().join("/");
        let area = area.trim_end_matches(".feature").to_string();
        let text = std::fs::read_to_string(&f)?;
        let background = text
            .split("\n  Background:")
            .nth(1)
            .map(|b| b.split("\n  Scenario").next().unwrap_or("").to_string())
            .unwrap_or_default();
        for sc in text.split("\n  Scenario").skip(1) {
            let name = sc
                .lines()
                .next()
                .unwrap_or("")
                .trim_start_matches(" Outline")
                .trim_start_matches(':')
                .trim()
                .to_string();
            let body = format!("{background}\n{sc}");
            if sc.starts_with(" Outline") {
                for block in sc.split("Examples:").skip(1) {
                    let rows: Vec<&str> = block
                        .lines()
                        .map(str::trim)
                        .skip_while(|l| l.is_empty())
                        .take_while(|l| l.starts_with('|') || l.starts_with('#'))
                        .filter(|l| l.starts_with('|'))
                        .collect();
                    let t = table(&rows);
                    let Some((header, values)) = t.split_first() else {
                        continue;
                    };
                    for v in values {
                        let mut s = body.split("Examples:").next().unwrap_or("").to_string();
                        for (k, x) in header.iter().zip(v) {
                            s = s.replace(&format!("<{k}>"), x);
                        }
                        out.push(Scenario {
                            area: area.clone(),
                            file: rel.clone(),
                            name: name.clone(),
                            text: s,
                        });
                    }
                }
            } else {
                out.push(Scenario {
                    area: area.clone(),
                    file: rel.clone(),
                    name,
                    text: body,
                });
            }
        }
    }
    Ok(out)
}

/// A cell of a result or parameter table as a value.
fn cell_value(cell: &str) -> Result<Value, String> {
    match cell {
        "NaN" => return Ok(Value::Float(f64::NAN)),
        "Inf" => return Ok(Value::Float(f64::INFINITY)),
        "-Inf" => return Ok(Value::Float(f64::NEG_INFINITY)),
        _ => {}
    }
    let params = BTreeMap::new();
    plexus_query::run_standalone(&format!("RETURN {cell} AS v"), &params)
        .map_err(|e| format!("cannot read expected value {cell}: {e}"))
        .and_then(|t| {
            t.rows
                .into_iter()
                .next()
                .and_then(|r| r.into_iter().next())
                .ok_or_else(|| "no value".to_string())
        })
}

fn temporal_text(v: &Value) -> Option<String> {
    match v {
        Value::Date(_)
        | Value::LocalTime(_)
        | Value::Time(_)
        | Value::LocalDateTime(_)
        | Value::DateTime(_)
        | Value::Duration(_) => Some(v.to_string().trim_matches('\'').to_string()),
        _ => None,
    }
}

/// The TCK's equality: 1 ≠ 1.0, floats by exact value (NaN equals NaN),
/// temporal values by their string form.
fn same(expected: &Value, actual: &Value, ignore_list_order: bool) -> bool {
    match (expected, actual) {
        (Value::Float(a), Value::Float(b)) => a == b || (a.is_nan() && b.is_nan()),
        (Value::String(s), v) if temporal_text(v).is_some() => {
            temporal_text(v).as_deref() == Some(s.as_str())
        }
        (Value::List(a), Value::List(b)) if ignore_list_order => {
            let mut rest: Vec<&Value> = b.iter().collect();
            a.len() == b.len()
                && a.iter()
                    .all(|x| match rest.iter().position(|y| same(x, y, true)) {
                        Some(i) => {
                            rest.remove(i);
                            true
                        }
                        None => false,
                    })
        }
        (Value::List(a), Value::List(b)) => {
            a.len() == b.len() && a.iter().zip(b).all(|(x, y)| same(x, y, ignore_list_order))
        }
        (Value::Map(a), Value::Map(b)) => {
            a.len() == b.len()
                && a.iter()
                    .zip(b)
                    .all(|((k1, v1), (k2, v2))| k1 == k2 && same(v1, v2, ignore_list_order))
        }
        _ => expected == actual,
    }
}

/// Runs one scenario.
pub fn run(s: &Scenario) -> Outcome {
    let lines: Vec<&str> = s.text.lines().collect();
    let mut params = BTreeMap::new();
    let mut query: Option<String> = None;
    let mut i = 0;
    let docstring = |i: &mut usize| -> String {
        let mut q = Vec::new();
        *i += 2;
        while *i < lines.len() && lines[*i].trim() != "\"\"\"" {
            q.push(lines[*i]);
            *i += 1;
        }
        q.join("\n")
    };
    let table_at = |i: &mut usize| -> Vec<Vec<String>> {
        let mut rows = Vec::new();
        while *i + 1 < lines.len()
            && (lines[*i + 1].trim().starts_with('|') || lines[*i + 1].trim().starts_with('#'))
        {
            *i += 1;
            if lines[*i].trim().starts_with('|') {
                rows.push(split_row(lines[*i]));
            }
        }
        rows
    };
    let mut result: Option<Result<plexus_query::Table, plexus_query::QueryError>> = None;
    while i < lines.len() {
        let l = lines[i].trim();
        if l.starts_with("Given the ") && l.ends_with(" graph") {
            return Outcome::Failed("unsupported: named graph".into());
        } else if l.ends_with("having executed:") {
            return Outcome::Failed("unsupported: setup queries (writes)".into());
        } else if l.contains("there exists a procedure") {
            return Outcome::Failed("unsupported: procedures".into());
        } else if l.ends_with("executing control query:") {
            return Outcome::Failed("unsupported: control queries".into());
        } else if l.ends_with("parameters are:") {
            for row in table_at(&mut i) {
                if let [k, v] = row.as_slice() {
                    match cell_value(v) {
                        Ok(v) => {
                            params.insert(k.clone(), v);
                        }
                        Err(e) => return Outcome::Failed(e),
                    }
                }
            }
        } else if l.ends_with("executing query:") {
            let q = docstring(&mut i);
            result = Some(plexus_query::run_standalone(&q, &params));
            query = Some(q);
        } else if l.starts_with("Then the result should be empty") {
            match result.take() {
                Some(Ok(t)) if t.rows.is_empty() => {}
                Some(Ok(t)) => {
                    return Outcome::Failed(format!("expected no rows, got {}", t.rows.len()))
                }
                Some(Err(e)) => return Outcome::Failed(e.to_string()),
                None => return Outcome::Failed("no query".into()),
            }
        } else if l.starts_with("Then the result should be") {
            let ordered = l.contains("in order");
            let ignore = l.contains("ignoring element order for lists");
            let t = table_at(&mut i);
            let Some((header, rows)) = t.split_first() else {
                return Outcome::Failed("empty expectation".into());
            };
            let got = match result.take() {
                Some(Ok(t)) => t,
                Some(Err(e)) => return Outcome::Failed(e.to_string()),
                None => return Outcome::Failed("no query".into()),
            };
            if &got.columns != header {
                return Outcome::Failed(format!(
                    "columns {:?}, expected {:?}",
                    got.columns, header
                ));
            }
            let mut expected = Vec::new();
            for r in rows {
                match r
                    .iter()
                    .map(|c| cell_value(c))
                    .collect::<Result<Vec<_>, _>>()
                {
                    Ok(v) => expected.push(v),
                    Err(e) => return Outcome::Failed(e),
                }
            }
            if expected.len() != got.rows.len() {
                return Outcome::Failed(format!(
                    "{} rows, expected {}",
                    got.rows.len(),
                    expected.len()
                ));
            }
            let row_same = |a: &Vec<Value>, b: &Vec<Value>| {
                a.len() == b.len() && a.iter().zip(b).all(|(x, y)| same(x, y, ignore))
            };
            if ordered {
                if let Some(k) =
                    (0..expected.len()).find(|k| !row_same(&expected[*k], &got.rows[*k]))
                {
                    return Outcome::Failed(format!(
                        "row {k}: {:?}, expected {:?}",
                        got.rows[k], expected[k]
                    ));
                }
            } else {
                let mut rest: Vec<&Vec<Value>> = got.rows.iter().collect();
                for e in &expected {
                    match rest.iter().position(|g| row_same(e, g)) {
                        Some(p) => {
                            rest.remove(p);
                        }
                        None => {
                            return Outcome::Failed(format!(
                                "missing row {e:?}; got {:?}",
                                got.rows
                            ))
                        }
                    }
                }
            }
        } else if l.starts_with("Then a") && l.contains("should be raised") {
            // `Then a TypeError should be raised at runtime: InvalidArgumentType`:
            // the type and the detail must both match (a `*` detail matches any).
            let ty = l.split_whitespace().nth(2).unwrap_or("");
            let detail = l.rsplit(':').next().map(str::trim).unwrap_or("*");
            match result.take() {
                Some(Err(e))
                    if e.type_name() == ty && (detail == "*" || e.detail() == Some(detail)) => {}
                Some(Err(e)) => return Outcome::Failed(format!("expected {ty}, got {e}")),
                Some(Ok(_)) => {
                    return Outcome::Failed(format!("expected {ty}, the query succeeded"))
                }
                None => return Outcome::Failed("no query".into()),
            }
        } else if l.starts_with("And the side effects should be:") {
            let effects = table_at(&mut i);
            if effects.iter().any(|r| r.get(1).is_some_and(|v| v != "0")) {
                return Outcome::Failed("unsupported: side effects".into());
            }
        }
        i += 1;
    }
    if query.is_none() {
        return Outcome::Failed("no query in scenario".into());
    }
    if let Some(Err(e)) = result {
        return Outcome::Failed(format!("unexpected error: {e}"));
    }
    Outcome::Passed
}

/// Totals per area.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Summary {
    pub total: usize,
    pub passed: usize,
    pub areas: BTreeMap<String, (usize, usize)>,
}

/// Runs every scenario, keeping each with its outcome.
pub fn run_all(scenarios: Vec<Scenario>) -> Vec<(Scenario, Outcome)> {
    scenarios
        .into_iter()
        .map(|s| {
            let o = run(&s);
            (s, o)
        })
        .collect()
}

pub fn summarize(results: &[(Scenario, Outcome)]) -> Summary {
    let mut s = Summary::default();
    for (sc, o) in results {
        let e = s.areas.entry(sc.area.clone()).or_default();
        e.0 += 1;
        s.total += 1;
        if *o == Outcome::Passed {
            e.1 += 1;
            s.passed += 1;
        }
    }
    s
}

impl Summary {
    pub fn to_json(&self) -> String {
        let areas: Vec<String> = self
            .areas
            .iter()
            .map(|(a, (t, p))| format!("\"{a}\":{{\"total\":{t},\"passed\":{p}}}"))
            .collect();
        format!(
            "{{\"total\":{},\"passed\":{},\"failed\":{},\"areas\":{{{}}}}}",
            self.total,
            self.passed,
            self.total - self.passed,
            areas.join(",")
        )
    }

    pub fn markdown(&self, reasons: &BTreeMap<String, usize>) -> String {
        let mut s = format!(
            "# openCypher TCK\n\nGenerated by `cargo run --release -p plexus-testkit --bin tck -- --write-md docs/tck.md`.\n\n**{} of {} scenarios pass ({:.1}%).**\n\n| area | scenarios | passed |\n|---|---:|---:|\n",
            self.passed,
            self.total,
            100.0 * self.passed as f64 / self.total.max(1) as f64
        );
        for (a, (t, p)) in &self.areas {
            s += &format!("| {a} | {t} | {p} |\n");
        }
        s += "\n## Most common reasons for failing\n\n| reason | scenarios |\n|---|---:|\n";
        let mut r: Vec<_> = reasons.iter().collect();
        r.sort_by(|a, b| b.1.cmp(a.1));
        for (why, n) in r.into_iter().take(25) {
            s += &format!("| {} | {n} |\n", why.replace('|', "\\|"));
        }
        s
    }
}

/// A failure's reason with variable parts removed, for grouping.
pub fn reason(o: &Outcome) -> Option<String> {
    match o {
        Outcome::Passed => None,
        Outcome::Failed(m) => Some(
            m.split([':', '('])
                .next()
                .unwrap_or(m)
                .chars()
                .take(60)
                .collect(),
        ),
    }
}

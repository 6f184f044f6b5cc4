//! The Interactive reads (IS1–7, IC1–14) on Plexus, Kuzu and LadybugDB
//! side by side: the same generated graph (Plexus from the generator, the
//! peers from the files `export.rs` writes), the same parameters, each
//! query run `reps` times per engine. Rows are compared across engines —
//! each engine's own rows, read back as text — and medians reported.
//!
//! The peers run the translations in `ldbc-kuzu/` (Kuzu's dialect: one
//! table per node, `* SHORTEST`, no pattern comprehension); a file with
//! only comments says why the query is not translated.

use super::{read_parameters, reads, reference};
use plexus::{Database, Params, Value};
use serde_json::{json, Value as Json};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

const SCRIPT: &str = include_str!("../../peers/ldbc.py");

/// List columns whose order the query leaves open (`collect()` without an
/// order): compared as sets of elements.
const UNORDERED: &[(&str, &[&str])] = &[
    ("IC1", &["friendUniversities", "friendCompanies"]),
    ("IC12", &["tagNames"]),
];

/// One engine's run of one query.
#[derive(Debug, Clone, Default)]
pub struct Run {
    /// Each row as text, cell by cell (see [`canon`]).
    pub rows: Vec<Vec<String>>,
    pub seconds: Vec<f64>,
    /// Why it did not run: an error, or no translation.
    pub missing: Option<String>,
}

impl Run {
    pub fn median_ms(&self) -> Option<f64> {
        crate::percentile(&self.seconds, 0.5).map(|s| s * 1e3)
    }
}

/// One query on every engine, and whether their rows agree.
#[derive(Debug, Clone)]
pub struct Side {
    pub name: String,
    /// Engine name → its run, in the order the engines were given.
    pub runs: Vec<(String, Run)>,
}

impl Side {
    /// `Some(true)` when every engine that ran it returned the same rows
    /// (as a bag); `None` when fewer than two engines ran it.
    pub fn agree(&self) -> Option<bool> {
        let ran: Vec<Vec<Vec<String>>> = self
            .runs
            .iter()
            .filter(|(_, r)| r.missing.is_none())
            .map(|(_, r)| {
                let mut rows = r.rows.clone();
                rows.sort();
                rows
            })
            .collect();
        (ran.len() >= 2).then(|| ran.windows(2).all(|w| w[0] == w[1]))
    }
}

impl Side {
    /// Where the first engine's rows and another's part: a row of each
    /// that the other lacks (for the report, so a disagreement can be read).
    pub fn difference(&self) -> Option<String> {
        let (first, mine) = self.runs.iter().find(|(_, r)| r.missing.is_none())?;
        let lacks = |a: &Run, b: &Run| {
            a.rows
                .iter()
                .find(|r| !b.rows.contains(r))
                .map_or_else(|| "none".to_string(), |r| short(&r.join(", ")))
        };
        self.runs
            .iter()
            .filter(|(n, r)| n != first && r.missing.is_none())
            .find(|(_, r)| {
                let (mut a, mut b) = (mine.rows.clone(), r.rows.clone());
                a.sort();
                b.sort();
                a != b
            })
            .map(|(n, r)| {
                format!(
                    "{} rows {first}, {} {n}; only {first}: {}; only {n}: {}",
                    mine.rows.len(),
                    r.rows.len(),
                    lacks(mine, r),
                    lacks(r, mine)
                )
            })
    }
}

fn short(s: &str) -> String {
    if s.chars().count() > 120 {
        format!("{}…", s.chars().take(120).collect::<String>())
    } else {
        s.to_string()
    }
}

/// What the whole run measured.
pub struct Report {
    /// What the graph is ("the SNB-like graph at SF 1").
    pub data: String,
    pub reps: usize,
    pub queries: Vec<Side>,
    /// Engine → (version, load seconds).
    pub engines: Vec<(String, String, f64)>,
}

/// The names of the reads, in order.
fn read_names() -> Vec<String> {
    reads().into_iter().map(|(n, _, _)| n).collect()
}

/// A query's translation for the peers: its text without comment lines,
/// or why there is none.
pub fn translation(name: &str) -> Result<String, String> {
    let file = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("ldbc-kuzu")
        .join(format!("{name}.cypher"));
    let text = std::fs::read_to_string(&file).map_err(|e| format!("{}: {e}", file.display()))?;
    let (comments, body): (Vec<&str>, Vec<&str>) =
        text.lines().partition(|l| l.trim_start().starts_with("//"));
    let body = body.join("\n");
    if body.trim().is_empty() {
        let why: Vec<&str> = comments
            .iter()
            .map(|l| l.trim_start().trim_start_matches('/').trim())
            .collect();
        return Err(why.join(" "));
    }
    Ok(body)
}

/// Plexus values as JSON (parameters out, rows for comparison).
pub fn to_json(v: &Value) -> Json {
    match v {
        Value::Null => Json::Null,
        Value::Bool(b) => json!(b),
        Value::Int(i) => json!(i),
        Value::Float(f) => serde_json::Number::from_f64(*f).map_or(Json::Null, Json::Number),
        Value::String(s) => json!(s),
        Value::List(l) => l.iter().map(to_json).collect(),
        Value::Map(m) => m
            .iter()
            .map(|(k, v)| (k.to_string(), to_json(v)))
            .collect::<serde_json::Map<_, _>>()
            .into(),
        other => json!(other.to_string()),
    }
}

/// A value as text for comparison: scalars bare (so an integer a peer
/// had to give as text still compares equal), an integral float as the
/// integer, lists in brackets — sorted when `unordered`.
pub fn canon(v: &Json, unordered: bool) -> String {
    match v {
        Json::Null => "null".into(),
        Json::Bool(b) => b.to_string(),
        Json::Number(n) => match (n.as_i64(), n.as_f64()) {
            (Some(i), _) => i.to_string(),
            (None, Some(f)) if f.fract() == 0.0 && f.abs() < 1e15 => format!("{}", f as i64),
            (None, Some(f)) => format!("{f}"),
            _ => n.to_string(),
        },
        Json::String(s) => s.clone(),
        Json::Array(items) => {
            let mut parts: Vec<String> = items.iter().map(|x| canon(x, false)).collect();
            if unordered {
                parts.sort();
            }
            format!("[{}]", parts.join(", "))
        }
        Json::Object(m) => {
            let parts: Vec<String> = m
                .iter()
                .map(|(k, v)| format!("{k}: {}", canon(v, false)))
                .collect();
            format!("{{{}}}", parts.join(", "))
        }
    }
}

fn canon_rows(name: &str, columns: &[String], rows: &[Vec<Json>]) -> Vec<Vec<String>> {
    let loose: &[&str] = UNORDERED
        .iter()
        .find(|(q, _)| *q == name)
        .map_or(&[], |(_, c)| c);
    rows.iter()
        .map(|r| {
            r.iter()
                .enumerate()
                .map(|(i, v)| {
                    let col = columns.get(i).map_or("", String::as_str);
                    canon(v, loose.contains(&col))
                })
                .collect()
        })
        .collect()
}

/// The parameters a text names (`$name`), as JSON.
fn params_for(text: &str, all: &Params) -> Json {
    all.iter()
        .filter(|(k, _)| {
            text.match_indices(&format!("${k}")).any(|(at, m)| {
                let next = text[at + m.len()..].chars().next();
                !next.is_some_and(|c| c.is_alphanumeric() || c == '_')
            })
        })
        .map(|(k, v)| (k.clone(), to_json(v)))
        .collect::<serde_json::Map<_, _>>()
        .into()
}

/// Runs the reads on Plexus `reps` times each; returns each query's run
/// and its columns.
fn plexus_runs(
    db: &Database,
    graph: &str,
    dir: &Path,
    params: &BTreeMap<String, Vec<Params>>,
    reps: usize,
) -> Result<Vec<(String, Run, Vec<String>)>, String> {
    let mut out = Vec::new();
    for (name, version, stem) in reads() {
        let text = reference(dir, version, &stem)?;
        let mut run = Run::default();
        let mut columns = Vec::new();
        // Each parameter set's rows, from its last run, one after another.
        for params in params.get(&name).into_iter().flatten() {
            let mut rows = Vec::new();
            for _ in 0..reps.max(1) {
                let start = Instant::now();
                match db.query(graph, &text, params) {
                    Ok(t) => {
                        run.seconds.push(start.elapsed().as_secs_f64());
                        let json: Vec<Vec<Json>> = t
                            .rows
                            .iter()
                            .map(|r| r.iter().map(to_json).collect())
                            .collect();
                        rows = canon_rows(&name, &t.columns, &json);
                        columns = t.columns;
                    }
                    Err(e) => {
                        run.missing = Some(format!("error: {e}"));
                        break;
                    }
                }
            }
            run.rows.extend(rows);
        }
        out.push((name, run, columns));
    }
    Ok(out)
}

/// Where the peers' work goes, and how.
pub struct Options {
    pub engines: Vec<String>,
    pub reps: usize,
    /// Rounds of every engine in turn (see [`run`]).
    pub rounds: usize,
    /// The peers' query threads; 0 for their default (every core). Kuzu
    /// and LadybugDB answered IC14 on one small graph differently from run
    /// to run with several threads (a path's weight 0.5 or 0), never with
    /// one: the test that compares rows asks for one.
    pub peer_threads: usize,
    pub venv: Option<PathBuf>,
    pub work: PathBuf,
}

/// Runs one peer on the exported files; returns (version, load seconds,
/// runs by query name).
fn peer(
    engine: &str,
    o: &Options,
    schema: &Json,
    files: &Path,
    params: &BTreeMap<String, Vec<Params>>,
    columns: &BTreeMap<String, Vec<String>>,
) -> Result<(String, f64, BTreeMap<String, Run>), String> {
    let mut runs = BTreeMap::new();
    let mut queries = Vec::new();
    for name in read_names() {
        match translation(&name) {
            Ok(text) => {
                for set in params.get(&name).into_iter().flatten() {
                    let p = params_for(&text, set);
                    queries.push(json!({"name": name, "text": text, "params": p}));
                }
            }
            Err(why) => {
                runs.insert(
                    name,
                    Run {
                        missing: Some(why),
                        ..Run::default()
                    },
                );
            }
        }
    }
    let job = json!({
        "engine": engine, "dir": files, "tmp": o.work, "schema": schema,
        "queries": queries, "reps": o.reps.max(1), "threads": o.peer_threads,
    });
    let out = crate::run_peer_script(o.venv.as_deref(), &o.work, "ldbc", SCRIPT, &job)
        .map_err(|e| format!("{engine}: {e}"))?;
    // A query run with several parameter sets reports once for each: its
    // rows and times are gathered, as Plexus's are.
    for q in out["queries"].as_array().into_iter().flatten() {
        let name = q["name"].as_str().unwrap_or("").to_string();
        let run = runs.entry(name.clone()).or_default();
        if let Some(e) = q["error"].as_str() {
            run.missing = Some(format!("error: {e}"));
            continue;
        }
        let rows: Vec<Vec<Json>> = q["rows"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|r| r.as_array().cloned().unwrap_or_default())
            .collect();
        let cols = columns.get(&name).map_or(&[][..], Vec::as_slice);
        run.rows.extend(canon_rows(&name, cols, &rows));
        run.seconds.extend(
            q["seconds"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Json::as_f64),
        );
    }
    let version = out["engine_version"].as_str().unwrap_or("").to_string();
    Ok((version, out["load_seconds"].as_f64().unwrap_or(0.0), runs))
}

/// The graph the reads run on, as Plexus loaded it.
pub struct Data<'a> {
    pub db: &'a Database,
    pub graph: &'a str,
    /// What Plexus was loaded from (the peers load its export).
    pub source: &'a dyn crate::gen::Generator,
    /// For the report: "the SNB-like graph at SF 1".
    pub what: String,
    /// Parameter sets that replace those picked from the graph, by query
    /// (LDBC's substitution parameters): the query runs with each.
    pub given: BTreeMap<String, Vec<Params>>,
}

/// Runs the reads on Plexus and on each peer of `o.engines`; `dir` is the
/// LDBC suite. The engines take turns for `o.rounds` rounds, each running
/// every read `o.reps` times: a shared machine's load drifts over seconds,
/// and one engine run after another would carry the drift into their
/// ratio. A query's times are gathered over all rounds; its rows are the
/// first round's (a peer loads its files afresh each round).
pub fn run(d: &Data, dir: &Path, o: &Options) -> Result<Report, String> {
    let (db, graph) = (d.db, d.graph);
    let params = read_parameters(db, graph, &d.given)?;
    let peers: Vec<&String> = o.engines.iter().filter(|e| *e != "plexus").collect();
    let files = o.work.join("files");
    let schema = match peers.is_empty() {
        true => Json::Null,
        false => super::export::write(d.source, &files)?,
    };
    let mut engines = vec![(
        "plexus".to_string(),
        env!("CARGO_PKG_VERSION").to_string(),
        0.0,
    )];
    let mut sides: Vec<Side> = Vec::new();
    let mut columns = BTreeMap::new();
    for round in 0..o.rounds.max(1) {
        for (name, run, cols) in plexus_runs(db, graph, dir, &params, o.reps)? {
            columns.insert(name.clone(), cols);
            match sides.iter_mut().find(|s| s.name == name) {
                Some(s) => gather(&mut s.runs, "plexus", run),
                None => sides.push(Side {
                    name,
                    runs: vec![("plexus".into(), run)],
                }),
            }
        }
        for engine in &peers {
            eprintln!(
                "running the LDBC reads on {engine} (round {}) ...",
                round + 1
            );
            let (version, load, mut runs) = peer(engine, o, &schema, &files, &params, &columns)?;
            if round == 0 {
                engines.push(((*engine).clone(), version, load));
            }
            for s in &mut sides {
                let run = runs.remove(&s.name).unwrap_or_else(|| Run {
                    missing: Some("the peer script reported nothing".into()),
                    ..Run::default()
                });
                gather(&mut s.runs, engine, run);
            }
        }
    }
    Ok(Report {
        data: d.what.clone(),
        reps: o.reps * o.rounds.max(1),
        queries: sides,
        engines,
    })
}

/// Adds a round's run of `engine` to a query's runs: its times join the
/// earlier rounds'; the first round's rows stay; a failure in any round
/// is reported.
fn gather(runs: &mut Vec<(String, Run)>, engine: &str, run: Run) {
    match runs.iter_mut().find(|(n, _)| n == engine) {
        None => runs.push((engine.to_string(), run)),
        Some((_, have)) => {
            have.seconds.extend(run.seconds);
            if have.missing.is_none() {
                have.missing = run.missing;
            }
        }
    }
}

/// Whether Plexus's median is below every peer's that ran the query.
fn plexus_fastest(s: &Side) -> Option<bool> {
    let (_, p) = s.runs.first()?;
    let mine = p.median_ms()?;
    let peers: Vec<f64> = s.runs[1..]
        .iter()
        .filter_map(|(_, r)| r.median_ms())
        .collect();
    (!peers.is_empty()).then(|| peers.iter().all(|x| mine < *x))
}

/// The report: one row per query, medians in milliseconds.
pub fn markdown(r: &Report, command: &str) -> String {
    let names: Vec<&str> = r.engines.iter().map(|(n, _, _)| n.as_str()).collect();
    let mut s = format!(
        "# LDBC SNB Interactive reads, side by side\n\nGenerated by `{command}`: IS1–7 and \
         IC1–14 on {}, each query \
         run {} times per engine, in rounds of every engine in turn (median in ms, the first, \
         cold run included). Plexus runs the \
         reference Cypher of `../shared/suites/ldbc/v1`; Kuzu and LadybugDB run the \
         translations in `crates/plexus-bench/ldbc-kuzu/`. *rows equal*: every engine that \
         ran the query returned the same rows (compared as text, as a bag).\n\n",
        r.data, r.reps
    );
    for (n, v, load) in &r.engines {
        if n != "plexus" {
            s += &format!("* {n} {v}: loaded the files in {load:.2} s\n");
        }
    }
    let count = |prefix: &str| {
        let of: Vec<&Side> = r
            .queries
            .iter()
            .filter(|q| q.name.starts_with(prefix))
            .collect();
        let fastest = of
            .iter()
            .filter(|q| plexus_fastest(q) == Some(true))
            .count();
        let equal = of.iter().filter(|q| q.agree() == Some(true)).count();
        (fastest, equal, of.len())
    };
    for prefix in ["IS", "IC"] {
        let (fastest, equal, n) = count(prefix);
        s += &format!(
            "* {prefix}: Plexus's median lowest on {fastest} of {n}; rows equal on {equal} of {n}\n"
        );
    }
    s += "\n| query | rows |";
    for n in &names {
        s += &format!(" {n} ms |");
    }
    s += " rows equal | note |\n|---|---:|";
    s += &"---:|".repeat(names.len());
    s += "---|---|\n";
    for q in &r.queries {
        let rows = q.runs.first().map_or(0, |(_, r)| r.rows.len());
        s += &format!("| {} | {rows} |", q.name);
        for (_, run) in &q.runs {
            s += &run
                .median_ms()
                .map_or_else(|| " — |".to_string(), |m| format!(" {m:.2} |"));
        }
        let eq = match q.agree() {
            Some(true) => "yes",
            Some(false) => "**no**",
            None => "—",
        };
        let notes: Vec<String> = q
            .runs
            .iter()
            .filter_map(|(n, r)| r.missing.as_ref().map(|m| format!("{n}: {m}")))
            .chain(q.difference())
            .collect();
        s += &format!(
            " {eq} | {} |\n",
            notes.join("; ").replace('|', "\\|").replace('\n', " ")
        );
    }
    s
}

/// The JSON lines: one per query and engine.
pub fn lines(r: &Report) -> Vec<Json> {
    let mut out = Vec::new();
    for q in &r.queries {
        for (engine, run) in &q.runs {
            out.push(json!({
                "query": q.name, "engine": engine, "data": r.data, "rows": run.rows.len(),
                "seconds": run.seconds, "median_ms": run.median_ms(), "missing": run.missing,
                "rows_equal": q.agree(),
            }));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rounds pool their times per engine; the first round's rows stay, and
    /// a later round's failure is not lost.
    #[test]
    fn rounds_gather_times_per_engine() {
        let run = |rows: &[&str], seconds: &[f64], missing: Option<&str>| Run {
            rows: rows.iter().map(|r| vec![r.to_string()]).collect(),
            seconds: seconds.to_vec(),
            missing: missing.map(String::from),
        };
        let mut runs = Vec::new();
        gather(&mut runs, "plexus", run(&["a"], &[1.0, 2.0], None));
        gather(&mut runs, "kuzu", run(&["a"], &[5.0], None));
        gather(&mut runs, "plexus", run(&["b"], &[3.0], None));
        gather(&mut runs, "kuzu", run(&[], &[], Some("error: gone")));
        assert_eq!(runs.len(), 2);
        assert_eq!(runs[0].1.seconds, vec![1.0, 2.0, 3.0]);
        assert_eq!(runs[0].1.rows, vec![vec!["a".to_string()]]);
        assert_eq!(runs[0].1.median_ms(), Some(2000.0));
        assert_eq!(runs[1].1.seconds, vec![5.0]);
        assert_eq!(runs[1].1.missing.as_deref(), Some("error: gone"));
    }

    #[test]
    fn values_compare_as_text_with_open_lists_sorted() {
        let plexus = to_json(&Value::List(vec![
            Value::List(vec!["org1".into(), Value::Int(2001)]),
            Value::List(vec!["org0".into(), Value::Int(2005)]),
        ]));
        let peer = json!([["org0", "2005"], ["org1", "2001"]]);
        assert_eq!(canon(&plexus, true), canon(&peer, true));
        assert_ne!(canon(&plexus, false), canon(&peer, false));
        assert_eq!(canon(&json!(2.0), false), "2");
        assert_eq!(canon(&json!(null), false), "null");
    }

    #[test]
    fn rows_agree_as_a_bag_and_only_between_engines_that_ran() {
        let run = |rows: &[&[&str]]| Run {
            rows: rows
                .iter()
                .map(|r| r.iter().map(|c| c.to_string()).collect())
                .collect(),
            seconds: vec![0.001],
            missing: None,
        };
        let mut side = Side {
            name: "IS3".into(),
            runs: vec![
                ("plexus".into(), run(&[&["1"], &["2"]])),
                ("kuzu".into(), run(&[&["2"], &["1"]])),
            ],
        };
        assert_eq!(side.agree(), Some(true));
        side.runs.push(("ladybug".into(), run(&[&["1"]])));
        assert_eq!(side.agree(), Some(false));
        side.runs[2].1.missing = Some("error".into());
        assert_eq!(side.agree(), Some(true));
        side.runs[1].1.missing = Some("error".into());
        assert_eq!(side.agree(), None);
    }

    #[test]
    fn parameters_are_passed_only_when_the_text_names_them() {
        let all: Params = [
            ("personId".to_string(), Value::Int(1)),
            ("person".to_string(), Value::Int(2)),
        ]
        .into();
        assert_eq!(
            params_for("MATCH (p {id: $personId})", &all),
            json!({"personId": 1})
        );
    }

    #[test]
    fn every_read_has_a_translation_or_a_reason() {
        for name in read_names() {
            match translation(&name) {
                Ok(text) => assert!(text.contains("RETURN"), "{name}"),
                Err(why) => assert!(why.starts_with("not translated"), "{name}: {why}"),
            }
        }
    }
}

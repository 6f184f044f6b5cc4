//! The openCypher TCK harness: reads `.feature` files (Scenario Outlines
//! expanded), runs each scenario on a fresh database, and compares results,
//! errors and side effects as the TCK's README describes.
//!
//! Each scenario runs on a fresh in-memory store, every query in its own
//! write transaction that commits when the query succeeds. Side effects are
//! measured as the TCK defines them: differences between snapshots of the
//! graph's nodes, relationships, property triples and distinct labels.
//! Scenarios that register test procedures fail as "unsupported" — counted,
//! never skipped.

use plexus_common::{NodeValue, PathValue, RelValue, Value};
use plexus_storage::{GraphRead, Storage, DEFAULT_GRAPH};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// One expanded scenario.
#[derive(Debug, Clone)]
pub struct Scenario {
    /// `clauses/match`, `expressions/list`, …
    pub area: String,
    pub file: String,
    pub name: String,
    pub text: String,
    /// The suite's folder, for named graphs.
    pub dir: PathBuf,
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

/// Splits `| a | b |` into cells, keeping `|` inside quotes. Gherkin
/// escapes a backslash in a cell as `\\` and a bar as `\|`; what is left is
/// Cypher, where a backslash inside quotes escapes the next character.
fn split_row(line: &str) -> Vec<String> {
    let inner = line.trim().trim_start_matches('|').trim_end_matches('|');
    let mut cells = Vec::new();
    let mut cur = String::new();
    let mut quote: Option<char> = None;
    let mut escaped = false;
    let mut chars = inner.chars().peekable();
    while let Some(mut c) = chars.next() {
        let mut bar = false;
        if c == '\\' {
            if let Some(n) = chars.next_if(|n| *n == '\\' || *n == '|') {
                bar = n == '|';
                c = n;
            }
        }
        if escaped {
            cur.push(c);
            escaped = false;
            continue;
        }
        match (c, quote) {
            ('\\', Some(_)) => {
                cur.push(c);
                escaped = true;
            }
            ('\'' | '"', None) => {
                quote = Some(c);
                cur.push(c);
            }
            (q, Some(open)) if q == open => {
                quote = None;
                cur.push(c);
            }
            ('|', None) if !bar => cells.push(std::mem::take(&mut cur).trim().to_string()),
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
            // Commented-out lines are no steps: a scenario commented out
            // after this one would otherwise run its query here.
            let sc_steps: Vec<&str> = sc
                .lines()
                .filter(|l| !l.trim_start().starts_with('#'))
                .collect();
            let body = format!("{background}\n{}", sc_steps.join("\n"));
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
                            dir: dir.to_path_buf(),
                        });
                    }
                }
            } else {
                out.push(Scenario {
                    area: area.clone(),
                    file: rel.clone(),
                    name,
                    text: body,
                    dir: dir.to_path_buf(),
                });
            }
        }
    }
    Ok(out)
}

/// A cell of a result or parameter table as a value: the TCK's notation
/// (nodes, relationships and paths included), else a Cypher literal.
fn cell_value(cell: &str) -> Result<Value, String> {
    let mut p = Notation {
        s: cell.as_bytes(),
        at: 0,
    };
    if let Some(v) = p.value() {
        p.ws();
        if p.at == p.s.len() {
            return Ok(v);
        }
    }
    literal_value(cell)
}

/// A parser for the TCK's value notation. Expected nodes carry no
/// identity; a relationship's `start`/`end` are positions in its path.
struct Notation<'a> {
    s: &'a [u8],
    at: usize,
}

impl Notation<'_> {
    fn ws(&mut self) {
        while self.s.get(self.at).is_some_and(u8::is_ascii_whitespace) {
            self.at += 1;
        }
    }

    fn peek(&mut self) -> Option<u8> {
        self.ws();
        self.s.get(self.at).copied()
    }

    fn eat(&mut self, c: u8) -> Option<()> {
        (self.peek()? == c).then(|| self.at += 1)
    }

    fn name(&mut self) -> Option<String> {
        self.ws();
        if self.s.get(self.at) == Some(&b'`') {
            let end = self.s[self.at + 1..].iter().position(|c| *c == b'`')?;
            let n = String::from_utf8(self.s[self.at + 1..self.at + 1 + end].to_vec()).ok()?;
            self.at += end + 2;
            return Some(n);
        }
        let start = self.at;
        while self
            .s
            .get(self.at)
            .is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_')
        {
            self.at += 1;
        }
        (self.at > start).then(|| String::from_utf8_lossy(&self.s[start..self.at]).into())
    }

    fn value(&mut self) -> Option<Value> {
        match self.peek()? {
            b'(' => self.node().map(|n| Value::Node(std::sync::Arc::new(n))),
            b'[' => {
                let save = self.at;
                self.at += 1;
                if self.peek() == Some(b':') {
                    self.at = save;
                    return self
                        .rel()
                        .map(|r| Value::Relationship(std::sync::Arc::new(r)));
                }
                let mut items = Vec::new();
                if self.eat(b']').is_some() {
                    return Some(Value::List(items));
                }
                loop {
                    items.push(self.value()?);
                    if self.eat(b',').is_none() {
                        break;
                    }
                }
                self.eat(b']')?;
                Some(Value::List(items))
            }
            b'{' => self.map().map(Value::Map),
            b'<' => self.path(),
            b'\'' => self.string(),
            _ => {
                let start = self.at;
                while self.s.get(self.at).is_some_and(|c| {
                    c.is_ascii_alphanumeric() || matches!(c, b'.' | b'-' | b'+' | b'_')
                }) {
                    self.at += 1;
                }
                let tok = std::str::from_utf8(&self.s[start..self.at]).ok()?;
                match tok {
                    "null" => Some(Value::Null),
                    "true" => Some(Value::Bool(true)),
                    "false" => Some(Value::Bool(false)),
                    "NaN" => Some(Value::Float(f64::NAN)),
                    "Inf" => Some(Value::Float(f64::INFINITY)),
                    "-Inf" => Some(Value::Float(f64::NEG_INFINITY)),
                    _ if tok.contains(['.', 'e', 'E']) => tok.parse().ok().map(Value::Float),
                    _ => tok.parse().ok().map(Value::Int),
                }
            }
        }
    }

    fn string(&mut self) -> Option<Value> {
        self.at += 1;
        let mut out = Vec::new();
        loop {
            let c = *self.s.get(self.at)?;
            self.at += 1;
            match c {
                b'\'' => break,
                b'\\' => {
                    let e = *self.s.get(self.at)?;
                    self.at += 1;
                    out.push(match e {
                        b'n' => b'\n',
                        b't' => b'\t',
                        other => other,
                    });
                }
                other => out.push(other),
            }
        }
        String::from_utf8(out).ok().map(Value::String)
    }

    fn map(&mut self) -> Option<BTreeMap<String, Value>> {
        self.eat(b'{')?;
        let mut m = BTreeMap::new();
        if self.eat(b'}').is_some() {
            return Some(m);
        }
        loop {
            let k = self.name()?;
            self.eat(b':')?;
            m.insert(k, self.value()?);
            if self.eat(b',').is_none() {
                break;
            }
        }
        self.eat(b'}')?;
        Some(m)
    }

    fn node(&mut self) -> Option<NodeValue> {
        self.eat(b'(')?;
        let mut n = NodeValue::default();
        while self.eat(b':').is_some() {
            n.labels.push(self.name()?);
        }
        if self.peek() == Some(b'{') {
            n.props = self.map()?;
        }
        self.eat(b')')?;
        Some(n)
    }

    fn rel(&mut self) -> Option<RelValue> {
        self.eat(b'[')?;
        self.eat(b':')?;
        let mut r = RelValue {
            rel_type: self.name()?,
            ..RelValue::default()
        };
        if self.peek() == Some(b'{') {
            r.props = self.map()?;
        }
        self.eat(b']')?;
        Some(r)
    }

    fn path(&mut self) -> Option<Value> {
        self.eat(b'<')?;
        let mut p = PathValue {
            nodes: vec![self.node()?],
            rels: vec![],
        };
        loop {
            let i = p.nodes.len() as u64 - 1;
            let (mut r, forward) = match self.peek()? {
                b'-' => {
                    self.at += 1;
                    let r = self.rel()?;
                    self.eat(b'-')?;
                    self.eat(b'>')?;
                    (r, true)
                }
                b'<' => {
                    self.at += 1;
                    self.eat(b'-')?;
                    let r = self.rel()?;
                    self.eat(b'-')?;
                    (r, false)
                }
                _ => break,
            };
            (r.start, r.end) = if forward { (i, i + 1) } else { (i + 1, i) };
            p.rels.push(r);
            p.nodes.push(self.node()?);
        }
        self.eat(b'>')?;
        Some(Value::Path(std::sync::Arc::new(p)))
    }
}

/// A cell read as a Cypher literal expression.
fn literal_value(cell: &str) -> Result<Value, String> {
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
        (Value::Map(a), Value::Map(b)) => same_map(a, b, ignore_list_order),
        (Value::Node(a), Value::Node(b)) => same_node(a, b),
        (Value::Relationship(a), Value::Relationship(b)) => same_rel(a, b),
        (Value::Path(a), Value::Path(b)) => {
            a.nodes.len() == b.nodes.len()
                && a.nodes.iter().zip(&b.nodes).all(|(x, y)| same_node(x, y))
                && a.rels.iter().zip(&b.rels).enumerate().all(|(i, (x, y))| {
                    let forward = x.start == i as u64;
                    let actual_forward = y.start == b.nodes[i].id;
                    same_rel(x, y) && forward == actual_forward
                })
        }
        _ => expected == actual,
    }
}

fn same_map(a: &BTreeMap<String, Value>, b: &BTreeMap<String, Value>, ignore: bool) -> bool {
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|((k1, v1), (k2, v2))| k1 == k2 && same(v1, v2, ignore))
}

/// Nodes compare by labels (as sets) and properties; identity is not compared.
fn same_node(a: &NodeValue, b: &NodeValue) -> bool {
    a.labels.iter().collect::<BTreeSet<_>>() == b.labels.iter().collect::<BTreeSet<_>>()
        && same_map(&a.props, &b.props, false)
}

fn same_rel(a: &RelValue, b: &RelValue) -> bool {
    a.rel_type == b.rel_type && same_map(&a.props, &b.props, false)
}

/// What the TCK's side-effect counters compare: nodes, relationships,
/// (entity, key, value) property triples and distinct labels.
#[derive(Default)]
struct Snapshot {
    nodes: BTreeSet<u64>,
    rels: BTreeSet<u64>,
    props: BTreeSet<(bool, u64, String, String)>,
    labels: BTreeSet<String>,
}

fn snapshot(db: &Storage) -> Result<Snapshot, String> {
    let txn = db.read(DEFAULT_GRAPH).map_err(|e| e.to_string())?;
    let mut s = Snapshot::default();
    for id in txn.nodes() {
        let id = id.map_err(|e| e.to_string())?;
        if let Some(n) = txn.node(id).map_err(|e| e.to_string())? {
            s.nodes.insert(id.0);
            s.labels.extend(n.labels);
            for (k, v) in n.props {
                s.props.insert((true, id.0, k, v.to_string()));
            }
        }
    }
    for id in txn.edges() {
        let id = id.map_err(|e| e.to_string())?;
        if let Some(e) = txn.edge(id).map_err(|e| e.to_string())? {
            s.rels.insert(id.0);
            for (k, v) in e.props {
                s.props.insert((false, id.0, k, v.to_string()));
            }
        }
    }
    Ok(s)
}

/// The eight counters between two snapshots, by their TCK names.
fn effects(a: &Snapshot, b: &Snapshot) -> BTreeMap<&'static str, usize> {
    let d = |x: &BTreeSet<_>, y: &BTreeSet<_>| x.difference(y).count();
    let mut m = BTreeMap::new();
    m.insert("+nodes", b.nodes.difference(&a.nodes).count());
    m.insert("-nodes", a.nodes.difference(&b.nodes).count());
    m.insert("+relationships", b.rels.difference(&a.rels).count());
    m.insert("-relationships", a.rels.difference(&b.rels).count());
    m.insert("+properties", d(&b.props, &a.props));
    m.insert("-properties", d(&a.props, &b.props));
    m.insert("+labels", b.labels.difference(&a.labels).count());
    m.insert("-labels", a.labels.difference(&b.labels).count());
    m
}

/// A test procedure from its signature
/// (`test.my.proc(in :: INTEGER?) :: (out :: STRING?)`) and a table whose
/// columns are its inputs then its outputs: called with arguments, it
/// yields the output part of every row whose input part equals them.
fn test_procedure(
    sig: &str,
    table: &[Vec<String>],
) -> Result<
    (
        plexus_query::Signature,
        std::sync::Arc<plexus_query::ProcedureFn>,
    ),
    String,
> {
    let (name, rest) = sig.split_once('(').ok_or("no argument list")?;
    let (ins, outs) = rest.split_once(") ::").ok_or("no output list")?;
    let fields = |s: &str| -> Result<Vec<(String, plexus_query::ArgType)>, String> {
        s.split(',')
            .map(str::trim)
            .filter(|f| !f.is_empty())
            .map(|f| {
                let (n, t) = f.split_once("::").ok_or_else(|| format!("field {f}"))?;
                let t = plexus_query::ArgType::parse(t).ok_or_else(|| format!("type in {f}"))?;
                Ok((n.trim().to_string(), t))
            })
            .collect()
    };
    let inputs = fields(ins)?;
    let outputs: Vec<String> = fields(outs.trim().trim_start_matches('(').trim_end_matches(')'))?
        .into_iter()
        .map(|(n, _)| n)
        .collect();
    let mut rows = Vec::new();
    for r in table.iter().skip(1) {
        rows.push(
            r.iter()
                .map(|c| cell_value(c))
                .collect::<Result<Vec<_>, _>>()?,
        );
    }
    let n_in = inputs.len();
    let body = move |args: &[Value]| {
        Ok(rows
            .iter()
            .filter(|r| r.iter().zip(args).all(|(a, b)| same(a, b, false) || a == b))
            .map(|r| r[n_in..].to_vec())
            .collect())
    };
    let sig = plexus_query::Signature {
        name: name.trim().to_string(),
        inputs,
        outputs,
    };
    Ok((sig, std::sync::Arc::new(body)))
}

/// Runs one query in its own write transaction, committing on success.
fn execute(
    db: &Storage,
    q: &str,
    params: &BTreeMap<String, Value>,
    procs: &plexus_query::Procedures,
) -> Result<plexus_query::Table, plexus_query::QueryError> {
    let mut txn = db
        .write(DEFAULT_GRAPH)
        .map_err(plexus_query::QueryError::from)?;
    let t = plexus_query::Prepared::new(q)?.run_write(
        &mut txn,
        params,
        Some(procs),
        &plexus_query::Guard::unlimited(),
    )?;
    txn.commit().map_err(plexus_query::QueryError::from)?;
    Ok(t)
}

/// Where a scenario's graph lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Store {
    Memory,
    /// A fresh LMDB environment in a temporary folder (without syncs).
    Lmdb,
    /// A schema of its own in the PostgreSQL server `PLEXUS_TEST_POSTGRES`
    /// names, dropped after the scenario.
    #[cfg(feature = "postgres")]
    Postgres,
}

/// What must outlive a scenario's store, and be cleaned up after it.
enum Keep {
    Nothing,
    Dir(#[expect(dead_code, reason = "kept for its Drop")] tempfile::TempDir),
    #[cfg(feature = "postgres")]
    Schema {
        url: String,
        schema: String,
    },
}

impl Drop for Keep {
    fn drop(&mut self) {
        #[cfg(feature = "postgres")]
        if let Keep::Schema { url, schema } = self {
            let _ = plexus_kv::destroy_postgres(url, schema);
        }
    }
}

impl Store {
    pub fn parse(name: &str) -> Option<Store> {
        match name {
            "memory" => Some(Store::Memory),
            "lmdb" => Some(Store::Lmdb),
            #[cfg(feature = "postgres")]
            "postgres" => Some(Store::Postgres),
            _ => None,
        }
    }

    /// A store, and what must outlive it.
    fn open(self) -> Result<(Storage, Keep), String> {
        match self {
            Store::Memory => Storage::in_memory()
                .map(|s| (s, Keep::Nothing))
                .map_err(|e| e.to_string()),
            #[cfg(feature = "postgres")]
            Store::Postgres => {
                use std::sync::atomic::{AtomicU64, Ordering};
                static NEXT: AtomicU64 = AtomicU64::new(0);
                let url = std::env::var("PLEXUS_TEST_POSTGRES")
                    .map_err(|_| "PLEXUS_TEST_POSTGRES names no PostgreSQL server".to_string())?;
                let schema = format!(
                    "tck_{}_{}",
                    std::process::id(),
                    NEXT.fetch_add(1, Ordering::Relaxed)
                );
                let opts = plexus_kv::KvOptions {
                    durable: false,
                    ..Default::default()
                };
                let keep = Keep::Schema {
                    url: url.clone(),
                    schema: schema.clone(),
                };
                let kv =
                    plexus_kv::open_postgres(&url, &schema, plexus_storage::KEYSPACE_NAMES, &opts)
                        .map_err(|e| e.to_string())?;
                let s = Storage::open(kv).map_err(|e| e.to_string())?;
                Ok((s, keep))
            }
            Store::Lmdb => {
                let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
                let opts = plexus_kv::KvOptions {
                    durable: false,
                    ..Default::default()
                };
                let kv = plexus_kv::open(
                    plexus_kv::Backend::Lmdb,
                    dir.path(),
                    plexus_storage::KEYSPACE_NAMES,
                    &opts,
                )
                .map_err(|e| e.to_string())?;
                let s = Storage::open(kv).map_err(|e| e.to_string())?;
                Ok((s, Keep::Dir(dir)))
            }
        }
    }
}

/// A scenario's Cypher: the queries that set its graph up, in order, and
/// the query under test (seeds for the TCK-seeded fuzzer).
#[derive(Debug, Clone, Default)]
pub struct Queries {
    pub setup: Vec<String>,
    pub query: Option<String>,
    /// Whether it starts from a named graph (not in `setup`).
    pub named_graph: bool,
}

/// The Cypher of a scenario, without running it.
pub fn queries(s: &Scenario) -> Queries {
    let lines: Vec<&str> = s.text.lines().collect();
    let mut out = Queries::default();
    let mut i = 0;
    while i < lines.len() {
        let l = lines[i].trim();
        let setup = l.ends_with("having executed:");
        if setup || l.ends_with("executing query:") {
            let mut q = Vec::new();
            i += 2;
            while i < lines.len() && lines[i].trim() != "\"\"\"" {
                q.push(lines[i]);
                i += 1;
            }
            let q = q.join("\n");
            if setup {
                out.setup.push(q);
            } else {
                out.query = Some(q);
            }
        } else if l.starts_with("Given the ") && l.ends_with(" graph") {
            out.named_graph = true;
        }
        i += 1;
    }
    out
}

/// Runs one scenario in memory.
pub fn run(s: &Scenario) -> Outcome {
    run_on(s, Store::Memory)
}

/// Runs one scenario on a fresh store of the given kind.
pub fn run_on(s: &Scenario, store: Store) -> Outcome {
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
    let (db, _dir) = match store.open() {
        Ok(db) => db,
        Err(e) => return Outcome::Failed(format!("cannot open a store: {e}")),
    };
    let mut before: Option<Snapshot> = None;
    let mut procs = plexus_query::Procedures::new();
    let no_params = BTreeMap::new();
    while i < lines.len() {
        let l = lines[i].trim();
        if l.starts_with("Given the ") && l.ends_with(" graph") {
            let name = l
                .trim_start_matches("Given the ")
                .trim_end_matches(" graph");
            let file = s
                .dir
                .join("graphs")
                .join(name)
                .join(format!("{name}.cypher"));
            let script = match std::fs::read_to_string(&file) {
                Ok(t) => t,
                Err(e) => return Outcome::Failed(format!("named graph {}: {e}", file.display())),
            };
            for stmt in script.split(';').filter(|q| !q.trim().is_empty()) {
                if let Err(e) = execute(&db, stmt, &no_params, &procs) {
                    return Outcome::Failed(format!("named graph {name}: {e}"));
                }
            }
        } else if l.ends_with("having executed:") {
            let q = docstring(&mut i);
            if let Err(e) = execute(&db, &q, &no_params, &procs) {
                return Outcome::Failed(format!("setup query failed: {e}"));
            }
        } else if let Some(sig) = l
            .strip_prefix("And there exists a procedure ")
            .map(|x| x.trim_end_matches(':'))
        {
            let t = table_at(&mut i);
            match test_procedure(sig, &t) {
                Ok((sig, body)) => procs.register(sig, body),
                Err(e) => return Outcome::Failed(format!("procedure {sig}: {e}")),
            }
        } else if l.ends_with("executing control query:") {
            let q = docstring(&mut i);
            result = Some(execute(&db, &q, &params, &procs));
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
            before = match snapshot(&db) {
                Ok(s) => Some(s),
                Err(e) => return Outcome::Failed(e),
            };
            result = Some(execute(&db, &q, &params, &procs));
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
        } else if l.starts_with("And the side effects should be:") || l == "And no side effects" {
            let expected = if l == "And no side effects" {
                vec![]
            } else {
                table_at(&mut i)
            };
            let after = match snapshot(&db) {
                Ok(s) => s,
                Err(e) => return Outcome::Failed(e),
            };
            let empty = Snapshot::default();
            let got = effects(before.as_ref().unwrap_or(&empty), &after);
            for (k, n) in &got {
                let want = expected
                    .iter()
                    .find(|r| r.first().map(String::as_str) == Some(*k))
                    .and_then(|r| r.get(1))
                    .and_then(|v| v.parse::<usize>().ok())
                    .unwrap_or(0);
                if *n != want {
                    return Outcome::Failed(format!("side effect {k}: {n}, expected {want}"));
                }
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
    run_all_on(scenarios, Store::Memory)
}

/// Runs every scenario, each on a fresh store of the given kind.
pub fn run_all_on(scenarios: Vec<Scenario>, store: Store) -> Vec<(Scenario, Outcome)> {
    scenarios
        .into_iter()
        .map(|s| {
            let o = run_on(&s, store);
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
        if reasons.is_empty() {
            return s;
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

#[cfg(test)]
mod tests {
    use super::split_row;

    #[test]
    fn table_cells_follow_gherkin_escapes_then_cypher_quotes() {
        assert_eq!(split_row("| 'a|b' | 2 |"), ["'a|b'", "2"]);
        // `\\` in a cell is one backslash; `\|` a bar outside quotes.
        assert_eq!(split_row(r"| 'a\\bc' | x\|y |"), [r"'a\bc'", "x|y"]);
        // A backslash the cell keeps escapes the quote after it...
        assert_eq!(split_row(r"| 'it\'s' | 1 |"), [r"'it\'s'", "1"]);
        // ...but one written `\\` is a whole escape, so the quote ends.
        assert_eq!(split_row(r"| '\\\\' | 1 |"), [r"'\\'", "1"]);
    }
}

//! What each subcommand does.

use crate::output::Out;
use crate::values::{cell, node_json, parse_assignment, parse_value, props_json, props_text};
use crate::*;
use plexus::{
    Backend, ConstraintKind, ConstraintSpec, Database, DeleteMode, Direction, GraphRead, IndexKind,
    IndexSpec, Options, Props, ValueType, WriteTxn,
};
use serde_json::json;

pub type CliResult = Result<(), Box<dyn std::error::Error>>;

fn opts(cli: &Cli, backend: Option<Backend>) -> Result<Options, String> {
    let mut o = Options {
        backend,
        durable: !cli.no_sync,
        ..Options::default()
    };
    if let Command::Query { limits, .. }
    | Command::Shell { limits, .. }
    | Command::Serve { limits, .. } = &cli.command
    {
        if let Some(t) = &limits.timeout {
            o.query_timeout = Some(parse_duration(t)?);
        }
        if let Some(m) = &limits.memory_limit {
            o.query_memory_limit = Some(parse_size(m)?);
        }
    }
    Ok(o)
}

/// A duration such as `500ms`, `30s`, `5m`, `1h` or `2.5` (seconds).
fn parse_duration(text: &str) -> Result<std::time::Duration, String> {
    let t = text.trim();
    let split = t
        .char_indices()
        .find(|(_, c)| !(c.is_ascii_digit() || *c == '.'))
        .map_or(t.len(), |(i, _)| i);
    let (number, unit) = t.split_at(split);
    let scale = match unit.trim() {
        "ms" => 0.001,
        "" | "s" => 1.0,
        "m" | "min" => 60.0,
        "h" => 3600.0,
        _ => f64::NAN,
    };
    number
        .parse::<f64>()
        .ok()
        .map(|n| n * scale)
        .filter(|s| s.is_finite() && *s >= 0.0)
        .and_then(|s| std::time::Duration::try_from_secs_f64(s).ok())
        .ok_or_else(|| format!("'{text}' is not a duration (say 500ms, 30s or 5m)"))
}

fn parse_props(list: &[String]) -> Result<Props, String> {
    list.iter().map(|s| parse_assignment(s)).collect()
}

pub fn node_of(t: &impl GraphRead, id: &str) -> Result<plexus::NodeId, String> {
    t.node_id(id)
        .map_err(|e| e.to_string())?
        .ok_or_else(|| format!("no node with id '{id}' in graph '{}'", t.graph_name()))
}

/// Runs `f` in one write transaction on graph `g` and commits it.
fn in_txn<T>(
    db: &Database,
    g: &str,
    f: impl FnOnce(&mut WriteTxn) -> Result<T, Box<dyn std::error::Error>>,
) -> Result<T, Box<dyn std::error::Error>> {
    let mut t = db.write(g)?;
    let r = f(&mut t)?;
    t.commit()?;
    Ok(r)
}

/// `--json` asks for JSON lines whatever `--format` says.
fn pick(cli: &Cli, f: crate::cypher::Format) -> crate::cypher::Format {
    if cli.json {
        crate::cypher::Format::Jsonl
    } else {
        f
    }
}

pub fn run(cli: &Cli) -> CliResult {
    let out = Out { json: cli.json };
    match &cli.command {
        Command::Init { backend, store } => {
            let b = match (backend, store) {
                (_, Some(_)) | (BackendArg::Postgres, None) => Backend::Postgres,
                (BackendArg::Lmdb, None) => Backend::Lmdb,
                (BackendArg::Fjall, None) => Backend::Fjall,
            };
            let o = Options {
                store: store.clone(),
                ..opts(cli, Some(b))?
            };
            let db = Database::create(&cli.db, o)?;
            out.done(
                json!({"path": cli.db, "backend": db.backend().name(), "graphs": db.graphs()}),
                &format!(
                    "created a Plexus database at {} ({} backend)",
                    cli.db.display(),
                    db.backend().name()
                ),
            );
            Ok(())
        }
        Command::Demo { path } => crate::demo::run(path, &out),
        Command::Upgrade => upgrade(cli, &out),
        Command::Compact => compact(cli, &out),
        Command::User(cmd) => crate::serve::user(cli, cmd, &out),
        Command::Serve {
            listen,
            advertised_address,
            auth,
            max_connections,
            tls_cert,
            tls_key,
            ..
        } => {
            let db = Database::open(&cli.db, opts(cli, None)?)?;
            let args = crate::serve::ServeArgs {
                listen,
                advertised: advertised_address.as_ref(),
                auth: *auth,
                max_connections: *max_connections,
                tls: tls_cert.as_deref().zip(tls_key.as_deref()),
            };
            crate::serve::serve(db, cli, args)
        }
        other => {
            let db = open_or_read_only(cli)?;
            run_on(&db, cli, other, &out)
        }
    }
}

fn upgrade(cli: &Cli, out: &Out) -> CliResult {
    use std::io::IsTerminal;
    let tty = std::io::stderr().is_terminal() && !out.json;
    let start = std::time::Instant::now();
    let r = Database::upgrade(&cli.db, &mut |keys| {
        if tty {
            eprint!(
                "\r  {keys} keys converted, {:.1}s elapsed   ",
                start.elapsed().as_secs_f64()
            );
        }
    })?;
    if tty {
        eprintln!();
    }
    let text = if r.from == r.to {
        format!(
            "the database at {} has format version {} already",
            cli.db.display(),
            r.to
        )
    } else {
        format!(
            "converted the database at {} from format version {} to {}: {} adjacency entries packed into {} blocks, {} edge records into blocks of 64, {} id map entries and {} label and index entries into blocks, {} degree counters removed, in {:.1}s",
            cli.db.display(),
            r.from,
            r.to,
            r.entries,
            r.blocks,
            r.edge_records,
            r.id_values,
            r.index_entries,
            r.counters,
            start.elapsed().as_secs_f64()
        )
    };
    out.done(
        json!({"path": cli.db, "from": r.from, "to": r.to, "entries": r.entries, "blocks": r.blocks, "edge_records": r.edge_records, "id_values": r.id_values, "index_entries": r.index_entries, "counters": r.counters}),
        &text,
    );
    Ok(())
}

fn compact(cli: &Cli, out: &Out) -> CliResult {
    use std::io::IsTerminal;
    let db = Database::open(&cli.db, opts(cli, None)?)?;
    if std::io::stderr().is_terminal() && !out.json {
        eprintln!(
            "compacting {} (writes wait until the copy is done)",
            cli.db.display()
        );
    }
    let start = std::time::Instant::now();
    let c = db.compact()?;
    let mib = |b: u64| b as f64 / f64::from(1 << 20);
    out.done(
        json!({"path": cli.db, "bytes_before": c.bytes_before, "bytes_after": c.bytes_after, "seconds": start.elapsed().as_secs_f64(), "batches_replayed": c.batches_replayed, "writes_held_seconds": c.writes_held.as_secs_f64()}),
        &format!(
            "compacted the database at {}: {:.1} MiB -> {:.1} MiB in {:.1}s (writes waited {:.1} ms)",
            cli.db.display(),
            mib(c.bytes_before),
            mib(c.bytes_after),
            start.elapsed().as_secs_f64(),
            c.writes_held.as_secs_f64() * 1e3
        ),
    );
    Ok(())
}

/// Opens the database; while another process has it open for writing,
/// opens it read-only instead (with a note on stderr), so it can still be
/// inspected: reads see the writer's commits, writes are refused.
fn open_or_read_only(cli: &Cli) -> Result<Database, Box<dyn std::error::Error>> {
    let o = opts(cli, None)?;
    match Database::open(&cli.db, o.clone()) {
        Err(plexus::Error::Locked(_, holder)) => {
            let db = Database::open(
                &cli.db,
                Options {
                    read_only: true,
                    ..o
                },
            )?;
            let who = holder.map(|p| format!(" (pid {p})")).unwrap_or_default();
            eprintln!(
                "note: another process{who} has the database open for writing; opened read-only"
            );
            Ok(db)
        }
        other => Ok(other?),
    }
}

fn run_on(db: &Database, cli: &Cli, cmd: &Command, out: &Out) -> CliResult {
    let g = cli.graph.as_str();
    match cmd {
        Command::Stats { space: false } => stats(db, g, out),
        Command::Stats { space: true } => space(db, out),
        Command::Import {
            nodes,
            edges,
            delimiter,
            quote,
            array_delimiter,
            skip_bad_rows,
            upsert,
            index_mode,
            memory_limit,
        } => import(
            db,
            g,
            (nodes, edges),
            import_options(
                (*delimiter, *quote),
                *array_delimiter,
                *index_mode,
                memory_limit.as_deref(),
            )?,
            skip_bad_rows.as_deref(),
            *upsert,
            out,
        ),
        Command::Node(c) => node(db, g, c, out),
        Command::Edge(c) => edge(db, g, c, out),
        Command::Neighbors {
            id,
            rel_type,
            direction,
        } => {
            let dir = match direction {
                DirectionArg::Out => Direction::Out,
                DirectionArg::In => Direction::In,
                DirectionArg::Both => Direction::Both,
            };
            neighbors(db, g, id, rel_type.as_deref(), dir, out)
        }
        Command::Path {
            from,
            to,
            follow,
            weight,
            all,
            max_depth,
            limit,
        } => crate::traverse::path(
            db,
            g,
            from,
            to,
            follow,
            weight.as_deref(),
            *all,
            *max_depth,
            *limit,
            out,
        ),
        Command::Bfs { id, depth, follow } => crate::traverse::bfs(db, g, id, *depth, follow, out),
        Command::Sample(c) => crate::traverse::sample(db, g, c, out),
        Command::Graph(c) => graph(db, c, out),
        Command::Index(c) => index(db, g, c, out),
        Command::Constraint(c) => constraint(db, g, c, out),
        Command::Vector(c) => crate::vector::vector(db, g, c, out),
        Command::History(c) => crate::history::history(db, g, c, out),
        Command::Check => {
            let rep = db.check(g)?;
            out.done(
                json!({"graph": g, "nodes": rep.nodes, "edges": rep.edges, "problems": rep.problems}),
                &if rep.is_ok() {
                    format!("graph '{g}' is consistent: {} nodes, {} edges", rep.nodes, rep.edges)
                } else {
                    format!("graph '{g}' has {} problem(s):\n{}", rep.problems.len(), rep.problems.join("\n"))
                },
            );
            if rep.is_ok() {
                Ok(())
            } else {
                Err("integrity check failed".into())
            }
        }
        Command::Query {
            text,
            params,
            format,
            ..
        } => {
            let params = crate::cypher::parse_params(params)?;
            crate::cypher::query(db, g, text, &params, pick(cli, *format))
        }
        Command::Shell { format, .. } => crate::cypher::shell(db, g, pick(cli, *format)),
        Command::Init { .. }
        | Command::Upgrade
        | Command::Compact
        | Command::Demo { .. }
        | Command::Serve { .. }
        | Command::User(_) => {
            unreachable!("handled before opening")
        }
    }
}

/// The import's options from its flags. Keys past the memory limit spill
/// to a folder inside the database (`Database::import`).
fn import_options(
    (delimiter, quote): (char, char),
    array_delimiter: char,
    index_mode: IndexModeArg,
    memory_limit: Option<&str>,
) -> Result<plexus::ingest::ImportOptions, Box<dyn std::error::Error>> {
    use plexus::ingest::{CsvOptions, ImportOptions, MemoryLimit};
    for (what, c) in [("delimiter", delimiter), ("quote", quote)] {
        if !c.is_ascii() {
            return Err(format!("the {what} '{c}' must be a single ASCII character").into());
        }
    }
    let memory = match memory_limit {
        None => MemoryLimit::Machine,
        Some("none" | "unbounded") => MemoryLimit::Unbounded,
        Some(text) => MemoryLimit::Bytes(parse_size(text)?),
    };
    Ok(ImportOptions {
        csv: CsvOptions {
            delimiter: delimiter as u8,
            quote: quote as u8,
            array_delimiter,
        },
        index_mode: match index_mode {
            IndexModeArg::Maintain => plexus::IndexMode::Maintain,
            IndexModeArg::Defer => plexus::IndexMode::Defer,
            IndexModeArg::DeferRebuild => plexus::IndexMode::DeferRebuild,
        },
        memory,
        // The database's folder (`Database::import`).
        spill_dir: None,
    })
}

/// A size such as `512M`, `2G` or `1500000000` (bytes; K, M, G and T are
/// powers of 1024).
fn parse_size(text: &str) -> Result<usize, String> {
    let t = text.trim();
    let (digits, unit) = match t.char_indices().find(|(_, c)| !c.is_ascii_digit()) {
        Some((i, _)) => t.split_at(i),
        None => (t, ""),
    };
    let shift = match unit
        .trim()
        .to_ascii_uppercase()
        .trim_end_matches(['B', 'I'])
    {
        "" => 0,
        "K" => 10,
        "M" => 20,
        "G" => 30,
        "T" => 40,
        _ => {
            return Err(format!(
                "'{text}' is not a size (say 512M, 2G or a number of bytes)"
            ))
        }
    };
    digits
        .parse::<usize>()
        .ok()
        .and_then(|n| n.checked_mul(1usize << shift))
        .filter(|n| *n > 0)
        .ok_or_else(|| format!("'{text}' is not a size (say 512M, 2G or a number of bytes)"))
}

pub fn import(
    db: &Database,
    g: &str,
    (nodes, edges): (&[String], &[String]),
    opts: plexus::ingest::ImportOptions,
    skip_report: Option<&std::path::Path>,
    upsert: bool,
    out: &Out,
) -> CliResult {
    use plexus::ingest::Input;
    use std::io::IsTerminal;
    let (n, e): (Vec<Input>, Vec<Input>) = (
        nodes.iter().map(|a| Input::parse(a)).collect(),
        edges.iter().map(|a| Input::parse(a)).collect(),
    );
    let start = std::time::Instant::now();
    let tty = std::io::stderr().is_terminal() && !out.json;
    let all: Vec<Input> = n.iter().chain(&e).cloned().collect();
    let total = plexus::ingest::expected_rows(&all);
    let mut progress = |rows: u64| {
        if tty {
            let secs = start.elapsed().as_secs_f64();
            let rate = rows as f64 / secs.max(1e-9);
            // Reading is about half the work: sorting and writing the
            // keys follow it, so the estimate counts the rest twice.
            let estimate = match total {
                Some(t) if t > 0 && rows < t => format!(
                    " of {t} ({:.0}%), about {:.0}s to go",
                    100.0 * rows as f64 / t as f64,
                    (2 * t - rows) as f64 / rate.max(1.0)
                ),
                Some(t) if rows == t => ", sorting and writing".to_string(),
                _ => String::new(),
            };
            eprint!("\r  {rows} rows read{estimate}, {rate:.0} rows/s, {secs:.1}s elapsed   ");
        }
    };
    let mut report = match skip_report {
        Some(p) => Some(std::io::BufWriter::new(
            std::fs::File::create(p).map_err(|e| format!("{}: {e}", p.display()))?,
        )),
        None => None,
    };
    let mut write_failed = None;
    let mut skip = |msg: &str| {
        use std::io::Write;
        if let Some(w) = report.as_mut() {
            if let Err(e) = writeln!(w, "{msg}") {
                write_failed = Some(e);
            }
        }
    };
    let skipper: Option<&mut dyn FnMut(&str)> = if skip_report.is_some() {
        Some(&mut skip)
    } else {
        None
    };
    let r = if upsert {
        db.import_upsert(g, &n, &e, &opts, &mut progress, skipper)
    } else {
        db.import(g, &n, &e, &opts, &mut progress, skipper)
    };
    let r = r?;
    if let Some(e) = write_failed {
        return Err(format!("cannot write the bad-row report: {e}").into());
    }
    if let Some(mut w) = report {
        use std::io::Write;
        w.flush()?;
    }
    if tty {
        eprintln!();
    }
    let secs = start.elapsed().as_secs_f64();
    if out.json {
        let files: Vec<_> = r
            .files
            .iter()
            .map(|(f, rows)| json!({"file": f, "rows": rows}))
            .collect();
        say!(
            "{}",
            json!({"graph": g, "nodes": r.nodes, "edges": r.edges, "skipped": r.skipped, "seconds": secs, "files": files})
        );
    } else {
        let rows = r
            .files
            .iter()
            .map(|(f, rows)| vec![json!(f.display().to_string()), json!(rows)])
            .collect();
        out.table(&["file", "rows"], rows);
        say!(
            "imported {} nodes and {} edges into graph '{g}' in {secs:.2}s",
            r.nodes,
            r.edges
        );
        if let (Some(p), true) = (skip_report, r.skipped > 0) {
            say!(
                "left out {} bad row(s), listed in {}",
                r.skipped,
                p.display()
            );
        }
    }
    Ok(())
}

pub fn stats(db: &Database, g: &str, out: &Out) -> CliResult {
    let s = db.stats(g)?;
    let disk = db.disk_size()?;
    if out.json {
        let labels: serde_json::Map<_, _> = s
            .labels
            .iter()
            .map(|(k, v)| (k.clone(), json!(v)))
            .collect();
        let types: serde_json::Map<_, _> =
            s.types.iter().map(|(k, v)| (k.clone(), json!(v))).collect();
        say!(
            "{}",
            json!({"graph": g, "nodes": s.nodes, "edges": s.edges, "labels": labels, "types": types, "disk_bytes": disk})
        );
        return Ok(());
    }
    let mut rows = vec![
        vec![json!("graph"), json!(g), json!("")],
        vec![json!("nodes"), json!(""), json!(s.nodes)],
        vec![json!("edges"), json!(""), json!(s.edges)],
    ];
    rows.extend(
        s.labels
            .iter()
            .map(|(l, n)| vec![json!("label"), json!(l), json!(n)]),
    );
    rows.extend(
        s.types
            .iter()
            .map(|(t, n)| vec![json!("type"), json!(t), json!(n)]),
    );
    rows.push(vec![
        json!("disk"),
        json!(""),
        json!(format!("{:.1} MiB", disk as f64 / 1048576.0)),
    ]);
    out.table(&["what", "name", "count"], rows);
    Ok(())
}

/// The database broken down by keyspace (`stats --space`).
pub fn space(db: &Database, out: &Out) -> CliResult {
    let r = db.space()?;
    // Bytes for programs, MiB for people.
    let size = |b: u64| {
        if out.json {
            json!(b)
        } else {
            json!(format!("{:.1} MiB", b as f64 / 1048576.0))
        }
    };
    let per = |p: plexus::Per, b: u64| match (p, r.per(p, b)) {
        (plexus::Per::Node, Some(x)) => json!(format!("{x:.1} B/node")),
        (plexus::Per::Edge, Some(x)) => json!(format!("{x:.1} B/edge")),
        _ => json!(""),
    };
    let mut rows: Vec<Vec<serde_json::Value>> = r
        .keyspaces
        .iter()
        .map(|k| {
            vec![
                json!(k.name),
                json!(k.holds),
                json!(k.entries),
                json!(k.key_bytes),
                json!(k.value_bytes),
                size(k.stored_bytes),
                per(k.per, k.stored_bytes),
            ]
        })
        .collect();
    let overhead = r.disk_bytes.saturating_sub(r.stored_bytes());
    rows.push(vec![
        json!("(free and backend)"),
        json!("free pages (plexus compact gives them back), the backend's own tables and files"),
        json!(""),
        json!(""),
        json!(""),
        size(overhead),
        json!(""),
    ]);
    rows.push(vec![
        json!("total"),
        json!(format!("{} nodes, {} edges", r.nodes, r.edges)),
        json!(r.keyspaces.iter().map(|k| k.entries).sum::<u64>()),
        json!(r.keyspaces.iter().map(|k| k.key_bytes).sum::<u64>()),
        json!(r.keyspaces.iter().map(|k| k.value_bytes).sum::<u64>()),
        size(r.disk_bytes),
        json!(""),
    ]);
    let headers = [
        "keyspace",
        "holds",
        "entries",
        "key bytes",
        "value bytes",
        "stored",
        "per",
    ];
    out.table(&headers, rows);
    Ok(())
}

pub fn show_node(db: &Database, g: &str, id: &str, out: &Out) -> CliResult {
    let r = db.read(g)?;
    let n = r
        .node_by_key(id)?
        .ok_or_else(|| format!("no node with id '{id}' in graph '{g}'"))?;
    if out.json {
        say!("{}", node_json(&n));
    } else {
        let rows = std::iter::once(vec![json!("id"), json!(n.key)])
            .chain(std::iter::once(vec![
                json!("labels"),
                json!(n.labels.join(", ")),
            ]))
            .chain(n.props.iter().map(|(k, v)| vec![json!(k), json!(cell(v))]))
            .collect();
        out.table(&["field", "value"], rows);
    }
    Ok(())
}

fn node(db: &Database, g: &str, cmd: &NodeCmd, out: &Out) -> CliResult {
    match cmd {
        NodeCmd::Put {
            id,
            labels,
            props,
            merge,
        } => {
            let props = parse_props(props)?;
            let labels: Vec<&str> = labels.iter().map(String::as_str).collect();
            let mut t = db.write(g)?;
            let existed = t.node_id(id)?.is_some();
            if *merge {
                t.merge_node(id, &labels, &props)?;
            } else {
                t.put_node(id, &labels, &props)?;
            }
            t.commit()?;
            let verb = if existed { "updated" } else { "created" };
            out.changed("node", id, verb);
            Ok(())
        }
        NodeCmd::Get { id } => show_node(db, g, id, out),
        NodeCmd::Delete { id, detach } => {
            let mut t = db.write(g)?;
            let n = node_of(&t, id)?;
            t.delete_node(
                n,
                if *detach {
                    DeleteMode::Detach
                } else {
                    DeleteMode::Refuse
                },
            )?;
            t.commit()?;
            out.changed("node", id, "deleted");
            Ok(())
        }
    }
}

fn edge(db: &Database, g: &str, cmd: &EdgeCmd, out: &Out) -> CliResult {
    match cmd {
        EdgeCmd::Put {
            src,
            rel_type,
            dst,
            id,
            props,
        } => {
            let props = parse_props(props)?;
            let mut t = db.write(g)?;
            let (s, d) = (node_of(&t, src)?, node_of(&t, dst)?);
            let e = match id {
                Some(id) => t.put_edge(id, s, d, rel_type, &props)?,
                None => t.create_edge(None, s, d, rel_type, &props)?,
            };
            let key = t.edge(e)?.map(|e| e.key).unwrap_or_default();
            t.commit()?;
            out.done(
                json!({"id": key, "result": "stored"}),
                &format!("stored edge '{key}': ({src})-[:{rel_type}]->({dst})"),
            );
            Ok(())
        }
        EdgeCmd::Get { id } => {
            let r = db.read(g)?;
            let e = r
                .edge_by_key(id)?
                .ok_or_else(|| format!("no edge with id '{id}' in graph '{g}'"))?;
            let key_of = |n| r.node(n).ok().flatten().map(|n| n.key).unwrap_or_default();
            let (s, d) = (key_of(e.src), key_of(e.dst));
            out.table(
                &["id", "source", "type", "target", "properties"],
                vec![vec![
                    json!(e.key),
                    json!(s),
                    json!(e.rel_type),
                    json!(d),
                    if out.json {
                        props_json(&e.props)
                    } else {
                        json!(props_text(&e.props))
                    },
                ]],
            );
            Ok(())
        }
        EdgeCmd::Delete { id } => {
            let mut t = db.write(g)?;
            let e = t
                .edge_id(id)?
                .ok_or_else(|| format!("no edge with id '{id}' in graph '{g}'"))?;
            t.delete_edge(e)?;
            t.commit()?;
            out.changed("edge", id, "deleted");
            Ok(())
        }
    }
}

pub fn neighbors(
    db: &Database,
    g: &str,
    id: &str,
    rel_type: Option<&str>,
    dir: Direction,
    out: &Out,
) -> CliResult {
    let r = db.read(g)?;
    let n = node_of(&r, id)?;
    let mut rows = Vec::new();
    for nb in r.neighbors(n, dir, rel_type)? {
        let other = r
            .node(nb.node)?
            .ok_or("adjacency points to a missing node")?;
        let edge = r
            .edge(nb.edge)?
            .ok_or("adjacency points to a missing edge")?;
        rows.push(vec![
            json!(if nb.outgoing { "->" } else { "<-" }),
            json!(&*r.type_name(nb.rel_type)?),
            json!(other.key),
            json!(other.labels.join(":")),
            json!(if edge.key.is_empty() {
                edge.id.to_string()
            } else {
                edge.key
            }),
        ]);
    }
    out.table(&["dir", "type", "node", "labels", "edge"], rows);
    Ok(())
}

fn graph(db: &Database, cmd: &GraphCmd, out: &Out) -> CliResult {
    match cmd {
        GraphCmd::Create { name } => {
            db.create_graph(name)?;
            out.changed("graph", name, "created");
        }
        GraphCmd::List => {
            let mut rows = Vec::new();
            for name in db.graphs() {
                let s = db.stats(&name)?;
                rows.push(vec![json!(name), json!(s.nodes), json!(s.edges)]);
            }
            out.table(&["graph", "nodes", "edges"], rows);
        }
        GraphCmd::Drop { name } => {
            db.drop_graph(name)?;
            out.changed("graph", name, "dropped");
        }
    }
    Ok(())
}

fn index(db: &Database, g: &str, cmd: &IndexCmd, out: &Out) -> CliResult {
    match cmd {
        IndexCmd::Create {
            label,
            key,
            list,
            value_type,
            name,
        } => {
            let value_type = value_type
                .as_deref()
                .map(|t| ValueType::parse(t).ok_or_else(|| format!("unknown value type '{t}'")))
                .transpose()?;
            let spec = IndexSpec {
                name: name.clone(),
                label: Some(label.clone()),
                key: key.clone(),
                kind: if *list {
                    IndexKind::ListElement
                } else {
                    IndexKind::Property
                },
                value_type,
                options: Vec::new(),
            };
            let name = in_txn(db, g, |t| Ok(t.create_index(spec)?))?;
            out.changed("index", &name, "created");
        }
        IndexCmd::List => {
            let r = db.read(g)?;
            let rows = r
                .indexes()?
                .into_iter()
                .map(|i| {
                    vec![
                        json!(i.name),
                        json!(i.label.unwrap_or_default()),
                        json!(i.key),
                        json!(match i.kind {
                            IndexKind::ListElement => "list",
                            IndexKind::Vector => "vector",
                            IndexKind::RelationshipVector => "relationship vector",
                            IndexKind::RelationshipProperty => "relationship property",
                            IndexKind::RelationshipListElement => "relationship list",
                            IndexKind::Property => "property",
                        }),
                        json!(i.value_type.map(|t| t.name()).unwrap_or("any")),
                        json!(i.unique),
                        json!(i.stale),
                    ]
                })
                .collect();
            out.table(
                &["name", "label", "key", "kind", "type", "unique", "stale"],
                rows,
            );
        }
        IndexCmd::Drop { name } => {
            in_txn(db, g, |t| Ok(t.drop_index(name)?))?;
            out.changed("index", name, "dropped");
        }
        IndexCmd::Rebuild => {
            let names = db.rebuild_indexes(g)?;
            out.done(
                json!({"rebuilt": names}),
                &format!("rebuilt {} index(es): {}", names.len(), names.join(", ")),
            );
        }
        IndexCmd::Lookup {
            label,
            key,
            value,
            list,
        } => {
            let r = db.read(g)?;
            let v = parse_value(value);
            let ids = if *list {
                r.find_nodes_with_element(Some(label), key, &v)?
            } else {
                r.find_nodes(Some(label), key, &v)?
            };
            let mut rows = Vec::new();
            for id in ids {
                if let Some(n) = r.node(id)? {
                    rows.push(vec![
                        json!(n.key),
                        json!(n.labels.join(":")),
                        if out.json {
                            props_json(&n.props)
                        } else {
                            json!(props_text(&n.props))
                        },
                    ]);
                }
            }
            out.table(&["id", "labels", "properties"], rows);
        }
    }
    Ok(())
}

fn constraint(db: &Database, g: &str, cmd: &ConstraintCmd, out: &Out) -> CliResult {
    match cmd {
        ConstraintCmd::Create {
            label,
            key,
            kind,
            name,
        } => {
            let kind = if kind.unique {
                ConstraintKind::Unique
            } else {
                ConstraintKind::NotNull
            };
            let name = in_txn(db, g, |t| {
                Ok(t.create_constraint(ConstraintSpec {
                    name: name.clone(),
                    label: label.clone(),
                    key: key.clone(),
                    kind,
                })?)
            })?;
            out.changed("constraint", &name, "created");
        }
        ConstraintCmd::List => {
            let r = db.read(g)?;
            let rows = r
                .constraints()?
                .into_iter()
                .map(|c| {
                    vec![
                        json!(c.name),
                        json!(c.label),
                        json!(c.key),
                        json!(if c.kind == ConstraintKind::Unique {
                            "unique"
                        } else {
                            "not null"
                        }),
                    ]
                })
                .collect();
            out.table(&["name", "label", "key", "kind"], rows);
        }
        ConstraintCmd::Drop { name } => {
            in_txn(db, g, |t| Ok(t.drop_constraint(name)?))?;
            out.changed("constraint", name, "dropped");
        }
    }
    Ok(())
}

//! The SNB-like graph as the files Kuzu and LadybugDB load: one CSV file
//! per node table and one per (relationship type, source table, target
//! table), with the schema that declares them.
//!
//! Those engines give a node exactly one table, so a node's table is its
//! most specific label: LDBC's general labels (`Message`, `Organisation`,
//! `Place`) become unions of tables in the translated queries
//! (`(m:Post:Comment)`).

use crate::gen::Generator;
use plexus::Value;
use serde_json::{json, Value as Json};
use std::collections::btree_map::Entry;
use std::collections::{BTreeMap, HashMap};
use std::io::{BufWriter, Write};
use std::path::Path;

/// Labels that stand for a union of tables, never a table of their own.
const GENERAL: [&str; 3] = ["Message", "Organisation", "Place"];

/// One file to load: a node table, or one source–target pair of a
/// relationship table.
struct File {
    columns: Vec<Column>,
    out: BufWriter<std::fs::File>,
    name: String,
}

/// A column: its name and Kuzu type.
type Column = (&'static str, &'static str);

impl File {
    fn create(
        dir: &Path,
        name: String,
        head: &[&str],
        columns: Vec<Column>,
    ) -> Result<File, String> {
        let path = dir.join(&name);
        let mut out = BufWriter::new(
            std::fs::File::create(&path).map_err(|e| format!("{}: {e}", path.display()))?,
        );
        let names: Vec<&str> = head
            .iter()
            .copied()
            .chain(columns.iter().map(|c| c.0))
            .collect();
        writeln!(out, "{}", names.join("|")).map_err(|e| e.to_string())?;
        Ok(File { columns, out, name })
    }

    /// One line: the leading cells, then the declared columns (a property a
    /// row lacks is an empty cell, which loads as null).
    fn row(&mut self, lead: &[String], props: &[(&'static str, Value)]) -> Result<(), String> {
        let mut cells: Vec<String> = lead.to_vec();
        for (k, _) in &self.columns {
            cells.push(
                props
                    .iter()
                    .find(|(p, _)| p == k)
                    .map_or(String::new(), |(_, v)| cell(v)),
            );
        }
        writeln!(self.out, "{}", cells.join("|")).map_err(|e| e.to_string())
    }
}

/// Adds the properties of one row to a table's columns (their union, in
/// the order first seen).
fn widen(columns: &mut Vec<Column>, props: &[(&'static str, Value)]) -> Result<(), String> {
    for (k, v) in props {
        if !columns.iter().any(|c| c.0 == *k) {
            let t = column_type(v).ok_or_else(|| format!("property {k}: {v:?}"))?;
            columns.push((k, t));
        }
    }
    Ok(())
}

/// Kuzu's type of a property value; `None` for a kind the SNB graph does
/// not use.
fn column_type(v: &Value) -> Option<&'static str> {
    Some(match v {
        Value::Int(_) => "INT64",
        Value::Float(_) => "DOUBLE",
        Value::Bool(_) => "BOOLEAN",
        Value::String(_) => "STRING",
        Value::List(l) if l.iter().all(|x| matches!(x, Value::String(_))) => "STRING[]",
        _ => return None,
    })
}

/// A CSV cell: strings quoted (the generator's never contain a quote, but
/// may contain the separator), lists in Kuzu's `[a,b]` form.
fn cell(v: &Value) -> String {
    match v {
        Value::String(s) => format!("\"{}\"", s.replace('"', "\"\"")),
        Value::List(l) => {
            let items: Vec<String> = l
                .iter()
                .map(|x| match x {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                })
                .collect();
            format!("[{}]", items.join(","))
        }
        other => other.to_string(),
    }
}

/// The table a node with these labels goes to.
fn table_of(labels: &'static [&'static str]) -> Result<&'static str, String> {
    labels
        .iter()
        .find(|l| !GENERAL.contains(l))
        .copied()
        .ok_or_else(|| format!("no specific label among {labels:?}"))
}

/// Writes the graph's files into `dir` and returns the schema the peer
/// script declares and loads: `{"nodes": [{table, file, columns}],
/// "rels": [{type, from, to, file, columns}]}` (columns as `[name, type]`).
pub fn write(g: &dyn Generator, dir: &Path) -> Result<Json, String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    // First pass: every table's columns (a table's rows may differ in the
    // properties they have, as photos and text posts do).
    let mut node_cols: BTreeMap<&'static str, Vec<Column>> = BTreeMap::new();
    for i in 0..g.nodes() {
        let r = g.node(i);
        widen(node_cols.entry(table_of(r.labels)?).or_default(), &r.props)?;
    }
    let mut rel_cols: BTreeMap<&'static str, Vec<Column>> = BTreeMap::new();
    for i in 0..g.edges() {
        let e = g.edge(i);
        widen(rel_cols.entry(e.rel_type).or_default(), &e.props)?;
    }
    // A node's generator id → (table, LDBC id), for the relationship files.
    let mut where_is: HashMap<String, (&'static str, i64)> = HashMap::new();
    let mut nodes: BTreeMap<&'static str, File> = BTreeMap::new();
    for (table, cols) in &node_cols {
        let f = File::create(dir, format!("{table}.csv"), &[], cols.clone())?;
        nodes.insert(table, f);
    }
    for i in 0..g.nodes() {
        let r = g.node(i);
        let table = table_of(r.labels)?;
        let id = match r.props.iter().find(|(k, _)| *k == "id") {
            Some((_, Value::Int(id))) => *id,
            _ => return Err(format!("node {} has no integer id", r.id)),
        };
        if let Some(f) = nodes.get_mut(table) {
            f.row(&[], &r.props)?;
        }
        where_is.insert(r.id, (table, id));
    }
    let mut rels: BTreeMap<(&'static str, &'static str, &'static str), File> = BTreeMap::new();
    for i in 0..g.edges() {
        let e = g.edge(i);
        let end = |id: &str| {
            where_is
                .get(id)
                .copied()
                .ok_or_else(|| format!("edge {} names an unknown node {id}", e.id))
        };
        let ((from, a), (to, b)) = (end(&e.src)?, end(&e.dst)?);
        let f = match rels.entry((e.rel_type, from, to)) {
            Entry::Occupied(f) => f.into_mut(),
            Entry::Vacant(v) => {
                let name = format!("{}_{from}_{to}.csv", e.rel_type);
                let cols = rel_cols.get(e.rel_type).cloned().unwrap_or_default();
                v.insert(File::create(dir, name, &["from", "to"], cols)?)
            }
        };
        f.row(&[a.to_string(), b.to_string()], &e.props)?;
    }
    let cols = |f: &File| -> Json { f.columns.iter().map(|(n, t)| json!([n, t])).collect() };
    let mut node_list = Vec::new();
    for (table, mut f) in nodes {
        f.out.flush().map_err(|e| e.to_string())?;
        node_list.push(json!({"table": table, "file": f.name, "columns": cols(&f)}));
    }
    let mut rel_list = Vec::new();
    for ((t, from, to), mut f) in rels {
        f.out.flush().map_err(|e| e.to_string())?;
        rel_list
            .push(json!({"type": t, "from": from, "to": to, "file": f.name, "columns": cols(&f)}));
    }
    Ok(json!({"nodes": node_list, "rels": rel_list}))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::snb::Snb;

    #[test]
    fn every_node_and_edge_lands_in_one_file() {
        let dir = std::env::temp_dir().join(format!("plexus-ldbc-export-{}", std::process::id()));
        let g = Snb::new(0.01, 3);
        let schema = write(&g, &dir).unwrap();
        let lines = |f: &Json| {
            let name = f["file"].as_str().unwrap();
            std::fs::read_to_string(dir.join(name))
                .unwrap()
                .lines()
                .count() as u64
                - 1
        };
        let nodes: u64 = schema["nodes"].as_array().unwrap().iter().map(lines).sum();
        let edges: u64 = schema["rels"].as_array().unwrap().iter().map(lines).sum();
        assert_eq!((nodes, edges), (g.nodes(), g.edges()));
        // Posts and comments are tables of their own, never `Message`.
        let tables: Vec<&str> = schema["nodes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| n["table"].as_str().unwrap())
            .collect();
        assert!(tables.contains(&"Post") && tables.contains(&"Comment"));
        assert!(!tables.iter().any(|t| GENERAL.contains(t)));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn cells_quote_strings_and_write_lists_as_kuzu_reads_them() {
        assert_eq!(cell(&Value::from("a|b")), "\"a|b\"");
        assert_eq!(
            cell(&Value::List(vec!["en".into(), "es".into()])),
            "[en,es]"
        );
        assert_eq!(cell(&Value::Int(-3)), "-3");
    }
}

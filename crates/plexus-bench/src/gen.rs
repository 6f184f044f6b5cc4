//! Deterministic graph generators, streaming: rows are computed from their
//! index and a seed, so 10M edges never need 10M objects in memory.

use plexus::algo::Rng;
use plexus::Value;
use std::io::{BufWriter, Write};
use std::path::Path;

/// A property column: name and type (`string`, `int`, `float`).
pub type Column = (&'static str, &'static str);

#[derive(Clone)]
pub struct NodeRow {
    pub id: String,
    /// The first label is the node's kind (written to the files for peers).
    pub labels: &'static [&'static str],
    pub props: Vec<(&'static str, Value)>,
}

#[derive(Clone)]
pub struct EdgeRow {
    pub id: String,
    pub src: String,
    pub dst: String,
    pub rel_type: &'static str,
    pub props: Vec<(&'static str, Value)>,
}

/// A graph that can be produced row by row.
pub trait Generator {
    fn name(&self) -> String;
    fn nodes(&self) -> u64;
    fn edges(&self) -> u64;
    fn node(&self, i: u64) -> NodeRow;
    fn edge(&self, i: u64) -> EdgeRow;
    fn node_props(&self) -> Vec<Column>;
    fn edge_props(&self) -> Vec<Column>;
    fn types(&self) -> Vec<&'static str>;
}

/// GestaltDB's benchmark shapes, exactly as its public benchmark code
/// builds them (`n{i}` nodes labelled `Node` with `group = i % 128`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// Edge i: n{i % N} → n{(9973·i + 1) % N}, type by i % 3.
    Synthetic,
    /// Every edge from n0 to n{1 + i % (N-1)}, type RelA.
    Star,
    /// Edge i: n{i % N} → n{(i % N + 1) % N}, RelA for even index, RelB for odd.
    TypedPath,
}

pub struct Gestalt {
    pub shape: Shape,
    pub n: u64,
    pub e: u64,
}

const GESTALT_TYPES: [&str; 3] = ["RelA", "RelB", "RelC"];

impl Generator for Gestalt {
    fn name(&self) -> String {
        format!("gestalt-{:?}", self.shape).to_lowercase()
    }
    fn nodes(&self) -> u64 {
        self.n
    }
    fn edges(&self) -> u64 {
        self.e
    }
    fn node(&self, i: u64) -> NodeRow {
        NodeRow {
            id: format!("n{i}"),
            labels: &["Node"],
            props: vec![("grp", Value::Int((i % 128) as i64))],
        }
    }
    fn edge(&self, i: u64) -> EdgeRow {
        let n = self.n;
        let (s, d, t) = match self.shape {
            Shape::Synthetic => (
                i % n,
                (i.wrapping_mul(9973) + 1) % n,
                GESTALT_TYPES[(i % 3) as usize],
            ),
            Shape::Star => (0, 1 + i % (n - 1).max(1), "RelA"),
            Shape::TypedPath => (i % n, (i % n + 1) % n, GESTALT_TYPES[(i % 2) as usize]),
        };
        EdgeRow {
            id: format!("e{i}"),
            src: format!("n{s}"),
            dst: format!("n{d}"),
            rel_type: t,
            props: vec![("weight", Value::Int((i % 1000) as i64))],
        }
    }
    fn node_props(&self) -> Vec<Column> {
        vec![("grp", "int")]
    }
    fn edge_props(&self) -> Vec<Column> {
        vec![("weight", "int")]
    }
    fn types(&self) -> Vec<&'static str> {
        match self.shape {
            Shape::Star => vec!["RelA"],
            Shape::TypedPath => vec!["RelA", "RelB"],
            Shape::Synthetic => GESTALT_TYPES.to_vec(),
        }
    }
}

/// A skewed typed multigraph: N nodes labelled L0/L1/L2 with `grp` 0–99 and
/// one of 8 `kind`s; 5N edges with uniform endpoints except that 8 hub
/// nodes receive about 2% of all edges and send about 0.5%; four types at
/// 40/30/20/10%; a float `weight`; parallel edges and self-loops kept.
pub struct Skewed {
    pub n: u64,
    pub seed: u64,
}

const SKEWED_TYPES: [&str; 4] = ["T0", "T1", "T2", "T3"];
const KINDS: [&str; 8] = [
    "alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta",
];
const HUBS: u64 = 8;

impl Skewed {
    fn rng(&self, stream: u64, i: u64) -> Rng {
        Rng::new(
            self.seed
                ^ stream.wrapping_mul(0x9E37_79B9_7F4A_7C15)
                ^ i.wrapping_mul(0xD1B5_4A32_D192_ED03),
        )
    }

    /// The hub nodes, spread over the id range.
    pub fn hub(&self, k: u64) -> u64 {
        (k * 7919 + 3) % self.n
    }
}

impl Generator for Skewed {
    fn name(&self) -> String {
        "skewed".into()
    }
    fn nodes(&self) -> u64 {
        self.n
    }
    fn edges(&self) -> u64 {
        5 * self.n
    }
    fn node(&self, i: u64) -> NodeRow {
        let mut r = self.rng(1, i);
        let labels: &[&str] = [&["L0"], &["L1"], &["L2"]][r.below(3)];
        NodeRow {
            id: format!("v{i}"),
            labels,
            props: vec![
                ("grp", Value::Int(r.below(100) as i64)),
                ("kind", Value::from(KINDS[r.below(8)])),
            ],
        }
    }
    fn edge(&self, i: u64) -> EdgeRow {
        let mut r = self.rng(2, i);
        let n = self.n as usize;
        let src = if r.unit() < 0.005 {
            self.hub(r.below(HUBS as usize) as u64)
        } else {
            r.below(n) as u64
        };
        let dst = if r.unit() < 0.02 {
            self.hub(r.below(HUBS as usize) as u64)
        } else {
            r.below(n) as u64
        };
        let x = r.below(10);
        let t = SKEWED_TYPES[if x < 4 {
            0
        } else if x < 7 {
            1
        } else if x < 9 {
            2
        } else {
            3
        }];
        EdgeRow {
            id: format!("e{i}"),
            src: format!("v{src}"),
            dst: format!("v{dst}"),
            rel_type: t,
            props: vec![("weight", Value::Float((r.unit() * 1000.0).round() / 1000.0))],
        }
    }
    fn node_props(&self) -> Vec<Column> {
        vec![("grp", "int"), ("kind", "string")]
    }
    fn edge_props(&self) -> Vec<Column> {
        vec![("weight", "float")]
    }
    fn types(&self) -> Vec<&'static str> {
        SKEWED_TYPES.to_vec()
    }
}

fn csv_value(v: &Value) -> String {
    match v {
        Value::String(s) if s.contains([',', '"', '\n']) => {
            format!("\"{}\"", s.replace('"', "\"\""))
        }
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The CSV cells of the declared columns; a property a row lacks is empty.
fn cells(cols: &[Column], props: &[(&'static str, Value)]) -> String {
    let cell = |c: &Column| {
        props
            .iter()
            .find(|(k, _)| *k == c.0)
            .map_or(String::new(), |(_, v)| csv_value(v))
    };
    cols.iter().map(cell).collect::<Vec<_>>().join(",")
}

/// Writes `nodes.csv` (id, label, declared properties) and one
/// `edges_<TYPE>.csv` (src, dst, eid, declared properties) per type into
/// `dir`, with headers.
pub fn write_csv(g: &dyn Generator, dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let mut nodes = BufWriter::new(std::fs::File::create(dir.join("nodes.csv"))?);
    let ncols = g.node_props();
    let names: Vec<&str> = ncols.iter().map(|c| c.0).collect();
    writeln!(nodes, "id,label,{}", names.join(","))?;
    for i in 0..g.nodes() {
        let r = g.node(i);
        writeln!(
            nodes,
            "{},{},{}",
            r.id,
            r.labels[0],
            cells(&ncols, &r.props)
        )?;
    }
    nodes.flush()?;
    let ecols: Vec<&str> = g.edge_props().iter().map(|c| c.0).collect();
    let mut files = Vec::new();
    for t in g.types() {
        let mut f = BufWriter::new(std::fs::File::create(dir.join(format!("edges_{t}.csv")))?);
        writeln!(f, "src,dst,eid,{}", ecols.join(","))?;
        files.push((t, f));
    }
    for i in 0..g.edges() {
        let e = g.edge(i);
        let vals: Vec<String> = e.props.iter().map(|(_, v)| csv_value(v)).collect();
        let (_, f) = files
            .iter_mut()
            .find(|(t, _)| *t == e.rel_type)
            .expect("edge type is declared");
        writeln!(f, "{},{},{},{}", e.src, e.dst, e.id, vals.join(","))?;
    }
    for (_, mut f) in files {
        f.flush()?;
    }
    Ok(())
}

/// Writes the same files as [`write_csv`], as Parquet (snappy):
/// `nodes.parquet` and one `edges_<TYPE>.parquet` per type.
pub fn write_parquet(g: &dyn Generator, dir: &Path) -> Result<(), Box<dyn std::error::Error>> {
    use arrow_array::builder::{Float64Builder, Int64Builder, StringBuilder};
    use arrow_array::{ArrayRef, RecordBatch};
    use arrow_schema::{DataType, Field, Schema};
    use parquet::arrow::ArrowWriter;
    use parquet::basic::Compression;
    use parquet::file::properties::WriterProperties;
    use std::sync::Arc;

    const ROWS: usize = 65_536;
    std::fs::create_dir_all(dir)?;

    /// Builders for the fixed leading string columns and the declared properties.
    struct Table {
        schema: Arc<Schema>,
        keys: Vec<StringBuilder>,
        cols: Vec<(Column, Builder)>,
        writer: ArrowWriter<std::fs::File>,
        rows: usize,
    }
    enum Builder {
        S(StringBuilder),
        I(Int64Builder),
        F(Float64Builder),
    }
    impl Table {
        fn new(
            path: &Path,
            lead: &[&str],
            cols: &[Column],
        ) -> Result<Table, Box<dyn std::error::Error>> {
            let mut fields: Vec<Field> = lead
                .iter()
                .map(|n| Field::new(*n, DataType::Utf8, false))
                .collect();
            for (name, ty) in cols {
                let dt = match *ty {
                    "int" => DataType::Int64,
                    "float" => DataType::Float64,
                    _ => DataType::Utf8,
                };
                fields.push(Field::new(*name, dt, true));
            }
            let schema = Arc::new(Schema::new(fields));
            let props = WriterProperties::builder()
                .set_compression(Compression::SNAPPY)
                .build();
            let writer =
                ArrowWriter::try_new(std::fs::File::create(path)?, schema.clone(), Some(props))?;
            let builders = cols
                .iter()
                .map(|c| {
                    let b = match c.1 {
                        "int" => Builder::I(Int64Builder::new()),
                        "float" => Builder::F(Float64Builder::new()),
                        _ => Builder::S(StringBuilder::new()),
                    };
                    (*c, b)
                })
                .collect();
            Ok(Table {
                schema,
                keys: lead.iter().map(|_| StringBuilder::new()).collect(),
                cols: builders,
                writer,
                rows: 0,
            })
        }

        fn push(
            &mut self,
            keys: &[&str],
            props: &[(&'static str, Value)],
        ) -> Result<(), Box<dyn std::error::Error>> {
            for (b, k) in self.keys.iter_mut().zip(keys) {
                b.append_value(k);
            }
            for ((name, _), b) in &mut self.cols {
                let v = props.iter().find(|(k, _)| k == name).map(|(_, v)| v);
                match (b, v) {
                    (Builder::I(b), Some(Value::Int(i))) => b.append_value(*i),
                    (Builder::F(b), Some(Value::Float(f))) => b.append_value(*f),
                    (Builder::S(b), Some(v)) => b.append_value(csv_value(v)),
                    (Builder::I(b), _) => b.append_null(),
                    (Builder::F(b), _) => b.append_null(),
                    (Builder::S(b), None) => b.append_null(),
                }
            }
            self.rows += 1;
            if self.rows == ROWS {
                self.flush()?;
            }
            Ok(())
        }

        fn flush(&mut self) -> Result<(), Box<dyn std::error::Error>> {
            if self.rows == 0 {
                return Ok(());
            }
            let mut arrays: Vec<ArrayRef> = self
                .keys
                .iter_mut()
                .map(|b| Arc::new(b.finish()) as ArrayRef)
                .collect();
            for (_, b) in &mut self.cols {
                arrays.push(match b {
                    Builder::S(b) => Arc::new(b.finish()),
                    Builder::I(b) => Arc::new(b.finish()),
                    Builder::F(b) => Arc::new(b.finish()),
                });
            }
            self.writer
                .write(&RecordBatch::try_new(self.schema.clone(), arrays)?)?;
            self.rows = 0;
            Ok(())
        }

        fn close(mut self) -> Result<(), Box<dyn std::error::Error>> {
            self.flush()?;
            self.writer.close()?;
            Ok(())
        }
    }

    let mut nodes = Table::new(
        &dir.join("nodes.parquet"),
        &["id", "label"],
        &g.node_props(),
    )?;
    for i in 0..g.nodes() {
        let r = g.node(i);
        nodes.push(&[&r.id, r.labels[0]], &r.props)?;
    }
    nodes.close()?;
    let mut tables = Vec::new();
    for t in g.types() {
        tables.push((
            t,
            Table::new(
                &dir.join(format!("edges_{t}.parquet")),
                &["src", "dst", "eid"],
                &g.edge_props(),
            )?,
        ));
    }
    for i in 0..g.edges() {
        let e = g.edge(i);
        let (_, t) = tables
            .iter_mut()
            .find(|(t, _)| *t == e.rel_type)
            .expect("edge type is declared");
        t.push(&[&e.src, &e.dst, &e.id], &e.props)?;
    }
    for (_, t) in tables {
        t.close()?;
    }
    Ok(())
}

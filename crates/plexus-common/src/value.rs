use crate::temporal::{Date, DateTime, Duration, LocalDateTime, LocalTime, Time};
use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

/// A property value: what a node or an edge may hold under a key.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum Value {
    /// Absent: the value of a missing property.
    #[default]
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    String(String),
    Bytes(Vec<u8>),
    List(Vec<Value>),
    Map(BTreeMap<String, Value>),
    Date(Date),
    LocalTime(LocalTime),
    Time(Time),
    LocalDateTime(LocalDateTime),
    DateTime(DateTime),
    Duration(Duration),
    /// Graph entities exist only in query rows and results; storage refuses
    /// them as property values (see [`Value::is_storable`]). Shared, so a
    /// row's copy counts a reference instead of allocating (rows are cloned
    /// at every match a query buffers, sorts or projects).
    Node(Arc<NodeValue>),
    Relationship(Arc<RelValue>),
    Path(Arc<PathValue>),
}

/// A node in a query row or result.
///
/// While a query runs only `id` is meaningful: the executor reads labels and
/// properties from its transaction when an expression asks, so a row always
/// sees the query's own writes. Results are filled in when they leave the
/// query. Equality is identity.
#[derive(Debug, Clone, Default)]
pub struct NodeValue {
    pub id: u64,
    /// The node's user id (its element id), set in results.
    pub key: String,
    pub labels: Vec<String>,
    pub props: BTreeMap<String, Value>,
}

/// A relationship in a query row or result; as for [`NodeValue`], `id`,
/// `start` and `end` are always set, the type and properties only in results.
#[derive(Debug, Clone, Default)]
pub struct RelValue {
    pub id: u64,
    pub start: u64,
    pub end: u64,
    /// The element ids of the relationship and of its endpoints, set in
    /// results (a relationship loaded without an id shows `#<id>`).
    pub key: String,
    pub start_key: String,
    pub end_key: String,
    pub rel_type: String,
    pub props: BTreeMap<String, Value>,
}

/// A path: `nodes.len() == rels.len() + 1`; relationship `i` joins nodes
/// `i` and `i + 1` in either direction.
#[derive(Debug, Clone, PartialEq)]
pub struct PathValue {
    pub nodes: Vec<NodeValue>,
    pub rels: Vec<RelValue>,
}

impl PartialEq for NodeValue {
    fn eq(&self, other: &Self) -> bool {
        self.id == other.id
    }
}

impl PartialEq for RelValue {
    fn eq(&self, other: &Self) -> bool {
        self.id == other.id
    }
}

/// The type of a [`Value`], used to declare typed indexes and in error messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ValueType {
    Null,
    Bool,
    Int,
    Float,
    String,
    Bytes,
    List,
    Map,
    Date,
    LocalTime,
    Time,
    LocalDateTime,
    DateTime,
    Duration,
    Node,
    Relationship,
    Path,
}

impl ValueType {
    // Codes are positions in this list and are stored on disk: append only.
    const ALL: [ValueType; 17] = [
        ValueType::Null,
        ValueType::Bool,
        ValueType::Int,
        ValueType::Float,
        ValueType::String,
        ValueType::Bytes,
        ValueType::List,
        ValueType::Map,
        ValueType::Date,
        ValueType::LocalTime,
        ValueType::Time,
        ValueType::LocalDateTime,
        ValueType::DateTime,
        ValueType::Duration,
        ValueType::Node,
        ValueType::Relationship,
        ValueType::Path,
    ];

    /// The type's name as users write it (`INT`, `STRING`, …).
    pub fn name(self) -> &'static str {
        match self {
            ValueType::Null => "NULL",
            ValueType::Bool => "BOOL",
            ValueType::Int => "INT",
            ValueType::Float => "FLOAT",
            ValueType::String => "STRING",
            ValueType::Bytes => "BYTES",
            ValueType::List => "LIST",
            ValueType::Map => "MAP",
            ValueType::Date => "DATE",
            ValueType::LocalTime => "LOCAL TIME",
            ValueType::Time => "TIME",
            ValueType::LocalDateTime => "LOCAL DATETIME",
            ValueType::DateTime => "DATETIME",
            ValueType::Duration => "DURATION",
            ValueType::Node => "NODE",
            ValueType::Relationship => "RELATIONSHIP",
            ValueType::Path => "PATH",
        }
    }

    /// Parses a type name case-insensitively (`int`, `INTEGER`, `str`, `local_datetime` …).
    pub fn parse(s: &str) -> Option<ValueType> {
        let norm: String = s
            .chars()
            .filter(|c| !matches!(c, ' ' | '_'))
            .collect::<String>()
            .to_ascii_uppercase();
        let alias = match norm.as_str() {
            "INTEGER" | "INT64" | "LONG" => ValueType::Int,
            "DOUBLE" | "FLOAT64" => ValueType::Float,
            "STR" => ValueType::String,
            "BOOLEAN" => ValueType::Bool,
            _ => {
                return Self::ALL
                    .into_iter()
                    .find(|t| t.name().replace(' ', "") == norm)
            }
        };
        Some(alias)
    }

    /// A stable small number for on-disk schema records.
    pub fn code(self) -> u8 {
        Self::ALL.iter().position(|t| *t == self).unwrap_or(0) as u8
    }

    /// The inverse of [`ValueType::code`].
    pub fn from_code(code: u8) -> Option<ValueType> {
        Self::ALL.get(code as usize).copied()
    }
}

impl fmt::Display for ValueType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl Value {
    /// The type of this value.
    pub fn value_type(&self) -> ValueType {
        match self {
            Value::Null => ValueType::Null,
            Value::Bool(_) => ValueType::Bool,
            Value::Int(_) => ValueType::Int,
            Value::Float(_) => ValueType::Float,
            Value::String(_) => ValueType::String,
            Value::Bytes(_) => ValueType::Bytes,
            Value::List(_) => ValueType::List,
            Value::Map(_) => ValueType::Map,
            Value::Date(_) => ValueType::Date,
            Value::LocalTime(_) => ValueType::LocalTime,
            Value::Time(_) => ValueType::Time,
            Value::LocalDateTime(_) => ValueType::LocalDateTime,
            Value::DateTime(_) => ValueType::DateTime,
            Value::Duration(_) => ValueType::Duration,
            Value::Node(_) => ValueType::Node,
            Value::Relationship(_) => ValueType::Relationship,
            Value::Path(_) => ValueType::Path,
        }
    }

    /// False for values that hold a node, relationship or path anywhere:
    /// those cannot be stored as properties.
    pub fn is_storable(&self) -> bool {
        match self {
            Value::Node(_) | Value::Relationship(_) | Value::Path(_) => false,
            Value::List(items) => items.iter().all(Value::is_storable),
            Value::Map(m) => m.values().all(Value::is_storable),
            _ => true,
        }
    }

    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }

    /// Whether lists and maps nest more than `limit` levels deep in this
    /// value. Iterative, so any value can be asked: code that recurses over
    /// values (dropping, cloning, comparing, encoding) needs them shallow
    /// enough for its stack, which is why the query engine caps nesting.
    pub fn nests_deeper_than(&self, limit: usize) -> bool {
        // Called on every list and map a query builds: only nested
        // containers are stacked, so a flat list allocates nothing.
        let container = |c: &&Value| matches!(c, Value::List(_) | Value::Map(_));
        let mut stack: Vec<(&Value, usize)> = Vec::new();
        let mut next = Some((self, 0usize));
        while let Some((v, depth)) = next.take().or_else(|| stack.pop()) {
            let nested = match v {
                Value::List(items) => {
                    stack.extend(items.iter().filter(container).map(|c| (c, depth + 1)));
                    true
                }
                Value::Map(m) => {
                    stack.extend(m.values().filter(container).map(|c| (c, depth + 1)));
                    true
                }
                _ => false,
            };
            if nested && depth >= limit {
                return true;
            }
        }
        false
    }

    pub fn as_int(&self) -> Option<i64> {
        match self {
            Value::Int(i) => Some(*i),
            _ => None,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(s) => Some(s),
            _ => None,
        }
    }
}

impl From<i64> for Value {
    fn from(v: i64) -> Self {
        Value::Int(v)
    }
}
impl From<i32> for Value {
    fn from(v: i32) -> Self {
        Value::Int(v as i64)
    }
}
impl From<f64> for Value {
    fn from(v: f64) -> Self {
        Value::Float(v)
    }
}
impl From<bool> for Value {
    fn from(v: bool) -> Self {
        Value::Bool(v)
    }
}
impl From<&str> for Value {
    fn from(v: &str) -> Self {
        Value::String(v.to_string())
    }
}
impl From<String> for Value {
    fn from(v: String) -> Self {
        Value::String(v)
    }
}
impl<T: Into<Value>> From<Vec<T>> for Value {
    fn from(v: Vec<T>) -> Self {
        Value::List(v.into_iter().map(Into::into).collect())
    }
}

fn write_string_literal(f: &mut fmt::Formatter<'_>, s: &str) -> fmt::Result {
    f.write_str("'")?;
    for c in s.chars() {
        match c {
            '\'' => f.write_str("\\'")?,
            '\\' => f.write_str("\\\\")?,
            '\n' => f.write_str("\\n")?,
            c => write!(f, "{c}")?,
        }
    }
    f.write_str("'")
}

/// Cypher literal syntax (`'text'`, `[1, 2]`, `{a: 1}`), as the TCK writes values.
impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Null => f.write_str("null"),
            Value::Bool(b) => write!(f, "{b}"),
            Value::Int(i) => write!(f, "{i}"),
            Value::Float(x) if x.is_nan() => f.write_str("NaN"),
            Value::Float(x) if x.is_infinite() => {
                f.write_str(if *x > 0.0 { "Infinity" } else { "-Infinity" })
            }
            Value::Float(x) if x.fract() == 0.0 && x.abs() < 1e16 => write!(f, "{x:.1}"),
            Value::Float(x) => write!(f, "{x}"),
            Value::String(s) => write_string_literal(f, s),
            Value::Bytes(b) => {
                f.write_str("0x")?;
                b.iter().try_for_each(|byte| write!(f, "{byte:02x}"))
            }
            Value::List(items) => {
                f.write_str("[")?;
                for (i, v) in items.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{v}")?;
                }
                f.write_str("]")
            }
            Value::Map(m) => {
                f.write_str("{")?;
                for (i, (k, v)) in m.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{k}: {v}")?;
                }
                f.write_str("}")
            }
            Value::Date(d) => write!(f, "'{d}'"),
            Value::LocalTime(t) => write!(f, "'{t}'"),
            Value::Time(t) => write!(f, "'{t}'"),
            Value::LocalDateTime(t) => write!(f, "'{t}'"),
            Value::DateTime(t) => write!(f, "'{t}'"),
            Value::Duration(d) => write!(f, "'{d}'"),
            Value::Node(n) => write!(f, "{n}"),
            Value::Relationship(r) => write!(f, "{r}"),
            Value::Path(p) => {
                f.write_str("<")?;
                let mut at = p.nodes.first().map(|n| n.id);
                for (i, n) in p.nodes.iter().enumerate() {
                    if i > 0 {
                        let r = &p.rels[i - 1];
                        if Some(r.start) == at {
                            write!(f, "-{r}->")?;
                        } else {
                            write!(f, "<-{r}-")?;
                        }
                        at = Some(n.id);
                    }
                    write!(f, "{n}")?;
                }
                f.write_str(">")
            }
        }
    }
}

fn write_props(f: &mut fmt::Formatter<'_>, props: &BTreeMap<String, Value>) -> fmt::Result {
    if !props.is_empty() {
        f.write_str(" ")?;
        fmt::Display::fmt(&Value::Map(props.clone()), f)?;
    }
    Ok(())
}

/// `(:Label {key: value})`, as the TCK writes nodes.
impl fmt::Display for NodeValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("(")?;
        for l in &self.labels {
            write!(f, ":{l}")?;
        }
        write_props(f, &self.props)?;
        f.write_str(")")
    }
}

/// `[:TYPE {key: value}]`.
impl fmt::Display for RelValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "[:{}", self.rel_type)?;
        write_props(f, &self.props)?;
        f.write_str("]")
    }
}

/// An estimate of the bytes a value holds, its inline part included: what
/// query memory budgets and the storage's column cache count.
pub fn value_size(v: &Value) -> usize {
    const INLINE: usize = std::mem::size_of::<Value>();
    INLINE
        + match v {
            Value::String(s) => s.len(),
            Value::Bytes(b) => b.len(),
            Value::List(items) => items.iter().map(value_size).sum(),
            Value::Map(m) => m.iter().map(|(k, v)| k.len() + 24 + value_size(v)).sum(),
            Value::Node(_) | Value::Relationship(_) => 64,
            Value::Path(p) => (p.nodes.len() + p.rels.len()) * (INLINE + 64),
            _ => 0,
        }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn type_names_parse_back() {
        for t in ValueType::ALL {
            assert_eq!(ValueType::parse(t.name()), Some(t));
            assert_eq!(ValueType::from_code(t.code()), Some(t));
        }
        assert_eq!(ValueType::parse("integer"), Some(ValueType::Int));
        assert_eq!(
            ValueType::parse("local_datetime"),
            Some(ValueType::LocalDateTime)
        );
        assert_eq!(ValueType::parse("nope"), None);
    }

    #[test]
    fn nesting_is_measured_without_recursion() {
        let mut v = Value::Int(1);
        for _ in 0..3 {
            v = Value::List(vec![v]);
        }
        assert!(!v.nests_deeper_than(3));
        assert!(v.nests_deeper_than(2));
        let map = Value::Map([("k".to_string(), v)].into_iter().collect());
        assert!(map.nests_deeper_than(3));
        assert!(!Value::List(vec![]).nests_deeper_than(1));
    }

    #[test]
    fn displays_as_cypher_literals() {
        let v = Value::List(vec![1.into(), 2.5.into(), "it's".into(), Value::Null]);
        assert_eq!(v.to_string(), "[1, 2.5, 'it\\'s', null]");
        assert_eq!(Value::Float(3.0).to_string(), "3.0");
    }
}

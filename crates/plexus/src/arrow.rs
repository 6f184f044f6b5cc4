//! Query results as Arrow record batches: the columnar form Python
//! (pyarrow, Polars, pandas) and other engines take without a copy per value.
//!
//! A column's Arrow type is inferred from all of its values, so every batch
//! of one result shares one schema. Types that disagree widen: integers
//! beside floats become floats, maps and entities become structs with the
//! union of their keys; anything else that cannot share a type (a string
//! beside an integer, a time with an offset, an instant outside the range
//! of nanosecond timestamps) becomes text in Cypher's literal syntax, so no
//! value is ever lost or altered silently.
//!
//! Entities become structs: a node `{_id, _labels, …properties}`, a
//! relationship `{_id, _type, _start, _end, …properties}`, a path
//! `{_nodes, _relationships}`.

use crate::{Result, Value};
use arrow_array::builder::{
    BinaryBuilder, BooleanBuilder, Date32Builder, Float64Builder, Int64Builder,
    IntervalMonthDayNanoBuilder, StringBuilder, Time64NanosecondBuilder,
    TimestampNanosecondBuilder,
};
use arrow_array::types::IntervalMonthDayNano;
use arrow_array::{ArrayRef, ListArray, NullArray, RecordBatch, StructArray};
use arrow_schema::{DataType, Field, Fields, Schema, SchemaRef, TimeUnit};
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::Arc;

/// Rows per record batch of a converted result.
pub const BATCH_ROWS: usize = 65_536;

/// The Arrow type a column's values share.
#[derive(Debug, Clone, PartialEq)]
enum Kind {
    Null,
    Bool,
    Int,
    Float,
    Str,
    Bytes,
    Date,
    LocalTime,
    LocalDateTime,
    DateTime,
    Duration,
    List(Box<Kind>),
    Struct(BTreeMap<String, Kind>),
    /// Values that share no Arrow type, as Cypher literal text.
    Text,
}

/// Converts `rows` (each as long as `columns`) into record batches of at
/// most [`BATCH_ROWS`] rows sharing one schema. An empty result is one
/// empty batch, so the schema always reaches the reader.
pub fn to_record_batches(
    columns: &[String],
    rows: &[Vec<Value>],
) -> Result<(SchemaRef, Vec<RecordBatch>)> {
    let flat: Vec<Vec<Cow<'_, Value>>> = rows
        .iter()
        .map(|r| r.iter().map(flatten).collect())
        .collect();
    let kinds: Vec<Kind> = (0..columns.len())
        .map(|c| {
            flat.iter()
                .filter_map(|r| r.get(c))
                .fold(Kind::Null, |k, v| unify(k, kind_of(v)))
        })
        .collect();
    let fields: Vec<Field> = columns
        .iter()
        .zip(&kinds)
        .map(|(name, k)| Field::new(name, data_type(k), true))
        .collect();
    let schema: SchemaRef = Arc::new(Schema::new(fields));
    let mut batches = Vec::new();
    let chunks: Vec<&[Vec<Cow<'_, Value>>]> = if flat.is_empty() {
        vec![&[]]
    } else {
        flat.chunks(BATCH_ROWS).collect()
    };
    for chunk in chunks {
        let arrays = kinds
            .iter()
            .enumerate()
            .map(|(c, k)| {
                let cells: Vec<Option<&Value>> = chunk.iter().map(|r| cell(r.get(c))).collect();
                build(k, &cells)
            })
            .collect();
        batches.push(RecordBatch::try_new(schema.clone(), arrays).map_err(internal)?);
    }
    Ok((schema, batches))
}

fn internal(e: arrow_schema::ArrowError) -> crate::Error {
    crate::Error::Arrow(e)
}

/// A present, non-null value.
fn cell<'a>(v: Option<&'a Cow<'a, Value>>) -> Option<&'a Value> {
    v.map(|v| v.as_ref()).filter(|v| !matches!(v, Value::Null))
}

/// Entities as maps with their identity under `_`-names; other values as they are.
fn flatten(v: &Value) -> Cow<'_, Value> {
    match v {
        Value::Node(_) | Value::Relationship(_) | Value::Path(_) => Cow::Owned(entity_map(v)),
        Value::List(items) if items.iter().any(is_entity) => Cow::Owned(Value::List(
            items.iter().map(|i| flatten(i).into_owned()).collect(),
        )),
        _ => Cow::Borrowed(v),
    }
}

fn is_entity(v: &Value) -> bool {
    match v {
        Value::Node(_) | Value::Relationship(_) | Value::Path(_) => true,
        Value::List(items) => items.iter().any(is_entity),
        _ => false,
    }
}

fn entity_map(v: &Value) -> Value {
    let s = |t: &str| Value::String(t.to_string());
    match v {
        Value::Node(n) => {
            let mut m = n.props.clone();
            m.insert("_id".into(), s(&n.key));
            m.insert(
                "_labels".into(),
                Value::List(n.labels.iter().map(|l| s(l)).collect()),
            );
            Value::Map(m)
        }
        Value::Relationship(r) => {
            let mut m = r.props.clone();
            m.insert("_id".into(), s(&r.key));
            m.insert("_type".into(), s(&r.rel_type));
            m.insert("_start".into(), s(&r.start_key));
            m.insert("_end".into(), s(&r.end_key));
            Value::Map(m)
        }
        Value::Path(p) => {
            let nodes = p
                .nodes
                .iter()
                .map(|n| entity_map(&Value::Node(std::sync::Arc::new(n.clone()))));
            let rels = p
                .rels
                .iter()
                .map(|r| entity_map(&Value::Relationship(std::sync::Arc::new(r.clone()))));
            Value::Map(BTreeMap::from([
                ("_nodes".to_string(), Value::List(nodes.collect())),
                ("_relationships".to_string(), Value::List(rels.collect())),
            ]))
        }
        other => flatten(other).into_owned(),
    }
}

const NANOS: i64 = 1_000_000_000;

/// Seconds and nanoseconds as one count of nanoseconds, when it fits.
fn nanos_of(secs: i64, nanos: i64) -> Option<i64> {
    secs.checked_mul(NANOS)?.checked_add(nanos)
}

fn interval(d: &crate::Duration) -> Option<IntervalMonthDayNano> {
    Some(IntervalMonthDayNano::new(
        i32::try_from(d.months).ok()?,
        i32::try_from(d.days).ok()?,
        nanos_of(d.secs, i64::from(d.nanos))?,
    ))
}

fn kind_of(v: &Value) -> Kind {
    match v {
        Value::Null => Kind::Null,
        Value::Bool(_) => Kind::Bool,
        Value::Int(_) => Kind::Int,
        Value::Float(_) => Kind::Float,
        Value::String(_) => Kind::Str,
        Value::Bytes(_) => Kind::Bytes,
        // Arrow's dates count days in an i32 (±5.8 million years).
        Value::Date(d) if i32::try_from(d.days).is_ok() => Kind::Date,
        Value::LocalTime(_) => Kind::LocalTime,
        Value::LocalDateTime(t) if nanos_of(t.secs, i64::from(t.nanos)).is_some() => {
            Kind::LocalDateTime
        }
        Value::DateTime(t) if nanos_of(t.secs, i64::from(t.nanos)).is_some() => Kind::DateTime,
        Value::Duration(d) if interval(d).is_some() => Kind::Duration,
        Value::List(items) => Kind::List(Box::new(
            items.iter().fold(Kind::Null, |k, i| unify(k, kind_of(i))),
        )),
        Value::Map(m) => Kind::Struct(m.iter().map(|(k, v)| (k.clone(), kind_of(v))).collect()),
        _ => Kind::Text,
    }
}

/// The narrowest kind holding values of both kinds.
fn unify(a: Kind, b: Kind) -> Kind {
    match (a, b) {
        (Kind::Null, k) | (k, Kind::Null) => k,
        (a, b) if a == b => a,
        (Kind::Int, Kind::Float) | (Kind::Float, Kind::Int) => Kind::Float,
        (Kind::List(a), Kind::List(b)) => Kind::List(Box::new(unify(*a, *b))),
        (Kind::Struct(mut a), Kind::Struct(b)) => {
            for (k, v) in b {
                let merged = match a.remove(&k) {
                    Some(old) => unify(old, v),
                    None => v,
                };
                a.insert(k, merged);
            }
            Kind::Struct(a)
        }
        _ => Kind::Text,
    }
}

fn data_type(k: &Kind) -> DataType {
    match k {
        Kind::Null => DataType::Null,
        Kind::Bool => DataType::Boolean,
        Kind::Int => DataType::Int64,
        Kind::Float => DataType::Float64,
        Kind::Str | Kind::Text => DataType::Utf8,
        Kind::Bytes => DataType::Binary,
        Kind::Date => DataType::Date32,
        Kind::LocalTime => DataType::Time64(TimeUnit::Nanosecond),
        Kind::LocalDateTime => DataType::Timestamp(TimeUnit::Nanosecond, None),
        Kind::DateTime => DataType::Timestamp(TimeUnit::Nanosecond, Some("UTC".into())),
        Kind::Duration => DataType::Interval(arrow_schema::IntervalUnit::MonthDayNano),
        Kind::List(item) => DataType::List(Arc::new(Field::new("item", data_type(item), true))),
        Kind::Struct(fields) => DataType::Struct(struct_fields(fields)),
    }
}

fn struct_fields(fields: &BTreeMap<String, Kind>) -> Fields {
    fields
        .iter()
        .map(|(name, k)| Field::new(name, data_type(k), true))
        .collect()
}

/// One column's array from its cells (`None` is null).
fn build(k: &Kind, cells: &[Option<&Value>]) -> ArrayRef {
    macro_rules! column {
        ($builder:expr, $pat:pat => $v:expr) => {{
            let mut b = $builder;
            for c in cells {
                match c {
                    Some($pat) => b.append_value($v),
                    _ => b.append_null(),
                }
            }
            Arc::new(b.finish())
        }};
    }
    match k {
        Kind::Null => Arc::new(NullArray::new(cells.len())),
        Kind::Bool => column!(BooleanBuilder::new(), Value::Bool(x) => *x),
        Kind::Int => column!(Int64Builder::new(), Value::Int(x) => *x),
        Kind::Float => {
            let mut b = Float64Builder::new();
            for c in cells {
                match c {
                    Some(Value::Float(x)) => b.append_value(*x),
                    Some(Value::Int(x)) => b.append_value(*x as f64),
                    _ => b.append_null(),
                }
            }
            Arc::new(b.finish())
        }
        Kind::Str => column!(StringBuilder::new(), Value::String(s) => s),
        Kind::Bytes => column!(BinaryBuilder::new(), Value::Bytes(s) => s),
        Kind::Date => {
            // Every date of a date column fits (`kind_of`).
            let mut b = Date32Builder::new();
            for c in cells {
                match c {
                    Some(Value::Date(d)) => b.append_option(i32::try_from(d.days).ok()),
                    _ => b.append_null(),
                }
            }
            Arc::new(b.finish())
        }
        Kind::LocalTime => {
            // Nanoseconds of a day (< 86,400 × 10⁹) always fit an i64.
            column!(Time64NanosecondBuilder::new(), Value::LocalTime(t) => t.nanos as i64)
        }
        Kind::LocalDateTime => timestamps(cells, None),
        Kind::DateTime => timestamps(cells, Some("UTC")),
        Kind::Duration => {
            let mut b = IntervalMonthDayNanoBuilder::new();
            for c in cells {
                match c {
                    Some(Value::Duration(d)) => b.append_option(interval(d)),
                    _ => b.append_null(),
                }
            }
            Arc::new(b.finish())
        }
        Kind::Text => {
            let mut b = StringBuilder::new();
            for c in cells {
                match c {
                    Some(Value::String(s)) => b.append_value(s),
                    // A temporal value past Arrow's range: its ISO text.
                    Some(Value::Date(d)) => b.append_value(d.to_string()),
                    Some(Value::LocalDateTime(t)) => b.append_value(t.to_string()),
                    Some(Value::DateTime(t)) => b.append_value(t.to_string()),
                    Some(Value::Duration(d)) => b.append_value(d.to_string()),
                    Some(v) => b.append_value(v.to_string()),
                    None => b.append_null(),
                }
            }
            Arc::new(b.finish())
        }
        Kind::List(item) => list(item, cells),
        Kind::Struct(fields) => structs(fields, cells),
    }
}

fn timestamps(cells: &[Option<&Value>], tz: Option<&str>) -> ArrayRef {
    let mut b = TimestampNanosecondBuilder::new();
    for c in cells {
        let n = match c {
            Some(Value::LocalDateTime(t)) => nanos_of(t.secs, i64::from(t.nanos)),
            Some(Value::DateTime(t)) => nanos_of(t.secs, i64::from(t.nanos)),
            _ => None,
        };
        b.append_option(n);
    }
    let a = b.finish();
    Arc::new(match tz {
        Some(tz) => a.with_timezone(tz),
        None => a,
    })
}

fn list(item: &Kind, cells: &[Option<&Value>]) -> ArrayRef {
    let mut offsets = Vec::with_capacity(cells.len() + 1);
    let mut children: Vec<Option<&Value>> = Vec::new();
    let mut valid = Vec::with_capacity(cells.len());
    offsets.push(0i32);
    for c in cells {
        match c {
            Some(Value::List(items)) => {
                children.extend(items.iter().map(|v| Some(v).filter(|v| !v.is_null())));
                valid.push(true);
            }
            _ => valid.push(false),
        }
        // A result's list cells are in memory together, far below 2³¹ items.
        offsets.push(i32::try_from(children.len()).unwrap_or(i32::MAX));
    }
    let field = Arc::new(Field::new("item", data_type(item), true));
    Arc::new(ListArray::new(
        field,
        arrow_buffer::OffsetBuffer::new(arrow_buffer::ScalarBuffer::from(offsets)),
        build(item, &children),
        Some(valid.into()),
    ))
}

fn structs(fields: &BTreeMap<String, Kind>, cells: &[Option<&Value>]) -> ArrayRef {
    let valid: Vec<bool> = cells
        .iter()
        .map(|c| matches!(c, Some(Value::Map(_))))
        .collect();
    let children: Vec<ArrayRef> = fields
        .iter()
        .map(|(name, k)| {
            let col: Vec<Option<&Value>> = cells
                .iter()
                .map(|c| match c {
                    Some(Value::Map(m)) => m.get(name).filter(|v| !v.is_null()),
                    _ => None,
                })
                .collect();
            build(k, &col)
        })
        .collect();
    if fields.is_empty() {
        return Arc::new(StructArray::new_empty_fields(
            cells.len(),
            Some(valid.into()),
        ));
    }
    Arc::new(StructArray::new(
        struct_fields(fields),
        children,
        Some(valid.into()),
    ))
}

impl crate::Cursor {
    /// The rest of the result as Arrow record batches with one schema.
    pub fn into_record_batches(self) -> Result<(SchemaRef, Vec<RecordBatch>)> {
        let table = self.into_table()?;
        to_record_batches(&table.columns, &table.rows)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::cast::AsArray;
    use arrow_array::types::{Float64Type, Int64Type};
    use arrow_array::Array;

    fn one(values: Vec<Value>) -> (DataType, ArrayRef) {
        let rows: Vec<Vec<Value>> = values.into_iter().map(|v| vec![v]).collect();
        let (schema, batches) = to_record_batches(&["c".into()], &rows).unwrap();
        let a = batches[0].column(0).clone();
        (schema.field(0).data_type().clone(), a)
    }

    #[test]
    fn integers_beside_floats_widen_and_nulls_stay_null() {
        let (t, a) = one(vec![Value::Int(1), Value::Null, Value::Float(2.5)]);
        assert_eq!(t, DataType::Float64);
        let f = a.as_primitive::<Float64Type>();
        assert_eq!(f.value(0), 1.0);
        assert!(f.is_null(1));
        assert_eq!(f.value(2), 2.5);
    }

    #[test]
    fn values_without_a_shared_type_become_literal_text() {
        let (t, a) = one(vec![Value::Int(1), Value::String("x".into())]);
        assert_eq!(t, DataType::Utf8);
        let s = a.as_string::<i32>();
        assert_eq!((s.value(0), s.value(1)), ("1", "x"));
    }

    #[test]
    fn dates_beyond_arrows_range_become_text() {
        let near = crate::Date::from_ymd(2024, 2, 29).unwrap();
        let (t, _) = one(vec![Value::Date(near)]);
        assert_eq!(t, DataType::Date32);
        let far = crate::Date::from_ymd(999_999_999, 12, 31).unwrap();
        let (t, a) = one(vec![Value::Date(near), Value::Date(far)]);
        assert_eq!(t, DataType::Utf8);
        let s = a.as_string::<i32>();
        assert_eq!((s.value(0), s.value(1)), ("2024-02-29", "+999999999-12-31"));
    }

    #[test]
    fn maps_become_structs_with_the_union_of_their_keys() {
        let m = |k: &str, v: i64| Value::Map(BTreeMap::from([(k.to_string(), Value::Int(v))]));
        let (t, a) = one(vec![m("a", 1), m("b", 2)]);
        assert!(matches!(t, DataType::Struct(ref f) if f.len() == 2));
        let s = a.as_struct();
        let col_a = s.column_by_name("a").unwrap().as_primitive::<Int64Type>();
        assert_eq!(col_a.value(0), 1);
        assert!(col_a.is_null(1));
    }

    #[test]
    fn lists_keep_their_items_and_nodes_their_identity() {
        let (t, a) = one(vec![
            Value::List(vec![Value::Int(1), Value::Int(2)]),
            Value::List(vec![]),
            Value::Null,
        ]);
        assert!(matches!(t, DataType::List(_)));
        let l = a.as_list::<i32>();
        assert_eq!(l.value_length(0), 2);
        assert_eq!(l.value_length(1), 0);
        assert!(l.is_null(2));

        let node = crate::NodeValue {
            id: 7,
            key: "ann".into(),
            labels: vec!["Person".into()],
            props: BTreeMap::from([("age".to_string(), Value::Int(3))]),
        };
        let (_, a) = one(vec![Value::Node(std::sync::Arc::new(node))]);
        let s = a.as_struct();
        assert_eq!(
            s.column_by_name("_id").unwrap().as_string::<i32>().value(0),
            "ann"
        );
        let age = s.column_by_name("age").unwrap().as_primitive::<Int64Type>();
        assert_eq!(age.value(0), 3);
    }

    #[test]
    fn an_instant_outside_nanosecond_range_is_text_not_wrapped() {
        let far = Value::LocalDateTime(crate::LocalDateTime {
            secs: i64::MAX / 2,
            nanos: 0,
        });
        let (t, _) = one(vec![far]);
        assert_eq!(t, DataType::Utf8);
    }

    #[test]
    fn an_empty_result_still_has_its_schema() {
        let (schema, batches) = to_record_batches(&["a".into(), "b".into()], &[]).unwrap();
        assert_eq!(schema.fields().len(), 2);
        assert_eq!(batches.len(), 1);
        assert_eq!(batches[0].num_rows(), 0);
    }
}

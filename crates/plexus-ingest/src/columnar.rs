//! Columnar input: Parquet files, Arrow IPC files and Arrow record batches.
//! Columns are typed by the schema; roles go by name:
//! nodes have `id` and optionally `label` or `labels` (a string or a list);
//! edges have `src`/`start`/`from` and `dst`/`end`/`to`, optionally `type`
//! and `id`/`eid`. Every other column is a property; a null is no property.

use crate::error::IngestError;
use crate::Input;
use arrow_array::cast::AsArray;
use arrow_array::types::{
    Date32Type, Float32Type, Float64Type, Int16Type, Int32Type, Int64Type, Int8Type,
    TimestampMicrosecondType, TimestampMillisecondType, TimestampNanosecondType,
    TimestampSecondType,
};
use arrow_array::{Array, ArrayRef, RecordBatch};
use arrow_schema::{DataType, TimeUnit};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use plexus_common::{Date, DateTime, LocalDateTime, Value};
use plexus_storage::{BulkEdge, BulkNode, Origin, Props, StorageError};

/// Record batches, or the reason one could not be read.
pub type Batches = Box<dyn Iterator<Item = Result<RecordBatch, String>>>;

/// The record batches of a Parquet or Arrow IPC file.
fn open(input: &Input) -> Result<Batches, IngestError> {
    let file = std::fs::File::open(&input.path).map_err(|error| IngestError::Io {
        file: input.path.clone(),
        error,
    })?;
    let at = input.at(1, None);
    Ok(match input.format {
        crate::Format::Parquet => Box::new(
            ParquetRecordBatchReaderBuilder::try_new(file)
                .and_then(|b| b.with_batch_size(8192).build())
                .map_err(|e| IngestError::bad(at, format!("not a readable Parquet file: {e}")))?
                .map(|b| b.map_err(|e| e.to_string())),
        ),
        _ => Box::new(
            arrow_ipc::reader::FileReader::try_new(file, None)
                .map_err(|e| IngestError::bad(at, format!("not a readable Arrow IPC file: {e}")))?
                .map(|b| b.map_err(|e| e.to_string())),
        ),
    })
}

/// The rows a Parquet file says it holds (read from its footer), to size
/// the load's arrays up front; `None` for other formats or on any trouble
/// (reading the file proper reports that).
pub(crate) fn expected_rows(input: &Input) -> Option<u64> {
    if input.format != crate::Format::Parquet {
        return None;
    }
    let file = std::fs::File::open(&input.path).ok()?;
    let b = ParquetRecordBatchReaderBuilder::try_new(file).ok()?;
    u64::try_from(b.metadata().file_metadata().num_rows()).ok()
}

fn ts(secs: i64, nanos: u32, tz: &Option<std::sync::Arc<str>>) -> Value {
    match tz {
        Some(_) => Value::DateTime(DateTime {
            secs,
            nanos,
            offset_secs: 0,
            zone: None,
        }),
        None => Value::LocalDateTime(LocalDateTime { secs, nanos }),
    }
}

/// The value at `row` of a column, or `None` for null; unsupported types are errors.
fn value(a: &ArrayRef, row: usize) -> Result<Option<Value>, String> {
    if a.is_null(row) {
        return Ok(None);
    }
    Ok(Some(match a.data_type() {
        DataType::Utf8 => Value::String(a.as_string::<i32>().value(row).to_string()),
        DataType::LargeUtf8 => Value::String(a.as_string::<i64>().value(row).to_string()),
        DataType::Utf8View => Value::String(a.as_string_view().value(row).to_string()),
        DataType::Boolean => Value::Bool(a.as_boolean().value(row)),
        DataType::Int8 => Value::Int(a.as_primitive::<Int8Type>().value(row) as i64),
        DataType::Int16 => Value::Int(a.as_primitive::<Int16Type>().value(row) as i64),
        DataType::Int32 => Value::Int(a.as_primitive::<Int32Type>().value(row) as i64),
        DataType::Int64 => Value::Int(a.as_primitive::<Int64Type>().value(row)),
        DataType::Float32 => Value::Float(a.as_primitive::<Float32Type>().value(row) as f64),
        DataType::Float64 => Value::Float(a.as_primitive::<Float64Type>().value(row)),
        DataType::Date32 => Value::Date(Date {
            days: i64::from(a.as_primitive::<Date32Type>().value(row)),
        }),
        DataType::Timestamp(unit, tz) => {
            let (secs, nanos) = match unit {
                TimeUnit::Second => (a.as_primitive::<TimestampSecondType>().value(row), 0),
                TimeUnit::Millisecond => {
                    let v = a.as_primitive::<TimestampMillisecondType>().value(row);
                    (v.div_euclid(1000), v.rem_euclid(1000) * 1_000_000)
                }
                TimeUnit::Microsecond => {
                    let v = a.as_primitive::<TimestampMicrosecondType>().value(row);
                    (v.div_euclid(1_000_000), v.rem_euclid(1_000_000) * 1000)
                }
                TimeUnit::Nanosecond => {
                    let v = a.as_primitive::<TimestampNanosecondType>().value(row);
                    (v.div_euclid(1_000_000_000), v.rem_euclid(1_000_000_000))
                }
            };
            ts(secs, nanos as u32, tz)
        }
        DataType::List(_) => {
            let inner = a.as_list::<i32>().value(row);
            Value::List(
                (0..inner.len())
                    .map(|i| value(&inner, i).map(|v| v.unwrap_or(Value::Null)))
                    .collect::<Result<_, _>>()?,
            )
        }
        DataType::LargeList(_) => {
            let inner = a.as_list::<i64>().value(row);
            Value::List(
                (0..inner.len())
                    .map(|i| value(&inner, i).map(|v| v.unwrap_or(Value::Null)))
                    .collect::<Result<_, _>>()?,
            )
        }
        other => return Err(format!("columns of type {other} are not supported")),
    }))
}

/// The rows of every batch, made by `make(batch, rows before it)`: a
/// batch's column roles are worked out once, not per row. A batch that
/// cannot be read is one bad row.
fn per_batch<'a, T: 'a>(
    input: &'a Input,
    batches: Batches,
    mut make: impl FnMut(&RecordBatch, u64) -> Vec<Result<T, StorageError>> + 'a,
) -> impl Iterator<Item = Result<T, StorageError>> + 'a {
    let mut seen = 0u64;
    batches.flat_map(move |b| match b {
        Ok(batch) => {
            let start = seen;
            seen += batch.num_rows() as u64;
            match twice_named(&batch) {
                Some(m) => all_bad(input, &batch, start, &m),
                None => make(&batch, start),
            }
        }
        Err(e) => vec![Err(row_error(
            input,
            seen + 1,
            None,
            format!("cannot read the file: {e}"),
        ))],
    })
}

/// What is wrong with a batch whose schema names a column twice (Arrow
/// allows it): roles go by name, and a row's properties kept one of the
/// two values without a word.
fn twice_named(batch: &RecordBatch) -> Option<String> {
    let schema = batch.schema();
    let mut seen = std::collections::HashMap::new();
    for (i, f) in schema.fields().iter().enumerate() {
        if let Some(j) = seen.insert(f.name().as_str(), i) {
            return Some(format!(
                "column '{}' appears twice (columns {} and {})",
                f.name(),
                j + 1,
                i + 1
            ));
        }
    }
    None
}

/// Every row of a batch as the same error (a column the file lacks): each
/// is reported, or skipped, as its own row.
fn all_bad<T>(
    input: &Input,
    batch: &RecordBatch,
    start: u64,
    m: &str,
) -> Vec<Result<T, StorageError>> {
    (0..batch.num_rows() as u64)
        .map(|i| Err(row_error(input, start + i + 1, None, m.to_string())))
        .collect()
}

/// The property columns of a batch: every column not in `roles`.
fn prop_columns(batch: &RecordBatch, roles: &[Option<usize>]) -> Vec<(usize, String)> {
    batch
        .schema()
        .fields()
        .iter()
        .enumerate()
        .filter(|(c, _)| !roles.contains(&Some(*c)))
        .map(|(c, f)| (c, f.name().clone()))
        .collect()
}

fn find(batch: &RecordBatch, names: &[&str]) -> Option<usize> {
    names.iter().find_map(|n| batch.schema().index_of(n).ok())
}

fn text(batch: &RecordBatch, col: usize, row: usize) -> Result<Option<String>, String> {
    Ok(match value(batch.column(col), row)? {
        Some(Value::String(s)) => Some(s),
        Some(Value::Int(i)) => Some(i.to_string()),
        Some(other) => {
            return Err(format!(
                "expected a string or an integer, found a {}",
                other.value_type()
            ))
        }
        None => None,
    })
}

/// The properties of a row: its values in the property columns.
fn props(
    input: &Input,
    batch: &RecordBatch,
    row: usize,
    n: u64,
    columns: &[(usize, String)],
) -> Result<Props, StorageError> {
    let mut p = Props::new();
    for (c, name) in columns {
        match value(batch.column(*c), row) {
            Ok(Some(v)) => {
                p.insert(name.clone(), v);
            }
            Ok(None) => {}
            Err(m) => {
                return Err(row_error(
                    input,
                    n,
                    Some(c + 1),
                    format!("column '{name}': {m}"),
                ))
            }
        }
    }
    Ok(p)
}

/// A bad row at `line` (and 1-based `column`) of `input`, as the error that
/// `bulk_load` reports or skips.
fn row_error(input: &Input, line: u64, column: Option<usize>, m: String) -> StorageError {
    let at = input.at(line, column);
    IngestError::bad(at, m).into_row_error()
}

pub fn nodes(
    input: &Input,
) -> Result<impl Iterator<Item = Result<BulkNode, StorageError>> + '_, IngestError> {
    Ok(batch_nodes(input, open(input)?))
}

/// The node rows of record batches; `input` names them in messages.
pub fn batch_nodes(
    input: &Input,
    batches: Batches,
) -> impl Iterator<Item = Result<BulkNode, StorageError>> + '_ {
    let source = input.source();
    per_batch(input, batches, move |batch, start| {
        let Some(id) = find(batch, &["id"]) else {
            return all_bad(input, batch, start, "the file has no 'id' column");
        };
        let label_col = find(batch, &["labels", "label"]);
        let columns = prop_columns(batch, &[Some(id), label_col]);
        (0..batch.num_rows())
            .map(|row| {
                let n = start + row as u64 + 1;
                let bad = |column, m: String| row_error(input, n, column, m);
                let key = text(batch, id, row)
                    .map_err(|m| bad(Some(id + 1), m))?
                    .ok_or_else(|| bad(Some(id + 1), "the id is null".into()))?;
                let mut labels: Vec<String> = input.name.iter().cloned().collect();
                if let Some(c) = label_col {
                    match value(batch.column(c), row).map_err(|m| bad(Some(c + 1), m))? {
                        Some(Value::String(l)) => labels.push(l),
                        Some(Value::List(ls)) => labels
                            .extend(ls.into_iter().filter_map(|l| l.as_str().map(String::from))),
                        Some(_) => return Err(bad(Some(c + 1), "labels must be strings".into())),
                        None => {}
                    }
                }
                Ok(BulkNode {
                    key,
                    labels,
                    props: props(input, batch, row, n, &columns)?,
                    origin: Origin::row(&source, n),
                })
            })
            .collect()
    })
}

pub fn edges(
    input: &Input,
) -> Result<impl Iterator<Item = Result<BulkEdge, StorageError>> + '_, IngestError> {
    Ok(batch_edges(input, open(input)?))
}

/// The edge rows of record batches; `input` names them in messages.
pub fn batch_edges(
    input: &Input,
    batches: Batches,
) -> impl Iterator<Item = Result<BulkEdge, StorageError>> + '_ {
    let source = input.source();
    per_batch(input, batches, move |batch, start| {
        let Some(src) = find(batch, &["src", "start", "from"]) else {
            return all_bad(
                input,
                batch,
                start,
                "the file has no 'src' (or 'start') column",
            );
        };
        let Some(dst) = find(batch, &["dst", "end", "to"]) else {
            return all_bad(
                input,
                batch,
                start,
                "the file has no 'dst' (or 'end') column",
            );
        };
        let type_col = find(batch, &["type"]);
        let id_col = find(batch, &["id", "eid"]);
        let columns = prop_columns(batch, &[Some(src), Some(dst), type_col, id_col]);
        (0..batch.num_rows())
            .map(|row| {
                let n = start + row as u64 + 1;
                let bad = |column, m: String| row_error(input, n, column, m);
                let endpoint = |c: usize| {
                    text(batch, c, row)
                        .map_err(|m| bad(Some(c + 1), m))?
                        .ok_or_else(|| bad(Some(c + 1), "an endpoint is null".into()))
                };
                let (s, d) = (endpoint(src)?, endpoint(dst)?);
                let rel_type = match type_col {
                    Some(c) => text(batch, c, row).map_err(|m| bad(Some(c + 1), m))?,
                    None => None,
                }
                .or_else(|| input.name.clone())
                .ok_or_else(|| {
                    bad(
                        None,
                        "edges need a type: a 'type' column, or TYPE=file".into(),
                    )
                })?;
                let key = match id_col {
                    Some(c) => text(batch, c, row).map_err(|m| bad(Some(c + 1), m))?,
                    None => None,
                };
                Ok(BulkEdge {
                    key,
                    src: s,
                    dst: d,
                    rel_type,
                    props: props(input, batch, row, n, &columns)?,
                    origin: Origin::row(&source, n),
                })
            })
            .collect()
    })
}

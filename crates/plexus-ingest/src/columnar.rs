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
use plexus_storage::{BulkEdge, BulkNode, Props, StorageError};
use std::rc::Rc;

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
            days: a.as_primitive::<Date32Type>().value(row),
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

/// A row: its number in the file, its batch, its index in the batch.
type Row = (u64, Rc<RecordBatch>, usize);
type RowIter = Box<dyn Iterator<Item = Result<Row, IngestError>>>;

/// Every row of every batch as (row number, batch, index in batch).
fn rows(input: &Input, batches: Batches) -> impl Iterator<Item = Result<Row, IngestError>> + '_ {
    let mut seen = 0u64;
    batches.flat_map(move |b| -> RowIter {
        match b {
            Ok(batch) => {
                // Shared by the batch's rows: a row holds a counted reference.
                let batch = Rc::new(batch);
                let start = seen;
                seen += batch.num_rows() as u64;
                Box::new(
                    (0..batch.num_rows())
                        .map(move |i| Ok((start + i as u64 + 1, batch.clone(), i))),
                )
            }
            Err(e) => Box::new(std::iter::once(Err(IngestError::bad(
                input.at(seen + 1, None),
                format!("cannot read the file: {e}"),
            )))),
        }
    })
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

/// The properties of a row: every column not in `roles`.
fn props(
    input: &Input,
    batch: &RecordBatch,
    row: usize,
    n: u64,
    roles: &[Option<usize>],
) -> Result<Props, IngestError> {
    let mut p = Props::new();
    for (c, field) in batch.schema().fields().iter().enumerate() {
        if roles.contains(&Some(c)) {
            continue;
        }
        let at = || input.at(n, Some(c + 1));
        if let Some(v) = value(batch.column(c), row)
            .map_err(|m| IngestError::bad(at(), format!("column '{}': {m}", field.name())))?
        {
            p.insert(field.name().clone(), v);
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
    rows(input, batches).map(move |r| {
        let (n, batch, row) = r.map_err(IngestError::into_row_error)?;
        let bad = |column, m: String| row_error(input, n, column, m);
        let id =
            find(&batch, &["id"]).ok_or_else(|| bad(None, "the file has no 'id' column".into()))?;
        let key = text(&batch, id, row)
            .map_err(|m| bad(Some(id + 1), m))?
            .ok_or_else(|| bad(Some(id + 1), "the id is null".into()))?;
        let label_col = find(&batch, &["labels", "label"]);
        let mut labels: Vec<String> = input.name.iter().cloned().collect();
        if let Some(c) = label_col {
            match value(batch.column(c), row).map_err(|m| bad(Some(c + 1), m))? {
                Some(Value::String(l)) => labels.push(l),
                Some(Value::List(ls)) => {
                    labels.extend(ls.into_iter().filter_map(|l| l.as_str().map(String::from)))
                }
                Some(_) => return Err(bad(Some(c + 1), "labels must be strings".into())),
                None => {}
            }
        }
        let props = props(input, &batch, row, n, &[Some(id), label_col])
            .map_err(IngestError::into_row_error)?;
        Ok(BulkNode {
            key,
            labels,
            props,
            origin: format!("{}: row {n}", input.path.display()),
        })
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
    rows(input, batches).map(move |r| {
        let (n, batch, row) = r.map_err(IngestError::into_row_error)?;
        let bad = |column, m: String| row_error(input, n, column, m);
        let src = find(&batch, &["src", "start", "from"])
            .ok_or_else(|| bad(None, "the file has no 'src' (or 'start') column".into()))?;
        let dst = find(&batch, &["dst", "end", "to"])
            .ok_or_else(|| bad(None, "the file has no 'dst' (or 'end') column".into()))?;
        let type_col = find(&batch, &["type"]);
        let id_col = find(&batch, &["id", "eid"]);
        let endpoint = |c: usize| {
            text(&batch, c, row)
                .map_err(|m| bad(Some(c + 1), m))?
                .ok_or_else(|| bad(Some(c + 1), "an endpoint is null".into()))
        };
        let (s, d) = (endpoint(src)?, endpoint(dst)?);
        let rel_type = match type_col {
            Some(c) => text(&batch, c, row).map_err(|m| bad(Some(c + 1), m))?,
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
            Some(c) => text(&batch, c, row).map_err(|m| bad(Some(c + 1), m))?,
            None => None,
        };
        let props = props(
            input,
            &batch,
            row,
            n,
            &[Some(src), Some(dst), type_col, id_col],
        )
        .map_err(IngestError::into_row_error)?;
        Ok(BulkEdge {
            key,
            src: s,
            dst: d,
            rel_type,
            props,
            origin: format!("{}: row {n}", input.path.display()),
        })
    })
}

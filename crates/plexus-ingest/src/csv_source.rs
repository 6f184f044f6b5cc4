//! CSV files with typed headers.

use crate::error::IngestError;
use crate::header::{column, Column, ColumnKind};
use crate::{CsvOptions, Input};
use plexus_common::Value;
use plexus_storage::{BulkEdge, BulkNode, Origin, Props, StorageError};

struct Parsed {
    /// The record's fields as owned strings, its line, and the header.
    line: u64,
    fields: Vec<String>,
}

/// Opens `input` and reads its header: its first line, or the first line
/// of its header file (then every line of `input` is data, and a bad
/// header is reported at the header file's line 1).
fn open(
    input: &Input,
    opts: &CsvOptions,
) -> Result<(csv::StringRecordsIntoIter<std::fs::File>, Vec<Column>), IngestError> {
    let reader = |path: &std::path::Path, headers: bool| {
        let file = std::fs::File::open(path).map_err(|error| IngestError::Io {
            file: path.to_path_buf(),
            error,
        })?;
        Ok::<_, IngestError>(
            csv::ReaderBuilder::new()
                .delimiter(opts.delimiter)
                .quote(opts.quote)
                .has_headers(headers)
                .flexible(true)
                .from_reader(file),
        )
    };
    let mut data = reader(&input.path, input.header.is_none())?;
    let header_file = input.header.as_deref().unwrap_or(&input.path);
    let at = |column| crate::Location {
        file: header_file.to_path_buf(),
        line: 1,
        column,
    };
    let header = match &input.header {
        None => data.headers().cloned(),
        Some(path) => reader(path, true)?.headers().cloned(),
    }
    .map_err(|e| IngestError::bad(at(None), format!("cannot read the header: {e}")))?;
    if header.is_empty() || (header.len() == 1 && header[0].trim().is_empty()) {
        return Err(IngestError::bad(
            at(None),
            "the file is empty: it needs a header line",
        ));
    }
    let mut cols = Vec::with_capacity(header.len());
    for (i, f) in header.iter().enumerate() {
        cols.push(column(f).map_err(|m| IngestError::bad(at(Some(i + 1)), m))?);
    }
    Ok((data.into_records(), cols))
}

fn records(
    input: &Input,
    it: csv::StringRecordsIntoIter<std::fs::File>,
    width: usize,
) -> impl Iterator<Item = Result<Parsed, IngestError>> + '_ {
    it.map(move |r| {
        let rec = r.map_err(|e| {
            let line = e.position().map_or(0, |p| p.line());
            IngestError::bad(input.at(line, None), format!("malformed CSV: {e}"))
        })?;
        let line = rec.position().map_or(0, |p| p.line());
        if rec.len() != width {
            return Err(IngestError::bad(
                input.at(line, None),
                format!(
                    "the row has {} fields but the header has {width}",
                    rec.len()
                ),
            ));
        }
        Ok(Parsed {
            line,
            fields: rec.iter().map(String::from).collect(),
        })
    })
}

fn value(
    input: &Input,
    opts: &CsvOptions,
    col: &Column,
    i: usize,
    line: u64,
    raw: &str,
) -> Result<Option<Value>, IngestError> {
    let ColumnKind::Property { ty, list } = col.kind else {
        return Ok(None);
    };
    if raw.is_empty() {
        return Ok(None);
    }
    let at = || input.at(line, Some(i + 1));
    let one = |s: &str| {
        ty.value(s)
            .map_err(|m| IngestError::bad(at(), format!("column '{}': {m}", col.name)))
    };
    Ok(Some(if list {
        Value::List(
            raw.split(opts.array_delimiter)
                .map(one)
                .collect::<Result<_, _>>()?,
        )
    } else {
        one(raw)?
    }))
}

fn require(
    input: &Input,
    cols: &[Column],
    kind: &ColumnKind,
    what: &str,
) -> Result<usize, IngestError> {
    cols.iter().position(|c| &c.kind == kind).ok_or_else(|| {
        IngestError::bad(
            input.at(1, None),
            format!("the header has no {what} column"),
        )
    })
}

/// The node rows of a CSV file.
pub fn nodes<'a>(
    input: &'a Input,
    opts: &'a CsvOptions,
) -> Result<impl Iterator<Item = Result<BulkNode, StorageError>> + 'a, IngestError> {
    let (it, cols) = open(input, opts)?;
    let id = require(input, &cols, &ColumnKind::Id, ":ID")?;
    let width = cols.len();
    let source = input.source();
    Ok(records(input, it, width)
        .map(move |r| {
            let p = r?;
            let mut labels: Vec<String> = input.name.iter().cloned().collect();
            let mut props = Props::new();
            for (i, (c, raw)) in cols.iter().zip(&p.fields).enumerate() {
                match &c.kind {
                    ColumnKind::Label => labels.extend(
                        raw.split(opts.array_delimiter)
                            .map(str::trim)
                            .filter(|l| !l.is_empty())
                            .map(String::from),
                    ),
                    ColumnKind::Id if !c.name.is_empty() => {
                        props.insert(c.name.clone(), Value::String(raw.clone()));
                    }
                    _ => {
                        if let Some(v) = value(input, opts, c, i, p.line, raw)? {
                            props.insert(c.name.clone(), v);
                        }
                    }
                }
            }
            Ok(BulkNode {
                key: p.fields[id].clone(),
                labels,
                props,
                origin: Origin::line(&source, p.line),
            })
        })
        .map(|r: Result<BulkNode, IngestError>| r.map_err(IngestError::into_row_error)))
}

/// The edge rows of a CSV file.
pub fn edges<'a>(
    input: &'a Input,
    opts: &'a CsvOptions,
) -> Result<impl Iterator<Item = Result<BulkEdge, StorageError>> + 'a, IngestError> {
    let (it, cols) = open(input, opts)?;
    let start = require(input, &cols, &ColumnKind::StartId, ":START_ID")?;
    let end = require(input, &cols, &ColumnKind::EndId, ":END_ID")?;
    let type_col = cols.iter().position(|c| c.kind == ColumnKind::Type);
    if type_col.is_none() && input.name.is_none() {
        return Err(IngestError::bad(
            input.at(1, None),
            "edges need a type: add a :TYPE column or name it on the command line as TYPE=file",
        ));
    }
    let id = cols.iter().position(|c| c.kind == ColumnKind::Id);
    let width = cols.len();
    let source = input.source();
    Ok(records(input, it, width)
        .map(move |r| {
            let p = r?;
            let rel_type = match type_col
                .map(|t| p.fields[t].trim().to_string())
                .filter(|t| !t.is_empty())
            {
                Some(t) => t,
                None => input.name.clone().ok_or_else(|| {
                    IngestError::bad(
                        input.at(p.line, type_col.map(|t| t + 1)),
                        "the row has no type",
                    )
                })?,
            };
            let mut props = Props::new();
            for (i, (c, raw)) in cols.iter().zip(&p.fields).enumerate() {
                if let Some(v) = value(input, opts, c, i, p.line, raw)? {
                    props.insert(c.name.clone(), v);
                }
            }
            Ok(BulkEdge {
                key: id.map(|i| p.fields[i].clone()).filter(|k| !k.is_empty()),
                src: p.fields[start].clone(),
                dst: p.fields[end].clone(),
                rel_type,
                props,
                origin: Origin::line(&source, p.line),
            })
        })
        .map(|r: Result<BulkEdge, IngestError>| r.map_err(IngestError::into_row_error)))
}

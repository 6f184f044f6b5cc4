//! CSV files with typed headers.

use crate::error::IngestError;
use crate::header::{column, Column, ColumnKind};
use crate::{CsvOptions, Input};
use plexus_common::Value;
use plexus_storage::{BulkEdge, BulkNode, Origin, Props, StorageError};

struct Parsed {
    /// The record's fields as owned strings, its line, and the byte it
    /// starts at.
    line: u64,
    byte: u64,
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
    crate::header::check(&cols).map_err(|(field, m)| IngestError::bad(at(Some(field)), m))?;
    Ok((data.into_records(), cols))
}

fn records<'a>(
    input: &'a Input,
    opts: &'a CsvOptions,
    it: csv::StringRecordsIntoIter<std::fs::File>,
    width: usize,
) -> impl Iterator<Item = Result<Parsed, IngestError>> + 'a {
    let mut it = it
        .map(move |r| {
            let rec = r.map_err(|e| {
                let line = e.position().map_or(0, |p| p.line());
                IngestError::bad(input.at(line, None), format!("malformed CSV: {e}"))
            })?;
            let (line, byte) = rec.position().map_or((0, 0), |p| (p.line(), p.byte()));
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
                byte,
                fields: rec.iter().map(String::from).collect(),
            })
        })
        .peekable();
    // The last row is checked before it is handed on: the reader takes a
    // quoted field that never closes to the end of the file as its value,
    // so a file cut short inside a quoted field, or a quote left open,
    // would swallow every row after it into one value without a word.
    std::iter::from_fn(move || {
        let next = it.next()?;
        Some(match (next, it.peek()) {
            (Ok(p), None) => match ends_in_quotes(&input.path, p.byte, opts) {
                Ok(false) => Ok(p),
                Ok(true) => Err(IngestError::bad(
                    input.at(p.line, None),
                    "a quoted field opened on this row is never closed: the file ends inside it \
                     (cut short, or a closing quote missing)",
                )),
                Err(error) => Err(IngestError::Io {
                    file: input.path.clone(),
                    error,
                }),
            },
            (next, _) => next,
        })
    })
}

/// Whether the CSV bytes of the file at `path` from byte `from` (where a
/// row starts) end inside a quoted field: one opened by a quote where a
/// field starts and not closed by a quote that is not doubled.
fn ends_in_quotes(path: &std::path::Path, from: u64, opts: &CsvOptions) -> std::io::Result<bool> {
    use std::io::{BufRead, Seek};
    #[derive(Clone, Copy, PartialEq)]
    enum At {
        FieldStart,
        Unquoted,
        Quoted,
        /// A quote inside a quoted field: its end, or the first of two.
        QuoteInQuoted,
    }
    let mut file = std::io::BufReader::new(std::fs::File::open(path)?);
    file.seek(std::io::SeekFrom::Start(from))?;
    let mut at = At::FieldStart;
    loop {
        let chunk = file.fill_buf()?;
        if chunk.is_empty() {
            return Ok(at == At::Quoted);
        }
        for &b in chunk {
            let ends_field = b == opts.delimiter || b == b'\n' || b == b'\r';
            at = match at {
                At::FieldStart if b == opts.quote => At::Quoted,
                At::FieldStart | At::Unquoted | At::QuoteInQuoted if ends_field => At::FieldStart,
                At::FieldStart | At::Unquoted => At::Unquoted,
                At::Quoted if b == opts.quote => At::QuoteInQuoted,
                At::Quoted => At::Quoted,
                At::QuoteInQuoted if b == opts.quote => At::Quoted,
                At::QuoteInQuoted => At::Unquoted,
            };
        }
        let n = chunk.len();
        file.consume(n);
    }
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
    Ok(records(input, opts, it, width)
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
    Ok(records(input, opts, it, width)
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

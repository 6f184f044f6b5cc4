//! `plexus query` and `plexus shell`: Cypher from the command line.

use crate::commands::CliResult;
use crate::values::{cell, parse_assignment, to_json};
use plexus::{Database, Params, Table};
use std::io::{BufRead, Write};

/// How results are printed.
#[derive(Clone, Copy, PartialEq, Eq, Debug, clap::ValueEnum)]
pub enum Format {
    Table,
    /// One JSON object per row.
    Jsonl,
    Csv,
}

pub fn parse_params(list: &[String]) -> Result<Params, String> {
    list.iter().map(|s| parse_assignment(s)).collect()
}

pub fn query(db: &Database, graph: &str, text: &str, params: &Params, format: Format) -> CliResult {
    let t = db.query(graph, text, params)?;
    print(&t, format);
    Ok(())
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// Prints a result: a table (with a row count), JSON lines or CSV.
pub fn print(t: &Table, format: Format) {
    match format {
        Format::Table => {
            if t.columns.is_empty() {
                say!("(no columns)");
                return;
            }
            let mut out = comfy_table::Table::new();
            out.load_preset(comfy_table::presets::UTF8_FULL_CONDENSED)
                .set_header(t.columns.clone());
            for r in &t.rows {
                out.add_row(r.iter().map(cell).collect::<Vec<_>>());
            }
            say!("{out}");
            say!(
                "{} row{}",
                t.rows.len(),
                if t.rows.len() == 1 { "" } else { "s" }
            );
        }
        Format::Jsonl => {
            for r in &t.rows {
                let obj: serde_json::Map<String, serde_json::Value> = t
                    .columns
                    .iter()
                    .cloned()
                    .zip(r.iter().map(to_json))
                    .collect();
                say!("{}", serde_json::Value::Object(obj));
            }
        }
        Format::Csv => {
            say!(
                "{}",
                t.columns
                    .iter()
                    .map(|c| csv_field(c))
                    .collect::<Vec<_>>()
                    .join(",")
            );
            for r in &t.rows {
                let cells: Vec<String> = r
                    .iter()
                    .map(|v| match v {
                        plexus::Value::Null => String::new(),
                        other => csv_field(&cell(other)),
                    })
                    .collect();
                say!("{}", cells.join(","));
            }
        }
    }
}

const HELP: &str = "Type Cypher ending with ';' (it may span lines). Commands:
  :help               this text
  :param name=value   set a parameter ($name); the value is read as JSON when it is JSON
  :params             list the parameters
  :clear              forget the parameters
  :history            the queries run in this session
  :format table|jsonl|csv
  :quit               leave (also Ctrl-D)";

/// The interactive shell: reads statements ending in `;` from stdin, runs
/// each, prints its result or its error, and goes on.
pub fn shell(db: &Database, graph: &str, mut format: Format) -> CliResult {
    let stdin = std::io::stdin();
    let interactive = std::io::IsTerminal::is_terminal(&stdin);
    let mut params = Params::new();
    let mut history: Vec<String> = Vec::new();
    let mut buf = String::new();
    if interactive {
        eprintln!("Plexus shell on graph '{graph}'. :help for help, :quit to leave.");
    }
    let prompt = |buf: &str| {
        if interactive {
            eprint!(
                "{}",
                if buf.is_empty() {
                    "plexus> "
                } else {
                    "   ...> "
                }
            );
            let _ = std::io::stderr().flush();
        }
    };
    prompt(&buf);
    for line in stdin.lock().lines() {
        let line = line?;
        let trimmed = line.trim();
        if buf.is_empty() && trimmed.starts_with(':') {
            let (cmd, arg) = trimmed.split_once(' ').unwrap_or((trimmed, ""));
            match cmd {
                ":quit" | ":exit" | ":q" => return Ok(()),
                ":help" => say!("{HELP}"),
                ":params" => {
                    for (k, v) in &params {
                        say!("${k} = {v}");
                    }
                }
                ":param" => match parse_assignment(arg.trim()) {
                    Ok((k, v)) => {
                        params.insert(k, v);
                    }
                    Err(e) => eprintln!("error: {e}"),
                },
                ":clear" => params.clear(),
                ":history" => {
                    for (i, q) in history.iter().enumerate() {
                        say!("{:>4}  {q}", i + 1);
                    }
                }
                ":format" => match <Format as clap::ValueEnum>::from_str(arg.trim(), true) {
                    Ok(f) => format = f,
                    Err(_) => eprintln!("error: formats are table, jsonl, csv"),
                },
                other => eprintln!("error: unknown command {other} (:help lists them)"),
            }
            prompt(&buf);
            continue;
        }
        buf.push_str(&line);
        buf.push('\n');
        while let Some(end) = statement_end(&buf) {
            let stmt = buf[..end].trim().to_string();
            buf = buf[end + 1..].trim_start().to_string();
            if stmt.is_empty() {
                continue;
            }
            history.push(stmt.replace('\n', " "));
            match db.query(graph, &stmt, &params) {
                Ok(t) => print(&t, format),
                Err(e) => eprintln!("error: {e}"),
            }
        }
        prompt(&buf);
    }
    if !buf.trim().is_empty() {
        match db.query(graph, buf.trim(), &params) {
            Ok(t) => print(&t, format),
            Err(e) => eprintln!("error: {e}"),
        }
    }
    Ok(())
}

/// The byte position of the first `;` outside quotes and comments.
fn statement_end(s: &str) -> Option<usize> {
    let b = s.as_bytes();
    let mut quote: Option<u8> = None;
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        match quote {
            Some(_) if c == b'\\' => i += 1,
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None if matches!(c, b'\'' | b'"' | b'`') => quote = Some(c),
            None if c == b'/' && b.get(i + 1) == Some(&b'/') => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            None if c == b';' => return Some(i),
            None => {}
        }
        i += 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::statement_end;

    #[test]
    fn statements_end_at_semicolons_outside_quotes() {
        assert_eq!(statement_end("RETURN 1;"), Some(8));
        assert_eq!(statement_end("RETURN ';' AS x;"), Some(15));
        assert_eq!(statement_end("RETURN 1 // ; not here\n;"), Some(23));
        assert_eq!(statement_end("RETURN 1"), None);
    }
}

//! Tables for people, JSON for programs.

use comfy_table::{presets::UTF8_FULL_CONDENSED, Table};

pub struct Out {
    pub json: bool,
}

impl Out {
    /// Prints rows as a table, or as a JSON array of objects keyed by header.
    pub fn table(&self, headers: &[&str], rows: Vec<Vec<serde_json::Value>>) {
        if self.json {
            let objs: Vec<serde_json::Value> = rows
                .into_iter()
                .map(|r| {
                    serde_json::Value::Object(
                        headers.iter().map(|h| h.to_string()).zip(r).collect(),
                    )
                })
                .collect();
            say!("{}", serde_json::Value::Array(objs));
            return;
        }
        let mut t = Table::new();
        t.load_preset(UTF8_FULL_CONDENSED)
            .set_header(headers.to_vec());
        for r in rows {
            t.add_row(r.iter().map(text).collect::<Vec<_>>());
        }
        say!("{t}");
    }

    /// Reports a change: `{"node": "ann", "result": "created"}` or `created node 'ann'`.
    pub fn changed(&self, what: &str, name: &str, verb: &str) {
        self.done(
            serde_json::json!({ what: name, "result": verb }),
            &format!("{verb} {what} '{name}'"),
        );
    }

    /// Prints a JSON value, or for people a message.
    pub fn done(&self, json: serde_json::Value, message: &str) {
        if self.json {
            say!("{json}");
        } else {
            say!("{message}");
        }
    }
}

fn text(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// Writes one line to stdout. When the reader has gone away (a closed
/// pipe), there is nobody left to tell: exit quietly instead of panicking.
pub fn emit(line: &str) {
    use std::io::Write;
    let mut o = std::io::stdout().lock();
    if writeln!(o, "{line}").is_err() {
        std::process::exit(0);
    }
}

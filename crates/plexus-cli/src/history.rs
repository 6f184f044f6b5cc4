//! `plexus history`: keep a graph's history, show it, prune it; rebuild
//! the indexes of its valid-time versions. Reading it is Cypher's
//! `MATCH … FOR SYSTEM_TIME AS OF t` (`plexus query`).

use crate::commands::CliResult;
use crate::output::Out;
use crate::HistoryCmd;
use plexus::{Database, DateTime, Params, Value};
use serde_json::json;

pub fn history(db: &Database, g: &str, cmd: &HistoryCmd, out: &Out) -> CliResult {
    match cmd {
        HistoryCmd::On => {
            let start = db.keep_history(g)?;
            out.done(
                json!({"graph": g, "history": "on", "since": start}),
                &format!("graph '{g}' keeps its history from {} on", iso(start)),
            );
        }
        HistoryCmd::Off => {
            db.drop_history(g)?;
            out.changed("history of graph", g, "dropped");
        }
        HistoryCmd::Status => {
            let now = db.system_time()?;
            match db.history_start(g)? {
                Some(start) => out.done(
                    json!({"graph": g, "history": "on", "since": start, "latest": now}),
                    &format!(
                        "graph '{g}' keeps its history from {}; latest commit {}",
                        iso(start),
                        iso(now)
                    ),
                ),
                None => out.done(
                    json!({"graph": g, "history": "off"}),
                    &format!("graph '{g}' keeps no history (`plexus history on` keeps it)"),
                ),
            }
        }
        HistoryCmd::Prune { before } => {
            let at = instant(db, g, before)?;
            let removed = db.prune_history(g, at)?;
            out.done(
                json!({"graph": g, "before": at, "removed": removed}),
                &format!(
                    "removed {removed} version(s) of graph '{g}' older than {}",
                    iso(at)
                ),
            );
        }
        HistoryCmd::Reindex => {
            let n = plexus::temporal::rebuild_indexes(db.storage(), g)?;
            out.done(
                json!({"graph": g, "versions": n}),
                &format!("indexed {n} valid-time version(s) of graph '{g}' again"),
            );
        }
    }
    Ok(())
}

/// An instant given on the command line: microseconds since 1970, or an
/// ISO 8601 datetime read as Cypher's `datetime()` reads it.
fn instant(db: &Database, g: &str, text: &str) -> Result<u64, Box<dyn std::error::Error>> {
    if let Ok(micros) = text.parse::<u64>() {
        return Ok(micros);
    }
    let params = Params::from([("t".to_string(), Value::from(text))]);
    let t = db
        .query(g, "RETURN datetime($t) AS t", &params)
        .map_err(|e| format!("--before {text}: {e}"))?;
    match t.rows.first().and_then(|r| r.first()) {
        Some(Value::DateTime(d)) => d
            .epoch_micros()
            .ok_or_else(|| format!("--before {text}: before 1970").into()),
        _ => Err(format!("--before {text}: not a datetime").into()),
    }
}

/// A system time as an ISO 8601 instant in UTC.
fn iso(micros: u64) -> String {
    DateTime::from_epoch_micros(micros).to_string()
}

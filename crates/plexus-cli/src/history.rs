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
                Some(start) => {
                    let ttl = db.history_retention(g)?;
                    let kept = match ttl {
                        Some(d) => format!("; keeps {}", seconds(d)),
                        None => String::new(),
                    };
                    out.done(
                        json!({"graph": g, "history": "on", "since": start, "latest": now,
                            "retention_s": ttl.map(|d| d.as_secs_f64())}),
                        &format!(
                            "graph '{g}' keeps its history from {}; latest commit {}{kept}",
                            iso(start),
                            iso(now)
                        ),
                    )
                }
                None => out.done(
                    json!({"graph": g, "history": "off"}),
                    &format!("graph '{g}' keeps no history (`plexus history on` keeps it)"),
                ),
            }
        }
        HistoryCmd::Prune { before: None } => {
            let pruned = db.enforce_history_retention()?;
            let text = match &pruned[..] {
                [] => "no graph has a history retention policy (`plexus history retain`)".into(),
                _ => pruned
                    .iter()
                    .map(|(g, n)| format!("removed {n} version(s) of graph '{g}'"))
                    .collect::<Vec<_>>()
                    .join("\n"),
            };
            let lines: Vec<_> = pruned
                .iter()
                .map(|(g, n)| json!({"graph": g, "removed": n}))
                .collect();
            out.done(json!({"pruned": lines}), &text);
        }
        HistoryCmd::Retain { ttl } => {
            let ttl = retention(db, g, ttl)?;
            db.set_history_retention(g, ttl)?;
            let text = match ttl {
                Some(d) => format!(
                    "graph '{g}' keeps {} of history; later commits prune the rest",
                    seconds(d)
                ),
                None => format!("graph '{g}' keeps its history for ever"),
            };
            out.done(
                json!({"graph": g, "retention_s": ttl.map(|d| d.as_secs_f64())}),
                &text,
            );
        }
        HistoryCmd::Prune {
            before: Some(before),
        } => {
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

/// A retention given on the command line: a number and a unit (`30d`,
/// `12h`, `15m`, `90s`), an ISO 8601 duration read as Cypher's
/// `duration()` reads it (no months or years: they have no fixed length),
/// or `off`.
fn retention(
    db: &Database,
    g: &str,
    text: &str,
) -> Result<Option<std::time::Duration>, Box<dyn std::error::Error>> {
    if text.eq_ignore_ascii_case("off") {
        return Ok(None);
    }
    let unit = |u: &str| match u {
        "s" => Some(1),
        "m" => Some(60),
        "h" => Some(3600),
        "d" => Some(86_400),
        _ => None,
    };
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (n, u) = text.split_at(split);
    if let (Ok(n), Some(per)) = (n.parse::<u64>(), unit(u)) {
        return match n.checked_mul(per) {
            Some(0) => Err(format!("retention {text}: must be longer than zero").into()),
            Some(secs) => Ok(Some(std::time::Duration::from_secs(secs))),
            None => Err(format!("retention {text}: too long").into()),
        };
    }
    let params = Params::from([("d".to_string(), Value::from(text))]);
    let d = db
        .query(g, "RETURN duration($d) AS d", &params)
        .map_err(|e| format!("retention {text}: not `30d`, `12h`, `off` or a duration: {e}"))?;
    match d.rows.first().and_then(|r| r.first()) {
        Some(Value::Duration(d)) if d.months != 0 => {
            Err(format!("retention {text}: months have no fixed length; give days").into())
        }
        Some(Value::Duration(d)) => {
            let secs = d
                .days
                .checked_mul(86_400)
                .and_then(|s| s.checked_add(d.secs));
            match secs.and_then(|s| u64::try_from(s).ok()) {
                Some(s) if s > 0 || d.nanos > 0 => Ok(Some(
                    std::time::Duration::from_secs(s)
                        + std::time::Duration::from_nanos(d.nanos.max(0) as u64),
                )),
                _ => Err(format!("retention {text}: must be longer than zero").into()),
            }
        }
        _ => Err(format!("retention {text}: not a duration").into()),
    }
}

/// A retention as people say it: `30d`, `12h`, `90s`.
fn seconds(d: std::time::Duration) -> String {
    let s = d.as_secs();
    let whole = d.subsec_nanos() == 0 && s > 0;
    for (per, unit) in [(86_400, "d"), (3600, "h"), (60, "m")] {
        if whole && s.is_multiple_of(per) {
            return format!("{}{unit}", s / per);
        }
    }
    format!("{}s", d.as_secs_f64())
}

/// A system time as an ISO 8601 instant in UTC.
fn iso(micros: u64) -> String {
    DateTime::from_epoch_micros(micros).to_string()
}

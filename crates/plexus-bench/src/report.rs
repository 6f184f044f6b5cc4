//! Markdown tables and SVG charts of the results.

use crate::Row;
use std::collections::BTreeMap;
use std::fmt::Write;

fn fmt_s(s: f64) -> String {
    if s >= 1.0 {
        format!("{s:.2} s")
    } else if s >= 1e-3 {
        format!("{:.2} ms", s * 1e3)
    } else {
        format!("{:.1} µs", s * 1e6)
    }
}

/// (graph, workload) → engine → row, in a stable order.
fn grouped(rows: &[Row]) -> BTreeMap<(String, String), BTreeMap<String, &Row>> {
    let mut m: BTreeMap<(String, String), BTreeMap<String, &Row>> = BTreeMap::new();
    for r in rows {
        m.entry((r.graph.clone(), r.workload.clone()))
            .or_default()
            .insert(r.engine.clone(), r);
    }
    m
}

/// The best peer's median divided by Plexus's: how many times faster Plexus is.
pub fn speedup(by_engine: &BTreeMap<String, &Row>) -> Option<(f64, String)> {
    speedup_of(by_engine, "plexus")
}

/// The best peer's median divided by that of `ours` (`plexus`, or
/// `plexus-cypher` for the same workloads through Cypher). Plexus's own
/// engines are not peers.
pub fn speedup_of(by_engine: &BTreeMap<String, &Row>, ours: &str) -> Option<(f64, String)> {
    let p = by_engine.get(ours)?.median()?;
    let (name, best) = by_engine
        .iter()
        .filter(|(e, r)| !e.starts_with("plexus") && r.count.is_some())
        .filter_map(|(e, r)| Some((e.clone(), r.median()?)))
        .min_by(|a, b| a.1.total_cmp(&b.1))?;
    Some((best / p.max(1e-12), name))
}

/// A markdown table: medians per engine, and each Plexus engine's speed-up
/// over the best peer (`plexus`, and `plexus-cypher` and `plexus-py` when run).
pub fn markdown(rows: &[Row], engines: &[String]) -> String {
    let mut s = String::new();
    let ours: Vec<&str> = [
        "plexus",
        "plexus-cypher",
        "plexus-py",
        "plexus-postgres",
        "plexus-cypher-postgres",
    ]
    .into_iter()
    .filter(|o| *o == "plexus" || engines.iter().any(|e| e == o))
    .collect();
    let heads: Vec<String> = ours.iter().map(|o| format!("best peer ÷ {o}")).collect();
    let _ = writeln!(
        s,
        "| graph | workload | count | {} | {} |",
        engines.join(" | "),
        heads.join(" | ")
    );
    let _ = writeln!(
        s,
        "|---|---|---|{}{}",
        "---|".repeat(engines.len()),
        "---|".repeat(ours.len())
    );
    for ((graph, w), by) in grouped(rows) {
        let count = by
            .get("plexus")
            .or_else(|| by.values().next())
            .and_then(|r| r.count)
            .map_or_else(|| "—".into(), |c| c.to_string());
        let cells: Vec<String> = engines
            .iter()
            .map(|e| match by.get(e) {
                Some(r) if r.count.is_some() => r.median().map_or_else(|| "—".into(), fmt_s),
                Some(_) => "missing".into(),
                None => "—".into(),
            })
            .collect();
        let ratios: Vec<String> = ours
            .iter()
            .map(|o| {
                speedup_of(&by, o)
                    .map_or_else(|| "—".into(), |(x, peer)| format!("{x:.1}× ({peer})"))
            })
            .collect();
        let _ = writeln!(
            s,
            "| {graph} | {w} | {count} | {} | {} |",
            cells.join(" | "),
            ratios.join(" | ")
        );
    }
    s
}

/// Plexus on a server beside Plexus on LMDB: each workload's medians, the
/// ratio, and the round trips one run of it took (`compare --store`).
/// Empty when no engine ran on a server.
pub fn remote_table(rows: &[Row]) -> String {
    let mut s = String::new();
    for (local, remote) in [
        ("plexus", "plexus-postgres"),
        ("plexus-cypher", "plexus-cypher-postgres"),
    ] {
        let pairs: Vec<((String, String), &Row, Option<&Row>)> = grouped(rows)
            .into_iter()
            .filter_map(|(k, by)| Some((k, *by.get(remote)?, by.get(local).copied())))
            .collect();
        if pairs.is_empty() {
            continue;
        }
        let _ = writeln!(
            s,
            "\n| graph | workload | {local} | {remote} | {remote} ÷ {local} | round trips a run |\n|---|---|---|---|---|---|"
        );
        for ((graph, w), r, l) in pairs {
            let med = |r: Option<&Row>| r.and_then(Row::median);
            let ratio = med(Some(r))
                .zip(med(l))
                .map_or_else(|| "—".into(), |(a, b)| format!("{:.1}×", a / b.max(1e-12)));
            let _ = writeln!(
                s,
                "| {graph} | {w} | {} | {} | {ratio} | {} |",
                med(l).map_or_else(|| "—".into(), fmt_s),
                med(Some(r)).map_or_else(|| "—".into(), fmt_s),
                r.round_trips.map_or_else(|| "—".into(), |t| t.to_string()),
            );
        }
    }
    s
}

/// A horizontal bar chart of Plexus's speed-up over the best peer, on a
/// log scale (bars left of the axis: Plexus slower).
pub fn svg(rows: &[Row], title: &str) -> String {
    let bars: Vec<(String, f64, String)> = grouped(rows)
        .into_iter()
        .filter_map(|((g, w), by)| speedup(&by).map(|(x, p)| (format!("{g} / {w}"), x, p)))
        .collect();
    let (h, label_w, scale) = (22.0, 300.0, 80.0);
    let axis = label_w + 4.0 * scale;
    let height = 50.0 + h * bars.len() as f64;
    let mut s = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{height}\" font-family=\"sans-serif\" font-size=\"12\">\n<text x=\"10\" y=\"20\" font-size=\"14\">{title}</text>\n<line x1=\"{axis}\" y1=\"30\" x2=\"{axis}\" y2=\"{}\" stroke=\"#333\"/>\n",
        axis + 5.0 * scale + 120.0,
        height - 10.0
    );
    for (i, (name, x, peer)) in bars.iter().enumerate() {
        let y = 35.0 + h * i as f64;
        let len = x.log10().clamp(-4.0, 5.0) * scale;
        let (x0, color) = if len >= 0.0 {
            (axis, "#2a7")
        } else {
            (axis + len, "#c44")
        };
        let _ = writeln!(
            s,
            "<text x=\"10\" y=\"{}\">{name}</text><rect x=\"{x0}\" y=\"{y}\" width=\"{}\" height=\"{}\" fill=\"{color}\"/><text x=\"{}\" y=\"{}\">{x:.1}× vs {peer}</text>",
            y + 14.0,
            len.abs().max(1.0),
            h - 6.0,
            axis + len.max(0.0) + 6.0,
            y + 14.0
        );
    }
    s.push_str("</svg>\n");
    s
}

//! An EXPLAIN's or a PROFILE's plan as the `plan` or `profile` entry of a
//! result's closing SUCCESS, the shape the drivers read into
//! `summary.plan` / `summary.profile`: a tree of operators, each a map of
//! `operatorType`, `identifiers`, `args` and `children`, and under PROFILE
//! also `rows`, `dbHits`, `pageCacheHits`, `pageCacheMisses` and `time`
//! (nanoseconds).
//!
//! Plexus's plan is a list of steps in the order they run (`plexus_query`'s
//! plan table); each step's one child is the step before it, so the last
//! step is the root, as Neo4j's `ProduceResults` is. Plexus counts no
//! database hits or page cache events: those are zero.

use crate::packstream::Pack;
use plexus::{QueryPlan, Value};

/// Operators nested in one another at most: each level is a map and a
/// list to a driver's decoder (the Python driver's is recursive). Steps
/// past it are named on the deepest operator instead (`EarlierSteps`).
const MAX_LEVELS: usize = 40;

/// The metadata key (`plan` or `profile`) and the tree of `plan`.
pub fn entry(plan: &QueryPlan) -> (&'static str, Pack) {
    let key = if plan.profiled { "profile" } else { "plan" };
    (key, tree(plan))
}

fn tree(plan: &QueryPlan) -> Pack {
    let t = &plan.steps;
    let col = |name: &str| t.columns.iter().position(|c| c == name);
    let cols = Columns {
        operator: col("operator"),
        details: col("details"),
        estimate: col("estimated_rows"),
        rows: col("rows"),
        time: col("time_ms"),
        own_time: col("self_ms"),
    };
    let kept = t.rows.len().saturating_sub(MAX_LEVELS);
    let (folded, shown) = t.rows.split_at(kept);
    let mut child: Option<Pack> = None;
    for (i, row) in shown.iter().enumerate() {
        let mut args = vec![
            (
                "Details".to_string(),
                Pack::string(cols.text(row, cols.details)),
            ),
            (
                "EstimatedRows".to_string(),
                Pack::Float(cols.number(row, cols.estimate).unwrap_or(0.0)),
            ),
        ];
        if i == 0 && !folded.is_empty() {
            let names: Vec<Pack> = folded
                .iter()
                .map(|r| Pack::string(cols.text(r, cols.operator)))
                .collect();
            args.push(("EarlierSteps".to_string(), Pack::List(names)));
        }
        let mut op = vec![
            (
                "operatorType".to_string(),
                Pack::string(cols.text(row, cols.operator)),
            ),
            ("identifiers".to_string(), Pack::List(Vec::new())),
            ("args".to_string(), Pack::Map(args)),
            (
                "children".to_string(),
                Pack::List(child.take().into_iter().collect()),
            ),
        ];
        if plan.profiled {
            op.extend(profiled(&cols, row));
        }
        child = Some(Pack::Map(op));
    }
    child.unwrap_or_else(|| {
        Pack::map([
            ("operatorType", Pack::string("EmptyResult")),
            ("identifiers", Pack::List(Vec::new())),
            ("args", Pack::Map(Vec::new())),
            ("children", Pack::List(Vec::new())),
        ])
    })
}

/// What a PROFILE adds to an operator: its rows and its own time.
fn profiled(cols: &Columns, row: &[Value]) -> Vec<(String, Pack)> {
    let rows = cols.number(row, cols.rows).unwrap_or(0.0);
    let ms = cols
        .number(row, cols.own_time)
        .or_else(|| cols.number(row, cols.time))
        .unwrap_or(0.0);
    vec![
        ("rows".to_string(), Pack::Int(rows as i64)),
        ("dbHits".to_string(), Pack::Int(0)),
        ("pageCacheHits".to_string(), Pack::Int(0)),
        ("pageCacheMisses".to_string(), Pack::Int(0)),
        ("time".to_string(), Pack::Int((ms * 1e6).round() as i64)),
    ]
}

/// Where each field is in a step's row (absent columns read as none).
struct Columns {
    operator: Option<usize>,
    details: Option<usize>,
    estimate: Option<usize>,
    rows: Option<usize>,
    time: Option<usize>,
    own_time: Option<usize>,
}

impl Columns {
    fn text(&self, row: &[Value], at: Option<usize>) -> String {
        match at.and_then(|i| row.get(i)) {
            Some(Value::String(s)) => s.clone(),
            _ => String::new(),
        }
    }

    fn number(&self, row: &[Value], at: Option<usize>) -> Option<f64> {
        match at.and_then(|i| row.get(i))? {
            Value::Int(n) => Some(*n as f64),
            Value::Float(f) => Some(*f),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use plexus::Table;

    fn steps(n: usize, profiled: bool) -> QueryPlan {
        let mut columns: Vec<String> = ["step", "operator", "details", "estimated_rows"]
            .map(String::from)
            .to_vec();
        if profiled {
            columns.extend(["rows", "time_ms", "self_ms"].map(String::from));
        }
        let rows = (0..n)
            .map(|i| {
                let mut r = vec![
                    Value::Int(i as i64 + 1),
                    Value::from(format!("Op{i}")),
                    Value::from(format!("step {i}")),
                    Value::Int(10),
                ];
                if profiled {
                    r.extend([Value::Int(i as i64), Value::Float(0.5), Value::Null]);
                }
                r
            })
            .collect();
        QueryPlan {
            profiled,
            steps: Table { columns, rows },
        }
    }

    /// The operators from the root down, following the only child.
    fn chain(p: &Pack) -> Vec<String> {
        let mut out = Vec::new();
        let mut at = Some(p);
        while let Some(op) = at {
            if let Some(Pack::String(s)) = op.get("operatorType") {
                out.push(s.clone());
            }
            at = match op.get("children") {
                Some(Pack::List(c)) => c.first(),
                _ => None,
            };
        }
        out
    }

    #[test]
    fn the_last_step_is_the_root_and_each_step_the_child_of_the_next() {
        let (key, p) = entry(&steps(3, false));
        assert_eq!(key, "plan");
        assert_eq!(chain(&p), ["Op2", "Op1", "Op0"]);
        assert_eq!(
            p.get("args").and_then(|a| a.get("Details")),
            Some(&Pack::string("step 2"))
        );
        assert_eq!(p.get("rows"), None, "EXPLAIN has no actual rows");
    }

    #[test]
    fn a_profile_gives_rows_and_time_in_nanoseconds() {
        let (key, p) = entry(&steps(2, true));
        assert_eq!(key, "profile");
        assert_eq!(p.get("rows"), Some(&Pack::Int(1)));
        assert_eq!(p.get("time"), Some(&Pack::Int(500_000)));
        assert_eq!(p.get("dbHits"), Some(&Pack::Int(0)));
    }

    #[test]
    fn a_long_plan_is_nested_at_most_max_levels_deep() {
        let (_, p) = entry(&steps(MAX_LEVELS + 7, false));
        let ops = chain(&p);
        assert_eq!(ops.len(), MAX_LEVELS);
        assert_eq!(ops.last().map(String::as_str), Some("Op7"));
        let mut leaf = &p;
        while let Some(Pack::List(c)) = leaf.get("children") {
            match c.first() {
                Some(next) => leaf = next,
                None => break,
            }
        }
        let Some(Pack::List(folded)) = leaf.get("args").and_then(|a| a.get("EarlierSteps")) else {
            panic!("the deepest operator names the steps folded into it")
        };
        assert_eq!(folded.len(), 7);
        let encoded = crate::packstream::encode(&p);
        assert!(
            crate::packstream::decode(&encoded).is_ok(),
            "within the decoder's depth"
        );
    }

    #[test]
    fn an_empty_plan_is_one_operator() {
        let (_, p) = entry(&steps(0, false));
        assert_eq!(chain(&p), ["EmptyResult"]);
    }
}

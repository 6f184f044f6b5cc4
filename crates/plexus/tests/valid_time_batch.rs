//! `UNWIND … CALL plexus.temporal.assertNode / assertRelationship /
//! retract` over many rows writes every row's version as one batch
//! (`Exec::batch_call`). What it leaves must be what the calls one by one
//! leave: the same timelines, the same answers as of every instant, each
//! row yielding its own version. The row-by-row path is forced by an
//! argument the batch refuses (a list comprehension), so both run the
//! same rows through the same procedures.

use plexus::{Database, Params, Value};
use proptest::prelude::*;

/// One row of the writes: an assertion of a node or relationship, or a
/// retraction, of entity `id` over `[from, to)` (`to` `None`: open).
#[derive(Debug, Clone)]
struct Row {
    edge: bool,
    retract: bool,
    id: u8,
    from: i64,
    to: Option<i64>,
    v: i64,
}

impl Row {
    fn value(&self) -> Value {
        let kind = if self.edge { "relationship" } else { "node" };
        Value::Map(
            [
                ("kind", Value::from(kind)),
                ("id", Value::from(format!("{}{}", &kind[..1], self.id))),
                ("from", Value::Int(self.from)),
                ("to", self.to.map_or(Value::Null, Value::Int)),
                ("v", Value::Int(self.v)),
                ("src", Value::from(format!("n{}", self.id % 2))),
                ("dst", Value::from(format!("n{}", (self.id + 1) % 3))),
            ]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect(),
        )
    }
}

/// The writes of `rows` in one query each for node assertions,
/// relationship assertions and retractions, in that order; `id` is how
/// the query names the entity (`r.id`, or a comprehension that forces the
/// calls one by one). Returns the versions each query yielded, in order.
fn write(db: &Database, rows: &[Row], id: &str) -> Vec<usize> {
    let pick = |f: &dyn Fn(&Row) -> bool| -> Params {
        let list = rows.iter().filter(|r| f(r)).map(Row::value).collect();
        Params::from([("rows".to_string(), Value::List(list))])
    };
    let queries = [
        (
            format!(
                "UNWIND $rows AS r CALL plexus.temporal.assertNode({id}, ['T'], {{v: r.v}}, \
                 r.from, r.to) YIELD versionId RETURN versionId"
            ),
            pick(&|r| !r.edge && !r.retract),
        ),
        (
            format!(
                "UNWIND $rows AS r CALL plexus.temporal.assertRelationship({id}, r.src, r.dst, \
                 'LINK', {{v: r.v}}, r.from, r.to) YIELD versionId RETURN versionId"
            ),
            pick(&|r| r.edge && !r.retract),
        ),
        (
            format!(
                "UNWIND $rows AS r CALL plexus.temporal.retract(r.kind, {id}, r.from, r.to, \
                 'gone') YIELD versionId RETURN versionId"
            ),
            pick(&|r| r.retract),
        ),
    ];
    queries
        .iter()
        .map(|(text, params)| {
            let rows = db
                .query("default", text, params)
                .unwrap_or_else(|e| panic!("{text}: {e}"))
                .rows;
            // Every row yields a version id of its own.
            let mut ids: Vec<&Value> = rows.iter().map(|r| &r[0]).collect();
            ids.sort_by_key(|v| v.to_string());
            ids.dedup();
            assert_eq!(ids.len(), rows.len(), "{text}");
            rows.len()
        })
        .collect()
}

/// What the graph answers about every entity the rows may name: its
/// versions (without their generated ids), and the version holding it at
/// each instant of `0..=24`.
fn answers(db: &Database) -> Vec<Vec<Vec<Value>>> {
    let cols = "operation, labels, source, target, type, properties, validFrom, validTo, reason";
    let mut out = Vec::new();
    for kind in ["node", "relationship"] {
        for id in 0..4 {
            let id = format!("{}{id}", &kind[..1]);
            let p = Params::from([
                ("k".to_string(), Value::from(kind)),
                ("id".to_string(), Value::from(id.as_str())),
            ]);
            let versions =
                format!("CALL plexus.temporal.versions($k, $id) YIELD {cols} RETURN {cols}");
            out.push(db.query("default", &versions, &p).unwrap().rows);
            let held = format!(
                "UNWIND range(0, 24) AS t CALL plexus.temporal.asOf($k, $id, t) \
                 YIELD {cols} RETURN t, {cols}"
            );
            out.push(db.query("default", &held, &p).unwrap().rows);
        }
    }
    out
}

fn row() -> impl Strategy<Value = Row> {
    (
        any::<bool>(),
        0u8..8,
        0u8..4,
        0i64..20,
        prop::option::of(1i64..8),
        0i64..100,
    )
        .prop_map(|(edge, op, id, from, len, v)| Row {
            edge,
            // One row in eight a retraction.
            retract: op == 0,
            id,
            from,
            to: len.map(|l| from + l),
            v,
        })
}

/// Cases: 64, or `PROPTEST_CASES` for a longer run.
fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(64)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    #[test]
    fn a_batch_of_calls_leaves_what_the_calls_one_by_one_leave(
        rows in prop::collection::vec(row(), 0..40),
    ) {
        let batched = Database::in_memory().unwrap();
        let one_by_one = Database::in_memory().unwrap();
        let counts = write(&batched, &rows, "r.id");
        prop_assert_eq!(counts, write(&one_by_one, &rows, "[x IN [r.id] | x][0]"));
        prop_assert_eq!(answers(&batched), answers(&one_by_one));
    }
}

#[test]
fn repeated_versions_of_one_entity_cut_its_timeline_in_order() {
    let db = Database::in_memory().unwrap();
    // Three versions of one node in one batch, each cutting the one
    // before it: the last written holds where they overlap.
    let rows = [(0, None, 1), (10, Some(20), 2), (15, None, 3)]
        .iter()
        .map(|&(from, to, v)| Row {
            edge: false,
            retract: false,
            id: 0,
            from,
            to,
            v,
        })
        .collect::<Vec<_>>();
    assert_eq!(write(&db, &rows, "r.id"), vec![3, 0, 0]);
    let held = |t: i64| {
        let p = Params::from([("t".to_string(), Value::Int(t))]);
        db.query(
            "default",
            "CALL plexus.temporal.asOf('node', 'n0', $t) YIELD properties RETURN properties.v",
            &p,
        )
        .unwrap()
        .rows
    };
    assert_eq!(held(5), vec![vec![Value::Int(1)]]);
    assert_eq!(held(12), vec![vec![Value::Int(2)]]);
    assert_eq!(held(30), vec![vec![Value::Int(3)]]);
}

#[test]
fn a_bad_row_fails_the_batch_and_writes_nothing() {
    let db = Database::in_memory().unwrap();
    let rows = Value::List(vec![
        Row {
            edge: false,
            retract: false,
            id: 1,
            from: 0,
            to: None,
            v: 1,
        }
        .value(),
        // Ends where it starts: an empty interval.
        Row {
            edge: false,
            retract: false,
            id: 2,
            from: 5,
            to: Some(5),
            v: 2,
        }
        .value(),
    ]);
    let err = db
        .query(
            "default",
            "UNWIND $rows AS r CALL plexus.temporal.assertNode(r.id, [], {v: r.v}, r.from, r.to) \
             YIELD versionId RETURN versionId",
            &Params::from([("rows".to_string(), rows)]),
        )
        .unwrap_err();
    assert!(err.to_string().contains("interval"), "{err}");
    let none = db
        .query(
            "default",
            "CALL plexus.temporal.versions('node', 'n1') YIELD versionId RETURN versionId",
            &Params::new(),
        )
        .unwrap();
    assert!(none.rows.is_empty());
}

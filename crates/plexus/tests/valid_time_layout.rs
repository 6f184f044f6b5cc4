//! A store whose valid-time entries are laid out as before they were split
//! into a versioned and an unversioned part: opened for writing, it is
//! converted, and every read answers as before; opened read-only, it is
//! refused with a clear error.

use plexus::{Database, Options, Params, Value};
use plexus_storage::{GraphRead, ValidPart};
use std::ops::Bound;

fn q(db: &Database, text: &str, params: &Params) -> Vec<Vec<Value>> {
    db.query("default", text, params)
        .unwrap_or_else(|e| panic!("{text}: {e}"))
        .rows
}

/// Nodes, a relationship, a correction and a retraction, in four commits
/// of a graph keeping history; the system time after the first.
fn write(db: &Database) -> u64 {
    let none = Params::new();
    db.keep_history("default").unwrap();
    let v1 = q(
        db,
        "CALL plexus.temporal.assertNode('ann', ['Person'], {employer: 'Acme'}, 0, 100) \
         YIELD versionId RETURN versionId",
        &none,
    )[0][0]
        .clone();
    let first = db.system_time().unwrap();
    q(
        db,
        "CALL plexus.temporal.assertNode('bob', ['Person'], {employer: 'Initech'}, 10) \
         YIELD versionId WITH count(*) AS c \
         CALL plexus.temporal.assertRelationship('k1', 'ann', 'bob', 'KNOWS', {since: 2020}, 20) \
         YIELD versionId RETURN versionId",
        &none,
    );
    q(
        db,
        "CALL plexus.temporal.correct($v, {employer: 'Acme Corp'}) YIELD versionId \
         RETURN versionId",
        &Params::from([("v".to_string(), v1)]),
    );
    q(
        db,
        "CALL plexus.temporal.retract('node', 'bob', 80, 90) YIELD versionId RETURN versionId",
        &none,
    );
    first
}

/// What the reads answer: versions by entity, label and property-index
/// lookups, neighbours, now and as of the system time `first`.
fn answers(db: &Database, first: u64) -> Vec<Vec<Vec<Value>>> {
    let at = Params::from([("t".to_string(), Value::Int(first as i64))]);
    let reads = [
        "CALL plexus.temporal.versions('node', 'ann') YIELD versionId, properties \
         RETURN versionId, properties.employer",
        "CALL plexus.temporal.versions('node', 'bob') YIELD operation RETURN operation",
        "MATCH (n:Person) FOR VALID_TIME AS OF 50 RETURN elementId(n), n.employer ORDER BY 1",
        "MATCH (n:Person) FOR VALID_TIME AS OF 85 RETURN elementId(n) ORDER BY 1",
        "MATCH (n {employer: 'Acme Corp'}) FOR VALID_TIME AS OF 50 RETURN elementId(n)",
        "MATCH (a)-[r:KNOWS]->(b) FOR VALID_TIME AS OF 50 \
         RETURN elementId(a), r.since, elementId(b)",
    ];
    let as_known = [
        "CALL plexus.temporal.versions('node', 'ann') FOR SYSTEM_TIME AS OF $t \
         YIELD versionId RETURN versionId",
        "MATCH (n:Person) FOR VALID_TIME AS OF 50 FOR SYSTEM_TIME AS OF $t \
         RETURN elementId(n), n.employer ORDER BY 1",
    ];
    let mut out: Vec<_> = reads.iter().map(|r| q(db, r, &Params::new())).collect();
    out.extend(as_known.iter().map(|r| q(db, r, &at)));
    out
}

/// Moves every entry of the unversioned part back into the versioned one,
/// where builds before the split kept them.
fn unconvert(db: &Database) {
    let mut txn = db.storage().write("default").unwrap();
    let mut entries: Vec<(Vec<u8>, Vec<u8>)> = Vec::new();
    txn.valid_time_scan(
        ValidPart::Unversioned,
        Bound::Unbounded,
        Bound::Unbounded,
        false,
        &mut |k, v| {
            entries.push((k.to_vec(), v.to_vec()));
            Ok(true)
        },
    )
    .unwrap();
    assert!(entries.len() > 10, "{} entries", entries.len());
    for (k, v) in entries {
        txn.valid_time_write(ValidPart::Unversioned, &k, &k, None)
            .unwrap();
        txn.valid_time_write(ValidPart::Versioned, &k, &k, Some(v))
            .unwrap();
    }
    txn.commit().unwrap();
}

#[test]
fn a_store_laid_out_before_the_split_is_converted_when_opened() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let db = Database::create(&path, Options::default()).unwrap();
    let first = write(&db);
    let want = answers(&db, first);
    assert_eq!(want[0].len(), 2, "{want:?}");
    assert_eq!(want[6].len(), 1, "as of the first commit: {want:?}");
    unconvert(&db);
    let r = db.storage().read("default").unwrap();
    assert!(plexus::temporal::needs_converting(&r).unwrap());
    drop(r);
    assert_ne!(
        answers(&db, first),
        want,
        "the reads miss what is not converted"
    );
    drop(db);

    let read_only = Options {
        read_only: true,
        ..Options::default()
    };
    let e = Database::open(&path, read_only.clone())
        .err()
        .expect("refused");
    assert!(
        e.to_string().contains("open the database for writing once"),
        "{e}"
    );

    let db = Database::open(&path, Options::default()).unwrap();
    let r = db.storage().read("default").unwrap();
    assert!(!plexus::temporal::needs_converting(&r).unwrap());
    drop(r);
    assert_eq!(answers(&db, first), want);
    drop(db);
    // Read-only, a converted store opens.
    let db = Database::open(&path, read_only).unwrap();
    assert_eq!(answers(&db, first), want);
}

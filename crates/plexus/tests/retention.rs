//! A retention policy for a graph's history: what it keeps, that commits
//! enforce it in the background, that it survives reopening and goes with
//! the history.

use plexus::{Database, Options, Params, Value};
use std::time::{Duration, Instant};

fn age_as_of(db: &Database, t: u64) -> plexus::Result<Vec<Vec<Value>>> {
    let params = Params::from([("t".to_string(), Value::Int(t as i64))]);
    db.query(
        "default",
        "MATCH (p:P) FOR SYSTEM_TIME AS OF $t RETURN p.age",
        &params,
    )
    .map(|r| r.rows)
}

fn set_age(db: &Database, age: i64) {
    let params = Params::from([("a".to_string(), Value::Int(age))]);
    db.query("default", "MERGE (p:P) SET p.age = $a", &params)
        .unwrap();
}

#[test]
fn a_policy_keeps_what_reads_of_its_window_need() {
    let db = Database::in_memory().unwrap();
    let refused = db
        .set_history_retention("default", Some(Duration::from_secs(1)))
        .unwrap_err();
    assert!(refused.to_string().contains("history"), "{refused}");
    db.keep_history("default").unwrap();
    assert!(db
        .set_history_retention("default", Some(Duration::ZERO))
        .is_err());
    set_age(&db, 1);
    let first = db.system_time().unwrap();
    set_age(&db, 2);
    let second = db.system_time().unwrap();
    // A long ttl: nothing goes.
    db.set_history_retention("default", Some(Duration::from_secs(3600)))
        .unwrap();
    assert_eq!(
        db.enforce_history_retention().unwrap(),
        [("default".to_string(), 0)]
    );
    assert_eq!(age_as_of(&db, first).unwrap(), [[Value::Int(1)]]);
    // A short one, once it has passed: reads as of the window still work
    // (the version holding at its start is kept), earlier ones are refused.
    // (This commit's background prune, under the long ttl, removes
    // nothing.)
    std::thread::sleep(Duration::from_millis(1200));
    set_age(&db, 3);
    let third = db.system_time().unwrap();
    db.set_history_retention("default", Some(Duration::from_secs(1)))
        .unwrap();
    let removed = db.enforce_history_retention().unwrap();
    assert!(removed[0].1 > 0, "{removed:?}");
    let start = db.history_start("default").unwrap().unwrap();
    assert!(
        start > second && start < third,
        "{start} in ({second}, {third})"
    );
    assert!(age_as_of(&db, first).is_err(), "before the window");
    assert_eq!(age_as_of(&db, start).unwrap(), [[Value::Int(2)]]);
    assert_eq!(age_as_of(&db, third).unwrap(), [[Value::Int(3)]]);
    // No policy: for ever.
    db.set_history_retention("default", None).unwrap();
    assert_eq!(db.history_retention("default").unwrap(), None);
    assert_eq!(db.enforce_history_retention().unwrap(), []);
}

#[test]
fn commits_enforce_the_policy_in_the_background() {
    let db = Database::in_memory().unwrap();
    db.keep_history("default").unwrap();
    set_age(&db, 1);
    let first = db.system_time().unwrap();
    db.set_history_retention("default", Some(Duration::from_micros(1)))
        .unwrap();
    // The first commit after the policy is set starts a prune.
    set_age(&db, 2);
    let deadline = Instant::now() + Duration::from_secs(30);
    while db.history_start("default").unwrap() <= Some(first) {
        assert!(Instant::now() < deadline, "no background prune");
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(age_as_of(&db, first).is_err());
    // History starts a microsecond before the prune ran, after the last
    // commit: reads from there on see that commit's graph.
    let start = db.history_start("default").unwrap().unwrap();
    assert_eq!(age_as_of(&db, start).unwrap(), [[Value::Int(2)]]);
}

#[test]
fn the_policy_is_kept_with_the_history_and_dropped_with_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let month = Duration::from_secs(30 * 86_400);
    {
        let db = Database::create(&path, Options::default()).unwrap();
        db.keep_history("default").unwrap();
        db.set_history_retention("default", Some(month)).unwrap();
    }
    let db = Database::open(&path, Options::default()).unwrap();
    assert_eq!(db.history_retention("default").unwrap(), Some(month));
    assert_eq!(
        db.enforce_history_retention().unwrap(),
        [("default".to_string(), 0)]
    );
    db.drop_history("default").unwrap();
    db.keep_history("default").unwrap();
    assert_eq!(db.history_retention("default").unwrap(), None);
    assert_eq!(db.enforce_history_retention().unwrap(), []);
}

//! Temporal values read back what Plexus writes: years beyond four digits
//! are written signed (`+10000-01-01`, ISO 8601's expanded years) and must
//! parse again; malformed text is an error, never a panic.

use plexus::{Database, Params, Value};

fn one(db: &Database, q: &str) -> plexus::Result<Value> {
    let t = db.query("default", q, &Params::new())?;
    Ok(t.rows[0][0].clone())
}

#[test]
fn dates_round_trip_through_their_text() {
    let db = Database::in_memory().unwrap();
    for (y, m, d) in [
        (10000, 1, 1),
        (123456, 7, 8),
        (-10000, 12, 31),
        (1, 2, 3),
        (-1, 1, 1),
        (9999, 12, 31),
    ] {
        let q = format!("RETURN date({{year: {y}, month: {m}, day: {d}}}) AS d");
        let v = one(&db, &q).unwrap();
        let text = v.to_string().trim_matches('\'').to_string();
        let back = one(&db, &format!("RETURN date('{text}') AS d")).unwrap();
        assert_eq!(back, v, "{text}");
        let dt = one(
            &db,
            &format!("RETURN localdatetime('{text}T10:11:12') AS d"),
        )
        .unwrap();
        assert!(dt.to_string().contains(&text), "{dt} from {text}");
    }
}

#[test]
fn malformed_dates_are_errors() {
    let db = Database::in_memory().unwrap();
    for text in [
        "+999999999999-01-01",
        "+10000",
        "10000-01-01",
        "+1é000-01-01",
        "+10000-13-01",
        "-",
        "+",
        "+12345é-01-01",
    ] {
        let r = one(&db, &format!("RETURN date('{text}') AS d"));
        assert!(r.is_err(), "{text}: {r:?}");
    }
}

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

/// ISO 8601's basic forms without a day (`201507`) and durations with a
/// negative part after the time designator (`PT-1M-0.001S`, which names no
/// year although a '-' is its fifth character) read as openCypher says.
#[test]
fn basic_month_dates_and_negative_duration_parts_parse() {
    let db = Database::in_memory().unwrap();
    let text = |q: &str| {
        one(&db, q)
            .unwrap()
            .to_string()
            .trim_matches('\'')
            .to_string()
    };
    assert_eq!(text("RETURN date('201507')"), "2015-07-01");
    assert_eq!(text("RETURN date('2015-07')"), "2015-07-01");
    let d = "duration({seconds: -60, milliseconds: -1})";
    assert_eq!(text(&format!("RETURN toString({d})")), "PT-1M-0.001S");
    assert_eq!(
        one(&db, &format!("RETURN duration('PT-1M-0.001S') = {d}")).unwrap(),
        Value::Bool(true)
    );
    assert_eq!(
        text("RETURN duration('P0001-02-03T04:05:06')"),
        "P1Y2M3DT4H5M6S"
    );
}

/// Scaling a duration drops a fraction of a nanosecond, as openCypher's
/// examples do (`/ 2` and `* 0.5` alike), rather than rounding it up.
#[test]
fn scaled_durations_drop_fractions_of_a_nanosecond() {
    let db = Database::in_memory().unwrap();
    for q in [
        "RETURN toString(duration({seconds: 1, nanoseconds: 1}) / 2)",
        "RETURN toString(duration({seconds: 1, nanoseconds: 1}) * 0.5)",
    ] {
        assert_eq!(one(&db, q).unwrap(), Value::from("PT0.5S"), "{q}");
    }
}

/// A time selected from a date-time in a named zone keeps its wall clock in
/// that zone on the new date: 12:00 in Stockholm on 28 March 1984 was
/// summer time (+02:00), though the source's own date (11 October) was not.
#[test]
fn a_selected_time_reads_its_zone_on_the_new_date() {
    let db = Database::in_memory().unwrap();
    let q = "RETURN toString(datetime({date: date('1984-03-28'), \
             time: datetime({year: 1984, month: 10, day: 11, hour: 12, timezone: 'Europe/Stockholm'}), \
             second: 42, timezone: 'Pacific/Honolulu'}))";
    assert_eq!(
        one(&db, q).unwrap(),
        Value::from("1984-03-28T00:00:42-10:00[Pacific/Honolulu]")
    );
}

/// A duration's `seconds` round down and its `nanosecondsOfSecond` is never
/// negative, as in Java: minus 23:59:59.9 is -86,400 s and 0.1 s.
#[test]
fn a_negative_durations_seconds_round_down() {
    let db = Database::in_memory().unwrap();
    let t = db
        .query(
            "default",
            "WITH duration.between(localdatetime('2018-01-02T10:00:00.1'), \
             localdatetime('2018-01-01T10:00:00.2')) AS d \
             RETURN toString(d), d.seconds, d.nanosecondsOfSecond, d.milliseconds",
            &Params::new(),
        )
        .unwrap();
    assert_eq!(
        t.rows[0],
        vec![
            Value::from("PT-23H-59M-59.9S"),
            Value::Int(-86400),
            Value::Int(100_000_000),
            Value::Int(-86_399_900),
        ]
    );
}

/// Dates reach Cypher's years ±999,999,999 (days since 1970 beyond an
/// i32), are stored and read back, and a year past them is an error.
#[test]
fn dates_reach_a_billion_years_and_no_further() {
    let db = Database::in_memory().unwrap();
    for text in ["+999999999-12-31", "-999999999-01-01", "+5000000-06-15"] {
        let v = one(&db, &format!("RETURN date('{text}') AS d")).unwrap();
        assert_eq!(v.to_string(), format!("'{text}'"));
        let params = Params::from([("d".to_string(), v.clone())]);
        db.query("default", "CREATE (:D {d: $d})", &params).unwrap();
        let back = db
            .query("default", "MATCH (n:D {d: $d}) RETURN n.d", &params)
            .unwrap();
        assert_eq!(back.rows, vec![vec![v]], "{text}");
    }
    let span = one(
        &db,
        "RETURN duration.between(date('-999999999-01-01'), date('+999999999-12-31')) AS d",
    )
    .unwrap();
    assert_eq!(span.to_string(), "'P1999999998Y11M30D'");
    for q in [
        "RETURN date('+1000000000-01-01')",
        "RETURN date({year: 1000000000})",
        "RETURN date('+999999999-12-31') + duration('P1D')",
        "RETURN date('-999999999-01-01') - duration('P1D')",
    ] {
        assert!(one(&db, q).is_err(), "{q}");
    }
}

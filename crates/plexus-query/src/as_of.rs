//! `FOR SYSTEM_TIME AS OF at` and `FOR VALID_TIME AS OF at` after a
//! MATCH's patterns: the instants the whole query reads as of. The system
//! time picks the storage's view of that instant (a graph that keeps
//! history, see `plexus_storage`'s `history.rs`), which the caller opens;
//! the valid time puts the valid-time graph as of that instant
//! (`plexus_temporal::ValidTimeView`) in place of the graph. As in
//! GestaltDB, the qualifiers are query-wide and the query only reads.

use crate::error::QueryError;
use crate::eval::Ctx;
use crate::limits::Guard;
use crate::mutate::Params;
use plexus_common::Value;
use plexus_cypher::{Expr, Query};
use plexus_temporal::When;

fn semantic(message: impl Into<String>) -> QueryError {
    QueryError::Semantic {
        code: "InvalidTimeQualifier",
        message: message.into(),
    }
}

/// Refuses a time qualifier on a query that writes. (Two different
/// instants of one kind are refused when they are evaluated.)
pub(crate) fn check(q: &Query, writes: bool) -> Result<(), QueryError> {
    if !q.as_of.is_empty() && writes {
        return Err(semantic(
            "a query that reads the graph as of an earlier instant cannot write",
        ));
    }
    Ok(())
}

/// The system time (µs since the epoch) the query reads as of, when it has
/// a `FOR SYSTEM_TIME AS OF`: its expression evaluated with the parameters.
pub(crate) fn query_instant(
    q: &Query,
    params: &Params,
    guard: &Guard,
) -> Result<Option<u64>, QueryError> {
    match system_instant(q, params, guard)? {
        Some((v, e)) => micros(&v).map(Some).map_err(|err| err.at(e.span.start)),
        None => Ok(None),
    }
}

/// What valid time the query reads the valid-time graph as of, when it
/// has a `FOR VALID_TIME` qualifier: an instant (µs since 1970, negative
/// before), or a range (`BETWEEN a AND b` includes `b`, `FROM a TO b`
/// does not).
pub(crate) fn valid_time(
    q: &Query,
    params: &Params,
    guard: &Guard,
) -> Result<Option<When>, QueryError> {
    // Each error is blamed on the expression it is about.
    let at = |e: &Expr, what: &str| {
        instant(&evaluate(e, params, guard)?, what).map_err(|err| err.at(e.span.start))
    };
    let mut seen: Option<When> = None;
    for t in q.as_of.iter().filter(|t| t.valid) {
        let when = match &t.end {
            None => When::At(at(&t.at, "FOR VALID_TIME AS OF")?),
            Some(end) => {
                let from = at(&t.at, "the start of a FOR VALID_TIME range")?;
                let last = at(&end.at, "the end of a FOR VALID_TIME range")?;
                // An inclusive end is the range up to the next microsecond.
                let to = if end.inclusive {
                    last.saturating_add(1)
                } else {
                    last
                };
                if to <= from {
                    return Err(QueryError::Argument {
                        code: "InvalidArgumentValue",
                        message: format!(
                            "the FOR VALID_TIME range from {from} to {last} µs is empty: \
                             its end must come after its start"
                        ),
                    }
                    .at(t.at.span.start));
                }
                When::Within { from, to }
            }
        };
        if seen.is_some_and(|s| s != when) {
            return Err(semantic(
                "the MATCH clauses of one query read as of different instants: \
                 FOR VALID_TIME applies to the whole query",
            )
            .at(t.at.span.start));
        }
        seen = Some(when);
    }
    Ok(seen)
}

/// The value the `FOR SYSTEM_TIME` qualifiers name (all must name the
/// same), with the first expression that names it.
fn system_instant<'q>(
    q: &'q Query,
    params: &Params,
    guard: &Guard,
) -> Result<Option<(Value, &'q Expr)>, QueryError> {
    let mut at: Option<(Value, &Expr)> = None;
    for t in q.as_of.iter().filter(|t| !t.valid) {
        let v = evaluate(&t.at, params, guard)?;
        if at.as_ref().is_some_and(|(a, _)| *a != v) {
            return Err(semantic(
                "the MATCH clauses of one query read as of different instants: \
                 FOR SYSTEM_TIME AS OF applies to the whole query",
            )
            .at(t.at.span.start));
        }
        at.get_or_insert((v, &t.at));
    }
    Ok(at)
}

/// A system time as microseconds since the epoch: an [`instant`] not
/// before 1970.
fn micros(v: &Value) -> Result<u64, QueryError> {
    let at = instant(v, "FOR SYSTEM_TIME AS OF")?;
    u64::try_from(at).map_err(|_| QueryError::Argument {
        code: "InvalidArgumentValue",
        message: format!("FOR SYSTEM_TIME AS OF {v}: the instant lies before 1970"),
    })
}

/// A qualifier's expression, evaluated with the parameters alone.
fn evaluate(e: &Expr, params: &Params, guard: &Guard) -> Result<Value, QueryError> {
    let ctx = Ctx::without_graph(params, guard);
    crate::eval::eval(e, &Default::default(), &ctx)
}

/// An instant as microseconds since 1970 (negative before): a datetime
/// (a local one, or a date, taken as UTC), an ISO 8601 string, or an
/// integer of microseconds. `what` names the argument in errors. (Public
/// as `plexus_query::instant_micros`, for the Python module's
/// `snapshot(valid_time=…)`.)
pub fn instant(v: &Value, what: &str) -> Result<i64, QueryError> {
    const M: i128 = 1_000_000;
    let at: i128 = match v {
        Value::Int(i) => i128::from(*i),
        Value::DateTime(d) => i128::from(d.secs) * M + i128::from(d.nanos / 1000),
        Value::LocalDateTime(d) => i128::from(d.secs) * M + i128::from(d.nanos / 1000),
        Value::Date(d) => i128::from(d.days) * 86_400 * M,
        Value::String(_) => return instant(&crate::eval::call("datetime", vec![v.clone()])?, what),
        other => {
            return Err(QueryError::Type {
                code: "InvalidArgumentType",
                message: format!(
                    "{what} takes a datetime, an ISO 8601 string or microseconds since 1970, \
                     not {}",
                    other.value_type().name()
                ),
            })
        }
    };
    i64::try_from(at).map_err(|_| QueryError::Argument {
        code: "InvalidArgumentValue",
        message: format!("{what} {v}: the instant is out of range"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(text: &str) -> Query {
        plexus_cypher::parse(text).unwrap()
    }

    fn at(text: &str) -> Result<Option<u64>, QueryError> {
        query_instant(&parsed(text), &Default::default(), &Guard::default())
    }

    #[test]
    fn the_instant_comes_from_a_datetime_a_string_or_micros() {
        let q = "MATCH (n) FOR SYSTEM_TIME AS OF 1500 RETURN n";
        assert_eq!(at(q).unwrap(), Some(1500));
        let q = "MATCH (n) FOR SYSTEM_TIME AS OF datetime('1970-01-01T00:00:01.5Z') RETURN n";
        assert_eq!(at(q).unwrap(), Some(1_500_000));
        let q = "MATCH (n) FOR SYSTEM_TIME AS OF '1970-01-02T00:00:00+01:00' RETURN n";
        assert_eq!(at(q).unwrap(), Some(23 * 3600 * 1_000_000));
        assert_eq!(at("MATCH (n) RETURN n").unwrap(), None);
        let e = at("MATCH (n) FOR SYSTEM_TIME AS OF -1 RETURN n").unwrap_err();
        assert!(e.to_string().contains("before 1970"), "{e}");
        let e = at("MATCH (n) FOR SYSTEM_TIME AS OF true RETURN n").unwrap_err();
        assert!(e.to_string().contains("not BOOL"), "{e}");
    }

    #[test]
    fn qualifiers_apply_to_a_whole_query_that_only_reads() {
        let ok = parsed(
            "MATCH (a) FOR SYSTEM_TIME AS OF 5 MATCH (b) FOR SYSTEM_TIME AS OF 5 RETURN a, b",
        );
        assert!(check(&ok, false).is_ok());
        let guard = Guard::default();
        assert_eq!(
            query_instant(&ok, &Default::default(), &guard).unwrap(),
            Some(5)
        );
        let two =
            parsed("MATCH (a) FOR SYSTEM_TIME AS OF 5 MATCH (b) FOR SYSTEM_TIME AS OF 6 RETURN a");
        let e = query_instant(&two, &Default::default(), &guard).unwrap_err();
        assert!(e.to_string().contains("different instants"), "{e}");
        assert!(check(&ok, true)
            .unwrap_err()
            .to_string()
            .contains("cannot write"));
        let valid = parsed(
            "MATCH (a) FOR VALID_TIME AS OF -5 FOR SYSTEM_TIME AS OF 7 \
             MATCH (b) FOR VALID_TIME AS OF -5 RETURN a",
        );
        assert!(check(&valid, false).is_ok());
        let none = Default::default();
        assert_eq!(
            valid_time(&valid, &none, &guard).unwrap(),
            Some(When::At(-5))
        );
        assert_eq!(query_instant(&valid, &none, &guard).unwrap(), Some(7));
        let two =
            parsed("MATCH (a) FOR VALID_TIME AS OF 1 MATCH (b) FOR VALID_TIME AS OF 2 RETURN a");
        let e = valid_time(&two, &none, &guard).unwrap_err();
        assert!(e.to_string().contains("FOR VALID_TIME applies"), "{e}");
        let range = |text: &str| valid_time(&parsed(text), &none, &guard);
        assert_eq!(
            range("MATCH (a) FOR VALID_TIME BETWEEN 3 AND 7 RETURN a").unwrap(),
            Some(When::Within { from: 3, to: 8 })
        );
        assert_eq!(
            range("MATCH (a) FOR VALID_TIME FROM 3 TO 7 RETURN a").unwrap(),
            Some(When::Within { from: 3, to: 7 })
        );
        let e = range("MATCH (a) FOR VALID_TIME BETWEEN 1 < 2 AND 3 RETURN a").unwrap_err();
        assert!(e.to_string().contains("not BOOL"), "{e}");
        let e = range("MATCH (a) FOR VALID_TIME FROM 7 TO 7 RETURN a").unwrap_err();
        assert!(e.to_string().contains("is empty"), "{e}");
        assert!(range("MATCH (a) FOR VALID_TIME BETWEEN 7 AND 7 RETURN a").is_ok());
        let e =
            plexus_cypher::parse("MATCH (a) FOR SYSTEM_TIME BETWEEN 1 AND 2 RETURN a").unwrap_err();
        assert!(e.to_string().contains("a range is for valid time"), "{e}");
    }
}

//! `FOR SYSTEM_TIME AS OF at` after a MATCH's patterns: the instant the
//! whole query reads the graph as of (a graph that keeps history, see
//! `plexus_storage`'s `history.rs`). As in GestaltDB, the qualifier is
//! query-wide and the query only reads; the caller runs it on the
//! storage's view of that instant.

use crate::error::QueryError;
use crate::eval::Ctx;
use crate::limits::Guard;
use crate::mutate::Params;
use plexus_common::Value;
use plexus_cypher::Query;

fn semantic(message: impl Into<String>) -> QueryError {
    QueryError::Semantic {
        code: "InvalidTimeQualifier",
        message: message.into(),
    }
}

/// Refuses time qualifiers Plexus cannot honour: valid time (not kept
/// yet), or a query that writes. (Two different instants are refused
/// when they are evaluated.)
pub(crate) fn check(q: &Query, writes: bool) -> Result<(), QueryError> {
    if q.as_of.is_empty() {
        return Ok(());
    }
    if q.as_of.iter().any(|t| t.valid) {
        return Err(QueryError::Unsupported(
            "FOR VALID_TIME AS OF is not supported yet: Plexus keeps system-time history \
             (read it with FOR SYSTEM_TIME AS OF)"
                .into(),
        ));
    }
    if writes {
        return Err(semantic(
            "a query that reads the graph as of an earlier instant cannot write",
        ));
    }
    Ok(())
}

/// The instant (µs since the epoch) the query reads as of, when it has a
/// time qualifier: its expression evaluated with the parameters.
pub(crate) fn query_instant(
    q: &Query,
    params: &Params,
    guard: &Guard,
) -> Result<Option<u64>, QueryError> {
    let ctx = Ctx {
        params,
        graph: None,
        aggregates: None,
        guard,
    };
    let mut at: Option<u64> = None;
    for t in &q.as_of {
        let v = micros(&crate::eval::eval(&t.at, &Default::default(), &ctx)?)?;
        if at.is_some_and(|a| a != v) {
            return Err(semantic(
                "the MATCH clauses of one query read as of different instants: \
                 FOR SYSTEM_TIME AS OF applies to the whole query",
            ));
        }
        at = Some(v);
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

/// An instant as microseconds since 1970 (negative before): a datetime
/// (a local one, or a date, taken as UTC), an ISO 8601 string, or an
/// integer of microseconds. `what` names the argument in errors.
pub(crate) fn instant(v: &Value, what: &str) -> Result<i64, QueryError> {
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
        let valid = parsed("MATCH (a) FOR VALID_TIME AS OF 5 RETURN a");
        assert!(check(&valid, false)
            .unwrap_err()
            .to_string()
            .contains("VALID_TIME"));
    }
}

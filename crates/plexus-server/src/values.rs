//! Plexus values in Bolt: results are encoded straight from [`Value`]
//! (graph entities as Node, Relationship and Path structures, temporal
//! values as their structures), and parameters decoded from [`Pack`].

use crate::packstream::{Encoder, Pack};
use plexus::{Date, DateTime, Duration, LocalDateTime, LocalTime, Time, Value};
use std::collections::BTreeMap;
use std::fmt;

/// Structure tags (Bolt 5).
pub mod tag {
    pub const NODE: u8 = b'N';
    pub const RELATIONSHIP: u8 = b'R';
    pub const UNBOUND_RELATIONSHIP: u8 = b'r';
    pub const PATH: u8 = b'P';
    pub const DATE: u8 = b'D';
    pub const TIME: u8 = b'T';
    pub const LOCAL_TIME: u8 = b't';
    pub const DATE_TIME: u8 = b'I';
    pub const DATE_TIME_ZONE_ID: u8 = b'i';
    pub const LOCAL_DATE_TIME: u8 = b'd';
    pub const DURATION: u8 = b'E';
    pub const POINT_2D: u8 = b'X';
    pub const POINT_3D: u8 = b'Y';
}

const NANOS_PER_DAY: i64 = 86_400_000_000_000;
/// Offsets beyond ±18 hours are not offsets (ISO 8601, java.time).
const MAX_OFFSET: i64 = 18 * 3600;
/// Seconds of the dates Plexus can hold (days in an i32).
const MAX_SECS: i64 = i32::MAX as i64 * 86_400;

/// A parameter Plexus cannot take.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParamError(pub String);

impl fmt::Display for ParamError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

fn bad<T>(msg: impl Into<String>) -> Result<T, ParamError> {
    Err(ParamError(msg.into()))
}

/// Writes one result value.
pub fn encode(e: &mut Encoder, v: &Value) {
    match v {
        Value::Null => e.null(),
        Value::Bool(b) => e.bool(*b),
        Value::Int(i) => e.int(*i),
        Value::Float(f) => e.float(*f),
        Value::String(s) => e.string(s),
        Value::Bytes(b) => e.bytes(b),
        Value::List(items) => {
            e.list_header(items.len());
            items.iter().for_each(|x| encode(e, x));
        }
        Value::Map(m) => encode_map(e, m),
        Value::Node(n) => {
            e.struct_header(4, tag::NODE);
            e.int(id(n.id));
            e.list_header(n.labels.len());
            n.labels.iter().for_each(|l| e.string(l));
            encode_map(e, &n.props);
            e.string(&n.key);
        }
        Value::Relationship(r) => {
            e.struct_header(8, tag::RELATIONSHIP);
            e.int(id(r.id));
            e.int(id(r.start));
            e.int(id(r.end));
            e.string(&r.rel_type);
            encode_map(e, &r.props);
            e.string(&r.key);
            e.string(&r.start_key);
            e.string(&r.end_key);
        }
        Value::Path(p) => encode_path(e, &p.nodes, &p.rels),
        Value::Date(d) => {
            e.struct_header(1, tag::DATE);
            e.int(d.days);
        }
        Value::LocalTime(t) => {
            e.struct_header(1, tag::LOCAL_TIME);
            e.int(nanos(t.nanos));
        }
        Value::Time(t) => {
            e.struct_header(2, tag::TIME);
            e.int(nanos(t.nanos));
            e.int(i64::from(t.offset_secs));
        }
        Value::LocalDateTime(t) => {
            e.struct_header(2, tag::LOCAL_DATE_TIME);
            e.int(t.secs);
            e.int(i64::from(t.nanos));
        }
        Value::DateTime(t) => encode_datetime(e, t),
        Value::Duration(d) => {
            e.struct_header(4, tag::DURATION);
            e.int(d.months);
            e.int(d.days);
            e.int(d.secs);
            e.int(i64::from(d.nanos));
        }
    }
}

/// Internal ids are below 2^63 (they count entities); saturate rather
/// than wrap should one not be.
fn id(i: u64) -> i64 {
    i64::try_from(i).unwrap_or(i64::MAX)
}

fn nanos(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

fn encode_map(e: &mut Encoder, m: &BTreeMap<String, Value>) {
    e.map_header(m.len());
    for (k, v) in m {
        e.string(k);
        encode(e, v);
    }
}

fn encode_datetime(e: &mut Encoder, t: &DateTime) {
    match &t.zone {
        Some(zone) => {
            e.struct_header(3, tag::DATE_TIME_ZONE_ID);
            e.int(t.secs);
            e.int(i64::from(t.nanos));
            e.string(zone);
        }
        None => {
            e.struct_header(3, tag::DATE_TIME);
            e.int(t.secs);
            e.int(i64::from(t.nanos));
            e.int(i64::from(t.offset_secs));
        }
    }
}

/// A path as Bolt has it: its distinct nodes, its distinct relationships
/// unbound, and the walk as indices into both (a relationship's index is
/// 1-based, negative when walked against its direction).
fn encode_path(e: &mut Encoder, nodes: &[plexus::NodeValue], rels: &[plexus::RelValue]) {
    let mut node_ix: Vec<usize> = Vec::with_capacity(nodes.len());
    let mut uniq_nodes: Vec<&plexus::NodeValue> = Vec::new();
    for n in nodes {
        let i = match uniq_nodes.iter().position(|u| u.id == n.id) {
            Some(i) => i,
            None => {
                uniq_nodes.push(n);
                uniq_nodes.len() - 1
            }
        };
        node_ix.push(i);
    }
    let mut uniq_rels: Vec<&plexus::RelValue> = Vec::new();
    let mut indices: Vec<i64> = Vec::with_capacity(rels.len() * 2);
    for (step, r) in rels.iter().enumerate() {
        let i = match uniq_rels.iter().position(|u| u.id == r.id) {
            Some(i) => i,
            None => {
                uniq_rels.push(r);
                uniq_rels.len() - 1
            }
        };
        let one_based = id(i as u64 + 1);
        // Walked forwards when the step leaves from the relationship's start.
        let forwards = nodes.get(step).is_some_and(|n| n.id == r.start);
        indices.push(if forwards { one_based } else { -one_based });
        indices.push(id(node_ix.get(step + 1).copied().unwrap_or(0) as u64));
    }
    e.struct_header(3, tag::PATH);
    e.list_header(uniq_nodes.len());
    for n in uniq_nodes {
        encode(e, &Value::Node(std::sync::Arc::new(n.clone())));
    }
    e.list_header(uniq_rels.len());
    for r in uniq_rels {
        e.struct_header(4, tag::UNBOUND_RELATIONSHIP);
        e.int(id(r.id));
        e.string(&r.rel_type);
        encode_map(e, &r.props);
        e.string(&r.key);
    }
    e.list_header(indices.len());
    indices.into_iter().for_each(|i| e.int(i));
}

/// A parameter value from the client.
pub fn decode(p: Pack) -> Result<Value, ParamError> {
    Ok(match p {
        Pack::Null => Value::Null,
        Pack::Bool(b) => Value::Bool(b),
        Pack::Int(i) => Value::Int(i),
        Pack::Float(f) => Value::Float(f),
        Pack::Bytes(b) => Value::Bytes(b),
        Pack::String(s) => Value::String(s),
        Pack::List(items) => Value::List(items.into_iter().map(decode).collect::<Result<_, _>>()?),
        Pack::Map(entries) => Value::Map(decode_map(entries)?),
        Pack::Struct(t, fields) => decode_struct(t, fields)?,
    })
}

pub fn decode_map(entries: Vec<(String, Pack)>) -> Result<BTreeMap<String, Value>, ParamError> {
    entries
        .into_iter()
        .map(|(k, v)| Ok((k, decode(v)?)))
        .collect()
}

fn ints<const N: usize>(what: &str, fields: &[Pack]) -> Result<[i64; N], ParamError> {
    let mut out = [0i64; N];
    if fields.len() != N {
        return bad(format!(
            "a {what} structure has {N} fields, not {}",
            fields.len()
        ));
    }
    for (o, f) in out.iter_mut().zip(fields) {
        *o = f
            .as_int()
            .ok_or_else(|| ParamError(format!("a {what} field that is not an integer")))?;
    }
    Ok(out)
}

fn in_range(what: &str, v: i64, lo: i64, hi: i64) -> Result<i64, ParamError> {
    if (lo..=hi).contains(&v) {
        Ok(v)
    } else {
        bad(format!("{what} {v} is out of range ({lo} to {hi})"))
    }
}

fn offset(v: i64) -> Result<i32, ParamError> {
    Ok(in_range("the offset", v, -MAX_OFFSET, MAX_OFFSET)? as i32)
}

fn sub_nanos(v: i64) -> Result<u32, ParamError> {
    Ok(in_range("nanoseconds", v, 0, 999_999_999)? as u32)
}

fn decode_struct(t: u8, fields: Vec<Pack>) -> Result<Value, ParamError> {
    Ok(match t {
        tag::DATE => {
            let [days] = ints("Date", &fields)?;
            let date = Date::from_days(days).ok_or_else(|| {
                ParamError(format!("the date {days} days from 1970 is out of range"))
            })?;
            Value::Date(date)
        }
        tag::LOCAL_TIME => {
            let [n] = ints("LocalTime", &fields)?;
            Value::LocalTime(LocalTime {
                nanos: in_range("the time of day", n, 0, NANOS_PER_DAY - 1)? as u64,
            })
        }
        tag::TIME => {
            let [n, off] = ints("Time", &fields)?;
            Value::Time(Time {
                nanos: in_range("the time of day", n, 0, NANOS_PER_DAY - 1)? as u64,
                offset_secs: offset(off)?,
            })
        }
        tag::LOCAL_DATE_TIME => {
            let [s, n] = ints("LocalDateTime", &fields)?;
            Value::LocalDateTime(LocalDateTime {
                secs: in_range("seconds", s, -MAX_SECS, MAX_SECS)?,
                nanos: sub_nanos(n)?,
            })
        }
        tag::DATE_TIME => {
            let [s, n, off] = ints("DateTime", &fields)?;
            Value::DateTime(DateTime {
                secs: in_range("seconds", s, -MAX_SECS, MAX_SECS)?,
                nanos: sub_nanos(n)?,
                offset_secs: offset(off)?,
                zone: None,
            })
        }
        tag::DATE_TIME_ZONE_ID => zoned(fields)?,
        tag::DURATION => {
            let [months, days, secs, n] = ints("Duration", &fields)?;
            Value::Duration(Duration {
                months,
                days,
                secs,
                nanos: in_range("nanoseconds", n, -999_999_999, 999_999_999)? as i32,
            })
        }
        tag::POINT_2D | tag::POINT_3D => {
            return bad("spatial points are not supported by Plexus yet")
        }
        tag::NODE | tag::RELATIONSHIP | tag::UNBOUND_RELATIONSHIP | tag::PATH => {
            return bad("nodes, relationships and paths cannot be parameters")
        }
        other => return bad(format!("unknown structure 0x{other:02X} in a parameter")),
    })
}

/// A DateTime with a zone name: the offset is the zone's at that instant.
fn zoned(mut fields: Vec<Pack>) -> Result<Value, ParamError> {
    let Some(Pack::String(zone)) = fields.pop() else {
        return bad("a DateTimeZoneId structure needs its zone name last");
    };
    let [s, n] = ints("DateTimeZoneId", &fields)?;
    let secs = in_range("seconds", s, -MAX_SECS, MAX_SECS)?;
    let tz = jiff::tz::TimeZone::get(&zone)
        .map_err(|_| ParamError(format!("unknown time zone '{zone}'")))?;
    let instant = jiff::Timestamp::from_second(secs)
        .map_err(|_| ParamError(format!("the instant {secs} is out of range for time zones")))?;
    Ok(Value::DateTime(DateTime {
        secs,
        nanos: sub_nanos(n)?,
        offset_secs: tz.to_offset(instant).seconds(),
        zone: Some(zone),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packstream;

    fn round(v: Value) {
        let mut e = Encoder::default();
        encode(&mut e, &v);
        let p = packstream::decode(&e.out).unwrap();
        assert_eq!(decode(p), Ok(v));
    }

    #[test]
    fn scalars_and_temporals_round_trip() {
        round(Value::Int(-5));
        round(Value::String("ü".into()));
        round(Value::List(vec![
            Value::Null,
            Value::Float(1.5),
            Value::Bool(false),
        ]));
        round(Value::Date(Date { days: -719_162 }));
        // Beyond an i32 of days: Bolt's integers carry it.
        round(Value::Date(Date::from_ymd(999_999_999, 12, 31).unwrap()));
        round(Value::LocalTime(LocalTime {
            nanos: 3_600_000_000_001,
        }));
        round(Value::Time(Time {
            nanos: 5,
            offset_secs: -3600,
        }));
        round(Value::LocalDateTime(LocalDateTime {
            secs: 1_700_000_000,
            nanos: 9,
        }));
        round(Value::DateTime(DateTime {
            secs: 1_700_000_000,
            nanos: 1,
            offset_secs: 7200,
            zone: None,
        }));
        // Berlin is at +01:00 in November 2023.
        round(Value::DateTime(DateTime {
            secs: 1_700_000_000,
            nanos: 0,
            offset_secs: 3600,
            zone: Some("Europe/Berlin".into()),
        }));
        round(Value::Duration(Duration {
            months: 14,
            days: -3,
            secs: 59,
            nanos: -1,
        }));
    }

    #[test]
    fn bad_parameters_say_what_is_wrong() {
        let err = |p: Pack| decode(p).unwrap_err().0;
        assert!(err(Pack::Struct(b'D', vec![Pack::Int(1 << 40)])).contains("out of range"));
        assert!(err(Pack::Struct(b't', vec![Pack::Int(-1)])).contains("time of day"));
        assert!(err(Pack::Struct(b'T', vec![Pack::Int(0), Pack::Int(1 << 20)])).contains("offset"));
        assert!(err(Pack::Struct(b'D', vec![])).contains("1 fields"));
        assert!(err(Pack::Struct(b'X', vec![])).contains("spatial"));
        assert!(err(Pack::Struct(b'N', vec![])).contains("cannot be parameters"));
        let zoned = Pack::Struct(
            b'i',
            vec![Pack::Int(0), Pack::Int(0), Pack::string("Mars/Olympus")],
        );
        assert!(err(zoned).contains("unknown time zone"));
    }

    #[test]
    fn a_path_lists_distinct_entities_and_walks_them_by_index() {
        let node = |id: u64| plexus::NodeValue {
            id,
            key: format!("n{id}"),
            ..Default::default()
        };
        let rel = |id: u64, start: u64, end: u64| plexus::RelValue {
            id,
            start,
            end,
            rel_type: "T".into(),
            ..Default::default()
        };
        // a -> b <- a: the second step walks relationship 2 backwards, back to a.
        let path = plexus::PathValue {
            nodes: vec![node(1), node(2), node(1)],
            rels: vec![rel(10, 1, 2), rel(11, 1, 2)],
        };
        let mut e = Encoder::default();
        encode(&mut e, &Value::Path(std::sync::Arc::new(path)));
        let Pack::Struct(b'P', fields) = packstream::decode(&e.out).unwrap() else {
            panic!("not a path")
        };
        let lens: Vec<usize> = fields[..2]
            .iter()
            .map(|f| match f {
                Pack::List(l) => l.len(),
                _ => 0,
            })
            .collect();
        assert_eq!(lens, [2, 2]);
        assert_eq!(
            fields[2],
            Pack::List(vec![
                Pack::Int(1),
                Pack::Int(1),
                Pack::Int(-2),
                Pack::Int(0)
            ])
        );
    }
}

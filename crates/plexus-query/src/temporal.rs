//! Cypher's temporal functions: constructing dates, times and date-times
//! from maps of components (selecting and overriding the parts of other
//! temporal values), time zones by offset or by name (the IANA database,
//! bundled), durations from maps and ISO strings, component accessors,
//! arithmetic, `duration.between` and friends, and truncation.

use crate::error::QueryError;
use plexus_common::{Date, DateTime, Duration, LocalDateTime, LocalTime, Time, Value};
use plexus_cypher::BinOp;
use std::collections::BTreeMap;

type R = Result<Value, QueryError>;

const NANOS: i64 = 1_000_000_000;
const DAY_SECS: i64 = 86_400;
const DAY_NANOS: i128 = DAY_SECS as i128 * NANOS as i128;
/// The average Gregorian month (365.2425 / 12 days), for fractional months.
const MONTH_SECS: i64 = 2_629_746;

fn bad(message: impl Into<String>) -> QueryError {
    QueryError::Argument {
        code: "InvalidArgumentValue",
        message: message.into(),
    }
}

/// A time zone: a fixed offset, or a named zone whose offset depends on
/// the instant.
#[derive(Debug, Clone, PartialEq)]
enum Zone {
    Offset(i32),
    Named(String, jiff::tz::TimeZone),
}

fn parse_offset(s: &str) -> Option<i32> {
    if s == "Z" || s == "z" {
        return Some(0);
    }
    let sign = match s.as_bytes().first()? {
        b'+' => 1,
        b'-' => -1,
        _ => return None,
    };
    let body = &s[1..];
    let digits: String = body.chars().filter(|c| *c != ':').collect();
    if !digits.chars().all(|c| c.is_ascii_digit()) {
        return None;
    }
    let (h, m, sec) = match digits.len() {
        2 => (&digits[..2], "0", "0"),
        4 => (&digits[..2], &digits[2..4], "0"),
        6 => (&digits[..2], &digits[2..4], &digits[4..6]),
        _ => return None,
    };
    let (h, m, sec): (i32, i32, i32) = (h.parse().ok()?, m.parse().ok()?, sec.parse().ok()?);
    (h <= 18 && m < 60 && sec < 60).then_some(sign * (h * 3600 + m * 60 + sec))
}

fn parse_zone(s: &str) -> Result<Zone, QueryError> {
    if let Some(o) = parse_offset(s) {
        return Ok(Zone::Offset(o));
    }
    jiff::tz::TimeZone::get(s)
        .map(|tz| Zone::Named(s.to_string(), tz))
        .map_err(|_| bad(format!("unknown time zone '{s}'")))
}

impl Zone {
    /// The offset of this zone at a local date-time (seconds since the
    /// epoch, read as wall-clock time); in a gap or an overlap the earlier
    /// offset is taken, as Java does.
    fn offset_at_local(&self, local_secs: i64) -> Result<i32, QueryError> {
        match self {
            Zone::Offset(o) => Ok(*o),
            Zone::Named(name, tz) => {
                let ts = jiff::Timestamp::from_second(local_secs)
                    .map_err(|_| bad("date-time out of range"))?;
                let civil = jiff::tz::Offset::UTC.to_datetime(ts);
                tz.to_ambiguous_zoned_datetime(civil)
                    .compatible()
                    .map(|z| z.offset().seconds())
                    .map_err(|e| bad(format!("{name}: {e}")))
            }
        }
    }

    fn offset_at_instant(&self, utc_secs: i64) -> Result<i32, QueryError> {
        match self {
            Zone::Offset(o) => Ok(*o),
            Zone::Named(_, tz) => jiff::Timestamp::from_second(utc_secs)
                .map(|ts| tz.to_offset(ts).seconds())
                .map_err(|_| bad("date-time out of range")),
        }
    }

    fn name(&self) -> Option<String> {
        match self {
            Zone::Offset(_) => None,
            Zone::Named(n, _) => Some(n.clone()),
        }
    }
}

/// A temporal value broken into its parts: the local date, the local time
/// of day in nanoseconds, and the zone (offset, and name if any).
#[derive(Debug, Clone, Default)]
struct Parts {
    date: Option<Date>,
    nanos: Option<u64>,
    offset: Option<i32>,
    zone: Option<String>,
}

fn split_local(secs: i64, nanos: u32) -> (Date, u64) {
    let days = secs.div_euclid(DAY_SECS);
    let rem = secs.rem_euclid(DAY_SECS);
    (Date { days }, rem as u64 * NANOS as u64 + nanos as u64)
}

fn parts(v: &Value) -> Option<Parts> {
    Some(match v {
        Value::Date(d) => Parts {
            date: Some(*d),
            ..Parts::default()
        },
        Value::LocalTime(t) => Parts {
            nanos: Some(t.nanos),
            ..Parts::default()
        },
        Value::Time(t) => Parts {
            nanos: Some(t.nanos),
            offset: Some(t.offset_secs),
            ..Parts::default()
        },
        Value::LocalDateTime(t) => {
            let (d, n) = split_local(t.secs, t.nanos);
            Parts {
                date: Some(d),
                nanos: Some(n),
                ..Parts::default()
            }
        }
        Value::DateTime(t) => {
            let (d, n) = split_local(t.secs + t.offset_secs as i64, t.nanos);
            Parts {
                date: Some(d),
                nanos: Some(n),
                offset: Some(t.offset_secs),
                zone: t.zone.clone(),
            }
        }
        _ => return None,
    })
}

impl Parts {
    /// The wall-clock seconds and nanoseconds of these parts (a time alone
    /// counts from 1970-01-01).
    fn local(&self) -> (i64, u32) {
        local_secs(
            self.date.unwrap_or(Date { days: 0 }),
            self.nanos.unwrap_or(0),
        )
    }
}

fn local_secs(date: Date, nanos: u64) -> (i64, u32) {
    (
        date.days * DAY_SECS + (nanos / NANOS as u64) as i64,
        (nanos % NANOS as u64) as u32,
    )
}

/// Builds a value of `kind` from parts; a date-time without a zone is UTC.
fn build(kind: &str, p: &Parts) -> R {
    let date = || p.date.ok_or_else(|| bad(format!("{kind}() needs a date")));
    let nanos = p.nanos.unwrap_or(0);
    Ok(match kind {
        "date" => Value::Date(date()?),
        "localtime" => Value::LocalTime(LocalTime { nanos }),
        "time" => Value::Time(Time {
            nanos,
            offset_secs: p.offset.unwrap_or(0),
        }),
        "localdatetime" => {
            let (secs, n) = local_secs(date()?, nanos);
            Value::LocalDateTime(LocalDateTime { secs, nanos: n })
        }
        _ => {
            let (secs, n) = local_secs(date()?, nanos);
            let offset = p.offset.unwrap_or(0);
            Value::DateTime(DateTime {
                secs: secs - offset as i64,
                nanos: n,
                offset_secs: offset,
                zone: p.zone.clone(),
            })
        }
    })
}

/// Map keys are matched without regard to case.
struct Fields<'a>(BTreeMap<String, &'a Value>);

impl<'a> Fields<'a> {
    fn new(m: &'a BTreeMap<String, Value>) -> Fields<'a> {
        Fields(m.iter().map(|(k, v)| (k.to_ascii_lowercase(), v)).collect())
    }

    fn get(&self, k: &str) -> Option<&'a Value> {
        self.0.get(k).copied().filter(|v| !v.is_null())
    }

    fn int(&self, k: &str) -> Result<Option<i64>, QueryError> {
        match self.get(k) {
            None => Ok(None),
            Some(Value::Int(i)) => Ok(Some(*i)),
            Some(other) => Err(QueryError::type_error(format!(
                "the temporal component `{k}` must be an integer, not {}",
                other.value_type()
            ))),
        }
    }

    fn has(&self, k: &str) -> bool {
        self.get(k).is_some()
    }
}

fn small(v: i64, what: &str) -> Result<u32, QueryError> {
    u32::try_from(v).map_err(|_| bad(format!("{what} {v} is out of range")))
}

fn year(v: i64) -> Result<i32, QueryError> {
    Date::YEARS
        .contains(&v)
        .then(|| i32::try_from(v).ok())
        .flatten()
        .ok_or_else(|| bad(format!("year {v} is out of range")))
}

/// The date a map describes: calendar (year, month, day), week (year,
/// week, dayOfWeek), ordinal (year, ordinalDay) or quarter (year, quarter,
/// dayOfQuarter) fields, each defaulting to the base date's when one is
/// selected with `date:`/`datetime:`, else to the first.
fn resolve_date(f: &Fields<'_>, base: Option<Date>) -> Result<Date, QueryError> {
    let y = f.int("year")?;
    let none = || bad("a date needs a year, or a date to start from");
    let d = if f.has("week") || f.has("dayofweek") {
        let (by, bw) = base.map(Date::iso_week).unzip();
        let wy = y.map(year).transpose()?.or(by).ok_or_else(none)?;
        let w = f.int("week")?.map(|w| small(w, "week")).transpose()?;
        let dow = f
            .int("dayofweek")?
            .map(|d| small(d, "dayOfWeek"))
            .transpose()?;
        Date::from_iso_week(
            wy,
            w.or(bw).unwrap_or(1),
            dow.or_else(|| base.map(Date::weekday)).unwrap_or(1),
        )
    } else if f.has("ordinalday") {
        let y = y
            .map(year)
            .transpose()?
            .or_else(|| base.map(|b| b.ymd().0))
            .ok_or_else(none)?;
        Date::from_ordinal(y, small(f.int("ordinalday")?.unwrap_or(1), "ordinalDay")?)
    } else if f.has("quarter") || f.has("dayofquarter") {
        let y = y
            .map(year)
            .transpose()?
            .or_else(|| base.map(|b| b.ymd().0))
            .ok_or_else(none)?;
        let (bq, bd) = base.map(Date::quarter).unzip();
        let q = f.int("quarter")?.map(|q| small(q, "quarter")).transpose()?;
        let d = f
            .int("dayofquarter")?
            .map(|d| small(d, "dayOfQuarter"))
            .transpose()?;
        Date::from_quarter(y, q.or(bq).unwrap_or(1), d.or(bd).unwrap_or(1))
    } else {
        let (by, bm, bd) = match base {
            Some(b) => {
                let (y, m, d) = b.ymd();
                (Some(y), Some(m), Some(d))
            }
            None => (None, None, None),
        };
        let y = y.map(year).transpose()?.or(by).ok_or_else(none)?;
        let m = f.int("month")?.map(|m| small(m, "month")).transpose()?;
        let d = f.int("day")?.map(|d| small(d, "day")).transpose()?;
        if d.is_some() && m.is_none() && bm.is_none() {
            return Err(bad("a day needs a month"));
        }
        Date::from_ymd(y, m.or(bm).unwrap_or(1), d.or(bd).unwrap_or(1))
    };
    d.ok_or_else(|| bad("no such date"))
}

/// The time of day a map describes, each field defaulting to the base
/// time's (selected with `time:`/`datetime:`), else to zero.
fn resolve_time(f: &Fields<'_>, base: Option<u64>) -> Result<u64, QueryError> {
    let b = base.unwrap_or(0);
    let (bh, bm, bs, bsub) = (
        b / 3_600_000_000_000,
        b / 60_000_000_000 % 60,
        b / NANOS as u64 % 60,
        b % NANOS as u64,
    );
    let field = |k: &str, max: i64, dflt: u64| -> Result<u64, QueryError> {
        match f.int(k)? {
            Some(v) if (0..max).contains(&v) => Ok(v as u64),
            Some(v) => Err(bad(format!("{k} {v} is out of range"))),
            None => Ok(dflt),
        }
    };
    let h = field("hour", 24, bh)?;
    let m = field("minute", 60, bm)?;
    let s = field("second", 60, bs)?;
    let sub = if f.has("millisecond") || f.has("microsecond") || f.has("nanosecond") {
        let ms = field("millisecond", 1000, bsub / 1_000_000)?;
        let us = match f.int("microsecond")? {
            Some(v) if f.has("millisecond") && !(0..1000).contains(&v) => {
                return Err(bad(format!("microsecond {v} is out of range")))
            }
            Some(v) if (0..1_000_000).contains(&v) => v as u64,
            Some(v) => return Err(bad(format!("microsecond {v} is out of range"))),
            None => bsub / 1000 % 1000,
        };
        let ns = match f.int("nanosecond")? {
            Some(v)
                if (f.has("millisecond") || f.has("microsecond")) && !(0..1000).contains(&v) =>
            {
                return Err(bad(format!("nanosecond {v} is out of range")))
            }
            Some(v) if (0..NANOS).contains(&v) => v as u64,
            Some(v) => return Err(bad(format!("nanosecond {v} is out of range"))),
            None => bsub % 1000,
        };
        // A larger unit given alone carries the smaller ones: `microsecond:
        // 645876` is .645876, `nanosecond: 645876123` is .645876123.
        if f.has("nanosecond") && !f.has("millisecond") && !f.has("microsecond") {
            ns
        } else if f.has("microsecond") && !f.has("millisecond") {
            us * 1000 + ns
        } else {
            ms * 1_000_000 + us * 1000 + ns
        }
    } else {
        bsub
    };
    Ok(((h * 60 + m) * 60 + s) * NANOS as u64 + sub)
}

/// `date({...})`, `time({...})` and the others from a map of components.
pub fn construct(kind: &str, m: &BTreeMap<String, Value>) -> R {
    let f = Fields::new(m);
    if kind == "datetime" && (f.has("epochmillis") || f.has("epochseconds")) {
        let nanos = f.int("epochmillis")?.unwrap_or(0) as i128 * 1_000_000
            + f.int("epochseconds")?.unwrap_or(0) as i128 * NANOS as i128
            + f.int("nanosecond")?.unwrap_or(0) as i128;
        let Value::DateTime(mut t) = epoch(nanos)? else {
            return Err(bad("epoch out of range"));
        };
        if let Some(Value::String(z)) = f.get("timezone") {
            let z = parse_zone(z)?;
            t.offset_secs = z.offset_at_instant(t.secs)?;
            t.zone = z.name();
        }
        return Ok(Value::DateTime(t));
    }
    let from = |k: &str| -> Result<Option<Parts>, QueryError> {
        match f.get(k) {
            None => Ok(None),
            Some(v) => parts(v).map(Some).ok_or_else(|| {
                QueryError::type_error(format!(
                    "`{k}` must be a temporal value, not {}",
                    v.value_type()
                ))
            }),
        }
    };
    let whole = from("datetime")?;
    let date_src = from("date")?.or_else(|| whole.clone());
    let time_src = from("time")?.or_else(|| whole.clone());
    let needs_date = matches!(kind, "date" | "localdatetime" | "datetime");
    let needs_time = kind != "date";
    let mut p = Parts::default();
    if needs_date {
        p.date = Some(resolve_date(&f, date_src.as_ref().and_then(|s| s.date))?);
    }
    if needs_time {
        p.nanos = Some(resolve_time(&f, time_src.as_ref().and_then(|s| s.nanos))?);
    }
    if matches!(kind, "time" | "datetime") {
        // The selected value's offset and zone. A named zone's offset
        // follows the (possibly changed) date: its wall clock is read there.
        let base_zone = match time_src
            .as_ref()
            .and_then(|s| Some((s.offset?, s.zone.clone())))
        {
            Some((old, name)) => {
                let off = match name.as_deref().map(parse_zone).transpose()? {
                    Some(src) if p.date.is_some() => src.offset_at_local(p.local().0)?,
                    _ => old,
                };
                Some((off, name))
            }
            None => None,
        };
        let zone = match f.get("timezone") {
            Some(Value::String(z)) => Some(parse_zone(z)?),
            Some(other) => {
                return Err(QueryError::type_error(format!(
                    "timezone must be a string, not {}",
                    other.value_type()
                )))
            }
            None => None,
        };
        match (zone, base_zone) {
            // A selected value that had a zone moves to the new zone: the
            // same instant, another wall clock.
            (Some(z), Some((old, _))) => {
                let (secs, n) = p.local();
                let instant = secs - old as i64;
                let off = z.offset_at_instant(instant)?;
                let (d, t) = split_local(instant + off as i64, n);
                if p.date.is_some() {
                    p.date = Some(d);
                }
                p.nanos = Some(t);
                p.offset = Some(off);
                p.zone = z.name();
            }
            (Some(z), None) => {
                let (secs, _) = p.local();
                p.offset = Some(if p.date.is_some() {
                    z.offset_at_local(secs)?
                } else {
                    match &z {
                        Zone::Offset(o) => *o,
                        Zone::Named(..) => z.offset_at_local(secs)?,
                    }
                });
                p.zone = z.name();
            }
            (None, Some((old, name))) => {
                p.offset = Some(old);
                p.zone = name;
            }
            (None, None) => p.offset = Some(0),
        }
    }
    build(kind, &p)
}

/// `date('2015-W30-2')` and the other string forms the plain parsers in
/// `plexus-common` do not read: week dates, ordinal dates, basic (compact)
/// forms, named zones in brackets.
pub fn parse(kind: &str, s: &str) -> Option<Value> {
    let s = s.trim();
    // Every ISO form (and every zone name) is ASCII; refusing anything else
    // here lets the parsers below slice by byte safely.
    if !s.is_ascii() {
        return None;
    }
    let (dt_part, zone) = match s.find('[') {
        Some(i) if s.ends_with(']') => (&s[..i], Some(&s[i + 1..s.len() - 1])),
        _ => (s, None),
    };
    let (date_str, time_str) = match kind {
        "date" => (Some(dt_part), None),
        "localtime" | "time" => (None, Some(dt_part.trim_start_matches('T'))),
        _ => match dt_part.split_once('T') {
            Some((d, t)) => (Some(d), Some(t)),
            None => (Some(dt_part), None),
        },
    };
    let mut p = Parts::default();
    if let Some(d) = date_str {
        p.date = Some(parse_date(d)?);
    }
    let mut zone_found = None;
    if let Some(t) = time_str {
        let (clock, off) = split_zone(t);
        p.nanos = Some(parse_clock(clock)?);
        zone_found = off;
    } else if kind != "date" {
        p.nanos = Some(0);
    }
    if matches!(kind, "time" | "datetime") {
        match (zone, zone_found) {
            (Some(name), off) => {
                let z = parse_zone(name).ok()?;
                let (secs, _) = local_secs(p.date.unwrap_or(Date { days: 0 }), p.nanos?);
                p.offset = Some(match off {
                    Some(o) => o,
                    None => z.offset_at_local(secs).ok()?,
                });
                p.zone = z.name();
            }
            (None, Some(o)) => p.offset = Some(o),
            (None, None) => p.offset = Some(0),
        }
    } else if zone.is_some() {
        return None;
    }
    build(kind, &p).ok()
}

/// Splits a trailing `Z`, `±HH[:MM]` from a time of day.
fn split_zone(t: &str) -> (&str, Option<i32>) {
    if let Some(c) = t.strip_suffix('Z') {
        return (c, Some(0));
    }
    if let Some(i) = t.rfind(['+', '-']) {
        if let Some(o) = parse_offset(&t[i..]) {
            return (&t[..i], Some(o));
        }
    }
    (t, None)
}

fn num(s: &str) -> Option<u32> {
    (!s.is_empty() && s.chars().all(|c| c.is_ascii_digit()))
        .then(|| s.parse().ok())
        .flatten()
}

/// `YYYY-MM-DD`, `YYYYMMDD`, `YYYY-MM`, `YYYYMM`? (no: ambiguous), `YYYY`,
/// `YYYY-Www-D`, `YYYYWwwD`, `YYYY-Www`, `YYYY-DDD`, `YYYYDDD`.
fn parse_date(s: &str) -> Option<Date> {
    let (sign, body) = match s.strip_prefix('-') {
        Some(b) => (-1, b),
        None => (1, s.strip_prefix('+').unwrap_or(s)),
    };
    // Four year digits; a signed year may have more (ISO 8601's expanded
    // years, as Plexus writes years beyond 9999: `+10000-01-01`), then a '-'.
    let digits = body.bytes().take_while(u8::is_ascii_digit).count();
    let signed = body.len() < s.len();
    let ylen = if signed && digits > 4 && body.as_bytes().get(digits) == Some(&b'-') {
        digits.min(10)
    } else {
        4
    };
    if digits < 4 {
        return None;
    }
    // The first `ylen` bytes are ASCII digits, so slicing there is safe.
    let y = sign * i32::try_from(num(&body[..ylen])?).ok()?;
    let rest = &body[ylen..];
    let rest_plain = rest.strip_prefix('-').unwrap_or(rest);
    let dashed = rest.starts_with('-');
    if let Some(w) = rest_plain.strip_prefix('W') {
        let (week, dow) = if dashed {
            match w.split_once('-') {
                Some((a, b)) => (num(a)?, num(b)?),
                None => (num(w)?, 1),
            }
        } else {
            match w.len() {
                2 => (num(w)?, 1),
                3 => (num(w.get(..2)?)?, num(w.get(2..)?)?),
                _ => return None,
            }
        };
        return Date::from_iso_week(y, week, dow);
    }
    match (dashed, rest_plain.len()) {
        (_, 0) if rest.is_empty() => Date::from_ymd(y, 1, 1),
        (_, 2) => Date::from_ymd(y, num(rest_plain)?, 1),
        (_, 3) => Date::from_ordinal(y, num(rest_plain)?),
        (true, 5) => {
            let (m, d) = rest_plain.split_once('-')?;
            Date::from_ymd(y, num(m)?, num(d)?)
        }
        (false, 4) => Date::from_ymd(y, num(rest_plain.get(..2)?)?, num(rest_plain.get(2..)?)?),
        _ => None,
    }
}

/// `HH[:MM[:SS[.f]]]` or `HH[MM[SS[.f]]]`.
fn parse_clock(s: &str) -> Option<u64> {
    let (main, frac) = match s.split_once(['.', ',']) {
        Some((a, b)) => (a, Some(b)),
        None => (s, None),
    };
    let pieces: Vec<&str> = if main.contains(':') {
        main.split(':').collect()
    } else {
        (0..main.len().div_ceil(2))
            .map(|i| &main[i * 2..(i * 2 + 2).min(main.len())])
            .collect()
    };
    if pieces.is_empty() || pieces.len() > 3 || pieces.iter().any(|p| p.len() != 2) {
        return None;
    }
    let h = num(pieces[0])?;
    let m = pieces.get(1).map(|x| num(x)).unwrap_or(Some(0))?;
    let sec = pieces.get(2).map(|x| num(x)).unwrap_or(Some(0))?;
    if h > 23 || m > 59 || sec > 59 || (frac.is_some() && pieces.len() < 3) {
        return None;
    }
    let sub = match frac {
        Some(f) if !f.is_empty() && f.len() <= 9 => num(f)? as u64 * 10u64.pow(9 - f.len() as u32),
        Some(_) => return None,
        None => 0,
    };
    Some(((h as u64 * 60 + m as u64) * 60 + sec as u64) * NANOS as u64 + sub)
}

// ---- durations ----

fn dur_from_nanos(months: i128, days: i128, nanos: i128) -> Result<Duration, QueryError> {
    let secs = nanos.div_euclid(NANOS as i128);
    let out_of_range = |_| QueryError::Arithmetic("the duration is out of range".into());
    Ok(Duration {
        months: i64::try_from(months).map_err(out_of_range)?,
        days: i64::try_from(days).map_err(out_of_range)?,
        secs: i64::try_from(secs).map_err(|_| bad("duration out of range"))?,
        nanos: nanos.rem_euclid(NANOS as i128) as i32,
    })
}

fn dur_nanos(d: &Duration) -> i128 {
    d.secs as i128 * NANOS as i128 + d.nanos as i128
}

/// A duration from months, days and nanoseconds given as (possibly
/// fractional) amounts: a fraction of a month becomes days and seconds by
/// the average month, a fraction of a day becomes seconds.
fn duration_of(
    months: f64,
    whole_months: i128,
    days: f64,
    whole_days: i128,
    nanos: i128,
) -> Result<Duration, QueryError> {
    // i128 holds any sum of i64 components times their units; the result
    // is checked when it becomes a Duration (float casts saturate).
    let mut nanos = nanos;
    let mut days_i = whole_days;
    let frac_m = months - months.trunc();
    let months_i = whole_months.saturating_add(months.trunc() as i128);
    if frac_m != 0.0 {
        let n = (frac_m * MONTH_SECS as f64 * NANOS as f64).round() as i128;
        days_i = days_i.saturating_add(n / DAY_NANOS);
        nanos = nanos.saturating_add(n % DAY_NANOS);
    }
    days_i = days_i.saturating_add(days.trunc() as i128);
    let frac_d = days - days.trunc();
    if frac_d != 0.0 {
        nanos = nanos.saturating_add((frac_d * DAY_NANOS as f64).round() as i128);
    }
    dur_from_nanos(months_i, days_i, nanos)
}

fn duration_from_map(m: &BTreeMap<String, Value>) -> Result<Duration, QueryError> {
    let f = Fields::new(m);
    let (mut months_f, mut months_i, mut days_f, mut days_i, mut nanos) =
        (0.0, 0i128, 0.0, 0i128, 0i128);
    for (k, v) in &f.0 {
        let (int, float) = match v {
            Value::Int(i) => (Some(*i), *i as f64),
            Value::Float(x) => (None, *x),
            Value::Null => continue,
            other => {
                return Err(QueryError::type_error(format!(
                    "duration component `{k}` must be a number, not {}",
                    other.value_type()
                )))
            }
        };
        let unit_nanos: i128 = match k.as_str() {
            "years" | "quarters" | "months" => {
                let per = match k.as_str() {
                    "years" => 12,
                    "quarters" => 3,
                    _ => 1,
                };
                match int {
                    Some(i) => months_i += i128::from(i) * per,
                    None => months_f += float * per as f64,
                }
                continue;
            }
            "weeks" | "days" => {
                let per = if k == "weeks" { 7 } else { 1 };
                match int {
                    Some(i) => days_i += i128::from(i) * per,
                    None => days_f += float * per as f64,
                }
                continue;
            }
            "hours" => 3_600_000_000_000,
            "minutes" => 60_000_000_000,
            "seconds" => NANOS as i128,
            "milliseconds" => 1_000_000,
            "microseconds" => 1000,
            "nanoseconds" => 1,
            other => return Err(bad(format!("unknown duration component `{other}`"))),
        };
        nanos = nanos.saturating_add(match int {
            Some(i) => i128::from(i) * unit_nanos,
            None => (float * unit_nanos as f64).round() as i128,
        });
    }
    duration_of(months_f, months_i, days_f, days_i, nanos)
}

/// `P[nY][nM][nW][nD][T[nH][nM][nS]]` with optional fractions and signs,
/// or the alternative `PYYYY-MM-DDTHH:MM:SS`.
fn parse_duration(s: &str) -> Option<Duration> {
    if !s.is_ascii() {
        return None;
    }
    let (neg, body) = match s.strip_prefix('-') {
        Some(b) => (true, b),
        None => (false, s),
    };
    let body = body.strip_prefix('P')?;
    // The alternative form `PYYYY-MM-DDThh:mm:ss` (four digits, then '-'),
    // not a designator form with a negative part (`PT-1M-0.001S`).
    let year_digits = body
        .as_bytes()
        .get(..4)
        .is_some_and(|b| b.iter().all(u8::is_ascii_digit));
    if body.len() >= 10 && year_digits && body.as_bytes().get(4) == Some(&b'-') {
        let (d, t) = body.split_once('T').unwrap_or((body, "00:00:00"));
        let mut dp = d.split('-');
        let (y, mo, da) = (num(dp.next()?)?, num(dp.next()?)?, num(dp.next()?)?);
        let clock = parse_clock(t)? as i128;
        let d = dur_from_nanos(i128::from(y) * 12 + i128::from(mo), i128::from(da), clock).ok()?;
        return Some(if neg { negate(d) } else { d });
    }
    let (date_part, time_part) = match body.split_once('T') {
        Some((a, b)) => (a, Some(b)),
        None => (body, None),
    };
    let mut m = BTreeMap::new();
    let mut read = |part: &str, units: &[(char, &str)]| -> Option<()> {
        let mut cur = String::new();
        for c in part.chars() {
            if c.is_ascii_digit() || c == '.' || c == '-' || c == ',' {
                cur.push(if c == ',' { '.' } else { c });
                continue;
            }
            let (_, name) = units.iter().find(|(u, _)| *u == c)?;
            let v = if cur.contains('.') {
                Value::Float(cur.parse().ok()?)
            } else {
                Value::Int(cur.parse().ok()?)
            };
            m.insert(name.to_string(), v);
            cur.clear();
        }
        cur.is_empty().then_some(())
    };
    read(
        date_part,
        &[
            ('Y', "years"),
            ('M', "months"),
            ('W', "weeks"),
            ('D', "days"),
        ],
    )?;
    if let Some(t) = time_part {
        if t.is_empty() {
            return None;
        }
        read(t, &[('H', "hours"), ('M', "minutes"), ('S', "seconds")])?;
    }
    if m.is_empty() {
        return None;
    }
    let d = duration_from_map(&m).ok()?;
    Some(if neg { negate(d) } else { d })
}

fn negate(d: Duration) -> Duration {
    let n = -dur_nanos(&d);
    Duration {
        months: -d.months,
        days: -d.days,
        secs: n.div_euclid(NANOS as i128) as i64,
        nanos: n.rem_euclid(NANOS as i128) as i32,
    }
}

/// `duration(...)` from a map, an ISO string or a duration.
pub fn duration(v: Value) -> R {
    Ok(match v {
        Value::Null => Value::Null,
        Value::Duration(d) => Value::Duration(d),
        Value::Map(m) => Value::Duration(duration_from_map(&m)?),
        Value::String(s) => Value::Duration(
            parse_duration(&s).ok_or_else(|| bad(format!("cannot read '{s}' as a duration")))?,
        ),
        other => {
            return Err(QueryError::type_error(format!(
                "duration() takes a map or a string, not {}",
                other.value_type()
            )))
        }
    })
}

// ---- accessors ----

/// `t.year`, `d.hours` and the other components; `None` when `v` is not
/// temporal.
pub fn component(v: &Value, key: &str) -> Option<R> {
    if let Value::Duration(d) = v {
        return Some(duration_component(d, key));
    }
    let p = parts(v)?;
    let k = key.to_ascii_lowercase();
    let date = p.date;
    let nanos = p.nanos;
    let int = |x: i64| Ok(Value::Int(x));
    Some(match (k.as_str(), date, nanos) {
        ("year", Some(d), _) => int(d.ymd().0 as i64),
        ("month", Some(d), _) => int(d.ymd().1 as i64),
        ("day", Some(d), _) => int(d.ymd().2 as i64),
        ("quarter", Some(d), _) => int(d.quarter().0 as i64),
        ("dayofquarter", Some(d), _) => int(d.quarter().1 as i64),
        ("week", Some(d), _) => int(d.iso_week().1 as i64),
        ("weekyear", Some(d), _) => int(d.iso_week().0 as i64),
        ("ordinalday", Some(d), _) => int(d.ordinal() as i64),
        ("weekday" | "dayofweek", Some(d), _) => int(d.weekday() as i64),
        ("hour", _, Some(n)) => int((n / 3_600_000_000_000) as i64),
        ("minute", _, Some(n)) => int((n / 60_000_000_000 % 60) as i64),
        ("second", _, Some(n)) => int((n / NANOS as u64 % 60) as i64),
        ("millisecond", _, Some(n)) => int((n % NANOS as u64 / 1_000_000) as i64),
        ("microsecond", _, Some(n)) => int((n % NANOS as u64 / 1000) as i64),
        ("nanosecond", _, Some(n)) => int((n % NANOS as u64) as i64),
        ("timezone", _, _) if p.offset.is_some() => Ok(Value::String(
            p.zone
                .clone()
                .unwrap_or_else(|| offset_text(p.offset.unwrap_or(0))),
        )),
        ("offset", _, _) if p.offset.is_some() => {
            Ok(Value::String(offset_text(p.offset.unwrap_or(0))))
        }
        ("offsetminutes", _, _) if p.offset.is_some() => int(p.offset.unwrap_or(0) as i64 / 60),
        ("offsetseconds", _, _) if p.offset.is_some() => int(p.offset.unwrap_or(0) as i64),
        ("epochseconds", _, _) | ("epochmillis", _, _) => match v {
            Value::DateTime(t) => int(if k == "epochseconds" {
                t.secs
            } else {
                t.secs * 1000 + t.nanos as i64 / 1_000_000
            }),
            _ => return None,
        },
        _ => return None,
    })
}

fn offset_text(o: i32) -> String {
    if o == 0 {
        return "Z".into();
    }
    let sign = if o < 0 { '-' } else { '+' };
    let a = o.unsigned_abs();
    if !a.is_multiple_of(60) {
        format!("{sign}{:02}:{:02}:{:02}", a / 3600, a / 60 % 60, a % 60)
    } else {
        format!("{sign}{:02}:{:02}", a / 3600, a / 60 % 60)
    }
}

fn duration_component(d: &Duration, key: &str) -> R {
    let n = dur_nanos(d);
    // As Java's: whole seconds rounded down and a fraction of a second in
    // [0, 1 s) (`PT-0.1S` is -1 s and 900,000,000 ns).
    let (whole_secs, sub) = (d.secs as i128, d.nanos as i128);
    let v: i128 = match key.to_ascii_lowercase().as_str() {
        "years" => (d.months / 12) as i128,
        "quarters" => (d.months / 3) as i128,
        "months" => d.months as i128,
        "weeks" => (d.days / 7) as i128,
        "days" => d.days as i128,
        "hours" => whole_secs / 3600,
        "minutes" => whole_secs / 60,
        "seconds" => whole_secs,
        "milliseconds" => n / 1_000_000,
        "microseconds" => n / 1000,
        "nanoseconds" => n,
        "quartersofyear" => (d.months / 3 % 4) as i128,
        "monthsofquarter" => (d.months % 3) as i128,
        "monthsofyear" => (d.months % 12) as i128,
        "daysofweek" => (d.days % 7) as i128,
        "minutesofhour" => whole_secs / 60 % 60,
        "secondsofminute" => whole_secs % 60,
        "millisecondsofsecond" => sub / 1_000_000,
        "microsecondsofsecond" => sub / 1000,
        "nanosecondsofsecond" => sub,
        other => {
            return Err(QueryError::Semantic {
                code: "InvalidPropertyAccess",
                message: format!("a duration has no component `{other}`"),
            })
        }
    };
    Ok(Value::Int(v as i64))
}

// ---- arithmetic ----

fn add_months(d: Date, months: i64) -> Option<Date> {
    let (y, m, day) = d.ymd();
    let total = (y as i64 * 12 + (m as i64 - 1)).checked_add(months)?;
    let (ny, nm) = (total.div_euclid(12), total.rem_euclid(12) as u32 + 1);
    let ny = i32::try_from(ny).ok()?;
    let mut dd = day;
    while dd > 28 && Date::from_ymd(ny, nm, dd).is_none() {
        dd -= 1;
    }
    Date::from_ymd(ny, nm, dd)
}

fn shift(v: &Value, d: &Duration, sign: i64) -> Option<Value> {
    let months = d.months.checked_mul(sign)?;
    let days = d.days.checked_mul(sign)?;
    let nanos = dur_nanos(d) * sign as i128;
    let shift_dt = |date: Date, time: u64| -> Option<(Date, u64)> {
        let date = add_months(date, months)?;
        let total = (date.days as i128 + days as i128) * DAY_NANOS + time as i128 + nanos;
        let day = total.div_euclid(DAY_NANOS);
        Some((
            Date::from_days(i64::try_from(day).ok()?)?,
            total.rem_euclid(DAY_NANOS) as u64,
        ))
    };
    let shift_time = |t: u64| ((t as i128 + nanos).rem_euclid(DAY_NANOS)) as u64;
    Some(match v {
        Value::Date(date) => {
            // A date moves by whole days: the time part counts only in days.
            let date = add_months(*date, months)?;
            let extra = (nanos / DAY_NANOS) as i64;
            Value::Date(Date::from_days(
                date.days.checked_add(days)?.checked_add(extra)?,
            )?)
        }
        Value::LocalTime(t) => Value::LocalTime(LocalTime {
            nanos: shift_time(t.nanos),
        }),
        Value::Time(t) => Value::Time(Time {
            nanos: shift_time(t.nanos),
            ..*t
        }),
        Value::LocalDateTime(_) | Value::DateTime(_) => {
            let p = parts(v)?;
            let (date, time) = shift_dt(p.date?, p.nanos?)?;
            let mut q = Parts {
                date: Some(date),
                nanos: Some(time),
                ..p
            };
            if let Some(z) = q.zone.as_deref().and_then(|z| parse_zone(z).ok()) {
                let (secs, _) = local_secs(date, time);
                q.offset = z.offset_at_local(secs).ok();
            }
            let kind = if matches!(v, Value::DateTime(_)) {
                "datetime"
            } else {
                "localdatetime"
            };
            build(kind, &q).ok()?
        }
        _ => return None,
    })
}

/// `+`, `-`, `*` and `/` with temporal operands; `None` when neither
/// operand is temporal.
pub fn arith(op: BinOp, a: &Value, b: &Value) -> Option<R> {
    let overflow = || QueryError::Arithmetic("temporal arithmetic out of range".into());
    Some(match (op, a, b) {
        (BinOp::Add, Value::Duration(d), t) | (BinOp::Add, t, Value::Duration(d))
            if parts(t).is_some() =>
        {
            shift(t, d, 1).ok_or_else(overflow)
        }
        (BinOp::Sub, t, Value::Duration(d)) if parts(t).is_some() => {
            shift(t, d, -1).ok_or_else(overflow)
        }
        (BinOp::Add | BinOp::Sub, Value::Duration(x), Value::Duration(y)) => {
            let s: i128 = if op == BinOp::Add { 1 } else { -1 };
            dur_from_nanos(
                i128::from(x.months) + s * i128::from(y.months),
                i128::from(x.days) + s * i128::from(y.days),
                dur_nanos(x) + s * dur_nanos(y),
            )
            .map(Value::Duration)
        }
        (BinOp::Mul, Value::Duration(d), n) | (BinOp::Mul, n, Value::Duration(d)) => {
            scale(d, n, false)?
        }
        (BinOp::Div, Value::Duration(d), n) => scale(d, n, true)?,
        _ => return None,
    })
}

fn scale(d: &Duration, n: &Value, divide: bool) -> Option<R> {
    let f = match n {
        Value::Int(i) => *i as f64,
        Value::Float(x) => *x,
        _ => return None,
    };
    let f = if divide { 1.0 / f } else { f };
    let months = d.months as f64 * f;
    let days = d.days as f64 * f;
    let nanos = (dur_nanos(d) as f64 * f).trunc() as i128;
    Some(duration_of(months, 0, days, 0, nanos).map(Value::Duration))
}

/// Comparison of times with offsets and date-times: by instant.
pub fn compare(a: &Value, b: &Value) -> Option<std::cmp::Ordering> {
    match (a, b) {
        (Value::Time(x), Value::Time(y)) => {
            let k = |t: &Time| t.nanos as i64 - t.offset_secs as i64 * NANOS;
            Some(k(x).cmp(&k(y)))
        }
        (Value::DateTime(x), Value::DateTime(y)) => Some((x.secs, x.nanos).cmp(&(y.secs, y.nanos))),
        _ => None,
    }
}

// ---- functions ----

/// The namespaced temporal functions (`date.truncate`, `duration.between`,
/// `datetime.fromepoch`, …); `None` when `name` is not one of them.
pub fn call(name: &str, args: &[Value]) -> Option<R> {
    let (ns, f) = name.split_once('.')?;
    Some(match (ns, f) {
        ("duration", "between" | "inmonths" | "indays" | "inseconds") => match args {
            [a, b] if a.is_null() || b.is_null() => Ok(Value::Null),
            [a, b] => between(f, a, b),
            _ => return None,
        },
        ("date" | "time" | "localtime" | "datetime" | "localdatetime", "truncate") => match args {
            [unit, v] | [unit, v, _] if v.is_null() || unit.is_null() => Ok(Value::Null),
            [Value::String(unit), v] => truncate(ns, unit, v, None),
            [Value::String(unit), v, Value::Map(m)] => truncate(ns, unit, v, Some(m)),
            _ => Err(QueryError::type_error(format!(
                "{name}() takes a unit and a temporal value"
            ))),
        },
        ("datetime", "fromepoch") => match args {
            [Value::Int(s), Value::Int(n)] => epoch(*s as i128 * NANOS as i128 + *n as i128),
            _ => return None,
        },
        ("datetime", "fromepochmillis") => match args {
            [Value::Int(ms)] => epoch(*ms as i128 * 1_000_000),
            _ => return None,
        },
        (
            "date" | "time" | "localtime" | "datetime" | "localdatetime",
            "transaction" | "statement" | "realtime",
        ) => now(ns, args),
        _ => return None,
    })
}

fn epoch(nanos: i128) -> R {
    let secs =
        i64::try_from(nanos.div_euclid(NANOS as i128)).map_err(|_| bad("epoch out of range"))?;
    Ok(Value::DateTime(DateTime {
        secs,
        nanos: nanos.rem_euclid(NANOS as i128) as u32,
        offset_secs: 0,
        zone: None,
    }))
}

/// The current instant, as `kind`, in UTC or the zone given.
pub fn now(kind: &str, args: &[Value]) -> R {
    now_at(kind, args, std::time::SystemTime::now())
}

/// The temporal constructors that read the clock, without arguments or
/// with a time zone: `date()`, `datetime.transaction('Europe/Paris')`, …
/// but not the `.realtime` forms, which read the clock at each call.
/// `name` is lower case.
pub fn reads_statement_clock(name: &str, args: usize) -> bool {
    let (kind, form) = name.split_once('.').unwrap_or((name, ""));
    matches!(
        kind,
        "date" | "time" | "localtime" | "datetime" | "localdatetime"
    ) && match form {
        "" => args == 0,
        "transaction" | "statement" => args <= 1,
        _ => false,
    }
}

/// [`now`] at a given instant: the statement's clock, so that every
/// `datetime()` of one query reads the same time, as openCypher requires.
pub fn now_at(kind: &str, args: &[Value], at: std::time::SystemTime) -> R {
    let kind = kind.split_once('.').map_or(kind, |(k, _)| k);
    if matches!(args.first(), Some(Value::Null)) {
        return Ok(Value::Null);
    }
    let d = at
        .duration_since(std::time::UNIX_EPOCH)
        .map_err(|_| bad("the clock is before 1970"))?;
    let zone = match args.first() {
        Some(Value::String(z)) => Some(parse_zone(z)?),
        _ => None,
    };
    let secs = d.as_secs() as i64;
    let off = match &zone {
        Some(z) => z.offset_at_instant(secs)?,
        None => 0,
    };
    let (date, nanos) = split_local(secs + off as i64, d.subsec_nanos());
    let p = Parts {
        date: Some(date),
        nanos: Some(nanos),
        offset: Some(off),
        zone: zone.and_then(|z| z.name()),
    };
    build(kind, &p)
}

/// `duration.between(a, b)` and its month, day and second forms.
/// The offset a local value (`local`, with no offset) has in the named zone
/// of `zoned`, at its own wall-clock time (on `zoned`'s date when it has
/// none); `None` when either is not so.
fn offset_in_zone_of(local: &Parts, zoned: &Parts) -> Option<i32> {
    if local.offset.is_some() {
        return None;
    }
    let zone = parse_zone(zoned.zone.as_deref()?).ok()?;
    let date = local.date.or(zoned.date)?;
    let (secs, _) = local_secs(date, local.nanos.unwrap_or(0));
    zone.offset_at_local(secs).ok()
}

fn between(f: &str, a: &Value, b: &Value) -> R {
    let (pa, pb) = match (parts(a), parts(b)) {
        (Some(x), Some(y)) => (x, y),
        _ => {
            return Err(QueryError::type_error(
                "duration.between() takes two temporal values",
            ))
        }
    };
    // A local value against one in a named zone is read in that zone, at
    // its own wall-clock time (so a day with a daylight-saving change
    // counts its real hours).
    let (mut pa, mut pb) = (pa, pb);
    if let Some(off) = offset_in_zone_of(&pb, &pa) {
        pb.offset = Some(off);
    } else if let Some(off) = offset_in_zone_of(&pa, &pb) {
        pa.offset = Some(off);
    }
    // Times with offsets compare as instants: move b into a's offset.
    if let (Some(oa), Some(ob)) = (pa.offset, pb.offset) {
        if oa != ob {
            let (secs, n) = pb.local();
            let (d, t) = split_local(secs - ob as i64 + oa as i64, n);
            if pb.date.is_some() {
                pb.date = Some(d);
            }
            pb.nanos = Some(t);
        }
    }
    let both_dates = pa.date.is_some() && pb.date.is_some();
    let da = pa.date.unwrap_or(Date { days: 0 });
    let db = if both_dates {
        pb.date.unwrap_or(da)
    } else {
        da
    };
    let ta = pa.nanos.unwrap_or(0) as i128;
    let tb = pb
        .nanos
        .map(|n| n as i128)
        .unwrap_or_else(|| if pb.date.is_none() { ta } else { 0 });
    // A date against a time compares the time with midnight.
    let total = (db.days as i128 - da.days as i128) * DAY_NANOS + tb - ta;
    let d = match f {
        "inseconds" => dur_from_nanos(0, 0, total)?,
        "indays" => dur_from_nanos(0, total / DAY_NANOS, 0)?,
        _ => {
            // Whole months first (not overshooting b), then days, then time.
            let (ya, ma, _) = da.ymd();
            let (yb, mb, _) = db.ymd();
            let mut months = (yb as i64 - ya as i64) * 12 + (mb as i64 - ma as i64);
            let at = |m: i64| -> i128 {
                add_months(da, m).map_or(0, |x| x.days as i128) * DAY_NANOS + ta
            };
            let end = db.days as i128 * DAY_NANOS + tb;
            if months > 0 && at(months) > end {
                months -= 1;
            } else if months < 0 && at(months) < end {
                months += 1;
            }
            if f == "inmonths" {
                dur_from_nanos(months.into(), 0, 0)?
            } else {
                let rest = end - at(months);
                let days = rest / DAY_NANOS;
                dur_from_nanos(months.into(), days, rest - days * DAY_NANOS)?
            }
        }
    };
    Ok(Value::Duration(d))
}

/// `date.truncate('month', d)` and the others: the value cut down to the
/// start of the unit, then the map's components applied.
fn truncate(kind: &str, unit: &str, v: &Value, overrides: Option<&BTreeMap<String, Value>>) -> R {
    let p = parts(v).ok_or_else(|| {
        QueryError::type_error(format!(
            "{kind}.truncate() takes a temporal value, not {}",
            v.value_type()
        ))
    })?;
    let u = unit.to_ascii_lowercase();
    let mut q = p.clone();
    let date_unit = matches!(
        u.as_str(),
        "millennium"
            | "century"
            | "decade"
            | "year"
            | "weekyear"
            | "quarter"
            | "month"
            | "week"
            | "day"
    );
    if let Some(d) = p.date {
        let (y, m, _) = d.ymd();
        let floor = |n: i32| y.div_euclid(n) * n;
        q.date = match u.as_str() {
            "millennium" => Date::from_ymd(floor(1000), 1, 1),
            "century" => Date::from_ymd(floor(100), 1, 1),
            "decade" => Date::from_ymd(floor(10), 1, 1),
            "year" => Date::from_ymd(y, 1, 1),
            "weekyear" => Date::from_iso_week(d.iso_week().0, 1, 1),
            "quarter" => Date::from_ymd(y, (m - 1) / 3 * 3 + 1, 1),
            "month" => Date::from_ymd(y, m, 1),
            "week" => Date::from_days(d.days - i64::from(d.weekday()) + 1),
            _ => Some(d),
        };
    } else if date_unit {
        return Err(bad(format!("cannot truncate a time to the {unit}")));
    }
    let n = p.nanos.unwrap_or(0);
    let unit_nanos: u64 = match u.as_str() {
        "hour" => 3_600_000_000_000,
        "minute" => 60_000_000_000,
        "second" => NANOS as u64,
        "millisecond" => 1_000_000,
        "microsecond" => 1000,
        _ if date_unit => u64::MAX,
        other => return Err(bad(format!("unknown unit '{other}' for truncation"))),
    };
    q.nanos = Some(if unit_nanos == u64::MAX {
        0
    } else {
        n / unit_nanos * unit_nanos
    });
    if kind == "date" && !date_unit {
        return Err(bad(format!("cannot truncate a date to the {unit}")));
    }
    let mut base = build_for(kind, &q)?;
    if let Some(m) = overrides {
        let mut m = m.clone();
        let has =
            |m: &BTreeMap<String, Value>, k: &str| m.keys().any(|x| x.eq_ignore_ascii_case(k));
        // A smaller sub-second unit adds to what the truncation kept:
        // truncated to milliseconds, `{nanosecond: 2}` is .645000002.
        if (has(&m, "nanosecond") || has(&m, "microsecond")) && !has(&m, "millisecond") {
            let sub = q.nanos.unwrap_or(0) % NANOS as u64;
            m.insert("millisecond".into(), Value::Int((sub / 1_000_000) as i64));
            if !has(&m, "microsecond") {
                m.insert("microsecond".into(), Value::Int((sub / 1000 % 1000) as i64));
            }
        }
        // A new time zone takes the truncated wall-clock time, not the instant.
        if has(&m, "timezone") {
            match kind {
                "datetime" => base = build("localdatetime", &q)?,
                "time" => base = build("localtime", &q)?,
                _ => {}
            }
        }
        let key = if matches!(kind, "date") {
            "date"
        } else if matches!(kind, "time" | "localtime") {
            "time"
        } else {
            "datetime"
        };
        // Week truncation keeps the week: a day override is a day of it.
        if u == "week" || u == "weekyear" {
            if let Some(dow) = m.remove("dayOfWeek") {
                m.insert("dayOfWeek".into(), dow);
            }
        }
        m.insert(key.into(), base);
        base = construct(kind, &m)?;
    }
    Ok(base)
}

/// Builds `kind` from parts of a value of possibly another kind: a local
/// value truncated to a zoned kind takes UTC, a zoned one keeps its zone.
fn build_for(kind: &str, q: &Parts) -> R {
    let mut q = q.clone();
    if matches!(kind, "time" | "datetime") {
        if q.offset.is_none() {
            q.offset = Some(0);
        } else if let Some(z) = q.zone.as_deref().and_then(|z| parse_zone(z).ok()) {
            if let Some(d) = q.date {
                let (secs, _) = local_secs(d, q.nanos.unwrap_or(0));
                q.offset = Some(z.offset_at_local(secs)?);
            }
        }
    }
    build(kind, &q)
}

/// `date()`, `time()` and the others from a value: a map of components, a
/// string, or another temporal value whose parts are kept.
pub fn convert(kind: &str, v: &Value) -> Option<R> {
    Some(match v {
        Value::Map(m) => construct(kind, m),
        Value::String(s) => parse(kind, s).ok_or_else(|| {
            bad(format!(
                "{kind}(): cannot read '{s}' as a {kind}; e.g. '{}'",
                match kind {
                    "date" => "2015-07-21",
                    "localtime" => "12:31:14.5",
                    "time" => "12:31:14+01:00",
                    "localdatetime" => "2015-07-21T12:31:14",
                    _ => "2015-07-21T12:31:14Z",
                }
            ))
        }),
        other => {
            let p = parts(other)?;
            if matches!(kind, "date" | "localdatetime" | "datetime") && p.date.is_none() {
                return Some(Err(QueryError::type_error(format!(
                    "{kind}() cannot be made from a {}",
                    other.value_type()
                ))));
            }
            let mut q = p;
            if matches!(kind, "time" | "datetime") && q.offset.is_none() {
                q.offset = Some(0);
            }
            build(kind, &q)
        }
    })
}

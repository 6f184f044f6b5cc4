//! The Cypher temporal types as plain, totally encoded values.
//!
//! Plexus stores them compactly (integers, no strings) and formats them as
//! ISO 8601. Arithmetic and parsing belong to the query engine; storage only
//! needs identity, ordering and a readable form.

use std::fmt;

const NANOS_PER_SEC: i64 = 1_000_000_000;
const SECS_PER_DAY: i64 = 86_400;

/// A calendar date, as days since 1970-01-01 (proleptic Gregorian), in
/// the years -999,999,999 to +999,999,999 (Cypher's range, as Neo4j's).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Date {
    pub days: i64,
}

/// A time of day without a zone, as nanoseconds since midnight.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct LocalTime {
    pub nanos: u64,
}

/// A time of day with a UTC offset.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Time {
    pub nanos: u64,
    pub offset_secs: i32,
}

/// A date and time without a zone, as seconds and nanoseconds since 1970-01-01T00:00.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct LocalDateTime {
    pub secs: i64,
    pub nanos: u32,
}

/// An instant (UTC seconds and nanoseconds) with the offset and optional zone
/// name it was written in.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct DateTime {
    pub secs: i64,
    pub nanos: u32,
    pub offset_secs: i32,
    pub zone: Option<String>,
}

/// A Cypher duration: months, days, seconds and nanoseconds kept apart,
/// because a month has no fixed length.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Duration {
    pub months: i64,
    pub days: i64,
    pub secs: i64,
    pub nanos: i32,
}

impl Date {
    /// The years a date may have.
    pub const YEARS: std::ops::RangeInclusive<i64> = -999_999_999..=999_999_999;

    /// The date of a (year, month, day) triple, or `None` when it does not exist.
    pub fn from_ymd(year: i32, month: u32, day: u32) -> Option<Date> {
        if !(1..=12).contains(&month) || day == 0 || day > days_in_month(year, month) {
            return None;
        }
        // A year beyond Cypher's is refused, never wrapped into another.
        Date::from_days(days_from_civil(i64::from(year), month, day))
    }

    /// The date `days` after 1970-01-01, when its year is in range.
    pub fn from_days(days: i64) -> Option<Date> {
        // Checked on the days, before a year is computed from them.
        const FIRST: i64 = days_from_civil(*Date::YEARS.start(), 1, 1);
        const LAST: i64 = days_from_civil(*Date::YEARS.end(), 12, 31);
        (FIRST..=LAST).contains(&days).then_some(Date { days })
    }

    /// The (year, month, day) of this date.
    pub fn ymd(self) -> (i32, u32, u32) {
        civil_from_days(self.days)
    }

    fn plus(self, days: i64) -> Option<Date> {
        Date::from_days(self.days.checked_add(days)?)
    }

    /// ISO day of the week: 1 is Monday, 7 is Sunday (1970-01-01 was a Thursday).
    pub fn weekday(self) -> u32 {
        ((self.days + 3).rem_euclid(7) + 1) as u32
    }

    /// The day of the year, from 1.
    pub fn ordinal(self) -> u32 {
        let (y, _, _) = self.ymd();
        (self.days - days_from_civil(y as i64, 1, 1) + 1) as u32
    }

    /// The ISO week-based year and week (1–53): weeks start on Monday and
    /// week 1 holds the year's first Thursday.
    pub fn iso_week(self) -> (i32, u32) {
        let thursday = Date {
            days: self.days + 4 - i64::from(self.weekday()),
        };
        (thursday.ymd().0, (thursday.ordinal() - 1) / 7 + 1)
    }

    /// The quarter (1–4) and the day within it, from 1.
    pub fn quarter(self) -> (u32, u32) {
        let (y, m, _) = self.ymd();
        let q = (m - 1) / 3 + 1;
        let first = days_from_civil(y as i64, (q - 1) * 3 + 1, 1);
        (q, (self.days - first + 1) as u32)
    }

    /// The date of an ISO week date, or `None` when it does not exist.
    pub fn from_iso_week(week_year: i32, week: u32, weekday: u32) -> Option<Date> {
        if !(1..=7).contains(&weekday) || week == 0 {
            return None;
        }
        let jan4 = Date::from_ymd(week_year, 1, 4)?;
        let monday = jan4.plus(1 - jan4.weekday() as i64)?;
        let d = monday.plus((week as i64 - 1) * 7 + weekday as i64 - 1)?;
        (d.iso_week() == (week_year, week)).then_some(d)
    }

    /// The date of a day of the year (from 1), or `None` when it does not exist.
    pub fn from_ordinal(year: i32, ordinal: u32) -> Option<Date> {
        let d = Date::from_ymd(year, 1, 1)?.plus(ordinal as i64 - 1)?;
        (ordinal >= 1 && d.ymd().0 == year).then_some(d)
    }

    /// The date of a quarter (1–4) and a day within it (from 1).
    pub fn from_quarter(year: i32, quarter: u32, day: u32) -> Option<Date> {
        if !(1..=4).contains(&quarter) || day == 0 {
            return None;
        }
        let d = Date::from_ymd(year, (quarter - 1) * 3 + 1, 1)?.plus(day as i64 - 1)?;
        (d.quarter() == (quarter, day) && d.ymd().0 == year).then_some(d)
    }
}

impl LocalTime {
    /// A time from hours, minutes, seconds and nanoseconds, or `None` when out of range.
    pub fn from_hms_nano(h: u32, m: u32, s: u32, nano: u32) -> Option<LocalTime> {
        (h < 24 && m < 60 && s < 60 && nano < 1_000_000_000).then(|| LocalTime {
            nanos: ((h as u64 * 60 + m as u64) * 60 + s as u64) * 1_000_000_000 + nano as u64,
        })
    }
}

fn days_in_month(year: i32, month: u32) -> u32 {
    match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        _ if (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 => 29,
        _ => 28,
    }
}

// Howard Hinnant's algorithms: exact for the whole proleptic Gregorian range.
const fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let m = m as i64;
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + d as i64 - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn civil_from_days(z: i64) -> (i32, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    ((if m <= 2 { y + 1 } else { y }) as i32, m, d)
}

/// Cypher's canonical (Java `toString`) form: seconds are omitted when both
/// they and the fraction are zero, and a fraction is printed in groups of
/// three digits (milli, micro, nano), so `12:05`, `12:05:09.120`.
fn write_time_of_day(f: &mut fmt::Formatter<'_>, nanos: u64) -> fmt::Result {
    let secs = nanos / 1_000_000_000;
    let frac = nanos % 1_000_000_000;
    write!(f, "{:02}:{:02}", secs / 3600, secs / 60 % 60)?;
    if !secs.is_multiple_of(60) || frac != 0 {
        write!(f, ":{:02}", secs % 60)?;
    }
    write_fraction(f, frac as u32, true)
}

/// Writes `.fraction` without trailing zeros; `grouped` pads to a multiple of
/// three digits, as Cypher prints times (durations print the bare digits).
fn write_fraction(f: &mut fmt::Formatter<'_>, frac: u32, grouped: bool) -> fmt::Result {
    if frac == 0 {
        return Ok(());
    }
    let digits = format!("{frac:09}");
    let mut len = digits.trim_end_matches('0').len();
    if grouped {
        len = len.div_ceil(3) * 3;
    }
    write!(f, ".{}", &digits[..len])
}

fn write_offset(f: &mut fmt::Formatter<'_>, offset_secs: i32) -> fmt::Result {
    if offset_secs == 0 {
        return f.write_str("Z");
    }
    let sign = if offset_secs < 0 { '-' } else { '+' };
    let a = offset_secs.unsigned_abs();
    write!(f, "{sign}{:02}:{:02}", a / 3600, a / 60 % 60)?;
    if !a.is_multiple_of(60) {
        write!(f, ":{:02}", a % 60)?;
    }
    Ok(())
}

fn write_date(f: &mut fmt::Formatter<'_>, days: i64) -> fmt::Result {
    let (y, m, d) = civil_from_days(days);
    if (0..=9999).contains(&y) {
        write!(f, "{y:04}-{m:02}-{d:02}")
    } else {
        write!(f, "{y:+05}-{m:02}-{d:02}")
    }
}

fn write_local_datetime(f: &mut fmt::Formatter<'_>, secs: i64, nanos: u32) -> fmt::Result {
    write_date(f, secs.div_euclid(SECS_PER_DAY))?;
    f.write_str("T")?;
    let tod = secs.rem_euclid(SECS_PER_DAY) as u64 * 1_000_000_000 + nanos as u64;
    write_time_of_day(f, tod)
}

impl fmt::Display for Date {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_date(f, self.days)
    }
}

impl fmt::Display for LocalTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_time_of_day(f, self.nanos)
    }
}

impl fmt::Display for Time {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_time_of_day(f, self.nanos)?;
        write_offset(f, self.offset_secs)
    }
}

impl fmt::Display for LocalDateTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_local_datetime(f, self.secs, self.nanos)
    }
}

impl fmt::Display for DateTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_local_datetime(f, self.secs + self.offset_secs as i64, self.nanos)?;
        write_offset(f, self.offset_secs)?;
        if let Some(zone) = &self.zone {
            write!(f, "[{zone}]")?;
        }
        Ok(())
    }
}

impl fmt::Display for Duration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("P")?;
        let (years, months) = (self.months / 12, self.months % 12);
        if years != 0 {
            write!(f, "{years}Y")?;
        }
        if months != 0 {
            write!(f, "{months}M")?;
        }
        if self.days != 0 {
            write!(f, "{}D", self.days)?;
        }
        let total_nanos = self.secs as i128 * NANOS_PER_SEC as i128 + self.nanos as i128;
        if total_nanos != 0 || (self.months == 0 && self.days == 0) {
            f.write_str("T")?;
            let neg = total_nanos < 0;
            let a = total_nanos.unsigned_abs();
            let secs = a / NANOS_PER_SEC as u128;
            let (h, m, s) = (secs / 3600, secs / 60 % 60, secs % 60);
            let sign = if neg { "-" } else { "" };
            if h != 0 {
                write!(f, "{sign}{h}H")?;
            }
            if m != 0 {
                write!(f, "{sign}{m}M")?;
            }
            let frac = (a % NANOS_PER_SEC as u128) as u32;
            if s != 0 || frac != 0 || (h == 0 && m == 0) {
                write!(f, "{sign}{s}")?;
                write_fraction(f, frac, false)?;
                f.write_str("S")?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn week_ordinal_and_quarter_dates() {
        let d = |s: &str| Date::parse(s).unwrap();
        assert_eq!(d("1970-01-01").weekday(), 4);
        assert_eq!(d("1816-12-30").iso_week(), (1817, 1));
        assert_eq!(Date::from_iso_week(1817, 1, 1), Some(d("1816-12-30")));
        assert_eq!(Date::from_iso_week(1818, 53, 1), Some(d("1818-12-28")));
        assert_eq!(Date::from_iso_week(1819, 53, 1), None);
        assert_eq!(Date::from_ordinal(1984, 202), Some(d("1984-07-20")));
        assert_eq!(Date::from_ordinal(1983, 366), None);
        assert_eq!(Date::from_quarter(1984, 3, 45), Some(d("1984-08-14")));
        assert_eq!(d("1984-11-11").quarter(), (4, 42));
        assert_eq!(Date::from_quarter(1984, 1, 92), None);
    }

    #[test]
    fn civil_round_trip() {
        for days in -800_000..800_000 {
            let (y, m, d) = civil_from_days(days);
            assert_eq!(days_from_civil(y as i64, m, d), days);
        }
        assert_eq!(Date::from_ymd(1970, 1, 1).unwrap().days, 0);
        assert_eq!(
            Date::from_ymd(2000, 2, 29).unwrap().to_string(),
            "2000-02-29"
        );
        assert!(Date::from_ymd(1900, 2, 29).is_none());
    }

    #[test]
    fn formats_iso() {
        let t = LocalTime::from_hms_nano(12, 5, 9, 120_000_000).unwrap();
        assert_eq!(t.to_string(), "12:05:09.120");
        assert_eq!(
            LocalTime::from_hms_nano(12, 5, 0, 0).unwrap().to_string(),
            "12:05"
        );
        let dt = DateTime {
            secs: 0,
            nanos: 0,
            offset_secs: 3600,
            zone: Some("Europe/Paris".into()),
        };
        assert_eq!(dt.to_string(), "1970-01-01T01:00+01:00[Europe/Paris]");
        let d = Duration {
            months: 14,
            days: 3,
            secs: 3661,
            nanos: 500_000_000,
        };
        assert_eq!(d.to_string(), "P1Y2M3DT1H1M1.5S");
        assert_eq!(Duration::default().to_string(), "PT0S");
    }
}

fn digits(s: &str, n: usize) -> Option<u32> {
    (s.len() == n && s.bytes().all(|b| b.is_ascii_digit()))
        .then(|| s.parse().ok())
        .flatten()
}

/// Parses `HH:MM[:SS[.fffffffff]]` into nanoseconds since midnight.
fn parse_time_of_day(s: &str) -> Option<u64> {
    let mut parts = s.splitn(3, ':');
    let h = digits(parts.next()?, 2)?;
    let m = digits(parts.next()?, 2)?;
    let (sec, nanos) = match parts.next() {
        None => (0, 0),
        Some(rest) => {
            let (sec, frac) = rest.split_once('.').unwrap_or((rest, ""));
            if frac.len() > 9 || !frac.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            let nanos = if frac.is_empty() {
                0
            } else {
                format!("{frac:0<9}").parse().ok()?
            };
            (digits(sec, 2)?, nanos)
        }
    };
    LocalTime::from_hms_nano(h, m, sec, nanos).map(|t| t.nanos)
}

/// Splits a trailing `Z`, `±HH:MM`, `±HHMM` or `±HH` offset off a time, in
/// seconds.
fn split_offset(s: &str) -> Option<(&str, i32)> {
    if let Some(t) = s.strip_suffix('Z') {
        return Some((t, 0));
    }
    let i = s.rfind(['+', '-'])?;
    let (t, off) = s.split_at(i);
    let sign = if off.starts_with('-') { -1 } else { 1 };
    let body = &off[1..];
    let (h, m) = match body.split_once(':') {
        Some(hm) => hm,
        None if body.len() == 4 => body.split_at(2),
        None => (body, "00"),
    };
    Some((
        t,
        sign * (digits(h, 2)? as i32 * 3600 + digits(m, 2)? as i32 * 60),
    ))
}

impl Date {
    /// Parses `YYYY-MM-DD`.
    pub fn parse(s: &str) -> Option<Date> {
        let mut p = s.split('-');
        let y = digits(p.next()?, 4)? as i32;
        let m = digits(p.next()?, 2)?;
        let d = digits(p.next()?, 2)?;
        if p.next().is_some() {
            return None;
        }
        Date::from_ymd(y, m, d)
    }
}

impl LocalTime {
    /// Parses `HH:MM[:SS[.fff]]`.
    pub fn parse(s: &str) -> Option<LocalTime> {
        parse_time_of_day(s).map(|nanos| LocalTime { nanos })
    }
}

impl Time {
    /// Parses `HH:MM[:SS[.fff]]` followed by `Z` or `±HH:MM`.
    pub fn parse(s: &str) -> Option<Time> {
        let (t, offset_secs) = split_offset(s)?;
        Some(Time {
            nanos: parse_time_of_day(t)?,
            offset_secs,
        })
    }
}

impl LocalDateTime {
    /// Parses `YYYY-MM-DDTHH:MM[:SS[.fff]]`.
    pub fn parse(s: &str) -> Option<LocalDateTime> {
        let (d, t) = s.split_once('T')?;
        let days = Date::parse(d)?.days;
        let nanos = parse_time_of_day(t)?;
        Some(LocalDateTime {
            secs: days * SECS_PER_DAY + (nanos / 1_000_000_000) as i64,
            nanos: (nanos % 1_000_000_000) as u32,
        })
    }
}

impl DateTime {
    /// The instant `micros` microseconds after 1970-01-01T00:00Z, in UTC
    /// (how Plexus stamps system time).
    pub fn from_epoch_micros(micros: u64) -> DateTime {
        let micros = i64::try_from(micros).unwrap_or(i64::MAX);
        DateTime {
            secs: micros.div_euclid(1_000_000),
            // Below 10^9: the remainder is below 10^6.
            nanos: (micros.rem_euclid(1_000_000) * 1000) as u32,
            offset_secs: 0,
            zone: None,
        }
    }

    /// Microseconds after 1970-01-01T00:00Z; `None` for an earlier instant.
    pub fn epoch_micros(&self) -> Option<u64> {
        let micros = i128::from(self.secs) * 1_000_000 + i128::from(self.nanos / 1000);
        u64::try_from(micros).ok()
    }

    /// Parses `YYYY-MM-DDTHH:MM[:SS[.fff]]` followed by `Z` or `±HH:MM`.
    pub fn parse(s: &str) -> Option<DateTime> {
        let (dt, offset_secs) = split_offset(s)?;
        let local = LocalDateTime::parse(dt)?;
        Some(DateTime {
            secs: local.secs - offset_secs as i64,
            nanos: local.nanos,
            offset_secs,
            zone: None,
        })
    }
}

#[cfg(test)]
mod parse_tests {
    use super::*;

    #[test]
    fn parses_what_it_prints() {
        assert_eq!(Date::parse("2024-02-29").unwrap().to_string(), "2024-02-29");
        assert!(Date::parse("2023-02-29").is_none() && Date::parse("24-1-1").is_none());
        assert_eq!(
            LocalTime::parse("07:05:09.5").unwrap().to_string(),
            "07:05:09.500"
        );
        assert_eq!(
            Time::parse("07:05+01:00").unwrap().to_string(),
            "07:05+01:00"
        );
        assert_eq!(
            LocalDateTime::parse("2020-01-02T03:04:05")
                .unwrap()
                .to_string(),
            "2020-01-02T03:04:05"
        );
        let dt = DateTime::parse("2020-01-02T03:04:05.25-02:30").unwrap();
        assert_eq!(dt.to_string(), "2020-01-02T03:04:05.250-02:30");
        assert_eq!(DateTime::parse("1970-01-01T00:00Z").unwrap().secs, 0);
        let basic = DateTime::parse("2015-07-21T21:40:32.142+0100").unwrap();
        assert_eq!(basic.to_string(), "2015-07-21T21:40:32.142+01:00");
        assert_eq!(Time::parse("16:30-02").unwrap().offset_secs, -7200);
        assert!(DateTime::parse("2020-01-02T25:00Z").is_none());
    }
}

//! Cypher values to Python objects and back.
//!
//! Temporal values become `datetime` objects where that is exact (Python
//! keeps microseconds and years 1–9999); anything else — a nanosecond part,
//! a year beyond 9999, a duration with months — becomes a [`Temporal`] or a
//! [`Duration`](crate::types::Duration) that keeps the value whole and
//! converts back to the same Cypher value.

use crate::types::{Duration, Node, Path, Relationship, Temporal};
use plexus::Value;
use pyo3::exceptions::{PyOverflowError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBool, PyBytes, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple, PyType};
use std::collections::BTreeMap;

/// How deep a parameter may nest: deeper is refused rather than recursed
/// into (a self-containing list would never end).
const MAX_PARAM_DEPTH: usize = 256;

const NANOS: i64 = 1_000_000_000;
const SECS_PER_DAY: i64 = 86_400;
/// `date.toordinal()` of 1970-01-01.
const UNIX_ORDINAL: i64 = 719_163;

fn class<'py>(
    py: Python<'py>,
    cell: &'static PyOnceLock<Py<PyType>>,
    module: &str,
    name: &str,
) -> PyResult<&'py Bound<'py, PyType>> {
    cell.import(py, module, name)
}

macro_rules! py_class {
    ($fn:ident, $module:literal, $name:literal) => {
        fn $fn(py: Python<'_>) -> PyResult<&Bound<'_, PyType>> {
            static CELL: PyOnceLock<Py<PyType>> = PyOnceLock::new();
            class(py, &CELL, $module, $name)
        }
    };
}

py_class!(py_date, "datetime", "date");
py_class!(py_time, "datetime", "time");
py_class!(py_datetime, "datetime", "datetime");
py_class!(py_timedelta, "datetime", "timedelta");
py_class!(py_timezone, "datetime", "timezone");
py_class!(py_zoneinfo, "zoneinfo", "ZoneInfo");

// ---- Cypher → Python -------------------------------------------------------

/// A result value as a Python object. Results are finite trees, but a
/// query can nest lists deeply (`reduce`), so the stack grows on demand.
pub fn to_py<'py>(py: Python<'py>, v: &Value) -> PyResult<Bound<'py, PyAny>> {
    stacker::maybe_grow(64 * 1024, 1024 * 1024, || to_py_inner(py, v))
}

fn to_py_inner<'py>(py: Python<'py>, v: &Value) -> PyResult<Bound<'py, PyAny>> {
    Ok(match v {
        Value::Null => py.None().into_bound(py),
        Value::Bool(b) => PyBool::new(py, *b).to_owned().into_any(),
        Value::Int(i) => i.into_pyobject(py)?.into_any(),
        Value::Float(f) => PyFloat::new(py, *f).into_any(),
        Value::String(s) => PyString::new(py, s).into_any(),
        Value::Bytes(b) => PyBytes::new(py, b).into_any(),
        Value::List(items) => {
            let list = PyList::empty(py);
            for i in items {
                list.append(to_py(py, i)?)?;
            }
            list.into_any()
        }
        Value::Map(m) => map_to_py(py, m)?.into_any(),
        Value::Node(n) => Bound::new(py, Node::from_value(py, n)?)?.into_any(),
        Value::Relationship(r) => Bound::new(py, Relationship::from_value(py, r)?)?.into_any(),
        Value::Path(p) => Bound::new(py, Path::from_value(py, p)?)?.into_any(),
        Value::Duration(d) => duration_to_py(py, d)?,
        temporal => match exact_temporal(py, temporal)? {
            Some(obj) => obj,
            None => Bound::new(py, Temporal::of(temporal))?.into_any(),
        },
    })
}

pub fn map_to_py<'py>(
    py: Python<'py>,
    m: &BTreeMap<String, Value>,
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for (k, v) in m {
        d.set_item(k, to_py(py, v)?)?;
    }
    Ok(d)
}

/// Seconds of a day and the rest, for wall-clock fields.
fn split_day(secs: i64) -> (i64, i64) {
    (secs.div_euclid(SECS_PER_DAY), secs.rem_euclid(SECS_PER_DAY))
}

fn micros(nanos: u64) -> Option<u64> {
    nanos.is_multiple_of(1000).then_some(nanos / 1000)
}

fn hms(secs_of_day: i64) -> (i64, i64, i64) {
    (secs_of_day / 3600, secs_of_day / 60 % 60, secs_of_day % 60)
}

/// A `datetime.date` for a day count, when Python's calendar holds it.
fn date<'py>(py: Python<'py>, days: i64) -> PyResult<Option<Bound<'py, PyAny>>> {
    let ordinal = days + UNIX_ORDINAL;
    // date.min is ordinal 1, date.max 3,652,059.
    if !(1..=3_652_059).contains(&ordinal) {
        return Ok(None);
    }
    Ok(Some(py_date(py)?.call_method1("fromordinal", (ordinal,))?))
}

fn offset_zone<'py>(py: Python<'py>, offset_secs: i32) -> PyResult<Bound<'py, PyAny>> {
    let delta = py_timedelta(py)?.call1((0, offset_secs))?;
    py_timezone(py)?.call1((delta,))
}

/// The value as the `datetime` type that holds it exactly, or `None`.
fn exact_temporal<'py>(py: Python<'py>, v: &Value) -> PyResult<Option<Bound<'py, PyAny>>> {
    let time = |nanos: u64, tz: Option<Bound<'py, PyAny>>| -> PyResult<Option<Bound<'py, PyAny>>> {
        let Some(us) = micros(nanos) else {
            return Ok(None);
        };
        let (h, m, s) = hms((us / 1_000_000) as i64);
        let t = py_time(py)?.call1((h, m, s, us % 1_000_000, tz))?;
        Ok(Some(t))
    };
    // A wall-clock datetime (naive, or in UTC to be moved to a zone).
    let wall = |secs: i64, nanos: u32, tz: Option<Bound<'py, PyAny>>| {
        let Some(us) = micros(u64::from(nanos)) else {
            return Ok(None);
        };
        let (days, rest) = split_day(secs);
        let Some(d) = date(py, days)? else {
            return Ok(None);
        };
        let (h, m, s) = hms(rest);
        let args = (
            d.getattr("year")?,
            d.getattr("month")?,
            d.getattr("day")?,
            h,
            m,
            s,
            us,
            tz,
        );
        Ok(Some(py_datetime(py)?.call1(args)?))
    };
    match v {
        Value::Date(d) => date(py, d.days),
        Value::LocalTime(t) => time(t.nanos, None),
        Value::Time(t) => time(t.nanos, Some(offset_zone(py, t.offset_secs)?)),
        Value::LocalDateTime(t) => wall(t.secs, t.nanos, None),
        Value::DateTime(t) => {
            let utc = offset_zone(py, 0)?;
            let Some(at) = wall(t.secs, t.nanos, Some(utc))? else {
                return Ok(None);
            };
            let zone = match &t.zone {
                Some(name) => match py_zoneinfo(py)?.call1((name,)) {
                    Ok(z) => z,
                    // Python's tz database lacks the zone: keep the offset.
                    Err(_) => offset_zone(py, t.offset_secs)?,
                },
                None => offset_zone(py, t.offset_secs)?,
            };
            // astimezone fails only at the ends of Python's calendar.
            Ok(at.call_method1("astimezone", (zone,)).ok())
        }
        _ => Ok(None),
    }
}

fn duration_to_py<'py>(py: Python<'py>, d: &plexus::Duration) -> PyResult<Bound<'py, PyAny>> {
    let exact = d.months == 0 && d.nanos % 1000 == 0;
    if exact {
        let td = py_timedelta(py)?.call1((d.days, d.secs, d.nanos / 1000));
        // timedelta holds ±999,999,999 days; beyond, keep the Cypher form.
        if let Ok(td) = td {
            return Ok(td);
        }
    }
    Ok(Bound::new(py, Duration::of(*d))?.into_any())
}

// ---- Python → Cypher -------------------------------------------------------

/// A query parameter map from a Python dict (`None` is no parameters).
pub fn params(obj: Option<&Bound<'_, PyAny>>) -> PyResult<plexus::Params> {
    let mut out = plexus::Params::new();
    let Some(obj) = obj.filter(|o| !o.is_none()) else {
        return Ok(out);
    };
    let dict = obj
        .cast::<PyDict>()
        .map_err(|_| PyTypeError::new_err("parameters must be a dict of name → value"))?;
    for (k, v) in dict.iter() {
        let name: String = k
            .extract()
            .map_err(|_| PyTypeError::new_err("parameter names must be strings"))?;
        let value = from_py(&v, &format!("${name}"), 0)?;
        out.insert(name, value);
    }
    Ok(out)
}

/// A Python value as a Cypher value; `at` names it in errors (`$p[2].k`).
pub fn from_py(obj: &Bound<'_, PyAny>, at: &str, depth: usize) -> PyResult<Value> {
    if depth > MAX_PARAM_DEPTH {
        return Err(PyValueError::new_err(format!(
            "parameter {at} nests deeper than {MAX_PARAM_DEPTH} levels (does it contain itself?)"
        )));
    }
    let py = obj.py();
    if obj.is_none() {
        return Ok(Value::Null);
    }
    if let Ok(b) = obj.cast::<PyBool>() {
        return Ok(Value::Bool(b.is_true()));
    }
    if obj.is_instance_of::<PyInt>() {
        return int(obj, at);
    }
    if let Ok(f) = obj.cast::<PyFloat>() {
        return Ok(Value::Float(f.value()));
    }
    if let Ok(s) = obj.cast::<PyString>() {
        return Ok(Value::String(s.to_cow()?.into_owned()));
    }
    if let Ok(b) = obj.cast::<PyBytes>() {
        return Ok(Value::Bytes(b.as_bytes().to_vec()));
    }
    if let Ok(d) = obj.cast::<PyDict>() {
        let mut m = BTreeMap::new();
        for (k, v) in d.iter() {
            let key: String = k.extract().map_err(|_| {
                PyTypeError::new_err(format!("parameter {at}: map keys must be strings"))
            })?;
            let value = from_py(&v, &format!("{at}.{key}"), depth + 1)?;
            m.insert(key, value);
        }
        return Ok(Value::Map(m));
    }
    if obj.is_instance_of::<PyList>() || obj.is_instance_of::<PyTuple>() {
        let mut items = Vec::new();
        for (i, item) in obj.try_iter()?.enumerate() {
            items.push(from_py(&item?, &format!("{at}[{i}]"), depth + 1)?);
        }
        return Ok(Value::List(items));
    }
    if let Some(v) = temporal_from_py(py, obj, at)? {
        return Ok(v);
    }
    if let Ok(d) = obj.cast::<Duration>() {
        return Ok(Value::Duration(d.get().0));
    }
    if let Ok(t) = obj.cast::<Temporal>() {
        return Ok(t.get().value.clone());
    }
    // NumPy and similar: integers by __index__, floats by __float__,
    // arrays by tolist().
    if obj.hasattr("tolist")? && obj.hasattr("shape")? {
        return from_py(&obj.call_method0("tolist")?, at, depth + 1);
    }
    if obj.hasattr("__index__")? {
        return int(&obj.call_method0("__index__")?, at);
    }
    if obj.hasattr("__float__")? {
        return Ok(Value::Float(obj.call_method0("__float__")?.extract()?));
    }
    Err(PyTypeError::new_err(format!(
        "parameter {at}: a {} is not a Cypher value (use None, bool, int, float, str, bytes, \
         list, dict, datetime types or plexus.Duration)",
        obj.get_type().name()?
    )))
}

fn int(obj: &Bound<'_, PyAny>, at: &str) -> PyResult<Value> {
    obj.extract::<i64>().map(Value::Int).map_err(|_| {
        PyOverflowError::new_err(format!(
            "parameter {at}: {} does not fit Cypher's 64-bit integers",
            obj.str().map(|s| s.to_string()).unwrap_or_default()
        ))
    })
}

fn temporal_from_py(py: Python<'_>, obj: &Bound<'_, PyAny>, at: &str) -> PyResult<Option<Value>> {
    // datetime is a subclass of date: test it first.
    if obj.is_instance(py_datetime(py)?)? {
        return datetime_from_py(py, obj, at).map(Some);
    }
    if obj.is_instance(py_date(py)?)? {
        let days = obj.call_method0("toordinal")?.extract::<i64>()? - UNIX_ORDINAL;
        // Python's dates (years 1 to 9999) all fit.
        let date = plexus::Date::from_days(days)
            .ok_or_else(|| PyOverflowError::new_err(at.to_string()))?;
        return Ok(Some(Value::Date(date)));
    }
    if obj.is_instance(py_time(py)?)? {
        let part = |n: &str| -> PyResult<u64> { obj.getattr(n)?.extract() };
        let nanos = ((part("hour")? * 60 + part("minute")?) * 60 + part("second")?) * 1_000_000_000
            + part("microsecond")? * 1000;
        let offset = obj.call_method0("utcoffset")?;
        return Ok(Some(if offset.is_none() {
            Value::LocalTime(plexus::LocalTime { nanos })
        } else {
            Value::Time(plexus::Time {
                nanos,
                offset_secs: seconds_of(&offset, at)?,
            })
        }));
    }
    if obj.is_instance(py_timedelta(py)?)? {
        let days: i64 = obj.getattr("days")?.extract()?;
        let secs: i64 = obj.getattr("seconds")?.extract()?;
        let us: i32 = obj.getattr("microseconds")?.extract()?;
        return Ok(Some(Value::Duration(plexus::Duration {
            months: 0,
            days,
            secs,
            nanos: us * 1000,
        })));
    }
    Ok(None)
}

/// Whole seconds of a `timedelta` (a UTC offset).
fn seconds_of(delta: &Bound<'_, PyAny>, at: &str) -> PyResult<i32> {
    let secs: f64 = delta.call_method0("total_seconds")?.extract()?;
    if secs.fract() != 0.0 || secs.abs() > 18.0 * 3600.0 {
        return Err(PyValueError::new_err(format!(
            "parameter {at}: a UTC offset must be whole seconds within ±18 hours"
        )));
    }
    Ok(secs as i32)
}

fn datetime_from_py(py: Python<'_>, obj: &Bound<'_, PyAny>, at: &str) -> PyResult<Value> {
    let part = |n: &str| -> PyResult<i64> { obj.getattr(n)?.extract() };
    let days = obj.call_method0("toordinal")?.extract::<i64>()? - UNIX_ORDINAL;
    let wall = days * SECS_PER_DAY + (part("hour")? * 60 + part("minute")?) * 60 + part("second")?;
    let nanos = (part("microsecond")? * 1000) as u32;
    let offset = obj.call_method0("utcoffset")?;
    if offset.is_none() {
        return Ok(Value::LocalDateTime(plexus::LocalDateTime {
            secs: wall,
            nanos,
        }));
    }
    let offset_secs = seconds_of(&offset, at)?;
    let tz = obj.getattr("tzinfo")?;
    // A ZoneInfo keeps its name, so the value stays a zoned datetime.
    let zone = if tz.is_instance(py_zoneinfo(py)?)? {
        Some(tz.getattr("key")?.extract::<String>()?)
    } else {
        None
    };
    Ok(Value::DateTime(plexus::DateTime {
        secs: wall - i64::from(offset_secs),
        nanos,
        offset_secs,
        zone,
    }))
}

/// Nanoseconds as whole seconds and the rest (for durations).
pub fn split_nanos(total: i64) -> (i64, i32) {
    (total.div_euclid(NANOS), total.rem_euclid(NANOS) as i32)
}

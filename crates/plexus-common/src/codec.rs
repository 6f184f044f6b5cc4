//! The compact binary encoding of values inside records.
//!
//! A tag byte, then a payload: integers as zig-zag varints, floats as a
//! short decimal where one gives back the same bits (else 8 bytes),
//! strings and bytes length-prefixed, lists and maps count-prefixed. It is
//! not order-preserving (see `keys` for that) but small and fast to skip.

use crate::temporal::{Date, DateTime, Duration, LocalDateTime, LocalTime, Time};
use crate::value::Value;
use std::collections::BTreeMap;
use std::fmt;

const T_NULL: u8 = 0;
const T_FALSE: u8 = 1;
const T_TRUE: u8 = 2;
const T_INT: u8 = 3;
const T_FLOAT: u8 = 4;
const T_STRING: u8 = 5;
const T_BYTES: u8 = 6;
const T_LIST: u8 = 7;
const T_MAP: u8 = 8;
const T_DATE: u8 = 9;
const T_LOCAL_TIME: u8 = 10;
const T_TIME: u8 = 11;
const T_LOCAL_DATETIME: u8 = 12;
const T_DATETIME: u8 = 13;
const T_DURATION: u8 = 14;
/// A float stored as a decimal: varint of (zig-zag mantissa << 4 | scale),
/// the value being mantissa / 10^scale. Written only when that division
/// gives back the float's exact bits, as for most floats that began as
/// decimal text (`0.125`, `523.417`): 3 to 5 bytes instead of 9. The idea
/// of ALP (adaptive lossless floating-point compression), value by value.
const T_DECIMAL: u8 = 15;
/// A list of floats that are all exactly 32-bit floats (embeddings, as
/// numpy's float32 and Parquet's FLOAT give them): varint count, then 4
/// bytes each, little-endian. Written only where it is shorter than the
/// list of values; read back as the same list of 64-bit floats.
const T_F32_LIST: u8 = 16;
/// The largest scale tried: 10^15 and the mantissa still fit a double's
/// 53 exact bits for the values that matter.
const MAX_SCALE: usize = 15;
const POW10: [f64; MAX_SCALE + 1] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
];

/// The (mantissa, scale) whose quotient is exactly `x`, smallest scale
/// first; `None` for floats no short decimal gives back (and for -0.0,
/// NaN and infinities, which keep their 8 bytes).
fn as_decimal(x: f64) -> Option<(i64, usize)> {
    if !x.is_finite() || x.abs() >= 1e15 {
        return None;
    }
    (0..=MAX_SCALE).find_map(|k| {
        let m = (x * POW10[k]).round();
        // Mantissas beyond 2^53 are not exact as doubles.
        if m.abs() > 9_007_199_254_740_992.0 {
            return None;
        }
        let m = m as i64;
        // Compared as decoded: from the integer (so -0.0 stays 8 bytes).
        ((m as f64 / POW10[k]).to_bits() == x.to_bits()).then_some((m, k))
    })
}

fn from_decimal(v: u64) -> f64 {
    let m = (v >> 5) as i64 ^ -(((v >> 4) & 1) as i64);
    m as f64 / POW10[(v & 15) as usize]
}

/// Deeper nesting than this in stored data can only be damage; refusing it
/// keeps a corrupt record from overflowing the stack.
const MAX_DEPTH: usize = 256;

/// Stored bytes that do not decode: the data is damaged or of another format.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodeError {
    pub what: &'static str,
    pub offset: usize,
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "cannot decode {} at byte {}", self.what, self.offset)
    }
}

impl std::error::Error for DecodeError {}

/// A cursor over encoded bytes that knows its position for error messages.
pub struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    #[inline]
    pub fn new(buf: &'a [u8]) -> Self {
        Reader { buf, pos: 0 }
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.pos >= self.buf.len()
    }

    /// Bytes left to read.
    #[inline]
    pub fn remaining(&self) -> usize {
        self.buf.len().saturating_sub(self.pos)
    }

    pub fn err(&self, what: &'static str) -> DecodeError {
        DecodeError {
            what,
            offset: self.pos,
        }
    }

    #[inline]
    pub fn byte(&mut self) -> Result<u8, DecodeError> {
        let b = *self.buf.get(self.pos).ok_or_else(|| self.err("byte"))?;
        self.pos += 1;
        Ok(b)
    }

    #[inline]
    pub fn bytes(&mut self, n: usize) -> Result<&'a [u8], DecodeError> {
        let end = self.pos.checked_add(n).ok_or_else(|| self.err("length"))?;
        let s = self
            .buf
            .get(self.pos..end)
            .ok_or_else(|| self.err("bytes"))?;
        self.pos = end;
        Ok(s)
    }

    #[inline]
    pub fn varint(&mut self) -> Result<u64, DecodeError> {
        // Most varints a record or a block holds (ids' low bits, lengths,
        // tokens) fit in one byte: read those without the loop.
        if let Some(&b) = self.buf.get(self.pos) {
            if b & 0x80 == 0 {
                self.pos += 1;
                return Ok(u64::from(b));
            }
        }
        self.varint_long()
    }

    fn varint_long(&mut self) -> Result<u64, DecodeError> {
        let mut out = 0u64;
        for shift in (0..64).step_by(7) {
            let b = self.byte()?;
            out |= ((b & 0x7f) as u64) << shift;
            if b & 0x80 == 0 {
                return Ok(out);
            }
        }
        Err(self.err("varint"))
    }

    pub fn zigzag(&mut self) -> Result<i64, DecodeError> {
        let v = self.varint()?;
        Ok((v >> 1) as i64 ^ -((v & 1) as i64))
    }

    #[inline]
    pub fn len(&mut self) -> Result<usize, DecodeError> {
        let n = self.varint()?;
        // A length can never exceed what is left to read; checking here
        // stops a damaged length from allocating gigabytes.
        if n > (self.buf.len() - self.pos.min(self.buf.len())) as u64 {
            return Err(self.err("length"));
        }
        Ok(n as usize)
    }

    pub fn string(&mut self) -> Result<String, DecodeError> {
        let n = self.len()?;
        let at = self.pos;
        let b = self.bytes(n)?;
        String::from_utf8(b.to_vec()).map_err(|_| DecodeError {
            what: "UTF-8 string",
            offset: at,
        })
    }
}

pub fn write_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Appends `b` with its length before it, as [`Reader::string`] and
/// `Reader::len` + `Reader::bytes` read it back.
pub fn write_bytes(out: &mut Vec<u8>, b: &[u8]) {
    write_varint(out, b.len() as u64);
    out.extend_from_slice(b);
}

pub fn read_varint(buf: &[u8]) -> Result<(u64, usize), DecodeError> {
    let mut r = Reader::new(buf);
    let v = r.varint()?;
    Ok((v, r.pos))
}

fn write_zigzag(out: &mut Vec<u8>, v: i64) {
    write_varint(out, ((v << 1) ^ (v >> 63)) as u64);
}

fn write_str(out: &mut Vec<u8>, s: &[u8]) {
    write_varint(out, s.len() as u64);
    out.extend_from_slice(s);
}

/// Appends the record encoding of `v` to `out`.
pub fn encode_value(v: &Value, out: &mut Vec<u8>) {
    match v {
        Value::Null => out.push(T_NULL),
        Value::Bool(false) => out.push(T_FALSE),
        Value::Bool(true) => out.push(T_TRUE),
        Value::Int(i) => {
            out.push(T_INT);
            write_zigzag(out, *i);
        }
        Value::Float(x) => match as_decimal(*x) {
            // Past 2^56 the varint is no shorter than the 8 bytes.
            Some((m, k)) if m.unsigned_abs() < 1 << 50 => {
                out.push(T_DECIMAL);
                write_varint(out, (((m << 1) ^ (m >> 63)) as u64) << 4 | k as u64);
            }
            _ => {
                out.push(T_FLOAT);
                out.extend_from_slice(&x.to_le_bytes());
            }
        },
        Value::String(s) => {
            out.push(T_STRING);
            write_str(out, s.as_bytes());
        }
        Value::Bytes(b) => {
            out.push(T_BYTES);
            write_str(out, b);
        }
        Value::List(items) => {
            let start = out.len();
            out.push(T_LIST);
            write_varint(out, items.len() as u64);
            items.iter().for_each(|i| encode_value(i, out));
            if items.len() >= 2 && out.len() - start > 1 + 9 + 4 * items.len() {
                if let Some(f32s) = exact_f32s(items) {
                    out.truncate(start);
                    out.push(T_F32_LIST);
                    write_varint(out, f32s.len() as u64);
                    f32s.iter()
                        .for_each(|f| out.extend_from_slice(&f.to_le_bytes()));
                }
            }
        }
        Value::Map(m) => {
            out.push(T_MAP);
            write_varint(out, m.len() as u64);
            for (k, v) in m {
                write_str(out, k.as_bytes());
                encode_value(v, out);
            }
        }
        Value::Date(d) => {
            out.push(T_DATE);
            write_zigzag(out, d.days);
        }
        Value::LocalTime(t) => {
            out.push(T_LOCAL_TIME);
            write_varint(out, t.nanos);
        }
        Value::Time(t) => {
            out.push(T_TIME);
            write_varint(out, t.nanos);
            write_zigzag(out, t.offset_secs as i64);
        }
        Value::LocalDateTime(t) => {
            out.push(T_LOCAL_DATETIME);
            write_zigzag(out, t.secs);
            write_varint(out, t.nanos as u64);
        }
        Value::DateTime(t) => {
            out.push(T_DATETIME);
            write_zigzag(out, t.secs);
            write_varint(out, t.nanos as u64);
            write_zigzag(out, t.offset_secs as i64);
            match &t.zone {
                None => write_varint(out, 0),
                Some(z) => {
                    write_varint(out, z.len() as u64 + 1);
                    out.extend_from_slice(z.as_bytes());
                }
            }
        }
        Value::Duration(d) => {
            out.push(T_DURATION);
            write_zigzag(out, d.months);
            write_zigzag(out, d.days);
            write_zigzag(out, d.secs);
            write_zigzag(out, d.nanos as i64);
        }
        // Storage checks `Value::is_storable` before encoding; an entity
        // that slips past is written as null rather than as a dangling id.
        Value::Node(_) | Value::Relationship(_) | Value::Path(_) => {
            debug_assert!(false, "graph entities are not storable");
            out.push(T_NULL)
        }
    }
}

/// The list as 32-bit floats, when every item is a float that one holds
/// exactly (same bits back).
fn exact_f32s(items: &[Value]) -> Option<Vec<f32>> {
    items
        .iter()
        .map(|v| match v {
            Value::Float(x) if ((*x as f32) as f64).to_bits() == x.to_bits() => Some(*x as f32),
            _ => None,
        })
        .collect()
}

/// Decodes one value from the reader.
pub fn decode_value(r: &mut Reader<'_>) -> Result<Value, DecodeError> {
    decode_at(r, 0)
}

/// Moves the reader past one value without building it: for reading one
/// property of a record without decoding the others.
pub fn skip_value(r: &mut Reader<'_>) -> Result<(), DecodeError> {
    skip_at(r, 0)
}

fn skip_at(r: &mut Reader<'_>, depth: usize) -> Result<(), DecodeError> {
    if depth > MAX_DEPTH {
        return Err(r.err("value nested too deeply"));
    }
    match r.byte()? {
        T_NULL | T_FALSE | T_TRUE => {}
        T_INT | T_DATE => {
            r.zigzag()?;
        }
        T_FLOAT => {
            r.bytes(8)?;
        }
        T_DECIMAL => {
            r.varint()?;
        }
        T_STRING | T_BYTES => {
            let n = r.len()?;
            r.bytes(n)?;
        }
        T_LIST => {
            for _ in 0..r.len()? {
                skip_at(r, depth + 1)?;
            }
        }
        T_F32_LIST => {
            let n = r.len()?;
            r.bytes(n.checked_mul(4).ok_or_else(|| r.err("length"))?)?;
        }
        T_MAP => {
            for _ in 0..r.len()? {
                let n = r.len()?;
                r.bytes(n)?;
                skip_at(r, depth + 1)?;
            }
        }
        T_LOCAL_TIME => {
            r.varint()?;
        }
        T_TIME => {
            r.varint()?;
            r.zigzag()?;
        }
        T_LOCAL_DATETIME => {
            r.zigzag()?;
            r.varint()?;
        }
        T_DATETIME => {
            r.zigzag()?;
            r.varint()?;
            r.zigzag()?;
            let zl = r.varint()?;
            if zl > 0 {
                r.bytes((zl - 1) as usize)?;
            }
        }
        T_DURATION => {
            for _ in 0..4 {
                r.zigzag()?;
            }
        }
        _ => return Err(r.err("value type")),
    }
    Ok(())
}

fn small<T: TryFrom<i64>>(r: &Reader<'_>, v: i64, what: &'static str) -> Result<T, DecodeError> {
    T::try_from(v).map_err(|_| r.err(what))
}

fn decode_at(r: &mut Reader<'_>, depth: usize) -> Result<Value, DecodeError> {
    if depth > MAX_DEPTH {
        return Err(r.err("value nested too deeply"));
    }
    Ok(match r.byte()? {
        T_NULL => Value::Null,
        T_FALSE => Value::Bool(false),
        T_TRUE => Value::Bool(true),
        T_INT => Value::Int(r.zigzag()?),
        T_FLOAT => {
            let b = r.bytes(8)?;
            let mut a = [0u8; 8];
            a.copy_from_slice(b);
            Value::Float(f64::from_le_bytes(a))
        }
        T_DECIMAL => Value::Float(from_decimal(r.varint()?)),
        T_STRING => Value::String(r.string()?),
        T_BYTES => {
            let n = r.len()?;
            Value::Bytes(r.bytes(n)?.to_vec())
        }
        T_LIST => {
            let n = r.len()?;
            let mut items = Vec::with_capacity(n);
            for _ in 0..n {
                items.push(decode_at(r, depth + 1)?);
            }
            Value::List(items)
        }
        T_F32_LIST => {
            let n = r.len()?;
            let b = r.bytes(n.checked_mul(4).ok_or_else(|| r.err("length"))?)?;
            Value::List(
                b.chunks_exact(4)
                    .map(|c| Value::Float(f64::from(f32::from_le_bytes([c[0], c[1], c[2], c[3]]))))
                    .collect(),
            )
        }
        T_MAP => {
            let n = r.len()?;
            let mut m = BTreeMap::new();
            for _ in 0..n {
                let k = r.string()?;
                m.insert(k, decode_at(r, depth + 1)?);
            }
            Value::Map(m)
        }
        T_DATE => {
            let d = r.zigzag()?;
            Value::Date(Date::from_days(d).ok_or_else(|| r.err("date"))?)
        }
        T_LOCAL_TIME => Value::LocalTime(LocalTime { nanos: r.varint()? }),
        T_TIME => {
            let nanos = r.varint()?;
            let off = r.zigzag()?;
            Value::Time(Time {
                nanos,
                offset_secs: small(r, off, "time offset")?,
            })
        }
        T_LOCAL_DATETIME => {
            let secs = r.zigzag()?;
            let nanos = r.varint()? as i64;
            Value::LocalDateTime(LocalDateTime {
                secs,
                nanos: small(r, nanos, "nanoseconds")?,
            })
        }
        T_DATETIME => {
            let secs = r.zigzag()?;
            let nanos = r.varint()? as i64;
            let off = r.zigzag()?;
            let zl = r.varint()?;
            let zone = if zl == 0 {
                None
            } else {
                let b = r.bytes((zl - 1) as usize)?;
                Some(String::from_utf8(b.to_vec()).map_err(|_| r.err("zone name"))?)
            };
            Value::DateTime(DateTime {
                secs,
                nanos: small(r, nanos, "nanoseconds")?,
                offset_secs: small(r, off, "offset")?,
                zone,
            })
        }
        T_DURATION => {
            let months = r.zigzag()?;
            let days = r.zigzag()?;
            let secs = r.zigzag()?;
            let n = r.zigzag()?;
            Value::Duration(Duration {
                months,
                days,
                secs,
                nanos: small(r, n, "nanoseconds")?,
            })
        }
        _ => return Err(r.err("value tag")),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One-byte varints take a path of their own: both paths, at their
    /// edges, read back what was written, and a truncated or overlong
    /// varint is an error.
    #[test]
    fn varints_read_back_at_every_width() {
        let values = [
            0,
            1,
            0x7f,
            0x80,
            0x3fff,
            0x4000,
            u64::from(u32::MAX),
            u64::MAX,
        ];
        let mut out = Vec::new();
        for v in values {
            write_varint(&mut out, v);
        }
        let mut r = Reader::new(&out);
        for v in values {
            assert_eq!(r.varint().unwrap(), v);
        }
        assert!(r.is_empty() && r.varint().is_err());
        assert_eq!(read_varint(&[0x80, 0x01]).unwrap(), (0x80, 2));
        assert!(read_varint(&[0x80]).is_err());
        assert!(read_varint(&[0xff; 11]).is_err());
    }

    fn sample() -> Vec<Value> {
        let mut m = BTreeMap::new();
        m.insert("k".to_string(), Value::List(vec![Value::Null, 1.into()]));
        vec![
            Value::Null,
            true.into(),
            i64::MIN.into(),
            i64::MAX.into(),
            (-0.5).into(),
            "héllo".into(),
            Value::Bytes(vec![0, 255]),
            Value::Map(m),
            Value::Date(Date { days: -3 }),
            Value::LocalTime(LocalTime { nanos: 5 }),
            Value::Time(Time {
                nanos: 7,
                offset_secs: -3600,
            }),
            Value::LocalDateTime(LocalDateTime { secs: -9, nanos: 1 }),
            Value::DateTime(DateTime {
                secs: 1,
                nanos: 2,
                offset_secs: 60,
                zone: Some("UTC".into()),
            }),
            Value::Duration(Duration {
                months: -1,
                days: 2,
                secs: -3,
                nanos: 4,
            }),
        ]
    }

    #[test]
    fn round_trips() {
        for v in sample() {
            let mut buf = Vec::new();
            encode_value(&v, &mut buf);
            let mut r = Reader::new(&buf);
            assert_eq!(decode_value(&mut r).unwrap(), v);
            assert!(r.is_empty());
        }
    }

    fn encoded(v: &Value) -> Vec<u8> {
        let mut buf = Vec::new();
        encode_value(v, &mut buf);
        buf
    }

    /// Every float comes back with the same bits, however it was stored.
    #[test]
    fn floats_keep_their_bits() {
        let special = [
            0.0,
            -0.0,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::MIN_POSITIVE,
            f64::MAX,
            f64::EPSILON,
            0.1 + 0.2,
            9_007_199_254_740_993.0,
            1e15,
            -999_999_999_999_999.9,
        ];
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        let random = std::iter::repeat_with(move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        });
        // Arbitrary bit patterns, and decimals of every scale.
        let bits = random.take(20_000).map(f64::from_bits);
        let decimals = random
            .take(20_000)
            .enumerate()
            .map(|(i, r)| (r % 2_000_000) as f64 / POW10[i % 16] - 1000.0);
        for x in special.into_iter().chain(bits).chain(decimals) {
            let buf = encoded(&Value::Float(x));
            let mut r = Reader::new(&buf);
            match decode_value(&mut r).unwrap() {
                Value::Float(y) => assert_eq!(y.to_bits(), x.to_bits(), "{x:e}"),
                other => panic!("{other:?}"),
            }
            assert!(r.is_empty());
            let mut r = Reader::new(&buf);
            skip_value(&mut r).unwrap();
            assert!(r.is_empty());
        }
    }

    /// Embeddings take 4 bytes a component, and come back the same; lists
    /// that are not all exact f32 floats, or shorter as values, stay lists.
    #[test]
    fn f32_lists_are_compact() {
        let mut state = 0x1234_5678_9abc_def0u64;
        let emb: Vec<Value> = (0..1024)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                Value::Float(f64::from((state >> 40) as f32 / 16_777_216.0 - 0.5))
            })
            .collect();
        let v = Value::List(emb.clone());
        let buf = encoded(&v);
        assert_eq!(buf[0], T_F32_LIST);
        assert!(buf.len() <= 3 + 4 * 1024, "{}", buf.len());
        let mut r = Reader::new(&buf);
        assert_eq!(decode_value(&mut r).unwrap(), v);
        let mut r = Reader::new(&buf);
        skip_value(&mut r).unwrap();
        assert!(r.is_empty());
        for cut in 0..buf.len().min(40) {
            assert!(decode_value(&mut Reader::new(&buf[..cut])).is_err());
        }
        // -0.0 keeps its sign; a float f32 cannot hold keeps the list form.
        let signed = Value::List(vec![Value::Float(-0.0), Value::Float(0.1f32 as f64)]);
        assert_eq!(
            decode_value(&mut Reader::new(&encoded(&signed))).unwrap(),
            signed
        );
        let mut mixed = emb.clone();
        mixed.push(Value::Float(0.1));
        assert_eq!(encoded(&Value::List(mixed))[0], T_LIST);
        let short = Value::List(vec![Value::Float(0.5), Value::Float(1.5)]);
        assert_eq!(encoded(&short)[0], T_LIST);
        let mut ints = emb;
        ints.push(Value::Int(1));
        assert_eq!(encoded(&Value::List(ints))[0], T_LIST);
    }

    #[test]
    fn decimal_floats_are_short() {
        for (x, len) in [
            (0.0, 2),
            (1.5, 3),
            (-2.25, 3),
            (523.417, 5),
            (0.001, 2),
            (1e6, 5),
            (1e14, 9),
        ] {
            assert_eq!(encoded(&Value::Float(x)).len(), len, "{x}");
        }
        // -0.0 and a third keep all 8 bytes.
        assert_eq!(encoded(&Value::Float(-0.0)).len(), 9);
        assert_eq!(encoded(&Value::Float(1.0 / 3.0)).len(), 9);
    }

    #[test]
    fn skipping_consumes_exactly_one_value() {
        let mut buf = Vec::new();
        for v in sample() {
            encode_value(&v, &mut buf);
        }
        encode_value(&Value::List(sample()), &mut buf);
        let mut r = Reader::new(&buf);
        for v in sample().into_iter().chain([Value::List(sample())]) {
            let mut copy = Reader::new(&buf[buf.len() - r.remaining()..]);
            skip_value(&mut r).unwrap();
            assert_eq!(decode_value(&mut copy).unwrap(), v);
            assert_eq!(copy.remaining(), r.remaining());
        }
        assert!(r.is_empty());
        for cut in 0..buf.len() {
            let mut r = Reader::new(&buf[..cut]);
            while !r.is_empty() {
                if skip_value(&mut r).is_err() {
                    break;
                }
            }
        }
    }

    #[test]
    fn truncated_input_is_an_error_not_a_panic() {
        for v in sample() {
            let mut buf = Vec::new();
            encode_value(&v, &mut buf);
            for cut in 0..buf.len() {
                let mut r = Reader::new(&buf[..cut]);
                assert!(decode_value(&mut r).is_err(), "{v:?} cut at {cut}");
            }
        }
        let mut r = Reader::new(&[T_LIST, 0xff, 0xff, 0xff, 0xff, 0x0f]);
        assert!(decode_value(&mut r).is_err());
    }
}

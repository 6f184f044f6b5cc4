//! PackStream v1, the value encoding of Bolt: a decoder that refuses what a
//! hostile peer could send (nesting without end, lengths beyond the
//! message) and an encoder. Everything is big-endian.

use std::fmt;

/// A decoded PackStream value. Structures keep their tag; what they mean
/// (a date, a node) is decided by the layer above ([`crate::values`]).
#[derive(Debug, Clone, PartialEq)]
pub enum Pack {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Bytes(Vec<u8>),
    String(String),
    List(Vec<Pack>),
    /// Entries in the order they came; keys are strings.
    Map(Vec<(String, Pack)>),
    Struct(u8, Vec<Pack>),
}

impl Pack {
    /// The value under `key` of a map; `None` for other values too.
    pub fn get(&self, key: &str) -> Option<&Pack> {
        match self {
            Pack::Map(entries) => entries.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Pack::String(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_int(&self) -> Option<i64> {
        match self {
            Pack::Int(i) => Some(*i),
            _ => None,
        }
    }

    pub fn string(s: impl Into<String>) -> Pack {
        Pack::String(s.into())
    }

    /// A map from `(key, value)` pairs.
    pub fn map<const N: usize>(entries: [(&str, Pack); N]) -> Pack {
        Pack::Map(
            entries
                .into_iter()
                .map(|(k, v)| (k.to_string(), v))
                .collect(),
        )
    }
}

/// Why a message could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DecodeError {
    /// The message ended inside a value.
    Truncated,
    /// A marker byte that PackStream v1 does not define.
    UnknownMarker(u8),
    /// Lists, maps and structures nested deeper than [`MAX_DEPTH`].
    TooDeep,
    /// A map key that is not a string.
    KeyNotString,
    /// A string that is not UTF-8.
    BadUtf8,
    /// Bytes left over after the message's value.
    Trailing(usize),
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DecodeError::Truncated => f.write_str("the message ends inside a value"),
            DecodeError::UnknownMarker(m) => write!(f, "unknown PackStream marker 0x{m:02X}"),
            DecodeError::TooDeep => write!(f, "values nested deeper than {MAX_DEPTH} levels"),
            DecodeError::KeyNotString => f.write_str("a map key that is not a string"),
            DecodeError::BadUtf8 => f.write_str("a string that is not valid UTF-8"),
            DecodeError::Trailing(n) => write!(f, "{n} bytes after the message's value"),
        }
    }
}

impl std::error::Error for DecodeError {}

/// How deeply lists, maps and structures may nest in one message: far more
/// than any parameter a client sends, and few enough that decoding (which
/// recurses) cannot exhaust the stack.
pub const MAX_DEPTH: usize = 100;

/// Decodes one value that fills `bytes` exactly (a Bolt message).
pub fn decode(bytes: &[u8]) -> Result<Pack, DecodeError> {
    let mut d = Decoder { buf: bytes, pos: 0 };
    let v = d.value(0)?;
    match bytes.len() - d.pos {
        0 => Ok(v),
        n => Err(DecodeError::Trailing(n)),
    }
}

struct Decoder<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl Decoder<'_> {
    fn take(&mut self, n: usize) -> Result<&[u8], DecodeError> {
        let end = self.pos.checked_add(n).ok_or(DecodeError::Truncated)?;
        let s = self.buf.get(self.pos..end).ok_or(DecodeError::Truncated)?;
        self.pos = end;
        Ok(s)
    }

    fn byte(&mut self) -> Result<u8, DecodeError> {
        Ok(self.take(1)?[0])
    }

    fn be<const N: usize>(&mut self) -> Result<[u8; N], DecodeError> {
        let mut a = [0u8; N];
        a.copy_from_slice(self.take(N)?);
        Ok(a)
    }

    /// A length in the size class `width` (1, 2 or 4 bytes).
    fn len(&mut self, width: u8) -> Result<usize, DecodeError> {
        Ok(match width {
            1 => usize::from(self.byte()?),
            2 => usize::from(u16::from_be_bytes(self.be()?)),
            _ => u32::from_be_bytes(self.be()?) as usize,
        })
    }

    /// Room for `n` items of at least one byte each: never more than the
    /// bytes left, whatever the length field claims.
    fn capacity(&self, n: usize) -> usize {
        n.min(self.buf.len() - self.pos)
    }

    fn value(&mut self, depth: usize) -> Result<Pack, DecodeError> {
        let m = self.byte()?;
        Ok(match m {
            0x00..=0x7F => Pack::Int(i64::from(m)),
            0xF0..=0xFF => Pack::Int(i64::from(m as i8)),
            0xC0 => Pack::Null,
            0xC1 => Pack::Float(f64::from_be_bytes(self.be()?)),
            0xC2 => Pack::Bool(false),
            0xC3 => Pack::Bool(true),
            0xC8 => Pack::Int(i64::from(i8::from_be_bytes(self.be()?))),
            0xC9 => Pack::Int(i64::from(i16::from_be_bytes(self.be()?))),
            0xCA => Pack::Int(i64::from(i32::from_be_bytes(self.be()?))),
            0xCB => Pack::Int(i64::from_be_bytes(self.be()?)),
            0xCC..=0xCE => {
                let n = self.len(1 << (m - 0xCC))?;
                Pack::Bytes(self.take(n)?.to_vec())
            }
            0x80..=0x8F => self.string(usize::from(m & 0x0F))?,
            0xD0..=0xD2 => {
                let n = self.len(1 << (m - 0xD0))?;
                self.string(n)?
            }
            0x90..=0x9F => Pack::List(self.items(usize::from(m & 0x0F), depth)?),
            0xD4..=0xD6 => {
                let n = self.len(1 << (m - 0xD4))?;
                Pack::List(self.items(n, depth)?)
            }
            0xA0..=0xAF => self.map(usize::from(m & 0x0F), depth)?,
            0xD8..=0xDA => {
                let n = self.len(1 << (m - 0xD8))?;
                self.map(n, depth)?
            }
            0xB0..=0xBF => {
                let n = usize::from(m & 0x0F);
                let tag = self.byte()?;
                Pack::Struct(tag, self.items(n, depth)?)
            }
            other => return Err(DecodeError::UnknownMarker(other)),
        })
    }

    fn string(&mut self, n: usize) -> Result<Pack, DecodeError> {
        let bytes = self.take(n)?;
        let s = std::str::from_utf8(bytes).map_err(|_| DecodeError::BadUtf8)?;
        Ok(Pack::String(s.to_string()))
    }

    /// The `n` values of a list or a structure's fields.
    fn items(&mut self, n: usize, depth: usize) -> Result<Vec<Pack>, DecodeError> {
        if depth >= MAX_DEPTH {
            return Err(DecodeError::TooDeep);
        }
        let mut items = Vec::with_capacity(self.capacity(n));
        for _ in 0..n {
            items.push(self.value(depth + 1)?);
        }
        Ok(items)
    }

    fn map(&mut self, n: usize, depth: usize) -> Result<Pack, DecodeError> {
        if depth >= MAX_DEPTH {
            return Err(DecodeError::TooDeep);
        }
        let mut entries = Vec::with_capacity(self.capacity(n) / 2);
        for _ in 0..n {
            let Pack::String(k) = self.value(depth + 1)? else {
                return Err(DecodeError::KeyNotString);
            };
            let v = self.value(depth + 1)?;
            entries.push((k, v));
        }
        Ok(Pack::Map(entries))
    }
}

/// Writes PackStream values into a buffer. Sizes beyond PackStream's
/// 32-bit lengths cannot come from Plexus values (a message is bounded
/// long before), so headers take `usize` and saturate nothing: the
/// caller's values are in memory already.
#[derive(Default)]
pub struct Encoder {
    pub out: Vec<u8>,
}

impl Encoder {
    pub fn null(&mut self) {
        self.out.push(0xC0);
    }

    pub fn bool(&mut self, b: bool) {
        self.out.push(if b { 0xC3 } else { 0xC2 });
    }

    pub fn int(&mut self, i: i64) {
        if (-16..=127).contains(&i) {
            self.out.push(i as u8);
        } else if let Ok(v) = i8::try_from(i) {
            self.out.push(0xC8);
            self.out.extend_from_slice(&v.to_be_bytes());
        } else if let Ok(v) = i16::try_from(i) {
            self.out.push(0xC9);
            self.out.extend_from_slice(&v.to_be_bytes());
        } else if let Ok(v) = i32::try_from(i) {
            self.out.push(0xCA);
            self.out.extend_from_slice(&v.to_be_bytes());
        } else {
            self.out.push(0xCB);
            self.out.extend_from_slice(&i.to_be_bytes());
        }
    }

    pub fn float(&mut self, f: f64) {
        self.out.push(0xC1);
        self.out.extend_from_slice(&f.to_be_bytes());
    }

    /// A size header: the tiny form below 16 when there is one, else the
    /// 8-, 16- or 32-bit form starting at `wide`.
    fn header(&mut self, tiny: Option<u8>, wide: u8, n: usize) {
        match (tiny, u8::try_from(n), u16::try_from(n)) {
            (Some(t), Ok(b), _) if b < 16 => self.out.push(t | b),
            (_, Ok(b), _) => self.out.extend_from_slice(&[wide, b]),
            (_, _, Ok(s)) => {
                self.out.push(wide + 1);
                self.out.extend_from_slice(&s.to_be_bytes());
            }
            _ => {
                self.out.push(wide + 2);
                let n = u32::try_from(n).unwrap_or(u32::MAX);
                self.out.extend_from_slice(&n.to_be_bytes());
            }
        }
    }

    pub fn string(&mut self, s: &str) {
        self.header(Some(0x80), 0xD0, s.len());
        self.out.extend_from_slice(s.as_bytes());
    }

    pub fn bytes(&mut self, b: &[u8]) {
        self.header(None, 0xCC, b.len());
        self.out.extend_from_slice(b);
    }

    pub fn list_header(&mut self, n: usize) {
        self.header(Some(0x90), 0xD4, n);
    }

    pub fn map_header(&mut self, n: usize) {
        self.header(Some(0xA0), 0xD8, n);
    }

    /// A structure of `fields` (at most 15) with `tag`.
    pub fn struct_header(&mut self, fields: u8, tag: u8) {
        self.out.push(0xB0 | (fields & 0x0F));
        self.out.push(tag);
    }

    pub fn pack(&mut self, v: &Pack) {
        match v {
            Pack::Null => self.null(),
            Pack::Bool(b) => self.bool(*b),
            Pack::Int(i) => self.int(*i),
            Pack::Float(f) => self.float(*f),
            Pack::Bytes(b) => self.bytes(b),
            Pack::String(s) => self.string(s),
            Pack::List(items) => {
                self.list_header(items.len());
                items.iter().for_each(|x| self.pack(x));
            }
            Pack::Map(entries) => {
                self.map_header(entries.len());
                for (k, v) in entries {
                    self.string(k);
                    self.pack(v);
                }
            }
            Pack::Struct(tag, fields) => {
                self.struct_header(fields.len() as u8, *tag);
                fields.iter().for_each(|x| self.pack(x));
            }
        }
    }
}

/// The bytes of one value.
pub fn encode(v: &Pack) -> Vec<u8> {
    let mut e = Encoder::default();
    e.pack(v);
    e.out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round(v: Pack) {
        assert_eq!(decode(&encode(&v)), Ok(v));
    }

    #[test]
    fn integers_take_the_smallest_form_and_round_trip() {
        for (i, len) in [
            (0, 1),
            (-16, 1),
            (127, 1),
            (-17, 2),
            (-128, 2),
            (128, 3),
            (-129, 3),
            (32768, 5),
            (1 << 31, 9),
            (i64::MIN, 9),
            (i64::MAX, 9),
        ] {
            assert_eq!(encode(&Pack::Int(i)).len(), len, "{i}");
            round(Pack::Int(i));
        }
    }

    #[test]
    fn containers_round_trip_at_every_size_class() {
        for n in [0usize, 15, 16, 255, 256, 70_000] {
            round(Pack::String("é".repeat(n / 2)));
            round(Pack::Bytes(vec![7; n]));
            round(Pack::List((0..n as i64).map(Pack::Int).collect()));
            round(Pack::Map(
                (0..n.min(300))
                    .map(|i| (i.to_string(), Pack::Null))
                    .collect(),
            ));
        }
        round(Pack::Struct(
            b'N',
            vec![Pack::Int(1), Pack::List(vec![]), Pack::Map(vec![])],
        ));
        round(Pack::Float(-0.5));
        round(Pack::Bool(true));
    }

    #[test]
    fn hostile_input_is_refused_not_trusted() {
        // A list claiming 4 billion items in 5 bytes: no allocation of that size.
        assert_eq!(
            decode(&[0xD6, 0xFF, 0xFF, 0xFF, 0xFF]),
            Err(DecodeError::Truncated)
        );
        assert_eq!(
            decode(&[0xD2, 0xFF, 0xFF, 0xFF, 0xFF, b'a']),
            Err(DecodeError::Truncated)
        );
        assert_eq!(decode(&[0xC7]), Err(DecodeError::UnknownMarker(0xC7)));
        assert_eq!(decode(&[0xA1, 0x01, 0x01]), Err(DecodeError::KeyNotString));
        assert_eq!(decode(&[0x81, 0xFF]), Err(DecodeError::BadUtf8));
        assert_eq!(decode(&[0x01, 0x02]), Err(DecodeError::Trailing(1)));
        assert_eq!(decode(&[]), Err(DecodeError::Truncated));
        // A list inside a list, a hundred thousand deep.
        let deep = vec![0x91; 100_000];
        assert_eq!(decode(&deep), Err(DecodeError::TooDeep));
    }

    #[test]
    fn map_lookup() {
        let m = Pack::map([("n", Pack::Int(5)), ("db", Pack::string("x"))]);
        assert_eq!(m.get("n").and_then(Pack::as_int), Some(5));
        assert_eq!(m.get("db").and_then(Pack::as_str), Some("x"));
        assert_eq!(m.get("nope"), None);
    }
}

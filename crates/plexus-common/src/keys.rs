//! Order-preserving key encoding: the byte order of encoded values equals the
//! order of the values within one type, so that ordered key-value stores can
//! answer range queries on indexes with a plain range scan.
//!
//! Each value starts with a type tag, so different types never interleave.
//! Variable-length parts (strings, bytes, lists, maps) are self-delimiting,
//! which makes composite keys (value followed by an id) sort correctly.

use crate::value::Value;

const K_NULL: u8 = 0x01;
const K_FALSE: u8 = 0x10;
const K_TRUE: u8 = 0x11;
const K_INT: u8 = 0x20;
const K_FLOAT: u8 = 0x21;
const K_STRING: u8 = 0x30;
const K_BYTES: u8 = 0x31;
const K_DATE: u8 = 0x40;
const K_LOCAL_TIME: u8 = 0x41;
const K_TIME: u8 = 0x42;
const K_LOCAL_DATETIME: u8 = 0x43;
const K_DATETIME: u8 = 0x44;
const K_DURATION: u8 = 0x45;
const K_LIST: u8 = 0x50;
const K_MAP: u8 = 0x60;
const K_ENTITY: u8 = 0x70;
/// Ends a list or map; below every tag so a shorter list sorts first.
const K_END: u8 = 0x00;

pub fn push_u32(out: &mut Vec<u8>, v: u32) {
    out.extend_from_slice(&v.to_be_bytes());
}

pub fn push_u64(out: &mut Vec<u8>, v: u64) {
    out.extend_from_slice(&v.to_be_bytes());
}

/// Reads a big-endian u32 at `at`, or `None` when the slice is too short.
pub fn read_u32(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_be_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

/// Reads a big-endian u64 at `at`, or `None` when the slice is too short.
pub fn read_u64(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_be_bytes(b.get(at..at + 8)?.try_into().ok()?))
}

/// Appends `b` so that more key parts can follow: each `00` becomes
/// `00 FF`, and [`KEY_PART_END`] (`00 01`, below any content byte) ends
/// it. Keys then group by `b` and sort in its order, a shorter `b` before
/// its extensions.
pub fn push_escaped(out: &mut Vec<u8>, b: &[u8]) {
    // Whole runs between zeros, into room reserved once: index keys of
    // strings are built on every write that touches an indexed value.
    out.reserve(b.len() + KEY_PART_END.len());
    for (i, run) in b.split(|&c| c == 0).enumerate() {
        if i > 0 {
            out.extend_from_slice(&[0, 0xff]);
        }
        out.extend_from_slice(run);
    }
    out.extend_from_slice(&KEY_PART_END);
}

/// Reads the part [`push_escaped`] wrote at the start of `b`: its bytes,
/// and how many bytes of `b` it took (its end included). `None` when `b`
/// holds no whole part.
pub fn read_escaped(b: &[u8]) -> Option<(Vec<u8>, usize)> {
    let mut out = Vec::new();
    let mut i = 0;
    loop {
        match (*b.get(i)?, b.get(i + 1)) {
            (0, Some(0xFF)) => {
                out.push(0);
                i += 2;
            }
            (0, Some(1)) => return Some((out, i + 2)),
            (0, _) => return None,
            (c, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
}

/// What ends a part written by [`push_escaped`].
pub const KEY_PART_END: [u8; 2] = [0x00, 0x01];

/// Appends `v` as 8 bytes that sort as the integers do.
pub fn push_i64(out: &mut Vec<u8>, v: i64) {
    push_u64(out, (v as u64) ^ (1 << 63));
}

/// Reads an integer [`push_i64`] wrote at `at`.
pub fn read_i64(b: &[u8], at: usize) -> Option<i64> {
    read_u64(b, at).map(|u| (u ^ (1 << 63)) as i64)
}

/// Appends the order-preserving encoding of `v`.
///
/// Floats are ordered by IEEE total order after folding -0.0 into 0.0 and all
/// NaNs into one, so equal values (as Cypher compares them) encode equally.
/// Date-times with a zone are keyed by their instant.
pub fn encode_key_value(v: &Value, out: &mut Vec<u8>) {
    match v {
        Value::Null => out.push(K_NULL),
        Value::Bool(false) => out.push(K_FALSE),
        Value::Bool(true) => out.push(K_TRUE),
        Value::Int(i) => {
            out.push(K_INT);
            push_i64(out, *i);
        }
        Value::Float(x) => {
            out.push(K_FLOAT);
            let x = if *x == 0.0 {
                0.0
            } else if x.is_nan() {
                f64::NAN
            } else {
                *x
            };
            let bits = x.to_bits();
            let ordered = if bits >> 63 == 1 {
                !bits
            } else {
                bits | (1 << 63)
            };
            push_u64(out, ordered);
        }
        Value::String(s) => {
            out.push(K_STRING);
            push_escaped(out, s.as_bytes());
        }
        Value::Bytes(b) => {
            out.push(K_BYTES);
            push_escaped(out, b);
        }
        Value::Date(d) => {
            out.push(K_DATE);
            push_i64(out, d.days);
        }
        Value::LocalTime(t) => {
            out.push(K_LOCAL_TIME);
            push_u64(out, t.nanos);
        }
        Value::Time(t) => {
            out.push(K_TIME);
            push_i64(out, t.nanos as i64 - t.offset_secs as i64 * 1_000_000_000);
            push_i64(out, t.offset_secs as i64);
        }
        Value::LocalDateTime(t) => {
            out.push(K_LOCAL_DATETIME);
            push_i64(out, t.secs);
            push_u32(out, t.nanos);
        }
        Value::DateTime(t) => {
            out.push(K_DATETIME);
            push_i64(out, t.secs);
            push_u32(out, t.nanos);
        }
        Value::Duration(d) => {
            out.push(K_DURATION);
            push_i64(out, d.months);
            push_i64(out, d.days);
            push_i64(out, d.secs);
            push_i64(out, d.nanos as i64);
        }
        // Entities are keyed by identity so that query operators can group
        // and deduplicate rows by them; they are never stored in indexes.
        Value::Node(n) => {
            out.push(K_ENTITY);
            out.push(0);
            push_u64(out, n.id);
        }
        Value::Relationship(r) => {
            out.push(K_ENTITY);
            out.push(1);
            push_u64(out, r.id);
        }
        Value::Path(p) => {
            out.push(K_ENTITY);
            out.push(2);
            push_u64(out, p.nodes.len() as u64);
            p.nodes.iter().for_each(|n| push_u64(out, n.id));
            p.rels.iter().for_each(|r| push_u64(out, r.id));
        }
        Value::List(items) => {
            out.push(K_LIST);
            items.iter().for_each(|i| encode_key_value(i, out));
            out.push(K_END);
        }
        Value::Map(m) => {
            out.push(K_MAP);
            for (k, v) in m {
                push_escaped(out, k.as_bytes());
                encode_key_value(v, out);
            }
            out.push(K_END);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_escaped_part_reads_back_with_its_length() {
        for part in [&b""[..], b"ann", b"a\x00b", b"\x00\x00", b"\xff\x00\x01"] {
            let mut k = Vec::new();
            push_escaped(&mut k, part);
            let written = k.len();
            k.extend_from_slice(b"tail");
            assert_eq!(read_escaped(&k), Some((part.to_vec(), written)), "{part:?}");
        }
        // The stored form itself: keys already on disk are compared to it.
        let mut k = Vec::new();
        push_escaped(&mut k, b"\x00a\x00\x00b\x00");
        let mut want = b"\x00\xffa\x00\xff\x00\xffb\x00\xff".to_vec();
        want.extend_from_slice(&KEY_PART_END);
        assert_eq!(k, want);
        assert_eq!(read_escaped(b"ann"), None, "no end");
        assert_eq!(read_escaped(b"a\x00\x07"), None, "a zero not escaped");
    }

    fn key(v: &Value) -> Vec<u8> {
        let mut out = Vec::new();
        encode_key_value(v, &mut out);
        out
    }

    #[test]
    fn ints_and_floats_keep_their_order() {
        let ints = [i64::MIN, -5, -1, 0, 1, 7, i64::MAX];
        for w in ints.windows(2) {
            assert!(key(&w[0].into()) < key(&w[1].into()), "{w:?}");
        }
        let floats = [f64::NEG_INFINITY, -2.5, -0.0, 1e-300, 3.0, f64::INFINITY];
        for w in floats.windows(2) {
            assert!(key(&w[0].into()) <= key(&w[1].into()), "{w:?}");
        }
        assert_eq!(key(&(-0.0).into()), key(&0.0.into()));
    }

    #[test]
    fn strings_sort_bytewise_and_delimit() {
        let words = ["", "\0", "a", "a\0", "a\0b", "ab", "b"];
        for w in words.windows(2) {
            assert!(key(&w[0].into()) < key(&w[1].into()), "{w:?}");
        }
        // A string followed by an id must not be confused with a longer string.
        let mut a = key(&"a".into());
        a.extend_from_slice(&[0xff; 8]);
        assert!(a < key(&"a\0".into()));
    }

    #[test]
    fn lists_sort_elementwise() {
        let l = |v: Vec<i64>| Value::from(v);
        assert!(key(&l(vec![])) < key(&l(vec![1])));
        assert!(key(&l(vec![1])) < key(&l(vec![1, 0])));
        assert!(key(&l(vec![1, 5])) < key(&l(vec![2])));
    }
}

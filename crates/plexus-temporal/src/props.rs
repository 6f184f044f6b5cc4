//! The valid-time property index: every scalar value a version ever gave
//! a node's or a relationship's property, so that equality and range
//! lookups as of an instant cost a prefix scan and a timeline seek per
//! candidate.
//!
//! Entries (valid-time keyspace, after the graph's prefix): `P | key |
//! value | node id` → node id, and `E | key | value | relationship id` →
//! relationship id, each part escaped (`push_escaped`, which keeps byte
//! order), written once per (entity, key, value). The value part keeps
//! the order of values within a type:
//!
//! * a number (integer or float) is `n` and its value as an f64 in an
//!   order-preserving form: an integer beyond 2^53 shares its part with
//!   its neighbours, so lookups are a superset that the caller narrows
//!   (exactly, with `stored_equal` or Cypher's comparison);
//! * a string is `s` and its bytes, cut to [`MAX_VALUE_PART`] bytes and
//!   completed by a hash of the rest (LMDB keys are short); a boolean is
//!   `b0` or `b1`. Lists, maps, temporal values and NaN are not indexed:
//!   their lookups scan.
//!
//! A marker per kind (`M props.2`, `M rprops.2`) says every version of
//! that kind has its entries: written with the graph's first version of
//! the kind, or by `rebuild_indexes` for a store written before the index
//! (or this form of it) existed. Without it the index answers nothing and
//! lookups scan, since an incomplete index would lose rows.

use crate::error::Result;
use crate::timeline::{any_entity, subject, values_between};
use crate::version::Kind;
use plexus_common::{push_escaped, Value};
use plexus_storage::{GraphRead, WriteTxn, VALID_KEY_ROOM};
use std::ops::Bound;

/// Present when every node version has its property entries in this form.
pub(crate) const PROPS_COMPLETE: &[u8] = b"Mprops.2";

/// Whose properties: nodes' or relationships'.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Of {
    Nodes,
    Relationships,
}

impl Of {
    /// The properties of entities of `kind` (claims have none indexed).
    pub(crate) fn for_kind(kind: Kind) -> Option<Of> {
        match kind {
            Kind::Node => Some(Of::Nodes),
            Kind::Edge => Some(Of::Relationships),
            Kind::Claim => None,
        }
    }

    fn tag(self) -> u8 {
        match self {
            Of::Nodes => b'P',
            Of::Relationships => b'E',
        }
    }

    fn marker(self) -> &'static [u8] {
        match self {
            Of::Nodes => PROPS_COMPLETE,
            Of::Relationships => b"Mrprops.2",
        }
    }

    fn kind(self) -> Kind {
        match self {
            Of::Nodes => Kind::Node,
            Of::Relationships => Kind::Edge,
        }
    }
}

/// String parts longer than this are cut and completed by a hash.
const MAX_VALUE_PART: usize = 64;
const NUMBER: u8 = b'n';
const STRING: u8 = b's';

/// An f64 as 8 bytes that sort as the numbers do (-0.0 as 0.0).
fn ordered(f: f64) -> [u8; 8] {
    let bits = if f == 0.0 { 0 } else { f.to_bits() };
    let flipped = if bits >> 63 == 1 {
        !bits
    } else {
        bits | (1 << 63)
    };
    flipped.to_be_bytes()
}

/// A value's part of its entries' keys (see the module), uncut; `None`:
/// not indexed.
fn raw_part(v: &Value) -> Option<Vec<u8>> {
    let number = |f: f64| [&[NUMBER][..], &ordered(f)].concat();
    match v {
        Value::Int(i) => Some(number(*i as f64)),
        Value::Float(f) if f.is_nan() => None,
        Value::Float(f) => Some(number(*f)),
        Value::String(s) => Some([&[STRING][..], s.as_bytes()].concat()),
        Value::Bool(b) => Some(if *b { b"b1".to_vec() } else { b"b0".to_vec() }),
        _ => None,
    }
}

/// A value's part, cut to [`MAX_VALUE_PART`] bytes and a hash of the rest.
fn value_part(v: &Value) -> Option<Vec<u8>> {
    let mut out = raw_part(v)?;
    if out.len() > MAX_VALUE_PART {
        let hash = out[MAX_VALUE_PART..]
            .iter()
            .fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
                (h ^ u64::from(*b)).wrapping_mul(0x100_0000_01b3)
            });
        out.truncate(MAX_VALUE_PART);
        out.extend_from_slice(&hash.to_be_bytes());
    }
    Some(out)
}

/// `P | key` (escaped), or `E | key`.
fn key_prefix(of: Of, key: &str) -> Vec<u8> {
    key_prefix_with_room(of, key, 0)
}

/// [`key_prefix`] with room for `more` bytes after it.
fn key_prefix_with_room(of: Of, key: &str, more: usize) -> Vec<u8> {
    let mut k = Vec::with_capacity(3 + key.len() + more + VALID_KEY_ROOM);
    k.push(of.tag());
    push_escaped(&mut k, key.as_bytes());
    k
}

/// `P | key | value` (each escaped): every entry of one value starts so;
/// with room for `more` bytes after it (an entry's id and its end), so
/// that an entry is built in one allocation.
fn prop_prefix(of: Of, key: &str, part: &[u8], more: usize) -> Vec<u8> {
    let mut k = key_prefix_with_room(of, key, part.len() + 2 + more);
    push_escaped(&mut k, part);
    k
}

/// Before a version of entity `id` is recorded: writes the marker when it
/// is the graph's first version of its kind (of any state, a retraction
/// too).
pub(crate) fn mark_first(txn: &mut WriteTxn, of: Of, id: &str) -> Result<()> {
    if crate::keyspace::get(txn, of.marker())?.is_none() && !any_entity(txn, of.kind())? {
        // The entity as the subject: two first writes of different
        // entities both write the same marker and need not conflict.
        crate::keyspace::write(txn, &subject(of.kind(), id), of.marker(), Some(vec![1]))?;
    }
    Ok(())
}

/// The keys of the entries of a version's properties, onto `out`.
pub(crate) fn entries(
    of: Of,
    id: &str,
    props: &std::collections::BTreeMap<String, Value>,
    out: &mut Vec<Vec<u8>>,
) {
    for (k, value) in props {
        if let Some(part) = value_part(value) {
            let mut entry = prop_prefix(of, k, &part, id.len() + 2);
            push_escaped(&mut entry, id.as_bytes());
            out.push(entry);
        }
    }
}

/// The key of `value`'s entry for node `id` (for tests that remove one).
#[cfg(test)]
pub(crate) fn entry_key(key: &str, value: &Value, id: &str) -> Vec<u8> {
    let mut k = prop_prefix(
        Of::Nodes,
        key,
        &value_part(value).unwrap_or_default(),
        id.len() + 2,
    );
    push_escaped(&mut k, id.as_bytes());
    k
}

/// After a rebuild: every version has its property entries.
pub(crate) fn rebuilt(txn: &mut WriteTxn) -> Result<()> {
    for of in [Of::Nodes, Of::Relationships] {
        if crate::keyspace::get(txn, of.marker())?.is_none() {
            crate::keyspace::write(txn, of.marker(), of.marker(), Some(vec![1]))?;
        }
    }
    Ok(())
}

/// Whether the index holds every entry of the kind.
fn complete(r: &(impl GraphRead + ?Sized), of: Of) -> Result<bool> {
    Ok(crate::keyspace::get(r, of.marker())?.is_some() || !any_entity(r, of.kind())?)
}

/// The ids in the entries in `[lo, hi)`, sorted, once each.
fn ids_between(r: &(impl GraphRead + ?Sized), lo: &[u8], hi: &[u8]) -> Result<Vec<String>> {
    let mut out = values_between(r, lo, hi)?;
    out.sort();
    out.dedup();
    Ok(out)
}

/// The ids of every entity that ever had a value whose part is `value`'s
/// as its property `key`: a superset of those that had `value` (numbers
/// beyond 2^53, cut strings). `None` when the index cannot answer.
pub(crate) fn ever_valued(
    r: &(impl GraphRead + ?Sized),
    of: Of,
    key: &str,
    value: &Value,
) -> Result<Option<Vec<String>>> {
    let Some(part) = value_part(value) else {
        return Ok(None);
    };
    let lo = prop_prefix(of, key, &part, 0);
    let mut hi = lo.clone();
    // Past every id after the value (each part ends `00 01`).
    if let Some(last) = hi.last_mut() {
        *last += 1;
    }
    ever_in_range(r, of, &(lo, hi))
}

/// Keys `[lo, hi)` of the index.
pub(crate) type KeyRange = (Vec<u8>, Vec<u8>);

/// The key range of the entries whose values may lie within the bounds
/// (both ends taken as inclusive: a superset). `None`: the index cannot
/// answer (no bound, or bounds of a type it does not order);
/// `Some(None)`: no value can (bounds of two types).
pub(crate) fn range_keys(
    of: Of,
    key: &str,
    lo: Bound<&Value>,
    hi: Bound<&Value>,
) -> Option<Option<KeyRange>> {
    let part = |b: Bound<&Value>| match b {
        Bound::Included(v) | Bound::Excluded(v) => Some(raw_part(v)),
        Bound::Unbounded => None,
    };
    let (pl, ph) = (part(lo), part(hi));
    let tag = |p: &Option<Option<Vec<u8>>>| p.as_ref().map(|p| p.as_ref().map(|p| p[0]));
    let family = match (tag(&pl), tag(&ph)) {
        (None, None) => return None,
        (Some(a), Some(b)) if a != b => return Some(None),
        (Some(t), _) | (_, Some(t)) => t?,
    };
    if family != NUMBER && family != STRING {
        return None;
    }
    let prefix = key_prefix(of, key);
    let mut lower = prefix.clone();
    match pl.flatten() {
        // A cut string's first bytes sort no later than the string.
        Some(p) => push_escaped_open(&mut lower, &p[..p.len().min(MAX_VALUE_PART)]),
        None => lower.push(family),
    }
    let mut upper = prefix;
    match ph.flatten() {
        Some(p) if p.len() <= MAX_VALUE_PART => {
            push_escaped(&mut upper, &p);
            // Past every entry of the bound's own value.
            if let Some(last) = upper.last_mut() {
                *last += 1;
            }
        }
        // Past every value sharing the bound's first bytes (then a hash).
        Some(p) => {
            push_escaped_open(&mut upper, &p[..MAX_VALUE_PART]);
            upper.extend_from_slice(&[0xFF; 9]);
        }
        None => upper.push(family + 1),
    }
    Some(Some((lower, upper)))
}

/// `bytes` escaped, without the terminator: a prefix of every escaped
/// part that starts with `bytes`.
fn push_escaped_open(out: &mut Vec<u8>, bytes: &[u8]) {
    push_escaped(out, bytes);
    out.truncate(out.len() - plexus_common::KEY_PART_END.len());
}

/// The ids of every entity that ever had a value within `range` (from
/// [`range_keys`]) as its property; `None` when the index is incomplete.
pub(crate) fn ever_in_range(
    r: &(impl GraphRead + ?Sized),
    of: Of,
    range: &KeyRange,
) -> Result<Option<Vec<String>>> {
    if !complete(r, of)? {
        return Ok(None);
    }
    ids_between(r, &range.0, &range.1).map(Some)
}

/// Whether `value` of property `key` falls within `range` as its entries
/// would: the narrowing of a candidate to the version the view shows.
pub(crate) fn within(of: Of, key: &str, value: &Value, range: &KeyRange) -> bool {
    let Some(part) = value_part(value) else {
        return false;
    };
    let k = prop_prefix(of, key, &part, 0);
    range.0 <= k && k < range.1
}

#[cfg(test)]
mod tests {
    use super::*;
    use plexus_storage::stored_equal;

    fn values() -> Vec<Value> {
        vec![
            Value::Float(f64::NEG_INFINITY),
            Value::Int(i64::MIN),
            Value::Float(-1e300),
            Value::Int(-7),
            Value::Float(-7.0),
            Value::Float(-0.5),
            Value::Int(0),
            Value::Float(0.0),
            Value::Float(-0.0),
            Value::Float(1e-300),
            Value::Int(1),
            Value::Float(1.0),
            Value::Float(1.5),
            Value::Int(9_007_199_254_740_992),
            Value::Int(9_007_199_254_740_993),
            Value::Float(9.3e18),
            Value::Int(i64::MAX),
            Value::Float(f64::INFINITY),
            Value::String(String::new()),
            Value::String("1".into()),
            Value::String("a\u{0}b".into()),
            Value::String("ab".into()),
            Value::String("x".repeat(200)),
            Value::String(format!("{}y", "x".repeat(199))),
            Value::String("y".into()),
            Value::Bool(false),
            Value::Bool(true),
        ]
    }

    /// Equal values share a part; numbers and strings keep their order
    /// (as far as the part can tell them apart).
    #[test]
    fn parts_keep_equality_and_order() {
        let vs = values();
        for a in &vs {
            for b in &vs {
                let (pa, pb) = (value_part(a).unwrap(), value_part(b).unwrap());
                if stored_equal(a, b) {
                    assert_eq!(pa, pb, "{a:?} and {b:?}");
                }
                let (ka, kb) = (
                    prop_prefix(Of::Nodes, "k", &pa, 0),
                    prop_prefix(Of::Nodes, "k", &pb, 0),
                );
                let order = match (a, b) {
                    (Value::Int(x), Value::Int(y)) => Some(x.cmp(y)),
                    (Value::Float(x), Value::Float(y)) => x.partial_cmp(y),
                    (Value::String(x), Value::String(y)) if x.len() < 64 && y.len() < 64 => {
                        Some(x.cmp(y))
                    }
                    _ => None,
                };
                // Never the wrong way round (ties where the f64 is one).
                if order == Some(std::cmp::Ordering::Less) {
                    assert!(ka <= kb, "{a:?} < {b:?}");
                }
                assert!(pa.len() <= MAX_VALUE_PART + 8);
            }
        }
        assert_eq!(value_part(&Value::Float(f64::NAN)), None);
        assert_eq!(value_part(&Value::List(vec![])), None);
    }

    /// A range's keys hold every value within it (a superset: the caller
    /// narrows), and nothing of another type.
    #[test]
    fn a_range_covers_every_value_within_it() {
        use std::cmp::Ordering::*;
        let vs = values();
        let cmp = |a: &Value, b: &Value| -> Option<std::cmp::Ordering> {
            match (a, b) {
                (Value::Int(x), Value::Int(y)) => Some(x.cmp(y)),
                (Value::String(x), Value::String(y)) => Some(x.cmp(y)),
                (Value::Int(_) | Value::Float(_), Value::Int(_) | Value::Float(_)) => {
                    let f = |v: &Value| match v {
                        Value::Int(i) => *i as f64,
                        Value::Float(f) => *f,
                        _ => f64::NAN,
                    };
                    f(a).partial_cmp(&f(b))
                }
                _ => None,
            }
        };
        let bounds = |v: &Value| [Bound::Included(v.clone()), Bound::Excluded(v.clone())];
        for lo in &vs {
            for hi in &vs {
                for (l, h) in bounds(lo).into_iter().zip(bounds(hi)) {
                    for (l, h) in [
                        (l.as_ref(), h.as_ref()),
                        (l.as_ref(), Bound::Unbounded),
                        (Bound::Unbounded, h.as_ref()),
                    ] {
                        let Some(range) = range_keys(Of::Nodes, "k", l, h) else {
                            assert!(matches!(lo, Value::Bool(_)) || matches!(hi, Value::Bool(_)));
                            continue;
                        };
                        for v in &vs {
                            let above = match l {
                                Bound::Included(b) => matches!(cmp(v, b), Some(Greater | Equal)),
                                Bound::Excluded(b) => cmp(v, b) == Some(Greater),
                                Bound::Unbounded => true,
                            };
                            let below = match h {
                                Bound::Included(b) => matches!(cmp(v, b), Some(Less | Equal)),
                                Bound::Excluded(b) => cmp(v, b) == Some(Less),
                                Bound::Unbounded => true,
                            };
                            let typed = |b: Bound<&Value>| match b {
                                Bound::Included(b) | Bound::Excluded(b) => cmp(v, b).is_some(),
                                Bound::Unbounded => true,
                            };
                            if above && below && typed(l) && typed(h) {
                                let r = range.as_ref();
                                assert!(
                                    r.is_some_and(|r| within(Of::Nodes, "k", v, r)),
                                    "{v:?} in {l:?}..{h:?}"
                                );
                            }
                            if let (Some(r), Value::Bool(_)) = (&range, v) {
                                assert!(!within(Of::Nodes, "k", v, r));
                            }
                        }
                    }
                }
            }
        }
        assert_eq!(
            range_keys(Of::Nodes, "k", Bound::Unbounded, Bound::Unbounded),
            None
        );
        let (one, s) = (Value::Int(1), Value::String("a".into()));
        assert_eq!(
            range_keys(Of::Nodes, "k", Bound::Included(&one), Bound::Included(&s)),
            Some(None)
        );
    }
}

//! Node and edge records: compact binary, with interned labels, types and
//! property keys. Never JSON on the hot path.
//!
//! Layout: a format byte, the user id, then (nodes) sorted label ids or
//! (edges) source, target and type, then properties sorted by key id.

use crate::error::{Result, StorageError};
use crate::ids::NodeId;
use plexus_common::{decode_value, encode_value, write_varint, Reader, Value};

const RECORD_V1: u8 = 1;

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct NodeRecord {
    pub key: String,
    pub labels: Vec<u32>,
    pub props: Vec<(u32, Value)>,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct EdgeRecord {
    pub key: String,
    pub src: NodeId,
    pub dst: NodeId,
    pub rel_type: u32,
    pub props: Vec<(u32, Value)>,
}

pub(crate) fn prop(props: &[(u32, Value)], key: u32) -> Option<&Value> {
    props
        .binary_search_by_key(&key, |(k, _)| *k)
        .ok()
        .map(|i| &props[i].1)
}

/// Sets (or with `Null`, removes) one property, keeping the list sorted.
pub(crate) fn set_prop(props: &mut Vec<(u32, Value)>, key: u32, value: Value) {
    match props.binary_search_by_key(&key, |(k, _)| *k) {
        Ok(i) if value.is_null() => {
            props.remove(i);
        }
        Ok(i) => props[i].1 = value,
        Err(_) if value.is_null() => {}
        Err(i) => props.insert(i, (key, value)),
    }
}

fn encode_props(props: &[(u32, Value)], out: &mut Vec<u8>) {
    write_varint(out, props.len() as u64);
    for (k, v) in props {
        write_varint(out, *k as u64);
        encode_value(v, out);
    }
}

fn decode_props(r: &mut Reader<'_>) -> Result<Vec<(u32, Value)>> {
    let n = r.len()?;
    let mut props: Vec<(u32, Value)> = Vec::with_capacity(n);
    for _ in 0..n {
        let k = token(r)?;
        // Lookups binary-search the keys: a record whose keys are not
        // strictly ascending would answer wrongly, so it is damaged.
        if props.last().is_some_and(|(last, _)| *last >= k) {
            return Err(StorageError::Corrupt("property keys out of order".into()));
        }
        props.push((k, decode_value(r)?));
    }
    Ok(props)
}

fn token(r: &mut Reader<'_>) -> Result<u32> {
    u32::try_from(r.varint()?).map_err(|_| StorageError::Corrupt("token id out of range".into()))
}

fn header(r: &mut Reader<'_>, what: &str) -> Result<String> {
    let v = r.byte()?;
    if v != RECORD_V1 {
        return Err(StorageError::Corrupt(format!(
            "{what} record of unknown format {v}"
        )));
    }
    Ok(r.string()?)
}

/// Reads the property `key` from encoded props at the reader, skipping the
/// others without building them.
fn find_prop(r: &mut Reader<'_>, key: u32) -> Result<Option<Value>> {
    for _ in 0..r.len()? {
        if token(r)? == key {
            return Ok(Some(decode_value(r)?));
        }
        plexus_common::skip_value(r)?;
    }
    Ok(None)
}

/// Skips a record's format byte and user id.
fn skip_header(r: &mut Reader<'_>, what: &str) -> Result<()> {
    if r.byte()? != RECORD_V1 {
        return Err(StorageError::Corrupt(format!(
            "{what} record of unknown format"
        )));
    }
    let n = r.len()?;
    r.bytes(n)?;
    Ok(())
}

/// An encoded record cut into its user id and the bytes after it, so that
/// a block of records can store the ids prefix-compressed
/// (`edge_blocks.rs`); [`join_key`] puts them back together.
pub(crate) fn split_key(b: &[u8]) -> Result<(&[u8], &[u8])> {
    let mut r = Reader::new(b);
    if r.byte()? != RECORD_V1 {
        return Err(StorageError::Corrupt("record of unknown format".into()));
    }
    let n = r.len()?;
    let key = r.bytes(n)?;
    let rest = r.bytes(r.remaining())?;
    Ok((key, rest))
}

/// The record [`split_key`] cut into `key` and `rest`, into `out`.
pub(crate) fn join_key(key: &[u8], rest: &[u8], out: &mut Vec<u8>) {
    out.clear();
    out.push(RECORD_V1);
    write_varint(out, key.len() as u64);
    out.extend_from_slice(key);
    out.extend_from_slice(rest);
}

/// A node record's user id, without decoding the rest of it.
pub(crate) fn node_user_id(b: &[u8]) -> Result<String> {
    header(&mut Reader::new(b), "node")
}

/// Whether a node record has label `l`, reading no property.
pub(crate) fn node_has_label(b: &[u8], l: u32) -> Result<bool> {
    let mut r = Reader::new(b);
    skip_header(&mut r, "node")?;
    for _ in 0..r.len()? {
        if token(&mut r)? == l {
            return Ok(true);
        }
    }
    Ok(false)
}

/// One property of an encoded node record: what `NodeRecord::decode` then
/// a lookup would give, without decoding the other properties.
pub(crate) fn node_prop(b: &[u8], key: u32) -> Result<Option<Value>> {
    let mut r = Reader::new(b);
    skip_header(&mut r, "node")?;
    for _ in 0..r.len()? {
        token(&mut r)?;
    }
    find_prop(&mut r, key)
}

/// The encoded bytes of property `key` of a node record, when the record
/// has the label (if one is given): one pass over its labels and
/// properties, building no value.
pub(crate) fn node_label_prop_raw(b: &[u8], label: Option<u32>, key: u32) -> Result<Option<&[u8]>> {
    let mut r = Reader::new(b);
    skip_header(&mut r, "node")?;
    let mut labelled = label.is_none();
    for _ in 0..r.len()? {
        labelled |= Some(token(&mut r)?) == label;
    }
    if !labelled {
        return Ok(None);
    }
    for _ in 0..r.len()? {
        let k = token(&mut r)?;
        let start = b.len() - r.remaining();
        plexus_common::skip_value(&mut r)?;
        if k == key {
            return Ok(b.get(start..b.len() - r.remaining()));
        }
    }
    Ok(None)
}

/// A node record's label section (its count and label ids, as stored) and
/// the encoded value of property `key`, without decoding anything else: a
/// column is built from these. Equal label sets have equal sections.
pub(crate) fn node_labels_and_prop_raw(b: &[u8], key: u32) -> Result<(&[u8], Option<&[u8]>)> {
    let mut r = Reader::new(b);
    skip_header(&mut r, "node")?;
    let labels_at = b.len() - r.remaining();
    for _ in 0..r.len()? {
        token(&mut r)?;
    }
    let labels = b
        .get(labels_at..b.len() - r.remaining())
        .unwrap_or_default();
    for _ in 0..r.len()? {
        let k = token(&mut r)?;
        let start = b.len() - r.remaining();
        plexus_common::skip_value(&mut r)?;
        if k == key {
            return Ok((labels, b.get(start..b.len() - r.remaining())));
        }
    }
    Ok((labels, None))
}

/// The label ids of a label section from [`node_labels_and_prop_raw`].
pub(crate) fn label_section(b: &[u8]) -> Result<Vec<u32>> {
    let mut r = Reader::new(b);
    (0..r.len()?).map(|_| token(&mut r)).collect()
}

/// The user id and the type of an encoded edge record, its properties
/// left undecoded (`type(r)` and `elementId(r)` need no more).
pub(crate) fn edge_key_and_type(key: &[u8], rest: &[u8]) -> Result<(String, u32)> {
    let mut r = Reader::new(rest);
    r.varint()?;
    r.varint()?;
    let t = u32::try_from(r.varint()?)
        .map_err(|_| StorageError::Corrupt("edge record with a type id out of range".into()))?;
    Ok((user_id(key)?, t))
}

/// One property of an edge record, given as [`split_key`] cuts it (the user
/// id is not needed: a block's records are read without rebuilding it).
pub(crate) fn edge_prop(rest: &[u8], key: u32) -> Result<Option<Value>> {
    let mut r = Reader::new(rest);
    r.varint()?;
    r.varint()?;
    r.varint()?;
    find_prop(&mut r, key)
}

/// A record's user id, as text.
fn user_id(key: &[u8]) -> Result<String> {
    String::from_utf8(key.to_vec())
        .map_err(|_| StorageError::Corrupt("record user id is not UTF-8".into()))
}

impl NodeRecord {
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(16 + self.key.len() + self.props.len() * 8);
        self.encode_into(&mut out);
        out
    }

    /// Appends the encoded record to `out` (a bulk load reuses one buffer).
    pub fn encode_into(&self, out: &mut Vec<u8>) {
        out.push(RECORD_V1);
        write_varint(out, self.key.len() as u64);
        out.extend_from_slice(self.key.as_bytes());
        write_varint(out, self.labels.len() as u64);
        self.labels
            .iter()
            .for_each(|l| write_varint(out, *l as u64));
        encode_props(&self.props, out);
    }

    pub fn decode(b: &[u8]) -> Result<NodeRecord> {
        let mut r = Reader::new(b);
        let key = header(&mut r, "node")?;
        let n = r.len()?;
        let labels = (0..n).map(|_| token(&mut r)).collect::<Result<Vec<_>>>()?;
        if labels.windows(2).any(|w| w[0] >= w[1]) {
            return Err(StorageError::Corrupt("labels out of order".into()));
        }
        let props = decode_props(&mut r)?;
        Ok(NodeRecord { key, labels, props })
    }

    pub fn has_label(&self, l: u32) -> bool {
        self.labels.binary_search(&l).is_ok()
    }
}

impl EdgeRecord {
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(24 + self.key.len() + self.props.len() * 8);
        self.encode_into(&mut out);
        out
    }

    /// Appends the encoded record to `out`.
    pub fn encode_into(&self, out: &mut Vec<u8>) {
        out.push(RECORD_V1);
        write_varint(out, self.key.len() as u64);
        out.extend_from_slice(self.key.as_bytes());
        write_varint(out, self.src.0);
        write_varint(out, self.dst.0);
        write_varint(out, self.rel_type as u64);
        encode_props(&self.props, out);
    }

    pub fn decode(b: &[u8]) -> Result<EdgeRecord> {
        let (key, rest) = split_key(b)?;
        EdgeRecord::decode_parts(key, rest)
    }

    /// [`EdgeRecord::decode`] of a record as [`split_key`] cuts it.
    pub(crate) fn decode_parts(key: &[u8], rest: &[u8]) -> Result<EdgeRecord> {
        let mut r = Reader::new(rest);
        let key = user_id(key)?;
        let src = NodeId(r.varint()?);
        let dst = NodeId(r.varint()?);
        let rel_type = token(&mut r)?;
        let props = decode_props(&mut r)?;
        Ok(EdgeRecord {
            key,
            src,
            dst,
            rel_type,
            props,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip() {
        let n = NodeRecord {
            key: "n1".into(),
            labels: vec![1, 4],
            props: vec![(0, Value::Int(3)), (9, Value::from(vec!["a", "b"]))],
        };
        assert_eq!(NodeRecord::decode(&n.encode()).unwrap(), n);
        let e = EdgeRecord {
            key: "e".into(),
            src: NodeId(1),
            dst: NodeId(u64::MAX),
            rel_type: 2,
            props: vec![],
        };
        assert_eq!(EdgeRecord::decode(&e.encode()).unwrap(), e);
        assert!(NodeRecord::decode(&[7, 0]).is_err());
        assert!(NodeRecord::decode(&[]).is_err());
    }

    #[test]
    fn one_property_reads_as_the_whole_record_does() {
        let props = vec![
            (1, Value::List(vec![1.into(), "x".into()])),
            (3, Value::Float(2.5)),
            (7, "seven".into()),
        ];
        let n = NodeRecord {
            key: "k".into(),
            labels: vec![2, 5],
            props: props.clone(),
        };
        let e = EdgeRecord {
            key: "e".into(),
            src: NodeId(3),
            dst: NodeId(1_000_000),
            rel_type: 9,
            props,
        };
        let (nb, eb) = (n.encode(), e.encode());
        for key in 0..9 {
            let want = prop(&n.props, key).cloned();
            assert_eq!(node_prop(&nb, key).unwrap(), want);
            assert_eq!(edge_prop(split_key(&eb).unwrap().1, key).unwrap(), want);
        }
    }

    #[test]
    fn set_prop_keeps_order_and_removes_null() {
        let mut p = vec![];
        set_prop(&mut p, 5, 1.into());
        set_prop(&mut p, 2, 2.into());
        set_prop(&mut p, 5, Value::Null);
        assert_eq!(p, vec![(2, Value::Int(2))]);
    }

    /// Found by the fuzzer below: a damaged record whose property keys (or
    /// labels) are out of order decoded, and then lookups, which
    /// binary-search them, disagreed with a scan of the same bytes.
    #[test]
    fn keys_or_labels_out_of_order_are_damage() {
        let mut b = vec![RECORD_V1, 1, b'n', 0, 2];
        for k in [7, 3] {
            write_varint(&mut b, k);
            encode_value(&Value::Int(1), &mut b);
        }
        assert!(matches!(
            NodeRecord::decode(&b),
            Err(StorageError::Corrupt(_))
        ));
        let b = [RECORD_V1, 1, b'n', 2, 4, 2, 0];
        assert!(matches!(
            NodeRecord::decode(&b),
            Err(StorageError::Corrupt(_))
        ));
        let b = [RECORD_V1, 1, b'n', 2, 2, 4, 0];
        assert!(NodeRecord::decode(&b).is_ok());
    }

    /// Structured fuzzing of the record decoders: random bytes, and valid
    /// records with up to eight byte edits, through the whole-record and
    /// the partial decoders. None may panic; where the whole record
    /// decodes, the partial readers agree with it. Longer:
    /// `PROPTEST_CASES=1000000 cargo test --release -p plexus-storage --lib fuzz`.
    mod fuzz {
        use super::*;
        use plexus_common::fuzzing::byte_edits;
        use proptest::prelude::*;

        fn value() -> impl Strategy<Value = Value> {
            let leaf = prop_oneof![
                Just(Value::Null),
                any::<bool>().prop_map(Value::Bool),
                any::<i64>().prop_map(Value::Int),
                any::<f64>().prop_map(Value::Float),
                ".{0,12}".prop_map(Value::String),
                proptest::collection::vec(any::<u8>(), 0..8).prop_map(Value::Bytes),
            ];
            leaf.prop_recursive(3, 16, 4, |inner| {
                prop_oneof![
                    proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::List),
                    proptest::collection::btree_map(".{0,4}", inner, 0..3).prop_map(Value::Map),
                ]
            })
        }

        fn props() -> impl Strategy<Value = Vec<(u32, Value)>> {
            proptest::collection::btree_map(0u32..40, value(), 0..5)
                .prop_map(|m| m.into_iter().collect())
        }

        fn node() -> impl Strategy<Value = Vec<u8>> {
            (
                ".{0,10}",
                proptest::collection::btree_set(0u32..300, 0..4),
                props(),
            )
                .prop_map(|(key, labels, props)| {
                    NodeRecord {
                        key,
                        labels: labels.into_iter().collect(),
                        props,
                    }
                    .encode()
                })
        }

        fn edge() -> impl Strategy<Value = Vec<u8>> {
            (".{0,10}", any::<u64>(), any::<u64>(), 0u32..300, props()).prop_map(
                |(key, s, d, t, props)| {
                    EdgeRecord {
                        key,
                        src: NodeId(s),
                        dst: NodeId(d),
                        rel_type: t,
                        props,
                    }
                    .encode()
                },
            )
        }

        /// Equal as stored (so a NaN equals itself).
        fn same(a: Option<&Value>, b: Option<&Value>) -> bool {
            let enc = |v: Option<&Value>| {
                v.map(|v| {
                    let mut out = Vec::new();
                    encode_value(v, &mut out);
                    out
                })
            };
            enc(a) == enc(b)
        }

        fn check_node(b: &[u8]) {
            let whole = NodeRecord::decode(b);
            let _ = node_user_id(b);
            for key in [0, 7, 39] {
                let one = node_prop(b, key);
                let _ = node_label_prop_raw(b, Some(1), key);
                if let (Ok(rec), Ok(one)) = (&whole, one) {
                    assert!(
                        same(one.as_ref(), prop(&rec.props, key)),
                        "node property {key}"
                    );
                }
            }
            if let Ok(rec) = whole {
                let again = NodeRecord::decode(&rec.encode()).unwrap();
                assert_eq!(again.encode(), rec.encode());
            }
        }

        fn check_edge(b: &[u8]) {
            let whole = EdgeRecord::decode(b);
            for key in [0, 7, 39] {
                let one = split_key(b).and_then(|(_, rest)| edge_prop(rest, key));
                if let (Ok(rec), Ok(one)) = (&whole, one) {
                    assert!(
                        same(one.as_ref(), prop(&rec.props, key)),
                        "edge property {key}"
                    );
                }
            }
            if let Ok(rec) = whole {
                let again = EdgeRecord::decode(&rec.encode()).unwrap();
                assert_eq!(again.encode(), rec.encode());
            }
        }

        fn cases() -> u32 {
            std::env::var("PROPTEST_CASES")
                .ok()
                .and_then(|v| v.parse().ok())
                .unwrap_or(2000)
        }

        proptest! {
            #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

            #[test]
            fn random_bytes(b in proptest::collection::vec(any::<u8>(), 0..64)) {
                check_node(&b);
                check_edge(&b);
            }

            #[test]
            fn damaged_node_records(b in byte_edits(node())) {
                check_node(&b);
            }

            #[test]
            fn damaged_edge_records(b in byte_edits(edge())) {
                check_edge(&b);
            }
        }
    }
}

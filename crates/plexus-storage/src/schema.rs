//! Index and constraint definitions, and the entries an index holds for a node.
//!
//! A property index maps (value, node) for nodes that have the property
//! (and, when the index names a label, that label). A list-element index
//! holds one entry per distinct element of a list property, so a node is
//! found by any element (as PostgreSQL's GIN). A unique constraint is a
//! unique property index. Index keys use the order-preserving encoding, so
//! one index serves both exact and range lookups.

use crate::error::{Result, StorageError};
use crate::record::{prop, EdgeRecord, NodeRecord};
use plexus_common::{encode_key_value, read_u32, write_varint, Reader, Value, ValueType};

/// What an index holds per node.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum IndexKind {
    /// The property's value: exact and range lookups.
    Property,
    /// Each element of a list property: "contains" lookups.
    ListElement,
    /// A vector property, for nearest-neighbour search: kept by the
    /// maintainer registered for this kind (`maintain.rs`), with its own
    /// options (dimensions, similarity, precision).
    Vector,
    /// A vector property of relationships of one type (the index's
    /// `label` names the type), kept as [`IndexKind::Vector`] is.
    RelationshipVector,
    /// A property of relationships (of one type, or of every type when
    /// the index has no `label`): exact lookups.
    RelationshipProperty,
    /// Each element of a list property of relationships: "contains" lookups.
    RelationshipListElement,
}

impl IndexKind {
    /// Whether a registered maintainer keeps this index's entries (in the
    /// `index_data` keyspace) rather than storage's property index.
    pub fn is_maintained(self) -> bool {
        matches!(self, IndexKind::Vector | IndexKind::RelationshipVector)
    }

    /// The kind whose maintainer keeps this one: one maintainer keeps the
    /// node and the relationship indexes of a kind of value.
    pub fn maintainer_kind(self) -> IndexKind {
        match self {
            IndexKind::RelationshipVector => IndexKind::Vector,
            k => k,
        }
    }

    /// Whether the index holds relationships rather than nodes; its label
    /// is then a relationship type.
    pub fn on_relationships(self) -> bool {
        matches!(
            self,
            IndexKind::RelationshipVector
                | IndexKind::RelationshipProperty
                | IndexKind::RelationshipListElement
        )
    }

    /// Whether the index holds each element of a list rather than the value.
    pub fn per_element(self) -> bool {
        matches!(
            self,
            IndexKind::ListElement | IndexKind::RelationshipListElement
        )
    }

    /// The kind of the same index on relationships.
    pub fn for_relationships(self) -> IndexKind {
        match self {
            IndexKind::Property => IndexKind::RelationshipProperty,
            IndexKind::ListElement => IndexKind::RelationshipListElement,
            IndexKind::Vector => IndexKind::RelationshipVector,
            k => k,
        }
    }
}

/// What a constraint demands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ConstraintKind {
    /// No two nodes with the label share a value of the property.
    Unique,
    /// Every node with the label has the property.
    NotNull,
}

/// How writes maintain property indexes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum IndexMode {
    /// Every write updates every index (the default).
    #[default]
    Maintain,
    /// Writes skip non-unique indexes and mark them stale; a stale index
    /// refuses to answer until rebuilt. Unique indexes are always maintained,
    /// since they enforce a constraint.
    Defer,
    /// As `Defer`, then a sorted bulk rebuild of stale indexes at commit.
    DeferRebuild,
}

/// An index to create.
#[derive(Debug, Clone, PartialEq)]
pub struct IndexSpec {
    /// Defaults to `idx_<label>_<key>` or `list_<label>_<key>`.
    pub name: Option<String>,
    /// Only nodes with this label are indexed; `None` indexes every node.
    pub label: Option<String>,
    pub key: String,
    pub kind: IndexKind,
    /// When set, values of another type are refused (for list indexes: elements).
    pub value_type: Option<ValueType>,
    /// Options of a maintained index (vector: `vector.dimensions`, …),
    /// checked and completed by its maintainer.
    pub options: Vec<(String, Value)>,
}

impl IndexSpec {
    /// A property index on `label.key`.
    pub fn property(label: &str, key: &str) -> IndexSpec {
        IndexSpec {
            name: None,
            label: Some(label.into()),
            key: key.into(),
            kind: IndexKind::Property,
            value_type: None,
            options: Vec::new(),
        }
    }

    /// A vector index on `label.key` with its options (see the maintainer:
    /// `vector.dimensions` is required).
    pub fn vector(label: &str, key: &str, options: Vec<(String, Value)>) -> IndexSpec {
        IndexSpec {
            kind: IndexKind::Vector,
            options,
            ..IndexSpec::property(label, key)
        }
    }

    /// A vector index on the property `key` of relationships of type
    /// `rel_type`, with its options (as [`IndexSpec::vector`]).
    pub fn relationship_vector(
        rel_type: &str,
        key: &str,
        options: Vec<(String, Value)>,
    ) -> IndexSpec {
        IndexSpec {
            kind: IndexKind::RelationshipVector,
            ..IndexSpec::vector(rel_type, key, options)
        }
    }

    /// A list-element index on `label.key`.
    pub fn list(label: &str, key: &str) -> IndexSpec {
        IndexSpec {
            kind: IndexKind::ListElement,
            ..IndexSpec::property(label, key)
        }
    }

    pub fn typed(mut self, t: ValueType) -> IndexSpec {
        self.value_type = Some(t);
        self
    }

    pub fn named(mut self, name: &str) -> IndexSpec {
        self.name = Some(name.into());
        self
    }
}

/// A constraint to create.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConstraintSpec {
    /// Defaults to `unique_<label>_<key>` or `notnull_<label>_<key>`.
    pub name: Option<String>,
    pub label: String,
    pub key: String,
    pub kind: ConstraintKind,
}

/// An index as stored and reported.
#[derive(Debug, Clone, PartialEq)]
pub struct IndexInfo {
    pub name: String,
    pub label: Option<String>,
    pub key: String,
    pub kind: IndexKind,
    pub value_type: Option<ValueType>,
    pub unique: bool,
    pub stale: bool,
    /// A maintained index's options, as its maintainer completed them.
    pub options: Vec<(String, Value)>,
}

/// A constraint as reported.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConstraintInfo {
    pub name: String,
    pub label: String,
    pub key: String,
    pub kind: ConstraintKind,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct IndexDef {
    pub id: u32,
    pub name: String,
    pub label: Option<u32>,
    pub key: u32,
    pub kind: IndexKind,
    pub value_type: Option<ValueType>,
    pub unique: bool,
    pub stale: bool,
    pub options: Vec<(String, Value)>,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ConstraintDef {
    pub id: u32,
    pub name: String,
    pub label: u32,
    pub key: u32,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Schema {
    pub indexes: Vec<IndexDef>,
    pub not_null: Vec<ConstraintDef>,
}

const SCHEMA_V1: u8 = 1;

fn opt_token(out: &mut Vec<u8>, t: Option<u32>) {
    write_varint(out, t.map(|t| t as u64 + 1).unwrap_or(0));
}

fn read_token(r: &mut Reader<'_>) -> Result<u32> {
    u32::try_from(r.varint()?).map_err(|_| StorageError::Corrupt("schema token".into()))
}

impl IndexDef {
    pub fn encode(&self) -> Vec<u8> {
        let mut out = vec![SCHEMA_V1];
        write_varint(&mut out, self.name.len() as u64);
        out.extend_from_slice(self.name.as_bytes());
        opt_token(&mut out, self.label);
        write_varint(&mut out, self.key as u64);
        out.push(match self.kind {
            IndexKind::Property => 0,
            IndexKind::ListElement => 1,
            IndexKind::Vector => 2,
            IndexKind::RelationshipVector => 3,
            IndexKind::RelationshipProperty => 4,
            IndexKind::RelationshipListElement => 5,
        });
        out.push(self.value_type.map(|t| t.code() + 1).unwrap_or(0));
        out.push(self.unique as u8 | (self.stale as u8) << 1);
        // Options follow only where there are any, so definitions written
        // before options existed read the same.
        if !self.options.is_empty() {
            write_varint(&mut out, self.options.len() as u64);
            for (k, v) in &self.options {
                write_varint(&mut out, k.len() as u64);
                out.extend_from_slice(k.as_bytes());
                plexus_common::encode_value(v, &mut out);
            }
        }
        out
    }

    pub fn decode(id: u32, b: &[u8]) -> Result<IndexDef> {
        let mut r = Reader::new(b);
        if r.byte()? != SCHEMA_V1 {
            return Err(StorageError::Corrupt(
                "index definition of unknown format".into(),
            ));
        }
        let name = r.string()?;
        let label = match r.varint()? {
            0 => None,
            n => Some(u32::try_from(n - 1).map_err(|_| StorageError::Corrupt("label".into()))?),
        };
        let key = read_token(&mut r)?;
        let kind = match r.byte()? {
            0 => IndexKind::Property,
            1 => IndexKind::ListElement,
            2 => IndexKind::Vector,
            3 => IndexKind::RelationshipVector,
            4 => IndexKind::RelationshipProperty,
            5 => IndexKind::RelationshipListElement,
            _ => return Err(StorageError::Corrupt("index kind".into())),
        };
        let value_type = match r.byte()? {
            0 => None,
            c => Some(
                ValueType::from_code(c - 1)
                    .ok_or_else(|| StorageError::Corrupt("index value type".into()))?,
            ),
        };
        let flags = r.byte()?;
        let mut options = Vec::new();
        if !r.is_empty() {
            let n = r.varint()?;
            for _ in 0..n {
                let k = r.string()?;
                options.push((k, plexus_common::decode_value(&mut r)?));
            }
        }
        Ok(IndexDef {
            id,
            name,
            label,
            key,
            kind,
            value_type,
            unique: flags & 1 != 0,
            stale: flags & 2 != 0,
            options,
        })
    }

    /// The definition as users see it, names instead of tokens.
    pub fn info(&self, cat: &crate::catalog::Catalog) -> Result<IndexInfo> {
        use crate::catalog::Token;
        Ok(IndexInfo {
            name: self.name.clone(),
            label: self
                .label
                .map(|l| cat.name(self.label_token(), l))
                .transpose()?
                .map(|s| s.to_string()),
            key: cat.name(Token::PropKey, self.key)?.to_string(),
            kind: self.kind,
            value_type: self.value_type,
            unique: self.unique,
            stale: self.stale,
            options: self.options.clone(),
        })
    }

    /// What the index's `label` names: a label, or a relationship type.
    pub fn label_token(&self) -> crate::catalog::Token {
        if self.kind.on_relationships() {
            crate::catalog::Token::Type
        } else {
            crate::catalog::Token::Label
        }
    }

    /// Whether the index covers this node at all.
    pub fn covers(&self, rec: &NodeRecord) -> bool {
        !self.kind.on_relationships() && self.label.is_none_or(|l| rec.has_label(l))
    }

    /// The value a relationship index holds for `rec`: the property, where
    /// the relationship has the index's type and the value is not null.
    pub fn maintained_edge_value<'r>(&self, rec: &'r EdgeRecord) -> Option<&'r Value> {
        if !self.kind.on_relationships() || self.label.is_some_and(|t| t != rec.rel_type) {
            return None;
        }
        prop(&rec.props, self.key).filter(|v| !v.is_null())
    }

    /// The value a maintained index holds for `rec`: the property, where
    /// the index covers the node and the value is not null.
    pub fn maintained_value<'r>(&self, rec: &'r NodeRecord) -> Option<&'r Value> {
        if !self.covers(rec) {
            return None;
        }
        prop(&rec.props, self.key).filter(|v| !v.is_null())
    }

    /// The value keys this index holds for `rec` (sorted, distinct), or a
    /// type error naming the node.
    pub fn entries(&self, rec: &NodeRecord) -> Result<Vec<Vec<u8>>> {
        if !self.covers(rec) || self.kind.is_maintained() {
            return Ok(vec![]);
        }
        self.value_entries(prop(&rec.props, self.key), &rec.key)
    }

    /// Whether the index covers this relationship: a relationship index
    /// of its type, or of every type.
    pub fn covers_edge(&self, rec: &EdgeRecord) -> bool {
        self.kind.on_relationships() && self.label.is_none_or(|t| t == rec.rel_type)
    }

    /// As [`IndexDef::entries`], for a relationship in a relationship
    /// property or list-element index.
    pub fn edge_entries(&self, rec: &EdgeRecord) -> Result<Vec<Vec<u8>>> {
        if !self.covers_edge(rec) || self.kind.is_maintained() {
            return Ok(vec![]);
        }
        self.value_entries(prop(&rec.props, self.key), &rec.key)
    }

    /// The value keys of one property value (`who` names its holder in a
    /// type error).
    fn value_entries(&self, v: Option<&Value>, who: &str) -> Result<Vec<Vec<u8>>> {
        let Some(v) = v.filter(|v| !v.is_null()) else {
            return Ok(vec![]);
        };
        let wrong = |found: &Value, expected: ValueType| StorageError::WrongType {
            index: self.name.clone(),
            node: who.to_string(),
            expected,
            found: found.value_type(),
        };
        let check = |x: &Value| match self.value_type {
            Some(t) if x.value_type() != t => Err(wrong(x, t)),
            _ => Ok(()),
        };
        let mut out = if self.kind.per_element() {
            let Value::List(items) = v else {
                return Err(wrong(v, ValueType::List));
            };
            let mut keys = Vec::with_capacity(items.len());
            for item in items.iter().filter(|i| !i.is_null()) {
                check(item)?;
                keys.push(value_key(item));
            }
            keys
        } else {
            check(v)?;
            vec![value_key(v)]
        };
        out.sort();
        out.dedup();
        Ok(out)
    }
}

impl ConstraintDef {
    pub fn encode(&self) -> Vec<u8> {
        let mut out = vec![SCHEMA_V1];
        write_varint(&mut out, self.name.len() as u64);
        out.extend_from_slice(self.name.as_bytes());
        write_varint(&mut out, self.label as u64);
        write_varint(&mut out, self.key as u64);
        out
    }

    pub fn decode(id: u32, b: &[u8]) -> Result<ConstraintDef> {
        let mut r = Reader::new(b);
        if r.byte()? != SCHEMA_V1 {
            return Err(StorageError::Corrupt("constraint of unknown format".into()));
        }
        let name = r.string()?;
        let label = read_token(&mut r)?;
        let key = read_token(&mut r)?;
        Ok(ConstraintDef {
            id,
            name,
            label,
            key,
        })
    }
}

/// Encoded values longer than this are cut and completed by a hash, because
/// LMDB keys are limited to 511 bytes. Cut entries are exactly
/// `TRUNCATED_LEN` long, shorter ones never are, and lookups confirm cut
/// entries against the record.
pub(crate) const MAX_VALUE_KEY: usize = 180;
pub(crate) const TRUNCATED_LEN: usize = MAX_VALUE_KEY + 8;

/// The index key part for one value.
pub(crate) fn value_key(v: &Value) -> Vec<u8> {
    let mut k = Vec::new();
    push_value_key(v, &mut k);
    k
}

/// [`value_key`] appended to `out`, for a key built around it (an index
/// seek's prefix) without a buffer of its own; returns its length.
pub(crate) fn push_value_key(v: &Value, out: &mut Vec<u8>) -> usize {
    let at = out.len();
    encode_key_value(v, out);
    if out.len() - at <= MAX_VALUE_KEY {
        return out.len() - at;
    }
    let mut h = 0xcbf2_9ce4_8422_2325u64;
    for b in &out[at..] {
        h ^= *b as u64;
        h = h.wrapping_mul(0x100_0000_01b3);
    }
    out.truncate(at + MAX_VALUE_KEY);
    out.extend_from_slice(&h.to_be_bytes());
    out.len() - at
}

/// The id of a schema entry key: graph(4) kind(1) id(4).
pub(crate) fn schema_entry_id(key: &[u8]) -> Result<u32> {
    read_u32(key, 5).ok_or_else(|| StorageError::Corrupt("schema key".into()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn definitions_round_trip() {
        let d = IndexDef {
            id: 3,
            name: "i".into(),
            label: Some(0),
            key: 9,
            kind: IndexKind::ListElement,
            value_type: Some(ValueType::String),
            unique: false,
            stale: true,
            options: vec![],
        };
        assert_eq!(IndexDef::decode(3, &d.encode()).unwrap(), d);
        let v = IndexDef {
            kind: IndexKind::Vector,
            options: vec![
                ("vector.dimensions".into(), Value::Int(4)),
                (
                    "vector.similarity_function".into(),
                    Value::String("cosine".into()),
                ),
            ],
            ..d.clone()
        };
        assert_eq!(IndexDef::decode(3, &v.encode()).unwrap(), v);
        let r = IndexDef {
            kind: IndexKind::RelationshipVector,
            ..v.clone()
        };
        assert_eq!(IndexDef::decode(3, &r.encode()).unwrap(), r);
        let c = ConstraintDef {
            id: 1,
            name: "c".into(),
            label: 2,
            key: 3,
        };
        assert_eq!(ConstraintDef::decode(1, &c.encode()).unwrap(), c);
    }

    #[test]
    fn long_values_get_bounded_keys() {
        let long = Value::String("x".repeat(1000));
        let k = value_key(&long);
        assert_eq!(k.len(), TRUNCATED_LEN);
        assert_ne!(k, value_key(&Value::String("x".repeat(999))));
        assert!(value_key(&Value::String("short".into())).len() < MAX_VALUE_KEY);
    }
}

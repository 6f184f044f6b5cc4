use crate::Ks;

/// One write inside a [`WriteBatch`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Op {
    Put {
        ks: Ks,
        key: Vec<u8>,
        value: Vec<u8>,
    },
    Delete {
        ks: Ks,
        key: Vec<u8>,
    },
    /// Deletes every key in `[start, end)`.
    DeleteRange {
        ks: Ks,
        start: Vec<u8>,
        end: Vec<u8>,
    },
    /// Adds `delta` to the little-endian i64 counter under `key` (absent
    /// counts as 0); a result of 0 deletes the key. Counters are applied
    /// inside the backend's write so that concurrent deltas never race.
    Add {
        ks: Ks,
        key: Vec<u8>,
        delta: i64,
    },
}

impl Op {
    /// The keyspace the op writes to.
    pub fn keyspace(&self) -> Ks {
        match self {
            Op::Put { ks, .. }
            | Op::Delete { ks, .. }
            | Op::DeleteRange { ks, .. }
            | Op::Add { ks, .. } => *ks,
        }
    }
}

/// Operations applied atomically, in order, by [`crate::KvStore::write`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WriteBatch {
    pub ops: Vec<Op>,
}

impl WriteBatch {
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty batch with room for `ops` operations.
    pub fn with_capacity(ops: usize) -> Self {
        WriteBatch {
            ops: Vec::with_capacity(ops),
        }
    }

    pub fn put(&mut self, ks: Ks, key: impl Into<Vec<u8>>, value: impl Into<Vec<u8>>) {
        self.ops.push(Op::Put {
            ks,
            key: key.into(),
            value: value.into(),
        });
    }

    pub fn delete(&mut self, ks: Ks, key: impl Into<Vec<u8>>) {
        self.ops.push(Op::Delete {
            ks,
            key: key.into(),
        });
    }

    pub fn delete_range(&mut self, ks: Ks, start: Vec<u8>, end: Vec<u8>) {
        self.ops.push(Op::DeleteRange { ks, start, end });
    }

    pub fn add(&mut self, ks: Ks, key: impl Into<Vec<u8>>, delta: i64) {
        self.ops.push(Op::Add {
            ks,
            key: key.into(),
            delta,
        });
    }

    pub fn len(&self) -> usize {
        self.ops.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ops.is_empty()
    }
}

/// Reads a counter value; anything that is not 8 bytes counts as 0.
pub fn decode_counter(v: &[u8]) -> i64 {
    v.try_into().map(i64::from_le_bytes).unwrap_or(0)
}

/// The new stored form of a counter after adding `delta`, `None` for zero.
pub(crate) fn add_counter(old: Option<&[u8]>, delta: i64) -> Option<[u8; 8]> {
    let v = old.map(decode_counter).unwrap_or(0).wrapping_add(delta);
    (v != 0).then(|| v.to_le_bytes())
}

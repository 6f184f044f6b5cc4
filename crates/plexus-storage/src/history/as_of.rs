//! The graph as of an instant: a snapshot that answers for the versioned
//! keyspaces from the history (`mod.rs` has the layout).

use super::{
    decode_version, ks_byte, split_version, stem, version_key, versions_prefix, VERSIONED,
};
use crate::ids::GraphId;
use crate::keys::{HISTORY, INDEX_DATA};
use crate::packed::kv_err;
use plexus_kv::{KeyRange, Ks, KvIter, KvPair, ScanOptions, Snapshot};
use std::ops::Bound;

/// A snapshot that reads graph `g` as it was at system time `t`: the
/// versioned keyspaces (property indexes among them) from the history, the
/// vector indexes' data empty, the rest (names, manifest) as `inner` holds
/// them.
pub(crate) struct AsOf {
    pub inner: Box<dyn Snapshot>,
    pub g: GraphId,
    pub t: u64,
}

impl AsOf {
    /// The history range holding the versions of the keys in `range`.
    fn history_range(&self, ks: Ks, range: &KeyRange) -> KeyRange {
        let g = self.g.0.to_be_bytes();
        let low = {
            let mut k = g.to_vec();
            k.push(ks_byte(ks));
            k
        };
        let high = {
            let mut k = g.to_vec();
            k.push(ks_byte(ks).saturating_add(1));
            k
        };
        // Where a bound's key lies relative to the graph's keys.
        let place = |key: &[u8]| -> std::cmp::Ordering {
            let head = &key[..key.len().min(4)];
            if head.len() == 4 && head == g {
                std::cmp::Ordering::Equal
            } else {
                head.cmp(&g[..])
            }
        };
        let after = |key: &[u8]| {
            let mut k = stem(ks, key);
            // Past every version of `key`: its end, `00 01`, then `!t`.
            k.extend_from_slice(&[0, 2]);
            k
        };
        use std::cmp::Ordering::*;
        let start = match &range.start {
            Bound::Unbounded => Bound::Included(low.clone()),
            Bound::Included(k) | Bound::Excluded(k) if place(k) == Less => {
                Bound::Included(low.clone())
            }
            Bound::Included(k) | Bound::Excluded(k) if place(k) == Greater => {
                Bound::Included(high.clone())
            }
            Bound::Included(k) => Bound::Included(stem(ks, k)),
            Bound::Excluded(k) => Bound::Included(after(k)),
        };
        let end = match &range.end {
            Bound::Unbounded => Bound::Excluded(high),
            Bound::Included(k) | Bound::Excluded(k) if place(k) == Greater => Bound::Excluded(high),
            Bound::Included(k) | Bound::Excluded(k) if place(k) == Less => Bound::Excluded(low),
            Bound::Excluded(k) => Bound::Excluded(stem(ks, k)),
            Bound::Included(k) => Bound::Excluded(after(k)),
        };
        KeyRange { start, end }
    }

    /// The keys in `range` as of `t`, in key order or reversed.
    fn as_of_scan(&self, ks: Ks, range: &KeyRange, reverse: bool) -> KvIter<'_> {
        let opts = ScanOptions {
            reverse,
            limit: None,
        };
        let inner = self
            .inner
            .scan(HISTORY, &self.history_range(ks, range), opts);
        let t = self.t;
        if reverse {
            Box::new(LatestBackwards {
                inner,
                t,
                group: None,
            })
        } else {
            Box::new(Latest {
                inner,
                t,
                current: None,
                decided: false,
            })
        }
    }
}

/// The first version at or before `t` of each key, from the versions in
/// key order (newest first within a key); keys absent then are skipped.
struct Latest<'a> {
    inner: KvIter<'a>,
    t: u64,
    /// The stem of the key being walked.
    current: Option<Vec<u8>>,
    /// Whether its version as of `t` was found.
    decided: bool,
}

impl Iterator for Latest<'_> {
    type Item = plexus_kv::Result<KvPair>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            let (k, v) = match self.inner.next()? {
                Ok(pair) => pair,
                Err(e) => return Some(Err(e)),
            };
            let (key, stem_len, t) = match split_version(&k) {
                Ok(x) => x,
                Err(e) => return Some(Err(kv_err(e))),
            };
            if self.current.as_deref() != Some(&k[..stem_len]) {
                self.current = Some(k[..stem_len].to_vec());
                self.decided = false;
            }
            if self.decided || t > self.t {
                continue;
            }
            self.decided = true;
            match decode_version(&v) {
                Ok(Some(value)) => return Some(Ok((key, value.to_vec()))),
                Ok(None) => continue,
                Err(e) => return Some(Err(kv_err(e))),
            }
        }
    }
}

/// [`Latest`] over the versions in reverse key order, where each key's
/// versions come oldest first: the last at or before `t` seen before the
/// key changes is its version as of `t` (a floor read is one seek and a
/// walk back over the versions of the keys it skips).
struct LatestBackwards<'a> {
    inner: KvIter<'a>,
    t: u64,
    group: Option<Group>,
}

/// The key [`LatestBackwards`] walks.
struct Group {
    stem: Vec<u8>,
    key: Vec<u8>,
    /// Its version as of `t` so far: none seen yet, or the value then
    /// (`None`: absent).
    version: Option<Option<Vec<u8>>>,
}

impl LatestBackwards<'_> {
    /// The pair the finished group yields, if its key held a value at `t`.
    fn finish(group: Option<Group>) -> Option<KvPair> {
        match group {
            Some(Group {
                key,
                version: Some(Some(value)),
                ..
            }) => Some((key, value)),
            _ => None,
        }
    }
}

impl Iterator for LatestBackwards<'_> {
    type Item = plexus_kv::Result<KvPair>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            let Some(pair) = self.inner.next() else {
                return Self::finish(self.group.take()).map(Ok);
            };
            let (k, v) = match pair {
                Ok(pair) => pair,
                Err(e) => return Some(Err(e)),
            };
            let (key, stem_len, t) = match split_version(&k) {
                Ok(x) => x,
                Err(e) => return Some(Err(kv_err(e))),
            };
            let mut done = None;
            if self.group.as_ref().map(|g| &g.stem[..]) != Some(&k[..stem_len]) {
                done = Self::finish(self.group.take());
                self.group = Some(Group {
                    stem: k[..stem_len].to_vec(),
                    key,
                    version: None,
                });
            }
            if t <= self.t {
                let value = match decode_version(&v) {
                    Ok(value) => value.map(<[u8]>::to_vec),
                    Err(e) => return Some(Err(kv_err(e))),
                };
                if let Some(g) = &mut self.group {
                    g.version = Some(value);
                }
            }
            if let Some(pair) = done {
                return Some(Ok(pair));
            }
        }
    }
}

impl Snapshot for AsOf {
    fn get(&self, ks: Ks, key: &[u8]) -> plexus_kv::Result<Option<Vec<u8>>> {
        if ks == INDEX_DATA {
            return Ok(None);
        }
        if !VERSIONED.contains(&ks) {
            return self.inner.get(ks, key);
        }
        let range = KeyRange {
            start: Bound::Included(version_key(ks, key, self.t)),
            end: KeyRange::prefix(&versions_prefix(ks, key)).end,
        };
        let opts = ScanOptions {
            limit: Some(1),
            ..Default::default()
        };
        match self.inner.scan(HISTORY, &range, opts).next() {
            None => Ok(None),
            Some(pair) => {
                let (_, v) = pair?;
                Ok(decode_version(&v).map_err(kv_err)?.map(<[u8]>::to_vec))
            }
        }
    }

    fn scan(&self, ks: Ks, range: &KeyRange, opts: ScanOptions) -> KvIter<'_> {
        if ks == INDEX_DATA {
            return Box::new(std::iter::empty());
        }
        if !VERSIONED.contains(&ks) {
            return self.inner.scan(ks, range, opts);
        }
        let limit = opts.limit.unwrap_or(usize::MAX);
        Box::new(self.as_of_scan(ks, range, opts.reverse).take(limit))
    }
}

#[cfg(test)]
mod tests {
    use super::super::version_key;
    use super::*;
    use crate::keys::{LABELS, NODES};

    struct Empty;
    impl Snapshot for Empty {
        fn get(&self, _: Ks, _: &[u8]) -> plexus_kv::Result<Option<Vec<u8>>> {
            Ok(None)
        }
        fn scan(&self, _: Ks, _: &KeyRange, _: ScanOptions) -> KvIter<'_> {
            Box::new(std::iter::empty())
        }
    }

    #[test]
    fn ranges_map_to_the_versions_of_their_keys() {
        let as_of = AsOf {
            inner: Box::new(Empty),
            g: GraphId(1),
            t: 5,
        };
        let r = as_of.history_range(NODES, &KeyRange::prefix(&[0, 0, 0, 1]));
        assert!(r.contains(&version_key(NODES, &[0, 0, 0, 1, 7], 4)));
        assert!(!r.contains(&version_key(NODES, &[0, 0, 0, 2, 7], 4)));
        assert!(!r.contains(&version_key(LABELS, &[0, 0, 0, 1, 7], 4)));
        let upto = KeyRange {
            start: Bound::Excluded(vec![0, 0, 0, 1, 3]),
            end: Bound::Included(vec![0, 0, 0, 1, 7]),
        };
        let r = as_of.history_range(NODES, &upto);
        assert!(!r.contains(&version_key(NODES, &[0, 0, 0, 1, 3], 4)));
        assert!(r.contains(&version_key(NODES, &[0, 0, 0, 1, 3, 0], 4)));
        assert!(r.contains(&version_key(NODES, &[0, 0, 0, 1, 7], 4)));
        assert!(!r.contains(&version_key(NODES, &[0, 0, 0, 1, 7, 0], 4)));
    }
}

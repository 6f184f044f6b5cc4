//! The key layout in storage's valid-time keyspace (after the graph's
//! prefix), and the timeline of an entity.
//!
//! * `T | kind | id | 00 01 | from` → `end | version id | version`: the
//!   entity's timeline, the segments of valid time each version holds
//!   now, each with a copy of its version. They never overlap: a write
//!   over `[a, b)` cuts the segments it covers, so the version covering an
//!   instant is in the segment found by one seek back from it (O(log n),
//!   however many versions the entity has; one descent of the tree, not
//!   two). The latest write over an instant wins, as in GestaltDB.
//! * `V | version id` → the version (for lookups by id and lineage).
//! * `H | kind | id | 00 01 | n` → version id: the entity's versions in
//!   the order they were written.
//! * `R | version id` → the system time of the commit that wrote the
//!   version, 8 bytes big-endian (`WriteTxn::valid_time_stamp`: the commit
//!   fills it in), for `systemFrom` whether or not history is kept.
//!
//! Ids are escaped (`plexus_common::push_escaped`); instants are 8 bytes
//! that sort as the instants (`time.rs`); `n` is big-endian. Every write
//! names the entity (`kind | id`) as its conflict subject, and a version
//! record its id: two transactions that change one entity's timeline, or
//! create one version id, never both commit. Storage keeps this keyspace
//! in the graph's system-time history, so reading it as of a system time
//! (`Storage::read_as_of`) gives the bitemporal view.

use crate::error::{Result, TemporalError};
use crate::time::Interval;
use crate::version::Kind;
use plexus_common::{push_escaped, push_i64, read_escaped, read_i64, write_varint, Reader};
use plexus_storage::{GraphRead, WriteTxn};
use std::ops::Bound;

const TIMELINE: u8 = b'T';
const VERSION: u8 = b'V';
const ENTITY_LOG: u8 = b'H';
/// `R | version id → commit stamp`: when the version was recorded.
const RECORDED: u8 = b'R';

/// `tag | kind | escaped id | 00 01`.
fn stem(tag: u8, kind: Kind, id: &str) -> Vec<u8> {
    let mut k = Vec::with_capacity(id.len() + 12);
    k.push(tag);
    k.push(kind.byte());
    push_escaped(&mut k, id.as_bytes());
    k
}

/// The conflict subject of an entity.
pub(crate) fn subject(kind: Kind, id: &str) -> Vec<u8> {
    let mut s = vec![kind.byte()];
    s.extend_from_slice(id.as_bytes());
    s
}

/// The system time the commit that wrote version `id` was stamped with
/// (`WriteTxn::valid_time_stamp`), once committed; `None` for a version
/// recorded before versions were stamped, or still being written.
pub(crate) fn recorded(
    r: &(impl GraphRead + ?Sized),
    id: &str,
) -> plexus_storage::Result<Option<u64>> {
    Ok(crate::keyspace::get(r, &recorded_key(id))?
        .and_then(|v| <[u8; 8]>::try_from(&v[..]).ok())
        .map(u64::from_be_bytes))
}

fn recorded_key(id: &str) -> Vec<u8> {
    let mut k = vec![RECORDED];
    k.extend_from_slice(id.as_bytes());
    k
}

pub(crate) fn version_key(id: &str) -> Vec<u8> {
    let mut k = vec![VERSION];
    k.extend_from_slice(id.as_bytes());
    k
}

/// One segment of an entity's timeline.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Segment {
    pub valid: Interval,
    pub version: String,
    /// The version's encoding (`Version::encode`).
    pub record: Vec<u8>,
}

/// `stem | at`: the key of the segment of `stem`'s timeline from `at`.
fn at_key(stem: &[u8], at: i64) -> Vec<u8> {
    let mut k = stem.to_vec();
    push_i64(&mut k, at);
    k
}

fn segment_value(end: i64, version: &str, record: &[u8]) -> Vec<u8> {
    let mut v = Vec::with_capacity(12 + version.len() + record.len());
    push_i64(&mut v, end);
    write_varint(&mut v, version.len() as u64);
    v.extend_from_slice(version.as_bytes());
    v.extend_from_slice(record);
    v
}

fn segment(stem_len: usize, key: &[u8], value: &[u8]) -> Result<Segment> {
    let bad = || TemporalError::Corrupt("timeline segment".into());
    let from = read_i64(key, stem_len).ok_or_else(bad)?;
    let end = read_i64(value, 0).ok_or_else(bad)?;
    let mut r = Reader::new(value.get(8..).ok_or_else(bad)?);
    let version = r.string()?;
    let record = r.bytes(r.remaining())?.to_vec();
    Ok(Segment {
        valid: Interval::with_end(from, end),
        version,
        record,
    })
}

/// The segment of the entity's timeline that covers `at`, if any: one
/// seek back from `at`.
pub(crate) fn covering(
    r: &(impl GraphRead + ?Sized),
    kind: Kind,
    id: &str,
    at: i64,
) -> Result<Option<Segment>> {
    let stem = stem(TIMELINE, kind, id);
    let upto = at_key(&stem, at);
    let found = first(r, Bound::Included(&stem), Bound::Included(&upto), true)?;
    let found = match found {
        Some((k, v)) => Some(segment(stem.len(), &k, &v)?),
        None => None,
    };
    Ok(found.filter(|s| s.valid.contains(at)))
}

/// Every segment of the entity's timeline that starts in `[from, end)`,
/// in order (`end` `None`: to the last).
pub(crate) fn segments(
    r: &(impl GraphRead + ?Sized),
    kind: Kind,
    id: &str,
    from: Option<i64>,
    end: Option<i64>,
) -> Result<Vec<Segment>> {
    let stem = stem(TIMELINE, kind, id);
    let lo = from.map_or_else(|| stem.clone(), |t| at_key(&stem, t));
    let hi = match end {
        Some(t) => at_key(&stem, t),
        None => [&stem[..], &[0xFF; 9]].concat(),
    };
    let mut pairs = Vec::new();
    crate::keyspace::scan(
        r,
        Bound::Included(&lo),
        Bound::Excluded(&hi),
        false,
        &mut |k, v| {
            pairs.push((k.to_vec(), v.to_vec()));
            Ok(true)
        },
    )?;
    pairs
        .iter()
        .map(|(k, v)| segment(stem.len(), k, v))
        .collect()
}

/// Makes `version` (its id and encoding) hold the entity over `valid`
/// (`None`: nothing holds it there): the segments it overlaps are cut back
/// to what lies outside.
pub(crate) fn apply(
    txn: &mut WriteTxn,
    kind: Kind,
    id: &str,
    valid: Interval,
    version: Option<(&str, &[u8])>,
) -> Result<()> {
    let subject = subject(kind, id);
    let stem = stem(TIMELINE, kind, id);
    let key = |from: i64| at_key(&stem, from);
    let mut overlapped = Vec::new();
    if let Some(s) = covering(txn, kind, id, valid.from)? {
        if s.valid.from < valid.from {
            overlapped.push(s);
        }
    }
    overlapped.extend(segments(txn, kind, id, Some(valid.from), valid.to)?);
    for s in overlapped {
        crate::keyspace::write(txn, &subject, &key(s.valid.from), None)?;
        if s.valid.from < valid.from {
            let left = segment_value(valid.from, &s.version, &s.record);
            crate::keyspace::write(txn, &subject, &key(s.valid.from), Some(left))?;
        }
        if s.valid.end() > valid.end() {
            let right = segment_value(s.valid.end(), &s.version, &s.record);
            crate::keyspace::write(txn, &subject, &key(valid.end()), Some(right))?;
        }
    }
    if let Some((v, record)) = version {
        let value = segment_value(valid.end(), v, record);
        crate::keyspace::write(txn, &subject, &key(valid.from), Some(value))?;
    }
    Ok(())
}

/// Records a new version of the entity: its record, and its place in the
/// entity's log. A version id the caller gave (`given`) may be in use, and
/// is refused then; one just generated (a version-7 UUID: 74 random bits
/// beside the time) is not looked up — a read per version saved.
pub(crate) fn record(
    txn: &mut WriteTxn,
    kind: Kind,
    id: &str,
    version: &str,
    given: bool,
    bytes: &[u8],
) -> Result<()> {
    let vk = version_key(version);
    if given && crate::keyspace::get(txn, &vk)?.is_some() {
        return Err(TemporalError::VersionExists(version.to_string()));
    }
    crate::keyspace::write(txn, &vk, &vk, Some(bytes.to_vec()))?;
    // When it was recorded, for `systemFrom` in a graph keeping no history.
    crate::keyspace::stamp(txn, &vk, &recorded_key(version))?;
    let log = stem(ENTITY_LOG, kind, id);
    let n = log_len(txn, &log)?;
    let mut k = log;
    k.extend_from_slice(&n.to_be_bytes());
    crate::keyspace::write(
        txn,
        &subject(kind, id),
        &k,
        Some(version.as_bytes().to_vec()),
    )?;
    Ok(())
}

/// Whether the entity has a version.
pub(crate) fn known(r: &(impl GraphRead + ?Sized), kind: Kind, id: &str) -> Result<bool> {
    Ok(log_len(r, &stem(ENTITY_LOG, kind, id))? > 0)
}

/// How many versions an entity's log holds: one past the last's number.
fn log_len(r: &(impl GraphRead + ?Sized), log: &[u8]) -> Result<u64> {
    let hi = [log, &[0xFF; 9]].concat();
    let mut n = 0;
    crate::keyspace::scan(
        r,
        Bound::Included(log),
        Bound::Excluded(&hi),
        true,
        &mut |k, _| {
            n = plexus_common::read_u64(k, log.len()).map_or(0, |last| last + 1);
            Ok(false)
        },
    )?;
    Ok(n)
}

/// The ids of an entity's versions, in the order they were written.
pub(crate) fn log(r: &(impl GraphRead + ?Sized), kind: Kind, id: &str) -> Result<Vec<String>> {
    let log = stem(ENTITY_LOG, kind, id);
    let hi = [&log[..], &[0xFF; 9]].concat();
    values_between(r, &log, &hi)
}

/// The ids of every entity of `kind` that has a version, in id order: one
/// scan of the entity logs.
pub(crate) fn entity_ids(r: &(impl GraphRead + ?Sized), kind: Kind) -> Result<Vec<String>> {
    let lo = [ENTITY_LOG, kind.byte()];
    let hi = [ENTITY_LOG, kind.byte() + 1];
    let mut out: Vec<String> = Vec::new();
    let mut failed = None;
    crate::keyspace::scan(
        r,
        Bound::Included(&lo),
        Bound::Excluded(&hi),
        false,
        &mut |k, _| match read_escaped(&k[2..]).and_then(|(b, _)| String::from_utf8(b).ok()) {
            Some(id) => {
                if out.last() != Some(&id) {
                    out.push(id);
                }
                Ok(true)
            }
            None => {
                failed = Some(TemporalError::Corrupt(format!("entity log key {k:?}")));
                Ok(false)
            }
        },
    )?;
    match failed {
        Some(e) => Err(e),
        None => Ok(out),
    }
}

/// Whether an entity of `kind` has a version: one seek.
pub(crate) fn any_entity(r: &(impl GraphRead + ?Sized), kind: Kind) -> Result<bool> {
    let lo = [ENTITY_LOG, kind.byte()];
    let hi = [ENTITY_LOG, kind.byte() + 1];
    Ok(first(r, Bound::Included(&lo), Bound::Excluded(&hi), false)?.is_some())
}

/// The first pair of a range (the last, `reverse`): one seek.
fn first(
    r: &(impl GraphRead + ?Sized),
    lo: Bound<&[u8]>,
    hi: Bound<&[u8]>,
    reverse: bool,
) -> Result<Option<(Vec<u8>, Vec<u8>)>> {
    let mut found = None;
    crate::keyspace::scan(r, lo, hi, reverse, &mut |k, v| {
        found = Some((k.to_vec(), v.to_vec()));
        Ok(false)
    })?;
    Ok(found)
}

/// The values of the keys in `[lo, hi)` as text (ids), in key order.
pub(crate) fn values_between(
    r: &(impl GraphRead + ?Sized),
    lo: &[u8],
    hi: &[u8],
) -> Result<Vec<String>> {
    let mut out = Vec::new();
    crate::keyspace::scan(
        r,
        Bound::Included(lo),
        Bound::Excluded(hi),
        false,
        &mut |_, v| {
            out.push(String::from_utf8_lossy(v).into_owned());
            Ok(true)
        },
    )?;
    Ok(out)
}

/// Up to `n` version records after key `after` (from the first without
/// it), with their keys, in key order.
pub(crate) fn versions_after(
    r: &(impl GraphRead + ?Sized),
    after: Option<&[u8]>,
    n: usize,
) -> Result<Vec<(Vec<u8>, crate::version::Version)>> {
    let first = [VERSION];
    let lo = match after {
        Some(k) => Bound::Excluded(k),
        None => Bound::Included(&first[..]),
    };
    let hi = [VERSION + 1];
    let mut raw = Vec::new();
    crate::keyspace::scan(r, lo, Bound::Excluded(&hi), false, &mut |k, v| {
        raw.push((k.to_vec(), v.to_vec()));
        Ok(raw.len() < n)
    })?;
    raw.into_iter()
        .map(|(k, v)| {
            let id = String::from_utf8_lossy(&k[1..]).into_owned();
            Ok((k, crate::version::Version::decode(&id, &v)?))
        })
        .collect()
}

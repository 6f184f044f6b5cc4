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
use plexus_storage::{GraphRead, ValidWrite, WriteTxn, VALID_KEY_ROOM};
use std::ops::Bound;

const TIMELINE: u8 = b'T';
const VERSION: u8 = b'V';
pub(crate) const ENTITY_LOG: u8 = b'H';
/// `R | version id → commit stamp`: when the version was recorded.
const RECORDED: u8 = b'R';

/// `tag | kind | escaped id | 00 01`.
fn stem(tag: u8, kind: Kind, id: &str) -> Vec<u8> {
    let mut k = Vec::with_capacity(id.len() + 12 + VALID_KEY_ROOM);
    k.push(tag);
    k.push(kind.byte());
    push_escaped(&mut k, id.as_bytes());
    k
}

/// The conflict subject of an entity.
pub(crate) fn subject(kind: Kind, id: &str) -> Vec<u8> {
    tagged(kind.byte(), id)
}

/// `tag | id`, sized for both: from one byte, each such key of a batch's
/// versions was reallocated.
fn tagged(tag: u8, id: &str) -> Vec<u8> {
    let mut k = Vec::with_capacity(1 + id.len() + VALID_KEY_ROOM);
    k.push(tag);
    k.extend_from_slice(id.as_bytes());
    k
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
    tagged(RECORDED, id)
}

pub(crate) fn version_key(id: &str) -> Vec<u8> {
    tagged(VERSION, id)
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
    let mut k = Vec::with_capacity(stem.len() + 8 + VALID_KEY_ROOM);
    k.extend_from_slice(stem);
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
/// to what lies outside. `new`: the entity has no version yet ([`cuts`]).
pub(crate) fn apply(
    txn: &mut WriteTxn,
    (kind, id): (Kind, &str),
    valid: Interval,
    version: Option<(&str, &[u8])>,
    new: bool,
) -> Result<()> {
    let entries = cuts(txn, kind, id, &[(valid, version)], new)?;
    Ok(crate::keyspace::write_all(
        txn,
        &[&subject(kind, id)],
        entries,
    )?)
}

/// What [`apply`] of each of `writes` in order does to the entity's
/// timeline, as the entries to write, the timeline read once: the
/// segments the writes can touch (the last one starting at most at the
/// earliest write's start, and every one starting before the latest end)
/// are cut in memory, and only the keys whose value changed are written.
/// The segments starting earlier end at or before that first one's start,
/// so no write overlaps them; none starting at or after the latest end
/// is in any written range. An entity with no version yet (`new`) has no
/// timeline, and nothing is read: every segment is written by a version,
/// which is also logged (`record`), and logs are never cut.
pub(crate) fn cuts(
    r: &(impl GraphRead + ?Sized),
    kind: Kind,
    id: &str,
    writes: &[Write<'_>],
    new: bool,
) -> Result<Vec<(Vec<u8>, ValidWrite)>> {
    let Some(lo) = writes.iter().map(|(v, _)| v.from).min() else {
        return Ok(Vec::new());
    };
    let hi = writes
        .iter()
        .try_fold(i64::MIN, |m, (v, _)| v.to.map(|t| m.max(t)));
    let stem = stem(TIMELINE, kind, id);
    let before = match new {
        true => Cut::new(),
        false => touched(r, &stem, lo, hi)?,
    };
    let mut now = before.clone();
    for (valid, version) in writes {
        cut(&mut now, *valid, *version)?;
    }
    let mut out = Vec::new();
    for from in before.keys().filter(|f| !now.contains_key(f)) {
        out.push((at_key(&stem, *from), ValidWrite::Delete));
    }
    for (from, v) in now {
        if before.get(&from) != Some(&v) {
            out.push((at_key(&stem, from), ValidWrite::Put(v)));
        }
    }
    Ok(out)
}

/// The segments of timeline `stem` that writes within `[lo, hi)` can
/// touch (`hi` `None`: no end): the last starting at most at `lo`, and
/// every one starting in the range. Two seeks.
fn touched(r: &(impl GraphRead + ?Sized), stem: &[u8], lo: i64, hi: Option<i64>) -> Result<Cut> {
    let start = at_key(stem, lo);
    let upto = match hi {
        Some(t) => at_key(stem, t),
        None => [stem, &[0xFF; 9]].concat(),
    };
    let mut pairs = Vec::new();
    pairs.extend(first(
        r,
        Bound::Included(stem),
        Bound::Included(&start),
        true,
    )?);
    crate::keyspace::scan(
        r,
        Bound::Included(&start),
        Bound::Excluded(&upto),
        false,
        &mut |k, v| {
            pairs.push((k.to_vec(), v.to_vec()));
            Ok(true)
        },
    )?;
    pairs
        .into_iter()
        .map(|(k, v)| {
            let from = read_i64(&k, stem.len())
                .ok_or_else(|| TemporalError::Corrupt("timeline key".into()))?;
            Ok((from, v))
        })
        .collect()
}

/// One write to a timeline: the interval, and the version (its id and
/// encoding) holding the entity there, or none.
pub(crate) type Write<'a> = (Interval, Option<(&'a str, &'a [u8])>);

/// Segments by their start: each value as stored (`segment_value`).
type Cut = std::collections::BTreeMap<i64, Vec<u8>>;

/// The end a stored segment value starts with.
fn end_of(value: &[u8]) -> Result<i64> {
    read_i64(value, 0).ok_or_else(|| TemporalError::Corrupt("timeline segment".into()))
}

/// `value` with its end replaced by `end`.
fn ended(value: &[u8], end: i64) -> Vec<u8> {
    let mut v = Vec::with_capacity(value.len());
    push_i64(&mut v, end);
    v.extend_from_slice(value.get(8..).unwrap_or_default());
    v
}

/// What [`apply`] does to the timeline, on segments in memory.
fn cut(now: &mut Cut, valid: Interval, version: Option<(&str, &[u8])>) -> Result<()> {
    let mut overlapped = Vec::new();
    if let Some((&from, v)) = now.range(..=valid.from).next_back() {
        let covers = Interval::with_end(from, end_of(v)?).contains(valid.from);
        if covers && from < valid.from {
            overlapped.push((from, v.clone()));
        }
    }
    let upto = valid.to.map_or(Bound::Unbounded, Bound::Excluded);
    if valid.to.is_none_or(|t| t > valid.from) {
        let within = now.range((Bound::Included(valid.from), upto));
        overlapped.extend(within.map(|(f, v)| (*f, v.clone())));
    }
    for (from, v) in overlapped {
        now.remove(&from);
        let end = end_of(&v)?;
        if from < valid.from {
            now.insert(from, ended(&v, valid.from));
        }
        if end > valid.end() {
            now.insert(valid.end(), v);
        }
    }
    if let Some((v, record)) = version {
        now.insert(valid.from, segment_value(valid.end(), v, record));
    }
    Ok(())
}

/// Records a new version of the entity: its record, and its place `n` in
/// the entity's log (its length before). A version id the caller gave
/// (`given`) may be in use, and
/// is refused then; one just generated (a version-7 UUID: 74 random bits
/// beside the time) is not looked up — a read per version saved.
pub(crate) fn record(
    txn: &mut WriteTxn,
    (kind, id): (Kind, &str),
    version: &str,
    given: bool,
    bytes: &[u8],
    n: u64,
) -> Result<()> {
    if given {
        refuse_taken(txn, version)?;
    }
    record_version(txn, version, bytes.to_vec())?;
    crate::keyspace::write(
        txn,
        &subject(kind, id),
        &log_key(kind, id, n),
        Some(version.as_bytes().to_vec()),
    )?;
    Ok(())
}

/// Fails with `VersionExists` when version id `version` is in use.
pub(crate) fn refuse_taken(r: &(impl GraphRead + ?Sized), version: &str) -> Result<()> {
    match crate::keyspace::get(r, &version_key(version))? {
        Some(_) => Err(TemporalError::VersionExists(version.to_string())),
        None => Ok(()),
    }
}

/// Writes version `version`'s record (`bytes`) and its stamp
/// ([`version_entries`]).
fn record_version(txn: &mut WriteTxn, version: &str, bytes: Vec<u8>) -> Result<()> {
    let vk = version_key(version);
    let entries = version_entries(version, bytes);
    Ok(crate::keyspace::write_all(txn, &[&vk], entries.into())?)
}

/// The entries of version `version`'s record (`bytes`) and its stamp, to
/// write with the record's key as their conflict subject: two
/// transactions creating one version id never both commit.
pub(crate) fn version_entries(version: &str, bytes: Vec<u8>) -> [(Vec<u8>, ValidWrite); 2] {
    // When it was recorded, for `systemFrom` in a graph keeping no history.
    [
        (version_key(version), ValidWrite::Put(bytes)),
        (recorded_key(version), ValidWrite::Stamp),
    ]
}

/// The key of the entity's `n`th version in its log.
pub(crate) fn log_key(kind: Kind, id: &str, n: u64) -> Vec<u8> {
    let mut k = stem(ENTITY_LOG, kind, id);
    k.extend_from_slice(&n.to_be_bytes());
    k
}

/// How many versions the entity's log holds.
pub(crate) fn log_len_of(r: &(impl GraphRead + ?Sized), kind: Kind, id: &str) -> Result<u64> {
    log_len(r, &stem(ENTITY_LOG, kind, id))
}

/// Whether the entity has a version.
#[cfg(test)]
pub(crate) fn known(r: &(impl GraphRead + ?Sized), kind: Kind, id: &str) -> Result<bool> {
    Ok(log_len_of(r, kind, id)? > 0)
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

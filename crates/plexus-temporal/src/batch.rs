//! A batch of plain versions (asserts and retractions of nodes and edges,
//! none naming another version) written entity by entity.
//!
//! Version by version (`write::write_version`), each write reads its
//! entity's log length, its timeline twice, every index entry it would
//! add and the property index's marker, then puts each key with an undo
//! record: about ten reads and puts into the transaction's ordered
//! buffer per version, two thirds of a large commit's time. Here the
//! versions are grouped by entity (in their order within it): an entity's
//! log length is read once for all its versions, and its timeline once
//! (not at all for an entity with no version yet) and cut in memory
//! (`timeline::cuts`); the markers are read once per batch; an index
//! entry is looked up only for an entity that had versions before (one
//! that had none has no entries: each names its entity, and writing one
//! again writes what is there); and every entry goes to the transaction
//! in one sorted pass at the end. What is written is what the
//! version-by-version path leaves, key for key (`tests/batch.rs` compares
//! the two stores).

use crate::error::{Result, TemporalError};
use crate::props::{self, Of};
use crate::timeline::{self, subject};
use crate::version::{Kind, Op, State, Version};
use crate::write::{version_of, VersionWrite};
use plexus_storage::{ValidWrite, WriteTxn};
use std::collections::HashSet;

/// Whether `w` can be written in a batch. A claim's version also keeps
/// the claim index and its change log; a correction, or a retraction
/// naming the version it retracts, reads that version first; and an
/// interval that ends where or before it starts goes version by version,
/// which refuses it (`EmptyInterval`, from `version_of`).
pub(crate) fn plain(w: &VersionWrite) -> bool {
    let state_fits = match (&w.op, &w.state) {
        (Op::Assert, State::Node(_)) => w.kind == Kind::Node,
        (Op::Assert, State::Edge(_)) => w.kind == Kind::Edge,
        (Op::Retract, State::None) => w.kind != Kind::Claim,
        _ => false,
    };
    state_fits && w.supersedes.is_none() && w.valid.is_some_and(|v| v.to.is_none_or(|t| t > v.from))
}

/// Writes `writes` (each [`plain`]) in `txn`, entity by entity; returns
/// the versions in the order given. On an error `txn` may hold part of the
/// batch: roll it back.
pub(crate) fn write_plain(txn: &mut WriteTxn, writes: &[VersionWrite]) -> Result<Vec<Version>> {
    let versions = prepare(txn, writes)?;
    // Per kind the batch writes, before any entity log is written: the
    // kinds the graph has no entity of yet (a seek each), whose entities
    // have no log, timeline or index entries to read, so a first load into
    // a new graph seeks nothing entity by entity (the log lengths were 7%
    // of such a commit's time on LMDB, in perf); and the marker, set by the
    // first entity of a kind the graph gets.
    let mut new_kinds = Vec::with_capacity(2);
    for kind in [Kind::Node, Kind::Edge] {
        let Some(first) = versions.iter().find(|v| v.kind == kind) else {
            continue;
        };
        if !timeline::any_entity(txn, kind)? {
            new_kinds.push(kind);
        }
        if let Some(of) = Of::for_kind(kind) {
            props::mark_first(txn, of, &first.logical_id)?;
        }
    }
    let entity = |i: usize| (versions[i].kind.byte(), versions[i].logical_id.as_str());
    let mut order: Vec<usize> = (0..versions.len()).collect();
    // Stable: an entity's versions keep the order they were given in.
    order.sort_by(|&a, &b| entity(a).cmp(&entity(b)));
    let encoded: Vec<Vec<u8>> = versions.iter().map(Version::encode).collect();
    // Every entry is written at the end, in one pass: no entity reads
    // another's keys (each names its entity or its version).
    let mut out = Written::with_capacity(versions.len());
    for group in order.chunk_by(|&a, &b| entity(a) == entity(b)) {
        let group: Vec<(&Version, &[u8])> = group
            .iter()
            .map(|&i| (&versions[i], &encoded[i][..]))
            .collect();
        entity_entries(txn, &group, &new_kinds, &mut out)?;
    }
    out.records(&versions, encoded);
    let (subjects, entries) = out.into_parts();
    let subjects: Vec<&[u8]> = subjects.iter().map(Vec::as_slice).collect();
    crate::keyspace::write_all(txn, &subjects, entries)?;
    Ok(versions)
}

/// The entries a batch writes and their conflict subjects, kept in runs
/// that are each in key order as they are made, so that sorting them all
/// together (the transaction's buffer does) merges a few runs instead of
/// sorting 40,000 keys that share long prefixes (a tenth of a 7,000-version
/// commit when the entries came entity by entity, all tags mixed).
/// An entry for the valid-time keyspace: its key and what to write.
type Entry = (Vec<u8>, ValidWrite);

struct Written {
    subjects: Vec<Vec<u8>>,
    /// `V | id` and `R | id`, in the order the versions were given: the
    /// ids made here are time-ordered UUIDs, ascending as they are made.
    records: Vec<Entry>,
    stamps: Vec<Entry>,
    /// `H | entity | n`, entity by entity in key order.
    logs: Vec<Entry>,
    /// `T | entity | from`, entity by entity in key order.
    timelines: Vec<Entry>,
    /// Index entries, in no particular order.
    index: Vec<Entry>,
}

impl Written {
    /// Room for the entries of `n` versions, so that no run is copied as
    /// it grows: each copy of a large run lands on fresh pages, which the
    /// kernel zeroes first. Room reserved and never written costs no page.
    fn with_capacity(n: usize) -> Self {
        Written {
            subjects: Vec::with_capacity(2 * n),
            records: Vec::with_capacity(n),
            stamps: Vec::with_capacity(n),
            logs: Vec::with_capacity(n),
            timelines: Vec::with_capacity(n),
            // A relationship's two endpoints and a property or two.
            index: Vec::with_capacity(4 * n),
        }
    }

    /// The record and the stamp of each version, taking its encoding.
    fn records(&mut self, versions: &[Version], encoded: Vec<Vec<u8>>) {
        for (v, bytes) in versions.iter().zip(encoded) {
            self.subjects.push(timeline::version_key(&v.id));
            let [record, stamp] = timeline::version_entries(&v.id, bytes);
            self.records.push(record);
            self.stamps.push(stamp);
        }
    }

    /// The subjects, and every entry, in key order part by part as far as
    /// the runs allow: the index entries are sorted here (on their first
    /// eight bytes first, which tell most of them apart without comparing
    /// their shared prefixes byte by byte), and the runs go in the order of
    /// their tags (E < H < I, L, O, P < R < V; T is in the other part). The
    /// buffer's own sort then finds each part one run, where it sorted the
    /// unsorted index entries by whole keys and merged five runs, a tenth
    /// of a large commit. Only the speed rests on this order: that sort
    /// still orders whatever comes (given version ids come in any order).
    fn into_parts(mut self) -> (Vec<Vec<u8>>, Vec<Entry>) {
        self.index = sorted(self.index);
        let after_logs = self.index.split_off(
            self.index
                .partition_point(|(k, _)| k.first() < Some(&timeline::ENTITY_LOG)),
        );
        let runs = [
            self.index,
            self.logs,
            after_logs,
            self.stamps,
            self.records,
            self.timelines,
        ];
        let mut all = Vec::with_capacity(runs.iter().map(Vec::len).sum());
        for run in runs {
            all.extend(run);
        }
        (self.subjects, all)
    }
}

/// `entries` in key order, equal keys in the order given. Sorted as pairs
/// of a number and a place: each key's first eight bytes as one number
/// ([`head`]), which tells most keys apart, the whole keys compared only
/// where those agree; moving sixteen-byte pairs instead of the entries.
fn sorted(entries: Vec<Entry>) -> Vec<Entry> {
    let mut order: Vec<(u64, usize)> = entries
        .iter()
        .enumerate()
        .map(|(i, (k, _))| (head(k), i))
        .collect();
    order.sort_unstable_by(|a, b| {
        a.0.cmp(&b.0)
            .then_with(|| entries[a.1].0.cmp(&entries[b.1].0))
            .then(a.1.cmp(&b.1))
    });
    let mut slots: Vec<Option<Entry>> = entries.into_iter().map(Some).collect();
    order.iter().filter_map(|&(_, i)| slots[i].take()).collect()
}

/// A key's first eight bytes as a big-endian number, zero-padded: when two
/// keys' heads differ, so do the keys, in the same order (a shorter key
/// that agrees with a longer one so far has the equal head, and the full
/// comparison puts it first).
fn head(k: &[u8]) -> u64 {
    match k.first_chunk::<8>() {
        Some(h) => u64::from_be_bytes(*h),
        None => {
            let mut h = [0u8; 8];
            h[..k.len()].copy_from_slice(k);
            u64::from_be_bytes(h)
        }
    }
}

/// The versions `writes` make, with their ids checked: a given id must be
/// new to the graph and to the batch.
fn prepare(txn: &WriteTxn, writes: &[VersionWrite]) -> Result<Vec<Version>> {
    let mut given = HashSet::new();
    // Sized first: collecting through `Result` cannot know the length, and
    // growing a vector of versions copied them a dozen times.
    let mut out = Vec::with_capacity(writes.len());
    for w in writes {
        let valid = w.valid.ok_or(TemporalError::NoInterval)?;
        let v = version_of(w, valid)?;
        if w.version_id.is_some() {
            if !given.insert(v.id.clone()) {
                return Err(TemporalError::VersionExists(v.id));
            }
            timeline::refuse_taken(txn, &v.id)?;
        }
        out.push(v);
    }
    Ok(out)
}

/// The entries of the versions of one entity (each with its encoding), in
/// order, onto `out`; their records and stamps are [`Written::records`].
/// An entity of one of `new_kinds` (none of its kind in the graph yet) has
/// no versions before.
fn entity_entries(
    txn: &WriteTxn,
    versions: &[(&Version, &[u8])],
    new_kinds: &[Kind],
    out: &mut Written,
) -> Result<()> {
    let Some((first, _)) = versions.first() else {
        return Ok(());
    };
    let (kind, id) = (first.kind, first.logical_id.as_str());
    let before = match new_kinds.contains(&kind) {
        true => 0,
        false => timeline::log_len_of(txn, kind, id)?,
    };
    for (n, (v, _)) in (before..).zip(versions) {
        let log = timeline::log_key(kind, id, n);
        out.logs
            .push((log, ValidWrite::Put(v.id.as_bytes().to_vec())));
    }
    let entries = versions.iter().flat_map(|(v, _)| crate::graph::entries(v));
    for k in crate::graph::unwritten(txn, entries.collect(), before > 0)? {
        out.index.push((k, ValidWrite::Put(id.as_bytes().to_vec())));
    }
    let cuts: Vec<_> = versions
        .iter()
        .map(|(v, bytes)| {
            let holds = (v.op != Op::Retract).then_some((v.id.as_str(), *bytes));
            (v.valid, holds)
        })
        .collect();
    out.timelines
        .extend(timeline::cuts(txn, kind, id, &cuts, before == 0)?);
    out.subjects.push(subject(kind, id));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `sorted` is the keys' byte order, for keys shorter and longer than
    /// a head's eight bytes, with zero bytes where the padding goes, equal
    /// keys in the order given.
    #[test]
    fn sorted_is_byte_order_and_stable() {
        let keys: Vec<Vec<u8>> = vec![
            b"abcdefgi".to_vec(),
            vec![0xFF; 9],
            b"ab\0\x01".to_vec(),
            vec![],
            b"abcdefgh\0".to_vec(),
            vec![0, 0],
            b"Pv\0\x01n2\0\x01".to_vec(),
            b"ab".to_vec(),
            b"abcdefghi".to_vec(),
            vec![0],
            b"ab\0".to_vec(),
            b"abcdefgh".to_vec(),
            b"Pv\0\x01n12\0\x01".to_vec(),
            b"ab".to_vec(),
        ];
        let entries: Vec<Entry> = keys
            .iter()
            .enumerate()
            .map(|(i, k)| (k.clone(), ValidWrite::Put(vec![i as u8])))
            .collect();
        let mut want = entries.clone();
        want.sort_by(|a, b| a.0.cmp(&b.0));
        assert_eq!(sorted(entries), want);
    }
}

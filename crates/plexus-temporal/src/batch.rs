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
    // Before any entity log of the kind is written: the marker is set by
    // the first entity of a kind the graph gets.
    for kind in [Kind::Node, Kind::Edge] {
        let first = versions.iter().find(|v| v.kind == kind);
        if let (Some(of), Some(v)) = (Of::for_kind(kind), first) {
            props::mark_first(txn, of, &v.logical_id)?;
        }
    }
    let entity = |i: usize| (versions[i].kind.byte(), versions[i].logical_id.as_str());
    let mut order: Vec<usize> = (0..versions.len()).collect();
    // Stable: an entity's versions keep the order they were given in.
    order.sort_by(|&a, &b| entity(a).cmp(&entity(b)));
    // Every entry is written at the end, in one pass: no entity reads
    // another's keys (each names its entity or its version).
    let mut out = Written::default();
    for group in order.chunk_by(|&a, &b| entity(a) == entity(b)) {
        let group: Vec<&Version> = group.iter().map(|&i| &versions[i]).collect();
        entity_entries(txn, &group, &mut out)?;
    }
    let subjects: Vec<&[u8]> = out.subjects.iter().map(Vec::as_slice).collect();
    crate::keyspace::write_all(txn, &subjects, out.entries)?;
    Ok(versions)
}

/// The entries a batch writes and their conflict subjects.
#[derive(Default)]
struct Written {
    subjects: Vec<Vec<u8>>,
    entries: Vec<(Vec<u8>, ValidWrite)>,
}

/// The versions `writes` make, with their ids checked: a given id must be
/// new to the graph and to the batch.
fn prepare(txn: &WriteTxn, writes: &[VersionWrite]) -> Result<Vec<Version>> {
    let mut given = HashSet::new();
    writes
        .iter()
        .map(|w| {
            let valid = w.valid.ok_or(TemporalError::NoInterval)?;
            let v = version_of(w, valid)?;
            if w.version_id.is_some() {
                if !given.insert(v.id.clone()) {
                    return Err(TemporalError::VersionExists(v.id));
                }
                timeline::refuse_taken(txn, &v.id)?;
            }
            Ok(v)
        })
        .collect()
}

/// The entries of the versions of one entity, in order, onto `out`.
fn entity_entries(txn: &WriteTxn, versions: &[&Version], out: &mut Written) -> Result<()> {
    let Some(first) = versions.first() else {
        return Ok(());
    };
    let (kind, id) = (first.kind, first.logical_id.as_str());
    let before = timeline::log_len_of(txn, kind, id)?;
    let encoded: Vec<Vec<u8>> = versions.iter().map(|v| v.encode()).collect();
    for ((n, v), bytes) in (before..).zip(versions).zip(&encoded) {
        out.subjects.push(timeline::version_key(&v.id));
        out.entries
            .extend(timeline::version_entries(&v.id, bytes.clone()));
        let log = timeline::log_key(kind, id, n);
        out.entries
            .push((log, ValidWrite::Put(v.id.as_bytes().to_vec())));
    }
    let entries = versions.iter().flat_map(|v| crate::graph::entries(v));
    for k in crate::graph::unwritten(txn, entries.collect(), before > 0)? {
        out.entries
            .push((k, ValidWrite::Put(id.as_bytes().to_vec())));
    }
    let cuts: Vec<_> = versions
        .iter()
        .zip(&encoded)
        .map(|(v, bytes)| {
            let holds = (v.op != Op::Retract).then_some((v.id.as_str(), &bytes[..]));
            (v.valid, holds)
        })
        .collect();
    out.entries
        .extend(timeline::cuts(txn, kind, id, &cuts, before == 0)?);
    out.subjects.push(subject(kind, id));
    Ok(())
}

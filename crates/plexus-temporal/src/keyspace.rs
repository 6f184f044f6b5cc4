//! Which part of storage's valid-time keyspace each entry lives in.
//!
//! An entity's timeline (`T`) changes: a write cuts the segments it
//! overlaps. Everything else is written once and never changed — version
//! records (`V`), their stamps (`R`), entity logs (`H`), and the index
//! entries of labels (`L`), endpoints (`O`, `I`), property values (`P`,
//! `E`) and claims (`C`). Those go to the unversioned part, which storage
//! keeps outside the graph's history: in a graph keeping history each
//! would otherwise be written twice (itself and its history version) and
//! logged, for a history that only repeats it. Reads as of a system time
//! stay exact: an index entry only proposes a candidate, which the
//! timeline as of then (versioned) accepts or not; a version or an entity
//! log entry written after then is told by its stamp
//! ([`crate::read::version`]). The markers (`M`) and the worlds (`W`),
//! one key each per graph or world, stay versioned, so as of an earlier
//! system time they say what was true then.
//!
//! Every read and write of the layout goes through here, so an entry is
//! always sought where it is written.

use crate::error::{Result, TemporalError};
use plexus_storage::{GraphRead, PairFn, Storage, ValidPart, ValidWrite, WriteTxn};
use std::ops::Bound;

/// The tags of the entries written once.
const UNVERSIONED: &[u8] = b"VRHLOIPEC";

/// The part holding `key`, by its tag (its first byte).
pub(crate) fn part(key: &[u8]) -> ValidPart {
    match key.first() {
        Some(tag) if UNVERSIONED.contains(tag) => ValidPart::Unversioned,
        _ => ValidPart::Versioned,
    }
}

/// The value under `key`.
pub(crate) fn get(
    r: &(impl GraphRead + ?Sized),
    key: &[u8],
) -> plexus_storage::Result<Option<Vec<u8>>> {
    r.valid_time_get(part(key), key)
}

/// The pairs between `from` and `to`, in the part `from`'s tag names (a
/// range never spans two tags' entries of different parts: it ends at
/// its own tag's last key, or at the next tag).
pub(crate) fn scan(
    r: &(impl GraphRead + ?Sized),
    from: Bound<&[u8]>,
    to: Bound<&[u8]>,
    reverse: bool,
    f: &mut PairFn<'_>,
) -> plexus_storage::Result<()> {
    let part = match from {
        Bound::Included(k) | Bound::Excluded(k) => part(k),
        Bound::Unbounded => ValidPart::Versioned,
    };
    r.valid_time_scan(part, from, to, reverse, f)
}

/// Writes `value` under `key` (`None` deletes it), with `subject` as the
/// write's conflict subject.
pub(crate) fn write(
    txn: &mut WriteTxn,
    subject: &[u8],
    key: &[u8],
    value: Option<Vec<u8>>,
) -> plexus_storage::Result<()> {
    txn.valid_time_write(part(key), subject, key, value)
}

/// Writes many entries, each in the part its tag names, with `subjects`
/// as their conflict subjects (`WriteTxn::valid_time_write_all`).
pub(crate) fn write_all(
    txn: &mut WriteTxn,
    subjects: &[&[u8]],
    entries: Vec<(Vec<u8>, ValidWrite)>,
) -> plexus_storage::Result<()> {
    let entries = entries.into_iter().map(|(k, w)| (part(&k), k, w)).collect();
    txn.valid_time_write_all(subjects, entries)
}

/// The tag of the version records: a store keeps them in the versioned
/// part until it is converted ([`convert_layout`] moves them last).
const VERSION_TAG: u8 = b'V';
/// The tag of a version's stamp (`R | version id`).
const STAMP_TAG: u8 = b'R';
/// Entries [`convert_layout`] moves in one transaction.
const STEP: usize = if cfg!(test) { 3 } else { 10_000 };

/// Whether graph `r` reads was written before the unversioned part existed
/// and still holds entries of it in the versioned part (one seek): its
/// reads would miss them until [`convert_layout`] moves them.
pub fn needs_converting(r: &(impl GraphRead + ?Sized)) -> Result<bool> {
    Ok(!versioned_entries(r, VERSION_TAG, 1)?.is_empty())
}

/// Up to `n` entries of tag `tag` in the versioned part, in key order.
fn versioned_entries(
    r: &(impl GraphRead + ?Sized),
    tag: u8,
    n: usize,
) -> Result<Vec<(Vec<u8>, Vec<u8>)>> {
    let (lo, hi) = ([tag], [tag + 1]);
    let mut entries = Vec::new();
    r.valid_time_scan(
        ValidPart::Versioned,
        Bound::Included(&lo),
        Bound::Excluded(&hi),
        false,
        &mut |k, v| {
            entries.push((k.to_vec(), v.to_vec()));
            Ok(entries.len() < n)
        },
    )?;
    Ok(entries)
}

/// Moves the entries that are written once from the versioned part of
/// graph `graph`'s valid-time keyspace to the unversioned one, as this
/// build keeps them: a store written before the split (the facade runs it
/// when it opens one). Each step of [`STEP`] entries is one transaction,
/// so a conversion stopped anywhere is finished by the next; the version
/// records go last, so [`needs_converting`] holds until all is moved. A
/// stamp (`R | version id`) moves with its version: `plexus-knowledge`
/// keeps its rules under `R` in the versioned part too. The history keeps
/// what it recorded of the moved entries (a version's first stamp among
/// them: [`crate::read::version`] falls back on it). Returns how many
/// entries it moved.
pub fn convert_layout(db: &Storage, graph: &str) -> Result<u64> {
    let mut moved = 0u64;
    for &tag in b"HLOIPEC".iter().chain([&VERSION_TAG]) {
        while let Some(n) = convert_step(db, graph, tag)? {
            moved += n;
        }
    }
    Ok(moved)
}

/// Moves up to [`STEP`] entries of tag `tag` (with their stamps, for
/// version records) in one transaction; `None` when none is left.
fn convert_step(db: &Storage, graph: &str, tag: u8) -> Result<Option<u64>> {
    let mut txn = db.write(graph)?;
    let mut entries = versioned_entries(&txn, tag, STEP)?;
    if entries.is_empty() {
        txn.rollback();
        return Ok(None);
    }
    if tag == VERSION_TAG {
        let mut stamps = Vec::new();
        for (k, _) in &entries {
            let r = [&[STAMP_TAG][..], &k[1..]].concat();
            if let Some(v) = txn.valid_time_get(ValidPart::Versioned, &r)? {
                stamps.push((r, v));
            }
        }
        entries.extend(stamps);
    }
    let n = entries.len() as u64;
    for (k, v) in entries {
        txn.valid_time_write(ValidPart::Versioned, &k, &k, None)?;
        txn.valid_time_write(ValidPart::Unversioned, &k, &k, Some(v))?;
    }
    txn.commit()?;
    Ok(Some(n))
}

/// [`needs_converting`], as an error for a store that cannot be converted
/// now (opened read-only).
pub fn refuse_unconverted(r: &(impl GraphRead + ?Sized), graph: &str) -> Result<()> {
    match needs_converting(r)? {
        true => Err(TemporalError::Unconverted(graph.to_string())),
        false => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_timelines_markers_and_worlds_are_versioned() {
        for tag in *b"TMW" {
            assert_eq!(part(&[tag, 1]), ValidPart::Versioned, "{}", tag as char);
        }
        for tag in *b"VRHLOIPEC" {
            assert_eq!(part(&[tag, 1]), ValidPart::Unversioned, "{}", tag as char);
        }
        assert_eq!(part(&[]), ValidPart::Versioned);
    }

    /// Every read of the valid-time graph: each entity as of every
    /// instant, its versions, and a label's members and neighbours.
    fn reads(db: &Storage) -> Vec<String> {
        use crate::version::Kind;
        let r = db.read("default").unwrap();
        let mut out = Vec::new();
        for (k, id) in [(Kind::Node, "a"), (Kind::Node, "b"), (Kind::Edge, "e")] {
            for at in 0..12 {
                out.push(format!("{:?}", crate::read::as_of(&r, k, id, at).unwrap()));
            }
            out.push(format!("{:?}", crate::read::versions(&r, k, id).unwrap()));
        }
        out.push(format!("{:?}", crate::nodes_as_of(&r, "L", 5).unwrap()));
        let out_of_a = crate::neighbors_as_of(&r, "a", crate::Direction::Out, None, 5);
        out.push(format!("{:?}", out_of_a.unwrap()));
        out
    }

    #[test]
    fn a_conversion_moves_every_entry_in_steps_and_finishes_when_run_again() {
        use crate::version::{EdgeState, NodeState};
        use crate::{commit_versions, Interval, VersionWrite};
        let db = Storage::in_memory().unwrap();
        let node = |v: i64| NodeState {
            labels: vec!["L".into()],
            props: [("v".to_string(), plexus_common::Value::Int(v))].into(),
        };
        let edge = EdgeState {
            src: "a".into(),
            dst: "b".into(),
            rel_type: "R".into(),
            props: Default::default(),
        };
        let writes = [
            VersionWrite::assert_node("a", node(1), Interval::from(0)),
            VersionWrite::assert_node("b", node(2), Interval::from(2)),
            VersionWrite::assert_node("a", node(3), Interval::new(4, Some(8)).unwrap()),
            VersionWrite::assert_edge("e", edge, Interval::from(3)),
        ];
        commit_versions(&db, "default", &writes).unwrap();
        let want = reads(&db);
        // As a build before the split kept them: all in the versioned part.
        let mut txn = db.write("default").unwrap();
        let mut all: Vec<(Vec<u8>, Vec<u8>)> = Vec::new();
        let (lo, hi) = (Bound::Unbounded, Bound::Unbounded);
        let mut keep = |k: &[u8], v: &[u8]| {
            all.push((k.to_vec(), v.to_vec()));
            Ok(true)
        };
        txn.valid_time_scan(ValidPart::Unversioned, lo, hi, false, &mut keep)
            .unwrap();
        for (k, v) in &all {
            txn.valid_time_write(ValidPart::Unversioned, k, k, None)
                .unwrap();
            txn.valid_time_write(ValidPart::Versioned, k, k, Some(v.clone()))
                .unwrap();
        }
        txn.commit().unwrap();
        assert_ne!(reads(&db), want);
        // Stopped after a step: still to be converted, then finished.
        assert!(convert_step(&db, "default", b'H').unwrap().is_some());
        assert!(needs_converting(&db.read("default").unwrap()).unwrap());
        let moved = convert_layout(&db, "default").unwrap();
        assert_eq!(moved as usize + STEP, all.len());
        assert!(!needs_converting(&db.read("default").unwrap()).unwrap());
        assert_eq!(reads(&db), want);
        assert_eq!(convert_layout(&db, "default").unwrap(), 0);
    }
}

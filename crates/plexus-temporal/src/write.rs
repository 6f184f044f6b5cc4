//! Valid-time writes: assert, correct, retract — alone in a transaction
//! of the caller's, or as one atomic batch ([`commit_versions`]).

use crate::claim::{self, ClaimState};
use crate::error::{Result, TemporalError};
use crate::time::Interval;
use crate::timeline;
use crate::version::{EdgeState, Kind, NodeState, Op, State, Version};
use plexus_storage::{Storage, WriteTxn};

/// The longest logical or version id, in bytes.
pub const MAX_ID_LEN: usize = 512;

/// One version to write.
#[derive(Debug, Clone, PartialEq)]
pub struct VersionWrite {
    pub(crate) kind: Kind,
    pub(crate) logical_id: String,
    pub(crate) op: Op,
    /// `None`: the superseded version's interval.
    pub(crate) valid: Option<Interval>,
    pub(crate) supersedes: Option<String>,
    pub(crate) reason: Option<String>,
    pub(crate) state: State,
    pub(crate) version_id: Option<String>,
}

impl VersionWrite {
    /// Node `id` holds `state` over `valid`.
    pub fn assert_node(id: &str, state: NodeState, valid: Interval) -> VersionWrite {
        VersionWrite::new(Kind::Node, id, Op::Assert, Some(valid), State::Node(state))
    }

    /// Edge `id` holds `state` over `valid`.
    pub fn assert_edge(id: &str, state: EdgeState, valid: Interval) -> VersionWrite {
        VersionWrite::new(Kind::Edge, id, Op::Assert, Some(valid), State::Edge(state))
    }

    /// Claim `state` holds over `valid`; its logical id is the claim's
    /// identity ([`ClaimState::claim_id`]).
    pub fn assert_claim(state: ClaimState, valid: Interval) -> VersionWrite {
        let id = state.claim_id();
        VersionWrite::new(
            Kind::Claim,
            &id,
            Op::Assert,
            Some(valid),
            State::Claim(state),
        )
    }

    /// Replaces version `supersedes` (found wrong) by `state`, over its
    /// interval unless [`VersionWrite::valid`] gives another. A claim's
    /// correction keeps its identity (it changes confidence, provenance).
    pub fn correct(supersedes: &str, state: State) -> VersionWrite {
        let kind = match state {
            State::Edge(_) => Kind::Edge,
            State::Claim(_) => Kind::Claim,
            _ => Kind::Node,
        };
        VersionWrite {
            supersedes: Some(supersedes.to_string()),
            ..VersionWrite::new(kind, "", Op::Correct, None, state)
        }
    }

    /// Entity `id` does not hold over `valid`.
    pub fn retract(kind: Kind, id: &str, valid: Interval) -> VersionWrite {
        VersionWrite::new(kind, id, Op::Retract, Some(valid), State::None)
    }

    fn new(kind: Kind, id: &str, op: Op, valid: Option<Interval>, state: State) -> VersionWrite {
        VersionWrite {
            kind,
            logical_id: id.to_string(),
            op,
            valid,
            supersedes: None,
            reason: None,
            state,
            version_id: None,
        }
    }

    /// The new version's id (else a UUID).
    pub fn id(mut self, version_id: &str) -> VersionWrite {
        self.version_id = Some(version_id.to_string());
        self
    }

    /// Why (kept with the version).
    pub fn reason(mut self, reason: &str) -> VersionWrite {
        self.reason = Some(reason.to_string());
        self
    }

    /// The interval a correction holds over.
    pub fn valid(mut self, valid: Interval) -> VersionWrite {
        self.valid = Some(valid);
        self
    }

    /// The version this one retracts (kept as its lineage).
    pub fn superseding(mut self, version_id: &str) -> VersionWrite {
        self.supersedes = Some(version_id.to_string());
        self
    }
}

fn check_id(what: &'static str, id: &str) -> Result<()> {
    if id.is_empty() || id.len() > MAX_ID_LEN {
        return Err(TemporalError::InvalidId {
            what,
            id: id.chars().take(40).collect(),
        });
    }
    Ok(())
}

/// The version `w` writes over `valid`, its ids checked; its id the one
/// `w` gives, else a new one.
pub(crate) fn version_of(w: &VersionWrite, valid: Interval) -> Result<Version> {
    check_id("logical id", &w.logical_id)?;
    // `Interval`'s fields are public, so an interval that ends where or
    // before it starts can reach here without `Interval::new`; it holds at
    // no instant, and a timeline cut by it would be left inconsistent.
    let valid = Interval::new(valid.from, valid.to)?;
    // A generated id is a time-ordered UUID (version 7): the keys a new
    // version adds under its id (`V | id`, `R | id`) go after those of the
    // versions before it, onto pages a commit already holds, where random
    // ids put each on a page of its own (a page copied per version).
    let id = w.version_id.clone().unwrap_or_else(|| {
        // Encoded into a buffer, not through `Display` (a formatter and a
        // growing string per version of a batch).
        let mut buf = uuid::Uuid::encode_buffer();
        uuid::Uuid::now_v7()
            .hyphenated()
            .encode_lower(&mut buf)
            .to_owned()
    });
    check_id("version id", &id)?;
    Ok(Version {
        id,
        kind: w.kind,
        logical_id: w.logical_id.clone(),
        op: w.op,
        valid,
        supersedes: w.supersedes.clone(),
        reason: w.reason.clone(),
        state: w.state.clone(),
    })
}

/// Writes one version in `txn`; returns it. On an error, `txn` may hold
/// part of the write: roll it back ([`commit_versions`] does).
pub fn write_version(txn: &mut WriteTxn, w: &VersionWrite) -> Result<Version> {
    let mut w = w.clone();
    if let Some(sup) = &w.supersedes {
        let target = crate::read::version(txn, sup)?
            .ok_or_else(|| TemporalError::UnknownVersion(sup.clone()))?;
        if w.op == Op::Correct {
            if target.kind != w.kind {
                return Err(TemporalError::KindMismatch {
                    version: sup.clone(),
                });
            }
            if let State::Claim(c) = &w.state {
                if c.claim_id() != target.logical_id {
                    return Err(TemporalError::ClaimIdentity {
                        version: sup.clone(),
                    });
                }
            }
            w.logical_id = target.logical_id.clone();
        }
        if w.valid.is_none() {
            w.valid = Some(target.valid);
        }
    }
    let valid = w.valid.ok_or(TemporalError::NoInterval)?;
    let version = version_of(&w, valid)?;
    let id = version.id.clone();
    let entity = (w.kind, w.logical_id.as_str());
    // The entity's versions so far: the new one's place in its log.
    let before = timeline::log_len_of(txn, w.kind, &w.logical_id)?;
    match &version.state {
        State::Claim(c) => {
            c.check()?;
            claim::index(txn, c, &version.logical_id)?;
        }
        State::None if version.kind == Kind::Claim && before == 0 => {
            return Err(TemporalError::UnknownEntity(version.logical_id));
        }
        _ => {}
    }
    crate::graph::index(txn, &version, before > 0)?;
    if version.kind == Kind::Claim {
        claim::mark_changed(txn, &version.logical_id)?;
    }
    let bytes = version.encode();
    let given = w.version_id.is_some();
    timeline::record(txn, entity, &id, given, &bytes, before)?;
    let holds = (version.op != Op::Retract).then_some((id.as_str(), &bytes[..]));
    timeline::apply(txn, entity, valid, holds, before == 0)?;
    Ok(version)
}

/// Writes `writes` in order as one transaction on `graph`: all of them or
/// none. Returns the versions written. A batch of plain writes only
/// (`batch::plain`) goes entity by entity (`batch.rs`); any other,
/// version by version.
pub fn commit_versions(db: &Storage, graph: &str, writes: &[VersionWrite]) -> Result<Vec<Version>> {
    let mut txn = db.write(graph)?;
    let out = write_versions(&mut txn, writes)?;
    txn.commit()?;
    Ok(out)
}

/// Writes `writes` in order in `txn`, as [`write_version`] one after the
/// other would: a batch of plain writes only (`batch::plain`) entity by
/// entity, any other version by version. Returns the versions in the
/// order given. On an error `txn` may hold part of the writes: roll it
/// back.
pub fn write_versions(txn: &mut WriteTxn, writes: &[VersionWrite]) -> Result<Vec<Version>> {
    if writes.len() > 1 && writes.iter().all(crate::batch::plain) {
        return crate::batch::write_plain(txn, writes);
    }
    writes.iter().map(|w| write_version(txn, w)).collect()
}

/// How many versions [`rebuild_indexes`] reads and indexes per
/// transaction: each commit stays small, and a rebuild that stops midway
/// keeps what it did (entries are idempotent).
const REBUILD_BATCH: usize = 10_000;

/// Writes the index entries of every stored version again (the claim
/// index, label and endpoint indexes of `graph.rs`): for a store whose
/// versions were written before an index existed, or to repair one.
/// Returns how many versions it read. Idempotent.
pub fn rebuild_indexes(db: &Storage, graph: &str) -> Result<u64> {
    rebuild_in_batches(db, graph, REBUILD_BATCH)
}

pub(crate) fn rebuild_in_batches(db: &Storage, graph: &str, per: usize) -> Result<u64> {
    let mut after: Option<Vec<u8>> = None;
    let mut seen = 0u64;
    loop {
        let mut txn = db.write(graph)?;
        let batch = timeline::versions_after(&txn, after.as_deref(), per.max(1))?;
        let Some((last, _)) = batch.last() else {
            crate::props::rebuilt(&mut txn)?;
            txn.commit()?;
            return Ok(seen);
        };
        after = Some(last.clone());
        for (_, v) in &batch {
            match &v.state {
                State::Claim(c) => claim::index(&mut txn, c, &v.logical_id)?,
                _ => crate::graph::index(&mut txn, v, true)?,
            }
        }
        seen += batch.len() as u64;
        txn.commit()?;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A version id given twice is refused, whether the first is committed
    /// or in the same batch, and the refused batch leaves nothing.
    #[test]
    fn a_given_version_id_in_use_is_refused() {
        let db = Storage::in_memory().expect("store");
        let write = |entity: &str, id: &str| {
            VersionWrite::assert_node(entity, NodeState::default(), Interval::from(0)).id(id)
        };
        commit_versions(&db, "default", &[write("a", "v1")]).expect("first");
        let batches = [
            (vec![write("b", "v1")], "v1"),
            (vec![write("c", "v2"), write("d", "v2")], "v2"),
        ];
        for (batch, id) in batches {
            let e = commit_versions(&db, "default", &batch).expect_err("in use");
            assert!(
                matches!(e, TemporalError::VersionExists(ref v) if v == id),
                "{e}"
            );
        }
        let r = db.read("default").expect("read");
        assert!(timeline::known(&r, Kind::Node, "a").expect("log"));
        for entity in ["b", "c", "d"] {
            assert!(!timeline::known(&r, Kind::Node, entity).expect("log"));
        }
    }

    /// Generated version ids sort in the order the versions were written,
    /// within a commit and across commits: their keys land after the ones
    /// before (see `write_version`).
    #[test]
    fn generated_version_ids_sort_as_written() {
        let db = Storage::in_memory().expect("store");
        let write =
            |n: i64| VersionWrite::assert_node("a", NodeState::default(), Interval::from(n));
        let mut ids = Vec::new();
        for batch in [
            vec![write(0), write(1), write(2)],
            vec![write(3)],
            vec![write(4)],
        ] {
            ids.extend(
                commit_versions(&db, "default", &batch)
                    .expect("commit")
                    .into_iter()
                    .map(|v| v.id),
            );
        }
        let mut sorted = ids.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(ids, sorted);
    }
}
